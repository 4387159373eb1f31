"""Reads the Waline bed as a reader's browser would, with Python's own parsers and
independently of luntan, and compares it with truth.json:

    python3 realworld/waline/check.py realworld/work/waline/truth.json PORT

- The list pages (home and its pager, each category and its pager) and every article page
  (title, category, `<time datetime>`, div.article-entry's paragraphs): the Isso bed's page
  reader (`../isso/check.py`'s Page, list_pages, Reader, imported), plus Waline's embed as its
  docs give it: exactly one empty div#waline, the client's waline.umd.js and one
  `Waline.init({el: '#waline', serverURL: location.origin, lang: 'zh-CN'})` without `path`.
- The comment API, asked as the client asks it (@waline/api getComment with the client's
  defaults: path = decodeURI(location.pathname), pageSize 10, sortBy insertedAt_desc):
  GET /api/comment?path=<encodeURIComponent(path)>&pageSize=10&page=N&lang=zh-CN&sortBy=insertedAt_desc,
  page 1, then each next page while page < totalPages (the client's "加载更多" button).
  Its comments in the order the client draws them (each page's `data` after the last's, each
  top-level comment followed by its `children`), each with its id, what it answers (`pid`),
  author, web site (`link`), `time` on the +08:00 clock, likes and paragraphs (post_view of
  the JSON's `comment`, Waline's rendered HTML); `count` adds up; each child's rid is its
  top-level comment.

Prints the differences and a count; exit 1 on any. stdlib only.
"""

import importlib.util
import json
import re
import sys
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from truthlib import post_view  # noqa: E402

_spec = importlib.util.spec_from_file_location("isso_check", HERE.parent / "isso" / "check.py")
isso = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(isso)

EMBED = re.compile(
    r'<div id="waline"></div>\s*<script src="/waline/waline\.umd\.js"></script>\s*<script>\s*'
    r"Waline\.init\(\{\s*el: '#waline',\s*serverURL: location\.origin,\s*lang: 'zh-CN',\s*\}\);\s*</script>"
)


def decode_uri(path):
    """JavaScript's decodeURI (escapes of ;/?:@&=+$,# kept)."""

    def run(m):
        text = bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8")
        return "".join(urllib.parse.quote(c, safe="") if c in ";/?:@&=+$,#" else c for c in text)

    return re.sub(r"(?:%[0-9A-Fa-f]{2})+", run, path)


def api_url(key, page):
    """@waline/api getComment's URL, as the client builds it."""
    return f"/api/comment?path={isso.encode_uri_component(key)}&pageSize=10&page={page}&lang=zh-CN&sortBy=insertedAt_desc"


def comments_of(rd, path, bad):
    """The comments of the article at `path`, as the client draws them, every page loaded."""
    key = decode_uri(path)
    out, page, total = [], 1, None
    while True:
        rv = rd.json(api_url(key, page))
        if rv.get("errno"):
            bad.append(f"{path}: page {page}: {rv}")
            break
        d = rv["data"]
        total = d["count"] if total is None else total
        if d["page"] != page or d["pageSize"] != 10:
            bad.append(f"{path}: asked page {page}, got page {d['page']} of size {d['pageSize']}")
        if len(d["data"]) > 10:
            bad.append(f"{path}: page {page} holds {len(d['data'])} top-level comments")
        for c in d["data"]:
            out.append(c)
            if c.get("pid") or c.get("rid"):
                bad.append(f"{path}: top-level comment {c['objectId']} has pid {c.get('pid')} rid {c.get('rid')}")
            for r in c.get("children", []):
                if r.get("rid") != c["objectId"]:
                    bad.append(f"{path}: comment {r['objectId']} is among {c['objectId']}'s children with rid {r.get('rid')}")
                if r.get("children"):
                    bad.append(f"{path}: reply {r['objectId']} holds children")
                out.append(r)
        if page >= d["totalPages"]:
            break
        page += 1
    if total != len(out):
        bad.append(f"{path}: count {total}, {len(out)} comments drawn")
    ids = {c["objectId"] for c in out}
    for c in out:
        if c.get("pid") and c["pid"] not in ids:
            bad.append(f"{path}: comment {c['objectId']} answers {c['pid']}, not on the page")
    return [
        {
            "id": str(c["objectId"]),
            "reply_to": str(c["pid"]) if c.get("pid") else None,
            "author": c["nick"],
            "author_url": c["link"] or None,
            "time": isso.on_clock(c["time"] // 1000) if c["time"] % 1000 == 0 else f"{c['time']} ms",
            "likes": c["like"],
            "paragraphs": post_view(c["comment"])["paragraphs"],
            "shown": post_view(c["comment"])["shown"],
        }
        for c in out
    ]


def embed_faults(page, t):
    out = []
    if len(EMBED.findall(page.text)) != 1 or page.text.count('id="waline"') != 1 or page.text.count("Waline.init(") != 1:
        out.append("not Waline's documented embed, once")
    path = t["path"]
    if decode_uri(path) != t["comments_key"]:
        out.append(f"decodeURI gives {decode_uri(path)!r}, truth's key {t['comments_key']!r}")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    truth = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    keys = ("id", "reply_to", "author", "author_url", "time", "likes", "paragraphs", "shown")
    return isso.check_blog(truth, isso.Reader(int(sys.argv[2])), comments_of, embed_faults, keys)


if __name__ == "__main__":
    sys.exit(main())
