//! Protocol mode (S4): sites whose pages are drawn by JavaScript are read
//! through the JSON their scripts load, described by `<json>` in the site
//! file ([`luntan_core::site::JsonRules`]). Every request goes through the
//! site's [`Fetcher`], so politeness, robots.txt, retries and caps are the
//! same as for HTML.
//!
//! Discover walks lists (a board, or for a microblog a user's timeline)
//! newest first, down to the rows already stored and unchanged (the S1
//! stop rule, a watermark per board), and records rows as threads. With
//! `<users>`, it is user-centric: the users met in a page (reposted
//! authors, @mentions, commenters) join a queue ranked by a score the site
//! file weights, bounded by a user limit and a depth; download adds the
//! users it meets in comments to the boards, which later rounds read.
//!
//! Download saves a thread's pages raw (`article<T>.json`, `_p2.json` …)
//! with the server's clock of each fetch (`article<T>.fetched`), so extract
//! can resolve "3分钟前" the same way every time.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use luntan_core::contract::StageRun;
use luntan_core::ids::{BoardId, SiteId, ThreadId};
use luntan_core::site::{field_text, resolve_time, Endpoint, ItemsSeen, JsonRules, PageKey, UserRules};
use luntan_core::store::{Listing, NewThread, Store, StoreError};
use serde_json::Value;
use url::Url;

use crate::db::with_store;
use crate::fetch::{FetchError, Fetched, Fetcher};
use crate::round::{DiscoverReport, Seen};

/// Why a JSON page could not be used.
#[derive(Debug, thiserror::Error)]
pub enum JsonPageError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("{url}: invalid JSON: {why}")]
    Invalid { url: Url, why: String },
    #[error("{url}: page {page} repeats an earlier cursor ({cursor:?}); stopped there")]
    Loop { url: Url, page: u32, cursor: String },
    #[error("{url}: page {page} holds only items of earlier pages (the server does not page as the site file says); stopped there")]
    Repeats { url: Url, page: u32 },
}

/// A JSON page as fetched: the parsed value and the server's clock.
pub struct JsonPage {
    pub fetched: Fetched,
    pub value: Value,
    /// Unix seconds: the `Date` header, or this machine's clock without one.
    pub at: i64,
}

/// Fetches and parses one JSON page.
pub async fn get_json_page(fetcher: &Fetcher, url: &Url) -> Result<JsonPage, JsonPageError> {
    let fetched = fetcher.get_json(url).await?;
    let value = luntan_core::site::read_json(&fetched.body).map_err(|e| JsonPageError::Invalid { url: fetched.url.clone(), why: e.to_string() })?;
    let at = server_clock(fetched.date.as_deref());
    Ok(JsonPage { fetched, value, at })
}

/// The server's clock from its `Date` header: the clock its relative
/// times count from. This machine's clock when the header is missing or
/// unreadable.
pub(crate) fn server_clock(date: Option<&str>) -> i64 {
    let local = std::time::SystemTime::now();
    let when = date.and_then(|d| httpdate::parse_http_date(d).ok()).unwrap_or(local);
    match when.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// A user (a board) met while crawling, and how much it seems to matter.
#[derive(Debug, Clone)]
struct Candidate {
    id: BoardId,
    name: Option<String>,
    depth: u32,
    followers: f64,
    activity: f64,
    /// Times met this round.
    seen: u32,
    seed: bool,
}

impl Candidate {
    fn score(&self, rules: Option<&UserRules>) -> f64 {
        let (wf, wa) = rules.map_or((1.0, 1.0), |u| (u.weight_followers, u.weight_activity));
        wf * self.followers.ln_1p() + wa * self.activity.ln_1p() + f64::from(self.seen)
    }
}

/// Users found in one page: `<found>` paths and `<link>` patterns over
/// every string (bodies with @mentions).
fn users_in(rules: &UserRules, page: &Value) -> Vec<(BoardId, Option<String>, f64, f64)> {
    let mut out = Vec::new();
    for f in &rules.found {
        for user in f.path.query(page).all() {
            let Some(id) = field_text(user, &f.id).and_then(|id| BoardId::parse(&id).ok()) else { continue };
            let num = |p: &Option<serde_json_path::JsonPath>| p.as_ref().and_then(|p| field_text(user, p)).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            let name = f.name.as_ref().and_then(|p| field_text(user, p));
            out.push((id, name, num(&f.followers), num(&f.activity)));
        }
    }
    if let Some(link) = &rules.link {
        let mut strings = Vec::new();
        collect_strings(page, &mut strings);
        for s in strings {
            for c in link.captures_iter(s) {
                if let Some(id) = c.name("board").and_then(|m| BoardId::parse(m.as_str()).ok()) {
                    out.push((id, None, 0.0, 0.0));
                }
            }
        }
    }
    out
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// The users found in a saved thread's pages, for download to add as boards.
pub fn users_in_pages(rules: &JsonRules, pages: &[Value]) -> Vec<(BoardId, Option<String>)> {
    let Some(u) = &rules.users else { return Vec::new() };
    let mut seen = HashSet::new();
    pages.iter().flat_map(|p| users_in(u, p)).filter(|(id, ..)| seen.insert(id.clone())).map(|(id, name, ..)| (id, name)).collect()
}

/// The URL a thread row stores: its first page (the thread endpoint, else
/// its first comments page).
pub fn thread_url(rules: &JsonRules, thread: &str) -> Option<Url> {
    let e = rules.thread.as_ref().or(rules.comments.as_ref())?;
    e.page_url(thread, &e.first_key())
}

/// One discover round of a JSON site.
pub(crate) async fn discover_round(
    run: &Arc<StageRun>,
    fetcher: &Arc<Fetcher>,
    store: &Arc<Mutex<Store>>,
    mut report: DiscoverReport,
) -> Result<DiscoverReport, StoreError> {
    let site = Arc::new(fetcher.site().clone());
    let rules = site.json.clone().expect("called for JSON sites only");
    let users = rules.users.as_ref();
    let site_id = site.id.clone();
    let (known_boards, seen) = with_store(store, move |s| Ok::<_, StoreError>((s.boards(&site_id)?, Seen::load(s, &site_id)?))).await?;
    let seen = Arc::new(seen);
    let mut queue: Vec<Candidate> =
        rules.seeds.iter().map(|id| Candidate { id: id.clone(), name: None, depth: 0, followers: 0.0, activity: 0.0, seen: 0, seed: true }).collect();
    // Users found by earlier rounds or in comments (download adds those)
    // are one hop from the seeds as far as this round is concerned.
    if users.is_some() {
        for b in known_boards {
            if !queue.iter().any(|c| c.id == b.board) {
                queue.push(Candidate { id: b.board, name: b.title, depth: 1, followers: 0.0, activity: 0.0, seen: 1, seed: false });
            }
        }
    }
    let max_users = users.map_or(usize::MAX, |u| u.max_users);
    let max_depth = users.map_or(0, |u| u.max_depth);
    let mut done: HashSet<BoardId> = HashSet::new();
    while done.len() < max_users {
        if run.stopped() {
            report.boards_interrupted += queue.iter().filter(|c| !done.contains(&c.id)).count();
            break;
        }
        // Seeds first, then the best score; ties by the order met.
        let Some(best) = queue
            .iter()
            .enumerate()
            .filter(|(_, c)| !done.contains(&c.id))
            .max_by(|(i, a), (j, b)| (a.seed, a.score(users)).partial_cmp(&(b.seed, b.score(users))).unwrap_or(std::cmp::Ordering::Equal).then(j.cmp(i)))
            .map(|(i, _)| i)
        else {
            break;
        };
        let user = queue[best].clone();
        done.insert(user.id.clone());
        report.boards += 1;
        run.progress().grow(1);
        let found = walk_list(fetcher, store, &rules, &user, seen.clone(), run, &mut report).await?;
        run.progress().advance(1);
        for (id, name, followers, activity) in found {
            if id == user.id {
                // A user's own profile, met on their own timeline, tells their standing.
                if let Some(c) = queue.iter_mut().find(|c| c.id == id) {
                    c.followers = c.followers.max(followers);
                    c.activity = c.activity.max(activity);
                }
                continue;
            }
            match queue.iter_mut().find(|c| c.id == id) {
                Some(c) => {
                    c.seen += 1;
                    c.followers = c.followers.max(followers);
                    c.activity = c.activity.max(activity);
                    c.depth = c.depth.min(user.depth + 1);
                    if c.name.is_none() {
                        c.name = name;
                    }
                }
                None if user.depth < max_depth => {
                    queue.push(Candidate { id, name, depth: user.depth + 1, followers, activity, seen: 1, seed: false });
                }
                None => {}
            }
        }
    }
    Ok(report)
}

/// Reads one board's (user's) list newest first; returns the users met.
async fn walk_list(
    fetcher: &Arc<Fetcher>,
    store: &Arc<Mutex<Store>>,
    rules: &JsonRules,
    user: &Candidate,
    seen: Arc<Seen>,
    run: &StageRun,
    report: &mut DiscoverReport,
) -> Result<Vec<(BoardId, Option<String>, f64, f64)>, StoreError> {
    let site = fetcher.site();
    let list = &rules.list;
    let first_url = list.page_url(&user.id, &list.first_key()).map(|u| u.to_string()).unwrap_or_default();
    let (site_id, board, name) = (site.id.clone(), user.id.clone(), user.name.clone());
    let resume = with_store(store, move |s| {
        s.upsert_board(&site_id, &board, &first_url, name.as_deref())?;
        s.begin_board_walk(&site_id, &board)
    })
    .await?;
    let stop_after = if resume { u32::MAX } else { site.incremental.stop_after };
    let mut found = Vec::new();
    let mut key = list.first_key();
    let mut cursors: HashSet<PageKey> = HashSet::new();
    let mut repeated = ItemsSeen::default();
    let (mut pages, mut unchanged_run, mut finished) = (0u32, 0u32, true);
    while pages < list.max_pages && !run.stopped() {
        let Some(url) = list.page_url(&user.id, &key) else { break };
        if !cursors.insert(key.clone()) {
            report.errors.push(JsonPageError::Loop { url, page: pages + 1, cursor: format!("{key:?}") }.to_string());
            break;
        }
        let page = match get_json_page(fetcher, &url).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("{}: board {}: {e}", site.id, user.id);
                report.errors.push(e.to_string());
                finished = false;
                break;
            }
        };
        pages += 1;
        report.list_pages += 1;
        if let Some(u) = &rules.users {
            found.extend(users_in(u, &page.value));
        }
        let items = list.items(&page.value);
        if repeated.repeats(&items) {
            report.errors.push(JsonPageError::Repeats { url: page.fetched.url.clone(), page: pages }.to_string());
            break;
        }
        let rows = rows_of(rules, list, &user.id, &items, page.at, &site.id, report);
        let next = list.next_key(&key, items.len(), &page.value);
        let seen = seen.clone();
        let (listings, saved) = with_store(store, move |s| seen.record(s, &rows)).await?;
        report.lookups_saved += saved;
        for l in listings {
            match l {
                Listing::New => report.new_threads += 1,
                Listing::Updated => report.updated_threads += 1,
                Listing::Unchanged => report.known_threads += 1,
            }
            unchanged_run = if l == Listing::Unchanged { unchanged_run + 1 } else { 0 };
        }
        if unchanged_run >= stop_after {
            tracing::debug!("{}: board {}: {unchanged_run} known rows in a row; stopping at page {pages}", site.id, user.id);
            break;
        }
        match next {
            Some(k) => key = k,
            None => break,
        }
    }
    let interrupted = run.stopped();
    let (site_id, board) = (site.id.clone(), user.id.clone());
    let next = site.incremental.initial_interval.as_secs() as i64;
    with_store(store, move |s| {
        s.batch(|s| {
            s.board_visited(&site_id, &board, pages, finished && !interrupted)?;
            s.set_board_schedule(&site_id, &board, next, 0)
        })
    })
    .await?;
    Ok(found)
}

/// A list page's items as thread rows; items without a usable id are
/// counted as refused.
fn rows_of(rules: &JsonRules, list: &Endpoint, board: &BoardId, items: &[&Value], at: i64, site: &SiteId, report: &mut DiscoverReport) -> Vec<NewThread> {
    let mut rows = Vec::new();
    for item in items {
        let id = list.id.as_ref().and_then(|p| field_text(item, p));
        let Some(thread) = id.as_deref().and_then(|id| ThreadId::parse(id).ok()) else {
            report.refused_links += 1;
            continue;
        };
        let Some(url) = thread_url(rules, &thread) else { continue };
        let text = |p: &Option<serde_json_path::JsonPath>| p.as_ref().and_then(|p| field_text(item, p));
        let last_post = list.time.as_ref().and_then(|p| p.query(item).first()).and_then(|v| resolve_time(v, at, rules.utc_offset_minutes));
        rows.push(NewThread {
            site: site.clone(),
            board: board.clone(),
            thread,
            url: url.to_string(),
            title: text(&list.title).map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()),
            replies: text(&list.replies).and_then(|r| r.parse().ok()),
            last_post,
        });
    }
    rows
}

/// Every page of a thread in protocol mode: the thread endpoint, then each
/// comments page in turn, in the order read.
pub async fn fetch_thread(fetcher: &Fetcher, rules: &JsonRules, thread: &str) -> Result<Vec<JsonPage>, JsonPageError> {
    let mut pages = Vec::new();
    if let Some(t) = &rules.thread {
        let url = t.page_url(thread, &t.first_key()).ok_or_else(|| bad_template(t))?;
        pages.push(get_json_page(fetcher, &url).await?);
    }
    let Some(c) = &rules.comments else { return Ok(pages) };
    let walked = walk_pages(fetcher, c, thread).await.map_err(|e| match e {
        WalkError::NoUrl => bad_template(c),
        WalkError::Page(e) => e,
    })?;
    // An empty comments page adds nothing (a post without comments, the
    // page after a full last one); without a thread endpoint the first
    // is kept all the same, as the thread's page 1.
    for (n, page) in walked.into_iter().enumerate() {
        if !c.items(&page.value).is_empty() || (n == 0 && rules.thread.is_none()) {
            pages.push(page);
        }
    }
    Ok(pages)
}

/// Why a walk of an endpoint's pages stopped.
pub(crate) enum WalkError {
    /// The endpoint's template made no URL for a page.
    NoUrl,
    Page(JsonPageError),
}

/// Every page of one walk of `endpoint` for the thread `id`, in order, the
/// empty ones too: from its first page on, each next as its paging reads
/// it, until a page ends the paging, a cursor comes back, or a page holds
/// only items of earlier pages (a server that does not page as the site
/// file says: Isso answers every `offset` alike without `limit`). The last
/// two would page on to `max-pages`: each is a warning, and what was read
/// stands.
pub(crate) async fn walk_pages(fetcher: &Fetcher, endpoint: &Endpoint, id: &str) -> Result<Vec<JsonPage>, WalkError> {
    let mut pages = Vec::new();
    let mut key = endpoint.first_key();
    let mut keys: BTreeMap<String, u32> = BTreeMap::new();
    let mut repeated = ItemsSeen::default();
    for n in 1..=endpoint.max_pages {
        let url = endpoint.page_url(id, &key).ok_or(WalkError::NoUrl)?;
        if keys.insert(format!("{key:?}"), n).is_some() {
            tracing::warn!("{}", JsonPageError::Loop { url, page: n, cursor: format!("{key:?}") });
            break;
        }
        let page = get_json_page(fetcher, &url).await.map_err(WalkError::Page)?;
        let items = endpoint.items(&page.value);
        if repeated.repeats(&items) {
            tracing::warn!("{}", JsonPageError::Repeats { url, page: n });
            break;
        }
        let next = endpoint.next_key(&key, items.len(), &page.value);
        pages.push(page);
        match next {
            Some(k) => key = k,
            None => break,
        }
    }
    Ok(pages)
}

fn bad_template(e: &Endpoint) -> JsonPageError {
    let url = Url::parse("http://invalid/").expect("static URL");
    JsonPageError::Invalid { url, why: format!("{}: the url template gives no URL ({})", e.element, e.url) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_clock_comes_from_the_date_header() {
        assert_eq!(server_clock(Some("Sun, 01 Dec 2024 02:00:00 GMT")), 1_733_018_400);
        let now = server_clock(None);
        assert!((server_clock(Some("yesterday")) - now).abs() <= 1, "an unreadable header falls back to this machine's clock");
    }

    #[test]
    fn scores_weigh_followers_activity_and_sightings() {
        let c = Candidate { id: "1".parse().unwrap(), name: None, depth: 1, followers: 1000.0, activity: 10.0, seen: 2, seed: false };
        let s = c.score(None);
        assert!((s - (1001f64.ln() + 11f64.ln() + 2.0)).abs() < 1e-9);
    }
}
