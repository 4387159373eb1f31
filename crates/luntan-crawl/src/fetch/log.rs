//! The request log: with `LUNTAN_REQUEST_LOG=FILE`, one JSON line per
//! request this process makes, to audit politeness against a server's log.

use std::sync::Mutex;

use tokio::time::Instant;
use url::Url;

use super::{FetchError, Outcome};

/// `LUNTAN_REQUEST_LOG=FILE`: every request this process makes is appended
/// to FILE as one JSON line, for auditing politeness against a server's own
/// log: `pid`, `site`, `url`, `start_us`/`end_us` (when the gate let it go
/// and when it was over, microseconds on this process's monotonic clock, so
/// spacing is exact), `unix_us` (its start on the wall clock, to match the
/// server's log), `outcome` (the status, or the error; a WebSocket's
/// handshake is `101`, each frame a page sends over it `frame sent`) and
/// `bytes` (the body received, after decompression, or the frame sent; 0
/// for a redirect, a 304 or an error).
pub(super) struct RequestLog {
    file: Mutex<std::fs::File>,
    epoch: Instant,
    /// `epoch` on the wall clock: wall times are derived from monotonic
    /// ones, so the two columns of a line never disagree.
    epoch_wall: std::time::SystemTime,
}

pub(super) fn request_log() -> Option<&'static RequestLog> {
    static LOG: std::sync::OnceLock<Option<RequestLog>> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var_os("LUNTAN_REQUEST_LOG")?;
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(file) => Some(RequestLog { file: Mutex::new(file), epoch: Instant::now(), epoch_wall: std::time::SystemTime::now() }),
            Err(e) => {
                tracing::warn!("LUNTAN_REQUEST_LOG {}: {e}; not logging requests", std::path::Path::new(&path).display());
                None
            }
        }
    })
    .as_ref()
}

impl RequestLog {
    pub(super) fn record(&self, site: &str, url: &Url, start: Instant, outcome: &Result<Outcome, FetchError>) {
        let bytes = match outcome {
            Ok(Outcome::Page(f)) => f.body.len(),
            _ => 0,
        };
        let outcome = match outcome {
            Ok(Outcome::Page(f)) => f.status.to_string(),
            Ok(Outcome::Redirect(to)) => format!("redirect {to}"),
            Ok(Outcome::NotModified) => "304".to_owned(),
            Err(e) => e.to_string(),
        };
        self.record_line(site, url, start, &outcome, bytes);
    }

    /// One line, its outcome already words: what [`RequestLog::record`]
    /// writes for a response, and a WebSocket's handshake (`101`) or frame
    /// (`frame sent`) for itself.
    pub(super) fn record_line(&self, site: &str, url: &Url, start: Instant, outcome: &str, bytes: usize) {
        use std::io::Write as _;
        let us = |t: Instant| t.saturating_duration_since(self.epoch).as_micros() as u64;
        let line = serde_json::json!({
            "pid": std::process::id(),
            "site": site,
            "url": url.as_str(),
            "start_us": us(start),
            "end_us": us(Instant::now()),
            "unix_us": (self.epoch_wall + start.saturating_duration_since(self.epoch)).duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64),
            "outcome": outcome,
            "bytes": bytes,
        });
        // One write per line: appends from several processes stay whole lines.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}
