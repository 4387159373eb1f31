//! Hostile mode over real sockets: each transient fault fails exactly as
//! often as [`Hostility::failures_of`] says and then the page comes whole;
//! permanent faults never go away and are in the truth; content traps leave
//! every post as the truth has it.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::{dechunk, decode, read_posts};
use crate::hostile::{request_key, TRAVERSAL_THREAD_IDS};
use crate::politeness::max_concurrency;
use crate::{Fixture, FixtureConfig, FixtureServer, ForumKind, Hostility, PermanentFault, TransientFault};

/// What came back on one connection, however it ended.
struct Raw {
    bytes: Vec<u8>,
    error: Option<std::io::ErrorKind>,
    took: Duration,
}

impl Raw {
    fn head_end(&self) -> Option<usize> {
        self.bytes.windows(4).position(|w| w == b"\r\n\r\n")
    }
    fn status(&self) -> Option<u16> {
        let head = &self.bytes[..self.head_end()?];
        std::str::from_utf8(head).ok()?.split(' ').nth(1)?.parse().ok()
    }
    fn header(&self, name: &str) -> Option<String> {
        let head = std::str::from_utf8(&self.bytes[..self.head_end()?]).ok()?;
        head.split("\r\n").skip(1).filter_map(|l| l.split_once(':')).find(|(k, _)| k.trim().eq_ignore_ascii_case(name)).map(|(_, v)| v.trim().to_owned())
    }
    /// The body as sent (chunked bodies joined).
    fn body(&self) -> Vec<u8> {
        let Some(end) = self.head_end() else { return Vec::new() };
        let raw = &self.bytes[end + 4..];
        if self.header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            dechunk(raw)
        } else {
            raw.to_vec()
        }
    }
}

fn fetch(addr: SocketAddr, path: &str) -> Raw {
    let start = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    let error = loop {
        match s.read(&mut buf) {
            Ok(0) => break None,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) => break Some(e.kind()),
        }
    };
    Raw { bytes, error, took: start.elapsed() }
}

fn one_forum(hostility: Hostility) -> FixtureConfig {
    FixtureConfig { threads: 60, boards: 2, forums: vec![ForumKind::Discuz], gzip: false, hostility, ..FixtureConfig::default() }
}

#[test]
fn each_transient_fault_fails_its_first_requests_then_serves_the_page_whole() {
    for fault in TransientFault::ALL {
        let h = Hostility {
            transient_percent: 100,
            faults: vec![fault],
            stall: Duration::from_millis(300),
            retry_after: Duration::from_secs(3),
            ..Hostility::default()
        };
        let server = FixtureServer::start_blocking(one_forum(h.clone())).unwrap();
        let truth = server.truth();
        let t = truth.forums[0].threads.iter().find(|t| t.servable() && t.pages == 1).unwrap();
        let path = &t.url_path;
        let n = h.failures_of(&request_key(path));
        assert!((1..=2).contains(&n), "{fault:?}: {n}");
        for i in 0..n {
            let r = fetch(server.addr(), path);
            let at = format!("{fault:?} attempt {i}");
            match fault {
                TransientFault::Status500 | TransientFault::Status502 | TransientFault::Status503 => {
                    assert_eq!(r.status().map(|s| s.to_string()), Some(fault.name().to_owned()), "{at}");
                }
                TransientFault::TooManyRequests => {
                    assert_eq!(r.status(), Some(429), "{at}");
                    assert_eq!(r.header("retry-after").as_deref(), Some("3"), "{at}");
                }
                TransientFault::Reset => {
                    assert!(r.bytes.is_empty(), "{at}: {} bytes", r.bytes.len());
                    assert_eq!(r.error, Some(std::io::ErrorKind::ConnectionReset), "{at}");
                }
                TransientFault::Stall => {
                    assert!(r.bytes.is_empty(), "{at}");
                    assert!(r.took >= Duration::from_millis(300), "{at}: {:?}", r.took);
                    assert_eq!(r.error, Some(std::io::ErrorKind::ConnectionReset), "{at}");
                }
                TransientFault::Truncated => {
                    assert_eq!(r.status(), Some(200), "{at}");
                    let promised: usize = r.header("content-length").unwrap().parse().unwrap();
                    assert_eq!(promised, server.fixture().get(path).body.len(), "{at}");
                    let got = r.body().len();
                    assert!(got > 0 && got < promised, "{at}: {got} of {promised}");
                }
            }
        }
        let ok = fetch(server.addr(), path);
        assert_eq!(ok.status(), Some(200), "{fault:?} after {n} failures");
        assert_eq!(ok.body(), server.fixture().get(path).body, "{fault:?}");
        let log = server.requests();
        assert_eq!(log.len() as u32, n + 1);
        assert!(log[..n as usize].iter().all(|r| r.fault == Some(fault.name())), "{fault:?}: {log:?}");
        assert_eq!(log[n as usize].fault, None);
        assert!(log.iter().all(|r| r.end().is_some_and(|e| e >= r.since_start)), "{log:?}");
        // robots.txt never fails: a crawler that cannot read it stops.
        assert_eq!(fetch(server.addr(), "/robots.txt").status(), Some(200));
    }
}

#[test]
fn a_stall_the_client_walks_away_from_ends_when_the_client_goes() {
    let h = Hostility { transient_percent: 100, faults: vec![TransientFault::Stall], stall: Duration::from_secs(30), ..Hostility::default() };
    let server = FixtureServer::start_blocking(one_forum(h)).unwrap();
    let truth = server.truth();
    let path = &truth.forums[0].threads[0].url_path;
    let mut s = TcpStream::connect(server.addr()).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    let ended = loop {
        if let Some(e) = server.requests().first().and_then(|r| r.ended) {
            break e;
        }
        assert!(Instant::now() < deadline, "a request whose client left was never ended: {:?}", server.requests());
        std::thread::sleep(Duration::from_millis(10));
    };
    let r = &server.requests()[0];
    assert!(ended - r.since_start < Duration::from_secs(5), "ended {ended:?}");
    assert_eq!(max_concurrency(&server.requests()), 1);
}

#[test]
fn permanent_faults_never_go_away_and_the_truth_names_them() {
    let h = Hostility {
        permanent: PermanentFault::ALL.to_vec(),
        huge_bytes: 3 << 20,
        bomb_bytes: 5 << 20,
        other_host: "http://127.0.0.2:9/".into(),
        ..Hostility::default()
    };
    let server = FixtureServer::start_blocking(one_forum(h.clone())).unwrap();
    let truth = server.truth();
    let plain = Fixture::new(one_forum(Hostility::default())).truth();
    let threads = &truth.forums[0].threads;
    let faulty: Vec<_> = threads.iter().filter(|t| t.unservable.is_some()).collect();
    assert_eq!(faulty.len(), PermanentFault::ALL.len());
    assert!(faulty.iter().all(|t| !t.deleted));
    // The pages would still say what they say; only the server will not send them.
    for (a, b) in threads.iter().zip(&plain.forums[0].threads) {
        assert_eq!((&a.posts, &a.title, a.pages), (&b.posts, &b.title, b.pages));
    }
    let json = serde_json::to_string(&truth).unwrap();
    assert_eq!(serde_json::from_str::<crate::Truth>(&json).unwrap(), truth);
    assert!(!serde_json::to_string(&plain).unwrap().contains("unservable"), "no new field when not hostile");

    let addr = server.addr();
    for t in faulty {
        let fault = PermanentFault::from_name(t.unservable.as_deref().unwrap()).unwrap();
        let f = server.fixture().forum(ForumKind::Discuz).unwrap();
        let meta = f.thread(t.thread.parse().unwrap()).unwrap();
        let page = f.thread_path(meta, fault.page());
        for _ in 0..3 {
            let r = fetch(addr, &page);
            match fault {
                PermanentFault::AlwaysError | PermanentFault::LaterPageError => assert_eq!(r.status(), Some(500), "{fault:?}"),
                PermanentFault::RedirectLoop => {
                    assert_eq!(r.status(), Some(302));
                    let hop = r.header("location").unwrap();
                    let back = fetch(addr, &hop);
                    assert_eq!(back.status(), Some(302), "{hop}");
                    assert_eq!(back.header("location").as_deref(), Some(page.as_str()), "the loop closes");
                }
                PermanentFault::OffHostRedirect => {
                    assert_eq!(r.status(), Some(302));
                    assert!(r.header("location").unwrap().starts_with("http://127.0.0.2:9/dz/"), "{:?}", r.header("location"));
                }
                PermanentFault::GzipBomb => {
                    assert_eq!(r.header("content-encoding").as_deref(), Some("gzip"), "sent gzipped though not asked to");
                    let body = r.body();
                    let mut inflated = Vec::new();
                    flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut inflated).unwrap();
                    assert_eq!(inflated.len(), 5 << 20);
                    assert!(body.len() * 100 < inflated.len(), "{} bytes on the wire", body.len());
                }
                PermanentFault::Huge => {
                    assert_eq!(r.header("content-length").as_deref(), Some((3usize << 20).to_string().as_str()));
                    assert_eq!(r.body().len(), 3 << 20);
                }
                PermanentFault::HugeChunked => {
                    assert_eq!(r.header("content-length"), None);
                    assert_eq!(r.body().len(), 3 << 20);
                }
                PermanentFault::RobotsDisallowed => {
                    assert_eq!(r.status(), Some(200), "served to whoever asks");
                    let robots = String::from_utf8(fetch(addr, "/robots.txt").body()).unwrap();
                    assert!(robots.contains(&format!("Disallow: {page}$\n")), "{robots}");
                }
            }
        }
        if fault == PermanentFault::LaterPageError {
            assert_eq!(fetch(addr, &t.url_path).status(), Some(200), "page 1 of a later-page fault is fine");
        }
    }
}

#[test]
fn content_traps_keep_every_post_as_the_truth_has_it() {
    content_traps_keep_posts(ForumKind::ALL.to_vec());
}

#[test]
fn content_traps_keep_every_post_of_the_extra_forums_too() {
    content_traps_keep_posts(ForumKind::EXTRA.to_vec());
}

fn content_traps_keep_posts(forums: Vec<ForumKind>) {
    let h = Hostility {
        links: true,
        other_host: "http://other.test:81/".into(),
        mislabel_percent: 40,
        invalid_bytes_percent: 40,
        big_percent: 30,
        big_bytes: 200_000,
        ..Hostility::default()
    };
    let cfg = FixtureConfig { threads: 60, boards: 2, hostility: h, forums: forums.clone(), ..FixtureConfig::default() };
    let hostile = Fixture::new(cfg.clone());
    let plain = Fixture::new(FixtureConfig { hostility: Hostility::default(), ..cfg });
    assert_eq!(hostile.truth(), plain.truth(), "content traps change no truth");
    let (mut mislabelled, mut invalid, mut big) = (0, 0, 0);
    for kind in forums {
        let home = String::from_utf8_lossy(&hostile.get(kind.home_path()).body).into_owned();
        for needle in ["../../etc/passwd", "%2e%2e%2f", "javascript:", "file:///etc/passwd", "http://other.test:81/", "canary"] {
            assert!(home.contains(needle), "{kind:?} home lacks {needle}");
        }
        let f = hostile.forum(kind).unwrap();
        let list = String::from_utf8_lossy(&hostile.get(&f.board_path(&f.boards[0], 1)).body).into_owned();
        let row = match kind {
            ForumKind::Discuz | ForumKind::DiscuzX => "<tbody id=\"normalthread_x0\">",
            ForumKind::Nexus => "<li class=\"thread-item\"><div class=\"subject\"><a class=\"subject-link\" href=\"../../etc/passwd\"",
            ForumKind::Phpbb => "<li class=\"row\"><dl><dt><a href=\"../../etc/passwd\"",
            ForumKind::Bbs => "<li class=\"topic\"><a class=\"title\" href=\"../../etc/passwd\"",
            ForumKind::Modern => "<li component=\"category/topic\" data-tid=\"0\"><h2 component=\"topic/header\" class=\"title\"><a href=\"../../etc/passwd\"",
        };
        assert!(list.contains(row), "{kind:?} list rows");
        for t in plain.truth().forums.iter().find(|ft| ft.site == kind.site_id()).unwrap().threads.iter().filter(|t| !t.deleted) {
            let meta = f.thread(t.thread.parse().unwrap()).unwrap();
            for p in 1..=t.pages as usize {
                let path = f.thread_path(meta, p);
                let (h, p0) = (hostile.get(&path), plain.get(&path));
                assert_eq!(h.status, 200);
                mislabelled += usize::from(h.content_type != p0.content_type);
                let strict = kind.encoding().decode_without_bom_handling_and_without_replacement(&h.body);
                invalid += usize::from(strict.is_none());
                big += usize::from(h.body.len() >= 200_000);
                let text = kind.encoding().decode_without_bom_handling(&h.body).0.into_owned();
                assert_eq!(read_posts(kind, &text), read_posts(kind, &decode(kind, &p0.body)), "{path}");
            }
        }
        // Crafted ids get a real page, so trusting one would write a file.
        for id in TRAVERSAL_THREAD_IDS {
            let path = match kind {
                ForumKind::Discuz => format!("/dz/forum.php?mod=viewthread&tid={id}"),
                ForumKind::Phpbb => format!("/phpbb/viewtopic.php?t={id}"),
                ForumKind::Bbs if !id.contains('/') => format!("/bbs/topic/{id}/x/"),
                ForumKind::Bbs => continue,
                ForumKind::DiscuzX if !id.contains('/') => format!("/dzx/thread-{id}-1-1.html"),
                ForumKind::DiscuzX => continue,
                ForumKind::Nexus => format!("/nx/read.php?tid={id}"),
                ForumKind::Modern if !id.contains('/') => format!("/md/topic/{id}/x"),
                ForumKind::Modern => continue,
            };
            assert_eq!(hostile.get(&path).status, 200, "{path}");
            assert_eq!(plain.get(&path).status, 404, "{path}");
        }
    }
    assert!(mislabelled > 0 && invalid > 0 && big > 0, "{mislabelled} mislabelled, {invalid} invalid, {big} big");
}
