//! URLs as the learner compares them: cut into pieces (literal text,
//! numbers, slugs), grouped by shape, related by the one piece a pager
//! changes, and written back as anchored patterns.
//!
//! A path segment or query value is cut into runs of digits and the rest
//! (`thread-77-2-1.html` → `thread-`, 77, `-`, 2, `-`, 1, `.html`); one that
//! holds percent escapes or other than ASCII is one slug (a Chinese title
//! in the path), and so is a long run of letters and digits (a session
//! id). Two URLs have the same shape when they differ only in numbers and
//! slugs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use url::Url;

use crate::aside;

/// One piece of a path segment or of a query value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    Lit(String),
    Num(String),
    Slug(String),
}

impl Piece {
    pub fn text(&self) -> &str {
        match self {
            Piece::Lit(s) | Piece::Num(s) | Piece::Slug(s) => s,
        }
    }
}

/// What a shape holds at one place: the literal text, or the kind of
/// value that varies there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Lit(String),
    Num,
    Slug,
    /// A whole path segment of letters that differs between pages of one
    /// kind (a board named `tech`): found by [`merge_words`].
    Word,
}

/// Where a piece sits: segment and piece, or query key and piece.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pos {
    Seg(usize, usize),
    Query(String, usize),
}

/// A URL cut into pieces (scheme, host and fragment aside).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Split {
    pub path: Vec<Vec<Piece>>,
    pub query: Vec<(String, Vec<Piece>)>,
}

/// The pattern of a [`Split`]: literals kept, varying pieces by kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    pub path: Vec<Vec<Kind>>,
    pub query: Vec<(String, Vec<Kind>)>,
}

/// A value this long of letters and digits mixed is an opaque token.
const OPAQUE: usize = 16;

fn pieces(s: &str) -> Vec<Piece> {
    if s.is_empty() {
        return Vec::new();
    }
    let mixed = s.chars().any(|c| c.is_ascii_digit()) && s.chars().any(|c| c.is_ascii_alphabetic());
    if s.contains('%') || !s.is_ascii() || (mixed && s.len() >= OPAQUE && s.chars().all(|c| c.is_ascii_alphanumeric())) {
        return vec![Piece::Slug(s.to_owned())];
    }
    let mut out: Vec<Piece> = Vec::new();
    for c in s.chars() {
        let digit = c.is_ascii_digit();
        match out.last_mut() {
            Some(Piece::Num(n)) if digit => n.push(c),
            Some(Piece::Lit(l)) if !digit => l.push(c),
            _ => out.push(if digit { Piece::Num(c.to_string()) } else { Piece::Lit(c.to_string()) }),
        }
    }
    out
}

/// A path segment that is a title slug and a number joined by a hyphen,
/// `<slug>-<id>` (django-machina's `%E4%B9%A6%E8%AF%84-3`) or `<id>-<slug>`
/// (FlaskBB's `12-shu-ping-tian-di`): the number is the id, the slug a
/// title that changes with it, so it is a [`Piece::Slug`] (the pattern
/// leaves it free) rather than one opaque slug or a literal that makes
/// every thread a shape of its own. A slug before the number must be
/// other than ASCII (a literal word there, `board-3`, is the site's own
/// text); one after it must hold a letter and no dot (`2-1.html` is a
/// file name).
fn slug_and_number(s: &str) -> Option<Vec<Piece>> {
    let sluggy = |t: &str| !t.is_empty() && !t.contains('.') && t.chars().all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '%'));
    if let Some((head, id)) = s.rsplit_once('-') {
        if !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()) && sluggy(head) && (head.contains('%') || !head.is_ascii()) {
            return Some(vec![Piece::Slug(head.to_owned()), Piece::Lit("-".into()), Piece::Num(id.to_owned())]);
        }
    }
    if let Some((id, tail)) = s.split_once('-') {
        if !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()) && sluggy(tail) && tail.chars().any(|c| c.is_alphabetic() || c == '%') {
            return Some(vec![Piece::Num(id.to_owned()), Piece::Lit("-".into()), Piece::Slug(tail.to_owned())]);
        }
    }
    None
}

/// A path segment cut into pieces: [`slug_and_number`] first.
fn segment_pieces(s: &str) -> Vec<Piece> {
    slug_and_number(s).unwrap_or_else(|| pieces(s))
}

/// Whether a segment is one word that may name a board (`tech`,
/// `campus-life`): letters first, no dot (a script or file name has one);
/// or a mailing list's address (HyperKitty's `/list/books@lists.example.org/`).
fn wordlike(s: &str) -> bool {
    let word = |w: &str| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let host = |h: &str| h.contains('.') && h.split('.').all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    word(s) || s.split_once('@').is_some_and(|(local, domain)| word(local) && host(domain))
}

impl Split {
    pub fn of(url: &Url) -> Split {
        let path = url.path().split('/').skip(1).map(segment_pieces).collect();
        let query = url
            .query()
            .filter(|q| !q.is_empty())
            .map(|q| {
                q.split('&')
                    .filter(|p| !p.is_empty())
                    .map(|p| match p.split_once('=') {
                        Some((k, v)) => (k.to_owned(), pieces(v)),
                        None => (p.to_owned(), Vec::new()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Split { path, query }
    }

    pub fn shape(&self) -> Shape {
        let kinds = |ps: &[Piece]| {
            ps.iter()
                .map(|p| match p {
                    Piece::Lit(s) => Kind::Lit(s.clone()),
                    Piece::Num(_) => Kind::Num,
                    Piece::Slug(_) => Kind::Slug,
                })
                .collect()
        };
        Shape { path: self.path.iter().map(|s| kinds(s)).collect(), query: self.query.iter().map(|(k, v)| (k.clone(), kinds(v))).collect() }
    }

    /// [`Split::shape`] with the route words found ([`route_words`]) literal.
    pub fn shape_routed(&self, routes: &BTreeSet<(usize, String)>) -> Shape {
        let mut shape = self.shape();
        for (i, seg) in self.path.iter().enumerate() {
            if let [Piece::Slug(v)] = seg.as_slice() {
                if routes.contains(&(i, v.clone())) {
                    shape.path[i] = vec![Kind::Lit(v.clone())];
                }
            }
        }
        shape
    }

    /// The text at `pos`; for a [`Kind::Word`] position, the segment.
    pub fn get(&self, pos: &Pos) -> Option<&str> {
        match pos {
            Pos::Seg(i, j) => self.path.get(*i)?.get(*j).map(Piece::text),
            Pos::Query(k, j) => self.query.iter().find(|(key, _)| key == k)?.1.get(*j).map(Piece::text),
        }
    }

    /// A coarse key to spread a sample over kinds of pages: the shape with
    /// words past the first segment blurred (boards named by words share
    /// it), and the values of keys that pick a view of a page rather than
    /// the page ([`aside::view_key`]: `filter=`, `sort=`, `term=`, `q=`),
    /// so that `/popular?filter=a&term=b` and `…filter=c&term=d` are one
    /// kind, not one kind each.
    pub fn sample_key(&self) -> String {
        let mut s = self.shape().words_blurred();
        for (k, v) in &mut s.query {
            if aside::view_key(k) && !v.is_empty() {
                *v = vec![Kind::Word];
            }
        }
        // The same keys as `key:value` path segments (Askbot's
        // `/问题/scope:all/sort:votes-desc/page:2/`: eight orders were
        // eight kinds, each read).
        for seg in &mut s.path {
            if let [Kind::Lit(l)] = seg.as_slice() {
                if let Some((k, _)) = l.split_once(':').filter(|(k, v)| aside::view_key(k) && !v.is_empty()) {
                    *seg = vec![Kind::Lit(format!("{k}:")), Kind::Word];
                }
            }
        }
        s.key()
    }
}

impl Shape {
    /// This shape with every one-word path segment past the first a
    /// [`Kind::Word`]: boards named by words share it.
    fn words_blurred(mut self) -> Shape {
        for (i, seg) in self.path.iter_mut().enumerate() {
            if i > 0 && matches!(seg.as_slice(), [Kind::Lit(l)] if wordlike(l)) {
                *seg = vec![Kind::Word];
            }
        }
        self
    }

    /// A readable form: `/dz/forum.php?mod=viewthread&tid=#`.
    pub fn key(&self) -> String {
        let mut out = String::new();
        let kinds = |out: &mut String, ks: &[Kind]| {
            for k in ks {
                match k {
                    Kind::Lit(s) => out.push_str(s),
                    Kind::Num => out.push('#'),
                    Kind::Slug => out.push('*'),
                    Kind::Word => out.push_str("{w}"),
                }
            }
        };
        for seg in &self.path {
            out.push('/');
            kinds(&mut out, seg);
        }
        for (i, (k, v)) in self.query.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(k);
            out.push('=');
            kinds(&mut out, v);
        }
        out
    }

    /// Whether `split` has this shape (a [`Kind::Word`] takes any one
    /// word-like segment).
    pub fn matches(&self, split: &Split) -> bool {
        let fits = |ks: &[Kind], ps: &[Piece]| match ks {
            [Kind::Word] => ps.len() == 1 && matches!(&ps[0], Piece::Lit(l) if wordlike(l)),
            _ => {
                ks.len() == ps.len()
                    && ks.iter().zip(ps).all(|(k, p)| match (k, p) {
                        (Kind::Lit(a), Piece::Lit(b)) => a == b,
                        (Kind::Num, Piece::Num(_)) | (Kind::Slug, Piece::Slug(_)) => true,
                        _ => false,
                    })
            }
        };
        self.path.len() == split.path.len()
            && self.query.len() == split.query.len()
            && self.path.iter().zip(&split.path).all(|(k, p)| fits(k, p))
            && self.query.iter().zip(&split.query).all(|((k, kv), (sk, sv))| k == sk && fits(kv, sv))
    }

    /// The places where values vary, in URL order.
    pub fn vars(&self) -> Vec<(Pos, Kind)> {
        let mut out = Vec::new();
        for (i, seg) in self.path.iter().enumerate() {
            for (j, k) in seg.iter().enumerate() {
                if !matches!(k, Kind::Lit(_)) {
                    out.push((Pos::Seg(i, j), k.clone()));
                }
            }
        }
        for (key, v) in &self.query {
            for (j, k) in v.iter().enumerate() {
                if !matches!(k, Kind::Lit(_)) {
                    out.push((Pos::Query(key.clone(), j), k.clone()));
                }
            }
        }
        out
    }

    /// This shape without query key `key`.
    pub fn without(&self, key: &str) -> Shape {
        Shape { path: self.path.clone(), query: self.query.iter().filter(|(k, _)| k != key).cloned().collect() }
    }

    /// The one query key (with a value of one piece) `self` has beyond
    /// `base`, everything else equal.
    pub fn extra_param(&self, base: &Shape) -> Option<(&str, &Kind)> {
        if self.path != base.path || self.query.len() != base.query.len() + 1 {
            return None;
        }
        let (i, (k, v)) = self.query.iter().enumerate().find(|(i, q)| base.query.get(*i) != Some(q))?;
        (v.len() == 1 && self.without(k) == *base && i <= base.query.len()).then(|| (k.as_str(), &v[0]))
    }

    /// The query key `self` adds to `plain` as a fixed flag, everything
    /// else equal: a key alone or with a literal value (`?noscript`,
    /// `&action=printable`), a variant of the same page, not another page.
    pub fn variant_of(&self, plain: &Shape) -> Option<&str> {
        if self.path != plain.path || self.query.len() != plain.query.len() + 1 {
            return None;
        }
        let (k, v) = self.query.iter().find(|(k, _)| !plain.query.iter().any(|(pk, _)| pk == k))?;
        (v.iter().all(|kind| matches!(kind, Kind::Lit(_))) && self.without(k) == *plain).then_some(k.as_str())
    }

    /// Where `self`, a later page of `base`, holds its page number when
    /// `base` has none: one query parameter more (`&page=2`), that and the
    /// view it pages ([`Shape::viewed_page`]), or a word and a number as
    /// two path segments more (WordPress's `/page/2/`).
    pub fn extra_page(&self, base: &Shape) -> Option<Pos> {
        if let Some((k, Kind::Num)) = self.extra_param(base) {
            return Some(Pos::Query(k.to_owned(), 0));
        }
        if let Some(k) = self.viewed_page(base) {
            return Some(Pos::Query(k.to_owned(), 0));
        }
        if self.query != base.query {
            return None;
        }
        let i = (0..base.path.len()).find(|&i| self.path.get(i) != base.path.get(i)).unwrap_or(base.path.len());
        match self.path.len().checked_sub(base.path.len()) {
            // `/category/x/page/2/`: a word and the number.
            Some(2) => {
                let word = matches!(self.path[i].as_slice(), [Kind::Word] | [Kind::Lit(_)]);
                (word && self.path[i + 1] == [Kind::Num] && self.path[i + 2..] == base.path[i..]).then_some(Pos::Seg(i + 1, 0))
            }
            // `/t/slug/11/2/`: the number alone, after every place of the
            // first page's (Misago's, Discourse's later pages).
            Some(1) => (self.path[i] == [Kind::Num]
                && self.path[i + 1..] == base.path[i..]
                && base.path[i..].iter().all(|seg| seg.iter().all(|k| matches!(k, Kind::Lit(_)))))
            .then_some(Pos::Seg(i, 0)),
            _ => None,
        }
    }

    /// The page key of `self` when it is `base` with a page number and
    /// the view it pages added as query parameters, the view's values
    /// literal: Askbot's answer pages are `?sort=votes&page=2` below a
    /// question shown without either, its pager naming the default order
    /// it pages through.
    fn viewed_page(&self, base: &Shape) -> Option<&str> {
        if self.path != base.path || self.query.len() < base.query.len() + 2 {
            return None;
        }
        let in_base = |k: &str| base.query.iter().any(|(bk, _)| bk == k);
        let (added, kept): (Vec<_>, Vec<_>) = self.query.iter().partition(|(k, _)| !in_base(k));
        let numbered: Vec<&str> = added.iter().filter(|(_, v)| *v == [Kind::Num]).map(|(k, _)| k.as_str()).collect();
        let views = added.iter().all(|(_, v)| *v == [Kind::Num] || (!v.is_empty() && v.iter().all(|k| matches!(k, Kind::Lit(_)))));
        match numbered.as_slice() {
            [page] if views && kept.into_iter().eq(base.query.iter()) => Some(page),
            _ => None,
        }
    }

    /// Path segments a later page's shape (`self`) adds to its first
    /// page's (`base`): 2 for a word and a number, 1 for a number.
    pub fn added_segments(&self, base: &Shape) -> usize {
        self.path.len().saturating_sub(base.path.len())
    }
}

/// Path segments that are a route's word though they read as slugs:
/// software that translates its routes writes them percent-encoded
/// (Askbot's `/问题/<id>/<slug>/`, `/用户/<uid>/<slug>/`), and a segment
/// of percent escapes is cut as one slug, so every route would be one
/// kind of URL (`/*/#/*/`) and none of them read as threads. What tells
/// the route's word from a name is how it recurs: the same value while an
/// id ([`ROUTE_IDS`] values or more) and a title or name beside it change,
/// as a question's id and its slug do. A WordPress category's name recurs
/// too, across its later pages, but only the page number changes beside
/// it: it stays a slug. Returns (segment, value) pairs, for
/// [`Split::shape_routed`].
pub fn route_words(splits: &[Split]) -> BTreeSet<(usize, String)> {
    // Every distinct URL, grouped by its shape with words blurred, the
    // segment looked at and its value.
    let mut groups: BTreeMap<(Shape, usize, &str), BTreeSet<&Split>> = BTreeMap::new();
    for sp in splits {
        let blurred = sp.shape().words_blurred();
        for (i, seg) in sp.path.iter().enumerate() {
            if let [Piece::Slug(v)] = seg.as_slice() {
                groups.entry((blurred.clone(), i, v.as_str())).or_default().insert(sp);
            }
        }
    }
    let mut out = BTreeSet::new();
    for ((shape, i, value), members) in groups {
        if members.len() < ROUTE_IDS {
            continue;
        }
        let values = |p: &Pos| members.iter().filter_map(|m| m.get(p)).collect::<BTreeSet<_>>().len();
        let others: Vec<(Pos, Kind)> = shape.vars().into_iter().filter(|(p, _)| *p != Pos::Seg(i, 0)).collect();
        let ids = others.iter().any(|(p, k)| *k == Kind::Num && values(p) >= ROUTE_IDS);
        let named = others.iter().any(|(p, k)| *k != Kind::Num && values(p) >= 2);
        if ids && named {
            out.insert((i, value.to_owned()));
        }
    }
    out
}

/// How many ids a route's word must be seen beside ([`route_words`]).
const ROUTE_IDS: usize = 3;

/// Shapes that differ only in one path segment holding a different word
/// (`/bbs/board/tech/`, `/bbs/board/life/`) become one shape with a
/// [`Kind::Word`] there; a word where another shape, otherwise the same,
/// holds a slug is that slug's shape (WordPress's categories: `lvxing`
/// typed by the owner, `%e8%af%bb%e4%b9%a6` made from the name). Returns
/// each input shape's merged shape.
pub fn merge_words(shapes: &[Shape]) -> BTreeMap<Shape, Shape> {
    let mut out: BTreeMap<Shape, Shape> = shapes.iter().map(|s| (s.clone(), s.clone())).collect();
    let max_segs = shapes.iter().map(|s| s.path.len()).max().unwrap_or(0);
    for i in 0..max_segs {
        let mut groups: BTreeMap<Shape, Vec<Shape>> = BTreeMap::new();
        for s in out.values() {
            if let Some([Kind::Lit(l)]) = s.path.get(i).map(Vec::as_slice) {
                if wordlike(l) && i > 0 {
                    let mut g = s.clone();
                    g.path[i] = vec![Kind::Word];
                    groups.entry(g).or_default().push(s.clone());
                }
            }
        }
        // The words found to vary at `i`, with the path they vary in.
        let mut varied: BTreeSet<(Vec<Vec<Kind>>, String)> = BTreeSet::new();
        for (merged, members) in groups {
            let distinct: BTreeSet<&Shape> = members.iter().collect();
            if distinct.len() >= 2 {
                for m in &distinct {
                    if let Some([Kind::Lit(l)]) = m.path.get(i).map(Vec::as_slice) {
                        varied.insert((merged.path.clone(), l.clone()));
                    }
                }
                for v in out.values_mut() {
                    if distinct.contains(v) {
                        *v = merged.clone();
                    }
                }
            }
        }
        // Such a word is a name in that path whatever the query: a list's
        // later pages, read for one board only (`/c/<name>/3/?start=6`),
        // are its board's shape and the parameter.
        for v in out.values_mut() {
            if let Some([Kind::Lit(l)]) = v.path.get(i).map(Vec::as_slice) {
                let mut path = v.path.clone();
                path[i] = vec![Kind::Word];
                if varied.contains(&(path.clone(), l.clone())) {
                    v.path = path;
                }
            }
        }
        let slugs: BTreeSet<Shape> = out.values().filter(|s| s.path.get(i).is_some_and(|k| k == &[Kind::Slug])).cloned().collect();
        for v in out.values_mut() {
            let word = match v.path.get(i).map(Vec::as_slice) {
                Some([Kind::Word]) => true,
                Some([Kind::Lit(l)]) => wordlike(l) && i > 0,
                _ => false,
            };
            if word {
                let mut g = v.clone();
                g.path[i] = vec![Kind::Slug];
                if slugs.contains(&g) {
                    *v = g;
                }
            }
        }
    }
    out
}

/// How a pager link relates to the page it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagerStep {
    /// The shape of a first page (the pager's position included when it is
    /// part of every page's URL).
    pub base: Shape,
    pub pos: Pos,
    /// Whether `pos` is a query parameter the first page does without.
    pub added: bool,
    /// The page value of the link (`None`: the link is the first page,
    /// written without the parameter).
    pub value: Option<u64>,
}

/// Words a pager's link says (lower case), Chinese and English.
const PAGER_WORDS: [&str; 18] =
    ["下一页", "上一页", "下页", "上页", "下一頁", "上一頁", "後頁", "前頁", "后页", "前页", "尾页", "末页", "较早", "较新", "next", "prev", "older", "newer"];
/// Signs a pager's link shows for the next or previous page.
const PAGER_SIGNS: [&str; 6] = ["»", "«", "›", "‹", "→", "←"];

/// Whether a link's text is a pager's: a page number (`2`, `... 12`,
/// `[3]`), an arrow or a word for the next or previous page, or nothing
/// (an icon). One number: a blog's month archives (`2025年12月`, linked
/// from each other) are not one list's pages.
pub fn pager_text(text: &str) -> bool {
    let t = text.trim();
    let others = t.chars().filter(|c| !c.is_ascii_digit() && !c.is_whitespace()).count();
    let numbers = t.split(|c: char| !c.is_ascii_digit()).filter(|run| !run.is_empty()).count();
    let lower = t.to_lowercase();
    (numbers == 1 && others <= 3) || t.is_empty() || PAGER_WORDS.iter().chain(&PAGER_SIGNS).any(|w| lower.contains(w)) || matches!(t, ">" | "<" | ">>" | "<<")
}

/// If `link` is `page` with one number changed, added or dropped (and
/// everything else equal), that step, when the link's `text` reads as a
/// pager's ([`pager_text`]): "next thread" links change an id the same
/// way, and "only this author" links add one.
pub fn pager_step(page: &Split, page_shape: &Shape, link: &Split, link_shape: &Shape, text: &str) -> Option<PagerStep> {
    if !pager_text(text) {
        return None;
    }
    // A number alone added as a path segment is a page only where the link
    // says "next" or the like (Misago's `rel="next"`): NodeBB links a post
    // as `/topic/7/slug/12`, the topic at its 12th post, with a time for
    // text or none.
    let lower = text.trim().to_lowercase();
    let worded = PAGER_WORDS.iter().chain(&PAGER_SIGNS).any(|w| lower.contains(w)) || matches!(lower.as_str(), ">" | "<" | ">>" | "<<");
    if page_shape.path.len().abs_diff(link_shape.path.len()) == 1 && !worded {
        return None;
    }
    pager_step_of(page, page_shape, link, link_shape).filter(|step| shows_its_page(text, step.value))
}

/// Whether a link's text names the page `value` it leads to, where it
/// names a number: that number (page numbers), or the page whose offset
/// it is (`3` for `start=30`, ten a page). A month archive linked as
/// "十一月 2025" steps a number too, but shows another.
fn shows_its_page(text: &str, value: Option<u64>) -> bool {
    let shown = text.split(|c: char| !c.is_ascii_digit()).find(|run| !run.is_empty()).and_then(|n| n.parse::<u64>().ok());
    match (shown, value) {
        (Some(n), Some(v)) => v == n || (n <= 1 && v <= 1) || (n > 1 && v > 0 && v % (n - 1) == 0),
        _ => true,
    }
}

fn pager_step_of(page: &Split, page_shape: &Shape, link: &Split, link_shape: &Shape) -> Option<PagerStep> {
    if page_shape == link_shape {
        let diffs: Vec<(Pos, Kind)> = page_shape.vars().into_iter().filter(|(p, _)| page.get(p) != link.get(p)).collect();
        return match diffs.as_slice() {
            [(pos, Kind::Num)] => {
                Some(PagerStep { base: page_shape.clone(), pos: pos.clone(), added: false, value: link.get(pos).and_then(|v| v.parse().ok()) })
            }
            _ => None,
        };
    }
    // `first` (a first page) and `later` (one with the number added at
    // `pos`) name the same board or thread: every varying place of the
    // first page's shape holds the same value in both (a place after the
    // added path segments as many further on).
    let same_elsewhere = |first: &Split, later: &Split, shape: &Shape, pos: &Pos, added: usize| {
        shape.vars().iter().all(|(p, _)| first.get(p) == later.get(&moved_on(p, pos, added)))
    };
    if let Some(pos) = link_shape.extra_page(page_shape) {
        if same_elsewhere(page, link, page_shape, &pos, link_shape.added_segments(page_shape)) {
            return Some(PagerStep { base: page_shape.clone(), pos: pos.clone(), added: true, value: link.get(&pos).and_then(|v| v.parse().ok()) });
        }
    }
    if let Some(pos) = page_shape.extra_page(link_shape) {
        if same_elsewhere(link, page, link_shape, &pos, page_shape.added_segments(link_shape)) {
            return Some(PagerStep { base: link_shape.clone(), pos, added: true, value: None });
        }
    }
    None
}

/// Where a first page's place `p` is on a later page whose number sits at
/// `pos`, `added` path segments in (the word before it and the number, or
/// the number alone): a segment from the first added one on moves on by them.
pub fn moved_on(p: &Pos, pos: &Pos, added: usize) -> Pos {
    match (p, pos) {
        (Pos::Seg(i, j), Pos::Seg(at, _)) if *i + added > *at => Pos::Seg(i + added, *j),
        _ => p.clone(),
    }
}

/// What each varying place of a pattern stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Board,
    Thread,
    Page,
    /// Pinned to this literal (a first page whose number is in the URL).
    Fixed(String),
    /// Varies with where the link was found, not with what it names.
    Free,
}

/// The anchored pattern of `shape` on `origin` (`http://host:port`), its
/// varying places written as `roles` say (unnamed ones free). `context`:
/// query keys a link may add that vary with where it was found, not with
/// what it names; they are allowed at the end in a `context` group, which
/// luntan drops from the URLs it stores (`LinkPattern::canonical`).
pub fn pattern(origin: &Url, shape: &Shape, roles: &BTreeMap<Pos, Role>, context: &[String]) -> String {
    // Either scheme: a forum that moves to https keeps its patterns.
    let mut out = String::from("^https?://");
    out.push_str(&regex::escape(origin.host_str().unwrap_or_default()));
    if let Some(p) = origin.port() {
        let _ = write!(out, ":{p}");
    }
    let shared = |pos: &Pos| matches!(pos, Pos::Seg(i, _) if shape.path[*i].len() > 1);
    let piece = |out: &mut String, pos: Pos, k: &Kind| match k {
        Kind::Lit(s) => out.push_str(&regex::escape(s)),
        // A number beside a slug in one segment is spelt as a number:
        // `{thread}` also takes letters and hyphens, so in
        // `/topic/12-some-slug` it would take the slug's first words too,
        // and ids would change with the title.
        Kind::Num if shared(&pos) && matches!(roles.get(&pos), Some(Role::Board)) => out.push_str("(?P<board>[0-9]+)"),
        Kind::Num if shared(&pos) && matches!(roles.get(&pos), Some(Role::Thread)) => out.push_str("(?P<thread>[0-9]+)"),
        _ => match roles.get(&pos) {
            Some(Role::Board) => out.push_str("{board}"),
            Some(Role::Thread) => out.push_str("{thread}"),
            Some(Role::Page) => out.push_str("{page}"),
            Some(Role::Fixed(v)) => out.push_str(&regex::escape(v)),
            Some(Role::Free) | None => out.push_str(match k {
                Kind::Num => "[0-9]+",
                // As [`wordlike`] takes them, a list's address too; from a
                // digit as well, since words seen at a place stand for
                // names unseen there (Misago's slug `2-bai-se-…`).
                Kind::Word => "[0-9A-Za-z_-]+(?:@[0-9A-Za-z.-]+)?",
                _ => "[^/?#&]+",
            }),
        },
    };
    for (i, seg) in shape.path.iter().enumerate() {
        out.push('/');
        for (j, k) in seg.iter().enumerate() {
            piece(&mut out, Pos::Seg(i, j), k);
        }
    }
    for (i, (key, v)) in shape.query.iter().enumerate() {
        out.push_str(if i == 0 { r"\?" } else { "&" });
        out.push_str(&regex::escape(key));
        out.push('=');
        for (j, k) in v.iter().enumerate() {
            piece(&mut out, Pos::Query(key.clone(), j), k);
        }
    }
    if !context.is_empty() {
        let keys = context.iter().map(|k| regex::escape(k)).collect::<Vec<_>>().join("|");
        let one = format!("(?:{keys})=[^&#]*");
        if shape.query.is_empty() {
            let _ = write!(out, r"(?P<context>\?{one}(?:&{one})*)?");
        } else {
            let _ = write!(out, "(?P<context>(?:&{one})+)?");
        }
    }
    out.push('$');
    out
}

/// The value that names the first page, from the page values pagers link
/// to: 0 when they count items (every value a multiple of one step of 5
/// or more, as phpBB's `start=15, 30`), else 1.
pub fn first_page(values: &[u64]) -> u64 {
    if values.contains(&0) {
        return 0;
    }
    let step = values.iter().fold(0u64, |g, &v| gcd(g, v));
    if step >= 5 && values.iter().min() == Some(&step) {
        0
    } else {
        1
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(u: &str) -> Split {
        Split::of(&Url::parse(u).unwrap())
    }

    #[test]
    fn urls_are_cut_into_literals_numbers_and_slugs() {
        let s = split("http://h/dzx/thread-77-2-1.html");
        assert_eq!(s.shape().key(), "/dzx/thread-#-#-#.html");
        let s = split("http://h/bbs/topic/1234/%E8%80%83%E7%A0%94/?page=3");
        assert_eq!(s.shape().key(), "/bbs/topic/#/*/?page=#");
        assert_eq!(s.get(&Pos::Seg(2, 0)), Some("1234"));
        assert_eq!(s.get(&Pos::Query("page".into(), 0)), Some("3"));
        let s = split("http://h/dz/forum.php?mod=viewthread&tid=7&extra=page%3D2");
        assert_eq!(s.shape().key(), "/dz/forum.php?mod=viewthread&tid=#&extra=*");
        assert_eq!(split("http://h/a?sid=3f9a0c2b7d1e4f5a6b7c").shape().key(), "/a?sid=*");
    }

    /// FlaskBB's `/topic/12-pinyin-slug`: `{thread}` took `12-pinyin` and
    /// long titles made ids the crawl refused.
    #[test]
    fn a_number_before_a_slug_is_the_id_alone() {
        let s = split("http://h/topic/12-gai-sa-dian-she-shi");
        assert_eq!(s.get(&Pos::Seg(1, 0)), Some("12"));
        let roles = BTreeMap::from([(Pos::Seg(1, 0), Role::Thread)]);
        let text = pattern(&Url::parse("http://h/").unwrap(), &s.shape(), &roles, &[]);
        let re = regex::Regex::new(&text).unwrap();
        let got = re.captures("http://h/topic/58-ru-guo-ni-zai-wai-zi-gong").unwrap();
        assert_eq!(&got["thread"], "58", "{text}");
    }

    #[test]
    fn a_slug_before_the_board_number_is_left_free() {
        let s = split("http://h/forum/forum/%E4%B9%A6%E8%AF%84-3/topic/%E5%B9%BF%E6%B3%9B-29/");
        assert_eq!(s.shape().key(), "/forum/forum/*-#/topic/*-#/");
        assert_eq!((s.get(&Pos::Seg(2, 2)), s.get(&Pos::Seg(4, 2))), (Some("3"), Some("29")));
        assert_eq!(s.shape(), split("http://h/forum/forum/%E5%94%90-12/topic/%E5%B9%BF-7/").shape());
        let roles = BTreeMap::from([(Pos::Seg(2, 2), Role::Board)]);
        let origin = Url::parse("http://h/").unwrap();
        let shape = split("http://h/forum/forum/%E4%B9%A6%E8%AF%84-3/").shape();
        assert_eq!(pattern(&origin, &shape, &roles, &[]), r"^https?://h/forum/forum/[^/?#&]+\-(?P<board>[0-9]+)/$");
        // A word before the number is the site's own text, not a title.
        assert_eq!(split("http://h/board-3/").shape().key(), "/board-#/");
    }

    #[test]
    fn a_slug_after_the_thread_number_is_left_free() {
        let s = split("http://h/topic/12-guan-yu-shu-ping");
        assert_eq!(s.shape().key(), "/topic/#-*");
        assert_eq!(s.shape(), split("http://h/topic/7-ling-yi-ge-3-ren").shape());
        assert_eq!(s.get(&Pos::Seg(1, 0)), Some("12"));
        assert_eq!(split("http://h/dzx/77-2-1.html").shape().key(), "/dzx/#-#-#.html", "a file name");
    }

    #[test]
    fn views_of_one_page_are_one_kind_and_pages_of_another_script_are_not() {
        let key = |u: &str| split(u).sample_key();
        assert_eq!(key("http://h/popular?filter=week&term=exam"), key("http://h/popular?filter=month&term=%E8%80%83%E7%A0%94"));
        assert_eq!(key("http://h/popular?filter=week&term=exam"), "/popular?filter={w}&term={w}");
        assert_eq!(key("http://h/f.php?fid=2&orderby=lastpost"), key("http://h/f.php?fid=9&orderby=heats"));
        assert_eq!(key("http://h/search?q=a"), key("http://h/search?q=12"));
        // A dispatching value is the page's kind: threads are not lists.
        assert_ne!(key("http://h/forum.php?mod=viewthread&tid=7"), key("http://h/forum.php?mod=forumdisplay&tid=7"));
        // Boards named by words share a kind; the first segment does not blur.
        assert_eq!(key("http://h/bbs/board/tech/"), key("http://h/bbs/board/life/"));
        assert_ne!(key("http://h/news/"), key("http://h/about/"));
        // Views named in the path, `key:value`, as in the query.
        assert_eq!(key("http://h/q/scope:all/sort:votes-desc/page:2/"), key("http://h/q/scope:all/sort:age-asc/page:3/"));
        assert_eq!(key("http://h/q/scope:all/sort:votes-desc/page:2/"), "/q/scope:all/sort:{w}/page:#/");
        assert_ne!(key("http://h/q/scope:all/sort:votes-desc/"), key("http://h/q/scope:unanswered/sort:votes-desc/"), "scope is no view key");
    }

    #[test]
    fn boards_named_by_words_merge_and_scripts_do_not() {
        let shapes: Vec<Shape> = ["http://h/bbs/board/tech/", "http://h/bbs/board/life/", "http://h/bbs/faq.php", "http://h/bbs/rules.php"]
            .iter()
            .map(|u| split(u).shape())
            .collect();
        let m = merge_words(&shapes);
        assert_eq!(m[&shapes[0]].key(), "/bbs/board/{w}/");
        assert_eq!(m[&shapes[1]], m[&shapes[0]]);
        assert!(m[&shapes[0]].matches(&split("http://h/bbs/board/art/")));
        assert_eq!(m[&shapes[2]], shapes[2], "a file name is not a word");
        // Mailing lists' addresses name boards as words do.
        let lists: Vec<Shape> =
            ["http://h/list/books@lists.example.org/latest", "http://h/list/digital@lists.example.org/latest"].iter().map(|u| split(u).shape()).collect();
        let m = merge_words(&lists);
        assert_eq!(m[&lists[0]].key(), "/list/{w}/latest");
        assert!(!wordlike("a@b") && !wordlike("@lists.example.org") && !wordlike("faq.php"));
    }

    #[test]
    fn translated_route_words_are_literal_and_category_names_stay_slugs() {
        // Askbot in Chinese: /问题/<id>/<slug>/, /用户/<uid>/<slug>/, /回答/<id>/修订版本/.
        let (q, u, a) = ("%E9%97%AE%E9%A2%98", "%E7%94%A8%E6%88%B7", "%E5%9B%9E%E7%AD%94");
        let rev = "%E4%BF%AE%E8%AE%A2%E7%89%88%E6%9C%AC";
        let mut urls: Vec<String> = Vec::new();
        for (id, slug) in [(10, "dui-ke-fang"), (31, "song-de-nei"), (190, "qu-guo-ri-ben"), (174, "cong-04nian-dao-06nian")] {
            urls.push(format!("http://h/{q}/{id}/{slug}/"));
        }
        for (id, slug) in [(1, "zhang-wei"), (2, "wang-fang"), (3, "li-nuo"), (4, "liu-yang")] {
            urls.push(format!("http://h/{u}/{id}/{slug}/"));
        }
        for id in [5, 6, 7] {
            urls.push(format!("http://h/{a}/{id}/{rev}/"));
        }
        // WordPress: a Chinese category's later pages, a Chinese post slug.
        let cat = "%E8%AF%BB%E4%B9%A6";
        for n in 2..=5 {
            urls.push(format!("http://h/category/{cat}/page/{n}/"));
        }
        urls.push(format!("http://h/2025/02/{cat}/"));
        let splits: Vec<Split> = urls.iter().map(|u| split(u)).collect();
        let routes = route_words(&splits);
        assert_eq!(routes, BTreeSet::from([(0, q.to_owned()), (0, u.to_owned())]), "a word beside changing ids and names");
        assert_eq!(splits[0].shape_routed(&routes).key(), format!("/{q}/#/dui-ke-fang/"));
        // A title with digits in it is cut apart, but the route is the same.
        assert_eq!(splits[3].shape_routed(&routes).key(), format!("/{q}/#/cong-#nian-dao-#nian/"));
        assert_eq!(splits[4].shape_routed(&routes).key(), format!("/{u}/#/zhang-wei/"));
        // Beside an id alone (a revision page) a word is not told from a
        // name; a category's name beside page numbers stays a slug.
        assert_eq!(splits[8].shape_routed(&routes).key(), "/*/#/*/");
        assert_eq!(splits[11].shape_routed(&routes).key(), "/category/*/page/#/");
        // Fewer than three ids: no route.
        assert!(route_words(&splits[..2]).is_empty());
    }

    #[test]
    fn a_name_that_varies_in_a_path_is_a_name_there_whatever_the_query() {
        // Misago: three boards' lists, one board's second page read.
        let shapes: Vec<Shape> =
            ["http://h/c/shu-ping/3/", "http://h/c/shu-ma/4/", "http://h/c/tang-shi/5/", "http://h/c/shu-ping/3/?start=6", "http://h/c/guan-yu/?start=6"]
                .iter()
                .map(|u| split(u).shape())
                .collect();
        let m = merge_words(&shapes);
        assert_eq!(m[&shapes[0]].key(), "/c/{w}/#/");
        assert_eq!(m[&shapes[3]].key(), "/c/{w}/#/?start=#");
        assert_eq!(m[&shapes[4]], shapes[4], "a word never seen to vary, in another path, stays");
    }

    #[test]
    fn pager_steps_are_one_number_changed_added_or_dropped() {
        let at = |p: &str, l: &str| {
            let (a, b) = (split(p), split(l));
            pager_step(&a, &a.shape(), &b, &b.shape(), "2")
        };
        let s = at("http://h/t.php?t=5", "http://h/t.php?t=5&start=15").unwrap();
        assert!(s.added);
        assert_eq!((s.pos, s.value), (Pos::Query("start".into(), 0), Some(15)));
        let s = at("http://h/t.php?t=5&start=30", "http://h/t.php?t=5").unwrap();
        assert_eq!((s.base.key(), s.value), ("/t.php?t=#".to_owned(), None));
        let s = at("http://h/thread-7-1-3.html", "http://h/thread-7-2-3.html").unwrap();
        assert_eq!((s.pos, s.added, s.value), (Pos::Seg(0, 3), false, Some(2)));
        assert!(at("http://h/t.php?t=5", "http://h/t.php?t=6&start=15").is_none(), "another thread");
        let (a, b) = (split("http://h/t.php?t=5"), split("http://h/t.php?t=6"));
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "下一主题").is_none(), "a next-thread link is no pager");
        let (a, b) = (split("http://h/t.php?t=5&page=1"), split("http://h/t.php?t=5&page=1&authorid=3"));
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "只看该作者").is_none());
        // WordPress: a word and the number as two path segments more, an
        // arrow or "Older Posts" for text; back to the first page drops them.
        let (a, b) = (split("http://h/category/%e8%af%bb/"), split("http://h/category/%e8%af%bb/page/2/"));
        let s = pager_step(&a, &a.shape(), &b, &b.shape(), "Older Posts→").unwrap();
        assert_eq!((s.base.key(), s.pos, s.added, s.value), ("/category/*/".to_owned(), Pos::Seg(3, 0), true, Some(2)));
        let s = pager_step(&b, &b.shape(), &a, &a.shape(), "← Newer Posts").unwrap();
        assert_eq!((s.base.key(), s.value), ("/category/*/".to_owned(), None));
        let other = split("http://h/category/%e6%97%85/page/2/");
        assert!(pager_step(&a, &a.shape(), &other, &other.shape(), "→").is_none(), "another category's page");
        // Hexo's month archives link each other by year and month: a
        // date, not a page number.
        let (a, b) = (split("http://h/archives/2025/12/"), split("http://h/archives/2025/11/"));
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "2025年11月").is_none(), "a month is no page");
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "十一月 2025").is_none(), "nor is a year");
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "第 11 页").is_some());
        // Misago: the page number alone after the thread's slug and id, its
        // "下一页" an icon with rel="next".
        let (a, b) = (split("http://h/t/hao-shu/11/"), split("http://h/t/hao-shu/11/2/"));
        let s = pager_step(&a, &a.shape(), &b, &b.shape(), "next").unwrap();
        assert_eq!((s.pos.clone(), s.added, s.value), (Pos::Seg(3, 0), true, Some(2)));
        assert_eq!(moved_on(&Pos::Seg(2, 0), &s.pos, 1), Pos::Seg(2, 0), "the id stays where it is");
        let other = split("http://h/t/hao-shu/12/2/");
        assert!(pager_step(&a, &a.shape(), &other, &other.shape(), "next").is_none(), "another thread's page");
        assert!(pager_step(&a, &a.shape(), &b, &b.shape(), "下一页").is_some());
        for text in ["2", "", "3 天前"] {
            assert!(pager_step(&a, &a.shape(), &b, &b.shape(), text).is_none(), "{text:?}: NodeBB's post permalinks look so");
        }
        // Askbot: a question's answer pages name the order they page
        // through; the sort tabs and an author filter are no pages.
        let q = "http://h/wen-ti/277/shu-de/";
        let s = at(q, "http://h/wen-ti/277/shu-de/?sort=votes&page=2").unwrap();
        assert_eq!((s.pos, s.added, s.value), (Pos::Query("page".into(), 0), true, Some(2)));
        let s = at("http://h/wen-ti/277/shu-de/?sort=votes&page=2", q).unwrap();
        assert_eq!((s.base.key(), s.value), ("/wen-ti/#/shu-de/".to_owned(), None));
        assert!(at(q, "http://h/wen-ti/277/shu-de/?sort=oldest").is_none(), "a sort tab");
        assert!(at(q, "http://h/wen-ti/278/shu-de/?sort=votes&page=2").is_none(), "another question's page");
        assert!(at(q, "http://h/wen-ti/277/shu-de/?author=5&page=2").is_none(), "a number is no view");
    }

    #[test]
    fn patterns_are_anchored_and_name_their_groups() {
        let u = split("http://h:8080/dz/forum.php?mod=viewthread&tid=7&page=2");
        let shape = u.shape();
        let roles = BTreeMap::from([(Pos::Query("tid".into(), 0), Role::Thread), (Pos::Query("page".into(), 0), Role::Page)]);
        let origin = Url::parse("http://h:8080/").unwrap();
        assert_eq!(pattern(&origin, &shape, &roles, &[]), r"^https?://h:8080/dz/forum\.php\?mod=viewthread&tid={thread}&page={page}$");
        assert_eq!(
            pattern(&origin, &shape.without("page"), &roles, &["fpage".into()]),
            r"^https?://h:8080/dz/forum\.php\?mod=viewthread&tid={thread}(?P<context>(?:&(?:fpage)=[^&#]*)+)?$"
        );
    }

    /// Regression (the real-software bed's HyperKitty): a mailing list's
    /// address is a word where lists differ (`/list/books@lists.example.org/`),
    /// but the pattern wrote a free word as letters, digits, `_` and `-`,
    /// which no address matches: no list linked a thread.
    #[test]
    fn a_free_word_in_a_pattern_takes_an_address_too() {
        let mut shape = split("http://h/list/books@lists.example.org/thread/ABC7/").shape();
        shape.path[1] = vec![Kind::Word];
        let roles = BTreeMap::from([(Pos::Seg(3, 0), Role::Thread)]);
        let p = pattern(&Url::parse("http://h/").unwrap(), &shape, &roles, &[]).replace("{thread}", "(?P<thread>[0-9A-Za-z_-]+)");
        let re = regex::Regex::new(&p).unwrap();
        for u in ["http://h/list/books@lists.example.org/thread/ABC7/", "http://h/list/trips/thread/ABC8/"] {
            assert!(re.is_match(u), "{p} {u}");
        }
        assert!(!re.is_match("http://h/list/a/b/thread/ABC7/"), "{p}");
    }

    #[test]
    fn offsets_start_at_zero_and_page_numbers_at_one() {
        assert_eq!(first_page(&[15, 30, 45]), 0);
        assert_eq!(first_page(&[25]), 0);
        assert_eq!(first_page(&[2, 3, 4]), 1);
        assert_eq!(first_page(&[2]), 1);
        assert_eq!(first_page(&[1, 2]), 1);
        assert_eq!(first_page(&[0, 20]), 0);
    }
}
