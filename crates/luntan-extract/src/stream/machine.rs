//! The state of the tree-building replay (stack of open elements, active
//! formatting elements, insertion mode) beside the captures', and the entry
//! for each tokenizer token: the loop that hands it from mode to mode.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Tag, Token, TokenSinkResult};
use html5ever::{Attribute, LocalName};
use luntan_core::site::ThreadRules;

use super::capture::{Capture, Kind, PostRec};
use super::selector::{Plan, IMAGES, LINKS, POST_FIELD, POST_FIELDS, QUOTE, QUOTE_INTRO, THREAD_FIELD, THREAD_FIELDS};
use super::tags::doctype_quirks;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    Text,
    InTable,
    InTableText,
    InTableBody,
    InRow,
    InCell,
    AfterBody,
    AfterAfterBody,
}

/// An open element.
#[derive(Debug, Clone)]
pub(super) struct Open {
    pub(super) uid: u32,
    pub(super) name: LocalName,
    pub(super) kind: Kind,
    /// Which compounds it matches.
    pub(super) cmask: u64,
    /// Which rules it matches (only those asked about).
    pub(super) rmask: u32,
    /// The compounds of its previous element sibling (0: none), and of its
    /// last element child so far: for `+`.
    pub(super) prev: u64,
    pub(super) last_child: u64,
}

pub(super) enum Fmt {
    Marker,
    El { uid: u32, name: LocalName, attrs: Vec<Attribute> },
}

pub(super) enum Tk {
    Chars(StrTendril),
    Null,
    Comment,
    Tag(Tag),
    Eof,
}

pub(super) enum Step {
    Done,
    Again(Mode, Tk),
    Raw(RawKind),
}

pub(super) struct Machine<'a> {
    pub(super) plan: &'a Plan,
    pub(super) rules: &'a ThreadRules,
    pub(super) mode: Mode,
    pub(super) orig_mode: Mode,
    pub(super) stack: Vec<Open>,
    pub(super) afe: Vec<Fmt>,
    pub(super) head: Option<Open>,
    pub(super) form: Option<u32>,
    pub(super) quirks: bool,
    pub(super) ignore_lf: bool,
    pub(super) pending: Vec<StrTendril>,
    pub(super) next_uid: u32,
    /// The compounds of the document's last element child (for `+`).
    pub(super) doc_last_child: u64,
    pub(super) failed: Option<&'static str>,

    pub(super) caps: Vec<Capture>,
    pub(super) active: Vec<usize>,
    pub(super) title: Option<usize>,
    pub(super) title_seen: bool,
    pub(super) posts: Vec<PostRec>,
    pub(super) open_post: Option<usize>,
    /// Page-wide mode: bodies, authors, times, floors in document order.
    pub(super) bodies: Vec<usize>,
    pub(super) open_body: Option<u32>,
    pub(super) authors: Vec<usize>,
    pub(super) times: Vec<usize>,
    pub(super) floors: Vec<usize>,
    /// Page-wide mode: every match of each of version 2's post fields.
    pub(super) field_lists: [Vec<usize>; POST_FIELDS],
    /// Which post fields the site file gives (bits by field).
    pub(super) post_fields: u8,
    /// Bodies collect quotes, links or pictures (the site file asks).
    pub(super) body_parts: bool,
    /// Bodies watch for what introduces a quote (`quote-intro`): the text
    /// and comments after one are looked at.
    pub(super) intros: bool,
    /// The thread's fields: their captures, and which are still looked for.
    pub(super) facts: [Option<usize>; THREAD_FIELDS],
    pub(super) facts_left: u8,
    /// The page's `<base href>`, when the site file reads URLs.
    pub(super) reads_urls: bool,
    pub(super) base: Option<String>,
    pub(super) base_seen: bool,
}

impl<'a> Machine<'a> {
    pub(super) fn new(plan: &'a Plan, rules: &'a ThreadRules) -> Self {
        Machine {
            plan,
            rules,
            mode: Mode::Initial,
            orig_mode: Mode::InBody,
            stack: Vec::with_capacity(64),
            afe: Vec::new(),
            head: None,
            form: None,
            quirks: false,
            ignore_lf: false,
            pending: Vec::new(),
            next_uid: 0,
            doc_last_child: 0,
            failed: None,
            caps: Vec::new(),
            active: Vec::new(),
            title: None,
            title_seen: false,
            posts: Vec::new(),
            open_post: None,
            bodies: Vec::new(),
            open_body: None,
            authors: Vec::new(),
            times: Vec::new(),
            floors: Vec::new(),
            field_lists: Default::default(),
            post_fields: (0..POST_FIELDS).filter(|&j| plan.has(POST_FIELD + j as u8)).fold(0, |m, j| m | 1 << j),
            body_parts: plan.has(QUOTE) || plan.has(LINKS) || plan.has(IMAGES),
            intros: plan.has(QUOTE_INTRO),
            facts: [None; THREAD_FIELDS],
            facts_left: (0..THREAD_FIELDS).filter(|&j| plan.has(THREAD_FIELD + j as u8)).fold(0, |m, j| m | 1 << j),
            reads_urls: {
                let c = &rules.conversation;
                c.author_url.is_some() || c.links.is_some() || c.images.is_some()
            },
            base: None,
            base_seen: false,
        }
    }

    pub(super) fn fail(&mut self, why: &'static str) -> Step {
        if self.failed.is_none() {
            self.failed = Some(why);
        }
        Step::Done
    }

    /// One tokenizer token, as html5ever's `TreeBuilder::process_token`.
    pub(super) fn token(&mut self, token: Token) -> TokenSinkResult<()> {
        if self.failed.is_some() {
            return match token {
                Token::TagToken(_) => TokenSinkResult::Script(()),
                _ => TokenSinkResult::Continue,
            };
        }
        let ignore_lf = std::mem::take(&mut self.ignore_lf);
        let is_tag = matches!(token, Token::TagToken(_));
        let mut tk = match token {
            Token::ParseError(_) => return TokenSinkResult::Continue,
            Token::DoctypeToken(dt) => {
                if self.mode == Mode::Initial {
                    self.quirks = doctype_quirks(&dt);
                    self.mode = Mode::BeforeHtml;
                }
                return TokenSinkResult::Continue;
            }
            Token::TagToken(t) => Tk::Tag(t),
            Token::CommentToken(_) => {
                if self.intros {
                    self.comment();
                }
                Tk::Comment
            }
            Token::NullCharacterToken => Tk::Null,
            Token::EOFToken => Tk::Eof,
            Token::CharacterTokens(mut x) => {
                if ignore_lf && x.starts_with("\n") {
                    x.pop_front(1);
                }
                if x.is_empty() {
                    return TokenSinkResult::Continue;
                }
                Tk::Chars(x)
            }
        };
        loop {
            match self.step(self.mode, tk) {
                Step::Done => break,
                Step::Again(m, t) => {
                    self.mode = m;
                    tk = t;
                }
                Step::Raw(kind) => return TokenSinkResult::RawData(kind),
            }
            if self.failed.is_some() {
                break;
            }
        }
        match (self.failed.is_some(), is_tag) {
            (true, true) => TokenSinkResult::Script(()),
            _ => TokenSinkResult::Continue,
        }
    }
}
