//! luntan: crawl Chinese web forums into one searchable archive.
//!
//! This package holds the binaries (`luntan-discover`, `luntan-download`,
//! `luntan-extract`, `luntan-index`, `luntan-search`, `luntan-status`,
//! `luntan-serve`, `luntan-export`, `luntan-learn`, `luntan-state`,
//! `luntan-media`; the
//! fixture forum's `luntan-fixture` is built by its own crate) and the
//! little they share ([`cli`]).
//! The work is done by the library crates:
//!
//! - `luntan-core`: site files, the thread state machine, crawl state, layout, thread XML;
//! - `luntan-text`: encoding detection, traditional → simplified folding, the shared jieba;
//! - `luntan-crawl`: polite fetching, discover, download and the media step;
//! - `luntan-extract`: decoded HTML → normalized XML;
//! - `luntan-search`: per-forum tantivy indexes and search across them;
//! - `luntan-serve`: the search page and JSON API;
//! - `luntan-export`: the pages as WARC, the threads as NDJSON, for other tools;
//! - `luntan-learn`: a site file learned from a forum's own pages;
//! - `luntan-fixture`: the fixture forum server for tests, the demo and benchmarks.
//!
//! ```
//! // Every stage reads site files the same way:
//! let (sites, broken) = luntan::cli::load_sites(&luntan_core::DataDir::new("no/such/dir"), None);
//! assert!(sites.is_empty() && broken);
//! ```

pub mod cli;
