//! What the integration tests share: running the real stage binaries against
//! a real fixture forum on a loopback port, over a temporary data directory.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use luntan_core::{DataDir, Store, ThreadState};

/// A stage binary built for this test run.
pub fn bin(name: &str) -> PathBuf {
    let path = match name {
        "discover" => env!("CARGO_BIN_EXE_luntan-discover"),
        "download" => env!("CARGO_BIN_EXE_luntan-download"),
        "extract" => env!("CARGO_BIN_EXE_luntan-extract"),
        "index" => env!("CARGO_BIN_EXE_luntan-index"),
        "search" => env!("CARGO_BIN_EXE_luntan-search"),
        "status" => env!("CARGO_BIN_EXE_luntan-status"),
        other => panic!("no binary {other}"),
    };
    PathBuf::from(path)
}

/// A temporary workspace: `data/` (with `sites/`) and `index/`.
pub struct Work {
    pub dir: tempfile::TempDir,
}

impl Work {
    pub fn new() -> Work {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("data/sites")).unwrap();
        std::fs::create_dir_all(dir.path().join("index")).unwrap();
        Work { dir }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn index(&self) -> PathBuf {
        self.dir.path().join("index")
    }

    pub fn sites(&self) -> PathBuf {
        self.data().join("sites")
    }

    pub fn layout(&self) -> DataDir {
        DataDir::new(self.data())
    }

    /// Runs one stage binary with `--data` (and `--index-dir` where it takes one).
    pub fn stage(&self, stage: &str, extra: &[&str]) -> Output {
        let mut cmd = Command::new(bin(stage));
        if stage != "search" {
            cmd.arg("--data").arg(self.data());
        }
        if matches!(stage, "index" | "search") {
            cmd.arg("--index-dir").arg(self.index());
        }
        cmd.args(extra);
        cmd.env("RUST_LOG", "warn");
        let out = cmd.output().unwrap_or_else(|e| panic!("running luntan-{stage}: {e}"));
        out
    }

    /// Runs a stage and insists it succeeded; returns its stdout.
    pub fn ok(&self, stage: &str, extra: &[&str]) -> String {
        let out = self.stage(stage, extra);
        assert!(
            out.status.success(),
            "luntan-{stage} {extra:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    /// Every thread row: (site, thread) → (state, fail reason, save date, pages).
    pub fn rows(&self) -> BTreeMap<(String, String), (ThreadState, Option<String>, Option<String>, Option<u32>)> {
        let store = Store::open(&self.layout().db_path()).unwrap();
        let mut out = BTreeMap::new();
        for state in ThreadState::ALL {
            for r in store.threads(None, state).unwrap() {
                out.insert((r.site, r.thread), (r.state, r.fail_reason, r.save_date, r.pages));
            }
        }
        out
    }

    /// Every file under the work dir with its bytes, for before/after comparisons.
    pub fn files(&self, under: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        for e in walkdir(under) {
            out.insert(e.strip_prefix(under).unwrap().to_owned(), std::fs::read(&e).unwrap());
        }
        out
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Folds every run of whitespace to one space and trims.
pub fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A tiny HTTP/1.1 server for shapes the fixture forum does not serve:
/// `routes` maps a path to (content type, body). Serves until the test ends.
pub fn serve_static(routes: Vec<(&'static str, &'static str, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]);
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, ct, body) = match routes.iter().find(|(p, _, _)| *p == path) {
                Some((_, ct, body)) => ("200 OK", *ct, body.clone()),
                None => ("404 Not Found", "text/html", b"<h1>404</h1>".to_vec()),
            };
            let head = format!("HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&body);
        }
    });
    format!("http://{addr}")
}
