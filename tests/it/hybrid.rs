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

/// A fixture server and a work folder holding its news site file: the
/// file's path and text.
fn news_file() -> (luntan_fixture::BlockingFixture, Work, std::path::PathBuf, String) {
    let server = server();
    let work = Work::new();
    let path = server.write_news_site_file(&work.sites()).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    (server, work, path, text)
}

fn crawl(work: &Work) {
    work.ok("discover", &["--all-boards"]);
    work.ok("download", &[]);
    work.ok("extract", &[]);
}

/// The news site crawled once, every article checked against its truth.
fn crawled() -> (luntan_fixture::BlockingFixture, Work, luntan_fixture::ForumTruth) {
    let server = server();
    let work = Work::new();
    server.write_news_site_file(&work.sites()).unwrap();
    let truth = server.news_truth();
    crawl(&work);
    assert_every_article_matches(&work, &truth);
    (server, work, truth)
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

/// The comments article `aid`'s API pages hold as items (its top-level
/// ones; replies come nested inside them).
fn top_level(server: &luntan_fixture::BlockingFixture, aid: &str) -> usize {
    server.news_conversation(aid).unwrap().iter().filter(|c| !c.nested).count()
}

/// The comments pages of article `aid`.
fn comment_pages(server: &luntan_fixture::BlockingFixture, aid: &str) -> usize {
    top_level(server, aid).div_ceil(luntan_fixture::news::COMMENTS_PAGE)
}

/// Every comment of every article is stored as the fixture's conversation
/// says: its id, the id of the comment it answers, its author's id, its
/// likes and location, at its floor.
fn assert_conversations_match(work: &Work, server: &luntan_fixture::BlockingFixture, truth: &luntan_fixture::ForumTruth) {
    type Seen = (u32, Option<String>, Option<String>, Option<String>, Option<u64>, Option<String>);
    for t in &truth.threads {
        let doc = common::thread_doc(work, "news", &t.thread);
        let got: Vec<Seen> =
            doc.posts[1..].iter().map(|p| (p.floor, p.id.clone(), p.reply_to.clone(), p.author_id.clone(), p.likes, p.location.clone())).collect();
        let want: Vec<Seen> = server
            .news_conversation(&t.thread)
            .unwrap()
            .into_iter()
            .map(|c| (c.floor, Some(c.id), c.parent, Some(c.author_id), Some(c.likes), c.location))
            .collect();
        assert_eq!(got, want, "news/{}", t.thread);
        let article = &doc.posts[0];
        assert_eq!((&article.id, &article.reply_to), (&None, &None), "news/{}: the article is read from HTML", t.thread);
    }
}

/// Requests for the comment API, by article key, in the order made.
fn comment_requests(server: &luntan_fixture::BlockingFixture, from: usize) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in &server.requests()[from..] {
        if let Some(q) = r.path_and_query.strip_prefix("/news/api/comments?") {
            // The article, by its key or (`key-from="path"`) its path.
            fn by_path(kv: &str) -> Option<&str> {
                kv.strip_prefix("path=%2Fnews%2Farticle%2F")?.strip_suffix(".html")
            }
            let key = q.split('&').find_map(|kv| kv.strip_prefix("key=cms-").or_else(|| by_path(kv))).unwrap_or_default().to_owned();
            out.entry(key).or_default().push(q.to_owned());
        }
    }
    out
}

#[test]
fn every_article_and_comment_of_the_news_site_is_stored_once_in_order() {
    let (server, work, truth) = crawled();

    // The fixture has what this is about: comments over several pages, and
    // articles without any.
    let paged: Vec<&luntan_fixture::ThreadTruth> = truth.threads.iter().filter(|t| comment_pages(&server, &t.thread) > 1).collect();
    assert!(paged.len() >= 2, "articles with more than one comments page");
    assert!(truth.threads.iter().any(|t| t.posts.len() == 1));
    // Each comments page was asked for once, through the crawl's fetcher,
    // and kept beside the article.
    let asked = comment_requests(&server, 0);
    let layout = work.layout();
    let rows = work.all_rows();
    for t in &paged {
        let pages = comment_pages(&server, &t.thread);
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
    let (server, work, truth) = crawled();
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
        for p in 1..=comment_pages(&server, &t.thread) {
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
    let (server, work, before) = crawled();

    // A comment on an article whose comments filled exactly one page, so
    // the new one starts a second; and a new article in section 2.
    let full = before.threads.iter().find(|t| top_level(&server, &t.thread) == luntan_fixture::news::COMMENTS_PAGE).expect("an article with one full page");
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
    assert_eq!(doc.posts.len(), full.posts.len() + 1, "the article, its page of comments, and the new one");
}

/// Comment packages a blog embeds key a page's comments by its own path,
/// which no page source holds: with `key-from="path"` every article's
/// comments are read from `?path=…`, as with the page's key, and a later
/// round asks each saved article's count by the path its page 1 had.
#[test]
fn comments_keyed_by_the_articles_path_are_read_and_rechecked() {
    let (server, work, path, text) = news_file();
    let by_path = text.replace(r##"key="#comments@data-thread-key""##, r#"key-from="path""#).replace("key={key}", "path={key}");
    assert_ne!(by_path, text);
    std::fs::write(&path, by_path).unwrap();
    let truth = server.news_truth();
    crawl(&work);
    assert_every_article_matches(&work, &truth);
    let asked: Vec<String> = server.requests().iter().filter_map(|r| r.path_and_query.strip_prefix("/news/api/comments?").map(str::to_owned)).collect();
    assert!(!asked.is_empty() && asked.iter().all(|q| q.starts_with("path=%2Fnews%2Farticle%2F") && !q.contains("key=")), "{asked:?}");

    let full = truth.threads.iter().find(|t| top_level(&server, &t.thread) == luntan_fixture::news::COMMENTS_PAGE).expect("an article with one full page");
    assert!(server.add_news_comment(&full.thread));
    let from = server.requests().len();
    work.ok("discover", &["--all-boards"]);
    let rows = work.rows();
    assert_eq!(rows[&("news".to_owned(), full.thread.clone())].0, ThreadState::Discovered, "its count grew");
    let rechecked = comment_requests(&server, from);
    assert_eq!(rechecked.len(), truth.threads.len(), "{rechecked:?}");
}

/// Replies the comment API nests inside their comments (and replies to
/// replies, a level deeper) came out as floors of their own with no sign
/// of what they answered, and no comment said who wrote it (by id), how
/// liked it was or where from: each now follows its comment, depth first,
/// once, answering it (or the reply it names), with its author's id,
/// likes and location.
#[test]
fn nested_replies_come_out_after_their_comment_answering_it_each_once() {
    let (server, work, truth) = crawled();
    assert_conversations_match(&work, &server, &truth);
    // What this is about is in the fixture: nested replies, replies nested
    // two deep, top-level comments answering earlier ones, locations.
    let all: Vec<luntan_fixture::news::CommentTruth> = truth.threads.iter().flat_map(|t| server.news_conversation(&t.thread).unwrap()).collect();
    assert!(all.iter().filter(|c| c.nested).count() >= 10);
    assert!(all.iter().any(|c| !c.nested && c.parent.is_some()), "a flat reply");
    let nested_ids: Vec<&str> = all.iter().filter(|c| c.nested).map(|c| c.id.as_str()).collect();
    assert!(all.iter().any(|c| c.parent.as_deref().is_some_and(|p| nested_ids.contains(&p))), "a reply to a reply");
    assert!(all.iter().any(|c| c.location.is_some()) && all.iter().any(|c| c.location.is_none()));

    // Export's NDJSON carries the same conversation.
    let out = tempfile::tempdir().unwrap();
    let ndjson = out.path().join("news.ndjson");
    work.ok("export", &["-q", "--ndjson", ndjson.to_str().unwrap()]);
    let text = std::fs::read_to_string(&ndjson).unwrap();
    let lines: Vec<luntan_core::doc::ThreadJson> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let busiest = truth.threads.iter().max_by_key(|t| t.posts.len()).unwrap();
    let line = lines.iter().find(|l| l.thread.as_str() == busiest.thread).expect("the busiest article exported");
    let conv = server.news_conversation(&busiest.thread).unwrap();
    let got: Vec<(Option<&str>, Option<&str>, Option<&str>)> =
        line.posts[1..].iter().map(|p| (p.id.as_deref(), p.reply_to.as_deref(), p.author_id.as_deref())).collect();
    let want: Vec<(Option<&str>, Option<&str>, Option<&str>)> =
        conv.iter().map(|c| (Some(c.id.as_str()), c.parent.as_deref(), Some(c.author_id.as_str()))).collect();
    assert_eq!(got, want);
}

/// A reply added under an old comment between rounds: the comment count
/// grows, the next round re-reads the article, and the reply is stored
/// right after its comment's earlier replies, answering it, with the
/// floors after it moved on by one.
#[test]
fn a_reply_to_an_old_comment_is_stored_under_it_in_a_later_round() {
    let (server, work, before) = crawled();
    assert_conversations_match(&work, &server, &before);

    let busy = before.threads.iter().find(|t| comment_pages(&server, &t.thread) > 1).expect("an article with several comments pages");
    let old = server.news_conversation(&busy.thread).unwrap();
    assert!(server.add_news_reply(&busy.thread));
    work.ok("discover", &["--all-boards"]);
    assert_eq!(work.rows()[&("news".to_string(), busy.thread.clone())].0, ThreadState::Discovered, "the grown count re-queued it");
    work.ok("download", &[]);
    work.ok("extract", &[]);
    let after = server.news_truth();
    assert_every_article_matches(&work, &after);
    assert_conversations_match(&work, &server, &after);

    let doc = common::thread_doc(&work, "news", &busy.thread);
    let at = doc.posts.iter().position(|p| p.id.as_deref().is_some_and(|id| !old.iter().any(|c| c.id == id))).expect("the new reply");
    assert_eq!(doc.posts[at].reply_to.as_deref(), Some(old[0].id.as_str()), "it answers the oldest comment");
    let siblings = old.iter().take_while(|c| c.floor == 2 || c.nested).count();
    assert_eq!(at, 1 + siblings, "after the comment and its earlier replies");
    assert_eq!(doc.posts.len(), busy.posts.len() + 1);
}

/// A `<comments>` attribute that is no JSONPath, or a reply path with no
/// id for replies to name their comment by, stops the site file with one
/// line naming the file, the line and the attribute, before any request.
#[test]
fn a_bad_parent_path_is_one_line_naming_the_file_line_and_attribute() {
    let (server, work, file, good) = news_file();
    let line = good.lines().position(|l| l.contains("parent=")).unwrap() + 1;
    for (from, to, field, says) in
        [(r#"parent="$.parent""#, r#"parent="$.parent[""#, "parent", "bad JSONPath"), (r#"id="$.id" "#, "", "children", "needs an `id` path")]
    {
        assert!(good.contains(from), "{from}");
        std::fs::write(&file, good.replace(from, to)).unwrap();
        let from_req = server.requests().len();
        let out = work.stage("discover", &["--all-boards"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("news.xml")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        let want = format!("{}: line {line}: {field}: ", file.display());
        assert!(lines[0].starts_with(&want) && lines[0].contains(says), "{}\nwant {want}… {says}", lines[0]);
        assert!(server.requests()[from_req..].iter().all(|r| !r.path_and_query.starts_with("/news/")), "nothing asked of the site");
    }
}

/// A round asked every saved article for its comment count, however many
/// a news site keeps; `<comments recheck="N">` bounds it to the N most
/// recently active articles: their newest comment, nested replies included,
/// recorded at download (the news lists show no last post), else the
/// article's own time.
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
    let top2 = |mut by: Vec<(&str, &str)>| {
        by.sort();
        let mut top: Vec<String> = by.iter().rev().take(2).map(|(_, t)| t.to_string()).collect();
        top.sort();
        top
    };
    let by_activity = top2(truth.threads.iter().map(|t| (t.posts.iter().map(|p| p.time.as_str()).max().unwrap(), t.thread.as_str())).collect());
    let by_article = top2(truth.threads.iter().map(|t| (t.posts[0].time.as_str(), t.thread.as_str())).collect());
    assert_ne!(by_activity, by_article, "the fixture must tell the two orders apart for this test to mean anything");
    assert_eq!(asked, by_activity, "asked {asked:?}; the newest articles are {by_article:?}");
    assert!(out.contains(&format!("2 articles asked for their comment count, {} less recently active ones not asked", truth.threads.len() - 2)), "{out}");
}

/// The comment-widget news site (`cw`) read as a hybrid site: its comments
/// API gives each comment's reply count, and the replies come from another
/// endpoint, one request per comment that has any (`replies-url`).
/// Regression: a hybrid site read only the comments endpoint, so every
/// reply was missed (only browser mode read them). Each reply now follows
/// its comment, answering it, once; a comment without replies is not
/// asked for any; a WARC export holds every replies page.
#[test]
fn replies_asked_for_per_comment_follow_their_comment_answering_it() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 1, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() })
        .expect("fixture server");
    let work = Work::new();
    std::fs::write(work.sites().join("cw.xml"), luntan_fixture::widget::widget_hybrid_site_file(&server.base_url())).unwrap();
    let truth = server.widget_api_truth();
    work.ok("discover", &["--site", "cw", "--all-boards"]);
    server.clear_requests();
    work.ok("download", &["--site", "cw"]);
    let log = server.requests();
    work.ok("extract", &[]);
    let rows = work.rows();
    for t in &truth.threads {
        common::assert_extracted_matches_truth(&rows, &work.layout(), t);
    }
    let replies: usize = truth.threads.iter().flat_map(|t| &t.posts).filter(|p| p.reply_to.is_some()).count();
    assert!(replies >= 5, "the fixture's replies: {replies}");
    // One replies request per comment that has replies, none for the rest.
    let commented: std::collections::BTreeSet<&str> = truth.threads.iter().flat_map(|t| &t.posts).filter_map(|p| p.reply_to.as_deref()).collect();
    let asked: Vec<String> = log.iter().filter_map(|r| r.path_and_query.strip_prefix("/cw/api/replies?cid=").map(str::to_owned)).collect();
    assert_eq!(asked.iter().map(String::as_str).collect::<std::collections::BTreeSet<_>>(), commented);
    assert_eq!(asked.len(), commented.len(), "each comment's replies asked for once: {asked:?}");
    // A WARC export holds each replies page with the rest.
    let out = tempfile::tempdir().unwrap();
    let warc = out.path().join("cw.warc");
    work.ok("export", &["-q", "--warc", warc.to_str().unwrap()]);
    let records = luntan_export::warc::read_records(&std::fs::read(&warc).unwrap()).unwrap();
    for cid in &commented {
        let r = records.iter().find(|r| r.header("WARC-Target-URI").is_some_and(|u| u.ends_with(&format!("/cw/api/replies?cid={cid}"))));
        assert_eq!(r.and_then(|r| r.header("WARC-Type")), Some("response"), "cid {cid}: no WARC response record");
    }
    // Without the heads (pages saved before luntan kept them), each page
    // gets a minimal head at its list line's URL, the comment id not in it.
    for f in common::files_under(&work.layout().root().join("pages")).into_iter().filter(|f| f.to_string_lossy().ends_with("_c.http")) {
        std::fs::remove_file(f).unwrap();
    }
    let bare = out.path().join("bare.warc");
    work.ok("export", &["-q", "--warc", bare.to_str().unwrap()]);
    let records = luntan_export::warc::read_records(&std::fs::read(&bare).unwrap()).unwrap();
    let uris: Vec<&str> = records.iter().filter_map(|r| r.header("WARC-Target-URI")).filter(|u| u.contains("/cw/api/replies")).collect();
    assert_eq!(uris.len(), commented.len(), "{uris:?}");
    assert!(commented.iter().all(|cid| uris.iter().any(|u| u.ends_with(&format!("/cw/api/replies?cid={cid}")))), "{uris:?}");
}
