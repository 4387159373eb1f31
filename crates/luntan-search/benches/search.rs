//! Search latency over the same fixture threads split into 8 indexes and
//! held in 1, in one run (`make bench-search`):
//!
//! ```sh
//! cargo bench -p luntan-search --bench search
//! LUNTAN_BENCH_THREADS=20000 LUNTAN_BENCH_ROUNDS=3 cargo bench -p luntan-search --bench search
//! LUNTAN_BENCH_QUERY=明月 LUNTAN_BENCH_ROUNDS=500 perf record -g target/release/deps/search-* --bench
//! ```
//!
//! Threads come from the fixture model (its three forums, every post of
//! every thread); the indexes are built once and kept under
//! `target/bench-search/`, so later runs only search. Both layouts are
//! merged down to one segment per index, so the comparison is between
//! index counts, not between merge states. The query set runs in rounds,
//! the two layouts alternating (and swapping which goes first) so that
//! load from elsewhere on the machine falls on both alike. Each search
//! is what `luntan-search` does for one query: parse, global statistics,
//! every index in parallel, a merged top 10, stored documents and snippets.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use luntan_core::{Post, ThreadDoc};
use luntan_fixture::{Fixture, FixtureConfig, ForumKind};
use luntan_search::{open_or_create_index, Catalog, IndexOptions, LuntanSchema, SearchOptions, SiteWriter, SortOrder};

/// Bump when analysis changes what the indexes hold, so stale caches are rebuilt.
const CACHE_VERSION: u32 = 1;
const PARTS: usize = 8;

/// The fixed query set: 1–4 characters in both scripts, several words,
/// phrases, OR and exclusions, field filters, dates and date order.
const QUERIES: &[(&str, Sort)] = &[
    ("月", Sort::Relevance),
    ("好", Sort::Relevance),
    ("書", Sort::Relevance),
    ("明月", Sort::Relevance),
    ("酒店", Sort::Relevance),
    ("故鄉", Sort::Relevance),
    ("服务员", Sort::Relevance),
    ("性价比", Sort::Relevance),
    ("服务态度", Sort::Relevance),
    ("不知何處", Sort::Relevance),
    ("房间很大", Sort::Relevance),
    ("酒店 服务", Sort::Relevance),
    ("房间 干净 早餐", Sort::Relevance),
    ("明月 故鄉", Sort::Relevance),
    ("\"服务态度\"", Sort::Relevance),
    ("\"房间 很\"", Sort::Relevance),
    ("酒店 OR 宾馆", Sort::Relevance),
    ("房间 -酒店", Sort::Relevance),
    ("site:dz 前台", Sort::Relevance),
    ("title:月", Sort::Relevance),
    ("site:phpbb title:春 風", Sort::Relevance),
    ("好", Sort::Newest),
    ("不错 -失望", Sort::Newest),
    ("性价比", Sort::Since),
];

#[derive(Debug, Clone, Copy)]
enum Sort {
    Relevance,
    Newest,
    /// Relevance, first posted in 2024.
    Since,
}

fn options(sort: Sort) -> SearchOptions {
    let mut o = SearchOptions { limit: 10, ..SearchOptions::default() };
    match sort {
        Sort::Relevance => {}
        Sort::Newest => o.sort = SortOrder::Newest,
        Sort::Since => o.since = Some(time::macros::date!(2024 - 01 - 01)),
    }
    o
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"), PathBuf::from)
}

fn to_doc(t: luntan_fixture::ThreadTruth, kind: ForumKind) -> ThreadDoc {
    ThreadDoc {
        posted: t.posts.first().map(|p| p.time.clone()),
        forum: kind.name().to_string(),
        url: format!("http://fixture.invalid{}", t.url_path),
        saved: "20261130".parse().unwrap(),
        encoding: kind.encoding_name().to_string(),
        pages: t.pages,
        posts: t
            .posts
            .into_iter()
            .map(|p| Post {
                floor: p.floor,
                author: p.author,
                time: Some(p.time),
                paragraphs: p.text.split('\n').map(str::to_string).collect(),
                ..Post::default()
            })
            .collect(),
        site: t.site.parse().unwrap(),
        board: t.board.parse().unwrap(),
        thread: t.thread.parse().unwrap(),
        title: t.title,
        board_name: None,
        replies: None,
        views: None,
    }
}

/// Every live thread of the three forums, `threads` in all, in forum order.
/// The fixture makes posts on demand per thread; ids start at 1001 and
/// leave gaps of at most five, so walking ids finds every thread without
/// materializing the whole truth at once.
fn for_each_thread(threads: usize, mut f: impl FnMut(usize, ThreadDoc)) {
    let per_forum = threads.div_ceil(3);
    // About 1% of threads are deleted (listed, never served): ask for a few more.
    let fixture = Fixture::new(FixtureConfig { threads: per_forum + per_forum / 50 + 10, ..FixtureConfig::default() });
    let mut n = 0;
    for (i, kind) in [ForumKind::Discuz, ForumKind::Phpbb, ForumKind::Bbs].into_iter().enumerate() {
        let want = (threads * (i + 1) / 3) - n;
        let (mut got, mut misses, mut tid) = (0, 0, 1000u64);
        while got < want {
            tid += 1;
            match fixture.thread_truth(kind, &tid.to_string()) {
                None => {
                    misses += 1;
                    assert!(misses < 100, "fixture ran out of {kind:?} threads at {tid}");
                }
                Some(t) => {
                    misses = 0;
                    if t.servable() {
                        f(n, to_doc(t, kind));
                        n += 1;
                        got += 1;
                    }
                }
            }
        }
    }
    assert_eq!(n, threads);
}

fn merge_to_one_segment(path: &Path) {
    let index = open_or_create_index(path).expect("open index");
    let ids = index.searchable_segment_ids().expect("segments");
    if ids.len() > 1 {
        let mut w: tantivy::IndexWriter<tantivy::TantivyDocument> = index.writer(200_000_000).expect("writer");
        w.merge(&ids).wait().expect("merge");
        w.garbage_collect_files().wait().expect("gc");
        w.wait_merging_threads().expect("merge threads");
    }
}

/// `root/split/part<i>.index` (8) and `root/one/all.index`, built unless a
/// complete build is already there.
fn ensure_built(root: &Path, threads: usize) {
    let done = root.join("complete");
    if done.exists() {
        return;
    }
    if root.exists() {
        std::fs::remove_dir_all(root).expect("clear a half-built cache");
    }
    let split = root.join("split");
    std::fs::create_dir_all(&split).unwrap();
    let started = Instant::now();
    eprintln!("building {threads} threads into {PARTS} indexes under {} (once)…", root.display());
    let opts = IndexOptions { writer_mb: 600, commit_every: usize::MAX };
    let mut writer: Option<(usize, SiteWriter)> = None;
    let mut bytes = 0usize;
    for_each_thread(threads, |n, doc| {
        let part = n * PARTS / threads;
        if writer.as_ref().is_none_or(|(p, _)| *p != part) {
            if let Some((_, w)) = writer.take() {
                w.finish().expect("commit");
            }
            writer = Some((part, SiteWriter::open(&split.join(format!("part{part}.index")), &opts).expect("writer")));
        }
        bytes += doc.posts.iter().flat_map(|p| &p.paragraphs).map(String::len).sum::<usize>();
        writer.as_mut().unwrap().1.add(&doc).expect("add");
        if (n + 1) % 20_000 == 0 {
            eprintln!("  {} threads, {:.0} MB of text, {:.0?}", n + 1, bytes as f64 / 1e6, started.elapsed());
        }
    });
    if let Some((_, w)) = writer.take() {
        w.finish().expect("commit");
    }
    let parts: Vec<PathBuf> = (0..PARTS).map(|p| split.join(format!("part{p}.index"))).collect();
    for p in &parts {
        merge_to_one_segment(p);
    }
    eprintln!("  split indexes built and merged in {:.0?}", started.elapsed());
    let one = root.join("one/all.index");
    std::fs::create_dir_all(&one).unwrap();
    let indexes: Vec<tantivy::Index> = parts.iter().map(|p| open_or_create_index(p).expect("open part")).collect();
    // The same segments merged into one: the very same threads, without tokenizing them again.
    tantivy::indexer::merge_indices(&indexes, tantivy::directory::MmapDirectory::open(&one).expect("dir")).expect("merge indexes");
    std::fs::write(&done, format!("{threads} threads, {:.0} MB of post text\n", bytes as f64 / 1e6)).unwrap();
    eprintln!("  built in {:.0?}", started.elapsed());
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is understood.
    let threads = env_usize("LUNTAN_BENCH_THREADS", 200_000);
    let rounds = env_usize("LUNTAN_BENCH_ROUNDS", 10).max(1);
    // Field by field: the schema's own Debug output includes a hash map, in no fixed order.
    let schema: String = LuntanSchema::new().schema.fields().map(|(_, e)| format!("{e:?}")).collect();
    let fingerprint = schema.bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let root = target_dir().join("bench-search").join(format!("t{threads}-v{CACHE_VERSION}-{fingerprint:08x}"));
    ensure_built(&root, threads);

    luntan_search::analysis::warm_up();
    let split = Catalog::open(&root.join("split")).expect("open split indexes");
    let one = Catalog::open(&root.join("one")).expect("open one index");
    assert_eq!(split.sites().len(), PARTS);
    assert_eq!(split.num_docs(), one.num_docs());
    println!(
        "search benchmark: {} threads ({}), {} indexes vs 1, {} queries x {rounds} rounds, {} cores",
        split.num_docs(),
        std::fs::read_to_string(root.join("complete")).unwrap_or_default().trim(),
        PARTS,
        QUERIES.len(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // Warm-up, and a check that both layouts give the same answers.
    for (q, sort) in QUERIES {
        let a = split.search_str(q, &options(*sort)).expect("search");
        let b = one.search_str(q, &options(*sort)).expect("search");
        let keys = |r: &luntan_search::SearchResults| r.hits.iter().map(|h| (h.site.clone(), h.thread.clone())).collect::<Vec<_>>();
        assert_eq!(a.total, b.total, "{q}");
        assert!(a.total > 0, "{q} finds nothing: fix the query set");
        assert_eq!(keys(&a), keys(&b), "{q}: the layouts rank differently");
    }

    // For profiling: only this one query.
    let only = std::env::var("LUNTAN_BENCH_QUERY").unwrap_or_default();
    // And only one layout (`8` or `1`), to profile it alone.
    let layout = std::env::var("LUNTAN_BENCH_LAYOUT").unwrap_or_default();
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut per_query: Vec<[Vec<Duration>; 2]> = vec![[Vec::new(), Vec::new()]; QUERIES.len()];
    for round in 0..rounds {
        for (qi, (q, sort)) in QUERIES.iter().enumerate() {
            if !only.is_empty() && *q != only {
                continue;
            }
            let order = if (round + qi) % 2 == 0 { [0, 1] } else { [1, 0] };
            for which in order {
                if !layout.is_empty() && layout != ["8", "1"][which] {
                    continue;
                }
                let catalog = if which == 0 { &split } else { &one };
                let t = Instant::now();
                let r = catalog.search_str(q, &options(*sort)).expect("search");
                let took = t.elapsed();
                std::hint::black_box(r);
                times[which].push(took);
                per_query[qi][which].push(took);
            }
        }
    }

    println!("{:>10} {:>10} {:>7}  query (median ms)", "8 indexes", "1 index", "ratio");
    for (qi, (q, sort)) in QUERIES.iter().enumerate() {
        if per_query[qi][0].is_empty() || per_query[qi][1].is_empty() {
            continue;
        }
        let [mut a, mut b] = per_query[qi].clone();
        a.sort();
        b.sort();
        let (ma, mb) = (percentile(&a, 0.5), percentile(&b, 0.5));
        let label = match sort {
            Sort::Relevance => q.to_string(),
            Sort::Newest => format!("{q} --sort newest"),
            Sort::Since => format!("{q} --since 2024-01-01"),
        };
        println!("{:>10.2} {:>10.2} {:>7.2}  {label}", ms(ma), ms(mb), ms(ma) / ms(mb));
    }
    if times.iter().any(Vec::is_empty) {
        return;
    }
    for t in &mut times {
        t.sort();
    }
    let (m8, m1) = (percentile(&times[0], 0.5), percentile(&times[1], 0.5));
    let (p8, p1) = (percentile(&times[0], 0.95), percentile(&times[1], 0.95));
    println!();
    println!("all queries     {:>10} {:>10}", "median ms", "p95 ms");
    println!("8 indexes       {:>10.2} {:>10.2}", ms(m8), ms(p8));
    println!("1 index         {:>10.2} {:>10.2}", ms(m1), ms(p1));
    println!("ratio 8/1       {:>10.2} {:>10.2}   (goal <= 1.30)", ms(m8) / ms(m1), ms(p8) / ms(p1));
}
