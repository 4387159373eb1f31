//! `luntan-media`: archives the pictures and attachments extracted threads
//! show, once per content hash, for the forums whose site file has `<media>`.

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use luntan::cli;
use luntan_core::contract::Stop;
use luntan_core::state::group_failures;
use luntan_core::DataDir;
use luntan_crawl::media::{archive_site, MediaReport};

/// Fetch the pictures (and, with `<media attachments="…">`, the
/// attachments) of every extracted thread of the forums whose site file has
/// `<media>`, through the forum's own politeness (delay, concurrency,
/// robots.txt, allowed hosts), into DATA/media/<ab>/<sha256>: one file per
/// content, however many posts show it. A URL archived or failed before is
/// not asked for again. Ctrl-C stops after the requests in flight.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    stage: cli::StageArgs,
    // `--retry-failed` here forgets the media URLs that failed, so this
    // run asks for them again.
    #[command(flatten)]
    retry: cli::RetryArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    args.stage.init();
    let data = args.stage.data_dir();
    let (sites, bad_site_file) = cli::load_sites(&data, args.stage.data.site());
    let result = media(&args, &data, sites);
    cli::exit_code("luntan-media", result, bad_site_file)
}

fn media(args: &Args, data: &DataDir, sites: Vec<luntan_core::Site>) -> anyhow::Result<()> {
    let start = Instant::now();
    let state = args.stage.data.state()?;
    let sites: Vec<_> = sites.into_iter().filter(|s| s.media.is_some()).collect();
    if sites.is_empty() {
        println!("media: no forum's site file has <media>; nothing archived");
        return Ok(());
    }
    if !state.exists() {
        anyhow::bail!("{state}: no crawl database (run discover, download and extract first)");
    }
    // No lock is taken (runs on other hosts may share the directory), so
    // only temp files too old to be a live run's are swept.
    data.sweep_media_temp_files(luntan_core::contract::STALE_TEMP_FILE)?;
    let store = cli::open_store(&state)?;
    if args.retry.retry_failed {
        let n = store.media_retry_failed(args.stage.data.site())?;
        if n > 0 {
            eprintln!("luntan-media: {n} media URLs that failed are asked for again");
        }
    }
    let store = Arc::new(Mutex::new(store));
    let stop = Stop::on_ctrl_c("luntan-media");
    let bar = cli::Bar::new("media", args.stage.quiet.quiet);
    let fetchers = args.stage.fetchers(&sites, &state)?;
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let reports: Vec<MediaReport> = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for fetcher in &fetchers {
            let (data, store, fetcher, stop, bar) = (data.clone(), store.clone(), fetcher.clone(), stop.clone(), bar.clone());
            tasks.spawn(async move { archive_site(&data, store, fetcher, &stop, bar.as_ref()).await });
        }
        let mut reports = Vec::new();
        while let Some(r) = tasks.join_next().await {
            reports.push(r.expect("site task panicked")?);
        }
        anyhow::Ok(reports)
    })?;
    bar.finish();
    report_failures(&reports);
    let requests: u64 = fetchers.iter().map(|f| f.stats.requests.load(Ordering::Relaxed)).sum();
    for r in &reports {
        println!("media: {}", r.summary());
    }
    let sum = |f: fn(&MediaReport) -> usize| reports.iter().map(f).sum::<usize>();
    println!(
        "media: {} archived, {} new files, {} failed, {} known from earlier runs, {} requests in {}",
        sum(|r| r.archived),
        sum(|r| r.new_files),
        sum(|r| r.failed.len()),
        sum(|r| r.known),
        requests,
        cli::elapsed(start.elapsed())
    );
    if stop.is_set() {
        println!("media: stopped by Ctrl-C; run again to fetch the {} URLs left", sum(|r| r.left));
    }
    Ok(())
}

/// The failed URLs once per reason, most frequent first, with the first
/// few, grouped as the stages group their failed threads.
fn report_failures(reports: &[MediaReport]) {
    let failed = reports.iter().flat_map(|r| &r.failed).map(|(url, why)| ("media", url.as_str(), why.as_str()));
    for g in group_failures(failed) {
        eprintln!("luntan-media: {} media failed: {} ({})", g.threads, g.cause, g.examples_line());
    }
}
