//! luntan-index: `Extracted` threads → `index/<site>.index`, or `--rebuild`
//! a forum's index from its XML files alone.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Parser;
use luntan::cli;
use luntan_core::{IndexDir, Stage};
use luntan_search::{analysis, index_threads, rebuild_all, rebuild_site, IndexOptions};

#[derive(Parser, Debug)]
#[command(name = "luntan-index", version, about = "Index extracted threads, one tantivy index per forum")]
struct Args {
    /// Where `<site>.index` directories live.
    #[arg(long, value_name = "DIR", default_value = "index")]
    index_dir: PathBuf,
    /// Delete and recreate the index from every `article*.xml` under `data/pages/SITE/`
    /// (all sites without --site), whatever the database rows say.
    #[arg(long)]
    rebuild: bool,
    /// Indexing memory budget in MB (at least 15).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(15..=4000))]
    writer_mb: u64,
    /// Commit (and mark rows indexed) every N threads, besides once per forum.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(1..))]
    commit_every: u64,
    #[command(flatten)]
    stage: cli::StageArgs,
    #[command(flatten)]
    retry: cli::RetryArgs,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    args.stage.init();
    match index(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("luntan-index: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn index(args: Args) -> anyhow::Result<()> {
    let state = args.stage.data.state()?;
    // The first Ctrl-C commits what is indexed and stops; a second one
    // (or SIGKILL) loses nothing either, since rows move after commits.
    let (run, bar) = args.stage.begin(Stage::Index, &state, false)?;
    let opts = IndexOptions { writer_mb: args.writer_mb as usize, commit_every: args.commit_every as usize };
    let index = IndexDir::new(&args.index_dir);
    std::fs::create_dir_all(index.root()).with_context(|| format!("{}", index.root().display()))?;
    analysis::warm_up();

    let report = if args.rebuild {
        // A rebuild needs no database; rows only move if one exists.
        let mut store = if state.exists() { Some(cli::open_store(&state)?) } else { None };
        match args.stage.site() {
            Some(site) => rebuild_site(&run, store.as_mut(), &index, site, &opts)?,
            None => rebuild_all(&run, store.as_mut(), &index, &opts)?,
        }
    } else {
        if !state.exists() {
            bail!("{state}: no crawl database (run the earlier stages, or use --rebuild)");
        }
        let mut store = cli::open_store(&state)?;
        args.retry.apply(&store, Stage::Index, args.stage.site(), false)?;
        index_threads(&run, &mut store, &index, args.stage.site(), &opts)?
    };
    bar.finish();
    cli::report_failures(Stage::Index, &report.threads);
    println!("{}", report.summary());
    Ok(())
}
