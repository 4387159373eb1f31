//! Crash safety: every stage, SIGKILLed at random moments and started
//! again until it finishes, ends exactly where an uninterrupted run ends —
//! the same rows, byte-identical HTML and XML, every indexed thread in the
//! index once, no temporary file left — and between kills no row is ever
//! ahead of its files and no file under its final name is half written.
//!
//! `make test` runs a small forum (3 × 150 threads, 6 kills per stage);
//! `LUNTAN_CRASH_FULL=1` runs 3 × 1000 threads with 20 kills per stage.
//! `LUNTAN_CRASH_SEED=N` picks other kill moments.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use common::{assert_every_xml_parses, files_under, index_keys, temp_files, Work};
use luntan_core::lock::StageLock;
use luntan_core::{Stage, Store, ThreadState};
use luntan_fixture::{FixtureConfig, FixtureServer};

const STAGES: [&str; 4] = ["discover", "download", "extract", "index"];
/// Boards per forum × forums, in every fixture here.
const BOARDS: usize = 4 * 3;

struct Scale {
    threads: usize,
    kills: usize,
}

fn scale() -> Scale {
    if std::env::var("LUNTAN_CRASH_FULL").is_ok_and(|v| v == "1") {
        Scale { threads: 1000, kills: 20 }
    } else {
        Scale { threads: 150, kills: 6 }
    }
}

fn seed() -> u64 {
    std::env::var("LUNTAN_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261130)
}

/// splitmix64: kill moments without another dependency.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Every file under `dir`, by path relative to it, with its bytes (as
/// [`comparable`] has them).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_under(dir).into_iter().map(|p| (p.strip_prefix(dir).unwrap().to_owned(), comparable(&p, std::fs::read(&p).unwrap()))).collect()
}

/// A file's bytes as two runs can agree on them. An `article<T>.http`
/// holds when each response arrived and the server's `Date`, which no two
/// runs share: those are left out, the rest of every line is compared (and
/// every line must parse, so a torn file still fails).
fn comparable(path: &Path, bytes: Vec<u8>) -> Vec<u8> {
    use luntan_core::capture::{self, Exchange};
    if path.extension().is_none_or(|e| e != "http") {
        return bytes;
    }
    let text = String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = capture::parse_lines(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for c in &mut lines {
        c.at.clear();
        if let Exchange::Response { headers, .. } = &mut c.exchange {
            headers.retain(|(name, _)| name != "date");
        }
    }
    capture::to_lines(&lines).into_bytes()
}

/// Rows by (site, thread): state, save date, pages, fail reason.
type Rows = BTreeMap<(String, String), (ThreadState, Option<String>, Option<u32>, Option<String>)>;

fn rows(work: &Work) -> Rows {
    work.rows().into_iter().map(|(k, (state, reason, date, pages))| (k, (state, date, pages, reason))).collect()
}

/// What must hold at any moment, killed or not: a row at or past `Saved`
/// has every page on disk as the uninterrupted run saved it, one at or past
/// `Extracted` its XML as that run wrote it, one `Indexed` its document in
/// the index (once); and every file under a final name is complete (equal
/// to the uninterrupted run's), whatever the temp files beside it.
fn assert_consistent(work: &Work, reference: &BTreeMap<PathBuf, Vec<u8>>, what: &str) {
    let layout = work.layout();
    for p in files_under(&work.data().join("pages")) {
        if p.to_string_lossy().ends_with(luntan_core::layout::TEMP_SUFFIX) {
            continue;
        }
        let rel = p.strip_prefix(work.data()).unwrap();
        let bytes = comparable(&p, std::fs::read(&p).unwrap());
        match reference.get(rel) {
            Some(want) => assert!(bytes == *want, "{what}: {} differs from the uninterrupted run's ({} vs {} bytes)", rel.display(), bytes.len(), want.len()),
            None => panic!("{what}: {} exists but the uninterrupted run has no such file", rel.display()),
        }
    }
    let keys: Vec<String> = index_keys(&work.index());
    let key_set: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
    assert_eq!(key_set.len(), keys.len(), "{what}: a thread is in the index twice");
    let store = Store::open(&layout.db_path()).unwrap();
    for state in [ThreadState::Saved, ThreadState::Extracted, ThreadState::Indexed] {
        for row in store.threads(None, state).unwrap() {
            let (site, thread) = (&row.site, &row.thread);
            let date = row.save_date.as_deref().unwrap_or_else(|| panic!("{what}: {site}/{thread} is {state:?} without a save date"));
            for page in 1..=row.pages.unwrap_or(0) {
                let p = layout.html_path(&common::loc(site, &row.board, date, thread), page);
                assert!(p.exists(), "{what}: {site}/{thread} is {state:?} but {} is missing", p.display());
            }
            if state != ThreadState::Saved {
                let p = layout.xml_path(&common::loc(site, &row.board, date, thread));
                assert!(p.exists(), "{what}: {site}/{thread} is {state:?} but {} is missing", p.display());
            }
            if state == ThreadState::Indexed {
                assert!(key_set.contains(format!("{site}/{thread}").as_str()), "{what}: {site}/{thread} is indexed but not in the index");
            }
        }
    }
}

/// Asserts that `got` holds every thread of `want`, the uninterrupted run's,
/// naming a few that `what` lost.
fn assert_none_lost<T: Ord + std::fmt::Debug>(want: &BTreeSet<T>, got: &BTreeSet<T>, what: &str) {
    let lost: Vec<_> = want.difference(got).collect();
    assert!(lost.is_empty(), "{what}: lost {} of the {} threads the uninterrupted run has, e.g. {:?}", lost.len(), want.len(), &lost[..lost.len().min(8)]);
}

/// Boards whose walk has finished (discover's unit of progress: a round
/// skips a board walked recently).
fn boards_walked(work: &Work) -> usize {
    if !work.layout().db_path().exists() {
        return 0;
    }
    let db = rusqlite::Connection::open(work.layout().db_path()).unwrap();
    db.query_row("SELECT count(*) FROM boards WHERE last_visit IS NOT NULL", [], |r| r.get::<_, i64>(0)).unwrap_or(0) as usize
}

/// Rows waiting for `stage` (in the state it takes).
fn left(work: &Work, stage: &str) -> usize {
    if stage == "discover" {
        // Its boards: those the uninterrupted run walked, less those walked here.
        return BOARDS.saturating_sub(boards_walked(work));
    }
    let waiting = match stage {
        "download" => ThreadState::Discovered,
        "extract" => ThreadState::Saved,
        _ => ThreadState::Extracted,
    };
    rows(work).values().filter(|r| r.0 == waiting).count()
}

/// Rows in the state `stage` moves threads to (its progress).
fn progress(work: &Work, stage: &str) -> usize {
    let done: &[ThreadState] = match stage {
        "discover" => &ThreadState::ALL,
        "download" => &[ThreadState::Saved, ThreadState::Extracted, ThreadState::Indexed, ThreadState::Failed],
        "extract" => &[ThreadState::Extracted, ThreadState::Indexed],
        _ => &[ThreadState::Indexed],
    };
    if !work.layout().db_path().exists() {
        return 0;
    }
    rows(work).values().filter(|r| done.contains(&r.0)).count()
}

enum Ended {
    Killed,
    Finished,
}

/// Runs `child` until it exits or `after` has passed; then SIGKILLs it.
fn kill_after(mut child: Child, after: Duration, what: &str) -> Ended {
    let deadline = Instant::now() + after;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            assert!(status.success(), "{what} failed ({status}):\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            return Ended::Finished;
        }
        if Instant::now() >= deadline {
            // Child::kill is SIGKILL: no handler, no cleanup, like a power cut for the process.
            child.kill().unwrap();
            child.wait().unwrap();
            return Ended::Killed;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Copies `from` into `to` (created), recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Puts `work`'s data and index directories back as `saved` has them.
fn restore(work: &Work, saved: &Path) {
    for d in ["data", "index"] {
        let _ = std::fs::remove_dir_all(work.dir.path().join(d));
        copy_dir(&saved.join(d), &work.dir.path().join(d));
    }
}

/// Kills `stage` `kills` times at random moments, checking consistency
/// after each kill, then lets it finish. Returns the kill moments.
///
/// Each run is killed at a random point of the work it has left (the
/// uninterrupted run's time for the stage, scaled by the share of work still
/// waiting), so kills land anywhere from start-up to the last commit. When a
/// run finishes before its kill, the stage's input is put back as it was
/// before the stage and the killing goes on, so every stage gets its kills.
fn crash_stage(
    work: &Work,
    stage: &str,
    extra: &[&str],
    took: Duration,
    kills: usize,
    rng: &mut Rng,
    reference: &BTreeMap<PathBuf, Vec<u8>>,
) -> (Vec<Duration>, usize) {
    let saved = tempfile::tempdir().unwrap();
    for d in ["data", "index"] {
        copy_dir(&work.dir.path().join(d), &saved.path().join(d));
    }
    let mut moments = Vec::new();
    let mut restarts = 0;
    let total = left(work, stage).max(1);
    while moments.len() < kills {
        let share = (left(work, stage) as f64 / total as f64).max(0.1);
        let at = took.mul_f64(share * rng.unit());
        let what = format!("{stage} (kill {} at {at:?})", moments.len() + 1);
        match kill_after(work.spawn(stage, extra), at, &what) {
            Ended::Finished => {
                restore(work, saved.path());
                restarts += 1;
            }
            Ended::Killed => {
                moments.push(at);
                assert_consistent(work, reference, &what);
            }
        }
    }
    let out = work.ok(stage, extra);
    assert!(!out.is_empty(), "{stage} printed no summary");
    (moments, restarts)
}

/// The fixture's site files; without `early_stop`, discover walks every list
/// page of every board each round (`stop-after` out of reach).
fn write_sites(work: &Work, server: &FixtureServer, early_stop: bool) {
    for path in server.write_site_files(&work.sites()).unwrap() {
        if !early_stop {
            common::edit_site_file(&path, |t| t.replacen("</max-board-pages>\n", "</max-board-pages>\n  <incremental stop-after=\"1000000\"/>\n", 1));
        }
    }
}

/// Every stage, SIGKILLed at random moments until it has been killed
/// `kills` times and then left to finish, ends where an uninterrupted run
/// ends. Discover walks whole boards here: its early stop after known rows
/// loses threads when a walk is killed, which
/// `discover_killed_mid_walk_loses_no_thread` shows on its own.
#[test]
fn every_stage_killed_at_random_moments_ends_as_an_uninterrupted_run() {
    let scale = scale();
    let mut rng = Rng(seed());
    let server = FixtureServer::start_blocking(FixtureConfig { threads: scale.threads, boards: BOARDS / 3, ..FixtureConfig::default() }).unwrap();

    let reference = Work::new();
    write_sites(&reference, &server, false);
    let mut took = HashMap::new();
    for stage in STAGES {
        let start = Instant::now();
        reference.ok(stage, &[]);
        took.insert(stage, start.elapsed());
    }
    let ref_files = snapshot(&reference.data());
    let ref_rows = rows(&reference);
    let indexed = ref_rows.values().filter(|r| r.0 == ThreadState::Indexed).count();
    assert!(indexed >= scale.threads * 3 * 9 / 10, "reference run indexed only {indexed}");

    let crashed = Work::new();
    write_sites(&crashed, &server, false);
    let mut report = Vec::new();
    for stage in STAGES {
        // Many small commits: kills land between an index commit and the rows it moves.
        let extra: &[&str] = if stage == "index" { &["--commit-every", "20"] } else { &[] };
        let (moments, restarts) = crash_stage(&crashed, stage, extra, took[stage], scale.kills, &mut rng, &ref_files);
        // Every thread the uninterrupted run took this far, this run took too:
        // all of them for discover, every one it ended up indexing after that.
        let past: &[ThreadState] = match stage {
            "discover" => &ThreadState::ALL,
            "download" => &[ThreadState::Saved, ThreadState::Extracted, ThreadState::Indexed],
            "extract" => &[ThreadState::Extracted, ThreadState::Indexed],
            _ => &[ThreadState::Indexed],
        };
        let got: BTreeSet<&(String, String)> = rows(&crashed)
            .into_iter()
            .filter(|(_, v)| past.contains(&v.0))
            .map(|(k, _)| k)
            .collect::<Vec<_>>()
            .iter()
            .map(|k| ref_rows.get_key_value(k).map(|(k, _)| k).unwrap_or_else(|| panic!("{stage}: thread {k:?} that the uninterrupted run never saw")))
            .collect();
        let want: BTreeSet<&(String, String)> = ref_rows.iter().filter(|(_, v)| stage == "discover" || v.0 == ThreadState::Indexed).map(|(k, _)| k).collect();
        assert_none_lost(&want, &got, &format!("{stage}, killed {} times", moments.len()));
        report.push(format!(
            "{stage}: {} kills ({restarts} times started over after finishing early; uninterrupted {:?}) at {moments:?}",
            moments.len(),
            took[stage]
        ));
    }
    eprintln!("crash test, seed {}, {} threads per forum:\n{}", seed(), scale.threads, report.join("\n"));

    // The same end state as the uninterrupted run.
    let got_rows = rows(&crashed);
    let row_diffs: Vec<String> = ref_rows
        .keys()
        .chain(got_rows.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| got_rows.get(*k) != ref_rows.get(*k))
        .map(|k| format!("{}/{}: {:?} after the kills, {:?} uninterrupted", k.0, k.1, got_rows.get(k), ref_rows.get(k)))
        .collect();
    assert!(
        row_diffs.is_empty(),
        "after every stage: {} thread rows differ from the uninterrupted run (invariant: same rows), e.g. {:#?}",
        row_diffs.len(),
        &row_diffs[..row_diffs.len().min(8)]
    );
    let got = snapshot(&crashed.data());
    let pages = |m: &BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
        m.iter().filter(|(p, _)| p.starts_with("pages")).map(|(p, b)| (p.clone(), b.clone())).collect()
    };
    let (got_pages, want_pages) = (pages(&got), pages(&ref_files));
    let differ: Vec<_> = got_pages.keys().chain(want_pages.keys()).filter(|p| got_pages.get(*p) != want_pages.get(*p)).collect();
    assert!(differ.is_empty(), "{} HTML/XML files differ from the uninterrupted run, e.g. {:?}", differ.len(), &differ[..differ.len().min(5)]);
    let keys = index_keys(&crashed.index());
    let ref_keys = index_keys(&reference.index());
    let missing: Vec<&String> = ref_keys.iter().filter(|k| !keys.contains(k)).collect();
    let extra: Vec<&String> = keys.iter().filter(|k| !ref_keys.contains(k)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "index: threads missing from the index after the kills {missing:?}, threads there that the uninterrupted run did not index {extra:?} (invariant: same documents)");
    assert_eq!(keys.len(), indexed, "index: {} documents for {indexed} indexed rows (invariant: each indexed thread once)", keys.len());
    assert_eq!(luntan_search::Catalog::open(&crashed.index()).unwrap().num_docs() as usize, indexed);
    assert_eq!(assert_every_xml_parses(&crashed.data()), indexed);
    let temps = temp_files(crashed.dir.path());
    assert!(temps.is_empty(), "after every stage: temporary files left (invariant: a finished run leaves none): {temps:?}");
}

/// Discover with the site's default early stop (`stop-after` known rows in a
/// row end a board's walk), killed in the middle of its first walk: the
/// next run sees page 1's rows as known and stops there, and the threads on
/// the pages the killed walk never reached are never discovered.
#[test]
fn discover_killed_mid_walk_loses_no_thread() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 150, boards: BOARDS / 3, ..FixtureConfig::default() }).unwrap();
    let reference = Work::new();
    write_sites(&reference, &server, true);
    let start = Instant::now();
    reference.ok("discover", &[]);
    let took = start.elapsed();
    let want: BTreeSet<_> = rows(&reference).into_keys().collect();

    let crashed = Work::new();
    write_sites(&crashed, &server, true);
    let mut rng = Rng(seed());
    let ref_files = snapshot(&reference.data());
    let (moments, _) = crash_stage(&crashed, "discover", &[], took, 5, &mut rng, &ref_files);
    crashed.ok("discover", &["--all-boards"]);
    let got: BTreeSet<_> = rows(&crashed).into_keys().collect();
    assert_none_lost(&want, &got, &format!("killed at {moments:?}, then run twice more"));
}

/// A second copy of a stage on the same data directory is refused at once,
/// with a line that says why, and touches nothing.
#[test]
fn a_second_copy_of_a_stage_is_refused() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 20, boards: 1, ..FixtureConfig::default() }).unwrap();
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    for stage in STAGES {
        work.ok(stage, &[]);
    }
    let before = snapshot(&work.data());
    for (name, stage) in [("discover", Stage::Discover), ("download", Stage::Download), ("extract", Stage::Extract), ("index", Stage::Index)] {
        // The test holds the lock the way a running copy would.
        let held = StageLock::acquire(&work.layout(), stage).unwrap();
        let out = work.stage(name, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "a second luntan-{name} ran: {stderr}");
        assert!(stderr.contains(&format!("another luntan-{name} is already running")), "luntan-{name}: {stderr}");
        drop(held);
    }
    let after = snapshot(&work.data());
    let changed: Vec<_> = after.keys().filter(|p| !p.to_string_lossy().contains("luntan.db") && before.get(*p) != after.get(*p)).collect();
    assert!(changed.is_empty(), "refused copies changed {changed:?}");
}

/// Ctrl-C (SIGINT) stops a stage after the work in flight: it exits
/// normally, says how far it got, leaves everything consistent, and the
/// next run finishes the job.
#[test]
fn ctrl_c_stops_download_and_extract_cleanly() {
    // Enough threads that extract (256 a chunk, the next one already in
    // flight when a chunk's rows move) still has chunks left after a stop.
    let server =
        FixtureServer::start_blocking(FixtureConfig { threads: 400, boards: 2, latency: Duration::from_millis(10), ..FixtureConfig::default() }).unwrap();
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    work.ok("discover", &[]);
    for (stage, extra, says) in [("download", &["--in-flight", "4"][..], "stopped by Ctrl-C"), ("extract", &[][..], "stopped")] {
        let before = progress(&work, stage);
        let child = work.spawn(stage, extra);
        // Interrupt once work is under way (the handler is in place by then).
        let deadline = Instant::now() + Duration::from_secs(60);
        while progress(&work, stage) == before {
            assert!(Instant::now() < deadline, "{stage} made no progress");
            std::thread::sleep(Duration::from_millis(5));
        }
        let pid = child.id().to_string();
        assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{stage} after Ctrl-C: {}\n{stdout}\n{stderr}", out.status);
        assert!(stdout.contains(says), "{stage} should say it stopped and how far it got:\n{stdout}\n{stderr}");
        assert!(left(&work, stage) > 0, "{stage} did everything despite Ctrl-C; nothing proves it stopped");
        assert!(temp_files(work.dir.path()).is_empty(), "{stage} left temp files after a clean stop");
        work.ok(stage, &[]);
        assert_eq!(left(&work, stage), 0, "{stage}: the next run finishes the job");
    }
    assert_every_xml_parses(&work.data());
}

/// The same for discover and index: Ctrl-C lets the list pages (discover)
/// or the commit (index) in flight finish, then the stage exits normally and
/// says how far it got; the next run finishes the job.
#[test]
fn ctrl_c_stops_discover_and_index_cleanly() {
    let server =
        FixtureServer::start_blocking(FixtureConfig { threads: 400, boards: 8, latency: Duration::from_millis(20), ..FixtureConfig::default() }).unwrap();
    let work = Work::new();
    write_sites(&work, &server, false);
    let interrupt = |stage: &str, extra: &[&str], under_way: &dyn Fn() -> bool| {
        let child = work.spawn(stage, extra);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !under_way() {
            assert!(Instant::now() < deadline, "{stage} made no progress");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
        assert!(out.status.success(), "{stage} after Ctrl-C: {}\n{stdout}\n{stderr}", out.status);
        assert!(stdout.contains("stopped"), "{stage} should say it stopped and how far it got:\n{stdout}\n{stderr}");
    };
    interrupt("discover", &[], &|| work.layout().db_path().exists() && !rows(&work).is_empty());
    assert!(boards_walked(&work) < 8 * 3, "discover walked every board despite Ctrl-C");
    work.ok("discover", &[]);
    for stage in ["download", "extract"] {
        work.ok(stage, &[]);
    }
    interrupt("index", &["--commit-every", "20"], &|| progress(&work, "index") > 0);
    assert!(left(&work, "index") > 0, "index did everything despite Ctrl-C");
    work.ok("index", &[]);
    assert_eq!(left(&work, "index"), 0);
}
