//! The whole pipeline over real loopback HTTP: the three fixture forums
//! (GBK Discuz!, Big5 phpBB, charset-less UTF-8) crawled by the real stage
//! binaries into a real SQLite file, real XML files and real tantivy indexes.

use crate::common;

use std::collections::HashMap;

use common::{fold, Work};
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ThreadTruth};

const THREADS_PER_FORUM: usize = 180;

fn search_hits(work: &Work, query: &str, limit: usize) -> (Vec<serde_json::Value>, serde_json::Value) {
    let out = work.ok("search", &["--json", "--limit", &limit.to_string(), query]);
    let mut hits = Vec::new();
    let mut summary = serde_json::Value::Null;
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("search printed non-JSON {line:?}: {e}"));
        if v.get("thread").is_some() {
            hits.push(v);
        } else {
            summary = v;
        }
    }
    (hits, summary)
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}')
}

/// A run of 4–8 CJK characters from the thread that no other thread contains.
fn distinctive_phrase(t: &ThreadTruth, all: &[(String, String)], rng: &mut fastrand_lite::Rng) -> Option<String> {
    let text: Vec<char> = t.posts.iter().flat_map(|p| p.text.chars().chain(std::iter::once('\n'))).collect();
    for _ in 0..60 {
        let len = 4 + rng.below(5);
        if text.len() <= len {
            return None;
        }
        let at = rng.below(text.len() - len);
        let window: String = text[at..at + len].iter().collect();
        if !window.chars().all(is_cjk) {
            continue;
        }
        let holders = all.iter().filter(|(_, body)| body.contains(&window)).count();
        if holders == 1 {
            return Some(window);
        }
    }
    None
}

/// A few lines of deterministic randomness, so the test needs no extra crate.
mod fastrand_lite {
    pub struct Rng(u64);
    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed)
        }
        pub fn below(&mut self, n: usize) -> usize {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }
}

#[test]
fn three_forums_crawl_extract_index_and_search_end_to_end() {
    let cfg = FixtureConfig { threads: THREADS_PER_FORUM, boards: 3, ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let truth = server.truth();

    for stage in ["discover", "download", "extract", "index"] {
        work.ok(stage, &[]);
    }

    // Every live thread indexed, every deleted one failed with its reason.
    let rows = work.rows();
    let threads: Vec<&ThreadTruth> = truth.forums.iter().flat_map(|f| f.threads.iter()).collect();
    assert!(threads.len() >= 500, "fixture too small: {}", threads.len());
    assert!(threads.iter().any(|t| t.deleted), "fixture has no deleted threads");
    assert!(threads.iter().any(|t| t.pages > 1), "fixture has no multi-page threads");
    common::assert_rows_match_truth(&rows, &threads, ThreadState::Indexed, &["404", "http://"]);

    // Every XML holds exactly the fixture's posts, in order, across pages.
    let layout = work.layout();
    for t in threads.iter().filter(|t| !t.deleted) {
        let (path, doc) = common::assert_saved_matches_truth(&rows, &layout, t);
        assert_eq!(fold(&doc.title), fold(&t.title), "{} title", path.display());
        assert_eq!(doc.posted.as_deref(), Some(t.posts[0].time.as_str()));
    }

    // A distinctive 4–8 character phrase finds its thread in the top 10.
    let live: Vec<&&ThreadTruth> = threads.iter().filter(|t| !t.deleted).collect();
    let bodies: Vec<(String, String)> =
        live.iter().map(|t| (format!("{}/{}", t.site, t.thread), t.posts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n"))).collect();
    let mut rng = fastrand_lite::Rng::new(7);
    let mut tried = 0;
    let mut per_site: HashMap<String, usize> = HashMap::new();
    while tried < 100 {
        let t = live[rng.below(live.len())];
        let Some(phrase) = distinctive_phrase(t, &bodies, &mut rng) else { continue };
        tried += 1;
        let (hits, _) = search_hits(&work, &phrase, 10);
        let found = hits.iter().any(|h| h["site"] == t.site.as_str() && h["thread"] == t.thread.as_str());
        assert!(found, "query {phrase:?} did not find {}/{} in the top 10: {hits:?}", t.site, t.thread);
        *per_site.entry(t.site.clone()).or_default() += 1;
    }
    assert_eq!(per_site.len(), 3, "phrases came from every forum: {per_site:?}");

    // Running every stage again changes nothing.
    common::assert_second_run_changes_nothing(&work, &["discover", "download", "extract", "index"]);
}
