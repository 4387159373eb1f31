//! Reading crawl pages: pulling out the board and thread links and list
//! rows the site file's patterns care about. Decoding, resolving and pager
//! links are [`luntan_text::pager`]'s (re-exported here), which export
//! shares; links are resolved as it says, and a page's links are those a
//! reader without scripts follows ([`each_link`]: `<noscript>` content and
//! `<link rel="next|prev">` included).

use luntan_core::dates::Clock;
use luntan_core::ids::{BoardId, IdError, ThreadId};
use luntan_core::site::{LinkMatch, LinkPattern, Pick, Site};
use scraper::{ElementRef, Html};
use url::Url;

pub use luntan_text::pager::{anchors, base_url, decode, each_link, page_links, page_links_in, resolve, DomLink};

/// Text of an element, whitespace folded.
pub fn text_of(el: ElementRef) -> String {
    let mut out = String::new();
    for t in el.text() {
        for w in t.split(|c: char| c.is_whitespace() || c == '\u{a0}') {
            if !w.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(w);
            }
        }
    }
    out
}

/// A link on a page that a pattern matched.
#[derive(Debug, Clone)]
pub struct Matched {
    pub url: Url,
    pub text: String,
    pub m: LinkMatch,
}

/// What scanning a page's links against one pattern found.
#[derive(Debug, Default)]
pub struct Scan {
    pub matched: Vec<Matched>,
    /// Links the pattern matched but whose ids were refused.
    pub refused: Vec<(Url, IdError)>,
}

/// A board a page links to: its id, its first list page and the link's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardLink {
    pub id: BoardId,
    pub url: Url,
    pub title: Option<String>,
}

impl BoardLink {
    /// A board as the store keeps it; `None` if its URL no longer parses.
    pub fn from_row(row: luntan_core::store::BoardRow) -> Option<BoardLink> {
        Some(BoardLink { url: Url::parse(&row.url).ok()?, id: row.board, title: row.title })
    }
}

/// The distinct boards a page links to, in page order (the first link to a
/// board names it), and the count of board links whose ids were refused.
pub fn board_links(site: &Site, doc: &Html, base: &Url) -> (Vec<BoardLink>, usize) {
    let scan = scan(site, doc, None, base, &site.links.board);
    for (url, e) in &scan.refused {
        tracing::debug!("{url}: refused board link: {e}");
    }
    let mut out: Vec<BoardLink> = Vec::new();
    for m in scan.matched {
        let Some(id) = m.m.board else { continue };
        if !out.iter().any(|b| b.id == id) {
            out.push(BoardLink { id, url: m.url, title: Some(m.text).filter(|t| !t.is_empty()) });
        }
    }
    (out, scan.refused.len())
}

/// Every link under `root` (or the whole page) that `pattern` matches, of
/// those [`each_link`] finds; a `<link rel>`'s text is empty.
pub fn scan<'d>(site: &Site, doc: &'d Html, root: Option<ElementRef<'d>>, base: &Url, pattern: &LinkPattern) -> Scan {
    let mut out = Scan::default();
    each_link(doc, root, |a| {
        let Some(url) = resolve(site, base, a.href) else { return };
        match pattern.captures(url.as_str()) {
            None => {}
            Some(Ok(m)) => out.matched.push(Matched { url: pattern.canonical(&url), text: text_of(a.el), m }),
            Some(Err(e)) => out.refused.push((url, e)),
        }
    });
    out
}

/// One thread as a board list page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedThread {
    pub thread: ThreadId,
    pub url: Url,
    pub title: Option<String>,
    pub replies: Option<i64>,
    pub last_post: Option<String>,
}

/// The threads on a board list page, in page order, each once.
pub fn list_threads(site: &Site, doc: &Html, base: &Url) -> (Vec<ListedThread>, Vec<(Url, IdError)>) {
    let mut out: Vec<ListedThread> = Vec::new();
    let mut refused = Vec::new();
    let push = |t: ListedThread, out: &mut Vec<ListedThread>| match out.iter_mut().find(|o| o.thread == t.thread) {
        Some(o) => {
            if o.title.is_none() {
                o.title = t.title;
            }
        }
        None => out.push(t),
    };
    match &site.list {
        Some(rules) => {
            for row in doc.select(&rules.row) {
                let s = scan(site, doc, Some(row), base, &site.links.thread);
                refused.extend(s.refused);
                let Some(link) = s.matched.into_iter().find(|m| m.m.thread.is_some()) else { continue };
                let value = |pick: &Option<Pick>| pick.as_ref().and_then(|p| row.select(p).next().map(|e| value_of(e, p)));
                let title = value(&rules.title).or(Some(link.text)).filter(|t| !t.is_empty());
                let replies = value(&rules.replies).and_then(|t| first_number(&t));
                let clock = site.thread.clock(None);
                let last_post = rules.last_post.as_ref().and_then(|p| row.select(p).next().and_then(|e| time_in(e, p, clock)));
                let thread = link.m.thread.expect("checked above");
                push(ListedThread { thread, url: link.url, title, replies, last_post }, &mut out);
            }
        }
        None => {
            let s = scan(site, doc, None, base, &site.links.thread);
            refused.extend(s.refused);
            for link in s.matched {
                let Some(thread) = link.m.thread else { continue };
                let title = Some(link.text).filter(|t| !t.is_empty());
                push(ListedThread { thread, url: link.url, title, replies: None, last_post: None }, &mut out);
            }
        }
    }
    (out, refused)
}

/// A row field's value: the element's text, or its attribute for `css@attr`.
fn value_of(el: ElementRef, pick: &Pick) -> String {
    pick.attribute_of(el).unwrap_or_else(|| text_of(el))
}

/// A row's last-post time: from the attribute `css@attr` names, else an
/// absolute time in the text ([`finer`](luntan_core::dates::finer) with
/// one an attribute gives), else one in a `datetime`/`title` on or
/// inside the element (lists show "3 天前" or an empty element for scripts
/// to fill, with the time in an attribute). Relative text is not read:
/// a list page's fetch time is not kept.
fn time_in(el: ElementRef, pick: &Pick, clock: Clock) -> Option<String> {
    if let Some(a) = &pick.attr {
        return el.value().attr(a).and_then(|v| clock.attribute(v));
    }
    let attr =
        || std::iter::once(el).chain(el.descendent_elements()).flat_map(|e| [e.attr("datetime"), e.attr("title")]).flatten().find_map(|v| clock.attribute(v));
    match clock.absolute(&text_of(el)) {
        Some(t) => Some(luntan_core::dates::finer(t, attr())),
        None => attr(),
    }
}

/// The first number in a list row's text (`1,204` → 1204), as a reply count.
pub fn first_number(s: &str) -> Option<i64> {
    let digits: String = s.chars().skip_while(|c| !c.is_ascii_digit()).take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| *c != ',').collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const SITE: &str = r##"<site id="t">
  <home>http://forum.test/bbs/index.php</home>
  <links>
    <board><![CDATA[viewforum\.php\?f={board}$]]></board>
    <board-page first="0"><![CDATA[viewforum\.php\?f={board}&start={page}]]></board-page>
    <thread><![CDATA[viewtopic\.php\?t={thread}$]]></thread>
    <thread-page first="0"><![CDATA[viewtopic\.php\?t={thread}&start={page}]]></thread-page>
  </links>
  <list row="li.row" title="a.topictitle" replies="dd.posts" last-post="dd.lastpost"/>
  <thread body="div.content"/>
</site>"##;

    fn site() -> Site {
        Site::parse(SITE, Path::new("t.xml")).unwrap()
    }

    #[test]
    fn hostile_and_foreign_links_never_match() {
        let s = site();
        let base = Url::parse("http://forum.test/bbs/viewforum.php?f=2").unwrap();
        for bad in ["javascript:void(0)", "http://evil.test/bbs/viewtopic.php?t=1", "mailto:a@b", "#top", "data:text/html,x", "ftp://forum.test/x"] {
            assert!(resolve(&s, &base, bad).is_none(), "{bad}");
        }
        let html = Html::parse_document(r#"<a href="viewtopic.php?t=..%2F..%2Fetc">x</a><a href="viewtopic.php?t=9#p3">ok</a>"#);
        // The {thread} shorthand cannot even match a traversal...
        let strict = scan(&s, &html, None, &base, &s.links.thread);
        assert_eq!(strict.matched.len(), 1);
        assert_eq!(strict.matched[0].url.as_str(), "http://forum.test/bbs/viewtopic.php?t=9");
        assert!(strict.refused.is_empty());
        // ...and a careless pattern that does still gets its id refused.
        let liberal = LinkPattern { regex: regex::Regex::new(r"viewtopic\.php\?t=(?P<thread>[^&]+)$").unwrap(), first_page: 1, hashed: Default::default() };
        let loose = scan(&s, &html, None, &base, &liberal);
        assert_eq!(loose.matched.len(), 1);
        assert_eq!(loose.refused.len(), 1, "{:?}", loose.refused);
    }

    #[test]
    fn list_rows_give_title_replies_and_last_post() {
        let s = site();
        let base = Url::parse("http://forum.test/bbs/viewforum.php?f=2").unwrap();
        let html = Html::parse_document(
            r#"<ul><li class="row"><a class="topictitle" href="./viewtopic.php?t=7">春 曉</a>
                 <a href="viewtopic.php?t=7&amp;start=15">2</a><dd class="posts">1,204</dd><dd class="lastpost">2024年3月5日 12:34</dd></li>
               <li class="row"><a class="topictitle" href="viewtopic.php?t=8">  </a><dd class="lastpost" title="2025年7月17日 23:00">17 七月 '25</dd></li></ul>
               <a href="viewforum.php?f=2&amp;start=25">2</a><a href="viewforum.php?f=2&amp;start=0">1</a><a href="viewforum.php?f=3&amp;start=25">x</a>"#,
        );
        let (rows, refused) = list_threads(&s, &html, &base);
        assert!(refused.is_empty());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].thread, "7");
        assert_eq!(rows[0].title.as_deref(), Some("春 曉"));
        assert_eq!(rows[0].replies, Some(1204));
        assert_eq!(rows[0].last_post.as_deref(), Some("2024-03-05T12:34:00"));
        assert_eq!(rows[1].title, None);
        // A day in the text takes its hour from a title naming the same day (Spirit).
        assert_eq!(rows[1].last_post.as_deref(), Some("2025-07-17T23:00:00"));
        let pages = page_links(&s, &html, &base, s.links.board_page.as_ref().unwrap(), "2", |m| m.board.as_deref());
        assert_eq!(pages.iter().map(|p| p.0).collect::<Vec<_>>(), [25]);
    }

    /// A site of the same forum without `<list>` rules: every thread link
    /// on a list page counts.
    fn site_without_rows() -> Site {
        let text = SITE.replace(r#"<list row="li.row" title="a.topictitle" replies="dd.posts" last-post="dd.lastpost"/>"#, "");
        Site::parse(&text, Path::new("t.xml")).unwrap()
    }

    #[test]
    fn list_pages_whose_links_are_only_in_noscript_are_read() {
        let base = Url::parse("http://forum.test/bbs/viewforum.php?f=2").unwrap();
        // A list drawn by scripts: the rows a reader without them gets, and
        // the list's pager, are only in `<noscript>`.
        let html = Html::parse_document(
            r#"<div id="app"></div><noscript><ul>
                 <li class="row"><a class="topictitle" href="viewtopic.php?t=7">春曉</a>
                   <a href="viewtopic.php?t=7&amp;start=15">2</a></li>
                 <li class="row"><a class="topictitle" href="viewtopic.php?t=8">靜夜思</a></li></ul>
                 <ul class="pagination"><li><a href="viewforum.php?f=2&amp;start=25">2</a><li><a href="viewforum.php?f=2&amp;start=50">3</a>
                 <li><a href="viewforum.php?f=3">another board</a></ul></noscript>"#,
        );
        let s = site_without_rows();
        let (rows, refused) = list_threads(&s, &html, &base);
        assert!(refused.is_empty());
        let got: Vec<(&str, Option<&str>)> = rows.iter().map(|r| (r.thread.as_str(), r.title.as_deref())).collect();
        assert_eq!(got, [("7", Some("春曉")), ("8", Some("靜夜思"))]);
        let pages = page_links(&s, &html, &base, s.links.board_page.as_ref().unwrap(), "2", |m| m.board.as_deref());
        assert_eq!(pages.iter().map(|p| p.0).collect::<Vec<_>>(), [25, 50]);
        let (boards, _) = board_links(&s, &html, &base);
        assert_eq!(boards.iter().map(|b| (b.id.as_str(), b.title.as_deref())).collect::<Vec<_>>(), [("3", Some("another board"))]);

        // Rows the site file names are the DOM's; inside one, a thread's own
        // pager in `<noscript>` is read with the row's links.
        let s = site();
        let html = Html::parse_document(
            r#"<ul><li class="row"><a class="topictitle" href="viewtopic.php?t=7">春曉</a>
                 <noscript><a href="viewtopic.php?t=7&amp;start=15">2</a><a href="viewtopic.php?t=7&amp;start=30">3</a></noscript></li></ul>"#,
        );
        let row = html.select(&s.list.as_ref().unwrap().row).next().unwrap();
        let pager = scan(&s, &html, Some(row), &base, s.links.thread_page.as_ref().unwrap());
        assert_eq!(pager.matched.iter().map(|m| (m.m.page, m.text.as_str())).collect::<Vec<_>>(), [(Some(15), "2"), (Some(30), "3")]);
        assert_eq!(list_threads(&s, &html, &base).0.len(), 1);
    }

    #[test]
    fn a_list_page_whose_pager_is_only_link_rel_next_is_paged() {
        let s = site();
        let base = Url::parse("http://forum.test/bbs/viewforum.php?f=2&start=25").unwrap();
        let html = Html::parse_document(
            r#"<html><head><link rel="prev" href="viewforum.php?f=2&amp;start=0"><link rel="next" href="viewforum.php?f=2&amp;start=50">
               <link rel="stylesheet" href="viewforum.php?f=2&amp;start=75"></head>
               <body><ul><li class="row"><a class="topictitle" href="viewtopic.php?t=9">秋思</a></li></ul></body></html>"#,
        );
        let pages = page_links(&s, &html, &base, s.links.board_page.as_ref().unwrap(), "2", |m| m.board.as_deref());
        assert_eq!(pages.iter().map(|p| p.0).collect::<Vec<_>>(), [50], "start=0 is the first page, a stylesheet no pager");
        let found = scan(&s, &html, None, &base, s.links.board_page.as_ref().unwrap());
        assert!(found.matched.iter().all(|m| m.text.is_empty()), "a <link> has no text");
        assert_eq!(list_threads(&s, &html, &base).0.len(), 1);
    }
}
