//! Incremental rounds (S1) against a forum that changes between rounds: after
//! a full crawl, a round with nothing new reads one list page per board; after
//! new threads and replies, one round finds every change reading at most
//! twice the list pages that hold a change, and the index then holds each
//! changed thread once, new posts searchable.
//!
//! The always-on size is 600 threads per forum (1,800 in all). The issue's
//! size, 20,000 threads, runs with `LUNTAN_FULL=1` (or any size with
//! `LUNTAN_INCREMENTAL_THREADS=N`, per forum); the figures are printed either way.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use common::{classify, list_requests, load_sites, phrase_not_in, search_threads, secs, thread_doc, Requested, Work};
use luntan_core::{Site, Store, ThreadState};
use luntan_fixture::{BlockingFixture, Change, ChangeKind, FixtureConfig, FixtureServer, ForumKind};

/// The fixture's three forums with `threads` threads each on `boards` boards,
/// a data directory with their site files, the sites and the base URL.
fn forums(threads: usize, boards: usize) -> (BlockingFixture, Work, Vec<Site>, String) {
    let server = FixtureServer::start_blocking(FixtureConfig { threads, boards, ..FixtureConfig::default() }).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let sites = load_sites(&work.sites());
    let base = server.base_url();
    (server, work, sites, base)
}

fn threads_per_forum() -> usize {
    if let Some(n) = std::env::var("LUNTAN_INCREMENTAL_THREADS").ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    if std::env::var_os("LUNTAN_FULL").is_some() {
        // 3 × 6,667 ≈ 20,000.
        return 6_667;
    }
    600
}

#[test]
fn later_rounds_read_only_what_changed() {
    let per_forum = threads_per_forum();
    let (server, work, sites, base) = forums(per_forum, 4);
    let truth = server.truth();
    let boards: usize = truth.forums.iter().map(|f| f.boards.len()).sum();
    let total: usize = truth.forums.iter().map(|f| f.threads.len()).sum();

    // The full crawl.
    let t = Instant::now();
    for stage in ["discover", "download", "extract", "index"] {
        let ts = Instant::now();
        work.ok(stage, &[]);
        println!("full crawl: {stage} {}", secs(ts));
    }
    let full_lists: usize = list_requests(&sites, &base, &server.requests()).values().sum();
    println!("full crawl of {total} threads on {boards} boards: {} requests ({full_lists} list pages) in {}", server.requests().len(), secs(t));

    // A round with nothing new: one list page per board.
    server.clear_requests();
    let out = work.ok("discover", &["--all-boards"]);
    let log = server.requests();
    let lists = list_requests(&sites, &base, &log);
    let robots = log.iter().filter(|r| classify(&sites, &base, &r.path_and_query) == Requested::Robots).count();
    println!(
        "round with nothing new: {} requests, {} list pages for {boards} boards, {robots} robots.txt\n  {}",
        log.len(),
        lists.values().sum::<usize>(),
        out.trim()
    );
    assert_eq!(lists.len(), boards, "every board visited once: {lists:?}");
    assert!(lists.values().all(|&n| n == 1), "more than one list page for a board with nothing new: {lists:?}");
    let others: Vec<_> = log
        .iter()
        .map(|r| classify(&sites, &base, &r.path_and_query))
        .filter(|c| !matches!(c, Requested::List(..) | Requested::Robots | Requested::Home(_)))
        .collect();
    assert!(others.is_empty(), "a round with nothing new fetched {others:?}");
    for s in &sites {
        let r = Store::open(&work.layout().db_path()).unwrap().last_round(&s.id).unwrap().unwrap();
        assert_eq!((r.new_threads, r.updated_threads), (0, 0), "{}", s.id);
    }

    // Boards are not due yet: a plain round reads no list page at all.
    server.clear_requests();
    work.ok("discover", &[]);
    assert!(list_requests(&sites, &base, &server.requests()).is_empty(), "boards not due were visited");

    // 50 new threads and 30 new replies spread over the boards.
    let mut changes: Vec<Change> = server.add_threads(50);
    changes.extend(server.add_replies(30));
    let changed: BTreeSet<(String, String)> = changes.iter().map(|c| (c.site.clone(), c.thread.clone())).collect();
    assert_eq!(changed.len(), 80);
    let truth = server.truth();
    // The fewest list requests that can see every change: each board's page 1,
    // plus every further page holding a changed thread.
    let mut minimal = 0;
    for f in &truth.forums {
        let size = ForumKind::from_site_id(&f.site).unwrap().list_page_size();
        for b in &f.boards {
            let pages: BTreeSet<usize> =
                b.threads.iter().enumerate().filter(|(_, t)| changed.contains(&(f.site.clone(), (*t).clone()))).map(|(i, _)| i / size).collect();
            minimal += pages.len().max(1);
        }
    }
    server.clear_requests();
    let t = Instant::now();
    let out = work.ok("discover", &["--all-boards"]);
    let log = server.requests();
    let lists = list_requests(&sites, &base, &log);
    let read: usize = lists.values().sum();
    println!("round after 50 new threads and 30 replies: {} requests, {read} list pages (minimal {minimal}) in {}\n  {}", log.len(), secs(t), out.trim());
    assert!(read <= 2 * minimal, "{read} list pages read, minimal {minimal}: {lists:?}");

    // Exactly the 80 changed threads are queued, and the rounds say so.
    let store = Store::open(&work.layout().db_path()).unwrap();
    let queued: BTreeSet<(String, String)> =
        store.threads(None, ThreadState::Discovered).unwrap().into_iter().map(|r| (r.site.to_string(), r.thread.to_string())).collect();
    assert_eq!(queued, changed, "queued threads differ from the changed ones");
    let (mut new, mut updated) = (0, 0);
    for s in &sites {
        let r = store.last_round(&s.id).unwrap().unwrap();
        new += r.new_threads;
        updated += r.updated_threads;
    }
    assert_eq!((new, updated), (50, 30));
    drop(store);

    let t = Instant::now();
    for stage in ["download", "extract", "index"] {
        work.ok(stage, &[]);
    }
    println!("download, extract, index of the 80 changed threads: {}", secs(t));
    let thread_requests: BTreeSet<(String, String)> = server
        .requests()
        .iter()
        .filter_map(|r| match classify(&sites, &base, &r.path_and_query) {
            Requested::Thread(site, thread, _) => Some((site, thread)),
            _ => None,
        })
        .collect();
    assert_eq!(thread_requests, changed, "threads fetched again are exactly the changed ones");

    // Every changed thread's XML has its new post, and the index holds it
    // once, found by a phrase of the new post.
    let rows = work.rows();
    let mut checks: Vec<(Change, String)> = Vec::new();
    for c in &changes {
        let kind = ForumKind::from_site_id(&c.site).unwrap();
        let t = server.fixture().thread_truth(kind, &c.thread).unwrap();
        assert_eq!(rows[&(c.site.clone(), c.thread.clone())].0, ThreadState::Indexed, "{}/{}", c.site, c.thread);
        let doc = thread_doc(&work, &c.site, &c.thread);
        assert_eq!(doc.posts.len(), t.posts.len(), "{}/{} posts in the XML", c.site, c.thread);
        let newest = t.posts.last().unwrap();
        assert_eq!(newest.floor, c.floor);
        assert_eq!(common::fold(&doc.posts.last().unwrap().text()), common::fold(&newest.text), "{}/{}", c.site, c.thread);
        let older: Vec<&str> = t.posts[..t.posts.len() - 1].iter().map(|p| p.text.as_str()).chain([t.title.as_str()]).collect();
        // Traditional text is folded by the index; a phrase from the page is what a user types.
        // Poems come in lines of five or seven characters: shorter phrases for them.
        let phrase = [6, 5, 4].into_iter().find_map(|n| phrase_not_in(&newest.text, &older, n));
        if let Some(p) = phrase {
            checks.push((c.clone(), p));
        }
    }
    assert!(checks.len() >= 70, "only {} changed posts have a phrase of their own", checks.len());
    let t = Instant::now();
    let failures: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = checks
            .chunks(checks.len().div_ceil(2))
            .map(|chunk| {
                let work = &work;
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for (c, phrase) in chunk {
                        let q = format!("\"{phrase}\"");
                        let site = format!("site:{}", c.site);
                        let hits = search_threads(work, &["--limit", "100000", "--snippet-chars", "0", &q, &site]);
                        let n = hits.iter().filter(|(s, t)| *s == c.site && *t == c.thread).count();
                        if n != 1 {
                            let what = if c.kind == ChangeKind::NewThread { "new thread" } else { "new reply" };
                            bad.push(format!("{}/{} ({what}): {n} hits for {q}", c.site, c.thread));
                        }
                    }
                    bad
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    println!("{} searches for the new posts: {}", checks.len(), secs(t));
    assert!(failures.is_empty(), "{failures:#?}");

    // Every live thread, old and new, ends indexed.
    let per_site: BTreeMap<String, usize> = truth.forums.iter().map(|f| (f.site.clone(), f.threads.iter().filter(|t| t.servable()).count())).collect();
    for (site, n) in per_site {
        let store = Store::open(&work.layout().db_path()).unwrap();
        let indexed = store.threads(Some(&site), ThreadState::Indexed).unwrap().len();
        assert_eq!(indexed, n, "{site}: indexed rows");
    }
}

/// A thread re-queued for a new reply is read from its last stored page on
/// (that page again, it may have grown, then any new one); its earlier pages
/// come from its last download. Its thread XML is byte for byte what a
/// whole download of the forum at the same moment gives.
#[test]
fn a_new_reply_is_read_from_the_threads_last_page_and_the_xml_is_what_a_whole_download_gives() {
    let (server, work, sites, base) = forums(240, 2);
    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &[]);
    }
    let before = work.rows();
    let changes = server.add_replies(60);
    // Each page's line in article<T>.http (URL, time, status, headers).
    let lines = |w: &Work, c: &luntan_fixture::Change, date: &Option<String>| {
        let path = w.layout().http_path(&common::loc(&c.site, &c.board, date.as_deref().unwrap(), &c.thread));
        luntan_core::capture::read(&path).unwrap().unwrap_or_else(|| panic!("{}: missing", path.display()))
    };
    let lines_before: Vec<_> = changes.iter().map(|c| lines(&work, c, &before[&(c.site.clone(), c.thread.clone())].2)).collect();

    server.clear_requests();
    work.ok("discover", &["--all-boards"]);
    let out = work.ok("download", &[]);
    let mut asked: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in server.requests() {
        if let Requested::Thread(site, thread, _) = classify(&sites, &base, &r.path_and_query) {
            *asked.entry((site, thread)).or_default() += 1;
        }
    }
    work.ok("extract", &[]);

    // The same forum downloaded whole, into a data directory of its own.
    let whole = Work::new();
    server.write_site_files(&whole.sites()).unwrap();
    for stage in ["discover", "download", "extract"] {
        whole.ok(stage, &[]);
    }
    let (after, whole_rows) = (work.rows(), whole.rows());
    let (mut requests, mut full, mut long) = (0, 0, 0);
    for (c, lines_before) in changes.iter().zip(&lines_before) {
        let key = (c.site.clone(), c.thread.clone());
        let old = before[&key].3.expect("saved before");
        let (_, reason, date, pages) = &after[&key];
        let new = pages.unwrap_or_else(|| panic!("{}/{}: not saved again: {reason:?}", c.site, c.thread));
        // A kept page keeps the line of the response it came from; the
        // pages fetched again get lines of their own.
        let lines_after = lines(&work, c, date);
        assert_eq!(lines_after.len() as u32, new, "{}/{}: one line a page", c.site, c.thread);
        let kept = if old >= 2 { old as usize - 1 } else { 0 };
        assert_eq!(lines_after[..kept], lines_before[..kept], "{}/{}: the kept pages' lines", c.site, c.thread);
        assert!(lines_after[kept..].iter().all(|l| l.at > lines_before[0].at), "{}/{}: pages fetched again, lines from before", c.site, c.thread);
        let got = asked.get(&key).copied().unwrap_or(0);
        let want = if old >= 2 { 1 + (new - old) } else { new };
        assert_eq!(got as u32, want, "{}/{}: {old} pages before, {new} after: pages fetched", c.site, c.thread);
        requests += got;
        full += new as usize;
        long += usize::from(old >= 3);
        let path = |w: &Work, date: &Option<String>| w.layout().xml_path(&common::loc(&c.site, &c.board, date.as_deref().unwrap(), &c.thread));
        let (updated, fresh) = (std::fs::read(path(&work, date)).unwrap(), std::fs::read(path(&whole, &whole_rows[&key].2)).unwrap());
        assert!(updated == fresh, "{}/{}: the updated thread's XML differs from a whole download's", c.site, c.thread);
    }
    assert!(long >= 5, "only {long} of the replies went to threads of 3 pages or more");
    assert!(out.contains("pages kept from the threads' last download"), "{out}");
    println!("{} new replies: {requests} thread pages fetched, against {full} for a whole download of those threads\n{out}", changes.len());
}

/// Bytes a discover run received, from its summary line.
fn received_kb(out: &str) -> f64 {
    let at = out.find(" kB received").unwrap_or_else(|| panic!("no byte count: {out}"));
    out[..at].rsplit(' ').next().unwrap().parse().unwrap()
}

/// A round with nothing new asks for each page with what the forum said
/// identified it last time, and a forum that keeps validators answers 304
/// with no body: the Discuz! fixture sends ETags, the modern one
/// Last-Modified, the phpBB one neither (and is read as before). A forum
/// that changed is read as before too.
#[test]
fn a_round_with_nothing_new_costs_an_empty_304_per_page_where_the_forum_keeps_validators() {
    let (server, work, sites, base) = forums(300, 3);
    work.ok("discover", &[]);
    work.ok("download", &[]);

    let mut figures = Vec::new();
    for (site, supports) in [("dz", true), ("bbs", true), ("phpbb", false)] {
        server.clear_requests();
        let with = work.ok("discover", &["--site", site, "--all-boards"]);
        let log = server.requests();
        let pages: Vec<&luntan_fixture::RequestRecord> =
            log.iter().filter(|r| matches!(classify(&sites, &base, &r.path_and_query), Requested::List(..) | Requested::Home(_))).collect();
        let boards = server.truth().forums.iter().find(|f| f.site == site).unwrap().boards.len();
        assert_eq!(pages.len(), boards + 1, "{site}: the home page and one list page a board: {with}");
        let unchanged = pages.iter().filter(|r| r.status == 304).count();
        assert_eq!(unchanged, if supports { boards + 1 } else { 0 }, "{site}: {with}");
        assert!(with.contains(" 0 new threads, 0 updated"), "{with}");
        // The same round without validators: every page whole.
        let db = rusqlite::Connection::open(work.layout().db_path()).unwrap();
        assert_eq!(db.execute("DELETE FROM validators WHERE site = ?1", [site]).unwrap() > 0, supports, "{site}: validators kept");
        drop(db);
        let without = work.ok("discover", &["--site", site, "--all-boards"]);
        let (a, b) = (received_kb(&with), received_kb(&without));
        figures.push(format!("{site}: {a:.1} kB with validators, {b:.1} kB without"));
        if supports {
            assert!(a <= 0.10 * b, "{site}: {a} kB received against {b} kB without validators");
        } else {
            assert_eq!(a, b, "{site}");
        }
    }
    println!("a round with nothing new: {}", figures.join("; "));

    // After new replies a changed page is read whole, and only its threads are queued.
    let changes = server.add_replies(6);
    let out = work.ok("discover", &["--all-boards"]);
    let queued: BTreeSet<(String, String)> = Store::open(&work.layout().db_path())
        .unwrap()
        .threads(None, ThreadState::Discovered)
        .unwrap()
        .into_iter()
        .map(|r| (r.site.to_string(), r.thread.to_string()))
        .collect();
    let changed: BTreeSet<(String, String)> = changes.iter().map(|c| (c.site.clone(), c.thread.clone())).collect();
    assert_eq!(queued, changed, "{out}");
}
