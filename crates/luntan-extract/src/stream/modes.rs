//! html5ever 0.40's insertion modes (`tree_builder/rules.rs`), one
//! function each, behind the dispatch on the current mode; "in body" is
//! `body.rs`'s.

use html5ever::local_name;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::TagKind;

use super::machine::{Fmt, Machine, Mode, Step, Tk};
use super::selector::attr;
use super::tags::{ascii_ws, table_body_context, table_end_ignored, table_part, table_part_or_end, table_row_context, table_scope, table_section, td_th};

impl Machine<'_> {
    /// One token in `mode`, by that insertion mode's rules.
    pub(super) fn step(&mut self, mode: Mode, tk: Tk) -> Step {
        match mode {
            Mode::Initial => self.initial(tk),
            Mode::BeforeHtml => self.before_html(tk),
            Mode::BeforeHead => self.before_head(tk),
            Mode::InHead => self.in_head(tk),
            Mode::AfterHead => self.after_head(tk),
            Mode::InBody => self.in_body(tk),
            Mode::Text => self.in_text(tk),
            Mode::InTable => self.in_table(tk),
            Mode::InTableText => self.in_table_text(tk),
            Mode::InTableBody => self.in_table_body(tk),
            Mode::InRow => self.in_row(tk),
            Mode::InCell => self.in_cell(tk),
            Mode::AfterBody => self.after_body(tk),
            Mode::AfterAfterBody => self.after_after_body(tk),
        }
    }

    /// The "initial" insertion mode.
    fn initial(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                let (_, rest) = Self::split_ws(t);
                if rest.is_empty() {
                    return Step::Done;
                }
                self.quirks = true;
                Step::Again(Mode::BeforeHtml, Tk::Chars(rest))
            }
            Tk::Comment => Step::Done,
            tk => {
                self.quirks = true;
                Step::Again(Mode::BeforeHtml, tk)
            }
        }
    }

    /// The "before html" insertion mode.
    fn before_html(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Comment => Step::Done,
            Tk::Chars(t) => {
                let (_, rest) = Self::split_ws(t);
                if rest.is_empty() {
                    return Step::Done;
                }
                self.phantom(local_name!("html"));
                Step::Again(Mode::BeforeHead, Tk::Chars(rest))
            }
            Tk::Tag(tag) if tag.kind == TagKind::StartTag && tag.name == local_name!("html") => {
                self.insert(tag.name, &tag.attrs, false);
                self.mode = Mode::BeforeHead;
                Step::Done
            }
            Tk::Tag(tag)
                if tag.kind == TagKind::EndTag && !matches!(tag.name, local_name!("head") | local_name!("body") | local_name!("html") | local_name!("br")) =>
            {
                Step::Done
            }
            tk => {
                self.phantom(local_name!("html"));
                Step::Again(Mode::BeforeHead, tk)
            }
        }
    }

    /// The "before head" insertion mode.
    fn before_head(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                let (_, rest) = Self::split_ws(t);
                if rest.is_empty() {
                    return Step::Done;
                }
                self.head_phantom();
                Step::Again(Mode::InHead, Tk::Chars(rest))
            }
            Tk::Comment => Step::Done,
            Tk::Tag(tag) if tag.kind == TagKind::StartTag && tag.name == local_name!("html") => self.step(Mode::InBody, Tk::Tag(tag)),
            Tk::Tag(tag) if tag.kind == TagKind::StartTag && tag.name == local_name!("head") => {
                self.insert(tag.name, &tag.attrs, false);
                self.head = self.stack.last().cloned();
                self.mode = Mode::InHead;
                Step::Done
            }
            Tk::Tag(tag)
                if tag.kind == TagKind::EndTag && !matches!(tag.name, local_name!("head") | local_name!("body") | local_name!("html") | local_name!("br")) =>
            {
                Step::Done
            }
            tk => {
                self.head_phantom();
                Step::Again(Mode::InHead, tk)
            }
        }
    }

    /// The "in head" insertion mode.
    fn in_head(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                let Some(rest) = self.past_ws(t) else { return Step::Done };
                self.pop();
                Step::Again(Mode::AfterHead, Tk::Chars(rest))
            }
            Tk::Comment => Step::Done,
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("html")) => self.step(Mode::InBody, Tk::Tag(tag)),
                (
                    TagKind::StartTag,
                    &local_name!("base") | &local_name!("basefont") | &local_name!("bgsound") | &local_name!("link") | &local_name!("meta"),
                ) => {
                    self.insert(tag.name, &tag.attrs, true);
                    Step::Done
                }
                (TagKind::StartTag, &local_name!("title")) => self.raw(tag, RawKind::Rcdata),
                (TagKind::StartTag, &local_name!("noframes") | &local_name!("style") | &local_name!("noscript")) => self.raw(tag, RawKind::Rawtext),
                (TagKind::StartTag, &local_name!("script")) => self.raw(tag, RawKind::ScriptData),
                (TagKind::EndTag, &local_name!("head")) => {
                    self.pop();
                    self.mode = Mode::AfterHead;
                    Step::Done
                }
                (_, &local_name!("template")) => self.fail("<template>"),
                (TagKind::EndTag, &local_name!("body") | &local_name!("html") | &local_name!("br")) => {
                    self.pop();
                    Step::Again(Mode::AfterHead, Tk::Tag(tag))
                }
                (TagKind::EndTag, _) | (TagKind::StartTag, &local_name!("head")) => Step::Done,
                _ => {
                    self.pop();
                    Step::Again(Mode::AfterHead, Tk::Tag(tag))
                }
            },
            tk => {
                self.pop();
                Step::Again(Mode::AfterHead, tk)
            }
        }
    }

    /// The "after head" insertion mode.
    fn after_head(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                let Some(rest) = self.past_ws(t) else { return Step::Done };
                self.phantom(local_name!("body"));
                Step::Again(Mode::InBody, Tk::Chars(rest))
            }
            Tk::Comment => Step::Done,
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("html")) => self.step(Mode::InBody, Tk::Tag(tag)),
                (TagKind::StartTag, &local_name!("body")) => {
                    self.insert(tag.name, &tag.attrs, false);
                    self.mode = Mode::InBody;
                    Step::Done
                }
                (TagKind::StartTag, &local_name!("frameset")) => self.fail("<frameset>"),
                (
                    TagKind::StartTag,
                    &local_name!("base")
                    | &local_name!("basefont")
                    | &local_name!("bgsound")
                    | &local_name!("link")
                    | &local_name!("meta")
                    | &local_name!("noframes")
                    | &local_name!("script")
                    | &local_name!("style")
                    | &local_name!("template")
                    | &local_name!("title"),
                ) => {
                    // Into the <head> again, which is taken off the stack after.
                    let Some(head) = self.head.clone() else { return self.fail("no <head>") };
                    if head.rmask != 0 || !self.active.is_empty() {
                        return self.fail("an element after </head> that a selector watches");
                    }
                    let at = self.stack.len();
                    self.stack.push(head);
                    let r = self.step(Mode::InHead, Tk::Tag(tag));
                    // The head closed already: no capture sees it again
                    // (but the next element put in it follows this one).
                    self.head = Some(self.stack.remove(at));
                    r
                }
                (TagKind::EndTag, &local_name!("template")) => self.fail("<template>"),
                (TagKind::EndTag, &local_name!("body") | &local_name!("html") | &local_name!("br")) => {
                    self.phantom(local_name!("body"));
                    Step::Again(Mode::InBody, Tk::Tag(tag))
                }
                (TagKind::EndTag, _) | (TagKind::StartTag, &local_name!("head")) => Step::Done,
                _ => {
                    self.phantom(local_name!("body"));
                    Step::Again(Mode::InBody, Tk::Tag(tag))
                }
            },
            tk => {
                self.phantom(local_name!("body"));
                Step::Again(Mode::InBody, tk)
            }
        }
    }

    /// The "text" insertion mode.
    fn in_text(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                self.append(&t);
                Step::Done
            }
            Tk::Eof => {
                self.pop();
                Step::Again(self.orig_mode, Tk::Eof)
            }
            Tk::Tag(tag) if tag.kind == TagKind::EndTag => {
                self.pop();
                self.mode = self.orig_mode;
                Step::Done
            }
            _ => self.fail("an unexpected token in text"),
        }
    }

    /// The "in table text" insertion mode.
    fn in_table_text(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Null => Step::Done,
            Tk::Chars(t) => {
                self.pending.push(t);
                Step::Done
            }
            tk => {
                let pending = std::mem::take(&mut self.pending);
                if pending.iter().any(|t| t.chars().any(|c| !ascii_ws(c))) {
                    return self.fail("text in a table outside its cells (foster parenting)");
                }
                for t in &pending {
                    self.append(t);
                }
                Step::Again(self.orig_mode, tk)
            }
        }
    }

    /// The "in table body" insertion mode.
    fn in_table_body(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("tr")) => {
                    self.pop_until_current(table_body_context);
                    self.insert(tag.name, &tag.attrs, false);
                    self.mode = Mode::InRow;
                    Step::Done
                }
                (TagKind::StartTag, &local_name!("th") | &local_name!("td")) => {
                    self.pop_until_current(table_body_context);
                    self.phantom(local_name!("tr"));
                    Step::Again(Mode::InRow, Tk::Tag(tag))
                }
                (TagKind::EndTag, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                    if self.in_scope_named(table_scope, &tag.name) {
                        self.close_table_part(table_body_context);
                        self.mode = Mode::InTable;
                    }
                    Step::Done
                }
                (kind, name) if table_part_or_end(kind, name, false) => {
                    if self.in_scope(table_scope, |e| matches!(e.name, local_name!("table") | local_name!("tbody") | local_name!("tfoot"))) {
                        self.close_table_part(table_body_context);
                        Step::Again(Mode::InTable, Tk::Tag(tag))
                    } else {
                        Step::Done
                    }
                }
                (TagKind::EndTag, name) if table_end_ignored(name) || td_th(name) || *name == local_name!("tr") => Step::Done,
                _ => self.in_table(Tk::Tag(tag)),
            },
            tk => self.in_table(tk),
        }
    }

    /// The "in row" insertion mode.
    fn in_row(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("th") | &local_name!("td")) => {
                    self.pop_until_current(table_row_context);
                    self.insert(tag.name, &tag.attrs, false);
                    self.mode = Mode::InCell;
                    self.afe.push(Fmt::Marker);
                    Step::Done
                }
                (TagKind::EndTag, &local_name!("tr")) => {
                    if self.in_scope_named(table_scope, &local_name!("tr")) {
                        self.close_table_part(table_row_context);
                        self.mode = Mode::InTableBody;
                    }
                    Step::Done
                }
                (kind, name) if table_part_or_end(kind, name, true) => {
                    if self.in_scope_named(table_scope, &local_name!("tr")) {
                        self.close_table_part(table_row_context);
                        Step::Again(Mode::InTableBody, Tk::Tag(tag))
                    } else {
                        Step::Done
                    }
                }
                (TagKind::EndTag, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                    if self.in_scope_named(table_scope, &tag.name) && self.in_scope_named(table_scope, &local_name!("tr")) {
                        self.close_table_part(table_row_context);
                        Step::Again(Mode::InTableBody, Tk::Tag(tag))
                    } else {
                        Step::Done
                    }
                }
                (TagKind::EndTag, name) if table_end_ignored(name) || td_th(name) => Step::Done,
                _ => self.in_table(Tk::Tag(tag)),
            },
            tk => self.in_table(tk),
        }
    }

    /// The "in cell" insertion mode.
    fn in_cell(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::EndTag, &local_name!("td") | &local_name!("th")) => {
                    if self.in_scope_named(table_scope, &tag.name) {
                        self.generate_implied(None);
                        self.pop_until_named(&tag.name);
                        self.clear_afe_to_marker();
                        self.mode = Mode::InRow;
                    }
                    Step::Done
                }
                (TagKind::StartTag, name) if table_part(name) || td_th(name) || *name == local_name!("tr") => {
                    if self.in_scope(table_scope, |e| td_th(&e.name)) {
                        self.close_cell();
                        Step::Again(Mode::InRow, Tk::Tag(tag))
                    } else {
                        Step::Done
                    }
                }
                (TagKind::EndTag, name) if table_end_ignored(name) => Step::Done,
                (TagKind::EndTag, &local_name!("table") | &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead") | &local_name!("tr")) => {
                    if self.in_scope_named(table_scope, &tag.name) {
                        self.close_cell();
                        Step::Again(Mode::InRow, Tk::Tag(tag))
                    } else {
                        Step::Done
                    }
                }
                _ => self.in_body(Tk::Tag(tag)),
            },
            tk => self.in_body(tk),
        }
    }

    /// The "after body" insertion mode.
    fn after_body(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Chars(t) => {
                let (ws, rest) = Self::split_ws(t);
                if !ws.is_empty() {
                    self.in_body(Tk::Chars(ws));
                }
                if rest.is_empty() {
                    return Step::Done;
                }
                Step::Again(Mode::InBody, Tk::Chars(rest))
            }
            Tk::Comment => Step::Done,
            Tk::Tag(tag) if tag.kind == TagKind::StartTag && tag.name == local_name!("html") => self.in_body(Tk::Tag(tag)),
            Tk::Tag(tag) if tag.kind == TagKind::EndTag && tag.name == local_name!("html") => {
                self.mode = Mode::AfterAfterBody;
                Step::Done
            }
            Tk::Eof => Step::Done,
            tk => Step::Again(Mode::InBody, tk),
        }
    }

    /// The "after after body" insertion mode: "after body" but for
    /// `</html>`, which goes back to "in body" here.
    fn after_after_body(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Tag(tag) if tag.kind == TagKind::EndTag && tag.name == local_name!("html") => Step::Again(Mode::InBody, Tk::Tag(tag)),
            tk => self.after_body(tk),
        }
    }

    fn in_table(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Null | Tk::Chars(_) => {
                if self
                    .current_in(|n| matches!(*n, local_name!("table") | local_name!("tbody") | local_name!("tfoot") | local_name!("thead") | local_name!("tr")))
                {
                    self.orig_mode = self.mode;
                    Step::Again(Mode::InTableText, tk)
                } else if matches!(tk, Tk::Null) {
                    Step::Done
                } else {
                    self.fail("text in a table outside its cells (foster parenting)")
                }
            }
            Tk::Comment => Step::Done,
            Tk::Eof => self.in_body(Tk::Eof),
            Tk::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("caption") | &local_name!("colgroup") | &local_name!("col")) => self.fail("<caption>/<colgroup> in a table"),
                (TagKind::StartTag, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                    self.pop_until_current(table_scope);
                    self.insert(tag.name, &tag.attrs, false);
                    self.mode = Mode::InTableBody;
                    Step::Done
                }
                (TagKind::StartTag, &local_name!("td") | &local_name!("th") | &local_name!("tr")) => {
                    self.pop_until_current(table_scope);
                    self.phantom(local_name!("tbody"));
                    Step::Again(Mode::InTableBody, Tk::Tag(tag))
                }
                (TagKind::StartTag, &local_name!("table")) => self.fail("<table> directly in a table"),
                (TagKind::EndTag, &local_name!("table")) => {
                    if self.in_scope_named(table_scope, &local_name!("table")) {
                        self.pop_until_named(&local_name!("table"));
                        match self.reset_mode() {
                            Some(m) => self.mode = m,
                            None => return self.fail("an insertion mode the stream does not model"),
                        }
                    }
                    Step::Done
                }
                (TagKind::EndTag, name) if table_end_ignored(name) || td_th(name) || table_section(name) || *name == local_name!("tr") => Step::Done,
                (TagKind::StartTag, &local_name!("style")) => self.raw(tag, RawKind::Rawtext),
                (TagKind::StartTag, &local_name!("script")) => self.raw(tag, RawKind::ScriptData),
                (_, &local_name!("template")) => self.fail("<template>"),
                (TagKind::StartTag, &local_name!("input")) => {
                    let hidden = attr(&tag.attrs, &local_name!("type")).is_some_and(|t| t.eq_ignore_ascii_case("hidden"));
                    if hidden {
                        self.insert(tag.name, &tag.attrs, true);
                        Step::Done
                    } else {
                        self.fail("an element in a table outside its cells (foster parenting)")
                    }
                }
                (TagKind::StartTag, &local_name!("form")) => {
                    if self.form.is_none() {
                        let uid = self.insert(tag.name, &tag.attrs, true);
                        self.form = Some(uid);
                    }
                    Step::Done
                }
                // Other end tags go to "in body" with foster parenting on,
                // which only matters where they insert: </p> and </br>.
                (TagKind::EndTag, &local_name!("p") | &local_name!("br")) => self.fail("</p> or </br> in a table outside its cells (foster parenting)"),
                (TagKind::EndTag, _) => {
                    self.end_in_body(tag);
                    Step::Done
                }
                _ => self.fail("an element in a table outside its cells (foster parenting)"),
            },
        }
    }
}
