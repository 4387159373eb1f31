//! What a fixture is made from: the config types. Below the model and
//! everything that reads them, so no reader has to reach up for one.

use std::time::Duration;

use crate::hostile::Hostility;
use crate::kind::ForumKind;
use crate::topics::Topics;

/// What to generate and how the server behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureConfig {
    /// Everything on every page follows from this.
    pub seed: u64,
    /// Threads per forum.
    pub threads: usize,
    /// Boards per forum (at least 1; more than 64 are capped).
    pub boards: usize,
    /// Which forums to serve (each at most once; order is kept in the truth).
    /// Default: the three of [`ForumKind::ALL`]; the kinds of
    /// [`ForumKind::EXTRA`] (`dzx`, `nx`, `md`) are served only when named here.
    pub forums: Vec<ForumKind>,
    /// Added before every response, so concurrency limits become observable.
    pub latency: Duration,
    /// Share (0–100) of page URLs that answer `503` to their first request
    /// and normally afterwards, for retry tests. Which URLs is deterministic.
    pub flaky_percent: u8,
    /// Gzip pages for clients that send `Accept-Encoding: gzip`.
    pub gzip: bool,
    /// Faults and traps ([`Hostility::default`]: none).
    pub hostility: Hostility,
    /// Topic-labelled boards for focused crawling (`None`: no topic).
    pub topics: Option<Topics>,
    /// Posts arriving while serving, accounts, search speed.
    pub activity: Activity,
    /// One thread in five runs to up to 120 posts (12 pages) instead of 40:
    /// long threads for measuring updates. Nothing else changes.
    pub long_threads: bool,
}

impl Default for FixtureConfig {
    fn default() -> Self {
        FixtureConfig {
            seed: 1,
            threads: 300,
            boards: 4,
            forums: ForumKind::ALL.to_vec(),
            latency: Duration::ZERO,
            flaky_percent: 0,
            gzip: true,
            hostility: Hostility::default(),
            topics: None,
            activity: Activity::default(),
            long_threads: false,
        }
    }
}

/// What users do while the server runs (all off by default).
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// Posts added per second by a background task while serving: a new
    /// thread one time in four, else a reply to a random live thread.
    pub posts_per_sec: f64,
    /// Forum accounts as (user, password). When there are any, the search
    /// endpoints answer only requests carrying a logged-in account's cookie.
    pub accounts: Vec<(String, String)>,
    /// How long one search takes the server (forum search is slow; it also
    /// makes two requests of one account overlap visibly if a crawler shares it).
    pub search_latency: Duration,
    /// How the search endpoints behave.
    pub search_mode: SearchMode,
    /// [`SearchMode::SearchId`]: least time between two searches one user
    /// (an account, or all guests together) may start; a search sooner gets
    /// `200 OK` with a "try again" message and no results, as Discuz! does.
    pub search_interval: Duration,
    /// [`SearchMode::SearchId`]: robots.txt disallows the search URLs unless
    /// this is set (stock Discuz! disallows `search.php`).
    pub robots_allow_search: bool,
    /// Every Nth search request (counted over all forums; 0 for never) is
    /// answered `429 Too Many Requests` with [`Activity::search_retry_after`].
    pub search_throttle_every: u32,
    pub search_retry_after: Duration,
}

/// How a forum's search answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// Every result page is its own URL with a page number, answered at once.
    #[default]
    Ideal,
    /// As Discuz! X3.5: a search answers `302` to a result set named by a
    /// search id (frozen at that moment), pages go through that id and a
    /// "下一页" link, result links carry `&highlight=`, new searches are
    /// limited per user by [`Activity::search_interval`], and robots.txt
    /// disallows search unless [`Activity::robots_allow_search`].
    SearchId,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            posts_per_sec: 0.0,
            accounts: Vec::new(),
            search_latency: Duration::ZERO,
            search_mode: SearchMode::Ideal,
            search_interval: Duration::from_secs(10),
            robots_allow_search: false,
            search_throttle_every: 0,
            search_retry_after: Duration::from_secs(1),
        }
    }
}
