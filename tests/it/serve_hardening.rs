//! `luntan-serve` and `luntan-search` against requests meant to hurt them:
//! a query nested thousands deep (one GET used to abort the server), days
//! the index cannot hold, connections that send nothing, more connections
//! than the cap, a `Host` that is not this server's (DNS rebinding), and the
//! feed's times, links and token.

use crate::serve::{enc, get, served, start_server};

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Reads until the server closes the connection or `limit` passes; returns
/// what was read and whether it closed.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let end = Instant::now() + limit;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < end {
        s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return (got, true),
            Err(e) => panic!("reading: {e}"),
        }
    }
    (got, false)
}

fn still_answers(addr: SocketAddr) {
    let r = get(addr, "/api/status", &[]);
    assert!(r.status == 200 || r.status == 503, "{} {}", r.status, r.text());
}

#[test]
fn a_query_nested_thousands_deep_is_a_400_and_the_server_keeps_answering() {
    let s = served();
    let doc = &s.docs[0];
    let deep = "(".repeat(3_800);
    // The thread page read `q` itself, with no length cap: this GET aborted the process.
    let r = get(s.addr, &format!("/thread/{}/{}?q={deep}", enc(&doc.site), enc(&doc.thread)), &[]);
    assert!(r.status < 500, "{} {}", r.status, r.text());
    still_answers(s.addr);
    let nested = format!("{}{}{}", "(".repeat(40), enc(&s.common_query()), ")".repeat(40));
    for path in ["/api/search", "/search", "/api/trend", "/feed.atom"] {
        let r = get(s.addr, &format!("{path}?q={nested}"), &[]);
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        // The page says it in Chinese; the API and the feed in English, as JSON.
        assert!(path == "/search" || r.text().contains("nested more than"), "{path}: {}", r.text());
    }
    let api = get(s.addr, &format!("/api/search?q={nested}"), &[]).json();
    assert_eq!(api["column"], 17, "{api}");
    still_answers(s.addr);
}

#[test]
fn the_cli_refuses_a_query_nested_fifty_thousand_deep_in_one_line() {
    let s = served();
    let out = s.work.stage("search", &[&"(".repeat(50_000)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("nested more than"), "{err}");
}

#[test]
fn a_term_repeated_hundreds_of_times_scores_as_the_term_once() {
    let s = served();
    let q = s.common_query();
    let once = get(s.addr, &format!("/api/search?q={}&limit=5", enc(&q)), &[]).json();
    // As many copies as the 500-byte cap lets through.
    let copies = vec![q.as_str(); luntan_serve::MAX_QUERY_BYTES / (q.len() + 1)];
    assert!(copies.len() > 100);
    let many = get(s.addr, &format!("/api/search?q={}&limit=5", enc(&copies.join(" "))), &[]).json();
    assert_eq!(once["total"], many["total"]);
    let scores = |v: &serde_json::Value| v["hits"].as_array().unwrap().iter().map(|h| (h["thread"].clone(), h["score"].clone())).collect::<Vec<_>>();
    assert_eq!(scores(&once), scores(&many));
}

#[test]
fn days_the_index_cannot_hold_are_refused_not_read_as_every_thread() {
    let s = served();
    let q = enc(&s.common_query());
    for (param, word) in [("since=9999-12-31", "since: 9999-12-31"), ("until=1600-01-01", "until: 1600-01-01"), ("since=1677-12-31", "since: 1677-12-31")] {
        let r = get(s.addr, &format!("/api/search?q={q}&{param}"), &[]);
        assert_eq!(r.status, 400, "{param}: {}", r.text());
        assert!(r.text().contains(word) && r.text().contains("outside the days"), "{param}: {}", r.text());
    }
    // The ends themselves are days like any other.
    let r = get(s.addr, &format!("/api/search?q={q}&since=1678-01-01&until=2261-12-31"), &[]).json();
    assert_eq!(r["total"], get(s.addr, &format!("/api/search?q={q}"), &[]).json()["total"]);
    for flag in ["--since", "--until"] {
        let out = s.work.stage("search", &[flag, "9999-12-31", "书"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("outside the days the index can hold"), "{flag}: {err}");
    }
}

#[test]
fn a_host_that_is_not_this_servers_is_refused() {
    let s = served();
    let port = s.addr.port();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), "localhost".into()] {
        assert_eq!(get_with_host(s.addr, "/api/status", &host).0, 200, "{host}");
    }
    for host in [format!("evil.example:{port}"), "rebind.127.0.0.1.nip.io".into()] {
        let (status, body) = get_with_host(s.addr, "/search?q=x", &host);
        assert_eq!(status, 400, "{host}: {body}");
        assert!(body.contains("--public-host"), "{body}");
    }
    // --public-host names one more.
    let mut cfg = luntan_serve::ServeConfig::new(s.work.index(), s.work.data());
    cfg.public_hosts = vec!["search.example.org".into()];
    let named = start_server(cfg);
    assert_eq!(get_with_host(named, "/api/status", "Search.Example.org").0, 200);
    assert_eq!(get_with_host(named, "/api/status", "evil.example").0, 400);
}

/// An HTTP/1.0 GET with a `Host` of the caller's choosing.
fn get_with_host(addr: SocketAddr, target: &str, host: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(format!("GET {target} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes()).unwrap();
    let (raw, closed) = read_until_closed(&mut s, Duration::from_secs(30));
    assert!(closed);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{text}"));
    (status, text)
}

#[test]
fn connections_that_send_nothing_or_go_idle_are_closed_and_a_cap_holds_the_rest_back() {
    let s = served();
    let mut cfg = luntan_serve::ServeConfig::new(s.work.index(), s.work.data());
    cfg.header_timeout = Duration::from_millis(500);
    cfg.max_connections = 2;
    let addr = start_server(cfg);
    // Nothing sent: closed after the header timeout (it was held > 45 s).
    let mut silent = TcpStream::connect(addr).unwrap();
    assert!(read_until_closed(&mut silent, Duration::from_secs(20)).1, "a silent connection was held open");
    // Headers begun and never finished (slow loris).
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    assert!(read_until_closed(&mut slow, Duration::from_secs(20)).1, "a half-sent request held its connection");
    // Kept alive after an answer, then idle: closed too.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let (answer, closed) = read_until_closed(&mut idle, Duration::from_secs(20));
    assert!(closed && answer.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&answer));

    // The cap: two connections held open by requests in progress (their
    // headers unfinished, so each lives until the timeout), a third waits.
    let mut cfg = luntan_serve::ServeConfig::new(s.work.index(), s.work.data());
    cfg.header_timeout = Duration::from_secs(30);
    cfg.max_connections = 2;
    let addr = start_server(cfg);
    let mut held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for h in &mut held {
        h.write_all(b"GET /api/status HTTP/1.1\r\n").unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut third = TcpStream::connect(addr).unwrap();
    third.write_all(b"GET /api/status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let (early, _) = read_until_closed(&mut third, Duration::from_millis(700));
    assert!(early.is_empty(), "a third connection was served past the cap of two");
    drop(held.pop());
    let (late, closed) = read_until_closed(&mut third, Duration::from_secs(20));
    let late = String::from_utf8_lossy(&late);
    assert!(closed && late.starts_with("HTTP/1.") && (late.contains(" 200 ") || late.contains(" 503 ")), "{late}");
}

#[test]
fn the_feed_writes_each_forums_offset_absolute_links_and_never_the_token() {
    let s = served();
    let token = "feed-token-0123456789";
    let mut cfg = luntan_serve::ServeConfig::new(s.work.index(), s.work.data());
    cfg.token = Some(token.into());
    let addr = start_server(cfg);
    let q = s.common_query();
    let r = get(addr, &format!("/feed.atom?q={}&token={token}&site={}", enc(&q), enc(&s.docs[0].site)), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let xml = r.text();
    crate::serve::check_atom(&xml);
    assert!(!xml.contains(token), "the token is in the feed: {xml}");
    let base = format!("http://{addr}/");
    let hrefs: Vec<&str> = xml.split("href=\"").skip(1).map(|h| &h[..h.find('"').unwrap()]).collect();
    assert!(hrefs.len() > 3, "{xml}");
    for h in &hrefs {
        assert!(h.starts_with("http://") || h.starts_with("https://"), "relative link {h}");
    }
    assert!(hrefs.iter().any(|h| h.starts_with(&format!("{base}feed.atom?")) && h.contains("site=")), "{hrefs:?}");
    // The fixture's site files say no time zone: the default, +08:00.
    let updated: Vec<&str> = xml.split("<updated>").skip(1).map(|u| &u[..u.find('<').unwrap()]).collect();
    assert!(updated.len() > 1 && updated.iter().all(|u| u.ends_with("+08:00")), "{updated:?}");
    for (id, updated) in crate::serve::atom_entries(&xml) {
        let key = id.strip_prefix("tag:luntan,2024:thread/").unwrap();
        let d = s.docs.iter().find(|d| format!("{}/{}", d.site, d.thread) == key).unwrap();
        let newest = d.posts.iter().filter_map(|p| p.time.clone()).chain(d.posted.clone()).max().unwrap();
        assert_eq!(updated, format!("{newest}+08:00"), "{id}");
    }
    // A feed with no entries is as new as the moment it is read, not 1970.
    let empty = get(addr, &format!("/feed.atom?q={}&token={token}", enc("\"zzzz qqqq\"")), &[]).text();
    let year: i32 = empty.split("<updated>").nth(1).unwrap()[..4].parse().unwrap();
    assert!(year >= 2026, "{empty}");
}
