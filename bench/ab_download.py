#!/usr/bin/env python3
"""Two builds of luntan-download and wrk on the bench's download forum,
alternated round by round, as bench/ab.py does for extract and index: a
change to download measured against the build before it in one run.

    python3 bench/ab_download.py OLD_RELEASE_DIR NEW_RELEASE_DIR

The forum is bench/run.py's download section's (Discuz!-style, GBK, gzip
on; 16 requests in flight, no delay, no robots.txt), discovered once by
NEW's binaries. Each round runs OLD and NEW (order alternating), each into a
fresh copy of the discovered database, and wrk over the page URLs the first
download saved. Prints each run and the medians: pages per second, share of
wrk's requests per second, client and server CPU per page, peak RSS. With
AB_PERF=FILE, NEW downloads once under `perf record` into FILE instead.

Settings: AB_THREADS (50,000, the full bench's), AB_ROUNDS (3), BENCH_DIR
(default /dev/shm/luntan-ab).
"""
import os
import shutil
import statistics
import sys
from pathlib import Path

os.environ.setdefault("BENCH_DIR", "/dev/shm/luntan-ab")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as R  # noqa: E402  (bench/run.py: process measurement, fixture server)

THREADS = int(os.environ.get("AB_THREADS", 50_000))
ROUNDS = int(os.environ.get("AB_ROUNDS", 3))
WRK_SECS = 10


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    builds = {"old": Path(sys.argv[1]).resolve(), "new": Path(sys.argv[2]).resolve()}
    R.WORK.mkdir(parents=True, exist_ok=True)
    sites = R.fresh(R.WORK / "sites")
    R.BIN = builds["new"]
    fixture = R.Fixture("dz", ["--threads", THREADS, "--boards", R.BOARDS, "--forums", "dz"], sites_out=sites)
    try:
        R.set_politeness(sites / "dz.xml", f'<politeness delay-ms="0" concurrency="{R.CONCURRENCY}" robots="false"/>')
        discovered = R.fresh(R.WORK / "discovered")
        shutil.copytree(sites, discovered / "sites")
        R.run([builds["new"] / "luntan-discover", "--data", discovered, "-q"])

        def download(bins, perf=()):
            data = R.fresh(R.WORK / "data")
            shutil.copytree(sites, data / "sites")
            R.copy_db(discovered / "luntan.db", data)
            cpu0 = fixture.cpu()
            r = R.run([*perf, bins / "luntan-download", "--data", data, "-q"])
            pages = int(r.out.split(" pages,")[0].rsplit(" ", 1)[1])
            return data, r.sample(pages=pages, rate=pages / r.wall, server=fixture.cpu() - cpu0)

        if os.environ.get("AB_PERF"):
            download(builds["new"], ["perf", "record", "-F", "2000", "-g", "--call-graph", "dwarf,16384", "-o", os.environ["AB_PERF"]])
            return
        samples = {"old": [], "new": [], "wrk": []}
        lua = None
        for r in range(ROUNDS):
            for name in ["old", "new"] if r % 2 == 0 else ["new", "old"]:
                data, s = download(builds[name])
                samples[name].append(s)
                R.log(f"round {r + 1} {name}: {s['pages']} pages in {s['wall']:.1f}s = {s['rate']:.0f} pages/s, cpu {s['cpu']:.1f}s, server cpu {s['server']:.1f}s")
                if lua is None:
                    lua = R.WORK / "wrk-urls.lua"
                    R.wrk_page_script(data / "luntan.db", lua)
            cpu0 = fixture.cpu()
            w = R.run(["wrk", "-t1", f"-c{R.CONCURRENCY}", f"-d{WRK_SECS}s", "-s", lua, fixture.base])
            requests = int(w.out.split(" requests in")[0].rsplit(None, 1)[1])
            samples["wrk"].append(dict(rate=requests / WRK_SECS, requests=requests, server=fixture.cpu() - cpu0))
            R.log(f"round {r + 1} wrk: {requests / WRK_SECS:.0f} requests/s")
    finally:
        fixture.stop()
    med = lambda name, k: statistics.median(s[k] for s in samples[name])
    limit = med("wrk", "rate")
    print(f"\n{THREADS} threads, {ROUNDS} rounds alternated; wrk {limit:.0f} requests/s, server CPU {1000 * med('wrk', 'server') / med('wrk', 'requests'):.3f} ms/request")
    for name in builds:
        pages = samples[name][0]["pages"]
        print(f"{name}: {med(name, 'rate'):.0f} pages/s = {100 * med(name, 'rate') / limit:.1f}% of wrk; client CPU {1000 * med(name, 'cpu') / pages:.3f} ms/page, "
              f"server CPU {1000 * med(name, 'server') / pages:.3f} ms/page, peak RSS {med(name, 'rss_mb'):.0f} MB")
    if os.environ.get("BENCH_KEEP") != "1":
        shutil.rmtree(R.WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
