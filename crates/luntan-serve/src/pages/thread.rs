//! One thread as the index's reader sees it, the query marked, with the
//! way back to the search it was opened from and on to the hits beside it.

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_search::snippet::highlight;
use luntan_search::{Hit, Query, SearchOptions};

use super::{error_page, html, known_params, RESULTS_PER_PAGE};
use crate::catalog::{blocking, check_skipped};
use crate::data::{load_thread, thread_ids};
use crate::error::ApiError;
use crate::html::{enc, escape, page, readable_time, safe_href};
use crate::params::Params;
use crate::State as AppState;

/// What the thread page reads from its query string: the search it was
/// opened from (`q`, `site` repeated or `a,b`, `board`, `author`, `since`,
/// `until`, `sort`, `page`) and the hit's 1-based place in its results
/// (`n`, the hit's rank counting earlier pages). Any other key is ignored.
pub const THREAD_PARAMS: &[&str] = &["q", "site", "board", "author", "since", "until", "sort", "page", "n"];

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
    let query = p.as_ref().filter(|_| !origin.q.is_empty()).and_then(|p| p.query().ok()).map(|(_, q)| q);
    let opts = p.as_ref().and_then(|p| p.search_options(RESULTS_PER_PAGE).ok());
    let n = origin.n;
    let loaded = blocking(move || {
        let (_, doc) = load_thread(&st, &site, &id)?;
        let needles = query.as_ref().map(luntan_search::search::needles).unwrap_or_default();
        let nb = match (&query, &opts, n) {
            (Some(q), Some(o), Some(n)) => st.catalog.searchable().ok().and_then(|c| neighbours(&c, q, o, n).ok()),
            _ => None,
        };
        Ok((doc, needles, nb))
    })
    .await;
    let (doc, needles, nb) = match loaded {
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
    for p in &doc.posts {
        let time = p.time.as_deref().map(|t| format!(r#" <time datetime="{}">{}</time>"#, escape(t), escape(&readable_time(t)))).unwrap_or_default();
        let _ = write!(
            body,
            r##"<article class="post" id="floor{floor}"><div class="meta"><a class="permalink" href="#floor{floor}" title="本楼链接">#{floor}</a> <span class="author">{author}</span>{time}</div>"##,
            floor = p.floor,
            author = escape(&p.author),
        );
        for para in &p.paragraphs {
            let _ = write!(body, "<p>{}</p>", highlight(para, &needles).html());
        }
        body.push_str("</article>");
    }
    // The same way on at the end of a long thread.
    body.push_str(&nav);
    html(StatusCode::OK, page(&doc.title, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

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
