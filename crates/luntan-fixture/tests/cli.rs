//! The `luntan-fixture` binary, run as scripts and other crates' tests run it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use luntan_fixture::{Fixture, FixtureConfig, ForumKind, Truth};

const BIN: &str = env!("CARGO_BIN_EXE_luntan-fixture");

#[test]
fn serve_prints_one_line_writes_sites_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let sites = dir.path().join("sites");
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--threads", "40", "--boards", "2", "--sites-out"])
        .arg(&sites)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let base = line.trim_end().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line:?}")).to_owned();
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with('/'), "{base}");
    for id in ["dz", "phpbb", "bbs"] {
        let text = std::fs::read_to_string(sites.join(format!("{id}.xml"))).unwrap();
        assert!(text.contains(&format!("<home>{base}")), "{text}");
    }

    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(format!("GET /robots.txt HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("User-agent: *"));

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "server ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "only one line on stdout");
}

#[test]
fn truth_prints_the_models_truth() {
    let out = Command::new(BIN).args(["truth", "--seed", "7", "--threads", "25", "--boards", "2", "--forums", "phpbb,bbs"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Truth = serde_json::from_slice(&out.stdout).unwrap();
    let want =
        Fixture::new(FixtureConfig { seed: 7, threads: 25, boards: 2, forums: vec![ForumKind::Phpbb, ForumKind::Bbs], ..FixtureConfig::default() }).truth();
    assert_eq!(printed, want);
    assert_eq!(printed.forums[0].encoding, "Big5");
}

#[test]
fn sites_writes_files_and_bad_input_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN).args(["sites", "--base", "http://127.0.0.1:9/", "--out"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
    let bad = Command::new(BIN).args(["sites", "--base", "ftp://x", "--out"]).arg(dir.path()).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not an http(s) base URL"));
    let bad = Command::new(BIN).args(["truth", "--forums", "vbulletin"]).output().unwrap();
    assert!(!bad.status.success());
    let bad = Command::new(BIN).args(["truth", "--boards", "0"]).output().unwrap();
    assert!(!bad.status.success());
}

#[test]
fn the_extra_forums_are_served_and_written_only_when_named() {
    let out = Command::new(BIN).args(["truth", "--threads", "30", "--boards", "2", "--forums", "dzx,nx"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: Truth = serde_json::from_slice(&out.stdout).unwrap();
    let want = Fixture::new(FixtureConfig { threads: 30, boards: 2, forums: vec![ForumKind::DiscuzX, ForumKind::Nexus], ..FixtureConfig::default() }).truth();
    assert_eq!(printed, want);
    assert_eq!(printed.forums.iter().map(|f| (f.site.as_str(), f.encoding.as_str())).collect::<Vec<_>>(), [("dzx", "GB18030"), ("nx", "UTF-8")]);
    let written = |forums: &[&str]| -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(BIN).args(["sites", "--base", "http://127.0.0.1:9/", "--out"]).arg(dir.path()).args(forums).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    assert_eq!(written(&[]), ["bbs.xml", "dz.xml", "phpbb.xml"]);
    assert_eq!(written(&["--forums", "default"]), ["bbs.xml", "dz.xml", "phpbb.xml"]);
    assert_eq!(written(&["--forums", "nx,dzx"]), ["dzx.xml", "nx.xml"]);
    assert_eq!(written(&["--forums", "all"]), ["bbs.xml", "dz.xml", "dzx.xml", "md.xml", "nx.xml", "phpbb.xml"]);
    assert_eq!(written(&["--forums", "md"]), ["md.xml"]);
    assert_eq!(written(&["--forums", "default,dzx"]), ["bbs.xml", "dz.xml", "dzx.xml", "phpbb.xml"]);
    let bad = Command::new(BIN).args(["truth", "--forums", "dzx,vbulletin"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("dzx, nx"));
}

#[test]
fn hostile_flags_reach_the_truth_and_the_server_and_the_request_log_is_written() {
    let truth = |extra: &[&str]| -> Truth {
        let out = Command::new(BIN).args(["truth", "--threads", "60", "--forums", "dz"]).args(extra).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let unservable = |t: &Truth| t.forums[0].threads.iter().filter_map(|t| t.unservable.clone()).collect::<std::collections::BTreeSet<_>>();
    let all = unservable(&truth(&["--hostile", "10"]));
    assert_eq!(all.len(), luntan_fixture::PermanentFault::ALL.len(), "{all:?}");
    assert!(unservable(&truth(&["--hostile", "10", "--permanent", "none"])).is_empty());
    assert_eq!(unservable(&truth(&["--permanent", "gzip-bomb"])), ["gzip-bomb".to_string()].into());
    assert!(unservable(&truth(&[])).is_empty());
    let bad = Command::new(BIN).args(["truth", "--faults", "418"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("unknown fault"));

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let mut child = Command::new(BIN)
        .args(["serve", "--threads", "20", "--forums", "bbs", "--hostile", "100", "--faults", "503", "--max-failures", "1", "--request-log"])
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on http://").unwrap().trim_end_matches('/').to_owned();
    let status = |path: &str| {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        resp.split(' ').nth(1).unwrap_or("").to_owned()
    };
    assert_eq!(status("/bbs/"), "503", "every URL fails its first request");
    assert_eq!(status("/bbs/"), "200", "and only its first");
    assert_eq!(status("/robots.txt"), "200", "robots.txt never fails");
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    assert!(child.wait().unwrap().success());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["fault"], "503");
    assert_eq!(lines[1]["status"], 200);
    assert!(lines.iter().all(|l| l["end_us"].as_u64() >= l["start_us"].as_u64()), "{lines:?}");
}
