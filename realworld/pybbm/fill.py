# Fills a fresh pybbm database through pybbm's own models and PostForm (what its add-topic,
# add-post, quote and edit views call), then writes truth.json from what the database holds
# and pybbm's own rendering. Run by `bed.sh fill` with the venv's python, with
# DJANGO_SETTINGS_MODULE (the project's settings), BED_WORK (the work directory), BED_CORPUS
# (crates/luntan-fixture/corpus) and BED_REALWORLD (realworld/) in the environment.
import datetime
import os
import random
import re
import sys
from pathlib import Path

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402

from pybb import util  # noqa: E402
from pybb.forms import PostForm  # noqa: E402
from pybb.models import Category, Forum, Post, Topic  # noqa: E402

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, add_thread, corpus, markdown_body, plain_line, plan_thread, post_times, post_view, thread_plan, thread_title, truth_head, truth_post, valid, write_forum_truth  # noqa: E402
User = get_user_model()
PER_PAGE = 10  # pybbm's PYBB_TOPIC_PAGE_SIZE (its default, kept)

# pybbm's default markup, BBCode (the `bbcode` package: HTML escaped, a line break <br />,
# links made of URLs, "..." and "--" turned into typographic entities), then its smileys
# (":)", "8)", ";)" … become <img>). A corpus line is kept when pybbm renders it as text
# alone, no tag: no "[" or "]" (BBCode), no URL, no smiley. The characters a crawler must
# decode are put in on purpose (truthlib.TRICKY); pybbm escapes them.
ENGINE = util.get_markup_engine()


def plain(line):
    s = line.strip()
    return plain_line(s, set('[]')) and len(s) <= 400 and '<' not in ENGINE.format(s)


reviews, poems = corpus(CORPUS, plain)

rng = random.Random(51)


def body(kind):
    return markdown_body(rng, kind, reviews, poems)


def wall(d):
    """A stored time, on the forum's wall clock (USE_TZ is off: stored as Beijing time)."""
    return d.isoformat(timespec='seconds')


@transaction.atomic
def fill():
    """Fills the database; returns what each quoting post says of its quotes."""
    joined = datetime.datetime(2024, 11, 20, 9, 0)
    users = []
    for i, name in enumerate(NAMES, 1):
        # pybbm shows a member by username (Profile.get_display_name), so the usernames are
        # the Chinese names, as Django's Unicode username validator allows. Saving a user makes
        # its pybbm profile and gives it add_post/add_topic (pybb.signals.user_saved).
        u = User.objects.create_user(username=name, password='bed-%02d' % i,
                                     email='user%02d@example.org' % i)
        User.objects.filter(pk=u.pk).update(date_joined=joined + datetime.timedelta(days=i))
        users.append(User.objects.get(pk=u.pk))

    reading = Category.objects.create(name='读书与生活', position=0)
    classics = Category.objects.create(name='古典文学', position=1)
    boards = [
        (Forum.objects.create(category=reading, name='书评天地', position=0,
                              description='读后感、书评与推荐'), 'review', 12),
        (Forum.objects.create(category=reading, name='数码与购物', position=1,
                              description='电脑、手机与网购心得'), 'review', 8),
        (Forum.objects.create(category=classics, name='唐詩選讀', position=0,
                              description='唐詩原文與賞析'), 'poem', 6),
    ]
    plan, long_idx = thread_plan(rng, boards, 6)

    # Quotes, pybbm's way: its quote link (/topic/<topic>/post/add/?quote_id=<post>) opens the
    # reply form holding the markup engine's quote() of the quoted post's whole source,
    # '[quote="<display name>"]<body>[/quote]\n'; the reply is typed after it. The plan comes
    # from its own random stream once the topic sizes are known (truthlib.plan_thread): every
    # long topic (more than one page) twice, a nested quote after.
    quoter = ENGINE.quote
    qrng = random.Random(5151)
    erng = random.Random(5252)  # edits
    quote_facts = {}  # the quoting post's id: what it says of its quote

    start0 = datetime.datetime(2025, 1, 3, 8, 0, 0)
    span = int((datetime.datetime(2026, 9, 30) - start0).total_seconds())
    for idx, (forum, kind) in enumerate(plan):
        nposts = rng.randint(12, 30) if idx in long_idx else rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
        subject, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, nposts)
        posters = [rng.choice(users) for _ in range(nposts)]
        chosen = plan_thread(qrng, nposts, per_page=PER_PAGE, long_from=PER_PAGE + 1)

        posts = []
        topic = None
        for k in range(nposts):
            content = ptext if (kind == 'poem' and k == 0) else body(kind)
            if k in chosen:
                q = posts[chosen[k]]
                content = quoter(q.body, util.get_pybb_profile(q.user).get_display_name()) + content
            if k == 0:
                # The add-topic view: PostForm with the forum, the subject and no poll.
                form = valid(PostForm(user=posters[k], forum=forum, ip='127.0.0.1',
                                      data={'name': subject, 'body': content, 'poll_type': 0}))
            else:
                form = valid(PostForm(user=posters[k], topic=topic, ip='127.0.0.1', data={'body': content}))
            post, topic = form.save()
            # Fixed past times (update() leaves the rest as the form saved it).
            Post.objects.filter(pk=post.pk).update(created=times[k])
            if k in chosen:
                q = posts[chosen[k]]
                quote_facts[post.pk] = [{'of': None, 'author': q.user.get_username(),
                                         'nested': chosen[k] in chosen}]
            # About one post in twenty edited by its author minutes to hours later, as pybbm's
            # edit view (PostForm with the post as instance) leaves it: the new body, rendered
            # again, and `updated`, which the page shows as "已编辑 <time>".
            if erng.random() < 0.05:
                post = Post.objects.get(pk=post.pk)
                data = {'body': post.body + '\n\n补充：' + erng.choice(reviews)}
                if k == 0:
                    data.update(name=subject, poll_type=0)
                valid(PostForm(instance=post, user=posters[k], data=data)).save()
                edited = times[k] + datetime.timedelta(seconds=erng.randint(120, 10 * 3600))
                Post.objects.filter(pk=post.pk).update(updated=edited)
            posts.append(Post.objects.select_related('user').get(pk=post.pk))
        Topic.objects.filter(pk=topic.pk).update(created=times[0])
        Topic.objects.get(pk=topic.pk).update_counters()  # post count, `updated` from the last post
    for forum, _, _ in boards:
        Forum.objects.get(pk=forum.pk).update_counters()
    return quote_facts


# pybbm's BBCode has no paragraph element: a post is text and <br />s, a quote
# '<blockquote><em>name</em><br>…</blockquote>'. A reader takes a <br> or a block element for
# the end of a paragraph, as truthlib.post_view does inside a <p>: the text runs between
# blockquote tags become <p>s. The <em> that opens an outermost quote names the quoted author
# (the quote's `author`): not quoted words, but a paragraph the post shows all the same. The
# head of a quote inside it is the quoted post's own text.
TAG = re.compile(r'<blockquote>(?:<em>(.*?)</em><br>)?|</blockquote>')


def paragraphs_of(html, heads):
    """`html` with its text runs as <p>s, the outermost quotes' heads left out unless `heads`;
    the names those heads give."""
    out, names, depth, pos = [], [], 0, 0
    for m in TAG.finditer(html):
        out.append(html[pos:m.start()])
        pos = m.end()
        if m.group(0) == '</blockquote>':
            depth -= 1
            out.append('</p></blockquote><p>')
            continue
        depth += 1
        out.append('</p><blockquote><p>')
        if depth == 1:
            names.append(m.group(1))
        if depth > 1 or heads:
            out.append(m.group(0)[len('<blockquote>'):])
    out.append(html[pos:])
    return '<p>' + ''.join(out) + '</p>', names


def view(html):
    """post_view of a post's HTML: `shown` with the quotes' heads, the quotes without; the
    names the heads give."""
    own, names = paragraphs_of(html, heads=False)
    v = post_view(own)
    v['shown'] = post_view(paragraphs_of(html, heads=True)[0])['shown']
    return v, names


def truth(quote_facts):
    # What its topic pages show of each post's conversation fields: the post's id
    # (table.post's id "post-<id>", the permalink /post/<id>/), the author's profile
    # (/users/<username>/: the name, no user id anywhere); a quote names its author
    # (<em>name</em> first in the blockquote), not the post; an edited post says when
    # ("已编辑 <time>"). No likes.
    out = truth_head('pybbm', '0.19.0', 'classic', '/', 'minute',
                     {'post_id', 'author_url', 'quote_author', 'edited'})
    for f in Forum.objects.order_by('category__position', 'position', 'pk'):
        out['boards'].append({'id': str(f.pk), 'name': f.name, 'path': f.get_absolute_url()})
    mismatches = 0
    for t in Topic.objects.select_related('forum').order_by('id'):
        posts = []
        for p in t.posts.select_related('user').order_by('created', 'id'):
            v, heads = view(p.body_html)
            facts = quote_facts.get(p.pk, [])
            assert heads == [f['author'] for f in facts], (p.pk, heads, facts)
            source = [line.strip() for line in re.sub(r'(?s)\[quote=.*\[/quote\]', '', p.body).split('\n')
                      if line.strip()]
            if v['paragraphs'] != source:
                mismatches += 1
            name = util.get_pybb_profile(p.user).get_display_name()
            posts.append(truth_post(
                v, facts,
                id=str(p.pk),
                author=name,
                author_id=str(p.user.pk),
                author_url=util.get_pybb_profile(p.user).get_absolute_url(),
                time=wall(p.created),
                edited=wall(p.updated) if p.updated else None,
            ))
        add_thread(out, t.pk, t.forum_id, t.name, t.get_absolute_url(), posts)
    write_forum_truth(WORK, out, PER_PAGE, User.objects.count(), mismatches)


truth(fill())
