//! What the stage binaries share: logging, progress bars, site loading.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use luntan_core::contract::{Progress, StageReport, StageRun, Stop};
use luntan_core::ids::SiteId;
use luntan_core::site::Site;
use luntan_core::store::{Claims, StateUrl, Store};
use luntan_core::{DataDir, Stage};
use luntan_crawl::fetch::Fetcher;

/// The arguments every stage over a data directory takes (flattened into
/// each binary's `Args`, so they read and check the same everywhere).
#[derive(clap::Args, Debug, Clone)]
pub struct DataArgs {
    /// Data directory: site files in DATA/sites, crawl state in
    /// DATA/luntan.db, pages and thread XML in DATA/pages.
    #[arg(long, value_name = "DIR", default_value = "data", alias = "data-dir")]
    pub data: PathBuf,
    /// Only this forum (its site file's id).
    #[arg(long, value_name = "ID")]
    pub site: Option<SiteId>,
    /// Crawl state: a PostgreSQL URL (postgres://user@host/db), shared by
    /// workers on many hosts, or a SQLite file. Default: $LUNTAN_STATE,
    /// else DATA/luntan.db.
    #[arg(long, value_name = "URL")]
    pub state: Option<String>,
}

impl DataArgs {
    pub fn site(&self) -> Option<&str> {
        self.site.as_ref().map(SiteId::as_str)
    }

    /// Where the crawl state is (checked: a bad URL is one clear line).
    pub fn state(&self) -> anyhow::Result<StateUrl> {
        StateUrl::resolve(self.state.as_deref(), &DataDir::new(&self.data)).map_err(|e| anyhow::anyhow!("--state/${}: {e}", StateUrl::ENV))
    }
}

/// How a stage shares its work with other workers of the same stage.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkerArgs {
    /// Run beside other workers of this stage on the same crawl (other
    /// processes, or other hosts sharing the data directory): the data
    /// directory is not locked, and each worker claims its threads in
    /// batches under a lease. Always on when --state is PostgreSQL.
    #[arg(long)]
    pub shared: bool,
    /// Seconds a worker's claim lasts unrenewed: a worker that dies holds
    /// its threads this long, then the others take them.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_secs: u64,
    /// Threads claimed at a time.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub claim_batch: u64,
}

impl WorkerArgs {
    /// Whether this worker shares `state` with others.
    pub fn shared(&self, state: &StateUrl) -> bool {
        self.shared || state.is_shared()
    }

    pub fn claims(&self) -> Claims {
        Claims { lease: Duration::from_secs(self.lease_secs), batch: self.claim_batch as usize }
    }
}

/// `-q`, declared once for every binary with a progress bar.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct QuietArgs {
    /// No progress bar and no line per thread or page: only the summary,
    /// the failures grouped by reason, and errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The flags every stage binary (discover, download, extract, index)
/// takes, declared here once and read by [`StageArgs::begin`].
#[derive(clap::Args, Debug, Clone)]
pub struct StageArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub worker: WorkerArgs,
    #[command(flatten)]
    pub quiet: QuietArgs,
}

/// `--retry-failed`, for the stages that mark threads failed (all but
/// discover); read only by [`RetryArgs::apply`].
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct RetryArgs {
    /// First put the threads this stage marked failed back in its queue
    /// (after fixing what made them fail), then run as usual.
    #[arg(long)]
    pub retry_failed: bool,
}

impl RetryArgs {
    /// Puts the threads `stage` failed (of `site`, or all) back in its
    /// queue when asked (or when `also`, e.g. extract's `--again`), saying
    /// how many in one line.
    pub fn apply(&self, store: &Store, stage: Stage, site: Option<&SiteId>, also: bool) -> anyhow::Result<usize> {
        if !(self.retry_failed || also) {
            return Ok(0);
        }
        let n = store.retry_failed(site.map(SiteId::as_str), Some(stage))?;
        if n > 0 {
            eprintln!("{}: {n} threads that failed at {stage} are back in the queue", binary(stage));
        }
        Ok(n)
    }
}

/// What [`StageArgs::start`] gives a stage: where the crawl state is, the
/// good sites, and whether a site file was broken.
pub struct Start {
    pub state: StateUrl,
    pub sites: Vec<Site>,
    pub bad_site_file: bool,
}

/// A stage's binary, as its lines name it.
pub fn binary(stage: Stage) -> &'static str {
    match stage {
        Stage::Discover => "luntan-discover",
        Stage::Download => "luntan-download",
        Stage::Extract => "luntan-extract",
        Stage::Index => "luntan-index",
    }
}

impl StageArgs {
    /// Logging at the level `-q` asks for; call first.
    pub fn init(&self) {
        init_tracing(self.quiet.quiet);
    }

    pub fn data_dir(&self) -> DataDir {
        DataDir::new(&self.data.data)
    }

    /// Starts a stage binary that reads site files: logging, the crawl
    /// state's address (when unusable, the exit code after saying why) and
    /// the site files.
    pub fn start(&self, stage: Stage) -> Result<Start, std::process::ExitCode> {
        self.init();
        let state = self.data.state().map_err(|e| exit_code(binary(stage), Err(e), false))?;
        let (sites, bad_site_file) = load_sites(&self.data_dir(), self.data.site());
        Ok(Start { state, sites, bad_site_file })
    }

    /// The forum `--site` names, if any.
    pub fn site(&self) -> Option<&SiteId> {
        self.data.site.as_ref()
    }

    /// Whether this worker shares `state` with others (`--shared`, or a
    /// PostgreSQL state).
    pub fn shared(&self, state: &StateUrl) -> bool {
        self.worker.shared(state)
    }

    /// Begins `stage` as every binary does: the stage contract's lock (none
    /// for a worker sharing `state`) and temp-file sweep, how threads are
    /// claimed, a stop that Ctrl-C sets, and a progress bar unless `-q` (or
    /// `no_bar`).
    pub fn begin(&self, stage: Stage, state: &StateUrl, no_bar: bool) -> anyhow::Result<(Arc<StageRun>, Arc<Bar>)> {
        let data = self.data_dir();
        let run = match self.worker.shared(state) {
            true => StageRun::begin_shared(&data, stage, Stop::new())?,
            false => StageRun::begin(&data, stage, Stop::new())?,
        };
        let run = run.with_claims(self.worker.claims());
        let bar = Bar::new(stage.as_str(), self.quiet.quiet || no_bar);
        let run = run.with_stop(Stop::on_ctrl_c(binary(stage))).with_progress(bar.clone());
        Ok((Arc::new(run), bar))
    }
}

impl StageArgs {
    /// One polite fetcher per forum; a worker sharing the crawl passes every
    /// forum's requests through its gate in the crawl state, so all workers
    /// together keep the site file's concurrency and delay. Made outside the
    /// async runtime: a shared gate opens its store connection, which blocks.
    pub fn fetchers(&self, sites: &[Site], state: &StateUrl) -> anyhow::Result<Vec<Arc<Fetcher>>> {
        let mut out = Vec::with_capacity(sites.len());
        for site in sites {
            let mut fetcher = Fetcher::new(Arc::new(site.clone()))?;
            if self.shared(state) {
                fetcher = fetcher.share_politeness(state, self.worker.claims().lease)?;
            }
            out.push(Arc::new(fetcher));
        }
        Ok(out)
    }
}

/// Prints a stage's failures grouped by cause (see
/// [`luntan_core::state::group_failures`]), most frequent first: one line
/// each, with the count and the first threads.
pub fn report_failures(stage: Stage, report: &StageReport) {
    for g in report.failure_groups(stage) {
        let n = g.threads;
        eprintln!("{}: {n} {} failed: {} ({})", binary(stage), if n == 1 { "thread" } else { "threads" }, g.cause, g.examples_line());
    }
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

/// A stage's progress as a bar on stderr when it is a terminal (and the
/// stage is not `--quiet`); hidden otherwise.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new(what: &str, quiet: bool) -> Arc<Bar> {
        if quiet || !std::io::stderr().is_terminal() {
            return Arc::new(Bar(ProgressBar::hidden()));
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{prefix:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta}").expect("static template").progress_chars("=> "));
        bar.set_prefix(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        Arc::new(Bar(bar))
    }

    /// Clears the bar before the summary is printed.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Progress for Bar {
    fn grow(&self, n: u64) {
        self.0.inc_length(n);
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

/// Opens the crawl state, naming it when it cannot be opened.
pub fn open_store(state: &StateUrl) -> anyhow::Result<Store> {
    Store::connect(state).map_err(|e| anyhow::anyhow!("cannot open the crawl state: {e}"))
}

/// Loads the site files under `<data>/sites`, printing one line per broken
/// file. Returns the good sites and whether any file was broken.
pub fn load_sites(data: &DataDir, only: Option<&str>) -> (Vec<Site>, bool) {
    let (sites, errors) = Site::load_all(&data.sites_dir(), only);
    for e in &errors {
        eprintln!("{e}");
    }
    (sites, !errors.is_empty())
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
