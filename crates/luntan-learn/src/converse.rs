//! Version 2's conversation fields, learned from the sampled thread pages
//! once the post, body and author selectors are known: each post's id,
//! its author's id and profile page, its quotes (what they quote, whom,
//! from which post), what it answers, its edit time, likes and IP属地, and
//! the thread's board name.
//!
//! Each rule is the forum styles' convention checked against the sample:
//! an id is a number on the post element that names one post and no other
//! across every sampled page; an author id names one author and no other;
//! a quote is a `blockquote` or an element of a `quote` class whose words
//! another sampled post wrote, and what it says of that post (its id, its
//! author), inside it or in the element just before it that introduces
//! it, must read that post's on every quote whose post was sampled (its
//! author on every quote that names them as their post shows them: a
//! mail's sender shown by address above their post is named otherwise).
//! A rule that fails on one sampled post that shows the field is not
//! written: a missing field is fine, a wrong one is not.

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use luntan_core::dates::{normalize_time, Clock};
use luntan_core::site::{self, count_of, Pick, QuoteRules};
use luntan_extract::parse::{first_in_post, paragraphs, quote_intro, read_in_post, shown_for_quote, value_of};
use regex::Regex;
use scraper::{ElementRef, Html, Selector};
use url::Url;

use crate::select::{self, first_fitting, line_text};
use crate::Field;

/// One sampled thread page.
pub(crate) struct Page<'a> {
    pub(crate) doc: &'a Html,
    pub(crate) url: &'a Url,
    /// The thread's id, and the board whose list links it (where a sampled
    /// list does).
    pub(crate) thread: Option<String>,
    pub(crate) board: Option<String>,
    /// The posts as extract reads them, where the page was flattened for
    /// `nested-posts`; else the outermost matches of the post rule.
    pub(crate) posts: Option<Vec<NodeId>>,
}

impl Page<'_> {
    fn posts(&self, post: &Selector) -> Vec<NodeId> {
        self.posts.clone().unwrap_or_else(|| select::outermost(self.doc, post))
    }
}

/// The rules learned before, and what the sample says of boards.
pub(crate) struct Known<'a> {
    pub(crate) post: &'a str,
    pub(crate) body: &'a str,
    pub(crate) author: Option<&'a str>,
    pub(crate) strip: Option<&'a str>,
    /// The board a URL is a list page of.
    pub(crate) board_of: &'a dyn Fn(&Url) -> Option<String>,
    /// A board's name as the home page and lists link it.
    pub(crate) board_names: &'a HashMap<String, String>,
}

/// What was learned: the `<thread>` attributes, and the quote selector
/// (which `strip` must no longer take out whole).
#[derive(Default)]
pub(crate) struct Learned {
    pub(crate) fields: Vec<Field>,
    pub(crate) quote: Option<String>,
}

/// A post's author and words: what tells one post from another.
type Key = (String, String);

/// A body's own pictures, each with whether it is decoration.
type Pictures<'a> = Vec<(ElementRef<'a>, bool)>;

/// One post as the learned rules find it.
struct P<'a> {
    page: usize,
    el: ElementRef<'a>,
    body: Option<ElementRef<'a>>,
    author: String,
    /// Who wrote it and its words: the same post on two pages read.
    key: (String, String),
    /// All its body shows, its quotes and what `strip` takes out included:
    /// what a reply that quotes it whole reproduces.
    shown: String,
}

/// Fewest posts (or quotes, edits) a field is learned from.
const EVIDENCE: usize = 2;

/// Characters a quote's head line has at most ("@青山客 评论道:",
/// "小明 发表于 2024-03-05 12:00"): a longer first line is words.
const HEAD_LINE: usize = 40;

fn letters(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).collect()
}

fn parse(css: &str) -> Option<Selector> {
    select::parse(css)
}

/// An element's text cut by `pattern`, as extract reads a field without
/// `@attr`.
fn text_read(e: ElementRef, pattern: &Regex) -> Option<String> {
    QuoteRules::capture(Some(pattern), &line_text(e))
}

/// `e`'s value as extract reads `field` on it: its text or attribute, cut
/// by the field's pattern.
fn read(e: ElementRef, field: &site::Field) -> Option<String> {
    field.capture(&value_of(e, &field.pick))
}

/// One candidate rule: a selector, an attribute or the text, a pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Rule {
    css: String,
    attr: Option<String>,
    pattern: Option<String>,
}

impl Rule {
    /// The rule as the site file will hold it, so that the learner reads
    /// it with extract's own readers.
    fn compiled(&self) -> Option<site::Field> {
        let sel = parse(&self.css)?;
        let pattern = match &self.pattern {
            Some(p) => Some(Regex::new(p).ok()?),
            None => None,
        };
        Some(site::Field { pick: Pick { sel, attr: self.attr.clone() }, pattern })
    }

    fn fields(&self, name: &'static str, pattern_name: &'static str, examples: Vec<String>) -> Vec<Field> {
        let css = match &self.attr {
            Some(a) => format!("{}@{a}", self.css),
            None => self.css.clone(),
        };
        let mut out = vec![Field { attr: name, css, examples }];
        if let Some(p) = &self.pattern {
            out.push(Field { attr: pattern_name, css: p.clone(), examples: Vec::new() });
        }
        out
    }
}

/// A pattern whose first group is the number at `start..end` of `value`,
/// by what comes before it: a query key (`[?&]pid=(\d+)`), the path
/// segment before it (`/post/(\d+)`), its own prefix (`^pid(\d+)$` for a
/// whole value), or none when the value is the number. With the literal
/// a link's `href` holds before the number (`/post/`, `pid=`).
fn number_pattern(value: &str, start: usize, end: usize) -> Option<(Option<String>, String)> {
    let before = &value[..start];
    if start == 0 && end == value.len() {
        return Some((None, String::new()));
    }
    if let Some(k) = before.strip_suffix('=') {
        let key = &k[k.rfind(['?', '&'])? + 1..];
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return None;
        }
        return Some((Some(format!("[?&]{}=(\\d+)", regex::escape(key))), format!("{key}=")));
    }
    if end == value.len() && !before.contains(['/', '?', '&', '#', '=']) && !before.chars().any(|c| c.is_ascii_digit() || c.is_whitespace()) {
        return Some((Some(format!("^{}(\\d+)$", regex::escape(before))), before.to_owned()));
    }
    let lit = match before.rfind(['/', '?', '&', '#']) {
        Some(i) if i + 1 == before.len() => &before[before[..i].rfind('/').unwrap_or(i)..],
        Some(i) => &before[i..],
        None => return None,
    };
    if lit.is_empty() || lit.contains(['\'', '"', ' ']) {
        return None;
    }
    Some((Some(format!("{}(\\d+)", regex::escape(lit))), lit.to_owned()))
}

/// [`number_pattern`]'s for a number in a path segment after a name that
/// differs from link to link (Misago's `/u/<slug>/<uid>/`): the segment
/// before the name is the literal, the name any segment
/// (`/u/[^/]+/(\d+)`); `None` where no segment comes before the name.
fn number_pattern_past_name(value: &str, start: usize) -> Option<String> {
    let before = value[..start].strip_suffix('/')?;
    let (rest, name) = before.rsplit_once('/')?;
    let lit = &rest[rest.rfind('/')?..];
    if name.is_empty() || lit.len() < 2 || lit.contains(['?', '&', '#', '=', '\'', '"', ' ']) {
        return None;
    }
    Some(format!("{}/[^/]+/(\\d+)", regex::escape(lit)))
}

/// The digit runs of `value` as byte ranges.
fn digit_runs(value: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let b = value.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Selectors for `e` by the attributes modern forums draw with
/// (`span[component='post/vote-count']`, `a[data-post-id]`), beside
/// [`select::own`]'s tag, class and id forms.
fn attr_forms(e: ElementRef) -> Vec<String> {
    let tag = e.value().name();
    let mut out = Vec::new();
    for (name, value) in e.value().attrs() {
        let plain = |s: &str| !s.is_empty() && s.len() <= 40 && !s.contains(['\'', '"', '\\', '\n']);
        if matches!(name, "component" | "itemprop" | "data-component") && plain(value) {
            out.push(format!("{tag}[{name}='{value}']"));
        } else if name.starts_with("data-") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            out.push(format!("{tag}[{name}]"));
        }
    }
    out
}

/// [`select::inside`] and [`attr_forms`], the latter also under the
/// element's ancestors below `scope`.
fn forms(e: ElementRef, scope: NodeId) -> Vec<String> {
    let mut out = select::own(e);
    out.extend(attr_forms(e));
    for anc in e.ancestors().filter_map(ElementRef::wrap).take_while(|a| a.id() != scope).take(3) {
        for a in select::own(anc).into_iter().chain(attr_forms(anc)) {
            for o in select::own(e).into_iter().chain(attr_forms(e)) {
                out.push(format!("{a} {o}"));
            }
        }
    }
    out
}

/// Whether `pairs` (a key and the value read for it) name each other one
/// to one, with at least `least` keys.
/// With `both` false, only that a value names one key: two posts that
/// read alike (one author's "顶" twice) still have ids of their own.
fn one_to_one<'k>(pairs: impl IntoIterator<Item = (&'k (String, String), String)>, least: usize, both: bool) -> bool {
    let mut by_key: HashMap<&Key, String> = HashMap::new();
    let mut by_value: HashMap<String, &Key> = HashMap::new();
    for (k, v) in pairs {
        if by_key.insert(k, v.clone()).is_some_and(|old| both && old != v) || by_value.insert(v, k).is_some_and(|old| old != k) {
            return false;
        }
    }
    by_key.len() >= least
}

/// Learns the conversation fields from `pages` under the rules `k`.
pub(crate) fn learn(pages: &[Page], k: &Known) -> Learned {
    let mut out = Learned::default();
    let (Some(post_sel), Some(body_sel)) = (parse(k.post), parse(k.body)) else { return out };
    let author_sel = k.author.and_then(parse);
    let strip = k.strip.and_then(parse);
    let mut posts: Vec<P> = Vec::new();
    for (i, pg) in pages.iter().enumerate() {
        for id in pg.posts(&post_sel) {
            let el = ElementRef::wrap(pg.doc.tree.get(id).expect("a node of this page")).expect("an element");
            let body = if body_sel.matches(&el) { Some(el) } else { el.select(&body_sel).next() };
            let author = author_sel.as_ref().and_then(|s| el.select(s).next()).map(line_text).unwrap_or_default();
            let words = body.map(|b| letters(&paragraphs(b, strip.as_ref()).join(""))).unwrap_or_default();
            let shown = body.map(|b| letters(&paragraphs(b, None).join(""))).unwrap_or_default();
            posts.push(P { page: i, el, body, key: (author.clone(), words), author, shown });
        }
    }
    if posts.len() < 2 * EVIDENCE {
        return out;
    }
    // Read on the post element itself: a reply `nested-posts` moved out of
    // its holder is no longer under the parent its selector names.
    let ids = post_id(&posts, &select::own_part(k.post), &mut out.fields);
    author_link(&posts, k.author, pages, &mut out.fields);
    let quotes = quotes(&posts, pages, &ids, k.body, strip.as_ref(), &mut out);
    reply_links(&posts, pages, &ids, &quotes, k.body, strip.as_ref(), &mut out.fields);
    edited(&posts, &quotes, &mut out.fields);
    likes(&posts, &mut out.fields);
    location(&posts, &mut out.fields);
    media(&posts, pages, &quotes, strip.as_ref(), &mut out.fields);
    board_name(pages, &post_sel, k, &mut out.fields);
    thread_counts(pages, &post_sel, &mut out.fields);
    out
}

/// `thread-views` and `thread-replies` where a thread page shows them
/// labelled, outside its posts ("查看: 1204 | 回复: 41"): the tightest
/// element holding the label and its number, read by one selector and the
/// label's pattern on every sampled thread page, the same on every page of
/// a thread and not one number for all threads.
fn thread_counts(pages: &[Page], post: &Selector, fields: &mut Vec<Field>) {
    const COUNTS: [(&str, &str, &[&str]); 2] = [
        ("thread-views", "thread-views-pattern", &["查看", "浏览", "瀏覽", "阅读", "閱讀", "点击", "Views", "views"]),
        ("thread-replies", "thread-replies-pattern", &["回复", "回覆", "Replies", "replies"]),
    ];
    let all = Selector::parse("body *").expect("static selector");
    for (name, pattern_name, labels) in COUNTS {
        let outside: Vec<HashSet<NodeId>> = pages.iter().map(|pg| pg.posts(post).into_iter().collect()).collect();
        let mut done = false;
        for label in labels {
            let re = Regex::new(&format!(r"{}\s*[:：]?\s*([0-9][0-9,.]*[kKwW万萬]?)", regex::escape(label))).expect("escaped label");
            let shows = |e: ElementRef| re.is_match(&line_text(e));
            let at: Vec<Option<ElementRef>> = pages
                .iter()
                .zip(&outside)
                .map(|(pg, posts)| {
                    pg.doc
                        .select(&all)
                        .filter(|e| !e.ancestors().any(|a| posts.contains(&a.id())) && shows(*e) && !e.children().filter_map(ElementRef::wrap).any(shows))
                        .find(|_| true)
                })
                .collect();
            if at.iter().any(Option::is_none) || pages.len() < EVIDENCE {
                continue;
            }
            let cands = at.iter().flatten().take(3).flat_map(|e| {
                let mut out = select::own(*e);
                for anc in e.ancestors().filter_map(ElementRef::wrap).filter(|x| !matches!(x.value().name(), "html" | "body")).take(2) {
                    for a in select::own(anc) {
                        for o in select::own(*e) {
                            out.push(format!("{a} {o}"));
                        }
                    }
                }
                out
            });
            let value = |e: ElementRef| text_read(e, &re).and_then(|v| count_of(&v));
            let fits = |sel: &Selector| {
                let got: Vec<Option<u64>> = pages.iter().map(|pg| pg.doc.select(sel).next().and_then(value)).collect();
                a_thread_count(pages, &got)
            };
            if let Some(css) = first_fitting(cands, fits) {
                let examples = at.iter().flatten().take(3).map(|e| line_text(*e)).collect();
                fields.push(Field { attr: name, css, examples });
                fields.push(Field {
                    attr: pattern_name,
                    css: format!(r"{}\s*[:：]?\s*([0-9][0-9,.]*[kKwW万萬]?)", regex::escape(label)),
                    examples: Vec::new(),
                });
                done = true;
            }
            if done {
                break;
            }
        }
        if !done {
            fields.extend(icon_count(pages, &outside, name, pattern_name, labels));
        }
    }
}

/// A thread count labelled only by the icon before it, in the icon's
/// `title` or `aria-label` (NodeBB: `<i class="fa fa-eye" title="浏览"></i>`
/// and the number, `1.2k`, exact in its own `title`): `icon + number`, read
/// from the number's `title` where that is a whole count (else its text),
/// whose first match on every sampled thread page is the number the label
/// names, the same on every page of a thread and not one for all threads.
fn icon_count(pages: &[Page], outside: &[HashSet<NodeId>], name: &'static str, pattern_name: &'static str, labels: &[&str]) -> Vec<Field> {
    let all = Selector::parse("body *").expect("static selector");
    let labelled = |e: &ElementRef| {
        e.text().all(|t| t.trim().is_empty())
            && ["title", "aria-label"].iter().any(|a| e.value().attr(a).is_some_and(|v| labels.iter().any(|l| v.trim() == *l)))
    };
    // Per page: the element after the first icon so labelled, outside the posts.
    let at: Vec<Option<ElementRef>> = pages
        .iter()
        .zip(outside)
        .map(|(pg, posts)| {
            let icon = pg.doc.select(&all).find(|e| !e.ancestors().any(|a| posts.contains(&a.id())) && labelled(e))?;
            icon.next_siblings().find(|n| !n.value().as_text().is_some_and(|t| t.trim().is_empty())).and_then(ElementRef::wrap)
        })
        .collect();
    if pages.len() < EVIDENCE || at.iter().any(Option::is_none) {
        return Vec::new();
    }
    let exact = |e: &ElementRef| e.value().attr("title").is_some_and(|t| t.trim().parse::<u64>().is_ok());
    let attr = at.iter().flatten().all(exact).then(|| "title".to_owned());
    let mut cands = Vec::new();
    for e in at.iter().flatten().take(3) {
        let icon = e.prev_siblings().find_map(ElementRef::wrap).expect("the icon before it");
        for a in select::own(icon) {
            for b in select::own(*e) {
                cands.push(Rule { css: format!("{a} + {b}"), attr: attr.clone(), pattern: None });
            }
        }
    }
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        let got: Vec<Option<u64>> = pages
            .iter()
            .zip(&at)
            .map(|(pg, want)| {
                let first = pg.doc.select(&f.pick).next();
                first.filter(|e| Some(e.id()) == want.map(|w| w.id())).and_then(|e| f.count(&value_of(e, &f.pick)))
            })
            .collect();
        if a_thread_count(pages, &got) {
            let examples = at.iter().flatten().take(3).map(|e| value_of(*e, &f.pick)).collect();
            return r.fields(name, pattern_name, examples);
        }
    }
    Vec::new()
}

/// Whether `got`, a count read on each of `pages`, reads as a thread's:
/// on every page, the same on every page of a thread, and not one value
/// for all threads.
fn a_thread_count(pages: &[Page], got: &[Option<u64>]) -> bool {
    let mut by_thread: HashMap<&Option<String>, u64> = HashMap::new();
    let agree = pages.iter().zip(got).all(|(pg, v)| v.is_some_and(|v| *by_thread.entry(&pg.thread).or_insert(v) == v));
    agree && got.iter().flatten().collect::<HashSet<_>>().len() >= EVIDENCE
}

/// Where a picture's file is kept when `src` is a placeholder a script
/// swaps (Discuz!'s `file`, lazy loaders' `data-src`).
const LAZY_SRC: [&str; 5] = ["file", "zoomfile", "data-original", "data-src", "data-lazy-src"];

/// Whether a picture is a smiley or an icon rather than one the author
/// shows: Discuz!'s `smilieid`, a path of smileys or emoji.
fn decoration(img: ElementRef) -> bool {
    let src = img.value().attr("src").unwrap_or_default().to_lowercase();
    img.value().attr("smilieid").is_some() || ["smil", "emot", "emoji", "/face/", "/icon"].iter().any(|w| src.contains(w))
}

/// `links` and `images` in a post's own text (outside its quotes and
/// `strip`): `links="a[href]"` where bodies link pages off the forum's
/// host (a body's links to the forum itself are mentions and permalinks
/// more often than what the author shares); `images` the pictures that are
/// no smiley, by the simplest selector that takes exactly them, from the
/// attribute that holds the file where `src` is a placeholder.
fn media(posts: &[P], pages: &[Page], quotes: &[QuoteAt], strip: Option<&Selector>, fields: &mut Vec<Field>) {
    // Node ids are a page's own: a quote is known by its post and its node.
    let in_quote = quoted_nodes(quotes);
    let own = |i: usize, b: ElementRef, e: &ElementRef| {
        !e.ancestors()
            .filter_map(ElementRef::wrap)
            .take_while(|x| x.id() != b.id())
            .any(|x| in_quote.contains(&(i, x.id())) || strip.is_some_and(|s| s.matches(&x)))
            && !strip.is_some_and(|s| s.matches(e))
    };
    let anchors = Selector::parse("a[href]").expect("static selector");
    let imgs = Selector::parse("img").expect("static selector");
    let mut off_host = 0;
    // Per body: its own pictures, and which are decoration.
    let mut pictures: Vec<(usize, ElementRef, Pictures)> = Vec::new();
    for (i, p) in posts.iter().enumerate() {
        let Some(b) = p.body else { continue };
        let page = &pages[p.page];
        off_host += b
            .select(&anchors)
            .filter(|a| own(i, b, a))
            .filter(|a| {
                page.url
                    .join(a.value().attr("href").unwrap_or_default().trim())
                    .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host() != page.url.host())
            })
            .count();
        pictures.push((i, b, b.select(&imgs).filter(|e| own(i, b, e)).map(|e| (e, decoration(e))).collect()));
    }
    if off_host >= EVIDENCE {
        fields.push(Field { attr: "links", css: "a[href]".into(), examples: Vec::new() });
    }
    let shown: Vec<ElementRef> = pictures.iter().flat_map(|(_, _, v)| v.iter().filter(|(_, d)| !d).map(|(i, _)| *i)).collect();
    if shown.len() < EVIDENCE {
        return;
    }
    let cands = shown.iter().take(3).flat_map(|i| select::own(*i).into_iter().chain(attr_forms(*i)).collect::<Vec<_>>());
    let fits = |sel: &Selector| {
        pictures.iter().all(|(i, b, v)| {
            let picked: Vec<NodeId> = b.select(sel).filter(|e| own(*i, *b, e)).map(|e| e.id()).collect();
            picked == v.iter().filter(|(_, d)| !d).map(|(i, _)| i.id()).collect::<Vec<_>>()
        })
    };
    let Some(css) = first_fitting(cands, fits) else { return };
    // `src` as a placeholder: one value for pictures of different files.
    let srcs: HashSet<&str> = shown.iter().filter_map(|i| i.value().attr("src")).collect();
    let lazy = LAZY_SRC.iter().find(|a| {
        let files: HashSet<&str> = shown.iter().filter_map(|i| i.value().attr(a)).collect();
        shown.iter().all(|i| i.value().attr(a).is_some()) && files.len() > srcs.len()
    });
    let css = match lazy {
        Some(a) => format!("{css}@{a}"),
        None => css,
    };
    fields.push(Field { attr: "images", css, examples: shown.iter().take(3).map(|i| crate::learn::describe(*i)).collect() });
}

/// Rules reading a number out of an attribute of `els` (each read by
/// `css`): its last digit run, or every one with `every_run`; those whose
/// attribute's name holds one of `named` first, then `next`, then the rest.
fn number_rules<'a>(els: impl Iterator<Item = ElementRef<'a>>, css: &str, every_run: bool, named: &[&str], next: &str) -> Vec<Rule> {
    let mut cands: Vec<Rule> = Vec::new();
    for el in els {
        for (name, value) in el.value().attrs() {
            let runs = digit_runs(value);
            let runs = if every_run { runs } else { runs.last().copied().into_iter().collect() };
            for (s, e) in runs {
                let past_name = number_pattern_past_name(value, s).map(Some);
                for pattern in number_pattern(value, s, e).map(|(p, _)| p).into_iter().chain(past_name) {
                    let r = Rule { css: css.to_owned(), attr: Some(name.to_owned()), pattern };
                    if !cands.contains(&r) {
                        cands.push(r);
                    }
                }
            }
        }
    }
    let rank = |r: &Rule| {
        let a = r.attr.as_deref().unwrap_or_default();
        if named.iter().any(|n| a.contains(n)) {
            0
        } else if a == next {
            1
        } else {
            2
        }
    };
    cands.sort_by_key(rank);
    cands
}

/// `post-id`: an attribute of the post element holding a number (all of
/// it, or after a fixed prefix: `id="pid4929"`) that names one post and
/// no other across the sample (a floor index repeats from thread to
/// thread; a user id from post to post). Attributes that say `pid` or
/// `post` first. Returns each post's id, by its index in `posts`.
fn post_id(posts: &[P], post_css: &str, fields: &mut Vec<Field>) -> HashMap<usize, String> {
    let cands = number_rules(posts.iter().take(3).map(|p| p.el), post_css, false, &["pid", "post"], "id");
    first_post_id(posts, cands, |_, _| true, fields).unwrap_or_else(|| token_post_id(posts, fields))
}

/// The first of `cands` that reads a value `keep` keeps in every post and
/// names each post by one value: written as `post-id`, with each post's id
/// by its index in `posts`.
fn first_post_id(posts: &[P], cands: Vec<Rule>, keep: impl Fn(&P, &str) -> bool, fields: &mut Vec<Field>) -> Option<HashMap<usize, String>> {
    let distinct: HashSet<&(String, String)> = posts.iter().map(|p| &p.key).collect();
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        let got: Option<Vec<String>> = posts.iter().map(|p| read_in_post(p.el, &f).filter(|v| keep(p, v))).collect();
        let Some(got) = got else { continue };
        if !one_to_one(posts.iter().zip(&got).map(|(p, v)| (&p.key, v.clone())), distinct.len().max(2 * EVIDENCE), false) {
            continue;
        }
        fields.extend(r.fields("post-id", "post-id-pattern", got.iter().take(3).cloned().collect()));
        return Some(got.into_iter().enumerate().collect());
    }
    None
}

/// `post-id` where no number names a post: an `id` on or inside the post
/// that is a token of letters and digits (HyperKitty names a mail by a
/// hash of its Message-ID, `id="SDBNGNUX7WY4…"` on its header), names one
/// post and no other across the sample, and is what a link in the post
/// names (its permalink, `/message/SDBNGNUX7WY4…/`): an id a script makes
/// up for each drawing is linked by nothing.
fn token_post_id(posts: &[P], fields: &mut Vec<Field>) -> HashMap<usize, String> {
    let token = |v: &str| {
        (8..=64).contains(&v.len())
            && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && v.bytes().any(|b| b.is_ascii_digit())
            && v.bytes().any(|b| b.is_ascii_alphabetic())
    };
    let links = Selector::parse("a[href]").expect("static selector");
    let linked = |post: ElementRef, v: &str| post.select(&links).any(|a| a.value().attr("href").is_some_and(|h| h.contains(v)));
    let mut cands: Vec<Rule> = Vec::new();
    for p in posts.iter().take(3) {
        for e in std::iter::once(p.el).chain(p.el.descendent_elements()) {
            let Some(v) = e.value().attr("id") else { continue };
            if !token(v) || !linked(p.el, v) {
                continue;
            }
            for css in select::own(e).into_iter().filter(|c| c.contains('.') || e.id() == p.el.id()) {
                let r = Rule { css, attr: Some("id".into()), pattern: None };
                if !cands.contains(&r) {
                    cands.push(r);
                }
            }
        }
    }
    first_post_id(posts, cands, |p, v| token(v) && linked(p.el, v), fields).unwrap_or_default()
}

/// The author's link in a post: the author element when it is a link,
/// else the link around it, else the one link inside it.
fn author_anchor<'a>(post: ElementRef<'a>, author: &Selector) -> Option<ElementRef<'a>> {
    let a = post.select(author).next()?;
    let is_link = |e: &ElementRef| e.value().name() == "a" && e.value().attr("href").is_some();
    if is_link(&a) {
        return Some(a);
    }
    if let Some(up) = a.ancestors().filter_map(ElementRef::wrap).take_while(|x| x.id() != post.id()).find(is_link) {
        return Some(up);
    }
    let inner: Vec<ElementRef> = a.descendent_elements().filter(is_link).collect();
    (inner.len() == 1).then(|| inner[0])
}

/// `author-url` and `author-id`: the author's link, its page resolved,
/// and a number in it (or in an attribute of the link, `data-uid`) that
/// names one author and no other across the sample.
fn author_link(posts: &[P], author_css: Option<&str>, pages: &[Page], fields: &mut Vec<Field>) {
    let Some((author_css, author)) = author_css.and_then(|c| Some((c, parse(c)?))) else { return };
    let author = &author;
    let links: Vec<(usize, ElementRef)> = posts.iter().enumerate().filter_map(|(i, p)| author_anchor(p.el, author).map(|a| (i, a))).collect();
    let names: HashSet<&str> = links.iter().map(|(i, _)| posts[*i].author.as_str()).filter(|n| !n.is_empty()).collect();
    if names.len() < EVIDENCE {
        return;
    }
    let name_key = |i: usize| (posts[i].author.clone(), String::new());
    let keys: Vec<(String, String)> = links.iter().map(|(i, _)| name_key(*i)).collect();
    // The link's selector: one that takes, in every post, its author's link.
    // Last, the author's own selector where it is the link: a list's
    // (`a.user-name-link, a.js-comment-author`, where comments inside the
    // posts name theirs in markup of their own).
    let cands = links.iter().take(3).flat_map(|(i, a)| forms(*a, posts[*i].el.id())).chain(std::iter::once(author_css.to_owned()));
    let link_css = first_fitting(cands, |sel| {
        posts.iter().enumerate().all(|(i, p)| {
            let want = links.iter().find(|(j, _)| *j == i).map(|(_, a)| a.id());
            first_in_post(p.el, sel).map(|e| e.id()) == want
        })
    });
    let Some(link_css) = link_css else { return };
    // The profile page, one per author.
    let urls: Vec<Option<String>> = links
        .iter()
        .map(|(i, a)| {
            let href = a.value().attr("href")?.trim();
            let u = pages[posts[*i].page].url.join(href).ok().filter(|u| matches!(u.scheme(), "http" | "https"))?;
            (u.as_str() != pages[posts[*i].page].url.as_str()).then(|| u.to_string())
        })
        .collect();
    if urls.iter().all(Option::is_some) && one_to_one(keys.iter().zip(urls.iter().flatten().cloned()), EVIDENCE, true) {
        let examples = urls.iter().flatten().take(3).cloned().collect();
        fields.push(Field { attr: "author-url", css: format!("{link_css}@href"), examples });
    }
    // The id: an attribute of the link holding a number, then a number in
    // its href; user ids by the attribute's name first.
    let cands = number_rules(links.iter().take(3).map(|(_, a)| *a), &link_css, true, &["uid", "user"], "href");
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        let got: Vec<Option<String>> = links.iter().map(|(i, _)| read_in_post(posts[*i].el, &f)).collect();
        if got.iter().all(Option::is_some) && one_to_one(keys.iter().zip(got.iter().flatten().cloned()), EVIDENCE, true) {
            let examples = got.iter().flatten().take(3).cloned().collect();
            fields.extend(r.fields("author-id", "author-id-pattern", examples));
            return;
        }
    }
}

/// A quote found: its element, the post it is in, the sampled post whose
/// words it quotes (by index in `posts`) where one was found, and its
/// intro where `quote-intro` was learned.
struct QuoteAt<'a> {
    el: ElementRef<'a>,
    post: usize,
    of: Option<usize>,
    intro: Option<ElementRef<'a>>,
}

/// The quotes and their intros, by post and node (node ids are a page's
/// own): none of them is a post's own text.
fn quoted_nodes(quotes: &[QuoteAt]) -> HashSet<(usize, NodeId)> {
    quotes.iter().flat_map(|q| std::iter::once(q.el).chain(q.intro).map(|e| (q.post, e.id()))).collect()
}

/// How many texts of `quote` of six letters or more (its dots and spaces
/// aside) are among `words`, a post's letters.
fn quotes_words(quote: ElementRef, words: &str) -> usize {
    quote.text().map(letters).filter(|t| t.chars().count() >= 6 && words.contains(t.as_str())).count()
}

/// `quote` and its `quote-head`, `quote-of`, `quote-author`: see the
/// module doc. Returns the quotes found, for the fields that read beside
/// them (what a post answers; its edit note is no quote's).
fn quotes<'a>(posts: &[P<'a>], pages: &[Page], ids: &HashMap<usize, String>, body_css: &str, strip: Option<&Selector>, out: &mut Learned) -> Vec<QuoteAt<'a>> {
    // Candidates: blockquotes and elements of a quote class in bodies.
    let mut keys: Vec<String> = Vec::new();
    for p in posts {
        let Some(b) = p.body else { continue };
        for e in b.descendent_elements().filter(|e| e.id() != b.id()) {
            let v = e.value();
            let key = if let Some(c) = v.classes().find(|c| c.to_lowercase().contains("quote")) {
                format!("{}.{c}", v.name())
            } else if v.name() == "blockquote" {
                "blockquote".to_owned()
            } else {
                continue;
            };
            if parse(&key).is_some() && !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let thread_of = |i: usize| pages[posts[i].page].thread.as_deref();
    // Per key: its quotes, each with the post it quotes where found.
    let mut best: Option<(String, Vec<QuoteAt>)> = None;
    for key in keys {
        let sel = parse(&key).expect("parsed above");
        let found: Vec<(usize, ElementRef)> = posts
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.body.map(|b| (i, b)))
            .flat_map(|(i, b)| select::outermost_in(b, &sel).into_iter().map(move |q| (i, q)))
            .collect();
        // Node ids are a page's own: a quote is known by its post and its node.
        let in_quote: HashSet<(usize, NodeId)> = found.iter().map(|(i, q)| (*i, q.id())).collect();
        // Each post's own words, its quotes left out.
        let own: Vec<String> = posts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let Some(b) = p.body else { return String::new() };
                // `strip` as extract applies it: inside the body, not to it.
                let stripped = |n: &ego_tree::NodeRef<scraper::Node>| {
                    strip.is_some_and(|s| n.ancestors().take_while(|a| a.id() != b.id()).filter_map(ElementRef::wrap).any(|a| s.matches(&a)))
                };
                b.descendants()
                    .filter(|n| !n.ancestors().any(|a| in_quote.contains(&(i, a.id()))) && !stripped(n))
                    .filter_map(|n| n.value().as_text().map(|t| letters(t)))
                    .collect()
            })
            .collect();
        let quotes: Vec<QuoteAt> = found
            .iter()
            .map(|&(i, q)| {
                // The post of its thread that shows most of its words, of
                // those the one that wrote most of them (a post quoted whole
                // brings its own quote along: the post it quoted shows
                // fewer, one that quoted the same post wrote none); of
                // equals, the nearest before it on its page, then the first
                // elsewhere.
                let long = q.text().map(letters).filter(|t| t.chars().count() >= 6).count();
                let same_thread = |j: usize| j != i && (posts[j].page == posts[i].page || (thread_of(j).is_some() && thread_of(j) == thread_of(i)));
                let near = |j: usize| if posts[j].page == posts[i].page && j < i { (1, j) } else { (0, usize::MAX - j) };
                let of = (0..posts.len())
                    .filter(|&j| same_thread(j))
                    .map(|j| (quotes_words(q, &posts[j].shown), quotes_words(q, &own[j]), near(j), j))
                    // All its lines but one (the head naming the post), and
                    // some of them its own.
                    .filter(|&(shown, own, _, _)| own > 0 && shown + 1 >= long)
                    .max()
                    .map(|(.., j)| j);
                QuoteAt { el: q, post: i, of, intro: None }
            })
            .collect();
        let verified = quotes.iter().filter(|q| q.of.is_some()).count();
        tracing::debug!("quote {key}: {} found, {verified} quote a sampled post", quotes.len());
        if verified < EVIDENCE || verified * 2 < quotes.len() {
            continue;
        }
        // The most quotes of sampled posts; of two keys for one quote
        // (`div.quote` around a `blockquote`), the outer one.
        let outer = |a: &[QuoteAt], b: &[QuoteAt]| b.iter().all(|q| a.iter().any(|o| q.el.ancestors().any(|x| x.id() == o.el.id())));
        let better = match &best {
            None => true,
            Some((_, b)) => {
                let theirs = b.iter().filter(|q| q.of.is_some()).count();
                verified > theirs || (verified == theirs && outer(&quotes, b))
            }
        };
        if better {
            best = Some((key, quotes));
        }
    }
    let Some((key, quotes)) = best else { return Vec::new() };
    out.fields.push(Field { attr: "quote", css: key.clone(), examples: quotes.iter().take(3).map(|q| crate::learn::describe(q.el)).collect() });
    out.quote = Some(key.clone());
    let verified: Vec<(&QuoteAt, &P)> = quotes.iter().filter_map(|q| q.of.map(|j| (q, &posts[j]))).collect();
    // The head: what a quote says beside the words it quotes, which are
    // all the quoted post shows (a quote inside it included).
    let quoted_words = |q: ElementRef, p: &P, head: Option<&Selector>| -> bool {
        let paras = paragraphs(q, head);
        !paras.is_empty() && paras.iter().all(|t| letters(t).is_empty() || p.shown.contains(&letters(t)) || p.shown.contains(letters(t).trim_end_matches('.')))
    };
    let needs_head = verified.iter().any(|(q, p)| !quoted_words(q.el, p, None));
    for (q, p) in verified.iter().filter(|(q, p)| !quoted_words(q.el, p, None)).take(3) {
        tracing::debug!("quote {key}: words beside those of the post it quotes: {:?} (that post shows {:?})", paragraphs(q.el, None), p.shown);
    }
    if needs_head {
        let quote_sel = parse(&key).expect("parsed above");
        // A quote's own head, where it is the quote's child and the quote
        // the body's (pybbm's `<em>name</em>`): scoped from the body, so
        // that it takes no head of a quote nested inside, which is quoted words.
        let scoped = |q: &QuoteAt, e: ElementRef| -> Vec<String> {
            let body_child = q.el.parent().zip(posts[q.post].body).is_some_and(|(parent, b)| parent.id() == b.id());
            let child = e.parent().is_some_and(|parent| parent.id() == q.el.id());
            if !(body_child && child && body_css.split(',').count() == 1) {
                return Vec::new();
            }
            select::own(e).into_iter().map(|o| format!("{} > {key} > {o}", body_css.trim())).collect()
        };
        let cands = verified
            .iter()
            .take(3)
            .flat_map(|(q, _)| q.el.descendent_elements().flat_map(|e| forms(e, q.el.id()).into_iter().chain(scoped(q, e))).collect::<Vec<_>>());
        // A head never takes a quote inside the quote, nor anything of one:
        // those are quoted words.
        let own_quote = |e: ElementRef| e.ancestors().filter_map(ElementRef::wrap).find(|a| quote_sel.matches(a)).map(|a| a.id());
        let fits = |sel: &Selector| {
            verified.iter().all(|(q, p)| quoted_words(q.el, p, Some(sel)))
                && quotes
                    .iter()
                    .all(|q| !paragraphs(q.el, Some(sel)).is_empty() && q.el.select(sel).all(|e| !quote_sel.matches(&e) && own_quote(e) == Some(q.el.id())))
        };
        // A head that is a line of text and no element (Spirit's
        // `<a>@name</a> 评论道:<br>` before the quoted words) no selector
        // takes: it stays among the quote's words, which are still the
        // quoted post's and not the reply's, and a `quote-author` may read it.
        let text_head = |q: ElementRef, p: &P| {
            let paras = paragraphs(q, None);
            let quoted = |t: &String| letters(t).is_empty() || p.shown.contains(&letters(t));
            paras.len() >= 2 && paras[0].chars().count() <= HEAD_LINE && !quoted(&paras[0]) && paras[1..].iter().all(quoted)
        };
        match first_fitting(cands, fits) {
            Some(css) => out.fields.push(Field { attr: "quote-head", css, examples: Vec::new() }),
            None if verified.iter().all(|(q, p)| quoted_words(q.el, p, None) || text_head(q.el, p)) => {
                tracing::debug!("quote {key}: its head is a first line of text, kept with the quoted words");
            }
            None => {
                // The quotes' words could not be told from what names them:
                // no quote rule, so strip keeps taking them out whole.
                out.fields.retain(|f| f.attr != "quote");
                out.quote = None;
                return Vec::new();
            }
        }
    }
    // What introduces a quote, where the quote itself does not name it.
    let intro = intro_rule(posts, &verified, ids, &key, strip);
    if let Some((css, examples)) = &intro {
        out.fields.push(Field { attr: "quote-intro", css: css.clone(), examples: examples.clone() });
    }
    let intro_sel = intro.and_then(|(css, _)| parse(&css));
    let quotes: Vec<QuoteAt> = quotes.into_iter().map(|q| QuoteAt { intro: intro_sel.as_ref().and_then(|s| quote_intro(q.el, s, strip)), ..q }).collect();
    let verified: Vec<(&QuoteAt, &P)> = quotes.iter().filter_map(|q| q.of.map(|j| (q, &posts[j]))).collect();
    // Where a quote names its post: its intro (the intro itself first),
    // else inside it; as the candidates' elements, each with the scope of
    // its selector forms.
    let naming = |q: &QuoteAt<'a>| -> Vec<(ElementRef<'a>, NodeId)> {
        match q.intro {
            Some(i) => std::iter::once(i).chain(i.descendent_elements()).map(|e| (e, posts[q.post].body.map_or(q.el.id(), |b| b.id()))).collect(),
            None => q.el.descendent_elements().map(|e| (e, q.el.id())).collect(),
        }
    };
    // The quoted post's id, where the quote links it.
    let with_id: Vec<(&QuoteAt, &String)> = quotes.iter().filter_map(|q| q.of.and_then(|j| ids.get(&j)).map(|id| (q, id))).collect();
    if with_id.len() >= EVIDENCE {
        let mut cands: Vec<Rule> = Vec::new();
        for (q, id) in with_id.iter().take(3) {
            for (e, _) in naming(q) {
                for (name, value) in e.value().attrs() {
                    for (s, end) in digit_runs(value).into_iter().filter(|&(s, end)| &value[s..end] == id.as_str()) {
                        if let Some((pattern, lit)) = number_pattern(value, s, end) {
                            // The link that holds it, where an intro links others first
                            // (NodeBB's mention before the quoted post's link).
                            let holding = (!lit.is_empty() && !lit.contains(['\'', '"', '\\'])).then(|| format!("{}[{name}*='{lit}']", e.value().name()));
                            for css in select::own(e).into_iter().chain(attr_forms(e)).chain(holding) {
                                let r = Rule { css, attr: Some(name.to_owned()), pattern: pattern.clone() };
                                if !cands.contains(&r) {
                                    cands.push(r);
                                }
                            }
                        }
                    }
                }
            }
        }
        for r in cands {
            let Some(f) = r.compiled() else { continue };
            let reads = |q: &QuoteAt| f.capture(&shown_for_quote(q.el, q.intro, &f.pick)?);
            if with_id.iter().all(|(q, id)| reads(q).as_deref() == Some(id.as_str())) {
                out.fields.extend(r.fields("quote-of", "quote-of-pattern", with_id.iter().take(3).map(|(_, id)| (*id).clone()).collect()));
                break;
            }
        }
    }
    // The quoted author: an element of the quote (or its intro) that shows
    // the name, alone or before the words that follow it ("小明 发表于 …",
    // "小明 寫道：", "青山客 wrote:"), after a mention's "@" or not, or
    // after a lead and before the line's closing words ("在 2026/9/1
    // 19:42, 张伟 写道:").
    // Only quotes that name their post's author as that post shows it
    // tell a rule right from wrong: a mail's sender shown by address
    // above their post and by name in the line quoting it (HyperKitty, 2
    // intros in 11) is neither, and kept no rule from being learned.
    let (named, otherwise): (Vec<(&QuoteAt, &P)>, Vec<_>) = verified
        .iter()
        .copied()
        .filter(|(_, p)| !p.author.is_empty())
        .partition(|(q, p)| naming(q).iter().any(|(e, _)| line_text(*e).contains(p.author.as_str())));
    for (q, p) in otherwise.iter().take(3) {
        tracing::debug!("quote-author: {:?} does not name {:?} as their post shows them", q.intro.map(line_text), p.author);
    }
    if named.len() >= EVIDENCE && named.len() > otherwise.len() {
        // From every named quote, not the first few: a second wording
        // (another mail client's) may come late in the sample.
        let mut cands: Vec<Rule> = Vec::new();
        for (q, p) in &named {
            for (e, scope) in naming(q) {
                let Some(pattern) = author_pattern(&line_text(e), &p.author) else { continue };
                for css in forms(e, scope) {
                    let r = Rule { css, attr: None, pattern: pattern.clone() };
                    if !cands.contains(&r) {
                        cands.push(r);
                    }
                }
            }
        }
        // The name alone before the name inside words.
        cands.sort_by_key(|r| r.pattern.is_some());
        // What each rule reads of each named quote: none, right or wrong.
        let read: Vec<(&Rule, Vec<Option<bool>>)> = cands
            .iter()
            .filter_map(|r| {
                let f = r.compiled()?;
                Some((r, named.iter().map(|(q, p)| f.capture(&shown_for_quote(q.el, q.intro, &f.pick)?).map(|got| got == p.author)).collect()))
            })
            .collect();
        let alone = read.iter().find(|(_, reads)| reads.iter().all(|&r| r == Some(true))).map(|(r, _)| (*r).clone());
        // Else two wordings, one pattern each, as alternatives of one
        // pattern (the first that matches reads): where the first matches
        // it reads right, where it does not the second does.
        let both = || {
            read.iter().find_map(|(a, first)| {
                read.iter().find_map(|(b, second)| {
                    let (Some(x), Some(y)) = (&a.pattern, &b.pattern) else { return None };
                    let fits = b.css == a.css && x != y && first.iter().zip(second).all(|(&x, &y)| x == Some(true) || (x.is_none() && y == Some(true)));
                    fits.then(|| Rule { pattern: Some(format!("{x}|{y}")), ..(*a).clone() })
                })
            })
        };
        // The joined pattern read once more as extract reads it.
        let reads_all = |r: &Rule| {
            r.compiled().is_some_and(|f| {
                named.iter().all(|(q, p)| shown_for_quote(q.el, q.intro, &f.pick).and_then(|t| f.capture(&t)).as_deref() == Some(p.author.as_str()))
            })
        };
        if let Some(r) = alone.or_else(|| both().filter(reads_all)) {
            out.fields.extend(r.fields("quote-author", "quote-author-pattern", named.iter().take(3).map(|(_, p)| p.author.clone()).collect()));
        }
    }
    quotes
}

/// The pattern that reads `author` out of a line `t` that names it:
/// `Some(None)` when the line is the name, `None` when the line does not
/// name it in a way a pattern can find again. The name first, or after a
/// mention's one "@" (or "＠"), alone or before the white space and the
/// word after it ("发表于", "寫道："; not what follows, a date); or after
/// a lead ending in a separator (", ") and before closing words without
/// a digit that end the line (" 写道:", " wrote:"), where the lead, a
/// date or a salutation, is any text up to the line's last such separator.
fn author_pattern(t: &str, author: &str) -> Option<Option<String>> {
    let at = t.find(author)?;
    let (lead, rest) = (&t[..at], &t[at + author.len()..]);
    if matches!(lead, "" | "@" | "＠") {
        let lead = regex::escape(lead);
        if rest.is_empty() {
            return Some((!lead.is_empty()).then(|| format!("^{lead}(.+)$")));
        }
        if !rest.starts_with(|c: char| !c.is_alphanumeric()) {
            return None;
        }
        let space: String = rest.chars().take_while(|c| c.is_whitespace()).collect();
        let word: String = rest[space.len()..].chars().take_while(|c| !c.is_whitespace() && !c.is_ascii_digit()).collect();
        return (!word.is_empty()).then(|| Some(format!("^{lead}(.+?){}", regex::escape(&format!("{space}{word}")))));
    }
    let sep: String = {
        let tail: Vec<char> = lead.chars().rev().take_while(|&c| c.is_whitespace() || matches!(c, ',' | '，' | '、' | ';' | '；')).collect();
        tail.into_iter().rev().collect()
    };
    let closing = rest.chars().count() <= CLOSING_WORDS && !rest.chars().any(|c| c.is_ascii_digit());
    (!sep.trim().is_empty() && closing).then(|| Some(format!("^.*{}(.+?){}$", regex::escape(&sep), regex::escape(rest))))
}

/// Most characters of the words closing an intro after the quoted name.
const CLOSING_WORDS: usize = 12;

/// Characters at the end of an intro that say it introduces a quote
/// ("写道：", "ote:").
const INTRO_CLOSING: usize = 3;

/// `quote-intro`: the element just before a quote (white space between)
/// that names the quoted post, by its author's name or a link holding its
/// id, where the quote itself does not (FlaskBB's "青山客 wrote:", NodeBB's
/// "@小明 said in [标题](/post/53):"). Learned from quotes of sampled posts
/// whose intro says so, by the simplest selector that takes each of them
/// and, before any quote of a sampled post, nothing that does not name
/// that post or close as those intros do: a reply's own paragraph before
/// a quote stays its words.
/// With the examples.
fn intro_rule(
    posts: &[P],
    verified: &[(&QuoteAt, &P)],
    ids: &HashMap<usize, String>,
    quote_css: &str,
    strip: Option<&Selector>,
) -> Option<(String, Vec<String>)> {
    let any = parse("*").expect("static selector");
    let quote_sel = parse(quote_css)?;
    let names = |e: ElementRef, q: &QuoteAt| -> bool {
        let Some(j) = q.of else { return false };
        let author = &posts[j].author;
        let links_id = ids.get(&j).is_some_and(|id| {
            std::iter::once(e)
                .chain(e.descendent_elements())
                .any(|x| x.value().attrs().any(|(_, v)| digit_runs(v).into_iter().any(|(s, end)| &v[s..end] == id.as_str())))
        });
        (!author.is_empty() && line_text(e).contains(author.as_str())) || links_id
    };
    // Past what `strip` takes, as extract looks for it (HyperKitty's fold
    // control between the intro and the quote).
    let befores: Vec<(&QuoteAt, ElementRef)> = verified.iter().filter_map(|(q, _)| Some((*q, quote_intro(q.el, &any, strip)?))).collect();
    // Named before the quote and not inside it (Discuz!'s head names its
    // post inside: no intro there).
    let introduced: Vec<&(&QuoteAt, ElementRef)> = befores.iter().filter(|(q, e)| names(*e, q) && !names(q.el, q) && !quote_sel.matches(e)).collect();
    if introduced.len() < EVIDENCE {
        return None;
    }
    let scope = |q: &QuoteAt| posts[q.post].body.map_or(q.el.id(), |b| b.id());
    let cands = introduced.iter().take(3).flat_map(|(q, e)| forms(*e, scope(q)));
    // The last words of an intro that names its post ("写道：", "wrote:"):
    // one that closes so names the post too, as the forum shows its writer
    // where the post shows another name (HyperKitty's "马超 于…写道：" over
    // a mail whose sender shows as an address).
    let closing = |e: ElementRef| -> String {
        let t = line_text(e);
        let chars: Vec<char> = t.trim().chars().collect();
        chars[chars.len().saturating_sub(INTRO_CLOSING)..].iter().collect()
    };
    let closings: HashSet<String> = introduced.iter().map(|(_, e)| closing(*e)).filter(|c| c.chars().count() == INTRO_CLOSING).collect();
    let fits = |sel: &Selector| {
        introduced.iter().all(|(_, e)| sel.matches(e)) && befores.iter().all(|(q, e)| !sel.matches(e) || names(*e, q) || closings.contains(&closing(*e)))
    };
    let css = first_fitting(cands, fits)?;
    Some((css, introduced.iter().take(3).map(|(_, e)| line_text(*e)).collect()))
}

/// `reply-to` where a post's own words link the post it answers ("@小明
/// 在 [标题](/post/4929) 中说", "回复 #3"): a link on the forum's host,
/// outside quotes, holding the id of another sampled post of its thread,
/// in one form on every post that has one. Learned only where it says
/// more than the quotes' own links (which `reply-to` defaults to) and
/// never against them.
fn reply_links(
    posts: &[P],
    pages: &[Page],
    ids: &HashMap<usize, String>,
    quotes: &[QuoteAt],
    body_css: &str,
    strip: Option<&Selector>,
    fields: &mut Vec<Field>,
) {
    if ids.is_empty() {
        return;
    }
    let quoted_of_known = fields.iter().any(|f| f.attr == "quote-of");
    let in_quote = quoted_nodes(quotes);
    let id_at: HashMap<(Option<&str>, &str), usize> = ids.iter().map(|(i, id)| ((pages[posts[*i].page].thread.as_deref(), id.as_str()), *i)).collect();
    let anchors = Selector::parse("a[href]").expect("static selector");
    // The literal each answering link holds before the id, with its pattern.
    let mut forms_seen: HashMap<(Option<String>, String), usize> = HashMap::new();
    for (i, p) in posts.iter().enumerate() {
        let Some(b) = p.body else { continue };
        let page = &pages[p.page];
        for a in b.select(&anchors) {
            let skipped = a
                .ancestors()
                .filter_map(ElementRef::wrap)
                .take_while(|x| x.id() != b.id())
                .any(|x| in_quote.contains(&(i, x.id())) || strip.is_some_and(|s| s.matches(&x)));
            let href = a.value().attr("href").unwrap_or_default();
            let on_forum = page.url.join(href.trim()).is_ok_and(|u| u.host() == page.url.host());
            if skipped || !on_forum {
                continue;
            }
            for (s, e) in digit_runs(href) {
                let other = id_at.get(&(page.thread.as_deref(), &href[s..e])).is_some_and(|&j| j != i);
                if let (true, Some((Some(pattern), lit))) = (other, number_pattern(href, s, e)) {
                    *forms_seen.entry((Some(pattern), lit)).or_default() += 1;
                }
            }
        }
    }
    let Some(((Some(pattern), lit), n)) = forms_seen.into_iter().max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.clone()))) else { return };
    if n < EVIDENCE || lit.contains(['\'', '"']) {
        return;
    }
    let rule = Rule { css: format!("{body_css} a[href*='{lit}']"), attr: Some("href".into()), pattern: Some(format!("{pattern}$")) };
    let Some(f) = rule.compiled() else { return };
    let (mut known, mut adds) = (0, 0);
    for (i, p) in posts.iter().enumerate() {
        let Some(got) = read_in_post(p.el, &f) else { continue };
        let quoted = quotes.iter().find(|q| q.post == i).and_then(|q| q.of).and_then(|j| ids.get(&j));
        match id_at.get(&(pages[p.page].thread.as_deref(), got.as_str())) {
            Some(&j) if j == i => return,
            Some(_) => known += 1,
            None => {}
        }
        if quoted.is_some_and(|q| *q != got) {
            return;
        }
        adds += (quoted.is_none() || !quoted_of_known) as usize;
    }
    if known >= EVIDENCE && adds > 0 {
        fields.extend(rule.fields("reply-to", "reply-to-pattern", Vec::new()));
    }
}

/// Words that say a post was edited (FlaskBB: "Last modified: … by …").
/// Askbot's "提问于 <time>, updated <time>" names the edit "updated".
const EDIT_WORDS: [&str; 11] = ["编辑", "編輯", "edited", "Edited", "修改", "EDITED", "modified", "Modified", "updated", "Updated", "更新于"];

/// The attributes a time is kept in where the text shows none.
const TIME_ATTRS: [&str; 4] = ["datetime", "title", "data-time", "data-timestamp"];

/// An element inside `e` (or `e`) holding a time in one of [`TIME_ATTRS`],
/// that attribute, and the time.
fn time_attribute(e: ElementRef, clock: Clock) -> Option<(ElementRef, &'static str, String)> {
    e.descendent_elements().find_map(|d| TIME_ATTRS.iter().find_map(|&a| Some((d, a, clock.attribute(d.value().attr(a)?)?))))
}

/// A short element that says the post was edited and when: in its text
/// ("本帖最后由 … 于 2024-3-5 12:30 编辑"), or in an attribute inside it
/// (NodeBB's "last edited by 小明" and a `span.timeago` whose `title` holds
/// the time, its text empty without JavaScript).
///
/// An attribute's time counts only where the element's own text says
/// "edited": the element around the note holds the post's own time too.
fn is_edit_note(e: ElementRef) -> bool {
    let t = line_text(e);
    let says = |t: &str| EDIT_WORDS.iter().any(|w| t.contains(w));
    let own: String = e.children().filter_map(|c| c.value().as_text().map(|t| t.to_string())).collect();
    t.chars().count() <= 120 && says(&t) && (normalize_time(&t).is_some() || (says(&own) && time_attribute(e, Clock::CHINA).is_some()))
}

/// `e` as the element after one drawn like it (`a.rev + a.rev`): Askbot
/// writes a post's first revision, "回答 <time>", and its last, "updated
/// <time>", as two links of one class, so only the place tells the edit.
fn after_its_like(e: ElementRef) -> Vec<String> {
    let Some(prev) = e.prev_siblings().find_map(ElementRef::wrap) else { return Vec::new() };
    let mine = select::own(e);
    select::own(prev).into_iter().filter(|p| mine.contains(p)).map(|p| format!("{p} + {p}")).collect()
}

/// `edited`: the element of a post (outside its quotes) that says when it
/// was edited: the tightest, and a rule that reads its time in every post
/// that shows one and none in a post that does not. The time is read from
/// the note's text, or where the text has none from the attribute that
/// holds it (`css@title`).
fn edited(posts: &[P], quotes: &[QuoteAt], fields: &mut Vec<Field>) {
    let in_quote = quoted_nodes(quotes);
    // A note never holds the post's words (NodeBB's post element holds
    // "last edited by" and, in a reply's words, a date).
    let holds_body = |p: &P, e: &ElementRef| p.body.is_some_and(|b| b.id() == e.id() || b.ancestors().any(|a| a.id() == e.id()));
    let note = |(i, p): (usize, &P)| -> Option<NodeId> {
        p.el.descendent_elements()
            .filter(|e| !e.ancestors().any(|a| in_quote.contains(&(i, a.id()))) && !holds_body(p, e) && is_edit_note(*e))
            .filter(|e| !e.descendent_elements().any(|c| c.id() != e.id() && is_edit_note(c)))
            .map(|e| e.id())
            .next()
    };
    let notes: Vec<Option<NodeId>> = posts.iter().enumerate().map(note).collect();
    let shown: Vec<(usize, NodeId)> = notes.iter().enumerate().filter_map(|(i, n)| n.map(|n| (i, n))).collect();
    tracing::debug!("edited: {} of {} sampled posts show an edit note", shown.len(), posts.len());
    if shown.len() < EVIDENCE {
        return;
    }
    let el_of = |i: usize, n: NodeId| el_of_post(&posts[i], n);
    let clock = Clock::CHINA;
    let in_text = |e: ElementRef| clock.attribute(&line_text(e));
    let want: Vec<Option<String>> = posts
        .iter()
        .zip(&notes)
        .map(|(p, n)| n.map(|n| el_of_post(p, n)).and_then(|e| in_text(e).or_else(|| time_attribute(e, clock).map(|(.., t)| t))))
        .collect();
    let mut cands: Vec<Rule> = Vec::new();
    for &(i, n) in shown.iter().take(3) {
        let e = el_of(i, n);
        let (at, attr) = match time_attribute(e, clock) {
            Some((holder, attr, _)) if in_text(e).is_none() => (holder, Some(attr.to_owned())),
            _ => (e, None),
        };
        for css in forms(at, posts[i].el.id()).into_iter().chain(after_its_like(e).into_iter().map(|n| {
            if at.id() == e.id() {
                n
            } else {
                format!("{n} {}", at.value().name())
            }
        })) {
            let r = Rule { css, attr: attr.clone(), pattern: None };
            if !cands.contains(&r) {
                cands.push(r);
            }
        }
    }
    // A note inside the body may be the author's own words that name a
    // change and a date ("2008年6月5日修改"): a rule may read nothing there,
    // but never a wrong time, nor one where no note is.
    let in_body: Vec<bool> =
        posts.iter().zip(&notes).map(|(p, n)| n.zip(p.body).is_some_and(|(n, b)| el_of_post(p, n).ancestors().any(|a| a.id() == b.id()))).collect();
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        let got: Vec<Option<String>> = posts.iter().map(|p| first_in_post(p.el, &f.pick).and_then(|e| clock.attribute(&value_of(e, &f.pick)))).collect();
        let right = got.iter().zip(&want).zip(&in_body).all(|((g, w), body)| g == w || (g.is_none() && *body));
        if right && got.iter().flatten().count() >= EVIDENCE {
            let examples = shown.iter().take(3).map(|&(i, n)| line_text(el_of(i, n))).collect();
            fields.extend(r.fields("edited", "edited-pattern", examples));
            return;
        }
    }
}

fn el_of_post<'a>(p: &P<'a>, n: NodeId) -> ElementRef<'a> {
    ElementRef::wrap(p.el.tree().get(n).expect("a node")).expect("an element")
}

/// Words that say a name counts likes or votes.
const LIKES_WORDS: [&str; 6] = ["vote", "like", "zan", "digg", "upvote", "agree"];

/// Whether `name` (lower case) is named for likes or votes.
pub(crate) fn likes_word(name: &str) -> bool {
    LIKES_WORDS.iter().any(|w| name.contains(w))
}

/// Words in a class, a component or an attribute's name that say an
/// element counts likes or votes.
pub(crate) fn likes_named(e: ElementRef) -> bool {
    e.value().attrs().any(|(name, value)| {
        let (n, v) = (name.to_lowercase(), value.to_lowercase());
        likes_word(&n) || (matches!(name, "class" | "component" | "id" | "data-component") && likes_word(&v))
    })
}

/// Whether `text` shows one count among a few other signs: an icon
/// font's ligature (Misago's `favorite 3`), `赞(3)`, `👍 3`. A count alone
/// is [`site::count_of`]'s.
fn count_among_signs(text: &str) -> bool {
    let rest: String = text.chars().filter(|c| !c.is_ascii_digit() && !c.is_whitespace()).collect();
    let ligature = !rest.is_empty() && rest.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    digit_runs(text).len() == 1 && (ligature || rest.chars().count() <= 3)
}

/// `likes`: an element named for likes or votes whose text (or a `data-`
/// attribute) is a count, read by one selector in every post that shows
/// one. A post with none counts none: Misago shows a post's likes only
/// once it has some. Of rules that read alike, the one that reads most
/// posts, the text before an attribute.
///
/// Posts the rule finds nothing in may be another kind of post that
/// counts its likes elsewhere, and there only above 0: Askbot's comments,
/// under each question and answer, show theirs in a `div.js-score` left
/// empty at 0. A second rule for them joins the first (`A, B`) where the
/// two read together as each alone.
fn likes(posts: &[P], fields: &mut Vec<Field>) {
    let all: Vec<&P> = posts.iter().collect();
    let Some((first, mut read)) = likes_rule(&all, false) else { return };
    let mut rule = first.clone();
    let f = first.compiled().expect("a candidate compiles");
    let rest: Vec<&P> = posts.iter().filter(|p| first_in_post(p.el, &f.pick).is_none()).collect();
    if let Some((other, more)) = likes_rule(&rest, true).filter(|(o, _)| o.attr == first.attr && o.pattern == first.pattern) {
        let joined = Rule { css: format!("{}, {}", first.css, other.css), ..first.clone() };
        let in_rest: HashSet<NodeId> = rest.iter().map(|p| p.el.id()).collect();
        let alike = match (joined.compiled(), other.compiled()) {
            (Some(j), Some(o)) => {
                let count = |f: &site::Field, p: &P| first_in_post(p.el, &f.pick).and_then(|e| read_count(e, f));
                posts.iter().all(|p| count(&j, p) == count(if in_rest.contains(&p.el.id()) { &o } else { &f }, p))
            }
            _ => false,
        };
        if alike {
            rule = joined;
            read.extend(more);
        }
    }
    fields.extend(rule.fields("likes", "likes-pattern", read.iter().take(3).map(u64::to_string).collect()));
}

/// The count a likes element reads, `None` where it shows none.
fn read_count(e: ElementRef, f: &site::Field) -> Option<u64> {
    read(e, f).and_then(|v| count_of(&v))
}

/// The likes rule that reads most of `posts` ([`likes`]), and what it
/// reads. Every element it finds must be named for likes and read a count,
/// or, with `empty_zero`, show nothing at all (no likes yet).
fn likes_rule(posts: &[&P], empty_zero: bool) -> Option<(Rule, Vec<u64>)> {
    let mut cands: Vec<Rule> = Vec::new();
    for p in posts.iter().filter(|p| p.el.descendent_elements().any(|e| likes_named(e) && !likes_reads(e).is_empty())).take(3) {
        for e in p.el.descendent_elements().filter(|e| likes_named(*e)) {
            for (attr, pattern) in likes_reads(e) {
                for css in forms(e, p.el.id()) {
                    let r = Rule { css, attr: attr.clone(), pattern: pattern.clone() };
                    if !cands.contains(&r) {
                        cands.push(r);
                    }
                }
            }
        }
    }
    let mut best: Option<(Rule, Vec<u64>)> = None;
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        // Per post: no element (None), or what the element reads.
        let got: Vec<Option<Option<u64>>> = posts.iter().map(|p| first_in_post(p.el, &f.pick).filter(|e| likes_named(*e)).map(|e| read_count(e, &f))).collect();
        let shows_none = |p: &P| first_in_post(p.el, &f.pick).is_some_and(|e| read(e, &f).is_none_or(|v| v.trim().is_empty()));
        if posts.iter().zip(&got).any(|(p, g)| matches!(g, Some(None)) && !(empty_zero && shows_none(p))) {
            continue;
        }
        let read: Vec<u64> = got.iter().flatten().flatten().copied().collect();
        if read.len() >= EVIDENCE && best.as_ref().is_none_or(|(_, n)| read.len() > n.len()) {
            best = Some((r, read));
        }
    }
    best
}

/// How a likes element may be read: its text where that is a count, or a
/// count among a few signs; a `data-` attribute that is one.
fn likes_reads(e: ElementRef) -> Vec<(Option<String>, Option<String>)> {
    // The text a reader sees first: where an attribute reads as well, it
    // is more often the button's own setting (HyperKitty's like button's
    // `data-vote="1"` beside its count).
    let mut reads: Vec<(Option<String>, Option<String>)> = Vec::new();
    let text = line_text(e);
    if count_of(&text).is_some() {
        reads.push((None, None));
    } else if count_among_signs(&text) {
        reads.push((None, Some(r"(\d+)".to_owned())));
    }
    reads.extend(e.value().attrs().filter(|(n, v)| n.starts_with("data-") && count_of(v).is_some()).map(|(n, _)| (Some(n.to_owned()), None)));
    reads
}

/// The IP属地 label Chinese forums have shown since 2022.
const LOCATION: &str = r"IP属地[：:]\s*(\p{Han}+)";

/// `location`: the tightest element of a post that shows "IP属地：广东",
/// taken by one selector in every post that shows one.
fn location(posts: &[P], fields: &mut Vec<Field>) {
    let re = Regex::new(LOCATION).expect("static pattern");
    let shows = |e: ElementRef| re.is_match(&line_text(e));
    let tightest = |p: &P| -> Option<NodeId> {
        p.el.descendent_elements().filter(|e| shows(*e) && !e.children().filter_map(ElementRef::wrap).any(shows)).map(|e| e.id()).next()
    };
    let at: Vec<Option<NodeId>> = posts.iter().map(tightest).collect();
    let shown: Vec<(usize, NodeId)> = at.iter().enumerate().filter_map(|(i, n)| n.map(|n| (i, n))).collect();
    if shown.len() < EVIDENCE {
        return;
    }
    let value = |e: ElementRef| text_read(e, &re);
    let cands = shown.iter().take(3).flat_map(|&(i, n)| forms(el_of_post(&posts[i], n), posts[i].el.id()));
    let fits = |sel: &Selector| {
        posts.iter().zip(&at).all(|(p, n)| {
            let got = first_in_post(p.el, sel).and_then(value);
            got == n.and_then(|n| value(el_of_post(p, n)))
        })
    };
    if let Some(css) = first_fitting(cands, fits) {
        let examples = shown.iter().take(3).filter_map(|&(i, n)| value(el_of_post(&posts[i], n))).collect();
        fields.push(Field { attr: "location", css, examples });
        fields.push(Field { attr: "location-pattern", css: LOCATION.to_owned(), examples: Vec::new() });
    }
}

/// `board-name`: a link outside the posts (the breadcrumb, "回到「…」")
/// to the list of the board that lists the thread, whose text shows the
/// name the home page gives that board, alone or inside words every page
/// repeats (a pattern).
fn board_name(pages: &[Page], post: &Selector, k: &Known, fields: &mut Vec<Field>) {
    let anchors = Selector::parse("a[href]").expect("static selector");
    // Per page whose board is known: the links to that board.
    let mut evidence: Vec<(&Page, Vec<ElementRef>)> = Vec::new();
    for pg in pages.iter().filter(|p| p.board.is_some()) {
        // A post's links are its writer's, but for an article alone on its
        // page (a blog's, whose category link is in it).
        let posts: HashSet<NodeId> = pg.posts(post).into_iter().collect();
        let alone = posts.len() == 1;
        let links: Vec<ElementRef> = pg
            .doc
            .select(&anchors)
            .filter(|a| alone || !a.ancestors().any(|x| posts.contains(&x.id())))
            .filter(|a| pg.url.join(a.value().attr("href").unwrap_or_default().trim()).ok().and_then(|u| (k.board_of)(&u)) == pg.board)
            .collect();
        if !links.is_empty() {
            evidence.push((pg, links));
        }
    }
    if evidence.len() < EVIDENCE {
        board_name_in_title(pages, k, fields);
        return;
    }
    let name_of = |pg: &Page| pg.board.as_ref().and_then(|b| k.board_names.get(b));
    let mut cands: Vec<Rule> = Vec::new();
    for (pg, links) in evidence.iter().take(3) {
        let Some(name) = name_of(pg) else { continue };
        for a in links {
            let t = line_text(*a);
            let pattern = if t == *name {
                None
            } else if let Some(at) = t.find(name.as_str()).filter(|_| !name.is_empty()) {
                let (pre, post) = (&t[..at], &t[at + name.len()..]);
                Some(format!("{}(.+){}", regex::escape(pre.trim_start()), regex::escape(post.trim_end())))
            } else {
                continue;
            };
            let href = a.value().attr("href").unwrap_or_default();
            let prefix: String = href.chars().take_while(|c| !c.is_ascii_digit()).collect();
            let mut own = select::own(*a);
            if !prefix.is_empty() && !prefix.contains(['\'', '"', '\\']) {
                own.insert(0, format!("a[href^='{prefix}']"));
            }
            // Last, the link's place in a trail, counted from its end: a
            // trail of home, category, board and thread (machina) links
            // the category first, by a URL of the board's shape.
            if let Some(item) = a.parent().and_then(ElementRef::wrap).filter(|p| p.value().name() == "li") {
                let from_end = item.next_siblings().filter_map(ElementRef::wrap).count() + 1;
                for o in select::own(*a) {
                    own.push(format!("li:nth-last-child({from_end}) > {o}"));
                }
            }
            let mut css = own.clone();
            for anc in a.ancestors().filter_map(ElementRef::wrap).filter(|x| !matches!(x.value().name(), "html" | "body")).take(3) {
                for f in select::own(anc) {
                    for o in &own {
                        css.push(format!("{f} {o}"));
                    }
                }
            }
            for c in css {
                let r = Rule { css: c, attr: None, pattern: pattern.clone() };
                if !cands.contains(&r) {
                    cands.push(r);
                }
            }
        }
    }
    for r in cands {
        let Some(f) = r.compiled() else { continue };
        let fits = evidence.iter().all(|(pg, _)| {
            let Some(e) = pg.doc.select(&f.pick).next() else { return false };
            let to_board = pg.url.join(e.value().attr("href").unwrap_or_default().trim()).ok().and_then(|u| (k.board_of)(&u)) == pg.board;
            let got = read(e, &f);
            to_board && got.is_some() && name_of(pg).is_none_or(|n| got.as_deref() == Some(n.as_str()))
        });
        if fits {
            let examples = evidence.iter().filter_map(|(pg, _)| name_of(pg).cloned()).take(3).collect();
            fields.extend(r.fields("board-name", "board-name-pattern", examples));
            return;
        }
    }
    board_name_in_title(pages, k, fields);
}

/// `board-name` from the page's `<title>` where no link shows it
/// (HyperKitty's thread pages link their list as "List overview"; their
/// title is "<subject> - 书评天地 - 灵犀邮件列表", Discuz!'s "主题 - 版块 -
/// 站名"): the part after the last separator before the words the first
/// title ends with, read as the home page names each board on every page
/// whose board is known, of two boards or more.
fn board_name_in_title(pages: &[Page], k: &Known, fields: &mut Vec<Field>) {
    let title = Selector::parse("title").expect("static selector");
    let named: Vec<(&Page, &String)> = pages.iter().filter_map(|pg| Some((pg, k.board_names.get(pg.board.as_ref()?)?))).collect();
    if named.len() < EVIDENCE || named.iter().map(|(_, n)| *n).collect::<HashSet<_>>().len() < 2 {
        return;
    }
    let text = |pg: &Page| pg.doc.select(&title).next().map(line_text);
    let Some((t, name)) = named.iter().find_map(|(pg, n)| text(pg).filter(|t| t.contains(n.as_str())).map(|t| (t, *n))) else { return };
    let at = t.rfind(name.as_str()).expect("found above");
    let (before, after) = (&t[..at], t[at + name.len()..].trim_end());
    let sep: String = before.chars().rev().take_while(|c| !c.is_alphanumeric()).collect::<Vec<_>>().into_iter().rev().collect();
    if sep.trim().is_empty() {
        return;
    }
    let r = Rule { css: "title".into(), attr: None, pattern: Some(format!(r"^.*{}(.+?){}\s*$", regex::escape(&sep), regex::escape(after))) };
    let Some(f) = r.compiled() else { return };
    if named.iter().all(|(pg, n)| pg.doc.select(&f.pick).next().and_then(|e| read(e, &f)).as_deref() == Some(n.as_str())) {
        fields.extend(r.fields("board-name", "board-name-pattern", named.iter().map(|(_, n)| (*n).clone()).take(3).collect()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phpBB-like thread page: posts `(pid, uid, name, words)`, the third
    /// quoting the first when `quote`, the second edited; `index` numbers
    /// the posts from 0 on every page, as NodeBB's `data-index` does.
    fn page(tid: u32, posts: &[(u32, u32, &str, &str)], quote: bool) -> String {
        let mut out =
            format!("<html><body><p class=\"crumbs\"><a href=\"./index.php\">首頁</a> <a href=\"./viewforum.php?f=2\">詩詞</a></p><h2>主題{tid}</h2>");
        for (i, (pid, uid, name, words)) in posts.iter().enumerate() {
            out.push_str(&format!(
                "<div class=\"post\" id=\"p{pid}\" data-index=\"{i}\"><p class=\"author\"><a class=\"username\" href=\"./memberlist.php?mode=viewprofile&amp;u={uid}\">{name}</a> <time>2024-03-0{} 12:3{i}</time></p><div class=\"content\">",
                i + 1
            ));
            if quote && i == 2 {
                let (qp, qu, qn, qw) = posts[0];
                out.push_str(&format!(
                    "<blockquote><div><cite><a href=\"./memberlist.php?mode=viewprofile&amp;u={qu}\">{qn}</a> 寫道：<a href=\"./viewtopic.php?p={qp}#p{qp}\" data-post-id=\"{qp}\">↑</a></cite>{qw}</div></blockquote>"
                ));
            }
            out.push_str(words);
            out.push_str("</div>");
            if i == 1 {
                out.push_str(&format!("<div class=\"notice\">最後由 {name} 於 2024-03-05 13:0{tid} 編輯，總共編輯了 1 次。</div>"));
            }
            out.push_str("</div>");
        }
        out.push_str("</body></html>");
        out
    }

    fn learned(pages: &[(u32, String)]) -> HashMap<&'static str, String> {
        learned_stripping(pages, "blockquote")
    }

    /// [`learned`] with the body's `strip` rule given.
    fn learned_stripping(pages: &[(u32, String)], strip: &str) -> HashMap<&'static str, String> {
        let board_of = |u: &Url| u.path().ends_with("viewforum.php").then(|| u.query_pairs().find(|(k, _)| k == "f").map(|(_, v)| v.into_owned())).flatten();
        let names = HashMap::from([("2".to_owned(), "詩詞".to_owned())]);
        let k = Known { post: "div.post", body: "div.content", author: Some("a.username"), strip: Some(strip), board_of: &board_of, board_names: &names };
        learn_threads(pages, "http://bbs.test/viewtopic.php?t={tid}", &k).fields.into_iter().map(|f| (f.attr, f.css)).collect()
    }

    /// What [`learn`] makes of thread pages `(tid, html)`, each at `url`
    /// with `{tid}` its tid, all in board 2.
    fn learn_threads(pages: &[(u32, String)], url: &str, k: &Known) -> Learned {
        let docs: Vec<(u32, Html, Url)> =
            pages.iter().map(|(tid, html)| (*tid, Html::parse_document(html), Url::parse(&url.replace("{tid}", &tid.to_string())).unwrap())).collect();
        let pages: Vec<Page> =
            docs.iter().map(|(tid, doc, url)| Page { doc, url, thread: Some(tid.to_string()), board: Some("2".into()), posts: None }).collect();
        learn(&pages, k)
    }

    #[test]
    fn a_phpbb_like_thread_teaches_ids_quotes_edits_and_the_board() {
        let a = page(1, &[(101, 7, "小明", "春眠不觉晓处处闻啼鸟"), (102, 8, "小红", "夜来风雨声花落知多少"), (103, 9, "阿强", "我也喜欢这首诗的意境")], true);
        let b = page(2, &[(201, 8, "小红", "床前明月光疑是地上霜"), (202, 7, "小明", "举头望明月低头思故乡"), (203, 9, "阿强", "静夜思写尽了游子心")], true);
        let got = learned(&[(1, a), (2, b)]);
        assert_eq!(got.get("post-id").map(String::as_str), Some("div.post@id"), "{got:?}");
        assert_eq!(got.get("post-id-pattern").map(String::as_str), Some("^p(\\d+)$"));
        assert_eq!(got.get("author-url").map(String::as_str), Some("a.username@href"));
        assert_eq!(got.get("author-id").map(String::as_str), Some("a.username@href"));
        assert_eq!(got.get("author-id-pattern").map(String::as_str), Some("[?&]u=(\\d+)"));
        assert_eq!(got.get("quote").map(String::as_str), Some("blockquote"));
        assert_eq!(got.get("quote-head").map(String::as_str), Some("cite"));
        assert!(got.get("quote-of").is_some_and(|c| c.ends_with("@data-post-id") || got.contains_key("quote-of-pattern")), "{got:?}");
        assert_eq!(got.get("quote-author").map(String::as_str), Some("a"));
        assert_eq!(got.get("edited").map(String::as_str), Some("div.notice"));
        assert_eq!(got.get("board-name").map(String::as_str), Some("a[href^='./viewforum.php?f=']"));
        // Nothing on these pages counts likes, shows a location or links a post.
        for absent in ["likes", "location", "reply-to", "quote-intro"] {
            assert!(!got.contains_key(absent), "{absent}: {got:?}");
        }
    }

    /// A FlaskBB- or NodeBB-like thread: the quote's head ("小明 wrote:")
    /// stands before the blockquote, in the replier's own words; a post
    /// quoted whole brings its own quote with it.
    fn thread(tid: u32, posts: &[(u32, &str, String)]) -> String {
        let mut out = format!("<html><body><p class=\"crumbs\"><a href=\"./viewforum.php?f=2\">詩詞</a></p><h2>主題{tid}</h2>");
        for (i, (pid, name, content)) in posts.iter().enumerate() {
            let uid = name.chars().next().map_or(0, |c| c as u32 % 97);
            out.push_str(&format!(
                "<div class=\"post\" id=\"p{pid}\"><p class=\"author\"><a class=\"username\" href=\"./u/{uid}\">{name}</a> <time>2024-03-0{} 12:3{i}</time></p><div class=\"content\">{content}</div></div>",
                i + 1
            ));
        }
        out + "</body></html>"
    }

    /// `words` after a quote of all a post by `name` shows, headed as
    /// FlaskBB heads it (text too short to tell one post from another).
    fn quoting(name: &str, shown: &str, words: &str) -> String {
        format!("<p><strong><a href=\"/user/{name}\">{name}</a> wrote:</strong></p><blockquote>{shown}</blockquote>{words}")
    }

    /// The real-software bed, Spirit: a quote's head is its first line of
    /// text (`<a>@name</a> 评论道:<br>`, the quoted words after it in the
    /// same paragraph), which no selector takes. The learner found no head
    /// and dropped the quote rule, so quoted words read as the reply's own.
    #[test]
    fn a_quote_headed_by_a_line_of_text_keeps_the_line_and_names_its_author() {
        let spirit = |name: &str, shown: &str, words: &str| {
            let shown = shown.strip_prefix("<p>").expect("a paragraph first");
            format!("<blockquote><p><a class=\"comment-mention\" href=\"/user/7/{name}/\">@{name}</a> 评论道:<br>\n{shown}</blockquote>{words}")
        };
        let t = |tid: u32, a: &str, b: &str, c: &str| {
            let (x, y) = (format!("<p>{a}一二三四五六</p><p>{b}七八九十</p>"), format!("<p>{c}百千万亿兆</p>"));
            thread(
                tid,
                &[(tid * 100 + 1, "小明", x.clone()), (tid * 100 + 2, "小红", spirit("小明", &x, &y)), (tid * 100 + 3, "阿强", "<p>路过看看而已啦</p>".into())],
            )
        };
        let got = learned(&[(1, t(1, "举头望明月", "低头思故乡", "床前明月光")), (2, t(2, "白日依山尽", "黄河入海流", "欲穷千里目"))]);
        assert_eq!(got.get("quote").map(String::as_str), Some("blockquote"), "{got:?}");
        assert!(!got.contains_key("quote-head"), "{got:?}");
        assert!(got.contains_key("quote-author") && got.get("quote-author-pattern").is_some_and(|p| p.starts_with("^@(")), "the name after the @: {got:?}");
        // A first line of words the quoted post never wrote is no head.
        let long = format!("<p>{}</p>", "这是一段很长的话".repeat(6));
        let t = |tid: u32| {
            let x = format!("<p>{tid}举头望明月一二三四五六</p><p>低头思故乡七八九十</p>");
            let quoted = format!("<blockquote>{long}{x}</blockquote><p>欲穷千里目百千万</p>");
            thread(tid, &[(tid * 100 + 1, "小明", x.clone()), (tid * 100 + 2, "小红", quoted)])
        };
        let got = learned(&[(1, t(1)), (2, t(2))]);
        assert_eq!(got.get("quote"), None, "{got:?}");
    }

    /// The real-software bed, pybbm: a quote is `<blockquote><em>name</em><br>…`,
    /// and a quote of a quoting post holds the inner quote with its own
    /// `<em>`, which is quoted words. The learner wrote `quote-head="em"`,
    /// which took the inner name out too (nested quotes 0/6); a head now
    /// takes nothing of a quote nested inside, here scoped from the body.
    #[test]
    fn a_head_takes_nothing_of_a_quote_nested_inside() {
        let pybbm = |name: &str, shown: &str, words: &str| format!("<blockquote><em>{name}</em><br>{shown}</blockquote>{words}");
        let t = |tid: u32, a: &str, b: &str, c: &str| {
            let (x, y, z) = (format!("{a}一二三四五六"), format!("<br>{b}七八九十百千"), format!("<br>{c}万亿兆京垓秭"));
            let second = pybbm("小明", &x, &y);
            thread(tid, &[(tid * 100 + 1, "小明", x.clone()), (tid * 100 + 2, "小红", second.clone()), (tid * 100 + 3, "阿强", pybbm("小红", &second, &z))])
        };
        let got = learned(&[(1, t(1, "举头望明月", "低头思故乡", "床前明月光")), (2, t(2, "白日依山尽", "黄河入海流", "欲穷千里目"))]);
        assert_eq!(got.get("quote").map(String::as_str), Some("blockquote"), "{got:?}");
        assert_eq!(got.get("quote-head").map(String::as_str), Some("div.content > blockquote > em"), "{got:?}");
    }

    /// Regression (the real-software bed, FlaskBB, machina and NodeBB): a
    /// reply that quotes a quoting post whole holds the inner quote too.
    /// The learner took the inner quote's words for no post's (the quoted
    /// post's own words leave its quote out), so it looked for a head to
    /// cut them: with the nested quote among the first three it learned
    /// `quote-head="blockquote"` (the inner words then in neither the quote
    /// nor the post); without, it found no head and dropped the quote rule.
    /// And where the inner post wrote more than the outer, the quote was
    /// taken for the inner post's, whose words are not all it holds.
    #[test]
    fn a_quote_of_a_quoting_post_holds_its_inner_quote_and_needs_no_head() {
        let (w1, w2, w3) = ("<p>春眠不觉晓处处闻啼鸟</p><p>我也喜欢这首诗的意境</p>", "<p>夜来风雨声花落知多少</p>", "<p>床前明月光疑是地上霜</p>");
        let second = quoting("小明", w1, w2);
        let nested = thread(1, &[(101, "小明", w1.into()), (102, "小红", second.clone()), (103, "阿强", quoting("小红", &second, w3))]);
        let flat = |tid: u32, a: &str, b: &str| {
            let (x, y) = (format!("<p>{a}一二三四五六</p>"), format!("<p>{b}七八九十百千</p>"));
            thread(
                tid,
                &[(tid * 100 + 1, "小明", x.clone()), (tid * 100 + 2, "小红", quoting("小明", &x, &y)), (tid * 100 + 3, "阿强", quoting("小红", &y, w3))],
            )
        };
        for pages in [
            vec![(1, nested.clone()), (2, flat(2, "举头望明月", "低头思故乡")), (3, flat(3, "白日依山尽", "黄河入海流"))],
            vec![(2, flat(2, "举头望明月", "低头思故乡")), (3, flat(3, "白日依山尽", "黄河入海流")), (1, nested.clone())],
        ] {
            let order: Vec<u32> = pages.iter().map(|(t, _)| *t).collect();
            let got = learned(&pages);
            assert_eq!(got.get("quote").map(String::as_str), Some("blockquote"), "threads {order:?}: {got:?}");
            assert!(!got.contains_key("quote-head"), "threads {order:?}: a head would cut the inner quote's words: {got:?}");
        }
    }

    /// The real-software bed: FlaskBB ("青山客 wrote:") and NodeBB ("@小明
    /// said in [标题](/post/101):") write what names a quote just before it,
    /// as a paragraph of the reply. The learner wrote no rule for it, so
    /// the line was the reply's words and the quote named neither its post
    /// nor its author. A paragraph before a quote that names no one is the
    /// reply's, and a quote that names its post inside needs no intro. An
    /// intro is found past what strip takes (HyperKitty's fold control).
    #[test]
    fn a_quotes_intro_is_learned_where_the_line_before_it_names_the_quoted_post() {
        let words =
            ["春眠不觉晓处处闻啼鸟", "夜来风雨声花落知多少", "床前明月光疑是地上霜", "举头望明月低头思故乡", "白日依山尽黄河入海流", "欲穷千里目更上一层楼"];
        let threads = |intro: &dyn Fn(u32, &str) -> String| -> Vec<(u32, String)> {
            (1..=3u32)
                .map(|tid| {
                    let (a, b) = (format!("<p>{}</p>", words[tid as usize - 1]), format!("<p>{}</p>", words[tid as usize + 2]));
                    let reply = format!("{}<blockquote>{a}</blockquote>{b}", intro(tid * 100 + 1, "小明"));
                    (tid, thread(tid, &[(tid * 100 + 1, "小明", a.clone()), (tid * 100 + 2, "小红", reply)]))
                })
                .collect()
        };
        let flaskbb = threads(&|_, name| format!("<p><strong><a href=\"/user/{name}\">{name}</a> wrote:</strong></p>"));
        let got = learned(&flaskbb);
        assert_eq!(got.get("quote-intro").map(String::as_str), Some("p"), "{got:?}");
        let author = |got: &HashMap<&str, String>| (got.get("quote-author").cloned(), got.get("quote-author-pattern").cloned());
        // The name's own link, or the line cut before "wrote:".
        assert!(matches!(author(&got), (Some(a), None) if a == "a") || author(&got) == (Some("p".into()), Some("^(.+?) wrote:".into())), "{got:?}");
        let nodebb = threads(&|pid, name| format!("<p><a class=\"mention\" href=\"/user/{name}\">@{name}</a> said in <a href=\"/post/{pid}\">标题</a>:</p>"));
        let got = learned(&nodebb);
        // A full-width "＠" is a mention's too (its three bytes once kept it out).
        let wide =
            learned(&threads(&|pid, name| format!("<p><a class=\"mention\" href=\"/user/{name}\">＠{name}</a> 说 <a href=\"/post/{pid}\">标题</a>:</p>")));
        assert!(wide.get("quote-author-pattern").is_some_and(|p| p.starts_with("^＠(")), "{wide:?}");
        assert_eq!(got.get("quote-intro").map(String::as_str), Some("p"), "{got:?}");
        assert_eq!(
            (got.get("quote-of").map(String::as_str), got.get("quote-of-pattern").map(String::as_str)),
            (Some("a[href*='/post/']@href"), Some("/post/(\\d+)")),
            "{got:?}"
        );
        assert!(matches!(got.get("quote-author-pattern").map(String::as_str), Some("^@(.+)$" | "^@(.+?) said")), "{got:?}");
        assert!(matches!(got.get("quote-author").map(String::as_str), Some("a" | "a.mention" | "p")), "{got:?}");
        // HyperKitty: a fold control the body's strip takes between the
        // intro and the quote; the intro is found past it, as extract finds
        // it. One intro names the writer otherwise than the post shows them
        // (a mail's sender shown by address): it closes as the others do.
        let folded = threads(&|pid, name| {
            let name = if pid == 101 { "明哥" } else { name };
            format!("<p>{name} 于2025年10月6日周一 02:06写道：</p><div class=\"quoted-switch\"><a href=\"#\">...</a></div>")
        });
        let got = learned_stripping(&folded, "blockquote, div.quoted-switch");
        assert_eq!(got.get("quote-intro").map(String::as_str), Some("p"), "{got:?}");
        // The reply's own paragraph before a quote: no intro.
        let own = threads(&|_, _| "<p>我来说两句吧</p>".to_owned());
        let got = learned(&own);
        assert_eq!(got.get("quote").map(String::as_str), Some("blockquote"), "{got:?}");
        assert!(!got.contains_key("quote-intro"), "{got:?}");
    }

    /// The real-software bed, HyperKitty: each mail client words the line
    /// before a quote its own way, Gmail's "张伟 于2026年9月1日周二
    /// 19:42写道：" and Thunderbird's "在 2026/9/1 19:42, 张伟 写道:", so no
    /// one pattern read every quote's author (not learned on 20 quotes).
    /// Each wording's pattern is found, the name after a lead's ", " too,
    /// and the two are written as alternatives of one pattern. A sender
    /// shown by address above their post and by name in the line quoting
    /// it (2 intros in 11 there) tells neither pattern right from wrong.
    #[test]
    fn quoted_authors_named_in_two_wordings_are_read_by_one_pattern_of_two_alternatives() {
        let words =
            ["春眠不觉晓处处闻啼鸟", "夜来风雨声花落知多少", "床前明月光疑是地上霜", "举头望明月低头思故乡", "白日依山尽黄河入海流", "欲穷千里目更上一层楼"];
        let names = ["张伟", "李娜", "王芳"];
        let pages: Vec<(u32, String)> = (1..=3u32)
            .map(|tid| {
                let i = tid as usize - 1;
                let (a, b) = (format!("<p>{}</p>", words[i]), format!("<p>{}</p>", words[i + 3]));
                let intro = if tid == 2 {
                    format!("<p>在 2026/9/{tid} 19:42, {} 写道:</p>", names[i])
                } else {
                    format!("<p>{} 于2026年9月{tid}日周二 19:42写道：</p>", names[i])
                };
                let shown = if tid == 3 { "wangfang＠example.org" } else { names[i] };
                (tid, thread(tid, &[(tid * 100 + 1, shown, a.clone()), (tid * 100 + 2, "小红", format!("{intro}<blockquote>{a}</blockquote>{b}"))]))
            })
            .collect();
        let got = learned(&pages);
        assert_eq!(got.get("quote-intro").map(String::as_str), Some("p"), "{got:?}");
        assert_eq!(got.get("quote-author").map(String::as_str), Some("p"), "{got:?}");
        let pattern = Regex::new(got.get("quote-author-pattern").expect("a pattern")).unwrap();
        for (line, name) in [("赵敏 于2026年10月1日周四 08:00写道：", "赵敏"), ("在 2026/10/1 08:00, 周芷若 写道:", "周芷若")] {
            assert_eq!(site::QuoteRules::capture(Some(&pattern), line).as_deref(), Some(name), "{pattern} on {line:?}");
        }
    }

    /// NodeBB labels a topic's view count only by the icon before it
    /// (`title="浏览"`), the number rounded (`1.2k`) and exact in its own
    /// `title`; the reply count before it is labelled the same way. Read
    /// from the number the views icon names, exactly; an icon labelled
    /// nothing teaches nothing.
    #[test]
    fn a_count_labelled_only_by_its_icon_is_read_exactly_from_its_title() {
        let stats = |tid: u32, views: u32, label: &str| {
            let shown = if views >= 1000 { format!("{:.1}k", f64::from(views) / 1000.0) } else { views.to_string() };
            let post = |n: u32, name: &str| {
                format!("<div class=\"post\" id=\"p{tid}{n}\"><p><a class=\"username\" href=\"./u/{n}\">{name}</a></p><div class=\"content\">春眠不觉晓{tid}{n}</div></div>")
            };
            format!(
                "<html><body><h2>主題{tid}</h2><div class=\"stats\"><i class=\"fa fa-reply\" title=\"回复\"></i><span class=\"num\" title=\"{}\">{}</span>\
                 <i class=\"fa fa-eye\" title=\"{label}\"></i><span class=\"num\" title=\"{views}\">{shown}</span></div>{}{}</body></html>",
                tid + 1,
                tid + 1,
                post(1, "小明"),
                post(2, "小红")
            )
        };
        let got = learned(&[(1, stats(1, 1234, "浏览")), (2, stats(2, 56, "浏览")), (3, stats(3, 2048, "浏览"))]);
        assert_eq!(got.get("thread-views").map(String::as_str), Some("i.fa-eye + span.num@title"), "{got:?}");
        let got = learned(&[(1, stats(1, 1234, "")), (2, stats(2, 56, "")), (3, stats(3, 2048, ""))]);
        assert!(!got.contains_key("thread-views"), "{got:?}");
    }

    /// Regression (the real-software bed, machina): a trail of home,
    /// category, board and thread whose category link has the board's URL
    /// shape and comes first. A link selector takes the category's; the
    /// board's link is told by its place from the trail's end.
    #[test]
    fn a_board_whose_category_is_linked_first_is_named_by_its_place_in_the_trail() {
        let trail = |tid: u32, board: u32, name: &str| {
            let posts = format!("<div class=\"post\" id=\"p{tid}1\"><div class=\"content\">春眠不觉晓</div></div>");
            format!(
                "<html><body><ol class=\"breadcrumb\"><li><a href=\"./index.php\">首頁</a></li><li><a href=\"./viewforum.php?f=9\">詩詞分區</a></li><li><a href=\"./viewforum.php?f={board}\">{name}</a></li><li class=\"active\">主題{tid}</li></ol>{posts}</body></html>"
            )
        };
        let pages = [(1, trail(1, 2, "唐詩")), (2, trail(2, 3, "宋詞")), (3, trail(3, 2, "唐詩"))];
        let docs: Vec<(u32, Html, Url)> = pages
            .iter()
            .map(|(tid, html)| (*tid, Html::parse_document(html), Url::parse(&format!("http://bbs.test/viewtopic.php?t={tid}")).unwrap()))
            .collect();
        let boards = HashMap::from([(1, "2"), (2, "3"), (3, "2")]);
        let pages: Vec<Page> =
            docs.iter().map(|(tid, doc, url)| Page { doc, url, thread: Some(tid.to_string()), board: Some(boards[tid].into()), posts: None }).collect();
        let board_of = |u: &Url| u.path().ends_with("viewforum.php").then(|| u.query_pairs().find(|(k, _)| k == "f").map(|(_, v)| v.into_owned())).flatten();
        let names = HashMap::from([("2".to_owned(), "唐詩".to_owned()), ("3".to_owned(), "宋詞".to_owned()), ("9".to_owned(), "詩詞分區".to_owned())]);
        let mut fields = Vec::new();
        let k = Known { post: "div.post", body: "div.content", author: None, strip: None, board_of: &board_of, board_names: &names };
        board_name(&pages, &Selector::parse("div.post").unwrap(), &k, &mut fields);
        let css = fields.iter().find(|f| f.attr == "board-name").map(|f| f.css.as_str());
        assert_eq!(css, Some("li:nth-last-child(2) > a"), "{:?}", fields.iter().map(|f| (f.attr, &f.css)).collect::<Vec<_>>());
        let sel = Selector::parse(css.unwrap()).unwrap();
        for (pg, want) in pages.iter().zip(["唐詩", "宋詞", "唐詩"]) {
            assert_eq!(pg.doc.select(&sel).next().map(line_text).as_deref(), Some(want));
        }
    }

    /// Regression (the real-software bed, HyperKitty): a thread page links
    /// its board as "List overview" and names it only in its title,
    /// "<subject> - 书评天地 - 灵犀邮件列表"; a subject may hold the
    /// separator too. Board names were not learned.
    #[test]
    fn a_board_named_only_in_the_pages_title_is_read_from_it() {
        let page = |tid: u32, board: u32, name: &str, subject: &str| {
            format!(
                "<html><head><title>\n{subject} - {name} - 灵犀邮件列表\n</title></head><body><p><a href=\"/list/b{board}/\">List overview</a></p><div class=\"post\" id=\"p{tid}1\"><div class=\"content\">春眠不觉晓</div></div></body></html>"
            )
        };
        let pages = [(1, page(1, 2, "书评天地", "读书 - 笔记")), (2, page(2, 3, "数码与购物", "新手机")), (3, page(3, 2, "书评天地", "又一本好书"))];
        let docs: Vec<(u32, Html, Url)> =
            pages.iter().map(|(tid, html)| (*tid, Html::parse_document(html), Url::parse(&format!("http://lists.test/thread/{tid}/")).unwrap())).collect();
        let boards = HashMap::from([(1, "2"), (2, "3"), (3, "2")]);
        let pages: Vec<Page> =
            docs.iter().map(|(tid, doc, url)| Page { doc, url, thread: Some(tid.to_string()), board: Some(boards[tid].into()), posts: None }).collect();
        let board_of = |u: &Url| u.path().strip_prefix("/list/b").and_then(|r| r.strip_suffix("/latest")).map(str::to_owned);
        let names = HashMap::from([("2".to_owned(), "书评天地".to_owned()), ("3".to_owned(), "数码与购物".to_owned())]);
        let mut fields = Vec::new();
        let k = Known { post: "div.post", body: "div.content", author: None, strip: None, board_of: &board_of, board_names: &names };
        board_name(&pages, &Selector::parse("div.post").unwrap(), &k, &mut fields);
        let got: HashMap<&str, &str> = fields.iter().map(|f| (f.attr, f.css.as_str())).collect();
        assert_eq!(got.get("board-name"), Some(&"title"), "{got:?}");
        let f = Rule { css: "title".into(), attr: None, pattern: got.get("board-name-pattern").map(|p| p.to_string()) }.compiled().unwrap();
        for (pg, want) in pages.iter().zip(["书评天地", "数码与购物", "书评天地"]) {
            assert_eq!(pg.doc.select(&f.pick).next().and_then(|e| read(e, &f)).as_deref(), Some(want));
        }
    }

    /// Regression (the real-software bed, NodeBB): an edit note whose time
    /// is only in an attribute ("last edited by 小明" and a `span.timeago`
    /// whose `title` holds it), and a note left empty in every post not
    /// edited, after the post's own time in a `span.timeago` too; one
    /// post's words hold a date, so its element says "edited" (in the empty
    /// note) and shows a date (which made it a note no rule could read), and
    /// another's words say it changed something on a date.
    #[test]
    fn an_edit_time_kept_in_an_attribute_is_read_from_it_and_not_from_the_posts_own_time() {
        let page = |tid: u32| {
            let mut out = format!("<html><body><h2>主題{tid}</h2>");
            for (i, (name, words)) in [("小明", "春眠不觉晓处处闻啼鸟"), ("小红", "夜来风雨声花落知多少"), ("阿强", "床前明月光疑是地上霜")].iter().enumerate()
            {
                let edited = if (tid + i as u32).is_multiple_of(2) { format!("2025-03-0{tid}T0{i}:1{i}:00.000Z") } else { String::new() };
                out.push_str(&format!(
                    "<div class=\"post\" id=\"p{tid}{i}\"><p class=\"author\"><a class=\"username\" href=\"./u/{i}\">{name}</a> <a class=\"permalink\" href=\"/post/{tid}{i}\"><span class=\"timeago\" title=\"2025-02-0{tid}T1{i}:00:00.000Z\"></span></a> <small component=\"post/editor\">last edited by {name} <span class=\"timeago\" title=\"{edited}\"></span></small></p><div class=\"content\">{words}{tid}{aside}</div></div>",
                    // The author's own words naming a change and a date: no edit note.
                    aside = match (tid, i) {
                        (3, 0) => "<p>补充 2008年6月5日：另外这首诗</p>",
                        (2, 1) => "<p>我在2008年6月5日修改过这首诗</p>",
                        _ => "",
                    }
                ));
            }
            out + "</body></html>"
        };
        let got = learned(&[(1, page(1)), (2, page(2)), (3, page(3))]);
        let css = got.get("edited").unwrap_or_else(|| panic!("{got:?}"));
        let (sel, attr) = css.rsplit_once('@').unwrap_or_else(|| panic!("{css}: not read from an attribute"));
        assert_eq!(attr, "title");
        let sel = Selector::parse(sel).unwrap();
        for tid in 1..=3 {
            let doc = Html::parse_document(&page(tid));
            let post = Selector::parse("div.post").unwrap();
            for (i, p) in doc.select(&post).enumerate() {
                let read = first_in_post(p, &sel).and_then(|e| e.value().attr("title")).unwrap_or_default();
                let want = if (tid + i as u32).is_multiple_of(2) { format!("2025-03-0{tid}T0{i}:1{i}:00.000Z") } else { String::new() };
                assert_eq!(read, want, "{css}: thread {tid}, post {i}");
            }
        }
    }

    /// Regression (the real-software bed, Askbot): every post shows its
    /// first revision as a link, "回答 <time>"; an edited one adds a second
    /// link of the same class, "updated <time>". Neither the word nor the
    /// place was learned (edited: not learned, 0/18).
    #[test]
    fn an_edit_written_as_a_second_revision_link_saying_updated_is_learned() {
        let edited = |tid: u32, i: usize| (tid as usize + i).is_multiple_of(2);
        let page = |tid: u32| {
            let mut out = format!("<html><body><h2>主題{tid}</h2>");
            for (i, (name, words)) in [("小明", "春眠不觉晓处处闻啼鸟"), ("小红", "夜来风雨声花落知多少"), ("阿强", "床前明月光疑是地上霜")].iter().enumerate()
            {
                let link = |word: &str, h: usize| {
                    format!("<a class=\"rev\" href=\"/rev/{tid}{i}/\">{word} <abbr class=\"ago\" title=\"2025-03-0{tid} 1{h}:0{i}:00\">2025-03-0{tid} 1{h}:0{i}:00</abbr></a>")
                };
                let update = if edited(tid, i) { format!(", {}", link("updated", 2)) } else { String::new() };
                out.push_str(&format!(
                    "<div class=\"post\" id=\"p{tid}{i}\"><div class=\"content\">{words}{tid}</div><div class=\"info\"><a class=\"username\" href=\"/u/{i}/\">{name}</a><div class=\"revs\">{}{update}</div></div></div>",
                    link("回答", 1)
                ));
            }
            out + "</body></html>"
        };
        let got = learned(&[(1, page(1)), (2, page(2)), (3, page(3))]);
        let css = got.get("edited").unwrap_or_else(|| panic!("{got:?}"));
        let sel = Selector::parse(css.split('@').next().unwrap()).unwrap();
        let post = Selector::parse("div.post").unwrap();
        for tid in 1..=3 {
            let doc = Html::parse_document(&page(tid));
            for (i, p) in doc.select(&post).enumerate() {
                let read = first_in_post(p, &sel).map(line_text).unwrap_or_default();
                let want = if edited(tid, i) { format!("updated 2025-03-0{tid} 12:0{i}:00") } else { String::new() };
                assert_eq!(read, want, "{css}: thread {tid}, post {i}");
            }
        }
    }

    /// Regression (the real-software bed, Askbot): questions and answers
    /// show their votes, 0 too; the comments under them show theirs in
    /// another element, left empty at 0. The comments' were not learned
    /// (likes 213/235: every comment's missing).
    #[test]
    fn likes_that_comments_show_elsewhere_and_only_above_zero_join_the_posts_rule() {
        // Per post: its votes; per comment: its likes, 0 drawn empty.
        let votes = |tid: u32, i: u32| (tid * 3 + i) % 4;
        let liked = |tid: u32, i: u32, c: u32| if (tid + i + c).is_multiple_of(3) { (tid + c) % 3 + 1 } else { 0 };
        let page = |tid: u32| {
            let mut out = format!("<html><body><h2>主題{tid}</h2>");
            for i in 0..3 {
                let words = ["春眠不觉晓处处闻啼鸟", "夜来风雨声花落知多少", "床前明月光疑是地上霜"][i as usize];
                out.push_str(&format!(
                    "<div class=\"post\" id=\"p{tid}{i}\"><div class=\"vote-number\">{}</div><a class=\"username\" href=\"/u/{i}/\">用户{i}</a><div class=\"content\">{words}{tid}</div></div>",
                    votes(tid, i)
                ));
                for c in 0..2 {
                    let n = liked(tid, i, c);
                    out.push_str(&format!(
                        "<div class=\"post comment\" id=\"c{tid}{i}{c}\"><div class=\"content\">评论第{c}条说得很对{tid}{i}</div><a class=\"username\" href=\"/u/{c}/\">评论者{c}</a><div class=\"upvote-btn\" title=\"upvote comment\">{}</div></div>",
                        if n > 0 { n.to_string() } else { String::new() }
                    ));
                }
            }
            out + "</body></html>"
        };
        let got = learned(&[(1, page(1)), (2, page(2)), (3, page(3))]);
        let css = got.get("likes").unwrap_or_else(|| panic!("{got:?}"));
        let sel = Selector::parse(css).unwrap();
        let post = Selector::parse("div.post").unwrap();
        for tid in 1..=3 {
            let doc = Html::parse_document(&page(tid));
            let want: Vec<String> = (0..3)
                .flat_map(|i| {
                    std::iter::once(votes(tid, i).to_string())
                        .chain((0..2).map(move |c| Some(liked(tid, i, c)).filter(|n| *n > 0).map(|n| n.to_string()).unwrap_or_default()))
                })
                .collect();
            let read: Vec<String> = doc.select(&post).map(|p| first_in_post(p, &sel).map(line_text).unwrap_or_default()).collect();
            assert_eq!(read, want, "{css}: thread {tid}");
        }
    }

    #[test]
    fn numbers_that_do_not_name_one_post_or_one_author_are_not_ids() {
        // The id attribute repeats from thread to thread (a floor index),
        // and one name links two user numbers: neither is learned.
        let a = page(1, &[(1, 7, "小明", "春眠不觉晓处处闻啼鸟"), (2, 8, "小红", "夜来风雨声花落知多少"), (3, 9, "阿强", "我也喜欢这首诗的意境")], false);
        let b = page(2, &[(1, 8, "小红", "床前明月光疑是地上霜"), (2, 17, "小明", "举头望明月低头思故乡"), (3, 9, "阿强", "静夜思写尽了游子心")], false);
        let got = learned(&[(1, a), (2, b)]);
        for absent in ["post-id", "author-id", "quote"] {
            assert!(!got.contains_key(absent), "{absent}: {got:?}");
        }
    }

    #[test]
    fn numbers_are_cut_by_what_comes_before_them() {
        let at = |v: &str, n: &str| {
            let s = v.find(n).unwrap();
            number_pattern(v, s, s + n.len()).map(|(p, l)| (p.unwrap_or_default(), l))
        };
        assert_eq!(at("4929", "4929"), Some((String::new(), String::new())));
        assert_eq!(at("pid4929", "4929"), Some(("^pid(\\d+)$".into(), "pid".into())));
        assert_eq!(at("home.php?mod=space&uid=17", "17"), Some(("[?&]uid=(\\d+)".into(), "uid=".into())));
        assert_eq!(at("/md/post/4929", "4929"), Some(("/post/(\\d+)".into(), "/post/".into())));
        assert_eq!(at("space-uid-17.html", "17"), None, "no separator before: not a pattern luntan can trust");
        assert_eq!(at("/u/space-uid-17.html", "17"), Some(("/space\\-uid\\-(\\d+)".into(), "/space-uid-".into())));
        // Past a name that differs from link to link.
        assert_eq!(number_pattern_past_name("/u/yang-fan/6/", 12).as_deref(), Some("/u/[^/]+/(\\d+)"));
        assert_eq!(number_pattern_past_name("yang-fan/6/", 9), None, "no segment before the name");
    }

    #[test]
    fn counts_among_signs_are_one_number_and_a_few_signs_or_an_icons_name() {
        for yes in ["favorite 3", "赞(3)", "👍 12", "thumb_up 7"] {
            assert!(count_among_signs(yes), "{yes}");
        }
        for no in ["3 位会员喜欢这篇帖子", "2025-03-01", "Like 3", ""] {
            assert!(!count_among_signs(no), "{no}");
        }
    }

    /// A Misago-like thread: the author's profile `/u/<name's slug>/<uid>/`,
    /// likes shown only on a liked post, after an icon font's ligature.
    fn misago_like(tid: u32, posts: &[(u32, u32, &str, &str, u32)]) -> String {
        let mut out = format!("<html><body><ul class=\"crumbs\"><li><a href=\"./viewforum.php?f=2\">詩詞</a></li></ul><h1>主題{tid}</h1><ul>");
        for (i, (pid, uid, name, words, likes)) in posts.iter().enumerate() {
            let slug: String = name.chars().map(|c| char::from(b'a' + (c as u32 % 26) as u8)).collect();
            out.push_str(&format!(
                "<li class=\"post\" id=\"post-{pid}\"><div class=\"side\"><a class=\"item-title\" href=\"/u/{slug}/{uid}/\"><span class=\"name\">{name}</span></a></div><time>2024-03-0{} 12:3{i}</time><article class=\"markup\"><p>{words}</p></article>",
                i + 1
            ));
            if *likes > 0 {
                out.push_str(&format!("<div class=\"footer\"><p class=\"hint\">有人喜欢此内容。</p><p class=\"likes-compact\"><span class=\"material-icon\">favorite</span> {likes}</p></div>"));
            }
            out.push_str("</li>");
        }
        out + "</ul></body></html>"
    }

    #[test]
    fn an_author_id_after_the_name_in_the_profile_path_and_likes_only_liked_posts_show_are_learned() {
        let a = misago_like(
            1,
            &[(101, 7, "小明", "春眠不觉晓处处闻啼鸟", 3), (102, 8, "小红", "夜来风雨声花落知多少", 0), (103, 9, "阿强", "我也喜欢这首诗的意境", 1)],
        );
        let b = misago_like(
            2,
            &[(201, 8, "小红", "床前明月光疑是地上霜", 0), (202, 7, "小明", "举头望明月低头思故乡", 2), (203, 9, "阿强", "静夜思写尽了游子心", 0)],
        );
        let board_of = |_: &Url| None;
        let k = Known { post: "li.post", body: "article.markup", author: Some("span.name"), strip: None, board_of: &board_of, board_names: &HashMap::new() };
        let learned = learn_threads(&[(1, a), (2, b)], "http://bbs.test/t/x/{tid}/", &k);
        let got: HashMap<&str, &str> = learned.fields.iter().map(|f| (f.attr, f.css.as_str())).collect();
        assert_eq!(got.get("author-id-pattern"), Some(&"/u/[^/]+/(\\d+)"), "{got:?}");
        assert_eq!(got.get("likes-pattern"), Some(&"(\\d+)"), "{got:?}");
        let likes = learned.fields.iter().find(|f| f.attr == "likes").expect("likes learned");
        assert!(likes.css.contains("likes-compact"), "{likes:?}");
        assert_eq!(likes.examples, ["3", "1", "2"]);
    }

    /// A HyperKitty-like thread page of three mails; `mail(i)` gives the
    /// attributes of mail `i`'s header and what follows its body.
    fn mail_thread(tid: u32, mail: impl Fn(usize) -> (String, String)) -> String {
        let mut out = format!("<html><body><h1>主題{tid}</h1>");
        for i in 0..3 {
            let (header, after) = mail(i);
            out.push_str(&format!(
                "<div class=\"email\"><div class=\"email-header\"{header}><h2 class=\"name\">會員{i}</h2><time>2024-03-0{} 12:3{i}</time></div><div class=\"email-body\"><p>第{tid}封信的第{i}段文字</p></div>{after}</div>",
                i + 1
            ));
        }
        out + "</body></html>"
    }

    /// The real-software bed, HyperKitty: a mail's like button,
    /// `<a class="youlike vote" data-vote="1">👍 0</a>`, holds its count as
    /// text and the vote it casts as an attribute; the attribute was read
    /// first and learned (likes 9/215).
    #[test]
    fn likes_are_the_count_a_button_shows_not_the_vote_it_casts() {
        let button = |n: u32| format!("<a class=\"youlike vote\" href=\"#like\" data-vote=\"1\"><i class=\"fa\"></i> {n}</a>");
        let thread = |tid: u32, counts: [u32; 3]| mail_thread(tid, |i| (String::new(), button(counts[i])));
        let board_of = |_: &Url| None;
        let k = Known { post: "div.email", body: "div.email-body", author: Some("h2.name"), strip: None, board_of: &board_of, board_names: &HashMap::new() };
        let learned = learn_threads(&[(1, thread(1, [0, 2, 0])), (2, thread(2, [1, 0, 0]))], "http://lists.test/thread/{tid}/", &k);
        let likes = learned.fields.iter().find(|f| f.attr == "likes").expect("likes learned");
        assert!(!likes.css.contains('@'), "{likes:?}");
        assert_eq!(likes.examples, ["0", "2", "0"]);
    }

    /// HyperKitty names a mail by a hash of its Message-ID, not a number:
    /// `<div class="email-header" id="SDBN…">` and the mail's permalink
    /// `/message/SDBN…/`. A token a link of the post names is its id; one
    /// that nothing links (a script's made-up id) is not.
    #[test]
    fn a_post_named_by_a_token_its_permalink_holds_has_that_id() {
        let hash = |tid: u32, i: usize| format!("H{tid}X{i}QZM7YSDBQQE3ZN3J{}", tid * 7 + i as u32);
        let thread = |tid: u32, linked: bool| {
            mail_thread(tid, |i| {
                let id = hash(tid, i);
                let link = if linked { format!("<a href=\"/list/a@b.org/message/{id}/\" title=\"Permalink\"></a>") } else { String::new() };
                (format!(" id=\"{id}\""), format!("<div class=\"email-info\">{link}</div>"))
            })
        };
        let board_of = |_: &Url| None;
        let k = Known { post: "div.email", body: "div.email-body", author: Some("h2.name"), strip: None, board_of: &board_of, board_names: &HashMap::new() };
        let learn_from = |linked: bool| {
            let pages = [(1, thread(1, linked)), (2, thread(2, linked))];
            learn_threads(&pages, "http://lists.test/thread/{tid}/", &k).fields.into_iter().map(|f| (f.attr, (f.css, f.examples))).collect::<HashMap<_, _>>()
        };
        let got = learn_from(true);
        let (css, examples) = got.get("post-id").expect("a post id");
        assert_eq!(css, "div.email-header@id");
        assert_eq!(examples, &[hash(1, 0), hash(1, 1), hash(1, 2)]);
        assert!(!got.contains_key("post-id-pattern"));
        assert!(!learn_from(false).contains_key("post-id"), "no link names the token");
    }
}
