#!/usr/bin/env python3
"""Requests per article and wall time of the fixture's JavaScript-drawn pages
read three ways: as a hybrid site (HTML articles, JSON comments, protocol),
in browser mode (Chromium), and as pure protocol <json> where the site allows.

Each run gets a fresh `luntan-fixture serve` (its request log is the count
the forum sees) and a fresh data directory; discover and download are timed
together, then on their own. Usage:

    python3 bench/s4_modes.py [--bin target/release] [--runs 3] [--out FILE]

Writes a markdown table (the BENCHMARKS.md section) to --out or stdout.
"""

import argparse
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def start_fixture(bin_dir, sites, log):
    p = subprocess.Popen(
        [os.path.join(bin_dir, "luntan-fixture"), "serve", "--microblog", "--sites-out", sites, "--request-log", log,
         "--forums", "bbs", "--threads", "1", "--boards", "1"],
        stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"listening on (\S+)", line)
    if not m:
        p.kill()
        sys.exit(f"luntan-fixture: {line!r}")
    return p, m.group(1).rstrip("/")


def stop_fixture(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)


def stage(bin_dir, name, data, *args):
    t = time.monotonic()
    out = subprocess.run([os.path.join(bin_dir, f"luntan-{name}"), "--data", data, *args], capture_output=True, text=True,
                         env={**os.environ, "RUST_LOG": "warn"})
    if out.returncode != 0:
        sys.exit(f"luntan-{name} {' '.join(args)}: exit {out.returncode}\n{out.stderr}")
    return time.monotonic() - t, out.stdout


def classify(path, method):
    """What a request was, as the forum sees it."""
    if method == "WS":
        return "frames"
    if path == "/robots.txt":
        return "robots"
    if "/static/" in path:
        return "assets"
    if "/api/" in path or path.startswith("/st/poll") or path.startswith("/st/socket"):
        return "api"
    return "pages"


def one_run(bin_dir, site, file_name, articles_of, extract):
    with tempfile.TemporaryDirectory(prefix="luntan-s4modes-") as work:
        data, log = os.path.join(work, "data"), os.path.join(work, "requests.jsonl")
        sites = os.path.join(data, "sites")
        os.makedirs(sites)
        fixture, base = start_fixture(bin_dir, sites, log)
        try:
            if file_name is not None:
                # A site file no --sites-out writes, printed by the fixture itself.
                text = subprocess.run([os.path.join(bin_dir, "luntan-fixture"), "site-file", "--base", base, file_name],
                                      capture_output=True, text=True, check=True).stdout
                with open(os.path.join(sites, f"{site}.xml"), "w") as f:
                    f.write(text)
            for other in os.listdir(sites):
                if other != f"{site}.xml":
                    os.remove(os.path.join(sites, other))
            t_discover, _ = stage(bin_dir, "discover", data, "--site", site, "--all-boards")
            t_download, summary = stage(bin_dir, "download", data, "--site", site)
            posts = None
            if extract:
                stage(bin_dir, "extract", data)
                posts = 0
                for root, _, files in os.walk(os.path.join(data, "pages")):
                    for name in files:
                        if re.fullmatch(r"article\d+\.xml", name):
                            with open(os.path.join(root, name), encoding="utf-8") as f:
                                posts += f.read().count("<post ")
        finally:
            stop_fixture(fixture)
        counts = {}
        with open(log) as f:
            for line in f:
                r = json.loads(line)
                k = classify(r["path"], r.get("method", "GET"))
                counts[k] = counts.get(k, 0) + 1
        cached = re.search(r"(\d+) served from cache", summary)
        return {"discover": t_discover, "download": t_download, "counts": counts, "articles": articles_of,
                "cached": int(cached.group(1)) if cached else 0, "posts": posts}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    # (label, site id, `luntan-fixture site-file` name or None for the file --sites-out writes, articles)
    modes = [
        ("news: hybrid (HTML + JSON comments)", "news", None, 8),
        ("news: browser mode", "news", "news-browser", 8),
        ("cw: hybrid (HTML + JSON comments and replies)", "cw", "cw-hybrid", 5),
        ("cw: browser mode (every reply opened)", "cw", None, 5),
        ("st: browser mode (posts over a WebSocket)", "st", None, 4),
    ]
    rows = []
    for label, site, file_name, articles in modes:
        runs = [one_run(a.bin, site, file_name, articles, True) for _ in range(a.runs)]
        med = lambda k: statistics.median(r[k] for r in runs)
        c = runs[0]["counts"]
        rows.append((label, articles, c, runs[0]["cached"], runs[0]["posts"], med("discover") + med("download"), med("download"),
                     len(runs)))
        print(f"{label}: {c} {rows[-1][5]:.2f}s", file=sys.stderr)
    out = []
    out.append(f"machine: {os.cpu_count()} cores, {platform.platform()}; binaries: `{a.bin}`; "
               f"{a.runs} runs each, median wall time; counts from the fixture's request log of the first run")
    out.append("")
    out.append("| mode | articles | pages / article | API + socket / article | frames / article | assets fetched | assets from cache | robots.txt | posts stored | discover + download | download |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, n, c, cached, posts, both, down, _ in rows:
        per = lambda k: f"{c.get(k, 0) / n:.2f}"
        out.append(f"| {label} | {n} | {per('pages')} | {per('api')} | {per('frames')} | {c.get('assets', 0)} | {cached} | "
                   f"{c.get('robots', 0)} | {posts} | {both:.2f} s | {down:.2f} s |")
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
