//! Focused crawling (S2) on forums whose boards are labelled by topic: the
//! site files' `<focus>` queues only thread links scoring above the
//! threshold. Recall of on-topic threads must stay at 0.95 or more while at
//! most half the threads a full crawl would fetch are fetched; the test
//! prints both figures. Links left out are kept with their scores, and a
//! lower threshold queues them without reading a board page again.

use crate::common;

use std::collections::BTreeSet;

use common::{classify, edit_site_file, list_requests, load_sites, Requested, Work};
use luntan_core::Store;
use luntan_fixture::{FixtureConfig, FixtureServer, Topics};

fn fetched_threads(server: &FixtureServer, sites: &[luntan_core::Site]) -> BTreeSet<(String, String)> {
    let base = server.base_url();
    server
        .requests()
        .iter()
        .filter_map(|r| match classify(sites, &base, &r.path_and_query) {
            Requested::Thread(site, thread, true) => Some((site, thread)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_focused_crawl_finds_the_topic_fetching_under_half_the_threads() {
    let cfg = FixtureConfig { threads: 500, boards: 4, topics: Some(Topics::default()), ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let sites = load_sites(&work.sites());
    assert!(sites.iter().all(|s| s.focus.is_some()), "the fixture's site files carry a <focus>");
    let truth = server.truth();

    work.ok("discover", &[]);
    work.ok("download", &[]);

    let fetched = fetched_threads(&server, &sites);
    let all: Vec<(String, String, bool)> = truth.forums.iter().flat_map(|f| f.threads.iter().map(|t| (t.site.clone(), t.thread.clone(), t.on_topic))).collect();
    let on_topic: BTreeSet<(String, String)> =
        truth.forums.iter().flat_map(|f| f.threads.iter().filter(|t| t.on_topic && t.servable()).map(|t| (t.site.clone(), t.thread.clone()))).collect();
    let found = on_topic.iter().filter(|k| fetched.contains(*k)).count();
    let recall = found as f64 / on_topic.len() as f64;
    // A full crawl fetches every listed thread (deleted ones answer 404, but are asked for).
    let share = fetched.len() as f64 / all.len() as f64;
    let off_fetched = fetched.iter().filter(|k| !on_topic.contains(*k)).count();
    println!(
        "focused crawl: recall {recall:.3} ({found} of {} on-topic threads), fetched {:.1} % of the threads a full crawl fetches ({} of {}; {off_fetched} off topic)",
        on_topic.len(),
        share * 100.0,
        fetched.len(),
        all.len()
    );
    for f in &truth.forums {
        let on: Vec<_> = f.threads.iter().filter(|t| t.on_topic && t.servable()).collect();
        let got = on.iter().filter(|t| fetched.contains(&(t.site.clone(), t.thread.clone()))).count();
        let n = fetched.iter().filter(|(s, _)| *s == f.site).count();
        println!("  {}: recall {got}/{}, fetched {n} of {}", f.site, on.len(), f.threads.len());
    }
    let missed: Vec<&str> = truth
        .forums
        .iter()
        .flat_map(|f| &f.threads)
        .filter(|t| on_topic.contains(&(t.site.clone(), t.thread.clone())) && !fetched.contains(&(t.site.clone(), t.thread.clone())))
        .map(|t| t.title.as_str())
        .collect();
    println!("  missed on-topic titles: {missed:?}");
    assert!(on_topic.len() >= 200, "too few on-topic threads to measure: {}", on_topic.len());
    assert!(recall >= 0.95, "recall {recall:.3}");
    assert!(share <= 0.5, "fetched share {share:.3}");

    // What was left out is on record with its score, best first.
    let store = Store::open(&work.layout().db_path()).unwrap();
    let counts = store.counts().unwrap();
    let skipped: i64 = counts.iter().map(|c| c.skipped_links).sum();
    assert_eq!(skipped as usize, all.len() - fetched.len(), "every thread link not queued is recorded");
    for c in &counts {
        assert!(c.top_skipped.windows(2).all(|w| w[0].1 >= w[1].1), "{}: {:?}", c.site, c.top_skipped);
    }
    let status = work.ok("status", &[]);
    assert!(status.contains("left out as off-topic"), "{status}");
    drop(store);

    // A lower threshold: the next round queues the skipped links that now
    // pass, and reads no board page to do it (none is due).
    for s in &sites {
        edit_site_file(&s.path, |t| t.replace("threshold=\"0.08\"", "threshold=\"0.04\""));
    }
    server.clear_requests();
    let out = work.ok("discover", &[]);
    assert!(list_requests(&sites, &server.base_url(), &server.requests()).is_empty(), "board pages read again: {out}");
    work.ok("download", &[]);
    let more = fetched_threads(&server, &sites);
    assert!(!more.is_empty() && more.iter().all(|k| !fetched.contains(k)), "the lower threshold queued links left out before");
    let found_now = on_topic.iter().filter(|k| fetched.contains(*k) || more.contains(*k)).count();
    println!("threshold 0.08 → 0.04: {} more threads fetched, recall {:.3}", more.len(), found_now as f64 / on_topic.len() as f64);
    assert!(found_now >= found);
}
