//! `luntan-fixture`: serve the fake forums, print their truth, or write their site files.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use luntan_fixture::{serve, write_site_files, Fixture, FixtureConfig, ForumKind, Hostility, PermanentFault, TransientFault};

/// A deterministic fake forum server (Discuz!/GBK under /dz/, phpBB/Big5 under
/// /phpbb/, a modern UTF-8 forum under /bbs/; on request Discuz! X with
/// rewritten URLs under /dzx/, a PHPWind-style forum under /nx/ and a
/// NodeBB-style one as served without JavaScript under /md/) for testing luntan.
#[derive(Parser)]
#[command(name = "luntan-fixture", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the forums until SIGTERM or Ctrl-C. Prints one line,
    /// `listening on http://HOST:PORT/`, once it accepts connections.
    Serve {
        /// Address to listen on; port 0 picks a free port.
        #[arg(long, default_value = "127.0.0.1:0")]
        addr: SocketAddr,
        /// Write a site file per forum served (dz.xml, phpbb.xml, bbs.xml; dzx.xml, nx.xml, md.xml) pointing at this server into DIR.
        #[arg(long, value_name = "DIR")]
        sites_out: Option<PathBuf>,
        /// With --sites-out, also write mb.xml and xhr.xml: the microblog and the
        /// XHR forum (always served, under /mb/ and /xhr/), read in protocol mode,
        /// and xhr-browser.xml and mb-browser.xml: both read in Chromium (browser mode),
        /// and news.xml: the news site under /news/, articles in HTML, comments as JSON (a hybrid site),
        /// cw.xml: the comment-widget news site under /cw/ and st.xml: the forum under /st/ whose
        /// threads load over a WebSocket, both read in Chromium.
        #[arg(long)]
        microblog: bool,
        #[command(flatten)]
        model: ModelArgs,
        /// Delay every response by this many milliseconds.
        #[arg(long, default_value_t = 0, value_name = "MS")]
        latency_ms: u64,
        /// Percentage of page URLs that answer 503 on their first request (for retry tests).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
        flaky_percent: u8,
        /// Never gzip responses, even when the client accepts it.
        #[arg(long)]
        no_gzip: bool,
        /// On shutdown, write every request received (JSON lines: seq, start_us,
        /// end_us, host, path, status, fault) to FILE, for politeness checks.
        #[arg(long, value_name = "FILE")]
        request_log: Option<PathBuf>,
        /// Add posts while serving (new threads and replies), this many per second.
        #[arg(long, default_value_t = 0.0, value_name = "N")]
        posts_per_sec: f64,
    },
    /// Print the truth (every board, thread and post the pages show) as JSON.
    Truth {
        #[command(flatten)]
        model: ModelArgs,
        /// Indent the JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Print one of the site files no --sites-out writes, for a server
    /// running at --base: news-browser (the news site in Chromium, replies
    /// nested in their comments) or cw-hybrid (the comment-widget site as a
    /// hybrid site, replies from their own endpoint). Both name their site
    /// as the file --sites-out writes for it does (news, cw).
    SiteFile {
        /// The server's base URL, e.g. http://127.0.0.1:8080/.
        #[arg(long)]
        base: String,
        #[arg(value_parser = ["news-browser", "cw-hybrid"])]
        name: String,
    },
    /// Write site files for a server running at --base, then exit.
    Sites {
        /// The server's base URL, e.g. http://127.0.0.1:8080/.
        #[arg(long)]
        base: String,
        /// Directory to write the site files (dz.xml, phpbb.xml, bbs.xml; dzx.xml, nx.xml, md.xml as --forums says) into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[command(flatten)]
        model: ModelArgs,
    },
}

/// What to generate; the same values always give the same pages.
#[derive(Args)]
struct ModelArgs {
    /// Seed of everything generated.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads per forum.
    #[arg(long, default_value_t = 300)]
    threads: usize,
    /// Boards per forum (1 to 64).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    boards: u16,
    /// Forums to serve, comma-separated site ids: dz, phpbb, bbs (the
    /// default three), dzx (Discuz! X, rewritten URLs, GB18030), nx
    /// (PHPWind-style, UTF-8) and md (NodeBB-style without JavaScript,
    /// UTF-8), which are served only when named; `default` stands for the
    /// three, `all` for all six.
    #[arg(long, value_delimiter = ',', value_parser = parse_forums)]
    forums: Vec<Vec<ForumKind>>,
    #[command(flatten)]
    hostile: HostileArgs,
    /// Make the first board of each forum mostly about one topic (考研), with
    /// the truth marking on-topic threads and the site files carrying a <focus>.
    #[arg(long)]
    topics: bool,
    /// One thread in five up to 120 posts (12 pages) instead of 40.
    #[arg(long)]
    long_threads: bool,
}

/// Hostile mode: `--hostile PERCENT` turns every fault and trap on; the
/// finer flags change one knob (and work alone too).
#[derive(Args)]
struct HostileArgs {
    /// Percentage of URLs that fail transiently (their first 1-2 requests),
    /// plus unservable threads, traversal and off-host links, wrong charsets,
    /// invalid bytes and big pages. The truth marks unservable threads.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    hostile: Option<u8>,
    /// Seed of which URLs fail and how (default 1).
    #[arg(long, value_name = "N")]
    hostile_seed: Option<u64>,
    /// Transient faults to draw from, comma-separated: 500,502,503,429,reset,stall,truncate.
    #[arg(long, value_delimiter = ',', value_parser = parse_transient)]
    faults: Option<Vec<TransientFault>>,
    /// A faulty URL fails its first 1..=N requests (default 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=20))]
    max_failures: Option<u8>,
    /// Retry-After a 429 carries, in seconds (default 1).
    #[arg(long, value_name = "SECS")]
    retry_after: Option<u64>,
    /// How long a stall sends nothing before resetting the connection (default 5000).
    #[arg(long, value_name = "MS")]
    stall_ms: Option<u64>,
    /// Permanent faults, one thread per forum each, comma-separated, or `none`:
    /// always-500, redirect-loop, off-host-redirect, gzip-bomb, huge-page, huge-chunked, later-page-500,
    /// robots-disallowed.
    #[arg(long, value_delimiter = ',', value_parser = parse_permanent)]
    permanent: Option<Vec<Option<PermanentFault>>>,
    /// Leave out the traversal, off-host and javascript: links and crafted ids.
    #[arg(long)]
    no_hostile_links: bool,
    /// Base URL of the "other host" off-host links and redirects point at.
    #[arg(long, value_name = "URL")]
    other_host: Option<String>,
    /// Percentage of thread pages served with a wrong charset.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    mislabel_percent: Option<u8>,
    /// Percentage of thread pages with bytes invalid in their encoding.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    invalid_bytes_percent: Option<u8>,
    /// Percentage of threads whose first page is padded to several megabytes.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    big_percent: Option<u8>,
    /// Add `Crawl-delay` (milliseconds, written in seconds) to robots.txt.
    #[arg(long, value_name = "MS")]
    crawl_delay_ms: Option<u64>,
}

fn parse_transient(s: &str) -> Result<TransientFault, String> {
    let names: Vec<&str> = TransientFault::ALL.iter().map(|f| f.name()).collect();
    TransientFault::from_name(s.trim()).ok_or_else(|| format!("unknown fault {s:?} (expected one of {})", names.join(", ")))
}

fn parse_permanent(s: &str) -> Result<Option<PermanentFault>, String> {
    if s.trim() == "none" {
        return Ok(None);
    }
    let names: Vec<&str> = PermanentFault::ALL.iter().map(|f| f.name()).collect();
    PermanentFault::from_name(s.trim()).map(Some).ok_or_else(|| format!("unknown permanent fault {s:?} (expected none or one of {})", names.join(", ")))
}

impl HostileArgs {
    fn hostility(&self) -> Hostility {
        let mut h = match self.hostile {
            Some(p) => Hostility::percent(p),
            None => Hostility::default(),
        };
        if let Some(seed) = self.hostile_seed {
            h.seed = seed;
        }
        if let Some(f) = &self.faults {
            h.faults = f.clone();
            if self.hostile.is_none() {
                // Naming faults without a share would mean none happen.
                h.transient_percent = 10;
            }
        }
        if let Some(n) = self.max_failures {
            h.max_failures = n;
        }
        if let Some(s) = self.retry_after {
            h.retry_after = Duration::from_secs(s);
        }
        if let Some(ms) = self.stall_ms {
            h.stall = Duration::from_millis(ms);
        }
        if let Some(p) = &self.permanent {
            h.permanent = p.iter().flatten().copied().collect();
        }
        if self.no_hostile_links {
            h.links = false;
        }
        if let Some(o) = &self.other_host {
            h.other_host = o.clone();
        }
        if let Some(p) = self.mislabel_percent {
            h.mislabel_percent = p;
        }
        if let Some(p) = self.invalid_bytes_percent {
            h.invalid_bytes_percent = p;
        }
        if let Some(p) = self.big_percent {
            h.big_percent = p;
        }
        if let Some(ms) = self.crawl_delay_ms {
            h.crawl_delay = Some(Duration::from_millis(ms));
        }
        h
    }
}

fn parse_forums(s: &str) -> Result<Vec<ForumKind>, String> {
    match s.trim() {
        "default" => Ok(ForumKind::ALL.to_vec()),
        "all" => Ok(ForumKind::EVERY.to_vec()),
        id => ForumKind::from_site_id(id).map(|k| vec![k]).ok_or_else(|| format!("unknown forum {s:?} (expected dz, phpbb, bbs, dzx, nx, md, default or all)")),
    }
}

impl ModelArgs {
    fn config(&self) -> FixtureConfig {
        FixtureConfig {
            seed: self.seed,
            threads: self.threads,
            boards: usize::from(self.boards),
            forums: if self.forums.is_empty() { ForumKind::ALL.to_vec() } else { self.forums.concat() },
            hostility: self.hostile.hostility(),
            topics: self.topics.then(luntan_fixture::Topics::default),
            long_threads: self.long_threads,
            ..FixtureConfig::default()
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("luntan-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Serve { addr, sites_out, microblog, model, latency_ms, flaky_percent, no_gzip, request_log, posts_per_sec } => {
            let cfg = FixtureConfig {
                latency: Duration::from_millis(latency_ms),
                flaky_percent,
                gzip: !no_gzip,
                activity: luntan_fixture::Activity { posts_per_sec, ..Default::default() },
                ..model.config()
            };
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| format!("cannot start the runtime: {e}"))?;
            runtime.block_on(serve_until_signal(cfg, addr, sites_out, microblog, request_log))
        }
        Command::Truth { model, pretty } => {
            let truth = Fixture::new(model.config()).truth();
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let written = if pretty { serde_json::to_writer_pretty(&mut out, &truth) } else { serde_json::to_writer(&mut out, &truth) };
            written.map_err(|e| e.to_string())?;
            writeln!(out).and_then(|()| out.flush()).map_err(|e| e.to_string())
        }
        Command::SiteFile { base, name } => {
            let text = match name.as_str() {
                "news-browser" => luntan_fixture::news_browser_site_file(&base),
                _ => luntan_fixture::widget::widget_hybrid_site_file(&base),
            };
            print!("{text}");
            Ok(())
        }
        Command::Sites { base, out, model } => {
            let paths = write_site_files(&model.config(), &base, &out).map_err(|e| format!("{}: {e}", out.display()))?;
            for p in paths {
                println!("{}", p.display());
            }
            Ok(())
        }
    }
}

async fn serve_until_signal(
    cfg: FixtureConfig,
    addr: SocketAddr,
    sites_out: Option<PathBuf>,
    microblog: bool,
    request_log: Option<PathBuf>,
) -> Result<(), String> {
    // Handlers go in before the "listening" line: a script may send SIGTERM
    // the moment it reads it, and an unhandled SIGTERM kills without cleanup.
    let stop = shutdown_signal()?;
    let server = serve(cfg, addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    if let Some(dir) = sites_out {
        server.write_site_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if microblog {
            server.write_microblog_site_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            server.write_news_site_file(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            // The XHR forum and the microblog once more, read in a browser (S4's event-driven mode).
            for (id, text) in [
                ("xhr-browser", luntan_fixture::browser_site_file(&server.base_url())),
                ("mb-browser", luntan_fixture::microblog_browser_site_file(&server.base_url())),
                // The comment-widget news site and the forum whose threads load over a WebSocket.
                ("cw", luntan_fixture::widget::widget_browser_site_file(&server.base_url())),
                ("st", luntan_fixture::socket::socket_browser_site_file(&server.base_url())),
            ] {
                let path = dir.join(format!("{id}.xml"));
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    {
        // Scripts wait for this exact line, so write it in one go and flush.
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.base_url()).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    }
    stop.await;
    let log = request_log.as_ref().map(|_| server.requests_jsonl());
    server.shutdown().await;
    if let (Some(path), Some(log)) = (request_log, log) {
        std::fs::write(&path, log).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Registers for SIGTERM and SIGINT (Ctrl-C) now; the future completes on either.
#[cfg(unix)]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("cannot handle SIGTERM: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("cannot handle SIGINT: {e}"))?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
