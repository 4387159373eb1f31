//! `luntan-status`: how far each forum's threads have come.

use std::process::ExitCode;

use clap::Parser;
use luntan::cli;
use luntan_core::Store;

/// Per-forum counts of boards and of threads in each state (like Nutch's
/// `readdb -stats`), with the most common failure reasons.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    common: cli::DataArgs,
    /// One JSON object per forum instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let db = match args.common.state() {
        Ok(db) => db,
        Err(e) => {
            eprintln!("luntan-status: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !db.exists() {
        eprintln!("{db}: no crawl database yet (run luntan-discover first)");
        return ExitCode::FAILURE;
    }
    let status = match Store::connect(&db).and_then(|s| s.status(args.common.site())) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("luntan-status: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.json {
        for s in &status {
            // Through a Value, so keys come out sorted as they always have.
            println!("{}", serde_json::to_value(s).expect("status serializes"));
        }
        return ExitCode::SUCCESS;
    }
    let counts: Vec<_> = status.iter().map(|s| &s.counts).collect();
    let keywords: Vec<_> = status.iter().flat_map(|s| &s.keywords).collect();
    // Each thread is counted once, in the state it is in now (see
    // luntan_core::state), so a column is named for what its threads wait
    // for: a finished crawl has nothing "to download", not nothing found.
    println!("{:<16} {:>6} {:>11} {:>10} {:>8} {:>8} {:>7} {:>8}", "site", "boards", "to-download", "to-extract", "to-index", "indexed", "failed", "found");
    for c in &counts {
        let found = c.discovered + c.saved + c.extracted + c.indexed + c.failed;
        println!("{:<16} {:>6} {:>11} {:>10} {:>8} {:>8} {:>7} {:>8}", c.site, c.boards, c.discovered, c.saved, c.extracted, c.indexed, c.failed, found);
    }
    if !counts.is_empty() {
        println!("(each thread once, by where it is now: to-download = listed, pages not saved yet; to-extract = HTML saved;");
        println!(" to-index = XML written; indexed = searchable; failed = a stage gave up; found = all of them)");
    }
    for c in &counts {
        if let Some(r) = &c.last_round {
            println!(
                "  {} last round {}: {} requests, {} list pages, {} boards visited ({} not due), {} new threads, {} updated, {} errors",
                c.site, r.finished_at, r.requests, r.list_pages, r.boards_visited, r.boards_skipped, r.new_threads, r.updated_threads, r.errors
            );
        }
        if c.states_kept > 0 || c.states_dropped > 0 {
            // S4: what the browser's events reached, and the repeats dropped.
            println!("  {} browser: {} DOM states kept, {} dropped as duplicates", c.site, c.states_kept, c.states_dropped);
        }
        if let Some(m) = &c.media {
            println!("  {} media: {} URLs kept in {} files ({} bytes), {} not kept", c.site, m.archived, m.files, m.bytes, m.failed);
        }
        if c.skipped_links > 0 {
            println!("  {} {} thread links left out as off-topic; best scores:", c.site, c.skipped_links);
            for (url, score) in &c.top_skipped {
                println!("    {score:.3} {url}");
            }
        }
        for k in keywords.iter().filter(|k| k.site == c.site) {
            // S0's record: where the last round met seen results, and the
            // budget (result pages) the next round gets.
            println!(
                "  {} keyword {:?}: {} rounds, next round reads up to {} result pages (last seen at page {}), newest post {}",
                c.site,
                k.keyword,
                k.rounds,
                k.pagenum,
                k.lastresult,
                k.watermark.as_deref().unwrap_or("none yet")
            );
            if let Some(e) = &k.last_error {
                println!("  {} keyword {:?}: the last round kept the record after an error: {e}", c.site, k.keyword);
            }
        }
        // One line per cause: a wrong selector fails every thread the same way.
        for g in &c.failures {
            println!("  {} failed at {} ×{}: {} ({})", c.site, g.stage, g.threads, g.cause, g.examples_line());
        }
    }
    ExitCode::SUCCESS
}
