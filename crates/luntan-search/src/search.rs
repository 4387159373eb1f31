//! Searching every forum's index at once, with one ranking.
//!
//! BM25 needs collection statistics (document count, average field length,
//! document frequency of each term). Each index alone would give its own,
//! so the same thread would score differently depending on which forums
//! share its index. [`GlobalStats`] sums them over all open indexes and
//! every index scores with the sums, which makes scores comparable and
//! independent of how threads are split into indexes. What a query matches
//! comes from the gram fields alone (a plain term must occur as written);
//! jieba words, titles and proximity only rank. Equal scores are ordered by
//! date and a stable hash of the thread, never by document id, so even ties
//! come out the same however the threads are split.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use luntan_core::ids::{BoardId, IdError, SaveDate, SiteId, ThreadId};
use rayon::prelude::*;
use serde::Serialize;
use tantivy::collector::Count;
use tantivy::query::{
    AllQuery, Bm25StatisticsProvider, BooleanQuery, BoostQuery, ConstScoreQuery, EmptyQuery, EnableScoring, Occur, PhraseQuery, Query as TQuery, RangeQuery,
    TermQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DateTime, DocAddress, Index, IndexReader, ReloadPolicy, Score, Searcher, TantivyDocument, TantivyError, Term};

use crate::analysis::{gram_phrase_variants, gram_query_terms, gram_width, is_cjk, query_words, register_tokenizers};
use crate::proximity::{ProximityQuery, Word};
use crate::query::{Node, Query, QueryError, Scope};
use crate::schema::{format_posted, LuntanSchema, KEY, POST_BREAK};
use crate::snippet::{highlight, make_snippet, Snippet};
use crate::termsum::{Clause, TermSum};
use crate::topkey::{rank, SharedThreshold, SortKey, TopKeyed, TopList};

// Defined beside the sort key it picks; a search is asked for with it from here.
pub use crate::topkey::SortOrder;

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Open { path: PathBuf, source: TantivyError },
    #[error("{}: not a luntan index of this version (schema differs); recreate it with `luntan-index --rebuild`", path.display())]
    Schema { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Search { path: PathBuf, source: TantivyError },
    /// `site` is what was asked for, which need not be an id at all.
    #[error("no index for site {site:?} under {}", dir.display())]
    UnknownSite { site: String, dir: PathBuf },
    /// An index named, or holding a document, by something that is not an
    /// id: luntan did not write it.
    #[error("{}: not a luntan index: {source}", path.display())]
    BadId { path: PathBuf, source: IdError },
    #[error("query: {0}")]
    Query(#[from] QueryError),
    #[error(transparent)]
    Day(#[from] crate::days::DayOutOfRange),
}

/// What to return.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    pub limit: usize,
    pub offset: usize,
    pub sort: SortOrder,
    /// Only threads first posted on or after this day (UTC reading of the forum's clock).
    pub since: Option<time::Date>,
    /// Only threads first posted on or before this day.
    pub until: Option<time::Date>,
    /// Only these indexes; empty means all.
    pub sites: Vec<SiteId>,
    /// Snippet length in characters; 0 for none.
    pub snippet_chars: usize,
    /// Hits carry only rank, score, site and thread, read from a fast
    /// field without loading the stored thread: for listing many hits.
    pub ids_only: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { limit: 10, offset: 0, sort: SortOrder::Relevance, since: None, until: None, sites: Vec::new(), snippet_chars: 80, ids_only: false }
    }
}

/// One matching thread.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// 1-based, counting the offset.
    pub rank: usize,
    pub score: Score,
    pub site: SiteId,
    /// The forum's display name.
    pub forum: String,
    /// `None` only in a hit of [`SearchOptions::ids_only`], which reads no stored thread.
    pub board: Option<BoardId>,
    pub thread: ThreadId,
    pub url: String,
    pub title: String,
    /// Byte ranges of query words in `title`.
    pub title_highlights: Vec<(usize, usize)>,
    /// First post time, `YYYY-MM-DDTHH:MM:SS`.
    pub posted: Option<String>,
    /// `None` only in a hit of [`SearchOptions::ids_only`].
    pub saved: Option<SaveDate>,
    pub authors: Vec<String>,
    /// Posts with text but the first (see `replies` in this module).
    pub replies: usize,
    pub snippet: Snippet,
    /// The query's words are in this thread only where one of its posts
    /// quotes another's: `snippet` is then taken from the quote, never
    /// from the replier's own words. Set only with `snippet_chars` above 0.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_quote: bool,
    /// Whose words that quote holds, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_author: Option<String>,
}

/// A page of hits and the counts behind it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchResults {
    /// Matching threads in all searched indexes.
    pub total: usize,
    /// Matching threads per index (named by site).
    pub per_site: BTreeMap<SiteId, usize>,
    pub hits: Vec<Hit>,
}

/// BM25 statistics summed over every index of a catalog.
pub struct GlobalStats {
    searchers: Vec<Searcher>,
    total_docs: u64,
    tokens: Mutex<HashMap<Field, u64>>,
    doc_freqs: Mutex<HashMap<Term, u64>>,
}

impl GlobalStats {
    pub fn new(searchers: Vec<Searcher>) -> GlobalStats {
        let total_docs = searchers.iter().map(|s| s.segment_readers().iter().map(|r| u64::from(r.max_doc())).sum::<u64>()).sum();
        GlobalStats { searchers, total_docs, tokens: Mutex::default(), doc_freqs: Mutex::default() }
    }
}

impl Bm25StatisticsProvider for GlobalStats {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if let Some(&n) = self.tokens.lock().expect("stats lock").get(&field) {
            return Ok(n);
        }
        let mut n = 0;
        for s in self.searchers.iter().filter(|s| has_field(s.schema(), field)) {
            n += Bm25StatisticsProvider::total_num_tokens(s, field)?;
        }
        self.tokens.lock().expect("stats lock").insert(field, n);
        Ok(n)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.total_docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(&n) = self.doc_freqs.lock().expect("stats lock").get(term) {
            return Ok(n);
        }
        let mut n = 0;
        for s in self.searchers.iter().filter(|s| has_field(s.schema(), term.field())) {
            n += s.doc_freq(term)?;
        }
        self.doc_freqs.lock().expect("stats lock").insert(term.clone(), n);
        Ok(n)
    }
}

struct SiteIndex {
    name: SiteId,
    path: PathBuf,
    reader: IndexReader,
}

/// Every index of an index directory, opened for searching.
pub struct Catalog {
    dir: PathBuf,
    schema: LuntanSchema,
    indexes: Vec<SiteIndex>,
    skipped: Vec<SearchError>,
}

fn open_one(path: &Path, schema: &LuntanSchema) -> Result<SiteIndex, SearchError> {
    let open = |source| SearchError::Open { path: path.to_owned(), source };
    let index = Index::open_in_dir(path).map_err(open)?;
    if index.schema() != schema.schema && !schema.is_previous(&index.schema()) {
        return Err(SearchError::Schema { path: path.to_owned() });
    }
    register_tokenizers(&index);
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(open)?;
    let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = SiteId::parse(file.strip_suffix(".index").unwrap_or(&file)).map_err(|source| SearchError::BadId { path: path.to_owned(), source })?;
    Ok(SiteIndex { name, path: path.to_owned(), reader })
}

// Boosts: a whole jieba word beats a bare substring, the title beats the body.
const TITLE_WORD: Score = 3.0;
const BODY_WORD: Score = 1.5;
const TITLE_GRAM: Score = 1.5;
const BODY_GRAM: Score = 1.0;
/// Quoted words weigh a fifth of a thread's own: a thread that only quotes
/// them is found, below the one that wrote them (see `Hit::in_quote`).
const QUOTE_WORD: Score = BODY_WORD / 5.0;
const QUOTE_GRAM: Score = BODY_GRAM / 5.0;
/// Weight of the bonus for the words of a query occurring near each other.
const PROXIMITY: Score = 2.0;

/// One index as a search sees it: its site, its directory and a searcher
/// over its last commit.
pub(crate) type Snapshot = (SiteId, PathBuf, Searcher);

impl Catalog {
    /// Opens every directory ending in `.index` under `index_dir`. One that
    /// cannot be opened (half created, another schema) is left out and
    /// listed in [`Catalog::skipped`], so one bad forum does not stop search.
    pub fn open(index_dir: &Path) -> Result<Catalog, SearchError> {
        let io = |source| SearchError::Io { path: index_dir.to_owned(), source };
        let mut paths = Vec::new();
        for e in std::fs::read_dir(index_dir).map_err(io)? {
            let e = e.map_err(io)?;
            if e.file_name().to_string_lossy().ends_with(".index") && e.path().is_dir() {
                paths.push(e.path());
            }
        }
        paths.sort();
        let schema = LuntanSchema::new();
        let mut indexes = Vec::new();
        let mut skipped = Vec::new();
        for path in paths {
            match open_one(&path, &schema) {
                Ok(i) => indexes.push(i),
                Err(e) => skipped.push(e),
            }
        }
        Ok(Catalog { dir: index_dir.to_owned(), schema, indexes, skipped })
    }

    /// Opens exactly these index directories, each named by its file name
    /// without `.index`; any failure is an error.
    pub fn open_paths(paths: &[PathBuf]) -> Result<Catalog, SearchError> {
        let schema = LuntanSchema::new();
        let indexes = paths.iter().map(|p| open_one(p, &schema)).collect::<Result<Vec<_>, _>>()?;
        let dir = paths.first().and_then(|p| p.parent()).map(Path::to_owned).unwrap_or_default();
        Ok(Catalog { dir, schema, indexes, skipped: Vec::new() })
    }

    /// The schema and a snapshot of each selected index (`sites` empty: all),
    /// named by site, for the other ways of reading an index ([`crate::trend`]).
    pub(crate) fn snapshots(&self, sites: &[SiteId]) -> Result<(&LuntanSchema, Vec<Snapshot>), SearchError> {
        for site in sites {
            if !self.indexes.iter().any(|x| &x.name == site) {
                return Err(SearchError::UnknownSite { site: site.to_string(), dir: self.dir.clone() });
            }
        }
        let picked = self.indexes.iter().filter(|i| sites.is_empty() || sites.contains(&i.name));
        Ok((&self.schema, picked.map(|i| (i.name.clone(), i.path.clone(), i.reader.searcher())).collect()))
    }

    pub(crate) fn schema(&self) -> &LuntanSchema {
        &self.schema
    }

    /// Index directories [`Catalog::open`] could not open, and why.
    pub fn skipped(&self) -> &[SearchError] {
        &self.skipped
    }

    /// The site names of the open indexes, sorted.
    pub fn sites(&self) -> Vec<&str> {
        self.indexes.iter().map(|i| i.name.as_str()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.indexes.is_empty()
    }

    /// Documents in all indexes.
    pub fn num_docs(&self) -> u64 {
        self.indexes.iter().map(|i| i.reader.searcher().num_docs()).sum()
    }

    /// Parses and runs `query`.
    pub fn search_str(&self, query: &str, opts: &SearchOptions) -> Result<SearchResults, SearchError> {
        self.search(&Query::parse(query)?, opts)
    }

    /// Runs `query` on the selected indexes in parallel and merges one top list.
    pub fn search(&self, query: &Query, opts: &SearchOptions) -> Result<SearchResults, SearchError> {
        let mut hits = Vec::new();
        let mut results = self.search_each(query, opts, usize::MAX, |batch| {
            hits = batch;
            true
        })?;
        results.hits = hits;
        Ok(results)
    }

    /// The tantivy query `search` runs for `query` and `opts`' date range,
    /// and the indexes `opts.sites` selects: what [`crate::facets`] counts over.
    pub(crate) fn compiled(&self, query: &Query, opts: &SearchOptions) -> Result<(Box<dyn TQuery>, Vec<Snapshot>), SearchError> {
        let (tq, selected) = self.compiled_in(query, opts)?;
        Ok((tq, selected.into_iter().map(|i| (self.indexes[i].name.clone(), self.indexes[i].path.clone(), self.indexes[i].reader.searcher())).collect()))
    }

    fn compiled_in(&self, query: &Query, opts: &SearchOptions) -> Result<(Box<dyn TQuery>, Vec<usize>), SearchError> {
        let s = &self.schema;
        let mut tq = compile(&query.root, s).ok_or(QueryError::NothingToSearch)?;
        if opts.since.is_some() || opts.until.is_some() {
            for (field, d) in [("since", opts.since), ("until", opts.until)] {
                d.map(|d| crate::days::check_day(field, d)).transpose()?;
            }
            let day = |d: time::Date| DateTime::from_timestamp_secs(crate::days::midnight_secs(d));
            let term = |d| Term::from_field_date_for_search(s.posted, day(d));
            let lower = opts.since.map_or(Bound::Unbounded, |d| Bound::Included(term(d)));
            let upper = match opts.until {
                None => Bound::Unbounded,
                Some(d) => match d.next_day() {
                    Some(next) => Bound::Excluded(term(next)),
                    None => Bound::Unbounded,
                },
            };
            tq = Box::new(BooleanQuery::new(vec![(Occur::Must, tq), (Occur::Must, filter(Box::new(RangeQuery::new(lower, upper))))]));
        }

        let mut selected: Vec<usize> = Vec::new();
        for site in &opts.sites {
            let i =
                self.indexes.iter().position(|x| &x.name == site).ok_or_else(|| SearchError::UnknownSite { site: site.to_string(), dir: self.dir.clone() })?;
            if !selected.contains(&i) {
                selected.push(i);
            }
        }
        if opts.sites.is_empty() {
            selected = (0..self.indexes.len()).collect();
        }
        Ok((tq, selected))
    }

    /// [`Catalog::search`] handing its hits (`opts.offset` and `opts.limit`
    /// apply) to `each` in rank order, `batch` at a time, until `each`
    /// returns false: every hit of a large result set can be written out
    /// (an export) without all of them, stored text and snippets, held at
    /// once. Ranking is done once, over every match. The returned results
    /// carry the counts and no hits.
    pub fn search_each(&self, query: &Query, opts: &SearchOptions, batch: usize, mut each: impl FnMut(Vec<Hit>) -> bool) -> Result<SearchResults, SearchError> {
        let (tq, selected) = self.compiled_in(query, opts)?;
        // One snapshot per index, shared by statistics, search and document fetches.
        let searchers: Vec<Searcher> = self.indexes.iter().map(|i| i.reader.searcher()).collect();
        let stats = GlobalStats::new(searchers.clone());
        // More than every document cannot be returned; tantivy allocates for k up front.
        let k = opts.offset.saturating_add(opts.limit).min(usize::try_from(stats.total_docs).unwrap_or(usize::MAX));
        let shared = Arc::new(SharedThreshold::default());
        let run = |&i: &usize| -> Result<(usize, usize, TopList), SearchError> {
            let (count, top) = search_one(&searchers[i], &*tq, k, opts.sort, &stats, &shared)
                .map_err(|source| SearchError::Search { path: self.indexes[i].path.clone(), source })?;
            Ok((i, count, top))
        };
        let per_index: Vec<(usize, usize, TopList)> = if worth_parallel(&*tq, &stats, opts) {
            selected.par_iter().map(run).collect::<Result<_, _>>()?
        } else {
            selected.iter().map(run).collect::<Result<_, _>>()?
        };

        let mut results = SearchResults::default();
        let mut merged: Vec<(SortKey, usize, DocAddress)> = Vec::new();
        for (i, count, top) in per_index {
            results.total += count;
            *results.per_site.entry(self.indexes[i].name.clone()).or_default() += count;
            merged.extend(top.into_iter().map(|(key, addr)| (key, i, addr)));
        }
        // Keys are unique but for hash collisions; the index and address
        // only make the order total.
        merged.sort_by(|a, b| rank(&b.0, &a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));

        let page: Vec<(usize, (SortKey, usize, DocAddress))> = merged.into_iter().skip(opts.offset).take(opts.limit).enumerate().collect();
        let needles = if opts.ids_only { Vec::new() } else { needles(query) };
        for part in page.chunks(batch.max(1)) {
            let hits = if opts.ids_only {
                self.id_hits(&searchers, part.to_vec(), opts.offset)?
            } else {
                // Stored documents are decompressed and snippets cut per hit: worth spreading over cores.
                part.par_iter()
                    .map(|&(n, (key, i, addr))| {
                        let doc: TantivyDocument =
                            searchers[i].doc(addr).map_err(|source| SearchError::Search { path: self.indexes[i].path.clone(), source })?;
                        self.hit(&doc, opts.offset + n + 1, key.1, &needles, opts.snippet_chars)
                            .map_err(|source| SearchError::BadId { path: self.indexes[i].path.clone(), source })
                    })
                    .collect::<Result<_, SearchError>>()?
            };
            if !each(hits) {
                break;
            }
        }
        Ok(results)
    }

    /// Hits with only their ids, from the `key` fast field.
    fn id_hits(&self, searchers: &[Searcher], page: Vec<(usize, (SortKey, usize, DocAddress))>, offset: usize) -> Result<Vec<Hit>, SearchError> {
        let mut columns: HashMap<(usize, u32), tantivy::columnar::StrColumn> = HashMap::new();
        let mut key = String::new();
        let mut hits = Vec::with_capacity(page.len());
        for (n, (sort_key, i, addr)) in page {
            let err = |source: TantivyError| SearchError::Search { path: self.indexes[i].path.clone(), source };
            let column = match columns.entry((i, addr.segment_ord)) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let col = searchers[i].segment_reader(addr.segment_ord).fast_fields().str(KEY).map_err(err)?;
                    e.insert(col.ok_or_else(|| err(TantivyError::SchemaError(format!("{KEY} is not a fast field"))))?)
                }
            };
            key.clear();
            if let Some(ord) = column.term_ords(addr.doc_id).next() {
                column.ord_to_str(ord, &mut key).map_err(|e| err(e.into()))?;
            }
            let (site, thread) = key.split_once('/').unwrap_or((&key, ""));
            let bad = |source| SearchError::BadId { path: self.indexes[i].path.clone(), source };
            hits.push(Hit {
                rank: offset + n + 1,
                score: sort_key.1,
                site: SiteId::parse(site).map_err(bad)?,
                forum: String::new(),
                board: None,
                thread: ThreadId::parse(thread).map_err(bad)?,
                url: String::new(),
                title: String::new(),
                title_highlights: Vec::new(),
                posted: None,
                saved: None,
                authors: Vec::new(),
                replies: 0,
                snippet: Snippet::default(),
                in_quote: false,
                quote_author: None,
            });
        }
        Ok(hits)
    }

    /// The hit of one stored thread; its ids are checked here, once, as they leave the index.
    fn hit(&self, doc: &TantivyDocument, rank: usize, score: Score, needles: &[String], snippet_chars: usize) -> Result<Hit, IdError> {
        let s = &self.schema;
        let text = |f: Field| doc.get_first(f).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let title = text(s.title);
        let title_highlights = highlight(&title, needles).highlights;
        let body = text(s.body);
        let mut snippet = if snippet_chars == 0 { Snippet::default() } else { make_snippet(&body, needles, snippet_chars) };
        let mut quote_author = None;
        let in_quote = snippet_chars > 0 && !needles.is_empty() && snippet.highlights.is_empty() && title_highlights.is_empty() && {
            match quote_snippet(s, doc, needles, snippet_chars) {
                Some((by, found)) => {
                    snippet = found;
                    quote_author = Some(by).filter(|a| !a.is_empty());
                    true
                }
                None => false,
            }
        };
        Ok(Hit {
            rank,
            score,
            site: SiteId::parse(&text(s.site))?,
            forum: text(s.forum),
            board: Some(BoardId::parse(&text(s.board))?),
            thread: ThreadId::parse(&text(s.thread))?,
            url: text(s.url),
            title,
            title_highlights,
            posted: doc.get_first(s.posted).and_then(|v| v.as_datetime()).map(format_posted),
            saved: Some(SaveDate::parse(&text(s.saved))?),
            authors: doc.get_all(s.authors).filter_map(|v| v.as_str().map(str::to_string)).collect(),
            replies: replies(&body),
            snippet,
            in_quote,
            quote_author,
        })
    }
}

/// The snippet of the quote holding the most of `needles` (then the
/// first), with whose words it holds; none when no quote holds any.
fn quote_snippet(s: &LuntanSchema, doc: &TantivyDocument, needles: &[String], snippet_chars: usize) -> Option<(String, Snippet)> {
    let texts = doc.get_all(s.quoted).filter_map(|v| v.as_str());
    let mut authors = doc.get_all(s.quoted_by).filter_map(|v| v.as_str());
    let mut best: Option<(usize, &str, &str)> = None;
    for text in texts {
        let by = authors.next().unwrap_or_default();
        let n = highlight(text, needles).highlights.len();
        if n > 0 && best.is_none_or(|(m, _, _)| n > m) {
            best = Some((n, by, text));
        }
    }
    best.map(|(_, by, text)| (by.to_owned(), make_snippet(text, needles, snippet_chars)))
}

/// Replies in a thread's stored body: its posts but the first. A post
/// without text is not in the body (see [`crate::schema::thread_body`]), so
/// a reply of only an image or a quote is not counted; the index keeps no
/// post count of its own.
fn replies(body: &str) -> usize {
    if body.is_empty() {
        0
    } else {
        body.split(POST_BREAK).count() - 1
    }
}

/// One index's match count and top `k`. Under relevance `shared` carries
/// the pruning threshold between the indexes of one search (see
/// [`SharedThreshold`]).
fn search_one(
    searcher: &Searcher,
    q: &dyn TQuery,
    k: usize,
    sort: SortOrder,
    stats: &GlobalStats,
    shared: &Arc<SharedThreshold>,
) -> tantivy::Result<(usize, TopList)> {
    if k == 0 {
        return Ok((searcher.search_with_statistics_provider(q, &Count, stats)?, Vec::new()));
    }
    if sort == SortOrder::Relevance && q.is::<TermSum>() {
        // Counting apart (without scores) lets the top k skip what cannot enter.
        let count = searcher.search_with_statistics_provider(q, &Count, stats)?;
        return Ok((count, searcher.search_with_statistics_provider(q, &TopKeyed { k, sort, shared: Some(shared.clone()) }, stats)?));
    }
    searcher.search_with_statistics_provider(q, &(Count, TopKeyed { k, sort, shared: None }), stats)
}

/// Below this many postings (summed over the query's terms and every
/// index) a search takes well under a millisecond, less than waking the
/// thread pool can cost on a busy machine.
const PARALLEL_MIN_POSTINGS: u64 = 50_000;

/// Whether to search the indexes on the thread pool rather than one after
/// another on the calling thread. The statistics are needed for scoring
/// anyway, so the estimate costs nothing extra.
fn worth_parallel(q: &dyn TQuery, stats: &GlobalStats, opts: &SearchOptions) -> bool {
    if opts.since.is_some() || opts.until.is_some() {
        // A date range reads a fast field over every document in range.
        return true;
    }
    let (mut postings, mut terms) = (0u64, 0);
    q.query_terms(&mut |t, _| {
        terms += 1;
        postings = postings.saturating_add(stats.doc_freq(t).unwrap_or(u64::MAX));
    });
    // No terms: an all-documents query, the most expensive kind.
    terms == 0 || postings >= PARALLEL_MIN_POSTINGS
}

/// A constraint that selects without changing scores.
/// Whether an index of `schema` has `field`: one written before the field
/// was added (see [`LuntanSchema::is_previous`]) has fewer, and tantivy
/// indexes its schema's fields by id without a bound check.
pub(crate) fn has_field(schema: &tantivy::schema::Schema, field: Field) -> bool {
    (field.field_id() as usize) < schema.num_fields()
}

/// `inner`, a query on `field` alone, where the index has the field; where
/// it does not (an index written before the field was added), nothing.
#[derive(Debug)]
pub struct IfField {
    field: Field,
    inner: Box<dyn TQuery>,
}

impl Clone for IfField {
    fn clone(&self) -> Self {
        IfField { field: self.field, inner: self.inner.box_clone() }
    }
}

impl IfField {
    fn boxed(field: Field, inner: Box<dyn TQuery>) -> Box<dyn TQuery> {
        Box::new(IfField { field, inner })
    }
}

impl TQuery for IfField {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        if has_field(scoring.schema(), self.field) {
            self.inner.weight(scoring)
        } else {
            EmptyQuery.weight(scoring)
        }
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        self.inner.query_terms(visitor)
    }
}

/// `author:`, `reply-to:`: a name (a substring of one, through the gram
/// field `names`) or an id (exactly, in the raw field `ids`).
fn person_filter(names: Field, ids: Field, v: &str) -> Option<Box<dyn TQuery>> {
    let by_id = IfField::boxed(ids, Box::new(TermQuery::new(Term::from_field_text(ids, v.trim()), IndexRecordOption::Basic)));
    let by_name = gram_query(names, v).map(|q| IfField::boxed(names, q));
    should(by_name.into_iter().chain([by_id]).collect()).map(filter)
}

fn filter(q: Box<dyn TQuery>) -> Box<dyn TQuery> {
    Box::new(ConstScoreQuery::new(q, 0.0))
}

fn boost(q: Box<dyn TQuery>, b: Score) -> Box<dyn TQuery> {
    Box::new(BoostQuery::new(q, b))
}

fn should(mut qs: Vec<Box<dyn TQuery>>) -> Option<Box<dyn TQuery>> {
    match qs.len() {
        0 => None,
        1 => qs.pop(),
        _ => Some(Box::new(BooleanQuery::new(qs.into_iter().map(|q| (Occur::Should, q)).collect()))),
    }
}

/// Finds `text` as a substring of a gram-analyzed field: a term query for
/// one gram, an exact phrase for several. (Exact phrases count matches the
/// same in any index; sloppy ones do not, see [`crate::proximity`].)
fn gram_query(field: Field, text: &str) -> Option<Box<dyn TQuery>> {
    terms_query(field, gram_query_terms(text))
}

/// A term query for one gram, an exact phrase (with the terms' offsets) for several.
fn terms_query(field: Field, mut terms: Vec<(usize, String)>) -> Option<Box<dyn TQuery>> {
    match terms.len() {
        0 => None,
        1 => Some(Box::new(TermQuery::new(Term::from_field_text(field, &terms.pop()?.1), IndexRecordOption::WithFreqs))),
        _ => Some(Box::new(PhraseQuery::new_with_offset(terms.into_iter().map(|(p, t)| (p, Term::from_field_text(field, &t))).collect()))),
    }
}

fn word_query(field: Field, word: &str) -> Box<dyn TQuery> {
    Box::new(TermQuery::new(Term::from_field_text(field, word), IndexRecordOption::WithFreqs))
}

/// `text` as written (a substring, through the gram fields) in the title or body.
fn substring_clause(s: &LuntanSchema, text: &str, scope: Scope) -> Option<Box<dyn TQuery>> {
    let mut qs = Vec::new();
    qs.extend(gram_query(s.title_gram, text).map(|q| boost(q, TITLE_GRAM)));
    if scope == Scope::TitleOrBody {
        qs.extend(gram_query(s.body_gram, text).map(|q| boost(q, BODY_GRAM)));
        qs.extend(gram_query(s.quoted_gram, text).map(|q| boost(IfField::boxed(s.quoted_gram, q), QUOTE_GRAM)));
    }
    should(qs)
}

/// A quoted phrase in the title or body, in any of the ways its gaps may
/// be written ([`gram_phrase_variants`]).
fn phrase_clause(s: &LuntanSchema, text: &str, scope: Scope) -> Option<Box<dyn TQuery>> {
    let variants = gram_phrase_variants(text);
    let in_field = |field: Field| should(variants.iter().filter_map(|v| terms_query(field, v.clone())).collect());
    let mut qs = Vec::new();
    qs.extend(in_field(s.title_gram).map(|q| boost(q, TITLE_GRAM)));
    if scope == Scope::TitleOrBody {
        qs.extend(in_field(s.body_gram).map(|q| boost(q, BODY_GRAM)));
        qs.extend(in_field(s.quoted_gram).map(|q| boost(IfField::boxed(s.quoted_gram, q), QUOTE_GRAM)));
    }
    should(qs)
}

/// A plain term. It must occur as written: matching the gram fields'
/// substring phrase is what makes a 1–4 character query return exactly the
/// threads that contain it, however jieba segments either side. Its jieba
/// words only add score (whole-word matches rank above bare substrings);
/// letting them match alone would widen the set to threads holding the
/// words apart.
fn term_clause(s: &LuntanSchema, text: &str, scope: Scope) -> Option<Box<dyn TQuery>> {
    single_gram_clause(s, text, scope).or_else(|| nested_term_clause(s, text, scope))
}

/// [`term_clause`] in general: the gram substring required, each jieba word optional.
pub(crate) fn nested_term_clause(s: &LuntanSchema, text: &str, scope: Scope) -> Option<Box<dyn TQuery>> {
    let required = substring_clause(s, text, scope)?;
    let mut clauses: Vec<(Occur, Box<dyn TQuery>)> = vec![(Occur::Must, required)];
    for w in query_words(text) {
        let mut qs = vec![boost(word_query(s.title, &w), TITLE_WORD)];
        if scope == Scope::TitleOrBody {
            qs.push(boost(word_query(s.body, &w), BODY_WORD));
            qs.push(boost(IfField::boxed(s.quoted, word_query(s.quoted, &w)), QUOTE_WORD));
        }
        clauses.extend(should(qs).map(|q| (Occur::Should, q)));
    }
    Some(Box::new(BooleanQuery::new(clauses)))
}

/// [`term_clause`] for a term that is one CJK gram whose only jieba word
/// is that gram (`好`, `中国`): a thread holding the word holds the gram,
/// so requiring the gram and adding the word's score is the same as a flat
/// sum of the four, which [`TermSum`] ranks without scoring every match.
pub(crate) fn single_gram_clause(s: &LuntanSchema, text: &str, scope: Scope) -> Option<Box<dyn TQuery>> {
    let [(_, gram)] = &gram_query_terms(text)[..] else { return None };
    if !gram.chars().all(is_cjk) || query_words(text).iter().any(|w| w != gram) {
        return None;
    }
    let clause = |field: Field, boost: Score, selects: bool| Clause { term: Term::from_field_text(field, gram), boost, selects };
    let mut clauses = vec![clause(s.title_gram, TITLE_GRAM, true)];
    if scope == Scope::TitleOrBody {
        clauses.push(clause(s.body_gram, BODY_GRAM, true));
        clauses.push(clause(s.quoted_gram, QUOTE_GRAM, true));
    }
    clauses.push(clause(s.title, TITLE_WORD, false));
    if scope == Scope::TitleOrBody {
        clauses.push(clause(s.body, BODY_WORD, false));
        clauses.push(clause(s.quoted, QUOTE_WORD, false));
    }
    Some(Box::new(TermSum::new(clauses)))
}

/// A score bonus for threads where the plain words and phrases of one AND
/// group occur near each other, in any order ([`ProximityQuery`]).
fn proximity_clause(s: &LuntanSchema, texts: &[&str]) -> Option<Box<dyn TQuery>> {
    let words = |field: Field| -> Vec<Word> {
        texts
            .iter()
            .map(|t| gram_query_terms(t))
            .filter(|t| !t.is_empty())
            .map(|t| Word { width: gram_width(&t) as u32, terms: t.into_iter().map(|(p, term)| (p as u32, Term::from_field_text(field, &term))).collect() })
            .collect()
    };
    let title = ProximityQuery::new(s.title_gram, words(s.title_gram), TITLE_GRAM * PROXIMITY)?;
    let body = ProximityQuery::new(s.body_gram, words(s.body_gram), BODY_GRAM * PROXIMITY)?;
    should(vec![Box::new(title), Box::new(body)])
}

fn raw_term(field: Field, v: &str) -> Box<dyn TQuery> {
    filter(Box::new(TermQuery::new(Term::from_field_text(field, v), IndexRecordOption::Basic)))
}

/// The tantivy query for a node; `None` when the node constrains nothing
/// (a term of punctuation only).
pub(crate) fn compile(n: &Node, s: &LuntanSchema) -> Option<Box<dyn TQuery>> {
    match n {
        Node::Term { text, scope } => term_clause(s, text, *scope),
        Node::Phrase { text, scope } => phrase_clause(s, text, *scope),
        Node::Site(v) => Some(raw_term(s.site, v)),
        Node::Board(v) => Some(raw_term(s.board, v)),
        Node::Author(v) => person_filter(s.authors, s.author_ids, v),
        Node::ReplyTo(v) => person_filter(s.replied, s.replied_ids, v),
        Node::Link(v) => Some(IfField::boxed(s.link_hosts, raw_term(s.link_hosts, v))),
        Node::Or(children) => should(children.iter().filter_map(|c| compile(c, s)).collect()),
        // Only reachable from a hand-built tree; the parser puts exclusions inside an And.
        Node::Not(child) => {
            let q = compile(child, s)?;
            Some(Box::new(BooleanQuery::new(vec![(Occur::Must, filter(Box::new(AllQuery))), (Occur::MustNot, q)])))
        }
        Node::And(children) => {
            let mut clauses: Vec<(Occur, Box<dyn TQuery>)> = Vec::new();
            let mut near: Vec<&str> = Vec::new();
            for c in children {
                match c {
                    Node::Not(inner) => clauses.extend(compile(inner, s).map(|q| (Occur::MustNot, q))),
                    _ => {
                        if let Node::Term { text, scope: Scope::TitleOrBody } | Node::Phrase { text, scope: Scope::TitleOrBody } = c {
                            near.push(text);
                        }
                        clauses.extend(compile(c, s).map(|q| (Occur::Must, q)));
                    }
                }
            }
            if !clauses.iter().any(|(o, _)| *o == Occur::Must) {
                if clauses.is_empty() {
                    return None;
                }
                // Exclusions need something to exclude from.
                clauses.push((Occur::Must, filter(Box::new(AllQuery))));
            }
            clauses.extend(proximity_clause(s, &near).map(|q| (Occur::Should, q)));
            if let [(Occur::Must, _)] = &clauses[..] {
                // One required clause scores as itself; unwrapped, a [`TermSum`] keeps its pruning.
                return clauses.pop().map(|(_, q)| q);
            }
            Some(Box::new(BooleanQuery::new(clauses)))
        }
    }
}

/// The strings to mark in titles and snippets: each positive term as
/// written (what it matched), and each run of a phrase.
/// The words a hit's text is highlighted with: every positive term and
/// phrase of `q` (for [`crate::snippet::highlight`] on text outside the index).
pub fn needles(q: &Query) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    q.walk(&mut |n, negated| {
        if negated {
            return;
        }
        match n {
            Node::Term { text, .. } | Node::Phrase { text, .. } => {
                for part in text.split(|c: char| !(is_cjk(c) || c.is_alphanumeric())) {
                    push(part);
                }
            }
            _ => {}
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use luntan_core::ThreadDoc;

    use super::*;
    use crate::testutil::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        catalog: Catalog,
        docs: Vec<ThreadDoc>,
    }

    /// One index per site, as luntan-index lays them out.
    fn fixture(n: usize) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let docs = synthetic(n);
        for site in ["s0", "s1", "s2"] {
            let part: Vec<&ThreadDoc> = docs.iter().filter(|d| d.site == site).collect();
            write_index(&dir.path().join(format!("{site}.index")), &part);
        }
        let catalog = Catalog::open(dir.path()).unwrap();
        Fixture { _dir: dir, catalog, docs }
    }

    /// A catalog over one site's index holding `docs`, all of that site; the
    /// dir is returned because the catalog reads the index from it.
    fn one_site_catalog(docs: &[ThreadDoc]) -> (tempfile::TempDir, Catalog) {
        let dir = tempfile::tempdir().unwrap();
        write_index(&dir.path().join(format!("{}.index", docs[0].site)), &docs.iter().collect::<Vec<_>>());
        let c = Catalog::open(dir.path()).unwrap();
        (dir, c)
    }

    fn everything() -> SearchOptions {
        SearchOptions { limit: 100_000, ..Default::default() }
    }

    fn keys(r: &SearchResults) -> BTreeSet<String> {
        r.hits.iter().map(|h| format!("{}/{}", h.site, h.thread)).collect()
    }

    /// Runs `q` and compares the hits with a brute-force scan of the documents.
    fn check(f: &Fixture, q: &str, pred: impl Fn(&ThreadDoc) -> bool) {
        let r = f.catalog.search_str(q, &everything()).unwrap();
        let want: BTreeSet<String> = f.docs.iter().filter(|d| pred(d)).map(key).collect();
        assert!(!want.is_empty(), "{q:?} should match something in the fixture");
        assert_eq!(keys(&r), want, "{q:?}");
        assert_eq!(r.total, want.len(), "{q:?}");
        assert_eq!(r.per_site.values().sum::<usize>(), r.total);
    }

    #[test]
    fn one_and_two_char_sub_word_queries_find_exactly_the_threads_containing_them() {
        let f = fixture(300);
        // jieba alone misses most of these: 店 inside 酒店, 本书 across a word boundary.
        for q in ["书", "店", "好", "的", "不错", "酒店", "本书", "服务", "房间", "间很", "的书", "这本", "服务态度"] {
            check(&f, q, |d| contains(d, q, false));
        }
    }

    #[test]
    fn words_and_phrases_exclusions_or_and_fields() {
        let f = fixture(300);
        check(&f, "酒店 服务", |d| contains(d, "酒店", false) && contains(d, "服务", false));
        check(&f, "这本书 内容", |d| contains(d, "这本书", false) && contains(d, "内容", false));
        check(&f, "\"服务态度\"", |d| contains(d, "服务态度", false));
        // A space in a phrase stands for any run of spaces and punctuation, or none.
        let collapsed = |text: &str| {
            let mut out = String::new();
            for c in crate::analysis::normalize_chars(text) {
                if is_cjk(c) || c.is_alphanumeric() {
                    out.push(c);
                } else if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            out
        };
        check(&f, "“房间 很”", |d| {
            collapsed(&d.title).contains("房间 很") || collapsed(&crate::schema::thread_body(d)).contains("房间 很") || contains(d, "房间很", false)
        });
        check(&f, "\"酒店。房间\"", |d| collapsed(&crate::schema::thread_body(d)).contains("酒店 房间") || contains(d, "酒店房间", false));
        check(&f, "酒店 -服务", |d| contains(d, "酒店", false) && !contains(d, "服务", false));
        check(&f, "酒店 OR 本书", |d| contains(d, "酒店", false) || contains(d, "本书", false));
        check(&f, "(酒店 OR 本书) -不错", |d| (contains(d, "酒店", false) || contains(d, "本书", false)) && !contains(d, "不错", false));
        check(&f, "site:s1 书", |d| d.site == "s1" && contains(d, "书", false));
        check(&f, "board:0 书", |d| d.board == "0" && contains(d, "书", false));
        check(&f, "author:小明 书", |d| d.posts.iter().any(|p| p.author.contains("小明")) && contains(d, "书", false));
        check(&f, "author:张三", |d| d.posts.iter().any(|p| p.author == "張三"));
        check(&f, "author:alice_99", |d| d.posts.iter().any(|p| p.author == "Alice_99"));
        check(&f, "title:书", |d| contains(d, "书", true));
        check(&f, "title:\"不错\" OR title:酒店", |d| contains(d, "不错", true) || contains(d, "酒店", true));
        check(&f, "site:s2 -书", |d| d.site == "s2" && !contains(d, "书", false));
    }

    #[test]
    fn quoted_words_are_not_the_repliers_a_search_finds_who_wrote_them() {
        // Thread 1 quotes thread 0's words in a reply: a query for them
        // finds thread 0 first, as its own words, and thread 1 below it,
        // saying the words are a quote of 甲's, with the quote as snippet.
        let mut docs = vec![
            thread("s0", "0", "原帖", &[("甲", "独家秘方红烧肉")], None),
            thread("s0", "1", "回帖", &[("乙", "开头"), ("丙", "我也想学")], None),
            thread("s0", "2", "又一帖", &[("丁", "独家秘方红烧肉我也会做")], None),
        ];
        docs[1].posts[0].id = Some("7".into());
        docs[1].posts[1].quotes = vec![luntan_core::doc::Quote { of: None, author: Some("甲".into()), paragraphs: vec!["独家秘方红烧肉".into()] }];
        // Thread 2 quotes its own first post, which wrote the words: not a hit in a quote.
        docs[2].posts.push(luntan_core::Post { floor: 2, author: "戊".into(), paragraphs: vec!["同意".into()], ..Default::default() });
        docs[2].posts[1].quotes = vec![luntan_core::doc::Quote { of: None, author: Some("丁".into()), paragraphs: vec!["独家秘方红烧肉".into()] }];
        let (_dir, c) = one_site_catalog(&docs);
        for q in ["\"独家秘方红烧肉\"", "独家秘方红烧肉", "红烧肉", "烧"] {
            let r = c.search_str(q, &everything()).unwrap();
            let got: Vec<(String, bool, Option<&str>)> = r.hits.iter().map(|h| (h.thread.to_string(), h.in_quote, h.quote_author.as_deref())).collect();
            assert_eq!(got.len(), 3, "{q}: {got:?}");
            assert!(got[..2].iter().all(|(t, quoted, _)| t != "1" && !quoted), "{q}: the threads that wrote the words come first, as their own: {got:?}");
            assert_eq!(got[2], ("1".to_string(), true, Some("甲")), "{q}");
            let quoted = &r.hits[2].snippet;
            assert_eq!(quoted.text, "独家秘方红烧肉", "{q}: the snippet is the quote's, never the replier's words");
            assert!(!quoted.highlights.is_empty(), "{q}");
        }
        let own = c.search_str("我也想学", &everything()).unwrap();
        assert_eq!(keys(&own), BTreeSet::from(["s0/1".to_string()]), "the reply's own words are still found");
        assert!(!own.hits[0].in_quote && own.hits[0].quote_author.is_none());
        // A quote of a post the thread holds names that post's author, whatever the quote shows.
        docs[1].posts[1].quotes[0] =
            luntan_core::doc::Quote { of: Some("7".into()), author: Some("别名".into()), paragraphs: vec!["独家秘方红烧肉".into()] };
        let (_dir, c) = one_site_catalog(&docs);
        let r = c.search_str("红烧肉", &everything()).unwrap();
        assert_eq!(r.hits.iter().find(|h| h.thread.as_str() == "1").and_then(|h| h.quote_author.as_deref()), Some("乙"));
        // Words only in a title's scope never match a quote.
        assert_eq!(keys(&c.search_str("title:红烧肉", &everything()).unwrap()), BTreeSet::new());
    }

    #[test]
    fn author_by_id_reply_to_and_link_filter_by_the_conversation() {
        // 甲 (id 42) opens; 乙 answers 甲's post; 丙 quotes 乙 by name only;
        // a second thread has a 甲 of another id who links to weibo.
        let mut docs = vec![
            thread("s0", "0", "原帖", &[("甲", "开头"), ("乙", "回复"), ("丙", "引用")], None),
            thread("s0", "1", "另帖", &[("甲", "看微博"), ("丁", "嗯")], None),
        ];
        for (i, p) in docs[0].posts.iter_mut().enumerate() {
            p.id = Some(format!("p{i}"));
        }
        docs[0].posts[0].author_id = Some("42".into());
        docs[0].posts[1].author_id = Some("43".into());
        docs[0].posts[1].reply_to = Some("p0".into());
        docs[0].posts[2].quotes = vec![luntan_core::doc::Quote { of: None, author: Some("乙".into()), paragraphs: vec!["回复".into()] }];
        docs[1].posts[0].author_id = Some("7".into());
        docs[1].posts[0].links = vec![luntan_core::doc::Link { href: "https://M.Weibo.com./u/1".into(), text: "微博".into() }];
        let (_dir, c) = one_site_catalog(&docs);
        let found = |q: &str| -> Vec<String> { keys(&c.search_str(q, &everything()).unwrap()).into_iter().collect() };
        let (t0, t1) = ("s0/0", "s0/1");
        assert_eq!(found("author:42"), [t0], "by id: only the 甲 of id 42");
        assert_eq!(found("author:甲"), [t0, t1], "by name: both 甲");
        assert_eq!(found("reply-to:甲"), [t0]);
        assert_eq!(found("reply-to:42"), [t0]);
        assert_eq!(found("reply-to:乙"), [t0], "a quote names whom it answers");
        assert!(found("reply-to:丙").is_empty() && found("reply-to:7").is_empty());
        for q in ["link:weibo.com", "link:m.weibo.com", "link:https://www.weibo.com/x", "link:WEIBO.COM"] {
            assert_eq!(found(q), [t1], "{q}");
        }
        assert!(found("link:bo.com").is_empty() && found("link:com").is_empty(), "a whole label, two at the least");
    }

    #[test]
    fn a_phrase_with_a_space_finds_the_words_written_together() {
        // "服务 态度" found nothing where 服务态度 found 202 threads: the space
        // asked for a separator gram the text never had.
        let texts = [
            "服务态度很好",
            "服务 态度一般",
            "服务，态度还行",
            "服務態度不錯",
            "服务员态度差",
            "态度 服务",
            "服务。",
            "早饭 房间 服务 态度 价格 都好",
            "早饭房间，服务态度价格都好",
            "早饭，房间服务态度 价格都好",
        ];
        let docs: Vec<ThreadDoc> = texts.iter().enumerate().map(|(i, t)| thread("s0", &i.to_string(), "帖子", &[("甲", t)], None)).collect();
        let (_dir, c) = one_site_catalog(&docs);
        let found = |q: &str| -> BTreeSet<String> { keys(&c.search_str(q, &everything()).unwrap()) };
        let ids = |is: &[usize]| -> BTreeSet<String> { is.iter().map(|i| format!("s0/{i}")).collect() };
        assert_eq!(found("服务态度"), ids(&[0, 3, 8, 9]));
        assert_eq!(found("\"服务 态度\""), ids(&[0, 1, 2, 3, 7, 8, 9]));
        assert_eq!(found("“服务，态度”"), found("\"服务 态度\""));
        // Each gap either way, independently.
        assert_eq!(found("\"房间 服务 态度 价格\""), ids(&[7, 8, 9]));
        assert_eq!(found("\"早饭房间服务态度价格\""), BTreeSet::new());
        // Past OPTIONAL_GAPS gaps: all of them separators, or none (9 mixes them).
        assert_eq!(found("\"早饭 房间 服务 态度 价格 都好\""), ids(&[7]));
        // Still a phrase: the words in order, nothing but separators between.
        assert!(!found("\"服务 态度\"").contains("s0/4") && !found("\"态度 服务\"").contains("s0/0"));
        assert_eq!(found("title:\"帖 子\""), ids(&(0..texts.len()).collect::<Vec<_>>()));
    }

    #[test]
    fn a_variant_form_finds_what_its_standard_form_finds_and_no_more() {
        // 羣 and 峯: Taiwan's and the old forms of 群 and 峰, which fast2s does not fold.
        let texts = ["群峰叠翠", "羣峯疊翠", "群山与孤峰", "峰群", "羣", "山峯"];
        let docs: Vec<ThreadDoc> = texts.iter().enumerate().map(|(i, t)| thread("s0", &i.to_string(), "帖子", &[("甲", t)], None)).collect();
        let (_dir, c) = one_site_catalog(&docs);
        let found = |q: &str| -> BTreeSet<String> { keys(&c.search_str(q, &everything()).unwrap()) };
        let ids = |is: &[usize]| -> BTreeSet<String> { is.iter().map(|i| format!("s0/{i}")).collect() };
        assert_eq!(found("群峰"), ids(&[0, 1]));
        let pairs = [("羣峯", "群峰"), ("\"羣 峯\"", "\"群 峰\""), ("羣", "群"), ("峯", "峰"), ("title:羣", "title:群"), ("山峯", "山峰")];
        for (variant, plain) in pairs {
            assert_eq!(found(variant), found(plain), "{variant} / {plain}");
        }
        // Not folded: a plain simplified char that OpenCC's Taiwan table calls a variant of another.
        let docs: Vec<ThreadDoc> = ["名著", "穿着"].iter().enumerate().map(|(i, t)| thread("s0", &i.to_string(), "帖子", &[("甲", t)], None)).collect();
        let (_dir, c) = one_site_catalog(&docs);
        assert_eq!(keys(&c.search_str("著", &everything()).unwrap()), ids(&[0]));
        assert_eq!(keys(&c.search_str("着", &everything()).unwrap()), ids(&[1]));
    }

    #[test]
    fn an_unquoted_run_jieba_splits_matches_only_where_it_occurs_as_written() {
        // 4–8 characters drawn from the text, most of which jieba cuts into
        // several words: the hits are exactly the threads holding the run,
        // not every thread holding its words somewhere.
        let f = fixture(300);
        let bodies: Vec<Vec<char>> = f.docs.iter().map(|d| crate::schema::thread_body(d).chars().collect()).collect();
        let mut seed = 7u64;
        let mut below = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % n as u64) as usize
        };
        let (mut tried, mut split) = (0, 0);
        while tried < 60 {
            let i = below(bodies.len());
            let len = 4 + below(5);
            if bodies[i].len() <= len {
                continue;
            }
            let at = below(bodies[i].len() - len);
            let run: String = bodies[i][at..at + len].iter().collect();
            if !run.chars().all(is_cjk) {
                continue;
            }
            tried += 1;
            split += usize::from(query_words(&run).len() > 1);
            check(&f, &run, |d| contains(d, &run, false));
            let top = f.catalog.search_str(&run, &SearchOptions { limit: 1, ..Default::default() }).unwrap();
            assert!(contains(f.docs.iter().find(|d| key(d) == format!("{}/{}", top.hits[0].site, top.hits[0].thread)).unwrap(), &run, false));
        }
        assert!(split > 30, "only {split} of the runs were several jieba words");
    }

    #[test]
    fn mixed_latin_words_are_found_whole_and_by_their_letter_and_digit_runs() {
        let docs = [
            thread("a", "1", "换了iPhone15", &[("x", "用了一周，iPhone15 拍照很好")], None),
            thread("a", "2", "二手", &[("x", "2015年买的IPHONE，还能用")], None),
            thread("a", "3", "smartphone", &[("x", "phone 15 cases")], None),
        ];
        let (_dir, c) = one_site_catalog(&docs);
        let found = |q: &str| keys(&c.search_str(q, &everything()).unwrap()).into_iter().collect::<Vec<_>>();
        assert_eq!(found("iphone15"), ["a/1"]);
        assert_eq!(found("iPhone15"), ["a/1"]);
        assert_eq!(found("iphone"), ["a/1", "a/2"]);
        assert_eq!(found("15"), ["a/1", "a/3"]);
        assert_eq!(found("phone"), ["a/3"]);
        assert_eq!(found("2015年"), ["a/2"]);
        let r = c.search_str("15", &everything()).unwrap();
        let one = r.hits.iter().find(|h| h.thread == "1").unwrap();
        assert_eq!(one.snippet.marked("[", "]"), "用了一周，iPhone[15] 拍照很好");
    }

    #[test]
    fn words_near_each_other_rank_above_words_far_apart() {
        let filler = "天气一般".repeat(20);
        let docs = [
            thread("a", "far", "帖子", &[("x", &format!("酒店{filler}早餐"))], None),
            thread("a", "near", "帖子", &[("x", &format!("酒店的早餐{filler}"))], None),
        ];
        let (_dir, c) = one_site_catalog(&docs);
        for q in ["酒店 早餐", "早餐 酒店"] {
            let r = c.search_str(q, &everything()).unwrap();
            assert_eq!(r.hits.iter().map(|h| h.thread.as_str()).collect::<Vec<_>>(), ["near", "far"], "{q}");
            assert!(r.hits[0].score > r.hits[1].score);
        }
    }

    #[test]
    fn equal_scores_rank_newer_first_then_by_thread_not_by_document_id() {
        let f = fixture(300);
        // A filter alone scores every thread 0.
        let r = f.catalog.search_str("site:s1", &everything()).unwrap();
        assert!(r.hits.iter().all(|h| h.score == 0.0));
        let dates: Vec<Option<String>> = r.hits.iter().map(|h| h.posted.clone()).collect();
        let mut sorted = dates.clone();
        sorted.sort_by(|a, b| b.cmp(a));
        assert_eq!(dates, sorted);
        // Reversed insertion order gives other document ids, not another order.
        let dir = tempfile::tempdir().unwrap();
        let reversed: Vec<&ThreadDoc> = f.docs.iter().filter(|d| d.site == "s1").rev().collect();
        write_index(&dir.path().join("s1.index"), &reversed);
        let other = Catalog::open(dir.path()).unwrap();
        let r2 = other.search_str("site:s1", &everything()).unwrap();
        let ids = |r: &SearchResults| r.hits.iter().map(|h| h.thread.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&r), ids(&r2));
    }

    #[test]
    fn ids_only_hits_are_the_full_hits_without_the_stored_thread() {
        let f = fixture(300);
        for sort in [SortOrder::Relevance, SortOrder::Newest] {
            let opts = SearchOptions { limit: 50, offset: 5, sort, ..Default::default() };
            let full = f.catalog.search_str("书 OR 酒店", &opts).unwrap();
            let ids = f.catalog.search_str("书 OR 酒店", &SearchOptions { ids_only: true, ..opts }).unwrap();
            let strip = |r: &SearchResults| r.hits.iter().map(|h| (h.rank, h.score, h.site.clone(), h.thread.clone())).collect::<Vec<_>>();
            assert_eq!(strip(&full), strip(&ids));
            assert_eq!((full.total, &full.per_site), (ids.total, &ids.per_site));
            assert!(ids.hits.iter().all(|h| h.title.is_empty() && h.snippet.text.is_empty()));
        }
    }

    #[test]
    fn newest_oldest_date_range_and_paging() {
        let f = fixture(300);
        let dated = |r: &SearchResults| r.hits.iter().map(|h| h.posted.clone()).collect::<Vec<_>>();
        let newest = f.catalog.search_str("书", &SearchOptions { sort: SortOrder::Newest, ..everything() }).unwrap();
        let d = dated(&newest);
        let first_undated = d.iter().position(Option::is_none).unwrap_or(d.len());
        assert!(d[first_undated..].iter().all(Option::is_none), "undated threads come last");
        assert!(d[..first_undated].windows(2).all(|w| w[0] >= w[1]), "{d:?}");
        let oldest = f.catalog.search_str("书", &SearchOptions { sort: SortOrder::Oldest, ..everything() }).unwrap();
        let d = dated(&oldest);
        let first_undated = d.iter().position(Option::is_none).unwrap_or(d.len());
        assert!(d[..first_undated].windows(2).all(|w| w[0] <= w[1]), "{d:?}");
        assert_eq!(keys(&newest), keys(&oldest));

        let day = |s: &str| time::Date::parse(s, &time::macros::format_description!("[year]-[month]-[day]")).unwrap();
        let opts = SearchOptions { since: Some(day("2020-03-01")), until: Some(day("2020-03-31")), ..everything() };
        let r = f.catalog.search_str("书", &opts).unwrap();
        let want: BTreeSet<String> = f
            .docs
            .iter()
            .filter(|d| contains(d, "书", false) && d.posted.as_deref().is_some_and(|p| ("2020-03-01".."2020-04-01").contains(&p)))
            .map(key)
            .collect();
        assert!(!want.is_empty());
        assert_eq!(keys(&r), want);

        for sort in [SortOrder::Relevance, SortOrder::Newest] {
            let whole = f.catalog.search_str("书 OR 酒店", &SearchOptions { sort, ..everything() }).unwrap();
            let mut paged = Vec::new();
            let mut offset = 0;
            loop {
                let page = f.catalog.search_str("书 OR 酒店", &SearchOptions { sort, limit: 7, offset, ..everything() }).unwrap();
                assert_eq!(page.total, whole.total);
                if page.hits.is_empty() {
                    break;
                }
                assert_eq!(page.hits[0].rank, offset + 1);
                paged.extend(page.hits.into_iter().map(|h| (h.site, h.thread)));
                offset += 7;
            }
            let whole: Vec<(SiteId, ThreadId)> = whole.hits.into_iter().map(|h| (h.site, h.thread)).collect();
            assert_eq!(paged, whole, "{sort:?}");
        }
        let none = f.catalog.search_str("书", &SearchOptions { limit: 0, ..everything() }).unwrap();
        assert!(none.hits.is_empty() && none.total > 0);
        let huge = f.catalog.search_str("书", &SearchOptions { limit: usize::MAX, offset: 3, ..everything() }).unwrap();
        assert_eq!(huge.hits.len(), none.total - 3);
        let past = f.catalog.search_str("书", &SearchOptions { limit: 10, offset: usize::MAX, ..everything() }).unwrap();
        assert!(past.hits.is_empty() && past.total == none.total);
    }

    #[test]
    fn scores_do_not_depend_on_how_threads_are_split_into_indexes() {
        let docs = synthetic(240);
        let one = tempfile::tempdir().unwrap();
        write_index(&one.path().join("all.index"), &docs.iter().collect::<Vec<_>>());
        let three = tempfile::tempdir().unwrap();
        // Uneven parts, so per-index statistics would differ a lot.
        let parts: [&[ThreadDoc]; 3] = [&docs[..20], &docs[20..100], &docs[100..]];
        for (i, part) in parts.iter().enumerate() {
            write_index(&three.path().join(format!("p{i}.index")), &part.iter().collect::<Vec<_>>());
        }
        let one = Catalog::open(one.path()).unwrap();
        let three = Catalog::open(three.path()).unwrap();
        for q in ["书", "酒店 服务", "\"服务态度\"", "不错 OR 失望", "title:书", "书 -酒店", "author:小明 房间", "这本书 内容"] {
            let a = one.search_str(q, &everything()).unwrap();
            let b = three.search_str(q, &everything()).unwrap();
            assert_eq!(a.total, b.total, "{q}");
            assert!(a.total > 0, "{q}");
            let scores: HashMap<String, Score> = a.hits.iter().map(|h| (format!("{}/{}", h.site, h.thread), h.score)).collect();
            for h in &b.hits {
                let s = scores[&format!("{}/{}", h.site, h.thread)];
                assert!((s - h.score).abs() <= 1e-5, "{q}: {} vs {}", s, h.score);
            }
            let top = |r: &SearchResults| r.hits.iter().take(5).map(|h| h.score).collect::<Vec<_>>();
            assert_eq!(top(&a).len(), top(&b).len());
        }
    }

    #[test]
    fn simplified_finds_traditional_and_back_with_original_snippets() {
        let mut docs: Vec<ThreadDoc> = POEMS
            .lines()
            .enumerate()
            .filter_map(|(i, l)| {
                let mut p = l.split('\t');
                let (title, author, text) = (p.next()?, p.next()?, p.next()?);
                Some(thread("big5", &format!("p{i}"), title, &[(author, text)], None))
            })
            .collect();
        docs.push(thread("big5", "s1", "读书笔记", &[("小明", "这本书值得学习，萬里挑一")], Some("2024-01-01T00:00:00")));
        let (_dir, c) = one_site_catalog(&docs);

        let r = c.search_str("万里", &everything()).unwrap();
        let want: BTreeSet<String> = docs.iter().filter(|d| contains(d, "萬里", false)).map(key).collect();
        assert!(want.len() >= 2, "fixture should hold 萬里 in a poem and the simplified thread");
        assert_eq!(keys(&r), want);
        let poem = r.hits.iter().find(|h| h.thread.starts_with('p')).unwrap();
        assert!(poem.snippet.marked("[", "]").contains("[萬里]"), "{}", poem.snippet.marked("[", "]"));

        let r = c.search_str("學習", &everything()).unwrap();
        assert_eq!(keys(&r), BTreeSet::from(["big5/s1".to_string()]));
        assert!(r.hits[0].snippet.marked("[", "]").contains("[学习]"));
        assert_eq!(keys(&c.search_str("萬里", &everything()).unwrap()), want);
    }

    #[test]
    fn title_and_whole_word_matches_rank_higher() {
        let docs = [
            thread("a", "body", "一般般", &[("x", "这家酒店很好，下次还来")], None),
            thread("a", "title", "酒店很好", &[("x", "这家一般般，下次还来")], None),
            // 店 inside 商店 is a substring match for 店, not a jieba word match.
            thread("a", "sub", "一般般", &[("x", "这家商店很好，下次还来")], None),
            thread("a", "word", "一般般", &[("x", "这家店很好，下次还来")], None),
        ];
        let (_dir, c) = one_site_catalog(&docs);
        let r = c.search_str("酒店", &everything()).unwrap();
        assert_eq!(r.hits.iter().map(|h| h.thread.as_str()).collect::<Vec<_>>(), ["title", "body"]);
        let r = c.search_str("店", &everything()).unwrap();
        assert_eq!(r.total, 4);
        let pos = |t: &str| r.hits.iter().position(|h| h.thread == t).unwrap();
        assert!(pos("word") < pos("sub"), "{:?}", r.hits.iter().map(|h| (&h.thread, h.score)).collect::<Vec<_>>());
    }

    #[test]
    fn malformed_queries_and_unknown_sites_are_errors_not_panics() {
        let f = fixture(30);
        for q in ["\"abc", "site:", "(书", "书)", "-书", "，。！", "书 OR", "a OR -b"] {
            match f.catalog.search_str(q, &everything()) {
                Err(SearchError::Query(e)) => assert!(!e.to_string().is_empty()),
                other => panic!("{q:?}: {:?}", other.map(|r| r.total)),
            }
        }
        let e = f.catalog.search_str("书", &SearchOptions { sites: vec!["nope".parse().unwrap()], ..everything() }).unwrap_err();
        assert!(matches!(e, SearchError::UnknownSite { .. }), "{e}");
        let r = f.catalog.search_str("书", &SearchOptions { sites: vec!["s1".parse().unwrap()], ..everything() }).unwrap();
        assert!(r.hits.iter().all(|h| h.site == "s1") && r.total > 0);
        assert_eq!(r.per_site.keys().collect::<Vec<_>>(), ["s1"]);
    }
}
