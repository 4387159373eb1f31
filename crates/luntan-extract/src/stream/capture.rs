//! What the stream takes from the page: which rule an element about to be
//! inserted matches, the captures (text of a title, body, author, time,
//! floor, version 2's fields; a body's quotes and the text of its links)
//! it starts and feeds, and the posts they make at the end.

use html5ever::{local_name, Attribute, LocalName};
use luntan_core::dates::Clock;
use luntan_core::doc::{Image, Link, Quote};
use luntan_core::site::{Field, Pick, QuoteRules};
use luntan_core::Post;

use super::machine::{Machine, Open};
use super::selector::{
    attr, Comb, Complex, AUTHOR, BODY, FLOOR, IMAGES, LINKS, POST, POST_FIELD, POST_FIELDS, QUOTE, QUOTE_AUTHOR, QUOTE_HEAD, QUOTE_INTRO, QUOTE_OF, STRIP,
    THREAD_FIELD, TIME, TITLE,
};
use crate::page::{PageExtract, ThreadFacts};
use crate::text::{floor_number, read_time, ParaMark, Paragraphs, BLOCKS, CELLS, SKIPPED};

/// How an element acts on a paragraph builder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Skipped,
    Break,
    Block,
    Cell,
    Pre,
    Other,
}

pub(super) fn kind_of(name: &LocalName) -> Kind {
    let n: &str = name;
    if SKIPPED.contains(&n) {
        Kind::Skipped
    } else if n == "br" {
        Kind::Break
    } else if n == "pre" {
        // <pre> is a block too: see `open`/`close`.
        Kind::Pre
    } else if BLOCKS.contains(&n) {
        Kind::Block
    } else if CELLS.contains(&n) {
        Kind::Cell
    } else {
        Kind::Other
    }
}

/// One element's text being taken, as `parse::paragraphs_without` walks it.
pub(super) struct Capture {
    pub(super) root: u32,
    pub(super) para: Paragraphs,
    pub(super) skipping: Option<u32>,
    pub(super) pre: usize,
    /// The rules (bits) whose elements the text leaves out: a body's
    /// `strip` and its quotes, a quote's `strip` and its head.
    pub(super) skip: u32,
    /// `datetime` and `title` of the element and its descendants (a time).
    pub(super) attrs: Option<Vec<[Option<String>; 2]>>,
    pub(super) result: Option<Vec<String>>,
    /// A field read from an attribute (`css@attr`): its value, folded
    /// (empty when the element has no such attribute); no text is taken.
    pub(super) value: Option<String>,
    /// A body's quotes, links and pictures.
    pub(super) body: Option<Box<BodyParts>>,
}

/// What a body holds besides its own words, found as it is read.
#[derive(Default)]
pub(super) struct BodyParts {
    /// Its outermost quotes, in page order.
    pub(super) quotes: Vec<QuoteRec>,
    /// The quote being read (its root): quotes inside it are its words.
    pub(super) open_quote: Option<u32>,
    /// Links of its own text: the URL as written, the capture of the text.
    pub(super) links: Vec<(String, usize)>,
    pub(super) images: Vec<Image>,
    /// The element that may introduce the next quote (`quote-intro`), from
    /// its start while only white space follows it.
    pub(super) intro: Option<IntroRec>,
}

/// One quote's captures: its words, and what names it (in its intro where
/// it has one, else inside it).
pub(super) struct QuoteRec {
    pub(super) text: usize,
    pub(super) named: Named,
    /// It has an intro, which alone names it.
    pub(super) introduced: bool,
}

/// The captures of the first `quote-of` and `quote-author` match where a
/// quote is named.
#[derive(Default, Clone, Copy)]
pub(super) struct Named {
    of: Option<usize>,
    author: Option<usize>,
}

/// Where an element inside a body names a quote: in the intro being read,
/// or in the quote being read (which has no intro).
#[derive(Clone, Copy)]
enum NamedIn {
    Intro,
    Quote,
}

/// An element of a body that `quote-intro` matches. The stream has read
/// it into the body's words by the time it knows a quote follows, so the
/// body's words as they stood before it are kept to go back to.
pub(super) struct IntroRec {
    uid: u32,
    closed: bool,
    /// The body's paragraphs, links and pictures before it.
    para: ParaMark,
    links: usize,
    images: usize,
    /// White space came after it.
    space: bool,
    named: Named,
}

impl Capture {
    fn new(root: u32, skip: u32) -> Capture {
        Capture { root, para: Paragraphs::default(), skipping: None, pre: 0, skip, attrs: None, result: None, value: None, body: None }
    }

    /// `skipped`: the element matches a rule of `self.skip`.
    pub(super) fn open(&mut self, uid: u32, kind: Kind, skipped: bool) {
        if self.skipping.is_some() {
            return;
        }
        let root = uid == self.root;
        if !root && (kind == Kind::Skipped || skipped) {
            self.skipping = Some(uid);
        } else if matches!(kind, Kind::Break | Kind::Block | Kind::Pre) {
            self.para.end();
        } else if kind == Kind::Cell {
            self.para.soft_space();
        }
        if kind == Kind::Pre {
            self.pre += 1;
        }
    }

    pub(super) fn text(&mut self, t: &str) {
        if self.skipping.is_some() {
            return;
        }
        if self.pre > 0 {
            let mut lines = t.split('\n');
            self.para.text(lines.next().unwrap_or(""));
            for line in lines {
                self.para.end();
                self.para.text(line);
            }
        } else {
            self.para.text(t);
        }
    }

    pub(super) fn close(&mut self, uid: u32, kind: Kind) {
        if let Some(id) = self.skipping {
            if id == uid {
                self.skipping = None;
            }
            return;
        }
        match kind {
            Kind::Block | Kind::Pre => self.para.end(),
            Kind::Cell => self.para.soft_space(),
            _ => {}
        }
        if kind == Kind::Pre {
            self.pre = self.pre.saturating_sub(1);
        }
    }
}

#[derive(Default)]
pub(super) struct PostRec {
    pub(super) uid: u32,
    /// By the `body` selector: the post itself or its first match inside.
    pub(super) body_sel: Option<usize>,
    /// By `body-id`.
    pub(super) body_id: Option<usize>,
    pub(super) author: Option<usize>,
    pub(super) time: Option<usize>,
    pub(super) floor: Option<usize>,
    /// Version 2's fields: the post element itself or its first match inside.
    pub(super) fields: [Option<usize>; POST_FIELDS],
}

const fn bit(k: u8) -> u32 {
    1 << k
}

/// A body's text leaves out what `strip` names and its quotes; a quote's,
/// what `strip` names and its head.
const BODY_SKIPS: u32 = bit(STRIP) | bit(QUOTE);
const QUOTE_SKIPS: u32 = bit(STRIP) | bit(QUOTE_HEAD);

/// The value of attribute `name` (no namespace), as written.
fn attr_named<'t>(attrs: &'t [Attribute], name: &str) -> Option<&'t str> {
    attrs.iter().find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == name).map(|a| &*a.value)
}

fn folded(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Machine<'_> {
    /// Whether compounds `..i` of `cx` match left of the element at stack
    /// position `pos` (which matched compound `i`), pruned as the
    /// `selectors` crate prunes (so deep pages cost no more than linear
    /// scans): `Err(true)` when no element further up can help either.
    pub(super) fn match_left(&self, cx: &Complex, i: usize, pos: usize) -> Result<(), bool> {
        if i == 0 {
            return Ok(());
        }
        let want = 1u64 << cx.parts[i - 1];
        match cx.combs[i - 1] {
            Comb::Child => {
                if pos == 0 {
                    return Err(true);
                }
                if self.stack[pos - 1].cmask & want == 0 {
                    return Err(false);
                }
                self.match_left(cx, i - 1, pos - 1)
            }
            // The previous sibling stands where the element stands: the
            // same ancestors (`read_list` allows no `+` to its left).
            Comb::Next => {
                let prev = if pos == self.stack.len() { self.stack.last().map_or(self.doc_last_child, |e| e.last_child) } else { self.stack[pos].prev };
                if prev & want == 0 {
                    return Err(false);
                }
                self.match_left(cx, i - 1, pos)
            }
            Comb::Descendant => {
                for p in (0..pos).rev() {
                    if self.stack[p].cmask & want != 0 {
                        match self.match_left(cx, i - 1, p) {
                            Err(false) => continue,
                            done => return done,
                        }
                    }
                }
                Err(true)
            }
        }
    }

    /// Whether an element about to be inserted (its parent the current
    /// node), whose compounds are `cmask`, matches rule `k`.
    pub(super) fn rule(&self, k: u8, cmask: u64) -> bool {
        let Some(list) = &self.plan.rules[k as usize] else { return false };
        list.iter().any(|cx| cmask & (1u64 << cx.parts[cx.parts.len() - 1]) != 0 && self.match_left(cx, cx.parts.len() - 1, self.stack.len()).is_ok())
    }

    /// Starts a capture rooted at the element being inserted: its text
    /// (leaving out the elements of the rules in `skip`), or with `from`
    /// the value of that attribute. `body`: it collects quotes, links and
    /// pictures as well.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(&mut self, uid: u32, kind: Kind, skip: u32, time: bool, attrs: &[Attribute], from: Option<&str>, body: bool) -> usize {
        if let Some(name) = from {
            let mut c = Capture::new(uid, skip);
            c.value = Some(attr_named(attrs, name).map(folded).unwrap_or_default());
            self.caps.push(c);
            return self.caps.len() - 1;
        }
        let mut c = Capture::new(uid, skip);
        if time {
            c.attrs = Some(vec![[attr(attrs, &local_name!("datetime")).map(str::to_owned), attr(attrs, &local_name!("title")).map(str::to_owned)]]);
        }
        if body && self.body_parts {
            c.body = Some(Box::default());
        }
        c.open(uid, kind, false);
        self.caps.push(c);
        self.active.push(self.caps.len() - 1);
        self.caps.len() - 1
    }

    /// What names the quote body `cap` is reading (see [`NamedIn`]).
    fn named(&mut self, cap: usize, at: NamedIn) -> &mut Named {
        let parts = self.caps[cap].body.as_mut().expect("a body");
        match at {
            NamedIn::Intro => &mut parts.intro.as_mut().expect("an open intro").named,
            NamedIn::Quote => &mut parts.quotes.last_mut().expect("an open quote").named,
        }
    }

    pub(super) fn stop(&mut self, cap: usize) {
        self.active.retain(|&c| c != cap);
    }

    /// Inserts an element at the current node (pushing it unless `void`),
    /// matching it and starting what it starts.
    pub(super) fn insert(&mut self, name: LocalName, attrs: &[Attribute], void: bool) -> u32 {
        let uid = self.next_uid;
        self.next_uid += 1;
        let mut cmask = 0u64;
        for (i, c) in self.plan.compounds.iter().enumerate() {
            if c.matches(&name, attrs) {
                cmask |= 1 << i;
            }
        }
        // Only asked for where a capture will see the element.
        let mut kind_slot: Option<Kind> = None;
        let mut kind = |name: &LocalName| *kind_slot.get_or_insert_with(|| kind_of(name));
        let rules = self.rules;
        let (mut rmask, mut asked) = (0u32, 0u32);
        let mut ask = |m: &Self, k: u8| {
            if asked & bit(k) == 0 {
                asked |= bit(k);
                if m.rule(k, cmask) {
                    rmask |= bit(k);
                }
            }
            rmask & bit(k) != 0
        };
        // `quote-intro`, before the bodies see the element: the element
        // after an intro takes the intro's words back out of the body where
        // it is a quote, and ends it where it is not; an element of a body
        // (outside its quotes) that may introduce one is remembered.
        let mut introduced: Vec<(usize, IntroRec)> = Vec::new();
        if self.intros {
            for i in 0..self.active.len() {
                let c = self.active[i];
                let Some(parts) = &self.caps[c].body else { continue };
                if self.caps[c].root == uid || parts.open_quote.is_some() || parts.intro.as_ref().is_some_and(|r| !r.closed) {
                    continue;
                }
                if let Some(intro) = self.caps[c].body.as_mut().and_then(|p| p.intro.take()) {
                    if ask(self, QUOTE) {
                        let cap = &mut self.caps[c];
                        cap.para.restore(intro.para.clone());
                        if intro.space {
                            cap.para.text(" ");
                        }
                        let parts = cap.body.as_mut().expect("a body");
                        parts.links.truncate(intro.links);
                        parts.images.truncate(intro.images);
                        introduced.push((c, intro));
                        continue;
                    }
                    // What strip takes between an intro and its quote is
                    // passed over by the DOM's reading (`quote_intro`), not
                    // by the stream's.
                    if ask(self, STRIP) {
                        self.fail("a stripped element after what may introduce a quote");
                    }
                }
                if ask(self, QUOTE_INTRO) {
                    let cap = &mut self.caps[c];
                    let para = cap.para.mark();
                    let parts = cap.body.as_mut().expect("a body");
                    let (links, images) = (parts.links.len(), parts.images.len());
                    parts.intro = Some(IntroRec { uid, closed: false, para, links, images, space: false, named: Named::default() });
                }
            }
        }
        // Captures already open see the element open.
        let skips = self.active.iter().fold(0, |m, &c| m | self.caps[c].skip);
        let mut skipped = 0u32;
        for k in [STRIP, QUOTE, QUOTE_HEAD] {
            if skips & bit(k) != 0 && ask(self, k) {
                skipped |= bit(k);
            }
        }
        let k = if self.active.is_empty() { Kind::Other } else { kind(&name) };
        for &c in &self.active {
            let cap = &mut self.caps[c];
            if let Some(list) = &mut cap.attrs {
                list.push([attr(attrs, &local_name!("datetime")).map(str::to_owned), attr(attrs, &local_name!("title")).map(str::to_owned)]);
            }
            cap.open(uid, k, skipped & cap.skip != 0);
        }
        // Inside a body: its quotes (and what they name), links, pictures.
        if self.body_parts {
            let open = self.active.len();
            for i in 0..open {
                let c = self.active[i];
                let Some(parts) = &self.caps[c].body else { continue };
                if self.caps[c].root == uid {
                    continue;
                }
                let own = self.caps[c].skipping.is_none();
                // The intro (itself first) or the quote being read: the first
                // `quote-of` and `quote-author` there.
                let naming = match parts.open_quote {
                    None if parts.intro.as_ref().is_some_and(|r| !r.closed) => {
                        if ask(self, QUOTE) {
                            // Which quote it would introduce is not the stream's to tell.
                            self.fail("a quote inside what may introduce a quote");
                        }
                        Some(NamedIn::Intro)
                    }
                    None => {
                        if ask(self, QUOTE) {
                            let text = self.start(uid, kind(&name), QUOTE_SKIPS, false, attrs, None, false);
                            let intro = introduced.iter().position(|(ci, _)| *ci == c).map(|k| introduced.swap_remove(k).1);
                            let parts = self.caps[c].body.as_mut().expect("a body");
                            let (named, introduced) = intro.map_or((Named::default(), false), |r| (r.named, true));
                            parts.quotes.push(QuoteRec { text, named, introduced });
                            parts.open_quote = Some(uid);
                        }
                        None
                    }
                    Some(_) => (!parts.quotes.last().expect("an open quote").introduced).then_some(NamedIn::Quote),
                };
                if let Some(at) = naming {
                    let quote = rules.quote.as_ref().expect("quote rules");
                    if self.named(c, at).of.is_none() && ask(self, QUOTE_OF) {
                        let cap = self.start(uid, kind(&name), 0, false, attrs, from(&quote.of), false);
                        self.named(c, at).of = Some(cap);
                    }
                    if self.named(c, at).author.is_none() && ask(self, QUOTE_AUTHOR) {
                        let cap = self.start(uid, kind(&name), 0, false, attrs, from(&quote.author), false);
                        self.named(c, at).author = Some(cap);
                    }
                }
                if own {
                    let conv = &rules.conversation;
                    if ask(self, LINKS) {
                        let href = attr_named(attrs, from(&conv.links).unwrap_or("href")).map(str::trim).filter(|h| !h.is_empty());
                        if let Some(href) = href {
                            let text = self.start(uid, kind(&name), 0, false, attrs, None, false);
                            self.caps[c].body.as_mut().expect("a body").links.push((href.to_owned(), text));
                        }
                    }
                    if ask(self, IMAGES) {
                        let src = attr_named(attrs, from(&conv.images).unwrap_or("src")).map(str::trim).filter(|s| !s.is_empty());
                        if let Some(src) = src {
                            let alt = attr_named(attrs, "alt").map(folded).unwrap_or_default();
                            self.caps[c].body.as_mut().expect("a body").images.push(Image { src: src.to_owned(), alt });
                        }
                    }
                }
            }
        }
        if !self.title_seen && ask(self, TITLE) {
            self.title_seen = true;
            self.title = Some(self.start(uid, kind(&name), 0, false, attrs, from(&rules.title), false));
        }
        // The thread's fields: the page's first match of each.
        if self.facts_left != 0 {
            let fields = [&rules.conversation.board_name, &rules.conversation.thread_replies, &rules.conversation.thread_views];
            for (j, f) in fields.into_iter().enumerate() {
                if self.facts_left & (1 << j) != 0 && ask(self, THREAD_FIELD + j as u8) {
                    self.facts_left &= !(1 << j);
                    let pick = f.as_ref().map(|f| &f.pick).expect("a thread field given");
                    self.facts[j] = Some(self.start(uid, kind(&name), 0, false, attrs, pick.attr.as_deref(), false));
                }
            }
        }
        if self.reads_urls && !self.base_seen && name == local_name!("base") {
            if let Some(href) = attr(attrs, &local_name!("href")) {
                self.base_seen = true;
                self.base = Some(href.trim().to_owned());
            }
        }
        let id_matches = |m: &Self| m.rules.body_id.as_ref().is_some_and(|re| attr(attrs, &local_name!("id")).is_some_and(|id| re.is_match(id)));
        let field_pick = |j: usize| rules.conversation.post_fields().nth(j).and_then(|(_, f)| f).and_then(|f| f.pick.attr.as_deref());
        if rules.post.is_some() {
            match self.open_post {
                Some(p) => {
                    let post = &self.posts[p];
                    let (need_body, need_id) = (post.body_sel.is_none(), post.body_sel.is_none() && post.body_id.is_none());
                    let (need_a, need_t, need_f) = (post.author.is_none(), post.time.is_none(), post.floor.is_none());
                    let fields = post.fields;
                    if need_body && ask(self, BODY) {
                        let cap = self.start(uid, kind(&name), BODY_SKIPS, false, attrs, None, true);
                        if let Some(old) = self.posts[p].body_id.take() {
                            self.stop(old);
                        }
                        self.posts[p].body_sel = Some(cap);
                    } else if need_id && id_matches(self) {
                        self.posts[p].body_id = Some(self.start(uid, kind(&name), BODY_SKIPS, false, attrs, None, true));
                    }
                    if need_a && ask(self, AUTHOR) {
                        self.posts[p].author = Some(self.start(uid, kind(&name), 0, false, attrs, from(&rules.author), false));
                    }
                    if need_t && ask(self, TIME) {
                        self.posts[p].time = Some(self.start(uid, kind(&name), 0, true, attrs, from(&rules.time), false));
                    }
                    if need_f && ask(self, FLOOR) {
                        self.posts[p].floor = Some(self.start(uid, kind(&name), 0, false, attrs, from(&rules.floor), false));
                    }
                    for (j, found) in fields.iter().enumerate() {
                        if found.is_none() && self.post_fields & (1 << j) != 0 && ask(self, POST_FIELD + j as u8) {
                            self.posts[p].fields[j] = Some(self.start(uid, kind(&name), 0, false, attrs, field_pick(j), false));
                        }
                    }
                }
                None => {
                    if ask(self, POST) {
                        let mut rec = PostRec { uid, ..PostRec::default() };
                        if ask(self, BODY) {
                            rec.body_sel = Some(self.start(uid, kind(&name), BODY_SKIPS, false, attrs, None, true));
                        } else if id_matches(self) {
                            rec.body_id = Some(self.start(uid, kind(&name), BODY_SKIPS, false, attrs, None, true));
                        }
                        // A post's own element is where its fields and its floor are looked for first.
                        if rules.floor.is_some() && ask(self, FLOOR) {
                            rec.floor = Some(self.start(uid, kind(&name), 0, false, attrs, from(&rules.floor), false));
                        }
                        for j in 0..POST_FIELDS {
                            if self.post_fields & (1 << j) != 0 && ask(self, POST_FIELD + j as u8) {
                                rec.fields[j] = Some(self.start(uid, kind(&name), 0, false, attrs, field_pick(j), false));
                            }
                        }
                        self.posts.push(rec);
                        self.open_post = Some(self.posts.len() - 1);
                    }
                }
            }
        } else {
            if self.open_body.is_none() {
                let is_body = match (&rules.body, &rules.body_id) {
                    (Some(_), _) => ask(self, BODY),
                    (None, Some(_)) => id_matches(self),
                    (None, None) => false,
                };
                if is_body {
                    let cap = self.start(uid, kind(&name), BODY_SKIPS, false, attrs, None, true);
                    self.bodies.push(cap);
                    self.open_body = Some(uid);
                }
            }
            if rules.author.is_some() && ask(self, AUTHOR) {
                let cap = self.start(uid, kind(&name), 0, false, attrs, from(&rules.author), false);
                self.authors.push(cap);
            }
            if rules.time.is_some() && ask(self, TIME) {
                let cap = self.start(uid, kind(&name), 0, true, attrs, from(&rules.time), false);
                self.times.push(cap);
            }
            if rules.floor.is_some() && ask(self, FLOOR) {
                let cap = self.start(uid, kind(&name), 0, false, attrs, from(&rules.floor), false);
                self.floors.push(cap);
            }
            // Every match of each field, paired with the bodies by order.
            for j in 0..POST_FIELDS {
                if self.post_fields & (1 << j) != 0 && ask(self, POST_FIELD + j as u8) {
                    let cap = self.start(uid, kind(&name), 0, false, attrs, field_pick(j), false);
                    self.field_lists[j].push(cap);
                }
            }
        }
        let kind = if self.active.is_empty() { Kind::Other } else { kind(&name) };
        let prev = match self.stack.last_mut() {
            Some(parent) => std::mem::replace(&mut parent.last_child, cmask),
            None => std::mem::replace(&mut self.doc_last_child, cmask),
        };
        let open = Open { uid, name, kind, cmask, rmask, prev, last_child: 0 };
        self.stack.push(open);
        if void {
            self.pop();
        }
        uid
    }

    pub(super) fn phantom(&mut self, name: LocalName) -> u32 {
        self.insert(name, &[], false)
    }

    /// The element closes: the captures see it, and end with their root.
    pub(super) fn closed(&mut self, e: &Open) {
        if let Some(p) = self.open_post {
            if self.posts[p].uid == e.uid {
                self.open_post = None;
            }
        }
        if self.open_body == Some(e.uid) {
            self.open_body = None;
        }
        // Elements may still go into the <head> after it closed.
        if let Some(head) = &mut self.head {
            if head.uid == e.uid {
                head.last_child = e.last_child;
            }
        }
        let mut k = 0;
        while k < self.active.len() {
            let c = self.active[k];
            let cap = &mut self.caps[c];
            cap.close(e.uid, e.kind);
            if let Some(parts) = &mut cap.body {
                if parts.open_quote == Some(e.uid) {
                    parts.open_quote = None;
                }
                // An intro closes; its parent closing ends it (no quote follows it).
                match &mut parts.intro {
                    Some(r) if !r.closed && r.uid == e.uid => r.closed = true,
                    Some(r) if r.closed => parts.intro = None,
                    _ => {}
                }
            }
            if cap.root == e.uid {
                let para = std::mem::take(&mut cap.para);
                cap.result = Some(para.finish());
                self.active.remove(k);
            } else {
                k += 1;
            }
        }
    }

    pub(super) fn pop(&mut self) {
        if let Some(e) = self.stack.pop() {
            self.closed(&e);
        }
    }

    pub(super) fn text(&mut self, t: &str) {
        for &c in &self.active {
            let cap = &mut self.caps[c];
            if self.intros {
                if let Some(r) = cap.body.as_mut().and_then(|p| p.intro.as_mut()).filter(|r| r.closed) {
                    match t.trim().is_empty() {
                        true => r.space = true,
                        // Words between an intro and a quote: it introduces none.
                        false => cap.body.as_mut().expect("a body").intro = None,
                    }
                }
            }
            cap.text(t);
        }
    }

    /// A comment stands between what came before and what comes next.
    pub(super) fn comment(&mut self) {
        for &c in &self.active {
            if let Some(parts) = self.caps[c].body.as_mut() {
                if parts.intro.as_ref().is_some_and(|r| r.closed) {
                    parts.intro = None;
                }
            }
        }
    }
}

impl Machine<'_> {
    pub(super) fn lines(&mut self, cap: Option<usize>) -> Option<String> {
        let c = &mut self.caps[cap?];
        Some(c.value.take().unwrap_or_else(|| c.result.take().unwrap_or_default().join(" ")))
    }

    pub(super) fn time(&mut self, cap: Option<usize>, clock: Clock) -> Option<String> {
        let c = &self.caps[cap?];
        if let Some(value) = &c.value {
            return clock.attribute(value);
        }
        let text = c.result.clone().unwrap_or_default().join(" ");
        let attrs: Vec<[Option<&str>; 2]> = c.attrs.iter().flatten().map(|[d, t]| [d.as_deref(), t.as_deref()]).collect();
        read_time(&text, &attrs, clock)
    }

    /// A field's value as its element shows it, cut by its pattern.
    fn field(&mut self, cap: Option<usize>, f: Option<&Field>) -> Option<String> {
        let f = f?;
        f.capture(&self.lines(cap)?)
    }

    fn count(&mut self, cap: Option<usize>, f: Option<&Field>) -> Option<u64> {
        let f = f?;
        f.count(&self.lines(cap)?)
    }

    /// A body's words, quotes, links and pictures, as `parse::body_text`
    /// gives them.
    fn body(&mut self, cap: usize) -> (Vec<String>, Vec<Quote>, Vec<Link>, Vec<Image>) {
        let paragraphs = self.caps[cap].result.take().unwrap_or_default();
        let Some(parts) = self.caps[cap].body.take() else { return (paragraphs, Vec::new(), Vec::new(), Vec::new()) };
        let q = self.rules.quote.as_ref();
        let quotes = parts
            .quotes
            .into_iter()
            .filter_map(|rec| {
                let q = q?;
                let of = self.lines(rec.named.of).and_then(|v| QuoteRules::capture(q.of_pattern.as_ref(), &v));
                let author = self.lines(rec.named.author).and_then(|v| QuoteRules::capture(q.author_pattern.as_ref(), &v));
                let paragraphs = self.caps[rec.text].result.take().unwrap_or_default();
                (!paragraphs.is_empty() || of.is_some()).then_some(Quote { of, author, paragraphs })
            })
            .collect();
        let links = parts.links.into_iter().map(|(href, text)| Link { href, text: self.lines(Some(text)).unwrap_or_default() }).collect();
        (paragraphs, quotes, links, parts.images)
    }

    pub(super) fn extract(&mut self, now: Option<time::PrimitiveDateTime>) -> PageExtract {
        let title = self.lines(self.title).filter(|t| !t.is_empty());
        let rules = self.rules;
        let c = &rules.conversation;
        // Per post: the captures of its body, author, time, floor and fields.
        type Found = (usize, Option<usize>, Option<usize>, Option<usize>, [Option<usize>; POST_FIELDS]);
        let found: Vec<Found> = if rules.post.is_some() {
            std::mem::take(&mut self.posts)
                .into_iter()
                .filter_map(|p| {
                    let body = p.body_sel.or(if rules.body_id.is_some() { p.body_id } else { None })?;
                    Some((body, p.author, p.time, p.floor, p.fields))
                })
                .collect()
        } else {
            let (authors, times, floors, lists) = (&self.authors, &self.times, &self.floors, &self.field_lists);
            self.bodies
                .iter()
                .enumerate()
                .map(|(i, &b)| (b, authors.get(i).copied(), times.get(i).copied(), floors.get(i).copied(), std::array::from_fn(|j| lists[j].get(i).copied())))
                .collect()
        };
        let clock = rules.clock(now);
        let fields: Vec<Option<&Field>> = c.post_fields().map(|(_, f)| f).collect();
        let posts = found
            .into_iter()
            .enumerate()
            .map(|(i, (body, author, time, floor, found))| {
                let (paragraphs, quotes, links, images) = self.body(body);
                let mut post = Post {
                    floor: match rules.floor {
                        Some(_) => self.lines(floor).and_then(|f| floor_number(&f)).unwrap_or(0),
                        None => i as u32 + 1,
                    },
                    author: self.lines(author).unwrap_or_default(),
                    time: self.time(time, clock),
                    paragraphs,
                    // A reply that quotes a post it links to answers that post.
                    reply_to: quotes.iter().find_map(|q| q.of.clone()),
                    quotes,
                    links,
                    images,
                    ..Post::default()
                };
                if !c.is_empty() {
                    // As `conversation::read_post` reads them.
                    let [id, author_id, author_url, reply_to, edited, likes, location] = found;
                    post.id = self.field(id, fields[0]);
                    post.author_id = self.field(author_id, fields[1]);
                    post.author_url = self.field(author_url, fields[2]);
                    if let Some(to) = self.field(reply_to, fields[3]) {
                        post.reply_to = Some(to);
                    }
                    post.edited = self.field(edited, fields[4]).and_then(|shown| clock.attribute(&shown));
                    post.likes = self.count(likes, fields[5]);
                    post.location = self.field(location, fields[6]);
                }
                post
            })
            .collect();
        let [board, replies, views] = self.facts;
        let facts = ThreadFacts {
            board_name: self.field(board, c.board_name.as_ref()),
            replies: self.count(replies, c.thread_replies.as_ref()),
            views: self.count(views, c.thread_views.as_ref()),
        };
        PageExtract { title, posts, facts, base: self.base.take() }
    }
}

/// The attribute a field is read from (`css@attr`), if any.
fn from(pick: &Option<Pick>) -> Option<&str> {
    pick.as_ref().and_then(|p| p.attr.as_deref())
}
