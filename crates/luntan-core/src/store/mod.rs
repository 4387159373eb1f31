//! Crawl state in SQLite (`data/luntan.db`): sites, boards and threads.
//!
//! Tables follow S3's SiteInfo / BoardInfo / ArticleInfo. Every state change
//! goes through [`Store::transition`], which checks it against
//! [`ThreadState::can_become`] and only applies it when the row is still in
//! the state the caller read, so a stale worker can never move a row
//! backwards or twice. Callers make the file durable first and then move the
//! row, so the database is never ahead of the disk.
//!
//! This module holds the connection, its errors, the one transaction helper
//! ([`Store::batch`]) and the schema migrations (`migrations/*.sql`, applied
//! in order and counted in SQLite's `user_version`); the statements live
//! beside their tables: `threads` (rows, transitions, counts), `boards`
//! (sites, boards, rounds, skipped links) and `keywords` (keyword records,
//! rounds and search accounts).

/// A `$T` read from a result row whose columns are the fields named here, in
/// the SELECT's order: the column indices follow from that order, so none is
/// written, or renumbered when a column is added, by hand.
macro_rules! read_row {
    ($row:expr, $T:ident { $($field:ident),* $(,)? }) => {{
        let mut column = 0..;
        $T { $($field: $row.get(column.next().unwrap())?),* }
    }};
}

mod boards;
mod keywords;
#[cfg(test)]
mod tests;
mod threads;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::state::ThreadState;

pub use boards::{BoardRow, BoardSchedule, RoundRecord, Validators};
pub use keywords::{KeywordRound, KeywordState};
pub use threads::{Listing, NewThread, SiteCounts, SiteStatus, ThreadRow, Update};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("{}: refused transition {from} → {to} for thread {site}/{thread}", path.display())]
    Transition { path: PathBuf, site: String, thread: String, from: ThreadState, to: ThreadState },
    #[error("{}: unknown state code {code} for thread {site}/{thread}", path.display())]
    BadState { path: PathBuf, site: String, thread: String, code: i64 },
    #[error("{}: database schema version {version} is newer than this luntan knows ({SCHEMA_VERSION}); use the luntan that wrote it, or a newer one", path.display())]
    NewerSchema { path: PathBuf, version: i64 },
    #[error("{}: not a luntan database this version can read: {why}", path.display())]
    UnknownSchema { path: PathBuf, why: String },
}

/// The schema's history, oldest first: migration `n` (counting from 1) takes
/// a database from `user_version` n-1 to n. A database records how far it
/// got, so a column added later reaches every existing database exactly once.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_tables.sql"),
    include_str!("migrations/0002_keyword_round_error.sql"),
    include_str!("migrations/0003_search_accounts.sql"),
    include_str!("migrations/0004_browser_states.sql"),
    include_str!("migrations/0005_validators.sql"),
];

/// The schema version this code reads and writes (SQLite's `user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The crawl-state database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its
    /// schema up to [`SCHEMA_VERSION`]; a database from a newer luntan is
    /// refused before anything in it changes.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let err = |source| StoreError::Sqlite { path: path.to_owned(), source };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(err)?;
        let store = Store { conn, path: path.to_owned() };
        let version = store.user_version()?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { path: path.to_owned(), version });
        }
        // WAL lets `luntan-status` read while a stage writes; FULL sync keeps a
        // committed transition across a power cut.
        store.conn.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        store.conn.pragma_update(None, "synchronous", "FULL").map_err(err)?;
        if version != SCHEMA_VERSION {
            store.migrate()?;
        }
        Ok(store)
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

    /// Runs the migrations the database has not had, each in its own
    /// transaction together with its `user_version`. The version is read again
    /// inside each transaction: two stages opening a new database at once
    /// must not both run a migration.
    fn migrate(&self) -> Result<(), StoreError> {
        loop {
            let done = self.batch(|s| {
                let version = match s.user_version()? {
                    0 => s.version_before_versions()?,
                    v => v,
                };
                if version > SCHEMA_VERSION {
                    return Err(StoreError::NewerSchema { path: s.path.clone(), version });
                }
                if version < SCHEMA_VERSION {
                    s.conn.execute_batch(MIGRATIONS[version as usize]).map_err(|e| s.err(e))?;
                    s.set_user_version(version + 1)?;
                }
                Ok(version + 1 >= SCHEMA_VERSION)
            })?;
            if done {
                return Ok(());
            }
        }
    }

    /// What a database at `user_version` 0 holds: nothing (a new file, so
    /// version 0), or tables made by luntan before the schema had a version,
    /// which every such release created with `CREATE TABLE IF NOT EXISTS` on
    /// each open. Those are taken as version 1, 2 or 3 by what they hold, and
    /// the version is recorded, so the file is brought up to date rather than
    /// made again.
    fn version_before_versions(&self) -> Result<i64, StoreError> {
        let tables = columns(&self.conn).map_err(|e| self.err(e))?;
        if tables.is_empty() {
            return Ok(0);
        }
        let unknown = |why: String| StoreError::UnknownSchema { path: self.path.clone(), why };
        if !tables.iter().any(|(t, _)| t == "threads") {
            return Err(unknown("it has tables but no `threads` table".into()));
        }
        // As those releases did on every open: tables added later are created.
        self.conn.execute_batch(MIGRATIONS[0]).map_err(|e| self.err(e))?;
        let have = columns(&self.conn).map_err(|e| self.err(e))?;
        let v1 = Connection::open_in_memory().and_then(|c| c.execute_batch(MIGRATIONS[0]).and_then(|()| columns(&c))).map_err(|e| self.err(e))?;
        // A column added to a table before versions existed never reached
        // older files; such a file cannot be called version 1.
        if let Some((t, c)) = v1.iter().find(|col| !have.contains(col)) {
            return Err(unknown(format!("made before schema versions, and table `{t}` lacks column `{c}`")));
        }
        // What later releases from before versions added, in order: the file
        // is at the end of the unbroken run of them it has. No migration after
        // these belongs here: from this code on, every file records its version.
        let added = [("keyword_rounds", "error"), ("search_accounts", "last_search_ms")];
        let version = 1 + added.iter().take_while(|&&(t, c)| have.iter().any(|(ht, hc)| ht == t && hc == c)).count() as i64;
        self.set_user_version(version)?;
        Ok(version)
    }

    fn user_version(&self) -> Result<i64, StoreError> {
        self.conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| self.err(e))
    }

    fn set_user_version(&self, version: i64) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "user_version", version).map_err(|e| self.err(e))
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }
}

/// Every (table, column) of the database's own tables.
fn columns(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect();
    rows
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
