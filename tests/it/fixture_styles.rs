//! The two fixture forums served only on request — Discuz! X with rewritten
//! URLs (`dzx`: GB18030 labelled `gbk`, thread links naming the list page
//! they sit on, recent times only in a `title` attribute) and a
//! PHPWind-style forum (`nx`: UTF-8 said only in the HTTP header, `fpage`
//! in thread links, nested-div floors) — crawled end to end by the real
//! stage binaries with the site files the fixture writes for them, every
//! thread's XML checked against the truth.

use crate::common;

use std::collections::BTreeMap;

use common::{fold, Work};
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind, ThreadTruth};

const THREADS_PER_FORUM: usize = 150;

#[test]
fn discuz_x_and_phpwind_style_forums_crawl_and_extract_exactly() {
    let cfg = FixtureConfig { threads: THREADS_PER_FORUM, boards: 3, forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() };
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
        let (path, doc) = common::assert_saved_matches_truth(&rows, &layout, t);
        assert_eq!(fold(&doc.title), fold(&t.title), "{} title", path.display());
        assert_eq!(doc.posted.as_deref(), Some(t.posts[0].time.as_str()), "{}", path.display());
        assert_eq!(doc.pages, t.pages, "{}", path.display());
        // The row keeps page 1 as the list linked it.
        assert!(doc.url.ends_with(&t.url_path), "{}: url {} (list link {})", path.display(), doc.url, t.url_path);
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
