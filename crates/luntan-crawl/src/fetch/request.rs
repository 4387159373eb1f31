//! One request and its response: a GET or form POST, conditional when
//! asked, its status, redirect and content type read, and its body taken
//! under the site's cap.

use std::time::Duration;

use luntan_core::store::Validators;
use reqwest::header::{CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION, RETRY_AFTER};
use reqwest::Client;
use url::Url;

use super::retry::parse_retry_after;
use super::{Core, FetchError, Fetched, Outcome, ResponseHead, Want};

impl ResponseHead {
    fn of(resp: &reqwest::Response, at: std::time::SystemTime) -> ResponseHead {
        let headers = resp.headers().iter().map(|(k, v)| (k.as_str().to_owned(), luntan_core::capture::latin1(v.as_bytes()))).collect();
        ResponseHead { version: format!("{:?}", resp.version()), headers, at: luntan_core::capture::format_time(at) }
    }
}

impl Core {
    pub(super) async fn once(&self, client: &Client, url: &Url, form: Option<String>, want: Want, cond: Option<&Validators>) -> Result<Outcome, FetchError> {
        let p = &self.site.politeness;
        let net = |e: reqwest::Error| classify(url, e, p.timeout);
        let mut request = match form {
            Some(body) => client.post(url.clone()).header(CONTENT_TYPE, "application/x-www-form-urlencoded").body(body),
            None => client.get(url.clone()),
        };
        if let Some(v) = cond {
            if let Some(etag) = &v.etag {
                request = request.header(IF_NONE_MATCH, etag.as_str());
            }
            if let Some(lm) = &v.last_modified {
                request = request.header(IF_MODIFIED_SINCE, lm.as_str());
            }
        }
        let mut resp = request.send().await.map_err(net)?;
        let arrived = std::time::SystemTime::now();
        let status = resp.status().as_u16();
        if status == 304 && cond.is_some_and(|v| !v.is_empty()) {
            return Ok(Outcome::NotModified);
        }
        if matches!(status, 301 | 302 | 303 | 307 | 308) {
            let location = resp.headers().get(LOCATION).and_then(|v| v.to_str().ok());
            if let Some(next) = location.and_then(|l| url.join(l.trim()).ok()) {
                let mut next = next;
                next.set_fragment(None);
                return Ok(Outcome::Redirect(next));
            }
        }
        if !resp.status().is_success() {
            let retry_after = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
            return Err(FetchError::Status { url: url.clone(), status, retry_after });
        }
        let content_type = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if let Some(ct) = &content_type {
            let mime = mime_type(ct);
            let accepted = match want {
                Want::Any | Want::Media(_) => true,
                Want::Html => matches!(mime.as_str(), "text/html" | "application/xhtml+xml" | "text/plain" | ""),
                // APIs label JSON in many ways; the body is parsed later anyway.
                Want::Json => {
                    matches!(mime.as_str(), "application/json" | "text/json" | "text/plain" | "text/javascript" | "application/javascript" | "")
                        || mime.ends_with("+json")
                }
            };
            match (accepted, want) {
                (true, _) => {}
                (false, Want::Json) => return Err(FetchError::NotJson { url: url.clone(), content_type: ct.clone() }),
                (false, _) => return Err(FetchError::NotHtml { url: url.clone(), content_type: ct.clone() }),
            }
        }
        let header = |name: reqwest::header::HeaderName| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let date = header(reqwest::header::DATE);
        let validators = Validators { etag: header(ETAG), last_modified: header(LAST_MODIFIED) };
        let head = ResponseHead::of(&resp, arrived);
        let limit = match want {
            Want::Media(cap) => cap,
            _ => p.max_body_bytes,
        };
        if resp.content_length().is_some_and(|n| n > limit) {
            return Err(FetchError::TooLarge { url: url.clone(), limit });
        }
        // Counted as it arrives, after decompression: a gzip bomb stops at the cap.
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(net)? {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(FetchError::TooLarge { url: url.clone(), limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Outcome::Page(Fetched { url: url.clone(), status, content_type, body, date, validators, head: Some(head) }))
    }
}

fn classify(url: &Url, e: reqwest::Error, timeout: Duration) -> FetchError {
    if e.is_timeout() {
        return FetchError::Timeout { url: url.clone(), after: timeout };
    }
    let what = if e.is_connect() { format!("cannot connect: {}", root_cause(&e)) } else { root_cause(&e) };
    FetchError::Network { url: url.clone(), what }
}

/// The innermost error message: reqwest's own Display repeats the URL.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// A `Content-Type`'s type and subtype, lowercased, its parameters dropped
/// (`Text/HTML; charset=gbk` is `text/html`).
pub(crate) fn mime_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}
