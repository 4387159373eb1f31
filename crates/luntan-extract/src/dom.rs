//! Lookups in a page's DOM by the site file's rules that the selector path
//! (`parse.rs`) and `post="auto"` (`template.rs`) both make: the thread
//! title and the body inside a post.

use std::sync::OnceLock;

use luntan_core::site::ThreadRules;
use scraper::{ElementRef, Html, Selector};

use crate::text::{line_text, value_of};

fn title_selector() -> &'static Selector {
    static S: OnceLock<Selector> = OnceLock::new();
    S.get_or_init(|| Selector::parse("title").expect("static selector"))
}

/// The thread title: by the site file's selector, else the page's `<title>`.
pub(crate) fn page_title(doc: &Html, rules: &ThreadRules) -> Option<String> {
    match &rules.title {
        Some(pick) => doc.select(pick).next().map(|e| value_of(e, pick)),
        None => doc.select(title_selector()).next().map(line_text),
    }
    .filter(|t| !t.is_empty())
}

/// The body inside one post element: by selector, else by id pattern. The
/// post element itself may be the body.
pub(crate) fn body_in<'a>(rules: &ThreadRules, post: ElementRef<'a>) -> Option<ElementRef<'a>> {
    if let Some(sel) = &rules.body {
        if sel.matches(&post) {
            return Some(post);
        }
        if let Some(b) = post.select(sel).next() {
            return Some(b);
        }
    }
    let re = rules.body_id.as_ref()?;
    std::iter::once(post).chain(post.descendent_elements()).find(|e| e.value().id().is_some_and(|id| re.is_match(id)))
}
