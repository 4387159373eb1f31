//! The crawl's state per forum, as `luntan-status` prints it.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{error_page, html};
use crate::api::open_store;
use crate::catalog::blocking;
use crate::error::ApiError;
use crate::html::{escape, page};
use crate::State as AppState;

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
