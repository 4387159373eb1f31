//! The normalized thread: what `extract` writes as `article<T>.xml` and
//! `index` reads back. One format for every forum, always UTF-8.
//!
//! ```xml
//! <?xml version="1.0" encoding="UTF-8"?>
//! <thread site="dz" board="2" id="77">
//!   <forum>清水河畔</forum>
//!   <url>http://bbs.example/forum.php?mod=viewthread&amp;tid=77</url>
//!   <title>考研经验分享</title>
//!   <posted>2024-03-05T12:34:00</posted>
//!   <saved>20261130</saved>
//!   <encoding>GBK</encoding>
//!   <pages>2</pages>
//!   <post floor="1">
//!     <author>小明</author>
//!     <time>2024-03-05T12:34:00</time>
//!     <p>第一段</p>
//!     <p>第二段</p>
//!   </post>
//! </thread>
//! ```
//!
//! Times are the forum's local wall-clock time, `YYYY-MM-DDTHH:MM:SS`, or
//! absent when the page did not show one. Text is stripped of characters XML
//! 1.0 forbids and escaped, so every file parses back to the same value.
//!
//! [`ThreadJson`] is the same thread as JSON, for every program that reads
//! one (`luntan-export --ndjson`, serve's `/api/thread`).

use std::fmt::Write as _;

use quick_xml::events::Event;

use crate::escape::{escape_into, Escape};
use crate::ids::{BoardId, SaveDate, SiteId, ThreadId};

/// One thread, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadDoc {
    pub site: SiteId,
    pub board: BoardId,
    pub thread: ThreadId,
    /// The forum's display name.
    pub forum: String,
    pub url: String,
    pub title: String,
    /// Time of the first post.
    pub posted: Option<String>,
    /// The day the HTML was saved.
    pub saved: SaveDate,
    /// The encoding the pages were decoded with (WHATWG name).
    pub encoding: String,
    /// How many HTML pages the thread spans.
    pub pages: u32,
    pub posts: Vec<Post>,
}

/// One post (a "floor").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Post {
    pub floor: u32,
    pub author: String,
    pub time: Option<String>,
    /// Paragraphs of text, in order; none is empty.
    pub paragraphs: Vec<String>,
}

impl Post {
    /// The whole text, paragraphs joined by newlines.
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// A thread as JSON, the one shape every JSON face of a thread has: a line
/// of `luntan-export --ndjson` and the answer of serve's
/// `/api/thread/{site}/{id}`. `docs/thread.schema.json` describes it, and the
/// field order here is the published line's byte order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThreadJson {
    /// `site/thread`: unique across forums (the bulk action's `_id`).
    pub id: String,
    pub site: SiteId,
    pub board: BoardId,
    pub thread: ThreadId,
    pub url: String,
    /// The forum's display name.
    pub forum: String,
    pub title: String,
    /// The first post's time, the forum's local wall clock
    /// (`YYYY-MM-DDTHH:MM:SS`), or null.
    pub posted: Option<String>,
    /// `YYYYMMDD` the pages were saved.
    pub saved: SaveDate,
    /// The encoding the pages were decoded from.
    pub encoding: String,
    pub pages: u32,
    /// Every post's author, each once, in the order they first post.
    pub authors: Vec<String>,
    pub posts: Vec<PostJson>,
}

/// `docs/thread.schema.json` (JSON Schema 2020-12), which describes a
/// [`ThreadJson`]: built in, so serve's OpenAPI document describes
/// `/api/thread` with the same text.
pub const THREAD_SCHEMA: &str = include_str!("../../../docs/thread.schema.json");

/// One post of a [`ThreadJson`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PostJson {
    pub floor: u32,
    pub author: String,
    pub time: Option<String>,
    /// Paragraphs joined by `\n`.
    pub text: String,
}

impl ThreadJson {
    pub fn of(doc: &ThreadDoc) -> ThreadJson {
        let mut authors: Vec<String> = Vec::new();
        for p in doc.posts.iter().filter(|p| !p.author.is_empty()) {
            if !authors.contains(&p.author) {
                authors.push(p.author.clone());
            }
        }
        ThreadJson {
            id: format!("{}/{}", doc.site, doc.thread),
            site: doc.site.clone(),
            board: doc.board.clone(),
            thread: doc.thread.clone(),
            url: doc.url.clone(),
            forum: doc.forum.clone(),
            title: doc.title.clone(),
            posted: doc.posted.clone(),
            saved: doc.saved,
            encoding: doc.encoding.clone(),
            pages: doc.pages,
            authors,
            posts: doc.posts.iter().map(|p| PostJson { floor: p.floor, author: p.author.clone(), time: p.time.clone(), text: p.text() }).collect(),
        }
    }

    /// The JSON text on one line, without a newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a thread's JSON serializes")
    }
}

/// A thread XML file that does not parse back.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("XML at byte {at}: {message}")]
    Syntax { at: u64, message: String },
    #[error("not a thread document: {0}")]
    Shape(String),
}

/// Drops what XML 1.0 forbids (C0 controls but tab/LF/CR, U+FFFE/U+FFFF)
/// and turns CR/CRLF into LF, which a parser would do anyway.
pub fn clean_xml_text(s: &str) -> String {
    let s = s.replace("\r\n", "\n");
    s.chars()
        .map(|c| if c == '\r' { '\n' } else { c })
        .filter(|&c| matches!(c, '\t' | '\n' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..))
        .collect()
}

/// [`clean_xml_text`] and then quick-xml's `escape`, in one pass, straight into `o`.
fn esc_into(o: &mut String, s: &str) {
    escape_into(o, s, Escape::XmlDocument);
}

impl ThreadDoc {
    /// A thread known only by where it lives, before extraction fills in
    /// the rest.
    pub fn new(site: SiteId, board: BoardId, thread: ThreadId, saved: SaveDate) -> ThreadDoc {
        let (forum, url, title, encoding) = (String::new(), String::new(), String::new(), String::new());
        ThreadDoc { site, board, thread, forum, url, title, posted: None, saved, encoding, pages: 0, posts: Vec::new() }
    }

    /// The XML text of this thread.
    pub fn to_xml(&self) -> String {
        let mut o = String::with_capacity(1024 + self.posts.iter().map(|p| p.paragraphs.iter().map(|t| t.len() + 12).sum::<usize>() + 96).sum::<usize>());
        o.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<thread site=\"");
        esc_into(&mut o, &self.site);
        o.push_str("\" board=\"");
        esc_into(&mut o, &self.board);
        o.push_str("\" id=\"");
        esc_into(&mut o, &self.thread);
        o.push_str("\">\n");
        let element = |o: &mut String, indent: &str, name: &str, text: &str| {
            o.push_str(indent);
            o.push('<');
            o.push_str(name);
            o.push('>');
            esc_into(o, text);
            o.push_str("</");
            o.push_str(name);
            o.push_str(">\n");
        };
        element(&mut o, "  ", "forum", &self.forum);
        element(&mut o, "  ", "url", &self.url);
        element(&mut o, "  ", "title", &self.title);
        if let Some(p) = &self.posted {
            element(&mut o, "  ", "posted", p);
        }
        element(&mut o, "  ", "saved", self.saved.as_str());
        element(&mut o, "  ", "encoding", &self.encoding);
        let _ = writeln!(o, "  <pages>{}</pages>", self.pages);
        for p in &self.posts {
            let _ = writeln!(o, "  <post floor=\"{}\">", p.floor);
            element(&mut o, "    ", "author", &p.author);
            if let Some(t) = &p.time {
                element(&mut o, "    ", "time", t);
            }
            for para in &p.paragraphs {
                element(&mut o, "    ", "p", para);
            }
            o.push_str("  </post>\n");
        }
        o.push_str("</thread>\n");
        o
    }

    /// Parses a thread XML file's text.
    pub fn from_xml(xml: &str) -> Result<ThreadDoc, DocError> {
        let mut r = quick_xml::Reader::from_str(xml);
        // The root's ids and the save date are checked once they are all
        // read; the other fields default to empty as they always have.
        let (mut site, mut board, mut thread, mut saved) = (String::new(), String::new(), String::new(), String::new());
        let mut doc = Body::default();
        let mut post: Option<Post> = None;
        let mut text = String::new();
        let mut seen_root = false;
        let syntax = |r: &quick_xml::Reader<&[u8]>, e: &dyn std::fmt::Display| DocError::Syntax { at: r.buffer_position(), message: e.to_string() };
        loop {
            let ev = r.read_event().map_err(|e| syntax(&r, &e))?;
            match ev {
                Event::Start(e) => {
                    text.clear();
                    match e.name().as_ref() as &str {
                        "thread" => {
                            seen_root = true;
                            for a in e.attributes() {
                                let a = a.map_err(|err| syntax(&r, &err))?;
                                let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0).map_err(|err| syntax(&r, &err))?.into_owned();
                                match a.key.as_ref() as &str {
                                    "site" => site = v,
                                    "board" => board = v,
                                    "id" => thread = v,
                                    _ => {}
                                }
                            }
                        }
                        "post" => {
                            let mut p = Post::default();
                            for a in e.attributes() {
                                let a = a.map_err(|err| syntax(&r, &err))?;
                                if a.key.as_ref() as &str == "floor" {
                                    let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0).map_err(|err| syntax(&r, &err))?;
                                    p.floor = v.parse().map_err(|_| DocError::Shape(format!("floor {v:?} is not a number")))?;
                                }
                            }
                            post = Some(p);
                        }
                        _ => {}
                    }
                }
                Event::Text(t) => {
                    let s = t.xml10_content();
                    text.push_str(&quick_xml::escape::unescape(&s).map_err(|e| syntax(&r, &e))?);
                }
                Event::GeneralRef(g) => match g.resolve_char_ref().map_err(|e| syntax(&r, &e))? {
                    Some(c) => text.push(c),
                    None => {
                        let name = g.into_inner();
                        text.push_str(&quick_xml::escape::unescape(&format!("&{name};")).map_err(|e| syntax(&r, &e))?);
                    }
                },
                Event::CData(c) => text.push_str(&c.into_inner()),
                Event::End(e) => {
                    let value = std::mem::take(&mut text);
                    match (e.name().as_ref() as &str, post.as_mut()) {
                        ("post", _) => doc.posts.push(post.take().ok_or_else(|| DocError::Shape("</post> without <post>".into()))?),
                        ("author", Some(p)) => p.author = value,
                        ("time", Some(p)) => p.time = Some(value),
                        ("p", Some(p)) => p.paragraphs.push(value),
                        ("forum", None) => doc.forum = value,
                        ("url", None) => doc.url = value,
                        ("title", None) => doc.title = value,
                        ("posted", None) => doc.posted = Some(value),
                        ("saved", None) => saved = value,
                        ("encoding", None) => doc.encoding = value,
                        ("pages", None) => doc.pages = value.trim().parse().map_err(|_| DocError::Shape(format!("pages {value:?} is not a number")))?,
                        _ => {}
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        if !seen_root {
            return Err(DocError::Shape("no <thread> element".into()));
        }
        let shape = |what: &str, e: crate::ids::IdError| DocError::Shape(format!("{what} {e}"));
        Ok(ThreadDoc {
            site: SiteId::parse(&site).map_err(|e| shape("site", e))?,
            board: BoardId::parse(&board).map_err(|e| shape("board", e))?,
            thread: ThreadId::parse(&thread).map_err(|e| shape("thread", e))?,
            saved: SaveDate::parse(&saved).map_err(|e| shape("saved", e))?,
            forum: doc.forum,
            url: doc.url,
            title: doc.title,
            posted: doc.posted,
            encoding: doc.encoding,
            pages: doc.pages,
            posts: doc.posts,
        })
    }
}

/// The fields of a [`ThreadDoc`] that need no check, as the parser fills them.
#[derive(Default)]
struct Body {
    forum: String,
    url: String,
    title: String,
    posted: Option<String>,
    encoding: String,
    pages: u32,
    posts: Vec<Post>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ThreadDoc {
        ThreadDoc {
            site: "dz".parse().unwrap(),
            board: "2".parse().unwrap(),
            thread: "77".parse().unwrap(),
            forum: "清水河畔 & <朋友>".into(),
            url: "http://h/forum.php?mod=viewthread&tid=77".into(),
            title: "考研\"经验\" 'share' 😀".into(),
            posted: Some("2024-03-05T12:34:00".into()),
            saved: "20261130".parse().unwrap(),
            encoding: "GBK".into(),
            pages: 2,
            posts: vec![
                Post {
                    floor: 1,
                    author: "小明".into(),
                    time: Some("2024-03-05T12:34:00".into()),
                    paragraphs: vec!["第一段 a<b>c".into(), "第二段 &amp; ]]>".into()],
                },
                Post { floor: 2, author: "".into(), time: None, paragraphs: vec![] },
            ],
        }
    }

    #[test]
    fn round_trips_with_entities_quotes_and_emoji() {
        let d = sample();
        assert_eq!(ThreadDoc::from_xml(&d.to_xml()).unwrap(), d);
    }

    #[test]
    fn forbidden_characters_are_stripped_not_written() {
        let mut d = sample();
        d.posts[0].paragraphs = vec!["a\u{0}b\u{8}c\u{FFFE}d\r\ne".into()];
        let back = ThreadDoc::from_xml(&d.to_xml()).unwrap();
        assert_eq!(back.posts[0].paragraphs, vec!["abcd\ne".to_string()]);
    }

    #[test]
    fn the_json_has_exactly_the_fields_the_schema_requires_in_its_order() {
        let schema: serde_json::Value = serde_json::from_str(THREAD_SCHEMA).unwrap();
        let names = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect::<Vec<_>>();
        let json: serde_json::Value = serde_json::from_str(&ThreadJson::of(&sample()).to_json()).unwrap();
        // A Value's map may not keep the order: the line's own is checked on its bytes.
        let line = ThreadJson::of(&sample()).to_json();
        let at = |key: &str| line.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("no {key}"));
        let required = names(&schema["required"]);
        assert!(required.windows(2).all(|w| at(&w[0]) < at(&w[1])), "{line}");
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(keys(&json), required.iter().cloned().collect());
        assert_eq!(keys(&json), keys(&schema["properties"]));
        assert_eq!(keys(&json["posts"][0]), names(&schema["$defs"]["post"]["required"]).into_iter().collect());
        assert_eq!(json["authors"], serde_json::json!(["小明"]), "the empty author is no author");
        assert_eq!(json["posts"][0]["text"], "第一段 a<b>c\n第二段 &amp; ]]>");
        assert_eq!(json["posts"][1]["time"], serde_json::Value::Null);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(ThreadDoc::from_xml("<thread><post floor=\"x\"></post></thread>").is_err());
        assert!(ThreadDoc::from_xml("<thread><title>a</thread>").is_err());
        assert!(ThreadDoc::from_xml("hello").is_err());
    }
}
