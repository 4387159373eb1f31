//! The store's behaviour, checked on both engines: every test below runs
//! once on a SQLite file and once on a scratch PostgreSQL database.

use std::cell::Cell;

use super::scratch::ScratchDb;
use super::*;
use crate::state::{Stage, ThreadState};

thread_local! {
    /// The engine the running test uses (set by `on_both_engines!`).
    static ENGINE: Cell<Dialect> = const { Cell::new(Dialect::Sqlite) };
}

/// Writes each test twice, as `sqlite::name` and `postgres::name`.
macro_rules! on_both_engines {
    ($(#[test] fn $name:ident() $body:block)*) => {
        mod sqlite {
            use super::*;
            $(#[test] fn $name() { ENGINE.set(Dialect::Sqlite); $body })*
        }
        mod postgres {
            use super::*;
            $(#[test] fn $name() { ENGINE.set(Dialect::Postgres); $body })*
        }
    };
}

/// A test's database, kept alive as long as this is.
enum Db {
    Sqlite(tempfile::TempDir),
    Postgres(ScratchDb),
}

impl Db {
    fn new() -> Db {
        match ENGINE.get() {
            Dialect::Sqlite => Db::Sqlite(tempfile::tempdir().unwrap()),
            Dialect::Postgres => Db::Postgres(ScratchDb::create().unwrap_or_else(|e| panic!("{e}"))),
        }
    }

    fn url(&self) -> StateUrl {
        match self {
            Db::Sqlite(t) => StateUrl::Sqlite(t.path().join("luntan.db")),
            Db::Postgres(p) => p.url().clone(),
        }
    }
}

/// The store in `db`, opened (and created or migrated) as a stage opens it.
fn open(db: &Db) -> Store {
    Store::connect(&db.url()).unwrap()
}

/// A new store holding dz threads `threads` as discovered; the database is
/// returned to keep it alive and to reopen the store.
fn store_with(threads: &[&str]) -> (Db, Store) {
    let db = Db::new();
    let mut s = open(&db);
    s.insert_new_threads(&threads.iter().map(|th| nt(th)).collect::<Vec<_>>()).unwrap();
    (db, s)
}

/// A second worker on `db`, named `name` in leases.
fn worker(db: &Db, name: &str) -> Store {
    let mut s = open(db);
    s.set_worker(name);
    s
}

/// What a download records when it saves a thread of `pages` pages.
fn saved(pages: u32) -> Update<'static> {
    Update { save_date: Some("20261130".parse().unwrap()), pages: Some(pages), ..Default::default() }
}

/// The state of dz thread `thread`, which must exist.
fn state_of(s: &Store, thread: &str) -> ThreadState {
    s.thread("dz", thread).unwrap().unwrap().state
}

fn nt(thread: &str) -> NewThread {
    NewThread {
        site: "dz".parse().unwrap(),
        board: "2".parse().unwrap(),
        thread: thread.parse().unwrap(),
        url: format!("http://h/t/{thread}"),
        title: Some("标题".into()),
        replies: None,
        last_post: None,
    }
}

fn ids(rows: &[ThreadRow]) -> Vec<&str> {
    rows.iter().map(|r| r.thread.as_str()).collect()
}

on_both_engines! {

#[test]
fn claims_are_disjoint_and_a_dead_workers_threads_go_to_another_after_its_lease() {
    let (db, _s) = store_with(&["1", "2", "3", "4", "5"]);
    let (a, b) = (worker(&db, "a"), worker(&db, "b"));
    let lease = std::time::Duration::from_millis(300);
    assert_eq!(ids(&a.claim(Some("dz"), ThreadState::Discovered, lease, 3).unwrap()), ["1", "2", "3"]);
    assert_eq!(ids(&b.claim(Some("dz"), ThreadState::Discovered, lease, 3).unwrap()), ["4", "5"], "a's live lease is passed over");
    assert!(b.claim(None, ThreadState::Discovered, lease, 3).unwrap().is_empty());
    assert!(b.transition("dz", "4", ThreadState::Discovered, ThreadState::Saved, &saved(1)).unwrap());
    // a dies holding 1-3: once its lease runs out, b takes them.
    std::thread::sleep(lease + std::time::Duration::from_millis(100));
    assert_eq!(ids(&b.claim(Some("dz"), ThreadState::Discovered, lease, 10).unwrap()), ["1", "2", "3", "5"]);
    // a wakes up and finishes 1: refused, it is b's now; b's move goes through, once.
    assert!(!a.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &saved(1)).unwrap());
    assert!(!a.fail("dz", "2", ThreadState::Discovered, Stage::Download, "late").unwrap());
    assert!(b.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &saved(1)).unwrap());
    assert_eq!((state_of(&b, "1"), state_of(&b, "2")), (ThreadState::Saved, ThreadState::Discovered));
}

#[test]
fn a_renewed_lease_holds_and_a_released_claim_is_free_at_once() {
    let (db, _s) = store_with(&["1", "2"]);
    let (a, b) = (worker(&db, "a"), worker(&db, "b"));
    let lease = std::time::Duration::from_millis(400);
    assert_eq!(a.claim(None, ThreadState::Discovered, lease, 10).unwrap().len(), 2);
    for _ in 0..3 {
        std::thread::sleep(lease / 2);
        assert_eq!(a.renew(lease).unwrap(), 2);
    }
    assert!(b.claim(None, ThreadState::Discovered, lease, 10).unwrap().is_empty(), "renewed past the first lease");
    assert!(a.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &saved(1)).unwrap());
    assert_eq!(a.renew(lease).unwrap(), 1, "a move ends the thread's lease");
    assert_eq!(a.release(Some("dz")).unwrap(), 1);
    assert_eq!(ids(&b.claim(None, ThreadState::Discovered, lease, 10).unwrap()), ["2"]);
    // A worker alone on the state may end every lease on it (a killed run's).
    assert_eq!(a.free_leases(None, ThreadState::Discovered).unwrap(), 1);
    assert_eq!(ids(&a.claim(None, ThreadState::Discovered, lease, 10).unwrap()), ["2"]);
}

#[test]
fn a_lease_keeper_renews_until_dropped() {
    let (db, _s) = store_with(&["1"]);
    let (a, b) = (worker(&db, "a"), worker(&db, "b"));
    let lease = std::time::Duration::from_millis(300);
    assert_eq!(a.claim(None, ThreadState::Discovered, lease, 10).unwrap().len(), 1);
    let keeper = a.keep_leases(lease).unwrap();
    std::thread::sleep(lease * 3);
    assert!(b.claim(None, ThreadState::Discovered, lease, 10).unwrap().is_empty(), "kept alive past three leases");
    drop(keeper);
    std::thread::sleep(lease + std::time::Duration::from_millis(100));
    assert_eq!(b.claim(None, ThreadState::Discovered, lease, 10).unwrap().len(), 1);
}

#[test]
fn a_site_lock_has_one_holder_until_its_lease_runs_out() {
    let (db, _s) = store_with(&[]);
    let (a, b) = (worker(&db, "a"), worker(&db, "b"));
    let lease = std::time::Duration::from_millis(300);
    assert!(a.lock_site(Stage::Index, "dz", lease).unwrap());
    assert!(a.lock_site(Stage::Index, "dz", lease).unwrap(), "the holder renews");
    assert!(!b.lock_site(Stage::Index, "dz", lease).unwrap());
    assert!(b.lock_site(Stage::Discover, "dz", lease).unwrap(), "each stage has its own");
    assert!(b.lock_site(Stage::Index, "bbs", lease).unwrap(), "and each site");
    std::thread::sleep(lease + std::time::Duration::from_millis(100));
    assert!(b.lock_site(Stage::Index, "dz", lease).unwrap(), "a's ran out");
    a.unlock_site(Stage::Index, "dz").unwrap();
    assert!(!a.lock_site(Stage::Index, "dz", lease).unwrap(), "unlocking another's lock does nothing");
    b.unlock_site(Stage::Index, "dz").unwrap();
    assert!(a.lock_site(Stage::Index, "dz", lease).unwrap());
}

#[test]
fn new_threads_are_inserted_once() {
    let (_db, mut s) = store_with(&[]);
    assert_eq!(s.insert_new_threads(&[nt("1"), nt("2")]).unwrap(), 2);
    assert_eq!(s.insert_new_threads(&[nt("2"), nt("3")]).unwrap(), 1);
    let rows = s.threads(Some("dz"), ThreadState::Discovered).unwrap();
    assert_eq!(rows.iter().map(|r| r.thread.as_str()).collect::<Vec<_>>(), ["1", "2", "3"]);
}

#[test]
fn listings_insert_new_requeue_grown_and_leave_the_rest() {
    let (_db, mut s) = store_with(&[]);
    let row = |thread: &str, replies: i64, last: &str| NewThread { replies: Some(replies), last_post: Some(last.into()), ..nt(thread) };
    let first = s.record_listings(&[row("1", 3, "2024-03-05T10:00:00"), row("2", 0, "2024-03-04T10:00:00")]).unwrap();
    assert_eq!(first, [Listing::New, Listing::New]);
    // Thread 1 got indexed; then a new reply shows on the list.
    let up = saved(1);
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
    let (_db, mut s) = store_with(&[]);
    let dz = "dz".parse().unwrap();
    let fresh = s.keyword_state(&dz, "考研", 30).unwrap();
    assert_eq!((fresh.lastresult, fresh.pagenum, fresh.watermark, fresh.rounds), (30, 30, None, 0));
    let r = KeywordRound {
        budget: 30,
        pages_read: 4,
        lastresult: 4,
        next_pagenum: 4,
        watermark_after: Some("2024-06-30T22:00:00".into()),
        ..KeywordRound::new(dz.clone(), "考研", "2024-06-30T22:05:00Z".into())
    };
    s.record_keyword_round(&r).unwrap();
    s.record_keyword_round(&KeywordRound { budget: 4, lastresult: 30, next_pagenum: 9, ..r.clone() }).unwrap();
    let st = s.keyword_state(&dz, "考研", 30).unwrap();
    assert_eq!((st.lastresult, st.pagenum, st.watermark.as_deref(), st.rounds), (30, 9, Some("2024-06-30T22:00:00"), 2));
    assert_eq!(s.keyword_rounds(Some("dz")).unwrap().iter().map(|r| r.budget).collect::<Vec<_>>(), [30, 4]);
    assert_eq!(s.keyword_states(None).unwrap(), [st]);
}

#[test]
fn hinted_listings_skip_lookups_and_survive_a_wrong_hint() {
    let (_db, mut s) = store_with(&[]);
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
    let (_db, mut s) = store_with(&["1"]);
    assert_eq!(s.record_skipped(&[(nt("1"), 0.0), (nt("2"), 0.15), (nt("3"), 0.05)]).unwrap(), [false, true, true], "a queued thread is not skipped");
    assert_eq!(s.record_skipped(&[(nt("2"), 0.15)]).unwrap(), [false]);
    let c = &s.counts().unwrap()[0];
    assert_eq!(c.skipped_links, 2);
    assert_eq!(c.top_skipped[0], ("http://h/t/2".to_string(), 0.15));
    assert_eq!(s.promote_skipped("dz", 0.1).unwrap(), 1);
    assert_eq!(state_of(&s, "2"), ThreadState::Discovered);
    assert_eq!(s.counts().unwrap()[0].skipped_links, 1);
}

#[test]
fn a_board_walk_that_broke_off_is_reported_at_the_next_start() {
    let (_db, s) = store_with(&[]);
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
    let (_db, s) = store_with(&["1", "2"]);
    let up = saved(1);
    let r: Result<(), StoreError> = s.batch(|s| {
        s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up)?;
        s.transition("dz", "2", ThreadState::Discovered, ThreadState::Indexed, &up)?;
        Ok(())
    });
    assert!(r.is_err());
    assert_eq!(state_of(&s, "1"), ThreadState::Discovered, "rolled back");
    s.batch(|s| s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).map(drop)).unwrap();
    assert_eq!(state_of(&s, "1"), ThreadState::Saved);
}

#[test]
fn a_batch_inside_a_batch_fails_alone_and_commits_with_the_outer_one() {
    let (db, s) = store_with(&["1", "2"]);
    s.fail("dz", "2", ThreadState::Discovered, Stage::Download, "timeout").unwrap();
    let up = saved(1);
    s.batch(|s| {
        s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up)?;
        let inner: Result<(), StoreError> = s.batch(|s| {
            s.retry_failed(Some("dz"), None)?;
            s.transition("dz", "1", ThreadState::Saved, ThreadState::Indexed, &up).map(drop)
        });
        assert!(matches!(inner, Err(StoreError::Transition { .. })), "{inner:?}");
        Ok::<_, StoreError>(())
    })
    .unwrap();
    assert_eq!((state_of(&s, "1"), state_of(&s, "2")), (ThreadState::Saved, ThreadState::Failed), "the inner retry was undone, the outer move kept");
    // Committed, not left open: another connection sees it.
    assert_eq!(state_of(&open(&db), "1"), ThreadState::Saved);
}

#[test]
fn a_batch_that_panics_is_rolled_back_and_the_store_stays_usable() {
    let (db, s) = store_with(&["1"]);
    let up = saved(1);
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _: Result<(), StoreError> = s.batch(|s| {
            s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up)?;
            panic!("worker died mid-batch");
        });
    }));
    assert!(caught.is_err());
    assert!(!s.conn.in_transaction(), "no transaction left open");
    assert_eq!(state_of(&s, "1"), ThreadState::Discovered);
    assert!(s.transition("dz", "1", ThreadState::Discovered, ThreadState::Saved, &up).unwrap());
    assert_eq!(state_of(&open(&db), "1"), ThreadState::Saved);
}

#[test]
fn transitions_follow_the_machine_and_are_compare_and_set() {
    let (_db, mut s) = store_with(&["1"]);
    let up = saved(2);
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
    assert_eq!(state_of(&s, "1"), ThreadState::Saved);
    assert_eq!(s.transition_many(&[("dz".parse().unwrap(), "1".parse().unwrap())], ThreadState::Saved, ThreadState::Extracted).unwrap(), 1);
}

#[test]
fn a_site_id_edited_into_a_row_by_hand_is_refused_where_the_row_is_read() {
    let (_db, s) = store_with(&[]);
    let row = MediaRow {
        site: "dz".parse().unwrap(),
        url: "http://h/a.jpg".into(),
        sha256: None,
        content_type: None,
        bytes: None,
        status: MediaStatus::Failed,
        reason: Some("HTTP 404".into()),
        fetched_at: "2026-12-07T14:00:00Z".into(),
    };
    s.media_record(&row).unwrap();
    assert_eq!(s.media_rows(None).unwrap(), [row]);
    s.exec("UPDATE media SET site = '../etc'", &[]).unwrap();
    let err = s.media_rows(None).unwrap_err().to_string();
    assert!(err.contains("../etc") && err.contains("SiteId"), "{err}");
}

#[test]
fn media_rows_are_one_per_url_and_failed_ones_can_be_forgotten() {
    let (_db, s) = store_with(&[]);
    let hash = "0f".repeat(32);
    let archived = |site: &str, url: &str| MediaRow {
        site: site.parse().unwrap(),
        url: url.into(),
        sha256: Some(hash.clone()),
        content_type: Some("image/jpeg".into()),
        bytes: Some(4096),
        status: MediaStatus::Archived,
        reason: None,
        fetched_at: "2026-12-06T11:20:03.120Z".into(),
    };
    let failed = MediaRow { sha256: None, content_type: None, bytes: None, status: MediaStatus::Failed, reason: Some("HTTP 404".into()), ..archived("dz", "http://h/b.jpg") };
    s.media_record(&failed).unwrap();
    s.media_record(&archived("dz", "http://h/a.jpg")).unwrap();
    s.media_record(&archived("bbs", "http://h/图.png")).unwrap();
    assert_eq!(s.media_known("dz").unwrap(), ["http://h/a.jpg".to_string(), "http://h/b.jpg".to_string()].into_iter().collect());
    assert_eq!(s.media_rows(Some("dz")).unwrap(), [archived("dz", "http://h/a.jpg"), failed.clone()]);
    assert_eq!(s.media_rows(None).unwrap().len(), 3);
    assert_eq!(s.media_hash_of("dz", "http://h/a.jpg").unwrap(), Some(hash.clone()));
    assert_eq!(s.media_hash_of("dz", "http://h/b.jpg").unwrap(), None, "a failed URL has no file");
    assert_eq!(s.media_type_of(&hash).unwrap().as_deref(), Some("image/jpeg"));
    assert_eq!(s.media_type_of(&"1".repeat(64)).unwrap(), None);
    // Recording a URL again replaces its row: a retried URL that now succeeds.
    s.media_record(&archived("dz", "http://h/b.jpg")).unwrap();
    assert_eq!(s.media_rows(Some("dz")).unwrap().len(), 2);
    s.media_record(&failed).unwrap();
    assert_eq!(s.media_retry_failed(Some("bbs")).unwrap(), 0);
    assert_eq!(s.media_retry_failed(None).unwrap(), 1);
    assert_eq!(s.media_known("dz").unwrap().len(), 1);
}

}
