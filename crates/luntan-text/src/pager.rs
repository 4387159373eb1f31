//! A page's pager links without the network: its hrefs read from its bytes
//! ([`crate::hrefs`], or a DOM when that scan is unsure), resolved the way
//! crawl resolves every link and matched against the site file's patterns;
//! and a saved thread's page URLs found again from its files, as download
//! found them (download re-reads a re-queued thread's kept pages with it,
//! export the URLs of pages saved before their capture lines existed).
//!
//! A page's links are those a reader without scripts can follow
//! ([`each_link`]): `<a href>`, `<link rel="next|prev" href>`, and both
//! inside `<noscript>`, where forums that draw their pager with scripts keep
//! the one a crawler can use. Every href is resolved against the page (and
//! its `<base href>`), stripped
//! of its fragment, and kept only when it is http(s) on a host the site
//! allows: `javascript:` links, other hosts and junk never reach a pattern.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use html5ever::tendril::TendrilSink;
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{local_name, ns, ParseOpts, QualName};
use luntan_core::ids::ThreadLoc;
use luntan_core::site::{LinkMatch, LinkPattern, Site};
use luntan_core::store::ThreadRow;
use luntan_core::DataDir;
use scraper::{ElementRef, Html, HtmlTreeSink, Selector};
use url::Url;

use crate::hrefs::{is_pager_rel, Page};

/// Decodes a fetched page the way `extract` would, so anchor texts and
/// titles on GBK or Big5 list pages come out right.
pub fn decode(site: &Site, body: &[u8], content_type: Option<&str>) -> String {
    crate::encoding::detect_and_decode(body, content_type, site.encoding, None).1.text
}

/// `a[href]`.
pub fn anchors() -> &'static Selector {
    static S: OnceLock<Selector> = OnceLock::new();
    S.get_or_init(|| Selector::parse("a[href]").expect("static selector"))
}

/// The elements [`each_link`] looks at, in one pass in page order.
fn link_holders() -> &'static Selector {
    static S: OnceLock<Selector> = OnceLock::new();
    S.get_or_init(|| Selector::parse("a[href], link[href], noscript").expect("static selector"))
}

/// One link a reader without scripts can follow, as [`each_link`] hands
/// it over.
#[derive(Debug, Clone, Copy)]
pub struct DomLink<'a> {
    /// The `<a>` or `<link>`. Inside a `<noscript>` it is an element of the
    /// tree that `<noscript>`'s text was parsed into, which lives only for
    /// the call.
    pub el: ElementRef<'a>,
    pub href: &'a str,
    /// A `<link rel="next|prev">`: no text of its own, a pager's by its `rel`.
    pub rel_link: bool,
}

/// Hands `f` every link under `root` (the whole page when `None`) that a
/// reader without scripts can follow, in page order: each `a[href]`, as
/// [`anchors`] selects them; each HTML `<link href>` whose `rel` has the
/// token `next` or `prev` ([`is_pager_rel`]); and both of these inside
/// every HTML `<noscript>`. html5ever parses with scripting on, as browsers
/// do, and so keeps a `<noscript>`'s content as one raw text; that text is
/// parsed here as the fragment a browser with scripting off builds of it.
/// [`crate::hrefs::scan`] finds the same hrefs from a page's bytes.
pub fn each_link<'d>(doc: &'d Html, root: Option<ElementRef<'d>>, mut f: impl FnMut(DomLink<'_>)) {
    let holders: Box<dyn Iterator<Item = ElementRef<'d>>> = match root {
        Some(r) => Box::new(r.select(link_holders())),
        None => Box::new(doc.select(link_holders())),
    };
    for el in holders {
        if el.value().name() == "noscript" && el.value().name.ns == ns!(html) {
            let text: String = el.text().collect();
            // A `<noscript>` in the fragment is an ordinary element: its
            // links are met on their own.
            for inner in unscripted_fragment(&text).select(link_holders()) {
                visit(inner, &mut f);
            }
        } else {
            visit(el, &mut f);
        }
    }
}

fn visit(el: ElementRef<'_>, f: &mut impl FnMut(DomLink<'_>)) {
    let e = el.value();
    let Some(href) = e.attr("href") else { return };
    match e.name() {
        "a" => f(DomLink { el, href, rel_link: false }),
        "link" if e.name.ns == ns!(html) && e.attr("rel").is_some_and(|r| is_pager_rel(r.as_bytes())) => f(DomLink { el, href, rel_link: true }),
        _ => {}
    }
}

/// `text` parsed as the children of a `<body>`, with scripting off.
fn unscripted_fragment(text: &str) -> Html {
    let opts = ParseOpts { tree_builder: TreeBuilderOpts { scripting_enabled: false, ..TreeBuilderOpts::default() }, ..ParseOpts::default() };
    let context = QualName::new(None, ns!(html), local_name!("body"));
    html5ever::parse_fragment(HtmlTreeSink::new(Html::new_fragment()), opts, context, Vec::new(), false).one(text)
}

fn base_href() -> &'static Selector {
    static S: OnceLock<Selector> = OnceLock::new();
    S.get_or_init(|| Selector::parse("base[href]").expect("static selector"))
}

/// The URL relative links on `doc` resolve against.
pub fn base_url(doc: &Html, page: &Url) -> Url {
    doc.select(base_href()).next().and_then(|b| b.value().attr("href")).and_then(|h| page.join(h.trim()).ok()).unwrap_or_else(|| page.clone())
}

/// Resolves one href; `None` for anything luntan would never fetch.
pub fn resolve(site: &Site, base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    let mut url = base.join(href).ok()?;
    if !matches!(url.scheme(), "http" | "https") || !site.host_allowed(&url) {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

/// Later pages of one board or thread linked from `doc` ([`each_link`]):
/// `(page value, url)` for links whose `key` capture equals `id` and that
/// are not the first page.
pub fn page_links(site: &Site, doc: &Html, base: &Url, pattern: &LinkPattern, id: &str, key: fn(&LinkMatch) -> Option<&str>) -> Vec<(u64, Url)> {
    let mut hrefs = Vec::new();
    each_link(doc, None, |l| hrefs.push(l.href.to_owned()));
    pages_among(site, hrefs.iter().map(String::as_str), base, pattern, id, key)
}

/// [`page_links`] for a fetched page that is needed for nothing else, read
/// from its bytes: the DOM is built only when [`crate::hrefs`] cannot be sure of
/// the page's links without one.
pub fn page_links_in(
    site: &Site,
    body: &[u8],
    content_type: Option<&str>,
    page: &Url,
    pattern: &LinkPattern,
    id: &str,
    key: fn(&LinkMatch) -> Option<&str>,
) -> Vec<(u64, Url)> {
    match (Page { body, content_type, forced: site.encoding }).hrefs() {
        Ok(found) => {
            let base = found.base.as_deref().and_then(|h| page.join(h.trim()).ok()).unwrap_or_else(|| page.clone());
            pages_among(site, found.anchors.iter().map(|h| &**h), &base, pattern, id, key)
        }
        Err(why) => {
            tracing::debug!("{page}: links read through a DOM: {why}");
            let doc = Html::parse_document(&decode(site, body, content_type));
            page_links(site, &doc, &base_url(&doc, page), pattern, id, key)
        }
    }
}

fn pages_among<'a>(
    site: &Site,
    hrefs: impl Iterator<Item = &'a str>,
    base: &Url,
    pattern: &LinkPattern,
    id: &str,
    key: fn(&LinkMatch) -> Option<&str>,
) -> Vec<(u64, Url)> {
    let mut out: Vec<(u64, Url)> = Vec::new();
    for url in hrefs.filter_map(|h| resolve(site, base, h)) {
        // Refused ids never name a page: only matches count.
        let Some(Ok(m)) = pattern.captures(url.as_str()) else { continue };
        if key(&m) != Some(id) || pattern.is_first(m.page) {
            continue;
        }
        let page = m.page.expect("is_first(None) is true");
        if !out.iter().any(|(p, _)| *p == page) {
            out.push((page, url));
        }
    }
    out
}

/// The URL of each page of a saved thread (its row's save date, page
/// count and URL), found as download finds them (its `kept_pages`), for
/// pages saved before download kept each page's URL (`article<T>.http`).
/// `None` when they cannot be told: no pager pattern in the site file, a
/// page missing, or a page naming no later one.
pub fn stored_page_urls(data: &DataDir, site: &Site, row: &ThreadRow) -> Option<Vec<Url>> {
    let url = Url::parse(&row.url).ok()?;
    let n = usize::try_from(row.pages?).ok()?;
    if n <= 1 {
        return Some(vec![url]);
    }
    let old = row.saved_location()?;
    let (urls, _) = stored_pages(data, site, row, &old, &url, &row.thread, n - 1)?;
    (urls.len() >= n).then(|| urls.into_values().take(n).collect())
}

/// Pages `1..=upto` of the thread saved at `old`, read from disk, with the
/// page values and URLs that page 1's `url` and their pagers give, in page
/// order: page `k` is the `k`-th page value. `None` when the site file has
/// no pager pattern, or a page is missing or not linked from those before it.
#[allow(clippy::type_complexity)]
pub fn stored_pages(
    data: &DataDir,
    site: &Site,
    row: &ThreadRow,
    old: &ThreadLoc,
    url: &Url,
    thread: &str,
    upto: usize,
) -> Option<(BTreeMap<u64, Url>, Vec<(u64, Url, Vec<u8>)>)> {
    let pattern = site.links.thread_page.as_ref()?;
    let mut urls: BTreeMap<u64, Url> = BTreeMap::from([(pattern.first_page, url.clone())]);
    let mut read = Vec::with_capacity(upto);
    for k in 1..=upto {
        let (&value, page_url) = urls.iter().nth(k - 1)?;
        let page_url = page_url.clone();
        let body = std::fs::read(data.html_path(old, k as u32)).ok()?;
        for (v, u) in page_links_in(site, &body, row.content_type.as_deref(), &page_url, pattern, thread, |m| m.thread.as_deref()) {
            urls.entry(v).or_insert(u);
        }
        read.push((value, page_url, body));
    }
    Some((urls, read))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (href, text, rel_link) of every link [`each_link`] hands over.
    fn links_of(doc: &Html, root: Option<ElementRef<'_>>) -> Vec<(String, String, bool)> {
        let mut out = Vec::new();
        each_link(doc, root, |l| out.push((l.href.to_owned(), l.el.text().collect(), l.rel_link)));
        out
    }

    #[test]
    fn each_link_reads_noscript_as_markup_and_link_rel_as_a_pager() {
        let doc = Html::parse_document(
            r#"<head><link rel="next" href="?page=2"><link rel=stylesheet href=a.css></head>
               <body><a href="/t/1">一</a><div class=row><noscript><ul class=pagination><li><a href="?page=2">2</a>
               <li><a href="?page=3">下一页</a></ul><script>x()</script><a href=after-script>x</a></noscript></div>
               <svg><noscript><a href=svg-a>s</a></noscript></svg><a name=no-href></a><a href="/t/2">二</a>"#,
        );
        let want = |v: &[(&str, &str, bool)]| v.iter().map(|(h, t, r)| (h.to_string(), t.to_string(), *r)).collect::<Vec<_>>();
        // An `<a>` in SVG is met as `a[href]` met it before (the byte scan
        // leaves such pages to the DOM); an SVG `<noscript>` is SVG's.
        assert_eq!(
            links_of(&doc, None),
            want(&[
                ("?page=2", "", true),
                ("/t/1", "一", false),
                ("?page=2", "2", false),
                ("?page=3", "下一页", false),
                ("after-script", "x", false),
                ("svg-a", "s", false),
                ("/t/2", "二", false),
            ])
        );
        let row = doc.select(&Selector::parse("div.row").unwrap()).next().unwrap();
        assert_eq!(links_of(&doc, Some(row)), want(&[("?page=2", "2", false), ("?page=3", "下一页", false), ("after-script", "x", false)]));
        // The page's `<base>` is read as before, never from a `<noscript>`.
        let doc = Html::parse_document(r#"<noscript><base href="/other/"></noscript><a href=x>"#);
        let page = Url::parse("http://forum.test/bbs/list").unwrap();
        assert_eq!(base_url(&doc, &page), page);
    }
}
