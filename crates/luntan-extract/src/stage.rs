//! The extract stage: every `Saved` thread → `article<T>.xml` → `Extracted`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::time::{Duration, Instant};

use encoding_rs::Encoding;
use luntan_core::contract::{ClaimSession, Hand, Next, StageReport, StageRun};
use luntan_core::ids::SiteId;
use luntan_core::layout::write_atomic;
use luntan_core::store::{ThreadRow, Update};
use luntan_core::{DataDir, Site, Store, ThreadDoc, ThreadState};
use rayon::prelude::*;

use crate::parse::{extract_thread, PageReport, RawPage};
use crate::ExtractError;

/// What one run works on.
#[derive(Debug, Clone)]
pub struct ExtractConfig {
    /// Only this site's threads (it must be one of `sites`).
    pub site: Option<SiteId>,
    /// The loaded site files; threads of other sites are skipped.
    pub sites: Vec<Site>,
    /// Threads extracted in parallel between two rounds of database updates.
    pub chunk: usize,
    /// Worker threads; 0 means twice the CPUs, since much of the work is
    /// waiting for fsync.
    pub threads: usize,
}

impl ExtractConfig {
    pub fn new(sites: Vec<Site>) -> ExtractConfig {
        ExtractConfig { site: None, sites, chunk: 256, threads: 0 }
    }
}

/// What a run did: the threads' outcomes (`threads.done` were extracted;
/// `threads.skipped` are rows of forums without a site file and rows
/// another process moved first) and what extraction read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtractSummary {
    pub threads: StageReport,
    pub posts: usize,
    /// HTML bytes read.
    pub bytes: u64,
    /// Malformed byte sequences decoded as U+FFFD, over all pages.
    pub malformed: usize,
    pub elapsed: Duration,
}

impl fmt::Display for ExtractSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        let mbps = if secs > 0.0 { self.bytes as f64 / 1e6 / secs } else { 0.0 };
        let t = &self.threads;
        write!(f, "extract: {} extracted, {} failed, {} skipped in {secs:.1}s ({mbps:.1} MB/s)", t.done, t.failed, t.skipped)?;
        if self.malformed > 0 {
            write!(f, "; {} malformed byte sequences replaced", self.malformed)?;
        }
        if t.stopped {
            write!(f, "; stopped by Ctrl-C, {} left for the next run", t.left)?;
        }
        Ok(())
    }
}

/// One chunk's results, in row order.
type Outcomes = Vec<Result<Written, ExtractError>>;

/// A thread whose XML is on disk, waiting for its row to move.
struct Written {
    posted: Option<String>,
    title: String,
    posts: usize,
    bytes: u64,
    pages: Vec<PageReport>,
}

/// Extracts every `Saved` thread of the configured sites.
///
/// The run's stop is checked between chunks: the chunk in flight is
/// finished and settled, and the rows not reached stay `Saved` for the next
/// run. Progress advances once per thread, from the worker threads.
///
/// Threads are claimed through the run's [`ClaimSession`], extracted and
/// their XML written in parallel, `cfg.chunk` at a time; the rows then move
/// on the calling thread (the store is not `Sync`), so a row is `Extracted`
/// only once its file is durable. While one chunk's rows move, the next
/// chunk is already being extracted: both sides mostly wait on fsync. A
/// thread that cannot be extracted is marked failed with a one-line reason
/// naming the file, and the batch goes on. Store errors and local faults (a
/// full disk: [`ExtractError::Local`]) stop the run, after the rows whose
/// files are durable have moved; no thread is failed for them.
///
/// The first confident encoding detection per site is cached with
/// [`Store::set_site_encoding`] and helps later pages that declare nothing.
pub fn run(run: &StageRun, cfg: &ExtractConfig, store: &mut Store) -> Result<ExtractSummary, ExtractError> {
    let started = Instant::now();
    let data = run.data();
    if let Some(id) = &cfg.site {
        if !cfg.sites.iter().any(|s| &s.id == id) {
            return Err(ExtractError::UnknownSite { site: id.clone(), sites_dir: data.sites_dir() });
        }
    }
    let sites: HashMap<&str, &Site> = cfg.sites.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut summary = ExtractSummary::default();
    let mut session = ClaimSession::open(run, store, cfg.site.as_ref(), Hand::Threads)?;
    let mut cache = SiteCache::default();

    let threads = if cfg.threads > 0 { cfg.threads } else { std::thread::available_parallelism().map_or(2, |n| n.get()) * 2 };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("luntan-extract-{i}"))
        .build()
        .map_err(|e| ExtractError::Threads { message: e.to_string() })?;
    let extract_chunk = |chunk: &[ThreadRow], known: &HashMap<SiteId, Option<&'static Encoding>>| -> Outcomes {
        pool.install(|| {
            chunk
                .par_iter()
                .map(|row| {
                    let result = extract_one(data, sites[row.site.as_str()], row, known[&row.site]);
                    run.progress().advance(1);
                    result
                })
                .collect()
        })
    };

    let mut pending: Option<(Vec<ThreadRow>, Outcomes)> = None;
    loop {
        // Once stopped, no new chunk is claimed; the one in flight is settled below.
        let next = match run.stopped() {
            true => Next::Done,
            false => claim_chunk(&mut session, store, &sites, cfg.chunk.max(1), &mut cache)?,
        };
        let (chunk, wait) = match next {
            Next::Rows(rows) => (Some(rows), None),
            Next::Wait(d) => (None, Some(d)),
            Next::Done => (None, None),
        };
        // Other workers hold the rest: wait for them once this worker's own
        // chunk is settled (see `Next::Wait`).
        if let (Some(d), None) = (wait, &pending) {
            std::thread::sleep(d);
            continue;
        }
        run.progress().grow(chunk.as_ref().map_or(0, Vec::len) as u64);
        let known = cache.known.clone();
        let (fresh, settled) = std::thread::scope(|s| {
            let worker = chunk.as_deref().map(|c| s.spawn(|| extract_chunk(c, &known)));
            let settled = match pending.take() {
                // The chunk's XML files are already durable; its rows move in one commit.
                Some((done, results)) => store.batch(|store| settle(store, &mut session, &done, results, &mut summary, &mut cache)),
                None => Ok(None),
            };
            let fresh = worker.map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            (fresh, settled)
        });
        if let Some(local) = settled? {
            session.abandon(store)?;
            return Err(ExtractError::Local(Box::new(local)));
        }
        pending = chunk.zip(fresh);
        if pending.is_none() && wait.is_none() {
            break;
        }
    }
    summary.threads = session.finish(store, run.stopped())?;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Claims up to `size` `Saved` threads of the run's sites. A thread of a
/// forum with no site file is counted skipped and kept claimed, so it is not
/// offered again this run. The first time a forum shows up, its row is made
/// sure of and its cached encoding read.
fn claim_chunk(session: &mut ClaimSession, store: &mut Store, sites: &HashMap<&str, &Site>, size: usize, cache: &mut SiteCache) -> Result<Next, ExtractError> {
    loop {
        let claimed = match session.next(store, Some(size))? {
            Next::Rows(rows) => rows,
            other => return Ok(other),
        };
        let (rows, orphans): (Vec<ThreadRow>, Vec<ThreadRow>) = claimed.into_iter().partition(|r| sites.contains_key(r.site.as_str()));
        session.skipped(orphans.len());
        for id in rows.iter().map(|r| &r.site).collect::<HashSet<_>>() {
            if cache.known.contains_key(id) {
                continue;
            }
            // set_site_encoding only updates, so the site's row must exist.
            store.upsert_site(sites[id.as_str()])?;
            let enc = store.site_encoding(id)?.and_then(|label| Encoding::for_label(label.as_bytes()));
            cache.known.insert(id.clone(), enc);
        }
        if !rows.is_empty() {
            return Ok(Next::Rows(rows));
        }
    }
}

/// Encodings per site: what the store had, and which sites this run already cached.
#[derive(Default)]
struct SiteCache {
    known: HashMap<SiteId, Option<&'static Encoding>>,
    cached_this_run: HashSet<SiteId>,
}

/// Moves one extracted chunk's rows, in order, and notes what they taught.
fn settle(
    store: &Store,
    session: &mut ClaimSession,
    chunk: &[ThreadRow],
    results: Outcomes,
    summary: &mut ExtractSummary,
    cache: &mut SiteCache,
) -> Result<Option<ExtractError>, ExtractError> {
    let mut local = None;
    for (row, result) in chunk.iter().zip(results) {
        match result {
            Ok(w) => {
                let update = Update { post_time: w.posted.as_deref(), title: Some(w.title.as_str()).filter(|t| !t.is_empty()), ..Default::default() };
                if store.transition(&row.site, &row.thread, ThreadState::Saved, ThreadState::Extracted, &update)? {
                    session.done(1);
                    summary.posts += w.posts;
                } else {
                    session.skipped(1);
                }
                summary.bytes += w.bytes;
                summary.malformed += w.pages.iter().map(|p| p.malformed).sum::<usize>();
                if !cache.cached_this_run.contains(&row.site) {
                    if let Some(p) = w.pages.iter().find(|p| p.detection.confident && p.malformed == 0) {
                        let enc = p.detection.encoding;
                        if cache.known[&row.site] != Some(enc) {
                            store.set_site_encoding(&row.site, enc.name(), &p.detection.reason)?;
                            cache.known.insert(row.site.clone(), Some(enc));
                        }
                        cache.cached_this_run.insert(row.site.clone());
                    }
                }
            }
            Err(e) if e.is_local() => {
                // The row stays `Saved`: the next run, with space, takes it.
                local.get_or_insert(e);
            }
            Err(e) => session.fail(store, row, one_line(&e.to_string()))?,
        }
    }
    Ok(local)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads, extracts, verifies and writes one thread; touches no database.
fn extract_one(data: &DataDir, site: &Site, row: &ThreadRow, cached: Option<&'static Encoding>) -> Result<Written, ExtractError> {
    let loc = row.saved_location().ok_or_else(|| ExtractError::BadRow {
        site: row.site.clone(),
        thread: row.thread.clone(),
        why: "no save date, so no saved pages",
    })?;
    if let Some(rules) = &site.json {
        let (got, bytes) = crate::json::extract_json_thread(data, site, rules, row, &loc)?;
        return publish(data, &loc, got, bytes);
    }
    let n = row.pages.unwrap_or(1).max(1);
    let clocks = crate::json::fetch_clocks(data, &loc, n, false)?;
    let mut pages = Vec::with_capacity(n as usize);
    for page in 1..=n {
        let path = data.html_path(&loc, page);
        let bytes = std::fs::read(&path).map_err(|source| ExtractError::Read { path: path.clone(), source })?;
        pages.push(RawPage { path, bytes, fetched: clocks.as_ref().map(|c| c[page as usize - 1]) });
    }
    let mut bytes = pages.iter().map(|p| p.bytes.len() as u64).sum();
    let mut got = extract_thread(site, row, &pages, cached)?;
    if let Some(rules) = &site.comments {
        bytes += crate::hybrid::add_comments(data, site, rules, &loc, &mut got)?;
    }
    publish(data, &loc, got, bytes)
}

/// Writes a thread's XML once it is known to parse back to itself.
fn publish(data: &DataDir, loc: &luntan_core::ids::ThreadLoc, got: crate::ThreadExtract, bytes: u64) -> Result<Written, ExtractError> {
    let xml = got.doc.to_xml();
    let path = data.xml_path(loc);
    // Never publish a file the index stage would choke on.
    match ThreadDoc::from_xml(&xml) {
        Ok(back) if back == got.doc => {}
        Ok(_) => return Err(ExtractError::Verify { path, message: "XML parses back to a different thread".into() }),
        Err(e) => return Err(ExtractError::Verify { path, message: e.to_string() }),
    }
    write_atomic(&path, xml.as_bytes()).map_err(|source| ExtractError::Write { path, source })?;
    Ok(Written { posted: got.doc.posted, title: got.doc.title, posts: got.doc.posts.len(), bytes, pages: got.pages })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use encoding_rs::GBK;
    use luntan_core::contract::{Progress, Stop};
    use luntan_core::ids::{BoardId, SaveDate, SiteId, ThreadId, ThreadLoc};
    use luntan_core::store::NewThread;
    use luntan_core::Stage;

    use super::*;
    use crate::parse::tests::{discuz_page, discuz_post, site, DISCUZ_RULES};

    const DAY: &str = "20261130";

    fn loc(thread: &str) -> ThreadLoc {
        ThreadLoc {
            site: SiteId::parse("t").unwrap(),
            board: BoardId::parse("2").unwrap(),
            thread: ThreadId::parse(thread).unwrap(),
            saved: SaveDate::parse(DAY).unwrap(),
        }
    }

    /// Counts the threads a run reports done.
    #[derive(Default)]
    struct Count {
        grown: AtomicUsize,
        done: AtomicUsize,
    }

    impl Progress for Count {
        fn grow(&self, n: u64) {
            self.grown.fetch_add(n as usize, Ordering::Relaxed);
        }
        fn advance(&self, n: u64) {
            self.done.fetch_add(n as usize, Ordering::Relaxed);
        }
    }

    /// A data dir with a store whose threads are saved, as download leaves them.
    fn saved(store: &mut Store, site_id: &str, thread: &str, pages: u32, content_type: &str) {
        let mut t = NewThread::new(site_id.parse().unwrap(), "2".parse().unwrap(), thread.parse().unwrap(), format!("http://bbs.example/t/{thread}"));
        t.title = Some("列表标题".into());
        store.insert_new_threads(&[t]).unwrap();
        let up = Update { save_date: Some(DAY.parse().unwrap()), pages: Some(pages), content_type: Some(content_type), ..Default::default() };
        assert!(store.transition(site_id, thread, ThreadState::Discovered, ThreadState::Saved, &up).unwrap());
    }

    #[test]
    fn saved_threads_become_xml_and_failures_do_not_stop_the_batch() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::new(tmp.path());
        let mut store = Store::open(&data.db_path()).unwrap();
        let site = site(DISCUZ_RULES);
        // Thread 1: two GBK pages. Thread 2: UTF-8, said only by the HTTP header.
        // Thread 3: its second page is missing. Thread 9: a site with no site file.
        saved(&mut store, "t", "1", 2, "text/html");
        saved(&mut store, "t", "2", 1, "text/html; charset=utf-8");
        saved(&mut store, "t", "3", 2, "text/html");
        saved(&mut store, "gone", "9", 1, "text/html");
        let gbk = |html: &str| GBK.encode(html).0.into_owned();
        let p = |thread: &str, page: u32| data.html_path(&loc(thread), page);
        write_atomic(&p("1", 1), &gbk(&discuz_page(&discuz_post(1, "楼主", "小明", "2024-3-5 12:34", "主楼<br>第二段")))).unwrap();
        write_atomic(&p("1", 2), &gbk(&discuz_page(&discuz_post(2, "2#", "小红", "2024-3-6 08:00", "回复 &#128512;")))).unwrap();
        let utf8 = discuz_page(&discuz_post(5, "楼主", "張三", "2024-4-1 10:00", "繁體 UTF-8")).replace("charset=gbk", "");
        write_atomic(&p("2", 1), utf8.as_bytes()).unwrap();
        write_atomic(&p("3", 1), &gbk(&discuz_page(&discuz_post(7, "楼主", "小刚", "2024-5-1 10:00", "只有一页")))).unwrap();

        let count = Arc::new(Count::default());
        let stage = StageRun::begin(&data, Stage::Extract, Stop::new()).unwrap().with_progress(count.clone());
        let cfg = ExtractConfig { chunk: 2, ..ExtractConfig::new(vec![site]) };
        let summary = run(&stage, &cfg, &mut store).unwrap();
        let t = &summary.threads;
        assert_eq!((t.done, t.failed, t.skipped, summary.posts, summary.malformed), (2, 1, 1, 3, 0));
        assert_eq!((count.grown.load(Ordering::Relaxed), count.done.load(Ordering::Relaxed)), (3, 3));
        assert!(summary.bytes > 0);
        assert!(summary.to_string().starts_with("extract: 2 extracted, 1 failed, 1 skipped in "), "{summary}");

        let doc = |thread: &str| ThreadDoc::from_xml(&std::fs::read_to_string(data.xml_path(&loc(thread))).unwrap()).unwrap();
        let one = doc("1");
        assert_eq!((one.site.as_str(), one.board.as_str(), one.thread.as_str()), ("t", "2", "1"));
        assert_eq!((one.forum.as_str(), one.url.as_str(), one.saved.as_str(), one.pages), ("测试论坛", "http://bbs.example/t/1", DAY, 2));
        assert_eq!((one.title.as_str(), one.encoding.as_str(), one.posted.as_deref()), ("考研经验分享", "gb18030", Some("2024-03-05T12:34:00")));
        assert_eq!(one.posts.iter().map(|p| (p.floor, p.text())).collect::<Vec<_>>(), [(1, "主楼\n第二段".into()), (2, "回复 😀".into())]);
        let two = doc("2");
        assert_eq!((two.encoding.as_str(), two.posts[0].author.as_str()), ("UTF-8", "張三"));

        let row = |thread: &str| store.thread("t", thread).unwrap().unwrap();
        let r1 = row("1");
        assert_eq!((r1.state, r1.post_time.as_deref(), r1.title.as_deref()), (ThreadState::Extracted, Some("2024-03-05T12:34:00"), Some("考研经验分享")));
        assert_eq!(row("2").state, ThreadState::Extracted);
        let r3 = row("3");
        let missing = data.html_path(&loc("3"), 2);
        assert_eq!((r3.state, r3.fail_stage), (ThreadState::Failed, Some(Stage::Extract)));
        let reason = r3.fail_reason.unwrap();
        assert!(reason.starts_with(&missing.display().to_string()) && !reason.contains('\n'), "{reason}");
        assert!(!data.xml_path(&loc("3")).exists());
        assert_eq!(summary.threads.failures.iter().map(|f| (f.key(), f.reason.clone())).collect::<Vec<_>>(), [("t/3".to_string(), reason)]);
        assert_eq!(store.thread("gone", "9").unwrap().unwrap().state, ThreadState::Saved);
        // The GBK page's meta was the first confident evidence for the site.
        assert_eq!(store.site_encoding("t").unwrap().as_deref(), Some("gb18030"));

        // Nothing is left to do, and nothing is done twice.
        let again = run(&stage, &cfg, &mut store).unwrap();
        assert_eq!((again.threads.done, again.threads.failed, again.threads.skipped), (0, 0, 1));
    }

    #[test]
    fn an_unknown_site_is_refused_before_any_work() {
        let tmp = tempfile::tempdir().unwrap();
        let data = DataDir::new(tmp.path());
        let mut store = Store::open(&data.db_path()).unwrap();
        let cfg = ExtractConfig { site: Some("nope".parse().unwrap()), ..ExtractConfig::new(vec![site(DISCUZ_RULES)]) };
        let stage = StageRun::begin(&data, Stage::Extract, Stop::new()).unwrap();
        let e = run(&stage, &cfg, &mut store).unwrap_err();
        assert!(matches!(e, ExtractError::UnknownSite { .. }), "{e:?}");
    }
}
