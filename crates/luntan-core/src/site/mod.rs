//! Site files: one XML file per forum (`data/sites/<id>.xml`) telling luntan
//! how that forum's URLs and templates look. Everything forum-specific lives
//! here, so a new forum needs a site file and no code.
//!
//! Link patterns are regular expressions searched in the absolute URL (as the
//! `url` crate serializes it, so non-ASCII path segments appear
//! percent-encoded). They capture ids with named groups; `{board}`,
//! `{thread}` and `{page}` are shorthands for the usual groups. Selectors are
//! CSS. See the README for a full example.
//!
//! This module holds the public types. A file is read into its raw serde
//! form (`raw`), checked and compiled into a [`Site`] (`validate`), and every
//! error is placed on its line (`locate`).

mod answer;
mod browser;
mod hybrid;
mod json;
mod locate;
mod media;
mod raw;
mod validate;

pub use answer::read_json;
pub use browser::{Action, BrowserRules};
pub use hybrid::{decode_uri, CommentKey, HtmlComments};
pub use json::{field_count, field_text, resolve_time, BodyFormat, Endpoint, FoundUsers, ItemsSeen, JsonConversation, JsonRules, PageKey, Paging, UserRules};
pub use media::{MediaRules, DEFAULT_MEDIA_MAX_BYTES};

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use scraper::Selector;
use url::Url;

use crate::ids::{BoardId, IdError, SiteId, ThreadId};
use locate::Ctx;
use raw::RawSite;

/// A site file that could not be read or is not valid.
///
/// Displays as `path: line N: field: what is wrong`, the one line the binaries print.
#[derive(Debug, thiserror::Error)]
#[error("{}: line {line}: {field}: {message}", path.display())]
pub struct SiteError {
    pub path: PathBuf,
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// A forum, as its site file describes it (validated and compiled).
#[derive(Debug, Clone)]
pub struct Site {
    /// Names the forum's directory under `data/pages` and its index.
    pub id: SiteId,
    /// Display name.
    pub name: String,
    pub home: Url,
    /// A fixed encoding that overrides detection (for forums known to lie).
    pub encoding: Option<&'static encoding_rs::Encoding>,
    pub politeness: Politeness,
    /// Most list pages read per board in one round.
    pub max_board_pages: u32,
    pub links: Links,
    pub list: Option<ListRules>,
    pub thread: ThreadRules,
    /// Hosts besides the home URL's host whose links may be followed.
    pub allow_hosts: HashSet<String>,
    /// How later rounds save requests (S1).
    pub incremental: Incremental,
    /// Topic focus (S2): only thread links scoring at least the threshold are queued.
    pub focus: Option<Focus>,
    /// The forum's own search, for keyword monitoring (S0).
    pub search: Option<SearchRules>,
    /// Forum accounts keyword monitoring logs in with: one worker each.
    pub accounts: Vec<Account>,
    /// Protocol mode (S4): the forum is read through its JSON endpoints,
    /// not its HTML pages (see [`JsonRules`]).
    pub json: Option<JsonRules>,
    /// Browser mode (S4): pages are loaded and driven in Chromium, and the
    /// DOM states they reach are read as the pages (see [`BrowserRules`]).
    pub browser: Option<BrowserRules>,
    /// A hybrid site: each HTML thread's comments come as JSON from the
    /// endpoint this names (see [`HtmlComments`]).
    pub comments: Option<HtmlComments>,
    /// What `luntan-media` archives of the threads' pictures and
    /// attachments; `None` (no `<media>`): nothing.
    pub media: Option<MediaRules>,
    /// The file it came from.
    pub path: PathBuf,
}

/// How hard luntan may press on one forum.
#[derive(Debug, Clone, PartialEq)]
pub struct Politeness {
    /// Least time between the starts of two requests to the forum.
    pub delay: Duration,
    /// Most requests in flight to the forum at once.
    pub concurrency: usize,
    pub timeout: Duration,
    /// Retries after a transient failure (5xx, 429, timeout, reset).
    pub retries: u32,
    /// Cap on one response body, raw and decompressed.
    pub max_body_bytes: u64,
    pub robots: bool,
    pub user_agent: String,
}

impl Default for Politeness {
    fn default() -> Self {
        Politeness {
            delay: Duration::from_millis(1000),
            concurrency: 2,
            timeout: Duration::from_secs(30),
            retries: 4,
            max_body_bytes: 8 << 20,
            robots: true,
            user_agent: format!("luntan/{} (+forum archiver)", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Incremental rounds (S1): board lists are newest-first, so a round stops
/// paging a board after `stop_after` consecutive rows that are known and
/// unchanged; each board is revisited on an adaptive interval (Nutch's
/// AdaptiveFetchSchedule): shorter after a round that found news, longer
/// after one that did not, within bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Incremental {
    pub stop_after: u32,
    pub initial_interval: Duration,
    pub min_interval: Duration,
    pub max_interval: Duration,
}

impl Default for Incremental {
    fn default() -> Self {
        Incremental {
            stop_after: 10,
            initial_interval: Duration::from_secs(3600),
            min_interval: Duration::from_secs(300),
            max_interval: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

impl Incremental {
    /// The next interval after a visit that did (or did not) find news.
    pub fn next_interval(&self, current: Duration, found_news: bool) -> Duration {
        // Nutch's default rates: 20 % shorter on change, 20 % longer without.
        let next = if found_news { current.mul_f64(0.8) } else { current.mul_f64(1.2) };
        next.clamp(self.min_interval, self.max_interval.max(self.min_interval))
    }
}

/// Focused crawling (S2). A thread link's relevance is
/// `Q = alpha·url(i) + (1 − alpha)·cos(anchor words, topic words)`, where
/// `url(i)` is 1 when the URL contains a topic word; links below
/// `threshold` are recorded with their score instead of queued.
#[derive(Debug, Clone, PartialEq)]
pub struct Focus {
    pub alpha: f64,
    pub threshold: f64,
    /// Topic keywords, as written (segmented by the crawler).
    pub topics: Vec<String>,
    /// Extra words that mark a URL as on-topic (`club.life.…`, `kaoyan`).
    pub url_words: Vec<String>,
}

/// The forum's own search (S0): where a keyword's first result page is,
/// how later pages are reached (a `{page}` in the URL, or the result page's
/// next-page link), where each result sits on a page, and how to tell a
/// results page from a "no results" page and from a "busy, try again" page.
#[derive(Debug, Clone)]
pub struct SearchRules {
    /// Absolute (resolved against the home URL), with `{keyword}` and,
    /// when pages are templated, `{page}`.
    pub url: String,
    /// The encoding the keyword is percent-encoded in (GBK forums want GBK).
    pub encoding: &'static encoding_rs::Encoding,
    /// One element per result.
    pub row: Selector,
    /// The result's post time inside a row.
    pub time: Selector,
    /// The next-page link of a result page. When set, only the first page
    /// comes from `url`; later ones follow the link, since forums like
    /// Discuz! page through a server-side search id, and a templated page
    /// number would start a new search for every page.
    pub next: Option<Selector>,
    /// The `page` value of the first result page.
    pub first_page: u64,
    /// Most result pages read per keyword in one round: S0's 30.
    pub max_pages: u32,
    /// Least time between two searches one account starts (forums refuse
    /// faster ones: Discuz! guests get one search per 10 s).
    pub interval: Duration,
    /// A "too many searches, try again" page: luntan waits and asks again.
    pub busy: Option<PageMatcher>,
    /// How long to wait after a busy page before asking again.
    pub busy_wait: Duration,
    /// A "no results" page, which ends a keyword's results. Any other page
    /// without result rows is an error, never taken for "nothing new".
    pub empty: PageMatcher,
}

/// Recognises a kind of page: an element (`selector`), a regular expression
/// over the text (`pattern`), or both (the pattern searched in the
/// selected elements' text).
#[derive(Debug, Clone)]
pub struct PageMatcher {
    pub selector: Option<Selector>,
    pub pattern: Option<Regex>,
}

/// How common forum software words an empty result, used when a site file
/// has no `<empty>`: Discuz!, phpBB (both scripts and English) and others.
pub const DEFAULT_EMPTY_PATTERN: &str = r"(?i)没有找到|沒有找到|找不到|无结果|無結果|没有符合|沒有符合|no suitable matches|no results|nothing found";

impl PageMatcher {
    /// Whether `doc` is such a page.
    pub fn matches(&self, doc: &scraper::Html) -> bool {
        let text_matches = |text: String| self.pattern.as_ref().is_none_or(|p| p.is_match(&text));
        match &self.selector {
            Some(sel) => doc.select(sel).any(|el| text_matches(el.text().collect())),
            None => text_matches(doc.root_element().text().collect()),
        }
    }
}

impl SearchRules {
    /// The URL of one result page (`page` counted from 1); with no `{page}`
    /// in the template, only page 1 has a URL.
    pub fn page_url(&self, keyword: &str, page: u32) -> Option<Url> {
        if !self.url.contains("{page}") && page > 1 {
            return None;
        }
        let kw = percent_encode_in(keyword, self.encoding);
        let page = self.first_page + u64::from(page.max(1)) - 1;
        Url::parse(&self.url.replace("{keyword}", &kw).replace("{page}", &page.to_string())).ok()
    }
}

/// `text` in `encoding`, every byte outside RFC 3986's unreserved set
/// percent-encoded: how a form in a GBK or Big5 page submits it.
pub fn percent_encode_in(text: &str, encoding: &'static encoding_rs::Encoding) -> String {
    const RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    let (bytes, _, _) = encoding.encode(text);
    percent_encoding::percent_encode(&bytes, RESERVED).to_string()
}

/// A forum account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Names the account in logs and reports (default: `account1`, …).
    pub name: String,
    pub auth: AccountAuth,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountAuth {
    /// A `Cookie` header value copied from a logged-in browser (`a=1; b=2`).
    Cookie(String),
    /// A login form: its fields are posted to `url`; the cookies it sets are kept.
    Login { url: Url, fields: Vec<(String, String)> },
}

/// The URL patterns of one forum.
#[derive(Debug, Clone)]
pub struct Links {
    /// A board's first list page; must capture `board`.
    pub board: LinkPattern,
    /// Whether board links met past the home page are followed.
    pub follow: Option<BoardFollow>,
    /// A board's later list pages; captures `board` and `page`.
    pub board_page: Option<LinkPattern>,
    /// A thread's first page; must capture `thread` (and may capture `board`).
    pub thread: LinkPattern,
    /// `<thread add-query="…">`: what is added to a thread's URL when its
    /// first page is asked for ([`Links::thread_request`]).
    pub thread_query: Option<AddQuery>,
    /// A thread's later pages; captures `thread` and `page`.
    pub thread_page: Option<LinkPattern>,
}

impl Links {
    /// The URL a thread's first page is asked for at: the one lists link
    /// (the thread's stored URL), with `add-query`'s parameters added.
    pub fn thread_request(&self, url: &Url) -> Url {
        match &self.thread_query {
            Some(q) => q.apply(url),
            None => url.clone(),
        }
    }
}

/// `<thread add-query="…">`: parameters added to a thread's URL when it is
/// asked for, the thread still known by the URL lists link. HyperKitty
/// serves a thread's replies in the page only at `?noscript` (otherwise a
/// script loads them); print views (`&action=printable`, `&view=print`)
/// hold every post on one page. Written as a query string (`noscript`,
/// `view=print&pp=100`), kept as written: its escapes are the site's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddQuery {
    parts: Vec<String>,
}

impl AddQuery {
    /// The parts of a checked query string (see `validate`).
    pub(crate) fn new(parts: Vec<String>) -> AddQuery {
        AddQuery { parts }
    }

    /// `url` with every part its query does not hold yet added last.
    pub fn apply(&self, url: &Url) -> Url {
        let held: Vec<&str> = url.query().map(|q| q.split('&').collect()).unwrap_or_default();
        let added: Vec<&str> = self.parts.iter().map(String::as_str).filter(|p| !held.contains(p)).collect();
        if added.is_empty() {
            return url.clone();
        }
        let mut out = url.clone();
        let query = match url.query().filter(|q| !q.is_empty()) {
            Some(q) => format!("{q}&{}", added.join("&")),
            None => added.join("&"),
        };
        out.set_query(Some(&query));
        out
    }
}

impl std::fmt::Display for AddQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.parts.join("&"))
    }
}

/// Boards met beyond the home page (`<board depth="…" max="…">`): a
/// sub-forum listed on its parent's page, a microblog user met in a
/// timeline or under a post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardFollow {
    /// Hops from the home page's boards: board links on a board's list
    /// pages are one hop further. Boards met on thread pages (download
    /// records them) and in earlier rounds count as one hop.
    pub depth: u32,
    /// Boards read in one round, the home page's first.
    pub max: usize,
}

/// `max` when a `<board depth>` gives none.
pub const DEFAULT_MAX_BOARDS: usize = 1000;

/// One compiled link pattern.
#[derive(Debug, Clone)]
pub struct LinkPattern {
    pub regex: Regex,
    /// The `page` value that denotes the first page (1 for page numbers, 0 for offsets).
    pub first_page: u64,
    /// Groups whose captured value is a slug, made an id by [`slug_id`](crate::ids::slug_id).
    pub hashed: Hashed,
}

/// `<links hashed="…">`: the groups whose captured value names a board or
/// thread only by a slug (any bytes, percent-encoded Chinese, any length),
/// so luntan makes the id from it ([`crate::ids::slug_id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hashed {
    pub board: bool,
    pub thread: bool,
}

/// What a link pattern captured from a URL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkMatch {
    pub board: Option<BoardId>,
    pub thread: Option<ThreadId>,
    pub page: Option<u64>,
}

impl LinkPattern {
    /// The captures if `url` matches; `None` when it does not match or a
    /// captured value is not a usable id (see [`crate::ids`]) or page number.
    pub fn captures(&self, url: &str) -> Option<Result<LinkMatch, IdError>> {
        let caps = self.regex.captures(url)?;
        fn grab<T: std::str::FromStr<Err = IdError>>(caps: &regex::Captures, name: &str, hashed: bool) -> Result<Option<T>, IdError> {
            caps.name(name)
                .map(|m| match hashed {
                    true if m.is_empty() => Err(IdError::new("", "empty")),
                    true => crate::ids::slug_id(m.as_str()).parse(),
                    false => m.as_str().parse(),
                })
                .transpose()
        }
        let page = match caps.name("page") {
            Some(m) => match m.as_str().parse::<u64>() {
                Ok(p) => Some(p),
                Err(_) => return Some(Err(IdError::new(m.as_str(), "page is not a whole number"))),
            },
            None => None,
        };
        Some((|| Ok(LinkMatch { board: grab(&caps, "board", self.hashed.board)?, thread: grab(&caps, "thread", self.hashed.thread)?, page }))())
    }

    /// `url` as the thread (or board) it names: query parameters that begin
    /// after the end of the pattern's match are dropped, so a link that
    /// carries where it was found (`&highlight=…` from a search,
    /// `&extra=page%3D2` from a list, a session id) is stored once, as the
    /// page itself. A pattern anchored with `$` keeps the URL whole, except
    /// for what a group named `context` matched: a parameter that varies
    /// with where the link was found and may sit anywhere, written
    /// precisely (`tid={thread}(?P<context>&fpage=[0-9]+)?$`).
    pub fn canonical(&self, url: &Url) -> Url {
        if let Some(c) = self.regex.captures(url.as_str()).and_then(|c| c.name("context")).filter(|c| !c.is_empty()) {
            let s = url.as_str();
            let mut cut = format!("{}{}", &s[..c.start()], &s[c.end()..]);
            // `?a=1&b=2` less its first parameter leaves `?&b=2`.
            if let Some(q) = cut.find("?&") {
                cut.replace_range(q + 1..q + 2, "");
            }
            if let Ok(u) = Url::parse(cut.trim_end_matches('?')) {
                return self.open_end(&u);
            }
        }
        self.open_end(url)
    }

    /// [`LinkPattern::canonical`]'s dropping of the parameters after the match.
    fn open_end(&self, url: &Url) -> Url {
        let s = url.as_str();
        let (Some(m), Some(q)) = (self.regex.find(s), s.find('?')) else { return url.clone() };
        let query_end = s.find('#').unwrap_or(s.len());
        let mut kept = Vec::new();
        let mut at = q + 1;
        for part in s[q + 1..query_end].split('&') {
            if at < m.end() && !part.is_empty() {
                kept.push(part);
            }
            at += part.len() + 1;
        }
        if kept.len() == s[q + 1..query_end].split('&').count() {
            return url.clone();
        }
        let mut out = url.clone();
        out.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
        out
    }

    /// Whether a captured page value means "the first page".
    pub fn is_first(&self, page: Option<u64>) -> bool {
        page.is_none_or(|p| p <= self.first_page)
    }
}

/// A field's selector and where its value is: the element's text, or with
/// `css@attr` (`span.timeago@title`, `a.user@data-username`) the value of
/// that attribute of the element the selector picks. Dereferences to the
/// selector, so code that only finds the element reads it as one.
#[derive(Debug, Clone)]
pub struct Pick {
    pub sel: Selector,
    pub attr: Option<String>,
}

impl std::ops::Deref for Pick {
    type Target = Selector;

    fn deref(&self) -> &Selector {
        &self.sel
    }
}

/// A selector a site file gives that is no CSS selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad CSS selector {css:?}: {why}")]
pub struct BadSelector {
    pub css: String,
    pub why: String,
}

impl Pick {
    /// Reads `css` or `css@attr`. The `@` counts only outside brackets and
    /// quotes and before a plain attribute name, so `a[href*="@"]` stays CSS.
    pub fn parse(text: &str) -> Result<Pick, BadSelector> {
        let (css, attr) = split_attr(text.trim());
        let sel = Selector::parse(css).map_err(|e| BadSelector { css: css.to_owned(), why: e.to_string() })?;
        Ok(Pick { sel, attr: attr.map(str::to_owned) })
    }

    /// For `css@attr`, `el`'s value of that attribute, white space folded
    /// (empty when `el` has none); `None` for a field read from text. The
    /// one reading extract's and discover's fields share.
    pub fn attribute_of(&self, el: scraper::ElementRef) -> Option<String> {
        let a = self.attr.as_deref()?;
        Some(el.value().attr(a).map(|v| v.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default())
    }
}

/// `css@attr` → (`css`, `attr`); anything else → (text, None).
fn split_attr(text: &str) -> (&str, Option<&str>) {
    let Some(at) = text.rfind('@') else { return (text, None) };
    let (css, name) = (text[..at].trim_end(), &text[at + 1..]);
    let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    let (mut depth, mut quote) = (0i32, None);
    for c in css.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(') => depth += 1,
            (None, ']' | ')') => depth -= 1,
            _ => {}
        }
    }
    if name_ok && depth == 0 && quote.is_none() && !css.is_empty() {
        (css, Some(name))
    } else {
        (text, None)
    }
}

/// Where a board list page keeps its thread rows (optional: without it every
/// thread link on the page counts, with its anchor text as title).
#[derive(Debug, Clone)]
pub struct ListRules {
    /// One element per thread row.
    pub row: Selector,
    /// The title inside a row (default: the thread link's text).
    pub title: Option<Pick>,
    /// The reply count inside a row.
    pub replies: Option<Pick>,
    /// The last post's time inside a row.
    pub last_post: Option<Pick>,
}

/// Where a thread page keeps its title and posts.
#[derive(Debug, Clone, Default)]
pub struct ThreadRules {
    /// The thread title (default: the page's `<title>`).
    pub title: Option<Pick>,
    /// `title="first-post"`: the page names no thread (a microblog post), so
    /// the thread is named by its first post's first words, as protocol
    /// mode names it.
    pub title_from_first_post: bool,
    /// One element per post; author, time and body are looked up inside it.
    /// Without it, bodies are taken page-wide and paired with authors and
    /// times by order.
    pub post: Option<Selector>,
    /// `post="auto"` (then `post` is `None`): the posts are found as the
    /// page's repeated sibling subtrees (S4's template-based extraction),
    /// and body, author, time and floor are optional: given, they are
    /// looked up inside each found post; absent, they are found too.
    pub auto_posts: bool,
    /// `nested-posts="true"`: a post may hold its replies, each a match of
    /// `post` inside it (a comment widget's tree). Every match is then a
    /// post of its own, read without the replies inside it, in page order,
    /// each reply after the post that holds it and answering it.
    pub nested_posts: bool,
    /// The post body, as a CSS selector.
    pub body: Option<Selector>,
    /// The post body, as a pattern over element ids (S3's "content flag",
    /// Discuz!: `postmessage_\d+`). One of `body`/`body_id` is required.
    pub body_id: Option<Regex>,
    pub author: Option<Pick>,
    pub time: Option<Pick>,
    /// The floor number shown on the post (default: position in the thread).
    pub floor: Option<Pick>,
    /// Elements removed from a body before its text is taken (quotes, signatures).
    pub strip: Option<Selector>,
    /// Where a body quotes another post (`quote="div.quote"` and its
    /// `quote-*` attributes): held apart from the post's own paragraphs.
    pub quote: Option<QuoteRules>,
    /// Version 2's fields: post and author ids, edits, counts, links and
    /// images, the board's name (see [`Conversation`]).
    pub conversation: Conversation,
    /// `time-zone`, minutes east of UTC: the wall clock relative times
    /// ("3分钟前", "昨天 12:30") are read in, against the clock of the page's
    /// fetch when it was kept (`article<T>.fetched`, written in browser
    /// mode). Default +08:00.
    pub utc_offset_minutes: i32,
    /// `time-format`: how the forum writes its times where no usual shape
    /// reads them (`%d/%m/%Y %H:%M`), for every time its pages show.
    pub time_format: Option<&'static crate::dates::TimeFormat>,
}

impl ThreadRules {
    /// The forum's wall clock, `now` the page's fetch time where it was kept.
    pub fn clock(&self, now: Option<time::PrimitiveDateTime>) -> crate::dates::Clock {
        crate::dates::Clock::new(self.utc_offset_minutes, now).with_format(self.time_format)
    }
}

/// `<thread quote=… quote-head=… quote-intro=… quote-of=…
/// quote-of-pattern=… quote-author=… quote-author-pattern=…>`: a quote
/// inside a post body.
#[derive(Debug, Clone)]
pub struct QuoteRules {
    /// The quote elements inside a body; the outermost of nested matches.
    pub select: Selector,
    /// Inside a quote, what names it ("小明 发表于 …" and its link) rather
    /// than what it quotes: left out of the quoted text.
    pub head: Option<Selector>,
    /// Before a quote, what introduces it: the element just before it,
    /// where it matches (FlaskBB's "小明 wrote:", NodeBB's "@小明 said in
    /// [标题](/post/53):", a paragraph of the reply's markup). Neither the
    /// reply's words nor the quote's; a quote that has one reads `of` and
    /// `author` in it (the intro itself first, then inside it), not inside
    /// the quote, where a quoted quote's intro names another post.
    pub intro: Option<Selector>,
    /// The quoted post's id: the first match inside the quote (else inside
    /// its intro), read as [`Pick`] says, then cut by `of_pattern`
    /// ([`QuoteRules::capture`]).
    pub of: Option<Pick>,
    pub of_pattern: Option<Regex>,
    /// The quoted author, likewise.
    pub author: Option<Pick>,
    pub author_pattern: Option<Regex>,
}

impl QuoteRules {
    /// The first of `pattern`'s groups that took part in matching `value`
    /// (its whole match when none did), or the trimmed value without a
    /// pattern; none when empty or not matched. The first that took part,
    /// not group 1: a pattern of alternatives, one per way a page words
    /// it (`^(.+?) 于|, (.+?) 写道:$`), captures in each.
    pub fn capture(pattern: Option<&Regex>, value: &str) -> Option<String> {
        let got = match pattern {
            None => value.trim().to_owned(),
            Some(re) => {
                let c = re.captures(value)?;
                c.iter().skip(1).flatten().next().or_else(|| c.get(0))?.as_str().trim().to_owned()
            }
        };
        (!got.is_empty()).then_some(got)
    }
}

/// A field that names a value, read as [`Pick`] says and then cut by an
/// optional `-pattern` (`post-id="table[id^=pid]@id"
/// post-id-pattern="pid(\d+)"`): the first of the pattern's groups that
/// took part, or its whole match, is the value; unmatched or empty, the
/// field is absent.
#[derive(Debug, Clone)]
pub struct Field {
    pub pick: Pick,
    pub pattern: Option<Regex>,
}

impl Field {
    /// The value in `shown` (the element's text or attribute), as
    /// [`QuoteRules::capture`] cuts it.
    pub fn capture(&self, shown: &str) -> Option<String> {
        QuoteRules::capture(self.pattern.as_ref(), shown)
    }

    /// The value read as a count (`1,234`, `1.2k`, `3万`); none when it
    /// is not one.
    pub fn count(&self, shown: &str) -> Option<u64> {
        count_of(&self.capture(shown)?)
    }
}

/// A count as forums show it: digits with thousands separators, or a
/// number scaled by `k`, `w`/`万`, `m` (`1.2k` is 1200, `3.5万` 35000).
/// None for anything else, and for what a `u64` cannot hold.
pub fn count_of(shown: &str) -> Option<u64> {
    let s: String = shown.trim().chars().filter(|c| *c != ',' && *c != '，').collect();
    let end = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (number, unit) = s.split_at(end);
    let scale: u64 = match unit.trim() {
        "" => 1,
        "k" | "K" | "千" => 1_000,
        "w" | "W" | "万" | "萬" => 10_000,
        "m" | "M" => 1_000_000,
        _ => return None,
    };
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(scale);
    }
    let n = (number.parse::<f64>().ok()? * scale as f64).round();
    (n.is_finite() && n >= 0.0 && n < u64::MAX as f64).then_some(n as u64)
}

/// `<thread>`'s attributes for version 2 of the thread XML, each optional.
/// Per post (looked up inside the post element, the post element itself
/// included, or paired by order when there is no `post` selector):
/// `post-id`, `author-id`, `author-url`, `reply-to`, `edited`, `likes`,
/// `location`, each a [`Field`] with its `-pattern`. In a post's own text
/// (outside quotes and `strip`): `links` and `images`, the elements that
/// are links and pictures, their URL in `href`/`src` unless `@attr` names
/// another attribute (Discuz!'s lazy `img@file`). Per page (the first page
/// that shows them): `board-name`, `thread-replies`, `thread-views`.
/// Extract resolves URLs against the thread's URL and the page's `<base>`.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub post_id: Option<Field>,
    pub author_id: Option<Field>,
    pub author_url: Option<Field>,
    pub reply_to: Option<Field>,
    pub edited: Option<Field>,
    pub likes: Option<Field>,
    pub location: Option<Field>,
    pub links: Option<Pick>,
    pub images: Option<Pick>,
    pub board_name: Option<Field>,
    pub thread_replies: Option<Field>,
    pub thread_views: Option<Field>,
}

impl Conversation {
    /// Whether the site file asks for none of them (a version-1 file).
    pub fn is_empty(&self) -> bool {
        self.named().next().is_none()
    }

    /// The attribute names of the fields given, in the order documented.
    pub fn named(&self) -> impl Iterator<Item = &'static str> + '_ {
        let given = [("links", self.links.is_some()), ("images", self.images.is_some())];
        let thread = [("board-name", &self.board_name), ("thread-replies", &self.thread_replies), ("thread-views", &self.thread_views)];
        self.post_fields()
            .filter(|(_, f)| f.is_some())
            .map(|(name, _)| name)
            .chain(given.into_iter().filter(|(_, g)| *g).map(|(name, _)| name))
            .chain(thread.into_iter().filter(|(_, f)| f.is_some()).map(|(name, _)| name))
    }

    /// The per-post fields with their attribute names.
    pub fn post_fields(&self) -> impl Iterator<Item = (&'static str, Option<&Field>)> {
        [
            ("post-id", self.post_id.as_ref()),
            ("author-id", self.author_id.as_ref()),
            ("author-url", self.author_url.as_ref()),
            ("reply-to", self.reply_to.as_ref()),
            ("edited", self.edited.as_ref()),
            ("likes", self.likes.as_ref()),
            ("location", self.location.as_ref()),
        ]
        .into_iter()
    }
}

// ---------------------------------------------------------------- loading

impl Site {
    /// Reads and validates one site file.
    pub fn load(path: &Path) -> Result<Site, SiteError> {
        let text = std::fs::read_to_string(path).map_err(|e| SiteError { path: path.to_owned(), line: 0, field: "file".into(), message: e.to_string() })?;
        Site::parse(&text, path)
    }

    /// Validates site-file text; `path` is only used in messages and to default nothing else.
    pub fn parse(text: &str, path: &Path) -> Result<Site, SiteError> {
        let ctx = Ctx { text, path };
        RawSite::read(&ctx)?.validate(&ctx)
    }

    /// Loads every `*.xml` under `dir`, sorted by file name. Bad files come
    /// back as errors beside the good ones, so one broken file stops nothing else.
    pub fn load_dir(dir: &Path) -> std::io::Result<Vec<Result<Site, SiteError>>> {
        let mut paths: Vec<PathBuf> =
            std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "xml")).collect();
        paths.sort();
        Ok(paths.iter().map(|p| Site::load(p)).collect())
    }

    /// Loads the site files of a data directory: all of them, or only the one
    /// whose id is `only`. Broken files come back as errors beside the good
    /// sites so the caller can report each in one line and go on.
    pub fn load_all(sites_dir: &Path, only: Option<&str>) -> (Vec<Site>, Vec<SiteError>) {
        let results = match Site::load_dir(sites_dir) {
            Ok(r) => r,
            Err(e) => {
                let err = SiteError { path: sites_dir.to_owned(), line: 0, field: "directory".into(), message: e.to_string() };
                return (Vec::new(), vec![err]);
            }
        };
        let (mut sites, mut errors) = (Vec::<Site>::new(), Vec::new());
        for r in results {
            match r {
                Ok(site) if sites.iter().any(|s| s.id == site.id) => errors.push(SiteError {
                    line: 1,
                    field: "id".into(),
                    message: format!(
                        "id {:?} is already used by {}",
                        site.id,
                        sites.iter().find(|s| s.id == site.id).map(|s| s.path.display().to_string()).unwrap_or_default()
                    ),
                    path: site.path,
                }),
                Ok(site) => sites.push(site),
                Err(e) => errors.push(e),
            }
        }
        if let Some(id) = only {
            sites.retain(|s| s.id == id);
            // A broken file matters only if it might have been the one asked for.
            errors.retain(|e| e.path.file_stem().is_some_and(|stem| stem == id));
            if sites.is_empty() && errors.is_empty() {
                errors.push(SiteError {
                    path: sites_dir.join(format!("{id}.xml")),
                    line: 0,
                    field: "site".into(),
                    message: format!("no site file has id {id:?}"),
                });
            }
        }
        (sites, errors)
    }

    /// Whether links to `url` may be followed: same host as home, or allowed.
    pub fn host_allowed(&self, url: &Url) -> bool {
        match (url.host_str(), self.home.host_str()) {
            (Some(h), Some(home)) => {
                (h.eq_ignore_ascii_case(home) && url.port_or_known_default() == self.home.port_or_known_default())
                    || self.allow_hosts.contains(&h.to_ascii_lowercase())
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The file every submodule's tests vary.
    pub(crate) const DISCUZ: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<site id="dz">
  <name>清水河畔</name>
  <home>http://127.0.0.1:8080/dz/forum.php</home>
  <encoding>gbk</encoding>
  <politeness delay-ms="100" concurrency="3"/>
  <max-board-pages>5</max-board-pages>
  <links>
    <board><![CDATA[forum\.php\?mod=forumdisplay&fid={board}$]]></board>
    <board-page><![CDATA[forum\.php\?mod=forumdisplay&fid={board}&page={page}]]></board-page>
    <thread><![CDATA[forum\.php\?mod=viewthread&tid={thread}$]]></thread>
    <thread-page><![CDATA[forum\.php\?mod=viewthread&tid={thread}&page={page}]]></thread-page>
  </links>
  <list row="tbody[id^=normalthread_]" title="a.xst" replies="td.num a"/>
  <thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
          author="a.xw1" time="em[id^=authorposton]"/>
</site>
"##;

    #[test]
    fn a_pattern_of_alternatives_captures_the_group_that_took_part() {
        let re = Regex::new(r"^(.+?) 于|^.*[\s,](.+?) 写道:$").unwrap();
        let capture = |v: &str| QuoteRules::capture(Some(&re), v);
        assert_eq!(capture("张伟 于2026年9月1日周二 19:42写道：").as_deref(), Some("张伟"));
        assert_eq!(capture("在 2026/9/1 19:42, 李娜 写道:").as_deref(), Some("李娜"), "the second group, the first not taking part");
        assert_eq!(capture("无关的一行"), None);
        let whole = Regex::new(r"(x)?\d+").unwrap();
        assert_eq!(QuoteRules::capture(Some(&whole), "pid 42").as_deref(), Some("42"), "no group took part: the whole match");
        assert_eq!(QuoteRules::capture(None, "  小明 "), Some("小明".into()));
    }

    /// DISCUZ with `extra` before `<links>`, where the optional settings go.
    pub(super) fn discuz_with(extra: &str) -> String {
        DISCUZ.replace("<links>", &format!("{extra}\n  <links>"))
    }

    pub(super) fn parse(text: &str) -> Result<Site, SiteError> {
        Site::parse(text, Path::new("data/sites/x.xml"))
    }

    #[test]
    fn a_field_reads_an_attribute_after_an_at_sign() {
        use scraper::selector::ToCss;
        let site = parse(&DISCUZ.replace(r#"time="em[id^=authorposton]""#, r#"time="span.timeago @title" floor="a[href*='@x']""#)).unwrap();
        let time = site.thread.time.as_ref().unwrap();
        assert_eq!((time.sel.to_css_string().as_str(), time.attr.as_deref()), ("span.timeago", Some("title")));
        let floor = site.thread.floor.as_ref().unwrap();
        assert_eq!(floor.attr, None, "an @ inside brackets is CSS");
        let list = parse(&DISCUZ.replace(r#"replies="td.num a""#, r#"replies="td.num@data-count""#)).unwrap().list.unwrap();
        assert_eq!(list.replies.unwrap().attr.as_deref(), Some("data-count"));
        for bad in [r#"time="@title""#, r#"time="span@""#, r#"time="span@1x""#] {
            let e = parse(&DISCUZ.replace(r#"time="em[id^=authorposton]""#, bad)).unwrap_err();
            assert!(e.to_string().contains("time: bad CSS selector"), "{bad}: {e}");
        }
    }

    #[test]
    fn load_all_keeps_good_sites_beside_broken_ones() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("dz.xml"), DISCUZ).unwrap();
        std::fs::write(t.path().join("bad.xml"), DISCUZ.replace("</name>", "</nam>")).unwrap();
        std::fs::write(t.path().join("notes.txt"), "ignored").unwrap();
        let (sites, errors) = Site::load_all(t.path(), None);
        assert_eq!(sites.len(), 1);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("bad.xml: line 3: xml:"), "{}", errors[0]);
        let (sites, errors) = Site::load_all(t.path(), Some("dz"));
        assert_eq!((sites.len(), errors.len()), (1, 0));
        let (sites, errors) = Site::load_all(t.path(), Some("nope"));
        assert_eq!(sites.len(), 0);
        assert!(errors[0].to_string().contains("no site file has id \"nope\""), "{}", errors[0]);
    }

    #[test]
    fn incremental_settings_and_the_adaptive_interval() {
        let s = parse(&discuz_with(r#"<incremental stop-after="5" interval-minutes="30" min-interval-minutes="10" max-interval-hours="1"/>"#)).unwrap();
        let inc = &s.incremental;
        assert_eq!(inc.stop_after, 5);
        assert_eq!(inc.initial_interval, Duration::from_secs(1800));
        let shorter = inc.next_interval(inc.initial_interval, true);
        let longer = inc.next_interval(inc.initial_interval, false);
        assert!(shorter < inc.initial_interval && longer > inc.initial_interval);
        assert_eq!(inc.next_interval(Duration::from_secs(600), true), Duration::from_secs(600), "bounded below");
        assert_eq!(inc.next_interval(Duration::from_secs(3600), false), Duration::from_secs(3600), "bounded above");
        let e = parse(&discuz_with(r#"<incremental stop-after="0"/>"#)).unwrap_err();
        assert_eq!(e.field, "stop-after");
    }

    #[test]
    fn a_search_paged_by_its_next_link_with_busy_and_empty_pages() {
        let s = parse(&discuz_with(
            r#"<search row="li.pbw" time="span.time" next="div.pg a.nxt" interval-ms="10000">
    <url><![CDATA[search.php?mod=forum&srchtxt={keyword}&searchsubmit=yes]]></url>
    <busy>只能进行一次搜索</busy>
    <empty selector="p.emp"/>
  </search>"#,
        ))
        .unwrap();
        let sr = s.search.as_ref().unwrap();
        assert_eq!(sr.page_url("考研", 1).unwrap().as_str(), "http://127.0.0.1:8080/dz/search.php?mod=forum&srchtxt=%BF%BC%D1%D0&searchsubmit=yes");
        assert_eq!(sr.page_url("考研", 2), None, "later pages come from the next link");
        assert_eq!((sr.interval, sr.busy_wait), (Duration::from_secs(10), Duration::from_secs(10)));
        let page = |html: &str| scraper::Html::parse_document(html);
        let busy = sr.busy.as_ref().unwrap();
        assert!(busy.matches(&page("<div class=alert_error>抱歉，您在 10 秒内只能进行一次搜索</div>")));
        assert!(!busy.matches(&page("<p class=emp>没有找到匹配结果</p>")));
        assert!(sr.empty.matches(&page("<p class=emp>没有找到匹配结果</p>")));
        assert!(!sr.empty.matches(&page("<p>没有找到匹配结果</p>")), "the selector is required");

        // Without <empty>, the wording of common forum software.
        let s = parse(&discuz_with(r#"<search row="li" time="span"><url>s?q={keyword}&amp;p={page}</url></search>"#)).unwrap();
        let sr = s.search.as_ref().unwrap();
        assert!(sr.empty.matches(&page("<p>对不起，没有找到匹配结果。</p>")));
        assert!(sr.empty.matches(&page("<p>No suitable matches were found.</p>")));
        assert!(!sr.empty.matches(&page("<p>抱歉，您在 10 秒内只能进行一次搜索</p>")));
        assert_eq!(sr.busy_wait, Duration::from_secs(10));

        let e = parse(&discuz_with(r#"<search row="li" time="span" next="a.nxt"><url>s?q={keyword}</url><busy/></search>"#)).unwrap_err();
        assert_eq!(e.field, "busy");
        let e = parse(&discuz_with(r#"<search row="li" time="span" next="a.nxt"><url>s?q={keyword}</url><empty>(</empty></search>"#)).unwrap_err();
        assert!(e.message.contains("bad pattern"), "{e}");
    }

    #[test]
    fn parameters_after_a_match_are_dropped_from_the_canonical_url() {
        let s = parse(&DISCUZ.replace(r"viewthread&tid={thread}$", r"viewthread&tid={thread}")).unwrap();
        let t = &s.links.thread;
        let canon = |u: &str| t.canonical(&Url::parse(u).unwrap()).to_string();
        let home = "http://127.0.0.1:8080/dz/forum.php";
        assert_eq!(canon(&format!("{home}?mod=viewthread&tid=22&highlight=%BF%BC")), format!("{home}?mod=viewthread&tid=22"));
        assert_eq!(canon(&format!("{home}?mod=viewthread&tid=22&extra=page%3D2&page=3")), format!("{home}?mod=viewthread&tid=22"));
        assert_eq!(canon(&format!("{home}?mod=viewthread&tid=22")), format!("{home}?mod=viewthread&tid=22"));
        // Anchored patterns match the whole URL: nothing is dropped.
        let anchored = parse(DISCUZ).unwrap();
        let u = Url::parse(&format!("{home}?mod=viewthread&tid=22")).unwrap();
        assert_eq!(anchored.links.thread.canonical(&u), u);
        // A pattern ending in the path drops the whole query.
        let p = parse(&DISCUZ.replace(r"forum\.php\?mod=viewthread&tid={thread}$", r"thread-{thread}-1-1\.html")).unwrap();
        let u = Url::parse("http://127.0.0.1:8080/dz/thread-9-1-1.html?from=search&kw=x").unwrap();
        assert_eq!(p.links.thread.canonical(&u).as_str(), "http://127.0.0.1:8080/dz/thread-9-1-1.html");
        // A `context` group is dropped wherever it is, and only it.
        let c = parse(&DISCUZ.replace(r"viewthread&tid={thread}$", r"viewthread(?P<context>&from=[a-z]+)?&tid={thread}(?P<context2>)$")).unwrap();
        let c2 = parse(&DISCUZ.replace(r"viewthread&tid={thread}$", r"viewthread&tid={thread}(?P<context>&fpage=[0-9]+)?$")).unwrap();
        let canon2 = |u: &str| c2.links.thread.canonical(&Url::parse(u).unwrap()).to_string();
        assert_eq!(canon2(&format!("{home}?mod=viewthread&tid=22&fpage=3")), format!("{home}?mod=viewthread&tid=22"));
        assert_eq!(canon2(&format!("{home}?mod=viewthread&tid=22")), format!("{home}?mod=viewthread&tid=22"));
        assert!(c2.links.thread.captures(&format!("{home}?mod=viewthread&tid=22&uid=5")).is_none(), "precise: other parameters do not match");
        let canon1 = |u: &str| c.links.thread.canonical(&Url::parse(u).unwrap()).to_string();
        assert_eq!(canon1(&format!("{home}?mod=viewthread&from=list&tid=22")), format!("{home}?mod=viewthread&tid=22"));
    }

    #[test]
    fn hosts_are_checked_with_port() {
        let s = parse(DISCUZ).unwrap();
        assert!(s.host_allowed(&Url::parse("http://127.0.0.1:8080/x").unwrap()));
        assert!(!s.host_allowed(&Url::parse("http://127.0.0.1:9090/x").unwrap()));
        assert!(!s.host_allowed(&Url::parse("http://evil.example/x").unwrap()));
    }
}
