//! The real `luntan-search` binary over per-forum indexes of fixture
//! threads: sorting, date ranges, field filters, exclusions, OR, paging,
//! counts, the two scripts in `--json`, and malformed queries. Every
//! expectation is computed by brute force from the threads themselves.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;
use std::sync::OnceLock;

use common::{doc_key, fixture_docs, folded_text, holds, write_index, Work};
use luntan_core::ThreadDoc;
use luntan_fixture::{Fixture, FixtureConfig};
use luntan_search::analysis::normalize;

struct Corpus {
    work: Work,
    docs: Vec<ThreadDoc>,
    folded: BTreeMap<String, String>,
}

/// Built once for all tests of this file: 3 forums × 150 threads, one index per forum.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let truth = Fixture::new(FixtureConfig { threads: 150, boards: 3, ..FixtureConfig::default() }).truth();
        let docs = fixture_docs(&truth);
        let work = Work::new();
        for site in ["dz", "phpbb", "bbs"] {
            let part: Vec<&ThreadDoc> = docs.iter().filter(|d| d.site == site).collect();
            write_index(&work.index(), site, &part);
        }
        let folded = docs.iter().map(|d| (doc_key(d), folded_text(d))).collect();
        Corpus { work, docs, folded }
    })
}

impl Corpus {
    fn has(&self, d: &ThreadDoc, needle: &str) -> bool {
        holds(&self.folded[&doc_key(d)], needle)
    }

    fn keys(&self, pred: impl Fn(&ThreadDoc) -> bool) -> BTreeSet<String> {
        self.docs.iter().filter(|d| pred(d)).map(doc_key).collect()
    }
}

struct Results {
    hits: Vec<serde_json::Value>,
    summary: serde_json::Value,
}

impl Results {
    fn keys(&self) -> Vec<String> {
        self.hits.iter().map(|h| format!("{}/{}", h["site"].as_str().unwrap(), h["thread"].as_str().unwrap())).collect()
    }

    fn key_set(&self) -> BTreeSet<String> {
        self.keys().into_iter().collect()
    }

    fn total(&self) -> usize {
        self.summary["total"].as_u64().unwrap() as usize
    }
}

fn search(args: &[&str]) -> Results {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = corpus().work.ok("search", &all);
    let mut hits = Vec::new();
    let mut summary = serde_json::Value::Null;
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("non-JSON line {line:?}: {e}"));
        if v.get("thread").is_some() {
            hits.push(v);
        } else {
            summary = v;
        }
    }
    assert!(summary.get("total").is_some(), "no summary line in {out}");
    Results { hits, summary }
}

/// Every matching thread, with no snippets.
fn everything(query: &str, extra: &[&str]) -> Results {
    let mut args = vec!["--limit", "100000", "--ids"];
    args.extend_from_slice(extra);
    args.push(query);
    let r = search(&args);
    assert_eq!(r.hits.len(), r.total(), "{query}: every hit listed");
    r
}

#[test]
fn totals_and_per_forum_counts_match_a_brute_force_count() {
    let c = corpus();
    for q in ["的", "月", "不错", "明月"] {
        let r = everything(q, &[]);
        let want = c.keys(|d| c.has(d, q));
        assert_eq!(r.key_set(), want, "{q}");
        let mut per: BTreeMap<String, u64> = BTreeMap::new();
        for k in &want {
            *per.entry(k.split('/').next().unwrap().to_string()).or_default() += 1;
        }
        let got: BTreeMap<String, u64> =
            r.summary["per_site"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).filter(|(_, v)| *v > 0).collect();
        assert_eq!(got, per, "{q}: per-forum counts");
    }
    // The plain-text output says the same in its first line.
    let out = c.work.ok("search", &["--color", "never", "明月"]);
    let n = c.keys(|d| c.has(d, "明月")).len();
    assert!(out.lines().next().unwrap().starts_with(&format!("{n} hits (")), "{out}");
}

#[test]
fn ids_lists_the_same_threads_one_per_line() {
    let c = corpus();
    let lines = c.work.ok("search", &["--ids", "--limit", "30", "明月 OR 酒店"]);
    let full = search(&["--limit", "30", "明月 OR 酒店"]);
    assert_eq!(lines.lines().map(str::to_string).collect::<Vec<_>>(), full.keys());
    assert_eq!(full.hits.len(), 30);
}

#[test]
fn sort_newest_and_oldest_order_by_first_post_and_keep_the_same_threads() {
    let c = corpus();
    let want = c.keys(|d| c.has(d, "好"));
    let posted = |r: &Results| r.hits.iter().map(|h| h["posted"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let newest = search(&["--sort", "newest", "--limit", "100000", "--snippet-chars", "0", "好"]);
    let oldest = search(&["--sort", "oldest", "--limit", "100000", "--snippet-chars", "0", "好"]);
    assert_eq!(newest.key_set(), want);
    assert_eq!(oldest.key_set(), want);
    let (n, o) = (posted(&newest), posted(&oldest));
    assert!(n.windows(2).all(|w| w[0] >= w[1]), "newest first: {n:?}");
    assert!(o.windows(2).all(|w| w[0] <= w[1]), "oldest first: {o:?}");
    let mut all_dates: Vec<String> = c.docs.iter().filter(|d| want.contains(&doc_key(d))).map(|d| d.posted.clone().unwrap()).collect();
    all_dates.sort_by(|a, b| b.cmp(a));
    let first_page = search(&["--sort", "newest", "--limit", "10", "好"]);
    assert_eq!(posted(&first_page), all_dates[..10], "the first page holds the ten newest");
}

#[test]
fn since_and_until_keep_threads_first_posted_in_the_range() {
    let c = corpus();
    let r = everything("好", &["--since", "2024-01-01", "--until", "2024-02-29"]);
    let want = c.keys(|d| c.has(d, "好") && d.posted.as_deref().is_some_and(|p| ("2024-01-01".."2024-03-01").contains(&p)));
    assert!(want.len() >= 5, "the fixture spreads threads over a year: {}", want.len());
    assert_eq!(r.key_set(), want);
    let only_since = everything("好", &["--since", "2024-06-01"]);
    assert_eq!(only_since.key_set(), c.keys(|d| c.has(d, "好") && d.posted.as_deref().is_some_and(|p| p >= "2024-06-01")));
    let out = c.work.stage("search", &["--since", "2024-03-01", "--until", "2024-02-01", "好"]);
    assert!(!out.status.success());
}

#[test]
fn field_filters_select_forum_board_author_and_title() {
    let c = corpus();
    let r = everything("site:phpbb 月", &[]);
    assert_eq!(r.key_set(), c.keys(|d| d.site == "phpbb" && c.has(d, "月")));

    let board = c.docs.iter().find(|d| d.site == "dz").unwrap().board.clone();
    let r = everything(&format!("site:dz board:{board} 好"), &[]);
    let want = c.keys(|d| d.site == "dz" && d.board == board && c.has(d, "好"));
    assert!(!want.is_empty());
    assert_eq!(r.key_set(), want);

    // A poster's name, given in simplified, matches the Big5 forum's traditional spelling.
    let author = c.docs.iter().filter(|d| d.site == "phpbb").flat_map(|d| &d.posts).map(|p| &p.author).find(|a| normalize(a) != **a).unwrap();
    let q = format!("author:{}", normalize(author));
    let want = c.keys(|d| d.posts.iter().any(|p| normalize(&p.author).contains(&normalize(author))));
    assert_eq!(everything(&q, &[]).key_set(), want, "{q}");

    let r = everything("title:月", &[]);
    let want = c.keys(|d| normalize(&d.title).contains('月'));
    assert_eq!(r.key_set(), want);
    assert!(want.len() < c.keys(|d| c.has(d, "月")).len(), "title: must narrow the body matches");
}

#[test]
fn exclusions_and_or_match_their_brute_force_sets() {
    let c = corpus();
    let r = everything("好 -不", &[]);
    assert_eq!(r.key_set(), c.keys(|d| c.has(d, "好") && !c.has(d, "不")));
    let r = everything("明月 OR 酒店", &[]);
    assert_eq!(r.key_set(), c.keys(|d| c.has(d, "明月") || c.has(d, "酒店")));
    let r = everything("(明月 OR 酒店) -的", &[]);
    assert_eq!(r.key_set(), c.keys(|d| (c.has(d, "明月") || c.has(d, "酒店")) && !c.has(d, "的")));
    let r = everything("site:bbs -好", &[]);
    assert_eq!(r.key_set(), c.keys(|d| d.site == "bbs" && !c.has(d, "好")));
}

#[test]
fn pages_do_not_overlap_and_add_up_to_one_long_page() {
    for sort in ["relevance", "newest"] {
        let long = search(&["--sort", sort, "--limit", "42", "--snippet-chars", "0", "的"]);
        assert_eq!(long.hits.len(), 42);
        let mut paged = Vec::new();
        for offset in (0..42).step_by(7) {
            let page = search(&["--sort", sort, "--limit", "7", "--offset", &offset.to_string(), "--snippet-chars", "0", "的"]);
            assert_eq!(page.total(), long.total());
            assert_eq!(page.hits[0]["rank"], offset + 1);
            paged.extend(page.keys());
        }
        let unique: BTreeSet<&String> = paged.iter().collect();
        assert_eq!(unique.len(), paged.len(), "{sort}: pages overlap");
        assert_eq!(paged, long.keys(), "{sort}");
    }
    let past = search(&["--offset", "100000", "的"]);
    assert!(past.hits.is_empty() && past.total() > 0);
}

#[test]
fn json_highlights_are_byte_offsets_of_the_original_characters() {
    // 萬里 / 万里: the Big5 forum writes it traditional, the query may not.
    let c = corpus();
    for q in ["萬里", "万里"] {
        let r = search(&["--limit", "1000", q]);
        assert!(r.hits.iter().any(|h| h["site"] == "phpbb"), "{q} finds the Big5 forum's threads");
        assert_eq!(r.key_set(), c.keys(|d| c.has(d, "万里")), "{q}");
        for h in &r.hits {
            let text = h["snippet_text"].as_str().unwrap();
            let title = h["title"].as_str().unwrap();
            let marks: Vec<&str> = h["highlights"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| &text[r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize])
                .chain(h["title_highlights"].as_array().unwrap().iter().map(|r| &title[r[0].as_u64().unwrap() as usize..r[1].as_u64().unwrap() as usize]))
                .collect();
            assert!(!marks.is_empty(), "{h}");
            for m in marks {
                assert_eq!(m, if h["site"] == "phpbb" { "萬里" } else { "万里" }, "{h}");
            }
            assert!(h["snippet"].as_str().unwrap().contains("<b>") || h["title_html"].as_str().unwrap().contains("<b>"), "{h}");
        }
    }
}

fn fails(args: &[&str]) -> Output {
    let out = corpus().work.stage("search", args);
    assert!(!out.status.success(), "{args:?} succeeded");
    out
}

#[test]
fn malformed_queries_exit_2_with_one_line_and_no_panic() {
    for q in ["\"明月", "(明月", "明月)", "明月 OR", "site:", "-明月", "，。！", "明月 OR -酒店", "()", "“明月"] {
        let out = fails(&[q]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{q:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{q:?}: {err}");
        assert!(err.starts_with("luntan-search: query: "), "{q:?}: {err}");
        assert!(!err.contains("panicked"), "{q:?}: {err}");
        assert!(out.stdout.is_empty(), "{q:?}");
    }
    // Not the query's fault: another status.
    let out = fails(&["--site", "nosuch", "明月"]);
    assert_eq!(out.status.code(), Some(1));
}

/// The words of one README command line, as a shell splits them (quotes
/// and a trailing `# comment`; nothing else the examples use).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (None, '#') if !started => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    if started {
        words.push(word);
    }
    words
}

#[test]
fn every_readme_search_example_finds_threads_in_the_fixture_forums() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let (_, rest) = readme.split_once("<!-- search examples -->").expect("README marks its search examples with <!-- search examples -->");
    let (block, _) = rest.split_once("<!-- /search examples -->").expect("and ends them with <!-- /search examples -->");
    let examples: Vec<Vec<String>> = block.lines().filter(|l| l.starts_with("luntan-search ")).map(|l| shell_words(l)[1..].to_vec()).collect();
    assert!(examples.len() >= 4, "the README's examples: {block}");
    for args in &examples {
        // search() asks for --json itself.
        let args: Vec<&str> = args.iter().map(String::as_str).filter(|a| *a != "--json").collect();
        let r = search(&args);
        assert!(r.total() >= 1 && !r.hits.is_empty(), "README example `luntan-search {}` finds nothing in the fixture forums", args.join(" "));
    }
    assert_eq!(shell_words(r#"luntan-search 'title:"a b" site:dz' -n 2   # c"#), ["luntan-search", r#"title:"a b" site:dz"#, "-n", "2"]);
}
