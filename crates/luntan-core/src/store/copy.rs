//! Moving a whole crawl state from one database to another: SQLite to
//! PostgreSQL when one machine is no longer enough, PostgreSQL to SQLite to
//! come back (or to keep a file of it), and either to its own kind.
//!
//! [`Store::copy_into`] copies every table into an empty database in one
//! transaction on the target, then reads both sides again, row for row, before
//! it commits: a copy that does not match is never left behind. What is
//! copied is every column of every row, as stored: ids, NULLs, REALs and texts
//! exactly, `rounds.id` and `keyword_rounds.id` with their values (on
//! PostgreSQL the identity sequences are then moved past them, so the next
//! round recorded on the copy does not collide), and boards in the order they
//! were first stored (SQLite's rowid, PostgreSQL's `seq`), which is the order a
//! discover round reads them in. Threads go in the order the source lists
//! them in (SQLite's rowid; PostgreSQL's `discovered_at`, then id), so a
//! SQLite copy of a PostgreSQL crawl lists its failed threads in
//! `luntan-status` as PostgreSQL did. (The other way, PostgreSQL lists them by
//! when they were found, as it does any crawl: it has no rowid to keep.)
//!
//! Not copied: what coordinates the workers running on the source at the
//! moment of the copy: leases (`threads.lease_owner`, `threads.lease_until`),
//! `site_locks`, and the shared politeness gates (`gates`, `gate_slots`: each
//! forum's next request time and request slots, which every worker sets up
//! again when it starts). None of those workers works on the copy: carried
//! over, a lease would make the copy's first workers pass over threads (or a
//! whole forum) that nobody holds, until it ran out. A copy starts with every
//! thread and forum free. Nor is the `rounds.error` column some SQLite files
//! from before schema versions still have: nothing reads or writes it.
//!
//! The source is read in one snapshot (a read transaction), so a copy taken
//! while workers still write is still the state at one moment; but what they
//! write after it is not in the copy, so stop them first when moving over.
//! Tables are read a page at a time, by key, so a copy of millions of threads
//! does not hold them all in memory. Every statement is static: table and
//! column names are written here, values are bound.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::fmt;

use super::sql::{vals, Cell, Dialect, Row, Val};
use super::{StateUrl, Store, StoreError};

/// Rows read at a time from each table.
const PAGE: usize = 10_000;

/// Why a copy did not happen (the target is then as it was).
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The target holds crawl state already: a copy never merges into a crawl.
    #[error("{db}: not empty ({what}); a copy goes only into a new SQLite file or an empty PostgreSQL database, never into another crawl")]
    NotEmpty { db: StateUrl, what: String },
    /// A row the target refused.
    #[error("{source} (copying {table} row {key})")]
    Row { table: &'static str, key: String, source: Box<StoreError> },
    /// What the copy reads back differs from the source.
    #[error("{to} differs from {from}: {what}")]
    Differs { from: StateUrl, to: StateUrl, what: String },
}

/// How many rows of each table a copy copied (or a check compared), in the copy's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyReport {
    pub tables: Vec<(&'static str, usize)>,
}

impl CopyReport {
    /// Rows of `table` (0 for a table the report does not name).
    pub fn rows(&self, table: &str) -> usize {
        self.tables.iter().find(|(t, _)| *t == table).map_or(0, |&(_, n)| n)
    }
}

impl fmt::Display for CopyReport {
    /// `3 sites, 12 boards, 6,000 threads, …`: sites, boards and threads
    /// always, the other tables when they hold rows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for t in TABLES {
            let n = self.rows(t.name);
            if n == 0 && !matches!(t.name, "sites" | "boards" | "threads") {
                continue;
            }
            let (one, many) = t.label;
            write!(f, "{}{} {}", if first { "" } else { ", " }, thousands(n), if n == 1 { one } else { many })?;
            first = false;
        }
        Ok(())
    }
}

/// `6000` as `6,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string().into_bytes();
    let groups: Vec<&str> = digits.rchunks(3).rev().map(|g| std::str::from_utf8(g).unwrap_or_default()).collect();
    groups.join(",")
}

/// A table read a page at a time in one order. Each row has the copied
/// columns (as [`Table::columns`] lists them), then `keys` more: where the
/// next page starts. `first` takes the page size as `?1`; `next` takes the
/// last row's keys as `?1`… and the page size after them.
#[derive(Debug, Clone, Copy)]
struct Pages {
    first: &'static str,
    next: &'static str,
    keys: usize,
}

/// One table as the copy handles it. `columns` lists what is copied, its
/// primary key first (`key` columns); every statement lists them alike.
struct Table {
    name: &'static str,
    /// How the summary names its rows (one, many).
    label: (&'static str, &'static str),
    columns: &'static str,
    key: usize,
    insert: &'static str,
    count: &'static str,
    /// By primary key, in byte order on both engines (SQLite's BINARY,
    /// PostgreSQL's "C", whatever the database's collation): the order the
    /// check walks both sides in. [SQLite, PostgreSQL].
    by_key: [Pages; 2],
    /// The order rows were first stored in, where something reads them so:
    /// the copy inserts them in it. `None`: the key's order.
    stored: Option<[Pages; 2]>,
    /// Whether the check also compares the stored order.
    order_checked: bool,
}

impl Table {
    fn width(&self) -> usize {
        self.columns.split(", ").count()
    }

    fn column(&self, i: usize) -> &'static str {
        self.columns.split(", ").nth(i).unwrap_or("?")
    }

    fn pages(which: &[Pages; 2], store: &Store) -> Pages {
        match store.dialect() {
            Dialect::Sqlite => which[0],
            Dialect::Postgres => which[1],
        }
    }
}

/// `SELECT cols, keys FROM table`: a page's columns, the keys after them.
macro_rules! select {
    ($table:literal, $cols:literal, $($k:literal),+) => {
        concat!("SELECT ", $cols $(, ", ", $k)+, " FROM ", $table)
    };
}

/// Pages by an integer column (`id`, `rowid`, `seq`), alike on both engines.
macro_rules! by_int {
    ($table:literal, $cols:literal, $k:literal) => {
        Pages {
            first: concat!(select!($table, $cols, $k), " ORDER BY ", $k, " LIMIT ?1"),
            next: concat!(select!($table, $cols, $k), " WHERE ", $k, " > ?1 ORDER BY ", $k, " LIMIT ?2"),
            keys: 1,
        }
    };
}

/// PostgreSQL: two text columns in byte order, whatever the database's collation.
macro_rules! c_order {
    ($k1:literal, $k2:literal) => {
        concat!(" ORDER BY ", $k1, " COLLATE \"C\", ", $k2, " COLLATE \"C\"")
    };
}

/// PostgreSQL: the rows after (?1, ?2) in `c_order!`'s order.
macro_rules! c_after {
    ($k1:literal, $k2:literal) => {
        concat!(" WHERE ", $k1, " COLLATE \"C\" > ?1 OR (", $k1, " = ?1 AND ", $k2, " COLLATE \"C\" > ?2)")
    };
}

/// [SQLite, PostgreSQL] pages by a text primary key of one or two columns,
/// in byte order on both.
macro_rules! by_text {
    ($table:literal, $cols:literal, $k:literal) => {
        [
            // SQLite compares text by its bytes already: pages as by an integer.
            by_int!($table, $cols, $k),
            Pages {
                first: concat!(select!($table, $cols, $k), " ORDER BY ", $k, " COLLATE \"C\" LIMIT ?1"),
                next: concat!(select!($table, $cols, $k), " WHERE ", $k, " COLLATE \"C\" > ?1 ORDER BY ", $k, " COLLATE \"C\" LIMIT ?2"),
                keys: 1,
            },
        ]
    };
    ($table:literal, $cols:literal, $k1:literal, $k2:literal) => {
        [
            Pages {
                first: concat!(select!($table, $cols, $k1, $k2), " ORDER BY ", $k1, ", ", $k2, " LIMIT ?1"),
                next: concat!(select!($table, $cols, $k1, $k2), " WHERE (", $k1, ", ", $k2, ") > (?1, ?2) ORDER BY ", $k1, ", ", $k2, " LIMIT ?3"),
                keys: 2,
            },
            Pages {
                first: concat!(select!($table, $cols, $k1, $k2), c_order!($k1, $k2), " LIMIT ?1"),
                next: concat!(select!($table, $cols, $k1, $k2), c_after!($k1, $k2), c_order!($k1, $k2), " LIMIT ?3"),
                keys: 2,
            },
        ]
    };
}

/// One table's description from its name, summary label, copied columns
/// (primary key first) and the INSERT's placeholders.
macro_rules! table {
    ($name:literal, $label:expr, $cols:literal, key: $key:literal, values: $values:literal, by_key: $by_key:expr, stored: $stored:expr, order_checked: $checked:literal) => {
        Table {
            name: $name,
            label: $label,
            columns: $cols,
            key: $key,
            insert: concat!("INSERT INTO ", $name, " (", $cols, ") VALUES (", $values, ")"),
            count: concat!("SELECT count(*) FROM ", $name),
            by_key: $by_key,
            stored: $stored,
            order_checked: $checked,
        }
    };
}

/// Every table of the crawl state, in the order copied, but those of live
/// workers (`site_locks`, `gates`, `gate_slots`); each with all its columns
/// but the leases (see the module's documentation). A test holds this list
/// to the schema, so a table or column added later is not silently left out.
const TABLES: &[Table] = &[
    table!(
        "sites",
        ("site", "sites"),
        "id, name, home, encoding, encoding_why, updated_at",
        key: 1,
        values: "?1, ?2, ?3, ?4, ?5, ?6",
        by_key: by_text!("sites", "id, name, home, encoding, encoding_why, updated_at", "id"),
        stored: None,
        order_checked: false
    ),
    table!(
        "boards",
        ("board", "boards"),
        "site, board, url, title, pages_read, last_visit, interval_secs, next_visit, walk_open",
        key: 2,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9",
        by_key: by_text!("boards", "site, board, url, title, pages_read, last_visit, interval_secs, next_visit, walk_open", "site", "board"),
        stored: Some([
            by_int!("boards", "site, board, url, title, pages_read, last_visit, interval_secs, next_visit, walk_open", "rowid"),
            by_int!("boards", "site, board, url, title, pages_read, last_visit, interval_secs, next_visit, walk_open", "seq"),
        ]),
        order_checked: true
    ),
    table!(
        "skipped_links",
        ("skipped link", "skipped links"),
        "site, thread, board, url, anchor, score, seen_at",
        key: 2,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7",
        by_key: by_text!("skipped_links", "site, thread, board, url, anchor, score, seen_at", "site", "thread"),
        stored: None,
        order_checked: false
    ),
    table!(
        "rounds",
        ("discover round", "discover rounds"),
        "id, site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors",
        key: 1,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11",
        by_key: {
            const P: Pages = by_int!(
                "rounds",
                "id, site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors",
                "id"
            );
            [P, P]
        },
        stored: None,
        order_checked: false
    ),
    table!(
        "threads",
        ("thread", "threads"),
        "site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts, \
         discovered_at, updated_at, states_kept, states_dropped",
        key: 2,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19",
        by_key: by_text!(
            "threads",
            "site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts, \
             discovered_at, updated_at, states_kept, states_dropped",
            "site",
            "thread"
        ),
        stored: Some([
            by_int!(
                "threads",
                "site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts, \
                 discovered_at, updated_at, states_kept, states_dropped",
                "rowid"
            ),
            // As `luntan-status` lists PostgreSQL's threads (it has no rowid).
            Pages {
                first: "SELECT site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason,
                        attempts, discovered_at, updated_at, states_kept, states_dropped, site, discovered_at, length(thread), thread
                     FROM threads ORDER BY site, discovered_at, length(thread), thread LIMIT ?1",
                next: "SELECT site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason,
                        attempts, discovered_at, updated_at, states_kept, states_dropped, site, discovered_at, length(thread), thread
                     FROM threads WHERE (site, discovered_at, length(thread), thread) > (?1, ?2, ?3, ?4)
                     ORDER BY site, discovered_at, length(thread), thread LIMIT ?5",
                keys: 4,
            },
        ]),
        order_checked: false
    ),
    table!(
        "keywords",
        ("keyword", "keywords"),
        "site, keyword, lastresult, pagenum, watermark, rounds, updated_at",
        key: 2,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7",
        by_key: by_text!("keywords", "site, keyword, lastresult, pagenum, watermark, rounds, updated_at", "site", "keyword"),
        stored: None,
        order_checked: false
    ),
    table!(
        "keyword_rounds",
        ("keyword round", "keyword rounds"),
        "id, site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after, results, new_threads, \
         updated_threads, errors, error",
        key: 1,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15",
        by_key: {
            const P: Pages = by_int!(
                "keyword_rounds",
                "id, site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after, results, new_threads, \
                 updated_threads, errors, error",
                "id"
            );
            [P, P]
        },
        stored: None,
        order_checked: false
    ),
    table!(
        "search_accounts",
        ("search account", "search accounts"),
        "site, account, last_search_ms",
        key: 2,
        values: "?1, ?2, ?3",
        by_key: by_text!("search_accounts", "site, account, last_search_ms", "site", "account"),
        stored: None,
        order_checked: false
    ),
    table!(
        "validators",
        ("page validator", "page validators"),
        "site, url, etag, last_modified",
        key: 2,
        values: "?1, ?2, ?3, ?4",
        by_key: by_text!("validators", "site, url, etag, last_modified", "site", "url"),
        stored: None,
        order_checked: false
    ),
    table!(
        "media",
        ("media URL", "media URLs"),
        "site, url, sha256, content_type, bytes, status, reason, fetched_at",
        key: 2,
        values: "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8",
        by_key: by_text!("media", "site, url, sha256, content_type, bytes, status, reason, fetched_at", "site", "url"),
        stored: None,
        order_checked: false
    ),
];

/// On PostgreSQL, after ids were inserted as they were: each identity
/// sequence set so that the next id it gives is one past the largest.
const MOVE_SEQUENCES: &[&str] = &[
    "SELECT setval(pg_get_serial_sequence('rounds', 'id'), COALESCE(max(id), 0) + 1, false) FROM rounds",
    "SELECT setval(pg_get_serial_sequence('keyword_rounds', 'id'), COALESCE(max(id), 0) + 1, false) FROM keyword_rounds",
];

impl Store {
    /// Copies this whole crawl state into `to`, which must hold none (a new
    /// SQLite file, an empty PostgreSQL database), in one transaction on
    /// `to`; checks the copy row for row ([`Store::verify_copy`]) before
    /// committing it. `progress` hears what is being done (`"copying
    /// threads"`, `"checking threads"`) and how many rows of it are done.
    /// On any error `to` is left as it was. See the module's documentation
    /// for what is copied and what is not.
    pub fn copy_into(&self, to: &mut Store, progress: impl FnMut(&str, usize)) -> Result<CopyReport, CopyError> {
        self.copy_paged(to, PAGE, progress)
    }

    fn copy_paged(&self, to: &mut Store, page: usize, mut progress: impl FnMut(&str, usize)) -> Result<CopyReport, CopyError> {
        let _snapshot = self.read_snapshot()?;
        to.batch(|dst| {
            dst.refuse_unless_empty()?;
            let mut report = CopyReport { tables: Vec::with_capacity(TABLES.len()) };
            for t in TABLES {
                let phase = format!("copying {}", t.name);
                progress(&phase, 0);
                let mut pages = Reader::new(self, Table::pages(t.stored.as_ref().unwrap_or(&t.by_key), self), page);
                let mut n = 0;
                loop {
                    let rows = pages.next_page()?;
                    for row in &rows {
                        let values: Vec<Val<'_>> = row.0[..t.width()].iter().map(val).collect();
                        dst.exec(t.insert, &values).map_err(|source| CopyError::Row {
                            table: t.name,
                            key: key_text(&row.0[..t.key]),
                            source: Box::new(source),
                        })?;
                    }
                    n += rows.len();
                    progress(&phase, n);
                    if pages.done {
                        break;
                    }
                }
                report.tables.push((t.name, n));
            }
            if dst.dialect() == Dialect::Postgres {
                for sql in MOVE_SEQUENCES {
                    dst.query_first(sql, &[], |_| Ok(()))?;
                }
            }
            let checked = self.verify_paged(dst, page, &mut progress)?;
            if checked != report {
                // Each side was read in one snapshot; this cannot happen.
                return Err(CopyError::Differs { from: self.db.clone(), to: dst.db.clone(), what: format!("copied {report}, but read back {checked}") });
            }
            Ok(report)
        })
    }

    /// Compares every copied table of this store with `other`'s, row for
    /// row by primary key, and the boards' first-stored order; the error
    /// names the first difference (table, row, column, both values). REALs
    /// compare exactly. Leases, site locks and politeness gates are not
    /// compared (a copy does not carry them). Returns the rows compared per table.
    pub fn verify_copy(&self, other: &Store) -> Result<CopyReport, CopyError> {
        let (_mine, _theirs) = (self.read_snapshot()?, other.read_snapshot()?);
        self.verify_paged(other, PAGE, |_, _| {})
    }

    /// [`Store::verify_copy`] in pages of `page` rows, each side read as it
    /// stands (the caller holds the snapshots).
    fn verify_paged(&self, other: &Store, page: usize, mut progress: impl FnMut(&str, usize)) -> Result<CopyReport, CopyError> {
        let differs = |what: String| CopyError::Differs { from: self.db.clone(), to: other.db.clone(), what };
        let mut report = CopyReport { tables: Vec::with_capacity(TABLES.len()) };
        for t in TABLES {
            let phase = format!("checking {}", t.name);
            progress(&phase, 0);
            let n = compare(t, Reader::new(self, Table::pages(&t.by_key, self), page), Reader::new(other, Table::pages(&t.by_key, other), page), false, |n| {
                progress(&phase, n)
            })
            .map_err(|e| e.into_error(&differs))?;
            if let (true, Some(stored)) = (t.order_checked, &t.stored) {
                compare(t, Reader::new(self, Table::pages(stored, self), page), Reader::new(other, Table::pages(stored, other), page), true, |_| {})
                    .map_err(|e| e.into_error(&differs))?;
            }
            report.tables.push((t.name, n));
        }
        Ok(report)
    }

    /// Refuses a target holding any crawl state, naming what it holds.
    fn refuse_unless_empty(&self) -> Result<(), CopyError> {
        let mut held = Vec::new();
        for t in TABLES {
            let n: i64 = self.query_first(t.count, &[], |r| r.get(0))?.unwrap_or(0);
            if n > 0 {
                let (one, many) = t.label;
                held.push(format!("{} {}", thousands(n as usize), if n == 1 { one } else { many }));
            }
        }
        match held.is_empty() {
            true => Ok(()),
            false => Err(CopyError::NotEmpty { db: self.db.clone(), what: held.join(", ") }),
        }
    }

    /// Starts a read transaction, so that what follows reads this store at
    /// one moment (SQLite: a deferred transaction, which in WAL mode does
    /// not hold up writers; PostgreSQL: REPEATABLE READ, READ ONLY). Nothing
    /// when a transaction is open already (the target, inside its batch).
    fn read_snapshot(&self) -> Result<Snapshot<'_>, StoreError> {
        if self.conn.in_transaction() {
            return Ok(Snapshot { store: self, open: false });
        }
        let begin = match self.dialect() {
            Dialect::Sqlite => "BEGIN DEFERRED",
            Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        };
        self.conn.batch(begin).map_err(|e| self.err(e))?;
        Ok(Snapshot { store: self, open: true })
    }
}

/// An open [`Store::read_snapshot`], ended when dropped (it wrote nothing).
struct Snapshot<'a> {
    store: &'a Store,
    open: bool,
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.store.conn.batch("ROLLBACK");
        }
    }
}

/// A table's rows, a page at a time, in one of its orders.
struct Reader<'a> {
    store: &'a Store,
    pages: Pages,
    page: usize,
    /// The last row's keys, once a page was read.
    after: Option<Vec<Cell>>,
    done: bool,
}

impl<'a> Reader<'a> {
    fn new(store: &'a Store, pages: Pages, page: usize) -> Reader<'a> {
        Reader { store, pages, page: page.max(1), after: None, done: false }
    }

    /// The next page (empty once the table is read).
    fn next_page(&mut self) -> Result<Vec<Row>, StoreError> {
        if self.done {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(self.page).unwrap_or(i64::MAX);
        let rows = match &self.after {
            None => self.store.query(self.pages.first, vals![limit], |r| Ok(r.clone()))?,
            Some(keys) => {
                let mut values: Vec<Val<'_>> = keys.iter().map(val).collect();
                values.push(Val::Int(limit));
                self.store.query(self.pages.next, &values, |r| Ok(r.clone()))?
            }
        };
        self.done = rows.len() < self.page;
        if let Some(last) = rows.last() {
            self.after = Some(last.0[last.0.len() - self.pages.keys..].to_vec());
        }
        Ok(rows)
    }
}

/// Where two sides of a comparison first differ (a message still to name the sides).
enum Mismatch {
    Store(StoreError),
    Differs(String),
}

impl From<StoreError> for Mismatch {
    fn from(e: StoreError) -> Self {
        Mismatch::Store(e)
    }
}

impl Mismatch {
    fn into_error(self, differs: &impl Fn(String) -> CopyError) -> CopyError {
        match self {
            Mismatch::Store(e) => e.into(),
            Mismatch::Differs(what) => differs(what),
        }
    }
}

/// Walks two readers of table `t` in step and returns how many rows they
/// had, or the first difference. `in_order`: the readers are in the
/// first-stored order, which must then be the same on both sides.
fn compare(t: &Table, mut a: Reader<'_>, mut b: Reader<'_>, in_order: bool, mut progress: impl FnMut(usize)) -> Result<usize, Mismatch> {
    let (mut left, mut right) = (VecDeque::new(), VecDeque::new());
    let mut n = 0;
    loop {
        if left.is_empty() && !a.done {
            left.extend(a.next_page()?);
        }
        if right.is_empty() && !b.done {
            right.extend(b.next_page()?);
            progress(n);
        }
        let (x, y): (Option<Row>, Option<Row>) = (left.pop_front(), right.pop_front());
        let (x, y) = match (x, y) {
            (None, None) => return Ok(n),
            (Some(x), None) => return Err(Mismatch::Differs(format!("{} row {} is missing", t.name, key_text(&x.0[..t.key])))),
            (None, Some(y)) => return Err(Mismatch::Differs(format!("{} row {} is not in the source", t.name, key_text(&y.0[..t.key])))),
            (Some(x), Some(y)) => (x, y),
        };
        let (kx, ky) = (&x.0[..t.key], &y.0[..t.key]);
        if !cells_equal(kx, ky) {
            let what = match (in_order, key_cmp(kx, ky)) {
                (true, _) => {
                    format!("{} are not in the order first stored: row {} is {} there, {} in the source", t.name, thousands(n + 1), key_text(ky), key_text(kx))
                }
                (false, Ordering::Less) => format!("{} row {} is missing", t.name, key_text(kx)),
                (false, _) => format!("{} row {} is not in the source", t.name, key_text(ky)),
            };
            return Err(Mismatch::Differs(what));
        }
        if let Some(i) = (0..t.width()).find(|&i| !cell_equal(&x.0[i], &y.0[i])) {
            return Err(Mismatch::Differs(format!(
                "{} row {}: {} is {} there, {} in the source",
                t.name,
                key_text(kx),
                t.column(i),
                cell_text(&y.0[i]),
                cell_text(&x.0[i])
            )));
        }
        n += 1;
    }
}

/// A value read, bound again.
fn val(c: &Cell) -> Val<'_> {
    match c {
        Cell::Null => Val::Null,
        Cell::Int(v) => Val::Int(*v),
        Cell::Real(v) => Val::Real(*v),
        Cell::Text(s) => Val::Text(s),
    }
}

/// Whether two values are the same: exactly, but an integer equals a real
/// of the same value (SQLite may hand back an integral REAL as an integer).
fn cell_equal(a: &Cell, b: &Cell) -> bool {
    match (a, b) {
        (Cell::Int(i), Cell::Real(r)) | (Cell::Real(r), Cell::Int(i)) => *i as f64 == *r,
        _ => a == b,
    }
}

fn cells_equal(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| cell_equal(x, y))
}

/// Keys in the order both engines list them (texts by their bytes).
fn key_cmp(a: &[Cell], b: &[Cell]) -> Ordering {
    fn rank(c: &Cell) -> u8 {
        match c {
            Cell::Null => 0,
            Cell::Int(_) | Cell::Real(_) => 1,
            Cell::Text(_) => 2,
        }
    }
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Cell::Int(p), Cell::Int(q)) => p.cmp(q),
            (Cell::Text(p), Cell::Text(q)) => p.as_bytes().cmp(q.as_bytes()),
            (Cell::Real(p), Cell::Real(q)) => p.total_cmp(q),
            _ => rank(x).cmp(&rank(y)),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// A row's key for messages: `(dz, 123)`.
fn key_text(key: &[Cell]) -> String {
    let parts: Vec<String> = key
        .iter()
        .map(|c| match c {
            Cell::Text(s) => s.clone(),
            other => cell_text(other),
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// A value for messages: texts quoted, reals in full.
fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".into(),
        Cell::Int(v) => v.to_string(),
        Cell::Real(v) => format!("{v:?}"),
        Cell::Text(s) => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::scratch::ScratchDb;
    use super::super::{columns, KeywordRound, NewThread, RoundRecord, Update, Validators};
    use super::*;
    use crate::state::{Stage, ThreadState};

    /// A scratch PostgreSQL database and a store on it.
    fn postgres() -> (ScratchDb, Store) {
        let db = ScratchDb::create().unwrap_or_else(|e| panic!("{e}"));
        let s = Store::connect(db.url()).unwrap();
        (db, s)
    }

    /// A SQLite store made by [`fill`] (`a.db` in the returned directory)
    /// and an empty scratch PostgreSQL one, kept while its `ScratchDb` lives.
    fn source_and_postgres() -> (tempfile::TempDir, Store, ScratchDb, Store) {
        let dir = tempfile::tempdir().unwrap();
        let mut src = sqlite(&dir, "a.db");
        fill(&mut src);
        let (db, pg) = postgres();
        (dir, src, db, pg)
    }

    fn sqlite(dir: &tempfile::TempDir, name: &str) -> Store {
        Store::open(&dir.path().join(name)).unwrap()
    }

    fn nt(site: &str, board: &str, thread: &str, title: &str) -> NewThread {
        NewThread {
            site: site.parse().unwrap(),
            board: board.parse().unwrap(),
            thread: thread.parse().unwrap(),
            url: format!("http://h/{site}/t/{thread}?a=1&b='2'"),
            title: Some(title.into()),
            replies: Some(thread.len() as i64),
            last_post: Some("2024-03-01T10:00:00".into()),
        }
    }

    /// A store holding rows in every table: threads in every state (one
    /// failed with a reason, one claimed under a lease), boards stored out
    /// of key order, skipped links with REAL scores, rounds, keywords and
    /// their rounds (one cut short by an error), search accounts,
    /// validators, a site lock; texts in Chinese, with emoji and quotes.
    fn fill(s: &mut Store) {
        s.exec(
            "INSERT INTO sites (id, name, home, encoding, encoding_why, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            vals!["dz", "水木 \"社区\" 🐉", "http://h/dz/", "gb18030", "meta charset='gbk' 😀", "2024-01-02T03:04:05Z"],
        )
        .unwrap();
        s.exec("INSERT INTO sites (id, name, home) VALUES (?1, ?2, ?3)", vals!["bbs", "天涯'论坛", "http://h/bbs/"]).unwrap();
        // Stored out of key order: the copy must keep this order.
        for (site, board, title) in [("dz", "9", Some("九 区")), ("dz", "10", None), ("dz", "2", Some("二'区\"")), ("bbs", "a", Some("🎉"))] {
            s.upsert_board(site, board, &format!("http://h/{site}/b/{board}"), title).unwrap();
        }
        s.begin_board_walk("dz", "9").unwrap();
        s.board_visited("dz", "9", 7, true).unwrap();
        s.set_board_schedule("dz", "9", 3600, 1_700_000_000).unwrap();
        s.begin_board_walk("dz", "10").unwrap();
        let threads: Vec<NewThread> = [
            nt("dz", "9", "30", "考研 \"经验\" 分享 📚"),
            nt("dz", "9", "4", "it's 好"),
            nt("dz", "10", "100", "第三帖"),
            nt("dz", "2", "7", "失败的帖子"),
            nt("dz", "2", "8", "另一个失败"),
            nt("bbs", "a", "x_1", "emoji 🐼🐼"),
        ]
        .into();
        s.insert_new_threads(&threads).unwrap();
        let saved = Update { save_date: Some("20240301".parse().unwrap()), pages: Some(3), content_type: Some("text/html; charset=gbk"), ..Default::default() };
        assert!(s.transition("dz", "30", ThreadState::Discovered, ThreadState::Saved, &saved).unwrap());
        assert!(s
            .transition("dz", "30", ThreadState::Saved, ThreadState::Extracted, &Update { post_time: Some("2024-02-29T23:59:00"), ..Default::default() })
            .unwrap());
        assert!(s.transition("dz", "4", ThreadState::Discovered, ThreadState::Saved, &Update { states: Some((5, 2)), ..saved.clone() }).unwrap());
        assert!(s.transition("dz", "4", ThreadState::Saved, ThreadState::Extracted, &Update::default()).unwrap());
        s.transition_many(&[("dz".parse().unwrap(), "4".parse().unwrap())], ThreadState::Extracted, ThreadState::Indexed).unwrap();
        assert!(s.fail("dz", "7", ThreadState::Discovered, Stage::Download, "http 404: \"gone\" 帖子不存在").unwrap());
        assert!(s.fail("dz", "8", ThreadState::Discovered, Stage::Download, "timed out after 30 s").unwrap());
        assert!(s.transition("bbs", "x_1", ThreadState::Discovered, ThreadState::Saved, &saved).unwrap());
        assert!(s.fail("bbs", "x_1", ThreadState::Saved, Stage::Extract, "no posts matched `div.post`").unwrap());
        // A live worker's lease and site lock: not carried over.
        assert_eq!(s.claim(Some("dz"), ThreadState::Discovered, Duration::from_secs(600), 10).unwrap().len(), 1);
        assert!(s.lock_site(Stage::Index, "dz", Duration::from_secs(600)).unwrap());
        s.record_skipped(&[(nt("dz", "9", "55", "不相关 'x'"), 0.031_25), (nt("dz", "9", "56", "另一个"), 1.0 / 3.0), (nt("bbs", "a", "z", "零"), 0.0)])
            .unwrap();
        for i in 0..3 {
            s.record_round(&RoundRecord {
                site: if i == 1 { "bbs" } else { "dz" }.parse().unwrap(),
                started_at: format!("2024-03-0{}T00:00:00Z", i + 1),
                finished_at: format!("2024-03-0{}T00:01:00Z", i + 1),
                requests: 10 + i,
                list_pages: 3,
                boards_visited: 2,
                boards_skipped: i,
                new_threads: 5,
                updated_threads: 1,
                errors: i % 2,
            })
            .unwrap();
        }
        let kr = KeywordRound {
            budget: 30,
            pages_read: 4,
            lastresult: 4,
            next_pagenum: 4,
            watermark_after: Some("2024-02-29T22:00:00".into()),
            results: 80,
            new_threads: 12,
            ..KeywordRound::new("dz".parse().unwrap(), "考研 \"真题\"", "2024-03-01T00:00:00Z".into())
        };
        s.record_keyword_round(&kr).unwrap();
        s.record_keyword_round(&KeywordRound { keyword: "🐼".into(), ..kr.clone() }).unwrap();
        s.record_keyword_round(&KeywordRound {
            errors: 1,
            error: Some("search said: 'too fast' 请稍后".into()),
            watermark_before: kr.watermark_after.clone(),
            ..kr.clone()
        })
        .unwrap();
        s.set_last_search("dz", "", 1_700_000_000_123).unwrap();
        s.set_last_search("dz", "用户'1", 1_700_000_000_456).unwrap();
        s.set_validators("dz", "http://h/dz/b/9", &Validators { etag: Some("W/\"abc\"".into()), last_modified: None }).unwrap();
        s.set_validators("dz", "http://h/dz/b/10?页=2", &Validators { etag: None, last_modified: Some("Tue, 01 Mar 2024 10:00:00 GMT".into()) }).unwrap();
        let archived = super::super::MediaRow {
            site: "dz".parse().unwrap(),
            url: "http://h/dz/data/attachment/图.jpg".into(),
            sha256: Some("ab".repeat(32)),
            content_type: Some("image/jpeg".into()),
            bytes: Some(5_000_000_000),
            status: super::super::MediaStatus::Archived,
            reason: None,
            fetched_at: "2024-06-30T23:10:00Z".into(),
        };
        s.media_record(&archived).unwrap();
        let failed = super::super::MediaRow {
            url: "http://h/dz/a.png".into(),
            sha256: None,
            content_type: None,
            bytes: None,
            status: super::super::MediaStatus::Failed,
            reason: Some("HTTP 404".into()),
            ..archived
        };
        s.media_record(&failed).unwrap();
    }

    /// Every way the copy could lose something, read through the store's own API.
    fn assert_same_crawl(a: &Store, b: &Store) {
        assert_eq!(a.status(None).unwrap(), b.status(None).unwrap());
        for site in ["dz", "bbs"] {
            assert_eq!(a.boards(site).unwrap(), b.boards(site).unwrap(), "boards of {site} in first-stored order");
            assert_eq!(a.keyword_rounds(Some(site)).unwrap(), b.keyword_rounds(Some(site)).unwrap());
            assert_eq!(a.validators(site).unwrap(), b.validators(site).unwrap());
        }
        for state in ThreadState::ALL {
            assert_eq!(a.threads(None, state).unwrap(), b.threads(None, state).unwrap());
        }
        assert_eq!(a.media_rows(None).unwrap(), b.media_rows(None).unwrap());
    }

    fn copy(from: &Store, to: &mut Store, page: usize) -> CopyReport {
        from.copy_paged(to, page, |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
    }

    fn leases(s: &Store) -> (i64, i64) {
        let held = s.query_first("SELECT count(*) FROM threads WHERE lease_owner IS NOT NULL OR lease_until IS NOT NULL", &[], |r| r.get(0)).unwrap();
        let locks = s.query_first("SELECT count(*) FROM site_locks", &[], |r| r.get(0)).unwrap();
        (held.unwrap(), locks.unwrap())
    }

    #[test]
    fn sqlite_to_postgres_and_back_keeps_every_row_and_value() {
        let (dir, src, _pg, mut pg) = source_and_postgres();
        // Pages of two rows: every table takes several pages.
        let report = copy(&src, &mut pg, 2);
        let expect = [
            ("sites", 2),
            ("boards", 4),
            ("skipped_links", 3),
            ("rounds", 3),
            ("threads", 6),
            ("keywords", 2),
            ("keyword_rounds", 3),
            ("search_accounts", 2),
            ("validators", 2),
            ("media", 2),
        ];
        assert_eq!(report.tables, expect);
        assert_eq!(
            report.to_string(),
            "2 sites, 4 boards, 3 skipped links, 3 discover rounds, 6 threads, 2 keywords, 3 keyword rounds, 2 search accounts, 2 page validators, 2 media URLs"
        );
        assert_same_crawl(&src, &pg);
        assert_eq!(leases(&src), (1, 1));
        assert_eq!(leases(&pg), (0, 0), "leases and site locks are the source's workers', not the copy's");

        let mut back = sqlite(&dir, "b.db");
        assert_eq!(copy(&pg, &mut back, 3).tables, expect);
        assert_same_crawl(&src, &back);
        assert_eq!(src.verify_copy(&back).unwrap().tables, expect);
        assert_eq!(pg.verify_copy(&back).unwrap().tables, expect);
        // Exact values, straight from the tables.
        let score = |s: &Store| s.query("SELECT score FROM skipped_links ORDER BY score", &[], |r| r.get::<f64>(0)).unwrap();
        assert_eq!(score(&back), [0.0, 0.031_25, 1.0 / 3.0]);
        assert_eq!(score(&pg), score(&src));
        let ids = |s: &Store| s.query("SELECT id FROM keyword_rounds ORDER BY id", &[], |r| r.get::<i64>(0)).unwrap();
        assert_eq!(ids(&back), [1, 2, 3]);
    }

    #[test]
    fn postgres_to_postgres_and_sqlite_to_sqlite_copy_too() {
        let dir = tempfile::tempdir().unwrap();
        let (_a, mut a) = postgres();
        fill(&mut a);
        let (_b, mut b) = postgres();
        assert_eq!(copy(&a, &mut b, 4).rows("threads"), 6);
        assert_same_crawl(&a, &b);
        let mut c = sqlite(&dir, "c.db");
        fill(&mut c);
        let mut d = sqlite(&dir, "d.db");
        assert_eq!(c.copy_into(&mut d, |_, _| {}).unwrap().rows("boards"), 4);
        assert_same_crawl(&c, &d);
        let rowids = |s: &Store| s.query("SELECT thread FROM threads ORDER BY rowid", &[], |r| r.get::<String>(0)).unwrap();
        assert_eq!(rowids(&c), rowids(&d), "threads keep the order they were stored in");
    }

    #[test]
    fn a_later_round_on_a_postgres_copy_takes_the_next_ids() {
        let (_dir, src, _pg, mut pg) = source_and_postgres();
        copy(&src, &mut pg, PAGE);
        let round = RoundRecord { started_at: "2024-04-01T00:00:00Z".into(), requests: 99, ..src.last_round("dz").unwrap().unwrap() };
        pg.record_round(&round).unwrap();
        assert_eq!(pg.last_round("dz").unwrap().unwrap().requests, 99);
        pg.record_keyword_round(&KeywordRound { budget: 7, ..KeywordRound::new("dz".parse().unwrap(), "新", "2024-04-01T00:00:00Z".into()) }).unwrap();
        let ids = |table: &'static str| match table {
            "rounds" => pg.query("SELECT id FROM rounds ORDER BY id", &[], |r| r.get::<i64>(0)).unwrap(),
            _ => pg.query("SELECT id FROM keyword_rounds ORDER BY id", &[], |r| r.get::<i64>(0)).unwrap(),
        };
        assert_eq!((ids("rounds"), ids("keyword_rounds")), (vec![1, 2, 3, 4], vec![1, 2, 3, 4]));
        // A board found after the copy goes after the copied ones.
        pg.upsert_board("dz", "1", "http://h/dz/b/1", None).unwrap();
        let boards: Vec<String> = pg.boards("dz").unwrap().into_iter().map(|b| b.board.to_string()).collect();
        assert_eq!(boards, ["9", "10", "2", "1"]);
        // And a new thread is claimed as on any crawl: the copy holds no lease.
        assert_eq!(pg.claim(None, ThreadState::Discovered, Duration::from_secs(60), 10).unwrap().len(), 1);
    }

    #[test]
    fn a_target_holding_crawl_state_is_refused_and_left_as_it_was() {
        let (dir, src, _pg, mut pg) = source_and_postgres();
        pg.upsert_board("other", "1", "http://o/b/1", None).unwrap();
        let e = src.copy_into(&mut pg, |_, _| {}).unwrap_err();
        assert!(matches!(e, CopyError::NotEmpty { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with("postgres://") && msg.contains("not empty (1 board)") && !msg.contains('\n'), "{msg}");
        assert_eq!(pg.boards("other").unwrap().len(), 1, "the target is as it was");
        assert_eq!(pg.query_first("SELECT count(*) FROM threads", &[], |r| r.get::<i64>(0)).unwrap(), Some(0));
        // A crawl is never merged, even into a copy of itself.
        let mut copied = sqlite(&dir, "b.db");
        copy(&src, &mut copied, PAGE);
        let e = src.copy_into(&mut copied, |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("b.db: not empty (2 sites, 4 boards, 3 skipped links, 3 discover rounds, 6 threads"), "{e}");
        assert_same_crawl(&src, &copied);
    }

    #[test]
    fn a_difference_is_named_by_table_row_and_column() {
        let (dir, src, _pg, mut pg) = source_and_postgres();
        copy(&src, &mut pg, PAGE);
        // One unit in the last place off.
        let off = f64::from_bits((1.0f64 / 3.0).to_bits() + 1);
        pg.exec("UPDATE skipped_links SET score = ?1 WHERE thread = '56'", vals![off]).unwrap();
        let e = src.verify_copy(&pg).unwrap_err().to_string();
        assert!(e.contains(&format!("skipped_links row (dz, 56): score is {off:?} there, {:?} in the source", 1.0f64 / 3.0)), "{e}");
        pg.exec("UPDATE skipped_links SET score = ?1 WHERE thread = '56'", vals![1.0 / 3.0]).unwrap();
        pg.exec("DELETE FROM threads WHERE site = 'dz' AND thread = '4'", &[]).unwrap();
        let e = src.verify_copy(&pg).unwrap_err().to_string();
        assert!(e.contains("threads row (dz, 4) is missing"), "{e}");
        assert!(pg.verify_copy(&src).unwrap_err().to_string().contains("threads row (dz, 4) is not in the source"));
        let mut other = sqlite(&dir, "b.db");
        copy(&src, &mut other, PAGE);
        // The same boards, stored in another order: board 9 last.
        other.exec("UPDATE boards SET rowid = 100 WHERE site = 'dz' AND board = '9'", &[]).unwrap();
        let e = src.verify_copy(&other).unwrap_err().to_string();
        assert!(
            e.contains("b.db differs from ") && e.ends_with("a.db: boards are not in the order first stored: row 1 is (dz, 10) there, (dz, 9) in the source"),
            "{e}"
        );
    }

    /// Tables of the workers live on the source, which a copy leaves out.
    const LIVE_TABLES: &[&str] = &["site_locks", "gates", "gate_slots"];

    #[test]
    fn the_copy_covers_every_column_of_every_table_but_the_leases() {
        let dir = tempfile::tempdir().unwrap();
        let s = sqlite(&dir, "a.db");
        let super::super::sql::Conn::Sqlite(conn) = &s.conn else { unreachable!() };
        let schema = columns(conn).unwrap();
        let left_out = [("threads", "lease_owner"), ("threads", "lease_until")];
        for (table, column) in &schema {
            if LIVE_TABLES.contains(&table.as_str()) || left_out.contains(&(table.as_str(), column.as_str())) || table.starts_with("sqlite_") {
                continue;
            }
            let t = TABLES.iter().find(|t| t.name == table).unwrap_or_else(|| panic!("table {table} is not copied"));
            assert!(t.columns.split(", ").any(|c| c == column), "{table}.{column} is not copied");
        }
        for t in TABLES {
            let mine: Vec<&str> = t.columns.split(", ").collect();
            let theirs: Vec<&str> = schema.iter().filter(|(tt, _)| tt == t.name).map(|(_, c)| c.as_str()).collect();
            assert!(mine.iter().all(|c| theirs.contains(c)), "{}: {mine:?} not all in {theirs:?}", t.name);
            let placeholders: Vec<String> = (1..=mine.len()).map(|i| format!("?{i}")).collect();
            assert!(t.insert.ends_with(&format!("VALUES ({})", placeholders.join(", "))), "{}", t.insert);
            for p in [t.by_key[0], t.by_key[1]].into_iter().chain(t.stored.into_iter().flatten()) {
                for sql in [p.first, p.next] {
                    let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
                    assert!(sql.starts_with(&format!("SELECT {}, ", mine.join(", "))), "{sql}");
                }
            }
        }
    }

    #[test]
    fn counts_read_with_thousands_separators() {
        assert_eq!([0, 7, 999, 1000, 6000, 1_234_567].map(thousands), ["0", "7", "999", "1,000", "6,000", "1,234,567"]);
    }
}
