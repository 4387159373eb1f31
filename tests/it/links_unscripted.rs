//! A forum that draws its lists and pagers with scripts (NodeBB and the
//! like) and gives a reader without them its links only inside
//! `<noscript>` and as `<link rel="next|prev">` in the head: discover finds
//! every board, every list page and every thread, and download saves every
//! page of a thread, with no site-file field of their own.

use crate::common;

use std::collections::BTreeMap;

use common::{serve_static, Work};
use luntan_core::ThreadState;

const SITE: &str = "nb";
const HTML: &str = "text/html; charset=utf-8";

fn site_file(home: &str) -> String {
    format!(
        r#"<site id="{SITE}">
  <home>{home}</home>
  <politeness delay-ms="0" concurrency="2" retries="1" timeout-ms="3000"/>
  <links>
    <board><![CDATA[/category/{{board}}/[^/?]*$]]></board>
    <board-page first="1"><![CDATA[/category/{{board}}/[^/?]*\?page={{page}}]]></board-page>
    <thread><![CDATA[/topic/{{thread}}/[^/?]*$]]></thread>
    <thread-page first="1"><![CDATA[/topic/{{thread}}/[^/?]*\?page={{page}}]]></thread-page>
  </links>
  <thread body="div.post"/>
</site>
"#
    )
}

/// A page as such a forum sends it: `head` in the head, an empty mount
/// point for the scripts, then `body`.
fn page(head: &str, body: &str) -> Vec<u8> {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>论坛</title>{head}<script src=\"/app.js\"></script></head>\
         <body><div id=\"app\"></div>{body}</body></html>"
    )
    .into_bytes()
}

/// A thread page: one post, and whatever pager `head` and `body` hold.
fn thread_page(thread: u32, n: u32, head: &str, pager: &str) -> Vec<u8> {
    page(head, &format!("<div class=\"post\">第 {thread} 帖，第 {n} 页的正文。</div>{pager}"))
}

#[test]
fn a_forum_whose_pagers_are_only_in_noscript_or_link_rel_is_crawled_whole() {
    let topic = |t: u32| format!("<a href=\"/topic/{t}/t{t}\">帖子 {t}</a>");
    let hidden = |ts: &[u32]| format!("<noscript><ul>{}</ul></noscript>", ts.iter().map(|&t| format!("<li>{}</li>", topic(t))).collect::<String>());
    let mut routes: Vec<(&'static str, &'static str, Vec<u8>)> = vec![
        // Boards linked only from a `<noscript>`.
        ("/", HTML, page("", "<noscript><a href=\"/category/1/news\">新闻</a><a href=\"/category/2/talk\">闲聊</a></noscript>")),
        // Board 1: page 1's pager only in a `<noscript>`, page 2's only in
        // `<link rel>`, page 3 the last; page 2's rows only in a `<noscript>`.
        (
            "/category/1/news",
            HTML,
            page("", &format!("{}{}<noscript><ul class=\"pagination\"><li><a href=\"?page=2\">2</a></li></ul></noscript>", topic(11), topic(12))),
        ),
        (
            "/category/1/news?page=2",
            HTML,
            page(r#"<link rel="prev" href="/category/1/news?page=1"><link rel="next" href="/category/1/news?page=3">"#, &hidden(&[13, 14])),
        ),
        ("/category/1/news?page=3", HTML, page(r#"<link rel="prev" href="?page=2">"#, &topic(15))),
        // Board 2: a pager only in `<link rel="next">`.
        ("/category/2/talk", HTML, page(r#"<link rel="Next" href="/category/2/talk?page=2"><link rel="stylesheet" href="/app.css">"#, &topic(21))),
        ("/category/2/talk?page=2", HTML, page(r#"<link rel="prev" href="/category/2/talk">"#, &hidden(&[22]))),
        // Thread 11: page 1 links page 2 only in a `<noscript>`, page 2
        // links page 3 only in `<link rel="next">`.
        ("/topic/11/t11", HTML, thread_page(11, 1, "", "<noscript><ul class=\"pagination\"><li><a href=\"?page=2\">2</a></li></ul></noscript>")),
        ("/topic/11/t11?page=2", HTML, thread_page(11, 2, r#"<link rel="prev" href="/topic/11/t11"><link rel="next" href="/topic/11/t11?page=3">"#, "")),
        ("/topic/11/t11?page=3", HTML, thread_page(11, 3, r#"<link rel="prev" href="/topic/11/t11?page=2">"#, "")),
        // Thread 21: every page after the first only through `<link rel="next">`.
        ("/topic/21/t21", HTML, thread_page(21, 1, r#"<link rel="next" href="/topic/21/t21?page=2">"#, "")),
        ("/topic/21/t21?page=2", HTML, thread_page(21, 2, r#"<link rel="next prefetch" href="?page=3">"#, "")),
        ("/topic/21/t21?page=3", HTML, thread_page(21, 3, "", "")),
    ];
    for t in [12, 13, 14, 15, 22] {
        let path: &'static str = Box::leak(format!("/topic/{t}/t{t}").into_boxed_str());
        routes.push((path, HTML, thread_page(t, 1, "", "")));
    }
    for r in &mut routes {
        r.1 = "text/html; charset=utf-8";
    }
    let served: BTreeMap<&str, Vec<u8>> = routes.iter().map(|(p, _, b)| (*p, b.clone())).collect();
    let base = serve_static(routes);
    let work = Work::new();
    std::fs::write(work.sites().join(format!("{SITE}.xml")), site_file(&format!("{base}/"))).unwrap();

    let out = work.ok("discover", &[]);
    let listed: BTreeMap<(String, String), ThreadState> = work.all_rows().into_iter().map(|r| ((r.board.to_string(), r.thread.to_string()), r.state)).collect();
    let want: BTreeMap<(String, String), ThreadState> = [("1", 11), ("1", 12), ("1", 13), ("1", 14), ("1", 15), ("2", 21), ("2", 22)]
        .into_iter()
        .map(|(b, t)| ((b.to_string(), t.to_string()), ThreadState::Discovered))
        .collect();
    assert_eq!(listed, want, "every list page's threads, on every board:\n{out}");

    let out = work.ok("download", &[]);
    let rows = work.all_rows();
    for row in &rows {
        assert_eq!(row.state, ThreadState::Saved, "{}: {:?}\n{out}", row.thread, row.fail_reason);
        let pages = if matches!(row.thread.as_str(), "11" | "21") { 3 } else { 1 };
        assert_eq!(row.pages, Some(pages), "thread {}\n{out}", row.thread);
        let loc = row.saved_location().unwrap();
        for k in 1..=pages {
            let path = if k == 1 { format!("/topic/{0}/t{0}", row.thread) } else { format!("/topic/{0}/t{0}?page={k}", row.thread) };
            let saved = std::fs::read(work.layout().html_path(&loc, k)).unwrap_or_else(|e| panic!("thread {} page {k}: {e}", row.thread));
            assert_eq!(saved, served[path.as_str()], "thread {} page {k} saved as sent", row.thread);
        }
    }
}

/// HyperKitty (GNU Mailman's archive) serves a thread's page with its first
/// mail only, the replies loaded by a script; its `<noscript>` link, the
/// same URL with `?noscript`, serves every reply. Lists link the plain URL,
/// which names the thread. `<thread add-query="noscript">` asks for the
/// thread there and keeps it under the URL lists link.
#[test]
fn a_thread_served_whole_only_at_its_noscript_link_is_read_there_with_add_query() {
    let mail = |n: u32| format!("<div class=\"email\"><b class=\"name\">作者{n}</b><div class=\"body\">第 {n} 封信的正文。</div></div>");
    let mut routes: Vec<(&'static str, &'static str, Vec<u8>)> = vec![
        ("/", HTML, page("", "<a href=\"/list/books/latest\">书评</a>")),
        (
            "/list/books/latest",
            HTML,
            page("", &["AAA", "BBB", "CCC"].iter().map(|t| format!("<p><a href=\"/list/books/thread/{t}/\">主题 {t}</a></p>")).collect::<String>()),
        ),
    ];
    for t in ["AAA", "BBB", "CCC"] {
        let plain: &'static str = Box::leak(format!("/list/books/thread/{t}/").into_boxed_str());
        let whole: &'static str = Box::leak(format!("/list/books/thread/{t}/?noscript").into_boxed_str());
        let loader = "<div class=\"replies\"><noscript><a href=\"?noscript\">Visit here for a non-javascript version of this page.</a></noscript></div>";
        routes.push((plain, HTML, page("", &format!("{}{loader}", mail(1)))));
        routes.push((whole, HTML, page("", &(1..=3).map(mail).collect::<String>())));
    }
    let base = serve_static(routes);
    let site_file = |add: &str| {
        format!(
            r#"<site id="{SITE}">
  <home>{base}/</home>
  <politeness delay-ms="0" concurrency="2" retries="1" timeout-ms="3000"/>
  <links>
    <board><![CDATA[/list/{{board}}/latest$]]></board>
    <thread{add}><![CDATA[/list/[a-z]+/thread/{{thread}}/$]]></thread>
  </links>
  <thread post="div.email" body="div.body" author="b.name"/>
</site>
"#
        )
    };
    for (add, mails) in [("", 1), (r#" add-query="noscript""#, 3)] {
        let work = Work::new();
        std::fs::write(work.sites().join(format!("{SITE}.xml")), site_file(add)).unwrap();
        work.ok("discover", &[]);
        let out = work.ok("download", &[]);
        work.ok("extract", &[]);
        let rows = work.all_rows();
        assert_eq!(rows.len(), 3, "{out}");
        for row in &rows {
            assert_eq!(row.state, ThreadState::Extracted, "{}: {:?}\n{out}", row.thread, row.fail_reason);
            assert_eq!(row.url, format!("{base}/list/books/thread/{}/", row.thread), "known by the URL lists link");
            let doc = common::thread_doc(&work, SITE, &row.thread);
            let authors: Vec<&str> = doc.posts.iter().map(|p| p.author.as_str()).collect();
            assert_eq!(authors.len(), mails, "{add:?}: thread {}: {authors:?}", row.thread);
        }
    }
}
