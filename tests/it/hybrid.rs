//! Hybrid sites over real loopback HTTP: the fixture's news site, whose
//! sections, lists and articles are HTML and whose comments the article
//! page's script fetches as JSON, crawled by the real stage binaries with a
//! top-level `<comments>` and checked against the fixture's truth.

use crate::common;

use std::collections::BTreeMap;

use common::Work;
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

fn server() -> luntan_fixture::BlockingFixture {
    // The forums are not crawled here: only the news site's file is written.
    FixtureServer::start_blocking(FixtureConfig { threads: 5, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).expect("fixture server")
}

fn crawl(work: &Work) {
    work.ok("discover", &["--all-boards"]);
    work.ok("download", &[]);
    work.ok("extract", &[]);
}

/// Every article of the truth is extracted, with its title, its text as
/// post 1 and every comment once, in order, each field exactly as served.
fn assert_every_article_matches(work: &Work, truth: &luntan_fixture::ForumTruth) {
    let rows = work.rows();
    for t in &truth.threads {
        let (state, reason, _, pages) = rows.get(&(t.site.clone(), t.thread.clone())).unwrap_or_else(|| panic!("news/{} was never discovered", t.thread));
        assert_eq!(*state, ThreadState::Extracted, "news/{}: {reason:?}", t.thread);
        assert_eq!(*pages, Some(t.pages), "news/{}: HTML pages", t.thread);
        let doc = common::thread_doc(work, "news", &t.thread);
        assert_eq!(doc.title, t.title, "news/{} title", t.thread);
        let got: Vec<(u32, &str, Option<&str>, String)> = doc.posts.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_deref(), p.text())).collect();
        let want: Vec<(u32, &str, Option<&str>, String)> =
            t.posts.iter().map(|p| (p.floor, p.author.as_str(), Some(p.time.as_str()), p.text.clone())).collect();
        assert_eq!(got, want, "news/{}", t.thread);
    }
    assert_eq!(rows.len(), truth.threads.len(), "rows the fixture does not have");
}

/// Requests for the comment API, by article key, in the order made.
fn comment_requests(server: &luntan_fixture::BlockingFixture, from: usize) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &server.requests()[from..] {
        if let Some(q) = r.path_and_query.strip_prefix("/news/api/comments?") {
            let key = q.split('&').find_map(|kv| kv.strip_prefix("key=cms-")).unwrap_or_default().to_owned();
            out.entry(key).or_default().push(q.to_owned());
        }
    }
    out
}

#[test]
fn every_article_and_comment_of_the_news_site_is_stored_once_in_order() {
    let server = server();
    let work = Work::new();
    server.write_news_site_file(&work.sites()).unwrap();
    let truth = server.news_truth();
    crawl(&work);
    assert_every_article_matches(&work, &truth);

    // The fixture has what this is about: comments over several pages, and
    // articles without any.
    let paged: Vec<&luntan_fixture::ThreadTruth> = truth.threads.iter().filter(|t| t.posts.len() - 1 > luntan_fixture::news::COMMENTS_PAGE).collect();
    assert!(paged.len() >= 2, "articles with more than one comments page");
    assert!(truth.threads.iter().any(|t| t.posts.len() == 1));
    // Each comments page was asked for once, through the crawl's fetcher,
    // and kept beside the article.
    let asked = comment_requests(&server, 0);
    let layout = work.layout();
    let rows = work.all_rows();
    for t in &paged {
        let pages = (t.posts.len() - 1).div_ceil(luntan_fixture::news::COMMENTS_PAGE);
        let want: Vec<String> = (1..=pages).map(|p| format!("key=cms-{}&page={p}", t.thread)).collect();
        assert_eq!(asked.get(&t.thread), Some(&want), "news/{}", t.thread);
        let row = rows.iter().find(|r| r.thread.as_str() == t.thread).unwrap();
        let loc = row.saved_location().unwrap();
        let list = std::fs::read_to_string(layout.comments_list_path(&loc)).unwrap();
        assert_eq!(list.lines().count(), pages, "news/{}", t.thread);
        assert!(layout.comments_path(&loc, pages as u32).is_file());
        assert_eq!(row.replies, Some(t.replies as i64), "the comment count is kept for later rounds");
    }
    assert!(server.requests().iter().any(|r| r.path_and_query == "/robots.txt"), "robots.txt asked for");
    assert!(common::temp_files(&work.data()).is_empty(), "no temp file left");
}

/// `luntan-export --warc` wrote an article's HTML and left its comments
/// pages out; each is now a `response` record after the article's, with the
/// head the server sent and the bytes kept.
#[test]
fn a_warc_export_holds_each_comments_page_with_the_head_it_came_with() {
    let server = server();
    let work = Work::new();
    server.write_news_site_file(&work.sites()).unwrap();
    let truth = server.news_truth();
    crawl(&work);
    let out = tempfile::tempdir().unwrap();
    let warc = out.path().join("news.warc");
    work.ok("export", &["-q", "--warc", warc.to_str().unwrap()]);
    let records = luntan_export::warc::read_records(&std::fs::read(&warc).unwrap()).unwrap();
    let uris: Vec<&str> = records.iter().map(|r| r.header("WARC-Target-URI").unwrap_or_default()).collect();
    let (layout, rows) = (work.layout(), work.all_rows());
    let mut pages_seen = 0;
    for t in truth.threads.iter().filter(|t| t.posts.len() > 1) {
        let loc = rows.iter().find(|r| r.thread.as_str() == t.thread).unwrap().saved_location().unwrap();
        let article = uris
            .iter()
            .position(|u| u.ends_with(&format!("/news/article/{}.html", t.thread)))
            .unwrap_or_else(|| panic!("news/{}: no record of the article", t.thread));
        for p in 1..=(t.posts.len() - 1).div_ceil(luntan_fixture::news::COMMENTS_PAGE) {
            let at = uris
                .iter()
                .position(|u| u.ends_with(&format!("key=cms-{}&page={p}", t.thread)))
                .unwrap_or_else(|| panic!("news/{}: no record of comments page {p} in {uris:?}", t.thread));
            assert!(at > article, "news/{}: comments page {p} before its article", t.thread);
            let r = &records[at];
            assert_eq!(r.header("WARC-Type"), Some("response"));
            let head = String::from_utf8_lossy(r.http_head().unwrap()).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200") && head.contains("content-type: application/json") && head.contains("\r\ndate: "), "{}: {head}", uris[at]);
            assert_eq!(r.http_body().unwrap(), std::fs::read(layout.comments_path(&loc, p as u32)).unwrap().as_slice());
            pages_seen += 1;
        }
    }
    assert!(pages_seen > truth.threads.len(), "articles with several comments pages");
}

#[test]
fn a_comment_added_between_rounds_and_a_new_article_are_picked_up() {
    let server = server();
    let work = Work::new();
    server.write_news_site_file(&work.sites()).unwrap();
    crawl(&work);
    let before = server.news_truth();
    assert_every_article_matches(&work, &before);

    // A comment on an article whose comments filled exactly one page, so
    // the new one starts a second; and a new article in section 2.
    let full = before.threads.iter().find(|t| t.posts.len() - 1 == luntan_fixture::news::COMMENTS_PAGE).expect("an article with one full page");
    assert!(server.add_news_comment(&full.thread));
    let fresh = server.add_news_article("2").unwrap();
    let after = server.news_truth();

    let from = server.requests().len();
    work.ok("discover", &["--all-boards"]);
    let rows = work.rows();
    for t in &after.threads {
        let (state, ..) = &rows[&(t.site.clone(), t.thread.clone())];
        let changed = t.thread == full.thread || t.thread == fresh;
        let want = if changed { ThreadState::Discovered } else { ThreadState::Extracted };
        assert_eq!(*state, want, "news/{} after the second discover", t.thread);
    }
    // Each known article's count was asked for on its first comments page.
    let asked = comment_requests(&server, from);
    assert_eq!(asked.len(), before.threads.len(), "{asked:?}");
    assert!(asked.values().all(|q| q.len() == 1 && q[0].ends_with("&page=1")), "{asked:?}");

    work.ok("download", &[]);
    work.ok("extract", &[]);
    assert_every_article_matches(&work, &after);
    // Only what changed was read again.
    let mut articles: Vec<String> =
        server.requests()[from..].iter().filter(|r| r.path_and_query.starts_with("/news/article/")).map(|r| r.path_and_query.clone()).collect();
    articles.sort();
    let mut want = vec![format!("/news/article/{}.html", full.thread), format!("/news/article/{fresh}.html")];
    want.sort();
    assert_eq!(articles, want);
    let doc = common::thread_doc(&work, "news", &full.thread);
    assert_eq!(doc.posts.len(), luntan_fixture::news::COMMENTS_PAGE + 2, "the article, its page of comments, and the new one");
}

/// A round asked every saved article for its comment count, however many
/// a news site keeps; `<comments recheck="N">` bounds it to the N most
/// recently active articles (newest comment, else the article's time).
#[test]
fn a_round_asks_only_the_most_recently_active_articles_for_their_counts() {
    let server = server();
    let work = Work::new();
    let file = server.write_news_site_file(&work.sites()).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("<comments "), "{text}");
    std::fs::write(&file, text.replacen("<comments ", "<comments recheck=\"2\" ", 1)).unwrap();
    crawl(&work);
    let truth = server.news_truth();
    assert_every_article_matches(&work, &truth);

    let from = server.requests().len();
    let out = work.ok("discover", &["--all-boards"]);
    let asked: Vec<String> = comment_requests(&server, from).into_keys().collect();
    // The truth's latest time per article: its newest comment, else itself.
    let mut by_activity: Vec<(&str, &str)> =
        truth.threads.iter().map(|t| (t.posts.iter().map(|p| p.time.as_str()).max().unwrap(), t.thread.as_str())).collect();
    by_activity.sort();
    let mut want: Vec<String> = by_activity.iter().rev().take(2).map(|(_, t)| t.to_string()).collect();
    want.sort();
    assert_eq!(asked, want, "asked {asked:?}; by activity {by_activity:?}");
    assert!(out.contains(&format!("2 articles asked for their comment count, {} less recently active ones not asked", truth.threads.len() - 2)), "{out}");
}
