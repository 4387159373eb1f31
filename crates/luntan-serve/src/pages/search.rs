//! The search page: the form, the counts by forum, board, author, year and
//! month (facets), the hits and numbered pages.
//!
//! Every link the page makes (pages, facets, thread, trend, Atom, export)
//! carries the whole search through [`Current::query_string`], so a second
//! page or a chart counts what the first page counted.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_core::ids::SiteId;
use luntan_search::{Facet, Facets, Hit, SearchOptions, SearchResults, Snippet, SortOrder};

use super::{error_page, html, known_params, RESULTS_PER_PAGE as PER_PAGE};
use crate::catalog::{blocking, check_skipped};
use crate::data::board_titles;
use crate::error::ApiError;
use crate::html::{enc, escape, page, readable_time, safe_href};
use crate::params::{Params, SEARCH_PARAMS};
use crate::State as AppState;

/// Values shown per facet.
const FACET_TOP: usize = 10;

/// The search a page shows, its parameters as given (checked by the
/// search itself): what every link of the page hands on.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Current {
    pub q: String,
    pub sites: Vec<SiteId>,
    pub board: String,
    pub author: String,
    pub since: String,
    pub until: String,
    pub sort: SortOrder,
}

fn sort_name(s: SortOrder) -> &'static str {
    match s {
        SortOrder::Relevance => "relevance",
        SortOrder::Newest => "newest",
        SortOrder::Oldest => "oldest",
    }
}

impl Current {
    pub fn read(p: &Params) -> Result<Current, ApiError> {
        let get = |k: &str| p.get(k).unwrap_or("").to_string();
        Ok(Current { q: get("q"), sites: p.sites()?, board: get("board"), author: get("author"), since: get("since"), until: get("until"), sort: p.sort()? })
    }

    /// The query string of this search without its page: `q`, each forum,
    /// and every filter that is set. One function for every link, so no
    /// link can drop a filter another keeps.
    pub fn query_string(&self) -> String {
        let mut s = format!("q={}", enc(&self.q));
        for site in &self.sites {
            let _ = write!(s, "&site={}", enc(site));
        }
        for (k, v) in [("board", &self.board), ("author", &self.author), ("since", &self.since), ("until", &self.until)] {
            if !v.is_empty() {
                let _ = write!(s, "&{k}={}", enc(v));
            }
        }
        if self.sort != SortOrder::Relevance {
            let _ = write!(s, "&sort={}", sort_name(self.sort));
        }
        s
    }

    fn link(&self, path: &str) -> String {
        format!("{path}?{}", self.query_string())
    }

    fn page_link(&self, page: usize) -> String {
        if page <= 1 {
            self.link("/search")
        } else {
            format!("/search?{}&page={page}", self.query_string())
        }
    }

    /// This search narrowed by one facet value (the first page of it).
    fn narrowed(&self, facet: &str, v: &luntan_search::FacetValue) -> Current {
        let mut c = self.clone();
        match facet {
            // A forum's value is the site id it was counted under, so it parses.
            "forum" => c.sites = SiteId::parse(&v.value).into_iter().collect(),
            "board" => {
                // Board ids are per forum: the board of that forum.
                c.sites = v.site.iter().cloned().collect();
                c.board = v.value.clone();
            }
            "author" => c.author = v.value.clone(),
            "year" => {
                c.since = format!("{}-01-01", v.value);
                c.until = format!("{}-12-31", v.value);
            }
            "month" => {
                let last = month_end(&v.value).unwrap_or(28);
                c.since = format!("{}-01", v.value);
                c.until = format!("{}-{last:02}", v.value);
            }
            _ => {}
        }
        c
    }

    /// Whether `v` is the filter this search already has.
    fn has(&self, facet: &str, v: &luntan_search::FacetValue) -> bool {
        self.narrowed(facet, v) == *self
    }
}

/// The last day of `YYYY-MM`.
fn month_end(ym: &str) -> Option<u8> {
    let (y, m) = ym.split_once('-')?;
    let month = time::Month::try_from(m.parse::<u8>().ok()?).ok()?;
    Some(time::util::days_in_month(month, y.parse().ok()?))
}

fn form_html(c: &Current, forums: &[(SiteId, String, Option<usize>)]) -> String {
    let mut boxes = String::new();
    for (site, name, count) in forums {
        let checked = if c.sites.contains(site) { " checked" } else { "" };
        let count = count.map(|n| format!(r#" <span class="count">({n})</span>"#)).unwrap_or_default();
        let label = if name.is_empty() || name == site { escape(site).into_owned() } else { escape(name).into_owned() };
        let _ = write!(
            boxes,
            r#"<label title="{s}"><input type="checkbox" name="site" value="{s}"{checked}> <span class="forum-name">{label}</span>{count}</label> "#,
            s = escape(site)
        );
    }
    let sel = |s: SortOrder| if c.sort == s { " selected" } else { "" };
    format!(
        r#"<form class="search" action="/search" method="get" role="search">
<div class="row"><input type="search" name="q" value="{q}" placeholder="搜索所有论坛，例如：考研 经验 -广告" aria-label="查询" autofocus><button type="submit">搜索</button></div>
<div class="row"><fieldset><legend>论坛</legend>{boxes}</fieldset></div>
<div class="row"><label>版块 <input type="text" name="board" value="{board}" size="8" placeholder="版块编号"></label><label>作者 <input type="text" name="author" value="{author}" size="10" placeholder="发帖人"></label></div>
<div class="row"><label>从 <input type="date" name="since" value="{since}"></label><label>到 <input type="date" name="until" value="{until}"></label>
<label>排序 <select name="sort"><option value="relevance"{r}>相关度</option><option value="newest"{n}>最新</option><option value="oldest"{o}>最早</option></select></label></div>
</form>"#,
        q = escape(&c.q),
        board = escape(&c.board),
        author = escape(&c.author),
        since = escape(&c.since),
        until = escape(&c.until),
        r = sel(SortOrder::Relevance),
        n = sel(SortOrder::Newest),
        o = sel(SortOrder::Oldest),
    )
}

fn hit_html(h: &Hit, c: &Current, boards: &HashMap<(String, String), String>) -> String {
    let title = Snippet { text: h.title.clone(), highlights: h.title_highlights.clone() }.html();
    let title = if title.trim().is_empty() { "（无标题）".to_string() } else { title };
    let thread_link = format!("/thread/{}/{}?{}&n={}", enc(&h.site), enc(&h.thread), c.query_string(), h.rank);
    let original = safe_href(&h.url).map(|u| format!(r#"<a href="{}" rel="noopener noreferrer nofollow">原帖</a>"#, escape(u))).unwrap_or_default();
    let archive = format!(r#"<a href="/archive/{}/{}">存档</a>"#, enc(&h.site), enc(&h.thread));
    let forum = if h.forum.is_empty() { h.site.to_string() } else { h.forum.clone() };
    let board_id = h.board.as_deref().unwrap_or_default();
    let board = match boards.get(&(h.site.to_string(), board_id.to_string())) {
        Some(t) => format!("{t}（{board_id}）"),
        None => format!("版块 {board_id}"),
    };
    let posted = h.posted.as_deref().unwrap_or("");
    let authors = h.authors.iter().take(3).map(|a| escape(a).into_owned()).collect::<Vec<_>>().join("、");
    format!(
        r#"<li class="hit" data-site="{site}" data-thread="{thread}" data-board="{board_id}" data-replies="{replies}"><div class="hit-title"><a href="{thread_link}">{title}</a></div><div class="snippet{in_quote}">{said}{snippet}</div><div class="meta"><span class="forum">{forum}</span> · <span class="board">{board}</span> · <time class="posted" datetime="{posted}">{posted_text}</time> · <span class="replies">{replies} 回复</span> · <span class="authors">{authors}</span>{original}{archive}</div></li>"#,
        site = escape(&h.site),
        thread = escape(&h.thread),
        board_id = escape(board_id),
        replies = h.replies,
        thread_link = escape(&thread_link),
        snippet = h.snippet.html(),
        in_quote = if h.in_quote { " in-quote" } else { "" },
        said = match (h.in_quote, &h.quote_author) {
            (false, _) => String::new(),
            (true, Some(a)) => format!(r#"<span class="quote-label">引用 {}：</span>"#, escape(a)),
            (true, None) => r#"<span class="quote-label">引用：</span>"#.to_string(),
        },
        forum = escape(&forum),
        board = escape(&board),
        posted = escape(posted),
        posted_text = escape(&readable_time(posted)),
    )
}

fn facet_html(c: &Current, key: &str, title: &str, f: &Facet, boards: &HashMap<(String, String), String>) -> String {
    if f.values.is_empty() {
        return String::new();
    }
    let mut values: Vec<&luntan_search::FacetValue> = f.values.iter().collect();
    if key == "year" || key == "month" {
        // Time reads in order; the top values by count are still the ones shown.
        values.sort_by(|a, b| b.value.cmp(&a.value));
    }
    let mut out = format!(r#"<section class="facet" data-facet="{key}"><h2>{title}</h2><ul>"#);
    for v in values {
        let label = match key {
            "forum" => v.name.clone().unwrap_or_else(|| v.value.clone()),
            "board" => {
                let site = v.site.as_deref().unwrap_or_default();
                match boards.get(&(site.to_string(), v.value.clone())).or(v.name.as_ref()) {
                    Some(t) => format!("{t}（{site}/{}）", v.value),
                    None => format!("{site}/{}", v.value),
                }
            }
            _ => v.value.clone(),
        };
        let current = if c.has(key, v) { r#" aria-current="true" class="on""# } else { "" };
        let _ = write!(
            out,
            r#"<li><a href="{href}" data-value="{value}" data-site="{site}" data-count="{n}"{current}>{label}</a> <span class="count">{n}</span></li>"#,
            href = escape(&c.narrowed(key, v).page_link(1)),
            value = escape(&v.value),
            site = escape(v.site.as_deref().unwrap_or("")),
            n = v.count,
            label = escape(&label),
        );
    }
    if f.more > 0 {
        let _ = write!(out, r#"<li class="more">还有 {} 项</li>"#, f.more);
    }
    out.push_str("</ul></section>");
    out
}

fn facets_html(c: &Current, f: &Facets, boards: &HashMap<(String, String), String>) -> String {
    let mut out = String::from(r#"<aside class="facets" aria-label="分类统计">"#);
    // Past 2,000 matches, authors are counted over an even sample of them
    // (luntan_search::facets::AUTHOR_SAMPLE): say so.
    let matches: u64 = f.forum.values.iter().map(|v| v.count).sum();
    let author =
        if f.forum.more == 0 && f.authors_counted < matches { format!("作者（抽样 {} 个主题）", f.authors_counted) } else { "作者".to_string() };
    for (key, title, facet) in [
        ("forum", "论坛", &f.forum),
        ("board", "版块", &f.board),
        ("author", author.as_str(), &f.author),
        ("year", "年份", &f.year),
        ("month", "月份", &f.month),
    ] {
        out.push_str(&facet_html(c, key, title, facet, boards));
    }
    if f.undated > 0 {
        let _ = write!(out, r#"<p class="count">无日期：{} 个主题</p>"#, f.undated);
    }
    out.push_str("</aside>");
    out
}

/// Pages `1 … p-2 p-1 [p] p+1 p+2 … last`, with 上一页 and 下一页.
fn pager_html(c: &Current, page: usize, last: usize) -> String {
    let mut out = String::from(r#"<nav class="pager" aria-label="分页">"#);
    if page > 1 {
        let _ = write!(out, r#"<a rel="prev" href="{}">上一页</a>"#, escape(&c.page_link(page - 1)));
    }
    let mut shown: Vec<usize> = vec![1, last];
    shown.extend(page.saturating_sub(2).max(1)..=(page + 2).min(last));
    shown.sort_unstable();
    shown.dedup();
    let mut prev = 0;
    for n in shown {
        if n > prev + 1 {
            out.push_str(r#"<span class="gap">…</span>"#);
        }
        if n == page {
            let _ = write!(out, r#"<span class="page current" aria-current="page" data-page="{n}">{n}</span>"#);
        } else {
            let _ = write!(out, r#"<a class="page" href="{}" data-page="{n}">{n}</a>"#, escape(&c.page_link(n)));
        }
        prev = n;
    }
    if page < last {
        let _ = write!(out, r#"<a rel="next" href="{}">下一页</a>"#, escape(&c.page_link(page + 1)));
    }
    out.push_str("</nav>");
    out
}

pub async fn search(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    match search_page(st, raw).await {
        Ok(r) => r,
        Err(e) => error_page(&e),
    }
}

/// What the blocking part of a search page finds.
struct Found {
    /// (site, forum name, count) per forum.
    forums: Vec<(SiteId, String, Option<usize>)>,
    results: Option<(SearchResults, Facets, f64)>,
    boards: HashMap<(String, String), String>,
    error: Option<ApiError>,
}

async fn search_page(st: AppState, raw: Option<String>) -> Result<Response, ApiError> {
    let mut known = SEARCH_PARAMS.to_vec();
    known.push("page");
    let p = known_params(raw.as_deref(), &known)?;
    // Deeper than the API's offset cap is not a page anyone can be sent to.
    let last_allowed = crate::MAX_OFFSET / PER_PAGE;
    let page_no = p.number("page", 1, last_allowed)?.max(1);
    let current = Current::read(&p)?;
    let query = if current.q.is_empty() { None } else { Some(p.query()) };
    let opts = SearchOptions { offset: (page_no - 1) * PER_PAGE, limit: PER_PAGE, ..p.search_options(PER_PAGE)? };
    let found = blocking(move || {
        let catalog = st.catalog.searchable()?;
        check_skipped(&catalog, &opts.sites)?;
        let names = catalog.forum_names();
        let named = |counts: Option<&std::collections::BTreeMap<SiteId, usize>>| -> Vec<(SiteId, String, Option<usize>)> {
            names.iter().map(|(s, n)| (s.clone(), n.clone(), counts.map(|c| c.get(s).copied().unwrap_or(0)))).collect()
        };
        let query = match query {
            None => return Ok(Found { forums: named(None), results: None, boards: HashMap::new(), error: None }),
            Some(Err(e)) => return Ok(Found { forums: named(None), results: None, boards: HashMap::new(), error: Some(e) }),
            Some(Ok((_, q))) => q,
        };
        let started = Instant::now();
        let results: SearchResults = catalog.search(&query, &opts)?;
        // Counts for every forum, also those not ticked, so a person sees
        // what ticking one would add.
        let all = if opts.sites.is_empty() {
            results.per_site.clone()
        } else {
            catalog.search(&query, &SearchOptions { sites: Vec::new(), limit: 0, offset: 0, ..opts.clone() })?.per_site
        };
        let facets = catalog.facets(&query, &opts, FACET_TOP)?;
        let took = started.elapsed().as_secs_f64() * 1000.0;
        let sites: Vec<&str> = names.iter().map(|(s, _)| s.as_str()).collect();
        let boards = board_titles(&st, &sites);
        Ok(Found { forums: named(Some(&all)), results: Some((results, facets, took)), boards, error: None })
    })
    .await?;
    let mut body = form_html(&current, &found.forums);
    let mut status = StatusCode::OK;
    if let Some(e) = found.error {
        status = e.status();
        let _ = write!(body, r#"<p class="error">{}</p>"#, escape(&e.chinese()));
    }
    if let Some((r, facets, took)) = found.results {
        let _ = write!(
            body,
            r#"<p class="summary">共 <span id="total">{}</span> 个主题 · 搜索用时 <span id="took">{}</span> 毫秒</p><div class="results">"#,
            r.total,
            format_ms(took)
        );
        body.push_str(&facets_html(&current, &facets, &found.boards));
        body.push_str(r#"<div class="hits-col"><ol class="hits">"#);
        for h in &r.hits {
            body.push_str(&hit_html(h, &current, &found.boards));
        }
        body.push_str("</ol>");
        let last = r.total.div_ceil(PER_PAGE).clamp(1, last_allowed);
        if r.total > 0 {
            body.push_str(&pager_html(&current, page_no, last.max(page_no)));
        }
        let _ = write!(
            body,
            r#"<p class="links"><a class="trend" href="{trend}">趋势图</a> · <a class="feed" href="{feed}">订阅 (Atom)</a> · <a class="export" href="{csv}" download>导出 CSV</a> · <a class="export" href="{ndjson}" download>导出 NDJSON</a></p></div></div>"#,
            trend = escape(&current.link("/trend")),
            feed = escape(&current.link("/feed.atom")),
            csv = escape(&current.link("/export.csv")),
            ndjson = escape(&current.link("/export.ndjson")),
        );
    }
    let title = if current.q.is_empty() { "搜索".to_string() } else { current.q.clone() };
    Ok(html(status, page(&title, &body)))
}

/// Milliseconds as people read them: one decimal below 10, whole above.
fn format_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current(raw: &str) -> Current {
        Current::read(&Params::parse(Some(raw), &["q", "site", "board", "author", "since", "until", "sort", "page"]).unwrap()).unwrap()
    }

    #[test]
    fn every_filter_survives_the_query_string() {
        let raw = "q=%E6%98%8E%E6%9C%88&site=dz&site=bbs&board=3&author=%E9%98%BF%E6%98%8E&since=2020-01-01&until=2020-12-31&sort=newest";
        let c = current(raw);
        assert_eq!(c.query_string(), raw);
        let again = current(&c.query_string());
        assert_eq!(again.query_string(), raw);
        assert!(c.page_link(3).ends_with("&page=3"));
        // A & or # in a value stays inside it.
        let odd = current("q=a%26b%23c&author=x%26page%3D9");
        assert_eq!(current(&odd.query_string()).author, "x&page=9");
    }

    #[test]
    fn a_facet_value_narrows_and_keeps_the_rest() {
        let c = current("q=a&author=b&sort=oldest");
        let v = |value: &str, site: Option<&str>| luntan_search::FacetValue {
            value: value.into(),
            name: None,
            site: site.map(|s| SiteId::parse(s).unwrap()),
            count: 1,
        };
        let m = c.narrowed("month", &v("2024-02", None));
        assert_eq!((m.since.as_str(), m.until.as_str(), m.author.as_str(), m.sort), ("2024-02-01", "2024-02-29", "b", SortOrder::Oldest));
        let b = c.narrowed("board", &v("7", Some("dz")));
        assert_eq!((b.sites.iter().map(|s| s.as_str()).collect::<Vec<_>>(), b.board.as_str()), (vec!["dz"], "7"));
        assert!(b.has("board", &v("7", Some("dz"))) && !c.has("board", &v("7", Some("dz"))));
        assert!(c.has("author", &v("b", None)));
    }

    #[test]
    fn pages_are_numbered_around_the_current_one() {
        let c = current("q=a");
        let html = pager_html(&c, 6, 20);
        let pages: Vec<&str> = html.split("data-page=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
        assert_eq!(pages, ["1", "4", "5", "6", "7", "8", "20"]);
        assert_eq!(html.matches("…").count(), 2);
        assert!(html.contains(r#"aria-current="page" data-page="6""#) && html.contains("上一页") && html.contains("下一页"));
        let one = pager_html(&c, 1, 1);
        assert!(!one.contains("上一页") && !one.contains("下一页") && one.contains(r#"data-page="1""#));
    }

    #[test]
    fn a_hit_found_in_a_quote_says_whose_words_it_shows() {
        let c = current("q=a");
        let mut h = Hit {
            rank: 1,
            score: 1.0,
            site: "dz".parse().unwrap(),
            forum: String::new(),
            board: Some("1".parse().unwrap()),
            thread: "2".parse().unwrap(),
            url: String::new(),
            title: "t".into(),
            title_highlights: Vec::new(),
            posted: None,
            saved: Some("20261130".parse().unwrap()),
            authors: vec!["乙".into()],
            replies: 1,
            snippet: luntan_search::Snippet { text: "<红烧肉>".into(), highlights: vec![(1, 10)] },
            in_quote: false,
            quote_author: None,
        };
        let own = hit_html(&h, &c, &HashMap::new());
        assert!(own.contains(r#"<div class="snippet">&lt;<b>红烧肉</b>&gt;</div>"#) && !own.contains("引用"), "{own}");
        h.in_quote = true;
        h.quote_author = Some("<甲>".into());
        let quoted = hit_html(&h, &c, &HashMap::new());
        assert!(quoted.contains(r#"<div class="snippet in-quote"><span class="quote-label">引用 &lt;甲&gt;：</span>&lt;<b>红烧肉</b>&gt;</div>"#), "{quoted}");
        h.quote_author = None;
        assert!(hit_html(&h, &c, &HashMap::new()).contains(r#"<span class="quote-label">引用：</span>"#));
    }
}
