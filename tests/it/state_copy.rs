//! Moving a crawl over and back: a real crawl of the fixture forum on
//! SQLite, copied by `luntan-state copy` to a PostgreSQL database and from
//! there to a new SQLite file, reads the same in `luntan-status` on all
//! three; a copy into a database that holds a crawl is refused with one line
//! and changes nothing.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::Work;
use luntan_core::store::scratch::ScratchDb;
use luntan_core::store::StateUrl;
use luntan_core::{Store, ThreadState};
use luntan_fixture::{FixtureConfig, FixtureServer};

/// Runs `luntan-state` with `args`.
fn state(args: &[&str]) -> Output {
    Command::new(common::bin("state")).args(args).env("RUST_LOG", "warn").output().expect("running luntan-state")
}

/// `luntan-state copy --from … --to …`, which must succeed; its stdout.
fn copy_ok(from: &str, to: &str) -> String {
    let out = state(&["copy", "--from", from, "--to", to]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "luntan-state copy --from {from} --to {to} failed ({}):\nstdout: {stdout}\nstderr: {stderr}", out.status);
    stdout
}

/// `luntan-state copy --from … --to …`, which must fail with one line on
/// stderr and nothing on stdout; that line.
fn copy_refused(from: &str, to: &str) -> String {
    let out = state(&["copy", "--from", from, "--to", to]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_eq!(out.status.code(), Some(1), "copy --from {from} --to {to} should fail:\nstdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    stderr
}

/// `luntan-status --json` on `state` (`None`: the data directory's SQLite file).
fn status(work: &Work, state: Option<&str>) -> String {
    match state {
        Some(s) => work.ok("status", &["--json", "--state", s]),
        None => work.ok("status", &["--json"]),
    }
}

/// `luntan-status --json` lines with each failure group's example threads
/// sorted. Only their order may differ between the engines, and not because
/// of the copy: SQLite lists a forum's failed threads in the order they were
/// stored (its rowid), PostgreSQL, which has no rowid, by when they were
/// found, then by id (`Store::counts`); threads found in the same second
/// can come out in another order. Everything else must be equal as printed.
fn examples_sorted(status: &str) -> Vec<serde_json::Value> {
    status
        .lines()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            for g in v["failures"].as_array_mut().into_iter().flatten() {
                if let Some(examples) = g["examples"].as_array_mut() {
                    examples.sort_by_key(|e| e.to_string());
                }
            }
            v
        })
        .collect()
}

/// Every thread row in `state`, by (site, thread).
fn rows(state: &StateUrl) -> Vec<luntan_core::store::ThreadRow> {
    let store = Store::connect(state).unwrap();
    ThreadState::ALL.iter().flat_map(|&s| store.threads(None, s).unwrap()).collect()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

#[test]
fn a_crawl_moved_to_postgres_and_back_reads_the_same_and_a_full_target_is_refused() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 30, boards: 1, ..FixtureConfig::default() }).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    work.ok("discover", &[]);
    work.ok("download", &[]);
    // Three threads whose pages went missing fail at extract, with their
    // reasons: luntan-status names them, and so must every copy.
    let lost: Vec<_> = work.all_rows().into_iter().filter(|r| r.site == "dz").take(3).collect();
    assert_eq!(lost.len(), 3);
    for row in &lost {
        std::fs::remove_file(work.layout().html_path(&row.saved_location().unwrap(), 1)).unwrap();
    }
    work.stage("extract", &[]);
    work.ok("index", &[]);
    let failed: Vec<_> = work.all_rows().into_iter().filter(|r| r.state == ThreadState::Failed).collect();
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert!(failed.iter().all(|r| r.fail_stage.map(|s| s.as_str()) == Some("extract") && r.fail_reason.is_some()), "{failed:?}");
    let sqlite = work.layout().db_path();
    let sqlite = path_str(&sqlite);
    let before = status(&work, None);
    assert!(before.contains("\"indexed\":"), "{before}");
    let threads = work.all_rows().len();
    assert!(threads >= 30, "a real crawl: {threads} threads");

    // Over to PostgreSQL.
    let db = ScratchDb::create().unwrap_or_else(|e| panic!("{e}"));
    let StateUrl::Postgres(pg) = db.url() else { unreachable!("a scratch database is PostgreSQL") };
    let pg = pg.as_str();
    let out = copy_ok(sqlite, pg);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("state: copied ") && out.contains(&format!(" {threads} threads")), "{out}");
    assert!(out.contains(&format!(" from {sqlite} to {}; checked row for row in ", db.url())), "{out}");
    let on_pg = status(&work, Some(pg));
    assert_eq!(examples_sorted(&on_pg), examples_sorted(&before), "luntan-status reads the same on the PostgreSQL copy");
    assert_eq!(rows(db.url()), rows(&StateUrl::Sqlite(sqlite.into())), "every thread row the same");

    // And back, into a new SQLite file: it lists threads in PostgreSQL's order.
    let back = work.dir.path().join("back/luntan.db");
    let back = path_str(&back);
    copy_ok(pg, back);
    assert_eq!(status(&work, Some(back)), on_pg, "luntan-status reads the same on the copy of the copy");
    assert_eq!(rows(&StateUrl::Sqlite(back.into())), rows(&StateUrl::Sqlite(sqlite.into())));
    assert_eq!(examples_sorted(&on_pg), examples_sorted(&before));

    // Never merged into a crawl: refused with one line, and nothing changes.
    for (from, to) in [(sqlite, pg), (pg, back)] {
        let line = copy_refused(from, to);
        assert!(line.starts_with("luntan-state: ") && line.contains(": not empty (") && line.contains(" threads"), "{line}");
    }
    assert_eq!(status(&work, Some(pg)), on_pg);
    assert_eq!(status(&work, Some(back)), on_pg);
    assert_eq!(status(&work, None), before, "the source is only read");

    // A bad URL or a missing source is one line too, and creates nothing.
    let nowhere = work.dir.path().join("nowhere.db");
    let line = copy_refused(path_str(&nowhere), path_str(&work.dir.path().join("x.db")));
    assert!(line.contains("nowhere.db: no crawl database there"), "{line}");
    assert!(!nowhere.exists() && !work.dir.path().join("x.db").exists());
    let line = copy_refused(sqlite, "mysql://luntan@db/luntan");
    assert!(line.contains("--to: mysql://luntan@db/luntan: unknown scheme"), "{line}");
    let line = copy_refused(sqlite, "postgres://luntan:secret@127.0.0.1:1/luntan");
    assert!(line.starts_with("luntan-state: postgres://luntan:***@127.0.0.1:1/luntan: "), "an unreachable server, named without its password: {line}");
    let line = copy_refused(sqlite, sqlite);
    assert!(line.contains("--from and --to both name"), "{line}");
}
