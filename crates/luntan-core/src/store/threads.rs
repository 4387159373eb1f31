//! Threads: the rows every stage reads, their state transitions, and the
//! per-site counts `luntan-status` shows; kept apart because the state machine
//! lives here and nowhere else.

use super::sql::{vals, DbError, Dialect, Row};
use super::{RoundRecord, StateUrl, Store, StoreError};
use crate::ids::{BoardId, SaveDate, SiteId, ThreadId, ThreadLoc};
use crate::state::{FailureGroup, Stage, ThreadState};

/// A thread row as the stages read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    pub site: SiteId,
    pub thread: ThreadId,
    pub board: BoardId,
    pub url: String,
    pub title: Option<String>,
    pub replies: Option<i64>,
    pub last_post: Option<String>,
    pub post_time: Option<String>,
    pub save_date: Option<SaveDate>,
    pub pages: Option<u32>,
    pub content_type: Option<String>,
    pub state: ThreadState,
    pub fail_stage: Option<Stage>,
    pub fail_reason: Option<String>,
    pub attempts: i64,
}

impl SiteCounts {
    /// A forum's counts before its threads are counted.
    fn new(site: SiteId, boards: i64) -> SiteCounts {
        SiteCounts {
            site,
            boards,
            discovered: 0,
            saved: 0,
            extracted: 0,
            indexed: 0,
            failed: 0,
            failures: Vec::new(),
            last_round: None,
            skipped_links: 0,
            top_skipped: Vec::new(),
            states_kept: 0,
            states_dropped: 0,
            media: None,
        }
    }
}

impl ThreadRow {
    /// Where the thread's files are when its pages are saved on `saved`
    /// (the download stage's own day).
    pub fn location(&self, saved: SaveDate) -> ThreadLoc {
        ThreadLoc { site: self.site.clone(), board: self.board.clone(), thread: self.thread.clone(), saved }
    }

    /// Where the thread's files are now: `None` while it has no save date,
    /// i.e. before its first download.
    pub fn saved_location(&self) -> Option<ThreadLoc> {
        self.save_date.map(|d| self.location(d))
    }

    /// `site/thread`, as failures and logs name a thread.
    pub fn key(&self) -> String {
        format!("{}/{}", self.site, self.thread)
    }
}

/// What a board list row told about a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewThread {
    pub site: SiteId,
    pub board: BoardId,
    pub thread: ThreadId,
    pub url: String,
    pub title: Option<String>,
    pub replies: Option<i64>,
    pub last_post: Option<String>,
}

impl NewThread {
    /// A thread known by its ids and URL alone, before any list row told more.
    pub fn new(site: SiteId, board: BoardId, thread: ThreadId, url: String) -> NewThread {
        NewThread { site, board, thread, url, title: None, replies: None, last_post: None }
    }
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

/// Per-site counts of threads in each state.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SiteCounts {
    pub site: SiteId,
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
    /// Browser mode (S4): DOM states kept and dropped as duplicates, over
    /// the threads saved now.
    pub states_kept: i64,
    pub states_dropped: i64,
    /// What `luntan-media` kept of the forum's pictures and attachments;
    /// absent where it never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<super::MediaCounts>,
}

/// One forum as `luntan-status --json` prints it (and `luntan-serve`'s
/// `/api/status` returns it): its counts, then its monitored keywords.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SiteStatus {
    #[serde(flatten)]
    pub counts: SiteCounts,
    pub keywords: Vec<crate::store::KeywordState>,
}

/// Extra columns a transition sets beside the state.
#[derive(Debug, Clone, Default)]
pub struct Update<'a> {
    pub save_date: Option<SaveDate>,
    pub pages: Option<u32>,
    pub content_type: Option<&'a str>,
    pub post_time: Option<&'a str>,
    pub title: Option<&'a str>,
    /// Browser mode: DOM states kept and dropped as duplicates (S4).
    pub states: Option<(u32, u32)>,
    /// A hybrid site: the comment count the comment API gave at download,
    /// which a later round's count is compared with.
    pub replies: Option<i64>,
    /// A hybrid site whose lists show no last-post time: its newest
    /// comment's time at download, which orders the articles a round
    /// asks for their counts (the most recently active first).
    pub last_post: Option<&'a str>,
}

/// The columns a [`ThreadRow`] is read from, in its fields' order.
macro_rules! row_columns {
    () => {
        "site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts"
    };
}
pub(super) use row_columns;

const INSERT_NEW: &str = "INSERT INTO threads (site, thread, board, url, title, replies, last_post, state)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0) ON CONFLICT(site, thread) DO NOTHING";

impl Store {
    /// Inserts the threads not seen before, in one transaction; returns how many were new.
    pub fn insert_new_threads(&mut self, threads: &[NewThread]) -> Result<usize, StoreError> {
        self.batch(|s| {
            let mut n = 0;
            for t in threads {
                n += s.exec(INSERT_NEW, vals![&t.site, &t.thread, &t.board, &t.url, &t.title, t.replies, &t.last_post])?;
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
        self.batch(|s| {
            let mut out = Vec::with_capacity(threads.len());
            let mut saved = 0;
            for (i, t) in threads.iter().enumerate() {
                let insert = || s.exec(INSERT_NEW, vals![&t.site, &t.thread, &t.board, &t.url, &t.title, t.replies, &t.last_post]);
                if !maybe_stored.get(i).copied().unwrap_or(true) && insert()? == 1 {
                    saved += 1;
                    out.push(Listing::New);
                    continue;
                }
                let stored =
                    s.query_first("SELECT state, replies, last_post FROM threads WHERE site = ?1 AND thread = ?2", vals![&t.site, &t.thread], |r| {
                        Ok((r.get::<i64>(0)?, r.get::<Option<i64>>(1)?, r.get::<Option<String>>(2)?))
                    })?;
                let listing = match stored {
                    // Another worker may insert it between the lookup and
                    // here; it is then theirs to report as new.
                    None => match insert()? {
                        1 => Listing::New,
                        _ => Listing::Unchanged,
                    },
                    Some((code, replies, last_post)) => {
                        let more_replies = matches!((t.replies, replies), (Some(new), Some(old)) if new > old);
                        // Normalized times compare as strings.
                        let newer_post = matches!((&t.last_post, &last_post), (Some(new), Some(old)) if new > old);
                        if more_replies || newer_post {
                            let from = ThreadState::from_code(code).unwrap_or(ThreadState::Failed);
                            if from != ThreadState::Discovered && !from.can_become(ThreadState::Discovered) {
                                return Err(StoreError::Transition {
                                    db: s.db.clone(),
                                    site: t.site.to_string(),
                                    thread: t.thread.to_string(),
                                    from,
                                    to: ThreadState::Discovered,
                                });
                            }
                            s.exec(
                                "UPDATE threads SET replies = COALESCE(?3, replies), last_post = COALESCE(?4, last_post), title = COALESCE(?5, title),
                                    state = 0, attempts = 0, fail_stage = NULL, fail_reason = NULL,
                                    updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                                 WHERE site = ?1 AND thread = ?2",
                                vals![&t.site, &t.thread, t.replies, &t.last_post, &t.title],
                            )?;
                            Listing::Updated
                        } else {
                            Listing::Unchanged
                        }
                    }
                };
                out.push(listing);
            }
            Ok((out, saved))
        })
    }

    /// Calls `f` with every thread id of `site` the store knows: queued,
    /// done, failed, or left out by a topic focus (to fill a Bloom filter).
    pub fn for_each_known_thread(&self, site: &str, mut f: impl FnMut(&str)) -> Result<usize, StoreError> {
        let mut n = 0;
        for sql in ["SELECT thread FROM threads WHERE site = ?1", "SELECT thread FROM skipped_links WHERE site = ?1"] {
            for id in self.query(sql, vals![site], |r| r.get::<String>(0))? {
                f(&id);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Threads of `state`, optionally of one site, in (site, thread) order.
    pub fn threads(&self, site: Option<&str>, state: ThreadState) -> Result<Vec<ThreadRow>, StoreError> {
        let sql = concat!(
            "SELECT ",
            row_columns!(),
            " FROM threads WHERE state = ?1 AND (CAST(?2 AS TEXT) IS NULL OR site = ?2) ORDER BY site, length(thread), thread"
        );
        let rows = self.query(sql, vals![state.code(), site], row_from_sql)?;
        rows.into_iter().map(|r| r.into_row(&self.db)).collect()
    }

    /// One thread's row.
    pub fn thread(&self, site: &str, thread: &str) -> Result<Option<ThreadRow>, StoreError> {
        let sql = concat!("SELECT ", row_columns!(), " FROM threads WHERE site = ?1 AND thread = ?2");
        let raw = self.query_first(sql, vals![site, thread], row_from_sql)?;
        raw.map(|r| r.into_row(&self.db)).transpose()
    }

    /// Moves one thread `from → to` (checked against the state machine),
    /// setting the columns in `update`, and ends any lease on it. Returns
    /// false, changing nothing, when the row is no longer in `from` or
    /// another worker has claimed it since (this worker's lease ran out):
    /// the thread is then that worker's to finish.
    pub fn transition(&self, site: &str, thread: &str, from: ThreadState, to: ThreadState, update: &Update) -> Result<bool, StoreError> {
        if !from.can_become(to) {
            return Err(StoreError::Transition { db: self.db.clone(), site: site.into(), thread: thread.into(), from, to });
        }
        let clears_failure = to != ThreadState::Failed;
        let n = self.exec(
            "UPDATE threads SET state = ?4,
                save_date = COALESCE(?5, save_date),
                pages = COALESCE(?6, pages),
                content_type = COALESCE(?7, content_type),
                post_time = COALESCE(?8, post_time),
                title = COALESCE(?9, title),
                states_kept = COALESCE(?11, states_kept),
                states_dropped = COALESCE(?12, states_dropped),
                replies = COALESCE(?14, replies),
                last_post = COALESCE(?15, last_post),
                fail_stage = CASE WHEN ?10 = 1 THEN NULL ELSE fail_stage END,
                fail_reason = CASE WHEN ?10 = 1 THEN NULL ELSE fail_reason END,
                lease_owner = NULL, lease_until = NULL,
                updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
             WHERE site = ?1 AND thread = ?2 AND state = ?3 AND (lease_owner IS NULL OR lease_owner = ?13)",
            vals![
                site,
                thread,
                from.code(),
                to.code(),
                update.save_date.as_ref().map(SaveDate::as_str),
                update.pages,
                update.content_type,
                update.post_time,
                update.title,
                clears_failure,
                update.states.map(|s| s.0),
                update.states.map(|s| s.1),
                self.worker.as_str(),
                update.replies,
                update.last_post
            ],
        )?;
        Ok(n == 1)
    }

    /// Marks a thread failed at `stage` with a one-line reason (ending any
    /// lease on it, as [`Store::transition`] does).
    pub fn fail(&self, site: &str, thread: &str, from: ThreadState, stage: Stage, reason: &str) -> Result<bool, StoreError> {
        if !from.can_become(ThreadState::Failed) {
            return Err(StoreError::Transition { db: self.db.clone(), site: site.into(), thread: thread.into(), from, to: ThreadState::Failed });
        }
        let n = self.exec(
            "UPDATE threads SET state = -1, fail_stage = ?4, fail_reason = ?5, attempts = attempts + 1,
                lease_owner = NULL, lease_until = NULL,
                updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
             WHERE site = ?1 AND thread = ?2 AND state = ?3 AND (lease_owner IS NULL OR lease_owner = ?6)",
            vals![site, thread, from.code(), stage.as_str(), reason, self.worker.as_str()],
        )?;
        Ok(n == 1)
    }

    /// Moves many threads `from → to` in one transaction (the index stage
    /// commits its index first, then calls this once), as
    /// [`Store::transition`] would one by one.
    pub fn transition_many(&mut self, keys: &[(SiteId, ThreadId)], from: ThreadState, to: ThreadState) -> Result<usize, StoreError> {
        if !from.can_become(to) {
            let (site, thread) = keys.first().map(|(s, t)| (s.to_string(), t.to_string())).unwrap_or_default();
            return Err(StoreError::Transition { db: self.db.clone(), site, thread, from, to });
        }
        self.batch(|s| {
            let mut n = 0;
            for (site, thread) in keys {
                n += s.exec(
                    "UPDATE threads SET state = ?4, fail_stage = NULL, fail_reason = NULL, lease_owner = NULL, lease_until = NULL,
                        updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                     WHERE site = ?1 AND thread = ?2 AND state = ?3 AND (lease_owner IS NULL OR lease_owner = ?5)",
                    vals![site.as_str(), thread.as_str(), from.code(), to.code(), s.worker.as_str()],
                )?;
            }
            Ok(n)
        })
    }

    /// Sends failed threads (of one stage, or all) back to where that stage
    /// starts; returns how many. A failed download restarts as discovered, a
    /// failed extract as saved, a failed index as extracted. One transaction.
    pub fn retry_failed(&self, site: Option<&str>, stage: Option<Stage>) -> Result<usize, StoreError> {
        self.batch(|s| {
            let mut total = 0;
            for st in [Stage::Download, Stage::Extract, Stage::Index] {
                if stage.is_some_and(|x| x != st) {
                    continue;
                }
                total += s.exec(
                    "UPDATE threads SET state = ?1, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')
                     WHERE state = -1 AND fail_stage = ?2 AND (CAST(?3 AS TEXT) IS NULL OR site = ?3)",
                    vals![st.input().code(), st.as_str(), site],
                )?;
            }
            Ok(total)
        })
    }

    /// Every forum's [`SiteStatus`] (`site`: only that one), in id order.
    pub fn status(&self, site: Option<&str>) -> Result<Vec<SiteStatus>, StoreError> {
        let keywords = self.keyword_states(site)?;
        Ok(self
            .counts()?
            .into_iter()
            .filter(|c| site.is_none_or(|s| s == c.site))
            .map(|counts| {
                let keywords = keywords.iter().filter(|k| k.site == counts.site).cloned().collect();
                SiteStatus { counts, keywords }
            })
            .collect())
    }

    /// Per-site counts for `luntan-status`, sites in id order.
    pub fn counts(&self) -> Result<Vec<SiteCounts>, StoreError> {
        let sites = self.query(
            "SELECT s.site, COALESCE(b.n, 0) FROM
               (SELECT id AS site FROM sites UNION SELECT DISTINCT site FROM threads) s
               LEFT JOIN (SELECT site, count(*) AS n FROM boards GROUP BY site) b ON b.site = s.site
             ORDER BY s.site",
            &[],
            |r| Ok((r.get::<SiteId>(0)?, r.get::<i64>(1)?)),
        )?;
        let mut out: Vec<SiteCounts> = sites.into_iter().map(|(site, boards)| SiteCounts::new(site, boards)).collect();
        let rows = self.per_site("SELECT site, state, count(*) FROM threads GROUP BY site, state")?;
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
        // CAST: PostgreSQL sums BIGINTs as NUMERIC.
        let rows = self.per_site(
            "SELECT site, CAST(SUM(states_kept) AS BIGINT), CAST(SUM(states_dropped) AS BIGINT) FROM threads WHERE states_kept IS NOT NULL GROUP BY site",
        )?;
        for (site, kept, dropped) in rows {
            if let Some(c) = out.iter_mut().find(|c| c.site == site) {
                (c.states_kept, c.states_dropped) = (kept, dropped);
            }
        }
        // In the order the threads were stored: SQLite's rowid; PostgreSQL
        // has none, and takes when the thread was found.
        let failed = match self.dialect() {
            Dialect::Sqlite => "SELECT site, COALESCE(fail_stage, '?'), thread, COALESCE(fail_reason, '?') FROM threads WHERE state = -1 ORDER BY site, rowid",
            Dialect::Postgres => {
                "SELECT site, COALESCE(fail_stage, '?'), thread, COALESCE(fail_reason, '?') FROM threads WHERE state = -1
                 ORDER BY site, discovered_at, length(thread), thread"
            }
        };
        let rows = self.query(failed, &[], |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?, r.get::<String>(2)?, r.get::<String>(3)?)))?;
        for c in &mut out {
            let mine: Vec<(&str, String, &str)> = rows
                .iter()
                .filter(|r| r.0 == c.site)
                .map(|(site, stage, thread, reason)| (stage.as_str(), format!("{site}/{thread}"), reason.as_str()))
                .collect();
            c.failures = crate::state::group_failures(mine.iter().map(|(stage, thread, reason)| (*stage, thread.as_str(), *reason)));
        }
        let mut media = self.media_counts()?;
        for c in &mut out {
            c.media = media.remove(c.site.as_str());
            c.last_round = self.last_round(&c.site)?;
            c.skipped_links = self.query_first("SELECT count(*) FROM skipped_links WHERE site = ?1", vals![&c.site], |r| r.get(0))?.unwrap_or(0);
            c.top_skipped = self.query("SELECT url, score FROM skipped_links WHERE site = ?1 ORDER BY score DESC, thread LIMIT 5", vals![&c.site], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        }
        Ok(out)
    }
}

pub(super) struct RawRow {
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

pub(super) fn row_from_sql(r: &Row) -> Result<RawRow, DbError> {
    Ok(read_row!(
        r,
        RawRow { site, thread, board, url, title, replies, last_post, post_time, save_date, pages, content_type, state, fail_stage, fail_reason, attempts }
    ))
}

impl RawRow {
    /// The row with its ids, save date, state and failed stage checked:
    /// the one place a stored string becomes a typed value.
    pub(super) fn into_row(self, db: &StateUrl) -> Result<ThreadRow, StoreError> {
        let bad = |why: String| StoreError::BadRow { db: db.clone(), site: self.site.clone(), thread: self.thread.clone(), why };
        let state = ThreadState::from_code(self.state).ok_or_else(|| StoreError::BadState {
            db: db.clone(),
            site: self.site.clone(),
            thread: self.thread.clone(),
            code: self.state,
        })?;
        let site = SiteId::parse(&self.site).map_err(|e| bad(format!("site {e}")))?;
        let thread = ThreadId::parse(&self.thread).map_err(|e| bad(format!("thread {e}")))?;
        let board = BoardId::parse(&self.board).map_err(|e| bad(format!("board {e}")))?;
        let save_date = self.save_date.as_deref().map(SaveDate::parse).transpose().map_err(|e| bad(format!("save_date: {e}")))?;
        let fail_stage = match self.fail_stage.as_deref() {
            Some(s) => Some(Stage::parse(s).ok_or_else(|| bad(format!("fail_stage {s:?} is no stage")))?),
            None => None,
        };
        Ok(ThreadRow {
            site,
            thread,
            board,
            url: self.url,
            title: self.title,
            replies: self.replies,
            last_post: self.last_post,
            post_time: self.post_time,
            save_date,
            pages: self.pages,
            content_type: self.content_type,
            state,
            fail_stage,
            fail_reason: self.fail_reason,
            attempts: self.attempts,
        })
    }
}
