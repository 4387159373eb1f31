"""Renders a results file of bench/run.py as BENCHMARKS.md.

The tables are computed from the samples; bench/analysis.md (what limits each
result, the profiles) is written by hand for a full run and included as is.
"""
import statistics
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def p95(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def col(samples, key):
    return [s[key] for s in samples if s.get(key) is not None]


def med(samples, key):
    return median(col(samples, key))


def top(samples, key):
    c = col(samples, key)
    return max(c) if c else None


def f(x, digits=1, unit=""):
    if x is None:
        return "–"
    if abs(x) >= 1000:
        s = f"{x:,.0f}"
    elif abs(x) >= 100:
        s = f"{x:.0f}"
    elif abs(x) >= 10:
        s = f"{x:.{max(digits - 1, 0)}f}" if digits > 1 else f"{x:.1f}"
    else:
        s = f"{x:.{digits}f}"
    return s + unit


def n(x):
    return "–" if x is None else f"{x:,}"


def ni(x):
    """A count that may be a median of counts."""
    return "–" if x is None else f"{round(x):,}"


def ratio(a, b, digits=1):
    if a is None or b is None or b == 0:
        return None
    return a / b


def spread(samples, key):
    c = col(samples, key)
    if len(c) < 2:
        return f"{len(c)} run"
    lo, hi = min(c), max(c)
    return f"{len(c)} runs, ±{100 * (hi - lo) / 2 / statistics.median(c):.0f}%"


def met(ok):
    if ok is None:
        return "–"
    return "met" if ok else "**missed**"


def rss(samples):
    return f(top(samples, "rss_mb"), 0, " MB")


def per_cpu(samples, total):
    """The median over runs of total / CPU seconds (e.g. MB of XML per
    CPU-second; older results files do not store it)."""
    return median([total / x["cpu"] for x in samples if x.get("cpu")])


def lucene_version(m):
    """"Lucene 8.8.1" from the machine record ("Lucene 8.8.1; Java …")."""
    v = m.get("lucene") or "?"
    return v.split(";")[0].strip() if v != "?" else "Lucene"


def render(res):
    m = res["machine"]
    s = res["sections"]
    L = []
    w = L.append
    w("# Benchmarks")
    w("")
    w("luntan side by side with what a user would pick instead (Scrapy; a Python stack of lxml, jieba and Whoosh; Lucene; Selenium) and with")
    w("the limit of the same machine (a load generator, a decode-and-tokenize floor, jieba-rs alone), measured in one run,")
    w("in alternation, as ratios. Reproduce with `make bench` (about 50 minutes on the machine below; `make bench")
    w("BENCH_SCALE=small` takes a few minutes and writes `bench/work/BENCHMARKS.small.md`). How it works: `bench/README.md`.")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| machine | {m['cores']} cores ({m['cpu']}), {m['mem_gib']} GiB memory, Linux {m['kernel']} |")
    w(f"| date | {m['date']} |")
    w(f"| commit | `{m['commit']}`" + (f" plus uncommitted changes ({m['uncommitted']})" if m.get("uncommitted") else "") + " |")
    w(f"| scale | {res['scale']}: {n(res['threads'])} threads in the download/extract/index forum; {res['rounds']} rounds of luntan and of each limit, "
      f"{res['peer_rounds']} of each Python peer (every peer run sits between two luntan runs) |")
    w(f"| work directory | `{m['work_dir']}` ({m['work_fs']}): fsync costs nothing there, so the disk is not what is measured |")
    load = m.get("load_at_start")
    if load:
        w(f"| load average at start | {load[0]:.1f} (other builds share the 2 cores: absolute numbers are noisy, ratios of alternated runs less so) |")
    browsers = "".join(f"; {m[k]}" for k in ("chromium", "chromedriver") if m.get(k) and m[k] != "?")
    java = ""
    if m.get("lucene") and m["lucene"] != "?":
        java = f"; {m['lucene']}" + (f" (Debian {m['lucene_deb']})" if m.get("lucene_deb") and m["lucene_deb"] != "?" else "") + \
            (f", JVM options `{m['jvm_opts']}`" if m.get("jvm_opts") else ", the JVM's default heap sizing")
    w(f"| tools | {m['rustc']}; Python {m['python']}; " + ", ".join(f"{k} {v}" for k, v in m["peers"].items()) + f"; {m['wrk']}{browsers}{java} |")
    if res.get("total_secs"):
        w(f"| run time | {res['total_secs'] / 60:.0f} minutes for the whole `make bench` run (build excluded) |")
    w("")
    w("Every figure is the median of its runs; peak memory is the largest max RSS of any run. CPU figures are user +")
    w("system time of the process, which other jobs on the machine disturb much less than wall time.")
    w("")
    if res.get("rss_method") != "gnu-time":
        w("**Max RSS caveat for this run:** it was read from the driver's own `wait4`, and Linux counts the memory image a child")
        w("had before `exec` (a copy of the Python driver, about 50–105 MB by then) in that child's `ru_maxrss`. Figures up to")
        w("about 110 MB are therefore upper bounds, not the program's own peak (the floor program really peaks at 4 MB,")
        w("luntan-extract at about 13 MB on a small run); figures well above that (luntan-index, Scrapy, Whoosh) are the")
        w("programs' own. `bench/run.py` now measures through GNU time, which does not have this problem.")
        w("")

    summary = []

    # --- download -------------------------------------------------------------
    d = s.get("download")
    if d:
        lr, pr, wr = med(d["luntan"], "rate"), med(d["peer"], "rate"), med(d["limit"], "rate")
        r_peer, r_lim = ratio(lr, pr), ratio(lr, wr)
        pages = med(d["luntan"], "pages")
        w("## 1. Download")
        w("")
        w(f"One fixture server (Discuz!-style, GBK, gzip on) with {n(d['threads'])} threads ({n(int(pages) if pages else None)} pages). "
          f"luntan-download's site file allows {res['concurrency']} requests in flight with no delay and no robots.txt; the Scrapy "
          f"spider (`bench/peers/scrapy_download.py`) has `CONCURRENT_REQUESTS` = {res['concurrency']}, no delay, no AutoThrottle, no "
          "robots.txt, and follows the same pager links; both save every page's bytes to disk. wrk fetches the same page URLs "
          f"(`Accept-Encoding: gzip`, {res['concurrency']} connections) from the same server for a fixed time.")
        w("")
        w("| pair | input | luntan | other | ratio | luntan max RSS | other max RSS | goal | |")
        w("|---|---|---:|---:|---:|---:|---:|---|---|")
        w(f"| luntan-download vs Scrapy | {n(d['threads'])} threads, {n(int(pages) if pages else None)} pages | "
          f"{f(lr)} pages/s | {f(pr)} pages/s | **{f(r_peer, 2)}×** | {rss(d['luntan'])} | {rss(d['peer'])} | ≥ 3× Scrapy | {met(r_peer and r_peer >= 3)} |")
        w(f"| luntan-download vs wrk (limit) | the same {n(d.get('wrk_urls'))} page URLs | {f(lr)} pages/s | {f(wr)} requests/s | "
          f"**{f(100 * r_lim if r_lim else None)}%** | {rss(d['luntan'])} | {rss(d['limit'])} | ≥ 80% of wrk | {met(r_lim and r_lim >= 0.8)} |")
        w("")
        lcpu = ratio(med(d["luntan"], "cpu"), pages)
        pcpu = ratio(med(d["peer"], "cpu"), med(d["peer"], "pages"))
        ls = ratio(med(d["luntan"], "server_cpu"), pages)
        ps = ratio(med(d["peer"], "server_cpu"), med(d["peer"], "pages"))
        ws = ratio(med(d["limit"], "server_cpu"), med(d["limit"], "requests"))
        wc = ratio(med(d["limit"], "cpu"), med(d["limit"], "requests"))
        w("CPU per page, client and server (the server is the fixture, on the same 2 cores):")
        w("")
        w("| client | client CPU per page | server CPU per page | runs |")
        w("|---|---:|---:|---|")
        w(f"| luntan-download | {f(1000 * lcpu if lcpu else None, 2)} ms | {f(1000 * ls if ls else None, 2)} ms | {spread(d['luntan'], 'rate')} |")
        w(f"| Scrapy | {f(1000 * pcpu if pcpu else None, 2)} ms | {f(1000 * ps if ps else None, 2)} ms | {spread(d['peer'], 'rate')} |")
        w(f"| wrk | {f(1000 * wc if wc else None, 3)} ms | {f(1000 * ws if ws else None, 2)} ms | {spread(d['limit'], 'rate')} |")
        w("")
        summary.append(("Download ≥ 3× Scrapy", f"{f(r_peer, 2)}×", r_peer and r_peer >= 3))
        summary.append(("Download ≥ 80% of wrk", f"{f(100 * r_lim if r_lim else None)}%", r_lim and r_lim >= 0.8))

    # --- polite ---------------------------------------------------------------
    p = s.get("polite")
    if p:
        rate = med(p["luntan"], "rate")
        ideal = p["forums"] * 1000 / p["delay_ms"]
        share = rate / ideal if rate else None
        w("## 2. Polite crawl across many forums")
        w("")
        w(f"{p['forums']} fixture servers (one process each, the same Discuz!-style forum), each forum's site file limited to "
          f"`delay-ms=\"{p['delay_ms']}\" concurrency=\"1\"` ({1000 / p['delay_ms']:.0f} requests/s), robots.txt on; one luntan-download "
          f"run crawls all of them (discover ran before, not measured). The ideal is {ideal:.0f} requests/s in aggregate. Requests "
          "are the thread pages and one robots.txt per forum; since n requests spaced by the delay span n − 1 delays, the rate "
          "is the requests after each forum's first over the wall time of the whole process, start-up and the last response "
          "included.")
        w("")
        w("| forums | threads | requests per run | luntan aggregate | ideal | share | luntan max RSS | goal | |")
        w("|---:|---:|---:|---:|---:|---:|---:|---|---|")
        w(f"| {p['forums']} | {n(p.get('threads'))} | {n(int(med(p['luntan'], 'requests') or med(p['luntan'], 'pages')))} | {f(rate)} requests/s | {ideal:.0f} requests/s | "
          f"**{f(100 * share if share else None)}%** | {rss(p['luntan'])} | ≥ 95% | {met(share and share >= 0.95)} |")
        w("")
        sr = p.get("steady_rate_per_forum")
        w(f"As the servers saw it (request logs): a forum's steady rate, first to last thread-page request of a run, was "
          f"{f(sr, 2)} requests/s ({f(100 * sr * p['delay_ms'] / 1000 if sr else None)}% of {1000 / p['delay_ms']:.0f}); the median gap "
          f"between two request starts at one forum was {f(p.get('gap_median_ms'))} ms (p95 {f(p.get('gap_p95_ms'))} ms). "
          f"{n(p.get('gaps_under_delay'))} of {n(p.get('gaps'))} gaps were shorter than {p['delay_ms']} ms, the shortest "
          f"{f(p.get('gap_min_ms'))} ms: the client spaces request starts by the delay, and arrival at the server jitters by a few "
          f"milliseconds on a loaded machine. Runs: {spread(p['luntan'], 'rate')}.")
        w("")
        summary.append(("Polite crawl ≥ 95% of ideal", f"{f(100 * share if share else None)}%", share and share >= 0.95))

    # --- extract --------------------------------------------------------------
    e = s.get("extract")
    if e:
        lm, pm, fm, dm = med(e["luntan"], "mb_per_cpu_s"), med(e["peer"], "mb_per_cpu_s"), med(e["limit"], "mb_per_cpu_s"), med(e.get("dom", []), "mb_per_cpu_s")
        r_peer = ratio(lm, pm)
        r_floor = ratio(fm, lm)
        w("## 3. Extract")
        w("")
        w(f"The {n(e['threads'])} downloaded threads ({n(e['pages'])} GBK pages labelled gb2312, {f(e['mb'])} MB of HTML) to thread XML. "
          "Throughput is MB of HTML per CPU-second, i.e. per core (luntan-extract runs on both cores, the others on one). The "
          "Python peer (`bench/peers/extract_lxml.py`) detects the charset (BOM, HTTP, `<meta>` prescan, GBK widened to "
          "GB18030, the label checked against the bytes, charset-normalizer when in doubt), parses with lxml, applies the site "
          "file's selectors through cssselect, writes the same XML atomically (temp file, fsync, rename) and parses it back, "
          "as luntan does. The floor decodes the same bytes with encoding_rs and runs html5ever's tokenizer over them, nothing "
          "else (`bench/floor`). luntan-extract itself reads tokens with its own byte scanner (`crates/luntan-extract/src/scan.rs`, "
          "the same tokens as html5ever's), so this floor bounds the tokenizer luntan used to run, not luntan.")
        w("")
        w("| pair | input | luntan | other | ratio | luntan max RSS | other max RSS | goal | |")
        w("|---|---|---:|---:|---:|---:|---:|---|---|")
        w(f"| luntan-extract vs Python (lxml) | {n(e['threads'])} threads, {f(e['mb'])} MB | {f(lm)} MB/s/core | {f(pm)} MB/s/core | "
          f"**{f(r_peer, 2)}×** | {rss(e['luntan'])} | {rss(e['peer'])} | ≥ 5× the peer | {met(r_peer and r_peer >= 5)} |")
        w(f"| luntan-extract vs decode + tokenize (floor) | the same bytes | {f(lm)} MB/s/core | {f(fm)} MB/s/core | "
          f"**{f(r_floor, 2)}× slower** | {rss(e['luntan'])} | {rss(e['limit'])} | within 3× of the floor | {met(r_floor and r_floor <= 3)} |")
        w(f"| (reference) decode + DOM parse | the same bytes | | {f(dm)} MB/s/core | | | {rss(e.get('dom', []))} | | |")
        w("")
        w(f"Wall time: luntan-extract {f(med(e['luntan'], 'wall'))} s ({f(med(e['luntan'], 'mb_per_s'))} MB/s on {res['machine']['cores']} cores), "
          f"the Python peer {f(med(e['peer'], 'wall'))} s ({f(med(e['peer'], 'mb_per_s'))} MB/s on one core). "
          f"The peer's XML is byte-for-byte luntan's for {n(e.get('xml_identical'))} threads and differs for {n(e.get('xml_different'))}. "
          f"Runs: luntan {spread(e['luntan'], 'mb_per_cpu_s')}, peer {spread(e['peer'], 'mb_per_cpu_s')}, floor {spread(e['limit'], 'mb_per_cpu_s')}.")
        w("")
        summary.append(("Extract ≥ 5× the Python peer (per core)", f"{f(r_peer, 2)}×", r_peer and r_peer >= 5))
        summary.append(("Extract within 3× of decode + tokenize", f"{f(r_floor, 2)}×", r_floor and r_floor <= 3))

    du = s.get("durability")
    if du and du.get("disk") and du.get("tmpfs"):
        dr, tr = med(du["disk"], "rate"), med(du["tmpfs"], "rate")
        w(f"Durability: every figure above runs on tmpfs. On this machine's disk ({du.get('disk_fs')}), where each thread's XML "
          f"costs a file fsync and a directory fsync, luntan-extract of {n(du['threads'])} threads ran at {f(dr)} threads/s against "
          f"{f(tr)} threads/s on tmpfs ({f(ratio(tr, dr))}× slower; 2 runs each, alternated).")
        w("")

    # --- index ----------------------------------------------------------------
    i = s.get("index")
    if i:
        lr, pr, jr = med(i["luntan"], "rate"), med(i["peer"], "rate"), med(i["limit"], "rate")
        lmb, pmb, jmb = med(i["luntan"], "mb_per_s"), med(i["peer"], "mb_per_s"), med(i["limit"], "mb_per_s")
        r_peer, r_lim = ratio(lr, pr), ratio(lr, jr)
        r_cpu = ratio(med(i["luntan"], "rate_per_cpu_s"), med(i["peer"], "rate_per_cpu_s"))
        budget = i["writer_mb"] + 150
        lrss = top(i["luntan"], "rss_mb")
        w("## 4. Index")
        w("")
        w(f"The {n(i['threads'])} thread XML files ({f(i['mb'])} MB) into one index. luntan-index `--rebuild` with a "
          f"{i['writer_mb']} MB writer budget (jieba words and CJK uni+bigrams of title and body, traditional folded to simplified, "
          f"everything luntan-search needs). Whoosh 2.7 (`bench/peers/whoosh_peer.py`) with jieba's ChineseAnalyzer on title and "
          f"body, key/site/board/url stored, `limitmb={i['writer_mb']}`, one commit. The limit is jieba-rs alone segmenting the "
          f"same titles and paragraphs (search mode, as luntan's analyzer; reading the files not timed) on "
          f"{col(i['limit'], 'seg_threads')[0] if i['limit'] else '–'} threads.")
        lu = i.get("lucene") or []
        lv = lucene_version(m)
        if lu:
            w("")
            w(f"{lv} (`bench/peers/lucene/LucenePeer.java`, one JVM) with its Chinese analyzer, SmartChineseAnalyzer "
              "(lucene-analyzers-smartcn), on title and body, the same stored fields as the Whoosh peer (key/site/board/url as "
              "single terms, forum stored only), the body's postings with offsets (what the UnifiedHighlighter of the search "
              f"section reads), a {i['writer_mb']} MB RAM buffer, one commit; Lucene's own merge threads run as they like. "
              "The jars are Debian's (`liblucene8-java`): issue 13 names Lucene 9.12 from Maven Central, which this machine "
              "cannot reach. Throughput per core is threads (or MB of XML) per CPU-second of the whole process, user + system, "
              "the JVM's compiler, garbage collector and merge threads included, as for luntan-index's threads.")
        w("")
        w("| pair | input | luntan | other | ratio | luntan max RSS | other max RSS | goal | |")
        w("|---|---|---:|---:|---:|---:|---:|---|---|")
        w(f"| luntan-index vs Whoosh + jieba | {n(i['threads'])} threads, {f(i['mb'])} MB | {f(lr)} threads/s, {f(lmb)} MB/s | "
          f"{f(pr)} threads/s, {f(pmb, 2)} MB/s | **{f(r_peer)}×** | {rss(i['luntan'])} | {rss(i['peer'])} | ≥ 20× Whoosh | {met(r_peer and r_peer >= 20)} |")
        w(f"| luntan-index vs jieba-rs alone (limit) | the same text | {f(lr)} threads/s, {f(lmb)} MB/s | {f(jr)} threads/s, {f(jmb)} MB/s | "
          f"**{f(100 * r_lim if r_lim else None)}%** | {rss(i['luntan'])} | {rss(i['limit'])} | ≥ 60% of jieba | {met(r_lim and r_lim >= 0.6)} |")
        w(f"| luntan-index peak RSS vs budget | writer {i['writer_mb']} MB | {f(lrss, 0)} MB | budget + 150 = {budget} MB | | | | ≤ {budget} MB | {met(lrss is not None and lrss <= budget)} |")
        r_luc = None
        if lu:
            lpc, upc = med(i["luntan"], "rate_per_cpu_s"), med(lu, "rate_per_cpu_s")
            lmpc, umpc = per_cpu(i["luntan"], i["mb"]), per_cpu(lu, i["mb"])
            r_luc = ratio(lpc, upc)
            w(f"| luntan-index vs {lv} + SmartChineseAnalyzer, per core | {n(i['threads'])} threads, {f(i['mb'])} MB | "
              f"{f(lpc)} threads, {f(lmpc, 2)} MB per CPU-second | {f(upc)} threads, {f(umpc, 2)} MB per CPU-second | **{f(r_luc, 2)}×** | "
              f"{rss(i['luntan'])} | {rss(lu)} | ≥ 2× Lucene per core | {met(r_luc and r_luc >= 2)} |")
        w("")
        if lu:
            w("Side by side (medians; peak RSS the largest of any run; index size on disk after the commit):")
            w("")
            w("| indexer | runs | wall | threads/s | MB/s | CPU | threads per CPU-second | MB per CPU-second | peak RSS | index on disk |")
            w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for name, xs in (("luntan-index", i["luntan"]), (f"{lv} + SmartChineseAnalyzer", lu),
                             ("Whoosh 2.7 + jieba", i["peer"])):
                if not xs:
                    continue
                w(f"| {name} | {spread(xs, 'rate')} | {f(med(xs, 'wall'), 1, ' s')} | {f(med(xs, 'rate'))} | {f(med(xs, 'mb_per_s'), 2)} | "
                  f"{f(med(xs, 'cpu'), 1, ' s')} | {f(med(xs, 'rate_per_cpu_s'))} | {f(per_cpu(xs, i['mb']), 2)} | {rss(xs)} | "
                  f"{f(med(xs, 'index_mb'), 1, ' MB')} |")
            w("")
        anon, mapped = top(i["luntan"], "anon_mb"), top(i["luntan"], "file_mb")
        if anon is not None:
            w(f"luntan-index's peak RSS splits into at most {f(anon, 0)} MB of anonymous memory (heap) and at most {f(mapped, 0)} MB "
              "of mapped index files (tantivy mmaps the segments it merges; on tmpfs those pages are shared memory, counted in RSS).")
            w("")
        w(f"Per CPU-second (robust to the other jobs on the machine): luntan {f(med(i['luntan'], 'rate_per_cpu_s'))} threads, "
          f"Whoosh {f(med(i['peer'], 'rate_per_cpu_s'))} threads: {f(r_cpu)}×. Index sizes: luntan {f(med(i['luntan'], 'index_mb'))} MB, "
          f"Whoosh {f(med(i['peer'], 'index_mb'))} MB. Runs: luntan {spread(i['luntan'], 'rate')}, Whoosh {spread(i['peer'], 'rate')}, "
          f"jieba {spread(i['limit'], 'rate')}.")
        w("")
        summary.append(("Index ≥ 20× Whoosh + jieba", f"{f(r_peer)}×", r_peer and r_peer >= 20))
        summary.append(("Index ≥ 60% of jieba-only", f"{f(100 * r_lim if r_lim else None)}%", r_lim and r_lim >= 0.6))
        summary.append((f"Index peak RSS ≤ writer budget + 150 MB ({budget} MB)", f"{f(lrss, 0)} MB", lrss is not None and lrss <= budget))
        if lu:
            summary.append(("Index throughput per core ≥ 2× Lucene", f"{f(r_luc, 2)}×", r_luc and r_luc >= 2))

    # --- search ---------------------------------------------------------------
    q = s.get("search")
    if q:
        lq, pq = col(q["luntan"], "query_ms"), col(q["peer"], "query_ms")
        ps = col(q["peer"], "search_only_ms")
        lmed, pmed = median(lq), median(pq)
        r = ratio(pmed, lmed)
        lstart = med(q["luntan"], "startup_ms")
        pstart = med(q["peer"], "process_startup_ms")
        w("## 5. Search")
        w("")
        w(f"{q['queries']} fixed queries (`bench/queries.txt`: common and rare words, two and three words, phrases, OR, "
          f"exclusion), {res['rounds']} rounds, top {10} hits with snippets. luntan-search runs once per query over "
          f"{q['indexes']} indexes (the {n(q['threads'])} threads split by board into eight forums); query time is its own "
          "`took_ms`, start-up is the rest of the process's wall time (start, opening the indexes, jieba's dictionary, exit). "
          "Whoosh holds the same threads in one index; one process runs every query (parse, search, stored fields, "
          "highlighted body snippet); its start-up is the process's wall time minus the queries.")
        w("")
        w("| pair | threads | luntan median | luntan p95 | Whoosh median | Whoosh p95 | ratio of medians | luntan max RSS | Whoosh max RSS | goal | |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        w(f"| query time | {n(q['threads'])} | {f(lmed, 2)} ms | {f(p95(lq), 2)} ms | {f(pmed, 2)} ms | {f(p95(pq), 2)} ms | **{f(r)}×** | "
          f"{rss(q['luntan'])} | {rss(q['peer'])} | median ≥ 20× faster | {met(r and r >= 20)} |")
        w(f"| (Whoosh without snippets) | | | | {f(median(ps), 2)} ms | {f(p95(ps), 2)} ms | {f(ratio(median(ps), lmed))}× | | | | |")
        w(f"| process start-up | | {f(lstart, 0)} ms | {f(p95(col(q['luntan'], 'startup_ms')), 0)} ms | {f(pstart, 0)} ms | – | "
          f"{f(ratio(pstart, lstart))}× | | | | |")
        w("")
        lu = q.get("lucene") or []
        r_luc = None
        if lu:
            lv = lucene_version(m)
            uq, us = col(lu, "query_ms"), col(lu, "search_only_ms")
            umed = median(uq)
            r_luc = ratio(umed, lmed)
            ustart = med(lu, "process_startup_ms")
            pq_ = q.get("per_query") or {}
            same = sum(1 for v in pq_.values() if v.get("lucene_hits") is not None and v["lucene_hits"] == v.get("luntan_hits"))
            w(f"{lv} (`bench/peers/lucene/LucenePeer.java`) holds the same threads in one index (built by the index section, "
              "SmartChineseAnalyzer); one JVM runs every query once a round: the classic query syntax over title and body with "
              "AND as the default operator (luntan's `\"phrase\"`, `a OR b` and `-word` read the same; a word the analyzer "
              "splits, 携程 into 携 程, is a phrase of its pieces, as luntan finds it as a substring), every match counted "
              "(no early termination, as luntan's and Whoosh's totals are exact), the top 10 with their stored title and url, "
              "and a UnifiedHighlighter passage of about 80 characters from the body (offsets read from the postings). The JVM "
              "compiles as it goes, so the first queries of each round run cold, as luntan's (a new process each) do; its "
              "start-up is the process's wall time minus the queries, peak memory the JVM process's max RSS.")
            w("")
            w(f"| pair | threads | luntan median | luntan p95 | Lucene median | Lucene p95 | ratio of medians | luntan max RSS | Lucene max RSS | goal | |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
            w(f"| query time | {n(q['threads'])} | {f(lmed, 2)} ms | {f(p95(lq), 2)} ms | {f(umed, 2)} ms | {f(p95(uq), 2)} ms | **{f(r_luc, 2)}×** | "
              f"{rss(q['luntan'])} | {rss(lu)} | luntan's median ≤ Lucene's | {met(r_luc and r_luc >= 1)} |")
            w(f"| (Lucene without snippets) | | | | {f(median(us), 2)} ms | {f(p95(us), 2)} ms | {f(ratio(median(us), lmed), 2)}× | | | | |")
            warm = q.get("lucene_warm") or []
            if warm:
                wq = col(warm, "query_ms")
                w(f"| (Lucene, warm JVM: pass {q.get('lucene_warm_passes', 0) + 1} of the same process) | | | | {f(median(wq), 2)} ms | "
                  f"{f(p95(wq), 2)} ms | {f(ratio(median(wq), lmed), 2)}× | | | | |")
            w(f"| process start-up | | {f(lstart, 0)} ms | {f(p95(col(q['luntan'], 'startup_ms')), 0)} ms | {f(ustart, 0)} ms | – | "
              f"{f(ratio(ustart, lstart))}× | | | | |")
            w("")
            w(f"Lucene's total equals luntan's for {same} of the {len(pq_)} queries (the analyzers cut words differently; the "
              "appendix has every count). Ratios are the other engine's median over luntan's: above 1× luntan is faster. "
              "The goal is judged on the first pass, the one Whoosh is measured on too. After it the same JVM runs the queries "
              f"{q.get('lucene_warm_passes', 0)} times more and the last pass is given as the warm row: Lucene as a long-running "
              "server answers, its code compiled by the JIT. luntan-search's figure is a new process's for every query, so "
              "the like-for-like warm comparison is `luntan-serve` (`make bench-serve`), not this table.")
            w("")
        w(f"Building the eight luntan indexes took {f(q.get('build_wall'))} s.")
        w("")
        summary.append(("Search median ≥ 20× faster than Whoosh", f"{f(r)}×", r and r >= 20))
        if lu:
            summary.append(("Search median ≤ Lucene's", f"{f(lmed, 2)} ms vs {f(umed, 2)} ms ({f(r_luc, 2)}×)", r_luc and r_luc >= 1))

    # --- S4: pages drawn by JavaScript -------------------------------------------
    j = s.get("s4")
    if j and (j.get("protocol") or j.get("browser") or j.get("peer")):
        site, bsite = j.get("site", "mb"), j.get("browser_site", "mb-browser")
        rows = [("luntan, protocol mode", f"`{site}.xml`", j.get("protocol", [])),
                ("luntan, browser mode", f"`{bsite}.xml`", j.get("browser", [])),
                ("Selenium peer", f"`{bsite}.xml`'s actions", j.get("peer", []))]
        # A mode that did not run gets no line in any table.
        rows = [r for r in rows if r[2]]
        what = ("the fixture's Weibo-style microblog (`/mb/`): user timelines loaded as JSON with cursor paging and more on scroll, "
                "each status page's comments loaded page by page on click" if site == "mb" else
                "the fixture's XHR forum (`/xhr/`; the microblog's browser-mode site file did not exist yet): board lists and "
                "replies loaded as JSON, ten replies a page under the thread's one URL")
        w("## 6. Pages drawn by JavaScript (S4)")
        w("")
        w(f"Discover + download of {what}. Protocol mode reads the JSON endpoints directly (`{site}.xml`); browser mode "
          f"renders every page in headless Chromium and fires the site file's events (`{bsite}.xml`); the Selenium peer "
          "(`bench/peers/selenium_timelines.py`, Debian's chromedriver and Chromium, images refused) loads the list pages "
          "luntan's browser-mode discover read, runs the same `<browser>` actions (scroll until no new item, click until the "
          "link is gone), waits for quiet (no XHR in flight, the DOM unchanged for the site file's "
          f"settle-ms = {j.get('settle_ms')} ms) and saves `page_source` after every event. Everyone runs with no delay, no "
          f"robots.txt and {j.get('concurrency')} requests in flight (luntan's tabs are bounded by the site's concurrency; "
          f"the peer runs {j.get('concurrency')} drivers in threads). Pages are the thread pages saved (protocol mode: JSON "
          "responses; browser mode: the DOM states kept after S4's duplicate test; the peer: every state); posts are the posts "
          "and comments stored (luntan: `<post>`s in the extracted thread XML; the peer: distinct matches of the site file's "
          "post selector over a thread's states), the work all three have in common.")
        w("")
        w("CPU is user + system time of the whole process tree: luntan and Chromium's browser, zygote, renderer, GPU and "
          "utility processes (the peer: Python, chromedriver and its Chromiums), counted by a reaper that is the tree's child "
          "subreaper and waits for every descendant (`run.py --reap`). Peak memory is the largest sum of the tree's RSS, "
          "sampled every 50 ms; shared pages (Chromium's code, shared memory) count once per process, so the PSS peak, which "
          "splits them, is given too. Figures are per run (discover and download added; peaks the larger of the two), "
          "medians over the runs.")
        w("")
        w("| mode | site file | pages | posts | wall | pages/s | posts/s | CPU ms/page | CPU ms/post | peak MB | peak MB/page | runs |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for name, file, xs in rows:
            pg, po = med(xs, "pages"), med(xs, "posts")
            w(f"| {name} | {file} | {ni(pg)} | {ni(po)} | {f(med(xs, 'wall'), 2, ' s')} | "
              f"{f(med(xs, 'pages_per_s'))} | {f(med(xs, 'posts_per_s'))} | {f(med(xs, 'cpu_ms_per_page'))} | {f(med(xs, 'cpu_ms_per_post'), 2)} | "
              f"{f(med(xs, 'rss_mb'), 0)} | {f(med(xs, 'mb_per_page'), 2)} | {spread(xs, 'posts_per_s')} |")
        w("")
        w("| mode | boards read | threads | list pages | peak PSS MB | peak anonymous MB | processes at peak | CPU seen by wait4 alone | CPU seen in /proc | server CPU ms/page |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, _, xs in rows:
            cpu = med(xs, "cpu")
            share = ratio(med(xs, "cpu_wait4"), cpu)
            seen = ratio(med(xs, "cpu_proc"), cpu)
            sv = ratio(med(xs, "server_cpu"), med(xs, "pages"))
            w(f"| {name} | {ni(med(xs, 'boards'))} | {ni(med(xs, 'threads'))} | {ni(med(xs, 'list_pages'))} | {f(med(xs, 'pss_mb'), 0)} | "
              f"{f(med(xs, 'anon_mb'), 0)} | {ni(med(xs, 'procs'))} | {f(100 * share if share is not None else None, 0, '%')} | "
              f"{f(100 * seen if seen is not None else None, 0, '%')} | {f(1000 * sv if sv is not None else None, 2)} |")
        w("")
        w("\"CPU seen by wait4 alone\" is the share of the tree's CPU that `wait4` on the top process reports (it counts only the "
          "descendants each parent waited for); \"seen in /proc\" adds each process's own CPU as last sampled (a lower bound: "
          "the last 50 ms of each process and processes shorter than a sample are missed).")
        groups = ["luntan", "Python", "chromedriver", "Chromium browser", "renderer", "gpu-process", "utility", "zygote", "other"]

        def group(kind):
            if kind.startswith("luntan-"):
                return "luntan"
            if kind.startswith("python"):
                return "Python"
            if kind == "chromium":
                return "Chromium browser"
            if kind.startswith("chromium "):
                t = kind.split(" ", 1)[1]
                return t if t in groups else "other"
            return kind if kind in groups else "other"

        split = []
        for name, _, xs in rows:
            runs = [x for x in xs if x.get("cpu_by_kind")]
            if not runs:
                continue
            by = {g: [] for g in groups}
            for x in runs:
                tot = {g: 0.0 for g in groups}
                for k, v in x["cpu_by_kind"].items():
                    tot[group(k)] += v
                for g in groups:
                    by[g].append(tot[g])
            split.append((name, {g: median(v) for g, v in by.items()}))
        if split:
            used = [g for g in groups if any(v[g] for _, v in split)]
            w("")
            w("Where the CPU went, in seconds per run (each process's own CPU as sampled in `/proc`, by program and Chromium process type):")
            w("")
            w("| mode | " + " | ".join(used) + " |")
            w("|---|" + "---:|" * len(used))
            for name, v in split:
                w(f"| {name} | " + " | ".join(f(v[g], 2) for g in used) + " |")
        bx, px = j.get("browser", []), j.get("peer", [])
        notes = []
        if bx and bx[0].get("discover"):
            notes.append(f"Wall time: browser mode's discover took {f(median([x['discover']['wall'] for x in bx]), 2)} s (the home page and "
                         f"the list pages, its own Chromium start included) and its download {f(median([x['download']['wall'] for x in bx]), 2)} s; "
                         f"it kept {ni(med(bx, 'states_kept'))} states and dropped {ni(med(bx, 'states_dropped'))} as duplicates.")
        ph = [x["phases"] for x in px if x.get("phases")]
        if ph and ph[0].get("start_secs") is not None:
            notes.append("The Selenium peer took " + ", ".join(f"{f(median([p[k] for p in ph]), 2)} s {what}" for k, what in (
                ("start_secs", "starting its drivers"), ("list_secs", "on list pages"), ("thread_secs", "on thread pages"),
                ("quit_secs", "closing them"))) + ".")

        def reparented(x):
            kinds = list(x.get("orphan_kinds") or []) + [k for st in ("discover", "download") for k in (x.get(st) or {}).get("orphan_kinds", [])]
            counts = {}
            for k in kinds:
                counts[k] = counts.get(k, 0) + 1
            return ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"

        if bx or px:
            notes.append("Processes reparented to the reaper in the first run (their parent exited without waiting for them, so "
                         "`wait4` on the top process never counts their CPU): " + "; ".join(
                             f"{name}: {reparented(xs[0])}" for name, _, xs in rows[1:] if xs) + ".")
        if notes:
            w("")
            w(" ".join(notes))
        pr, br, sr = (med(j.get(k, []), "posts_per_s") for k in ("protocol", "browser", "peer"))
        pc, bc, sc = (med(j.get(k, []), "cpu_ms_per_post") for k in ("protocol", "browser", "peer"))
        r_pb, r_bs = ratio(pr, br), ratio(br, sr)
        c_pb, c_bs = ratio(bc, pc), ratio(sc, bc)
        bpeak = med(j.get("browser", []), "rss_mb")
        w("")
        def less(r):
            if r is None:
                return "–"
            return f"{f(r, 2)}× less" if r >= 1 else f"{f(1 / r, 2)}× more"

        w("| goal | measured (posts/s) | CPU per post | |")
        w("|---|---:|---:|---|")
        w(f"| protocol mode ≥ 20× browser mode | **{f(r_pb)}×** | {less(c_pb)} | goal {'met' if r_pb and r_pb >= 20 else '**missed**' if r_pb else '–'} |")
        w(f"| browser mode ≥ 2× the Selenium peer | **{f(r_bs, 2)}×** | {less(c_bs)} | goal {'met' if r_bs and r_bs >= 2 else '**missed**' if r_bs else '–'} |")
        w(f"| browser mode peak memory reported | {f(bpeak, 0, ' MB')} summed RSS, {f(med(j.get('browser', []), 'pss_mb'), 0, ' MB')} PSS | | "
          f"{'reported' if bpeak else '–'} |")
        w("")
        summary.append(("S4 protocol mode ≥ 20× browser mode (posts/s)", f"{f(r_pb)}×", r_pb and r_pb >= 20))
        summary.append(("S4 browser mode ≥ 2× the Selenium peer (posts/s)", f"{f(r_bs, 2)}×", r_bs and r_bs >= 2))

    u = s.get("updates")
    if u and u.get("rounds"):
        rs = u["rounds"]
        m_ = lambda key, sub: median([x[key][sub] for x in rs])  # noqa: E731
        w("## 7. A watched forum's rounds: updates and unchanged pages")
        w("")
        w(f"A Discuz!/GBK forum of {n(u['threads'])} threads whose pages carry ETags, crawled whole; then a round with "
          "nothing new, `luntan-discover --all-boards` asking with the validators the forum gave (`If-None-Match`) against "
          f"the same round without them; then one new reply to each of {n(u['replies'])} threads (1 %), discover, and "
          "`luntan-download` of the re-queued threads from their last stored page on, against a whole re-download of the "
          "same threads (their rows stripped of their last download). Requests and bytes (bodies after decompression) "
          f"from luntan's request log; medians of {len(rs)} rounds.")
        w("")
        w("| round | requests | kB received | answered 304 |")
        w("|---|---:|---:|---:|")
        w(f"| nothing new, with validators | {ni(m_('nothing_new_with', 'requests'))} | {f(m_('nothing_new_with', 'bytes') / 1e3)} | {ni(m_('nothing_new_with', 'not_modified'))} |")
        w(f"| nothing new, without | {ni(m_('nothing_new_without', 'requests'))} | {f(m_('nothing_new_without', 'bytes') / 1e3)} | – |")
        w(f"| re-queued threads, from their last page | {ni(m_('update', 'requests'))} | {f(m_('update', 'bytes') / 1e3)} | – |")
        w(f"| the same threads downloaded whole | {ni(m_('whole', 'requests'))} | {f(m_('whole', 'bytes') / 1e3)} | – |")
        w("")
        queued = median([x["queued"] for x in rs])
        long_ = median([x["long_threads"] for x in rs])
        lu, lw = median([x["long_update"] for x in rs]), median([x["long_whole"] for x in rs])
        w(f"{ni(queued)} threads re-queued. The forum is served with `--long-threads` (one thread in five up to 12 pages); "
          f"the {ni(long_)} re-queued threads of 5 pages or more took {ni(lu)} requests from their last page on, against "
          f"{ni(lw)} downloaded whole.")
        w("")
        b_ratio = ratio(m_("nothing_new_with", "bytes"), m_("nothing_new_without", "bytes"), 3)
        r_ratio = ratio(lu, lw, 2)
        w("| goal | measured | |")
        w("|---|---:|---|")
        w(f"| a round with nothing new: bytes ≤ 10 % of a round without validators | {f(b_ratio * 100 if b_ratio is not None else None, 1, ' %')} | {met(b_ratio is not None and b_ratio <= 0.10)} |")
        w(f"| an update round: requests ≤ 1/5 of a whole re-download, threads of ≥ 5 pages | {f(r_ratio, 2)}× | {met(r_ratio is not None and r_ratio <= 0.2)} |")
        w("")
        summary.append(("Nothing new: bytes with validators ≤ 10 % of without", f(b_ratio * 100 if b_ratio is not None else None, 1, " %"), b_ratio is not None and b_ratio <= 0.10))
        summary.append(("Update round: requests ≤ 1/5 of a whole re-download (threads of ≥ 5 pages)", f"{f(r_ratio, 2)}×", r_ratio is not None and r_ratio <= 0.2))

    # --- several download workers on one PostgreSQL crawl state ---------------
    wk = s.get("workers")
    if wk and wk.get("summary"):
        render_workers(wk, w, summary)

    # --- summary and analysis -------------------------------------------------
    if summary:
        w("## Goals")
        w("")
        w("| goal | measured | |")
        w("|---|---:|---|")
        for g, v, ok in summary:
            w(f"| {g} | {v} | {met(ok)} |")
        w("")
    analysis = BENCH / "analysis.md"
    if analysis.exists():
        w(analysis.read_text().rstrip())
        w("")
    if q and q.get("per_query"):
        w("## Appendix: per query")
        w("")
        if any(v.get("lucene_ms") for v in q["per_query"].values()):
            w("| query | luntan hits | Whoosh hits | Lucene hits | luntan ms (median) | Whoosh ms (median) | Lucene ms (median) | Lucene warm ms (median) |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|")
            for text, v in q["per_query"].items():
                w(f"| `{text}` | {n(v['luntan_hits'])} | {n(v['whoosh_hits'])} | {n(v.get('lucene_hits'))} | {f(median(v['luntan_ms']), 2)} | "
                  f"{f(median(v['whoosh_ms']), 2)} | {f(median(v['lucene_ms']), 2)} | {f(median(v.get('lucene_warm_ms') or []), 2)} |")
        else:
            w("| query | luntan hits | Whoosh hits | luntan ms (median) | Whoosh ms (median) |")
            w("|---|---:|---:|---:|---:|")
            for text, v in q["per_query"].items():
                w(f"| `{text}` | {n(v['luntan_hits'])} | {n(v['whoosh_hits'])} | {f(median(v['luntan_ms']), 2)} | {f(median(v['whoosh_ms']), 2)} |")
        w("")
    for sec_name, err in (res.get("errors") or {}).items():
        w(f"Section {sec_name} failed in this run: `{err}`.")
        w("")
    w(f"Raw samples: `bench/results/` (the JSON file of this run).")
    w("")
    return "\n".join(L)


def render_workers(wk, w, summary):
    """The workers section (bench/run.py section_workers): a table per worker
    count from the medians of its rounds, politeness from the gaps pooled
    over rounds and forums, the goals."""
    sm = {int(k): v for k, v in wk["summary"].items()}  # JSON keys are strings
    counts = sorted(sm)
    delay, forums, ideal = wk["delay_ms"], wk["forums"], wk["ideal_rate"]
    cores = wk.get("cores") or 2
    args = " ".join(wk.get("worker_args") or [])
    runs = wk.get("runs") or []
    pg = wk.get("pg_settings") or {}

    def label(nw):
        return f"{nw}, `{args}`" if args else f"{nw}"

    w("## 8. Several download workers on one PostgreSQL crawl")
    w("")
    w(f"{forums} fixture servers (one process each, the Discuz!-style forum of the polite section, {n(wk.get('threads_per_forum'))} "
      f"threads each), each site file `delay-ms=\"{delay}\" concurrency=\"1\"`, robots.txt on: {ideal:.0f} requests/s in "
      "aggregate is the ideal, whatever the number of workers. The crawl state is one PostgreSQL database "
      f"(PostgreSQL {wk.get('postgres', '?')}, `max_connections` {wk.get('max_connections', '?')}, `shared_buffers` "
      f"{pg.get('shared_buffers', '?')}, fsync {pg.get('fsync', '?')}, data on {wk.get('pg_data_fs', '?')}); discover ran once, "
      "not measured. Before each round every thread goes back to discovered, `gates`, `gate_slots` and `data/pages` are "
      f"emptied; then W `luntan-download --data DIR --state postgres://… -q{' ' + args if args else ''}` processes start at "
      f"once and the wall time runs from the first start to the last exit. W = {', '.join(map(str, counts))} alternate round "
      f"by round. Requests are counted in the servers' request logs (a marker request to every server before each round "
      "splits them): thread pages, the deleted threads' 404s and one robots.txt per forum for each worker that worked on "
      f"it; the rate is (requests − {forums}) / wall, as in the polite section. PostgreSQL's CPU is the utime + stime "
      "(+ cutime + cstime, where exited backends' CPU lands) of the server's postmaster and all its children, read from "
      "`/proc` around each round; its share is of the CPU the round used in all (workers + PostgreSQL + the "
      f"{forums} fixture servers) and of the machine ({cores} cores × wall); transactions come from `pg_stat_database`. "
      "Medians of the rounds; a round in which a worker exited non-zero is left out of them.")
    w("")
    ok_runs = [x for x in runs if not x.get("errors")]
    checked = [x for x in ok_runs if x.get("all_saved_once")]
    if runs:
        x0 = ok_runs[0] if ok_runs else runs[0]
        reasons = "; ".join(f"{k}: {v}" for k, v in (x0.get("fail_reasons") or {}).items())
        if ok_runs and len(checked) == len(ok_runs):
            w(f"Every round was checked: each thread ended saved ({n(x0.get('saved'))}) or failed ({reasons or n(x0.get('failed'))}), "
              "none was left discovered or leased, and the workers' summed saved and "
              "failed counts equal the rows, so each thread was done by one worker.")
        else:
            w(f"**{len(ok_runs) - len(checked)} of {len(ok_runs)} rounds failed the check** that every thread ends saved or "
              "failed, none leased, and the workers' summed counts equal the rows.")
        failed = len(runs) - len(ok_runs)
        if failed:
            errs = [e for x in runs for e in (x.get("errors") or [])][:2]
            w(f" {failed} round(s) had a worker exit non-zero (left out): " + "; ".join(f"`{e[:200]}`" for e in errs) + ".")
        w("")
    w(f"| workers | requests per round | aggregate rate | share of ideal | wall | PostgreSQL CPU | PostgreSQL CPU per 1,000 requests | "
      f"share of the round's CPU | share of {cores} cores × wall | transactions per request | workers CPU | fixtures CPU | connections | runs |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")

    def pct(x, digits=1):
        return "–" if x is None else f"{100 * x:.{digits}f}%"

    def secs(x, digits=2):
        return "–" if x is None else f"{x:.{digits}f} s"

    for nw in counts:
        x = sm[nw]
        if not x.get("rounds"):
            w(f"| {label(nw)} | – | – | – | – | – | – | – | – | – | – | – | {ni(x.get('peak_connections'))} | "
              f"0 of {x.get('failed_rounds', 0)} rounds ran |")
            continue
        shares = ", ".join(f"{100 * v:.1f}" for v in sorted(x.get("shares") or []))
        w(f"| {label(nw)} | {ni(x.get('requests'))} | {f(x.get('rate'))} requests/s | **{pct(x.get('share'))}** | {secs(x.get('wall'), 1)} | "
          f"{secs(x.get('pg_cpu'))} | {secs(x.get('pg_per_1000'))} | {pct(x.get('pg_share_cpu'))} | {pct(x.get('pg_share_machine'))} | "
          f"{f(x.get('pg_xacts_per_request'))} | {secs(x.get('workers_cpu'))} | {secs(x.get('fixtures_cpu'))} | "
          f"{ni(x.get('peak_connections'))} | {shares}%{'; ' + str(x['failed_rounds']) + ' failed' if x.get('failed_rounds') else ''} |")
    w("")
    w("Politeness as the forums saw it: the gaps between request starts at each forum (all requests of a round), pooled over "
      "the rounds and forums, and the same gaps in luntan's own request log (`LUNTAN_REQUEST_LOG`: when each worker's gate "
      "let the request go; all workers write to one file):")
    w("")
    w(f"| workers | gaps | median | p5 | min | under {delay} ms | under {delay - 5} ms | luntan's log: median / min / under {delay} ms / under {delay - 5} ms |")
    w("|---:|---:|---:|---:|---:|---:|---:|---|")
    for nw in counts:
        g, c = sm[nw].get("gaps") or {}, sm[nw].get("client_gaps") or {}
        if not g:
            continue
        under = f"{n(g['under'])} ({100 * g['under'] / g['n']:.1f}%)" if g.get("n") else "–"
        client = (f"{c['median']:.1f} / {c['min']:.1f} ms / {n(c['under'])} / {n(c['under_5ms'])}" if c else "–")
        w(f"| {label(nw)} | {n(g['n'])} | {g['median']:.1f} ms | {g['p5']:.1f} ms | {g['min']:.1f} ms | {under} | {n(g['under_5ms'])} | {client} |")
    w("")
    goal_n = 4 if 4 in sm else counts[-1]
    share = sm[goal_n].get("share")
    g = sm[goal_n].get("gaps") or {}
    once = bool(ok_runs) and len(checked) == len(ok_runs)
    x0 = checked[0] if checked else None
    w("| goal | measured | |")
    w("|---|---:|---|")
    w(f"| ≥ 90% of the ideal at {goal_n} workers | **{pct(share)}** | {met(share is not None and share >= 0.9)} |")
    w(f"| each thread done by one worker | " + (f"{n(x0['saved'])} saved + {n(x0['failed'])} failed = the rows, in all {len(checked)} rounds"
                                              if once else f"{len(checked)} of {len(ok_runs)} rounds") + f" | {met(once)} |")
    if g:
        w(f"| politeness for all workers together | median gap {g['median']:.1f} ms; {n(g['under_5ms'])} of {n(g['n'])} gaps under "
          f"{delay - 5} ms at {goal_n} workers, the shortest {g['min']:.1f} ms | reported |")
    w("")
    summary.append((f"Workers: ≥ 90% of the ideal at {goal_n} workers", pct(share), share is not None and share >= 0.9))
    summary.append(("Workers: each thread done by one worker", f"{len(checked)} of {len(runs)} rounds", once))
