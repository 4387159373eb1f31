//! Crawl state in SQLite (`data/luntan.db`): sites, boards and threads.
//!
//! Tables follow S3's SiteInfo / BoardInfo / ArticleInfo. Every state change
//! goes through [`Store::transition`], which checks it against
//! [`ThreadState::can_become`] and only applies it when the row is still in
//! the state the caller read, so a stale worker can never move a row
//! backwards or twice. Callers make the file durable first and then move the
//! row, so the database is never ahead of the disk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use crate::site::Site;
use crate::state::{FailureGroup, Stage, ThreadState};

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

/// A thread row as the stages read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    pub site: String,
    pub thread: String,
    pub board: String,
    pub url: String,
    pub title: Option<String>,
    pub replies: Option<i64>,
    pub last_post: Option<String>,
    pub post_time: Option<String>,
    pub save_date: Option<String>,
    pub pages: Option<u32>,
    pub content_type: Option<String>,
    pub state: ThreadState,
    pub fail_stage: Option<String>,
    pub fail_reason: Option<String>,
    pub attempts: i64,
}

/// What a board list row told about a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewThread {
    pub site: String,
    pub board: String,
    pub thread: String,
    pub url: String,
    pub title: Option<String>,
    pub replies: Option<i64>,
    pub last_post: Option<String>,
}

/// How a listed thread compares with what is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Not seen before: inserted as discovered.
    New,
    /// Known, and the list row shows nothing newer.
    Unchanged,
    /// Known, but the row shows more replies or a newer last post: re-queued
    /// as discovered so its pages are fetched, extracted and indexed again.
    Updated,
}

/// What one discover round did for a site (the `rounds` table).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RoundRecord {
    pub site: String,
    pub started_at: String,
    pub finished_at: String,
    pub requests: i64,
    pub list_pages: i64,
    pub boards_visited: i64,
    pub boards_skipped: i64,
    pub new_threads: i64,
    pub updated_threads: i64,
    pub errors: i64,
}

/// A monitored keyword's record (S0's `{keyword, lastresult, pagenum, date}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeywordState {
    pub site: String,
    pub keyword: String,
    /// The smallest result page found already seen in the last round
    /// (the page limit when none was).
    pub lastresult: u32,
    /// Result pages to read in the next round.
    pub pagenum: u32,
    /// The newest post time seen; results no newer are already stored.
    pub watermark: Option<String>,
    pub rounds: u32,
    /// Why the latest round left the record as it was (`None` when it went through).
    pub last_error: Option<String>,
}

/// What one round did for one keyword (the `keyword_rounds` table).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeywordRound {
    pub site: String,
    pub keyword: String,
    pub started_at: String,
    /// `pagenum` going into the round.
    pub budget: u32,
    pub pages_read: u32,
    pub lastresult: u32,
    /// `pagenum` for the next round.
    pub next_pagenum: u32,
    pub watermark_before: Option<String>,
    pub watermark_after: Option<String>,
    pub results: u32,
    pub new_threads: u32,
    pub updated_threads: u32,
    pub errors: u32,
    /// The first error, when the round was cut short (the record is then left as it was).
    pub error: Option<String>,
}

/// A board's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardSchedule {
    pub interval_secs: Option<i64>,
    pub next_visit: Option<i64>,
}

/// Per-site counts of threads in each state.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SiteCounts {
    pub site: String,
    pub boards: i64,
    pub discovered: i64,
    pub saved: i64,
    pub extracted: i64,
    pub indexed: i64,
    pub failed: i64,
    /// Failed threads grouped by stage and cause, most frequent first.
    pub failures: Vec<FailureGroup>,
    /// The last discover round, if any.
    pub last_round: Option<RoundRecord>,
    /// Thread links a topic focus left out, and the best-scoring few of them.
    pub skipped_links: i64,
    pub top_skipped: Vec<(String, f64)>,
}

/// Extra columns a transition sets beside the state.
#[derive(Debug, Clone, Default)]
pub struct Update<'a> {
    pub save_date: Option<&'a str>,
    pub pages: Option<u32>,
    pub content_type: Option<&'a str>,
    pub post_time: Option<&'a str>,
    pub title: Option<&'a str>,
}

/// The crawl-state database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const ROW_COLUMNS: &str = "site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts";

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

    /// Runs `f` with every change it makes through `&Store` methods in one
    /// transaction: one commit (one fsync) for a whole chunk of rows instead
    /// of one per row. Nothing of it is kept when `f` fails. Methods that
    /// take `&mut self` open their own transaction and cannot be used inside.
    pub fn batch<T, E: From<StoreError>>(&self, f: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(|e| E::from(self.err(e)))?;
        match f(self) {
            Ok(v) => {
                if let Err(e) = self.conn.execute_batch("COMMIT") {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    return Err(E::from(self.err(e)));
                }
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs `f` in one transaction, committed when `f` succeeds; `err`
    /// names the database in SQLite errors.
    fn in_tx<T>(&mut self, f: impl FnOnce(&rusqlite::Transaction, &dyn Fn(rusqlite::Error) -> StoreError) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let path = self.path.clone();
        let err = move |source| StoreError::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(&err)?;
        let out = f(&tx, &err)?;
        tx.commit().map_err(&err)?;
        Ok(out)
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// Records (or refreshes) a site's name and home.
    pub fn upsert_site(&self, site: &Site) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO sites (id, name, home) VALUES (?1, ?2, ?3)
                 ON CONFLICT(id) DO UPDATE SET name = excluded.name, home = excluded.home",
                params![site.id, site.name, site.home.as_str()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The cached encoding of a site, if one was detected.
    pub fn site_encoding(&self, site: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT encoding FROM sites WHERE id = ?1", [site], |r| r.get::<_, Option<String>>(0))
            .optional()
            .map(Option::flatten)
            .map_err(|e| self.err(e))
    }

    pub fn set_site_encoding(&self, site: &str, encoding: &str, why: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE sites SET encoding = ?2, encoding_why = ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1",
                params![site, encoding, why],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn upsert_board(&self, site: &str, board: &str, url: &str, title: Option<&str>) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO boards (site, board, url, title) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(site, board) DO UPDATE SET title = COALESCE(excluded.title, boards.title)",
                params![site, board, url, title],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Marks a walk of a board's list pages as started; returns whether the
    /// previous walk broke off (killed, or a list page failed). Such a board
    /// must be walked in full: its early pages are known, but threads further
    /// down were never read, so S1's stop rule would wrongly end the walk.
    pub fn begin_board_walk(&self, site: &str, board: &str) -> Result<bool, StoreError> {
        let open: Option<i64> = self
            .conn
            .query_row("SELECT walk_open FROM boards WHERE site = ?1 AND board = ?2", params![site, board], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        self.conn
            .execute("UPDATE boards SET walk_open = 1 WHERE site = ?1 AND board = ?2", params![site, board])
            .map_err(|e| self.err(e))?;
        Ok(open == Some(1))
    }

    /// Notes a visit of a board's list pages; `finished` when every page it
    /// meant to read was read.
    pub fn board_visited(&self, site: &str, board: &str, pages_read: u32, finished: bool) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE boards SET pages_read = ?3, walk_open = ?4, last_visit = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE site = ?1 AND board = ?2",
                params![site, board, pages_read, i64::from(!finished)],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Inserts the threads not seen before, in one transaction; returns how many were new.
    pub fn insert_new_threads(&mut self, threads: &[NewThread]) -> Result<usize, StoreError> {
        self.in_tx(|tx, err| {
            let mut n = 0;
            {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT INTO threads (site, thread, board, url, title, replies, last_post, state)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0) ON CONFLICT(site, thread) DO NOTHING",
                    )
                    .map_err(err)?;
                for t in threads {
                    n += stmt.execute(params![t.site, t.thread, t.board, t.url, t.title, t.replies, t.last_post]).map_err(err)?;
                }
            }
            Ok(n)
        })
    }

    /// Compares list rows with the stored threads in one transaction:
    /// inserts new ones, re-queues those whose reply count or last post grew
    /// (S1 freshness), and leaves the rest. Returns one [`Listing`] per row.
    pub fn record_listings(&mut self, threads: &[NewThread]) -> Result<Vec<Listing>, StoreError> {
        self.record_listings_hinted(threads, &vec![true; threads.len()]).map(|(l, _)| l)
    }

    /// [`Store::record_listings`] with a hint per row: `false` means "surely
    /// not stored" (a Bloom filter's miss), so the row is inserted without
    /// looking it up first. A wrong hint costs nothing but the lookup it
    /// tried to save: an insert that finds the row takes the usual path.
    /// Returns the listings and how many lookups the hints saved.
    pub fn record_listings_hinted(&mut self, threads: &[NewThread], maybe_stored: &[bool]) -> Result<(Vec<Listing>, usize), StoreError> {
        let path = self.path.clone();
        self.in_tx(|tx, err| {
            let mut out = Vec::with_capacity(threads.len());
            let mut saved = 0;
            {
                let mut get = tx.prepare_cached("SELECT state, replies, last_post FROM threads WHERE site = ?1 AND thread = ?2").map_err(err)?;
                let mut insert = tx
                    .prepare_cached(
                        "INSERT INTO threads (site, thread, board, url, title, replies, last_post, state)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0)",
                    )
                    .map_err(err)?;
                let mut requeue = tx
                    .prepare_cached(
                        "UPDATE threads SET replies = COALESCE(?3, replies), last_post = COALESCE(?4, last_post), title = COALESCE(?5, title),
                            state = 0, attempts = 0, fail_stage = NULL, fail_reason = NULL,
                            updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                         WHERE site = ?1 AND thread = ?2",
                    )
                    .map_err(err)?;
                let mut insert_new = tx
                    .prepare_cached(
                        "INSERT INTO threads (site, thread, board, url, title, replies, last_post, state)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0) ON CONFLICT(site, thread) DO NOTHING",
                    )
                    .map_err(err)?;
                for (i, t) in threads.iter().enumerate() {
                    if !maybe_stored.get(i).copied().unwrap_or(true)
                        && insert_new.execute(params![t.site, t.thread, t.board, t.url, t.title, t.replies, t.last_post]).map_err(err)? == 1
                    {
                        saved += 1;
                        out.push(Listing::New);
                        continue;
                    }
                    let stored = get
                        .query_row(params![t.site, t.thread], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?, r.get::<_, Option<String>>(2)?)))
                        .optional()
                        .map_err(err)?;
                    let listing = match stored {
                        None => {
                            insert.execute(params![t.site, t.thread, t.board, t.url, t.title, t.replies, t.last_post]).map_err(err)?;
                            Listing::New
                        }
                        Some((code, replies, last_post)) => {
                            let more_replies = matches!((t.replies, replies), (Some(new), Some(old)) if new > old);
                            // Normalized times compare as strings.
                            let newer_post = matches!((&t.last_post, &last_post), (Some(new), Some(old)) if new > old);
                            if more_replies || newer_post {
                                let from = ThreadState::from_code(code).unwrap_or(ThreadState::Failed);
                                if from != ThreadState::Discovered && !from.can_become(ThreadState::Discovered) {
                                    return Err(StoreError::Transition { path: path.clone(), site: t.site.clone(), thread: t.thread.clone(), from, to: ThreadState::Discovered });
                                }
                                requeue.execute(params![t.site, t.thread, t.replies, t.last_post, t.title]).map_err(err)?;
                                Listing::Updated
                            } else {
                                Listing::Unchanged
                            }
                        }
                    };
                    out.push(listing);
                }
            }
            Ok((out, saved))
        })
    }

    /// Calls `f` with every thread id of `site` the store knows: queued,
    /// done, failed, or left out by a topic focus (to fill a Bloom filter).
    pub fn for_each_known_thread(&self, site: &str, mut f: impl FnMut(&str)) -> Result<usize, StoreError> {
        let mut n = 0;
        for sql in ["SELECT thread FROM threads WHERE site = ?1", "SELECT thread FROM skipped_links WHERE site = ?1"] {
            let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
            let mut rows = stmt.query([site]).map_err(|e| self.err(e))?;
            while let Some(r) = rows.next().map_err(|e| self.err(e))? {
                let id: String = r.get(0).map_err(|e| self.err(e))?;
                f(&id);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Records thread links a topic focus left out, with their scores;
    /// returns, per link, whether it was not recorded (nor queued) before.
    pub fn record_skipped(&mut self, links: &[(NewThread, f64)]) -> Result<Vec<bool>, StoreError> {
        self.in_tx(|tx, err| {
            let mut fresh = Vec::with_capacity(links.len());
            {
                let mut known = tx.prepare_cached("SELECT 1 FROM threads WHERE site = ?1 AND thread = ?2").map_err(err)?;
                let mut upsert = tx
                    .prepare_cached(
                        "INSERT INTO skipped_links (site, thread, board, url, anchor, score) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT(site, thread) DO UPDATE SET score = excluded.score, anchor = excluded.anchor, url = excluded.url",
                    )
                    .map_err(err)?;
                let mut exists = tx.prepare_cached("SELECT 1 FROM skipped_links WHERE site = ?1 AND thread = ?2").map_err(err)?;
                for (t, score) in links {
                    // A thread queued earlier (a lower threshold then) stays queued.
                    if known.exists(params![t.site, t.thread]).map_err(err)? {
                        fresh.push(false);
                        continue;
                    }
                    fresh.push(!exists.exists(params![t.site, t.thread]).map_err(err)?);
                    upsert.execute(params![t.site, t.thread, t.board, t.url, t.title, score]).map_err(err)?;
                }
            }
            Ok(fresh)
        })
    }

    /// Queues the skipped links of `site` that score at least `threshold`
    /// (after the threshold was lowered), without reading any board page
    /// again; returns how many.
    pub fn promote_skipped(&mut self, site: &str, threshold: f64) -> Result<usize, StoreError> {
        self.in_tx(|tx, err| {
            let n = tx
                .execute(
                    "INSERT INTO threads (site, thread, board, url, title, state)
                     SELECT site, thread, board, url, anchor, 0 FROM skipped_links WHERE site = ?1 AND score >= ?2
                     ON CONFLICT(site, thread) DO NOTHING",
                    params![site, threshold],
                )
                .map_err(err)?;
            tx.execute("DELETE FROM skipped_links WHERE site = ?1 AND score >= ?2", params![site, threshold]).map_err(err)?;
            Ok(n)
        })
    }

    /// A board's schedule (interval and next visit).
    pub fn board_schedule(&self, site: &str, board: &str) -> Result<BoardSchedule, StoreError> {
        self.conn
            .query_row("SELECT interval_secs, next_visit FROM boards WHERE site = ?1 AND board = ?2", params![site, board], |r| {
                Ok(BoardSchedule { interval_secs: r.get(0)?, next_visit: r.get(1)? })
            })
            .optional()
            .map(|o| o.unwrap_or(BoardSchedule { interval_secs: None, next_visit: None }))
            .map_err(|e| self.err(e))
    }

    pub fn set_board_schedule(&self, site: &str, board: &str, interval_secs: i64, next_visit: i64) -> Result<(), StoreError> {
        self.conn
            .execute("UPDATE boards SET interval_secs = ?3, next_visit = ?4 WHERE site = ?1 AND board = ?2", params![site, board, interval_secs, next_visit])
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The earliest scheduled board visit (unix seconds), over all boards of the given sites.
    pub fn next_board_visit(&self, sites: &[String]) -> Result<Option<i64>, StoreError> {
        let mut best: Option<i64> = None;
        for site in sites {
            let v: Option<i64> = self
                .conn
                .query_row("SELECT min(COALESCE(next_visit, 0)) FROM boards WHERE site = ?1", [site], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            if let Some(v) = v {
                best = Some(best.map_or(v, |b: i64| b.min(v)));
            }
        }
        Ok(best)
    }

    pub fn record_round(&self, r: &RoundRecord) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO rounds (site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![r.site, r.started_at, r.finished_at, r.requests, r.list_pages, r.boards_visited, r.boards_skipped, r.new_threads, r.updated_threads, r.errors],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// A keyword's record; a keyword never monitored starts with both
    /// `lastresult` and `pagenum` at `max_pages` (S0: 30) and no watermark.
    pub fn keyword_state(&self, site: &str, keyword: &str, max_pages: u32) -> Result<KeywordState, StoreError> {
        let fresh = KeywordState { site: site.to_owned(), keyword: keyword.to_owned(), lastresult: max_pages, pagenum: max_pages, watermark: None, rounds: 0, last_error: None };
        let mut states = self.keyword_states_where(Some(site), Some(keyword))?;
        Ok(states.pop().unwrap_or(fresh))
    }

    /// Every keyword record of a site (or all), by site and keyword.
    pub fn keyword_states(&self, site: Option<&str>) -> Result<Vec<KeywordState>, StoreError> {
        self.keyword_states_where(site, None)
    }

    fn keyword_states_where(&self, site: Option<&str>, keyword: Option<&str>) -> Result<Vec<KeywordState>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT site, keyword, lastresult, pagenum, watermark, rounds,
                    (SELECT error FROM keyword_rounds r WHERE r.site = k.site AND r.keyword = k.keyword ORDER BY id DESC LIMIT 1)
                 FROM keywords k WHERE (?1 IS NULL OR site = ?1) AND (?2 IS NULL OR keyword = ?2) ORDER BY site, keyword",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![site, keyword], |r| {
                Ok(KeywordState { site: r.get(0)?, keyword: r.get(1)?, lastresult: r.get(2)?, pagenum: r.get(3)?, watermark: r.get(4)?, rounds: r.get(5)?, last_error: r.get(6)? })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e));
        rows
    }

    /// Stores a keyword's round: its new record and a line of history, in one transaction.
    pub fn record_keyword_round(&mut self, r: &KeywordRound) -> Result<(), StoreError> {
        self.in_tx(|tx, err| {
            tx.execute(
                "INSERT INTO keywords (site, keyword, lastresult, pagenum, watermark, rounds) VALUES (?1, ?2, ?3, ?4, ?5, 1)
                 ON CONFLICT(site, keyword) DO UPDATE SET lastresult = excluded.lastresult, pagenum = excluded.pagenum,
                    watermark = excluded.watermark, rounds = keywords.rounds + 1, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')",
                params![r.site, r.keyword, r.lastresult, r.next_pagenum, r.watermark_after],
            )
            .map_err(err)?;
            tx.execute(
                "INSERT INTO keyword_rounds (site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after,
                    results, new_threads, updated_threads, errors, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    r.site,
                    r.keyword,
                    r.started_at,
                    r.budget,
                    r.pages_read,
                    r.lastresult,
                    r.next_pagenum,
                    r.watermark_before,
                    r.watermark_after,
                    r.results,
                    r.new_threads,
                    r.updated_threads,
                    r.errors,
                    r.error
                ],
            )
            .map_err(err)?;
            Ok(())
        })
    }

    /// When `account` (`""` without one) last started a search on `site`, in
    /// Unix milliseconds: a forum's interval between searches spans runs.
    pub fn last_search(&self, site: &str, account: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row("SELECT last_search_ms FROM search_accounts WHERE site = ?1 AND account = ?2", params![site, account], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn set_last_search(&self, site: &str, account: &str, unix_ms: i64) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO search_accounts (site, account, last_search_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(site, account) DO UPDATE SET last_search_ms = max(last_search_ms, excluded.last_search_ms)",
                params![site, account, unix_ms],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The keyword round history of a site (or all), oldest first.
    pub fn keyword_rounds(&self, site: Option<&str>) -> Result<Vec<KeywordRound>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after,
                    results, new_threads, updated_threads, errors, error FROM keyword_rounds WHERE ?1 IS NULL OR site = ?1 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([site], |r| {
                Ok(KeywordRound {
                    site: r.get(0)?,
                    keyword: r.get(1)?,
                    started_at: r.get(2)?,
                    budget: r.get(3)?,
                    pages_read: r.get(4)?,
                    lastresult: r.get(5)?,
                    next_pagenum: r.get(6)?,
                    watermark_before: r.get(7)?,
                    watermark_after: r.get(8)?,
                    results: r.get(9)?,
                    new_threads: r.get(10)?,
                    updated_threads: r.get(11)?,
                    errors: r.get(12)?,
                    error: r.get(13)?,
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e));
        rows
    }

    pub fn last_round(&self, site: &str) -> Result<Option<RoundRecord>, StoreError> {
        self.conn
            .query_row(
                "SELECT site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors
                 FROM rounds WHERE site = ?1 ORDER BY id DESC LIMIT 1",
                [site],
                |r| {
                    Ok(RoundRecord {
                        site: r.get(0)?,
                        started_at: r.get(1)?,
                        finished_at: r.get(2)?,
                        requests: r.get(3)?,
                        list_pages: r.get(4)?,
                        boards_visited: r.get(5)?,
                        boards_skipped: r.get(6)?,
                        new_threads: r.get(7)?,
                        updated_threads: r.get(8)?,
                        errors: r.get(9)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Threads of `state`, optionally of one site, in (site, thread) order.
    pub fn threads(&self, site: Option<&str>, state: ThreadState) -> Result<Vec<ThreadRow>, StoreError> {
        let sql = format!(
            "SELECT {ROW_COLUMNS} FROM threads WHERE state = ?1 AND (?2 IS NULL OR site = ?2) ORDER BY site, length(thread), thread"
        );
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![state.code(), site], row_from_sql)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|r| r.into_row(&self.path)).collect()
    }

    /// One thread's row.
    pub fn thread(&self, site: &str, thread: &str) -> Result<Option<ThreadRow>, StoreError> {
        let sql = format!("SELECT {ROW_COLUMNS} FROM threads WHERE site = ?1 AND thread = ?2");
        let raw = self
            .conn
            .query_row(&sql, params![site, thread], row_from_sql)
            .optional()
            .map_err(|e| self.err(e))?;
        raw.map(|r| r.into_row(&self.path)).transpose()
    }

    /// Moves one thread `from → to` (checked against the state machine),
    /// setting the columns in `update`. Returns false, changing nothing, when
    /// the row is no longer in `from` (someone else moved it).
    pub fn transition(&self, site: &str, thread: &str, from: ThreadState, to: ThreadState, update: &Update) -> Result<bool, StoreError> {
        if !from.can_become(to) {
            return Err(StoreError::Transition { path: self.path.clone(), site: site.into(), thread: thread.into(), from, to });
        }
        let clears_failure = to != ThreadState::Failed;
        let n = self
            .conn
            .execute(
                "UPDATE threads SET state = ?4,
                    save_date = COALESCE(?5, save_date),
                    pages = COALESCE(?6, pages),
                    content_type = COALESCE(?7, content_type),
                    post_time = COALESCE(?8, post_time),
                    title = COALESCE(?9, title),
                    fail_stage = CASE WHEN ?10 THEN NULL ELSE fail_stage END,
                    fail_reason = CASE WHEN ?10 THEN NULL ELSE fail_reason END,
                    updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                 WHERE site = ?1 AND thread = ?2 AND state = ?3",
                params![
                    site,
                    thread,
                    from.code(),
                    to.code(),
                    update.save_date,
                    update.pages,
                    update.content_type,
                    update.post_time,
                    update.title,
                    clears_failure
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Marks a thread failed at `stage` with a one-line reason.
    pub fn fail(&self, site: &str, thread: &str, from: ThreadState, stage: Stage, reason: &str) -> Result<bool, StoreError> {
        if !from.can_become(ThreadState::Failed) {
            return Err(StoreError::Transition { path: self.path.clone(), site: site.into(), thread: thread.into(), from, to: ThreadState::Failed });
        }
        let n = self
            .conn
            .execute(
                "UPDATE threads SET state = -1, fail_stage = ?4, fail_reason = ?5, attempts = attempts + 1,
                    updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                 WHERE site = ?1 AND thread = ?2 AND state = ?3",
                params![site, thread, from.code(), stage.as_str(), reason],
            )
            .map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Moves many threads `from → to` in one transaction (the index stage
    /// commits its index first, then calls this once).
    pub fn transition_many(&mut self, keys: &[(String, String)], from: ThreadState, to: ThreadState) -> Result<usize, StoreError> {
        if !from.can_become(to) {
            let (site, thread) = keys.first().cloned().unwrap_or_default();
            return Err(StoreError::Transition { path: self.path.clone(), site, thread, from, to });
        }
        self.in_tx(|tx, err| {
            let mut n = 0;
            {
                let mut stmt = tx
                    .prepare_cached(
                        "UPDATE threads SET state = ?4, fail_stage = NULL, fail_reason = NULL,
                            updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                         WHERE site = ?1 AND thread = ?2 AND state = ?3",
                    )
                    .map_err(err)?;
                for (site, thread) in keys {
                    n += stmt.execute(params![site, thread, from.code(), to.code()]).map_err(err)?;
                }
            }
            Ok(n)
        })
    }

    /// Sends failed threads (of one stage, or all) back to where that stage
    /// starts; returns how many. A failed download restarts as discovered, a
    /// failed extract as saved, a failed index as extracted.
    pub fn retry_failed(&self, site: Option<&str>, stage: Option<Stage>) -> Result<usize, StoreError> {
        let mut total = 0;
        for st in [Stage::Download, Stage::Extract, Stage::Index] {
            if stage.is_some_and(|s| s != st) {
                continue;
            }
            total += self
                .conn
                .execute(
                    "UPDATE threads SET state = ?1, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                     WHERE state = -1 AND fail_stage = ?2 AND (?3 IS NULL OR site = ?3)",
                    params![st.input().code(), st.as_str(), site],
                )
                .map_err(|e| self.err(e))?;
        }
        Ok(total)
    }

    /// Per-site counts for `luntan-status`, sites in id order.
    pub fn counts(&self) -> Result<Vec<SiteCounts>, StoreError> {
        let mut out: Vec<SiteCounts> = Vec::new();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT s.site, COALESCE(b.n, 0) FROM
                   (SELECT id AS site FROM sites UNION SELECT DISTINCT site FROM threads) s
                   LEFT JOIN (SELECT site, count(*) AS n FROM boards GROUP BY site) b ON b.site = s.site
                 ORDER BY s.site",
            )
            .map_err(|e| self.err(e))?;
        let sites = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        for (site, boards) in sites {
            out.push(SiteCounts { site, boards, ..Default::default() });
        }
        let mut stmt = self.conn.prepare("SELECT site, state, count(*) FROM threads GROUP BY site, state").map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        for (site, code, n) in rows {
            let Some(c) = out.iter_mut().find(|c| c.site == site) else { continue };
            match ThreadState::from_code(code) {
                Some(ThreadState::Discovered) => c.discovered = n,
                Some(ThreadState::Saved) => c.saved = n,
                Some(ThreadState::Extracted) => c.extracted = n,
                Some(ThreadState::Indexed) => c.indexed = n,
                Some(ThreadState::Failed) => c.failed = n,
                None => {}
            }
        }
        let mut stmt = self
            .conn
            .prepare("SELECT site, COALESCE(fail_stage, '?'), thread, COALESCE(fail_reason, '?') FROM threads WHERE state = -1 ORDER BY site, rowid")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        for c in &mut out {
            let mine: Vec<(&str, String, &str)> = rows.iter().filter(|r| r.0 == c.site).map(|(site, stage, thread, reason)| (stage.as_str(), format!("{site}/{thread}"), reason.as_str())).collect();
            c.failures = crate::state::group_failures(mine.iter().map(|(stage, thread, reason)| (*stage, thread.as_str(), *reason)));
        }
        for c in &mut out {
            c.last_round = self.last_round(&c.site)?;
            c.skipped_links = self
                .conn
                .query_row("SELECT count(*) FROM skipped_links WHERE site = ?1", [&c.site], |r| r.get(0))
                .map_err(|e| self.err(e))?;
            let mut stmt = self
                .conn
                .prepare_cached("SELECT url, score FROM skipped_links WHERE site = ?1 ORDER BY score DESC, thread LIMIT 5")
                .map_err(|e| self.err(e))?;
            c.top_skipped = stmt
                .query_map([&c.site], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.err(e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.err(e))?;
        }
        Ok(out)
    }
}

struct RawRow {
    site: String,
    thread: String,
    board: String,
    url: String,
    title: Option<String>,
    replies: Option<i64>,
    last_post: Option<String>,
    post_time: Option<String>,
    save_date: Option<String>,
    pages: Option<u32>,
    content_type: Option<String>,
    state: i64,
    fail_stage: Option<String>,
    fail_reason: Option<String>,
    attempts: i64,
}

fn row_from_sql(r: &rusqlite::Row) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        site: r.get(0)?,
        thread: r.get(1)?,
        board: r.get(2)?,
        url: r.get(3)?,
        title: r.get(4)?,
        replies: r.get(5)?,
        last_post: r.get(6)?,
        post_time: r.get(7)?,
        save_date: r.get(8)?,
        pages: r.get(9)?,
        content_type: r.get(10)?,
        state: r.get(11)?,
        fail_stage: r.get(12)?,
        fail_reason: r.get(13)?,
        attempts: r.get(14)?,
    })
}

impl RawRow {
    fn into_row(self, path: &Path) -> Result<ThreadRow, StoreError> {
        let state = ThreadState::from_code(self.state).ok_or_else(|| StoreError::BadState {
            path: path.to_owned(),
            site: self.site.clone(),
            thread: self.thread.clone(),
            code: self.state,
        })?;
        Ok(ThreadRow {
            site: self.site,
            thread: self.thread,
            board: self.board,
            url: self.url,
            title: self.title,
            replies: self.replies,
            last_post: self.last_post,
            post_time: self.post_time,
            save_date: self.save_date,
            pages: self.pages,
            content_type: self.content_type,
            state,
            fail_stage: self.fail_stage,
            fail_reason: self.fail_reason,
            attempts: self.attempts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nt(thread: &str) -> NewThread {
        NewThread { site: "dz".into(), board: "2".into(), thread: thread.into(), url: format!("http://h/t/{thread}"), title: Some("标题".into()), ..Default::default() }
    }

    #[test]
    fn new_threads_are_inserted_once() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        assert_eq!(s.insert_new_threads(&[nt("1"), nt("2")]).unwrap(), 2);
        assert_eq!(s.insert_new_threads(&[nt("2"), nt("3")]).unwrap(), 1);
        let rows = s.threads(Some("dz"), ThreadState::Discovered).unwrap();
        assert_eq!(rows.iter().map(|r| r.thread.as_str()).collect::<Vec<_>>(), ["1", "2", "3"]);
    }

    #[test]
    fn listings_insert_new_requeue_grown_and_leave_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        let row = |thread: &str, replies: i64, last: &str| NewThread { replies: Some(replies), last_post: Some(last.into()), ..nt(thread) };
        let first = s.record_listings(&[row("1", 3, "2024-03-05T10:00:00"), row("2", 0, "2024-03-04T10:00:00")]).unwrap();
        assert_eq!(first, [Listing::New, Listing::New]);
        // Thread 1 got indexed; then a new reply shows on the list.
        let up = Update { save_date: Some("20261130"), pages: Some(1), ..Default::default() };
        s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).unwrap();
        s.transition("dz", "1", ThreadState::Saved, ThreadState::Extracted, &Update::default()).unwrap();
        s.transition("dz", "1", ThreadState::Extracted, ThreadState::Indexed, &Update::default()).unwrap();
        let second = s.record_listings(&[row("1", 4, "2024-03-06T09:00:00"), row("2", 0, "2024-03-04T10:00:00"), row("3", 0, "2024-03-06T08:00:00")]).unwrap();
        assert_eq!(second, [Listing::Updated, Listing::Unchanged, Listing::New]);
        let one = s.thread("dz", "1").unwrap().unwrap();
        assert_eq!((one.state, one.replies, one.last_post.as_deref()), (ThreadState::Discovered, Some(4), Some("2024-03-06T09:00:00")));
        assert_eq!(one.save_date.as_deref(), Some("20261130"), "the old files stay addressable until replaced");
        // A stale list (fewer replies shown by a cache) never moves a thread back.
        assert_eq!(s.record_listings(&[row("1", 2, "2024-03-01T00:00:00")]).unwrap(), [Listing::Unchanged]);
    }

    #[test]
    fn keyword_records_start_at_the_limit_and_keep_their_history() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        let fresh = s.keyword_state("dz", "考研", 30).unwrap();
        assert_eq!((fresh.lastresult, fresh.pagenum, fresh.watermark, fresh.rounds), (30, 30, None, 0));
        let r = KeywordRound { site: "dz".into(), keyword: "考研".into(), budget: 30, pages_read: 4, lastresult: 4, next_pagenum: 4, watermark_after: Some("2024-06-30T22:00:00".into()), ..Default::default() };
        s.record_keyword_round(&r).unwrap();
        s.record_keyword_round(&KeywordRound { budget: 4, lastresult: 30, next_pagenum: 9, ..r.clone() }).unwrap();
        let st = s.keyword_state("dz", "考研", 30).unwrap();
        assert_eq!((st.lastresult, st.pagenum, st.watermark.as_deref(), st.rounds), (30, 9, Some("2024-06-30T22:00:00"), 2));
        assert_eq!(s.keyword_rounds(Some("dz")).unwrap().iter().map(|r| r.budget).collect::<Vec<_>>(), [30, 4]);
        assert_eq!(s.keyword_states(None).unwrap(), [st]);
    }

    #[test]
    fn hinted_listings_skip_lookups_and_survive_a_wrong_hint() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        let row = |thread: &str, replies: i64| NewThread { replies: Some(replies), last_post: Some("2024-03-05T10:00:00".into()), ..nt(thread) };
        let (l, saved) = s.record_listings_hinted(&[row("1", 1), row("2", 1)], &[false, false]).unwrap();
        assert_eq!((l, saved), (vec![Listing::New, Listing::New], 2));
        // "Surely not stored" about a stored thread: it is still compared, not duplicated.
        let (l, saved) = s.record_listings_hinted(&[row("1", 1), row("2", 2), row("3", 0)], &[false, false, true]).unwrap();
        assert_eq!((l, saved), (vec![Listing::Unchanged, Listing::Updated, Listing::New], 0));
        let mut known = Vec::new();
        assert_eq!(s.for_each_known_thread("dz", |id| known.push(id.to_owned())).unwrap(), 3);
        known.sort();
        assert_eq!(known, ["1", "2", "3"]);
    }

    #[test]
    fn skipped_links_are_kept_with_scores_and_promoted_when_the_threshold_drops() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        s.insert_new_threads(&[nt("1")]).unwrap();
        assert_eq!(s.record_skipped(&[(nt("1"), 0.0), (nt("2"), 0.15), (nt("3"), 0.05)]).unwrap(), [false, true, true], "a queued thread is not skipped");
        assert_eq!(s.record_skipped(&[(nt("2"), 0.15)]).unwrap(), [false]);
        let c = &s.counts().unwrap()[0];
        assert_eq!(c.skipped_links, 2);
        assert_eq!(c.top_skipped[0], ("http://h/t/2".to_string(), 0.15));
        assert_eq!(s.promote_skipped("dz", 0.1).unwrap(), 1);
        assert_eq!(s.thread("dz", "2").unwrap().unwrap().state, ThreadState::Discovered);
        assert_eq!(s.counts().unwrap()[0].skipped_links, 1);
    }

    #[test]
    fn a_board_walk_that_broke_off_is_reported_at_the_next_start() {
        let t = tempfile::tempdir().unwrap();
        let s = Store::open(&t.path().join("luntan.db")).unwrap();
        s.upsert_board("dz", "2", "http://h/b/2", None).unwrap();
        assert!(!s.begin_board_walk("dz", "2").unwrap(), "a new board has no broken walk");
        // Killed here: the next start must know.
        assert!(s.begin_board_walk("dz", "2").unwrap());
        s.board_visited("dz", "2", 3, true).unwrap();
        assert!(!s.begin_board_walk("dz", "2").unwrap());
        s.board_visited("dz", "2", 1, false).unwrap();
        assert!(s.begin_board_walk("dz", "2").unwrap(), "a walk with a failed page counts as broken off");
    }

    #[test]
    fn a_failed_batch_keeps_none_of_its_changes() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        s.insert_new_threads(&[nt("1"), nt("2")]).unwrap();
        let up = Update { save_date: Some("20261130"), pages: Some(1), ..Default::default() };
        let r: Result<(), StoreError> = s.batch(|s| {
            s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up)?;
            s.transition("dz", "2", ThreadState::Discovered, ThreadState::Indexed, &up)?;
            Ok(())
        });
        assert!(r.is_err());
        assert_eq!(s.thread("dz", "1").unwrap().unwrap().state, ThreadState::Discovered, "rolled back");
        s.batch(|s| s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).map(drop)).unwrap();
        assert_eq!(s.thread("dz", "1").unwrap().unwrap().state, ThreadState::Saved);
    }

    #[test]
    fn transitions_follow_the_machine_and_are_compare_and_set() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&t.path().join("luntan.db")).unwrap();
        s.insert_new_threads(&[nt("1")]).unwrap();
        let up = Update { save_date: Some("20261130"), pages: Some(2), ..Default::default() };
        assert!(s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).unwrap());
        // A second worker that read the row as discovered loses the race.
        assert!(!s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).unwrap());
        assert!(matches!(s.transition("dz", "1", ThreadState::Saved, ThreadState::Indexed, &Update::default()), Err(StoreError::Transition { .. })));
        let row = s.thread("dz", "1").unwrap().unwrap();
        assert_eq!((row.state, row.save_date.as_deref(), row.pages), (ThreadState::Saved, Some("20261130"), Some(2)));
        assert!(s.fail("dz", "1", ThreadState::Saved, Stage::Extract, "no posts").unwrap());
        let c = &s.counts().unwrap()[0];
        assert_eq!((c.failed, c.failures[0].threads), (1, 1));
        assert_eq!(s.retry_failed(None, None).unwrap(), 1);
        assert_eq!(s.thread("dz", "1").unwrap().unwrap().state, ThreadState::Saved);
        assert_eq!(s.transition_many(&[("dz".into(), "1".into())], ThreadState::Saved, ThreadState::Extracted).unwrap(), 1);
    }
}
