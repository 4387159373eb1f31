//! One author's posts across the archive: by the forum's own author id
//! within one forum (`/author?site=dz&id=42`: two people of one name stay
//! apart, one who renamed stays one), or by name across every forum
//! (`/author?name=小明`), newest threads first.

use std::fmt::Write as _;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use luntan_core::doc::Post;
use luntan_core::ids::SiteId;
use luntan_search::{Node, Query, SearchOptions, SortOrder};

use super::{error_page, html, known_params};
use crate::catalog::{blocking, check_skipped};
use crate::data::load_thread;
use crate::error::ApiError;
use crate::html::{enc, escape, page, readable_time};
use crate::State as AppState;

pub const AUTHOR_PARAMS: &[&str] = &["name", "site", "id", "page"];

/// Threads a page of the author page reads (each from its XML).
const THREADS_PER_PAGE: usize = 20;
/// Characters of a post shown.
const EXCERPT_CHARS: usize = 160;

/// Who the page is about.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Who {
    /// The forum's own id, in one forum.
    Id { site: SiteId, id: String },
    /// A display name, in every forum (or one).
    Name { name: String, site: Option<SiteId> },
}

impl Who {
    fn read(p: &crate::params::Params) -> Result<Who, ApiError> {
        let site = match p.get("site") {
            Some(s) => Some(SiteId::parse(s).map_err(|e| ApiError::bad(format!("site: {e}")))?),
            None => None,
        };
        let given = |k: &str| p.get(k).map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        match (given("id"), given("name"), site) {
            (Some(id), _, Some(site)) => Ok(Who::Id { site, id }),
            (Some(_), _, None) => Err(ApiError::bad("id: an author id needs the forum it belongs to (site=…)")),
            (None, Some(name), site) => Ok(Who::Name { name, site }),
            (None, None, _) => Err(ApiError::bad("name or site and id: whose posts to show")),
        }
    }

    /// The search that finds their threads (it may find more: a name
    /// matches as a substring, the posts are then picked by [`Who::wrote`]).
    fn query(&self) -> Query {
        let (author, site) = match self {
            Who::Id { site, id } => (id.clone(), Some(site)),
            Who::Name { name, site } => (name.clone(), site.as_ref()),
        };
        let mut nodes = vec![Node::Author(author)];
        nodes.extend(site.map(|s| Node::Site(s.to_string())));
        Query { root: if nodes.len() == 1 { nodes.remove(0) } else { Node::And(nodes) } }
    }

    fn wrote(&self, p: &Post) -> bool {
        match self {
            Who::Id { id, .. } => p.author_id.as_deref() == Some(id),
            Who::Name { name, .. } => p.author.trim() == name,
        }
    }

    fn heading(&self) -> String {
        match self {
            Who::Id { site, id } => format!("{site} 的用户 {id}"),
            Who::Name { name, site: None } => name.clone(),
            Who::Name { name, site: Some(s) } => format!("{name}（{s}）"),
        }
    }
}

pub async fn author(State(st): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    match author_page(st, raw).await {
        Ok(r) => r,
        Err(e) => error_page(&e),
    }
}

async fn author_page(st: AppState, raw: Option<String>) -> Result<Response, ApiError> {
    let p = known_params(raw.as_deref(), AUTHOR_PARAMS)?;
    let who = Who::read(&p)?;
    let page_no = p.number("page", 1, crate::MAX_OFFSET / THREADS_PER_PAGE)?.max(1);
    let w = who.clone();
    let (total, threads) = blocking(move || {
        let catalog = st.catalog.searchable()?;
        let sites: Vec<SiteId> = match &w {
            Who::Id { site, .. } | Who::Name { site: Some(site), .. } => vec![site.clone()],
            Who::Name { site: None, .. } => Vec::new(),
        };
        let opts = SearchOptions {
            limit: THREADS_PER_PAGE,
            offset: (page_no - 1) * THREADS_PER_PAGE,
            sort: SortOrder::Newest,
            snippet_chars: 0,
            sites,
            ..SearchOptions::default()
        };
        check_skipped(&catalog, &opts.sites)?;
        let found = catalog.search(&w.query(), &opts)?;
        let mut threads = Vec::new();
        for h in &found.hits {
            // A thread the index knows and the data directory lost is left out, not an error.
            if let Ok((_, doc)) = load_thread(&st, &h.site, &h.thread) {
                let posts: Vec<Post> = doc.posts.iter().filter(|p| w.wrote(p)).cloned().collect();
                if !posts.is_empty() {
                    threads.push((doc, posts));
                }
            }
        }
        Ok((found.total, threads))
    })
    .await?;

    let mut body = format!(r#"<h1 class="author-name">{}</h1>"#, escape(&who.heading()));
    let _ = write!(body, r#"<p class="meta">{total} 个帖子里有匹配的作者（第 {page_no} 页，按最新排序）</p>"#);
    if threads.is_empty() {
        body.push_str(r#"<p class="summary">没有找到这位作者的帖子。</p>"#);
    }
    body.push_str(r#"<ol class="hits author-posts">"#);
    for (doc, posts) in &threads {
        let _ = write!(
            body,
            r#"<li><div class="hit-title"><a href="/thread/{s}/{t}">{title}</a></div><div class="meta">{forum}（{site}）</div>"#,
            s = enc(&doc.site),
            t = enc(&doc.thread),
            title = escape(if doc.title.trim().is_empty() { "（无标题）" } else { &doc.title }),
            forum = escape(&doc.forum),
            site = escape(&doc.site),
        );
        for p in posts {
            let text: String = p.text().chars().take(EXCERPT_CHARS).collect();
            let time = p.time.as_deref().map(|t| format!(r#" <time datetime="{}">{}</time>"#, escape(t), escape(&readable_time(t)))).unwrap_or_default();
            let _ = write!(
                body,
                r##"<p class="post-excerpt"><a class="permalink" href="/thread/{s}/{t}#floor{f}">#{f}</a>{time} {text}</p>"##,
                s = enc(&doc.site),
                t = enc(&doc.thread),
                f = p.floor,
                text = escape(&text),
            );
        }
        body.push_str("</li>");
    }
    body.push_str("</ol>");
    if total > page_no * THREADS_PER_PAGE {
        let mut next = String::new();
        for k in ["name", "site", "id"] {
            if let Some(v) = p.get(k) {
                let _ = write!(next, "{k}={}&", enc(v));
            }
        }
        let _ = write!(body, r#"<nav class="pager"><a rel="next" href="/author?{next}page={}">下一页</a></nav>"#, page_no + 1);
    }
    Ok(html(StatusCode::OK, page(&who.heading(), &body)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    fn who(q: &str) -> Result<Who, ApiError> {
        Who::read(&Params::parse(Some(q), AUTHOR_PARAMS).unwrap())
    }

    #[test]
    fn an_id_needs_its_forum_and_a_name_does_not() {
        assert_eq!(who("site=dz&id=42").unwrap(), Who::Id { site: "dz".parse().unwrap(), id: "42".into() });
        assert_eq!(who("name=%E5%B0%8F%E6%98%8E").unwrap(), Who::Name { name: "小明".into(), site: None });
        assert!(who("id=42").unwrap_err().to_string().contains("site"));
        assert!(who("").is_err() && who("name=%20").is_err());
        assert!(who("site=..%2Fetc&id=1").is_err());
        assert_eq!(who("site=dz&id=42").unwrap().query().root.to_string(), "(author:42 site:dz)");
    }

    #[test]
    fn a_name_picks_only_the_posts_of_that_exact_name() {
        let w = who("name=%E5%B0%8F%E6%98%8E").unwrap();
        let post = |a: &str, id: Option<&str>| Post { author: a.into(), author_id: id.map(Into::into), ..Post::default() };
        assert!(w.wrote(&post("小明", None)) && !w.wrote(&post("小明明", None)));
        let w = who("site=dz&id=42").unwrap();
        assert!(w.wrote(&post("改名了", Some("42"))) && !w.wrote(&post("小明", Some("43"))));
    }
}
