//! Stage 2, download (S3): every `Discovered` thread's pages, saved as the
//! raw bytes the forum sent under
//! `pages/<site>/board<B>/board<B>_<YYYYMMDD>/article<T>[_pN].html`, and
//! beside them `article<T>.http`: each page's URL, arrival time, status and
//! headers ([`luntan_core::capture`]), what a web archive needs to replay it.
//!
//! A thread is saved whole or not at all: every page is fetched first, then
//! each file is written atomically, and only then does the row become
//! `Saved` (several threads at a time: [`crate::commit`]). A killed run
//! leaves at most a stray temp file and an unchanged row, which the next
//! run simply downloads again.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use luntan_core::capture::{self, Exchange, PageCapture};
use luntan_core::contract::{ClaimSession, Hand, Next, StageReport, StageRun};
use luntan_core::ids::{BoardId, SaveDate};
use luntan_core::state::ThreadState;
use luntan_core::store::{Store, StoreError, ThreadRow};
use luntan_core::{DataDir, Site};
use url::Url;

pub use crate::browser::BrowserReport;
use crate::browser::{BrowserError, PageKind, Renderer};
use crate::commit::{Commit, CommitError, Committer};
use crate::db::{lock, with_store};
use crate::fetch::{FetchError, Fetched, Fetcher, ResponseHead};
use crate::links::{page_links_in, BoardLink};
pub use luntan_text::pager::stored_page_urls;
use luntan_text::pager::stored_pages;

/// Most pages luntan reads of one thread; a pager that never ends is a trap.
pub const MAX_THREAD_PAGES: usize = 1000;

/// What downloading one site did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct DownloadReport {
    pub site: String,
    /// The threads' outcomes: `done` were saved; `left` wait for a later
    /// run (stopped by Ctrl-C, or no browser on this machine).
    pub threads: StageReport,
    pub pages: usize,
    /// Of `pages`, those kept from a thread's last download instead of
    /// fetched again (a re-queued thread is read from its last page on).
    pub pages_kept: usize,
    pub bytes: u64,
    /// Why the site could not be downloaded at all (its rows left as they were).
    pub error: Option<String>,
    /// Browser mode: what the browser did (S4).
    pub browser: Option<BrowserReport>,
}

/// Why a download run stopped before its queue was done.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A full disk, a read-only file system, a permission: this machine's
    /// fault, so no thread is marked failed and a re-run carries on.
    #[error("{}: {cause}; stopped: this machine's fault, not the forum's, so no thread was marked failed (run download again once it is fixed)", path.display())]
    Local { path: std::path::PathBuf, cause: std::io::Error },
}

/// Why one thread was not saved.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("{url}: {why}")]
    Row { url: String, why: String },
    #[error("{}: {source}", path.display())]
    Write { path: std::path::PathBuf, source: std::io::Error },
    #[error(transparent)]
    Browser(Box<BrowserError>),
}

/// Settings of one download run.
#[derive(Debug, Clone)]
pub struct DownloadOptions {
    /// The day naming today's directories.
    pub save_date: SaveDate,
    /// Threads in flight per site (their requests still pass the site's gate).
    pub in_flight: usize,
}

/// Downloads every `Discovered` thread of the fetcher's site.
///
/// The run's stop is checked between threads: once set, no new thread
/// starts and in-flight ones finish; its progress advances once per
/// finished thread (the caller starts it, knowing every site's queue). A
/// local fault ([`DownloadError::Local`]) sets the stop too, so every site's
/// download ends after its work in flight, and is returned once it has.
pub async fn download_site(
    run: Arc<StageRun>,
    fetcher: Arc<Fetcher>,
    store: Arc<Mutex<Store>>,
    opts: DownloadOptions,
) -> Result<DownloadReport, DownloadError> {
    let site_id = fetcher.site().id.clone();
    let mut report = DownloadReport { site: site_id.to_string(), ..Default::default() };
    let renderer = Renderer::for_site(fetcher.clone()).map(Arc::new);
    if renderer.is_some() {
        // No browser is this machine's matter, not the threads': one line,
        // and the rows wait, unclaimed, for a worker that has one.
        if let Err(e) = crate::browser::find_chromium() {
            let site = site_id.clone();
            let waiting = with_store(&store, move |s| s.threads(Some(&site), ThreadState::Discovered)).await?.len();
            if waiting > 0 {
                report.error = Some(format!("{}: {e}", fetcher.site().id));
                report.threads.left = waiting;
            }
            return Ok(report);
        }
    }
    let (site, open_run) = (site_id.clone(), run.clone());
    let session = with_store(&store, move |s| ClaimSession::open(&open_run, s, Some(&site), Hand::Threads)).await?;
    let session = Arc::new(Mutex::new(session));
    // Runs `f` with the store and this site's claim session, off the runtime.
    let on_session = |f: SessionCall| {
        let session = session.clone();
        with_store(&store, move |s| f(s, &mut lock(&session)))
    };
    // Threads finish into one committer, which writes whatever is ready
    // at once: at most every thread in flight.
    let committer = Committer::start(store.clone(), opts.in_flight);
    let mut tasks = tokio::task::JoinSet::new();
    // Claimed a batch at a time, so that workers on other hosts share the
    // queue and a killed one holds only its batch, for one lease.
    let mut pending = std::collections::VecDeque::new();
    let mut drained = false;
    let mut local = None;
    loop {
        while tasks.len() < opts.in_flight.max(1) && !run.stopped() {
            if pending.is_empty() && !drained {
                match on_session(Box::new(|s, session| session.next(s, None))).await? {
                    Next::Rows(batch) => {
                        run.progress().grow(batch.len() as u64);
                        pending.extend(batch);
                    }
                    // Other workers hold the rest (see `Next::Wait`): finish
                    // what is in flight first.
                    Next::Wait(d) if tasks.is_empty() => {
                        tokio::time::sleep(d).await;
                        continue;
                    }
                    Next::Wait(_) => {}
                    Next::Done => drained = true,
                }
            }
            let Some(row) = pending.pop_front() else { break };
            let (run, fetcher, committer, opts, renderer) = (run.clone(), fetcher.clone(), committer.clone(), opts.clone(), renderer.clone());
            tasks.spawn(async move {
                let outcome = match &renderer {
                    Some(r) => save_browser_thread(&run, r, &committer, &opts, &row).await,
                    None => save_thread(&run, &fetcher, &committer, &opts, &row).await,
                };
                (row, outcome)
            });
        }
        let Some(joined) = tasks.join_next().await else { break };
        let (row, outcome) = joined.expect("download task panicked");
        match outcome {
            Ok(saved) => {
                // The committer moved the row with its batch of threads.
                lock(&session).done(1);
                report.pages += saved.pages;
                report.pages_kept += saved.kept;
                report.bytes += saved.bytes;
            }
            Err(Failure::Local(path, source)) => {
                // The row stays `Discovered`: the next run, with space, takes it.
                run.stop().set();
                local.get_or_insert(DownloadError::Local { path, cause: source });
            }
            Err(Failure::Thread(e)) => {
                let reason = e.to_string();
                tracing::debug!("{}: {reason}", row.key());
                on_session(Box::new(move |s, session| session.fail(s, &row, reason).map(|()| Next::Done))).await?;
            }
            Err(Failure::Store(e)) => return Err(e.into()),
            // Another thread of its batch carries the reason.
            Err(Failure::Unsaved) => run.stop().set(),
        }
        run.progress().advance(1);
    }
    tracing::debug!("{site_id}: {} threads saved in {} commits", lock(&session).report().done, committer.batches());
    // What this worker claimed and did not finish is free again at once.
    let stopped = run.stopped() && local.is_none();
    let finished = {
        let session = session.clone();
        with_store(&store, move |s| lock(&session).finish(s, stopped)).await?
    };
    if let Some(e) = local {
        return Err(e);
    }
    report.threads = finished;
    report.browser = renderer.map(|r| BrowserReport::of(&r.stats));
    Ok(report)
}

/// What a download task asks of the store and its claim session at once.
type SessionCall = Box<dyn FnOnce(&mut Store, &mut ClaimSession) -> Result<Next, StoreError> + Send>;

enum Failure {
    Thread(ThreadError),
    /// A page could not be written for a reason of this machine's.
    Local(std::path::PathBuf, std::io::Error),
    Store(StoreError),
    /// Its batch's transaction failed, and another thread of the batch
    /// carries the error; the row is as it was.
    Unsaved,
}

impl From<CommitError> for Failure {
    /// A fault of this machine's (full disk, permissions) is told apart
    /// from one of the thread's.
    fn from(e: CommitError) -> Failure {
        match e {
            CommitError::Write(path, source) if luntan_core::layout::is_local_fault(&source) => Failure::Local(path, source),
            CommitError::Write(path, source) => Failure::Thread(ThreadError::Write { path, source }),
            CommitError::Store(e) => Failure::Store(e),
            CommitError::Unsaved => Failure::Unsaved,
        }
    }
}

/// What saving one thread wrote: pages (of them `kept` from its last
/// download) and bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Saved {
    pages: usize,
    kept: usize,
    bytes: u64,
}

/// Fetches every page of a thread, writes them, moves the row to `Saved`.
/// A re-queued thread whose pages are on disk from its last download is
/// read from its last page on (see [`kept_pages`]).
async fn save_thread(run: &StageRun, fetcher: &Fetcher, committer: &Committer, opts: &DownloadOptions, row: &ThreadRow) -> Result<Saved, Failure> {
    let thread_err = |why: String| Failure::Thread(ThreadError::Row { url: row.url.clone(), why });
    let loc = row.location(opts.save_date);
    let url = Url::parse(&row.url).map_err(|e| thread_err(format!("not a URL: {e}")))?;
    if let Some(rules) = &fetcher.site().json {
        return save_json_thread(run, fetcher, rules, committer, row, loc).await;
    }
    // Asked for as the site file says (`add-query`), known by the URL lists link.
    let url = fetcher.site().links.thread_request(&url);
    let thread = loc.thread.as_str();
    // Only a thread downloaded before, in pages, has pages to keep: a new
    // one (most of a first crawl) skips the blocking task and the copies.
    let kept = if row.pages.is_some_and(|n| n >= 2) && row.save_date.is_some() && fetcher.site().links.thread_page.is_some() {
        let data = run.data().clone();
        let (site, row_in, url_in, thread_in) = (fetcher.site().clone(), row.clone(), url.clone(), thread.to_owned());
        tokio::task::spawn_blocking(move || kept_pages(&data, &site, &row_in, &url_in, &thread_in)).await.expect("reading kept pages panicked")
    } else {
        None
    };
    let (pages, kept) = match kept {
        Some(k) => {
            let n = k.pages.len();
            match fetch_pages_from(fetcher, k.pages, k.last, thread).await {
                Ok(pages) => (pages, n),
                // The thread shrank (posts deleted: its last page is gone)
                // or moved: read it whole, as if it were new.
                Err(e) => {
                    tracing::debug!("{}/{}: reading from the last stored page failed ({e}); reading it whole", row.site, row.thread);
                    (fetch_pages(fetcher, &url, thread).await.map_err(|e| Failure::Thread(e.into()))?, 0)
                }
            }
        }
        None => (fetch_pages(fetcher, &url, thread).await.map_err(|e| Failure::Thread(e.into()))?, 0),
    };
    // A hybrid site: the article's comments, as JSON, after its pages.
    let comments = match (&fetcher.site().comments, pages.first()) {
        (Some(rules), Some(first)) => Some(
            crate::hybrid::fetch_comments(fetcher, rules, thread, first)
                .await
                .map_err(|e| Failure::Thread(ThreadError::Row { url: row.url.clone(), why: format!("comments: {e}") }))?,
        ),
        _ => None,
    };
    // The content type the forum sends now (page 1 may be a kept one).
    let content_type = pages.last().and_then(|p| p.content_type.clone());
    let captures = captures_of(&pages);
    let bodies: Vec<_> = pages.into_iter().map(|p| p.body).collect();
    let saved = save_html_pages(run.data(), committer, loc, HtmlPages { pages: bodies, content_type, captures, comments, ..Default::default() }).await?;
    Ok(Saved { kept, ..saved })
}

/// The pages of a re-queued thread that need not be fetched again: every
/// page but the last of its last download, read from disk, and the last
/// page's number and URL, where reading starts again (it may have grown,
/// and a new page after it is linked from it). A new reply to a thread of
/// 40 pages then costs 1 or 2 requests, not 40; the posts are the same as
/// a whole download's, so is the thread XML. `None` (read it whole) when
/// the thread has one page, no pager, or a page is missing or names no
/// later page: the pages are found as download found them, page `k`'s URL
/// being the `k`-th page value (in order) the pagers of pages before it link.
fn kept_pages(data: &DataDir, site: &Site, row: &ThreadRow, url: &Url, thread: &str) -> Option<KeptPages> {
    let n = usize::try_from(row.pages.filter(|&n| n >= 2)?).ok()?;
    let old = row.saved_location()?;
    let (urls, read) = stored_pages(data, site, row, &old, url, thread, n - 1)?;
    // What the last download kept of each page's response, carried over
    // with the page (a page saved before captures were kept has none).
    let old_captures = capture::read(&data.http_path(&old)).unwrap_or_else(|e| {
        tracing::debug!("{}/{}: {e}; the kept pages go without their HTTP heads", row.site, row.thread);
        None
    });
    let mut pages: BTreeMap<u64, Fetched> = BTreeMap::new();
    for (i, (value, page_url, body)) in read.into_iter().enumerate() {
        let mut kept =
            Fetched { url: page_url, status: 200, content_type: row.content_type.clone(), body, date: None, validators: Default::default(), head: None };
        if let Some(c) = old_captures.iter().flatten().find(|c| c.page == i as u32 + 1) {
            if let (Exchange::Response { status, version, headers }, Ok(url)) = (&c.exchange, Url::parse(&c.url)) {
                kept.url = url;
                kept.status = *status;
                kept.head = Some(ResponseHead { version: version.clone(), headers: headers.clone(), at: c.at.clone() });
            }
        }
        pages.insert(value, kept);
    }
    let (&value, last) = urls.iter().nth(n - 1)?;
    Some(KeptPages { pages, last: (value, last.clone()) })
}

/// See [`kept_pages`].
struct KeptPages {
    pages: BTreeMap<u64, Fetched>,
    last: (u64, Url),
}

/// Each page's line of `article<T>.http`: its URL, time, status and
/// headers; pages without a head (kept from a download before captures
/// were kept) have none.
fn captures_of<'a>(pages: impl IntoIterator<Item = &'a Fetched>) -> Vec<PageCapture> {
    let mut out = Vec::new();
    for (i, p) in pages.into_iter().enumerate() {
        if let Some(h) = &p.head {
            let exchange = Exchange::Response { status: p.status, version: h.version.clone(), headers: h.headers.clone() };
            out.push(PageCapture { page: i as u32 + 1, url: p.url.to_string(), at: h.at.clone(), exchange });
        }
    }
    out
}

/// A thread's HTML pages as download saves them.
#[derive(Default)]
struct HtmlPages {
    pages: Vec<Vec<u8>>,
    content_type: Option<String>,
    /// `article<T>.http`'s lines (see [`luntan_core::capture`]).
    captures: Vec<PageCapture>,
    /// From a browser: the DOM states dropped as duplicates, the forum's
    /// clock of the render (`article<T>.fetched`, one line a state, against
    /// which "3分钟前" is read), and the boards the states link to.
    dropped: Option<u32>,
    fetched: Option<String>,
    boards: Vec<BoardLink>,
    /// A hybrid site: the article's comments pages (`article<T>_c1.json` …).
    comments: Option<crate::hybrid::CommentPages>,
}

/// Writes a thread's HTML pages (`article<T>.html`, `_p2`, …) durably, then
/// moves its row to `Saved` with their count, their content type and, from
/// a browser, the number of DOM states dropped as duplicates, recording the
/// boards met in the same transaction.
async fn save_html_pages(data: &DataDir, committer: &Committer, loc: luntan_core::ids::ThreadLoc, html: HtmlPages) -> Result<Saved, Failure> {
    let n = html.pages.len();
    let bytes: u64 = html.pages.iter().map(|p| p.len() as u64).sum();
    let mut files: Vec<_> = html.pages.into_iter().enumerate().map(|(i, page)| (data.html_path(&loc, i as u32 + 1), page)).collect();
    if let Some(fetched) = html.fetched {
        files.push((data.fetched_path(&loc), fetched.into_bytes()));
    }
    // Written even when empty, so no line of an earlier save the same day
    // outlives its page.
    files.push((data.http_path(&loc), capture::to_lines(&html.captures).into_bytes()));
    let mut bytes = bytes;
    let newest = html.comments.as_ref().and_then(|c| c.newest.clone());
    let replies = html.comments.map(|c| {
        // The list is written even when empty, so no page of an earlier save is read.
        files.push((data.comments_list_path(&loc), c.list().into_bytes()));
        files.push((data.comments_http_path(&loc), capture::to_lines(&captures_of(c.pages.iter().map(|p| &p.fetched))).into_bytes()));
        for (i, p) in c.pages.into_iter().enumerate() {
            bytes += p.fetched.body.len() as u64;
            files.push((data.comments_path(&loc, i as u32 + 1), p.fetched.body));
        }
        c.count
    });
    let boards = html.boards.into_iter().map(|b| (b.id, b.url.to_string(), b.title)).collect();
    let commit = Commit {
        loc,
        files,
        pages: n as u32,
        content_type: html.content_type,
        states: html.dropped.map(|d| (n as u32, d)),
        boards,
        replies,
        last_post: newest,
    };
    committer.commit(commit).await?;
    Ok(Saved { pages: n, kept: 0, bytes })
}

/// Browser mode (S4): the thread page loaded in the browser and driven by
/// the site file's thread actions; each DOM state kept is saved as a page
/// (`article<T>.html`, `_p2`, …), and the counts of states kept and dropped
/// move with the row.
async fn save_browser_thread(run: &StageRun, renderer: &Renderer, committer: &Committer, opts: &DownloadOptions, row: &ThreadRow) -> Result<Saved, Failure> {
    let thread_err = |why: String| Failure::Thread(ThreadError::Row { url: row.url.clone(), why });
    let loc = row.location(opts.save_date);
    let url = renderer.site().links.thread_request(&Url::parse(&row.url).map_err(|e| thread_err(format!("not a URL: {e}")))?);
    let rendered = renderer.render(&url, PageKind::Thread).await.map_err(|e| Failure::Thread(ThreadError::Browser(Box::new(e))))?;
    let at = crate::protocol::server_clock(rendered.date.as_deref());
    let fetched: String = rendered.states.iter().map(|_| format!("{at}\t{url}\n")).collect();
    // A DOM state is no response: its line says what was rendered, and when.
    let now = capture::format_time(std::time::SystemTime::now());
    let captures = (1..=rendered.states.len() as u32)
        .map(|page| PageCapture { page, url: rendered.url.to_string(), at: now.clone(), exchange: Exchange::Snapshot })
        .collect();
    let site = renderer.site();
    // Users met under a post (commenters) join the boards, as in protocol mode.
    let mut boards: Vec<BoardLink> = Vec::new();
    if site.links.follow.is_some() {
        for state in &rendered.states {
            let doc = scraper::Html::parse_document(state);
            for b in crate::links::board_links(site, &doc, &crate::links::base_url(&doc, &url)).0 {
                if !boards.iter().any(|k| k.id == b.id) {
                    boards.push(b);
                }
            }
        }
    }
    // The DOM is serialised as UTF-8, whatever the forum sent.
    let html = HtmlPages {
        pages: rendered.states.into_iter().map(String::into_bytes).collect(),
        content_type: Some("text/html; charset=utf-8".into()),
        captures,
        dropped: Some(rendered.dropped),
        fetched: Some(fetched),
        boards,
        comments: None,
    };
    save_html_pages(run.data(), committer, loc, html).await
}

/// Protocol mode (S4): the thread's JSON pages, raw, beside the server's
/// clock of each fetch; the users met in them join the site's boards in
/// the transaction that moves the row.
async fn save_json_thread(
    run: &StageRun,
    fetcher: &Fetcher,
    rules: &luntan_core::site::JsonRules,
    committer: &Committer,
    row: &ThreadRow,
    loc: luntan_core::ids::ThreadLoc,
) -> Result<Saved, Failure> {
    let pages = crate::protocol::fetch_thread(fetcher, rules, loc.thread.as_str()).await.map_err(|e| match e {
        crate::protocol::JsonPageError::Fetch(f) => Failure::Thread(f.into()),
        other => Failure::Thread(ThreadError::Row { url: row.url.clone(), why: other.to_string() }),
    })?;
    if pages.is_empty() {
        return Err(Failure::Thread(ThreadError::Row { url: row.url.clone(), why: "the site file names no page of a thread".into() }));
    }
    let values: Vec<serde_json::Value> = pages.iter().map(|p| p.value.clone()).collect();
    let users: Vec<(BoardId, String, Option<String>)> = crate::protocol::users_in_pages(rules, &values)
        .into_iter()
        .filter_map(|(id, name)| rules.list.page_url(&id, &rules.list.first_key()).map(|u| (id, u.to_string(), name)))
        .collect();
    let bytes: u64 = pages.iter().map(|p| p.fetched.body.len() as u64).sum();
    let n = pages.len();
    let fetched: String = pages.iter().map(|p| format!("{}\t{}\n", p.at, p.fetched.url)).collect();
    let captures = capture::to_lines(&captures_of(pages.iter().map(|p| &p.fetched)));
    let data = run.data();
    let mut files: Vec<_> = pages.into_iter().enumerate().map(|(i, page)| (data.json_path(&loc, i as u32 + 1), page.fetched.body)).collect();
    files.push((data.fetched_path(&loc), fetched.into_bytes()));
    files.push((data.http_path(&loc), captures.into_bytes()));
    let commit =
        Commit { loc, files, pages: n as u32, content_type: Some("application/json".into()), states: None, boards: users, replies: None, last_post: None };
    committer.commit(commit).await?;
    Ok(Saved { pages: n, kept: 0, bytes })
}

/// Page 1, then every later page its pagers link to, in page order.
async fn fetch_pages(fetcher: &Fetcher, url: &Url, thread: &str) -> Result<Vec<Fetched>, FetchError> {
    let first = fetcher.site().links.thread_page.as_ref().map_or(1, |p| p.first_page);
    fetch_pages_from(fetcher, BTreeMap::new(), (first, url.clone()), thread).await
}

/// [`fetch_pages`] from page `start` (its page value and URL) on, beside
/// the pages already in hand (`pages`, by page value), which are not
/// fetched again.
async fn fetch_pages_from(fetcher: &Fetcher, mut pages: BTreeMap<u64, Fetched>, start: (u64, Url), thread: &str) -> Result<Vec<Fetched>, FetchError> {
    let site = fetcher.site();
    let (mut current_page, url) = start;
    let mut current = fetcher.get_html(&url).await?;
    let Some(pattern) = &site.links.thread_page else {
        return Ok(vec![current]);
    };
    let mut queue: BTreeMap<u64, Url> = BTreeMap::new();
    loop {
        // Pages are kept as sent, so their links are all that is read here:
        // no DOM and no decoding of the whole page unless the scan needs them.
        let more = page_links_in(site, &current.body, current.content_type.as_deref(), &current.url, pattern, thread, |m| m.thread.as_deref());
        pages.insert(current_page, current);
        for (p, u) in more {
            if !pages.contains_key(&p) {
                queue.entry(p).or_insert(u);
            }
        }
        if pages.len() >= MAX_THREAD_PAGES {
            break;
        }
        let Some((p, u)) = queue.pop_first() else { break };
        current = fetcher.get_html(&u).await?;
        current_page = p;
    }
    Ok(pages.into_values().collect())
}
