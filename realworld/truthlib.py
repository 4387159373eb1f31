"""What a reader sees in one post's rendered HTML, for the packages' truth.json.

Each package's fill renders every post with the package's own renderer and
hands the HTML to `post_view`, which returns, as a reader sees the post:

- `shown`: every paragraph in reading order, quoted ones included (what a
  site file without a quote rule reads as the post's text);
- `paragraphs`: the post's own paragraphs, those outside any `<blockquote>`
  (what a site file whose quote rule takes the blockquotes reads as its
  text; a quote's head line such as FlaskBB's "青山客 wrote:" sits outside
  the blockquote, so it is the reply's own paragraph);
- `quotes`: each outermost blockquote's paragraphs, in order;
- `intros`: the indexes in `paragraphs` of the paragraph (all its lines)
  just before an outermost blockquote, nothing but white space between:
  what a site file's `quote-intro` takes for the line that introduces the
  quote ("青山客 wrote:"), neither the reply's words nor the quote's.

A paragraph is a `<p>`'s text (entities decoded, white space folded), cut
at each `<br>` as luntan cuts one. stdlib only: the packages' venvs and the
system python both import it.

    python3 truthlib.py nodebb TRUTH_JSON   # NodeBB: turns each post's `html` into the fields above
"""

import datetime
import json
import random
import sys
from html.parser import HTMLParser


# What the forum beds' fills share (machina, Spirit): their users' names, the
# lines of the fixture's corpus a Markdown forum shows as typed, and the
# characters a crawler must decode, put in on purpose.
NAMES = ['张伟', '王芳', '李娜', '刘洋', '陈静', '杨帆', '赵磊', '黄敏', '周杰', '吴霞',
         '徐明', '孙丽', '马超', '朱婷']
TRICKY = [
    '价格 < 300 & 质量 > 预期，店家说"包邮"😀',
    '评分：5 > 4 > 3，"物有所值" & 推荐 😀',
    'A&B 两个版本都买了，精装版 > 平装版 < 电子版 😀',
]


def plain_line(line, markup):
    """Whether a corpus line reads as typed where `markup`'s characters and a
    leading list or heading marker would be Markdown."""
    s = line.strip()
    if not s or any(c in markup for c in s):
        return False
    return not (s[0] in '-+=' or (s[0].isdigit() and len(s) > 1 and s[1] in '.)、>'))


def corpus(path, plain):
    """The corpus (`crates/luntan-fixture/corpus` as a Path): its reviews, and
    its poems as (title, author, text), the lines `plain` keeps."""
    reviews = [line.strip() for line in (path / 'reviews.txt').read_text('utf-8').splitlines() if plain(line)]
    poems = []
    for line in (path / 'poems.tsv').read_text('utf-8').splitlines():
        parts = line.split('\t')
        if len(parts) == 3 and plain(parts[2]) and plain(parts[0]):
            poems.append(tuple(p.strip() for p in parts))
    return reviews, poems


def title_from(text, limit=24):
    """The first clause of a review, as a thread title."""
    for i, c in enumerate(text):
        if c in '，。！？；,.!?;：:…~、 ' and i >= 4:
            return text[:min(i, limit)]
    return text[:limit]


def thread_title(rng, kind, reviews, poems):
    """A thread's title and, for a poem's thread, the poem (its first post):
    a poem's title with its author, or a review's first clause."""
    if kind == 'poem':
        ptitle, pauthor, ptext = rng.choice(poems)
        return '%s（%s）' % (ptitle, pauthor), ptext
    return title_from(rng.choice(reviews)), None


def post_times(rng, start, span, n):
    """`n` post times from a moment within `span` seconds of `start`, minutes
    to a couple of days apart, never the same second."""
    t = start + datetime.timedelta(seconds=rng.randrange(span))
    times = []
    for _ in range(n):
        times.append(t)
        t = t + datetime.timedelta(seconds=rng.randint(61, 60 * 60 * 30))
    return times


def poem_lines(text):
    """A poem as one paragraph, a line per sentence."""
    out, cur = [], ''
    for c in text:
        cur += c
        if c in '。？！':
            out.append(cur)
            cur = ''
    if cur:
        out.append(cur)
    return '\n'.join(out)


def markdown_body(rng, kind, reviews, poems, poem=lambda text: text):
    """1-3 paragraphs (poems' or reviews'), Markdown paragraphs separated by a
    blank line, one in five with a TRICKY line; `poem` makes a poem's text
    the paragraph (poem_lines: a line per sentence)."""
    if kind == 'poem':
        paras = [poem(rng.choice(poems)[2]) for _ in range(rng.choice([1, 1, 2]))]
    else:
        paras = [rng.choice(reviews) for _ in range(rng.choice([1, 1, 2, 3]))]
    if rng.random() < 0.2:
        i = rng.randrange(len(paras))
        paras[i] = paras[i] + ' ' + rng.choice(TRICKY)
    return '\n\n'.join(paras)


# The conversation fields a package's thread pages may show, in truth.json's order.
SHOWN = ('post_id', 'author_id', 'author_url', 'quote_of', 'quote_author', 'reply_to', 'edited', 'likes')


def valid(form):
    """A Django form the fill submits, checked as the package's own view would; raises with its errors."""
    if not form.is_valid():
        raise RuntimeError(f'{type(form).__name__}: {form.errors.as_json()}')
    return form


def truth_head(package, version, family, home, precision, shown):
    """truth.json's head: the package, its home page, the precision its
    pages show times to (on Beijing's clock), which of SHOWN its pages show
    (`shown`, a set of those names), then its boards and threads, empty."""
    unknown = set(shown) - set(SHOWN)
    assert not unknown, unknown
    return {'package': package, 'version': version, 'family': family, 'home': home,
            'time_zone': '+08:00', 'time_precision': precision,
            'shows': {k: k in shown for k in SHOWN}, 'boards': [], 'threads': []}


def thread_plan(rng, boards, long):
    """Each thread's board and kind, `boards` being (board, kind, threads)
    triples, shuffled; and which of them (`long` indexes) are long."""
    plan = [(board, kind) for board, kind, n in boards for _ in range(n)]
    rng.shuffle(plan)
    return plan, set(rng.sample(range(len(plan)), long))


def truth_post(view, facts, **fields):
    """One post of truth.json: `fields` (its id, author, times...), then what
    a reader sees of it (`view`, from post_view), each quote beside its
    `facts` (the post and author the page names for it, in order)."""
    assert len(facts) == len(view['quotes']), (fields.get('id'), facts, view['quotes'])
    return dict(fields, paragraphs=view['paragraphs'], shown=view['shown'], intros=view['intros'],
                quotes=[dict(f, text=q) for f, q in zip(facts, view['quotes'])])


def add_thread(truth, id, board, title, path, posts):
    """A thread appended to truth.json's threads."""
    truth['threads'].append({'id': str(id), 'board': str(board), 'title': title, 'path': path, 'posts': posts})


def write_forum_truth(work, truth, longer_than, users, mismatches):
    """A forum bed's truth.json written, and one line saying what it holds:
    threads of more than `longer_than` posts (a page's), `users` members,
    `mismatches` posts whose rendering differs from their source text."""
    (work / 'truth.json').write_text(json.dumps(truth, ensure_ascii=False, indent=1) + '\n', 'utf-8')
    threads = truth['threads']
    posts = [p for t in threads for p in t['posts']]
    quotes = [q for p in posts for q in p['quotes']]
    print('truth.json: %d boards, %d threads (%d of more than one page), %d posts, %d users, '
          '%d quotes (%d nested), %d edited, %d liked; %d rendered posts differ from their source text'
          % (len(truth['boards']), len(threads), sum(1 for t in threads if len(t['posts']) > longer_than), len(posts),
             users, len(quotes), sum(1 for q in quotes if q.get('nested')), sum(1 for p in posts if p.get('edited')),
             sum(1 for p in posts if p.get('likes')), mismatches))


def fold(s):
    return " ".join(s.split())


# Elements with no end tag: never on a page parser's stack.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class SourcePage(HTMLParser):
    """A page parser that knows where it is in the page's source (`pos`,
    for slicing a post's HTML out of it), and reads a self-closing tag
    (`<div/>`) as a browser does: a start tag, then its end unless void."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.source = text
        self.line_at = [0]
        for i, c in enumerate(text):
            if c == "\n":
                self.line_at.append(i + 1)

    def pos(self):
        line, col = self.getpos()
        return self.line_at[line - 1] + col

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)


class _View(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # blockquotes open
        self.cur = None  # the open <p>'s pieces
        self.shown, self.own, self.quotes = [], [], []
        self.loose = []  # text outside any <p>
        self.intros = []
        self.p_start = None  # where the open top-level <p> began in `own`
        self.last_p = None  # the top-level <p> just closed, until anything else

    def _end_para(self):
        if self.cur is None:
            return
        t = fold("".join(self.cur))
        self.cur = []
        if not t:
            return
        self.shown.append(t)
        if self.depth:
            self.quotes[-1].append(t)
        else:
            self.own.append(t)

    def handle_starttag(self, tag, attrs):
        if self.cur is None and tag != "blockquote":
            self.last_p = None  # another element between: no intro
        if tag == "blockquote":
            self._end_para()
            self.cur = None
            if self.depth == 0:
                self.quotes.append([])
                if self.last_p is not None:
                    self.intros.extend(range(*self.last_p))
            self.last_p = None
            self.depth += 1
        elif tag == "p":
            self.cur = []
            if self.depth == 0:
                self.p_start = len(self.own)
        elif tag == "br" and self.cur is not None:
            self._end_para()

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "p":
            self._end_para()
            self.cur = None
            if self.depth == 0 and self.p_start is not None:
                self.last_p = (self.p_start, len(self.own))
                self.p_start = None
            return
        elif tag == "blockquote" and self.depth:
            self._end_para()
            self.cur = None
            self.depth -= 1

    def handle_data(self, data):
        if data.strip() and self.cur is None:
            self.last_p = None
        if self.cur is not None:
            self.cur.append(data)
        elif data.strip():
            self.loose.append(data.strip())


def post_view(html):
    """`{"shown", "paragraphs", "quotes"}` of one post's HTML; raises when
    text stands outside a paragraph (the truth would not say where it is)."""
    v = _View()
    v.feed(html)
    v.close()
    if v.loose:
        raise ValueError(f"text outside <p>: {v.loose[:3]!r} in {html[:200]!r}")
    return {"shown": v.shown, "paragraphs": v.own, "quotes": v.quotes, "intros": v.intros}


def plan_thread(rng, n, per_page, long_from=21, long_quotes=2, share=0.1):
    """Which replies of a thread of `n` posts quote which earlier post:
    `{reply index: quoted index}`, in the order the replies must be
    written. A thread of `long_from` posts or more gets `long_quotes`
    quotes, about `share` of the others with two posts or more one. A reply
    quotes a post on its own page (`per_page` posts a page) that quotes
    none; then, in a long thread, a later reply of the first quoting
    reply's page quotes that reply whole, its quote and all, as a reader
    quoting a quote does (a nested quote)."""
    if n < 2:
        return {}
    want = long_quotes if n >= long_from else int(rng.random() < share)
    chosen = {}
    for _ in range(8 * want):
        if len(chosen) == want:
            break
        k = rng.randrange(1, n)
        if k in chosen or k in chosen.values():
            continue
        first = k // per_page * per_page
        js = [j for j in range(first, k) if j not in chosen]
        if js:
            chosen[k] = rng.choice(js)
    if n >= long_from and chosen:
        k1 = min(chosen)
        last = min(n, k1 // per_page * per_page + per_page)
        ks = [k for k in range(k1 + 1, last) if k not in chosen and k not in chosen.values()]
        if ks:
            chosen[rng.choice(ks)] = k1
    return chosen


def plan_quotes(seed, sizes, per_page, **kw):
    """`plan_thread` for threads of `sizes` posts, on a random stream of its
    own (`seed`), so the rest of a fill stays what it was before quotes:
    `{thread index: {reply index: quoted index}}`."""
    rng = random.Random(seed)
    out = {}
    for t, n in enumerate(sizes):
        chosen = plan_thread(rng, n, per_page, **kw)
        if chosen:
            out[t] = chosen
    return out


def nodebb(path):
    """NodeBB's fill.js writes each post's HTML (markdown-it, the markdown
    plugin's options) and its quote facts; this turns them into the truth's
    fields."""
    truth = json.load(open(path, encoding="utf-8"))
    for t in truth["threads"]:
        for p in t["posts"]:
            v = post_view(p.pop("html"))
            facts = p.pop("quote_facts", [])
            p["paragraphs"] = v["paragraphs"]
            p["shown"] = v["shown"]
            p["intros"] = v["intros"]
            if len(facts) != len(v["quotes"]):
                raise ValueError(f"thread {t['id']} post {p['id']}: {len(v['quotes'])} blockquotes, {len(facts)} planned")
            p["quotes"] = [dict(f, text=q) for f, q in zip(facts, v["quotes"])]
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(truth, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "nodebb":
        nodebb(sys.argv[2])
    else:
        sys.exit(__doc__)
