# Fills a fresh HyperKitty database the way a list's archive is made from mail: fill.py writes
# each mailing list's messages as an mbox (the mail its members' clients would send: GB2312,
# GBK, Big5 or UTF-8, threaded by In-Reply-To and References, replies quoting with "> "
# lines), then HyperKitty's own `hyperkitty_import` reads them in; members' votes go through
# Email.vote (what the vote view calls). Then truth.json from what the database holds and
# HyperKitty's own rendering. Run by `bed.sh fill` as `manage.py shell < fill.py`, with
# BED_WORK (the work directory), BED_CORPUS (crates/luntan-fixture/corpus) and BED_REALWORLD
# (realworld/) in the environment.
import base64
import datetime
import email.charset
import email.utils
import os
import random
import re
import sys
from email.mime.text import MIMEText
from pathlib import Path
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.contrib.sites.models import Site
from django.core.management import call_command

from hyperkitty.lib.utils import stripped_subject
from hyperkitty.models import Email, MailingList, Thread
from hyperkitty.templatetags.decorate import render
from hyperkitty.templatetags.hk_generic import escapeemail

WORK = Path(os.environ['BED_WORK'])
CORPUS = Path(os.environ['BED_CORPUS'])
sys.path.insert(0, os.environ['BED_REALWORLD'])
from truthlib import NAMES, corpus, markdown_body, plain_line, poem_lines, post_times, post_view, thread_plan, thread_title, truth_head, write_forum_truth  # noqa: E402

TZ = ZoneInfo('Asia/Shanghai')
User = get_user_model()
THREADS_PER_PAGE = 10  # django-mailman3's paginate(): 10 threads a page, its default

# HyperKitty shows a list's mail in its "text" mode (a list's archive_rendering_mode, which
# Mailman sets; None here): nothing is markup but "> " quotes and bare URLs (links), and "@@"
# shows a message in a fixed font. Lines that would be read otherwise are left out: a leading
# ">" (a quote), "-- " (a signature), URLs and domains, "@".
def plain(line):
    s = line.strip()
    return (plain_line(s, set('>@')) and 'http' not in s and 'www.' not in s and '.com' not in s
            and not s.startswith('--') and len(s) <= 300)


reviews, poems = corpus(CORPUS, plain)
rng = random.Random(71)

# The members: a display name and an address each (no Mailman: no profiles, the page shows
# the From header's name). 马超's client sends no name: the page shows his address, its "@" as
# a full-width "＠" (HyperKitty's escapeemail).
NAMES = NAMES + ['青山客', '清风徐来']
PINYIN = ['zhangwei', 'wangfang', 'lina', 'liuyang', 'chenjing', 'yangfan', 'zhaolei', 'huangmin',
          'zhoujie', 'wuxia', 'xuming', 'sunli', 'machao', 'zhuting', 'qingshanke', 'qingfeng']
DOMAINS = ['example.com', 'example.org', 'example.net']
MEMBERS = [(name, '%s@%s' % (py, DOMAINS[i % 3])) for i, (name, py) in enumerate(zip(NAMES, PINYIN))]
NAMELESS = {'machao'}

# The lists: (local part, name, description, kind, threads, subject prefix, the charsets its
# members' clients use besides UTF-8). Mainland lists mix GB2312/GBK with UTF-8, the poems'
# list (Traditional) Big5 with UTF-8.
LISTS = [
    ('books', '书评天地', '读后感、书评与推荐', 'review', 11, '[书评] ', ['gb2312', 'gbk']),
    ('digital', '数码与购物', '电脑、手机与网购心得', 'review', 11, '[数码] ', ['gb2312', 'gbk']),
    ('tangshi', '唐詩選讀', '唐詩原文與賞析', 'poem', 5, '[唐詩] ', ['big5']),
]
DOMAIN = 'lists.lingxi.example.org'


def body(kind):
    """1-3 paragraphs, blank lines between (a poem a line per sentence), one in five with a
    TRICKY line."""
    return markdown_body(rng, kind, reviews, poems, poem_lines)


def intro(irng, when, name):
    """The line a mail client writes above the quoted message: Thunderbird's zh-CN, or
    Gmail's."""
    w = when.astimezone(TZ)
    if irng.random() < 0.6:
        return '在 %d/%d/%d %s, %s 写道:' % (w.year, w.month, w.day, w.strftime('%H:%M'), name)
    return '%s 于%d年%d月%d日周%s %s写道：' % (name, w.year, w.month, w.day, '一二三四五六日'[w.weekday()],
                                         w.strftime('%H:%M'))


def quoted(text):
    return '\n'.join('>' if not line else ('>' + line if line.startswith('>') else '> ' + line)
                     for line in text.split('\n'))


def encodable(text, charset):
    try:
        text.encode(charset)
        return True
    except UnicodeEncodeError:
        return False


def words(text, cs):
    """`text` as RFC 2047 encoded words in charset `cs`, named as mail clients name it
    (Python's Header would write GB2312 as "eucgb2312_cn"), a few characters a word."""
    return ' '.join('=?%s?B?%s?=' % (cs, base64.b64encode(text[i:i + 12].encode(cs)).decode())
                    for i in range(0, len(text), 12))


def message(crng, charsets, frm, subject, text, when, msgid, parent_ids):
    """One mail as its sender's client writes it: the charset its own (GB2312 where the text
    fits, else GBK; Big5; or UTF-8), base64 or quoted-printable, the name and subject in
    RFC 2047 words."""
    cs = 'utf-8'
    if crng.random() < 0.45:
        for c in charsets:
            if all(encodable(s, c) for s in (text, subject, frm[0])):
                cs = c
                break
    ch = email.charset.Charset(cs)
    ch.body_encoding = crng.choice([email.charset.BASE64, email.charset.QP])
    m = MIMEText(text + '\n', 'plain', ch)
    name, addr = frm
    m['From'] = addr if addr.split('@')[0] in NAMELESS else '%s <%s>' % (words(name, cs), addr)
    m['Subject'] = words(subject, cs)
    m['Date'] = email.utils.format_datetime(when.astimezone(TZ))
    m['Message-ID'] = msgid
    if parent_ids:
        m['In-Reply-To'] = parent_ids[-1]
        m['References'] = ' '.join(parent_ids)
    m['X-Mailer'] = crng.choice(['Mozilla Thunderbird', 'Foxmail 7.2', 'Gmail'])
    return m, cs


def fill():
    """Writes the mboxes and imports them; returns what the truth needs that the database
    does not keep (each quoting message's quote facts, each message's charset)."""
    # The site's name (django.contrib.sites: "example.com" after migrate), shown in every
    # page's <title> and the navbar, as an admin sets it.
    Site.objects.filter(pk=1).update(domain='lists.lingxi.example.org', name='灵犀邮件列表')
    mlists = []
    for local, name, desc, kind, n, prefix, charsets in LISTS:
        # What Mailman would tell HyperKitty of the list (update_from_mailman), set here.
        ml = MailingList.objects.create(
            name='%s@%s' % (local, DOMAIN), list_id='%s.%s' % (local, DOMAIN), display_name=name,
            description=desc, subject_prefix=prefix,
            created_at=datetime.datetime(2024, 12, 1, 9, 0, tzinfo=TZ))
        mlists.append((ml, kind, n))
    plan, long_idx = thread_plan(rng, mlists, 4)

    qrng = random.Random(7171)  # quotes
    crng = random.Random(7272)  # charsets and transfer encodings
    irng = random.Random(7373)  # quote intros
    vrng = random.Random(7474)  # votes
    spec = {ml.name: (prefix, charsets) for (ml, _, _), (_, _, _, _, _, prefix, charsets) in zip(mlists, LISTS)}
    mail = {ml.name: [] for ml, _, _ in mlists}  # (date, message)
    facts = {}  # message id: quote facts
    start0 = datetime.datetime(2025, 1, 6, 8, 0, 0, tzinfo=TZ)
    span = int((datetime.datetime(2026, 9, 30, tzinfo=TZ) - start0).total_seconds())
    n_msg = 0
    for idx, (ml, kind) in enumerate(plan):
        prefix, charsets = spec[ml.name]
        nposts = rng.randint(22, 40) if idx in long_idx else rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8])
        title, ptext = thread_title(rng, kind, reviews, poems)
        times = post_times(rng, start0, span, nposts)
        posters = [rng.choice(MEMBERS) for _ in range(nposts)]
        # The tree: a reply answers the message before it, the first, or any earlier one.
        parents = [None]
        for k in range(1, nposts):
            r = rng.random()
            parents.append(k - 1 if r < 0.5 else 0 if r < 0.75 else rng.randrange(k))
        texts = [poem_lines(ptext) if (kind == 'poem') else body(kind)]
        texts += [body(kind) for _ in range(1, nposts)]
        # Quotes: about one reply in twelve quotes the whole message it answers under its
        # client's intro line; in a long thread a reply to a quoting reply quotes it too
        # (a nested quote), as a reader answering a quote does.
        quoting = {k for k in range(1, nposts) if qrng.random() < 1 / 12}
        if nposts >= 20:
            if not quoting:
                quoting.add(qrng.randrange(1, nposts))
            later = [k for k in range(1, nposts) if parents[k] in quoting and k not in quoting]
            if later:
                quoting.add(qrng.choice(later))
        ids = ['<%s.%04d.%s@%s>' % (times[k].astimezone(TZ).strftime('%Y%m%d%H%M%S'), n_msg + k,
                                      PINYIN[NAMES.index(posters[k][0])], posters[k][1].split('@')[1])
               for k in range(nposts)]
        full = []
        for k in range(nposts):
            text = texts[k]
            if k in quoting:
                p = parents[k]
                text = intro(irng, times[p], posters[p][0]) + '\n' + quoted(full[p]) + '\n\n' + text
                facts[ids[k]] = [{'of': None, 'author': posters[p][0], 'nested': p in quoting}]
            full.append(text)
            chain, p = [], parents[k]
            while p is not None:
                chain.insert(0, ids[p])
                p = parents[p]
            subject = prefix + title
            if k:
                # Thunderbird and Gmail write "Re: ", Foxmail and Outlook's Chinese "回复: "
                subject = ('回复: ' if crng.random() < 0.1 else 'Re: ') + subject
            m, cs = message(crng, charsets, posters[k], subject, text, times[k], ids[k], chain)
            mail[ml.name].append((times[k], m))
        n_msg += nposts

    (WORK / 'mbox').mkdir(exist_ok=True)
    for ml, _, _ in mlists:
        path = WORK / 'mbox' / ('%s.mbox' % ml.name.split('@')[0])
        with open(path, 'wb') as f:
            for when, m in sorted(mail[ml.name], key=lambda x: x[0]):
                # mbox's From_ line: the list's archive date, as Mailman's archiver writes it
                f.write(b'From ' + ml.name.encode() + b' ' +
                        when.astimezone(datetime.timezone.utc).strftime('%a %b %d %H:%M:%S %Y').encode() + b'\n')
                f.write(m.as_bytes(unixfrom=False).replace(b'\nFrom ', b'\n>From ') + b'\n\n')
        call_command('hyperkitty_import', str(path), list_address=ml.name, no_sync_mailman=True,
                     verbosity=1)

    # Votes, as HyperKitty's vote view records them (Email.vote): the members as Django users,
    # about one message in seven liked by one to three others, one in twenty disliked by one.
    users = {}
    for i, (name, addr) in enumerate(MEMBERS, 1):
        users[addr] = User.objects.create_user(username=PINYIN[i - 1], email=addr, password='bed-%02d' % i)
    for e in Email.objects.select_related('sender').order_by('date', 'id'):
        others = [u for a, u in users.items() if a != e.sender.address]
        if vrng.random() < 1 / 7:
            for u in vrng.sample(others, vrng.randint(1, 3)):
                e.vote(1, u)
        if vrng.random() < 1 / 20:
            e.vote(-1, vrng.choice(others))
    return facts


# Before each quote HyperKitty's renderer puts a link that folds it (<div class="quoted-switch">
# <a href="#">...</a></div>): a control, not words; the truth leaves it out.
SWITCH = re.compile(r'<div class="quoted-switch"><a href="#">\.\.\.</a></div>')


def wall(d):
    return d.astimezone(TZ).replace(tzinfo=None).isoformat(timespec='seconds')


def truth(facts):
    # What a thread page shows of each message to a client that gets the replies (a robot's
    # User-Agent, or ?noscript): div.email-header's id (the message-id hash), the name (no
    # profile link: a sender has one only once Mailman has an account for the address),
    # votes (thumbs up and down with their counts, to visitors too). A quote names its
    # author in the intro line above it (outside the blockquote), not the message; what a
    # message answers is shown only by indentation (reply-level-1 … 5), not named.
    out = truth_head('hyperkitty', '1.3.12', 'classic', '/', 'minute', {'post_id', 'quote_author', 'likes'})
    for ml in MailingList.objects.order_by('id'):
        out['boards'].append({'id': ml.name, 'name': ml.display_name, 'path': '/list/%s/' % ml.name})
    mismatches = 0
    for t in Thread.objects.select_related('mailinglist', 'starting_email').order_by('date_active', 'id'):
        ml = t.mailinglist
        start = t.starting_email
        emails = [start] + list(t.emails.exclude(pk=start.pk).select_related('sender').order_by('thread_order'))
        posts = []
        for e in emails:
            v = post_view(SWITCH.sub('', render(e, ml)))
            f = facts.get(e.message_id if e.message_id.startswith('<') else '<%s>' % e.message_id, [])
            assert len(f) == len(v['quotes']), (e.message_id, f, v['quotes'])
            source = [line for line in e.content.split('\n') if not line.startswith('>')]
            if ' '.join(v['paragraphs']) != ' '.join(' '.join(source).split()):
                mismatches += 1
            votes = e.get_votes()
            posts.append({
                'id': e.message_id_hash,
                'author': escapeemail(e.sender_name or e.sender.address),
                'author_id': None, 'author_url': None,
                'time': wall(e.date),
                'edited': None,
                'likes': votes['likes'],
                'reply_to': None,
                # what In-Reply-To names (the page shows it only as indentation)
                'parent': e.parent.message_id_hash if e.parent_id else None,
                'depth': e.thread_depth,
                'paragraphs': v['paragraphs'],
                'shown': v['shown'], 'intros': v['intros'],
                'quotes': [dict(q, text=x) for q, x in zip(f, v['quotes'])],
            })
        out['threads'].append({
            'id': t.thread_id, 'board': ml.name, 'title': stripped_subject(ml, start.subject),
            'path': '/list/%s/thread/%s/' % (ml.name, t.thread_id), 'posts': posts,
        })
    write_forum_truth(WORK, out, 1000, User.objects.count(), mismatches)


truth(fill())
