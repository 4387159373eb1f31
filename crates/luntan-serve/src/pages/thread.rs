//! One thread as the index's reader sees it, the query marked.

use std::fmt::Write as _;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_search::snippet::highlight;

use super::{error_page, html};
use crate::api::load_thread;
use crate::catalog::blocking;
use crate::error::ApiError;
use crate::html::{enc, escape, page, safe_href};
use crate::params::Params;
use crate::State as AppState;

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
