//! Recall for short queries and the two scripts, over real fixture text.
//!
//! Ground truth is a brute-force scan of the thread XML: a thread holds a
//! query when the query occurs in its title or one of its paragraphs, both
//! sides folded from traditional to simplified and lowercased with the same
//! function the index uses (`luntan_search::analysis::normalize`), so a
//! query in either script stands for both.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{doc_key, finder, fixture_docs, folded_text, sample_cjk_strings, write_index};
use luntan_core::ThreadDoc;
use luntan_fixture::{Fixture, FixtureConfig};
use luntan_search::analysis::{normalize, query_words};
use luntan_search::{Catalog, SearchOptions};

/// One index per forum, as `luntan-index` lays them out.
fn per_forum_catalog(docs: &[ThreadDoc]) -> (tempfile::TempDir, Catalog) {
    let dir = tempfile::tempdir().unwrap();
    let mut by_site: BTreeMap<&str, Vec<&ThreadDoc>> = BTreeMap::new();
    for d in docs {
        by_site.entry(d.site.as_str()).or_default().push(d);
    }
    for (site, part) in &by_site {
        write_index(dir.path(), site, part);
    }
    let catalog = Catalog::open(dir.path()).unwrap();
    (dir, catalog)
}

#[test]
fn every_short_query_returns_exactly_the_threads_containing_it() {
    let truth = Fixture::new(FixtureConfig { threads: 700, boards: 4, ..FixtureConfig::default() }).truth();
    let docs = fixture_docs(&truth);
    assert!(docs.len() >= 2000, "{} threads", docs.len());
    let (_dir, catalog) = per_forum_catalog(&docs);
    let folded: Vec<String> = docs.iter().map(folded_text).collect();

    let queries = sample_cjk_strings(&docs, 300, 3);
    let traditional = queries.iter().filter(|q| normalize(q) != **q).count();
    assert!(traditional >= 30, "only {traditional} queries hold traditional characters");
    let all = SearchOptions { limit: usize::MAX, ids_only: true, ..SearchOptions::default() };
    let (mut sub_word, mut cross_script, mut hits) = (0, 0, 0);
    for q in &queries {
        let n = finder(q);
        let want: BTreeSet<String> = docs.iter().zip(&folded).filter(|(_, f)| n.is_match(f)).map(|(d, _)| doc_key(d)).collect();
        let r = catalog.search_str(q, &all).unwrap_or_else(|e| panic!("{q:?}: {e}"));
        let got: BTreeSet<String> = r.hits.iter().map(|h| format!("{}/{}", h.site, h.thread)).collect();
        let missing: Vec<&String> = want.difference(&got).take(5).collect();
        let extra: Vec<&String> = got.difference(&want).take(5).collect();
        assert!(missing.is_empty() && extra.is_empty(), "{q:?}: {} wanted, {} found; missing {missing:?}, not containing it {extra:?}", want.len(), got.len());
        assert_eq!(r.total, want.len(), "{q:?}: total");
        assert_eq!(r.hits.len(), want.len(), "{q:?}: one hit per thread");
        hits += want.len();
        // What plain jieba matching would have missed: strings that are not one whole word.
        sub_word += usize::from(query_words(q) != [normalize(q)]);
        let sites: BTreeSet<&str> = r.hits.iter().map(|h| h.site.as_str()).collect();
        cross_script += usize::from(sites.contains("phpbb") && sites.len() > 1);
    }
    assert!(sub_word >= 50, "only {sub_word} queries were sub-word strings");
    assert!(cross_script >= 30, "only {cross_script} queries found threads in both scripts");
    assert!(hits >= 3000, "{hits} hits in all");
}

/// Strings of the Big5 forum's text that hold traditional characters
/// (they fold to something else) and that the simplified forums hold too.
fn traditional_strings(docs: &[ThreadDoc], folded: &[String]) -> Vec<String> {
    let phpbb: Vec<ThreadDoc> = docs.iter().filter(|d| d.site == "phpbb").cloned().collect();
    let (mut single, mut longer) = (Vec::new(), Vec::new());
    for q in sample_cjk_strings(&phpbb, 6000, 5) {
        let list = if q.chars().count() == 1 { &mut single } else { &mut longer };
        if list.len() < 6 && normalize(&q) != q {
            let n = finder(&q);
            if docs.iter().zip(folded).any(|(d, f)| d.site != "phpbb" && n.is_match(f)) {
                list.push(q);
            }
        }
    }
    single.extend(longer);
    single
}

#[test]
fn either_script_finds_both_and_highlights_the_original_characters() {
    let truth = Fixture::new(FixtureConfig { threads: 300, boards: 2, ..FixtureConfig::default() }).truth();
    let docs = fixture_docs(&truth);
    let (_dir, catalog) = per_forum_catalog(&docs);
    let folded: Vec<String> = docs.iter().map(folded_text).collect();
    let strings = traditional_strings(&docs, &folded);
    assert!(strings.len() >= 9, "the fixture should share words across scripts: {strings:?}");
    assert!(strings.iter().filter(|s| s.chars().count() > 1).count() >= 3, "{strings:?}");
    let all = SearchOptions { limit: usize::MAX, snippet_chars: 60, ..SearchOptions::default() };

    let by_key: BTreeMap<String, &ThreadDoc> = docs.iter().map(|d| (doc_key(d), d)).collect();
    for trad in &strings {
        let simp = normalize(trad);
        let n = finder(trad);
        let want: BTreeSet<String> = docs.iter().zip(&folded).filter(|(_, f)| n.is_match(f)).map(|(d, _)| doc_key(d)).collect();
        for q in [trad.as_str(), simp.as_str()] {
            let r = catalog.search_str(q, &all).unwrap();
            let got: BTreeSet<String> = r.hits.iter().map(|h| format!("{}/{}", h.site, h.thread)).collect();
            assert_eq!(got, want, "{q:?} ({trad} / {simp})");
            let sites: BTreeSet<&str> = r.hits.iter().map(|h| h.site.as_str()).collect();
            assert!(sites.contains("phpbb") && sites.len() > 1, "{q:?} finds both scripts: {sites:?}");
            let mut traditional_marks = 0;
            for h in &r.hits {
                let doc = by_key[&format!("{}/{}", h.site, h.thread)];
                let original: Vec<&str> =
                    std::iter::once(doc.title.as_str()).chain(doc.posts.iter().flat_map(|p| p.paragraphs.iter().map(String::as_str))).collect();
                let marks: Vec<&str> = h.snippet.highlights.iter().map(|&(a, b)| &h.snippet.text[a..b]).collect();
                let title_marks: Vec<&str> = h.title_highlights.iter().map(|&(a, b)| &h.title[a..b]).collect();
                assert!(!marks.is_empty() || !title_marks.is_empty(), "{q:?}: nothing marked in {}/{}", h.site, h.thread);
                for m in marks.iter().chain(&title_marks) {
                    // The marked characters are the thread's own, whichever script the query used.
                    assert_eq!(normalize(m), simp, "{q:?}: {}/{} marks {m:?}", h.site, h.thread);
                    assert!(original.iter().any(|t| t.contains(m)), "{q:?}: {m:?} is not in {}/{} as written", h.site, h.thread);
                    traditional_marks += usize::from(*m != simp);
                }
            }
            assert!(traditional_marks > 0, "{q:?}: no traditional characters marked");
        }
    }
}
