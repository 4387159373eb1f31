//! The crawler against a hostile forum: transient faults that a polite,
//! patient crawler gets past, permanent ones it must flag with a reason,
//! links and ids that try to lead it off the forum or out of its data
//! directory, lying charsets and invalid bytes. Every forum runs on its own
//! fixture server, so each is its own host with its own request log.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{assert_every_xml_parses, edit_site_file, files_under, fold, set_politeness, temp_files, Work};
use luntan_core::{Store, ThreadDoc, ThreadState};
use luntan_fixture::politeness::{arrivals_during_retry_after, busiest, min_gap};
use luntan_fixture::{BlockingFixture, FixtureConfig, FixtureServer, ForumKind, Hostility, RequestRecord, ThreadTruth, TransientFault};

/// The tests here measure request spacing to the millisecond; running them
/// side by side on a small machine would measure each other's load.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A plain fixture posing as another host: nothing may ever reach it.
fn other_host() -> BlockingFixture {
    let cfg = FixtureConfig { threads: 5, boards: 1, ..FixtureConfig::default() };
    // Linux routes all of 127/8 to loopback, so this is a different address,
    // not just a different port; fall back to a port where it is not.
    FixtureServer::start_blocking_at(cfg.clone(), SocketAddr::from(([127, 0, 0, 2], 0))).or_else(|_| FixtureServer::start_blocking(cfg)).unwrap()
}

/// One server per forum, all with the same hostility.
fn forums(threads: usize, hostility: &Hostility, kinds: &[ForumKind]) -> Vec<(ForumKind, BlockingFixture)> {
    kinds
        .iter()
        .map(|&k| {
            let cfg = FixtureConfig { threads, boards: 2, forums: vec![k], hostility: hostility.clone(), ..FixtureConfig::default() };
            (k, FixtureServer::start_blocking(cfg).unwrap())
        })
        .collect()
}

fn site_file(work: &Work, kind: ForumKind) -> PathBuf {
    work.sites().join(format!("{}.xml", kind.site_id()))
}

fn truth_threads(servers: &[(ForumKind, BlockingFixture)]) -> Vec<ThreadTruth> {
    servers.iter().flat_map(|(_, s)| s.truth().forums.into_iter().flat_map(|f| f.threads)).collect()
}

/// Takes each server's log (and clears it), keyed by site id.
fn take_logs(servers: &[(ForumKind, BlockingFixture)]) -> BTreeMap<&'static str, Vec<RequestRecord>> {
    servers
        .iter()
        .map(|(k, s)| {
            let log = s.requests();
            s.clear_requests();
            (k.site_id(), log)
        })
        .collect()
}

/// One request as the crawler logged it (`LUNTAN_REQUEST_LOG`).
#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct Claim {
    site: String,
    url: String,
    /// When the gate let it go, µs on the crawler's monotonic clock.
    start_us: u64,
    end_us: u64,
    /// The same moment on the wall clock.
    unix_us: u64,
    outcome: String,
}

impl Claim {
    /// The crawler's outcome is an error, not a page: a timeout, a body
    /// over the limit or a broken connection ends the request when the
    /// crawler walks away, whenever the server notices (an error status
    /// the server had finished before the crawler read it, so for those
    /// the server's end stands).
    fn gave_up(&self) -> bool {
        !(self.outcome.parse::<u16>().is_ok() || self.outcome.starts_with("redirect ") || self.outcome == "frame sent")
    }
}

/// Runs a stage with the crawler's own request log on; returns its stdout
/// and that log.
pub(crate) fn run_logged(work: &Work, logs: &Path, stage: &str, extra: &[&str]) -> (String, Vec<Claim>) {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let path = logs.join(format!("{stage}-{}.jsonl", RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let out = work.ok_env(stage, extra, &[("LUNTAN_REQUEST_LOG", &path)]);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let claims = text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {l}: {e}", path.display()))).collect();
    (out, claims)
}

fn path_and_query(url: &str) -> String {
    let u = url::Url::parse(url).unwrap();
    u[url::Position::BeforePath..url::Position::AfterQuery].to_owned()
}

/// Checks one stage's requests to one host against the site's limits, three ways:
///
/// 1. the crawler's own log, on its monotonic clock, exactly: no two
///    requests let go closer than `delay`, never more than `concurrency`
///    in flight;
/// 2. every request in the server's log is one the crawler's gate let go
///    (nothing slipped past it: no redirect hop, no hidden retry);
/// 3. the server's log: never more than `concurrency` in flight (a request
///    the crawler gave up on ends when it did, one answered when the
///    server says so), and no two
///    arrivals closer than `delay`, less 1 ms of timer slack or, when it is
///    larger, the spread of the lag between the crawler letting a request go
///    and the server seeing it (a busy machine delays some requests on their
///    way by milliseconds, and the server cannot tell that from early).
///
/// Returns that spread, for the record.
pub(crate) fn assert_polite(what: &str, server: &[RequestRecord], claims: &[Claim], concurrency: usize, delay: Duration) -> Duration {
    assert!(!server.is_empty(), "{what}: no requests at all");
    let show_claim = |c: &Claim| format!("{} at {}µs..{}µs ({})", c.url, c.start_us, c.end_us, c.outcome);
    let mut claims: Vec<&Claim> = claims.iter().collect();
    claims.sort_by_key(|c| c.start_us);
    for w in claims.windows(2) {
        let gap = Duration::from_micros(w[1].start_us - w[0].start_us);
        assert!(gap >= delay, "{what}: the crawler let two requests go {gap:?} apart (delay {delay:?}):\n{}\n{}", show_claim(w[0]), show_claim(w[1]));
    }
    let mut events: Vec<(u64, i32)> = claims.iter().flat_map(|c| [(c.start_us, 1), (c.end_us, -1)]).collect();
    events.sort();
    let (mut now, mut most) = (0, 0);
    for (_, d) in events {
        now += d;
        most = most.max(now);
    }
    assert!(most as usize <= concurrency, "{what}: the crawler had {most} requests in flight (limit {concurrency})");

    let mut pending: BTreeMap<String, std::collections::VecDeque<&Claim>> = BTreeMap::new();
    for c in &claims {
        pending.entry(path_and_query(&c.url)).or_default().push_back(c);
    }
    let mut lags: Vec<i64> = Vec::new();
    // The server's log, each request the crawler gave up on ending when it did.
    let mut seen: Vec<RequestRecord> = Vec::with_capacity(server.len());
    for r in server {
        let c = pending.get_mut(&r.path_and_query).and_then(|q| q.pop_front());
        let c = c.unwrap_or_else(|| panic!("{what}: the server got #{} {} that the crawler's gate never let go", r.seq, r.path_and_query));
        let received = r.received.duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64;
        lags.push(received - c.unix_us as i64);
        let mut r = r.clone();
        if c.gave_up() {
            // A stall or an oversized body the crawler walked away from is
            // still on the server's books until it notices the closed
            // socket, which on a busy machine can be after the crawler's
            // next request arrived (once in CI: 4 in flight, limit 3).
            let closed = Duration::from_micros((c.unix_us + (c.end_us - c.start_us)).saturating_sub(received as u64));
            let at_server = r.since_start + closed.max(Duration::from_micros(1));
            r.ended = Some(r.end().map_or(at_server, |e| e.min(at_server)));
        }
        seen.push(r);
    }
    let unsent: Vec<&&Claim> = pending.values().flatten().collect();
    assert!(unsent.is_empty(), "{what}: requests the crawler made that the server never saw: {unsent:?}");
    let spread = Duration::from_micros((lags.iter().max().unwrap() - lags.iter().min().unwrap()).max(0) as u64);

    let (on_server, open) = busiest(&seen);
    let show_open = || {
        open.iter()
            .map(|r| format!("#{} {} {:?}..{:?} ({}, {:?})", r.seq, r.path_and_query, r.since_start, r.end(), r.status, r.fault))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(on_server <= concurrency, "{what}: the server saw {on_server} requests in flight at once (limit {concurrency}):\n{}", show_open());
    if let Some((gap, a, b)) = min_gap(server) {
        let slack = spread.max(Duration::from_millis(1));
        let show = |r: &RequestRecord| format!("#{} {} at {:?} ({}, {:?})", r.seq, r.path_and_query, r.since_start, r.status, r.fault);
        assert!(gap + slack >= delay, "{what}: the server saw {} and {} {gap:?} apart (delay {delay:?}, lag spread {spread:?})", show(&a), show(&b));
    }
    spread
}

/// The words a failure reason must contain for each permanent fault.
fn expected_reason(fault: &str) -> &'static str {
    match fault {
        "always-500" | "later-page-500" => "HTTP 500",
        "redirect-loop" => "redirect",
        "off-host-redirect" => "leaves the forum",
        "gzip-bomb" | "huge-page" | "huge-chunked" => "larger than",
        "robots-disallowed" => "robots.txt",
        other => panic!("no expectation for fault {other}"),
    }
}

/// (site, thread) → (state, fail stage, fail reason, attempts).
type StagedRows = BTreeMap<(String, String), (ThreadState, Option<String>, Option<String>, i64)>;

/// Every thread row with its failure stage and reason.
fn rows_with_stage(work: &Work) -> StagedRows {
    work.all_rows()
        .into_iter()
        .map(|r| ((r.site.to_string(), r.thread.to_string()), (r.state, r.fail_stage.map(|s| s.as_str().to_string()), r.fail_reason, r.attempts)))
        .collect()
}

/// Compares one thread's XML with what its pages show; `None` when equal.
fn xml_mismatch(work: &Work, t: &ThreadTruth, save_date: &str) -> Option<String> {
    let path = work.layout().xml_path(&common::loc(&t.site, &t.board, save_date, &t.thread));
    let doc = ThreadDoc::from_xml(&std::fs::read_to_string(&path).ok()?).ok()?;
    let at = format!("{}/{}", t.site, t.thread);
    if fold(&doc.title) != fold(&t.title) {
        return Some(format!("{at}: title {:?} ≠ {:?}", doc.title, t.title));
    }
    if doc.posts.len() != t.posts.len() {
        return Some(format!("{at}: {} posts ≠ {}", doc.posts.len(), t.posts.len()));
    }
    for (got, want) in doc.posts.iter().zip(&t.posts) {
        if got.author != want.author || fold(&got.text()) != fold(&want.text) {
            return Some(format!("{at} floor {}: {:?}/{:?} ≠ {:?}/{:?}", want.floor, got.author, got.text(), want.author, want.text));
        }
    }
    None
}

/// Nothing written outside `data/` and `index/`; `canary/` (beside them,
/// where crafted ids aim) still empty; the `/tmp` target absent.
fn assert_nothing_written_outside(work: &Work) {
    for f in files_under(work.dir.path()) {
        let rel = f.strip_prefix(work.dir.path()).unwrap();
        assert!(rel.starts_with("data") || rel.starts_with("index"), "file written outside the data and index directories: {}", f.display());
    }
    let canary = work.dir.path().join("canary");
    assert_eq!(std::fs::read_dir(&canary).unwrap().count(), 0, "{} was written into", canary.display());
    assert!(!Path::new("/tmp/luntan-canary-pwned.html").exists(), "/tmp/luntan-canary-pwned.html was written");
    // Inside data/, files only where the layout puts them.
    let shape = regex::Regex::new(
        r"^(luntan\.db(-wal|-shm)?|\.[a-z]+\.lock|sites/[a-z]+\.xml|pages/[a-z]+/board[0-9A-Za-z_-]+/board[0-9A-Za-z_-]+_[0-9]{8}/article[0-9A-Za-z_-]+((_p[0-9]+)?\.html|\.http|\.xml))$",
    )
    .unwrap();
    for f in files_under(&work.data()) {
        let rel = f.strip_prefix(work.data()).unwrap().to_string_lossy().into_owned();
        assert!(shape.is_match(&rel), "unexpected file in the data directory: {rel}");
    }
}

/// At 10 % transient faults (every kind: 5xx, 429, resets, stalls, cut
/// bodies) plus every permanent fault and content trap, every thread the
/// forum can eventually serve ends indexed, every one it cannot is failed at
/// download with the right reason, `--retry-failed` brings back threads
/// whose retries ran out, no host sees more than the site's limits, and no
/// other host is ever contacted.
#[test]
fn ten_percent_transient_faults_lose_no_servable_thread() {
    let _serial = one_at_a_time();
    let other = other_host();
    // Invalid bytes are left to the test below: on the UTF-8 forum they make
    // luntan misread pagers today, which is an extraction bug, not a crawl one.
    let hostility = Hostility { seed: 7, stall: Duration::from_secs(3), other_host: other.base_url(), invalid_bytes_percent: 0, ..Hostility::percent(10) };
    let servers = forums(100, &hostility, &ForumKind::ALL);
    let work = Work::new();
    std::fs::create_dir_all(work.dir.path().join("canary")).unwrap();
    for (_, s) in &servers {
        s.write_site_files(&work.sites()).unwrap();
    }
    let polite = |retries: u32| format!(r#"delay-ms="20" concurrency="3" timeout-ms="1000" retries="{retries}" robots="true""#);
    for (k, _) in &servers {
        set_politeness(&site_file(&work, *k), &polite(4));
    }
    let truth = truth_threads(&servers);
    assert!(truth.iter().any(|t| t.unservable.is_some()) && truth.iter().any(|t| t.deleted));
    let claims_dir = tempfile::tempdir().unwrap();
    // Per stage run: its name, each server's log, the crawler's log.
    type StageLogs<'a> = (String, BTreeMap<&'a str, Vec<RequestRecord>>, Vec<Claim>);
    let mut logs: Vec<StageLogs> = Vec::new();

    let (out, claims) = run_logged(&work, claims_dir.path(), "discover", &[]);
    logs.push(("discover".into(), take_logs(&servers), claims));
    assert!(out.contains(" 0 errors"), "every list page is reachable with 4 retries: {out}");
    let rows = work.rows();
    let want: BTreeSet<(String, String)> = truth.iter().map(|t| (t.site.clone(), t.thread.clone())).collect();
    assert_eq!(rows.keys().cloned().collect::<BTreeSet<_>>(), want, "discover found exactly the forum's threads");

    // One retry only: URLs that fail twice run out, and are flagged.
    for (k, _) in &servers {
        set_politeness(&site_file(&work, *k), &polite(1));
    }
    let (_, claims) = run_logged(&work, claims_dir.path(), "download", &[]);
    logs.push(("download, 1 retry".into(), take_logs(&servers), claims));
    let first = rows_with_stage(&work);
    let gave_up: Vec<&ThreadTruth> = truth.iter().filter(|t| t.servable() && first[&(t.site.clone(), t.thread.clone())].0 == ThreadState::Failed).collect();
    assert!(!gave_up.is_empty(), "with one retry some servable thread should have run out of retries");
    for t in &gave_up {
        let (_, stage, reason, _) = &first[&(t.site.clone(), t.thread.clone())];
        assert_eq!(stage.as_deref(), Some("download"));
        assert!(reason.as_deref().is_some_and(|r| r.contains("gave up after 2 attempts") || r.contains("Retry-After")), "{}/{}: {reason:?}", t.site, t.thread);
    }

    for (k, _) in &servers {
        set_politeness(&site_file(&work, *k), &polite(4));
    }
    let (_, claims) = run_logged(&work, claims_dir.path(), "download", &["--retry-failed"]);
    logs.push(("download --retry-failed".into(), take_logs(&servers), claims));
    work.ok("extract", &[]);
    work.ok("index", &[]);

    let rows = rows_with_stage(&work);
    assert_eq!(rows.len(), truth.len(), "no thread appeared from a hostile link");
    let mut reasons = BTreeMap::new();
    for t in &truth {
        let (state, stage, reason, attempts) = &rows[&(t.site.clone(), t.thread.clone())];
        let at = format!("{}/{} ({:?})", t.site, t.thread, t.unservable);
        if t.servable() {
            assert_eq!(*state, ThreadState::Indexed, "{at}: {reason:?}");
            continue;
        }
        assert_eq!(*state, ThreadState::Failed, "{at}");
        assert_eq!(stage.as_deref(), Some("download"), "{at}");
        let reason = reason.as_deref().unwrap_or_default();
        let want = t.unservable.as_deref().map_or("404", expected_reason);
        assert!(reason.contains(want) && reason.contains("http://"), "{at}: reason {reason:?} should say {want:?} and name the URL");
        assert_eq!(*attempts, 2, "{at}: failed once per download run (--retry-failed re-queued it)");
        reasons.insert(t.unservable.clone().unwrap_or_else(|| "deleted".into()), reason.to_owned());
    }
    assert!(reasons.len() >= 9, "every permanent fault kind and deleted threads: {reasons:#?}");

    // Every XML parses back, the index holds each indexed thread once.
    let indexed = rows.values().filter(|r| r.0 == ThreadState::Indexed).count();
    assert_eq!(assert_every_xml_parses(&work.data()), indexed);
    let catalog = luntan_search::Catalog::open(&work.index()).unwrap();
    assert_eq!(catalog.num_docs() as usize, indexed);
    assert!(temp_files(work.dir.path()).is_empty(), "{:?}", temp_files(work.dir.path()));

    // Politeness, per host and per stage (each stage is its own process with its own gate).
    let mut faults_seen = BTreeSet::new();
    let mut spreads = Vec::new();
    for (stage, by_site, claims) in &logs {
        for (site, log) in by_site {
            let mine: Vec<Claim> = claims.iter().filter(|c| c.site == *site).cloned().collect();
            spreads.push(assert_polite(&format!("{site} during {stage}"), log, &mine, 3, Duration::from_millis(20)));
            faults_seen.extend(log.iter().filter_map(|r| r.fault));
            for r in log.iter().filter(|r| r.status == 429) {
                // Requests already on their way when the 429 left get 2 ms to arrive.
                let early = arrivals_during_retry_after(log, r, hostility.retry_after, Duration::from_millis(2));
                assert!(early.is_empty(), "{site} during {stage}: requests inside the Retry-After of #{}: {early:#?}", r.seq);
            }
            for r in log {
                let p = r.path_and_query.to_ascii_lowercase();
                assert!(!p.contains("passwd") && !p.contains("canary") && !p.contains("%2e"), "{site}: crawler followed a crafted link: {p}");
            }
        }
    }
    eprintln!("lag spread between the crawler letting a request go and the server seeing it, per host and stage: {spreads:?}");
    for f in TransientFault::ALL {
        assert!(faults_seen.contains(f.name()), "fault {} never happened: {faults_seen:?}", f.name());
    }
    // A disallowed page is never asked for.
    for t in truth.iter().filter(|t| t.unservable.as_deref() == Some("robots-disallowed")) {
        let asked = logs.iter().flat_map(|(_, l, _)| l[t.site.as_str()].iter()).any(|r| r.path_and_query == t.url_path);
        assert!(!asked, "{}/{}: fetched although robots.txt disallows it", t.site, t.thread);
    }
    assert!(other.requests().is_empty(), "the other host was contacted: {:?}", other.requests());
    assert_nothing_written_outside(&work);
}

/// What the XML says for pages whose charset lies or that hold invalid
/// bytes: the same text the truth has, like every other page.
#[test]
fn lying_charsets_and_invalid_bytes_still_give_the_right_text() {
    let _serial = one_at_a_time();
    let hostility = Hostility { seed: 11, mislabel_percent: 30, invalid_bytes_percent: 30, big_percent: 5, big_bytes: 1 << 20, ..Hostility::default() };
    let servers = forums(60, &hostility, &ForumKind::ALL);
    let work = Work::new();
    for (k, s) in &servers {
        s.write_site_files(&work.sites()).unwrap();
        set_politeness(&site_file(&work, *k), r#"delay-ms="0" concurrency="4" retries="2""#);
    }
    for stage in ["discover", "download", "extract", "index"] {
        work.ok(stage, &[]);
    }
    let truth = truth_threads(&servers);
    let rows = work.rows();
    let fixtures: BTreeMap<&str, &BlockingFixture> = servers.iter().map(|(k, s)| (k.site_id(), s)).collect();
    // Why a thread's pages are hostile, to say which trap caught luntan.
    let traps = |t: &ThreadTruth| -> String {
        let fx = fixtures[t.site.as_str()].fixture();
        let mut all: BTreeSet<&str> = BTreeSet::new();
        all.extend(fx.content_traps(&t.url_path));
        if all.is_empty() {
            "page 2+ only".to_string()
        } else {
            all.into_iter().collect::<Vec<_>>().join("+")
        }
    };
    let mut wrong: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in truth.iter().filter(|t| t.servable()) {
        let (state, reason, date, _) = &rows[&(t.site.clone(), t.thread.clone())];
        let problem = if *state != ThreadState::Indexed {
            Some(format!("{}/{} not indexed: {reason:?}", t.site, t.thread))
        } else {
            xml_mismatch(&work, t, date.as_deref().unwrap())
        };
        if let Some(p) = problem {
            wrong.entry(format!("{} page 1 {}", t.site, traps(t))).or_default().push(p);
        }
    }
    assert_every_xml_parses(&work.data());
    let summary: Vec<String> =
        wrong.iter().map(|(what, v)| format!("{what}: {} threads, e.g. {}", v.len(), v[0].chars().take(240).collect::<String>())).collect();
    assert!(wrong.is_empty(), "threads whose XML is missing or differs from their pages:\n{}", summary.join("\n"));
}

/// With site concurrency 2 and a 50 ms delay, a forum that throttles (429
/// with Retry-After), errs, resets, stalls and cuts bodies still never sees
/// more than 2 requests at once, nor two starts closer than 50 ms, nor any
/// request while a Retry-After runs; a forum whose robots.txt says
/// `Crawl-delay: 0.1` gets its requests 100 ms apart though the site file
/// asks for no delay at all.
#[test]
fn politeness_holds_under_throttling_and_crawl_delay() {
    let _serial = one_at_a_time();
    let throttling = Hostility {
        seed: 3,
        transient_percent: 15,
        faults: vec![TransientFault::TooManyRequests, TransientFault::Status503, TransientFault::Reset, TransientFault::Stall, TransientFault::Truncated],
        retry_after: Duration::from_secs(1),
        stall: Duration::from_millis(1500),
        ..Hostility::default()
    };
    let crawl_delay = Hostility { crawl_delay: Some(Duration::from_millis(100)), ..Hostility::default() };
    let dz = forums(60, &throttling, &[ForumKind::Discuz]);
    let bbs = forums(25, &crawl_delay, &[ForumKind::Bbs]);
    let work = Work::new();
    dz[0].1.write_site_files(&work.sites()).unwrap();
    bbs[0].1.write_site_files(&work.sites()).unwrap();
    set_politeness(&site_file(&work, ForumKind::Discuz), r#"delay-ms="50" concurrency="2" timeout-ms="500" retries="4" robots="true""#);
    set_politeness(&site_file(&work, ForumKind::Bbs), r#"delay-ms="0" concurrency="2" timeout-ms="3000" retries="2" robots="true""#);
    let both: Vec<(ForumKind, BlockingFixture)> = dz.into_iter().chain(bbs).collect();
    let mut throttled = 0;
    let claims_dir = tempfile::tempdir().unwrap();
    for stage in ["discover", "download"] {
        let (_, claims) = run_logged(&work, claims_dir.path(), stage, &[]);
        let logs = take_logs(&both);
        let of = |site: &str| claims.iter().filter(|c| c.site == site).cloned().collect::<Vec<Claim>>();
        let dz_log = &logs["dz"];
        assert_polite(&format!("dz during {stage}"), dz_log, &of("dz"), 2, Duration::from_millis(50));
        for r in dz_log.iter().filter(|r| r.status == 429) {
            throttled += 1;
            let early = arrivals_during_retry_after(dz_log, r, Duration::from_secs(1), Duration::from_millis(2));
            assert!(early.is_empty(), "dz during {stage}: requests inside the Retry-After of #{}: {early:#?}", r.seq);
        }
        // robots.txt comes first and sets the delay; what follows keeps it.
        let bbs_log = &logs["bbs"];
        assert_eq!(bbs_log[0].path_and_query, "/robots.txt");
        let mut bbs_claims = of("bbs");
        bbs_claims.sort_by_key(|c| c.start_us);
        assert_eq!(path_and_query(&bbs_claims[0].url), "/robots.txt");
        assert_polite(&format!("bbs during {stage}"), &bbs_log[1..], &bbs_claims[1..], 2, Duration::from_millis(100));
    }
    assert!(throttled > 0, "the throttling forum never sent a 429; the test proves nothing");
    let truth = truth_threads(&both);
    let rows = work.rows();
    for t in truth.iter().filter(|t| t.servable()) {
        let (state, reason, _, _) = &rows[&(t.site.clone(), t.thread.clone())];
        assert_eq!(*state, ThreadState::Saved, "{}/{}: {reason:?}", t.site, t.thread);
    }
}

/// Site patterns written loosely enough to capture anything
/// (`(?P<thread>[^&#]+)`), pages full of `../../etc/passwd`, `%2e%2e%2f`,
/// crafted thread and board ids aimed at a `canary` directory beside the
/// data directory and at `/tmp`, links and redirects to another host: after
/// a full crawl no file exists outside the data directory, no row has an id
/// that could name a path, and the other host got no request.
#[test]
fn traversal_ids_and_off_host_links_go_nowhere() {
    let _serial = one_at_a_time();
    let other = other_host();
    let hostility = Hostility {
        seed: 5,
        links: true,
        permanent: vec![luntan_fixture::PermanentFault::OffHostRedirect],
        other_host: other.base_url(),
        ..Hostility::default()
    };
    let servers = forums(40, &hostility, &ForumKind::ALL);
    let work = Work::new();
    std::fs::create_dir_all(work.dir.path().join("canary")).unwrap();
    let _ = std::fs::remove_file("/tmp/luntan-canary-pwned.html");
    for (k, s) in &servers {
        s.write_site_files(&work.sites()).unwrap();
        let path = site_file(&work, *k);
        set_politeness(&path, r#"delay-ms="0" concurrency="4" retries="1""#);
        // The loosest patterns a user might write: ids are whatever sits there.
        edit_site_file(&path, |text| {
            text.replace("<thread><![CDATA[", "<thread><![CDATA[LOOSE")
                .replace("<board><![CDATA[", "<board><![CDATA[LOOSE")
                .replace("LOOSE/dz/forum\\.php\\?mod=viewthread&tid={thread}$", r"/dz/forum\.php\?mod=viewthread&tid=(?P<thread>[^&#]+)$")
                .replace("LOOSE/dz/forum\\.php\\?mod=forumdisplay&fid={board}$", r"/dz/forum\.php\?mod=forumdisplay&fid=(?P<board>[^&#]+)$")
                .replace("LOOSE/phpbb/viewtopic\\.php\\?t={thread}$", r"/phpbb/viewtopic\.php\?t=(?P<thread>[^&#]+)$")
                .replace("LOOSE/phpbb/viewforum\\.php\\?f={board}$", r"/phpbb/viewforum\.php\?f=(?P<board>[^&#]+)$")
                .replace("LOOSE/bbs/topic/{thread}/[^/?#]+/$", r"/bbs/topic/(?P<thread>[^/?#]+)/[^/?#]+/$")
                .replace("LOOSE/bbs/board/{board}/$", r"/bbs/board/(?P<board>[^/?#]+)/$")
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("LOOSE"), "a pattern was not loosened:\n{text}");
    }
    let out = work.stage_env("discover", &[], &[]);
    let (discover, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "discover failed: {discover}\n{stderr}");
    let refused: usize = regex::Regex::new(r"(\d+) refused links").unwrap().captures(&discover).expect("summary names refused links")[1].parse().unwrap();
    assert!(refused > 0, "crafted ids should be refused, not silently dropped: {discover}");
    // Why, in one line a forum: the first link refused, with its id and why.
    let told: Vec<&str> = stderr.lines().filter(|l| l.contains("name no usable board or thread, the first http")).collect();
    assert!(!told.is_empty() && told.len() <= servers.len(), "{stderr}");
    assert!(told.iter().all(|l| l.contains(": id \"")), "{told:?}");
    for stage in ["download", "extract", "index"] {
        work.ok(stage, &[]);
    }

    let truth = truth_threads(&servers);
    let rows = rows_with_stage(&work);
    let want: BTreeSet<(String, String)> = truth.iter().map(|t| (t.site.clone(), t.thread.clone())).collect();
    assert_eq!(rows.keys().cloned().collect::<BTreeSet<_>>(), want, "exactly the forum's threads, none from crafted links");
    let store = Store::open(&work.layout().db_path()).unwrap();
    for (site, thread) in rows.keys() {
        let row = store.thread(site, thread).unwrap().unwrap();
        luntan_core::ids::BoardId::parse(&row.board).unwrap();
        luntan_core::ids::ThreadId::parse(&row.thread).unwrap();
    }
    for t in &truth {
        let (state, _, reason, _) = &rows[&(t.site.clone(), t.thread.clone())];
        if t.unservable.is_some() {
            assert!(reason.as_deref().is_some_and(|r| r.contains("leaves the forum")), "{}/{}: {reason:?}", t.site, t.thread);
        } else if !t.deleted {
            assert_eq!(*state, ThreadState::Indexed, "{}/{}: {reason:?}", t.site, t.thread);
        }
    }
    for (k, s) in &servers {
        for r in s.requests() {
            let p = r.path_and_query.to_ascii_lowercase();
            assert!(!p.contains("passwd") && !p.contains("canary") && !p.contains("%2e") && !p.contains("%2f"), "{}: fetched a crafted URL {p}", k.site_id());
        }
    }
    assert!(other.requests().is_empty(), "the other host was contacted: {:?}", other.requests());
    assert_every_xml_parses(&work.data());
    assert_nothing_written_outside(&work);
}

/// Found by `fuzz/` (target `site_file`): a CSS selector that scraper
/// rejects with a message holding a line break made the site file's error
/// two lines, not the one `path: line N: field: what` line promised.
#[test]
fn site_file_error_for_a_bad_selector_is_one_line() {
    let text = include_str!("../../fuzz/corpus/site_file/phpbb.xml").replace(r#"title="h2.topic-title a""#, r#"title="h..topic-title a""#);
    assert!(text.contains("h..topic-title"), "the seed changed; adapt the test");
    let e = luntan_core::Site::parse(&text, Path::new("phpbb.xml")).unwrap_err().to_string();
    assert!(e.starts_with("phpbb.xml: line "), "{e}");
    assert!(!e.contains('\n'), "a site file error must be one line: {e:?}");
}

/// Found by `fuzz/` (target `site_file`): quick-xml quotes the end tag it
/// choked on, line breaks and all, so an ill-formed site file's error was
/// two lines.
#[test]
fn site_file_error_for_an_ill_formed_tag_is_one_line() {
    let text = "<site id=\"x\">\n  <home>http://x.test/</home>\n  <links><board><![CDATA[fid={board}$]]></br=\"a\"\n          strip=\"b\"/>\n</site>\n";
    let e = luntan_core::Site::parse(text, Path::new("x.xml")).unwrap_err().to_string();
    assert!(e.starts_with("x.xml: line "), "{e}");
    assert!(!e.contains('\n'), "a site file error must be one line: {e:?}");
}

/// Found by `fuzz/` (target `site_file`): in a site file that starts with a
/// UTF-8 byte order mark (as Windows editors write them), quick-xml's error
/// position no longer matched the text's bytes, and finding its line sliced
/// the text inside a Chinese character: luntan-discover panicked instead of
/// naming the broken file.
#[test]
fn site_file_with_a_bom_and_broken_xml_is_an_error_not_a_panic() {
    let text = "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<site id=\"dz\">\n  <name>清水河\t</h瀔</name>\n  <home>http://x.test/</home>\n</site>\n";
    let e = std::panic::catch_unwind(|| luntan_core::Site::parse(text, Path::new("dz.xml")))
        .unwrap_or_else(|_| panic!("Site::parse panicked on a BOM-prefixed, ill-formed site file"))
        .unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.to_string().starts_with("dz.xml: line 3: xml: "), "{e}");
}

/// Found by `fuzz/` (target `site_file`): serde's messages quote the text
/// they choke on in backticks, and the site-file error took that quote for
/// the field's name, so an unrecognized entity spanning lines made the
/// "field" a multi-line chunk of the file.
#[test]
fn site_file_error_names_a_field_not_a_chunk_of_the_file() {
    let text = "<site id=\"x\">\n  <home>http://x.test/</home>\n  <links><board>fid=&fid{board}\n  later;</board><thread>tid={thread}</thread></links>\n  <thread body=\"p\"/>\n</site>\n";
    let e = luntan_core::Site::parse(text, Path::new("x.xml")).unwrap_err();
    assert!(!e.to_string().contains('\n'), "a site file error must be one line: {e}");
    assert!(e.field.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "field {:?}", e.field);
}
