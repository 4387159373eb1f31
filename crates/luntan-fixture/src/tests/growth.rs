//! Growth and search over HTTP: a server that grows while it serves, and
//! a search behind a login.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::{Activity, Change, Fixture, FixtureConfig, FixtureServer, ForumKind, Truth};

fn cfg() -> FixtureConfig {
    FixtureConfig { threads: 150, boards: 3, ..FixtureConfig::default() }
}

#[test]
fn a_server_with_a_posting_rate_grows_while_it_serves() {
    let activity = Activity { posts_per_sec: 50.0, ..Activity::default() };
    let server = FixtureServer::start_blocking(FixtureConfig { activity, ..cfg() }).unwrap();
    let path = server.truth().forums[0].boards[0].url_path.clone();
    let first = server.fixture().get(&path).body;
    std::thread::sleep(Duration::from_millis(500));
    let added = server.fixture().posts_added();
    assert!(added >= 10, "{added} posts in 0.5 s at 50/s");
    let posts = |t: &Truth| t.forums.iter().flat_map(|f| &f.threads).map(|t| t.posts.len()).sum::<usize>();
    // Arrivals go on while the truth is built: at least those counted before.
    assert!(posts(&server.truth()) >= posts(&Fixture::new(cfg()).truth()) + added);
    assert_ne!(server.fixture().get(&path).body, first, "the first list page shows the new posts");
}

fn http(addr: SocketAddr, method: &str, path: &str, headers: &str, body: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head, raw[split + 4..].to_vec())
}

#[test]
fn search_over_http_needs_a_login_and_lists_new_posts_first() {
    let activity = Activity { accounts: vec![("u1".into(), "pw1".into())], ..Activity::default() };
    let server = FixtureServer::start_blocking(FixtureConfig { forums: vec![ForumKind::Discuz], activity, ..cfg() }).unwrap();
    let kw = "不错";
    let path = Fixture::search_path(ForumKind::Discuz, kw, 1);
    assert_eq!(http(server.addr(), "GET", &path, "", "").0, 403);
    let (status, head, _) =
        http(server.addr(), "POST", Fixture::login_path(ForumKind::Discuz), "Content-Type: application/x-www-form-urlencoded\r\n", "username=u1&password=pw1");
    assert_eq!(status, 302);
    let cookie =
        head.lines().find_map(|l| l.strip_prefix("set-cookie: ").or_else(|| l.strip_prefix("Set-Cookie: "))).unwrap().split(';').next().unwrap().to_owned();
    assert_eq!(Some(cookie.clone()), server.fixture().account_cookie("u1"));
    assert_eq!(http(server.addr(), "POST", Fixture::login_path(ForumKind::Discuz), "", "username=u1&password=nope").0, 403);
    let auth = format!("Cookie: {cookie}\r\n");
    let changes = server.add_posts_matching(kw);
    let (status, _, body) = http(server.addr(), "GET", &path, &auth, "");
    assert_eq!(status, 200);
    let html = encoding_rs::GBK.decode(&body).0.into_owned();
    assert_eq!(html.matches("<li class=\"pbw\"").count(), crate::search::RESULTS_PER_PAGE);
    assert!(html.contains(&format!("tid={}\"", changes.thread)), "the newest match comes first");
    let log = server.search_log();
    let last = log.last().unwrap();
    assert_eq!((last.user.as_deref(), last.keyword.as_str(), last.page, last.status), (Some("u1"), kw, 1, 200));
    assert_eq!(last.results[0].thread, changes.thread);
    assert_eq!(last.results, server.fixture().search_truth(ForumKind::Discuz, kw)[..crate::search::RESULTS_PER_PAGE]);
    let far = Fixture::search_path(ForumKind::Discuz, kw, 10_000);
    let (_, _, body) = http(server.addr(), "GET", &far, &auth, "");
    assert_eq!(encoding_rs::GBK.decode(&body).0.matches("<li class=\"pbw\"").count(), 0, "past the end: nothing");
}

impl FixtureServer {
    /// Adds posts one at a time until one contains `kw`; returns that change.
    fn add_posts_matching(&self, kw: &str) -> Change {
        loop {
            let c = self.fixture().add_posts(1).pop().unwrap();
            let t = self.fixture().thread_truth(ForumKind::from_site_id(&c.site).unwrap(), &c.thread).unwrap();
            if t.posts[c.floor as usize - 1].text.contains(kw) {
                return c;
            }
        }
    }
}
