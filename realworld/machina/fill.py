# Fills a fresh django-machina database through machina's own models, then writes truth.json
# from what the database holds. Run by `bed.sh fill` as `manage.py shell < fill.py`, with
# BED_WORK (the work directory) and BED_CORPUS (crates/luntan-fixture/corpus) in the environment.
import datetime
import os
import random
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse

from machina.apps.forum.models import Forum
from machina.apps.forum_conversation.models import Post, Topic
from machina.apps.forum_permission.models import ForumPermission, UserForumPermission

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, add_thread, corpus, markdown_body, plain_line, plan_thread, post_times, post_view, thread_plan, thread_title, truth_head, truth_post, write_forum_truth  # noqa: E402
TZ = ZoneInfo('Asia/Shanghai')
User = get_user_model()

# Lines that Markdown would read as markup are left out, so that a post shows its text as typed;
# the special characters a crawler must decode are put in on purpose (truthlib.TRICKY).
MARKUP = set('*_`<>&#[]\\~|!')
reviews, poems = corpus(CORPUS, lambda line: plain_line(line, MARKUP))

rng = random.Random(34)


def body(kind):
    return markdown_body(rng, kind, reviews, poems)


@transaction.atomic
def fill():
    """Fills the database; returns what each quoting post says of its quote."""
    # Anonymous visitors (the crawler) and members may see and read every forum.
    for codename in ['can_see_forum', 'can_read_forum']:
        perm = ForumPermission.objects.get(codename=codename)
        UserForumPermission.objects.create(permission=perm, anonymous_user=True, has_perm=True)
        UserForumPermission.objects.create(permission=perm, authenticated_user=True, has_perm=True)

    users = []
    for i, name in enumerate(NAMES, 1):
        u = User.objects.create_user(username='user%02d' % i, password='bed-%02d' % i,
                                     email='user%02d@example.org' % i)
        u.first_name = name
        u.save()
        users.append(u)

    cat1 = Forum.objects.create(name='读书与生活', type=Forum.FORUM_CAT)
    cat2 = Forum.objects.create(name='古典文学', type=Forum.FORUM_CAT)
    boards = [
        # (forum, kind, number of threads)
        (Forum.objects.create(parent=cat1, name='书评天地', type=Forum.FORUM_POST,
                              description='读后感、书评与推荐'), 'review', 27),
        (Forum.objects.create(parent=cat1, name='数码与购物', type=Forum.FORUM_POST,
                              description='电脑、手机与网购心得'), 'review', 14),
        (Forum.objects.create(parent=cat1, name='酒店旅行', type=Forum.FORUM_POST,
                              description='住店与出游'), 'review', 12),
        (Forum.objects.create(parent=cat2, name='唐詩選讀', type=Forum.FORUM_POST,
                              description='唐詩原文與賞析'), 'poem', 13),
    ]

    # Which threads are long (≥ 3 pages of 15 posts): two in the first board, the rest spread.
    plan, long_idx = thread_plan(rng, boards, 7)

    # Quotes: machina 1.3.1 has no quote button of its own; its editor
    # (EasyMDE) has one, which puts "> " before every line selected. A
    # reply quotes an earlier post of its page (15 posts a page) whole:
    # its text as "> " lines, a blank line, then the reply. The plan is
    # drawn from its own random stream once the thread sizes are known,
    # so every other word of the fill is as before.
    qrng = random.Random(3434)
    erng = random.Random(3535)  # edits
    quote_facts = {}  # the quoting post's id: what it says of the quoted one

    start0 = datetime.datetime(2025, 1, 3, 8, 0, 0, tzinfo=TZ)
    span = int((datetime.datetime(2026, 9, 30, tzinfo=TZ) - start0).total_seconds())
    for idx, (forum, kind) in enumerate(plan):
        if idx in long_idx:
            nposts = rng.randint(31, 52)
        else:
            nposts = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
        subject, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, nposts)
        topic = Topic.objects.create(forum=forum, subject=subject, type=Topic.TOPIC_POST,
                                     status=Topic.TOPIC_UNLOCKED, poster=rng.choice(users))
        posters = [topic.poster] + [rng.choice(users) for _ in range(nposts - 1)]
        chosen = plan_thread(qrng, nposts, per_page=15)
        contents = []
        for k in range(nposts):
            content = ptext if (kind == 'poem' and k == 0) else body(kind)
            if k in chosen:
                quoted = contents[chosen[k]].strip().split('\n')
                content = '\n'.join('> ' + line for line in quoted) + '\n\n' + content
            contents.append(content)
            post = Post.objects.create(topic=topic, poster=posters[k], content=content,
                                       subject=subject if k == 0 else 'Re: ' + subject)
            if k in chosen:
                # Nothing on the page says whose words or which post.
                quote_facts[post.pk] = [{'of': None, 'author': None, 'nested': chosen[k] in chosen}]
        # Fixed past times, through the ORM (update() skips auto_now/auto_now_add).
        posts = list(topic.posts.order_by('id'))
        for p, when in zip(posts, times):
            Post.objects.filter(pk=p.pk).update(created=when, updated=when)
            # About one post in twenty edited by its author minutes to hours after, as
            # machina's update view leaves it (updated, updated_by, updates_count; the page
            # then says "最近编辑 <name> … <date>, edited 1 time in total.").
            if erng.random() < 0.05:
                Post.objects.filter(pk=p.pk).update(
                    updated=when + datetime.timedelta(seconds=erng.randint(120, 10 * 3600)),
                    updated_by=p.poster, updates_count=1)
        Topic.objects.filter(pk=topic.pk).update(created=times[0], updated=times[-1])
        topic.refresh_from_db()
        topic.update_trackers()  # last_post, last_post_on, then the forum's trackers
    for forum in Forum.objects.all():
        forum.refresh_from_db()
        forum.update_trackers()
    return quote_facts


def truth(quote_facts):
    # What its thread pages show of each post's conversation fields: the post id
    # (div.card.post's id), the author's profile (/forum/member/profile/<uid>/, the uid in
    # it); a quote is a bare blockquote, naming neither its post nor its author.
    out = truth_head('django-machina', '1.3.1', 'classic', reverse('forum:index'), 'minute',
                     {'post_id', 'author_id', 'author_url', 'edited'})
    for f in Forum.objects.filter(type=Forum.FORUM_POST).order_by('tree_id', 'lft'):
        out['boards'].append({'id': str(f.pk), 'name': f.name,
                              'path': reverse('forum:forum', args=[f.slug, f.pk])})
    mismatches = 0
    for t in Topic.objects.filter(approved=True).select_related('forum').order_by('id'):
        posts = []
        for p in t.posts.filter(approved=True).select_related('poster').order_by('created', 'id'):
            v = post_view(str(p.content.rendered))
            facts = quote_facts.get(p.pk, [])
            source = [s.strip() for s in p.content.raw.split('\n\n') if not s.startswith('>')]
            if v['paragraphs'] != source:
                mismatches += 1
            posts.append(truth_post(
                v, facts,
                id=str(p.pk),
                author=p.poster.get_full_name(),
                author_id=str(p.poster.pk),
                author_url=reverse('forum_member:profile', args=[p.poster.pk]),
                time=p.created.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds'),
                edited=(p.updated.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds')
                        if p.updates_count else None),
            ))
        add_thread(out, t.pk, t.forum_id, t.subject, reverse('forum_conversation:topic', args=[t.forum.slug, t.forum_id, t.slug, t.pk]), posts)
    write_forum_truth(WORK, out, 15, User.objects.count(), mismatches)


truth(fill())
