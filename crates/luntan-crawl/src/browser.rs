//! Browser mode (S4, event-driven): pages drawn by JavaScript are loaded in
//! a real headless Chromium, driven by the site file's actions, and read as
//! the DOM states they reach.
//!
//! - **One browser per process**, started on first use and closed by
//!   [`shutdown`]; found dead (killed, crashed), it is started again and the
//!   page in hand is rendered again from the start, so nothing is lost and,
//!   since a thread is saved only once whole, nothing is saved twice. Tabs
//!   (each in a window of its own) are kept between pages, at most the
//!   site's concurrency of them; a page done with stays in its tab, its
//!   requests refused, until the next page replaces it.
//! - **Every request the page makes goes through the site's [`Fetcher`]**:
//!   Chromium's requests are intercepted (CDP `Fetch` domain) and answered
//!   with what the fetcher got, so the document, its scripts and its XHRs
//!   all pass the same gate (concurrency, delay), robots.txt, allowed hosts,
//!   retries and size caps as any page luntan reads. Images, fonts and media
//!   are refused unread; so is anything off the forum's hosts. The page is
//!   answered with the server's status and headers (its `Date` included:
//!   scripts count "3小时前" from it), see `response_headers`.
//! - **WebSockets are carried by luntan** (see `socket`). Chromium fails at
//!   once (close code 1006), with no paused request and the server never
//!   asked, every WebSocket opened by a document that was answered with
//!   `Fetch.fulfillRequest`, as every page here is. Measured with a bare
//!   CDP client: with Fetch on and the document continued to the network,
//!   the socket connects; fulfilled with the same bytes, it fails, Network
//!   domain on or off, opened at once or 500 ms later. So the hook replaces
//!   the page's `WebSocket` with a stand-in that calls luntan through a
//!   binding, and luntan opens the socket through the fetcher: the
//!   handshake and each frame the page sends are requests held to the gate,
//!   frames the server sends are handed to the page, and `settle` counts a
//!   frame sent as in flight until answered (within a bound).
//! - **Long-polls** (an XHR the server holds open until it has news,
//!   socket.io's first transport) are let go once recognised, see
//!   [`Traffic::let_go_long_polls`].
//! - **Scripts, stylesheets and config JSON are fetched once** per renderer
//!   (one crawl stage) and later pages answered from [`AssetCache`]; what is
//!   cacheable is `cacheable`'s to say.
//! - **States**: after the page settles (see `Renderer::settle`: nothing
//!   in flight, nothing its scripts asked for unhandled, and either nothing
//!   due within `settle-ms` by the page's timers and frames or, where the
//!   page's next move cannot be foreseen, `settle-ms` of quiet) and after
//!   each event, the DOM is serialised and compared
//!   with the states kept so far by S4's test ([`crate::dupstate`]). A
//!   duplicate is dropped and no further event is fired from it; the others
//!   are the page's states, saved as its pages.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::fetch::{EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry};
use chromiumoxide::cdp::browser_protocol::log::DisableParams as LogDisableParams;
use chromiumoxide::cdp::browser_protocol::network::DisableParams as NetworkDisableParams;
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::cdp::browser_protocol::performance::DisableParams as PerformanceDisableParams;
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::cdp::js_protocol::runtime::{AddBindingParams, EventBindingCalled};
use chromiumoxide::Page;
use futures_util::StreamExt as _;
use luntan_core::site::{Action, BrowserRules};
use tokio::time::Instant;
use url::Url;

use crate::dupstate::{compare_states, DomNode};
use crate::fetch::{FetchError, Fetcher, Outcome};

mod socket;

/// The Debian package that provides the browser.
pub const CHROMIUM_PACKAGE: &str = "chromium";

/// Why a page could not be rendered. Every variant names the URL (or the
/// browser executable).
#[derive(Debug, Clone, thiserror::Error)]
pub enum BrowserError {
    #[error("browser mode needs Chromium: {why} (install Debian's `{CHROMIUM_PACKAGE}` package: apt-get install {CHROMIUM_PACKAGE}, or set LUNTAN_CHROMIUM to its path)")]
    Missing { why: String },
    #[error("{path}: Chromium did not start: {why}")]
    Launch { path: String, why: String },
    /// The page itself (not one of its XHRs) could not be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("{url}: the page never settled within {}s ({inflight} requests in flight)", .after.as_secs_f32())]
    NeverSettled { url: Url, after: Duration, inflight: usize },
    #[error("{url}: nothing matched {selector:?} within {}s", .after.as_secs_f32())]
    WaitTimedOut { url: Url, selector: String, after: Duration },
    #[error("{url}: the browser failed: {why}")]
    Browser { url: Url, why: String },
}

/// Declares the browser's counters once: [`RenderStats`], the live
/// counters the renderer adds to, and [`BrowserReport`], a run's reading of
/// them for the stage's summary and status; a counter added here is in
/// both, and in `--json`.
macro_rules! browser_counters {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// What the browser does for one site, as it does it.
        #[derive(Debug, Default)]
        pub struct RenderStats {
            $($(#[$doc])* pub $name: AtomicU64,)*
        }

        /// What the browser did for a site in one run.
        #[derive(Debug, Default, Clone, serde::Serialize)]
        pub struct BrowserReport {
            $($(#[$doc])* pub $name: u64,)*
        }

        impl BrowserReport {
            pub fn of(stats: &RenderStats) -> BrowserReport {
                BrowserReport { $($name: stats.$name.load(Ordering::Relaxed),)* }
            }
        }
    };
}

browser_counters! {
    /// DOM states kept (saved) and dropped as duplicates (S4).
    states_kept,
    states_dropped,
    /// Requests the browser made that luntan answered through the fetcher:
    /// documents and what their scripts ask for (XHR, fetch).
    requests,
    /// Scripts and stylesheets fetched (through the fetcher, like any
    /// request), each once per run: counted apart, as the page's furniture,
    /// not its content.
    assets,
    /// Requests answered from the renderer's cache of assets, the forum not
    /// asked again (see [`AssetCache`]).
    cached,
    /// Requests refused: off the forum's hosts, disallowed by robots.txt,
    /// or not a GET.
    refused,
    /// Images, fonts, media, favicons and the like, refused unread.
    blocked,
    /// Browsers started again after one was found dead.
    restarts,
    /// Long-polls let go: requests held open by the server that luntan
    /// stopped waiting for (see [`Traffic::let_go_long_polls`]).
    long_polls,
    /// WebSockets opened for pages (each handshake is also one of
    /// `requests`), the frames the pages sent over them (each a request to
    /// the forum, spaced by its delay) and the frames they received.
    sockets,
    frames_sent,
    frames_received,
}

/// A page rendered: its kept states, first to last, as HTML.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub url: Url,
    pub states: Vec<String>,
    pub dropped: u32,
    /// The forum's clock (`Date` of the document's response), against which
    /// times such as "3分钟前" are read.
    pub date: Option<String>,
    /// What the page's scripts asked for and got as JSON (XHRs and
    /// fetches answered 200, and scripts that are JSONP), read by
    /// [`luntan_core::site::read_json`], in the order answered: where a script found
    /// what it drew, for the learner to name ([`JSON_KEPT`] bytes at most).
    /// Empty unless the renderer keeps it ([`Renderer::keeping_traffic`]).
    pub json: Vec<(Url, serde_json::Value)>,
    /// What the page asked of hosts not the forum's, refused unread (a
    /// comment server elsewhere, a script from a CDN), in order; kept as
    /// `json` is.
    pub off_host: Vec<Url>,
}

/// Bytes of JSON answers a rendered page keeps at most: a comment API's
/// pages, not a feed's history.
pub const JSON_KEPT: usize = 4 << 20;

/// Which of the site file's action lists applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// The home page: loaded and settled, no actions.
    Home,
    List,
    Thread,
}

/// Renders one site's pages in the process's browser: tabs bounded by the
/// site's concurrency, every request through the site's fetcher.
pub struct Renderer {
    fetcher: Arc<Fetcher>,
    rules: BrowserRules,
    tabs: tokio::sync::Semaphore,
    /// Tabs between pages, their last page parked: a new tab costs Chromium a
    /// renderer process, more CPU than the page drawn in it.
    idle: Mutex<Vec<Tab>>,
    /// `browser_hook.js` with the site's settle-ms.
    hook: String,
    /// Scripts, stylesheets and cacheable JSON already fetched, for the
    /// later pages that load them too.
    assets: Arc<AssetCache>,
    /// Whether pages keep what their scripts fetched ([`Rendered::json`]):
    /// the learner reads it; a crawl would only copy every answer.
    keeps_traffic: bool,
    pub stats: Arc<RenderStats>,
}

impl Renderer {
    /// A renderer for the fetcher's site; `None` when its site file has no `<browser>`.
    pub fn for_site(fetcher: Arc<Fetcher>) -> Option<Renderer> {
        let rules = fetcher.site().browser.clone()?;
        let tabs = tokio::sync::Semaphore::new(fetcher.site().politeness.concurrency);
        let hook = HOOK.replace("HORIZON_MS", &rules.settle.as_millis().to_string());
        Some(Renderer { fetcher, rules, tabs, idle: Mutex::default(), hook, assets: Arc::default(), keeps_traffic: false, stats: Arc::default() })
    }

    /// The renderer, its pages keeping the JSON their scripts fetched and
    /// what they asked of other hosts ([`Rendered::json`], [`Rendered::off_host`]).
    pub fn keeping_traffic(mut self) -> Renderer {
        self.keeps_traffic = true;
        self
    }

    /// The site whose pages this renderer draws.
    pub fn site(&self) -> &luntan_core::Site {
        self.fetcher.site()
    }

    /// Loads `url`, runs the page kind's actions, returns the states kept.
    /// A browser found dead is started again and the page rendered again.
    pub async fn render(&self, url: &Url, kind: PageKind) -> Result<Rendered, BrowserError> {
        let _tab = self.tabs.acquire().await.expect("the semaphore is never closed");
        let mut tries = 0;
        loop {
            let (live, replaced) = shared().await?;
            if replaced {
                self.stats.restarts.fetch_add(1, Ordering::Relaxed);
            }
            let outcome = self.render_in(&live, url, kind).await;
            if outcome.is_err() {
                // The handler notices a closed connection a moment after the
                // page's commands fail.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            match outcome {
                Err(BrowserError::Browser { .. } | BrowserError::NeverSettled { .. } | BrowserError::WaitTimedOut { .. }) if !live.alive() && tries < 2 => {
                    tries += 1;
                    tracing::warn!("{url}: the browser died; starting a new one and loading the page again");
                }
                other => return other,
            }
        }
    }

    async fn render_in(&self, live: &Arc<Live>, url: &Url, kind: PageKind) -> Result<Rendered, BrowserError> {
        let tab = match self.idle_tab(live) {
            Some(tab) => tab,
            None => self.open_tab(live, url).await?,
        };
        let traffic = Arc::new(Traffic::new(live.alive.clone(), self.keeps_traffic));
        *crate::db::lock(&tab.traffic) = Some(traffic.clone());
        let outcome = self.drive(&tab.page, &traffic, url, kind).await;
        traffic.sockets.close_all();
        // The page stays in its tab until the next page replaces it (a
        // navigation to `about:blank` in between cost as much as drawing a
        // page), parked: whatever it still asks for is refused here, so it
        // reaches no server. A tab whose page failed is closed.
        *crate::db::lock(&tab.traffic) = None;
        if outcome.is_ok() {
            crate::db::lock(&self.idle).push(tab);
        } else {
            tab.close().await;
        }
        let (states, dropped) = outcome?;
        self.stats.states_kept.fetch_add(states.len() as u64, Ordering::Relaxed);
        self.stats.states_dropped.fetch_add(u64::from(dropped), Ordering::Relaxed);
        let date = crate::db::lock(&traffic.date).clone();
        let (json, _) = std::mem::take(&mut *crate::db::lock(&traffic.json));
        let off_host = std::mem::take(&mut *crate::db::lock(&traffic.off_host));
        Ok(Rendered { url: url.clone(), states, dropped, date, json, off_host })
    }

    /// A tab left open by an earlier page of this browser; those of a dead
    /// one are dropped.
    fn idle_tab(&self, live: &Arc<Live>) -> Option<Tab> {
        let live = Arc::downgrade(live);
        let mut idle = crate::db::lock(&self.idle);
        idle.retain(|t| t.browser.ptr_eq(&live));
        idle.pop()
    }

    async fn open_tab(&self, live: &Arc<Live>, url: &Url) -> Result<Tab, BrowserError> {
        // Each tab in a window of its own: a window shows only its front
        // tab, and Chromium draws no frame for the others, so their
        // animation frames (which `settle` waits for) would never come.
        let target =
            CreateTargetParams::builder().url("about:blank").new_window(true).build().map_err(|why| BrowserError::Browser { url: url.clone(), why })?;
        let page = cdp(url, "opening a tab", live.browser.new_page(target)).await?;
        cdp(url, "installing the page hook", page.evaluate_on_new_document(self.hook.as_str())).await?;
        // chromiumoxide turns on the Network, Performance and Log domains
        // for its own bookkeeping; luntan reads requests through Fetch alone,
        // and each of those would cost Chromium's browser process a message
        // per request, metric or line.
        cdp(url, "quieting the tab", page.execute(NetworkDisableParams::default())).await?;
        cdp(url, "quieting the tab", page.execute(PerformanceDisableParams::default())).await?;
        cdp(url, "quieting the tab", page.execute(LogDisableParams::default())).await?;
        let traffic = Arc::new(Mutex::new(None));
        let events = cdp(url, "listening to requests", page.event_listener::<EventRequestPaused>()).await?;
        let answerer = Answerer { fetcher: self.fetcher.clone(), assets: self.assets.clone(), stats: self.stats.clone() };
        let interceptor = Fetcher::io_runtime().spawn(intercept(events, page.clone(), answerer, traffic.clone()));
        // The hook's WebSocket stand-in calls luntan through this binding,
        // in every document the tab loads (see `socket`).
        let calls = cdp(url, "listening to sockets", page.event_listener::<EventBindingCalled>()).await?;
        cdp(url, "adding the socket binding", page.execute(AddBindingParams::new(socket::BINDING))).await?;
        let host = socket::SocketHost { fetcher: self.fetcher.clone(), stats: self.stats.clone(), answer_within: self.long_poll_after() };
        let carrier = Fetcher::io_runtime().spawn(socket::carry(calls, page.clone(), host, traffic.clone()));
        Ok(Tab { page, traffic, interceptor, carrier, browser: Arc::downgrade(live) })
    }

    /// Load, settle, then each action; returns the kept states' HTML and the
    /// count dropped.
    async fn drive(&self, page: &Page, traffic: &Traffic, url: &Url, kind: PageKind) -> Result<(Vec<String>, u32), BrowserError> {
        let rules = &self.rules;
        let fail = |e: chromiumoxide::error::CdpError| BrowserError::Browser { url: url.clone(), why: e.to_string() };
        // A long-poll the page starts before its load ends would hold the
        // load up as it would the settling.
        let long_poll = self.long_poll_after();
        let loaded = tokio::time::timeout(rules.timeout, async {
            let goto = page.goto(url.as_str());
            tokio::pin!(goto);
            loop {
                tokio::select! {
                    done = &mut goto => break done,
                    () = tokio::time::sleep(Duration::from_millis(100)) => traffic.let_go_long_polls(long_poll, url),
                }
            }
        })
        .await;
        // The page's own request failing says more than Chromium's error page.
        if let Some(e) = crate::db::lock(&traffic.document_error).take() {
            return Err(BrowserError::Fetch(e));
        }
        match loaded {
            Err(_) => return Err(BrowserError::NeverSettled { url: url.clone(), after: rules.timeout, inflight: traffic.in_flight() }),
            Ok(Err(e)) => return Err(fail(e)),
            Ok(Ok(_)) => {}
        }
        let mut states = States::default();
        self.settle(page, traffic, url).await?;
        states.offer(read(page, url, None).await?.1);
        let actions = match kind {
            PageKind::Home => &[][..],
            PageKind::List => &rules.list,
            PageKind::Thread => &rules.thread,
        };
        // Each event is two DevTools round trips: the count before and the
        // event in one script, the count after and the DOM in another.
        for action in actions {
            match action {
                Action::Wait { selector } => self.wait_for(page, url, selector).await?,
                Action::Click { selector, max, items } => {
                    let count = count_of(items.as_deref());
                    let click = format!(
                        "(function(){{var n={count};var e=document.querySelector({});if(!e)return [n,false];e.click();return [n,true];}})()",
                        js_string(selector)
                    );
                    for _ in 0..*max {
                        let (before, clicked) = eval::<(u64, bool)>(page, url, &click).await?;
                        if !clicked {
                            break;
                        }
                        self.settle(page, traffic, url).await?;
                        let (after, html) = read(page, url, items.as_deref()).await?;
                        if items.is_some() && after > before {
                            states.keep(html);
                        } else if !states.offer(html) {
                            // S4: no further event is fired from a duplicate state.
                            return Ok(states.finish());
                        }
                    }
                }
                Action::Scroll { items, max } => {
                    // Read, not only counted: what the page drew since the
                    // last state was read (more loaded once in view) would
                    // otherwise be counted as there and never kept.
                    let (mut before, html) = read(page, url, Some(items)).await?;
                    if states.last() != Some(html.as_str()) {
                        states.offer(html);
                    }
                    for _ in 0..*max {
                        // A page shorter than the window does not move when
                        // scrolled, and a page that loads more on `scroll`
                        // would never hear of it: the event is sent too.
                        cdp(url, "scrolling", page.evaluate("window.scrollTo(0, document.body.scrollHeight); window.dispatchEvent(new Event('scroll'))"))
                            .await?;
                        self.settle(page, traffic, url).await?;
                        let (after, html) = read(page, url, Some(items)).await?;
                        if after <= before {
                            break;
                        }
                        before = after;
                        // More items: new content, kept (see `Action::Click`).
                        states.keep(html);
                    }
                }
            }
        }
        Ok(states.finish())
    }

    /// Waits until the page is still; a page still busy after the timeout
    /// fails. Still means nothing in flight and the page, asked once what it
    /// had queued has run in it (a timer task, and a frame or its soonest
    /// timer when one is awaited), has no request of its scripts unhandled;
    /// and then either
    /// - the hook foresees nothing within settle-ms: no timer or frame due,
    ///   no short interval, worker, socket, animation, frame or element
    ///   loading, and no request and no DOM change while it was asked; or
    /// - nothing happened for `settle` (the site's settle-ms), for pages
    ///   whose next move the hook cannot foresee.
    ///
    /// The first is most waits: a page's scripts act on events, answers and
    /// timers, and the hook sees each coming. What a wait of settle-ms would
    /// see come, the first rule waits for too, without the rest of the
    /// settle-ms (`bench/` s4 measures the difference).
    async fn settle(&self, page: &Page, traffic: &Traffic, url: &Url) -> Result<(), BrowserError> {
        let started = Instant::now();
        // Cleared by a probe that finds the page's next move unforeseeable.
        let mut foreseen = true;
        let long_poll = self.long_poll_after();
        loop {
            traffic.let_go_long_polls(long_poll, url);
            // Made before the page is looked at, so that a request starting
            // or ending after the look still wakes this wait.
            let moved = traffic.moved.notified();
            let last = *crate::db::lock(&traffic.last);
            // Quiet is counted from the event too: a click's handler may
            // start its request a moment after the click.
            let quiet = last.max(started).elapsed();
            let inflight = traffic.in_flight();
            let whole = quiet >= self.rules.settle;
            if inflight == 0 && (whole || foreseen) {
                // A renderer starved of CPU looks quiet while its next
                // request still waits in its task queue (on a loaded 2-core
                // CI machine a page that polls for ever once looked
                // settled), and a request it starts reaches the interceptor
                // by another channel than a script's answer, sometimes
                // later. So the page is asked, once what it had queued has
                // run in it, how many requests its scripts started and have
                // not yet handled the answer to (the hook counts them as
                // they are made), and what else it has due. A page without
                // the hook (or one that broke it) reads as unforeseeable and
                // waits the whole settle-ms. The asking itself waits for the
                // frame, the answer or the soonest timer the page awaits, so
                // it is asked again at once when something was still due.
                let probe = eval::<Vec<i64>>(page, url, "window.__luntan ? window.__luntan.probe() : []").await?;
                let [pending, due, foreseeable, unchanged] = <[i64; 4]>::try_from(probe.as_slice()).unwrap_or([0; 4]);
                foreseen &= foreseeable == 1;
                let untouched = *crate::db::lock(&traffic.last) == last && traffic.in_flight() == 0;
                if pending <= 0 && untouched && (whole || (foreseen && due <= 0 && unchanged == 1)) {
                    return Ok(());
                }
            }
            if !traffic.alive.load(Ordering::Relaxed) {
                return Err(BrowserError::Browser { url: url.clone(), why: "the browser went away".into() });
            }
            if started.elapsed() > self.rules.timeout {
                return Err(BrowserError::NeverSettled { url: url.clone(), after: self.rules.timeout, inflight });
            }
            if inflight > 0 || !foreseen {
                // Woken by the request's end; the bound keeps the liveness
                // and timeout checks above going.
                let _ = tokio::time::timeout(SETTLE_TICK, moved).await;
            }
        }
    }

    /// How long a request must be held open to be taken for a long-poll.
    fn long_poll_after(&self) -> Duration {
        self.rules.settle.max(LONG_POLL_AFTER).min(self.rules.timeout / 2)
    }

    async fn wait_for(&self, page: &Page, url: &Url, selector: &str) -> Result<(), BrowserError> {
        let started = Instant::now();
        let js = format!("document.querySelector({}) !== null", js_string(selector));
        while !eval::<bool>(page, url, &js).await? {
            if started.elapsed() > self.rules.timeout {
                return Err(BrowserError::WaitTimedOut { url: url.clone(), selector: selector.to_owned(), after: self.rules.timeout });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// The states of one page: each offered state is kept unless it is a
/// duplicate (S4) of one kept before.
#[derive(Default)]
struct States {
    kept: Vec<(DomNode, String)>,
    dropped: u32,
    /// The last state offered, when it was dropped (it came after the last
    /// kept).
    last: Option<String>,
}

impl States {
    /// Keeps `html` unless it duplicates a kept state; says whether it was kept.
    fn offer(&mut self, html: String) -> bool {
        let tree = DomNode::from_html(&html);
        if self.kept.iter().any(|(k, _)| compare_states(k, &tree).duplicate) {
            self.dropped += 1;
            self.last = Some(html);
            return false;
        }
        self.kept.push((tree, html));
        self.last = None;
        true
    }

    /// The last state offered or kept.
    fn last(&self) -> Option<&str> {
        self.last.as_deref().or_else(|| self.kept.last().map(|(_, h)| h.as_str()))
    }

    /// Keeps `html` untested: a state whose list grew holds items no kept
    /// state has. S4's test measures change over the whole tree, so a page
    /// of 3 comments appended to 20 would pass for a duplicate (under 15 %
    /// of nodes) and be lost.
    fn keep(&mut self, html: String) {
        self.kept.push((DomNode::from_html(&html), html));
        self.last = None;
    }

    fn finish(self) -> (Vec<String>, u32) {
        (self.kept.into_iter().map(|(_, h)| h).collect(), self.dropped)
    }
}

/// Run in every document before its own scripts: what the page has yet to
/// do, for [`Renderer::settle`] (`HORIZON_MS` becomes the site's settle-ms).
const HOOK: &str = include_str!("browser_hook.js");

/// How long a request the server holds open must have been waiting before
/// luntan takes it for a long-poll and lets it go (see
/// [`Traffic::let_go_long_polls`]); at least settle-ms, at most half the
/// page's timeout. Long-polls are held for tens of seconds (socket.io's 25),
/// an API answer rarely takes seconds.
const LONG_POLL_AFTER: Duration = Duration::from_secs(2);

/// Longest wait between two looks of [`Renderer::settle`] while a request
/// is in flight or settle-ms of quiet is waited for (a request's end wakes
/// it sooner).
const SETTLE_TICK: Duration = Duration::from_millis(10);

/// A tab and the interceptor that answers its requests.
struct Tab {
    page: Page,
    /// The traffic of the page now drawn in the tab, for its interceptor;
    /// `None` between pages, when the page drawn is parked: luntan is done
    /// with it, and every request it still makes is refused unsent.
    traffic: Arc<Mutex<Option<Arc<Traffic>>>>,
    interceptor: tokio::task::JoinHandle<()>,
    /// Serves the page's WebSockets (see `socket`).
    carrier: tokio::task::JoinHandle<()>,
    browser: std::sync::Weak<Live>,
}

impl Tab {
    /// Closed before its interceptor stops: a request the page makes on the
    /// way out (Chromium asks for /favicon.ico once a page stops loading) is
    /// still answered here, and refused, instead of paused with nobody to
    /// answer it (under load one such favicon reached the forum unasked).
    async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.page.close()).await;
        self.interceptor.abort();
        self.carrier.abort();
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let idle = std::mem::take(&mut *crate::db::lock(&self.idle));
        if !idle.is_empty() {
            Fetcher::io_runtime().spawn(async move {
                for tab in idle {
                    tab.close().await;
                }
            });
        }
    }
}

/// Longest wait for one DevTools command: a browser that died mid-command
/// may never answer it.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// One DevTools command, bounded by [`COMMAND_TIMEOUT`].
async fn cdp<T>(url: &Url, what: &str, command: impl std::future::Future<Output = Result<T, chromiumoxide::error::CdpError>>) -> Result<T, BrowserError> {
    match tokio::time::timeout(COMMAND_TIMEOUT, command).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(BrowserError::Browser { url: url.clone(), why: format!("{what}: {e}") }),
        Err(_) => Err(BrowserError::Browser { url: url.clone(), why: format!("{what}: no answer in {}s", COMMAND_TIMEOUT.as_secs()) }),
    }
}

/// The count of the elements `items` matches (0 without) and the DOM as
/// HTML, doctype first, in one script.
async fn read(page: &Page, url: &Url, items: Option<&str>) -> Result<(u64, String), BrowserError> {
    let count = count_of(items);
    let js = format!(
        "(function(){{var h='';if(document.doctype)h=new XMLSerializer().serializeToString(document.doctype);\
         if(document.documentElement)h+=document.documentElement.outerHTML;return [{count},h];}})()"
    );
    let r = cdp(url, "reading the DOM", page.evaluate(js)).await?;
    r.into_value().map_err(|e| BrowserError::Browser { url: url.clone(), why: format!("reading the DOM: {e}") })
}

/// A script's value; what is not a `T` (`undefined`, an error) is `T`'s default.
async fn eval<T: serde::de::DeserializeOwned + Default>(page: &Page, url: &Url, js: &str) -> Result<T, BrowserError> {
    let v = cdp(url, "running a script", page.evaluate(js)).await?;
    Ok(v.into_value::<T>().unwrap_or_default())
}

/// A script counting the elements `items` matches; 0 without.
fn count_of(items: Option<&str>) -> String {
    match items {
        Some(items) => format!("document.querySelectorAll({}).length", js_string(items)),
        None => "0".into(),
    }
}

/// A selector as a JavaScript string literal (JSON's syntax is JavaScript's).
fn js_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// One page's requests as the interceptor sees them.
struct Traffic {
    /// The browser's liveness: a page of a dead browser stops waiting.
    alive: Arc<AtomicBool>,
    inflight: AtomicUsize,
    /// When a request last started or ended.
    last: Mutex<Instant>,
    /// Why the document request failed, if it did: the page's error.
    document_error: Mutex<Option<FetchError>>,
    date: Mutex<Option<String>>,
    /// Told when a request starts or ends, so that `settle` need not poll.
    moved: tokio::sync::Notify,
    /// The XHRs and fetches in flight, by the interceptor's number.
    open: Mutex<std::collections::HashMap<u64, Open>>,
    next: AtomicU64,
    /// Where the page's XHRs and fetches were answered (scheme, host and
    /// path): a poll asks the same endpoint again once answered.
    answered: Mutex<std::collections::HashSet<String>>,
    /// The page's WebSockets, and its frames awaiting an answer.
    sockets: socket::Sockets,
    /// Whether `json` and `off_host` are kept ([`Renderer::keeping_traffic`]).
    keeps: bool,
    /// JSON answers to the page's XHRs, fetches and JSONP scripts
    /// ([`Rendered::json`]), and the bytes they came in.
    json: Mutex<(Vec<(Url, serde_json::Value)>, usize)>,
    /// [`Rendered::off_host`].
    off_host: Mutex<Vec<Url>>,
}

/// An XHR or fetch in flight.
struct Open {
    since: Instant,
    /// Scheme, host and path: what a poll loop asks again.
    endpoint: String,
    url: String,
    /// Told to give the request up.
    let_go: Arc<tokio::sync::Notify>,
    told: bool,
}

/// Scheme, host and path of a URL: one endpoint, whatever its query (a
/// poll's `sid`, counter and cache-buster change each time).
fn endpoint(url: &Url) -> String {
    format!("{}://{}{}", url.scheme(), url.host_str().unwrap_or(""), url.path())
}

impl Traffic {
    fn new(alive: Arc<AtomicBool>, keeps: bool) -> Traffic {
        Traffic {
            alive,
            inflight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            document_error: Mutex::new(None),
            date: Mutex::new(None),
            moved: tokio::sync::Notify::new(),
            open: Mutex::default(),
            next: AtomicU64::new(0),
            answered: Mutex::default(),
            sockets: socket::Sockets::default(),
            keeps,
            json: Mutex::default(),
            off_host: Mutex::default(),
        }
    }

    /// Requests in flight, a socket's frames awaiting an answer among them.
    fn in_flight(&self) -> usize {
        self.inflight.load(Ordering::Relaxed) + self.sockets.in_flight()
    }

    /// Something happened without a request starting or ending (a frame
    /// sent or delivered): quiet starts again, and `settle` looks afresh.
    fn touch(&self) {
        *crate::db::lock(&self.last) = Instant::now();
        self.moved.notify_waiters();
    }

    /// An XHR or fetch starts: its number and what tells it to give up.
    fn opened(&self, url: &Url) -> (u64, Arc<tokio::sync::Notify>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let let_go = Arc::new(tokio::sync::Notify::new());
        let open = Open { since: Instant::now(), endpoint: endpoint(url), url: url.to_string(), let_go: let_go.clone(), told: false };
        crate::db::lock(&self.open).insert(id, open);
        (id, let_go)
    }

    /// It ended; `answered` when the page got a response from the server.
    fn closed(&self, id: u64, answered: bool) {
        // One lock at a time: `let_go_long_polls` holds `answered` while it
        // takes `open`, so holding `open` here while taking `answered`
        // deadlocked a download (an `if let` keeps its scrutinee's guard).
        let open = crate::db::lock(&self.open).remove(&id);
        if let (Some(open), true) = (open, answered) {
            crate::db::lock(&self.answered).insert(open.endpoint);
        }
    }

    /// Lets go of the long-polls: requests the server has held open for
    /// `after` to an endpoint that already answered this page. That is
    /// how a poll loop looks from here (socket.io's handshake answered at
    /// once, then the same URL asked again and held until the server has
    /// news, ~25 s); a page whose first request to an endpoint is slow is
    /// still waited for. A long-poll would otherwise keep the page from
    /// ever settling and one of the forum's `concurrency` slots busy while
    /// the server holds it; let go, its connection is closed and the page's
    /// script hears an aborted request, as it would from a dropped network.
    fn let_go_long_polls(&self, after: Duration, page: &Url) {
        let answered = crate::db::lock(&self.answered);
        for open in crate::db::lock(&self.open).values_mut() {
            if !open.told && open.since.elapsed() >= after && answered.contains(&open.endpoint) {
                open.told = true;
                tracing::debug!("{page}: {} held open {:.1}s, taken for a long-poll and let go", open.url, open.since.elapsed().as_secs_f32());
                open.let_go.notify_one();
            }
        }
    }

    fn started(&self) {
        self.inflight.fetch_add(1, Ordering::Relaxed);
        self.touch();
    }

    fn ended(&self) {
        self.inflight.fetch_sub(1, Ordering::Relaxed);
        self.touch();
    }
}

/// What answers a tab's requests: the site's fetcher, the renderer's
/// cache of assets, its counters.
#[derive(Clone)]
struct Answerer {
    fetcher: Arc<Fetcher>,
    assets: Arc<AssetCache>,
    stats: Arc<RenderStats>,
}

/// Answers every request a page makes: through the fetcher, or refused.
async fn intercept(
    mut events: chromiumoxide::listeners::EventStream<EventRequestPaused>,
    page: Page,
    answerer: Answerer,
    tab_traffic: Arc<Mutex<Option<Arc<Traffic>>>>,
) {
    while let Some(event) = events.next().await {
        // A request belongs to the page drawn when it was made; one the page
        // before made on its way out lands on this one's count, harmlessly.
        let Some(traffic) = crate::db::lock(&tab_traffic).clone() else {
            tracing::debug!("{}: refused (asked by a page luntan is done with)", event.request.url);
            let _ = page.execute(FailRequestParams::new(event.request_id.clone(), ErrorReason::Aborted)).await;
            continue;
        };
        traffic.started();
        let (page, answerer, traffic) = (page.clone(), answerer.clone(), traffic.clone());
        // Side by side: the fetcher's gate, not this loop, spaces them.
        tokio::spawn(async move {
            answer(&page, &answerer, &traffic, &event).await;
            traffic.ended();
        });
    }
}

async fn answer(page: &Page, answerer: &Answerer, traffic: &Traffic, event: &EventRequestPaused) {
    let (fetcher, stats) = (&answerer.fetcher, &answerer.stats);
    let refuse = |reason: ErrorReason| FailRequestParams::new(event.request_id.clone(), reason);
    let is_document = event.resource_type == ResourceType::Document;
    // What draws the text is read; images, fonts, media, favicons, pings
    // and prefetches are not.
    if !matches!(event.resource_type, ResourceType::Document | ResourceType::Script | ResourceType::Xhr | ResourceType::Fetch | ResourceType::Stylesheet) {
        tracing::debug!("{}: blocked unread ({:?})", event.request.url, event.resource_type);
        stats.blocked.fetch_add(1, Ordering::Relaxed);
        let _ = page.execute(refuse(ErrorReason::BlockedByClient)).await;
        return;
    }
    let url = match Url::parse(&event.request.url) {
        Ok(u) if event.request.method == "GET" => u,
        _ => {
            tracing::debug!("{} {}: refused (luntan's browser only reads)", event.request.method, event.request.url);
            stats.refused.fetch_add(1, Ordering::Relaxed);
            let _ = page.execute(refuse(ErrorReason::BlockedByClient)).await;
            return;
        }
    };
    let asset = matches!(event.resource_type, ResourceType::Script | ResourceType::Stylesheet);
    // One URL is asked for by one page at a time: the pages drawn side by
    // side that all load a script (or a config) wait for the first one's
    // fetch, then read it from the cache.
    let _turn = match is_document {
        false => Some(answerer.assets.turn(&url).await),
        true => None,
    };
    if let Some(hit) = answerer.assets.get(&url) {
        stats.cached.fetch_add(1, Ordering::Relaxed);
        fulfil(page, event, hit.status, response_headers(&hit.headers, hit.content_type.as_deref(), &hit.body), &hit.body).await;
        return;
    }
    // An XHR or fetch may be a long-poll, let go of by `settle`.
    let script_asked = matches!(event.resource_type, ResourceType::Xhr | ResourceType::Fetch);
    let poll = script_asked.then(|| traffic.opened(&url));
    let got = match &poll {
        None => fetcher.get_resource_step(&url).await.map(Some),
        Some((_, let_go)) => {
            let let_go = let_go.clone();
            fetcher.get_resource_step_until(&url, async move { let_go.notified().await }).await
        }
    };
    if let Some((id, _)) = poll {
        traffic.closed(id, matches!(got, Ok(Some(Outcome::Page(_))) | Err(FetchError::Status { .. })));
    }
    let got = match got {
        Ok(Some(got)) => Ok(got),
        Err(e) => Err(e),
        Ok(None) => {
            stats.long_polls.fetch_add(1, Ordering::Relaxed);
            let _ = page.execute(refuse(ErrorReason::Aborted)).await;
            return;
        }
    };
    match got {
        Ok(Outcome::Redirect(to)) => {
            // Chromium follows it and asks again, through this same path: the
            // page then knows where it is, and its relative links resolve
            // against the URL that answered, not the one first asked for.
            stats.requests.fetch_add(1, Ordering::Relaxed);
            let redirect = FulfillRequestParams::builder()
                .request_id(event.request_id.clone())
                .response_code(302)
                .response_headers(vec![HeaderEntry::new("Location", to.to_string())])
                .build();
            if let Ok(redirect) = redirect {
                let _ = page.execute(redirect).await;
            }
        }
        // Asked without validators: never answered so.
        Ok(Outcome::NotModified) => {
            let _ = page.execute(refuse(ErrorReason::Failed)).await;
        }
        Ok(Outcome::Page(got)) => {
            if asset {
                stats.assets.fetch_add(1, Ordering::Relaxed);
            } else {
                stats.requests.fetch_add(1, Ordering::Relaxed);
            }
            if is_document {
                *crate::db::lock(&traffic.date) = got.date.clone();
            }
            let headers = got.head.as_ref().map(|h| h.headers.clone()).unwrap_or_default();
            let entries = response_headers(&headers, got.content_type.as_deref(), &got.body);
            fulfil(page, event, got.status, entries, &got.body).await;
            // JSON a script asked for, or JSONP a script tag loaded (a news
            // portal's comment box): what the learner reads comments from.
            let loaded = script_asked || matches!(event.resource_type, ResourceType::Script);
            if traffic.keeps && loaded && got.status == 200 {
                let (json, bytes) = &mut *crate::db::lock(&traffic.json);
                if *bytes + got.body.len() <= JSON_KEPT {
                    if let Ok(value) = luntan_core::site::read_json(&got.body) {
                        json.push((url.clone(), value));
                        *bytes += got.body.len();
                    }
                }
            }
            if let Some(until) = cacheable(&event.resource_type, got.status, &headers) {
                answerer.assets.put(&url, Asset { status: got.status, headers, content_type: got.content_type, body: got.body, until });
            }
        }
        // The page's script hears the server's status (a comment widget's
        // 404 for "no comments yet"), not a network error; the document's
        // own failure is the page's (below).
        Err(FetchError::Status { status, .. }) if !is_document => {
            stats.requests.fetch_add(1, Ordering::Relaxed);
            fulfil(page, event, status, response_headers(&[], None, &[]), &[]).await;
        }
        Err(e) => {
            let reason = match &e {
                FetchError::Refused { .. } | FetchError::Robots { .. } => {
                    stats.refused.fetch_add(1, Ordering::Relaxed);
                    if traffic.keeps && !fetcher.site().host_allowed(&url) {
                        crate::db::lock(&traffic.off_host).push(url.clone());
                    }
                    ErrorReason::BlockedByClient
                }
                _ => ErrorReason::Failed,
            };
            tracing::debug!("{e}");
            if is_document {
                crate::db::lock(&traffic.document_error).get_or_insert(e);
            }
            let _ = page.execute(refuse(reason)).await;
        }
    }
}

/// Answers a paused request with a response.
async fn fulfil(page: &Page, event: &EventRequestPaused, status: u16, headers: Vec<HeaderEntry>, body: &[u8]) {
    let fulfil = FulfillRequestParams::builder()
        .request_id(event.request_id.clone())
        .response_code(i64::from(status))
        .response_headers(headers)
        .body(base64::engine::general_purpose::STANDARD.encode(body))
        .build();
    if let Ok(fulfil) = fulfil {
        let _ = page.execute(fulfil).await;
    }
}

/// The headers the page is answered with: every header the server sent
/// (`Date`, `Last-Modified`, `Cache-Control`, each `Set-Cookie`, which
/// Chromium keeps as it would from the network), less those that
/// described the connection rather than the response, and a
/// `Content-Length` and `Content-Encoding` true of the body as given (the
/// fetcher may have decoded gzip). `headers` as [`crate::fetch::ResponseHead`]
/// holds them; without any, the content type alone.
fn response_headers(headers: &[(String, String)], content_type: Option<&str>, body: &[u8]) -> Vec<HeaderEntry> {
    const HOP_BY_HOP: [&str; 8] = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "content-length"];
    let mut out = Vec::with_capacity(headers.len() + 2);
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) {
            continue;
        }
        // A body still gzipped starts with gzip's magic; one the client
        // decoded does not, and Chromium would fail decoding it again.
        if lower == "content-encoding"
            && matches!(value.trim().to_ascii_lowercase().as_str(), "gzip" | "x-gzip" | "identity")
            && !body.starts_with(&[0x1f, 0x8b])
        {
            continue;
        }
        out.push(HeaderEntry::new(name.clone(), value.clone()));
    }
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type")) {
        if let Some(ct) = content_type {
            out.push(HeaderEntry::new("Content-Type", ct.to_owned()));
        }
    }
    out.push(HeaderEntry::new("Content-Length", body.len().to_string()));
    out
}

/// Whether a response may be served again from the cache, and until when
/// (`None` inside: for as long as the renderer lives, one crawl stage).
/// Only a 200 to a script, a stylesheet or, when its `Cache-Control` gives
/// it a `max-age`, an XHR or fetch (a site's config JSON); never one marked
/// `no-store`, `no-cache` or `max-age=0`, and never a document.
fn cacheable(kind: &ResourceType, status: u16, headers: &[(String, String)]) -> Option<Option<Instant>> {
    if status != 200 {
        return None;
    }
    let mut max_age: Option<u64> = None;
    for (_, value) in headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("cache-control")) {
        for directive in value.split(',').map(|d| d.trim().to_ascii_lowercase()) {
            match directive.split_once('=') {
                None if directive == "no-store" || directive == "no-cache" => return None,
                Some(("max-age", n)) => max_age = Some(n.trim().trim_matches('"').parse().unwrap_or(0)),
                _ => {}
            }
        }
    }
    if max_age == Some(0) {
        return None;
    }
    let until = max_age.map(|s| Instant::now() + Duration::from_secs(s.min(365 * 86_400)));
    match kind {
        ResourceType::Script | ResourceType::Stylesheet => Some(until),
        ResourceType::Xhr | ResourceType::Fetch => until.map(Some),
        _ => None,
    }
}

/// A response kept for later pages.
struct Asset {
    status: u16,
    headers: Vec<(String, String)>,
    content_type: Option<String>,
    body: Vec<u8>,
    /// Fresh until then (`max-age`); `None`, for the renderer's life.
    until: Option<Instant>,
}

/// The renderer's cache of scripts, stylesheets and cacheable JSON, by
/// URL: a thread page's script is fetched once per crawl stage, however
/// many pages load it.
#[derive(Default)]
struct AssetCache {
    kept: Mutex<std::collections::HashMap<String, Arc<Asset>>>,
    /// One lock per URL being fetched: its first fetch is made once.
    fetching: Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A request's turn at its URL (see [`AssetCache::turn`]).
struct Turn<'a> {
    cache: &'a AssetCache,
    url: String,
    lock: Arc<tokio::sync::Mutex<()>>,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for Turn<'_> {
    /// The URL's lock is dropped with its last turn: a later request finds
    /// the answer in the cache or, if it was not cacheable, asks afresh.
    fn drop(&mut self) {
        let mut fetching = crate::db::lock(&self.cache.fetching);
        // Held by the map, this turn and its guard: nobody else waits.
        if fetching.get(&self.url).is_some_and(|l| Arc::ptr_eq(l, &self.lock) && Arc::strong_count(l) == 3) {
            fetching.remove(&self.url);
        }
    }
}

impl AssetCache {
    fn get(&self, url: &Url) -> Option<Arc<Asset>> {
        let mut kept = crate::db::lock(&self.kept);
        let fresh = kept.get(url.as_str()).map(|a| a.until.is_none_or(|t| Instant::now() < t))?;
        if !fresh {
            kept.remove(url.as_str());
            return None;
        }
        kept.get(url.as_str()).cloned()
    }

    fn put(&self, url: &Url, asset: Asset) {
        crate::db::lock(&self.kept).insert(url.to_string(), Arc::new(asset));
    }

    /// Waits until no other request for `url` is in flight: what the first
    /// fetches and may cache, the others then find here.
    async fn turn(&self, url: &Url) -> Turn<'_> {
        let lock = crate::db::lock(&self.fetching).entry(url.to_string()).or_default().clone();
        let held = lock.clone().lock_owned().await;
        Turn { cache: self, url: url.to_string(), lock, _held: held }
    }
}

/// The process's browser.
struct Live {
    browser: chromiumoxide::Browser,
    alive: Arc<AtomicBool>,
    /// Chromium's profile, removed with the browser.
    _profile: tempfile::TempDir,
}

impl Live {
    fn alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }
}

fn slot() -> &'static tokio::sync::Mutex<Option<Arc<Live>>> {
    static SLOT: std::sync::OnceLock<tokio::sync::Mutex<Option<Arc<Live>>>> = std::sync::OnceLock::new();
    SLOT.get_or_init(|| tokio::sync::Mutex::new(None))
}

/// The process's browser, started if there is none or the last one died;
/// says whether it replaced a dead one (counted once, by the caller that
/// found it dead, whether that page was in flight or not).
async fn shared() -> Result<(Arc<Live>, bool), BrowserError> {
    let mut slot = slot().lock().await;
    if let Some(live) = slot.as_ref().filter(|l| l.alive()) {
        return Ok((live.clone(), false));
    }
    let replaced = slot.is_some();
    let live = Arc::new(launch().await?);
    *slot = Some(live.clone());
    Ok((live, replaced))
}

/// Closes the process's browser, if one was started (end of a stage).
pub async fn shutdown() {
    let Some(live) = slot().lock().await.take() else { return };
    if let Ok(mut live) = Arc::try_unwrap(live) {
        if live.alive() {
            let _ = tokio::time::timeout(Duration::from_secs(5), live.browser.close()).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), live.browser.wait()).await;
    }
}

/// Where Chromium is: `LUNTAN_CHROMIUM`, else the first of Debian's and
/// other distributions' names on `PATH`. The error is [`BrowserError::Missing`].
pub fn find_chromium() -> Result<PathBuf, Box<BrowserError>> {
    if let Some(p) = std::env::var_os("LUNTAN_CHROMIUM") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(Box::new(BrowserError::Missing { why: format!("LUNTAN_CHROMIUM={} is not a file", p.display()) })) };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(Box::new(BrowserError::Missing { why: "no chromium on PATH".into() }))
}

async fn launch() -> Result<Live, BrowserError> {
    use chromiumoxide::browser::{Browser, BrowserConfig};
    let exe = find_chromium().map_err(|e| *e)?;
    let failed = |why: String| BrowserError::Launch { path: exe.display().to_string(), why };
    let profile = tempfile::Builder::new().prefix("luntan-chromium-").tempdir().map_err(|e| failed(format!("profile directory: {e}")))?;
    let config = BrowserConfig::builder()
        .chrome_executable(&exe)
        .disable_default_args()
        .no_sandbox()
        .user_data_dir(profile.path())
        .enable_request_intercept()
        .disable_cache()
        .args([
            "disable-gpu",
            "disable-quic",
            "no-first-run",
            "disable-background-networking",
            "disable-component-update",
            "disable-sync",
            "disable-extensions",
            "disable-dev-shm-usage",
            // Without it Chromium opens a window of its own at start, a new-tab
            // page and two omnibox pages in three renderers, none of them
            // used: luntan opens each tab itself.
            "no-startup-window",
            // A page left for the next is dropped, not kept frozen.
            "disable-features=BackForwardCache",
            // A tab luntan opens is in a window nobody sees: without these,
            // Chromium slows its timers to once a second and a page's own polling
            // (or its delayed XHRs) would look settled between ticks.
            "disable-background-timer-throttling",
            "disable-renderer-backgrounding",
            "disable-backgrounding-occluded-windows",
        ])
        .launch_timeout(Duration::from_secs(60))
        .request_timeout(Duration::from_secs(60))
        .build()
        .map_err(failed)?;
    // The handler runs on the I/O runtime: it must outlive any one stage's
    // tasks, and a browser event must not wait behind a page being parsed.
    let (browser, mut handler) = Fetcher::io_runtime()
        .spawn(async move { Browser::launch(config).await })
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))?;
    let alive = Arc::new(AtomicBool::new(true));
    let flag = alive.clone();
    Fetcher::io_runtime().spawn(async move {
        while let Some(event) = handler.next().await {
            // A closed connection means the browser is gone; other errors
            // (an event chromiumoxide cannot parse) are not fatal.
            match event {
                Err(chromiumoxide::error::CdpError::Ws(_) | chromiumoxide::error::CdpError::ChannelSendError(_)) => break,
                Err(e) => tracing::debug!("a browser event luntan could not read: {e}"),
                Ok(()) => {}
            }
        }
        flag.store(false, Ordering::Relaxed);
    });
    Ok(Live { browser, alive, _profile: profile })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request ending while the settle loop looked for long-polls took
    /// the two locks in opposite orders and hung a download for good.
    #[test]
    fn a_request_ending_while_long_polls_are_looked_for_does_not_deadlock() {
        let traffic = Arc::new(Traffic::new(Arc::new(AtomicBool::new(true)), false));
        let url = Url::parse("http://127.0.0.1:1/poll?t=1").unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let ending = {
            let (traffic, url) = (traffic.clone(), url.clone());
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    let (id, _) = traffic.opened(&url);
                    traffic.closed(id, true);
                }
            })
        };
        let looking = std::thread::spawn(move || {
            for _ in 0..20_000 {
                traffic.let_go_long_polls(Duration::ZERO, &url);
            }
            ending.join().unwrap();
            done.send(()).unwrap();
        });
        // A liveness check, not a speed one: both loops take milliseconds;
        // deadlocked, they never end.
        finished.recv_timeout(Duration::from_secs(60)).expect("the two loops deadlocked");
        looking.join().unwrap();
    }

    #[test]
    fn a_duplicate_state_is_dropped_and_a_new_one_kept() {
        let page = |items: &[&str]| {
            format!("<html><body><ul>{}</ul></body></html>", items.iter().map(|i| format!("<li><b>{i}</b><p>{i}的评论内容</p></li>")).collect::<String>())
        };
        let mut s = States::default();
        assert!(s.offer(page(&["一", "二", "三"])));
        assert!(s.offer(page(&["四", "五", "六"])), "the same structure with other texts is a new state");
        assert!(!s.offer(page(&["一", "二", "三"])), "the first state again");
        assert_eq!(s.last(), Some(page(&["一", "二", "三"]).as_str()), "the last offered, though dropped");
        let (kept, dropped) = s.finish();
        assert_eq!((kept.len(), dropped), (2, 1));
    }

    /// Regression: a "查看更多评论" that appends 3 comments under 20 changes
    /// too small a share of the page for S4's test, which would drop the
    /// state and its comments with it; a state whose items grew is kept.
    #[test]
    fn a_small_page_appended_to_a_long_list_is_kept_when_its_items_grew() {
        let page = |n: usize| {
            format!("<html><body><ul>{}</ul></body></html>", (0..n).map(|i| format!("<li><b>用户{i}</b><p>第{i}条评论</p></li>")).collect::<String>())
        };
        let (long, appended) = (DomNode::from_html(&page(20)), DomNode::from_html(&page(23)));
        assert!(compare_states(&long, &appended).duplicate, "S4's test alone takes the longer list for a duplicate");
        let mut s = States::default();
        assert!(s.offer(page(20)));
        s.keep(page(23));
        assert!(!s.offer(page(20)), "the earlier state again is still a duplicate");
        let (kept, dropped) = s.finish();
        assert_eq!((kept.len(), dropped), (2, 1));
    }

    #[test]
    fn the_servers_headers_reach_the_page_true_of_the_body_as_given() {
        let h = |pairs: &[(&str, &str)]| pairs.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect::<Vec<_>>();
        let sent = h(&[
            ("date", "Sun, 01 Dec 2024 02:00:00 GMT"),
            ("content-type", "application/json"),
            ("set-cookie", "a=1; Path=/"),
            ("set-cookie", "b=2; HttpOnly"),
            ("transfer-encoding", "chunked"),
            ("content-length", "999"),
            ("content-encoding", "gzip"),
            ("last-modified", "Fri, 01 Nov 2024 00:00:00 GMT"),
        ]);
        let got: Vec<(String, String)> = response_headers(&sent, None, b"{}").into_iter().map(|e| (e.name, e.value)).collect();
        assert_eq!(
            got,
            h(&[
                ("date", "Sun, 01 Dec 2024 02:00:00 GMT"),
                ("content-type", "application/json"),
                ("set-cookie", "a=1; Path=/"),
                ("set-cookie", "b=2; HttpOnly"),
                ("last-modified", "Fri, 01 Nov 2024 00:00:00 GMT"),
                ("Content-Length", "2"),
            ]),
            "a body the fetcher decoded is not said to be gzip"
        );
        let still_gzipped = [0x1f, 0x8b, 8, 0];
        let got = response_headers(&sent, None, &still_gzipped);
        assert!(got.iter().any(|e| e.name == "content-encoding"), "a body still gzipped says so");
        let bare: Vec<(String, String)> = response_headers(&[], Some("text/html"), b"abc").into_iter().map(|e| (e.name, e.value)).collect();
        assert_eq!(bare, h(&[("Content-Type", "text/html"), ("Content-Length", "3")]));
    }

    #[test]
    fn scripts_and_stylesheets_are_cached_unless_told_not_to_and_json_only_when_told_to() {
        let cc = |v: &str| vec![("Cache-Control".to_owned(), v.to_owned())];
        assert_eq!(cacheable(&ResourceType::Script, 200, &[]), Some(None), "for the crawl");
        assert!(cacheable(&ResourceType::Stylesheet, 200, &cc("public, max-age=60")).is_some_and(|u| u.is_some()));
        for no in ["no-store", "private, no-cache", "max-age=0"] {
            assert_eq!(cacheable(&ResourceType::Script, 200, &cc(no)), None, "{no}");
        }
        assert_eq!(cacheable(&ResourceType::Script, 404, &[]), None);
        assert_eq!(cacheable(&ResourceType::Xhr, 200, &[]), None, "an API answer is read afresh");
        assert!(cacheable(&ResourceType::Xhr, 200, &cc("max-age=3600")).is_some_and(|u| u.is_some()), "config JSON");
        assert_eq!(cacheable(&ResourceType::Document, 200, &cc("max-age=3600")), None);
    }

    #[test]
    fn selectors_become_javascript_strings() {
        assert_eq!(js_string(r#"a[title="更多"]"#), r#""a[title=\"更多\"]""#);
    }
}
