//! One thread as the index's reader sees it, the query marked, with the
//! way back to the search it was opened from and on to the hits beside it.

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_core::ThreadDoc;
use luntan_search::snippet::highlight;
use luntan_search::{Hit, Query, SearchOptions};

use super::{error_page, html, known_params, RESULTS_PER_PAGE};
use crate::catalog::{blocking, check_skipped};
use crate::data::{archived_images, load_thread, thread_ids};
use crate::error::ApiError;
use crate::html::{enc, escape, page, readable_time, safe_href};
use crate::params::Params;
use crate::State as AppState;

/// A thread's archived pictures: URL → SHA-256.
type Media = std::collections::HashMap<String, String>;

/// What the thread page reads from its query string: the search it was
/// opened from (`q`, `site` repeated or `a,b`, `board`, `author`, `since`,
/// `until`, `sort`, `page`) and the hit's 1-based place in its results
/// (`n`, the hit's rank counting earlier pages). Any other key is ignored.
/// `view=floors` shows the posts in floor order, none nested under another.
pub const THREAD_PARAMS: &[&str] = &["q", "site", "board", "author", "since", "until", "sort", "page", "n", "view"];

/// The search a thread was opened from, as the search page's link carries
/// it: kept as given, to be handed on in every link this page makes.
#[derive(Debug, Default)]
struct Origin {
    q: String,
    sites: Vec<String>,
    /// `board`, `author`, `since`, `until`, `sort`, as given.
    filters: Vec<(&'static str, String)>,
    page: Option<usize>,
    /// The hit's place in the results, 1-based.
    n: Option<usize>,
}

impl Origin {
    fn read(p: &Params) -> Origin {
        let filters = ["board", "author", "since", "until", "sort"].into_iter().filter_map(|k| p.get(k).map(|v| (k, v.to_string()))).collect();
        let place = |k: &str| p.number(k, 0, crate::MAX_OFFSET).ok().filter(|&n| n > 0);
        Origin { q: p.get("q").unwrap_or("").to_string(), sites: p.all("site"), filters, page: place("page"), n: place("n") }
    }

    /// The search's own parameters, without the page: `q=…&site=…&…`.
    fn search_query(&self) -> String {
        let mut s = format!("q={}", enc(&self.q));
        for site in &self.sites {
            let _ = write!(s, "&site={}", enc(site));
        }
        for (k, v) in &self.filters {
            let _ = write!(s, "&{k}={}", enc(v));
        }
        s
    }

    /// The results page the hit is on: by its place, else as given.
    fn results_page(&self) -> usize {
        self.n.map(|n| (n - 1) / RESULTS_PER_PAGE + 1).or(self.page).unwrap_or(1)
    }

    fn back_link(&self) -> String {
        let page = self.results_page();
        let page = if page > 1 { format!("&page={page}") } else { String::new() };
        format!("/search?{}{page}", self.search_query())
    }

    /// The thread page of the hit at place `n` of the same search.
    fn hit_link(&self, h: &Hit) -> String {
        format!("/thread/{}/{}?{}&n={}", enc(&h.site), enc(&h.thread), self.search_query(), h.rank)
    }
}

/// The hits at n - 1 and n + 1 and the number of hits, by running the
/// same search again over the three places around n.
struct Neighbours {
    prev: Option<Hit>,
    next: Option<Hit>,
    total: usize,
}

fn neighbours(catalog: &luntan_search::Catalog, query: &Query, opts: &SearchOptions, n: usize) -> Result<Neighbours, ApiError> {
    let offset = n.saturating_sub(2);
    let opts = SearchOptions { offset, limit: n + 1 - offset, snippet_chars: 0, ids_only: false, ..opts.clone() };
    check_skipped(catalog, &opts.sites)?;
    let r = catalog.search(query, &opts)?;
    let at = |rank: usize| r.hits.iter().find(|h| h.rank == rank).cloned();
    Ok(Neighbours { prev: n.checked_sub(1).and_then(at), next: if n < crate::MAX_OFFSET { at(n + 1) } else { None }, total: r.total })
}

fn plain_title(h: &Hit) -> &str {
    if h.title.trim().is_empty() {
        "（无标题）"
    } else {
        &h.title
    }
}

fn nav_html(origin: &Origin, nb: Option<&Neighbours>) -> String {
    let mut out = format!(r#"<nav class="hit-nav" aria-label="搜索结果"><a class="back" href="{}">返回搜索结果</a>"#, escape(&origin.back_link()));
    if let (Some(nb), Some(n)) = (nb, origin.n) {
        if let Some(h) = &nb.prev {
            let _ = write!(out, r#"<a rel="prev" href="{}" title="{t}">上一个结果：{t}</a>"#, escape(&origin.hit_link(h)), t = escape(plain_title(h)));
        }
        let _ = write!(out, r#"<span class="place">第 {n} 个结果，共 {} 个</span>"#, nb.total);
        if let Some(h) = &nb.next {
            let _ = write!(out, r#"<a rel="next" href="{}" title="{t}">下一个结果：{t}</a>"#, escape(&origin.hit_link(h)), t = escape(plain_title(h)));
        }
    }
    out.push_str("</nav>");
    out
}

pub async fn thread(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Path((site, id))) = path else { return error_page(&ApiError::NotFound("no such thread".into())) };
    let (site, id) = match thread_ids(&site, &id) {
        Ok(ids) => ids,
        Err(e) => return error_page(&e),
    };
    // The query goes through the search's own checks (its length cap
    // first): one that is too long or malformed only leaves the thread
    // unmarked and without neighbours.
    let p = known_params(raw.as_deref(), THREAD_PARAMS).ok();
    let origin = p.as_ref().map(Origin::read).unwrap_or_default();
    let floors = p.as_ref().and_then(|p| p.get("view")) == Some("floors");
    let query = p.as_ref().filter(|_| !origin.q.is_empty()).and_then(|p| p.query().ok()).map(|(_, q)| q);
    let opts = p.as_ref().and_then(|p| p.search_options(RESULTS_PER_PAGE).ok());
    let n = origin.n;
    let loaded = blocking(move || {
        let (_, doc) = load_thread(&st, &site, &id)?;
        let media = archived_images(&st, &doc);
        let needles = query.as_ref().map(luntan_search::search::needles).unwrap_or_default();
        let nb = match (&query, &opts, n) {
            (Some(q), Some(o), Some(n)) => st.catalog.searchable().ok().and_then(|c| neighbours(&c, q, o, n).ok()),
            _ => None,
        };
        Ok((doc, media, needles, nb))
    })
    .await;
    let (doc, media, needles, nb) = match loaded {
        Ok(x) => x,
        Err(e) => return error_page(&e),
    };
    let mut body = String::new();
    let nav = if origin.q.is_empty() { String::new() } else { nav_html(&origin, nb.as_ref()) };
    body.push_str(&nav);
    let title = highlight(&doc.title, &needles).html();
    let original = safe_href(&doc.url).map(|u| format!(r#" · <a href="{}" rel="noopener noreferrer nofollow">原帖</a>"#, escape(u))).unwrap_or_default();
    let posted = doc.posted.as_deref().map(|t| format!(r#" · <time datetime="{}">{}</time>"#, escape(t), escape(&readable_time(t)))).unwrap_or_default();
    let _ = write!(
        body,
        r#"<h1 class="thread-title">{title}</h1><p class="meta">{forum}（{site}）{posted} · {n} 楼{original} · <a href="/archive/{esite}/{eid}">存档</a></p>"#,
        forum = escape(&doc.forum),
        site = escape(&doc.site),
        n = doc.posts.len(),
        esite = enc(&doc.site),
        eid = enc(&doc.thread),
    );
    body.push_str(&posts_html(&doc, &media, &needles, floors));
    // The same way on at the end of a long thread.
    body.push_str(&nav);
    html(StatusCode::OK, page(&doc.title, &body))
}

/// Where each post goes: under the post it answers when that one comes
/// earlier in the thread (so a loop in `reply_to` cannot nest), else at the
/// top. `children[i]` are the indexes of post `i`'s answers in thread
/// order; the result's first list is the top level.
fn reply_tree(doc: &ThreadDoc, ids: &PostIds) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut children = vec![Vec::new(); doc.posts.len()];
    let mut top = Vec::new();
    for (i, p) in doc.posts.iter().enumerate() {
        let parent = p.reply_to.as_deref().and_then(|to| ids.get(to).copied()).filter(|&at| at < i);
        match parent {
            Some(at) => children[at].push(i),
            None => top.push(i),
        }
    }
    (top, children)
}

/// The posts of a thread as HTML: each an `<article>` with its permalink
/// (`#floorN`), its quotes as quotes (linked to the quoted post when it is
/// on the page), its own paragraphs marked with `needles`, and, unless
/// `floors`, the posts that answer it nested inside it. A picture in
/// `media` (URL → the hash it is archived under) is shown from
/// `/media/<sha256>`; any other stays a link.
fn posts_html(doc: &ThreadDoc, media: &Media, needles: &[String], floors: bool) -> String {
    let ids = post_ids(doc);
    let (top, children) = if floors { ((0..doc.posts.len()).collect(), vec![Vec::new(); doc.posts.len()]) } else { reply_tree(doc, &ids) };
    let mut out = String::new();
    if !floors && top.len() < doc.posts.len() {
        out.push_str(r#"<p class="meta view">回复显示在所回复的帖子下面 · <a href="?view=floors">按楼层显示</a></p>"#);
    }
    // Depth first, without recursion: a long chain of answers must not grow the stack.
    let mut stack: Vec<Option<usize>> = top.iter().rev().map(|&i| Some(i)).collect();
    while let Some(next) = stack.pop() {
        let Some(i) = next else {
            out.push_str("</div></article>");
            continue;
        };
        post_html(&mut out, doc, &ids, i, media, needles);
        if children[i].is_empty() {
            out.push_str("</article>");
        } else {
            out.push_str(r#"<div class="replies">"#);
            stack.push(None);
            stack.extend(children[i].iter().rev().map(|&c| Some(c)));
        }
    }
    out
}

/// Each post id's first post: one map per thread, where a find per
/// reference would cost n² on a long thread.
type PostIds<'a> = std::collections::HashMap<&'a str, usize>;

fn post_ids(doc: &ThreadDoc) -> PostIds<'_> {
    let mut ids = PostIds::with_capacity(doc.posts.len());
    for (i, p) in doc.posts.iter().enumerate() {
        if let Some(id) = p.id.as_deref() {
            ids.entry(id).or_insert(i);
        }
    }
    ids
}

/// One post's `<article>`, left open for its answers.
fn post_html(out: &mut String, doc: &ThreadDoc, ids: &PostIds, i: usize, media: &Media, needles: &[String]) {
    let p = &doc.posts[i];
    let floor_of = |id: &str| ids.get(id).map(|&at| doc.posts[at].floor);
    let time = |t: &str| format!(r#"<time datetime="{}">{}</time>"#, escape(t), escape(&readable_time(t)));
    let id = p.id.as_deref().map(|id| format!(r#" data-post-id="{}""#, escape(id))).unwrap_or_default();
    let name = if p.author.trim().is_empty() { "（匿名）".into() } else { escape(&p.author) };
    let author = match (&p.author_id, doc.site.as_str()) {
        (Some(aid), site) => format!(r#"<a class="author" href="/author?site={}&amp;id={}">{name}</a>"#, enc(site), enc(aid)),
        (None, _) if !p.author.trim().is_empty() => format!(r#"<a class="author" href="/author?name={}">{}</a>"#, enc(&p.author), escape(&p.author)),
        _ => r#"<span class="author">（匿名）</span>"#.to_string(),
    };
    let _ = write!(
        out,
        r##"<article class="post" id="floor{floor}"{id}><div class="meta"><a class="permalink" href="#floor{floor}" title="本楼链接">#{floor}</a> {author}"##,
        floor = p.floor,
    );
    if let Some(t) = &p.time {
        let _ = write!(out, " {}", time(t));
    }
    if let Some(to) = p.reply_to.as_deref().and_then(floor_of) {
        let _ = write!(out, r##" <a class="reply-to" href="#floor{to}">回复 #{to}</a>"##);
    }
    if let Some(t) = &p.edited {
        let _ = write!(out, r#" <span class="edited">编辑于 {}</span>"#, time(t));
    }
    if let Some(l) = &p.location {
        let _ = write!(out, r#" <span class="location">IP属地：{}</span>"#, escape(l));
    }
    for (n, label) in [(p.likes, "赞"), (p.replies, "回复"), (p.views, "浏览")] {
        if let Some(n) = n {
            let _ = write!(out, r#" <span class="count">{label} {n}</span>"#);
        }
    }
    out.push_str("</div>");
    for q in &p.quotes {
        let of = q.of.as_deref().map(|of| format!(r#" data-of="{}""#, escape(of))).unwrap_or_default();
        let _ = write!(out, r#"<blockquote class="quote"{of}>"#);
        let who = q.author.as_deref().map(|a| format!("{} 的", escape(a))).unwrap_or_default();
        match q.of.as_deref().and_then(floor_of) {
            Some(f) => {
                let _ = write!(out, r##"<p class="quote-head">引用 <a href="#floor{f}">{who}帖子（#{f}）</a></p>"##);
            }
            None => {
                let _ = write!(out, r#"<p class="quote-head">引用{}</p>"#, if who.is_empty() { String::new() } else { format!(" {who}话") });
            }
        }
        for para in &q.paragraphs {
            let _ = write!(out, "<p>{}</p>", escape(para));
        }
        out.push_str("</blockquote>");
    }
    for para in &p.paragraphs {
        let _ = write!(out, "<p>{}</p>", highlight(para, needles).html());
    }
    // Links and pictures as links: a page of ours loads nothing remote (see
    // PAGE_CSP), only the pictures luntan archived, from its own /media/.
    let links: Vec<String> = p
        .links
        .iter()
        .filter_map(|l| safe_href(&l.href).map(|h| (h, &l.text)))
        .map(|(h, text)| {
            format!(r#"<li><a href="{}" rel="noopener noreferrer nofollow">{}</a></li>"#, escape(h), escape(if text.trim().is_empty() { h } else { text }))
        })
        .chain(p.images.iter().filter_map(|im| safe_href(&im.src).map(|h| (h, &im.alt))).map(|(h, alt)| match media.get(h) {
            Some(hash) => format!(
                r#"<li class="image archived"><img src="/media/{}" alt="{}" loading="lazy"> <a href="{}" rel="noopener noreferrer nofollow">原图</a></li>"#,
                enc(hash),
                escape(alt),
                escape(h)
            ),
            None => format!(
                r#"<li class="image"><a href="{}" rel="noopener noreferrer nofollow">图片{}</a></li>"#,
                escape(h),
                if alt.trim().is_empty() { String::new() } else { format!("：{}", escape(alt)) }
            ),
        }))
        .collect();
    if !links.is_empty() {
        let _ = write!(out, r#"<ul class="post-links">{}</ul>"#, links.concat());
    }
}

#[cfg(test)]
mod tests {
    use luntan_core::doc::{Link, Post, Quote};

    use super::*;

    fn conversation() -> ThreadDoc {
        let post = |floor: u32, id: &str, author: &str, text: &str, reply_to: Option<&str>| Post {
            floor,
            id: Some(id.into()),
            author: author.into(),
            paragraphs: vec![text.into()],
            reply_to: reply_to.map(Into::into),
            ..Post::default()
        };
        let mut doc = ThreadDoc::new("dz".parse().unwrap(), "2".parse().unwrap(), "7".parse().unwrap(), "20261130".parse().unwrap());
        doc.posts = vec![
            post(1, "p1", "甲", "主楼", None),
            post(2, "p2", "乙", "回甲", Some("p1")),
            post(3, "p3", "丙", "无关", None),
            post(4, "p4", "甲", "回乙", Some("p2")),
            // 5 answers a later post, so stays at the top; 6 answers 5
            // back and nests under it: a loop in `reply_to` cannot nest.
            post(5, "p5", "丁", "回六", Some("p6")),
            post(6, "p6", "戊", "回五", Some("p5")),
        ];
        doc.posts[3].quotes = vec![Quote { of: Some("p2".into()), author: Some("乙".into()), paragraphs: vec!["<回甲>".into()] }];
        doc.posts[0].links =
            vec![Link { href: "https://weibo.com/1".into(), text: "微博".into() }, Link { href: "javascript:alert(1)".into(), text: "x".into() }];
        doc.posts[0].author_id = Some("42".into());
        doc
    }

    #[test]
    fn answers_nest_under_the_post_they_answer_and_quotes_stand_apart() {
        let doc = conversation();
        assert_eq!(reply_tree(&doc, &post_ids(&doc)), (vec![0, 2, 4], vec![vec![1], vec![3], vec![], vec![], vec![5], vec![]]));
        let html = posts_html(&doc, &Media::new(), &[], false);
        // 4 sits inside 2, which sits inside 1; 3 comes after 1 closes.
        let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} in {html}"));
        assert!(at(r#"id="floor1""#) < at(r#"id="floor2""#) && at(r#"id="floor2""#) < at(r#"id="floor4""#) && at(r#"id="floor4""#) < at(r#"id="floor3""#));
        assert_eq!(html.matches(r#"<div class="replies">"#).count(), 3);
        assert_eq!(html.matches("<article").count(), html.matches("</article>").count());
        assert!(html.contains(r##"<blockquote class="quote" data-of="p2"><p class="quote-head">引用 <a href="#floor2">乙 的帖子（#2）</a></p><p>&lt;回甲&gt;</p></blockquote>"##), "{html}");
        assert!(html.contains(r#"href="/author?site=dz&amp;id=42""#) && html.contains(r#"href="/author?name=%E4%B9%99""#));
        assert!(html.contains(r#"href="https://weibo.com/1""#) && !html.contains("javascript:"));
        // In floor order nothing nests.
        let flat = posts_html(&doc, &Media::new(), &[], true);
        assert!(!flat.contains(r#"<div class="replies">"#));
        let order: Vec<usize> = (1..=6).map(|f| flat.find(&format!(r#"id="floor{f}""#)).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn an_author_known_by_id_alone_links_as_anonymous_not_as_an_empty_link() {
        let mut doc = conversation();
        doc.posts[2].author = " ".into();
        doc.posts[2].author_id = Some("9".into());
        doc.posts[4].author = String::new();
        let html = posts_html(&doc, &Media::new(), &[], true);
        assert!(html.contains(r#"<a class="author" href="/author?site=dz&amp;id=9">（匿名）</a>"#), "{html}");
        assert!(html.contains(r#"<span class="author">（匿名）</span>"#), "{html}");
        assert!(!html.contains("\"></a>"), "{html}");
    }

    #[test]
    fn links_carry_the_search_and_the_place() {
        let p =
            Params::parse(Some("q=%E6%98%8E%E6%9C%88&site=dz,bbs&author=%E9%98%BF%E6%98%8E&since=2020-01-01&sort=newest&page=3&n=21"), THREAD_PARAMS).unwrap();
        let o = Origin::read(&p);
        assert_eq!(o.search_query(), "q=%E6%98%8E%E6%9C%88&site=dz&site=bbs&author=%E9%98%BF%E6%98%8E&since=2020-01-01&sort=newest");
        // The place decides the page: hit 21 is on page 3 of ten a page.
        assert_eq!(o.back_link(), format!("/search?{}&page=3", o.search_query()));
        let o = Origin { n: Some(10), ..o };
        assert_eq!(o.results_page(), 1);
        assert!(!o.back_link().contains("page="));
        let o = Origin::read(&Params::parse(Some("q=a&n=0&page=x"), THREAD_PARAMS).unwrap());
        assert_eq!((o.n, o.page, o.results_page()), (None, None, 1));
    }
}
