//! A deterministic fake forum server for luntan's tests, demo and benchmarks.
//!
//! One HTTP server carries three forums under their own path prefixes, each a
//! different trap for a crawler:
//!
//! | site id | prefix    | software style | encoding | declared as |
//! |---------|-----------|----------------|----------|-------------|
//! | `dz`    | `/dz/`    | Discuz! X3     | GBK      | `charset=gb2312` in a meta tag only (a mislabel: some names need GBK) |
//! | `phpbb` | `/phpbb/` | phpBB 3        | Big5, Traditional Chinese | HTTP header and `<meta charset>` |
//! | `bbs`   | `/bbs/`   | modern         | UTF-8    | nowhere; thread URLs carry percent-encoded Chinese slugs |
//!
//! Three more are served only when [`FixtureConfig::forums`] names them
//! ([`ForumKind::EXTRA`]; `serve --forums dzx,nx,md`), so the default fixture
//! stays the three above:
//!
//! | site id | prefix  | software style | encoding | declared as |
//! |---------|---------|----------------|----------|-------------|
//! | `dzx`   | `/dzx/` | Discuz! X3.4 with rewritten URLs (`forum-{fid}-{page}.html`, `thread-{tid}-{page}-{listpage}.html`) | GB18030 | `charset=gbk` in a meta tag only |
//! | `nx`    | `/nx/`  | PHPWind-style (`thread.php?fid=`, `read.php?tid=&fpage=`) | UTF-8 | the HTTP header only |
//! | `md`    | `/md/`  | NodeBB as served without JavaScript (`category/{cid}/{slug}`, `topic/{tid}/{slug}`; pagers only in `<noscript>` and `<link rel="next">`, UTC times only in `title` attributes) | UTF-8 | HTTP header and `<meta charset>` |
//!
//! They have no search or login ([`search`]); everything else (truth,
//! growth, hostile mode, site files) covers them as it covers the three.
//!
//! Everything follows from a [`FixtureConfig`] (seed, threads and boards per
//! forum): the same config always gives byte-identical pages. [`Fixture`]
//! holds the model — boards and per-thread metadata, built up front; posts
//! are rebuilt on demand, so `threads: 100_000` is cheap — and renders pages
//! ([`Fixture::get`]) and the [`Truth`] a crawl should recover. [`serve`]
//! puts it on HTTP and logs every request ([`RequestRecord`]) for politeness
//! tests; [`write_site_files`] writes the matching `luntan_core` site files.
//! Posts draw on a compiled-in sample of real reviews and Tang poems
//! (`corpus/`); about 5% carry awkward text (`&`, `<`, quotes, an emoji
//! GBK and Big5 lack, space runs) and about 1% of threads are listed but
//! answer 404 (deleted).
//!
//! ```no_run
//! use luntan_fixture::{FixtureConfig, FixtureServer};
//!
//! let cfg = FixtureConfig { threads: 50, boards: 2, ..FixtureConfig::default() };
//! let server = FixtureServer::start_blocking(cfg)?;
//! let sites = tempfile_dir();
//! server.write_site_files(&sites)?;
//! // ... crawl server.base_url() with the site files in `sites` ...
//! let truth = server.truth();
//! assert_eq!(truth.forums.len(), 3);
//! println!("{} requests", server.requests().len());
//! # fn tempfile_dir() -> std::path::PathBuf { std::env::temp_dir() }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! With [`FixtureConfig::hostility`] on ([`Hostility::percent`], `serve
//! --hostile PERCENT`) the server turns hostile: seeded transient faults
//! (5xx, 429 with Retry-After, resets, stalls, cut bodies) that go away
//! after a bounded number of requests, threads that can never be served
//! (named in the truth), links and ids crafted to leave the forum or the
//! data directory, lying charsets and invalid bytes; see [`hostile`].
//! [`politeness`] reads the request log: concurrency and spacing per host.
//!
//! The forums can change while they are crawled ([`growth`]): new threads
//! and replies on demand ([`Fixture::add_threads`], [`Fixture::add_replies`])
//! or at a rate ([`Activity::posts_per_sec`], [`FixtureServer::start_arrivals`]),
//! the truth following. [`FixtureConfig::topics`] makes boards topic-labelled
//! for focused crawling ([`topics`]). Each forum has a search endpoint,
//! newest first, with logins when [`Activity::accounts`] are set ([`search`]).
//!
//! The `luntan-fixture` binary does the same from the command line (`serve`,
//! `truth`, `sites`).
//!
//! The modules form layers, each naming only modules in the layers below,
//! so none can import another in a loop and each can be read and tested
//! without the ones above (`src/tests/layers.rs` keeps it so):
//!
//! 1. `text`, `corpus`: pure helpers (escaping, dates, seeded randomness; the sample texts).
//! 2. `kind`: the forum kinds and what each one's software fixes.
//! 3. [`hostile`], [`topics`]: faults, traps and topic labels, decided from the seed alone.
//! 4. `config`: what a fixture is made from ([`FixtureConfig`], [`Activity`], [`SearchMode`]).
//! 5. `model`: boards, threads, posts, the snapshots growth publishes, the [`Truth`].
//! 6. [`growth`], `pages`, [`search`], [`microblog`], [`news`]: changing the model, rendering its pages,
//!    searching it; the two sites drawn by JavaScript from JSON (S4) and the news site whose
//!    comments alone are JSON (a hybrid site), served beside the forums.
//! 7. `sites`: the site files, search and accounts included; [`widget`]: a news site whose
//!    comments a shared widget script draws (S4 browser mode), with its site file; [`socket`]: a
//!    forum whose thread pages load their later posts over a WebSocket, socket.io's long-poll
//!    beside it on half of them.
//! 8. `server`: HTTP, faults on the wire, the request log, search sessions.
//! 9. [`politeness`]: reading the request log.

mod config;
mod corpus;
pub mod growth;
pub mod hostile;
mod kind;
pub mod microblog;
mod model;
pub mod news;
mod pages;
pub mod politeness;
pub mod search;
mod server;
mod sites;
pub mod socket;
mod text;
pub mod topics;
pub mod widget;

pub use config::{Activity, FixtureConfig, SearchMode};
pub use growth::{Arrivals, Change, ChangeKind};
pub use hostile::{Hostility, PermanentFault, TransientFault};
pub use kind::ForumKind;
pub use model::{BoardTruth, Fixture, ForumTruth, ImageTruth, LinkTruth, PostTruth, QuoteTruth, ThreadTruth, Truth};
pub use pages::{FixtureResponse, ROBOTS_TXT};
pub use search::{search_start_path, SearchRecord, SearchRequest, SearchResult};
pub use server::{serve, serve_fixture, BlockingFixture, FixtureServer, RequestRecord};
pub use sites::{browser_site_file, microblog_browser_site_file, microblog_site_files, site_file, write_microblog_site_files, write_site_files};
pub use sites::{news_browser_site_file, news_site_file, write_news_site_file};
pub use topics::Topics;

#[cfg(test)]
mod tests;
