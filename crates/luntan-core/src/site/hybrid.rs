//! Hybrid sites: HTML articles whose comments a script fetches as JSON (a
//! news site, a blog, a forum with Ajax replies). Boards, lists, the
//! article and its title are read from HTML with `<links>`, `<list>` and
//! `<thread>`, as for any forum; a top-level `<comments>` beside them says
//! where an article's comments come from, with the attributes of
//! `<json>`'s endpoints (paging, JSONPaths) and where the comment API's id
//! for the article is:
//!
//! ```xml
//! <comments key="#comments@data-thread-key" count="$.total" paging="page" page-size="5"
//!           items="$.comments[*]" id="$.id" author="$.user.nick" time="$.created"
//!           body="$.content" body-format="text"><![CDATA[api/comments?key={key}&page={page}]]></comments>
//! ```
//!
//! The conversation attributes of a post endpoint (`author-id`,
//! `author-url`, `parent`, `children`, `likes`, `replies`, `location`,
//! `edited`: [`super::json::JsonConversation`]) read the same here.
//!
//! `{thread}` in the URL is the thread id from the article's URL; `{key}`
//! is read off the article's first page, by `key` (a CSS selector, with
//! `@attr` for an attribute) or `key-pattern` (a regular expression over
//! the page source, for a script variable), or is the article's own path
//! (`key-from="path"`): the comment packages a blog embeds (Isso, Waline,
//! Twikoo, Artalk) name a page's thread by `location.pathname`, which is in
//! no page source. `key-from="decoded-path"` is that path as `decodeURI`
//! gives it, for the scripts that decode it first. `count` is the JSONPath of the
//! total comment count on the first comments page, which later rounds ask
//! for to notice new comments: each round asks at most `recheck` articles
//! (default [`RECHECK`]), the most recently active first (last post, else
//! the article's own time), since comments gather under new articles and a
//! news site keeps thousands of old ones.

use regex::Regex;
use serde::Deserialize;
use serde_json_path::JsonPath;
use url::Url;

use super::json::{Endpoint, PageKey};
use super::locate::Ctx;
use super::raw::RawEndpoint;
use super::{Pick, SiteError};

/// Where an HTML thread's comments are, as JSON.
#[derive(Debug, Clone)]
pub struct HtmlComments {
    /// The comment endpoint; its URL may hold `{key}` as well as `{thread}`.
    pub endpoint: Endpoint,
    /// Where `{key}` is on the article's first page (`None`: the URL has none).
    pub key: Option<CommentKey>,
    /// The total comment count on the first comments page.
    pub count: Option<JsonPath>,
    /// Saved articles a round asks for their count, the most recently
    /// active first.
    pub recheck: usize,
    /// Where a comment's replies are when the comments pages hold only a
    /// count of them (`replies-url`, `replies-items`): one page per comment,
    /// its URL holding `{comment}` (the comment's `id`), its items read
    /// with the comments' paths.
    pub replies: Option<Endpoint>,
}

/// Articles a round asks for their comment count when the site file does
/// not say (`<comments recheck="…">`): a few minutes at a polite delay.
pub const RECHECK: usize = 200;

/// How the comment API's id for an article is found on its page.
#[derive(Debug, Clone)]
pub enum CommentKey {
    /// The first element the selector picks: its text, or its attribute.
    Select(Pick),
    /// The first match's `key` group, else its first group, in the page source.
    Pattern(Regex),
    /// The article URL's path as `location.pathname` gives it, still
    /// percent-encoded; `decoded`: as `decodeURI` gives it.
    Path { decoded: bool },
}

/// The placeholders a `<comments>` URL may hold.
const PLACEHOLDERS: [&str; 5] = ["thread", "key", "page", "offset", "cursor"];

impl HtmlComments {
    /// The key of the article at `url` whose page source is `html`; `None`
    /// when the page has none, or an empty one.
    pub fn key_in(&self, url: &Url, html: &str) -> Option<String> {
        let found = match self.key.as_ref()? {
            CommentKey::Path { decoded: false } => url.path().to_owned(),
            CommentKey::Path { decoded: true } => decode_uri(url.path()),
            CommentKey::Select(pick) => {
                let doc = scraper::Html::parse_document(html);
                let el = doc.select(pick).next()?;
                pick.attribute_of(el).unwrap_or_else(|| el.text().collect::<String>())
            }
            CommentKey::Pattern(re) => {
                let caps = re.captures(html)?;
                caps.name("key").or_else(|| caps.get(1))?.as_str().to_owned()
            }
        };
        let found = found.trim();
        (!found.is_empty()).then(|| found.to_owned())
    }

    /// The endpoint of one article: `{key}` filled (escaped as a cursor
    /// is), `{thread}` and the paging placeholder left to [`Endpoint::page_url`].
    pub fn for_article(&self, key: Option<&str>) -> Endpoint {
        let mut e = self.endpoint.clone();
        if let Some(k) = key {
            e.url = e.url.replace("{key}", &percent_encoding::utf8_percent_encode(k, KEY).to_string());
        }
        e
    }

    /// The URL of the replies of the comment with id `comment`, where the
    /// site file says where replies are.
    pub fn replies_url(&self, thread: &str, key: Option<&str>, comment: &str) -> Option<Url> {
        let mut e = self.replies.clone()?;
        if let Some(k) = key {
            e.url = e.url.replace("{key}", &percent_encoding::utf8_percent_encode(k, KEY).to_string());
        }
        if e.url.contains("{key}") {
            return None;
        }
        e.url = e.url.replace("{comment}", &percent_encoding::utf8_percent_encode(comment, KEY).to_string());
        e.page_url(thread, &PageKey::Number(1))
    }

    /// The URL of one comments page of an article.
    pub fn page_url(&self, thread: &str, key: Option<&str>, page: &PageKey) -> Option<Url> {
        if self.key.is_some() && key.is_none() {
            return None;
        }
        self.for_article(key).page_url(thread, page)
    }
}

/// `decodeURI`: percent-escapes decoded, except those of the characters a
/// URI reserves (`;/?:@&=+$,#`), which it keeps; a path that does not
/// decode to UTF-8 is kept whole, as the script's `try { decodeURI(…) }`
/// falls back to it.
pub fn decode_uri(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        let escaped = match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => Some((hi * 16 + lo) as u8),
            _ => None,
        };
        match escaped {
            Some(b) if !b";/?:@&=+$,#".contains(&b) => {
                out.push(b);
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| path.to_owned())
}

const KEY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawComments {
    #[serde(rename = "@key")]
    key: Option<String>,
    #[serde(rename = "@key-pattern")]
    key_pattern: Option<String>,
    #[serde(rename = "@key-from")]
    key_from: Option<String>,
    #[serde(rename = "@count")]
    count: Option<String>,
    #[serde(rename = "@recheck")]
    recheck: Option<String>,
    #[serde(rename = "@paging")]
    paging: Option<String>,
    #[serde(rename = "@first")]
    first: Option<String>,
    #[serde(rename = "@page-size")]
    page_size: Option<usize>,
    #[serde(rename = "@next")]
    next: Option<String>,
    #[serde(rename = "@max-pages")]
    max_pages: Option<u32>,
    #[serde(rename = "@items")]
    items: Option<String>,
    #[serde(rename = "@id")]
    id: Option<String>,
    #[serde(rename = "@author")]
    author: Option<String>,
    #[serde(rename = "@time")]
    time: Option<String>,
    #[serde(rename = "@body")]
    body: Option<String>,
    #[serde(rename = "@body-format")]
    body_format: Option<String>,
    #[serde(rename = "@floor")]
    floor: Option<String>,
    #[serde(rename = "@replies")]
    replies: Option<String>,
    #[serde(rename = "@author-id")]
    author_id: Option<String>,
    #[serde(rename = "@author-url")]
    author_url: Option<String>,
    #[serde(rename = "@parent")]
    parent: Option<String>,
    #[serde(rename = "@children")]
    children: Option<String>,
    #[serde(rename = "@likes")]
    likes: Option<String>,
    #[serde(rename = "@location")]
    location: Option<String>,
    #[serde(rename = "@edited")]
    edited: Option<String>,
    #[serde(rename = "@replies-url")]
    replies_url: Option<String>,
    #[serde(rename = "@replies-items")]
    replies_items: Option<String>,
    #[serde(rename = "$text")]
    url: String,
}

/// Checks a top-level `<comments>`; `json` and `browser` say whether the
/// site has those, which read comments their own way; `hashed`, whether a
/// thread id is a slug's hash (which no URL can be made from).
pub(super) fn comments(ctx: &Ctx, raw: &RawComments, home: &Url, json: bool, browser: bool, hashed: bool) -> Result<HtmlComments, SiteError> {
    if json {
        return Err(ctx.err("comments", "a <json> site names its comments inside <json>; a top-level <comments> is for HTML articles"));
    }
    if browser {
        return Err(ctx.err("comments", "in a browser the page's script loads its comments itself: keep <browser> or <comments>, not both"));
    }
    let template = raw.url.trim();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else {
            return Err(ctx.err("comments", format!("the url has a {{ with no }}: {template:?}")));
        };
        let name = &rest[open + 1..open + len];
        if !PLACEHOLDERS.contains(&name) {
            return Err(
                ctx.err("comments", format!("unknown placeholder {{{name}}} in the url (known: {{thread}}, {{key}}, {{page}}, {{offset}}, {{cursor}})"))
            );
        }
        rest = &rest[open + len + 1..];
    }
    let (has_thread, has_key) = (template.contains("{thread}"), template.contains("{key}"));
    if has_thread && hashed {
        return Err(ctx.err(
            "comments",
            "{thread} is a slug's hash here (<links hashed=\"thread\">), which the endpoint cannot know: read the article's id off its page with {key}",
        ));
    }
    if !has_thread && !has_key {
        return Err(ctx.err("comments", "the url needs {thread} (the thread id in the article's URL) or {key} (read off the article page)"));
    }
    let key = match (&raw.key, &raw.key_pattern, raw.key_from.as_deref().map(str::trim)) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
            let at = if raw.key_from.is_some() { "comments@key-from" } else { "comments@key-pattern" };
            return Err(ctx.err(at, "give one of key, key-pattern and key-from"));
        }
        (None, None, Some(from)) => match from {
            "path" => Some(CommentKey::Path { decoded: false }),
            "decoded-path" => Some(CommentKey::Path { decoded: true }),
            other => return Err(ctx.err("comments@key-from", format!("{other:?} is not path or decoded-path"))),
        },
        (Some(css), None, None) => Some(CommentKey::Select(Pick::parse(css).map_err(|e| ctx.err("comments@key", e.to_string()))?)),
        (None, Some(p), None) => {
            let re = Regex::new(p.trim())
                .map_err(|e| ctx.err("comments@key-pattern", format!("bad regular expression: {}", e.to_string().lines().last().unwrap_or("").trim())))?;
            if re.captures_len() < 2 {
                return Err(ctx.err("comments@key-pattern", "must capture the key: a group, (?P<key>…) or (…)"));
            }
            Some(CommentKey::Pattern(re))
        }
        (None, None, None) => None,
    };
    match (has_key, key.is_some()) {
        (true, false) => return Err(ctx.err("comments", "the url has {key} but none of key (a selector), key-pattern and key-from says where it is")),
        (false, true) => {
            let at = match (&raw.key, &raw.key_pattern) {
                (Some(_), _) => "comments@key",
                (_, Some(_)) => "comments@key-pattern",
                _ => "comments@key-from",
            };
            return Err(ctx.err(at, "the url has no {key} to fill"));
        }
        _ => {}
    }
    // The endpoint checks take {thread} as the article's id; `{key}` goes
    // through them as a stand-in, as braces are not URL characters.
    const STAND_IN: &str = "LUNTANKEY";
    let endpoint_raw = RawEndpoint {
        paging: raw.paging.clone(),
        first: raw.first.clone(),
        page_size: raw.page_size,
        next: raw.next.clone(),
        max_pages: raw.max_pages,
        items: raw.items.clone(),
        id: raw.id.clone(),
        title: None,
        author: raw.author.clone(),
        time: raw.time.clone(),
        body: raw.body.clone(),
        body_format: raw.body_format.clone(),
        floor: raw.floor.clone(),
        replies: raw.replies.clone(),
        author_id: raw.author_id.clone(),
        author_url: raw.author_url.clone(),
        parent: raw.parent.clone(),
        children: raw.children.clone(),
        likes: raw.likes.clone(),
        location: raw.location.clone(),
        edited: raw.edited.clone(),
        url: template.replace("{key}", STAND_IN),
    };
    let id_placeholder = if has_thread { "{thread}" } else { STAND_IN };
    let mut endpoint = super::json::endpoint(ctx, "comments", &endpoint_raw, home, id_placeholder)?;
    endpoint.url = endpoint.url.replace(STAND_IN, "{key}");
    if endpoint.body.is_none() {
        return Err(ctx.err("comments", "needs a `body` path: where a comment's text is"));
    }
    let count = match raw.count.as_deref() {
        None => None,
        Some(c) => Some(JsonPath::parse(c.trim()).map_err(|e| ctx.err("comments@count", format!("bad JSONPath {:?}: {e}", c.trim())))?),
    };
    let recheck = match raw.recheck.as_deref().map(str::trim) {
        None => RECHECK,
        Some(n) => n.parse().map_err(|_| ctx.err("comments@recheck", format!("{n:?} is not a number of articles (0 or more)")))?,
    };
    if raw.recheck.is_some() && count.is_none() {
        return Err(ctx.err("comments@recheck", "later rounds ask for the comment count: give count (its JSONPath) too"));
    }
    let replies = match (raw.replies_url.as_deref().map(str::trim), &raw.replies_items) {
        (None, None) => None,
        (Some(_), None) => return Err(ctx.err("comments@replies-url", "give replies-items too: the JSONPath of the replies on that page")),
        (None, Some(_)) => return Err(ctx.err("comments@replies-items", "give replies-url too: where a comment's replies are")),
        (Some(url), Some(items)) => {
            const COMMENT: &str = "LUNTANCOMMENT";
            if !url.contains("{comment}") {
                return Err(ctx.err("comments@replies-url", "needs {comment}: the comment's id, which its replies are asked for by"));
            }
            if endpoint.id.is_none() {
                return Err(ctx.err("comments@replies-url", "needs an `id` path: the comment's id fills {comment}"));
            }
            if url.contains("{key}") && !has_key {
                return Err(ctx.err("comments@replies-url", "has {key}, but the comments url reads no key"));
            }
            let raw_replies = RawEndpoint {
                paging: None,
                first: None,
                page_size: None,
                next: None,
                max_pages: None,
                items: Some(items.clone()),
                url: url.replace("{comment}", COMMENT).replace("{key}", STAND_IN),
                ..endpoint_raw
            };
            let mut e = super::json::endpoint(ctx, "comments", &raw_replies, home, if url.contains("{thread}") { "{thread}" } else { COMMENT })
                .map_err(|e| SiteError { field: "comments@replies-url".into(), ..e })?;
            e.url = e.url.replace(COMMENT, "{comment}").replace(STAND_IN, "{key}");
            Some(e)
        }
    };
    Ok(HtmlComments { endpoint, key, count, recheck, replies })
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    pub(crate) const NEWS: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<site id="news">
  <home>http://127.0.0.1:8080/news/</home>
  <links>
    <board><![CDATA[/news/section/{board}$]]></board>
    <thread><![CDATA[/news/article/{thread}\.html$]]></thread>
  </links>
  <thread title="h1.headline" post="article" body="div.content" author="span.author" time="time@datetime"/>
  <comments key="#comments@data-thread-key" count="$.total" paging="page" page-size="5"
            items="$.comments[*]" id="$.id" author="$.user.nick" time="$.created"
            body="$.content" body-format="text"><![CDATA[api/comments?key={key}&page={page}]]></comments>
</site>
"##;

    fn err(from: &str, to: &str) -> SiteError {
        assert!(NEWS.contains(from), "{from}");
        parse(&NEWS.replace(from, to)).unwrap_err()
    }

    #[test]
    fn a_hybrid_site_file_compiles_to_a_comment_endpoint() {
        let s = parse(NEWS).unwrap();
        let c = s.comments.as_ref().unwrap();
        assert_eq!(c.endpoint.url, "http://127.0.0.1:8080/news/api/comments?key={key}&page={page}");
        let page = "<html><body><article>x</article><div id=comments data-thread-key='cms 7/a'></div></body></html>";
        let article = Url::parse("http://127.0.0.1:8080/news/article/7.html").unwrap();
        let key = c.key_in(&article, page).unwrap();
        assert_eq!(key, "cms 7/a");
        let first = c.endpoint.first_key();
        assert_eq!(c.page_url("7", Some(&key), &first).unwrap().as_str(), "http://127.0.0.1:8080/news/api/comments?key=cms%207%2Fa&page=1");
        assert_eq!(c.page_url("7", None, &first), None, "no key, no URL");
        assert_eq!(c.key_in(&article, "<div id=comments></div>"), None);
        assert!(s.json.is_none() && s.links.thread.captures("http://127.0.0.1:8080/news/article/7.html").is_some());

        // A script variable, and the thread id alone.
        let p = parse(&NEWS.replace(r##"key="#comments@data-thread-key""##, r#"key-pattern="var\s+THREAD_KEY\s*=\s*'([^']+)'""#)).unwrap();
        let c = p.comments.unwrap();
        assert_eq!(c.key_in(&article, "<script>var THREAD_KEY = 'news-7';</script>").as_deref(), Some("news-7"));
        let t = parse(&NEWS.replace(r##"key="#comments@data-thread-key" "##, "").replace("key={key}", "article={thread}")).unwrap();
        let c = t.comments.unwrap();
        assert!(c.key.is_none());
        // A slug's hash is no id an endpoint knows.
        let hashed =
            NEWS.replace(r##"key="#comments@data-thread-key" "##, "").replace("key={key}", "article={thread}").replace("<links>", r#"<links hashed="thread">"#);
        let e = parse(&hashed).unwrap_err().to_string();
        assert!(e.contains("{thread} is a slug's hash here"), "{e}");
        assert!(parse(&NEWS.replace("<links>", r#"<links hashed="thread">"#)).is_ok(), "{{key}} read off the page is fine");
        assert_eq!(c.page_url("7", None, &PageKey::Number(2)).unwrap().as_str(), "http://127.0.0.1:8080/news/api/comments?article=7&page=2");
    }

    /// Isso and Waline key a page's comments by its path, which no page
    /// source holds: Isso sends `location.pathname` as it is (a Chinese
    /// path double-encoded), Waline `decodeURI` of it.
    #[test]
    fn key_from_path_reads_the_articles_own_path_as_the_embed_sends_it() {
        let from = |how: &str| {
            let s = parse(&NEWS.replace(r##"key="#comments@data-thread-key""##, &format!(r#"key-from="{how}""#))).unwrap();
            s.comments.unwrap()
        };
        let article = Url::parse("http://127.0.0.1:8080/2025/03/05/京城%E6%97%A7%E4%BA%8B%3F/?x=1").unwrap();
        let first = PageKey::Number(1);
        let isso = from("path");
        let key = isso.key_in(&article, "<p>no key here</p>").unwrap();
        assert_eq!(key, "/2025/03/05/%E4%BA%AC%E5%9F%8E%E6%97%A7%E4%BA%8B%3F/");
        assert_eq!(
            isso.page_url("7", Some(&key), &first).unwrap().query(),
            Some("key=%2F2025%2F03%2F05%2F%25E4%25BA%25AC%25E5%259F%258E%25E6%2597%25A7%25E4%25BA%258B%253F%2F&page=1")
        );
        let waline = from("decoded-path");
        let key = waline.key_in(&article, "").unwrap();
        assert_eq!(key, "/2025/03/05/京城旧事%3F/", "a reserved character's escape is kept, as decodeURI keeps it");
        assert_eq!(
            waline.page_url("7", Some(&key), &first).unwrap().query(),
            Some("key=%2F2025%2F03%2F05%2F%E4%BA%AC%E5%9F%8E%E6%97%A7%E4%BA%8B%253F%2F&page=1")
        );
        let not_utf8 = Url::parse("http://127.0.0.1:8080/a/%B0%A1/").unwrap();
        assert_eq!(waline.key_in(&not_utf8, "").unwrap(), "/a/%B0%A1/", "kept whole, as decodeURI's failure leaves it");
        for (attrs, says) in [
            (r##"key="#comments@data-thread-key" key-from="path""##, "one of key, key-pattern and key-from"),
            (r#"key-from="href""#, "not path or decoded-path"),
        ] {
            let e = parse(&NEWS.replace(r##"key="#comments@data-thread-key""##, attrs)).unwrap_err();
            assert!(e.field == "key-from" && e.message.contains(says), "{attrs}: {e}");
        }
        let e = parse(&NEWS.replace(r##"key="#comments@data-thread-key""##, r#"key-from="path""#).replace("key={key}", "article={thread}")).unwrap_err();
        assert!(e.field == "key-from" && e.message.contains("no {key} to fill"), "{e}");
    }

    /// `replies-url`: where a comment's replies are, by its id; each
    /// mistake is one line naming the attribute.
    #[test]
    fn replies_url_takes_the_comments_id_and_the_articles_key() {
        let with = |attrs: &str| NEWS.replace("<comments ", &format!("<comments {attrs} "));
        let s = parse(&with(r#"replies-url="api/replies?key={key}&amp;cid={comment}" replies-items="$.replies[*]""#)).unwrap();
        let c = s.comments.unwrap();
        let r = c.replies.as_ref().unwrap();
        assert_eq!(r.url, "http://127.0.0.1:8080/news/api/replies?key={key}&cid={comment}");
        assert_eq!(c.replies_url("7", Some("cms 7"), "c/9").unwrap().as_str(), "http://127.0.0.1:8080/news/api/replies?key=cms%207&cid=c%2F9");
        assert_eq!(c.replies_url("7", None, "9"), None, "no key, no URL");
        assert!(parse(NEWS).unwrap().comments.unwrap().replies.is_none());
        for (attrs, says) in [
            (r#"replies-url="api/replies?cid={comment}""#, "replies-items"),
            (r#"replies-items="$.replies[*]""#, "replies-url"),
            (r#"replies-url="api/replies" replies-items="$.replies[*]""#, "{comment}"),
            (r#"replies-url="api/replies?cid={comment}&amp;p={page}" replies-items="$.replies[*]""#, "{page}"),
            (r#"replies-url="api/replies?cid={comment}" replies-items="$.replies[""#, "replies-url"),
        ] {
            let e = parse(&with(attrs)).unwrap_err().to_string();
            assert!(e.contains("x.xml") && e.contains("replies") && e.contains(says), "{attrs}: {e}");
        }
        let no_id = with(r#"replies-url="api/replies?cid={comment}" replies-items="$.replies[*]""#).replace(r#"id="$.id" "#, "");
        assert!(parse(&no_id).unwrap_err().to_string().contains("`id` path"));
    }

    #[test]
    fn recheck_bounds_the_articles_asked_and_needs_a_count() {
        assert_eq!(parse(NEWS).unwrap().comments.unwrap().recheck, RECHECK);
        let few = parse(&NEWS.replace("<comments ", "<comments recheck=\"3\" ")).unwrap();
        assert_eq!(few.comments.unwrap().recheck, 3);
        let e = parse(&NEWS.replace("<comments ", "<comments recheck=\"3\" ").replace(r#"count="$.total" "#, "")).unwrap_err().to_string();
        assert!(e.contains("x.xml") && e.contains("recheck") && e.contains("count"), "{e}");
        let e = parse(&NEWS.replace("<comments ", "<comments recheck=\"many\" ")).unwrap_err().to_string();
        assert!(e.contains("x.xml") && e.contains("recheck"), "{e}");
    }

    #[test]
    fn a_bad_jsonpath_in_comments_is_one_line_naming_the_file() {
        let e = err(r#"items="$.comments[*]""#, r#"items="$.comments[""#);
        assert!(e.to_string().starts_with("data/sites/x.xml: line 10: items: bad JSONPath"), "{e}");
        let e = err(r#"count="$.total""#, r#"count="total""#);
        assert!(e.to_string().starts_with("data/sites/x.xml: line 9: count: bad JSONPath"), "{e}");
    }

    #[test]
    fn a_key_placeholder_without_a_key_is_refused() {
        let e = err(r##"key="#comments@data-thread-key" "##, "");
        assert_eq!(e.field, "comments", "{e}");
        assert!(e.message.contains("{key}") && e.message.contains("key-pattern"), "{e}");
    }

    #[test]
    fn a_key_without_a_key_placeholder_is_refused() {
        let e = err("key={key}", "article={thread}");
        assert_eq!(e.field, "key", "{e}");
        assert!(e.message.contains("no {key}"), "{e}");
    }

    #[test]
    fn a_url_without_an_article_placeholder_is_refused() {
        let e = err(r##"key="#comments@data-thread-key" "##, "").to_string();
        assert!(e.contains("comments"), "{e}");
        let e = err("key={key}&", "");
        assert!(e.message.contains("{thread} (the thread id"), "{e}");
    }

    #[test]
    fn an_unknown_or_unclosed_placeholder_is_refused() {
        let e = err("page={page}", "page={pg}");
        assert!(e.message.contains("unknown placeholder {pg}"), "{e}");
        let e = err("page={page}", "page={page");
        assert!(e.message.contains("with no }"), "{e}");
    }

    #[test]
    fn a_missing_paging_placeholder_is_refused() {
        let e = err("&page={page}", "");
        assert!(e.message.contains("{page} for its paging"), "{e}");
    }

    #[test]
    fn a_key_used_twice_fills_both() {
        let s = parse(&NEWS.replace("key={key}&page={page}", "key={key}&mirror={key}&page={page}")).unwrap();
        let c = s.comments.unwrap();
        assert_eq!(c.page_url("7", Some("k"), &PageKey::Number(1)).unwrap().query(), Some("key=k&mirror=k&page=1"));
    }

    #[test]
    fn bad_key_selectors_and_patterns_are_refused() {
        let e = err(r##"key="#comments@data-thread-key""##, r#"key="div[""#);
        assert!(e.field == "key" && e.message.contains("bad CSS selector"), "{e}");
        let e = err(r##"key="#comments@data-thread-key""##, r#"key-pattern="THREAD_KEY = '[^']+'""#);
        assert!(e.field == "key-pattern" && e.message.contains("must capture"), "{e}");
        let e = err(r##"key="#comments@data-thread-key""##, r#"key-pattern="(""#);
        assert!(e.field == "key-pattern" && e.message.contains("bad regular expression"), "{e}");
        let e = err(r##"key="#comments@data-thread-key""##, r##"key="#comments@data-thread-key" key-pattern="(x)""##);
        assert!(e.field == "key-pattern" && e.message.contains("give one of key, key-pattern and key-from"), "{e}");
    }

    #[test]
    fn conversation_paths_compile_in_comments_and_a_bad_one_names_its_line() {
        let s = parse(&NEWS.replace(r#"body="$.content""#, r#"body="$.content" parent="$.parent" children="$.replies[*]" author-id="$.uid" replies="$.n""#))
            .unwrap();
        let e = &s.comments.unwrap().endpoint;
        assert_eq!(e.conversation.named(), ["author-id", "parent", "children"]);
        assert!(e.replies.is_some());
        let e = err(r#"body="$.content""#, r#"body="$.content" parent="$.parent[""#);
        assert!(e.to_string().starts_with("data/sites/x.xml: line 11: parent: bad JSONPath"), "{e}");
        let e = err(r#"id="$.id" "#, r#"children="$.replies[*]" "#);
        assert!(e.field == "children" && e.message.contains("`id` path"), "{e}");
    }

    #[test]
    fn comments_need_a_body_and_no_json_or_browser_beside_them() {
        let e = err(r#"body="$.content" "#, "");
        assert!(e.field == "comments" && e.message.contains("body"), "{e}");
        let e = err("<comments ", "<browser><thread><wait selector=\"div\"/></thread></browser>\n  <comments ");
        assert!(e.field == "comments" && e.message.contains("<browser>"), "{e}");
        let json = r#"<json><seed>1</seed><list id="$.id"><![CDATA[api/l?b={board}]]></list><comments body="$.b"><![CDATA[api/c?t={thread}]]></comments></json>
  <comments "#;
        let e = err("<comments ", json);
        assert!(e.field == "comments" && e.message.contains("<json>"), "{e}");
    }
}
