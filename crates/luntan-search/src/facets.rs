//! The matching threads counted by forum, board, author, year and month:
//! over every match of a search (the same compiled query, date range and
//! forums as [`Catalog::search`]), not only the page shown, each forum's
//! index counted on the thread pool and the counts summed.
//!
//! Where each count comes from, per segment of an index:
//! - forum: the match count of its index;
//! - board: the `board` field's terms, each term's postings giving its
//!   documents' board (the field is indexed whole, not a fast field), so no
//!   stored document is read;
//! - year and month: the `posted` fast field (the first post's time);
//! - author: the stored `authors` values (the indexed field holds grams, not
//!   names), the one count that reads each match's stored document, in
//!   document order so each compressed block is read once. A stored
//!   document is the whole thread, so this is nearly all the cost (a common
//!   word over 50,000 threads: 3.4 searches/s with every author read,
//!   against 2,000 without facets); past [`AUTHOR_SAMPLE`] matches an even
//!   sample of them is read (every n-th in each segment's document order,
//!   n from a first count of the matches), and [`Facets::authors_counted`]
//!   says how many threads the author counts are of.
//!
//! A thread counts once per distinct author name, as written (the index
//! keeps each name once per thread).

use std::collections::{BTreeMap, HashMap};

use luntan_core::ids::SiteId;
use rayon::prelude::*;
use serde::Serialize;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DocId, DocSet, Score, SegmentOrdinal, SegmentReader, TantivyDocument, TERMINATED};

use crate::query::Query;
use crate::search::{Catalog, SearchError, SearchOptions};

/// Most matches of a search whose authors are read; past it, every n-th
/// match in each segment's document order, so the sample spans them all.
pub const AUTHOR_SAMPLE: usize = 2_000;

/// One value of a facet and the matching threads that have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FacetValue {
    /// Site id, board id (as the index stores it), author name, `YYYY` or `YYYY-MM`.
    pub value: String,
    /// The forum's or board's display name, where one is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For a board: the forum it belongs to (board ids are per forum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<SiteId>,
    pub count: u64,
}

/// A facet's values, most threads first (ties by value), at most the `top`
/// asked for, and how many other values were left off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facet {
    pub values: Vec<FacetValue>,
    pub more: usize,
}

/// Counts of the matching threads by forum, board, author, year and month.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facets {
    pub forum: Facet,
    pub board: Facet,
    pub author: Facet,
    pub year: Facet,
    pub month: Facet,
    /// Matching threads with no first-post time (in no year or month).
    pub undated: u64,
    /// The matching threads the author counts are of: every match, unless
    /// there were more than [`AUTHOR_SAMPLE`], then an even sample.
    pub authors_counted: u64,
}

/// One index's counts.
#[derive(Debug, Default)]
struct Counts {
    matches: u64,
    forum: Option<String>,
    boards: HashMap<String, u64>,
    authors: HashMap<String, u64>,
    authors_counted: u64,
    /// `year * 12 + month0`.
    months: HashMap<i32, u64>,
    undated: u64,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.matches += other.matches;
        self.forum = self.forum.take().or(other.forum);
        for (k, n) in other.boards {
            *self.boards.entry(k).or_default() += n;
        }
        for (k, n) in other.authors {
            *self.authors.entry(k).or_default() += n;
        }
        self.authors_counted += other.authors_counted;
        for (k, n) in other.months {
            *self.months.entry(k).or_default() += n;
        }
        self.undated += other.undated;
    }
}

struct FacetCollector {
    board: Field,
    authors: Field,
    forum: Field,
    /// Authors are read from every `stride`-th match.
    stride: usize,
}

struct SegmentFacets {
    reader: SegmentReader,
    board: Field,
    authors: Field,
    forum: Field,
    stride: usize,
    docs: Vec<DocId>,
}

impl Collector for FacetCollector {
    type Fruit = Counts;
    type Child = SegmentFacets;

    fn for_segment(&self, _ord: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<SegmentFacets> {
        Ok(SegmentFacets { reader: reader.clone(), board: self.board, authors: self.authors, forum: self.forum, stride: self.stride, docs: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<tantivy::Result<Counts>>) -> tantivy::Result<Counts> {
        let mut out = Counts::default();
        for c in fruits {
            out.add(c?);
        }
        Ok(out)
    }
}

impl SegmentCollector for SegmentFacets {
    type Fruit = tantivy::Result<Counts>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        self.docs.push(doc);
    }

    fn harvest(self) -> tantivy::Result<Counts> {
        let mut c = Counts { matches: self.docs.len() as u64, ..Counts::default() };
        if self.docs.is_empty() {
            return Ok(c);
        }
        // Board: each term's documents, for the matches among them.
        let mut board_of: Vec<u32> = vec![u32::MAX; self.reader.max_doc() as usize];
        let mut board_names: Vec<String> = Vec::new();
        let inverted = self.reader.inverted_index(self.board)?;
        let mut terms = inverted.terms().stream()?;
        while terms.advance() {
            let ord = board_names.len() as u32;
            board_names.push(String::from_utf8_lossy(terms.key()).into_owned());
            let mut postings = inverted.read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
            let mut d = postings.doc();
            while d != TERMINATED {
                board_of[d as usize] = ord;
                d = postings.advance();
            }
        }
        let mut per_board = vec![0u64; board_names.len()];
        // Year and month from the first post's time.
        let posted = self.reader.fast_fields().date("posted").ok();
        let mut last_day: Option<(i64, i32)> = None;
        for &doc in &self.docs {
            if let Some(&ord) = board_of.get(doc as usize).filter(|&&o| o != u32::MAX) {
                per_board[ord as usize] += 1;
            }
            match posted.as_ref().and_then(|col| col.first(doc)) {
                None => c.undated += 1,
                Some(t) => {
                    let secs = t.into_timestamp_secs();
                    let day = secs.div_euclid(86_400);
                    let key = match last_day {
                        Some((d, k)) if d == day => k,
                        _ => {
                            let k = time::OffsetDateTime::from_unix_timestamp(secs).map_or(i32::MIN, |t| t.year() * 12 + i32::from(t.month() as u8) - 1);
                            last_day = Some((day, k));
                            k
                        }
                    };
                    if key == i32::MIN {
                        c.undated += 1;
                    } else {
                        *c.months.entry(key).or_default() += 1;
                    }
                }
            }
        }
        for (name, n) in board_names.into_iter().zip(per_board) {
            if n > 0 {
                c.boards.insert(name, n);
            }
        }
        // Authors (and the forum's name) from the stored documents, in
        // document order: a block is decompressed once for all its matches.
        let store = self.reader.get_store_reader(2)?;
        for &doc in self.docs.iter().step_by(self.stride.max(1)) {
            c.authors_counted += 1;
            let d: TantivyDocument = store.get(doc)?;
            if c.forum.is_none() {
                c.forum = d.get_first(self.forum).and_then(|v| v.as_str()).filter(|s| !s.is_empty()).map(str::to_string);
            }
            for a in d.get_all(self.authors).filter_map(|v| v.as_str()) {
                *c.authors.entry(a.to_string()).or_default() += 1;
            }
        }
        Ok(c)
    }
}

/// The `top` values of `counts` by count (ties by value) and how many were left off.
fn top_of(counts: impl IntoIterator<Item = (FacetValue, u64)>, top: usize) -> Facet {
    let mut all: Vec<FacetValue> = counts.into_iter().map(|(v, n)| FacetValue { count: n, ..v }).collect();
    all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.site.cmp(&b.site)).then_with(|| a.value.cmp(&b.value)));
    let more = all.len().saturating_sub(top);
    all.truncate(top);
    Facet { values: all, more }
}

fn plain(value: String) -> FacetValue {
    FacetValue { value, name: None, site: None, count: 0 }
}

impl Catalog {
    /// Every open index's site id and its forum's display name (as the
    /// first of its documents stores it; empty for an empty index), in site order.
    pub fn forum_names(&self) -> Vec<(SiteId, String)> {
        let Ok((schema, snapshots)) = self.snapshots(&[]) else { return Vec::new() };
        snapshots
            .into_iter()
            .map(|(site, _, searcher)| {
                let name = searcher.segment_readers().iter().enumerate().find_map(|(ord, seg)| {
                    let doc = (0..seg.max_doc()).find(|&d| seg.alive_bitset().is_none_or(|a| a.is_alive(d)))?;
                    let d: TantivyDocument = searcher.doc(tantivy::DocAddress::new(ord as u32, doc)).ok()?;
                    d.get_first(schema.forum).and_then(|v| v.as_str()).map(str::to_string)
                });
                (site, name.unwrap_or_default())
            })
            .collect()
    }

    /// The threads `query` matches under `opts` (its date range and forums;
    /// paging and order do not matter) counted by forum, board, author,
    /// year and month, at most `top` values per facet.
    pub fn facets(&self, query: &Query, opts: &SearchOptions, top: usize) -> Result<Facets, SearchError> {
        let (tq, snapshots) = self.compiled(query, opts)?;
        let s = self.schema();
        // A first count of the matches sets the authors' sample; it costs
        // what a search without facets does.
        let total: usize = snapshots
            .par_iter()
            .map(|(_, path, searcher)| searcher.search(&*tq, &tantivy::collector::Count).map_err(|source| SearchError::Search { path: path.clone(), source }))
            .sum::<Result<usize, SearchError>>()?;
        let stride = total.div_ceil(AUTHOR_SAMPLE).max(1);
        let collector = FacetCollector { board: s.board, authors: s.authors, forum: s.forum, stride };
        let per_index: Vec<(SiteId, Counts)> = snapshots
            .par_iter()
            .map(|(name, path, searcher)| {
                let counts = searcher.search(&*tq, &collector).map_err(|source| SearchError::Search { path: path.clone(), source })?;
                Ok((name.clone(), counts))
            })
            .collect::<Result<_, SearchError>>()?;

        let mut facets = Facets::default();
        let mut forums = Vec::new();
        let mut boards = Vec::new();
        let mut all = Counts::default();
        for (site, mut c) in per_index {
            if c.matches > 0 {
                forums.push((FacetValue { value: site.to_string(), name: c.forum.clone(), site: None, count: 0 }, c.matches));
            }
            for (board, n) in c.boards.drain() {
                boards.push((FacetValue { value: board, name: None, site: Some(site.clone()), count: 0 }, n));
            }
            all.add(c);
        }
        facets.forum = top_of(forums, top);
        facets.board = top_of(boards, top);
        facets.author = top_of(all.authors.into_iter().map(|(a, n)| (plain(a), n)), top);
        let mut years: BTreeMap<i32, u64> = BTreeMap::new();
        for (&k, &n) in &all.months {
            *years.entry(k.div_euclid(12)).or_default() += n;
        }
        facets.year = top_of(years.into_iter().map(|(y, n)| (plain(format!("{y:04}")), n)), top);
        facets.month = top_of(all.months.into_iter().map(|(k, n)| (plain(format!("{:04}-{:02}", k.div_euclid(12), k.rem_euclid(12) + 1)), n)), top);
        facets.undated = all.undated;
        facets.authors_counted = all.authors_counted;
        Ok(facets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{contains, synthetic, write_index};

    #[test]
    fn counts_are_the_brute_force_counts_over_every_match() {
        let dir = tempfile::tempdir().unwrap();
        let docs = synthetic(300);
        for site in ["s0", "s1", "s2"] {
            let part: Vec<&luntan_core::ThreadDoc> = docs.iter().filter(|d| d.site == site).collect();
            write_index(&dir.path().join(format!("{site}.index")), &part);
        }
        let catalog = Catalog::open(dir.path()).unwrap();
        let q = Query::parse("书 OR 酒店").unwrap();
        let day = |s: &str| time::Date::parse(s, &time::macros::format_description!("[year]-[month]-[day]")).unwrap();
        for opts in [
            SearchOptions::default(),
            SearchOptions { sites: vec!["s1".parse().unwrap(), "s2".parse().unwrap()], ..SearchOptions::default() },
            SearchOptions { since: Some(day("2020-02-01")), until: Some(day("2020-06-30")), ..SearchOptions::default() },
        ] {
            let f = catalog.facets(&q, &opts, 1000).unwrap();
            let posted = |d: &luntan_core::ThreadDoc| d.posted.clone().or_else(|| d.posts.iter().find_map(|p| p.time.clone()));
            let matching: Vec<&luntan_core::ThreadDoc> = docs
                .iter()
                .filter(|d| contains(d, "书", false) || contains(d, "酒店", false))
                .filter(|d| opts.sites.is_empty() || opts.sites.contains(&d.site))
                .filter(|d| match (opts.since, posted(d)) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(_), Some(p)) => ("2020-02-01".to_string()..="2020-06-30~".to_string()).contains(&p),
                })
                .collect();
            assert!(matching.len() > 20);
            let mut want_forum: BTreeMap<String, u64> = BTreeMap::new();
            let mut want_board: BTreeMap<(String, String), u64> = BTreeMap::new();
            let mut want_author: BTreeMap<String, u64> = BTreeMap::new();
            let mut want_month: BTreeMap<String, u64> = BTreeMap::new();
            let mut want_year: BTreeMap<String, u64> = BTreeMap::new();
            let mut undated = 0;
            for d in &matching {
                *want_forum.entry(d.site.to_string()).or_default() += 1;
                *want_board.entry((d.site.to_string(), d.board.to_string())).or_default() += 1;
                let mut seen: Vec<&str> = Vec::new();
                for p in &d.posts {
                    let a = p.author.trim();
                    if !a.is_empty() && !seen.contains(&a) {
                        seen.push(a);
                        *want_author.entry(a.to_string()).or_default() += 1;
                    }
                }
                match posted(d) {
                    Some(p) => {
                        *want_month.entry(p[..7].to_string()).or_default() += 1;
                        *want_year.entry(p[..4].to_string()).or_default() += 1;
                    }
                    None => undated += 1,
                }
            }
            let flat = |f: &Facet| f.values.iter().map(|v| (v.value.clone(), v.count)).collect::<BTreeMap<_, _>>();
            assert_eq!(flat(&f.forum), want_forum);
            assert_eq!(f.authors_counted, matching.len() as u64, "few matches: every author read");
            let boards: BTreeMap<(String, String), u64> =
                f.board.values.iter().map(|v| ((v.site.clone().unwrap().to_string(), v.value.clone()), v.count)).collect();
            assert_eq!(boards, want_board);
            assert_eq!(flat(&f.author), want_author);
            assert_eq!(flat(&f.month), want_month);
            assert_eq!(flat(&f.year), want_year);
            assert_eq!(f.undated, undated);
            assert!(f.forum.values.iter().all(|v| v.name.is_some()));
        }
        // The top values, most threads first, the rest counted as left off.
        let all = catalog.facets(&q, &SearchOptions::default(), 1000).unwrap();
        let top = catalog.facets(&q, &SearchOptions::default(), 3).unwrap();
        assert_eq!(top.author.values.len(), 3);
        assert_eq!(top.author.more, all.author.values.len() - 3);
        assert_eq!(top.author.values[..], all.author.values[..3]);
        assert!(all.author.values.windows(2).all(|w| w[0].count >= w[1].count));
    }
}

#[cfg(test)]
mod sample {
    use super::*;
    use crate::testutil::synthetic;
    use crate::{IndexOptions, SiteWriter};

    #[test]
    fn past_the_sample_authors_are_read_from_an_even_sample_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let docs = synthetic(2_500);
        assert!(docs.len() > AUTHOR_SAMPLE);
        let mut w = SiteWriter::open(&dir.path().join("all.index"), &IndexOptions { writer_mb: 40, commit_every: 10_000 }).unwrap();
        for d in &docs {
            w.add(d).unwrap();
        }
        w.finish().unwrap();
        let catalog = Catalog::open(dir.path()).unwrap();
        let f = catalog.facets(&Query::parse("site:s0 OR site:s1 OR site:s2").unwrap(), &SearchOptions::default(), 1000).unwrap();
        assert_eq!(f.forum.values.iter().map(|v| v.count).sum::<u64>(), 2_500);
        // Past 2,000 matches, every second (2,500 / 2,000 rounded up) of each
        // segment's, from its first on.
        let index = tantivy::Index::open_in_dir(dir.path().join("all.index")).unwrap();
        let sizes: Vec<usize> = index.searchable_segment_metas().unwrap().iter().map(|m| m.num_docs() as usize).collect();
        let want: usize = sizes.iter().map(|&n| n.div_ceil(2)).sum();
        assert_eq!(f.authors_counted, want as u64, "{sizes:?}");
        assert!(f.authors_counted < 2_500);
        let most = f.author.values.first().map_or(0, |v| v.count);
        assert!(most > 0 && most <= f.authors_counted, "{most}");
        // The other facets still count every match.
        assert_eq!(f.year.values.iter().map(|v| v.count).sum::<u64>() + f.undated, 2_500);
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use crate::testutil::{synthetic, write_index};

    /// What facets cost beside the search they count for, on 30,000
    /// synthetic threads in three indexes (`cargo test -p luntan-search
    /// --release facets::timing -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn facets_beside_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let docs = synthetic(30_000);
        for site in ["s0", "s1", "s2"] {
            let part: Vec<&luntan_core::ThreadDoc> = docs.iter().filter(|d| d.site == site).collect();
            write_index(&dir.path().join(format!("{site}.index")), &part);
        }
        let catalog = Catalog::open(dir.path()).unwrap();
        for q in ["书", "酒店 服务", "\"服务态度\""] {
            let query = Query::parse(q).unwrap();
            let opts = SearchOptions::default();
            let time = |f: &mut dyn FnMut()| {
                f();
                let started = std::time::Instant::now();
                for _ in 0..20 {
                    f();
                }
                started.elapsed().as_secs_f64() * 1000.0 / 20.0
            };
            let total = catalog.search(&query, &opts).unwrap().total;
            let search = time(&mut || drop(catalog.search(&query, &opts).unwrap()));
            let facets = time(&mut || drop(catalog.facets(&query, &opts, 10).unwrap()));
            println!("{q}: {total} matches, search {search:.1} ms, facets {facets:.1} ms");
        }
    }
}
