//! `luntan-discover`: finds each forum's boards and new threads.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use luntan_core::{Site, Store};
use luntan::cli;
use luntan_crawl::discover::discover_site;
use luntan_crawl::fetch::Fetcher;

/// Read each forum's home page and board lists; add threads not seen before
/// to the crawl database (state 0, discovered). Running it again adds only
/// new threads.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Data directory (site files in DATA/sites, state in DATA/luntan.db).
    #[arg(long, default_value = "data")]
    data: PathBuf,
    /// Only this forum (its site file's id).
    #[arg(long)]
    site: Option<String>,
    /// Print only errors.
    #[arg(long, short)]
    quiet: bool,
}

struct Config {
    data: PathBuf,
    sites: Vec<Site>,
    bad_site_file: bool,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    cli::init_tracing(args.quiet);
    let (sites, bad_site_file) = cli::load_sites(&args.data, args.site.as_deref());
    let config = Config { data: args.data, sites, bad_site_file };
    match discover(&config) {
        Ok(()) if config.bad_site_file => ExitCode::from(2),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("luntan-discover: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn discover(config: &Config) -> anyhow::Result<()> {
    let start = Instant::now();
    let db = luntan_core::DataDir::new(&config.data).db_path();
    let store = Arc::new(Mutex::new(Store::open(&db)?));
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let reports = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for site in &config.sites {
            let fetcher = Arc::new(Fetcher::new(Arc::new(site.clone()))?);
            tasks.spawn(discover_site(fetcher, store.clone()));
        }
        let mut reports = Vec::new();
        while let Some(r) = tasks.join_next().await {
            reports.push(r.expect("site task panicked")?);
        }
        anyhow::Ok(reports)
    })?;
    let sum = |f: fn(&luntan_crawl::discover::DiscoverReport) -> usize| reports.iter().map(f).sum::<usize>();
    println!(
        "discover: {} sites, {} boards, {} list pages, {} new threads, {} known, {} refused links, {} errors in {}",
        reports.len(),
        sum(|r| r.boards),
        sum(|r| r.list_pages),
        sum(|r| r.new_threads),
        sum(|r| r.known_threads),
        sum(|r| r.refused_links),
        sum(|r| r.errors.len()),
        cli::elapsed(start.elapsed())
    );
    Ok(())
}
