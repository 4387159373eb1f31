//! `luntan-discover`: finds each forum's boards and new or updated threads.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use luntan::cli;
use luntan_core::store::StateUrl;
use luntan_core::{Site, Stage, StageRun, Store};
use luntan_crawl::db::with_store;
use luntan_crawl::discover::{discover_site, DiscoverOptions, DiscoverReport};
use luntan_crawl::fetch::Fetcher;
use luntan_crawl::keywords::{monitor_site, read_keywords, KeywordReport};

/// Read each forum's home page and board lists; add threads not seen before
/// to the crawl database (state 0, discovered) and re-queue threads whose
/// list row shows more replies or a newer last post. Paging a board stops
/// after the site's `stop-after` known, unchanged rows in a row, and boards
/// not due on their adaptive schedule are skipped (see --all-boards).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    stage: cli::StageArgs,
    /// Visit every board now, whatever its schedule says.
    #[arg(long)]
    all_boards: bool,
    /// Run rounds until Ctrl-C, sleeping until the next board is due.
    #[arg(long)]
    watch: bool,
    /// With --watch: the longest sleep between rounds, in seconds (with
    /// --keywords: the sleep between rounds).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    max_sleep: u64,
    /// Monitor the keywords in FILE (one per line) through each forum's own
    /// search instead of reading board lists (S0): result pages newest first
    /// down to the first page already seen, an adaptive page budget per
    /// keyword, one worker per <account>. Needs a <search> in the site file.
    #[arg(long, value_name = "FILE")]
    keywords: Option<PathBuf>,
}

struct Config {
    stage: cli::StageArgs,
    state: StateUrl,
    sites: Vec<Site>,
    bad_site_file: bool,
    options: DiscoverOptions,
    watch: bool,
    max_sleep: Duration,
    keywords: Option<Vec<String>>,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let cli::Start { state, sites, bad_site_file } = match args.stage.start(Stage::Discover) {
        Ok(start) => start,
        Err(code) => return code,
    };
    let keywords = match &args.keywords {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) if !read_keywords(&text).is_empty() => Some(read_keywords(&text)),
            Ok(_) => {
                eprintln!("luntan-discover: {}: no keywords in the file", path.display());
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("luntan-discover: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
    };
    let config = Config {
        stage: args.stage,
        state,
        sites,
        bad_site_file,
        options: DiscoverOptions { all_boards: args.all_boards },
        watch: args.watch,
        max_sleep: Duration::from_secs(args.max_sleep),
        keywords,
    };
    cli::exit_code("luntan-discover", discover(&config), config.bad_site_file)
}

fn discover(config: &Config) -> anyhow::Result<()> {
    // Discover is idempotent, but two copies would fetch every list page twice.
    // A bar that grew round after round would say nothing under --watch.
    let (run, bar) = config.stage.begin(Stage::Discover, &config.state, config.watch)?;
    let store = Arc::new(Mutex::new(cli::open_store(&config.state)?));
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let fetchers = config.stage.fetchers(&config.sites, &config.state)?;
    if let Some(keywords) = &config.keywords {
        return rt.block_on(keyword_rounds(config, &run, &fetchers, &store, keywords));
    }
    let done = rt.block_on(async {
        loop {
            let start = Instant::now();
            let mut tasks = tokio::task::JoinSet::new();
            for f in &fetchers {
                tasks.spawn(discover_site(run.clone(), f.clone(), store.clone(), config.options.clone()));
            }
            let mut reports = Vec::new();
            while let Some(r) = tasks.join_next().await {
                reports.push(r.expect("site task panicked")?);
            }
            bar.finish();
            print_summary(&reports, start.elapsed(), run.stopped());
            if !config.watch || run.stopped() {
                return anyhow::Ok(());
            }
            let ids: Vec<String> = config.sites.iter().map(|s| s.id.to_string()).collect();
            let due = with_store(&store, move |s| s.next_board_visit(&ids)).await?;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
            let wait = Duration::from_secs(due.map_or(60, |d| (d - now).max(1) as u64)).min(config.max_sleep);
            let deadline = Instant::now() + wait;
            while Instant::now() < deadline && !run.stopped() {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            if run.stopped() {
                eprintln!("luntan-discover: stopped by Ctrl-C between rounds");
                return anyhow::Ok(());
            }
        }
    });
    // The browser, if browser mode started one, goes with the run.
    rt.block_on(luntan_crawl::browser::shutdown());
    done
}

/// Keyword rounds (S0) until done (one round) or, with --watch, until Ctrl-C.
async fn keyword_rounds(config: &Config, run: &Arc<StageRun>, fetchers: &[Arc<Fetcher>], store: &Arc<Mutex<Store>>, keywords: &[String]) -> anyhow::Result<()> {
    loop {
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for f in fetchers {
            let (run, fetcher, store, keywords) = (run.clone(), f.clone(), store.clone(), keywords.to_vec());
            tasks.spawn(async move { monitor_site(run, fetcher, store, &keywords).await });
        }
        let mut reports = Vec::new();
        while let Some(r) = tasks.join_next().await {
            reports.push(r.expect("site task panicked")?);
        }
        reports.sort_by(|a, b| a.site.cmp(&b.site));
        print_keyword_summary(&reports, keywords.len(), start.elapsed());
        if run.stopped() {
            let left: usize = reports.iter().map(|r| r.interrupted).sum();
            eprintln!("luntan-discover: stopped by Ctrl-C; {left} keywords left part-way keep their records (the next round reads them again)");
            return Ok(());
        }
        if !config.watch {
            return Ok(());
        }
        let deadline = Instant::now() + config.max_sleep;
        while Instant::now() < deadline && !run.stopped() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if run.stopped() {
            eprintln!("luntan-discover: stopped by Ctrl-C between rounds");
            return Ok(());
        }
    }
}

fn print_keyword_summary(reports: &[KeywordReport], keywords: usize, took: Duration) {
    let sum = |f: fn(&KeywordReport) -> usize| reports.iter().map(f).sum::<usize>();
    let failed = reports.iter().flat_map(|r| &r.keywords).filter(|k| k.error.is_some()).count();
    println!(
        "keywords: {} sites, {keywords} keywords, {} workers, {} result pages, {} busy pages waited out, {} requests, {} new threads, {} updated, {} known, {} errors in {}",
        reports.len(),
        sum(|r| r.workers),
        sum(|r| r.pages),
        reports.iter().map(|r| r.busy_pages).sum::<u64>(),
        reports.iter().map(|r| r.requests).sum::<u64>(),
        sum(|r| r.new_threads),
        sum(|r| r.updated_threads),
        sum(|r| r.known_threads),
        sum(|r| r.errors.len()) + failed,
        cli::elapsed(took)
    );
    for r in reports {
        for k in &r.keywords {
            match &k.error {
                None => println!(
                    "  {} {}: read {} of {} pages (lastresult {}), {} results, {} new, {} updated; next round {} pages",
                    r.site, k.keyword, k.pages_read, k.budget, k.lastresult, k.results, k.new_threads, k.updated_threads, k.next_pagenum
                ),
                Some(e) => println!(
                    "  {} {}: read {} of {} pages, {} results, {} new, {} updated; record kept (next round {} pages) after an error: {e}",
                    r.site, k.keyword, k.pages_read, k.budget, k.results, k.new_threads, k.updated_threads, k.next_pagenum
                ),
            }
        }
        // What stopped a whole forum or account: stderr, one line each.
        for e in &r.errors {
            eprintln!("luntan-discover: {e}");
        }
    }
}

fn print_summary(reports: &[DiscoverReport], took: Duration, stopped: bool) {
    let sum = |f: fn(&DiscoverReport) -> usize| reports.iter().map(f).sum::<usize>();
    println!(
        "discover: {} sites, {} boards ({} not due), {} list pages, {} requests, {} new threads, {} updated, {} known, {} off-topic, {} refused links, {} errors in {}; {:.1} kB received{}",
        reports.len(),
        sum(|r| r.boards),
        sum(|r| r.boards_skipped),
        sum(|r| r.list_pages),
        reports.iter().map(|r| r.requests).sum::<u64>(),
        sum(|r| r.new_threads),
        sum(|r| r.updated_threads),
        sum(|r| r.known_threads),
        sum(|r| r.off_topic),
        sum(|r| r.refused_links),
        sum(|r| r.errors.len()),
        cli::elapsed(took),
        reports.iter().map(|r| r.bytes).sum::<u64>() as f64 / 1e3,
        match sum(|r| r.not_modified) {
            0 => String::new(),
            n => format!(", {n} pages unchanged since the last round (304, no body)"),
        }
    );
    let (checked, left) = (sum(|r| r.comment_checks), sum(|r| r.comment_checks_left));
    if checked + left > 0 {
        println!("discover: {checked} articles asked for their comment count, {left} less recently active ones not asked (<comments recheck>)");
    }
    if stopped {
        println!("discover: stopped by Ctrl-C; {} boards not walked or left part-way (the next round reads them in full)", sum(|r| r.boards_interrupted));
    }
}
