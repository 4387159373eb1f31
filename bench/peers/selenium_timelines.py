"""Selenium peer of luntan's browser mode (S4): the same timelines scrolled,
the same status pages clicked through, in Chromium driven by Debian's
chromedriver, the way a Python user would write it.

It reads luntan's browser-mode site file (`mb-browser.xml`, or any site file
with `<browser>`) for what to do, so both sides fire the same events:

- every list page of BOARDS_FILE (one URL a line: the boards luntan's
  discover read, i.e. the users whose timelines it scrolled) is loaded, the
  `<browser><list>` actions run on it (`scroll`: to the bottom until no new
  item appears), and the thread links on the drawn page (inside the rows of
  `<list row>` if it has one: a timeline's own posts) are collected with the
  site file's `<links><thread>` pattern;
- every thread page is loaded, and the `<browser><thread>` actions run on
  it: `wait` for a selector, `click` the first match again while one
  matches (at most `max`; e.g. a.comments once, then a.more until none),
  `scroll`. `driver.page_source` is saved to disk after the load and after
  every event (no duplicate test: every state is a page);
- "settled" is what a careful Selenium script waits for: no XHR or fetch
  in flight (counted by a hook added to every document before its scripts
  run) and the DOM's element count unchanged for the site file's
  `settle-ms`, polled every 25 ms.

Posts are counted the way luntan's extraction counts them: the elements the
site file's `<thread post="…">` selector matches, a post repeated across a
thread's states counted once (by its text).

N drivers (the site file's `concurrency`) work in threads from one queue,
first the list pages, then the thread pages. Chromium runs headless with
luntan's flags and images refused through the content-settings preference;
requests to other hosts fail at the resolver, as luntan refuses them.

usage: selenium_timelines.py SITE_XML BOARDS_FILE OUT_DIR
Prints one JSON line: boards, threads, pages (states saved), posts, failed.
"""
import json
import os
import queue
import re
import sys
import threading
import time
import xml.etree.ElementTree as ET
from urllib.parse import urljoin, urlsplit

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("LUNTAN_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
POLL = 0.025

# Counts XHRs and fetches in flight; installed before the page's own scripts.
HOOK = r"""(function(){var n=0;Object.defineProperty(window,'__inflight',{get:function(){return n;}});
var send=XMLHttpRequest.prototype.send;XMLHttpRequest.prototype.send=function(){var done=false;n++;
this.addEventListener('loadend',function(){if(!done){done=true;n--;}});try{return send.apply(this,arguments);}catch(e){if(!done){done=true;n--;}throw e;}};
if(window.fetch){var f=window.fetch;window.fetch=function(){n++;return f.apply(this,arguments).finally(function(){n--;});};}})();"""

PROBE = "return [window.__inflight||0, document.readyState, document.getElementsByTagName('*').length];"
COUNT = "return document.querySelectorAll(arguments[0]).length;"
CLICK = "var e=document.querySelector(arguments[0]);if(!e)return false;e.click();return true;"
SCROLL = "window.scrollTo(0, document.body.scrollHeight); window.dispatchEvent(new Event('scroll'));"
TEXTS = "return Array.prototype.map.call(document.querySelectorAll(arguments[0]), function(e){return e.textContent.replace(/\\s+/g,' ').trim();});"
# Links inside the list's rows (the site file's <list row>), else anywhere.
HREFS = ("var out=[];Array.prototype.forEach.call(arguments[0]?document.querySelectorAll(arguments[0]):[document],function(r){"
         "Array.prototype.forEach.call(r.querySelectorAll('a[href]'),function(a){out.push(a.href);});});return out;")

SHORTHANDS = {"{board}": r"(?P<board>[0-9A-Za-z_-]+)", "{thread}": r"(?P<thread>[0-9A-Za-z_-]+)", "{page}": r"(?P<page>[0-9]+)"}


def pattern(text):
    for k, v in SHORTHANDS.items():
        text = text.replace(k, v)
    return re.compile(text.strip())


def actions(el):
    out = []
    for a in list(el) if el is not None else []:
        if a.tag == "wait":
            out.append(("wait", a.get("selector"), 1))
        elif a.tag == "click":
            out.append(("click", a.get("selector"), int(a.get("max", 1))))
        elif a.tag == "scroll":
            out.append(("scroll", a.get("items"), int(a.get("max", 20))))
    return out


class Rules:
    def __init__(self, path):
        site = ET.parse(path).getroot()
        self.home = site.findtext("home").strip()
        pol = site.find("politeness")
        self.concurrency = int(pol.get("concurrency", 2)) if pol is not None else 2
        self.thread_link = pattern(site.find("links").findtext("thread"))
        row = site.find("list")
        self.row = row.get("row") if row is not None else None
        self.post = site.find("thread").get("post")
        b = site.find("browser")
        self.timeout = int(b.get("timeout-ms", 30000)) / 1000
        self.settle = int(b.get("settle-ms", 300)) / 1000
        self.list = actions(b.find("list"))
        self.thread = actions(b.find("thread"))


class Stuck(Exception):
    pass


class Worker:
    def __init__(self, rules):
        self.rules = rules
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        host = urlsplit(rules.home).hostname
        for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {host}"):
            opts.add_argument(a)
        opts.add_experimental_option("prefs", {"profile.managed_default_content_settings.images": 2})
        self.d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
        self.d.set_page_load_timeout(rules.timeout)
        self.d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})

    def settle(self):
        """No request in flight and the DOM unchanged for settle-ms."""
        started = time.monotonic()
        last, since = None, time.monotonic()
        while True:
            inflight, state, nodes = self.d.execute_script(PROBE)
            now = time.monotonic()
            key = (inflight, state, nodes)
            if key != last:
                last, since = key, now
            elif inflight == 0 and state == "complete" and now - since >= self.rules.settle:
                return
            if now - started > self.rules.timeout:
                raise Stuck(f"never settled ({inflight} requests in flight)")
            time.sleep(POLL)

    def wait(self, selector):
        started = time.monotonic()
        while not self.d.execute_script(COUNT, selector):
            if time.monotonic() - started > self.rules.timeout:
                raise Stuck(f"{selector} never appeared")
            time.sleep(2 * POLL)

    def run(self, url, acts, state):
        """Load url, settle, then each action; state() after the load and after every event."""
        self.d.get(url)
        self.settle()
        state()
        for kind, sel, most in acts:
            if kind == "wait":
                self.wait(sel)
            elif kind == "click":
                for _ in range(most):
                    if not self.d.execute_script(CLICK, sel):
                        break
                    self.settle()
                    state()
            elif kind == "scroll":
                before = self.d.execute_script(COUNT, sel)
                for _ in range(most):
                    self.d.execute_script(SCROLL)
                    self.settle()
                    after = self.d.execute_script(COUNT, sel)
                    if after <= before:
                        break
                    before = after
                    state()

    def quit(self):
        try:
            self.d.quit()
        except Exception:  # noqa: BLE001
            pass


def main():
    site_xml, boards_file, out_dir = sys.argv[1:4]
    rules = Rules(site_xml)
    boards = [line.strip() for line in open(boards_file) if line.strip()]
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()
    lock = threading.Lock()
    stats = {"boards": 0, "threads": 0, "pages": 0, "bytes": 0, "posts": 0, "failed": 0, "errors": []}
    threads = {}  # thread id -> url, in the order found

    def fail(url, e):
        with lock:
            stats["failed"] += 1
            if len(stats["errors"]) < 5:
                stats["errors"].append(f"{url}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def list_page(w, url):
        w.run(url, rules.list, lambda: None)
        found = []
        for href in w.d.execute_script(HREFS, rules.row):
            m = rules.thread_link.search(href)
            if m:
                found.append((m.group("thread"), urljoin(url, href)))
        with lock:
            stats["boards"] += 1
            for tid, href in found:
                threads.setdefault(tid, href)

    def thread_page(w, job):
        tid, url = job
        seen = set()
        n = 0

        def state():
            nonlocal n
            html = w.d.page_source
            n += 1
            name = f"article{tid}.html" if n == 1 else f"article{tid}_p{n}.html"
            with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
                f.write(html)
            seen.update(t for t in w.d.execute_script(TEXTS, rules.post) if t)
            with lock:
                stats["pages"] += 1
                stats["bytes"] += len(html.encode())

        w.run(url, rules.thread, state)
        with lock:
            stats["threads"] += 1
            stats["posts"] += len(seen)

    def phase(jobs, work, workers):
        q = queue.Queue()
        for j in jobs:
            q.put(j)

        def loop(w):
            while True:
                try:
                    job = q.get_nowait()
                except queue.Empty:
                    return
                try:
                    work(w, job)
                except Exception as e:  # noqa: BLE001 - one page failing is counted, the batch goes on
                    fail(job if isinstance(job, str) else job[1], e)

        ts = [threading.Thread(target=loop, args=(w,)) for w in workers]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    n = max(1, rules.concurrency)
    workers = [None] * n

    def start(i):
        workers[i] = Worker(rules)

    starters = [threading.Thread(target=start, args=(i,)) for i in range(n)]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    workers = [w for w in workers if w is not None]
    if not workers:
        sys.exit("selenium_timelines: no browser started")
    t1 = time.monotonic()
    try:
        phase(boards, list_page, workers)
        t2 = time.monotonic()
        phase(list(threads.items()), thread_page, workers)
        t3 = time.monotonic()
    finally:
        for w in workers:
            w.quit()
    stats.update(start_secs=t1 - t0, list_secs=t2 - t1, thread_secs=t3 - t2, quit_secs=time.monotonic() - t3)
    stats["drivers"] = len(workers)
    stats["secs"] = time.monotonic() - t0
    print(json.dumps(stats, ensure_ascii=False))


if __name__ == "__main__":
    main()
