//! Polite HTTP for one forum: a per-site gate (concurrency and delay),
//! robots.txt, retries with backoff and jitter, Retry-After, a slow-down
//! after consecutive failures, and caps on body size.
//!
//! One [`Fetcher`] per site. Its gate is shared by every request to that
//! site (robots.txt included), so the site file's `concurrency` and
//! `delay-ms` bound what the forum sees whatever the stage does. Every
//! request luntan makes goes through it: the stages' page fetches and, through
//! a [`Session`] (one cookie jar per forum account), keyword monitoring's
//! logins and searches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::site::{Politeness, Site};
use luntan_core::store::{StateUrl, Store, StoreError, Validators};
use reqwest::cookie::CookieStore as _;
use reqwest::header::{CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION, RETRY_AFTER};
use tokio::sync::{OnceCell, Semaphore, SemaphorePermit};
use tokio::time::Instant;
use url::Url;

/// Longest Retry-After luntan will wait out; a longer one fails the request
/// for this run (it stays retryable with `--retry-failed`).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Ceiling of the exponential backoff between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Most redirects followed for one page; a longer chain is a trap.
pub const MAX_REDIRECTS: usize = 10;
/// Consecutive transient failures before the whole site is slowed down.
const BREAKER_AFTER: u32 = 3;

/// A response body luntan accepted.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL after redirects.
    pub url: Url,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// The server's `Date` header: its clock, against which protocol mode
    /// reads times such as "3分钟前".
    pub date: Option<String>,
    /// Its `ETag` and `Last-Modified`, to ask with next time.
    pub validators: Validators,
    /// The response's version and headers, and when it arrived, for the
    /// page's line in `article<T>.http` (see [`luntan_core::capture`]);
    /// `None` for a page not received just now (kept from an earlier
    /// download without one, or drawn by a browser).
    pub head: Option<ResponseHead>,
}

/// What an archive needs of a response besides its status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// `HTTP/1.1`.
    pub version: String,
    /// Every header as the HTTP client handed it over (names lower-cased,
    /// values of one name together, each value as ISO-8859-1 text:
    /// [`luntan_core::capture::latin1`]). A body the client decompressed
    /// comes without `Content-Encoding` and `Content-Length`, so the
    /// headers describe the body as kept.
    pub headers: Vec<(String, String)>,
    /// When the response's head arrived, RFC 3339 UTC
    /// ([`luntan_core::capture::format_time`]).
    pub at: String,
}

impl ResponseHead {
    fn of(resp: &reqwest::Response, at: std::time::SystemTime) -> ResponseHead {
        let headers = resp.headers().iter().map(|(k, v)| (k.as_str().to_owned(), luntan_core::capture::latin1(v.as_bytes()))).collect();
        ResponseHead { version: format!("{:?}", resp.version()), headers, at: luntan_core::capture::format_time(at) }
    }
}

/// Why a URL could not be fetched. Every variant names the URL.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    #[error("{url}: HTTP {status}")]
    Status { url: Url, status: u16, retry_after: Option<Duration> },
    #[error("{url}: timed out after {}s", .after.as_secs_f32())]
    Timeout { url: Url, after: Duration },
    #[error("{url}: {what}")]
    Network { url: Url, what: String },
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge { url: Url, limit: u64 },
    #[error("{url}: not an HTML page (Content-Type {content_type})")]
    NotHtml { url: Url, content_type: String },
    #[error("{url}: not JSON (Content-Type {content_type})")]
    NotJson { url: Url, content_type: String },
    #[error("{url}: disallowed by robots.txt")]
    Robots { url: Url },
    #[error("{url}: robots.txt unavailable ({why}); not crawling the host")]
    RobotsUnavailable { url: Url, why: String },
    #[error("{url}: refused: {why}")]
    Refused { url: Url, why: String },
    #[error("{url}: Retry-After {}s is longer than luntan waits ({}s)", .wait.as_secs(), MAX_RETRY_AFTER.as_secs())]
    RetryAfterTooLong { url: Url, wait: Duration },
    #[error("{last} (gave up after {attempts} attempts)")]
    GaveUp { last: Box<FetchError>, attempts: u32 },
}

impl FetchError {
    /// Whether trying again later may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            FetchError::Status { status, .. } => matches!(status, 408 | 425 | 429 | 500 | 502 | 503 | 504),
            FetchError::Timeout { .. } | FetchError::Network { .. } => true,
            _ => false,
        }
    }

    /// The HTTP status, when the server answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            FetchError::Status { status, .. } => Some(*status),
            FetchError::GaveUp { last, .. } => last.status(),
            _ => None,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            FetchError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Counters a stage reports at the end.
#[derive(Debug, Default)]
pub struct FetchStats {
    pub requests: AtomicU64,
    pub retries: AtomicU64,
    pub bytes: AtomicU64,
}

/// Bounds concurrency and spacing of requests to one site.
#[derive(Debug)]
struct Gate {
    slots: Semaphore,
    /// Earliest start of the next request: the last start plus the delay, or
    /// later while the site is held off (Retry-After, the breaker).
    next: Mutex<Instant>,
    delay: Mutex<Duration>,
    consecutive_failures: AtomicU32,
    /// The same limits held for every worker of a shared crawl together.
    shared: Option<Arc<SharedGate>>,
}

/// A site's gate in the crawl state, for workers in other processes and on
/// other hosts (`luntan_core::store`'s gates): a request slot leased from
/// the site's `concurrency` and a turn reserved `delay` after the last one
/// any worker reserved. The store calls block, so they run on tokio's
/// blocking pool.
struct SharedGate {
    /// One connection for every forum's gate in this process.
    store: Arc<Mutex<Store>>,
    site: String,
    concurrency: usize,
    /// How long a slot stays this worker's unrenewed (the stage's lease
    /// keeper renews it): a killed worker's slot comes back after this.
    lease: Duration,
}

impl std::fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedGate").field("site", &self.site).field("concurrency", &self.concurrency).finish_non_exhaustive()
    }
}

impl SharedGate {
    async fn call<T: Send + 'static>(self: &Arc<Self>, f: impl FnOnce(&Store, &SharedGate) -> Result<T, StoreError> + Send + 'static) -> Result<T, StoreError> {
        let gate = self.clone();
        match tokio::task::spawn_blocking(move || f(&gate.store.lock().unwrap_or_else(|p| p.into_inner()), &gate)).await {
            Ok(out) => out,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}

/// The connection this process's shared gates use on `state`, opened by
/// the first fetcher that shares its politeness and kept while any does: a
/// query or two per request does not need a connection per forum.
fn gate_store(state: &StateUrl) -> Result<Arc<Mutex<Store>>, StoreError> {
    static STORES: Mutex<Vec<(StateUrl, std::sync::Weak<Mutex<Store>>)>> = Mutex::new(Vec::new());
    let mut stores = STORES.lock().unwrap_or_else(|p| p.into_inner());
    stores.retain(|(_, s)| s.strong_count() > 0);
    if let Some(s) = stores.iter().filter(|(at, _)| at == state).find_map(|(_, s)| s.upgrade()) {
        return Ok(s);
    }
    let store = Store::connect(state)?;
    // A turn is taken when its commit returns; an fsync in between would
    // start the request late by however long the disk took.
    store.relax_durability()?;
    let store = Arc::new(Mutex::new(store));
    stores.push((state.clone(), Arc::downgrade(&store)));
    Ok(store)
}

/// What lets a request go: a slot of this process's gate and, in a shared
/// crawl, one of the site's shared slots, given back when dropped.
struct Pass<'a> {
    _permit: SemaphorePermit<'a>,
    shared: Option<(Arc<SharedGate>, i64)>,
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if let Some((gate, slot)) = self.shared.take() {
            // Dropped in async code: the store's call goes to the blocking pool.
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn_blocking(move || {
                    if let Err(e) = gate.store.lock().unwrap_or_else(|p| p.into_inner()).gate_release(&gate.site, slot) {
                        tracing::warn!("{}: cannot give back a shared request slot ({e}); it comes back when its lease runs out", gate.site);
                    }
                });
            }
        }
    }
}

impl Gate {
    fn new(p: &Politeness) -> Gate {
        Gate {
            slots: Semaphore::new(p.concurrency),
            next: Mutex::new(Instant::now()),
            delay: Mutex::new(p.delay),
            consecutive_failures: AtomicU32::new(0),
            shared: None,
        }
    }

    /// Waits, in a shared crawl, for one of the site's shared slots and then
    /// for the site's turn, taken once it has come; returns the slot, and
    /// whether the turn was taken. When the store fails (said once per
    /// request), what it could not do falls to this process's own gate.
    async fn enter_shared(&self, shared: &Arc<SharedGate>) -> (Option<(Arc<SharedGate>, i64)>, bool) {
        let delay = *self.delay.lock().expect("gate lock");
        let poll = (delay / 2).clamp(Duration::from_millis(5), Duration::from_millis(50));
        let unavailable =
            |e: StoreError| tracing::warn!("{}: shared politeness unavailable ({e}); this worker keeps the limits for its own requests only", shared.site);
        let slot = loop {
            match shared.call(|s, g| s.gate_slot(&g.site, g.concurrency, g.lease)).await {
                Ok(Some(slot)) => break slot,
                Ok(None) => tokio::time::sleep(poll).await,
                Err(e) => {
                    unavailable(e);
                    return (None, false);
                }
            }
        };
        loop {
            match shared.call(move |s, g| s.gate_turn(&g.site, delay)).await {
                Ok(None) => return (Some((shared.clone(), slot)), true),
                Ok(Some(wait)) => tokio::time::sleep(wait).await,
                Err(e) => {
                    unavailable(e);
                    return (Some((shared.clone(), slot)), false);
                }
            }
        }
    }

    /// Waits for a free slot and for the request's turn.
    ///
    /// The turn is claimed only when it has come, from the clock at that
    /// moment: a hold that arrives while a request waits (a 429 on another
    /// request) still applies to it, and a late timer wake-up moves the next
    /// start later instead of eating into the delay.
    /// Returns the slot and the moment the turn was claimed.
    async fn enter(&self) -> (Pass<'_>, Instant) {
        let permit = self.slots.acquire().await.expect("gate semaphore is never closed");
        let mut shared = None;
        if let Some(g) = &self.shared {
            // The shared turn spaces this worker's requests too; a local
            // turn on top would start some late and eat into the next
            // worker's delay. Holds reach the shared gate (`hold_off`).
            let (slot, turn_taken) = self.enter_shared(g).await;
            if turn_taken {
                return (Pass { _permit: permit, shared: slot }, Instant::now());
            }
            shared = slot;
        }
        let permit = Pass { _permit: permit, shared };
        loop {
            let wait_until = {
                let delay = *self.delay.lock().expect("gate lock");
                let mut next = self.next.lock().expect("gate lock");
                let now = Instant::now();
                if *next <= now {
                    *next = now + delay;
                    Err(now)
                } else {
                    Ok(*next)
                }
            };
            match wait_until {
                Err(claimed) => return (permit, claimed),
                Ok(at) => tokio::time::sleep_until(at).await,
            }
        }
    }

    /// Holds every request to the site back until `wait` from now (every
    /// worker's, in a shared crawl).
    fn hold_off(&self, wait: Duration) {
        let mut next = self.next.lock().expect("gate lock");
        *next = (*next).max(Instant::now() + wait);
        if let (Some(g), Ok(rt)) = (&self.shared, tokio::runtime::Handle::try_current()) {
            let g = g.clone();
            rt.spawn_blocking(move || {
                if let Err(e) = g.store.lock().unwrap_or_else(|p| p.into_inner()).gate_hold(&g.site, wait) {
                    tracing::warn!("{}: cannot hold the other workers off ({e})", g.site);
                }
            });
        }
    }

    fn raise_delay(&self, to: Duration) {
        let mut d = self.delay.lock().expect("gate lock");
        *d = (*d).max(to);
    }

    fn success(&self) {
        self.consecutive_failures.store(0, Ordering::Relaxed);
    }

    /// Counts a transient failure; past [`BREAKER_AFTER`] in a row the whole
    /// site pauses, doubling each time, so a struggling forum gets air.
    fn failure(&self, base: Duration) {
        let n = self.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= BREAKER_AFTER {
            let pause = base.saturating_mul(1 << (n - BREAKER_AFTER).min(6)).min(MAX_BACKOFF);
            tracing::debug!(failures = n, pause_ms = pause.as_millis() as u64, "slowing down");
            self.hold_off(pause);
        }
    }
}

#[derive(Debug, Clone)]
enum RobotsRule {
    AllowAll,
    Rules(Arc<texting_robots::Robot>),
    Unavailable(String),
}

/// Fetches pages of one site politely.
///
/// Requests run on a small runtime of their own (see [`io`]): the stages
/// parse pages on their own runtime's threads, and a request whose turn has
/// come must not wait behind a page being parsed to reach the wire, or the
/// forum sees two requests closer than the delay that spaced them.
pub struct Fetcher {
    core: Arc<Core>,
    pub stats: Arc<FetchStats>,
}

/// Everything a request needs, shared with the tasks on the I/O runtime.
struct Core {
    client: reqwest::Client,
    site: Arc<Site>,
    gate: Gate,
    robots: Mutex<HashMap<String, Arc<OnceCell<RobotsRule>>>>,
    /// First retry wait; doubles per attempt.
    backoff_base: Duration,
    stats: Arc<FetchStats>,
}

/// The runtime every request of every fetcher runs on: two threads that do
/// nothing but network I/O, so a request is written the moment the gate
/// lets it go.
fn io() -> &'static tokio::runtime::Runtime {
    static IO: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    IO.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("luntan-http").enable_all().build().expect("cannot start the HTTP runtime")
    })
}

fn client_builder(p: &Politeness) -> reqwest::ClientBuilder {
    // Redirects are followed by hand (see `Core::fetch`), so that every hop
    // passes the gate, the host check and robots.txt like any request.
    reqwest::Client::builder()
        .user_agent(p.user_agent.clone())
        .timeout(p.timeout)
        .connect_timeout(p.timeout.min(Duration::from_secs(10)))
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(p.concurrency)
}

fn build_client(site: &Site, builder: reqwest::ClientBuilder) -> Result<reqwest::Client, FetchError> {
    builder.build().map_err(|e| FetchError::Network { url: site.home.clone(), what: format!("HTTP client: {e}") })
}

/// Runs a request on [`io`]'s runtime and waits for it. If the caller stops
/// waiting, the request still finishes, so the gate's count of requests in
/// flight stays true.
async fn on_io<T: Send + 'static>(url: &Url, request: impl std::future::Future<Output = Result<T, FetchError>> + Send + 'static) -> Result<T, FetchError> {
    match io().spawn(request).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(FetchError::Network { url: url.clone(), what: format!("request task ended: {e}") }),
    }
}

impl Fetcher {
    pub fn new(site: Arc<Site>) -> Result<Fetcher, FetchError> {
        let client = build_client(&site, client_builder(&site.politeness))?;
        let stats = Arc::new(FetchStats::default());
        let core = Core {
            client,
            gate: Gate::new(&site.politeness),
            site,
            robots: Mutex::new(HashMap::new()),
            backoff_base: Duration::from_millis(250),
            stats: stats.clone(),
        };
        Ok(Fetcher { core: Arc::new(core), stats })
    }

    /// Holds the site's delay and concurrency for every worker sharing the
    /// crawl state at `state` together (per-site slots and turns kept in the
    /// store, on a connection of this fetcher's own), not just for this
    /// process. `lease` is how long a slot stays taken once its worker stops
    /// renewing it (killed): the stage's lease keeper renews it meanwhile.
    pub fn share_politeness(mut self, state: &StateUrl, lease: Duration) -> Result<Fetcher, StoreError> {
        let store = gate_store(state)?;
        let core = Arc::get_mut(&mut self.core).expect("a new fetcher is not shared yet");
        let concurrency = core.site.politeness.concurrency;
        store.lock().unwrap_or_else(|p| p.into_inner()).gate_open(&core.site.id, concurrency)?;
        core.gate.shared = Some(Arc::new(SharedGate { store, site: core.site.id.clone(), concurrency, lease }));
        Ok(self)
    }

    /// Shortens the first retry wait (tests against a local server).
    #[cfg(test)]
    fn with_backoff_base(mut self, base: Duration) -> Fetcher {
        Arc::get_mut(&mut self.core).expect("a new fetcher is not shared yet").backoff_base = base;
        self
    }

    pub fn site(&self) -> &Site {
        &self.core.site
    }

    /// GETs an HTML page: checks host and robots.txt, then tries up to
    /// `1 + retries` times on transient failures. Redirects are followed on
    /// the forum's hosts only, at most [`MAX_REDIRECTS`] deep and never back
    /// to a URL already visited; each hop is a request like any other,
    /// spaced by the gate and checked against robots.txt.
    ///
    /// Works from any runtime (the request itself runs on [`io`]'s).
    pub async fn get_html(&self, url: &Url) -> Result<Fetched, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move { core.fetch(&core.client, &target, None).await }).await
    }

    /// [`Fetcher::get_html`], asking with what the forum said identified the
    /// page last time (`If-None-Match`, `If-Modified-Since`): `None` when it
    /// answers 304, the page unchanged and no body sent.
    pub async fn get_html_if(&self, url: &Url, validators: &Validators) -> Result<Option<Fetched>, FetchError> {
        let (core, target, v) = (self.core.clone(), url.clone(), validators.clone());
        on_io(url, async move { core.fetch_cond(&core.client, &target, None, Want::Html, Some(&v)).await }).await
    }

    /// GETs a JSON endpoint (protocol mode, S4) exactly as [`Fetcher::get_html`]
    /// gets a page (hosts, robots.txt, gate, retries, caps), accepting JSON
    /// content types instead of HTML ones.
    pub async fn get_json(&self, url: &Url) -> Result<Fetched, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move { core.fetch_as(&core.client, &target, None, Want::Json).await }).await
    }

    /// GETs whatever a page in the browser asks for (browser mode, S4): the
    /// document, its scripts, its XHRs, exactly as [`Fetcher::get_html`]
    /// gets a page (hosts, robots.txt, gate, retries, caps), of any type.
    pub async fn get_resource(&self, url: &Url) -> Result<Fetched, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move { core.fetch_as(&core.client, &target, None, Want::Any).await }).await
    }

    /// [`Fetcher::get_resource`] without following a redirect: the browser
    /// is answered with the redirect itself and asks for its target again,
    /// through this same path (so the target is gated and checked like any
    /// request, and the page's relative links resolve against where it
    /// really is).
    pub async fn get_resource_step(&self, url: &Url) -> Result<Outcome, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move {
            core.check_target(&target)?;
            if core.site.politeness.robots {
                core.check_robots(&target).await?;
            }
            core.get_with_retries(&core.client, &target, None, Want::Any, None).await
        })
        .await
    }

    /// The runtime that runs luntan's network I/O; long-lived tasks that
    /// serve requests (the browser's event loop) run there too.
    pub fn io_runtime() -> &'static tokio::runtime::Handle {
        static HANDLE: std::sync::OnceLock<tokio::runtime::Handle> = std::sync::OnceLock::new();
        HANDLE.get_or_init(|| io().handle().clone())
    }

    /// Whether robots.txt lets luntan fetch `url` (always, with `robots="false"`).
    /// Loads the host's robots.txt through the gate if it is not known yet.
    pub async fn robots_allow(&self, url: &Url) -> Result<(), FetchError> {
        if !self.core.site.politeness.robots {
            return Ok(());
        }
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move { core.check_robots(&target).await }).await
    }

    /// A cookie session on this forum (one per account): its own cookie jar,
    /// this fetcher's gate, robots.txt, retries and caps.
    pub fn session(&self) -> Result<Session, FetchError> {
        let jar = Arc::new(reqwest::cookie::Jar::default());
        let client = build_client(&self.core.site, client_builder(&self.core.site.politeness).cookie_provider(jar.clone()))?;
        Ok(Session { core: self.core.clone(), client, jar })
    }
}

/// A cookie session with a forum: what one account's requests share. The
/// cookies a response sets, redirects included, are kept for the next request.
#[derive(Clone)]
pub struct Session {
    core: Arc<Core>,
    client: reqwest::Client,
    jar: Arc<reqwest::cookie::Jar>,
}

impl Session {
    /// Adds the cookies of a `Cookie` header value (`a=1; b=2`, copied from
    /// a logged-in browser) for the whole forum.
    pub fn add_cookies(&self, header: &str) {
        let home = &self.core.site.home;
        for kv in header.split(';').map(str::trim).filter(|kv| kv.contains('=')) {
            self.jar.add_cookie_str(&format!("{kv}; Path=/"), home);
        }
    }

    /// Whether any cookie would be sent to `url`.
    pub fn has_cookies_for(&self, url: &Url) -> bool {
        self.jar.cookies(url).is_some()
    }

    /// GETs an HTML page with this session's cookies, as [`Fetcher::get_html`] does.
    pub async fn get_html(&self, url: &Url) -> Result<Fetched, FetchError> {
        let (core, client, target) = (self.core.clone(), self.client.clone(), url.clone());
        on_io(url, async move { core.fetch(&client, &target, None).await }).await
    }

    /// POSTs a form (`body` already encoded as `application/x-www-form-urlencoded`,
    /// in the forum's encoding) and follows the redirect that answers it as a
    /// GET, as a browser does after a login. The POST itself is not checked
    /// against robots.txt: it is the user's own account logging in, not a
    /// page crawled; every page it leads to is.
    pub async fn post_form(&self, url: &Url, body: String) -> Result<Fetched, FetchError> {
        let (core, client, target) = (self.core.clone(), self.client.clone(), url.clone());
        on_io(url, async move { core.fetch(&client, &target, Some(body)).await }).await
    }
}

/// What a response must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Html,
    Json,
    /// robots.txt: whatever it is labelled.
    Any,
}

impl Core {
    /// One page, following redirects by hand; `form` makes the first request a POST.
    async fn fetch(&self, client: &reqwest::Client, url: &Url, form: Option<String>) -> Result<Fetched, FetchError> {
        self.fetch_as(client, url, form, Want::Html).await
    }

    /// Only http(s) on the forum's hosts is ever asked for.
    fn check_target(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Refused { url: url.clone(), why: format!("scheme {} is not fetched", url.scheme()) });
        }
        if !self.site.host_allowed(url) {
            return Err(FetchError::Refused { url: url.clone(), why: "host is not this forum's (add <allow-host> to the site file)".into() });
        }
        Ok(())
    }

    async fn fetch_as(&self, client: &reqwest::Client, url: &Url, form: Option<String>, want: Want) -> Result<Fetched, FetchError> {
        // No validators were sent, so a 304 is not `None` but an error (`once`).
        Ok(self.fetch_cond(client, url, form, want, None).await?.expect("a 304 comes only to a conditional request"))
    }

    /// One page, following redirects by hand; `cond` makes the first request
    /// conditional, and `None` is its 304.
    async fn fetch_cond(
        &self,
        client: &reqwest::Client,
        url: &Url,
        mut form: Option<String>,
        want: Want,
        mut cond: Option<&Validators>,
    ) -> Result<Option<Fetched>, FetchError> {
        self.check_target(url)?;
        let mut visited = vec![url.clone()];
        loop {
            let current = visited.last().expect("starts with the URL asked for").clone();
            if self.site.politeness.robots && form.is_none() {
                self.check_robots(&current).await?;
            }
            // After a POST, the redirect is fetched with GET (RFC 9110 lets
            // 301/302 change the method, and every browser does).
            let next = match self.get_with_retries(client, &current, form.take(), want, cond.take()).await? {
                Outcome::Page(f) => return Ok(Some(f)),
                Outcome::NotModified => return Ok(None),
                Outcome::Redirect(next) => next,
            };
            let refuse = |why: String| Err(FetchError::Refused { url: url.clone(), why });
            if !matches!(next.scheme(), "http" | "https") || !self.site.host_allowed(&next) {
                return refuse(format!("redirect to {next} leaves the forum"));
            }
            if visited.contains(&next) {
                return refuse(format!("redirect loop: {current} leads back to {next}"));
            }
            if visited.len() > MAX_REDIRECTS {
                return refuse(format!("too many redirects (more than {MAX_REDIRECTS}, last to {next})"));
            }
            visited.push(next);
        }
    }

    async fn get_with_retries(
        &self,
        client: &reqwest::Client,
        url: &Url,
        form: Option<String>,
        want: Want,
        cond: Option<&Validators>,
    ) -> Result<Outcome, FetchError> {
        let retries = self.site.politeness.retries;
        // Opened (and its clock started) before any request it will time.
        let log = request_log();
        let mut attempt = 0;
        loop {
            let (permit, started) = self.gate.enter().await;
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let result = self.once(client, url, form.clone(), want, cond).await;
            if let Some(log) = log {
                log.record(&self.site.id, url, started, &result);
            }
            match result {
                Ok(outcome) => {
                    drop(permit);
                    self.gate.success();
                    if let Outcome::Page(f) = &outcome {
                        self.stats.bytes.fetch_add(f.body.len() as u64, Ordering::Relaxed);
                    }
                    return Ok(outcome);
                }
                Err(e) if e.is_transient() => {
                    // Holds go on while this request still has its slot, so no
                    // other request can start in between.
                    self.gate.failure(self.backoff_base);
                    if let Some(wait) = e.retry_after() {
                        if wait > MAX_RETRY_AFTER {
                            return Err(FetchError::RetryAfterTooLong { url: url.clone(), wait });
                        }
                        // The server asked the whole host to wait, not just this URL.
                        self.gate.hold_off(wait);
                    }
                    if attempt >= retries {
                        return Err(if attempt == 0 { e } else { FetchError::GaveUp { last: Box::new(e), attempts: attempt + 1 } });
                    }
                    self.stats.retries.fetch_add(1, Ordering::Relaxed);
                    let wait = e.retry_after().unwrap_or_else(|| backoff(self.backoff_base, attempt));
                    tracing::debug!(%url, attempt, wait_ms = wait.as_millis() as u64, error = %e, "retrying");
                    // A failed request keeps its slot while it waits: a
                    // struggling server gets fewer requests, not more, and a
                    // request given up on by timeout has time to be torn down
                    // before the next one starts, so the server never sees
                    // more than `concurrency` at once.
                    tokio::time::sleep(wait).await;
                    drop(permit);
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn once(&self, client: &reqwest::Client, url: &Url, form: Option<String>, want: Want, cond: Option<&Validators>) -> Result<Outcome, FetchError> {
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
            let mime = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            let accepted = match want {
                Want::Any => true,
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
        let limit = p.max_body_bytes;
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

    async fn check_robots(&self, url: &Url) -> Result<(), FetchError> {
        let key = format!("{}://{}", url.scheme(), url.authority());
        let cell = {
            let mut map = self.robots.lock().expect("robots lock");
            map.entry(key.clone()).or_default().clone()
        };
        let rule = cell.get_or_init(|| self.load_robots(&key)).await;
        match rule {
            RobotsRule::AllowAll => Ok(()),
            RobotsRule::Rules(robot) if robot.allowed(url.as_str()) => Ok(()),
            RobotsRule::Rules(_) => Err(FetchError::Robots { url: url.clone() }),
            RobotsRule::Unavailable(why) => Err(FetchError::RobotsUnavailable { url: url.clone(), why: why.clone() }),
        }
    }

    /// RFC 9309: a 4xx robots.txt means no rules; an unreachable one or a
    /// 5xx means "assume everything is disallowed". Up to five redirects are
    /// followed on the forum's hosts; a longer chain, or one that leaves
    /// them, counts as unavailable, which RFC 9309 treats like a 4xx.
    async fn load_robots(&self, origin: &str) -> RobotsRule {
        let Ok(mut url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return RobotsRule::AllowAll;
        };
        let mut hops = 0;
        let fetched = loop {
            match self.get_with_retries(&self.client, &url, None, Want::Any, None).await {
                Ok(Outcome::Page(f)) => break Ok(f),
                Ok(Outcome::NotModified) => return RobotsRule::AllowAll,
                Ok(Outcome::Redirect(next)) if hops < 5 && self.site.host_allowed(&next) => {
                    hops += 1;
                    url = next;
                }
                Ok(Outcome::Redirect(_)) => return RobotsRule::AllowAll,
                Err(e) => break Err(e),
            }
        };
        match fetched {
            Ok(f) => match texting_robots::Robot::new(&self.site.politeness.user_agent, &f.body) {
                Ok(robot) => {
                    if let Some(secs) = robot.delay.filter(|d| d.is_finite() && *d > 0.0) {
                        self.gate.raise_delay(Duration::from_secs_f32(secs.min(600.0)));
                    }
                    RobotsRule::Rules(Arc::new(robot))
                }
                Err(_) => RobotsRule::AllowAll,
            },
            Err(e) => match e.status() {
                Some(s) if (400..500).contains(&s) && s != 429 => RobotsRule::AllowAll,
                _ => RobotsRule::Unavailable(e.to_string()),
            },
        }
    }
}

/// `LUNTAN_REQUEST_LOG=FILE`: every request this process makes is appended
/// to FILE as one JSON line, for auditing politeness against a server's own
/// log: `pid`, `site`, `url`, `start_us`/`end_us` (when the gate let it go
/// and when it was over, microseconds on this process's monotonic clock, so
/// spacing is exact), `unix_us` (its start on the wall clock, to match the
/// server's log), `outcome` (the status, or the error) and `bytes` (the
/// body received, after decompression; 0 for a redirect, a 304 or an error).
struct RequestLog {
    file: Mutex<std::fs::File>,
    epoch: Instant,
    /// `epoch` on the wall clock: wall times are derived from monotonic
    /// ones, so the two columns of a line never disagree.
    epoch_wall: std::time::SystemTime,
}

fn request_log() -> Option<&'static RequestLog> {
    static LOG: std::sync::OnceLock<Option<RequestLog>> = std::sync::OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var_os("LUNTAN_REQUEST_LOG")?;
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(file) => Some(RequestLog { file: Mutex::new(file), epoch: Instant::now(), epoch_wall: std::time::SystemTime::now() }),
            Err(e) => {
                tracing::warn!("LUNTAN_REQUEST_LOG {}: {e}; not logging requests", std::path::Path::new(&path).display());
                None
            }
        }
    })
    .as_ref()
}

impl RequestLog {
    fn record(&self, site: &str, url: &Url, start: Instant, outcome: &Result<Outcome, FetchError>) {
        use std::io::Write as _;
        let us = |t: Instant| t.saturating_duration_since(self.epoch).as_micros() as u64;
        let bytes = match outcome {
            Ok(Outcome::Page(f)) => f.body.len(),
            _ => 0,
        };
        let outcome = match outcome {
            Ok(Outcome::Page(f)) => f.status.to_string(),
            Ok(Outcome::Redirect(to)) => format!("redirect {to}"),
            Ok(Outcome::NotModified) => "304".to_owned(),
            Err(e) => e.to_string(),
        };
        let line = serde_json::json!({
            "pid": std::process::id(),
            "site": site,
            "url": url.as_str(),
            "start_us": us(start),
            "end_us": us(Instant::now()),
            "unix_us": (self.epoch_wall + start.saturating_duration_since(self.epoch)).duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64),
            "outcome": outcome,
            "bytes": bytes,
        });
        // One write per line: appends from several processes stay whole lines.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}

/// What one request got: a page, a redirect to follow, or (to a
/// conditional request) word that the page has not changed.
#[derive(Debug)]
pub enum Outcome {
    Page(Fetched),
    Redirect(Url),
    NotModified,
}

/// `base · 2^attempt`, ±50 % jitter so many threads do not retry in step.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
    exp.mul_f64(0.5 + fastrand::f64())
}

/// `Retry-After` as seconds or as an HTTP date.
fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        let later = std::time::SystemTime::now() + Duration::from_secs(30);
        let d = parse_retry_after(&httpdate::fmt_http_date(later)).unwrap();
        assert!(d <= Duration::from_secs(30) && d >= Duration::from_secs(28), "{d:?}");
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let base = Duration::from_millis(100);
        for attempt in 0..20 {
            let d = backoff(base, attempt);
            let nominal = base.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
            assert!(d >= nominal.mul_f64(0.5) && d <= nominal.mul_f64(1.5), "{attempt}: {d:?}");
        }
    }

    #[test]
    fn transient_and_permanent_are_told_apart() {
        let url = Url::parse("http://h/").unwrap();
        let st = |status| FetchError::Status { url: url.clone(), status, retry_after: None };
        assert!(st(503).is_transient());
        assert!(st(429).is_transient());
        assert!(!st(404).is_transient());
        assert!(!FetchError::TooLarge { url: url.clone(), limit: 1 }.is_transient());
    }

    #[tokio::test(start_paused = true)]
    async fn the_gate_spaces_request_starts_by_the_delay() {
        let p = Politeness { delay: Duration::from_millis(200), concurrency: 4, ..Politeness::default() };
        let gate = Arc::new(Gate::new(&p));
        let t0 = Instant::now();
        let mut starts = Vec::new();
        for _ in 0..4 {
            let (_permit, _) = gate.enter().await;
            starts.push(t0.elapsed());
        }
        for w in starts.windows(2) {
            assert!(w[1] - w[0] >= Duration::from_millis(200), "{starts:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_hold_reaches_a_request_already_waiting_for_its_turn() {
        let p = Politeness { delay: Duration::from_millis(100), concurrency: 2, ..Politeness::default() };
        let gate = Arc::new(Gate::new(&p));
        let t0 = Instant::now();
        let (first, _) = gate.enter().await;
        let g = gate.clone();
        // Its turn is at 100 ms; it is asleep until then when the hold comes.
        let second = tokio::spawn(async move {
            let (_permit, _) = g.enter().await;
            t0.elapsed()
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        gate.hold_off(Duration::from_secs(1));
        drop(first);
        let started = second.await.unwrap();
        assert!(started >= Duration::from_millis(1010), "started at {started:?}, inside the hold");
    }

    #[tokio::test(start_paused = true)]
    async fn consecutive_failures_pause_the_whole_site_longer_each_time_until_a_success() {
        let p = Politeness { delay: Duration::ZERO, concurrency: 4, ..Politeness::default() };
        let gate = Gate::new(&p);
        let base = Duration::from_millis(100);
        let wait_for_turn = || async {
            let t = Instant::now();
            let (_permit, _) = gate.enter().await;
            t.elapsed()
        };
        gate.failure(base);
        gate.failure(base);
        assert_eq!(wait_for_turn().await, Duration::ZERO, "two failures in a row are not yet a pattern");
        let mut pauses = Vec::new();
        for _ in 0..4 {
            gate.failure(base);
            pauses.push(wait_for_turn().await);
        }
        assert_eq!(pauses, [100, 200, 400, 800].map(Duration::from_millis), "each further failure doubles the pause");
        gate.success();
        gate.failure(base);
        assert_eq!(wait_for_turn().await, Duration::ZERO, "a success resets the count");
    }

    /// A 20-thread Discuz fixture forum with `hostility`, and a site file for
    /// it with `politeness` (the attributes of `<politeness>`).
    fn dz_fixture(hostility: luntan_fixture::Hostility, politeness: &str) -> (luntan_fixture::BlockingFixture, Site) {
        use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};
        let cfg = FixtureConfig { threads: 20, boards: 1, forums: vec![ForumKind::Discuz], hostility, ..FixtureConfig::default() };
        let server = FixtureServer::start_blocking(cfg).unwrap();
        let text = format!(
            r#"<site id="dz"><home>{}</home><politeness {politeness} timeout-ms="5000"/>
              <links><board>fid={{board}}</board><thread>tid={{thread}}</thread></links><thread body="td.t_f"/></site>"#,
            server.url("/dz/forum.php")
        );
        (server, Site::parse(&text, std::path::Path::new("dz.xml")).unwrap())
    }

    /// A fetcher for a fixture forum with every thread URL answering 429 once.
    fn throttled() -> (luntan_fixture::BlockingFixture, Fetcher, Vec<Url>) {
        use luntan_fixture::{Hostility, TransientFault};
        let hostility = Hostility {
            transient_percent: 100,
            max_failures: 1,
            faults: vec![TransientFault::TooManyRequests],
            retry_after: Duration::from_secs(1),
            ..Hostility::default()
        };
        let (server, site) = dz_fixture(hostility, r#"delay-ms="100" concurrency="2" retries="3" robots="false""#);
        let urls = server.truth().forums[0].threads.iter().filter(|t| !t.deleted).take(3).map(|t| Url::parse(&server.url(&t.url_path)).unwrap()).collect();
        let fetcher = Fetcher::new(Arc::new(site)).unwrap().with_backoff_base(Duration::from_millis(20));
        (server, fetcher, urls)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn retry_after_holds_every_request_to_the_host() {
        let (server, fetcher, urls) = throttled();
        let fetcher = Arc::new(fetcher);
        let mut tasks = tokio::task::JoinSet::new();
        for u in urls.clone() {
            let f = fetcher.clone();
            tasks.spawn(async move { f.get_html(&u).await.map(|r| r.status) });
        }
        while let Some(r) = tasks.join_next().await {
            assert_eq!(r.unwrap().unwrap(), 200);
        }
        let log = server.requests();
        assert_eq!(log.len(), 2 * urls.len(), "each URL: a 429, then the page: {log:#?}");
        for throttled in log.iter().filter(|r| r.status == 429) {
            // Nothing was in flight beside it (the delay keeps the other slot's
            // request asleep), so no arrival at all may fall in its window.
            let early = luntan_fixture::politeness::arrivals_during_retry_after(&log, throttled, Duration::from_secs(1), Duration::ZERO);
            assert!(early.is_empty(), "requests inside the Retry-After of #{}: {early:#?}", throttled.seq);
        }
    }

    /// A fixture forum whose threads redirect in a loop or off the host,
    /// with a 60 ms delay between requests.
    fn redirecting(other: &str) -> (luntan_fixture::BlockingFixture, Fetcher, luntan_fixture::Truth) {
        use luntan_fixture::{Hostility, PermanentFault};
        let hostility =
            Hostility { permanent: vec![PermanentFault::RedirectLoop, PermanentFault::OffHostRedirect], other_host: other.to_owned(), ..Hostility::default() };
        let (server, site) = dz_fixture(hostility, r#"delay-ms="60" concurrency="2" retries="1" robots="true""#);
        let truth = server.truth();
        (server, Fetcher::new(Arc::new(site)).unwrap(), truth)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_redirect_hop_is_a_polite_request_and_loops_stop_at_once() {
        let other = luntan_fixture::FixtureServer::start_blocking(luntan_fixture::FixtureConfig { threads: 1, ..Default::default() }).unwrap();
        let (server, fetcher, truth) = redirecting(&other.base_url());
        let thread = |fault: &str| {
            let t = truth.forums[0].threads.iter().find(|t| t.unservable.as_deref() == Some(fault)).unwrap();
            Url::parse(&server.url(&t.url_path)).unwrap()
        };
        let e = fetcher.get_html(&thread("redirect-loop")).await.unwrap_err();
        assert!(e.to_string().contains("redirect loop"), "{e}");
        let e = fetcher.get_html(&thread("off-host-redirect")).await.unwrap_err();
        assert!(e.to_string().contains("leaves the forum"), "{e}");
        assert!(!e.is_transient());
        let ok = truth.forums[0].threads.iter().find(|t| t.servable()).unwrap();
        assert_eq!(fetcher.get_html(&Url::parse(&server.url(&ok.url_path)).unwrap()).await.unwrap().status, 200);

        let log = server.requests();
        let paths: Vec<&str> = log.iter().map(|r| r.path_and_query.as_str()).collect();
        // robots.txt, the loop's two hops (seen twice is enough), the off-host hop, the page.
        assert_eq!(log.len(), 5, "{paths:#?}");
        // A hop that skipped the gate would arrive within a millisecond of
        // the one before; half the delay leaves room for a busy machine's
        // scheduling (tests/it/hostile.rs checks the spacing exactly).
        let (gap, a, b) = luntan_fixture::politeness::min_gap(&log).unwrap();
        assert!(gap >= Duration::from_millis(30), "#{} and #{} {gap:?} apart: {paths:#?}", a.seq, b.seq);
        assert!(other.requests().is_empty(), "the other host was contacted: {:?}", other.requests());
    }
}
