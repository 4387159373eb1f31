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
