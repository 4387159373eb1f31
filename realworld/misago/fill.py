# Fills a fresh Misago database through Misago's own JSON API, the one its React pages call
# (Django's test client, logged in as each member: start a thread, reply, the quote button's
# editor call, edit, like), then writes truth.json from what the database holds and Misago's
# own rendering. Run by `bed.sh fill` as `manage.py shell < fill.py`, with BED_WORK (the work
# directory), BED_CORPUS (crates/luntan-fixture/corpus) and BED_REALWORLD (realworld/) in the
# environment.
import datetime
import json
import os
import random
import re
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import translation

from misago.acl.cache import clear_acl_cache
from misago.cache.versions import invalidate_all_caches
from misago.categories.models import Category, RoleCategoryACL
from misago.conf.cache import clear_settings_cache
from misago.conf.models import Setting
from misago.conf.shortcuts import get_dynamic_settings
from misago.threads.checksums import update_post_checksum
from misago.threads.models import Post, PostEdit, PostLike, Thread
from misago.users.models import Online
from misago.users.setupnewuser import setup_new_user

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, add_thread, corpus, markdown_body, plain_line, plan_thread, post_times, post_view, thread_plan, thread_title, truth_head, truth_post, write_forum_truth  # noqa: E402

TZ = ZoneInfo('Asia/Shanghai')
User = get_user_model()
# Misago's posts_per_page and posts_per_page_orphans (18 and 6, its defaults, kept): its
# PostsPaginator shows 17 posts a page and repeats a page's last post at the top of the next
# (18 on every page but the last, which takes up to 7 more): a thread of more than 24 posts has
# pages. NEW_PER_PAGE: the posts a page adds, what a quote's "own page" is counted in.
PER_PAGE, ORPHANS = 18, 6
NEW_PER_PAGE = PER_PAGE - 1
THREADS_PER_PAGE = 10  # Misago's threads_per_page (26 by default): lists with later pages

# Lines that Misago's markup would read as markup are left out, so that a post shows its text
# as typed: Markdown's and BBCode's characters ('[' opens [b], [quote], [url]…), '@' (a
# mention), '!(' (Misago's short image), '~~' (strike), links (Misago links bare URLs and
# domains). The characters a crawler must decode are put in on purpose (truthlib.TRICKY).
MARKUP = set('*_`<>&#[]\\~|!@$^')
DOMAIN = re.compile(r'[A-Za-z0-9-]+\.[A-Za-z]{2,}')


def plain(line):
    s = line.strip()
    return plain_line(s, MARKUP) and not DOMAIN.search(s) and len(s) <= 400


reviews, poems = corpus(CORPUS, plain)
rng = random.Random(61)

# Misago shows a member by username. Its sign-up and admin forms take Latin letters, digits and
# "_" only (validate_username_content); its user manager (create_user, what createsuperuser
# calls) takes any name: the members are created with it, their names Chinese, their profile
# slugs Unidecode's pinyin (张伟 → /u/zhang-wei/<id>/).
NAMES = NAMES + ['青山客', '清风徐来']


def poem_lines(text):
    """A poem as one paragraph, a line per sentence (Misago's nl2br: <br> between)."""
    return re.sub(r'([。？！])(?=\S)', '\\1\n', text)


def body(kind):
    return markdown_body(rng, kind, reviews, poems)


def wall(d):
    return d.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds')


def api(client, method, url, data=None):
    """One call of Misago's JSON API as its pages make it; the answer's JSON."""
    r = getattr(client, method)(url, data=json.dumps(data) if data is not None else None,
                                content_type='application/json')
    if r.status_code != 200:
        raise RuntimeError(f'{method.upper()} {url}: {r.status_code} {r.content[:300]!r}')
    return r.json()


def member(user):
    """A client logged in as `user`, free to post again (Misago refuses a second post within
    three seconds: FloodProtectionMiddleware; a member typing a reply takes longer)."""
    User.objects.filter(pk=user.pk).update(last_posted_on=None)
    c = Client()
    c.force_login(user)
    return c


def setup():
    """The forum's settings, categories and members, as Misago's admin makes them."""
    for name, value in [('forum_name', '墨香论坛'), ('logo_text', '墨香论坛'),
                        ('threads_per_page', str(THREADS_PER_PAGE)),
                        # Titles of two characters or more (5 by default: a Latin measure; a
                        # review's first clause is often four Chinese characters)
                        ('thread_title_length_min', '2'),
                        # Members' avatars drawn here (the default asks gravatar.com first)
                        ('default_avatar', 'dynamic')]:
        Setting.objects.change_setting(name, dry_value=value)
    clear_settings_cache()

    # Misago's migrations make the threads tree's root and "First category" (pk 3): renamed, and
    # two more after it whose permissions are copied from it (the admin's "copy permissions").
    first = Category.objects.get(slug='first-category')
    root = first.parent
    specs = [('书评天地', '读后感、书评与推荐', 'review', 11),
             ('数码与购物', '电脑、手机与网购心得', 'review', 8),
             ('唐詩選讀', '唐詩原文與賞析', 'poem', 7)]
    cats = []
    for i, (name, desc, kind, n) in enumerate(specs):
        cat = first if i == 0 else Category()
        cat.set_name(name)
        cat.description = desc
        if i == 0:
            cat.save()
        else:
            cat.insert_at(root, position='last-child', save=True)
            RoleCategoryACL.objects.bulk_create(
                RoleCategoryACL(role_id=a.role_id, category=cat, category_role_id=a.category_role_id)
                for a in first.category_role_set.all())
        cats.append((cat, kind, n))
    Category.objects.clear_cache()
    clear_acl_cache()

    joined = datetime.datetime(2024, 12, 1, 10, 0, tzinfo=TZ)
    users = []
    settings = get_dynamic_settings()
    for i, name in enumerate(NAMES, 1):
        when = joined + datetime.timedelta(days=i, minutes=7 * i)
        u = User.objects.create_user(name, 'user%02d@example.org' % i, 'bed-pass-%02d' % i, joined_on=when)
        setup_new_user(settings, u)  # what createsuperuser and the admin's new user do next
        users.append(u)
    return cats, users


def fill():
    """Fills the database; returns what each quoting post says of its quotes."""
    cats, users = setup()
    plan, long_idx = thread_plan(rng, cats, 6)

    # Quotes, Misago's way: its quote button (posts-list/post/footer.js, Quote) opens the reply
    # editor with the thread's editor API asked for the post (GET
    # /api/threads/<id>/editor/?reply=<pid>: the post's source and its poster's name), and puts
    # '[quote="@name"]\n' + source + '\n[/quote]' in it (posting/reply.js); the reply is typed
    # after a blank line. The plan is drawn from its own random stream once the thread sizes
    # are known (truthlib.plan_thread).
    qrng = random.Random(6161)
    erng = random.Random(6262)  # edits
    lrng = random.Random(6363)  # likes
    quote_facts = {}

    start0 = datetime.datetime(2025, 2, 3, 8, 0, 0, tzinfo=TZ)
    span = int((datetime.datetime(2026, 9, 30, tzinfo=TZ) - start0).total_seconds())
    for idx, (cat, kind) in enumerate(plan):
        nposts = rng.randint(25, 50) if idx in long_idx else rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
        title, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, nposts)
        posters = [rng.choice(users) for _ in range(nposts)]
        chosen = plan_thread(qrng, nposts, per_page=NEW_PER_PAGE)

        posts = []
        thread_id = None
        for k in range(nposts):
            content = poem_lines(ptext) if (kind == 'poem' and k == 0) else body(kind)
            c = member(posters[k])
            if k == 0:
                data = api(c, 'post', '/api/threads/', {'category': cat.pk, 'title': title, 'post': content})
                thread_id = data['id']
                thread = Thread.objects.get(pk=thread_id)
                pid, editor = thread.first_post_id, thread.get_editor_api_url()
            else:
                if k in chosen:
                    q = api(c, 'get', '%s?reply=%d' % (editor, posts[chosen[k]]))
                    content = '[quote="@' + q['poster'] + '"]\n' + q['post'] + '\n[/quote]\n\n' + content
                data = api(c, 'post', '/api/threads/%d/posts/' % thread_id, {'post': content})
                pid = data['id']
            if k in chosen:
                quoted = Post.objects.get(pk=posts[chosen[k]])
                quote_facts[pid] = [{'of': None, 'author': quoted.poster_name, 'nested': chosen[k] in chosen}]
            Post.objects.filter(pk=pid).update(posted_on=times[k], updated_on=times[k])
            # About one post in twenty edited by its author minutes to hours later, through the
            # edit API (a PostEdit record, edits + 1, updated_on and last_editor).
            if erng.random() < 0.05:
                post = Post.objects.get(pk=pid)
                new = post.original + '\n\n补充：' + erng.choice(reviews)
                api(member(posters[k]), 'put', '/api/threads/%d/posts/%d/' % (thread_id, pid), {'post': new})
                edited = times[k] + datetime.timedelta(seconds=erng.randint(120, 10 * 3600))
                Post.objects.filter(pk=pid).update(updated_on=edited)
                PostEdit.objects.filter(post_id=pid).update(edited_on=edited)
            post = Post.objects.get(pk=pid)
            update_post_checksum(post)
            post.save(update_fields=['checksum'])
            posts.append(pid)

        # About one post in seven liked by one to three other members, a few hours after it was
        # written (the like API: PATCH is-liked, a PostLike, likes and last_likes).
        for k, pid in enumerate(posts):
            if lrng.random() < 1 / 7:
                others = [u for u in users if u.pk != posters[k].pk]
                for u in lrng.sample(others, lrng.randint(1, 3)):
                    api(member(u), 'patch', '/api/threads/%d/posts/%d/' % (thread_id, pid),
                        [{'op': 'replace', 'path': 'is-liked', 'value': True}])
                    PostLike.objects.filter(post_id=pid, liker=u).update(
                        liked_on=times[k] + datetime.timedelta(seconds=lrng.randint(600, 20 * 3600)))

        thread = Thread.objects.get(pk=thread_id)
        thread.synchronize()
        thread.save()

    for cat, _, _ in cats:
        cat.synchronize()
        cat.save()
    # The members' last post, login and click as the fill's last times, not today.
    for u in users:
        last = Post.objects.filter(poster=u).order_by('-posted_on').first()
        when = last.posted_on if last else u.joined_on
        User.objects.filter(pk=u.pk).update(last_login=when, last_posted_on=when if last else None)
        Online.objects.filter(user=u).update(last_click=when)
    invalidate_all_caches()
    return quote_facts


# A quote's head (finalize_markup: <div class="quote-heading" data-noquote="1">@name 写道：</div>)
# sits in the quote's <aside>, before its <blockquote>: a line a reader sees, no <p>.
QUOTE_TAGS = re.compile(r'<aside class="quote-block">|</aside>|<div class="quote-heading" data-noquote="1">(.*?)</div>', re.S)


def heads(html, outer):
    """The post's HTML with each quote head a paragraph, the outermost ones left out where
    `outer` is False: what truthlib.post_view reads (it takes no text outside a <p>)."""
    out, depth, at = [], 0, 0
    for m in QUOTE_TAGS.finditer(html):
        out.append(html[at:m.start()])
        at = m.end()
        tag = m.group(0)
        if tag.startswith('<aside'):
            depth += 1
            out.append(tag)
        elif tag == '</aside>':
            depth -= 1
            out.append(tag)
        elif outer or depth > 1:
            out.append('<p>%s</p>' % m.group(1))
    out.append(html[at:])
    return ''.join(out)


def truth(quote_facts):
    # What its thread pages show of each post's conversation fields, to a visitor not logged
    # in, in the HTML the server sends: the post's id (li#post-<id>), the author's profile
    # (/u/<pinyin slug>/<uid>/, the uid in it); a quote names its author ("@张伟 写道：" and
    # data-author="@张伟"), not the post; a liked post its likes ("李娜喜欢此内容。", the
    # count in p.likes-compact; a post nobody liked shows nothing: truth's likes null). An
    # edit is not on the server's page (React draws "edited N times" from the page's JSON;
    # the time only in the edits dialog): edited false. Misago records no reply-to.
    out = truth_head('misago', '0.39.6', 'modern', '/', 'second',
                     {'post_id', 'author_id', 'author_url', 'quote_author', 'likes'})
    for c in Category.objects.all_categories().order_by('lft'):
        out['boards'].append({'id': str(c.pk), 'name': c.name, 'path': c.get_absolute_url()})
    mismatches = 0
    for t in Thread.objects.select_related('category').order_by('id'):
        posts = []
        for p in Post.objects.filter(thread=t, is_event=False).select_related('poster', 'thread', 'category').order_by('id'):
            assert p.is_valid, p.pk
            with translation.override('zh-hans'):
                html = p.content
            v = post_view(heads(html, outer=False))
            shown = post_view(heads(html, outer=True))['shown']
            facts = quote_facts.get(p.pk, [])
            source = [line.strip() for block in re.sub(r'\[quote=.*\[/quote\]', '', p.original, flags=re.S).split('\n\n')
                      for line in block.split('\n') if line.strip()]
            if v['paragraphs'] != source:
                mismatches += 1
            edit = PostEdit.objects.filter(post=p).order_by('-edited_on').first()
            posts.append(truth_post(
                dict(v, shown=shown), facts,
                id=str(p.pk),
                author=p.poster_name,
                author_id=str(p.poster_id),
                author_url=p.poster.get_absolute_url(),
                time=wall(p.posted_on),
                edited=wall(edit.edited_on) if edit else None,
                likes=p.likes or None,
            ))
        add_thread(out, t.pk, t.category_id, t.title, t.get_absolute_url(), posts)
    write_forum_truth(WORK, out, PER_PAGE + ORPHANS, User.objects.count(), mismatches)


truth(fill())
