"""Fills the Waline bed: Hexo's articles (as the Isso bed writes them), then Waline's comments
through its HTTP API, then WORK/truth.json read back from Hexo and from Waline's database.
Run by `bed.sh fill` with the system python (stdlib; MySQL through the `mysql` client):

    python3 fill.py WORK CORPUS_DIR

1. The Isso bed's plan (`../isso/fill.py`, imported: the same seed, the same 30 posts and the
   same 200 comments, readers, texts and times): Hexo writes the posts (`../isso/hexo.js
   write`), `hexo generate` (with `_config.waline.yml` over `_config.yml`), `hexo.js read`.
2. A fresh MariaDB database `waline_bed` with `schema.sql`'s tables.
3. Starts serve.py (--fill: IPQPS=0) on a free port and POSTs every comment, in time order over
   the whole blog, to /api/comment?lang=zh-CN as the client's comment box does (CommentBox.vue
   `submit`, @waline/api `addComment`): {comment, nick, mail, link, url, ua} and for a reply
   {pid, rid, at}: `url` is the article's path as `decodeURI(location.pathname)` gives it,
   `pid` the comment answered, `rid` its thread's top-level comment, `at` the answered name.
4. Stops it and sets each comment's insertedAt (Waline stores the time of the insert) and
   createdAt/updatedAt to its planned time with a SQL UPDATE.
5. Writes truth.json: per article the article itself (Hexo's HTML), then its comments in the
   order the client shows them (below), from Waline's database, each comment's text Waline's
   own rendering of it (the `comment` field its API returned for the insert).

Waline's list (controller/comment.js getCommentList), as the client asks for it
(sortBy=insertedAt_desc, pageSize=10): top-level comments (rid empty) newest first, 10 a page;
each with `children`: every comment whose rid is it, oldest first (the DESC list reversed),
flat (a reply to a reply is a child of the top-level comment, its pid naming the reply). The
client appends page 2 under page 1 ("加载更多").
"""

import datetime
import importlib.util
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from truthlib import post_view  # noqa: E402


def _isso_fill():
    spec = importlib.util.spec_from_file_location("isso_fill", HERE.parent / "isso" / "fill.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


base = _isso_fill()
DATABASE = "waline_bed"
PAGE_SIZE = 10  # the client's pageSize default
SHANGHAI = base.SHANGHAI
# The browser the fill's comments say they were written in (the client sends navigator.userAgent).
UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


def decode_uri(path):
    """JavaScript's decodeURI: escapes decoded except those of ;/?:@&=+$,#."""
    out = re.sub(r"(?:%[0-9A-Fa-f]{2})+", lambda m: _decode_run(m.group(0)), path)
    return out


def _decode_run(run):
    raw = bytes.fromhex(run.replace("%", ""))
    text = raw.decode("utf-8")
    return "".join(urllib.parse.quote(c, safe="") if c in ";/?:@&=+$,#" else c for c in text)


def mysql(sql, db=DATABASE):
    """Runs SQL with the mysql client (root, empty password, 127.0.0.1:3306); its output raw."""
    cmd = ["mysql", "-uroot", "-h127.0.0.1", "-P3306", "--default-character-set=utf8mb4", "-N", "-B", "--raw"]
    if db:
        cmd.append(db)
    r = subprocess.run(cmd, input=sql, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"fill: mysql: {r.stderr.strip()}")
    return r.stdout


def utc_wall(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def post_comment(origin, article_path, data):
    url = f"{origin}/api/comment?lang=zh-CN"
    _, rv = base.post_json(url, data, origin, article_path, timeout=60)
    if rv.get("errno") or not rv.get("data", {}).get("objectId"):
        sys.exit(f"fill: POST {url} {data}: {rv}")
    return rv["data"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    work, corpus = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    rng = base.random.Random(base.SEED)
    reviews, poems = base.load_corpus(corpus)

    # ---- Hexo: the Isso bed's posts, written as `hexo new` does, generated, read back ----
    posts, plan, loaded = base.hexo_posts(work, rng, reviews, poems, configs="_config.yml,_config.waline.yml")
    for p in posts:
        p["key"] = decode_uri(p["path"])  # what the client sends as `path` and `url`

    # ---- the comments planned as the Isso bed plans them ----
    comments = []
    for a, (p, n) in enumerate(zip(posts, base.plan_counts(rng, len(posts)))):
        for c in base.plan_comments(rng, p["plan"], n, reviews, poems):
            c["article"] = a
            comments.append(c)
    comments.sort(key=lambda c: (c["ts"], c["article"], c["key"]))

    # ---- Waline: a fresh database, every comment through its API ----
    mysql(f"DROP DATABASE IF EXISTS {DATABASE}; CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;", db=None)
    mysql((HERE / "schema.sql").read_text(encoding="utf-8"))
    port = base.free_port()
    origin = f"http://127.0.0.1:{port}"
    server = base.start_server(work, port, serve=HERE / "serve.py", ready="/api/comment?type=count&url=%2F", tries=240)
    ids, rendered = {}, {}  # (article, key) -> Waline's objectId; objectId -> its rendering
    try:
        for c in comments:
            name, email, site = c["who"]
            # the comment box sends its three inputs as typed: "" where left empty
            data = {"comment": c["text"], "nick": name, "mail": email or "", "link": site or "", "url": posts[c["article"]]["key"], "ua": UA}
            if c["answers"] is not None:
                data["pid"] = ids[(c["article"], c["answers"])]
                data["rid"] = ids[(c["article"], c["top"])]
                data["at"] = next(x["who"][0] for x in comments if x["article"] == c["article"] and x["key"] == c["answers"])
            rv = post_comment(origin, posts[c["article"]]["path"], data)
            ids[(c["article"], c["key"])] = c["id"] = rv["objectId"]
            rendered[rv["objectId"]] = rv["comment"]
    finally:
        base.stop_server(server)

    # Waline stores the insert's time: the planned times instead (UTC wall clock: the server
    # runs on TZ=UTC, and MariaDB's session zone is the system's, UTC).
    mysql("".join(f"UPDATE wl_Comment SET insertedAt = '{utc_wall(c['ts'])}', createdAt = '{utc_wall(c['ts'])}', updatedAt = '{utc_wall(c['ts'])}' WHERE id = {c['id']};\n" for c in comments))

    # ---- truth, from Hexo's posts and Waline's database ----
    rows = json.loads(
        mysql(
            "SELECT JSON_ARRAYAGG(JSON_OBJECT('id', id, 'nick', nick, 'link', link, 'mail', mail, 'pid', pid, 'rid', rid, 'url', url, "
            "'comment', comment, 'status', status, 'sticky', sticky, 'like', `like`, "
            "'insertedAt', DATE_FORMAT(insertedAt, '%Y-%m-%d %H:%i:%s'))) FROM wl_Comment;"
        )
    )
    waline_version = json.loads((work / "server" / "node_modules" / "@waline" / "vercel" / "package.json").read_text())["version"]
    client_version = json.loads((work / "server" / "node_modules" / "@waline" / "client" / "package.json").read_text())["version"]
    truth = {
        "package": "waline",
        "version": f"Waline {waline_version} (@waline/vercel, MySQL on MariaDB; @waline/client {client_version}), Hexo {loaded['hexo']} (hexo-theme-landscape 1.1.0)",
        "family": "blog comments as JSON (hybrid: static Hexo articles, Waline's comment API)",
        "home": "/",
        "time_zone": "+08:00",
        # comments: `time` (Unix milliseconds) in the API; the client shows it relative ("3 天前")
        # or as a date; articles: <time datetime> to the second
        "time_precision": "second",
        # A comment's id (div.wl-card-item's id, the JSON's objectId), its author's web site (the
        # name links to it), what it answers (the JSON's pid: "@name" linking #pid on every
        # reply), its likes (the like button's number, 0). No user id, quotes or edit time.
        "shows": base.comment_shows(likes=True),
        "settings": {
            "hexo": {k: loaded.get(k) for k in ("hexo", "timezone")} | {"per_page": 10, "permalink": ":year/:month/:day/:title/", "theme": "landscape"},
            "waline": {
                "pageSize": PAGE_SIZE,
                "commentSorting": "latest",
                "sortBy": "insertedAt_desc",
                "storage": "mysql",
                "audit": False,
                "markdown": "markdown-it (breaks, linkify, typographer, html) + emoji, sub, sup, mathjax; DOMPurify",
            },
            "embed": "<div id=\"waline\"></div> <script src=\"/waline/waline.umd.js\"></script> Waline.init({el: '#waline', serverURL: location.origin, lang: 'zh-CN'})",
        },
        "boards": [],
        "threads": [],
    }
    truth["boards"] = base.boards_of(loaded)
    board_of = {b["name"]: b["id"] for b in truth["boards"]}
    by_url = {}
    for r in rows:
        if r["status"] != "approved" or r["sticky"]:
            sys.exit(f"fill: comment {r['id']} is {r['status']}{', sticky' if r['sticky'] else ''}")
        by_url.setdefault(r["url"], []).append(r)
    n_replies = n_deep = 0
    pages = {}
    for p in posts:
        posts_out = [base.article_post(p)]
        rows_here = by_url.pop(p["key"], [])
        roots = sorted((r for r in rows_here if not r["rid"]), key=lambda r: r["insertedAt"], reverse=True)
        order = []
        for i, top in enumerate(roots):
            order.append((top, 1, i // PAGE_SIZE + 1))
            kids = sorted((r for r in rows_here if r["rid"] == top["id"]), key=lambda r: r["insertedAt"])
            order += [(r, 2, i // PAGE_SIZE + 1) for r in kids]
        if len(order) != len(rows_here) or len({r["insertedAt"] for r in rows_here}) != len(rows_here):
            sys.exit(f"fill: {p['path']}: {len(rows_here)} comments, {len(order)} reached from the top, or two at one time")
        pages[p["path"]] = (len(roots) + PAGE_SIZE - 1) // PAGE_SIZE
        for r, depth, page in order:
            v = post_view(rendered[r["id"]])
            if v["quotes"]:
                sys.exit(f"fill: comment {r['id']} renders a blockquote")
            t = datetime.datetime.strptime(r["insertedAt"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
            posts_out.append(
                {
                    "id": str(r["id"]),
                    "author": r["nick"],  # the client inserts it as text
                    "author_id": None,
                    "author_url": r["link"] or None,
                    "time": t.astimezone(SHANGHAI).strftime("%Y-%m-%dT%H:%M:%S"),
                    "edited": None,
                    "likes": r["like"] or 0,
                    "reply_to": str(r["pid"]) if r["pid"] else None,
                    "depth": depth,
                    "comments_page": page,
                    "shown": v["shown"],
                    "paragraphs": v["paragraphs"],
                    "intros": v["intros"],
                    "quotes": [],
                }
            )
            n_replies += depth == 2
            n_deep += bool(r["pid"] and r["pid"] != r["rid"])
        slug = p["path"].rstrip("/").rsplit("/", 1)[-1]
        truth["threads"].append(
            {
                "id": base.slug_id(slug),
                "board": board_of[p["categories"][0]],
                "title": p["title"],
                "path": p["path"],
                "source": p["source"],
                "comments_key": p["key"],
                "comments_pages": pages[p["path"]],
                "posts": posts_out,
            }
        )
    if by_url:
        sys.exit(f"fill: comments on no article: {list(by_url)[:3]}")
    second = sum(1 for n in pages.values() if n > 1)
    base.write_truth(work, truth, f"{n_replies} of them replies, {n_deep} of those answering a reply, {second} articles with a second comments page")


if __name__ == "__main__":
    main()
