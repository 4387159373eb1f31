//! CSS selectors for elements the learner found: the simplest selector,
//! among a few shapes a person would write, that picks exactly those
//! elements on every sampled page.

use std::collections::HashSet;

use ego_tree::NodeId;
use scraper::{ElementRef, Html, Selector};

pub use luntan_extract::parse::line_text;

fn css_ident(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Selectors for `el` alone, most telling first: `tag.class`,
/// `tag.class.class`, `tag[id^=prefix]` (an id that ends in a number),
/// `#id`, `tag`.
pub fn own(el: ElementRef) -> Vec<String> {
    let tag = el.value().name();
    let mut out = Vec::new();
    let classes: Vec<&str> = el.value().classes().filter(|c| css_ident(c)).collect();
    if let Some(id) = el.value().id() {
        let prefix = id.trim_end_matches(|c: char| c.is_ascii_digit());
        if prefix.len() < id.len() && !prefix.is_empty() && prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            out.push(format!("{tag}[id^={prefix}]"));
        } else if prefix.len() == id.len() && css_ident(id) {
            out.push(format!("#{id}"));
        }
    }
    for c in &classes {
        out.push(format!("{tag}.{c}"));
    }
    if classes.len() >= 2 {
        out.push(format!("{tag}.{}", classes.join(".")));
    }
    out.push(tag.to_owned());
    out
}

/// [`own`], then each of them under one of the parent's own selectors
/// (`div.card > header`).
pub fn with_parent(el: ElementRef) -> Vec<String> {
    let mut out = own(el);
    if let Some(parent) = el.parent().and_then(ElementRef::wrap) {
        for p in own(parent) {
            for o in own(el) {
                out.push(format!("{p} > {o}"));
            }
        }
    }
    out
}

/// Selectors for `el` inside `scope`: [`own`], then each under one of
/// its ancestors below `scope` (`header time`, `p.author a.username`).
pub fn inside(el: ElementRef, scope: NodeId) -> Vec<String> {
    let mut out = own(el);
    for anc in el.ancestors().filter_map(ElementRef::wrap).take_while(|a| a.id() != scope).take(3) {
        for a in own(anc) {
            for o in own(el) {
                out.push(format!("{a} {o}"));
            }
        }
    }
    out
}

/// Each selector of the list `css` without what it says of the element's
/// ancestors (`div.list > div.reply` → `div.reply`), the repeats dropped:
/// what still takes a post that `nested-posts` moved out of its holder.
pub fn own_part(css: &str) -> String {
    let mut seen = HashSet::new();
    css.split(',').filter_map(|part| part.trim().rsplit([' ', '>']).next()).filter(|own| !own.is_empty() && seen.insert(*own)).collect::<Vec<_>>().join(", ")
}

pub fn parse(css: &str) -> Option<Selector> {
    Selector::parse(css).ok()
}

/// Matches of `sel` in `doc` with those nested in an earlier match
/// dropped, as extract takes posts.
pub fn outermost(doc: &Html, sel: &Selector) -> Vec<NodeId> {
    let mut kept: HashSet<NodeId> = HashSet::new();
    let mut out = Vec::new();
    for e in doc.select(sel) {
        if e.ancestors().any(|a| kept.contains(&a.id())) {
            continue;
        }
        kept.insert(e.id());
        out.push(e.id());
    }
    out
}

/// Matches of `sel` inside `scope` (not `scope` itself), those nested in
/// an earlier match dropped, as extract takes quotes from a body.
pub fn outermost_in<'a>(scope: ElementRef<'a>, sel: &Selector) -> Vec<ElementRef<'a>> {
    let mut kept: HashSet<NodeId> = HashSet::new();
    let mut out = Vec::new();
    for e in scope.select(sel).filter(|e| e.id() != scope.id()) {
        if e.ancestors().any(|a| kept.contains(&a.id())) {
            continue;
        }
        kept.insert(e.id());
        out.push(e);
    }
    out
}

/// The first of `candidates` (in order, each tried once) that `fits`.
pub fn first_fitting(candidates: impl IntoIterator<Item = String>, mut fits: impl FnMut(&Selector) -> bool) -> Option<String> {
    let mut tried = HashSet::new();
    for css in candidates {
        if !tried.insert(css.clone()) {
            continue;
        }
        if let Some(sel) = parse(&css) {
            if fits(&sel) {
                return Some(css);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_selectors_prefer_numbered_ids_and_classes() {
        let doc = Html::parse_document(r#"<div id="post_12" class="pl bm"><span id="thread_subject">x</span></div>"#);
        let pick = |css: &str| doc.select(&Selector::parse(css).unwrap()).next().unwrap();
        let div = own(pick("div"));
        assert_eq!((div[0].as_str(), div.last().unwrap().as_str()), ("div[id^=post_]", "div"));
        assert!(div.contains(&"div.pl".to_owned()) && div.contains(&"div.bm".to_owned()) && div.len() == 5, "{div:?}");
        assert_eq!(own(pick("span")), ["#thread_subject", "span"]);
        let span = pick("span");
        assert!(inside(span, pick("div").id()).contains(&"#thread_subject".to_owned()));
        assert!(with_parent(span).contains(&"div.pl > span".to_owned()));
    }

    #[test]
    fn a_selectors_own_part_drops_its_ancestors() {
        assert_eq!(own_part("div.js-post, div.js-comments-list > div[id^=js-post-]"), "div.js-post, div[id^=js-post-]");
        assert_eq!(own_part("ol.children li.comment,li.comment"), "li.comment");
    }

    #[test]
    fn nested_matches_count_once() {
        let doc = Html::parse_document(r#"<div class="p"><div class="p">quoted</div></div><div class="p">b</div>"#);
        assert_eq!(outermost(&doc, &Selector::parse("div.p").unwrap()).len(), 2);
    }
}
