//! The trend page: matching threads or posts per interval, per forum.

use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_search::Interval;

use super::{error_page, html};
use crate::catalog::{blocking, check_skipped};
use crate::error::ApiError;
use crate::html::{escape, line_chart, page};
use crate::params::Params;
use crate::State as AppState;

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
