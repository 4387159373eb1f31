//! One ranking across forums: the same fixture threads indexed once as one
//! index and once split over five per-forum indexes rank and score the
//! same, because every index scores with statistics summed over all of them.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{fixture_docs, sample_cjk_strings, write_index};
use luntan_core::ThreadDoc;
use luntan_fixture::{Fixture, FixtureConfig};
use luntan_search::{Catalog, SearchOptions, SearchResults, SortOrder};

const THREADS_PER_FORUM: usize = 250;
const TOP: usize = 20;

fn top(c: &Catalog, q: &str, sort: SortOrder) -> SearchResults {
    let opts = SearchOptions { limit: TOP, sort, ids_only: true, ..SearchOptions::default() };
    c.search_str(q, &opts).unwrap_or_else(|e| panic!("{q:?}: {e}"))
}

fn listing(r: &SearchResults) -> Vec<(String, f32)> {
    r.hits.iter().map(|h| (format!("{}/{}", h.site, h.thread), h.score)).collect()
}

/// Five uneven parts: `dz` cut 1:3, `phpbb` whole (all the traditional
/// text in one small index), `bbs` by odd and even thread id. Per-index
/// statistics would differ wildly between them.
fn split_five(docs: &[ThreadDoc]) -> Vec<(&'static str, Vec<&ThreadDoc>)> {
    let dz: Vec<&ThreadDoc> = docs.iter().filter(|d| d.site == "dz").collect();
    let cut = dz.len() / 4;
    let bbs = |odd: bool| docs.iter().filter(|d| d.site == "bbs" && (d.thread.parse::<u64>().unwrap() % 2 == 1) == odd).collect();
    vec![
        ("dz-a", dz[..cut].to_vec()),
        ("dz-b", dz[cut..].to_vec()),
        ("phpbb", docs.iter().filter(|d| d.site == "phpbb").collect()),
        ("bbs-odd", bbs(true)),
        ("bbs-even", bbs(false)),
    ]
}

#[test]
fn one_index_and_five_per_forum_indexes_rank_and_score_the_same() {
    let truth = Fixture::new(FixtureConfig { threads: THREADS_PER_FORUM, boards: 3, ..FixtureConfig::default() }).truth();
    let docs = fixture_docs(&truth);
    assert!(docs.len() >= 700, "{} threads", docs.len());

    let one_dir = tempfile::tempdir().unwrap();
    write_index(one_dir.path(), "all", &docs.iter().collect::<Vec<_>>());
    let five_dir = tempfile::tempdir().unwrap();
    let parts = split_five(&docs);
    let mut part_paths: Vec<PathBuf> = Vec::new();
    for (name, part) in &parts {
        assert!(!part.is_empty(), "{name}");
        part_paths.push(write_index(five_dir.path(), name, part));
    }
    let one = Catalog::open(one_dir.path()).unwrap();
    let five = Catalog::open(five_dir.path()).unwrap();
    assert_eq!(five.sites().len(), 5);
    assert_eq!(one.num_docs(), five.num_docs());

    // 30 strings cut from the text (both scripts) and 20 written queries
    // covering every kind of clause.
    let mut queries = sample_cjk_strings(&docs, 30, 11);
    let board = &docs[0].board;
    let author = docs.iter().find(|d| d.site == "phpbb").unwrap().posts[0].author.clone();
    for q in [
        "酒店 服务",
        "房间 -酒店",
        "明月 OR 故鄉",
        "\"服务态度\"",
        "“不 错”",
        "(书 OR 酒店) 不错",
        "title:月",
        "title:\"不错\" OR title:好",
        "site:phpbb 風",
        "site:dz -的",
        &format!("board:{board} 好"),
        &format!("author:{author}"),
        &format!("author:{author} 月"),
        "學習",
        "万里",
        "的 了 是",
        "很好 推荐 值得",
        "山 水 -月",
        "价格 OR 價格 便宜",
        "iPhone OR 手机",
    ] {
        queries.push(q.to_string());
    }
    assert_eq!(queries.len(), 50);

    let mut nonempty = 0;
    for q in &queries {
        for sort in [SortOrder::Relevance, SortOrder::Newest] {
            let a = top(&one, q, sort);
            let b = top(&five, q, sort);
            assert_eq!(a.total, b.total, "{q:?} {sort:?}: total");
            assert_eq!(b.per_site.values().sum::<usize>(), b.total, "{q:?}: per-index counts add up");
            let (la, lb) = (listing(&a), listing(&b));
            assert_eq!(
                la.iter().map(|x| &x.0).collect::<Vec<_>>(),
                lb.iter().map(|x| &x.0).collect::<Vec<_>>(),
                "{q:?} {sort:?}: top {TOP} differ: {la:?} vs {lb:?}"
            );
            for ((k, sa), (_, sb)) in la.iter().zip(&lb) {
                assert!((sa - sb).abs() <= 1e-5, "{q:?} {sort:?}: {k} scores {sa} vs {sb}");
            }
            nonempty += usize::from(a.total > 0 && sort == SortOrder::Relevance);
        }
    }
    assert!(nonempty >= 45, "only {nonempty} of 50 queries found anything: the comparison would be empty");

    // The comparison can fail: scored with one part's own statistics, the
    // same threads get other scores.
    let all = SearchOptions { limit: usize::MAX, ids_only: true, ..SearchOptions::default() };
    let alone = Catalog::open_paths(&part_paths[..1]).unwrap();
    let globally: BTreeMap<String, f32> = listing(&five.search_str("好", &all).unwrap()).into_iter().collect();
    let locally = listing(&alone.search_str("好", &all).unwrap());
    assert!(!locally.is_empty());
    let differ = locally.iter().filter(|(k, s)| (globally[k] - s).abs() > 1e-3).count();
    assert_eq!(differ, locally.len(), "per-index statistics gave the global scores: the test could not catch a regression");
}
