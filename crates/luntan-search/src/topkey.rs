//! The top `k` matches of one index by luntan's sort key: the date (for
//! date orders), the score, the newer thread, the thread's stable hash.
//!
//! tantivy's `TopDocs::tweak_score` computes such a key for every match,
//! reading two fast fields per document. A common word matches tens of
//! thousands of threads of which ten are wanted: once the heap holds `k`
//! matches, a score (or date) below the worst of them rules a match out
//! before any fast field is read, so the key is computed only for matches
//! that might enter. The result is the same top `k` (a unit test checks it
//! against the brute force). Under relevance the collector hands the query
//! its threshold (`for_each_pruning`), so a query that can skip matches
//! below it ([`crate::termsum::TermSum`]) never scores them.
//!
//! The indexes of one search are searched in parallel, each keeping its own
//! top `k`, and a thread only one of them ranks high may still lose to `k`
//! better ones elsewhere. A [`SharedThreshold`] lets every index (and every
//! segment after the first) prune against the best `k`-th score any other
//! has already found, not only its own.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::Weight;
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use crate::schema::TIEBREAK;

/// How hits are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    #[default]
    Relevance,
    Newest,
    Oldest,
}

/// Larger first: `(date key, score, posted, tiebreak)`. The date key is 0
/// for relevance order and the date (negated for oldest-first) otherwise,
/// undated threads last. Equal scores fall back on the newer thread, then
/// on the thread's stable hash, never on document ids, so the order does
/// not depend on which index or segment holds a thread.
pub(crate) type SortKey = (i64, Score, i64, u64);

/// Matches of one index with their keys, in no particular order.
pub(crate) type TopList = Vec<(SortKey, DocAddress)>;

/// The first element of a [`SortKey`]: 0 under relevance, else the first
/// post's time (negated for oldest first), undated threads last.
fn date_key(sort: SortOrder, ts: Option<i64>) -> i64 {
    match (sort, ts) {
        (SortOrder::Relevance, _) => 0,
        (_, None) => i64::MIN,
        (SortOrder::Newest, Some(t)) => t,
        (SortOrder::Oldest, Some(t)) => -t,
    }
}

/// `Greater` when `a` ranks above `b`.
pub(crate) fn rank(a: &SortKey, b: &SortKey) -> Ordering {
    a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3))
}

/// A match in the heap: greater is better; of two equal keys (a hash
/// collision) the earlier document.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: SortKey,
    addr: DocAddress,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&self.key, &other.key).then_with(|| other.addr.cmp(&self.addr))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

/// The highest pruning threshold any collector of one search has reached,
/// shared by the collectors of all its indexes and segments.
///
/// A collector's threshold is just below the `k`-th score it holds: `k`
/// matches score at least that much, so a match scoring no more than the
/// threshold has `k` matches ranking above it, in its own index or another,
/// and cannot be in the merged top `k` (under relevance the score comes
/// first in the [`SortKey`]; an equal score stays above the threshold and
/// is still offered for its date and tiebreak). The largest such threshold
/// is therefore as safe as a collector's own.
#[derive(Debug)]
pub(crate) struct SharedThreshold(AtomicU32);

impl Default for SharedThreshold {
    fn default() -> Self {
        SharedThreshold(AtomicU32::new(ordered_bits(Score::MIN)))
    }
}

impl SharedThreshold {
    pub fn get(&self) -> Score {
        from_ordered_bits(self.0.load(AtomicOrdering::Relaxed))
    }

    /// Raises the shared threshold to `threshold` if that is higher.
    pub fn raise(&self, threshold: Score) {
        self.0.fetch_max(ordered_bits(threshold), AtomicOrdering::Relaxed);
    }
}

/// `s`'s bits arranged so that unsigned order is [`Score::total_cmp`]'s
/// order, for an atomic max over scores.
fn ordered_bits(s: Score) -> u32 {
    let b = s.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 1 << 31
    }
}

fn from_ordered_bits(b: u32) -> Score {
    Score::from_bits(if b >> 31 == 1 { b & !(1 << 31) } else { !b })
}

/// Collects the top `k` (`k` ≥ 1) matches by [`SortKey`].
pub(crate) struct TopKeyed {
    pub k: usize,
    pub sort: SortOrder,
    /// Under relevance, a threshold to prune with and to raise, shared with
    /// the collectors of the other indexes this search merges with.
    pub shared: Option<Arc<SharedThreshold>>,
}

pub(crate) struct TopKeyedSegment {
    k: usize,
    sort: SortOrder,
    segment: SegmentOrdinal,
    posted: Option<Column<DateTime>>,
    tiebreak: Option<Column<u64>>,
    /// The worst kept match on top.
    heap: BinaryHeap<Reverse<Entry>>,
}

impl Collector for TopKeyed {
    type Fruit = TopList;
    type Child = TopKeyedSegment;

    fn for_segment(&self, segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<TopKeyedSegment> {
        let ff = reader.fast_fields();
        Ok(TopKeyedSegment {
            k: self.k.max(1),
            sort: self.sort,
            segment,
            posted: ff.date("posted").ok(),
            tiebreak: ff.u64(TIEBREAK).ok(),
            heap: BinaryHeap::with_capacity(self.k.clamp(1, 4096)),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    /// Under relevance, asks the query for only the matches that can still
    /// enter (a [`crate::termsum::TermSum`] skips the rest unscored; other
    /// queries score every match, as the default does).
    fn collect_segment(&self, weight: &dyn Weight, segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<TopList> {
        let mut child = self.for_segment(segment, reader)?;
        let alive = reader.alive_bitset();
        if self.sort == SortOrder::Relevance {
            let shared = self.shared.as_deref();
            let start = shared.map_or(Score::MIN, SharedThreshold::get);
            let mut published = Score::MIN;
            weight.for_each_pruning(start, reader, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    child.collect(doc, score);
                }
                let own = child.threshold();
                match shared {
                    Some(s) => {
                        if own > published {
                            s.raise(own);
                            published = own;
                        }
                        own.max(s.get())
                    }
                    None => own,
                }
            })?;
        } else {
            weight.for_each(reader, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    child.collect(doc, score);
                }
            })?;
        }
        Ok(child.harvest())
    }

    fn merge_fruits(&self, fruits: Vec<TopList>) -> tantivy::Result<TopList> {
        let mut all: Vec<Entry> = fruits.into_iter().flatten().map(|(key, addr)| Entry { key, addr }).collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.truncate(self.k);
        Ok(all.into_iter().map(|e| (e.key, e.addr)).collect())
    }
}

impl TopKeyedSegment {
    /// Under relevance, the score a match must exceed to be worth offering:
    /// just below the worst kept, since an equal score may still enter on
    /// its date or tiebreak.
    fn threshold(&self) -> Score {
        match self.heap.peek() {
            Some(w) if self.heap.len() >= self.k => w.0.key.1.next_down(),
            _ => Score::MIN,
        }
    }
}

impl SegmentCollector for TopKeyedSegment {
    type Fruit = TopList;

    fn collect(&mut self, doc: DocId, score: Score) {
        let full = self.heap.len() >= self.k;
        // Under relevance every date key is 0: a lower score cannot enter.
        if full && self.sort == SortOrder::Relevance && self.heap.peek().is_some_and(|w| score < w.0.key.1) {
            return;
        }
        let ts = self.posted.as_ref().and_then(|c| c.first(doc)).map(|d| d.into_timestamp_secs());
        let date_key = date_key(self.sort, ts);
        if full {
            if let Some(w) = self.heap.peek() {
                // Below the worst on what is known so far: out, without the tiebreak.
                if date_key.cmp(&w.0.key.0).then(score.total_cmp(&w.0.key.1)).then(ts.unwrap_or(i64::MIN).cmp(&w.0.key.2)) == Ordering::Less {
                    return;
                }
            }
        }
        let tie = self.tiebreak.as_ref().and_then(|c| c.first(doc)).unwrap_or(0);
        let entry = Entry { key: (date_key, score, ts.unwrap_or(i64::MIN), u64::MAX - tie), addr: DocAddress::new(self.segment, doc) };
        if !full {
            self.heap.push(Reverse(entry));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if entry > worst.0 {
                *worst = Reverse(entry);
            }
        }
    }

    fn harvest(self) -> TopList {
        self.heap.into_iter().map(|Reverse(e)| (e.key, e.addr)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;
    use crate::search::{compile, Catalog, GlobalStats};
    use crate::termsum::TermSum;
    use crate::testutil::{synthetic, thread, write_index};
    use tantivy::collector::TopDocs;

    /// The brute force: every match keyed, sorted, cut at k.
    fn brute(searcher: &tantivy::Searcher, q: &dyn tantivy::query::Query, k: usize, sort: SortOrder) -> TopList {
        brute_with(searcher, q, k, sort, searcher)
    }

    /// [`brute`] scoring with `stats`.
    fn brute_with(
        searcher: &tantivy::Searcher,
        q: &dyn tantivy::query::Query,
        k: usize,
        sort: SortOrder,
        stats: &dyn tantivy::query::Bm25StatisticsProvider,
    ) -> TopList {
        let all = TopDocs::with_limit(100_000).tweak_score(move |seg: &SegmentReader| {
            let posted = seg.fast_fields().date("posted").ok();
            let tiebreak = seg.fast_fields().u64(TIEBREAK).ok();
            move |doc, score: Score| -> SortKey {
                let ts = posted.as_ref().and_then(|c| c.first(doc)).map(|d| d.into_timestamp_secs());
                (date_key(sort, ts), score, ts.unwrap_or(i64::MIN), u64::MAX - tiebreak.as_ref().and_then(|c| c.first(doc)).unwrap_or(0))
            }
        });
        let mut got: Vec<Entry> =
            searcher.search_with_statistics_provider(q, &all, stats).unwrap().into_iter().map(|(key, addr)| Entry { key, addr }).collect();
        got.sort_unstable_by(|a, b| b.cmp(a));
        got.truncate(k);
        got.into_iter().map(|e| (e.key, e.addr)).collect()
    }

    #[test]
    fn the_top_k_is_the_brute_forces_in_every_order() {
        let dir = tempfile::tempdir().unwrap();
        let docs = crate::testutil::synthetic(600);
        // Several segments, so merging per-segment heaps is exercised too.
        let all: Vec<&luntan_core::ThreadDoc> = docs.iter().collect();
        let path = dir.path().join("s.index");
        let mut w = crate::indexer::SiteWriter::open(&path, &crate::indexer::IndexOptions { writer_mb: 40, commit_every: 150 }).unwrap();
        for d in &all {
            w.add(d).unwrap();
        }
        w.finish().unwrap();
        let catalog = Catalog::open(dir.path()).unwrap();
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searcher = &snapshots[0].2;
        assert!(searcher.segment_readers().len() > 1, "one segment only");
        for text in ["酒店", "书 OR 房间", "的"] {
            let q = compile(&Query::parse(text).unwrap().root, schema).unwrap();
            for sort in [SortOrder::Relevance, SortOrder::Newest, SortOrder::Oldest] {
                for k in [1, 3, 10, 1000] {
                    let mut got = searcher.search(&*q, &TopKeyed { k, sort, shared: None }).unwrap();
                    got.sort_unstable_by(|a, b| Entry { key: b.0, addr: b.1 }.cmp(&Entry { key: a.0, addr: a.1 }));
                    let want = brute(searcher, &*q, k, sort);
                    assert!(!want.is_empty(), "{text}");
                    assert_eq!(got, want, "{text} {sort:?} k={k}");
                }
            }
        }
    }

    /// Per-index top lists merged the way `Catalog::search` merges them.
    fn merge(lists: Vec<(usize, TopList)>, k: usize) -> Vec<(SortKey, usize, DocAddress)> {
        let mut all: Vec<(SortKey, usize, DocAddress)> = lists.into_iter().flat_map(|(i, l)| l.into_iter().map(move |(key, addr)| (key, i, addr))).collect();
        all.sort_by(|a, b| rank(&b.0, &a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        all.truncate(k);
        all
    }

    #[test]
    fn a_threshold_shared_across_indexes_keeps_the_merged_top_k_ties_included() {
        let dir = tempfile::tempdir().unwrap();
        let mut docs = synthetic(450);
        // Twelve threads alike but for their dates, spread over the three
        // indexes: they score the same, above every other thread for 的, so
        // a top 5 is cut inside the tie and decided by date, then tiebreak.
        for j in 0..12 {
            let posted = (j % 4 != 0).then(|| format!("2021-0{}-01T00:00:00", 1 + j % 3));
            docs.push(thread(&format!("s{}", j % 3), &format!("tie{j}"), "的的的", &[("x", "的")], posted.as_deref()));
        }
        for site in ["s0", "s1", "s2"] {
            write_index(&dir.path().join(format!("{site}.index")), &docs.iter().filter(|d| d.site == site).collect::<Vec<_>>());
        }
        let catalog = Catalog::open(dir.path()).unwrap();
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searchers: Vec<tantivy::Searcher> = snapshots.into_iter().map(|s| s.2).collect();
        let stats = GlobalStats::new(searchers.clone());
        let relevance = SortOrder::Relevance;
        for text in ["的", "好", "很", "酒店"] {
            let q = compile(&Query::parse(text).unwrap().root, schema).unwrap();
            assert!(q.is::<TermSum>(), "{text}");
            for k in [1, 5, 10, 40] {
                let want = merge(searchers.iter().enumerate().map(|(i, s)| (i, brute_with(s, &*q, k, relevance, &stats))).collect(), k);
                assert_eq!(want.len(), k, "{text} k={k}");
                // Every order the indexes may be searched in on the thread pool, one after another.
                for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
                    let shared = Arc::new(SharedThreshold::default());
                    let collector = TopKeyed { k, sort: relevance, shared: Some(shared.clone()) };
                    let lists = order.iter().map(|&i| (i, searchers[i].search_with_statistics_provider(&*q, &collector, &stats).unwrap())).collect();
                    assert_eq!(merge(lists, k), want, "{text} k={k} order {order:?}");
                    // Never above the k-th score. It is raised once some
                    // segment's collector holds k matches, which how the
                    // writer split the segments decides for a large k; a
                    // small one is always reached.
                    let threshold = shared.get();
                    assert!(threshold < want[k - 1].0 .1, "{text} k={k}: threshold {threshold}");
                    assert!(k > 5 || threshold > Score::MIN, "{text} k={k}: the threshold was never raised");
                }
            }
            if text == "的" {
                let top = merge(searchers.iter().enumerate().map(|(i, s)| (i, brute_with(s, &*q, 12, relevance, &stats))).collect(), 12);
                assert!(top.iter().all(|t| t.0 .1 == top[0].0 .1), "the twelve alike threads tie at the top");
            }
        }
    }

    #[test]
    fn ordered_bits_order_scores_as_total_cmp_does() {
        let scores = [Score::MIN, -1.5, -0.0, 0.0, 1e-30, 0.25, 1.0, 7.5, Score::MAX];
        for a in scores {
            assert_eq!(from_ordered_bits(ordered_bits(a)).to_bits(), a.to_bits());
            for b in scores {
                assert_eq!(ordered_bits(a).cmp(&ordered_bits(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }
}
