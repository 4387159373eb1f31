//! Polite HTTP for one forum: a per-site gate (concurrency and delay),
//! robots.txt, retries with backoff and jitter, Retry-After, a slow-down
//! after consecutive failures, and caps on body size.
//!
//! One [`Fetcher`] per site. Its gate is shared by every request to that
//! site (robots.txt included), so the site file's `concurrency` and
//! `delay-ms` bound what the forum sees whatever the stage does. Every
//! request luntan makes goes through it: the stages' page fetches and, through
//! a [`Session`] (one cookie jar per forum account), keyword monitoring's
//! logins and searches, and the WebSockets a browser page opens (each
//! frame it sends a request, see [`Fetcher::open_socket`]).
//!
//! One job per file: `gate` spaces and bounds requests to the site,
//! `shared` holds that for every worker of a shared crawl, `robots`
//! reads robots.txt, `retry` tries transient failures again, `request`
//! makes one request, `session` keeps an account's cookies, `socket` opens
//! and feeds a browser page's WebSocket and `log` writes
//! `LUNTAN_REQUEST_LOG`. This file holds [`Fetcher`] and what it
//! hands back, and follows redirects.

mod error;
mod gate;
mod log;
mod request;
pub(crate) use request::mime_type;
mod retry;
mod robots;
mod session;
mod shared;
mod socket;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::site::{Politeness, Site};
use luntan_core::store::Validators;
use tokio::sync::OnceCell;
use url::Url;

pub use error::FetchError;
use gate::Gate;
use robots::RobotsRule;
pub use session::Session;
pub use socket::{http_twin, OpenSocket, SocketFrames, SocketSender};
/// A WebSocket frame (browser mode's sockets, see [`Fetcher::open_socket`]).
pub use tokio_tungstenite::tungstenite::Message;

/// Most redirects followed for one page; a longer chain is a trap.
pub const MAX_REDIRECTS: usize = 10;

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

/// Counters a stage reports at the end.
#[derive(Debug, Default)]
pub struct FetchStats {
    pub requests: AtomicU64,
    pub retries: AtomicU64,
    pub bytes: AtomicU64,
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

    /// [`Fetcher::get_resource_step`], given up when `until` completes
    /// first: `None` then, the request dropped (its connection closed, its
    /// place in the gate freed). For a long-poll the browser's page holds
    /// open, which luntan lets go once it is sure it is one.
    pub async fn get_resource_step_until(
        &self,
        url: &Url,
        until: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<Option<Outcome>, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move {
            let step = async {
                core.check_target(&target)?;
                if core.site.politeness.robots {
                    core.check_robots(&target).await?;
                }
                core.get_with_retries(&core.client, &target, None, Want::Any, None).await
            };
            tokio::select! {
                got = step => got.map(Some),
                () = until => Ok(None),
            }
        })
        .await
    }

    /// GETs a picture or attachment (`luntan-media`) exactly as
    /// [`Fetcher::get_html`] gets a page (hosts, robots.txt, gate, retries,
    /// redirects), of any type, its body capped at `max_bytes` instead of
    /// the site's page cap: media are larger than pages, and an archive may
    /// want smaller ones.
    pub async fn get_media(&self, url: &Url, max_bytes: u64) -> Result<Fetched, FetchError> {
        let (core, target) = (self.core.clone(), url.clone());
        on_io(url, async move { core.fetch_as(&core.client, &target, None, Want::Media(max_bytes)).await }).await
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
}

/// What a response must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Html,
    Json,
    /// robots.txt: whatever it is labelled.
    Any,
    /// A media file: whatever it is labelled, at most this many bytes.
    Media(u64),
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
}

/// What one request got: a page, a redirect to follow, or (to a
/// conditional request) word that the page has not changed.
#[derive(Debug)]
pub enum Outcome {
    Page(Fetched),
    Redirect(Url),
    NotModified,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-thread Discuz fixture forum with `hostility`, and a site file for
    /// it with `politeness` (the attributes of `<politeness>`).
    pub(super) fn dz_fixture(hostility: luntan_fixture::Hostility, politeness: &str) -> (luntan_fixture::BlockingFixture, Site) {
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
