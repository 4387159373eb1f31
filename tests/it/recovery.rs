//! Undoing a user's mistake without touching SQLite: a wrong post selector
//! fails every thread at extract (one grouped line, not one per thread);
//! after the site file is fixed, `luntan-extract --site ID --again` and
//! `luntan-index` bring every thread back exactly as before, from the saved
//! HTML alone.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::Work;
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

/// Every thread XML under the data directory, by path.
fn xml_files(work: &Work) -> BTreeMap<PathBuf, Vec<u8>> {
    work.files(&work.data().join("pages")).into_iter().filter(|(p, _)| p.extension().is_some_and(|e| e == "xml")).collect()
}

#[test]
fn a_broken_post_selector_is_undone_by_extracting_again_from_saved_html() {
    let cfg = FixtureConfig { threads: 60, boards: 2, forums: vec![ForumKind::Discuz, ForumKind::Bbs], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    for stage in ["discover", "download", "extract", "index"] {
        work.ok(stage, &[]);
    }
    let before = xml_files(&work);
    let rows = work.rows();
    let work_rows_before = rows.clone();
    // The fixture deletes a few threads (404 at download); the rest are indexed.
    let dz: Vec<String> = rows.iter().filter(|((site, _), r)| site == "dz" && r.0 == ThreadState::Indexed).map(|((_, t), _)| t.clone()).collect();
    assert!(dz.len() > 20, "the first crawl indexed {} dz threads", dz.len());
    let requests = server.requests().len();

    // The mistake: a post selector that matches nothing.
    let site_file = work.sites().join("dz.xml");
    let good = std::fs::read_to_string(&site_file).unwrap();
    common::edit_site_file(&site_file, |t| t.replace(r#"post="div[id^=post_]""#, r#"post="div.no-such-post""#));
    let out = work.stage("extract", &["--site", "dz", "--again"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    let failed: Vec<&str> = stderr.lines().filter(|l| l.contains(" failed: ")).collect();
    assert_eq!(failed.len(), 1, "one line for one cause, not one per thread: {failed:#?}");
    assert!(failed[0].contains(&format!("{} threads failed: no posts found", dz.len())), "{}", failed[0]);
    let rows = work.rows();
    assert!(dz.iter().all(|t| rows[&("dz".to_owned(), t.clone())].0 == ThreadState::Failed), "every dz thread failed at extract");
    let was = &work_rows_before;
    assert!(rows.iter().filter(|((s, _), _)| s == "bbs").all(|(k, r)| r.0 == was[k].0), "the other forum is untouched");
    let status = work.ok("status", &[]);
    let lines: Vec<&str> = status.lines().filter(|l| l.contains("dz failed at extract")).collect();
    assert_eq!(lines.len(), 1, "luntan-status groups the cause too: {status}");
    assert!(lines[0].contains(&format!("×{}: no posts found", dz.len())), "{}", lines[0]);

    // Fixed: extract again, index, and everything is as it was.
    std::fs::write(&site_file, good).unwrap();
    let out = work.ok("extract", &["--site", "dz", "--again"]);
    assert!(out.contains(&format!("{} extracted", dz.len())), "{out}");
    work.ok("index", &[]);
    assert_eq!(work.rows(), work_rows_before, "every row as after the first crawl");
    assert_eq!(xml_files(&work), before, "the thread XML is byte-identical to the first crawl's");
    let hits = common::search_threads(&work, &["--site", "dz", "--limit", "1000", "的"]);
    let mut ids: Vec<String> = hits.into_iter().map(|(_, t)| t).collect();
    ids.sort();
    ids.dedup();
    assert!(ids.len() > dz.len() / 2, "dz searchable again: {} of {} threads", ids.len(), dz.len());
    assert_eq!(server.requests().len(), requests, "no HTTP request after the first crawl");
}
