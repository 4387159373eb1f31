//! Politeness shared by every worker of a crawl: a forum's delay and
//! concurrency hold for all of them together, not for each. Per forum, the
//! database keeps the earliest start of its next request and a row per
//! request slot; a worker takes a slot under a lease (so a killed worker's
//! slot comes back), then takes its turn once it has come by moving the
//! next start on by the delay, in one compare-and-set statement, so no two
//! workers get the same turn. Times
//! are the database's clock, whatever the workers' hosts say.

use std::time::Duration;

use super::sql::{millis, now_ms, vals, Dialect};
use super::{Store, StoreError};

impl Store {
    /// Makes sure `site` has its gate and `concurrency` slots (idempotent;
    /// every worker calls it when it starts).
    pub fn gate_open(&self, site: &str, concurrency: usize) -> Result<(), StoreError> {
        self.batch(|s| {
            s.exec("INSERT INTO gates (site, next_ms) VALUES (?1, 0) ON CONFLICT (site) DO NOTHING", vals![site])?;
            for slot in 0..concurrency as i64 {
                s.exec("INSERT INTO gate_slots (site, slot) VALUES (?1, ?2) ON CONFLICT (site, slot) DO NOTHING", vals![site, slot])?;
            }
            Ok(())
        })
    }

    /// Takes a free request slot of `site` (one of its first `concurrency`)
    /// for this worker for `lease`; `None` when every one is taken.
    pub fn gate_slot(&self, site: &str, concurrency: usize, lease: Duration) -> Result<Option<i64>, StoreError> {
        let sql = match self.dialect() {
            Dialect::Sqlite => concat!(
                "UPDATE gate_slots SET owner = ?2, until_ms = ",
                now_ms!(),
                " + ?3 WHERE rowid = (SELECT rowid FROM gate_slots WHERE site = ?1 AND slot < ?4 AND (owner IS NULL OR until_ms < ",
                now_ms!(),
                ") ORDER BY slot LIMIT 1) RETURNING slot"
            ),
            Dialect::Postgres => concat!(
                "UPDATE gate_slots g SET owner = ?2, until_ms = ",
                now_ms!(),
                " + ?3 FROM (SELECT site, slot FROM gate_slots WHERE site = ?1 AND slot < ?4 AND (owner IS NULL OR until_ms < ",
                now_ms!(),
                ") ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED) c WHERE g.site = c.site AND g.slot = c.slot RETURNING g.slot"
            ),
        };
        self.query_first(sql, vals![site, self.worker.as_str(), millis(lease), concurrency as i64], |r| r.get(0))
    }

    /// Gives a slot back.
    pub fn gate_release(&self, site: &str, slot: i64) -> Result<(), StoreError> {
        self.exec("UPDATE gate_slots SET owner = NULL, until_ms = NULL WHERE site = ?1 AND slot = ?2 AND owner = ?3", vals![site, slot, self.worker.as_str()])
            .map(drop)
    }

    /// Takes the turn to start a request to `site` if it has come, moving
    /// the next turn `delay` on from now; else returns how long until it
    /// comes (the caller waits that long and asks again). The turn is taken
    /// only when it has come, from the clock at that moment, as each
    /// worker's own gate does: a worker that wakes late then starts its
    /// request late instead of eating into the next worker's delay, and a
    /// hold set while a worker waits still applies to it.
    pub fn gate_turn(&self, site: &str, delay: Duration) -> Result<Option<Duration>, StoreError> {
        let taken =
            self.exec(concat!("UPDATE gates SET next_ms = ", now_ms!(), " + ?2 WHERE site = ?1 AND next_ms <= ", now_ms!()), vals![site, millis(delay)])?;
        if taken == 1 {
            return Ok(None);
        }
        let wait: Option<i64> = self.query_first(concat!("SELECT next_ms - ", now_ms!(), " FROM gates WHERE site = ?1"), vals![site], |r| r.get(0))?;
        Ok(Some(Duration::from_millis(wait.unwrap_or(0).max(1) as u64)))
    }

    /// Holds every worker's requests to `site` back until `wait` from now
    /// (a 429's Retry-After, the breaker).
    pub fn gate_hold(&self, site: &str, wait: Duration) -> Result<(), StoreError> {
        self.exec(
            concat!("UPDATE gates SET next_ms = CASE WHEN next_ms > ", now_ms!(), " + ?2 THEN next_ms ELSE ", now_ms!(), " + ?2 END WHERE site = ?1"),
            vals![site, millis(wait)],
        )
        .map(drop)
    }
}
