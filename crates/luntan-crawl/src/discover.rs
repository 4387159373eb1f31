//! Stage 1, discover (S3): home page → board links → each board's list
//! pages → thread rows. New threads are inserted as `Discovered`; known ones
//! are left alone, so running it again adds only what is new.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use luntan_core::store::{NewThread, Store, StoreError};
use scraper::Html;
use url::Url;

use crate::fetch::Fetcher;
use crate::links::{self, decode, list_threads, page_links};

/// What discovering one site did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct DiscoverReport {
    pub site: String,
    pub boards: usize,
    pub list_pages: usize,
    pub new_threads: usize,
    /// Thread rows seen on list pages that were already known.
    pub known_threads: usize,
    /// Links whose ids were refused (path tricks, odd bytes).
    pub refused_links: usize,
    /// One line per page that could not be fetched.
    pub errors: Vec<String>,
}

/// A board found on the home page.
#[derive(Debug, Clone)]
struct Board {
    id: String,
    url: Url,
    title: Option<String>,
}

/// Discovers one site. Fetch failures are reported and skipped; only a
/// database failure stops the site.
pub async fn discover_site(fetcher: Arc<Fetcher>, store: Arc<Mutex<Store>>) -> Result<DiscoverReport, StoreError> {
    let site = fetcher.site().clone();
    let mut report = DiscoverReport { site: site.id.clone(), ..Default::default() };
    lock(&store).upsert_site(&site)?;
    let home = match fetcher.get_html(&site.home).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("{}: home page: {e}", site.id);
            report.errors.push(e.to_string());
            return Ok(report);
        }
    };
    let boards = {
        let html = decode(&site, &home.body, home.content_type.as_deref());
        let doc = Html::parse_document(&html);
        let base = links::base_url(&doc, &home.url);
        let scan = links::scan(&site, &doc, None, &base, &site.links.board);
        report.refused_links += scan.refused.len();
        for (url, e) in &scan.refused {
            tracing::debug!("{url}: refused board link: {e}");
        }
        let mut boards: Vec<Board> = Vec::new();
        for m in scan.matched {
            let Some(id) = m.m.board else { continue };
            if !boards.iter().any(|b| b.id == id) {
                boards.push(Board { id, url: m.url, title: Some(m.text).filter(|t| !t.is_empty()) });
            }
        }
        boards
    };
    if boards.is_empty() {
        let line = format!("{}: no link on the home page matches the board pattern", site.home);
        tracing::warn!("{line}");
        report.errors.push(line);
    }
    report.boards = boards.len();
    {
        let s = lock(&store);
        for b in &boards {
            s.upsert_board(&site.id, &b.id, b.url.as_str(), b.title.as_deref())?;
        }
    }
    // Boards run side by side; the fetcher's gate keeps the forum's limits.
    let mut tasks = tokio::task::JoinSet::new();
    for board in boards {
        tasks.spawn(walk_board(fetcher.clone(), store.clone(), board));
    }
    while let Some(joined) = tasks.join_next().await {
        let r = joined.expect("board task panicked")?;
        report.list_pages += r.list_pages;
        report.new_threads += r.new_threads;
        report.known_threads += r.known_threads;
        report.refused_links += r.refused_links;
        report.errors.extend(r.errors);
    }
    Ok(report)
}

/// Walks a board's list pages in page order, up to the site's limit.
async fn walk_board(fetcher: Arc<Fetcher>, store: Arc<Mutex<Store>>, board: Board) -> Result<DiscoverReport, StoreError> {
    let site = fetcher.site().clone();
    let mut report = DiscoverReport::default();
    let first = site.links.board_page.as_ref().map_or(1, |p| p.first_page);
    let mut queue: BTreeMap<u64, Url> = BTreeMap::from([(first, board.url.clone())]);
    let mut seen: BTreeSet<u64> = BTreeSet::new();
    while let Some((page, url)) = queue.pop_first() {
        if seen.len() as u32 >= site.max_board_pages {
            break;
        }
        seen.insert(page);
        let fetched = match fetcher.get_html(&url).await {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("{}: board {}: {e}", site.id, board.id);
                report.errors.push(e.to_string());
                continue;
            }
        };
        report.list_pages += 1;
        let (threads, more) = {
            let html = decode(&site, &fetched.body, fetched.content_type.as_deref());
            let doc = Html::parse_document(&html);
            let base = links::base_url(&doc, &fetched.url);
            let (threads, refused) = list_threads(&site, &doc, &base);
            report.refused_links += refused.len();
            let more = match &site.links.board_page {
                Some(p) => page_links(&site, &doc, &base, p, &board.id, |m| m.board.as_deref()),
                None => Vec::new(),
            };
            (threads, more)
        };
        for (p, u) in more {
            if !seen.contains(&p) {
                queue.entry(p).or_insert(u);
            }
        }
        let rows: Vec<NewThread> = threads
            .into_iter()
            .map(|t| NewThread {
                site: site.id.clone(),
                board: board.id.clone(),
                thread: t.thread,
                url: t.url.to_string(),
                title: t.title,
                replies: t.replies,
                last_post: t.last_post,
            })
            .collect();
        let mut s = lock(&store);
        let new = s.insert_new_threads(&rows)?;
        report.new_threads += new;
        report.known_threads += rows.len() - new;
    }
    lock(&store).board_visited(&site.id, &board.id, report.list_pages as u32)?;
    Ok(report)
}

pub(crate) fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    // A panic while holding the lock cannot leave SQLite half-written (each
    // call is its own transaction), so a poisoned lock is still usable.
    store.lock().unwrap_or_else(|p| p.into_inner())
}
