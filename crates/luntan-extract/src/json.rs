//! Protocol mode (S4): a thread saved as JSON pages (`article<T>.json`,
//! `_p2.json` …) becomes the same thread XML as an HTML one, so index and
//! search need nothing new. Fields are found by the site file's JSONPaths;
//! times are resolved against the server's clock of each page's fetch,
//! saved beside the pages (`article<T>.fetched`), so extracting again
//! gives the same result.

use std::collections::HashSet;
use std::path::Path;

use luntan_core::ids::ThreadLoc;
use luntan_core::site::{field_count, field_text, resolve_time, BodyFormat, Endpoint, JsonRules};
use luntan_core::store::ThreadRow;
use luntan_core::{DataDir, Post, Site};
use scraper::Html;
use serde_json_path::JsonPath;

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
    let mut once = Once::default();
    // Which comments page is which: page 1 is the thread endpoint when there is one.
    let first_comments = if rules.thread.is_some() { 2 } else { 1 };
    for page in 1..=n {
        let path = data.json_path(loc, page);
        let raw = std::fs::read(&path).map_err(|source| ExtractError::Read { path: path.clone(), source })?;
        bytes += raw.len() as u64;
        let value = luntan_core::site::read_json(&raw).map_err(|e| ExtractError::Json { path: path.clone(), why: format!("invalid JSON: {e}") })?;
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
        let cx = PageCtx { site, clock: clocks[page as usize - 1], offset: rules.utc_offset_minutes, path: &path };
        for p in page_posts(endpoint, &value, &cx)? {
            if once.first_time(endpoint, &p) {
                posts.push(p);
            }
        }
    }
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

/// What a saved JSON page's items are read against.
pub(crate) struct PageCtx<'a> {
    pub site: &'a Site,
    /// The server's clock of the page's fetch (Unix seconds), for relative times.
    pub clock: i64,
    /// Minutes east of UTC of the forum's wall clock.
    pub offset: i32,
    /// The saved page, for messages.
    pub path: &'a Path,
}

/// A page's posts in thread order: each item, then the replies nested in
/// it (`children`), depth first, a nested reply answering the item it is
/// inside unless its own `parent` names another.
pub(crate) fn page_posts(e: &Endpoint, page: &serde_json::Value, cx: &PageCtx) -> Result<Vec<Post>, ExtractError> {
    let mut out = Vec::new();
    // By address: a `children` path such as `$..replies[*]` finds a reply
    // again under each of its ancestors, which would read it once per
    // ancestor (twice as often each level down).
    let mut read: HashSet<*const serde_json::Value> = HashSet::new();
    let mut stack: Vec<(&serde_json::Value, Option<String>, String)> =
        e.items(page).into_iter().enumerate().rev().map(|(i, item)| (item, None, format!("item {}", i + 1))).collect();
    while let Some((item, enclosing, at)) = stack.pop() {
        if !read.insert(item) {
            continue;
        }
        let mut post = post(e, item, cx, &at)?;
        if post.reply_to.is_none() {
            post.reply_to = enclosing;
        }
        if let Some(children) = &e.conversation.children {
            let replies = children.query(item).all();
            for (i, reply) in replies.into_iter().enumerate().rev() {
                stack.push((reply, post.id.clone(), format!("{at}, reply {}", i + 1)));
            }
        }
        out.push(post);
    }
    Ok(out)
}

/// Keeps each post once: a comment that slid onto the next page between
/// two fetches, or a reply a page shows both nested and on its own. Known
/// by the forum's id (within its endpoint) where it has one, else by what
/// it says.
#[derive(Default)]
pub(crate) struct Once {
    ids: HashSet<(&'static str, String)>,
    posts: HashSet<(String, Option<String>, Vec<String>)>,
}

impl Once {
    pub(crate) fn first_time(&mut self, e: &Endpoint, p: &Post) -> bool {
        match &p.id {
            Some(id) => self.ids.insert((e.element, id.clone())),
            None => self.posts.insert((p.author.clone(), p.time.clone(), p.paragraphs.clone())),
        }
    }
}

/// One item as a post; `at` says which (`item 2, reply 1`) in messages.
fn post(e: &Endpoint, item: &serde_json::Value, cx: &PageCtx, at: &str) -> Result<Post, ExtractError> {
    let missing = |what: &str| ExtractError::Json { path: cx.path.to_owned(), why: format!("{}@{what}: nothing at that path in {at}", e.element) };
    let body_path = e.body.as_ref().ok_or_else(|| missing("body"))?;
    let body = field_text(item, body_path).ok_or_else(|| missing("body"))?;
    let paragraphs = match e.body_format {
        BodyFormat::Html => {
            let frag = Html::parse_fragment(&body);
            paragraphs(frag.root_element(), None)
        }
        BodyFormat::Text => body.split('\n').map(fold_line).filter(|l| !l.is_empty()).collect(),
    };
    let text = |p: &Option<JsonPath>| p.as_ref().and_then(|p| field_text(item, p)).map(|t| fold_line(&t)).filter(|t| !t.is_empty());
    let count = |p: &Option<JsonPath>| p.as_ref().and_then(|p| field_count(item, p));
    let time = |p: &Option<JsonPath>| p.as_ref().and_then(|p| p.query(item).first()).and_then(|v| resolve_time(v, cx.clock, cx.offset));
    let c = &e.conversation;
    Ok(Post {
        floor: text(&e.floor).and_then(|f| f.parse().ok()).unwrap_or(0),
        author: text(&e.author).unwrap_or_default(),
        time: time(&e.time),
        paragraphs,
        id: text(&e.id),
        author_id: text(&c.author_id),
        // Only a web page: a profile link is shown as a link.
        author_url: text(&c.author_url).and_then(|u| cx.site.home.join(&u).ok()).filter(|u| matches!(u.scheme(), "http" | "https")).map(String::from),
        // Comment systems mark a top-level comment with parent 0.
        reply_to: text(&c.parent).filter(|p| p != "0"),
        edited: time(&c.edited),
        likes: count(&c.likes),
        replies: count(&e.replies),
        location: text(&c.location),
        ..Post::default()
    })
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

    /// Replies nested in their comment (`children`) were never read: a
    /// comment with three replies came out as one post. Each is now a post
    /// right after the comment it is inside, depth first, answering it
    /// unless it names another, with the conversation fields read.
    #[test]
    fn nested_replies_follow_their_comment_depth_first() {
        let t = tempfile::tempdir().unwrap();
        let data = DataDir::new(t.path());
        let nested = SITE.replace(
            r#"<comments paging="page" page-size="2""#,
            r#"<comments id="$.pid" parent="$.to_pid" children="$.sub[*]" author-id="$.author.uid" author-url="$.author.home" likes="$.up"
              replies="$.sub_count" location="$.ip" edited="$.edited" paging="page" page-size="2""#,
        );
        let site = Site::parse(&nested, Path::new("data/sites/xhr.xml")).unwrap();
        let rules = site.json.clone().unwrap();
        let loc = row(2).saved_location().unwrap();
        write_atomic(&data.json_path(&loc, 1), r#"{"thread":{"subject":"题","author":{"name":"楼主"},"created":1733018400,"message":"正文"}}"#.as_bytes())
            .unwrap();
        let page2 = serde_json::json!({"replies": [
            {"pid": 11, "to_pid": 0, "author": {"name": "甲", "uid": 501, "home": "/u/501"}, "up": "1.2万", "ip": " 广东 ", "sub_count": 3,
             "time_ms": 1733018460000i64, "message": "一楼", "edited": "2024-12-01 10:05",
             "sub": [
                {"pid": 12, "author": {"name": "乙", "uid": 502}, "time_ms": 1733018520000i64, "message": "回甲",
                 "sub": [{"pid": 13, "author": {"name": "丙", "home": "javascript:alert(1)"}, "time_ms": 1733018580000i64, "message": "回乙"}]},
                {"pid": 14, "to_pid": 12, "author": {"name": "丁"}, "time_ms": 1733018640000i64, "message": "也回乙"}
             ]},
            {"pid": 15, "to_pid": 11, "author": {"name": "戊"}, "time_ms": 1733018700000i64, "message": "回一楼", "up": 0},
            // Shown again on its own, as some APIs list replies flat as well: kept once.
            {"pid": 14, "to_pid": 12, "author": {"name": "丁"}, "time_ms": 1733018640000i64, "message": "也回乙"}
        ]});
        write_atomic(&data.json_path(&loc, 2), page2.to_string().as_bytes()).unwrap();
        write_atomic(&data.fetched_path(&loc), b"1733018400\tu1\n1733018400\tu2\n").unwrap();
        let (got, _) = extract_json_thread(&data, &site, &rules, &row(2), &loc).unwrap();
        let d = &got.doc;
        let seen: Vec<(u32, String, Option<&str>, Option<&str>)> =
            d.posts.iter().map(|p| (p.floor, p.text(), p.id.as_deref(), p.reply_to.as_deref())).collect();
        let want = [
            (1, "正文", None, None),
            (2, "一楼", Some("11"), None),
            (3, "回甲", Some("12"), Some("11")),
            (4, "回乙", Some("13"), Some("12")),
            (5, "也回乙", Some("14"), Some("12")),
            (6, "回一楼", Some("15"), Some("11")),
        ];
        assert_eq!(seen, want.map(|(f, t, id, to)| (f, t.to_owned(), id, to)));
        let first = &d.posts[1];
        assert_eq!(first.author_id.as_deref(), Some("501"));
        assert_eq!(first.author_url.as_deref(), Some("http://127.0.0.1:8080/u/501"), "joined to the site's home");
        assert_eq!((first.likes, first.replies, first.location.as_deref()), (Some(12_000), Some(3), Some("广东")));
        assert_eq!(first.edited.as_deref(), Some("2024-12-01T10:05:00"));
        assert_eq!(d.posts[3].author_url, None, "only a web page is a profile link");
        assert_eq!((d.posts[5].likes, d.posts[2].likes), (Some(0), None));
        assert_eq!(&ThreadDoc::from_xml(&d.to_xml()).unwrap(), d);

        // A path that finds a reply again under each ancestor reads it once.
        let deep = nested.replace(r#"children="$.sub[*]""#, r#"children="$..sub[*]""#);
        let site = Site::parse(&deep, Path::new("data/sites/xhr.xml")).unwrap();
        let (again, _) = extract_json_thread(&data, &site, site.json.as_ref().unwrap(), &row(2), &loc).unwrap();
        assert_eq!(again.doc.posts.len(), 6);

        // A nested reply without a body names the page and where it is.
        let mut broken = page2.clone();
        broken["replies"][0]["sub"][1]["message"] = serde_json::Value::Null;
        broken["replies"].as_array_mut().unwrap().pop();
        write_atomic(&data.json_path(&loc, 2), broken.to_string().as_bytes()).unwrap();
        let site = Site::parse(&nested, Path::new("data/sites/xhr.xml")).unwrap();
        let e = extract_json_thread(&data, &site, &rules, &row(2), &loc).unwrap_err().to_string();
        assert!(e.contains("article7_p2.json") && e.contains("json/comments@body") && e.contains("item 1, reply 2"), "{e}");
    }
}
