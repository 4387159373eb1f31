//! The pages for people: server-rendered HTML that works without
//! JavaScript, in Chinese, readable on a phone.

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use luntan_search::snippet::highlight;
use luntan_search::{Hit, Interval, SearchOptions, SearchResults, Snippet, SortOrder};

use crate::api::{load_thread, open_store, SEARCH_PARAMS};
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::html::{enc, escape, line_chart, page, safe_href};
use crate::params::Params;
use crate::State as AppState;

const PER_PAGE: usize = 10;

/// Our own pages load only our own script and no remote anything: even a
/// missed escape could not run an inline script or an `onerror`.
const PAGE_CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

fn error_page(e: &ApiError) -> Response {
    let col = e.column().map(|c| format!("（第 {c} 个字符）")).unwrap_or_default();
    html(e.status(), page("出错了", &format!(r#"<p class="error">{}{col}</p><p><a href="/">返回搜索</a></p>"#, escape(&e.to_string()))))
}

pub async fn script() -> Response {
    let mut r = crate::html::SCRIPT.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    r
}

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

pub async fn thread(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Path((site, id))) = path else { return error_page(&ApiError::NotFound("no such thread".into())) };
    let q = Params::parse(raw.as_deref(), &["q"]).ok().and_then(|p| p.get("q").map(str::to_string)).unwrap_or_default();
    let needles = luntan_search::Query::parse(&q).map(|q| luntan_search::search::needles(&q)).unwrap_or_default();
    let loaded = blocking(move || load_thread(&st, &site, &id)).await;
    let (_, doc) = match loaded {
        Ok(x) => x,
        Err(e) => return error_page(&e),
    };
    let mut body = String::new();
    let title = highlight(&doc.title, &needles).html();
    let original = safe_href(&doc.url).map(|u| format!(r#" · <a href="{}" rel="noopener noreferrer nofollow">原帖</a>"#, escape(u))).unwrap_or_default();
    let _ = write!(
        body,
        r#"<h1 class="thread-title">{title}</h1><p class="meta">{forum}（{site}） · {posted} · {n} 楼{original} · <a href="/archive/{esite}/{eid}">存档</a></p>"#,
        forum = escape(&doc.forum),
        site = escape(&doc.site),
        posted = escape(doc.posted.as_deref().unwrap_or("")),
        n = doc.posts.len(),
        esite = enc(&doc.site),
        eid = enc(&doc.thread),
    );
    for p in &doc.posts {
        let _ = write!(
            body,
            r#"<article class="post" id="floor{floor}"><div class="meta">#{floor} <span class="author">{author}</span> {time}</div>"#,
            floor = p.floor,
            author = escape(&p.author),
            time = escape(p.time.as_deref().unwrap_or("")),
        );
        for para in &p.paragraphs {
            let _ = write!(body, "<p>{}</p>", highlight(para, &needles).html());
        }
        body.push_str("</article>");
    }
    html(StatusCode::OK, page(&doc.title, &body))
}

/// The saved page as the forum served it, under a sandbox policy: the
/// browser treats it as a unique origin with scripts, forms and plugins
/// off, so whatever the forum's HTML holds never runs.
pub async fn archive(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Path((site, id))) = path else { return ApiError::NotFound("no such thread".into()).into_response() };
    let page_no = match Params::parse(raw.as_deref(), &["page"]).and_then(|p| p.number("page", 1, 10_000)) {
        Ok(n) => n.max(1) as u32,
        Err(e) => return e.into_response(),
    };
    let read = blocking(move || {
        let (row, _) = load_thread(&st, &site, &id)?;
        if page_no > row.pages.unwrap_or(1) {
            return Err(ApiError::NotFound(format!("thread {site}/{id} has no page {page_no}")));
        }
        let loc = row.location(None).map_err(|_| ApiError::NotFound(format!("no saved page of {site}/{id}")))?;
        let path = st.data.html_path(&loc, page_no);
        let bytes = std::fs::read(&path).map_err(|_| ApiError::NotFound(format!("no saved page {page_no} of {site}/{id}")))?;
        Ok((bytes, row.content_type))
    })
    .await;
    match read {
        Ok((bytes, ct)) => {
            let mut r = bytes.into_response();
            let h = r.headers_mut();
            let ct = ct.filter(|c| c.to_ascii_lowercase().starts_with("text/html")).and_then(|c| HeaderValue::from_str(&c).ok());
            h.insert(header::CONTENT_TYPE, ct.unwrap_or(HeaderValue::from_static("text/html")));
            h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
            h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            r
        }
        Err(e) => e.into_response(),
    }
}

pub async fn trend(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    let run = async move {
        let p = Params::parse(raw.as_deref(), &["q", "interval", "site", "what"])?;
        let q = p.get("q").unwrap_or("").to_string();
        let interval = p.interval()?;
        let posts = match p.get("what").unwrap_or("threads") {
            "threads" => false,
            "posts" => true,
            other => return Err(ApiError::bad(format!("what {other:?}: expected threads or posts"))),
        };
        let sites = p.sites()?;
        let query = if q.is_empty() { None } else { Some(p.query()?.1) };
        let trend = match query {
            None => None,
            Some(query) => Some(
                blocking(move || {
                    let c = st.catalog.searchable()?;
                    check_skipped(&c, &sites)?;
                    Ok(c.trend(&query, interval, &sites)?)
                })
                .await?,
            ),
        };
        let sel = |on: bool| if on { " selected" } else { "" };
        let mut body = format!(
            r#"<form class="search" action="/trend" method="get"><div class="row"><input type="search" name="q" value="{q}" aria-label="查询" placeholder="输入查询，看每个论坛的主题数随时间的变化"><select name="interval"><option value="day"{d}>按日</option><option value="week"{w}>按周</option><option value="month"{m}>按月</option></select><select name="what"><option value="threads"{th}>主题数</option><option value="posts"{po}>帖子数</option></select><button type="submit">画图</button></div></form>"#,
            q = escape(&q),
            d = sel(interval == Interval::Day),
            w = sel(interval == Interval::Week),
            m = sel(interval == Interval::Month),
            th = sel(!posts),
            po = sel(posts),
        );
        if let Some(t) = trend {
            let (series, totals, what, point) = if posts {
                (t.post_series, &t.post_totals, "匹配主题的帖子", "每个点是该时段内发表的帖子数，按每帖自己的时间")
            } else {
                (t.series, &t.totals, "匹配的主题", "每个点是该时段内首帖发表的主题数")
            };
            let totals = totals.iter().map(|(s, n)| format!("{} {n}", escape(s))).collect::<Vec<_>>().join("，");
            let _ = write!(body, r#"<p class="summary">{what}：{totals}（{point}）</p>"#);
            let series: Vec<(String, Vec<u64>)> = series.into_iter().collect();
            body.push_str(&line_chart(&t.buckets, &series));
        }
        Ok::<_, ApiError>(html(StatusCode::OK, page("趋势", &body)))
    };
    run.await.unwrap_or_else(|e| error_page(&e))
}

pub async fn status(State(st): State<AppState>) -> Response {
    let read = blocking(move || open_store(&st)?.status(None).map_err(|e| ApiError::Unavailable(e.to_string()))).await;
    let status = match read {
        Ok(s) => s,
        Err(e) => return error_page(&e),
    };
    let mut body = String::from(
        r#"<h1>抓取状态</h1><table class="status"><thead><tr><th>论坛</th><th>版块</th><th>已发现</th><th>已下载</th><th>已提取</th><th>已索引</th><th>失败</th></tr></thead><tbody>"#,
    );
    for s in &status {
        let c = &s.counts;
        let _ = write!(
            body,
            r#"<tr data-site="{site}"><td>{site}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="indexed">{}</td><td class="failed">{}</td></tr>"#,
            c.boards,
            c.discovered,
            c.saved,
            c.extracted,
            c.indexed,
            c.failed,
            site = escape(&c.site)
        );
    }
    body.push_str("</tbody></table>");
    for s in &status {
        let c = &s.counts;
        let _ = write!(body, "<h2>{}</h2><ul>", escape(&c.site));
        if let Some(r) = &c.last_round {
            let _ = write!(
                body,
                "<li>上一轮 {}：{} 次请求，{} 个列表页，访问 {} 个版块（{} 个未到期），新主题 {}，更新 {}，错误 {}</li>",
                escape(&r.finished_at),
                r.requests,
                r.list_pages,
                r.boards_visited,
                r.boards_skipped,
                r.new_threads,
                r.updated_threads,
                r.errors
            );
        }
        for g in &c.failures {
            let _ = write!(
                body,
                r#"<li class="failure">失败于 {}，{} 个主题：{}（{}）</li>"#,
                escape(&g.stage),
                g.threads,
                escape(&g.cause),
                escape(&g.examples_line())
            );
        }
        body.push_str("</ul>");
    }
    html(StatusCode::OK, page("状态", &body))
}
