//! Every failure a request can meet, as one JSON shape with a status code:
//! `{"error": "...", "status": 400, "column": 7}` (`column` only for a
//! malformed query, 1-based characters as `luntan-search` reports them).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use luntan_search::{QueryError, SearchError};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A malformed query or parameter: the caller's to fix.
    #[error("{message}")]
    BadRequest { message: String, column: Option<usize> },
    #[error("{0}")]
    NotFound(String),
    #[error("a valid token is required")]
    Unauthorized,
    /// An index or the crawl database cannot be opened right now (being
    /// created, another schema, missing): worth retrying later.
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::BadRequest { message: message.into(), column: None }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn column(&self) -> Option<usize> {
        match self {
            ApiError::BadRequest { column, .. } => *column,
            _ => None,
        }
    }

    /// The error as a page says it: what went wrong, in Chinese, then the
    /// detail as the API words it (the parameter, the query's column, the
    /// path), which names things a person can look for.
    pub fn chinese(&self) -> String {
        match self {
            ApiError::BadRequest { message, column } => {
                let at = column.map(|c| format!("，在第 {c} 个字符")).unwrap_or_default();
                let what = if message.starts_with("query:") {
                    "查询的写法有误".to_string()
                } else if message.starts_with("query string") {
                    "网址里的参数太长".to_string()
                } else if message.starts_with("unknown parameter") {
                    "网址里有不认识的参数".to_string()
                } else if message.contains("no such forum") {
                    "没有这个论坛".to_string()
                } else {
                    let key: String = message.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if key.is_empty() || key.len() > 16 {
                        "请求有误".to_string()
                    } else {
                        format!("参数 {key} 有误")
                    }
                };
                format!("{what}{at}（{message}）")
            }
            ApiError::NotFound(detail) => format!("找不到这个页面或主题（{detail}）"),
            ApiError::Unauthorized => "需要有效的访问令牌（token）".to_string(),
            ApiError::Unavailable(detail) => format!("索引或抓取数据库暂时打不开，请稍后再试（{detail}）"),
            ApiError::Internal(detail) => format!("服务器内部出错（{detail}）"),
        }
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> ApiError {
        ApiError::BadRequest { message: format!("query: {e}"), column: e.column() }
    }
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> ApiError {
        match e {
            SearchError::Query(q) => q.into(),
            SearchError::UnknownSite { site, .. } => ApiError::bad(format!("site {site:?}: no such forum")),
            SearchError::Day(d) => ApiError::bad(d.to_string()),
            SearchError::Io { .. } | SearchError::Open { .. } | SearchError::Schema { .. } | SearchError::BadId { .. } => ApiError::Unavailable(e.to_string()),
            SearchError::Search { .. } => ApiError::Internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!("{self}");
        }
        let mut body = serde_json::json!({ "error": self.to_string(), "status": status.as_u16() });
        if let Some(c) = self.column() {
            body["column"] = c.into();
        }
        let mut resp = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_in_chinese_and_keeps_its_detail() {
        let q: ApiError = luntan_search::Query::parse("\"abc").unwrap_err().into();
        for (e, words) in [
            (q, &["查询的写法有误", "第 1 个字符", "unmatched quote"][..]),
            (ApiError::bad("limit: at most 100"), &["参数 limit 有误", "at most 100"]),
            (ApiError::bad("site \"x\": no such forum"), &["没有这个论坛", "\"x\""]),
            (ApiError::bad("unknown parameter \"limt\""), &["不认识的参数", "limt"]),
            (ApiError::bad("query string longer than 4096 bytes"), &["参数太长"]),
            (ApiError::NotFound("no thread dz/1".into()), &["找不到", "dz/1"]),
            (ApiError::Unauthorized, &["令牌"]),
            (ApiError::Unavailable("dz.index: broken".into()), &["稍后再试", "dz.index"]),
            (ApiError::Internal("boom".into()), &["服务器内部出错", "boom"]),
        ] {
            let zh = e.chinese();
            for w in words {
                assert!(zh.contains(w), "{zh} lacks {w}");
            }
        }
    }
}
