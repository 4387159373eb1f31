//! Why a URL could not be fetched, and which failures are worth trying again.

use std::time::Duration;

use url::Url;

use super::retry::MAX_RETRY_AFTER;

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

    pub(super) fn retry_after(&self) -> Option<Duration> {
        match self {
            FetchError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_and_permanent_are_told_apart() {
        let url = Url::parse("http://h/").unwrap();
        let st = |status| FetchError::Status { url: url.clone(), status, retry_after: None };
        assert!(st(503).is_transient());
        assert!(st(429).is_transient());
        assert!(!st(404).is_transient());
        assert!(!FetchError::TooLarge { url: url.clone(), limit: 1 }.is_transient());
    }
}
