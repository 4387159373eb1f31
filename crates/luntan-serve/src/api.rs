//! The JSON API: handlers as small functions over [`crate::AppState`].

use std::time::Instant;

use axum::extract::{Path, RawQuery, State};
use axum::http::Uri;
use axum::Json;
use luntan_core::doc::ThreadJson;
use luntan_search::json::{hit_json, summary_json};
use serde_json::{json, Value};

use crate::catalog::{blocking, check_skipped};
use crate::data::{board_titles, load_thread, open_store, thread_ids};
use crate::error::ApiError;
use crate::params::{Params, SEARCH_PARAMS};
use crate::State as AppState;

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
                b.name = titles.get(&(b.site.as_deref().unwrap_or_default().to_string(), b.value.clone())).cloned();
            }
            v["facets"] = serde_json::to_value(&f).map_err(|e| ApiError::Internal(e.to_string()))?;
        }
        Ok(Json(v))
    })
    .await
}

/// The thread as `luntan-export --ndjson` writes it (one shape, [`ThreadJson`]).
pub async fn thread(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> Result<Json<ThreadJson>, ApiError> {
    // A path that does not even decode (bad UTF-8) names no thread either.
    let Ok(Path((site, id))) = path else { return Err(ApiError::NotFound("no such thread".into())) };
    let (site, id) = thread_ids(&site, &id)?;
    blocking(move || Ok(Json(ThreadJson::of(&load_thread(&st, &site, &id)?.1)))).await
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
