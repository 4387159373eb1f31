//! Sites, boards, discover rounds and skipped links: what discover keeps
//! about a forum beside its threads, grouped because one round writes them together.

use super::sql::{vals, Dialect};
use super::{NewThread, Store, StoreError};
use crate::ids::SiteId;
use crate::site::Site;

/// What one discover round did for a site (the `rounds` table).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RoundRecord {
    pub site: SiteId,
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

/// A board as stored: its id, its first list page, its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardRow {
    pub board: crate::ids::BoardId,
    pub url: String,
    pub title: Option<String>,
}

/// What identifies a page's content for a conditional request: the
/// forum's `ETag` and `Last-Modified` for it, as it sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether the forum gave anything to ask with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// A board's schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardSchedule {
    pub interval_secs: Option<i64>,
    pub next_visit: Option<i64>,
}

impl Store {
    /// Records (or refreshes) a site's name and home.
    pub fn upsert_site(&self, site: &Site) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO sites (id, name, home) VALUES (?1, ?2, ?3)
             ON CONFLICT(id) DO UPDATE SET name = excluded.name, home = excluded.home",
            vals![&site.id, &site.name, site.home.as_str()],
        )
        .map(drop)
    }

    /// The cached encoding of a site, if one was detected.
    pub fn site_encoding(&self, site: &str) -> Result<Option<String>, StoreError> {
        self.query_first("SELECT encoding FROM sites WHERE id = ?1", vals![site], |r| r.get::<Option<String>>(0)).map(Option::flatten)
    }

    pub fn set_site_encoding(&self, site: &str, encoding: &str, why: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE sites SET encoding = ?2, encoding_why = ?3, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?1",
            vals![site, encoding, why],
        )
        .map(drop)
    }

    pub fn upsert_board(&self, site: &str, board: &str, url: &str, title: Option<&str>) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO boards (site, board, url, title) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(site, board) DO UPDATE SET title = COALESCE(excluded.title, boards.title)",
            vals![site, board, url, title],
        )
        .map(drop)
    }

    /// The validators kept for every page of `site` (list pages), by URL.
    pub fn validators(&self, site: &str) -> Result<std::collections::HashMap<String, Validators>, StoreError> {
        let rows = self.query("SELECT url, etag, last_modified FROM validators WHERE site = ?1", vals![site], |r| {
            Ok((r.get::<String>(0)?, Validators { etag: r.get(1)?, last_modified: r.get(2)? }))
        })?;
        Ok(rows.into_iter().collect())
    }

    /// Keeps what the forum last said identifies `url`'s content; a page
    /// sent without validators forgets them.
    pub fn set_validators(&self, site: &str, url: &str, v: &Validators) -> Result<(), StoreError> {
        match v.is_empty() {
            true => self.exec("DELETE FROM validators WHERE site = ?1 AND url = ?2", vals![site, url]),
            false => self.exec(
                "INSERT INTO validators (site, url, etag, last_modified) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(site, url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified",
                vals![site, url, &v.etag, &v.last_modified],
            ),
        }
        .map(drop)
    }

    /// Every board of `site`, in the order first stored (the boards found
    /// past the home page, or for protocol mode the users found so far,
    /// which later rounds read).
    pub fn boards(&self, site: &str) -> Result<Vec<BoardRow>, StoreError> {
        let sql = match self.dialect() {
            Dialect::Sqlite => "SELECT board, url, title FROM boards WHERE site = ?1 ORDER BY rowid",
            Dialect::Postgres => "SELECT board, url, title FROM boards WHERE site = ?1 ORDER BY seq",
        };
        self.query(sql, vals![site], |r| Ok(BoardRow { board: r.get(0)?, url: r.get(1)?, title: r.get(2)? }))
    }

    /// Marks a walk of a board's list pages as started; returns whether the
    /// previous walk broke off (killed, or a list page failed). Such a board
    /// must be walked in full: its early pages are known, but threads further
    /// down were never read, so S1's stop rule would wrongly end the walk.
    pub fn begin_board_walk(&self, site: &str, board: &str) -> Result<bool, StoreError> {
        self.batch(|s| {
            let open: Option<i64> = s.query_first("SELECT walk_open FROM boards WHERE site = ?1 AND board = ?2", vals![site, board], |r| r.get(0))?;
            s.exec("UPDATE boards SET walk_open = 1 WHERE site = ?1 AND board = ?2", vals![site, board])?;
            Ok(open == Some(1))
        })
    }

    /// Notes a visit of a board's list pages; `finished` when every page it
    /// meant to read was read.
    pub fn board_visited(&self, site: &str, board: &str, pages_read: u32, finished: bool) -> Result<(), StoreError> {
        self.exec(
            "UPDATE boards SET pages_read = ?3, walk_open = ?4, last_visit = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE site = ?1 AND board = ?2",
            vals![site, board, pages_read, !finished],
        )
        .map(drop)
    }

    /// Records thread links a topic focus left out, with their scores;
    /// returns, per link, whether it was not recorded (nor queued) before.
    pub fn record_skipped(&mut self, links: &[(NewThread, f64)]) -> Result<Vec<bool>, StoreError> {
        self.batch(|s| {
            let mut fresh = Vec::with_capacity(links.len());
            let exists = |sql: &'static str, t: &NewThread| s.query_first(sql, vals![&t.site, &t.thread], |_| Ok(())).map(|r| r.is_some());
            for (t, score) in links {
                // A thread queued earlier (a lower threshold then) stays queued.
                if exists("SELECT 1 FROM threads WHERE site = ?1 AND thread = ?2", t)? {
                    fresh.push(false);
                    continue;
                }
                fresh.push(!exists("SELECT 1 FROM skipped_links WHERE site = ?1 AND thread = ?2", t)?);
                s.exec(
                    "INSERT INTO skipped_links (site, thread, board, url, anchor, score) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(site, thread) DO UPDATE SET score = excluded.score, anchor = excluded.anchor, url = excluded.url",
                    vals![&t.site, &t.thread, &t.board, &t.url, &t.title, *score],
                )?;
            }
            Ok(fresh)
        })
    }

    /// Queues the skipped links of `site` that score at least `threshold`
    /// (after the threshold was lowered), without reading any board page
    /// again; returns how many.
    pub fn promote_skipped(&mut self, site: &str, threshold: f64) -> Result<usize, StoreError> {
        self.batch(|s| {
            let n = s.exec(
                "INSERT INTO threads (site, thread, board, url, title, state)
                 SELECT site, thread, board, url, anchor, 0 FROM skipped_links WHERE site = ?1 AND score >= ?2
                 ON CONFLICT(site, thread) DO NOTHING",
                vals![site, threshold],
            )?;
            s.exec("DELETE FROM skipped_links WHERE site = ?1 AND score >= ?2", vals![site, threshold])?;
            Ok(n)
        })
    }

    /// A board's schedule (interval and next visit).
    pub fn board_schedule(&self, site: &str, board: &str) -> Result<BoardSchedule, StoreError> {
        self.query_first("SELECT interval_secs, next_visit FROM boards WHERE site = ?1 AND board = ?2", vals![site, board], |r| {
            Ok(BoardSchedule { interval_secs: r.get(0)?, next_visit: r.get(1)? })
        })
        .map(|o| o.unwrap_or(BoardSchedule { interval_secs: None, next_visit: None }))
    }

    pub fn set_board_schedule(&self, site: &str, board: &str, interval_secs: i64, next_visit: i64) -> Result<(), StoreError> {
        self.exec("UPDATE boards SET interval_secs = ?3, next_visit = ?4 WHERE site = ?1 AND board = ?2", vals![site, board, interval_secs, next_visit])
            .map(drop)
    }

    /// The earliest scheduled board visit (unix seconds), over all boards of the given sites.
    pub fn next_board_visit(&self, sites: &[String]) -> Result<Option<i64>, StoreError> {
        let mut best: Option<i64> = None;
        for site in sites {
            let v: Option<i64> = self.query_first("SELECT min(COALESCE(next_visit, 0)) FROM boards WHERE site = ?1", vals![site], |r| r.get(0))?.flatten();
            if let Some(v) = v {
                best = Some(best.map_or(v, |b: i64| b.min(v)));
            }
        }
        Ok(best)
    }

    pub fn record_round(&self, r: &RoundRecord) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO rounds (site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            vals![
                &r.site,
                &r.started_at,
                &r.finished_at,
                r.requests,
                r.list_pages,
                r.boards_visited,
                r.boards_skipped,
                r.new_threads,
                r.updated_threads,
                r.errors
            ],
        )
        .map(drop)
    }

    pub fn last_round(&self, site: &str) -> Result<Option<RoundRecord>, StoreError> {
        self.query_first(
            "SELECT site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors
             FROM rounds WHERE site = ?1 ORDER BY id DESC LIMIT 1",
            vals![site],
            |r| {
                Ok(read_row!(
                    r,
                    RoundRecord { site, started_at, finished_at, requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors }
                ))
            },
        )
    }
}
