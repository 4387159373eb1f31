//! What the stage binaries share: logging, progress bars, site loading.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use luntan_core::site::Site;

/// The arguments every stage over a data directory takes (flattened into
/// each binary's `Args`, so they read and check the same everywhere).
#[derive(clap::Args, Debug, Clone)]
pub struct DataArgs {
    /// Data directory: site files in DATA/sites, crawl state in
    /// DATA/luntan.db, pages and thread XML in DATA/pages.
    #[arg(long, value_name = "DIR", default_value = "data", alias = "data-dir")]
    pub data: PathBuf,
    /// Only this forum (its site file's id).
    #[arg(long, value_name = "ID", value_parser = site_id)]
    pub site: Option<String>,
}

/// The flags every stage that moves threads takes, meaning the same in each.
#[derive(clap::Args, Debug, Clone)]
pub struct StageArgs {
    /// No progress bar and no line per thread: only the summary, the
    /// failures grouped by reason, and errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// First put the threads this stage marked failed back in its queue
    /// (after fixing what made them fail), then run as usual.
    #[arg(long)]
    pub retry_failed: bool,
}

/// Prints failures grouped by cause (see [`luntan_core::state::group_failures`]),
/// most frequent first: one line each, with the count and the first threads.
pub fn report_failures(stage: &str, failures: &[(String, String)]) {
    for g in luntan_core::state::group_failures(failures.iter().map(|(t, r)| ("", t.as_str(), r.as_str()))) {
        let n = g.threads;
        eprintln!("{stage}: {n} {} failed: {} ({})", if n == 1 { "thread" } else { "threads" }, g.cause, g.examples_line());
    }
}

/// `--site` is checked when the arguments are parsed: an id names
/// directories and index files, so `../x` must never reach a stage.
fn site_id(s: &str) -> Result<String, String> {
    luntan_core::ids::check_id(s).map_err(|e| e.to_string())
}

/// Logs to stderr as plain lines (`RUST_LOG` overrides the level): warnings
/// are the one-line reports of bad input, so they show by default.
pub fn init_tracing(quiet: bool) {
    let default = if quiet { "error" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .with_target(false)
        .with_level(true)
        .try_init();
}

/// A progress bar on stderr when it is a terminal; hidden otherwise.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{prefix:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta}").expect("static template").progress_chars("=> "));
    bar.set_prefix(what.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Loads the site files under `<data>/sites`, printing one line per broken
/// file. Returns the good sites and whether any file was broken.
pub fn load_sites(data: &Path, only: Option<&str>) -> (Vec<Site>, bool) {
    let (sites, errors) = Site::load_all(&data.join("sites"), only);
    for e in &errors {
        eprintln!("{e}");
    }
    (sites, !errors.is_empty())
}

/// A flag that the first Ctrl-C sets, so a stage can finish the work in
/// flight and stop; a second Ctrl-C ends the process at once (files are
/// published atomically, so even that loses nothing already done).
pub fn stop_on_ctrl_c(stage: &'static str) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let result = ctrlc_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("{stage}: stopping after the work in flight (Ctrl-C again to abort)");
    });
    if let Err(e) = result {
        tracing::warn!("{stage}: cannot catch Ctrl-C: {e}");
    }
    stop
}

/// Runs `f` on every SIGINT, on a thread of its own (tokio's signal
/// handling, on a small runtime, so no extra crate is needed).
fn ctrlc_handler(f: impl Fn() + Send + 'static) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    let mut signal = rt.block_on(async { tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) })?;
    std::thread::Builder::new().name("ctrl-c".into()).spawn(move || {
        rt.block_on(async move {
            while signal.recv().await.is_some() {
                f();
            }
        })
    })?;
    Ok(())
}

/// A stage's exit code: 1 when it failed (after printing why), 2 when a
/// site file was broken (the other forums were still processed), else 0.
pub fn exit_code(stage: &str, result: anyhow::Result<()>, bad_site_file: bool) -> std::process::ExitCode {
    match result {
        Err(e) => {
            eprintln!("{stage}: {e:#}");
            std::process::ExitCode::FAILURE
        }
        Ok(()) if bad_site_file => std::process::ExitCode::from(2),
        Ok(()) => std::process::ExitCode::SUCCESS,
    }
}

/// `1.2s`, `3m04s`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    }
}
