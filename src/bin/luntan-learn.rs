//! `luntan-learn`: a working site file from a forum's home URL.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use luntan::cli;
use luntan_core::contract::Progress;
use luntan_core::ids::SiteId;
use luntan_learn::sample::{walk, SampleConfig};
use luntan_learn::{check, learn::learn, Learned};
use url::Url;

/// Learn a forum's site file from its home page, with no regex written by
/// hand: a bounded sample of the forum is read politely (robots.txt, the
/// delay, at most --max-requests requests), the thread and board-list
/// pages are told apart by their layout and links, their URL patterns
/// and pagers are learned from the URLs, and the posts' and rows'
/// selectors from the pages. The file is loaded back and checked on the
/// sample before it is written; what could not be learned is named in a
/// comment in it and on stderr. Exit status 2 when no usable site file
/// could be made.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The forum's home page (the page that links to its boards).
    url: String,
    /// The site id (default: the first path segment or the host's first label).
    #[arg(long, value_name = "ID")]
    id: Option<SiteId>,
    /// The forum's display name (default: learned from the page titles).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Data directory: the site file goes to DATA/sites/ID.xml, where the
    /// other stages read it.
    #[arg(long, value_name = "DIR", default_value = "data", alias = "data-dir")]
    data: PathBuf,
    /// Write the site file here instead (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Requests at most, robots.txt and redirects included.
    #[arg(long, value_name = "N", default_value_t = 300, value_parser = clap::value_parser!(u64).range(10..=5000))]
    max_requests: u64,
    /// Pages of one kind of URL at most.
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..=1000))]
    per_kind: u64,
    /// Milliseconds between two requests (written into the site file too).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    delay_ms: u64,
    /// Print each learned rule with the URLs or elements it came from.
    #[arg(long)]
    explain: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// [`Args`], checked.
struct Config {
    home: Url,
    id: String,
    out: Option<PathBuf>,
    sample: SampleConfig,
}

impl Config {
    fn from(args: &Args) -> anyhow::Result<Config> {
        let home = Url::parse(args.url.trim()).map_err(|e| anyhow::anyhow!("{}: not a URL: {e}", args.url))?;
        if !matches!(home.scheme(), "http" | "https") || home.host_str().is_none() {
            anyhow::bail!("{home}: not an http(s) URL");
        }
        let id = match &args.id {
            Some(id) => id.as_str().to_owned(),
            None => {
                let guess = home
                    .path_segments()
                    .and_then(|mut s| s.next().filter(|p| !p.is_empty() && !p.contains('.')).map(str::to_owned))
                    .or_else(|| home.host_str().and_then(|h| h.split('.').find(|l| *l != "www" && *l != "bbs").map(str::to_owned)))
                    .unwrap_or_else(|| "forum".into());
                guess.parse::<SiteId>().map_err(|e| anyhow::anyhow!("{home}: no usable site id in the URL ({e}); give one with --id"))?.as_str().to_owned()
            }
        };
        let out = match &args.out {
            Some(p) if p.as_os_str() == "-" => None,
            Some(p) => Some(p.clone()),
            None => Some(args.data.join("sites").join(format!("{id}.xml"))),
        };
        let sample = SampleConfig {
            home: home.clone(),
            max_requests: args.max_requests as usize,
            per_kind: args.per_kind as usize,
            delay: Duration::from_millis(args.delay_ms),
        };
        Ok(Config { home, id, out, sample })
    }
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    cli::init_tracing(args.quiet);
    let cfg = match Config::from(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("luntan-learn: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bar = cli::Bar::new("learn", args.quiet);
    bar.grow(cfg.sample.max_requests as u64);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let mut done = 0;
    let sample = rt.block_on(walk(&cfg.sample, |n, _| {
        bar.advance(n.saturating_sub(done));
        done = n;
    }));
    bar.finish();
    let sample = match sample {
        Ok(s) => s,
        Err(e) => {
            eprintln!("luntan-learn: {e}");
            return ExitCode::from(2);
        }
    };
    // Links the forum does not serve are common (lookalikes, login
    // forms); a few lines say which, not one per URL.
    for (_, why) in sample.failed.iter().take(3) {
        eprintln!("luntan-learn: {why}");
    }
    if sample.failed.len() > 3 {
        eprintln!("luntan-learn: {}: {} more URLs could not be read", cfg.home, sample.failed.len() - 3);
    }
    let mut what = Learned::new(&cfg.id, args.name.as_deref(), cfg.home.clone(), cfg.sample.delay);
    what.pages = sample.pages.len();
    what.requests = sample.requests;
    let mut learned = match learn(&sample, what) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("luntan-learn: {}: {e}", cfg.home);
            return ExitCode::from(2);
        }
    };
    let checked = match check(&learned.site_file(), &sample) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("luntan-learn: {}: {e}", cfg.home);
            return ExitCode::from(2);
        }
    };
    // What the check found wanting goes into the file's comment too.
    learned.missing.extend(checked.warnings());
    let text = learned.site_file();
    if args.explain {
        print!("{}", learned.explain());
    }
    for m in &learned.missing {
        eprintln!("luntan-learn: {}: {m}", cfg.home);
    }
    if let Some(why) = checked.unusable() {
        eprintln!("luntan-learn: {}: no usable site file: {why}", cfg.home);
        return ExitCode::from(2);
    }
    match &cfg.out {
        None => print!("{text}"),
        Some(path) => {
            if let Err(e) = write_atomically(path, &text) {
                eprintln!("luntan-learn: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    eprintln!(
        "luntan-learn: {}: {} requests, {} pages; {} boards, {} list pages ({} threads), {} thread pages ({} posts); {} things to check{}",
        cfg.id,
        sample.requests,
        sample.pages.len(),
        checked.boards,
        checked.lists,
        checked.threads,
        checked.thread_pages,
        checked.posts,
        learned.missing.len(),
        cfg.out.as_ref().map(|p| format!("; wrote {}", p.display())).unwrap_or_default()
    );
    ExitCode::SUCCESS
}

/// Temp file, fsync, rename: a reader never sees half a site file.
fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("site.xml")));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
