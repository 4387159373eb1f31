//! Keyword monitoring (S0): for each keyword, read the forum's own search
//! results newest first, stop at the first page already seen (every result
//! no newer than the keyword's watermark), and adapt each keyword's page
//! budget the way S0 does. Threads found are inserted or re-queued like list
//! rows, so download, extract and index take them from there.
//!
//! One worker per account, each with its own HTTP client and cookies, so no
//! two requests ever share an account; the workers take the (keyword, page)
//! tasks in order, and skip pages past a page already found seen (S0's
//! `lastresult`, kept as a minimum under a lock). All workers pass one gate
//! holding the site's concurrency and delay, and search URLs are checked
//! against robots.txt.
//!
//! Budget rule, per keyword, after a round: if no page was found seen
//! (`lastresult` still at the limit, 30), new posts may lie further back, so
//! `pagenum = min(pagenum + 5, limit)`; else `pagenum = lastresult`. A page
//! past the last result lists nothing and counts as seen: the results are
//! exhausted. The watermark moves to the newest result seen, unless the
//! round left a gap (no seen page reached, or a page failed): then it stays,
//! and the next round, with a larger budget, reads the gap again.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::dates::normalize_time;
use luntan_core::site::{Account, AccountAuth, SearchRules, Site};
use luntan_core::store::{KeywordRound, Listing, NewThread, Store, StoreError};
use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};
use scraper::Html;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

use crate::discover::{lock, Seen};
use crate::links::{self, decode, text_of};

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
    pub keywords: Vec<KeywordRound>,
    pub errors: Vec<String>,
}

/// One round over every keyword for one site.
pub async fn monitor_site(site: Arc<Site>, store: Arc<Mutex<Store>>, keywords: &[String]) -> Result<KeywordReport, StoreError> {
    let mut report = KeywordReport { site: site.id.clone(), ..Default::default() };
    let Some(rules) = site.search.clone() else {
        report.errors.push(format!("{}: no <search> in the site file; keywords need the forum's search URL", site.path.display()));
        return Ok(report);
    };
    lock(&store).upsert_site(&site)?;
    let started_at = utc_stamp();
    let limit = rules.max_pages;
    let states = {
        let s = lock(&store);
        keywords.iter().map(|k| s.keyword_state(&site.id, k, limit)).collect::<Result<Vec<_>, _>>()?
    };
    let shared = Arc::new(Round {
        queue: Mutex::new(states.iter().enumerate().flat_map(|(k, st)| (1..=st.pagenum.clamp(1, limit)).map(move |p| (k, p))).collect()),
        progress: Mutex::new(states.iter().map(|st| Progress { lastresult: limit, watermark: st.watermark.clone(), ..Default::default() }).collect()),
        gate: Gate::new(&site),
        requests: std::sync::atomic::AtomicU64::new(0),
        errors: Mutex::new(Vec::new()),
    });
    let accounts: Vec<Option<Account>> = if site.accounts.is_empty() { vec![None] } else { site.accounts.iter().cloned().map(Some).collect() };
    let robots = match load_robots(&site, &shared).await {
        Ok(r) => r,
        Err(e) => {
            report.errors.push(e);
            report.requests = shared.requests.load(std::sync::atomic::Ordering::Relaxed);
            return Ok(report);
        }
    };
    let mut tasks = tokio::task::JoinSet::new();
    for account in accounts {
        let (site, rules, shared, keywords, robots) = (site.clone(), rules.clone(), shared.clone(), keywords.to_vec(), robots.clone());
        tasks.spawn(async move { worker(&site, &rules, account, &shared, &keywords, robots.as_deref()).await });
    }
    while let Some(done) = tasks.join_next().await {
        if done.expect("keyword worker panicked") {
            report.workers += 1;
        }
    }
    report.requests = shared.requests.load(std::sync::atomic::Ordering::Relaxed);
    report.errors.extend(std::mem::take(&mut *lock_plain(&shared.errors)));

    // Store what was found, then each keyword's new record.
    let known = Seen::load(&lock(&store), &site.id)?;
    let progress = std::mem::take(&mut *lock_plain(&shared.progress));
    for ((keyword, st), p) in keywords.iter().zip(&states).zip(progress) {
        let rows: Vec<NewThread> = p.rows.into_values().collect();
        let (listings, _) = known.record(&mut lock(&store), &rows)?;
        let count = |l: Listing| listings.iter().filter(|x| **x == l).count();
        let (new, updated) = (count(Listing::New), count(Listing::Updated));
        report.new_threads += new;
        report.updated_threads += updated;
        report.known_threads += count(Listing::Unchanged);
        report.pages += p.read.len();
        let seen_found = p.lastresult < limit || p.seen_at_limit;
        let gap = p.errors > 0 || (st.watermark.is_some() && !seen_found);
        let watermark_after = if gap { st.watermark.clone() } else { st.watermark.clone().max(p.newest.clone()) };
        let round = KeywordRound {
            site: site.id.clone(),
            keyword: keyword.clone(),
            started_at: started_at.clone(),
            budget: st.pagenum,
            pages_read: p.read.len() as u32,
            lastresult: p.lastresult,
            next_pagenum: next_pagenum(st.pagenum, p.lastresult, limit),
            watermark_before: st.watermark.clone(),
            watermark_after,
            results: p.results,
            new_threads: new as u32,
            updated_threads: updated as u32,
            errors: p.errors,
        };
        lock(&store).record_keyword_round(&round)?;
        report.keywords.push(round);
    }
    Ok(report)
}

/// What the workers share during a round.
struct Round {
    /// (keyword index, page), keyword by keyword, pages in order.
    queue: Mutex<VecDeque<(usize, u32)>>,
    progress: Mutex<Vec<Progress>>,
    gate: Gate,
    requests: std::sync::atomic::AtomicU64,
    errors: Mutex<Vec<String>>,
}

#[derive(Default)]
struct Progress {
    /// The smallest page found seen (the limit until one is).
    lastresult: u32,
    /// Whether the page at the limit itself was seen (S0 cannot tell it from "none").
    seen_at_limit: bool,
    watermark: Option<String>,
    newest: Option<String>,
    read: BTreeSet<u32>,
    results: u32,
    errors: u32,
    /// Threads found, newest result time each.
    rows: BTreeMap<String, NewThread>,
}

fn lock_plain<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The site's concurrency and delay, for every worker together.
struct Gate {
    slots: Semaphore,
    next: tokio::sync::Mutex<Instant>,
    delay: Duration,
}

impl Gate {
    fn new(site: &Site) -> Gate {
        Gate { slots: Semaphore::new(site.politeness.concurrency), next: tokio::sync::Mutex::new(Instant::now()), delay: site.politeness.delay }
    }

    async fn enter(&self) -> tokio::sync::SemaphorePermit<'_> {
        let permit = self.slots.acquire().await.expect("gate semaphore is never closed");
        let mut next = self.next.lock().await;
        let now = Instant::now();
        if *next > now {
            tokio::time::sleep_until(*next).await;
        }
        *next = Instant::now() + self.delay;
        permit
    }
}

/// One account's HTTP client and cookies.
struct Session {
    client: reqwest::Client,
    cookies: Vec<(String, String)>,
    max_body: u64,
}

impl Session {
    fn new(site: &Site) -> Result<Session, String> {
        let p = &site.politeness;
        // Redirects are not followed: a login answers 302 with its cookie,
        // and a search that redirects is one luntan does not understand.
        let client = reqwest::Client::builder()
            .user_agent(p.user_agent.clone())
            .timeout(p.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Session { client, cookies: Vec::new(), max_body: p.max_body_bytes })
    }

    fn cookie_header(&self) -> Option<String> {
        (!self.cookies.is_empty()).then(|| self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; "))
    }

    fn keep_cookies(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all(SET_COOKIE).iter().filter_map(|v| v.to_str().ok()) {
            let Some((name, value)) = v.split(';').next().and_then(|kv| kv.split_once('=')) else { continue };
            let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
            self.cookies.retain(|(k, _)| *k != name);
            self.cookies.push((name, value));
        }
    }

    async fn body(&self, mut resp: reqwest::Response, url: &Url) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| format!("{url}: {e}"))? {
            if body.len() as u64 + chunk.len() as u64 > self.max_body {
                return Err(format!("{url}: body larger than {} bytes", self.max_body));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn form_encode(fields: &[(String, String)], encoding: &'static encoding_rs::Encoding) -> String {
    let enc = |s: &str| {
        let (bytes, _, _) = encoding.encode(s);
        bytes.iter().map(|&b| if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') { (b as char).to_string() } else { format!("%{b:02X}") }).collect::<String>()
    };
    fields.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect::<Vec<_>>().join("&")
}

async fn log_in(site: &Site, rules: &SearchRules, account: &Account, session: &mut Session, round: &Round) -> Result<(), String> {
    match &account.auth {
        AccountAuth::Cookie(header) => {
            for kv in header.split(';') {
                if let Some((k, v)) = kv.split_once('=') {
                    session.cookies.push((k.trim().to_owned(), v.trim().to_owned()));
                }
            }
            Ok(())
        }
        AccountAuth::Login { url, fields } => {
            if !site.host_allowed(url) {
                return Err(format!("{}: account {}: login-url {url} is not on the forum's host", site.id, account.name));
            }
            let _permit = round.gate.enter().await;
            round.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let resp = session
                .client
                .post(url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(form_encode(fields, rules.encoding))
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = resp.status();
            session.keep_cookies(&resp);
            if status.is_client_error() || status.is_server_error() {
                return Err(format!("{}: account {}: login at {url} answered HTTP {}", site.id, account.name, status.as_u16()));
            }
            if session.cookies.is_empty() {
                return Err(format!("{}: account {}: login at {url} set no cookie", site.id, account.name));
            }
            Ok(())
        }
    }
}

/// robots.txt for the search URLs' host: RFC 9309, as the fetcher reads it
/// (a 4xx means no rules; unreachable or 5xx means keep off).
async fn load_robots(site: &Site, round: &Round) -> Result<Option<Arc<texting_robots::Robot>>, String> {
    if !site.politeness.robots {
        return Ok(None);
    }
    let Some(rules) = &site.search else { return Ok(None) };
    let probe = rules.page_url("x", 1).ok_or_else(|| format!("{}: search url is not a URL", site.id))?;
    let robots_url = probe.join("/robots.txt").map_err(|e| e.to_string())?;
    let session = Session::new(site)?;
    let _permit = round.gate.enter().await;
    round.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let resp = session.client.get(robots_url.clone()).send().await.map_err(|e| format!("{robots_url}: {e}; not searching the host"))?;
    let status = resp.status().as_u16();
    match status {
        200..=299 => {
            let body = session.body(resp, &robots_url).await?;
            Ok(texting_robots::Robot::new(&site.politeness.user_agent, &body).ok().map(Arc::new))
        }
        400..=499 if status != 429 => Ok(None),
        _ => Err(format!("{robots_url}: HTTP {status}; not searching the host")),
    }
}

/// Works through the queue with one account; returns whether it ran at all.
async fn worker(site: &Site, rules: &SearchRules, account: Option<Account>, round: &Round, keywords: &[String], robots: Option<&texting_robots::Robot>) -> bool {
    let mut session = match Session::new(site) {
        Ok(s) => s,
        Err(e) => {
            lock_plain(&round.errors).push(e);
            return false;
        }
    };
    if let Some(a) = &account {
        if let Err(e) = log_in(site, rules, a, &mut session, round).await {
            tracing::warn!("{e}");
            lock_plain(&round.errors).push(e);
            return false;
        }
    }
    loop {
        let task = {
            let mut q = lock_plain(&round.queue);
            let progress = lock_plain(&round.progress);
            // Pages past one found seen are not needed.
            loop {
                match q.pop_front() {
                    None => break None,
                    Some((k, p)) if p <= progress[k].lastresult => break Some((k, p)),
                    Some(_) => {}
                }
            }
        };
        let Some((k, page)) = task else { return true };
        match search_page(site, rules, &mut session, round, &keywords[k], page, robots).await {
            Ok(found) => {
                let mut progress = lock_plain(&round.progress);
                let p = &mut progress[k];
                p.read.insert(page);
                p.results += found.len() as u32;
                let seen = found.iter().all(|r| p.watermark.as_ref().is_some_and(|w| r.last_post.as_ref().is_some_and(|t| t <= w)));
                if seen {
                    p.lastresult = p.lastresult.min(page);
                    p.seen_at_limit |= page == rules.max_pages;
                }
                for r in found {
                    if r.last_post > p.newest {
                        p.newest = r.last_post.clone();
                    }
                    match p.rows.get_mut(&r.thread) {
                        Some(have) if have.last_post >= r.last_post => {}
                        _ => {
                            p.rows.insert(r.thread.clone(), r);
                        }
                    }
                }
            }
            Err(e) => {
                tracing::warn!("{e}");
                lock_plain(&round.progress)[k].errors += 1;
                lock_plain(&round.errors).push(e);
            }
        }
    }
}

/// Fetches one result page and reads its results as thread rows (the
/// result's post time as the row's last post).
async fn search_page(site: &Site, rules: &SearchRules, session: &mut Session, round: &Round, keyword: &str, page: u32, robots: Option<&texting_robots::Robot>) -> Result<Vec<NewThread>, String> {
    let url = rules.page_url(keyword, page).ok_or_else(|| format!("{}: search url for {keyword:?} page {page} is not a URL", site.id))?;
    if !site.host_allowed(&url) {
        return Err(format!("{url}: search url is not on the forum's host"));
    }
    if robots.is_some_and(|r| !r.allowed(url.as_str())) {
        return Err(format!("{url}: disallowed by robots.txt"));
    }
    let mut attempt = 0;
    let (body, content_type) = loop {
        let permit = round.gate.enter().await;
        round.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut req = session.client.get(url.clone());
        if let Some(c) = session.cookie_header() {
            req = req.header(COOKIE, c);
        }
        let sent = req.send().await;
        drop(permit);
        let transient = match sent {
            Ok(resp) if resp.status().is_success() => {
                session.keep_cookies(&resp);
                let ct = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
                break (session.body(resp, &url).await?, ct);
            }
            Ok(resp) => {
                let s = resp.status().as_u16();
                if !matches!(s, 429 | 500 | 502 | 503 | 504) {
                    return Err(format!("{url}: HTTP {s}"));
                }
                format!("{url}: HTTP {s}")
            }
            Err(e) => format!("{url}: {e}"),
        };
        if attempt >= site.politeness.retries {
            return Err(format!("{transient} (gave up after {} attempts)", attempt + 1));
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(250) * (1 << attempt.min(6))).await;
    };
    let html = decode(site, &body, content_type.as_deref());
    let doc = Html::parse_document(&html);
    let base = links::base_url(&doc, &url);
    let mut out = Vec::new();
    for row in doc.select(&rules.row) {
        let threads = links::scan(site, &doc, Some(row), &base, &site.links.thread);
        let Some(link) = threads.matched.into_iter().find(|m| m.m.thread.is_some()) else { continue };
        let board = links::scan(site, &doc, Some(row), &base, &site.links.board).matched.into_iter().find_map(|m| m.m.board).or(link.m.board.clone());
        let time = row.select(&rules.time).next().map(text_of).and_then(|t| normalize_time(&t));
        out.push(NewThread {
            site: site.id.clone(),
            // Rows without a board link get a board of their own; the thread
            // keeps the board it was first listed under.
            board: board.unwrap_or_else(|| "search".to_owned()),
            thread: link.m.thread.clone().expect("checked above"),
            url: link.url.to_string(),
            title: Some(link.text).filter(|t| !t.is_empty()),
            replies: None,
            last_post: time,
        });
    }
    Ok(out)
}

fn utc_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", now.year(), now.month() as u8, now.day(), now.hour(), now.minute(), now.second())
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
        let f = [("username".to_string(), "小明".to_string()), ("pw".to_string(), "a b&c".to_string())];
        assert_eq!(form_encode(&f, encoding_rs::GBK), "username=%D0%A1%C3%F7&pw=a%20b%26c");
    }
}
