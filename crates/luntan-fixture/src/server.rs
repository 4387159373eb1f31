//! The HTTP side: an axum server answering every request through
//! [`Fixture::get`], logging each request for politeness tests, and, in
//! hostile mode, failing requests the way real servers do (see
//! [`crate::hostile`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::net::SocketAddr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::serve::IncomingStream;
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::config::FixtureConfig;
use crate::growth::{Arrivals, Change};
use crate::hostile::{padding, request_key, PermanentFault, TransientFault};
use crate::kind::ForumKind;
use crate::model::{Fixture, Truth};
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
    /// When it arrived, on the wall clock (to line it up with a client's
    /// log): the server's start on the wall clock plus `since_start`, so the
    /// two never disagree.
    pub received: std::time::SystemTime,
    /// When its response was ready (after any configured latency); `None` while in flight.
    pub done: Option<Duration>,
    /// When the server stopped working on it, counted from the server's
    /// start: the response handed over whole, a streamed body finished or
    /// cut, or the client gone (a stall it did not wait out). `None` while
    /// in flight. `[since_start, ended]` is the request's busy interval.
    pub ended: Option<Duration>,
    pub method: String,
    /// Path and query as received (non-ASCII percent-encoded if the client did so).
    pub path_and_query: String,
    /// The `Host` header.
    pub host: Option<String>,
    pub user_agent: Option<String>,
    /// The status sent; 0 while in flight, and for faults that send no status
    /// line (`reset`, `stall`).
    pub status: u16,
    /// The hostile-mode fault this request got, by name
    /// ([`TransientFault::name`], [`PermanentFault::name`]), or `flaky`.
    pub fault: Option<&'static str>,
}

impl RequestRecord {
    /// The request's busy interval's end; `None` while still in flight.
    pub fn end(&self) -> Option<Duration> {
        self.ended.or(self.done)
    }
}

struct Shared {
    fixture: Arc<Fixture>,
    started: Instant,
    /// `started` on the wall clock.
    started_wall: std::time::SystemTime,
    log: Mutex<Log>,
    /// Flaky URLs that have already failed once.
    failed: Mutex<HashSet<String>>,
    /// Requests seen per URL ([`request_key`]), for hostile mode's "fails its
    /// first k requests".
    attempts: Mutex<HashMap<String, u32>>,
    /// Turns true on stop, so stalls end and shutdown does not wait them out.
    stopping: watch::Sender<bool>,
    /// Search ids, search intervals and the search log (see [`crate::search`]).
    search: crate::search::Sessions,
    /// The news site with comments by JSON ([`crate::news`]): its own per
    /// server, as tests add articles and comments to it.
    news: Mutex<crate::news::News>,
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
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let fixture_seed = fixture.config().seed;
    let shared = Arc::new(Shared {
        fixture,
        started: Instant::now(),
        started_wall: std::time::SystemTime::now(),
        log: Mutex::new(Log::default()),
        failed: Mutex::new(HashSet::new()),
        attempts: Mutex::new(HashMap::new()),
        stopping: watch::Sender::new(false),
        search: Default::default(),
        news: Mutex::new(crate::news::News::new(fixture_seed)),
    });
    crate::growth::spawn_arrivals(shared.fixture.clone(), shared.stopping.subscribe());
    let app = axum::Router::new().route("/st/socket", axum::routing::get(socket)).fallback(handle).with_state(shared.clone());
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(FaultListener(listener), app.into_make_service_with_connect_info::<ConnHandle>())
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

    /// What the microblog and the XHR forum hold (see [`crate::microblog`]).
    pub fn microblog_truth(&self) -> crate::microblog::MicroblogTruth {
        crate::microblog::truth(self.shared.fixture.config().seed)
    }

    /// What the comment-widget news site holds (see [`crate::widget`]).
    pub fn widget_truth(&self) -> crate::ForumTruth {
        crate::widget::WidgetSite::new(self.shared.fixture.config().seed).truth()
    }

    /// [`Self::widget_truth`] with the ids and answers its comments API
    /// gives (see [`crate::widget::WidgetSite::api_truth`]).
    pub fn widget_api_truth(&self) -> crate::ForumTruth {
        crate::widget::WidgetSite::new(self.shared.fixture.config().seed).api_truth()
    }

    /// What the forum whose threads load over a WebSocket holds (see [`crate::socket`]).
    pub fn socket_truth(&self) -> crate::ForumTruth {
        crate::socket::SocketSite::new(self.shared.fixture.config().seed).truth()
    }

    /// Writes the microblog's and the XHR forum's site files (protocol mode).
    pub fn write_microblog_site_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        crate::sites::write_microblog_site_files(&self.base_url(), dir)
    }

    /// What the news site holds now (see [`crate::news`]).
    pub fn news_truth(&self) -> crate::ForumTruth {
        lock(&self.shared.news).truth()
    }

    /// One more comment under news article `aid`; `false` when there is none.
    pub fn add_news_comment(&self, aid: &str) -> bool {
        lock(&self.shared.news).add_comment(aid)
    }

    /// One more reply, nested, under the oldest comment of news article
    /// `aid`; `false` when it has none.
    pub fn add_news_reply(&self, aid: &str) -> bool {
        lock(&self.shared.news).add_reply(aid)
    }

    /// News article `aid`'s comments as a conversation, in thread order.
    pub fn news_conversation(&self, aid: &str) -> Option<Vec<crate::news::CommentTruth>> {
        lock(&self.shared.news).conversation(aid)
    }

    /// The news articles' script asks `origin`'s comment API (another
    /// fixture server's: the same seed, the same news) instead of this one's.
    pub fn set_news_api_origin(&self, origin: &str) {
        lock(&self.shared.news).set_api_origin(origin);
    }

    /// The news articles' script asks for comments by JSONP (a `<script>`
    /// tag, jQuery's callback and cache-buster) instead of an XHR.
    pub fn set_news_jsonp(&self, jsonp: bool) {
        lock(&self.shared.news).set_jsonp(jsonp);
    }

    /// A new news article in `section`, with two comments; its id.
    pub fn add_news_article(&self, section: &str) -> Option<String> {
        lock(&self.shared.news).add_article(section)
    }

    /// Writes the news site's file (`news.xml`, a hybrid site) into `dir`.
    pub fn write_news_site_file(&self, dir: &Path) -> io::Result<PathBuf> {
        crate::sites::write_news_site_file(&self.base_url(), dir)
    }

    /// Writes site files pointing at this server (see [`crate::write_site_files`]).
    pub fn write_site_files(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        crate::sites::write_site_files(self.shared.fixture.config(), &self.base_url(), dir)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.shared.log).records.clone()
    }

    /// Every request received so far, by `Host` header (`""` when none was
    /// sent), each host's in arrival order.
    pub fn requests_by_host(&self) -> BTreeMap<String, Vec<RequestRecord>> {
        let mut out: BTreeMap<String, Vec<RequestRecord>> = BTreeMap::new();
        for r in self.requests() {
            out.entry(r.host.clone().unwrap_or_default()).or_default().push(r);
        }
        out
    }

    /// The request log as JSON lines (times in microseconds since the
    /// server's start), for scripts.
    pub fn requests_jsonl(&self) -> String {
        let mut out = String::new();
        for r in self.requests() {
            let line = serde_json::json!({
                "seq": r.seq,
                "start_us": r.since_start.as_micros() as u64,
                "done_us": r.done.map(|d| d.as_micros() as u64),
                "end_us": r.end().map(|d| d.as_micros() as u64),
                "method": r.method,
                "path": r.path_and_query,
                "host": r.host,
                "status": r.status,
                "fault": r.fault,
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }

    /// Forgets the request log (sequence numbers keep counting).
    pub fn clear_requests(&self) {
        lock(&self.shared.log).records.clear();
    }

    /// Every search request answered so far, in the order they finished.
    pub fn search_log(&self) -> Vec<crate::search::SearchRecord> {
        self.shared.search.log()
    }

    pub fn clear_search_log(&self) {
        self.shared.search.clear_log();
    }

    /// See [`Fixture::add_threads`].
    pub fn add_threads(&self, n: usize) -> Vec<Change> {
        self.fixture().add_threads(n)
    }

    /// See [`Fixture::add_replies`].
    pub fn add_replies(&self, n: usize) -> Vec<Change> {
        self.fixture().add_replies(n)
    }

    /// Adds posts at `per_sec` on a background thread until the returned
    /// handle is stopped or dropped (the server's [`Activity::posts_per_sec`](crate::Activity::posts_per_sec)
    /// does the same for the server's whole life).
    pub fn start_arrivals(&self, per_sec: f64) -> Arrivals {
        Arrivals::start(self.shared.fixture.clone(), per_sec)
    }

    /// Asks the server to stop accepting and finish; returns at once.
    pub fn stop(&self) {
        self.shared.stopping.send_replace(true);
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
        FixtureServer::start_blocking_at(cfg, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Like [`FixtureServer::start_blocking`] on a given address (e.g.
    /// `127.0.0.2:0`, to pose as another host).
    pub fn start_blocking_at(cfg: FixtureConfig, addr: SocketAddr) -> io::Result<BlockingFixture> {
        // Two workers, and pages rendered off them: a request's arrival is
        // logged the moment it comes, not when another page is done.
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("luntan-fixture").enable_all().build()?;
        // block_on panics inside another runtime's thread, so start from a fresh one.
        let server = std::thread::scope(|s| {
            s.spawn(|| runtime.block_on(serve(cfg, addr))).join().unwrap_or_else(|_| Err(io::Error::other("fixture server failed to start")))
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

async fn handle(State(shared): State<Arc<Shared>>, ConnectInfo(conn): ConnectInfo<ConnHandle>, req: Request) -> Response {
    let at = Instant::now();
    // Copy what is needed out of the request: the body is not Sync, so no
    // reference to the request may live across an await.
    let (parts, body) = req.into_parts();
    let header_str = |name: header::HeaderName| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let path_and_query = parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let seq =
        log_arrival(&shared, arrival(&shared, at, parts.method.to_string(), path_and_query.clone(), header_str(header::HOST), header_str(header::USER_AGENT)));
    // Notes the end even when the client goes away and hyper drops this future.
    let guard = EndGuard { shared: shared.clone(), seq };
    let cfg = shared.fixture.config();
    if !cfg.latency.is_zero() {
        tokio::time::sleep(cfg.latency).await;
    }
    let gzip = cfg.gzip && header_str(header::ACCEPT_ENCODING).is_some_and(|v| v.contains("gzip"));
    // Search and login (see crate::search) need the cookie and the form body.
    let reply = match crate::search::intercept(&shared.fixture, &shared.search, &parts.method, &path_and_query, &parts.headers, body).await {
        Some(response) => Reply::plain(response, guard),
        None => {
            let asked = Asked { if_none_match: header_str(header::IF_NONE_MATCH), if_modified_since: header_str(header::IF_MODIFIED_SINCE) };
            respond(&shared, &conn, &parts.method, &path_and_query, gzip, &asked, guard).await
        }
    };
    let done = shared.started.elapsed();
    let status = if reply.sends_nothing { 0 } else { reply.response.status().as_u16() };
    {
        let mut log = lock(&shared.log);
        if let Some(r) = find(&mut log, seq) {
            r.status = status;
            r.done = Some(done);
            r.fault = reply.fault;
        }
    }
    // A body that is not streamed is handed over here: the request ends now.
    drop(reply.guard);
    reply.response
}

/// A request arriving at `at`, not yet answered.
fn arrival(shared: &Shared, at: Instant, method: String, path_and_query: String, host: Option<String>, user_agent: Option<String>) -> RequestRecord {
    let since = at.duration_since(shared.started);
    RequestRecord {
        seq: 0,
        at,
        since_start: since,
        received: shared.started_wall + since,
        done: None,
        ended: None,
        method,
        path_and_query,
        host,
        user_agent,
        status: 0,
        fault: None,
    }
}

/// Appends `record` to the request log under the next sequence number,
/// which it returns.
fn log_arrival(shared: &Shared, mut record: RequestRecord) -> u64 {
    let mut log = lock(&shared.log);
    let seq = log.next_seq;
    log.next_seq += 1;
    record.seq = seq;
    log.records.push(record);
    seq
}

/// Logs an arrival that `handle` does not see (the socket's handshake and
/// frames), already answered; its sequence number.
fn note(shared: &Shared, method: &str, path_and_query: &str, host: Option<String>, status: u16) -> u64 {
    let mut r = arrival(shared, Instant::now(), method.to_owned(), path_and_query.to_owned(), host, None);
    (r.done, r.ended, r.status) = (Some(r.since_start), Some(r.since_start), status);
    log_arrival(shared, r)
}

/// `/st/socket?tid=N` ([`crate::socket`]): each text frame `{"after":K}` is
/// logged as a request (method `WS`) and answered with the next posts after
/// the server's think time; anything else closes the socket.
async fn socket(
    State(shared): State<Arc<Shared>>,
    upgrade: Result<axum::extract::ws::WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
    req: Request,
) -> Response {
    use axum::extract::ws::Message;
    use axum::response::IntoResponse as _;
    let path_and_query = req.uri().path_and_query().map_or_else(|| req.uri().path().to_owned(), |pq| pq.as_str().to_owned());
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_owned);
    // A handshake refused is logged with its status, as any request is.
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(no) => {
            let response = no.into_response();
            note(&shared, "GET", &path_and_query, host, response.status().as_u16());
            return response;
        }
    };
    note(&shared, "GET", &path_and_query, host.clone(), 101);
    let tid = path_and_query.split(['?', '&']).find_map(|kv| kv.strip_prefix("tid=")?.parse::<u64>().ok()).unwrap_or(0);
    upgrade.on_upgrade(move |mut ws| async move {
        let site = crate::socket::SocketSite::new(shared.fixture.config().seed);
        let mut stopping = shared.stopping.subscribe();
        loop {
            let frame = tokio::select! {
                f = ws.recv() => f,
                _ = stopping.wait_for(|s| *s) => return,
            };
            let Some(Ok(Message::Text(text))) = frame else { return };
            note(&shared, "WS", &path_and_query, host.clone(), 200);
            tokio::time::sleep(crate::socket::THINK).await;
            let Some(answer) = site.frame(tid, text.as_str()) else { return };
            if ws.send(Message::Text(answer.into())).await.is_err() {
                return;
            }
        }
    })
}

/// Search from the end: the record is recent unless the log was cleared.
fn find(log: &mut Log, seq: u64) -> Option<&mut RequestRecord> {
    log.records.iter_mut().rev().find(|r| r.seq == seq)
}

/// Sets a request's `ended` when dropped: with the handler, or with the
/// streamed body that took it over.
struct EndGuard {
    shared: Arc<Shared>,
    seq: u64,
}

impl EndGuard {
    /// Notes the fault now, for faults that may never complete (a stall the
    /// client walks away from).
    fn note_fault(&self, name: &'static str) {
        let mut log = lock(&self.shared.log);
        if let Some(r) = find(&mut log, self.seq) {
            r.fault = Some(name);
        }
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        let ended = self.shared.started.elapsed();
        let mut log = lock(&self.shared.log);
        if let Some(r) = find(&mut log, self.seq) {
            r.ended.get_or_insert(ended);
        }
    }
}

struct Reply {
    response: Response,
    fault: Option<&'static str>,
    /// The guard, unless a streamed body took it.
    guard: Option<EndGuard>,
    /// The connection is reset instead of sending `response`.
    sends_nothing: bool,
}

impl Reply {
    fn plain(response: Response, guard: EndGuard) -> Reply {
        Reply { response, fault: None, guard: Some(guard), sends_nothing: false }
    }
    fn fault(response: Response, name: &'static str, guard: EndGuard) -> Reply {
        Reply { response, fault: Some(name), guard: Some(guard), sends_nothing: false }
    }
}

fn error_page(status: StatusCode) -> Response {
    let body = format!("<html><body><h1>{} {}</h1><p>Try again.</p></body></html>\n", status.as_u16(), status.canonical_reason().unwrap_or(""));
    Response::builder().status(status).header(header::CONTENT_TYPE, "text/html").body(Body::from(body)).unwrap_or_default()
}

/// A request's conditions (RFC 9110 §13).
struct Asked {
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
}

/// What identifies a page's content, where the forum says: the Discuz!
/// forum sends an `ETag` (of the page's bytes), the modern one a
/// `Last-Modified` (when any post was last added: coarse, as many forums'
/// is), the phpBB one neither, so a crawler meets all three.
fn validators(shared: &Shared, path_and_query: &str, body: &[u8]) -> (Option<String>, Option<String>) {
    if path_and_query.starts_with("/dz/") {
        let hash = body.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01B3));
        // Weak: the same page is sent gzipped or not.
        (Some(format!("W/\"{hash:016x}\"")), None)
    } else if path_and_query.starts_with("/bbs/") {
        let added = shared.fixture.posts_added() as u64;
        let at = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + added * 60);
        (None, Some(httpdate::fmt_http_date(at)))
    } else {
        (None, None)
    }
}

async fn respond(shared: &Arc<Shared>, conn: &ConnHandle, method: &Method, path_and_query: &str, gzip: bool, asked: &Asked, guard: EndGuard) -> Reply {
    if method != Method::GET && method != Method::HEAD {
        let r = Response::builder().status(StatusCode::METHOD_NOT_ALLOWED).header(header::ALLOW, "GET, HEAD").body(Body::empty()).unwrap_or_default();
        return Reply::plain(r, guard);
    }
    let cfg = shared.fixture.config();
    if cfg.flaky_percent > 0
        && path_and_query != "/robots.txt"
        && hash_str(path_and_query) % 100 < u64::from(cfg.flaky_percent)
        && lock(&shared.failed).insert(path_and_query.to_owned())
    {
        return Reply::fault(error_page(StatusCode::SERVICE_UNAVAILABLE), "flaky", guard);
    }
    let h = &cfg.hostility;
    if h.is_on() && path_and_query != "/robots.txt" {
        let key = request_key(path_and_query);
        if let Some(back) = loop_origin(path_and_query).filter(|o| shared.fixture.permanent_fault(o) == Some(PermanentFault::RedirectLoop)) {
            return Reply::fault(redirect(back), PermanentFault::RedirectLoop.name(), guard);
        }
        // A disallowed page is served like any other: only a rude crawler gets it.
        if let Some(fault) = shared.fixture.permanent_fault(path_and_query).filter(|f| *f != PermanentFault::RobotsDisallowed) {
            return permanent(shared, fault, path_and_query, guard).await;
        }
        let attempt = {
            let mut attempts = lock(&shared.attempts);
            let n = attempts.entry(key.clone()).or_default();
            *n += 1;
            *n - 1
        };
        if let Some(fault) = h.transient_fault(&key, attempt) {
            return transient(shared, conn, fault, path_and_query, guard).await;
        }
    }
    // The benchmark's hand on the model from another process: one reply to
    // each of N threads, the changes as JSON (what `add_replies` returns to a test).
    if let Some(n) = path_and_query.strip_prefix("/__fixture/add-replies?n=").and_then(|n| n.parse::<usize>().ok()) {
        let changes = shared.fixture.add_replies(n);
        let body = serde_json::to_vec(&changes).unwrap_or_default();
        return Reply::plain(Response::builder().header(header::CONTENT_TYPE, "application/json").body(Body::from(body)).unwrap_or_default(), guard);
    }
    // The XHR forum's short links: a redirect to the thread page, one level
    // deeper, whose script asks for its JSON by relative URL.
    if let Some(tid) = path_and_query.strip_prefix("/xhr/go?tid=").filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())) {
        return Reply::plain(redirect(&format!("/xhr/thread/{tid}")), guard);
    }
    // Discuz! X's `forum.php?mod=redirect&…`, the NodeBB-style forum's
    // `post/{pid}`: a 302 to the page it names.
    if let Some(to) = shared.fixture.redirect_target(path_and_query) {
        return Reply::plain(redirect(&to), guard);
    }
    // Socket.io's long-poll: answered at once for a handshake, else held
    // open with nothing to say, as a server does until it has news.
    if let Some(query) = path_and_query.strip_prefix("/st/poll?") {
        let (hold, body) = crate::socket::poll(query);
        let mut stopping = shared.stopping.subscribe();
        tokio::select! {
            _ = tokio::time::sleep(hold) => {}
            _ = stopping.wait_for(|s| *s) => {}
        }
        return Reply::plain(Response::builder().header(header::CONTENT_TYPE, "text/plain; charset=utf-8").body(Body::from(body)).unwrap_or_default(), guard);
    }
    let page = match path_and_query.starts_with("/news/") {
        true => news_page(shared, path_and_query),
        false => render(shared, path_and_query).await,
    };
    let (etag, last_modified) = if page.status == 200 { validators(shared, path_and_query, &page.body) } else { (None, None) };
    let unchanged = match (&etag, &asked.if_none_match, &last_modified, &asked.if_modified_since) {
        (Some(e), Some(asked), _, _) => asked.split(',').any(|a| a.trim() == e || a.trim() == "*"),
        // If-Modified-Since counts only without If-None-Match (§13.1.3).
        (_, None, Some(lm), Some(since)) => matches!((httpdate::parse_http_date(lm), httpdate::parse_http_date(since)), (Ok(lm), Ok(since)) if lm <= since),
        _ => false,
    };
    let mut builder = Response::builder();
    if let Some(e) = &etag {
        builder = builder.header(header::ETAG, e.as_str());
    }
    if let Some(lm) = &last_modified {
        builder = builder.header(header::LAST_MODIFIED, lm.as_str());
    }
    if unchanged {
        return Reply::plain(builder.status(StatusCode::NOT_MODIFIED).body(Body::empty()).unwrap_or_default(), guard);
    }
    if is_microblog(path_and_query) {
        // The microblog's times are relative to its fixed clock; this is how a client learns it.
        builder = builder.header(header::DATE, crate::microblog::DATE_HEADER);
    }
    if is_widget(path_and_query) {
        for (name, value) in crate::widget::headers(path_and_query) {
            builder = builder.header(name, value);
        }
    }
    if path_and_query.starts_with("/news/api/") {
        // Asked from another origin's pages too (`set_news_api_origin`).
        builder = builder.header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    }
    let mut builder = builder
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
    Reply::plain(builder.body(Body::from(body)).unwrap_or_default(), guard)
}

/// Renders off the async workers, so a big page does not hold up the
/// logging of other requests' arrivals.
async fn render(shared: &Arc<Shared>, path_and_query: &str) -> crate::FixtureResponse {
    let (fixture, path) = (shared.fixture.clone(), path_and_query.to_owned());
    let page = move || {
        if is_microblog(&path) {
            let (p, q) = path.split_once('?').unwrap_or((path.as_str(), ""));
            let model = crate::microblog::model(fixture.config().seed);
            return match model.get(p, q) {
                Some((status, content_type, body)) => crate::FixtureResponse { status, content_type, body },
                None => crate::FixtureResponse { status: 404, content_type: "text/html", body: b"<h1>404 Not Found</h1>".to_vec() },
            };
        }
        if path.starts_with("/st/") {
            let p = path.split_once('?').map_or(path.as_str(), |(p, _)| p);
            return match crate::socket::SocketSite::new(fixture.config().seed).get(p) {
                Some((status, content_type, body)) => crate::FixtureResponse { status, content_type, body },
                None => crate::FixtureResponse { status: 404, content_type: "text/html", body: b"<h1>404 Not Found</h1>".to_vec() },
            };
        }
        if is_widget(&path) {
            let (p, q) = path.split_once('?').unwrap_or((path.as_str(), ""));
            return match crate::widget::WidgetSite::new(fixture.config().seed).get(p, q) {
                Some((status, content_type, body)) => crate::FixtureResponse { status, content_type, body },
                None => crate::FixtureResponse { status: 404, content_type: "text/html", body: b"<h1>404 Not Found</h1>".to_vec() },
            };
        }
        fixture.get(&path)
    };
    match tokio::task::spawn_blocking(page).await {
        Ok(page) => page,
        Err(_) => crate::FixtureResponse { status: 500, content_type: "text/html", body: b"<h1>render failed</h1>".to_vec() },
    }
}

/// A page of the news site ([`crate::news`]), small enough to render in place.
fn news_page(shared: &Shared, path_and_query: &str) -> crate::FixtureResponse {
    let (p, q) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    match lock(&shared.news).get(p, q) {
        Some((status, content_type, body)) => crate::FixtureResponse { status, content_type, body },
        None => crate::FixtureResponse { status: 404, content_type: "text/html", body: b"<h1>404 Not Found</h1>".to_vec() },
    }
}

/// The two sites drawn by JavaScript live beside the forums ([`crate::microblog`]).
fn is_microblog(path_and_query: &str) -> bool {
    path_and_query.starts_with("/mb/") || path_and_query.starts_with("/xhr/")
}

/// The news site whose comments a widget script draws ([`crate::widget`]).
fn is_widget(path_and_query: &str) -> bool {
    path_and_query.starts_with("/cw/")
}

const LOOP_MARK: &str = "luntan-loop=1";

/// The URL a redirect loop's second hop points back to.
fn loop_origin(path_and_query: &str) -> Option<&str> {
    let rest = path_and_query.strip_suffix(LOOP_MARK)?;
    rest.strip_suffix('&').or_else(|| rest.strip_suffix('?'))
}

fn redirect(to: &str) -> Response {
    Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, to)
        .header(header::CONTENT_TYPE, "text/html")
        .body(Body::from("<html><body>Moved</body></html>\n"))
        .unwrap_or_default()
}

async fn permanent(shared: &Arc<Shared>, fault: PermanentFault, path_and_query: &str, guard: EndGuard) -> Reply {
    let h = &shared.fixture.config().hostility;
    let name = fault.name();
    let response = match fault {
        PermanentFault::AlwaysError | PermanentFault::LaterPageError => error_page(StatusCode::INTERNAL_SERVER_ERROR),
        // Filtered out by the caller; a 200 page if it ever got here.
        PermanentFault::RobotsDisallowed => return Reply::plain(error_page(StatusCode::OK), guard),
        PermanentFault::RedirectLoop => {
            let sep = if path_and_query.contains('?') { '&' } else { '?' };
            redirect(&format!("{path_and_query}{sep}{LOOP_MARK}"))
        }
        PermanentFault::OffHostRedirect => redirect(&format!("{}/{}", h.other_host.trim_end_matches('/'), path_and_query.trim_start_matches('/'))),
        PermanentFault::GzipBomb => {
            // Compressing tens of megabytes takes a while the first time: not on a worker.
            let size = h.bomb_bytes;
            let bomb = tokio::task::spawn_blocking(move || gzip_bomb(size)).await.unwrap_or_default();
            Response::builder().header(header::CONTENT_TYPE, "text/html").header(header::CONTENT_ENCODING, "gzip").body(Body::from(bomb)).unwrap_or_default()
        }
        PermanentFault::Huge | PermanentFault::HugeChunked => {
            let kind = ForumKind::of_path(path_and_query).unwrap_or(ForumKind::Bbs);
            let size = h.huge_bytes;
            let chunks = tokio::task::spawn_blocking(move || huge_chunks(kind, size)).await.unwrap_or_default();
            let mut b = Response::builder().header(header::CONTENT_TYPE, "text/html");
            if fault == PermanentFault::Huge {
                b = b.header(header::CONTENT_LENGTH, h.huge_bytes);
            }
            let body = streamed(chunks, false, guard);
            return Reply { response: b.body(body).unwrap_or_default(), fault: Some(name), guard: None, sends_nothing: false };
        }
    };
    Reply::fault(response, name, guard)
}

async fn transient(shared: &Arc<Shared>, conn: &ConnHandle, fault: TransientFault, path_and_query: &str, guard: EndGuard) -> Reply {
    let h = &shared.fixture.config().hostility;
    let name = fault.name();
    let response = match fault {
        TransientFault::Status500 => error_page(StatusCode::INTERNAL_SERVER_ERROR),
        TransientFault::Status502 => error_page(StatusCode::BAD_GATEWAY),
        TransientFault::Status503 => error_page(StatusCode::SERVICE_UNAVAILABLE),
        TransientFault::TooManyRequests => {
            let mut r = error_page(StatusCode::TOO_MANY_REQUESTS);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(h.retry_after.as_secs()));
            r
        }
        TransientFault::Reset | TransientFault::Stall => {
            if fault == TransientFault::Stall {
                guard.note_fault(name);
                let mut stopping = shared.stopping.subscribe();
                tokio::select! {
                    _ = tokio::time::sleep(h.stall) => {}
                    _ = stopping.wait_for(|s| *s) => {}
                }
            }
            conn.reset();
            return Reply { response: error_page(StatusCode::INTERNAL_SERVER_ERROR), fault: Some(name), guard: Some(guard), sends_nothing: true };
        }
        TransientFault::Truncated => {
            let page = render(shared, path_and_query).await;
            let full = page.body.len();
            let half = Bytes::from(page.body).slice(..full / 2);
            let response = Response::builder()
                .status(StatusCode::from_u16(page.status).unwrap_or(StatusCode::OK))
                .header(header::CONTENT_TYPE, HeaderValue::from_static(page.content_type))
                .header(header::CONTENT_LENGTH, full)
                .body(streamed(vec![half], true, guard))
                .unwrap_or_default();
            return Reply { response, fault: Some(name), guard: None, sends_nothing: false };
        }
    };
    Reply::fault(response, name, guard)
}

/// A streamed body: `chunks`, then (if `cut`) an error that makes hyper
/// drop the connection short of the promised length. The guard ends the
/// request when the stream is done with or dropped.
fn streamed(chunks: Vec<Bytes>, cut: bool, guard: EndGuard) -> Body {
    use futures_util::StreamExt as _;
    let items: Vec<Result<Bytes, io::Error>> = chunks.into_iter().map(Ok).collect();
    let cut_after = async move {
        // Give hyper a moment to put the first part on the wire: an error
        // right away could drop the connection before any byte of it.
        tokio::time::sleep(Duration::from_millis(10)).await;
        Err::<Bytes, io::Error>(io::Error::other("cut short"))
    };
    let tail = futures_util::stream::once(cut_after).take(usize::from(cut));
    let stream = futures_util::stream::iter(items).chain(tail).map(move |item| {
        let _keep = &guard;
        item
    });
    Body::from_stream(stream)
}

/// `bytes` of inert HTML in 1 MB pieces (shared, so a 20 MB answer costs
/// no 20 MB of memory per request).
fn huge_chunks(kind: ForumKind, bytes: usize) -> Vec<Bytes> {
    static PIECES: OnceLock<Mutex<HashMap<ForumKind, Bytes>>> = OnceLock::new();
    const PIECE: usize = 1 << 20;
    let piece = lock(PIECES.get_or_init(Default::default)).entry(kind).or_insert_with(|| Bytes::from(padding(kind, PIECE))).clone();
    let mut out = Vec::new();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(piece.len());
        out.push(piece.slice(..n));
        left -= n;
    }
    out
}

/// A gzip member that inflates to `bytes` spaces (about a thousandth of
/// that on the wire), made once per size.
fn gzip_bomb(bytes: usize) -> Bytes {
    static BOMBS: OnceLock<Mutex<HashMap<usize, Bytes>>> = OnceLock::new();
    let mut bombs = lock(BOMBS.get_or_init(Default::default));
    bombs
        .entry(bytes)
        .or_insert_with(|| {
            use std::io::Write as _;
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            let block = vec![b' '; 1 << 16];
            let mut left = bytes;
            while left > 0 {
                let n = left.min(block.len());
                // Writing to a Vec cannot fail.
                let _ = z.write_all(&block[..n]);
                left -= n;
            }
            Bytes::from(z.finish().unwrap_or_default())
        })
        .clone()
}

fn gzipped(body: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write as _;
    let mut z = flate2::write::GzEncoder::new(Vec::with_capacity(body.len() / 3), flate2::Compression::fast());
    z.write_all(body).ok()?;
    z.finish().ok()
}

// ---------------------------------------------------------------- connections that can be reset

/// Accepts connections wrapped in [`FaultIo`], so a handler can reset its own connection.
struct FaultListener(TcpListener);

impl axum::serve::Listener for FaultListener {
    type Io = FaultIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (FaultIo, SocketAddr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    return (FaultIo { stream, reset: Arc::new(AtomicBool::new(false)) }, addr);
                }
                // Out of file descriptors and the like: wait, as axum's own listener does.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// A TCP stream that turns into a reset (RST, no response) once its
/// [`ConnHandle`] asks for it.
struct FaultIo {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl FaultIo {
    fn check(&self) -> io::Result<()> {
        if self.reset.load(Ordering::Acquire) {
            // Zero linger makes the close that follows an RST, not a FIN.
            let _ = self.stream.set_zero_linger();
            return Err(io::Error::from(io::ErrorKind::ConnectionReset));
        }
        Ok(())
    }
}

impl AsyncRead for FaultIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A handler's grip on its connection.
#[derive(Clone)]
struct ConnHandle(Arc<AtomicBool>);

impl ConnHandle {
    /// The connection is reset instead of answering.
    fn reset(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Connected<IncomingStream<'_, FaultListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, FaultListener>) -> Self {
        ConnHandle(stream.io().reset.clone())
    }
}
