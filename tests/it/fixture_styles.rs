//! The fixture forums served only on request — Discuz! X with rewritten
//! URLs (`dzx`: GB18030 labelled `gbk`, thread links naming the list page
//! they sit on, recent times only in a `title` attribute), a PHPWind-style
//! forum (`nx`: UTF-8 said only in the HTTP header, `fpage` in thread
//! links, nested-div floors) and a NodeBB-style forum as served without
//! JavaScript (`md`: pagers only in `<noscript>` and `<link rel="next">`,
//! UTC times only in the `title` of empty `span.timeago`s) — crawled end to
//! end by the real stage binaries with the site files the fixture writes
//! for them, every thread's XML checked against the truth.

use crate::common;

use std::collections::BTreeMap;

use common::{fold, Work};
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind, ThreadTruth};

const THREADS_PER_FORUM: usize = 150;

#[test]
fn discuz_x_and_phpwind_style_forums_crawl_and_extract_exactly() {
    let cfg = FixtureConfig { threads: THREADS_PER_FORUM, boards: 3, forums: vec![ForumKind::DiscuzX, ForumKind::Nexus], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    let written = server.write_site_files(&work.sites()).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["dzx.xml", "nx.xml"], "only the forums served get site files");
    let truth = server.truth();
    assert_eq!(truth.forums.iter().map(|f| f.site.as_str()).collect::<Vec<_>>(), ["dzx", "nx"]);

    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &[]);
    }

    let threads: Vec<&ThreadTruth> = truth.forums.iter().flat_map(|f| f.threads.iter()).collect();
    assert!(threads.iter().any(|t| t.deleted), "fixture has no deleted threads");
    for site in ["dzx", "nx"] {
        assert!(threads.iter().filter(|t| t.site == site).any(|t| t.pages > 2), "{site}: no threads of three pages or more");
    }
    // Thread links that name their list page (page 2 of a list on): the
    // same thread goes by another name than its own pages give it.
    assert!(threads.iter().any(|t| t.site == "dzx" && !t.url_path.ends_with("-1-1.html")));
    assert!(threads.iter().any(|t| t.site == "nx" && t.url_path.contains("&fpage=")));
    // Discuz! X shows a post from the week before its clock (2024-06-30
    // 23:10) as "3 天前", the time only in a `title`: there are such posts.
    let recent = threads.iter().filter(|t| t.site == "dzx").flat_map(|t| &t.posts).filter(|p| p.time.as_str() >= "2024-06-24T00:00:00").count();
    assert!(recent >= 50, "only {recent} dzx posts within the week");

    // Every live thread extracted, every deleted one failed with its 404.
    let rows = work.rows();
    common::assert_rows_match_truth(&rows, &threads, ThreadState::Extracted, &["404"]);

    // Every XML holds exactly the fixture's posts (floor, author, time,
    // text), in order, across pages, under the thread's title.
    let layout = work.layout();
    let mut per_site: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for t in threads.iter().filter(|t| !t.deleted) {
        let (path, doc) = saved_with_header(&rows, &layout, t);
        let want_encoding = if t.site == "dzx" { "gb18030" } else { "utf-8" };
        assert_eq!(doc.encoding.to_ascii_lowercase(), want_encoding, "{}", path.display());
        let e = per_site.entry(if t.site == "dzx" { "dzx" } else { "nx" }).or_default();
        e.0 += 1;
        e.1 += doc.posts.len();
    }
    assert_eq!(per_site.len(), 2, "{per_site:?}");

    // The site files kept the crawl on the forums' real pages: none of the
    // lookalikes (one author's posts, print view, redirects, forms, the
    // last-page shortcut, sorted lists) was fetched.
    let log = server.requests();
    let lookalikes = [
        "authorid=",
        "action=printable",
        "mod=redirect",
        "mod=post",
        "mod=viewthread",
        "mod=forumdisplay",
        "uid=",
        "page=e",
        "post.php",
        "orderway=",
        "search=",
    ];
    let strays: Vec<&str> = log.iter().map(|r| r.path_and_query.as_str()).filter(|p| lookalikes.iter().any(|l| p.contains(l))).collect();
    assert!(strays.is_empty(), "lookalike pages fetched: {strays:?}");

    // Running every stage again changes nothing.
    common::assert_second_run_changes_nothing(&work, &["discover", "download", "extract"]);
}

/// The NodeBB-style forum (`md`): a client without JavaScript finds page 2
/// of a category or topic only inside `<noscript>` (`<a href="?page=2">`)
/// and in the head's `<link rel="next">`, and every time only in the
/// `title` of an empty `<span class="timeago">`, in UTC, where the truth
/// (and luntan's XML) holds the forum's +08:00 wall clock. The site file
/// (`luntan_fixture::site_file`, `ForumKind::Modern`) reads the times with
/// `time="span.timeago@title"` and `last-post="… span.timeago@title"`.
#[test]
fn a_nodebb_style_forum_without_javascript_crawls_and_extracts_exactly() {
    let cfg = FixtureConfig { threads: THREADS_PER_FORUM, boards: 3, forums: vec![ForumKind::Modern], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    let written = server.write_site_files(&work.sites()).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["md.xml"]);
    let truth = server.truth();
    let forum = &truth.forums[0];
    assert_eq!((forum.site.as_str(), forum.encoding.as_str()), ("md", "UTF-8"));

    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &[]);
    }

    let threads: Vec<&ThreadTruth> = forum.threads.iter().collect();
    assert!(threads.iter().any(|t| t.deleted), "fixture has no deleted threads");
    assert!(threads.iter().any(|t| t.pages > 2), "no threads of three pages or more");
    // Only links inside <noscript> or <link rel="next"> reach these threads:
    // every category has threads past its first list page.
    assert!(forum.boards.iter().all(|b| b.threads.len() > ForumKind::Modern.list_page_size()), "a category of one list page");

    // Every thread, from every list page, discovered; every live one
    // extracted, every deleted one failed with its 404.
    let rows = work.rows();
    common::assert_rows_match_truth(&rows, &threads, ThreadState::Extracted, &["404"]);
    // The list rows' reply counts and last-post times (UTC in a title,
    // read in the forum's zone).
    for row in work.all_rows() {
        let t = threads.iter().find(|t| t.thread == row.thread.as_str()).unwrap();
        assert_eq!(row.replies, Some(i64::from(t.replies)), "{} replies", t.thread);
        assert_eq!(row.last_post.as_deref(), Some(t.last_post.as_str()), "{} last post", t.thread);
    }

    // Every XML holds exactly the fixture's posts (floor, author, time in
    // the forum's zone, text), in order, across pages, under the title.
    let layout = work.layout();
    let mut posts = 0;
    for t in threads.iter().filter(|t| !t.deleted) {
        let (path, doc) = saved_with_header(&rows, &layout, t);
        assert_eq!(doc.encoding.to_ascii_lowercase(), "utf-8", "{}", path.display());
        posts += doc.posts.len();
    }
    assert_eq!(posts, threads.iter().map(|t| t.posts.len()).sum::<usize>());

    // The crawl kept to the forum's real pages: none of the lookalikes (a
    // post's permalink or its /post/ redirect, the sorted views, users,
    // tags, recent, popular, the composer) was fetched.
    let log = server.requests();
    let lookalike = |p: &str| {
        ["sort=", "/md/post/", "/md/user/", "/md/tags/", "/md/recent", "/md/popular", "/md/compose", "/md/login", "/md/register"].iter().any(|l| p.contains(l))
            || p.strip_prefix("/md/topic/").is_some_and(|rest| rest.split('?').next().unwrap().matches('/').count() > 1)
    };
    let strays: Vec<&str> = log.iter().map(|r| r.path_and_query.as_str()).filter(|p| lookalike(p)).collect();
    assert!(strays.is_empty(), "lookalike pages fetched: {strays:?}");

    // Running every stage again changes nothing.
    common::assert_second_run_changes_nothing(&work, &["discover", "download", "extract"]);
}

/// A thread's saved XML, its posts checked against the truth by
/// `common`, and its header here: title, first post's time, page count,
/// and page 1's URL as the list linked it (the row keeps that).
fn saved_with_header(rows: &common::Rows, layout: &luntan_core::DataDir, t: &ThreadTruth) -> (std::path::PathBuf, luntan_core::ThreadDoc) {
    let (path, doc) = common::assert_saved_matches_truth(rows, layout, t);
    assert_eq!(fold(&doc.title), fold(&t.title), "{} title", path.display());
    assert_eq!(doc.posted.as_deref(), Some(t.posts[0].time.as_str()), "{}", path.display());
    assert_eq!(doc.pages, t.pages, "{}", path.display());
    assert!(doc.url.ends_with(&t.url_path), "{}: url {} (list link {})", path.display(), doc.url, t.url_path);
    (path, doc)
}
