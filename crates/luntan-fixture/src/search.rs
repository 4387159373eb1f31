//! Each forum's own search (S0 monitors keywords through it): posts whose
//! text contains the keyword, newest first, [`RESULTS_PER_PAGE`] a page, and
//! login for forums that want an account ([`crate::Activity::accounts`]).
//!
//! | forum   | search                                          | login (POST `username`, `password`)            |
//! |---------|-------------------------------------------------|------------------------------------------------|
//! | `dz`    | `/dz/search.php?mod=forum&srchtxt=KW&page=N` (KW in GBK)  | `/dz/member.php?mod=logging&action=login` |
//! | `phpbb` | `/phpbb/search.php?keywords=KW&page=N` (KW in Big5)       | `/phpbb/ucp.php?mode=login`               |
//! | `bbs`   | `/bbs/find?q=KW&page=N` (KW in UTF-8)                     | `/bbs/login`                              |
//!
//! A page past the last result lists nothing. With accounts configured, a
//! search without a logged-in cookie gets `403`.
//!
//! The extra forums ([`ForumKind::EXTRA`]: `dzx`, `nx`, `md`) have no search or
//! login here: their search and login URLs answer `404` like any page the
//! fixture does not have (`dzx`'s and `nx`'s robots.txt disallows them anyway), and
//! [`Fixture::search_truth`] is empty for them.
//!
//! In [`SearchMode::SearchId`] the search behaves like Discuz! X3.5's: the
//! start URL ([`search_start_path`]) answers `302` to a result set named by
//! a search id, frozen at that moment; its pages are reached through the id
//! and the "下一页" link; result links carry `&highlight=`; a user (an
//! account, or all guests together) who starts a search within
//! [`crate::Activity::search_interval`] of the last gets `200 OK` with
//! "抱歉，您在 N 秒内只能进行一次搜索" and no results; robots.txt disallows
//! the search URLs unless [`crate::Activity::robots_allow_search`]. Every search is logged
//! ([`SearchRecord`]) with the account that made it and what it listed, so a
//! test can check which pages a crawler read and that no account was used by
//! two requests at once.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::Response;

use crate::config::SearchMode;
use crate::kind::ForumKind;
use crate::model::{Fixture, Hit};
use crate::text::{civil, esc_into, hash_str, mix, percent_decode};

/// Results on one search page.
pub const RESULTS_PER_PAGE: usize = 20;

/// The cookie a logged-in account carries.
pub const AUTH_COOKIE: &str = "luntan_auth";

/// One post a search page listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    pub site: String,
    pub thread: String,
    pub floor: u32,
    /// `YYYY-MM-DDTHH:MM:SS`, as the truth writes times.
    pub time: String,
}

/// What a search request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchRequest {
    /// A result page.
    Page,
    /// [`SearchMode::SearchId`]: a new search, answered with a redirect to its id.
    Start,
    /// [`SearchMode::SearchId`]: a new search too soon after the user's last,
    /// answered with a "try again" page.
    Busy,
}

/// One search request the server answered.
#[derive(Debug, Clone)]
pub struct SearchRecord {
    pub site: String,
    pub keyword: String,
    /// The result page (0 for a start or a busy answer).
    pub page: usize,
    pub request: SearchRequest,
    /// Whether the forum counted it as a new search (every page in
    /// [`SearchMode::Ideal`]; starts and busy answers with search ids).
    pub starts_search: bool,
    /// The logged-in account, if the request carried one.
    pub user: Option<String>,
    pub status: u16,
    pub started: Instant,
    pub ended: Instant,
    /// What the page listed, in page order.
    pub results: Vec<SearchResult>,
    /// Whether the page had a next-page link.
    pub has_next: bool,
}

/// A result set behind a search id, frozen when the search ran.
struct Frozen {
    kind: ForumKind,
    keyword: String,
    user: Option<String>,
    hits: Vec<Hit>,
}

/// What a server's search endpoints remember between requests.
#[derive(Default)]
pub(crate) struct Sessions {
    log: Mutex<Vec<SearchRecord>>,
    /// Search ids and their result sets.
    searches: Mutex<HashMap<u64, Frozen>>,
    next_id: AtomicU64,
    /// When each user of each forum (account name, or "" for guests) last started a search.
    last_start: Mutex<HashMap<(ForumKind, String), Instant>>,
    /// Search requests answered, for [`crate::Activity::search_throttle_every`].
    requests: AtomicU64,
}

impl Sessions {
    /// Every search request answered so far, in the order they finished.
    pub(crate) fn log(&self) -> Vec<SearchRecord> {
        lock(&self.log).clone()
    }

    pub(crate) fn clear_log(&self) {
        lock(&self.log).clear();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Fixture {
    /// The search page for `keyword`, with the keyword percent-encoded in
    /// the forum's encoding, relative to the server root.
    pub fn search_path(kind: ForumKind, keyword: &str, page: usize) -> String {
        format!("{}&page={page}", keyword_search_path(kind, keyword))
    }

    /// Where a login form is posted, relative to the server root.
    pub fn login_path(kind: ForumKind) -> &'static str {
        match kind {
            ForumKind::Discuz => "/dz/member.php?mod=logging&action=login",
            ForumKind::Phpbb => "/phpbb/ucp.php?mode=login",
            ForumKind::Bbs => "/bbs/login",
            // Not served (see the module doc).
            ForumKind::DiscuzX => "/dzx/member.php?mod=logging&action=login",
            ForumKind::Nexus => "/nx/login.php",
            ForumKind::Modern => "/md/login",
        }
    }

    /// The `name=value` cookie a login as `user` sets (`None` for an unknown user).
    pub fn account_cookie(&self, user: &str) -> Option<String> {
        let (_, password) = self.config().activity.accounts.iter().find(|(u, _)| u == user)?;
        Some(format!("{AUTH_COOKIE}={}", token(self.config().seed, user, password)))
    }

    /// Every post of `kind` whose text contains `keyword`, newest first, as
    /// the search pages list them now (nothing for a forum without a search,
    /// see [`ForumKind::has_search`]).
    pub fn search_truth(&self, kind: ForumKind, keyword: &str) -> Vec<SearchResult> {
        if !kind.has_search() {
            return Vec::new();
        }
        let latest = self.latest();
        let snap = latest.as_deref().unwrap_or(self);
        self.hits(snap, kind, keyword).into_iter().map(|h| result(kind, h)).collect()
    }
}

/// Where a new search starts in [`SearchMode::SearchId`], relative to the
/// server root; the keyword percent-encoded in the forum's encoding.
pub fn search_start_path(kind: ForumKind, keyword: &str) -> String {
    let path = keyword_search_path(kind, keyword);
    match kind {
        // Discuz!'s search form submits a flag beside the keyword.
        ForumKind::Discuz | ForumKind::DiscuzX => path + "&searchsubmit=yes",
        ForumKind::Phpbb | ForumKind::Bbs | ForumKind::Nexus | ForumKind::Modern => path,
    }
}

/// Each forum's search URL for `keyword` (percent-encoded in the forum's
/// encoding), relative to the server root: where [`Fixture::search_path`]
/// and [`search_start_path`] add their own last parameter.
fn keyword_search_path(kind: ForumKind, keyword: &str) -> String {
    let kw = encoded_keyword(kind, keyword);
    match kind {
        ForumKind::Discuz => format!("/dz/search.php?mod=forum&srchtxt={kw}"),
        ForumKind::Phpbb => format!("/phpbb/search.php?keywords={kw}"),
        ForumKind::Bbs => format!("/bbs/find?q={kw}"),
        // Not served (see the module doc): where the software keeps it.
        ForumKind::DiscuzX => format!("/dzx/search.php?mod=forum&srchtxt={kw}"),
        ForumKind::Nexus => format!("/nx/search.php?keyword={kw}"),
        ForumKind::Modern => format!("/md/search?term={kw}&in=posts"),
    }
}

/// A page of a search id's results (Discuz!'s own parameter order).
fn search_id_path(kind: ForumKind, id: u64, keyword: &str, page: usize) -> String {
    let kw = encoded_keyword(kind, keyword);
    let mut path = match kind {
        ForumKind::Discuz => format!("/dz/search.php?mod=forum&searchid={id}&orderby=lastpost&ascdesc=desc&searchsubmit=yes&kw={kw}"),
        ForumKind::Phpbb => format!("/phpbb/search.php?searchid={id}&kw={kw}"),
        ForumKind::Bbs => format!("/bbs/find?searchid={id}&kw={kw}"),
        ForumKind::DiscuzX => format!("/dzx/search.php?mod=forum&searchid={id}&kw={kw}"),
        ForumKind::Nexus => format!("/nx/search.php?sid={id}&keyword={kw}"),
        ForumKind::Modern => format!("/md/search?term={kw}&in=posts&sid={id}"),
    };
    if page > 1 {
        let _ = write!(path, "&page={page}");
    }
    path
}

fn encoded_keyword(kind: ForumKind, keyword: &str) -> String {
    let (bytes, _, _) = kind.encoding().encode(keyword);
    percent_encode_bytes(&bytes)
}

/// Percent-encodes every byte outside RFC 3986's unreserved set (a form
/// in a GBK or Big5 page submits the keyword's bytes in that encoding).
fn percent_encode_bytes(bytes: &[u8]) -> String {
    percent_encoding::percent_encode(bytes, crate::text::NOT_UNRESERVED).to_string()
}

fn result(kind: ForumKind, h: Hit) -> SearchResult {
    SearchResult { site: kind.site_id().to_owned(), thread: h.tid.to_string(), floor: h.floor, time: civil(h.time).iso() }
}

/// The cookie (`name=value`) a login as `user` sets.
pub(crate) fn cookie_for(cfg: &crate::config::FixtureConfig, user: &str, password: &str) -> String {
    format!("{AUTH_COOKIE}={}", token(cfg.seed, user, password))
}

fn token(seed: u64, user: &str, password: &str) -> String {
    format!("{:016x}", mix(&[seed, hash_str(user), hash_str(password), 0x10C1]))
}

/// Answers search and login requests; `None` for every other request.
pub(crate) async fn intercept(
    root: &Arc<Fixture>,
    sessions: &Sessions,
    method: &Method,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Body,
) -> Option<Response> {
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    let kind = ForumKind::of_path(path).filter(|k| k.has_search())?;
    root.forum(kind)?;
    let params = parse_query(kind, query);
    let get = |k: &str| params.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let search = match kind {
        ForumKind::Discuz => path == "/dz/search.php" && get("mod") == Some("forum"),
        ForumKind::Phpbb => path == "/phpbb/search.php",
        ForumKind::Bbs => path == "/bbs/find",
        ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => false,
    };
    let login = match kind {
        ForumKind::Discuz => path == "/dz/member.php" && get("mod") == Some("logging") && get("action") == Some("login"),
        ForumKind::Phpbb => path == "/phpbb/ucp.php" && get("mode") == Some("login"),
        ForumKind::Bbs => path == "/bbs/login",
        ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => false,
    };
    if login && method == Method::POST {
        let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
        let form = parse_query(kind, &String::from_utf8_lossy(&bytes));
        let field = |k: &str| form.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).unwrap_or("");
        let (user, password) = (field("username"), field("password"));
        let ok = root.config().activity.accounts.iter().any(|(u, p)| u == user && p == password);
        return Some(if ok {
            Response::builder()
                .status(StatusCode::FOUND)
                .header(header::LOCATION, kind.home_path())
                .header(header::SET_COOKIE, format!("{AUTH_COOKIE}={}; Path=/; HttpOnly", token(root.config().seed, user, password)))
                .body(Body::empty())
                .unwrap_or_default()
        } else {
            page(kind, StatusCode::FORBIDDEN, "登录失败", "<p class=\"alert_error\">用户名或密码错误</p>")
        });
    }
    if !search || method != Method::GET {
        return None;
    }
    let started = Instant::now();
    let cfg = root.config();
    let user = cookie(headers, AUTH_COOKIE).and_then(|tok| cfg.activity.accounts.iter().find(|(u, p)| token(cfg.seed, u, p) == tok).map(|(u, _)| u.clone()));
    let search_id = get("searchid").and_then(|id| id.parse::<u64>().ok());
    let frozen_keyword = search_id.and_then(|id| lock(&sessions.searches).get(&id).map(|f| f.keyword.clone()));
    let keyword = frozen_keyword.unwrap_or_else(|| get("srchtxt").or(get("keywords")).or(get("q")).unwrap_or("").trim().to_owned());
    let page_no = get("page").and_then(|p| p.parse::<usize>().ok()).filter(|p| *p >= 1).unwrap_or(1);
    let mode = cfg.activity.search_mode;
    let log = |request: SearchRequest, page: usize, status: u16, results: Vec<SearchResult>, has_next: bool| {
        let starts_search = match mode {
            SearchMode::Ideal => true,
            SearchMode::SearchId => request != SearchRequest::Page,
        };
        let record = SearchRecord {
            site: kind.site_id().to_owned(),
            keyword: keyword.clone(),
            page,
            request,
            starts_search,
            user: user.clone(),
            status,
            started,
            ended: Instant::now(),
            results,
            has_next,
        };
        lock(&sessions.log).push(record);
    };
    let every = u64::from(cfg.activity.search_throttle_every);
    if every > 0 && (sessions.requests.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(every) {
        log(SearchRequest::Page, page_no, 429, Vec::new(), false);
        let mut r = page(kind, StatusCode::TOO_MANY_REQUESTS, "提示信息", "<p class=\"alert_error\">请求过于频繁</p>");
        let secs = cfg.activity.search_retry_after.as_secs().max(1).to_string();
        r.headers_mut().insert(header::RETRY_AFTER, secs.parse().expect("digits are a header value"));
        return Some(r);
    }
    if !cfg.activity.search_latency.is_zero() {
        tokio::time::sleep(cfg.activity.search_latency).await;
    }
    if !cfg.activity.accounts.is_empty() && user.is_none() {
        log(SearchRequest::Page, page_no, 403, Vec::new(), false);
        return Some(page(kind, StatusCode::FORBIDDEN, "提示信息", "<p class=\"alert_error\">您需要登录后才能继续本操作</p>"));
    }
    let latest = root.latest();
    let snap: &Fixture = latest.as_deref().unwrap_or(root);
    if mode == SearchMode::Ideal {
        let hits = root.hits(snap, kind, &keyword);
        let shown: Vec<Hit> = hits.iter().skip((page_no - 1) * RESULTS_PER_PAGE).take(RESULTS_PER_PAGE).copied().collect();
        let next = (page_no < hits.len().div_ceil(RESULTS_PER_PAGE)).then(|| Fixture::search_path(kind, &keyword, page_no + 1));
        let html = render(snap, kind, &keyword, hits.len(), &shown, next.as_deref(), None);
        log(SearchRequest::Page, page_no, 200, shown.iter().map(|h| result(kind, *h)).collect(), next.is_some());
        return Some(encoded(kind, StatusCode::OK, &html));
    }
    let Some(id) = search_id else {
        // A new search: the user's interval first, then a frozen result set.
        let who = (kind, user.clone().unwrap_or_default());
        let interval = cfg.activity.search_interval;
        {
            let mut last = lock(&sessions.last_start);
            if last.get(&who).is_some_and(|t| started.duration_since(*t) < interval) {
                drop(last);
                log(SearchRequest::Busy, 0, 200, Vec::new(), false);
                let msg = format!("<div class=\"alert_error\"><p>抱歉，您在 {} 秒内只能进行一次搜索</p></div>", interval.as_secs_f64());
                return Some(page(kind, StatusCode::OK, "提示信息", &msg));
            }
            last.insert(who, started);
        }
        let hits = root.hits(snap, kind, &keyword);
        let id = sessions.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&sessions.searches).insert(id, Frozen { kind, keyword: keyword.clone(), user: user.clone(), hits });
        log(SearchRequest::Start, 0, 302, Vec::new(), false);
        return Some(
            Response::builder()
                .status(StatusCode::FOUND)
                .header(header::LOCATION, search_id_path(kind, id, &keyword, 1))
                .body(Body::empty())
                .unwrap_or_default(),
        );
    };
    let searches = lock(&sessions.searches);
    let Some(frozen) = searches.get(&id).filter(|f| f.kind == kind && f.user == user) else {
        drop(searches);
        log(SearchRequest::Page, page_no, 404, Vec::new(), false);
        return Some(page(kind, StatusCode::NOT_FOUND, "提示信息", "<p class=\"alert_error\">抱歉，搜索结果已过期或不存在</p>"));
    };
    let total = frozen.hits.len();
    let shown: Vec<Hit> = frozen.hits.iter().skip((page_no - 1) * RESULTS_PER_PAGE).take(RESULTS_PER_PAGE).copied().collect();
    drop(searches);
    let next = (page_no < total.div_ceil(RESULTS_PER_PAGE)).then(|| search_id_path(kind, id, &keyword, page_no + 1));
    let highlight = (kind == ForumKind::Discuz).then(|| encoded_keyword(kind, &keyword));
    let html = render(snap, kind, &keyword, total, &shown, next.as_deref(), highlight.as_deref());
    log(SearchRequest::Page, page_no, 200, shown.iter().map(|h| result(kind, *h)).collect(), next.is_some());
    Some(encoded(kind, StatusCode::OK, &html))
}

/// `key=value` pairs, values percent-decoded (`+` as space) in the forum's encoding.
fn parse_query(kind: ForumKind, q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let bytes = percent_decode(&v.replace('+', " "));
            (k.to_owned(), kind.encoding().decode_without_bom_handling(&bytes).0.into_owned())
        })
        .collect()
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn encoded(kind: ForumKind, status: StatusCode, html: &str) -> Response {
    let (bytes, _, _) = kind.encoding().encode(html);
    let content_type = match kind {
        ForumKind::Phpbb => "text/html; charset=big5",
        _ => "text/html",
    };
    Response::builder().status(status).header(header::CONTENT_TYPE, content_type).body(Body::from(bytes.into_owned())).unwrap_or_default()
}

fn head(kind: ForumKind, title: &str) -> String {
    let mut out = String::with_capacity(8 * 1024);
    out.push_str("<!DOCTYPE html>\n<html>\n<head>\n");
    match kind {
        ForumKind::Discuz => out.push_str("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\" />\n"),
        ForumKind::Phpbb => out.push_str("<meta charset=\"big5\" />\n"),
        ForumKind::DiscuzX => out.push_str("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\" />\n"),
        ForumKind::Bbs | ForumKind::Nexus => {}
        ForumKind::Modern => out.push_str("<meta charset=\"utf-8\">\n"),
    }
    out.push_str("<title>");
    esc_into(&mut out, title);
    out.push_str(" - ");
    esc_into(&mut out, kind.name());
    out.push_str("</title>\n</head>\n<body>\n");
    out
}

fn page(kind: ForumKind, status: StatusCode, title: &str, body: &str) -> Response {
    let mut html = head(kind, title);
    html.push_str(body);
    html.push_str("\n</body>\n</html>\n");
    encoded(kind, status, &html)
}

/// A snippet of the post around the keyword.
fn snippet(text: &str, keyword: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = text.find(keyword).map_or(0, |b| text[..b].chars().count());
    let from = at.saturating_sub(20);
    chars[from..(at + 40).min(chars.len())].iter().collect()
}

/// A result page; `next` is the next page's path, `highlight` the encoded
/// keyword Discuz! appends to thread links.
fn render(snap: &Fixture, kind: ForumKind, keyword: &str, total: usize, shown: &[Hit], next: Option<&str>, highlight: Option<&str>) -> String {
    let f = snap.forum(kind).expect("checked by the caller");
    let mut out = head(kind, &format!("搜索 {keyword}"));
    let _ = writeln!(out, "<h1 class=\"search-title\">搜索结果 <span class=\"count\">{total}</span></h1>");
    if shown.is_empty() {
        out.push_str("<p class=\"emp\">没有找到匹配结果</p>\n");
    }
    // Only forums with a search get here; the extra kinds would list like the modern forum.
    out.push_str(match kind {
        ForumKind::Discuz => "<div id=\"threadlist\" class=\"tl\"><ul>\n",
        ForumKind::Phpbb => "<div class=\"search-results\">\n",
        ForumKind::Bbs | ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => "<ol class=\"results\">\n",
    });
    for h in shown {
        let Some(t) = f.thread(h.tid) else { continue };
        let post = snap.posts(f, t, h.floor..=h.floor).pop().expect("a hit's floor exists");
        let text = post.paragraphs.join(" ");
        let b = &f.boards[t.board as usize];
        let when = civil(h.time);
        let mut thread_href = f.thread_path(t, 1);
        if let Some(kw) = highlight {
            let _ = write!(thread_href, "&highlight={kw}");
        }
        let board_href = f.board_path(b, 1);
        match kind {
            ForumKind::Discuz => {
                let _ = write!(out, "<li class=\"pbw\" id=\"{}\"><h3 class=\"xs3\"><a href=\"", post.pid);
                esc_into(&mut out, thread_href.trim_start_matches("/dz/"));
                out.push_str("\" target=\"_blank\">");
                esc_into(&mut out, &t.title);
                let _ = write!(out, "</a></h3><p class=\"xg1\">{} 个回复 - {} 次查看</p><p>", t.posts - 1, t.views);
                esc_into(&mut out, &snippet(&text, keyword));
                let _ = write!(out, "</p><p><span class=\"time\">{}</span> - <span><a href=\"home.php?mod=space&amp;uid={}\">", when.discuz(), post.uid);
                esc_into(&mut out, &post.author);
                out.push_str("</a></span> - <span><a href=\"");
                esc_into(&mut out, board_href.trim_start_matches("/dz/"));
                out.push_str("\" class=\"xi1\">");
                esc_into(&mut out, &b.title);
                out.push_str("</a></span></p></li>\n");
            }
            ForumKind::Phpbb => {
                out.push_str("<div class=\"search post\"><dl class=\"postprofile\"><dt class=\"author\">由 <a class=\"username\">");
                esc_into(&mut out, &post.author);
                let _ = write!(out, "</a></dt><dd class=\"search-result-date\">{}</dd><dd>討論區: <a href=\"", when.chinese());
                esc_into(&mut out, &format!(".{}", board_href.trim_start_matches("/phpbb")));
                out.push_str("\">");
                esc_into(&mut out, &b.title);
                out.push_str("</a></dd><dd>主題: <a href=\"");
                esc_into(&mut out, &format!(".{}", thread_href.trim_start_matches("/phpbb")));
                out.push_str("\">");
                esc_into(&mut out, &t.title);
                let _ = write!(out, "</a></dd></dl><div class=\"postbody\"><h3><a href=\"./viewtopic.php?p={}#p{}\">Re: ", post.pid, post.pid);
                esc_into(&mut out, &t.title);
                out.push_str("</a></h3><div class=\"content\">");
                esc_into(&mut out, &snippet(&text, keyword));
                out.push_str("</div></div></div>\n");
            }
            ForumKind::Bbs | ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => {
                out.push_str("<li class=\"result\"><a class=\"title\" href=\"");
                esc_into(&mut out, &thread_href);
                out.push_str("\">");
                esc_into(&mut out, &t.title);
                out.push_str("</a> <a class=\"board\" href=\"");
                esc_into(&mut out, &board_href);
                out.push_str("\">");
                esc_into(&mut out, &b.title);
                let _ = write!(out, "</a> <span class=\"floor\">#{}</span> <time class=\"posted\">{}</time><p class=\"snippet\">", h.floor, when.padded());
                esc_into(&mut out, &snippet(&text, keyword));
                out.push_str("</p></li>\n");
            }
        }
    }
    out.push_str(match kind {
        ForumKind::Discuz => "</ul></div>\n",
        ForumKind::Phpbb => "</div>\n",
        ForumKind::Bbs | ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => "</ol>\n",
    });
    if let Some(next) = next {
        out.push_str("<div class=\"pg\"><a class=\"nxt\" href=\"");
        esc_into(&mut out, next);
        out.push_str("\">下一页</a></div>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FixtureConfig;

    #[test]
    fn search_lists_matching_posts_newest_first_and_sees_new_ones() {
        let fx = Fixture::new(FixtureConfig { threads: 120, forums: vec![ForumKind::Discuz, ForumKind::Bbs], ..FixtureConfig::default() });
        let truth = fx.truth();
        let kw = "不错";
        for f in &truth.forums {
            let kind = ForumKind::from_site_id(&f.site).unwrap();
            let want: usize = f.threads.iter().flat_map(|t| &t.posts).filter(|p| p.text.contains(kw)).count();
            let got = fx.search_truth(kind, kw);
            assert_eq!(got.len(), want, "{}", f.site);
            assert!(got.windows(2).all(|w| w[0].time >= w[1].time));
        }
        let before = fx.search_truth(ForumKind::Discuz, kw).len() + fx.search_truth(ForumKind::Bbs, kw).len();
        let changes = fx.add_posts(300);
        let new_matches = changes
            .iter()
            .filter(|c| {
                let t = fx.thread_truth(ForumKind::from_site_id(&c.site).unwrap(), &c.thread).unwrap();
                t.posts[c.floor as usize - 1].text.contains(kw)
            })
            .count();
        let after = fx.search_truth(ForumKind::Discuz, kw).len() + fx.search_truth(ForumKind::Bbs, kw).len();
        assert_eq!(after, before + new_matches);
        assert!(new_matches > 0, "300 new posts and none says {kw}");
    }

    #[test]
    fn the_extra_forums_have_no_search() {
        let fx = Fixture::new(FixtureConfig { threads: 60, forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() });
        for kind in ForumKind::EXTRA {
            assert!(!kind.has_search());
            assert!(fx.search_truth(kind, "不错").is_empty());
            assert_eq!(fx.get(&Fixture::search_path(kind, "不错", 1)).status, 404);
            assert_eq!(fx.get(&search_start_path(kind, "不错")).status, 404);
        }
    }

    #[test]
    fn keywords_round_trip_through_each_forums_encoding() {
        for kind in ForumKind::ALL {
            let path = Fixture::search_path(kind, "考研 山水", 3);
            let q = path.split_once('?').unwrap().1;
            let params = parse_query(kind, q);
            let kw = params.iter().find(|(k, _)| matches!(k.as_str(), "srchtxt" | "keywords" | "q")).unwrap();
            assert_eq!(kw.1, "考研 山水", "{kind:?}: {path}");
        }
    }
}
