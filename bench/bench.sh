#!/usr/bin/env bash
# `make bench`: build luntan and the limit programs, install the Python peers
# (pinned, into bench/.venv) and wrk, then run bench/run.py, which measures
# everything in alternation and writes BENCHMARKS.md. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
PYTHON=${PYTHON:-python3}
started=$(date +%s)

echo "== building luntan (release)"
$CARGO build --release --workspace --bins

echo "== building the limit programs (bench/floor, not a workspace member)"
$CARGO build --release --manifest-path bench/floor/Cargo.toml --target-dir bench/work/target

if ! command -v wrk >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
  echo "== installing wrk and GNU time (Debian packages)"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq wrk time >/dev/null
  else
    echo "bench: wrk or /usr/bin/time is missing; install the Debian packages wrk and time" >&2
    exit 1
  fi
fi

# s4: luntan's browser mode and the Selenium peer drive Debian's Chromium,
# the peer through Debian's chromedriver (the same Chromium build).
if [[ ",${BENCH_SECTIONS:-s4}," == *,s4,* ]] && { ! command -v chromium >/dev/null 2>&1 || [ ! -x /usr/bin/chromedriver ]; }; then
  echo "== installing chromium and chromium-driver (Debian packages)"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "bench: chromium or chromedriver is missing; install the Debian packages chromium and chromium-driver" >&2
    exit 1
  fi
fi

venv=bench/.venv
stamp=$venv/.requirements.sha256
want=$(sha256sum bench/requirements.txt | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== installing the Python peers into $venv (bench/requirements.txt)"
  [ -x "$venv/bin/python" ] || $PYTHON -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r bench/requirements.txt
  echo "$want" >"$stamp"
fi

echo "== measuring (BENCH_SCALE=${BENCH_SCALE:-full})"
"$venv/bin/python" bench/run.py
echo "== make bench took $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s"
