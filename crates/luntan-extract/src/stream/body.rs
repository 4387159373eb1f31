//! The "in body" insertion mode, start and end tags: where nearly all of a
//! forum page is read.

use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Tag, TagKind};
use html5ever::{local_name, LocalName};

use super::machine::{Fmt, Machine, Mode, Step, Tk};
use super::tags::{block_container, button_scope, default_scope, heading, is_special, list_item_scope};

impl Machine<'_> {
    pub(super) fn in_body(&mut self, tk: Tk) -> Step {
        match tk {
            Tk::Null | Tk::Comment => Step::Done,
            Tk::Chars(t) => {
                self.reconstruct();
                self.append(&t);
                Step::Done
            }
            Tk::Eof => Step::Done,
            Tk::Tag(tag) if tag.kind == TagKind::StartTag => self.start_in_body(tag),
            Tk::Tag(tag) => {
                self.end_in_body(tag);
                Step::Done
            }
        }
    }

    pub(super) fn start_in_body(&mut self, tag: Tag) -> Step {
        match tag.name {
            local_name!("html") => {
                if tag.attrs.is_empty() {
                    Step::Done
                } else {
                    self.fail("a second <html> with attributes")
                }
            }
            local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("noframes")
            | local_name!("script")
            | local_name!("style")
            | local_name!("template")
            | local_name!("title") => self.step(Mode::InHead, Tk::Tag(tag)),
            local_name!("body") => {
                if tag.attrs.is_empty() {
                    Step::Done
                } else {
                    self.fail("a second <body> with attributes")
                }
            }
            local_name!("frameset") => self.fail("<frameset>"),
            _ if tag.name == local_name!("p") || block_container(&tag.name) => {
                self.close_p_in_button_scope();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("h1") | local_name!("h2") | local_name!("h3") | local_name!("h4") | local_name!("h5") | local_name!("h6") => {
                self.close_p_in_button_scope();
                if self.current_in(heading) {
                    self.pop();
                }
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert(tag.name, &tag.attrs, false);
                self.ignore_lf = true;
                Step::Done
            }
            local_name!("form") => {
                if self.form.is_none() {
                    self.close_p_in_button_scope();
                    let uid = self.insert(tag.name, &tag.attrs, false);
                    self.form = Some(uid);
                }
                Step::Done
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let list = tag.name == local_name!("li");
                let mut to_close = None;
                for e in self.stack.iter().rev() {
                    let can = if list { e.name == local_name!("li") } else { matches!(e.name, local_name!("dd") | local_name!("dt")) };
                    if can {
                        to_close = Some(e.name.clone());
                        break;
                    }
                    if is_special(&e.name) && !matches!(e.name, local_name!("address") | local_name!("div") | local_name!("p")) {
                        break;
                    }
                }
                if let Some(name) = to_close {
                    self.generate_implied(Some(&name));
                    self.pop_until_named(&name);
                }
                self.close_p_in_button_scope();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("plaintext") => self.fail("<plaintext>"),
            local_name!("button") => {
                if self.in_scope_named(default_scope, &local_name!("button")) {
                    self.generate_implied(None);
                    self.pop_until_named(&local_name!("button"));
                }
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("a") => {
                let a = self.afe.iter().rev().take_while(|f| !matches!(f, Fmt::Marker)).find_map(|f| match f {
                    Fmt::El { uid, name, .. } if *name == local_name!("a") => Some(*uid),
                    _ => None,
                });
                if let Some(node) = a {
                    self.adoption(&local_name!("a"));
                    if self.failed.is_some() {
                        return Step::Done;
                    }
                    if let Some(i) = self.afe.iter().position(|f| matches!(f, Fmt::El { uid, .. } if *uid == node)) {
                        self.afe.remove(i);
                    }
                    if self.on_stack(node) {
                        return self.fail("<a> inside an open <a> (adoption agency)");
                    }
                }
                self.reconstruct();
                self.formatting(tag);
                Step::Done
            }
            local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => {
                self.reconstruct();
                self.formatting(tag);
                Step::Done
            }
            local_name!("nobr") => {
                self.reconstruct();
                if self.in_scope_named(default_scope, &local_name!("nobr")) {
                    self.adoption(&local_name!("nobr"));
                    if self.failed.is_some() {
                        return Step::Done;
                    }
                    self.reconstruct();
                }
                self.formatting(tag);
                Step::Done
            }
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, false);
                self.afe.push(Fmt::Marker);
                Step::Done
            }
            local_name!("table") => {
                if !self.quirks {
                    self.close_p_in_button_scope();
                }
                self.insert(tag.name, &tag.attrs, false);
                self.mode = Mode::InTable;
                Step::Done
            }
            local_name!("area") | local_name!("br") | local_name!("embed") | local_name!("img") | local_name!("keygen") | local_name!("wbr") => {
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, true);
                Step::Done
            }
            local_name!("input") => {
                if self.in_scope_named(default_scope, &local_name!("select")) {
                    self.pop_until_named(&local_name!("select"));
                }
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, true);
                Step::Done
            }
            local_name!("param") | local_name!("source") | local_name!("track") => {
                self.insert(tag.name, &tag.attrs, true);
                Step::Done
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                if self.in_scope_named(default_scope, &local_name!("select")) {
                    self.generate_implied(None);
                }
                self.insert(tag.name, &tag.attrs, true);
                Step::Done
            }
            local_name!("image") => self.fail("<image>"),
            local_name!("textarea") => {
                self.ignore_lf = true;
                self.raw(tag, RawKind::Rcdata)
            }
            local_name!("xmp") => {
                self.close_p_in_button_scope();
                self.reconstruct();
                self.raw(tag, RawKind::Rawtext)
            }
            local_name!("iframe") | local_name!("noembed") | local_name!("noscript") => self.raw(tag, RawKind::Rawtext),
            local_name!("select") => {
                if self.in_scope_named(default_scope, &local_name!("select")) {
                    self.pop_until_named(&local_name!("select"));
                } else {
                    self.reconstruct();
                    self.insert(tag.name, &tag.attrs, false);
                }
                Step::Done
            }
            local_name!("option") => {
                if self.in_scope_named(default_scope, &local_name!("select")) {
                    self.generate_implied(Some(&local_name!("optgroup")));
                } else if self.current_is(&local_name!("option")) {
                    self.pop();
                }
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("optgroup") => {
                if self.in_scope_named(default_scope, &local_name!("select")) {
                    self.generate_implied(None);
                } else if self.current_is(&local_name!("option")) {
                    self.pop();
                }
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("rb") | local_name!("rtc") => {
                if self.in_scope_named(default_scope, &local_name!("ruby")) {
                    self.generate_implied(None);
                }
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("rp") | local_name!("rt") => {
                if self.in_scope_named(default_scope, &local_name!("ruby")) {
                    self.generate_implied(Some(&local_name!("rtc")));
                }
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
            local_name!("math") | local_name!("svg") => self.fail("SVG or MathML"),
            local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("frame")
            | local_name!("head")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => Step::Done,
            _ => {
                self.reconstruct();
                self.insert(tag.name, &tag.attrs, false);
                Step::Done
            }
        }
    }

    pub(super) fn end_in_body(&mut self, tag: Tag) {
        match tag.name {
            local_name!("template") => {
                self.fail("<template>");
            }
            local_name!("body") => {
                if self.in_scope_named(default_scope, &local_name!("body")) {
                    self.mode = Mode::AfterBody;
                }
            }
            local_name!("html") => {
                if self.in_scope_named(default_scope, &local_name!("body")) {
                    self.mode = Mode::AfterBody;
                    // Reprocessed in "after body": to "after after body".
                    self.mode = Mode::AfterAfterBody;
                }
            }
            _ if block_container(&tag.name)
                || matches!(tag.name, local_name!("button") | local_name!("listing") | local_name!("pre") | local_name!("select")) =>
            {
                if self.in_scope_named(default_scope, &tag.name) {
                    self.generate_implied(None);
                    self.pop_until_named(&tag.name);
                }
            }
            local_name!("form") => {
                let Some(node) = self.form.take() else { return };
                if !self.in_scope(default_scope, |e| e.uid == node) {
                    return;
                }
                self.generate_implied(None);
                if self.stack.last().is_some_and(|e| e.uid == node) {
                    self.pop();
                } else {
                    self.fail("misnested </form>");
                }
            }
            local_name!("p") => {
                if !self.in_scope_named(button_scope, &local_name!("p")) {
                    self.phantom(local_name!("p"));
                }
                self.close_p();
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let scope: fn(&LocalName) -> bool = if tag.name == local_name!("li") { list_item_scope } else { default_scope };
                if self.in_scope_named(scope, &tag.name) {
                    self.generate_implied(Some(&tag.name));
                    self.pop_until_named(&tag.name);
                }
            }
            local_name!("h1") | local_name!("h2") | local_name!("h3") | local_name!("h4") | local_name!("h5") | local_name!("h6") => {
                if self.in_scope(default_scope, |e| heading(&e.name)) {
                    self.generate_implied(None);
                    self.pop_until(heading);
                }
            }
            local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("nobr")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => self.adoption(&tag.name),
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                if self.in_scope_named(default_scope, &tag.name) {
                    self.generate_implied(None);
                    self.pop_until_named(&tag.name);
                    self.clear_afe_to_marker();
                }
            }
            local_name!("br") => {
                self.reconstruct();
                self.insert(local_name!("br"), &[], true);
            }
            _ => self.end_tag_in_body(&tag.name),
        }
    }
}
