//! What the stage binaries share: logging, progress bars, site loading.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use luntan_core::site::Site;

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
    bar.set_style(
        ProgressStyle::with_template("{prefix:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
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

/// `1.2s`, `3m04s`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    }
}
