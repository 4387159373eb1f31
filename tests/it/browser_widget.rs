//! Browser mode (S4) on the fixture's comment-widget news site (`cw`, see
//! `luntan_fixture::widget`), with real Chromium over loopback: the page
//! script sees the server's headers, shared scripts are fetched once, and
//! replies inserted mid-list are stored once each, in the page's order.

use crate::common;

use common::Work;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

const SITE: &str = "cw";

fn server() -> luntan_fixture::BlockingFixture {
    FixtureServer::start_blocking(FixtureConfig { threads: 1, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).expect("fixture server")
}

/// Regression: the widget's XHR saw only `Content-Type`, so every age it
/// counts from the answer's `Date` read 刚刚 and every stored time was the
/// render time; replies a click inserted mid-list were stored twice; each
/// article page fetched the same script, stylesheet and config again.
#[test]
fn a_comment_widget_reading_the_date_header_is_stored_with_the_servers_times_each_comment_once_and_its_script_fetched_once() {
    let server = server();
    let work = Work::new();
    std::fs::write(work.sites().join(format!("{SITE}.xml")), luntan_fixture::widget::widget_browser_site_file(&server.base_url())).unwrap();
    let truth = server.widget_truth();

    work.ok("discover", &["--site", SITE, "--all-boards"]);
    server.clear_requests();
    let downloaded = work.ok("download", &["--site", SITE]);
    let log = server.requests();
    work.ok("extract", &[]);

    let rows = work.rows();
    // Every comment once, in the opened page's order, with the time the
    // server's clock gives its age (not 刚刚 at the render time).
    for t in &truth.threads {
        common::assert_extracted_matches_truth(&rows, &work.layout(), t);
    }
    // The first article's replies open under three comments: its states
    // nest (initial, one, two, three comments open), then one closes and
    // opens again.
    let first = &truth.threads[0];
    let (_, _, _, pages) = &rows[&(SITE.to_owned(), first.thread.clone())];
    assert!(pages.is_some_and(|p| p >= 4), "{SITE}/{}: {pages:?} states kept", first.thread);
    assert!(first.posts.iter().any(|p| !p.time.ends_with("T10:00:00")), "the fixture's ages are not all 刚刚");

    // Each shared file reached the forum once, however many pages loaded it.
    let count = |path: &str| log.iter().filter(|r| r.path_and_query == path).count();
    for path in ["/cw/static/widget.js", "/cw/static/widget.css", "/cw/static/config.json"] {
        assert_eq!(count(path), 1, "{path}: {:#?}", log.iter().map(|r| &r.path_and_query).collect::<Vec<_>>());
    }
    let articles = truth.threads.len();
    assert_eq!(log.iter().filter(|r| r.path_and_query.starts_with("/cw/a/")).count(), articles);
    let line = downloaded.lines().find(|l| l.contains("in the browser")).expect("the browser's summary line");
    assert!(line.contains(", 2 scripts/stylesheets fetched, "), "{line}");
    assert!(line.contains(&format!(", {} served from cache, ", 3 * (articles - 1))), "{line}");
}

/// The news site in browser mode: its page script draws each reply inside
/// the comment it answers (`<div class="comment">` within
/// `<div class="comment">`, two levels deep). Regression: luntan kept only
/// the outermost match of `post`, so a comment's replies were read as its
/// own words and 15 of the 64 posts were lost as posts; with
/// `nested-posts="true"` every comment and reply is a post of its own, in
/// the page's order, each without the replies inside it, as the comments
/// API (hybrid mode) gives them.
#[test]
fn replies_drawn_inside_their_comment_are_posts_of_their_own_with_nested_posts() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 1, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() })
        .expect("fixture server");
    let work = Work::new();
    std::fs::write(work.sites().join("news.xml"), luntan_fixture::news_browser_site_file(&server.base_url())).unwrap();
    let truth = server.news_truth();
    work.ok("discover", &["--site", "news", "--all-boards"]);
    work.ok("download", &["--site", "news"]);
    work.ok("extract", &[]);
    let rows = work.rows();
    for t in &truth.threads {
        common::assert_extracted_matches_truth(&rows, &work.layout(), t);
    }
    let nested: usize = truth.threads.iter().map(|t| server.news_conversation(&t.thread).unwrap().iter().filter(|c| c.nested).count()).sum();
    assert!(nested >= 10, "the fixture's replies drawn inside comments: {nested}");
}
