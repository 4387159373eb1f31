//! Crawl state: sites, boards and threads, in SQLite (`data/luntan.db`, the
//! default) or in PostgreSQL (one crawl shared by workers on many hosts).
//!
//! Tables follow S3's SiteInfo / BoardInfo / ArticleInfo. Every state change
//! goes through [`Store::transition`], which checks it against
//! [`ThreadState::can_become`] and only applies it when the row is still in
//! the state the caller read (and, for a row claimed under a lease, still
//! this worker's), so a stale worker can never move a row backwards or
//! twice. Callers make the file durable first and then move the row, so the
//! database is never ahead of the disk.
//!
//! Workers sharing one database take their rows with [`Store::claim`]: a
//! batch of rows leased to one worker for a while (PostgreSQL picks them
//! with `FOR UPDATE SKIP LOCKED`, so workers never wait on each other's
//! rows). A worker that dies holds its rows only until the lease runs out.
//!
//! This module holds the connection ([`StateUrl`] says which), its errors,
//! the one transaction helper ([`Store::batch`]) and the schema migrations
//! (`migrations/*.sql` and `migrations/postgres/*.sql`, applied in order and
//! counted in the database); `sql` runs a statement on either engine; the
//! statements live beside their tables: `threads` (rows, claims,
//! transitions, counts), `boards` (sites, boards, rounds, skipped links) and
//! `keywords` (keyword records, rounds and search accounts) and `media`
//! (the media archive's URLs).
//!
//! ```
//! use luntan_core::store::{StateUrl, Store};
//! let t = tempfile::tempdir().unwrap();
//! let db = StateUrl::parse(&t.path().join("luntan.db").display().to_string()).unwrap();
//! assert!(!db.is_shared());
//! let store = Store::connect(&db).unwrap();
//! assert!(store.counts().unwrap().is_empty());
//! assert!(StateUrl::parse("postgres://luntan:secret@db.example/crawl").unwrap().to_string().contains("***"));
//! ```

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
mod claims;
mod copy;
mod gates;
mod keywords;
mod media;
#[cfg(any(test, feature = "scratch"))]
pub mod scratch;
mod sql;
#[cfg(test)]
mod tests;
mod threads;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::state::ThreadState;
use sql::{vals, Conn, Dialect, Row};

pub use boards::{BoardRow, BoardSchedule, RoundRecord, Validators};
pub use claims::{Claims, LeaseKeeper};
pub use copy::{CopyError, CopyReport};
pub use keywords::{KeywordRound, KeywordState};
pub use media::{MediaCounts, MediaRow, MediaStatus};
pub use sql::DbError;
pub use threads::{Listing, NewThread, SiteCounts, SiteStatus, ThreadRow, Update};

/// Where the crawl state lives: a SQLite file (the default,
/// `data/luntan.db`), or a PostgreSQL database that many workers on many
/// hosts share (`postgres://user@host/db`).
#[derive(Clone, PartialEq, Eq)]
pub enum StateUrl {
    Sqlite(PathBuf),
    Postgres(String),
}

impl StateUrl {
    /// The environment variable a stage reads when `--state` is not given.
    pub const ENV: &'static str = "LUNTAN_STATE";

    /// `postgres://…` or `postgresql://…` is PostgreSQL; `sqlite:PATH` or
    /// any other text is a SQLite file's path.
    pub fn parse(s: &str) -> Result<StateUrl, StateUrlError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(StateUrlError::Empty);
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            s.parse::<postgres::Config>().map_err(|source| StateUrlError::NotPostgres { url: redact(s), source })?;
            return Ok(StateUrl::Postgres(s.to_owned()));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            return Err(StateUrlError::UnknownScheme { url: redact(s), scheme: scheme.to_owned() });
        }
        Ok(StateUrl::Sqlite(PathBuf::from(s.strip_prefix("sqlite:").unwrap_or(s))))
    }

    /// The state a stage on `data` uses: `given` (`--state`), else
    /// `$LUNTAN_STATE`, else the data directory's own SQLite file.
    pub fn resolve(given: Option<&str>, data: &crate::layout::DataDir) -> Result<StateUrl, StateUrlError> {
        match given.map(str::to_owned).or_else(|| std::env::var(Self::ENV).ok().filter(|v| !v.trim().is_empty())) {
            Some(s) => StateUrl::parse(&s),
            None => Ok(StateUrl::Sqlite(data.db_path())),
        }
    }

    /// Whether this is a database many workers may share at once; the
    /// stages then claim rows under a lease instead of locking the data directory.
    pub fn is_shared(&self) -> bool {
        matches!(self, StateUrl::Postgres(_))
    }

    /// Whether a stage can find crawl state there without creating it
    /// (a SQLite file that exists; a server is always taken as there).
    pub fn exists(&self) -> bool {
        match self {
            StateUrl::Sqlite(p) => p.exists(),
            StateUrl::Postgres(_) => true,
        }
    }
}

/// Why a `--state` value names no crawl state; a URL in it has its
/// password replaced.
#[derive(Debug, thiserror::Error)]
pub enum StateUrlError {
    #[error("empty: give a postgres:// URL or a SQLite file's path")]
    Empty,
    #[error("{url}: not a PostgreSQL URL luntan can use: {source}")]
    NotPostgres { url: String, source: postgres::Error },
    #[error("{url}: unknown scheme `{scheme}` (postgres:// or a SQLite file's path)")]
    UnknownScheme { url: String, scheme: String },
}

/// A URL shown in messages with its password replaced.
fn redact(s: &str) -> String {
    match url::Url::parse(s) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => s.to_owned(),
    }
}

impl fmt::Display for StateUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateUrl::Sqlite(p) => write!(f, "{}", p.display()),
            StateUrl::Postgres(u) => f.write_str(&redact(u)),
        }
    }
}

impl fmt::Debug for StateUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateUrl({self})")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The engine's error, in the message (not a `source`, so that `{:#}`
    /// does not print it twice).
    #[error("{db}: {error}")]
    Db { db: StateUrl, error: DbError },
    #[error("{db}: refused transition {from} → {to} for thread {site}/{thread}")]
    Transition { db: StateUrl, site: String, thread: String, from: ThreadState, to: ThreadState },
    #[error("{db}: unknown state code {code} for thread {site}/{thread}")]
    BadState { db: StateUrl, site: String, thread: String, code: i64 },
    /// A row luntan cannot have written (every id is checked before it is
    /// stored): the database was edited by hand or by other software.
    #[error("{db}: thread {site}/{thread}: {why}")]
    BadRow { db: StateUrl, site: String, thread: String, why: String },
    #[error("{db}: database schema version {version} is newer than this luntan knows ({SCHEMA_VERSION}); use the luntan that wrote it, or a newer one")]
    NewerSchema { db: StateUrl, version: i64 },
    #[error("{db}: not a luntan database this version can read: {why}")]
    UnknownSchema { db: StateUrl, why: String },
}

/// The schema's history, oldest first: migration `n` (counting from 1) takes
/// a database from version n-1 to n. A database records how far it got
/// (SQLite in `user_version`, PostgreSQL in `luntan_schema`), so a column
/// added later reaches every existing database exactly once. Each engine
/// has its own files, step for step: the same tables in each one's types.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_tables.sql"),
    include_str!("migrations/0002_keyword_round_error.sql"),
    include_str!("migrations/0003_search_accounts.sql"),
    include_str!("migrations/0004_browser_states.sql"),
    include_str!("migrations/0005_validators.sql"),
    include_str!("migrations/0006_leases.sql"),
    include_str!("migrations/0007_claim_order.sql"),
    include_str!("migrations/0008_media.sql"),
];
const POSTGRES_MIGRATIONS: &[&str] = &[
    include_str!("migrations/postgres/0001_tables.sql"),
    include_str!("migrations/postgres/0002_keyword_round_error.sql"),
    include_str!("migrations/postgres/0003_search_accounts.sql"),
    include_str!("migrations/postgres/0004_browser_states.sql"),
    include_str!("migrations/postgres/0005_validators.sql"),
    include_str!("migrations/postgres/0006_leases.sql"),
    include_str!("migrations/postgres/0007_claim_order.sql"),
    include_str!("migrations/postgres/0008_media.sql"),
];
const _: () = assert!(MIGRATIONS.len() == POSTGRES_MIGRATIONS.len());

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Serializes migrations of one PostgreSQL database between workers
/// starting at once (a transaction-scoped advisory lock; any fixed number).
const MIGRATION_LOCK: i64 = 0x6c75_6e74_616e;

/// The crawl-state database.
pub struct Store {
    conn: Conn,
    db: StateUrl,
    /// This process's name in leases (`host:pid`), see [`Store::claim`].
    worker: String,
}

impl Store {
    /// Opens (creating if needed) the SQLite database at `path`; see [`Store::connect`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::connect(&StateUrl::Sqlite(path.to_owned()))
    }

    /// Opens the crawl state at `db` (creating a SQLite file if needed) and
    /// brings its schema up to [`SCHEMA_VERSION`]; a database from a newer
    /// luntan is refused before anything in it changes.
    pub fn connect(db: &StateUrl) -> Result<Store, StoreError> {
        let err = |error: DbError| StoreError::Db { db: db.clone(), error };
        let conn = match db {
            StateUrl::Sqlite(path) => {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let conn = Connection::open(path).map_err(|e| err(e.into()))?;
                conn.busy_timeout(Duration::from_secs(30)).map_err(|e| err(e.into()))?;
                // Every statement the store runs stays prepared.
                conn.set_prepared_statement_cache_capacity(128);
                Conn::Sqlite(conn)
            }
            StateUrl::Postgres(url) => {
                let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| err(e.into()))?;
                if config.get_application_name().is_none() {
                    config.application_name("luntan");
                }
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(Duration::from_secs(10));
                }
                Conn::Postgres(Box::new(sql::Pg::new(config.connect(postgres::NoTls).map_err(|e| err(e.into()))?)))
            }
        };
        let store = Store { conn, db: db.clone(), worker: worker_name() };
        let version = store.schema_version()?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema { db: db.clone(), version });
        }
        if let Conn::Sqlite(c) = &store.conn {
            // WAL lets `luntan-status` read while a stage writes; FULL sync
            // keeps a committed transition across a power cut.
            // Switching a new file to WAL takes an exclusive lock and does
            // not wait in the busy handler: stages opening one new database
            // at once retry it for a while instead of failing.
            let mut tries = 0;
            while let Err(e) = c.pragma_update(None, "journal_mode", "WAL") {
                let busy = matches!(&e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy);
                tries += 1;
                if !busy || tries > 500 {
                    return Err(err(e.into()));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            c.pragma_update(None, "synchronous", "FULL").map_err(|e| err(e.into()))?;
        }
        if version != SCHEMA_VERSION {
            store.migrate()?;
        }
        Ok(store)
    }

    /// Where this store is.
    pub fn db(&self) -> &StateUrl {
        &self.db
    }

    /// This process's name in the leases it takes.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Names this process in leases; tests give each simulated worker its own.
    pub fn set_worker(&mut self, worker: impl Into<String>) {
        self.worker = worker.into();
    }

    /// Lets this connection's commits return before they are on disk (they
    /// still cannot be torn): for state that may be lost in a power cut but
    /// must be quick, the shared politeness gate's, whose commit is the
    /// moment a request may start. SQLite: `synchronous = NORMAL` (WAL, this
    /// connection only); PostgreSQL: `synchronous_commit = off` (this session).
    pub fn relax_durability(&self) -> Result<(), StoreError> {
        match &self.conn {
            Conn::Sqlite(c) => c.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.err(e.into())),
            Conn::Postgres(_) => self.conn.batch("SET synchronous_commit = off").map_err(|e| self.err(e)),
        }
    }

    /// Runs `f` in one transaction: committed when `f` returns `Ok`, rolled
    /// back when it returns `Err` or panics. This is the store's only way to
    /// group statements; every method that writes more than once uses it, and
    /// callers use it to move a whole chunk of rows with one commit (one fsync)
    /// instead of one per row.
    ///
    /// On SQLite the outermost call takes the write lock at once (`BEGIN
    /// IMMEDIATE`): stages run as separate processes on one file, and a
    /// transaction that read first and wrote later could otherwise fail
    /// half-way with `SQLITE_BUSY` once another stage has written. A call
    /// inside another one (a grouping `&self` method called from a caller's
    /// batch) is a savepoint of it: undone alone when it fails, committed
    /// with the outer one. Methods taking `&mut self` cannot be called
    /// inside, since `f` gets `&Store`.
    pub fn batch<T, E: From<StoreError>>(&self, f: impl FnOnce(&Store) -> Result<T, E>) -> Result<T, E> {
        let tx = Tx::begin(self)?;
        let out = f(self)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs a statement; how many rows it changed.
    fn exec(&self, sql: &'static str, vals: &[sql::Val<'_>]) -> Result<usize, StoreError> {
        self.conn.execute(sql, vals).map_err(|e| self.err(e))
    }

    /// Runs a query and reads each row with `read`.
    fn query<T>(&self, sql: &'static str, vals: &[sql::Val<'_>], read: impl FnMut(&Row) -> Result<T, DbError>) -> Result<Vec<T>, StoreError> {
        let rows = self.conn.query(sql, vals).map_err(|e| self.err(e))?;
        rows.iter().map(read).collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// A query whose rows are a forum and two numbers (per-site counts
    /// and sums), read as such.
    fn per_site(&self, sql: &'static str) -> Result<Vec<(String, i64, i64)>, StoreError> {
        self.query(sql, &[], |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?, r.get::<i64>(2)?)))
    }

    /// The first row of a query, read with `read`.
    fn query_first<T>(&self, sql: &'static str, vals: &[sql::Val<'_>], read: impl FnOnce(&Row) -> Result<T, DbError>) -> Result<Option<T>, StoreError> {
        let row = self.conn.query_first(sql, vals).map_err(|e| self.err(e))?;
        row.as_ref().map(read).transpose().map_err(|e| self.err(e))
    }

    fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// Runs the migrations the database has not had, each in its own
    /// transaction together with its version. The version is read again
    /// inside each transaction: two stages opening a new database at once
    /// must not both run a migration.
    fn migrate(&self) -> Result<(), StoreError> {
        loop {
            let done = self.batch(|s| {
                let version = match (s.dialect(), s.schema_version_locked()?) {
                    (Dialect::Sqlite, 0) => s.version_before_versions()?,
                    (_, v) => v,
                };
                if version > SCHEMA_VERSION {
                    return Err(StoreError::NewerSchema { db: s.db.clone(), version });
                }
                if version < SCHEMA_VERSION {
                    let migrations = match s.dialect() {
                        Dialect::Sqlite => MIGRATIONS,
                        Dialect::Postgres => POSTGRES_MIGRATIONS,
                    };
                    s.conn.batch(migrations[version as usize]).map_err(|e| s.err(e))?;
                    s.set_schema_version(version + 1)?;
                }
                Ok(version + 1 >= SCHEMA_VERSION)
            })?;
            if done {
                return Ok(());
            }
        }
    }

    /// The schema version, read without a lock (0: a new database).
    fn schema_version(&self) -> Result<i64, StoreError> {
        match &self.conn {
            Conn::Sqlite(c) => c.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| self.err(e.into())),
            Conn::Postgres(_) => {
                let table = self.query_first("SELECT to_regclass('luntan_schema')::text", &[], |r| r.get::<Option<String>>(0))?;
                if table.flatten().is_none() {
                    return Ok(0);
                }
                Ok(self.query_first("SELECT version FROM luntan_schema", &[], |r| r.get(0))?.unwrap_or(0))
            }
        }
    }

    /// The schema version, inside a migration's transaction: on PostgreSQL
    /// it first waits for any other worker's migration to end.
    fn schema_version_locked(&self) -> Result<i64, StoreError> {
        if let Conn::Postgres(_) = self.conn {
            self.query_first("SELECT pg_advisory_xact_lock(?1)::text", vals![MIGRATION_LOCK], |_| Ok(()))?;
            self.conn.batch("CREATE TABLE IF NOT EXISTS luntan_schema (version BIGINT NOT NULL)").map_err(|e| self.err(e))?;
        }
        self.schema_version()
    }

    fn set_schema_version(&self, version: i64) -> Result<(), StoreError> {
        match &self.conn {
            Conn::Sqlite(c) => c.pragma_update(None, "user_version", version).map_err(|e| self.err(e.into())),
            Conn::Postgres(_) => {
                self.exec("DELETE FROM luntan_schema", &[])?;
                self.exec("INSERT INTO luntan_schema (version) VALUES (?1)", vals![version]).map(drop)
            }
        }
    }

    /// What a SQLite database at `user_version` 0 holds: nothing (a new
    /// file, so version 0), or tables made by luntan before the schema had a
    /// version, which every such release created with `CREATE TABLE IF NOT
    /// EXISTS` on each open. Those are taken as version 1, 2 or 3 by what
    /// they hold, and the version is recorded, so the file is brought up to
    /// date rather than made again.
    fn version_before_versions(&self) -> Result<i64, StoreError> {
        let Conn::Sqlite(conn) = &self.conn else { return Ok(0) };
        let sqlite = |e: rusqlite::Error| self.err(e.into());
        let tables = columns(conn).map_err(sqlite)?;
        if tables.is_empty() {
            return Ok(0);
        }
        let unknown = |why: String| StoreError::UnknownSchema { db: self.db.clone(), why };
        if !tables.iter().any(|(t, _)| t == "threads") {
            return Err(unknown("it has tables but no `threads` table".into()));
        }
        // As those releases did on every open: tables added later are created.
        conn.execute_batch(MIGRATIONS[0]).map_err(sqlite)?;
        let have = columns(conn).map_err(sqlite)?;
        let v1 = Connection::open_in_memory().and_then(|c| c.execute_batch(MIGRATIONS[0]).and_then(|()| columns(&c))).map_err(sqlite)?;
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
        self.set_schema_version(version)?;
        Ok(version)
    }

    fn err(&self, error: DbError) -> StoreError {
        StoreError::Db { db: self.db.clone(), error }
    }
}

/// `host:pid`: unique among live workers, and readable in `luntan-status`.
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    format!("{host}:{}", std::process::id())
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
        let nested = store.conn.begin().map_err(|e| store.err(e))?;
        Ok(Tx { store, nested, open: true })
    }

    fn commit(mut self) -> Result<(), StoreError> {
        self.open = false;
        self.store.conn.end(self.nested, true).map_err(|e| self.store.err(e))
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // Errors are moot here: the engine may have rolled back already.
            let _ = self.store.conn.end(self.nested, false);
        }
    }
}
