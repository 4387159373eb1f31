//! The newest threads matching a query as an Atom feed (RFC 4287). An
//! entry's id names the thread (`tag:luntan,2024:thread/<site>/<id>`), so it
//! stays the same however often the thread changes; its `updated` is the
//! thread's newest post time, read from the thread XML, so a reply changes it.
//!
//! Forum times are wall-clock times; each is written with its forum's UTC
//! offset (the site file's `time-zone`, +08:00 unless it says otherwise),
//! since a feed reader shows `Z` times eight hours off. Links are absolute
//! (a feed is read away from the page it was found on) and never carry the
//! access token.

use std::collections::HashMap;
use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use luntan_core::ids::SiteId;
use luntan_core::Site;
use luntan_search::{SearchOptions, SortOrder};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use crate::catalog::{blocking, check_skipped};
use crate::data::load_thread;
use crate::error::ApiError;
use crate::html::{enc, escape, safe_href};
use crate::params::{Params, SEARCH_PARAMS};
use crate::State as AppState;

const ENTRIES: usize = 20;

/// A forum's offset when its site file is gone or says none: the site
/// file's own default.
const DEFAULT_OFFSET_MINUTES: i32 = 480;

/// `http://host` as the request named this server. The `Host` header has
/// passed [`crate::host`]'s check by now, so it is a name the server
/// answers to, not one a client may choose.
fn base_url(st: &crate::AppState, headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string).unwrap_or_else(|| st.bound.to_string());
    format!("http://{host}")
}

/// Each forum's UTC offset in minutes, from the site files.
fn offsets(st: &crate::AppState) -> HashMap<SiteId, i32> {
    let (sites, _) = Site::load_all(&st.data.sites_dir(), None);
    sites.into_iter().map(|s| (s.id, s.json.as_ref().map_or(s.thread.utc_offset_minutes, |j| j.utc_offset_minutes))).collect()
}

/// A forum's wall-clock time (`YYYY-MM-DDTHH:MM:SS`) at its offset.
fn at_offset(t: &str, offset_minutes: i32) -> Option<OffsetDateTime> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    let offset = UtcOffset::from_whole_seconds(offset_minutes.checked_mul(60)?).ok()?;
    Some(PrimitiveDateTime::parse(t, &fmt).ok()?.assume_offset(offset))
}

/// The start of a `YYYYMMDD` save date, in UTC.
fn saved_day(d: &str) -> Option<OffsetDateTime> {
    let fmt = time::macros::format_description!("[year][month][day]");
    Some(time::Date::parse(d, &fmt).ok()?.midnight().assume_utc())
}

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// The query string of this feed without the token, for links that are
/// copied into feed readers and shared.
fn without_token(raw: &str) -> String {
    let pairs = url::form_urlencoded::parse(raw.as_bytes()).filter(|(k, _)| k != "token");
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

pub async fn feed(State(st): State<AppState>, headers: HeaderMap, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    // The search page links here with its whole search; paging and order
    // mean nothing to a feed (newest first, one page) and are ignored.
    let mut allowed = SEARCH_PARAMS.to_vec();
    allowed.push("page");
    let p = Params::parse(raw.as_deref(), &allowed)?;
    let (text, query) = p.query()?;
    let opts = SearchOptions { limit: ENTRIES, offset: 0, sort: SortOrder::Newest, snippet_chars: 160, ..p.search_options(ENTRIES)? };
    let base = base_url(&st, &headers);
    let kept = without_token(raw.as_deref().unwrap_or(""));
    let xml = blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &opts.sites)?;
        let results = catalog.search(&query, &opts)?;
        let offsets = offsets(&st);
        let mut entries = String::new();
        let mut newest: Option<OffsetDateTime> = None;
        for h in &results.hits {
            let offset = offsets.get(&h.site).copied().unwrap_or(DEFAULT_OFFSET_MINUTES);
            // A thread whose XML is gone (re-extracting) still gets an entry,
            // dated by its first post.
            let doc = load_thread(&st, &h.site, &h.thread).ok().map(|(_, d)| d);
            let times = doc.iter().flat_map(|d| d.posts.iter().filter_map(|p| p.time.as_deref())).chain(h.posted.as_deref());
            let updated = times.filter_map(|t| at_offset(t, offset)).max();
            let published = h.posted.as_deref().and_then(|t| at_offset(t, offset));
            // An entry must have an `updated`; a thread with no time at all is
            // dated by the day its page was saved (UTC midnight), else now.
            let saved = doc.as_ref().and_then(|d| saved_day(&d.saved));
            let updated = updated.or(saved).unwrap_or_else(OffsetDateTime::now_utc);
            newest = newest.max(Some(updated));
            let author = h.authors.first().map(String::as_str).filter(|a| !a.trim().is_empty()).unwrap_or("匿名");
            let here = format!("{base}/thread/{}/{}", enc(&h.site), enc(&h.thread));
            let link = safe_href(&h.url).map(str::to_string).unwrap_or_else(|| here.clone());
            let _ = writeln!(
                entries,
                "<entry><id>tag:luntan,2024:thread/{site}/{thread}</id><title type=\"text\">{title}</title><updated>{updated}</updated>{published}<author><name>{author}</name></author><link rel=\"alternate\" href=\"{link}\"/><link rel=\"related\" href=\"{here}\"/><summary type=\"text\">{summary}</summary></entry>",
                site = escape(&h.site),
                thread = escape(&h.thread),
                title = escape(&h.title),
                updated = rfc3339(updated),
                published = published.map(|t| format!("<published>{}</published>", rfc3339(t))).unwrap_or_default(),
                author = escape(author),
                link = escape(&link),
                here = escape(&here),
                summary = escape(&h.snippet.text),
            );
        }
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"zh-CN\">\n");
        let _ = writeln!(
            out,
            "<id>tag:luntan,2024:search/{id}</id><title type=\"text\">论坛搜索：{title}</title><updated>{updated}</updated><author><name>luntan</name></author><link rel=\"self\" href=\"{self_href}\"/><link rel=\"alternate\" type=\"text/html\" href=\"{alternate}\"/>",
            id = escape(&enc(&text)),
            title = escape(&text),
            // An empty feed has changed, as far as anyone can tell, now.
            updated = rfc3339(newest.unwrap_or_else(OffsetDateTime::now_utc)),
            self_href = escape(&format!("{base}/feed.atom?{kept}")),
            alternate = escape(&format!("{base}/search?{kept}")),
        );
        out.push_str(&entries);
        out.push_str("</feed>\n");
        Ok(out)
    })
    .await?;
    let mut r = xml.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/atom+xml; charset=utf-8"));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_times_carry_their_forums_offset() {
        let t = at_offset("2023-11-20T12:28:00", 480).unwrap();
        assert_eq!(rfc3339(t), "2023-11-20T12:28:00+08:00");
        assert_eq!(t.unix_timestamp(), at_offset("2023-11-20T04:28:00", 0).unwrap().unix_timestamp());
        assert_eq!(rfc3339(at_offset("2023-11-20T12:28:00", -330).unwrap()), "2023-11-20T12:28:00-05:30");
        assert_eq!(at_offset("2023-11-20", 480), None);
        assert_eq!(at_offset("2023-11-20T12:28:00", i32::MAX), None);
    }

    #[test]
    fn the_token_is_left_out_of_links_and_the_rest_kept() {
        assert_eq!(without_token("q=%E6%98%8E&token=secret&site=dz&token=x"), "q=%E6%98%8E&site=dz");
        assert_eq!(without_token(""), "");
    }
}
