//! Comments a page's script draws from JSON: a news site's comment box, a
//! blog's Isso or Waline. The sample reads pages as a crawler does, so an
//! article whose comments a script loads reads as an article without any.
//! This step draws a few sampled articles in Chromium, every request going
//! through the sample's fetcher as in browser mode ([`draw`]), keeps the
//! JSON the scripts were answered with, and finds in it what the page drew
//! ([`infer`]), so that the site file can read the comments without a
//! browser (a top-level `<comments>`, see `luntan_core::site::HtmlComments`):
//!
//! 1. **Items and body**: of every array of objects in an answer, the one
//!    with a text field the drawn page shows and the served page does not
//!    (the comments' words), counted over every article drawn.
//! 2. **Replies nested inside** (`children`): an array field of the items
//!    whose objects have the items' own fields.
//! 3. **The other fields**, each by its values over every comment read:
//!    `author` a short text the page shows, the most varied one; `time` a
//!    field every comment has that reads as a time; `id` one that differs
//!    between every two comments; `parent` one whose values are other
//!    comments' ids; `author-url` a link the page draws; `count` a number on
//!    the first page equal to the comments read.
//! 4. **The URL**: the request's, with the article's part found in it: its
//!    thread id (`{thread}`), an attribute of the served page (`key`), or
//!    its path as the script sees it (`key-from`); the parameter that
//!    changes from one request of an article to the next is its paging.
//! 5. **Checked**: the file, loaded back, must ask for the URL the script
//!    asked for, for every article drawn, and read the same comments.
//!
//! A comment server on a host of its own (Waline's `serverURL`) is drawn
//! from when the page's scripts come from it or name it, and the file then
//! allows its host; other hosts are refused in the drawing and, where no
//! comments are learned, named. Comments a page loads only when clicked
//! are learned only as far as its script asks on its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use luntan_core::site::{decode_uri, Pick, Site, SiteError};
use luntan_crawl::browser::BrowserError;
use luntan_crawl::fetch::FetchError;
use scraper::Html;
use serde_json::Value;
use url::Url;

use crate::sample::Sample;
use crate::Learned;

/// Articles drawn at most: enough to see the key change between two and
/// a second page where one has it.
pub const DRAWN: usize = 4;

/// One article as the sample read it and as Chromium drew it.
#[derive(Debug, Clone)]
pub struct Drawn {
    /// Where the page landed: what its script calls `location`.
    pub url: Url,
    /// The id the learned thread pattern takes from the URL.
    pub thread: Option<String>,
    /// The page as served.
    pub source: String,
    /// The page once its scripts had drawn it.
    pub rendered: String,
    /// What its scripts asked for and got as JSON, in order.
    pub json: Vec<(Url, Value)>,
    /// What it asked of other hosts than the forum's, refused unread.
    pub off_host: Vec<Url>,
}

/// A learned top-level `<comments>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnedComments {
    /// Attributes in the order written.
    pub attrs: Vec<(&'static str, String)>,
    /// The endpoint's URL with its placeholders.
    pub url: String,
    /// What it was learned from, one line each.
    pub examples: Vec<String>,
    /// Paging a parameter's name suggests (`page=1`) but no script was
    /// seen to use, with the value the scripts sent: see [`probe_paging`].
    pub paging_unseen: Option<String>,
    /// Query parameters the scripts set anew for every request (JSONP's
    /// callback, a cache-buster): written with the first value sent, and
    /// passed over where the file's requests are compared with the scripts'.
    pub varying: Vec<String>,
}

impl LearnedComments {
    /// The element as the site file holds it.
    pub fn element(&self) -> String {
        let mut out = String::from("  <comments");
        for (name, value) in &self.attrs {
            let _ = write!(out, " {name}=\"{}\"", crate::attr(value));
        }
        let _ = write!(out, "><![CDATA[{}]]></comments>", self.url);
        out
    }

    /// Without the paging no script was seen to use: its parameter keeps
    /// the value the scripts sent.
    fn without_paging(&mut self) {
        if let Some(v) = self.paging_unseen.take() {
            self.url = self.url.replace("{page}", &v).replace("{offset}", &v);
            self.attrs.retain(|(name, _)| !matches!(*name, "paging" | "first" | "page-size"));
        }
    }
}

/// Why no sampled article was drawn in Chromium.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    #[error("{0}")]
    Learned(SiteError),
    #[error("the drawing site: {0}")]
    Site(SiteError),
    #[error(transparent)]
    Fetcher(FetchError),
    #[error("the drawing site has no <browser>")]
    NoBrowser,
    #[error("the request budget (--max-requests) was spent before {0}")]
    Budget(Url),
    #[error(transparent)]
    Render(BrowserError),
}

/// Why the drawn articles' JSON gave no comment rules, each naming the URL
/// or the JSON path it is about.
#[derive(Debug, thiserror::Error)]
pub enum InferError {
    #[error("no JSON answer holds a text the drawn page shows")]
    NoText,
    #[error("the page shows {shown} of the {with_body} texts at {body} (items {items}[*])")]
    FewShown { shown: usize, with_body: usize, body: String, items: String },
    #[error("the articles' first comment URLs differ in shape: {0} and others")]
    Shapes(Url),
    #[error("{0}: no part of it is the article's id, an attribute of its page or its path")]
    NoKey(Url),
    #[error("{0}: its paging is not a number")]
    Paging(Url),
    #[error("{url}: its pages step by {step}, neither one nor a page's comments")]
    Step { url: Url, step: u64 },
    #[error("the file does not load: {0}")]
    Load(SiteError),
    #[error("the file has no <comments>")]
    NoComments,
    #[error("{0}: the file makes no comment URL for it")]
    NoUrl(Url),
    #[error("{page}: the file asks {file}, the page's script asked {script}")]
    Asks { page: Url, file: Box<Url>, script: Box<Url> },
    #[error("the file, loaded back, reads no comment where the scripts found them")]
    ReadsNone,
}

/// Draws the sampled first pages of up to [`DRAWN`] articles of the
/// learned file in Chromium, through a fetcher of the sample's politeness.
/// None is drawn (and no browser started) where a thread page as served
/// shows posts beside the article (a forum's, or comments drawn on the
/// server: they are read from the HTML; or a thread asked for at the
/// variant of its page that shows them, `add-query`) or no article page
/// holds a script. No article is begun once `budget` requests are sent (one
/// article's page may go past it). Returns the articles and the requests sent.
pub async fn draw(sample: &Sample, learned: &Learned, budget: u64) -> Result<(Vec<Drawn>, u64), DrawError> {
    // Threads asked for at a variant of their page (`?noscript`) were
    // found there to show every post as served.
    if learned.thread_query.is_some() {
        return Ok((Vec::new(), 0));
    }
    let site = Site::parse(&learned.site_file(), Path::new("learned.xml")).map_err(DrawError::Learned)?;
    let threads: Vec<_> = sample.pages.iter().filter_map(|p| Some((p, site.links.thread.captures(p.landed.as_str())?.ok()?))).collect();
    if threads.iter().any(|(p, _)| luntan_extract::parse_page(&site, &p.html).posts.len() > 1) {
        return Ok((Vec::new(), 0));
    }
    let mut articles: Vec<(Url, Option<String>, &str)> = Vec::new();
    for (page, m) in threads {
        let thread = m.thread.map(|t| t.to_string());
        let first = site.links.thread.is_first(m.page);
        let has_script = page.html.to_ascii_lowercase().contains("<script");
        if first && has_script && !articles.iter().any(|(_, t, _)| *t == thread) && articles.len() < DRAWN {
            articles.push((page.landed.clone(), thread, &page.html));
        }
    }
    if articles.is_empty() {
        return Ok((Vec::new(), 0));
    }
    // A page's comment server may live on a host of its own (Waline's
    // serverURL): the hosts its scripts come from or name are drawn from too,
    // each through the same fetcher (its robots.txt, the delay).
    let hosts = script_hosts(&sample.home, articles.iter().map(|(u, _, html)| (u, *html)));
    let drawing = Arc::new(crate::sample::drawing_site(&sample.home, site.politeness.delay, &hosts).map_err(DrawError::Site)?);
    let fetcher = Arc::new(luntan_crawl::fetch::Fetcher::new(drawing).map_err(DrawError::Fetcher)?);
    let renderer = luntan_crawl::browser::Renderer::for_site(fetcher.clone()).ok_or(DrawError::NoBrowser)?.keeping_traffic();
    let mut out = Vec::new();
    // One article that will not draw (a page that never settles) leaves
    // the others to learn from; none drawn is the first one's fault.
    let mut first_error = None;
    let sent = || fetcher.stats.requests.load(std::sync::atomic::Ordering::Relaxed);
    for (url, thread, source) in articles {
        if sent() >= budget {
            first_error.get_or_insert(DrawError::Budget(url));
            break;
        }
        match renderer.render(&url, luntan_crawl::browser::PageKind::Thread).await {
            Ok(drawn) => {
                let rendered = drawn.states.last().cloned().unwrap_or_default();
                out.push(Drawn { url, thread, source: source.to_owned(), rendered, json: drawn.json, off_host: drawn.off_host });
            }
            Err(e) => {
                first_error.get_or_insert(DrawError::Render(e));
            }
        }
    }
    luntan_crawl::browser::shutdown().await;
    let requests = sent();
    match (out.is_empty(), first_error) {
        (true, Some(e)) => Err(e),
        _ => Ok((out, requests)),
    }
}

/// The host names a page's scripts come from (`<script src>`) or name
/// (an absolute URL in a script's text), other than `home`'s host and port:
/// where a comment server elsewhere is (ten at most).
fn script_hosts<'a>(home: &Url, pages: impl Iterator<Item = (&'a Url, &'a str)>) -> Vec<String> {
    let named = regex::Regex::new(r#"https?://[A-Za-z0-9.\-]+(?::[0-9]+)?"#).expect("a valid pattern");
    let scripts = scraper::Selector::parse("script").expect("a valid selector");
    let mut hosts = BTreeSet::new();
    for (url, html) in pages {
        let doc = Html::parse_document(html);
        for script in doc.select(&scripts) {
            let src = script.value().attr("src").and_then(|s| url.join(s.trim()).ok());
            let text: String = script.text().collect();
            let inline = named.find_iter(&text).filter_map(|m| Url::parse(m.as_str()).ok());
            for u in src.into_iter().chain(inline) {
                let elsewhere = u.host_str() != home.host_str() || u.port_or_known_default() != home.port_or_known_default();
                if let (Some(h), true) = (u.host_str(), elsewhere) {
                    hosts.insert(h.to_ascii_lowercase());
                }
            }
        }
    }
    hosts.into_iter().take(10).collect()
}

/// Draws and infers, in at most `max_requests` requests, the sample's
/// included (a page drawn may go past it); what was learned goes into
/// `learned.comments`, and why nothing was (where articles hold scripts)
/// into `learned.missing`.
pub async fn learn_comments(sample: &Sample, learned: &mut Learned, max_requests: u64) {
    let budget = max_requests.saturating_sub(sample.requests);
    match draw(sample, learned, budget).await {
        Ok((drawn, requests)) => {
            learned.requests += requests;
            let elsewhere = elsewhere(&drawn);
            if drawn.is_empty() || drawn.iter().all(|d| d.json.is_empty()) {
                if let Some(e) = elsewhere {
                    learned.missing.push(format!("comments: the article pages' scripts loaded no JSON from this host{e}"));
                }
                return;
            }
            let hashed = learned.hashed.contains(&"thread");
            match infer(&drawn, hashed).and_then(|c| verify(learned, c, &drawn)) {
                Ok(mut c) => {
                    if let Some(h) = Url::parse(&c.url).ok().filter(|u| !same_origin(u, &learned.home)).and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                    {
                        learned.allow_hosts.push(h);
                    }
                    if c.paging_unseen.is_some() && requests < budget {
                        let (alike, requests) = probe_paging(sample, learned, &c, &drawn).await;
                        learned.requests += requests;
                        if alike == Some(true) {
                            c.without_paging();
                        }
                    }
                    c.paging_unseen = None;
                    learned.comments = Some(c);
                }
                Err(why) => learned.missing.push(format!(
                    "comments: the article pages' scripts load JSON, but no comments were learned from it: {why}{}",
                    elsewhere.unwrap_or_default()
                )),
            }
        }
        Err(why) => learned.missing.push(format!("comments: article pages hold scripts, but none was drawn to see what they load: {why}")),
    }
}

/// A comment server on another host (Waline's on Vercel, Isso on a
/// subdomain) is refused in the drawing: the hosts the pages' scripts
/// asked, said rather than passed over.
fn elsewhere(drawn: &[Drawn]) -> Option<String> {
    let hosts: BTreeSet<&str> = drawn.iter().flat_map(|d| &d.off_host).map(|u| &u[url::Position::BeforeScheme..url::Position::BeforePath]).collect();
    (!hosts.is_empty()).then(|| {
        format!(
            "; the pages' scripts also asked other hosts ({}), which the page's own scripts name nowhere and the drawing refused: comments served there need <allow-host> and a <comments> written by hand",
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

/// A key path inside a JSON value, as written in a JSONPath (`$.user.nick`).
type Keys = Vec<String>;

fn json_path(keys: &[String]) -> String {
    let mut out = String::from("$");
    for k in keys {
        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.starts_with(|c: char| c.is_ascii_digit()) {
            let _ = write!(out, ".{k}");
        } else {
            let _ = write!(out, "['{}']", k.replace('\\', "\\\\").replace('\'', "\\'"));
        }
    }
    out
}

fn get<'a>(v: &'a Value, keys: &[String]) -> Option<&'a Value> {
    keys.iter().try_fold(v, |v, k| v.get(k))
}

/// Every array of objects in `v` (not inside another array), by where it is.
fn arrays<'a>(v: &'a Value, at: &mut Keys, out: &mut Vec<(Keys, &'a [Value])>) {
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => out.push((at.clone(), items)),
        Value::Object(map) if at.len() < 4 => {
            for (k, child) in map {
                at.push(k.clone());
                arrays(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The scalar fields of an item, objects followed three deep.
fn leaves<'a>(v: &'a Value, at: &mut Keys, out: &mut Vec<(Keys, &'a Value)>) {
    match v {
        Value::Object(map) if at.len() < 3 => {
            for (k, child) in map {
                at.push(k.clone());
                leaves(child, at, out);
                at.pop();
            }
        }
        Value::Object(_) | Value::Array(_) => {}
        scalar => out.push((at.clone(), scalar)),
    }
}

/// The field of `items` holding replies drawn inside them: an array of
/// objects sharing at least half the items' own fields.
fn children_key(items: &[&Value]) -> Option<String> {
    let own: BTreeSet<&String> = items.iter().filter_map(|i| i.as_object()).flat_map(|m| m.keys()).collect();
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for item in items.iter().filter_map(|i| i.as_object()) {
        for (k, v) in item {
            if let Value::Array(a) = v {
                let alike = a.iter().filter(|c| c.as_object().is_some_and(|m| m.keys().filter(|k| own.contains(k)).count() * 2 >= own.len().max(1))).count();
                if alike > 0 && alike == a.len() {
                    *counts.entry(k).or_insert(0) += alike;
                }
            }
        }
    }
    // The one holding most, the first by name of those that hold as many.
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(k, _)| k.clone())
}

/// The items and, depth first, the replies inside each.
fn with_children<'a>(items: &[&'a Value], children: Option<&str>, out: &mut Vec<&'a Value>) {
    for item in items {
        out.push(item);
        if let Some(Value::Array(kids)) = children.and_then(|k| item.get(k)) {
            with_children(&kids.iter().collect::<Vec<_>>(), children, out);
        }
    }
}

/// Text without white space: what a page shows, whatever its markup.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The words of a page.
fn page_text(html: &str) -> String {
    squash(&Html::parse_document(html).root_element().text().collect::<String>())
}

fn looks_html(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2).any(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || w[1] == b'/')) && s.contains('>')
}

/// The words of a JSON text field as a page would show them.
fn value_text(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    let text = if looks_html(s) { Html::parse_fragment(s).root_element().text().collect::<String>() } else { s.to_owned() };
    Some(squash(&text))
}

/// At most 40 characters of `text`: enough to be found, short enough that
/// a page which cuts long comments short still holds it.
fn head(text: &str) -> &str {
    text.char_indices().nth(40).map_or(text, |(i, _)| &text[..i])
}

/// The endpoint an answer came from, as one for every article: host and
/// path with runs of digits as one `#`.
fn endpoint_shape(url: &Url) -> String {
    let mut out = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(p) = url.port() {
        let _ = write!(out, ":{p}");
    }
    let mut digits = false;
    for c in url.path().chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            out.push(c);
            digits = false;
        }
    }
    out
}

/// The comments of one answer read with a choice of items and body.
#[derive(Debug, Clone)]
struct Answer<'a> {
    article: usize,
    url: &'a Url,
    value: &'a Value,
    /// Every comment, replies after what they answer.
    comments: Vec<&'a Value>,
    /// The items alone (what a page of comments counts).
    items: usize,
}

/// Finds the comments in what the drawn articles' scripts were answered
/// with. `hashed`: the thread id is a slug's hash, which no URL holds.
pub fn infer(drawn: &[Drawn], hashed: bool) -> Result<LearnedComments, InferError> {
    // 1. Items and body, counted over every article.
    let texts: Vec<(String, String)> = drawn.iter().map(|d| (page_text(&d.source), page_text(&d.rendered))).collect();
    let mut votes: BTreeMap<(String, Keys, Keys), (usize, usize)> = BTreeMap::new();
    for (a, d) in drawn.iter().enumerate() {
        let (served, shown) = &texts[a];
        for (url, value) in &d.json {
            let mut found = Vec::new();
            arrays(value, &mut Vec::new(), &mut found);
            for (at, items) in found {
                let items: Vec<&Value> = items.iter().collect();
                let mut all = Vec::new();
                with_children(&items, children_key(&items).as_deref(), &mut all);
                let mut fields: BTreeMap<Keys, (usize, usize)> = BTreeMap::new();
                for item in &all {
                    let mut ls = Vec::new();
                    leaves(item, &mut Vec::new(), &mut ls);
                    for (k, v) in ls {
                        let Some(t) = value_text(v).filter(|t| t.chars().count() >= 2) else { continue };
                        let h = head(&t);
                        let e = fields.entry(k).or_default();
                        if shown.contains(h) && !served.contains(h) {
                            e.0 += 1;
                            e.1 += t.len();
                        }
                    }
                }
                for (k, (n, len)) in fields {
                    if n > 0 {
                        let v = votes.entry((endpoint_shape(url), at.clone(), k)).or_default();
                        v.0 += n;
                        v.1 += len;
                    }
                }
            }
        }
    }
    let ((shape, items_at, body), (shown, _)) =
        votes.into_iter().max_by_key(|(k, (n, len))| (*n, *len, std::cmp::Reverse(k.2.len()))).ok_or(InferError::NoText)?;
    let answers: Vec<Answer> = drawn
        .iter()
        .enumerate()
        .flat_map(|(a, d)| d.json.iter().map(move |(u, v)| (a, u, v)))
        .filter(|(_, u, _)| endpoint_shape(u) == shape)
        .filter_map(|(article, url, value)| {
            let items: Vec<&Value> = match get(value, &items_at)? {
                Value::Array(a) => a.iter().collect(),
                _ => return None,
            };
            Some(Answer { article, url, value, comments: Vec::new(), items: items.len() })
        })
        .collect();
    fn items_of<'v>(v: &'v Value, at: &[String]) -> Vec<&'v Value> {
        get(v, at).and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default()
    }
    // 2. Replies inside the items.
    let every_item: Vec<&Value> = answers.iter().flat_map(|a| items_of(a.value, &items_at)).collect();
    let children = children_key(&every_item);
    let answers: Vec<Answer> = answers
        .into_iter()
        .map(|mut a| {
            with_children(&items_of(a.value, &items_at), children.as_deref(), &mut a.comments);
            a
        })
        .collect();
    let comments: Vec<&Value> = answers.iter().flat_map(|a| a.comments.iter().copied()).collect();
    let with_body = comments.iter().filter(|c| get(c, &body).and_then(value_text).is_some_and(|t| !t.is_empty())).count();
    if shown * 2 < with_body {
        return Err(InferError::FewShown { shown, with_body, body: json_path(&body), items: json_path(&items_at) });
    }
    // 3. The other fields.
    let fields = Fields::of(&comments);
    let shown_texts: Vec<&String> = texts.iter().map(|(_, s)| s).collect();
    let rendered: Vec<&str> = drawn.iter().map(|d| d.rendered.as_str()).collect();
    let rendered_docs: Vec<Html> = rendered.iter().map(|r| Html::parse_document(r)).collect();
    let time = fields.time(&body);
    let author = fields.author(&body, time.as_ref(), &shown_texts);
    let id = fields.id(&[Some(&body), time.as_ref(), author.as_ref()], &element_names(&rendered_docs));
    let parent = id.as_ref().and_then(|id| fields.parent(id, &answers));
    let author_url = fields.author_url(&rendered);
    let likes = fields.likes(&rendered_docs);
    let html = comments.iter().filter_map(|c| get(c, &body)?.as_str()).any(looks_html);

    // 4. The URL: the article's part, then the paging.
    let (url, paging) = url_template(drawn, &answers, hashed)?;
    let mut attrs: Vec<(&'static str, String)> = Vec::new();
    match &url.key {
        Key::Thread => {}
        Key::Attr(css) => attrs.push(("key", css.clone())),
        Key::Path { decoded: false } => attrs.push(("key-from", "path".into())),
        Key::Path { decoded: true } => attrs.push(("key-from", "decoded-path".into())),
    }
    if let Some(count) = count_path(&answers, &items_at) {
        attrs.push(("count", count));
    }
    // `first` where it is not the kind's own first value.
    let paged = match &paging {
        Paging::None => None,
        Paging::Page { first, size } => Some(("page", 1, first, size)),
        Paging::Offset { first, size } => Some(("offset", 0, first, size)),
    };
    if let Some((kind, usual, first, size)) = paged {
        attrs.push(("paging", kind.into()));
        if *first != usual {
            attrs.push(("first", first.to_string()));
        }
        if let Some(size) = size {
            attrs.push(("page-size", size.to_string()));
        }
    }
    attrs.push(("items", format!("{}[*]", json_path(&items_at))));
    for (name, path) in [("id", &id), ("author", &author), ("time", &time)] {
        if let Some(p) = path {
            attrs.push((name, json_path(p)));
        }
    }
    attrs.push(("body", json_path(&body)));
    attrs.push(("body-format", if html { "html" } else { "text" }.into()));
    if let Some(p) = &author_url {
        attrs.push(("author-url", json_path(p)));
    }
    if let Some(p) = &parent {
        attrs.push(("parent", json_path(p)));
    }
    if let Some(p) = &likes {
        attrs.push(("likes", json_path(p)));
    }
    if let Some(k) = &children {
        attrs.push(("children", format!("{}[*]", json_path(std::slice::from_ref(k)))));
    }
    let examples = answers.iter().map(|a| format!("{} ({} comments)", a.url, a.comments.len())).take(DRAWN).collect();
    Ok(LearnedComments { attrs, url: url.template, examples, paging_unseen: url.paging_unseen, varying: url.varying })
}

/// Every comment's scalar fields, by path.
struct Fields<'a> {
    comments: usize,
    by_path: BTreeMap<Keys, Vec<&'a Value>>,
}

impl<'a> Fields<'a> {
    fn of(comments: &[&'a Value]) -> Fields<'a> {
        let mut by_path: BTreeMap<Keys, Vec<&Value>> = BTreeMap::new();
        for c in comments {
            let mut ls = Vec::new();
            leaves(c, &mut Vec::new(), &mut ls);
            for (k, v) in ls {
                by_path.entry(k).or_default().push(v);
            }
        }
        Fields { comments: comments.len(), by_path }
    }

    fn present<'b>(values: &'b [&'a Value]) -> impl Iterator<Item = &'a Value> + 'b {
        values.iter().copied().filter(|v| match v {
            Value::Null => false,
            Value::String(s) => !s.trim().is_empty(),
            _ => true,
        })
    }

    /// A field every comment has, read as a time; the most varied, then
    /// the shortest path.
    fn time(&self, body: &Keys) -> Option<Keys> {
        self.by_path
            .iter()
            .filter(|(k, vs)| *k != body && vs.len() == self.comments)
            .filter(|(_, vs)| vs.iter().all(|v| is_time(v)))
            .max_by_key(|(k, vs)| (distinct(vs), std::cmp::Reverse(k.len())))
            .map(|(k, _)| k.clone())
    }

    /// A short text the page shows for most comments that have it: the
    /// most varied such field (a name, not a browser's or a badge's).
    fn author(&self, body: &Keys, time: Option<&Keys>, shown: &[&String]) -> Option<Keys> {
        self.by_path
            .iter()
            .filter(|(k, _)| *k != body && Some(*k) != time)
            .filter_map(|(k, vs)| {
                let texts: Vec<String> = Self::present(vs).filter_map(|v| v.as_str()).map(squash).collect();
                let fits = texts.len() * 2 >= self.comments
                    && texts.iter().all(|t| t.chars().count() <= 60 && !t.contains("://"))
                    && texts.iter().filter(|t| shown.iter().any(|s| s.contains(t.as_str()))).count() * 5 >= texts.len() * 4;
                fits.then(|| (k, texts.iter().collect::<BTreeSet<_>>().len()))
            })
            .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.len())))
            .map(|(k, _)| k.clone())
    }

    /// A field every comment has, different in every two; of several (a
    /// comment's id, its author's where no author wrote twice), the one
    /// the drawn page names its comments' elements by (`id="c12"`,
    /// `id="isso-12"`), then a number before a text, then the shortest path.
    fn id(&self, taken: &[Option<&Keys>], names: &BTreeSet<String>) -> Option<Keys> {
        self.by_path
            .iter()
            .filter(|(k, _)| !taken.contains(&Some(*k)))
            .filter(|(_, vs)| Self::present(vs).count() == self.comments && distinct(vs) == self.comments)
            .filter(|(_, vs)| vs.iter().all(|v| v.is_u64() || v.as_str().is_some_and(|s| s.len() <= 64)))
            .max_by_key(|(k, vs)| {
                let named = vs.iter().filter_map(|v| scalar(v)).filter(|v| names.iter().any(|n| names_id(n, v))).count();
                (named, vs.iter().all(|v| v.is_u64()), std::cmp::Reverse(k.len()), std::cmp::Reverse(*k))
            })
            .map(|(k, _)| k.clone())
    }

    /// A field naming another comment of the same article by its id
    /// wherever it names anything (`null`, `0` and `""` name nothing); the
    /// one naming the most distinct comments.
    fn parent(&self, id: &Keys, answers: &[Answer]) -> Option<Keys> {
        let mut ids_of: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for a in answers {
            ids_of.entry(a.article).or_default().extend(a.comments.iter().filter_map(|c| scalar(get(c, id)?)));
        }
        let mut best: Option<(usize, Keys)> = None;
        for k in self.by_path.keys().filter(|k| *k != id) {
            let mut named = BTreeSet::new();
            let ok = answers.iter().all(|a| {
                a.comments.iter().all(|c| match get(c, k).and_then(scalar) {
                    None => true,
                    Some(s) if s == "0" || s.is_empty() => true,
                    Some(s) => {
                        let known = ids_of.get(&a.article).is_some_and(|ids| ids.contains(&s)) && get(c, id).and_then(scalar) != Some(s.clone());
                        named.insert(s);
                        known
                    }
                })
            });
            if ok && !named.is_empty() && best.as_ref().is_none_or(|(n, _)| named.len() > *n) {
                best = Some((named.len(), k.clone()));
            }
        }
        best.map(|(_, k)| k)
    }

    /// A count of likes: a field every comment has as a whole number,
    /// named for likes or votes (`like`, `likes`, `vote_up`), whose values
    /// the drawn comments show in elements named so. Not where the comment
    /// counts dislikes beside it (Isso's `likes` and `dislikes`): the page
    /// may show their difference as its one number.
    fn likes(&self, rendered: &[Html]) -> Option<Keys> {
        let named = |k: &Keys, down: bool| {
            k.last().is_some_and(|n| {
                let n = n.to_lowercase();
                let against = n.contains("dis") || n.contains("down");
                crate::converse::likes_word(&n) && against == down
            })
        };
        let siblings = |k: &Keys, o: &Keys| o.len() == k.len() && o[..o.len() - 1] == k[..k.len() - 1];
        let shown = shown_likes(rendered);
        self.by_path
            .iter()
            .filter(|(k, vs)| named(k, false) && vs.len() == self.comments && vs.iter().all(|v| v.as_u64().is_some_and(|n| shown.contains(&n))))
            .filter(|(k, _)| !self.by_path.keys().any(|o| siblings(k, o) && named(o, true)))
            .min_by_key(|(k, _)| (k.len(), (*k).clone()))
            .map(|(k, _)| k.clone())
    }

    /// A field of links the page draws (`href`) where a comment has one.
    fn author_url(&self, rendered: &[&str]) -> Option<Keys> {
        self.by_path
            .iter()
            .filter_map(|(k, vs)| {
                let urls: Vec<&str> = Self::present(vs).filter_map(|v| v.as_str()).collect();
                let links = !urls.is_empty() && urls.iter().all(|u| u.starts_with("http://") || u.starts_with("https://"));
                let drawn = urls.iter().filter(|u| rendered.iter().any(|r| r.contains(&format!("href=\"{}\"", u.replace('&', "&amp;"))))).count();
                (links && drawn * 2 >= urls.len() && drawn > 0).then_some((k, drawn))
            })
            .max_by_key(|(k, n)| (*n, std::cmp::Reverse(k.len())))
            .map(|(k, _)| k.clone())
    }
}

/// The counts the drawn pages show in elements named for likes or votes
/// (Waline's `<button class="wl-like">` and its number).
fn shown_likes(rendered: &[Html]) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for doc in rendered {
        for e in doc.root_element().descendants().filter_map(scraper::ElementRef::wrap).filter(|e| crate::converse::likes_named(*e)) {
            if let Some(n) = luntan_core::site::count_of(&crate::select::line_text(e)) {
                out.insert(n);
            }
        }
    }
    out
}

/// A time a comment could have been written at: this century's (a small
/// number reads as a time of 1970, as an id would).
fn is_time(v: &Value) -> bool {
    luntan_core::site::resolve_time(v, 0, 480).and_then(|t| t.get(..4)?.parse::<u32>().ok()).is_some_and(|year| (2000..2100).contains(&year))
}

/// The values of the drawn pages' `id` and `data-*` attributes: what a
/// script names the elements it draws comments in by.
fn element_names(rendered: &[Html]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for doc in rendered {
        for el in doc.root_element().descendants().filter_map(scraper::ElementRef::wrap) {
            for (name, value) in el.value().attrs() {
                if name == "id" || name.starts_with("data-") {
                    out.insert(value.to_owned());
                }
            }
        }
    }
    out
}

/// Whether an element named `name` is named after the id `id`: the id
/// itself, or after a prefix that does not run on into it (`c12`,
/// `isso-12` for 12, not `112`).
fn names_id(name: &str, id: &str) -> bool {
    match name.strip_suffix(id) {
        Some("") => true,
        Some(prefix) => {
            let last = prefix.chars().last().unwrap_or(' ');
            let first = id.chars().next().unwrap_or(' ');
            !(last.is_ascii_digit() && first.is_ascii_digit() || last.is_ascii_alphanumeric() && first.is_ascii_alphabetic())
        }
        None => false,
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn distinct(values: &[&Value]) -> usize {
    values.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>().len()
}

/// Where the article's part of the comment URL comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    Thread,
    /// `css@attr` on the served page.
    Attr(String),
    Path {
        decoded: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Paging {
    None,
    Page { first: u64, size: Option<usize> },
    Offset { first: u64, size: Option<usize> },
}

struct Template {
    template: String,
    key: Key,
    paging_unseen: Option<String>,
    varying: Vec<String>,
}

/// Query parameter names that number a page or say how many a page holds.
const PAGE_PARAMS: [&str; 8] = ["page", "p", "pn", "pageno", "pagenum", "pageindex", "current", "pagenumber"];
const OFFSET_PARAMS: [&str; 4] = ["offset", "start", "skip", "from"];
const SIZE_PARAMS: [&str; 9] = ["limit", "size", "pagesize", "page_size", "per_page", "perpage", "rows", "count", "num"];
/// Query parameter names of a JSONP callback.
const CALLBACK_PARAMS: [&str; 6] = ["callback", "cb", "jsonp", "jsoncallback", "jsonpcallback", "jsonp_callback"];

/// Whether the query pair at `i` is one a script sets anew for every
/// request, which says nothing of what the server answers: a JSONP
/// callback's name (jQuery's `callback=jQuery1124_17…`), or a number too
/// large for a page or an offset (a cache-buster: `_=1701234567890`, a
/// clock's milliseconds or seconds), not the same in every request.
fn varies_per_request(all: &[Vec<Part>], i: usize) -> bool {
    let pairs: Option<Vec<(&str, &str)>> = all
        .iter()
        .map(|p| match p.get(i) {
            Some(Part::Pair { name, value, .. }) => Some((name.as_str(), value.as_str())),
            _ => None,
        })
        .collect();
    let Some(pairs) = pairs.filter(|p| !p.is_empty()) else { return false };
    if pairs.iter().all(|(_, v)| *v == pairs[0].1) {
        return false;
    }
    CALLBACK_PARAMS.contains(&pairs[0].0.to_ascii_lowercase().as_str()) || pairs.iter().all(|(_, v)| v.parse::<u64>().is_ok_and(|n| n >= 1_000_000_000))
}

/// The URL's parts: the path's segments, then the query's pairs, each as
/// sent (raw) and decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Seg(String),
    Pair { name: String, raw: String, value: String },
}

fn parts(url: &Url) -> Vec<Part> {
    let mut out: Vec<Part> = url.path().split('/').map(|s| Part::Seg(s.to_owned())).collect();
    if let Some(q) = url.query() {
        for piece in q.split('&') {
            let (name, raw) = piece.split_once('=').unwrap_or((piece, ""));
            let value = url::form_urlencoded::parse(piece.as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default();
            out.push(Part::Pair { name: name.to_owned(), raw: raw.to_owned(), value });
        }
    }
    out
}

fn part_value(p: &Part) -> String {
    match p {
        Part::Seg(s) => percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned(),
        Part::Pair { value, .. } => value.clone(),
    }
}

/// The ways `value` is the article's: its thread id, an attribute of its
/// served page, its path.
fn keys_for(value: &str, d: &Drawn, hashed: bool) -> Vec<Key> {
    let mut out = Vec::new();
    if value.is_empty() {
        return out;
    }
    if !hashed && d.thread.as_deref() == Some(value) {
        out.push(Key::Thread);
    }
    if value == d.url.path() {
        out.push(Key::Path { decoded: false });
    } else if value == decode_uri(d.url.path()) {
        out.push(Key::Path { decoded: true });
    }
    if value.chars().count() >= 2 {
        let doc = Html::parse_document(&d.source);
        for el in doc.root_element().descendants().filter_map(scraper::ElementRef::wrap) {
            for (name, v) in el.value().attrs() {
                if v != value || matches!(name, "href" | "src" | "content" | "value" | "class" | "id") {
                    continue;
                }
                let css = match el.value().id() {
                    Some(id) if id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') => format!("#{id}@{name}"),
                    _ => format!("{}[{name}]@{name}", el.value().name()),
                };
                let picks = Pick::parse(&css).ok().and_then(|p| {
                    let first = Html::parse_document(&d.source);
                    let el = first.select(&p).next()?;
                    p.attribute_of(el)
                });
                if picks.as_deref() == Some(value) && !out.contains(&Key::Attr(css.clone())) {
                    out.push(Key::Attr(css));
                }
            }
        }
    }
    out
}

/// The endpoint's URL, the article's part and the paging found in it.
fn url_template(drawn: &[Drawn], answers: &[Answer], hashed: bool) -> Result<(Template, Paging), InferError> {
    // The requests of each article, in order.
    let mut asked: BTreeMap<usize, Vec<&Answer>> = BTreeMap::new();
    for a in answers {
        asked.entry(a.article).or_default().push(a);
    }
    let firsts: Vec<(&Drawn, &Answer)> = asked.values().map(|v| (&drawn[v[0].article], v[0])).collect();
    let first_parts: Vec<Vec<Part>> = firsts.iter().map(|(_, a)| parts(a.url)).collect();
    let n = first_parts[0].len();
    if first_parts.iter().any(|p| p.len() != n) {
        return Err(InferError::Shapes(firsts[0].1.url.clone()));
    }
    let all_parts: Vec<Vec<Part>> = answers.iter().map(|a| parts(a.url)).collect();
    let varying: BTreeSet<usize> = (0..n).filter(|&i| varies_per_request(&all_parts, i)).collect();
    // The part that changes from one request of an article to the next.
    let mut paging_at: Option<usize> = None;
    let mut values: Vec<Vec<u64>> = Vec::new();
    for requests in asked.values().filter(|r| r.len() > 1) {
        let ps: Vec<Vec<Part>> = requests.iter().map(|a| parts(a.url)).collect();
        let differs: Vec<usize> = (0..n).filter(|&i| !varying.contains(&i) && ps.iter().any(|p| p.get(i) != ps[0].get(i))).collect();
        if let [i] = differs[..] {
            paging_at.get_or_insert(i);
            if paging_at == Some(i) {
                values.push(ps.iter().filter_map(|p| part_value(&p[i]).parse().ok()).collect());
            }
        }
    }
    // The article's part: the first place every article agrees on.
    let mut key = None;
    for i in (0..n).filter(|&i| Some(i) != paging_at) {
        // An article's own part differs between two articles; one that
        // stays is the endpoint's.
        let values: BTreeSet<String> = first_parts.iter().map(|p| part_value(&p[i])).collect();
        if firsts.len() > 1 && values.len() < 2 {
            continue;
        }
        let kinds: Vec<Vec<Key>> = firsts.iter().zip(&first_parts).map(|((d, _), p)| keys_for(&part_value(&p[i]), d, hashed)).collect();
        let same = |k: &Key| kinds.iter().all(|ks| ks.contains(k));
        if let Some(k) = kinds[0].iter().find(|k| same(k)) {
            key = Some((i, k.clone()));
            break;
        }
    }
    let (key_at, key) = key.ok_or_else(|| InferError::NoKey(firsts[0].1.url.clone()))?;
    // A large number that names the article (a portal's 19-digit id) is its
    // key, not a cache-buster.
    let mut varying = varying;
    varying.remove(&key_at);
    // Paging seen (1, 2, 3 or 0, 10, 20), else a parameter's name says so.
    let named = |i: usize, names: &[&str]| match &first_parts[0][i] {
        Part::Pair { name, value, .. } => names.contains(&name.to_ascii_lowercase().as_str()) && value.parse::<u64>().is_ok(),
        Part::Seg(_) => false,
    };
    let size_param = (0..n).find(|&i| named(i, &SIZE_PARAMS)).and_then(|i| part_value(&first_parts[0][i]).parse::<usize>().ok());
    let full_page = asked.values().filter(|r| r.len() > 1).map(|r| r[0].items).max();
    let size = full_page.or(size_param);
    // A parameter named like a page's is taken for paging no script was
    // seen to use, which [`probe_paging`] tries.
    let seen = paging_at.is_some();
    let paging_at = paging_at.or_else(|| (0..n).find(|&i| i != key_at && (named(i, &PAGE_PARAMS) || named(i, &OFFSET_PARAMS))));
    let paging_unseen = paging_at.filter(|_| !seen).map(|i| match &first_parts[0][i] {
        Part::Pair { raw, .. } => raw.clone(),
        Part::Seg(s) => s.clone(),
    });
    let paging = match paging_at {
        None => Paging::None,
        Some(i) => {
            let first: u64 = part_value(&first_parts[0][i]).parse().map_err(|_| InferError::Paging(firsts[0].1.url.clone()))?;
            let step = values.iter().find(|v| v.len() > 1).map(|v| v[1].saturating_sub(v[0]));
            // Page numbers step by one; offsets by a page's comments.
            let offset = match step {
                Some(1) => false,
                Some(s) if Some(s as usize) == size => true,
                Some(step) => return Err(InferError::Step { url: firsts[0].1.url.clone(), step }),
                None => named(i, &OFFSET_PARAMS),
            };
            if offset {
                Paging::Offset { first, size }
            } else {
                Paging::Page { first, size }
            }
        }
    };
    let placeholder = if key == Key::Thread { "{thread}" } else { "{key}" };
    let url = firsts[0].1.url;
    let mut template = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(p) = url.port() {
        let _ = write!(template, ":{p}");
    }
    let mut query = Vec::new();
    let mut path = Vec::new();
    for (i, p) in first_parts[0].iter().enumerate() {
        let put = if i == key_at {
            Some(placeholder)
        } else if Some(i) == paging_at {
            Some(if matches!(paging, Paging::Offset { .. }) { "{offset}" } else { "{page}" })
        } else {
            None
        };
        match p {
            Part::Seg(s) => path.push(put.map_or_else(|| s.clone(), str::to_owned)),
            Part::Pair { name, raw, .. } => query.push(format!("{name}={}", put.map_or(raw.as_str(), |v| v))),
        }
    }
    template.push_str(&path.join("/"));
    if !query.is_empty() {
        let _ = write!(template, "?{}", query.join("&"));
    }
    let varying = varying
        .into_iter()
        .filter_map(|i| match &first_parts[0][i] {
            Part::Pair { name, .. } => Some(name.clone()),
            Part::Seg(_) => None,
        })
        .collect();
    Ok((Template { template, key, paging_unseen, varying }, paging))
}

/// A number on every article's first page equal to the comments read of
/// that article (replies nested inside included), where an article has some.
fn count_path(answers: &[Answer], items_at: &Keys) -> Option<String> {
    let mut read: BTreeMap<usize, usize> = BTreeMap::new();
    let mut firsts: BTreeMap<usize, &Value> = BTreeMap::new();
    for a in answers {
        *read.entry(a.article).or_insert(0) += a.comments.len();
        firsts.entry(a.article).or_insert(a.value);
    }
    if read.values().all(|&n| n == 0) {
        return None;
    }
    let mut candidates: Option<BTreeSet<Keys>> = None;
    for (article, first) in &firsts {
        let mut ls = Vec::new();
        leaves(first, &mut Vec::new(), &mut ls);
        let fits: BTreeSet<Keys> =
            ls.into_iter().filter(|(k, v)| !k.starts_with(items_at) && v.as_u64() == Some(read[article] as u64)).map(|(k, _)| k).collect();
        candidates = Some(match candidates {
            None => fits,
            Some(c) => c.intersection(&fits).cloned().collect(),
        });
    }
    candidates?.into_iter().min_by_key(|k| k.len()).map(|k| json_path(&k))
}

/// Whether two URLs have one host and port.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}

/// Whether two URLs ask for the same: host, port, path and the query's
/// pairs (how a script wrote them, `+` or `%20`, the pairs' order, is its
/// own), but for the values of the pairs named in `varying`.
fn same_request(a: &Url, b: &Url, varying: &[String]) -> bool {
    let meaning = |u: &Url| {
        let mut pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(name, value)| {
                let value = if varying.iter().any(|v| *v == name) { String::new() } else { value.into_owned() };
                (name.into_owned(), value)
            })
            .collect();
        pairs.sort();
        (u.host_str().map(str::to_owned), u.port(), percent_encoding::percent_decode_str(u.path()).decode_utf8_lossy().into_owned(), pairs)
    };
    meaning(a) == meaning(b)
}

/// Paging no script was seen to use, tried once: the next page of the
/// drawn article with the most comments, asked through a fetcher of the
/// sample's politeness. `Some(true)` when it holds only the first page's
/// comments again (the server does not page so: Isso's `offset=0`
/// without `limit`), `Some(false)` when it holds others or none, `None`
/// when it could not be asked; and the requests sent.
async fn probe_paging(sample: &Sample, learned: &Learned, comments: &LearnedComments, drawn: &[Drawn]) -> (Option<bool>, u64) {
    let Ok(rules) = loaded(learned, comments) else { return (None, 0) };
    let first = rules.endpoint.first_key();
    let fullest = drawn
        .iter()
        .filter_map(|d| {
            let (thread, key, url) = first_asked(&rules, d);
            let url = url?;
            let (_, value) = d.json.iter().find(|(u, _)| same_request(u, &url, &comments.varying))?;
            Some((thread, key, value))
        })
        .max_by_key(|(_, _, v)| rules.endpoint.items(v).len());
    let Some((thread, key, value)) = fullest else { return (None, 0) };
    let items = rules.endpoint.items(value);
    let Some(next) = rules.endpoint.next_key(&first, items.len(), value) else { return (None, 0) };
    let Some(url) = rules.page_url(&thread, key.as_deref(), &next) else { return (None, 0) };
    let Ok(site) = crate::sample::drawing_site(&sample.home, learned.delay, &learned.allow_hosts) else { return (None, 0) };
    let Ok(fetcher) = luntan_crawl::fetch::Fetcher::new(Arc::new(site)) else { return (None, 0) };
    let got = luntan_crawl::protocol::get_json_page(&fetcher, &url).await;
    let requests = fetcher.stats.requests.load(std::sync::atomic::Ordering::Relaxed);
    let Ok(page) = got else { return (None, requests) };
    let mut seen = luntan_core::site::ItemsSeen::default();
    seen.repeats(&items);
    (Some(seen.repeats(&rules.endpoint.items(&page.value))), requests)
}

/// The comment rules of the learned file with `comments`, loaded back.
fn loaded(learned: &Learned, comments: &LearnedComments) -> Result<luntan_core::site::HtmlComments, InferError> {
    let mut with = learned.clone();
    with.comments = Some(comments.clone());
    let site = Site::parse(&with.site_file(), Path::new("learned.xml")).map_err(InferError::Load)?;
    site.comments.ok_or(InferError::NoComments)
}

/// A drawn article's thread id, its key and the first comments URL as
/// `rules` make them.
fn first_asked(rules: &luntan_core::site::HtmlComments, d: &Drawn) -> (String, Option<String>, Option<Url>) {
    let thread = d.thread.clone().unwrap_or_default();
    let key = rules.key_in(&d.url, &d.source);
    let url = rules.page_url(&thread, key.as_deref(), &rules.endpoint.first_key());
    (thread, key, url)
}

/// The learned file, loaded back with the comments, must ask for what each
/// drawn article's script asked for first, and read comments there.
fn verify(learned: &Learned, comments: LearnedComments, drawn: &[Drawn]) -> Result<LearnedComments, InferError> {
    let rules = loaded(learned, &comments)?;
    let mut read = 0;
    for d in drawn {
        let url = first_asked(&rules, d).2.ok_or_else(|| InferError::NoUrl(d.url.clone()))?;
        let Some((asked, value)) = d.json.iter().find(|(u, _)| endpoint_shape(u) == endpoint_shape(&url)) else { continue };
        if !same_request(&url, asked, &comments.varying) {
            return Err(InferError::Asks { page: d.url.clone(), file: Box::new(url), script: Box::new(asked.clone()) });
        }
        read += rules.endpoint.items(value).len();
    }
    if read == 0 {
        return Err(InferError::ReadsNone);
    }
    Ok(comments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drawn(url: &str, thread: &str, source: &str, rendered: &str, json: &[(&str, Value)]) -> Drawn {
        Drawn {
            url: Url::parse(url).unwrap(),
            thread: Some(thread.into()),
            source: source.into(),
            rendered: rendered.into(),
            json: json.iter().map(|(u, v)| (Url::parse(u).unwrap(), v.clone())).collect(),
            off_host: Vec::new(),
        }
    }

    fn attr<'a>(c: &'a LearnedComments, name: &str) -> Option<&'a str> {
        c.attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Isso's answer: replies nested under `replies`, its text HTML, the
    /// thread named by the page's path (double-encoded when Chinese).
    #[test]
    fn an_isso_like_answer_learns_items_fields_and_the_path_key() {
        // Each comment shows its likes less its dislikes.
        let page = |who: &[(&str, &str)]| {
            let mut html = String::from("<html><body><article><h1>标题</h1><p>正文在这里</p></article><section id=isso-thread>");
            for (i, (a, t)) in who.iter().enumerate() {
                let _ = write!(
                    html,
                    "<div class=isso-comment><span class=author>{a}</span><div class=text><p>{t}</p></div><span class=isso-votes>{}</span></div>",
                    u8::from(i == 1)
                );
            }
            html.push_str("</section></body></html>");
            html
        };
        let answer = |base: u64, names: [&str; 3]| {
            serde_json::json!({"id": null, "total_replies": 2, "replies": [
                {"id": base, "parent": null, "text": format!("<p>第一条评论{base}，说得好</p>"), "author": names[0], "website": null,
                 "created": 1_741_165_200.5 + base as f64, "modified": null, "likes": 0, "dislikes": 0, "hash": "abc",
                 "replies": [{"id": base + 1, "parent": base, "text": format!("<p>回复第一条{base}</p>"), "author": names[1], "website": "http://a.example/",
                              "created": 1_741_166_200.5 + base as f64, "modified": null, "likes": 1, "dislikes": 0, "hash": "abc", "replies": []}]},
                {"id": base + 2, "parent": null, "text": format!("<p>第二条评论{base}</p>"), "author": names[2], "website": null,
                 "created": 1_741_167_200.5 + base as f64, "modified": null, "likes": 0, "dislikes": 0, "hash": "def", "replies": []}
            ]})
        };
        let source = "<html><body><article><h1>标题</h1><p>正文在这里</p></article><section id=isso-thread></section><script src=/isso/js/embed.min.js></script></body></html>";
        let article = |path: &str, uri: &str, base: u64, names: [&str; 3]| {
            let shown = [(names[0], format!("第一条评论{base}，说得好")), (names[1], format!("回复第一条{base}")), (names[2], format!("第二条评论{base}"))];
            let shown: Vec<(&str, &str)> = shown.iter().map(|(a, t)| (*a, t.as_str())).collect();
            let api = format!("http://b.test/isso/?uri={uri}&offset=0&nested_limit=5");
            drawn(&format!("http://b.test{path}"), &format!("h{base}"), source, &page(&shown), &[(&api, answer(base, names))])
        };
        let a = article("/2025/03/05/%E4%BA%AC%E5%9F%8E/", "%2F2025%2F03%2F05%2F%25E4%25BA%25AC%25E5%259F%258E%2F", 1, ["甲", "乙", "丙"]);
        let b = article("/2025/03/06/abc/", "%2F2025%2F03%2F06%2Fabc%2F", 10, ["丁", "戊", "己"]);
        let mut c = infer(&[a, b], true).unwrap();
        // `offset=0` reads as paging no script was seen to use: the probe
        // asks, and Isso answering every offset alike takes it out again.
        assert_eq!(c.url, "http://b.test/isso/?uri={key}&offset={offset}&nested_limit=5");
        assert_eq!((attr(&c, "paging"), c.paging_unseen.as_deref()), (Some("offset"), Some("0")));
        c.without_paging();
        assert_eq!(c.url, "http://b.test/isso/?uri={key}&offset=0&nested_limit=5");
        assert_eq!(attr(&c, "key-from"), Some("path"));
        assert_eq!(attr(&c, "items"), Some("$.replies[*]"));
        assert_eq!(attr(&c, "body"), Some("$.text"));
        assert_eq!(attr(&c, "body-format"), Some("html"));
        assert_eq!(attr(&c, "author"), Some("$.author"));
        assert_eq!(attr(&c, "time"), Some("$.created"));
        assert_eq!(attr(&c, "id"), Some("$.id"));
        assert_eq!(attr(&c, "parent"), Some("$.parent"));
        assert_eq!(attr(&c, "children"), Some("$.replies[*]"));
        assert_eq!(attr(&c, "paging"), None);
        assert_eq!(attr(&c, "count"), None, "total_replies counts the top level only");
        assert_eq!(attr(&c, "likes"), None, "the page's one number may be likes less dislikes");
    }

    /// Regression (the real-software bed, Waline): each comment's like
    /// button shows its `like` count; the count was not learned (likes:
    /// not learned, the hand-written file's `$.like` 200/200).
    #[test]
    fn a_count_the_drawn_like_buttons_show_is_learned_as_the_likes() {
        let likes = |base: u64, i: u64| (base + i) % 3;
        let answer = |base: u64| {
            let item = |i: u64, who: &str| {
                serde_json::json!({"objectId": format!("{}", base + i), "nick": who, "comment": format!("<p>第{i}条评论{base}，说得好</p>"),
                                   "time": 1_741_165_200_000u64 + (base + i) * 60_000, "like": likes(base, i), "pid": null, "link": null, "browser": "Chrome131.0"})
            };
            serde_json::json!({"page": 1, "totalPages": 1, "pageSize": 10, "count": 3, "data": [item(0, "甲"), item(1, "乙"), item(2, "丙")]})
        };
        let article = |path: &str, base: u64| {
            let mut rendered = String::from("<html><body><article><h1>标题</h1><p>正文在这里</p></article><div id=waline>");
            for (i, who) in ["甲", "乙", "丙"].iter().enumerate() {
                let i = i as u64;
                let _ = write!(
                    rendered,
                    "<div class=wl-card-item id=\"{}\"><span class=wl-nick>{who}</span><div class=wl-content><p>第{i}条评论{base}，说得好</p></div><button type=button class=wl-like title=喜欢><svg></svg> {}</button></div>",
                    base + i,
                    likes(base, i)
                );
            }
            rendered.push_str("</div></body></html>");
            let source =
                "<html><body><article><h1>标题</h1><p>正文在这里</p></article><div id=waline></div><script src=/waline/waline.umd.js></script></body></html>";
            let api = format!("http://b.test/api/comment?path={}&pageSize=10&page=1", path.replace('/', "%2F"));
            drawn(&format!("http://b.test{path}"), &format!("h{base}"), source, &rendered, &[(&api, answer(base))])
        };
        let c = infer(&[article("/2025/03/05/abc/", 1), article("/2025/03/06/def/", 10)], true).unwrap();
        assert_eq!(attr(&c, "likes"), Some("$.like"), "{:?}", c.attrs);
    }

    /// A news site's box: two articles, the key in an attribute of the
    /// served page, five comments a page asked for page by page, a total on
    /// the first; each request's URL as `ask` makes it of the plain one.
    fn news_box(ask: impl Fn(&str) -> String) -> Vec<Drawn> {
        news_box_keyed(["cms-7", "cms-8"], ask)
    }

    /// [`news_box`] with the articles' keys as given.
    fn news_box_keyed(keys: [&str; 2], ask: impl Fn(&str) -> String) -> Vec<Drawn> {
        let comment = |id: u64, nick: &str| serde_json::json!({"id": id, "user": {"nick": nick, "uid": 900 + id}, "created": 1_733_018_400 + id * 60, "content": format!("评论内容第{id}条\n第二段"), "parent": 0});
        let source = |key: &str| {
            format!("<html><body><article>文章</article><section id=\"comments\" data-thread-key=\"{key}\"></section><script>load()</script></body></html>")
        };
        let shown = |ids: std::ops::RangeInclusive<u64>| {
            let mut s = String::from("<html><body><article>文章</article><section id=comments>");
            for i in ids {
                let _ = write!(s, "<div><b>用户{i}</b><p>评论内容第{i}条</p><p>第二段</p></div>");
            }
            s + "</section></body></html>"
        };
        let page1: Vec<Value> = (1..=5).map(|i| comment(i, &format!("用户{i}"))).collect();
        let page2: Vec<Value> = (6..=7).map(|i| comment(i, &format!("用户{i}"))).collect();
        let a = drawn(
            "http://n.test/news/article/7.html",
            "7",
            &source(keys[0]),
            &shown(1..=7),
            &[
                (&ask(&format!("http://n.test/news/api/comments?key={}&page=1", keys[0])), serde_json::json!({"total": 7, "page_size": 5, "comments": page1})),
                (&ask(&format!("http://n.test/news/api/comments?key={}&page=2", keys[0])), serde_json::json!({"total": 7, "page_size": 5, "comments": page2})),
            ],
        );
        let b = drawn(
            "http://n.test/news/article/8.html",
            "8",
            &source(keys[1]),
            &shown(20..=21),
            &[(
                &ask(&format!("http://n.test/news/api/comments?key={}&page=1", keys[1])),
                serde_json::json!({"total": 2, "page_size": 5, "comments": [comment(20, "用户20"), comment(21, "用户21")]}),
            )],
        );
        vec![a, b]
    }

    #[test]
    fn a_paged_answer_with_the_key_in_an_attribute_learns_page_paging_and_the_count() {
        let c = infer(&news_box(str::to_owned), false).unwrap();
        assert_eq!(c.url, "http://n.test/news/api/comments?key={key}&page={page}");
        assert_eq!(attr(&c, "key"), Some("#comments@data-thread-key"));
        assert_eq!((attr(&c, "paging"), attr(&c, "page-size"), attr(&c, "first")), (Some("page"), Some("5"), None));
        assert_eq!(attr(&c, "count"), Some("$.total"));
        assert_eq!(attr(&c, "author"), Some("$.user.nick"));
        assert_eq!(attr(&c, "body-format"), Some("text"));
        assert_eq!(attr(&c, "parent"), None, "0 names nothing, and nothing else is named");
        assert!(c.varying.is_empty());
    }

    /// The same box asked by JSONP as jQuery asks: a callback named anew
    /// and a cache-buster in every request. Neither is the paging nor the
    /// key; the file sends the first values, and its requests are the
    /// scripts' but for them.
    #[test]
    fn a_jsonp_callback_and_cache_buster_named_anew_each_request_are_neither_paging_nor_key() {
        let nonce = std::cell::Cell::new(1_733_018_400_000_u64);
        let next = || {
            nonce.set(nonce.get() + 1);
            nonce.get()
        };
        let c = infer(&news_box(|u| format!("{u}&callback=jQuery1124009_{}&_={}", next(), next())), false).unwrap();
        assert_eq!(c.url, "http://n.test/news/api/comments?key={key}&page={page}&callback=jQuery1124009_1733018400001&_=1733018400002");
        assert_eq!((attr(&c, "paging"), attr(&c, "page-size")), (Some("page"), Some("5")));
        assert_eq!(attr(&c, "key"), Some("#comments@data-thread-key"));
        assert_eq!(c.varying, ["callback", "_"]);
        let (a, b) = (Url::parse("http://n.test/c?key=1&callback=x1&_=1733018400005").unwrap(), Url::parse("http://n.test/c?_=1&key=1&callback=y2").unwrap());
        assert!(same_request(&a, &b, &c.varying) && !same_request(&a, &b, &[]));
        // A callback every request names alike is the endpoint's own.
        let fixed = infer(&news_box(|u| format!("{u}&callback=newsCb")), false).unwrap();
        assert_eq!(fixed.url, "http://n.test/news/api/comments?key={key}&page={page}&callback=newsCb");
        assert!(fixed.varying.is_empty());
        // A portal's long numeric article id is the key, not a cache-buster.
        let big = infer(&news_box_keyed(["6857412345678901234", "6857412345678905678"], |u| format!("{u}&_={}", next())), false).unwrap();
        assert_eq!(big.url, "http://n.test/news/api/comments?key={key}&page={page}&_=1733018400007");
        assert_eq!(big.varying, ["_"]);
    }

    /// Waline's server on another host than the blog's: its requests were
    /// refused in the drawing, and the hosts are named, each once.
    #[test]
    fn a_comment_server_on_another_host_is_named() {
        let mut a = drawn("http://b.test/a/", "1", "<script></script>", "", &[]);
        a.off_host = [
            "https://waline.example.app/api/comment?path=%2Fa%2F",
            "https://unpkg.com/@waline/emojis/weibo/info.json",
            "https://waline.example.app/api/article",
        ]
        .iter()
        .map(|u| Url::parse(u).unwrap())
        .collect();
        let note = elsewhere(&[a]).unwrap();
        assert!(note.contains("(https://unpkg.com, https://waline.example.app)"), "{note}");
        assert_eq!(elsewhere(&[drawn("http://b.test/a/", "1", "", "", &[])]), None);
    }

    /// The page shows nothing of what the JSON holds: no comments.
    #[test]
    fn json_the_page_does_not_show_teaches_nothing() {
        let a = drawn(
            "http://n.test/a/1.html",
            "1",
            "<html><body><p>正文</p><script></script></body></html>",
            "<html><body><p>正文</p></body></html>",
            &[("http://n.test/api/stats?id=1", serde_json::json!({"views": [{"day": "周一", "n": 5}]}))],
        );
        assert!(infer(&[a], false).is_err());
    }
}
