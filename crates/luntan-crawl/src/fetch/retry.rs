//! Retries: transient failures tried again up to the site's `retries`
//! with exponential backoff and jitter, Retry-After honoured for the whole
//! host, and each attempt a request through the gate.

use std::sync::atomic::Ordering;
use std::time::Duration;

use luntan_core::store::Validators;
use url::Url;

use super::log::request_log;
use super::{Core, FetchError, Outcome, Want};

/// Longest Retry-After luntan will wait out; a longer one fails the request
/// for this run (it stays retryable with `--retry-failed`).
pub(super) const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Ceiling of the exponential backoff between attempts.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Core {
    pub(super) async fn get_with_retries(
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
}

/// `base · 2^attempt`, ±50 % jitter so many threads do not retry in step.
fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
    exp.mul_f64(0.5 + fastrand::f64())
}

/// `Retry-After` as seconds or as an HTTP date.
pub(super) fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::tests::dz_fixture;
    use super::super::Fetcher;
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
}
