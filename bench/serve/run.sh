#!/usr/bin/env bash
# Load on luntan-serve's /api/search over the luntan-search benchmark's eight
# indexes (make bench-search builds them; LUNTAN_BENCH_THREADS threads, 200,000
# by default), from wrk in a second process, bounded in time. Compares each
# query's HTTP latency (sequential requests, p50) with luntan-search's own
# took_ms for the same query, then runs wrk with the mixed and the
# common-word query sets. `make bench-serve`; SERVE_LOAD_SECS per wrk run.
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${LUNTAN_BENCH_THREADS:-200000}
secs=${SERVE_LOAD_SECS:-20}
conns=${SERVE_LOAD_CONNS:-8}
target=${CARGO_TARGET_DIR:-target}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }

cargo build --release --bin luntan-serve --bin luntan-search
# Builds (once) and caches the indexes; one round is enough here.
LUNTAN_BENCH_THREADS=$threads LUNTAN_BENCH_ROUNDS=1 cargo bench -p luntan-search --bench search >/dev/null
split=$(ls -d "$target"/bench-search/t"$threads"-*/split | head -1)
[ -d "$split" ] || { echo "no indexes for $threads threads under $target/bench-search" >&2; exit 1; }
data=$(mktemp -d)
out=$(mktemp -d)
"$target/release/luntan-serve" --index-dir "$split" --data "$data" --addr 127.0.0.1:0 2>"$out/serve.err" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$out/serve.err" && break; sleep 0.1; done
base=$(grep -o 'http://[0-9.:]*' "$out/serve.err" | head -1)
echo "luntan-serve at $base over $split ($threads threads)"

python3 bench/serve/compare.py "$target/release/luntan-search" "$split" "$base" bench/serve/queries-mixed.txt | tee "$out/compare.txt"
# SERVE_FACETS=1 adds runs of the same sets with every facet counted
# (/api/search?…&facets=1: forum, board, author, year, month over all matches).
suffixes=("")
[ "${SERVE_FACETS:-0}" = 1 ] && suffixes+=("&facets=1")
for suffix in "${suffixes[@]}"; do
  for set in mixed common; do
    echo
    echo "wrk: $set queries${suffix:+ with facets}, $conns connections, 2 threads, ${secs}s"
    QUERY_SUFFIX=$suffix QUERIES_FILE=bench/serve/queries-$set.txt wrk -t2 -c"$conns" -d"${secs}s" --latency -s bench/serve/wrk.lua "$base" | tee "$out/wrk-$set${suffix:+-facets}.txt"
  done
done
echo
echo "outputs in $out"
