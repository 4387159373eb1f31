//! The extractor against the fixture forums' real markup and encodings
//! (Discuz!/GBK mislabelled gb2312, phpBB/Big5, modern/undeclared UTF-8),
//! rendered without a server, checked post by post against the fixture's truth.

mod common;

use std::path::Path;

use luntan_core::Site;
use luntan_extract::extract_thread;
use luntan_fixture::{site_file, Fixture, FixtureConfig, ForumKind};
use luntan_text::encoding::Source;

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_fixture_thread_extracts_to_its_truth() {
    let cfg = FixtureConfig { threads: 80, boards: 2, ..FixtureConfig::default() };
    let fixture = Fixture::new(cfg.clone());
    let truth = fixture.truth();
    let mut checked = 0;
    let mut multi_page = 0;
    for forum in &truth.forums {
        let kind = ForumKind::from_site_id(&forum.site).unwrap();
        let site = Site::parse(&site_file(&cfg, kind, "http://127.0.0.1:1/").unwrap(), Path::new("fixture.xml")).unwrap();
        for t in forum.threads.iter().filter(|t| !t.deleted) {
            let (pages, row) = common::saved_thread(&fixture, kind, t);
            let got = extract_thread(&site, &row, &pages, None).unwrap_or_else(|e| panic!("{e}"));
            let at = format!("{}/{}", t.site, t.thread);
            for p in &got.pages {
                assert_eq!(p.malformed, 0, "{at}: {:?}", p.detection);
                assert_ne!(p.detection.source, Source::Cached, "{at}");
            }
            let doc = &got.doc;
            assert_eq!(fold(&doc.title), fold(&t.title), "{at} title");
            assert_eq!(doc.posts.len(), t.posts.len(), "{at} post count");
            for (g, w) in doc.posts.iter().zip(&t.posts) {
                assert_eq!((g.floor, g.author.as_str(), g.time.as_deref()), (w.floor, w.author.as_str(), Some(w.time.as_str())), "{at}");
                assert_eq!(fold(&g.text()), fold(&w.text), "{at} floor {}", w.floor);
            }
            assert_eq!(doc.posted.as_deref(), Some(t.posts[0].time.as_str()), "{at}");
            checked += 1;
            multi_page += usize::from(t.pages > 1);
        }
    }
    assert!(checked >= 200 && multi_page > 0, "{checked} threads, {multi_page} multi-page");
}
