"""Fills the Isso bed: Hexo's articles, then Isso's comments through its HTTP API, then
WORK/truth.json read back from Hexo (its loaded, rendered posts) and from Isso's own database
and renderer. Run by `bed.sh fill` with the bed's venv (it imports isso):

    WORK/venv/bin/python fill.py WORK CORPUS_DIR

1. Plans 30 posts (random.Random(SEED); times fixed) and has Hexo write them
   (`hexo.js write`: hexo.post.create, what `hexo new` does), then `hexo generate`.
2. Reads them back as Hexo loads them (`hexo.js read`): path, title, date, category, HTML.
3. Starts serve.py (--fill: Isso's guard off) on a free port and POSTs every comment, in time
   order over the whole blog, to /isso/new?uri=<encodeURIComponent(the article's path)>
   with {text, author, email, website, parent}, as the embed's form does; Isso creates each
   thread on its first comment, fetching the article's page from this same server.
4. Stops it and sets each comment's `created` (Isso stores the time of the insert) to its
   planned time with an sqlite3 UPDATE.
5. Writes truth.json: per article the article itself (Hexo's rendered HTML), then its
   comments as the embed draws them, from Isso's database (its Comments.fetch) and its
   Markdown renderer (Markup.render, what the API's `text` is).

Deterministic: the same plan, the same ids (a fresh database, one client posting in order),
the same times, so two fills give the same truth.json.
"""

import datetime
import hashlib
import html
import importlib.metadata as md
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from truthlib import post_view  # noqa: E402

SEED = 20251207
SHANGHAI = datetime.timezone(datetime.timedelta(hours=8))

# The categories, in the order a post's category is planned; Hexo makes each slug from the
# name (no category_map): /categories/读书笔记/, linked percent-encoded.
BOARDS = [
    ("读书笔记", 12, "reviews"),
    ("酒店与旅行", 11, "reviews"),
    ("数码生活", 4, "reviews"),
    ("唐诗选读", 3, "poems"),
]
# Readers who comment: a name, an e-mail address or none (Isso shows neither the address nor
# anything of it but its identicon's hash), a web site or none (the name then links to it).
READERS = [
    ("清风徐来", "qingfeng@example.net", "https://qingfeng.example.net/"),
    ("明月松间", "mingyue@example.net", None),
    ("江南烟雨", None, "https://blog.example.net/jiangnan"),
    ("北国风光", "beiguo@example.com", None),
    ("书虫小白", None, None),
    ("老猫不睡", "laomao@example.org", "https://laomao.example.org/about/"),
    ("夜航船", None, None),
    ("云中漫步", "yunzhong@example.com", "https://yunzhong.example.com/"),
    ("山水之间", None, None),
    ("晚风轻拂", "wanfeng@example.com", None),
    ("听雨轩主", None, None),
    ("路人甲", None, None),
    ("赵老师", "zhao@example.edu", None),
    ("周末旅人", None, "https://travel.example.net/zhoumo/"),
    ("阿飞", None, None),
    ("一叶知秋", "yiye@example.com", None),
]
# The blog's author answers now and then (Hexo's `author`; the theme shows it nowhere).
OWNER = ("书香", "owner@example.org", None)

TRICKY_ARTICLE = [
    '价格 < 300 & 品质 > 预期，卖家说"顺丰包邮"😀',
    '3 > 2 > 1，"物超所值" & 值得推荐 😀',
    'A&B 两种封面都买了，单价 < 50 元 😀',
]
TRICKY_COMMENT = [
    '评分 4 > 3，"还会再来" & 推荐 😀',
    '价格 < 100 & "包邮" 😀',
    'R&D 出身的作者，"干货"很多 😀',
]
MAX_REPLIES = 5  # the embed's max-comments-nested: a sixth reply would sit behind a "more" link


def plain(s):
    """A line that both Markdown renderers (Hexo's marked, Isso's mistune) keep as one plain
    paragraph: no markup characters, no list or heading start, no link, no Nunjucks tag."""
    return (
        8 <= len(s) <= 200
        and not re.search(r"[<>&@#*\[\]\\`{}|~_^$=+]|https?:|www\.|\.(com|cn|net|org)\b|\ufffd", s)
        and not re.match(r"\s*(\d+[.)、]|[-+]\s)", s)
    )


def load_corpus(corpus):
    reviews = [" ".join(x.split()) for x in (corpus / "reviews.txt").read_text(encoding="utf-8").splitlines()]
    reviews = [x for x in reviews if plain(x)]
    poems = []
    for line in (corpus / "poems.tsv").read_text(encoding="utf-8").splitlines():
        f = line.split("\t")
        if len(f) == 3 and plain(f[2].strip()) and plain(f[0].strip() + f[1].strip() + "诗" * 6):
            poems.append({"title": f[0].strip(), "author": f[1].strip(), "text": f[2].strip()})
    return reviews, poems


PUNCT = "，。！？；,.!?;：:…~、 "


def clause(text, limit=24):
    """A title: the first clause of a line (at least 4 characters), at most `limit`."""
    for i, c in enumerate(text):
        if c in PUNCT and len(text[:i].strip(PUNCT)) >= 4:
            return text[:i].strip(PUNCT)[:limit]
    return text[:limit]


def poem_lines(text):
    return [x for x in re.split(r"(?<=[。？！])", text) if x]


def plan_posts(rng, reviews, poems):
    cats = [b for b in BOARDS for _ in range(b[1])]
    rng.shuffle(cats)
    t0 = datetime.datetime(2025, 1, 6, 8, 0, tzinfo=SHANGHAI).timestamp()
    t1 = datetime.datetime(2025, 12, 20, 22, 0, tzinfo=SHANGHAI).timestamp()
    times = set()
    while len(times) < len(cats):
        times.add(int(t0 + rng.random() * (t1 - t0)))
    posts, titles = [], set()
    for (name, _, src), ts in zip(cats, sorted(times)):
        while True:
            if src == "poems":
                po = rng.choice(poems)
                title = f"{po['title']}（{po['author']}）"
                paras = poem_lines(po["text"]) + [rng.choice(reviews) for _ in range(rng.randint(1, 2))]
            else:
                paras = [rng.choice(reviews) for _ in range(rng.randint(2, 5))]
                title = clause(paras[0])
                if rng.random() < 0.25:
                    i = rng.randrange(len(paras))
                    paras[i] += " " + rng.choice(TRICKY_ARTICLE)
                if rng.random() < 0.1:
                    paras[0] += "\n" + rng.choice(reviews)  # a line break typed in a paragraph
            if rng.random() < 0.08:
                title += ' & "续"'
            if title not in titles:
                break
        titles.add(title)
        wall = datetime.datetime.fromtimestamp(ts, SHANGHAI).strftime("%Y-%m-%d %H:%M:%S")
        posts.append({"title": title, "date": wall, "category": name, "body": "\n\n".join(paras), "src": src, "ts": ts})
    return posts


def comment_text(rng, src, reviews, poems):
    paras = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 2, 2, 3])):
        if src == "poems" and rng.random() < 0.5:
            paras.append(rng.choice(poem_lines(rng.choice(poems)["text"])))
        else:
            paras.append(rng.choice(reviews))
    if rng.random() < 0.15:
        i = rng.randrange(len(paras))
        paras[i] += " " + rng.choice(TRICKY_COMMENT)
    if rng.random() < 0.06:
        paras[0] += "\n" + rng.choice(reviews)  # hard_wrap: <br>
    return "\n\n".join(paras)


def top_of(c):
    return c["key"] if c["top"] is None else c["top"]


def plan_counts(rng, n_posts):
    """Comments per article: four articles none, one 24, the others 2-12."""
    counts = [rng.randint(2, 12) for _ in range(n_posts)]
    picked = rng.sample(range(n_posts), 5)
    for i in picked[:4]:
        counts[i] = 0
    counts[picked[4]] = 24
    return counts


def plan_comments(rng, post, n, reviews, poems):
    """One article's `n` comments in the order they are written: each {key, text, who,
    answers (the key of the comment its reply button was pressed on, or None), top (the key
    of the top-level comment it is drawn under), ts}."""
    out = []
    t = post["ts"] + rng.randint(600, 2 * 86400)
    replies = {}  # top-level key -> replies drawn under it
    for k in range(n):
        answers = top = None
        if out and rng.random() < 0.4:
            cands = [c for c in out[-6:] if replies.get(top_of(c), 0) < MAX_REPLIES]
            if cands:
                c = rng.choice(cands)
                answers, top = c["key"], top_of(c)
                replies[top] = replies.get(top, 0) + 1
        who = OWNER if answers is not None and rng.random() < 0.12 else rng.choice(READERS)
        out.append({"key": k, "text": comment_text(rng, post["src"], reviews, poems), "who": who, "answers": answers, "top": top, "ts": t})
        t += rng.randint(61, 30 * 3600)
    return out


def encode_uri_component(s):
    """JavaScript's encodeURIComponent."""
    return urllib.parse.quote(s, safe="-_.!~*'()")


def slug_id(slug):
    """luntan's id of a slug (`<links hashed>`): 16 hex digits of the SHA-256 of its bytes, percent-decoded."""
    return hashlib.sha256(urllib.parse.unquote(slug).encode("utf-8")).hexdigest()[:16]


def wall(ts):
    return datetime.datetime.fromtimestamp(ts, SHANGHAI).strftime("%Y-%m-%dT%H:%M:%S")


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, env=dict(os.environ, TZ="Asia/Shanghai"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"fill: {' '.join(map(str, cmd))} failed:\n{r.stdout[-3000:]}")
    return r.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def boards_of(loaded):
    """truth.json's boards: the categories as Hexo loaded them, each id the
    hash of its slug as luntan's `<links hashed="board">` makes it."""
    out = []
    for c in loaded["categories"]:
        slug = c["path"].rstrip("/").rsplit("/", 1)[-1]
        out.append({"id": slug_id(slug), "name": c["name"], "path": c["path"], "slug": c["slug"], "posts": c["posts"]})
    return out


def hexo_posts(work, rng, reviews, poems, configs="_config.yml"):
    """The planned posts written as `hexo new` writes them, the blog
    generated with `configs` and read back as Hexo loads it, each checked
    against its plan (kept as the post's `plan`): the posts, the plan and
    all Hexo loaded. The Waline bed's fill makes its blog with it too."""
    blog = work / "blog"
    plan = plan_posts(rng, reviews, poems)
    shutil.rmtree(blog / "source" / "_posts", ignore_errors=True)
    (blog / "source" / "_posts").mkdir(parents=True)
    (work / "plan.json").write_text(json.dumps({"posts": plan}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(run(["node", str(HERE / "hexo.js"), str(blog), "write", str(work / "plan.json")], blog).strip())
    shutil.rmtree(blog / "public", ignore_errors=True)
    (blog / "db.json").unlink(missing_ok=True)
    out = run([str(blog / "node_modules" / ".bin" / "hexo"), "generate", "--config", configs], blog)
    print(f"hexo generate: {sum(1 for x in out.splitlines() if 'Generated:' in x)} files")
    run(["node", str(HERE / "hexo.js"), str(blog), "read", str(work / "hexo.json")], blog)
    loaded = json.loads((work / "hexo.json").read_text(encoding="utf-8"))
    posts = loaded["posts"]
    if [(p["title"], p["date"].replace("T", " ")) for p in posts] != [(p["title"], p["date"]) for p in plan]:
        sys.exit("fill: Hexo's posts are not the plan's (a slug taken twice, or a date moved)")
    for p in posts:
        if not p["path"].startswith("/" + p["date"][:10].replace("-", "/") + "/"):
            sys.exit(f"fill: {p['path']} does not name its day, {p['date']} (the machine's clock is not the site's)")
    for p, q in zip(posts, plan):
        p["plan"] = q
    return posts, plan, loaded


def write_truth(work, truth, replies):
    """truth.json written, the plan gone, and one line saying what it
    holds (`replies`: how the comments answer each other)."""
    (work / "truth.json").write_text(json.dumps(truth, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (work / "plan.json").unlink()
    threads = truth["threads"]
    comments = sum(len(t["posts"]) - 1 for t in threads)
    bare = sum(1 for t in threads if len(t["posts"]) == 1)
    print(
        f"truth.json: {len(truth['boards'])} boards, {len(threads)} threads, {len(threads) + comments} posts "
        f"({comments} comments, {replies}; {bare} articles without comments); {truth['version']}"
    )


def comment_shows(likes):
    """truth.json's `shows` for a comment package's pages: a comment's id,
    its author's site, what it answers; no user id, quotes or edit time;
    `likes` where the package shows a count."""
    return {
        "post_id": True,
        "author_id": False,
        "author_url": True,
        "quote_of": False,
        "quote_author": False,
        "reply_to": True,
        "edited": False,
        "likes": likes,
    }


def article_post(p):
    """The article as a thread's first post, from Hexo's rendered HTML."""
    view = post_view(p["content"])
    return {
        "id": None,
        "author": "",  # landscape shows no author on a post (Hexo's `author` is only in <meta>)
        "author_id": None,
        "author_url": None,
        "time": p["date"],
        "edited": None,
        "likes": None,
        "reply_to": None,
        "shown": view["shown"],
        "paragraphs": view["paragraphs"],
        "intros": view["intros"],
        "quotes": [],
    }


def start_server(work, port, serve=HERE / "serve.py", ready="/isso/config", tries=120):
    """The bed's `serve` (`--fill`: its comment server's flood guard off) on
    `port`, once `ready` answers 200 (a quarter of a second between tries).
    The Waline bed's fill starts its own server with it too."""
    log = open(work / "fill-server.log", "w")
    p = subprocess.Popen([sys.executable, str(serve), str(work), str(port), "--fill"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(tries):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{ready}", timeout=5) as r:
                if r.status == 200:
                    return p
        except OSError:
            pass
        if p.poll() is not None:
            sys.exit(f"fill: serve.py died; see {work / 'fill-server.log'}")
        time.sleep(0.25)
    os.killpg(p.pid, signal.SIGTERM)
    sys.exit("fill: serve.py did not answer")


def stop_server(p):
    os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def post_json(url, data, origin, page, timeout=30):
    """POSTs `data` as JSON, as an embed on `page` (a path of `origin`)
    posts a comment: the status and the answer. The Waline bed's fill posts
    with it too."""
    req = urllib.request.Request(
        url,
        data=json.dumps(data, ensure_ascii=False).encode("utf-8"),
        headers={"Content-Type": "application/json", "Origin": origin, "Referer": origin + page},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read())


def post_comment(origin, path, data):
    url = f"{origin}/isso/new?uri={encode_uri_component(path)}"
    status, answer = post_json(url, data, origin, path)
    if status != 201:
        sys.exit(f"fill: POST {url}: {status}")
    return answer


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    work, corpus = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    rng = random.Random(SEED)
    reviews, poems = load_corpus(corpus)

    # ---- Hexo: write the posts as `hexo new` does, generate, read back ----
    posts, plan, loaded = hexo_posts(work, rng, reviews, poems)

    # ---- Isso: every comment through its API, in time order over the whole blog ----
    comments = []
    for a, (p, n) in enumerate(zip(posts, plan_counts(rng, len(posts)))):
        for c in plan_comments(rng, p["plan"], n, reviews, poems):
            c["article"] = a
            comments.append(c)
    comments.sort(key=lambda c: (c["ts"], c["article"], c["key"]))
    (work / "comments.db").unlink(missing_ok=True)
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    server = start_server(work, port)
    ids = {}  # (article, key) -> Isso's comment id
    try:
        for c in comments:
            name, email, site = c["who"]
            data = {"text": c["text"], "author": name, "email": email, "website": site, "parent": None}
            if c["answers"] is not None:
                data["parent"] = ids[(c["article"], c["answers"])]
            rv = post_comment(origin, posts[c["article"]]["path"], data)
            ids[(c["article"], c["key"])] = rv["id"]
            c["id"] = rv["id"]
            c["isso_parent"] = rv["parent"]
    finally:
        stop_server(server)

    # Isso stores the insert's time as `created`: the planned times instead.
    db = sqlite3.connect(work / "comments.db")
    with db:
        for c in comments:
            db.execute("UPDATE comments SET created = ? WHERE id = ?", (float(c["ts"]), c["id"]))
    db.close()

    # ---- truth, from Hexo's posts and Isso's database and renderer ----
    import logging

    from isso import config
    from isso.db import SQLite3
    from isso.html import Markup

    logging.disable(logging.INFO)  # Isso logs its Markdown set-up at INFO

    conf = config.load(config.default_file(), str(HERE / "isso.cfg"))
    isso_db = SQLite3(str(work / "comments.db"), conf)
    markup = Markup(conf)

    truth = {
        "package": "isso",
        "version": f"Isso {md.version('isso')}, Hexo {loaded['hexo']} (hexo-theme-landscape 1.1.0)",
        "family": "blog comments as JSON (hybrid: static Hexo articles, Isso's comment API)",
        "home": "/",
        "time_zone": "+08:00",
        # comments: `created` (Unix seconds) in the API, <time datetime="…Z"> to the second in
        # the embed (its text is relative: "3 天前"); articles: <time datetime> to the second
        "time_precision": "second",
        # What the pages (the article's HTML and the embed's drawing of the API's JSON) show of
        # each post's conversation fields: a comment's id (div#isso-N, the JSON's id), its
        # author's web site (the name links to it), what it answers by nesting (the JSON's
        # parent; a reply drawn in its top-level comment's .isso-follow-up). No user id, no
        # quotes, no edit time; votes only as likes − dislikes (none are cast).
        "shows": comment_shows(likes=False),
        "settings": {
            "hexo": {k: loaded.get(k) for k in ("hexo", "timezone")} | {"per_page": 10, "permalink": ":year/:month/:day/:title/", "theme": "landscape"},
            "isso": {
                "sorting": "oldest",
                "max-comments-top": "inf",
                "max-comments-nested": MAX_REPLIES,
                "moderation": conf.getboolean("moderation", "enabled"),
                "renderer": conf.get("markup", "renderer"),
            },
            "embed": '<script data-isso="/isso/" src="/isso/js/embed.min.js"></script> <section id="isso-thread"></section>',
        },
        "boards": [],
        "threads": [],
    }
    truth["boards"] = boards_of(loaded)
    board_of = {b["name"]: b["id"] for b in truth["boards"]}
    n_replies = n_flattened = 0
    for a, p in enumerate(posts):
        posts_out = [article_post(p)]
        rows = list(isso_db.comments.fetch(p["path"], mode=5, parent="any", order_by="id", asc=1))
        kids = {}
        for r in rows:
            kids.setdefault(r["parent"], []).append(r)
        for v in kids.values():
            v.sort(key=lambda r: (r["created"], r["id"]))
        order = []
        for top in kids.get(None, []):
            order.append((top, 1))
            if len(kids.get(top["id"], [])) > MAX_REPLIES:
                sys.exit(f"fill: comment {top['id']} has more replies than the embed shows at once")
            for r in kids.get(top["id"], []):
                if kids.get(r["id"]):
                    sys.exit(f"fill: comment {r['id']} is a reply with replies: Isso nests one level")
                order.append((r, 2))
        if len(order) != len(rows):
            sys.exit(f"fill: {p['path']}: {len(rows)} comments, {len(order)} reached from the top")
        for r, depth in order:
            v = post_view(markup.render(r["text"]))
            if v["quotes"]:
                sys.exit(f"fill: comment {r['id']} renders a blockquote")
            posts_out.append(
                {
                    "id": str(r["id"]),
                    # the embed inserts the stored (HTML-escaped) name as HTML: a reader sees it unescaped
                    "author": html.unescape(r["author"]),
                    "author_id": None,
                    "author_url": html.unescape(r["website"]) if r["website"] else None,
                    "time": wall(r["created"]),
                    "edited": None,
                    "likes": None,
                    "reply_to": str(r["parent"]) if r["parent"] is not None else None,
                    "depth": depth,
                    "shown": v["shown"],
                    "paragraphs": v["paragraphs"],
                    "intros": v["intros"],
                    "quotes": [],
                }
            )
            n_replies += r["parent"] is not None
        n_flattened += sum(1 for c in comments if c["article"] == a and c["answers"] is not None and c["top"] != c["answers"])
        slug = p["path"].rstrip("/").rsplit("/", 1)[-1]
        truth["threads"].append(
            {
                "id": slug_id(slug),
                "board": board_of[p["categories"][0]],
                "title": p["title"],
                "path": p["path"],
                "source": p["source"],
                "comments_key": p["path"],
                "posts": posts_out,
            }
        )
    write_truth(work, truth, f"{n_replies} of them replies, {n_flattened} of those posted to a reply and drawn under its top-level comment")


if __name__ == "__main__":
    main()
