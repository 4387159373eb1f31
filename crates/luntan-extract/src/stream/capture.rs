//! What the stream takes from the page: which rule an element about to be
//! inserted matches, the captures (text of a title, body, author, time,
//! floor) it starts and feeds, and the posts they make at the end.

use html5ever::{local_name, Attribute, LocalName};
use luntan_core::dates::Clock;
use luntan_core::site::Pick;
use luntan_core::Post;

use super::machine::{Machine, Open};
use super::selector::{attr, Comb, Complex, AUTHOR, BODY, FLOOR, POST, STRIP, TIME, TITLE};
use crate::page::PageExtract;
use crate::text::{floor_number, read_time, Paragraphs, BLOCKS, CELLS, SKIPPED};

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
    /// Skip the elements that match `strip` (a body).
    pub(super) strip: bool,
    /// `datetime` and `title` of the element and its descendants (a time).
    pub(super) attrs: Option<Vec<[Option<String>; 2]>>,
    pub(super) result: Option<Vec<String>>,
    /// A field read from an attribute (`css@attr`): its value, folded
    /// (empty when the element has no such attribute); no text is taken.
    pub(super) value: Option<String>,
}

impl Capture {
    pub(super) fn open(&mut self, uid: u32, kind: Kind, stripped: bool) {
        if self.skipping.is_some() {
            return;
        }
        let root = uid == self.root;
        if !root && (kind == Kind::Skipped || (self.strip && stripped)) {
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

    pub(super) fn start(&mut self, uid: u32, kind: Kind, strip: bool, time: bool, attrs: &[Attribute], from: Option<&str>) -> usize {
        if let Some(name) = from {
            let value = attrs
                .iter()
                .find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == name)
                .map(|a| a.value.split_whitespace().collect::<Vec<_>>().join(" "));
            let c = Capture {
                root: uid,
                para: Paragraphs::default(),
                skipping: None,
                pre: 0,
                strip,
                attrs: None,
                result: None,
                value: Some(value.unwrap_or_default()),
            };
            self.caps.push(c);
            return self.caps.len() - 1;
        }
        let mut c = Capture { root: uid, para: Paragraphs::default(), skipping: None, pre: 0, strip, attrs: time.then(Vec::new), result: None, value: None };
        if let Some(list) = &mut c.attrs {
            list.push([attr(attrs, &local_name!("datetime")).map(str::to_owned), attr(attrs, &local_name!("title")).map(str::to_owned)]);
        }
        c.open(uid, kind, false);
        self.caps.push(c);
        self.active.push(self.caps.len() - 1);
        self.caps.len() - 1
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
        let mut rmask = 0u8;
        let mut ask = |m: &Self, k: u8| {
            if m.rule(k, cmask) {
                rmask |= 1 << k;
                true
            } else {
                false
            }
        };
        let stripping = self.active.iter().any(|&c| self.caps[c].strip);
        let stripped = stripping && ask(self, STRIP);
        // Captures already open see the element open.
        let k = if self.active.is_empty() { Kind::Other } else { kind(&name) };
        for &c in &self.active {
            let cap = &mut self.caps[c];
            if let Some(list) = &mut cap.attrs {
                list.push([attr(attrs, &local_name!("datetime")).map(str::to_owned), attr(attrs, &local_name!("title")).map(str::to_owned)]);
            }
            cap.open(uid, k, stripped);
        }
        if !self.title_seen && ask(self, TITLE) {
            self.title_seen = true;
            self.title = Some(self.start(uid, kind(&name), false, false, attrs, from(&rules.title)));
        }
        let id_matches = |m: &Self| m.rules.body_id.as_ref().is_some_and(|re| attr(attrs, &local_name!("id")).is_some_and(|id| re.is_match(id)));
        if rules.post.is_some() {
            match self.open_post {
                Some(p) => {
                    let post = &self.posts[p];
                    let (need_body, need_id) = (post.body_sel.is_none(), post.body_sel.is_none() && post.body_id.is_none());
                    let (need_a, need_t, need_f) = (post.author.is_none(), post.time.is_none(), post.floor.is_none());
                    if need_body && ask(self, BODY) {
                        let cap = self.start(uid, kind(&name), true, false, attrs, None);
                        if let Some(old) = self.posts[p].body_id.take() {
                            self.stop(old);
                        }
                        self.posts[p].body_sel = Some(cap);
                    } else if need_id && id_matches(self) {
                        self.posts[p].body_id = Some(self.start(uid, kind(&name), true, false, attrs, None));
                    }
                    if need_a && ask(self, AUTHOR) {
                        self.posts[p].author = Some(self.start(uid, kind(&name), false, false, attrs, from(&rules.author)));
                    }
                    if need_t && ask(self, TIME) {
                        self.posts[p].time = Some(self.start(uid, kind(&name), false, true, attrs, from(&rules.time)));
                    }
                    if need_f && ask(self, FLOOR) {
                        self.posts[p].floor = Some(self.start(uid, kind(&name), false, false, attrs, from(&rules.floor)));
                    }
                }
                None => {
                    if ask(self, POST) {
                        let mut rec = PostRec { uid, ..PostRec::default() };
                        if ask(self, BODY) {
                            rec.body_sel = Some(self.start(uid, kind(&name), true, false, attrs, None));
                        } else if id_matches(self) {
                            rec.body_id = Some(self.start(uid, kind(&name), true, false, attrs, None));
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
                    let cap = self.start(uid, kind(&name), true, false, attrs, None);
                    self.bodies.push(cap);
                    self.open_body = Some(uid);
                }
            }
            if rules.author.is_some() && ask(self, AUTHOR) {
                let cap = self.start(uid, kind(&name), false, false, attrs, from(&rules.author));
                self.authors.push(cap);
            }
            if rules.time.is_some() && ask(self, TIME) {
                let cap = self.start(uid, kind(&name), false, true, attrs, from(&rules.time));
                self.times.push(cap);
            }
            if rules.floor.is_some() && ask(self, FLOOR) {
                let cap = self.start(uid, kind(&name), false, false, attrs, from(&rules.floor));
                self.floors.push(cap);
            }
        }
        let kind = if self.active.is_empty() { Kind::Other } else { kind(&name) };
        let open = Open { uid, name, kind, cmask, rmask };
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
        let mut k = 0;
        while k < self.active.len() {
            let c = self.active[k];
            let cap = &mut self.caps[c];
            cap.close(e.uid, e.kind);
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
            self.caps[c].text(t);
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

    pub(super) fn extract(&mut self, now: Option<time::PrimitiveDateTime>) -> PageExtract {
        let title = self.lines(self.title).filter(|t| !t.is_empty());
        let rules = self.rules;
        // Per post: the captures of its body, author, time and floor.
        type Found = (usize, Option<usize>, Option<usize>, Option<usize>);
        let found: Vec<Found> = if rules.post.is_some() {
            std::mem::take(&mut self.posts)
                .into_iter()
                .filter_map(|p| {
                    let body = p.body_sel.or(if rules.body_id.is_some() { p.body_id } else { None })?;
                    Some((body, p.author, p.time, p.floor))
                })
                .collect()
        } else {
            let (authors, times, floors) = (&self.authors, &self.times, &self.floors);
            self.bodies.iter().enumerate().map(|(i, &b)| (b, authors.get(i).copied(), times.get(i).copied(), floors.get(i).copied())).collect()
        };
        let posts = found
            .into_iter()
            .enumerate()
            .map(|(i, (body, author, time, floor))| Post {
                floor: match rules.floor {
                    Some(_) => self.lines(floor).and_then(|f| floor_number(&f)).unwrap_or(0),
                    None => i as u32 + 1,
                },
                author: self.lines(author).unwrap_or_default(),
                time: self.time(time, Clock::new(rules.utc_offset_minutes, now)),
                paragraphs: self.caps[body].result.take().unwrap_or_default(),
                ..Post::default()
            })
            .collect();
        PageExtract { title, posts, ..PageExtract::default() }
    }
}

/// The attribute a field is read from (`css@attr`), if any.
fn from(pick: &Option<Pick>) -> Option<&str> {
    pick.as_ref().and_then(|p| p.attr.as_deref())
}
