//! `cw` (`/cw/`): a news site whose comments a shared widget script draws,
//! as comment servers do under static sites. For browser mode (S4):
//!
//! - Every article page loads the same `/cw/static/widget.js`,
//!   `/cw/static/widget.css` and, by XHR, `/cw/static/config.json` (sent
//!   with `Cache-Control: max-age`): a crawl should fetch each once.
//! - The widget asks `/cw/api/comments` for an article's comments and shows
//!   each one's age ("3小时前", "2周前") counted from the `Date` header of
//!   that answer, as comment widgets correct for a reader's wrong clock:
//!   without the header every comment reads 刚刚. Ages are whole minutes,
//!   hours, days or weeks before the fixed clock ([`crate::microblog::NOW`]),
//!   so the shown age gives the exact time back.
//! - "查看 N 条回复" asks `/cw/api/replies` and inserts the replies right
//!   after their comment, in the middle of the list; "收起回复" removes them
//!   again. Each comment element has its id (`id="c123"`).
//!
//! Everything follows from the seed; [`WidgetSite::truth`] says what a crawl
//! must find.

use std::fmt::Write as _;

use crate::corpus::{nickname, reviews, Script};
use crate::text::{civil, esc_into, minutes_of, rng};

/// Articles on the site, all on board `1`.
pub const ARTICLES: usize = 5;

/// One comment or reply.
#[derive(Debug, Clone)]
struct Comment {
    id: u64,
    author: String,
    /// Minutes since the epoch of the fixture's wall clock (UTC+8).
    time: u32,
    text: String,
    replies: Vec<Comment>,
}

#[derive(Debug, Clone)]
struct Article {
    id: u64,
    title: String,
    author: String,
    time: u32,
    paras: Vec<String>,
    comments: Vec<Comment>,
}

/// The site's model.
#[derive(Debug, Clone)]
pub struct WidgetSite {
    articles: Vec<Article>,
}

fn now() -> u32 {
    let (y, m, d, hh, mm) = crate::microblog::NOW;
    minutes_of(y, m, d, hh, mm)
}

/// Ages (minutes) a widget shows exactly: whole minutes, hours, days or weeks.
fn exact_ages() -> Vec<u32> {
    let mut ages: Vec<u32> = (1..60).collect();
    ages.extend((1..24).map(|h| h * 60));
    ages.extend((1..7).map(|d| d * 1440));
    ages.extend((1..9).map(|w| w * 10_080));
    ages
}

fn line(r: &mut fastrand::Rng, n: usize) -> String {
    let lines = reviews();
    lines[r.usize(0..lines.len())].chars().take(n).collect::<String>().trim().to_owned()
}

impl WidgetSite {
    pub fn new(seed: u64) -> WidgetSite {
        let mut r = rng(&[seed, 0xC0FF_EE00]);
        let ages = exact_ages();
        let mut next_id = 100u64;
        let mut articles = Vec::new();
        for a in 0..ARTICLES {
            // The first article has replies under three comments: its
            // states nest three deep and more.
            let n = if a == 0 { 7 } else { r.usize(1..8) };
            let with_replies: Vec<bool> = (0..n).map(|i| if a == 0 { matches!(i, 1 | 3 | 5) } else { r.u8(0..3) == 0 }).collect();
            let counts: Vec<usize> = with_replies.iter().map(|w| if *w { r.usize(1..4) } else { 0 }).collect();
            // Distinct ages, oldest first: comments and their replies in the
            // order they were written.
            let total = n + counts.iter().sum::<usize>();
            let mut picked: Vec<u32> = Vec::new();
            while picked.len() < total {
                let age = ages[r.usize(0..ages.len())];
                if !picked.contains(&age) {
                    picked.push(age);
                }
            }
            picked.sort_unstable_by(|x, y| y.cmp(x));
            let mut times = picked.into_iter().map(|age| now() - age);
            let mut comment = |r: &mut fastrand::Rng, time: u32| {
                next_id += r.u64(1..5);
                Comment { id: next_id, author: nickname(Script::Simplified, r), time, text: line(r, 40), replies: Vec::new() }
            };
            let mut comments = Vec::new();
            for count in counts {
                let mut c = comment(&mut r, times.next().unwrap_or_default());
                for _ in 0..count {
                    let reply = comment(&mut r, times.next().unwrap_or_default());
                    c.replies.push(reply);
                }
                comments.push(c);
            }
            let time = now() - 9 * 10_080 - r.u32(0..600);
            let paras = (0..r.usize(1..4)).map(|_| line(&mut r, 60)).collect();
            articles.push(Article { id: 500 + a as u64 * 7, title: line(&mut r, 16), author: nickname(Script::Simplified, &mut r), time, paras, comments });
        }
        WidgetSite { articles }
    }

    /// What a crawl of the site must store: each article, its comments and
    /// replies in the order the fully opened page shows them.
    pub fn truth(&self) -> crate::ForumTruth {
        let threads = self
            .articles
            .iter()
            .map(|a| {
                let mut posts = vec![crate::PostTruth::plain(1, &a.author, a.time, a.paras.join("\n"))];
                for c in a.comments.iter().flat_map(|c| std::iter::once(c).chain(&c.replies)) {
                    posts.push(crate::PostTruth::plain(posts.len() as u32 + 1, &c.author, c.time, c.text.clone()));
                }
                crate::ThreadTruth::one_page("cw", "1", a.id.to_string(), format!("/cw/a/{}", a.id), a.title.clone(), posts)
            })
            .collect();
        crate::ForumTruth { site: "cw".into(), name: "挂件新闻".into(), encoding: "UTF-8".into(), boards: Vec::new(), threads }
    }

    /// [`WidgetSite::truth`] as the comments API names them, which a hybrid
    /// site file reads: each comment's and reply's id, each reply answering
    /// its comment.
    pub fn api_truth(&self) -> crate::ForumTruth {
        let mut truth = self.truth();
        for (t, a) in truth.threads.iter_mut().zip(&self.articles) {
            let ids = a.comments.iter().flat_map(|c| std::iter::once((c.id, None)).chain(c.replies.iter().map(move |r| (r.id, Some(c.id)))));
            for (p, (id, to)) in t.posts.iter_mut().skip(1).zip(ids) {
                p.id = Some(id.to_string());
                p.reply_to = to.map(|c| c.to_string());
            }
        }
        truth
    }

    /// The response for a path under `/cw/`: (status, content type, body).
    pub fn get(&self, path: &str, query: &str) -> Option<(u16, &'static str, Vec<u8>)> {
        let num = |k: &str| query.split('&').find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse::<u64>().ok());
        let html = |s: String| Some((200, "text/html; charset=utf-8", s.into_bytes()));
        let json = |v: serde_json::Value| Some((200, "application/json; charset=utf-8", v.to_string().into_bytes()));
        let comment_json = |c: &Comment| serde_json::json!({"id": c.id, "author": c.author, "created": (i64::from(c.time) - crate::microblog::UTC_OFFSET_MINUTES) * 60, "text": c.text, "replies": c.replies.len()});
        match path {
            "/cw/" => {
                html("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>挂件新闻</title></head><body><a href=\"/cw/c/1\">新闻</a></body></html>".into())
            }
            "/cw/c/1" => {
                let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>新闻</title></head><body><ul>");
                for a in &self.articles {
                    let _ = write!(s, "<li><a class=\"article\" href=\"/cw/a/{}\">", a.id);
                    esc_into(&mut s, &a.title);
                    s.push_str("</a></li>");
                }
                s.push_str("</ul></body></html>");
                html(s)
            }
            "/cw/static/widget.js" => Some((200, "application/javascript", WIDGET_JS.as_bytes().to_vec())),
            "/cw/static/widget.css" => Some((200, "text/css", b".comment.reply{margin-left:2em}.more-replies,.hide-replies{color:#36c}".to_vec())),
            "/cw/static/config.json" => json(serde_json::json!({"just": "刚刚", "more": "查看 {n} 条回复", "hide": "收起回复"})),
            "/cw/api/comments" => {
                let a = self.articles.iter().find(|a| Some(a.id) == num("aid"))?;
                json(serde_json::json!({"comments": a.comments.iter().map(comment_json).collect::<Vec<_>>()}))
            }
            "/cw/api/replies" => {
                let c = self.articles.iter().flat_map(|a| &a.comments).find(|c| Some(c.id) == num("cid"))?;
                json(serde_json::json!({"replies": c.replies.iter().map(comment_json).collect::<Vec<_>>()}))
            }
            _ => {
                let id = path.strip_prefix("/cw/a/")?.parse::<u64>().ok()?;
                let a = self.articles.iter().find(|a| a.id == id)?;
                let c = civil(a.time);
                let mut s = String::from(
                    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><link rel=\"stylesheet\" href=\"/cw/static/widget.css\">\
                     <script src=\"/cw/static/widget.js\"></script><title>",
                );
                esc_into(&mut s, &a.title);
                s.push_str("</title></head><body><h1>");
                esc_into(&mut s, &a.title);
                let _ = write!(s, "</h1><div class=\"post article\" id=\"a{}\"><b class=\"author\">", a.id);
                esc_into(&mut s, &a.author);
                let _ = write!(s, "</b> <span class=\"time\">{:04}-{:02}-{:02} {:02}:{:02}</span><div class=\"text\">", c.y, c.m, c.d, c.hh, c.mm);
                for p in &a.paras {
                    s.push_str("<p>");
                    esc_into(&mut s, p);
                    s.push_str("</p>");
                }
                let _ = write!(s, "</div></div><div id=\"comments\" data-aid=\"{}\"></div></body></html>", a.id);
                html(s)
            }
        }
    }
}

/// Headers the site sends beside the content type: its fixed clock on
/// everything (the widget counts ages from it), a day's caching for its
/// static files, none for its API.
pub fn headers(path: &str) -> Vec<(&'static str, &'static str)> {
    let mut h = vec![("date", crate::microblog::DATE_HEADER)];
    if path.starts_with("/cw/static/") {
        h.push(("cache-control", "public, max-age=86400"));
        h.push(("last-modified", "Fri, 01 Nov 2024 00:00:00 GMT"));
    } else if path.starts_with("/cw/api/") {
        h.push(("cache-control", "no-store"));
    }
    h
}

/// The widget, loaded by every article page from the one URL: it reads its
/// labels from the config, then the comments; an age is counted from the
/// `Date` of the answer that brought it (an answer without one makes every
/// age 刚刚, as `Date.parse(null)` is NaN).
const WIDGET_JS: &str = r#"(function(){
var cfg=null,now=NaN;
function get(u,f){var x=new XMLHttpRequest();x.open('GET',u);x.onload=function(){if(x.status==200){now=Date.parse(x.getResponseHeader('Date'));f(JSON.parse(x.responseText));}};x.send();}
function ago(created){var s=Math.floor((now-created*1000)/1000);if(!(s>=60))return cfg.just;var m=Math.floor(s/60);if(m<60)return m+'分钟前';
 var h=Math.floor(m/60);if(h<24)return h+'小时前';var d=Math.floor(h/24);if(d<7)return d+'天前';return Math.floor(d/7)+'周前';}
function comment(c,reply){var d=document.createElement('div');d.className='post comment'+(reply?' reply':'');d.id='c'+c.id;
 d.innerHTML="<b class='author'></b> <span class='time'></span><div class='text'></div>";
 d.querySelector('.author').textContent=c.author;d.querySelector('.time').textContent=ago(c.created);d.querySelector('.text').textContent=c.text;return d;}
function thread(box,c){var d=box.appendChild(comment(c,false));if(!c.replies)return;
 var a=d.appendChild(document.createElement('a')),shown=[];a.href='#';
 function closed(){a.className='more-replies';a.textContent=cfg.more.replace('{n}',c.replies);}closed();
 a.onclick=function(e){e.preventDefault();
  if(shown.length){shown.forEach(function(r){r.remove();});shown=[];closed();return;}
  get('/cw/api/replies?cid='+c.id,function(r){var after=d;r.replies.forEach(function(x){var e=comment(x,true);after.after(e);after=e;shown.push(e);});
   a.className='hide-replies';a.textContent=cfg.hide;});};}
document.addEventListener('DOMContentLoaded',function(){var box=document.getElementById('comments');if(!box)return;
 get('/cw/static/config.json',function(c){cfg=c;get('/cw/api/comments?aid='+box.dataset.aid,function(r){r.comments.forEach(function(c){thread(box,c);});box.className='loaded';});});});
})();"#;

/// The site file of `cw` read in a browser: every reply opened (each click
/// a state kept, its items grew), the first opened closed again and opened
/// again.
pub fn widget_browser_site_file(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- A news site whose comments a shared widget script draws (browser mode). -->
<site id="cw">
  <name>挂件新闻</name>
  <home>{base}/cw/</home>
  <politeness delay-ms="20" concurrency="2" timeout-ms="10000" retries="2"/>
  <links>
    <board><![CDATA[/cw/c/{{board}}$]]></board>
    <thread><![CDATA[/cw/a/{{thread}}$]]></thread>
  </links>
  <thread title="h1" post="div.post" author="b.author" time="span.time" body="div.text"/>
  <browser timeout-ms="8000" settle-ms="150">
    <thread>
      <wait selector="#comments.loaded"/>
      <!-- replies inserted after their comment, mid-list: each click a state -->
      <click selector="a.more-replies" items="div.post" max="50"/>
      <!-- the first comment's replies removed, then shown again -->
      <click selector="a.hide-replies"/>
      <click selector="a.more-replies" items="div.post" max="50"/>
    </thread>
  </browser>
</site>
"##
    )
}

/// The widget site read without a browser, as a hybrid site: the article
/// from its HTML, its comments from the comments API (keyed by the page's
/// `data-aid`), and each comment's replies from the replies API, asked for
/// the comments whose count says they have some.
pub fn widget_hybrid_site_file(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- A news site whose comments and their replies come from two JSON APIs (hybrid). -->
<site id="cw">
  <name>挂件新闻</name>
  <home>{base}/cw/</home>
  <politeness delay-ms="0" concurrency="2" timeout-ms="10000" retries="2"/>
  <links>
    <board><![CDATA[/cw/c/{{board}}$]]></board>
    <thread><![CDATA[/cw/a/{{thread}}$]]></thread>
  </links>
  <thread title="h1" post="div.post" author="b.author" time="span.time" body="div.text"/>
  <comments key="#comments@data-aid" items="$.comments[*]" id="$.id" author="$.author" time="$.created" body="$.text" body-format="text"
            replies="$.replies" replies-url="api/replies?cid={{comment}}" replies-items="$.replies[*]"><![CDATA[api/comments?aid={{key}}]]></comments>
</site>
"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_age_is_whole_and_the_first_article_nests_three_deep() {
        let site = WidgetSite::new(7);
        let truth = site.truth();
        assert_eq!(truth.threads.len(), ARTICLES);
        let first = &site.articles[0];
        assert_eq!(first.comments.iter().filter(|c| !c.replies.is_empty()).count(), 3);
        let ages = exact_ages();
        for c in site.articles.iter().flat_map(|a| &a.comments).flat_map(|c| std::iter::once(c).chain(&c.replies)) {
            assert!(ages.contains(&(now() - c.time)), "{c:?}");
        }
        // Oldest first, replies after their comment.
        for t in &truth.threads {
            assert!(t.posts.windows(2).all(|w| w[0].time < w[1].time), "{t:?}");
        }
    }
}
