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

# index, search: the Lucene peer, one Java file compiled against Debian's
# Lucene 8 jars (Maven Central is not reachable from the bench machines).
sections=",${BENCH_SECTIONS:-index,search},"
if [[ $sections == *,index,* || $sections == *,search,* ]]; then
  lucene_jars=(core analyzers-common analyzers-smartcn queryparser queries highlighter memory)
  have_jars() { for j in "${lucene_jars[@]}"; do compgen -G "/usr/share/java/lucene-$j-8*.jar" >/dev/null || return 1; done; }
  if ! command -v javac >/dev/null 2>&1 || ! have_jars; then
    echo "== installing liblucene8-java and a JDK (Debian packages)"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && apt-get install -y -qq liblucene8-java default-jdk-headless >/dev/null
    else
      echo "bench: javac or Debian's Lucene 8 jars are missing; install the Debian packages liblucene8-java and default-jdk-headless" >&2
      exit 1
    fi
  fi
  lucene_cp=$(for j in "${lucene_jars[@]}"; do compgen -G "/usr/share/java/lucene-$j-8*.jar" | sort -V | tail -1; done | paste -sd:)
  lucene_out=bench/work/lucene
  if [ ! -f "$lucene_out/classes/LucenePeer.class" ] || [ bench/peers/lucene/LucenePeer.java -nt "$lucene_out/classes/LucenePeer.class" ] \
     || [ "$(cat "$lucene_out/classpath" 2>/dev/null)" != "$lucene_cp" ]; then
    echo "== building the Lucene peer (bench/peers/lucene, javac against /usr/share/java)"
    rm -rf "$lucene_out/classes"
    mkdir -p "$lucene_out/classes"
    javac -nowarn -encoding UTF-8 -d "$lucene_out/classes" -cp "$lucene_cp" bench/peers/lucene/LucenePeer.java
    echo "$lucene_cp" >"$lucene_out/classpath"
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
