//! WARC/1.1 records (ISO 28500:2017), written one at a time, each its own
//! gzip member when the file is a `.warc.gz`, as warcio and pywb read them.
//!
//! A record is its header fields, a blank line, the content block and two
//! CRLFs. luntan writes three kinds: `warcinfo` first (what wrote the file),
//! then per saved page a `response` (the block is the HTTP response head,
//! a blank line and the body as saved, `Content-Type:
//! application/http;msgtype=response`) or a `resource` (a DOM state a
//! browser serialised, which no server sent: the block is the page
//! itself). Each carries `WARC-Block-Digest`, the SHA-1 of the block, and
//! `WARC-Payload-Digest`, the SHA-1 of the body after the HTTP head, both
//! `sha1:` and base32 (RFC 4648) as warcio computes them.
//!
//! ```
//! use luntan_export::warc::{Record, WarcWriter};
//! let mut w = WarcWriter::new(Vec::new(), false);
//! let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n";
//! w.write(&Record::response("http://h/a", "2026-11-30T08:15:02Z", head, b"hi")).unwrap();
//! let records = luntan_export::warc::read_records(&w.into_inner()).unwrap();
//! assert_eq!(records[0].header("WARC-Target-URI"), Some("http://h/a"));
//! assert_eq!(records[0].http_body(), Some(&b"hi"[..]));
//! ```

use std::io::{self, Read, Write};

use sha1::{Digest, Sha1};

/// `sha1:` and the base32 of the SHA-1 of `bytes`, WARC's digest form.
pub fn sha1_digest(bytes: &[u8]) -> String {
    format!("sha1:{}", data_encoding::BASE32.encode(&Sha1::digest(bytes)))
}

/// A fresh `<urn:uuid:…>` (random, version 4), what WARC-Record-ID holds.
pub fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// One record to write: its type, its own header fields and its block.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub kind: &'static str,
    /// `WARC-Target-URI` (none for `warcinfo`).
    pub target: Option<&'a str>,
    /// `WARC-Date`: `YYYY-MM-DDThh:mm:ssZ`.
    pub date: String,
    pub content_type: String,
    /// For a response, the HTTP head (status line, headers, blank line),
    /// which is part of the block but not of the payload.
    pub head: &'a [u8],
    pub body: &'a [u8],
    /// More header fields (`WARC-Filename`, `WARC-Warcinfo-ID`, …).
    pub extra: Vec<(&'static str, String)>,
}

impl<'a> Record<'a> {
    /// A `response`: `head` is the HTTP status line and headers, ending in
    /// the blank line, and `body` the payload after it.
    pub fn response(target: &'a str, date: &str, head: &'a [u8], body: &'a [u8]) -> Record<'a> {
        Record {
            kind: "response",
            target: Some(target),
            date: date.to_owned(),
            content_type: "application/http;msgtype=response".into(),
            head,
            body,
            extra: Vec::new(),
        }
    }

    /// A `resource`: `body` is the whole block, of `content_type`.
    pub fn resource(target: &'a str, date: &str, content_type: &str, body: &'a [u8]) -> Record<'a> {
        Record { kind: "resource", target: Some(target), date: date.to_owned(), content_type: content_type.to_owned(), head: b"", body, extra: Vec::new() }
    }

    /// The `warcinfo` record that opens a file: `fields` as
    /// `application/warc-fields` (`software: …` lines).
    pub fn warcinfo(date: &str, filename: &str, fields: &'a [u8]) -> Record<'a> {
        Record {
            kind: "warcinfo",
            target: None,
            date: date.to_owned(),
            content_type: "application/warc-fields".into(),
            head: b"",
            body: fields,
            extra: vec![("WARC-Filename", filename.to_owned())],
        }
    }

    /// The record's header section and block, as written before compression.
    fn bytes(&self, id: &str) -> Vec<u8> {
        let mut block_hash = Sha1::new();
        block_hash.update(self.head);
        block_hash.update(self.body);
        let block_digest = format!("sha1:{}", data_encoding::BASE32.encode(&block_hash.finalize()));
        let len = self.head.len() + self.body.len();
        let mut h = String::with_capacity(512);
        let mut field = |name: &str, value: &str| {
            h.push_str(name);
            h.push_str(": ");
            h.push_str(value);
            h.push_str("\r\n");
        };
        field("WARC-Type", self.kind);
        field("WARC-Record-ID", id);
        field("WARC-Date", &self.date);
        if let Some(t) = self.target {
            field("WARC-Target-URI", t);
        }
        for (k, v) in &self.extra {
            field(k, v);
        }
        if self.kind != "warcinfo" {
            // The payload: the body after the HTTP head (a resource's whole block).
            field("WARC-Payload-Digest", &sha1_digest(self.body));
        }
        field("WARC-Block-Digest", &block_digest);
        field("Content-Type", &self.content_type);
        field("Content-Length", &len.to_string());
        let mut out = Vec::with_capacity(16 + h.len() + len + 4);
        out.extend_from_slice(b"WARC/1.1\r\n");
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(self.head);
        out.extend_from_slice(self.body);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }
}

/// Writes records to `W`, each gzipped alone when `gzip` (so a reader can
/// seek to any record by its offset, as CDX indexes do).
pub struct WarcWriter<W: Write> {
    out: W,
    gzip: bool,
    /// Bytes written so far (compressed, when gzipped).
    written: u64,
}

impl<W: Write> WarcWriter<W> {
    pub fn new(out: W, gzip: bool) -> WarcWriter<W> {
        WarcWriter { out, gzip, written: 0 }
    }

    /// Writes one record with a fresh id; returns the id.
    pub fn write(&mut self, r: &Record) -> io::Result<String> {
        let id = record_id();
        let bytes = r.bytes(&id);
        let wrote = if self.gzip {
            let mut z = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 3 + 64), flate2::Compression::default());
            z.write_all(&bytes)?;
            let z = z.finish()?;
            self.out.write_all(&z)?;
            z.len()
        } else {
            self.out.write_all(&bytes)?;
            bytes.len()
        };
        self.written += wrote as u64;
        Ok(id)
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A record read back: its header fields, in order, and its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    pub version: String,
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl ReadRecord {
    /// A header field's value (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// A response's HTTP head, up to and including its blank line.
    pub fn http_head(&self) -> Option<&[u8]> {
        let end = self.block.windows(4).position(|w| w == b"\r\n\r\n")?;
        Some(&self.block[..end + 4])
    }

    /// A response's body, after its HTTP head.
    pub fn http_body(&self) -> Option<&[u8]> {
        Some(&self.block[self.http_head()?.len()..])
    }
}

/// Why [`read_records`] refused a WARC file: where the bad record starts
/// (its byte offset in the unzipped data) and what is wrong there.
#[derive(Debug, thiserror::Error)]
pub enum WarcReadError {
    #[error("gzip: {0}")]
    Gzip(io::Error),
    #[error("record at byte {at}: no end of its header")]
    NoHeaderEnd { at: usize },
    #[error("record at byte {at}: header not UTF-8: {source}")]
    NotUtf8 { at: usize, source: std::str::Utf8Error },
    #[error("record at byte {at}: starts with {version:?}, not WARC/")]
    NotWarc { at: usize, version: String },
    #[error("record at byte {at}: header line {line:?}")]
    HeaderLine { at: usize, line: String },
    #[error("record at byte {at}: no Content-Length")]
    NoLength { at: usize },
    #[error("record at byte {at}: block cut short")]
    CutShort { at: usize },
    #[error("record at byte {at}: no CRLF CRLF after its block")]
    NoEnd { at: usize },
}

/// Reads every record of a WARC file's bytes, gzipped (any number of
/// members) or not. Checks the framing (version line, `Content-Length`, the
/// two CRLFs after each block), not the digests: a reader for luntan's
/// tests; warcio is the reference (`scripts/check-warc.sh`).
pub fn read_records(bytes: &[u8]) -> Result<Vec<ReadRecord>, WarcReadError> {
    let plain;
    let data: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).map_err(WarcReadError::Gzip)?;
        plain = out;
        &plain
    } else {
        bytes
    };
    let mut records = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let end = data[at..].windows(4).position(|w| w == b"\r\n\r\n").ok_or(WarcReadError::NoHeaderEnd { at })?;
        let head = std::str::from_utf8(&data[at..at + end]).map_err(|source| WarcReadError::NotUtf8 { at, source })?;
        let mut lines = head.split("\r\n");
        let version = lines.next().unwrap_or_default().to_owned();
        if !version.starts_with("WARC/") {
            return Err(WarcReadError::NotWarc { at, version });
        }
        let mut headers = Vec::new();
        for l in lines {
            let (k, v) = l.split_once(':').ok_or_else(|| WarcReadError::HeaderLine { at, line: l.to_owned() })?;
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let len: usize =
            headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("Content-Length")).and_then(|(_, v)| v.parse().ok()).ok_or(WarcReadError::NoLength { at })?;
        let start = at + end + 4;
        let block = data.get(start..start + len).ok_or(WarcReadError::CutShort { at })?.to_vec();
        if data.get(start + len..start + len + 4) != Some(b"\r\n\r\n") {
            return Err(WarcReadError::NoEnd { at });
        }
        records.push(ReadRecord { version, headers, block });
        at = start + len + 4;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha1_in_base32_as_warcio_writes_them() {
        // warcio: `'sha1:' + base64.b32encode(hashlib.sha1(b'').digest())`.
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(sha1_digest(b"abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    }

    #[test]
    fn a_response_record_is_laid_out_as_the_standard_says() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=gbk\r\n\r\n";
        let body = b"<p>\xc4\xe3\xba\xc3</p>";
        let r = Record::response("http://h/t?tid=7", "2026-11-30T08:15:02Z", head, body);
        let bytes = r.bytes("<urn:uuid:00000000-0000-4000-8000-000000000000>");
        let text = String::from_utf8_lossy(&bytes);
        let expected_head = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\nWARC-Date: 2026-11-30T08:15:02Z\r\n\
             WARC-Target-URI: http://h/t?tid=7\r\nWARC-Payload-Digest: {}\r\nWARC-Block-Digest: {}\r\n\
             Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n",
            sha1_digest(body),
            sha1_digest(&[&head[..], &body[..]].concat()),
            head.len() + body.len()
        );
        assert!(text.starts_with(&expected_head), "{text}");
        assert!(bytes.ends_with(&[&head[..], &body[..], b"\r\n\r\n"].concat()));
        assert_eq!(bytes.len(), expected_head.len() + head.len() + body.len() + 4);
    }

    #[test]
    fn gzipped_records_are_members_of_their_own_and_read_back() {
        let info = b"software: luntan-export\r\nformat: WARC File Format 1.1\r\n";
        let mut w = WarcWriter::new(Vec::new(), true);
        w.write(&Record::warcinfo("2026-11-30T08:15:02Z", "x.warc.gz", info)).unwrap();
        let first = w.written();
        let page = b"<html>snapshot</html>";
        w.write(&Record::resource("http://h/t/1", "2026-11-30T08:15:03Z", "text/html; charset=utf-8", page)).unwrap();
        let total = w.written();
        let out = w.into_inner();
        assert_eq!(out.len() as u64, total);
        // The second record starts a gzip member of its own at `first`.
        assert_eq!(&out[first as usize..first as usize + 2], &[0x1f, 0x8b]);
        let second = read_records(&out[first as usize..]).unwrap();
        assert_eq!(second.len(), 1);
        let all = read_records(&out).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].header("WARC-Type"), Some("warcinfo"));
        assert_eq!(all[0].header("WARC-Filename"), Some("x.warc.gz"));
        assert_eq!(all[0].header("WARC-Payload-Digest"), None);
        assert_eq!(all[0].block, info);
        let r = &all[1];
        assert_eq!(r.version, "WARC/1.1");
        assert_eq!(r.header("warc-type"), Some("resource"));
        assert_eq!(r.block, page);
        assert_eq!(r.header("WARC-Block-Digest"), Some(sha1_digest(page).as_str()));
        assert_eq!(r.header("WARC-Payload-Digest"), r.header("WARC-Block-Digest"), "a resource's payload is its block");
        assert_ne!(all[0].header("WARC-Record-ID"), r.header("WARC-Record-ID"));
    }

    #[test]
    fn a_cut_file_is_refused_with_where() {
        let mut w = WarcWriter::new(Vec::new(), false);
        w.write(&Record::response("http://h/", "2026-11-30T08:15:02Z", b"HTTP/1.1 200 OK\r\n\r\n", b"body")).unwrap();
        let out = w.into_inner();
        let e = read_records(&out[..out.len() - 3]).unwrap_err();
        assert!(e.to_string().contains("record at byte 0"), "{e}");
    }
}
