//! `luntan-export`: the crawl for the tools others use (web archives, search engines).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use luntan::cli;
use luntan_core::contract::Stop;
use luntan_core::ids::SiteId;
use luntan_core::store::StateUrl;
use luntan_core::{DataDir, Site, Store};
use luntan_export::{ExportOptions, ExportReport};

/// Write what luntan crawled in formats other tools read: every saved page
/// as a WARC/1.1 record with the URL it came from, when, and the HTTP head
/// it came with (for warcio, pywb and other web archive tools), and every
/// extracted thread as one JSON line (for Elasticsearch or OpenSearch bulk
/// loading; docs/export.md). Reads the crawl database and the files under
/// DATA, changes neither; each output appears complete or not at all. A
/// page or thread XML that cannot be read is named on stderr, counted and
/// left out, and the export goes on (exit status 1 at the end).
#[derive(Debug, Parser)]
#[command(version, group(clap::ArgGroup::new("output").required(true).multiple(true).args(["warc", "ndjson"])))]
struct Args {
    /// Data directory: site files in DATA/sites, crawl state in
    /// DATA/luntan.db, pages and thread XML in DATA/pages.
    #[arg(long, value_name = "DIR", default_value = "data", alias = "data-dir")]
    data: PathBuf,
    /// Only this forum (its site file's id); repeat for several. Default: every forum.
    #[arg(long, value_name = "ID")]
    site: Vec<SiteId>,
    /// Crawl state: a PostgreSQL URL (postgres://user@host/db) or a SQLite
    /// file. Default: $LUNTAN_STATE, else DATA/luntan.db.
    #[arg(long, value_name = "URL")]
    state: Option<String>,
    /// Write every saved page to FILE as a WARC/1.1 record: `response` with
    /// the forum's status line and headers before the body as saved, or
    /// `resource` for a DOM state a browser drew (browser mode). Each
    /// record is gzipped on its own when FILE ends in .gz (name it
    /// .warc.gz), plain otherwise.
    #[arg(long, value_name = "FILE")]
    warc: Option<PathBuf>,
    /// Write every extracted thread to FILE as one JSON object a line
    /// (docs/thread.schema.json describes one).
    #[arg(long, value_name = "FILE")]
    ndjson: Option<PathBuf>,
    /// With --ndjson: put an Elasticsearch/OpenSearch `_bulk` action line,
    /// {"index":{"_index":INDEX,"_id":"<site>/<thread>"}}, before each
    /// thread, so that FILE can be posted to /_bulk as it is.
    #[arg(long, value_name = "INDEX", requires = "ndjson")]
    bulk_index: Option<String>,
    /// No progress bar: only bad records and the summary.
    #[arg(long, short)]
    quiet: bool,
}

/// Checked arguments.
struct Config {
    data: DataDir,
    state: StateUrl,
    opts: ExportOptions,
    quiet: bool,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    cli::init_tracing(args.quiet);
    let config = match check(args) {
        Ok(c) => c,
        Err(line) => {
            eprintln!("luntan-export: {line}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let store = match Store::connect(&config.state) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("luntan-export: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stop = Stop::on_ctrl_c("luntan-export");
    let bar = cli::Bar::new("export", config.quiet);
    let result = luntan_export::export(&config.data, &store, &config.opts, &stop, &*bar);
    bar.finish();
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("luntan-export: {e}");
            return ExitCode::FAILURE;
        }
    };
    for bad in &report.bad {
        eprintln!("luntan-export: {bad}");
    }
    if report.stopped {
        println!("export: stopped by Ctrl-C after {} threads; nothing written", report.threads);
        return ExitCode::FAILURE;
    }
    println!("{}", summary(&config.opts, &report, start));
    if report.bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Turns arguments into a config; a usage problem comes back as the line to print.
fn check(args: Args) -> Result<Config, String> {
    let data = DataDir::new(&args.data);
    let state = StateUrl::resolve(args.state.as_deref(), &data).map_err(|e| format!("--state/${}: {e}", StateUrl::ENV))?;
    if !state.exists() {
        return Err(format!("{state}: no crawl database (run luntan-discover and luntan-download first)"));
    }
    if let (Some(w), Some(n)) = (&args.warc, &args.ndjson) {
        if w == n {
            return Err(format!("--warc and --ndjson both name {}", w.display()));
        }
    }
    if let Some(index) = &args.bulk_index {
        check_index_name(index).map_err(|why| format!("--bulk-index {index:?}: {why}"))?;
    }
    // Site files help only with pages saved before download kept each
    // page's URL and head; a broken one is named, and the export goes on.
    let (site_files, errors) = Site::load_all(&data.sites_dir(), None);
    for e in &errors {
        eprintln!("{e}");
    }
    let mut sites = args.site;
    sites.sort();
    sites.dedup();
    let opts = ExportOptions { sites, warc: args.warc, ndjson: args.ndjson, bulk_index: args.bulk_index, site_files };
    Ok(Config { data, state, opts, quiet: args.quiet })
}

/// Elasticsearch's (and OpenSearch's) rules for an index name.
fn check_index_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > 255 {
        return Err("must be 1 to 255 bytes");
    }
    if name == "." || name == ".." || name.starts_with(['-', '_', '+']) {
        return Err("may not be . or .. or start with -, _ or +");
    }
    if name.chars().any(|c| c.is_uppercase() || matches!(c, '\\' | '/' | '*' | '?' | '"' | '<' | '>' | '|' | ' ' | ',' | '#' | ':')) {
        return Err("must be lowercase, without \\ / * ? \" < > | , # : or spaces");
    }
    Ok(())
}

/// The one line at the end: what each output got, per outcome.
fn summary(opts: &ExportOptions, r: &ExportReport, start: Instant) -> String {
    let mut parts = vec![format!("export: {} threads", r.threads)];
    if let Some(path) = &opts.warc {
        parts.push(format!(
            "{}: {} pages with the head the forum sent, {} saved before heads were kept (minimal head), {} browser states, {} media, {:.1} MB",
            path.display(),
            r.responses,
            r.synthesized,
            r.snapshots,
            r.media,
            r.warc_bytes as f64 / 1e6
        ));
    }
    if let Some(path) = &opts.ndjson {
        parts.push(format!("{}: {} threads, {:.1} MB", path.display(), r.lines, r.ndjson_bytes as f64 / 1e6));
    }
    let bad = r.bad.len();
    parts.push(format!("{bad} bad {} left out in {}", if bad == 1 { "record" } else { "records" }, cli::elapsed(start.elapsed())));
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_follow_elasticsearch_rules() {
        assert!(check_index_name("luntan-threads").is_ok());
        for bad in ["", "Luntan", "_x", "a b", "a/b", "..", "a:b"] {
            assert!(check_index_name(bad).is_err(), "{bad:?}");
        }
    }
}
