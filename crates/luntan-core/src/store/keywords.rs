//! Keyword monitoring (S0): each keyword's record, its round history and
//! when each search account last searched, kept apart from the threads they feed.

use super::sql::vals;
use super::{Store, StoreError};
use crate::ids::SiteId;

/// A monitored keyword's record (S0's `{keyword, lastresult, pagenum, date}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeywordState {
    pub site: SiteId,
    pub keyword: String,
    /// The smallest result page found already seen in the last round
    /// (the page limit when none was).
    pub lastresult: u32,
    /// Result pages to read in the next round.
    pub pagenum: u32,
    /// The newest post time seen; results no newer are already stored.
    pub watermark: Option<String>,
    pub rounds: u32,
    /// Why the latest round left the record as it was (`None` when it went through).
    pub last_error: Option<String>,
}

/// What one round did for one keyword (the `keyword_rounds` table).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeywordRound {
    pub site: SiteId,
    pub keyword: String,
    pub started_at: String,
    /// `pagenum` going into the round.
    pub budget: u32,
    pub pages_read: u32,
    pub lastresult: u32,
    /// `pagenum` for the next round.
    pub next_pagenum: u32,
    pub watermark_before: Option<String>,
    pub watermark_after: Option<String>,
    pub results: u32,
    pub new_threads: u32,
    pub updated_threads: u32,
    pub errors: u32,
    /// The first error, when the round was cut short (the record is then left as it was).
    pub error: Option<String>,
}

impl KeywordRound {
    /// A round of `keyword` on `site` begun at `started_at`, before it reads a page.
    pub fn new(site: SiteId, keyword: &str, started_at: String) -> KeywordRound {
        KeywordRound {
            site,
            keyword: keyword.to_owned(),
            started_at,
            budget: 0,
            pages_read: 0,
            lastresult: 0,
            next_pagenum: 0,
            watermark_before: None,
            watermark_after: None,
            results: 0,
            new_threads: 0,
            updated_threads: 0,
            errors: 0,
            error: None,
        }
    }
}

impl Store {
    /// A keyword's record; a keyword never monitored starts with both
    /// `lastresult` and `pagenum` at `max_pages` (S0: 30) and no watermark.
    pub fn keyword_state(&self, site: &SiteId, keyword: &str, max_pages: u32) -> Result<KeywordState, StoreError> {
        let fresh = KeywordState {
            site: site.clone(),
            keyword: keyword.to_owned(),
            lastresult: max_pages,
            pagenum: max_pages,
            watermark: None,
            rounds: 0,
            last_error: None,
        };
        let mut states = self.keyword_states_where(Some(site), Some(keyword))?;
        Ok(states.pop().unwrap_or(fresh))
    }

    /// Every keyword record of a site (or all), by site and keyword.
    pub fn keyword_states(&self, site: Option<&str>) -> Result<Vec<KeywordState>, StoreError> {
        self.keyword_states_where(site, None)
    }

    fn keyword_states_where(&self, site: Option<&str>, keyword: Option<&str>) -> Result<Vec<KeywordState>, StoreError> {
        self.query(
            "SELECT site, keyword, lastresult, pagenum, watermark, rounds,
                (SELECT error FROM keyword_rounds r WHERE r.site = k.site AND r.keyword = k.keyword ORDER BY id DESC LIMIT 1)
             FROM keywords k WHERE (CAST(?1 AS TEXT) IS NULL OR site = ?1) AND (CAST(?2 AS TEXT) IS NULL OR keyword = ?2) ORDER BY site, keyword",
            vals![site, keyword],
            |r| Ok(read_row!(r, KeywordState { site, keyword, lastresult, pagenum, watermark, rounds, last_error })),
        )
    }

    /// Stores a keyword's round: its new record and a line of history, in one transaction.
    pub fn record_keyword_round(&mut self, r: &KeywordRound) -> Result<(), StoreError> {
        self.batch(|s| {
            s.exec(
                "INSERT INTO keywords (site, keyword, lastresult, pagenum, watermark, rounds) VALUES (?1, ?2, ?3, ?4, ?5, 1)
                 ON CONFLICT(site, keyword) DO UPDATE SET lastresult = excluded.lastresult, pagenum = excluded.pagenum,
                    watermark = excluded.watermark, rounds = keywords.rounds + 1, updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')",
                vals![&r.site, &r.keyword, r.lastresult, r.next_pagenum, &r.watermark_after],
            )?;
            s.exec(
                "INSERT INTO keyword_rounds (site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after,
                    results, new_threads, updated_threads, errors, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                vals![
                    &r.site,
                    &r.keyword,
                    &r.started_at,
                    r.budget,
                    r.pages_read,
                    r.lastresult,
                    r.next_pagenum,
                    &r.watermark_before,
                    &r.watermark_after,
                    r.results,
                    r.new_threads,
                    r.updated_threads,
                    r.errors,
                    &r.error
                ],
            )?;
            Ok(())
        })
    }

    /// When `account` (`""` without one) last started a search on `site`, in
    /// Unix milliseconds: a forum's interval between searches spans runs.
    pub fn last_search(&self, site: &str, account: &str) -> Result<Option<i64>, StoreError> {
        self.query_first("SELECT last_search_ms FROM search_accounts WHERE site = ?1 AND account = ?2", vals![site, account], |r| r.get(0))
    }

    pub fn set_last_search(&self, site: &str, account: &str, unix_ms: i64) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO search_accounts (site, account, last_search_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(site, account) DO UPDATE SET last_search_ms = CASE
                WHEN excluded.last_search_ms > search_accounts.last_search_ms THEN excluded.last_search_ms ELSE search_accounts.last_search_ms END",
            vals![site, account, unix_ms],
        )
        .map(drop)
    }

    /// The keyword round history of a site (or all), oldest first.
    pub fn keyword_rounds(&self, site: Option<&str>) -> Result<Vec<KeywordRound>, StoreError> {
        self.query(
            "SELECT site, keyword, started_at, budget, pages_read, lastresult, next_pagenum, watermark_before, watermark_after,
                results, new_threads, updated_threads, errors, error FROM keyword_rounds WHERE CAST(?1 AS TEXT) IS NULL OR site = ?1 ORDER BY id",
            vals![site],
            |r| {
                Ok(read_row!(
                    r,
                    KeywordRound {
                        site,
                        keyword,
                        started_at,
                        budget,
                        pages_read,
                        lastresult,
                        next_pagenum,
                        watermark_before,
                        watermark_after,
                        results,
                        new_threads,
                        updated_threads,
                        errors,
                        error
                    }
                ))
            },
        )
    }
}
