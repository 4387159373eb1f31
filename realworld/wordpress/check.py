#!/usr/bin/env python3
"""Reads every thread of the WordPress bed as a client without JavaScript
and compares it with truth.json, independently of luntan:

    python3 realworld/wordpress/check.py WORK/truth.json PORT

Per post page (the paths truth.json names): the title (h1), the article
(its author, <time datetime>, paragraphs) and every li.comment in page
order, each with its id (li#comment-N), what it answers (the li.comment
it is drawn inside), its author and the author's link, its <time
datetime> and its paragraphs (realworld/truthlib.py's post_view of the
comment-content div). Also that every board's list pages link each of
its threads. Prints the differences and a count; exit 1 on any. stdlib
only.
"""

import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from truthlib import VOID, SourcePage, fold, post_view  # noqa: E402


class Page(SourcePage):
    """The parts of a post page (or the links of a list page)."""

    def __init__(self, html):
        super().__init__(html)
        self.html = html
        self.stack = []  # (tag, classes, record or None)
        self.title = None
        self.posts = []  # dicts in page order; the article first
        self.links = []
        self.text_to = None  # (dict, key) collecting text
        self.feed(html)
        self.close()

    def _comment(self):
        for tag, cls, rec in reversed(self.stack):
            if rec is not None and rec.get("kind") == "comment":
                return rec["post"]
        return None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = set((a.get("class") or "").split())
        rec = None
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "main" and not self.posts:
            self.posts.append({"id": None, "reply_to": None, "author": "", "author_url": None, "time": None, "html": None})
        elif tag == "li" and "comment" in cls and (a.get("id") or "").startswith("comment-"):
            holder = self._comment()
            p = {"id": a["id"][len("comment-"):], "reply_to": holder["id"] if holder else None,
                 "author": "", "author_url": None, "time": None, "html": None}
            self.posts.append(p)
            rec = {"kind": "comment", "post": p}
        elif tag == "h1" and "wp-block-post-title" in cls:
            self.title = ""
            rec = {"kind": "text", "into": "title"}
        elif tag in ("p", "div") and cls & {"wp-block-post-author__name", "wp-block-comment-author-name"}:
            rec = {"kind": "text", "into": "author"}
        elif tag == "a" and self.stack and "wp-block-comment-author-name" in self.stack[-1][1]:
            self.posts[-1]["author_url"] = a.get("href")
        elif tag == "time" and self.posts and self.posts[-1]["time"] is None:
            self.posts[-1]["time"] = a.get("datetime")
        elif tag == "div" and cls & {"wp-block-post-content", "wp-block-comment-content"}:
            rec = {"kind": "body", "start": self.pos() + len(self.get_starttag_text())}
        if tag not in VOID:
            self.stack.append((tag, cls, rec))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            t, cls, rec = self.stack.pop()
            if rec is not None and rec["kind"] == "body":
                self.posts[-1]["html"] = self.html[rec["start"]:self.pos()]
            if t == tag:
                break

    def handle_data(self, data):
        for t, cls, rec in reversed(self.stack):
            if rec is not None and rec["kind"] == "text":
                if rec["into"] == "title":
                    self.title += data
                else:
                    self.posts[-1]["author"] += data
                break


def get(origin, path):
    with urllib.request.urlopen(origin + path, timeout=30) as r:
        return r.read().decode("utf-8")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    truth = json.loads(Path(sys.argv[1]).read_text())
    origin = f"http://127.0.0.1:{int(sys.argv[2])}"
    bad = []
    n_posts = n_pages = 0
    # every thread linked from its board's list pages (10 a page, "Older Posts")
    for b in truth["boards"]:
        want = {t["path"] for t in truth["threads"] if t["board"] == b["id"]}
        seen, page, path = set(), 1, b["path"]
        while path:
            n_pages += 1
            links = Page(get(origin, path)).links
            seen |= {urllib.parse.urlsplit(h).path for h in links}
            page += 1
            nxt = f"{b['path']}page/{page}/"
            path = nxt if any(urllib.parse.urlsplit(h).path == nxt for h in links) else None
        if want - seen:
            bad.append(f"board {b['name']}: {len(want - seen)} threads not linked from its {page - 1} list pages")
    for t in truth["threads"]:
        n_pages += 1
        page = Page(get(origin, t["path"]))
        where = t["path"]
        if fold(page.title or "") != fold(t["title"]):
            bad.append(f"{where}: title {page.title!r} != {t['title']!r}")
        if len(page.posts) != len(t["posts"]):
            bad.append(f"{where}: {len(page.posts)} posts, truth {len(t['posts'])}")
        for i, (g, w) in enumerate(zip(page.posts, t["posts"])):
            n_posts += 1
            got = {
                "id": g["id"],
                "reply_to": g["reply_to"],
                "author": fold(g["author"]),
                "author_url": g["author_url"],
                "time": (g["time"] or "")[:19],
                "paragraphs": post_view(g["html"] or "")["paragraphs"],
            }
            for k, v in got.items():
                if v != w[k]:
                    bad.append(f"{where} post {i + 1}: {k} {v!r} != {w[k]!r}")
            if (g["time"] or "")[19:] != "+08:00":
                bad.append(f"{where} post {i + 1}: datetime {g['time']!r} is not +08:00")
    for b in bad[:40]:
        print(b)
    print(f"check: {len(truth['threads'])} threads, {n_posts} posts, {n_pages} pages read; {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
