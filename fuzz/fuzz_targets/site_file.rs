//! Site files are written by people and copied around: whatever the text,
//! `Site::parse` answers with a site or with one `path: line N: field: what`
//! line, never a panic, and a site it accepts is safe to use.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use luntan_core::ids::check_id;
use luntan_core::site::Site;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Site::parse(text, Path::new("fuzz.xml")) {
        Ok(site) => {
            // Its id names directories: it must be one check_id accepts.
            check_id(&site.id).expect("an accepted site's id is a safe file name");
            assert!(matches!(site.home.scheme(), "http" | "https"), "home {}", site.home);
            assert!(site.host_allowed(&site.home), "a forum's own home is on an allowed host");
            assert!(site.politeness.concurrency >= 1, "concurrency 0 would hang every stage");
            let home = site.home.as_str();
            for p in [Some(&site.links.board), site.links.board_page.as_ref(), Some(&site.links.thread), site.links.thread_page.as_ref()].into_iter().flatten() {
                // Captured ids are checked like any other: Ok means safe.
                if let Some(Ok(m)) = p.captures(home) {
                    for id in [m.board.map(|b| b.to_string()), m.thread.map(|t| t.to_string())].into_iter().flatten() {
                        check_id(&id).expect("a captured id passed check_id");
                    }
                }
            }
            // Every endpoint of an accepted <json> builds its first page's URL
            // without a panic, its placeholders all filled.
            if let Some(json) = &site.json {
                for e in [Some(&json.list), json.thread.as_ref(), json.comments.as_ref()].into_iter().flatten() {
                    if let Some(u) = e.page_url("42", &e.first_key()) {
                        assert!(!u.as_str().contains("%7Bboard%7D") && !u.as_str().contains("%7Bthread%7D"), "{u}");
                    }
                }
                assert!(json.list.conversation.named().is_empty(), "a list's rows are threads: no reply paths");
            }
            // A reply names what it answers by id: an endpoint that reads
            // replies (`parent`, `children`) reads ids.
            let posts = site.json.iter().flat_map(|j| [j.thread.as_ref(), j.comments.as_ref()]).flatten().chain(site.comments.as_ref().map(|c| &c.endpoint));
            for e in posts {
                if e.conversation.parent.is_some() || e.conversation.children.is_some() {
                    assert!(e.id.is_some(), "{} reads replies without ids", e.element);
                }
            }
            // A hybrid site's comment URL is built from whatever key an
            // article page holds, percent-encoded, no placeholder left.
            if let Some(c) = &site.comments {
                for key in [None, Some("cms-7"), Some("新闻 a/../?&#%")] {
                    if let Some(u) = c.page_url("42", key, &c.endpoint.first_key()) {
                        assert!(!u.as_str().contains("%7Bkey%7D") && !u.as_str().contains("%7Bthread%7D"), "{u}");
                    }
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("fuzz.xml: line "), "{msg}");
            assert!(!msg.contains('\n'), "a site file error is one line: {msg:?}");
            let lines = text.lines().count().max(1);
            assert!(e.line >= 1 && e.line <= lines + 1, "line {} of a {lines}-line file: {msg}", e.line);
        }
    }
});
