//! Protocol mode (S4): a thread saved as JSON pages (`article<T>.json`,
//! `_p2.json` …) becomes the same thread XML as an HTML one, so index and
//! search need nothing new. Fields are found by the site file's JSONPaths;
//! times are resolved against the server's clock of each page's fetch,
//! saved beside the pages (`article<T>.fetched`), so extracting again
//! gives the same result.

use std::collections::HashSet;
use std::path::Path;

use luntan_core::ids::ThreadLoc;
use luntan_core::site::{field_text, resolve_time, BodyFormat, Endpoint, JsonRules};
use luntan_core::store::ThreadRow;
use luntan_core::{DataDir, Post, Site};
use scraper::Html;

use crate::error::ExtractError;
use crate::page::{thread_doc, ThreadExtract};
use crate::text::{fold_line, paragraphs};

// Where they were first defined, for callers that name them here.
pub use crate::page::{title_of, TITLE_CHARS};

/// Reads a protocol-mode thread's pages and builds its document.
pub fn extract_json_thread(data: &DataDir, site: &Site, rules: &JsonRules, row: &ThreadRow, loc: &ThreadLoc) -> Result<(ThreadExtract, u64), ExtractError> {
    let n = row.pages.unwrap_or(1).max(1);
    let clocks = fetch_clocks(data, loc, n, true)?.unwrap_or_default();
    let mut bytes = 0u64;
    let mut posts: Vec<Post> = Vec::new();
    let mut title = None;
    // Which comments page is which: page 1 is the thread endpoint when there is one.
    let first_comments = if rules.thread.is_some() { 2 } else { 1 };
    for page in 1..=n {
        let path = data.json_path(loc, page);
        let raw = std::fs::read(&path).map_err(|source| ExtractError::Read { path: path.clone(), source })?;
        bytes += raw.len() as u64;
        let value: serde_json::Value =
            serde_json::from_slice(&raw).map_err(|e| ExtractError::Json { path: path.clone(), why: format!("invalid JSON: {e}") })?;
        let endpoint = match (&rules.thread, &rules.comments) {
            (Some(t), _) if page < first_comments => t,
            (_, Some(c)) => c,
            (Some(t), None) => t,
            (None, None) => return Err(ExtractError::Json { path, why: "the site file names no thread endpoint".into() }),
        };
        if page == 1 {
            if let Some(p) = &endpoint.title {
                title = endpoint.items(&value).first().and_then(|item| field_text(item, p)).map(|t| fold_line(&t)).filter(|t| !t.is_empty());
            }
        }
        for (i, item) in endpoint.items(&value).into_iter().enumerate() {
            posts.push(post(endpoint, item, clocks[page as usize - 1], rules.utc_offset_minutes, &path, i)?);
        }
    }
    // A comment that slid onto the next page between two fetches is kept once.
    let mut seen = HashSet::new();
    posts.retain(|p| seen.insert((p.author.clone(), p.time.clone(), p.paragraphs.clone())));
    let first = data.json_path(loc, 1);
    if posts.is_empty() {
        return Err(ExtractError::NoPosts { path: first });
    }
    let numbered = rules.comments.as_ref().is_some_and(|c| c.floor.is_some());
    let mut prev = 0;
    for (i, p) in posts.iter_mut().enumerate() {
        // Floors the JSON gives are kept; the rest follow their position.
        if !numbered || p.floor == 0 || p.floor <= prev {
            p.floor = if numbered { prev + 1 } else { i as u32 + 1 };
        }
        prev = p.floor;
    }
    let title = title.or_else(|| row.title.as_deref().map(fold_line).filter(|t| !t.is_empty())).unwrap_or_else(|| title_of(&posts[0]));
    let doc = thread_doc(site, row, title, loc.saved, "UTF-8".into(), n, posts);
    Ok((ThreadExtract { doc, pages: Vec::new() }, bytes))
}

/// The server's clock of each of a thread's `n` page fetches
/// (`article<T>.fetched`, one `<unix seconds>\t<url>` line a page), or
/// `None` when none was kept and it is not `required` (a plain HTML
/// download keeps none; protocol and browser mode do).
pub(crate) fn fetch_clocks(data: &DataDir, loc: &ThreadLoc, n: u32, required: bool) -> Result<Option<Vec<i64>>, ExtractError> {
    let path = data.fetched_path(loc);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(source) => return Err(ExtractError::Read { path, source }),
    };
    let clocks: Vec<i64> = text.lines().filter_map(|l| l.split('\t').next()?.trim().parse().ok()).collect();
    if clocks.len() != n as usize {
        return Err(ExtractError::Json { path, why: format!("names {} fetch times for {n} pages", clocks.len()) });
    }
    Ok(Some(clocks))
}

pub(crate) fn post(e: &Endpoint, item: &serde_json::Value, clock: i64, offset: i32, path: &Path, index: usize) -> Result<Post, ExtractError> {
    let missing = |what: &str| ExtractError::Json { path: path.to_owned(), why: format!("{}@{what}: nothing at that path in item {}", e.element, index + 1) };
    let body_path = e.body.as_ref().ok_or_else(|| missing("body"))?;
    let body = field_text(item, body_path).ok_or_else(|| missing("body"))?;
    let paragraphs = match e.body_format {
        BodyFormat::Html => {
            let frag = Html::parse_fragment(&body);
            paragraphs(frag.root_element(), None)
        }
        BodyFormat::Text => body.split('\n').map(fold_line).filter(|l| !l.is_empty()).collect(),
    };
    let author = e.author.as_ref().and_then(|p| field_text(item, p)).map(|a| fold_line(&a)).unwrap_or_default();
    let time = e.time.as_ref().and_then(|p| p.query(item).first()).and_then(|v| resolve_time(v, clock, offset));
    let floor = e.floor.as_ref().and_then(|p| field_text(item, p)).and_then(|f| f.trim().parse().ok()).unwrap_or(0);
    Ok(Post { floor, author, time, paragraphs, ..Post::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::layout::write_atomic;
    use luntan_core::ThreadDoc;

    const SITE: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<site id="xhr">
  <name>异步论坛</name>
  <home>http://127.0.0.1:8080/xhr/</home>
  <json>
    <seed>1</seed>
    <list paging="offset" items="$.threads[*]" id="$.tid"><![CDATA[api/threads?fid={board}&offset={offset}]]></list>
    <thread items="$.thread" title="$.subject" author="$.author.name" time="$.created" body="$.message"><![CDATA[api/thread?tid={thread}]]></thread>
    <comments paging="page" page-size="2" items="$.replies[*]" floor="$.floor" author="$.author.name" time="$.time_ms"
              body="$.message" body-format="text"><![CDATA[api/replies?tid={thread}&page={page}]]></comments>
  </json>
</site>
"##;

    /// The HTML tests' row, as this site's thread 7 with no list title.
    fn row(pages: u32) -> ThreadRow {
        let html = crate::parse::tests::row(pages);
        ThreadRow {
            site: "xhr".parse().unwrap(),
            thread: "7".parse().unwrap(),
            board: "1".parse().unwrap(),
            url: "http://127.0.0.1:8080/xhr/api/thread?tid=7".into(),
            title: None,
            replies: None,
            save_date: Some("20241201".parse().unwrap()),
            content_type: Some("application/json".into()),
            ..html
        }
    }

    #[test]
    fn pages_become_one_thread_with_times_resolved() {
        let t = tempfile::tempdir().unwrap();
        let data = DataDir::new(t.path());
        let site = Site::parse(SITE, Path::new("data/sites/xhr.xml")).unwrap();
        let rules = site.json.clone().unwrap();
        let loc = row(3).saved_location().unwrap();
        let p = |n| data.json_path(&loc, n);
        write_atomic(
            &p(1),
            r#"{"thread":{"subject":"标题 &amp; 副","author":{"name":"小明"},"created":"昨天 12:30","message":"<p>第一段</p><p>第二 &lt;段&gt;</p>"}}"#
                .as_bytes(),
        )
        .unwrap();
        write_atomic(
            &p(2),
            r#"{"replies":[{"floor":2,"author":{"name":"阿强"},"time_ms":1733018400000,"message":"一\n\n二"},{"floor":3,"author":{"name":"老王"},"time_ms":1733018460000,"message":"三"}]}"#
                .as_bytes(),
        )
        .unwrap();
        write_atomic(&p(3), br#"{"replies":[{"floor":4,"author":{"name":"K.K."},"time_ms":1733018520000,"message":"\u56db"}]}"#).unwrap();
        write_atomic(&data.fetched_path(&loc), b"1733018400\tu1\n1733018400\tu2\n1733018400\tu3\n").unwrap();
        let (got, _) = extract_json_thread(&data, &site, &rules, &row(3), &loc).unwrap();
        let d = &got.doc;
        assert_eq!(d.title, "标题 &amp; 副", "a title field is text, not HTML");
        assert_eq!(d.posts.len(), 4);
        assert_eq!(d.posts[0].paragraphs, ["第一段", "第二 <段>"]);
        assert_eq!(d.posts[0].time.as_deref(), Some("2024-11-30T12:30:00"), "relative to the fetch clock");
        assert_eq!(d.posts[1].paragraphs, ["一", "二"]);
        assert_eq!((d.posts[1].floor, d.posts[1].time.as_deref()), (2, Some("2024-12-01T10:00:00")));
        assert_eq!((d.posts[3].floor, d.posts[3].author.as_str(), d.posts[3].paragraphs[0].as_str()), (4, "K.K.", "四"));
        assert_eq!(d.posted.as_deref(), Some("2024-11-30T12:30:00"));
        let back = ThreadDoc::from_xml(&d.to_xml()).unwrap();
        assert_eq!(&back, d);

        // A body path that finds nothing names the page, the element and the item.
        write_atomic(&p(3), br#"{"replies":[{"floor":4,"author":{"name":"K"},"msg":"x"}]}"#).unwrap();
        let e = extract_json_thread(&data, &site, &rules, &row(3), &loc).unwrap_err().to_string();
        assert!(e.contains("article7_p3.json") && e.contains("json/comments@body") && e.contains("item 1"), "{e}");
        write_atomic(&p(3), b"{not json").unwrap();
        let e = extract_json_thread(&data, &site, &rules, &row(3), &loc).unwrap_err().to_string();
        assert!(e.contains("article7_p3.json: invalid JSON"), "{e}");
    }
}
