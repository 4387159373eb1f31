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
//! body lists are skipped. Bounds use BM25's exact per-term maximum, not
//! tantivy's per-block maxima (those are chosen at index time against the
//! segment's own average length, while luntan scores with the statistics
//! of all forums together, so they may undershoot); the result is exactly
//! the unpruned top `k`. Scores are summed in clause order on both paths,
//! so a thread scores the same to the last bit whichever path saw it.

use std::fmt;

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
        let scored = scoring.is_scoring_enabled();
        let option = if scored { IndexRecordOption::WithFreqs } else { IndexRecordOption::Basic };
        let mut parts = Vec::with_capacity(self.clauses.len());
        let mut maxima = Vec::with_capacity(self.clauses.len());
        for c in self.clauses.iter().filter(|c| scored || c.selects) {
            parts.push((TermQuery::new(c.term.clone(), option).weight(scoring)?, c.boost, c.selects));
            // The same BM25 weight TermQuery scores with, so its maximum bounds every score.
            if let EnableScoring::Enabled { statistics_provider, .. } = scoring {
                maxima.push(Bm25Weight::for_terms(statistics_provider, std::slice::from_ref(&c.term))?.boost_by(c.boost).max_score());
            }
        }
        Ok(Box::new(TermSumWeight { parts, maxima }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for c in &self.clauses {
            visitor(&c.term, false);
        }
    }
}

/// A clause's scorer: `(clause, scorer, selects)`.
type ClauseScorer = (usize, Box<dyn Scorer>, bool);

struct TermSumWeight {
    /// `(weight, boost, selects)` in clause order, which is the order scores are added in.
    parts: Vec<(Box<dyn Weight>, Score, bool)>,
    /// Each part's highest possible score; empty when nothing is scored.
    maxima: Vec<Score>,
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
        let parts =
            self.scorers(reader, 1.0)?.into_iter().map(|(clause, scorer, _)| Part { clause, max: self.maxima[clause] * (1.0 + SLACK), scorer }).collect();
        max_score(parts, self.parts.len(), threshold, reader, callback);
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
    /// The most this clause can add, inflated by [`SLACK`].
    max: Score,
    scorer: Box<dyn Scorer>,
}

/// Calls `callback` with every match scoring above the threshold it keeps
/// returning, by MaxScore (see the module doc). Only deletions and matches
/// that cannot pass the threshold are skipped.
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
        let Some(doc) = parts[lead..].iter().map(|p| p.scorer.doc()).min() else { return };
        if doc == TERMINATED {
            return;
        }
        if alive.is_none_or(|a| a.is_alive(doc)) {
            let mut known: Score = 0.0;
            for p in parts[lead..].iter_mut().filter(|p| p.scorer.doc() == doc) {
                let s = p.scorer.score();
                scores[p.clause] = Some(s);
                known += s;
            }
            // The leading lists, highest bound first, while the thread can still pass.
            let mut rest = lead;
            while rest > 0 && known * (1.0 + SLACK) + bound[rest] > threshold {
                rest -= 1;
                let p = &mut parts[rest];
                let at = if p.scorer.doc() < doc { p.scorer.seek(doc) } else { p.scorer.doc() };
                if at == doc {
                    let s = p.scorer.score();
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
        for p in parts[lead..].iter_mut().filter(|p| p.scorer.doc() == doc) {
            p.scorer.advance();
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

    #[test]
    fn max_score_offers_fewer_matches_than_it_holds_and_keeps_the_exact_top_k() {
        let (_dir, catalog) = catalog(1200);
        let (schema, snapshots) = catalog.snapshots(&[]).unwrap();
        let searcher = &snapshots[0].2;
        assert!(searcher.segment_readers().iter().any(|r| r.alive_bitset().is_some()), "no deletions to skip");
        for (text, k) in [("的", 10), ("的", 1), ("很", 10), ("酒店", 5)] {
            let q = single_gram_clause(schema, text, Scope::TitleOrBody).unwrap();
            let weight = q.weight(EnableScoring::enabled_from_searcher(searcher)).unwrap();
            let (mut offered, mut matches) = (0, 0);
            let mut top: Vec<(Score, u32, u32)> = Vec::new();
            for (ord, reader) in searcher.segment_readers().iter().enumerate() {
                matches += weight.count(reader).unwrap();
                // A top k by score alone, its threshold just below the k-th.
                let mut kept: Vec<Score> = top.iter().map(|t| t.0).collect();
                weight
                    .for_each_pruning(Score::MIN, reader, &mut |doc, score| {
                        offered += 1;
                        top.push((score, ord as u32, doc));
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
            let mut want: Vec<Score> = all_scores(searcher, &*q).into_values().collect();
            assert_eq!(want.len() as u32, matches, "{text}: count");
            want.sort_by(|a, b| b.total_cmp(a));
            want.truncate(k);
            let mut got: Vec<Score> = top.iter().map(|t| t.0).collect();
            got.sort_by(|a, b| b.total_cmp(a));
            got.truncate(k);
            // Bit for bit: both paths add the clauses in the same order.
            assert_eq!(got, want, "{text} k={k}");
            assert!(offered * 2 < matches, "{text} k={k}: {offered} of {matches} matches offered");
        }
    }
}
