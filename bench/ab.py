#!/usr/bin/env python3
"""Two builds of luntan's extract and index stages on the same fixture
forum, alternated round by round (A B, then B A, …), so that a change is
measured against the build before it in one run on one machine, not across
two `make bench` runs whose machine differed (a shared 2-core VM's speed
drifts by tens of percent between runs; ratios to peers absorb some of that,
an A/B in alternation absorbs most of it).

    python3 bench/ab.py OLD_RELEASE_DIR NEW_RELEASE_DIR

Each build discovers and downloads the forum with its own binaries (so a
database schema either reads is never an issue), then every round runs
`luntan-extract` over its downloaded pages and `luntan-index --rebuild`
over the XML it wrote, exactly as `bench/run.py`'s extract and index
sections do. The two builds' XML must be identical file for file (else
they did not do the same work and the comparison is void). Prints medians
of wall and CPU seconds per stage and build, and NEW ÷ OLD as the median
of the rounds' own ratios (the two runs of a round are neighbours in time,
so a machine that drifts over the run moves both) with how many rounds
NEW was the slower; writes the raw samples to bench/results/ab-<date>.json.

Settings: AB_THREADS (20,000), AB_ROUNDS (5), BENCH_DIR (default
/dev/shm/luntan-ab: tmpfs, so the disk is not what is measured).
"""
import datetime
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

os.environ.setdefault("BENCH_DIR", "/dev/shm/luntan-ab")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as R  # noqa: E402  (bench/run.py: process measurement, fixture server)

THREADS = int(os.environ.get("AB_THREADS", 20_000))
ROUNDS = int(os.environ.get("AB_ROUNDS", 5))
WRITER_MB = R.WRITER_MB


def prepare(name, bins, fixture, sites):
    """A data dir of `name` with every thread downloaded by `bins`."""
    data = R.fresh(R.WORK / f"dl-{name}")
    shutil.copytree(sites, data / "sites")
    R.run([bins / "luntan-discover", "--data", data, "-q"])
    r = R.run([bins / "luntan-download", "--data", data, "-q"])
    R.log(f"{name}: {r.out.strip().splitlines()[-1] if r.out.strip() else 'downloaded'}")
    db = R.WORK / f"downloaded-{name}"
    R.copy_db(data / "luntan.db", db)
    return data, db


def extract(bins, data, db):
    for p in (data / "pages").rglob("article*.xml"):
        p.unlink()
    R.copy_db(db / "luntan.db", data)
    return R.run([bins / "luntan-extract", "--data", data, "--quiet"])


def index(bins, data, idx):
    # A rebuild reads only the XML; without the database no rows move, so
    # every round does the same work (as bench/run.py's index section).
    for suffix in ("", "-wal", "-shm"):
        Path(f"{data / 'luntan.db'}{suffix}").unlink(missing_ok=True)
    R.fresh(idx)
    return R.run([bins / "luntan-index", "--data", data, "--index-dir", idx, "--rebuild", "--site", "dz", "--writer-mb", WRITER_MB, "-q"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    builds = {"old": Path(sys.argv[1]).resolve(), "new": Path(sys.argv[2]).resolve()}
    for name, bins in builds.items():
        for b in ("luntan-discover", "luntan-download", "luntan-extract", "luntan-index"):
            if not os.access(bins / b, os.X_OK):
                sys.exit(f"{bins / b}: not an executable ({name} build)")
    R.WORK.mkdir(parents=True, exist_ok=True)
    sites = R.fresh(R.WORK / "sites")
    R.BIN = builds["new"]
    fixture = R.Fixture("dz", ["--threads", THREADS, "--boards", R.BOARDS, "--forums", "dz"], sites_out=sites)
    R.set_politeness(sites / "dz.xml", '<politeness delay-ms="0" concurrency="16" robots="false"/>')
    try:
        dirs = {name: prepare(name, bins, fixture, sites) for name, bins in builds.items()}
    finally:
        fixture.stop()
    samples = {stage: {name: [] for name in builds} for stage in ("extract", "index")}
    for r in range(ROUNDS):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for name in order:
            bins, (data, db) = builds[name], dirs[name]
            e = extract(bins, data, db)
            i = index(bins, data, R.WORK / f"idx-{name}")
            samples["extract"][name].append(e.sample())
            samples["index"][name].append(i.sample())
            R.log(f"round {r + 1} {name}: extract {e.wall:.2f}s wall {e.cpu:.2f}s cpu, index {i.wall:.2f}s wall {i.cpu:.2f}s cpu")
    # The same work? Both builds' XML, file for file.
    old_pages, new_pages = dirs["old"][0] / "pages", dirs["new"][0] / "pages"
    xml = sorted(p.relative_to(new_pages) for p in new_pages.rglob("article*.xml"))
    differ = [str(p) for p in xml if not (old_pages / p).exists() or (old_pages / p).read_bytes() != (new_pages / p).read_bytes()]
    if len(xml) != sum(1 for _ in old_pages.rglob("article*.xml")) or differ:
        sys.exit(f"the builds wrote different XML ({len(differ)} files differ, e.g. {differ[:3]}): not comparable")
    print(f"\n{THREADS} threads ({len(xml)} XML files, identical in both builds), {ROUNDS} rounds alternated\n")
    print(f"{'stage':<8} {'old wall':>9} {'new wall':>9} {'old cpu':>9} {'new cpu':>9} {'new÷old cpu':>12} {'new÷old wall':>13} {'new slower':>11}")
    summary = {}
    for stage, by in samples.items():
        m = {name: (statistics.median(s["wall"] for s in by[name]), statistics.median(s["cpu"] for s in by[name])) for name in builds}
        paired = {k: [n[k] / o[k] for o, n in zip(by["old"], by["new"])] for k in ("wall", "cpu")}
        cpu, wall = statistics.median(paired["cpu"]), statistics.median(paired["wall"])
        slower = sum(r > 1 for r in paired["cpu"])
        summary[stage] = {"old": m["old"], "new": m["new"], "cpu_ratio": cpu, "wall_ratio": wall, "paired_cpu_ratios": paired["cpu"], "rounds_new_slower": slower}
        print(f"{stage:<8} {m['old'][0]:>9.2f} {m['new'][0]:>9.2f} {m['old'][1]:>9.2f} {m['new'][1]:>9.2f} {cpu:>12.3f} {wall:>13.3f} {slower:>6}/{ROUNDS}")
    out = R.ROOT / "bench" / "results" / f"ab-{datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%MZ')}.json"
    out.write_text(json.dumps({"builds": {k: str(v) for k, v in builds.items()}, "threads": THREADS, "rounds": ROUNDS, "xml_files": len(xml),
                               "machine": R.machine(), "samples": samples, "summary": summary}, indent=1))
    print(f"\nsamples in {out}")
    if os.environ.get("BENCH_KEEP") != "1":
        shutil.rmtree(R.WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
