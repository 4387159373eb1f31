//! `luntan-serve` over real HTTP on loopback, in front of indexes the real
//! stage binaries built from the fixture forum: the API against the CLI and
//! the fixture's truth, the OpenAPI document against real responses, path
//! tricks, malformed parameters, live commits, and the token.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use common::{fold, folded_text, holds, Work};
use luntan_core::ThreadDoc;
use luntan_fixture::{BlockingFixture, FixtureConfig, FixtureServer, Truth};
use serde_json::Value;

/// A crawled fixture (three forums) and a server in front of it.
pub struct Served {
    pub work: Work,
    pub truth: Truth,
    /// The live threads as the index holds them, for brute-force answers.
    pub docs: Vec<ThreadDoc>,
    pub addr: SocketAddr,
    _fixture: BlockingFixture,
}

/// Starts [`luntan_serve::serve`] on an ephemeral loopback port on a
/// runtime of its own, which lives as long as the test process.
pub fn start_server(cfg: luntan_serve::ServeConfig) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send addr");
            luntan_serve::serve(listener, cfg).await.expect("serve");
        });
    });
    rx.recv().expect("server address")
}

fn crawl(threads: usize) -> (Work, BlockingFixture) {
    let server = FixtureServer::start_blocking(FixtureConfig { threads, boards: 3, ..FixtureConfig::default() }).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    for stage in ["discover", "download", "extract", "index"] {
        work.ok(stage, &[]);
    }
    (work, server)
}

/// Built once for every test of this module and of `serve_browser`.
pub fn served() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        let (work, fixture) = crawl(80);
        let truth = fixture.truth();
        let docs: Vec<ThreadDoc> =
            truth.forums.iter().flat_map(|f| f.threads.iter()).filter(|t| t.servable()).map(|t| common::thread_doc(&work, &t.site, &t.thread)).collect();
        let addr = start_server(luntan_serve::ServeConfig::new(work.index(), work.data()));
        Served { work, truth, docs, addr, _fixture: fixture }
    })
}

impl Served {
    /// Threads whose title or text holds `needle` (folded as the index folds).
    pub fn matching(&self, needle: &str) -> Vec<&ThreadDoc> {
        self.docs.iter().filter(|d| holds(&folded_text(d), needle)).collect()
    }

    pub fn sites(&self) -> Vec<String> {
        self.truth.forums.iter().map(|f| f.site.clone()).collect()
    }

    /// A one-character query found in every forum, in a fair share of threads.
    pub fn common_query(&self) -> String {
        let sites = self.sites();
        for s in common::sample_cjk_strings(&self.docs, 300, 11).into_iter().filter(|s| s.chars().count() == 1) {
            let m = self.matching(&s);
            let per: BTreeSet<&str> = m.iter().map(|d| d.site.as_str()).collect();
            if per.len() == sites.len() && m.len() >= 20 && m.len() * 2 < self.docs.len() {
                return s;
            }
        }
        panic!("no one-character query found in every forum");
    }
}

/// A response as it came over the wire.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.0 GET over a fresh connection, the target sent byte for byte
/// as given (no client normalizes `..` or `%2F` away).
pub fn get(addr: SocketAddr, target: &str, headers: &[(&str, &str)]) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("no header end: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).expect("status line");
    let headers = lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    Resp { status, headers, body: raw[split + 4..].to_vec() }
}

pub fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Matching threads per (site, month of the first post), by brute force.
pub fn months(docs: &[&ThreadDoc]) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for d in docs {
        if let Some(p) = d.posted.as_deref().or_else(|| d.posts.first().and_then(|p| p.time.as_deref())) {
            *out.entry((d.site.to_string(), p[..7].to_string())).or_default() += 1;
        }
    }
    out
}

/// Per (site, `YYYY-MM`): the posts of `docs` by each post's own time.
pub fn post_months(docs: &[&ThreadDoc]) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for p in docs.iter().flat_map(|d| d.posts.iter().map(move |p| (d, p))) {
        if let (d, luntan_core::Post { time: Some(t), .. }) = p {
            *out.entry((d.site.to_string(), t[..7].to_string())).or_default() += 1;
        }
    }
    out
}

/// Checks `v` against an OpenAPI schema (the subset the document uses:
/// `$ref`, `type` (also as a list), `properties`, `required`,
/// `additionalProperties` as `false` or a schema, `items`, `enum`,
/// `minimum`, `maximum`), returning every violation with its path.
pub fn validate(doc: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/components/schemas/");
        let target = &doc["components"]["schemas"][name];
        assert!(!target.is_null(), "dangling $ref {r}");
        return validate(doc, target, v, at, errors);
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{at}: {v} is not {types:?}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errors.push(format!("{at}: {v} not in {e:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            errors.push(format!("{at}: {n} < {min}"));
        }
    }
    if let (Some(max), Some(n)) = (schema.get("maximum").and_then(Value::as_f64), v.as_f64()) {
        if n > max {
            errors.push(format!("{at}: {n} > {max}"));
        }
    }
    if let Some(obj) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        for r in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                errors.push(format!("{at}: missing {r}"));
            }
        }
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(doc, s, val, &format!("{at}.{k}"), errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{at}: undocumented field {k}")),
                    Some(s @ Value::Object(_)) => validate(doc, s, val, &format!("{at}.{k}"), errors),
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(doc, items, x, &format!("{at}[{i}]"), errors);
        }
    }
}

fn response_schema<'a>(doc: &'a Value, path: &str, status: &str) -> &'a Value {
    let s = &doc["paths"][path]["get"]["responses"][status]["content"]["application/json"]["schema"];
    assert!(!s.is_null(), "no schema for {path} {status}");
    s
}

fn assert_valid(doc: &Value, path: &str, status: &str, v: &Value) {
    let mut errors = Vec::new();
    validate(doc, response_schema(doc, path, status), v, "$", &mut errors);
    assert!(errors.is_empty(), "{path} {status} does not match the OpenAPI document:\n{}", errors.join("\n"));
}

fn cli_search(work: &Work, args: &[&str]) -> (Vec<Value>, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let mut hits = Vec::new();
    let mut summary = Value::Null;
    for line in work.ok("search", &all).lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("thread").is_some() {
            hits.push(v);
        } else {
            summary = v;
        }
    }
    (hits, summary)
}

#[test]
fn the_api_answers_as_the_cli_and_the_truth_do_and_matches_its_openapi_document() {
    let s = served();
    let doc = get(s.addr, "/api/openapi.json", &[]).json();
    assert_eq!(doc["openapi"], "3.1.0");
    let q = s.common_query();
    let matching = s.matching(&q);

    // Search: the same hits, in the same order, as luntan-search --json.
    for (extra, cli) in [("&limit=50", vec!["--limit", "50"]), ("&sort=newest&limit=20&offset=5", vec!["--sort", "newest", "--limit", "20", "--offset", "5"])] {
        let r = get(s.addr, &format!("/api/search?q={}{extra}", enc(&q)), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert!(r.header("content-type").unwrap().starts_with("application/json"));
        let api = r.json();
        assert_valid(&doc, "/api/search", "200", &api);
        let mut args = cli.clone();
        args.push(&q);
        let (hits, summary) = cli_search(&s.work, &args);
        assert_eq!(api["hits"].as_array().unwrap(), &hits, "{extra}");
        for k in ["total", "per_site", "offset", "limit", "returned"] {
            assert_eq!(api[k], summary[k], "{k}");
        }
        assert_eq!(api["total"].as_u64().unwrap() as usize, matching.len());
        for site in s.sites() {
            let want = matching.iter().filter(|d| d.site == site).count();
            assert_eq!(api["per_site"][&site].as_u64().unwrap() as usize, want, "{site}");
        }
    }

    // Filters as query-language filters, a date range, one forum.
    let site = s.sites()[0].clone();
    let dated: Vec<&str> = matching.iter().filter(|d| d.site == site).filter_map(|d| d.posted.as_deref()).collect();
    let mut days: Vec<&str> = dated.iter().map(|p| &p[..10]).collect();
    days.sort();
    let (since, until) = (days[days.len() / 4], days[days.len() * 3 / 4]);
    let r = get(s.addr, &format!("/api/search?q={}&site={site}&since={since}&until={until}&limit=100", enc(&q)), &[]).json();
    let want: BTreeSet<String> = matching
        .iter()
        .filter(|d| d.site == site && d.posted.as_deref().is_some_and(|p| (since..=until).contains(&&p[..10])))
        .map(|d| d.thread.to_string())
        .collect();
    let got: BTreeSet<String> = r["hits"].as_array().unwrap().iter().map(|h| h["thread"].as_str().unwrap().to_string()).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    let author = &matching[0].posts[0].author;
    let r = get(s.addr, &format!("/api/search?q={}&author={}&limit=100", enc(&q), enc(author)), &[]).json();
    let (cli_hits, _) = cli_search(&s.work, &["--limit", "100", &format!("{q} author:{author}")]);
    assert_eq!(r["hits"].as_array().unwrap(), &cli_hits);
    assert!(!cli_hits.is_empty());

    // A thread: the XML's posts, which are the fixture's.
    let hit = &get(s.addr, &format!("/api/search?q={}&limit=1", enc(&q)), &[]).json()["hits"][0];
    let (hs, ht) = (hit["site"].as_str().unwrap(), hit["thread"].as_str().unwrap());
    let r = get(s.addr, &format!("/api/thread/{hs}/{ht}"), &[]);
    assert_eq!(r.status, 200);
    let thread = r.json();
    assert_valid(&doc, "/api/thread/{site}/{id}", "200", &thread);
    let truth = s.truth.forums.iter().flat_map(|f| &f.threads).find(|t| t.site == hs && t.thread == ht).unwrap();
    let posts = thread["posts"].as_array().unwrap();
    assert_eq!(posts.len(), truth.posts.len());
    for (p, want) in posts.iter().zip(&truth.posts) {
        assert_eq!(p["author"], want.author.as_str());
        assert_eq!(p["time"], want.time.as_str());
        assert_eq!(fold(p["text"].as_str().unwrap()), fold(&want.text));
    }
    assert_eq!(fold(thread["title"].as_str().unwrap()), fold(&truth.title));
    // The one JSON shape of a thread: what luntan-export --ndjson writes for it.
    let doc_of = common::thread_doc(&s.work, hs, ht);
    assert_eq!(thread, serde_json::from_str::<Value>(&luntan_core::doc::ThreadJson::of(&doc_of).to_json()).unwrap());

    // Trend: per forum and month, the fixture's counts.
    let r = get(s.addr, &format!("/api/trend?q={}&interval=month", enc(&q)), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let trend = r.json();
    assert_valid(&doc, "/api/trend", "200", &trend);
    let flat = |series: &Value| {
        let mut got = BTreeMap::new();
        for (site, counts) in series.as_object().unwrap() {
            for (b, n) in trend["buckets"].as_array().unwrap().iter().zip(counts.as_array().unwrap()) {
                if n.as_u64().unwrap() > 0 {
                    got.insert((site.clone(), b.as_str().unwrap().to_string()), n.as_u64().unwrap());
                }
            }
        }
        got
    };
    assert_eq!(flat(&trend["series"]), months(&matching));
    let posts = post_months(&matching);
    assert!(posts.values().sum::<u64>() > months(&matching).values().sum::<u64>(), "the fixture's threads have replies");
    assert_eq!(flat(&trend["post_series"]), posts);

    // Status: what luntan-status --json prints.
    let r = get(s.addr, "/api/status", &[]);
    assert_eq!(r.status, 200);
    let api = r.json();
    assert_valid(&doc, "/api/status", "200", &api);
    let cli: Vec<Value> = s.work.ok("status", &["--json"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(api.as_array().unwrap(), &cli);

    // Errors match the Error schema.
    for target in ["/api/search?q=%22abc", "/api/thread/dz/nope", "/api/search?q=x&limit=9999"] {
        let r = get(s.addr, target, &[]);
        assert_valid(&doc, if target.contains("thread") { "/api/thread/{site}/{id}" } else { "/api/search" }, &r.status.to_string(), &r.json());
    }
}

#[test]
fn the_feed_is_atom_with_stable_ids_newest_first() {
    let s = served();
    let q = s.common_query();
    let r = get(s.addr, &format!("/feed.atom?q={}", enc(&q)), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/atom+xml; charset=utf-8"));
    let xml = r.text();
    check_atom(&xml);
    let entries = atom_entries(&xml);
    assert_eq!(entries.len(), 20.min(s.matching(&q).len()));
    // Newest first by first post (equal times in either order): the entries'
    // first-post times are the 20 newest of the matching threads'.
    let mut newest: Vec<Option<String>> = s.matching(&q).iter().map(|d| d.posted.clone()).collect();
    newest.sort_by(|a, b| b.cmp(a));
    newest.truncate(20);
    let posted: Vec<Option<String>> = entries
        .iter()
        .map(|(id, _)| {
            let key = id.strip_prefix("tag:luntan,2024:thread/").unwrap();
            s.docs.iter().find(|d| format!("{}/{}", d.site, d.thread) == key).unwrap_or_else(|| panic!("{id} names no thread")).posted.clone()
        })
        .collect();
    assert_eq!(posted, newest);
    let again = atom_entries(&get(s.addr, &format!("/feed.atom?q={}", enc(&q)), &[]).text());
    assert_eq!(entries, again);
    assert_eq!(get(s.addr, "/feed.atom?q=%22", &[]).status, 400);
}

/// The `href` of the first `<a>` whose attributes hold `marker` (e.g.
/// `rel="next"`), unescaped as a browser reads it.
fn link_with(html: &str, marker: &str) -> Option<String> {
    let re = regex::Regex::new(r#"<a ([^>]*)>"#).unwrap();
    let href = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    let attrs = re.captures_iter(html).map(|c| c[1].to_string()).find(|attrs| attrs.contains(marker))?;
    href.captures(&attrs).map(|h| h[1].replace("&amp;", "&"))
}

/// The query string of a link as its decoded pairs.
fn pairs(link: &str) -> Vec<(String, String)> {
    let qs = link.split_once('?').map_or("", |(_, q)| q);
    url::form_urlencoded::parse(qs.as_bytes()).into_owned().collect()
}

#[test]
fn the_thread_page_leads_back_to_its_results_and_on_to_the_hits_beside_it() {
    let s = served();
    let q = s.common_query();
    let sites = s.sites();
    // A filtered search of more than one page: two forums, from a day on, newest first.
    let mut days: Vec<&str> = s.matching(&q).iter().filter(|d| d.site != sites[2]).filter_map(|d| d.posted.as_deref()).map(|p| &p[..10]).collect();
    days.sort();
    assert!(days.len() >= 12, "the test needs a second page of results");
    let since = days[(days.len() / 5).min(days.len() - 12)];
    let search = format!("q={}&site={}&site={}&since={since}&sort=newest", enc(&q), sites[0], sites[1]);
    let mut hits: Vec<Value> = Vec::new();
    let total = loop {
        let api = get(s.addr, &format!("/api/search?{search}&limit=100&offset={}", hits.len()), &[]).json();
        hits.extend(api["hits"].as_array().unwrap().iter().cloned());
        let total = api["total"].as_u64().unwrap() as usize;
        if hits.len() >= total || api["hits"].as_array().unwrap().is_empty() {
            break total;
        }
    };
    assert!(total > 11 && hits.len() == total, "{total} hits, {} read", hits.len());
    let key = |h: &Value| (h["site"].as_str().unwrap().to_string(), h["thread"].as_str().unwrap().to_string());
    let page_of = |h: &Value| format!("/thread/{}/{}", h["site"].as_str().unwrap(), h["thread"].as_str().unwrap());
    let want_filters: Vec<(String, String)> = pairs(&format!("?{search}"));
    for n in [1, 2, 10, 11, total] {
        let here = &hits[n - 1];
        // An unknown parameter (a chat app's) is ignored by the page.
        let r = get(s.addr, &format!("{}?{search}&n={n}&from=singlemessage", page_of(here)), &[]);
        assert_eq!(r.status, 200, "{n}: {}", r.text());
        let html = r.text();
        assert!(html.contains(&format!("第 {n} 个结果，共 {total} 个")), "{n}: no place shown");

        // Back to the results page that holds hit n, with every filter.
        let back = link_with(&html, r#"class="back""#).unwrap_or_else(|| panic!("{n}: no way back"));
        assert!(back.starts_with("/search?"), "{back}");
        let mut got = pairs(&back);
        let page = got.iter().position(|(k, _)| k == "page").map(|i| got.remove(i).1);
        assert_eq!(got, want_filters, "{back}");
        assert_eq!(page.unwrap_or("1".into()), ((n - 1) / 10 + 1).to_string(), "{back}");
        let results = get(s.addr, &back, &[]);
        assert_eq!(results.status, 200, "{back}");
        assert!(results.text().contains(&format!("{}?", page_of(here))), "{n}: the results page {back} does not list the thread");

        // Previous and next: the hits at n - 1 and n + 1 of the same search.
        for (rel, at) in [("prev", n.checked_sub(2)), ("next", (n < total).then_some(n))] {
            let link = link_with(&html, &format!(r#"rel="{rel}""#));
            let Some(at) = at else {
                assert_eq!(link, None, "{n}: {rel} past the ends");
                continue;
            };
            let link = link.unwrap_or_else(|| panic!("{n}: no {rel} link"));
            let want = &hits[at];
            assert!(link.starts_with(&format!("{}?", page_of(want))), "{n} {rel}: {link}, want hit {}", at + 1);
            let mut got = pairs(&link);
            assert_eq!(got.pop(), Some(("n".to_string(), (at + 1).to_string())), "{link}");
            assert_eq!(got, want_filters, "{link}");
            if rel == "next" {
                // Followed, it is the thread at n + 1, which leads back to n.
                let next = get(s.addr, &link, &[]);
                assert_eq!(next.status, 200);
                let next = next.text();
                let doc = s.docs.iter().find(|d| (d.site.to_string(), d.thread.to_string()) == key(want)).unwrap();
                assert_eq!(next.matches(r#"<article class="post""#).count(), doc.posts.len());
                assert!(next.contains(&format!("第 {} 个结果，共 {total} 个", at + 1)));
                let prev = link_with(&next, r#"rel="prev""#).expect("a way back to n");
                assert!(prev.starts_with(&format!("{}?", page_of(here))) && prev.ends_with(&format!("&n={n}")), "{prev}");
            }
        }
    }

    // Readable times and a link per post.
    let doc = s.docs.iter().find(|d| d.posts.len() >= 3 && d.posts.iter().all(|p| p.time.is_some())).unwrap();
    let html = get(s.addr, &format!("/thread/{}/{}", doc.site, doc.thread), &[]).text();
    let t = doc.posts[2].time.as_deref().unwrap();
    assert!(!html.contains(&format!(">{t}<")), "raw time shown");
    let readable = if t.ends_with(":00") { format!("{} {}", &t[..10], &t[11..16]) } else { t.replace('T', " ") };
    assert!(html.contains(&format!(r#"<time datetime="{t}">{readable}</time>"#)), "{readable}");
    let floor = doc.posts[2].floor;
    assert!(html.contains(&format!(r##"<article class="post" id="floor{floor}">"##)) && html.contains(&format!(r##"href="#floor{floor}""##)));
    // Opened without a search, it offers none to go back to.
    assert!(!html.contains("返回搜索结果"));
}

/// An author's page lists exactly their posts (by exact name, across every
/// forum), each linked to its floor; a page that names nobody is a 400.
#[test]
fn an_authors_page_lists_every_post_of_theirs_across_forums_and_no_other() {
    let s = served();
    // Every name that wrote in at least two forums, and in few enough threads for one page.
    let mut by_name: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for d in &s.docs {
        for p in &d.posts {
            by_name.entry(p.author.as_str()).or_default().insert(format!("/thread/{}/{}#floor{}", d.site, d.thread, p.floor));
        }
    }
    let sites_of = |links: &BTreeSet<String>| links.iter().map(|l| l.split('/').nth(2).unwrap().to_string()).collect::<BTreeSet<_>>().len();
    let threads_of = |links: &BTreeSet<String>| links.iter().map(|l| l.split('#').next().unwrap().to_string()).collect::<BTreeSet<_>>().len();
    let picked: Vec<(&str, &BTreeSet<String>)> =
        by_name.iter().filter(|(n, l)| !n.trim().is_empty() && sites_of(l) >= 2 && threads_of(l) <= 20).map(|(n, l)| (*n, l)).take(3).collect();
    assert!(!picked.is_empty(), "no author of the fixture writes in two forums");
    for (name, want) in picked {
        let r = get(s.addr, &format!("/author?name={}", enc(name)), &[]);
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let html = r.text();
        let got: BTreeSet<String> =
            html.match_indices(r#"class="permalink" href=""#).map(|(at, m)| html[at + m.len()..].split('"').next().unwrap().to_string()).collect();
        assert_eq!(&got, want, "{name}");
    }
    for bad in ["/author", "/author?id=1", "/author?site=..%2Fx&id=1", "/author?name=%20"] {
        let r = get(s.addr, bad, &[]);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert!(r.header("content-type").is_some_and(|c| c.starts_with("text/html")), "{bad}");
    }
}

#[test]
fn a_deep_or_long_query_on_the_thread_page_shows_the_thread_unmarked_and_the_server_lives() {
    let s = served();
    let d = &s.docs[0];
    let deep = "(".repeat(4000);
    // (target, whether the query may be marked: a deep but whole query may
    // be one the parser takes)
    let cases = [
        (format!("/thread/a/b?q={deep}"), false),
        (format!("/thread/{}/{}?q={deep}&n=1", d.site, d.thread), false),
        (format!("/thread/{}/{}?q={}", d.site, d.thread, "(".repeat(499)), false),
        (format!("/thread/{}/{}?q={}a{}&n=2", d.site, d.thread, "(".repeat(240), ")".repeat(240)), true),
        (format!("/thread/{}/{}?q={}", d.site, d.thread, enc(&"书".repeat(400))), false),
        (format!("/thread/{}/{}?q=%22abc&n=3", d.site, d.thread), false),
        (format!("/thread/{}/{}?q=%FF%FE&n=99999999999999999999", d.site, d.thread), false),
    ];
    for (t, may_mark) in &cases {
        let r = get(s.addr, t, &[]);
        let short = &t[..t.len().min(80)];
        if t.starts_with("/thread/a/b") {
            assert_eq!(r.status, 404, "{short}");
            assert!(r.text().contains("找不到"), "{short}: {}", r.text());
            continue;
        }
        assert!(r.status == 200 || r.status == 400, "{short}: {}", r.status);
        if r.status == 200 {
            let html = r.text();
            assert_eq!(html.matches(r#"<article class="post""#).count(), d.posts.len(), "{short}");
            if !may_mark {
                assert!(!html.contains("<b>"), "{short}: marked without a query");
                assert!(!html.contains(r#"rel="next""#), "{short}: neighbours of a query that is not one");
            }
        }
        // Still answering.
        let alive = get(s.addr, &format!("/api/search?q={}&limit=1", enc(&s.common_query())), &[]);
        assert_eq!(alive.status, 200, "after {short}");
    }
}

#[test]
fn an_unknown_page_is_a_chinese_page_and_an_unknown_api_path_json() {
    let s = served();
    for t in ["/nope", "/search/more", "/%3Cimg%20src=x%20onerror=alert(1)%3E", "/thread/a", "/static/none.css"] {
        let r = get(s.addr, t, &[]);
        assert_eq!(r.status, 404, "{t}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"), "{t}");
        assert!(r.header("content-security-policy").is_some_and(|c| c.contains("script-src 'self'")), "{t}");
        let html = r.text();
        assert!(html.contains(r#"<html lang="zh-CN">"#) && html.contains("找不到这个页面") && html.contains(r#"<a href="/">返回搜索</a>"#), "{t}: {html}");
        assert!(!html.contains("<img"), "{t}: the path was not escaped");
    }
    for t in ["/api/nope", "/api/search/more", "/api"] {
        let r = get(s.addr, t, &[]);
        assert_eq!(r.status, 404, "{t}");
        assert!(r.header("content-type").unwrap().starts_with("application/json"), "{t}");
        assert_eq!(r.json()["status"], 404, "{t}");
    }
    // Errors on pages say in Chinese what is wrong, the detail kept.
    for (t, status, words) in [
        ("/thread/dz/99999999".to_string(), 404, vec!["找不到这个页面或主题", "dz/99999999"]),
        ("/trend?q=%22abc".into(), 400, vec!["查询的写法有误", "第 1 个字符"]),
        ("/trend?q=a&interval=year".into(), 400, vec!["参数 interval 有误"]),
        ("/trend?q=a&site=nosuch".into(), 400, vec!["没有这个论坛"]),
    ] {
        let r = get(s.addr, &t, &[]);
        assert_eq!(r.status, status, "{t}");
        assert!(r.header("content-type").unwrap().starts_with("text/html"), "{t}");
        let html = r.text();
        for w in words {
            assert!(html.contains(w), "{t}: no {w} in {html}");
        }
    }
}

/// The Monday of the week `t` (`YYYY-MM-DD…`) is in.
fn monday(t: &str) -> String {
    let d = time::Date::parse(&t[..10], time::macros::format_description!("[year]-[month]-[day]")).unwrap();
    (d - time::Duration::days(i64::from(d.weekday().number_days_from_monday()))).to_string()
}

#[test]
fn trend_buckets_run_without_gaps_and_the_chart_spaces_them_by_time_with_the_filters_kept() {
    let s = served();
    let q = s.common_query();
    let matching = s.matching(&q);
    let day = |t: &str| time::Date::parse(&t[..10], time::macros::format_description!("[year]-[month]-[day]")).unwrap();
    for interval in ["day", "week", "month"] {
        let t = get(s.addr, &format!("/api/trend?q={}&interval={interval}", enc(&q)), &[]).json();
        let buckets: Vec<&str> = t["buckets"].as_array().unwrap().iter().map(|b| b.as_str().unwrap()).collect();
        for pair in buckets.windows(2) {
            let (a, b) = if interval == "month" { (day(&format!("{}-01", pair[0])), day(&format!("{}-01", pair[1]))) } else { (day(pair[0]), day(pair[1])) };
            let gap = (b - a).whole_days();
            match interval {
                "day" => assert_eq!(gap, 1, "{pair:?}"),
                "week" => assert_eq!(gap, 7, "{pair:?}"),
                _ => assert!((28..=31).contains(&gap) && b.day() == 1, "{pair:?}"),
            }
        }
        let zeros = t["series"].as_object().unwrap().values().flat_map(|v| v.as_array().unwrap()).filter(|n| n.as_u64() == Some(0)).count();
        assert!(zeros > 0, "{interval}: no empty bucket drawn as 0");
    }

    // The page, by week, for two forums within a date range, by one author's threads too.
    let sites = s.sites();
    let posted = |d: &ThreadDoc| d.posted.clone().or_else(|| d.posts.iter().find_map(|p| p.time.clone()));
    let mut days: Vec<String> = matching.iter().filter_map(|d| posted(d)).map(|p| p[..10].to_string()).collect();
    days.sort();
    let (since, until) = (days[days.len() / 4].clone(), days[days.len() * 3 / 4].clone());
    let filters = format!("q={}&site={}&site={}&since={since}&until={until}", enc(&q), sites[0], sites[1]);
    let r = get(s.addr, &format!("/trend?{filters}&interval=week&page=3&n=7"), &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let html = r.text();
    let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
    for d in matching.iter().filter(|d| d.site == sites[0] || d.site == sites[1]) {
        if let Some(p) = posted(d).filter(|p| (since.as_str()..=until.as_str()).contains(&&p[..10])) {
            *want.entry((d.site.to_string(), monday(&p))).or_default() += 1;
        }
    }
    let point = regex::Regex::new(r#"class="point"[^>]* data-site="([^"]+)" data-bucket="([^"]+)" data-count="(\d+)""#).unwrap();
    let mut got = BTreeMap::new();
    for c in point.captures_iter(&html) {
        if &c[3] != "0" {
            got.insert((c[1].to_string(), c[2].to_string()), c[3].parse::<u64>().unwrap());
        }
    }
    assert!(!want.is_empty());
    assert_eq!(got, want);
    // /api/trend counts the same within the dates.
    let api = get(s.addr, &format!("/api/trend?{filters}&interval=week"), &[]).json();
    let mut from_api = BTreeMap::new();
    for (site, counts) in api["series"].as_object().unwrap() {
        for (b, n) in api["buckets"].as_array().unwrap().iter().zip(counts.as_array().unwrap()) {
            if n.as_u64().unwrap() > 0 {
                from_api.insert((site.clone(), b.as_str().unwrap().to_string()), n.as_u64().unwrap());
            }
        }
    }
    assert_eq!(from_api, want, "/api/trend?{filters}");
    assert_eq!(get(s.addr, &format!("/api/trend?q=a&since={until}&until={since}"), &[]).status, 400);
    // Every week from the first to the last (the data table lists them),
    // evenly spaced: one point per week on each line.
    let row = regex::Regex::new(r"<tr><td>(\d{4}-\d{2}-\d{2})</td>").unwrap();
    let weeks: Vec<String> = row.captures_iter(&html).map(|c| c[1].to_string()).collect();
    assert!(weeks.len() >= 2);
    assert!(want.keys().all(|(_, w)| weeks.contains(w)));
    for pair in weeks.windows(2) {
        assert_eq!((day(&pair[1]) - day(&pair[0])).whole_days(), 7, "{pair:?}");
    }
    let polyline = regex::Regex::new(r#"<polyline [^>]*points="([^"]+)""#).unwrap();
    let lines: Vec<Vec<f64>> =
        polyline.captures_iter(&html).map(|c| c[1].split(' ').map(|p| p.split(',').next().unwrap().parse().unwrap()).collect()).collect();
    assert_eq!(lines.len(), 2, "one line per forum asked for");
    for xs in &lines {
        assert_eq!(xs.len(), weeks.len());
        let steps: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(steps.iter().all(|st| (st - steps[0]).abs() < 0.2), "{steps:?}");
    }
    // Gridlines with their values, a legend naming each forum in its colour.
    assert!(html.matches(r#"class="y-tick""#).count() >= 2 && html.matches(r#"class="x-tick""#).count() >= 2);
    let legend = regex::Regex::new(r#"<li data-site="([^"]+)" data-color="([^"]+)""#).unwrap();
    let keys: Vec<(String, String)> = legend.captures_iter(&html).map(|c| (c[1].to_string(), c[2].to_string())).collect();
    assert_eq!(keys.iter().map(|k| k.0.clone()).collect::<Vec<_>>(), [sites[0].clone(), sites[1].clone()]);
    assert_ne!(keys[0].1, keys[1].1);

    // Every filter is kept: in the form, and in the links the page makes.
    for (name, value) in [("q", q.as_str()), ("since", since.as_str()), ("until", until.as_str())] {
        assert!(html.contains(&format!(r#"name="{name}" value="{value}""#)), "the form lost {name}");
    }
    for site in &sites[..2] {
        assert!(html.contains(&format!(r#"name="site" value="{site}" checked"#)), "the form lost {site}");
    }
    let back = link_with(&html, r#"class="back""#).expect("a way back to the results");
    assert_eq!(pairs(&back), pairs(&format!("?{filters}")));
    let month = regex::Regex::new(r#"href="([^"]+)">按月</a>"#).unwrap();
    let by_month = month.captures(&html).map(|c| c[1].replace("&amp;", "&")).expect("a link to months");
    let mut got = pairs(&by_month);
    got.retain(|(k, _)| k != "interval" && k != "what");
    assert_eq!(got, pairs(&format!("?{filters}")));
    // A point leads to the search for its forum's threads in its week, within the range.
    let to_search = regex::Regex::new(r#"<a href="(/search\?[^"]+)"><(?:circle|rect|path) class="point""#).unwrap();
    let first = to_search.captures(&html).expect("points link to their threads")[1].replace("&amp;", "&");
    let p = pairs(&first);
    assert!(
        p.iter().any(|(k, v)| k == "since" && v.as_str() >= since.as_str()) && p.iter().any(|(k, v)| k == "until" && v.as_str() <= until.as_str()),
        "{first}"
    );
    // Author and board are kept too.
    let author = &matching[0].posts[0].author;
    let html = get(s.addr, &format!("/trend?q={}&author={}&board=b1&what=posts", enc(&q), enc(author)), &[]).text();
    assert!(html.contains(&format!(r#"name="author" value="{}""#, luntan_serve::escape(author))) && html.contains(r#"name="board" value="b1""#));
}

/// (id, updated) per entry.
pub fn atom_entries(xml: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r"<entry><id>([^<]+)</id>.*?<updated>([^<]+)</updated>").unwrap();
    re.captures_iter(xml).map(|c| (c[1].to_string(), c[2].to_string())).collect()
}

/// The RFC 4287 rules a reader relies on: one feed id, title, updated and
/// author; each entry with id, title, updated (RFC 3339), a link, an author;
/// ids unique; the whole document well-formed XML.
pub fn check_atom(xml: &str) {
    let mut reader = quick_xml_lite::check_well_formed(xml);
    reader.sort();
    let rfc3339 = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$").unwrap();
    assert!(xml.contains(r#"<feed xmlns="http://www.w3.org/2005/Atom""#));
    let head = &xml[..xml.find("<entry>").unwrap_or(xml.len())];
    for el in ["<id>", "<title", "<updated>", "<author><name>", r#"<link rel="self""#] {
        assert!(head.contains(el), "feed lacks {el}");
    }
    let entries: Vec<&str> = xml.split("<entry>").skip(1).collect();
    let mut ids = BTreeSet::new();
    for e in &entries {
        for el in ["<id>", "<title", "<updated>", "<author><name>", r#"<link rel="alternate""#] {
            assert!(e.contains(el), "entry lacks {el}: {e}");
        }
        let updated = &e[e.find("<updated>").unwrap() + 9..e.find("</updated>").unwrap()];
        assert!(rfc3339.is_match(updated), "{updated}");
        let id = &e[e.find("<id>").unwrap() + 4..e.find("</id>").unwrap()];
        assert!(id.starts_with("tag:luntan,2024:thread/"));
        assert!(ids.insert(id.to_string()), "duplicate id {id}");
    }
}

/// Enough of an XML reader to tell a well-formed document: tags balance,
/// attributes are quoted, `&` starts only an entity.
mod quick_xml_lite {
    pub fn check_well_formed(xml: &str) -> Vec<String> {
        let body = xml.strip_prefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n").expect("XML declaration");
        let tag = regex::Regex::new(r#"^<(/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(/?)>"#).unwrap();
        let entity = regex::Regex::new(r"^&(amp|lt|gt|quot|#39|#\d+);").unwrap();
        let mut stack: Vec<String> = Vec::new();
        let mut names = Vec::new();
        let mut i = 0;
        while i < body.len() {
            let rest = &body[i..];
            if rest.starts_with('<') {
                let c = tag.captures(rest).unwrap_or_else(|| panic!("malformed tag at {i}: {}", &rest[..rest.len().min(80)]));
                let name = c[2].to_string();
                if &c[1] == "/" {
                    assert_eq!(stack.pop().as_deref(), Some(name.as_str()), "unbalanced </{name}>");
                } else if &c[4] != "/" {
                    stack.push(name.clone());
                }
                names.push(name);
                i += c[0].len();
            } else if rest.starts_with('&') {
                let m = entity.find(rest).unwrap_or_else(|| panic!("bare & at {i}: {}", &rest[..rest.len().min(40)]));
                i += m.end();
            } else {
                i += rest.chars().next().unwrap().len_utf8();
            }
        }
        assert!(stack.is_empty(), "unclosed {stack:?}");
        names
    }
}

#[test]
fn path_tricks_find_nothing_and_bad_parameters_are_400_never_500() {
    let s = served();
    let live = &s.docs[0];
    let failed = s.truth.forums.iter().flat_map(|f| &f.threads).find(|t| t.deleted).expect("the fixture has deleted threads");
    let tricks = [
        "/api/thread/..%2F..%2Fetc/passwd".to_string(),
        "/api/thread/../../etc/passwd".into(),
        "/api/thread/dz/..%2F..%2F..%2F..%2Fetc%2Fpasswd".into(),
        "/api/thread/%2e%2e/%2e%2e%2fluntan.db".into(),
        "/api/thread/dz/1%00".into(),
        "/api/thread/dz/%C0%AE%C0%AE".into(),
        "/api/thread/%FF/1".into(),
        "/api/thread//etc/passwd".into(),
        "/api/thread/dz/%2Fetc%2Fpasswd".into(),
        format!("/api/thread/{}/{}%2F..%2F..", live.site, live.thread),
        format!("/api/thread/{}/..%2F{}", live.site, live.thread),
        "/api/thread/dz/99999999".into(),
        "/api/thread/nosuchsite/1".into(),
        format!("/api/thread/{}/{}", failed.site, failed.thread),
        "/archive/..%2F..%2Fetc/passwd".into(),
        format!("/archive/{}/..%2F..%2Fluntan.db", live.site),
        format!("/archive/{}/{}?page=99", live.site, live.thread),
        "/thread/..%2F..%2Fetc/passwd".into(),
        "/thread/dz/..%5C..%5Cwindows".into(),
        "/static/../../etc/passwd".into(),
        "/static/..%2F..%2Fetc%2Fpasswd".into(),
        "/../../../../etc/passwd".into(),
        "/%2e%2e/%2e%2e/etc/passwd".into(),
        "/api/../../luntan.db".into(),
    ];
    for t in &tricks {
        let r = get(s.addr, t, &[]);
        assert_eq!(r.status, 404, "{t}: {}", r.text());
        let body = r.text();
        assert!(!body.contains("root:") && !body.contains("SQLite format"), "{t} leaked a file: {body}");
    }
    // The live thread itself is there, so the 404s above are the tricks'.
    assert_eq!(get(s.addr, &format!("/api/thread/{}/{}", live.site, live.thread), &[]).status, 200);
    let archived = get(s.addr, &format!("/archive/{}/{}", live.site, live.thread), &[]);
    assert_eq!(archived.status, 200);
    assert_eq!(archived.header("content-security-policy"), Some("sandbox"));
    assert!(archived.header("content-type").unwrap().starts_with("text/html"));

    let long_q = "书".repeat(400);
    let long_qs = "a".repeat(5000);
    let bad = [
        ("/api/search".to_string(), "q"),
        ("/api/search?q=".into(), "q"),
        ("/api/search?q=%22abc".into(), "column"),
        ("/api/search?q=(a".into(), "column"),
        ("/api/search?q=a%20OR".into(), "column"),
        ("/api/search?q=-a".into(), "nothing to search"),
        (format!("/api/search?q={}", enc(&long_q)), "longer than"),
        ("/api/search?q=a&limit=1000".into(), "limit"),
        ("/api/search?q=a&limit=abc".into(), "limit"),
        ("/api/search?q=a&limit=18446744073709551616".into(), "limit"),
        ("/api/search?q=a&offset=-1".into(), "offset"),
        ("/api/search?q=a&offset=100000".into(), "offset"),
        ("/api/search?q=a&since=2024-99-99".into(), "since"),
        ("/api/search?q=a&until=yesterday".into(), "until"),
        ("/api/search?q=a&since=2024-02-01&until=2024-01-01".into(), "after"),
        ("/api/search?q=a&sort=best".into(), "sort"),
        ("/api/search?q=a&site=..%2Fetc".into(), "site"),
        ("/api/search?q=a&site=nosuch".into(), "no such forum"),
        ("/api/search?q=a&board=%2Fetc".into(), "board"),
        (format!("/api/search?q=a&author={}", "名".repeat(65)), "author"),
        ("/api/search?q=a&bogus=1".into(), "unknown parameter"),
        (format!("/api/search?q=a&x={long_qs}"), "query string"),
        ("/api/trend?q=a&interval=year".into(), "interval"),
        ("/api/trend?interval=day".into(), "q"),
        ("/feed.atom?q=%22".into(), "column"),
        ("/api/status?site=..".into(), "site"),
    ];
    for (t, word) in &bad {
        let r = get(s.addr, t, &[]);
        assert_eq!(r.status, 400, "{t}: {}", r.text());
        let v = r.json();
        assert!(v["error"].as_str().unwrap().contains(word), "{t}: {v}");
        if *word == "column" {
            assert!(v["column"].as_u64().is_some(), "{t}: {v}");
        }
    }
    // Odd bytes and encodings: whatever they mean, never a 500.
    for t in [
        "/api/search?q=%FF%FE",
        "/api/search?q=%00",
        "/api/search?q=%E4%B9",
        "/api/search?q=a&q=",
        "/api/search?q=%F0%9F%98%80",
        "/?q=%22",
        "/search?q=a&page=0",
        "/trend?q=(",
        "/search?q=a&page=x",
    ] {
        let r = get(s.addr, t, &[]);
        assert!(r.status < 500, "{t}: {} {}", r.status, r.text());
    }
    // The HTML search page reports a malformed query with its column, as 400.
    let r = get(s.addr, "/search?q=%22abc", &[]);
    assert_eq!(r.status, 400);
    assert!(r.text().contains("第 1 个字符"), "{}", r.text());
}

#[test]
fn a_running_server_finds_what_luntan_index_commits_and_a_new_reply_moves_the_feed() {
    let (work, fixture) = crawl(25);
    let addr = start_server(luntan_serve::ServeConfig::new(work.index(), work.data()));
    let count = |site: &str| get(addr, &format!("/api/search?q=site:{site}&limit=0"), &[]).json()["total"].as_u64().unwrap();
    let servable = |truth: &Truth, site: &str| truth.forums.iter().flat_map(|f| &f.threads).filter(|t| t.site == site && t.servable()).count() as u64;
    let sites: Vec<String> = fixture.truth().forums.iter().map(|f| f.site.clone()).collect();
    for site in &sites {
        assert_eq!(count(site), servable(&fixture.truth(), site));
    }

    let added = fixture.add_threads(6);
    assert!(!added.is_empty());
    recrawl(&work);
    let truth = fixture.truth();
    for site in &sites {
        assert_eq!(count(site), servable(&truth, site), "{site} after the commit");
    }
    for c in &added {
        let r = get(addr, &format!("/api/thread/{}/{}", c.site, c.thread), &[]);
        assert_eq!(r.status, 200, "{}/{}", c.site, c.thread);
    }

    // A reply to a thread: the thread's feed entry keeps its id, and its
    // `updated` moves to the new post's time.
    let feed_of = |t: &luntan_fixture::ThreadTruth| {
        let q = format!("site:{} title:\"{}\"", t.site, title_run(&t.title)?);
        let xml = get(addr, &format!("/feed.atom?q={}", enc(&q)), &[]).text();
        atom_entries(&xml).into_iter().find(|(id, _)| id == &format!("tag:luntan,2024:thread/{}/{}", t.site, t.thread))
    };
    let replies = fixture.add_replies(4);
    let replied: Vec<&luntan_fixture::Change> = replies.iter().collect();
    let truth_before = truth;
    let before: Vec<_> = replied
        .iter()
        .filter_map(|c| truth_before.forums.iter().flat_map(|f| &f.threads).find(|t| t.site == c.site && t.thread == c.thread))
        .filter_map(|t| feed_of(t).map(|e| (t.clone(), e)))
        .collect();
    assert!(!before.is_empty(), "no replied thread found in its own feed");
    recrawl(&work);
    for (t, (id, updated)) in &before {
        let (id2, updated2) = feed_of(t).expect("still in the feed");
        assert_eq!(&id2, id);
        let newest = replies.iter().filter(|c| c.site == t.site && c.thread == t.thread).map(|c| c.time.clone()).max().unwrap();
        // The fixture's site files name no time zone: the default, +08:00.
        assert_eq!(updated2, format!("{newest}+08:00"), "{}/{}", t.site, t.thread);
        assert!(updated2 > *updated);
    }
}

/// A round that visits every board (boards are not due again yet) and
/// carries what it finds through to the index.
fn recrawl(work: &Work) {
    work.ok("discover", &["--all-boards"]);
    for stage in ["download", "extract", "index"] {
        work.ok(stage, &[]);
    }
}

#[test]
fn beyond_loopback_a_token_is_required_or_public_must_be_said() {
    let s = served();
    let serve = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_luntan-serve"))
            .arg("--index-dir")
            .arg(s.work.index())
            .arg("--data")
            .arg(s.work.data())
            .args(args)
            .env_remove("LUNTAN_SERVE_TOKEN")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("luntan-serve")
    };
    // Refused before binding: no token, no --public.
    let out = serve(&["--addr", "0.0.0.0:0"]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--token") && err.contains("--public"), "{err}");

    // Bound to every address, reached through 127.0.0.1.
    let token = "s3cret-token-0123456789";
    let mut child = serve(&["--addr", "0.0.0.0:0", "--token", token]);
    let port = listening_port(&mut child);
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let q = format!("/api/search?q={}", enc(&s.common_query()));
    for (headers, what) in [
        (vec![], "no token"),
        (vec![("Authorization", "Bearer wrong-token-0123456789")], "a wrong token"),
        (vec![("Authorization", "Bearer s3cret-token-012345678")], "a token cut short"),
        (vec![("Cookie", "luntan_token=nope")], "a wrong cookie"),
    ] {
        for target in [q.as_str(), "/api/status", "/", "/api/openapi.json", "/api/thread/dz/1", "/feed.atom?q=a"] {
            let r = get(addr, target, &headers);
            assert_eq!(r.status, 401, "{what} {target}");
            let body = r.text();
            assert!(!body.contains("hits") && !body.contains("indexed") && !body.contains("<html"), "{what} {target}: {body}");
        }
    }
    let bearer = format!("Bearer {token}");
    let r = get(addr, &q, &[("Authorization", &bearer)]);
    assert_eq!(r.status, 200);
    assert!(r.json()["total"].as_u64().unwrap() > 0);
    let r = get(addr, &format!("/?token={token}"), &[]);
    assert_eq!(r.status, 200);
    let cookie = r.header("set-cookie").expect("a cookie for the pages after").split(';').next().unwrap().to_string();
    assert!(r.header("set-cookie").unwrap().contains("HttpOnly"));
    assert_eq!(get(addr, "/status", &[("Cookie", &cookie)]).status, 200);
    child.kill().unwrap();
    child.wait().unwrap();

    // --public serves without a token.
    let mut child = serve(&["--addr", "0.0.0.0:0", "--public"]);
    let port = listening_port(&mut child);
    let r = get(format!("127.0.0.1:{port}").parse().unwrap(), &q, &[]);
    assert_eq!(r.status, 200);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The first run of CJK characters in a title (up to 6), if it has 3.
fn title_run(title: &str) -> Option<String> {
    let run: String = title.chars().skip_while(|c| !luntan_search::analysis::is_cjk(*c)).take_while(|c| luntan_search::analysis::is_cjk(*c)).take(6).collect();
    (run.chars().count() >= 3).then_some(run)
}

/// The port from luntan-serve's first stderr line (`luntan-serve: http://0.0.0.0:PORT/ …`).
fn listening_port(child: &mut std::process::Child) -> u16 {
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    let re = regex::Regex::new(r"http://[^/]*:(\d+)/").unwrap();
    let port = re.captures(&line).unwrap_or_else(|| panic!("no address in {line:?}"))[1].parse().unwrap();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    port
}

#[test]
fn with_no_index_or_a_broken_one_searches_are_503_with_the_reason_and_the_server_recovers() {
    let work = Work::new();
    let addr = start_server(luntan_serve::ServeConfig::new(work.index(), work.data()));
    let unavailable = |target: &str| {
        let r = get(addr, target, &[]);
        assert_eq!(r.status, 503, "{target}: {}", r.text());
        r.json()["error"].as_str().unwrap_or_else(|| panic!("{target}: no error message: {}", r.text())).to_owned()
    };
    assert!(unavailable("/api/search?q=%E9%85%92%E5%BA%97").contains("no <site>.index yet"));
    assert!(unavailable("/api/status").contains("no crawl database"));
    // An index a crash or a disk error left unreadable: named, and still 503.
    let broken = work.index().join("dz.index");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("meta.json"), b"{ not json").unwrap();
    assert!(unavailable("/api/search?q=%E9%85%92%E5%BA%97").contains("dz.index"));
    // Once it is rebuilt the same server answers, without a restart.
    std::fs::remove_dir_all(&broken).unwrap();
    let (crawled, _fixture) = crawl(10);
    std::fs::rename(crawled.index().join("dz.index"), &broken).unwrap();
    let r = get(addr, "/api/search?q=%E9%85%92%E5%BA%97", &[]);
    assert_eq!(r.status, 200, "{}", r.text());
}

/// The status table's thread columns count each thread once, where it is
/// now, and are named for that, on the page and in luntan-status, beside
/// the `--json` counts they show.
#[test]
fn status_columns_are_named_for_what_they_count_on_the_page_and_in_the_cli() {
    let s = served();
    let cli: Vec<Value> = s.work.ok("status", &["--json"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"));
    let columns = ["discovered", "saved", "extracted", "indexed", "failed"];

    let r = get(s.addr, "/status", &[]);
    assert_eq!(r.status, 200);
    let page = scraper::Html::parse_document(&r.text());
    let sel = |css: &str| scraper::Selector::parse(css).unwrap();
    let heads: Vec<String> = page.select(&sel("table.status thead th")).map(|th| th.text().collect()).collect();
    assert_eq!(heads, ["论坛", "版块", "待下载", "待抽取", "待索引", "已索引", "失败", "共发现"]);
    let legend: Vec<String> = page.select(&sel("dl.legend dt")).map(|dt| dt.text().collect()).collect();
    assert_eq!(legend, heads[2..], "every thread column explained");
    assert_eq!(page.select(&sel("dl.legend dd")).count(), legend.len());
    for site in &cli {
        let name = site["site"].as_str().unwrap();
        let row = page.select(&sel(&format!("tr[data-site=\"{name}\"]"))).next().unwrap_or_else(|| panic!("no row for {name}"));
        let cells: Vec<u64> = row.select(&sel("td")).skip(2).map(|td| td.text().collect::<String>().parse().unwrap()).collect();
        let mut want: Vec<u64> = columns.iter().map(|k| count(site, k)).collect();
        want.push(want.iter().sum());
        assert_eq!(cells, want, "{name}");
        assert!(want[3] > 0 && want[0] == 0, "{name}: a finished crawl has nothing to download and its threads indexed: {want:?}");
    }

    let table = s.work.ok("status", &[]);
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(head, ["site", "boards", "to-download", "to-extract", "to-index", "indexed", "failed", "found"]);
    for site in &cli {
        let name = site["site"].as_str().unwrap();
        let line = table.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no line for {name}: {table}"));
        let got: Vec<u64> = line.split_whitespace().skip(1).map(|n| n.parse().unwrap()).collect();
        let mut want = vec![count(site, "boards")];
        want.extend(columns.iter().map(|k| count(site, k)));
        want.push(columns.iter().map(|k| count(site, k)).sum());
        assert_eq!(got, want, "{name}: {line}");
    }
    assert!(table.contains("to-download = listed, pages not saved yet"), "the table says what its columns count: {table}");
}

/// An archived page: a banner naming the page it is a copy of and when it
/// was saved, then the forum's page with every link mended: a page the
/// archive holds (here the thread's own later page) through `/archive/…`,
/// any other relative link (the board's list, the login page) absolute to
/// the forum, the rest as written. Checked link for link against the saved
/// page's own `<a href>` values, as download's scanner reads them.
#[test]
fn an_archived_page_says_whose_copy_it_is_and_its_links_lead_to_the_archive_or_the_forum() {
    let s = served();
    let store = luntan_core::Store::open(&s.work.layout().db_path()).unwrap();
    let saved: BTreeSet<(&str, &str)> = s.docs.iter().map(|d| (d.site.as_str(), d.thread.as_str())).collect();
    let anchors = scraper::Selector::parse("a[href]").unwrap();
    let banner_sel = scraper::Selector::parse("#luntan-archive-banner").unwrap();
    for site in s.sites() {
        let d = s.docs.iter().find(|d| d.site == site && d.pages >= 2).unwrap_or_else(|| panic!("{site}: no saved thread of two pages"));
        let row = store.thread(&d.site, &d.thread).unwrap().unwrap();
        let loc = row.saved_location().unwrap();
        let page_one = luntan_core::capture::read(&s.work.layout().http_path(&loc)).unwrap().unwrap().into_iter().find(|c| c.page == 1).unwrap();
        let original = std::fs::read(s.work.layout().html_path(&loc, 1)).unwrap();
        let hrefs = luntan_crawl::hrefs::Page { body: &original, content_type: row.content_type.as_deref(), forced: None }.hrefs().unwrap();

        let r = get(s.addr, &format!("/archive/{}/{}", d.site, d.thread), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-security-policy"), Some("sandbox"), "still sandboxed: no script of the forum's runs");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        let page = scraper::Html::parse_document(&r.text());
        let banner = page.select(&banner_sel).next().unwrap_or_else(|| panic!("{site}: no banner"));
        let text: String = banner.text().collect();
        let at = &page_one.at;
        let want = format!("这是 {} 的存档副本，保存于 {} {}（UTC）", page_one.url, &at[..10], &at[11..16]);
        assert!(text.contains(&want), "{site}: banner {text:?}, want {want:?}");
        assert!(text.contains(&format!("第 1 页，共 {} 页", d.pages)), "{text}");

        let served: Vec<String> =
            page.select(&anchors).filter(|a| !a.ancestors().any(|p| p.id() == banner.id())).map(|a| a.value().attr("href").unwrap().to_string()).collect();
        assert_eq!(served.len(), hrefs.anchors.len(), "{site}: one link for each of the saved page's: {served:?}");
        let base = url::Url::parse(&page_one.url).unwrap();
        let (mut to_archive, mut to_forum) = (Vec::new(), Vec::new());
        for (was, now) in hrefs.anchors.iter().zip(&served) {
            let was = was.trim();
            let resolved = base.join(was).ok().filter(|u| matches!(u.scheme(), "http" | "https"));
            if let Some(path) = now.strip_prefix("/archive/") {
                // A page the archive holds: served, and a thread the crawl saved.
                let (thread, _) = path.split_once(['?', '#']).unwrap_or((path, ""));
                let (to_site, to_thread) = thread.split_once('/').unwrap();
                assert!(saved.contains(&(to_site, to_thread)), "{site}: {was} → {now}, not a saved thread");
                assert_eq!(get(s.addr, now, &[]).status, 200, "{now}");
                assert!(resolved.is_some(), "{was} → {now}");
                to_archive.push(now.clone());
            } else if let Some(resolved) = resolved.filter(|_| !was.starts_with('#') && url::Url::parse(was).is_err()) {
                assert_eq!(now, resolved.as_str(), "{site}: a relative link to a page not saved goes to the forum");
                assert!(!s.docs.iter().any(|d| d.url == resolved.as_str()), "{site}: {resolved} is a saved thread, yet not linked to the archive");
                to_forum.push(now.clone());
            } else {
                assert_eq!(now, was, "{site}: a fragment, another scheme or an absolute link stays as written");
            }
        }
        let page_two = format!("/archive/{}/{}?page=2", d.site, d.thread);
        assert!(to_archive.contains(&page_two), "{site}: the pager's link to page 2 leads to {page_two}: {to_archive:?}");
        assert!(!to_forum.is_empty() && to_forum.iter().all(|u| u.starts_with(&base.origin().ascii_serialization())), "{site}: {to_forum:?}");
        // Page 2 says it is page 2, and links back to page 1 through the archive.
        let two = get(s.addr, &page_two, &[]).text();
        assert!(two.contains(&format!("第 2 页，共 {} 页", d.pages)), "{two}");
        assert!(two.contains(&format!("href=\"/archive/{}/{}\"", d.site, d.thread)), "{site}: page 2 links page 1 in the archive");
    }
}

/// Every `<a>` of a page as (its attributes, its `href` unescaped as a browser reads it).
fn page_links(html: &str) -> Vec<(String, String)> {
    let a = regex::Regex::new(r#"<a ([^>]*)>"#).unwrap();
    let href = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    a.captures_iter(html)
        .filter_map(|c| Some((c[1].to_string(), href.captures(&c[1])?[1].replace("&amp;", "&").replace("&#39;", "'").replace("&quot;", "\""))))
        .collect()
}

/// A link's query string as its decoded pairs.
fn query_pairs(link: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(link.split_once('?').map_or("", |(_, q)| q).as_bytes()).into_owned().collect()
}

/// The number in `<span id="total">`.
fn page_total(html: &str) -> usize {
    let re = regex::Regex::new(r#"<span id="total">(\d+)</span>"#).unwrap();
    re.captures(html).unwrap_or_else(|| panic!("no total on the page: {html}"))[1].parse().unwrap()
}

/// The one-character query the most threads hold (more than a hundred, so
/// that results span many pages and an export more than the API's 100).
pub fn broad_query(s: &Served) -> (String, usize) {
    let best = common::sample_cjk_strings(&s.docs, 300, 5)
        .into_iter()
        .filter(|q| q.chars().count() == 1)
        .map(|q| {
            let n = s.matching(&q).len();
            (q, n)
        })
        .max_by_key(|(_, n)| *n)
        .unwrap();
    assert!(best.1 > 100, "no query matches more than 100 threads: {best:?}");
    best
}

/// Hits of `/api/search` for `search` (a query string), all pages read.
fn api_hits(s: &Served, search: &str) -> Vec<Value> {
    let mut hits: Vec<Value> = Vec::new();
    loop {
        let r = get(s.addr, &format!("/api/search?{search}&limit=100&offset={}", hits.len()), &[]);
        assert_eq!(r.status, 200, "{search}: {}", r.text());
        let api = r.json();
        let page = api["hits"].as_array().unwrap();
        hits.extend(page.iter().cloned());
        if page.is_empty() || hits.len() >= api["total"].as_u64().unwrap() as usize {
            return hits;
        }
    }
}

#[test]
fn every_link_of_the_search_page_keeps_the_whole_search_and_unknown_parameters_are_ignored() {
    let s = served();
    let (q, _) = broad_query(s);
    let sites = s.sites();
    let matching = s.matching(&q);
    // The busiest author and board among the matches of two forums: a search
    // filtered by all of them that still has a second page.
    let two: Vec<&&ThreadDoc> = matching.iter().filter(|d| d.site != sites[2]).collect();
    let mut boards: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &two {
        *boards.entry(d.board.as_str()).or_default() += 1;
    }
    let board = boards.iter().max_by_key(|(_, n)| **n).map(|(b, _)| b.to_string()).unwrap();
    let mut authors: BTreeMap<&str, usize> = BTreeMap::new();
    for d in two.iter().filter(|d| d.board == board) {
        let mut seen = BTreeSet::new();
        for p in &d.posts {
            if seen.insert(p.author.trim()) {
                *authors.entry(p.author.trim()).or_default() += 1;
            }
        }
    }
    let mut by_count: Vec<(&str, usize)> = authors.into_iter().filter(|(a, _)| !a.is_empty()).collect();
    by_count.sort_by_key(|a| std::cmp::Reverse(a.1));
    let mut chosen = None;
    for (author, _) in by_count.iter().take(10) {
        for filters in [format!("&board={board}&author={}", enc(author)), format!("&author={}", enc(author)), format!("&board={board}")] {
            let search = format!("q={}&site={}&site={}{filters}&since=2000-01-01&until=2099-12-31&sort=newest", enc(&q), sites[0], sites[1]);
            let total = get(s.addr, &format!("/api/search?{search}&limit=0"), &[]).json()["total"].as_u64().unwrap() as usize;
            if total > 10 {
                chosen = Some((search, total));
                break;
            }
        }
        if chosen.is_some() {
            break;
        }
    }
    let (search, total) = chosen.expect("a filtered search with a second page");
    let want = query_pairs(&format!("?{search}"));
    let keys: BTreeSet<&str> = want.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains("author") || keys.contains("board"), "{search}");

    // A chat app's parameters are ignored by the page, refused by the API.
    let first = get(s.addr, &format!("/search?{search}&from=singlemessage&isappinstalled=0"), &[]);
    assert_eq!(first.status, 200, "{}", first.text());
    let html = first.text();
    assert_eq!(page_total(&html), total);
    let api = get(s.addr, &format!("/api/search?{search}&from=singlemessage"), &[]);
    assert_eq!(api.status, 400);
    assert!(api.json()["error"].as_str().unwrap().contains("unknown parameter \"from\""));
    for page in ["/", "/search", "/trend"] {
        let r = get(s.addr, &format!("{page}?q={}&from=singlemessage&isappinstalled=0", enc(&q)), &[]);
        assert_eq!(r.status, 200, "{page}: {}", r.text());
    }
    let d = &s.docs[0];
    let r = get(s.addr, &format!("/thread/{}/{}?q={}&from=singlemessage", d.site, d.thread, enc(&q)), &[]);
    assert_eq!(r.status, 200, "{}", r.text());

    // Every link but the facets' carries the search exactly (a page number
    // or a hit's place added); a facet link changes only its own filter.
    let links = page_links(&html);
    let mut kinds = BTreeSet::new();
    for (attrs, href) in &links {
        let kind = if attrs.contains("rel=\"next\"") || attrs.contains("rel=\"prev\"") || attrs.contains("class=\"page") {
            "pager"
        } else if href.starts_with("/thread/") {
            "thread"
        } else if href.starts_with("/trend?") {
            "trend"
        } else if href.starts_with("/feed.atom?") {
            "feed"
        } else if href.starts_with("/export.") {
            "export"
        } else if attrs.contains("data-value=") {
            "facet"
        } else {
            continue;
        };
        kinds.insert(kind);
        let mut got = query_pairs(href);
        got.retain(|(k, _)| k != "page" && k != "n");
        if kind == "facet" {
            // The facet's own keys change; every other filter stays.
            let changed: BTreeSet<&str> = ["site", "board", "author", "since", "until"].into_iter().collect();
            let kept = |v: &Vec<(String, String)>| v.iter().filter(|(k, _)| !changed.contains(k.as_str())).cloned().collect::<Vec<_>>();
            assert_eq!(kept(&got), kept(&want), "{href}");
            for (k, v) in &want {
                if changed.contains(k.as_str()) && !got.iter().any(|(gk, _)| gk == k) {
                    panic!("{href} dropped {k}={v}");
                }
            }
        } else {
            assert_eq!(got, want, "{kind} link {href}");
        }
    }
    assert_eq!(kinds, ["export", "facet", "feed", "pager", "thread", "trend"].into_iter().collect(), "{links:?}");

    // 下一页 leads to the same search's second page: the same total, other hits.
    let next = links.iter().find(|(a, _)| a.contains("rel=\"next\"")).map(|(_, h)| h.clone()).expect("a next link");
    let second = get(s.addr, &next, &[]).text();
    assert_eq!(page_total(&second), total, "{next}");
    let threads = |html: &str| {
        page_links(html).into_iter().filter(|(_, h)| h.starts_with("/thread/")).map(|(_, h)| h.split('?').next().unwrap().to_string()).collect::<BTreeSet<_>>()
    };
    assert!(threads(&html).is_disjoint(&threads(&second)));
    assert_eq!(threads(&second).len(), (total - 10).min(10));
    // And the trend and feed links answer for the same filters.
    for kind in ["/trend?", "/feed.atom?"] {
        let link = links.iter().find(|(_, h)| h.starts_with(kind)).unwrap().1.clone();
        assert_eq!(get(s.addr, &link, &[]).status, 200, "{link}");
    }
}

/// Brute-force facet counts of `docs`: forum, (site, board), author as
/// written (each thread once per name), `YYYY`, `YYYY-MM` of the first post.
pub fn brute_facets(docs: &[&ThreadDoc]) -> BTreeMap<&'static str, BTreeMap<(String, String), u64>> {
    let mut out: BTreeMap<&'static str, BTreeMap<(String, String), u64>> = BTreeMap::new();
    for d in docs {
        let mut add = |facet: &'static str, site: &str, v: &str| *out.entry(facet).or_default().entry((site.to_string(), v.to_string())).or_default() += 1;
        add("forum", "", &d.site);
        add("board", &d.site, &d.board);
        let mut seen = BTreeSet::new();
        for p in &d.posts {
            let a = p.author.trim();
            if !a.is_empty() && seen.insert(a) {
                add("author", "", a);
            }
        }
        if let Some(t) = d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref())) {
            add("year", "", &t[..4]);
            add("month", "", &t[..7]);
        }
    }
    out
}

#[test]
fn facets_count_every_match_as_brute_force_does_in_the_api_and_on_the_page() {
    let s = served();
    let doc = get(s.addr, "/api/openapi.json", &[]).json();
    let (q, n) = broad_query(s);
    let site = s.sites()[0].clone();
    for (extra, keep) in [
        (String::new(), Box::new(|_: &ThreadDoc| true) as Box<dyn Fn(&ThreadDoc) -> bool>),
        (
            format!("&site={site}&since=2000-01-01"),
            Box::new(move |d: &ThreadDoc| {
                d.site == site && d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref())).is_some_and(|p| p >= "2000-01-01")
            }),
        ),
    ] {
        let matching: Vec<&ThreadDoc> = s.matching(&q).into_iter().filter(|d| keep(d)).collect();
        let r = get(s.addr, &format!("/api/search?q={}{extra}&limit=3&facets=1", enc(&q)), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        assert_valid(&doc, "/api/search", "200", &v);
        assert_eq!(v["total"].as_u64().unwrap() as usize, matching.len());
        assert_eq!(v["hits"].as_array().unwrap().len(), 3, "facets count all matches, the page stays 3");
        let want = brute_facets(&matching);
        for facet in ["forum", "board", "author", "year", "month"] {
            let got = &v["facets"][facet];
            let values = got["values"].as_array().unwrap();
            let all = &want[facet];
            // The top 20 by count, ties by (site, value), and the rest counted.
            let mut ranked: Vec<(&(String, String), &u64)> = all.iter().collect();
            ranked.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            ranked.truncate(20);
            let got_values: Vec<((String, String), u64)> = values
                .iter()
                .map(|x| ((x["site"].as_str().unwrap_or("").to_string(), x["value"].as_str().unwrap().to_string()), x["count"].as_u64().unwrap()))
                .collect();
            let want_values: Vec<((String, String), u64)> = ranked.into_iter().map(|(k, n)| (k.clone(), *n)).collect();
            assert_eq!(got_values, want_values, "{facet} {extra}");
            assert_eq!(got["more"].as_u64().unwrap() as usize, all.len().saturating_sub(20), "{facet} {extra}");
        }
        let undated = matching.iter().filter(|d| d.posted.is_none() && d.posts.iter().all(|p| p.time.is_none())).count();
        assert_eq!(v["facets"]["undated"].as_u64().unwrap() as usize, undated);
        // Forums by their names.
        for f in v["facets"]["forum"]["values"].as_array().unwrap() {
            let d = matching.iter().find(|d| d.site == f["value"].as_str().unwrap()).unwrap();
            assert_eq!(f["name"].as_str().unwrap(), d.forum, "{f}");
        }
    }
    assert!(n > 100);
    // Without facets=1 there is no facets object; a bad value is a 400.
    assert!(get(s.addr, &format!("/api/search?q={}", enc(&q)), &[]).json().get("facets").is_none());
    assert_eq!(get(s.addr, &format!("/api/search?q={}&facets=yes", enc(&q)), &[]).status, 400);

    // The page shows the same counts (its top 10), each a link that narrows
    // the search to that value: a board's or a year's link finds as many
    // threads as its count says.
    let matching = s.matching(&q);
    let want = brute_facets(&matching);
    let html = get(s.addr, &format!("/search?q={}", enc(&q)), &[]).text();
    let facet_re = regex::Regex::new(r#"<section class="facet" data-facet="(\w+)">(.*?)</section>"#).unwrap();
    let value_re = regex::Regex::new(r#"<a href="([^"]*)" data-value="([^"]*)" data-site="([^"]*)" data-count="(\d+)""#).unwrap();
    let mut seen = BTreeSet::new();
    for c in facet_re.captures_iter(&html) {
        let facet = c[1].to_string();
        for v in value_re.captures_iter(&c[2]) {
            let site = if facet == "board" { v[3].to_string() } else { String::new() };
            let value = v[2].replace("&amp;", "&").replace("&#39;", "'").replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">");
            let count: u64 = v[4].parse().unwrap();
            assert_eq!(want[facet.as_str()].get(&(site, value.clone())), Some(&count), "{facet} {value}");
            if matches!(facet.as_str(), "board" | "year" | "month" | "forum") {
                let link = v[1].replace("&amp;", "&");
                assert_eq!(page_total(&get(s.addr, &link, &[]).text()) as u64, count, "{facet} {value}: {link}");
            }
        }
        seen.insert(facet);
    }
    assert_eq!(seen, ["author", "board", "forum", "month", "year"].into_iter().map(String::from).collect());
}

/// One HTTP/1.1 GET: the status, the headers and the body with any
/// chunked transfer coding undone, and whether it was chunked.
fn get_http11(addr: SocketAddr, target: &str) -> (Resp, bool) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|c| c.parse().ok()).expect("status line");
    let headers: Vec<(String, String)> = lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let mut resp = Resp { status, headers, body: raw[split + 4..].to_vec() };
    let chunked = resp.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    if chunked {
        let (mut body, mut rest) = (Vec::new(), &resp.body[..]);
        loop {
            let eol = rest.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().split(';').next().unwrap().trim(), 16).unwrap();
            rest = &rest[eol + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(&rest[..size]);
            assert_eq!(&rest[size..size + 2], b"\r\n", "chunk end");
            rest = &rest[size + 2..];
        }
        resp.body = body;
    }
    (resp, chunked)
}

/// RFC 4180 records (quoted fields, doubled quotes, CRLF line ends).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "the last record lacks its CRLF");
    rows
}

#[test]
fn an_export_streams_every_hit_of_the_search_as_csv_and_ndjson() {
    let s = served();
    let (q, n) = broad_query(s);
    let search = format!("q={}&sort=newest", enc(&q));
    let api = api_hits(s, &search);
    assert_eq!(api.len(), n);
    assert!(n > 100, "more than one API page");

    let (r, chunked) = get_http11(s.addr, &format!("/export.ndjson?{search}&from=singlemessage"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(chunked && r.header("content-length").is_none(), "not streamed: {:?}", r.headers);
    assert!(r.header("content-disposition").unwrap().starts_with("attachment;"));
    assert!(r.header("content-type").unwrap().starts_with("application/x-ndjson"));
    assert_eq!(r.header("x-total-count"), Some(n.to_string().as_str()));
    let lines: Vec<Value> = r.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Exactly the API's hits, all of them, in the same order.
    assert_eq!(lines, api);

    let (r, chunked) = get_http11(s.addr, &format!("/export.csv?{search}"));
    assert_eq!(r.status, 200);
    assert!(chunked && r.header("content-length").is_none());
    assert!(r.header("content-type").unwrap().starts_with("text/csv"));
    assert!(r.body.starts_with("\u{FEFF}".as_bytes()), "a BOM for Excel");
    let rows = parse_csv(r.text().trim_start_matches('\u{FEFF}'));
    assert_eq!(rows[0], ["rank", "site", "forum", "board", "thread", "title", "posted", "replies", "authors", "url", "snippet", "score"]);
    assert_eq!(rows.len() - 1, n);
    for (row, hit) in rows[1..].iter().zip(&api) {
        assert_eq!(row.len(), 12);
        assert_eq!(row[0], hit["rank"].to_string());
        assert_eq!((row[1].as_str(), row[4].as_str()), (hit["site"].as_str().unwrap(), hit["thread"].as_str().unwrap()));
        let title = hit["title"].as_str().unwrap();
        let formula = title.starts_with(['=', '+', '-', '@']);
        assert_eq!(row[5], if formula { format!("'{title}") } else { title.to_string() });
        assert_eq!(row[6], hit["posted"].as_str().unwrap_or(""));
        assert_eq!(row[7], hit["replies"].to_string());
    }
    // The brute-force set of matching threads, and a filter keeps to its forum.
    let want: BTreeSet<(String, String)> = s.matching(&q).iter().map(|d| (d.site.to_string(), d.thread.to_string())).collect();
    let got: BTreeSet<(String, String)> = rows[1..].iter().map(|r| (r[1].clone(), r[4].clone())).collect();
    assert_eq!(got, want);
    let site = s.sites()[1].clone();
    let (r, _) = get_http11(s.addr, &format!("/export.csv?q={}&site={site}", enc(&q)));
    let rows = parse_csv(r.text().trim_start_matches('\u{FEFF}'));
    assert_eq!(rows.len() - 1, s.matching(&q).iter().filter(|d| d.site == site).count());
    assert!(rows[1..].iter().all(|r| r[1] == site));
    // Refused before the first byte: a malformed query, an unknown forum.
    assert_eq!(get(s.addr, "/export.csv?q=%22abc", &[]).status, 400);
    assert_eq!(get(s.addr, "/export.ndjson?q=a&site=nosuch", &[]).status, 400);
}

#[test]
fn results_are_numbered_pages_with_time_taken_boards_replies_and_readable_times() {
    let s = served();
    let (q, n) = broad_query(s);
    let last = n.div_ceil(10);
    assert!(last >= 8, "the test needs pages past a gap: {n} hits");
    let html = get(s.addr, &format!("/search?q={}&page=5", enc(&q)), &[]).text();
    let nav = &html[html.find(r#"<nav class="pager""#).expect("a pager")..];
    let nav = &nav[..nav.find("</nav>").unwrap()];
    let pages: Vec<usize> = regex::Regex::new(r#"data-page="(\d+)""#).unwrap().captures_iter(nav).map(|c| c[1].parse().unwrap()).collect();
    assert_eq!(pages, [1, 3, 4, 5, 6, 7, last].into_iter().filter(|&p| p <= last).collect::<Vec<_>>(), "{nav}");
    assert!(nav.contains(r#"aria-current="page" data-page="5""#), "{nav}");
    assert!(nav.contains("上一页") && nav.contains("下一页") && nav.contains('…'));
    // The last page holds what is left.
    let link = page_links(nav).into_iter().find(|(a, _)| a.contains(&format!("data-page=\"{last}\""))).unwrap().1;
    let tail = get(s.addr, &link, &[]).text();
    assert_eq!(tail.matches(r#"<li class="hit""#).count(), n - (last - 1) * 10);
    assert!(!tail.contains("rel=\"next\"") && tail.contains("rel=\"prev\""));

    // Time taken, and each hit's board, reply count and readable time.
    let took = regex::Regex::new(r#"搜索用时 <span id="took">([\d.]+)</span> 毫秒"#).unwrap();
    assert!(took.is_match(&html), "no time taken");
    let hit = regex::Regex::new(r#"(?s)<li class="hit" data-site="([^"]*)" data-thread="([^"]*)" data-board="([^"]*)" data-replies="(\d+)">.*?<time class="posted" datetime="([^"]*)">([^<]*)</time>"#).unwrap();
    let readable = regex::Regex::new(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$").unwrap();
    let mut seen = 0;
    for c in hit.captures_iter(&html) {
        let d = s.docs.iter().find(|d| d.site == c[1] && d.thread == c[2]).unwrap();
        assert_eq!(&c[3], d.board);
        // Replies: the posts with text after the first (the index keeps no other count).
        let with_text = d.posts.iter().filter(|p| !p.text().trim().is_empty()).count();
        assert_eq!(c[4].parse::<usize>().unwrap(), with_text.saturating_sub(1), "{}/{}", d.site, d.thread);
        if let Some(p) = d.posted.as_deref().or_else(|| d.posts.iter().find_map(|p| p.time.as_deref())) {
            assert_eq!(&c[5], p);
            let shown = &c[6];
            assert!(readable.is_match(shown), "{shown}");
            assert!(p.starts_with(&shown.replace(' ', "T")), "{shown} is not {p}");
        }
        seen += 1;
    }
    assert_eq!(seen, 10);
    let replies: Vec<usize> = hit.captures_iter(&html).map(|c| c[4].parse().unwrap()).collect();
    assert!(replies.iter().any(|&r| r > 0), "the fixture's threads have replies");
    // Forum names on the checkboxes, the site id as their value.
    for f in &s.truth.forums {
        let name = s.docs.iter().find(|d| d.site == f.site).unwrap().forum.clone();
        assert!(
            html.contains(&format!(r#"value="{}""#, f.site)) && html.contains(&format!(r#"<span class="forum-name">{}</span>"#, luntan_serve::escape(&name))),
            "{name}"
        );
    }
}
