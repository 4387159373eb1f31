//! A news site whose comments a script fetches as JSON (a hybrid site):
//! `news` under `/news/`. Sections and their article lists are plain HTML,
//! newest first, with no comment counts; each article page holds its title,
//! byline and text, and an empty `<div id="comments" data-thread-key="cms-N">`
//! that its script fills from `/news/api/comments?key=cms-N&page=P`: five
//! comments a page, oldest first, with the total count, epoch-second
//! times, plain text with `\n` between paragraphs. The key is the page's,
//! not the URL's (`cms-` and the article id), and it is also in a script
//! variable (`NEWS_CONFIG.threadKey`), as a real page has it.
//!
//! Unlike the other sites the model changes per server: a test adds an
//! article ([`News::add_article`]) or a comment ([`News::add_comment`])
//! between rounds, and [`News::truth`] follows.

use std::fmt::Write as _;

use crate::corpus::{nickname, reviews, Script};
use crate::text::{civil, esc_into, minutes_of, rng};

/// Comments a page of the comment API.
pub const COMMENTS_PAGE: usize = 5;
const SECTIONS: &[(&str, &str)] = &[("1", "国内"), ("2", "科技")];
const ARTICLES_PER_SECTION: usize = 4;
/// Comments of the articles, in build order: none, a short page, exactly
/// one full page (so a second, empty one is asked for), and several pages.
const COMMENT_COUNTS: &[usize] = &[0, 3, 5, 12, 2, 7, 1, 11];
/// Minutes (UTC+8) of the site's clock: 2024-12-01 10:00.
const NOW: (i64, u32, u32, u32, u32) = (2024, 12, 1, 10, 0);
const UTC_OFFSET_MINUTES: i64 = 480;

#[derive(Debug, Clone)]
struct Comment {
    id: u64,
    nick: String,
    time: u32,
    paras: Vec<String>,
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
        let mut news = News { seed, articles: Vec::new(), changes: 0, next_comment: 90_001 };
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
        }
        news
    }

    fn push_comment(&mut self, article: usize, r: &mut fastrand::Rng) {
        let a = &self.articles[article];
        let after = a.comments.last().map_or(a.time, |c| c.time);
        let c = Comment { id: self.next_comment, nick: nickname(Script::Simplified, r), time: after + r.u32(1..600), paras: paras(r, 3, 40) };
        self.next_comment += 1 + r.u64(0..3);
        self.articles[article].comments.push(c);
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

    /// What a crawl must find: each article with its text as post 1, then
    /// its comments, oldest first. `pages` counts HTML pages (one each).
    pub fn truth(&self) -> crate::ForumTruth {
        let mut threads: Vec<crate::ThreadTruth> = self
            .articles
            .iter()
            .map(|a| {
                let mut posts =
                    vec![crate::PostTruth { floor: 1, author: a.author.clone(), time: civil(a.time).iso(), text: a.paras.join("\n"), ..Default::default() }];
                for (i, c) in a.comments.iter().enumerate() {
                    posts.push(crate::PostTruth {
                        floor: i as u32 + 2,
                        author: c.nick.clone(),
                        time: civil(c.time).iso(),
                        text: c.paras.join("\n"),
                        ..Default::default()
                    });
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

    /// A section's articles, newest first.
    fn section(&self, s: usize) -> Vec<&Article> {
        let mut list: Vec<&Article> = self.articles.iter().filter(|a| a.section == s).collect();
        list.sort_by_key(|a| std::cmp::Reverse((a.time, a.aid)));
        list
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
                let a = self.articles.iter().find(|a| param("key") == Some(format!("cms-{}", a.aid).as_str()))?;
                let page = param("page").and_then(|p| p.parse::<usize>().ok()).unwrap_or(1).max(1);
                let rows: Vec<serde_json::Value> = a
                    .comments
                    .iter()
                    .skip((page - 1) * COMMENTS_PAGE)
                    .take(COMMENTS_PAGE)
                    .map(|c| serde_json::json!({"id": c.id, "user": {"nick": c.nick}, "created": epoch(c.time), "content": c.paras.join("\n")}))
                    .collect();
                let body = serde_json::json!({"code": 0, "total": a.comments.len(), "page": page, "page_size": COMMENTS_PAGE, "comments": rows});
                Some((200, "application/json; charset=utf-8", body.to_string().into_bytes()))
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
                html(article_page(a))
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

fn article_page(a: &Article) -> String {
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
<script>var NEWS_CONFIG = {{threadKey: 'cms-{aid}', api: '/news/api/comments'}};</script><script>{SCRIPT}</script></body></html>",
        aid = a.aid
    );
    s
}

/// The page's comment box: every page of the API, in order.
const SCRIPT: &str = r#"(function(){var box=document.getElementById('comments');
function get(u,f){var x=new XMLHttpRequest();x.open('GET',u);x.onload=function(){f(JSON.parse(x.responseText));};x.send();}
function load(p){get(NEWS_CONFIG.api+'?key='+encodeURIComponent(NEWS_CONFIG.threadKey)+'&page='+p,function(r){if(p==1)box.innerHTML='<h2>评论 '+r.total+'</h2>';
r.comments.forEach(function(c){var d=document.createElement('div');d.className='comment';var n=document.createElement('b');n.textContent=c.user.nick;d.appendChild(n);
var t=document.createElement('span');t.className='time';t.textContent=new Date(c.created*1000+288e5).toISOString().slice(0,16).replace('T',' ');d.appendChild(t);
c.content.split('\n').forEach(function(l){var q=document.createElement('p');q.textContent=l;d.appendChild(q);});box.appendChild(d);});
if(p*r.page_size<r.total)load(p+1);});}
load(1);})();"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_page_by_five_and_the_truth_follows_changes() {
        let mut n = News::new(1);
        let t = n.truth();
        assert_eq!(t.threads.len(), 8);
        assert!(t.threads.iter().filter(|t| t.posts.len() - 1 > COMMENTS_PAGE).count() >= 2, "several articles need more than one comments page");
        assert!(t.threads.iter().any(|t| t.posts.len() == 1), "an article without comments");
        let busy = t.threads.iter().find(|t| t.replies == 12).unwrap();
        let body = |n: &News, q: &str| serde_json::from_slice::<serde_json::Value>(&n.get("/news/api/comments", q).unwrap().2).unwrap();
        let p3 = body(&n, &format!("key=cms-{}&page=3", busy.thread));
        assert_eq!((p3["total"].as_u64(), p3["comments"].as_array().unwrap().len()), (Some(12), 2));
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
}
