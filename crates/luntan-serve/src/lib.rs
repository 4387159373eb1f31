//! luntan's search server: pages for people and a JSON API over every
//! forum's index, read-only.
//!
//! - [`router`] builds the axum [`Router`] for a [`ServeConfig`]; [`serve`]
//!   runs it on a listener (tests bind an ephemeral loopback port).
//! - [`LiveCatalog`] reopens the indexes when `luntan-index` commits or a new
//!   `<site>.index` appears, so a running server finds new threads.
//! - [`ApiError`]: every error as JSON with its status code (400 with the
//!   column of a malformed query, 404, 401, 503).
//! - The JSON API (`/api/search`, `/api/thread/{site}/{id}`, `/api/trend`,
//!   `/api/status`, `/api/openapi.json`) means what `luntan-search --json`
//!   and `luntan-status --json` mean; the pages (`/`, `/thread/…`, `/trend`,
//!   `/status`, `/archive/…`, `/feed.atom`) are server-rendered HTML and Atom.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let cfg = luntan_serve::ServeConfig::new("index", "data");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! println!("http://{}", listener.local_addr()?);
//! luntan_serve::serve(listener, cfg).await
//! # }
//! ```

mod api;
mod auth;
mod catalog;
mod error;
mod feed;
mod html;
mod openapi;
mod pages;
mod params;

use std::path::PathBuf;
use std::sync::Arc;

use axum::routing::get;
use axum::Router;

pub use catalog::LiveCatalog;
pub use error::ApiError;
pub use html::escape;
pub use openapi::openapi;

/// Longest query text accepted, in bytes (a query is parsed and analysed per request).
pub const MAX_QUERY_BYTES: usize = 500;
/// Most hits one request may ask for.
pub const MAX_LIMIT: usize = 100;
/// Deepest page: tantivy collects `offset + limit` hits per index.
pub const MAX_OFFSET: usize = 10_000;
/// Longest query string accepted, in bytes.
pub const MAX_QUERY_STRING: usize = 4096;

/// What a server serves, checked by the caller (the binary refuses a
/// non-loopback address without a token unless told `--public`).
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Directory of the `<site>.index` directories.
    pub index_dir: PathBuf,
    /// The data directory (crawl database, thread XML, saved pages).
    pub data_dir: PathBuf,
    /// When set, every request must carry it (`Authorization: Bearer`, a
    /// `token` query parameter, or the cookie the latter sets).
    pub token: Option<String>,
}

impl ServeConfig {
    pub fn new(index_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> ServeConfig {
        ServeConfig { index_dir: index_dir.into(), data_dir: data_dir.into(), token: None }
    }
}

/// Shared by every handler.
pub(crate) struct AppState {
    pub cfg: ServeConfig,
    pub catalog: LiveCatalog,
    pub data: luntan_core::DataDir,
}

pub(crate) type State = Arc<AppState>;

/// The whole application: API, pages, feed, token check.
pub fn router(cfg: ServeConfig) -> Router {
    let state: State = Arc::new(AppState { catalog: LiveCatalog::new(&cfg.index_dir), data: luntan_core::DataDir::new(&cfg.data_dir), cfg });
    Router::new()
        .route("/api/search", get(api::search))
        .route("/api/thread/{site}/{id}", get(api::thread))
        .route("/api/trend", get(api::trend))
        .route("/api/status", get(api::status))
        .route("/api/openapi.json", get(api::openapi_doc))
        .route("/feed.atom", get(feed::feed))
        .route("/", get(pages::search))
        .route("/search", get(pages::search))
        .route("/export.csv", get(pages::export_csv))
        .route("/export.ndjson", get(pages::export_ndjson))
        .route("/thread/{site}/{id}", get(pages::thread))
        .route("/archive/{site}/{id}", get(pages::archive))
        .route("/trend", get(pages::trend))
        .route("/status", get(pages::status))
        .route("/static/app.js", get(pages::script))
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_token))
        .with_state(state)
}

/// Serves [`router`] on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, cfg: ServeConfig) -> std::io::Result<()> {
    axum::serve(listener, router(cfg)).await
}

/// [`serve`] that returns when `shutdown` completes, after the requests in flight.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    cfg: ServeConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(cfg)).with_graceful_shutdown(shutdown).await
}
