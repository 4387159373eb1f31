//! Browser mode (S4) on the fixture's forum whose thread pages load their
//! later posts over a WebSocket (`st`, see `luntan_fixture::socket`), with
//! real Chromium over loopback: a long-poll the server holds open does not
//! keep a page from settling; the page's WebSocket, which luntan carries
//! (see `browser/socket.rs`), brings every post, its frames spaced by the
//! site's delay like requests.

use std::time::Duration;

use crate::common;

use common::Work;
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind, RequestRecord};

const SITE: &str = "st";

fn server() -> luntan_fixture::BlockingFixture {
    FixtureServer::start_blocking(FixtureConfig { threads: 1, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).expect("fixture server")
}

fn site_file(work: &Work, server: &luntan_fixture::BlockingFixture) -> std::path::PathBuf {
    let path = work.sites().join(format!("{SITE}.xml"));
    std::fs::write(&path, luntan_fixture::socket::socket_browser_site_file(&server.base_url())).unwrap();
    path
}

fn show(log: &[RequestRecord]) -> Vec<String> {
    log.iter().map(|r| format!("#{} {} {} at {:?} → {}", r.seq, r.method, r.path_and_query, r.since_start, r.status)).collect()
}

/// Regression: a page holding socket.io's long-poll open (a GET the
/// server holds ~25 s) never settled: `the page never settled within 10s`.
#[test]
fn a_long_poll_the_server_holds_open_does_not_keep_its_page_from_settling() {
    let server = server();
    let work = Work::new();
    site_file(&work, &server);
    let truth = server.socket_truth();

    work.ok("discover", &["--site", SITE, "--all-boards"]);
    server.clear_requests();
    let downloaded = work.ok("download", &["--site", SITE]);
    let log = server.requests();

    let rows = work.rows();
    for t in &truth.threads {
        let (state, reason, _, _) = rows.get(&(SITE.to_owned(), t.thread.clone())).unwrap_or_else(|| panic!("{SITE}/{}: never discovered", t.thread));
        assert_eq!(*state, ThreadState::Saved, "{SITE}/{}: {reason:?}\n{downloaded}", t.thread);
    }
    // Half the pages held a long-poll open: each reached the server and was
    // let go by luntan long before the server would have answered it.
    let held: Vec<&RequestRecord> = log.iter().filter(|r| r.path_and_query.starts_with("/st/poll?") && r.path_and_query.contains("sid=")).collect();
    assert!(!held.is_empty(), "no long-poll reached the server: {:#?}", show(&log));
    for r in &held {
        let open = r.end().map(|end| end - r.since_start);
        assert!(open.is_some_and(|o| o < luntan_fixture::socket::HELD), "{} held open {open:?}: {:#?}", r.path_and_query, show(&log));
    }
    let line = downloaded.lines().find(|l| l.contains("in the browser")).expect("the browser's summary line");
    assert!(line.contains(&format!(", {} long-polls let go", held.len())), "{line}");
}

/// Issue 35: each thread page scrolled until its last post is in, the
/// posts after the first five coming over the page's WebSocket.
#[test]
fn a_thread_that_loads_by_websocket_is_stored_whole_in_order() {
    let server = server();
    let work = Work::new();
    site_file(&work, &server);
    let truth = server.socket_truth();
    work.ok("discover", &["--site", SITE, "--all-boards"]);
    let out = work.stage("download", &["--site", SITE]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // The fixture drops a socket at luntan's closing frame without its
    // own (a page left): that ends the socket, it is no failure to report.
    assert!(!err.contains("WebSocket failed"), "{err}");
    work.ok("extract", &[]);
    let rows = work.rows();
    for t in &truth.threads {
        common::assert_extracted_matches_truth(&rows, &work.layout(), t);
    }
}

/// Issue 35: a frame a page sends is a request, spaced by the site's delay.
#[test]
fn frames_a_page_sends_over_its_websocket_wait_for_the_sites_delay_like_requests() {
    let server = server();
    let work = Work::new();
    let path = site_file(&work, &server);
    let delay = Duration::from_millis(400);
    common::set_politeness(&path, r#"delay-ms="400" concurrency="1" timeout-ms="30000" retries="1""#);
    // A page quick to look settled scrolls (and sends) again soon after each answer.
    common::edit_site_file(&path, |s| s.replace(r#"settle-ms="400""#, r#"settle-ms="150""#));

    work.ok("discover", &["--site", SITE, "--all-boards"]);
    server.clear_requests();
    work.ok("download", &["--site", SITE]);
    let log = server.requests();

    let frames = log.iter().filter(|r| r.method == "WS").count();
    assert!(frames >= 3, "{frames} frames: {:#?}", show(&log));
    let sockets = log.iter().filter(|r| r.method == "GET" && r.path_and_query.starts_with("/st/socket?")).count();
    assert!(sockets >= 1, "{:#?}", show(&log));
    // The server's view of every arrival, pages, polls, socket openings and
    // frames alike: none closer to the one before than the delay, less a
    // little for the hop from luntan's gate to the server (the frame leaves
    // once the page hears its turn came).
    let (gap, a, b) = luntan_fixture::politeness::min_gap(&log).expect("requests");
    let hop = Duration::from_millis(40);
    assert!(
        gap + hop >= delay,
        "#{} {} {} and #{} {} {} arrived {gap:?} apart (delay {delay:?}): {:#?}",
        a.seq,
        a.method,
        a.path_and_query,
        b.seq,
        b.method,
        b.path_and_query,
        show(&log)
    );
}

/// Regression: luntan answers every document a page loads itself (CDP
/// `Fetch.fulfillRequest`), and Chromium fails at once (close code 1006)
/// every WebSocket such a document opens, the server never asked; a thread
/// that loads its later posts over one was stored with its first five.
/// Not scrolled at all, the page asks once as its socket opens (the end of
/// its short list is in view), so each thread holds its next batch too.
#[test]
fn a_page_whose_document_luntan_answered_opens_its_websocket_instead_of_failing_at_once() {
    use luntan_fixture::socket::{BATCH, FIRST};
    let server = server();
    let work = Work::new();
    let path = site_file(&work, &server);
    common::edit_site_file(&path, |s| s.replace(r#"<scroll items="li.post" max="20"/>"#, ""));
    let truth = server.socket_truth();
    work.ok("discover", &["--site", SITE, "--all-boards"]);
    server.clear_requests();
    let downloaded = work.ok("download", &["--site", SITE]);
    work.ok("extract", &[]);
    let log = server.requests();

    let opened = log.iter().filter(|r| r.path_and_query.starts_with("/st/socket?") && r.status == 101).count();
    assert_eq!(opened, truth.threads.len(), "a socket per thread page: {:#?}", show(&log));
    for t in &truth.threads {
        let doc = common::thread_doc(&work, SITE, &t.thread);
        assert_eq!(doc.posts.len(), t.posts.len().min(FIRST + BATCH), "{SITE}/{}: the first five and, if more, one answer's", t.thread);
    }
    let line = downloaded.lines().find(|l| l.contains("in the browser")).expect("the browser's summary line");
    assert!(line.contains(&format!(", {opened} websockets opened")), "{line}");
}
