//! Template-based extraction (S4), for a site file that says `post="auto"`:
//! the posts of a thread page are found as its records, the repeated
//! sibling subtrees the forum's template draws once per post, and the
//! author, time, floor and body are found inside each record.
//!
//! 1. **Index.** One pass over the DOM numbers the elements in document
//!    order and counts, per subtree, the text a reader sees (letters and
//!    digits, not punctuation), the part of it inside links, and whether it
//!    shows a date. `<script>`-like elements, `<head>` and elements hidden
//!    with `display:none` or `hidden` are left out.
//! 2. **Records.** Under every parent, children of one tag that carry text
//!    are clustered by simple tree matching (S4's STM: roots must match,
//!    then the best in-order matching of their children, recursively),
//!    on subtrees cut four levels deep with runs of same-tag children
//!    counted once (so a post of ten paragraphs has the shape of a post of
//!    one, and the cost is bounded whatever the page's size). Each cluster
//!    of two or more is a candidate group. A group qualifies when at least
//!    half of its records show a date and it holds text; the qualifying
//!    group with the most text, weighted by its share of text outside
//!    links and its share of dated records, is the posts. Menus, pagers
//!    and link lists lose on links, bodies' paragraph lists and padding on
//!    dates. Where the best group has one dated record beside undated
//!    ones (a page's main column beside a dialog), the best group of
//!    dated records inside that one is taken. A record that only holds
//!    dated elements of another record's shape and one tag and classes
//!    (replies nested in wrappers by thread depth) is read as those
//!    ([`unfold`]).
//! 3. **Fields.** Inside the records of the group, a candidate is kept by
//!    its relative path (tag, classes with digits blurred, index among
//!    like siblings) and the path most records share wins, so a date or a
//!    user link quoted in one body does not displace the template's own.
//!    Time: the deepest element whose text, `datetime` or `title` reads as
//!    a date. Floor: a short label such as `3#`, `#3`, `3楼`, `沙发`, kept
//!    only when the floors rise down the page. Author: a link to a user
//!    page (`uid`, `user`, `member`, `space`, `profile`, `u=` …), else a
//!    short link at the same path in every record, else a short text at
//!    the same path in every record, beside the time. Body: from the
//!    record down, the one child that holds nine tenths of the text that
//!    is left once author, time, floor, links and the text every other
//!    record repeats (labels such as "发表于") are set aside; never into
//!    one of a run of like siblings (paragraphs).
//! 4. **One post.** A page whose posts are too few to repeat (a thread
//!    without replies, the last page of a long one) has no group. Its
//!    record is found by the shape other pages of the same thread showed
//!    (`Shape`, passed by [`crate::parse::extract_thread`]) when there is
//!    one. Else, from each date on the page, we go up to the lowest
//!    ancestor that also holds a block of text (a `div`, `p`, `td` …
//!    with letters in it) beside the date's own branch, widen it to take
//!    in a user link when one is a few levels up (Discuz! keeps the
//!    author in the cell beside the post's), and keep the one of these
//!    that holds the most text: "the largest text block with a time
//!    beside it". We chose the date as the anchor because a post always
//!    shows one while a page's other text blocks (notices, footers,
//!    padding) seldom sit beside one, and a block rather than any text
//!    because a post header's own texts (a name, a floor, "由 »") are
//!    inline. Its limit: a header that keeps the author's name in a block
//!    of its own (`<div class="name">`) is taken for the post; without
//!    repetition nothing else tells the two apart. The same fallback is
//!    taken when the best group holds less than half the page's text and
//!    a block elsewhere holds more, so that a dated sidebar list does not
//!    pass for the posts of a one-post page.
//!
//! Selectors the site file gives beside `post="auto"` (body, body-id,
//! author, time, floor) are used inside each record, and a group whose
//! records they do not match loses; `strip` applies as it does with a
//! `post` selector.

use std::collections::{HashMap, HashSet};

use ego_tree::NodeId;
use luntan_core::dates::normalize_time;
use luntan_core::site::Pick;
use luntan_core::site::ThreadRules;
use luntan_core::{Post, Site};
use scraper::{ElementRef, Html, Node};

use crate::dom::{body_in, page_title};
use crate::page::PageExtract;
use crate::text::{floor_number, line_text, paragraphs_without, time_at, time_of, value_of};

/// The forum's wall clock when the page was fetched (relative times).
type Now = Option<time::PrimitiveDateTime>;

/// Elements whose content is never shown as text (as in `parse`), and
/// `head`.
const UNSEEN: &[&str] = &["script", "style", "noscript", "template", "textarea", "select", "iframe", "object", "head"];

/// How deep subtrees are compared, and how many children of one node.
const STM_DEPTH: u32 = 4;
const STM_CHILDREN: usize = 40;
/// Most matching-table cells one comparison may fill (bounds a
/// pathological page).
const STM_BUDGET: u32 = 20_000;
/// Least STM similarity for two siblings to count as one record shape.
const SAME_SHAPE: f64 = 0.75;
/// Most shapes kept apart among one parent's children of one tag.
const SHAPES_PER_TAG: usize = 4;
/// Longest texts (non-space characters) of a time, an author's name and
/// a floor label.
const SHORT: u32 = 60;
const NAME: u32 = 40;
const LABEL: u32 = 12;
/// Most letters (besides 年月日…) a date text has ("发表于", "Posted on").
const DATE_WORDS: usize = 8;
/// Longest text counted as a label every record repeats.
const LABEL_TEXT: usize = 20;

/// A record shape learned on one page of a thread, for its pages that
/// hold a single post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Hash of the tag-and-class path from the root to a record.
    kpath: u64,
    fields: Fields,
}

/// Relative paths (from a record) of the fields, where one was found by
/// the paths most records share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Fields {
    time: Option<String>,
    floor: Option<String>,
    author: Option<String>,
    body: Option<String>,
}

/// Where one post was found on a page: its record and the elements its
/// fields were read from, for `luntan-learn`, which turns them into the
/// site file's selectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRecord {
    pub record: NodeId,
    pub time: Option<NodeId>,
    pub author: Option<NodeId>,
    /// Only where the page's floor labels rise down the page.
    pub floor: Option<NodeId>,
    pub body: NodeId,
}

/// The posts of a page as [`auto_posts`] reads them with no selector
/// given, and where each was found; `true` when they are a group of
/// repeated records (not one post found by its date).
pub fn records(doc: &Html, now: Now) -> (Vec<FoundRecord>, bool) {
    let rules = ThreadRules::default();
    let dom = Dom::build(doc);
    let Some((records, _, grouped)) = choose(&dom, &rules, None) else { return (Vec::new(), false) };
    let (_, _, _, found) = read_records(&dom, &records, &rules, now, None);
    (found, grouped)
}

/// What [`auto_posts`] found on one page.
#[derive(Debug, Clone)]
pub(crate) struct AutoPage {
    /// In page order. `floor` is the number shown when `floors` (0 when
    /// this post shows none), else the 1-based position.
    pub(crate) posts: Vec<Post>,
    /// Whether the page shows floor numbers.
    pub(crate) floors: bool,
    /// The shape of a group of two or more records, for other pages.
    pub(crate) shape: Option<Shape>,
}

/// Finds the posts of a parsed page (see the module documentation).
/// `hint` is a shape from another page of the thread, used when this page
/// has no group of records.
pub(crate) fn auto_posts(doc: &Html, rules: &ThreadRules, now: Now, hint: Option<&Shape>) -> AutoPage {
    let dom = Dom::build(doc);
    let Some((records, preset, grouped)) = choose(&dom, rules, hint) else {
        return AutoPage { posts: Vec::new(), floors: false, shape: None };
    };
    let (posts, floors, fields, _) = read_records(&dom, &records, rules, now, preset);
    let shape = grouped.then(|| Shape { kpath: dom.nodes[records[0]].kpath, fields });
    AutoPage { posts, floors, shape }
}

/// The records of a page: a group of repeated ones (`true`), else one
/// post found by `hint`'s shape or by its date.
fn choose<'h>(dom: &Dom, rules: &ThreadRules, hint: Option<&'h Shape>) -> Option<(Vec<usize>, Option<&'h Fields>, bool)> {
    if dom.nodes.is_empty() {
        return None;
    }
    let group = best_group(dom, rules).map(|g| unfold(dom, g));
    let total = dom.nodes[dom.body].text;
    Some(match group {
        // A group that holds less than half the page's text is checked
        // against the one-post reading (a dated sidebar beside one post).
        Some(g) if 2 * group_text(dom, &g) >= total => (g, None, true),
        Some(g) => match single_record(dom) {
            Some(one) if dom.nodes[one].text > group_text(dom, &g) && g.iter().all(|&r| !dom.contains(one, r) && !dom.contains(r, one)) => {
                (vec![one], None, false)
            }
            _ => (g, None, true),
        },
        None => match hint.map(|h| (dom.with_kpath(h.kpath), h)) {
            Some((found, h)) if !found.is_empty() => (found, Some(&h.fields), false),
            _ => (vec![single_record(dom)?], None, false),
        },
    })
}

/// A page of a `post="auto"` site: its title and what the template
/// extraction found, with `hint`, a record shape from another page.
pub(crate) fn parse_page_auto(site: &Site, html: &str, now: Option<time::PrimitiveDateTime>, hint: Option<&Shape>) -> (Option<String>, AutoPage) {
    let doc = Html::parse_document(html);
    (page_title(&doc, &site.thread), auto_posts(&doc, &site.thread, now, hint))
}

/// Every page of a `post="auto"` thread (decoded text and fetch clock):
/// a page without a group of records is read again with the shape of the
/// first page that had one. Floors count as shown when every page with
/// posts shows them.
pub(crate) fn thread_pages(site: &Site, pages: &[(String, Now)]) -> (Vec<PageExtract>, bool) {
    let mut got: Vec<(Option<String>, AutoPage)> = pages.iter().map(|(text, now)| parse_page_auto(site, text, *now, None)).collect();
    if let Some(shape) = got.iter().find_map(|(_, a)| a.shape.clone()) {
        for (k, (text, now)) in pages.iter().enumerate() {
            if got[k].1.shape.is_none() {
                got[k] = parse_page_auto(site, text, *now, Some(&shape));
            }
        }
    }
    let with_posts = || got.iter().filter(|(_, a)| !a.posts.is_empty());
    let floors = with_posts().count() > 0 && with_posts().all(|(_, a)| a.floors);
    (got.into_iter().map(|(title, a)| PageExtract { title, posts: a.posts, ..PageExtract::default() }).collect(), floors)
}

// ---------------------------------------------------------------- the index

/// One element of the page.
struct El<'a> {
    el: ElementRef<'a>,
    tag: &'a str,
    parent: Option<usize>,
    children: Vec<usize>,
    /// One past the last descendant (elements are in document order).
    end: usize,
    /// Tag and classes (digits blurred), then `:` and the index among the
    /// parent's children with the same tag and classes.
    step: String,
    /// Hash of the tag-and-class steps from the root.
    kpath: u64,
    /// Inside (or is) a link.
    in_link: bool,
    /// Letters and digits in the subtree outside links and dates.
    text: u32,
    /// Letters and digits inside links.
    link: u32,
    /// Non-space characters in the subtree.
    chars: u32,
    /// The subtree shows a date (a short text or a `datetime`/`title`).
    dated: bool,
    /// A link to a user page, with a short text.
    user_link: bool,
    /// The subtree holds a `user_link`.
    has_user_link: bool,
}

struct Dom<'a> {
    nodes: Vec<El<'a>>,
    /// The `<body>` (else the root).
    body: usize,
}

/// Characters that count as text: letters, digits and other symbols that
/// are not punctuation or spaces (an emoji counts, `|` and `»` do not).
fn counts(c: char) -> bool {
    c.is_alphanumeric()
        || !(c.is_whitespace()
            || c.is_ascii()
            || matches!(c, '\u{00A0}'..='\u{00BF}' | '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}' | '\u{FE30}'..='\u{FE4F}' | '\u{FF00}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF40}' | '\u{FF5B}'..='\u{FF65}'))
}

fn text_count(s: &str) -> u32 {
    s.chars().filter(|&c| counts(c)).count() as u32
}

/// A text that is a date and little else ("发表于 2024-3-5 12:34", not a
/// paragraph that begins "补充点评 2008年5月2日 ：").
fn is_date_text(s: &str) -> bool {
    let words = s.chars().filter(|&c| c.is_alphabetic() && !"年月日时分秒上下午".contains(c)).count();
    s.bytes().any(|b| b.is_ascii_digit())
        && words <= DATE_WORDS
        && s.chars().filter(|c| !c.is_whitespace()).count() <= SHORT as usize
        && normalize_time(s).is_some()
}

fn is_date_attr(v: &str) -> bool {
    v.bytes().any(|b| b.is_ascii_digit()) && v.len() <= 80 && normalize_time(v).is_some()
}

fn hidden(el: &ElementRef) -> bool {
    let v = el.value();
    v.attr("hidden").is_some()
        || v.attr("style").is_some_and(|s| {
            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
            s.contains("display:none") || s.contains("visibility:hidden")
        })
}

/// A link to a user's page, by the words forum software puts in such URLs.
fn user_href(href: &str) -> bool {
    let h = href.to_ascii_lowercase();
    ["uid", "user", "member", "space", "profile", "people", "/u/", "?u=", "&u="].iter().any(|w| h.contains(w))
        // Software that translates its routes: Askbot's `/用户/3/li-nuo/`.
        || (h.contains(['%', '用', '会', '會']) && {
            let decoded = percent_encoding::percent_decode_str(href).decode_utf8_lossy();
            ["用户", "用戶", "会员", "會員"].iter().any(|w| decoded.contains(w))
        })
}

/// Whether a link's text is a count, not a name: digits with their
/// separators and a `k` (a member's points, `741`, `1,024`, `1.2k`).
fn score_text(s: &str) -> bool {
    let t = s.trim();
    t.chars().any(|c| c.is_ascii_digit()) && t.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | '.' | 'k' | 'K' | ' '))
}

/// The number a floor label shows: `3#`, `#3`, `3楼`, `第3楼`, `3F`, or the
/// names of the first floors; `None` for anything else.
fn floor_label(s: &str) -> Option<u32> {
    let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if ["楼主", "樓主", "沙发", "沙發", "板凳", "地板"].contains(&t.as_str()) {
        return floor_number(&t);
    }
    let t = t.strip_prefix('第').unwrap_or(&t);
    let (digits, rest) = match t.strip_prefix('#') {
        Some(d) => (d, ""),
        None => {
            let n = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
            (&t[..n], &t[n..])
        }
    };
    let marked = t.starts_with('#') || ["#", "楼", "樓", "F", "f", "层", "層"].contains(&rest);
    (marked && (1..=7).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

/// FNV-1a, so shapes hash the same in every run.
fn fnv(seed: u64, s: &str) -> u64 {
    s.bytes().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Tag and classes, digits blurred (`bg1`/`bg2`, `post_12`): what like
/// elements of one template share.
fn key_of(el: &ElementRef) -> String {
    let v = el.value();
    // A run of digits is one `#`, however long: WordPress numbers its
    // layout containers page-wide (`wp-container-7`, `wp-container-17`),
    // so the same place in two comments has classes of either length.
    let mut classes: Vec<String> = v
        .classes()
        .map(|c| {
            let mut k = String::with_capacity(c.len());
            for ch in c.chars() {
                match (ch.is_ascii_digit(), k.ends_with('#')) {
                    (true, true) => {}
                    (true, false) => k.push('#'),
                    (false, _) => k.push(ch),
                }
            }
            k
        })
        .collect();
    classes.sort();
    classes.dedup();
    let mut key = v.name().to_owned();
    for c in classes {
        key.push('.');
        key.push_str(&c);
    }
    key
}

impl<'a> Dom<'a> {
    fn build(doc: &'a Html) -> Dom<'a> {
        let mut nodes: Vec<El<'a>> = Vec::new();
        // The open elements, each with its children's key counts.
        let mut stack: Vec<(usize, HashMap<String, u32>)> = Vec::new();
        let mut skipping: Option<NodeId> = None;
        let root = doc.root_element();
        for edge in root.traverse() {
            match edge {
                ego_tree::iter::Edge::Open(node) => {
                    if skipping.is_some() {
                        continue;
                    }
                    match node.value() {
                        Node::Element(e) => {
                            let Some(el) = ElementRef::wrap(node) else { continue };
                            if UNSEEN.contains(&e.name()) || hidden(&el) {
                                skipping = Some(node.id());
                                continue;
                            }
                            let key = key_of(&el);
                            let parent = stack.last().map(|(i, _)| *i);
                            let idx = match stack.last_mut() {
                                Some((_, counts)) => {
                                    let n = counts.entry(key.clone()).or_insert(0);
                                    *n += 1;
                                    *n - 1
                                }
                                None => 0,
                            };
                            let i = nodes.len();
                            let (kpath, in_link) = match parent {
                                Some(p) => (fnv(nodes[p].kpath, &key), nodes[p].in_link),
                                None => (fnv(0, &key), false),
                            };
                            let in_link = in_link || e.name() == "a";
                            let user_link = e.name() == "a" && e.attr("href").is_some_and(user_href);
                            let dated = ["datetime", "title"].iter().any(|a| e.attr(a).is_some_and(is_date_attr));
                            nodes.push(El {
                                el,
                                tag: el.value().name(),
                                parent,
                                children: Vec::new(),
                                end: i + 1,
                                step: format!("{key}:{idx}"),
                                kpath,
                                in_link,
                                text: 0,
                                link: 0,
                                chars: 0,
                                dated,
                                user_link,
                                has_user_link: false,
                            });
                            if let Some(p) = parent {
                                nodes[p].children.push(i);
                            }
                            stack.push((i, HashMap::new()));
                        }
                        Node::Text(t) => {
                            let Some(&(i, _)) = stack.last() else { continue };
                            let n = &mut nodes[i];
                            let chars = t.chars().filter(|c| !c.is_whitespace()).count() as u32;
                            n.chars += chars;
                            if chars > 0 {
                                if is_date_text(t) {
                                    n.dated = true;
                                } else if n.in_link {
                                    n.link += text_count(t);
                                } else {
                                    n.text += text_count(t);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                ego_tree::iter::Edge::Close(node) => {
                    if let Some(id) = skipping {
                        if id == node.id() {
                            skipping = None;
                        }
                        continue;
                    }
                    if node.value().is_element() {
                        if let Some((i, _)) = stack.pop() {
                            nodes[i].end = nodes.len();
                        }
                    }
                }
            }
        }
        for i in (0..nodes.len()).rev() {
            let n = &mut nodes[i];
            n.user_link = n.user_link && (1..=NAME).contains(&n.chars) && !n.dated;
            n.has_user_link |= n.user_link;
            let (text, link, chars, dated, has_user) = (n.text, n.link, n.chars, n.dated, n.has_user_link);
            if let Some(p) = n.parent {
                let p = &mut nodes[p];
                p.text += text;
                p.link += link;
                p.chars += chars;
                p.dated |= dated;
                p.has_user_link |= has_user;
            }
        }
        let body = nodes.iter().position(|n| n.tag == "body").unwrap_or(0);
        Dom { nodes, body }
    }

    /// Whether `a` is `d` or holds it.
    fn contains(&self, a: usize, d: usize) -> bool {
        a <= d && d < self.nodes[a].end
    }

    fn id_map(&self) -> HashMap<NodeId, usize> {
        self.nodes.iter().enumerate().map(|(i, n)| (n.el.id(), i)).collect()
    }

    /// The outermost elements with this tag-and-class path.
    fn with_kpath(&self, kpath: u64) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if n.kpath == kpath && n.text > 0 && out.last().is_none_or(|&o| !self.contains(o, i)) {
                out.push(i);
            }
        }
        out
    }

    /// The path of `d` relative to its ancestor `r` (empty for `r`).
    fn rel_path(&self, r: usize, d: usize) -> String {
        let mut steps = Vec::new();
        let mut at = d;
        while at != r {
            steps.push(self.nodes[at].step.as_str());
            match self.nodes[at].parent {
                Some(p) => at = p,
                None => break,
            }
        }
        steps.reverse();
        steps.join("/")
    }

    /// The element at a relative path under `r`.
    fn at_path(&self, r: usize, path: &str) -> Option<usize> {
        let mut at = r;
        for step in path.split('/').filter(|s| !s.is_empty()) {
            at = *self.nodes[at].children.iter().find(|&&c| self.nodes[c].step == step)?;
        }
        Some(at)
    }

    /// Children for tree matching: runs of one tag counted once, capped.
    fn collapsed(&self, a: usize) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for &c in &self.nodes[a].children {
            if out.last().is_some_and(|&l| self.nodes[l].tag == self.nodes[c].tag) {
                continue;
            }
            out.push(c);
            if out.len() == STM_CHILDREN {
                break;
            }
        }
        out
    }

    /// Simple tree matching (S4): 0 when the roots differ, else 1 plus the
    /// best in-order matching of their children.
    fn stm(&self, a: usize, b: usize, depth: u32, budget: &mut u32) -> u32 {
        if self.nodes[a].tag != self.nodes[b].tag {
            return 0;
        }
        if depth <= 1 || *budget == 0 {
            return 1;
        }
        let (ca, cb) = (self.collapsed(a), self.collapsed(b));
        let w = cb.len() + 1;
        let mut m = vec![0u32; (ca.len() + 1) * w];
        for i in 1..=ca.len() {
            for j in 1..=cb.len() {
                *budget = budget.saturating_sub(1);
                let diag = m[(i - 1) * w + j - 1] + self.stm(ca[i - 1], cb[j - 1], depth - 1, budget);
                m[i * w + j] = diag.max(m[(i - 1) * w + j]).max(m[i * w + j - 1]);
            }
        }
        1 + m[ca.len() * w + cb.len()]
    }

    fn size(&self, a: usize, depth: u32) -> u32 {
        if depth <= 1 {
            return 1;
        }
        1 + self.collapsed(a).into_iter().map(|c| self.size(c, depth - 1)).sum::<u32>()
    }

    fn similar(&self, a: usize, b: usize) -> bool {
        let mut budget = STM_BUDGET;
        let m = self.stm(a, b, STM_DEPTH, &mut budget);
        2.0 * f64::from(m) >= SAME_SHAPE * f64::from(self.size(a, STM_DEPTH) + self.size(b, STM_DEPTH))
    }

    /// A record's core: below wrappers that hold a single element.
    fn core(&self, r: usize) -> usize {
        let mut at = r;
        while let [only] = self.nodes[at].children.as_slice() {
            if self.nodes[*only].text + self.nodes[*only].link != self.nodes[at].text + self.nodes[at].link {
                break;
            }
            at = *only;
        }
        at
    }

    /// The lowest common ancestor of two elements.
    fn lca(&self, a: usize, b: usize) -> usize {
        let mut at = a;
        while !self.contains(at, b) {
            match self.nodes[at].parent {
                Some(p) => at = p,
                None => return 0,
            }
        }
        at
    }
}

// ---------------------------------------------------------------- records

fn group_text(dom: &Dom, g: &[usize]) -> u32 {
    g.iter().map(|&r| dom.nodes[r].text).sum()
}

/// The group of sibling records that best looks like posts.
fn best_group(dom: &Dom, rules: &ThreadRules) -> Option<Vec<usize>> {
    let helped = rules.body.is_some() || rules.body_id.is_some() || rules.author.is_some() || rules.time.is_some() || rules.floor.is_some();
    // Every qualifying group and its score.
    let mut found: Vec<(f64, Vec<usize>)> = Vec::new();
    for p in &dom.nodes {
        if p.children.len() < 2 {
            continue;
        }
        // Children with text, by tag, in order of first appearance.
        let mut by_tag: Vec<(&str, Vec<usize>)> = Vec::new();
        for &c in &p.children {
            let n = &dom.nodes[c];
            if n.text == 0 {
                continue;
            }
            match by_tag.iter_mut().find(|(t, _)| *t == n.tag) {
                Some((_, v)) => v.push(c),
                None => by_tag.push((n.tag, vec![c])),
            }
        }
        for (_, kids) in by_tag.into_iter().filter(|(_, k)| k.len() >= 2) {
            let mut shapes: Vec<Vec<usize>> = Vec::new();
            for c in kids {
                match shapes.iter().position(|s| dom.similar(s[0], c)) {
                    Some(k) => shapes[k].push(c),
                    None if shapes.len() < SHAPES_PER_TAG => shapes.push(vec![c]),
                    None => {}
                }
            }
            for g in shapes.into_iter().filter(|s| s.len() >= 2) {
                let n = g.len() as f64;
                let text: u32 = group_text(dom, &g);
                let link: u32 = g.iter().map(|&r| dom.nodes[r].link).sum();
                let dated = g.iter().filter(|&&r| dom.nodes[r].dated).count() as f64;
                if text == 0 || 2.0 * dated < n {
                    continue;
                }
                let mut score = f64::from(text) * f64::from(text) / f64::from(text + link) * dated / n;
                if helped {
                    let fits = g.iter().filter(|&&r| helper_fits(rules, dom.nodes[r].el)).count() as f64;
                    score *= fits / n;
                }
                if score > 0.0 {
                    found.push((score, g));
                }
            }
        }
    }
    let top = highest(found.iter())?;
    // One dated record beside undated ones is one block of the page, not
    // posts (HyperKitty's main column beside its keyboard-shortcuts
    // dialog): the best group of dated records inside it, if any.
    let dated: Vec<usize> = top.iter().copied().filter(|&r| dom.nodes[r].dated).collect();
    if let [block] = dated[..] {
        let inside = |g: &[usize]| g.iter().all(|&r| r != block && dom.contains(block, r) && dom.nodes[r].dated);
        if let Some(inner) = highest(found.iter().filter(|(_, g)| inside(g))) {
            return Some(inner.clone());
        }
    }
    Some(top.clone())
}

/// The group with the highest score, the first of equals.
fn highest<'a>(groups: impl Iterator<Item = &'a (f64, Vec<usize>)>) -> Option<&'a Vec<usize>> {
    groups.fold(None, |best: Option<&(f64, Vec<usize>)>, g| if best.is_none_or(|b| g.0 > b.0) { Some(g) } else { best }).map(|(_, g)| g)
}

/// Replies drawn nested by thread depth (HyperKitty's mails: the first
/// one, then a `div.replies` holding each reply in a wrapper that also
/// holds the wrappers of its answers) leave two siblings to match, the
/// first post and the container of every other: S4 reads them as two
/// records. A record of the group that holds two or more dated elements
/// of another record's shape, of one tag and classes, none inside another
/// and no text outside them, is such a container: its records are those
/// elements (one alone where it is the container's core). The other
/// record must be a post as it is: where records wrap their posts
/// (WordPress's `li.comment` its `article`), a comment holding replies
/// would otherwise pass for a container of articles.
fn unfold(dom: &Dom, group: Vec<usize>) -> Vec<usize> {
    let mut out = Vec::with_capacity(group.len());
    for &r in &group {
        // Another record, a post as it is (not a wrapper of one, as
        // WordPress's `li.comment` is of its `article`, whose replies'
        // articles would otherwise pass for the container's posts).
        let other = group.iter().copied().find(|&o| o != r && dom.nodes[o].dated);
        let Some(other) = other.filter(|&o| dom.core(o) == o) else {
            out.push(r);
            continue;
        };
        let tag = dom.nodes[other].tag;
        // Dated elements of the other record's tag, by their own tag and
        // classes: the posts of one template share theirs (a wrapper's
        // nesting class, `reply-level-3`, and a header's differ).
        let mut by_key: Vec<(&str, Vec<usize>)> = Vec::new();
        for d in r + 1..dom.nodes[r].end {
            let n = &dom.nodes[d];
            if n.tag == tag && n.dated && n.text > 0 {
                let key = n.step.rsplit_once(':').map_or(n.step.as_str(), |(k, _)| k);
                match by_key.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(d),
                    None => by_key.push((key, vec![d])),
                }
            }
        }
        // Two or more, none inside another, all the container's text, each
        // of the other record's shape; or one, the container's core (a
        // thread of one reply).
        let posts = by_key.into_iter().map(|(_, v)| v).find(|v| {
            (v.len() >= 2 || dom.core(r) == v[0])
                && v.windows(2).all(|w| !dom.contains(w[0], w[1]))
                && group_text(dom, v) == dom.nodes[r].text
                && v.iter().all(|&d| dom.similar(other, d))
        });
        match posts {
            Some(inner) => out.extend(inner),
            None => out.push(r),
        }
    }
    out.sort_unstable();
    out
}

/// Whether the site file's own selectors, where given, match in a record.
fn helper_fits(rules: &ThreadRules, r: ElementRef) -> bool {
    let has = |sel: &Option<Pick>| sel.as_ref().is_none_or(|s| r.select(s).next().is_some());
    let body = (rules.body.is_none() && rules.body_id.is_none()) || body_in(rules, r).is_some();
    body && has(&rules.author) && has(&rules.time) && has(&rules.floor)
}

/// Elements that start a block of text (as `parse` breaks paragraphs).
const BLOCKS: &[&str] = &["p", "div", "li", "td", "th", "blockquote", "pre", "section", "article", "dd", "table", "ul", "ol", "main", "center", "font"];

/// The record of a page with one post: for each date, its lowest ancestor
/// (below `<body>`) that also holds a block of text beside the date's own
/// branch, widened by up to four levels to take in a user link; of these,
/// the one holding the most text (see the module documentation).
fn single_record(dom: &Dom) -> Option<usize> {
    // Whether each element is, or holds, a block with text.
    let mut block = vec![false; dom.nodes.len()];
    for i in (0..dom.nodes.len()).rev() {
        let n = &dom.nodes[i];
        block[i] = (n.text > 0 && BLOCKS.contains(&n.tag)) || n.children.iter().any(|&c| block[c]);
    }
    let mut best: Option<usize> = None;
    for (d, n) in dom.nodes.iter().enumerate() {
        // The deepest dated elements: a date text of their own, or an attribute.
        if !n.dated || n.chars > SHORT || n.children.iter().any(|&c| dom.nodes[c].dated) {
            continue;
        }
        let mut at = n.parent;
        let mut found = None;
        while let Some(a) = at.filter(|&a| a != dom.body && a != 0) {
            if dom.nodes[a].children.iter().any(|&c| block[c] && !dom.contains(c, d)) {
                found = Some(a);
                break;
            }
            at = dom.nodes[a].parent;
        }
        let Some(a0) = found else { continue };
        let mut record = a0;
        if !dom.nodes[a0].has_user_link {
            let mut up = dom.nodes[a0].parent;
            for _ in 0..4 {
                let Some(u) = up.filter(|&u| u != dom.body) else { break };
                if dom.nodes[u].has_user_link {
                    record = u;
                    break;
                }
                up = dom.nodes[u].parent;
            }
        }
        if best.is_none_or(|b| dom.nodes[record].text > dom.nodes[b].text) {
            best = Some(record);
        }
    }
    best
}

// ---------------------------------------------------------------- fields

/// Paths voted on across records: each path with the records it is in,
/// in order of first appearance.
#[derive(Default)]
struct Votes {
    paths: Vec<Voted>,
    index: HashMap<String, usize>,
}

impl Votes {
    fn add(&mut self, path: String, record: usize, n: usize, node: usize) {
        let at = match self.index.get(&path) {
            Some(&i) => i,
            None => {
                self.index.insert(path.clone(), self.paths.len());
                self.paths.push((path, vec![None; n]));
                self.paths.len() - 1
            }
        };
        self.paths[at].1[record].get_or_insert(node);
    }

    fn count(v: &[Option<usize>]) -> usize {
        v.iter().filter(|x| x.is_some()).count()
    }

    /// The path in the most records (ties: the one `rank` puts first,
    /// then the first seen), if it is in at least half of them.
    fn winner<K: Ord>(&self, n: usize, rank: impl Fn(&Picks) -> K) -> Option<&Voted> {
        let best = self.paths.iter().rev().max_by_key(|(_, v)| (Self::count(v), rank(v)))?;
        (2 * Self::count(&best.1) >= n).then_some(best)
    }
}

/// A relative path and the element it leads to in each record.
type Voted = (String, Picks);

/// One field per record: an element, by the site file's selector, by a
/// preset path, by vote, or by the record's own first candidate.
type Picks = Vec<Option<usize>>;

/// Applies a selector inside each record; elements outside the index
/// (hidden) are left out.
fn by_selector(dom: &Dom, ids: &HashMap<NodeId, usize>, records: &[usize], sel: &scraper::Selector) -> Picks {
    records.iter().map(|&r| dom.nodes[r].el.select(sel).next().and_then(|e| ids.get(&e.id()).copied())).collect()
}

/// Picks by preset path, then by the votes' winner, then each record's
/// first candidate; returns the picks and the winning path.
fn pick(dom: &Dom, records: &[usize], cands: &[Vec<usize>], preset: Option<&String>) -> (Picks, Option<String>) {
    pick_ranked(dom, records, cands, preset, |_| ())
}

/// As [`pick`], with `rank` to choose between paths in as many records.
fn pick_ranked<K: Ord>(dom: &Dom, records: &[usize], cands: &[Vec<usize>], preset: Option<&String>, rank: impl Fn(&Picks) -> K) -> (Picks, Option<String>) {
    let n = records.len();
    let mut votes = Votes::default();
    for (k, (&r, cs)) in records.iter().zip(cands).enumerate() {
        for &c in cs {
            votes.add(dom.rel_path(r, c), k, n, c);
        }
    }
    let mut picks: Picks = vec![None; n];
    let mut path = None;
    if let Some(p) = preset {
        for (k, &r) in records.iter().enumerate() {
            picks[k] = dom.at_path(r, p);
        }
        path = Some(p.clone());
    } else if let Some((p, v)) = votes.winner(n, rank) {
        picks.clone_from(v);
        path = Some(p.clone());
    }
    for (k, cs) in cands.iter().enumerate() {
        if picks[k].is_none() {
            picks[k] = cs.first().copied();
        }
    }
    (picks, path)
}

/// Reads every record: the posts, whether floors are shown, and the
/// fields' paths.
fn read_records(dom: &Dom, records: &[usize], rules: &ThreadRules, now: Now, preset: Option<&Fields>) -> (Vec<Post>, bool, Fields, Vec<FoundRecord>) {
    let ids = dom.id_map();
    let n = records.len();
    let mut fields = Fields::default();
    let inside = |r: usize| r + 1..dom.nodes[r].end;

    // Time: the deepest elements that read as a date.
    let times: Vec<Option<String>>;
    let clock = rules.clock(now);
    let time_picks: Picks = match &rules.time {
        Some(pick) => {
            let p = by_selector(dom, &ids, records, pick);
            times = records.iter().map(|&r| dom.nodes[r].el.select(pick).next().and_then(|e| time_at(e, pick, clock))).collect();
            p
        }
        None => {
            let mut value: HashMap<usize, Option<String>> = HashMap::new();
            let mut val = |i: usize| value.entry(i).or_insert_with(|| time_of(dom.nodes[i].el, clock)).clone();
            let cands: Vec<Vec<usize>> = records
                .iter()
                .map(|&r| {
                    inside(r)
                        .filter(|&i| dom.nodes[i].dated && dom.nodes[i].chars <= SHORT)
                        .filter(|&i| {
                            let v = val(i);
                            v.is_some() && !dom.nodes[i].children.iter().any(|&c| dom.nodes[c].dated && dom.nodes[c].chars <= SHORT && val(c) == v)
                        })
                        .collect()
                })
                .collect();
            // A date every post shows may be its author's (`加入于: Dec 11
            // 2024` in the profile column), repeated for each post of one
            // author; the post's own differs from post to post, rises down
            // the page and says the hour.
            let value = &value;
            let rank = |picks: &Picks| {
                let vals: Vec<&str> = picks.iter().filter_map(|x| x.and_then(|i| value.get(&i)?.as_deref())).collect();
                let distinct = vals.iter().collect::<HashSet<_>>().len();
                let rising = vals.windows(2).filter(|w| w[0] <= w[1]).count();
                // A day alone is read as midnight.
                let precise = vals.iter().filter(|v| v.contains(':') && !v.ends_with("00:00:00")).count();
                (distinct, rising, precise)
            };
            let (p, path) = pick_ranked(dom, records, &cands, preset.and_then(|f| f.time.as_ref()), rank);
            let mut val = |i: usize| value.get(&i).cloned().unwrap_or_else(|| time_of(dom.nodes[i].el, clock));
            fields.time = path;
            times = p.iter().map(|x| x.and_then(&mut val)).collect();
            p
        }
    };

    // Floor: short labels, kept when they rise down the page.
    let floor_picks: Picks = match &rules.floor {
        Some(sel) => by_selector(dom, &ids, records, sel),
        None => {
            let label = |i: usize| (dom.nodes[i].chars <= LABEL).then(|| floor_label(&line_text(dom.nodes[i].el))).flatten();
            let cands: Vec<Vec<usize>> = records
                .iter()
                .map(|&r| {
                    inside(r)
                        .filter(|&i| dom.nodes[i].chars > 0 && dom.nodes[i].chars <= LABEL)
                        .filter(|&i| {
                            label(i).is_some() && !dom.nodes[i].children.iter().any(|&c| dom.nodes[c].chars == dom.nodes[i].chars && label(c).is_some())
                        })
                        .collect()
                })
                .collect();
            let (p, path) = pick(dom, records, &cands, preset.and_then(|f| f.floor.as_ref()));
            let shown: Vec<u32> = p.iter().filter_map(|x| x.and_then(label)).collect();
            if path.is_some() && shown.windows(2).all(|w| w[0] < w[1]) {
                fields.floor = path;
                p
            } else {
                vec![None; n]
            }
        }
    };
    let floors = rules.floor.is_some() || fields.floor.is_some();
    let floor_values: Vec<u32> = match &rules.floor {
        Some(pick) => floor_picks.iter().map(|x| x.and_then(|i| floor_number(&value_of(dom.nodes[i].el, pick))).unwrap_or(0)).collect(),
        None => floor_picks.iter().map(|x| x.and_then(|i| floor_label(&line_text(dom.nodes[i].el))).unwrap_or(0)).collect(),
    };

    let taken = |k: usize, i: usize| time_picks[k].is_some_and(|t| dom.contains(i, t) || dom.contains(t, i)) || floor_picks[k] == Some(i);
    // Author: a user link; else a short link at one path in every record;
    // else a short text at one path in every record, beside the time.
    let author_picks: Picks = match &rules.author {
        Some(sel) => by_selector(dom, &ids, records, sel),
        None => {
            let preset_author = preset.and_then(|f| f.author.as_ref());
            // An avatar links the user's page too, showing the name's first
            // character (NodeBB's `<div class="user-icon">听</div>`) or the
            // member's points (Askbot's avatar box: `741`) before the link
            // that shows the name: where a post has a user link showing
            // more than one character, not a number, the others are no
            // candidates (a post whose author line changes shape, Askbot's
            // edited ones, would leave the avatar the one link at one path
            // in most posts); of paths in as many posts, the named one.
            let shows_name = |i: usize| dom.nodes[i].chars >= 2 && !score_text(&line_text(dom.nodes[i].el));
            let users: Vec<Vec<usize>> = records
                .iter()
                .enumerate()
                .map(|(k, &r)| {
                    let links: Vec<usize> = inside(r).filter(|&i| dom.nodes[i].user_link && !taken(k, i)).collect();
                    let named: Vec<usize> = links.iter().copied().filter(|&i| shows_name(i)).collect();
                    if named.is_empty() {
                        links
                    } else {
                        named
                    }
                })
                .collect();
            let named = |picks: &Picks| picks.iter().filter(|x| x.is_some_and(shows_name)).count();
            let (p, path) = pick_ranked(dom, records, &users, preset_author, named);
            if path.is_some() {
                fields.author = path;
                p
            } else {
                let short = |k: usize, i: usize, link: bool| {
                    let e = &dom.nodes[i];
                    // A blog shows a member's name as a link to their site
                    // and a guest's as plain text, in one element.
                    let holds_a_link = e.text == 0 && matches!(e.children.as_slice(), [c] if dom.nodes[*c].tag == "a");
                    (1..=NAME).contains(&e.chars)
                        && !e.dated
                        && !taken(k, i)
                        && e.text + e.link > 0
                        && if link {
                            e.tag == "a"
                        } else {
                            !e.in_link && (holds_a_link || (e.link == 0 && !e.children.iter().any(|&c| dom.nodes[c].chars == e.chars)))
                        }
                        && floor_label(&line_text(e.el)).is_none()
                        // A count (a vote link's `0`) is no name.
                        && !score_text(&line_text(e.el))
                };
                let core_ok = |k: usize, i: usize| match time_picks[k] {
                    Some(t) => dom.lca(i, t) != dom.core(records[k]) && dom.contains(dom.core(records[k]), dom.lca(i, t)),
                    None => true,
                };
                let mut found = None;
                for link in [true, false] {
                    let cands: Vec<Vec<usize>> =
                        records.iter().enumerate().map(|(k, &r)| inside(r).filter(|&i| short(k, i, link) && (link || core_ok(k, i))).collect()).collect();
                    // A link that says the same in three posts or more but
                    // leads somewhere else from each is an action on the
                    // post (WordPress's "回复" under every comment,
                    // `?replytocom=<comment>`), where a name may be missing
                    // from some (a guest's, no link). One author's posts
                    // link one page.
                    // A short text at one place: the shortest (a name, not a
                    // one-line comment beside it).
                    let best = if link { shared_varying(dom, records, &cands) } else { shared_shortest(dom, records, &cands) };
                    if let Some(best) = best.filter(|(_, picks)| !action(dom, picks)) {
                        found = Some(best);
                        break;
                    }
                }
                match found {
                    Some((path, picks)) => {
                        fields.author = Some(path);
                        picks
                    }
                    None => vec![None; n],
                }
            }
        }
    };

    // Body: the deepest element holding the record's own text.
    let mut excluded: HashSet<usize> = HashSet::new();
    for picks in [&time_picks, &floor_picks, &author_picks] {
        excluded.extend(picks.iter().flatten().copied());
    }
    // What `strip` takes out is not the post's text either: left in, an
    // edit notice beside the body (phpBB's `div.notice`) weighed enough to
    // draw the body up to the whole post, header and all.
    if let Some(strip) = rules.strip.as_ref() {
        for &r in records {
            let stripped: HashSet<NodeId> = dom.nodes[r].el.select(strip).map(|e| e.id()).collect();
            excluded.extend((r..dom.nodes[r].end).filter(|&i| stripped.contains(&dom.nodes[i].el.id())));
        }
    }
    let body_picks = body_elements(dom, records, &excluded, preset.and_then(|f| f.body.as_ref()), &mut fields);

    let excluded_ids: HashSet<NodeId> = excluded.iter().map(|&i| dom.nodes[i].el.id()).collect();
    let id = |p: Option<usize>| p.map(|i| dom.nodes[i].el.id());
    let mut found = Vec::with_capacity(n);
    let posts = records
        .iter()
        .enumerate()
        .map(|(k, &r)| {
            let record = dom.nodes[r].el;
            let body = body_in(rules, record).unwrap_or(dom.nodes[body_picks[k]].el);
            found.push(FoundRecord {
                record: record.id(),
                time: id(time_picks[k]),
                author: id(author_picks[k]),
                floor: if floors { id(floor_picks[k]) } else { None },
                body: body.id(),
            });
            Post {
                floor: if floors { floor_values[k] } else { k as u32 + 1 },
                author: author_picks[k]
                    .map(|i| match &rules.author {
                        Some(pick) => value_of(dom.nodes[i].el, pick),
                        None => line_text(dom.nodes[i].el),
                    })
                    .unwrap_or_default(),
                time: times[k].clone(),
                paragraphs: paragraphs_without(body, rules.strip.as_ref(), &excluded_ids),
                ..Post::default()
            }
        })
        .collect();
    (posts, floors, fields, found)
}

/// Whether picked elements are an action on each post, not its author: a
/// link (or the holder of one) that says the same in three posts or more
/// but leads somewhere else from each (WordPress's "回复" under every
/// comment, `?replytocom=<comment>`). One author's posts link one page.
/// So is a link that leads nowhere and says the same in two posts or
/// more, a script's button (HyperKitty's "Reply", `href="#"`,
/// `javascript:`).
fn action(dom: &Dom, picks: &Picks) -> bool {
    let href = |i: usize| {
        let e = dom.nodes[i].el;
        e.value().attr("href").or_else(|| e.descendent_elements().find_map(|d| d.value().attr("href")))
    };
    let hrefs: HashSet<&str> = picks.iter().flatten().filter_map(|&i| href(i)).map(str::trim).collect();
    // A plain name (no link) in every post of a one-author page is none.
    let nowhere = !hrefs.is_empty() && hrefs.iter().all(|h| h.starts_with('#') || h.get(..11).is_some_and(|s| s.eq_ignore_ascii_case("javascript:")));
    let count = picks.iter().flatten().count();
    distinct_texts(dom, picks) == 1 && ((count >= 3 && hrefs.len() >= 2) || (count >= 2 && nowhere))
}

/// How many texts the picked elements show.
fn distinct_texts(dom: &Dom, picks: &Picks) -> usize {
    picks.iter().flatten().map(|&i| line_text(dom.nodes[i].el)).collect::<HashSet<_>>().len()
}

/// Of the paths present in every record, the one `rank` puts highest
/// (`None`: never); ties: the first.
fn shared_best<K: Ord>(dom: &Dom, records: &[usize], cands: &[Vec<usize>], rank: impl Fn(&Picks) -> Option<K>) -> Option<(String, Picks)> {
    let n = records.len();
    let mut votes = Votes::default();
    for (k, (&r, cs)) in records.iter().zip(cands).enumerate() {
        for &c in cs {
            votes.add(dom.rel_path(r, c), k, n, c);
        }
    }
    let mut best: Option<(K, &Voted)> = None;
    for entry in votes.paths.iter().filter(|e| Votes::count(&e.1) >= n) {
        let Some(key) = rank(&entry.1) else { continue };
        if best.as_ref().is_none_or(|(b, _)| key > *b) {
            best = Some((key, entry));
        }
    }
    best.map(|(_, (p, v))| (p.clone(), v.clone()))
}

/// [`shared_best`]: the texts that differ most across records (names do,
/// labels do not).
fn shared_varying(dom: &Dom, records: &[usize], cands: &[Vec<usize>]) -> Option<(String, Picks)> {
    shared_best(dom, records, cands, |picks| Some(distinct_texts(dom, picks)))
}

/// [`shared_best`]: other than an action's ([`action`]), the texts that are
/// shortest on average (a name, not a one-line comment beside it).
fn shared_shortest(dom: &Dom, records: &[usize], cands: &[Vec<usize>]) -> Option<(String, Picks)> {
    let n = records.len().max(1) as u32;
    shared_best(dom, records, cands, |picks| {
        (!action(dom, picks)).then(|| std::cmp::Reverse(picks.iter().flatten().map(|&i| dom.nodes[i].chars).sum::<u32>() / n))
    })
}

/// Short texts of an element's own (not in links), blurred as labels.
fn own_texts<'a>(el: ElementRef<'a>) -> impl Iterator<Item = &'a str> + 'a {
    el.children().filter_map(|c| match c.value() {
        Node::Text(t) => Some(&**t),
        _ => None,
    })
}

fn label_key(s: &str) -> String {
    let mut out = String::new();
    for c in s.split_whitespace().collect::<Vec<_>>().join(" ").chars() {
        // A number blurs to one `#`, whatever its length ("文章: 123").
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

/// The body of each record: from the record down, into the child holding
/// nine tenths of the weight (text outside links, dates, the picked
/// fields and the labels most records repeat), never into one of a run
/// of like siblings.
fn body_elements(dom: &Dom, records: &[usize], excluded: &HashSet<usize>, preset: Option<&String>, fields: &mut Fields) -> Vec<usize> {
    let n = records.len();
    // Labels: short own texts found in at least half the records (two or more).
    let mut seen: HashMap<String, usize> = HashMap::new();
    if n >= 2 {
        for &r in records {
            let mine: HashSet<String> = (r..dom.nodes[r].end)
                .flat_map(|i| own_texts(dom.nodes[i].el).map(label_key).collect::<Vec<_>>())
                .filter(|t| !t.is_empty() && t.chars().count() <= LABEL_TEXT)
                .collect();
            for t in mine {
                *seen.entry(t).or_insert(0) += 1;
            }
        }
    }
    let labels: HashSet<String> = seen.into_iter().filter(|&(_, c)| 2 * c >= n && c >= 2).map(|(t, _)| t).collect();
    let mut weight = vec![0u32; dom.nodes.len()];
    let fill = |labels: &HashSet<String>, weight: &mut Vec<u32>| {
        for &r in records {
            for i in (r..dom.nodes[r].end).rev() {
                if excluded.contains(&i) {
                    weight[i] = 0;
                    continue;
                }
                let e = &dom.nodes[i];
                let own: u32 =
                    if e.in_link { 0 } else { own_texts(e.el).filter(|t| !is_date_text(t) && !labels.contains(&label_key(t))).map(text_count).sum() };
                weight[i] = own + e.children.iter().map(|&c| weight[c]).sum::<u32>();
            }
        }
    };
    fill(&labels, &mut weight);
    if records.iter().all(|&r| weight[r] == 0) {
        // Every record says the same (two posts of "顶"): no label is set aside.
        fill(&HashSet::new(), &mut weight);
    }
    let mut cur: Vec<usize> = records.to_vec();
    if let Some(p) = preset {
        for (k, &r) in records.iter().enumerate() {
            if let Some(b) = dom.at_path(r, p) {
                cur[k] = b;
            }
        }
        fields.body = Some(p.clone());
        return cur;
    }
    let mut path: Vec<String> = Vec::new();
    loop {
        let total: u64 = cur.iter().map(|&c| u64::from(weight[c])).sum();
        if total == 0 {
            break;
        }
        // Each child step's weight over the records, in order of first appearance.
        let mut agg: Vec<(&str, u64)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for &c in &cur {
            for &ch in &dom.nodes[c].children {
                let step = dom.nodes[ch].step.as_str();
                let at = *index.entry(step).or_insert_with(|| {
                    agg.push((step, 0));
                    agg.len() - 1
                });
                agg[at].1 += u64::from(weight[ch]);
            }
        }
        let Some(&(step, w)) = agg.iter().rev().max_by_key(|(_, w)| *w) else { break };
        if w * 10 < total * 9 {
            break;
        }
        // One of a run of like siblings (paragraphs) is not the body.
        let key = step.rsplit_once(':').map_or(step, |(k, _)| k);
        if agg.iter().any(|&(s, w)| s != step && w > 0 && s.rsplit_once(':').is_some_and(|(k, _)| k == key)) {
            break;
        }
        for c in &mut cur {
            if let Some(&ch) = dom.nodes[*c].children.iter().find(|&&ch| dom.nodes[ch].step == step) {
                *c = ch;
            }
        }
        path.push(step.to_owned());
    }
    fields.body = Some(path.join("/"));
    cur
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_page;
    use crate::parse::tests::site;

    const AUTO: &str = r#"<thread post="auto"/>"#;

    fn summary(html: &str, rules: &str) -> Vec<(u32, String, Option<String>, Vec<String>)> {
        parse_page(&site(rules), html).posts.into_iter().map(|p| (p.floor, p.author, p.time, p.paragraphs)).collect()
    }

    fn post(floor: u32, author: &str, time: &str, paras: &[&str]) -> (u32, String, Option<String>, Vec<String>) {
        (floor, author.to_owned(), Some(time.to_owned()), paras.iter().map(|s| s.to_string()).collect())
    }

    const NAV: &str = r#"<div class="nav"><a href="/">首页</a> › <a href="/board/2">讨论区</a></div>"#;

    #[test]
    fn div_posts_with_names_that_are_not_links() {
        let p = |f: u32, who: &str, when: &str, body: &str| {
            format!(
                r#"<article class="post"><header><span class="name">{who}</span><time>{when}</time><span class="floor">#{f}</span></header><div class="body"><div class="inner">{body}</div></div></article>"#
            )
        };
        let html = format!(
            r#"<html><head><title>标题</title></head><body>{NAV}<h1>主题</h1><section class="posts">{}{}{}</section><footer>论坛 · 联系我们</footer></body></html>"#,
            p(1, "王五", "2024-03-05 09:07", "<p>第一段很长很长的文字</p><p>第二段</p>"),
            p(2, "赵六", "2024-03-05 10:00", "<p>短</p>"),
            p(3, "王五", "2024-03-06 11:00", "<p>谢谢大家</p>"),
        );
        assert_eq!(
            summary(&html, AUTO),
            [
                post(1, "王五", "2024-03-05T09:07:00", &["第一段很长很长的文字", "第二段"]),
                post(2, "赵六", "2024-03-05T10:00:00", &["短"]),
                post(3, "王五", "2024-03-06T11:00:00", &["谢谢大家"]),
            ]
        );
    }

    /// Regression (the real-software bed's WordPress): a reply link says
    /// "回复" under every comment, while a commenter's name is a link to
    /// their site or, a guest's, plain text: the template took the one link
    /// every record holds, and every author was "回复".
    #[test]
    fn a_reply_label_under_every_comment_is_no_author_and_a_guests_plain_name_is() {
        let p = |who: &str, when: &str, body: &str| {
            format!(
                r#"<li class="comment"><div class="columns"><div class="column"><img src="/a.png"></div><div class="column"><div class="name">{who}</div><div class="group"><time datetime="{when}+08:00"><a href="/p/#c">{}</a></time></div><div class="text"><p>{body}</p></div><div class="reply"><a rel="nofollow" href="/p/?replytocom={}">回复</a></div></div></div></li>"#,
                &when[..10],
                &when[11..13]
            )
        };
        let html = format!(
            r#"<html><head><title>标题</title></head><body>{NAV}<h1>文章</h1><ol class="comments">{}{}{}</ol><footer>论坛 · 联系我们</footer></body></html>"#,
            p(r#"<a href="http://blog.example/" rel="external nofollow ugc">王五</a>"#, "2024-03-05T09:07:00", "第一段很长很长的文字"),
            p("路人甲", "2024-03-05T10:00:00", "我也来说两句吧"),
            p(r#"<a href="http://site.example/">赵六</a>"#, "2024-03-06T11:00:00", "谢谢大家的分享"),
        );
        let authors: Vec<String> = summary(&html, AUTO).into_iter().map(|p| p.1).collect();
        assert_eq!(authors, ["王五", "路人甲", "赵六"]);
    }

    /// NodeBB links each post's author twice: an avatar showing the name's
    /// first character, then the name.
    #[test]
    fn an_avatar_initial_is_not_the_author() {
        let p = |who: &str, when: &str, body: &str| {
            let first: String = who.chars().take(1).collect();
            format!(
                r#"<li class="post"><div class="icon"><a href="/user/{who}"><div class="user-icon">{first}</div></a></div><small><strong><a href="/user/{who}">{who}</a></strong> <span class="time">{when}</span></small><div class="content"><p>{body}</p></div></li>"#
            )
        };
        let html = format!(
            r#"<html><body>{NAV}<h1>主题</h1><ul class="posts">{}{}{}</ul></body></html>"#,
            p("听雨轩主", "2024-03-05 09:07", "第一段很长很长的文字"),
            p("山水之间", "2024-03-05 10:00", "说得对，我也这么想"),
            p("听雨轩主", "2024-03-06 11:00", "谢谢大家的回复"),
        );
        let authors: Vec<String> = summary(&html, AUTO).into_iter().map(|p| p.1).collect();
        assert_eq!(authors, ["听雨轩主", "山水之间", "听雨轩主"]);
    }

    /// Askbot's avatar box links the member's page showing their points
    /// (`741`, `1.2k`) before the link that shows the name.
    #[test]
    fn an_avatar_showing_points_is_not_the_author() {
        let p = |who: &str, points: &str, when: &str, body: &str| {
            format!(
                r#"<div class="post"><a class="avatar-box" href="/u/{who}/"><img src="/a.png"><span class="score">{points}</span></a><div class="info"><a class="name" href="/u/{who}/">{who}</a> <abbr class="time">{when}</abbr></div><div class="content"><p>{body}</p></div></div>"#
            )
        };
        let html = format!(
            r#"<html><body>{NAV}<h1>问题</h1>{}{}{}</body></html>"#,
            p("刘洋", "741", "2024-03-05 09:07", "第一段很长很长的文字，说的是一个问题"),
            p("zhao_lei", "1.2k", "2024-03-05 10:00", "说得对，我也这么想"),
            p("刘洋", "12", "2024-03-06 11:00", "谢谢大家的回答"),
        );
        let authors: Vec<String> = summary(&html, AUTO).into_iter().map(|p| p.1).collect();
        assert_eq!(authors, ["刘洋", "zhao_lei", "刘洋"]);
        assert!(score_text("1,024") && score_text(" 741 ") && !score_text("k") && !score_text("user42"));
        assert!(user_href("/%E7%94%A8%E6%88%B7/3/li-nuo/") && user_href("/会员/3") && !user_href("/%E9%97%AE%E9%A2%98/3/"));
    }

    /// FlaskBB shows each author's join date in the profile column of
    /// every post, before the post's own time: both are in every record,
    /// and the first seen used to win.
    #[test]
    fn a_join_date_in_every_post_is_not_the_post_time() {
        let p = |f: u32, who: &str, joined: &str, when: &str, body: &str| {
            format!(
                r#"<div class="post-row"><div class="author"><div class="author-name"><h4><a href="/user/{who}">{who}</a></h4></div><div class="author-registered">加入于: {joined}</div></div><div class="post-box"><div class="post-meta"><div class="pull-left"><a href="/post/{f}">{when}</a></div><div class="pull-right"><strong>#{f}</strong></div></div><div class="post-content"><p>{body}</p></div></div></div>"#
            )
        };
        let html = format!(
            r#"<html><body>{NAV}<h1>主题</h1>{}{}{}{}</body></html>"#,
            p(1, "王五", "Dec 11 2024", "23 January 2025 - 06:18", "第一段很长很长的文字"),
            p(2, "赵六", "Dec 01 2024", "24 January 2025 - 07:00", "说得对，我也这么想"),
            p(3, "王五", "Dec 11 2024", "25 January 2025 - 08:30", "谢谢大家的回复"),
            p(4, "王五", "Dec 11 2024", "26 January 2025 - 09:45", "再补充一点内容"),
        );
        // Two posts by two authors who joined in order: only the hour tells.
        let two = format!(
            r#"<html><body>{NAV}<h1>主题</h1>{}{}</body></html>"#,
            p(1, "王五", "Dec 01 2024", "23 January 2025 - 06:18", "第一段很长很长的文字"),
            p(2, "赵六", "Dec 11 2024", "24 January 2025 - 07:00", "说得对，我也这么想"),
        );
        let times: Vec<Option<String>> = summary(&two, AUTO).into_iter().map(|p| p.2).collect();
        assert_eq!(times, ["2025-01-23T06:18:00", "2025-01-24T07:00:00"].map(|t| Some(t.to_owned())));
        let times: Vec<Option<String>> = summary(&html, AUTO).into_iter().map(|p| p.2).collect();
        assert_eq!(times, ["2025-01-23T06:18:00", "2025-01-24T07:00:00", "2025-01-25T08:30:00", "2025-01-26T09:45:00"].map(|t| Some(t.to_owned())));
    }

    #[test]
    fn table_row_posts_with_user_links_and_labels() {
        let row = |uid: u32, who: &str, when: &str, body: &str| {
            format!(
                r#"<tr><td class="row1"><a href="profile.php?mode=viewprofile&amp;u={uid}">{who}</a><br>文章: {uid}</td>
<td class="row1"><span class="postdetails">发表于: {when} 标题: 回复</span><hr><span class="postbody">{body}</span></td></tr>
<tr><td class="spacer" colspan="2"><img src="s.gif"></td></tr>"#
            )
        };
        let html = format!(
            r#"<html><body>{NAV}<table class="forumline"><tr><th>作者</th><th>内容</th></tr>{}{}</table>
<div class="pager"><a href="?p=1">1</a><a href="?p=2">2</a><a href="?p=3">3</a></div></body></html>"#,
            row(7, "张三", "2024-3-5 12:34", "第一行<br>第二行"),
            row(9, "李四", "2024-3-5 13:00", "同意"),
        );
        assert_eq!(summary(&html, AUTO), [post(1, "张三", "2024-03-05T12:34:00", &["第一行", "第二行"]), post(2, "李四", "2024-03-05T13:00:00", &["同意"]),]);
    }

    #[test]
    fn a_quoted_post_inside_a_post_stays_in_its_body() {
        let p = |pid: u32, who: &str, when: &str, body: &str| {
            format!(
                r#"<div id="post_{pid}" class="post"><div class="author"><a href="space-uid-{pid}.html">{who}</a></div>
<div class="meta"><em>发表于 {when}</em></div><div class="message">{body}</div></div>"#
            )
        };
        // The quote reuses the post markup, with its own author and date.
        let quoted = p(1, "甲", "2024-1-1 08:00", "原话");
        let html = format!(
            "<html><body><div id=\"postlist\">{}{}{}</div></body></html>",
            p(1, "甲", "2024-1-1 08:00", "原话在这里"),
            p(2, "乙", "2024-1-1 09:00", &format!("<blockquote>{quoted}</blockquote>我不同意")),
            p(3, "丙", "2024-1-1 10:00", "路过"),
        );
        let got = summary(&html, AUTO);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[1].0, 2);
        assert_eq!((got[1].1.as_str(), got[1].2.as_deref()), ("乙", Some("2024-01-01T09:00:00")));
        assert_eq!(got[1].3, ["甲", "发表于 2024-1-1 08:00", "原话", "我不同意"]);
        // `strip` still works inside a found record.
        let got = summary(&html, r#"<thread post="auto" strip="blockquote"/>"#);
        assert_eq!(got[1].3, ["我不同意"]);
    }

    /// Regression (the real-software bed's HyperKitty): a mailing-list
    /// archive draws the first mail, then a `div.replies` in which each reply
    /// sits in a wrapper (`div.odd`/`div.even`, by depth) that also holds
    /// the wrappers of its answers. The two siblings, the first mail and
    /// the container, matched as two records: the first mail and every
    /// other read as one.
    #[test]
    fn replies_nested_by_thread_depth_are_each_a_post() {
        let mail = |first: bool, who: &str, when: &str, body: &str| {
            format!(
                r##"<div class="email{}"><div class="email-header"><div class="gravatar-wrapper"><div class="email-author"><h2 class="name">{who}</h2></div></div><div class="email-date"><span title="{when}">{when}</span></div></div><div class="email-body"><p>{body}</p></div><div class="email-info"><a href="/vote">0</a> <a class="reply" href="#">Reply</a></div></div>"##,
                if first { " email-first" } else { "" }
            )
        };
        let html = format!(
            r#"<html><body>{NAV}<div class="thread">{}<div class="replies"><div class="odd">{}<div class="even reply-level-1">{}<div class="odd reply-level-2">{}</div></div></div><div class="even">{}</div></div></div></body></html>"#,
            mail(true, "张伟", "2026-09-01 19:42", "第一封邮件的正文很长很长"),
            mail(false, "李娜", "2026-09-02 08:10", "回复第一封"),
            mail(false, "王芳", "2026-09-02 09:30", "回复李娜的邮件"),
            mail(false, "赵磊", "2026-09-03 10:00", "再往下一层"),
            mail(false, "刘洋", "2026-09-04 11:11", "又一个直接回复"),
        );
        let got = summary(&html, AUTO);
        let who: Vec<(&str, Option<&str>, &[String])> = got.iter().map(|p| (p.1.as_str(), p.2.as_deref(), p.3.as_slice())).collect();
        assert_eq!(
            who,
            [
                ("张伟", Some("2026-09-01T19:42:00"), &["第一封邮件的正文很长很长".to_owned()][..]),
                ("李娜", Some("2026-09-02T08:10:00"), &["回复第一封".to_owned()][..]),
                ("王芳", Some("2026-09-02T09:30:00"), &["回复李娜的邮件".to_owned()][..]),
                ("赵磊", Some("2026-09-03T10:00:00"), &["再往下一层".to_owned()][..]),
                ("刘洋", Some("2026-09-04T11:11:00"), &["又一个直接回复".to_owned()][..]),
            ]
        );
        // A thread of one reply: the container holds it alone.
        let one = format!(
            r#"<html><body>{NAV}<div class="thread">{}<div class="replies"><div class="odd">{}</div></div></div></body></html>"#,
            mail(true, "张伟", "2026-09-01 19:42", "第一封邮件的正文很长很长"),
            mail(false, "李娜", "2026-09-02 08:10", "回复第一封"),
        );
        let classes = |html: &str| -> Vec<String> {
            let doc = Html::parse_document(html);
            records(&doc, None)
                .0
                .iter()
                .map(|r| ElementRef::wrap(doc.tree.get(r.record).unwrap()).unwrap().value().attr("class").unwrap_or("").to_owned())
                .collect()
        };
        assert_eq!(classes(&one), ["email email-first", "email"]);
        // Two posts, each with its "Reply" button: a link to `#` is no name.
        let authors: Vec<String> = summary(&one, AUTO).into_iter().map(|p| p.1).collect();
        assert_eq!(authors, ["张伟", "李娜"]);
        // Beside the page's main column, a dialog drawn like it (Bootstrap's
        // `div.modal`, hidden by a style sheet) and undated: the two are no
        // pair of posts, the mails inside the column are.
        let dialog = r#"<div class="modal fade"><div class="modal-dialog"><h4>键盘快捷键</h4><ul><li><code>j</code>：下一封未读邮件</li><li><code>k</code>：上一封未读邮件</li><li><code>j a</code>：跳到所有主题</li><li><code>j l</code>：跳到邮件列表概览</li></ul></div></div>"#;
        let side: String = (1..=6).map(|i| format!("<li><a href=\"/list/{i}/\">邮件列表第{i}个很长的名字</a></li>")).collect();
        let page = format!(
            r#"<html><body>{dialog}<div class="container"><div class="about"><h4>书评天地</h4><ul class="lists">{side}</ul><p>这个邮件列表讨论读过的书，欢迎每一位喜欢读书的朋友在这里分享自己的读后感和推荐的好书，也可以提出问题请大家帮忙解答。</p></div><div class="thread">{}<div class="replies"><div class="odd">{}</div></div></div></div></body></html>"#,
            mail(true, "张伟", "2026-09-01 19:42", "第一封"),
            mail(false, "李娜", "2026-09-02 08:10", "回复"),
        );
        assert_eq!(classes(&page), ["email email-first", "email"]);
    }

    #[test]
    fn a_page_with_one_post() {
        let html = r#"<html><body><div class="hd"><a href="/">首页</a><a href="/login">登录</a></div>
<div class="wrap"><table class="plhin"><tr><td class="pls"><a class="xw1" href="home.php?mod=space&amp;uid=5">小明</a></td>
<td class="plc"><div class="pi"><strong><a><em>1#</em></a></strong><em>发表于 2024-3-5 12:34</em> | <a href="x?authorid=5">只看该作者</a></div>
<div class="pct"><table><tr><td class="t_f">这是一个没有回复的帖子。<br>第二段。</td></tr></table></div></td></tr></table></div>
<div class="ft">Powered by Discuz!</div></body></html>"#;
        assert_eq!(summary(html, AUTO), [post(1, "小明", "2024-03-05T12:34:00", &["这是一个没有回复的帖子。", "第二段。"])]);
    }

    #[test]
    fn a_last_page_with_one_short_post_takes_the_shape_of_the_first() {
        use crate::parse::{extract_thread, RawPage};
        // The name sits in a block of its own, so the page alone would be
        // read wrong (see the module documentation); page 1 shows the shape.
        let p = |f: u32, who: &str, when: &str, body: &str| {
            format!(
                r#"<div class="floor"><div class="head"><div class="who">{who}</div><span class="when">{when}</span><b>{f}楼</b></div><div class="msg">{body}</div></div>"#
            )
        };
        let page = |posts: &[String]| format!("<html><body><h1>主题</h1><div class=\"list\">{}</div><p>页脚文字</p></body></html>", posts.concat());
        let p1 = page(&[p(1, "一个很长的用户名字", "2024-03-05 09:00", "主楼的内容"), p(2, "乙", "2024-03-05 09:30", "二楼的内容")]);
        let p2 = page(&[p(3, "一个很长的用户名字", "2024-03-06 10:00", "顶")]);
        let raw = |name: &str, html: &str| RawPage { path: name.into(), bytes: html.as_bytes().to_vec(), fetched: None };
        let alone = summary(&p2, AUTO);
        assert_ne!(alone, [post(1, "一个很长的用户名字", "2024-03-06T10:00:00", &["顶"])], "read alone, the page is misread");
        let got = extract_thread(&site(AUTO), &crate::parse::tests::row(2), &[raw("1.html", &p1), raw("2.html", &p2)], None).unwrap();
        let got: Vec<_> = got.doc.posts.into_iter().map(|p| (p.floor, p.author, p.time, p.paragraphs)).collect();
        assert_eq!(
            got,
            [
                post(1, "一个很长的用户名字", "2024-03-05T09:00:00", &["主楼的内容"]),
                post(2, "乙", "2024-03-05T09:30:00", &["二楼的内容"]),
                post(3, "一个很长的用户名字", "2024-03-06T10:00:00", &["顶"]),
            ]
        );
    }

    #[test]
    fn a_sidebar_list_longer_than_the_posts_loses() {
        let side: String =
            (1..=20).map(|i| format!(r#"<li><a href="/t/{i}">热门帖子标题第{i}个很长很长的标题</a> <span>2024-02-{:02}</span></li>"#, i % 28 + 1)).collect();
        let p = |who: &str, when: &str, body: &str| {
            format!(r#"<div class="reply"><p class="by"><a href="/user/{who}">{who}</a> <span>{when}</span></p><div class="txt">{body}</div></div>"#)
        };
        let html = format!(
            r#"<html><body><div class="main">{}{}</div><aside><h3>热门</h3><ul class="hot">{side}</ul></aside></body></html>"#,
            p("甲", "2024-03-05 12:00", "第一个回复的内容"),
            p("乙", "2024-03-05 12:30", "第二个回复"),
        );
        assert_eq!(summary(&html, AUTO), [post(1, "甲", "2024-03-05T12:00:00", &["第一个回复的内容"]), post(2, "乙", "2024-03-05T12:30:00", &["第二个回复"])]);
    }

    #[test]
    fn the_site_files_selectors_help_inside_records() {
        let p = |who: &str, when: &str, body: &str, sig: &str| {
            format!(r#"<div class="p"><b class="who">{who}</b><i>{when}</i><div class="msg">{body}</div><div class="sig">{sig}</div></div>"#)
        };
        let html = format!(
            "<html><body>{}{}</body></html>",
            p("甲", "2024-03-05 12:00", "正文一", "签名档很长很长很长很长很长很长很长"),
            p("乙", "2024-03-05 12:30", "正文二", "另一个很长很长很长很长很长的签名档")
        );
        let got = summary(&html, r#"<thread post="auto" body="div.msg" author="b.who"/>"#);
        assert_eq!(got, [post(1, "甲", "2024-03-05T12:00:00", &["正文一"]), post(2, "乙", "2024-03-05T12:30:00", &["正文二"])]);
    }

    #[test]
    fn a_page_without_dates_has_no_posts() {
        assert!(summary("<html><body><p>404 帖子不存在</p><ul><li>一</li><li>二</li></ul></body></html>", AUTO).is_empty());
    }

    #[test]
    fn floor_labels_are_strict() {
        let labels = [("3#", Some(3)), ("# 12", Some(12)), ("第5楼", Some(5)), ("沙发", Some(2)), ("文章: 123", None), ("123", None), ("2024#", Some(2024))];
        for (label, floor) in labels {
            assert_eq!(floor_label(label), floor, "{label}");
        }
    }

    #[test]
    fn a_big_page_is_read_in_one_pass() {
        let row = |i: u32| {
            format!(r#"<div class="post"><a href="u.php?uid={i}">用户{i}</a><span>2024-03-05 12:{:02}</span><div class="c">内容{i}内容</div></div>"#, i % 60)
        };
        let posts: String = (0..600).map(row).collect();
        let pad: String = (0..8000).map(|i| format!("<p>填充 {i} padding 填充</p>")).collect();
        let html = format!("<html><body><div id=\"l\">{posts}</div><div class=\"pad\">{pad}</div></body></html>");
        assert!(html.len() > 300_000);
        // How fast is measured in the benchmarks (stream_identity's
        // extract_speed_by_forum), not asserted here.
        let got = parse_page(&site(AUTO), &html);
        assert_eq!(got.posts.len(), 600);
        assert_eq!(got.posts[599].author, "用户599");
    }
}
