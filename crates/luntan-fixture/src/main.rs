//! `luntan-fixture`: serve the fake forums, print their truth, or write their site files.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use luntan_fixture::{serve, write_site_files, Fixture, FixtureConfig, ForumKind};

/// A deterministic fake forum server (Discuz!/GBK under /dz/, phpBB/Big5 under
/// /phpbb/, a modern UTF-8 forum under /bbs/) for testing luntan.
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
        /// Write a site file per forum (dz.xml, phpbb.xml, bbs.xml) pointing at this server into DIR.
        #[arg(long, value_name = "DIR")]
        sites_out: Option<PathBuf>,
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
    },
    /// Print the truth (every board, thread and post the pages show) as JSON.
    Truth {
        #[command(flatten)]
        model: ModelArgs,
        /// Indent the JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Write site files for a server running at --base, then exit.
    Sites {
        /// The server's base URL, e.g. http://127.0.0.1:8080/.
        #[arg(long)]
        base: String,
        /// Directory to write dz.xml, phpbb.xml and bbs.xml into.
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
    /// Forums to serve, comma-separated site ids (dz, phpbb, bbs); default all.
    #[arg(long, value_delimiter = ',', value_parser = parse_forum)]
    forums: Vec<ForumKind>,
}

fn parse_forum(s: &str) -> Result<ForumKind, String> {
    ForumKind::from_site_id(s.trim()).ok_or_else(|| format!("unknown forum {s:?} (expected dz, phpbb or bbs)"))
}

impl ModelArgs {
    fn config(&self) -> FixtureConfig {
        FixtureConfig {
            seed: self.seed,
            threads: self.threads,
            boards: usize::from(self.boards),
            forums: if self.forums.is_empty() { ForumKind::ALL.to_vec() } else { self.forums.clone() },
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
        Command::Serve { addr, sites_out, model, latency_ms, flaky_percent, no_gzip } => {
            let cfg = FixtureConfig {
                latency: Duration::from_millis(latency_ms),
                flaky_percent,
                gzip: !no_gzip,
                ..model.config()
            };
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the runtime: {e}"))?;
            runtime.block_on(serve_until_signal(cfg, addr, sites_out))
        }
        Command::Truth { model, pretty } => {
            let truth = Fixture::new(model.config()).truth();
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let written = if pretty { serde_json::to_writer_pretty(&mut out, &truth) } else { serde_json::to_writer(&mut out, &truth) };
            written.map_err(|e| e.to_string())?;
            writeln!(out).and_then(|()| out.flush()).map_err(|e| e.to_string())
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

async fn serve_until_signal(cfg: FixtureConfig, addr: SocketAddr, sites_out: Option<PathBuf>) -> Result<(), String> {
    // Handlers go in before the "listening" line: a script may send SIGTERM
    // the moment it reads it, and an unhandled SIGTERM kills without cleanup.
    let stop = shutdown_signal()?;
    let server = serve(cfg, addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    if let Some(dir) = sites_out {
        server.write_site_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    {
        // Scripts wait for this exact line, so write it in one go and flush.
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {}", server.base_url()).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
    }
    stop.await;
    server.shutdown().await;
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
