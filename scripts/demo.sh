#!/usr/bin/env bash
# The whole pipeline on the bundled fixture forum: three forums (GBK
# Discuz!, Big5 phpBB, UTF-8 with no charset), a microblog and a forum drawn
# by JavaScript (read through their JSON as `mb` and `xhr`, and in Chromium
# as `mb-browser` and `xhr-browser`) served on loopback, crawled, extracted,
# indexed and searched. Leaves its data in target/demo to look at.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${CARGO_TARGET_DIR:-target}/release
demo=target/demo
threads=${DEMO_THREADS:-300}

# The release build is most of a first run's time: say so before it starts.
# DEMO_BIN=<dir> runs the pipeline on binaries already built there instead.
if [[ -n "${DEMO_BIN:-}" ]]; then
  bin=$DEMO_BIN
else
  cargo=${CARGO:-cargo}
  # The crates the binaries are built from (workspace members included), counted by cargo itself.
  crates=$("$cargo" tree --workspace --edges normal,build --prefix none --offline 2>/dev/null | sed 's/ (\*)$//; s/ (proc-macro)$//' | sort -u | grep -c . || true)
  [[ "$crates" =~ ^[1-9][0-9]*$ ]] || crates=
  if [[ -x "$bin/luntan-fixture" && -x "$bin/luntan-search" ]]; then
    echo "demo: release binaries found in $bin; cargo rebuilds only what changed (seconds when nothing did)"
  else
    echo "demo: first build: cargo compiles ${crates:-several hundred} crates in release mode, about 13 minutes on 2 cores" \
      "(measured for issue 33; this machine has $(nproc 2>/dev/null || echo '?') cores); later runs take seconds"
  fi
  "$cargo" build --release --workspace --bins
fi
rm -rf "$demo"
mkdir -p "$demo/data/sites" "$demo/index"

"$bin/luntan-fixture" serve --addr 127.0.0.1:0 --threads "$threads" --sites-out "$demo/data/sites" --microblog >"$demo/fixture.out" 2>"$demo/fixture.err" &
fixture=$!
trap 'kill $fixture 2>/dev/null || true; wait $fixture 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q '^listening on' "$demo/fixture.out" 2>/dev/null && break
  sleep 0.1
done
grep '^listening on' "$demo/fixture.out" || { echo "fixture forum did not start:"; cat "$demo/fixture.err"; exit 1; }

start=$(date +%s%N)
step() { echo; echo "\$ $*"; "$@"; }
step "$bin/luntan-discover" --data "$demo/data"
step "$bin/luntan-download" --data "$demo/data"
# The microblog is crawled user by user: users met in comments (found by
# download) are read by the next round.
for site in mb mb-browser; do
  step "$bin/luntan-discover" --data "$demo/data" --site "$site" --all-boards
  step "$bin/luntan-download" --data "$demo/data" --site "$site"
done
step "$bin/luntan-extract" --data "$demo/data"
step "$bin/luntan-index" --data "$demo/data" --index-dir "$demo/index"
step "$bin/luntan-status" --data "$demo/data"
for q in 质量 明月 '"服务态度"' '早餐 OR 前台' '春風 -秋' '转发微博'; do
  step "$bin/luntan-search" --index-dir "$demo/index" --limit 3 "$q"
done
# The same forum read two ways finds the same threads.
step "$bin/luntan-search" --index-dir "$demo/index" --limit 3 --site xhr --site xhr-browser 酒店
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo
printf 'demo: pipeline done in %d.%03ds; data in %s/data, indexes in %s/index\n' $((ms / 1000)) $((ms % 1000)) "$demo" "$demo"

# What to try next, with each search's count as this run's indexes give it.
urlencode() { od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g'; }
echo
echo "Next: search these forums in a browser:"
echo "  make serve          # then open http://127.0.0.1:7700/ (the status page is /status)"
echo "Searches that find something here (threads found in this run's indexes):"
for q in 明月 '"服务态度"' '春風 -秋'; do
  total=$("$bin/luntan-search" --index-dir "$demo/index" --json --limit 1 "$q" | tail -n 1 | grep -o '"total": *[0-9]*' | grep -o '[0-9]*$')
  printf '  %5s threads  %s\n         http://127.0.0.1:7700/search?q=%s\n' "${total:-?}" "$q" "$(printf %s "$q" | urlencode)"
done
echo "  or on the command line: make search INDEX=$demo/index Q=明月"
