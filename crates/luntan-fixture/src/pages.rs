//! Routing and what every forum's pages share: a path and query in,
//! encoded bytes out.
//!
//! Markup follows the real software closely enough that a site file written
//! for the real thing would mostly work, each forum in a file of its own:
//! Discuz! X3's table layout and ids ([`dz`]), phpBB 3's prosilver lists
//! ([`phpbb`]), a modern nested-div forum ([`bbs`]); and, served only when
//! asked for, Discuz! X3.4 with rewritten URLs ([`dzx`]), a PHPWind-style
//! forum ([`nx`]) and a NodeBB-style one as it renders for clients without
//! JavaScript ([`md`]). Here: the dispatch to them, the routes every forum takes
//! (lists and threads by number, deleted threads, hostile mode's decoys and
//! traps), the query string, the pager's parts and the escaping helpers.

use std::fmt::Write as _;

use crate::hostile;
use crate::kind::ForumKind;
use crate::model::{canonical_page, BoardMeta, Fixture, ForumModel, ThreadMeta};
use crate::text::esc_into;

mod bbs;
mod dz;
mod dzx;
mod md;
mod nx;
mod phpbb;

#[cfg(test)]
pub(crate) use bbs::raw_slug_path;

/// A response the fixture produces for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureResponse {
    pub status: u16,
    /// The `Content-Type` header value.
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

/// The server's `/robots.txt`: disallows only pages no site file targets.
pub const ROBOTS_TXT: &str = "User-agent: *\n\
Disallow: /dz/admin.php\n\
Disallow: /dz/home.php\n\
Disallow: /phpbb/memberlist.php\n\
Disallow: /phpbb/ucp.php\n\
Disallow: /bbs/search\n";

/// What the fixture sends for anything it does not know.
const NOT_FOUND: &str = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n\
<body><h1>404 Not Found</h1><p>No such page.</p></body></html>\n";

const AD_URL: &str = "http://ads.example.invalid/";

impl Fixture {
    /// Answers a request for `path_and_query` (`/dz/forum.php?mod=…`) without
    /// any HTTP: what the server sends, byte for byte (before any gzip).
    pub fn get(&self, path_and_query: &str) -> FixtureResponse {
        if let Some(latest) = self.latest() {
            return latest.get(path_and_query);
        }
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, q),
            None => (path_and_query, ""),
        };
        if path == "/robots.txt" {
            return FixtureResponse { status: 200, content_type: "text/plain", body: self.robots_txt().into_bytes() };
        }
        let Some(kind) = ForumKind::of_path(path) else {
            return not_found();
        };
        let Some(f) = self.forum(kind) else {
            return not_found();
        };
        let Some(q) = Query::parse(query) else {
            return not_found();
        };
        let rest = &path[kind.site_id().len() + 2..];
        let page = match kind {
            ForumKind::Discuz => self.route_dz(f, rest, &q),
            ForumKind::Phpbb => self.route_phpbb(f, rest, &q),
            ForumKind::Bbs => self.route_bbs(f, rest, &q),
            ForumKind::DiscuzX => self.route_dzx(f, rest, &q),
            ForumKind::Nexus => self.route_nx(f, rest, &q),
            ForumKind::Modern => self.route_md(f, rest, &q),
        };
        match page {
            Routed::Page(html, shown) if self.config().hostility.is_on() => self.hostile_page(f, html, shown, path_and_query),
            Routed::Page(html, _) => encode(kind, 200, &html),
            Routed::Gone(html) => encode(kind, 404, &html),
            Routed::Redirect(html) => encode(kind, 302, &html),
            Routed::File(content_type, body) => FixtureResponse { status: 200, content_type, body },
            Routed::NotFound => not_found(),
        }
    }

    /// Where a redirecting page sends the reader (path from the server root,
    /// perhaps with a `#fragment`), for the `Location` of the `302` that
    /// [`Fixture::get`] answers it with: Discuz! X's `forum.php?mod=redirect&…`,
    /// the NodeBB-style forum's `post/{pid}`.
    pub(crate) fn redirect_target(&self, path_and_query: &str) -> Option<String> {
        if let Some(latest) = self.latest() {
            return latest.redirect_target(path_and_query);
        }
        if let Some(pid) = path_and_query.strip_prefix("/md/post/") {
            return self.md_post_target(self.forum(ForumKind::Modern)?, pid);
        }
        let query = path_and_query.strip_prefix("/dzx/forum.php?")?;
        let f = self.forum(ForumKind::DiscuzX)?;
        let q = Query::parse(query)?;
        if q.get("mod") != Some("redirect") {
            return None;
        }
        self.dzx_redirect(f, &q)
    }

    /// The content traps hostile mode sets on a thread page (`mislabelled`,
    /// `invalid-bytes`, `big`), for tests that want to say why a page went wrong.
    pub fn content_traps(&self, path_and_query: &str) -> Vec<&'static str> {
        let h = &self.config().hostility;
        let key = hostile::request_key(path_and_query);
        let mut out = Vec::new();
        if h.mislabelled(&key) {
            out.push("mislabelled");
        }
        if h.has_invalid_bytes(&key) {
            out.push("invalid-bytes");
        }
        let page1_key = hostile::request_key(&canonical_page(path_and_query));
        let page1 =
            self.forums.iter().find_map(|f| f.threads.iter().find(|t| hostile::request_key(&f.thread_path(t, 1)) == page1_key).map(|t| (f.kind, t.tid)));
        if page1.is_some_and(|(kind, tid)| h.is_big(kind, tid)) {
            out.push("big");
        }
        out
    }

    /// [`ROBOTS_TXT`], plus in hostile mode a `Crawl-delay` and a `Disallow`
    /// for each [`hostile::PermanentFault::RobotsDisallowed`] thread, and the
    /// search URLs when the search behaves like Discuz!'s.
    fn robots_txt(&self) -> String {
        let mut out = ROBOTS_TXT.to_owned();
        let h = &self.config().hostility;
        if let Some(d) = h.crawl_delay {
            let _ = writeln!(out, "Crawl-delay: {}", d.as_millis() as f64 / 1000.0);
        }
        for f in &self.forums {
            let mut disallowed: Vec<String> = f
                .faults
                .iter()
                .filter(|(_, p)| **p == hostile::PermanentFault::RobotsDisallowed)
                .filter_map(|(tid, _)| f.thread(*tid))
                .map(|t| match f.kind {
                    // Page 1 under every list page's name (`thread-T-1-*`).
                    ForumKind::DiscuzX => format!("Disallow: /dzx/thread-{}-1-\n", t.tid),
                    // Page 1 with and without the list page it was found on.
                    ForumKind::Nexus => format!("Disallow: {p}$\nDisallow: {p}&fpage=\n", p = f.thread_path(t, 1)),
                    // `$` anchors it: later pages and other threads stay allowed.
                    _ => format!("Disallow: {}$\n", f.thread_path(t, 1)),
                })
                .collect();
            disallowed.sort();
            for p in disallowed {
                out.push_str(&p);
            }
        }
        // What the extra forums' own software keeps crawlers out of.
        if self.forum(ForumKind::DiscuzX).is_some() {
            out.push_str(dzx::ROBOTS_TXT);
        }
        if self.forum(ForumKind::Nexus).is_some() {
            out.push_str(nx::ROBOTS_TXT);
        }
        if self.forum(ForumKind::Modern).is_some() {
            out.push_str(md::ROBOTS_TXT);
        }
        let a = &self.config().activity;
        if a.search_mode == crate::config::SearchMode::SearchId && !a.robots_allow_search {
            // Stock Discuz! keeps crawlers out of its search.
            out.push_str("Disallow: /dz/search.php\nDisallow: /phpbb/search.php\nDisallow: /bbs/find\n");
        }
        out
    }

    /// A page with hostile mode's content traps: links that lead out of the
    /// forum or the data directory, a wrong charset, invalid bytes, padding.
    /// None of them changes what the page's posts say.
    fn hostile_page(&self, f: &ForumModel, mut html: String, shown: Shown, path_and_query: &str) -> FixtureResponse {
        let h = &self.config().hostility;
        let kind = f.kind;
        if h.links {
            let links = hostile::hostile_links_html(kind, &h.other_host, matches!(shown, Shown::List));
            let at = html.rfind("</body>").unwrap_or(html.len());
            html.insert_str(at, &links);
        }
        let mut page = encode(kind, 200, &html);
        if let Shown::Thread { tid, page: n } = shown {
            let key = hostile::request_key(path_and_query);
            if h.mislabelled(&key) {
                page.content_type = hostile::mislabelled_content_type(kind);
            }
            if h.has_invalid_bytes(&key) {
                hostile::insert_before_body_end(&mut page.body, hostile::invalid_bytes(kind));
            }
            if n == 1 && h.is_big(kind, tid) {
                hostile::insert_before_body_end(&mut page.body, &hostile::padding(kind, h.big_bytes));
            }
        }
        page
    }

    /// What a crafted thread id gets in hostile mode: a real thread's first
    /// page, so a crawler that trusted the id would have something to save.
    fn decoy_thread(&self, f: &ForumModel) -> Routed {
        match f.threads.iter().find(|t| !t.deleted) {
            Some(t) => Routed::Page(self.thread_html(f, t, 1), Shown::Thread { tid: t.tid, page: 1 }),
            None => Routed::NotFound,
        }
    }

    /// What a crafted board id gets in hostile mode: a real board's list.
    fn decoy_list(&self, f: &ForumModel) -> Routed {
        Routed::Page(self.list_html(f, &f.boards[0], 1), Shown::List)
    }

    /// Page `page` of board `b`, where the board is known and has that page.
    fn list_route(&self, f: &ForumModel, b: Option<&BoardMeta>, page: Option<usize>) -> Routed {
        match (b, page) {
            (Some(b), Some(p)) if (1..=f.list_pages(b)).contains(&p) => Routed::Page(self.list_html(f, b, p), Shown::List),
            _ => Routed::NotFound,
        }
    }

    /// Page `page` of thread `t`, where the thread is known and has that
    /// page; a deleted thread answers with the forum's own notice, whatever
    /// the page.
    fn thread_route(&self, f: &ForumModel, t: Option<&ThreadMeta>, page: Option<usize>) -> Routed {
        let Some(t) = t else {
            return Routed::NotFound;
        };
        if t.deleted {
            let gone = match f.kind {
                ForumKind::Discuz => dz::gone(f),
                ForumKind::Phpbb => phpbb::gone(f),
                ForumKind::Bbs => bbs::gone(f),
                ForumKind::DiscuzX => dzx::gone(f),
                ForumKind::Nexus => nx::gone(f),
                ForumKind::Modern => md::gone(f),
            };
            return Routed::Gone(gone);
        }
        match page {
            Some(p) if (1..=f.thread_pages(t)).contains(&p) => Routed::Page(self.thread_html(f, t, p), Shown::Thread { tid: t.tid, page: p }),
            _ => Routed::NotFound,
        }
    }

    fn list_html(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        match f.kind {
            ForumKind::Discuz => self.dz_list(f, b, page),
            ForumKind::Phpbb => self.phpbb_list(f, b, page),
            ForumKind::Bbs => self.bbs_list(f, b, page),
            ForumKind::DiscuzX => self.dzx_list(f, b, page, dzx::Filter::All),
            ForumKind::Nexus => self.nx_list(f, b, page),
            ForumKind::Modern => self.md_list(f, b, page),
        }
    }

    fn thread_html(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        match f.kind {
            ForumKind::Discuz => self.dz_thread(f, t, page),
            ForumKind::Phpbb => self.phpbb_thread(f, t, page),
            ForumKind::Bbs => self.bbs_thread(f, t, page),
            ForumKind::DiscuzX => self.dzx_thread(f, t, page, 1),
            ForumKind::Nexus => self.nx_thread(f, t, page, 1),
            ForumKind::Modern => self.md_thread(f, t, page),
        }
    }

    fn crafted(&self, id: Option<&str>) -> bool {
        self.config().hostility.links && id.is_some_and(hostile::is_crafted)
    }
}

/// What kind of page a route rendered (hostile mode treats them differently).
#[derive(Debug, Clone, Copy)]
enum Shown {
    Home,
    List,
    Thread {
        tid: u64,
        page: usize,
    },
    /// Another view of a thread (one author's posts, a print view) or a notice.
    Other,
}

enum Routed {
    Page(String, Shown),
    /// A thread that was deleted: the forum's own "not found" page, status 404.
    Gone(String),
    /// A `302`'s body; the server sends it with [`Fixture::redirect_target`] as `Location`.
    Redirect(String),
    /// A file served as it is (an attachment's picture), of this type.
    File(&'static str, Vec<u8>),
    NotFound,
}

fn not_found() -> FixtureResponse {
    FixtureResponse { status: 404, content_type: "text/html", body: NOT_FOUND.as_bytes().to_vec() }
}

fn encode(kind: ForumKind, status: u16, html: &str) -> FixtureResponse {
    // encoding_rs writes characters the encoding lacks (the emoji) as
    // decimal numeric character references, as browsers do for forms.
    let (bytes, _, _) = kind.encoding().encode(html);
    let content_type = match kind {
        // Discuz! X says `gbk` in its meta tag only.
        ForumKind::Discuz | ForumKind::Bbs | ForumKind::DiscuzX => "text/html",
        ForumKind::Phpbb => "text/html; charset=big5",
        // The PHPWind-style forum says UTF-8 in the header only; NodeBB
        // (Express) in the header and a meta tag.
        ForumKind::Nexus | ForumKind::Modern => "text/html; charset=utf-8",
    };
    FixtureResponse { status, content_type, body: bytes.into_owned() }
}

/// A query string as `key=value` pairs; `None` when it repeats a key.
struct Query<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Query<'a> {
    fn parse(q: &'a str) -> Option<Query<'a>> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for part in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            if pairs.iter().any(|(seen, _)| *seen == k) {
                return None;
            }
            pairs.push((k, v));
        }
        Some(Query(pairs))
    }
    fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Whether every key is one of `allowed` (unknown parameters mean a page we do not have).
    fn only(&self, allowed: &[&str]) -> bool {
        self.0.iter().all(|(k, _)| allowed.contains(k))
    }
    /// The key as a number, `default` when absent, `None` when not a number.
    fn number(&self, key: &str, default: usize) -> Option<usize> {
        match self.get(key) {
            None => Some(default),
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => v.parse().ok(),
            Some(_) => None,
        }
    }
}

/// What a pager shows, in order: every forum kind shows the same parts
/// (up to ten numbers around the current page, the first and last when
/// outside them, previous and next) in its own markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PagerPart {
    Prev(usize),
    /// Page 1, when the numbers do not reach it.
    First,
    Number(usize),
    Current(usize),
    /// The last page, when the numbers do not reach it.
    Last(usize),
    Next(usize),
}

fn pager_parts(page: usize, pages: usize) -> Vec<PagerPart> {
    let lo = page.saturating_sub(4).max(1);
    let hi = (lo + 9).min(pages);
    let lo = hi.saturating_sub(9).max(1);
    let mut parts = Vec::with_capacity(14);
    if page > 1 {
        parts.push(PagerPart::Prev(page - 1));
    }
    if lo > 1 {
        parts.push(PagerPart::First);
    }
    parts.extend((lo..=hi).map(|k| if k == page { PagerPart::Current(k) } else { PagerPart::Number(k) }));
    if hi < pages {
        parts.push(PagerPart::Last(pages));
    }
    if page < pages {
        parts.push(PagerPart::Next(page + 1));
    }
    parts
}

/// `before` (which ends in `href="`), the escaped `url`, then `rest`.
fn link(out: &mut String, before: &str, url: &str, rest: &str) {
    out.push_str(before);
    href(out, url);
    out.push_str(rest);
}

fn esc(out: &mut String, s: &str) {
    esc_into(out, s);
}

/// Appends a relative URL (with `&`) as an attribute value (with `&amp;`).
fn href(out: &mut String, url: &str) {
    esc_into(out, url);
}
