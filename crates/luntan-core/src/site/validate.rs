//! Validation: a RawSite checked and compiled into a Site by one function
//! per element, each fault reported at the element or attribute that holds it.

use std::time::Duration;

use regex::Regex;
use scraper::Selector;
use url::Url;

use super::locate::Ctx;
use super::raw::{RawAccount, RawFocus, RawIncremental, RawLinks, RawList, RawMatcher, RawPattern, RawPoliteness, RawSearch, RawSite, RawThread};
use super::{
    Account, AccountAuth, Focus, Incremental, LinkPattern, Links, ListRules, PageMatcher, Pick, Politeness, SearchRules, Site, SiteError, ThreadRules,
    DEFAULT_EMPTY_PATTERN,
};
use super::{AddQuery, BoardFollow, Hashed, DEFAULT_MAX_BOARDS};
use crate::ids::SiteId;

impl RawSite {
    /// The parts are checked in this order whatever their order in the file,
    /// so a file with several faults always reports the same one.
    pub(super) fn validate(self, ctx: &Ctx) -> Result<Site, SiteError> {
        let home = home(ctx, &self.home)?;
        let id = id(ctx, self.id.as_deref(), &home)?;
        let encoding = encoding_label(ctx, "encoding", self.encoding.as_deref())?;
        let politeness = politeness(ctx, self.politeness)?;
        let json = self.json.as_ref().map(|j| super::json::json(ctx, j, &home)).transpose()?;
        let browser = self.browser.as_ref().map(|b| super::browser::browser(ctx, b)).transpose()?;
        if browser.is_some() && json.is_some() {
            return Err(ctx.err("browser", "a site is read through its JSON endpoints or in a browser, not both: keep <json> or <browser>"));
        }
        // A JSON site is read through its endpoints; its HTML rules are optional.
        let links = match (&self.links, &json) {
            (Some(l), _) => links(ctx, l)?,
            (None, Some(j)) => super::json::derived_links(ctx, j)?,
            (None, None) => return Err(ctx.err("links", "missing: a site needs <links> (or <json> endpoints)")),
        };
        if json.is_some() && links.thread.hashed != Hashed::default() {
            return Err(ctx.err("links@hashed", "a JSON site's ids are its endpoints' ids, which go back into their URLs: no slug can be hashed"));
        }
        let list = self.list.as_ref().map(|l| list(ctx, l)).transpose()?;
        let thread = match (&self.thread, &json) {
            (Some(t), _) => thread(ctx, t)?,
            (None, Some(_)) => ThreadRules::default(),
            (None, None) => return Err(ctx.err("thread", "missing: a site needs <thread> (or <json> endpoints)")),
        };
        let incremental = incremental(ctx, self.incremental.as_ref())?;
        let focus = self.focus.as_ref().map(|f| focus(ctx, f)).transpose()?;
        let search = self.search.as_ref().map(|s| search(ctx, s, &home, encoding)).transpose()?;
        let accounts = accounts(ctx, &self.account, &home)?;
        let comments = self
            .comments
            .as_ref()
            .map(|c| super::hybrid::comments(ctx, c, &home, json.is_some(), browser.is_some(), links.thread.hashed.thread))
            .transpose()?;
        let media = self.media.as_ref().map(|m| super::media::media(ctx, m)).transpose()?;
        let max_board_pages = self.max_board_pages.unwrap_or(100);
        if max_board_pages == 0 {
            return Err(ctx.err("max-board-pages", "must be at least 1"));
        }
        Ok(Site {
            name: self.name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).unwrap_or_else(|| id.to_string()),
            id,
            home,
            encoding,
            politeness,
            max_board_pages,
            links,
            list,
            thread,
            allow_hosts: self.allow_host.iter().map(|h| h.trim().to_ascii_lowercase()).collect(),
            incremental,
            focus,
            search,
            accounts,
            json,
            browser,
            comments,
            media,
            path: ctx.path.to_owned(),
        })
    }
}

/// `<home>`: only http(s) with a host, since every relative URL in the file
/// is joined to it and the host is the default id.
fn home(ctx: &Ctx, raw: &str) -> Result<Url, SiteError> {
    let home = Url::parse(raw.trim()).map_err(|e| ctx.err("home", format!("not a URL: {e}")))?;
    if !matches!(home.scheme(), "http" | "https") {
        return Err(ctx.err("home", format!("scheme {:?} is not http or https", home.scheme())));
    }
    if home.host_str().is_none() {
        return Err(ctx.err("home", "URL has no host"));
    }
    Ok(home)
}

/// `<site id>`, by default the home host: it names directories, so it must
/// be an id [`SiteId::parse`] accepts.
fn id(ctx: &Ctx, raw: Option<&str>, home: &Url) -> Result<SiteId, SiteError> {
    let id = match raw.map(str::trim) {
        Some(id) => id.to_owned(),
        // home() refused a URL without a host.
        None => home.host_str().unwrap_or_default().to_owned(),
    };
    SiteId::parse(&id).map_err(|e| ctx.err("@id", e.to_string()))
}

/// `<encoding>` and `<search encoding>`: a label as `<meta charset>` takes
/// it; a blank one is none.
fn encoding_label(ctx: &Ctx, at: &str, label: Option<&str>) -> Result<Option<&'static encoding_rs::Encoding>, SiteError> {
    match label.map(str::trim) {
        None | Some("") => Ok(None),
        Some(label) => encoding_rs::Encoding::for_label(label.as_bytes()).map(Some).ok_or_else(|| ctx.err(at, format!("unknown encoding label {label:?}"))),
    }
}

/// `<politeness>`: each attribute overrides its default; values that would
/// stall every request (a concurrency, timeout or body cap of 0) or flood
/// the forum (over 64 requests at once) are refused.
fn politeness(ctx: &Ctx, raw: Option<RawPoliteness>) -> Result<Politeness, SiteError> {
    let mut politeness = Politeness::default();
    let Some(p) = raw else { return Ok(politeness) };
    if let Some(ms) = p.delay_ms {
        politeness.delay = Duration::from_millis(ms);
    }
    if let Some(c) = p.concurrency {
        if c == 0 || c > 64 {
            return Err(ctx.err("politeness@concurrency", format!("{c} is not between 1 and 64")));
        }
        politeness.concurrency = c;
    }
    if let Some(ms) = p.timeout_ms {
        if ms == 0 {
            return Err(ctx.err("politeness@timeout-ms", "must be above 0"));
        }
        politeness.timeout = Duration::from_millis(ms);
    }
    if let Some(r) = p.retries {
        politeness.retries = r.min(20);
    }
    if let Some(kb) = p.max_body_kb {
        if kb == 0 {
            return Err(ctx.err("politeness@max-body-kb", "must be above 0"));
        }
        politeness.max_body_bytes = kb.saturating_mul(1024);
    }
    if let Some(r) = p.robots {
        politeness.robots = r;
    }
    if let Some(ua) = p.user_agent {
        if ua.trim().is_empty() || ua.contains(['\r', '\n']) {
            return Err(ctx.err("politeness@user-agent", "must be one non-empty line"));
        }
        politeness.user_agent = ua;
    }
    Ok(politeness)
}

/// `<links>`: each pattern must capture the groups its kind of page is known
/// by (board and thread ids, page numbers).
fn links(ctx: &Ctx, raw: &RawLinks) -> Result<Links, SiteError> {
    // Each pattern's element-only attributes on another element.
    let patterns = [
        (Some(&raw.board), "links/board"),
        (raw.board_page.as_ref(), "links/board-page"),
        (Some(&raw.thread), "links/thread"),
        (raw.thread_page.as_ref(), "links/thread-page"),
    ];
    for (p, at) in patterns.iter().filter_map(|&(p, at)| Some((p?, at))) {
        if at != "links/board" && (p.depth.is_some() || p.max.is_some()) {
            return Err(ctx.err(at, "depth and max belong on <board>"));
        }
        if at != "links/thread" && p.add_query.is_some() {
            return Err(ctx.err(at, "add-query belongs on <thread>"));
        }
    }
    let follow = match (raw.board.depth, raw.board.max) {
        (None, None) => None,
        (Some(0), _) => return Err(ctx.err("links/board@depth", "must be at least 1 (leave it out to read only the home page's boards)")),
        (_, Some(0)) => return Err(ctx.err("links/board@max", "must be at least 1")),
        (depth, max) => Some(BoardFollow { depth: depth.unwrap_or(1), max: max.unwrap_or(DEFAULT_MAX_BOARDS) }),
    };
    let mut hashed = Hashed::default();
    for group in raw.hashed.as_deref().unwrap_or_default().split_whitespace() {
        match group {
            "board" => hashed.board = true,
            "thread" => hashed.thread = true,
            other => return Err(ctx.err("links@hashed", format!("{other:?} is no group (thread, board or both, space-separated)"))),
        }
    }
    Ok(Links {
        follow,
        board: pattern(ctx, "links/board", &raw.board, &["board"], hashed)?,
        board_page: raw.board_page.as_ref().map(|p| pattern(ctx, "links/board-page", p, &["board", "page"], hashed)).transpose()?,
        thread: pattern(ctx, "links/thread", &raw.thread, &["thread"], hashed)?,
        thread_query: raw.thread.add_query.as_deref().map(|q| add_query(ctx, q)).transpose()?,
        thread_page: raw.thread_page.as_ref().map(|p| pattern(ctx, "links/thread-page", p, &["thread", "page"], hashed)).transpose()?,
    })
}

/// `<thread add-query>`: a query string to add, `key` or `key=value`
/// parts joined by `&`, as it goes into a URL (escapes written out).
fn add_query(ctx: &Ctx, q: &str) -> Result<AddQuery, SiteError> {
    let field = "links/thread@add-query";
    let q = q.trim();
    if q.is_empty() {
        return Err(ctx.err(field, "is empty (leave it out to ask for threads at the URLs lists link)"));
    }
    if q.starts_with(['?', '&']) {
        return Err(ctx.err(field, format!("{q:?}: write the parameters without a leading ? or &")));
    }
    if let Some(c) = q.chars().find(|c| c.is_whitespace() || c.is_control() || *c == '#') {
        return Err(ctx.err(field, format!("{q:?}: {c:?} cannot stand in a query (percent-encode it)")));
    }
    let parts: Vec<String> = q.split('&').map(str::to_owned).collect();
    if let Some(bad) = parts.iter().find(|p| p.is_empty() || p.starts_with('=')) {
        return Err(ctx.err(field, format!("{q:?}: {bad:?} names no parameter")));
    }
    Ok(AddQuery::new(parts))
}

/// `<list>`: the row selector is required, since rows are what the other
/// selectors look inside.
fn list(ctx: &Ctx, raw: &RawList) -> Result<ListRules, SiteError> {
    Ok(ListRules {
        row: selector(ctx, "list@row", &raw.row)?,
        title: opt_pick(ctx, "list@title", &raw.title)?,
        replies: opt_pick(ctx, "list@replies", &raw.replies)?,
        last_post: opt_pick(ctx, "list@last-post", &raw.last_post)?,
    })
}

/// `<thread>`: a body, as a selector or an id pattern, is the one thing a
/// thread page cannot be read without, unless `post="auto"` finds it.
fn thread(ctx: &Ctx, raw: &RawThread) -> Result<ThreadRules, SiteError> {
    let auto_posts = raw.post.as_deref().map(str::trim) == Some("auto");
    if !auto_posts && raw.body.is_none() && raw.body_id.is_none() {
        return Err(ctx.err("thread", "needs a `body` selector or a `body-id` pattern"));
    }
    let body_id = match &raw.body_id {
        None => None,
        // Anchored: `postmessage_\d+` must not match `xpostmessage_12`.
        Some(p) => Some(
            Regex::new(&format!("^(?:{p})$"))
                .map_err(|e| ctx.err("thread@body-id", format!("bad regular expression: {}", e.to_string().lines().last().unwrap_or("").trim())))?,
        ),
    };
    let utc_offset_minutes = match raw.time_zone.as_deref().map(str::trim) {
        None | Some("") => 480,
        Some(tz) => super::json::offset(tz).ok_or_else(|| ctx.err("thread@time-zone", format!("{tz:?} is not an offset such as +08:00")))?,
    };
    let time_format = match raw.time_format.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(f) => Some(crate::dates::TimeFormat::intern(f).map_err(|why| ctx.err("thread@time-format", format!("{f:?}: {why}")))?),
    };
    // A page that names no thread: its first post does (a microblog).
    let title_from_first_post = raw.title.as_deref().map(str::trim) == Some("first-post");
    let title = if title_from_first_post { None } else { opt_pick(ctx, "thread@title", &raw.title)? };
    let nested_posts = match raw.nested_posts.as_deref().map(str::trim) {
        None | Some("false") => false,
        Some("true") if raw.post.is_none() || auto_posts => {
            return Err(ctx.err("thread@nested-posts", "needs a post selector: the posts that hold their replies"));
        }
        Some("true") => true,
        Some(other) => return Err(ctx.err("thread@nested-posts", format!("{other:?} is not true or false"))),
    };
    Ok(ThreadRules {
        title,
        title_from_first_post,
        utc_offset_minutes,
        time_format,
        post: if auto_posts { None } else { opt_selector(ctx, "thread@post", &raw.post)? },
        auto_posts,
        nested_posts,
        body: opt_selector(ctx, "thread@body", &raw.body)?,
        body_id,
        author: opt_pick(ctx, "thread@author", &raw.author)?,
        time: opt_pick(ctx, "thread@time", &raw.time)?,
        floor: opt_pick(ctx, "thread@floor", &raw.floor)?,
        strip: opt_selector(ctx, "thread@strip", &raw.strip)?,
        quote: quote_rules(ctx, raw)?,
        conversation: conversation(ctx, raw, auto_posts)?,
    })
}

/// A regular expression an attribute gives, its error on that attribute.
fn regex(ctx: &Ctx, field: &str, p: &Option<String>) -> Result<Option<Regex>, SiteError> {
    p.as_deref()
        .map(|p| Regex::new(p).map_err(|e| ctx.err(field, format!("bad regular expression: {}", e.to_string().lines().last().unwrap_or("").trim()))))
        .transpose()
}

/// `name="css[@attr]"` with its `name-pattern`: a pattern without its
/// field would be silently ignored, so it is a mistake.
fn field(ctx: &Ctx, name: &str, css: &Option<String>, pattern: &Option<String>) -> Result<Option<super::Field>, SiteError> {
    let pattern = regex(ctx, &format!("thread@{name}-pattern"), pattern)?;
    match opt_pick(ctx, &format!("thread@{name}"), css)? {
        Some(pick) => Ok(Some(super::Field { pick, pattern })),
        None if pattern.is_some() => Err(ctx.err(&format!("thread@{name}-pattern"), format!("needs {name}=\"…\" (where the value is) too"))),
        None => Ok(None),
    }
}

/// Version 2's fields ([`super::Conversation`]). `post="auto"` does not
/// read them, so there they are refused rather than ignored.
fn conversation(ctx: &Ctx, raw: &RawThread, auto_posts: bool) -> Result<super::Conversation, SiteError> {
    let c = super::Conversation {
        post_id: field(ctx, "post-id", &raw.post_id, &raw.post_id_pattern)?,
        author_id: field(ctx, "author-id", &raw.author_id, &raw.author_id_pattern)?,
        author_url: field(ctx, "author-url", &raw.author_url, &raw.author_url_pattern)?,
        reply_to: field(ctx, "reply-to", &raw.reply_to, &raw.reply_to_pattern)?,
        edited: field(ctx, "edited", &raw.edited, &raw.edited_pattern)?,
        likes: field(ctx, "likes", &raw.likes, &raw.likes_pattern)?,
        location: field(ctx, "location", &raw.location, &raw.location_pattern)?,
        links: opt_pick(ctx, "thread@links", &raw.links)?,
        images: opt_pick(ctx, "thread@images", &raw.images)?,
        board_name: field(ctx, "board-name", &raw.board_name, &raw.board_name_pattern)?,
        thread_replies: field(ctx, "thread-replies", &raw.thread_replies, &raw.thread_replies_pattern)?,
        thread_views: field(ctx, "thread-views", &raw.thread_views, &raw.thread_views_pattern)?,
    };
    if auto_posts && !c.is_empty() {
        let name = c.named().next().unwrap_or("thread");
        return Err(ctx.err(&format!("thread@{name}"), "is read by post=\"…\" selectors; post=\"auto\" does not read it yet"));
    }
    Ok(c)
}

/// `quote` and its `quote-*` attributes; a `quote-*` without `quote` is a
/// mistake (it would be silently ignored), and so is a pattern that does
/// not compile.
fn quote_rules(ctx: &Ctx, raw: &RawThread) -> Result<Option<super::QuoteRules>, SiteError> {
    let pattern = |field: &str, p: &Option<String>| regex(ctx, field, p);
    let Some(select) = opt_selector(ctx, "thread@quote", &raw.quote)? else {
        let given = [
            ("quote-head", &raw.quote_head),
            ("quote-intro", &raw.quote_intro),
            ("quote-of", &raw.quote_of),
            ("quote-of-pattern", &raw.quote_of_pattern),
            ("quote-author", &raw.quote_author),
            ("quote-author-pattern", &raw.quote_author_pattern),
        ];
        if let Some((name, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(ctx.err(&format!("thread@{name}"), "needs quote=\"…\" (the quote elements) too"));
        }
        return Ok(None);
    };
    Ok(Some(super::QuoteRules {
        select,
        head: opt_selector(ctx, "thread@quote-head", &raw.quote_head)?,
        intro: opt_selector(ctx, "thread@quote-intro", &raw.quote_intro)?,
        of: opt_pick(ctx, "thread@quote-of", &raw.quote_of)?,
        of_pattern: pattern("thread@quote-of-pattern", &raw.quote_of_pattern)?,
        author: opt_pick(ctx, "thread@quote-author", &raw.quote_author)?,
        author_pattern: pattern("thread@quote-author-pattern", &raw.quote_author_pattern)?,
    }))
}

/// `<incremental>`: the interval bounds must leave room for an interval,
/// and the first interval is kept within them.
fn incremental(ctx: &Ctx, raw: Option<&RawIncremental>) -> Result<Incremental, SiteError> {
    let mut incremental = Incremental::default();
    let Some(i) = raw else { return Ok(incremental) };
    if let Some(n) = i.stop_after {
        if n == 0 {
            return Err(ctx.err("incremental@stop-after", "must be at least 1"));
        }
        incremental.stop_after = n;
    }
    let minutes = |m: u64| Duration::from_secs(m.saturating_mul(60));
    if let Some(m) = i.min_interval_minutes {
        incremental.min_interval = minutes(m);
    }
    if let Some(h) = i.max_interval_hours {
        incremental.max_interval = minutes(h.saturating_mul(60));
    }
    if incremental.max_interval < incremental.min_interval {
        return Err(ctx.err("incremental@max-interval-hours", "is shorter than min-interval-minutes"));
    }
    if let Some(m) = i.interval_minutes {
        incremental.initial_interval = minutes(m);
    }
    incremental.initial_interval = incremental.initial_interval.clamp(incremental.min_interval, incremental.max_interval);
    Ok(incremental)
}

/// `<focus>`: weights are fractions, and without a topic no link could score.
fn focus(ctx: &Ctx, raw: &RawFocus) -> Result<Focus, SiteError> {
    let alpha = raw.alpha.unwrap_or(0.3);
    if !(0.0..=1.0).contains(&alpha) {
        return Err(ctx.err("focus@alpha", format!("{alpha} is not between 0 and 1")));
    }
    let threshold = raw.threshold.unwrap_or(0.2);
    if !(0.0..=1.0).contains(&threshold) {
        return Err(ctx.err("focus@threshold", format!("{threshold} is not between 0 and 1")));
    }
    let topics = words(&raw.topic);
    if topics.is_empty() {
        return Err(ctx.err("focus", "needs at least one <topic> keyword"));
    }
    Ok(Focus { alpha, threshold, topics, url_words: words(&raw.url_word) })
}

/// Topic words may be written one per element or many to one, separated
/// as people separate them in Chinese or English text.
fn words(v: &[String]) -> Vec<String> {
    v.iter().flat_map(|t| t.split([' ', ',', '，', '、', '\n', '\t'])).map(str::trim).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// `<search>`: the URL must say where the keyword goes and how later pages
/// are reached; it is resolved against home, and the keyword is encoded as
/// the site's pages are unless the search names its own encoding.
fn search(ctx: &Ctx, raw: &RawSearch, home: &Url, site_encoding: Option<&'static encoding_rs::Encoding>) -> Result<SearchRules, SiteError> {
    let template = raw.url.trim();
    if !template.contains("{keyword}") {
        return Err(ctx.err("search/url", "the url needs {keyword}"));
    }
    if !template.contains("{page}") && raw.next.is_none() {
        return Err(ctx.err("search/url", "the url needs {page}, or <search> a next=\"…\" selector for the next-page link"));
    }
    // Braces are not URL characters: join with stand-ins, then put the placeholders back.
    let joined = home
        .join(&template.replace("{keyword}", "LUNTANKEYWORD").replace("{page}", "LUNTANPAGE"))
        .map_err(|e| ctx.err("search/url", format!("not a URL: {e}")))?;
    let url = joined.as_str().replace("LUNTANKEYWORD", "{keyword}").replace("LUNTANPAGE", "{page}");
    let encoding = encoding_label(ctx, "search@encoding", raw.encoding.as_deref())?.or(site_encoding).unwrap_or(encoding_rs::UTF_8);
    let max_pages = raw.max_pages.unwrap_or(30);
    if max_pages == 0 {
        return Err(ctx.err("search@max-pages", "must be at least 1"));
    }
    let interval = Duration::from_millis(raw.interval_ms.unwrap_or(0));
    let busy = raw.busy.as_ref().map(|b| matcher(ctx, "search/busy", b)).transpose()?;
    let busy_wait = match raw.busy.as_ref().and_then(|b| b.wait_ms) {
        Some(ms) => Duration::from_millis(ms),
        // Discuz!'s guest interval when the site file names none.
        None if interval.is_zero() => Duration::from_secs(10),
        None => interval,
    };
    let empty = match &raw.empty {
        Some(e) => matcher(ctx, "search/empty", e)?,
        None => PageMatcher { selector: None, pattern: Some(Regex::new(DEFAULT_EMPTY_PATTERN).expect("static pattern")) },
    };
    Ok(SearchRules {
        url,
        encoding,
        row: selector(ctx, "search@row", &raw.row)?,
        time: selector(ctx, "search@time", &raw.time)?,
        next: opt_selector(ctx, "search@next", &raw.next)?,
        first_page: raw.first_page.unwrap_or(1),
        max_pages,
        interval,
        busy,
        busy_wait,
        empty,
    })
}

/// `<busy>` and `<empty>` in `<search>`: a matcher with neither a selector
/// nor a pattern would match every page.
fn matcher(ctx: &Ctx, at: &str, raw: &RawMatcher) -> Result<PageMatcher, SiteError> {
    let pattern = raw.pattern.trim();
    if raw.selector.is_none() && pattern.is_empty() {
        return Err(ctx.err(at, "needs a selector=\"…\", a text pattern, or both"));
    }
    let pattern = (!pattern.is_empty()).then(|| Regex::new(pattern).map_err(|e| ctx.err(at, format!("bad pattern: {e}")))).transpose()?;
    Ok(PageMatcher { selector: opt_selector(ctx, &format!("{at}@selector"), &raw.selector)?, pattern })
}

/// `<account>`s: names label the workers and their records, so no two may share one.
fn accounts(ctx: &Ctx, raw: &[RawAccount], home: &Url) -> Result<Vec<Account>, SiteError> {
    let mut accounts: Vec<Account> = Vec::new();
    for (i, a) in raw.iter().enumerate() {
        let account = account(ctx, i, a, home)?;
        if accounts.iter().any(|o| o.name == account.name) {
            return Err(ctx.err("account", format!("two accounts are named {:?}", account.name)));
        }
        accounts.push(account);
    }
    Ok(accounts)
}

/// One `<account>`, the `i`th (which names it by default): exactly one of a
/// cookie or a login form, so its worker knows how to sign in.
fn account(ctx: &Ctx, i: usize, raw: &RawAccount, home: &Url) -> Result<Account, SiteError> {
    let name = raw.name.as_deref().map(str::trim).filter(|n| !n.is_empty()).map_or_else(|| format!("account{}", i + 1), str::to_owned);
    let auth = match (&raw.cookie, &raw.login_url) {
        (Some(c), None) if !c.trim().is_empty() && !c.contains(['\r', '\n']) => AccountAuth::Cookie(c.trim().to_owned()),
        (None, Some(u)) => {
            let url = home.join(u.trim()).map_err(|e| ctx.err("account", format!("login-url is not a URL: {e}")))?;
            if raw.field.is_empty() {
                return Err(ctx.err("account", "a login needs <field name=\"…\">value</field> elements"));
            }
            AccountAuth::Login { url, fields: raw.field.iter().map(|f| (f.name.clone(), f.value.clone())).collect() }
        }
        _ => return Err(ctx.err("account", "needs either a cookie=\"…\" (one line) or a login-url=\"…\"")),
    };
    Ok(Account { name, auth })
}

fn selector(ctx: &Ctx, field: &str, css: &str) -> Result<Selector, SiteError> {
    Selector::parse(css).map_err(|e| ctx.err(field, format!("bad CSS selector {css:?}: {e}")))
}

fn opt_selector(ctx: &Ctx, field: &str, css: &Option<String>) -> Result<Option<Selector>, SiteError> {
    css.as_deref().map(|c| selector(ctx, field, c)).transpose()
}

/// A field that may read an attribute: `css` or `css@attr` ([`Pick`]).
fn opt_pick(ctx: &Ctx, field: &str, css: &Option<String>) -> Result<Option<Pick>, SiteError> {
    css.as_deref().map(|c| Pick::parse(c).map_err(|e| ctx.err(field, e.to_string()))).transpose()
}

/// `pattern` with its first `shorthand` replaced by `named` (a named group)
/// and any later one by `again`: a regular expression names a group once
/// (twice is `duplicate capture group name`), and a URL that repeats its
/// board (`?fid={board}&from={board}`) is still one board's.
pub(super) fn name_once(pattern: &str, shorthand: &str, named: &str, again: &str) -> String {
    match pattern.split_once(shorthand) {
        Some((head, tail)) => format!("{head}{named}{}", tail.replace(shorthand, again)),
        None => pattern.to_owned(),
    }
}

/// Expands the `{board}`/`{thread}`/`{page}` shorthands and compiles. A
/// hashed group's shorthand takes a whole path segment or parameter value.
fn pattern(ctx: &Ctx, field: &str, raw: &RawPattern, needs: &[&str], hashed: Hashed) -> Result<LinkPattern, SiteError> {
    const ID: &str = r"[0-9A-Za-z_\-]+";
    const SLUG: &str = "[^/?#&]+";
    let src = raw.pattern.trim().to_owned();
    let board = if hashed.board { SLUG } else { ID };
    let src = name_once(&src, "{board}", &format!("(?P<board>{board})"), board);
    let thread = if hashed.thread { SLUG } else { ID };
    let src = name_once(&src, "{thread}", &format!("(?P<thread>{thread})"), thread);
    let src = name_once(&src, "{page}", r"(?P<page>[0-9]+)", r"[0-9]+");
    if src.is_empty() {
        return Err(ctx.err(field, "empty pattern"));
    }
    let regex = Regex::new(&src).map_err(|e| {
        let first = e.to_string().lines().last().unwrap_or("invalid").trim().to_owned();
        ctx.err(field, format!("bad regular expression: {first}"))
    })?;
    for group in needs {
        if !regex.capture_names().flatten().any(|n| n == *group) {
            return Err(ctx.err(field, format!("pattern has no `{group}` group (write {{{group}}} or (?P<{group}>…))")));
        }
    }
    Ok(LinkPattern { regex, first_page: raw.first.unwrap_or(1), hashed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::tests::{discuz_with, parse, DISCUZ};
    use crate::site::LinkMatch;

    /// WordPress's default permalinks for a Chinese site name a post by its
    /// title's slug only (`/2025/02/%e4%ba%ac%e4%b8%9c/`), and a category
    /// the same way: no id in the URL. `hashed` makes the id from the slug,
    /// the same however the percent-encoding is cased, and a slug that could
    /// name a path is harmless once hashed.
    #[test]
    fn a_slug_named_in_hashed_is_made_an_id_and_the_same_slug_the_same_id() {
        let wp = DISCUZ.replace(
            r##"<links>
    <board><![CDATA[forum\.php\?mod=forumdisplay&fid={board}$]]></board>
    <board-page><![CDATA[forum\.php\?mod=forumdisplay&fid={board}&page={page}]]></board-page>
    <thread><![CDATA[forum\.php\?mod=viewthread&tid={thread}$]]></thread>
    <thread-page><![CDATA[forum\.php\?mod=viewthread&tid={thread}&page={page}]]></thread-page>"##,
            r##"<links hashed="thread board">
    <board><![CDATA[/category/{board}/$]]></board>
    <board-page><![CDATA[/category/{board}/page/{page}/$]]></board-page>
    <thread><![CDATA[/[0-9]{4}/[0-9]{2}/{thread}/$]]></thread>
    <thread-page><![CDATA[/[0-9]{4}/[0-9]{2}/{thread}/comment-page-{page}/$]]></thread-page>"##,
        );
        assert_ne!(wp, DISCUZ);
        let s = parse(&wp).unwrap();
        let thread = |url: &str| s.links.thread.captures(url).unwrap().unwrap().thread.unwrap();
        let id = thread("http://h/2025/02/%e4%ba%ac%e4%b8%9c%e5%88%b0%e8%b4%a7/");
        assert_eq!(id.as_str().len(), 16);
        assert_eq!(thread("http://h/2025/02/%E4%BA%AC%E4%B8%9C%E5%88%B0%E8%B4%A7/"), id);
        assert_ne!(thread("http://h/2025/02/%e4%ba%ac%e4%b8%9c/"), id);
        let page = s.links.thread_page.as_ref().unwrap().captures("http://h/2025/02/%e4%ba%ac%e4%b8%9c%e5%88%b0%e8%b4%a7/comment-page-2/").unwrap().unwrap();
        assert_eq!((page.thread, page.page), (Some(id), Some(2)));
        // A slug that would climb out of the data directory names a file no more.
        assert!(thread("http://h/2025/02/..%2F..%2Fetc/").as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        let board = s.links.board.captures("http://h/category/%e8%af%bb%e4%b9%a6/").unwrap().unwrap().board.unwrap();
        assert_eq!(board.as_str(), crate::ids::slug_id("读书"));
        // Without it, the slug is refused as an id, as before.
        let plain = parse(&wp.replace(r#"<links hashed="thread board">"#, "<links>")).unwrap();
        assert!(plain.links.thread.captures("http://h/2025/02/%e4%ba%ac/").is_none());
        let e = parse(&wp.replace(r#"hashed="thread board""#, r#"hashed="post""#)).unwrap_err();
        assert!(e.to_string().contains("line 8: hashed: \"post\" is no group"), "{e}");
    }

    #[test]
    fn a_full_site_file_compiles() {
        let s = parse(DISCUZ).unwrap();
        assert_eq!(s.id, "dz");
        assert_eq!(s.name, "清水河畔");
        assert_eq!(s.encoding, Some(encoding_rs::GBK));
        assert_eq!(s.politeness.concurrency, 3);
        assert_eq!(s.politeness.delay, Duration::from_millis(100));
        assert_eq!(s.max_board_pages, 5);
        let m = s.links.thread_page.as_ref().unwrap().captures("http://127.0.0.1:8080/dz/forum.php?mod=viewthread&tid=7&page=3").unwrap().unwrap();
        assert_eq!(m, LinkMatch { board: None, thread: Some("7".parse().unwrap()), page: Some(3) });
        assert!(s.links.thread.captures("http://h/dz/forum.php?mod=viewthread&tid=7&page=3").is_none());
        assert!(s.thread.body_id.as_ref().unwrap().is_match("postmessage_12"));
        assert!(!s.thread.body_id.as_ref().unwrap().is_match("xpostmessage_12"));
    }

    #[test]
    fn boards_past_the_home_page_time_zones_and_first_post_titles_are_read_and_checked() {
        let s = parse(DISCUZ).unwrap();
        assert_eq!((s.links.follow, s.thread.utc_offset_minutes, s.thread.title_from_first_post), (None, 480, false));
        let follow = DISCUZ
            .replace("<board>", r#"<board depth="2">"#)
            .replace(r##"<thread title="#thread_subject""##, r#"<thread title="first-post" time-zone="-05:30""#);
        let s = parse(&follow).unwrap();
        assert_eq!(s.links.follow, Some(super::super::BoardFollow { depth: 2, max: super::super::DEFAULT_MAX_BOARDS }));
        assert_eq!((s.thread.utc_offset_minutes, s.thread.title_from_first_post, s.thread.title.is_some()), (-330, true, false));
        let e = parse(&DISCUZ.replace("<board>", r#"<board depth="0">"#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("depth", 9), "{e}");
        let e = parse(&DISCUZ.replace("<thread>", r#"<thread max="5">"#)).unwrap_err();
        assert!(e.message.contains("belong on <board>"), "{e}");
        let e = parse(&DISCUZ.replace(r##"<thread title="#thread_subject""##, r#"<thread time-zone="CST""#)).unwrap_err();
        assert_eq!(e.field, "time-zone", "{e}");
    }

    /// HyperKitty serves a thread whole only at `?noscript`; lists link
    /// the plain URL, which names the thread.
    #[test]
    fn add_query_asks_for_a_thread_at_its_url_with_parameters_added() {
        let s = parse(DISCUZ).unwrap();
        let u = Url::parse("http://h/dz/forum.php?mod=viewthread&tid=7").unwrap();
        assert_eq!(s.links.thread_request(&u), u, "nothing added without it");
        let s = parse(&DISCUZ.replace("<thread>", r#"<thread add-query="action=printable&amp;x=%E4%B8%80">"#)).unwrap();
        assert_eq!(s.links.thread_query.as_ref().unwrap().to_string(), "action=printable&x=%E4%B8%80");
        assert_eq!(s.links.thread_request(&u).as_str(), "http://h/dz/forum.php?mod=viewthread&tid=7&action=printable&x=%E4%B8%80");
        // A part the URL holds already is not added twice.
        let held = Url::parse("http://h/dz/forum.php?mod=viewthread&action=printable&tid=7").unwrap();
        assert_eq!(s.links.thread_request(&held).as_str(), "http://h/dz/forum.php?mod=viewthread&action=printable&tid=7&x=%E4%B8%80");
        let s = parse(&DISCUZ.replace("<thread>", r#"<thread add-query="noscript">"#)).unwrap();
        let plain = Url::parse("http://h/list/a@b.org/thread/XYZ/").unwrap();
        assert_eq!(s.links.thread_request(&plain).as_str(), "http://h/list/a@b.org/thread/XYZ/?noscript");
        for (bad, says) in [
            ("", "is empty"),
            ("?noscript", "leading"),
            ("a b", "cannot stand"),
            ("a#b", "cannot stand"),
            ("a&amp;&amp;b", "names no parameter"),
            ("=1", "names no"),
        ] {
            let e = parse(&DISCUZ.replace("<thread>", &format!(r#"<thread add-query="{bad}">"#))).unwrap_err();
            assert!(e.message.contains(says) && e.field == "add-query", "{bad:?}: {e}");
        }
        let e = parse(&DISCUZ.replace("<board>", r#"<board add-query="x">"#)).unwrap_err();
        assert!(e.message.contains("belongs on <thread>"), "{e}");
    }

    #[test]
    fn id_defaults_to_the_home_host() {
        let s = parse(&DISCUZ.replace(r#"<site id="dz">"#, "<site>")).unwrap();
        assert_eq!(s.id, "127.0.0.1");
    }

    #[test]
    fn post_auto_needs_no_body_and_keeps_the_selectors_given() {
        let rules = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
          author="a.xw1" time="em[id^=authorposton]"/>"##;
        assert!(DISCUZ.contains(rules));
        let s = parse(&DISCUZ.replace(rules, r##"<thread title="#thread_subject" post=" auto "/>"##)).unwrap();
        assert!(s.thread.auto_posts && s.thread.post.is_none() && s.thread.body.is_none() && s.thread.body_id.is_none());
        assert!(s.thread.title.is_some());
        let s = parse(&DISCUZ.replace(rules, r#"<thread post="auto" body="td.t_f" author="a.xw1" strip="div.quote"/>"#)).unwrap();
        assert!(s.thread.auto_posts && s.thread.body.is_some() && s.thread.author.is_some() && s.thread.strip.is_some());
        // Any other post selector still needs a body, with the same message.
        let e = parse(&DISCUZ.replace(rules, r#"<thread post="div.post"/>"#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.message.as_str()), ("thread", "needs a `body` selector or a `body-id` pattern"));
        assert!(!parse(DISCUZ).unwrap().thread.auto_posts);
    }

    #[test]
    fn nested_posts_needs_a_post_selector_and_says_true_or_false() {
        let with = |attr: &str, post: &str| DISCUZ.replace(r#"post="div[id^=post_]""#, &format!("{post} {attr}"));
        assert!(parse(&with(r#"nested-posts="true""#, r#"post="div[id^=post_]""#)).unwrap().thread.nested_posts);
        assert!(!parse(DISCUZ).unwrap().thread.nested_posts);
        for (attr, post, says) in [
            (r#"nested-posts="yes""#, r#"post="div[id^=post_]""#, "is not true or false"),
            (r#"nested-posts="true""#, r#"post="auto""#, "needs a post selector"),
        ] {
            let e = parse(&with(attr, post)).unwrap_err().to_string();
            assert!(e.contains("x.xml") && e.contains("nested-posts") && e.contains(says), "{e}");
        }
    }

    #[test]
    fn quote_attributes_need_quote_and_patterns_that_compile() {
        let rules = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
          author="a.xw1" time="em[id^=authorposton]"/>"##;
        let with = |attrs: &str| parse(&DISCUZ.replace(rules, &rules.replace("/>", &format!(" {attrs}/>"))));
        let q = with(r#"quote="div.quote" quote-of="a@href" quote-of-pattern="pid=(\d+)""#).unwrap().thread.quote.unwrap();
        assert_eq!(super::super::QuoteRules::capture(q.of_pattern.as_ref(), "forum.php?goto=findpost&pid=42&ptid=7").as_deref(), Some("42"));
        assert!(q.head.is_none() && q.author.is_none());
        let e = with(r#"quote-of="a@href""#).unwrap_err();
        assert!(e.field.ends_with("quote-of") && e.message.contains("needs quote="), "{e}");
        let e = with(r#"quote-intro="p""#).unwrap_err();
        assert!(e.field.ends_with("quote-intro") && e.message.contains("needs quote="), "{e}");
        assert!(with(r#"quote="blockquote" quote-intro="p""#).unwrap().thread.quote.unwrap().intro.is_some());
        let e = with(r#"quote="div.quote" quote-author-pattern="(""#).unwrap_err();
        assert!(e.field.ends_with("quote-author-pattern") && e.message.contains("bad regular expression"), "{e}");
        assert!(parse(DISCUZ).unwrap().thread.quote.is_none());
    }

    #[test]
    fn conversation_fields_are_read_and_each_mistake_is_named() {
        let rules = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
          author="a.xw1" time="em[id^=authorposton]"/>"##;
        let with = |attrs: &str| parse(&DISCUZ.replace(rules, &rules.replace("/>", &format!(" {attrs}/>"))));
        assert!(parse(DISCUZ).unwrap().thread.conversation.is_empty());
        let c = with(
            r##"post-id="table[id^=pid]@id" post-id-pattern="^pid(\d+)$" author-id="a.xw1@href" author-id-pattern="uid=(\d+)"
            author-url="a.xw1@href" edited="i.pstatus" edited-pattern="于 (.+) 编辑" location="span.iploc" location-pattern="IP属地[：:]\s*(\S+)"
            likes="span.likes" links="a[href]" images="img.zoom@file" board-name="#pt a[href^='forum-']" thread-replies="span.replies"
            thread-views="span.views@title""##,
        )
        .unwrap()
        .thread
        .conversation;
        assert!(!c.is_empty());
        assert_eq!(c.post_id.as_ref().unwrap().capture("pid4929").as_deref(), Some("4929"));
        assert_eq!(c.post_id.as_ref().unwrap().capture("post_4929"), None, "unmatched is absent");
        assert_eq!(c.location.as_ref().unwrap().capture("IP属地：广东").as_deref(), Some("广东"));
        assert_eq!(c.edited.as_ref().unwrap().capture(" 本帖最后由 小明 于 2024-3-5 12:30 编辑 ").as_deref(), Some("2024-3-5 12:30"));
        assert_eq!(c.author_url.as_ref().unwrap().capture(" home.php?mod=space&uid=7 ").as_deref(), Some("home.php?mod=space&uid=7"));
        assert_eq!(c.images.as_ref().unwrap().attr.as_deref(), Some("file"));
        assert_eq!(c.links.as_ref().unwrap().attr, None);
        assert_eq!(c.thread_views.as_ref().unwrap().count("1,204"), Some(1204));
        for (shown, n) in [
            ("1.2k", Some(1200)),
            ("3.5万", Some(35000)),
            (" 42 ", Some(42)),
            ("两百", None),
            ("", None),
            ("1.2x", None),
            ("7.0", Some(7)),
            ("18446744073709551615万", None),
        ] {
            assert_eq!(super::super::count_of(shown), n, "{shown:?}");
        }

        // Each mistake is a SiteError on its attribute, and its line.
        for (attrs, field, says) in [
            (r#"post-id-pattern="pid(\d+)""#, "post-id-pattern", "needs post-id="),
            (r#"location="span" location-pattern="(""#, "location-pattern", "bad regular expression"),
            (r#"edited="i..pstatus""#, "edited", "bad CSS selector"),
            (r#"links="a >> b""#, "links", "bad CSS selector"),
            (r#"images="@src""#, "images", "bad CSS selector"),
            (r#"thread-views-pattern="\d+""#, "thread-views-pattern", "needs thread-views="),
            (r#"post-views="span""#, "post-views", "unknown field"),
        ] {
            let e = with(attrs).unwrap_err();
            assert_eq!((e.field.as_str(), e.line), (field, 16), "{attrs}: {e}");
            assert!(e.message.contains(says), "{attrs}: {e}");
        }
        for attrs in [r#"author-id="a@href""#, r##"board-name="#pt a""##] {
            let e = parse(&DISCUZ.replace(rules, &format!(r##"<thread title="#thread_subject" post="auto" {attrs}/>"##))).unwrap_err();
            assert!(attrs.starts_with(&e.field) && e.message.contains("post=\"auto\""), "{e}");
        }
    }

    #[test]
    fn a_pattern_without_its_group_is_refused() {
        let e = parse(&DISCUZ.replace("fid={board}$", "fid=1$")).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("board", 9));
        assert!(e.message.contains("no `board` group"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = parse(&DISCUZ.replace("http://127.0.0.1:8080/dz/forum.php", "ftp://x/")).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("home", 4));
        let e = parse(&DISCUZ.replace("<encoding>gbk", "<encoding>klingon")).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("encoding", 5));
        let e = parse(&DISCUZ.replace(r#"concurrency="3""#, r#"concurrency="0""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("concurrency", 6));
        let e = parse(&DISCUZ.replace(r#"author="a.xw1""#, r#"author="a..xw1""#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("author", 16));
        let e = parse(&DISCUZ.replace(r#"<site id="dz">"#, r#"<site id="../etc">"#)).unwrap_err();
        assert_eq!(e.field, "id");
    }

    #[test]
    fn focus_settings_are_read_and_checked() {
        let s = parse(&discuz_with(r#"<focus alpha="0.4" threshold="0.25"><topic>考研 复试，导师</topic><url-word>kaoyan</url-word></focus>"#)).unwrap();
        let f = s.focus.unwrap();
        assert_eq!((f.alpha, f.threshold), (0.4, 0.25));
        assert_eq!(f.topics, ["考研", "复试", "导师"]);
        assert_eq!(f.url_words, ["kaoyan"]);
        let e = parse(&discuz_with(r#"<focus alpha="1.5"><topic>考研</topic></focus>"#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("alpha", 8));
        let e = parse(&discuz_with(r#"<focus/>"#)).unwrap_err();
        assert_eq!(e.field, "focus");
    }

    #[test]
    fn search_and_accounts_are_read_and_checked() {
        let s = parse(&discuz_with(
            r#"<search row="li.pbw" time="span.time" max-pages="20"><url><![CDATA[search.php?mod=forum&srchtxt={keyword}&page={page}]]></url></search>
  <account cookie="auth=abc; sid=1"/>
  <account name="bot2" login-url="member.php?mod=logging&amp;action=login"><field name="username">小明</field><field name="password">p&amp;w</field></account>"#,
        ))
        .unwrap();
        let sr = s.search.as_ref().unwrap();
        assert_eq!(sr.max_pages, 20);
        assert_eq!(sr.encoding, encoding_rs::GBK, "the site's encoding by default");
        assert_eq!(
            sr.page_url("考研", 3).unwrap().as_str(),
            "http://127.0.0.1:8080/dz/search.php?mod=forum&srchtxt=%BF%BC%D1%D0&page=3",
            "relative to home, keyword in GBK"
        );
        assert_eq!(s.accounts[0], Account { name: "account1".into(), auth: AccountAuth::Cookie("auth=abc; sid=1".into()) });
        match &s.accounts[1].auth {
            AccountAuth::Login { url, fields } => {
                assert_eq!(url.as_str(), "http://127.0.0.1:8080/dz/member.php?mod=logging&action=login");
                assert_eq!(fields, &[("username".to_string(), "小明".to_string()), ("password".to_string(), "p&w".to_string())]);
            }
            other => panic!("{other:?}"),
        }
        let e = parse(&discuz_with(r#"<search row="li" time="span"><url>search.php?q={keyword}</url></search>"#)).unwrap_err();
        assert_eq!((e.field.as_str(), e.line), ("url", 8));
        assert!(e.message.contains("next="), "{e}");
        let e = parse(&discuz_with(r#"<search row="li" time="span"><url>search.php?q=x&amp;page={page}</url></search>"#)).unwrap_err();
        assert!(e.message.contains("{keyword}"), "{e}");
        let e = parse(&discuz_with(r#"<account/>"#)).unwrap_err();
        assert_eq!(e.field, "account");
        let e = parse(&discuz_with(r#"<account login-url="/login"/>"#)).unwrap_err();
        assert!(e.message.contains("field"), "{e}");
    }
}
