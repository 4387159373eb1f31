//! Stage 1, discover (S3): home page → board links → each board's list
//! pages → thread rows. New threads are inserted as `Discovered`; known ones
//! are left alone, so running it again adds only what is new.
//!
//! Later rounds are cheap (S1): lists are newest-first, so a board's paging
//! stops after the site's `stop-after` consecutive rows that are known and
//! unchanged; a thread whose row shows more replies or a newer last post is
//! re-queued; and each board has an adaptive re-check interval, so a round
//! skips boards that are not due.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use luntan_core::contract::StageRun;
use luntan_core::state::Stage;
use luntan_core::store::{Listing, NewThread, RoundRecord, Store, StoreError, Validators};
use scraper::Html;
use url::Url;

use crate::browser::{BrowserError, PageKind, Renderer};
use crate::db::with_store;
use crate::fetch::{Fetched, Fetcher};
use crate::focus::Scorer;
use crate::links::{self, decode, list_threads, page_links, BoardLink};
pub use crate::round::{DiscoverReport, Seen};

/// Settings of one discover round.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Visit every board, due or not.
    pub all_boards: bool,
}

fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

pub(crate) fn utc_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", now.year(), now.month() as u8, now.day(), now.hour(), now.minute(), now.second())
}

/// Discovers one site (one round). Fetch failures are reported and
/// skipped; only a database failure stops the site. The round is recorded
/// in the `rounds` table for `luntan-status`.
///
/// The run's stop ends the round after the list pages in flight; a board
/// left mid-walk is not marked visited, so the next round reads it in full,
/// as after a crash. Progress advances once per board walked or skipped.
pub async fn discover_site(run: Arc<StageRun>, fetcher: Arc<Fetcher>, store: Arc<Mutex<Store>>, opts: DiscoverOptions) -> Result<DiscoverReport, StoreError> {
    let started_at = utc_stamp();
    // Workers sharing the crawl take turns on a forum by its site lock; a
    // run alone holds the data directory's lock, which is enough.
    let _keeper = match run.is_shared() {
        false => None,
        true => {
            let (site, lease) = (fetcher.site().id.clone(), run.claims().lease);
            let held = with_store(&store, move |s| match s.lock_site(Stage::Discover, &site, lease)? {
                true => s.keep_leases(lease).map(Some),
                false => Ok(None),
            })
            .await?;
            match held {
                Some(keeper) => Some(keeper),
                None => return Ok(DiscoverReport { site: fetcher.site().id.to_string(), busy: true, ..Default::default() }),
            }
        }
    };
    let stats = &fetcher.stats;
    let (requests_before, bytes_before) = (stats.requests.load(std::sync::atomic::Ordering::Relaxed), stats.bytes.load(std::sync::atomic::Ordering::Relaxed));
    let mut report = discover_round(&run, &fetcher, &store, &opts).await?;
    // The count alone says nothing of why: name the first thread link
    // refused (a pattern capturing more than an id, a slug that wants
    // `<links hashed>`), once a site.
    if let Some(first) = &report.refused_example {
        tracing::warn!(
            "{}: {} links matched a pattern but name no usable board or thread, the first {first}; each is left out",
            report.site,
            report.refused_links
        );
    }
    // New articles come from the lists; new comments only from the comment API.
    crate::hybrid::recheck_comments(&run, &fetcher, &store, &mut report).await?;
    report.requests = stats.requests.load(std::sync::atomic::Ordering::Relaxed) - requests_before;
    report.bytes = stats.bytes.load(std::sync::atomic::Ordering::Relaxed) - bytes_before;
    let round = RoundRecord {
        site: fetcher.site().id.clone(),
        started_at,
        finished_at: utc_stamp(),
        requests: report.requests as i64,
        list_pages: report.list_pages as i64,
        boards_visited: (report.boards - report.boards_skipped) as i64,
        boards_skipped: report.boards_skipped as i64,
        new_threads: report.new_threads as i64,
        updated_threads: report.updated_threads as i64,
        errors: report.errors.len() as i64,
    };
    let (site, shared) = (report.site.clone(), run.is_shared());
    with_store(&store, move |s| {
        s.record_round(&round)?;
        if shared {
            s.release(Some(&site))?;
            s.unlock_site(Stage::Discover, &site)?;
        }
        Ok::<_, StoreError>(())
    })
    .await?;
    Ok(report)
}

async fn discover_round(run: &Arc<StageRun>, fetcher: &Arc<Fetcher>, store: &Arc<Mutex<Store>>, opts: &DiscoverOptions) -> Result<DiscoverReport, StoreError> {
    let site = Arc::new(fetcher.site().clone());
    let mut report = DiscoverReport { site: site.id.to_string(), ..Default::default() };
    let validators = with_store(store, {
        let site = site.clone();
        move |s| {
            s.upsert_site(&site)?;
            s.validators(&site.id)
        }
    })
    .await?;
    if site.json.is_some() {
        // Protocol mode (S4): boards come from the site file and the users met, not a home page.
        return crate::protocol::discover_round(run, fetcher, store, report).await;
    }
    let renderer = Renderer::for_site(fetcher.clone()).map(Arc::new);
    // An unchanged home page (304) lists the boards the store has; with
    // `<board depth>` the store holds boards from past the home page too,
    // so then the page is read.
    let home_cond = validators.get(site.home.as_str()).filter(|_| site.links.follow.is_none());
    let home = match get_page_if(fetcher, renderer.as_deref(), &site.home, PageKind::Home, home_cond).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("{}: home page: {e}", site.id);
            report.errors.push(e.to_string());
            return Ok(report);
        }
    };
    let mut home_validators = None;
    let boards = match home {
        Some(home) => {
            home_validators = Some((home.url.clone(), home.validators.clone()));
            let html = decode(&site, &home.body, home.content_type.as_deref());
            let doc = Html::parse_document(&html);
            let (boards, refused) = links::board_links(&site, &doc, &links::base_url(&doc, &home.url));
            report.refused_links += refused;
            boards
        }
        None => {
            report.not_modified += 1;
            let site_id = site.id.clone();
            let stored = with_store(store, move |s| s.boards(&site_id)).await?;
            stored.into_iter().filter_map(BoardLink::from_row).collect()
        }
    };
    if boards.is_empty() {
        let line = format!("{}: no link on the home page matches the board pattern", site.home);
        tracing::warn!("{line}");
        report.errors.push(line);
    }
    let scorer = site.focus.as_ref().map(|f| Arc::new(Scorer::new(f)));
    let threshold = scorer.as_ref().map(|sc| sc.threshold);
    let site_id = site.id.clone();
    let follow = site.links.follow;
    let (promoted, seen, known) = with_store(store, move |s| {
        // A lowered threshold takes effect without reading the boards again.
        let promoted = threshold.map_or(Ok(0), |t| s.promote_skipped(&site_id, t))?;
        let seen = Seen::load(s, &site_id)?;
        // Boards met past the home page by earlier rounds (and by download,
        // on thread pages) are read again, one hop out.
        let known = if follow.is_some() { s.boards(&site_id)? } else { Vec::new() };
        Ok::<_, StoreError>((promoted, seen, known))
    })
    .await?;
    report.promoted = promoted;
    let seen = Arc::new(seen);
    let validators = Arc::new(validators);
    let mut wave: Vec<BoardLink> = boards;
    let mut met: BTreeSet<String> = wave.iter().map(|b| b.id.to_string()).collect();
    let mut next: Vec<BoardLink> = known.into_iter().filter(|b| met.insert(b.board.to_string())).filter_map(BoardLink::from_row).collect();
    if wave.is_empty() {
        wave = std::mem::take(&mut next);
    }
    let (max_depth, max_boards) = follow.map_or((0, usize::MAX), |f| (f.depth, f.max));
    let mut depth = 0;
    // Wave by wave, hop by hop from the home page: a board's list pages may
    // link to boards one hop further (sub-forums; a microblog's users met in
    // a timeline).
    while !wave.is_empty() {
        wave.truncate(max_boards.saturating_sub(report.boards));
        let lists = Lists { seen: &seen, scorer: scorer.as_ref(), validators: &validators };
        let found = walk_wave(run, fetcher, renderer.as_ref(), store, &lists, opts, std::mem::take(&mut wave), &mut report).await?;
        // The home page's boards are stored now (walk_wave's first step):
        // only then may an unchanged home page stand for them.
        if let Some((url, v)) = home_validators.take() {
            remember_validators(store, &site.id, &url, &v, &validators).await?;
        }
        depth += 1;
        if depth > max_depth || report.boards >= max_boards {
            break;
        }
        next.extend(found.into_iter().filter(|b| met.insert(b.id.to_string())));
        wave = std::mem::take(&mut next);
        if run.stopped() {
            // The next wave is not started; the next round reads it.
            report.boards_interrupted += wave.len();
            break;
        }
    }
    Ok(report)
}

/// What every board walk of a round shares.
struct Lists<'a> {
    seen: &'a Arc<Seen>,
    scorer: Option<&'a Arc<Scorer>>,
    /// The forum's validators for its list pages, from the last round.
    validators: &'a Arc<HashMap<String, Validators>>,
}

/// One board's walk.
struct Walk {
    board: BoardLink,
    interval: std::time::Duration,
    scorer: Option<Arc<Scorer>>,
    known: Arc<Seen>,
    validators: Arc<HashMap<String, Validators>>,
}

/// Walks one wave of boards side by side (the fetcher's gate keeps the
/// forum's limits); returns the boards their list pages link to.
#[allow(clippy::too_many_arguments)]
async fn walk_wave(
    run: &Arc<StageRun>,
    fetcher: &Arc<Fetcher>,
    renderer: Option<&Arc<Renderer>>,
    store: &Arc<Mutex<Store>>,
    lists: &Lists<'_>,
    opts: &DiscoverOptions,
    boards: Vec<BoardLink>,
    report: &mut DiscoverReport,
) -> Result<Vec<BoardLink>, StoreError> {
    let site = fetcher.site();
    let site_id = site.id.clone();
    let (boards, schedules) = with_store(store, move |s| {
        s.batch(|s| boards.iter().try_for_each(|b| s.upsert_board(&site_id, &b.id, b.url.as_str(), b.title.as_deref())))?;
        let schedules = boards.iter().map(|b| s.board_schedule(&site_id, &b.id)).collect::<Result<Vec<_>, StoreError>>()?;
        Ok::<_, StoreError>((boards, schedules))
    })
    .await?;
    report.boards += boards.len();
    let now = unix_now();
    let mut tasks = tokio::task::JoinSet::new();
    run.progress().grow(boards.len() as u64);
    for (board, schedule) in boards.into_iter().zip(schedules) {
        if !opts.all_boards && schedule.next_visit.is_some_and(|due| due > now) {
            report.boards_skipped += 1;
            run.progress().advance(1);
            continue;
        }
        let interval = schedule.interval_secs.map_or(site.incremental.initial_interval, |s| std::time::Duration::from_secs(s.max(0) as u64));
        let walk = Walk { board, interval, scorer: lists.scorer.cloned(), known: lists.seen.clone(), validators: lists.validators.clone() };
        tasks.spawn(walk_board(fetcher.clone(), renderer.cloned(), store.clone(), walk, run.clone()));
    }
    let mut found = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (r, boards) = joined.expect("board task panicked")?;
        run.progress().advance(1);
        report.list_pages += r.list_pages;
        report.new_threads += r.new_threads;
        report.updated_threads += r.updated_threads;
        report.known_threads += r.known_threads;
        report.refused_links += r.refused_links;
        report.refused_example = report.refused_example.take().or(r.refused_example);
        report.lookups_saved += r.lookups_saved;
        report.not_modified += r.not_modified;
        report.off_topic += r.off_topic;
        report.boards_interrupted += r.boards_interrupted;
        report.errors.extend(r.errors);
        found.extend(boards);
    }
    Ok(found)
}

/// Keeps the validators a page came with for the next round (and forgets
/// those of a page that no longer sends any).
async fn remember_validators(store: &Arc<Mutex<Store>>, site: &str, url: &Url, got: &Validators, had: &HashMap<String, Validators>) -> Result<(), StoreError> {
    if had.get(url.as_str()) == Some(got) || (got.is_empty() && !had.contains_key(url.as_str())) {
        return Ok(());
    }
    let (site, url, v) = (site.to_owned(), url.to_string(), got.clone());
    with_store(store, move |s| s.set_validators(&site, &url, &v)).await
}

/// A home or list page: as the forum sent it, or, in browser mode, the DOM
/// its list actions reached (every kept state, so links a pager replaced
/// are read too). `cond`, the validators the forum gave for the page last
/// time, makes the request conditional (not in a browser): `None` when the
/// forum answers 304. A plain fetch's error is a `BrowserError::Fetch`, so
/// both modes fail with one type.
async fn get_page_if(
    fetcher: &Fetcher,
    renderer: Option<&Renderer>,
    url: &Url,
    kind: PageKind,
    cond: Option<&Validators>,
) -> Result<Option<Fetched>, BrowserError> {
    let Some(renderer) = renderer else {
        return Ok(match cond {
            Some(v) => fetcher.get_html_if(url, v).await?,
            None => Some(fetcher.get_html(url).await?),
        });
    };
    let rendered = renderer.render(url, kind).await?;
    Ok(Some(Fetched {
        url: rendered.url,
        status: 200,
        content_type: Some("text/html; charset=utf-8".into()),
        body: rendered.states.join("\n").into_bytes(),
        date: rendered.date,
        validators: Validators::default(),
        head: None,
    }))
}

/// Walks a board's list pages in page order, up to the site's limit, and
/// stops early once `stop-after` consecutive rows are known and unchanged.
///
/// A list page the forum answers 304 (it sent validators last round, and
/// the page is as it was) ends the walk: a list is newest first, and a
/// thread that changed anywhere below a page would have moved to the top,
/// through it. So a round with nothing new costs a board one empty answer.
async fn walk_board(
    fetcher: Arc<Fetcher>,
    renderer: Option<Arc<Renderer>>,
    store: Arc<Mutex<Store>>,
    walk: Walk,
    run: Arc<StageRun>,
) -> Result<(DiscoverReport, Vec<BoardLink>), StoreError> {
    let Walk { board, interval, scorer, known, validators } = walk;
    let site = fetcher.site().clone();
    let mut report = DiscoverReport::default();
    let mut boards_met: Vec<BoardLink> = Vec::new();
    let mut unchanged_run = 0u32;
    let (site_id, board_id) = (site.id.clone(), board.id.clone());
    let resume = with_store(&store, move |s| s.begin_board_walk(&site_id, &board_id)).await?;
    // After a walk that broke off, read the board in full: S1's stop rule
    // assumes everything below the known rows was read before.
    let stop_after = if resume { u32::MAX } else { site.incremental.stop_after };
    let first = site.links.board_page.as_ref().map_or(1, |p| p.first_page);
    let mut queue: BTreeMap<u64, Url> = BTreeMap::from([(first, board.url.clone())]);
    let mut seen: BTreeSet<u64> = BTreeSet::new();
    while let Some((page, url)) = queue.pop_first() {
        if run.stopped() {
            // No visit recorded: begin_board_walk's mark stays, and the next
            // round walks this board in full.
            report.boards_interrupted = 1;
            return Ok((report, boards_met));
        }
        if seen.len() as u32 >= site.max_board_pages {
            break;
        }
        seen.insert(page);
        // After a walk that broke off, every page is read whatever it says.
        let cond = validators.get(url.as_str()).filter(|_| !resume);
        let fetched = match get_page_if(&fetcher, renderer.as_deref(), &url, PageKind::List, cond).await {
            Ok(Some(f)) => f,
            Ok(None) => {
                report.not_modified += 1;
                tracing::debug!("{}: board {}: page {page} unchanged (304); stopping", site.id, board.id);
                break;
            }
            Err(e) => {
                tracing::warn!("{}: board {}: {e}", site.id, board.id);
                report.errors.push(e.to_string());
                continue;
            }
        };
        report.list_pages += 1;
        let page_validators = fetched.validators.clone();
        let (threads, more) = {
            let html = decode(&site, &fetched.body, fetched.content_type.as_deref());
            let doc = Html::parse_document(&html);
            let base = links::base_url(&doc, &fetched.url);
            let (threads, refused) = list_threads(&site, &doc, &base);
            if let (None, Some((url, e))) = (&report.refused_example, refused.first()) {
                report.refused_example = Some(format!("{url}: {e}"));
            }
            report.refused_links += refused.len();
            if site.links.follow.is_some() {
                let (met, refused) = links::board_links(&site, &doc, &base);
                report.refused_links += refused;
                boards_met.extend(met.into_iter().filter(|b| b.id != board.id));
            }
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
        let listings = match &scorer {
            None => {
                let known = known.clone();
                let (listings, saved) = with_store(&store, move |s| known.record(s, &rows)).await?;
                report.lookups_saved += saved;
                listings.into_iter().map(|l| (l, false)).collect::<Vec<_>>()
            }
            Some(sc) => {
                let scores: Vec<f64> = rows.iter().map(|t| Url::parse(&t.url).map_or(0.0, |u| sc.score(&u, t.title.as_deref().unwrap_or("")))).collect();
                let (mut keep, mut skip) = (Vec::new(), Vec::new());
                for (t, score) in rows.into_iter().zip(&scores) {
                    if sc.keeps(*score) {
                        keep.push(t);
                    } else {
                        skip.push((t, *score));
                    }
                }
                let known = known.clone();
                let (fresh, kept, saved) = with_store(&store, move |s| {
                    let fresh = s.record_skipped(&skip)?;
                    for (t, _) in &skip {
                        known.insert(&t.thread);
                    }
                    let (kept, saved) = known.record(s, &keep)?;
                    Ok::<_, StoreError>((fresh, kept, saved))
                })
                .await?;
                report.off_topic += fresh.iter().filter(|f| **f).count();
                report.lookups_saved += saved;
                // Back in page order for the stop rule; a skipped link seen
                // before is old news, a new one is news.
                let (mut kept, mut fresh) = (kept.into_iter(), fresh.into_iter());
                scores
                    .iter()
                    .map(|score| match sc.keeps(*score) {
                        true => (kept.next().expect("one listing per kept row"), false),
                        false if fresh.next() == Some(true) => (Listing::New, true),
                        false => (Listing::Unchanged, true),
                    })
                    .collect()
            }
        };
        for (l, off_topic) in listings {
            match (l, off_topic) {
                (_, true) => {}
                (Listing::New, false) => report.new_threads += 1,
                (Listing::Updated, false) => report.updated_threads += 1,
                (Listing::Unchanged, false) => report.known_threads += 1,
            }
            unchanged_run = if l == Listing::Unchanged { unchanged_run + 1 } else { 0 };
        }
        // Only once its rows are recorded: a page kept as "seen" and then
        // answered 304 would never have its rows read.
        remember_validators(&store, &site.id, &url, &page_validators, &validators).await?;
        if unchanged_run >= stop_after {
            tracing::debug!("{}: board {}: {unchanged_run} known threads in a row; stopping at page {page}", site.id, board.id);
            break;
        }
    }
    let found_news = report.new_threads + report.updated_threads > 0;
    let next = site.incremental.next_interval(interval, found_news);
    let (pages, finished) = (report.list_pages as u32, report.errors.is_empty());
    with_store(&store, move |s| {
        s.batch(|s| {
            s.board_visited(&site.id, &board.id, pages, finished)?;
            s.set_board_schedule(&site.id, &board.id, next.as_secs() as i64, unix_now() + next.as_secs() as i64)
        })
    })
    .await?;
    Ok((report, boards_met))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::lock;
    use luntan_core::contract::Stop;
    use luntan_core::{DataDir, Site, Stage};
    use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

    /// A BBS-style fixture forum, its site file and a store in a temp dir.
    fn bbs(threads: usize, boards: usize) -> (luntan_fixture::BlockingFixture, tempfile::TempDir, Arc<Site>, Arc<Mutex<Store>>) {
        let server = FixtureServer::start_blocking(FixtureConfig { threads, boards, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let paths = server.write_site_files(dir.path()).unwrap();
        let site = Arc::new(Site::load(&paths[0]).unwrap());
        let store = Arc::new(Mutex::new(Store::open(&dir.path().join("luntan.db")).unwrap()));
        (server, dir, site, store)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_bloom_filter_spares_lookups_for_new_threads_only() {
        let (server, dir, site, store) = bbs(90, 2);
        let run = Arc::new(StageRun::begin(&DataDir::new(dir.path()), Stage::Discover, Stop::new()).unwrap());
        let all = DiscoverOptions { all_boards: true };
        let first = discover_site(run.clone(), Arc::new(Fetcher::new(site.clone()).unwrap()), store.clone(), all.clone()).await.unwrap();
        assert_eq!(first.new_threads, 90);
        assert_eq!(first.lookups_saved, 90, "an empty store: every thread is surely new");
        let added = server.add_threads(4);
        let second = discover_site(run, Arc::new(Fetcher::new(site.clone()).unwrap()), store.clone(), all.clone()).await.unwrap();
        assert_eq!(second.new_threads, 4);
        assert_eq!(second.lookups_saved, 4, "the filter (seeded, so repeatable) knew none of the four new threads");
        let seen = Seen::load(&lock(&store), "bbs").unwrap();
        for c in &added {
            assert!(seen.maybe_seen(&c.thread), "{} inserted but not in the filter", c.thread);
            assert!(lock(&store).thread("bbs", &c.thread).unwrap().is_some());
        }
        let false_hits = (0..10_000).filter(|i| seen.maybe_seen(&format!("x{i}"))).count();
        assert!(false_hits < 50, "{false_hits} false positives in 10,000 probes");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_round_marks_no_board_visited_and_the_next_walks_them_all() {
        let (_server, dir, site, store) = bbs(60, 3);
        let data = DataDir::new(dir.path());
        let stopped = StageRun::begin(&data, Stage::Discover, Stop::new()).unwrap();
        stopped.stop().set();
        let r = discover_site(Arc::new(stopped), Arc::new(Fetcher::new(site.clone()).unwrap()), store.clone(), DiscoverOptions::default()).await.unwrap();
        assert_eq!((r.boards, r.boards_interrupted, r.list_pages, r.new_threads), (3, 3, 0, 0), "{r:?}");
        let run = Arc::new(StageRun::begin(&data, Stage::Discover, Stop::new()).unwrap());
        let r = discover_site(run, Arc::new(Fetcher::new(site.clone()).unwrap()), store.clone(), DiscoverOptions::default()).await.unwrap();
        assert_eq!((r.boards_skipped, r.boards_interrupted, r.new_threads), (0, 0, 60), "every board is due after a stopped round: {r:?}");
    }
}
