//! luntan's crawl in the formats other tools read: the raw pages as a WARC
//! file for web archives (warcio, pywb, …), the threads as NDJSON for
//! Elasticsearch or OpenSearch.
//!
//! - [`export`]: one pass over the crawl database's threads, writing either
//!   file or both, each published atomically when complete.
//! - [`warc`]: WARC/1.1 records and their digests; a reader for tests.
//! - [`ndjson::ThreadLine`]: a thread XML as one JSON line (luntan-core's [`luntan_core::doc::ThreadJson`]).
//! - [`luntan_core::capture`]: what download keeps of each page's HTTP
//!   exchange (URL, time, status, headers), from which a response record's
//!   head is written.
//!
//! Pages are found from the database rows, as every stage finds them
//! ([`luntan_core::DataDir`]); a page that cannot be read, or a thread XML
//! that does not parse, is a [`BadRecord`]: reported, counted and left out
//! while the rest is written.
//!
//! ```
//! use luntan_export::warc::{read_records, Record, WarcWriter};
//! let mut w = WarcWriter::new(Vec::new(), true);
//! w.write(&Record::resource("http://h/t/1", "2026-11-30T08:15:02Z", "text/html; charset=utf-8", b"<p>hi</p>")).unwrap();
//! assert_eq!(read_records(&w.into_inner()).unwrap()[0].block, b"<p>hi</p>");
//! ```

pub mod ndjson;
pub mod warc;

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use luntan_core::capture::{self, Exchange, PageCapture};
use luntan_core::contract::{Progress, Stop};
use luntan_core::ids::{MediaHash, SiteId, ThreadLoc};
use luntan_core::layout::AtomicFile;
use luntan_core::store::{MediaStatus, StoreError, ThreadRow};
use luntan_core::{DataDir, Site, Store, ThreadDoc, ThreadState};
use luntan_text::encoding;

use crate::ndjson::{bulk_action, ThreadLine};
use crate::warc::{Record, WarcWriter};

/// What to export, and where.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Only these forums; every forum when empty.
    pub sites: Vec<SiteId>,
    /// The WARC file (gzipped per record when its name ends in `.gz`).
    pub warc: Option<PathBuf>,
    /// The NDJSON file.
    pub ndjson: Option<PathBuf>,
    /// Before each NDJSON line, an Elasticsearch/OpenSearch `_bulk` action
    /// line that indexes it into this index under its `id`.
    pub bulk_index: Option<String>,
    /// The site files: a forced encoding names the charset of a page saved
    /// before heads were kept, and the pager pattern finds its URL again.
    pub site_files: Vec<Site>,
}

/// A record left out: the file (or thread) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    pub path: PathBuf,
    pub what: String,
}

impl fmt::Display for BadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

/// What an export wrote, per outcome.
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// Threads looked at.
    pub threads: usize,
    /// Pages written as `response` records with the head the forum sent.
    pub responses: usize,
    /// Pages saved before download kept their heads, written as
    /// `response` records with a minimal head (status 200, Content-Type).
    pub synthesized: usize,
    /// DOM states from a browser, written as `resource` records.
    pub snapshots: usize,
    /// Archived pictures and attachments (`luntan-media`), one `response`
    /// record per URL.
    pub media: usize,
    /// Threads written as NDJSON lines.
    pub lines: usize,
    /// Records left out, each with why.
    pub bad: Vec<BadRecord>,
    pub warc_bytes: u64,
    pub ndjson_bytes: u64,
    /// Stopped (Ctrl-C) before the end: nothing was published.
    pub stopped: bool,
}

/// Why an export could not be written at all.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{}: {source}", path.display())]
    Output { path: PathBuf, source: io::Error },
    #[error("--site {0}: no thread of that forum in the crawl database")]
    UnknownSite(SiteId),
}

/// Writes the export `opts` asks for, from the threads in `store` and
/// their files under `data`. Either output is written to a temporary file
/// and renamed into place only when complete; when `stop` is set the
/// export ends after the thread in flight and publishes nothing.
pub fn export(data: &DataDir, store: &Store, opts: &ExportOptions, stop: &Stop, progress: &dyn Progress) -> Result<ExportReport, ExportError> {
    let rows = rows(store, &opts.sites)?;
    progress.grow(rows.len() as u64);
    let mut report = ExportReport::default();
    let mut warc = match &opts.warc {
        Some(path) => Some(WarcOut::create(path, opts)?),
        None => None,
    };
    let mut ndjson = match &opts.ndjson {
        Some(path) => Some((path, BufWriter::with_capacity(1 << 20, AtomicFile::create(path).map_err(output(path))?))),
        None => None,
    };
    let mut pages = Pages::new(data, store, &opts.site_files);
    for row in &rows {
        if stop.is_set() {
            report.stopped = true;
            // The temporary files go with `warc` and `ndjson`.
            return Ok(report);
        }
        report.threads += 1;
        let loc = match row.saved_location() {
            Some(loc) => loc,
            None => {
                let what = "row has no save date, so no saved pages".to_string();
                report.bad.push(BadRecord { path: PathBuf::from(row.key()), what });
                progress.advance(1);
                continue;
            }
        };
        if let Some(w) = &mut warc {
            pages.write_thread(row, &loc, w, &mut report)?;
        }
        if let Some((path, out)) = &mut ndjson {
            if matches!(row.state, ThreadState::Extracted | ThreadState::Indexed) {
                let xml = data.xml_path(&loc);
                match read_doc(&xml) {
                    Ok(doc) => {
                        let line = ThreadLine::of(&doc);
                        let mut text = String::new();
                        if let Some(index) = &opts.bulk_index {
                            text.push_str(&bulk_action(index, &line.id));
                            text.push('\n');
                        }
                        text.push_str(&line.to_json());
                        text.push('\n');
                        out.write_all(text.as_bytes()).map_err(output(path))?;
                        report.ndjson_bytes += text.len() as u64;
                        report.lines += 1;
                    }
                    Err(e) => report.bad.push(BadRecord { path: xml, what: e.to_string() }),
                }
            }
        }
        progress.advance(1);
    }
    if let Some(w) = &mut warc {
        if !write_media(data, store, &opts.sites, w, stop, &mut report)? {
            return Ok(report);
        }
    }
    if let Some(w) = warc {
        report.warc_bytes = w.finish()?;
    }
    if let Some((path, out)) = ndjson {
        out.into_inner().map_err(|e| output(path)(e.into_error()))?.commit().map_err(output(path))?;
    }
    Ok(report)
}

fn output(path: &Path) -> impl Fn(io::Error) -> ExportError + '_ {
    move |source| ExportError::Output { path: path.to_owned(), source }
}

/// Every row of the chosen forums whose pages are on disk (a save date and
/// at least one page), whatever its state, in (site, thread) order.
fn rows(store: &Store, sites: &[SiteId]) -> Result<Vec<ThreadRow>, ExportError> {
    let mut rows = Vec::new();
    let wanted: Vec<Option<&str>> = if sites.is_empty() { vec![None] } else { sites.iter().map(|s| Some(s.as_str())).collect() };
    for site in wanted {
        let before = rows.len();
        for state in ThreadState::ALL {
            rows.extend(store.threads(site, state)?);
        }
        if let (Some(id), true) = (site, rows.len() == before) {
            return Err(ExportError::UnknownSite(SiteId::parse(id).expect("an id already checked")));
        }
    }
    rows.retain(|r| r.save_date.is_some() && r.pages.unwrap_or(0) > 0);
    rows.sort_by(|a, b| (&a.site, a.thread.len(), &a.thread).cmp(&(&b.site, b.thread.len(), &b.thread)));
    rows.dedup_by(|a, b| a.site == b.site && a.thread == b.thread);
    Ok(rows)
}

/// Every archived media URL of the chosen forums as a `response` record:
/// its URL, the type it was served with, its bytes from `media/`, and the
/// time it was fetched, so a replay of a thread shows its pictures. The
/// head is written from the row (status 200, Content-Type and -Length): the
/// archive keeps content once per hash, not each response's headers.
/// `false` when stopped (nothing is published then).
fn write_media(data: &DataDir, store: &Store, sites: &[SiteId], w: &mut WarcOut, stop: &Stop, report: &mut ExportReport) -> Result<bool, ExportError> {
    let mut rows = Vec::new();
    match sites {
        [] => rows = store.media_rows(None)?,
        sites => {
            for site in sites {
                rows.extend(store.media_rows(Some(site.as_str()))?);
            }
        }
    }
    for row in rows.iter().filter(|r| r.status == MediaStatus::Archived) {
        if stop.is_set() {
            report.stopped = true;
            return Ok(false);
        }
        let key = || PathBuf::from(format!("{}: {}", row.site, row.url));
        let Some(hash) = row.sha256.as_deref().and_then(|h| MediaHash::parse(h).ok()) else {
            report.bad.push(BadRecord { path: key(), what: format!("media row holds no hash ({:?})", row.sha256) });
            continue;
        };
        let path = data.media_path(&hash);
        let body = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                report.bad.push(BadRecord { path, what: format!("{e} (archived for {})", row.url) });
                continue;
            }
        };
        let date = match time::OffsetDateTime::parse(&row.fetched_at, &time::format_description::well_known::Rfc3339) {
            Ok(t) => warc_date(t),
            Err(e) => {
                report.bad.push(BadRecord { path: key(), what: format!("fetched_at {:?}: {e}", row.fetched_at) });
                continue;
            }
        };
        if let Err(e) = check_url(&row.url) {
            report.bad.push(BadRecord { path: key(), what: e.to_string() });
            continue;
        }
        let content_type = row.content_type.as_deref().unwrap_or("application/octet-stream");
        let head = http_head("HTTP/1.1", 200, &[("Content-Type".into(), content_type.into()), ("Content-Length".into(), body.len().to_string())]);
        w.write(Record::response(&row.url, &date, &head, &body))?;
        report.media += 1;
    }
    Ok(true)
}

/// Why a file's record is left out. The file's path is not in it: the
/// [`BadRecord`] it becomes names the file, ahead of this message.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error("cannot read the thread XML: {0}")]
    ReadXml(io::Error),
    #[error("not a thread XML: {0}")]
    NotXml(luntan_core::doc::DocError),
    #[error("page {page}'s line: time {at:?}: {source}")]
    LineTime { page: u32, at: String, source: time::error::Parse },
    #[error("page {page}'s line: {source}")]
    LineUrl { page: u32, source: BadUrl },
    #[error(transparent)]
    Url(#[from] BadUrl),
    #[error("time {secs}: {source}")]
    Time { secs: i64, source: time::error::ComponentRange },
    #[error("saved before luntan kept each page's URL, and the site file's pager pattern does not find it again")]
    NoUrl,
    #[error("no time of its own: {0}")]
    NoTime(io::Error),
    #[error("page {page}'s line is a browser's snapshot, not a response")]
    NotResponse { page: u32 },
}

/// A page's URL that is not one.
#[derive(Debug, thiserror::Error)]
#[error("URL {url:?}: {source}")]
struct BadUrl {
    url: String,
    source: url::ParseError,
}

fn read_doc(path: &Path) -> Result<ThreadDoc, RecordError> {
    let xml = std::fs::read_to_string(path).map_err(RecordError::ReadXml)?;
    ThreadDoc::from_xml(&xml).map_err(RecordError::NotXml)
}

/// The WARC file being written.
struct WarcOut {
    path: PathBuf,
    writer: WarcWriter<BufWriter<AtomicFile>>,
    info_id: String,
}

impl WarcOut {
    /// Creates the file's temporary sibling and writes the `warcinfo` record.
    fn create(path: &Path, opts: &ExportOptions) -> Result<WarcOut, ExportError> {
        let file = AtomicFile::create(path).map_err(output(path))?;
        let gzip = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        let mut writer = WarcWriter::new(BufWriter::with_capacity(1 << 20, file), gzip);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let forums = if opts.sites.is_empty() { "every forum".to_owned() } else { opts.sites.iter().map(SiteId::as_str).collect::<Vec<_>>().join(", ") };
        let fields = format!(
            "software: luntan-export {}\r\nformat: WARC File Format 1.1\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n\
             description: pages of {forums} as luntan saved them, with the HTTP head each was sent with\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let now = warc_date(time::OffsetDateTime::now_utc());
        let info_id = writer.write(&Record::warcinfo(&now, &name, fields.as_bytes())).map_err(output(path))?;
        Ok(WarcOut { path: path.to_owned(), writer, info_id })
    }

    fn write(&mut self, mut record: Record) -> Result<(), ExportError> {
        record.extra.push(("WARC-Warcinfo-ID", self.info_id.clone()));
        self.writer.write(&record).map_err(output(&self.path))?;
        Ok(())
    }

    /// Flushes, fsyncs and renames the file into place; returns its size.
    fn finish(self) -> Result<u64, ExportError> {
        let written = self.writer.written();
        let path = self.path;
        let file = self.writer.into_inner().into_inner().map_err(|e| output(&path)(e.into_error()))?;
        file.commit().map_err(output(&path))?;
        Ok(written)
    }
}

/// `WARC-Date`: UTC to the second, as every WARC reader takes it.
fn warc_date(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute(), t.second())
}

/// Reads each thread's pages and what download kept of them, and turns
/// them into records.
struct Pages<'a> {
    data: &'a DataDir,
    store: &'a Store,
    sites: HashMap<&'a str, &'a Site>,
    /// Each forum's cached encoding, for pages saved before heads were kept.
    cached: HashMap<String, Option<&'static encoding::Encoding>>,
}

/// One page as found on disk, with what is known of how it came.
enum Source<'c> {
    /// The line download kept.
    Captured(&'c PageCapture),
    /// Saved before download kept lines: from a browser (its line in
    /// `article<T>.fetched`: the forum's clock and the URL rendered).
    OldSnapshot(i64, String),
    /// Saved before download kept lines: the URL if it can be told, and
    /// the forum's clock if `article<T>.fetched` has it.
    Old(Option<String>, Option<i64>),
}

impl<'a> Pages<'a> {
    fn new(data: &'a DataDir, store: &'a Store, site_files: &'a [Site]) -> Pages<'a> {
        Pages { data, store, sites: site_files.iter().map(|s| (s.id.as_str(), s)).collect(), cached: HashMap::new() }
    }

    fn write_thread(&mut self, row: &ThreadRow, loc: &ThreadLoc, w: &mut WarcOut, report: &mut ExportReport) -> Result<(), ExportError> {
        let n = row.pages.unwrap_or(0);
        let json = row.content_type.as_deref().is_some_and(|ct| mime_of(ct) == "application/json");
        let http = self.data.http_path(loc);
        let captures = match capture::read(&http) {
            Ok(c) => c,
            Err(e) => {
                report.bad.push(BadRecord { path: http.clone(), what: format!("{}; its pages get a minimal head", strip_path(&e.to_string(), &http)) });
                None
            }
        };
        let fetched = if captures.is_none() { self.fetched_lines(loc, report) } else { None };
        let mut old_urls: Option<Option<Vec<url::Url>>> = None;
        for page in 1..=n {
            let path = if json { self.data.json_path(loc, page) } else { self.data.html_path(loc, page) };
            let body = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) => {
                    report.bad.push(BadRecord { path, what: format!("cannot read the saved page: {e}") });
                    continue;
                }
            };
            let line = captures.as_ref().and_then(|c| c.iter().find(|c| c.page == page));
            let from_fetched = fetched.as_ref().and_then(|f| f.get(page as usize - 1)).cloned();
            let source = match (line, from_fetched) {
                (Some(c), _) => Source::Captured(c),
                (None, Some((at, url))) if !json => Source::OldSnapshot(at, url),
                (None, Some((at, url))) => Source::Old(Some(url), Some(at)),
                (None, None) if page == 1 => Source::Old(Some(row.url.clone()), None),
                (None, None) => {
                    let site = self.sites.get(row.site.as_str()).copied();
                    let urls = old_urls.get_or_insert_with(|| site.and_then(|s| luntan_text::pager::stored_page_urls(self.data, s, row)));
                    Source::Old(urls.as_ref().and_then(|u| u.get(page as usize - 1)).map(url::Url::to_string), None)
                }
            };
            let written = self.record(row, &path, &body, source);
            emit(w, written, path, &body, report)?;
        }
        self.write_comments(loc, w, report)
    }

    /// A hybrid thread's comments pages (`article<T>_c<N>.json`), after its
    /// article's: each with the head the server sent where download kept
    /// it (`article<T>_c.http`), else a minimal JSON head at the URL and
    /// clock of its line in `article<T>.comments`.
    fn write_comments(&mut self, loc: &ThreadLoc, w: &mut WarcOut, report: &mut ExportReport) -> Result<(), ExportError> {
        let list = self.data.comments_list_path(loc);
        let text = match std::fs::read_to_string(&list) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                report.bad.push(BadRecord { path: list, what: format!("cannot read: {e}") });
                return Ok(());
            }
        };
        let http = self.data.comments_http_path(loc);
        let captures = capture::read(&http).unwrap_or_else(|e| {
            report.bad.push(BadRecord { path: http.clone(), what: format!("{}; its pages get a minimal head", strip_path(&e.to_string(), &http)) });
            None
        });
        for (i, line) in text.lines().enumerate() {
            let page = i as u32 + 1;
            // A replies page's line names its comment after a third tab.
            let mut cols = line.split('\t');
            let Some((at, url)) = cols.next().zip(cols.next()).and_then(|(at, url)| Some((at.trim().parse::<i64>().ok()?, url.trim().to_owned()))) else {
                report.bad.push(BadRecord { path: list.clone(), what: format!("line {page}: not <unix seconds><tab><url>") });
                continue;
            };
            let path = self.data.comments_path(loc, page);
            let body = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) => {
                    report.bad.push(BadRecord { path, what: format!("cannot read the saved page: {e}") });
                    continue;
                }
            };
            let written = match captures.as_ref().and_then(|c| c.iter().find(|c| c.page == page)) {
                Some(c) => self.record_captured(c),
                None => json_head(&url, at, body.len()),
            };
            emit(w, written, path, &body, report)?;
        }
        Ok(())
    }

    /// What record a page becomes: its head (or content type), URL and date.
    fn record(&mut self, row: &ThreadRow, path: &Path, body: &[u8], source: Source) -> Result<Written, RecordError> {
        match source {
            Source::Captured(c) if matches!(c.exchange, Exchange::Snapshot) => {
                let date = c.time().map(warc_date).map_err(|source| RecordError::LineTime { page: c.page, at: c.at.clone(), source })?;
                check_url(&c.url).map_err(|source| RecordError::LineUrl { page: c.page, source })?;
                Ok(Written::Snapshot(snapshot_type(row), c.url.clone(), date))
            }
            Source::Captured(c) => self.record_captured(c),
            Source::OldSnapshot(at, url) => {
                check_url(&url)?;
                Ok(Written::Snapshot(snapshot_type(row), url, unix_date(at)?))
            }
            Source::Old(url, at) => {
                let url = url.ok_or(RecordError::NoUrl)?;
                check_url(&url)?;
                let date = match at {
                    Some(at) => unix_date(at)?,
                    // Written once, when it was fetched.
                    None => warc_date(std::fs::metadata(path).and_then(|m| m.modified()).map_err(RecordError::NoTime)?.into()),
                };
                let content_type = self.old_content_type(row, body);
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n", body.len());
                Ok(Written::Synthesized(head.into_bytes(), url, date))
            }
        }
    }

    /// A response as its line in a `.http` file keeps it.
    fn record_captured(&self, c: &PageCapture) -> Result<Written, RecordError> {
        let date = c.time().map(warc_date).map_err(|source| RecordError::LineTime { page: c.page, at: c.at.clone(), source })?;
        check_url(&c.url).map_err(|source| RecordError::LineUrl { page: c.page, source })?;
        match &c.exchange {
            Exchange::Response { status, version, headers } => Ok(Written::Response(http_head(version, *status, headers), c.url.clone(), date)),
            Exchange::Snapshot => Err(RecordError::NotResponse { page: c.page }),
        }
    }

    /// A page saved before heads were kept: JSON as JSON; HTML (or what
    /// the row's Content-Type names) with the charset luntan detects.
    fn old_content_type(&mut self, row: &ThreadRow, body: &[u8]) -> String {
        let mime = row.content_type.as_deref().map(mime_of).filter(|m| !m.is_empty()).unwrap_or_else(|| "text/html".into());
        if mime == "application/json" {
            return mime;
        }
        let forced = self.sites.get(row.site.as_str()).and_then(|s| s.encoding);
        let store = self.store;
        let cached = *self
            .cached
            .entry(row.site.to_string())
            .or_insert_with(|| store.site_encoding(&row.site).ok().flatten().and_then(|label| encoding::Encoding::for_label(label.as_bytes())));
        let d = encoding::detect(body, row.content_type.as_deref(), forced, cached);
        format!("{mime}; charset={}", d.encoding.name().to_ascii_lowercase())
    }

    /// `article<T>.fetched`: the forum's clock and URL of each page, kept
    /// by protocol and browser mode before `article<T>.http` was.
    fn fetched_lines(&self, loc: &ThreadLoc, report: &mut ExportReport) -> Option<Vec<(i64, String)>> {
        let path = self.data.fetched_path(loc);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => {
                report.bad.push(BadRecord { path, what: format!("cannot read: {e}") });
                return None;
            }
        };
        let mut out = Vec::new();
        for (i, l) in text.lines().enumerate() {
            match l.split_once('\t').and_then(|(at, url)| Some((at.trim().parse().ok()?, url.trim().to_owned()))) {
                Some(x) => out.push(x),
                None => {
                    report.bad.push(BadRecord { path, what: format!("line {}: not <unix seconds><tab><url>", i + 1) });
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// What [`Pages::record`] decided: the block's head or content type, the
/// target URI and the date.
enum Written {
    Response(Vec<u8>, String, String),
    Synthesized(Vec<u8>, String, String),
    Snapshot(String, String, String),
}

/// Writes what [`Pages::record`] decided for the page at `path`, counted
/// by kind; a page it refused is left out with why.
fn emit(w: &mut WarcOut, written: Result<Written, RecordError>, path: PathBuf, body: &[u8], report: &mut ExportReport) -> Result<(), ExportError> {
    match written {
        Ok(Written::Response(head, target, date)) => {
            w.write(Record::response(&target, &date, &head, body))?;
            report.responses += 1;
        }
        Ok(Written::Synthesized(head, target, date)) => {
            w.write(Record::response(&target, &date, &head, body))?;
            report.synthesized += 1;
        }
        Ok(Written::Snapshot(content_type, target, date)) => {
            w.write(Record::resource(&target, &date, &content_type, body))?;
            report.snapshots += 1;
        }
        Err(e) => report.bad.push(BadRecord { path, what: e.to_string() }),
    }
    Ok(())
}

/// A comments page saved without its head: JSON, at its line's URL and clock.
fn json_head(url: &str, at: i64, len: usize) -> Result<Written, RecordError> {
    check_url(url)?;
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n");
    Ok(Written::Synthesized(head.into_bytes(), url.to_owned(), unix_date(at)?))
}

/// A browser's DOM states are serialised as UTF-8 HTML.
fn snapshot_type(row: &ThreadRow) -> String {
    row.content_type.clone().unwrap_or_else(|| "text/html; charset=utf-8".into())
}

fn mime_of(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

fn check_url(url: &str) -> Result<(), BadUrl> {
    url::Url::parse(url).map(|_| ()).map_err(|source| BadUrl { url: url.to_owned(), source })
}

fn unix_date(secs: i64) -> Result<String, RecordError> {
    time::OffsetDateTime::from_unix_timestamp(secs).map(warc_date).map_err(|source| RecordError::Time { secs, source })
}

/// An error's text without the path the bad record names anyway.
fn strip_path(text: &str, path: &Path) -> String {
    text.strip_prefix(&format!("{}: ", path.display())).unwrap_or(text).to_owned()
}

/// The status line and headers of a response as download kept them, and
/// the blank line. The body is kept de-chunked, so a `Transfer-Encoding`
/// the forum sent is written as `X-Archive-Orig-Transfer-Encoding` (pywb's
/// name for a header kept but no longer in force), which keeps replay
/// from reading the body as chunks. Every other header is written as it
/// came, byte for byte.
pub fn http_head(version: &str, status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + headers.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>());
    let version = if version.starts_with("HTTP/") { version } else { "HTTP/1.1" };
    let status_line = match reason(status) {
        "" => format!("{version} {status}\r\n"),
        reason => format!("{version} {status} {reason}\r\n"),
    };
    out.extend_from_slice(status_line.as_bytes());
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("transfer-encoding") {
            out.extend_from_slice(b"X-Archive-Orig-");
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        // A line break in a value (only a hand-edited file has one) would end the head.
        out.extend(capture::latin1_bytes(value).into_iter().filter(|&b| b != b'\r' && b != b'\n'));
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// The reason phrase of the statuses a saved page can have (only
/// successes are saved).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        206 => "Partial Content",
        _ => "",
    }
}

#[cfg(test)]
mod tests;
