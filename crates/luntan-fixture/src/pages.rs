//! Routing and page rendering: a path and query in, encoded bytes out.
//!
//! Markup follows the real software closely enough that a site file written
//! for the real thing would mostly work: Discuz! X3's table layout and ids,
//! phpBB 3's prosilver lists, and a modern nested-div forum; and, served
//! only when asked for, Discuz! X3.4 with rewritten URLs ([`dzx`]) and a
//! PHPWind-style forum ([`nx`]).

use std::fmt::Write as _;

use crate::hostile;
use crate::kind::ForumKind;
use crate::model::{canonical_page, BoardMeta, Fixture, ForumModel, Post, ThreadMeta};
use crate::text::{civil, esc_into, percent_decode};

mod dzx;
mod nx;

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
        };
        match page {
            Routed::Page(html, shown) if self.config().hostility.is_on() => self.hostile_page(f, html, shown, path_and_query),
            Routed::Page(html, _) => encode(kind, 200, &html),
            Routed::Gone(html) => encode(kind, 404, &html),
            Routed::Redirect(html) => encode(kind, 302, &html),
            Routed::NotFound => not_found(),
        }
    }

    /// Where a redirecting page sends the reader (path from the server root,
    /// perhaps with a `#fragment`), for the `Location` of the `302` that
    /// [`Fixture::get`] answers it with: Discuz! X's `forum.php?mod=redirect&…`.
    pub(crate) fn redirect_target(&self, path_and_query: &str) -> Option<String> {
        if let Some(latest) = self.latest() {
            return latest.redirect_target(path_and_query);
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
                ForumKind::Discuz => dz_gone(f),
                ForumKind::Phpbb => phpbb_gone(f),
                ForumKind::Bbs => bbs_gone(f),
                ForumKind::DiscuzX => dzx::gone(f),
                ForumKind::Nexus => nx::gone(f),
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
        }
    }

    fn thread_html(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        match f.kind {
            ForumKind::Discuz => self.dz_thread(f, t, page),
            ForumKind::Phpbb => self.phpbb_thread(f, t, page),
            ForumKind::Bbs => self.bbs_thread(f, t, page),
            ForumKind::DiscuzX => self.dzx_thread(f, t, page, 1),
            ForumKind::Nexus => self.nx_thread(f, t, page, 1),
        }
    }

    fn crafted(&self, id: Option<&str>) -> bool {
        self.config().hostility.links && id.is_some_and(hostile::is_crafted)
    }

    fn route_dz(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        if rest != "forum.php" {
            return Routed::NotFound;
        }
        match q.get("mod") {
            None if q.is_empty() => Routed::Page(self.dz_home(f), Shown::Home),
            Some("forumdisplay") if q.only(&["mod", "fid", "page"]) => {
                if self.crafted(q.get("fid")) {
                    return self.decoy_list(f);
                }
                self.list_route(f, q.get("fid").and_then(|id| f.board(id)), q.number("page", 1))
            }
            Some("viewthread") if q.only(&["mod", "tid", "page"]) => {
                if self.crafted(q.get("tid")) {
                    return self.decoy_thread(f);
                }
                self.thread_route(f, q.get("tid").and_then(|id| id.parse().ok()).and_then(|id| f.thread(id)), q.number("page", 1))
            }
            _ => Routed::NotFound,
        }
    }

    fn route_phpbb(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        // phpBB pages by offset; only offsets that start a page exist here.
        let page_of = |start: Option<usize>, size: usize| match start {
            Some(s) if s % size == 0 => Some(s / size + 1),
            _ => None,
        };
        match rest {
            "index.php" if q.is_empty() => Routed::Page(self.phpbb_home(f), Shown::Home),
            "viewforum.php" if q.only(&["f", "start"]) => {
                if self.crafted(q.get("f")) {
                    return self.decoy_list(f);
                }
                self.list_route(f, q.get("f").and_then(|id| f.board(id)), page_of(q.number("start", 0), f.kind.list_page_size()))
            }
            "viewtopic.php" if q.only(&["t", "start"]) => {
                if self.crafted(q.get("t")) {
                    return self.decoy_thread(f);
                }
                self.thread_route(
                    f,
                    q.get("t").and_then(|id| id.parse().ok()).and_then(|id| f.thread(id)),
                    page_of(q.number("start", 0), f.kind.thread_page_size()),
                )
            }
            _ => Routed::NotFound,
        }
    }

    fn route_bbs(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        if !q.only(&["page"]) {
            return Routed::NotFound;
        }
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            ["board", id, ""] if self.crafted(Some(id)) => self.decoy_list(f),
            ["topic", id, _, ""] if self.crafted(Some(id)) => self.decoy_thread(f),
            [""] if q.is_empty() => Routed::Page(self.bbs_home(f), Shown::Home),
            ["board", id, ""] => self.list_route(f, f.board(id), q.number("page", 1)),
            ["topic", id, slug, ""] => {
                // Clients send the slug percent-encoded or as raw UTF-8; both
                // decode to the same bytes.
                let t = id.parse().ok().and_then(|id| f.thread(id)).filter(|t| percent_decode(slug) == percent_decode(&ForumModel::slug(t)));
                self.thread_route(f, t, q.number("page", 1))
            }
            _ => Routed::NotFound,
        }
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
        // The PHPWind-style forum says UTF-8 in the header only.
        ForumKind::Nexus => "text/html; charset=utf-8",
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

// ---------------------------------------------------------------- Discuz!

/// Discuz! links are relative to `/dz/`.
fn dz_rel(path: &str) -> &str {
    path.strip_prefix("/dz/").unwrap_or(path)
}

fn dz_head(out: &mut String, f: &ForumModel, title: &str) {
    out.push_str(
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n\
<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n\
<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\" />\n<title>",
    );
    esc(out, title);
    out.push_str(
        "</title>\n<meta name=\"generator\" content=\"Discuz! X3.4\" />\n\
<link rel=\"stylesheet\" type=\"text/css\" href=\"data/cache/style_1_common.css\" />\n\
<script src=\"static/js/common.js\" type=\"text/javascript\"></script>\n</head>\n<body id=\"nv_forum\">\n\
<div id=\"hd\"><div class=\"wp\"><div class=\"hdc cl\"><h2><a href=\"forum.php\" title=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\">");
    esc(out, f.kind.name());
    out.push_str(
        "</a></h2>\n<div id=\"um\"><a href=\"member.php?mod=logging&amp;action=login\">登录</a> | \
<a href=\"member.php?mod=register\">立即注册</a> | <a href=\"javascript:void(0)\" onclick=\"setHomepage()\">设为首页</a></div>\n\
</div></div></div>\n<div id=\"wp\" class=\"wp\">\n",
    );
}

fn dz_foot(out: &mut String) {
    out.push_str(
        "</div>\n<div id=\"ft\" class=\"wp cl\"><div id=\"flk\" class=\"y\"><p><a href=\"http://www.discuz.invalid/\" target=\"_blank\">Powered by Discuz! X3.4</a>\
<span class=\"pipe\">|</span><a href=\"javascript:void(0)\" onclick=\"showWindow('miscreport')\">举报</a></p></div></div>\n</body>\n</html>\n",
    );
}

fn dz_crumbs(out: &mut String, f: &ForumModel, b: &BoardMeta, t: Option<&ThreadMeta>) {
    out.push_str("<div id=\"pt\" class=\"bm cl\"><div class=\"z\"><a href=\"forum.php\">");
    esc(out, f.kind.name());
    out.push_str("</a> <em>&rsaquo;</em> <a href=\"");
    href(out, dz_rel(&f.board_path(b, 1)));
    out.push_str("\">");
    esc(out, &b.title);
    out.push_str("</a>");
    if let Some(t) = t {
        out.push_str(" <em>&rsaquo;</em> <a href=\"");
        href(out, dz_rel(&f.thread_path(t, 1)));
        out.push_str("\">");
        esc(out, &t.title);
        out.push_str("</a>");
    }
    out.push_str("</div></div>\n");
}

/// Discuz!'s pager; `url(k)` gives page k's link (page 1 included as `&page=1`).
fn dz_pager(out: &mut String, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    if pages <= 1 {
        return;
    }
    out.push_str("<div class=\"pg\">");
    let jump = format!(
        "<label><input type=\"text\" name=\"custompage\" class=\"px\" size=\"2\" title=\"输入页码，按回车快速跳转\" value=\"{page}\" />\
<span title=\"共 {pages} 页\"> / {pages} 页</span></label>"
    );
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => link(out, "<a href=\"", &url(k), "\" class=\"prev\">&nbsp;&nbsp;</a>"),
            First => link(out, "<a href=\"", &url(1), "\" class=\"first\">1 ...</a>"),
            Current(k) => {
                let _ = write!(out, "<strong>{k}</strong>");
            }
            Number(k) => link(out, "<a href=\"", &url(k), &format!("\">{k}</a>")),
            Last(k) => link(out, "<a href=\"", &url(k), &format!("\" class=\"last\">... {k}</a>")),
            Next(k) => {
                out.push_str(&jump);
                link(out, "<a href=\"", &url(k), "\" class=\"nxt\">下一页</a>");
            }
        }
    }
    if page == pages {
        out.push_str(&jump);
    }
    out.push_str("</div>");
}

fn dz_gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(2048);
    dz_head(&mut out, f, &format!("提示信息 - {}", f.kind.name()));
    out.push_str(
        "<div id=\"ct\" class=\"wp cl w\"><div class=\"nfl\"><div class=\"f_c altw\"><div id=\"messagetext\" class=\"alert_error\">\
<p>抱歉，指定的主题不存在或已被删除或正在被审核</p><p class=\"alert_btnleft\"><a href=\"javascript:history.back()\">[ 点击这里返回上一页 ]</a></p>\
</div></div></div></div>\n",
    );
    dz_foot(&mut out);
    out
}

impl Fixture {
    fn dz_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        dz_head(&mut out, f, &format!("{} -  Powered by Discuz!", f.kind.name()));
        out.push_str(
            "<div class=\"a_t\"><a href=\"http://ads.example.invalid/click?id=1\" target=\"_blank\">\
<img src=\"http://ads.example.invalid/banner.gif\" alt=\"广告：暑期特惠\" /></a></div>\n\
<div id=\"ct\" class=\"wp cl\"><div class=\"mn\">\n<div class=\"fl bm\"><div class=\"bm bmw flg cl\"><div class=\"bm_h cl\"><h2>校园论坛</h2></div>\n\
<div class=\"bm_c\"><table cellspacing=\"0\" cellpadding=\"0\" class=\"fl_tb\">\n",
        );
        for b in &f.boards {
            let posts: u32 = b.order.iter().map(|&i| f.threads[i as usize].posts).sum();
            out.push_str("<tr><td class=\"fl_g\" width=\"100%\"><dl><dt><a href=\"");
            href(&mut out, dz_rel(&f.board_path(b, 1)));
            out.push_str("\">");
            esc(&mut out, &b.title);
            let _ = writeln!(out, "</a></dt><dd><em>主题: {}</em>, <em>帖数: {posts}</em></dd></dl></td></tr>", b.order.len());
        }
        out.push_str(
            "</table></div></div></div>\n</div></div>\n<div class=\"bm lk\"><div class=\"bm_c\">\
<a href=\"javascript:void(0)\" onclick=\"showWindow('login')\">快速登录</a> <a href=\"",
        );
        out.push_str(AD_URL);
        out.push_str("\" target=\"_blank\">合作伙伴</a> <a href=\"mailto:admin@example.invalid\">联系我们</a></div></div>\n");
        dz_foot(&mut out);
        out
    }

    fn dz_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let mut out = String::with_capacity(24 * 1024);
        dz_head(&mut out, f, &format!("{} - {} -  Powered by Discuz!", b.title, f.kind.name()));
        dz_crumbs(&mut out, f, b, None);
        out.push_str("<div class=\"bm bml pbn\"><div class=\"bm_h cl\"><h1 class=\"xs2\"><a href=\"");
        href(&mut out, dz_rel(&f.board_path(b, 1)));
        out.push_str("\">");
        esc(&mut out, &b.title);
        let _ = writeln!(out, "</a> <span class=\"xs1 xw0 i\">主题: <strong class=\"xi1\">{}</strong></span></h1></div></div>", b.order.len());
        let url = |k: usize| format!("forum.php?mod=forumdisplay&fid={}&page={k}", b.id);
        out.push_str("<div id=\"pgt\" class=\"bm bw0 pgs cl\"><span id=\"fd_page_top\">");
        dz_pager(&mut out, page, pages, url);
        let _ = write!(
            out,
            "</span></div>\n<div id=\"threadlist\" class=\"tl bm bmw\"><div class=\"bm_c\">\
<form method=\"post\" autocomplete=\"off\" name=\"moderate\" id=\"moderate\" action=\"forum.php?mod=topicadmin&amp;action=moderate&amp;fid={}&amp;infloat=yes&amp;nopost=yes\">\n\
<table summary=\"forum_{}\" cellspacing=\"0\" cellpadding=\"0\" id=\"threadlisttableid\">\n\
<tbody><tr class=\"th\"><td class=\"icn\">&nbsp;</td><th>标题</th><td class=\"by\">作者</td><td class=\"num\">回复/查看</td><td class=\"by\">最后发表</td></tr></tbody>\n\
<tbody id=\"separatorline\" class=\"emptb\"><tr><td class=\"icn\"></td><th class=\"common\"></th><td class=\"by\"></td><td class=\"num\"></td><td class=\"by\"></td></tr></tbody>\n",
            b.id, b.id
        );
        let size = f.kind.list_page_size();
        for &i in b.order.iter().skip((page - 1) * size).take(size) {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first_time = self.post_times(f, t)[0];
            let link = dz_rel(&f.thread_path(t, 1)).to_owned();
            let _ = write!(out, "<tbody id=\"normalthread_{}\">\n<tr>\n<td class=\"icn\"><a href=\"", t.tid);
            href(&mut out, &link);
            out.push_str(
                "\" title=\"新窗口打开\" target=\"_blank\"><img src=\"static/image/common/folder_common.gif\" /></a></td>\n<th class=\"common\">\n<a href=\"",
            );
            href(&mut out, &link);
            out.push_str("\" onclick=\"atarget(this)\" class=\"s xst\">");
            esc(&mut out, &t.title);
            out.push_str("</a>\n</th>\n");
            let _ = write!(out, "<td class=\"by\"><cite><a href=\"home.php?mod=space&amp;uid={uid}\" c=\"1\">");
            esc(&mut out, &author);
            let _ = writeln!(out, "</a></cite><em><span>{}</span></em></td>", civil(first_time).discuz_date());
            let _ = writeln!(out, "<td class=\"num\"><a class=\"xi2\">{}</a><em>{}</em></td>", t.posts - 1, t.views);
            let _ = write!(out, "<td class=\"by\"><cite><a href=\"home.php?mod=space&amp;uid={last_uid}\" c=\"1\">");
            esc(&mut out, &last);
            let _ = write!(
                out,
                "</a></cite><em><a href=\"forum.php?mod=redirect&amp;tid={}&amp;goto=lastpost#lastpost\"><span>{}</span></a></em></td>\n</tr>\n</tbody>\n",
                t.tid,
                civil(t.last_post).discuz()
            );
        }
        out.push_str("</table></form></div></div>\n<div class=\"bm bw0 pgs cl\"><span id=\"fd_page_bottom\">");
        dz_pager(&mut out, page, pages, url);
        out.push_str("</span></div>\n");
        dz_foot(&mut out);
        out
    }

    fn dz_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(32 * 1024);
        dz_head(&mut out, f, &format!("{} - {} - {} -  Powered by Discuz!", t.title, b.title, f.kind.name()));
        dz_crumbs(&mut out, f, b, Some(t));
        let url = |k: usize| format!("forum.php?mod=viewthread&tid={}&page={k}", t.tid);
        out.push_str("<div id=\"pgt\" class=\"pgs mbm cl \"><div class=\"pgt\">");
        dz_pager(&mut out, page, pages, url);
        out.push_str("</div><span class=\"y pgb\"><a href=\"");
        href(&mut out, dz_rel(&f.board_path(b, 1)));
        out.push_str("\">返回列表</a></span></div>\n<div id=\"postlist\" class=\"pl bm\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"pls ptn pbn\"><div class=\"hm ptn\">");
        let _ = write!(
            out,
            "<span class=\"xg1\">查看:</span> <span class=\"xi1\">{}</span><span class=\"pipe\">|</span><span class=\"xg1\">回复:</span> <span class=\"xi1\">{}</span>",
            t.views,
            t.posts - 1
        );
        out.push_str("</div></td>\n<td class=\"plc ptm pbn vwthd\"><h1 class=\"ts\"><span id=\"thread_subject\">");
        esc(&mut out, &t.title);
        out.push_str("</span></h1></td></tr></table>\n");
        for p in &posts {
            self.dz_post(&mut out, t, p);
        }
        out.push_str("</div>\n<div class=\"pgs mtm mbm cl\">");
        dz_pager(&mut out, page, pages, url);
        out.push_str("</div>\n");
        dz_foot(&mut out);
        out
    }

    fn dz_post(&self, out: &mut String, t: &ThreadMeta, p: &Post) {
        let pid = p.pid;
        let _ = write!(
            out,
            "<div id=\"post_{pid}\" >\n<table id=\"pid{pid}\" class=\"plhin\" summary=\"pid{pid}\" cellspacing=\"0\" cellpadding=\"0\">\n<tr>\n\
<td class=\"pls\" rowspan=\"2\">\n<div class=\"pi\"><div class=\"authi\"><a href=\"home.php?mod=space&amp;uid={}\" target=\"_blank\" class=\"xw1\">",
            p.uid
        );
        esc(out, &p.author);
        let _ = write!(
            out,
            "</a></div></div>\n</td>\n<td class=\"plc\">\n<div class=\"pi\">\n\
<strong><a href=\"forum.php?mod=redirect&amp;goto=findpost&amp;ptid={}&amp;pid={pid}\" id=\"postnum{pid}\"><em>{}#</em></a></strong>\n\
<div class=\"pti\"><div class=\"authi\"><em id=\"authorposton_{pid}\">发表于 {}</em><span class=\"pipe\">|</span>\
<a href=\"forum.php?mod=viewthread&amp;tid={}&amp;page=1&amp;authorid={}\" rel=\"nofollow\">只看该作者</a></div></div>\n</div>\n\
<div class=\"pct\"><div class=\"pcb\"><div class=\"t_fsz\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"t_f\" id=\"postmessage_{pid}\">\n",
            t.tid,
            p.floor,
            civil(p.time).discuz(),
            t.tid,
            p.uid
        );
        let sep = if p.variant { "<br />\r\n" } else { "<br />" };
        for (i, para) in p.paragraphs.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            esc(out, para);
        }
        out.push_str("</td></tr></table>\n</div></div></div>\n</td></tr>\n</table>\n</div>\n");
    }
}

// ---------------------------------------------------------------- phpBB

/// phpBB links are `./page.php` relative to `/phpbb/`.
fn phpbb_rel(path: &str) -> String {
    format!("./{}", path.strip_prefix("/phpbb/").unwrap_or(path))
}

fn phpbb_time(out: &mut String, minutes: u32) {
    let c = civil(minutes);
    let _ = write!(out, "<time datetime=\"{}+08:00\">{}</time>", c.iso(), c.chinese());
}

fn phpbb_head(out: &mut String, f: &ForumModel, title: &str, section: &str) {
    out.push_str(
        "<!DOCTYPE html>\n<html dir=\"ltr\" lang=\"zh-tw\">\n<head>\n<meta charset=\"big5\" />\n\
<meta http-equiv=\"X-UA-Compatible\" content=\"IE=edge\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n<title>",
    );
    esc(out, title);
    let _ = write!(
        out,
        "</title>\n<link href=\"./styles/prosilver/theme/stylesheet.css?assets_version=3\" rel=\"stylesheet\">\n</head>\n\
<body id=\"phpbb\" class=\"nojs notouch section-{section} ltr \">\n<div id=\"wrap\" class=\"wrap\">\n<a id=\"top\" class=\"top-anchor\" accesskey=\"t\"></a>\n\
<div id=\"page-header\"><div class=\"headerbar\" role=\"banner\"><div class=\"inner\"><div id=\"site-description\" class=\"site-description\">\
<a id=\"logo\" class=\"logo\" href=\"./index.php\" title=\"首頁\"><span class=\"site_logo\"></span></a><h1>"
    );
    esc(out, f.kind.name());
    out.push_str("</h1><p>以詩會友，以文載道</p></div></div></div>\n<div class=\"navbar\" role=\"navigation\"><ul class=\"nav-main linklist\">\
<li><a href=\"./faq.php\" rel=\"help\">常見問題</a></li><li><a href=\"./ucp.php?mode=login\">登入</a></li>\
<li><a href=\"javascript:void(0)\" data-skip-responsive=\"true\">快速連結</a></li></ul></div></div>\n<div id=\"page-body\" class=\"page-body\" role=\"main\">\n");
}

fn phpbb_foot(out: &mut String) {
    out.push_str(
        "</div>\n<div id=\"page-footer\" class=\"page-footer\" role=\"contentinfo\"><div class=\"copyright\">Powered by \
<a href=\"https://www.phpbb.invalid/\">phpBB</a>&reg; Forum Software &copy; phpBB Limited</div></div>\n</div>\n</body>\n</html>\n",
    );
}

/// phpBB's pagination; `url(k)` gives page k's link, page 1 without `start`.
fn phpbb_pager(out: &mut String, label: &str, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    out.push_str("<div class=\"pagination\">\n");
    out.push_str(label);
    if pages > 1 {
        out.push_str("\n<ul>\n");
        const ELLIPSIS: &str = "<li class=\"ellipsis\" role=\"separator\"><span>…</span></li>\n";
        for part in pager_parts(page, pages) {
            match part {
                // The previous link names offset 0 where the numbers omit it,
                // as some phpBB versions do: both forms must mean page 1.
                Prev(1) => link(
                    out,
                    "<li class=\"arrow previous\"><a class=\"button button-icon-only\" href=\"",
                    &format!("{}&start=0", url(1)),
                    "\" rel=\"prev\" role=\"button\">上一頁</a></li>\n",
                ),
                Prev(k) => link(
                    out,
                    "<li class=\"arrow previous\"><a class=\"button button-icon-only\" href=\"",
                    &url(k),
                    "\" rel=\"prev\" role=\"button\">上一頁</a></li>\n",
                ),
                First => link(out, "<li><a class=\"button\" href=\"", &url(1), &format!("\" role=\"button\">1</a></li>\n{ELLIPSIS}")),
                Current(k) => {
                    let _ = writeln!(out, "<li class=\"active\"><span>{k}</span></li>");
                }
                Number(k) => link(out, "<li><a class=\"button\" href=\"", &url(k), &format!("\" role=\"button\">{k}</a></li>\n")),
                Last(k) => link(out, &format!("{ELLIPSIS}<li><a class=\"button\" href=\""), &url(k), &format!("\" role=\"button\">{k}</a></li>\n")),
                Next(k) => link(
                    out,
                    "<li class=\"arrow next\"><a class=\"button button-icon-only\" href=\"",
                    &url(k),
                    "\" rel=\"next\" role=\"button\">下一頁</a></li>\n",
                ),
            }
        }
        out.push_str("</ul>");
    } else {
        out.push_str(" &bull; 第 <strong>1</strong> 頁 (共 <strong>1</strong> 頁)");
    }
    out.push_str("\n</div>\n");
}

fn phpbb_gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(2048);
    phpbb_head(&mut out, f, &format!("資訊 - {}", f.kind.name()), "viewtopic");
    out.push_str(
        "<div id=\"message\" class=\"panel\"><div class=\"inner\"><h2 class=\"message-title\">資訊</h2>\
<p>您要求的主題不存在。</p></div></div>\n",
    );
    phpbb_foot(&mut out);
    out
}

impl Fixture {
    fn phpbb_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        phpbb_head(&mut out, f, &format!("{} - 首頁", f.kind.name()), "index");
        out.push_str(
            "<div class=\"forabg\"><div class=\"inner\"><ul class=\"topiclist\"><li class=\"header\"><dl class=\"row-item\">\
<dt><div class=\"list-inner\"><a href=\"./index.php\">詩詞</a></div></dt><dd class=\"topics\">主題</dd><dd class=\"posts\">文章</dd>\
<dd class=\"lastpost\"><span>最後發表</span></dd></dl></li></ul>\n<ul class=\"topiclist forums\">\n",
        );
        for b in &f.boards {
            let posts: u32 = b.order.iter().map(|&i| f.threads[i as usize].posts).sum();
            out.push_str("<li class=\"row\"><dl class=\"row-item forum_read\"><dt title=\"沒有未讀文章\"><div class=\"list-inner\"><a href=\"");
            href(&mut out, &phpbb_rel(&f.board_path(b, 1)));
            out.push_str("\" class=\"forumtitle\">");
            esc(&mut out, &b.title);
            let _ = writeln!(
                out,
                "</a><br />討論區說明</div></dt><dd class=\"topics\">{} <dfn>主題</dfn></dd><dd class=\"posts\">{posts} <dfn>文章</dfn></dd></dl></li>",
                b.order.len()
            );
        }
        out.push_str("</ul></div></div>\n<div class=\"stat-block\"><p><a href=\"");
        out.push_str(AD_URL);
        out.push_str("\" rel=\"sponsored\">贊助商連結</a> &bull; <a href=\"javascript:void(0)\" onclick=\"return false\">標記所有版面已讀</a></p></div>\n");
        phpbb_foot(&mut out);
        out
    }

    fn phpbb_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let size = f.kind.list_page_size();
        let mut out = String::with_capacity(24 * 1024);
        phpbb_head(&mut out, f, &format!("{} - {}", b.title, f.kind.name()), "viewforum");
        out.push_str("<h2 class=\"forum-title\"><a href=\"");
        href(&mut out, &phpbb_rel(&f.board_path(b, 1)));
        out.push_str("\">");
        esc(&mut out, &b.title);
        out.push_str("</a></h2>\n");
        let url = |k: usize| phpbb_rel(&f.board_path(b, k));
        let label = format!("{} 個主題", b.order.len());
        out.push_str("<div class=\"action-bar bar-top\">");
        phpbb_pager(&mut out, &label, page, pages, url);
        out.push_str(
            "</div>\n<div class=\"forumbg\"><div class=\"inner\">\n<ul class=\"topiclist\"><li class=\"header\"><dl class=\"row-item\">\
<dt><div class=\"list-inner\">主題</div></dt><dd class=\"posts\">回覆</dd><dd class=\"views\">點閱</dd><dd class=\"lastpost\"><span>最後發表</span></dd>\
</dl></li></ul>\n<ul class=\"topiclist topics\">\n",
        );
        for (n, &i) in b.order.iter().skip((page - 1) * size).take(size).enumerate() {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first_time = self.post_times(f, t)[0];
            let _ = write!(
                out,
                "<li class=\"row bg{}\">\n<dl class=\"row-item topic_read\">\n<dt title=\"沒有未讀文章\"><div class=\"list-inner\">\n<a href=\"",
                n % 2 + 1
            );
            href(&mut out, &phpbb_rel(&f.thread_path(t, 1)));
            out.push_str("\" class=\"topictitle\">");
            esc(&mut out, &t.title);
            let _ = write!(
                out,
                "</a><br />\n<div class=\"responsive-hide left-box\">由 <a href=\"./memberlist.php?mode=viewprofile&amp;u={uid}\" class=\"username\">"
            );
            esc(&mut out, &author);
            out.push_str("</a> &raquo; ");
            phpbb_time(&mut out, first_time);
            let _ = write!(
                out,
                "</div>\n</div></dt>\n<dd class=\"posts\">{}</dd>\n<dd class=\"views\">{}</dd>\n\
<dd class=\"lastpost\"><span><dfn>最後發表 </dfn>由 <a href=\"./memberlist.php?mode=viewprofile&amp;u={last_uid}\" class=\"username\">",
                t.posts - 1,
                t.views
            );
            esc(&mut out, &last);
            out.push_str("</a><br />");
            phpbb_time(&mut out, t.last_post);
            out.push_str("</span></dd>\n</dl>\n</li>\n");
        }
        out.push_str("</ul>\n</div></div>\n<div class=\"action-bar bar-bottom\">");
        phpbb_pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n");
        phpbb_foot(&mut out);
        out
    }

    fn phpbb_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(32 * 1024);
        phpbb_head(&mut out, f, &format!("{} - {}", t.title, f.kind.name()), "viewtopic");
        out.push_str("<h2 class=\"topic-title\"><a href=\"");
        href(&mut out, &phpbb_rel(&f.thread_path(t, 1)));
        out.push_str("\">");
        esc(&mut out, &t.title);
        out.push_str("</a></h2>\n");
        let url = |k: usize| phpbb_rel(&f.thread_path(t, k));
        let label = format!("{} 篇文章", t.posts);
        out.push_str("<div class=\"action-bar bar-top\">");
        phpbb_pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n");
        for (n, p) in posts.iter().enumerate() {
            let pid = p.pid;
            let _ = write!(
                out,
                "<div id=\"p{pid}\" class=\"post has-profile bg{}\">\n<div class=\"inner\">\n<dl class=\"postprofile\" id=\"profile{pid}\">\n\
<dt class=\"has-profile-rank no-avatar\"><a href=\"./memberlist.php?mode=viewprofile&amp;u={}\" class=\"username\">",
                n % 2 + 1,
                p.uid
            );
            esc(&mut out, &p.author);
            let _ = write!(
                out,
                "</a></dt>\n<dd class=\"profile-posts\"><strong>文章:</strong> {}</dd>\n</dl>\n<div class=\"postbody\">\n<div id=\"post_content{pid}\">\n\
<h3{}><a href=\"#p{pid}\">{}",
                p.uid % 997 + 1,
                if p.floor == 1 { " class=\"first\"" } else { "" },
                if p.floor == 1 { "" } else { "Re: " }
            );
            esc(&mut out, &t.title);
            let _ = write!(
                out,
                "</a></h3>\n<p class=\"author\"><a class=\"unread\" href=\"./viewtopic.php?p={pid}#p{pid}\" title=\"文章\"><span class=\"sr-only\">文章</span></a>\
<span class=\"responsive-hide\">由 <strong><a href=\"./memberlist.php?mode=viewprofile&amp;u={}\" class=\"username\">",
                p.uid
            );
            esc(&mut out, &p.author);
            out.push_str("</a></strong> &raquo; </span>");
            phpbb_time(&mut out, p.time);
            out.push_str("</p>\n<div class=\"content\">");
            for (i, para) in p.paragraphs.iter().enumerate() {
                if p.variant {
                    out.push_str("<p>");
                    esc(&mut out, para);
                    out.push_str("</p>");
                } else {
                    if i > 0 {
                        out.push_str("<br>");
                    }
                    esc(&mut out, para);
                }
            }
            out.push_str("</div>\n</div>\n</div>\n<div class=\"back2top\"><a href=\"#top\" class=\"top\" title=\"回到頂端\">頂端</a></div>\n</div>\n</div>\n<hr class=\"divider\" />\n");
        }
        out.push_str("<div class=\"action-bar bar-bottom\">");
        phpbb_pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n<p class=\"jumpbox-return\"><a href=\"");
        href(&mut out, &phpbb_rel(&f.board_path(b, 1)));
        out.push_str("\" class=\"left-box arrow-left\" accesskey=\"r\">回到「");
        esc(&mut out, &b.title);
        out.push_str("」</a></p>\n");
        phpbb_foot(&mut out);
        out
    }
}

// ---------------------------------------------------------------- modern UTF-8 forum

fn bbs_head(out: &mut String, f: &ForumModel, title: &str) {
    // No charset in the header, no meta, no BOM: readers must detect UTF-8.
    out.push_str("<!doctype html>\n<html lang=\"zh-CN\">\n<head>\n<title>");
    esc(out, title);
    out.push_str(
        "</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<link rel=\"stylesheet\" href=\"/bbs/static/app.css\">\n</head>\n<body>\n<header class=\"site\"><a class=\"logo\" href=\"/bbs/\">",
    );
    esc(out, f.kind.name());
    out.push_str("</a><nav><a href=\"javascript:void(0)\" data-action=\"login\">登录</a> <a href=\"");
    out.push_str(AD_URL);
    out.push_str("?from=bbs\" rel=\"sponsored\">推广</a></nav></header>\n<main>\n");
}

fn bbs_foot(out: &mut String) {
    out.push_str("</main>\n<footer><p>新青年论坛 · 畅所欲言 · <a href=\"mailto:admin@example.invalid\">联系我们</a></p></footer>\n</body>\n</html>\n");
}

/// The modern forum's pager: numbers as absolute paths, "next" relative
/// (`?page=N`), thread pages with the slug as raw UTF-8.
fn bbs_pager(out: &mut String, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    if pages <= 1 {
        return;
    }
    out.push_str("<nav class=\"pager\">");
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => link(out, "<a rel=\"prev\" href=\"", &url(k), "\">上一页</a> "),
            First => link(out, "<a href=\"", &url(1), "\">1</a> <span class=\"gap\">…</span> "),
            Current(k) => {
                let _ = write!(out, "<span class=\"current\">{k}</span> ");
            }
            Number(k) => link(out, "<a href=\"", &url(k), &format!("\">{k}</a> ")),
            Last(k) => link(out, "<span class=\"gap\">…</span> <a href=\"", &url(k), &format!("\">{k}</a> ")),
            Next(k) => {
                let _ = write!(out, "<a rel=\"next\" href=\"?page={k}\">下一页</a>");
            }
        }
    }
    out.push_str("</nav>\n");
}

fn bbs_gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(1024);
    bbs_head(&mut out, f, "话题不存在");
    out.push_str("<section class=\"error\"><h1>404</h1><p>这个话题已被删除，或者从来没有存在过。</p><p><a href=\"/bbs/\">返回首页</a></p></section>\n");
    bbs_foot(&mut out);
    out
}

impl Fixture {
    fn bbs_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        bbs_head(&mut out, f, f.kind.name());
        out.push_str("<section class=\"intro\"><p>欢迎来到新青年论坛，这里是年轻人交流学习、生活和兴趣爱好的地方。请文明发言，友善讨论。</p></section>\n<ul class=\"boards\">\n");
        for b in &f.boards {
            out.push_str("<li class=\"board\"><a href=\"");
            href(&mut out, &f.board_path(b, 1));
            out.push_str("\">");
            esc(&mut out, &b.title);
            let _ = writeln!(out, "</a> <span class=\"count\">{} 个话题</span></li>", b.order.len());
        }
        out.push_str("</ul>\n");
        bbs_foot(&mut out);
        out
    }

    fn bbs_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let size = f.kind.list_page_size();
        let mut out = String::with_capacity(16 * 1024);
        bbs_head(&mut out, f, &format!("{} - {}", b.title, f.kind.name()));
        out.push_str("<nav class=\"crumbs\"><a href=\"/bbs/\">首页</a> › <span>");
        esc(&mut out, &b.title);
        out.push_str("</span></nav>\n<h1 class=\"board-title\">");
        esc(&mut out, &b.title);
        out.push_str("</h1>\n<ol class=\"topics\">\n");
        for &i in b.order.iter().skip((page - 1) * size).take(size) {
            let t = &f.threads[i as usize];
            let (author, _) = self.author(f, t, 1);
            let _ = write!(out, "<li class=\"topic\" data-id=\"{}\"><a class=\"title\" href=\"", t.tid);
            href(&mut out, &f.thread_path(t, 1));
            out.push_str("\">");
            esc(&mut out, &t.title);
            out.push_str("</a> <span class=\"meta\"><span class=\"author\">");
            esc(&mut out, &author);
            let _ = writeln!(
                out,
                "</span> · <span class=\"replies\">{}</span> 回复 · <time class=\"last-post\">{}</time></span></li>",
                t.posts - 1,
                civil(t.last_post).padded()
            );
        }
        out.push_str("</ol>\n");
        bbs_pager(&mut out, page, pages, |k| f.board_path(b, k));
        bbs_foot(&mut out);
        out
    }

    fn bbs_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(24 * 1024);
        bbs_head(&mut out, f, &format!("{} - {}", t.title, f.kind.name()));
        out.push_str("<nav class=\"crumbs\"><a href=\"/bbs/\">首页</a> › <a href=\"");
        href(&mut out, &f.board_path(b, 1));
        out.push_str("\">");
        esc(&mut out, &b.title);
        out.push_str("</a></nav>\n<h1 class=\"topic-title\">");
        esc(&mut out, &t.title);
        out.push_str("</h1>\n<section class=\"posts\">\n");
        for p in &posts {
            let _ = write!(out, "<article class=\"post\" id=\"p{}\" data-floor=\"{}\"><header><span class=\"name\">", p.floor, p.floor);
            esc(&mut out, &p.author);
            let _ = write!(
                out,
                "</span><time>{}</time><span class=\"floor\">#{}</span></header><div class=\"body\"><div class=\"inner\">",
                civil(p.time).padded(),
                p.floor
            );
            for para in &p.paragraphs {
                out.push_str("<p>");
                esc(&mut out, para);
                out.push_str("</p>");
            }
            out.push_str("</div></div></article>\n");
        }
        out.push_str("</section>\n");
        // Raw UTF-8 slugs here (lists use the percent-encoded form): a reader
        // that decoded the page wrongly gets these links wrong too.
        let raw_slug = String::from_utf8_lossy(&percent_decode(&ForumModel::slug(t))).into_owned();
        bbs_pager(&mut out, page, pages, |k| {
            let path = f.thread_path(t, k);
            path.replacen(&ForumModel::slug(t), &raw_slug, 1)
        });
        bbs_foot(&mut out);
        out
    }
}

/// For tests: a slug written raw, as the thread pagers link it.
#[cfg(test)]
pub(crate) fn raw_slug_path(path: &str) -> String {
    String::from_utf8_lossy(&percent_decode(path)).into_owned()
}
