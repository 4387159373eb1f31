//! The search page: the form, the hits and the pager.

use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_search::{Hit, SearchOptions, SearchResults, Snippet, SortOrder};

use super::{error_page, html};
use crate::api::SEARCH_PARAMS;
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::html::{enc, escape, page, safe_href};
use crate::params::Params;
use crate::State as AppState;

const PER_PAGE: usize = 10;

/// What the search form shows and the search page needs.
struct Form {
    q: String,
    sites: Vec<String>,
    since: String,
    until: String,
    sort: SortOrder,
    page: usize,
}

fn form_html(f: &Form, forums: &[(String, Option<usize>)]) -> String {
    let mut boxes = String::new();
    for (site, count) in forums {
        let checked = if f.sites.contains(site) { " checked" } else { "" };
        let count = count.map(|n| format!(r#" <span class="count">({n})</span>"#)).unwrap_or_default();
        let _ = write!(boxes, r#"<label><input type="checkbox" name="site" value="{s}"{checked}> {s}{count}</label> "#, s = escape(site));
    }
    let sel = |s: SortOrder| if f.sort == s { " selected" } else { "" };
    format!(
        r#"<form class="search" action="/search" method="get" role="search">
<div class="row"><input type="search" name="q" value="{q}" placeholder="搜索所有论坛，例如：考研 经验 -广告" aria-label="查询" autofocus><button type="submit">搜索</button></div>
<div class="row"><fieldset><legend>论坛</legend>{boxes}</fieldset></div>
<div class="row"><label>从 <input type="date" name="since" value="{since}"></label><label>到 <input type="date" name="until" value="{until}"></label>
<label>排序 <select name="sort"><option value="relevance"{r}>相关度</option><option value="newest"{n}>最新</option><option value="oldest"{o}>最早</option></select></label></div>
</form>"#,
        q = escape(&f.q),
        since = escape(&f.since),
        until = escape(&f.until),
        r = sel(SortOrder::Relevance),
        n = sel(SortOrder::Newest),
        o = sel(SortOrder::Oldest),
    )
}

fn hit_html(h: &Hit, q: &str) -> String {
    let title = Snippet { text: h.title.clone(), highlights: h.title_highlights.clone() }.html();
    let title = if title.trim().is_empty() { "（无标题）".to_string() } else { title };
    let thread_link = format!("/thread/{}/{}?q={}", enc(&h.site), enc(&h.thread), enc(q));
    let original = safe_href(&h.url).map(|u| format!(r#"<a href="{}" rel="noopener noreferrer nofollow">原帖</a>"#, escape(u))).unwrap_or_default();
    let archive = format!(r#"<a href="/archive/{}/{}">存档</a>"#, enc(&h.site), enc(&h.thread));
    let forum = if h.forum.is_empty() { h.site.clone() } else { format!("{}（{}）", h.forum, h.site) };
    let date = h.posted.as_deref().map_or("", |p| p.get(..10).unwrap_or(p));
    let authors = h.authors.iter().take(3).map(|a| escape(a).into_owned()).collect::<Vec<_>>().join("、");
    format!(
        r#"<li class="hit" data-site="{site}" data-thread="{thread}"><div class="hit-title"><a href="{thread_link}">{title}</a></div><div class="snippet">{snippet}</div><div class="meta">{forum} · <span class="posted">{date}</span> · {authors}{original}{archive}</div></li>"#,
        site = escape(&h.site),
        thread = escape(&h.thread),
        thread_link = escape(&thread_link),
        snippet = h.snippet.html(),
        forum = escape(&forum),
    )
}

fn page_link(f: &Form, page: usize) -> String {
    let mut s = format!("/search?q={}", enc(&f.q));
    for site in &f.sites {
        let _ = write!(s, "&site={}", enc(site));
    }
    for (k, v) in [("since", &f.since), ("until", &f.until)] {
        if !v.is_empty() {
            let _ = write!(s, "&{k}={}", enc(v));
        }
    }
    let sort = match f.sort {
        SortOrder::Relevance => "relevance",
        SortOrder::Newest => "newest",
        SortOrder::Oldest => "oldest",
    };
    let _ = write!(s, "&sort={sort}&page={page}");
    s
}

pub async fn search(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    match search_page(st, raw).await {
        Ok(r) => r,
        Err(e) => error_page(&e),
    }
}

async fn search_page(st: AppState, raw: Option<String>) -> Result<Response, ApiError> {
    let mut allowed = SEARCH_PARAMS.to_vec();
    allowed.push("page");
    let p = Params::parse(raw.as_deref(), &allowed)?;
    let page_no = p.number("page", 1, crate::MAX_OFFSET / PER_PAGE)?.max(1);
    let form = Form {
        q: p.get("q").unwrap_or("").to_string(),
        sites: p.sites()?,
        since: p.get("since").unwrap_or("").to_string(),
        until: p.get("until").unwrap_or("").to_string(),
        sort: p.sort()?,
        page: page_no,
    };
    let query = if form.q.is_empty() { None } else { Some(p.query()) };
    let opts = SearchOptions { offset: (page_no - 1) * PER_PAGE, limit: PER_PAGE, ..p.search_options(PER_PAGE)? };
    let (forums, results, error) = blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &opts.sites)?;
        let names: Vec<String> = catalog.sites().into_iter().map(str::to_string).collect();
        let Some(query) = query else { return Ok((names.into_iter().map(|n| (n, None)).collect::<Vec<_>>(), None, None)) };
        let query = match query {
            Ok((_, q)) => q,
            Err(e) => return Ok((names.into_iter().map(|n| (n, None)).collect(), None, Some(e))),
        };
        let results: SearchResults = catalog.search(&query, &opts)?;
        // Counts for every forum, also those not ticked, so a person sees
        // what ticking one would add.
        let all = if opts.sites.is_empty() {
            results.per_site.clone()
        } else {
            catalog.search(&query, &SearchOptions { sites: Vec::new(), limit: 0, offset: 0, ..opts.clone() })?.per_site
        };
        Ok((names.into_iter().map(|n| (n.clone(), Some(all.get(&n).copied().unwrap_or(0)))).collect(), Some(results), None))
    })
    .await?;
    let mut body = form_html(&form, &forums);
    let mut status = StatusCode::OK;
    if let Some(e) = error {
        status = e.status();
        let col = e.column().map(|c| format!("（第 {c} 个字符）")).unwrap_or_default();
        let _ = write!(body, r#"<p class="error">{}{col}</p>"#, escape(&e.to_string()));
    }
    if let Some(r) = results {
        let _ = write!(body, r#"<p class="summary">共 <span id="total">{}</span> 个主题</p><ol class="hits">"#, r.total);
        for h in &r.hits {
            body.push_str(&hit_html(h, &form.q));
        }
        body.push_str("</ol><p class=\"pager\">");
        if form.page > 1 {
            let _ = write!(body, r#"<a rel="prev" href="{}">上一页</a>"#, escape(&page_link(&form, form.page - 1)));
        }
        if form.page * PER_PAGE < r.total {
            let _ = write!(body, r#"<a rel="next" href="{}">下一页</a>"#, escape(&page_link(&form, form.page + 1)));
        }
        let _ = write!(body, r#"</p><p><a href="/trend?q={q}">趋势图</a> · <a href="/feed.atom?q={q}">订阅 (Atom)</a></p>"#, q = escape(&enc(&form.q)));
    }
    let title = if form.q.is_empty() { "搜索".to_string() } else { form.q.clone() };
    Ok(html(status, page(&title, &body)))
}
