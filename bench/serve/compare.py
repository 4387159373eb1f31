"""Per query: luntan-search's own took_ms (median of 5 runs) against the
p50 of 30 sequential GET /api/search requests (HTTP, JSON and all, as a
client sees them), after 3 warm-up requests. Prints one line per query and
the median of the ratios."""
import json, statistics, subprocess, sys, time, urllib.parse, urllib.request

cli, index_dir, base, queries_file = sys.argv[1:5]
queries = [q for q in open(queries_file, encoding="utf-8").read().splitlines() if q]
ratios = []
print(f"{'query':<20} {'CLI took_ms':>12} {'HTTP p50 ms':>12} {'HTTP p99 ms':>12} {'ratio':>6}")
for q in queries:
    took = []
    for _ in range(5):
        out = subprocess.run([cli, "--index-dir", index_dir, "--json", "--", q], capture_output=True, text=True, check=True).stdout
        took.append(json.loads(out.strip().splitlines()[-1])["took_ms"])
    url = f"{base}/api/search?q={urllib.parse.quote(q)}"
    lat = []
    for i in range(33):
        t = time.perf_counter()
        with urllib.request.urlopen(url) as r:
            body = r.read()
            assert r.status == 200
        if i >= 3:
            lat.append((time.perf_counter() - t) * 1000)
        json.loads(body)
    lat.sort()
    cli_ms, p50, p99 = statistics.median(took), lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    ratios.append(p50 / max(cli_ms, 0.05))
    print(f"{q:<20} {cli_ms:>12.2f} {p50:>12.2f} {p99:>12.2f} {p50 / max(cli_ms, 0.05):>6.2f}")
print(f"median ratio HTTP p50 / CLI took_ms: {statistics.median(ratios):.2f}")
