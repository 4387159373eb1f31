//! The tree-construction steps html5ever's insertion modes share: scopes,
//! implied end tags, popping, reconstructing the active formatting
//! elements, the adoption agency where it moves nothing, resetting the
//! insertion mode.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::Tag;
use html5ever::{local_name, LocalName};

use super::machine::{Fmt, Machine, Mode, Open, Step};
use super::tags::{button_scope, cursory_implied_end, default_scope, is_special, td_th};

impl Machine<'_> {
    pub(super) fn current_is(&self, name: &LocalName) -> bool {
        self.stack.last().is_some_and(|e| e.name == *name)
    }

    pub(super) fn current_in(&self, set: fn(&LocalName) -> bool) -> bool {
        self.stack.last().is_some_and(|e| set(&e.name))
    }

    pub(super) fn in_scope(&self, scope: fn(&LocalName) -> bool, pred: impl Fn(&Open) -> bool) -> bool {
        for e in self.stack.iter().rev() {
            if pred(e) {
                return true;
            }
            if scope(&e.name) {
                return false;
            }
        }
        false
    }

    pub(super) fn in_scope_named(&self, scope: fn(&LocalName) -> bool, name: &LocalName) -> bool {
        self.in_scope(scope, |e| e.name == *name)
    }

    pub(super) fn generate_implied(&mut self, except: Option<&LocalName>) {
        while let Some(e) = self.stack.last() {
            if !cursory_implied_end(&e.name) || except.is_some_and(|x| *x == e.name) {
                return;
            }
            self.pop();
        }
    }

    pub(super) fn pop_until(&mut self, pred: impl Fn(&LocalName) -> bool) -> usize {
        let mut n = 0;
        while let Some(e) = self.stack.pop() {
            n += 1;
            let hit = pred(&e.name);
            self.closed(&e);
            if hit {
                break;
            }
        }
        n
    }

    pub(super) fn pop_until_named(&mut self, name: &LocalName) {
        let name = name.clone();
        self.pop_until(|n| *n == name);
    }

    pub(super) fn pop_until_current(&mut self, set: fn(&LocalName) -> bool) {
        while !self.current_in(set) {
            if self.stack.is_empty() {
                return;
            }
            self.pop();
        }
    }

    /// Closes the table section or row `context` finds: html5ever's "clear
    /// the stack back to a table body (or row) context", then its pop.
    pub(super) fn close_table_part(&mut self, context: fn(&LocalName) -> bool) {
        self.pop_until_current(context);
        self.pop();
    }

    pub(super) fn close_p(&mut self) {
        self.generate_implied(Some(&local_name!("p")));
        self.pop_until_named(&local_name!("p"));
    }

    pub(super) fn close_p_in_button_scope(&mut self) {
        if self.in_scope_named(button_scope, &local_name!("p")) {
            self.close_p();
        }
    }

    pub(super) fn on_stack(&self, uid: u32) -> bool {
        self.stack.iter().any(|e| e.uid == uid)
    }

    pub(super) fn clear_afe_to_marker(&mut self) {
        while let Some(f) = self.afe.pop() {
            if matches!(f, Fmt::Marker) {
                break;
            }
        }
    }

    pub(super) fn reconstruct(&mut self) {
        let Some(last) = self.afe.last() else { return };
        let open = |m: &Self, f: &Fmt| match f {
            Fmt::Marker => true,
            Fmt::El { uid, .. } => m.on_stack(*uid),
        };
        if open(self, last) {
            return;
        }
        let mut i = self.afe.len() - 1;
        while i > 0 {
            i -= 1;
            if open(self, &self.afe[i]) {
                i += 1;
                break;
            }
        }
        loop {
            let (name, attrs) = match &self.afe[i] {
                Fmt::El { name, attrs, .. } => (name.clone(), attrs.clone()),
                Fmt::Marker => unreachable!("a marker is never reconstructed"),
            };
            let uid = self.insert(name.clone(), &attrs, false);
            self.afe[i] = Fmt::El { uid, name, attrs };
            if i == self.afe.len() - 1 {
                break;
            }
            i += 1;
        }
    }

    pub(super) fn formatting(&mut self, tag: Tag) {
        let mut attrs = tag.attrs;
        attrs.sort();
        let mut first = None;
        let mut matches = 0;
        for (i, f) in self.afe.iter().enumerate().rev() {
            match f {
                Fmt::Marker => break,
                Fmt::El { name, attrs: a, .. } => {
                    if *name == tag.name && *a == attrs {
                        first = Some(i);
                        matches += 1;
                    }
                }
            }
        }
        if matches >= 3 {
            self.afe.remove(first.expect("counted"));
        }
        let uid = self.insert(tag.name.clone(), &attrs, false);
        self.afe.push(Fmt::El { uid, name: tag.name, attrs });
    }

    /// The adoption agency algorithm, where it moves nothing.
    pub(super) fn adoption(&mut self, subject: &LocalName) {
        if let Some(cur) = self.stack.last() {
            if cur.name == *subject && !self.afe.iter().any(|f| matches!(f, Fmt::El { uid, .. } if *uid == cur.uid)) {
                self.pop();
                return;
            }
        }
        let mut found = None;
        for (i, f) in self.afe.iter().enumerate().rev() {
            match f {
                Fmt::Marker => break,
                Fmt::El { uid, name, .. } if name == subject => {
                    found = Some((i, *uid));
                    break;
                }
                Fmt::El { .. } => {}
            }
        }
        let Some((fi, fuid)) = found else {
            self.end_tag_in_body(subject);
            return;
        };
        let Some(si) = self.stack.iter().rposition(|e| e.uid == fuid) else {
            self.afe.remove(fi);
            return;
        };
        if !self.in_scope(default_scope, |e| e.uid == fuid) {
            return;
        }
        if self.stack[si..].iter().any(|e| is_special(&e.name)) {
            self.fail("misnested formatting element (adoption agency)");
            return;
        }
        while self.stack.len() > si {
            self.pop();
        }
        self.afe.remove(fi);
    }

    pub(super) fn end_tag_in_body(&mut self, name: &LocalName) {
        let mut idx = None;
        for (i, e) in self.stack.iter().enumerate().rev() {
            if e.name == *name {
                idx = Some(i);
                break;
            }
            if is_special(&e.name) {
                return;
            }
        }
        let Some(idx) = idx else { return };
        self.generate_implied(Some(name));
        while self.stack.len() > idx {
            self.pop();
        }
    }

    pub(super) fn reset_mode(&mut self) -> Option<Mode> {
        for (i, e) in self.stack.iter().enumerate().rev() {
            let last = i == 0;
            match e.name {
                local_name!("td") | local_name!("th") if !last => return Some(Mode::InCell),
                local_name!("tr") => return Some(Mode::InRow),
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => return Some(Mode::InTableBody),
                local_name!("caption") | local_name!("colgroup") | local_name!("template") | local_name!("frameset") => return None,
                local_name!("table") => return Some(Mode::InTable),
                local_name!("head") if !last => return Some(Mode::InHead),
                local_name!("body") => return Some(Mode::InBody),
                local_name!("html") => return Some(if self.head.is_none() { Mode::BeforeHead } else { Mode::AfterHead }),
                _ => {}
            }
        }
        Some(Mode::InBody)
    }

    pub(super) fn raw(&mut self, tag: Tag, kind: RawKind) -> Step {
        self.insert(tag.name, &tag.attrs, false);
        self.orig_mode = self.mode;
        self.mode = Mode::Text;
        Step::Raw(kind)
    }

    /// Text at the current node.
    pub(super) fn append(&mut self, t: &str) {
        if !self.active.is_empty() {
            self.text(t);
        }
    }

    /// Leading ASCII whitespace of `text` and the rest.
    pub(super) fn split_ws(text: StrTendril) -> (StrTendril, StrTendril) {
        let n = text.bytes().take_while(u8::is_ascii_whitespace).count() as u32;
        (text.subtendril(0, n), text.subtendril(n, text.len32() - n))
    }

    /// Appends the leading whitespace of `t` at the current node (where
    /// the DOM keeps it too) and gives the rest, if any.
    pub(super) fn past_ws(&mut self, t: StrTendril) -> Option<StrTendril> {
        let (ws, rest) = Self::split_ws(t);
        if !ws.is_empty() {
            self.append(&ws);
        }
        (!rest.is_empty()).then_some(rest)
    }

    pub(super) fn head_phantom(&mut self) {
        self.phantom(local_name!("head"));
        self.head = self.stack.last().cloned();
    }

    pub(super) fn close_cell(&mut self) {
        self.generate_implied(None);
        self.pop_until(td_th);
        self.clear_afe_to_marker();
    }
}
