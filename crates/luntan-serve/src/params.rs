//! Query-string parameters, read by hand rather than by serde: repeated
//! keys (`site=a&site=b`), empty form fields meaning "not set", and every
//! malformed value answered with a 400 that names the parameter.

use luntan_core::ids::SiteId;
use luntan_search::{Interval, Node, Query, SearchOptions, SortOrder};

use crate::error::ApiError;
use crate::{MAX_LIMIT, MAX_OFFSET, MAX_QUERY_BYTES, MAX_QUERY_STRING};

/// The parameters of a search, as `/api/search`, the pages, the exports and the feed take them.
pub const SEARCH_PARAMS: &[&str] = &["q", "site", "board", "author", "since", "until", "sort", "offset", "limit"];

/// The decoded pairs of a query string.
pub struct Params(Vec<(String, String)>);

impl Params {
    /// `allowed` lists the keys the endpoint knows; any other is a 400, so a
    /// typo (`limt=5`) is not silently ignored.
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Params, ApiError> {
        let raw = raw.unwrap_or("");
        if raw.len() > MAX_QUERY_STRING {
            return Err(ApiError::bad(format!("query string longer than {MAX_QUERY_STRING} bytes")));
        }
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(raw.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        for (k, _) in &pairs {
            if !allowed.contains(&k.as_str()) && k != "token" {
                return Err(ApiError::bad(format!("unknown parameter {k:?} (known: {})", allowed.join(", "))));
            }
        }
        Ok(Params(pairs))
    }

    /// The last non-empty value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, v)| k == key && !v.trim().is_empty()).map(|(_, v)| v.trim())
    }

    /// Every non-empty value of `key`, commas also separating values.
    pub fn all(&self, key: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, v) in self.0.iter().filter(|(k, _)| k == key) {
            for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                if !out.iter().any(|o| o == part) {
                    out.push(part.to_string());
                }
            }
        }
        out
    }

    pub fn number(&self, key: &str, default: usize, max: usize) -> Result<usize, ApiError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if n <= max => Ok(n),
                Ok(_) => Err(ApiError::bad(format!("{key}: at most {max}"))),
                Err(_) => Err(ApiError::bad(format!("{key}: {v:?} is not a whole number"))),
            },
        }
    }

    pub fn day(&self, key: &str) -> Result<Option<time::Date>, ApiError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let fmt = time::macros::format_description!("[year]-[month]-[day]");
        let day = time::Date::parse(v, &fmt).map_err(|_| ApiError::bad(format!("{key}: {v:?} is not a YYYY-MM-DD date")))?;
        luntan_search::check_day(key, day).map(Some).map_err(|e| ApiError::bad(e.to_string()))
    }

    /// The `site` values, checked here so every handler past this gets ids.
    pub fn sites(&self) -> Result<Vec<SiteId>, ApiError> {
        self.all("site").iter().map(|s| SiteId::parse(s).map_err(|e| ApiError::bad(format!("site: {e}")))).collect()
    }

    /// `q`, with `board` and `author` added as the query language's filters.
    pub fn query(&self) -> Result<(String, Query), ApiError> {
        let text = self.get("q").ok_or_else(|| ApiError::bad("q: a query is required"))?;
        if text.len() > MAX_QUERY_BYTES {
            return Err(ApiError::bad(format!("q: longer than {MAX_QUERY_BYTES} bytes")));
        }
        let mut query = Query::parse(text)?;
        let mut extra = Vec::new();
        if let Some(b) = self.get("board") {
            luntan_core::ids::check_id(b).map_err(|e| ApiError::bad(format!("board: {e}")))?;
            extra.push(Node::Board(b.to_string()));
        }
        if let Some(a) = self.get("author") {
            if a.chars().count() > 64 {
                return Err(ApiError::bad("author: longer than 64 characters"));
            }
            extra.push(Node::Author(a.to_string()));
        }
        if !extra.is_empty() {
            extra.insert(0, query.root);
            query = Query { root: Node::And(extra) };
        }
        Ok((text.to_string(), query))
    }

    pub fn sort(&self) -> Result<SortOrder, ApiError> {
        match self.get("sort") {
            None | Some("relevance") => Ok(SortOrder::Relevance),
            Some("newest") => Ok(SortOrder::Newest),
            Some("oldest") => Ok(SortOrder::Oldest),
            Some(v) => Err(ApiError::bad(format!("sort: {v:?} (relevance, newest or oldest)"))),
        }
    }

    pub fn interval(&self) -> Result<Interval, ApiError> {
        self.get("interval").unwrap_or("month").parse::<Interval>().map_err(|e| ApiError::bad(e.to_string()))
    }

    /// Everything `/api/search` takes but the query.
    pub fn search_options(&self, default_limit: usize) -> Result<SearchOptions, ApiError> {
        let (since, until) = (self.day("since")?, self.day("until")?);
        if let (Some(a), Some(b)) = (since, until) {
            if a > b {
                return Err(ApiError::bad(format!("since {a} is after until {b}")));
            }
        }
        Ok(SearchOptions {
            limit: self.number("limit", default_limit, MAX_LIMIT)?,
            offset: self.number("offset", 0, MAX_OFFSET)?,
            sort: self.sort()?,
            since,
            until,
            sites: self.sites()?,
            snippet_chars: 80,
            ids_only: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[&str] = &["q", "site", "limit", "since", "until", "sort", "offset", "board", "author"];

    #[test]
    fn malformed_values_are_bad_requests_naming_the_parameter() {
        for (raw, word) in [
            ("q=a&limit=101", "limit"),
            ("q=a&limit=-1", "limit"),
            ("q=a&offset=99999999999999999999999", "offset"),
            ("q=a&since=2024-13-01", "since"),
            ("q=a&since=9999-12-31", "outside the days"),
            ("q=a&until=1600-01-01", "until: 1600-01-01"),
            ("q=a&since=2024-02-01&until=2024-01-01", "after"),
            ("q=a&sort=best", "sort"),
            ("q=a&site=../etc", "site"),
            ("q=a&board=a/b", "board"),
            ("q=a&limt=5", "unknown parameter"),
        ] {
            let p = Params::parse(Some(raw), ALL).and_then(|p| p.query().and(p.search_options(10)));
            match p {
                Err(e @ ApiError::BadRequest { .. }) => assert!(e.to_string().contains(word), "{raw}: {e}"),
                other => panic!("{raw}: {:?}", other.map(|_| ())),
            }
        }
        let long = format!("q={}", "书".repeat(200));
        assert!(matches!(Params::parse(Some(&long), ALL).unwrap().query(), Err(ApiError::BadRequest { .. })));
        let e = Params::parse(Some("q=%22abc"), ALL).unwrap().query().unwrap_err();
        assert_eq!(e.column(), Some(1), "{e}");
    }

    #[test]
    fn sites_repeat_or_take_commas_and_empty_fields_are_unset() {
        let p = Params::parse(Some("q=%E4%B9%A6&site=dz&site=bbs,phpbb&since=&sort="), ALL).unwrap();
        assert_eq!(p.sites().unwrap(), ["dz", "bbs", "phpbb"]);
        let o = p.search_options(10).unwrap();
        assert_eq!((o.since, o.sort, o.limit), (None, SortOrder::Relevance, 10));
        assert_eq!(p.query().unwrap().0, "书");
    }
}
