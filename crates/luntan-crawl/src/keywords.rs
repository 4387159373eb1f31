//! Keyword monitoring (S0): for each keyword, read the forum's own search
//! results newest first, stop at the first page already seen (every result
//! no newer than the keyword's watermark), and adapt each keyword's page
//! budget the way S0 does. Threads found are inserted or re-queued like list
//! rows, so download, extract and index take them from there.
//!
//! Every request goes through the site's [`Fetcher`]: one [`Session`] (cookie
//! jar) per account, so no two requests ever share an account, and the
//! site's gate, robots.txt, retries and Retry-After for all of them together.
//!
//! A real forum's search is not a plain list of pages. Discuz! answers a
//! search with a redirect to a result set named by a search id and pages
//! through that id, so with a `next` selector luntan reads page 1 from the
//! site file's URL and then follows each page's next-page link. Either way
//! one account reads all of a keyword's pages, in order: results move down
//! the pages as posts arrive, so reading a page before the one above it
//! could let a post slip between the two. Forums limit how often one user may
//! search (`interval-ms` keeps luntan under it) and answer a search that
//! comes too soon with a "try again" page (`<busy>`): luntan waits and asks
//! again, and never takes it for a result page. A page that is neither
//! results nor a recognised "no results" page (`<empty>`) is an error.
//!
//! Budget rule, per keyword, after a round: if no page was found seen
//! (`lastresult` still at the limit, 30), new posts may lie further back, so
//! `pagenum = min(pagenum + 5, limit)`; else `pagenum = lastresult`. A page
//! past the last result (a "no results" page, or the page after one with no
//! next-page link) counts as seen: the results are exhausted. The watermark
//! moves to the newest result seen, unless the round left a gap (no seen
//! page reached): then it stays, and the next round, with a larger budget,
//! reads the gap again. A keyword whose round hit an error keeps its record
//! (`lastresult`, `pagenum`, watermark) as it was: an error says nothing
//! about what is new, and taking it for "nothing new" would shrink the
//! budget and miss posts.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::contract::{StageRun, Stop};
use luntan_core::dates::normalize_time;
use luntan_core::ids::{BoardId, SiteId, ThreadId};
use luntan_core::site::{percent_encode_in, Account, AccountAuth, SearchRules, Site};
use luntan_core::store::{KeywordRound, KeywordState, Listing, NewThread, Store, StoreError};
use scraper::Html;
use tokio::time::Instant;
use url::Url;

use crate::db::{lock, with_store};
use crate::discover::{utc_stamp, Seen};
use crate::fetch::{FetchError, Fetcher, Session};
use crate::links::{self, decode, text_of};

/// How often a busy page is asked again before the keyword's round gives up.
const BUSY_TRIES: u32 = 4;

/// S0's rule: the page budget of a keyword's next round.
pub fn next_pagenum(pagenum: u32, lastresult: u32, limit: u32) -> u32 {
    if lastresult >= limit {
        (pagenum + 5).min(limit)
    } else {
        lastresult
    }
}

/// Reads a keywords file: one keyword per line; blank lines and `#` comments skipped.
pub fn read_keywords(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if !line.is_empty() && !line.starts_with('#') && !out.iter().any(|k| k == line) {
            out.push(line.to_owned());
        }
    }
    out
}

/// What one keyword round did for a site.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct KeywordReport {
    pub site: String,
    /// Workers that ran (accounts logged in, or one without an account).
    pub workers: usize,
    pub requests: u64,
    pub pages: usize,
    pub new_threads: usize,
    pub updated_threads: usize,
    pub known_threads: usize,
    /// Busy pages answered by waiting and asking again.
    pub busy_pages: u64,
    /// Keywords left part-way by a stop: their records are as they were.
    pub interrupted: usize,
    pub keywords: Vec<KeywordRound>,
    /// What kept the whole site (or an account) from searching, one line each.
    pub errors: Vec<String>,
}

/// One round over every keyword for one site, as part of a discover run:
/// the run's stop ends it after the pages in flight (a keyword left
/// part-way keeps its record); progress advances once per keyword.
pub async fn monitor_site(run: Arc<StageRun>, fetcher: Arc<Fetcher>, store: Arc<Mutex<Store>>, keywords: &[String]) -> Result<KeywordReport, StoreError> {
    let site = fetcher.site().clone();
    let mut report = KeywordReport { site: site.id.to_string(), ..Default::default() };
    let Some(rules) = site.search.clone() else {
        report.errors.push(format!("{}: no <search> in the site file; keyword monitoring needs the forum's search URL", site.path.display()));
        return Ok(report);
    };
    let requests_before = fetcher.stats.requests.load(Ordering::Relaxed);
    // One line for the forum, not one per page: a search robots.txt
    // forbids is forbidden for every keyword.
    if let Some(probe) = keywords.first().and_then(|k| rules.page_url(k, 1)) {
        if let Err(e) = fetcher.robots_allow(&probe).await {
            report.errors.push(match e {
                FetchError::Robots { url } => format!(
                    "{}: keyword monitoring off: robots.txt disallows the search URL {url} (robots=\"false\" in <politeness> only for a forum you run)",
                    site.id
                ),
                e => format!("{}: keyword monitoring off: {e}", site.id),
            });
            report.requests = fetcher.stats.requests.load(Ordering::Relaxed) - requests_before;
            return Ok(report);
        }
    }
    let started_at = utc_stamp();
    let limit = rules.max_pages;
    let states = with_store(&store, {
        let (site, keywords) = (site.clone(), keywords.to_vec());
        move |s| {
            s.upsert_site(&site)?;
            keywords.iter().map(|k| s.keyword_state(&site.id, k, limit)).collect::<Result<Vec<_>, _>>()
        }
    })
    .await?;
    run.progress().grow(keywords.len() as u64);
    let round = Arc::new(Round::new(&site, rules, keywords, &states, run.stop().clone()));
    let accounts: Vec<Option<Account>> = if site.accounts.is_empty() { vec![None] } else { site.accounts.iter().cloned().map(Some).collect() };
    let mut tasks = tokio::task::JoinSet::new();
    for account in accounts {
        let (fetcher, round, store) = (fetcher.clone(), round.clone(), store.clone());
        tasks.spawn(async move { worker(&fetcher, account, &round, &store).await });
    }
    while let Some(done) = tasks.join_next().await {
        match done.expect("keyword worker panicked") {
            Ok(()) => report.workers += 1,
            // Printed by the caller, once.
            Err(e) => report.errors.push(e.to_string()),
        }
    }
    report.requests = fetcher.stats.requests.load(Ordering::Relaxed) - requests_before;
    report.busy_pages = round.busy.load(Ordering::Relaxed);
    let mut interrupted = vec![false; keywords.len()];
    for k in lock(&round.queue).drain(..) {
        interrupted[k] = true;
    }
    let progress = std::mem::take(&mut *lock(&round.progress));
    run.progress().advance(keywords.len() as u64);
    if report.workers == 0 {
        // No account could log in: nothing was searched, no record moves.
        return Ok(report);
    }

    // Store what was found, then each keyword's new record.
    let settled = with_store(&store, {
        let (site, keywords) = (site.id.clone(), keywords.to_vec());
        move |s| settle(s, &site, &keywords, &states, progress, &interrupted, &started_at, limit)
    })
    .await?;
    report.new_threads += settled.new;
    report.updated_threads += settled.updated;
    report.known_threads += settled.known;
    report.pages += settled.pages;
    report.interrupted += settled.interrupted;
    report.keywords = settled.rounds;
    Ok(report)
}

/// What storing a round's finds did.
#[derive(Default)]
struct Settled {
    new: usize,
    updated: usize,
    known: usize,
    pages: usize,
    interrupted: usize,
    rounds: Vec<KeywordRound>,
}

/// Stores the threads each keyword found and each keyword's new record.
#[allow(clippy::too_many_arguments)]
fn settle(
    store: &mut Store,
    site: &SiteId,
    keywords: &[String],
    states: &[KeywordState],
    progress: Vec<Progress>,
    interrupted: &[bool],
    started_at: &str,
    limit: u32,
) -> Result<Settled, StoreError> {
    let mut out = Settled::default();
    let known = Seen::load(store, site)?;
    for (((keyword, st), p), cut) in keywords.iter().zip(states).zip(progress).zip(interrupted) {
        let rows: Vec<NewThread> = p.rows.into_values().collect();
        let (listings, _) = known.record(store, &rows)?;
        let count = |l: Listing| listings.iter().filter(|x| **x == l).count();
        let (new, updated) = (count(Listing::New), count(Listing::Updated));
        out.new += new;
        out.updated += updated;
        out.known += count(Listing::Unchanged);
        out.pages += p.read.len();
        if *cut || p.interrupted {
            out.interrupted += 1;
            continue;
        }
        let mut round = KeywordRound {
            budget: st.pagenum,
            pages_read: p.read.len() as u32,
            results: p.results,
            new_threads: new as u32,
            updated_threads: updated as u32,
            errors: p.errors,
            error: p.error.as_ref().map(ToString::to_string),
            watermark_before: st.watermark.clone(),
            ..KeywordRound::new(site.clone(), keyword, started_at.to_owned())
        };
        if p.error.is_some() {
            // The record stays as it was (see the module doc).
            round.lastresult = st.lastresult;
            round.next_pagenum = st.pagenum;
            round.watermark_after = st.watermark.clone();
        } else {
            let gap = st.watermark.is_some() && !p.reached_seen;
            round.lastresult = p.lastresult;
            round.next_pagenum = next_pagenum(st.pagenum, p.lastresult, limit);
            round.watermark_after = if gap { st.watermark.clone() } else { st.watermark.clone().max(p.newest) };
        }
        store.record_keyword_round(&round)?;
        out.rounds.push(round);
    }
    Ok(out)
}

/// What the workers share during a round.
struct Round {
    site: Site,
    rules: SearchRules,
    keywords: Vec<String>,
    /// Each keyword's budget this round.
    budgets: Vec<u32>,
    /// Keywords not yet taken by a worker; the worker that takes one reads
    /// all its pages, in order (see `work`).
    queue: Mutex<VecDeque<usize>>,
    progress: Mutex<Vec<Progress>>,
    busy: std::sync::atomic::AtomicU64,
    stop: Stop,
}

impl Round {
    fn new(site: &Site, rules: SearchRules, keywords: &[String], states: &[KeywordState], stop: Stop) -> Round {
        let limit = rules.max_pages;
        let budgets: Vec<u32> = states.iter().map(|st| st.pagenum.clamp(1, limit)).collect();
        let queue = (0..keywords.len()).collect();
        let progress = states.iter().map(|st| Progress { lastresult: limit, watermark: st.watermark.clone(), ..Default::default() }).collect();
        Round {
            site: site.clone(),
            rules,
            keywords: keywords.to_vec(),
            budgets,
            queue: Mutex::new(queue),
            progress: Mutex::new(progress),
            busy: Default::default(),
            stop,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.is_set()
    }

    /// The next keyword to search, unless the run is stopping (the keywords
    /// left in the queue are then reported interrupted).
    fn next_keyword(&self) -> Option<usize> {
        if self.stopped() {
            return None;
        }
        lock(&self.queue).pop_front()
    }

    /// Whether page `page` of keyword `k` is still to be read.
    fn wanted(&self, k: usize, page: u32) -> bool {
        let p = &lock(&self.progress)[k];
        page <= self.budgets[k] && page <= p.lastresult && p.error.is_none()
    }

    fn record(&self, k: usize, page: u32, outcome: Result<ResultPage, KeywordError>) {
        let mut progress = lock(&self.progress);
        let p = &mut progress[k];
        let page_seen = match outcome {
            Err(e) => {
                // Shown once, on the keyword's line of the round's report.
                tracing::debug!("{e}");
                p.errors += 1;
                p.error.get_or_insert(e);
                return;
            }
            Ok(ResultPage::Empty) => {
                p.read.insert(page);
                true
            }
            Ok(ResultPage::Results { rows, next }) => {
                p.read.insert(page);
                p.results += rows.len() as u32;
                let seen = rows.iter().all(|r| p.watermark.as_ref().is_some_and(|w| r.last_post.as_ref().is_some_and(|t| t <= w)));
                for r in rows {
                    if r.last_post > p.newest {
                        p.newest = r.last_post.clone();
                    }
                    match p.rows.get(&r.thread) {
                        Some(have) if have.last_post >= r.last_post => {}
                        _ => {
                            p.rows.insert(r.thread.clone(), r);
                        }
                    }
                }
                if !seen && self.rules.next.is_some() && next.is_none() {
                    // The last result page: the one after it lists nothing.
                    p.lastresult = p.lastresult.min(page + 1);
                    p.reached_seen = true;
                }
                seen
            }
        };
        if page_seen {
            p.lastresult = p.lastresult.min(page);
            p.reached_seen = true;
        }
    }
}

#[derive(Default)]
struct Progress {
    /// The smallest page found seen (the limit until one is).
    lastresult: u32,
    /// Whether a seen page (or the end of the results) was reached at all:
    /// S0's `lastresult` cannot tell "seen at the limit" from "none seen".
    reached_seen: bool,
    watermark: Option<String>,
    newest: Option<String>,
    read: BTreeSet<u32>,
    results: u32,
    errors: u32,
    /// The first error: the keyword's round is cut short there.
    error: Option<KeywordError>,
    /// A stop came while this keyword's pages were being followed.
    interrupted: bool,
    /// Threads found, newest result time each.
    rows: BTreeMap<ThreadId, NewThread>,
}

/// Why a keyword's round, or an account's worker, stopped short; each names
/// the page, or the site and account, it concerns.
#[derive(Debug, thiserror::Error)]
enum KeywordError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{url}: the forum still answered \"busy, try again\" after {tries} tries")]
    Busy { url: Url, tries: u32 },
    #[error("{url}: neither result rows nor a \"no results\" page (check <search row=…> and <empty> in the site file)")]
    Unrecognised { url: Url },
    #[error("{site}: account {account}: login failed: {source}")]
    LoginFailed { site: SiteId, account: String, source: FetchError },
    #[error("{site}: account {account}: login at {url} set no cookie")]
    NoCookie { site: SiteId, account: String, url: Url },
    #[error("{site}: search url for {keyword:?} is not a URL")]
    NotUrl { site: SiteId, keyword: String },
}

/// What a search answered, once it is not a busy page.
enum ResultPage {
    Results { rows: Vec<NewThread>, next: Option<Url> },
    Empty,
}

/// One account's session and when it may start its next search.
struct Searcher<'a> {
    session: Session,
    round: &'a Round,
    /// The earliest start of this account's next search.
    next_search: Option<Instant>,
    /// When the forum answered this account's last search, in Unix milliseconds.
    last_search_ms: Option<i64>,
}

impl Searcher<'_> {
    /// Reads one result page. `new_search` says the request starts a search
    /// (every templated page; only page 1 when pages follow a search id),
    /// which waits for the account's interval.
    async fn read(&mut self, url: &Url, new_search: bool) -> Result<ResultPage, KeywordError> {
        let rules = &self.round.rules;
        let mut tries = 0;
        loop {
            if new_search {
                if let Some(at) = self.next_search {
                    tokio::time::sleep_until(at).await;
                }
            }
            let fetched = self.session.get_html(url).await;
            if new_search {
                // Counted from the answer, not the request: the forum times
                // a search from when it handled it.
                self.next_search = Some(Instant::now() + rules.interval);
                self.last_search_ms = Some(unix_ms());
            }
            let fetched = fetched?;
            match classify(&self.round.site, rules, &fetched.body, fetched.content_type.as_deref(), &fetched.url) {
                Classified::Busy => {
                    tries += 1;
                    self.round.busy.fetch_add(1, Ordering::Relaxed);
                    if tries >= BUSY_TRIES {
                        return Err(KeywordError::Busy { url: url.clone(), tries });
                    }
                    tracing::debug!(%url, tries, "busy page; waiting");
                    tokio::time::sleep(rules.busy_wait).await;
                }
                Classified::Page(page) => return Ok(page),
                Classified::Unrecognised => return Err(KeywordError::Unrecognised { url: fetched.url }),
            }
        }
    }
}

async fn log_in(site: &Site, rules: &SearchRules, account: &Account, session: &Session) -> Result<(), KeywordError> {
    match &account.auth {
        AccountAuth::Cookie(header) => {
            session.add_cookies(header);
            Ok(())
        }
        AccountAuth::Login { url, fields } => {
            let form = fields
                .iter()
                .map(|(k, v)| format!("{}={}", percent_encode_in(k, rules.encoding), percent_encode_in(v, rules.encoding)))
                .collect::<Vec<_>>()
                .join("&");
            session.post_form(url, form).await.map_err(|source| KeywordError::LoginFailed { site: site.id.clone(), account: account.name.clone(), source })?;
            if !session.has_cookies_for(url) {
                return Err(KeywordError::NoCookie { site: site.id.clone(), account: account.name.clone(), url: url.clone() });
            }
            Ok(())
        }
    }
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Works through the queue with one account; an error only when it could not start.
async fn worker(fetcher: &Fetcher, account: Option<Account>, round: &Round, store: &Arc<Mutex<Store>>) -> Result<(), KeywordError> {
    let session = fetcher.session()?;
    if let Some(a) = &account {
        log_in(&round.site, &round.rules, a, &session).await?;
    }
    // The forum's interval spans runs: a round started right after the last
    // one still waits for it.
    let name = account.as_ref().map_or(String::new(), |a| a.name.clone());
    let last = with_store(store, {
        let (site, name) = (round.site.id.clone(), name.clone());
        move |s| s.last_search(&site, &name)
    })
    .await?;
    let wait = last.map_or(0, |ms| ms + round.rules.interval.as_millis() as i64 - unix_ms()).max(0);
    let mut searcher = Searcher { session, round, next_search: Some(Instant::now() + Duration::from_millis(wait as u64)), last_search_ms: None };
    let result = work(&mut searcher, round).await;
    if let Some(ms) = searcher.last_search_ms {
        let site = round.site.id.clone();
        with_store(store, move |s| s.set_last_search(&site, &name, ms)).await?;
    }
    result
}

async fn work(searcher: &mut Searcher<'_>, round: &Round) -> Result<(), KeywordError> {
    while let Some(k) = round.next_keyword() {
        let keyword = &round.keywords[k];
        let Some(mut url) = round.rules.page_url(keyword, 1) else {
            round.record(k, 1, Err(KeywordError::NotUrl { site: round.site.id.clone(), keyword: keyword.clone() }));
            continue;
        };
        let mut page = 1;
        loop {
            let outcome = searcher.read(&url, page == 1 || round.rules.next.is_none()).await;
            // This account reads the keyword's pages in turn: results move
            // down the pages as posts arrive, so a page read before the one
            // above it can let a post fall between the two unseen, and the
            // watermark would then pass it for good.
            let next = match (&outcome, &round.rules.next) {
                (Ok(ResultPage::Results { next, .. }), Some(_)) => next.clone(),
                (Ok(ResultPage::Results { .. }), None) => round.rules.page_url(keyword, page + 1),
                _ => None,
            };
            round.record(k, page, outcome);
            let Some(next) = next else { break };
            if !round.wanted(k, page + 1) {
                break;
            }
            if round.stopped() {
                lock(&round.progress)[k].interrupted = true;
                break;
            }
            (url, page) = (next, page + 1);
        }
    }
    Ok(())
}

enum Classified {
    Busy,
    Page(ResultPage),
    Unrecognised,
}

/// Tells a busy page, a results page (its rows, the result's post time as
/// the row's last post, and its next-page link) and a "no results" page apart.
fn classify(site: &Site, rules: &SearchRules, body: &[u8], content_type: Option<&str>, url: &Url) -> Classified {
    let html = decode(site, body, content_type);
    let doc = Html::parse_document(&html);
    if rules.busy.as_ref().is_some_and(|b| b.matches(&doc)) {
        return Classified::Busy;
    }
    let base = links::base_url(&doc, url);
    let mut rows = Vec::new();
    for row in doc.select(&rules.row) {
        let threads = links::scan(site, &doc, Some(row), &base, &site.links.thread);
        let Some(link) = threads.matched.into_iter().find(|m| m.m.thread.is_some()) else { continue };
        let board = links::scan(site, &doc, Some(row), &base, &site.links.board).matched.into_iter().find_map(|m| m.m.board).or(link.m.board.clone());
        let time = row.select(&rules.time).next().map(text_of).and_then(|t| normalize_time(&t));
        rows.push(NewThread {
            site: site.id.clone(),
            // Rows without a board link get a board of their own; the thread
            // keeps the board it was first listed under.
            board: board.unwrap_or_else(|| BoardId::parse("search").expect("a safe id")),
            thread: link.m.thread.clone().expect("checked above"),
            url: link.url.to_string(),
            title: Some(link.text).filter(|t| !t.is_empty()),
            replies: None,
            last_post: time,
        });
    }
    if !rows.is_empty() {
        let next = rules.next.as_ref().and_then(|sel| {
            let el = doc.select(sel).next()?;
            let href = el.value().attr("href").or_else(|| el.select(links::anchors()).next().and_then(|a| a.value().attr("href")))?;
            links::resolve(site, &base, href)
        });
        return Classified::Page(ResultPage::Results { rows, next });
    }
    if rules.empty.matches(&doc) {
        return Classified::Page(ResultPage::Empty);
    }
    Classified::Unrecognised
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_follows_s0() {
        // No seen page found: five more, at most the limit.
        assert_eq!(next_pagenum(30, 30, 30), 30);
        assert_eq!(next_pagenum(2, 30, 30), 7);
        assert_eq!(next_pagenum(28, 30, 30), 30);
        // Else the smallest page found seen.
        assert_eq!(next_pagenum(30, 3, 30), 3);
        assert_eq!(next_pagenum(7, 1, 30), 1);
    }

    #[test]
    fn keyword_files_skip_blanks_comments_and_repeats() {
        assert_eq!(read_keywords("考研\n\n# 注释\n 调剂 \n考研\n"), ["考研", "调剂"]);
    }

    #[test]
    fn forms_are_encoded_in_the_forums_encoding() {
        assert_eq!(percent_encode_in("小明", encoding_rs::GBK), "%D0%A1%C3%F7");
        assert_eq!(percent_encode_in("a b&c", encoding_rs::GBK), "a%20b%26c");
    }
}
