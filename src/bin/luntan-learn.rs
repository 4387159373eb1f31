//! `luntan-learn`: a working site file from a forum's home URL.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use luntan::cli;
use luntan_core::contract::Progress;
use luntan_core::ids::SiteId;
use luntan_learn::diagnose::diagnose;
use luntan_learn::learn::{auto_posts, learn, learn_partial};
use luntan_learn::sample::{walk, SampleConfig};
use luntan_learn::{check, Learned};
use url::Url;

/// Learn a forum's site file from its home page, with no regex written by
/// hand: a bounded sample of the forum is read politely (robots.txt, the
/// delay, at most --max-requests requests), the thread and board-list
/// pages are told apart by their layout and links, their URL patterns
/// and pagers are learned from the URLs, and the posts' and rows'
/// selectors from the pages. Where article pages show no comments but
/// hold scripts, a few are drawn in Chromium (four articles at most,
/// within --max-requests) and the JSON API their comments come from is
/// learned as a <comments>. The file is loaded back and checked on the
/// sample before it is written; what could not be learned is named in a
/// comment in it and on stderr. Exit status 2 when no usable site file
/// could be made (with --partial, also when the file written is partial).
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
    /// Requests at most, robots.txt, redirects and the articles drawn in
    /// Chromium included (no article is begun once they are spent).
    #[arg(long, value_name = "N", default_value_t = 300, value_parser = clap::value_parser!(u64).range(10..=5000))]
    max_requests: u64,
    /// Pages of one kind of URL at most.
    #[arg(long, value_name = "N", default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..=1000))]
    per_kind: u64,
    /// Milliseconds between two requests (written into the site file too).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    delay_ms: u64,
    /// Print each learned rule with the URLs or elements it came from, and
    /// the kinds of URL read; when learning fails, what was read and what
    /// each step weighed (thread shapes, pager families, list pages) and
    /// why it failed.
    #[arg(long)]
    explain: bool,
    /// When the learned file does not work as it is, write it anyway, for
    /// finishing by hand: what is missing is named at its top (exit status
    /// still 2).
    #[arg(long)]
    partial: bool,
    /// Do not draw article pages in Chromium to see what their scripts load
    /// (comments fetched as JSON); without it, a few article pages that
    /// hold scripts are drawn, every request through the same politeness,
    /// when Chromium is on this machine.
    #[arg(long)]
    no_browser: bool,
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
    // With --explain, what the sample holds and what each step weighed:
    // after the rules when learning succeeds, in their place when it fails.
    let diagnosis = args.explain.then(|| diagnose(&sample));
    let explain_failure = |why: &str| {
        if let Some(d) = &diagnosis {
            let mut d = d.clone();
            d.failure.get_or_insert_with(|| why.to_owned());
            print!("{d}");
        }
    };
    let learned = if args.partial { learn_partial(&sample, what) } else { learn(&sample, what).map(|l| (l, Vec::new())) };
    let (mut learned, failed_steps) = match learned {
        Ok(l) => l,
        Err(e) => {
            explain_failure(&e.to_string());
            eprintln!("luntan-learn: {}: {e}", cfg.home);
            return ExitCode::from(2);
        }
    };
    // Comments a script loads are in no page the sample read.
    if !args.no_browser {
        rt.block_on(luntan_learn::comments::learn_comments(&sample, &mut learned, cfg.sample.max_requests as u64));
    }
    let mut checked = match check(&learned.site_file(), &sample) {
        Ok(c) => c,
        Err(e) => {
            explain_failure(&e.to_string());
            eprintln!("luntan-learn: {}: {e}", cfg.home);
            return ExitCode::from(2);
        }
    };
    // A partial file whose post rules find nothing may still read the
    // posts through the template.
    let auto = |l: &Learned| l.thread.iter().any(|f| f.attr == "post" && f.css == "auto");
    if args.partial && checked.posts == 0 && checked.thread_pages > 0 && !auto(&learned) {
        let mut thread: Vec<_> = learned.thread.iter().filter(|f| f.attr == "title").cloned().collect();
        thread.push(auto_posts());
        let before = std::mem::replace(&mut learned.thread, thread);
        match check(&learned.site_file(), &sample) {
            Ok(c) => {
                learned.missing.push("post: the learned rules find no post on the thread pages read; posts are found by the template (post=\"auto\")".into());
                checked = c;
            }
            Err(_) => learned.thread = before,
        }
    }
    // What the check found wanting goes into the file's comment too.
    learned.missing.extend(checked.warnings());
    let unusable = checked.unusable();
    if let Some(why) = unusable.as_ref().filter(|_| args.partial) {
        learned.missing.push(format!("not usable as it is: {why}"));
    }
    let text = learned.site_file();
    if args.explain {
        print!("{}", learned.explain());
        if let Some(d) = &diagnosis {
            if unusable.is_some() || !failed_steps.is_empty() {
                explain_failure(&format!("no usable site file: {}", unusable.as_deref().unwrap_or("some steps failed")));
            } else {
                print!("{}", d.sampled());
            }
        }
    }
    for m in &learned.missing {
        eprintln!("luntan-learn: {}: {m}", cfg.home);
    }
    let partial = unusable.is_some() || !failed_steps.is_empty();
    if let (Some(why), false) = (&unusable, args.partial) {
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
    if partial {
        eprintln!(
            "luntan-learn: {}: wrote a partial site file{}: {} things to finish by hand, named at its top",
            cfg.id,
            cfg.out.as_ref().map(|p| format!(" to {}", p.display())).unwrap_or_default(),
            learned.missing.len()
        );
        return ExitCode::from(2);
    }
    eprintln!(
        "luntan-learn: {}: {} requests, {} pages; {} boards, {} list pages ({} threads), {} thread pages ({} posts); {} things to check{}",
        cfg.id,
        learned.requests,
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
