//! A page's pager links without the network: its hrefs read from its bytes
//! ([`crate::hrefs`], or a DOM when that scan is unsure), resolved the way
//! crawl resolves every link and matched against the site file's patterns;
//! and a saved thread's page URLs found again from its files, as download
//! found them (download re-reads a re-queued thread's kept pages with it,
//! export the URLs of pages saved before their capture lines existed).
//!
//! Every href is resolved against the page (and its `<base href>`), stripped
//! of its fragment, and kept only when it is http(s) on a host the site
//! allows: `javascript:` links, other hosts and junk never reach a pattern.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use luntan_core::ids::ThreadLoc;
use luntan_core::site::{LinkMatch, LinkPattern, Site};
use luntan_core::store::ThreadRow;
use luntan_core::DataDir;
use scraper::{Html, Selector};
use url::Url;

use crate::hrefs::Page;

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

/// Later pages of one board or thread linked from `doc`: `(page value, url)`
/// for links whose `key` capture equals `id` and that are not the first page.
pub fn page_links(site: &Site, doc: &Html, base: &Url, pattern: &LinkPattern, id: &str, key: fn(&LinkMatch) -> Option<&str>) -> Vec<(u64, Url)> {
    pages_among(site, doc.select(anchors()).filter_map(|a| a.value().attr("href")), base, pattern, id, key)
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
