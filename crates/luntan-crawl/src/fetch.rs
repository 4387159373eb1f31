//! Polite HTTP for one forum: a per-site gate (concurrency and delay),
//! robots.txt, retries with backoff and jitter, Retry-After, a slow-down
//! after consecutive failures, and caps on body size.
//!
//! One [`Fetcher`] per site. Its gate is shared by every request to that
//! site (robots.txt included), so the site file's `concurrency` and
//! `delay-ms` bound what the forum sees whatever the stage does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::site::{Politeness, Site};
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use tokio::sync::{OnceCell, Semaphore, SemaphorePermit};
use tokio::time::Instant;
use url::Url;

/// Longest Retry-After luntan will wait out; a longer one fails the request
/// for this run (it stays retryable with `--retry-failed`).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Ceiling of the exponential backoff between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
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
    /// Earliest start of the next request.
    next: Mutex<Instant>,
    delay: Mutex<Duration>,
    consecutive_failures: AtomicU32,
}

impl Gate {
    fn new(p: &Politeness) -> Gate {
        Gate {
            slots: Semaphore::new(p.concurrency),
            next: Mutex::new(Instant::now()),
            delay: Mutex::new(p.delay),
            consecutive_failures: AtomicU32::new(0),
        }
    }

    /// Waits for a free slot and for the request's turn.
    async fn enter(&self) -> SemaphorePermit<'_> {
        let permit = self.slots.acquire().await.expect("gate semaphore is never closed");
        let start = {
            let delay = *self.delay.lock().expect("gate lock");
            let mut next = self.next.lock().expect("gate lock");
            let start = (*next).max(Instant::now());
            *next = start + delay;
            start
        };
        tokio::time::sleep_until(start).await;
        permit
    }

    /// Holds every request to the site back until `wait` from now.
    fn hold_off(&self, wait: Duration) {
        let mut next = self.next.lock().expect("gate lock");
        *next = (*next).max(Instant::now() + wait);
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
pub struct Fetcher {
    client: reqwest::Client,
    site: Arc<Site>,
    gate: Gate,
    robots: Mutex<HashMap<String, Arc<OnceCell<RobotsRule>>>>,
    /// First retry wait; doubles per attempt.
    backoff_base: Duration,
    pub stats: FetchStats,
}

impl Fetcher {
    pub fn new(site: Arc<Site>) -> Result<Fetcher, FetchError> {
        let p = &site.politeness;
        let policy_site = site.clone();
        // Redirects are followed only inside the forum (or its allowed hosts)
        // and at most 10 deep: a loop or an off-host hop fails the request.
        let redirect = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                attempt.error("too many redirects (loop?)")
            } else if !policy_site.host_allowed(attempt.url()) {
                let to = attempt.url().to_string();
                attempt.error(format!("redirect to {to} leaves the forum"))
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(p.user_agent.clone())
            .timeout(p.timeout)
            .connect_timeout(p.timeout.min(Duration::from_secs(10)))
            .redirect(redirect)
            .pool_max_idle_per_host(p.concurrency)
            .build()
            .map_err(|e| FetchError::Network { url: site.home.clone(), what: format!("HTTP client: {e}") })?;
        Ok(Fetcher {
            client,
            gate: Gate::new(p),
            site,
            robots: Mutex::new(HashMap::new()),
            backoff_base: Duration::from_millis(250),
            stats: FetchStats::default(),
        })
    }

    /// Shortens the first retry wait (tests against a local server).
    pub fn with_backoff_base(mut self, base: Duration) -> Fetcher {
        self.backoff_base = base;
        self
    }

    pub fn site(&self) -> &Site {
        &self.site
    }

    /// GETs an HTML page: checks host and robots.txt, then tries up to
    /// `1 + retries` times on transient failures.
    pub async fn get_html(&self, url: &Url) -> Result<Fetched, FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Refused { url: url.clone(), why: format!("scheme {} is not fetched", url.scheme()) });
        }
        if !self.site.host_allowed(url) {
            return Err(FetchError::Refused { url: url.clone(), why: "host is not this forum's (add <allow-host> to the site file)".into() });
        }
        if self.site.politeness.robots {
            self.check_robots(url).await?;
        }
        self.get_with_retries(url, true).await
    }

    async fn get_with_retries(&self, url: &Url, require_html: bool) -> Result<Fetched, FetchError> {
        let retries = self.site.politeness.retries;
        let mut attempt = 0;
        loop {
            let permit = self.gate.enter().await;
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            let result = self.once(url, require_html).await;
            drop(permit);
            match result {
                Ok(f) => {
                    self.gate.success();
                    self.stats.bytes.fetch_add(f.body.len() as u64, Ordering::Relaxed);
                    return Ok(f);
                }
                Err(e) if e.is_transient() => {
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
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn once(&self, url: &Url, require_html: bool) -> Result<Fetched, FetchError> {
        let p = &self.site.politeness;
        let net = |e: reqwest::Error| classify(url, e, p.timeout);
        let mut resp = self.client.get(url.clone()).send().await.map_err(net)?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            let retry_after = resp.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
            return Err(FetchError::Status { url: url.clone(), status, retry_after });
        }
        let content_type = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if require_html {
            if let Some(ct) = &content_type {
                let mime = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
                if !matches!(mime.as_str(), "text/html" | "application/xhtml+xml" | "text/plain" | "") {
                    return Err(FetchError::NotHtml { url: url.clone(), content_type: ct.clone() });
                }
            }
        }
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
        let final_url = resp.url().clone();
        Ok(Fetched { url: final_url, status, content_type, body })
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
    /// 5xx means "assume everything is disallowed".
    async fn load_robots(&self, origin: &str) -> RobotsRule {
        let Ok(url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return RobotsRule::AllowAll;
        };
        match self.get_with_retries(&url, false).await {
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
    if e.is_redirect() {
        return FetchError::Refused { url: url.clone(), why: root_cause(&e) };
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
            let _permit = gate.enter().await;
            starts.push(t0.elapsed());
        }
        for w in starts.windows(2) {
            assert!(w[1] - w[0] >= Duration::from_millis(200), "{starts:?}");
        }
    }
}
