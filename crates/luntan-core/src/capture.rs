//! What download keeps of each page's exchange with the forum, beside the
//! page: `article<T>.http`, one JSON object a line, one line a page.
//!
//! ```text
//! {"page":1,"url":"http://bbs.example/t/77","at":"2026-11-30T08:15:02.417Z","kind":"response","status":200,"version":"HTTP/1.1","headers":[["content-type","text/html; charset=gbk"],["date","Mon, 30 Nov 2026 08:15:02 GMT"]]}
//! {"page":2,"url":"http://bbs.example/t/77?page=2","at":"2026-11-30T08:15:03.022Z","kind":"response",…}
//! ```
//!
//! A page's file holds the body; its line holds the rest of what an archive
//! needs to replay it (`luntan-export --warc`): the URL whose response it
//! is (after redirects), when it arrived (this machine's clock, UTC), and
//! the status line and headers as the HTTP client handed them over. Header
//! names come lower-cased (HTTP/1 names are case-insensitive, and the
//! client keeps no case). Values are bytes that need not be UTF-8 (a forum
//! may send GBK in a header), so each byte is kept as the character of the
//! same number (ISO-8859-1), which gives the bytes back exactly. When the
//! forum compressed a body, the client decoded it and removed
//! `Content-Encoding` and `Content-Length`: the headers kept describe the
//! body kept. A DOM state a browser serialised (browser mode) was not sent by
//! anyone, so its line is a `snapshot`, with the URL rendered and when.
//!
//! Pages saved before this file existed have none (or no line of their own):
//! whoever reads it must manage without.
//!
//! ```
//! use luntan_core::capture::{Exchange, PageCapture};
//! let line = PageCapture { page: 1, url: "http://h/t/1".into(), at: "2026-11-30T08:15:02Z".into(), exchange: Exchange::Snapshot };
//! let text = luntan_core::capture::to_lines(&[line.clone()]);
//! assert_eq!(luntan_core::capture::parse_lines(&text).unwrap(), vec![line]);
//! ```

use std::path::{Path, PathBuf};

/// One page's line in `article<T>.http`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageCapture {
    /// 1-based, as in `article<T>_p<N>`.
    pub page: u32,
    /// The URL whose response (or rendering) the page is.
    pub url: String,
    /// When it arrived: RFC 3339, UTC, this machine's clock.
    pub at: String,
    #[serde(flatten)]
    pub exchange: Exchange,
}

/// What produced a page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Exchange {
    /// An HTTP response: its status, protocol version (`HTTP/1.1`) and
    /// headers in the order received, values as ISO-8859-1 text (see the
    /// module docs).
    Response { status: u16, version: String, headers: Vec<(String, String)> },
    /// A DOM state serialised by a browser (browser mode): no response of its own.
    Snapshot,
}

impl PageCapture {
    /// [`PageCapture::at`] read back.
    pub fn time(&self) -> Result<time::OffsetDateTime, time::error::Parse> {
        time::OffsetDateTime::parse(&self.at, &time::format_description::well_known::Rfc3339)
    }
}

/// `at` for a moment: RFC 3339 in UTC, to the millisecond.
pub fn format_time(t: std::time::SystemTime) -> String {
    let t = time::OffsetDateTime::from(t);
    let ms = t.replace_nanosecond(t.millisecond() as u32 * 1_000_000).unwrap_or(t);
    ms.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// Header bytes as text, one character per byte (ISO-8859-1): lossless.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// [`latin1`] undone; a character above U+00FF (a hand-edited file) is
/// written as its UTF-8.
pub fn latin1_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match u8::try_from(u32::from(c)) {
            Ok(b) => out.push(b),
            Err(_) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// The file's text for these lines.
pub fn to_lines(captures: &[PageCapture]) -> String {
    let mut out = String::new();
    for c in captures {
        out.push_str(&serde_json::to_string(c).expect("a capture serializes"));
        out.push('\n');
    }
    out
}

/// Why an `article<T>.http` could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("line {line}: {why}")]
    Line { line: usize, why: String },
    #[error("{}: {inner}", path.display())]
    At { path: PathBuf, inner: Box<CaptureError> },
}

/// Parses a file's text; a line that is not a capture fails the whole.
pub fn parse_lines(text: &str) -> Result<Vec<PageCapture>, CaptureError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let c: PageCapture = serde_json::from_str(line).map_err(|e| CaptureError::Line { line: i + 1, why: e.to_string() })?;
        if c.page == 0 {
            return Err(CaptureError::Line { line: i + 1, why: "page 0 (pages count from 1)".into() });
        }
        out.push(c);
    }
    Ok(out)
}

/// Reads `path`: `None` when there is no such file (a page saved before
/// captures were kept, or a test's hand-made directory).
pub fn read(path: &Path) -> Result<Option<Vec<PageCapture>>, CaptureError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(CaptureError::Read { path: path.to_owned(), source }),
    };
    parse_lines(&text).map(Some).map_err(|inner| CaptureError::At { path: path.to_owned(), inner: Box::new(inner) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_that_are_not_utf8_come_back_exactly() {
        let gbk_cookie = b"name=\xd0\xa1\xc3\xf7; Path=/";
        let text = latin1(gbk_cookie);
        let c = PageCapture {
            page: 2,
            url: "http://h/t?x=1".into(),
            at: format_time(std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_764_490_502_417)),
            exchange: Exchange::Response { status: 200, version: "HTTP/1.1".into(), headers: vec![("set-cookie".into(), text)] },
        };
        assert_eq!(c.at, "2025-11-30T08:15:02.417Z");
        let back = parse_lines(&to_lines(std::slice::from_ref(&c))).unwrap();
        assert_eq!(back, vec![c.clone()]);
        let Exchange::Response { headers, .. } = &back[0].exchange else { panic!("a response") };
        assert_eq!(latin1_bytes(&headers[0].1), gbk_cookie);
        assert_eq!(back[0].time().unwrap().unix_timestamp(), 1_764_490_502);
    }

    #[test]
    fn a_broken_line_names_its_number_and_a_missing_file_is_none() {
        let e = parse_lines("{\"page\":1,\"url\":\"u\",\"at\":\"x\",\"kind\":\"snapshot\"}\n{\"page\":2}\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2: "), "{e}");
        let t = tempfile::tempdir().unwrap();
        assert!(read(&t.path().join("article1.http")).unwrap().is_none());
        std::fs::write(t.path().join("article1.http"), "not json\n").unwrap();
        let e = read(&t.path().join("article1.http")).unwrap_err();
        assert!(e.to_string().contains("article1.http: line 1:"), "{e}");
    }
}
