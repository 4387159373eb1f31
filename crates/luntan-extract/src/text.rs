//! A post's text as a reader sees it: `<br>` and block elements end a
//! paragraph, whitespace folds to one space, skipped elements vanish; and
//! the times and floors such text shows. The DOM walk and the stream both
//! build paragraphs here, so they agree by construction.

use std::collections::HashSet;

use ego_tree::iter::Edge;
use ego_tree::NodeId;
use luntan_core::dates::{finer, Clock};
use luntan_core::site::Pick;
use scraper::{ElementRef, Node, Selector};

pub(crate) const SKIPPED: &[&str] = &["script", "style", "noscript", "template", "textarea", "select", "iframe", "object"];

pub(crate) const BLOCKS: &[&str] = &[
    "p",
    "div",
    "li",
    "tr",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "ul",
    "ol",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "dl",
    "dt",
    "dd",
    "hr",
    "center",
    "aside",
    "nav",
    "main",
    "address",
    "figure",
    "figcaption",
    "caption",
    "fieldset",
    "form",
    "details",
    "summary",
    "tbody",
    "thead",
    "tfoot",
];

/// Cells in one row read as one line, but not glued together.
pub(crate) const CELLS: &[&str] = &["td", "th"];

/// The time an element shows: a `datetime` on it or inside it (HTML's
/// machine-readable time, often in UTC while the text shows the forum's
/// clock), else an absolute time in its text (a `title` with the hour of
/// a day the text names alone is preferred), else a `title` on it or
/// inside it (Discuz shows "3 天前" with the date in a `title`; NodeBB an
/// empty element with `title="…Z"`), else a time its text gives relative
/// to the fetch: the relative reading only where nothing better exists.
pub fn time_of(el: ElementRef, clock: Clock) -> Option<String> {
    let attrs: Vec<[Option<&str>; 2]> = std::iter::once(el).chain(el.descendent_elements()).map(|e| [e.attr("datetime"), e.attr("title")]).collect();
    read_time(&line_text(el), &attrs, clock)
}

/// [`time_of`] over an element's text and the `[datetime, title]` of it
/// and its descendants in document order: what the DOM and the stream share.
pub(crate) fn read_time(text: &str, attrs: &[[Option<&str>; 2]], clock: Clock) -> Option<String> {
    let attr = |k: usize| attrs.iter().filter_map(|pair| pair[k]).find_map(|v| clock.attribute(v));
    if let Some(t) = attr(0) {
        return Some(t);
    }
    match clock.absolute(text) {
        Some(t) => Some(finer(t, attr(1))),
        None => attr(1).or_else(|| clock.relative(text)),
    }
}

/// A field's value: its element's text, or with `css@attr` that attribute's
/// value, white space folded. A missing attribute is an empty value.
pub fn value_of(el: ElementRef, pick: &Pick) -> String {
    pick.attribute_of(el).unwrap_or_else(|| line_text(el))
}

/// A time field: with `css@attr` read from that attribute alone (ISO with
/// a zone, Unix seconds or milliseconds, any shape [`Clock::attribute`]
/// reads), else as [`time_of`].
pub fn time_at(el: ElementRef, pick: &Pick, clock: Clock) -> Option<String> {
    match &pick.attr {
        Some(a) => el.value().attr(a).and_then(|v| clock.attribute(v)),
        None => time_of(el, clock),
    }
}

/// The floor a label shows: its first number, or the names forums give the
/// first floors.
pub fn floor_number(label: &str) -> Option<u32> {
    let digits: String = label.chars().skip_while(|c| !c.is_ascii_digit()).take_while(char::is_ascii_digit).collect();
    if let Ok(n) = digits.parse() {
        return Some(n);
    }
    [("楼主", 1), ("樓主", 1), ("沙发", 2), ("沙發", 2), ("板凳", 3), ("地板", 4)].iter().find(|(name, _)| label.contains(name)).map(|&(_, n)| n)
}

/// Builds paragraphs from a stream of text and breaks.
#[derive(Default)]
pub(crate) struct Paragraphs {
    done: Vec<String>,
    cur: String,
    space: bool,
}

impl Paragraphs {
    pub(crate) fn text(&mut self, s: &str) {
        for c in s.chars() {
            if c.is_whitespace() {
                self.space = !self.cur.is_empty();
            } else if xml_allowed(c) {
                if self.space {
                    self.cur.push(' ');
                    self.space = false;
                }
                self.cur.push(c);
            }
        }
    }

    pub(crate) fn soft_space(&mut self) {
        self.space = !self.cur.is_empty();
    }

    pub(crate) fn end(&mut self) {
        if !self.cur.is_empty() {
            self.done.push(std::mem::take(&mut self.cur));
        }
        self.space = false;
    }

    /// Where the paragraphs stand, to [`Paragraphs::restore`] later.
    pub(crate) fn mark(&self) -> ParaMark {
        ParaMark { done: self.done.len(), cur: self.cur.clone(), space: self.space }
    }

    /// Back to where they stood at `mark`: what came since is not taken.
    pub(crate) fn restore(&mut self, mark: ParaMark) {
        self.done.truncate(mark.done);
        self.cur = mark.cur;
        self.space = mark.space;
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        self.end();
        self.done
    }
}

/// What [`Paragraphs::mark`] keeps.
#[derive(Clone)]
pub(crate) struct ParaMark {
    done: usize,
    cur: String,
    space: bool,
}

/// What XML 1.0 can carry (whitespace is folded before this is asked), so
/// the written thread parses back to exactly what was extracted.
fn xml_allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// The paragraphs of a post body, without the `strip` elements.
pub fn paragraphs(body: ElementRef, strip: Option<&Selector>) -> Vec<String> {
    paragraphs_without(body, strip, &HashSet::new())
}

/// [`paragraphs`], also without the elements `also` names (the author,
/// time and floor `post="auto"` found, when they sit inside the body).
pub(crate) fn paragraphs_without(body: ElementRef, strip: Option<&Selector>, also: &HashSet<NodeId>) -> Vec<String> {
    let mut stripped: HashSet<NodeId> = strip.map(|s| body.select(s).map(|e| e.id()).collect()).unwrap_or_default();
    stripped.extend(also.iter().copied());
    let mut out = Paragraphs::default();
    let mut skipping: Option<NodeId> = None;
    let mut pre = 0usize;
    for edge in body.traverse() {
        match edge {
            Edge::Open(node) => {
                if skipping.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Text(t) if pre > 0 => {
                        // Inside <pre> a newline is the author's line break.
                        let mut lines = t.split('\n');
                        out.text(lines.next().unwrap_or(""));
                        for line in lines {
                            out.end();
                            out.text(line);
                        }
                    }
                    Node::Text(t) => out.text(t),
                    Node::Element(e) => {
                        let name = e.name();
                        if node.id() != body.id() && (SKIPPED.contains(&name) || stripped.contains(&node.id())) {
                            skipping = Some(node.id());
                        } else if name == "br" || BLOCKS.contains(&name) {
                            out.end();
                        } else if CELLS.contains(&name) {
                            out.soft_space();
                        }
                        if name == "pre" {
                            pre += 1;
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(id) = skipping {
                    if id == node.id() {
                        skipping = None;
                    }
                    continue;
                }
                if let Node::Element(e) = node.value() {
                    let name = e.name();
                    if BLOCKS.contains(&name) {
                        out.end();
                    } else if CELLS.contains(&name) {
                        out.soft_space();
                    }
                    if name == "pre" {
                        pre = pre.saturating_sub(1);
                    }
                }
            }
        }
    }
    out.finish()
}

/// An element's text on one line (titles, authors, times, floors).
pub fn line_text(el: ElementRef) -> String {
    paragraphs(el, None).join(" ")
}

/// Text from elsewhere (the list page's title) folded the same way.
pub(crate) fn fold_line(s: &str) -> String {
    let mut p = Paragraphs::default();
    p.text(s);
    p.finish().join(" ")
}
