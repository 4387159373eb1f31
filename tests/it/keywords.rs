//! Keyword monitoring (S0) against forums whose search needs an account and
//! whose posts keep arriving: three rounds of `luntan-discover --keywords`,
//! each followed by download and extract. Round by round the page budgets
//! must follow S0's rule, recomputed here from what the fixture's search
//! pages listed; no account may serve two requests at once; and after the
//! third round every post holding a monitored keyword is stored exactly once.
//!
//! Each run twice: against an ideal search (a URL per result page), and
//! against one that behaves like Discuz! X3.5's (a redirect to a search id,
//! pages through the id's next-page link, `&highlight=` on result links, a
//! least interval between one user's searches answered with a "try again"
//! page). Then the ways a real search fails: robots.txt forbidding it, busy
//! pages, a round cut short by errors, and a 429 with Retry-After.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use common::{load_sites, secs, thread_doc, Work};
use luntan_core::Store;
use luntan_fixture::{Activity, FixtureConfig, FixtureServer, ForumKind, SearchMode, SearchRecord, SearchRequest};

const LIMIT: u32 = 30;
const FORUMS: [ForumKind; 2] = [ForumKind::Discuz, ForumKind::Bbs];

/// Keywords the posts use often enough to matter and rarely enough that
/// every match fits in 30 result pages: two-character words found in 40 to
/// 300 posts of each forum, the most frequent first.
fn pick_keywords(server: &FixtureServer, n: usize) -> Vec<String> {
    let truth = server.truth();
    let mut per_forum: Vec<HashMap<String, usize>> = Vec::new();
    for f in &truth.forums {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for p in f.threads.iter().filter(|t| !t.deleted).flat_map(|t| &t.posts) {
            let chars: Vec<char> = p.text.chars().collect();
            let words: BTreeSet<String> =
                chars.windows(2).filter(|w| w.iter().all(|c| ('\u{4E00}'..='\u{9FFF}').contains(c))).map(|w| w.iter().collect()).collect();
            for w in words {
                *counts.entry(w).or_default() += 1;
            }
        }
        per_forum.push(counts);
    }
    let mut candidates: Vec<(usize, String)> = per_forum[0]
        .keys()
        .map(|w| (per_forum.iter().map(|c| c.get(w).copied().unwrap_or(0)).min().unwrap_or(0), w.clone()))
        .filter(|(n, _)| (40..=300).contains(n))
        .collect();
    candidates.sort_by(|a, b| b.cmp(a));
    candidates.into_iter().take(n).map(|(_, w)| w).collect()
}

/// The test's own account of one keyword on one forum, kept from the search
/// log alone.
#[derive(Debug, Clone)]
struct Model {
    pagenum: u32,
    watermark: Option<String>,
}

#[test]
fn three_keyword_rounds_store_every_matching_post_once_with_s0_budgets() {
    keyword_rounds_against(SearchMode::Ideal);
}

#[test]
fn keyword_rounds_through_search_ids_next_links_and_a_search_interval() {
    keyword_rounds_against(SearchMode::SearchId);
}

/// Between two searches of one account in the search-id mode; short, so
/// that eight rounds stay quick, long enough that a crawler ignoring it
/// would be caught.
const INTERVAL: std::time::Duration = std::time::Duration::from_millis(400);

fn keyword_rounds_against(mode: SearchMode) {
    let accounts: Vec<(String, String)> = (1..=3).map(|i| (format!("monitor{i}"), format!("secret-{i}"))).collect();
    let activity = Activity {
        accounts: accounts.clone(),
        search_latency: std::time::Duration::from_millis(20),
        search_mode: mode,
        search_interval: INTERVAL,
        robots_allow_search: true,
        ..Activity::default()
    };
    let cfg = FixtureConfig { threads: 250, boards: 3, forums: FORUMS.to_vec(), activity, ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let sites = load_sites(&work.sites());
    for s in &sites {
        assert_eq!(s.accounts.len(), 3, "{}: accounts in the site file", s.id);
        assert!(s.search.is_some());
    }
    let keywords = pick_keywords(&server, 3);
    assert_eq!(keywords.len(), 3, "no keywords of the right frequency");
    let file = work.dir.path().join("keywords.txt");
    std::fs::write(&file, format!("# monitored\n{}\n", keywords.join("\n"))).unwrap();
    let file = file.to_str().unwrap().to_owned();
    println!("keywords: {keywords:?}");
    let initial = matches(&server, &keywords);

    let mut model: BTreeMap<(String, String), Model> =
        sites.iter().flat_map(|s| keywords.iter().map(move |k| ((s.id.to_string(), k.clone()), Model { pagenum: LIMIT, watermark: None }))).collect();
    let arrivals = server.start_arrivals(40.0);
    let mut snapshot = BTreeSet::new();
    for round in 1..=3 {
        if round == 3 {
            // What the third round must find: everything posted so far
            // (posts keep arriving while it runs).
            snapshot = matches(&server, &keywords);
        }
        let gaps = keyword_round(&work, &server, &file, &mut model, accounts.len(), round, mode);
        assert!(gaps.is_empty(), "round {round} left gaps: {gaps:?}");
        if round > 1 {
            assert!(model.values().any(|m| m.pagenum < LIMIT), "round {round}: every budget still at the limit");
        }
    }
    let arrived = arrivals.stop();
    let new_posts = snapshot.difference(&initial).count();
    let (checked, threads) = assert_stored_once(&work, &server, &snapshot);
    println!("{arrived} posts arrived during three rounds; {checked} matching posts in {threads} threads stored once each ({new_posts} of them arrived during the crawl)");
    assert!(new_posts > 0, "no matching post arrived during the crawl");

    // A burst bigger than the budgets: a round that reaches no seen page
    // grows the budget by five and keeps the watermark, and the next round
    // reads the gap.
    let before = matches(&server, &keywords);
    server.fixture().add_posts(1500);
    let burst = matches(&server, &keywords);
    let over: Vec<_> = model
        .iter()
        .filter(|((site, kw), m)| burst.difference(&before).filter(|(s, _, _, k)| s == site && k == kw).count() > m.pagenum as usize * 20)
        .map(|(k, _)| k.clone())
        .collect();
    assert!(!over.is_empty(), "the burst fits every budget; make it bigger");
    let gaps = keyword_round(&work, &server, &file, &mut model, accounts.len(), 4, mode);
    assert_eq!(gaps, over, "round 4: the keywords with more new posts than their budget");
    let mut round = 5;
    while !keyword_round(&work, &server, &file, &mut model, accounts.len(), round, mode).is_empty() {
        round += 1;
        assert!(round <= 8, "the gaps never close");
    }
    let (checked, threads) = assert_stored_once(&work, &server, &burst);
    println!("after the burst of 1500 posts and {} more rounds: {checked} matching posts in {threads} threads stored once each", round - 3);
    let store = Store::open(&work.layout().db_path()).unwrap();
    for r in store.keyword_rounds(None).unwrap() {
        assert_eq!(r.errors, 0, "{r:?}");
    }
}

/// Every post holding one of the keywords, now: (site, thread, floor, keyword).
fn matches(server: &FixtureServer, keywords: &[String]) -> BTreeSet<(String, String, u32, String)> {
    let mut out = BTreeSet::new();
    for kind in FORUMS {
        for k in keywords {
            out.extend(server.fixture().search_truth(kind, k).into_iter().map(|r| (r.site, r.thread, r.floor, k.clone())));
        }
    }
    out
}

/// Checks that every post in `posts` is in its thread's XML exactly once,
/// with the text the forum shows; returns (posts, threads) checked.
fn assert_stored_once(work: &Work, server: &FixtureServer, posts: &BTreeSet<(String, String, u32, String)>) -> (usize, usize) {
    let mut by_thread: BTreeMap<(String, String), BTreeSet<u32>> = BTreeMap::new();
    for (site, thread, floor, _) in posts {
        by_thread.entry((site.clone(), thread.clone())).or_default().insert(*floor);
    }
    let mut checked = 0;
    for ((site, thread), floors) in &by_thread {
        let doc = thread_doc(work, site, thread);
        let truth = server.fixture().thread_truth(ForumKind::from_site_id(site).unwrap(), thread).unwrap();
        // Found through a search or a list, a thread is stored as its own URL.
        assert_eq!(doc.url, server.url(&truth.url_path), "{site}/{thread}: the URL a search result carried");
        for floor in floors {
            let held: Vec<_> = doc.posts.iter().filter(|p| p.floor == *floor).collect();
            assert_eq!(held.len(), 1, "{site}/{thread} floor {floor}: {} copies in the XML", held.len());
            let want = &truth.posts[*floor as usize - 1];
            assert_eq!(common::fold(&held[0].text()), common::fold(&want.text), "{site}/{thread} floor {floor}");
            checked += 1;
        }
    }
    (checked, by_thread.len())
}

/// Runs one keyword round (then download and extract) and checks it
/// against the test's own model, which it then moves on; returns the
/// (site, keyword)s the round left a gap in (no seen page reached).
fn keyword_round(
    work: &Work,
    server: &FixtureServer,
    file: &str,
    model: &mut BTreeMap<(String, String), Model>,
    workers: usize,
    round: u32,
    mode: SearchMode,
) -> Vec<(String, String)> {
    server.clear_search_log();
    let t = Instant::now();
    let out = work.ok("discover", &["--keywords", file]);
    println!("round {round} ({}):\n{}", secs(t), out.trim_end());
    let log = server.search_log();
    // Round 1 has dozens of pages per forum: every worker gets some.
    check_accounts(&log, workers, round == 1, mode);
    let store = Store::open(&work.layout().db_path()).unwrap();
    let mut gaps = Vec::new();
    for ((site, kw), m) in model.iter_mut() {
        let served: Vec<&SearchRecord> = log.iter().filter(|r| r.site == *site && r.keyword == *kw && r.request == SearchRequest::Page).collect();
        let pages: BTreeMap<usize, &SearchRecord> = served.iter().map(|r| (r.page, *r)).collect();
        assert_eq!(pages.len(), served.len(), "{site} {kw}: a result page read twice in one round");
        // S0: a page is seen when none of its posts is newer than the watermark.
        let seen = |r: &SearchRecord| r.results.iter().all(|x| m.watermark.as_ref().is_some_and(|w| x.time <= *w));
        let first_seen = pages.values().filter(|r| seen(r)).map(|r| r.page as u32).min();
        let max_page = pages.keys().max().copied().unwrap_or(0) as u32;
        // With next links, the page after the last one with results counts as seen.
        let end = (mode == SearchMode::SearchId && pages.get(&(max_page as usize)).is_some_and(|r| !r.has_next && !seen(r))).then_some(max_page + 1);
        let lastresult = first_seen.into_iter().chain(end).min().unwrap_or(LIMIT).min(LIMIT);
        let reached = first_seen.is_some() || end.is_some();
        assert!(max_page <= m.pagenum, "{site} {kw}: read page {max_page} on a budget of {}", m.pagenum);
        // One account reads the keyword's pages one after another: exactly
        // the pages up to the first seen one, the budget or the last.
        let want: Vec<usize> = (1..=lastresult.min(m.pagenum).min(max_page.max(1)) as usize).collect();
        assert_eq!(pages.keys().copied().collect::<Vec<_>>(), want, "{site} {kw}: pages read");
        let users: BTreeSet<&Option<String>> = served.iter().map(|r| &r.user).collect();
        assert_eq!(users.len(), 1, "{site} {kw}: one keyword's pages through more than one account");
        // Regression: read side by side, a post arriving between two page
        // reads could slip from a later page to an earlier one already read.
        for w in pages.values().collect::<Vec<_>>().windows(2) {
            assert!(w[1].started >= w[0].ended, "{site} {kw}: page {} asked before page {} was answered", w[1].page, w[0].page);
        }
        let next = if lastresult >= LIMIT { (m.pagenum + 5).min(LIMIT) } else { lastresult };
        let newest = pages.values().flat_map(|r| r.results.iter().map(|x| x.time.clone())).max();
        let gap = m.watermark.is_some() && !reached;
        let watermark = if gap { m.watermark.clone() } else { m.watermark.clone().max(newest) };
        let stored = store.keyword_state(&site.parse().unwrap(), kw, LIMIT).unwrap();
        println!("  {site} {kw}: budget {} → read {:?} → lastresult {lastresult} → next {next}", m.pagenum, pages.keys().collect::<Vec<_>>());
        assert_eq!(stored.pagenum, next, "{site} {kw}: S0's rule after round {round}");
        assert_eq!(stored.lastresult, lastresult, "{site} {kw}");
        assert_eq!(stored.watermark, watermark, "{site} {kw}: watermark");
        assert_eq!(stored.rounds, round, "{site} {kw}");
        if gap {
            gaps.push((site.clone(), kw.clone()));
        }
        *m = Model { pagenum: next, watermark };
    }
    drop(store);
    // What luntan-status shows a user is the stored record.
    let status = work.ok("status", &["--json"]);
    let shown: BTreeMap<(String, String), (u32, u32)> = status
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .flat_map(|v| v["keywords"].as_array().unwrap().clone())
        .map(|k| {
            (
                (k["site"].as_str().unwrap().to_owned(), k["keyword"].as_str().unwrap().to_owned()),
                (k["pagenum"].as_u64().unwrap() as u32, k["rounds"].as_u64().unwrap() as u32),
            )
        })
        .collect();
    let want: BTreeMap<(String, String), (u32, u32)> = model.iter().map(|(k, m)| (k.clone(), (m.pagenum, round))).collect();
    assert_eq!(shown, want, "luntan-status --json after round {round}");
    work.ok("download", &[]);
    work.ok("extract", &[]);
    gaps
}

/// Every search carried one of the accounts (all of them, with `all`), no
/// account had two requests in flight at once, and (with search ids) no
/// account started a search within the forum's interval of its last: the
/// forum never had to answer "try again".
fn check_accounts(log: &[SearchRecord], workers: usize, all: bool, mode: SearchMode) {
    assert!(
        log.iter().all(|r| matches!(r.status, 200 | 302) && r.user.is_some()),
        "a search without a logged-in account: {:?}",
        log.iter().find(|r| r.user.is_none())
    );
    let busy: Vec<_> = log.iter().filter(|r| r.request == SearchRequest::Busy).collect();
    assert!(busy.is_empty(), "searches started within the interval: {busy:#?}");
    for site in FORUMS.map(|k| k.site_id()) {
        let users: BTreeSet<&str> = log.iter().filter(|r| r.site == site).filter_map(|r| r.user.as_deref()).collect();
        assert!(users.len() <= workers && (!all || users.len() == workers), "{site}: accounts used {users:?}");
        for user in users {
            let mut mine: Vec<&SearchRecord> = log.iter().filter(|r| r.site == site && r.user.as_deref() == Some(user)).collect();
            mine.sort_by_key(|r| r.started);
            for w in mine.windows(2) {
                assert!(w[1].started >= w[0].ended, "{site}: account {user} had two searches in flight");
            }
            if mode == SearchMode::SearchId {
                let starts: Vec<&&SearchRecord> = mine.iter().filter(|r| r.starts_search).collect();
                for w in starts.windows(2) {
                    let gap = w[1].started.duration_since(w[0].started);
                    assert!(gap >= INTERVAL, "{site}: account {user} started two searches {gap:?} apart");
                }
            }
        }
    }
}

/// A fixture with one forum searched through search ids, its site files
/// written, and a keywords file of `n` keywords; the server's own
/// settings from `activity`.
fn one_forum(activity: Activity, n: usize) -> (luntan_fixture::BlockingFixture, Work, String, Vec<String>) {
    let cfg = FixtureConfig { threads: 150, boards: 2, forums: vec![ForumKind::Discuz], activity, ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let keywords = pick_keywords(&server, n);
    assert_eq!(keywords.len(), n, "no keywords of the right frequency");
    let file = work.dir.path().join("keywords.txt");
    std::fs::write(&file, keywords.join("\n")).unwrap();
    (server, work, file.to_str().unwrap().to_owned(), keywords)
}

#[test]
fn a_search_robots_txt_forbids_is_one_line_per_forum_and_no_search() {
    let activity = Activity { search_mode: SearchMode::SearchId, robots_allow_search: false, ..Activity::default() };
    let cfg = FixtureConfig { threads: 60, boards: 2, forums: FORUMS.to_vec(), activity, ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let file = work.dir.path().join("keywords.txt");
    std::fs::write(&file, "考研\n调剂\n复试\n").unwrap();
    let out = work.stage("discover", &["--keywords", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    for site in FORUMS.map(|k| k.site_id()) {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(&format!("{site}: "))).collect();
        assert_eq!(lines.len(), 1, "{site}: one line, not one per page or keyword: {lines:#?}");
        assert!(lines[0].contains("robots.txt") && lines[0].contains("keyword monitoring off"), "{}", lines[0]);
    }
    assert!(server.search_log().is_empty(), "searched despite robots.txt: {:?}", server.search_log());
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path_and_query).collect();
    assert!(!paths.is_empty() && paths.iter().all(|p| p == "/robots.txt"), "only robots.txt was asked for: {paths:?}");
    let store = Store::open(&work.layout().db_path()).unwrap();
    assert!(store.keyword_states(None).unwrap().is_empty(), "a keyword record was written for a search never made");
}

#[test]
fn busy_pages_are_waited_out_and_never_taken_for_results() {
    // The site file ignores the forum's interval: searches come too soon,
    // the forum answers "try again", luntan waits and asks again.
    let activity = Activity {
        search_mode: SearchMode::SearchId,
        search_interval: std::time::Duration::from_millis(600),
        robots_allow_search: true,
        ..Activity::default()
    };
    let (server, work, file, keywords) = one_forum(activity, 3);
    let site = work.sites().join("dz.xml");
    common::edit_site_file(&site, |t| t.replace(r#"interval-ms="600""#, r#"interval-ms="0""#).replace("<busy>", r#"<busy wait-ms="250">"#));
    let out = work.ok("discover", &["--keywords", &file]);
    println!("{out}");
    let log = server.search_log();
    let busy = log.iter().filter(|r| r.request == SearchRequest::Busy).count();
    assert!(busy > 0, "the forum never had to say busy; the test proves nothing");
    let store = Store::open(&work.layout().db_path()).unwrap();
    for kw in &keywords {
        let st = store.keyword_state(&"dz".parse().unwrap(), kw, LIMIT).unwrap();
        assert_eq!((st.rounds, st.last_error.as_deref()), (1, None), "{kw}");
        // Every page the forum served was a results page: read, counted, stored.
        let pages: Vec<&SearchRecord> = log.iter().filter(|r| r.keyword == *kw && r.request == SearchRequest::Page).collect();
        assert!(!pages.is_empty(), "{kw}: no result page read");
        for r in pages.iter().flat_map(|p| &p.results) {
            assert!(store.thread("dz", &r.thread).unwrap().is_some(), "{kw}: thread {} listed but not stored", r.thread);
        }
        let round = store.keyword_rounds(Some("dz")).unwrap().into_iter().find(|r| r.keyword == *kw).unwrap();
        assert_eq!(round.pages_read as usize, pages.len(), "{kw}: busy pages counted as result pages");
        assert_eq!(round.results as usize, pages.iter().map(|p| p.results.len()).sum::<usize>(), "{kw}");
    }
    assert!(out.contains(&format!("{busy} busy pages waited out")), "{out}");
}

#[test]
fn a_round_cut_short_by_errors_leaves_the_keywords_record_as_it_was() {
    let interval = std::time::Duration::from_millis(1500);
    let activity = Activity { search_mode: SearchMode::SearchId, search_interval: interval, robots_allow_search: true, ..Activity::default() };
    let (server, work, file, keywords) = one_forum(activity, 2);
    work.ok("discover", &["--keywords", &file]);
    let store = Store::open(&work.layout().db_path()).unwrap();
    let before: Vec<_> = keywords.iter().map(|k| store.keyword_state(&"dz".parse().unwrap(), k, LIMIT).unwrap()).collect();
    drop(store);
    assert!(before.iter().all(|st| st.rounds == 1 && st.last_error.is_none() && st.watermark.is_some()), "{before:#?}");
    // Now the site file ignores the interval and gives up quickly: the
    // first keyword's search goes through, the second only meets "busy".
    std::thread::sleep(interval);
    common::edit_site_file(&work.sites().join("dz.xml"), |t| {
        t.replace(r#"interval-ms="1500""#, r#"interval-ms="0""#).replace("<busy>", r#"<busy wait-ms="20">"#)
    });
    server.fixture().add_posts(300);
    server.clear_search_log();
    let out = work.stage("discover", &["--keywords", &file]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(server.search_log().iter().any(|r| r.request == SearchRequest::Busy));
    let store = Store::open(&work.layout().db_path()).unwrap();
    let after: Vec<_> = keywords.iter().map(|k| store.keyword_state(&"dz".parse().unwrap(), k, LIMIT).unwrap()).collect();
    assert_eq!(after[0].last_error, None, "the first search went through");
    assert_eq!(after[0].rounds, 2);
    let (b, a) = (&before[1], &after[1]);
    assert!(a.last_error.as_deref().is_some_and(|e| e.contains("busy")), "{a:?}");
    assert_eq!((a.lastresult, a.pagenum, &a.watermark), (b.lastresult, b.pagenum, &b.watermark), "the record moved after an error");
    let line = stdout.lines().find(|l| l.contains(&keywords[1])).expect("a line for the second keyword");
    assert!(line.contains("record kept") && line.contains("busy"), "{line}");
    drop(store);
    let status = work.ok("status", &[]);
    assert!(status.lines().any(|l| l.contains(&keywords[1]) && l.contains("after an error") && l.contains("busy")), "{status}");
    let json = work.ok("status", &["--json"]);
    assert!(json.contains("\"last_error\""), "{json}");
}

#[test]
fn a_429_with_retry_after_during_keyword_searches_holds_every_search_on_the_host() {
    let accounts: Vec<(String, String)> = (1..=3).map(|i| (format!("monitor{i}"), format!("secret-{i}"))).collect();
    let activity = Activity { accounts, search_throttle_every: 7, search_retry_after: std::time::Duration::from_secs(1), ..Activity::default() };
    let (server, work, file, keywords) = one_forum(activity, 3);
    common::set_politeness(&work.sites().join("dz.xml"), r#"delay-ms="100" concurrency="3" retries="3""#);
    work.ok("discover", &["--keywords", &file]);
    let log = server.requests();
    let throttled: Vec<_> = log.iter().filter(|r| r.status == 429).collect();
    assert!(!throttled.is_empty(), "no search was throttled; the test proves nothing");
    for t in &throttled {
        // Requests were spaced 100 ms apart, so none was on its way when the
        // 429 came: nothing may arrive inside its second.
        let early = luntan_fixture::politeness::arrivals_during_retry_after(&log, t, std::time::Duration::from_secs(1), std::time::Duration::ZERO);
        assert!(early.is_empty(), "requests inside the Retry-After of #{} ({}): {early:#?}", t.seq, t.path_and_query);
    }
    let store = Store::open(&work.layout().db_path()).unwrap();
    for kw in &keywords {
        let st = store.keyword_state(&"dz".parse().unwrap(), kw, LIMIT).unwrap();
        assert_eq!((st.rounds, st.last_error.as_deref()), (1, None), "{kw}: the 429s were retried, not errors");
    }
    println!("{} of {} requests throttled; every keyword's round went through", throttled.len(), log.len());
}
