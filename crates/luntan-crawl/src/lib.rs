//! luntan's network stages: `discover` and `download`.
//!
//! - [`fetch::Fetcher`]: polite HTTP for one forum (per-site concurrency and
//!   delay, robots.txt and Crawl-delay, retries with backoff and jitter,
//!   Retry-After, a slow-down after consecutive failures, body caps,
//!   redirects kept on the forum's hosts), and [`fetch::Session`]s on it:
//!   one cookie jar per forum account, GET and form POST, the same gate.
//!   Every request luntan makes goes through it.
//! - [`discover::discover_site`]: home → boards → list pages → new thread
//!   rows; later rounds stop early and re-queue threads that grew (S1).
//! - [`download::download_site`]: thread rows → raw HTML on disk → `Saved`.
//! - [`db::with_store`]: the shared store's calls from async code, on tokio's
//!   blocking pool.
//! - [`focus::Scorer`]: topic relevance of thread links (S2).
//! - [`keywords::monitor_site`]: keyword monitoring through the forum's own
//!   search (S0), one worker and session per account, adaptive page budgets,
//!   search ids followed by their next-page links, busy pages waited out.
//! - [`media::archive_site`]: the pictures and attachments extracted
//!   threads show, fetched through the forum's fetcher and archived once
//!   per content hash (`luntan-media`).
//! - [`links`]: link resolution and matching against the site file's patterns.
//! - [`hrefs`] (luntan-text's, re-exported): the `href`s of a raw page without a DOM (html5ever's
//!   tokenizer rules over the bytes), so download reads a thread's pager
//!   links at a tenth of a DOM's cost; pages it cannot read surely go to
//!   the DOM path.
//! - `protocol`: protocol mode (S4), a forum or microblog read through its
//!   JSON endpoints, users met joining the crawl.
//! - `browser::Renderer`: browser mode (S4), pages loaded and driven in one
//!   Chromium per process, every request they make answered through the
//!   site's `Fetcher`, DOM states kept or dropped by `dupstate`'s S4 test.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::{Arc, Mutex};
//! use luntan_core::{DataDir, Site, Stage, StageRun, Stop, Store};
//! use luntan_crawl::discover::{discover_site, DiscoverOptions};
//! use luntan_crawl::fetch::Fetcher;
//! let data = DataDir::new("data");
//! let run = Arc::new(StageRun::begin(&data, Stage::Discover, Stop::new())?);
//! let site = Arc::new(Site::load(&data.sites_dir().join("dz.xml"))?);
//! let store = Arc::new(Mutex::new(Store::open(&data.db_path())?));
//! let report = discover_site(run, Arc::new(Fetcher::new(site)?), store, DiscoverOptions::default()).await?;
//! println!("{} new threads", report.new_threads);
//! # Ok(()) }
//! ```

pub mod browser;
mod commit;
pub mod db;
pub mod discover;
pub mod download;
pub mod dupstate;
pub mod fetch;
pub mod focus;
pub mod hybrid;
pub mod keywords;
pub mod links;
pub mod media;
pub mod protocol;
/// Moved down to luntan-text, which export shares; kept here under its old path.
pub use luntan_text::hrefs;
mod round;
