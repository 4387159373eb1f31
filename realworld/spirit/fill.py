# Fills a fresh Spirit database through Spirit's own forms and helpers (what its publish,
# quote, edit, like and moderation views call), then writes truth.json from what the
# database holds and Spirit's own rendering. Run by `bed.sh fill` as
# `manage.py shell < fill.py`, with BED_WORK (the work directory), BED_CORPUS
# (crates/luntan-fixture/corpus) and BED_REALWORLD (realworld/) in the environment.
import datetime
import os
import random
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.db import transaction
from djconfig import config, reload_maybe

from spirit.admin.forms import BasicConfigForm
from spirit.category.models import Category
from spirit.comment.forms import CommentForm
from spirit.comment.history.models import CommentHistory
from spirit.comment.like.forms import LikeForm
from spirit.comment.like.models import CommentLike
from spirit.comment.models import Comment
from spirit.comment.utils import comment_posted, post_comment_update, pre_comment_update
from spirit.core.utils.markdown import quotify
from spirit.topic.forms import TopicForm
from spirit.topic.models import Topic
from spirit.user.models import UserProfile

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, add_thread, corpus, markdown_body, plain_line, plan_thread, poem_lines, post_times, post_view, thread_plan, thread_title, truth_head, truth_post, valid, write_forum_truth  # noqa: E402
TZ = ZoneInfo('Asia/Shanghai')
User = get_user_model()
PER_PAGE = 20  # Spirit's comments_per_page (its default, kept)
TOPICS_PER_PAGE = 10  # Spirit's topics_per_page (20 by default): lists of two pages

# Lines that Spirit's Markdown would read as markup are left out, so that a post shows its
# text as typed: Markdown's characters, '@' (a mention), ':' runs (emoji), '$' and '\' (math),
# links. The characters a crawler must decode are put in on purpose (truthlib.TRICKY).
MARKUP = set('*_`<>&#[]\\~|!@$')


def plain(line):
    s = line.strip()
    return plain_line(s, MARKUP) and 'http' not in s and 'www.' not in s and len(s) <= 400


reviews, poems = corpus(CORPUS, plain)

rng = random.Random(41)

# Spirit's renderer escapes HTML (it does not drop it): truthlib.TRICKY reads back as typed.
# Spirit shows a member by nickname, which is the username (set once, at sign-up, and not
# editable): the names are the usernames, Chinese, as Spirit's sign-up allows.
NAMES = NAMES + ['青山客', '清风徐来']


def body(kind):
    return markdown_body(rng, kind, reviews, poems)


def wall(d):
    return d.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds')


@transaction.atomic
def fill():
    """Fills the database; returns what each quoting comment says of its quotes."""
    # The site's name and page sizes, as Spirit's admin (BasicConfigForm) sets them.
    valid(BasicConfigForm(data={
        'site_name': '灵犀论坛', 'site_description': '读书、购物与唐诗', 'template_footer': '',
        'comments_per_page': PER_PAGE, 'topics_per_page': TOPICS_PER_PAGE})).save()
    reload_maybe()
    assert config.comments_per_page == PER_PAGE

    joined = datetime.datetime(2024, 11, 20, 9, 0, tzinfo=TZ)
    users = []
    for i, name in enumerate(NAMES, 1):
        u = User.objects.create_user(username=name, password='bed-%02d' % i,
                                     email='user%02d@example.org' % i)
        User.objects.filter(pk=u.pk).update(date_joined=joined + datetime.timedelta(days=i))
        UserProfile.objects.filter(user=u).update(is_verified=True)
        u.refresh_from_db()
        users.append(u)
    # One moderator (a shield beside the name on every comment), who closes a topic.
    moderator = users[0]
    UserProfile.objects.filter(user=moderator).update(is_moderator=True)
    moderator.refresh_from_db()

    # Spirit's migrations make "Private" (pk 1, private topics) and "Uncategorized" (pk 2);
    # the forum's own three categories come after.
    cats = [
        (Category.objects.create(title='书评天地', description='读后感、书评与推荐'), 'review', 11),
        (Category.objects.create(title='数码与购物', description='电脑、手机与网购心得'), 'review', 8),
        (Category.objects.create(title='唐詩選讀', description='唐詩原文與賞析'), 'poem', 7),
    ]
    plan, long_idx = thread_plan(rng, cats, 6)

    # Quotes, Spirit's way: its quote link (/comment/<topic>/publish/<pk>/quote/) opens the
    # editor holding quotify(comment, nickname): "> @name 评论道:", the quoted comment's whole
    # source as "> " lines, a blank line; the reply is typed after it. The plan is drawn from
    # its own random stream once the topic sizes are known (truthlib.plan_thread).
    qrng = random.Random(4141)
    erng = random.Random(4242)  # edits
    lrng = random.Random(4343)  # likes
    quote_facts = {}  # the quoting comment's id: what it says of its quote

    start0 = datetime.datetime(2025, 1, 3, 8, 0, 0, tzinfo=TZ)
    span = int((datetime.datetime(2026, 9, 30, tzinfo=TZ) - start0).total_seconds())
    closed_done = pinned_done = False
    for idx, (cat, kind) in enumerate(plan):
        nposts = rng.randint(25, 58) if idx in long_idx else rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
        subject, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, nposts)
        posters = [rng.choice(users)] + [rng.choice(users) for _ in range(nposts - 1)]
        chosen = plan_thread(qrng, nposts, per_page=PER_PAGE)

        topic = valid(TopicForm(user=posters[0], data={'title': subject, 'category': cat.pk})).save()
        comments = []
        for k in range(nposts):
            content = poem_lines(ptext) if (kind == 'poem' and k == 0) else body(kind)
            if k in chosen:
                q = comments[chosen[k]]
                content = quotify(q.comment, q.user.st.nickname) + content
            form = valid(CommentForm(user=posters[k], topic=topic, data={'comment': content}))
            c = form.save()
            comment_posted(comment=c, mentions=form.mentions)
            Comment.objects.filter(pk=c.pk).update(date=times[k])
            if k in chosen:
                q = comments[chosen[k]]
                quote_facts[c.pk] = [{'of': None, 'author': q.user.st.nickname,
                                      'nested': chosen[k] in chosen}]
            # About one comment in twenty edited by its author minutes to hours later, as
            # Spirit's update view leaves it: the first history entry (the original, at the
            # comment's date), the new text, modified_count + 1, a second history entry.
            if erng.random() < 0.05:
                c = Comment.objects.get(pk=c.pk)
                new = c.comment + '\n\n补充：' + erng.choice(reviews)
                form = valid(CommentForm(data={'comment': new}, instance=c))
                pre_comment_update(comment=Comment.objects.get(pk=c.pk))
                c = form.save()
                post_comment_update(comment=c)
                edited = times[k] + datetime.timedelta(seconds=erng.randint(120, 10 * 3600))
                CommentHistory.objects.filter(comment_fk=c, date__gt=times[k]).update(date=edited)
            comments.append(Comment.objects.select_related('user__st').get(pk=c.pk))
        Topic.objects.filter(pk=topic.pk).update(date=times[0], last_active=times[-1],
                                                 reindex_at=times[-1])
        # Moderation, as Spirit's moderate views do it: the first long topic is closed by the
        # moderator after its last comment, the first short topic of three comments or more
        # pinned after its first. Each leaves an action item among the comments
        # (div.comments_list__item: "张伟 关闭了主题 …"), which is no one's post.
        if idx in long_idx and not closed_done:
            Topic.objects.filter(pk=topic.pk).update(is_closed=True)
            a = Comment.create_moderation_action(user=moderator, topic=topic, action=Comment.CLOSED)
            Comment.objects.filter(pk=a.pk).update(date=times[-1] + datetime.timedelta(hours=2))
            closed_done = True
        elif idx not in long_idx and nposts >= 3 and not pinned_done:
            Topic.objects.filter(pk=topic.pk).update(is_pinned=True)
            a = Comment.create_moderation_action(user=moderator, topic=topic, action=Comment.PINNED)
            Comment.objects.filter(pk=a.pk).update(date=times[0] + datetime.timedelta(seconds=30))
            pinned_done = True

        # About one comment in seven liked, by one to three other members (Spirit's like view:
        # a CommentLike, then likes_count + 1), a few hours after it was written.
        for k, c in enumerate(comments):
            if lrng.random() < 1 / 7:
                others = [u for u in users if u.pk != c.user_id]
                for u in lrng.sample(others, lrng.randint(1, 3)):
                    like = valid(LikeForm(user=u, comment=c, data={})).save()
                    c.increase_likes_count()
                    CommentLike.objects.filter(pk=like.pk).update(
                        date=times[k] + datetime.timedelta(seconds=lrng.randint(600, 20 * 3600)))

    # The members' last post and last seen, as the fill's last times, not today.
    for u in users:
        last = Comment.objects.filter(user=u).order_by('-date').first()
        when = last.date if last else joined
        UserProfile.objects.filter(user=u).update(last_seen=when, last_post_on=when)
    return quote_facts


def truth(quote_facts):
    # What its thread pages show of each comment's conversation fields, to a visitor not
    # logged in: the comment's id (div.comments_list__comment's data-pk), the author's
    # profile (/user/<uid>/<slug>/, the uid in it); a quote names its author ("@张伟
    # 评论道:", a link to the profile) but not the comment. An edited comment shows how
    # many times (a pencil and a number, linking /comment/history/<id>/, which asks a
    # visitor to log in), not when; likes are shown to members only.
    out = truth_head('django-spirit', '0.14.3', 'classic', '/', 'minute',
                     {'post_id', 'author_id', 'author_url', 'quote_author'})
    for c in Category.objects.visible().order_by('pk'):
        out['boards'].append({'id': str(c.pk), 'name': c.title, 'path': c.get_absolute_url()})
    mismatches = 0
    for t in Topic.objects.filter(is_removed=False).select_related('category').order_by('id'):
        posts = []
        qs = (Comment.objects.filter(topic=t, action=Comment.COMMENT, is_removed=False)
              .select_related('user__st').order_by('date', 'pk'))
        for c in qs:
            v = post_view(c.comment_html)
            facts = quote_facts.get(c.pk, [])
            source = [line.strip() for block in c.comment.split('\n\n') if not block.startswith('>')
                      for line in block.split('\n')]
            if v['paragraphs'] != source:
                mismatches += 1
            history = CommentHistory.objects.filter(comment_fk=c).order_by('-date').first()
            posts.append(truth_post(
                v, facts,
                id=str(c.pk),
                author=c.user.st.nickname,
                author_id=str(c.user.pk),
                author_url=c.user.st.get_absolute_url(),
                time=wall(c.date),
                edited=wall(history.date) if c.modified_count and history else None,
                likes=c.likes_count,
            ))
        add_thread(out, t.pk, t.category_id, t.title, t.get_absolute_url(), posts)
    write_forum_truth(WORK, out, PER_PAGE, User.objects.count(), mismatches)


truth(fill())
