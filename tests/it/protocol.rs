//! Protocol mode (S4) over real loopback HTTP: the fixture's microblog (a
//! user-centric crawl from two seed users, through reposts, mentions and
//! comments) and its XHR-comments forum, read through their JSON endpoints
//! by the real stage binaries, checked against the fixture's truth.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::Work;
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

fn server() -> luntan_fixture::BlockingFixture {
    // The forums are not crawled here: only the two JSON sites' files are written.
    FixtureServer::start_blocking(FixtureConfig { threads: 5, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).expect("fixture server")
}

/// Discover and download until a round finds nothing new: users met in
/// comments (recorded by download) are read by the next discover round.
fn crawl(work: &Work) -> usize {
    for round in 1..=6 {
        let d = work.ok("discover", &["--all-boards"]);
        work.ok("download", &[]);
        if d.contains(" 0 new threads") && round > 1 {
            return round;
        }
    }
    panic!("the crawl did not settle in 6 rounds");
}

#[test]
fn every_post_and_comment_of_the_microblog_and_the_xhr_forum_is_stored_once_in_order() {
    let server = server();
    let work = Work::new();
    server.write_microblog_site_files(&work.sites()).unwrap();
    let truth = server.microblog_truth();
    let rounds = crawl(&work);
    work.ok("extract", &[]);
    work.ok("index", &[]);

    let rows = work.rows();
    let layout = work.layout();
    let mut checked = BTreeMap::<String, (usize, usize)>::new();
    for forum in &truth.forums {
        assert!(!forum.threads.is_empty());
        for t in &forum.threads {
            let key = (t.site.clone(), t.thread.clone());
            let (state, reason, save_date, pages) = rows.get(&key).unwrap_or_else(|| panic!("{}/{} was never discovered", t.site, t.thread));
            assert_eq!(*state, ThreadState::Indexed, "{}/{}: {reason:?}", t.site, t.thread);
            assert_eq!(*pages, Some(t.pages), "{}/{}: pages", t.site, t.thread);
            let path = layout.xml_path(&common::loc(&t.site, &t.board, save_date.as_deref().unwrap(), &t.thread));
            common::assert_xml_matches_truth(&path, t);
            let c = checked.entry(t.site.clone()).or_default();
            c.0 += 1;
            c.1 += t.posts.len();
        }
    }
    let want: usize = truth.forums.iter().map(|f| f.threads.len()).sum();
    assert_eq!(rows.len(), want, "rows the fixture does not have (each post is one thread, stored once)");
    // Every user's posts, read from the timelines users were found on.
    let boards: BTreeSet<&str> = truth.forums[0].threads.iter().map(|t| t.board.as_str()).collect();
    assert_eq!(boards.len(), truth.users.iter().filter(|u| !u.posts.is_empty()).count(), "every user crawled");
    assert!(truth.users.iter().any(|u| u.depth == Some(2)), "the fixture has users two hops from the seeds");
    assert!(rounds >= 2, "{rounds}");
    println!("protocol: {checked:?} in {rounds} rounds");

    // Indexed like any forum: a phrase of a comment found in no other post finds its post.
    let mb = &truth.forums[0].threads;
    let texts: Vec<(String, String)> = mb.iter().map(|t| (t.thread.clone(), t.posts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n"))).collect();
    let (thread, phrase) = mb
        .iter()
        .filter(|t| t.posts.len() > 3)
        .find_map(|t| {
            let others: Vec<&str> = texts.iter().filter(|(id, _)| *id != t.thread).map(|(_, x)| x.as_str()).collect();
            common::phrase_not_in(&t.posts[2].text, &others, 5).map(|p| (t.thread.clone(), p))
        })
        .expect("a distinctive comment phrase");
    let hits = common::search_threads(&work, &["--site", "mb", "--limit", "50", &phrase]);
    assert!(hits.contains(&("mb".to_owned(), thread.clone())), "{phrase:?} did not find mb/{thread}: {hits:?}");

    // Running again adds and rewrites nothing.
    let before = work.files(work.dir.path());
    let again = work.ok("discover", &["--all-boards"]);
    assert!(again.contains(" 0 new threads"), "{again}");
    work.ok("download", &[]);
    work.ok("extract", &[]);
    work.ok("index", &[]);
    assert_eq!(work.rows().len(), want);
    let after = work.files(work.dir.path());
    let changed: Vec<String> = after
        .iter()
        .filter(|(p, bytes)| before.get(*p) != Some(*bytes))
        .map(|(p, _)| p.display().to_string())
        .filter(|p| !p.contains("luntan.db") && !p.ends_with(".lock") && !p.contains(".index"))
        .collect();
    assert!(changed.is_empty(), "a second run rewrote files: {changed:?}");

    // Extracting again from the saved JSON, days later by this machine's
    // clock, gives the same times: they are read against the saved fetch clock.
    let out = work.ok("extract", &["--site", "mb", "--again"]);
    assert!(out.contains(&format!("extract: {} extracted, 0 failed", truth.forums[0].threads.len())), "{out}");
    let xml = |files: &BTreeMap<std::path::PathBuf, Vec<u8>>| -> Vec<(std::path::PathBuf, Vec<u8>)> {
        files
            .iter()
            .filter(|(p, _)| p.extension().is_some_and(|x| x == "xml") && p.to_string_lossy().contains("/pages/mb/"))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect()
    };
    let reextracted = work.files(work.dir.path());
    assert_eq!(xml(&reextracted).len(), truth.forums[0].threads.len());
    assert_eq!(xml(&reextracted), xml(&after), "re-extraction changed a thread XML");

    // Every request went through the polite path: robots.txt first, no JSON page twice in one pass.
    let log = server.requests();
    assert!(log.iter().any(|r| r.path_and_query == "/robots.txt"));
}

#[test]
fn a_broken_json_site_file_is_one_line_and_the_other_site_goes_on() {
    let server = server();
    let work = Work::new();
    server.write_microblog_site_files(&work.sites()).unwrap();
    common::edit_site_file(&work.sites().join("mb.xml"), |s| s.replace(r#"items="$.data.data[*]""#, r#"items="$.data.data[""#));
    let out = work.stage("discover", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("mb.xml")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("items") && lines[0].contains("bad JSONPath"), "{stderr}");
    let xhr = server.microblog_truth().forums[1].threads.len();
    assert_eq!(work.rows().keys().filter(|(s, _)| s == "xhr").count(), xhr, "the good site was crawled: {stderr}");
}
