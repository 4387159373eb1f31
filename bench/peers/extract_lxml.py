"""Python peer of luntan-extract: saved thread pages -> the same thread XML.

What a Python user would write for the same job: charset detection (BOM,
HTTP charset, <meta> prescan with the GBK family widened to GB18030, the label
checked against the bytes, charset-normalizer when nothing is declared or the
label is wrong), lxml's HTML parser, the site file's CSS selectors through
cssselect, paragraphs split at <br> and block elements like luntan does, the
thread XML written in luntan's format to a temp file, fsynced, renamed, and
parsed back once as a check (luntan-extract does all of these).

usage: extract_lxml.py MANIFEST OUT_DIR
MANIFEST is JSON lines, one thread each:
  {"site", "board", "thread", "url", "title", "save_date", "content_type",
   "forum", "rules": {...site file selectors...}, "pages": [html paths], "out": relative xml path}
Prints one JSON line: threads, failed, bytes (HTML read), seconds.
"""
import json
import os
import re
import sys
import time
from xml.sax.saxutils import escape

import charset_normalizer
import lxml.etree
import lxml.html
from lxml.cssselect import CSSSelector

SKIPPED = {"script", "style", "noscript", "template", "textarea", "select", "iframe", "object"}
BLOCKS = {
    "p", "div", "li", "tr", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "pre",
    "section", "article", "header", "footer", "dl", "dt", "dd", "hr", "center", "aside", "nav", "main",
    "address", "figure", "figcaption", "caption", "fieldset", "form", "details", "summary", "tbody",
    "thead", "tfoot",
}
CELLS = {"td", "th"}

# --- encoding -----------------------------------------------------------------

META = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)
HTTP_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", re.I)
WIDEN = {"gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030", "chinese": "gb18030",
         "csgb2312": "gb18030", "gb18030": "gb18030", "big5": "big5hkscs", "big5-hkscs": "big5hkscs",
         "utf-8": "utf-8", "utf8": "utf-8"}
NAMES = {"gb18030": "gb18030", "big5hkscs": "Big5", "utf-8": "UTF-8"}


def codec(label):
    label = label.lower()
    return WIDEN.get(label, label)


def malformed(data, enc):
    text = data.decode(enc, errors="replace")
    return text, text.count("\ufffd")


def detect_and_decode(data, content_type):
    """(encoding name, text): BOM, HTTP charset, <meta>, else a guess; a
    declaration is checked against the bytes."""
    if data.startswith(b"\xef\xbb\xbf"):
        return "UTF-8", data[3:].decode("utf-8", errors="replace")
    declared = None
    if content_type:
        m = HTTP_CHARSET.search(content_type)
        if m:
            declared = m.group(1).decode() if isinstance(m.group(1), bytes) else m.group(1)
    if declared is None:
        m = META.search(data[:1024])
        if m:
            declared = m.group(1).decode("ascii", "replace")
    if declared is not None:
        enc = codec(declared)
        try:
            return NAMES.get(enc, enc), data.decode(enc)
        except LookupError:
            pass
        except UnicodeDecodeError:
            # A legacy label on valid UTF-8, or a label that does not fit.
            try:
                return "UTF-8", data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            text, bad = malformed(data, enc)
            non_ascii = sum(1 for b in data if b >= 0x80)
            if bad * 20 <= non_ascii:
                return NAMES.get(enc, enc), text
    guess = charset_normalizer.from_bytes(data).best()
    enc = codec(guess.encoding) if guess is not None else "utf-8"
    return NAMES.get(enc, enc), data.decode(enc, errors="replace")


# --- text -----------------------------------------------------------------------

def xml_allowed(c):
    o = ord(c)
    return 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000


class Paragraphs:
    __slots__ = ("done", "cur", "space")

    def __init__(self):
        self.done, self.cur, self.space = [], [], False

    def text(self, s):
        cur = self.cur
        for c in s:
            if c.isspace():
                self.space = bool(cur)
            elif xml_allowed(c):
                if self.space:
                    cur.append(" ")
                    self.space = False
                cur.append(c)

    def soft_space(self):
        self.space = bool(self.cur)

    def end(self):
        if self.cur:
            self.done.append("".join(self.cur))
            self.cur = []
        self.space = False

    def finish(self):
        self.end()
        return self.done


def paragraphs(body, stripped=()):
    out = Paragraphs()
    pre = [0]

    def text(s):
        if not s:
            return
        if pre[0] > 0:
            lines = s.split("\n")
            out.text(lines[0])
            for line in lines[1:]:
                out.end()
                out.text(line)
        else:
            out.text(s)

    def walk(el, root):
        tag = el.tag
        if not isinstance(tag, str):
            return  # comments, processing instructions
        if not root and (tag in SKIPPED or el in stripped):
            return
        if tag == "br" or tag in BLOCKS:
            out.end()
        elif tag in CELLS:
            out.soft_space()
        if tag == "pre":
            pre[0] += 1
        text(el.text)
        for child in el:
            walk(child, False)
            text(child.tail)
        if tag in BLOCKS:
            out.end()
        elif tag in CELLS:
            out.soft_space()
        if tag == "pre":
            pre[0] -= 1

    walk(body, True)
    return out.finish()


def line_text(el):
    return " ".join(paragraphs(el))


DATE = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?:[\sT]*(\d{1,2})\s*[:：时]\s*(\d{1,2})(?:\s*[:：分]\s*(\d{1,2}))?)?")
MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def normalize_time(s):
    m = DATE.search(s)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    h, mi, sec = (int(m.group(i)) if m.group(i) else 0 for i in (4, 5, 6))
    if not 1 <= mo <= 12 or not 1 <= d <= MONTH_DAYS[mo - 1]:
        return None
    if mo == 2 and d == 29 and not (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)):
        return None
    if h > 23 or mi > 59 or sec > 59:
        return None
    return f"{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{sec:02}"


def time_of(el):
    t = normalize_time(line_text(el))
    if t:
        return t
    for e in el.iter():
        for a in ("datetime", "title"):
            v = e.get(a)
            if v and (t := normalize_time(v)):
                return t
    return None


FLOOR_NAMES = [("楼主", 1), ("樓主", 1), ("沙发", 2), ("沙發", 2), ("板凳", 3), ("地板", 4)]
DIGITS = re.compile(r"\d+")


def floor_number(label):
    m = DIGITS.search(label)
    if m:
        return int(m.group(0))
    for name, n in FLOOR_NAMES:
        if name in label:
            return n
    return None


# --- pages ----------------------------------------------------------------------

class Rules:
    def __init__(self, r):
        sel = lambda k: CSSSelector(r[k]) if r.get(k) else None
        self.title = sel("title") or CSSSelector("title")
        self.post = sel("post")
        self.body = sel("body")
        self.body_id = re.compile(r["body_id"]) if r.get("body_id") else None
        self.author, self.time, self.floor, self.strip = sel("author"), sel("time"), sel("floor"), sel("strip")


def outermost(els):
    kept, ids = [], set()
    for e in els:
        if any(a in ids for a in e.iterancestors()):
            continue
        ids.add(e)
        kept.append(e)
    return kept


def body_in(rules, post):
    if rules.body is not None:
        found = rules.body(post)
        if found:
            return found[0]
    if rules.body_id is not None:
        for e in post.iter():
            i = e.get("id") if isinstance(e.tag, str) else None
            if i and rules.body_id.search(i):
                return e
    return None


def parse_page(rules, html):
    doc = lxml.html.document_fromstring(html)
    t = rules.title(doc)
    title = line_text(t[0]) if t else None
    posts = []
    for p in outermost(rules.post(doc)):
        body = body_in(rules, p)
        if body is None:
            continue
        first = lambda s: (s(p) or [None])[0] if s is not None else None
        author, tm, fl = first(rules.author), first(rules.time), first(rules.floor)
        stripped = set(rules.strip(body)) if rules.strip is not None else ()
        posts.append({
            "floor": (floor_number(line_text(fl)) or 0) if fl is not None else 0,
            "author": line_text(author) if author is not None else "",
            "time": time_of(tm) if tm is not None else None,
            "paragraphs": paragraphs(body, stripped),
        })
    return title, posts


def esc(s):
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = "".join(c for c in s if c in "\t\n" or xml_allowed(c))
    return escape(s, {"'": "&apos;", '"': "&quot;"})


def to_xml(t):
    o = ['<?xml version="1.0" encoding="UTF-8"?>\n',
         f'<thread site="{esc(t["site"])}" board="{esc(t["board"])}" id="{esc(t["thread"])}">\n',
         f'  <forum>{esc(t["forum"])}</forum>\n', f'  <url>{esc(t["url"])}</url>\n', f'  <title>{esc(t["title"])}</title>\n']
    if t["posted"]:
        o.append(f'  <posted>{esc(t["posted"])}</posted>\n')
    o += [f'  <saved>{esc(t["saved"])}</saved>\n', f'  <encoding>{esc(t["encoding"])}</encoding>\n', f'  <pages>{t["pages"]}</pages>\n']
    for p in t["posts"]:
        o.append(f'  <post floor="{p["floor"]}">\n    <author>{esc(p["author"])}</author>\n')
        if p["time"]:
            o.append(f'    <time>{esc(p["time"])}</time>\n')
        o += [f"    <p>{esc(x)}</p>\n" for x in p["paragraphs"]]
        o.append("  </post>\n")
    o.append("</thread>\n")
    return "".join(o)


def write_atomic(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_rules_cache = {}


def extract(row):
    key = json.dumps(row["rules"], sort_keys=True)
    rules = _rules_cache.get(key) or _rules_cache.setdefault(key, Rules(row["rules"]))
    title, posts, names, nbytes = None, [], [], 0
    by_floor = rules.floor is not None
    for k, path in enumerate(row["pages"]):
        with open(path, "rb") as f:
            data = f.read()
        nbytes += len(data)
        enc, text = detect_and_decode(data, row.get("content_type"))
        if enc not in names:
            names.append(enc)
        t, got = parse_page(rules, text)
        if title is None:
            title = t
        if by_floor:
            prev = posts[-1]["floor"] if posts else 0
            for p in got:
                if p["floor"] == 0:
                    p["floor"] = prev + 1
                prev = p["floor"]
        if k == 0:
            posts = got
        else:
            seen = {(p["floor"], p["author"], tuple(p["paragraphs"])) for p in posts}
            posts += [p for p in got if (p["floor"], p["author"], tuple(p["paragraphs"])) not in seen]
    if not posts:
        raise ValueError(f"{row['pages'][0]}: no posts found")
    if not by_floor:
        for i, p in enumerate(posts):
            p["floor"] = i + 1
    if title is None:
        title = " ".join(Paragraphs_fold(row.get("title") or ""))
    doc = {"site": row["site"], "board": row["board"], "thread": row["thread"], "forum": row["forum"], "url": row["url"],
           "title": title, "posted": posts[0]["time"], "saved": row["save_date"], "encoding": ",".join(names),
           "pages": len(row["pages"]), "posts": posts}
    return to_xml(doc).encode("utf-8"), nbytes


def Paragraphs_fold(s):
    p = Paragraphs()
    p.text(s)
    return p.finish()


def main():
    manifest, out_dir = sys.argv[1], sys.argv[2]
    with open(manifest) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    started = time.perf_counter()
    done = failed = total = 0
    for row in rows:
        try:
            xml, nbytes = extract(row)
            lxml.etree.fromstring(xml)  # never publish a file that does not parse back
            write_atomic(os.path.join(out_dir, row["out"]), xml)
            done += 1
            total += nbytes
        except Exception as e:  # noqa: BLE001 - one bad thread must not stop the batch
            failed += 1
            print(f"failed {row['thread']}: {e}", file=sys.stderr)
    secs = time.perf_counter() - started
    print(json.dumps({"threads": done, "failed": failed, "bytes": total, "secs": secs}))


if __name__ == "__main__":
    main()
