//! `luntan-extract`: turn saved thread HTML into normalized thread XML.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use luntan_core::lock::StageLock;
use luntan_core::{DataDir, Site, Stage, Store};
use luntan_extract::{encoding, ExtractConfig, Progress};

/// Extract every saved thread into `article<T>.xml` (normalized, UTF-8) and
/// mark it extracted. Threads that cannot be extracted are marked failed with
/// the reason; `luntan-status` lists them.
#[derive(Debug, Parser)]
#[command(name = "luntan-extract", version)]
struct Args {
    /// Data directory (holds luntan.db, sites/ and pages/).
    #[arg(long, value_name = "DIR", default_value = "data")]
    data: PathBuf,

    /// Only extract this site's threads (its site file id).
    #[arg(long, value_name = "ID")]
    site: Option<String>,

    /// Only print the detected encoding of each FILE (with --site, honouring
    /// that site file's forced encoding) and exit; touches no state.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    detect: Vec<PathBuf>,

    /// No progress bar and no line per failed thread; just the summary.
    #[arg(long)]
    quiet: bool,
}

/// Checked arguments: what to do, with everything it needs loaded.
enum Config {
    Detect { files: Vec<PathBuf>, forced: Option<&'static encoding_rs::Encoding> },
    Extract { cfg: ExtractConfig, quiet: bool },
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let config = match check(args) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("luntan-extract: {msg}");
            return ExitCode::from(2);
        }
    };
    let result = match config {
        Config::Detect { files, forced } => detect(&files, forced),
        Config::Extract { cfg, quiet } => extract(&cfg, quiet),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("luntan-extract: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Turns arguments into a config, loading site files; a usage or site-file
/// problem comes back as the one line to print.
fn check(args: Args) -> Result<Config, String> {
    if let Some(id) = &args.site {
        luntan_core::ids::check_id(id).map_err(|e| format!("--site: {e}"))?;
    }
    let data = DataDir::new(args.data);
    let needs_sites = args.detect.is_empty() || args.site.is_some();
    let sites = if needs_sites { load_sites(&data)? } else { Vec::new() };
    let site = match &args.site {
        Some(id) => Some(sites.iter().find(|s| &s.id == id).ok_or_else(|| format!("{}: no site file with id {id:?}", data.sites_dir().display()))?),
        None => None,
    };
    if !args.detect.is_empty() {
        return Ok(Config::Detect { files: args.detect, forced: site.and_then(|s| s.encoding) });
    }
    let site = site.map(|s| s.id.clone());
    Ok(Config::Extract { cfg: ExtractConfig { site, ..ExtractConfig::new(data, sites) }, quiet: args.quiet })
}

fn load_sites(data: &DataDir) -> Result<Vec<Site>, String> {
    let dir = data.sites_dir();
    let loaded = Site::load_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let sites = loaded.into_iter().collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    if sites.is_empty() {
        return Err(format!("{}: no site files (*.xml)", dir.display()));
    }
    Ok(sites)
}

fn detect(files: &[PathBuf], forced: Option<&'static encoding_rs::Encoding>) -> anyhow::Result<ExitCode> {
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

fn extract(cfg: &ExtractConfig, quiet: bool) -> anyhow::Result<ExitCode> {
    let _lock = StageLock::acquire(cfg.data.root(), Stage::Extract)?;
    let db = cfg.data.db_path();
    let mut store = Store::open(&db).with_context(|| format!("{}: cannot open the crawl database", db.display()))?;
    let bar = if quiet || !std::io::stderr().is_terminal() { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("extract {bar:40} {pos}/{len} threads, {msg} [{elapsed_precise}, ETA {eta}]")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let bytes = std::sync::atomic::AtomicU64::new(0);
    let summary = luntan_extract::run(cfg, &mut store, |p| match p {
        Progress::Start { total } => bar.set_length(total as u64),
        Progress::Thread { bytes: b } => {
            let total = bytes.fetch_add(b, std::sync::atomic::Ordering::Relaxed) + b;
            bar.set_message(format!("{:.1} MB", total as f64 / 1e6));
            bar.inc(1);
        }
        Progress::Failed { row, reason } if !quiet => {
            let line = format!("failed {}/{}: {reason}", row.site, row.thread);
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
        }
        Progress::Failed { .. } => {}
    });
    bar.finish_and_clear();
    let summary = summary?;
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}
