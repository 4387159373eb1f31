# Fill a fresh FlaskBB 2.0.2 database through its own models, then write
# truth.json from what the database holds.
#
# Run by bed.sh as: WORK/venv/bin/python fill.py WORK CORPUS_DIR
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

WORK = os.path.abspath(sys.argv[1])
CORPUS = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from truthlib import plan_quotes, post_view  # noqa: E402

from flask import url_for  # noqa: E402
from flaskbb import create_app  # noqa: E402
from flaskbb.extensions import db  # noqa: E402
from flaskbb.forum.models import Category, Forum, Post, Topic  # noqa: E402
from flaskbb.management.models import Setting  # noqa: E402
from flaskbb.user.models import Group, User  # noqa: E402
from flaskbb.utils.populate import (create_default_groups,  # noqa: E402
                                    create_default_settings, create_latest_db)
from flaskbb.utils.helpers import format_quote  # noqa: E402
from flaskbb.utils.settings import flaskbb_config  # noqa: E402

UTC = timezone.utc
rng = random.Random(34)

# ---------------------------------------------------------------- corpus


def plain(line):
    """A line that Markdown renders as itself: no markup characters, no
    @mentions (FlaskBB links them), no URLs, no list or quote starts."""
    if not line or len(line) < 12:
        return False
    if any(c in line for c in "*_`#[]\\~|@<>&\"'{}"):
        return False
    if "http" in line or "www" in line:
        return False
    if line[0] in "-+=>0123456789 \t":
        return False
    return True


with open(os.path.join(CORPUS, "reviews.txt"), encoding="utf-8") as f:
    reviews = [l.strip() for l in f if plain(l.strip())]
poems = []
with open(os.path.join(CORPUS, "poems.tsv"), encoding="utf-8") as f:
    for l in f:
        parts = l.rstrip("\n").split("\t")
        if len(parts) == 3 and plain(parts[2]) and plain(parts[0] + "標題題目"):
            poems.append(parts)
reviews = [r[:300] for r in reviews]

SPECIAL = ' 他说"真不错" & <推荐> 😀'


def paragraph():
    if rng.random() < 0.7:
        return rng.choice(reviews)
    return rng.choice(poems)[2]


def body():
    paras = [paragraph() for _ in range(rng.choice([1, 1, 2, 2, 3]))]
    if rng.random() < 0.2:
        i = rng.randrange(len(paras))
        paras[i] = paras[i] + SPECIAL
    # Markdown paragraphs: a blank line between them (FlaskBB's editor).
    return "\n\n".join(paras)


def title():
    if rng.random() < 0.5:
        return rng.choice(poems)[0]
    r = rng.choice(reviews)
    cut = r[:rng.randint(8, 20)]
    return cut.rstrip("，。！？、,.!? ")


USERS = [
    ("青山客", "qingshanke"), ("白鹭洲", "bailuzhou"), ("听雨轩", "tingyuxuan"),
    ("李小龙", "lixiaolong"), ("王大锤", "wangdachui"), ("赵晓月", "zhaoxiaoyue"),
    ("陈默", "chenmo"), ("刘一手", "liuyishou"), ("孙悟饭", "sunwufan"),
    ("周末读书", "zhoumodushu"), ("吴钩霜雪", "wugoushuangxue"), ("郑在学习", "zhengzaixuexi"),
]

BOARDS = [
    # (category title, [(forum title, description, topics)])
    ("读书与生活", [
        ("书评天地", "好书推荐与读后感", 26),
        ("生活杂谈", "柴米油盐，家长里短", 14),
    ]),
    ("诗词歌赋", [
        ("古典诗词", "唐诗宋词元曲，吟咏欣赏", 16),
        ("灌水乐园", "随便聊聊", 10),
    ]),
]

# ---------------------------------------------------------------- app

cfg = os.path.join(WORK, "flaskbb.cfg")
app = create_app(cfg, instance_path=os.path.join(WORK, "instance"))

START = datetime(2025, 1, 3, 8, 0, 0, tzinfo=UTC)
END = datetime(2026, 11, 20, 0, 0, 0, tzinfo=UTC)

with app.app_context():
    create_latest_db()
    create_default_groups()
    create_default_settings()
    Setting.update({"default_language": "zh_CN", "project_title": "论坛测试床",
                    "project_subtitle": "FlaskBB 中文测试论坛"})
    member = Group.get_member_group()

    users = []
    for i, (name, login) in enumerate(USERS):
        u = User(username=name, email=login + "@example.org",
                 password="password-" + login, primary_group_id=member.id,
                 activated=True, language="zh_CN")
        u.save()
        u.date_joined = START - timedelta(days=30 - i)
        u.lastseen = END
        users.append(u)
    db.session.commit()

    forums = []
    for cpos, (ctitle, flist) in enumerate(BOARDS, 1):
        c = Category(title=ctitle, description=ctitle + "分区", position=cpos)
        c.save()
        for fpos, (ftitle, fdesc, ntopics) in enumerate(flist, 1):
            fo = Forum(title=ftitle, description=fdesc, category_id=c.id,
                       position=fpos)
            fo.save()
            forums.append((fo, ntopics))

    # Plan every thread: board, title, author, post times and bodies.
    plans = []
    long_left = 7
    for fo, ntopics in forums:
        for _ in range(ntopics):
            if long_left and fo.title in ("书评天地", "古典诗词") and rng.random() < 0.35:
                n = rng.randint(21, 34)
                long_left -= 1
            else:
                n = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
            t = START + timedelta(seconds=rng.randrange(int((END - START).total_seconds() * 0.8)))
            times = []
            for _ in range(n):
                times.append(t)
                t = t + timedelta(seconds=rng.randint(60, 3 * 86400 if n < 10 else 40000))
            posts = [(rng.choice(users), tm, body()) for tm in times]
            plans.append({"forum": fo, "title": title(), "posts": posts})
    assert long_left == 0, long_left

    # Quotes, as FlaskBB's quote button writes them (format_quote, the text
    # `/post/<id>/raw` hands the editor): "**[name](/user/name) wrote:**",
    # the quoted post's whole text as "> " lines, then a blank line and the
    # reply. A reply quotes a post on its own page (10 posts a page).
    # Their own random stream: every other word of the fill is as before.
    quoting = plan_quotes(3434, [len(p["posts"]) for p in plans], per_page=10)
    with app.test_request_context("/"):
        for t, chosen in quoting.items():
            posts = plans[t]["posts"]
            plans[t]["quotes"] = chosen
            for k, j in chosen.items():
                u, tm, text = posts[k]
                posts[k] = (u, tm, format_quote(posts[j][0].username, posts[j][2]) + "\n" + text)

    # Create posts in time order across the whole forum, as they would have
    # been written; then set each post's time through the ORM.
    events = []
    for p in plans:
        for k, (u, tm, text) in enumerate(p["posts"]):
            events.append((tm, id(p), k, p))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    for tm, _, k, p in events:
        u, _, text = p["posts"][k]
        post = Post(content=text)
        if k == 0:
            topic = Topic(title=p["title"])
            topic.save(user=u, forum=p["forum"], post=post)
            topic.date_created = tm
            p["topic"] = topic
        else:
            topic = p["topic"]
            post.save(user=u, topic=topic)
        p.setdefault("ids", {})[k] = post.id
        p.setdefault("objs", {})[k] = post
        post.date_created = tm
        topic.last_updated = tm
        db.session.commit()

    for fo, _ in forums:
        fo.recalculate(last_post=True)
        fo.last_post_created = fo.last_post.date_created
    # Edits: about one post in twenty edited by its author minutes to hours
    # after, as FlaskBB's edit view leaves it (date_modified, modified_by;
    # the page then says "(Last modified: <date> by <name>.)"). A random
    # stream of its own, as for quotes.
    erng = random.Random(3535)
    for p in plans:
        for k, (u, tm, _) in enumerate(p["posts"]):
            if erng.random() < 0.05:
                post = p["objs"][k]
                post.date_modified = tm + timedelta(seconds=erng.randint(120, 10 * 3600))
                post.modified_by = u.username
    db.session.commit()

    # Each quoting post's id: the quoted post's author, as the head shows
    # him (the head links his profile, not the post: no "of").
    quote_facts = {}
    for p in plans:
        for k, j in p.get("quotes", {}).items():
            quote_facts[p["ids"][k]] = [{"of": None, "author": p["posts"][j][0].username,
                                         "nested": j in p["quotes"]}]
    for u in users:
        u.post_count = Post.query.filter_by(user_id=u.id).count()
    db.session.commit()

    # ------------------------------------------------------------ truth
    flaskbb_config.__init__()  # pick up the saved settings
    render = app.jinja_env.filters["markup"]

    def view(post):
        """The post as a reader sees it (truthlib.post_view), with its id,
        its author's id and its quotes."""
        v = post_view(str(render(post.content)))
        facts = quote_facts.get(post.id, [])
        assert len(facts) == len(v["quotes"]), (post.id, facts, v["quotes"])
        return {"id": str(post.id), "author": post.username, "author_id": str(post.user_id),
                "author_url": url_for("user.profile", username=post.username),
                "time": wall(post.date_created), "paragraphs": v["paragraphs"],
                "edited": wall(post.date_modified) if post.date_modified else None,
                "shown": v["shown"], "intros": v["intros"],
                "quotes": [dict(f, text=q) for f, q in zip(facts, v["quotes"])]}

    def wall(dt):
        # FlaskBB prints the stored UTC time as it is (no time zone setting).
        return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")

    truth = {"package": "FlaskBB", "version": "2.0.2", "family": "classic",
             "home": "/", "time_zone": "+00:00", "time_precision": "minute",
             # What its thread pages show of each post's conversation
             # fields: the post id (div.post-row's id), the author's profile
             # (/user/<name>), no user id anywhere; a quote's author in the
             # line before the blockquote, never the quoted post.
             "shows": {"post_id": True, "author_id": False, "author_url": True,
                       "quote_of": False, "quote_author": True, "reply_to": False,
                       "edited": True, "likes": False},
             "boards": [], "threads": []}
    with app.test_request_context("/"):
        for fo in Forum.query.order_by(Forum.id).all():
            truth["boards"].append({"id": str(fo.id), "name": fo.title,
                                    "path": fo.url})
        for t in Topic.query.order_by(Topic.id).all():
            if t.hidden:
                continue
            posts = Post.query.filter_by(topic_id=t.id).order_by(Post.id).all()
            truth["threads"].append({
                "id": str(t.id), "board": str(t.forum_id), "title": t.title,
                "path": t.url,
                "posts": [view(p) for p in posts if not p.hidden],
            })
    with open(os.path.join(WORK, "truth.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, ensure_ascii=False, indent=1)
    nposts = sum(len(t["posts"]) for t in truth["threads"])
    nquotes = sum(len(p["quotes"]) for t in truth["threads"] for p in t["posts"])
    print("boards %d threads %d posts %d users %d quotes %d" % (
        len(truth["boards"]), len(truth["threads"]), nposts, User.query.count(), nquotes))
