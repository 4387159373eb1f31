//! A full disk is this machine's fault, not the forum's: download, extract
//! and index each stop with one line when the data directory's file system
//! fills, mark no thread failed, and a plain re-run after space is freed
//! finishes with every thread exact (compared with a crawl that never ran
//! out of space).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Work;
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

/// A small tmpfs mounted over a directory, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `size` as mount(8) takes it: `64m`, `96k`.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(at).status().is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system under `dir` until `leave` bytes are free.
fn fill(dir: &Path, leave: u64) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
    drop(f);
    let len = std::fs::metadata(&path).unwrap().len();
    // Shrink until the file system has `leave` bytes again.
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len.saturating_sub(leave)).unwrap();
    path
}

fn xml_files(work: &Work) -> BTreeMap<PathBuf, Vec<u8>> {
    let root = work.data().join("pages");
    work.files(&root)
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "xml"))
        .map(|(p, b)| (p.strip_prefix(&root).unwrap_or(&p).to_owned(), b))
        .collect()
}

/// Runs a stage that must stop on the full disk: a non-zero exit, one line
/// on stderr naming the fault, and no thread failed.
fn stops_on_full_disk(work: &Work, stage: &str) {
    let out = work.stage(stage, &["-q"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "luntan-{stage} went on with a full disk:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "luntan-{stage}: one line for a full disk: {lines:#?}");
    println!("luntan-{stage} on a full disk: {}", lines[0]);
    assert!(lines[0].contains("No space left") || lines[0].contains("disk is full"), "luntan-{stage}: {}", lines[0]);
    let failed: Vec<_> = work.rows().into_iter().filter(|(_, r)| r.0 == ThreadState::Failed && r.1.as_deref().is_some_and(|r| !r.contains("404"))).collect();
    assert!(failed.is_empty(), "luntan-{stage} blamed threads for the full disk: {failed:#?}");
}

#[test]
fn a_full_disk_stops_each_stage_with_one_line_and_a_rerun_finishes_exactly() {
    let cfg = FixtureConfig { threads: 80, boards: 2, forums: vec![ForumKind::Discuz], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");

    // What the crawl gives when nothing goes wrong.
    let reference = Work::new();
    server.write_site_files(&reference.sites()).unwrap();
    for stage in ["discover", "download", "extract", "index"] {
        reference.ok(stage, &["-q"]);
    }
    let want = xml_files(&reference);
    let want_rows = reference.rows();

    let work = Work::new();
    let Some(_fs) = Tmpfs::mount(&work.data(), "64m") else {
        eprintln!("cannot mount a tmpfs here (not root?): the full-disk test did not run");
        return;
    };
    std::fs::create_dir_all(work.sites()).unwrap();
    server.write_site_files(&work.sites()).unwrap();
    work.ok("discover", &["-q"]);

    // Pages and XML on a file system of their own, so that writing them is
    // what meets the full disk (with everything on one, SQLite usually meets
    // it first, which stops a stage the same way but tests less).
    let pages = work.data().join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let _pages_fs = Tmpfs::mount(&pages, "64m").expect("a second tmpfs");
    for (stage, leave) in [("download", 200 * 1024), ("extract", 100 * 1024)] {
        let filler = fill(&pages, leave);
        stops_on_full_disk(&work, stage);
        std::fs::remove_file(filler).unwrap();
        work.ok(stage, &["-q"]);
    }

    // The index has a directory of its own: its disk is the one to fill.
    let index_fs = Tmpfs::mount(&work.index(), "96k").expect("a second tmpfs");
    stops_on_full_disk(&work, "index");
    drop(index_fs);
    work.ok("index", &["-q"]);

    assert_eq!(
        work.rows().into_iter().map(|(k, r)| (k, r.0)).collect::<BTreeMap<_, _>>(),
        want_rows.into_iter().map(|(k, r)| (k, r.0)).collect::<BTreeMap<_, _>>(),
        "every row where a clean crawl leaves it"
    );
    assert_eq!(xml_files(&work), want, "every thread's XML byte-identical to a clean crawl's");
    assert!(common::temp_files(&work.data()).is_empty(), "temp files left behind");
}
