//! Version 2's fields from a page's DOM, by the site file's
//! [`Conversation`] rules: a post's id, its author's id and profile, what
//! it answers, its edit time, counts and location label; the links and
//! pictures in its own text; the thread's board name and counts; and the
//! URLs among them resolved as the page's reader would resolve them.

use std::collections::HashSet;

use ego_tree::NodeId;
use luntan_core::dates::Clock;
use luntan_core::doc::{Image, Link};
use luntan_core::site::{Conversation, Field, Pick};
use luntan_core::Post;
use scraper::{ElementRef, Html, Selector};
use url::Url;

use crate::page::ThreadFacts;
use crate::text::{line_text, value_of, SKIPPED};

/// Where one post's fields are looked up.
#[derive(Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// Inside the post's element, the element itself first (`table[id^=pid]@id`).
    Post(ElementRef<'a>),
    /// The `n`th match on the page: posts without a `post` selector are
    /// paired with their fields by order, as their authors and times are.
    Page(&'a Html, usize),
}

impl<'a> Scope<'a> {
    fn first(self, pick: &Pick) -> Option<ElementRef<'a>> {
        match self {
            Scope::Post(p) => first_in_post(p, pick),
            Scope::Page(doc, n) => doc.select(pick).nth(n),
        }
    }

    /// The field's value as its element shows it, cut by its pattern.
    fn read(self, field: Option<&Field>) -> Option<String> {
        let f = field?;
        f.capture(&value_of(self.first(&f.pick)?, &f.pick))
    }

    fn count(self, field: Option<&Field>) -> Option<u64> {
        let f = field?;
        f.count(&value_of(self.first(&f.pick)?, &f.pick))
    }
}

// The learner checks its candidate rules with the three readers below, so
// a rule it writes reads exactly what extract will read.

/// The element a post field's selector takes: the post element itself
/// when it matches (`table[id^=pid]@id`), else the first match inside.
pub fn first_in_post<'a>(post: ElementRef<'a>, sel: &Selector) -> Option<ElementRef<'a>> {
    if sel.matches(&post) {
        Some(post)
    } else {
        post.select(sel).next()
    }
}

/// A post field's value: its element (as [`first_in_post`] finds it), its
/// text or `css@attr`, cut by the field's pattern.
pub fn read_in_post(post: ElementRef, field: &Field) -> Option<String> {
    Scope::Post(post).read(Some(field))
}

/// What a field shows inside `el` (a quote's `quote-of`, `quote-author`,
/// before its pattern cuts it): the first match below it, its text or
/// attribute.
pub fn shown_inside(el: ElementRef, pick: &Pick) -> Option<String> {
    Some(value_of(el.select(pick).next()?, pick))
}

/// The element just before `quote` (white space between, and what
/// `strip` takes) where `intro` matches it: what introduces the quote
/// (`quote-intro`). HyperKitty draws a fold control between a mail's
/// "张伟 写道:" and its quote, which a site file strips.
pub fn quote_intro<'a>(quote: ElementRef<'a>, intro: &Selector, strip: Option<&Selector>) -> Option<ElementRef<'a>> {
    let stripped = |n: &ego_tree::NodeRef<'a, scraper::Node>| strip.is_some_and(|s| ElementRef::wrap(*n).is_some_and(|e| s.matches(&e)));
    let before = quote.prev_siblings().find(|n| !n.value().as_text().is_some_and(|t| t.trim().is_empty()) && !stripped(n))?;
    ElementRef::wrap(before).filter(|b| intro.matches(b))
}

/// What a quote's `quote-of` or `quote-author` shows (before its pattern
/// cuts it): in the quote's intro where it has one (the intro itself
/// first), else inside the quote, since a quote of a quoting post holds
/// the inner quote's intro, which names another post.
pub fn shown_for_quote(quote: ElementRef, intro: Option<ElementRef>, pick: &Pick) -> Option<String> {
    match intro {
        Some(i) => Some(value_of(first_in_post(i, pick)?, pick)),
        None => shown_inside(quote, pick),
    }
}

/// Fills `post`'s version 2 fields found in `scope`. An explicit
/// `reply-to` wins over the post a quote links to; `edited` is read as a
/// time on the post's `clock`.
pub(crate) fn read_post(post: &mut Post, scope: Scope, c: &Conversation, clock: Clock) {
    post.id = scope.read(c.post_id.as_ref());
    post.author_id = scope.read(c.author_id.as_ref());
    post.author_url = scope.read(c.author_url.as_ref());
    if let Some(to) = scope.read(c.reply_to.as_ref()) {
        post.reply_to = Some(to);
    }
    post.edited = scope.read(c.edited.as_ref()).and_then(|shown| clock.attribute(&shown));
    post.likes = scope.count(c.likes.as_ref());
    post.location = scope.read(c.location.as_ref());
}

/// The thread's board name and counts as the page shows them.
pub(crate) fn read_thread(doc: &Html, c: &Conversation) -> ThreadFacts {
    let scope = Scope::Page(doc, 0);
    ThreadFacts { board_name: scope.read(c.board_name.as_ref()), replies: scope.count(c.thread_replies.as_ref()), views: scope.count(c.thread_views.as_ref()) }
}

/// The links and pictures of a body's own text: not inside a quote, a
/// stripped element or an element whose text is never read (`script`,
/// `noscript`, …), in page order, their URLs as the page writes them.
pub(crate) fn media(body: ElementRef, c: &Conversation, strip: Option<&Selector>, quoted: &HashSet<NodeId>) -> (Vec<Link>, Vec<Image>) {
    if c.links.is_none() && c.images.is_none() {
        return (Vec::new(), Vec::new());
    }
    let mut left_out: HashSet<NodeId> = strip.map(|s| body.select(s).map(|e| e.id()).collect()).unwrap_or_default();
    left_out.extend(quoted.iter().copied());
    let own = |e: &ElementRef| {
        std::iter::once(*e)
            .chain(e.ancestors().filter_map(ElementRef::wrap))
            .take_while(|a| a.id() != body.id())
            .all(|a| !left_out.contains(&a.id()) && !SKIPPED.contains(&a.value().name()))
    };
    let url_in = |e: ElementRef, pick: &Pick, default: &str| -> Option<String> {
        let v = e.value().attr(pick.attr.as_deref().unwrap_or(default))?.trim();
        (!v.is_empty()).then(|| v.to_owned())
    };
    let links = match &c.links {
        Some(pick) => body.select(pick).filter(own).filter_map(|e| Some(Link { href: url_in(e, pick, "href")?, text: line_text(e) })).collect(),
        None => Vec::new(),
    };
    let images = match &c.images {
        Some(pick) => body
            .select(pick)
            .filter(own)
            .filter_map(|e| {
                Some(Image {
                    src: url_in(e, pick, "src")?,
                    alt: e.value().attr("alt").map(|a| a.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default(),
                })
            })
            .collect(),
        None => Vec::new(),
    };
    (links, images)
}

/// The page's `<base href>`, as written.
pub(crate) fn base_href(doc: &Html) -> Option<String> {
    static BASE: std::sync::OnceLock<Selector> = std::sync::OnceLock::new();
    let sel = BASE.get_or_init(|| Selector::parse("base[href]").expect("static selector"));
    doc.select(sel).next().and_then(|b| b.value().attr("href")).map(|h| h.trim().to_owned())
}

/// Resolves the URLs of `posts` (author profiles, links, pictures) as a
/// browser on the page would: against the page's `<base href>`, itself
/// resolved against the page's URL. Only http(s) URLs are kept: a
/// `javascript:` link or a `data:` picture is not something that spreads.
/// The thread's first URL stands for every page's, as the forums luntan
/// reads keep a thread's pages in one directory.
pub(crate) fn resolve(posts: &mut [Post], page_url: &str, base: Option<&str>) {
    if posts.iter().all(|p| p.author_url.is_none() && p.links.is_empty() && p.images.is_empty()) {
        return;
    }
    let Ok(page) = Url::parse(page_url) else { return };
    let base = base.and_then(|b| page.join(b).ok()).unwrap_or(page);
    let web = |u: &str| base.join(u).ok().filter(|u| matches!(u.scheme(), "http" | "https")).map(String::from);
    for p in posts {
        p.author_url = p.author_url.as_deref().and_then(web);
        p.links.retain_mut(|l| web(&l.href).map(|h| l.href = h).is_some());
        p.images.retain_mut(|i| web(&i.src).map(|s| i.src = s).is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_resolve_against_the_base_and_only_web_ones_stay() {
        let mut posts = vec![Post {
            author_url: Some("home.php?mod=space&uid=7".into()),
            links: vec![
                Link { href: "thread-9-1-1.html".into(), text: "a".into() },
                Link { href: "javascript:;".into(), text: "b".into() },
                Link { href: "//cdn.example/x".into(), text: "c".into() },
            ],
            images: vec![Image { src: "data:image/gif;base64,R0lG".into(), alt: String::new() }, Image { src: "/a.jpg".into(), alt: "图".into() }],
            ..Post::default()
        }];
        resolve(&mut posts, "http://bbs.example/dzx/thread-7-2-1.html", Some("/dzx/"));
        let p = &posts[0];
        assert_eq!(p.author_url.as_deref(), Some("http://bbs.example/dzx/home.php?mod=space&uid=7"));
        assert_eq!(p.links.iter().map(|l| l.href.as_str()).collect::<Vec<_>>(), ["http://bbs.example/dzx/thread-9-1-1.html", "http://cdn.example/x"]);
        assert_eq!(p.images, [Image { src: "http://bbs.example/a.jpg".into(), alt: "图".into() }]);
    }
}
