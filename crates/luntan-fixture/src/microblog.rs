//! Pages drawn by JavaScript (S4): two sites whose HTML holds no posts.
//!
//! - `mb` (`/mb/`), a microblog in the style of Weibo's mobile site: an
//!   HTML shell and a few KB of script that load JSON timelines with cursor
//!   paging (`since_id`), render posts, load comments page by page on click
//!   (`max_id`), expand truncated long posts ("展开全文") through another
//!   XHR, and scroll without end (the next page is asked for when an
//!   IntersectionObserver sees the timeline's end in view, as many sites do
//!   now, not on a `scroll` event: a timeline shorter than the window goes
//!   on loading by itself). Users are found through reposts,
//!   @mentions and comments; only two are linked from the home page. JSON
//!   is written as Weibo writes it: every non-ASCII character and `/` as a
//!   `\u`/`\/` escape, HTML inside `text` fields, times relative to the
//!   server's clock ("刚刚", "3分钟前", "今天 08:05", "昨天 12:30",
//!   "11月28日 08:00", "2023-05-06 07:08"). The clock is fixed
//!   ([`NOW`], sent as the `Date` header), so pages are repeatable.
//! - `xhr` (`/xhr/`), a forum whose thread page never changes its URL: its
//!   replies come by XHR, ten a page, asked for by relative URL (so a page
//!   must know where it is: `/xhr/go?tid=N`, a short link, redirects to
//!   it from one level up). Its JSON uses offset paging for
//!   thread lists, page numbers for replies, and ISO, epoch-second and
//!   epoch-millisecond times.
//!
//! One state repeats on purpose: a microblog post's first comments page is
//! served both by `comments/hotflow` and by `comments/show?page=1` (the
//! shell's two tabs), so a browser crawl has a duplicate state to drop.
//!
//! Everything follows from the seed; [`truth`] says what a crawl must find.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::corpus::{nickname, reviews, Script};
use crate::text::{civil, esc_into, minutes_of, rng, Civil};

/// The server's clock for both sites: 2024-12-01 10:00 in UTC+8.
pub const NOW: (i64, u32, u32, u32, u32) = (2024, 12, 1, 10, 0);
/// [`NOW`] as HTTP sends it.
pub const DATE_HEADER: &str = "Sun, 01 Dec 2024 02:00:00 GMT";
/// Minutes east of UTC of the sites' clocks.
pub const UTC_OFFSET_MINUTES: i64 = 480;

const USERS: usize = 10;
const TIMELINE_PAGE: usize = 4;
const COMMENTS_PAGE: usize = 10;
const XHR_BOARDS: &[(&str, &str)] = &[("1", "灌水区"), ("2", "读书会")];
const XHR_THREADS_PER_BOARD: usize = 6;
const XHR_LIST_LIMIT: usize = 4;
const XHR_REPLIES_PAGE: usize = 10;

/// A run of a paragraph: plain text, or an @mention of a user.
#[derive(Debug, Clone)]
enum Run {
    Text(String),
    Mention(usize),
}

type Para = Vec<Run>;

#[derive(Debug, Clone)]
struct User {
    id: u64,
    name: String,
    followers: u64,
    /// Indices into `posts`, newest first.
    posts: Vec<usize>,
}

#[derive(Debug, Clone)]
struct Comment {
    id: u64,
    user: usize,
    time: u32,
    paras: Vec<Para>,
}

#[derive(Debug, Clone)]
struct MbPost {
    id: u64,
    user: usize,
    time: u32,
    paras: Vec<Para>,
    repost_of: Option<usize>,
    comments: Vec<Comment>,
}

#[derive(Debug, Clone)]
struct XhrPost {
    author: String,
    time: u32,
    paras: Vec<String>,
}

#[derive(Debug, Clone)]
struct XhrThread {
    tid: u64,
    board: usize,
    title: String,
    posts: Vec<XhrPost>,
}

/// Both sites' content.
#[derive(Debug, Clone)]
pub struct Microblog {
    now: u32,
    users: Vec<User>,
    posts: Vec<MbPost>,
    xhr: Vec<XhrThread>,
}

/// The model for a seed, built once per process.
pub fn model(seed: u64) -> Arc<Microblog> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Arc<Microblog>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    cache.entry(seed).or_insert_with(|| Arc::new(Microblog::new(seed))).clone()
}

fn chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect::<String>().trim().to_owned()
}

fn review(r: &mut fastrand::Rng, n: usize) -> String {
    let lines = reviews();
    chars(lines[r.usize(0..lines.len())], n)
}

fn text_of(p: &Para, users: &[User]) -> String {
    p.iter()
        .map(|run| match run {
            Run::Text(t) => t.clone(),
            Run::Mention(u) => format!("@{}", users[*u].name),
        })
        .collect()
}

impl Microblog {
    fn new(seed: u64) -> Microblog {
        let now = minutes_of(NOW.0, NOW.1, NOW.2, NOW.3, NOW.4);
        let mut r = rng(&[seed, 0x4D42]);
        let mut names: Vec<String> = Vec::new();
        while names.len() < USERS {
            let n = nickname(Script::Simplified, &mut r);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let mut users: Vec<User> =
            names.into_iter().enumerate().map(|(i, name)| User { id: 1001 + i as u64, name, followers: r.u64(10..100_000), posts: Vec::new() }).collect();
        // Ages in minutes before NOW, in buckets that exercise every way the
        // server writes a time: just now, minutes ago, today, yesterday,
        // earlier this year, last year.
        let age = |r: &mut fastrand::Rng| -> u32 {
            match r.u32(0..20) {
                0 => 0,
                1..=2 => r.u32(1..60),
                3..=5 => r.u32(60..600),
                6..=8 => 600 + r.u32(0..1440),
                9..=17 => 2040 + r.u32(0..60 * 24 * 60),
                _ => 60 * 24 * 400 + r.u32(0..60 * 24 * 200),
            }
        };
        let mut drafts: Vec<(u32, usize, Vec<Para>)> = Vec::new();
        for (ui, _) in users.iter().enumerate() {
            for _ in 0..r.usize(4..9) {
                let long = r.u32(0..10) < 3;
                let paras: Vec<Para> =
                    if long { (0..r.usize(2..4)).map(|_| vec![Run::Text(review(&mut r, 90))]).collect() } else { vec![vec![Run::Text(review(&mut r, 60))]] };
                drafts.push((now - age(&mut r), ui, paras));
            }
        }
        drafts.sort_by_key(|d| (d.0, d.1));
        let mut posts: Vec<MbPost> = drafts
            .into_iter()
            .enumerate()
            .map(|(i, (time, user, paras))| MbPost { id: 5_100_000 + 7 * i as u64, user, time, paras, repost_of: None, comments: Vec::new() })
            .collect();
        // Who leads to whom: each user after the two seeds is mentioned,
        // reposted or a commenter under an earlier user's post, so every
        // user is reachable; users 2–5 from the seeds, 6 on from users 2–5.
        for u in 2..USERS {
            let from = if u < 6 { u % 2 } else { 2 + u % 4 };
            // Carriers are posts no other link was put in, so none is overwritten.
            let carrier: Vec<usize> =
                posts.iter().enumerate().filter(|(_, p)| p.user == from && p.repost_of.is_none() && p.paras[0].len() == 1).map(|(i, _)| i).collect();
            let at = carrier[r.usize(0..carrier.len())];
            match u % 3 {
                0 => posts[at].paras[0].push(Run::Mention(u)),
                1 => {
                    // A repost: the carrier becomes a repost of one of u's posts older than it.
                    let older: Vec<usize> = posts.iter().enumerate().filter(|(i, p)| p.user == u && *i < at).map(|(i, _)| i).collect();
                    match older.first() {
                        Some(&o) => {
                            posts[at].repost_of = Some(o);
                            posts[at].paras = vec![vec![Run::Text("转发微博 ".into()), Run::Mention(u)]];
                        }
                        None => posts[at].paras[0].push(Run::Mention(u)),
                    }
                }
                _ => {
                    let t = (posts[at].time + 1 + r.u32(0..30)).min(now);
                    posts[at].comments.push(Comment { id: 0, user: u, time: t, paras: vec![] });
                }
            }
        }
        // Comments: up to 23 per post, oldest first. Commenters (and the
        // users they reply to) come from the author's circle, users 0–5 for
        // users up to 5, so users 6 on stay two hops from the seeds.
        let mut next_comment = 8_800_000u64;
        for p in &mut posts {
            let circle = (p.user + 1).clamp(6, USERS);
            let n = if r.u32(0..5) == 0 { 0 } else { r.usize(1..24) };
            for _ in 0..n {
                let span = now - p.time;
                let t = p.time + if span == 0 { 0 } else { r.u32(0..=span) };
                p.comments.push(Comment { id: 0, user: r.usize(0..circle), time: t, paras: vec![] });
            }
            p.comments.sort_by_key(|c| c.time);
            for c in &mut p.comments {
                next_comment += 1 + r.u64(0..5);
                c.id = next_comment;
                let mut para = Vec::new();
                if r.u32(0..4) == 0 {
                    para.push(Run::Text("回复".into()));
                    para.push(Run::Mention(r.usize(0..circle)));
                    para.push(Run::Text(":".into()));
                }
                para.push(Run::Text(review(&mut r, 40)));
                c.paras = vec![para];
            }
        }
        for (i, p) in posts.iter().enumerate().rev() {
            users[p.user].posts.push(i);
        }
        let xhr = xhr_threads(&mut r, now);
        Microblog { now, users, posts, xhr }
    }

    // ------------------------------------------------------------ truth

    fn post_truth(&self, p: &MbPost) -> crate::ThreadTruth {
        let text = |paras: &[Para]| paras.iter().map(|q| text_of(q, &self.users)).collect::<Vec<_>>().join("\n");
        let mut posts = vec![crate::PostTruth::plain(1, &self.users[p.user].name, p.time, text(&p.paras))];
        for (i, c) in p.comments.iter().enumerate() {
            posts.push(crate::PostTruth::plain(i as u32 + 2, &self.users[c.user].name, c.time, text(&c.paras)));
        }
        let user = &self.users[p.user];
        crate::ThreadTruth {
            site: "mb".into(),
            board: user.id.to_string(),
            thread: p.id.to_string(),
            url_path: format!("/mb/status/{}", p.id),
            title: String::new(),
            deleted: false,
            unservable: None,
            on_topic: false,
            replies: p.comments.len() as u32,
            last_post: civil(p.comments.last().map_or(p.time, |c| c.time)).iso(),
            pages: 1 + p.comments.len().div_ceil(COMMENTS_PAGE) as u32,
            posts,
            ..Default::default()
        }
    }

    /// Hops from the two seed users, following what a crawler can see:
    /// reposted authors, mentions and commenters.
    fn depths(&self) -> Vec<Option<u32>> {
        let mut depth = vec![None; USERS];
        let mut queue = VecDeque::from([(0usize, 0u32), (1, 0)]);
        while let Some((u, d)) = queue.pop_front() {
            if depth[u].is_some() {
                continue;
            }
            depth[u] = Some(d);
            for &pi in &self.users[u].posts {
                let p = &self.posts[pi];
                let mut next: Vec<usize> = p.comments.iter().map(|c| c.user).collect();
                if let Some(o) = p.repost_of {
                    next.push(self.posts[o].user);
                }
                for para in p.paras.iter().chain(p.comments.iter().flat_map(|c| c.paras.iter())) {
                    next.extend(para.iter().filter_map(|r| if let Run::Mention(m) = r { Some(*m) } else { None }));
                }
                queue.extend(next.into_iter().filter(|n| depth[*n].is_none()).map(|n| (n, d + 1)));
            }
        }
        depth
    }

    pub fn truth(&self) -> MicroblogTruth {
        let depths = self.depths();
        let users = self
            .users
            .iter()
            .zip(&depths)
            .map(|(u, d)| UserTruth {
                id: u.id.to_string(),
                name: u.name.clone(),
                followers: u.followers,
                depth: *d,
                posts: u.posts.iter().map(|&i| self.posts[i].id.to_string()).collect(),
            })
            .collect();
        let mut threads: Vec<crate::ThreadTruth> = self.posts.iter().map(|p| self.post_truth(p)).collect();
        threads.sort_by_key(|t| t.thread.parse::<u64>().unwrap_or(0));
        let mb = crate::ForumTruth { site: "mb".into(), name: "微博".into(), encoding: "UTF-8".into(), boards: Vec::new(), threads };
        let xhr_threads = self
            .xhr
            .iter()
            .map(|t| crate::ThreadTruth {
                site: "xhr".into(),
                board: XHR_BOARDS[t.board].0.into(),
                thread: t.tid.to_string(),
                url_path: format!("/xhr/thread/{}", t.tid),
                title: t.title.clone(),
                deleted: false,
                unservable: None,
                on_topic: false,
                replies: t.posts.len() as u32 - 1,
                last_post: civil(t.posts.last().map_or(0, |p| p.time)).iso(),
                pages: 1 + (t.posts.len() - 1).div_ceil(XHR_REPLIES_PAGE) as u32,
                posts: t.posts.iter().enumerate().map(|(i, p)| crate::PostTruth::plain(i as u32 + 1, &p.author, p.time, p.paras.join("\n"))).collect(),
                ..Default::default()
            })
            .collect();
        let xhr = crate::ForumTruth { site: "xhr".into(), name: "异步论坛".into(), encoding: "UTF-8".into(), boards: Vec::new(), threads: xhr_threads };
        MicroblogTruth { now: civil(self.now).iso(), seeds: vec!["1001".into(), "1002".into()], users, forums: vec![mb, xhr] }
    }

    // ------------------------------------------------------------ pages

    /// The response for a path under `/mb/` or `/xhr/`: (status, content type, body).
    pub fn get(&self, path: &str, query: &str) -> Option<(u16, &'static str, Vec<u8>)> {
        let q: BTreeMap<&str, &str> = query.split('&').filter_map(|kv| kv.split_once('=')).collect();
        let num = |k: &str| q.get(k).and_then(|v| v.parse::<u64>().ok());
        let json = |v: serde_json::Value| Some((200, "application/json; charset=utf-8", weibo_json(&v).into_bytes()));
        let html = |s: String| Some((200, "text/html; charset=utf-8", s.into_bytes()));
        match path {
            "/mb/" => html(shell("微博", "home", "1001,1002")),
            "/mb/api/container/getIndex" => {
                let u = self.user(num("uid")?)?;
                let before = num("since_id").filter(|&c| c > 0);
                let mine: Vec<&MbPost> = u.posts.iter().map(|&i| &self.posts[i]).filter(|p| before.is_none_or(|b| p.id < b)).collect();
                let page: Vec<&MbPost> = mine.iter().take(TIMELINE_PAGE).copied().collect();
                let cards: Vec<serde_json::Value> = page.iter().map(|p| serde_json::json!({"card_type": 9, "mblog": self.mblog(p, true)})).collect();
                let mut info = serde_json::json!({"total": u.posts.len()});
                if mine.len() > TIMELINE_PAGE {
                    info["since_id"] = serde_json::json!(page.last()?.id);
                }
                json(serde_json::json!({"ok": 1, "data": {"cardlistInfo": info, "cards": cards, "userInfo": self.user_json(u)}}))
            }
            "/mb/api/statuses/show" => json(serde_json::json!({"ok": 1, "data": self.mblog(self.post(num("id")?)?, false)})),
            "/mb/api/statuses/extend" => {
                let p = self.post(num("id")?)?;
                json(serde_json::json!({"ok": 1, "data": {"ok": 1, "longTextContent": self.html_of(&p.paras)}}))
            }
            "/mb/api/comments/hotflow" => {
                let p = self.post(num("id")?)?;
                let after = num("max_id").unwrap_or(0);
                let rest: Vec<&Comment> = p.comments.iter().filter(|c| c.id > after).collect();
                let page: Vec<&Comment> = rest.iter().take(COMMENTS_PAGE).copied().collect();
                let next = if rest.len() > COMMENTS_PAGE { page.last()?.id } else { 0 };
                let data: Vec<serde_json::Value> = page.iter().map(|c| self.comment_json(c)).collect();
                json(serde_json::json!({"ok": 1, "data": {"data": data, "max_id": next, "total_number": p.comments.len(), "max_id_type": 0}}))
            }
            // The "by time" tab: the same comments by page number, so its
            // page 1 is the hotflow's first page again.
            "/mb/api/comments/show" => {
                let p = self.post(num("id")?)?;
                let n = num("page").unwrap_or(1).max(1) as usize;
                let data: Vec<serde_json::Value> = p.comments.iter().skip((n - 1) * COMMENTS_PAGE).take(COMMENTS_PAGE).map(|c| self.comment_json(c)).collect();
                json(serde_json::json!({"ok": 1, "data": {"data": data, "total_number": p.comments.len()}}))
            }
            "/xhr/" => {
                let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>异步论坛</title></head><body><ul>");
                for (id, name) in XHR_BOARDS {
                    let _ = write!(s, "<li><a href=\"/xhr/forum/{id}\">{name}</a></li>");
                }
                s.push_str("</ul></body></html>");
                html(s)
            }
            "/xhr/api/threads" => {
                let b = XHR_BOARDS.iter().position(|(id, _)| q.get("fid") == Some(id))?;
                let offset = num("offset").unwrap_or(0) as usize;
                let limit = (num("limit").unwrap_or(XHR_LIST_LIMIT as u64) as usize).clamp(1, 50);
                let mut list: Vec<&XhrThread> = self.xhr.iter().filter(|t| t.board == b).collect();
                list.sort_by_key(|t| std::cmp::Reverse((t.posts.last().map_or(0, |p| p.time), t.tid)));
                let rows: Vec<serde_json::Value> = list
                    .iter()
                    .skip(offset)
                    .take(limit)
                    .map(|t| {
                        serde_json::json!({"tid": t.tid, "subject": t.title, "replies": t.posts.len() - 1,
                            "lastpost": epoch(t.posts.last().map_or(0, |p| p.time))})
                    })
                    .collect();
                json(serde_json::json!({"code": 0, "total": list.len(), "threads": rows}))
            }
            "/xhr/api/ping" => json(serde_json::json!({"ok": 1})),
            "/xhr/api/thread" => {
                let t = self.xhr.iter().find(|t| Some(t.tid) == num("tid"))?;
                let first = &t.posts[0];
                let c = civil(first.time);
                let created = format!("{}+08:00", c.iso());
                let message: String = first.paras.iter().map(|p| format!("<p>{}</p>", esc(p))).collect();
                json(serde_json::json!({"code": 0, "thread": {"tid": t.tid, "subject": t.title, "author": {"name": first.author},
                    "created": created, "message": message, "replies": t.posts.len() - 1}}))
            }
            "/xhr/api/replies" => {
                let t = self.xhr.iter().find(|t| Some(t.tid) == num("tid"))?;
                let n = num("page").unwrap_or(1).max(1) as usize;
                let rows: Vec<serde_json::Value> = t
                    .posts
                    .iter()
                    .enumerate()
                    .skip(1 + (n - 1) * XHR_REPLIES_PAGE)
                    .take(XHR_REPLIES_PAGE)
                    .map(|(i, p)| serde_json::json!({"floor": i + 1, "author": {"name": p.author}, "time_ms": epoch(p.time) * 1000, "message": p.paras.join("\n")}))
                    .collect();
                json(serde_json::json!({"code": 0, "page": n, "replies": rows}))
            }
            _ => {
                if let Some(id) = path.strip_prefix("/mb/u/").and_then(|s| s.parse::<u64>().ok()) {
                    let u = self.user(id)?;
                    return html(shell(&u.name, "user", &u.id.to_string()));
                }
                if let Some(id) = path.strip_prefix("/mb/status/").and_then(|s| s.parse::<u64>().ok()) {
                    let p = self.post(id)?;
                    return html(shell("微博正文", "status", &p.id.to_string()));
                }
                if let Some(id) = path.strip_prefix("/xhr/forum/").filter(|id| XHR_BOARDS.iter().any(|b| b.0 == *id)) {
                    return html(shell("异步论坛", "forum", id));
                }
                // A page that never settles: it polls the server, each answer asking again (a chat's long poll).
                if let Some(id) = path.strip_prefix("/xhr/live/").and_then(|s| s.parse::<u64>().ok()) {
                    return html(shell("异步论坛", "live", &id.to_string()));
                }
                if let Some(id) = path.strip_prefix("/xhr/thread/").and_then(|s| s.parse::<u64>().ok()) {
                    self.xhr.iter().find(|t| t.tid == id)?;
                    return html(shell("异步论坛", "thread", &id.to_string()));
                }
                // The same thread, its replies asked for only once an
                // IntersectionObserver sees the page's end (set watching by
                // the thread's own answer; under `slow/`, whose handler also
                // queues a 60 ms long task): linked from nowhere, for tests.
                for kind in ["seen", "slow"] {
                    if let Some(id) = path.strip_prefix(&format!("/xhr/{kind}/")).and_then(|s| s.parse::<u64>().ok()) {
                        self.xhr.iter().find(|t| t.tid == id)?;
                        return html(shell("异步论坛", kind, &id.to_string()));
                    }
                }
                None
            }
        }
    }

    fn user(&self, id: u64) -> Option<&User> {
        self.users.iter().find(|u| u.id == id)
    }

    fn post(&self, id: u64) -> Option<&MbPost> {
        self.posts.iter().find(|p| p.id == id)
    }

    fn user_json(&self, u: &User) -> serde_json::Value {
        serde_json::json!({"id": u.id, "screen_name": u.name, "followers_count": u.followers, "statuses_count": u.posts.len(),
            "profile_url": format!("/mb/u/{}", u.id)})
    }

    /// Paragraphs as Weibo's `text`: `<br />` between them, mentions as links.
    fn html_of(&self, paras: &[Para]) -> String {
        let mut out = String::new();
        for (i, p) in paras.iter().enumerate() {
            if i > 0 {
                out.push_str("<br />");
            }
            for run in p {
                match run {
                    Run::Text(t) => esc_into(&mut out, t),
                    Run::Mention(u) => {
                        let u = &self.users[*u];
                        let _ = write!(out, "<a href='/mb/u/{}'>@", u.id);
                        esc_into(&mut out, &u.name);
                        out.push_str("</a>");
                    }
                }
            }
        }
        out
    }

    /// A post as timelines (`truncated`) and `statuses/show` send it.
    fn mblog(&self, p: &MbPost, truncated: bool) -> serde_json::Value {
        let full = self.html_of(&p.paras);
        let plain: String = p.paras.iter().map(|q| text_of(q, &self.users)).collect::<Vec<_>>().join("");
        let long = plain.chars().count() > 140;
        let text = if truncated && long {
            let mut short = String::new();
            esc_into(&mut short, &chars(&plain, 100));
            format!("{short}...<a href=\"/mb/status/{}\">全文</a>", p.id)
        } else {
            full
        };
        let mut m = serde_json::json!({
            "id": p.id.to_string(), "mid": p.id.to_string(), "created_at": relative(p.time, self.now), "text": text,
            "isLongText": long, "comments_count": p.comments.len(), "reposts_count": 0, "attitudes_count": p.id % 97,
            "source": "<a href=\"/mb/\">微博 weibo.com</a>", "user": self.user_json(&self.users[p.user]),
        });
        if let Some(o) = p.repost_of {
            m["retweeted_status"] = self.mblog(&self.posts[o], true);
        }
        m
    }

    fn comment_json(&self, c: &Comment) -> serde_json::Value {
        serde_json::json!({"id": c.id, "created_at": relative(c.time, self.now), "text": self.html_of(&c.paras),
            "user": self.user_json(&self.users[c.user]), "like_count": c.id % 13})
    }
}

/// Minutes (UTC+8 wall clock) as Unix seconds.
fn epoch(minutes: u32) -> i64 {
    (i64::from(minutes) - UTC_OFFSET_MINUTES) * 60
}

fn esc(s: &str) -> String {
    let mut out = String::new();
    esc_into(&mut out, s);
    out
}

/// How Weibo shows a time to someone reading at `now`.
fn relative(t: u32, now: u32) -> String {
    let (a, n): (Civil, Civil) = (civil(t), civil(now));
    let age = now - t;
    let day = |c: Civil| minutes_of(c.y, c.m, c.d, 0, 0);
    if age == 0 {
        "刚刚".into()
    } else if age < 60 {
        format!("{age}分钟前")
    } else if day(a) == day(n) {
        format!("今天 {:02}:{:02}", a.hh, a.mm)
    } else if day(a) + 1440 == day(n) {
        format!("昨天 {:02}:{:02}", a.hh, a.mm)
    } else if a.y == n.y {
        format!("{}月{}日 {:02}:{:02}", a.m, a.d, a.hh, a.mm)
    } else {
        a.padded()
    }
}

/// JSON as Weibo's servers write it: every non-ASCII character a `\u`
/// escape (surrogate pairs beyond the BMP), `/` as `\/`.
fn weibo_json(v: &serde_json::Value) -> String {
    let plain = v.to_string();
    let mut out = String::with_capacity(plain.len() * 2);
    for c in plain.chars() {
        match c {
            // Only inside strings: keys and numbers hold no slashes.
            '/' => out.push_str("\\/"),
            c if c.is_ascii() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out
}

fn xhr_threads(r: &mut fastrand::Rng, now: u32) -> Vec<XhrThread> {
    let mut out = Vec::new();
    for b in 0..XHR_BOARDS.len() {
        for i in 0..XHR_THREADS_PER_BOARD {
            let tid = 700 + (out.len() as u64) * 3 + r.u64(0..3);
            let mut time = now - 60 * 24 * 30 + r.u32(0..60 * 24 * 20);
            let n = 1 + if i == 0 { 31 } else { r.usize(0..26) };
            let posts = (0..n)
                .map(|k| {
                    time += if k == 0 { 0 } else { r.u32(1..300) };
                    let paras = (0..r.usize(1..4)).map(|_| review(r, 50)).collect();
                    XhrPost { author: nickname(Script::Simplified, r), time: time.min(now), paras }
                })
                .collect();
            let title = review(r, 16);
            out.push(XhrThread { tid, board: b, title, posts });
        }
    }
    out
}

/// The HTML every page of both sites is: no posts, a script that draws them.
fn shell(title: &str, kind: &str, id: &str) -> String {
    let mut t = String::new();
    esc_into(&mut t, title);
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title></head>\
<body><div id=\"app\" data-kind=\"{kind}\" data-id=\"{id}\"><div class=\"loading\">加载中…</div></div>\
<noscript>请打开 JavaScript</noscript><script>{SCRIPT}</script></body></html>"
    )
}

/// The client: timelines with cursor paging and endless scrolling (an
/// IntersectionObserver's callback, which runs only after a frame is drawn),
/// comments page by page on click, "展开全文" through `statuses/extend`,
/// and the XHR forum's replies under the thread page's one URL. The XHR
/// forum's "下一页" asks after a 100 ms timer and its "刷新" after an
/// animation frame: requests a browser's wait for the page to settle must
/// see coming.
const SCRIPT: &str = r#"(function(){
var app=document.getElementById('app'),kind=app.dataset.kind,id=app.dataset.id,busy=false,cursor='',done=false,more=null;
function get(u,f){var x=new XMLHttpRequest();x.open('GET',u);x.onload=function(){if(x.status==200)f(JSON.parse(x.responseText));};x.send();}
function el(t,c,h){var e=document.createElement(t);if(c)e.className=c;if(h!=null)e.innerHTML=h;return e;}
function sentinel(p){var e=p.appendChild(el('div','end'));e.style.height='1px';return e;}
function card(m,nested){var c=el('div','card m-panel'+(nested?' retweet':''));c.dataset.mid=m.id;
 var when=nested?"<span class='time'>"+m.created_at+"</span>":"<a class='time' href='/mb/status/"+m.id+"'>"+m.created_at+"</a>";
 c.appendChild(el('header','m-info',"<a class='name' href='/mb/u/"+m.user.id+"'>"+m.user.screen_name.replace(/</g,'&lt;')+"</a> "+when));
 var t=el('div','weibo-text',m.text);c.appendChild(t);
 if(m.isLongText){var more=el('a','expand','展开全文');more.onclick=function(e){e.preventDefault();get('/mb/api/statuses/extend?id='+m.id,function(r){t.innerHTML=r.data.longTextContent;more.remove();});};c.appendChild(more);}
 if(m.retweeted_status)c.appendChild(card(m.retweeted_status,true));
 if(nested)return c;
 var item=el('div','m-item');item.appendChild(c);
 var foot=el('footer','m-ctrl');c.appendChild(foot);
 if(!m.comments_count){foot.appendChild(el('span','comments','评论'));return item;}
 var cm=el('a','comments','评论 '+m.comments_count);foot.appendChild(cm);
 var list=el('div','comment-list'),items=el('div','comment-items'),next='';item.appendChild(list);
 function load(u,reset){get(u,function(r){if(reset)items.innerHTML='';r.data.data.forEach(function(k){items.appendChild(el('div','comment',"<a class='name' href='/mb/u/"+k.user.id+"'>"+k.user.screen_name.replace(/</g,'&lt;')+"</a>: <span class='ctt'>"+k.text+"</span> <span class='time'>"+k.created_at+"</span>"));});
  next=r.data.max_id;if(next){var b=el('a','more','查看更多评论');b.onclick=function(){b.remove();load('/mb/api/comments/hotflow?id='+m.id+'&mid='+m.id+'&max_id='+next+'&max_id_type=0');};items.appendChild(b);}});}
 cm.onclick=function(){list.innerHTML='';var tabs=el('div','tabs');var hot=el('a','tab hot','按热度'),time=el('a','tab by-time','按时间');tabs.appendChild(hot);tabs.appendChild(time);list.appendChild(tabs);list.appendChild(items);
  hot.onclick=function(){load('/mb/api/comments/hotflow?id='+m.id+'&mid='+m.id+'&max_id_type=0',true);};time.onclick=function(){load('/mb/api/comments/show?id='+m.id+'&page=1',true);};hot.onclick();};
 return item;}
function timeline(uid){if(busy||done)return;busy=true;get('/mb/api/container/getIndex?uid='+uid+'&since_id='+cursor,function(r){
 r.data.cards.forEach(function(c){if(c.card_type==9)app.appendChild(card(c.mblog,false));});cursor=r.data.cardlistInfo.since_id||'';done=!cursor;busy=false;if(more)more();});}
function when(ms){return new Date(ms+288e5).toISOString().slice(0,16).replace('T',' ');}
function post(name,time,body){var d=el('div','post');d.appendChild(el('b','author')).textContent=name;d.appendChild(el('span','time',time));d.appendChild(body);return d;}
function replies(tid,page,total){get('../api/replies?tid='+tid+'&page='+page,function(r){var box=document.getElementById('replies'),nav=document.getElementById('nav');box.innerHTML='';nav.innerHTML='';
 r.replies.forEach(function(p){var m=el('div','message');p.message.split('\n').forEach(function(l){m.appendChild(el('p')).textContent=l;});box.appendChild(post(p.author.name,when(p.time_ms),m));});
 if(page*10<total){var b=el('button','more','下一页');b.onclick=function(){setTimeout(function(){replies(tid,page+1,total);},100);};nav.appendChild(b);}});}
function beacon(){get('http://tracker.invalid/collect?p='+encodeURIComponent(location.pathname),function(){});var i=new Image();i.src='/xhr/static/logo.png';}
app.innerHTML='';
if(kind=='home'){id.split(',').forEach(function(u){app.appendChild(el('a','seed',"<a href='/mb/u/"+u+"'>"+u+"</a>"));});}
else if(kind=='user'){var end=sentinel(document.body);
 var io=new IntersectionObserver(function(es){if(es[es.length-1].isIntersecting)timeline(id);});more=function(){io.unobserve(end);io.observe(end);};timeline(id);}
else if(kind=='status'){get('/mb/api/statuses/show?id='+id,function(r){app.appendChild(card(r.data,false));});}
if(kind=='forum'||kind=='thread'||kind=='seen'||kind=='slow'||kind=='live')beacon();
if(kind=='forum'){get('/xhr/api/threads?fid='+id+'&offset=0&limit=20',function(r){r.threads.forEach(function(t){var a=el('a','thread',t.subject);a.href='/xhr/thread/'+t.tid;app.appendChild(el('div','row')).appendChild(a);});});}
else if(kind=='thread'||kind=='seen'||kind=='slow'){get('../api/thread?tid='+id,function(r){var t=r.thread;app.appendChild(el('h1')).textContent=t.subject;
 app.appendChild(post(t.author.name,t.created.slice(0,16).replace('T',' '),el('div','message',t.message)));
 app.appendChild(el('div','replies')).id='replies';app.appendChild(el('div','nav')).id='nav';
 if(kind!='thread'){var end=sentinel(app);new IntersectionObserver(function(es,o){if(es[es.length-1].isIntersecting){o.disconnect();replies(id,1,t.replies);}}).observe(end);
  if(kind=='slow')setTimeout(function(){var t0=performance.now();while(performance.now()-t0<60){}},0);return;}
 var f=el('a','refresh','刷新');f.href='#';f.onclick=function(e){e.preventDefault();requestAnimationFrame(function(){replies(id,1,t.replies);});};app.appendChild(f);replies(id,1,t.replies);});}
else if(kind=='live'){(function poll(){get('/xhr/api/ping',poll);})();}
})();"#;

/// What the two sites hold, for tests: users (with their distance from
/// the seeds) and every post with its comments as a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MicroblogTruth {
    /// The server's clock, UTC+8 wall time.
    pub now: String,
    pub seeds: Vec<String>,
    pub users: Vec<UserTruth>,
    /// `mb` (boards are users, threads are posts with their comments) and `xhr`.
    pub forums: Vec<crate::ForumTruth>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserTruth {
    pub id: String,
    pub name: String,
    pub followers: u64,
    /// Hops from a seed through reposts, mentions and comments; `None` if unreachable.
    pub depth: Option<u32>,
    /// Post ids, newest first.
    pub posts: Vec<String>,
}

/// The truth for a seed.
pub fn truth(seed: u64) -> MicroblogTruth {
    model(seed).truth()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_user_is_reachable_and_times_take_every_shape() {
        let m = Microblog::new(1);
        let t = m.truth();
        let depths: Vec<Option<u32>> = t.users.iter().map(|u| u.depth).collect();
        assert!(depths.iter().all(|d| d.is_some_and(|d| d <= 2)), "{depths:?}");
        assert!(depths.contains(&Some(2)), "users two hops away: {depths:?}");
        let shapes: Vec<String> = m.posts.iter().map(|p| relative(p.time, m.now)).collect();
        for want in ["分钟前", "今天", "昨天", "月", "-"] {
            assert!(shapes.iter().any(|s| s.contains(want)), "no time like {want}: {shapes:?}");
        }
        assert!(m.posts.iter().any(|p| p.repost_of.is_some()));
        assert!(m.posts.iter().any(|p| p.comments.len() > COMMENTS_PAGE));
        assert!(m.posts.iter().any(|p| text_of(&p.paras.concat(), &m.users).chars().count() > 140), "a long post");
        assert_eq!(Microblog::new(1).truth(), t, "deterministic");
    }

    #[test]
    fn json_is_escaped_as_weibo_writes_it() {
        let s = weibo_json(&serde_json::json!({"text": "<a href='/u/1'>@小明</a> 😀"}));
        assert_eq!(s, r#"{"text":"<a href='\/u\/1'>@\u5c0f\u660e<\/a> \ud83d\ude00"}"#);
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["text"], "<a href='/u/1'>@小明</a> 😀");
    }

    #[test]
    fn relative_times() {
        let now = minutes_of(2024, 12, 1, 10, 0);
        assert_eq!(relative(now, now), "刚刚");
        assert_eq!(relative(now - 3, now), "3分钟前");
        assert_eq!(relative(minutes_of(2024, 12, 1, 8, 5), now), "今天 08:05");
        assert_eq!(relative(minutes_of(2024, 11, 30, 12, 30), now), "昨天 12:30");
        assert_eq!(relative(minutes_of(2024, 11, 28, 8, 0), now), "11月28日 08:00");
        assert_eq!(relative(minutes_of(2023, 5, 6, 7, 8), now), "2023-05-06 07:08");
    }

    #[test]
    fn the_first_comments_page_is_served_twice() {
        let m = Microblog::new(1);
        let p = m.posts.iter().find(|p| p.comments.len() > 3).unwrap();
        let body = |path: &str, q: &str| serde_json::from_slice::<serde_json::Value>(&m.get(path, q).unwrap().2).unwrap();
        let hot = body("/mb/api/comments/hotflow", &format!("id={}&max_id_type=0", p.id));
        let show = body("/mb/api/comments/show", &format!("id={}&page=1", p.id));
        assert_eq!(hot["data"]["data"], show["data"]["data"]);
    }
}
