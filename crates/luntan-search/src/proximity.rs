//! A score bonus for query words that occur near each other.
//!
//! tantivy's sloppy [`PhraseQuery`](tantivy::query::PhraseQuery) would do,
//! but with more than two terms it counts matches in an order that follows
//! each segment's term frequencies, so the same thread scores differently
//! depending on which other threads share its index. This query scores a
//! thread from its own positions alone: the narrowest stretch of the field
//! holding every word, less the words' own lengths, is the gap, and the
//! bonus is `weight / (1 + gap / 4)`. It never decides whether a thread
//! matches the search, only how high it ranks.

use tantivy::postings::{Postings, SegmentPostings};
use tantivy::query::{EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentReader, TantivyError, Term, TERMINATED};

/// A gap of this many positions halves the bonus.
const HALF_AT: f32 = 4.0;

/// One query word in a gram field: its terms at their offsets, and how
/// many positions it spans.
#[derive(Debug, Clone)]
pub struct Word {
    pub terms: Vec<(u32, Term)>,
    pub width: u32,
}

/// Matches threads holding every word in `field`; scores by how close together.
#[derive(Debug, Clone)]
pub struct ProximityQuery {
    field: Field,
    words: Vec<Word>,
    weight: Score,
}

impl ProximityQuery {
    /// `None` unless there are two words or more, each with a term.
    pub fn new(field: Field, words: Vec<Word>, weight: Score) -> Option<ProximityQuery> {
        (words.len() >= 2 && words.iter().all(|w| !w.terms.is_empty())).then_some(ProximityQuery { field, words, weight })
    }
}

impl Query for ProximityQuery {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(ProximityWeight(self.clone())))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for w in &self.words {
            for (_, t) in &w.terms {
                visitor(t, true);
            }
        }
    }
}

struct ProximityWeight(ProximityQuery);

impl ProximityWeight {
    fn proximity_scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Option<ProximityScorer>> {
        let q = &self.0;
        let inverted = reader.inverted_index(q.field)?;
        let mut words = Vec::with_capacity(q.words.len());
        for w in &q.words {
            let mut grams = Vec::with_capacity(w.terms.len());
            for (offset, term) in &w.terms {
                match inverted.read_postings(term, IndexRecordOption::WithFreqsAndPositions)? {
                    Some(p) => grams.push((*offset, p)),
                    None => return Ok(None),
                }
            }
            words.push((grams, w.width));
        }
        Ok(Some(ProximityScorer::new(words, q.weight * boost)))
    }
}

impl Weight for ProximityWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(match self.proximity_scorer(reader, boost)? {
            Some(s) => Box::new(s),
            None => Box::new(EmptyScorer),
        })
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let not_found = || TantivyError::InvalidArgument(format!("document {doc} does not hold every word"));
        let mut s = self.proximity_scorer(reader, 1.0)?.ok_or_else(not_found)?;
        if s.seek(doc) != doc {
            return Err(not_found());
        }
        Ok(Explanation::new_with_string(format!("proximity (gap {})", s.gap), s.score()))
    }
}

struct ProximityScorer {
    /// Per word: its gram postings with offsets, and its width.
    words: Vec<(Vec<(u32, SegmentPostings)>, u32)>,
    weight: Score,
    doc: DocId,
    gap: u32,
    positions: Vec<u32>,
    starts: Vec<Vec<u32>>,
    cursor: Vec<usize>,
}

impl ProximityScorer {
    fn new(words: Vec<(Vec<(u32, SegmentPostings)>, u32)>, weight: Score) -> ProximityScorer {
        let n = words.len();
        let mut s = ProximityScorer { words, weight, doc: 0, gap: 0, positions: Vec::new(), starts: vec![Vec::new(); n], cursor: Vec::new() };
        let first = s.postings().map(DocSet::doc).max().unwrap_or(TERMINATED);
        s.doc = s.settle(first);
        s
    }

    fn postings(&self) -> impl Iterator<Item = &SegmentPostings> {
        self.words.iter().flat_map(|(g, _)| g.iter().map(|(_, p)| p))
    }

    /// The first document at or after `target` where every gram of every
    /// word occurs, and every word as a whole (its grams at their offsets).
    fn settle(&mut self, mut target: DocId) -> DocId {
        loop {
            if target == TERMINATED {
                return TERMINATED;
            }
            let mut agreed = true;
            for (grams, _) in &mut self.words {
                for (_, p) in grams.iter_mut() {
                    let d = if p.doc() < target { p.seek(target) } else { p.doc() };
                    if d > target {
                        target = d;
                        agreed = false;
                    }
                }
            }
            if !agreed {
                continue;
            }
            if let Some(gap) = self.gap_here() {
                self.gap = gap;
                return target;
            }
            target += 1;
        }
    }

    /// The gap of the narrowest stretch holding every word in the current
    /// document, or `None` when a word's grams never line up.
    fn gap_here(&mut self) -> Option<u32> {
        for (k, (grams, _)) in self.words.iter_mut().enumerate() {
            let starts = &mut self.starts[k];
            starts.clear();
            for (i, (offset, p)) in grams.iter_mut().enumerate() {
                p.positions(&mut self.positions);
                if i == 0 {
                    starts.extend(self.positions.iter().filter(|&&pos| pos >= *offset).map(|&pos| pos - *offset));
                } else {
                    let have = &self.positions;
                    starts.retain(|&s| have.binary_search(&(s + *offset)).is_ok());
                }
            }
            if starts.is_empty() {
                return None;
            }
        }
        // The smallest stretch taking one occurrence of each word: walk the
        // sorted start lists together, always moving past the earliest.
        let widths: u32 = self.words.iter().map(|(_, w)| *w).sum();
        self.cursor.clear();
        self.cursor.resize(self.words.len(), 0);
        let mut best = u32::MAX;
        loop {
            let (mut first, mut first_start, mut end) = (0, u32::MAX, 0);
            for (k, starts) in self.starts.iter().enumerate() {
                let s = starts[self.cursor[k]];
                if s < first_start {
                    (first, first_start) = (k, s);
                }
                end = end.max(s + self.words[k].1);
            }
            best = best.min((end - first_start).saturating_sub(widths));
            self.cursor[first] += 1;
            if best == 0 || self.cursor[first] == self.starts[first].len() {
                break;
            }
        }
        Some(best)
    }
}

impl DocSet for ProximityScorer {
    fn advance(&mut self) -> DocId {
        if self.doc != TERMINATED {
            self.doc = self.settle(self.doc + 1);
        }
        self.doc
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc < target {
            self.doc = self.settle(target);
        }
        self.doc
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.postings().map(DocSet::size_hint).min().unwrap_or(0)
    }
}

impl Scorer for ProximityScorer {
    fn score(&mut self) -> Score {
        self.weight / (1.0 + self.gap as Score / HALF_AT)
    }
}
