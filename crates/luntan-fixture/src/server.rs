//! The HTTP side: an axum server answering every request through
//! [`Fixture::get`], logging each request for politeness tests.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::model::{Fixture, FixtureConfig, Truth};
use crate::text::hash_str;

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// Arrival order, from 0.
    pub seq: u64,
    /// When it arrived.
    pub at: Instant,
    /// When it arrived, counted from the server's start.
    pub since_start: Duration,
    /// When its response was ready (after any configured latency); `None` while in flight.
    pub done: Option<Duration>,
    pub method: String,
    /// Path and query as received (non-ASCII percent-encoded if the client did so).
    pub path_and_query: String,
    /// The `Host` header.
    pub host: Option<String>,
    pub user_agent: Option<String>,
    /// The status sent; 0 while in flight.
    pub status: u16,
}

struct Shared {
    fixture: Arc<Fixture>,
    started: Instant,
    log: Mutex<Log>,
    /// Flaky URLs that have already failed once.
    failed: Mutex<HashSet<String>>,
}

#[derive(Default)]
struct Log {
    next_seq: u64,
    records: Vec<RequestRecord>,
}

/// A poisoned lock only means a test thread panicked mid-push; the log is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running fixture server. Dropping it stops the server (without waiting).
pub struct FixtureServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

/// Binds `addr` (use port 0 for any free port) and serves `cfg`'s forums on
/// the current tokio runtime until [`FixtureServer::shutdown`] or drop.
pub async fn serve(cfg: FixtureConfig, addr: SocketAddr) -> io::Result<FixtureServer> {
    serve_fixture(Arc::new(Fixture::new(cfg)), addr).await
}

/// Like [`serve`], for a model already built (and perhaps shared).
pub async fn serve_fixture(fixture: Arc<Fixture>, addr: SocketAddr) -> io::Result<FixtureServer> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared {
        fixture,
        started: Instant::now(),
        log: Mutex::new(Log::default()),
        failed: Mutex::new(HashSet::new()),
    });
    let app = axum::Router::new().fallback(handle).with_state(shared.clone());
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                // A dropped sender means the same as a sent stop.
                let _ = rx.await;
            })
            .await
    });
    Ok(FixtureServer { addr, shared, stop: Mutex::new(Some(tx)), task: Some(task) })
}

impl FixtureServer {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn base_url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// The absolute URL of a path (`/dz/forum.php`).
    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}/{}", self.addr, path_and_query.trim_start_matches('/'))
    }

    pub fn fixture(&self) -> &Fixture {
        &self.shared.fixture
    }

    /// Shorthand for `self.fixture().truth()`.
    pub fn truth(&self) -> Truth {
        self.shared.fixture.truth()
    }

    /// Writes site files pointing at this server (see [`crate::write_site_files`]).
    pub fn write_site_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        crate::sites::write_site_files(self.shared.fixture.config(), &self.base_url(), dir)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).records.clone()
    }

    /// Forgets the request log (sequence numbers keep counting).
    pub fn clear_requests(&self) {
        lock(&self.shared.log).records.clear();
    }

    /// Asks the server to stop accepting and finish; returns at once.
    pub fn stop(&self) {
        if let Some(tx) = lock(&self.stop).take() {
            let _ = tx.send(());
        }
    }

    /// Stops the server and waits (up to five seconds) for it to finish.
    pub async fn shutdown(mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(Duration::from_secs(5), task).await.is_err() {
                abort.abort();
            }
        }
    }

    /// Starts a server on `127.0.0.1:0` with its own runtime on a background
    /// thread, for synchronous tests. Works inside or outside a tokio runtime.
    pub fn start_blocking(cfg: FixtureConfig) -> io::Result<BlockingFixture> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("luntan-fixture")
            .enable_all()
            .build()?;
        // block_on panics inside another runtime's thread, so start from a fresh one.
        let server = std::thread::scope(|s| {
            s.spawn(|| runtime.block_on(serve(cfg, SocketAddr::from(([127, 0, 0, 1], 0)))))
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("fixture server failed to start")))
        })?;
        Ok(BlockingFixture { server: Some(server), runtime: Some(runtime) })
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A [`FixtureServer`] with its own runtime; derefs to the server and stops
/// it when dropped.
pub struct BlockingFixture {
    server: Option<FixtureServer>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Deref for BlockingFixture {
    type Target = FixtureServer;
    fn deref(&self) -> &FixtureServer {
        // Both options are only emptied in drop.
        self.server.as_ref().expect("server present until drop")
    }
}

impl Drop for BlockingFixture {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop();
            drop(server);
        }
        if let Some(rt) = self.runtime.take() {
            // shutdown_background never blocks, so dropping this inside an async context is fine.
            rt.shutdown_background();
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    // Copy what is needed out of the request: the body is not Sync, so no
    // reference to the request may live across an await.
    let (parts, _body) = req.into_parts();
    let header_str = |name: header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let path_and_query = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let seq = {
        let mut log = lock(&shared.log);
        let seq = log.next_seq;
        log.next_seq += 1;
        log.records.push(RequestRecord {
            seq,
            at,
            since_start: at.duration_since(shared.started),
            done: None,
            method: parts.method.to_string(),
            path_and_query: path_and_query.clone(),
            host: header_str(header::HOST),
            user_agent: header_str(header::USER_AGENT),
            status: 0,
        });
        seq
    };
    let cfg = shared.fixture.config();
    if !cfg.latency.is_zero() {
        tokio::time::sleep(cfg.latency).await;
    }
    let gzip = cfg.gzip && header_str(header::ACCEPT_ENCODING).is_some_and(|v| v.contains("gzip"));
    let response = respond(&shared, &parts.method, &path_and_query, gzip);
    let done = shared.started.elapsed();
    let status = response.status().as_u16();
    let mut log = lock(&shared.log);
    // Search from the end: the record is recent unless the log was cleared.
    if let Some(r) = log.records.iter_mut().rev().find(|r| r.seq == seq) {
        r.status = status;
        r.done = Some(done);
    }
    response
}

fn respond(shared: &Shared, method: &Method, path_and_query: &str, gzip: bool) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .header(header::ALLOW, "GET, HEAD")
            .body(Body::empty())
            .unwrap_or_default();
    }
    let cfg = shared.fixture.config();
    if cfg.flaky_percent > 0
        && path_and_query != "/robots.txt"
        && hash_str(path_and_query) % 100 < u64::from(cfg.flaky_percent)
        && lock(&shared.failed).insert(path_and_query.to_owned())
    {
        return Response::builder()
            .status(StatusCode::SERVICE_UNAVAILABLE)
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from("<html><body><h1>503 Service Unavailable</h1><p>Try again.</p></body></html>\n"))
            .unwrap_or_default();
    }
    let page = shared.fixture.get(path_and_query);
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, HeaderValue::from_static(page.content_type))
        .header(header::VARY, "Accept-Encoding");
    let mut body = page.body;
    if gzip {
        if let Some(z) = gzipped(&body) {
            body = z;
            builder = builder.header(header::CONTENT_ENCODING, "gzip");
        }
    }
    builder.body(Body::from(body)).unwrap_or_default()
}

fn gzipped(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write as _;
    let mut z = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 3), flate2::Compression::fast());
    z.write_all(body).ok()?;
    z.finish().ok()
}
