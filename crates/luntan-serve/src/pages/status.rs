//! The crawl's state per forum, as `luntan-status` prints it.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{error_page, html};
use crate::catalog::blocking;
use crate::data::open_store;
use crate::error::ApiError;
use crate::html::{escape, page};
use crate::State as AppState;
use luntan_core::store::RoundRecord;

/// The thread columns: class, heading, and what the heading counts. Each
/// thread is in exactly one of the first five.
const COLUMNS: [(&str, &str, &str); 6] = [
    ("discovered", "待下载", "在版块列表上发现，页面尚未保存"),
    ("saved", "待抽取", "每一页的 HTML 已保存，尚未抽取"),
    ("extracted", "待索引", "已抽取为 XML，尚未进入索引"),
    ("indexed", "已索引", "已进入索引，可以搜索"),
    ("failed", "失败", "某一步放弃了：哪一步、为什么，见下"),
    ("found", "共发现", "以上各列之和：发现的全部主题（每个主题只在它现在所处的一列里计一次）"),
];

pub async fn status(State(st): State<AppState>) -> Response {
    let read = blocking(move || open_store(&st)?.status(None).map_err(|e| ApiError::Unavailable(e.to_string()))).await;
    let status = match read {
        Ok(s) => s,
        Err(e) => return error_page(&e),
    };
    // Each thread is counted once, in the state it is in now
    // (luntan_core::state), so each column is named for what its threads
    // wait for, and 共发现 sums them: a finished crawl shows 0 待下载, not
    // 0 found.
    let mut body = String::from("<h1>抓取状态</h1><table class=\"status\"><thead><tr><th>论坛</th><th>版块</th>");
    for (class, name, _) in COLUMNS {
        let _ = write!(body, r#"<th class="{class}">{name}</th>"#);
    }
    body.push_str("</tr></thead><tbody>");
    for s in &status {
        let c = &s.counts;
        let found = c.discovered + c.saved + c.extracted + c.indexed + c.failed;
        let _ = write!(body, r#"<tr data-site="{site}"><td>{site}</td><td class="boards">{}</td>"#, c.boards, site = escape(&c.site));
        for ((class, _, _), n) in COLUMNS.iter().zip([c.discovered, c.saved, c.extracted, c.indexed, c.failed, found]) {
            let _ = write!(body, r#"<td class="{class}">{n}</td>"#);
        }
        body.push_str("</tr>");
    }
    // The page's stylesheet is shared with the other pages; the legend's few rules ride along.
    body.push_str(
        r#"</tbody></table><dl class="legend" style="display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.5rem 0 1.5rem;font-size:.85rem;color:#6e6e73">"#,
    );
    for (_, name, meaning) in COLUMNS {
        let _ = write!(body, r#"<dt style="font-weight:700">{name}</dt><dd style="margin:0">{meaning}</dd>"#);
    }
    body.push_str("</dl>");
    for s in &status {
        let c = &s.counts;
        let _ = write!(body, "<h2>{}</h2><ul>", escape(&c.site));
        if let Some(r) = &c.last_round {
            let RoundRecord { requests, list_pages, boards_visited, boards_skipped, new_threads, updated_threads, errors, .. } = r;
            let _ = write!(
                body,
                "<li>上一轮 {}：{requests} 次请求，{list_pages} 个列表页，访问 {boards_visited} 个版块（{boards_skipped} 个未到期），新主题 {new_threads}，更新 {updated_threads}，错误 {errors}</li>",
                escape(&r.finished_at),
            );
        }
        if let Some(m) = &c.media {
            let _ = write!(body, "<li>图片与附件：{} 个网址存为 {} 个文件（{} 字节），{} 个未存</li>", m.archived, m.files, m.bytes, m.failed);
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
