//! Crawl state in SQLite (`data/luntan.db`): sites, boards and threads.
//!
//! Tables follow S3's SiteInfo / BoardInfo / ArticleInfo. Every state change
//! goes through [`Store::transition`], which checks it against
//! [`ThreadState::can_become`] and only applies it when the row is still in
//! the state the caller read, so a stale worker can never move a row
//! backwards or twice. Callers make the file durable first and then move the
//! row, so the database is never ahead of the disk.
//!
//! This module holds the connection, its errors and the transaction helper;
//! the statements live beside their tables: `threads` (rows, transitions,
//! counts), `boards` (sites, boards, rounds, skipped links) and `keywords`
//! (keyword records, rounds and search accounts).

mod boards;
mod keywords;
mod threads;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::state::ThreadState;

pub use boards::{BoardSchedule, RoundRecord};
pub use keywords::{KeywordRound, KeywordState};
pub use threads::{Listing, NewThread, SiteCounts, ThreadRow, Update};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("{}: refused transition {from} → {to} for thread {site}/{thread}", path.display())]
    Transition { path: PathBuf, site: String, thread: String, from: ThreadState, to: ThreadState },
    #[error("{}: unknown state code {code} for thread {site}/{thread}", path.display())]
    BadState { path: PathBuf, site: String, thread: String, code: i64 },
}

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS sites (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    home          TEXT NOT NULL,
    encoding      TEXT,            -- detected encoding, cached as S3 does
    encoding_why  TEXT,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE TABLE IF NOT EXISTS boards (
    site          TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    title         TEXT,
    pages_read    INTEGER NOT NULL DEFAULT 0,
    last_visit    TEXT,
    interval_secs INTEGER,          -- adaptive re-check interval (S1 / Nutch)
    next_visit    INTEGER,          -- unix seconds; a round skips the board before it
    walk_open     INTEGER NOT NULL DEFAULT 0,  -- 1 while a walk is under way or after one broke off
    PRIMARY KEY (site, board)
);
CREATE TABLE IF NOT EXISTS skipped_links (   -- focused crawling (S2): below the threshold
    site          TEXT NOT NULL,
    thread        TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    anchor        TEXT,
    score         REAL NOT NULL,
    seen_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, thread)
);
CREATE TABLE IF NOT EXISTS rounds (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    site          TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT NOT NULL,
    requests      INTEGER NOT NULL,
    list_pages    INTEGER NOT NULL,
    boards_visited INTEGER NOT NULL,
    boards_skipped INTEGER NOT NULL,
    new_threads   INTEGER NOT NULL,
    updated_threads INTEGER NOT NULL,
    errors        INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS threads (
    site          TEXT NOT NULL,
    thread        TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    title         TEXT,
    replies       INTEGER,
    last_post     TEXT,
    post_time     TEXT,
    save_date     TEXT,             -- YYYYMMDD: names the HTML directory
    pages         INTEGER,
    content_type  TEXT,
    state         INTEGER NOT NULL DEFAULT 0,  -- visitedFlag, see state.rs
    fail_stage    TEXT,
    fail_reason   TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    discovered_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, thread)
);
CREATE INDEX IF NOT EXISTS threads_by_state ON threads (state, site);
CREATE TABLE IF NOT EXISTS keywords (        -- keyword monitoring (S0): {keyword, lastresult, pagenum, date}
    site          TEXT NOT NULL,
    keyword       TEXT NOT NULL,
    lastresult    INTEGER NOT NULL,          -- smallest result page found already seen last round (max pages: none)
    pagenum       INTEGER NOT NULL,          -- result pages to read next round
    watermark     TEXT,                      -- newest post time seen: older results are stored
    rounds        INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, keyword)
);
CREATE TABLE IF NOT EXISTS keyword_rounds (  -- one row per keyword per round, for luntan-status and tests
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    site          TEXT NOT NULL,
    keyword       TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    budget        INTEGER NOT NULL,          -- pagenum this round
    pages_read    INTEGER NOT NULL,
    lastresult    INTEGER NOT NULL,
    next_pagenum  INTEGER NOT NULL,
    watermark_before TEXT,
    watermark_after  TEXT,
    results       INTEGER NOT NULL,
    new_threads   INTEGER NOT NULL,
    updated_threads INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    error         TEXT                       -- the round's first error; the record was left as it was
);
CREATE TABLE IF NOT EXISTS search_accounts ( -- keyword monitoring: when each account last started a search
    site          TEXT NOT NULL,
    account       TEXT NOT NULL,             -- the account's name; '' for searches without one
    last_search_ms INTEGER NOT NULL,         -- Unix milliseconds of the forum's answer
    PRIMARY KEY (site, account)
);
"#;

/// The crawl-state database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = |source| StoreError::Sqlite { path: path.to_owned(), source };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(err)?;
        // WAL lets `luntan-status` read while a stage writes; FULL sync keeps a
        // committed transition across a power cut.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(err)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        // A database made before keyword rounds kept their error.
        let has_error: bool = conn
            .query_row("SELECT COUNT(*) FROM pragma_table_info('keyword_rounds') WHERE name = 'error'", [], |r| r.get::<_, i64>(0))
            .map_err(err)?
            > 0;
        if !has_error {
            conn.execute_batch("ALTER TABLE keyword_rounds ADD COLUMN error TEXT").map_err(err)?;
        }
        Ok(Store { conn, path: path.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in one transaction: committed when `f` returns `Ok`, rolled
    /// back when it returns `Err` or panics. This is the store's only way to
    /// group statements; every method that writes more than once uses it, and
    /// callers use it to move a whole chunk of rows with one commit (one fsync)
    /// instead of one per row.
    ///
    /// The outermost call takes the write lock at once (`BEGIN IMMEDIATE`):
    /// stages run as separate processes on one file, and a transaction that
    /// read first and wrote later could otherwise fail half-way with
    /// `SQLITE_BUSY` once another stage has written. A call inside another one
    /// (a grouping `&self` method called from a caller's batch) is a savepoint
    /// of it: undone alone when it fails, committed with the outer one.
    /// Methods taking `&mut self` cannot be called inside, since `f` gets `&Store`.
    pub fn batch<T, E: From<StoreError>>(&self, f: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        let tx = Tx::begin(self)?;
        let out = f(self)?;
        tx.commit()?;
        Ok(out)
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }
}

/// An open [`Store::batch`]. Dropped before [`Tx::commit`] (an error or a
/// panic in the batch), it rolls back: the crawl stages keep using a store
/// whose mutex a panic poisoned, and must not find it still inside a
/// transaction that nothing will ever commit.
struct Tx<'a> {
    store: &'a Store,
    nested: bool,
    open: bool,
}

impl<'a> Tx<'a> {
    fn begin(store: &'a Store) -> Result<Tx<'a>, StoreError> {
        let nested = !store.conn.is_autocommit();
        store.conn.execute_batch(if nested { "SAVEPOINT batch" } else { "BEGIN IMMEDIATE" }).map_err(|e| store.err(e))?;
        Ok(Tx { store, nested, open: true })
    }

    fn commit(mut self) -> Result<(), StoreError> {
        self.store.conn.execute_batch(if self.nested { "RELEASE batch" } else { "COMMIT" }).map_err(|e| self.store.err(e))?;
        self.open = false;
        Ok(())
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // Errors are moot here: SQLite may have rolled back already.
            let _ = self.store.conn.execute_batch(if self.nested { "ROLLBACK TO batch; RELEASE batch" } else { "ROLLBACK" });
        }
    }
}
