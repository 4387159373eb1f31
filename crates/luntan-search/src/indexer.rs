//! The index stage: thread XML → `index/<site>.index`.
//!
//! A thread's document is replaced, never duplicated (`delete_term(key)`
//! before `add_document`; a rebuild's new index needs no delete). Rows
//! move `Extracted → Indexed` only after the commit that holds them
//! returned, so the database is never ahead of the index; a crash in
//! between re-indexes those threads next run, harmlessly.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use luntan_core::contract::{ClaimSession, Hand, Next, StageReport, StageRun, ThreadFailure};
use luntan_core::ids::{SiteId, ThreadId};
use luntan_core::layout::{sync_dir, IndexDir, PathError};
use luntan_core::store::{StoreError, ThreadRow};
use luntan_core::{Stage, Store, ThreadDoc, ThreadState};
use tantivy::index::SegmentId;
use tantivy::indexer::NoMergePolicy;
use tantivy::schema::{Document, Value};
use tantivy::{Index, IndexWriter, TantivyDocument, TantivyError};

use crate::analysis::register_tokenizers;
use crate::schema::LuntanSchema;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{}: {source}", path.display())]
    Tantivy { path: PathBuf, source: TantivyError },
    #[error("{}: built with a different schema; recreate it with `luntan-index --rebuild --site {site}`", path.display())]
    Schema { path: PathBuf, site: String },
    /// Written by an older luntan, before per-post times or before variant
    /// folding (see [`LuntanSchema::is_previous`]): searchable, but new
    /// threads cannot be added to it; [`index_threads`] rebuilds it from the XML.
    #[error("{}: built by an older luntan (before per-post times or variant folding); recreate it with `luntan-index --rebuild --site {site}`", path.display())]
    Previous { path: PathBuf, site: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writer settings.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// tantivy's indexing memory budget, all writer threads together; a
    /// rebuild also merges at most this much of segment files at a time.
    pub writer_mb: usize,
    /// Commit (and move rows) after this many documents, besides once per
    /// site. A rebuild commits once, at the end.
    pub commit_every: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions { writer_mb: 128, commit_every: 5000 }
    }
}

/// Why one thread's XML could not be indexed (the row is failed with it).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Parse { path: PathBuf, source: luntan_core::doc::DocError },
    #[error("{}: names thread {found}, expected {expected}", path.display())]
    Elsewhere { path: PathBuf, found: String, expected: String },
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    /// The threads' outcomes: `done` were indexed; `busy` names the forums
    /// left to the worker writing their index.
    pub threads: StageReport,
    /// XML bytes read.
    pub bytes: u64,
    pub elapsed: Duration,
    pub per_site: BTreeMap<String, usize>,
    /// Threads (or, for a rebuild, forums) left for the next run because
    /// [`IndexOptions::stop`] was set; `None` when the run was not stopped.
    pub stopped_with_left: Option<(usize, &'static str)>,
    /// Forums whose index an older luntan wrote, rebuilt from their XML.
    pub upgraded: Vec<String>,
}

impl IndexReport {
    /// `index: 480 indexed, 2 failed in 3.1s (155 threads/s, 4.2 MB/s)`
    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let stopped = match self.stopped_with_left {
            Some((left, what)) => format!("stopped by Ctrl-C with {left} {what} left for the next run; "),
            None => String::new(),
        };
        let upgraded = match self.upgraded.as_slice() {
            [] => String::new(),
            sites => format!(" ({} rebuilt from XML: written by an older luntan)", sites.join(", ")),
        };
        let busy = match self.threads.busy.as_slice() {
            [] => String::new(),
            sites => format!("; {} left to the worker writing its index", sites.iter().map(SiteId::as_str).collect::<Vec<_>>().join(", ")),
        };
        format!(
            "index: {stopped}{} indexed, {} failed{upgraded}{busy} in {:.1}s ({:.0} threads/s, {:.1} MB/s)",
            self.threads.done,
            self.threads.failed,
            self.elapsed.as_secs_f64(),
            self.threads.done as f64 / secs,
            self.bytes as f64 / 1e6 / secs
        )
    }

    fn merge(&mut self, other: IndexReport) {
        self.threads.merge(other.threads);
        self.bytes += other.bytes;
        for (k, v) in other.per_site {
            *self.per_site.entry(k).or_default() += v;
        }
        self.stopped_with_left = self.stopped_with_left.or(other.stopped_with_left);
        self.upgraded.extend(other.upgraded);
    }
}

/// Opens the luntan index at `path`, creating it (and the directory) when
/// there is none; refuses an index of another schema.
pub fn open_or_create_index(path: &Path) -> Result<Index, IndexError> {
    let schema = LuntanSchema::new();
    let tantivy = |source| IndexError::Tantivy { path: path.to_owned(), source };
    let index = if path.join("meta.json").exists() {
        Index::open_in_dir(path).map_err(tantivy)?
    } else {
        fs::create_dir_all(path).map_err(|source| IndexError::Io { path: path.to_owned(), source })?;
        Index::create_in_dir(path, schema.schema.clone()).map_err(tantivy)?
    };
    if index.schema() != schema.schema {
        let site = path.file_name().map(|n| n.to_string_lossy().trim_end_matches(".index").to_string()).unwrap_or_default();
        if schema.is_previous(&index.schema()) {
            return Err(IndexError::Previous { path: path.to_owned(), site });
        }
        return Err(IndexError::Schema { path: path.to_owned(), site });
    }
    register_tokenizers(&index);
    Ok(index)
}

/// How much document text may wait in tantivy's queue for an indexing
/// thread. tantivy's own bound is 10,000 documents, 100 MB and more of
/// forum threads on top of the writer's budget, and reading XML is several
/// times faster than indexing it, so that queue stays full. A few hundred
/// threads' worth keeps every indexing thread busy.
const BACKLOG_BYTES: usize = 8_000_000;

/// The text of the documents handed to tantivy and not yet indexed.
struct Backlog {
    limit: usize,
    bytes: Mutex<usize>,
    drained: Condvar,
}

impl Backlog {
    fn new(limit: usize) -> Arc<Backlog> {
        Arc::new(Backlog { limit, bytes: Mutex::new(0), drained: Condvar::new() })
    }

    /// Waits until `bytes` more fit under the limit (at once when nothing
    /// waits; after a second without progress, regardless).
    fn admit(self: &Arc<Backlog>, bytes: usize) -> Ticket {
        let mut queued = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        while *queued > 0 && *queued + bytes > self.limit {
            let (q, wait) = self.drained.wait_timeout(queued, Duration::from_secs(1)).unwrap_or_else(PoisonError::into_inner);
            queued = q;
            // An indexing thread that died leaves its documents queued for
            // good; tantivy reports that on a later call, which must not
            // wait here forever.
            if wait.timed_out() {
                break;
            }
        }
        *queued += bytes;
        Ticket { backlog: Arc::clone(self), bytes }
    }
}

/// One document's share of the [`Backlog`], given back when tantivy drops
/// the document, which it does right after indexing it.
struct Ticket {
    backlog: Arc<Backlog>,
    bytes: usize,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut queued = self.backlog.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        *queued = queued.saturating_sub(self.bytes);
        self.backlog.drained.notify_one();
    }
}

/// A document and its [`Ticket`]; tantivy sees the document alone.
struct QueuedDoc {
    doc: TantivyDocument,
    _ticket: Ticket,
}

impl Document for QueuedDoc {
    type Value<'a> = <TantivyDocument as Document>::Value<'a>;
    type FieldsValuesIter<'a> = <TantivyDocument as Document>::FieldsValuesIter<'a>;

    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        self.doc.iter_fields_and_values()
    }
}

/// glibc raises its mmap threshold to the size of each large block freed
/// (up to 32 MB); from then on tantivy's 1 MB arena pages and its hash
/// tables come from the heap, and once freed mostly stay in the process.
/// Measured on a 49,497-thread rebuild, the heap grew from 180 to 300 MB
/// over the run that way. A fixed threshold keeps such blocks in mappings
/// of their own, which go back to the system when freed.
fn return_large_blocks_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only sets a parameter of the allocator, under
            // the allocator's own lock. 128 KiB is glibc's own starting value.
            // The workspace denies unsafe code; this is its one exception.
            #[allow(unsafe_code)]
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
            }
        });
    }
}

/// An open writer on one forum's index.
pub struct SiteWriter {
    path: PathBuf,
    schema: LuntanSchema,
    writer: IndexWriter<QueuedDoc>,
    backlog: Arc<Backlog>,
    /// tantivy's budget, all indexing threads together.
    budget: usize,
    uncommitted: usize,
}

impl SiteWriter {
    pub fn open(path: &Path, opts: &IndexOptions) -> Result<SiteWriter, IndexError> {
        return_large_blocks_when_freed();
        let index = open_or_create_index(path)?;
        let budget = opts.writer_mb.max(15) * 1_000_000;
        // tantivy wants at least 15 MB per indexing thread.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        let threads = cores.min(budget / 20_000_000).max(1);
        let writer = index.writer_with_num_threads(threads, budget).map_err(|source| IndexError::Tantivy { path: path.to_owned(), source })?;
        // A writer killed inside a commit can leave the delete file it was
        // writing (`<segment>.<opstamp>.del`) without the meta.json that names
        // it. tantivy collects such files only after a commit, and this
        // writer's first commit wants that very name again (opstamps restart
        // from the last commit): FileAlreadyExists, seen once in four runs of
        // the SIGKILL crash test. Collecting first removes the leftover.
        writer.garbage_collect_files().wait().map_err(|source| IndexError::Tantivy { path: path.to_owned(), source })?;
        Ok(SiteWriter { path: path.to_owned(), schema: LuntanSchema::new(), writer, backlog: Backlog::new(BACKLOG_BYTES), budget, uncommitted: 0 })
    }

    /// A writer on a new index that is filled in one go and then merged
    /// in bounded steps ([`SiteWriter::finish_fresh`]), instead of merging
    /// while it grows: merges running beside the indexing threads map
    /// their input segments on top of the writer's memory.
    fn open_fresh(path: &Path, opts: &IndexOptions) -> Result<SiteWriter, IndexError> {
        let writer = SiteWriter::open(path, opts)?;
        writer.writer.set_merge_policy(Box::new(NoMergePolicy));
        Ok(writer)
    }

    fn err(&self, source: TantivyError) -> IndexError {
        IndexError::Tantivy { path: self.path.clone(), source }
    }

    /// Adds `doc`, replacing any document of the same thread.
    pub fn add(&mut self, doc: &ThreadDoc) -> Result<(), IndexError> {
        self.writer.delete_term(self.schema.key_term(&doc.site, &doc.thread));
        self.add_new(doc)
    }

    /// Adds `doc` to an index that holds no document of its thread (a
    /// rebuild's new one): no delete for every later segment to apply.
    pub fn add_new(&mut self, doc: &ThreadDoc) -> Result<(), IndexError> {
        let doc = self.schema.document(doc);
        let bytes = doc.iter_fields_and_values().filter_map(|(_, v)| v.as_str()).map(str::len).sum();
        let doc = QueuedDoc { doc, _ticket: self.backlog.admit(bytes) };
        self.writer.add_document(doc).map_err(|e| self.err(e))?;
        self.uncommitted += 1;
        Ok(())
    }

    /// Documents added since the last commit.
    pub fn uncommitted(&self) -> usize {
        self.uncommitted
    }

    /// Makes everything added so far durable and visible.
    pub fn commit(&mut self) -> Result<(), IndexError> {
        self.writer.commit().map_err(|e| self.err(e))?;
        self.uncommitted = 0;
        Ok(())
    }

    /// Commits and waits for background merges, so the process can exit.
    pub fn finish(mut self) -> Result<(), IndexError> {
        self.commit()?;
        let path = self.path.clone();
        self.writer.wait_merging_threads().map_err(|source| IndexError::Tantivy { path, source })
    }

    /// [`SiteWriter::finish`] for [`SiteWriter::open_fresh`]: commits, then,
    /// when there are more than [`MAX_UNMERGED_SEGMENTS`], merges the
    /// segments in groups of at most the writer's budget of files, one
    /// group at a time. A merge reads its inputs through mmap, so each page
    /// of them counts in the process's memory until the merge ends; by now
    /// the indexing threads' memory is free again.
    fn finish_fresh(mut self) -> Result<(), IndexError> {
        self.commit()?;
        let metas = self.writer.index().searchable_segment_metas().map_err(|e| self.err(e))?;
        // A segment's files are named after its id.
        let mut files: Vec<(String, u64)> = Vec::new();
        for entry in fs::read_dir(&self.path).map_err(|source| IndexError::Io { path: self.path.clone(), source })? {
            let entry = entry.map_err(|source| IndexError::Io { path: self.path.clone(), source })?;
            files.push((entry.file_name().to_string_lossy().into_owned(), entry.metadata().map_or(0, |m| m.len())));
        }
        let sized: Vec<(u64, SegmentId)> = metas
            .iter()
            .map(|m| {
                let id = m.id().uuid_string();
                (files.iter().filter(|(name, _)| name.starts_with(&id)).map(|(_, len)| len).sum(), m.id())
            })
            .collect();
        // A live SegmentMeta keeps its segment's files from tantivy's
        // garbage collection, merged or not.
        drop(metas);
        if sized.len() <= MAX_UNMERGED_SEGMENTS {
            return self.finish();
        }
        for group in merge_groups(sized, self.budget as u64) {
            if group.len() > 1 {
                self.writer.merge(&group).wait().map_err(|e| self.err(e))?;
            }
        }
        self.finish()
    }
}

/// A fresh index with this many segments or fewer is left as flushed:
/// merging costs about a third of the CPU that indexing the same text did
/// (measured on 600 threads), and a search over a few segments is as
/// quick. tantivy's default policy waits for eight segments of a size too.
const MAX_UNMERGED_SEGMENTS: usize = 8;

/// Splits segments (`(bytes, id)`) into groups of at most `max_bytes`
/// each (a bigger segment alone), smallest segments first, so that the
/// small ones end up together.
fn merge_groups<T>(mut sized: Vec<(u64, T)>, max_bytes: u64) -> Vec<Vec<T>> {
    sized.sort_by_key(|(bytes, _)| *bytes);
    let mut groups: Vec<Vec<T>> = Vec::new();
    let mut group_bytes = 0;
    for (bytes, id) in sized {
        match groups.last_mut() {
            Some(group) if group_bytes + bytes <= max_bytes => {
                group.push(id);
                group_bytes += bytes;
            }
            _ => {
                groups.push(vec![id]);
                group_bytes = bytes;
            }
        }
    }
    groups
}

/// Reads and checks one thread file; the error names the file.
fn load(path: &Path, site: &SiteId, thread: &ThreadId) -> Result<(ThreadDoc, u64), LoadError> {
    let text = fs::read_to_string(path).map_err(|source| LoadError::Read { path: path.to_owned(), source })?;
    let doc = ThreadDoc::from_xml(&text).map_err(|source| LoadError::Parse { path: path.to_owned(), source })?;
    if &doc.site != site || &doc.thread != thread {
        let (found, expected) = (format!("{}/{}", doc.site, doc.thread), format!("{site}/{thread}"));
        return Err(LoadError::Elsewhere { path: path.to_owned(), found, expected });
    }
    Ok((doc, text.len() as u64))
}

/// Indexes every `Extracted` thread (of one site, or all), then moves the
/// rows to `Indexed`. The run's [`ClaimSession`] hands out one forum at a
/// time (under its site lock when workers share the crawl: one writer per
/// forum's index; a forum another worker holds is left to it). A missing or
/// bad XML fails that row and the run goes on. Progress advances per
/// thread; once the run's stop is set, what is indexed so far is committed
/// and its rows moved, and the rest wait.
pub fn index_threads(run: &StageRun, store: &mut Store, index: &IndexDir, site: Option<&SiteId>, opts: &IndexOptions) -> Result<IndexReport, IndexError> {
    let started = Instant::now();
    let mut session = ClaimSession::open(run, store, site, Hand::Sites)?;
    run.progress().grow(store.threads(site.map(SiteId::as_str), ThreadState::Extracted)?.len() as u64);
    let mut report = IndexReport::default();
    let mut skipped = 0;
    while !run.stopped() {
        let group = match session.next(store, None) {
            Ok(Next::Rows(rows)) => rows,
            Ok(Next::Wait(_) | Next::Done) => break,
            Err(e) => {
                session.abandon(store)?;
                return Err(e.into());
            }
        };
        // A busy forum's threads were counted skipped by the session.
        run.progress().advance((session.report().skipped - skipped) as u64);
        skipped = session.report().skipped;
        let Some(first) = group.first() else { continue };
        let site_id = first.site.clone();
        if let Err(e) = index_group(run, store, &mut session, index, &site_id, &group, opts, &mut report) {
            session.abandon(store)?;
            return Err(e);
        }
    }
    let stopped = run.stopped();
    report.threads.merge(session.finish(store, stopped)?);
    if stopped {
        report.stopped_with_left = Some((report.threads.left, "threads"));
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// Indexes one forum's threads (`group`, all `Extracted`) into its index,
/// under its site lock; see [`index_threads`].
#[allow(clippy::too_many_arguments)]
fn index_group(
    run: &StageRun,
    store: &mut Store,
    session: &mut ClaimSession,
    index: &IndexDir,
    site_id: &SiteId,
    group: &[ThreadRow],
    opts: &IndexOptions,
    report: &mut IndexReport,
) -> Result<(), IndexError> {
    let data = run.data();
    let mut writer = match SiteWriter::open(&index.site_index(site_id), opts) {
        Err(IndexError::Previous { .. }) => {
            // Every XML file of the forum, this group's included, goes
            // into a new index; their rows move with it.
            let rebuilt = rebuild_unlocked(run, Some(&mut *store), index, site_id, opts)?;
            run.progress().advance(group.len() as u64);
            if rebuilt.stopped_with_left.is_none() {
                report.upgraded.push(site_id.to_string());
            }
            report.merge(rebuilt);
            return Ok(());
        }
        other => other?,
    };
    let mut pending: Vec<(SiteId, ThreadId)> = Vec::new();
    for row in group {
        if run.stopped() {
            // What was added is committed below; the rest stays `Extracted`.
            break;
        }
        match row.saved_location() {
            None => session.fail(store, row, format!("thread {}: no save date, so no XML", row.key()))?,
            Some(loc) => match load(&data.xml_path(&loc), site_id, &row.thread) {
                Err(reason) => session.fail(store, row, reason.to_string())?,
                Ok((doc, bytes)) => {
                    writer.add(&doc)?;
                    report.bytes += bytes;
                    pending.push((row.site.clone(), row.thread.clone()));
                }
            },
        }
        if pending.len() >= opts.commit_every.max(1) {
            writer.commit()?;
            rows_indexed(store, session, report, site_id, &mut pending)?;
        }
        run.progress().advance(1);
    }
    writer.finish()?;
    rows_indexed(store, session, report, site_id, &mut pending)
}

/// Moves the rows of committed threads to `Indexed` and counts them.
fn rows_indexed(
    store: &mut Store,
    session: &mut ClaimSession,
    report: &mut IndexReport,
    site: &SiteId,
    pending: &mut Vec<(SiteId, ThreadId)>,
) -> Result<(), IndexError> {
    // Counted as moved: a row another worker moved first is not this run's.
    let moved = store.transition_many(pending, ThreadState::Extracted, ThreadState::Indexed)?;
    session.done(moved);
    *report.per_site.entry(site.to_string()).or_default() += moved;
    pending.clear();
    Ok(())
}

/// Recreates `index/<site>.index` from the XML files on disk alone (no
/// network, whatever the rows say). The new index is built beside the old
/// one and swapped in when complete, so searches never see it half built.
/// With a store, rebuilt threads whose rows are `Extracted` become `Indexed`.
/// A stop drops the half-built index and keeps the old one. Workers sharing
/// the crawl ([`StageRun::is_shared`]) hold the forum's index by its site
/// lock, as [`index_threads`] does: a forum another worker is writing is
/// left alone (`busy`), not swapped from under it.
pub fn rebuild_site(run: &StageRun, store: Option<&mut Store>, index: &IndexDir, site: &SiteId, opts: &IndexOptions) -> Result<IndexReport, IndexError> {
    let store = match store {
        Some(store) if run.is_shared() => store,
        store => return rebuild_unlocked(run, store, index, site, opts),
    };
    let lease = run.claims().lease;
    if !store.lock_site(Stage::Index, site.as_str(), lease)? {
        let threads = StageReport { busy: vec![site.clone()], ..StageReport::default() };
        return Ok(IndexReport { threads, ..IndexReport::default() });
    }
    // The keeper renews the lock for as long as the rebuild takes.
    let rebuilt = match store.keep_leases(lease) {
        Ok(_keeper) => rebuild_unlocked(run, Some(&mut *store), index, site, opts),
        Err(e) => Err(e.into()),
    };
    store.unlock_site(Stage::Index, site.as_str())?;
    rebuilt
}

/// [`rebuild_site`] once the forum's index is this run's to write.
fn rebuild_unlocked(run: &StageRun, store: Option<&mut Store>, index: &IndexDir, site: &SiteId, opts: &IndexOptions) -> Result<IndexReport, IndexError> {
    let started = Instant::now();
    let files = run.data().thread_xml_files(site)?;
    let final_path = index.site_index(site);
    let (building, old) = index.rebuild_paths(site);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| IndexError::Io { path, source }
    };
    for leftover in [&building, &old] {
        if leftover.exists() {
            fs::remove_dir_all(leftover).map_err(io(leftover))?;
        }
    }
    let mut report = IndexReport::default();
    // Nobody sees the new index before the swap, so it is committed once,
    // at the end, whatever `commit_every` says.
    let mut writer = SiteWriter::open_fresh(&building, opts)?;
    let mut keys = Vec::new();
    run.progress().grow(files.len() as u64);
    for (thread, path) in &files {
        if run.stopped() {
            // Half an index must not replace a whole one.
            drop(writer);
            fs::remove_dir_all(&building).map_err(io(&building))?;
            return Ok(IndexReport {
                elapsed: started.elapsed(),
                stopped_with_left: Some((1, "forum to rebuild (its old index is unchanged)")),
                ..IndexReport::default()
            });
        }
        match load(path, site, thread) {
            Ok((doc, bytes)) => {
                writer.add_new(&doc)?;
                report.bytes += bytes;
                keys.push((site.clone(), thread.clone()));
            }
            // No row moves: a rebuild reads files, whatever the rows say.
            Err(reason) => {
                report.threads.failed += 1;
                report.threads.failures.push(ThreadFailure { site: site.clone(), thread: thread.clone(), reason: reason.to_string() });
            }
        }
        run.progress().advance(1);
    }
    writer.finish_fresh()?;
    if final_path.exists() {
        fs::rename(&final_path, &old).map_err(io(&final_path))?;
    }
    fs::rename(&building, &final_path).map_err(io(&building))?;
    sync_dir(index.root()).map_err(io(index.root()))?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(io(&old))?;
    }
    if let Some(store) = store {
        store.transition_many(&keys, ThreadState::Extracted, ThreadState::Indexed)?;
    }
    report.threads.done = keys.len();
    report.per_site.insert(site.to_string(), keys.len());
    report.elapsed = started.elapsed();
    Ok(report)
}

/// [`rebuild_site`] for every site with a `pages/<site>/` directory.
pub fn rebuild_all(run: &StageRun, mut store: Option<&mut Store>, index: &IndexDir, opts: &IndexOptions) -> Result<IndexReport, IndexError> {
    let started = Instant::now();
    let sites = run.data().page_sites()?;
    let mut report = IndexReport::default();
    for (n, site) in sites.iter().enumerate() {
        let rebuilt = if run.stopped() { None } else { Some(rebuild_site(run, store.as_deref_mut(), index, site, opts)?) };
        let stopped_here = rebuilt.as_ref().is_none_or(|r| r.stopped_with_left.is_some());
        report.merge(rebuilt.unwrap_or_default());
        if stopped_here {
            report.stopped_with_left = Some((sites.len() - n, "forums to rebuild (their old indexes are unchanged)"));
            break;
        }
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use luntan_core::contract::{Progress, Stop};
    use luntan_core::ids::{BoardId, SaveDate, ThreadId, ThreadLoc};
    use luntan_core::layout::write_atomic;
    use luntan_core::store::{NewThread, Update};
    use luntan_core::DataDir;

    use super::*;
    use crate::search::{Catalog, SearchOptions};
    use crate::testutil::{reviews, thread};

    fn everything() -> SearchOptions {
        SearchOptions { limit: 1000, ..Default::default() }
    }

    #[test]
    fn indexing_the_same_thread_twice_leaves_one_document() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("dz.index");
        let opts = IndexOptions { writer_mb: 20, commit_every: 10 };
        let titled = |title| thread("dz", "7", title, &[("a", "考研经验")], None);
        let mut w = SiteWriter::open(&path, &opts).unwrap();
        w.add(&titled("旧标题")).unwrap();
        w.add(&titled("新标题")).unwrap();
        w.finish().unwrap();
        // And again in a later run, after a commit.
        let mut w = SiteWriter::open(&path, &opts).unwrap();
        w.add(&titled("最新标题")).unwrap();
        w.finish().unwrap();
        let c = Catalog::open(t.path()).unwrap();
        assert_eq!(c.num_docs(), 1);
        let r = c.search_str("考研", &everything()).unwrap();
        assert_eq!(r.total, 1);
        assert_eq!(r.hits[0].title, "最新标题");
    }

    #[test]
    fn a_fresh_index_of_many_segments_ends_merged_with_no_stale_files() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("dz.index");
        let opts = IndexOptions { writer_mb: 40, commit_every: 1 };
        let mut w = SiteWriter::open_fresh(&path, &opts).unwrap();
        let r = reviews();
        let n = MAX_UNMERGED_SEGMENTS + 1;
        for (i, text) in r.iter().take(n).enumerate() {
            w.add_new(&thread("dz", &i.to_string(), &format!("标题{i}"), &[("a", text)], None)).unwrap();
            // A segment per commit, one more than is left unmerged.
            w.commit().unwrap();
        }
        assert_eq!(w.writer.index().searchable_segment_metas().unwrap().len(), n);
        w.finish_fresh().unwrap();
        let index = Index::open_in_dir(&path).unwrap();
        let segments = index.searchable_segment_metas().unwrap();
        assert_eq!(segments.len(), 1, "a few KB of segments fit one merge");
        let live = segments[0].id().uuid_string();
        for entry in std::fs::read_dir(&path).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(name.starts_with(&live) || name.starts_with("meta.json") || name.starts_with(".managed") || name.ends_with(".lock"), "stale {name}");
        }
        let c = Catalog::open(t.path()).unwrap();
        assert_eq!(c.num_docs(), n as u64);
        assert_eq!(c.search_str("标题3", &everything()).unwrap().hits[0].thread, "3");

        // As many segments as are left unmerged stay as they are.
        let path = t.path().join("bbs.index");
        let mut w = SiteWriter::open_fresh(&path, &opts).unwrap();
        for (i, text) in r.iter().take(MAX_UNMERGED_SEGMENTS).enumerate() {
            w.add_new(&thread("bbs", &i.to_string(), "标题", &[("a", text)], None)).unwrap();
            w.commit().unwrap();
        }
        w.finish_fresh().unwrap();
        assert_eq!(Index::open_in_dir(&path).unwrap().searchable_segment_metas().unwrap().len(), MAX_UNMERGED_SEGMENTS);
    }

    #[test]
    fn merge_groups_stay_under_the_bound_smallest_first() {
        let groups = merge_groups(vec![(50, 'a'), (10, 'b'), (200, 'c'), (30, 'd'), (60, 'e'), (40, 'f')], 100);
        assert_eq!(groups, vec![vec!['b', 'd', 'f'], vec!['a'], vec!['e'], vec!['c']]);
        assert!(merge_groups(Vec::<(u64, u8)>::new(), 100).is_empty());
    }

    #[test]
    fn the_backlog_holds_the_reader_back_until_text_is_indexed() {
        let backlog = Backlog::new(100);
        let first = backlog.admit(60);
        let indexed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let worker = {
            let indexed = Arc::clone(&indexed);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                indexed.store(true, std::sync::atomic::Ordering::SeqCst);
                drop(first);
            })
        };
        let second = backlog.admit(60);
        assert!(indexed.load(std::sync::atomic::Ordering::SeqCst), "admitted 120 bytes under a limit of 100");
        worker.join().unwrap();
        assert_eq!(*backlog.bytes.lock().unwrap(), 60);
        drop(second);
        // A document bigger than the limit still goes in when nothing waits.
        let big = backlog.admit(500);
        assert_eq!(*backlog.bytes.lock().unwrap(), 500);
        drop(big);
        assert_eq!(*backlog.bytes.lock().unwrap(), 0);
    }

    #[test]
    fn a_different_schema_is_refused_with_the_path() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("old.index");
        let mut b = tantivy::schema::Schema::builder();
        b.add_text_field("title", tantivy::schema::TEXT);
        std::fs::create_dir_all(&path).unwrap();
        Index::create_in_dir(&path, b.build()).unwrap();
        let e = open_or_create_index(&path).err().unwrap();
        assert!(e.to_string().contains("old.index") && e.to_string().contains("--rebuild --site old"), "{e}");
        let c = Catalog::open(t.path()).unwrap();
        assert!(c.is_empty());
        assert!(c.skipped()[0].to_string().contains("old.index"), "{}", c.skipped()[0]);
        assert!(Catalog::open_paths(&[path]).is_err());
    }

    /// An index as an older luntan wrote it, of schema `old` (today's
    /// fields up to one added later, or under the previous analyzers' names),
    /// holding `docs`.
    fn previous_index(path: &Path, old: &tantivy::schema::Schema, docs: &[ThreadDoc]) {
        let now = LuntanSchema::new();
        assert!(now.is_previous(old) && !now.is_previous(&now.schema));
        fs::create_dir_all(path).unwrap();
        let index = Index::create_in_dir(path, old.clone()).unwrap();
        register_tokenizers(&index);
        let mut w: IndexWriter = index.writer(20_000_000).unwrap();
        for d in docs {
            // Today's document less any field that did not exist then.
            let json = now.document(d).to_json(&now.schema);
            let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
            v.as_object_mut().unwrap().retain(|name, _| old.get_field(name).is_ok());
            w.add_document(TantivyDocument::parse_json(old, &v.to_string()).unwrap()).unwrap();
        }
        w.commit().unwrap();
    }

    /// Today's fields before `first_new`, as an index written before it was added has them.
    fn schema_before(first_new: tantivy::schema::Field) -> tantivy::schema::Schema {
        let now = LuntanSchema::new();
        let mut b = tantivy::schema::Schema::builder();
        for (_, entry) in now.schema.fields().take_while(|(field, _)| *field != first_new) {
            b.add_field(entry.clone());
        }
        b.build()
    }

    #[test]
    fn an_index_written_before_post_times_is_searched_and_rebuilt_by_the_next_index_run() {
        searched_then_rebuilt(&schema_before(LuntanSchema::new().post_times), 0);
    }

    #[test]
    fn an_index_written_before_the_conversation_fields_is_searched_and_rebuilt_by_the_next_index_run() {
        searched_then_rebuilt(&schema_before(LuntanSchema::new().author_ids), 2);
    }

    /// Regression: a filter on a field an older index lacks asked tantivy
    /// for that field's entry, out of the old schema's bounds (a panic).
    #[test]
    fn a_filter_on_a_field_an_older_index_lacks_matches_nothing_there() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("old.index");
        let mut doc = thread("old", "1", "帖子", &[("小明", "看这里"), ("小红", "好")], None);
        doc.posts[0].id = Some("p1".into());
        doc.posts[0].author_id = Some("42".into());
        doc.posts[0].links = vec![luntan_core::doc::Link { href: "https://m.weibo.cn/1".into(), text: "微博".into() }];
        doc.posts[1].reply_to = Some("p1".into());
        previous_index(&path, &schema_before(LuntanSchema::new().author_ids), &[doc]);
        let c = Catalog::open_paths(&[path]).unwrap();
        for q in ["link:weibo.cn", "author:42", "reply-to:42", "reply-to:小明"] {
            let r = c.search(&crate::query::Query::parse(q).unwrap(), &everything()).unwrap();
            assert_eq!(r.total, 0, "{q}");
        }
        let all = c.search(&crate::query::Query::parse("帖子 author:小明").unwrap(), &everything()).unwrap();
        assert_eq!(all.total, 1);
        // Words are still found where an index has no quote fields, by one gram (a sum of terms) or several.
        for q in ["好", "看这里", "\"看这里\""] {
            assert_eq!(c.search_str(q, &everything()).unwrap().total, 1, "{q}");
        }
    }

    #[test]
    fn an_index_of_the_previous_analysis_is_searched_and_rebuilt_by_the_next_index_run() {
        // Its terms were made without variant folding; same fields, other analyzer names.
        let old = LuntanSchema::with_tokenizers(crate::analysis::PREVIOUS_TOKENIZERS.0, crate::analysis::PREVIOUS_TOKENIZERS.1);
        searched_then_rebuilt(&old.schema, 2);
    }

    /// An index of schema `old` holding threads 1 and 2 (with `old_posts`
    /// posts counted by trends) is searched as it is, refused by a writer,
    /// and rebuilt from the XML, thread 3 included, by the next index run.
    fn searched_then_rebuilt(old: &tantivy::schema::Schema, old_posts: u64) {
        let rows = [("dz", "1"), ("dz", "2"), ("dz", "3")];
        // Threads 1 and 2 were indexed by the older luntan; 3 is new since.
        let mut c = crawl(&rows, &rows, &[]);
        let day = |th| c.data.xml_path(&loc("dz", th, "20261130"));
        let docs: Vec<ThreadDoc> = ["1", "2"].iter().map(|th| ThreadDoc::from_xml(&fs::read_to_string(day(th)).unwrap()).unwrap()).collect();
        for th in ["1", "2"] {
            c.store.transition("dz", th, ThreadState::Extracted, ThreadState::Indexed, &Update::default()).unwrap();
        }
        let dz = c.index.site_index(&SiteId::parse("dz").unwrap());
        previous_index(&dz, old, &docs);

        // Searched as it is (with no per-post times for trends when it has none).
        let cat = Catalog::open(c.index.root()).unwrap();
        assert!(cat.skipped().is_empty(), "{:?}", cat.skipped());
        assert_eq!(cat.search_str("帖子", &everything()).unwrap().total, 2);
        let q = crate::query::Query::parse("帖子").unwrap();
        let trend = cat.trend(&q, crate::trend::Interval::Month, &[]).unwrap();
        assert_eq!((trend.totals["dz"], trend.post_totals["dz"]), (2, old_posts));
        // A writer refuses it by name; the stage rebuilds it instead.
        let e = SiteWriter::open(&dz, &IndexOptions::default()).err().unwrap();
        assert!(matches!(e, IndexError::Previous { .. }) && e.to_string().contains("dz.index"), "{e}");
        drop(cat);

        let report = index_threads(&c.run(), &mut c.store, &c.index, None, &IndexOptions { writer_mb: 20, ..IndexOptions::default() }).unwrap();
        assert_eq!((report.threads.done, report.threads.failed, report.upgraded.as_slice()), (3, 0, &["dz".to_string()][..]));
        assert!(report.summary().contains("dz rebuilt from XML"), "{}", report.summary());
        assert_eq!(c.store.thread("dz", "3").unwrap().unwrap().state, ThreadState::Indexed);
        let cat = Catalog::open(c.index.root()).unwrap();
        assert_eq!(cat.search_str("帖子", &everything()).unwrap().total, 3);
        let trend = cat.trend(&q, crate::trend::Interval::Month, &[]).unwrap();
        assert_eq!((trend.totals["dz"], trend.post_totals["dz"]), (3, 3));
        assert_eq!(Index::open_in_dir(&dz).unwrap().schema(), LuntanSchema::new().schema);
        // Upgraded once: the next run has nothing to do.
        let again = index_threads(&c.run(), &mut c.store, &c.index, None, &IndexOptions::default()).unwrap();
        assert_eq!((again.threads.done, again.upgraded.len()), (0, 0));
    }

    struct Crawl {
        _t: tempfile::TempDir,
        data: DataDir,
        store: Store,
        index: IndexDir,
    }

    impl Crawl {
        fn run(&self) -> StageRun {
            StageRun::begin(&self.data, Stage::Index, Stop::new()).unwrap()
        }

        /// A run whose stop is set once `n` threads are done, as a Ctrl-C then would.
        fn run_stopped_after(&self, n: u64) -> StageRun {
            let stop = Stop::new();
            let progress = Arc::new(StopAfter { n, done: AtomicU64::new(0), stop: stop.clone() });
            StageRun::begin(&self.data, Stage::Index, stop).unwrap().with_progress(progress)
        }
    }

    struct StopAfter {
        n: u64,
        done: AtomicU64,
        stop: Stop,
    }

    impl Progress for StopAfter {
        fn grow(&self, _: u64) {}
        fn advance(&self, n: u64) {
            if self.done.fetch_add(n, Ordering::SeqCst) + n >= self.n {
                self.stop.set();
            }
        }
    }

    /// Counts progress calls.
    #[derive(Default)]
    struct Count {
        grown: AtomicU64,
        done: AtomicU64,
    }

    impl Progress for Count {
        fn grow(&self, n: u64) {
            self.grown.fetch_add(n, Ordering::SeqCst);
        }
        fn advance(&self, n: u64) {
            self.done.fetch_add(n, Ordering::SeqCst);
        }
    }

    fn loc(site: &str, thread: &str, day: &str) -> ThreadLoc {
        ThreadLoc {
            site: SiteId::parse(site).unwrap(),
            board: BoardId::parse("2").unwrap(),
            thread: ThreadId::parse(thread).unwrap(),
            saved: SaveDate::parse(day).unwrap(),
        }
    }

    /// A crawl whose rows are all `Extracted`; XML is written only for the
    /// threads in `good` (plus garbage for `bad`).
    fn crawl(rows: &[(&str, &str)], good: &[(&str, &str)], bad: &[(&str, &str)]) -> Crawl {
        let t = tempfile::tempdir().unwrap();
        let data = DataDir::new(t.path().join("data"));
        let mut store = Store::open(&data.db_path()).unwrap();
        let r = reviews();
        let new: Vec<NewThread> =
            rows.iter().map(|(s, th)| NewThread::new(s.parse().unwrap(), "2".parse().unwrap(), th.parse().unwrap(), format!("http://{s}/{th}"))).collect();
        store.insert_new_threads(&new).unwrap();
        for (i, (s, th)) in rows.iter().enumerate() {
            let up = Update { save_date: Some("20261130".parse().unwrap()), ..Default::default() };
            assert!(store.transition(s, th, ThreadState::Discovered, ThreadState::Saved, &up).unwrap());
            assert!(store.transition(s, th, ThreadState::Saved, ThreadState::Extracted, &Update::default()).unwrap());
            let path = data.xml_path(&loc(s, th, "20261130"));
            if good.contains(&(s, th)) {
                let mut d = thread(s, th, &format!("帖子{th}"), &[("小明", r[i])], Some("2024-03-05T12:34:00"));
                d.board = "2".parse().unwrap();
                d.posts[0].time = d.posted.clone();
                write_atomic(&path, d.to_xml().as_bytes()).unwrap();
            } else if bad.contains(&(s, th)) {
                write_atomic(&path, b"<thread><post floor=\"x\"></post></thread>").unwrap();
            }
        }
        let index = IndexDir::new(t.path().join("index"));
        Crawl { _t: t, data, store, index }
    }

    #[test]
    fn rows_move_after_the_commit_and_bad_files_fail_their_row_only() {
        let rows = [("dz", "1"), ("dz", "2"), ("dz", "3"), ("dz", "4"), ("dz", "5"), ("bbs", "9")];
        let good = [("dz", "1"), ("dz", "2"), ("dz", "3"), ("bbs", "9")];
        let mut c = crawl(&rows, &good, &[("dz", "5")]);
        let opts = IndexOptions { writer_mb: 20, commit_every: 2 };
        let count = Arc::new(Count::default());
        let run = c.run().with_progress(count.clone());
        let report = index_threads(&run, &mut c.store, &c.index, None, &opts).unwrap();
        assert_eq!((count.grown.load(Ordering::SeqCst), count.done.load(Ordering::SeqCst)), (6, 6));
        assert_eq!((report.threads.done, report.threads.failed), (4, 2));
        assert_eq!(report.per_site.get("dz"), Some(&3));
        assert!(report.summary().starts_with("index: 4 indexed, 2 failed in "), "{}", report.summary());
        for (s, th) in good {
            assert_eq!(c.store.thread(s, th).unwrap().unwrap().state, ThreadState::Indexed);
        }
        let missing = c.store.thread("dz", "4").unwrap().unwrap();
        assert_eq!(missing.state, ThreadState::Failed);
        assert_eq!(missing.fail_stage.map(|s| s.as_str()), Some("index"));
        assert!(missing.fail_reason.unwrap().contains("article4.xml"));
        assert!(c.store.thread("dz", "5").unwrap().unwrap().fail_reason.unwrap().contains("article5.xml"));

        let cat = Catalog::open(c.index.root()).unwrap();
        assert_eq!(cat.sites(), ["bbs", "dz"]);
        assert_eq!(cat.num_docs(), 4);
        assert_eq!(cat.search_str("帖子", &everything()).unwrap().total, 4);

        let again = index_threads(&run, &mut c.store, &c.index, None, &opts).unwrap();
        assert_eq!((again.threads.done, again.threads.failed), (0, 0));
    }

    #[test]
    fn a_stopped_run_commits_what_it_added_and_the_next_run_does_the_rest() {
        let rows = [("dz", "1"), ("dz", "2"), ("dz", "3"), ("dz", "4"), ("dz", "5")];
        let mut c = crawl(&rows, &rows, &[]);
        let opts = IndexOptions { writer_mb: 20, commit_every: 1000 };
        // Ctrl-C while the third thread is being indexed.
        let report = index_threads(&c.run_stopped_after(3), &mut c.store, &c.index, None, &opts).unwrap();
        assert_eq!((report.threads.done, report.stopped_with_left), (3, Some((2, "threads"))));
        assert!(report.summary().starts_with("index: stopped by Ctrl-C with 2 threads left"), "{}", report.summary());
        // The three are committed (not only added) and their rows moved.
        assert_eq!(Catalog::open(c.index.root()).unwrap().num_docs(), 3);
        let indexed = rows.iter().filter(|(s, th)| c.store.thread(s, th).unwrap().unwrap().state == ThreadState::Indexed).count();
        assert_eq!(indexed, 3);
        let rest = IndexOptions { writer_mb: 20, ..IndexOptions::default() };
        let again = index_threads(&c.run(), &mut c.store, &c.index, None, &rest).unwrap();
        assert_eq!((again.threads.done, again.stopped_with_left), (2, None));
        assert_eq!(Catalog::open(c.index.root()).unwrap().num_docs(), 5);
    }

    #[test]
    fn a_stopped_rebuild_keeps_the_old_index_whole() {
        let rows = [("dz", "1"), ("dz", "2"), ("dz", "3"), ("dz", "4")];
        let mut c = crawl(&rows, &rows, &[]);
        let opts = IndexOptions { writer_mb: 20, ..IndexOptions::default() };
        index_threads(&c.run(), &mut c.store, &c.index, None, &opts).unwrap();
        let report = rebuild_all(&c.run_stopped_after(2), None, &c.index, &opts).unwrap();
        assert_eq!(report.stopped_with_left.map(|(n, _)| n), Some(1), "{}", report.summary());
        let names: Vec<String> = fs::read_dir(c.index.root()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["dz.index"], "a stopped rebuild leaves no half-built directory");
        assert_eq!(Catalog::open(c.index.root()).unwrap().num_docs(), 4);
    }

    #[test]
    fn a_shared_rebuild_leaves_a_forum_whose_index_another_worker_writes_and_takes_it_once_free() {
        let rows = [("dz", "1"), ("dz", "2")];
        let mut c = crawl(&rows, &rows, &[]);
        let opts = IndexOptions { writer_mb: 20, ..IndexOptions::default() };
        index_threads(&c.run(), &mut c.store, &c.index, None, &opts).unwrap();
        // A thread only the rebuild would add, from its file.
        let mut more = thread("dz", "3", "第三帖", &[("小红", "只在文件里")], None);
        more.board = "2".parse().unwrap();
        write_atomic(&c.data.xml_path(&loc("dz", "3", "20261130")), more.to_xml().as_bytes()).unwrap();
        let mut other = Store::open(&c.data.db_path()).unwrap();
        other.set_worker("another-worker");
        assert!(other.lock_site(Stage::Index, "dz", Duration::from_secs(600)).unwrap());
        let shared = StageRun::begin_shared(&c.data, Stage::Index, Stop::new()).unwrap();
        let dz = SiteId::parse("dz").unwrap();
        let busy = rebuild_site(&shared, Some(&mut c.store), &c.index, &dz, &opts).unwrap();
        assert_eq!((busy.threads.done, busy.threads.busy.iter().map(|s| s.as_str()).collect::<Vec<_>>()), (0, vec!["dz"]), "{}", busy.summary());
        assert_eq!(Catalog::open(c.index.root()).unwrap().num_docs(), 2, "the other worker's index is untouched");
        other.unlock_site(Stage::Index, "dz").unwrap();
        let rebuilt = rebuild_site(&shared, Some(&mut c.store), &c.index, &dz, &opts).unwrap();
        assert_eq!((rebuilt.threads.done, rebuilt.threads.busy.len()), (3, 0));
        assert_eq!(Catalog::open(c.index.root()).unwrap().num_docs(), 3);
        assert!(other.lock_site(Stage::Index, "dz", Duration::from_secs(600)).unwrap(), "the rebuild gave the forum's lock back");
    }

    #[test]
    fn site_option_indexes_only_that_forum() {
        let rows = [("dz", "1"), ("bbs", "9")];
        let mut c = crawl(&rows, &rows, &[]);
        let report = index_threads(&c.run(), &mut c.store, &c.index, Some(&"bbs".parse().unwrap()), &IndexOptions::default()).unwrap();
        assert_eq!(report.threads.done, 1);
        assert_eq!(c.store.thread("dz", "1").unwrap().unwrap().state, ThreadState::Extracted);
        assert_eq!(Catalog::open(c.index.root()).unwrap().sites(), ["bbs"]);
    }

    #[test]
    fn rebuild_recreates_the_index_from_files_alone() {
        let rows = [("dz", "1"), ("dz", "2"), ("dz", "3")];
        let mut c = crawl(&rows, &[("dz", "1"), ("dz", "2")], &[("dz", "3")]);
        let opts = IndexOptions { writer_mb: 20, commit_every: 1 };
        let run = c.run();
        index_threads(&run, &mut c.store, &c.index, None, &opts).unwrap();
        // Thread 2 saved again on a later day with a new title: the later file wins.
        let mut newer = thread("dz", "2", "更新后的帖子", &[("老王", "重新保存")], None);
        newer.board = "2".parse().unwrap();
        write_atomic(&c.data.xml_path(&loc("dz", "2", "20261201")), newer.to_xml().as_bytes()).unwrap();
        // A thread the database has as Extracted but never indexed.
        c.store.insert_new_threads(&[NewThread::new("dz".parse().unwrap(), "2".parse().unwrap(), "8".parse().unwrap(), "u".into())]).unwrap();
        let up = Update { save_date: Some("20261130".parse().unwrap()), ..Default::default() };
        c.store.transition("dz", "8", ThreadState::Discovered, ThreadState::Saved, &up).unwrap();
        c.store.transition("dz", "8", ThreadState::Saved, ThreadState::Extracted, &Update::default()).unwrap();
        let mut d8 = thread("dz", "8", "第八个帖子", &[("x", "内容")], None);
        d8.board = "2".parse().unwrap();
        write_atomic(&c.data.xml_path(&loc("dz", "8", "20261130")), d8.to_xml().as_bytes()).unwrap();
        // Something a search has open must not block the swap.
        let before = Catalog::open(c.index.root()).unwrap();

        let dz = SiteId::parse("dz").unwrap();
        let report = rebuild_site(&run, Some(&mut c.store), &c.index, &dz, &opts).unwrap();
        assert_eq!((report.threads.done, report.threads.failed), (3, 1));
        assert!(report.threads.failures[0].reason.contains("article3.xml"));
        assert_eq!(c.store.thread("dz", "8").unwrap().unwrap().state, ThreadState::Indexed);
        // A row failed earlier stays failed: a rebuild does not depend on, or fix, row states.
        assert_eq!(c.store.thread("dz", "3").unwrap().unwrap().state, ThreadState::Failed);

        let cat = Catalog::open(c.index.root()).unwrap();
        assert_eq!(cat.num_docs(), 3);
        let r = cat.search_str("更新", &everything()).unwrap();
        assert_eq!(r.hits.iter().map(|h| h.thread.as_str()).collect::<Vec<_>>(), ["2"]);
        let names: Vec<String> = std::fs::read_dir(c.index.root()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["dz.index"]);
        drop(before);

        let all = rebuild_all(&run, None, &c.index, &opts).unwrap();
        assert_eq!(all.threads.done, 3);
        assert!(rebuild_site(&run, None, &c.index, &SiteId::parse("nosuch").unwrap(), &opts).is_err());
    }
}
