//! `luntan-export` over a real crawl: the three HTML fixture forums, the
//! XHR forum read through its JSON (protocol mode) and in Chromium
//! (browser mode), crawled by the real stage binaries over loopback; the
//! WARC read back and held against the files on disk and the fixture's own
//! log of what it served, the NDJSON against the thread XML and
//! docs/thread.schema.json. `scripts/check-warc.sh` gives the same kind of
//! WARC to warcio and pywb.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::Work;
use luntan_core::capture::{self, Exchange, PageCapture};
use luntan_core::store::ThreadRow;
use luntan_core::ThreadState;
use luntan_export::warc::{read_records, sha1_digest, ReadRecord};
use luntan_fixture::{FixtureConfig, FixtureServer};

/// One saved page as the data directory holds it.
struct Page {
    path: PathBuf,
    body: Vec<u8>,
    capture: PageCapture,
}

/// Every page of every saved row, with its line of `article<T>.http`.
fn saved_pages(work: &Work, rows: &[ThreadRow]) -> Vec<Page> {
    let layout = work.layout();
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.save_date.is_some()) {
        let loc = row.saved_location().unwrap();
        let lines = capture::read(&layout.http_path(&loc)).unwrap().unwrap_or_else(|| panic!("{}/{}: no article.http", row.site, row.thread));
        let json = row.content_type.as_deref() == Some("application/json");
        let n = row.pages.unwrap();
        assert_eq!(lines.len(), n as usize, "{}/{}: one line a page", row.site, row.thread);
        for page in 1..=n {
            let path = if json { layout.json_path(&loc, page) } else { layout.html_path(&loc, page) };
            let body = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let capture = lines.iter().find(|c| c.page == page).unwrap_or_else(|| panic!("{}: no line for page {page}", path.display())).clone();
            out.push(Page { path, body, capture });
        }
    }
    out
}

/// `YYYY-MM-DDThh:mm:ssZ` of a moment, as WARC-Date has it.
fn warc_date(t: SystemTime) -> String {
    let t = time::OffsetDateTime::from(t);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute(), t.second())
}

/// The header lines of an HTTP head, after its status line.
fn head_lines(head: &[u8]) -> (String, Vec<(String, Vec<u8>)>) {
    let text = &head[..head.len() - 4];
    let mut lines = text.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status = String::from_utf8(lines.next().unwrap().to_vec()).unwrap();
    let headers = lines
        .map(|l| {
            let colon = l.iter().position(|&b| b == b':').unwrap_or_else(|| panic!("header line {:?}", String::from_utf8_lossy(l)));
            (String::from_utf8(l[..colon].to_vec()).unwrap(), l[colon + 2..].to_vec())
        })
        .collect();
    (status, headers)
}

fn export(work: &Work, out: &Path) -> (PathBuf, PathBuf, std::process::Output) {
    let (warc, ndjson) = (out.join("crawl.warc.gz"), out.join("threads.ndjson"));
    let o = work.stage("export", &["-q", "--warc", warc.to_str().unwrap(), "--ndjson", ndjson.to_str().unwrap()]);
    (warc, ndjson, o)
}

#[test]
fn every_saved_page_is_one_warc_record_and_every_thread_one_ndjson_line_that_fits_the_schema() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 12, boards: 2, ..FixtureConfig::default() }).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    server.write_microblog_site_files(&work.sites()).unwrap();
    // The microblog is crawled user by user over several rounds; its JSON is the XHR forum's kind.
    std::fs::remove_file(work.sites().join("mb.xml")).unwrap();
    std::fs::write(work.sites().join("xhr-browser.xml"), luntan_fixture::browser_site_file(&server.base_url())).unwrap();
    work.ok("discover", &["--all-boards"]);
    work.ok("download", &[]);
    work.ok("extract", &[]);

    let rows = work.all_rows();
    let saved: Vec<ThreadRow> = rows.iter().filter(|r| r.save_date.is_some()).cloned().collect();
    let sites: BTreeSet<&str> = saved.iter().map(|r| r.site.as_str()).collect();
    assert_eq!(sites, BTreeSet::from(["bbs", "dz", "phpbb", "xhr", "xhr-browser"]), "every forum saved threads");
    assert!(saved.iter().any(|r| r.pages > Some(1) && r.site == "dz"), "no multi-page HTML thread");
    let pages = saved_pages(&work, &saved);
    let out = tempfile::tempdir().unwrap();
    let (warc, ndjson, o) = export(&work, out.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}\n{}", o.status, String::from_utf8_lossy(&o.stderr));
    let snapshots = pages.iter().filter(|p| p.capture.exchange == Exchange::Snapshot).count();
    assert!(snapshots > 0, "no browser state saved");
    let want =
        format!("{} pages with the head the forum sent, 0 saved before heads were kept (minimal head), {snapshots} browser states", pages.len() - snapshots);
    assert!(stdout.contains(&want), "{stdout}\nwanted {want:?}");
    assert!(stdout.contains("; 0 bad records left out"), "{stdout}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 2, "only the two files, no temp file");

    // Every page exactly once: its URL, date, head and body.
    let records = read_records(&std::fs::read(&warc).unwrap()).unwrap();
    assert_eq!(records[0].header("WARC-Type"), Some("warcinfo"));
    assert_eq!(records.len(), 1 + pages.len(), "one record a page");
    let served: Vec<luntan_fixture::RequestRecord> = server.requests();
    let mut used = vec![false; records.len()];
    for p in &pages {
        let c = &p.capture;
        let matching: Vec<usize> = (1..records.len())
            .filter(|&i| {
                let r = &records[i];
                r.header("WARC-Target-URI") == Some(c.url.as_str())
                    && (r.http_body().filter(|_| r.header("WARC-Type") == Some("response")).unwrap_or(&r.block) == p.body)
            })
            .collect();
        assert_eq!(matching.len(), 1, "{}: {} records of {} with its bytes", p.path.display(), matching.len(), c.url);
        let i = matching[0];
        assert!(!used[i], "{}: its record is another page's too", p.path.display());
        used[i] = true;
        let r: &ReadRecord = &records[i];
        assert_eq!(r.version, "WARC/1.1");
        assert_eq!(r.header("WARC-Block-Digest").unwrap(), sha1_digest(&r.block), "{}", p.path.display());
        assert_eq!(r.header("WARC-Payload-Digest").unwrap(), sha1_digest(&p.body), "{}", p.path.display());
        assert_eq!(r.header("WARC-Date").unwrap(), warc_date(c.time().unwrap().into()), "{}", p.path.display());
        // The fixture served that URL, and its record is dated when it did (to the second).
        let path_and_query = &c.url[server.base_url().trim_end_matches('/').len()..];
        let asked: Vec<&luntan_fixture::RequestRecord> = served.iter().filter(|s| s.path_and_query == path_and_query && s.status == 200).collect();
        match &c.exchange {
            Exchange::Response { status, version, headers } => {
                assert_eq!(r.header("WARC-Type"), Some("response"));
                assert_eq!(r.header("Content-Type"), Some("application/http;msgtype=response"));
                assert!(!asked.is_empty(), "{}: the fixture never served {path_and_query} with 200", p.path.display());
                let date = r.header("WARC-Date").unwrap().to_owned();
                assert!(
                    asked.iter().any(|s| warc_date(s.received) <= date && date <= warc_date(s.received + Duration::from_secs(5))),
                    "{}: dated {date}, served at {:?}",
                    p.path.display(),
                    asked.iter().map(|s| warc_date(s.received)).collect::<Vec<_>>()
                );
                let (status_line, got) = head_lines(r.http_head().unwrap());
                assert_eq!(status_line, format!("{version} {status} OK"));
                let kept: Vec<(String, Vec<u8>)> = headers
                    .iter()
                    .map(|(k, v)| (if k == "transfer-encoding" { format!("X-Archive-Orig-{k}") } else { k.clone() }, capture::latin1_bytes(v)))
                    .collect();
                assert_eq!(got, kept, "{}: the head as received", p.path.display());
                let header = |name: &str| got.iter().find(|(k, _)| k == name).map(|(_, v)| String::from_utf8_lossy(v).into_owned());
                // The body is kept decompressed: no header may say otherwise.
                assert_eq!(header("content-encoding"), None, "{}", p.path.display());
                if let Some(len) = header("content-length") {
                    assert_eq!(len, p.body.len().to_string(), "{}", p.path.display());
                }
                assert!(header("content-type").is_some_and(|ct| !ct.is_empty()), "{}: no content type", p.path.display());
                assert!(header("date").is_some(), "{}: the server's Date", p.path.display());
            }
            Exchange::Snapshot => {
                assert_eq!(r.header("WARC-Type"), Some("resource"));
                assert_eq!(r.header("Content-Type"), Some("text/html; charset=utf-8"));
                assert!(p.path.to_string_lossy().contains("/xhr-browser/"), "{}", p.path.display());
            }
        }
    }
    let json_pages = pages.iter().filter(|p| p.path.extension().is_some_and(|e| e == "json")).count();
    assert!(json_pages > 0, "no JSON page saved");
    for p in pages.iter().filter(|p| p.path.extension().is_some_and(|e| e == "json")) {
        let Exchange::Response { headers, .. } = &p.capture.exchange else { panic!("a JSON page is a response") };
        assert!(headers.iter().any(|(k, v)| k == "content-type" && v.starts_with("application/json")), "{}: {headers:?}", p.path.display());
    }

    // Every extracted thread exactly once, fitting the schema, holding its XML.
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/thread.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("docs/thread.schema.json is a valid JSON Schema");
    let text = std::fs::read_to_string(&ndjson).unwrap();
    let mut lines: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}"));
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", v["id"]);
        let id = v["id"].as_str().unwrap().to_owned();
        assert!(lines.insert(id.clone(), v).is_none(), "{id} twice");
    }
    let extracted: Vec<&ThreadRow> = rows.iter().filter(|r| r.state == ThreadState::Extracted).collect();
    assert!(extracted.len() >= 40, "{}", extracted.len());
    assert_eq!(lines.len(), extracted.len());
    for row in extracted {
        let doc = common::thread_doc(&work, &row.site, &row.thread);
        let v = &lines[&format!("{}/{}", row.site, row.thread)];
        let s = |x: &str| serde_json::Value::from(x);
        let opt = |x: &Option<String>| x.as_deref().map_or(serde_json::Value::Null, s);
        for (key, want) in [
            ("site", s(&doc.site)),
            ("board", s(&doc.board)),
            ("thread", s(&doc.thread)),
            ("url", s(&doc.url)),
            ("forum", s(&doc.forum)),
            ("title", s(&doc.title)),
            ("posted", opt(&doc.posted)),
            ("saved", s(&doc.saved)),
            ("encoding", s(&doc.encoding)),
            ("pages", doc.pages.into()),
        ] {
            assert_eq!(v[key], want, "{}/{}: {key}", row.site, row.thread);
        }
        let posts = v["posts"].as_array().unwrap();
        assert_eq!(posts.len(), doc.posts.len(), "{}/{}", row.site, row.thread);
        let mut authors: Vec<&str> = Vec::new();
        for (got, want) in posts.iter().zip(&doc.posts) {
            assert_eq!(got["floor"], want.floor);
            assert_eq!(got["author"], s(&want.author));
            assert_eq!(got["time"], opt(&want.time));
            assert_eq!(got["text"], s(&want.paragraphs.join("\n")));
            if !want.author.is_empty() && !authors.contains(&want.author.as_str()) {
                authors.push(&want.author);
            }
        }
        assert_eq!(v["authors"], serde_json::json!(authors), "{}/{}", row.site, row.thread);
    }

    // A thread saved before heads were kept, a page gone, an XML broken:
    // each named and counted, the rest exported as before.
    let layout = work.layout();
    let html = |site: &str| saved.iter().find(|r| r.site == site && r.pages == Some(1) && r.state == ThreadState::Extracted).unwrap().saved_location().unwrap();
    let (old, gone, broken) = (html("dz"), html("phpbb"), html("bbs"));
    std::fs::remove_file(layout.http_path(&old)).unwrap();
    // Threads of several pages saved before heads were kept: their later
    // pages' URLs are found again by the site files' pager patterns.
    let multi: Vec<(ThreadRow, Vec<PageCapture>)> = ["dz", "phpbb"]
        .iter()
        .map(|site| {
            let row = saved.iter().find(|r| r.site == *site && r.pages >= Some(2)).unwrap_or_else(|| panic!("no {site} thread of 2 pages")).clone();
            let http = layout.http_path(&row.saved_location().unwrap());
            let lines = capture::read(&http).unwrap().unwrap();
            std::fs::remove_file(http).unwrap();
            (row, lines)
        })
        .collect();
    let multi_pages: usize = multi.iter().map(|(_, l)| l.len()).sum();
    std::fs::remove_file(layout.html_path(&gone, 1)).unwrap();
    std::fs::write(layout.xml_path(&broken), "<thread site=\"bbs\"><post").unwrap();
    let out2 = tempfile::tempdir().unwrap();
    let (warc2, ndjson2, o) = export(&work, out2.path());
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let bad: Vec<&str> = stderr.lines().filter(|l| l.starts_with("luntan-export: ")).collect();
    assert_eq!(bad.len(), 2, "{stderr}");
    // In (site, thread) order: bbs, then phpbb.
    assert!(bad[0].contains(&format!("{}: not a thread XML", layout.xml_path(&broken).display())), "{stderr}");
    assert!(
        bad[1].ends_with(&format!("{}: cannot read the saved page: No such file or directory (os error 2)", layout.html_path(&gone, 1).display())),
        "{stderr}"
    );
    let want = format!("{} pages with the head the forum sent, {} saved before heads were kept", pages.len() - snapshots - 2 - multi_pages, 1 + multi_pages);
    assert!(stdout.contains(&want), "{stdout}\nwanted {want:?}");
    assert!(stdout.contains("; 2 bad records left out"), "{stdout}");
    let records2 = read_records(&std::fs::read(&warc2).unwrap()).unwrap();
    assert_eq!(records2.len(), records.len() - 1);
    let old_row = saved.iter().find(|r| r.site == "dz" && r.thread == old.thread.as_str()).unwrap();
    let synthesized = records2.iter().find(|r| r.header("WARC-Target-URI") == Some(old_row.url.as_str())).expect("the old page is exported");
    let (status, headers) = head_lines(synthesized.http_head().unwrap());
    assert_eq!(status, "HTTP/1.1 200 OK");
    // The fixture's Discuz! forum is GBK, which luntan decodes as its superset.
    assert_eq!(headers[0], ("Content-Type".to_owned(), b"text/html; charset=gb18030".to_vec()), "{headers:?}");
    assert_eq!(synthesized.http_body().unwrap(), std::fs::read(layout.html_path(&old, 1)).unwrap());
    for (row, lines) in &multi {
        let loc = row.saved_location().unwrap();
        for c in lines {
            let body = std::fs::read(layout.html_path(&loc, c.page)).unwrap();
            let found: Vec<&ReadRecord> = records2.iter().filter(|r| r.header("WARC-Target-URI") == Some(c.url.as_str())).collect();
            assert_eq!(found.len(), 1, "{}/{} page {}: {}", row.site, row.thread, c.page, c.url);
            assert_eq!(found[0].http_body().unwrap(), body, "{}/{} page {}", row.site, row.thread, c.page);
            assert!(found[0].http_head().unwrap().starts_with(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset="), "{}/{}", row.site, row.thread);
        }
    }
    assert_eq!(std::fs::read_to_string(ndjson2).unwrap().lines().count(), lines.len() - 1);
}

/// docs/elasticsearch-mapping.json maps exactly the fields a line has
/// (its mapping is `strict`, so a field it lacked would fail the bulk load).
#[test]
fn the_example_index_mapping_maps_every_field_of_a_line() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(docs.join(name)).unwrap()).unwrap_or_else(|e| panic!("docs/{name}: {e}"))
    };
    let (schema, mapping) = (read("thread.schema.json"), read("elasticsearch-mapping.json"));
    let keys = |v: &serde_json::Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let props = &mapping["mappings"]["properties"];
    assert_eq!(mapping["mappings"]["dynamic"], "strict");
    assert_eq!(keys(props), keys(&schema["properties"]));
    assert_eq!(keys(&props["posts"]["properties"]), keys(&schema["$defs"]["post"]["properties"]));
    let required = |v: &serde_json::Value| -> BTreeSet<String> { v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect() };
    // Version 1's fields are on every line; version 2's only when known.
    let mut doc = luntan_core::ThreadDoc::new("dz".parse().unwrap(), "1".parse().unwrap(), "1".parse().unwrap(), "20261205".parse().unwrap());
    doc.posts = vec![luntan_core::Post::default()];
    let line: serde_json::Value = serde_json::from_str(&luntan_export::ndjson::ThreadLine::of(&doc).to_json()).unwrap();
    assert_eq!(keys(&line), required(&schema["required"]));
    assert_eq!(keys(&line["posts"][0]), required(&schema["$defs"]["post"]["required"]));
    // A thread with every version-2 field known has every field mapped, and no more.
    doc.board_name = Some("考研".into());
    (doc.url, doc.pages, doc.encoding) = ("http://h/t/1".into(), 1, "UTF-8".into());
    (doc.replies, doc.views) = (Some(1), Some(2));
    let q = luntan_core::doc::Quote { of: Some("1".into()), author: Some("甲".into()), paragraphs: vec!["引文".into()] };
    doc.posts[0] = luntan_core::Post {
        id: Some("2".into()),
        author_id: Some("9".into()),
        author_url: Some("http://h/u/9".into()),
        reply_to: Some("1".into()),
        quotes: vec![q],
        edited: Some("2024-01-01T00:00:00".into()),
        links: vec![luntan_core::doc::Link { href: "http://e/".into(), text: "e".into() }],
        images: vec![luntan_core::doc::Image { src: "http://h/a.png".into(), alt: "a".into() }],
        likes: Some(1),
        replies: Some(0),
        views: Some(5),
        location: Some("广东".into()),
        ..luntan_core::Post::default()
    };
    let line: serde_json::Value = serde_json::from_str(&luntan_export::ndjson::ThreadLine::of(&doc).to_json()).unwrap();
    assert_eq!(keys(&line), keys(&schema["properties"]));
    assert_eq!(keys(&line["posts"][0]), keys(&schema["$defs"]["post"]["properties"]));
    assert_eq!(keys(&line["posts"][0]["quotes"][0]), keys(&props["posts"]["properties"]["quotes"]["properties"]));
    assert_eq!(keys(&line["posts"][0]["links"][0]), keys(&props["posts"]["properties"]["links"]["properties"]));
    assert_eq!(keys(&line["posts"][0]["images"][0]), keys(&props["posts"]["properties"]["images"]["properties"]));
    let validator = jsonschema::validator_for(&schema).expect("docs/thread.schema.json is a valid JSON Schema");
    let errors: Vec<String> = validator.iter_errors(&line).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}
