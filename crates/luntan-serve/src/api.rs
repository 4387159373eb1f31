//! The JSON API: handlers as small functions over [`crate::AppState`].

use std::time::Instant;

use axum::extract::{Path, RawQuery, State};
use axum::http::Uri;
use axum::Json;
use luntan_core::ids::{SiteId, ThreadId};
use luntan_core::store::ThreadRow;
use luntan_core::{Store, ThreadDoc, ThreadState};
use luntan_search::json::{hit_json, summary_json};
use serde_json::{json, Value};

use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::params::Params;
use crate::State as AppState;

pub const SEARCH_PARAMS: &[&str] = &["q", "site", "board", "author", "since", "until", "sort", "offset", "limit"];

/// Values per facet in `/api/search?facets=1`.
pub const FACET_TOP: usize = 20;

pub async fn search(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Result<Json<Value>, ApiError> {
    let mut allowed = SEARCH_PARAMS.to_vec();
    allowed.push("facets");
    let p = Params::parse(raw.as_deref(), &allowed)?;
    let (_, query) = p.query()?;
    let opts = p.search_options(10)?;
    let facets = match p.get("facets") {
        None | Some("0" | "false") => false,
        Some("1" | "true") => true,
        Some(v) => return Err(ApiError::bad(format!("facets: {v:?} (1 or 0)"))),
    };
    blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &opts.sites)?;
        let started = Instant::now();
        let results = catalog.search(&query, &opts)?;
        let counted = if facets { Some(catalog.facets(&query, &opts, FACET_TOP)?) } else { None };
        let took = started.elapsed().as_secs_f64() * 1000.0;
        let mut v = summary_json(&results, &opts, took);
        v["hits"] = results.hits.iter().map(|h| hit_json(h, false)).collect();
        v["skipped"] = catalog.skipped().iter().map(ToString::to_string).collect();
        if let Some(mut f) = counted {
            let sites: Vec<&str> = f.board.values.iter().filter_map(|b| b.site.as_deref()).collect();
            let titles = board_titles(&st, &sites);
            for b in &mut f.board.values {
                b.name = titles.get(&(b.site.clone().unwrap_or_default(), b.value.clone())).cloned();
            }
            v["facets"] = serde_json::to_value(&f).map_err(|e| ApiError::Internal(e.to_string()))?;
        }
        Ok(Json(v))
    })
    .await
}

/// Board titles by (site, board), from the crawl database (the index keeps
/// only board ids); empty when the database cannot be read.
pub fn board_titles(st: &crate::AppState, sites: &[&str]) -> std::collections::HashMap<(String, String), String> {
    let mut out = std::collections::HashMap::new();
    let Ok(store) = open_store(st) else { return out };
    let mut seen: Vec<&str> = Vec::new();
    for &site in sites {
        if seen.contains(&site) {
            continue;
        }
        seen.push(site);
        for b in store.boards(site).unwrap_or_default() {
            if let Some(t) = b.title.filter(|t| !t.trim().is_empty()) {
                out.insert((site.to_string(), b.board), t);
            }
        }
    }
    out
}

/// A thread's row and its parsed XML. Ids are checked before anything is
/// read, and every path comes from [`luntan_core::DataDir`], so no request
/// names a file outside the data directory.
pub fn load_thread(st: &crate::AppState, site: &str, id: &str) -> Result<(ThreadRow, ThreadDoc), ApiError> {
    let unknown = || ApiError::NotFound(format!("no thread {site}/{id}"));
    let (Ok(site), Ok(id)) = (SiteId::parse(site), ThreadId::parse(id)) else { return Err(unknown()) };
    let row = thread_row(st, site.as_str(), id.as_str())?.ok_or_else(unknown)?;
    if !matches!(row.state, ThreadState::Extracted | ThreadState::Indexed) {
        return Err(unknown());
    }
    // The row's board and save date are checked ids too, so the path stays under the data directory.
    let loc = row.location(None).map_err(|_| unknown())?;
    let path = st.data.xml_path(&loc);
    let xml = std::fs::read_to_string(&path).map_err(|_| unknown())?;
    let doc = ThreadDoc::from_xml(&xml).map_err(|e| ApiError::Internal(format!("{}: {e}", path.display())))?;
    Ok((row, doc))
}

/// Opens the crawl database for one read; never creates it.
pub fn open_store(st: &crate::AppState) -> Result<Store, ApiError> {
    let db = st.data.db_path();
    if !db.is_file() {
        return Err(ApiError::Unavailable(format!("{}: no crawl database", db.display())));
    }
    Store::open(&db).map_err(|e| ApiError::Unavailable(e.to_string()))
}

fn thread_row(st: &crate::AppState, site: &str, id: &str) -> Result<Option<ThreadRow>, ApiError> {
    open_store(st)?.thread(site, id).map_err(|e| ApiError::Unavailable(e.to_string()))
}

pub fn thread_json(doc: &ThreadDoc) -> Value {
    json!({
        "site": doc.site,
        "board": doc.board,
        "thread": doc.thread,
        "forum": doc.forum,
        "url": doc.url,
        "title": doc.title,
        "posted": doc.posted,
        "saved": doc.saved,
        "encoding": doc.encoding,
        "pages": doc.pages,
        "posts": doc.posts.iter().map(|p| json!({ "floor": p.floor, "author": p.author, "time": p.time, "paragraphs": p.paragraphs })).collect::<Vec<_>>(),
    })
}

pub async fn thread(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> Result<Json<Value>, ApiError> {
    // A path that does not even decode (bad UTF-8) names no thread either.
    let Ok(Path((site, id))) = path else { return Err(ApiError::NotFound("no such thread".into())) };
    blocking(move || Ok(Json(thread_json(&load_thread(&st, &site, &id)?.1)))).await
}

pub async fn trend(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Result<Json<Value>, ApiError> {
    let p = Params::parse(raw.as_deref(), &["q", "interval", "site", "board", "author", "since", "until"])?;
    let (_, query) = p.query()?;
    let interval = p.interval()?;
    let sites = p.sites()?;
    // The dates as a search checks them (each a day the index holds, since not after until).
    let days = p.search_options(0)?;
    blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &sites)?;
        let started = Instant::now();
        let t = catalog.trend_within(&query, interval, &sites, days.since, days.until)?;
        let took = started.elapsed().as_secs_f64() * 1000.0;
        let mut v = serde_json::to_value(&t).map_err(|e| ApiError::Internal(e.to_string()))?;
        v["interval"] = serde_json::to_value(interval).map_err(|e| ApiError::Internal(e.to_string()))?;
        v["took_ms"] = json!((took * 10.0).round() / 10.0);
        Ok(Json(v))
    })
    .await
}

/// What `luntan-status --json` prints, one array element per forum.
pub async fn status(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Result<Json<Value>, ApiError> {
    let p = Params::parse(raw.as_deref(), &["site"])?;
    let site = p.sites()?.into_iter().next();
    blocking(move || {
        let status = open_store(&st)?.status(site.as_deref()).map_err(|e| ApiError::Unavailable(e.to_string()))?;
        serde_json::to_value(status).map(Json).map_err(|e| ApiError::Internal(e.to_string()))
    })
    .await
}

pub async fn openapi_doc() -> Json<Value> {
    Json(crate::openapi())
}

/// An unknown path: JSON under `/api/`, where programs ask, else a page
/// for the person whose browser asked.
pub async fn not_found(uri: Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") {
        // The path is echoed as data in JSON, never as HTML.
        ApiError::NotFound(format!("no such page: {path}")).into_response()
    } else {
        crate::pages::not_found(uri).await
    }
}
