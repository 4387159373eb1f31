//! End-to-end tests over real loopback HTTP: a tiny blocking client, a
//! site-file-driven crawl, and page-versus-truth checks by plain string search.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use luntan_core::dates::normalize_time;
use luntan_core::site::Site;
use url::Url;

use crate::{BlockingFixture, Fixture, FixtureConfig, FixtureServer, ForumKind, ThreadTruth, Truth};

mod growth;
mod hostile;
mod layers;
mod styles;

// ---------------------------------------------------------------- a minimal HTTP/1.1 client

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Sends `target` as the request target byte for byte (so raw UTF-8 can be sent).
fn get_raw(addr: SocketAddr, target: &[u8], extra_headers: &str) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(target);
    req.extend_from_slice(format!(" HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: fixture-test\r\n{extra_headers}Connection: close\r\n\r\n").as_bytes());
    s.write_all(&req).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of headers");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Resp { status, headers, body }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 4 + size..];
    }
}

fn get(addr: SocketAddr, path: &str) -> Resp {
    get_raw(addr, path.as_bytes(), "")
}

fn decode(kind: ForumKind, body: &[u8]) -> String {
    kind.encoding().decode_without_bom_handling_and_without_replacement(body).unwrap_or_else(|| panic!("{kind:?} page does not decode cleanly")).into_owned()
}

/// Whether every double-byte character is in plain Big5 (symbols, frequent
/// and less frequent hanzi), not in the HKSCS or ETEN extensions that only
/// WHATWG-style decoders read.
fn is_plain_big5(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] < 0x80 {
            i += 1;
            continue;
        }
        let Some(&trail) = bytes.get(i + 1) else { return false };
        let code = u16::from_be_bytes([bytes[i], trail]);
        let trail_ok = matches!(trail, 0x40..=0x7E | 0xA1..=0xFE);
        if !trail_ok || !matches!(code, 0xA140..=0xA3BF | 0xA440..=0xC67E | 0xC940..=0xF9D5) {
            return false;
        }
        i += 2;
    }
    true
}

// ---------------------------------------------------------------- minimal HTML reading

/// Decodes the entities the fixture writes, in one pass (so `&amp;amp;` stays `&amp;`).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "nbsp" => Some('\u{a0}'),
            e if e.starts_with('#') => e[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A NodeBB `timeago` title (`2024-03-05T04:34:00.000Z`, UTC) as the
/// forum's +08:00 wall clock, the truth's form (`2024-03-05T12:34:00`).
fn md_local_time(utc: &str) -> String {
    let s = utc.strip_suffix(":00.000Z").unwrap_or_else(|| panic!("not NodeBB's UTC form: {utc:?}"));
    assert!(s.len() == 16 && &s[4..5] == "-" && &s[7..8] == "-" && &s[10..11] == "T" && &s[13..14] == ":", "{utc:?}");
    let n = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or_else(|_| panic!("{utc:?}"));
    let minutes = crate::text::minutes_of(i64::from(n(0..4)), n(5..7), n(8..10), n(11..13), n(14..16));
    crate::text::civil(minutes + 8 * 60).iso()
}

/// A site file as luntan reads it. The `md` forum's file reads times from
/// a `title` attribute (`span.timeago@title`), a selector form luntan is
/// gaining (issue 34); where the luntan linked in does not read it yet,
/// the file is read with the attribute left off, which picks the same
/// elements, so that its links and other rules are still checked.
fn parse_site(text: &str, path: &Path) -> Site {
    Site::parse(text, path).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)?;
    Some(&s[i..i + j])
}

/// Every `href` on a page, entity-decoded.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"").skip(1).filter_map(|c| c.split('"').next()).map(unescape).collect()
}

/// Path and query of an absolute URL, as the server receives it.
fn path_of(u: &Url) -> String {
    u[url::Position::BeforePath..url::Position::AfterQuery].to_owned()
}

/// Markup as a reader sees it: tags dropped (entities are still to decode).
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once('>').map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    out
}

/// `body` without its first `<open…` … `close` section (a quote, an
/// attachment): not the post's own words.
fn without<'a>(body: &'a str, open: &str, close: &str) -> std::borrow::Cow<'a, str> {
    match body.find(open) {
        Some(i) => {
            let end = body[i..].find(close).map_or(body.len(), |j| i + j + close.len());
            std::borrow::Cow::Owned(format!("{}{}", &body[..i], &body[end..]))
        }
        None => std::borrow::Cow::Borrowed(body),
    }
}

#[derive(Debug, PartialEq)]
struct SeenPost {
    floor: u32,
    author: String,
    time: String,
    text: String,
}

/// The posts of one thread page, read with string search.
fn read_posts(kind: ForumKind, html: &str) -> Vec<SeenPost> {
    let time = |t: &str| normalize_time(&unescape(t)).unwrap_or_else(|| panic!("bad time {t:?}"));
    match kind {
        ForumKind::Discuz => html
            .split("<div id=\"post_")
            .skip(1)
            .map(|c| {
                let pid = c.split('"').next().unwrap();
                let body = between(c, &format!("id=\"postmessage_{pid}\">\n"), "</td>").unwrap();
                SeenPost {
                    floor: between(c, &format!("id=\"postnum{pid}\"><em>"), "#</em>").unwrap().parse().unwrap(),
                    author: unescape(between(c, "class=\"xw1\">", "</a>").unwrap()),
                    time: time(between(c, &format!("<em id=\"authorposton_{pid}\">"), "</em>").unwrap()),
                    text: body.split("<br />").map(|p| unescape(p.trim_start_matches("\r\n"))).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect(),
        ForumKind::Phpbb => html
            .split("\" class=\"post has-profile")
            .skip(1)
            .map(|c| {
                let author_p = between(c, "<p class=\"author\">", "</p>").unwrap();
                // A quote holds a `</div>` of its own.
                let content = without(c, "<blockquote", "</blockquote>\n");
                let body = between(&content, "<div class=\"content\">", "</div>").unwrap();
                let text = if let Some(inner) = body.strip_prefix("<p>").and_then(|b| b.strip_suffix("</p>")) {
                    inner.split("</p><p>").map(unescape).collect::<Vec<_>>().join("\n")
                } else {
                    body.split("<br>").map(unescape).collect::<Vec<_>>().join("\n")
                };
                SeenPost {
                    floor: 0,
                    author: unescape(between(author_p, "class=\"username\">", "</a>").unwrap()),
                    time: time(between(author_p, "\">", "</time>").map(|t| t.rsplit('>').next().unwrap()).unwrap()),
                    text,
                }
            })
            .collect(),
        ForumKind::DiscuzX => html
            .split("<div id=\"post_")
            .skip(1)
            // Not `post_rate_div_…`.
            .filter(|c| c.split('"').next().unwrap().bytes().all(|b| b.is_ascii_digit()))
            .map(|c| {
                let pid = c.split('"').next().unwrap();
                let mut body = between(c, &format!("id=\"postmessage_{pid}\">\n"), "</td>").unwrap();
                // Not the post's own words: an edit note, a quote, a smiley.
                if body.starts_with("<i class=\"pstatus\">") {
                    body = body.split_once("</i><br />\r\n<br />\r\n").unwrap().1;
                }
                if body.starts_with("<div class=\"quote\">") {
                    body = body.split_once("</blockquote></div><br />\r\n").unwrap().1;
                }
                let body = body.split("<img src=\"static/image/smiley/").next().unwrap();
                // An attachment's picture, and a link around the words.
                let body = body.split("<br />\r\n<ignore_js_op>").next().unwrap();
                let label = between(c, "return false;\">", "</a></strong>").unwrap();
                let floor = match label {
                    "楼主" => 1,
                    "沙发" => 2,
                    "板凳" => 3,
                    "地板" => 4,
                    l => between(l, "<em>", "</em>").unwrap().parse().unwrap(),
                };
                let shown = between(c, &format!("<em id=\"authorposton{pid}\">发表于 "), "</em>").unwrap();
                let shown = between(shown, "<span title=\"", "\"").unwrap_or(shown);
                SeenPost {
                    floor,
                    author: unescape(between(c, "class=\"xw1\">", "</a>").unwrap()),
                    time: time(shown),
                    text: body.split("<br />").map(|p| unescape(&strip_tags(p.trim_start_matches("\r\n")))).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect(),
        ForumKind::Nexus => html
            .split("<div class=\"floor\" id=\"")
            .skip(1)
            .map(|c| {
                let rest = &c[c.find("<div class=\"tpc_content\"").unwrap()..];
                let mut body = between(rest, "\">", "</div>\n").unwrap();
                if body.starts_with("<div class=\"quote\">") {
                    body = body.split_once("</blockquote></div>").unwrap().1;
                }
                let body = body.split("<br /><br /><span class=\"edit-note\">").next().unwrap();
                let body = body.replace("<b>", "").replace("</b>", "").replace("&nbsp;", " ");
                let label = between(c, "title=\"复制此楼地址\">", "</a>").unwrap();
                SeenPost {
                    floor: if label == "楼主" { 1 } else { label.trim_start_matches('#').parse().unwrap() },
                    author: unescape(between(c, "class=\"user\">", "</a>").unwrap()),
                    time: time(between(c, "<time datetime=\"", "</time>").unwrap().rsplit('>').next().unwrap()),
                    text: body.split("<br />").map(unescape).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect(),
        ForumKind::Modern => html
            .split("<li component=\"post\"")
            .skip(1)
            .map(|c| {
                // A quote and the line before it (a mention and a link) that introduces it.
                let body = without(between(c, "itemprop=\"text\">\n", "</div>").unwrap(), "<p><a class=\"plugin-mentions-user", "</blockquote>\n");
                let inner = body.trim_end().strip_prefix("<p>").and_then(|b| b.strip_suffix("</p>")).unwrap();

                SeenPost {
                    floor: between(c, "data-index=\"", "\"").unwrap().parse::<u32>().unwrap() + 1,
                    author: unescape(between(c, "itemprop=\"author\"", "</a>").unwrap().split_once("\">").unwrap().1),
                    time: md_local_time(between(c, "<span class=\"timeago\" title=\"", "\"></span>").unwrap()),
                    text: inner.split("</p>\n<p>").map(|p| unescape(&strip_tags(p))).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect(),
        ForumKind::Bbs => html
            .split("<article class=\"post\"")
            .skip(1)
            .map(|c| {
                let body = between(c, "<div class=\"inner\"><p>", "</p></div>").unwrap();
                SeenPost {
                    floor: between(c, "data-floor=\"", "\"").unwrap().parse().unwrap(),
                    author: unescape(between(c, "<span class=\"name\">", "</span>").unwrap()),
                    time: time(between(c, "<time>", "</time>").unwrap()),
                    text: body.split("</p><p>").map(unescape).collect::<Vec<_>>().join("\n"),
                }
            })
            .collect(),
    }
}

fn small() -> FixtureConfig {
    // 100 threads over 3 boards: every board has two list pages in every forum.
    FixtureConfig { threads: 100, boards: 3, ..FixtureConfig::default() }
}

fn forum_truth(truth: &Truth, kind: ForumKind) -> &crate::ForumTruth {
    truth.forums.iter().find(|f| f.site == kind.site_id()).unwrap()
}

/// A server over `cfg` and its truth.
fn server_and_truth(cfg: FixtureConfig) -> (BlockingFixture, Truth) {
    let server = FixtureServer::start_blocking(cfg).unwrap();
    let truth = server.truth();
    (server, truth)
}

/// A server over `small()` and, per forum, the site file it writes, loaded
/// as luntan loads it.
fn server_and_its_site_files() -> (BlockingFixture, Vec<(ForumKind, Site)>) {
    server_and_site_files(small())
}

/// A server over `cfg` and, per forum it serves, the site file it writes.
fn server_and_site_files(cfg: FixtureConfig) -> (BlockingFixture, Vec<(ForumKind, Site)>) {
    let server = FixtureServer::start_blocking(cfg).unwrap();
    let dir = tempfile::tempdir().unwrap();
    server.write_site_files(dir.path()).unwrap();
    let kinds: Vec<ForumKind> = server.fixture().forums().collect();
    let sites = kinds
        .into_iter()
        .map(|kind| {
            let path = dir.path().join(format!("{}.xml", kind.site_id()));
            (kind, parse_site(&std::fs::read_to_string(&path).unwrap(), &path))
        })
        .collect();
    (server, sites)
}

/// All pages of a thread, fetched over HTTP and decoded.
fn thread_pages(addr: SocketAddr, fx: &Fixture, kind: ForumKind, t: &ThreadTruth) -> Vec<String> {
    let f = fx.forum(kind).unwrap();
    let meta = f.thread(t.thread.parse().unwrap()).unwrap();
    (1..=t.pages as usize)
        .map(|p| {
            let r = get(addr, &f.thread_path(meta, p));
            assert_eq!(r.status, 200, "{kind:?} thread {} page {p}", t.thread);
            decode(kind, &r.body)
        })
        .collect()
}

// ---------------------------------------------------------------- tests

#[test]
fn same_seed_same_bytes_over_http() {
    let a = FixtureServer::start_blocking(small()).unwrap();
    let b = FixtureServer::start_blocking(small()).unwrap();
    let c = FixtureServer::start_blocking(FixtureConfig { seed: 2, ..small() }).unwrap();
    let truth = a.truth();
    let mut paths = vec!["/robots.txt".to_owned()];
    for f in &truth.forums {
        paths.push(ForumKind::from_site_id(&f.site).unwrap().home_path().to_owned());
        paths.extend(f.boards.iter().map(|b| b.url_path.clone()));
        paths.extend(f.threads.iter().filter(|t| !t.deleted).take(5).map(|t| t.url_path.clone()));
    }
    let mut differ = 0;
    for p in &paths {
        let (ra, rb, rc) = (get(a.addr(), p), get(b.addr(), p), get(c.addr(), p));
        assert_eq!(ra.status, 200, "{p}");
        assert_eq!(ra.body, rb.body, "{p} differs between two servers with one seed");
        assert_eq!(ra.body, a.fixture().get(p).body, "{p}: HTTP and Fixture::get differ");
        differ += usize::from(ra.body != rc.body);
    }
    assert!(differ > paths.len() / 2, "a different seed should change most pages");
}

/// Crawls every forum the way luntan will: from the home page, following only
/// links that the written site file's patterns match, and checks that this
/// finds every list page, every thread and every thread page, that every
/// page decodes cleanly, and that deleted threads answer 404.
#[test]
fn a_site_file_driven_crawl_finds_everything() {
    site_file_driven_crawl(small());
}

/// [`a_site_file_driven_crawl_finds_everything`] over the forums of `cfg`.
fn site_file_driven_crawl(cfg: FixtureConfig) {
    let (server, sites) = server_and_site_files(cfg);
    let truth = server.truth();
    for (kind, site) in sites {
        let ft = forum_truth(&truth, kind);
        let base = Url::parse(&server.base_url()).unwrap();
        let mut queue = VecDeque::from([site.home.clone()]);
        let mut seen: HashSet<String> = HashSet::from([site.home.to_string()]);
        let mut boards_found = BTreeSet::new();
        let mut threads_found = BTreeSet::new();
        let mut later_pages_found: HashSet<(String, Option<u64>)> = HashSet::new();
        let mut list_pages = 0;
        let mut thread_pages = 0;
        let mut gone = 0;
        while let Some(u) = queue.pop_front() {
            let r = get(server.addr(), &path_of(&u));
            let links = &site.links;
            let is_thread = links.thread.captures(u.as_str()).is_some() || links.thread_page.as_ref().is_some_and(|p| p.captures(u.as_str()).is_some());
            if r.status == 404 && is_thread {
                gone += 1;
                continue;
            }
            assert_eq!(r.status, 200, "{u}");
            match kind {
                ForumKind::Discuz | ForumKind::DiscuzX => assert_eq!(r.header("content-type"), Some("text/html")),
                ForumKind::Phpbb => assert_eq!(r.header("content-type"), Some("text/html; charset=big5")),
                ForumKind::Bbs => assert_eq!(r.header("content-type"), Some("text/html")),
                ForumKind::Nexus | ForumKind::Modern => assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8")),
            }
            let html = decode(kind, &r.body);
            match kind {
                ForumKind::Discuz => assert!(html.contains("charset=gb2312")),
                ForumKind::DiscuzX => assert!(html.contains("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\" />")),
                ForumKind::Phpbb => {
                    assert!(html.contains("<meta charset=\"big5\" />"));
                    assert!(is_plain_big5(&r.body), "{u}: HKSCS or ETEN bytes");
                }
                ForumKind::Bbs | ForumKind::Nexus => assert!(!html.contains("charset") && !html.starts_with('\u{feff}')),
                ForumKind::Modern => assert!(html.contains("<meta charset=\"utf-8\">")),
            }
            if is_thread {
                thread_pages += 1;
            } else if u != site.home {
                list_pages += 1;
            }
            for h in hrefs(&html) {
                let Ok(next) = u.join(&h) else { continue };
                if !site.host_allowed(&next) {
                    continue;
                }
                let s = next.as_str();
                // Matched by the board or thread pattern itself (some page
                // patterns take the first page too, as Discuz! X's `-1.html`).
                let mut first_page = false;
                if let Some(m) = links.board.captures(s) {
                    boards_found.insert(m.unwrap().board.unwrap().to_string());
                    first_page = true;
                } else if let Some(m) = links.board_page.as_ref().and_then(|p| p.captures(s)) {
                    boards_found.insert(m.unwrap().board.unwrap().to_string());
                } else if let Some(m) = links.thread.captures(s) {
                    // A thread's first page may go by several names (Discuz! X's
                    // name the list page they were found on): fetch it once, as
                    // luntan does, knowing threads by id.
                    if !threads_found.insert(m.unwrap().thread.unwrap().to_string()) {
                        continue;
                    }
                    first_page = true;
                } else if let Some(m) = links.thread_page.as_ref().and_then(|p| p.captures(s)) {
                    let m = m.unwrap();
                    if !later_pages_found.insert((m.thread.unwrap().to_string(), m.page)) {
                        continue;
                    }
                } else {
                    continue;
                }
                // Page 1 of a list is linked both with and without its page
                // number; fetch it once, as a crawler that understands
                // `first` does.
                let first_again = !first_page
                    && [&links.board_page, &links.thread_page]
                        .into_iter()
                        .flatten()
                        .any(|p| p.captures(s).is_some_and(|m| m.is_ok_and(|m| p.is_first(m.page))));
                if !first_again && seen.insert(s.to_owned()) {
                    queue.push_back(next);
                }
            }
            assert_eq!(u.host_str(), base.host_str());
        }
        let boards: BTreeSet<String> = ft.boards.iter().map(|b| b.board.clone()).collect();
        assert_eq!(boards_found, boards, "{kind:?} boards");
        let threads: BTreeSet<String> = ft.threads.iter().map(|t| t.thread.clone()).collect();
        assert_eq!(threads_found, threads, "{kind:?} threads");
        let deleted = ft.threads.iter().filter(|t| t.deleted).count();
        assert!(deleted >= 2, "{kind:?}");
        assert_eq!(gone, deleted, "{kind:?} deleted threads answer 404");
        let want_thread_pages: u32 = ft.threads.iter().filter(|t| !t.deleted).map(|t| t.pages).sum();
        assert_eq!(thread_pages, want_thread_pages as usize, "{kind:?} thread pages");
        let fx = server.fixture();
        let want_list_pages: usize = fx.forum(kind).unwrap().boards.iter().map(|b| fx.forum(kind).unwrap().list_pages(b)).sum();
        assert_eq!(list_pages, want_list_pages, "{kind:?} list pages");
        assert!(want_list_pages > ft.boards.len(), "{kind:?}: boards should paginate");
    }
}

#[test]
fn truth_matches_what_pages_show() {
    truth_matches_pages(FixtureConfig { threads: 80, ..FixtureConfig::default() });
}

/// [`truth_matches_what_pages_show`] over the forums of `cfg`.
fn truth_matches_pages(cfg: FixtureConfig) {
    let (server, truth) = server_and_truth(cfg);
    for kind in server.fixture().forums() {
        let ft = forum_truth(&truth, kind);
        let live: Vec<&ThreadTruth> = ft.threads.iter().filter(|t| !t.deleted).collect();
        // The longest thread (several pages), the first ones, and any with
        // awkward text or titles.
        let mut picked: Vec<&ThreadTruth> = live.iter().take(3).copied().collect();
        picked.extend(live.iter().max_by_key(|t| t.posts.len()).copied());
        picked.extend(live.iter().filter(|t| t.posts.iter().any(|p| p.text.contains(['&', '<']))).take(3));
        picked.extend(live.iter().filter(|t| t.posts.iter().any(|p| p.text.contains('😀'))).take(2));
        picked.extend(live.iter().filter(|t| t.title.contains(['&', '<', '"', '😀'])).take(2));
        assert!(picked.iter().any(|t| t.pages > 1), "{kind:?}");
        assert!(picked.iter().any(|t| t.posts.iter().any(|p| p.text.contains('😀'))), "{kind:?}: no emoji post");
        for t in picked {
            let pages = thread_pages(server.addr(), server.fixture(), kind, t);
            let mut seen = Vec::new();
            for html in &pages {
                let title = match kind {
                    ForumKind::Discuz | ForumKind::DiscuzX => between(html, "<span id=\"thread_subject\">", "</span>"),
                    ForumKind::Phpbb => between(html, "<h2 class=\"topic-title\"><a href=\"", "</a></h2>").map(|s| s.split_once("\">").unwrap().1),
                    ForumKind::Bbs => between(html, "<h1 class=\"topic-title\">", "</h1>"),
                    ForumKind::Nexus => between(html, "<h1 class=\"read_h1\" id=\"subject_tpc\">", "</h1>"),
                    ForumKind::Modern => between(html, "<span class=\"topic-title\" component=\"topic/title\">", "</span>"),
                };
                assert_eq!(unescape(title.unwrap()), t.title);
                seen.extend(read_posts(kind, html));
            }
            assert_eq!(seen.len(), t.posts.len(), "{kind:?} {}", t.thread);
            for (i, (s, p)) in seen.iter().zip(&t.posts).enumerate() {
                let floor = if kind == ForumKind::Phpbb { i as u32 + 1 } else { s.floor };
                assert_eq!((floor, &s.author, &s.time, &s.text), (p.floor, &p.author, &p.time, &p.text), "{kind:?} {}", t.thread);
            }
        }
    }
}

#[test]
fn the_emoji_is_a_numeric_reference_where_the_encoding_lacks_it() {
    let fx = Fixture::new(FixtureConfig { threads: 150, ..FixtureConfig::default() });
    let truth = fx.truth();
    for kind in ForumKind::ALL {
        let ft = forum_truth(&truth, kind);
        let t = ft.threads.iter().find(|t| !t.deleted && t.posts.iter().take(10).any(|p| p.text.contains('😀')));
        let t = t.unwrap_or_else(|| panic!("{kind:?} has no emoji on a first page"));
        let body = fx.get(&t.url_path).body;
        let ncr = body.windows(9).any(|w| w == b"&#128512;");
        let raw = body.windows(4).any(|w| w == "😀".as_bytes());
        match kind {
            ForumKind::Bbs => assert!(raw && !ncr),
            _ => assert!(ncr && !raw, "{kind:?}"),
        }
    }
    // 喆 is GBK but not GB2312, and really is sent as GBK bytes.
    let dz = forum_truth(&truth, ForumKind::Discuz);
    let t = dz.threads.iter().find(|t| !t.deleted && t.posts.iter().take(10).any(|p| p.author.contains('喆'))).unwrap();
    let body = fx.get(&t.url_path).body;
    let (zhe, _, _) = encoding_rs::GBK.encode("喆");
    assert!(body.windows(2).any(|w| w == &zhe[..]));
}

#[test]
fn board_lists_are_newest_first_and_match_the_truth() {
    board_lists_match(small());
}

/// [`board_lists_are_newest_first_and_match_the_truth`] over the forums of `cfg`.
fn board_lists_match(cfg: FixtureConfig) {
    let (server, truth) = server_and_truth(cfg);
    for kind in server.fixture().forums() {
        let ft = forum_truth(&truth, kind);
        let f = server.fixture().forum(kind).unwrap();
        let last_post: HashMap<&str, &str> = ft.threads.iter().map(|t| (t.thread.as_str(), t.last_post.as_str())).collect();
        for (b, bt) in f.boards.iter().zip(&ft.boards) {
            let mut ids = Vec::new();
            let mut times = Vec::new();
            for p in 1..=f.list_pages(b) {
                let r = get(server.addr(), &f.board_path(b, p));
                assert_eq!(r.status, 200);
                let html = decode(kind, &r.body);
                let (row, id_start, time_start, time_end) = match kind {
                    ForumKind::Discuz => ("<tbody id=\"normalthread_", "", "goto=lastpost#lastpost\"><span>", "</span>"),
                    ForumKind::Phpbb => ("<li class=\"row", "./viewtopic.php?t=", "<br /><time", "</time>"),
                    ForumKind::Bbs => ("<li class=\"topic\" data-id=\"", "", "<time class=\"last-post\">", "</time>"),
                    ForumKind::DiscuzX => ("<tbody id=\"normalthread_", "", "goto=lastpost#lastpost\">", "</a>"),
                    ForumKind::Nexus => ("<li class=\"thread-item", "id=\"thread_", "title=\"跳到最后\"><time", "</time>"),
                    // The last post's time is the teaser's, in UTC.
                    ForumKind::Modern => ("<li component=\"category/topic\"", "data-tid=\"", "component=\"topic/teaser\">", "</li>"),
                };
                for c in html.split(row).skip(1) {
                    let id = c[c.find(id_start).unwrap() + id_start.len()..].split('"').next().unwrap();
                    let t = between(c, time_start, time_end).unwrap();
                    ids.push(id.to_owned());
                    if kind == ForumKind::Modern {
                        times.push(md_local_time(between(t, "<span class=\"timeago\" title=\"", "\"").unwrap()));
                        continue;
                    }
                    // Discuz! X: a recent time's text is relative, its title absolute.
                    let t = between(t, "<span title=\"", "\"").unwrap_or(t);
                    let t = t.rsplit('>').next().unwrap();
                    times.push(normalize_time(t).unwrap());
                }
            }
            assert_eq!(ids, bt.threads, "{kind:?} board {}", b.id);
            assert!(times.windows(2).all(|w| w[0] >= w[1]), "{kind:?} board {} not newest first", b.id);
            for (id, time) in ids.iter().zip(&times) {
                assert_eq!(last_post[id.as_str()], time);
            }
        }
    }
}

#[test]
fn unknown_pages_and_deleted_threads_answer_404() {
    let server = FixtureServer::start_blocking(FixtureConfig { forums: vec![ForumKind::Discuz, ForumKind::Bbs], ..small() }).unwrap();
    let truth = server.truth();
    let addr = server.addr();
    for p in [
        "/",
        "/nope",
        "/dz/",
        "/dz/forum.php?mod=viewthread&tid=999999",
        "/dz/forum.php?mod=viewthread&tid=abc",
        "/dz/forum.php?mod=viewthread",
        "/dz/forum.php?mod=forumdisplay&fid=99999",
        "/dz/forum.php?mod=redirect&goto=lastpost",
        "/dz/admin.php",
        "/phpbb/index.php", // not served in this config
        "/bbs",
        "/bbs/board/nope/",
        "/bbs/board/life",
        "/bbs/topic/1000/",
    ] {
        let r = get(addr, p);
        assert_eq!(r.status, 404, "{p}");
        assert!(String::from_utf8_lossy(&r.body).contains("<html"), "{p}");
    }
    let dz = forum_truth(&truth, ForumKind::Discuz);
    let live = dz.threads.iter().find(|t| !t.deleted && t.pages == 1).unwrap();
    assert_eq!(get(addr, &live.url_path).status, 200);
    assert_eq!(get(addr, &format!("{}&page=1", live.url_path)).status, 200);
    assert_eq!(get(addr, &format!("{}&page=2", live.url_path)).status, 404);
    assert_eq!(get(addr, &format!("{}&page=0", live.url_path)).status, 404);
    assert_eq!(get(addr, &format!("{}&authorid=5", live.url_path)).status, 404);
    for t in dz.threads.iter().filter(|t| t.deleted) {
        let r = get(addr, &t.url_path);
        assert_eq!(r.status, 404);
        assert!(decode(ForumKind::Discuz, &r.body).contains("指定的主题不存在"));
    }
    let bbs = forum_truth(&truth, ForumKind::Bbs);
    let t = bbs.threads.iter().find(|t| !t.deleted).unwrap();
    let wrong_slug = format!("/bbs/topic/{}/x/", t.thread);
    assert_eq!(get(addr, &wrong_slug).status, 404);
    assert_eq!(get(addr, &format!("{}?page=1", t.url_path)).status, 200);
    assert_eq!(get(addr, &format!("{}?page=1&x=2", t.url_path)).status, 404);
    let robots = get(addr, "/robots.txt");
    assert_eq!(robots.status, 200);
    assert!(String::from_utf8(robots.body).unwrap().contains("Disallow: /dz/admin.php"));
}

#[test]
fn phpbb_offsets() {
    let server = FixtureServer::start_blocking(FixtureConfig { forums: vec![ForumKind::Phpbb], ..small() }).unwrap();
    let truth = server.truth();
    let ft = forum_truth(&truth, ForumKind::Phpbb);
    let b = &ft.boards[0];
    assert_eq!(get(server.addr(), &format!("{}&start=0", b.url_path)).body, get(server.addr(), &b.url_path).body);
    assert_eq!(get(server.addr(), &format!("{}&start=25", b.url_path)).status, 200);
    assert_eq!(get(server.addr(), &format!("{}&start=10", b.url_path)).status, 404);
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages >= 2).unwrap();
    assert_eq!(get(server.addr(), &format!("{}&start=15", t.url_path)).status, 200);
    assert_eq!(get(server.addr(), &format!("{}&start={}", t.url_path, t.pages * 15)).status, 404);
}

#[test]
fn raw_utf8_and_percent_encoded_slugs_are_one_page() {
    let server = FixtureServer::start_blocking(FixtureConfig { forums: vec![ForumKind::Bbs], ..small() }).unwrap();
    let truth = server.truth();
    let t = truth.forums[0].threads.iter().find(|t| !t.deleted && t.url_path.contains('%')).unwrap();
    let encoded = get(server.addr(), &t.url_path);
    assert_eq!(encoded.status, 200);
    let raw_target = crate::pages::raw_slug_path(&t.url_path);
    assert!(!raw_target.is_ascii());
    let raw = get_raw(server.addr(), raw_target.as_bytes(), "");
    assert_eq!(raw.status, 200, "raw UTF-8 request target refused");
    assert_eq!(raw.body, encoded.body);
    // Thread pagers link the raw form; the url crate turns it back into the encoded one.
    let long = truth.forums[0].threads.iter().find(|t| !t.deleted && t.pages > 1).unwrap();
    let html = decode(ForumKind::Bbs, &get(server.addr(), &long.url_path).body);
    let base = Url::parse(&server.url(&long.url_path)).unwrap();
    let page2 = hrefs(&html).into_iter().find(|h| h.ends_with("?page=2") && h.starts_with("/bbs/topic/")).unwrap();
    assert!(!page2.is_ascii());
    assert_eq!(path_of(&base.join(&page2).unwrap()), format!("{}?page=2", long.url_path));
}

#[test]
fn requests_are_logged_gzip_is_offered_and_flaky_urls_fail_once() {
    let server = FixtureServer::start_blocking(FixtureConfig { flaky_percent: 50, ..small() }).unwrap();
    let truth = server.truth();
    let paths: Vec<&str> = truth.forums.iter().flat_map(|f| f.threads.iter().filter(|t| !t.deleted).take(6)).map(|t| t.url_path.as_str()).collect();
    let mut failed_first = 0;
    for p in &paths {
        let first = get(server.addr(), p).status;
        assert!(first == 200 || first == 503, "{p}: {first}");
        failed_first += usize::from(first == 503);
        assert_eq!(get(server.addr(), p).status, 200, "{p} failed twice");
    }
    assert!(failed_first > 0 && failed_first < paths.len(), "{failed_first} of {}", paths.len());
    let log = server.requests();
    assert_eq!(log.len(), paths.len() * 2);
    assert!(log.windows(2).all(|w| w[0].seq < w[1].seq && w[0].at <= w[1].at));
    assert_eq!(log[0].path_and_query, paths[0]);
    assert_eq!(log[0].host.as_deref(), Some(server.addr().to_string().as_str()));
    assert_eq!(log[0].user_agent.as_deref(), Some("fixture-test"));
    assert!(log.iter().all(|r| r.status != 0 && r.done.is_some_and(|d| d >= r.since_start)));
    server.clear_requests();
    assert!(server.requests().is_empty());

    let plain = get(server.addr(), "/dz/forum.php");
    let zipped = get_raw(server.addr(), b"/dz/forum.php", "Accept-Encoding: gzip, deflate\r\n");
    assert_eq!(zipped.header("content-encoding"), Some("gzip"));
    assert_eq!(plain.header("content-encoding"), None);
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(&zipped.body[..]).read_to_end(&mut unzipped).unwrap();
    assert_eq!(unzipped, plain.body);
}

#[test]
fn latency_delays_responses() {
    let server = FixtureServer::start_blocking(FixtureConfig { latency: Duration::from_millis(80), ..small() }).unwrap();
    let start = Instant::now();
    assert_eq!(get(server.addr(), "/bbs/").status, 200);
    assert!(start.elapsed() >= Duration::from_millis(80));
    let r = &server.requests()[0];
    assert!(r.done.unwrap() - r.since_start >= Duration::from_millis(80));
}

#[tokio::test]
async fn serve_and_shutdown_on_the_callers_runtime() {
    let server = crate::serve(small(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(server.base_url().ends_with('/'));
    let addr = server.addr();
    let status = tokio::task::spawn_blocking(move || get(addr, "/phpbb/index.php").status).await.unwrap();
    assert_eq!(status, 200);
    server.shutdown().await;
    assert!(TcpStream::connect(addr).is_err(), "still listening after shutdown");
}

#[test]
fn a_blocking_fixture_works_inside_a_runtime_too() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let server = FixtureServer::start_blocking(small()).unwrap();
        let addr = server.addr();
        let status = tokio::task::spawn_blocking(move || get(addr, "/robots.txt").status).await.unwrap();
        assert_eq!(status, 200);
        drop(server);
    });
}

#[test]
fn big_forums_render_fast() {
    big_forums_render_fast_in(FixtureConfig { threads: 100_000, ..FixtureConfig::default() });
}

#[test]
fn big_extra_forums_render_fast() {
    big_forums_render_fast_in(FixtureConfig { threads: 100_000, forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() });
}

fn big_forums_render_fast_in(cfg: FixtureConfig) {
    let fx = Fixture::new(cfg);
    let truth_of = |kind: ForumKind| {
        let f = fx.forum(kind).unwrap();
        let t = f.threads.iter().rev().find(|t| !t.deleted && t.posts > 30).unwrap();
        (f.thread_path(t, 2), f.board_path(&f.boards[0], 500))
    };
    let kinds: Vec<ForumKind> = fx.forums().collect();
    for kind in kinds {
        let (thread, list) = truth_of(kind);
        let start = Instant::now();
        for _ in 0..20 {
            assert_eq!(fx.get(&thread).status, 200);
            assert_eq!(fx.get(&list).status, 200);
        }
        // Unoptimized test builds are far slower than release; this only
        // catches accidental whole-forum work per request.
        let each = start.elapsed() / 40;
        assert!(each < Duration::from_millis(25), "{kind:?}: {each:?} per page");
    }
}

#[test]
fn written_site_files_point_at_the_server() {
    let server = FixtureServer::start_blocking(small()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = server.write_site_files(dir.path()).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["dz.xml", "phpbb.xml", "bbs.xml"]);
    for r in Site::load_dir(dir.path()).unwrap() {
        let site = r.unwrap();
        assert_eq!(get(server.addr(), &path_of(&site.home)).status, 200, "{}", site.home);
        assert!(site.max_board_pages as usize >= server.fixture().max_board_pages(ForumKind::from_site_id(&site.id).unwrap()));
    }
    assert!(Path::new(&dir.path().join("dz.xml")).exists());
}

/// The selectors in the written site files pick the right elements out of
/// served pages (checked with the same CSS engine luntan uses).
#[test]
fn site_file_selectors_find_titles_posts_authors_times_and_bodies() {
    use scraper::{ElementRef, Html};
    let (server, sites) = server_and_its_site_files();
    let truth = server.truth();
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let text = |e: ElementRef| e.text().collect::<String>();
    for (kind, site) in sites {
        let ft = forum_truth(&truth, kind);
        let by_id: HashMap<&str, &ThreadTruth> = ft.threads.iter().map(|t| (t.thread.as_str(), t)).collect();

        // A list page: rows, titles, reply counts and last-post times.
        let list = site.list.as_ref().unwrap();
        let b = &ft.boards[1];
        let html = Html::parse_document(&decode(kind, &get(server.addr(), &b.url_path).body));
        let rows: Vec<ElementRef> = html.select(&list.row).collect();
        assert_eq!(rows.len(), kind.list_page_size().min(b.threads.len()), "{kind:?} rows");
        for (row, id) in rows.iter().zip(&b.threads) {
            let t = by_id[id.as_str()];
            let title = row.select(list.title.as_ref().unwrap()).next().map(text);
            assert_eq!(title.as_deref(), Some(t.title.as_str()), "{kind:?} title");
            let replies = row.select(list.replies.as_ref().unwrap()).next().map(text).unwrap();
            assert_eq!(replies.trim().parse::<u32>().ok(), Some(t.replies), "{kind:?} replies");
            let last = row.select(list.last_post.as_ref().unwrap()).next().map(text).unwrap();
            assert_eq!(normalize_time(&last).as_deref(), Some(t.last_post.as_str()), "{kind:?} last post");
        }

        // A long thread's first page: title and each post's parts.
        let t = ft.threads.iter().find(|t| !t.deleted && t.pages > 1).unwrap();
        let html = Html::parse_document(&decode(kind, &get(server.addr(), &t.url_path).body));
        let rules = &site.thread;
        let title = html.select(rules.title.as_ref().unwrap()).next().map(text);
        assert_eq!(title.as_deref(), Some(t.title.as_str()), "{kind:?} thread title");
        let posts: Vec<ElementRef> = html.select(rules.post.as_ref().unwrap()).collect();
        assert_eq!(posts.len(), kind.thread_page_size(), "{kind:?} posts");
        for (post, want) in posts.iter().zip(&t.posts) {
            let author: Vec<String> = post.select(rules.author.as_ref().unwrap()).map(text).collect();
            assert_eq!(author, [want.author.as_str()], "{kind:?} author");
            let time: Vec<String> = post.select(rules.time.as_ref().unwrap()).map(text).collect();
            assert_eq!(time.len(), 1, "{kind:?} time");
            assert_eq!(normalize_time(&time[0]).as_deref(), Some(want.time.as_str()), "{kind:?} time");
            if let Some(floor) = &rules.floor {
                let shown: Vec<String> = post.select(floor).map(text).collect();
                assert_eq!(shown.len(), 1);
                assert_eq!(shown[0].trim_matches(|c: char| !c.is_ascii_digit()), want.floor.to_string());
            }
            let bodies: Vec<ElementRef> = match (&rules.body, &rules.body_id) {
                (Some(sel), _) => post.select(sel).collect(),
                (None, Some(re)) => post.descendants().filter_map(ElementRef::wrap).filter(|e| e.value().id().is_some_and(|id| re.is_match(id))).collect(),
                (None, None) => unreachable!(),
            };
            assert_eq!(bodies.len(), 1, "{kind:?} body");
            // Less what it quotes, which the site file holds apart.
            let mut own = text(bodies[0]);
            for q in rules.quote.iter().flat_map(|q| bodies[0].select(&q.select)) {
                own = own.replacen(&text(q), "", 1);
            }
            assert_eq!(squash(&own), squash(&want.text), "{kind:?} body text");
        }
    }
}

#[test]
fn long_threads_reach_past_four_pages_and_change_no_shorter_thread() {
    let cfg = FixtureConfig { threads: 200, ..small() };
    let (plain, long) = (Fixture::new(cfg.clone()).truth(), Fixture::new(FixtureConfig { long_threads: true, ..cfg }).truth());
    let mut longer = 0;
    for (p, l) in plain.forums.iter().zip(&long.forums) {
        assert_eq!(p.threads.len(), l.threads.len());
        for (a, b) in p.threads.iter().zip(&l.threads) {
            assert_eq!((&a.thread, &a.title, &a.board), (&b.thread, &b.title, &b.board));
            if a.replies < 25 {
                assert_eq!(a, b, "{}/{}: a thread outside the long bucket changed", a.site, a.thread);
            } else {
                // A longer thread spreads its posts over a longer time: the same posts, other times.
                let said = |t: &ThreadTruth| t.posts.iter().take(25).map(|p| (p.author.clone(), p.text.clone())).collect::<Vec<_>>();
                assert_eq!(said(a), said(b), "{}/{}", a.site, a.thread);
            }
            longer += usize::from(b.pages >= 5);
        }
    }
    assert!(longer > 10, "only {longer} threads of 5 pages or more");
}
