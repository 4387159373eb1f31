# Fills a fresh Askbot database through Askbot's own user API (what its views call:
# User.post_question, post_answer, post_comment, edit_question, edit_answer, upvote,
# accept_best_answer, each with the time it happened), then writes truth.json from what
# the database holds and what Askbot's own question view would show. Run by `bed.sh fill`
# as `manage.py shell < fill.py`, with BED_WORK (the work directory), BED_CORPUS
# (crates/luntan-fixture/corpus) and BED_REALWORLD (realworld/) in the environment.
import datetime
import os
import random
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from askbot.conf import settings as askbot_settings
from askbot.models import Post, Thread, User
from askbot.utils.translation import get_language

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, corpus, markdown_body, plain_line, post_times, post_view, thread_plan, thread_title, truth_head, write_forum_truth  # noqa: E402
TZ = ZoneInfo('Asia/Shanghai')
ANSWERS_PER_PAGE = 10  # askbot.const.ANSWERS_PAGE_SIZE (not a setting)
QUESTIONS_PER_PAGE = '10'  # the livesetting DEFAULT_QUESTIONS_PAGE_SIZE (30 by default)

# Lines that Askbot's Markdown (markdown-it) would read as markup are left out, so a post
# shows its text as typed; the characters a crawler must decode are put in on purpose
# (truthlib.TRICKY: markdown-it escapes them). Comments are at most 300 characters
# (MAX_COMMENT_LENGTH).
MARKUP = set('*_`<>&#[]\\~|!@$')


def plain(line):
    s = line.strip()
    return plain_line(s, MARKUP) and 'http' not in s and 'www.' not in s and len(s) <= 400


reviews, poems = corpus(CORPUS, plain)
short_reviews = [r for r in reviews if len(r) <= 120]

rng = random.Random(71)
NAMES = NAMES + ['青山客', '清风徐来']


def wall(d):
    return d.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds')


def comment_text():
    t = rng.choice(short_reviews)
    if rng.random() < 0.1:
        t = t + ' ' + rng.choice(['价格 < 300 & 质量 > 预期 😀', '"物有所值" & 推荐 😀'])
    return t


@transaction.atomic
def fill():
    # As the admin would set them (Askbot's live settings): 10 questions a list page so the
    # list has pages, no e-mail alerts (no mail server), more than one answer a member (as
    # Askbot's own askbot_add_test_content does).
    askbot_settings.update('APP_SHORT_NAME', '知问')
    askbot_settings.update('APP_TITLE', '知问 - 读书、购物与唐诗问答')
    askbot_settings.update('DEFAULT_QUESTIONS_PAGE_SIZE', QUESTIONS_PER_PAGE)
    askbot_settings.update('LIMIT_ONE_ANSWER_PER_USER', False)
    askbot_settings.update('ENABLE_EMAIL_ALERTS', False)
    for key in ('DEFAULT_NOTIFICATION_DELIVERY_SCHEDULE_Q_ASK', 'DEFAULT_NOTIFICATION_DELIVERY_SCHEDULE_Q_ANS',
                'DEFAULT_NOTIFICATION_DELIVERY_SCHEDULE_Q_ALL', 'DEFAULT_NOTIFICATION_DELIVERY_SCHEDULE_Q_SEL',
                'DEFAULT_NOTIFICATION_DELIVERY_SCHEDULE_M_AND_C'):
        askbot_settings.update(key, 'n')
    askbot_settings.update('REGISTRATION_RATE_LIMIT_ENABLED', False)
    assert askbot_settings.MAX_COMMENTS_TO_SHOW == 5  # kept: the rest only a script loads

    # Members: Askbot shows a member by username (Chinese here), profiles at
    # /用户/<id>/<pinyin slug>/. Each gets 500 karma first, as askbot_add_test_content
    # does, so that voting, commenting and accepting are allowed.
    lang = get_language()
    users = []
    for i, name in enumerate(NAMES, 1):
        u = User.objects.create_user(name, 'user%02d@example.org' % i)
        u.set_password('bed-%02d' % i)
        u.save()
        u.receive_reputation(500, lang)
        u.save()
        users.append(u)

    # Askbot has no categories: each question carries one tag, its "board".
    boards = [('书评', 'review', 11), ('数码购物', 'review', 8), ('唐诗', 'poem', 7)]
    plan, long_idx = thread_plan(rng, boards, 6)

    start0 = datetime.datetime(2025, 1, 3, 8, 0, 0, tzinfo=TZ)
    span = int((datetime.datetime(2026, 9, 30, tzinfo=TZ) - start0).total_seconds())
    erng = random.Random(7272)  # edits
    vrng = random.Random(7373)  # votes
    crng = random.Random(7474)  # comments
    for idx, (tag, kind) in enumerate(plan):
        nanswers = rng.randint(12, 26) if idx in long_idx else rng.choice([0, 1, 2, 2, 3, 3, 4, 5, 6])
        title, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, 1 + nanswers + 40)
        asker = rng.choice(users)
        body = ptext if ptext else markdown_body(rng, kind, reviews, poems)
        q = asker.post_question(title=title, body_text=body, tags=tag, timestamp=times[0])
        posts = [q]
        for k in range(nanswers):
            a = rng.choice([u for u in users if u.pk != asker.pk])
            posts.append(a.post_answer(question=q, body_text=markdown_body(rng, kind, reviews, poems),
                                       timestamp=times[1 + k]))
        # Comments under the question and the answers, at the times between the posts: most
        # posts none to three, about one in twelve six to eight (more than the five
        # Askbot's page shows; a script loads the rest).
        later = times[1 + nanswers:]
        for p in posts:
            r = crng.random()
            n = crng.randint(6, 8) if r < 1 / 12 else crng.choice([0, 0, 0, 1, 1, 2, 3])
            base = p.added_at
            for j in range(n):
                c_user = crng.choice(users)
                when = base + datetime.timedelta(seconds=crng.randint(120, 36 * 3600))
                base = when
                p_c = c_user.post_comment(parent_post=p, body_text=comment_text(), timestamp=when)
                # one comment in ten upvoted by one or two others
                if vrng.random() < 0.1:
                    for v in vrng.sample([u for u in users if u.pk != c_user.pk], vrng.randint(1, 2)):
                        v.upvote(p_c, timestamp=when + datetime.timedelta(minutes=vrng.randint(5, 600)))
        # About one question or answer in twelve edited by its author, minutes to hours later.
        for p in posts:
            if erng.random() < 1 / 12:
                p = Post.objects.get(pk=p.pk)
                when = p.added_at + datetime.timedelta(seconds=erng.randint(120, 10 * 3600))
                new = p.text + '\n\n补充：' + erng.choice(reviews)
                if p.post_type == 'question':
                    p.author.edit_question(question=p, title=p.thread.title, body_text=new, tags=tag,
                                           timestamp=when)
                else:
                    p.author.edit_answer(answer=p, body_text=new, timestamp=when)
        # Votes: about one question or answer in three upvoted by one to five others, so
        # the answers' order (most votes first, Askbot's default) is not the order written.
        for p in posts:
            if vrng.random() < 1 / 3:
                for v in vrng.sample([u for u in users if u.pk != p.author_id], vrng.randint(1, 5)):
                    v.upvote(p, timestamp=p.added_at + datetime.timedelta(minutes=vrng.randint(5, 3000)))
        # The asker accepts an answer in about one question in five that has two or more
        # (Askbot then shows it first, SHOW_ACCEPTED_ANSWER_FIRST).
        if nanswers >= 2 and vrng.random() < 0.2:
            best = vrng.choice(posts[1:])
            asker.accept_best_answer(answer=Post.objects.get(pk=best.pk),
                                     timestamp=posts[-1].added_at + datetime.timedelta(hours=3))


def truth():
    # What the question page shows a visitor (Askbot's `question` view, answers sorted by
    # votes, its default): the question, its first five comments, then each answer (the
    # accepted first) with its first five comments; ten answers a page. Post ids are the
    # posts' own (data-post-id), comments' too; a comment answers the post it is under.
    out = truth_head('askbot', '0.13.0', 'qa', '/', 'second',
                     {'post_id', 'author_id', 'author_url', 'reply_to', 'edited', 'likes'})
    from askbot.models import Tag
    for t in Tag.objects.order_by('pk'):
        out['boards'].append({'id': str(t.pk), 'name': t.name,
                              'path': '/问题/scope:all/sort:activity-desc/tags:%s/page:1/' % t.name})
    anon = AnonymousUser()
    max_c = askbot_settings.MAX_COMMENTS_TO_SHOW
    mismatches = hidden = 0

    def entry(p, reply_to=None, likes=None):
        nonlocal mismatches
        v = post_view(p.summary)
        if v != post_view(p.html):
            mismatches += 1
        revs = list(p.revisions.order_by('revision'))
        return {
            'id': str(p.pk),
            'author': p.author.username,
            'author_id': str(p.author_id),
            'author_url': p.author.get_profile_url(),
            'time': wall(p.added_at),
            'edited': wall(revs[-1].revised_at) if len(revs) > 1 else None,
            'likes': likes,
            'reply_to': reply_to,
            'paragraphs': v['paragraphs'], 'shown': v['shown'], 'intros': v['intros'], 'quotes': [],
        }

    for th in Thread.objects.order_by('pk'):
        question, answers, _, _ = th.get_post_data(sort_method=askbot_settings.DEFAULT_ANSWER_SORT_METHOD)
        posts = []
        for p in [question] + list(answers):
            # Questions and answers show their score, 0 too; a comment's only when above 0.
            posts.append(entry(p, likes=p.score))
            comments = p.get_cached_comments()
            hidden += max(0, len(comments) - max_c)
            for c in comments[:max_c]:
                posts.append(entry(c, reply_to=str(p.pk), likes=c.score if c.score > 0 else None))
        tag = th.tags.get()
        out['threads'].append({
            'id': str(question.pk), 'board': str(tag.pk), 'title': th.title,
            'path': question.get_absolute_url(), 'posts': posts,
            'answers': len(answers), 'comments_hidden': sum(max(0, len(p.get_cached_comments()) - max_c)
                                                            for p in [question] + list(answers)),
        })
    write_forum_truth(WORK, out, 1 + ANSWERS_PER_PAGE, User.objects.count(), mismatches)
    print('%d comments not on the server-rendered pages (beyond %d under a post; a script loads them)'
          % (hidden, max_c))


fill()
truth()
