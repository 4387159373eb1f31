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
//! - Every request passes the `Host` check (`host.rs`: IP addresses,
//!   `localhost` and [`ServeConfig::public_hosts`], against DNS rebinding);
//!   connections are served by our own accept loop (`listen.rs`) with a
//!   header-read timeout and a cap on how many are served at once.
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
mod data;
mod error;
mod feed;
mod host;
mod html;
mod listen;
mod openapi;
mod pages;
mod params;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    /// Host names answered besides IP addresses and `localhost` (see
    /// `host.rs`: the check that keeps DNS rebinding off a loopback server).
    pub public_hosts: Vec<String>,
    /// How long a connection may take to send a request's headers, the
    /// first or the next on a kept-alive connection; then it is closed.
    pub header_timeout: Duration,
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
}

/// [`ServeConfig::header_timeout`] unless set: long enough for a phone on a
/// bad network, short enough that idle connections do not pile up.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// [`ServeConfig::max_connections`] unless set: a browser opens six per
/// host, so this is some 40 people at once, in well under the usual 1,024
/// descriptors.
pub const MAX_CONNECTIONS: usize = 256;

impl ServeConfig {
    pub fn new(index_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> ServeConfig {
        ServeConfig {
            index_dir: index_dir.into(),
            data_dir: data_dir.into(),
            token: None,
            public_hosts: Vec::new(),
            header_timeout: HEADER_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
        }
    }
}

/// Shared by every handler.
pub(crate) struct AppState {
    pub cfg: ServeConfig,
    pub catalog: LiveCatalog,
    pub data: luntan_core::DataDir,
    /// The address the listener is bound to.
    pub bound: SocketAddr,
    pub hosts: host::HostRule,
}

pub(crate) type State = Arc<AppState>;

/// The whole application for a listener bound to `bound`: API, pages,
/// feed, token and `Host` checks.
pub fn router(cfg: ServeConfig, bound: SocketAddr) -> Router {
    let state: State = Arc::new(AppState {
        catalog: LiveCatalog::new(&cfg.index_dir),
        data: luntan_core::DataDir::new(&cfg.data_dir),
        hosts: host::HostRule::new(bound, &cfg.public_hosts),
        bound,
        cfg,
    });
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
        .route("/author", get(pages::author))
        .route("/trend", get(pages::trend))
        .route("/status", get(pages::status))
        .route("/static/app.js", get(pages::script))
        .route("/media/{hash}", get(pages::media))
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_token))
        .layer(axum::middleware::from_fn_with_state(state.clone(), host::check_host))
        .with_state(state)
}

/// Serves [`router`] on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, cfg: ServeConfig) -> std::io::Result<()> {
    serve_until(listener, cfg, std::future::pending()).await
}

/// [`serve`] that returns when `shutdown` completes, after the requests in flight.
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    cfg: ServeConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(cfg.clone(), listener.local_addr()?);
    listen::run(listener, app, &cfg, shutdown).await
}
