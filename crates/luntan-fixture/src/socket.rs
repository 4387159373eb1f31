//! `st` (`/st/`): a modern forum whose thread pages show their first
//! [`FIRST`] posts and load the rest over a WebSocket when the reader
//! scrolls to the bottom, as socket.io forums (NodeBB and the like) do. For
//! browser mode (S4):
//!
//! - The page script opens `/st/socket?tid=N` and, each time the end of the
//!   list is in view, sends `{"after":K}` (K posts shown); the server answers
//!   with the next [`BATCH`] posts as JSON after [`THINK`] (a real server
//!   reads its database first) and says when the last is in.
//! - On every other thread the script first does what socket.io does before
//!   it upgrades: a handshake GET on `/st/poll` answered at once, then a GET
//!   the server holds open for [`HELD`] (the long-poll), polling again when
//!   one ends; the socket is opened beside it.
//! - Every frame the server receives is logged with the HTTP requests
//!   (method `WS`), so a test can check the site's delay held between them.
//!
//! Everything follows from the seed; [`SocketSite::truth`] says what a crawl
//! must find.

use std::fmt::Write as _;
use std::time::Duration;

use crate::corpus::{nickname, reviews, Script};
use crate::text::{civil, esc_into, minutes_of, rng};

/// Threads on the site, all on board `1`.
pub const THREADS: usize = 4;
/// Posts a thread page shows before any scrolling.
pub const FIRST: usize = 5;
/// Posts one socket answer brings.
pub const BATCH: usize = 5;
/// How long the server takes to answer a frame.
pub const THINK: Duration = Duration::from_millis(60);
/// How long the server holds a long-poll open with nothing to say.
pub const HELD: Duration = Duration::from_secs(25);

#[derive(Debug, Clone)]
struct Post {
    author: String,
    /// Minutes since the epoch, forum-local.
    time: u32,
    text: String,
}

#[derive(Debug, Clone)]
struct Thread {
    id: u64,
    title: String,
    /// Socket.io's way: long-polling first, the socket beside it.
    polls: bool,
    posts: Vec<Post>,
}

/// The site's model.
#[derive(Debug, Clone)]
pub struct SocketSite {
    threads: Vec<Thread>,
}

fn line(r: &mut fastrand::Rng, n: usize) -> String {
    let lines = reviews();
    lines[r.usize(0..lines.len())].chars().take(n).collect::<String>().trim().to_owned()
}

impl SocketSite {
    pub fn new(seed: u64) -> SocketSite {
        let mut r = rng(&[seed, 0x50C4_E700]);
        let threads = (0..THREADS)
            .map(|i| {
                // One thread that fits the first page, the others one, two
                // and more socket answers long (the last one short).
                let n = if i == 0 { FIRST - 1 } else { FIRST + r.usize(1..4) * BATCH - r.usize(0..BATCH) };
                let mut time = minutes_of(2024, 11, 3, 8, 0) + r.u32(0..600);
                let posts = (0..n)
                    .map(|_| {
                        time += r.u32(1..300);
                        Post { author: nickname(Script::Simplified, &mut r), time, text: line(&mut r, 50) }
                    })
                    .collect();
                Thread { id: 70 + i as u64 * 3, title: line(&mut r, 16), polls: i % 2 == 1, posts }
            })
            .collect();
        SocketSite { threads }
    }

    /// What a crawl must store: every post of every thread, in order.
    pub fn truth(&self) -> crate::ForumTruth {
        let threads = self
            .threads
            .iter()
            .map(|t| {
                let posts: Vec<crate::PostTruth> =
                    t.posts.iter().enumerate().map(|(i, p)| crate::PostTruth::plain(i as u32 + 1, &p.author, p.time, p.text.clone())).collect();
                crate::ThreadTruth::one_page("st", "1", t.id.to_string(), format!("/st/t/{}", t.id), t.title.clone(), posts)
            })
            .collect();
        crate::ForumTruth { site: "st".into(), name: "长连接论坛".into(), encoding: "UTF-8".into(), boards: Vec::new(), threads }
    }

    /// The answer to a frame: the posts after the first `after`, at most
    /// [`BATCH`], and whether the last is among them. `None` for a frame
    /// that is not `{"after":K}` or a thread there is not.
    pub fn frame(&self, tid: u64, frame: &str) -> Option<String> {
        let t = self.threads.iter().find(|t| t.id == tid)?;
        let after = serde_json::from_str::<serde_json::Value>(frame).ok()?.get("after")?.as_u64()? as usize;
        let batch: Vec<serde_json::Value> =
            t.posts.iter().skip(after).take(BATCH).map(|p| serde_json::json!({"author": p.author, "time": civil(p.time).padded(), "text": p.text})).collect();
        Some(serde_json::json!({"posts": batch, "done": after + BATCH >= t.posts.len()}).to_string())
    }

    /// The response for a path under `/st/` (the socket and the long-poll
    /// aside): (status, content type, body).
    pub fn get(&self, path: &str) -> Option<(u16, &'static str, Vec<u8>)> {
        let html = |s: String| Some((200, "text/html; charset=utf-8", s.into_bytes()));
        match path {
            "/st/" => html(
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>长连接论坛</title></head><body><a href=\"/st/c/1\">综合</a></body></html>".into(),
            ),
            "/st/c/1" => {
                let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>综合</title></head><body><ul>");
                for t in &self.threads {
                    let _ = write!(s, "<li><a class=\"topic\" href=\"/st/t/{}\">", t.id);
                    esc_into(&mut s, &t.title);
                    s.push_str("</a></li>");
                }
                s.push_str("</ul></body></html>");
                html(s)
            }
            "/st/static/thread.js" => Some((200, "application/javascript", THREAD_JS.as_bytes().to_vec())),
            _ => {
                let id = path.strip_prefix("/st/t/")?.parse::<u64>().ok()?;
                let t = self.threads.iter().find(|t| t.id == id)?;
                let mut s = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><script src=\"/st/static/thread.js\"></script><title>");
                esc_into(&mut s, &t.title);
                s.push_str("</title></head><body><h1>");
                esc_into(&mut s, &t.title);
                let _ = write!(
                    s,
                    "</h1><ol id=\"posts\" data-tid=\"{}\" data-total=\"{}\"{}>",
                    t.id,
                    t.posts.len(),
                    if t.polls { " data-transport=\"polling\"" } else { "" }
                );
                for p in t.posts.iter().take(FIRST) {
                    s.push_str("<li class=\"post\"><b class=\"author\">");
                    esc_into(&mut s, &p.author);
                    let _ = write!(s, "</b> <span class=\"time\">{}</span><div class=\"text\">", civil(p.time).padded());
                    esc_into(&mut s, &p.text);
                    s.push_str("</div></li>");
                }
                s.push_str("</ol></body></html>");
                html(s)
            }
        }
    }
}

/// The long-poll endpoint's answer for `query`: a handshake (no `sid`)
/// answered at once with one, or a poll the server holds for [`HELD`]
/// before it says "nothing" (engine.io's `6`). `(hold, body)`.
pub fn poll(query: &str) -> (Duration, String) {
    let sid = query.split('&').find_map(|kv| kv.strip_prefix("sid="));
    match sid {
        None => (Duration::ZERO, format!("0{}", serde_json::json!({"sid": "st1", "upgrades": ["websocket"], "pingInterval": 25000}))),
        Some(_) => (HELD, "6".into()),
    }
}

/// The thread page's script: more posts over the socket whenever the end
/// of the list is in view, one request at a time.
const THREAD_JS: &str = r#"(function(){
document.addEventListener('DOMContentLoaded',function(){
 var list=document.getElementById('posts');if(!list)return;
 var tid=list.dataset.tid,sock=null,asking=false,done=list.querySelectorAll('li.post').length>=Number(list.dataset.total);
 function post(p){var li=document.createElement('li');li.className='post';
  li.innerHTML="<b class='author'></b> <span class='time'></span><div class='text'></div>";
  li.querySelector('.author').textContent=p.author;li.querySelector('.time').textContent=p.time;li.querySelector('.text').textContent=p.text;list.appendChild(li);}
 function atEnd(){return window.innerHeight+window.scrollY>=document.body.scrollHeight-40;}
 function more(){if(asking||done||!sock||sock.readyState!==1||!atEnd())return;asking=true;
  sock.send(JSON.stringify({after:list.querySelectorAll('li.post').length}));}
 function open(sid){sock=new WebSocket((location.protocol==='https:'?'wss://':'ws://')+location.host+'/st/socket?tid='+tid+(sid?'&sid='+sid:''));
  sock.onopen=more;
  sock.onmessage=function(e){var m=JSON.parse(e.data);m.posts.forEach(post);done=m.done;asking=false;if(done)list.className='done';};}
 window.addEventListener('scroll',more);
 if(list.dataset.transport!=='polling'){open(null);return;}
 function get(u,ok){var x=new XMLHttpRequest();x.open('GET',u);x.onload=function(){if(x.status===200)ok(x.responseText);};x.send();}
 var base='/st/poll?EIO=4&transport=polling';
 get(base+'&t=0',function(hs){var sid=JSON.parse(hs.slice(1)).sid,n=0;
  (function poll(){get(base+'&sid='+sid+'&t='+(++n),poll);})();
  open(sid);});
});
})();"#;

/// The site file of `st` read in a browser: each thread page scrolled until
/// no more posts come.
pub fn socket_browser_site_file(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- A forum whose thread pages load more posts over a WebSocket (browser mode). -->
<site id="st">
  <name>长连接论坛</name>
  <home>{base}/st/</home>
  <politeness delay-ms="150" concurrency="2" timeout-ms="30000" retries="1"/>
  <links>
    <board><![CDATA[/st/c/{{board}}$]]></board>
    <thread><![CDATA[/st/t/{{thread}}$]]></thread>
  </links>
  <thread title="h1" post="li.post" author="b.author" time="span.time" body="div.text"/>
  <browser timeout-ms="10000" settle-ms="400">
    <thread>
      <!-- each scroll sends one frame; its answer appends up to five posts -->
      <scroll items="li.post" max="20"/>
    </thread>
  </browser>
</site>
"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_page_through_every_post_once_and_say_when_done() {
        let site = SocketSite::new(7);
        for t in &site.threads {
            let mut seen = FIRST.min(t.posts.len());
            let mut done = seen >= t.posts.len();
            while !done {
                let answer: serde_json::Value = serde_json::from_str(&site.frame(t.id, &format!("{{\"after\":{seen}}}")).unwrap()).unwrap();
                let batch = answer["posts"].as_array().unwrap();
                assert!(!batch.is_empty() && batch.len() <= BATCH);
                assert_eq!(batch[0]["author"], t.posts[seen].author);
                seen += batch.len();
                done = answer["done"].as_bool().unwrap();
            }
            assert_eq!(seen, t.posts.len(), "{}", t.id);
        }
        assert!(site.threads.iter().any(|t| t.posts.len() > FIRST + BATCH), "some thread needs two answers");
        assert!(site.threads.iter().any(|t| t.polls) && site.threads.iter().any(|t| !t.polls));
        assert_eq!(site.frame(1, "{\"after\":0}"), None, "no such thread");
        assert_eq!(site.frame(site.threads[0].id, "hello"), None, "not a frame the site knows");
    }

    #[test]
    fn a_handshake_is_answered_at_once_and_a_poll_held() {
        assert_eq!(poll("EIO=4&transport=polling&t=0").0, Duration::ZERO);
        assert_eq!(poll("EIO=4&transport=polling&sid=st1&t=1"), (HELD, "6".into()));
    }
}
