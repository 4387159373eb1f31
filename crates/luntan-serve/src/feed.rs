//! The newest threads matching a query as an Atom feed (RFC 4287). An
//! entry's id names the thread (`tag:luntan,2024:thread/<site>/<id>`), so it
//! stays the same however often the thread changes; its `updated` is the
//! thread's newest post time, read from the thread XML, so a reply changes it.

use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use luntan_search::{SearchOptions, SortOrder};

use crate::api::load_thread;
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::html::{enc, escape, safe_href};
use crate::params::Params;
use crate::State as AppState;

const ENTRIES: usize = 20;

/// A forum's wall-clock time as RFC 3339. luntan reads forum times as UTC
/// everywhere (index, `--since`), and so does the feed.
fn rfc3339(t: &str) -> Option<String> {
    let ok = t.len() == 19 && t.as_bytes()[10] == b'T';
    ok.then(|| format!("{t}Z"))
}

pub async fn feed(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Result<Response, ApiError> {
    let p = Params::parse(raw.as_deref(), &["q", "site", "board", "author"])?;
    let (text, query) = p.query()?;
    let sites = p.sites()?;
    let self_href = format!("/feed.atom?{}", raw.as_deref().unwrap_or(""));
    let xml = blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &sites)?;
        let opts = SearchOptions { limit: ENTRIES, sort: SortOrder::Newest, sites, snippet_chars: 160, ..SearchOptions::default() };
        let results = catalog.search(&query, &opts)?;
        let mut entries = String::new();
        let mut newest: Option<String> = None;
        for h in &results.hits {
            // A thread whose XML is gone (re-extracting) still gets an entry,
            // dated by its first post.
            let doc = load_thread(&st, &h.site, &h.thread).ok().map(|(_, d)| d);
            let last = doc.as_ref().and_then(|d| d.posts.iter().filter_map(|p| p.time.clone()).max());
            let updated = last.or_else(|| h.posted.clone()).and_then(|t| rfc3339(&t)).unwrap_or_else(|| "1970-01-01T00:00:00Z".into());
            if newest.as_ref().is_none_or(|n| *n < updated) {
                newest = Some(updated.clone());
            }
            let author = h.authors.first().map(String::as_str).filter(|a| !a.trim().is_empty()).unwrap_or("匿名");
            let link = safe_href(&h.url).map(str::to_string).unwrap_or_else(|| format!("/thread/{}/{}", enc(&h.site), enc(&h.thread)));
            let _ = writeln!(
                entries,
                "<entry><id>tag:luntan,2024:thread/{site}/{thread}</id><title type=\"text\">{title}</title><updated>{updated}</updated>{published}<author><name>{author}</name></author><link rel=\"alternate\" href=\"{link}\"/><link rel=\"related\" href=\"/thread/{esite}/{ethread}\"/><summary type=\"text\">{summary}</summary></entry>",
                site = escape(&h.site),
                thread = escape(&h.thread),
                title = escape(&h.title),
                published = h.posted.as_deref().and_then(rfc3339).map(|t| format!("<published>{t}</published>")).unwrap_or_default(),
                author = escape(author),
                link = escape(&link),
                esite = enc(&h.site),
                ethread = enc(&h.thread),
                summary = escape(&h.snippet.text),
            );
        }
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"zh-CN\">\n");
        let _ = writeln!(
            out,
            "<id>tag:luntan,2024:search/{id}</id><title type=\"text\">论坛搜索：{title}</title><updated>{updated}</updated><author><name>luntan</name></author><link rel=\"self\" href=\"{self_href}\"/><link rel=\"alternate\" type=\"text/html\" href=\"/search?q={id}&amp;sort=newest\"/>",
            id = escape(&enc(&text)),
            title = escape(&text),
            updated = newest.unwrap_or_else(|| "1970-01-01T00:00:00Z".into()),
            self_href = escape(&self_href),
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
