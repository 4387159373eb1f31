//! The site file's selectors, read back from scraper's CSS of them into
//! compounds the stream can test one tag at a time, and compiled per rule
//! into a [`Plan`].

use html5ever::{local_name, Attribute, LocalName};
use luntan_core::site::ThreadRules;
use scraper::selector::ToCss;
use scraper::Selector;

/// Why the stream cannot test a site's selectors tag by tag, so the DOM
/// reads the site's pages: the rule and its CSS, and what in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("post=\"auto\" finds the posts in the page's DOM")]
    AutoPosts,
    #[error("nested-posts moves each reply out of the post that holds it, in the page's DOM")]
    NestedPosts,
    #[error("{rule}={css:?}: {source}")]
    Rule { rule: &'static str, css: String, source: CssError },
    #[error("{0} compound selectors (the stream tracks at most 64)")]
    TooMany(usize),
}

/// What in a selector's CSS the stream's reader does not take; `at` is
/// the CSS from where it stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CssError {
    #[error("an escape at the end")]
    EscapeAtEnd,
    #[error("an escaped newline")]
    EscapedNewline,
    #[error("an unterminated string")]
    UnterminatedString,
    #[error("a namespaced attribute")]
    NamespacedAttribute,
    #[error("a namespace prefix")]
    NamespacePrefix,
    #[error("expected a name at {at:?}")]
    ExpectedName { at: String },
    #[error("an attribute test it does not know at {at:?}")]
    AttributeTest { at: String },
    #[error("expected {expected:?} at {at:?}")]
    Expected { expected: char, at: String },
    #[error("the pseudo-class {at:?}")]
    PseudoClass { at: String },
    #[error("expected a selector at {at:?}")]
    ExpectedSelector { at: String },
    #[error("the sibling combinator {at:?}")]
    SiblingCombinator { at: String },
    #[error("unexpected {at:?}")]
    Unexpected { at: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Exists,
    Equal,
    Includes,
    DashMatch,
    Prefix,
    Substring,
    Suffix,
}

#[derive(Debug, Clone)]
pub(super) struct AttrTest {
    pub(super) name: LocalName,
    pub(super) op: Op,
    pub(super) value: String,
    /// ASCII case-insensitive value comparison.
    pub(super) ci: bool,
}

/// One compound selector: every test must hold.
#[derive(Debug, Clone, Default)]
pub(super) struct Compound {
    pub(super) tag: Option<LocalName>,
    pub(super) ids: Vec<String>,
    pub(super) classes: Vec<String>,
    pub(super) attrs: Vec<AttrTest>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Comb {
    Descendant,
    Child,
    /// The next-sibling combinator `+`.
    Next,
}

/// A complex selector: compounds left to right (indexes into the plan's
/// compounds), `combs[i]` between `parts[i]` and `parts[i + 1]`.
#[derive(Debug, Clone)]
pub(super) struct Complex {
    pub(super) parts: Vec<usize>,
    pub(super) combs: Vec<Comb>,
}

/// HTML attributes whose values selectors compare ASCII case-insensitively
/// (the `selectors` crate's list).
pub(super) fn case_insensitive_attribute(name: &str) -> bool {
    matches!(
        name,
        "accept"
            | "accept-charset"
            | "align"
            | "alink"
            | "axis"
            | "bgcolor"
            | "charset"
            | "checked"
            | "clear"
            | "codetype"
            | "color"
            | "compact"
            | "declare"
            | "defer"
            | "dir"
            | "direction"
            | "disabled"
            | "enctype"
            | "face"
            | "frame"
            | "hreflang"
            | "http-equiv"
            | "lang"
            | "language"
            | "link"
            | "media"
            | "method"
            | "multiple"
            | "nohref"
            | "noresize"
            | "noshade"
            | "nowrap"
            | "readonly"
            | "rel"
            | "rev"
            | "rules"
            | "scope"
            | "scrolling"
            | "selected"
            | "shape"
            | "target"
            | "text"
            | "type"
            | "valign"
            | "valuetype"
            | "vlink"
    )
}

/// Reads a selector list back from scraper's serialization of it.
pub(super) struct CssReader<'a> {
    pub(super) s: &'a [u8],
    pub(super) text: &'a str,
    pub(super) i: usize,
}

impl<'a> CssReader<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// The CSS from where the reader is, for an error.
    fn rest(&self) -> String {
        self.text[self.i..].to_owned()
    }

    fn skip_space(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0C)) {
            self.i += 1;
        }
        self.i > start
    }

    /// An escape after its `\`.
    fn escape(&mut self, out: &mut String) -> Result<(), CssError> {
        let start = self.i;
        while self.i < self.s.len() && self.i - start < 6 && self.s[self.i].is_ascii_hexdigit() {
            self.i += 1;
        }
        if self.i > start {
            let n = u32::from_str_radix(&self.text[start..self.i], 16).expect("six hex digits fit a u32");
            let c = match n {
                0 | 0xD800..=0xDFFF => '\u{FFFD}',
                n => char::from_u32(n).unwrap_or('\u{FFFD}'),
            };
            out.push(c);
            match self.peek() {
                Some(b'\r') => {
                    self.i += 1;
                    if self.peek() == Some(b'\n') {
                        self.i += 1;
                    }
                }
                Some(b' ' | b'\t' | b'\n' | 0x0C) => self.i += 1,
                _ => {}
            }
            return Ok(());
        }
        let c = self.text[self.i..].chars().next().ok_or(CssError::EscapeAtEnd)?;
        if c == '\n' || c == '\r' || c == '\x0C' {
            return Err(CssError::EscapedNewline);
        }
        out.push(c);
        self.i += c.len_utf8();
        Ok(())
    }

    fn ident(&mut self) -> Result<String, CssError> {
        let mut out = String::new();
        loop {
            match self.peek() {
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                Some(c) if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c >= 0x80 => {
                    let ch = self.text[self.i..].chars().next().expect("in the text");
                    out.push(ch);
                    self.i += ch.len_utf8();
                }
                _ => break,
            }
        }
        if out.is_empty() {
            return Err(CssError::ExpectedName { at: self.rest() });
        }
        Ok(out)
    }

    fn string(&mut self, quote: u8) -> Result<String, CssError> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(CssError::UnterminatedString),
                Some(q) if q == quote => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    match self.peek() {
                        Some(b'\n') => self.i += 1,
                        Some(b'\r') => {
                            self.i += 1;
                            if self.peek() == Some(b'\n') {
                                self.i += 1;
                            }
                        }
                        Some(0x0C) => self.i += 1,
                        None => return Err(CssError::EscapeAtEnd),
                        _ => self.escape(&mut out)?,
                    }
                }
                Some(_) => {
                    let ch = self.text[self.i..].chars().next().expect("in the text");
                    out.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
    }

    fn attr(&mut self) -> Result<AttrTest, CssError> {
        self.skip_space();
        let name = self.ident()?;
        if self.peek() == Some(b'|') {
            return Err(CssError::NamespacedAttribute);
        }
        self.skip_space();
        let op = match self.peek() {
            Some(b']') => {
                self.i += 1;
                return Ok(AttrTest { name: LocalName::from(name.to_ascii_lowercase()), op: Op::Exists, value: String::new(), ci: false });
            }
            Some(b'=') => {
                self.i += 1;
                Op::Equal
            }
            Some(c @ (b'~' | b'|' | b'^' | b'*' | b'$')) if self.s.get(self.i + 1) == Some(&b'=') => {
                self.i += 2;
                match c {
                    b'~' => Op::Includes,
                    b'|' => Op::DashMatch,
                    b'^' => Op::Prefix,
                    b'*' => Op::Substring,
                    _ => Op::Suffix,
                }
            }
            _ => return Err(CssError::AttributeTest { at: self.rest() }),
        };
        self.skip_space();
        let value = match self.peek() {
            Some(q @ (b'"' | b'\'')) => {
                self.i += 1;
                self.string(q)?
            }
            _ => self.ident()?,
        };
        self.skip_space();
        let lower = name.to_ascii_lowercase();
        let mut ci = case_insensitive_attribute(&lower);
        match self.peek() {
            Some(b']') => self.i += 1,
            Some(b'i' | b'I') => {
                self.i += 1;
                ci = true;
                self.skip_space();
                self.expect(b']')?;
            }
            Some(b's' | b'S') => {
                self.i += 1;
                ci = false;
                self.skip_space();
                self.expect(b']')?;
            }
            _ => return Err(CssError::AttributeTest { at: self.rest() }),
        }
        Ok(AttrTest { name: LocalName::from(lower), op, value, ci })
    }

    fn expect(&mut self, c: u8) -> Result<(), CssError> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(CssError::Expected { expected: c as char, at: self.rest() })
        }
    }

    /// One compound selector; `None` at a combinator, a comma or the end.
    fn compound(&mut self) -> Result<Option<Compound>, CssError> {
        let mut c = Compound::default();
        let mut any = false;
        match self.peek() {
            Some(b'*') => {
                self.i += 1;
                any = true;
                if self.peek() == Some(b'|') {
                    return Err(CssError::NamespacePrefix);
                }
            }
            Some(ch) if ch.is_ascii_alphabetic() || ch == b'_' || ch == b'\\' || ch >= 0x80 || ch == b'-' => {
                let name = self.ident()?;
                if self.peek() == Some(b'|') {
                    return Err(CssError::NamespacePrefix);
                }
                c.tag = Some(LocalName::from(name.to_ascii_lowercase()));
                any = true;
            }
            _ => {}
        }
        loop {
            match self.peek() {
                Some(b'#') => {
                    self.i += 1;
                    c.ids.push(self.ident()?);
                }
                Some(b'.') => {
                    self.i += 1;
                    c.classes.push(self.ident()?);
                }
                Some(b'[') => {
                    self.i += 1;
                    c.attrs.push(self.attr()?);
                }
                Some(b':') => return Err(CssError::PseudoClass { at: self.rest() }),
                _ => break,
            }
            any = true;
        }
        Ok(any.then_some(c))
    }
}

/// A selector list as complex selectors over `compounds`.
pub(super) fn read_list(css: &str, compounds: &mut Vec<Compound>) -> Result<Vec<Complex>, CssError> {
    let mut r = CssReader { s: css.as_bytes(), text: css, i: 0 };
    let mut out = Vec::new();
    loop {
        r.skip_space();
        let mut cx = Complex { parts: Vec::new(), combs: Vec::new() };
        loop {
            let Some(c) = r.compound()? else {
                return Err(CssError::ExpectedSelector { at: r.rest() });
            };
            compounds.push(c);
            cx.parts.push(compounds.len() - 1);
            let spaced = r.skip_space();
            match r.peek() {
                None | Some(b',') => break,
                Some(b'>') => {
                    r.i += 1;
                    r.skip_space();
                    cx.combs.push(Comb::Child);
                }
                // `a + b`: the element just before, as the stream knows it
                // (each open element keeps its previous sibling's
                // compounds); not two in a row, which would need the one
                // before that, nor `~`, which would need them all.
                Some(b'+') if cx.combs.last() != Some(&Comb::Next) => {
                    r.i += 1;
                    r.skip_space();
                    cx.combs.push(Comb::Next);
                }
                Some(b'+' | b'~') => return Err(CssError::SiblingCombinator { at: r.rest() }),
                Some(_) if spaced => cx.combs.push(Comb::Descendant),
                Some(_) => return Err(CssError::Unexpected { at: r.rest() }),
            }
        }
        out.push(cx);
        match r.peek() {
            None => return Ok(out),
            Some(b',') => r.i += 1,
            Some(_) => return Err(CssError::Unexpected { at: r.rest() }),
        }
    }
}

/// Rules, by bit.
pub(super) const TITLE: u8 = 0;
pub(super) const POST: u8 = 1;
pub(super) const BODY: u8 = 2;
pub(super) const AUTHOR: u8 = 3;
pub(super) const TIME: u8 = 4;
pub(super) const FLOOR: u8 = 5;
pub(super) const STRIP: u8 = 6;
/// A quote inside a body, what names it (left out of its words), and the
/// quoted post's id and author inside it.
pub(super) const QUOTE: u8 = 7;
pub(super) const QUOTE_HEAD: u8 = 8;
pub(super) const QUOTE_OF: u8 = 9;
pub(super) const QUOTE_AUTHOR: u8 = 10;
/// The links and pictures of a body's own text.
pub(super) const LINKS: u8 = 11;
pub(super) const IMAGES: u8 = 12;
/// Version 2's per-post fields, in `Conversation::post_fields`' order.
pub(super) const POST_FIELD: u8 = 13;
pub(super) const POST_FIELDS: usize = 7;
/// The thread's board name, replies and views: the page's first match.
pub(super) const THREAD_FIELD: u8 = 20;
pub(super) const THREAD_FIELDS: usize = 3;
/// What introduces a quote, just before it (`quote-intro`).
pub(super) const QUOTE_INTRO: u8 = 23;
pub(super) const RULES: usize = 24;
pub(super) const RULE_NAMES: [&str; RULES] = [
    "title",
    "post",
    "body",
    "author",
    "time",
    "floor",
    "strip",
    "quote",
    "quote-head",
    "quote-of",
    "quote-author",
    "links",
    "images",
    "post-id",
    "author-id",
    "author-url",
    "reply-to",
    "edited",
    "likes",
    "location",
    "board-name",
    "thread-replies",
    "thread-views",
    "quote-intro",
];

/// A site's thread rules, compiled for the stream.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(super) compounds: Vec<Compound>,
    pub(super) rules: [Option<Vec<Complex>>; RULES],
}

impl Plan {
    pub(crate) fn new(rules: &ThreadRules) -> Result<Plan, SelectorError> {
        if rules.auto_posts {
            return Err(SelectorError::AutoPosts);
        }
        if rules.nested_posts {
            return Err(SelectorError::NestedPosts);
        }
        let title = Selector::parse("title").expect("static selector");
        let q = rules.quote.as_ref();
        let c = &rules.conversation;
        let mut sels: [Option<&Selector>; RULES] = [None; RULES];
        sels[TITLE as usize] = Some(rules.title.as_deref().unwrap_or(&title));
        sels[POST as usize] = rules.post.as_ref();
        sels[BODY as usize] = rules.body.as_ref();
        sels[AUTHOR as usize] = rules.author.as_deref();
        sels[TIME as usize] = rules.time.as_deref();
        sels[FLOOR as usize] = rules.floor.as_deref();
        sels[STRIP as usize] = rules.strip.as_ref();
        sels[QUOTE as usize] = q.map(|q| &q.select);
        sels[QUOTE_HEAD as usize] = q.and_then(|q| q.head.as_ref());
        sels[QUOTE_OF as usize] = q.and_then(|q| q.of.as_deref());
        sels[QUOTE_AUTHOR as usize] = q.and_then(|q| q.author.as_deref());
        sels[QUOTE_INTRO as usize] = q.and_then(|q| q.intro.as_ref());
        sels[LINKS as usize] = c.links.as_deref();
        sels[IMAGES as usize] = c.images.as_deref();
        for (j, (_, f)) in c.post_fields().enumerate() {
            sels[POST_FIELD as usize + j] = f.map(|f| &f.pick.sel);
        }
        for (j, f) in [&c.board_name, &c.thread_replies, &c.thread_views].into_iter().enumerate() {
            sels[THREAD_FIELD as usize + j] = f.as_ref().map(|f| &f.pick.sel);
        }
        let mut compounds = Vec::new();
        let mut out: [Option<Vec<Complex>>; RULES] = Default::default();
        for (k, sel) in sels.iter().enumerate() {
            if let Some(sel) = sel {
                let css = sel.to_css_string();
                let list = read_list(&css, &mut compounds).map_err(|source| SelectorError::Rule { rule: RULE_NAMES[k], css: css.clone(), source })?;
                out[k] = Some(list);
            }
        }
        if compounds.len() > 64 {
            return Err(SelectorError::TooMany(compounds.len()));
        }
        Ok(Plan { compounds, rules: out })
    }

    /// Whether the site file gives rule `k`.
    pub(super) fn has(&self, k: u8) -> bool {
        self.rules[k as usize].is_some()
    }
}

pub(super) fn attr<'t>(attrs: &'t [Attribute], name: &LocalName) -> Option<&'t str> {
    attrs.iter().find(|a| a.name.ns == html5ever::ns!() && a.name.local == *name).map(|a| &*a.value)
}

impl Compound {
    pub(super) fn matches(&self, name: &LocalName, attrs: &[Attribute]) -> bool {
        if self.tag.as_ref().is_some_and(|t| t != name) {
            return false;
        }
        if !self.ids.is_empty() {
            let Some(id) = attr(attrs, &local_name!("id")) else { return false };
            if self.ids.iter().any(|want| want != id) {
                return false;
            }
        }
        if !self.classes.is_empty() {
            let Some(class) = attr(attrs, &local_name!("class")) else { return false };
            if !self.classes.iter().all(|want| class.split_ascii_whitespace().any(|c| c == want)) {
                return false;
            }
        }
        self.attrs.iter().all(|t| {
            let Some(v) = attr(attrs, &t.name) else { return false };
            let eq = |a: &[u8], b: &[u8]| if t.ci { a.eq_ignore_ascii_case(b) } else { a == b };
            let (e, s) = (v.as_bytes(), t.value.as_bytes());
            match t.op {
                Op::Exists => true,
                Op::Equal => eq(e, s),
                Op::Prefix => !s.is_empty() && e.len() >= s.len() && eq(&e[..s.len()], s),
                Op::Suffix => !s.is_empty() && e.len() >= s.len() && eq(&e[e.len() - s.len()..], s),
                Op::Substring => !s.is_empty() && if t.ci { e.windows(s.len()).any(|w| w.eq_ignore_ascii_case(s)) } else { v.contains(t.value.as_str()) },
                Op::Includes => !s.is_empty() && v.split([' ', '\t', '\n', '\r', '\x0C']).any(|part| eq(part.as_bytes(), s)),
                Op::DashMatch => eq(e, s) || (e.get(s.len()) == Some(&b'-') && eq(&e[..s.len()], s)),
            }
        })
    }
}
