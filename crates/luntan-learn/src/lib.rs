//! luntan-learn: a working site file from a forum's home URL, with no
//! regular expression or selector written by hand (after FoCUS, Cai et
//! al., WWW'08, and S4's template extraction, `../shared/SEEDS.md`).
//!
//! - [`sample::walk`] reads a bounded sample of the forum through
//!   luntan's `Fetcher` (robots.txt, the delay, retries), a few pages of
//!   every kind of URL, and last a few of the pages beside the forum's
//!   structure ([`aside`]: search, feeds, user pages, forms).
//! - [`learn::learn`] finds the thread pages by layout (repeated dated
//!   posts), the pagers by URL (one number changed, added or dropped), the
//!   board lists by their links to threads, and turns what it found into
//!   anchored link patterns ([`urls`]) and CSS selectors ([`select`]).
//! - [`Learned::site_file`] writes it in today's format, naming in a
//!   comment what could not be learned; [`check`] loads it back and runs
//!   discover's link reading and extract's page parser over the sample.
//! - [`diagnose::diagnose`] says, when learning fails, what the sample
//!   holds and what each step weighed; [`learn::learn_partial`] writes what
//!   could be learned, to finish by hand.
//!
//! ```
//! use luntan_learn::urls::{Split, Pos};
//! let s = Split::of(&url::Url::parse("http://bbs.example/thread-77-2-1.html").unwrap());
//! assert_eq!(s.shape().key(), "/thread-#-#-#.html");
//! assert_eq!(s.get(&Pos::Seg(0, 3)), Some("2"));
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use luntan_core::escape::{escape, Escape};
use luntan_core::Site;
use luntan_crawl::links;
use scraper::Html;
use url::Url;

pub mod aside;
pub mod comments;
mod converse;
pub mod diagnose;
pub mod learn;
pub mod sample;
pub mod select;
pub mod urls;

/// Why no site file could be learned. Each names the URL or what is missing.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error("{url}: {why}")]
    Home { url: String, why: String },
    #[error("could not learn the {what}: {why}")]
    Unlearnable { what: String, why: String },
    #[error("the learned site file does not load: {0}")]
    Invalid(String),
}

/// One learned link pattern and URLs it came from.
#[derive(Debug, Clone)]
pub struct LearnedLink {
    /// `board`, `board-page`, `thread` or `thread-page`.
    pub element: &'static str,
    pub pattern: String,
    /// The first page's value, for page patterns.
    pub first: Option<u64>,
    pub examples: Vec<String>,
}

/// One learned selector (`post="div.post"`) and elements it came from.
#[derive(Debug, Clone)]
pub struct Field {
    pub attr: &'static str,
    pub css: String,
    pub examples: Vec<String>,
}

/// A learned site file.
#[derive(Debug, Clone)]
pub struct Learned {
    pub id: String,
    /// Empty: learned from the page titles.
    pub name: String,
    pub home: Url,
    pub delay: Duration,
    pub links: Vec<LearnedLink>,
    /// `row`, then `title`, `replies`, `last-post` where learned.
    pub list: Option<Vec<Field>>,
    /// `title`, `post`, then `body`, `author`, `time`, `floor` where learned.
    pub thread: Vec<Field>,
    /// What could not be learned, one line each.
    pub missing: Vec<String>,
    pub max_board_pages: Option<u32>,
    /// Groups whose links name a board or thread by a slug no id can be
    /// (`<links hashed="thread">`): `board`, `thread`.
    pub hashed: Vec<&'static str>,
    /// Comments the article pages' scripts load as JSON ([`comments`]).
    pub comments: Option<comments::LearnedComments>,
    /// Parameters a thread is asked for with (`<thread add-query>`): the
    /// plain thread pages' own variant that shows every post (`noscript`).
    pub thread_query: Option<String>,
    /// Boards one page past the home page (`<board depth="1">`): the home
    /// page links pages that each link their board's list at their own URL
    /// plus this path segment (a mailing-list archive's overview and its
    /// `latest` index, [`learn::board_hub`]).
    pub board_hub: Option<String>,
    /// Hosts besides the forum's its pages are read from (`<allow-host>`:
    /// a comment server's).
    pub allow_hosts: Vec<String>,
    /// Pages read and requests sent for the sample (and to draw articles).
    pub pages: usize,
    pub requests: u64,
}

impl Learned {
    pub fn new(id: &str, name: Option<&str>, home: Url, delay: Duration) -> Learned {
        Learned {
            id: id.to_owned(),
            name: name.unwrap_or_default().to_owned(),
            home,
            delay,
            links: Vec::new(),
            list: None,
            thread: Vec::new(),
            missing: Vec::new(),
            max_board_pages: None,
            hashed: Vec::new(),
            thread_query: None,
            board_hub: None,
            comments: None,
            allow_hosts: Vec::new(),
            pages: 0,
            requests: 0,
        }
    }

    /// The site file, in the format `Site::parse` reads.
    pub fn site_file(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(out, "<!-- Learned by luntan-learn from {} pages of {} ({} requests). -->", self.pages, comment(self.home.as_str()), self.requests);
        for m in &self.missing {
            let _ = writeln!(out, "<!-- Check: {} -->", comment(m));
        }
        let _ = writeln!(out, "<site id=\"{}\">", attr(&self.id));
        let _ = writeln!(out, "  <name>{}</name>", text(&self.name));
        let _ = writeln!(out, "  <home>{}</home>", text(self.home.as_str()));
        let _ = writeln!(out, "  <politeness delay-ms=\"{}\"/>", self.delay.as_millis());
        for h in &self.allow_hosts {
            let _ = writeln!(out, "  <allow-host>{}</allow-host>", text(h));
        }
        if let Some(n) = self.max_board_pages {
            let _ = writeln!(out, "  <max-board-pages>{n}</max-board-pages>");
        }
        let hashed = if self.hashed.is_empty() { String::new() } else { format!(" hashed=\"{}\"", self.hashed.join(" ")) };
        let _ = writeln!(out, "  <links{hashed}>");
        for l in &self.links {
            let first = l.first.filter(|&f| f != 1).map(|f| format!(" first=\"{f}\"")).unwrap_or_default();
            let added = match (&self.thread_query, &self.board_hub, l.element) {
                (Some(q), _, "thread") => format!(" add-query=\"{}\"", attr(q)),
                (_, Some(_), "board") => " depth=\"1\"".to_owned(),
                _ => String::new(),
            };
            let _ = writeln!(out, "    <{}{first}{added}><![CDATA[{}]]></{}>", l.element, l.pattern, l.element);
        }
        out.push_str("  </links>\n");
        let attrs = |fields: &[Field]| fields.iter().map(|f| format!(" {}=\"{}\"", f.attr, attr(&f.css))).collect::<String>();
        if let Some(list) = &self.list {
            let _ = writeln!(out, "  <list{}/>", attrs(list));
        }
        let _ = writeln!(out, "  <thread{}/>", attrs(&self.thread));
        if let Some(c) = &self.comments {
            let _ = writeln!(out, "{}", c.element());
        }
        out.push_str("</site>\n");
        out
    }

    /// `--explain`: each rule and what it was learned from.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        for l in &self.links {
            let _ = writeln!(out, "{}: {}", l.element, l.pattern);
            if let Some(f) = l.first {
                let _ = writeln!(out, "  first page: {f}");
            }
            if let (Some(q), "thread") = (&self.thread_query, l.element) {
                let _ = writeln!(out, "  asked for with {q} added: the pages that read as threads are these with it, each linked from its plain page");
            }
            if let (Some(h), "board") = (&self.board_hub, l.element) {
                let _ = writeln!(
                    out,
                    "  one page past the home page: it links pages that each link their board at their URL plus {h}, read as boards of their own"
                );
            }
            for e in &l.examples {
                let _ = writeln!(out, "  from {e}");
            }
        }
        for (what, fields) in [("list", self.list.as_deref().unwrap_or_default()), ("thread", &self.thread[..])] {
            for f in fields {
                let _ = writeln!(out, "{what} {}: {}", f.attr, f.css);
                for e in &f.examples {
                    let _ = writeln!(out, "  from {e}");
                }
            }
        }
        if let Some(c) = &self.comments {
            let _ = writeln!(out, "comments: {}", c.url);
            for (name, value) in &c.attrs {
                let _ = writeln!(out, "  {name}: {value}");
            }
            for e in &c.examples {
                let _ = writeln!(out, "  from {e}");
            }
        }
        for m in &self.missing {
            let _ = writeln!(out, "check: {m}");
        }
        out
    }
}

fn comment(s: &str) -> String {
    s.replace("--", "- -")
}

fn attr(s: &str) -> String {
    escape(s, Escape::XmlAttribute).into_owned()
}

fn text(s: &str) -> String {
    escape(s, Escape::XmlText).into_owned()
}

/// What the learned file reads from the sample.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Check {
    /// Boards the home page links to.
    pub boards: usize,
    /// List pages read, and the threads they list.
    pub lists: usize,
    pub threads: usize,
    /// Thread pages read, those with posts, and their posts.
    pub thread_pages: usize,
    pub pages_with_posts: usize,
    pub posts: usize,
    /// Posts without an author or a time.
    pub no_author: usize,
    pub no_time: usize,
    /// Where the file is unusable: the page that came nearest to what is
    /// missing, and how near (`http://…/category/2: 5 links of the
    /// thread pattern, none in a list row`).
    pub nearest: Option<String>,
}

impl Check {
    /// What makes the file unusable, if anything.
    pub fn unusable(&self) -> Option<String> {
        let why = if self.boards == 0 {
            "the home page links to no board"
        } else if self.threads == 0 {
            "no list page read lists a thread"
        } else if self.posts == 0 {
            "no thread page read yields a post"
        } else {
            return None;
        };
        Some(match &self.nearest {
            Some(n) => format!("{why} ({n})"),
            None => why.to_owned(),
        })
    }

    /// The problems worth a line even when the file is usable.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.pages_with_posts < self.thread_pages {
            out.push(format!("{} of {} thread pages read yield no post", self.thread_pages - self.pages_with_posts, self.thread_pages));
        }
        if self.no_author > 0 {
            out.push(format!("{} of {} posts have no author", self.no_author, self.posts));
        }
        if self.no_time > 0 {
            out.push(format!("{} of {} posts have no time", self.no_time, self.posts));
        }
        out
    }
}

/// Loads `text` as a site file and reads the sample with it as discover
/// (board links, list rows) and extract (posts) would.
pub fn check(text: &str, sample: &sample::Sample) -> Result<Check, LearnError> {
    let site = Site::parse(text, Path::new("learned.xml")).map_err(|e| LearnError::Invalid(e.to_string()))?;
    let mut c = Check::default();
    for p in &sample.pages {
        let doc = Html::parse_document(&p.html);
        let base = links::base_url(&doc, &p.landed);
        // The home page counts where it landed (`/` redirected to
        // `/forum.php`), as discover reads it; other pages reached by a
        // redirect are lookalikes.
        if p.depth == 0 {
            c.boards = links::board_links(&site, &doc, &base).0.len();
        }
        if p.landed != p.url {
            continue;
        }
        let url = p.url.as_str();
        let l = &site.links;
        let ok = |pat: Option<&luntan_core::site::LinkPattern>| pat.and_then(|x| x.captures(url)).is_some_and(|m| m.is_ok());
        if ok(Some(&l.board)) || ok(l.board_page.as_ref()) {
            c.lists += 1;
            c.threads += links::list_threads(&site, &doc, &base).0.len();
        }
        let first_page = ok(Some(&l.thread));
        if first_page || ok(l.thread_page.as_ref()) {
            // A thread asked for with parameters added (`add-query`) is
            // read as the sample read that URL, where it did.
            let asked = if first_page { l.thread_request(&p.url) } else { p.url.clone() };
            let html = match asked == p.url {
                true => &p.html,
                false => match sample.pages.iter().find(|q| q.url == asked && q.landed == asked) {
                    Some(q) => &q.html,
                    None => continue,
                },
            };
            c.thread_pages += 1;
            let posts = luntan_extract::parse_page(&site, html).posts;
            c.pages_with_posts += !posts.is_empty() as usize;
            c.posts += posts.len();
            c.no_author += posts.iter().filter(|p| p.author.is_empty()).count();
            c.no_time += posts.iter().filter(|p| p.time.is_none()).count();
        }
    }
    c.nearest = nearest(&c, &site, sample);
    Ok(c)
}

/// For [`Check::unusable`]'s reason: of the pages read, the one that
/// came nearest to what the file fails to find, and how near.
fn nearest(c: &Check, site: &Site, sample: &sample::Sample) -> Option<String> {
    let l = &site.links;
    let ok = |pat: Option<&luntan_core::site::LinkPattern>, url: &str| pat.and_then(|x| x.captures(url)).is_some_and(|m| m.is_ok());
    let direct = || sample.pages.iter().filter(|p| p.landed == p.url);
    // The first of the most.
    fn best(counts: Vec<(&sample::Page, usize)>) -> Option<(&sample::Page, usize)> {
        counts.into_iter().enumerate().max_by_key(|(i, (_, n))| (*n, std::cmp::Reverse(*i))).map(|(_, x)| x)
    }
    fn parsed(p: &sample::Page) -> (Html, Url) {
        let doc = Html::parse_document(&p.html);
        let base = links::base_url(&doc, &p.landed);
        (doc, base)
    }
    if c.boards == 0 {
        let counts = sample
            .pages
            .iter()
            .map(|p| {
                let (doc, base) = parsed(p);
                (p, links::board_links(site, &doc, &base).0.len())
            })
            .collect();
        return Some(match best(counts) {
            Some((p, n)) if n > 0 => format!("nearest: {} links to {n} boards", p.url),
            _ => "no page read links to a URL of the board pattern".into(),
        });
    }
    if c.threads == 0 {
        let lists: Vec<&sample::Page> = direct().filter(|p| ok(Some(&l.board), p.url.as_str()) || ok(l.board_page.as_ref(), p.url.as_str())).collect();
        let counts = lists
            .iter()
            .map(|p| {
                let (doc, base) = parsed(p);
                let linked: std::collections::HashSet<_> =
                    links::scan(site, &doc, None, &base, &l.thread).matched.into_iter().filter_map(|m| m.m.thread.map(|t| t.to_string())).collect();
                (*p, linked.len())
            })
            .collect();
        return Some(match best(counts) {
            Some((p, n)) if n > 0 => format!("nearest: {}: {n} links of the thread pattern, none in a list row", p.url),
            Some((p, _)) => format!("nearest: {}: no link of the thread pattern", p.url),
            None => "no page read matches the board patterns".into(),
        });
    }
    if c.posts == 0 {
        let threads: Vec<&sample::Page> = direct().filter(|p| ok(Some(&l.thread), p.url.as_str()) || ok(l.thread_page.as_ref(), p.url.as_str())).collect();
        let counts = threads.iter().map(|p| (*p, luntan_extract::template::records(&Html::parse_document(&p.html), None).0.len())).collect();
        return Some(match best(counts) {
            Some((p, n)) if n > 0 => format!("nearest: {}: the template finds {n} records, the post rules none", p.url),
            Some((p, _)) => format!("nearest: {}: no records", p.url),
            None => "no page read matches the thread patterns".into(),
        });
    }
    None
}
