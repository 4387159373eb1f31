//! One way to run the store's statements on either engine: SQLite (the
//! embedded default) or PostgreSQL (one crawl shared by many workers).
//!
//! Every statement is a `&'static str`, so nothing a forum or a user typed
//! can become SQL; values are always bound. A statement is written once, in
//! the subset both engines share, with SQLite's `?N` placeholders; for
//! PostgreSQL [`postgres_dialect`] turns `?N` into `$N` and SQLite's "now"
//! into PostgreSQL's. The few statements that cannot be shared (`rowid`,
//! `FOR UPDATE SKIP LOCKED`) are chosen by [`Dialect`] at the call.
//!
//! Values go in as [`Val`] and come out as [`Row`]s of [`Cell`]s, the
//! four kinds of value the schema holds (integer, real, text, null), so the
//! store's methods read rows the same way whatever the engine.

use std::cell::{Cell as StdCell, RefCell};
use std::collections::HashMap;

use postgres::types::{IsNull, ToSql, Type};

/// Which engine a connection talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// Why a statement failed, by engine, or a value the store cannot read.
///
/// The engine's error is the message, not a `source`: the message says all
/// of it already, and a chain would repeat it (`{:#}` prints causes).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(rusqlite::Error),
    #[error("{}", postgres_message(.0))]
    Postgres(postgres::Error),
    #[error("{0}")]
    Value(String),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> DbError {
        DbError::Sqlite(e)
    }
}

impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> DbError {
        DbError::Postgres(e)
    }
}

/// PostgreSQL's own message for a server error (its `Display` says only
/// "db error"), with the detail a user needs to act on it.
fn postgres_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_owned(),
        },
        // "error connecting to server" alone: the cause (refused, timed out,
        // bad password) is in the chain.
        None => {
            let mut message = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                message.push_str(": ");
                message.push_str(&c.to_string());
                cause = c.source();
            }
            message
        }
    }
}

/// A value bound to a statement's placeholder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Val<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
}

impl<'a> From<&'a str> for Val<'a> {
    fn from(s: &'a str) -> Val<'a> {
        Val::Text(s)
    }
}

impl<'a> From<&'a String> for Val<'a> {
    fn from(s: &'a String) -> Val<'a> {
        Val::Text(s)
    }
}

macro_rules! id_val {
    ($($t:ty),*) => {$(
        impl<'a> From<&'a $t> for Val<'a> {
            fn from(v: &'a $t) -> Val<'a> {
                Val::Text(v.as_str())
            }
        }
    )*};
}
id_val!(crate::ids::SiteId, crate::ids::BoardId, crate::ids::ThreadId, crate::ids::SaveDate);

/// Numbers and flags, each bound as the variant that holds it losslessly.
macro_rules! number_val {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<$t> for Val<'_> {
            fn from(v: $t) -> Self {
                Val::$variant(v.into())
            }
        }
    )*};
}
number_val!(i64 => Int, u32 => Int, f64 => Real, bool => Int);

impl<'a, T: Into<Val<'a>>> From<Option<T>> for Val<'a> {
    fn from(v: Option<T>) -> Val<'a> {
        v.map_or(Val::Null, Into::into)
    }
}

impl<'a> From<&'a Option<String>> for Val<'a> {
    fn from(v: &'a Option<String>) -> Val<'a> {
        v.as_deref().into()
    }
}

/// SQLite's clock in Unix milliseconds, for `concat!` into a statement;
/// see [`SQLITE_NOW_MS`].
macro_rules! now_ms {
    () => {
        "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    };
}
pub(crate) use now_ms;

/// A duration as the store keeps it (milliseconds), saturating far past any lease.
pub(crate) fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

/// The values of a statement's placeholders, `?1` first.
macro_rules! vals {
    ($($v:expr),* $(,)?) => { &[$($crate::store::sql::Val::from($v)),*][..] };
}
pub(crate) use vals;

impl rusqlite::ToSql for Val<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match *self {
            Val::Null => ValueRef::Null,
            Val::Int(v) => ValueRef::Integer(v),
            Val::Real(v) => ValueRef::Real(v),
            Val::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

impl ToSql for Val<'_> {
    // PostgreSQL infers each placeholder's type from where it stands (a
    // BIGINT column, `= 1`, `LIMIT`); the value is converted to that type,
    // or refused with a message naming both.
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                _ => Err(format!("an integer given for a {ty} placeholder").into()),
            },
            Val::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                _ => Err(format!("a real given for a {ty} placeholder").into()),
            },
            Val::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // `to_sql` checks the pairing and names it when it is wrong.
        true
    }

    postgres::types::to_sql_checked!();
}

/// One value read from a result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

/// A type a [`Cell`] can be read as.
pub(crate) trait FromCell: Sized {
    fn from_cell(c: Cell) -> Result<Self, Cell>;
}

impl FromCell for i64 {
    fn from_cell(c: Cell) -> Result<Self, Cell> {
        match c {
            Cell::Int(v) => Ok(v),
            other => Err(other),
        }
    }
}

impl FromCell for u32 {
    fn from_cell(c: Cell) -> Result<Self, Cell> {
        match c {
            Cell::Int(v) => u32::try_from(v).map_err(|_| Cell::Int(v)),
            other => Err(other),
        }
    }
}

impl FromCell for f64 {
    fn from_cell(c: Cell) -> Result<Self, Cell> {
        match c {
            Cell::Real(v) => Ok(v),
            // SQLite hands back an integral REAL as an integer.
            Cell::Int(v) => Ok(v as f64),
            other => Err(other),
        }
    }
}

impl FromCell for String {
    fn from_cell(c: Cell) -> Result<Self, Cell> {
        match c {
            Cell::Text(s) => Ok(s),
            other => Err(other),
        }
    }
}

/// An id read back is checked again, as where it first came in: a row
/// edited by hand cannot name a path outside the data directory.
macro_rules! id_cell {
    ($($t:ty),*) => {$(
        impl FromCell for $t {
            fn from_cell(c: Cell) -> Result<Self, Cell> {
                match c {
                    Cell::Text(s) => <$t>::parse(&s).map_err(|_| Cell::Text(s)),
                    other => Err(other),
                }
            }
        }
    )*};
}
id_cell!(crate::ids::SiteId, crate::ids::BoardId, crate::ids::ThreadId);

impl<T: FromCell> FromCell for Option<T> {
    fn from_cell(c: Cell) -> Result<Self, Cell> {
        match c {
            Cell::Null => Ok(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

/// A result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(pub(crate) Vec<Cell>);

impl Row {
    /// Column `i` (from 0) as a `T`.
    pub(crate) fn get<T: FromCell>(&self, i: usize) -> Result<T, DbError> {
        let cell = self.0.get(i).cloned().ok_or_else(|| DbError::Value(format!("no column {i} in a row of {}", self.0.len())))?;
        T::from_cell(cell).map_err(|c| DbError::Value(format!("column {i} holds {c:?}, not a {}", std::any::type_name::<T>())))
    }
}

/// An open connection to either engine.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<Pg>),
}

/// A PostgreSQL session: the client, its prepared statements (one round
/// trip each, once per connection) and how deep in [`Conn::begin`] it is,
/// since PostgreSQL has no `is_autocommit` to ask.
pub(crate) struct Pg {
    /// `None` only once dropped (see the `Drop` below).
    client: RefCell<Option<postgres::Client>>,
    prepared: RefCell<HashMap<&'static str, postgres::Statement>>,
    depth: StdCell<u32>,
}

impl Drop for Pg {
    fn drop(&mut self) {
        // Closing a client blocks on its own runtime, which panics on a
        // thread that drives async tasks, and a store may be dropped there
        // (the network stages hold theirs in async code): a thread of its
        // own closes it.
        if let Some(client) = self.client.get_mut().take() {
            self.prepared.get_mut().clear();
            let _ = std::thread::Builder::new().name("luntan-pg-close".into()).spawn(move || drop(client));
        }
    }
}

impl Pg {
    pub(crate) fn new(client: postgres::Client) -> Pg {
        Pg { client: RefCell::new(Some(client)), prepared: RefCell::default(), depth: StdCell::new(0) }
    }

    fn client(&self) -> std::cell::RefMut<'_, postgres::Client> {
        std::cell::RefMut::map(self.client.borrow_mut(), |c| c.as_mut().expect("a store's client lives as long as the store"))
    }

    fn statement(&self, sql: &'static str) -> Result<postgres::Statement, DbError> {
        if let Some(s) = self.prepared.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = self.client().prepare(&postgres_dialect(sql))?;
        self.prepared.borrow_mut().insert(sql, s.clone());
        Ok(s)
    }

    fn params<'v>(vals: &'v [Val<'v>]) -> Vec<&'v (dyn ToSql + Sync)> {
        vals.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
    }
}

impl Conn {
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs a statement; returns how many rows it changed.
    pub(crate) fn execute(&self, sql: &'static str, vals: &[Val<'_>]) -> Result<usize, DbError> {
        match self {
            Conn::Sqlite(c) => Ok(c.prepare_cached(sql)?.execute(rusqlite::params_from_iter(vals))?),
            Conn::Postgres(pg) => {
                let stmt = pg.statement(sql)?;
                Ok(pg.client().execute(&stmt, &Pg::params(vals))? as usize)
            }
        }
    }

    /// Runs a query; returns every row.
    pub(crate) fn query(&self, sql: &'static str, vals: &[Val<'_>]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let width = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(vals))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    out.push(Row((0..width).map(|i| sqlite_cell(r.get_ref(i)?)).collect::<Result<_, _>>()?));
                }
                Ok(out)
            }
            Conn::Postgres(pg) => {
                let stmt = pg.statement(sql)?;
                let rows = pg.client().query(&stmt, &Pg::params(vals))?;
                rows.iter().map(postgres_row).collect()
            }
        }
    }

    /// The first row a query returns, if any.
    pub(crate) fn query_first(&self, sql: &'static str, vals: &[Val<'_>]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, vals)?.into_iter().next())
    }

    /// Whether a transaction is open.
    pub(crate) fn in_transaction(&self) -> bool {
        match self {
            Conn::Sqlite(c) => !c.is_autocommit(),
            Conn::Postgres(pg) => pg.depth.get() > 0,
        }
    }

    /// Runs statements without values (migrations, transaction control).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(pg) => Ok(pg.client().batch_execute(sql)?),
        }
    }

    /// Opens a transaction, or a savepoint inside the one already open;
    /// returns whether it is nested. SQLite's is `IMMEDIATE` (see
    /// `Store::batch`); PostgreSQL's is READ COMMITTED: every write the
    /// store does is a compare-and-set on the row or an upsert, which that
    /// level keeps correct between concurrent workers.
    pub(crate) fn begin(&self) -> Result<bool, DbError> {
        let nested = self.in_transaction();
        self.batch(if nested { "SAVEPOINT batch" } else { self.begin_sql() })?;
        if let Conn::Postgres(pg) = self {
            pg.depth.set(pg.depth.get() + 1);
        }
        Ok(nested)
    }

    fn begin_sql(&self) -> &'static str {
        match self {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(_) => "BEGIN",
        }
    }

    /// Ends what [`Conn::begin`] opened: committed, or rolled back.
    pub(crate) fn end(&self, nested: bool, commit: bool) -> Result<(), DbError> {
        let sql = match (nested, commit) {
            (true, true) => "RELEASE batch",
            (true, false) => "ROLLBACK TO batch; RELEASE batch",
            (false, true) => "COMMIT",
            (false, false) => "ROLLBACK",
        };
        if let Conn::Postgres(pg) = self {
            // Counted down first: a failed COMMIT still ends the transaction.
            pg.depth.set(pg.depth.get().saturating_sub(1));
        }
        self.batch(sql)
    }
}

fn sqlite_cell(v: rusqlite::types::ValueRef<'_>) -> Result<Cell, DbError> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(r) => Cell::Real(r),
        ValueRef::Text(t) => Cell::Text(String::from_utf8(t.to_vec()).map_err(|e| DbError::Value(format!("text that is not UTF-8: {e}")))?),
        ValueRef::Blob(_) => return Err(DbError::Value("a blob, which no luntan column holds".into())),
    })
}

fn postgres_row(r: &postgres::Row) -> Result<Row, DbError> {
    let mut cells = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let cell = match *col.type_() {
            Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map(Cell::Int),
            Type::INT4 => r.try_get::<_, Option<i32>>(i)?.map(|v| Cell::Int(v.into())),
            Type::INT2 => r.try_get::<_, Option<i16>>(i)?.map(|v| Cell::Int(v.into())),
            Type::BOOL => r.try_get::<_, Option<bool>>(i)?.map(|v| Cell::Int(v.into())),
            Type::FLOAT8 => r.try_get::<_, Option<f64>>(i)?.map(Cell::Real),
            Type::FLOAT4 => r.try_get::<_, Option<f32>>(i)?.map(|v| Cell::Real(v.into())),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => r.try_get::<_, Option<String>>(i)?.map(Cell::Text),
            ref t => return Err(DbError::Value(format!("column `{}` is of type {t}, which the store does not read", col.name()))),
        };
        cells.push(cell.unwrap_or(Cell::Null));
    }
    Ok(Row(cells))
}

/// SQLite's expression for the current UTC time as the store writes it.
const SQLITE_NOW: &str = "strftime('%Y-%m-%dT%H:%M:%SZ','now')";
const POSTGRES_NOW: &str = r#"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')"#;

/// The database's clock in Unix milliseconds, which leases are measured
/// by: one clock for every worker, whatever their hosts' clocks say.
/// (PostgreSQL's `clock_timestamp`, not `now`, which stands still for a
/// whole transaction.)
const SQLITE_NOW_MS: &str = now_ms!();
const POSTGRES_NOW_MS: &str = "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)";

/// A statement written for SQLite, as PostgreSQL reads it: `?N` becomes
/// `$N`, and SQLite's two clocks ([`SQLITE_NOW`], [`SQLITE_NOW_MS`])
/// PostgreSQL's, outside quoted text.
pub(crate) fn postgres_dialect(sql: &str) -> String {
    let sql = sql.replace(SQLITE_NOW, POSTGRES_NOW).replace(SQLITE_NOW_MS, POSTGRES_NOW_MS);
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '?' => {
                out.push('$');
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_now_become_postgres_outside_quoted_text() {
        assert_eq!(
            postgres_dialect("UPDATE t SET a = ?1, b = COALESCE(c, '?'), at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE x = ?12"),
            r#"UPDATE t SET a = $1, b = COALESCE(c, '?'), at = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') WHERE x = $12"#
        );
    }

    #[test]
    fn cells_read_as_the_types_the_store_asks_for() {
        let row = Row(vec![Cell::Int(3), Cell::Null, Cell::Text("好".into()), Cell::Int(-1), Cell::Int(2)]);
        assert_eq!(row.get::<u32>(0).unwrap(), 3);
        assert_eq!(row.get::<Option<String>>(1).unwrap(), None);
        assert_eq!(row.get::<String>(2).unwrap(), "好");
        assert!(row.get::<u32>(3).is_err(), "a negative count is not a u32");
        assert_eq!(row.get::<f64>(4).unwrap(), 2.0);
        assert!(row.get::<i64>(2).is_err());
        assert!(row.get::<i64>(9).is_err());
    }
}
