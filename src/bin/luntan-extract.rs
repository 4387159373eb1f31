//! `luntan-extract`: turn saved thread HTML into normalized thread XML.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use luntan::cli;
use luntan_core::store::StateUrl;
use luntan_core::{Site, Stage, Store};
use luntan_extract::ExtractConfig;
use luntan_text::encoding::{self, Encoding};

/// Extract every saved thread into `article<T>.xml` (normalized, UTF-8) and
/// mark it extracted. Threads that cannot be extracted are marked failed with
/// the reason; `luntan-status` lists them.
#[derive(Debug, Parser)]
#[command(name = "luntan-extract", version)]
struct Args {
    /// Only print the detected encoding of each FILE (with --site, honouring
    /// that site file's forced encoding) and exit; touches no state.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    detect: Vec<PathBuf>,
    /// Only print, per site file (or the one --site names), whether its
    /// thread pages are read by the streaming reader or need a DOM, and
    /// which selector needs it; touches no state.
    #[arg(long)]
    explain: bool,
    /// Extract the forum named by --site again from its saved HTML (after a
    /// site-file change): its extracted, indexed and extract-failed threads go
    /// back to "saved" first; `luntan-index` then replaces their documents.
    /// No request is sent.
    #[arg(long, requires = "site")]
    again: bool,
    #[command(flatten)]
    stage: cli::StageArgs,
    #[command(flatten)]
    retry: cli::RetryArgs,
}

/// Checked arguments: what to do, with everything it needs loaded.
enum Config {
    Detect { files: Vec<PathBuf>, forced: Option<&'static Encoding> },
    Explain { sites: Vec<Site>, bad_site_file: bool },
    Extract { state: StateUrl, cfg: ExtractConfig, stage: cli::StageArgs, retry: cli::RetryArgs, again: bool, bad_site_file: bool },
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    args.stage.init();
    let config = match check(args) {
        Ok(c) => c,
        Err(lines) => {
            for line in lines {
                eprintln!("{line}");
            }
            return ExitCode::from(2);
        }
    };
    let result = match config {
        Config::Detect { files, forced } => detect(&files, forced),
        Config::Explain { sites, bad_site_file } => {
            for site in &sites {
                match luntan_extract::stream::streamable(&site.thread) {
                    Ok(()) => println!("{}: stream (pages it cannot rebuild exactly still go to the DOM)", site.id),
                    Err(why) => println!("{}: DOM: {why}", site.id),
                }
            }
            Ok(if bad_site_file { ExitCode::from(2) } else { ExitCode::SUCCESS })
        }
        Config::Extract { state, cfg, stage, retry, again, bad_site_file } => {
            extract(&state, &cfg, &stage, retry, again).map(|code| if bad_site_file { ExitCode::from(2) } else { code })
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("luntan-extract: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Turns arguments into a config, loading site files. A usage problem comes
/// back as the lines to print, before anything is touched; a broken site
/// file is reported at once and its forum left alone while the others go on.
fn check(args: Args) -> Result<Config, Vec<String>> {
    let data = args.stage.data_dir();
    if !args.detect.is_empty() {
        // Detection needs no site file unless one is named for its forced encoding.
        let forced = match args.stage.data.site() {
            Some(id) => {
                let (sites, errors) = Site::load_all(&data.sites_dir(), Some(id));
                if !errors.is_empty() {
                    return Err(errors.iter().map(ToString::to_string).collect());
                }
                sites.first().and_then(|s| s.encoding)
            }
            None => None,
        };
        return Ok(Config::Detect { files: args.detect, forced });
    }
    if args.explain {
        let (sites, bad_site_file) = cli::load_sites(&data, args.stage.data.site());
        if sites.is_empty() && !bad_site_file {
            return Err(vec![format!("{}: no site files (*.xml)", data.sites_dir().display())]);
        }
        return Ok(Config::Explain { sites, bad_site_file });
    }
    let state = args.stage.data.state().map_err(|e| vec![format!("luntan-extract: {e}")])?;
    let (sites, bad_site_file) = cli::load_sites(&data, args.stage.data.site());
    if sites.is_empty() && !bad_site_file {
        return Err(vec![format!("{}: no site files (*.xml)", data.sites_dir().display())]);
    }
    let site = args.stage.site().cloned();
    if args.again && !sites.iter().any(|s| Some(&s.id) == site.as_ref()) {
        return Err(vec![format!("--again: no usable site file for --site {}", site.map(String::from).unwrap_or_default())]);
    }
    let cfg = ExtractConfig { site, ..ExtractConfig::new(sites) };
    Ok(Config::Extract { state, cfg, stage: args.stage, retry: args.retry, again: args.again, bad_site_file })
}

fn detect(files: &[PathBuf], forced: Option<&'static Encoding>) -> anyhow::Result<ExitCode> {
    let mut code = ExitCode::SUCCESS;
    for path in files {
        match std::fs::read(path) {
            Ok(bytes) => {
                let (d, text) = encoding::detect_and_decode(&bytes, None, forced, None);
                println!("{}: {} ({}: {}), {} malformed", path.display(), d.encoding.name(), d.source, d.reason, text.malformed);
            }
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                code = ExitCode::FAILURE;
            }
        }
    }
    Ok(code)
}

fn extract(state: &StateUrl, cfg: &ExtractConfig, stage: &cli::StageArgs, retry: cli::RetryArgs, again: bool) -> anyhow::Result<ExitCode> {
    let (run, bar) = stage.begin(Stage::Extract, state, false)?;
    let mut store = cli::open_store(state)?;
    retry.apply(&store, Stage::Extract, cfg.site.as_ref(), again)?;
    if again {
        let site = cfg.site.as_ref().expect("--again requires --site");
        let n = requeue(&store, site)?;
        eprintln!("luntan-extract: {n} threads of {site} to extract again from their saved HTML");
    }
    let summary = luntan_extract::run(&run, cfg, &mut store);
    bar.finish();
    let summary = summary?;
    // One line per cause, however many threads it hit.
    cli::report_failures(Stage::Extract, &summary.threads);
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}

/// Moves a forum's extracted and indexed threads back to `Saved`, in one
/// transaction, so the next extract reads their HTML again.
fn requeue(store: &Store, site: &str) -> anyhow::Result<usize> {
    use luntan_core::ThreadState;
    let n = store.batch(|store| -> anyhow::Result<usize> {
        let mut n = 0;
        for from in [ThreadState::Extracted, ThreadState::Indexed] {
            for row in store.threads(Some(site), from)? {
                n += usize::from(store.transition(site, &row.thread, from, ThreadState::Saved, &Default::default())?);
            }
        }
        Ok(n)
    })?;
    Ok(n)
}
