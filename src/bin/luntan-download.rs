//! `luntan-download`: saves the raw HTML of every discovered thread.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use luntan::cli;
use luntan_core::ids::SaveDate;
use luntan_core::state::Stage;
use luntan_core::store::StateUrl;
use luntan_core::Site;
use luntan_crawl::download::{download_site, DownloadOptions, DownloadReport};

/// Download every discovered thread (state 0), all its pages, into
/// DATA/pages/<site>/board<B>/board<B>_<YYYYMMDD>/article<T>.html, then mark
/// it saved (state 1). Per-site concurrency, delay and robots.txt come from
/// the site file. Ctrl-C stops after the threads in flight.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    stage: cli::StageArgs,
    #[command(flatten)]
    retry: cli::RetryArgs,
    /// Threads in flight per forum (requests still obey the site's limits).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=4096))]
    in_flight: u16,
}

struct Config {
    state: StateUrl,
    sites: Vec<Site>,
    bad_site_file: bool,
    stage: cli::StageArgs,
    retry: cli::RetryArgs,
    in_flight: usize,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let cli::Start { state, sites, bad_site_file } = match args.stage.start(Stage::Download) {
        Ok(start) => start,
        Err(code) => return code,
    };
    let config = Config { state, sites, bad_site_file, stage: args.stage, retry: args.retry, in_flight: args.in_flight.into() };
    cli::exit_code("luntan-download", download(&config), config.bad_site_file)
}

fn download(config: &Config) -> anyhow::Result<()> {
    let start = Instant::now();
    let (run, bar) = config.stage.begin(Stage::Download, &config.state, false)?;
    let store = cli::open_store(&config.state)?;
    for site in &config.sites {
        store.upsert_site(site)?;
    }
    if !config.sites.is_empty() {
        config.retry.apply(&store, Stage::Download, config.stage.site(), false)?;
    }
    let store = Arc::new(Mutex::new(store));
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let fetchers = config.stage.fetchers(&config.sites, &config.state)?;
    let reports = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for fetcher in fetchers {
            let opts = DownloadOptions { save_date: SaveDate::today(), in_flight: config.in_flight };
            tasks.spawn(download_site(run.clone(), fetcher, store.clone(), opts));
        }
        let mut reports = Vec::new();
        while let Some(r) = tasks.join_next().await {
            reports.push(r.expect("site task panicked"));
        }
        // The browser, if browser mode started one, goes with the run.
        luntan_crawl::browser::shutdown().await;
        reports.into_iter().collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::from)
    });
    bar.finish();
    let reports: Vec<DownloadReport> = reports?;
    let mut threads = luntan_core::contract::StageReport::default();
    for r in &reports {
        threads.merge(r.threads.clone());
    }
    cli::report_failures(Stage::Download, &threads);
    for e in reports.iter().filter_map(|r| r.error.as_ref()) {
        eprintln!("luntan-download: {e}");
    }
    for r in &reports {
        if let Some(b) = &r.browser {
            println!(
                "download: {} in the browser: {} DOM states kept, {} dropped as duplicates, {} requests, {} scripts/stylesheets fetched, {} served from cache, {} refused off the forum, {} images/fonts/media blocked, {} long-polls let go, {} websockets opened, {} socket frames sent and {} received, {} browser restarts",
                r.site,
                b.states_kept,
                b.states_dropped,
                b.requests,
                b.assets,
                b.cached,
                b.refused,
                b.blocked,
                b.long_polls,
                b.sockets,
                b.frames_sent,
                b.frames_received,
                b.restarts
            );
        }
    }
    let secs = start.elapsed().as_secs_f64().max(1e-3);
    let sum = |f: fn(&DownloadReport) -> usize| reports.iter().map(f).sum::<usize>();
    let bytes: u64 = reports.iter().map(|r| r.bytes).sum();
    let left = threads.left;
    let kept = sum(|r| r.pages_kept);
    println!(
        "download: {} saved, {} failed, {} left, {} pages, {:.1} MB in {} ({:.0} pages/s){}",
        threads.done,
        threads.failed,
        left,
        sum(|r| r.pages),
        bytes as f64 / 1e6,
        cli::elapsed(start.elapsed()),
        sum(|r| r.pages) as f64 / secs,
        if kept > 0 { format!("; {kept} of the pages kept from the threads' last download, not fetched again") } else { String::new() }
    );
    if run.stopped() {
        println!("download: stopped by Ctrl-C; run again to fetch the {left} threads left");
    }
    Ok(())
}
