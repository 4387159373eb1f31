//! What the integration tests share: running the real stage binaries against
//! a real fixture forum on a loopback port, over a temporary data directory.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use luntan_core::{DataDir, Store, ThreadState};

/// Thread rows by (site, thread): (state, fail reason, save date, pages).
pub type Rows = BTreeMap<(String, String), (ThreadState, Option<String>, Option<String>, Option<u32>)>;

/// A stage binary built for this test run.
pub fn bin(name: &str) -> PathBuf {
    let path = match name {
        "discover" => env!("CARGO_BIN_EXE_luntan-discover"),
        "download" => env!("CARGO_BIN_EXE_luntan-download"),
        "extract" => env!("CARGO_BIN_EXE_luntan-extract"),
        "index" => env!("CARGO_BIN_EXE_luntan-index"),
        "search" => env!("CARGO_BIN_EXE_luntan-search"),
        "status" => env!("CARGO_BIN_EXE_luntan-status"),
        "export" => env!("CARGO_BIN_EXE_luntan-export"),
        "state" => env!("CARGO_BIN_EXE_luntan-state"),
        "learn" => env!("CARGO_BIN_EXE_luntan-learn"),
        "media" => env!("CARGO_BIN_EXE_luntan-media"),
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
        self.stage_env(stage, extra, &[])
    }

    /// [`Work::stage`] with extra environment variables.
    pub fn stage_env(&self, stage: &str, extra: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(bin(stage));
        if stage != "search" {
            cmd.arg("--data").arg(self.data());
        }
        if matches!(stage, "index" | "search") {
            cmd.arg("--index-dir").arg(self.index());
        }
        cmd.args(extra);
        cmd.env("RUST_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap_or_else(|e| panic!("running luntan-{stage}: {e}"));
        out
    }

    /// Starts one stage binary (arguments as [`Work::stage`]) without waiting,
    /// output captured.
    pub fn spawn(&self, stage: &str, extra: &[&str]) -> Child {
        let mut cmd = Command::new(bin(stage));
        if stage != "search" {
            cmd.arg("--data").arg(self.data());
        }
        if matches!(stage, "index" | "search") {
            cmd.arg("--index-dir").arg(self.index());
        }
        cmd.args(extra).env("RUST_LOG", "warn").stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().unwrap_or_else(|e| panic!("starting luntan-{stage}: {e}"))
    }

    /// Runs a stage and insists it succeeded; returns its stdout.
    pub fn ok(&self, stage: &str, extra: &[&str]) -> String {
        self.ok_env(stage, extra, &[])
    }

    /// [`Work::ok`] with extra environment variables.
    pub fn ok_env(&self, stage: &str, extra: &[&str], env: &[(&str, &Path)]) -> String {
        let out = self.stage_env(stage, extra, env);
        assert!(
            out.status.success(),
            "luntan-{stage} {extra:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    /// Every thread row, in every state.
    pub fn all_rows(&self) -> Vec<luntan_core::store::ThreadRow> {
        let store = Store::open(&self.layout().db_path()).unwrap();
        ThreadState::ALL.iter().flat_map(|&state| store.threads(None, state).unwrap()).collect()
    }

    /// Every thread row: (site, thread) → (state, fail reason, save date, pages).
    pub fn rows(&self) -> Rows {
        self.all_rows()
            .into_iter()
            .map(|r| ((r.site.to_string(), r.thread.to_string()), (r.state, r.fail_reason, r.save_date.map(|d| d.to_string()), r.pages)))
            .collect()
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

/// Runs `stages` again over a finished crawl and insists nothing changed:
/// no new thread, nothing saved, the same rows, no file rewritten (the
/// database and lock files aside).
pub fn assert_second_run_changes_nothing(work: &Work, stages: &[&str]) {
    let rows_before = work.rows();
    let files_before = work.files(work.dir.path());
    let again: BTreeMap<&str, String> = stages.iter().map(|s| (*s, work.ok(s, &[]))).collect();
    assert!(again["discover"].contains(" 0 new threads"), "{}", again["discover"]);
    assert!(again["download"].contains("0 saved"), "{}", again["download"]);
    assert_eq!(work.rows(), rows_before);
    let files_after = work.files(work.dir.path());
    let changed: Vec<_> = files_after
        .iter()
        .filter(|(p, bytes)| files_before.get(*p) != Some(*bytes))
        .map(|(p, _)| p.display().to_string())
        .filter(|p| !p.ends_with("luntan.db") && !p.ends_with("luntan.db-wal") && !p.ends_with("luntan.db-shm") && !p.ends_with(".lock"))
        .collect();
    assert!(changed.is_empty(), "a second run rewrote files: {changed:?}");
}

/// Every file under `dir` (recursively), sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    walkdir(dir)
}

/// Temporary files a killed writer may leave (`*.luntan-tmp`) under `dir`.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    walkdir(dir).into_iter().filter(|p| p.to_string_lossy().ends_with(luntan_core::layout::TEMP_SUFFIX)).collect()
}

/// Parses every thread XML (`article*.xml`) under `dir` back with
/// [`luntan_core::ThreadDoc::from_xml`], panicking on the first that does
/// not; returns how many there were.
pub fn assert_every_xml_parses(dir: &Path) -> usize {
    let mut n = 0;
    for p in walkdir(dir) {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with("article") && name.ends_with(".xml") {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            luntan_core::ThreadDoc::from_xml(&text).unwrap_or_else(|e| panic!("{}: does not parse back: {e}", p.display()));
            n += 1;
        }
    }
    n
}

/// Rewrites a site file in place (tests tune politeness, patterns, …).
pub fn edit_site_file(path: &Path, edit: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let edited = edit(text.clone());
    assert_ne!(edited, text, "{}: the edit changed nothing", path.display());
    std::fs::write(path, edited).unwrap();
}

/// Replaces a site file's `<politeness …/>` element with one carrying `attrs`.
pub fn set_politeness(path: &Path, attrs: &str) {
    edit_site_file(path, |text| {
        let start = text.find("<politeness").expect("site file has a politeness element");
        let end = start + text[start..].find("/>").expect("politeness is an empty element") + 2;
        format!("{}<politeness {attrs}/>{}", &text[..start], &text[end..])
    });
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

/// The fixture's live threads as the extract stage would leave them: each
/// written to thread XML and parsed back, so search tests index exactly
/// what `luntan-index` would read, without a crawl.
pub fn fixture_docs(truth: &luntan_fixture::Truth) -> Vec<luntan_core::ThreadDoc> {
    use luntan_core::{Post, ThreadDoc};
    let mut out = Vec::new();
    for f in &truth.forums {
        for t in f.threads.iter().filter(|t| t.servable()) {
            let doc = ThreadDoc {
                site: t.site.parse().unwrap(),
                board: t.board.parse().unwrap(),
                thread: t.thread.parse().unwrap(),
                forum: f.name.clone(),
                url: format!("http://fixture.invalid{}", t.url_path),
                title: t.title.clone(),
                posted: t.posts.first().map(|p| p.time.clone()),
                saved: "20261130".parse().unwrap(),
                encoding: f.encoding.clone(),
                pages: t.pages,
                posts: t
                    .posts
                    .iter()
                    .map(|p| Post {
                        floor: p.floor,
                        author: p.author.clone(),
                        time: Some(p.time.clone()),
                        paragraphs: p.text.split('\n').filter(|s| !s.trim().is_empty()).map(str::to_string).collect(),
                        ..Post::default()
                    })
                    .collect(),
                board_name: None,
                replies: None,
                views: None,
            };
            out.push(ThreadDoc::from_xml(&doc.to_xml()).expect("thread XML parses back"));
        }
    }
    out
}

/// Indexes `docs` into one index directory (`<dir>/<name>.index`) with the
/// library the `luntan-index` binary uses.
pub fn write_index(dir: &Path, name: &str, docs: &[&luntan_core::ThreadDoc]) -> PathBuf {
    let path = dir.join(format!("{name}.index"));
    let opts = luntan_search::IndexOptions { writer_mb: 60, commit_every: usize::MAX };
    let mut w = luntan_search::SiteWriter::open(&path, &opts).expect("index writer");
    for d in docs {
        w.add(d).expect("add document");
    }
    w.finish().expect("commit");
    path
}

/// `site/thread`, how search tests name a thread.
pub fn doc_key(d: &luntan_core::ThreadDoc) -> String {
    format!("{}/{}", d.site, d.thread)
}

/// The text a query can match in a thread, as the XML holds it: the title
/// and every paragraph, one per line, each folded and lowercased with the
/// index's own [`luntan_search::analysis::normalize`]. A query without a
/// line break cannot match across two of them, nor can it in the index,
/// which puts a separator between paragraphs.
pub fn folded_text(d: &luntan_core::ThreadDoc) -> String {
    let norm = luntan_search::analysis::normalize;
    std::iter::once(norm(&d.title)).chain(d.posts.iter().flat_map(|p| p.paragraphs.iter().map(|s| norm(s)))).collect::<Vec<_>>().join("\n")
}

/// Whether `needle`, folded the same way, occurs in a [`folded_text`].
pub fn holds(folded: &str, needle: &str) -> bool {
    folded.contains(&luntan_search::analysis::normalize(needle))
}

/// [`holds`] for scanning many threads: a literal regex is a plain
/// substring search, but one compiled with optimizations even in a debug
/// build, unlike `str::contains` inlined into the test.
pub fn finder(needle: &str) -> regex::Regex {
    regex::Regex::new(&regex::escape(&luntan_search::analysis::normalize(needle))).expect("a literal pattern")
}

/// splitmix64: deterministic choices without another crate.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

/// `n` distinct strings of 1–4 CJK characters cut from the threads' titles
/// and paragraphs, taking forums in turn so each script is represented.
pub fn sample_cjk_strings(docs: &[luntan_core::ThreadDoc], n: usize, seed: u64) -> Vec<String> {
    let mut by_site: BTreeMap<&str, Vec<&luntan_core::ThreadDoc>> = BTreeMap::new();
    for d in docs {
        by_site.entry(d.site.as_str()).or_default().push(d);
    }
    let sites: Vec<&Vec<&luntan_core::ThreadDoc>> = by_site.values().collect();
    let mut rng = Rng(seed);
    let mut out: Vec<String> = Vec::new();
    let mut attempts = 0;
    while out.len() < n {
        attempts += 1;
        assert!(attempts < n * 1000, "cannot find {n} CJK strings in the corpus");
        let site = sites[out.len() % sites.len()];
        let d = site[rng.below(site.len())];
        let texts: Vec<&str> = std::iter::once(d.title.as_str()).chain(d.posts.iter().flat_map(|p| p.paragraphs.iter().map(String::as_str))).collect();
        let chars: Vec<char> = texts[rng.below(texts.len())].chars().collect();
        let len = 1 + rng.below(4);
        if chars.len() < len {
            continue;
        }
        let at = rng.below(chars.len() - len + 1);
        let s: String = chars[at..at + len].iter().collect();
        if s.chars().all(luntan_search::analysis::is_cjk) && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

// ---------------------------------------------------------------- crawl rounds (incremental, focus, keywords)

/// Every site file in `dir`, parsed.
pub fn load_sites(dir: &Path) -> Vec<luntan_core::Site> {
    let (sites, errors) = luntan_core::Site::load_all(dir, None);
    assert!(errors.is_empty(), "{errors:?}");
    sites
}

/// What a request the fixture logged was for, judged by the site files' own patterns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Requested {
    Robots,
    Home(String),
    /// A board list page: (site, board).
    List(String, String),
    /// A thread page: (site, thread, first page or not).
    Thread(String, String, bool),
    Other(String),
}

pub fn classify(sites: &[luntan_core::Site], base_url: &str, path_and_query: &str) -> Requested {
    if path_and_query == "/robots.txt" {
        return Requested::Robots;
    }
    let url = format!("{}/{}", base_url.trim_end_matches('/'), path_and_query.trim_start_matches('/'));
    for s in sites {
        if s.home.as_str() == url {
            return Requested::Home(s.id.to_string());
        }
        let l = &s.links;
        for p in std::iter::once(&l.board).chain(l.board_page.as_ref()) {
            if let Some(Ok(m)) = p.captures(&url) {
                return Requested::List(s.id.to_string(), m.board.map(String::from).unwrap_or_default());
            }
        }
        if let Some(Ok(m)) = l.thread.captures(&url) {
            return Requested::Thread(s.id.to_string(), m.thread.map(String::from).unwrap_or_default(), true);
        }
        if let Some(Ok(m)) = l.thread_page.as_ref().and_then(|p| p.captures(&url)) {
            return Requested::Thread(s.id.to_string(), m.thread.map(String::from).unwrap_or_default(), false);
        }
    }
    Requested::Other(path_and_query.to_owned())
}

/// List requests per (site, board) in a request log.
pub fn list_requests(sites: &[luntan_core::Site], base_url: &str, log: &[luntan_fixture::RequestRecord]) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for r in log {
        if let Requested::List(site, board) = classify(sites, base_url, &r.path_and_query) {
            *out.entry((site, board)).or_insert(0) += 1;
        }
    }
    out
}

/// Asserts that the thread XML at `path` holds exactly the fixture's posts
/// (floor, author, time, text after folding), in order, and every field of
/// version 2 as the truth has it, absent where the truth has none (post and
/// author ids, the author's page, what a post answers and quotes, edit
/// times, links, pictures, likes, locations; the board's name and the
/// thread's counts); returns it.
pub fn assert_xml_matches_truth(path: &Path, t: &luntan_fixture::ThreadTruth) -> luntan_core::ThreadDoc {
    let xml = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = luntan_core::ThreadDoc::from_xml(&xml).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!((doc.site.as_str(), doc.board.as_str(), doc.thread.as_str()), (t.site.as_str(), t.board.as_str(), t.thread.as_str()), "{}", path.display());
    if !t.title.is_empty() {
        assert_eq!(fold(&doc.title), fold(&t.title), "{} title", path.display());
    }
    assert_eq!(doc.posts.len(), t.posts.len(), "{} post count", path.display());
    for (got, want) in doc.posts.iter().zip(&t.posts) {
        let at = format!("{} floor {}", path.display(), want.floor);
        assert_eq!(got.floor, want.floor, "{at}");
        assert_eq!(got.author, want.author, "{at}");
        assert_eq!(got.time.as_deref(), Some(want.time.as_str()), "{at}");
        assert_eq!(fold(&got.text()), fold(&want.text), "{at}");
        assert_post_v2_matches(&doc.url, got, want, &at);
    }
    let at = path.display();
    assert_eq!(doc.board_name, t.board_name, "{at} board name");
    assert_eq!((doc.replies, doc.views), (t.shown_replies, t.views), "{at} replies and views");
    doc
}

/// `d` as a version-1 reader takes it: every field version 2 added left
/// out (what a site file without version 2's attributes gives).
pub fn v1_view(d: &luntan_core::ThreadDoc) -> luntan_core::ThreadDoc {
    let posts = d
        .posts
        .iter()
        .map(|p| luntan_core::Post { floor: p.floor, author: p.author.clone(), time: p.time.clone(), paragraphs: p.paragraphs.clone(), ..Default::default() })
        .collect();
    luntan_core::ThreadDoc { posts, board_name: None, replies: None, views: None, ..d.clone() }
}

/// A post's version 2 fields against the truth's; URLs the truth gives
/// from the server root are on the server `url` (the thread's) names.
fn assert_post_v2_matches(url: &str, got: &luntan_core::Post, want: &luntan_fixture::PostTruth, at: &str) {
    let root = url::Url::parse(url).unwrap_or_else(|e| panic!("{at}: url {url}: {e}"));
    let on_server = |u: &str| if u.starts_with('/') { root.join(u).unwrap().to_string() } else { u.to_owned() };
    assert_eq!((&got.id, &got.author_id), (&want.id, &want.author_id), "{at} post and author id");
    assert_eq!(got.author_url, want.author_path.as_deref().map(on_server), "{at} author's page");
    assert_eq!(got.reply_to, want.reply_to, "{at} reply to");
    let quotes: Vec<_> = got.quotes.iter().map(|q| (q.of.clone(), q.author.clone(), fold(&q.paragraphs.join("\n")))).collect();
    let want_quotes: Vec<_> = want.quotes.iter().map(|q| (q.of.clone(), q.author.clone(), fold(&q.text))).collect();
    assert_eq!(quotes, want_quotes, "{at} quotes");
    assert_eq!(got.edited, want.edited, "{at} edited");
    let links: Vec<_> = got.links.iter().map(|l| (l.href.clone(), fold(&l.text))).collect();
    let want_links: Vec<_> = want.links.iter().map(|l| (on_server(&l.href), fold(&l.text))).collect();
    assert_eq!(links, want_links, "{at} links");
    let images: Vec<_> = got.images.iter().map(|i| (i.src.clone(), i.alt.clone())).collect();
    let want_images: Vec<_> = want.images.iter().map(|i| (on_server(&i.src), i.alt.clone())).collect();
    assert_eq!(images, want_images, "{at} images");
    assert_eq!((got.likes, &got.location), (want.likes, &want.location), "{at} likes and location");
}

/// Asserts that every fixture thread has its row, a live one in `live`, a
/// deleted one failed with a reason holding each of `reason_has`, and that
/// there is no row the fixture lacks.
pub fn assert_rows_match_truth(rows: &Rows, threads: &[&luntan_fixture::ThreadTruth], live: ThreadState, reason_has: &[&str]) {
    for t in threads {
        let key = (t.site.clone(), t.thread.clone());
        let (state, reason, _, _) = rows.get(&key).unwrap_or_else(|| panic!("{}/{} was never discovered", t.site, t.thread));
        if t.deleted {
            assert_eq!(*state, ThreadState::Failed, "{}/{}", t.site, t.thread);
            let reason = reason.as_deref().unwrap_or("");
            assert!(reason_has.iter().all(|part| reason.contains(part)), "{}/{}: reason {reason:?}", t.site, t.thread);
        } else {
            assert_eq!(*state, live, "{}/{}: {reason:?}", t.site, t.thread);
        }
    }
    assert_eq!(rows.len(), threads.len(), "threads found that the fixture does not have");
}

/// Asserts that `t` was extracted (its row says so, or why not) and that
/// its XML holds exactly the fixture's posts.
pub fn assert_extracted_matches_truth(rows: &Rows, layout: &DataDir, t: &luntan_fixture::ThreadTruth) {
    let (state, reason, save_date, _) = rows.get(&(t.site.clone(), t.thread.clone())).unwrap_or_else(|| panic!("{}/{}: never discovered", t.site, t.thread));
    assert_eq!(*state, ThreadState::Extracted, "{}/{}: {reason:?}", t.site, t.thread);
    assert_xml_matches_truth(&layout.xml_path(&loc(&t.site, &t.board, save_date.as_deref().unwrap(), &t.thread)), t);
}

/// Asserts that a live thread's row counts its pages and that its XML holds
/// exactly the fixture's posts; returns the XML's path and document.
pub fn assert_saved_matches_truth(rows: &Rows, layout: &DataDir, t: &luntan_fixture::ThreadTruth) -> (PathBuf, luntan_core::ThreadDoc) {
    let (_, _, save_date, pages) = &rows[&(t.site.clone(), t.thread.clone())];
    assert_eq!(*pages, Some(t.pages), "{}/{} pages", t.site, t.thread);
    let path = layout.xml_path(&loc(&t.site, &t.board, save_date.as_deref().unwrap(), &t.thread));
    let doc = assert_xml_matches_truth(&path, t);
    (path, doc)
}

/// Where a thread's files are, from the parts a test has as strings.
pub fn loc(site: &str, board: &str, save_date: &str, thread: &str) -> luntan_core::ids::ThreadLoc {
    use luntan_core::ids::{BoardId, SaveDate, SiteId, ThreadId};
    luntan_core::ids::ThreadLoc {
        site: SiteId::parse(site).unwrap(),
        board: BoardId::parse(board).unwrap(),
        thread: ThreadId::parse(thread).unwrap(),
        saved: SaveDate::parse(save_date).unwrap(),
    }
}

/// The thread XML of a row as the store has it now, parsed.
pub fn thread_doc(work: &Work, site: &str, thread: &str) -> luntan_core::ThreadDoc {
    let store = Store::open(&work.layout().db_path()).unwrap();
    let row = store.thread(site, thread).unwrap().unwrap_or_else(|| panic!("{site}/{thread}: no row"));
    let date = row.save_date.unwrap_or_else(|| panic!("{site}/{thread}: never saved"));
    let path = work.layout().xml_path(&loc(site, &row.board, &date, thread));
    let xml = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    luntan_core::ThreadDoc::from_xml(&xml).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `luntan-search --json` hits as (site, thread) pairs, in rank order.
pub fn search_threads(work: &Work, args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = work.ok("search", &all);
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("search printed non-JSON {l:?}: {e}")))
        .filter(|v| v.get("thread").is_some())
        .map(|v| (v["site"].as_str().unwrap_or_default().to_owned(), v["thread"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// A run of `len` CJK characters from `text` that none of `others` contains.
pub fn phrase_not_in(text: &str, others: &[&str], len: usize) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let cjk = |c: &char| matches!(*c, '\u{4E00}'..='\u{9FFF}');
    (0..chars.len().saturating_sub(len - 1))
        .map(|i| &chars[i..i + len])
        .filter(|w| w.iter().all(cjk))
        .map(|w| w.iter().collect::<String>())
        .find(|w| others.iter().all(|o| !o.contains(w.as_str())))
}

/// Seconds since `t`, for the figures tests print.
pub fn secs(t: std::time::Instant) -> String {
    format!("{:.1} s", t.elapsed().as_secs_f64())
}

/// Every live document's `key` in every index under `index_dir`, duplicates kept.
pub fn index_keys(index_dir: &Path) -> Vec<String> {
    use tantivy::schema::Value as _;
    let mut keys = Vec::new();
    let Ok(dirs) = std::fs::read_dir(index_dir) else { return keys };
    for d in dirs.flatten().filter(|d| d.file_name().to_string_lossy().ends_with(".index")) {
        // An index the first run had not committed yet has no meta.json.
        if !d.path().join("meta.json").exists() {
            continue;
        }
        let index = tantivy::Index::open_in_dir(d.path()).unwrap_or_else(|e| panic!("{}: {e}", d.path().display()));
        let key = index.schema().get_field("key").unwrap();
        let searcher = index.reader().unwrap().searcher();
        for seg in searcher.segment_readers() {
            let store = seg.get_store_reader(0).unwrap();
            for id in seg.doc_ids_alive() {
                let doc: tantivy::TantivyDocument = store.get(id).unwrap();
                keys.push(doc.get_first(key).and_then(|v| v.as_str()).unwrap_or_default().to_owned());
            }
        }
    }
    keys.sort();
    keys
}
