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

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::Weight;
use tantivy::{DateTime, DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

use crate::schema::TIEBREAK;
use crate::search::SortOrder;

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

/// Collects the top `k` (`k` ≥ 1) matches by [`SortKey`].
pub(crate) struct TopKeyed {
    pub k: usize,
    pub sort: SortOrder,
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
            weight.for_each_pruning(Score::MIN, reader, &mut |doc, score| {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    child.collect(doc, score);
                }
                child.threshold()
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
    use crate::search::{compile, Catalog};
    use tantivy::collector::TopDocs;

    /// The brute force: every match keyed, sorted, cut at k.
    fn brute(searcher: &tantivy::Searcher, q: &dyn tantivy::query::Query, k: usize, sort: SortOrder) -> TopList {
        let all = TopDocs::with_limit(100_000).tweak_score(move |seg: &SegmentReader| {
            let posted = seg.fast_fields().date("posted").ok();
            let tiebreak = seg.fast_fields().u64(TIEBREAK).ok();
            move |doc, score: Score| -> SortKey {
                let ts = posted.as_ref().and_then(|c| c.first(doc)).map(|d| d.into_timestamp_secs());
                (date_key(sort, ts), score, ts.unwrap_or(i64::MIN), u64::MAX - tiebreak.as_ref().and_then(|c| c.first(doc)).unwrap_or(0))
            }
        });
        let mut got: Vec<Entry> = searcher.search(q, &all).unwrap().into_iter().map(|(key, addr)| Entry { key, addr }).collect();
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
                    let mut got = searcher.search(&*q, &TopKeyed { k, sort }).unwrap();
                    got.sort_unstable_by(|a, b| Entry { key: b.0, addr: b.1 }.cmp(&Entry { key: a.0, addr: a.1 }));
                    let want = brute(searcher, &*q, k, sort);
                    assert!(!want.is_empty(), "{text}");
                    assert_eq!(got, want, "{text} {sort:?} k={k}");
                }
            }
        }
    }
}
