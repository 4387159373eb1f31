#!/usr/bin/env python3
"""luntan's benchmarks against what users would pick instead, and against
the limit of this machine, measured in one run, in alternation, as ratios.

Run by `make bench` (bench/bench.sh builds everything first). Sections:

  download  luntan-download vs a Scrapy spider (same thread pages, same
            concurrency, politeness off, pages saved by both); the limit: wrk
            fetching the same page URLs from the same fixture server.
  polite    20 fixture forums at 5 requests/s each: luntan's aggregate rate
            as a share of the ideal 100 requests/s.
  extract   luntan-extract vs lxml + charset detection writing the same XML,
            in MB of HTML per CPU-second; the floor: encoding_rs decode +
            html5ever tokenizer over the same bytes.
  index     luntan-index vs Whoosh + jieba's ChineseAnalyzer and vs Lucene +
            SmartChineseAnalyzer (Debian's Lucene 8 jars, a Java peer) on the
            same XML; the limit: jieba-rs segmentation alone of the same text.
  search    luntan-search over 8 indexes vs Whoosh and Lucene over the same
            threads, query latency (median, p95) and start-up, on
            bench/queries.txt.
  workers   several luntan-download workers on one PostgreSQL crawl state
            (16 fixture forums at 5 requests/s each, 1, 2 and 4 workers in
            alternation): aggregate rate as a share of the ideal 80
            requests/s, PostgreSQL's CPU, politeness as the servers saw it.
            Needs PostgreSQL (BENCH_PG); not in the default list.
  s4        pages drawn by JavaScript: luntan's protocol mode (the JSON read
            directly) vs its browser mode (Chromium) vs a Python Selenium
            peer (Debian's chromedriver) scrolling the same timelines and
            clicking through the same comments; discover + download, CPU
            and memory of the whole process tree (see run_tree).

Every sample records wall time, CPU time (user + sys) and peak RSS of the
process (wait4's rusage); s4's of the whole process tree (run_tree).
Results go to bench/results/<scale>-<date>.json and are rendered into
BENCHMARKS.md (full scale) or bench/work/BENCHMARKS.<scale>.md.

Settings (environment):
  BENCH_SCALE        full (default: 50,000 threads) or small (3,000 threads)
  BENCH_THREADS      threads in the download/extract/index forum
  BENCH_ROUNDS       rounds of luntan and of each limit (default 3)
  BENCH_PEER_ROUNDS  rounds of each slow Python peer (default 1 full, 3 small);
                     each peer run sits between two luntan runs
  BENCH_LUCENE_ROUNDS  index rounds of the Lucene peer (default BENCH_ROUNDS)
  BENCH_LUCENE_WARM  search: passes the Lucene peer's JVM runs after its
                     measured one; the last is reported as warm (default 9)
  BENCH_JVM_OPTS     extra java options for the Lucene peer (default: none,
                     the JVM's own heap sizing), e.g. "-Xmx1g"
  BENCH_CONCURRENCY  requests in flight for download, Scrapy and wrk (16)
  BENCH_DIR          work directory (default /dev/shm/luntan-bench: tmpfs,
                     so fsync is free and the disk is not what is measured)
  BENCH_SECTIONS     comma-separated subset of the sections above
  BENCH_S4_CONCURRENCY  requests in flight / tabs / Selenium drivers in s4
                     (default: the browser-mode site file's concurrency)
  BENCH_S4_SITE      mb (the microblog, default) or xhr (the XHR forum)
  BENCH_UPDATE_THREADS  threads of the updates section's forum (10,000 / 2,000)
  BENCH_PG           workers section: a PostgreSQL URL to an existing database
                     of a role that may create databases (default
                     postgres://postgres@127.0.0.1:5432/postgres); the section
                     creates and drops its own database, luntan_bench_workers
  BENCH_WORKER_COUNTS  workers section: worker counts, alternated (1,2,4)
  BENCH_WORKER_ARGS  workers section: extra luntan-download flags, e.g.
                     "--claim-batch 16 --lease-secs 20" (default: none)
  BENCH_KEEP         1: leave BENCH_DIR in place afterwards
  BENCH_OUT          where to write the Markdown report
"""
import datetime
import json
import os
import platform
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
# bench.sh builds with cargo, which honours CARGO_TARGET_DIR; so does this.
BIN = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve() / "release"
FLOOR = BENCH / "work" / "target" / "release" / "luntan-bench-floor"
PY = Path(sys.executable)
PEERS = BENCH / "peers"
# The Lucene peer (bench/peers/lucene/LucenePeer.java), compiled by bench.sh
# into LUCENE_DIR/classes; LUCENE_DIR/classpath lists Debian's Lucene jars.
LUCENE_DIR = BENCH / "work" / "lucene"
JAVA = shutil.which("java") or "java"
JVM_OPTS = os.environ.get("BENCH_JVM_OPTS", "").split()

SCALE = os.environ.get("BENCH_SCALE", "full")
if SCALE not in ("full", "small"):
    sys.exit(f"BENCH_SCALE must be full or small, not {SCALE!r}")
FULL = SCALE == "full"
THREADS = int(os.environ.get("BENCH_THREADS", 50_000 if FULL else 3_000))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 3))
PEER_ROUNDS = min(ROUNDS, int(os.environ.get("BENCH_PEER_ROUNDS", 1 if FULL else 3)))
LUCENE_ROUNDS = min(ROUNDS, int(os.environ.get("BENCH_LUCENE_ROUNDS", ROUNDS)))
# After its measured pass over the queries, the Lucene peer's JVM runs them
# this many times more and reports the last pass too (warm: JIT-compiled).
LUCENE_WARM = int(os.environ.get("BENCH_LUCENE_WARM", 9))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", 16))
WRK_SECS = 10 if FULL else 5
# The watched forum of the updates section (issue 13): crawled whole each round.
UPDATE_THREADS = int(os.environ.get("BENCH_UPDATE_THREADS", 10_000 if FULL else 2_000))
POLITE_FORUMS = 20
POLITE_DELAY_MS = 200
POLITE_THREADS = 100 if FULL else 25
# Several download workers on one PostgreSQL crawl state (workers section).
WORKERS_FORUMS = 16
WORKER_COUNTS = [int(x) for x in os.environ.get("BENCH_WORKER_COUNTS", "1,2,4").split(",") if x.strip()]
WORKER_ARGS = os.environ.get("BENCH_WORKER_ARGS", "").split()
PG_ADMIN = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432/postgres")
WORKERS_DB = "luntan_bench_workers"
BOARDS = 8  # the search section makes one forum of each board
S4_PROTOCOL_REPEATS = 5  # protocol-mode runs per s4 round (each about 0.1 s)
WRITER_MB = 128
LIMIT = 10
WORK = Path(os.environ.get("BENCH_DIR", "/dev/shm/luntan-bench"))
SECTIONS = [s.strip() for s in os.environ.get("BENCH_SECTIONS", "download,polite,extract,durability,index,search,s4,updates").split(",") if s.strip()]
KEEP = os.environ.get("BENCH_KEEP") == "1"

STARTED = time.time()
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def log(msg):
    el = time.time() - STARTED
    print(f"[{int(el // 60):3d}:{int(el % 60):02d}] {msg}", flush=True)


# --- processes -----------------------------------------------------------------

class Ran:
    """One finished process: wall seconds, CPU seconds, peak RSS (MB), output."""

    def __init__(self, cmd, wall, user, sys_, maxrss_kb, rc, out, err, anon_kb=None, file_kb=None):
        self.cmd, self.wall, self.user, self.sys, self.rc = cmd, wall, user, sys_, rc
        # Peaks sampled from /proc every 50 ms: anonymous memory (heap) and
        # mapped files (tantivy mmaps its segments; on tmpfs those pages are
        # shared memory), which ru_maxrss adds together.
        self.anon_mb = anon_kb / 1024 if anon_kb is not None else None
        self.file_mb = file_kb / 1024 if file_kb is not None else None
        self.cpu = user + sys_
        self.rss_mb = maxrss_kb / 1024
        self.out, self.err = out, err

    def sample(self, **extra):
        d = {"wall": self.wall, "cpu": self.cpu, "user": self.user, "sys": self.sys, "rss_mb": self.rss_mb,
             "anon_mb": self.anon_mb, "file_mb": self.file_mb}
        d.update(extra)
        return d


def run(cmd, cwd=None, env=None, check=True, quiet_err=False):
    """Runs cmd to completion; rusage from wait4 (this process only, plus any
    children it waited for)."""
    cmd = [str(c) for c in cmd]
    out_path = WORK / ".out"
    err_path = WORK / ".err"
    rss_path = WORK / ".rss"
    # Peak RSS through GNU time: Linux records the pre-exec memory image's
    # high-water mark in the child's ru_maxrss, so a child forked from this
    # (large) driver would report at least the driver's RSS; a child of the
    # small `time` process does not.
    if TIME:
        rss_path.unlink(missing_ok=True)
        cmd = [TIME, "-f", "%M", "-o", str(rss_path), "--", *cmd]
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        peaks = {"anon": None, "file": None}
        done = threading.Event()

        def sample():
            status_file = f"/proc/{p.pid}/status"
            while not done.is_set():
                try:
                    text = Path(status_file).read_text()
                except OSError:
                    break
                kb = {k: int(v) for k, v in re.findall(r"^(RssAnon|RssFile|RssShmem):\s+(\d+)", text, re.M)}
                if kb:
                    anon, mapped = kb.get("RssAnon", 0), kb.get("RssFile", 0) + kb.get("RssShmem", 0)
                    peaks["anon"] = max(peaks["anon"] or 0, anon)
                    peaks["file"] = max(peaks["file"] or 0, mapped)
                done.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        p.returncode = os.waitstatus_to_exitcode(status)
    o = out_path.read_text(errors="replace")
    e = err_path.read_text(errors="replace")
    maxrss = ru.ru_maxrss
    if TIME:
        try:
            maxrss = int(rss_path.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        cmd = cmd[5:]
    r = Ran(cmd, wall, ru.ru_utime, ru.ru_stime, maxrss, p.returncode, o, e, peaks["anon"], peaks["file"])
    if check and r.rc != 0:
        sys.exit(f"failed ({r.rc}): {' '.join(cmd)}\n{o[-3000:]}\n{e[-3000:]}")
    return r


def proc_cpu(pid):
    """CPU seconds (user + sys) a running process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def pg_postmaster(admin_url):
    """The pid of the PostgreSQL server behind admin_url (its data
    directory's postmaster.pid; needs a superuser and this host)."""
    data_dir = psql(admin_url, "SHOW data_directory")[0]
    return int(Path(data_dir, "postmaster.pid").read_text().split()[0])


def pg_cpu(postmaster):
    """CPU seconds used by one PostgreSQL server so far: utime + stime of
    its postmaster and of every process it started (background processes,
    live backends), plus their cutime + cstime, where the CPU of backends
    that have exited lands once the postmaster has reaped them. The
    difference of two readings counts a connection's whole CPU whether it
    outlived the interval or not (and every database's connections: the
    server's other users count too)."""
    tck = os.sysconf("SC_CLK_TCK")
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            f = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
            if int(d) != postmaster and int(f[1]) != postmaster:
                continue
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        except (OSError, IndexError, ValueError):
            continue
    return total / tck


def pg_backends(db):
    """PostgreSQL backends connected to db now, counted from their process
    titles in /proc (no query, so no backend of its own)."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            title = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith("postgres: ") and f" {db} " in title:
            n += 1
    return n


class PeakSampler:
    """The largest value of f() sampled every `every` seconds, in a thread."""

    def __init__(self, f, every=0.1):
        self.f, self.every, self.peak = f, every, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.done.is_set():
            self.peak = max(self.peak, self.f())
            self.done.wait(self.every)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def client_gaps(path, delay_ms):
    """Gaps (ms) between the starts of consecutive requests to one site in
    luntan's request log (LUNTAN_REQUEST_LOG; all workers of a round append
    to one file; unix_us, so processes compare), pooled over the sites."""
    by_site = {}
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.strip():
            rec = json.loads(line)
            by_site.setdefault(rec["site"], []).append(rec["unix_us"] / 1000)
    gaps = []
    for starts in by_site.values():
        starts.sort()
        gaps += [round(b - a, 3) for a, b in zip(starts, starts[1:])]
    return gaps


def gap_stats(gaps, delay_ms):
    """Median, p5, minimum of gaps (ms), and how many fell under the delay
    and under the delay less 5 ms."""
    g = sorted(gaps)
    if not g:
        return {}
    return dict(n=len(g), median=median(g), p5=g[int(round(0.05 * (len(g) - 1)))], min=g[0],
                under=sum(1 for v in g if v < delay_ms), under_5ms=sum(1 for v in g if v < delay_ms - 5))


def pg_url(db):
    """PG_ADMIN with its database replaced by db."""
    base, _, _ = PG_ADMIN.partition("?")
    return base.rsplit("/", 1)[0] + "/" + db


def psql(url, sql):
    """Runs sql through psql (unaligned, tuples only); its output lines."""
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"psql {url}: {sql[:200]}: {r.stderr.strip()}")
    return r.stdout.splitlines()


def run_many(cmds, cwd=None, env=None):
    """Starts every command at once and waits for all: one Ran each (wait4
    rusage, peak RSS through GNU time as in run()), the wall time from the
    first start to the last exit, and the first start (perf_counter)."""
    procs = []
    t0 = time.perf_counter()
    for i, cmd in enumerate(cmds):
        cmd = [str(c) for c in cmd]
        rss_path = WORK / f".rss-{i}"
        rss_path.unlink(missing_ok=True)
        full = [TIME, "-f", "%M", "-o", str(rss_path), "--", *cmd] if TIME else cmd
        out = open(WORK / f".out-{i}", "wb")
        err = open(WORK / f".err-{i}", "wb")
        start = time.perf_counter()
        p = subprocess.Popen(full, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        procs.append({"cmd": cmd, "p": p, "start": start, "out": out, "err": err, "rss": rss_path})

    def wait(pr):
        _, status, ru = os.wait4(pr["p"].pid, 0)
        pr["end"] = time.perf_counter()
        pr["status"], pr["ru"] = status, ru

    waiters = [threading.Thread(target=wait, args=(pr,)) for pr in procs]
    for w in waiters:
        w.start()
    for w in waiters:
        w.join()
    wall = max(pr["end"] for pr in procs) - t0
    rans = []
    for i, pr in enumerate(procs):
        pr["out"].close()
        pr["err"].close()
        pr["p"].returncode = os.waitstatus_to_exitcode(pr["status"])
        maxrss = pr["ru"].ru_maxrss
        try:
            maxrss = int(pr["rss"].read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        o = (WORK / f".out-{i}").read_text(errors="replace")
        e = (WORK / f".err-{i}").read_text(errors="replace")
        r = Ran(pr["cmd"], pr["end"] - pr["start"], pr["ru"].ru_utime, pr["ru"].ru_stime, maxrss, pr["p"].returncode, o, e)
        r.start_offset = pr["start"] - t0
        rans.append(r)
    return rans, wall, t0


# --- process trees (S4: Chromium's processes) ------------------------------------
#
# A browser-mode run is a tree: luntan (or Python + chromedriver), Chromium's
# browser process, its zygotes, renderers, GPU and utility processes, some
# of them grandchildren and some outliving their parent. wait4 on the top
# process counts only the descendants each parent waited for, so every tree
# run goes through a small reaper (`run.py --reap`): it makes itself the
# child subreaper (prctl PR_SET_CHILD_SUBREAPER), so an orphan is reparented
# to it instead of to init, and waits for every descendant; its
# RUSAGE_CHILDREN is then the CPU of the whole tree. The driver meanwhile
# samples the tree in /proc every 50 ms for memory (summed RSS, summed
# anonymous RSS, and every 0.5 s summed PSS) and, as a check of the reaper,
# for each process's own CPU as last seen.

REAP_GRACE_SECS = 20  # how long descendants may outlive the top process before they are killed
PR_SET_CHILD_SUBREAPER = 36


def reap_main(argv):
    """run.py --reap RESULT_JSON -- CMD…: runs CMD as the subreaper of its
    whole tree; writes wall time (until CMD exits), CMD's own wait4 rusage
    and the tree's (RUSAGE_CHILDREN once every descendant is reaped)."""
    import ctypes
    import resource

    out, cmd = argv[0], argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    # The top process's own max RSS through GNU time: a child forked from
    # this Python process would count its pre-exec image (see run()).
    rss_path = Path(out + ".rss")
    rss_path.unlink(missing_ok=True)
    if TIME:
        cmd = [TIME, "-f", "%M", "-o", str(rss_path), "--", *cmd]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    try:
        top_kb = int(rss_path.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        top_kb = None
    orphans = killed = 0
    deadline = time.monotonic() + REAP_GRACE_SECS
    while True:
        try:
            pid, _, _ = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            orphans += 1
            continue
        if time.monotonic() > deadline:
            for k in children_of(os.getpid()):
                try:
                    os.kill(k, signal.SIGKILL)
                    killed += 1
                except OSError:
                    pass
        time.sleep(0.02)
    tree = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(out).write_text(json.dumps({
        "rc": p.returncode, "wall": wall, "subreaper": subreaper, "orphans": orphans, "killed": killed,
        "main_user": ru.ru_utime, "main_sys": ru.ru_stime, "tree_user": tree.ru_utime, "tree_sys": tree.ru_stime,
        "tree_maxrss_kb": tree.ru_maxrss, "top_maxrss_kb": top_kb,
    }))
    sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)


def children_of(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                kids += [int(k) for k in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return kids


class TreeSampler:
    """Every process below `root` (not root itself), found by listing /proc
    and following parent ids; each pid is classified once."""

    PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, root):
        self.root = root
        self.inside = {root}
        self.outside = set()
        self.cpu = {}  # pid -> CPU seconds as last seen
        self.kind = {}  # pid -> what it is (program, Chromium's --type)
        self.peak_kb = self.peak_anon_kb = self.peak_pss_kb = 0
        self.peak_by_kind = {}  # kind -> MB, in the sample of the peak
        self.peak_procs = 0
        self.samples = self.pss_samples = 0
        self.first_child = None
        self.orphans = {}  # pid -> kind: processes reparented to the reaper

    @staticmethod
    def stat(pid):
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        # state ppid … utime(11) stime(12) … rss(21), counted from the field after the name
        return int(f[1]), int(f[11]) + int(f[12]), int(f[21])

    @staticmethod
    def kind_of(pid):
        """The program's name, with Chromium's --type (zygote, renderer,
        gpu-process, utility); Chromium rewrites its argv as one string."""
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
        except OSError:
            return "?"
        if not argv:
            return "?"
        name = os.path.basename(argv[0])
        if name.startswith("python") and len(argv) > 1:
            name = "python " + os.path.basename(argv[1])
        for a in argv[1:]:
            if a.startswith("--type="):
                return f"{name} {a[7:]}"
        return name

    def sample(self):
        pids = [int(x) for x in os.listdir("/proc") if x.isdigit()]
        stats = {}
        new = [p for p in pids if p not in self.inside and p not in self.outside]
        for p in new:
            s = self.stat(p)
            if s:
                stats[p] = s
        # Classify the new pids: inside if their parent is (parents first).
        changed = True
        while changed:
            changed = False
            for p in new:
                if p in stats and p not in self.inside and stats[p][0] in self.inside:
                    self.inside.add(p)
                    changed = True
        for p in new:
            if p in stats and p not in self.inside:
                self.outside.add(p)
        rss = anon = procs = 0
        by_kind = {}
        mine = [p for p in pids if p in self.inside and p != self.root]
        # PSS (smaps_rollup walks the page tables: dearer) every 10th sample.
        pss_now = self.samples % 10 == 0 or (self.pss_samples == 0 and mine)
        pss = 0
        for p in mine:
            s = stats.get(p) or self.stat(p)
            if not s:
                continue
            if p not in self.kind or pss_now:  # a shell script or Python exec's its program: look again now and then
                k = self.kind_of(p)
                if k != "?" or p not in self.kind:  # a zombie's cmdline is empty: keep what it was
                    self.kind[p] = k
            if s[0] == self.root:
                if self.first_child is None:
                    self.first_child = p
                elif p != self.first_child:
                    self.orphans[p] = self.kind[p]
            if self.kind[p] == "time":  # GNU time in the reaper: not part of what is measured
                continue
            procs += 1
            self.cpu[p] = s[1] / self.TICK
            kb = s[2] * self.PAGE_KB
            rss += kb
            by_kind[self.kind[p]] = by_kind.get(self.kind[p], 0) + kb
            try:
                statm = Path(f"/proc/{p}/statm").read_text().split()
                anon += (int(statm[1]) - int(statm[2])) * self.PAGE_KB
            except (OSError, IndexError, ValueError):
                pass
            if pss_now:
                try:
                    m = re.search(r"^Pss:\s+(\d+)", Path(f"/proc/{p}/smaps_rollup").read_text(), re.M)
                    pss += int(m.group(1)) if m else 0
                except OSError:
                    pass
        self.samples += 1
        if rss > self.peak_kb:
            self.peak_kb = rss
            self.peak_by_kind = {k: v / 1024 for k, v in by_kind.items()}
        self.peak_anon_kb = max(self.peak_anon_kb, anon)
        if pss_now and mine:
            self.pss_samples += 1
            self.peak_pss_kb = max(self.peak_pss_kb, pss)
        self.peak_procs = max(self.peak_procs, procs)

    def cpu_by_kind(self):
        out = {}
        for p, c in self.cpu.items():
            k = self.kind.get(p, "?")
            out[k] = out.get(k, 0) + c
        return out


class TreeRan:
    """One finished process tree: wall seconds (the top process), CPU seconds
    of the whole tree, peak summed RSS (MB), output."""

    def __init__(self, cmd, res, sampler, out, err):
        self.cmd, self.out, self.err, self.rc = cmd, out, err, res["rc"]
        self.wall = res["wall"]
        self.user, self.sys = res["tree_user"], res["tree_sys"]
        self.cpu = self.user + self.sys
        self.cpu_wait4 = res["main_user"] + res["main_sys"]  # what wait4 on the top process alone reports
        self.cpu_proc = sum(sampler.cpu.values())  # each process's own CPU as last seen in /proc (a lower bound)
        # A run shorter than a few samples may be missed by them; the top
        # process's own peak (GNU time in the reaper) is a floor.
        top_kb = res.get("top_maxrss_kb") or 0
        self.rss_mb = max(sampler.peak_kb, top_kb) / 1024
        self.anon_mb = sampler.peak_anon_kb / 1024
        self.pss_mb = sampler.peak_pss_kb / 1024 if sampler.pss_samples else None
        self.top_rss_mb = top_kb / 1024 if top_kb else None
        self.cpu_by_kind = sampler.cpu_by_kind()
        self.rss_by_kind = sampler.peak_by_kind
        self.orphan_kinds = sorted(sampler.orphans.values())
        self.procs = sampler.peak_procs
        self.orphans, self.killed, self.subreaper = res["orphans"], res["killed"], res["subreaper"]

    def sample(self, **extra):
        d = {"wall": self.wall, "cpu": self.cpu, "user": self.user, "sys": self.sys, "cpu_wait4": self.cpu_wait4,
             "cpu_proc": self.cpu_proc, "rss_mb": self.rss_mb, "anon_mb": self.anon_mb, "pss_mb": self.pss_mb,
             "procs": self.procs, "orphans": self.orphans, "killed": self.killed, "subreaper": self.subreaper, "top_rss_mb": self.top_rss_mb,
             "cpu_by_kind": self.cpu_by_kind, "rss_by_kind": self.rss_by_kind, "orphan_kinds": self.orphan_kinds}
        d.update(extra)
        return d


def run_tree(cmd, cwd=None, env=None, check=True):
    """Runs cmd under the reaper; CPU of every descendant, memory of the tree."""
    cmd = [str(c) for c in cmd]
    out_path, err_path, res_path = WORK / ".out", WORK / ".err", WORK / ".tree.json"
    res_path.unlink(missing_ok=True)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen([str(PY), str(Path(__file__).resolve()), "--reap", str(res_path), "--", *cmd],
                             cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        sampler = TreeSampler(p.pid)
        done = threading.Event()

        def sample():
            t0 = time.monotonic()
            while not done.is_set():
                try:
                    sampler.sample()
                except Exception:  # noqa: BLE001 - a process vanishing mid-read is expected
                    pass
                # Every 10 ms in the first second (a protocol-mode run is over in less), then every 50 ms.
                done.wait(0.01 if time.monotonic() - t0 < 1 else 0.05)

        t = threading.Thread(target=sample, daemon=True)
        t.start()
        p.wait()
        done.set()
        t.join()
    o = out_path.read_text(errors="replace")
    e = err_path.read_text(errors="replace")
    try:
        res = json.loads(res_path.read_text())
    except (OSError, ValueError):
        sys.exit(f"the reaper wrote no result ({p.returncode}): {' '.join(cmd)}\n{e[-3000:]}")
    r = TreeRan(cmd, res, sampler, o, e)
    if not r.subreaper:
        log("  warning: prctl(PR_SET_CHILD_SUBREAPER) failed: the CPU of orphaned descendants is not counted")
    if check and r.rc != 0:
        sys.exit(f"failed ({r.rc}): {' '.join(cmd)}\n{o[-3000:]}\n{e[-3000:]}")
    return r


class Fixture:
    """A luntan-fixture server on a free loopback port."""

    def __init__(self, name, args, sites_out=None, request_log=None):
        self.dir = WORK / "fixtures"
        self.dir.mkdir(parents=True, exist_ok=True)
        cmd = [BIN / "luntan-fixture", "serve", "--addr", "127.0.0.1:0", *args]
        if sites_out:
            cmd += ["--sites-out", sites_out]
        if request_log:
            cmd += ["--request-log", request_log]
        self.out = open(self.dir / f"{name}.out", "w+")
        self.err = open(self.dir / f"{name}.err", "w")
        self.proc = subprocess.Popen([str(c) for c in cmd], stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline:
            self.out.seek(0)
            m = re.search(r"^listening on (http://\S+)", self.out.read(), re.M)
            if m:
                self.base = m.group(1)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        sys.exit(f"luntan-fixture {name} did not start: {(self.dir / f'{name}.err').read_text()[-2000:]}")

    def cpu(self):
        return proc_cpu(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        self.err.close()


# --- helpers -------------------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else None


def p95(xs):
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def fresh(path):
    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def copy_db(src, data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        d = data_dir / f"luntan.db{suffix}"
        if d.exists():
            d.unlink()
        s = Path(f"{src}{suffix}")
        if s.exists():
            shutil.copyfile(s, d)


def set_politeness(site_file, politeness, new_id=None):
    text = site_file.read_text()
    text, n = re.subn(r"<politeness [^>]*/>", politeness, text)
    assert n == 1, f"{site_file}: no <politeness>"
    if new_id:
        text = re.sub(r'<site id="[^"]*">', f'<site id="{new_id}">', text, count=1)
    site_file.write_text(text)


def mb_or(x):
    return "–" if x is None else f"{x:.0f} MB"


def polite_forum(root, data, section, sid, started):
    """One fixture forum of the polite and workers sections: served alone
    with its request log, its site file at POLITE_DELAY_MS and concurrency
    1, renamed `sid`, in data/sites. `started(sid, fixture)` is called as
    soon as the server runs, so the caller stops it whatever follows."""
    out = root / f"sites-{sid}"
    f = Fixture(f"{section}-{sid}", ["--threads", POLITE_THREADS, "--boards", 2, "--forums", "dz"], sites_out=out,
                request_log=root / f"requests-{sid}.jsonl")
    started(sid, f)
    set_politeness(out / "dz.xml", f'<politeness delay-ms="{POLITE_DELAY_MS}" concurrency="1"/>', new_id=sid)
    shutil.copyfile(out / "dz.xml", data / "sites" / f"{sid}.xml")


def wrk_page_script(db_path, lua):
    """Writes `lua`, a wrk script cycling through the page URLs of every
    thread a download saved (its database at `db_path`), each asked with
    `Accept-Encoding: gzip` as luntan asks; the URL list goes beside it.
    Returns how many URLs."""
    paths = []
    with sqlite3.connect(db_path) as db:
        for url, pages in db.execute("select url, pages from threads where state = 1 order by rowid"):
            path = "/" + url.split("/", 3)[3]
            paths += [path] + [f"{path}&page={p}" for p in range(2, (pages or 1) + 1)]
    urls = Path(lua).with_suffix(".txt")
    urls.write_text("".join(p + "\n" for p in paths))
    Path(lua).write_text(
        f'local paths = {{}}\nfor line in io.lines("{urls}") do paths[#paths + 1] = line end\n'
        "local i = 0\nrequest = function()\n  i = i % #paths + 1\n"
        '  return wrk.format("GET", paths[i], {["Accept-Encoding"] = "gzip"})\nend\n'
    )
    return len(paths)


def set_attrs(site_file, tag, attrs):
    """Sets attributes of the site file's one <tag …/> (added when absent)."""
    text = site_file.read_text()
    m = re.search(rf"<{tag}\b[^>]*/>", text)
    assert m, f"{site_file}: no <{tag}/>"
    el = m.group(0)
    for k, v in attrs.items():
        if re.search(rf'\s{k}="[^"]*"', el):
            el = re.sub(rf'(\s){k}="[^"]*"', rf'\g<1>{k}="{v}"', el)
        else:
            el = el[:-2].rstrip() + f' {k}="{v}"/>'
    site_file.write_text(text[:m.start()] + el + text[m.end():])


def files_under(root, pattern):
    return sorted(str(p) for p in Path(root).rglob(pattern))


def total_bytes(paths):
    return sum(os.path.getsize(p) for p in paths)


def lucene_cmd(*args):
    """The command line of the Lucene peer (None if bench.sh did not build it)."""
    classes, cp = LUCENE_DIR / "classes", LUCENE_DIR / "classpath"
    if not (classes / "LucenePeer.class").exists() or not cp.exists():
        return None
    return [JAVA, *JVM_OPTS, "-cp", f"{classes}:{cp.read_text().strip()}", "LucenePeer", *args]


def dir_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def alternate(rounds, peer_rounds, luntan, peer=None, limits=()):
    """L P X… L X… : luntan every round, the peer only in the first
    peer_rounds rounds (so each peer run sits between two luntan runs),
    each limit every round."""
    for r in range(rounds):
        luntan(r)
        if peer and r < peer_rounds:
            peer(r)
        for lim in limits:
            lim(r)


# --- machine -------------------------------------------------------------------

def machine():
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
    git_env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")

    def git(*a):
        try:
            return subprocess.run(["git", *a], cwd=ROOT, env=git_env, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    dirty = git("diff", "--stat", "HEAD", "--", "crates", "src", "Cargo.toml", "Cargo.lock").splitlines()

    def version(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            return "?"

    def pyver(pkg):
        try:
            from importlib.metadata import version as v
            return v(pkg)
        except Exception:  # noqa: BLE001
            return "?"

    lucene = lucene_cmd("version")
    return {
        "cores": os.cpu_count(),
        "mem_gib": round(mem_kb / 1024 / 1024, 1),
        "cpu": cpu.group(1).strip() if cpu else platform.processor(),
        "kernel": platform.release(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted": dirty[-1].strip() if dirty else "",
        "rustc": version(["rustc", "--version"]),
        "python": platform.python_version(),
        "wrk": version(["wrk", "-v"]) if shutil.which("wrk") else "?",
        "peers": {p: pyver(p) for p in ("scrapy", "whoosh", "jieba", "lxml", "cssselect", "charset-normalizer", "selenium")},
        "chromium": version(["/usr/lib/chromium/chromium", "--version"]) if os.access("/usr/lib/chromium/chromium", os.X_OK) else version(["chromium", "--version"]),
        "chromedriver": version(["chromedriver", "--version"]) if shutil.which("chromedriver") else "?",
        # Lucene.Version.LATEST and the JVM as the peer reports them; Debian's
        # package version beside (its jar files are named 8.7.0 whatever it holds).
        "lucene": version(lucene) if lucene else "?",
        "lucene_deb": version(["dpkg-query", "-W", "-f=liblucene8-java ${Version}", "liblucene8-java"]) if shutil.which("dpkg-query") else "?",
        "jvm_opts": " ".join(JVM_OPTS),
        "work_dir": str(WORK),
        "work_fs": subprocess.run(["df", "--output=fstype", str(WORK)], capture_output=True, text=True).stdout.split()[-1],
        "load_at_start": os.getloadavg(),
    }


# --- sections ------------------------------------------------------------------

class Bench:
    def __init__(self):
        WORK.mkdir(parents=True, exist_ok=True)
        self.results = {"scale": SCALE, "threads": THREADS, "rounds": ROUNDS, "peer_rounds": PEER_ROUNDS,
                        "concurrency": CONCURRENCY, "machine": machine(), "sections": {},
                        "rss_method": "gnu-time" if TIME else "wait4"}
        self.dz = None  # the 50k-thread forum server
        self.discovered_db = WORK / "discovered.db"
        self.dl_dir = None  # a data dir with every thread downloaded
        self.ex_dir = None  # … and extracted

    # The forum everything but the polite crawl works on.
    def setup_forum(self):
        if self.dz:
            return
        log(f"fixture: Discuz!/GBK forum, {THREADS} threads, {BOARDS} boards")
        sites = fresh(WORK / "sites-dz")
        self.dz = Fixture("dz", ["--threads", THREADS, "--boards", BOARDS, "--forums", "dz"], sites_out=sites)
        # Politeness off: no delay, no robots.txt, CONCURRENCY requests in flight.
        set_politeness(sites / "dz.xml", f'<politeness delay-ms="0" concurrency="{CONCURRENCY}" robots="false"/>')
        data = fresh(WORK / "discover")
        shutil.copytree(sites, data / "sites")
        r = run([BIN / "luntan-discover", "--data", data, "-q"])
        copy_db(data / "luntan.db", WORK)
        (WORK / "luntan.db").rename(self.discovered_db)
        with sqlite3.connect(self.discovered_db) as db:
            self.thread_urls = [u for (u,) in db.execute("select url from threads where state = 0 order by rowid")]
        (WORK / "threads.txt").write_text("".join(u + "\n" for u in self.thread_urls))
        log(f"  discovered {len(self.thread_urls)} threads in {r.wall:.1f}s")
        self.results["discover"] = {"threads": len(self.thread_urls), "wall": r.wall}

    def luntan_download(self, data):
        fresh(data)
        shutil.copytree(WORK / "sites-dz", data / "sites")
        copy_db(self.discovered_db, data)
        cpu0 = self.dz.cpu()
        r = run([BIN / "luntan-download", "--data", data, "-q"])
        server_cpu = self.dz.cpu() - cpu0
        m = re.search(r"download: (\d+) saved, (\d+) failed, (\d+) left, (\d+) pages, ([\d.]+) MB", r.out)
        if not m:
            sys.exit(f"unexpected luntan-download output: {r.out}")
        saved, failed, _, pages, mb = int(m[1]), int(m[2]), int(m[3]), int(m[4]), float(m[5])
        return r, dict(saved=saved, failed=failed, pages=pages, mb=mb, server_cpu=server_cpu)

    def downloaded_db(self):
        """A copy of the database with every thread saved (state 1)."""
        downloaded = WORK / "downloaded.db"
        if not downloaded.exists():
            copy_db(self.dl_dir / "luntan.db", WORK / "tmp-db")
            (WORK / "tmp-db" / "luntan.db").rename(downloaded)
        return downloaded

    def ensure_downloaded(self):
        """A data dir with every thread saved (the extract and index input)."""
        if self.dl_dir:
            return
        self.setup_forum()
        self.dl_dir = WORK / "dl-luntan"
        log("download (unmeasured): luntan-download")
        self.luntan_download(self.dl_dir)

    def section_download(self):
        self.setup_forum()
        sec = self.results["sections"].setdefault("download", {"luntan": [], "peer": [], "limit": []})
        sec["threads"] = len(self.thread_urls)
        wrk_lua = WORK / "wrk-urls.lua"
        data = WORK / "dl-luntan"

        def luntan(r):
            log(f"download round {r + 1}: luntan-download, concurrency {CONCURRENCY}")
            ran, d = self.luntan_download(data)
            rate = d["pages"] / ran.wall
            sec["luntan"].append(ran.sample(rate=rate, **d))
            log(f"  {d['pages']} pages in {ran.wall:.1f}s = {rate:.0f} pages/s (cpu {ran.cpu:.1f}s, server cpu {d['server_cpu']:.1f}s, rss {ran.rss_mb:.0f} MB)")
            if r == 0:
                # The page URLs luntan fetched, for wrk.
                sec["wrk_urls"] = wrk_page_script(data / "luntan.db", wrk_lua)

        def scrapy(r):
            out = fresh(WORK / "dl-scrapy")
            log(f"download round {r + 1}: Scrapy, CONCURRENT_REQUESTS {CONCURRENCY}")
            cpu0 = self.dz.cpu()
            ran = run([PY, PEERS / "scrapy_download.py", WORK / "threads.txt", out, CONCURRENCY])
            server_cpu = self.dz.cpu() - cpu0
            j = json.loads(ran.out.strip().splitlines()[-1])
            saved = sum(1 for _ in out.iterdir())
            rate = j["pages"] / ran.wall
            sec["peer"].append(ran.sample(rate=rate, pages=j["pages"], files=saved, mb=j["bytes"] / 1e6, failed=j["failed"], server_cpu=server_cpu))
            log(f"  {j['pages']} pages in {ran.wall:.1f}s = {rate:.0f} pages/s (cpu {ran.cpu:.1f}s, server cpu {server_cpu:.1f}s, rss {ran.rss_mb:.0f} MB)")
            shutil.rmtree(out)

        def wrk(r):
            log(f"download round {r + 1}: wrk, {CONCURRENCY} connections, {WRK_SECS}s")
            cpu0 = self.dz.cpu()
            ran = run(["wrk", "-t1", f"-c{CONCURRENCY}", f"-d{WRK_SECS}s", "-s", wrk_lua, self.dz.base], cwd=WORK)
            server_cpu = self.dz.cpu() - cpu0
            rate = float(re.search(r"Requests/sec:\s+([\d.]+)", ran.out).group(1))
            reqs = int(re.search(r"(\d+) requests in", ran.out).group(1))
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", ran.out)
            sec["limit"].append(ran.sample(rate=rate, requests=reqs, non2xx=int(non2xx.group(1)) if non2xx else 0, server_cpu=server_cpu))
            log(f"  {rate:.0f} requests/s (server cpu {server_cpu:.1f}s, wrk cpu {ran.cpu:.1f}s)")

        alternate(ROUNDS, PEER_ROUNDS, luntan, scrapy, [wrk])
        self.dl_dir = data

    def section_polite(self):
        sec = self.results["sections"].setdefault("polite", {"luntan": []})
        root = fresh(WORK / "polite")
        data = root / "data"
        (data / "sites").mkdir(parents=True)
        servers = []
        log(f"polite: {POLITE_FORUMS} fixture forums, {POLITE_THREADS} threads each, delay-ms={POLITE_DELAY_MS} concurrency=1")
        try:
            for k in range(POLITE_FORUMS):
                polite_forum(root, data, "polite", f"p{k + 1:02d}", lambda sid, f: servers.append(f))
            r = run([BIN / "luntan-discover", "--data", data, "-q"])
            log(f"  discover (polite, not measured): {r.wall:.1f}s")
            template = root / "discovered.db"
            shutil.copyfile(data / "luntan.db", template)
            with sqlite3.connect(template) as db:
                sec["threads"] = db.execute("select count(*) from threads").fetchone()[0]
            marks = []
            for rnd in range(ROUNDS):
                copy_db(template, data)
                shutil.rmtree(data / "pages", ignore_errors=True)
                t0 = time.time()
                ran = run([BIN / "luntan-download", "--data", data, "-q"])
                marks.append((t0, time.time()))
                m = re.search(r"download: (\d+) saved, (\d+) failed, (\d+) left, (\d+) pages", ran.out)
                pages = int(m[4])
                per_forum = pages / POLITE_FORUMS
                ideal = per_forum * POLITE_DELAY_MS / 1000  # seconds, at 5 requests/s per forum
                # Requests: every thread page, and one robots.txt per forum.
                # n requests spaced by the delay span n - 1 delays, so the
                # rate counts the requests after each forum's first.
                requests = pages + POLITE_FORUMS
                rate = (requests - POLITE_FORUMS) / ran.wall
                sec["luntan"].append(ran.sample(rate=rate, pages=pages, requests=requests, saved=int(m[1]), failed=int(m[2]), ideal_secs=ideal,
                                                share=rate / (POLITE_FORUMS * 1000 / POLITE_DELAY_MS)))
                log(f"  round {rnd + 1}: {requests} requests in {ran.wall:.1f}s = {rate:.1f} requests/s "
                    f"({100 * rate / (POLITE_FORUMS * 1000 / POLITE_DELAY_MS):.1f}% of ideal; cpu {ran.cpu:.1f}s, rss {ran.rss_mb:.0f} MB)")
        finally:
            for f in servers:
                f.stop()
        # Pacing as the servers saw it. Every run (discover, then each
        # download round) starts with a robots.txt request at every forum;
        # within a run, the gaps between thread-page request starts, and the
        # run's steady rate (first to last thread-page request).
        gaps, steady = [], []
        for k in range(POLITE_FORUMS):
            recs = [json.loads(line) for line in (root / f"requests-p{k + 1:02d}.jsonl").read_text().splitlines() if line.strip()]
            recs.sort(key=lambda rec: rec["start_us"])
            runs, cur = [], None
            for rec in recs:
                if rec.get("path") == "/robots.txt":
                    cur = []
                    runs.append(cur)
                elif cur is not None and "viewthread" in rec.get("path", ""):
                    cur.append(rec["start_us"] / 1e6)
            for rd in runs[-ROUNDS:]:
                gaps += [b - a for a, b in zip(rd, rd[1:])]
                if len(rd) > 1:
                    steady.append((len(rd) - 1) / (rd[-1] - rd[0]))
        too_close = [g for g in gaps if g < POLITE_DELAY_MS / 1000]
        sec["gaps"] = len(gaps)
        sec["gaps_under_delay"] = len(too_close)
        sec["gap_min_ms"] = 1000 * min(gaps) if gaps else None
        sec["gap_median_ms"] = 1000 * median(gaps) if gaps else None
        sec["gap_p95_ms"] = 1000 * p95(gaps) if gaps else None
        sec["steady_rate_per_forum"] = median(steady) if steady else None
        sec["forums"] = POLITE_FORUMS
        sec["delay_ms"] = POLITE_DELAY_MS
        shutil.rmtree(data / "pages", ignore_errors=True)

    def section_workers(self):
        """Several luntan-download workers on one PostgreSQL crawl state:
        WORKERS_FORUMS fixture forums at one request per POLITE_DELAY_MS
        each; 1, 2, 4 workers (WORKER_COUNTS) in alternation over ROUNDS
        rounds, every round from the same discovered state."""
        sec = self.results["sections"].setdefault("workers", {"runs": []})
        root = fresh(WORK / "workers")
        data = root / "data"
        (data / "sites").mkdir(parents=True)
        url = pg_url(WORKERS_DB)
        forums = WORKERS_FORUMS
        ideal = forums * 1000 / POLITE_DELAY_MS
        sec.update(forums=forums, delay_ms=POLITE_DELAY_MS, threads_per_forum=POLITE_THREADS, worker_counts=WORKER_COUNTS,
                   worker_args=WORKER_ARGS, ideal_rate=ideal, cores=os.cpu_count(),
                   postgres=(psql(PG_ADMIN, "SHOW server_version") or ["?"])[0])
        log(f"workers: {forums} fixture forums, {POLITE_THREADS} threads each, delay-ms={POLITE_DELAY_MS} concurrency=1; "
            f"{'/'.join(map(str, WORKER_COUNTS))} luntan-download workers on {pg_url(WORKERS_DB)} (PostgreSQL {sec['postgres']}), "
            f"{ROUNDS} rounds{'; flags ' + ' '.join(WORKER_ARGS) if WORKER_ARGS else ''}")
        psql(PG_ADMIN, f"DROP DATABASE IF EXISTS {WORKERS_DB}")
        psql(PG_ADMIN, f"CREATE DATABASE {WORKERS_DB}")
        postmaster = pg_postmaster(PG_ADMIN)
        sec["max_connections"] = int(psql(PG_ADMIN, "SHOW max_connections")[0])
        sec["pg_data_fs"] = subprocess.run(["df", "--output=fstype", psql(PG_ADMIN, "SHOW data_directory")[0]],
                                           capture_output=True, text=True).stdout.split()[-1]
        sec["pg_settings"] = {k: psql(PG_ADMIN, f"SHOW {k}")[0] for k in ("shared_buffers", "fsync", "synchronous_commit", "port")}
        servers = []
        # Before each round a marker request goes to every forum, so that the
        # servers' request logs split into rounds; its driver time (the middle
        # of its round trip) against its server time maps one clock onto the
        # other to within a millisecond or so.
        marks = []  # per round: {sid: driver perf_counter time of its marker}

        def mark(i):
            m = {}
            for sid, f in servers:
                a = time.perf_counter()
                try:
                    urllib.request.urlopen(f"{f.base.rstrip('/')}/__bench-round-{i}", timeout=10).read()
                except urllib.error.HTTPError:
                    pass
                m[sid] = (a + time.perf_counter()) / 2
            marks.append(m)

        order = [w for _ in range(ROUNDS) for w in WORKER_COUNTS]
        t0s = []
        try:
            for k in range(forums):
                polite_forum(root, data, "workers", f"w{k + 1:02d}", lambda sid, f: servers.append((sid, f)))
            r = run([BIN / "luntan-discover", "--data", data, "--state", url, "-q"])
            total = int(psql(url, "SELECT count(*) FROM threads")[0])
            sec["threads"] = total
            log(f"  discover (not measured): {total} threads in {r.wall:.1f}s")
            for i, nw in enumerate(order):
                psql(url, "UPDATE threads SET state = 0, save_date = NULL, pages = NULL, content_type = NULL, fail_stage = NULL, "
                          "fail_reason = NULL, attempts = 0, lease_owner = NULL, lease_until = NULL; "
                          "DELETE FROM gate_slots; DELETE FROM gates;")
                shutil.rmtree(data / "pages", ignore_errors=True)
                xacts = f"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{WORKERS_DB}'"
                x0 = int(psql(PG_ADMIN, xacts)[0])
                mark(i)
                time.sleep(0.3)  # the reset's backend exits and is reaped
                pg0, fx0 = pg_cpu(postmaster), sum(f.cpu() for _, f in servers)
                cmd = [BIN / "luntan-download", "--data", data, "--state", url, *WORKER_ARGS, "-q"]
                # luntan's own request log (every worker appends to it): when
                # the gate let each request go, as the workers saw it.
                client_log = root / f"client-{i + 1}.jsonl"
                env = dict(os.environ, LUNTAN_REQUEST_LOG=str(client_log))
                conns = PeakSampler(lambda: pg_backends(WORKERS_DB))
                try:
                    rans, wall, t0 = run_many([cmd] * nw, env=env)
                finally:
                    peak_conns = conns.stop()
                t0s.append(t0)
                time.sleep(0.3)  # the workers' backends exit and are reaped
                pg, fx = pg_cpu(postmaster) - pg0, sum(f.cpu() for _, f in servers) - fx0
                # Transactions on the crawl's database in the round (the
                # workers' backends have exited, so their counts are in).
                pg_xacts = int(psql(PG_ADMIN, xacts)[0]) - x0
                workers, errors = [], []
                for ran in rans:
                    m = re.search(r"download: (\d+) saved, (\d+) failed, (\d+) left, (\d+) pages", ran.out)
                    w = dict(wall=ran.wall, start=ran.start_offset, cpu=ran.cpu, rss_mb=ran.rss_mb, rc=ran.rc)
                    if m:
                        w.update(saved=int(m[1]), failed=int(m[2]), left=int(m[3]), pages=int(m[4]))
                    if ran.rc != 0 or not m:
                        errors.append(f"exit {ran.rc}: " + (ran.err.strip() or ran.out.strip())[-600:])
                    workers.append(w)
                states = {int(a): int(b) for a, b in (line.split("|") for line in psql(url, "SELECT state, count(*) FROM threads GROUP BY state"))}
                leases = int(psql(url, "SELECT count(*) FROM threads WHERE lease_owner IS NOT NULL OR lease_until IS NOT NULL")[0])
                # Every thread ends saved (1) or failed (-1: the fixture's
                # deleted threads answer 404), none left discovered or
                # leased, and the workers' summed counts match the rows:
                # each thread saved (or failed) by exactly one worker.
                saved = sum(w.get("saved", 0) for w in workers)
                failed = sum(w.get("failed", 0) for w in workers)
                reasons = {}  # failure reasons without their URLs ("HTTP 404"), counted
                for line in psql(url, "SELECT fail_reason, count(*) FROM threads WHERE state = -1 GROUP BY 1"):
                    reason, n = line.rsplit("|", 1)
                    reason = re.sub(r"https?://\S+?: ", "", reason)
                    reasons[reason] = reasons.get(reason, 0) + int(n)
                ok = (not errors and set(states) <= {1, -1} and saved == states.get(1, 0) and failed == states.get(-1, 0)
                      and leases == 0)
                wcpu = sum(w["cpu"] for w in workers)
                sample = dict(workers_n=nw, wall=wall, workers=workers, saved=saved, pages=sum(w.get("pages", 0) for w in workers),
                              failed=failed, fail_reasons=reasons, states=states, leases_left=leases, all_saved_once=ok,
                              errors=errors, pg_cpu=pg, pg_xacts=pg_xacts, workers_cpu=wcpu, fixtures_cpu=fx, rss_mb=max(w["rss_mb"] for w in workers),
                              peak_connections=peak_conns, client_gaps=client_gaps(client_log, POLITE_DELAY_MS))
                sec["runs"].append(sample)
                log(f"  round {i + 1} ({nw} worker{'s' if nw > 1 else ''}): {sample['pages']} pages in {wall:.1f}s; saved "
                    f"{'+'.join(str(w.get('saved', '-')) for w in workers)} = {saved}, failed {failed} ({'; '.join(f'{k}: {v}' for k, v in reasons.items())}); "
                    f"rows: {states.get(1, 0)} saved, {states.get(-1, 0)} failed, {states.get(0, 0)} discovered of {total}"
                    f"{'' if ok else '  ** NOT every thread saved or failed exactly once **'}; cpu: workers {wcpu:.2f}s, "
                    f"postgres {pg:.2f}s ({pg_xacts} transactions), fixtures {fx:.2f}s; at most {peak_conns} connections; worker walls {', '.join('%.1f' % w['wall'] for w in workers)}s")
                for e in errors:
                    log(f"    worker failed: {e}")
            mark(len(order))
        finally:
            for _, f in servers:
                f.stop()
            if not KEEP:
                psql(PG_ADMIN, f"DROP DATABASE IF EXISTS {WORKERS_DB}")
        # As the servers saw it: each round's requests, and per forum the
        # gaps between request starts (all requests; and thread pages alone,
        # as the polite section counts them).
        per_round = [dict(requests=0, robots=0, pages=0, other=0, gaps=[], page_gaps=[], first=None, last_end=None) for _ in order]
        for sid, _ in servers:
            recs = [json.loads(line) for line in (root / f"requests-{sid}.jsonl").read_text().splitlines() if line.strip()]
            recs.sort(key=lambda rec: rec["start_us"])
            cur, offset = None, None
            segs = {}
            for rec in recs:
                mm = re.match(r"/__bench-round-(\d+)$", rec.get("path", ""))
                if mm:
                    cur = int(mm[1])
                    offset = marks[cur][sid] - rec["start_us"] / 1e6  # driver time = offset + server time
                    continue
                if cur is not None and cur < len(order):
                    segs.setdefault(cur, ([], offset))[0].append(rec)
            for i, (rs, off) in segs.items():
                pr = per_round[i]
                starts = [rec["start_us"] / 1e6 for rec in rs]
                page_starts = [rec["start_us"] / 1e6 for rec in rs if "viewthread" in rec.get("path", "")]
                pr["requests"] += len(rs)
                pr["robots"] += sum(1 for rec in rs if rec.get("path") == "/robots.txt")
                pr["pages"] += len(page_starts)
                pr["other"] += sum(1 for rec in rs if rec.get("path") != "/robots.txt" and "viewthread" not in rec.get("path", ""))
                pr["gaps"] += [b - a for a, b in zip(starts, starts[1:])]
                pr["page_gaps"] += [b - a for a, b in zip(page_starts, page_starts[1:])]
                if rs:
                    first = off + min(starts) - t0s[i]
                    last = off + max((rec.get("end_us") or rec["start_us"]) for rec in rs) / 1e6 - t0s[i]
                    pr["first"] = first if pr["first"] is None else min(pr["first"], first)
                    pr["last_end"] = last if pr["last_end"] is None else max(pr["last_end"], last)
        for sample, pr in zip(sec["runs"], per_round):
            req = pr["requests"]
            rate = (req - forums) / sample["wall"]
            sample.update(requests=req, robots=pr["robots"], page_requests=pr["pages"], other_requests=pr["other"], rate=rate,
                          share=rate / ideal, page_rate=pr["pages"] / sample["wall"],
                          first_request_s=pr["first"], last_response_s=pr["last_end"],
                          tail_s=None if pr["last_end"] is None else sample["wall"] - pr["last_end"],
                          gaps=[round(1000 * g, 3) for g in pr["gaps"]], page_gaps=[round(1000 * g, 3) for g in pr["page_gaps"]])
            tot_cpu = sample["pg_cpu"] + sample["workers_cpu"] + sample["fixtures_cpu"]
            sample.update(pg_per_1000=1000 * sample["pg_cpu"] / req if req else None,
                          pg_xacts_per_request=sample["pg_xacts"] / req if req else None,
                          pg_us_per_xact=1e6 * sample["pg_cpu"] / sample["pg_xacts"] if sample["pg_xacts"] else None,
                          pg_share_cpu=sample["pg_cpu"] / tot_cpu if tot_cpu else None,
                          pg_share_machine=sample["pg_cpu"] / ((os.cpu_count() or 1) * sample["wall"]))
        # One line per worker count: medians of its rounds, gaps pooled.
        summary = {}
        for nw in WORKER_COUNTS:
            all_runs = [x for x in sec["runs"] if x["workers_n"] == nw]
            runs = [x for x in all_runs if not x["errors"]]
            failed = [x for x in all_runs if x["errors"]]
            summary[nw] = dict(rounds=len(runs), failed_rounds=len(failed), errors=[e for x in failed for e in x["errors"]][:4],
                               peak_connections=max((x["peak_connections"] for x in all_runs), default=None))
            if not runs:
                continue

            def med_(k):
                return median([x[k] for x in runs if x.get(k) is not None])
            summary[nw].update(rate=med_("rate"), share=med_("share"), page_rate=med_("page_rate"), wall=med_("wall"),
                               requests=med_("requests"), robots=med_("robots"), pages=med_("pages"),
                               pg_cpu=med_("pg_cpu"), pg_per_1000=med_("pg_per_1000"), pg_share_cpu=med_("pg_share_cpu"),
                               pg_share_machine=med_("pg_share_machine"), pg_xacts=med_("pg_xacts"),
                               pg_xacts_per_request=med_("pg_xacts_per_request"), pg_us_per_xact=med_("pg_us_per_xact"),
                               workers_cpu=med_("workers_cpu"), fixtures_cpu=med_("fixtures_cpu"),
                               first_request_s=med_("first_request_s"), tail_s=med_("tail_s"), rss_mb=max(x["rss_mb"] for x in runs),
                               all_saved_once=all(x["all_saved_once"] for x in runs), shares=[x["share"] for x in runs],
                               gaps=gap_stats([v for x in runs for v in x["gaps"]], POLITE_DELAY_MS),
                               page_gaps=gap_stats([v for x in runs for v in x["page_gaps"]], POLITE_DELAY_MS),
                               client_gaps=gap_stats([v for x in runs for v in (x["client_gaps"] or [])], POLITE_DELAY_MS))
        sec["summary"] = summary
        log(f"workers: {sec['threads']} threads, ideal {ideal:.0f} requests/s (medians of the rounds; gaps pooled over rounds and forums, ms)")
        log("  W | rounds ok | requests | rate req/s | share (rounds) | wall s | PG cpu s | PG ms/req | PG share of cpu | PG share of 2 cores | "
            "PG transactions per request | workers cpu s | fixtures cpu s | first req s | tail s | peak conns | gaps at servers (median p5 min <200 <195 n) | "
            "gaps thread pages only | gaps at luntan (request log) | saved once")

        def gs(g):
            return f"{g['median']:.1f} {g['p5']:.1f} {g['min']:.1f} {g['under']} {g['under_5ms']} {g['n']}" if g else "–"
        for nw, x in summary.items():
            if not x["rounds"]:
                log(f"  {nw} | 0 of {x['failed_rounds']} | failed: {x['errors'][:1]}")
                continue
            log(f"  {nw} | {x['rounds']} of {x['rounds'] + x['failed_rounds']} | {x['requests']:.0f} | {x['rate']:.1f} | "
                f"{100 * x['share']:.1f}% ({', '.join(f'{100 * v:.1f}' for v in x['shares'])}) | "
                f"{x['wall']:.1f} | {x['pg_cpu']:.2f} | {x['pg_per_1000']:.2f} | {100 * x['pg_share_cpu']:.1f}% | "
                f"{100 * x['pg_share_machine']:.1f}% | {x['pg_xacts_per_request']:.1f} | {x['workers_cpu']:.2f} | {x['fixtures_cpu']:.2f} | {x['first_request_s']:.2f} | "
                f"{x['tail_s']:.2f} | {x['peak_connections']} | {gs(x['gaps'])} | {gs(x['page_gaps'])} | {gs(x['client_gaps'])} | "
                f"{'yes' if x['all_saved_once'] else 'NO'}")
        shutil.rmtree(data / "pages", ignore_errors=True)

    def section_extract(self):
        self.ensure_downloaded()
        data = self.dl_dir
        sec = self.results["sections"].setdefault("extract", {"luntan": [], "peer": [], "limit": [], "dom": []})
        downloaded = self.downloaded_db()
        html = files_under(data / "pages", "article*.html")
        (WORK / "html.txt").write_text("".join(p + "\n" for p in html))
        html_bytes = total_bytes(html)
        sec.update(threads=None, pages=len(html), mb=html_bytes / 1e6)
        site = (WORK / "sites-dz" / "dz.xml").read_text()
        rules = {"title": "#thread_subject", "post": "div[id^=post_]", "body_id": r"postmessage_\d+", "author": "a.xw1",
                 "time": "em[id^=authorposton]", "floor": "a[id^=postnum] em"}
        for k, v in rules.items():  # the site file the fixture wrote says the same
            assert v.replace("&", "&amp;") in site or v in site, f"site file changed: {k}={v}"
        forum = re.search(r"<name>(.*?)</name>", site).group(1)
        manifest = WORK / "extract-manifest.jsonl"
        with sqlite3.connect(downloaded) as db, open(manifest, "w") as f:
            rows = db.execute("select site, board, thread, url, title, save_date, content_type, pages from threads where state = 1 order by rowid").fetchall()
            for site_id, board, thread, url, title, date, ct, pages in rows:
                d = data / "pages" / site_id / f"board{board}" / f"board{board}_{date}"
                pg = [str(d / f"article{thread}.html")] + [str(d / f"article{thread}_p{p}.html") for p in range(2, pages + 1)]
                f.write(json.dumps({"site": site_id, "board": board, "thread": thread, "url": url, "title": title, "save_date": date,
                                    "content_type": ct, "forum": forum, "rules": rules, "pages": pg,
                                    "out": f"pages/{site_id}/board{board}/board{board}_{date}/article{thread}.xml"}, ensure_ascii=False) + "\n")
        sec["threads"] = len(rows)
        mb = html_bytes / 1e6
        peer_out = WORK / "ex-peer"

        def luntan(r):
            for p in (data / "pages").rglob("article*.xml"):
                p.unlink()
            copy_db(downloaded, data)
            log(f"extract round {r + 1}: luntan-extract, {len(rows)} threads, {mb:.0f} MB of GBK HTML")
            ran = run([BIN / "luntan-extract", "--data", data, "--quiet"])
            m = re.search(r"extract: (\d+) extracted, (\d+) failed", ran.out)
            sec["luntan"].append(ran.sample(extracted=int(m[1]), failed=int(m[2]), mb_per_cpu_s=mb / ran.cpu, mb_per_s=mb / ran.wall))
            log(f"  {m[1]} threads in {ran.wall:.1f}s, cpu {ran.cpu:.1f}s = {mb / ran.cpu:.1f} MB per cpu-second (rss {ran.rss_mb:.0f} MB)")

        def peer(r):
            fresh(peer_out)
            log(f"extract round {r + 1}: Python peer (lxml + charset detection)")
            ran = run([PY, PEERS / "extract_lxml.py", manifest, peer_out])
            j = json.loads(ran.out.strip().splitlines()[-1])
            sec["peer"].append(ran.sample(extracted=j["threads"], failed=j["failed"], mb_per_cpu_s=mb / ran.cpu, mb_per_s=mb / ran.wall))
            log(f"  {j['threads']} threads in {ran.wall:.1f}s, cpu {ran.cpu:.1f}s = {mb / ran.cpu:.1f} MB per cpu-second (rss {ran.rss_mb:.0f} MB)")

        def floor(r):
            ran = run([FLOOR, "tokenize", WORK / "html.txt", "gb18030"])
            sec["limit"].append(ran.sample(mb_per_cpu_s=mb / ran.cpu, mb_per_s=mb / ran.wall))
            log(f"extract round {r + 1}: floor (decode + tokenize): {mb / ran.cpu:.1f} MB per cpu-second")

        def dom(r):
            ran = run([FLOOR, "dom", WORK / "html.txt", "gb18030"])
            sec["dom"].append(ran.sample(mb_per_cpu_s=mb / ran.cpu, mb_per_s=mb / ran.wall))
            log(f"extract round {r + 1}: decode + DOM parse: {mb / ran.cpu:.1f} MB per cpu-second")

        alternate(ROUNDS, PEER_ROUNDS, luntan, peer, [floor, dom])
        # Same XML? Compare the peer's files with luntan's, byte for byte.
        same = differ = 0
        examples = []
        for p in peer_out.rglob("article*.xml"):
            mine = data / p.relative_to(peer_out)
            if mine.exists() and mine.read_bytes() == p.read_bytes():
                same += 1
            else:
                differ += 1
                if len(examples) < 5:
                    examples.append(str(p.relative_to(peer_out)))
        sec["xml_identical"] = same
        sec["xml_different"] = differ
        sec["xml_different_examples"] = examples
        log(f"  XML identical for {same} threads, different for {differ}")
        shutil.rmtree(peer_out, ignore_errors=True)
        self.ex_dir = data

    def ensure_extracted(self):
        if self.ex_dir:
            return
        self.ensure_downloaded()
        log("extract (unmeasured): luntan-extract")
        run([BIN / "luntan-extract", "--data", self.dl_dir, "--quiet"])
        self.ex_dir = self.dl_dir

    def section_index(self):
        self.ensure_extracted()
        data = self.ex_dir
        # A rebuild reads only the XML files; without a database no rows move,
        # so every round does the same work.
        db = data / "luntan.db"
        if db.exists():
            for suffix in ("", "-wal", "-shm"):
                p = Path(f"{db}{suffix}")
                if p.exists():
                    p.rename(WORK / f"extracted.db{suffix}")
        xml = files_under(data / "pages", "article*.xml")
        (WORK / "xml.txt").write_text("".join(p + "\n" for p in xml))
        xml_bytes = total_bytes(xml)
        mb = xml_bytes / 1e6
        n = len(xml)
        sec = self.results["sections"].setdefault("index", {"luntan": [], "peer": [], "limit": [], "lucene": []})
        sec.update(threads=n, mb=mb, writer_mb=WRITER_MB)
        idx = WORK / "idx-luntan"
        widx = WORK / "idx-whoosh"
        lidx = WORK / "idx-lucene"
        lucene_ok = lucene_cmd() is not None
        if not lucene_ok:
            log("index: no Lucene peer (bench/work/lucene, built by bench/bench.sh): its rows are left out")

        def luntan(r):
            fresh(idx)
            log(f"index round {r + 1}: luntan-index --rebuild, {n} threads, {mb:.0f} MB of XML, writer {WRITER_MB} MB")
            ran = run([BIN / "luntan-index", "--data", data, "--index-dir", idx, "--rebuild", "--site", "dz", "--writer-mb", WRITER_MB, "-q"])
            m = re.search(r"index: (\d+) indexed, (\d+) failed", ran.out)
            size = dir_bytes(idx)
            sec["luntan"].append(ran.sample(indexed=int(m[1]), failed=int(m[2]), rate=int(m[1]) / ran.wall, mb_per_s=mb / ran.wall,
                                            rate_per_cpu_s=int(m[1]) / ran.cpu, mb_per_cpu_s=mb / ran.cpu, index_mb=size / 1e6))
            log(f"  {m[1]} threads in {ran.wall:.1f}s = {int(m[1]) / ran.wall:.0f} threads/s, {mb / ran.wall:.1f} MB/s (cpu {ran.cpu:.1f}s, rss {ran.rss_mb:.0f} MB)")

        def peer(r):
            fresh(widx)
            log(f"index round {r + 1}: Whoosh + jieba ChineseAnalyzer, limitmb {WRITER_MB}")
            ran = run([PY, PEERS / "whoosh_peer.py", "index", WORK / "xml.txt", widx, WRITER_MB])
            j = json.loads(ran.out.strip().splitlines()[-1])
            size = dir_bytes(widx)
            sec["peer"].append(ran.sample(indexed=j["threads"], rate=j["threads"] / ran.wall, mb_per_s=mb / ran.wall,
                                          rate_per_cpu_s=j["threads"] / ran.cpu, mb_per_cpu_s=mb / ran.cpu, index_mb=size / 1e6))
            log(f"  {j['threads']} threads in {ran.wall:.1f}s = {j['threads'] / ran.wall:.1f} threads/s (cpu {ran.cpu:.1f}s, rss {ran.rss_mb:.0f} MB)")

        def lucene(r):
            if not lucene_ok or r >= LUCENE_ROUNDS:
                return
            fresh(lidx)
            log(f"index round {r + 1}: Lucene + SmartChineseAnalyzer (Java), RAM buffer {WRITER_MB} MB")
            ran = run(lucene_cmd("index", WORK / "xml.txt", lidx, WRITER_MB))
            j = json.loads(ran.out.strip().splitlines()[-1])
            size = dir_bytes(lidx)
            sec["lucene"].append(ran.sample(indexed=j["threads"], rate=j["threads"] / ran.wall, mb_per_s=mb / ran.wall,
                                            rate_per_cpu_s=j["threads"] / ran.cpu, mb_per_cpu_s=mb / ran.cpu, index_mb=size / 1e6,
                                            in_jvm_secs=j["secs"]))
            log(f"  {j['threads']} threads in {ran.wall:.1f}s = {j['threads'] / ran.wall:.0f} threads/s, {mb / ran.cpu:.2f} MB per cpu-second "
                f"(cpu {ran.cpu:.1f}s, rss {ran.rss_mb:.0f} MB, index {size / 1e6:.0f} MB)")

        def jieba(r):
            ran = run([FLOOR, "jieba", WORK / "xml.txt", os.cpu_count() or 1])
            j = json.loads(ran.out.strip().splitlines()[-1])
            sec["limit"].append(ran.sample(rate=j["files"] / j["secs"], mb_per_s=mb / j["secs"], seg_secs=j["secs"],
                                           text_mb=j["text_bytes"] / 1e6, tokens=j["tokens"], seg_threads=j["threads"]))
            log(f"index round {r + 1}: jieba-rs alone, {j['threads']} threads: {j['files'] / j['secs']:.0f} threads/s, {mb / j['secs']:.1f} MB/s")

        alternate(ROUNDS, PEER_ROUNDS, luntan, peer, [lucene, jieba])

    def section_search(self):
        self.ensure_extracted()
        xml_list = WORK / "xml.txt"
        if not xml_list.exists():
            xml = files_under(self.ex_dir / "pages", "article*.xml")
            xml_list.write_text("".join(p + "\n" for p in xml))
        xml = xml_list.read_text().split()
        sec = self.results["sections"].setdefault("search", {"luntan": [], "peer": [], "lucene": [], "lucene_warm": []})
        sec["lucene_warm_passes"] = LUCENE_WARM
        # Eight forums: the threads of each board become one forum (site id
        # f1…f8), so luntan-search opens eight indexes over the same threads.
        sdata = fresh(WORK / "search-data")
        boards = {}
        for p in xml:
            text = Path(p).read_text()
            board = re.search(r'<thread site="[^"]*" board="([^"]*)"', text).group(1)
            k = boards.setdefault(board, len(boards) + 1)
            sid = f"f{k}"
            rel = Path(p).relative_to(self.ex_dir / "pages" / "dz")
            out = sdata / "pages" / sid / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text.replace('<thread site="dz"', f'<thread site="{sid}"', 1))
        sidx = fresh(WORK / "idx-search")
        log(f"search: building {len(boards)} luntan indexes over {len(xml)} threads")
        ran = run([BIN / "luntan-index", "--data", sdata, "--index-dir", sidx, "--rebuild", "--writer-mb", WRITER_MB, "-q"])
        sec["build_wall"] = ran.wall
        sec["indexes"] = len(list(sidx.glob("*.index")))
        sec["threads"] = len(xml)
        widx = WORK / "idx-whoosh"
        if not (widx / "_MAIN_1.toc").exists() and not list(widx.glob("*.toc")):
            log("search: building the Whoosh index (unmeasured)")
            fresh(widx)
            run([PY, PEERS / "whoosh_peer.py", "index", xml_list, widx, WRITER_MB])
        lidx = WORK / "idx-lucene"
        lucene_ok = lucene_cmd() is not None
        if not lucene_ok:
            log("search: no Lucene peer (bench/work/lucene, built by bench/bench.sh): its rows are left out")
        elif not list(lidx.glob("segments_*")):
            log("search: building the Lucene index (unmeasured)")
            fresh(lidx)
            run(lucene_cmd("index", xml_list, lidx, WRITER_MB))
        queries = [q.strip() for q in (BENCH / "queries.txt").read_text().splitlines() if q.strip() and not q.startswith("#")]
        sec["queries"] = len(queries)
        per_query = {q: {"luntan_ms": [], "whoosh_ms": [], "whoosh_search_ms": [], "lucene_ms": [], "lucene_search_ms": [],
                         "lucene_warm_ms": [], "luntan_hits": None, "whoosh_hits": None, "lucene_hits": None} for q in queries}

        def luntan(r):
            log(f"search round {r + 1}: luntan-search, {len(queries)} queries, one process each")
            for q in queries:
                ran = run([BIN / "luntan-search", "--index-dir", sidx, "--limit", LIMIT, "--json", q])
                summary = json.loads(ran.out.strip().splitlines()[-1])
                took, opened = summary["took_ms"], summary["open_ms"]
                sec["luntan"].append(ran.sample(q=q, query_ms=took, open_ms=opened, startup_ms=ran.wall * 1000 - took, hits=summary["total"]))
                per_query[q]["luntan_ms"].append(took)
                per_query[q]["luntan_hits"] = summary["total"]
            got = [s["query_ms"] for s in sec["luntan"][-len(queries):]]
            log(f"  median {median(got):.2f} ms, p95 {p95(got):.2f} ms")

        def whoosh(r):
            log(f"search round {r + 1}: Whoosh, {len(queries)} queries, one process")
            ran = run([PY, PEERS / "whoosh_peer.py", "search", widx, BENCH / "queries.txt", LIMIT])
            j = json.loads(ran.out.strip().splitlines()[-1])
            spent = sum(x["ms"] for x in j["queries"])
            for x in j["queries"]:
                sec["peer"].append({"q": x["q"], "query_ms": x["ms"], "search_only_ms": x["search_ms"], "hits": x["total"], "rss_mb": ran.rss_mb,
                                    "startup_ms": j["startup_ms"], "process_startup_ms": ran.wall * 1000 - spent})
                per_query[x["q"]]["whoosh_ms"].append(x["ms"])
                per_query[x["q"]]["whoosh_search_ms"].append(x["search_ms"])
                per_query[x["q"]]["whoosh_hits"] = x["total"]
            got = [x["ms"] for x in j["queries"]]
            log(f"  median {median(got):.2f} ms, p95 {p95(got):.2f} ms, start-up {ran.wall * 1000 - spent:.0f} ms")

        def lucene(r):
            if not lucene_ok:
                return
            log(f"search round {r + 1}: Lucene, {len(queries)} queries, one JVM (then {LUCENE_WARM} passes more, the last reported as warm)")
            ran = run(lucene_cmd("search", lidx, BENCH / "queries.txt", LIMIT, "--warm", LUCENE_WARM))
            j = json.loads(ran.out.strip().splitlines()[-1])
            spent = j["elapsed_ms"]  # every pass
            for x in j.get("warm", []):
                sec["lucene_warm"].append({"q": x["q"], "query_ms": x["ms"], "search_only_ms": x["search_ms"], "hits": x["total"]})
                per_query[x["q"]]["lucene_warm_ms"].append(x["ms"])
            for x in j["queries"]:
                sec["lucene"].append({"q": x["q"], "query_ms": x["ms"], "search_only_ms": x["search_ms"], "hits": x["total"],
                                      "snippets": x["snippets"], "rss_mb": ran.rss_mb, "cpu": ran.cpu,
                                      "startup_ms": j["startup_ms"], "process_startup_ms": ran.wall * 1000 - spent})
                per_query[x["q"]]["lucene_ms"].append(x["ms"])
                per_query[x["q"]]["lucene_search_ms"].append(x["search_ms"])
                per_query[x["q"]]["lucene_hits"] = x["total"]
            got = [x["ms"] for x in j["queries"]]
            warm = [x["ms"] for x in j.get("warm", [])]
            log(f"  median {median(got):.2f} ms, p95 {p95(got):.2f} ms, start-up {ran.wall * 1000 - spent:.0f} ms (rss {ran.rss_mb:.0f} MB)"
                + (f"; warm: median {median(warm):.2f} ms, p95 {p95(warm):.2f} ms" if warm else ""))

        alternate(ROUNDS, ROUNDS, luntan, whoosh, [lucene])
        sec["per_query"] = per_query

    def section_durability(self):
        """luntan-extract on the real disk vs on tmpfs: what its per-file
        fsync (temp file, fsync, rename, fsync of the directory) costs."""
        self.ensure_downloaded()
        downloaded = self.downloaded_db()
        sec = self.results["sections"].setdefault("durability", {"disk": [], "tmpfs": []})
        n = min(1000, THREADS)
        with sqlite3.connect(downloaded) as db:
            rows = db.execute("select board, thread, save_date, pages from threads where state = 1 order by rowid limit ?", (n,)).fetchall()
        disk_root = BENCH / "work" / "durability"
        places = {"disk": disk_root, "tmpfs": WORK / "durability"}
        sec["threads"] = len(rows)
        sec["disk_fs"] = subprocess.run(["df", "--output=fstype", str(BENCH / "work")], capture_output=True, text=True).stdout.split()[-1]

        def prepare(root):
            data = fresh(root)
            shutil.copytree(WORK / "sites-dz", data / "sites")
            for board, thread, date, pages in rows:
                rel = Path("pages") / "dz" / f"board{board}" / f"board{board}_{date}"
                (data / rel).mkdir(parents=True, exist_ok=True)
                for p in range(1, pages + 1):
                    name = f"article{thread}.html" if p == 1 else f"article{thread}_p{p}.html"
                    shutil.copyfile(self.dl_dir / rel / name, data / rel / name)
            copy_db(downloaded, data)
            with sqlite3.connect(data / "luntan.db") as db:
                db.execute("update threads set state = 0 where state = 1 and rowid not in "
                           "(select rowid from threads where state = 1 order by rowid limit ?)", (n,))
            return data

        try:
            for r in range(2):
                for kind, root in places.items():
                    data = prepare(root)
                    ran = run([BIN / "luntan-extract", "--data", data, "--quiet"])
                    sec[kind].append(ran.sample(rate=len(rows) / ran.wall))
                    log(f"durability round {r + 1}: luntan-extract of {len(rows)} threads on {kind}: {len(rows) / ran.wall:.0f} threads/s")
        finally:
            shutil.rmtree(disk_root, ignore_errors=True)

    def section_updates(self):
        """Issue 13: what a watched forum costs per round. A Discuz!/GBK forum
        (ETags on every page) is crawled whole; then (a) a round with nothing
        new, discover with the validators the forum gave last round against
        the same round without them; (b) 1 % of the threads get one reply
        each (through the fixture's /__fixture/add-replies), and the changed
        threads are downloaded from their last stored page on, against a
        whole re-download of the same threads. Requests and bytes (bodies
        after decompression) come from luntan's own request log."""
        n = max(UPDATE_THREADS // 100, 1)
        sec = self.results["sections"].setdefault("updates", {"threads": UPDATE_THREADS, "replies": n, "rounds": []})
        sites = fresh(WORK / "sites-updates")
        # --long-threads: one thread in five up to 12 pages, for the goal's "threads of ≥ 5 pages".
        fx = Fixture("updates", ["--threads", UPDATE_THREADS, "--boards", BOARDS, "--forums", "dz", "--long-threads"], sites_out=sites)
        try:
            set_politeness(sites / "dz.xml", f'<politeness delay-ms="0" concurrency="{CONCURRENCY}" robots="false"/>')
            for r in range(ROUNDS):
                log(f"updates round {r + 1}: {UPDATE_THREADS} threads crawled whole, then a round with nothing new and {n} new replies")
                sec["rounds"].append(self.updates_round(fx, sites, n, r))
        finally:
            fx.stop()

    def updates_round(self, fx, sites, n, r):
        data = fresh(WORK / "updates")
        shutil.copytree(sites, data / "sites")
        logs = fresh(WORK / "updates-logs")

        def stage(name, *args, db=None):
            path = logs / f"{name}-{len(list(logs.iterdir()))}.jsonl"
            env = dict(os.environ, LUNTAN_REQUEST_LOG=str(path))
            run([BIN / f"luntan-{name}", "--data", db or data, "-q", *args], env=env)
            lines = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
            per_thread = {}
            for l in lines:
                m = re.search(r"[?&]tid=(\d+)", l["url"])
                if m:
                    per_thread[m.group(1)] = per_thread.get(m.group(1), 0) + 1
            return {"requests": len(lines), "bytes": sum(l.get("bytes", 0) for l in lines),
                    "not_modified": sum(1 for l in lines if l["outcome"] == "304"), "per_thread": per_thread}

        stage("discover")
        stage("download")
        out = {}
        out["nothing_new_with"] = stage("discover", "--all-boards")
        with sqlite3.connect(data / "luntan.db") as db:
            db.execute("delete from validators")
        out["nothing_new_without"] = stage("discover", "--all-boards")
        # The fixture's model grows for good; a fresh forum each round would
        # cost a server start, so later rounds add to the replies before.
        with urllib.request.urlopen(f"{fx.base.rstrip('/')}/__fixture/add-replies?n={n}") as resp:
            changes = json.load(resp)
        stage("discover", "--all-boards")
        with sqlite3.connect(data / "luntan.db") as db:
            before = dict(db.execute("select thread, pages from threads where state = 0").fetchall())
        whole = fresh(WORK / "updates-whole")
        shutil.copytree(data / "sites", whole / "sites")
        copy_db(data / "luntan.db", whole)
        with sqlite3.connect(whole / "luntan.db") as db:
            # The same queued threads with no trace of their last download.
            db.execute("update threads set pages = null, save_date = null where state = 0")
        out["update"] = stage("download")
        out["whole"] = stage("download", db=whole)
        with sqlite3.connect(data / "luntan.db") as db:
            after = dict(db.execute("select thread, pages from threads where thread in (%s)" % ",".join("?" * len(before)), list(before)).fetchall())
        out["changed"] = len(changes)
        out["queued"] = len(before)
        out["pages_before"] = sum(p or 0 for p in before.values())
        out["pages_after"] = sum(p or 0 for p in after.values())
        a, b = out["nothing_new_with"], out["nothing_new_without"]
        u, w = out["update"], out["whole"]
        long = [t for t, p in before.items() if (p or 0) >= 5]
        out["long_threads"] = len(long)
        out["long_update"] = sum(u["per_thread"].get(t, 0) for t in long)
        out["long_whole"] = sum(w["per_thread"].get(t, 0) for t in long)
        for x in out.values():
            if isinstance(x, dict):
                x.pop("per_thread", None)
        log(f"  nothing new: {a['bytes'] / 1e3:.1f} kB with validators ({a['not_modified']} answered 304), {b['bytes'] / 1e3:.1f} kB without")
        log(f"  {len(before)} threads re-queued after {len(changes)} replies: {u['requests']} requests, {u['bytes'] / 1e3:.1f} kB; "
            f"a whole re-download {w['requests']} requests, {w['bytes'] / 1e3:.1f} kB; the {len(long)} of 5 pages or more: "
            f"{out['long_update']} requests against {out['long_whole']}")
        return out

    def section_s4(self):
        """Pages drawn by JavaScript (S4): luntan's protocol mode (the JSON
        read directly) vs its browser mode (Chromium) vs a Selenium peer
        doing what browser mode does, over the fixture's microblog; each
        side's discover + download, the whole process tree measured."""
        sec = self.results["sections"].setdefault("s4", {"protocol": [], "browser": [], "peer": []})
        root = fresh(WORK / "s4")
        written = root / "fixture-sites"
        fx = Fixture("s4", ["--microblog", "--threads", 10, "--boards", 1, "--forums", "dz"], sites_out=written)
        try:
            self.s4_rounds(sec, root, written, fx)
        finally:
            fx.stop()

    def s4_rounds(self, sec, root, written, fx):
        import xml.etree.ElementTree as ET

        # The microblog once the fixture writes its browser-mode site file;
        # until then the XHR forum, which both modes read today.
        want = os.environ.get("BENCH_S4_SITE") or ("mb" if (written / "mb-browser.xml").exists() else "xhr")
        pair = (want, f"{want}-browser")
        proto_id, browser_id = pair
        browser_site = ET.parse(written / f"{browser_id}.xml").getroot()
        pol, brw = browser_site.find("politeness"), browser_site.find("browser")
        conc = int(os.environ.get("BENCH_S4_CONCURRENCY") or (pol.get("concurrency") if pol is not None else None) or 2)
        sites = root / "sites"
        sites.mkdir()
        for sid in pair:
            shutil.copyfile(written / f"{sid}.xml", sites / f"{sid}.xml")
            # No delay, no robots.txt (the peer reads none), the same requests in flight on every side.
            set_attrs(sites / f"{sid}.xml", "politeness", {"delay-ms": 0, "concurrency": conc, "robots": "false"})
        sec.update(site=proto_id, browser_site=browser_id, concurrency=conc, settle_ms=int(brw.get("settle-ms", 300)),
                   timeout_ms=int(brw.get("timeout-ms", 30000)), base=fx.base)
        log(f"s4: {proto_id}.xml (protocol mode) vs {browser_id}.xml (browser mode) vs Selenium, concurrency {conc}, no delay")
        boards_file = root / "boards.txt"

        def per_page(d, pages, posts):
            d.update(pages=pages, posts=posts,
                     pages_per_s=pages / d["wall"] if d["wall"] else None, posts_per_s=posts / d["wall"] if d["wall"] else None,
                     cpu_ms_per_page=1000 * d["cpu"] / pages if pages else None, cpu_ms_per_post=1000 * d["cpu"] / posts if posts else None,
                     mb_per_page=d["rss_mb"] / pages if pages else None)
            return d

        def luntan(mode, sid, r):
            data = fresh(root / f"data-{mode}")
            (data / "sites").mkdir()
            shutil.copyfile(sites / f"{sid}.xml", data / "sites" / f"{sid}.xml")
            log(f"s4 round {r + 1}: luntan {mode} mode ({sid}): discover + download")
            cpu0 = fx.cpu()
            d = run_tree([BIN / "luntan-discover", "--data", data, "-q"])
            dl = run_tree([BIN / "luntan-download", "--data", data, "-q"])
            server_cpu = fx.cpu() - cpu0
            md = re.search(r"discover: \d+ sites, (\d+) boards .*?, (\d+) list pages, (\d+) requests, (\d+) new threads", d.out)
            mdl = re.search(r"download: (\d+) saved, (\d+) failed, (\d+) left, (\d+) pages, ([\d.]+) MB", dl.out)
            if not md or not mdl:
                raise RuntimeError(f"unexpected luntan output: {d.out[-500:]} {dl.out[-500:]} {dl.err[-1000:]}")
            mbr = re.search(r"in the browser: (\d+) DOM states kept, (\d+) dropped as duplicates, (\d+) requests, (\d+) refused off the forum, "
                            r"(\d+) images/fonts/media blocked, (\d+) browser restarts", dl.out)
            pages = len(list((data / "pages").rglob(f"article*.{'json' if mode == 'protocol' else 'html'}")))
            # The posts and comments stored: extract (not measured) and count them in the thread XML.
            run([BIN / "luntan-extract", "--data", data, "-q"])
            posts = sum(p.read_text().count("<post ") for p in (data / "pages").rglob("article*.xml"))
            with sqlite3.connect(data / "luntan.db") as db:
                boards = [u for (u,) in db.execute("select url from boards where site = ? and last_visit is not null order by rowid", (sid,))]
                threads = db.execute("select count(*) from threads where site = ?", (sid,)).fetchone()[0]
            if mode == "browser" and not boards_file.exists():
                boards_file.write_text("".join(u + "\n" for u in boards))
            stages = (d.sample(), dl.sample())
            s = {k: sum(x[k] for x in stages) for k in ("wall", "cpu", "user", "sys", "cpu_wait4", "cpu_proc", "orphans", "killed")}
            s.update({k: max((x[k] for x in stages if x[k] is not None), default=None) for k in ("rss_mb", "anon_mb", "pss_mb", "procs")})
            kinds = {}
            for x in stages:
                for k, v in x["cpu_by_kind"].items():
                    kinds[k] = kinds.get(k, 0) + v
            s.update(cpu_by_kind=kinds, discover=stages[0], download=stages[1], server_cpu=server_cpu, boards=len(boards), threads=threads,
                     list_pages=int(md[2]), requests=int(md[3]), saved=int(mdl[1]), failed=int(mdl[2]), left=int(mdl[3]),
                     reported_pages=int(mdl[4]), mb=float(mdl[5]))
            if mbr:
                s.update(states_kept=int(mbr[1]), states_dropped=int(mbr[2]), browser_requests=int(mbr[3]), refused=int(mbr[4]),
                         blocked=int(mbr[5]), restarts=int(mbr[6]))
            if dl.err.strip() or d.err.strip():
                s["stderr"] = (d.err + dl.err)[-2000:]
            sec[mode].append(per_page(s, pages, posts))
            log(f"  {len(boards)} boards, {threads} threads, {pages} pages, {posts} posts in {s['wall']:.2f}s = {pages / s['wall']:.1f} pages/s; "
                f"cpu {s['cpu']:.2f}s (wait4 alone {s['cpu_wait4']:.2f}s, /proc {s['cpu_proc']:.2f}s, server {server_cpu:.2f}s), "
                f"peak {s['rss_mb']:.0f} MB summed RSS ({mb_or(s['pss_mb'])} PSS, {s['procs']} processes)")

        def peer(r):
            out = fresh(root / "peer-out")
            log(f"s4 round {r + 1}: Selenium peer, {conc} drivers, {len(boards_file.read_text().split())} boards")
            cpu0 = fx.cpu()
            ran = run_tree([PY, PEERS / "selenium_timelines.py", sites / f"{browser_id}.xml", boards_file, out])
            server_cpu = fx.cpu() - cpu0
            j = json.loads(ran.out.strip().splitlines()[-1])
            s = ran.sample(server_cpu=server_cpu, boards=j["boards"], threads=j["threads"], failed=j["failed"], errors=j["errors"],
                           mb=j["bytes"] / 1e6, drivers=j["drivers"],
                           phases={k: j.get(k) for k in ("start_secs", "list_secs", "thread_secs", "quit_secs")})
            sec["peer"].append(per_page(s, j["pages"], j["posts"]))
            log(f"  {j['boards']} boards, {j['threads']} threads, {j['pages']} pages, {j['posts']} posts in {ran.wall:.2f}s = "
                f"{j['pages'] / ran.wall:.1f} pages/s; cpu {ran.cpu:.2f}s (wait4 alone {ran.cpu_wait4:.2f}s, /proc {ran.cpu_proc:.2f}s, "
                f"server {server_cpu:.2f}s), peak {ran.rss_mb:.0f} MB summed RSS ({mb_or(ran.pss_mb)} PSS, {ran.procs} processes)"
                + (f"; {j['failed']} failed: {j['errors'][:2]}" if j["failed"] else ""))
            shutil.rmtree(out)

        # The fixture's microblog has the same size at every scale, and a
        # Selenium run takes about as long as a browser-mode one: the peer
        # runs every round.
        # A protocol-mode run is over in about 0.1 s, mostly process start-up,
        # so one run is noise: it runs S4_PROTOCOL_REPEATS times a round.
        def protocol(r):
            for _ in range(S4_PROTOCOL_REPEATS):
                luntan("protocol", proto_id, r)

        alternate(ROUNDS, ROUNDS, lambda r: luntan("browser", browser_id, r), peer, [protocol])

    def run(self):
        fresh(WORK)
        log(f"luntan benchmarks, scale {SCALE}: {THREADS} threads, {ROUNDS} rounds (peers {PEER_ROUNDS}), work dir {WORK}")
        try:
            for s in SECTIONS:
                try:
                    getattr(self, f"section_{s}")()
                except Exception as e:  # noqa: BLE001 - report what the other sections measured
                    log(f"section {s} failed: {e!r}")
                    self.results.setdefault("errors", {})[s] = repr(e)
                self.save()
        finally:
            if self.dz:
                self.dz.stop()
        self.results["total_secs"] = time.time() - STARTED
        self.save()
        path = report(self.results)
        log(f"wrote {path}")
        if not KEEP:
            shutil.rmtree(WORK, ignore_errors=True)

    def save(self):
        out = BENCH / "results"
        out.mkdir(exist_ok=True)
        stamp = datetime.datetime.fromtimestamp(STARTED, datetime.timezone.utc).strftime("%Y%m%dT%H%MZ")
        self.results_path = out / f"{SCALE}-{stamp}.json"
        self.results_path.write_text(json.dumps(self.results, indent=1, ensure_ascii=False))


# --- report --------------------------------------------------------------------

def report(res):
    from report import render  # bench/report.py

    md = render(res)
    out = os.environ.get("BENCH_OUT")
    if out:
        path = Path(out)
    elif res["scale"] == "full" and set(SECTIONS) >= {"download", "polite", "extract", "index", "search"}:
        path = ROOT / "BENCHMARKS.md"
    else:
        path = BENCH / "work" / f"BENCHMARKS.{res['scale']}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(md)
    return path


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--reap":
        reap_main(sys.argv[2:])
    sys.path.insert(0, str(BENCH))
    if len(sys.argv) == 3 and sys.argv[1] == "--render":
        # Re-render a results file (no measuring): run.py --render bench/results/X.json
        from report import render

        print(render(json.loads(Path(sys.argv[2]).read_text())))
    else:
        Bench().run()
