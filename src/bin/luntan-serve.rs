//! `luntan-serve`: the search page for people and the JSON API, over every
//! forum's index, read-only.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

/// Serves a search page (HTML, usable without JavaScript) and a JSON API
/// (`/api/search`, `/api/thread/{site}/{id}`, `/api/trend`, `/api/status`,
/// `/api/openapi.json`, `/feed.atom`) over every `<site>.index`. New commits
/// and new indexes are picked up without a restart.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Directory holding the `<site>.index` directories.
    #[arg(long, value_name = "DIR", default_value = "index")]
    index_dir: PathBuf,
    /// Data directory: crawl state (for /api/status and thread rows), the
    /// thread XML and the saved pages.
    #[arg(long, value_name = "DIR", default_value = "data", alias = "data-dir")]
    data: PathBuf,
    /// Address to listen on. Anything but loopback needs --token (or
    /// LUNTAN_SERVE_TOKEN) or --public.
    #[arg(long, default_value = "127.0.0.1:7700")]
    addr: SocketAddr,
    /// Every request must carry this token (`Authorization: Bearer …`, or
    /// `?token=…` once, which sets a cookie). Default: $LUNTAN_SERVE_TOKEN.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Serve a non-loopback address without a token: everyone who can reach
    /// it can search the archive.
    #[arg(long)]
    public: bool,
    /// A host name the server answers to (repeatable), e.g. the name a
    /// reverse proxy passes on. IP addresses and `localhost` are always
    /// answered; any other `Host` gets a 400, so a web page cannot reach a
    /// loopback server by pointing its own name at 127.0.0.1 (DNS rebinding).
    #[arg(long, value_name = "NAME")]
    public_host: Vec<String>,
}

/// Environment variable read when `--token` is not given.
const TOKEN_ENV: &str = "LUNTAN_SERVE_TOKEN";

/// What the server will do, checked before anything is opened.
#[derive(Debug)]
struct Config {
    addr: SocketAddr,
    serve: luntan_serve::ServeConfig,
}

impl Config {
    fn check(args: Args, env_token: Option<String>) -> Result<Config, String> {
        let token = args.token.or(env_token).filter(|t| !t.is_empty());
        if let Some(t) = &token {
            if t.len() < 16 {
                return Err("the token must be at least 16 characters".into());
            }
        }
        if !args.addr.ip().is_loopback() && token.is_none() && !args.public {
            return Err(format!("{} is not a loopback address: give --token (or {TOKEN_ENV}), or --public to serve it to anyone", args.addr));
        }
        if args.index_dir.exists() && !args.index_dir.is_dir() {
            return Err(format!("--index-dir {}: not a directory", args.index_dir.display()));
        }
        for name in &args.public_host {
            if url::Host::parse(name).is_err() {
                return Err(format!("--public-host {name:?}: give a host name alone, without scheme, port or path"));
            }
        }
        let mut serve = luntan_serve::ServeConfig::new(args.index_dir, args.data);
        serve.token = token;
        serve.public_hosts = args.public_host;
        Ok(Config { addr: args.addr, serve })
    }
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    luntan::cli::init_tracing(false);
    let cfg = match Config::check(args, std::env::var(TOKEN_ENV).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("luntan-serve: {e}");
            return ExitCode::from(2);
        }
    };
    match serve(cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("luntan-serve: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve(cfg: Config) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    rt.block_on(async {
        // jieba's dictionary loads before the first query needs it.
        tokio::task::spawn_blocking(luntan_search::analysis::warm_up).await.context("loading jieba")?;
        let listener = tokio::net::TcpListener::bind(cfg.addr).await.with_context(|| format!("listening on {}", cfg.addr))?;
        let addr = listener.local_addr()?;
        let guard = if cfg.serve.token.is_some() { " (token required)" } else { "" };
        eprintln!("luntan-serve: http://{addr}/{guard}, indexes in {}", cfg.serve.index_dir.display());
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        luntan_serve::serve_until(listener, cfg.serve, shutdown).await.context("serving")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Args {
        Args::parse_from(std::iter::once("luntan-serve").chain(extra.iter().copied()))
    }

    #[test]
    fn a_public_address_needs_a_token_or_public() {
        let e = Config::check(args(&["--addr", "0.0.0.0:7700"]), None).unwrap_err();
        assert!(e.contains("--token") && e.contains("--public"), "{e}");
        assert!(Config::check(args(&["--addr", "0.0.0.0:7700", "--public"]), None).is_ok());
        let t = "0123456789abcdef";
        assert_eq!(Config::check(args(&["--addr", "0.0.0.0:7700", "--token", t]), None).unwrap().serve.token.as_deref(), Some(t));
        assert_eq!(Config::check(args(&["--addr", "[::]:7700"]), Some(t.into())).unwrap().serve.token.as_deref(), Some(t));
        assert!(Config::check(args(&["--addr", "0.0.0.0:7700"]), Some(String::new())).is_err());
        assert!(Config::check(args(&["--addr", "0.0.0.0:7700", "--token", "short"]), None).is_err());
        assert!(Config::check(args(&[]), None).unwrap().serve.token.is_none());
        assert!(Config::check(args(&["--addr", "[::1]:0"]), None).is_ok());
    }

    #[test]
    fn a_public_host_is_a_bare_name() {
        let c = Config::check(args(&["--public-host", "search.example.org", "--public-host", "Archive.Example"]), None).unwrap();
        assert_eq!(c.serve.public_hosts, ["search.example.org", "Archive.Example"]);
        for bad in ["", "http://x.org", "x.org:80", "x.org/path", "u@x.org"] {
            let e = Config::check(args(&["--public-host", bad]), None).unwrap_err();
            assert!(e.contains("--public-host"), "{bad}: {e}");
        }
    }
}
