#!/usr/bin/env python3
"""`make realworld`: luntan on forum software it was not shaped on.

For each package of the test bed (a folder of realworld/ with a `bed.sh`):
install it from its registry, fill it with Chinese text, serve it on
loopback, then crawl it twice, with the site file `luntan-learn` writes
and with the hand-written `site.xml` beside its `bed.sh`, and compare every
thread's XML with the truth the package's own database gave
(`truth.json`, written by `bed.sh fill`). Writes realworld/RESULTS.md and
realworld/work/results.json.

A thread is exact when its posts are the truth's posts in order, each with
the same author, the same time (to the precision the forum shows) and the
same paragraphs (white space folded). Nothing is hand-edited between the
learner and the crawl.

The conversation fields (thread XML version 2) are measured apart, each
only where the site file holds its rule: post ids, author ids and pages,
quotes (their words, the post and author they name), what a post answers
(`reply-to`), edit times, likes and the board's name, against
truth.json's. A field the file
has no rule for is "not learned" (or, where the page does not show it,
"not shown"), never a failure; a wrong or missing value where the file has
the rule is. Which paragraphs are the post's own depends on the file: with
a `quote` rule, the words outside the blockquotes (truth's `paragraphs`);
without one, every paragraph the post shows, quoted words included
(truth's `shown`), as luntan then reads them, unless the file's `strip`
takes the blockquotes out whole (then the words outside them, the quoted
words being lost).

    python3 realworld/run.py                     # every package
    python3 realworld/run.py --packages machina  # one
    REALWORLD_BIN=target/debug python3 realworld/run.py

stdlib only: it must run before anything else is installed.
"""

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PORT0 = 18300


def packages():
    return sorted(p.name for p in HERE.iterdir() if (p / "bed.sh").is_file())


def bed(pkg, *args, log):
    """Runs one bed.sh step, its output into the log; raises on failure."""
    t = time.monotonic()
    with open(log, "a") as f:
        f.write(f"\n== bed.sh {' '.join(map(str, args))}\n")
        f.flush()
        r = subprocess.run(["bash", str(HERE / pkg / "bed.sh"), *map(str, args)], stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError(f"realworld/{pkg}/bed.sh {args[0]} failed (exit {r.returncode}); see {log}")
    return time.monotonic() - t


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def luntan(bin_dir, stage, *args, log, timeout=1800):
    """Runs one luntan binary; returns (exit code, stdout, wall s, CPU s)."""
    t, c = time.monotonic(), children_cpu()
    with open(log, "a") as f:
        f.write(f"\n== {stage} {' '.join(map(str, args))}\n")
        f.flush()
        r = subprocess.run([str(bin_dir / stage), *map(str, args)], stdout=subprocess.PIPE, stderr=f, text=True, timeout=timeout)
    return r.returncode, r.stdout, time.monotonic() - t, children_cpu() - c


def fold(s):
    return " ".join(s.split())


def paras(el):
    return [fold(x.text or "") for x in el.findall("p") if fold(x.text or "")]


def read_xml(path):
    root = ET.parse(path).getroot()
    posts = []
    for p in root.findall("post"):
        a = p.find("author")
        posts.append(
            {
                "author": fold(p.findtext("author") or ""),
                "time": (p.findtext("time") or "").strip(),
                "paragraphs": paras(p),
                "id": p.get("id"),
                "reply_to": p.get("reply-to"),
                "author_id": a.get("id") if a is not None else None,
                "author_url": a.get("url") if a is not None else None,
                "quotes": [{"of": q.get("of"), "author": q.get("author"), "text": paras(q)} for q in p.findall("quote")],
                "edited": (p.findtext("edited") or "").strip() or None,
                "likes": int(p.get("likes")) if p.get("likes") is not None else None,
            }
        )
    return {
        "id": root.get("id"),
        "url": (root.findtext("url") or "").strip(),
        "title": fold(root.findtext("title") or ""),
        "board_name": fold(root.findtext("board-name") or "") or None,
        "posts": posts,
    }


# The conversation fields a site file's <thread> may hold (thread XML version 2).
CONVERSATION = [
    "post-id", "author-id", "author-url", "reply-to", "quote", "quote-head", "quote-intro", "quote-of", "quote-author",
    "edited", "likes", "replies", "location", "links", "images", "board-name", "thread-replies", "thread-views",
]
# What run.py measures, each with the site file rule it needs and truth's
# `shows` key (whether the package's page shows it at all).
MEASURED = [
    ("post_id", "post-id", "post_id"),
    ("author_id", "author-id", "author_id"),
    ("author_url", "author-url", "author_url"),
    ("quotes", "quote", None),
    ("quote_of", "quote-of", "quote_of"),
    ("quote_author", "quote-author", "quote_author"),
    ("reply_to", "reply-to", "reply_to"),
    ("edited", "edited", "edited"),
    ("likes", "likes", "likes"),
    ("board_name", "board-name", None),
]


# A top-level <comments> (a hybrid site's JSON comments) names the same
# fields by its own attributes.
COMMENTS_RULES = {"id": "post-id", "author-id": "author-id", "author-url": "author-url", "parent": "reply-to",
                  "children": "reply-to", "edited": "edited", "likes": "likes", "location": "location"}


def thread_rules(site_file):
    """The conversation attributes of a site file's `<thread>`, then those
    its `<comments>` reads, in file order."""
    root = ET.parse(site_file).getroot()
    el = root.find("thread")
    rules = [a for a in (el.attrib if el is not None else {}) if a in CONVERSATION]
    comments = root.find("comments")
    for a in (comments.attrib if comments is not None else {}):
        rule = COMMENTS_RULES.get(a)
        if rule and rule not in rules:
            rules.append(rule)
    return rules


def url_key(u):
    """A thread URL as path and query, without the origin or a trailing
    slash, percent-escapes decoded (pages write Chinese slugs raw; luntan
    keeps URLs as the `url` crate serializes them)."""
    u = urllib.parse.unquote(re.sub(r"^[a-z]+://[^/]+", "", u.strip()))
    return u.rstrip("/") or "/"


def minutes(zone):
    """`+08:00` → 480."""
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", zone.strip())
    if not m:
        raise ValueError(f"{zone!r} is not a zone such as +08:00")
    n = int(m.group(2)) * 60 + int(m.group(3))
    return -n if m.group(1) == "-" else n


def site_zone(site_file):
    """The `time-zone` a site file reads times in (luntan's default +08:00)."""
    m = re.search(r'<thread\b[^>]*\btime-zone="([^"]+)"', Path(site_file).read_text())
    return minutes(m.group(1)) if m else 480


def moved(t, from_min, to_min):
    """A wall-clock time on one zone's clock, on another's."""
    d = datetime.datetime.fromisoformat(t) + datetime.timedelta(minutes=to_min - from_min)
    return d.isoformat(timespec="seconds")


def same_time(got, want, precision):
    if precision in ("relative", "none"):
        return True
    n = {"second": 19, "minute": 16, "day": 10}[precision]
    return got[:n] == want[:n] and len(got) >= n


def same_url(got, want):
    return got is not None and url_key(got) == url_key(want)


class Tally:
    """Per measured field: values compared, values exact, first differences."""

    def __init__(self):
        self.n = {f: [0, 0] for f, _, _ in MEASURED}
        self.n["quotes_nested"] = [0, 0]
        self.diffs = []

    def add(self, field, ok, where, got, want):
        self.n[field][0] += 1
        self.n[field][1] += bool(ok)
        if not ok and got != want and sum(1 for d in self.diffs if d.startswith(field + " ")) < 3:
            self.diffs.append(f"{field} {where}: {got!r} != {want!r}")


def compare_conversation(t, d, w_posts, rules, tally, time_ok):
    """One thread's conversation fields, each where the file has its rule.
    Posts are paired by order (a missing post counts as wrong values).
    `time_ok(got, want)` says whether a time read is the truth's, as for
    the posts' own times."""
    has = set(rules)
    board = t.get("board_name")
    if "board-name" in has and board:
        tally.add("board_name", d["board_name"] == board, t["path"], d["board_name"], board)
    for i, w in enumerate(w_posts):
        g = d["posts"][i] if i < len(d["posts"]) else {}
        where = f"{t['path']} post {i + 1}"
        if "post-id" in has and w.get("id"):
            tally.add("post_id", g.get("id") == w["id"], where, g.get("id"), w["id"])
        if "author-id" in has and w.get("author_id"):
            tally.add("author_id", g.get("author_id") == w["author_id"], where, g.get("author_id"), w["author_id"])
        if "author-url" in has and w.get("author_url"):
            tally.add("author_url", same_url(g.get("author_url"), w["author_url"]), where, g.get("author_url"), w["author_url"])
        # luntan writes reply-to from its rule, else from a quote's quote-of;
        # one written without either would be wrong all the same.
        want, got = w.get("reply_to"), g.get("reply_to")
        if (has & {"reply-to", "quote-of"} and want) or got:
            tally.add("reply_to", want == got, where, got, want)
        if "edited" in has or g.get("edited"):
            want, got = w.get("edited"), g.get("edited")
            if want or got:
                tally.add("edited", bool(want and got and time_ok(got, want)), where, got, want)
        if "likes" in has and w.get("likes") is not None:
            tally.add("likes", g.get("likes") == w["likes"], where, g.get("likes"), w["likes"])
        if "quote" not in has:
            continue
        wq, gq = w.get("quotes", []), g.get("quotes", [])
        for k in range(max(len(wq), len(gq))):
            a = wq[k] if k < len(wq) else {}
            b = gq[k] if k < len(gq) else {}
            wt = [fold(x) for x in a.get("text", []) if fold(x)]
            tally.add("quotes", b.get("text") == wt and bool(a), f"{where} quote {k + 1}", " / ".join(b.get("text", []))[:60], " / ".join(wt)[:60])
            if a.get("nested"):
                # a quote of a post that quotes: the inner quote's words are part of it
                tally.add("quotes_nested", b.get("text") == wt, f"{where} quote {k + 1}", None, None)
            for field, rule, key in (("quote_of", "quote-of", "of"), ("quote_author", "quote-author", "author")):
                if rule in has and (a.get(key) or b.get(key)):
                    tally.add(field, a.get(key) == b.get(key), f"{where} quote {k + 1}", b.get(key), a.get(key))


def compare(truth, data, site):
    """Every thread of the truth against the XML luntan wrote for it. A
    time is right when it is the truth's wall clock as the page shows it
    (luntan keeps a time that names no zone as shown: FlaskBB shows UTC
    without saying so), or the truth's instant on the clock the site file
    reads times on (a time that names its zone, such as NodeBB's `…Z`, is
    moved there, +08:00 unless the file says otherwise)."""
    site_file = data / "sites" / f"{site}.xml"
    zone_from, zone_to = minutes(truth.get("time_zone", "+08:00")), site_zone(site_file)
    rules = thread_rules(site_file)
    # With a quote rule luntan keeps the quoted words apart; without one it
    # reads them as the post's own, unless `strip` takes the blockquotes
    # (every package here quotes in a <blockquote>) out whole.
    thread_el = ET.parse(site_file).getroot().find("thread")
    strip = (thread_el.get("strip") if thread_el is not None else None) or ""
    if "quote" in rules:
        own, quoted = "paragraphs", "apart"
    elif re.search(r"(^|[\s>+~,(])blockquote\b", strip):
        own, quoted = "paragraphs", "dropped"
    else:
        own, quoted = "shown", "in paragraphs"
    names = {b["id"]: b["name"] for b in truth.get("boards", [])}
    tally = Tally()
    prec = truth.get("time_precision", "minute")

    def time_ok(got, want):
        return same_time(got, want, prec) or same_time(got, moved(want, zone_from, zone_to), prec)

    docs = {}
    for path in (data / "pages" / site).rglob("*.xml"):
        try:
            d = read_xml(path)
        except ET.ParseError as e:
            print(f"realworld: {path}: not XML: {e}", file=sys.stderr)
            continue
        docs[url_key(d["url"])] = d
    prec = truth.get("time_precision", "minute")
    out = {"threads": len(truth["threads"]), "found": 0, "exact": 0, "titles": 0, "posts": 0, "posts_exact": 0, "diffs": []}
    for t in truth["threads"]:
        want = t["posts"]
        out["posts"] += len(want)
        d = docs.get(url_key(t["path"]))
        if d is None:
            out["diffs"].append(f"{t['path']}: no XML")
            continue
        out["found"] += 1
        out["titles"] += fold(t["title"]) == d["title"]
        first = None
        for i, w in enumerate(want):
            g = d["posts"][i] if i < len(d["posts"]) else None
            # A quote's intro ("青山客 wrote:") is no one's words where the
            # file names it (`quote-intro`): luntan leaves it out of both.
            intros = set(w.get("intros", [])) if own == "paragraphs" and "quote-intro" in rules else set()
            wp = [fold(x) for k, x in enumerate(w.get(own, w["paragraphs"])) if fold(x) and not (own == "paragraphs" and k in intros)]
            why = None
            if g is None:
                why = "missing"
            elif g["author"] != fold(w["author"]):
                why = f"author {g['author']!r} != {w['author']!r}"
            elif not (same_time(g["time"], w["time"], prec) or same_time(g["time"], moved(w["time"], zone_from, zone_to), prec)):
                why = f"time {g['time']!r} != {w['time']!r} (or {moved(w['time'], zone_from, zone_to)!r} on the site file's clock)"
            elif g["paragraphs"] != wp:
                why = f"text {' / '.join(g['paragraphs'])[:80]!r} != {' / '.join(wp)[:80]!r}"
            if why is None:
                out["posts_exact"] += 1
            elif first is None:
                first = f"post {i + 1}: {why}"
        if first is None and len(d["posts"]) != len(want):
            first = f"{len(d['posts'])} posts, truth {len(want)}"
        if first is None:
            out["exact"] += 1
        else:
            out["diffs"].append(f"{t['path']}: {first}")
        compare_conversation(dict(t, board_name=names.get(t.get("board"))), d, want, rules, tally, time_ok)
    out["rules"] = rules
    out["quoted_words"] = quoted
    out["conversation"] = tally.n
    out["conversation_diffs"] = tally.diffs
    out["quotes_in_truth"] = sum(len(p.get("quotes", [])) for t in truth["threads"] for p in t["posts"])
    return out


def crawl(bin_dir, data, site, log):
    """discover, download, extract; the summary line of each."""
    lines = {}
    for stage in ("luntan-discover", "luntan-download", "luntan-extract"):
        code, _, wall, cpu = luntan(bin_dir, stage, "--data", data, "--site", site, "-q", log=log)
        last = log.read_text().rstrip().splitlines()[-1:] or [""]
        lines[stage] = {"exit": code, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "summary": last[0]}
    return lines


def learned_run(bin_dir, pkg, origin, truth, work, args, log):
    data = work / "run-learned"
    shutil.rmtree(data, ignore_errors=True)
    (data / "sites").mkdir(parents=True)
    code, explain, wall, cpu = luntan(
        bin_dir,
        "luntan-learn",
        origin + truth["home"],
        "--id",
        pkg,
        "--data",
        data,
        "--delay-ms",
        args.delay_ms,
        "--max-requests",
        args.max_requests,
        "--explain",
        "-q",
        log=log,
    )
    (work / "explain.txt").write_text(explain)
    tail = log.read_text().rstrip().splitlines()[-1:] or [""]
    m = re.search(r": (\d+) requests", tail[0])
    r = {"learn_exit": code, "learn_wall_s": round(wall, 1), "learn_cpu_s": round(cpu, 1), "learn_requests": int(m.group(1)) if m else None, "learn_line": tail[0]}
    if code != 0:
        return r
    site_file = data / "sites" / f"{pkg}.xml"
    shutil.copy(site_file, work / "learned.xml")
    r["crawl"] = crawl(bin_dir, data, pkg, log)
    r.update(compare(truth, data, pkg))
    return r


def hand_run(bin_dir, pkg, origin, truth, work, log):
    src = HERE / pkg / "site.xml"
    if not src.is_file():
        return None
    data = work / "run-hand"
    shutil.rmtree(data, ignore_errors=True)
    (data / "sites").mkdir(parents=True)
    text = re.sub(r"https?://127\.0\.0\.1:\d+", origin, src.read_text())
    (data / "sites" / f"{pkg}.xml").write_text(text)
    r = {"crawl": crawl(bin_dir, data, pkg, log)}
    r.update(compare(truth, data, pkg))
    return r


def pct(a, b):
    return f"{100.0 * a / b:.1f} %" if b else "–"


def markdown(results):
    rows = [
        "| package | family | threads | learned: exact | learned: posts exact | learned: quoted words | learn requests | learn s (wall / CPU) | hand-written: exact |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for pkg, r in results.items():
        if "error" in r:
            rows.append(f"| {pkg} | – | – | {r['error']} | | | | | |")
            continue
        lr, hr = r["learned"], r.get("hand")
        if "exact" in lr:
            learned = f"{lr['exact']}/{lr['threads']} ({pct(lr['exact'], lr['threads'])})"
            posts = f"{lr['posts_exact']}/{lr['posts']}"
        else:
            learned, posts = f"no file (exit {lr['learn_exit']})", "–"
        hand = f"{hr['exact']}/{hr['threads']} ({pct(hr['exact'], hr['threads'])})" if hr else "no site.xml"
        if hr and hr.get("quoted_words") != "apart" and r.get("quotes_in_truth"):
            hand += f", quoted words {hr.get('quoted_words')}"
        # Which paragraphs were held to be the posts' own: the words outside
        # the quotes where the file has a quote rule or strips them, else all.
        quoted = {
            "apart": "kept apart",
            "in paragraphs": "in paragraphs (no quote rule)",
            "dropped": "dropped (no quote rule; strip takes the blockquotes)",
        }.get(lr.get("quoted_words"), "–")
        if not r.get("quotes_in_truth"):
            quoted = "no quotes"
        rows.append(
            f"| {pkg} {r['version']} | {r['family']} | {r['threads']} | {learned} | {posts} | {quoted} | {lr.get('learn_requests')} "
            f"| {lr['learn_wall_s']} / {lr['learn_cpu_s']} | {hand} |"
        )
    rows += ["", conversation_table(results)]
    return "\n".join(rows) + "\n"


def conversation_cell(side, r, field, rule, shows_key, shows, learned):
    held = set(side.get("rules", []))
    if field == "reply_to" and "quote-of" in held:
        held.add("reply-to")  # a quote's quote-of is what the post answers
    if rule not in held and not side["conversation"][field][0]:
        if field == "quotes" and r.get("quotes_in_truth"):
            how = {"dropped": "quoted words dropped by strip"}.get(side.get("quoted_words"), "quoted words read as the post's")
            return f"not learned ({how})" if learned else f"no rule ({how})"
        if shows_key and not shows.get(shows_key, True):
            return "not shown"
        if field == "quotes":
            return "none filled"  # the package has no quote button (WordPress, Isso, Waline)
        return "not learned" if learned else "–"
    n, ok = side["conversation"][field]
    cell = f"{ok}/{n}" if n else "0/0"
    nn, nok = side["conversation"].get("quotes_nested", [0, 0])
    if field == "quotes" and nn:
        cell += f" (nested: {nok}/{nn})"
    return cell


def conversation_table(results):
    head = ["package", "site file", "conversation fields it holds"] + [f for f, _, _ in MEASURED]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for pkg, r in results.items():
        if "error" in r:
            continue
        shows = r.get("shows", {})
        for name, side, learned in (("learned", r["learned"], True), ("hand-written", r.get("hand"), False)):
            if not side or "conversation" not in side:
                continue
            cells = [f"{pkg} ({r.get('quotes_in_truth', 0)} quotes)", name, ", ".join(side["rules"]) or "none"]
            cells += [conversation_cell(side, r, f, rule, key, shows, learned) for f, rule, key in MEASURED]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", default=",".join(packages()), help="comma-separated (default: every folder with a bed.sh)")
    ap.add_argument("--bin", default=os.environ.get("REALWORLD_BIN") or str(Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release"))
    ap.add_argument("--work", default=str(HERE / "work"))
    ap.add_argument("--delay-ms", type=int, default=100, help="the learner's delay (loopback: small)")
    ap.add_argument("--max-requests", type=int, default=300)
    ap.add_argument("--refill", action="store_true", help="fill the packages again even where a truth.json exists")
    ap.add_argument("--no-results-md", action="store_true", help="do not rewrite realworld/RESULTS.md")
    args = ap.parse_args()
    bin_dir, work_root = Path(args.bin).resolve(), Path(args.work).resolve()
    for b in ("luntan-learn", "luntan-discover", "luntan-download", "luntan-extract"):
        if not (bin_dir / b).is_file():
            sys.exit(f"realworld: {bin_dir / b}: missing; build first (cargo build --release --bins)")
    results = {}
    every = packages()
    for pkg in (p for p in args.packages.split(",") if p):
        if not (HERE / pkg / "bed.sh").is_file():
            sys.exit(f"realworld: realworld/{pkg}/bed.sh: no such package")
        work = work_root / pkg
        work.mkdir(parents=True, exist_ok=True)
        log = work / "run.log"
        log.write_text("")
        # Each package its own port, the same whichever are run: runs of
        # single packages side by side do not meet.
        port = PORT0 + 10 + every.index(pkg)
        origin = f"http://127.0.0.1:{port}"
        print(f"== {pkg}", flush=True)
        try:
            r = {"install_s": round(bed(pkg, "install", work, log=log), 1)}
            if args.refill or not (work / "truth.json").is_file():
                r["fill_s"] = round(bed(pkg, "fill", work, log=log), 1)
            truth = json.loads((work / "truth.json").read_text())
            r.update(version=truth["version"], family=truth["family"], threads=len(truth["threads"]), time_precision=truth.get("time_precision"))
            r.update(shows=truth.get("shows", {}), quotes_in_truth=sum(len(p.get("quotes", [])) for t in truth["threads"] for p in t["posts"]))
            bed(pkg, "serve", work, port, log=log)
            try:
                r["learned"] = learned_run(bin_dir, pkg, origin, truth, work, args, log)
                r["hand"] = hand_run(bin_dir, pkg, origin, truth, work, log)
            finally:
                bed(pkg, "stop", work, log=log)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
            print(f"realworld: {pkg}: {e}", file=sys.stderr)
            r = {"error": str(e)}
        results[pkg] = r
        for side in ("learned", "hand"):
            s = r.get(side) or {}
            if "exact" in s:
                print(f"   {side}: {s['exact']}/{s['threads']} threads exact, {s['posts_exact']}/{s['posts']} posts; first differences:")
                for d in s["diffs"][:5]:
                    print(f"     {d}")
                print(f"   {side} conversation: holds {', '.join(s['rules']) or 'nothing'}; quoted words {s['quoted_words']}")
                for f, (n, ok) in s["conversation"].items():
                    if n:
                        print(f"     {f}: {ok}/{n}")
                for d in s["conversation_diffs"][:8]:
                    print(f"     {d}")
            elif s:
                print(f"   {side}: {s.get('learn_line')}")
    (work_root / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=1))
    table = markdown(results)
    print(table)
    if not args.no_results_md:
        md = HERE / "RESULTS.md"
        head = md.read_text().split("<!-- table -->")[0] if md.is_file() else "# The real-software test bed: results\n\n"
        md.write_text(head + "<!-- table -->\n" + table)
    bad = [p for p, r in results.items() if "error" in r]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
