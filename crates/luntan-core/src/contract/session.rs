//! The claim session: how a stage's worker takes its threads, waits for
//! other workers, and settles each thread into one [`StageReport`].
//!
//! Download, extract and index all run on it, so leases, waiting, release
//! and the "left for the next run" count are written once. A session hands
//! out [`Next::Rows`] until the queue is empty; while other workers hold the
//! rest it says [`Next::Wait`] (should one of them die, its threads come
//! back once its lease runs out); at the end [`ClaimSession::finish`]
//! releases what this worker claimed and did not settle.
//!
//! Two ways of handing out work, one per kind of stage ([`Hand`]): threads
//! a batch at a time under leases (download, extract: any worker may take
//! any thread), or a whole forum at a time under a site lock (index: one
//! writer per forum's index).
//!
//! The session only counts and asks the store; it does not own the store,
//! so a stage that reaches its store from several tasks (download) passes
//! it in with each call.

use std::sync::Arc;
use std::time::Duration;

use crate::ids::{SiteId, ThreadId};
use crate::state::{group_failures, FailureGroup, Stage};
use crate::store::{Claims, LeaseKeeper, Store, StoreError, ThreadRow};

use super::StageRun;

/// How a session hands out work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hand {
    /// Batches of [`Claims::batch`] threads, each under a lease.
    Threads,
    /// One forum's threads at a time, under the stage's site lock when the
    /// run is shared (a run alone holds the data directory's lock already).
    Sites,
}

/// What to do next.
#[derive(Debug)]
pub enum Next {
    /// Threads to work on, all of one forum when the session hands out sites.
    Rows(Vec<ThreadRow>),
    /// Nothing to claim now, but other workers hold threads: settle what is
    /// in flight, or with nothing in flight wait this long, and ask again
    /// (two workers each waiting for the other's unsettled work would wait
    /// for ever; should one have died, its threads come back to the queue
    /// once its lease runs out).
    Wait(Duration),
    /// Nothing is left for this worker.
    Done,
}

/// A thread a stage could not move on, and why (naming the file or URL).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ThreadFailure {
    pub site: SiteId,
    pub thread: ThreadId,
    pub reason: String,
}

impl ThreadFailure {
    /// `site/thread`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.site, self.thread)
    }
}

/// What one stage run did to its threads: the counts every stage reports,
/// whatever else it counts of its own.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StageReport {
    /// Threads moved on to the stage's output state.
    pub done: usize,
    pub failed: usize,
    /// Threads passed over: of a forum with no site file, moved first by
    /// another process, or (index) of a forum another worker was writing.
    pub skipped: usize,
    /// Threads left in the queue because the run was stopped (Ctrl-C).
    pub left: usize,
    pub stopped: bool,
    /// Each thread marked failed, in the order it failed.
    pub failures: Vec<ThreadFailure>,
    /// Forums passed over because another worker held them (`Hand::Sites`).
    pub busy: Vec<SiteId>,
}

impl StageReport {
    /// Adds another report's counts (a forum's, say) to this one.
    pub fn merge(&mut self, other: StageReport) {
        self.done += other.done;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.left += other.left;
        self.stopped |= other.stopped;
        self.failures.extend(other.failures);
        self.busy.extend(other.busy);
    }

    /// The failures grouped by cause, most frequent first.
    pub fn failure_groups(&self, stage: Stage) -> Vec<FailureGroup> {
        let keys: Vec<String> = self.failures.iter().map(ThreadFailure::key).collect();
        group_failures(self.failures.iter().zip(&keys).map(|(f, k)| (stage.as_str(), k.as_str(), f.reason.as_str())))
    }

    /// Records that `row` failed, without touching the store (the caller
    /// moved it, or a batch's transaction will).
    pub fn record_failure(&mut self, row: &ThreadRow, reason: String) {
        self.failed += 1;
        self.failures.push(ThreadFailure { site: row.site.clone(), thread: row.thread.clone(), reason });
    }
}

/// One worker's claims on one stage's queue; see the module docs.
#[derive(Debug)]
pub struct ClaimSession {
    stage: Stage,
    site: Option<SiteId>,
    hand: Hand,
    claims: Claims,
    shared: bool,
    /// Sites handed out so far (`Hand::Sites`), and the one locked now.
    sites_done: Vec<SiteId>,
    locked: Option<SiteId>,
    drained: bool,
    report: StageReport,
    _keeper: Option<Arc<LeaseKeeper>>,
}

impl ClaimSession {
    /// Opens `run`'s session on `store`, for `site` only if given. A run
    /// alone first frees leases a killed run of the stage left (they are
    /// its own, from an earlier life); then this worker's leases are kept
    /// alive for as long as the session lives.
    pub fn open(run: &StageRun, store: &Store, site: Option<&SiteId>, hand: Hand) -> Result<ClaimSession, StoreError> {
        let (stage, claims, shared) = (run.stage(), run.claims(), run.is_shared());
        let keeper = match hand {
            Hand::Threads => {
                if !shared {
                    store.free_leases(site.map(|s| s.as_str()), stage.input())?;
                }
                Some(store.keep_leases(claims.lease)?)
            }
            // A site lock needs renewing only while others could take it.
            Hand::Sites if shared => Some(store.keep_leases(claims.lease)?),
            Hand::Sites => None,
        };
        Ok(ClaimSession {
            stage,
            site: site.cloned(),
            hand,
            claims,
            shared,
            sites_done: Vec::new(),
            locked: None,
            drained: false,
            report: StageReport::default(),
            _keeper: keeper,
        })
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The forum this session is limited to, if any.
    pub fn site(&self) -> Option<&SiteId> {
        self.site.as_ref()
    }

    /// The next work: at most `limit` threads (`Hand::Threads`; `None`: the
    /// claim batch), or the next forum's threads (`Hand::Sites`).
    pub fn next(&mut self, store: &Store, limit: Option<usize>) -> Result<Next, StoreError> {
        match self.hand {
            Hand::Threads => self.next_threads(store, limit.unwrap_or(self.claims.batch).max(1)),
            Hand::Sites => self.next_site(store),
        }
    }

    fn next_threads(&mut self, store: &Store, limit: usize) -> Result<Next, StoreError> {
        if self.drained {
            return Ok(Next::Done);
        }
        let site = self.site.as_ref().map(|s| s.as_str());
        let rows = store.claim(site, self.stage.input(), self.claims.lease, limit)?;
        if !rows.is_empty() {
            return Ok(Next::Rows(rows));
        }
        if store.held_by_others(site, self.stage.input())? > 0 {
            return Ok(Next::Wait(self.claims.poll()));
        }
        self.drained = true;
        Ok(Next::Done)
    }

    /// The next forum with threads waiting, locked when the run is shared;
    /// a forum another worker holds is passed over (its threads counted
    /// skipped) and `busy` names it.
    fn next_site(&mut self, store: &Store) -> Result<Next, StoreError> {
        self.unlock(store)?;
        loop {
            let site = self.site.as_ref().map(|s| s.as_str());
            let waiting = store.threads(site, self.stage.input())?;
            let Some(first) = waiting.iter().find(|r| !self.sites_done.contains(&r.site)) else {
                return Ok(Next::Done);
            };
            let id = first.site.clone();
            self.sites_done.push(id.clone());
            if self.shared {
                if !store.lock_site(self.stage, &id, self.claims.lease)? {
                    self.report.skipped += waiting.iter().filter(|r| r.site == id).count();
                    self.report.busy.push(id);
                    continue;
                }
                self.locked = Some(id.clone());
                // Under the lock, the forum's rows as they are now: a worker
                // that held it before may have moved some of those read above.
                return Ok(Next::Rows(store.threads(Some(&id), self.stage.input())?));
            }
            return Ok(Next::Rows(waiting.into_iter().filter(|r| r.site == id).collect()));
        }
    }

    fn unlock(&mut self, store: &Store) -> Result<(), StoreError> {
        if let Some(id) = self.locked.take() {
            store.unlock_site(self.stage, &id)?;
        }
        Ok(())
    }

    /// Counts `row` moved on (the caller moved it, alone or in a batch).
    pub fn done(&mut self, n: usize) {
        self.report.done += n;
    }

    /// Counts threads passed over.
    pub fn skipped(&mut self, n: usize) {
        self.report.skipped += n;
    }

    /// Marks `row` failed at this stage with `reason` and records it; a row
    /// another process moved first is counted skipped instead.
    pub fn fail(&mut self, store: &Store, row: &ThreadRow, reason: String) -> Result<(), StoreError> {
        if store.fail(&row.site, &row.thread, self.stage.input(), self.stage, &reason)? {
            self.report.record_failure(row, reason);
        } else {
            self.report.skipped += 1;
        }
        Ok(())
    }

    /// Records a failure the caller already wrote to the store.
    pub fn record_failure(&mut self, row: &ThreadRow, reason: String) {
        self.report.record_failure(row, reason);
    }

    /// The report so far.
    pub fn report(&self) -> &StageReport {
        &self.report
    }

    /// Ends the session: what this worker claimed and did not settle is
    /// free again at once (not when its lease runs out), a site lock is
    /// given back, and a stopped run counts what it left in the queue.
    pub fn finish(&mut self, store: &Store, stopped: bool) -> Result<StageReport, StoreError> {
        self.abandon(store)?;
        self.report.stopped = stopped;
        if stopped {
            self.report.left = store.threads(self.site.as_ref().map(|s| s.as_str()), self.stage.input())?.len();
        }
        Ok(std::mem::take(&mut self.report))
    }

    /// Gives back what this worker claimed, after an error that ends the
    /// stage (the rows return to the queue at once).
    pub fn abandon(&mut self, store: &Store) -> Result<(), StoreError> {
        self.unlock(store)?;
        if self.hand == Hand::Threads {
            store.release(self.site.as_ref().map(|s| s.as_str()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::contract::Stop;
    use crate::layout::DataDir;
    use crate::store::{NewThread, Store};
    use crate::ThreadState;

    fn thread(site: &str, id: &str) -> NewThread {
        NewThread::new(site.parse().unwrap(), "2".parse().unwrap(), id.parse().unwrap(), format!("http://{site}/t/{id}"))
    }

    /// A data directory with a store holding `threads` as discovered.
    fn store_with(threads: &[(&str, &str)]) -> (tempfile::TempDir, Store) {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(&DataDir::new(t.path()).db_path()).unwrap();
        s.insert_new_threads(&threads.iter().map(|(site, id)| thread(site, id)).collect::<Vec<_>>()).unwrap();
        (t, s)
    }

    fn run(t: &tempfile::TempDir, stage: Stage, shared: bool, batch: usize) -> StageRun {
        let data = DataDir::new(t.path());
        let run = match shared {
            true => StageRun::begin_shared(&data, stage, Stop::new()),
            false => StageRun::begin(&data, stage, Stop::new()),
        };
        run.unwrap().with_claims(Claims { lease: Duration::from_secs(60), batch })
    }

    fn ids(rows: &[ThreadRow]) -> Vec<String> {
        rows.iter().map(ThreadRow::key).collect()
    }

    #[test]
    fn threads_come_in_batches_and_every_outcome_lands_in_one_report() {
        let (t, store) = store_with(&[("dz", "1"), ("dz", "2"), ("dz", "3")]);
        let run = run(&t, Stage::Download, false, 2);
        let mut session = ClaimSession::open(&run, &store, None, Hand::Threads).unwrap();
        let Next::Rows(first) = session.next(&store, None).unwrap() else { panic!("a batch") };
        assert_eq!(ids(&first), ["dz/1", "dz/2"]);
        let moved = store.transition(&first[0].site, &first[0].thread, ThreadState::Discovered, ThreadState::Saved, &Default::default()).unwrap();
        assert!(moved);
        session.done(1);
        session.fail(&store, &first[1], "http://dz/t/2: HTTP 404".into()).unwrap();
        let Next::Rows(second) = session.next(&store, None).unwrap() else { panic!("the rest") };
        assert_eq!(ids(&second), ["dz/3"]);
        assert!(matches!(session.next(&store, None).unwrap(), Next::Done));
        // dz/3 was claimed and never settled: finishing gives it back.
        let report = session.finish(&store, false).unwrap();
        assert_eq!((report.done, report.failed, report.skipped, report.left), (1, 1, 0, 0));
        assert_eq!(report.failures.iter().map(ThreadFailure::key).collect::<Vec<_>>(), ["dz/2"]);
        let row = store.thread("dz", "2").unwrap().unwrap();
        assert_eq!((row.state, row.fail_stage), (ThreadState::Failed, Some(Stage::Download)));
        assert_eq!(store.claim(None, ThreadState::Discovered, Duration::from_secs(60), 10).unwrap().len(), 1, "dz/3 is free again");
    }

    #[test]
    fn a_stopped_run_counts_what_it_left_and_a_thread_held_elsewhere_means_wait() {
        let (t, mut store) = store_with(&[("dz", "1"), ("dz", "2")]);
        // Another worker holds dz/1 under a live lease.
        let mut other = Store::open(&DataDir::new(t.path()).db_path()).unwrap();
        other.set_worker("other");
        assert_eq!(other.claim(None, ThreadState::Discovered, Duration::from_secs(60), 1).unwrap().len(), 1);
        let run = run(&t, Stage::Download, true, 10);
        store.set_worker("me");
        let mut session = ClaimSession::open(&run, &store, None, Hand::Threads).unwrap();
        let Next::Rows(mine) = session.next(&store, None).unwrap() else { panic!("dz/2") };
        assert_eq!(ids(&mine), ["dz/2"]);
        assert!(matches!(session.next(&store, None).unwrap(), Next::Wait(_)), "the other worker's thread may yet come back");
        let report = session.finish(&store, true).unwrap();
        assert_eq!((report.done, report.left, report.stopped), (0, 2, true));
    }

    #[test]
    fn sites_are_handed_out_one_forum_at_a_time_and_a_busy_one_is_skipped() {
        let (t, store) = store_with(&[("bbs", "1"), ("dz", "1"), ("dz", "2")]);
        for (site, id) in [("bbs", "1"), ("dz", "1"), ("dz", "2")] {
            store.transition(site, id, ThreadState::Discovered, ThreadState::Saved, &Default::default()).unwrap();
            store.transition(site, id, ThreadState::Saved, ThreadState::Extracted, &Default::default()).unwrap();
        }
        let mut other = Store::open(&DataDir::new(t.path()).db_path()).unwrap();
        other.set_worker("other");
        assert!(other.lock_site(Stage::Index, "bbs", Duration::from_secs(60)).unwrap());
        let run = run(&t, Stage::Index, true, 10);
        let mut session = ClaimSession::open(&run, &store, None, Hand::Sites).unwrap();
        let Next::Rows(dz) = session.next(&store, None).unwrap() else { panic!("dz's threads") };
        assert_eq!(ids(&dz), ["dz/1", "dz/2"]);
        assert!(matches!(session.next(&store, None).unwrap(), Next::Done));
        let report = session.finish(&store, false).unwrap();
        assert_eq!((report.skipped, report.busy.iter().map(SiteId::as_str).collect::<Vec<_>>()), (1, vec!["bbs"]));
        assert!(other.lock_site(Stage::Index, "dz", Duration::from_secs(60)).unwrap(), "dz's lock was given back");
    }
}
