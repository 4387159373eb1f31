//! Keyword monitoring (S0) against forums whose search needs an account and
//! whose posts keep arriving: three rounds of `luntan-discover --keywords`,
//! each followed by download and extract. Round by round the page budgets
//! must follow S0's rule, recomputed here from what the fixture's search
//! pages listed; no account may serve two requests at once; and after the
//! third round every post holding a monitored keyword is stored exactly once.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use common::{load_sites, secs, thread_doc, Work};
use luntan_core::Store;
use luntan_fixture::{Activity, FixtureConfig, FixtureServer, ForumKind, SearchRecord};

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
            let words: BTreeSet<String> = chars.windows(2).filter(|w| w.iter().all(|c| ('\u{4E00}'..='\u{9FFF}').contains(c))).map(|w| w.iter().collect()).collect();
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
    let accounts: Vec<(String, String)> = (1..=3).map(|i| (format!("monitor{i}"), format!("secret-{i}"))).collect();
    let activity = Activity { accounts: accounts.clone(), search_latency: std::time::Duration::from_millis(20), ..Activity::default() };
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
        sites.iter().flat_map(|s| keywords.iter().map(move |k| ((s.id.clone(), k.clone()), Model { pagenum: LIMIT, watermark: None }))).collect();
    let arrivals = server.start_arrivals(40.0);
    let mut snapshot = BTreeSet::new();
    for round in 1..=3 {
        if round == 3 {
            // What the third round must find: everything posted so far
            // (posts keep arriving while it runs).
            snapshot = matches(&server, &keywords);
        }
        let gaps = keyword_round(&work, &server, &file, &mut model, accounts.len(), round);
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
    let over: Vec<_> = model.iter().filter(|((site, kw), m)| burst.difference(&before).filter(|(s, _, _, k)| s == site && k == kw).count() > m.pagenum as usize * 20).map(|(k, _)| k.clone()).collect();
    assert!(!over.is_empty(), "the burst fits every budget; make it bigger");
    let gaps = keyword_round(&work, &server, &file, &mut model, accounts.len(), 4);
    assert_eq!(gaps, over, "round 4: the keywords with more new posts than their budget");
    let mut round = 5;
    while !keyword_round(&work, &server, &file, &mut model, accounts.len(), round).is_empty() {
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
fn keyword_round(work: &Work, server: &FixtureServer, file: &str, model: &mut BTreeMap<(String, String), Model>, workers: usize, round: u32) -> Vec<(String, String)> {
    server.clear_search_log();
    let t = Instant::now();
    let out = work.ok("discover", &["--keywords", file]);
    println!("round {round} ({}):\n{}", secs(t), out.trim_end());
    let log = server.search_log();
    // Round 1 has dozens of pages per forum: every worker gets some.
    check_accounts(&log, workers, round == 1);
    let store = Store::open(&work.layout().db_path()).unwrap();
    let mut gaps = Vec::new();
    for ((site, kw), m) in model.iter_mut() {
        let served: Vec<&SearchRecord> = log.iter().filter(|r| r.site == *site && r.keyword == *kw).collect();
        let pages: BTreeMap<usize, &SearchRecord> = served.iter().map(|r| (r.page, *r)).collect();
        assert_eq!(pages.len(), served.len(), "{site} {kw}: a result page read twice in one round");
        // S0: a page is seen when none of its posts is newer than the watermark.
        let seen = |r: &SearchRecord| r.results.iter().all(|x| m.watermark.as_ref().is_some_and(|w| x.time <= *w));
        let lastresult = pages.values().filter(|r| seen(r)).map(|r| r.page as u32).min().unwrap_or(LIMIT);
        let max_page = pages.keys().max().copied().unwrap_or(0) as u32;
        assert!(max_page <= m.pagenum, "{site} {kw}: read page {max_page} on a budget of {}", m.pagenum);
        // Every page up to the first seen one (or the budget) was read; the
        // other workers may have started a few more.
        for p in 1..=lastresult.min(m.pagenum) {
            assert!(pages.contains_key(&(p as usize)), "{site} {kw}: page {p} skipped ({:?})", pages.keys());
        }
        assert!(max_page < lastresult + workers as u32, "{site} {kw}: read to page {max_page}, seen at {lastresult}");
        let next = if lastresult >= LIMIT { (m.pagenum + 5).min(LIMIT) } else { lastresult };
        let newest = pages.values().flat_map(|r| r.results.iter().map(|x| x.time.clone())).max();
        let gap = m.watermark.is_some() && lastresult >= LIMIT;
        let watermark = if gap { m.watermark.clone() } else { m.watermark.clone().max(newest) };
        let stored = store.keyword_state(site, kw, LIMIT).unwrap();
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
        .map(|k| ((k["site"].as_str().unwrap().to_owned(), k["keyword"].as_str().unwrap().to_owned()), (k["pagenum"].as_u64().unwrap() as u32, k["rounds"].as_u64().unwrap() as u32)))
        .collect();
    let want: BTreeMap<(String, String), (u32, u32)> = model.iter().map(|(k, m)| (k.clone(), (m.pagenum, round))).collect();
    assert_eq!(shown, want, "luntan-status --json after round {round}");
    work.ok("download", &[]);
    work.ok("extract", &[]);
    gaps
}

/// Every search carried one of the accounts (all of them, with `all`),
/// and no account had two requests in flight at once.
fn check_accounts(log: &[SearchRecord], workers: usize, all: bool) {
    assert!(log.iter().all(|r| r.status == 200 && r.user.is_some()), "a search without a logged-in account: {:?}", log.iter().find(|r| r.user.is_none()));
    for site in FORUMS.map(|k| k.site_id()) {
        let users: BTreeSet<&str> = log.iter().filter(|r| r.site == site).filter_map(|r| r.user.as_deref()).collect();
        assert!(users.len() <= workers && (!all || users.len() == workers), "{site}: accounts used {users:?}");
        for user in users {
            let mut mine: Vec<&SearchRecord> = log.iter().filter(|r| r.site == site && r.user.as_deref() == Some(user)).collect();
            mine.sort_by_key(|r| r.started);
            for w in mine.windows(2) {
                assert!(w[1].started >= w[0].ended, "{site}: account {user} had two searches in flight");
            }
        }
    }
}
