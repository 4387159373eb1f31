//! Hybrid sites: HTML articles whose comments come as JSON
//! ([`luntan_core::site::HtmlComments`], a top-level `<comments>`).
//!
//! Download reads an article's HTML pages as for any forum, then its
//! comments pages through the same [`Fetcher`] (politeness, robots.txt,
//! retries), the endpoint's URL filled from the thread id or the key on
//! the article's first page. They are saved beside the HTML as
//! `article<T>_c1.json`, `_c2.json` … with `article<T>.comments`, one
//! `<server clock>\t<url>` line a page, in the one commit that saves the
//! thread; the comment count (the `count` path, else the comments read)
//! goes into the row's `replies`.
//!
//! Discover, after walking the HTML lists (which find new articles), asks
//! each saved article's first comments page for its count when the site
//! file has a `count` path and its lists show no reply counts: an article
//! whose count grew is re-queued, as a list row showing more replies is.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use luntan_core::contract::StageRun;
use luntan_core::site::{field_text, CommentKey, HtmlComments, Site};
use luntan_core::state::ThreadState;
use luntan_core::store::{Listing, NewThread, Store, StoreError, ThreadRow};
use url::Url;

use crate::db::with_store;
use crate::fetch::{Fetched, Fetcher};
use crate::protocol::{get_json_page, walk_pages, JsonPage, JsonPageError, WalkError};
use crate::round::DiscoverReport;

/// Why an article's comments could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CommentsError {
    #[error(transparent)]
    Page(Box<JsonPageError>),
    #[error("{url}: the article page has no comment key where <comments {what}> says")]
    NoKey { url: Url, what: String },
    #[error("{url}: <comments> gives no URL for this article ({template})")]
    NoUrl { url: Url, template: String },
}

impl From<JsonPageError> for CommentsError {
    fn from(e: JsonPageError) -> CommentsError {
        CommentsError::Page(Box::new(e))
    }
}

/// An article's comments pages, in the order read, and its comment count.
pub struct CommentPages {
    /// The comments pages, then each comment's replies page (where the
    /// site file says where replies are).
    pub pages: Vec<JsonPage>,
    /// Per page, the comment whose replies it holds (`None`: a comments page).
    pub replies_of: Vec<Option<String>>,
    pub count: i64,
    /// The newest comment's time (replies nested in comments included),
    /// as extract reads it, where the site's lists show no last-post time
    /// of their own: what orders the articles a round rechecks.
    pub newest: Option<String>,
}

impl CommentPages {
    /// `article<T>.comments`: one `<unix seconds>\t<url>` line a page, and
    /// a replies page's comment id after a third tab.
    pub fn list(&self) -> String {
        self.pages
            .iter()
            .zip(&self.replies_of)
            .map(|(p, of)| match of {
                Some(id) => format!("{}\t{}\t{id}\n", p.at, p.fetched.url),
                None => format!("{}\t{}\n", p.at, p.fetched.url),
            })
            .collect()
    }
}

/// The key `rules` read off an article's first page, decoded as extract
/// decodes it; `Ok(None)` when the URL needs none.
pub fn key_of(site: &Site, rules: &HtmlComments, page: &Fetched) -> Result<Option<String>, CommentsError> {
    let Some(how) = &rules.key else { return Ok(None) };
    let html = crate::links::decode(site, &page.body, page.content_type.as_deref());
    match rules.key_in(&page.url, &html) {
        Some(k) => Ok(Some(k)),
        None => {
            let what = match how {
                CommentKey::Select(_) => "key",
                CommentKey::Pattern(_) => "key-pattern",
                CommentKey::Path { .. } => "key-from",
            };
            Err(CommentsError::NoKey { url: page.url.clone(), what: what.into() })
        }
    }
}

/// Every comments page of one article, the first page of which (HTML)
/// is `first`. Empty pages add nothing (an article without comments, the
/// page after a full last one); a cursor that comes back ends the pages.
pub async fn fetch_comments(fetcher: &Fetcher, rules: &HtmlComments, thread: &str, first: &Fetched) -> Result<CommentPages, CommentsError> {
    let article_key = key_of(fetcher.site(), rules, first)?;
    let endpoint = rules.for_article(article_key.as_deref());
    let walked = walk_pages(fetcher, &endpoint, thread).await.map_err(|e| match e {
        WalkError::NoUrl => CommentsError::NoUrl { url: first.url.clone(), template: endpoint.url.clone() },
        WalkError::Page(e) => e.into(),
    })?;
    let count = walked.first().and_then(|p| rules.count.as_ref().and_then(|c| field_text(&p.value, c))).and_then(|c| c.trim().parse::<i64>().ok());
    let (mut items_read, mut pages) = (0, Vec::new());
    for page in walked {
        let items = endpoint.items(&page.value).len();
        items_read += items;
        if items > 0 {
            pages.push(page);
        }
    }
    let mut replies_of = vec![None; pages.len()];
    if let Some(replies) = &rules.replies {
        // A comment's replies, one page each, for the comments whose count
        // says they have some (every comment where no count is read).
        let mut asked = std::collections::HashSet::new();
        let comments: Vec<(String, Option<i64>)> = pages
            .iter()
            .flat_map(|p| endpoint.items(&p.value))
            .filter_map(|item| {
                let id = field_text(item, endpoint.id.as_ref()?)?;
                let count = endpoint.replies.as_ref().and_then(|c| field_text(item, c)).and_then(|c| c.trim().parse::<i64>().ok());
                Some((id, count))
            })
            .collect();
        for (id, count) in comments {
            if count == Some(0) || !asked.insert(id.clone()) {
                continue;
            }
            let url = rules
                .replies_url(thread, article_key.as_deref(), &id)
                .ok_or_else(|| CommentsError::NoUrl { url: first.url.clone(), template: replies.url.clone() })?;
            let page = get_json_page(fetcher, &url).await?;
            if !replies.items(&page.value).is_empty() {
                pages.push(page);
                replies_of.push(Some(id));
            }
        }
    }
    let site = fetcher.site();
    let newest = if site.list.as_ref().is_some_and(|l| l.last_post.is_some()) {
        None
    } else {
        newest_time(&endpoint, rules.replies.as_ref(), &pages, &replies_of, site.thread.utc_offset_minutes)
    };
    Ok(CommentPages { pages, replies_of, count: count.unwrap_or(items_read as i64), newest })
}

/// The newest time among the items of `pages` and the replies nested in
/// them (a replies page's by the `replies` endpoint's items), each read
/// against its page's clock as extract reads it.
fn newest_time(
    endpoint: &luntan_core::site::Endpoint,
    replies: Option<&luntan_core::site::Endpoint>,
    pages: &[JsonPage],
    replies_of: &[Option<String>],
    offset: i32,
) -> Option<String> {
    let time = endpoint.time.as_ref()?;
    let mut newest: Option<String> = None;
    for (page, of) in pages.iter().zip(replies_of) {
        let mut stack = match (of, replies) {
            (Some(_), Some(r)) => r.items(&page.value),
            _ => endpoint.items(&page.value),
        };
        while let Some(item) = stack.pop() {
            if let Some(children) = &endpoint.conversation.children {
                stack.extend(children.query(item).all());
            }
            // Normalized times (`YYYY-MM-DDTHH:MM:SS`) compare as strings.
            if let Some(t) = time.query(item).first().and_then(|v| luntan_core::site::resolve_time(v, page.at, offset)) {
                if newest.as_ref().is_none_or(|n| t > *n) {
                    newest = Some(t);
                }
            }
        }
    }
    newest
}

/// Whether a round asks saved articles for their comment counts: the site
/// file says where the count is, and its lists do not show it.
pub fn rechecks(site: &Site) -> bool {
    site.comments.as_ref().is_some_and(|c| c.count.is_some()) && site.list.as_ref().is_none_or(|l| l.replies.is_none())
}

/// Asks saved articles of a hybrid site for their comment count, at most
/// `recheck` of them, the most recently active first, and re-queues those
/// whose count grew since their download.
pub(crate) async fn recheck_comments(
    run: &Arc<StageRun>,
    fetcher: &Arc<Fetcher>,
    store: &Arc<Mutex<Store>>,
    report: &mut DiscoverReport,
) -> Result<(), StoreError> {
    let site = fetcher.site();
    let Some(rules) = site.comments.as_ref().filter(|_| rechecks(site)) else { return Ok(()) };
    let Some(count_path) = &rules.count else { return Ok(()) };
    let site_id = site.id.clone();
    let mut rows: Vec<ThreadRow> = with_store(store, move |s| {
        let mut rows = Vec::new();
        for state in [ThreadState::Saved, ThreadState::Extracted, ThreadState::Indexed] {
            rows.extend(s.threads(Some(&site_id), state)?);
        }
        Ok::<_, StoreError>(rows)
    })
    .await?;
    rows.retain(|r| r.replies.is_some());
    rows.sort_by(|a, b| activity(b).cmp(&activity(a)));
    report.comment_checks_left += rows.len().saturating_sub(rules.recheck);
    rows.truncate(rules.recheck);
    let mut grown = Vec::new();
    for row in rows {
        if run.stopped() {
            break;
        }
        let Some(old) = row.replies else { continue };
        let url = match article_comments_url(run, site, rules, &row) {
            Ok(u) => u,
            Err(why) => {
                report.errors.push(format!("{}: {why}", row.url));
                continue;
            }
        };
        let page = match get_json_page(fetcher, &url).await {
            Ok(p) => p,
            Err(e) => {
                report.errors.push(e.to_string());
                continue;
            }
        };
        report.comment_checks += 1;
        let Some(now) = field_text(&page.value, count_path).and_then(|c| c.trim().parse::<i64>().ok()) else {
            report.errors.push(format!("{url}: comments@count finds no number"));
            continue;
        };
        if now > old {
            let mut t = NewThread::new(row.site.clone(), row.board.clone(), row.thread.clone(), row.url.clone());
            t.replies = Some(now);
            grown.push(t);
        }
    }
    if grown.is_empty() {
        return Ok(());
    }
    let listings = with_store(store, move |s| s.record_listings(&grown)).await?;
    report.updated_threads += listings.iter().filter(|l| **l == Listing::Updated).count();
    Ok(())
}

/// When an article was last active, as its row has it: newest last post,
/// else its own time (both the forum's wall clock, so they sort as text).
fn activity(row: &ThreadRow) -> Option<&str> {
    row.last_post.as_deref().or(row.post_time.as_deref())
}

/// Why a saved article's comments URL could not be made again.
#[derive(Debug, thiserror::Error)]
enum SavedKeyError {
    #[error("no save date")]
    NotSaved,
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{url}: {source}")]
    BadUrl { url: String, source: url::ParseError },
    #[error("{}: no comment key on the saved page", .0.display())]
    NoKey(PathBuf),
    #[error("<comments> gives no URL ({0})")]
    NoUrl(String),
}

/// The first comments page of a saved article: its key read off the HTML
/// page 1 on disk (or its URL), so a check costs one request.
fn article_comments_url(run: &StageRun, site: &Site, rules: &HtmlComments, row: &ThreadRow) -> Result<Url, SavedKeyError> {
    let key = match &rules.key {
        None => None,
        Some(how) => {
            let loc = row.saved_location().ok_or(SavedKeyError::NotSaved)?;
            let (url, html, from) = match how {
                // The article's path as download read it: its first page's
                // URL after redirects, where the capture kept one.
                CommentKey::Path { .. } => {
                    let http = run.data().http_path(&loc);
                    let saved = luntan_core::capture::read(&http).ok().flatten().and_then(|c| c.into_iter().find(|p| p.page == 1));
                    (saved.map_or_else(|| row.url.clone(), |p| p.url), String::new(), http)
                }
                _ => {
                    let path = run.data().html_path(&loc, 1);
                    let body = match std::fs::read(&path) {
                        Ok(b) => b,
                        Err(source) => return Err(SavedKeyError::Read { path, source }),
                    };
                    (row.url.clone(), crate::links::decode(site, &body, row.content_type.as_deref()), path)
                }
            };
            let url = Url::parse(&url).map_err(|source| SavedKeyError::BadUrl { url, source })?;
            Some(rules.key_in(&url, &html).ok_or(SavedKeyError::NoKey(from))?)
        }
    };
    rules.page_url(&row.thread, key.as_deref(), &rules.endpoint.first_key()).ok_or_else(|| SavedKeyError::NoUrl(rules.endpoint.url.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = r##"<site id="news"><home>http://127.0.0.1:1/news/</home>
  <links><board>/news/section/{board}$</board><thread>/news/article/{thread}\.html$</thread></links>
  <thread title="h1" body="div.content"/>
  <comments key-pattern="var THREAD_KEY = '([^']+)'" items="$.c[*]" body="$.b"><![CDATA[api/c?k={key}]]></comments>
</site>"##;

    fn page(body: &str) -> Fetched {
        Fetched {
            url: Url::parse("http://127.0.0.1:1/news/article/7.html").unwrap(),
            status: 200,
            content_type: Some("text/html; charset=utf-8".into()),
            body: body.as_bytes().to_vec(),
            date: None,
            validators: Default::default(),
            head: None,
        }
    }

    #[test]
    fn the_key_is_read_off_the_decoded_article_page() {
        let site = Site::parse(SITE, std::path::Path::new("news.xml")).unwrap();
        let rules = site.comments.as_ref().unwrap();
        let got = key_of(&site, rules, &page("<script>var THREAD_KEY = '新闻-7';</script>")).unwrap();
        assert_eq!(got.as_deref(), Some("新闻-7"));
        let e = key_of(&site, rules, &page("<p>no script</p>")).unwrap_err().to_string();
        assert!(e.contains("article/7.html") && e.contains("key-pattern"), "{e}");
        assert!(!rechecks(&site), "no count path, nothing to ask");
    }
}
