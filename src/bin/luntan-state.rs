//! `luntan-state`: the crawl state as a whole; `copy` moves it between
//! SQLite and PostgreSQL.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::ProgressBar;
use luntan::cli;
use luntan_core::store::{StateUrl, Store};

/// The crawl state as a whole (sites, boards, threads, rounds, keywords):
/// moving it between SQLite and PostgreSQL.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Copies a whole crawl state into an empty database, checked row for row
    ///
    /// Moving over to PostgreSQL, when one machine is no longer enough: stop
    /// the crawl, create the database (createdb; luntan creates its tables),
    /// then
    ///
    ///   luntan-state copy --from data/luntan.db --to postgres://luntan@db/luntan
    ///
    /// and from then on give every stage --state postgres://luntan@db/luntan
    /// (or set LUNTAN_STATE). Moving back is the same the other way round,
    /// into a new SQLite file (a stage given no --state uses DATA/luntan.db,
    /// so move the old one aside first):
    ///
    ///   luntan-state copy --from postgres://luntan@db/luntan --to data/luntan.db
    ///
    /// Either side may be SQLite or PostgreSQL. Everything is copied as it is
    /// (every thread in its state with its failure reason, boards in the
    /// order first found, rounds, keywords and their history, search
    /// accounts, page validators), in one transaction: the target has the
    /// whole copy or nothing. Not copied: the leases, site locks and
    /// politeness gates of workers running on the source, since none of them
    /// works on the copy. The target must hold no crawl state: a copy never
    /// merges into a crawl. The source is only read (an older luntan's file is
    /// first brought up to this version's schema, as any stage would).
    #[command(verbatim_doc_comment)]
    Copy(CopyArgs),
}

#[derive(Debug, clap::Args)]
struct CopyArgs {
    /// The crawl state to copy: a SQLite file (DATA/luntan.db) or a
    /// PostgreSQL URL (postgres://user@host/db).
    #[arg(long, value_name = "URL|PATH")]
    from: String,
    /// Where to copy it: a new SQLite file (or one holding no crawl state),
    /// or an empty PostgreSQL database.
    #[arg(long, value_name = "URL|PATH")]
    to: String,
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    match args.command {
        Command::Copy(copy) => match copy_state(&copy) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("luntan-state: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Copies `--from` into `--to`; the summary line, or the one line saying why not.
fn copy_state(args: &CopyArgs) -> Result<String, String> {
    let from = StateUrl::parse(&args.from).map_err(|e| format!("--from: {e}"))?;
    let to = StateUrl::parse(&args.to).map_err(|e| format!("--to: {e}"))?;
    if !from.exists() {
        return Err(format!("{from}: no crawl database there (--from)"));
    }
    if same_database(&from, &to) {
        return Err(format!("--from and --to both name {from}"));
    }
    // A SQLite file this copy creates is removed again if the copy fails.
    let created = match &to {
        StateUrl::Sqlite(path) if !path.exists() => Some(path.clone()),
        _ => None,
    };
    let start = Instant::now();
    let result = copy(&from, &to);
    if let (Err(_), Some(path)) = (&result, &created) {
        remove_sqlite(path);
    }
    let report = result?;
    Ok(format!("state: copied {report} from {from} to {to}; checked row for row in {}", cli::elapsed(start.elapsed())))
}

fn copy(from: &StateUrl, to: &StateUrl) -> Result<luntan_core::store::CopyReport, String> {
    let source = Store::connect(from).map_err(|e| with_causes(&e))?;
    let mut target = Store::connect(to).map_err(|e| with_causes(&e))?;
    let bar = if std::io::stderr().is_terminal() { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    let report = source.copy_into(&mut target, |what, rows| bar.set_message(format!("{what}: {rows} rows")));
    bar.finish_and_clear();
    report.map_err(|e| with_causes(&e))
}

/// An error's message with the causes it does not already say: a failed
/// connection's message is only "error connecting to server", its cause
/// says why (refused, timed out, no such host).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        // The server's own message is in `message` already; the client's
        // wrapping of it (`db error`, `db error: FATAL: x`) adds nothing.
        let last = text.rsplit(": ").next().unwrap_or(&text);
        if !message.contains(last) && text != "db error" {
            message = format!("{message}: {text}");
        }
        cause = c.source();
    }
    message
}

/// Whether both name one database (the same SQLite file, however written;
/// the same PostgreSQL URL).
fn same_database(a: &StateUrl, b: &StateUrl) -> bool {
    match (a, b) {
        (StateUrl::Sqlite(x), StateUrl::Sqlite(y)) => match (x.canonicalize(), y.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => x == y,
        },
        _ => a == b,
    }
}

/// Removes a SQLite file and its journal files.
fn remove_sqlite(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = PathBuf::from(path).into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
