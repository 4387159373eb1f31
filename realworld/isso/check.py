#!/usr/bin/env python3
"""Reads the Isso bed as a reader's browser gets it, independently of luntan, and compares
it with truth.json:

    python3 realworld/isso/check.py WORK/truth.json PORT

- List pages: the home page and its /page/N/ pages, every category's pages (the sidebar's
  category links, then each pager's "next" link): every article linked where it belongs.
- Article pages: the title (h1.article-title), category, <time datetime> (UTC, read on the
  +08:00 clock), the article's paragraphs (realworld/truthlib.py's post_view of
  div.article-entry), and Isso's embed as the docs give it (script[data-isso] with
  embed.min.js, an empty section#isso-thread without data-isso-id).
- The comment API, asked as embed.min.js asks it (api.js `fetch`, the default client
  config, which the server's /isso/config does not override): GET
  /isso/?uri=<encodeURIComponent(location.pathname)>&sort=oldest&offset=0&nested_limit=5.
  Its comments in the order the embed draws them (`replies`, each top-level one followed by
  its own `replies`, each inserted under the comment its `parent` names), each with its id,
  what it is drawn under, author (the JSON's name, which the embed inserts as HTML), web
  site, `created` on the +08:00 clock and paragraphs (post_view of the JSON's `text`, Isso's
  rendered HTML); nothing hidden behind a "more replies" link; the counts add up.

Prints the differences and a count; exit 1 on any. stdlib only.
"""

import datetime
import json
import sys
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from truthlib import VOID, SourcePage, fold, post_view  # noqa: E402

SHANGHAI = datetime.timezone(datetime.timedelta(hours=8))


def on_clock(dt):
    """A UTC instant (ISO text or Unix seconds) as the +08:00 wall clock, to the second."""
    if isinstance(dt, (int, float)):
        t = datetime.datetime.fromtimestamp(int(dt), datetime.timezone.utc)
    else:
        t = datetime.datetime.fromisoformat(dt.replace("Z", "+00:00"))
    return t.astimezone(SHANGHAI).strftime("%Y-%m-%dT%H:%M:%S")


def encode_uri_component(s):
    return urllib.parse.quote(s, safe="-_.!~*'()")


class Page(SourcePage):
    """What check needs of a Hexo (landscape) page: links by role, and on an article page its
    title, time, category, body HTML and the Isso embed."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text
        self.stack = []  # (tag, record or None)
        self.articles = []  # hrefs of article links on a list page
        self.categories = []  # the sidebar's category links
        self.next = None  # the pager's next page
        self.title = None
        self.time = None
        self.category = None
        self.body = None
        self.embed_script = []
        self.threads = []  # section#isso-thread attributes
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = set((a.get("class") or "").split())
        rec = None
        if tag == "a" and a.get("href"):
            if cls & {"article-title", "archive-article-title"}:
                self.articles.append(a["href"])
            elif "category-list-link" in cls:
                self.categories.append(a["href"])
            elif "next" in cls and "extend" in cls:
                self.next = a["href"]
            elif "article-category-link" in cls:
                rec = {"into": "category"}
                self.category = ""
        if tag == "h1" and "article-title" in cls:
            rec = {"into": "title"}
            self.title = ""
        elif tag == "time" and "dt-published" in cls and self.time is None:
            self.time = a.get("datetime")
        elif tag == "div" and "article-entry" in cls:
            rec = {"body": self.pos() + len(self.get_starttag_text())}
        elif tag == "script" and "data-isso" in a:
            self.embed_script.append(a)
        elif tag == "section" and a.get("id") == "isso-thread":
            self.threads.append(a)
            rec = {"into": "thread"}
        if tag not in VOID:
            self.stack.append((tag, rec))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            t, rec = self.stack.pop()
            if rec and "body" in rec:
                self.body = self.text[rec["body"]:self.pos()]
            if t == tag:
                break

    def handle_data(self, data):
        for _, rec in reversed(self.stack):
            if rec and "into" in rec:
                if rec["into"] == "thread" and data.strip():
                    self.threads[-1]["text"] = data  # the section must be empty
                elif rec["into"] in ("title", "category"):
                    setattr(self, rec["into"], getattr(self, rec["into"]) + data)
                break


class Text(HTMLParser):
    """The text a piece of HTML shows (the embed inserts a comment's author as HTML)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.feed(text)
        self.close()

    def handle_data(self, data):
        self.out.append(data)


class Reader:
    def __init__(self, port):
        self.origin = f"http://127.0.0.1:{port}"
        self.pages = self.api = 0

    def page(self, path):
        self.pages += 1
        with urllib.request.urlopen(self.origin + path, timeout=30) as r:
            return Page(r.read().decode("utf-8"))

    def json(self, path):
        self.api += 1
        with urllib.request.urlopen(self.origin + path, timeout=30) as r:
            return json.loads(r.read())


def path_of(href):
    return urllib.parse.urlsplit(href).path


def list_pages(rd, first):
    """The paths every page of a list links as articles, following the pager from `first`;
    and the first page (for its sidebar)."""
    seen, path, n, top = [], first, 0, None
    while path:
        p = rd.page(path)
        top = top or p
        n += 1
        seen += [path_of(h) for h in p.articles]
        path = path_of(p.next) if p.next else None
        if n > 50:
            break
    return seen, n, top


def comments_of(rd, path, bad):
    """The comments of the article at `path`, as the embed draws them."""
    url = f"/isso/?uri={encode_uri_component(path)}&sort=oldest&offset=0&nested_limit=5"
    rv = rd.json(url)
    out = []
    if rv.get("hidden_replies"):
        bad.append(f"{path}: {rv['hidden_replies']} top-level comments behind the embed's loader")
    for c in rv["replies"]:
        out.append((c, None))
        if c.get("hidden_replies"):
            bad.append(f"{path}: comment {c['id']}: {c['hidden_replies']} replies behind the embed's loader")
        for r in c.get("replies", []):
            if r["parent"] != c["id"]:
                bad.append(f"{path}: comment {r['id']} is in {c['id']}'s replies with parent {r['parent']}")
            if r.get("replies"):
                bad.append(f"{path}: reply {r['id']} holds replies")
            out.append((r, c["id"]))
    if rv["total_replies"] != len(out):
        bad.append(f"{path}: total_replies {rv['total_replies']}, {len(out)} comments drawn")
    if rv["id"] is not None:
        bad.append(f"{path}: the answer's id is {rv['id']!r}, not null")
    return [
        {
            "id": str(c["id"]),
            "reply_to": str(c["parent"]) if c["parent"] is not None else None,
            "drawn_under": str(under) if under is not None else None,
            "author": fold("".join(Text(c["author"] or "").out)),
            "author_url": "".join(Text(c["website"]).out) if c["website"] else None,
            "time": on_clock(c["created"]),
            "paragraphs": post_view(c["text"])["paragraphs"],
            "shown": post_view(c["text"])["shown"],
        }
        for c, under in out
    ]


def check_blog(truth, rd, comments_of, embed_faults, keys, drawn_under=False, bad=None):
    """What both Hexo beds check (this one and ../waline's, which imports
    it): the home's and each category's list pages link exactly the truth's
    articles, the sidebar its categories; each article's title, category,
    embed (`embed_faults(page, thread)`: one line a fault), and its posts,
    the article from the page and the comments from `comments_of(rd, path,
    bad)`, compared key by key (`keys`; `drawn_under`: a reply's nesting
    is its `reply_to`). Prints the differences and the counts."""
    bad = [] if bad is None else bad
    n_posts = 0
    home, n_home, first = list_pages(rd, truth["home"])
    want = [t["path"] for t in truth["threads"]]
    if sorted(home) != sorted(want):
        bad.append(f"home: its {n_home} pages link {len(home)} articles, truth has {len(want)}; missing {sorted(set(want) - set(home))[:3]}")
    if [path_of(h) for h in first.categories] != [b["path"] for b in truth["boards"]]:
        bad.append(f"home: the sidebar links categories {[path_of(h) for h in first.categories]}")
    n_lists = n_home
    for b in truth["boards"]:
        seen, n, _ = list_pages(rd, b["path"])
        n_lists += n
        mine = [t["path"] for t in truth["threads"] if t["board"] == b["id"]]
        if sorted(seen) != sorted(mine):
            bad.append(f"board {b['name']}: its {n} pages link {len(seen)} articles, truth {len(mine)}")

    names = {b["id"]: b["name"] for b in truth["boards"]}
    for t in truth["threads"]:
        path = t["path"]
        page = rd.page(path)
        if fold(page.title or "") != fold(t["title"]):
            bad.append(f"{path}: title {page.title!r} != {t['title']!r}")
        if fold(page.category or "") != names[t["board"]]:
            bad.append(f"{path}: category {page.category!r} != {names[t['board']]!r}")
        bad += [f"{path}: {fault}" for fault in embed_faults(page, t)]
        got = [
            {
                "id": None,
                "reply_to": None,
                "author": "",
                "author_url": None,
                "time": on_clock(page.time) if page.time else None,
                "likes": None,
                "paragraphs": post_view(page.body or "")["paragraphs"],
                "shown": post_view(page.body or "")["shown"],
            }
        ]
        got += comments_of(rd, path, bad)
        if len(got) != len(t["posts"]):
            bad.append(f"{path}: {len(got)} posts, truth {len(t['posts'])}")
        for i, (g, w) in enumerate(zip(got, t["posts"])):
            n_posts += 1
            for k in keys:
                if g[k] != w[k]:
                    bad.append(f"{path} post {i + 1}: {k} {g[k]!r} != {w[k]!r}")
            if drawn_under and g.get("drawn_under") != w["reply_to"]:
                bad.append(f"{path} post {i + 1}: drawn under {g.get('drawn_under')!r}, truth reply_to {w['reply_to']!r}")
    for b in bad[:40]:
        print(b)
    n_comments = sum(len(t["posts"]) - 1 for t in truth["threads"])
    print(
        f"check: {len(truth['threads'])} threads, {n_posts} posts ({n_comments} comments), "
        f"{rd.pages} pages ({n_lists} list pages) and {rd.api} API answers read; {len(bad)} differences"
    )
    return 1 if bad else 0


def isso_embed_faults(page, t):
    scripts = [s for s in page.embed_script if s.get("data-isso") == "/isso/" and s.get("src") == "/isso/js/embed.min.js"]
    if len(scripts) != 1 or len(page.threads) != 1 or set(page.threads[0]) != {"id"}:
        return [f"not Isso's documented embed: {page.embed_script} {page.threads}"]
    return []


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    truth = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    rd = Reader(int(sys.argv[2]))
    bad = []
    # the client config the server hands the embed must leave sorting and nesting as they are
    conf = rd.json("/isso/config")["config"]
    for k in ("sorting", "max-comments-top", "max-comments-nested"):
        if k in conf:
            bad.append(f"/isso/config sets {k} = {conf[k]!r}")
    keys = ("id", "reply_to", "author", "author_url", "time", "paragraphs", "shown")
    return check_blog(truth, rd, comments_of, isso_embed_faults, keys, drawn_under=True, bad=bad)


if __name__ == "__main__":
    sys.exit(main())
