//! Thread XML versions over a real crawl: the version-1 files committed
//! under `tests/v1/` (written by luntan before version 2, on the fixture's
//! Discuz! and phpBB forums with the configuration below) put in place of
//! what extract wrote, then read by index, search, serve and export, and
//! rewritten as version 2 by `luntan-extract --again`.

use crate::common;
use crate::serve::{get, start_server};

use std::path::{Path, PathBuf};

use common::Work;
use luntan_core::{ThreadDoc, ThreadState};
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

/// The configuration the committed files were written from: the same
/// threads, with the same text, on every run.
fn fixture_config() -> FixtureConfig {
    FixtureConfig { threads: 3, boards: 1, forums: vec![ForumKind::Discuz, ForumKind::Phpbb], ..FixtureConfig::default() }
}

/// Every committed file: (site, thread, its text).
fn committed() -> Vec<(String, String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/v1");
    let mut out = Vec::new();
    for site in ["dz", "phpbb"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(site)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let thread = f.file_stem().unwrap().to_str().unwrap().strip_prefix("article").unwrap().to_owned();
            out.push((site.to_owned(), thread, std::fs::read_to_string(&f).unwrap()));
        }
    }
    out
}

/// What must survive an upgrade: everything version 1 holds but where and
/// when the pages were fetched (the committed files name another port and
/// day). Version 2's fields are what today's site files read besides.
fn content(d: &ThreadDoc) -> (String, String, String, Option<String>, String, u32, Vec<luntan_core::Post>) {
    (d.site.to_string(), d.thread.to_string(), d.title.clone(), d.posted.clone(), d.forum.clone(), d.pages, common::v1_view(d).posts)
}

#[test]
fn committed_version_1_files_are_read_by_index_serve_and_export_and_extract_again_rewrites_them_as_version_2() {
    let server = FixtureServer::start_blocking(fixture_config()).expect("fixture server");
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();
    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &["-q"]);
    }
    let files = committed();
    assert_eq!(files.len(), 6);
    let store = luntan_core::Store::open(&work.layout().db_path()).unwrap();
    let mut v1_docs = Vec::new();
    for (site, thread, text) in &files {
        assert!(text.contains(&format!("<thread site=\"{site}\" board=")), "{site}/{thread}: not a version-1 file");
        let row = store.thread(site, thread).unwrap().unwrap_or_else(|| panic!("{site}/{thread}: the fixture has no such thread"));
        assert_eq!(row.state, ThreadState::Extracted);
        let path = work.layout().xml_path(&row.saved_location().unwrap());
        let now = ThreadDoc::from_xml(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let v1 = ThreadDoc::from_xml(text).unwrap_or_else(|e| panic!("tests/v1/{site}/article{thread}.xml: {e}"));
        // The committed file is what today's extract finds on the same page,
        // so the checks below read the old format, not other text.
        assert_eq!(content(&v1), content(&now), "{site}/{thread}");
        std::fs::write(&path, text).unwrap();
        v1_docs.push((path, v1));
    }

    // Index and search read them.
    work.ok("index", &["-q"]);
    for (_, d) in &v1_docs {
        let hits = common::search_threads(&work, &[&format!("site:{} \"{}\"", d.site, d.title)]);
        assert!(hits.contains(&(d.site.to_string(), d.thread.to_string())), "{}/{} not found by its title: {hits:?}", d.site, d.thread);
    }

    // Serve reads them: the JSON and the page.
    let addr = start_server(luntan_serve::ServeConfig::new(work.index(), work.data()));
    for (_, d) in &v1_docs {
        let r = get(addr, &format!("/api/thread/{}/{}", d.site, d.thread), &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json(), serde_json::from_str::<serde_json::Value>(&luntan_core::doc::ThreadJson::of(d).to_json()).unwrap());
        let page = get(addr, &format!("/thread/{}/{}", d.site, d.thread), &[]);
        assert_eq!(page.status, 200);
        let first = luntan_core::escape::escape(&d.posts[0].paragraphs[0], luntan_core::escape::Escape::Html).into_owned();
        assert!(page.text().contains(&first), "{}/{}: the page lacks the first paragraph", d.site, d.thread);
    }

    // Export reads them, each line fitting the schema.
    let out = tempfile::tempdir().unwrap();
    let ndjson = out.path().join("t.ndjson");
    work.ok("export", &["-q", "--ndjson", ndjson.to_str().unwrap()]);
    let schema: serde_json::Value = serde_json::from_str(luntan_core::doc::THREAD_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&ndjson).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), v1_docs.len());
    for (_, d) in &v1_docs {
        let line = lines.iter().find(|l| l["id"] == format!("{}/{}", d.site, d.thread)).unwrap_or_else(|| panic!("{}/{}: no line", d.site, d.thread));
        assert!(validator.iter_errors(line).next().is_none(), "{line}");
        assert_eq!(*line, serde_json::from_str::<serde_json::Value>(&luntan_core::doc::ThreadJson::of(d).to_json()).unwrap());
    }

    // `--again` rewrites them from the saved HTML, as version 2, losing nothing.
    for site in ["dz", "phpbb"] {
        work.ok("extract", &["-q", "--site", site, "--again"]);
    }
    for (path, v1) in &v1_docs {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("<thread version=\"2\" "), "{}: not rewritten", path.display());
        let v2 = ThreadDoc::from_xml(&text).unwrap();
        assert_eq!(content(&v2), content(v1), "{}", path.display());
    }
}

#[test]
fn discuz_x_quotes_come_out_and_are_searched_as_quotes_of_the_post_they_link_never_as_the_replys_words() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 40, boards: 2, forums: vec![ForumKind::DiscuzX], ..FixtureConfig::default() })
        .expect("fixture server");
    let work = Work::new();
    // The fixture's own site file reads the quotes (quote="div.quote" and
    // the pid in its link).
    server.write_site_files(&work.sites()).unwrap();
    for stage in ["discover", "download", "extract", "index"] {
        work.ok(stage, &["-q"]);
    }
    let fold = |s: &str| common::fold(s);
    let mut searched = 0;
    let (mut quotes, mut threads) = (0, 0);
    for t in server.truth().forums.iter().flat_map(|f| &f.threads).filter(|t| t.servable()) {
        let store = luntan_core::Store::open(&work.layout().db_path()).unwrap();
        let row = store.thread(&t.site, &t.thread).unwrap().unwrap_or_else(|| panic!("{}/{}: no row", t.site, t.thread));
        // Every post's own words are the truth's, which never holds a quote.
        let doc = common::assert_xml_matches_truth(&work.layout().xml_path(&row.saved_location().unwrap()), t);
        let got: Vec<(u32, Option<String>, Option<String>, String)> =
            doc.posts.iter().flat_map(|p| p.quotes.iter().map(move |q| (p.floor, q.of.clone(), q.author.clone(), fold(&q.paragraphs.join("\n"))))).collect();
        let want: Vec<(u32, Option<String>, Option<String>, String)> =
            server.fixture().quotes(ForumKind::DiscuzX, &t.thread).unwrap().into_iter().map(|q| (q.floor, q.of, q.author, fold(&q.text))).collect();
        assert_eq!(got, want, "{}/{}", t.site, t.thread);
        for p in &doc.posts {
            assert_eq!(
                p.reply_to,
                p.quotes.first().and_then(|q| q.of.clone()),
                "{}/{} floor {}: a quote's post is the one answered",
                t.site,
                t.thread,
                p.floor
            );
        }
        // A search for quoted words finds them as the words of the post
        // that wrote them, never as the replier's: the snippet shows them,
        // and the thread is not a hit "in a quote", because its own posts
        // hold them (the quoted floor is in the same thread).
        for q in doc.posts.iter().flat_map(|p| p.quotes.iter().map(move |q| (p, q))) {
            let (replier, quote) = q;
            let Some(run) = common::phrase_not_in(&quote.paragraphs.join("\n"), &[&replier.text()], 6) else { continue };
            let out = work.ok("search", &["--json", "--limit", "50", &format!("\"{run}\"")]);
            let hit = out
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .find(|v| v["site"] == t.site.as_str() && v["thread"] == t.thread.as_str())
                .unwrap_or_else(|| panic!("{}/{}: \"{run}\" (quoted on floor {}) finds not its thread", t.site, t.thread, replier.floor));
            assert_eq!(hit.get("in_quote"), None, "{}/{} \"{run}\": its own posts hold the words", t.site, t.thread);
            let snippet = hit["snippet_text"].as_str().unwrap();
            assert!(
                common::holds(&common::folded_text(&doc), run.as_str()) && common::holds(&luntan_search::analysis::normalize(snippet), &run),
                "{}/{} \"{run}\": snippet {snippet:?} shows not the words",
                t.site,
                t.thread
            );
            let own = doc.posts.iter().filter(|p| common::holds(&luntan_search::analysis::normalize(&p.text()), &run)).map(|p| p.floor).collect::<Vec<_>>();
            assert!(
                !own.is_empty() && !own.contains(&replier.floor),
                "{}/{} \"{run}\": written on floors {own:?}, quoted on {}",
                t.site,
                t.thread,
                replier.floor
            );
            searched += 1;
        }
        quotes += want.len();
        threads += 1;
    }
    assert!(threads >= 30 && quotes >= 10 && searched >= 10, "{threads} threads, {quotes} quotes, {searched} searched: too few to tell");
}
