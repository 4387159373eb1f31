//! One search term as a flat sum of boosted term scores, whose top `k`
//! under relevance is found without scoring every match.
//!
//! A one- or two-character query (`好`, `中国`) is the commonest search
//! and the most expensive: it matches most threads, and the nested query
//! luntan builds for a term (its gram substring required, its jieba words
//! adding score) has to score every one of them to rank ten. When the term
//! is a single gram and its only jieba word is that gram, the nesting is
//! not needed: a thread holding the word holds the gram, so "the gram in
//! the title or body, plus the word's bonus" matches exactly the union of
//! the four term lists and scores their sum. [`TermSum`] is that union.
//!
//! Its [`Weight::for_each_pruning`] is the MaxScore algorithm (Turtle and
//! Flood, 1995): with the clauses ordered by their highest possible score,
//! the cheapest prefix whose maxima add up to no more than the current
//! threshold cannot bring a thread into the top `k` alone, so only the
//! other lists are walked, and the prefix's lists are consulted only for a
//! thread that could still make it. For a common character the title
//! clauses soon outweigh every body clause together and the 150,000-entry
//! body lists are skipped. The walked lists are skipped too, a block of
//! postings at a time, where their blocks cannot reach the threshold. Block
//! bounds are luntan's own ([`Part::block_max`]): tantivy's per-block maxima
//! are chosen at index time against the segment's own average length, while
//! luntan scores with the statistics of all forums together, so they may
//! undershoot; the result is exactly the unpruned top `k`. Scores are summed
//! in clause order on both paths, so a thread scores the same to the last
//! bit whichever path saw it.

use std::fmt;

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::BlockSegmentPostings;
use tantivy::query::{Bm25Weight, EnableScoring, Explanation, Query, Scorer, TermQuery, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Score, SegmentReader, TantivyError, Term, TERMINATED};

/// Bounds are inflated by this much so that rounding in a sum can never
/// make a bound fall below a score it is meant to cover.
const SLACK: Score = 1e-4;

/// One term of the sum.
#[derive(Clone, Debug)]
pub(crate) struct Clause {
    pub term: Term,
    pub boost: Score,
    /// Whether the clause selects threads. A clause that does not (a jieba
    /// word, whose threads the gram clauses already hold) only adds score
    /// and is left out when nothing is scored (counting).
    pub selects: bool,
}

/// Threads holding any clause's term, scored by the sum of the boosted
/// BM25 scores of the clauses they hold.
#[derive(Clone, Debug)]
pub(crate) struct TermSum {
    clauses: Vec<Clause>,
}

impl TermSum {
    pub fn new(clauses: Vec<Clause>) -> TermSum {
        debug_assert!(clauses.iter().any(|c| c.selects), "a sum must select something");
        TermSum { clauses }
    }
}

impl Query for TermSum {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.sum_weight(scoring)?))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for c in &self.clauses {
            visitor(&c.term, false);
        }
    }
}

impl TermSum {
    fn sum_weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<TermSumWeight> {
        let scored = scoring.is_scoring_enabled();
        let option = if scored { IndexRecordOption::WithFreqs } else { IndexRecordOption::Basic };
        let mut parts = Vec::with_capacity(self.clauses.len());
        let mut maxima = Vec::with_capacity(self.clauses.len());
        for c in self.clauses.iter().filter(|c| scored || c.selects) {
            // A field an older index lacks (see `LuntanSchema::is_previous`)
            // matches nothing there; tantivy would index past its fields.
            if !crate::search::has_field(scoring.schema(), c.term.field()) {
                continue;
            }
            // A field with no words in any index matches nothing, and its
            // BM25 average length (0) would make every bound NaN.
            if let EnableScoring::Enabled { statistics_provider, .. } = scoring {
                if statistics_provider.total_num_tokens(c.term.field())? == 0 {
                    continue;
                }
            }
            parts.push((TermQuery::new(c.term.clone(), option).weight(scoring)?, c.boost, c.selects));
            // The BM25 weight TermQuery scores with (boosted as its scorer is), so its maximum bounds every score.
            if let EnableScoring::Enabled { statistics_provider, .. } = scoring {
                let bm25 = Bm25Weight::for_terms(statistics_provider, std::slice::from_ref(&c.term))?.boost_by(c.boost);
                // The average length that weight scores with, computed as it computes it.
                let average = statistics_provider.total_num_tokens(c.term.field())? as Score / statistics_provider.total_num_docs()? as Score;
                maxima.push(Maximum { max: bm25.max_score(), term: c.term.clone(), bm25, average });
            }
        }
        Ok(TermSumWeight { parts, maxima })
    }
}

/// A clause's scorer: `(clause, scorer, selects)`.
type ClauseScorer = (usize, Box<dyn Scorer>, bool);

struct TermSumWeight {
    /// `(weight, boost, selects)` in clause order, which is the order scores are added in.
    parts: Vec<(Box<dyn Weight>, Score, bool)>,
    /// Each part's bounds; empty when nothing is scored.
    maxima: Vec<Maximum>,
}

/// What scores and bounds one clause under MaxScore.
#[derive(Clone)]
struct Maximum {
    term: Term,
    /// The clause's boosted BM25 weight.
    bm25: Bm25Weight,
    /// Its highest possible score (unbounded term frequency).
    max: Score,
    /// The field's average length over every index, as the weight scores with.
    average: Score,
}

impl TermSumWeight {
    /// The clauses' scorers that match anything in `reader`, with their
    /// clause numbers and whether they select.
    fn scorers(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Vec<ClauseScorer>> {
        let mut out = Vec::with_capacity(self.parts.len());
        for (i, (w, b, selects)) in self.parts.iter().enumerate() {
            let s = w.scorer(reader, boost * b)?;
            if s.doc() != TERMINATED {
                out.push((i, s, *selects));
            }
        }
        Ok(out)
    }
}

impl TermSumWeight {
    /// The scoring clauses' postings with their bounds, for [`max_score`].
    fn max_score_parts(&self, reader: &SegmentReader) -> tantivy::Result<Vec<Part>> {
        let mut parts = Vec::with_capacity(self.maxima.len());
        for (clause, m) in self.maxima.iter().enumerate() {
            let field = m.term.field();
            let index = reader.inverted_index(field)?;
            let Some(info) = index.get_term_info(&m.term)? else { continue };
            // As TermWeight reads them, so that a score is the same to the last bit.
            let fieldnorms = reader.fieldnorms_readers().get_field(field)?.unwrap_or_else(|| FieldNormReader::constant(reader.max_doc(), 1));
            let postings = index.read_block_postings_from_terminfo(&info, IndexRecordOption::WithFreqs)?;
            let cursor = TermCursor { postings, at: 0, fieldnorms, bm25: m.bm25.clone() };
            if cursor.doc() == TERMINATED {
                continue;
            }
            // tantivy's BM25 (k1 = 1.2, b = 0.75) is w · tf / (tf + K(len)), K(len) = k1 (1 − b) + k1 b len / average,
            // and a segment's block maxima are chosen with its own average (see Part::block_max).
            let segment_average = index.total_num_tokens() as Score / reader.max_doc() as Score;
            let loosen = 1.2 * (1.0 - 0.75) * (1.0 - segment_average / m.average).abs();
            parts.push(Part { clause, full: m.max, max: m.max * (1.0 + SLACK), loosen, block: None, cursor });
        }
        Ok(parts)
    }
}

/// One term's postings read a block at a time, scored as tantivy's
/// `TermScorer` scores them (which tantivy does not export), with the
/// current block's bounds at hand.
struct TermCursor {
    postings: BlockSegmentPostings,
    /// The current posting's place in the loaded block.
    at: usize,
    fieldnorms: FieldNormReader,
    bm25: Bm25Weight,
}

impl TermCursor {
    fn doc(&self) -> DocId {
        self.postings.docs().get(self.at).copied().unwrap_or(TERMINATED)
    }

    fn advance(&mut self) -> DocId {
        if self.doc() == TERMINATED {
            return TERMINATED;
        }
        self.at += 1;
        if self.at >= self.postings.block_len() {
            self.postings.advance();
            self.at = 0;
        }
        self.doc()
    }

    /// The first document at or after `target`.
    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc() >= target {
            return self.doc();
        }
        self.at = self.postings.seek(target);
        self.doc()
    }

    fn score(&self) -> Score {
        self.bm25.score(self.fieldnorms.fieldnorm_id(self.doc()), self.postings.freq(self.at))
    }

    /// The last document of the current block (TERMINATED past the end).
    fn last_doc_in_block(&self) -> DocId {
        self.postings.docs().last().copied().unwrap_or(TERMINATED)
    }
}

impl Weight for TermSumWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(Box::new(SumScorer::new(self.scorers(reader, boost)?)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) != doc {
            return Err(TantivyError::InvalidArgument(format!("document {doc} does not match")));
        }
        let mut e = Explanation::new("sum of", scorer.score());
        for (w, b, _) in &self.parts {
            if let Ok(part) = w.explain(reader, doc) {
                let mut boosted = Explanation::new_with_string(format!("boost ×{b}"), part.value() * b);
                boosted.add_detail(part);
                e.add_detail(boosted);
            }
        }
        Ok(e)
    }

    fn count(&self, reader: &SegmentReader) -> tantivy::Result<u32> {
        // Two lists and no deletions (title and body gram, the usual count):
        // |A| + |B| − |A ∩ B|, the intersection walked from the shorter list,
        // instead of a union over both.
        if let ([(a, _, _), (b, _, _)], None) = (&self.parts[..], reader.alive_bitset()) {
            let (na, nb) = (a.count(reader)?, b.count(reader)?);
            let (mut short, mut long) = (a.scorer(reader, 1.0)?, b.scorer(reader, 1.0)?);
            if nb < na {
                std::mem::swap(&mut short, &mut long);
            }
            let mut both = 0;
            let mut doc = short.doc();
            while doc != TERMINATED {
                let at = if long.doc() < doc { long.seek(doc) } else { long.doc() };
                if at == TERMINATED {
                    break;
                }
                if at == doc {
                    both += 1;
                    doc = short.advance();
                } else {
                    doc = short.seek(at);
                }
            }
            return Ok(na + nb - both);
        }
        let mut scorer = self.scorer(reader, 1.0)?;
        Ok(match reader.alive_bitset() {
            Some(alive) => scorer.count(alive),
            None => scorer.count_including_deleted(),
        })
    }

    fn for_each_pruning(&self, threshold: Score, reader: &SegmentReader, callback: &mut dyn FnMut(DocId, Score) -> Score) -> tantivy::Result<()> {
        if self.maxima.len() != self.parts.len() {
            // Not scoring: no bound to prune with.
            return unpruned(self.scorer(reader, 1.0)?, threshold, reader, callback);
        }
        max_score(self.max_score_parts(reader)?, self.parts.len(), threshold, reader, callback);
        Ok(())
    }
}

/// Every match above `threshold`, each scored.
fn unpruned(mut scorer: Box<dyn Scorer>, mut threshold: Score, reader: &SegmentReader, callback: &mut dyn FnMut(DocId, Score) -> Score) -> tantivy::Result<()> {
    let alive = reader.alive_bitset();
    let mut doc = scorer.doc();
    while doc != TERMINATED {
        if alive.is_none_or(|a| a.is_alive(doc)) {
            let score = scorer.score();
            if score > threshold {
                threshold = threshold.max(callback(doc, score));
            }
        }
        doc = scorer.advance();
    }
    Ok(())
}

struct Part {
    clause: usize,
    /// The clause's BM25 weight's own maximum.
    full: Score,
    /// The most this clause can add, inflated by [`SLACK`].
    max: Score,
    /// How far this segment's block maxima can be off ([`Part::block_max`]).
    loosen: Score,
    /// The current block's last document and its bound, once asked.
    block: Option<(DocId, Score)>,
    cursor: TermCursor,
}

impl Part {
    /// The most this clause can add for any document of its current block
    /// of postings, inflated by [`SLACK`].
    ///
    /// tantivy stores, per block of 128 postings, the `(tf, len)` that
    /// maximises BM25 with the segment's own average length, and scores that
    /// pair with the query's weight: with luntan's average over all forums
    /// another posting of the block may score higher. But the pair minimises
    /// `K_seg(len) / tf`, and `K(len) = c (1 − ρ) + ρ K_seg(len)` with
    /// `c = k1 (1 − b)` and `ρ` the segment's average over luntan's, so every
    /// posting has `K(len) / tf ≥ q* − c |1 − ρ|`, where `q* = K(len*) / tf*`
    /// is read back from the pair's score `w / (1 + q*)`. Hence the bound
    /// `w / (1 + q* − c |1 − ρ|)`, exact whatever the averages; tantivy's own
    /// maximum where that is not positive or the block has none.
    fn block_max(&mut self) -> Score {
        let last = self.cursor.last_doc_in_block();
        match self.block {
            Some((at, bound)) if at == last => bound,
            _ => {
                let c = &mut self.cursor;
                let pair = c.postings.block_max_score(&c.fieldnorms, &c.bm25);
                let low = self.full / pair - 1.0 - self.loosen;
                let bound = if pair > 0.0 && low > 0.0 { (self.full / (1.0 + low) * (1.0 + SLACK)).min(self.max) } else { self.max };
                self.block = Some((last, bound));
                bound
            }
        }
    }
}

/// Calls `callback` with every match scoring above the threshold it keeps
/// returning, by MaxScore (see the module doc). Only deletions and matches
/// that cannot pass the threshold are skipped.
///
/// The lists walked are also skipped a block at a time: where the blocks
/// the walked lists are in cannot reach the threshold together with the
/// other lists' maxima, none of their documents up to the first block's
/// end can, and every walked list moves past it unscored. A title holds a
/// character once or twice, so most blocks of the title lists score well
/// below BM25's maximum for an unbounded frequency.
fn max_score(mut parts: Vec<Part>, clauses: usize, mut threshold: Score, reader: &SegmentReader, callback: &mut dyn FnMut(DocId, Score) -> Score) {
    let alive = reader.alive_bitset();
    parts.sort_by(|a, b| a.max.total_cmp(&b.max));
    // bound[i]: the most parts[..i] can add together.
    let mut bound = Vec::with_capacity(parts.len() + 1);
    bound.push(0.0 as Score);
    for p in &parts {
        bound.push(bound[bound.len() - 1] + p.max);
    }
    let mut scores: Vec<Option<Score>> = vec![None; clauses];
    loop {
        // parts[..lead] cannot reach the threshold together: a thread only
        // they hold is out, so only the lists from `lead` on are walked.
        let lead = bound.iter().skip(1).take_while(|&&b| b <= threshold).count();
        let Some(doc) = parts[lead..].iter().map(|p| p.cursor.doc()).min() else { return };
        if doc == TERMINATED {
            return;
        }
        // Up to `upto`, every walked list's documents lie in its current block.
        let upto = parts[lead..].iter().filter(|p| p.cursor.doc() != TERMINATED).map(|p| p.cursor.last_doc_in_block()).min().unwrap_or(TERMINATED);
        let (mut region, mut here) = (bound[lead], bound[lead]);
        for p in parts[lead..].iter_mut().filter(|p| p.cursor.doc() <= upto) {
            let m = p.block_max();
            region += m;
            if p.cursor.doc() == doc {
                here += m;
            }
        }
        if region <= threshold {
            if upto == TERMINATED {
                return;
            }
            for p in parts[lead..].iter_mut().filter(|p| p.cursor.doc() <= upto) {
                p.cursor.seek(upto + 1);
            }
            continue;
        }
        if here > threshold && alive.is_none_or(|a| a.is_alive(doc)) {
            let mut known: Score = 0.0;
            for p in parts[lead..].iter_mut().filter(|p| p.cursor.doc() == doc) {
                let s = p.cursor.score();
                scores[p.clause] = Some(s);
                known += s;
            }
            // The leading lists, highest bound first, while the thread can still pass.
            let mut rest = lead;
            while rest > 0 && known * (1.0 + SLACK) + bound[rest] > threshold {
                rest -= 1;
                let p = &mut parts[rest];
                let at = if p.cursor.doc() < doc { p.cursor.seek(doc) } else { p.cursor.doc() };
                if at == doc {
                    let s = p.cursor.score();
                    scores[p.clause] = Some(s);
                    known += s;
                }
            }
            if rest == 0 && known * (1.0 + SLACK) > threshold {
                // The exact score, added in clause order as SumScorer adds it.
                let score = scores.iter().flatten().fold(0.0 as Score, |acc, s| acc + s);
                if score > threshold {
                    threshold = threshold.max(callback(doc, score));
                }
            }
            scores.iter_mut().for_each(|s| *s = None);
        }
        for p in parts[lead..].iter_mut().filter(|p| p.cursor.doc() == doc) {
            p.cursor.advance();
        }
    }
}

/// The union of the selecting clauses' lists, scoring the sum of every
/// clause at the current document, added in clause order. Clauses that
/// only add score (their threads are a subset of the others') are not
/// walked: each is moved to a document only when that document is scored,
/// which inside an intersection is a small part of the union.
pub(crate) struct SumScorer {
    /// `(clause, scorer, selects)` in clause order.
    parts: Vec<ClauseScorer>,
    doc: DocId,
}

impl SumScorer {
    fn new(parts: Vec<ClauseScorer>) -> SumScorer {
        let doc = parts.iter().filter(|p| p.2).map(|p| p.1.doc()).min().unwrap_or(TERMINATED);
        SumScorer { parts, doc }
    }
}

impl fmt::Debug for SumScorer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SumScorer").field("parts", &self.parts.len()).field("doc", &self.doc).finish()
    }
}

impl DocSet for SumScorer {
    fn advance(&mut self) -> DocId {
        let mut next = TERMINATED;
        for (_, s, _) in self.parts.iter_mut().filter(|p| p.2) {
            let d = if s.doc() == self.doc { s.advance() } else { s.doc() };
            next = next.min(d);
        }
        self.doc = next;
        next
    }

    fn seek(&mut self, target: DocId) -> DocId {
        let mut next = TERMINATED;
        for (_, s, _) in self.parts.iter_mut().filter(|p| p.2) {
            let d = if s.doc() < target { s.seek(target) } else { s.doc() };
            next = next.min(d);
        }
        self.doc = next;
        next
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.parts.iter().filter(|p| p.2).map(|p| p.1.size_hint()).max().unwrap_or(0)
    }

    fn cost(&self) -> u64 {
        self.parts.iter().filter(|p| p.2).map(|p| p.1.cost()).sum()
    }
}

impl Scorer for SumScorer {
    fn score(&mut self) -> Score {
        let doc = self.doc;
        let mut total: Score = 0.0;
        for (_, s, _) in &mut self.parts {
            if s.doc() < doc {
                s.seek(doc);
            }
            if s.doc() == doc {
                total += s.score();
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use tantivy::collector::TopDocs;

    use super::*;
    use crate::query::Scope;
    use crate::search::{nested_term_clause, single_gram_clause, Catalog};

    /// A catalog over one index of `n` synthetic threads, written in several segments.
    fn catalog(n: usize) -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        let docs = crate::testutil::synthetic(n);
        let mut w = crate::indexer::SiteWriter::open(&dir.path().join("s.index"), &crate::indexer::IndexOptions { writer_mb: 40, commit_every: 150 }).unwrap();
        for d in &docs {
            w.add(d).unwrap();
        }
        w.finish().unwrap();
        // Every fifth thread indexed again: its first copy stays behind as a deletion.
        let mut w = crate::indexer::SiteWriter::open(&dir.path().join("s.index"), &crate::indexer::IndexOptions { writer_mb: 40, commit_every: 150 }).unwrap();
        for d in docs.iter().step_by(5) {
            w.add(d).unwrap();
        }
        w.finish().unwrap();
        let c = Catalog::open(dir.path()).unwrap();
        (dir, c)
    }

    /// Every match of `q` with its unpruned score.
    fn all_scores(searcher: &tantivy::Searcher, q: &dyn Query) -> HashMap<tantivy::DocAddress, Score> {
        searcher.search(q, &TopDocs::with_limit(1_000_000).order_by_score()).unwrap().into_iter().map(|(s, a)| (a, s)).collect()
    }

    #[test]
    fn a_single_gram_term_matches_and_scores_as_the_nested_query_it_replaces() {
        let (_dir, catalog) = catalog(600);
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searcher = &snapshots[0].2;
        for text in ["的", "好", "酒店", "房间", "服务", "很"] {
            for scope in [Scope::TitleOrBody, Scope::Title] {
                let flat = single_gram_clause(schema, text, scope).unwrap_or_else(|| panic!("{text} is one gram"));
                let nested = nested_term_clause(schema, text, scope).unwrap();
                let (got, want) = (all_scores(searcher, &*flat), all_scores(searcher, &*nested));
                assert!(!want.is_empty(), "{text} {scope:?} matches nothing");
                assert_eq!(got.len(), want.len(), "{text} {scope:?}");
                // Counting without scores reads only the gram lists.
                let count = |q: &dyn Query| searcher.search(q, &tantivy::collector::Count).unwrap();
                assert_eq!(count(&*flat), want.len(), "{text} {scope:?}: count");
                assert_eq!(count(&*nested), want.len(), "{text} {scope:?}: count");
                for (addr, w) in &want {
                    let g = got.get(addr).unwrap_or_else(|| panic!("{text} {scope:?}: {addr:?} missing"));
                    assert!((g - w).abs() <= w.abs() * 1e-5, "{text} {scope:?} {addr:?}: {g} vs {w}");
                }
            }
        }
        // More than one gram, or a jieba word other than the gram: not flattened.
        for text in ["酒店房间", "iphone", "的的确确"] {
            assert!(single_gram_clause(schema, text, Scope::TitleOrBody).is_none(), "{text}");
        }
    }

    /// The top `k` scores by [`Weight::for_each_pruning`] over every segment,
    /// each segment's threshold just below its k-th, and how many matches
    /// were offered.
    fn pruned_top(searcher: &tantivy::Searcher, q: &dyn Query, k: usize) -> (Vec<Score>, usize) {
        let weight = q.weight(EnableScoring::enabled_from_searcher(searcher)).unwrap();
        let mut offered = 0;
        let mut top: Vec<Score> = Vec::new();
        for reader in searcher.segment_readers() {
            let mut kept: Vec<Score> = Vec::new();
            weight
                .for_each_pruning(Score::MIN, reader, &mut |_, score| {
                    offered += 1;
                    top.push(score);
                    kept.push(score);
                    kept.sort_by(|a, b| b.total_cmp(a));
                    kept.truncate(k);
                    if kept.len() == k {
                        kept[k - 1].next_down()
                    } else {
                        Score::MIN
                    }
                })
                .unwrap();
        }
        top.sort_by(|a, b| b.total_cmp(a));
        top.truncate(k);
        (top, offered)
    }

    /// Every match's score, the top `k` of them.
    fn unpruned_top(searcher: &tantivy::Searcher, q: &dyn Query, k: usize) -> Vec<Score> {
        let mut want: Vec<Score> = all_scores(searcher, q).into_values().collect();
        want.sort_by(|a, b| b.total_cmp(a));
        want.truncate(k);
        want
    }

    #[test]
    fn max_score_offers_fewer_matches_than_it_holds_and_keeps_the_exact_top_k() {
        let (_dir, catalog) = catalog(1200);
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searcher = &snapshots[0].2;
        assert!(searcher.segment_readers().iter().any(|r| r.alive_bitset().is_some()), "no deletions to skip");
        for (text, k) in [("的", 10), ("的", 1), ("很", 10), ("酒店", 5)] {
            let q = single_gram_clause(schema, text, Scope::TitleOrBody).unwrap();
            let weight = q.weight(EnableScoring::enabled_from_searcher(searcher)).unwrap();
            let matches: u32 = searcher.segment_readers().iter().map(|r| weight.count(r).unwrap()).sum();
            assert_eq!(all_scores(searcher, &*q).len() as u32, matches, "{text}: count");
            let (got, offered) = pruned_top(searcher, &*q, k);
            // Bit for bit: both paths add the clauses in the same order.
            assert_eq!(got, unpruned_top(searcher, &*q, k), "{text} k={k}");
            assert!(offered * 2 < matches as usize, "{text} k={k}: {offered} of {matches} matches offered");
        }
    }

    /// One index of two segments whose titles differ wildly in length: in
    /// the first, 的 alone or thrice in a longer title; in the second, once
    /// in a long one. The first segment's average title is far shorter than
    /// the index's, so the posting tantivy keeps as its blocks' best (a
    /// one-character title) is not the best with the index's average (the
    /// title holding 的 three times).
    fn skewed() -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::indexer::IndexOptions { writer_mb: 40, commit_every: usize::MAX };
        let path = dir.path().join("s.index");
        let body = "房间很大，早餐也不错，服务的态度很好";
        let mut w = crate::indexer::SiteWriter::open(&path, &opts).unwrap();
        for i in 0..300 {
            let title = if i % 3 == 0 { "的的的房间很大早餐不错" } else { "的" };
            w.add(&crate::testutil::thread("s", &format!("a{i}"), title, &[("x", body)], None)).unwrap();
        }
        w.finish().unwrap();
        let mut w = crate::indexer::SiteWriter::open(&path, &opts).unwrap();
        for i in 0..600 {
            let title = "这家酒店的房间很大，早餐也不错，服务态度很好，下次还会再来住一次吧";
            w.add(&crate::testutil::thread("s", &format!("b{i}"), title, &[("x", body)], None)).unwrap();
        }
        w.finish().unwrap();
        let c = Catalog::open(dir.path()).unwrap();
        (dir, c)
    }

    #[test]
    fn block_bounds_cover_every_score_of_their_block_where_tantivys_do_not() {
        let (_dir, catalog) = skewed();
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searcher = &snapshots[0].2;
        assert!(searcher.segment_readers().len() >= 2, "one segment only");
        let q = single_gram_clause(schema, "的", Scope::TitleOrBody).unwrap();
        let sum = q.downcast_ref::<TermSum>().unwrap();
        let weight = sum.sum_weight(EnableScoring::enabled_from_searcher(searcher)).unwrap();
        let (mut checked, mut undershot, mut below_max) = (0, 0, 0);
        for reader in searcher.segment_readers() {
            for mut p in weight.max_score_parts(reader).unwrap() {
                while p.cursor.doc() != TERMINATED {
                    let (score, bound) = (p.cursor.score(), p.block_max());
                    assert!(score <= bound, "clause {} doc {}: {score} above its block's bound {bound}", p.clause, p.cursor.doc());
                    undershot += usize::from(score > p.cursor.postings.block_max_score(&p.cursor.fieldnorms, &p.cursor.bm25));
                    below_max += usize::from(bound < p.max);
                    checked += 1;
                    p.cursor.advance();
                }
            }
        }
        assert!(undershot > 0, "tantivy's block maxima hold here: the test shows nothing");
        assert!(below_max * 2 > checked, "the bounds are hardly tighter than the maximum: {below_max} of {checked}");
        for k in [1, 3, 10, 100] {
            assert_eq!(pruned_top(searcher, &*q, k).0, unpruned_top(searcher, &*q, k), "k={k}");
        }
    }
}
