//! `luntan-media` against the Discuz! X fixture, whose posts show
//! attachment pictures (`img.zoom@file`): a few pictures posted again and
//! again, some deleted (404), some album pictures robots.txt keeps out, and
//! links to other sites. Every picture the server serves is archived once
//! per content, byte for byte, through the forum's politeness; the others
//! are recorded with why; a rerun asks for nothing; the WARC export carries
//! each archived URL; a site file without `<media>` archives nothing.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::{edit_site_file, set_politeness, Work};
use luntan_core::ids::MediaHash;
use luntan_core::store::{MediaRow, MediaStatus};
use luntan_core::Store;
use luntan_fixture::{BlockingFixture, FixtureConfig, FixtureServer, ForumKind};

fn media_rows(work: &Work) -> BTreeMap<String, MediaRow> {
    let store = Store::open(&work.layout().db_path()).unwrap();
    store.media_rows(None).unwrap().into_iter().map(|r| (r.url.clone(), r)).collect()
}

/// A Discuz! X fixture forum of `threads` threads on `boards` boards,
/// discovered, downloaded and extracted with its own site file.
fn extracted(threads: usize, boards: usize) -> (BlockingFixture, Work) {
    let cfg = FixtureConfig { threads, boards, forums: vec![ForumKind::DiscuzX], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &[]);
    }
    (server, work)
}

#[test]
fn dzx_pictures_are_archived_once_per_content_politely_and_a_rerun_asks_for_none() {
    let (server, work) = extracted(60, 2);
    // Pictures, and the links to weibo as attachments: another host's,
    // which the forum's fetcher never asks.
    let site_file = work.sites().join("dzx.xml");
    edit_site_file(&site_file, |t| t.replace("  <links>", "  <media attachments=\"^https://weibo\\.invalid/\"/>\n  <links>"));
    let delay = Duration::from_millis(30);
    set_politeness(&site_file, r#"delay-ms="30" concurrency="2""#);

    // What the server would say of every picture the live threads show.
    let truth = server.truth();
    let posts = || truth.forums.iter().flat_map(|f| &f.threads).filter(|t| !t.deleted).flat_map(|t| &t.posts);
    let pictures: BTreeSet<String> = posts().flat_map(|p| &p.images).map(|i| server.url(&i.src)).collect();
    let weibo: BTreeSet<String> = posts().flat_map(|p| &p.links).map(|l| l.href.clone()).filter(|h| h.starts_with("https://weibo.invalid/")).collect();
    let served = |url: &str| server.fixture().get(&url[server.base_url().trim_end_matches('/').len()..]);
    let album: BTreeSet<&String> = pictures.iter().filter(|u| u.contains("/data/attachment/album/")).collect();
    let gone: BTreeSet<&String> = pictures.iter().filter(|u| !album.contains(u) && served(u).status == 404).collect();
    let ok: BTreeMap<&String, Vec<u8>> = pictures.iter().filter(|u| !album.contains(u) && !gone.contains(u)).map(|u| (u, served(u).body)).collect();
    let contents: BTreeSet<&Vec<u8>> = ok.values().collect();
    assert!(!album.is_empty() && !gone.is_empty() && !weibo.is_empty(), "the fixture shows no album picture, deleted one or weibo link");
    assert!(contents.len() < ok.len(), "no two posts show the same picture: {} pictures, {} contents", ok.len(), contents.len());

    server.clear_requests();
    let logs = tempfile::tempdir().unwrap();
    let (out, claims) = crate::hostile::run_logged(&work, logs.path(), "media", &[]);
    let log = server.requests();

    // Every served picture archived, its file the served bytes, one file per content.
    let rows = media_rows(&work);
    for (url, body) in &ok {
        let row = rows.get(*url).unwrap_or_else(|| panic!("{url}: no row\n{out}"));
        assert_eq!((row.status, row.content_type.as_deref(), row.bytes), (MediaStatus::Archived, Some("image/jpeg"), Some(body.len() as i64)), "{url}");
        let hash = MediaHash::parse(row.sha256.as_deref().unwrap()).unwrap();
        assert_eq!(&std::fs::read(work.layout().media_path(&hash)).unwrap(), body, "{url}");
    }
    let files = common::files_under(&work.layout().media_dir());
    assert_eq!(files.len(), contents.len(), "{files:?}");
    assert!(common::temp_files(&work.layout().media_dir()).is_empty());
    // The rest recorded with why, and the batch went on.
    let failed = |urls: &mut dyn Iterator<Item = &String>, says: &str| {
        for url in urls {
            let row = &rows[url];
            assert_eq!(row.status, MediaStatus::Failed, "{url}");
            assert!(row.reason.as_deref().unwrap().contains(says), "{url}: {:?}", row.reason);
            assert!(row.sha256.is_none());
        }
    };
    failed(&mut album.iter().copied(), "robots.txt");
    failed(&mut gone.iter().copied(), "HTTP 404");
    failed(&mut weibo.iter(), "host is not this forum's");
    assert_eq!(rows.len(), pictures.len() + weibo.len(), "a row for every URL and no other");
    assert!(log.iter().all(|r| !r.path_and_query.contains("/album/")), "robots.txt was not obeyed");
    assert!(out.contains(&format!("dzx: {} media archived ({} new files", ok.len(), contents.len())), "{out}");

    // Through the forum's gate: robots.txt, then each picture once, spaced.
    let paths: Vec<&str> = log.iter().map(|r| r.path_and_query.as_str()).collect();
    assert_eq!(paths[0], "/robots.txt");
    assert_eq!(log.len(), 1 + ok.len() + gone.len(), "{paths:#?}");
    crate::hostile::assert_polite("media", &log, &claims, 2, delay);
    let bytes: usize = contents.iter().map(|c| c.len()).sum();
    eprintln!(
        "media figures: {} URLs archived in {} files ({bytes} bytes), {} failed, {} requests, dedupe {:.1} URLs per file",
        ok.len(),
        contents.len(),
        album.len() + gone.len() + weibo.len(),
        log.len(),
        ok.len() as f64 / contents.len() as f64
    );

    // luntan-status counts each content once, and the URLs not kept.
    let failed_urls = album.len() + gone.len() + weibo.len();
    let status: Vec<serde_json::Value> = work.ok("status", &["--json"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let dzx = status.iter().find(|v| v["site"] == "dzx").expect("dzx in luntan-status --json");
    assert_eq!(dzx["media"], serde_json::json!({"archived": ok.len(), "files": contents.len(), "bytes": bytes, "failed": failed_urls}));
    let table = work.ok("status", &[]);
    assert!(table.contains(&format!("dzx media: {} URLs kept in {} files ({bytes} bytes), {failed_urls} not kept", ok.len(), contents.len())), "{table}");

    // A rerun sends nothing and changes nothing.
    server.clear_requests();
    let before = work.files(&work.layout().media_dir());
    let again = work.ok("media", &[]);
    assert!(server.requests().is_empty(), "a rerun asked: {:#?}", server.requests());
    assert_eq!(work.files(&work.layout().media_dir()), before);
    assert_eq!(media_rows(&work), rows);
    assert!(again.contains(&format!("0 media archived (0 new files, 0 B), 0 failed, {} known", rows.len())), "{again}");

    // --retry-failed asks the failed ones again (the deleted pictures and
    // the robots.txt check, which needs robots.txt again), no archived one.
    server.clear_requests();
    work.ok("media", &["--retry-failed"]);
    let asked: BTreeSet<String> = server.requests().iter().map(|r| server.url(&r.path_and_query)).collect();
    let expected: BTreeSet<String> = gone.iter().map(|u| u.to_string()).chain([server.url("/robots.txt")]).collect();
    assert_eq!(asked, expected);

    // The WARC carries every archived URL as a response, its payload the file.
    let warc = work.dir.path().join("crawl.warc");
    let summary = work.ok("export", &["--warc", warc.to_str().unwrap()]);
    assert!(summary.contains(&format!("{} media", ok.len())), "{summary}");
    let records = luntan_export::warc::read_records(&std::fs::read(&warc).unwrap()).unwrap();
    for (url, body) in &ok {
        let r = records.iter().find(|r| r.header("WARC-Target-URI") == Some(url.as_str())).unwrap_or_else(|| panic!("{url} is not in the WARC"));
        assert_eq!(r.header("WARC-Type"), Some("response"));
        assert_eq!(r.http_body(), Some(&body[..]), "{url}");
        assert_eq!(r.header("WARC-Payload-Digest"), Some(luntan_export::warc::sha1_digest(body).as_str()));
        let head = String::from_utf8_lossy(r.http_head().unwrap()).to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200 ok\r\n") && head.contains("content-type: image/jpeg\r\n"), "{head}");
    }
    // luntan-serve shows an archived picture from its own /media/ route.
    let addr = crate::serve::start_server(luntan_serve::ServeConfig::new(work.index(), work.data()));
    let (url, body) = ok.iter().next().unwrap();
    let hash = rows[*url].sha256.clone().unwrap();
    let got = crate::serve::get(addr, &format!("/media/{hash}"), &[]);
    assert_eq!((got.status, got.header("content-type"), &got.body), (200, Some("image/jpeg"), body));
    for bad in [format!("/media/{}", "0".repeat(64)), "/media/..%2f..%2fluntan.db".into(), format!("/media/{}", hash.to_uppercase())] {
        assert_eq!(crate::serve::get(addr, &bad, &[]).status, 404, "{bad}");
    }
    let shows = truth.forums[0].threads.iter().find(|t| t.posts.iter().any(|p| p.images.iter().any(|i| server.url(&i.src) == **url))).unwrap();
    let page = crate::serve::get(addr, &format!("/thread/dzx/{}", shows.thread), &[]).text();
    assert!(page.contains(&format!(r#"<img src="/media/{hash}""#)), "{page}");
    let status = crate::serve::get(addr, "/status", &[]).text();
    assert!(status.contains(&format!("图片与附件：{} 个网址存为 {} 个文件（{bytes} 字节），{failed_urls} 个未存", ok.len(), contents.len())), "{status}");

    let failed_in_warc = records.iter().filter(|r| r.header("WARC-Target-URI").is_some_and(|u| gone.contains(&u.to_string()))).count();
    assert_eq!(failed_in_warc, 0, "a picture never archived has a record");
}

#[test]
fn a_site_file_without_media_archives_nothing() {
    let (server, work) = extracted(20, 1);
    let truth = server.truth();
    assert!(truth.forums[0].threads.iter().flat_map(|t| &t.posts).any(|p| !p.images.is_empty()), "no picture to leave alone");
    server.clear_requests();
    let out = work.ok("media", &[]);
    assert!(out.contains("no forum's site file has <media>"), "{out}");
    assert!(server.requests().is_empty(), "{:#?}", server.requests());
    assert!(!work.layout().media_dir().exists());
    assert!(media_rows(&work).is_empty());
    let status = work.ok("status", &["--json"]);
    assert!(status.contains("\"site\":\"dzx\"") && !status.contains("\"media\""), "a forum luntan-media never ran on shows no media counts: {status}");
}

#[test]
fn a_bad_media_element_is_one_line_naming_file_line_and_attribute() {
    let cfg = FixtureConfig { threads: 5, boards: 1, forums: vec![ForumKind::DiscuzX], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    let site_file = work.sites().join("dzx.xml");
    edit_site_file(&site_file, |t| t.replace("  <links>", "  <media max-kb=\"0\"/>\n  <links>"));
    let out = work.stage("media", &[]);
    assert_eq!(out.status.code(), Some(2), "a broken site file is exit code 2");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.contains("dzx.xml")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains(": line 8: max-kb: must be above 0"), "{line}");
    assert!(server.requests().is_empty());
}
