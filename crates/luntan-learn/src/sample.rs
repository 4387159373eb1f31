//! The sample: a bounded, polite walk of a forum from its home page.
//!
//! Every request goes through luntan's [`Fetcher`] (robots.txt, the
//! site's delay, retries with backoff, size caps), one at a time. The walk
//! stays on the home page's host and under its directory, and spreads its
//! budget over kinds of URL: it always takes next the link whose kind
//! ([`Split::sample_key`]) it has fetched least, shallowest first, so a few
//! pages of every kind (boards, their later pages, threads, theirs) are
//! read before many of one.
//!
//! Pages beside the forum's structure ([`crate::aside`]: search, filtered and
//! sorted views, feeds, user pages, tags, print views, forms) are read
//! only once every other kind is read or capped, [`ASIDE_PER_KIND`] of
//! each at most and [`ASIDE_SHARE`] of the budget in all: a forum links
//! them from every page, in many variants, and they teach the learner
//! nothing about boards, lists or threads. A kind of link that lands on a
//! login form (a reply button, an edit history, a members' page: Spirit's
//! `/comment/3/publish/` → `/user/login/?next=…`) is asked no more: every
//! link of its kind would ask a guest to log in too. A kind whose first
//! [`REDIRECTS_SEEN`] pages all redirected to pages of other kinds (NodeBB's
//! `/post/12` → `/topic/3/slug/5`, `/uid/4` → `/user/name`) is asked no more
//! either: its links lead to pages the walk reaches by their own; nor is a
//! kind whose first [`REDIRECTS_SEEN`] pages all failed (Askbot's "close"
//! links, each sent to a login page that is not there: 15 requests).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use luntan_core::site::{Site, SiteError};
use luntan_crawl::fetch::Fetcher;
use luntan_crawl::links;
use scraper::Html;
use url::Url;

use crate::aside::{aside, is_login, Aside};
use crate::urls::Split;
use crate::LearnError;

/// Pages of one kind of aside page read at most.
pub const ASIDE_PER_KIND: usize = 2;
/// Share of `max_requests` aside pages may take, all kinds together.
pub const ASIDE_SHARE: f64 = 0.1;
/// Pages of one kind read, each redirected to a page of another kind (or
/// each failed), after which no more of that kind is asked.
pub const REDIRECTS_SEEN: usize = 3;

/// How far the walk goes and how politely.
#[derive(Debug, Clone)]
pub struct SampleConfig {
    pub home: Url,
    /// Requests at most (robots.txt and redirects count).
    pub max_requests: usize,
    /// Pages of one kind of URL at most.
    pub per_kind: usize,
    /// Between two requests to the forum.
    pub delay: Duration,
}

/// One link on a sampled page.
#[derive(Debug, Clone)]
pub struct Link {
    pub url: Url,
    pub text: String,
    /// `rel="next"` or `rel="prev"` on the link: a pager's, whatever its text.
    pub rel_pager: bool,
}

/// One page read.
#[derive(Debug, Clone)]
pub struct Page {
    /// The URL asked for.
    pub url: Url,
    /// Where it landed after redirects (`url` when none).
    pub landed: Url,
    pub depth: u32,
    /// Decoded as extract would decode it.
    pub html: String,
    pub links: Vec<Link>,
}

/// What the walk read.
#[derive(Debug)]
pub struct Sample {
    pub home: Url,
    pub pages: Vec<Page>,
    /// URLs that could not be read, with why.
    pub failed: Vec<(Url, String)>,
    /// Requests sent, robots.txt and redirects included.
    pub requests: u64,
    /// Aside pages linked but left unread, their caps reached.
    pub aside_left: usize,
    /// The site the fetcher ran under (politeness, hosts).
    pub site: Arc<Site>,
}

impl Sample {
    pub fn page(&self, url: &Url) -> Option<&Page> {
        self.pages.iter().find(|p| &p.url == url)
    }
}

/// The site the walk runs under: the home page, its politeness, no rules.
pub fn walking_site(home: &Url, delay: Duration) -> Result<Site, LearnError> {
    learner_site(home, delay, "").map_err(|e| LearnError::Home { url: home.to_string(), why: e.to_string() })
}

/// The walking site with a browser: what draws sampled articles in
/// Chromium ([`crate::comments::draw`]), every request through the same
/// politeness, the forum's host and `hosts` (a comment server's) allowed.
pub fn drawing_site(home: &Url, delay: Duration, hosts: &[String]) -> Result<Site, SiteError> {
    let allowed: String = hosts.iter().map(|h| format!("<allow-host>{}</allow-host>", crate::text(h))).collect();
    learner_site(home, delay, &format!("{allowed}<browser/>"))
}

fn learner_site(home: &Url, delay: Duration, extra: &str) -> Result<Site, SiteError> {
    let text = format!(
        r#"<site id="learn"><home>{}</home><politeness delay-ms="{}" concurrency="1"/>
  <links><board>^luntan-learn:{{board}}$</board><thread>^luntan-learn:{{thread}}$</thread></links>
  <thread post="auto"/>{extra}</site>"#,
        crate::text(home.as_str()),
        delay.as_millis()
    );
    Site::parse(&text, Path::new("luntan-learn"))
}

/// Links that act on the forum rather than show it.
fn unsafe_link(url: &Url) -> bool {
    let s = url.as_str().to_ascii_lowercase();
    ["logout", "signout", "delete", "action=del", "mod=logging&action=logout", "remove"].iter().any(|w| s.contains(w))
}

/// Every link of a page that landed at `landed`, in page order, resolved
/// as discover resolves it (`<base>` included), with its text and whether
/// it says it is a pager's: the links discover reads ([`links::each_link`]),
/// so those in `<noscript>` with their text and `<link rel="next|prev">`
/// (no text, a pager's) too.
pub(crate) fn page_links(site: &Site, html: &str, landed: &Url) -> Vec<Link> {
    let doc = Html::parse_document(html);
    let base = links::base_url(&doc, landed);
    let mut out = Vec::new();
    links::each_link(&doc, None, |a| {
        let rel = |word: &str| a.el.value().attr("rel").is_some_and(|r| r.split_whitespace().any(|w| w.eq_ignore_ascii_case(word)));
        // A link its page asks robots not to follow is an action (reply,
        // quote, "只看该作者", log in: WordPress's `?replytocom=<comment>`
        // would read as a pager), not the forum's structure: neither
        // walked nor weighed.
        if rel("nofollow") || a.el.value().attr("download").is_some() {
            return;
        }
        let Some(url) = links::resolve(site, &base, a.href) else { return };
        // A file to download is no page of the forum's (HyperKitty links
        // every thread's and month's `.mbox.gz`: 78 of 212 requests).
        if is_download(&url) {
            return;
        }
        let rel_pager = a.rel_link || rel("next") || rel("prev");
        out.push(Link { url, text: links::text_of(a.el), rel_pager });
    });
    out
}

/// Endings of files a forum offers to download (archives, documents,
/// media, programs), never one of its pages.
const DOWNLOADS: [&str; 31] = [
    "gz", "tgz", "bz2", "xz", "zip", "rar", "7z", "tar", "mbox", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "jpg", "jpeg", "png", "gif", "webp",
    "svg", "ico", "mp3", "mp4", "avi", "mov", "exe", "apk", "dmg", "torrent",
];

/// Whether `url` names a file to download by its path's ending.
fn is_download(url: &Url) -> bool {
    let last = url.path().rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && DOWNLOADS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Walks the forum from `cfg.home`; `progress(requests, url)` after each page.
pub async fn walk(cfg: &SampleConfig, mut progress: impl FnMut(u64, &Url)) -> Result<Sample, LearnError> {
    let site = Arc::new(walking_site(&cfg.home, cfg.delay)?);
    let fetcher = Fetcher::new(site.clone()).map_err(|e| LearnError::Home { url: cfg.home.to_string(), why: e.to_string() })?;
    let scope = {
        let p = cfg.home.path();
        p[..p.rfind('/').map_or(0, |i| i + 1)].to_owned()
    };
    let in_scope =
        |u: &Url| u.host_str() == cfg.home.host_str() && u.port_or_known_default() == cfg.home.port_or_known_default() && u.path().starts_with(&scope);

    let mut pages: Vec<Page> = Vec::new();
    let mut failed = Vec::new();
    let mut seen: HashSet<Url> = HashSet::from([cfg.home.clone()]);
    // (url, depth, order found, kind, aside); the next is a structural one
    // before any aside, then the one whose kind was read least, then the
    // shallowest, then the first found.
    let mut frontier: Vec<(Url, u32, usize, String, Option<Aside>)> = vec![(cfg.home.clone(), 0, 0, Split::of(&cfg.home).sample_key(), None)];
    let mut taken: HashMap<String, usize> = HashMap::new();
    // Per kind: its pages read that redirected to another kind's.
    let mut elsewhere: HashMap<String, usize> = HashMap::new();
    // Per kind: its pages that failed.
    let mut failing: HashMap<String, usize> = HashMap::new();
    let mut aside_taken: HashMap<Aside, usize> = HashMap::new();
    let aside_budget = ((cfg.max_requests as f64 * ASIDE_SHARE) as usize).max(1);
    let mut aside_left = 0;
    let mut found = 1usize;
    let requests = || fetcher.stats.requests.load(std::sync::atomic::Ordering::Relaxed);
    while !frontier.is_empty() && (requests() as usize) < cfg.max_requests {
        let best = (0..frontier.len())
            .min_by_key(|&i| {
                let (_, depth, order, key, beside) = &frontier[i];
                (beside.is_some(), taken.get(key).copied().unwrap_or(0), *depth, *order)
            })
            .expect("not empty");
        let (url, depth, _, key, beside) = frontier.swap_remove(best);
        if taken.get(&key).is_some_and(|&n| n >= cfg.per_kind) {
            continue;
        }
        if let Some(a) = beside {
            let full = aside_taken.get(&a).is_some_and(|&n| n >= ASIDE_PER_KIND) || aside_taken.values().sum::<usize>() >= aside_budget;
            if full {
                aside_left += 1;
                continue;
            }
            *aside_taken.entry(a).or_insert(0) += 1;
        }
        *taken.entry(key.clone()).or_insert(0) += 1;
        let got = match fetcher.get_html(&url).await {
            Ok(f) => f,
            Err(e) => {
                if depth == 0 {
                    return Err(LearnError::Home { url: url.to_string(), why: e.to_string() });
                }
                failed.push((url.clone(), e.to_string()));
                let n = failing.entry(key.clone()).or_insert(0);
                *n += 1;
                if *n >= REDIRECTS_SEEN && taken.get(&key).copied() == Some(*n) {
                    taken.insert(key, cfg.per_kind);
                }
                progress(requests(), &url);
                continue;
            }
        };
        if asks_to_log_in(&url, &got.url) {
            taken.insert(key.clone(), cfg.per_kind);
        }
        if got.url != url && Split::of(&got.url).sample_key() != key {
            let n = elsewhere.entry(key.clone()).or_insert(0);
            *n += 1;
            // Every page of the kind read so far went elsewhere.
            if *n >= REDIRECTS_SEEN && taken.get(&key).copied() == Some(*n) {
                taken.insert(key, cfg.per_kind);
            }
        }
        let html = links::decode(&site, &got.body, got.content_type.as_deref());
        let out = page_links(&site, &html, &got.url);
        for link in out.iter().map(|l| &l.url) {
            if in_scope(link) && !unsafe_link(link) && seen.insert(link.clone()) {
                frontier.push((link.clone(), depth + 1, found, Split::of(link).sample_key(), aside(link)));
                found += 1;
            }
        }
        progress(requests(), &url);
        pages.push(Page { url, landed: got.url, depth, html, links: out });
    }
    aside_left += frontier.iter().filter(|f| f.4.is_some()).count();
    Ok(Sample { home: cfg.home.clone(), pages, failed, requests: requests(), aside_left, site })
}

/// Whether asking `asked` landed on a login form (`landed`, after
/// redirects) that the link itself did not name.
fn asks_to_log_in(asked: &Url, landed: &Url) -> bool {
    landed != asked && is_login(landed) && !is_login(asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_redirected_to_a_login_form_asks_to_log_in_and_a_login_link_does_not() {
        let u = |s: &str| Url::parse(&format!("http://forum.test{s}")).unwrap();
        assert!(asks_to_log_in(&u("/comment/3/publish/"), &u("/user/login/?next=/comment/3/publish/")));
        assert!(asks_to_log_in(&u("/comment/history/12/"), &u("/member.php?mod=logging&action=login")));
        assert!(!asks_to_log_in(&u("/topic/3/abc/"), &u("/topic/3/abc-def/")), "a slug corrected");
        assert!(!asks_to_log_in(&u("/topic/3/abc/"), &u("/topic/3/abc/")));
        assert!(!asks_to_log_in(&u("/login"), &u("/user/login/")), "the link named it: an aside already");
        assert!(!asks_to_log_in(&u("/topic/3/"), &u("/topic/3/loginless-tips/")), "a slug that merely starts with the word");
    }

    #[test]
    fn files_to_download_are_no_links_of_the_forums() {
        for (u, want) in [
            ("http://h/list/a@b/2026/9.mbox.gz", true),
            ("http://h/attachment/report.PDF", true),
            ("http://h/thread-12-1-1.html", false),
            ("http://h/forum.php?mod=attachment&aid=5", false),
            ("http://h/topic/12/", false),
            ("http://h/.gz", false),
        ] {
            assert_eq!(is_download(&Url::parse(u).unwrap()), want, "{u}");
        }
    }

    #[test]
    fn the_sample_sees_noscript_links_and_link_rel_pagers() {
        let home = Url::parse("http://forum.test/").unwrap();
        let site = walking_site(&home, Duration::ZERO).unwrap();
        let html = r#"<html><head><link rel="next" href="/category/2/news?page=2"><link rel="stylesheet" href="/app.css"></head>
            <body><div id="app"></div><noscript><a href="/topic/7/hello">你好</a>
            <ul class="pagination"><li><a href="/category/2/news?page=3">3</a></ul></noscript><a rel="prev" href="/category/2/news?page=0">上一页</a></body></html>"#;
        let links = page_links(&site, html, &home.join("/category/2/news").unwrap());
        let got: Vec<(&str, &str, bool)> = links.iter().map(|l| (&l.url[url::Position::BeforePath..], &*l.text, l.rel_pager)).collect();
        assert_eq!(
            got,
            [
                ("/category/2/news?page=2", "", true),
                ("/topic/7/hello", "你好", false),
                ("/category/2/news?page=3", "3", false),
                ("/category/2/news?page=0", "上一页", true),
            ]
        );
    }
}
