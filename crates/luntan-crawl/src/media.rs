//! The media step (`luntan-media`): the pictures and attachments the
//! extracted threads show, fetched through the forum's own [`Fetcher`] and
//! archived once per content under `media/<ab>/<sha256>`.
//!
//! A forum takes part only when its site file has `<media>`. The URLs come
//! from the thread XML (every post's `<img src>` when `images`, its links
//! that `attachments` finds), so the step needs no page again and reads a
//! thread saved on any day. Each URL ends in one `media` row: archived, with
//! the hash its file is stored under, or failed with why (a 404, robots.txt,
//! a host not the forum's, over the cap, a type not kept). A URL with a row
//! is not asked for again, so a second run sends no request; `--retry-failed`
//! forgets the failed rows first. A file is published before its row
//! (temp file, fsync, rename), so a row never names a file that is not there;
//! a run killed between the two fetches that one URL again next time and
//! finds its file already stored.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use luntan_core::contract::{Progress, Stop};
use luntan_core::doc::DocError;
use luntan_core::ids::MediaHash;
use luntan_core::layout::{write_atomic, PathError};
use luntan_core::site::MediaRules;
use luntan_core::store::{MediaRow, MediaStatus, StoreError};
use luntan_core::{DataDir, Store, ThreadDoc, ThreadState};
use url::Url;

use crate::db::{blocking, with_store};
use crate::fetch::{FetchError, Fetcher};

/// Why the media step stopped (a URL that fails is a row, not an error).
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error("crawl state: {0}")]
    Store(#[from] StoreError),
    /// This machine's fault (a full disk, a permission): nothing is marked
    /// failed, and a plain re-run once it is fixed carries on.
    #[error("{0}")]
    Local(PathError),
}

/// What one forum's run did.
#[derive(Debug, Default, Clone)]
pub struct MediaReport {
    pub site: String,
    /// Threads whose XML was read.
    pub threads: usize,
    /// Thread XML that could not be read (each said in one line).
    pub bad_xml: usize,
    /// Distinct media URLs the threads name.
    pub urls: usize,
    /// Of those, URLs with a row from an earlier run: not asked for.
    pub known: usize,
    /// URLs archived by this run.
    pub archived: usize,
    /// Files this run added under `media/` (fewer than `archived` when
    /// URLs share a content, or a content was archived before).
    pub new_files: usize,
    /// Bytes of the files added.
    pub new_bytes: u64,
    /// Bytes of every body archived (a content shown at two URLs twice).
    pub fetched_bytes: u64,
    /// URLs failed by this run, with why.
    pub failed: Vec<(String, String)>,
    /// URLs left unasked because the run was stopped.
    pub left: usize,
}

impl MediaReport {
    /// `dzx: 41 media archived (12 new files, 48.2 KB), 9 failed, 0 known; 58 threads read`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}: {} media archived ({} new {}, {}), {} failed, {} known from earlier runs; {} threads read",
            self.site,
            self.archived,
            self.new_files,
            if self.new_files == 1 { "file" } else { "files" },
            human_bytes(self.new_bytes),
            self.failed.len(),
            self.known,
            self.threads
        );
        if self.bad_xml > 0 {
            s.push_str(&format!(", {} unreadable", self.bad_xml));
        }
        if self.left > 0 {
            s.push_str(&format!("; stopped with {} URLs left", self.left));
        }
        s
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1 << 20 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1 << 20) as f64),
    }
}

/// Archives the media of `fetcher`'s forum (its site file must have
/// `<media>`; a site without it archives nothing), up to the forum's
/// concurrency at once, each request through its gate.
pub async fn archive_site(
    data: &DataDir,
    store: Arc<Mutex<Store>>,
    fetcher: Arc<Fetcher>,
    stop: &Stop,
    progress: &dyn Progress,
) -> Result<MediaReport, MediaError> {
    let site = fetcher.site().clone();
    let mut report = MediaReport { site: site.id.to_string(), ..MediaReport::default() };
    let Some(rules) = site.media.clone() else { return Ok(report) };
    let site_id = site.id.clone();
    let (rows, known) = {
        let id = site_id.clone();
        with_store(&store, move |s| -> Result<_, StoreError> {
            let mut rows = s.threads(Some(&id), ThreadState::Extracted)?;
            rows.extend(s.threads(Some(&id), ThreadState::Indexed)?);
            Ok((rows, s.media_known(&id)?))
        })
        .await?
    };
    let mut urls = BTreeSet::new();
    for row in &rows {
        let Some(loc) = row.saved_location() else { continue };
        let path = data.xml_path(&loc);
        match read_doc(&path) {
            Ok(doc) => {
                report.threads += 1;
                urls.extend(media_urls(&doc, &rules));
            }
            Err(why) => {
                report.bad_xml += 1;
                tracing::warn!("{}: {why}", path.display());
            }
        }
    }
    report.urls = urls.len();
    let todo: Vec<String> = urls.into_iter().filter(|u| !known.contains(u)).collect();
    report.known = report.urls - todo.len();
    progress.grow(todo.len() as u64);

    let concurrency = site.politeness.concurrency.max(1);
    let max_bytes = rules.max_bytes;
    let mut fetches = futures_util::stream::iter(todo)
        .map(|url| {
            let fetcher = fetcher.clone();
            async move {
                // Checked as each request is about to start: a stop lets the
                // ones in flight finish and asks for no more.
                if stop.is_set() {
                    return (url, None);
                }
                let got = match Url::parse(&url) {
                    Ok(u) => fetcher.get_media(&u, max_bytes).await.map_err(|e| reason(&e, &url)),
                    Err(e) => Err(format!("not a URL: {e}")),
                };
                (url, Some(got))
            }
        })
        .buffer_unordered(concurrency);

    let mut stored: HashSet<MediaHash> = HashSet::new();
    while let Some((url, got)) = fetches.next().await {
        let Some(got) = got else {
            report.left += 1;
            continue;
        };
        let fetched_at = luntan_core::capture::format_time(std::time::SystemTime::now());
        let row = match got.and_then(|f| {
            let mime = mime_of(f.content_type.as_deref(), &f.body);
            match rules.type_allowed(&mime) {
                true => Ok((f.body, mime)),
                false => Err(format!("content type {mime} is not kept (<media types> allows {})", rules.types.join(" "))),
            }
        }) {
            Ok((body, mime)) => {
                let hash = MediaHash::of(&body);
                let path = data.media_path(&hash);
                // Written on the blocking pool, one file at a time (the
                // stream hands results over in turn), so two URLs of one
                // content never race on its temp file.
                let bytes = body.len() as u64;
                let new = store_file(path, body).await.map_err(MediaError::Local)?;
                report.archived += 1;
                report.fetched_bytes += bytes;
                if new && stored.insert(hash.clone()) {
                    report.new_files += 1;
                    report.new_bytes += bytes;
                }
                MediaRow {
                    site: site_id.clone(),
                    url: url.clone(),
                    sha256: Some(hash.to_string()),
                    content_type: Some(mime),
                    bytes: Some(bytes as i64),
                    status: MediaStatus::Archived,
                    reason: None,
                    fetched_at,
                }
            }
            Err(why) => {
                tracing::warn!("{site_id}: {url}: {why}");
                report.failed.push((url.clone(), why.clone()));
                MediaRow {
                    site: site_id.clone(),
                    url: url.clone(),
                    sha256: None,
                    content_type: None,
                    bytes: None,
                    status: MediaStatus::Failed,
                    reason: Some(why),
                    fetched_at,
                }
            }
        };
        with_store(&store, move |s| s.media_record(&row)).await?;
        progress.advance(1);
    }
    Ok(report)
}

/// Publishes `body` at `path` unless a file is there already (the same
/// content from another URL or an earlier run); whether it was new.
async fn store_file(path: PathBuf, body: Vec<u8>) -> Result<bool, PathError> {
    blocking(move || {
        if path.is_file() {
            return Ok(false);
        }
        write_atomic(&path, &body).map(|()| true).map_err(|source| PathError { path, source })
    })
    .await
}

/// Why a thread's XML could not be read (the line names the file).
#[derive(Debug, thiserror::Error)]
enum BadDoc {
    #[error(transparent)]
    Read(#[from] std::io::Error),
    #[error(transparent)]
    Doc(#[from] DocError),
}

fn read_doc(path: &Path) -> Result<ThreadDoc, BadDoc> {
    Ok(ThreadDoc::from_xml(&std::fs::read_to_string(path)?)?)
}

/// The media URLs a thread names under `rules`: its posts' pictures, and
/// its links that are attachments; http(s) only.
pub fn media_urls(doc: &ThreadDoc, rules: &MediaRules) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in &doc.posts {
        if rules.images {
            out.extend(p.images.iter().map(|i| i.src.clone()));
        }
        out.extend(p.links.iter().filter(|l| rules.is_attachment(&l.href)).map(|l| l.href.clone()));
    }
    out.retain(|u| u.starts_with("http://") || u.starts_with("https://"));
    out
}

/// Why a URL failed, without the URL (the row is keyed by it; the warning
/// line names it once).
fn reason(e: &FetchError, url: &str) -> String {
    e.to_string().replace(&format!("{url}: "), "")
}

/// The type a body is kept as: the `Content-Type`'s type and subtype, or,
/// when the server names none or only `application/octet-stream`, what the
/// first bytes say (the kinds forums serve: JPEG, PNG, GIF, WebP, PDF, ZIP).
pub fn mime_of(content_type: Option<&str>, body: &[u8]) -> String {
    let said = content_type.map(crate::fetch::mime_type).unwrap_or_default();
    if !said.is_empty() && said != "application/octet-stream" {
        return said;
    }
    let sniffed = match body {
        [0xFF, 0xD8, 0xFF, ..] => "image/jpeg",
        [0x89, b'P', b'N', b'G', ..] => "image/png",
        [b'G', b'I', b'F', b'8', ..] => "image/gif",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        [b'%', b'P', b'D', b'F', ..] => "application/pdf",
        [b'P', b'K', 3, 4, ..] => "application/zip",
        _ => "application/octet-stream",
    };
    sniffed.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_header_or_else_the_bytes() {
        assert_eq!(mime_of(Some("Image/JPEG; charset=binary"), b""), "image/jpeg");
        assert_eq!(mime_of(None, &[0xFF, 0xD8, 0xFF, 0xE0]), "image/jpeg");
        assert_eq!(mime_of(Some("application/octet-stream"), b"%PDF-1.7"), "application/pdf");
        assert_eq!(mime_of(Some(""), b"RIFF\0\0\0\0WEBPVP8 "), "image/webp");
        assert_eq!(mime_of(None, b"<html>"), "application/octet-stream");
        assert_eq!(mime_of(Some("text/html"), &[0xFF, 0xD8, 0xFF]), "text/html", "a labelled type is what the server said");
    }

    #[test]
    fn the_summary_counts_files_apart_from_urls() {
        let r = MediaReport { site: "dzx".into(), threads: 3, urls: 5, archived: 4, new_files: 1, new_bytes: 2048, ..MediaReport::default() };
        assert_eq!(r.summary(), "dzx: 4 media archived (1 new file, 2.0 KB), 0 failed, 0 known from earlier runs; 3 threads read");
    }
}
