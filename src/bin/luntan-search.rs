//! luntan-search: one query over every forum's index.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use luntan_core::ids::SiteId;
use luntan_search::{analysis, json, Catalog, Hit, Query, SearchOptions, SearchResults, Snippet, SortOrder};

#[derive(Parser, Debug)]
#[command(
    name = "luntan-search",
    version,
    about = "Search all crawled forums at once",
    after_help = "QUERY syntax:\n  考研 经验      every term must occur (each as written: 1-4 characters find every thread containing them)\n  \"考研 经验\"    exact phrase (a space stands for any run of spaces and punctuation)\n  -广告          exclude threads containing 广告\n  a OR b         either (binds tighter than AND); (a OR b) c groups\n  site:ID  board:ID  author:NAME  title:WORD  title:\"PHRASE\"\nTraditional and simplified characters match each other; Latin is case-insensitive.\nExit status: 0 on success (also with no hits), 2 for a malformed query or usage, 1 for other errors."
)]
struct Args {
    /// The query; several arguments are joined with spaces. Exclusions
    /// (`-广告`) may go anywhere, options too.
    #[arg(required = true)]
    query: Vec<String>,
    /// Directory holding the `<site>.index` directories.
    #[arg(long, value_name = "DIR", default_value = "index")]
    index_dir: PathBuf,
    /// Hits to show.
    #[arg(long, short = 'n', default_value_t = 10)]
    limit: usize,
    /// Hits to skip (paging).
    #[arg(long, default_value_t = 0)]
    offset: usize,
    #[arg(long, value_enum, default_value_t = Sort::Relevance)]
    sort: Sort,
    /// Only threads first posted on or after this day (YYYY-MM-DD).
    #[arg(long, value_parser = parse_day)]
    since: Option<time::Date>,
    /// Only threads first posted on or before this day (YYYY-MM-DD).
    #[arg(long, value_parser = parse_day)]
    until: Option<time::Date>,
    /// Only this forum's index (repeatable).
    #[arg(long, value_name = "ID")]
    site: Vec<String>,
    /// One JSON object per hit, then a summary object.
    #[arg(long)]
    json: bool,
    /// Snippet length in characters (0: none).
    #[arg(long, default_value_t = 80)]
    snippet_chars: usize,
    /// Only `site/thread` per hit, one per line (with --json: rank, score,
    /// site, thread); no stored thread is read, so long lists are quick.
    #[arg(long)]
    ids: bool,
    /// Colour highlights (auto: when stdout is a terminal).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Sort {
    Relevance,
    Newest,
    Oldest,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

fn parse_day(s: &str) -> Result<time::Date, String> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let day = time::Date::parse(s, &fmt).map_err(|e| format!("{s:?} is not a YYYY-MM-DD date ({e})"))?;
    // Past these the bound overflowed and selected every thread.
    let (first, last) = (luntan_search::days::FIRST_DAY, luntan_search::days::LAST_DAY);
    luntan_search::check_day("", day).map_err(|_| format!("{day} is outside the days the index can hold ({first} to {last})"))
}

fn main() -> ExitCode {
    run(Args::parse_from(query_last(std::env::args_os().collect())))
}

/// Moves every query word behind a `--`, so that an exclusion (`-广告`,
/// `-iphone`) is not taken for an option and options may still follow the
/// query (`luntan-search 考研 -广告 --limit 5`). An argument starting with
/// `-` is an option only when it names one of ours.
fn query_last(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let mut cmd = Args::command();
    cmd.build();
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    let long = |name: &str| cmd.get_arguments().find(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name)));
    let short = |c: char| cmd.get_arguments().find(|a| a.get_short() == Some(c));
    let mut it = args.into_iter();
    let mut options: Vec<std::ffi::OsString> = it.next().into_iter().collect();
    let mut query = Vec::new();
    while let Some(arg) = it.next() {
        let Some(s) = arg.to_str().map(str::to_owned) else {
            query.push(arg);
            continue;
        };
        if s == "--" {
            query.extend(it.by_ref());
            break;
        }
        let option = if let Some(name) = s.strip_prefix("--") {
            let (name, inline) = name.split_once('=').map_or((name, false), |(n, _)| (n, true));
            // An unknown `--x` stays an option, for clap to report.
            Some(long(name).is_none_or(|a| !takes_value(a) || inline))
        } else if let Some(rest) = s.strip_prefix('-').filter(|r| !r.is_empty()) {
            let mut cs = rest.chars();
            let first = cs.next().expect("not empty");
            short(first).map(|a| !takes_value(a) || cs.next().is_some())
        } else {
            None
        };
        match option {
            None => query.push(arg),
            Some(complete) => {
                options.push(arg);
                if !complete {
                    options.extend(it.next());
                }
            }
        }
    }
    options.push("--".into());
    options.extend(query);
    options
}

fn run(args: Args) -> ExitCode {
    match search(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("luntan-search: {e:#}");
            // A malformed query is the user's to fix, like a usage error.
            let query_error = e.downcast_ref::<luntan_search::QueryError>().is_some()
                || matches!(e.downcast_ref::<luntan_search::SearchError>(), Some(luntan_search::SearchError::Query(_)));
            ExitCode::from(if query_error { 2 } else { 1 })
        }
    }
}

fn search(args: Args) -> anyhow::Result<()> {
    let text = args.query.join(" ");
    let query = Query::parse(&text).map_err(|e| anyhow::anyhow!(e).context("query"))?;
    if let (Some(a), Some(b)) = (args.since, args.until) {
        if a > b {
            bail!("--since {a} is after --until {b}");
        }
    }
    let started = Instant::now();
    // jieba's dictionary (~0.1 s) loads while the indexes open.
    let (_, catalog) = rayon::join(analysis::warm_up, || Catalog::open(&args.index_dir));
    let catalog = catalog.with_context(|| "opening the indexes (run luntan-index first)")?;
    for e in catalog.skipped() {
        eprintln!("luntan-search: skipped {e}");
    }
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    if catalog.is_empty() {
        bail!("{}: no <site>.index directories (run luntan-index first)", args.index_dir.display());
    }
    let opts = SearchOptions {
        limit: args.limit,
        offset: args.offset,
        sort: match args.sort {
            Sort::Relevance => SortOrder::Relevance,
            Sort::Newest => SortOrder::Newest,
            Sort::Oldest => SortOrder::Oldest,
        },
        since: args.since,
        until: args.until,
        sites: sites(&args)?,
        snippet_chars: args.snippet_chars,
        ids_only: args.ids,
    };
    let searching = Instant::now();
    let results = catalog.search(&query, &opts)?;
    let took = searching.elapsed();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        print_json(&mut out, &results, &opts, open_ms, took.as_secs_f64() * 1000.0)?;
    } else if args.ids {
        for h in &results.hits {
            writeln!(out, "{}/{}", h.site, h.thread)?;
        }
    } else {
        let color = match args.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        };
        print_text(&mut out, &results, color, took.as_secs_f64() * 1000.0)?;
    }
    out.flush()?;
    Ok(())
}

/// The `--site` ids. One that is not an id names no index, and is refused
/// as an unknown one is.
fn sites(args: &Args) -> Result<Vec<SiteId>, luntan_search::SearchError> {
    let unknown = |site: &String| luntan_search::SearchError::UnknownSite { site: site.clone(), dir: args.index_dir.clone() };
    args.site.iter().map(|s| SiteId::parse(s).map_err(|_| unknown(s))).collect()
}

fn print_json(out: &mut impl Write, r: &SearchResults, opts: &SearchOptions, open_ms: f64, took_ms: f64) -> anyhow::Result<()> {
    for h in &r.hits {
        writeln!(out, "{}", json::hit_json(h, opts.ids_only))?;
    }
    let mut summary = json::summary_json(r, opts, took_ms);
    summary["open_ms"] = serde_json::json!((open_ms * 10.0).round() / 10.0);
    writeln!(out, "{summary}")?;
    Ok(())
}

/// Drops control characters (C1 included), which a page could use to drive the terminal.
fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

fn print_text(out: &mut impl Write, r: &SearchResults, color: bool, took_ms: f64) -> anyhow::Result<()> {
    let per: Vec<String> = r.per_site.iter().filter(|(_, &n)| n > 0).map(|(s, n)| format!("{s} {n}")).collect();
    let per = if per.is_empty() { String::new() } else { format!(" ({})", per.join(", ")) };
    writeln!(out, "{} hits{per} in {took_ms:.0} ms", r.total)?;
    let (open, close) = if color { ("\x1b[1;31m", "\x1b[0m") } else { ("[", "]") };
    let (dim, reset) = if color { ("\x1b[2m", "\x1b[0m") } else { ("", "") };
    for h in &r.hits {
        writeln!(out)?;
        writeln!(out, "{}", header(h, open, close))?;
        writeln!(out, "    {dim}{}{reset}", clean(&h.url))?;
        let snippet = Snippet { text: clean(&h.snippet.text), highlights: h.snippet.highlights.clone() };
        if !snippet.text.trim().is_empty() {
            // Words found only in a quote are never shown as the replier's.
            let said = match (&h.in_quote, &h.quote_author) {
                (false, _) => String::new(),
                (true, Some(a)) => format!("{dim}引用 {}：{reset}", clean(a)),
                (true, None) => format!("{dim}引用：{reset}"),
            };
            writeln!(out, "    {said}{}", snippet.marked(open, close))?;
        }
    }
    Ok(())
}

fn header(h: &Hit, open: &str, close: &str) -> String {
    let title = Snippet { text: clean(&h.title), highlights: h.title_highlights.clone() }.marked(open, close);
    let forum = if h.forum.is_empty() || h.forum == h.site { h.site.to_string() } else { format!("{} ({})", clean(&h.forum), h.site) };
    let date = h.posted.as_deref().map_or("", |p| p.get(..10).unwrap_or(p));
    format!("{:>3}. {title}  — {forum}  {date}  score {:.2}", h.rank, h.score)
}
