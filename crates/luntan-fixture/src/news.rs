//! A news site whose comments a script fetches as JSON (a hybrid site):
//! `news` under `/news/`. Sections and their article lists are plain HTML,
//! newest first, with no comment counts; each article page holds its title,
//! byline and text, and an empty `<div id="comments" data-thread-key="cms-N">`
//! that its script fills from `/news/api/comments?key=cms-N&page=P` (the
//! API also answers `path=/news/article/N.html` for `key`): five
//! comments a page, oldest first, with the total count, epoch-second
//! times, plain text with `\n` between paragraphs. Comments are
//! conversations: each names its author's id (`uid`), its likes
//! (`like_count`) and on some a location (`ip_location`, "广东"); a
//! comment may answer an earlier one (`"parent": id`, `0` for none), and
//! some carry their replies nested inside them (`"replies": […]`, which
//! may nest again), a nested reply naming a `parent` only when it answers
//! another reply rather than the comment it is inside. The total counts
//! every comment, nested or not; pages count the top-level ones. The key is the page's,
//! not the URL's (`cms-` and the article id), and it is also in a script
//! variable (`NEWS_CONFIG.threadKey`), as a real page has it.
//!
//! Unlike the other sites the model changes per server: a test adds an
//! article ([`News::add_article`]), a comment ([`News::add_comment`]) or
//! a reply nested under an old comment ([`News::add_reply`]) between
//! rounds, and [`News::truth`] and [`News::conversation`] follow.

use std::fmt::Write as _;

use crate::corpus::{nickname, reviews, Script};
use crate::text::{civil, esc_into, minutes_of, rng};

/// Comments a page of the comment API.
pub const COMMENTS_PAGE: usize = 5;
const SECTIONS: &[(&str, &str)] = &[("1", "国内"), ("2", "科技")];
const ARTICLES_PER_SECTION: usize = 4;
/// Top-level comments of the articles, in build order: none, a short
/// page, exactly one full page (so a second, empty one is asked for), and
/// several pages.
const COMMENT_COUNTS: &[usize] = &[0, 3, 5, 12, 2, 7, 1, 11];
/// Replies nested inside those comments, per article (none where there
/// are no comments, nor on the full page, which a test grows by one).
const REPLY_COUNTS: &[usize] = &[0, 2, 0, 5, 1, 3, 0, 4];
const LOCATIONS: &[&str] = &["广东", "北京", "上海", "浙江", "四川"];
/// Minutes (UTC+8) of the site's clock: 2024-12-01 10:00.
const NOW: (i64, u32, u32, u32, u32) = (2024, 12, 1, 10, 0);
const UTC_OFFSET_MINUTES: i64 = 480;

#[derive(Debug, Clone)]
struct Comment {
    id: u64,
    nick: String,
    uid: u64,
    time: u32,
    paras: Vec<String>,
    likes: u32,
    location: Option<&'static str>,
    /// What it answers: an earlier comment (top level) or, nested, a reply
    /// other than the comment it is inside.
    parent: Option<u64>,
    /// Replies shown inside it, oldest first.
    replies: Vec<Comment>,
}

impl Comment {
    /// It and its replies, depth first, each with the id of what it
    /// answers and whether it is nested.
    fn walk<'a>(&'a self, enclosing: Option<u64>, out: &mut Vec<(&'a Comment, Option<u64>, bool)>) {
        out.push((self, self.parent.or(enclosing), enclosing.is_some()));
        for r in &self.replies {
            r.walk(Some(self.id), out);
        }
    }

    fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"id": self.id, "uid": self.uid, "user": {"nick": self.nick}, "created": epoch(self.time),
            "content": self.paras.join("\n"), "like_count": self.likes});
        if let Some(l) = self.location {
            v["ip_location"] = l.into();
        }
        if let Some(p) = self.parent {
            v["parent"] = p.into();
        }
        if !self.replies.is_empty() {
            v["replies"] = self.replies.iter().map(Comment::json).collect();
        }
        v
    }
}

/// A comment as a conversation: who wrote it, what it answers, how it
/// was received. Beside [`crate::PostTruth`], as the quotes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommentTruth {
    /// The post's floor in the thread (the article is 1).
    pub floor: u32,
    pub id: String,
    /// The id of the comment it answers.
    pub parent: Option<String>,
    pub author_id: String,
    pub likes: u64,
    pub location: Option<String>,
    /// Shown inside another comment in the API, not as an item of a page.
    pub nested: bool,
}

#[derive(Debug, Clone)]
struct Article {
    aid: u64,
    section: usize,
    title: String,
    author: String,
    time: u32,
    paras: Vec<String>,
    comments: Vec<Comment>,
}

/// The news site's content, as one server serves it now.
#[derive(Debug, Clone)]
pub struct News {
    seed: u64,
    /// Where the article pages' script asks for comments: `""` this
    /// server, else another's origin (`http://127.0.0.1:8081`), as a blog
    /// whose comment server lives on a host of its own.
    api_origin: String,
    /// Whether the article pages' script asks by JSONP (a `<script>` tag
    /// per page, jQuery's way: `callback=jQuery…_N&_=N`), as the comment
    /// boxes of Chinese news portals do, instead of an XHR.
    jsonp: bool,
    articles: Vec<Article>,
    /// Changes made so far: each seeds its own text.
    changes: u64,
    next_comment: u64,
}

/// One paragraph of corpus text, white space folded as a reader sees it.
fn para(r: &mut fastrand::Rng, n: usize) -> String {
    let lines = reviews();
    let line: String = lines[r.usize(0..lines.len())].chars().take(n).collect();
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn paras(r: &mut fastrand::Rng, most: usize, n: usize) -> Vec<String> {
    let out: Vec<String> = (0..r.usize(1..=most)).map(|_| para(r, n)).filter(|p| !p.is_empty()).collect();
    if out.is_empty() {
        vec!["好。".to_owned()]
    } else {
        out
    }
}

impl News {
    pub fn new(seed: u64) -> News {
        let mut r = rng(&[seed, 0x4E45_5753]);
        let now = minutes_of(NOW.0, NOW.1, NOW.2, NOW.3, NOW.4);
        let mut news = News { seed, api_origin: String::new(), jsonp: false, articles: Vec::new(), changes: 0, next_comment: 90_001 };
        for (k, &count) in COMMENT_COUNTS.iter().enumerate().take(SECTIONS.len() * ARTICLES_PER_SECTION) {
            let aid = 3000 + 7 * k as u64 + r.u64(0..7);
            let time = now - 60 * 24 * 20 + (k as u32) * 60 * 24 * 2 + r.u32(0..600);
            let a = Article {
                aid,
                section: k % SECTIONS.len(),
                title: para(&mut r, 18),
                author: nickname(Script::Simplified, &mut r),
                time,
                paras: paras(&mut r, 4, 80),
                comments: Vec::new(),
            };
            news.articles.push(a);
            for _ in 0..count {
                news.push_comment(k, &mut r);
            }
            for _ in 0..REPLY_COUNTS[k] {
                let under = r.usize(0..count);
                news.push_reply(k, under, &mut r);
            }
        }
        news
    }

    /// A new comment under `article`, later than everything there.
    fn new_comment(&mut self, article: usize, r: &mut fastrand::Rng) -> Comment {
        let a = &self.articles[article];
        let mut all = Vec::new();
        a.comments.iter().for_each(|c| c.walk(None, &mut all));
        let after = all.iter().map(|(c, ..)| c.time).max().unwrap_or(a.time);
        let c = Comment {
            id: self.next_comment,
            nick: nickname(Script::Simplified, r),
            uid: 10_000 + r.u64(0..90_000),
            time: after + r.u32(1..600),
            paras: paras(r, 3, 40),
            likes: if r.u8(0..3) == 0 { 0 } else { r.u32(1..200) },
            location: (r.u8(0..3) == 0).then(|| LOCATIONS[r.usize(0..LOCATIONS.len())]),
            parent: None,
            replies: Vec::new(),
        };
        self.next_comment += 1 + r.u64(0..3);
        c
    }

    /// A top-level comment, now and then answering an earlier one.
    fn push_comment(&mut self, article: usize, r: &mut fastrand::Rng) {
        let mut c = self.new_comment(article, r);
        let earlier = &self.articles[article].comments;
        if !earlier.is_empty() && r.u8(0..4) == 0 {
            c.parent = Some(earlier[r.usize(0..earlier.len())].id);
        }
        self.articles[article].comments.push(c);
    }

    /// A reply nested inside the article's `k`th comment: under it, under
    /// one of its replies (a level deeper), or beside them answering one.
    fn push_reply(&mut self, article: usize, k: usize, r: &mut fastrand::Rng) {
        let mut reply = self.new_comment(article, r);
        let root = &mut self.articles[article].comments[k];
        match (root.replies.len(), r.u8(0..3)) {
            (0, _) | (_, 0) => root.replies.push(reply),
            (n, 1) => root.replies[r.usize(0..n)].replies.push(reply),
            (n, _) => {
                reply.parent = Some(root.replies[r.usize(0..n)].id);
                root.replies.push(reply);
            }
        }
    }

    /// One more comment under article `aid`, after its last; `false` when
    /// there is no such article.
    pub fn add_comment(&mut self, aid: &str) -> bool {
        let Some(k) = self.articles.iter().position(|a| a.aid.to_string() == aid) else { return false };
        self.changes += 1;
        let mut r = rng(&[self.seed, 0xC0, self.changes]);
        self.push_comment(k, &mut r);
        true
    }

    /// One more reply under the first comment of article `aid` (its
    /// oldest), nested; `false` when there is no such article or it has
    /// no comment.
    pub fn add_reply(&mut self, aid: &str) -> bool {
        let Some(k) = self.articles.iter().position(|a| a.aid.to_string() == aid) else { return false };
        if self.articles[k].comments.is_empty() {
            return false;
        }
        self.changes += 1;
        let mut r = rng(&[self.seed, 0xB0, self.changes]);
        let reply = self.new_comment(k, &mut r);
        self.articles[k].comments[0].replies.push(reply);
        true
    }

    /// A new article with two comments, newest in `section` (`"1"` or
    /// `"2"`); its id, or `None` for an unknown section.
    pub fn add_article(&mut self, section: &str) -> Option<String> {
        let s = SECTIONS.iter().position(|x| x.0 == section)?;
        self.changes += 1;
        let mut r = rng(&[self.seed, 0xA0, self.changes]);
        let aid = self.articles.iter().map(|a| a.aid).max().unwrap_or(3000) + 11;
        let time = self.articles.iter().map(|a| a.comments.last().map_or(a.time, |c| c.time)).max().unwrap_or(0) + 30;
        let a = Article {
            aid,
            section: s,
            title: para(&mut r, 18),
            author: nickname(Script::Simplified, &mut r),
            time,
            paras: paras(&mut r, 3, 80),
            comments: Vec::new(),
        };
        self.articles.push(a);
        let k = self.articles.len() - 1;
        self.push_comment(k, &mut r);
        self.push_comment(k, &mut r);
        Some(aid.to_string())
    }

    /// An article's comments in thread order: each top-level comment,
    /// oldest first, then its replies, depth first.
    fn thread_order(a: &Article) -> Vec<(&Comment, Option<u64>, bool)> {
        let mut all = Vec::new();
        a.comments.iter().for_each(|c| c.walk(None, &mut all));
        all
    }

    /// What a crawl must find: each article with its text as post 1, then
    /// its comments in thread order. `pages` counts HTML pages (one each).
    pub fn truth(&self) -> crate::ForumTruth {
        let mut threads: Vec<crate::ThreadTruth> = self
            .articles
            .iter()
            .map(|a| {
                let mut posts = vec![crate::PostTruth::plain(1, &a.author, a.time, a.paras.join("\n"))];
                for (i, (c, ..)) in News::thread_order(a).into_iter().enumerate() {
                    posts.push(crate::PostTruth::plain(i as u32 + 2, &c.nick, c.time, c.paras.join("\n")));
                }
                crate::ThreadTruth::one_page("news", SECTIONS[a.section].0, a.aid.to_string(), format!("/news/article/{}.html", a.aid), a.title.clone(), posts)
            })
            .collect();
        threads.sort_by_key(|t| t.thread.parse::<u64>().unwrap_or(0));
        let boards = SECTIONS
            .iter()
            .enumerate()
            .map(|(s, (id, title))| crate::BoardTruth {
                board: (*id).into(),
                title: (*title).into(),
                url_path: format!("/news/section/{id}"),
                threads: self.section(s).iter().map(|a| a.aid.to_string()).collect(),
            })
            .collect();
        crate::ForumTruth { site: "news".into(), name: "新闻网".into(), encoding: "UTF-8".into(), boards, threads }
    }

    /// Each comment of article `aid` as a conversation, in thread order
    /// (the floors of [`News::truth`]); `None` for an unknown article.
    pub fn conversation(&self, aid: &str) -> Option<Vec<CommentTruth>> {
        let a = self.articles.iter().find(|a| a.aid.to_string() == aid)?;
        let all = News::thread_order(a);
        Some(
            all.into_iter()
                .enumerate()
                .map(|(i, (c, parent, nested))| CommentTruth {
                    floor: i as u32 + 2,
                    id: c.id.to_string(),
                    parent: parent.map(|p| p.to_string()),
                    author_id: c.uid.to_string(),
                    likes: u64::from(c.likes),
                    location: c.location.map(str::to_owned),
                    nested,
                })
                .collect(),
        )
    }

    /// A section's articles, newest first.
    fn section(&self, s: usize) -> Vec<&Article> {
        let mut list: Vec<&Article> = self.articles.iter().filter(|a| a.section == s).collect();
        list.sort_by_key(|a| std::cmp::Reverse((a.time, a.aid)));
        list
    }

    /// The article pages ask another server's API for their comments (the
    /// same news, the same seed): `origin` without a trailing `/`.
    pub fn set_api_origin(&mut self, origin: &str) {
        self.api_origin = origin.trim_end_matches('/').to_owned();
    }

    /// The article pages' script asks for comments by JSONP.
    pub fn set_jsonp(&mut self, jsonp: bool) {
        self.jsonp = jsonp;
    }

    /// The response for a path under `/news/`: (status, content type, body).
    pub fn get(&self, path: &str, query: &str) -> Option<(u16, &'static str, Vec<u8>)> {
        let html = |s: String| Some((200, "text/html; charset=utf-8", s.into_bytes()));
        let param = |name: &str| query.split('&').find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='));
        match path {
            "/news/" => {
                let mut s = page_head("新闻网");
                for (id, name) in SECTIONS {
                    let _ = write!(s, "<a class=\"section\" href=\"/news/section/{id}\">{name}</a> ");
                }
                s.push_str("</nav><p>欢迎</p></body></html>");
                html(s)
            }
            "/news/api/comments" => {
                // By the page's key, or as the comment packages a blog
                // embeds ask (Isso, Waline): by the page's own path.
                let path = param("path").map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned());
                let a = self.articles.iter().find(|a| {
                    param("key") == Some(format!("cms-{}", a.aid).as_str()) || path.as_deref() == Some(format!("/news/article/{}.html", a.aid).as_str())
                })?;
                let page = param("page").and_then(|p| p.parse::<usize>().ok()).unwrap_or(1).max(1);
                let rows: Vec<serde_json::Value> = a
                    .comments
                    .iter()
                    .skip((page - 1) * COMMENTS_PAGE)
                    .take(COMMENTS_PAGE)
                    .map(|c| {
                        // Top-level comments say 0 for "answers no one", as comment systems do.
                        let mut v = c.json();
                        v["parent"] = c.parent.unwrap_or(0).into();
                        v
                    })
                    .collect();
                let total = News::thread_order(a).len();
                let body =
                    serde_json::json!({"code": 0, "total": total, "top_level": a.comments.len(), "page": page, "page_size": COMMENTS_PAGE, "comments": rows});
                // JSONP where a callback is named, as portals answer a
                // `<script>` tag; a name that is no identifier is refused
                // (it would be script injection).
                match param("callback") {
                    None => Some((200, "application/json; charset=utf-8", body.to_string().into_bytes())),
                    Some(cb) if !cb.is_empty() && cb.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') => {
                        Some((200, "application/javascript; charset=utf-8", format!("{cb}({body});").into_bytes()))
                    }
                    Some(_) => Some((400, "text/plain; charset=utf-8", b"bad callback".to_vec())),
                }
            }
            _ => {
                if let Some(id) = path.strip_prefix("/news/section/") {
                    let s = SECTIONS.iter().position(|x| x.0 == id)?;
                    let mut out = page_head(SECTIONS[s].1);
                    out.push_str("</nav><ul class=\"news-list\">");
                    for a in self.section(s) {
                        let _ = write!(out, "<li class=\"item\"><a class=\"title\" href=\"/news/article/{}.html\">", a.aid);
                        esc_into(&mut out, &a.title);
                        let _ = write!(out, "</a> <span class=\"date\">{}</span></li>", civil(a.time).padded());
                    }
                    out.push_str("</ul></body></html>");
                    return html(out);
                }
                let aid = path.strip_prefix("/news/article/")?.strip_suffix(".html")?;
                let a = self.articles.iter().find(|a| a.aid.to_string() == aid)?;
                html(article_page(a, &self.api_origin, self.jsonp))
            }
        }
    }
}

fn epoch(minutes: u32) -> i64 {
    (i64::from(minutes) - UTC_OFFSET_MINUTES) * 60
}

fn page_head(title: &str) -> String {
    let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>");
    esc_into(&mut s, title);
    s.push_str(" - 新闻网</title></head><body><nav><a href=\"/news/\">首页</a> ");
    for (id, name) in SECTIONS {
        let _ = write!(s, "<a href=\"/news/section/{id}\">{name}</a> ");
    }
    s
}

fn article_page(a: &Article, api_origin: &str, jsonp: bool) -> String {
    let mut s = page_head(&a.title);
    s.push_str("</nav><h1 class=\"headline\">");
    esc_into(&mut s, &a.title);
    s.push_str("</h1><article class=\"story\"><div class=\"byline\"><span class=\"author\">");
    esc_into(&mut s, &a.author);
    let when = civil(a.time).padded();
    let _ = write!(s, "</span> <time datetime=\"{when}\">{when}</time></div><div class=\"content\">");
    for p in &a.paras {
        s.push_str("<p>");
        esc_into(&mut s, p);
        s.push_str("</p>");
    }
    let _ = write!(
        s,
        "</div></article><section id=\"comments\" data-thread-key=\"cms-{aid}\"><p class=\"loading\">评论加载中…</p></section>\
<script>var NEWS_CONFIG = {{threadKey: 'cms-{aid}', api: '{api_origin}/news/api/comments'}};</script><script>{get}{SCRIPT}</script></body></html>",
        aid = a.aid,
        get = if jsonp { GET_JSONP } else { GET_XHR }
    );
    s
}

/// How the comment box asks the API: an XHR, or JSONP as jQuery makes it
/// (a callback named anew and a cache-buster, each from a counter).
const GET_XHR: &str = "function get(u,f){var x=new XMLHttpRequest();x.open('GET',u);x.onload=function(){f(JSON.parse(x.responseText));};x.send();}";
const GET_JSONP: &str = "var nonce=Date.now();function get(u,f){var cb='jQuery1124009_'+(nonce++),s=document.createElement('script');\
window[cb]=function(r){delete window[cb];s.remove();f(r);};s.src=u+'&callback='+cb+'&_='+(nonce++);document.head.appendChild(s);}";

/// The page's comment box: every page of the API, in order.
const SCRIPT: &str = r#"(function(){var box=document.getElementById('comments');
function load(p){get(NEWS_CONFIG.api+'?key='+encodeURIComponent(NEWS_CONFIG.threadKey)+'&page='+p,function(r){if(p==1)box.innerHTML='<h2>评论 '+r.total+'</h2>';
function draw(c,into){var d=document.createElement('div');d.className='comment';d.id='c'+c.id;var n=document.createElement('b');n.textContent=c.user.nick;d.appendChild(n);
var t=document.createElement('span');t.className='time';t.textContent=new Date(c.created*1000+288e5).toISOString().slice(0,16).replace('T',' ');d.appendChild(t);
c.content.split('\n').forEach(function(l){var q=document.createElement('p');q.textContent=l;d.appendChild(q);});into.appendChild(d);
(c.replies||[]).forEach(function(x){draw(x,d);});}
r.comments.forEach(function(c){draw(c,box);});
if(p*r.page_size<r.top_level)load(p+1);});}
load(1);})();"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// The comments an article's API pages hold as items: its top-level ones.
    fn top_level(n: &News, aid: &str) -> usize {
        n.conversation(aid).unwrap().iter().filter(|c| !c.nested).count()
    }

    /// A callback named gets JSONP (the same JSON inside), one that is no
    /// identifier a refusal; the JSONP pages' script asks by `<script>` tag.
    #[test]
    fn a_named_callback_gets_the_same_json_as_jsonp() {
        let mut n = News::new(1);
        let aid = n.truth().threads[0].thread.clone();
        let q = format!("key=cms-{aid}&page=1");
        let (_, plain_type, plain) = n.get("/news/api/comments", &q).unwrap();
        let (status, ty, wrapped) = n.get("/news/api/comments", &format!("{q}&callback=jQuery1124_5&_=17")).unwrap();
        assert_eq!((status, plain_type, ty), (200, "application/json; charset=utf-8", "application/javascript; charset=utf-8"));
        assert_eq!(wrapped, [b"jQuery1124_5(".as_slice(), &plain, b");"].concat());
        assert_eq!(n.get("/news/api/comments", &format!("{q}&callback=alert(1)//")).unwrap().0, 400);
        let page = |n: &News| String::from_utf8(n.get(&format!("/news/article/{aid}.html"), "").unwrap().2).unwrap();
        assert!(page(&n).contains("new XMLHttpRequest") && !page(&n).contains("callback="));
        n.set_jsonp(true);
        assert!(page(&n).contains("createElement('script')") && page(&n).contains("'&callback='"));
    }

    #[test]
    fn comments_page_by_five_and_the_truth_follows_changes() {
        let mut n = News::new(1);
        let t = n.truth();
        assert_eq!(t.threads.len(), 8);
        assert!(t.threads.iter().filter(|t| top_level(&n, &t.thread) > COMMENTS_PAGE).count() >= 2, "several articles need more than one comments page");
        assert!(t.threads.iter().any(|t| t.posts.len() == 1), "an article without comments");
        let busy = t.threads.iter().find(|t| top_level(&n, &t.thread) == 12).unwrap();
        let body = |n: &News, q: &str| serde_json::from_slice::<serde_json::Value>(&n.get("/news/api/comments", q).unwrap().2).unwrap();
        let p3 = body(&n, &format!("key=cms-{}&page=3", busy.thread));
        assert_eq!((p3["total"].as_u64(), p3["comments"].as_array().unwrap().len()), (Some(busy.replies as u64), 2), "the total counts nested replies");
        assert!(busy.replies > 12);
        assert!(n.get("/news/api/comments", &format!("key={}&page=1", busy.thread)).is_none(), "the key is not the id");
        let page = String::from_utf8(n.get(&busy.url_path, "").unwrap().2).unwrap();
        assert!(page.contains(&format!("data-thread-key=\"cms-{}\"", busy.thread)));

        assert!(n.add_comment(&busy.thread));
        let aid = n.add_article("2").unwrap();
        let after = n.truth();
        let grown = after.threads.iter().find(|t| t.thread == busy.thread).unwrap();
        assert_eq!(grown.posts.len(), busy.posts.len() + 1);
        assert!(grown.posts.last().unwrap().time >= busy.posts.last().unwrap().time);
        assert_eq!(after.boards[1].threads[0], aid, "the new article heads its section");
        assert_eq!(News::new(1).truth(), t, "deterministic");
    }

    /// The API's pages, read as a comment system's client reads them, give
    /// every comment of the conversation truth once, in its order, with
    /// what it answers; and the fixture has every shape a reader must
    /// handle.
    #[test]
    fn the_api_nests_replies_as_the_conversation_truth_says() {
        let mut n = News::new(1);
        fn walk(v: &serde_json::Value, enclosing: Option<String>, out: &mut Vec<(String, Option<String>, bool)>) {
            let id = v["id"].to_string();
            let parent = match &v["parent"] {
                serde_json::Value::Number(p) if p.as_u64() != Some(0) => Some(p.to_string()),
                _ => enclosing.clone(),
            };
            out.push((id.clone(), parent, enclosing.is_some()));
            for r in v["replies"].as_array().into_iter().flatten() {
                walk(r, Some(id.clone()), out);
            }
        }
        let read = |n: &News, aid: &str| {
            let mut out = Vec::new();
            for page in 1.. {
                let v: serde_json::Value = serde_json::from_slice(&n.get("/news/api/comments", &format!("key=cms-{aid}&page={page}")).unwrap().2).unwrap();
                let items = v["comments"].as_array().unwrap();
                if items.is_empty() {
                    break;
                }
                items.iter().for_each(|c| walk(c, None, &mut out));
            }
            out
        };
        let (mut nested, mut deep, mut flat, mut sibling, mut located) = (0, 0, 0, 0, 0);
        for t in n.truth().threads {
            let conv = n.conversation(&t.thread).unwrap();
            assert_eq!(conv.len(), t.posts.len() - 1);
            let want: Vec<(String, Option<String>, bool)> = conv.iter().map(|c| (c.id.clone(), c.parent.clone(), c.nested)).collect();
            assert_eq!(read(&n, &t.thread), want, "news/{}", t.thread);
            let ids: Vec<&str> = conv.iter().map(|c| c.id.as_str()).collect();
            for (i, c) in conv.iter().enumerate() {
                let p = c.parent.as_deref().map(|p| ids.iter().position(|id| *id == p).expect("a parent in the thread"));
                assert!(p.is_none_or(|p| p < i), "a reply comes after what it answers");
                nested += usize::from(c.nested);
                flat += usize::from(!c.nested && c.parent.is_some());
                sibling += usize::from(c.nested && p.is_some_and(|p| conv[p].nested));
                located += usize::from(c.location.is_some());
            }
            deep += conv.windows(2).filter(|w| w[1].nested && w[1].parent.as_deref() == Some(w[0].id.as_str()) && w[0].nested).count();
        }
        assert!(nested >= 10 && flat >= 2 && sibling >= 1 && deep >= 1 && located >= 5, "{nested} {flat} {sibling} {deep} {located}");

        // A reply to an old comment comes right after that comment's replies.
        let aid = n.truth().threads.iter().find(|t| top_level(&n, &t.thread) == 12).unwrap().thread.clone();
        let before = n.conversation(&aid).unwrap();
        assert!(n.add_reply(&aid));
        let after = n.conversation(&aid).unwrap();
        let first = &after[0];
        let at = after.iter().position(|c| !before.iter().any(|b| b.id == c.id)).unwrap();
        assert_eq!((after[at].parent.as_deref(), after[at].nested), (Some(first.id.as_str()), true));
        assert_eq!(after.get(at + 1).map(|c| c.nested), Some(false), "then the next top-level comment");
        assert!(!n.add_reply("1"));
    }
}
