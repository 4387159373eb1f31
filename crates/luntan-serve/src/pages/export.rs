//! Every hit of a search as a download: `/export.csv` and `/export.ndjson`
//! take the search page's parameters and answer with all its hits in rank
//! order, not a page of them.
//!
//! The body is streamed: a blocking task ranks every match once
//! ([`luntan_search::Catalog::search_each`]), reads the stored threads a
//! batch at a time and hands each batch's bytes to the response through a
//! small channel, so memory stays at a few batches whatever the result
//! size, and a client that goes away stops the work (the channel closes).

use std::fmt::Write as _;

use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use luntan_search::{Hit, SearchOptions};

use super::{error_page, known_params};
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::params::SEARCH_PARAMS;

/// Hits read and written per step.
const BATCH: usize = 200;
/// Batches written ahead of a slow client.
const AHEAD: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Ndjson,
}

pub async fn csv(st: State<crate::State>, raw: RawQuery) -> Response {
    export(st, raw, Format::Csv).await
}

pub async fn ndjson(st: State<crate::State>, raw: RawQuery) -> Response {
    export(st, raw, Format::Ndjson).await
}

const CSV_COLUMNS: &[&str] = &["rank", "site", "forum", "board", "thread", "title", "posted", "replies", "authors", "url", "snippet", "score"];

/// One CSV field per RFC 4180: quoted when it holds a comma, a quote or a
/// line break, quotes doubled. A text field that begins with `=`, `+`, `-`,
/// `@` or a tab/CR is prefixed with `'`: Excel and LibreOffice would run it
/// as a formula (`=HYPERLINK(…)` in a post title), and the forum's text
/// must stay text (OWASP's advice for CSV injection).
fn field(out: &mut String, v: &str, text: bool) {
    let guard = text && v.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if guard || v.contains([',', '"', '\n', '\r']) {
        out.push('"');
        if guard {
            out.push('\'');
        }
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(v);
    }
}

fn csv_row(out: &mut String, h: &Hit) {
    let cells: [(String, bool); 12] = [
        (h.rank.to_string(), false),
        (h.site.to_string(), false),
        (h.forum.clone(), true),
        (h.board.as_deref().unwrap_or_default().to_string(), false),
        (h.thread.to_string(), false),
        (h.title.clone(), true),
        (h.posted.clone().unwrap_or_default(), false),
        (h.replies.to_string(), false),
        (h.authors.join("; "), true),
        (h.url.clone(), true),
        (h.snippet.text.clone(), true),
        (format!("{}", h.score), false),
    ];
    for (i, (v, text)) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        field(out, v, *text);
    }
    // RFC 4180 ends records with CRLF.
    out.push_str("\r\n");
}

/// `filename*` (RFC 6266 / 8187): the query, percent-encoded as UTF-8.
fn disposition(q: &str, ext: &str) -> String {
    let mut name = String::new();
    for b in q.chars().take(40).collect::<String>().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            name.push(b as char);
        } else {
            let _ = write!(name, "%{b:02X}");
        }
    }
    format!("attachment; filename=\"luntan-search.{ext}\"; filename*=UTF-8''luntan-{name}.{ext}")
}

async fn export(State(st): State<crate::State>, RawQuery(raw): RawQuery, format: Format) -> Response {
    match start(st, raw, format).await {
        Ok(r) => r,
        Err(e) => error_page(&e),
    }
}

async fn start(st: crate::State, raw: Option<String>, format: Format) -> Result<Response, ApiError> {
    let mut known = SEARCH_PARAMS.to_vec();
    known.push("page");
    let p = known_params(raw.as_deref(), &known)?;
    let (text, query) = p.query()?;
    // All hits from the first: the page's offset and limit do not apply.
    let opts = SearchOptions { offset: 0, limit: usize::MAX, snippet_chars: 80, ids_only: false, ..p.search_options(0)? };
    // Everything that can be refused is refused before the first byte:
    // the counting run checks the forums, the query and the dates.
    let (catalog, total) = blocking({
        let (st, query, opts) = (st.clone(), query.clone(), opts.clone());
        move || {
            let catalog = st.catalog.searchable()?;
            check_skipped(&catalog, &opts.sites)?;
            let total = catalog.search(&query, &SearchOptions { limit: 0, ..opts })?.total;
            Ok((catalog, total))
        }
    })
    .await?;

    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(AHEAD);
    tokio::task::spawn_blocking(move || {
        if format == Format::Csv {
            // A byte-order mark: Excel reads a CSV without one in the
            // system's code page (GBK on a Chinese Windows) and shows
            // mojibake; with it, as UTF-8. Other readers skip it.
            let mut head = String::from("\u{FEFF}");
            head.push_str(&CSV_COLUMNS.join(","));
            head.push_str("\r\n");
            if tx.blocking_send(Ok(Bytes::from(head))).is_err() {
                return;
            }
        }
        let sent = catalog.search_each(&query, &opts, BATCH, |hits| {
            let mut out = String::new();
            for h in &hits {
                match format {
                    Format::Csv => csv_row(&mut out, h),
                    Format::Ndjson => {
                        out.push_str(&luntan_search::json::hit_json(h, false).to_string());
                        out.push('\n');
                    }
                }
            }
            // A closed channel: the client went away; stop reading threads.
            tx.blocking_send(Ok(Bytes::from(out))).is_ok()
        });
        if let Err(e) = sent {
            // The body ends short of its terminating chunk, so a client
            // sees a failed download rather than a complete-looking file.
            tracing::warn!("export: {e}");
            let _ = tx.blocking_send(Err(std::io::Error::other(e.to_string())));
        }
    });
    let stream = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut r = (StatusCode::OK, Body::from_stream(stream)).into_response();
    let h = r.headers_mut();
    let (ctype, ext) = match format {
        Format::Csv => ("text/csv; charset=utf-8; header=present", "csv"),
        Format::Ndjson => ("application/x-ndjson; charset=utf-8", "ndjson"),
    };
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    if let Ok(v) = HeaderValue::from_str(&disposition(&text, ext)) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // The number of records to expect, counted before the first was sent.
    h.insert("x-total-count", HeaderValue::from(total));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(v: &str, text: bool) -> String {
        let mut s = String::new();
        field(&mut s, v, text);
        s
    }

    #[test]
    fn fields_are_quoted_per_rfc_4180_and_formulas_stay_text() {
        assert_eq!(one("明月", true), "明月");
        assert_eq!(one("a,b", true), "\"a,b\"");
        assert_eq!(one("say \"hi\"\nbye", true), "\"say \"\"hi\"\"\nbye\"");
        assert_eq!(one("=HYPERLINK(\"x\")", true), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(one("-1", false), "-1");
        assert_eq!(one("@a", true), "\"'@a\"");
    }

    #[test]
    fn the_file_name_is_the_query_percent_encoded() {
        let d = disposition("明月 a/b", "csv");
        assert!(d.starts_with("attachment; filename=\"luntan-search.csv\"; filename*=UTF-8''luntan-%E6%98%8E%E6%9C%88%20a%2Fb.csv"), "{d}");
    }
}
