//! Protocol mode (S4): a forum or microblog whose pages are drawn by
//! JavaScript from JSON is described by its JSON endpoints instead of its
//! HTML. `<json>` in a site file names a list endpoint (a board, a user's
//! timeline, search results), optionally a thread endpoint (the post itself)
//! and a comments endpoint, each a URL template with its paging, and the
//! JSONPath (RFC 9535, `serde_json_path`) of every field. A board is a list
//! (for a microblog: a user), a post with its comments is a thread, so the
//! state machine and the page tree stay as they are. A post endpoint's
//! [`JsonConversation`] paths say who wrote each item (by id), what it answers
//! (`parent`) and which replies it carries nested (`children`), for the
//! thread XML's version 2.
//!
//! ```xml
//! <json time-zone="+08:00">
//!   <seed>1001</seed>
//!   <list paging="cursor" next="$.data.cursor" items="$.data.statuses[*]" id="$.id"
//!         replies="$.comments_count" time="$.created_at"><![CDATA[api/timeline?uid={board}&cursor={cursor}]]></list>
//!   <thread items="$.data" author="$.user.screen_name" time="$.created_at" body="$.text"
//!           body-format="html"><![CDATA[api/show?id={thread}]]></thread>
//!   <comments paging="cursor" next="$.data.max_id" items="$.data.comments[*]" author="$.user.screen_name"
//!             time="$.created_at" body="$.text" body-format="html" id="$.id" author-id="$.user.id"
//!             children="$.comments[*]" likes="$.like_count"><![CDATA[api/comments?id={thread}&max_id={cursor}]]></comments>
//!   <users max="40" depth="2" followers="1" activity="0.5">
//!     <found id="$.id" followers="$.followers_count" activity="$.statuses_count">$..user</found>
//!     <link><![CDATA[/u/{board}]]></link>
//!   </users>
//! </json>
//! ```

use regex::Regex;
use serde_json_path::JsonPath;
use url::Url;

use super::locate::Ctx;
use super::raw::{RawEndpoint, RawJson, RawUsers};
use super::{Hashed, LinkPattern, Links, SiteError};

/// A site's JSON endpoints.
#[derive(Debug, Clone)]
pub struct JsonRules {
    /// Boards (users) every round starts from, in the site file's order.
    pub seeds: Vec<crate::ids::BoardId>,
    /// Minutes east of UTC of the forum's wall clock: epoch times are
    /// shown in it, and relative ones ("昨天 12:30") are read in it.
    pub utc_offset_minutes: i32,
    /// A board's (a user's) rows, newest first.
    pub list: Endpoint,
    /// Page 1 of a thread: the post itself.
    pub thread: Option<Endpoint>,
    /// Later pages of a thread: its comments, oldest first.
    pub comments: Option<Endpoint>,
    /// User-centric crawling: users found in responses join the boards.
    pub users: Option<UserRules>,
}

/// How an endpoint's pages follow each other.
#[derive(Debug, Clone)]
pub enum Paging {
    /// One page.
    None,
    /// `{page}` counts pages from `first`.
    Page { first: u64 },
    /// `{offset}` counts items from `first`, stepping by each page's items.
    Offset { first: u64 },
    /// `{cursor}` is `first` on page 1, then what the `next` path finds in
    /// the page before; none, `null`, `0` or `""` ends the pages.
    Cursor { first: String, next: JsonPath },
}

/// What a body field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Html,
    Text,
}

/// One JSON endpoint: where it is, how it pages, where its fields are.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Absolute, with `{board}` or `{thread}` and the paging placeholder.
    pub url: String,
    pub paging: Paging,
    /// A page with fewer items than this is the last (page and offset paging).
    pub page_size: Option<usize>,
    pub max_pages: u32,
    /// The items of a page (rows, posts, comments); each field path below
    /// is read inside one item.
    pub items: JsonPath,
    pub id: Option<JsonPath>,
    pub title: Option<JsonPath>,
    pub author: Option<JsonPath>,
    pub time: Option<JsonPath>,
    pub body: Option<JsonPath>,
    pub body_format: BodyFormat,
    pub floor: Option<JsonPath>,
    /// A count of replies: on a list, the thread's (which later rounds
    /// compare to notice new comments); on a post endpoint, the post's.
    pub replies: Option<JsonPath>,
    /// The post's conversation (thread XML version 2); none on a list.
    pub conversation: JsonConversation,
    /// The element these rules came from, for messages (`json/comments`).
    pub element: &'static str,
}

/// Where a post endpoint's items say who wrote them, what they answer and
/// how they were received; each path is read inside one item, and each is
/// optional.
#[derive(Debug, Clone, Default)]
pub struct JsonConversation {
    /// The author's id on the forum (a uid).
    pub author_id: Option<JsonPath>,
    /// The author's profile page, joined to the site's home when relative.
    pub author_url: Option<JsonPath>,
    /// The id of the item this one answers (`parent`, `to_pid`); `0`, `""`
    /// and `null` answer no one.
    pub parent: Option<JsonPath>,
    /// The item's replies nested inside it (`$.replies[*]`), items of the
    /// same shape, which may hold replies of their own: each comes right
    /// after the item it is inside, depth first, answering it unless its
    /// own `parent` says otherwise.
    pub children: Option<JsonPath>,
    pub likes: Option<JsonPath>,
    /// The location label (`ip_location`), as the forum gives it.
    pub location: Option<JsonPath>,
    /// When the item was last edited, read as `time` is.
    pub edited: Option<JsonPath>,
}

/// Which users join the crawl and in what order (S4's user discovery).
#[derive(Debug, Clone)]
pub struct UserRules {
    pub found: Vec<FoundUsers>,
    /// A user link inside a body (an @mention): captures `board`.
    pub link: Option<Regex>,
    /// Most users (boards) one round reads, seeds included.
    pub max_users: usize,
    /// Most hops from a seed.
    pub max_depth: u32,
    /// Score weights: `followers·ln(1+followers) + activity·ln(1+posts) + times seen`.
    pub weight_followers: f64,
    pub weight_activity: f64,
}

/// Users inside a response: `path` selects user objects anywhere in a
/// page, the others are read inside each.
#[derive(Debug, Clone)]
pub struct FoundUsers {
    pub path: JsonPath,
    pub id: JsonPath,
    pub name: Option<JsonPath>,
    pub followers: Option<JsonPath>,
    pub activity: Option<JsonPath>,
}

/// The value a page's paging placeholder takes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PageKey {
    Number(u64),
    Cursor(String),
}

impl Endpoint {
    /// The URL of one page of `id`'s (a board's or a thread's) list.
    pub fn page_url(&self, id: &str, key: &PageKey) -> Option<Url> {
        let placeholder = if self.url.contains("{board}") { "{board}" } else { "{thread}" };
        let mut url = self.url.replace(placeholder, id);
        url = match (&self.paging, key) {
            (Paging::Page { .. }, PageKey::Number(n)) => url.replace("{page}", &n.to_string()),
            (Paging::Offset { .. }, PageKey::Number(n)) => url.replace("{offset}", &n.to_string()),
            (Paging::Cursor { .. }, PageKey::Cursor(c)) => url.replace("{cursor}", &percent_encoding::utf8_percent_encode(c, CURSOR).to_string()),
            (Paging::None, _) => url,
            _ => return None,
        };
        Url::parse(&url).ok()
    }

    /// The key of page 1.
    pub fn first_key(&self) -> PageKey {
        match &self.paging {
            Paging::None => PageKey::Number(1),
            Paging::Page { first } | Paging::Offset { first } => PageKey::Number(*first),
            Paging::Cursor { first, .. } => PageKey::Cursor(first.clone()),
        }
    }

    /// The key of the page after the one with `key`, which held `items`
    /// items and read `page`; `None` when it was the last.
    pub fn next_key(&self, key: &PageKey, items: usize, page: &serde_json::Value) -> Option<PageKey> {
        let short = items == 0 || self.page_size.is_some_and(|n| items < n);
        match (&self.paging, key) {
            (Paging::None, _) => None,
            (Paging::Page { .. }, PageKey::Number(n)) if !short => Some(PageKey::Number(n + 1)),
            (Paging::Offset { .. }, PageKey::Number(n)) if !short => Some(PageKey::Number(n + items as u64)),
            (Paging::Cursor { next, .. }, _) => match next.query(page).first()? {
                serde_json::Value::String(s) if !s.is_empty() && s != "0" => Some(PageKey::Cursor(s.clone())),
                serde_json::Value::Number(n) if n.as_f64() != Some(0.0) => Some(PageKey::Cursor(n.to_string())),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The items met on the earlier pages of one walk of an endpoint. A server
/// that ignores the paging parameter (Isso without `limit`) answers every
/// page alike, and offset or page paging would ask again up to `max-pages`
/// times: a page whose items were all met before ends the walk.
#[derive(Debug, Default)]
pub struct ItemsSeen(std::collections::HashSet<String>);

impl ItemsSeen {
    /// Whether `items` is a page of items all met before; records them.
    pub fn repeats(&mut self, items: &[&serde_json::Value]) -> bool {
        let mut any_new = false;
        for item in items {
            any_new |= self.0.insert(item.to_string());
        }
        !items.is_empty() && !any_new
    }
}

impl Endpoint {
    /// The items of one page, in order.
    pub fn items<'a>(&self, page: &'a serde_json::Value) -> Vec<&'a serde_json::Value> {
        self.items.query(page).all()
    }
}

/// The first value `path` finds in `item`, as text: strings as they are,
/// numbers and booleans as JSON writes them; `None` for nothing, `null`,
/// arrays and objects.
pub fn field_text(item: &serde_json::Value, path: &JsonPath) -> Option<String> {
    match path.query(item).first()? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The first value `path` finds in `item` as a count: a whole number, or
/// text as forums show counts (`"1,024"`, `"1.2万"`, `"3k"`, read by
/// [`super::count_of`] as HTML counts are); `None` for anything else,
/// negative numbers included.
pub fn field_count(item: &serde_json::Value, path: &JsonPath) -> Option<u64> {
    super::count_of(&field_text(item, path)?)
}

/// A time field as the forum's local wall-clock time (`YYYY-MM-DDTHH:MM:SS`):
/// a number (or a string of digits) is Unix time, in milliseconds when it
/// is too large for seconds; text is read by [`crate::dates::Clock::read`]
/// (an ISO time with a zone moved to the site's), relative forms against `fetched` (Unix seconds, the server's clock when
/// the page was fetched) in the site's zone.
pub fn resolve_time(value: &serde_json::Value, fetched: i64, utc_offset_minutes: i32) -> Option<String> {
    let epoch = |n: i64| {
        // Seconds reach 1e11 only in the year 5138; milliseconds pass it in 1973.
        let secs = if n.abs() >= 100_000_000_000 { n / 1000 } else { n };
        crate::dates::epoch_to_local(secs, utc_offset_minutes)
    };
    match value {
        serde_json::Value::Number(n) => epoch(n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))?),
        serde_json::Value::String(s) if !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit()) => epoch(s.trim().parse().ok()?),
        serde_json::Value::String(s) => crate::dates::Clock::new(utc_offset_minutes, crate::dates::local_clock(fetched, utc_offset_minutes)).read(s),
        _ => None,
    }
}

/// Cursors are opaque: everything but unreserved characters is escaped.
const CURSOR: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

// ------------------------------------------------------------ validation

pub(super) fn json(ctx: &Ctx, raw: &RawJson, home: &Url) -> Result<JsonRules, SiteError> {
    let utc_offset_minutes = match raw.time_zone.as_deref().map(str::trim) {
        None | Some("") => 480,
        Some(tz) => offset(tz).ok_or_else(|| ctx.err("json@time-zone", format!("{tz:?} is not an offset such as +08:00")))?,
    };
    let mut seeds = Vec::new();
    for s in &raw.seed {
        seeds.push(crate::ids::BoardId::parse(s.trim()).map_err(|e| ctx.err("json/seed", e.to_string()))?);
    }
    let list = endpoint(ctx, "json/list", &raw.list, home, "{board}")?;
    if list.id.is_none() {
        return Err(ctx.err("json/list", "needs an `id` path: rows are known by their thread id"));
    }
    if let Some(attr) = list.conversation.named().first() {
        return Err(ctx.err(&format!("json/list@{attr}"), "a list's rows are threads, not posts: give it on <thread> or <comments>"));
    }
    let thread = raw.thread.as_ref().map(|t| endpoint(ctx, "json/thread", t, home, "{thread}")).transpose()?;
    let comments = raw.comments.as_ref().map(|t| endpoint(ctx, "json/comments", t, home, "{thread}")).transpose()?;
    if thread.is_none() && comments.is_none() {
        return Err(ctx.err("json", "needs a <thread> or a <comments> endpoint: where a thread's posts are"));
    }
    for (e, at) in [(&thread, "json/thread"), (&comments, "json/comments")] {
        if e.as_ref().is_some_and(|e| e.body.is_none()) {
            return Err(ctx.err(at, "needs a `body` path"));
        }
    }
    let users = raw.users.as_ref().map(|u| users(ctx, u, home)).transpose()?;
    if seeds.is_empty() {
        return Err(ctx.err("json", "needs at least one <seed> board (for a microblog: a user id)"));
    }
    Ok(JsonRules { seeds, utc_offset_minutes, list, thread, comments, users })
}

/// `+08:00`, `-0530`, `UTC`.
pub(super) fn offset(tz: &str) -> Option<i32> {
    if tz.eq_ignore_ascii_case("utc") || tz == "Z" {
        return Some(0);
    }
    let (sign, rest) = match tz.as_bytes().first()? {
        b'+' => (1, &tz[1..]),
        b'-' => (-1, &tz[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m) = (digits[..2].parse::<i32>().ok()?, digits[2..].parse::<i32>().ok()?);
    (h <= 14 && m < 60).then_some(sign * (h * 60 + m))
}

fn path(ctx: &Ctx, at: &str, raw: &str) -> Result<JsonPath, SiteError> {
    JsonPath::parse(raw.trim()).map_err(|e| ctx.err(at, format!("bad JSONPath {:?}: {e}", raw.trim())))
}

fn opt_path(ctx: &Ctx, at: &str, raw: &Option<String>) -> Result<Option<JsonPath>, SiteError> {
    raw.as_deref().map(|r| path(ctx, at, r)).transpose()
}

pub(super) fn endpoint(ctx: &Ctx, element: &'static str, raw: &RawEndpoint, home: &Url, id_placeholder: &str) -> Result<Endpoint, SiteError> {
    let at = |attr: &str| format!("{element}@{attr}");
    let template = raw.url.trim();
    if !template.contains(id_placeholder) {
        return Err(ctx.err(element, format!("the url needs {id_placeholder}")));
    }
    let paging = match raw.paging.as_deref().map(str::trim) {
        None | Some("none") => Paging::None,
        Some(kind @ ("page" | "offset")) => {
            let default = if kind == "page" { 1 } else { 0 };
            let first = match raw.first.as_deref().map(str::trim) {
                None => default,
                Some(f) => f.parse().map_err(|_| ctx.err(&at("first"), format!("{f:?} is not a whole number")))?,
            };
            if kind == "page" {
                Paging::Page { first }
            } else {
                Paging::Offset { first }
            }
        }
        Some("cursor") => {
            let next = raw.next.as_deref().ok_or_else(|| ctx.err(element, "cursor paging needs a `next` path (where a page names the next cursor)"))?;
            Paging::Cursor { first: raw.first.clone().unwrap_or_default(), next: path(ctx, &at("next"), next)? }
        }
        Some(other) => return Err(ctx.err(&at("paging"), format!("{other:?} is not none, page, offset or cursor"))),
    };
    let placeholder = match &paging {
        Paging::None => None,
        Paging::Page { .. } => Some("{page}"),
        Paging::Offset { .. } => Some("{offset}"),
        Paging::Cursor { .. } => Some("{cursor}"),
    };
    if let Some(p) = placeholder {
        if !template.contains(p) {
            return Err(ctx.err(element, format!("the url needs {p} for its paging")));
        }
    }
    if let Some(stray) = stray_placeholder(template, id_placeholder, placeholder) {
        return Err(ctx.err(
            element,
            format!("the url's {stray} has no value here: it may hold {id_placeholder}{}", placeholder.map_or(String::new(), |p| format!(" and {p}"))),
        ));
    }
    // Braces are not URL characters: join with stand-ins, then put the placeholders back.
    const HOLES: [(&str, &str); 5] =
        [("{board}", "LUNTANBOARD"), ("{thread}", "LUNTANTHREAD"), ("{page}", "LUNTANPAGE"), ("{offset}", "LUNTANOFFSET"), ("{cursor}", "LUNTANCURSOR")];
    let stood_in = HOLES.iter().fold(template.to_owned(), |t, (p, s)| t.replace(p, s));
    let joined = home.join(&stood_in).map_err(|e| ctx.err(element, format!("not a URL: {e}")))?;
    let url = HOLES.iter().fold(joined.as_str().to_owned(), |t, (p, s)| t.replace(s, p));
    let body_format = match raw.body_format.as_deref().map(str::trim) {
        None | Some("html") => BodyFormat::Html,
        Some("text") => BodyFormat::Text,
        Some(other) => return Err(ctx.err(&at("body-format"), format!("{other:?} is not html or text"))),
    };
    let max_pages = raw.max_pages.unwrap_or(100);
    if max_pages == 0 {
        return Err(ctx.err(&at("max-pages"), "must be at least 1"));
    }
    if raw.page_size == Some(0) {
        return Err(ctx.err(&at("page-size"), "must be at least 1"));
    }
    Ok(Endpoint {
        url,
        paging,
        page_size: raw.page_size,
        max_pages,
        items: path(ctx, &at("items"), raw.items.as_deref().unwrap_or("$"))?,
        id: opt_path(ctx, &at("id"), &raw.id)?,
        title: opt_path(ctx, &at("title"), &raw.title)?,
        author: opt_path(ctx, &at("author"), &raw.author)?,
        time: opt_path(ctx, &at("time"), &raw.time)?,
        body: opt_path(ctx, &at("body"), &raw.body)?,
        body_format,
        floor: opt_path(ctx, &at("floor"), &raw.floor)?,
        replies: opt_path(ctx, &at("replies"), &raw.replies)?,
        conversation: conversation(ctx, element, raw)?,
        element,
    })
}

fn conversation(ctx: &Ctx, element: &str, raw: &RawEndpoint) -> Result<JsonConversation, SiteError> {
    let at = |attr: &str| format!("{element}@{attr}");
    let c = JsonConversation {
        author_id: opt_path(ctx, &at("author-id"), &raw.author_id)?,
        author_url: opt_path(ctx, &at("author-url"), &raw.author_url)?,
        parent: opt_path(ctx, &at("parent"), &raw.parent)?,
        children: opt_path(ctx, &at("children"), &raw.children)?,
        likes: opt_path(ctx, &at("likes"), &raw.likes)?,
        location: opt_path(ctx, &at("location"), &raw.location)?,
        edited: opt_path(ctx, &at("edited"), &raw.edited)?,
    };
    // A reply names what it answers by id: without the items' own ids
    // `reply-to` would point at nothing in the thread.
    for (attr, given) in [("children", c.children.is_some()), ("parent", c.parent.is_some())] {
        if given && raw.id.is_none() {
            return Err(ctx.err(&at(attr), "needs an `id` path too: a reply names the comment it answers by its id"));
        }
    }
    Ok(c)
}

impl JsonConversation {
    /// The attributes given, as the site file names them.
    pub fn named(&self) -> Vec<&'static str> {
        let all = [
            ("author-id", &self.author_id),
            ("author-url", &self.author_url),
            ("parent", &self.parent),
            ("children", &self.children),
            ("likes", &self.likes),
            ("location", &self.location),
            ("edited", &self.edited),
        ];
        all.into_iter().filter(|(_, p)| p.is_some()).map(|(n, _)| n).collect()
    }
}

/// The first of luntan's placeholders in `template` that an endpoint with
/// this id and paging placeholder gives no value (a `{board}` in a thread's
/// endpoint, a `{page}` without paging): it would reach the server as
/// `%7Bpage%7D`. Other braces are the URL's own (`filter={"a":1}`).
fn stray_placeholder(template: &str, id: &str, paging: Option<&str>) -> Option<&'static str> {
    ["{board}", "{thread}", "{page}", "{offset}", "{cursor}"].into_iter().find(|p| *p != id && Some(*p) != paging && template.contains(p))
}

fn users(ctx: &Ctx, raw: &RawUsers, home: &Url) -> Result<UserRules, SiteError> {
    let mut found = Vec::new();
    for f in &raw.found {
        found.push(FoundUsers {
            path: path(ctx, "json/users/found", &f.path)?,
            id: path(ctx, "json/users/found@id", &f.id)?,
            name: opt_path(ctx, "json/users/found@name", &f.name)?,
            followers: opt_path(ctx, "json/users/found@followers", &f.followers)?,
            activity: opt_path(ctx, "json/users/found@activity", &f.activity)?,
        });
    }
    let link = match raw.link.as_deref().map(str::trim) {
        None => None,
        Some(l) => {
            let re = Regex::new(&super::validate::name_once(l, "{board}", r"(?P<board>[0-9A-Za-z_-]+)", r"[0-9A-Za-z_-]+"))
                .map_err(|e| ctx.err("json/users/link", format!("bad regular expression: {}", e.to_string().lines().last().unwrap_or("").trim())))?;
            if !re.capture_names().any(|n| n == Some("board")) {
                return Err(ctx.err("json/users/link", "must capture board ({board})"));
            }
            Some(re)
        }
    };
    if found.is_empty() && link.is_none() {
        return Err(ctx.err("json/users", "needs a <found> path or a <link> pattern: where users are found"));
    }
    let _ = home;
    let weight = |at: &str, w: Option<f64>| match w {
        None => Ok(1.0),
        Some(w) if w.is_finite() && w >= 0.0 => Ok(w),
        Some(w) => Err(ctx.err(at, format!("{w} is not a weight of 0 or more"))),
    };
    let max_users = raw.max.unwrap_or(100);
    if max_users == 0 {
        return Err(ctx.err("json/users@max", "must be at least 1"));
    }
    Ok(UserRules {
        found,
        link,
        max_users,
        max_depth: raw.depth.unwrap_or(2),
        weight_followers: weight("json/users@followers", raw.followers)?,
        weight_activity: weight("json/users@activity", raw.activity)?,
    })
}

/// `<links>` for a JSON site without one: patterns derived from the URL
/// templates, so a list or thread URL still names its board or thread.
pub(super) fn derived_links(ctx: &Ctx, rules: &JsonRules) -> Result<Links, SiteError> {
    let pattern = |element: &str, template: &str| {
        let regex = Regex::new(&format!("^{}$", template_pattern(template)))
            .map_err(|e| ctx.err(element, format!("its url makes no pattern: {}", e.to_string().lines().last().unwrap_or("").trim())))?;
        Ok::<_, SiteError>(LinkPattern { regex, first_page: 1, hashed: Hashed::default() })
    };
    let thread = rules.thread.as_ref().or(rules.comments.as_ref()).unwrap_or(&rules.list);
    Ok(Links {
        board: pattern(rules.list.element, &rules.list.url)?,
        follow: None,
        board_page: None,
        thread: pattern(thread.element, &thread.url)?,
        thread_query: None,
        thread_page: None,
    })
}

/// A URL template as a regular expression: its text escaped, `{board}` and
/// `{thread}` captured, other placeholders any query value. A placeholder
/// the URL needs twice (`?uid={board}&home={board}`) is captured where it
/// first stands and matched where it stands again: a pattern names a group
/// once.
pub(super) fn template_pattern(template: &str) -> String {
    let mut re = String::new();
    let mut named: Vec<&str> = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else { break };
        re.push_str(&regex::escape(&rest[..start]));
        match &rest[start + 1..start + len] {
            name @ ("board" | "thread") if !named.contains(&name) => {
                named.push(name);
                re.push_str(&format!("(?P<{name}>[0-9A-Za-z_-]+)"));
            }
            "board" | "thread" => re.push_str("[0-9A-Za-z_-]+"),
            _ => re.push_str("[^&#]*"),
        }
        rest = &rest[start + len + 1..];
    }
    re.push_str(&regex::escape(rest));
    re
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    pub(crate) const MICROBLOG: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<site id="mb">
  <name>微博</name>
  <home>http://127.0.0.1:8080/mb/</home>
  <json time-zone="+08:00">
    <seed>1001</seed>
    <seed>1002</seed>
    <list paging="cursor" next="$.data.cursor" items="$.data.statuses[*]" id="$.id" replies="$.comments_count"
          time="$.created_at"><![CDATA[api/timeline?uid={board}&cursor={cursor}]]></list>
    <thread items="$.data" author="$.user.screen_name" time="$.created_at" body="$.text"><![CDATA[api/show?id={thread}]]></thread>
    <comments paging="page" page-size="10" items="$.data[*]" author="$.user.screen_name" time="$.created_at"
              body="$.text"><![CDATA[api/comments?id={thread}&page={page}]]></comments>
    <users max="20" depth="2" followers="1" activity="0.5">
      <found id="$.id" followers="$.followers_count">$..user</found>
      <link><![CDATA[/mb/u/{board}]]></link>
    </users>
  </json>
</site>
"##;

    #[test]
    fn a_microblog_site_file_compiles_to_endpoints() {
        let s = parse(MICROBLOG).unwrap();
        let j = s.json.as_ref().unwrap();
        assert_eq!(j.seeds, ["1001", "1002"]);
        assert_eq!(j.utc_offset_minutes, 480);
        let first = j.list.first_key();
        assert_eq!(first, PageKey::Cursor(String::new()));
        assert_eq!(j.list.page_url("1001", &first).unwrap().as_str(), "http://127.0.0.1:8080/mb/api/timeline?uid=1001&cursor=");
        let page: serde_json::Value = serde_json::json!({"data": {"cursor": "a b/c", "statuses": []}});
        let next = j.list.next_key(&first, 3, &page).unwrap();
        assert_eq!(j.list.page_url("1001", &next).unwrap().as_str(), "http://127.0.0.1:8080/mb/api/timeline?uid=1001&cursor=a%20b%2Fc");
        assert_eq!(j.list.next_key(&first, 3, &serde_json::json!({"data": {"cursor": 0}})), None, "cursor 0 ends the list");
        assert_eq!(j.list.next_key(&first, 3, &serde_json::json!({"data": {}})), None);
        let c = j.comments.as_ref().unwrap();
        assert_eq!(c.next_key(&PageKey::Number(1), 10, &serde_json::Value::Null), Some(PageKey::Number(2)));
        assert_eq!(c.next_key(&PageKey::Number(2), 9, &serde_json::Value::Null), None, "a short page is the last");
        // The derived link patterns name boards and threads in the endpoint URLs.
        let m = s.links.thread.captures("http://127.0.0.1:8080/mb/api/show?id=42").unwrap().unwrap();
        assert_eq!(m.thread.as_deref(), Some("42"));
        let u = j.users.as_ref().unwrap();
        assert_eq!((u.max_users, u.max_depth, u.weight_activity), (20, 2, 0.5));
        assert_eq!(&u.link.as_ref().unwrap().captures("<a href='/mb/u/1005'>@x</a>").unwrap()["board"], "1005");
    }

    #[test]
    fn broken_json_rules_name_the_element() {
        let e = parse(&MICROBLOG.replace(r#"items="$.data.statuses[*]""#, r#"items="$.data.statuses[""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("items", 8), "{e}");
        assert!(e.to_string().starts_with("data/sites/x.xml: line 8: items: bad JSONPath"), "{e}");
        let e = parse(&MICROBLOG.replace(r#" body="$.text"><![CDATA[api/show"#, r#"><![CDATA[api/show"#)).unwrap_err();
        assert_eq!(e.field, "thread", "{e}");
        assert!(e.message.contains("body"), "{e}");
        let e = parse(&MICROBLOG.replace("&cursor={cursor}", "")).unwrap_err();
        assert!(e.message.contains("{cursor}"), "{e}");
        let e = parse(&MICROBLOG.replace(r#"paging="page""#, r#"paging="pages""#)).unwrap_err();
        assert_eq!(e.field, "paging");
        let e = parse(&MICROBLOG.replace(r#"time-zone="+08:00""#, r#"time-zone="Beijing""#)).unwrap_err();
        assert_eq!(e.field, "time-zone");
        let e = parse(&MICROBLOG.replace("<seed>1002</seed>", "<seed>../x</seed>")).unwrap_err();
        assert_eq!(e.field, "seed");
        let e = parse(&MICROBLOG.replace(r#"<found id="$.id""#, r#"<found id="id""#)).unwrap_err();
        assert_eq!(e.field, "id", "{e}");
        assert_eq!(e.line, 14, "{e}");
    }

    /// Regression: `{board}` twice in a list URL panicked with `duplicate
    /// capture group name` (exit 101) while deriving the site's link patterns.
    #[test]
    fn a_placeholder_used_twice_in_a_json_url_fills_both_and_names_the_board_once() {
        let s = parse(&MICROBLOG.replace("api/timeline?uid={board}&cursor", "api/timeline?uid={board}&home={board}&cursor")).unwrap();
        let list = &s.json.as_ref().unwrap().list;
        let url = list.page_url("1001", &list.first_key()).unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8080/mb/api/timeline?uid=1001&home=1001&cursor=");
        let m = s.links.board.captures(url.as_str()).unwrap().unwrap();
        assert_eq!(m.board.as_deref(), Some("1001"));
        // The same in the users' link pattern and in <links>.
        let s = parse(&MICROBLOG.replace("<link><![CDATA[/mb/u/{board}]]>", "<link><![CDATA[/mb/u/{board}/from/{board}]]>")).unwrap();
        let link = s.json.as_ref().unwrap().users.as_ref().unwrap().link.clone().unwrap();
        assert_eq!(&link.captures("<a href='/mb/u/1005/from/1005'>@x</a>").unwrap()["board"], "1005");
        let s = parse(&MICROBLOG.replace("  <json ", "  <links><board>/mb/u/{board}/{board}</board><thread>/mb/status/{thread}</thread></links>\n  <json "))
            .unwrap();
        assert_eq!(s.links.board.captures("http://127.0.0.1:8080/mb/u/7/7").unwrap().unwrap().board.as_deref(), Some("7"));
    }

    #[test]
    fn a_placeholder_an_endpoint_gives_no_value_is_an_error_naming_it() {
        let e = parse(&MICROBLOG.replace("api/show?id={thread}", "api/show?id={thread}&fid={board}")).unwrap_err();
        assert_eq!(e.field, "thread", "{e}");
        assert!(e.to_string().starts_with("data/sites/x.xml: line 10: thread: the url's {board} has no value here"), "{e}");
        let e = parse(&MICROBLOG.replace("api/show?id={thread}", "api/show?id={thread}&p={page}")).unwrap_err();
        assert!(e.message.contains("{page}"), "without paging: {e}");
        // A brace of the URL's own is no placeholder.
        parse(&MICROBLOG.replace("api/show?id={thread}", r#"api/show?id={thread}&f={"a":1}"#)).unwrap();
        assert_eq!(template_pattern("a?x={board}&y={"), r"a\?x=(?P<board>[0-9A-Za-z_-]+)\&y=\{");
    }

    #[test]
    fn times_in_every_shape() {
        let fetched = 1_733_018_400; // 2024-12-01 10:00 at UTC+8
        let t = |v: serde_json::Value| resolve_time(&v, fetched, 480);
        assert_eq!(t(serde_json::json!(1_733_018_400)).as_deref(), Some("2024-12-01T10:00:00"));
        assert_eq!(t(serde_json::json!(1_733_018_400_000i64)).as_deref(), Some("2024-12-01T10:00:00"), "milliseconds");
        assert_eq!(t(serde_json::json!("1733018400")).as_deref(), Some("2024-12-01T10:00:00"));
        assert_eq!(t(serde_json::json!("2024-11-20T08:15:00+08:00")).as_deref(), Some("2024-11-20T08:15:00"));
        assert_eq!(t(serde_json::json!("3分钟前")).as_deref(), Some("2024-12-01T09:57:00"));
        assert_eq!(t(serde_json::json!("昨天 12:30")).as_deref(), Some("2024-11-30T12:30:00"));
        assert_eq!(t(serde_json::json!(null)), None);
        assert_eq!(t(serde_json::json!("很久以前")), None);
    }

    #[test]
    fn conversation_paths_compile_on_post_endpoints() {
        let with = MICROBLOG.replace(
            r#"<comments paging="page""#,
            r#"<comments id="$.id" author-id="$.user.id" author-url="$.user.profile_url" parent="$.reply_id" children="$.comments[*]"
              likes="$.like_count" replies="$.total_number" location="$.source" edited="$.edit_at" paging="page""#,
        );
        let s = parse(&with).unwrap();
        let c = s.json.as_ref().unwrap().comments.as_ref().unwrap();
        assert_eq!(c.conversation.named(), ["author-id", "author-url", "parent", "children", "likes", "location", "edited"]);
        assert!(c.replies.is_some());
        assert!(s.json.as_ref().unwrap().thread.as_ref().unwrap().conversation.named().is_empty());
    }

    #[test]
    fn a_reply_path_without_an_id_or_on_a_list_is_refused() {
        for attr in ["parent", "children"] {
            let e = parse(&MICROBLOG.replace(r#"<comments paging="page""#, &format!(r#"<comments {attr}="$.x" paging="page""#))).unwrap_err();
            assert_eq!((e.field.as_str(), e.line), (attr, 11), "{e}");
            assert!(e.message.contains("`id` path"), "{e}");
        }
        let e = parse(&MICROBLOG.replace(r#"<comments paging="page""#, r#"<comments id="$.id" parent="$.x[" paging="page""#)).unwrap_err();
        assert!(e.to_string().starts_with("data/sites/x.xml: line 11: parent: bad JSONPath"), "{e}");
        let e = parse(&MICROBLOG.replace(r#"replies="$.comments_count""#, r#"replies="$.comments_count" likes="$.attitudes""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("likes", 8), "{e}");
        assert!(e.message.contains("threads, not posts"), "{e}");
    }

    #[test]
    fn counts_in_every_shape() {
        let path = JsonPath::parse("$.n").unwrap();
        let n = |v: serde_json::Value| field_count(&serde_json::json!({ "n": v }), &path);
        assert_eq!(n(serde_json::json!(12)), Some(12));
        assert_eq!(n(serde_json::json!("1,024")), Some(1024));
        assert_eq!(n(serde_json::json!("1.2万")), Some(12_000));
        assert_eq!(n(serde_json::json!("3k")), Some(3000));
        assert_eq!(n(serde_json::json!(7.0)), Some(7));
        for no in [
            serde_json::json!(-1),
            serde_json::json!("很多"),
            serde_json::json!("NaN"),
            serde_json::json!("inf"),
            serde_json::json!(null),
            serde_json::json!(""),
        ] {
            assert_eq!(n(no.clone()), None, "{no}");
        }
        assert_eq!(n(serde_json::json!("18446744073709551615万")), None, "too large is no count");
    }

    #[test]
    fn time_zones() {
        assert_eq!(offset("+08:00"), Some(480));
        assert_eq!(offset("-0530"), Some(-330));
        assert_eq!(offset("UTC"), Some(0));
        assert_eq!(offset("8"), None);
    }

    /// Isso answers `offset=6` with the same six comments as `offset=0`
    /// (it pages only with `limit`): the second page ends the walk.
    #[test]
    fn a_page_of_items_all_met_before_is_a_repeat() {
        let page = |ids: &[u64]| serde_json::json!({"replies": ids.iter().map(|i| serde_json::json!({"id": i})).collect::<Vec<_>>()});
        fn items(v: &serde_json::Value) -> Vec<&serde_json::Value> {
            v["replies"].as_array().unwrap().iter().collect()
        }
        let mut seen = ItemsSeen::default();
        let (first, same, more) = (page(&[1, 2, 3]), page(&[1, 2, 3]), page(&[3, 4]));
        assert!(!seen.repeats(&items(&first)));
        assert!(!seen.repeats(&items(&more)), "one new item is news");
        assert!(seen.repeats(&items(&same)));
        assert!(!seen.repeats(&[]), "an empty page is no repeat (it ends the walk anyway)");
    }
}
