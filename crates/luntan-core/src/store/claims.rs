//! Work claimed, not assumed: the leases that let many workers (processes,
//! hosts) share one crawl. A worker claims a batch of threads under a lease
//! and keeps it alive while it works ([`LeaseKeeper`]); moving a thread
//! ends its lease; a worker that dies holds its threads only until the lease
//! runs out. A stage that must have one writer per site (index, discover)
//! takes a site lock, a lease on one row of `site_locks`.

use std::sync::{mpsc, Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use super::sql::{millis, now_ms, vals, Dialect};
use super::threads::{row_columns, row_from_sql};
use super::{StateUrl, Store, StoreError, ThreadRow};
use crate::state::{Stage, ThreadState};

/// The statement [`Store::claim`] runs: `?1` worker, `?2` lease in ms, `?3`
/// state, `?4` site, `?5` limit. The site is tested by a statement of its
/// own (`site_given`), not by `?4 IS NULL OR site = ?4`: SQLite cannot narrow
/// an index by an OR of a parameter, and would walk every other site's rows
/// in the state to reach this one's. Either way the rows come off the
/// `threads_claim` index in claim order, the first `?5` free ones, unsorted.
fn claim_sql(dialect: Dialect, site_given: bool) -> &'static str {
    macro_rules! claim_sql {
        ($site:literal) => {
            match dialect {
                Dialect::Sqlite => concat!(
                    "UPDATE threads SET lease_owner = ?1, lease_until = ",
                    now_ms!(),
                    " + ?2
                     WHERE rowid IN (SELECT rowid FROM threads WHERE state = ?3 AND ",
                    $site,
                    " AND (lease_until IS NULL OR lease_until < ",
                    now_ms!(),
                    ") ORDER BY site, length(thread), thread LIMIT ?5)
                     RETURNING ",
                    row_columns!()
                ),
                Dialect::Postgres => concat!(
                    "UPDATE threads t SET lease_owner = ?1, lease_until = ",
                    now_ms!(),
                    " + ?2
                     FROM (SELECT site, thread FROM threads WHERE state = ?3 AND ",
                    $site,
                    " AND (lease_until IS NULL OR lease_until < ",
                    now_ms!(),
                    ") ORDER BY site, length(thread), thread LIMIT ?5 FOR UPDATE SKIP LOCKED) c
                     WHERE t.site = c.site AND t.thread = c.thread
                     RETURNING t.site, t.thread, t.board, t.url, t.title, t.replies, t.last_post, t.post_time, t.save_date, t.pages,
                        t.content_type, t.state, t.fail_stage, t.fail_reason, t.attempts"
                ),
            }
        };
    }
    if site_given {
        claim_sql!("site = ?4")
    } else {
        claim_sql!("CAST(?4 AS TEXT) IS NULL")
    }
}

impl Store {
    /// Claims up to `limit` threads of `state` (optionally of one site) for
    /// this worker ([`Store::worker`]) for `lease`, in (site, thread) order,
    /// and returns them. A thread another worker holds under a live lease is
    /// passed over; one whose lease ran out (its worker died or stalled) is
    /// taken. PostgreSQL locks the rows it picks with `SKIP LOCKED`, so
    /// workers claiming at once get disjoint batches without waiting; SQLite
    /// has one writer at a time anyway. A claimed thread is this worker's
    /// until it moves it ([`Store::transition`], [`Store::fail`]) or
    /// [`Store::release`]s it; [`Store::renew`] keeps the lease alive.
    pub fn claim(&self, site: Option<&str>, state: ThreadState, lease: Duration, limit: usize) -> Result<Vec<ThreadRow>, StoreError> {
        let sql = claim_sql(self.dialect(), site.is_some());
        let lease_ms = millis(lease);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let raw = self.batch(|s| s.query(sql, vals![s.worker.as_str(), lease_ms, state.code(), site, limit], row_from_sql))?;
        let mut rows = raw.into_iter().map(|r| r.into_row(&self.db)).collect::<Result<Vec<_>, _>>()?;
        // RETURNING gives no order.
        rows.sort_by(|a, b| (&a.site, a.thread.len(), &a.thread).cmp(&(&b.site, b.thread.len(), &b.thread)));
        Ok(rows)
    }

    /// Extends every lease this worker holds (threads, site locks and
    /// request slots) to
    /// `lease` from now; returns how many threads it holds.
    pub fn renew(&self, lease: Duration) -> Result<usize, StoreError> {
        // The keeper renews on a connection of its own while the worker's
        // connection moves the same rows in a transaction: waiting for those
        // rows (and holding others meanwhile) would deadlock the two. Rows
        // locked at the moment are being moved, which ends their lease
        // anyway, so PostgreSQL passes them over; SQLite has one writer at
        // a time and nothing to pass over.
        let lease_ms = millis(lease);
        let (locks, slots, threads) = match self.dialect() {
            Dialect::Sqlite => (
                concat!("UPDATE site_locks SET until_ms = ", now_ms!(), " + ?2 WHERE owner = ?1"),
                concat!("UPDATE gate_slots SET until_ms = ", now_ms!(), " + ?2 WHERE owner = ?1"),
                concat!("UPDATE threads SET lease_until = ", now_ms!(), " + ?2 WHERE lease_owner = ?1"),
            ),
            Dialect::Postgres => (
                concat!(
                    "UPDATE site_locks l SET until_ms = ",
                    now_ms!(),
                    " + ?2 FROM (SELECT stage, site FROM site_locks WHERE owner = ?1 FOR UPDATE SKIP LOCKED) k
                     WHERE l.stage = k.stage AND l.site = k.site"
                ),
                concat!(
                    "UPDATE gate_slots g SET until_ms = ",
                    now_ms!(),
                    " + ?2 FROM (SELECT site, slot FROM gate_slots WHERE owner = ?1 FOR UPDATE SKIP LOCKED) k
                     WHERE g.site = k.site AND g.slot = k.slot"
                ),
                concat!(
                    "UPDATE threads t SET lease_until = ",
                    now_ms!(),
                    " + ?2 FROM (SELECT site, thread FROM threads WHERE lease_owner = ?1 FOR UPDATE SKIP LOCKED) k
                     WHERE t.site = k.site AND t.thread = k.thread"
                ),
            ),
        };
        self.batch(|s| {
            s.exec(locks, vals![s.worker.as_str(), lease_ms])?;
            s.exec(slots, vals![s.worker.as_str(), lease_ms])?;
            s.exec(threads, vals![s.worker.as_str(), lease_ms])
        })
    }

    /// How many threads of `state` (of `site`, or all) other workers hold
    /// under a live lease: work that is not this worker's yet, but will be if
    /// their holder dies before moving them.
    pub fn held_by_others(&self, site: Option<&str>, state: ThreadState) -> Result<usize, StoreError> {
        let n: Option<i64> = self.query_first(
            concat!(
                "SELECT count(*) FROM threads WHERE state = ?1 AND (CAST(?2 AS TEXT) IS NULL OR site = ?2) AND lease_owner <> ?3 AND lease_until >= ",
                now_ms!()
            ),
            vals![state.code(), site, self.worker.as_str()],
            |r| r.get(0),
        )?;
        Ok(n.unwrap_or(0) as usize)
    }

    /// Gives back the threads (of `site`, or all) this worker still holds,
    /// claimed but left in their state, for any worker to take at once.
    /// Its request slots of those sites go back too: a slot whose release
    /// was still on its way when the stage ended would otherwise hold back
    /// every worker until its lease ran out.
    pub fn release(&self, site: Option<&str>) -> Result<usize, StoreError> {
        self.batch(|s| {
            s.exec(
                "UPDATE gate_slots SET owner = NULL, until_ms = NULL WHERE owner = ?1 AND (CAST(?2 AS TEXT) IS NULL OR site = ?2)",
                vals![s.worker.as_str(), site],
            )?;
            s.exec(
                "UPDATE threads SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?1 AND (CAST(?2 AS TEXT) IS NULL OR site = ?2)",
                vals![s.worker.as_str(), site],
            )
        })
    }

    /// Ends every lease on threads of `state` (of `site`, or all), whoever
    /// holds it: for a stage that knows it is the only worker on this state
    /// (it holds the data directory's lock), so that the leases of a run
    /// killed a moment ago do not hold its threads back for a whole lease.
    pub fn free_leases(&self, site: Option<&str>, state: ThreadState) -> Result<usize, StoreError> {
        self.exec(
            "UPDATE threads SET lease_owner = NULL, lease_until = NULL WHERE state = ?1 AND lease_owner IS NOT NULL AND (CAST(?2 AS TEXT) IS NULL OR site = ?2)",
            vals![state.code(), site],
        )
    }

    /// Takes (or renews) `stage`'s lock on `site` for `lease`; returns
    /// false when another worker holds it under a live lease. Held until
    /// [`Store::unlock_site`], or until the lease runs out unrenewed
    /// ([`LeaseKeeper`] renews it with the threads).
    pub fn lock_site(&self, stage: Stage, site: &str, lease: Duration) -> Result<bool, StoreError> {
        let n = self.exec(
            concat!(
                "INSERT INTO site_locks (stage, site, owner, until_ms) VALUES (?1, ?2, ?3, ",
                now_ms!(),
                " + ?4)
                 ON CONFLICT(stage, site) DO UPDATE SET owner = excluded.owner, until_ms = excluded.until_ms
                 WHERE site_locks.owner = excluded.owner OR site_locks.until_ms < ",
                now_ms!()
            ),
            vals![stage.as_str(), site, self.worker.as_str(), millis(lease)],
        )?;
        Ok(n == 1)
    }

    /// Gives up `stage`'s lock on `site` if this worker holds it.
    pub fn unlock_site(&self, stage: Stage, site: &str) -> Result<(), StoreError> {
        self.exec("DELETE FROM site_locks WHERE stage = ?1 AND site = ?2 AND owner = ?3", vals![stage.as_str(), site, self.worker.as_str()]).map(drop)
    }

    /// Keeps this worker's leases (threads, site locks, request slots)
    /// alive while the returned keeper lives: a thread of its own, on a
    /// connection of its own, renews them every third of `lease`. A worker
    /// that stops renewing (killed, hung, cut off from the database) loses
    /// them once `lease` has passed. One keeper serves the whole process: a
    /// second call for the same database, worker and lease (another forum's
    /// download, say) shares the first one's thread and connection.
    pub fn keep_leases(&self, lease: Duration) -> Result<Arc<LeaseKeeper>, StoreError> {
        static KEEPERS: Mutex<Vec<(String, Weak<LeaseKeeper>)>> = Mutex::new(Vec::new());
        let db = match &self.db {
            StateUrl::Sqlite(p) => p.display().to_string(),
            StateUrl::Postgres(u) => u.clone(),
        };
        let key = format!("{db}\n{}\n{}", self.worker, lease.as_millis());
        let mut keepers = KEEPERS.lock().unwrap_or_else(|p| p.into_inner());
        keepers.retain(|(_, k)| k.strong_count() > 0);
        if let Some(k) = keepers.iter().filter(|(k, _)| *k == key).find_map(|(_, k)| k.upgrade()) {
            return Ok(k);
        }
        let mut keeper = Store::connect(&self.db)?;
        keeper.set_worker(self.worker.clone());
        let (stop, stopped) = mpsc::channel::<()>();
        let every = (lease / 3).max(Duration::from_millis(50));
        let thread = std::thread::Builder::new()
            .name("luntan-lease".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    if let Err(e) = keeper.renew(lease) {
                        tracing::warn!("cannot renew this worker's leases ({e}); its threads go to other workers once the lease runs out");
                    }
                }
            })
            .map_err(|e| self.err(super::DbError::Value(format!("cannot start the lease thread: {e}"))))?;
        let keeper = Arc::new(LeaseKeeper { stop: Some(stop), thread: Some(thread) });
        keepers.push((key, Arc::downgrade(&keeper)));
        Ok(keeper)
    }
}

/// Renews a worker's leases while it lives; see [`Store::keep_leases`].
#[derive(Debug)]
pub struct LeaseKeeper {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for LeaseKeeper {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How a stage's worker takes its threads: in batches of `batch`, each
/// under a lease of `lease`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claims {
    pub lease: Duration,
    pub batch: usize,
}

impl Claims {
    /// How often a worker with nothing to claim looks again while others
    /// hold threads: soon after they finish (the run then ends), and soon
    /// after a dead worker's lease ends (its threads are then this worker's).
    pub fn poll(&self) -> Duration {
        (self.lease / 4).clamp(Duration::from_millis(100), Duration::from_millis(500))
    }
}

impl Default for Claims {
    fn default() -> Claims {
        Claims { lease: Duration::from_secs(120), batch: 64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_reads_its_batch_off_the_index_instead_of_sorting_every_waiting_row() {
        // Each claim used to sort all of a site's waiting rows to take 64 of
        // them (n²/64 for a download of n threads): the plan said so with a
        // temp B-tree for the ORDER BY.
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("luntan.db");
        drop(Store::open(&path).unwrap());
        let c = rusqlite::Connection::open(&path).unwrap();
        for site_given in [true, false] {
            let sql = claim_sql(Dialect::Sqlite, site_given);
            let sql = sql.replace(&format!("RETURNING {}", row_columns!()), "");
            let mut plan = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let rows: Vec<String> =
                plan.query_map(rusqlite::params!["w", 1000, 0, "dz", 64], |r| r.get::<_, String>(3)).unwrap().collect::<Result<_, _>>().unwrap();
            let plan = rows.join("; ");
            assert!(plan.contains("threads_claim"), "site given: {site_given}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "site given: {site_given}: {plan}");
        }
    }
}
