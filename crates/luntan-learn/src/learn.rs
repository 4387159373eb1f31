//! From a sample to rules: which pages are threads and which are board
//! lists, the URL patterns of each with their pagers, and the selectors of
//! a thread page's posts and a list page's rows.
//!
//! 1. **Threads by layout.** A page is thread-like when S4's template
//!    extraction finds posts on it (records with a date, whose body text
//!    lies mostly outside links); a URL shape is a thread shape when most
//!    of its pages are.
//! 2. **Pagers by URL.** A link that is its page with one number changed,
//!    added or dropped (`&page=2`, `-2-`, `&start=30`) is a pager step;
//!    the shape of first pages and the place of the page number follow.
//!    Of the thread shapes' pager families, the one that list pages link
//!    to most is the threads'; the place among its numbers that takes
//!    the most values on one list page is the thread id, and the others
//!    vary with where a link was found (left free, not pinned).
//! 3. **Boards by links.** A list page links to three threads or more; the
//!    list pages' pager family is the boards', and its number (or word)
//!    that differs most between boards is the board id.
//! 4. **Selectors.** The posts' records and their fields as the template
//!    found them become the simplest CSS selectors that pick exactly them
//!    (the records) or read the same value from them (author, time,
//!    floor, body) on every sampled page. Where the template's bodies
//!    agree on no selector, the body is the largest text block the
//!    records share a selector for, and `strip` the elements inside it
//!    that show a date or repeat another post (edit notes, quotes). Rows
//!    of a list page are the largest elements around one thread's links;
//!    reply counts and last-post times are the row texts that agree with
//!    the threads read whole.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use ego_tree::NodeId;
use luntan_core::dates::normalize_time;
use luntan_crawl::links::{self, first_number};
use luntan_extract::parse::floor_number;
use luntan_extract::template::{records, FoundRecord};
use scraper::{ElementRef, Html, Selector};
use url::Url;

use crate::sample::{Page, Sample};
use crate::select::{self, first_fitting, line_text};
use crate::urls::{first_page, merge_words, pager_step, pattern, Kind, Pos, Role, Shape, Split};
use crate::{Field, LearnError, Learned, LearnedLink};

/// Share of a shape's pages that must read as threads.
const THREAD_SHARE: f64 = 0.5;
/// Thread links on a page that make it a list.
const LIST_LINKS: usize = 3;
/// Share of records a field must be found in to be learned.
const FIELD_SHARE: f64 = 0.8;

/// A thread read whole: its posts and the last one's time.
type Whole = (usize, Option<String>);

/// One sampled page, analysed.
struct Seen<'s> {
    page: &'s Page,
    split: Split,
    shape: Shape,
    doc: Html,
    /// Posts as the template finds them, and whether they repeat.
    found: Vec<FoundRecord>,
    grouped: bool,
    thread_like: bool,
}

/// A pager family: first pages of one shape and the place of the number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Family {
    base: Shape,
    page: Option<(Pos, bool)>,
}

impl Family {
    fn page_key(&self) -> Option<&str> {
        match &self.page {
            Some((Pos::Query(k, _), true)) => Some(k),
            _ => None,
        }
    }

    /// Whether `split` is a page of this family (first or later).
    fn member(&self, split: &Split, shape_of: &impl Fn(&Split) -> Shape) -> bool {
        let shape = shape_of(split);
        shape == self.base || self.page_key().is_some_and(|k| shape.extra_param(&self.base).is_some_and(|(key, kind)| key == k && *kind == Kind::Num))
    }

    /// The varying places that may name the board or thread: all but a
    /// page number written in place.
    fn id_vars(&self) -> Vec<Pos> {
        self.base.vars().into_iter().map(|(p, _)| p).filter(|p| self.page.as_ref().is_none_or(|(pp, added)| *added || pp != p)).collect()
    }

    /// Whether `split` is this family's first page.
    fn first(&self, split: &Split, shape_of: &impl Fn(&Split) -> Shape, first: u64) -> bool {
        shape_of(split) == self.base
            && match &self.page {
                Some((pos, false)) => split.get(pos).and_then(|v| v.parse::<u64>().ok()) == Some(first),
                _ => true,
            }
    }
}

fn counts(c: char) -> bool {
    c.is_alphanumeric()
}

/// Letters and digits of `el` outside links and inside them, leaving out
/// texts that are dates or bare numbers (a list row's counts and times,
/// which would pass for prose) and the `labels` many records repeat.
fn text_split(el: ElementRef, labels: &HashSet<String>) -> (usize, usize) {
    let (mut out, mut inl) = (0, 0);
    for node in el.descendants() {
        let Some(t) = node.value().as_text().map(|t| t.trim()) else { continue };
        if t.chars().all(|c| !c.is_alphabetic()) || normalize_time(t).is_some() || labels.contains(t) {
            continue;
        }
        let n = t.chars().filter(|&c| counts(c)).count();
        let in_link = node.ancestors().take_while(|a| a.id() != el.id()).any(|a| a.value().as_element().is_some_and(|e| e.name() == "a"));
        if in_link {
            inl += n;
        } else {
            out += n;
        }
    }
    (out, inl)
}

/// The body a `body` selector takes in a post, as extract takes it: the
/// post itself when it matches, else the first match inside.
fn body_at<'a>(post: ElementRef<'a>, body: &Selector) -> Option<ElementRef<'a>> {
    if body.matches(&post) {
        Some(post)
    } else {
        post.select(body).next()
    }
}

fn el(doc: &Html, id: NodeId) -> ElementRef<'_> {
    ElementRef::wrap(doc.tree.get(id).expect("a node of this page")).expect("an element")
}

/// Posts, not rows of a list: the records are dated, their bodies hold
/// text, and most of a record's words lie outside links (a list row's
/// are its links: title, author, last poster).
fn thread_like(doc: &Html, found: &[FoundRecord]) -> bool {
    if found.is_empty() {
        return false;
    }
    let dated = found.iter().filter(|r| r.time.is_some()).count();
    let (mut body, mut out, mut inl) = (0, 0, 0);
    let none = HashSet::new();
    for r in found {
        body += text_split(el(doc, r.body), &none).0;
        let (o, i) = text_split(el(doc, r.record), &none);
        out += o;
        inl += i;
    }
    dated as f64 >= FIELD_SHARE * found.len() as f64 && body >= 10 * found.len() && out as f64 >= 0.6 * (out + inl) as f64
}

/// Learns the rules from `sample`; `what` fills in the id, name and
/// politeness the caller chose.
pub fn learn(sample: &Sample, mut what: Learned) -> Result<Learned, LearnError> {
    // Shapes, with boards named by words merged.
    let all_splits: Vec<Split> =
        sample.pages.iter().flat_map(|p| std::iter::once(Split::of(&p.url)).chain(p.links.iter().map(|l| Split::of(&l.url)))).collect();
    let raw: Vec<Shape> = all_splits.iter().map(Split::shape).collect::<BTreeSet<_>>().into_iter().collect();
    let merged = merge_words(&raw);
    let shape_of = |s: &Split| {
        let r = s.shape();
        merged.get(&r).cloned().unwrap_or(r)
    };

    let seen: Vec<Seen> = sample
        .pages
        .iter()
        .map(|page| {
            let doc = Html::parse_document(&page.html);
            let (found, grouped) = records(&doc, None);
            let split = Split::of(&page.url);
            Seen { page, shape: shape_of(&split), split, thread_like: thread_like(&doc, &found) && page.landed == page.url, doc, found, grouped }
        })
        .collect();
    let direct = |s: &&Seen| s.page.landed == s.page.url;

    // 1. Thread shapes by layout.
    let mut by_shape: BTreeMap<&Shape, (usize, usize)> = BTreeMap::new();
    for s in seen.iter().filter(direct) {
        let e = by_shape.entry(&s.shape).or_default();
        e.0 += 1;
        e.1 += s.thread_like as usize;
    }
    let thread_shapes: BTreeSet<&Shape> = by_shape.iter().filter(|(_, (n, t))| *t as f64 >= THREAD_SHARE * *n as f64 && *t > 0).map(|(s, _)| *s).collect();
    for (shape, (n, t)) in &by_shape {
        tracing::debug!("shape {}: {t} of {n} pages read as threads", shape.key());
    }
    if thread_shapes.is_empty() {
        return Err(LearnError::Unlearnable { what: "threads".into(), why: format!("none of the {} pages read shows repeated posts with dates", seen.len()) });
    }

    // 2. Pager steps, from every page read directly.
    let mut steps: BTreeMap<Family, Vec<(usize, Option<u64>)>> = BTreeMap::new();
    for (i, s) in seen.iter().enumerate().filter(|(_, s)| direct(s)) {
        for l in &s.page.links {
            let ls = Split::of(&l.url);
            if let Some(step) = pager_step(&s.split, &s.shape, &ls, &shape_of(&ls), if l.rel_pager { "next" } else { &l.text }) {
                steps.entry(Family { base: step.base, page: Some((step.pos, step.added)) }).or_default().push((i, step.value));
            }
        }
    }
    let lists_link = |fam: &Family| -> usize {
        let mut urls = HashSet::new();
        for s in seen.iter().filter(|s| !s.thread_like && s.page.depth > 0) {
            for l in &s.page.links {
                if fam.member(&Split::of(&l.url), &shape_of) {
                    urls.insert(&l.url);
                }
            }
        }
        urls.len()
    };

    // The threads' family: of those whose pages read as threads, the one
    // list pages link to most.
    let mut fams: Vec<Family> =
        steps.keys().filter(|f| thread_shapes.contains(&f.base) || seen.iter().any(|s| s.thread_like && f.member(&s.split, &shape_of))).cloned().collect();
    fams.extend(thread_shapes.iter().map(|s| Family { base: (*s).clone(), page: None }));
    let thread_fam = fams
        .into_iter()
        .map(|f| {
            let (linked, evidence) = (lists_link(&f), steps.get(&f).map_or(0, Vec::len));
            tracing::debug!("thread family {} paged at {:?}: {linked} links from lists, {evidence} pager steps", f.base.key(), f.page);
            (linked, evidence, f)
        })
        // A forum's own thread URLs are the ones its thread pagers write:
        // of two forms lists link to (rewritten and dynamic), the one with
        // pager steps; a family lists hardly link to (an author filter
        // with its own pager) does not count as paged.
        .max_by_key(|(linked, evidence, f)| (*evidence > 0 && *linked >= LIST_LINKS, *linked, *evidence, std::cmp::Reverse(f.clone())))
        .map(|(_, _, f)| f)
        .expect("thread shapes are not empty");
    tracing::debug!("threads: {} paged at {:?}", thread_fam.base.key(), thread_fam.page);

    // The thread id: the number that takes the most values on one page.
    let id_pos = |fam: &Family, pages: &mut dyn Iterator<Item = &Seen>| -> Option<Pos> {
        let vars = fam.id_vars();
        let mut best: HashMap<Pos, usize> = HashMap::new();
        for s in pages {
            let members: Vec<Split> = s.page.links.iter().map(|l| Split::of(&l.url)).filter(|l| fam.member(l, &shape_of)).collect();
            for v in &vars {
                let n = members.iter().filter_map(|m| m.get(v)).collect::<HashSet<_>>().len();
                let b = best.entry(v.clone()).or_default();
                *b = (*b).max(n);
            }
        }
        vars.into_iter().max_by_key(|v| (best.get(v).copied().unwrap_or(0), std::cmp::Reverse(format!("{v:?}"))))
    };
    let thread_id = id_pos(&thread_fam, &mut seen.iter().filter(|s| !s.thread_like && s.page.depth > 0)).ok_or_else(|| LearnError::Unlearnable {
        what: "thread links".into(),
        why: format!("thread URLs ({}) hold no number or name", thread_fam.base.key()),
    })?;

    // A thread linked under more names than one (`&extra=page%3D2`,
    // `&fpage=2`): the parameter lists add after the id is left open.
    let page_key = thread_fam.page_key().map(str::to_owned);
    // Only a parameter lists link threads by counts: one that a stray
    // page adds to a few links (an author filter) is not context.
    let mut context: BTreeSet<String> = BTreeSet::new();
    for s in seen.iter().filter(|s| !s.thread_like) {
        let mut ids: HashMap<String, HashSet<String>> = HashMap::new();
        for l in &s.page.links {
            let ls = Split::of(&l.url);
            let shape = shape_of(&ls);
            if let Some((k, _)) = shape.extra_param(&thread_fam.base) {
                if Some(k) != page_key.as_deref() && ls.query.last().is_some_and(|(last, _)| last == k) {
                    if let Some(id) = ls.get(&thread_id) {
                        ids.entry(k.to_owned()).or_default().insert(id.to_owned());
                    }
                }
            }
        }
        context.extend(ids.into_iter().filter(|(_, v)| v.len() >= LIST_LINKS).map(|(k, _)| k));
    }

    // The thread a URL names: a page of the threads' family, or a first
    // page with a context parameter.
    let thread_of = |sp: &Split| -> Option<String> {
        let named = thread_fam.member(sp, &shape_of) || shape_of(sp).extra_param(&thread_fam.base).is_some_and(|(k, _)| context.contains(k));
        named.then(|| sp.get(&thread_id).map(str::to_owned)).flatten()
    };

    // 3. List pages: pages that link to three threads or more.
    let thread_ids = |s: &Seen| -> HashSet<String> { s.page.links.iter().filter_map(|l| thread_of(&Split::of(&l.url))).collect() };
    let list_pages: Vec<usize> = (0..seen.len())
        .filter(|&i| {
            let s = &seen[i];
            direct(&s) && !s.thread_like && s.page.depth > 0 && !thread_fam.member(&s.split, &shape_of) && thread_ids(s).len() >= LIST_LINKS
        })
        .collect();
    if list_pages.is_empty() {
        return Err(LearnError::Unlearnable { what: "board lists".into(), why: format!("no page read links to {LIST_LINKS} threads or more") });
    }
    let list_shapes: BTreeSet<&Shape> = list_pages.iter().map(|&i| &seen[i].shape).collect();
    let board_fam = steps
        .keys()
        .filter(|f| list_pages.iter().any(|&i| f.member(&seen[i].split, &shape_of)) && !thread_shapes.contains(&f.base))
        .map(|f| (list_pages.iter().filter(|&&i| f.member(&seen[i].split, &shape_of)).count(), steps[f].len(), f.clone()))
        .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| b.2.cmp(&a.2)))
        .map(|(_, _, f)| f)
        .unwrap_or_else(|| {
            let most = list_shapes.iter().max_by_key(|sh| list_pages.iter().filter(|&&i| &&seen[i].shape == *sh).count()).expect("not empty");
            Family { base: (*most).clone(), page: None }
        });
    let home_seen = seen.iter().find(|s| s.page.depth == 0);
    let board_id = {
        // Board ids differ between boards: counted over the home page,
        // the lists, and the links of both.
        let vars = board_fam.id_vars();
        let mut values: HashMap<Pos, HashSet<String>> = HashMap::new();
        let sources = seen.iter().filter(|s| s.page.depth == 0).chain(list_pages.iter().map(|&i| &seen[i]));
        for s in sources {
            for l in std::iter::once(s.split.clone()).chain(s.page.links.iter().map(|l| Split::of(&l.url))) {
                if board_fam.member(&l, &shape_of) {
                    for v in &vars {
                        if let Some(x) = l.get(v) {
                            values.entry(v.clone()).or_default().insert(x.to_owned());
                        }
                    }
                }
            }
        }
        vars.into_iter().max_by_key(|v| values.get(v).map_or(0, HashSet::len))
    }
    .ok_or_else(|| LearnError::Unlearnable { what: "board links".into(), why: format!("board URLs ({}) hold no number or name", board_fam.base.key()) })?;

    // 4. Patterns.
    let origin = &sample.home;
    let values = |fam: &Family| -> Vec<u64> { steps.get(fam).map(|v| v.iter().filter_map(|(_, x)| *x).collect()).unwrap_or_default() };
    let mut links_out = Vec::new();
    for (fam, id, id_role, elem, page_elem) in
        [(&board_fam, &board_id, Role::Board, "board", "board-page"), (&thread_fam, &thread_id, Role::Thread, "thread", "thread-page")]
    {
        let vals = values(fam);
        let first = first_page(&vals);
        let mut roles = BTreeMap::from([(id.clone(), id_role.clone())]);
        let ctx: Vec<String> = if elem == "thread" { context.iter().cloned().collect() } else { Vec::new() };
        let examples = |pred: &dyn Fn(&Split) -> bool| -> Vec<String> {
            let mut out: Vec<String> = Vec::new();
            for s in &seen {
                for u in std::iter::once(&s.page.url).chain(s.page.links.iter().map(|l| &l.url)) {
                    let sp = Split::of(u);
                    if pred(&sp) && !out.contains(&u.to_string()) && out.len() < 5 {
                        out.push(u.to_string());
                    }
                }
            }
            out
        };
        match &fam.page {
            None => {
                links_out.push(LearnedLink {
                    element: elem,
                    pattern: pattern(origin, &fam.base, &roles, &ctx),
                    first: None,
                    examples: examples(&|sp| fam.member(sp, &shape_of)),
                });
            }
            Some((pos, false)) => {
                roles.insert(pos.clone(), Role::Fixed(first.to_string()));
                links_out.push(LearnedLink {
                    element: elem,
                    pattern: pattern(origin, &fam.base, &roles, &ctx),
                    first: None,
                    examples: examples(&|sp| fam.first(sp, &shape_of, first)),
                });
                roles.insert(pos.clone(), Role::Page);
                links_out.push(LearnedLink {
                    element: page_elem,
                    pattern: pattern(origin, &fam.base, &roles, &[]),
                    first: Some(first),
                    examples: examples(&|sp| fam.member(sp, &shape_of) && !fam.first(sp, &shape_of, first)),
                });
            }
            Some((pos, true)) => {
                links_out.push(LearnedLink {
                    element: elem,
                    pattern: pattern(origin, &fam.base, &roles, &ctx),
                    first: None,
                    examples: examples(&|sp| shape_of(sp) == fam.base),
                });
                roles.insert(pos.clone(), Role::Page);
                let key = fam.page_key().expect("an added page parameter");
                // The later pages' shape as links write it.
                let with = seen
                    .iter()
                    .flat_map(|s| std::iter::once(s.split.clone()).chain(s.page.links.iter().map(|l| Split::of(&l.url))))
                    .map(|sp| shape_of(&sp))
                    .find(|sh| sh.extra_param(&fam.base).is_some_and(|(k, kind)| k == key && *kind == Kind::Num))
                    .expect("a pager step was seen");
                links_out.push(LearnedLink {
                    element: page_elem,
                    pattern: pattern(origin, &with, &roles, &[]),
                    first: Some(first),
                    examples: examples(&|sp| shape_of(sp) == with),
                });
            }
        }
        if elem == "board" {
            let most = vals.iter().max().copied().unwrap_or(0);
            let pages = if first == 0 && most > 0 {
                let step = vals.iter().copied().filter(|&v| v > 0).min().unwrap_or(1);
                most / step + 1
            } else {
                most
            };
            if pages > 100 {
                what.max_board_pages = Some((pages * 2).min(u32::MAX as u64) as u32);
            }
        }
    }
    what.links = links_out;

    // 5. Posts.
    let thread_pages: Vec<&Seen> = seen.iter().filter(|s| direct(s) && thread_fam.member(&s.split, &shape_of)).collect();
    what.thread = post_rules(&thread_pages, &mut what.missing);

    // The title: the element whose text is the one list pages link the
    // thread by.
    let mut anchor: HashMap<String, String> = HashMap::new();
    for &i in &list_pages {
        for l in &seen[i].page.links {
            let sp = Split::of(&l.url);
            if thread_fam.member(&sp, &shape_of) {
                if let Some(id) = sp.get(&thread_id) {
                    let e = anchor.entry(id.to_owned()).or_default();
                    if l.text.chars().count() > e.chars().count() {
                        *e = l.text.clone();
                    }
                }
            }
        }
    }
    let titled: Vec<(&Seen, String)> =
        thread_pages.iter().filter_map(|s| s.split.get(&thread_id).and_then(|id| anchor.get(id)).filter(|t| !t.is_empty()).map(|t| (*s, fold(t)))).collect();
    match title_rule(&titled) {
        Some(f) => what.thread.insert(0, f),
        None => what.missing.push("title: no element shows the thread's name as lists link it; the page's <title> is used".into()),
    }

    // 6. List rows.
    let lists: Vec<&Seen> = list_pages.iter().map(|&i| &seen[i]).filter(|s| board_fam.member(&s.split, &shape_of)).collect();
    let is_thread = |u: &Url| thread_of(&Split::of(u));
    // What the threads read whole say: posts and the last post's time.
    let mut whole: HashMap<String, Whole> = HashMap::new();
    let thread_first = first_page(&values(&thread_fam));
    for s in &thread_pages {
        let later = s.page.links.iter().any(|l| {
            let sp = Split::of(&l.url);
            thread_fam.member(&sp, &shape_of) && sp.get(&thread_id) == s.split.get(&thread_id) && !thread_fam.first(&sp, &shape_of, thread_first)
        });
        if thread_fam.first(&s.split, &shape_of, thread_first) && !later && !s.found.is_empty() {
            if let Some(id) = s.split.get(&thread_id) {
                let last = s.found.last().and_then(|r| r.time).and_then(|t| time_text(&s.doc, t));
                whole.insert(id.to_owned(), (s.found.len(), last));
            }
        }
    }
    what.list = list_rules(&lists, &sample.site, &is_thread, &whole, &mut what.missing);

    // The forum's name: the part of the titles every page shares.
    if what.name.is_empty() {
        what.name = forum_name(home_seen, &seen).unwrap_or_else(|| what.id.clone());
    }
    Ok(what)
}

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn time_text(doc: &Html, id: NodeId) -> Option<String> {
    time_of(el(doc, id))
}

/// The time an element shows, as extract reads it (no clock: relative
/// times stay unread).
fn time_of(e: ElementRef) -> Option<String> {
    luntan_extract::parse::time_of(e, None)
}

/// The post selector and the fields inside it, from the pages whose posts
/// repeat.
fn post_rules(pages: &[&Seen], missing: &mut Vec<String>) -> Vec<Field> {
    let grouped: Vec<&&Seen> = pages.iter().filter(|s| s.grouped && s.found.len() >= 2).collect();
    let mut out = Vec::new();
    if grouped.is_empty() {
        missing.push("post: no thread page read shows two posts or more; posts are found by the template (post=\"auto\")".into());
        out.push(Field { attr: "post", css: "auto".into(), examples: Vec::new() });
        return out;
    }
    let examples = |ids: &mut dyn Iterator<Item = (&Html, NodeId)>| -> Vec<String> { ids.take(3).map(|(d, i)| describe(el(d, i))).collect() };
    let cands = grouped.iter().take(3).flat_map(|s| select::with_parent(el(&s.doc, s.found[0].record)));
    let post = first_fitting(cands, |sel| grouped.iter().all(|s| select::outermost(&s.doc, sel) == s.found.iter().map(|r| r.record).collect::<Vec<_>>()));
    match &post {
        Some(css) => out.push(Field {
            attr: "post",
            css: css.clone(),
            examples: examples(&mut grouped.iter().flat_map(|s| s.found.iter().map(move |r| (&s.doc, r.record)))),
        }),
        None => {
            missing.push("post: no simple selector picks exactly the posts on every page; posts are found by the template (post=\"auto\")".into());
            out.push(Field { attr: "post", css: "auto".into(), examples: Vec::new() });
        }
    }
    type Pick = fn(&FoundRecord) -> Option<NodeId>;
    let fields: [(&'static str, Pick, bool); 4] =
        [("body", |r| Some(r.body), true), ("author", |r| r.author, true), ("time", |r| r.time, true), ("floor", |r| r.floor, false)];
    for (name, pick, needed) in fields {
        let pairs: Vec<(&Html, NodeId, NodeId)> =
            grouped.iter().flat_map(|s| s.found.iter().filter_map(move |r| pick(r).map(|f| (&s.doc, r.record, f)))).collect();
        let total: usize = grouped.iter().map(|s| s.found.len()).sum();
        if (pairs.len() as f64) < FIELD_SHARE * total as f64 {
            if needed {
                missing.push(format!("{name}: found in {} of {total} posts only; not learned", pairs.len()));
            }
            continue;
        }
        // Candidates from the element the template picked and the two
        // above it (a time read from a `title` inside the `em` that holds
        // it); a selector fits when it reads the same value in every post.
        let cands = pairs.iter().take(3).flat_map(|(d, r, f)| {
            let f = el(d, *f);
            std::iter::once(f)
                .chain(f.ancestors().filter_map(ElementRef::wrap).take_while(|a| a.id() != *r).take(2))
                .flat_map(|e| select::inside(e, *r))
                .collect::<Vec<_>>()
        });
        let fits = |sel: &Selector| {
            pairs.iter().all(|(d, r, f)| {
                let rec = el(d, *r);
                let got = if name == "body" { body_at(rec, sel) } else { rec.select(sel).next() };
                got.is_some_and(|g| field_value(name, g) == field_value(name, el(d, *f)))
            })
        };
        match first_fitting(cands, fits) {
            Some(css) => out.push(Field { attr: name, css, examples: examples(&mut pairs.iter().map(|(d, _, f)| (*d, *f))) }),
            None if needed => missing.push(format!("{name}: no simple selector picks it in every post; not learned")),
            None => {}
        }
    }
    if out[0].css != "auto" && !out.iter().any(|f| f.attr == "body") {
        match body_by_words(&grouped) {
            Some(body) => {
                missing.retain(|m| !m.starts_with("body:"));
                out.insert(1, body);
            }
            // A post selector needs a body; without one the template
            // finds the posts and every field.
            None => {
                missing.push("post: learned, but not its body; posts and their fields are found by the template (post=\"auto\")".into());
                return vec![Field { attr: "post", css: "auto".into(), examples: Vec::new() }];
            }
        }
    }
    if let Some(body) = out.iter().find(|f| f.attr == "body").and_then(|f| select::parse(&f.css)) {
        let bodies: Vec<(&Html, ElementRef)> =
            grouped.iter().flat_map(|s| s.found.iter().filter_map(|r| body_at(el(&s.doc, r.record), &body).map(|g| (&s.doc, g)))).collect();
        let strip = strip_rule(&bodies);
        if !strip.css.is_empty() {
            out.push(strip);
        }
    }
    out
}

/// The body where the template's own picks agree on no selector (a
/// profile beside the post taken in, a quote taken for the post): "the
/// largest text block". Of the selectors of elements inside the records,
/// the one that holds (nearly) the most of the posts' words, and of those
/// the tightest; words count outside links, dates, bare numbers (a
/// profile's post counts) and the labels most records repeat ("发表于",
/// "只看该作者"). Quotes and edit notes it takes in are left to `strip`.
fn body_by_words(grouped: &[&&Seen]) -> Option<Field> {
    struct Page<'a> {
        records: Vec<ElementRef<'a>>,
        labels: HashSet<String>,
    }
    let pages: Vec<Page> = grouped
        .iter()
        .map(|s| {
            let records: Vec<ElementRef> = s.found.iter().map(|r| el(&s.doc, r.record)).collect();
            let mut seen_in: HashMap<String, usize> = HashMap::new();
            for r in &records {
                let texts: HashSet<String> = r.text().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect();
                for t in texts {
                    *seen_in.entry(t).or_default() += 1;
                }
            }
            let labels = seen_in.into_iter().filter(|(_, n)| n * 2 >= records.len()).map(|(t, _)| t).collect();
            Page { records, labels }
        })
        .collect();
    let total: usize = pages.iter().map(|p| p.records.len()).sum();
    let mut cands: Vec<String> = Vec::new();
    for p in pages.iter().take(2) {
        for r in p.records.iter().take(3) {
            for e in r.descendent_elements() {
                for c in select::inside(e, r.id()) {
                    if !cands.contains(&c) {
                        cands.push(c);
                    }
                }
            }
        }
    }
    // (selector, words held, characters in all)
    let mut scored: Vec<(String, usize, usize)> = Vec::new();
    for css in cands {
        let Some(sel) = select::parse(&css) else { continue };
        let (mut held, mut size, mut found) = (0, 0, 0);
        for p in &pages {
            for r in &p.records {
                if let Some(g) = body_at(*r, &sel) {
                    found += 1;
                    held += text_split(g, &p.labels).0;
                    size += g.text().map(|t| t.chars().filter(|c| !c.is_whitespace()).count()).sum::<usize>();
                }
            }
        }
        if found * 10 >= total * 9 {
            scored.push((css, held, size));
        }
    }
    let most = scored.iter().map(|s| s.1).max()?;
    let (css, _, _) = scored.into_iter().filter(|s| s.1 * 20 >= most * 19).min_by_key(|s| s.2)?;
    let sel = select::parse(&css)?;
    tracing::debug!("body by its words: {css}");
    let examples = pages.iter().flat_map(|p| p.records.iter().filter_map(|r| body_at(*r, &sel))).take(3).map(describe).collect();
    Some(Field { attr: "body", css, examples })
}

/// `strip`: the elements of a class inside the bodies that, wherever
/// they occur, show a date ("本帖最后由 … 于 2024-6-15 编辑", "[ 此帖被 …
/// 在 … 重新编辑 ]", "… 发表于 …") or repeat another post's words on the
/// page (a quote). Empty when there are none, or when stripping them would
/// leave a post with no text.
fn strip_rule(bodies: &[(&Html, ElementRef)]) -> Field {
    let none = Field { attr: "strip", css: String::new(), examples: Vec::new() };
    let mut texts: HashMap<*const Html, Vec<String>> = HashMap::new();
    for (d, g) in bodies {
        texts.entry(*d as *const Html).or_default().push(line_text(*g));
    }
    let mut tally: BTreeMap<String, (usize, usize, Vec<String>)> = BTreeMap::new();
    for (d, g) in bodies {
        let own_text = line_text(*g);
        for e in g.descendent_elements() {
            let Some(key) = select::own(e).into_iter().find(|o| o.contains('.')) else { continue };
            let t = line_text(e);
            if t.chars().count() < 4 {
                continue;
            }
            let dated = normalize_time(&t).is_some();
            let quoted = texts[&(*d as *const Html)].iter().any(|other| *other != own_text && other.contains(&t));
            let entry = tally.entry(key).or_default();
            entry.0 += (dated || quoted) as usize;
            entry.1 += 1;
            if entry.2.len() < 2 {
                entry.2.push(describe(e));
            }
        }
    }
    let kept: Vec<(&String, &Vec<String>)> = tally.iter().filter(|(_, (hit, n, _))| *n >= 2 && *hit * 5 >= *n * 4).map(|(k, (_, _, ex))| (k, ex)).collect();
    if kept.is_empty() {
        return none;
    }
    let css = kept.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ");
    let Some(sel) = select::parse(&css) else { return none };
    if bodies.iter().any(|(_, g)| luntan_extract::parse::paragraphs(*g, Some(&sel)).is_empty()) {
        tracing::debug!("stripping {css} empties a post; not stripped");
        return none;
    }
    Field { attr: "strip", css, examples: kept.into_iter().flat_map(|(_, ex)| ex.clone()).collect() }
}

/// What extract reads from a field's element: the body's paragraphs, the
/// author's name, the time, the floor's number.
fn field_value(name: &str, e: ElementRef) -> Option<String> {
    match name {
        "body" => Some(luntan_extract::parse::paragraphs(e, None).join("\n")),
        "time" => time_of(e),
        "floor" => floor_number(&line_text(e)).map(|n| n.to_string()),
        _ => Some(line_text(e)),
    }
}

fn title_rule(titled: &[(&Seen, String)]) -> Option<Field> {
    let body = Selector::parse("body *").expect("static selector");
    let mut cands: Vec<String> = Vec::new();
    for (s, t) in titled.iter().take(3) {
        for e in s.doc.select(&body) {
            if fold(&line_text(e)) == *t && !e.children().filter_map(ElementRef::wrap).any(|c| fold(&line_text(c)) == *t) {
                cands.extend(select::with_parent(e));
            }
        }
    }
    let css = first_fitting(cands, |sel| titled.iter().all(|(s, t)| s.doc.select(sel).next().is_some_and(|e| fold(&line_text(e)) == *t)))?;
    let examples = titled.iter().take(3).map(|(_, t)| t.clone()).collect();
    Some(Field { attr: "title", css, examples })
}

/// `tag#id.class` and the first words of its text, for `--explain`.
fn describe(e: ElementRef) -> String {
    let mut s = e.value().name().to_owned();
    if let Some(id) = e.value().id() {
        s.push('#');
        s.push_str(id);
    }
    for c in e.value().classes() {
        s.push('.');
        s.push_str(c);
    }
    let text: String = line_text(e).chars().take(24).collect();
    format!("<{s}> {text:?}")
}

/// Rows, titles, reply counts and last-post times of list pages.
fn list_rules(
    lists: &[&Seen],
    site: &luntan_core::Site,
    is_thread: &dyn Fn(&Url) -> Option<String>,
    whole: &HashMap<String, Whole>,
    missing: &mut Vec<String>,
) -> Option<Vec<Field>> {
    let anchors = Selector::parse("a[href]").expect("static selector");
    // Per page: each row (the largest element around one thread's links),
    // its thread, and its longest thread link.
    struct Row {
        row: NodeId,
        thread: String,
        link: NodeId,
    }
    let mut pages: Vec<(&Html, Vec<Row>)> = Vec::new();
    for s in lists {
        let base = links::base_url(&s.doc, &s.page.landed);
        let found: Vec<(ElementRef, String)> =
            s.doc.select(&anchors).filter_map(|a| links::resolve(site, &base, a.value().attr("href")?).and_then(|u| is_thread(&u)).map(|t| (a, t))).collect();
        let mut rows: Vec<Row> = Vec::new();
        for (a, t) in &found {
            let mut row = *a;
            for anc in a.ancestors().filter_map(ElementRef::wrap) {
                if matches!(anc.value().name(), "body" | "html") {
                    break;
                }
                let others = found.iter().any(|(b, u)| u != t && b.ancestors().any(|x| x.id() == anc.id()));
                if others {
                    break;
                }
                row = anc;
            }
            if row.id() == a.id() {
                continue;
            }
            let text = line_text(*a).chars().count();
            match rows.iter_mut().find(|r| r.row == row.id()) {
                Some(r) => {
                    if text > line_text(el(&s.doc, r.link)).chars().count() {
                        r.link = a.id();
                    }
                }
                None => rows.push(Row { row: row.id(), thread: t.clone(), link: a.id() }),
            }
        }
        if rows.len() >= 2 {
            pages.push((&s.doc, rows));
        }
    }
    if pages.is_empty() {
        missing.push("list: no repeated thread rows on the list pages; every thread link on a list page counts".into());
        return None;
    }
    let cands = pages.iter().take(3).flat_map(|(d, rows)| select::with_parent(el(d, rows[0].row)));
    let row_css = first_fitting(cands, |sel| {
        pages.iter().all(|(d, rows)| {
            let want: HashSet<NodeId> = rows.iter().map(|r| r.row).collect();
            let got: HashSet<NodeId> = d.select(sel).filter(|e| want.contains(&e.id())).map(|e| e.id()).collect();
            // Every row picked, and nothing else picked that holds a
            // row's thread link.
            got == want && d.select(sel).all(|e| want.contains(&e.id()) || !rows.iter().any(|r| el(d, r.link).ancestors().any(|x| x.id() == e.id())))
        })
    });
    let Some(row_css) = row_css else {
        missing.push("list: no simple selector picks exactly the thread rows; every thread link on a list page counts".into());
        return None;
    };
    let mut out = vec![Field {
        attr: "row",
        css: row_css,
        examples: pages.iter().flat_map(|(d, rows)| rows.iter().map(move |r| describe(el(d, r.row)))).take(3).collect(),
    }];
    let all_rows: Vec<(&Html, &Row)> = pages.iter().flat_map(|(d, rows)| rows.iter().map(move |r| (*d, r))).collect();
    let cands = all_rows.iter().take(3).flat_map(|(d, r)| select::inside(el(d, r.link), r.row));
    let title = first_fitting(cands, |sel| all_rows.iter().all(|(d, r)| el(d, r.row).select(sel).next().map(|e| e.id()) == Some(r.link)));
    match title {
        Some(css) => out.push(Field { attr: "title", css, examples: all_rows.iter().take(3).map(|(d, r)| line_text(el(d, r.link))).collect() }),
        None => missing.push("list title: the thread link's text is used".into()),
    }
    // Reply counts and last posts: the row texts that agree with the
    // threads read whole.
    let known: Vec<(&Html, &Row, &Whole)> = all_rows.iter().filter_map(|(d, r)| whole.get(&r.thread).map(|w| (*d, *r, w))).collect();
    let any_el = Selector::parse("*").expect("static selector");
    for (attr, wants) in [("replies", true), ("last-post", false)] {
        if known.len() < 2 {
            missing.push(format!("{attr}: fewer than two threads were read whole to check it against; not learned"));
            continue;
        }
        let value = |e: ElementRef| -> Option<String> {
            let t = line_text(e);
            if wants {
                first_number(&t).map(|n| n.to_string())
            } else {
                normalize_time(&t)
            }
        };
        let expect = |w: &Whole| -> Option<String> {
            if wants {
                Some((w.0 as i64 - 1).to_string())
            } else {
                w.1.clone()
            }
        };
        let mut cands = Vec::new();
        for (d, r, w) in known.iter().take(4) {
            let row = el(d, r.row);
            for e in row.select(&any_el) {
                if value(e).is_some() && value(e) == expect(w) && e.children().filter_map(ElementRef::wrap).all(|c| value(c) != value(e)) {
                    cands.extend(select::inside(e, r.row));
                }
            }
        }
        let fits = |sel: &Selector| known.iter().all(|(d, r, w)| el(d, r.row).select(sel).next().and_then(value) == expect(w));
        match first_fitting(cands, fits) {
            Some(css) => out.push(Field {
                attr,
                css,
                examples: known.iter().take(3).map(|(_, r, w)| format!("thread {}: {}", r.thread, expect(w).unwrap_or_default())).collect(),
            }),
            None => missing.push(format!("{attr}: no text in the rows agrees with the threads read whole; not learned")),
        }
    }
    Some(out)
}

/// The part of the page titles (split at ` - `, `|`, `_`, `–`, `—`, `·`)
/// that most pages share; of equals, the first in the home page's title.
fn forum_name(home: Option<&Seen>, seen: &[Seen]) -> Option<String> {
    let title_sel = Selector::parse("title").expect("static selector");
    let parts = |s: &Seen| -> Vec<String> {
        let title = s.doc.select(&title_sel).next().map(line_text).unwrap_or_default().replace(" - ", "|");
        title.split(['|', '_', '–', '—', '·']).map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect()
    };
    let all: Vec<Vec<String>> = seen.iter().map(parts).collect();
    let mut best: Option<(usize, String)> = None;
    for p in parts(home?) {
        let n = all.iter().filter(|ps| ps.contains(&p)).count();
        if best.as_ref().is_none_or(|(b, _)| n > *b) {
            best = Some((n, p));
        }
    }
    best.map(|(_, p)| p)
}
