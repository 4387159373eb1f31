//! The normalized thread: what `extract` writes as `article<T>.xml` and
//! `index` reads back. One format for every forum, always UTF-8.
//!
//! ```xml
//! <?xml version="1.0" encoding="UTF-8"?>
//! <thread version="2" site="dz" board="2" id="77">
//!   <forum>清水河畔</forum>
//!   <board-name>考研交流</board-name>
//!   <url>http://bbs.example/forum.php?mod=viewthread&amp;tid=77</url>
//!   <title>考研经验分享</title>
//!   <posted>2024-03-05T12:34:00</posted>
//!   <saved>20261130</saved>
//!   <encoding>GBK</encoding>
//!   <pages>2</pages>
//!   <replies>41</replies>
//!   <views>1200</views>
//!   <post floor="1" id="4929">
//!     <author id="17" url="http://bbs.example/space-uid-17.html">小明</author>
//!     <time>2024-03-05T12:34:00</time>
//!     <p>第一段</p>
//!     <p>第二段，见 链接</p>
//!     <link href="http://example.org/a">链接</link>
//!   </post>
//!   <post floor="2" id="4930" reply-to="4929" likes="3">
//!     <author>阿强</author>
//!     <time>2024-03-05T13:02:00</time>
//!     <edited>2024-03-05T13:05:00</edited>
//!     <location>广东</location>
//!     <quote of="4929" author="小明"><p>第一段</p></quote>
//!     <p>同意</p>
//!     <img src="http://bbs.example/a.jpg" alt="图"/>
//!   </post>
//! </thread>
//! ```
//!
//! Times are the forum's local wall-clock time, `YYYY-MM-DDTHH:MM:SS`, or
//! absent when the page did not show one. Text is stripped of characters XML
//! 1.0 forbids and escaped, so every file parses back to the same value.
//!
//! **Versions.** Version 1 (no `version` attribute) has only the fields up to
//! `<pages>` and, per post, `floor`, `<author>`, `<time>` and `<p>`. Version
//! 2 adds fields, every one optional and written only when known; nothing of
//! version 1 changed meaning. The rule is the simplest honest one: a file
//! written now always says `version="2"`, whatever fields it has, and
//! [`ThreadDoc::from_xml`] reads both (a version-1 file is a version-2 file
//! with every new field absent). A higher version is refused rather than
//! half read, since its fields might change what the known ones mean.
//!
//! **Quotes** are `<quote>` elements holding their own `<p>`s, never the
//! post's: a post's `<p>`s are the words its author wrote, which is what
//! search matches and counts as theirs.
//!
//! **Links and images** are separate elements after the paragraphs, in page
//! order, and a link's text stays in its paragraph too. Putting them in place
//! inside `<p>` would make paragraphs mixed content, and every reader of
//! version 1 (index, snippets, export's `text`, other people's scripts) takes a
//! `<p>` as plain text; kept apart, a version-1 reader that skips unknown
//! elements reads a version-2 file correctly, and what is lost is only the
//! link's offset in its paragraph, which its text finds again.
//!
//! [`ThreadJson`] is the same thread as JSON, for every program that reads
//! one (`luntan-export --ndjson`, serve's `/api/thread`).

use std::fmt::Write as _;

use quick_xml::events::{BytesStart, Event};

use crate::escape::{escape_into, Escape};
use crate::ids::{BoardId, SaveDate, SiteId, ThreadId};

/// The thread XML version [`ThreadDoc::to_xml`] writes and the highest
/// [`ThreadDoc::from_xml`] reads.
pub const XML_VERSION: u32 = 2;

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
    /// Version 2: the board's display name, where the page shows it.
    pub board_name: Option<String>,
    /// Version 2: the reply count the forum shows for the thread (which may
    /// differ from `posts.len() - 1`: deleted and hidden posts count there).
    pub replies: Option<u64>,
    /// Version 2: the view count the forum shows.
    pub views: Option<u64>,
}

/// One post (a "floor"). Its JSON (in a [`ThreadJson`]) has the same fields
/// in the same order, `paragraphs` as `text` (joined by `\n`), version 2's
/// fields left out when absent.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Post {
    pub floor: u32,
    pub author: String,
    pub time: Option<String>,
    /// Paragraphs of the author's own text, in order; none is empty. Quoted
    /// text is in `quotes`, never here.
    #[serde(rename = "text", with = "lines")]
    pub paragraphs: Vec<String>,
    /// Version 2: the forum's own id of the post (Discuz!'s `pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Version 2: the forum's id of the author (a uid), which tells apart two
    /// people of one name and keeps one who renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_id: Option<String>,
    /// Version 2: the author's profile page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_url: Option<String>,
    /// Version 2: the `id` of the post this one answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// Version 2: what the post quotes, in page order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotes: Vec<Quote>,
    /// Version 2: when the post was last edited, as `time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<String>,
    /// Version 2: links in the post's own text, in page order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    /// Version 2: images in the post's own text, in page order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Version 2: counts the page shows for the post.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replies: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub views: Option<u64>,
    /// Version 2: the location label a forum shows (`IP属地：广东`), as shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// Quoted text inside a post: someone else's words.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Quote {
    /// The quoted post's `id`, when the quote links to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// The quoted author as the quote shows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The quoted paragraphs; none is empty.
    #[serde(rename = "text", with = "lines")]
    pub paragraphs: Vec<String>,
}

/// Paragraphs as JSON: one string, joined by `\n`, which readers of a line
/// (a search engine's bulk load, a script) take as the text. Read back, the
/// string is split at `\n` again, so a line read and written is the same bytes.
mod lines {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(paragraphs: &[String], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&paragraphs.join("\n"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        let text = String::deserialize(d)?;
        Ok(if text.is_empty() { Vec::new() } else { text.split('\n').map(str::to_owned).collect() })
    }
}

/// A link in a post's text.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Link {
    pub href: String,
    pub text: String,
}

/// An image in a post's text.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Image {
    pub src: String,
    pub alt: String,
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
/// field order here is the published line's byte order. Version 2's fields
/// come after version 1's and are left out when absent, as in the XML, so a
/// version-1 thread's line is byte for byte what it was.
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
    pub posts: Vec<Post>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replies: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub views: Option<u64>,
}

/// `docs/thread.schema.json` (JSON Schema 2020-12), which describes a
/// [`ThreadJson`]: built in, so serve's OpenAPI document describes
/// `/api/thread` with the same text.
pub const THREAD_SCHEMA: &str = include_str!("../../../docs/thread.schema.json");

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
            posts: doc.posts.clone(),
            board_name: doc.board_name.clone(),
            replies: doc.replies,
            views: doc.views,
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
        ThreadDoc {
            site,
            board,
            thread,
            forum,
            url,
            title,
            posted: None,
            saved,
            encoding,
            pages: 0,
            posts: Vec::new(),
            board_name: None,
            replies: None,
            views: None,
        }
    }

    /// The XML text of this thread, always version 2.
    pub fn to_xml(&self) -> String {
        let mut o = String::with_capacity(1024 + self.posts.iter().map(|p| p.paragraphs.iter().map(|t| t.len() + 12).sum::<usize>() + 96).sum::<usize>());
        let _ = write!(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<thread version=\"{XML_VERSION}\" site=\"");
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
        if let Some(b) = &self.board_name {
            element(&mut o, "  ", "board-name", b);
        }
        element(&mut o, "  ", "url", &self.url);
        element(&mut o, "  ", "title", &self.title);
        if let Some(p) = &self.posted {
            element(&mut o, "  ", "posted", p);
        }
        element(&mut o, "  ", "saved", self.saved.as_str());
        element(&mut o, "  ", "encoding", &self.encoding);
        let _ = writeln!(o, "  <pages>{}</pages>", self.pages);
        if let Some(n) = self.replies {
            let _ = writeln!(o, "  <replies>{n}</replies>");
        }
        if let Some(n) = self.views {
            let _ = writeln!(o, "  <views>{n}</views>");
        }
        for p in &self.posts {
            let _ = write!(o, "  <post floor=\"{}\"", p.floor);
            attr_into(&mut o, "id", p.id.as_deref());
            attr_into(&mut o, "reply-to", p.reply_to.as_deref());
            for (name, n) in [("likes", p.likes), ("replies", p.replies), ("views", p.views)] {
                if let Some(n) = n {
                    let _ = write!(o, " {name}=\"{n}\"");
                }
            }
            o.push_str(">\n    <author");
            attr_into(&mut o, "id", p.author_id.as_deref());
            attr_into(&mut o, "url", p.author_url.as_deref());
            o.push('>');
            esc_into(&mut o, &p.author);
            o.push_str("</author>\n");
            for (name, v) in [("time", &p.time), ("edited", &p.edited), ("location", &p.location)] {
                if let Some(v) = v {
                    element(&mut o, "    ", name, v);
                }
            }
            for q in &p.quotes {
                o.push_str("    <quote");
                attr_into(&mut o, "of", q.of.as_deref());
                attr_into(&mut o, "author", q.author.as_deref());
                o.push_str(">\n");
                for para in &q.paragraphs {
                    element(&mut o, "      ", "p", para);
                }
                o.push_str("    </quote>\n");
            }
            for para in &p.paragraphs {
                element(&mut o, "    ", "p", para);
            }
            for l in &p.links {
                o.push_str("    <link");
                attr_into(&mut o, "href", Some(&l.href));
                o.push('>');
                esc_into(&mut o, &l.text);
                o.push_str("</link>\n");
            }
            for i in &p.images {
                o.push_str("    <img");
                attr_into(&mut o, "src", Some(&i.src));
                attr_into(&mut o, "alt", Some(&i.alt));
                o.push_str("/>\n");
            }
            o.push_str("  </post>\n");
        }
        o.push_str("</thread>\n");
        o
    }

    /// Parses a thread XML file's text, version 1 or 2.
    pub fn from_xml(xml: &str) -> Result<ThreadDoc, DocError> {
        let mut r = quick_xml::Reader::from_str(xml);
        // The root's ids and the save date are checked once they are all
        // read; the other fields default to empty as they always have.
        let (mut site, mut board, mut thread, mut saved) = (String::new(), String::new(), String::new(), String::new());
        let mut doc = Body::default();
        let mut post: Option<Post> = None;
        let mut quote: Option<Quote> = None;
        let mut href = String::new();
        let mut text = String::new();
        let mut seen_root = false;
        let syntax = |r: &quick_xml::Reader<&[u8]>, e: &dyn std::fmt::Display| DocError::Syntax { at: r.buffer_position(), message: e.to_string() };
        let count = |what: &str, v: &str| v.trim().parse::<u64>().map_err(|_| DocError::Shape(format!("{what} {v:?} is not a number")));
        loop {
            let ev = r.read_event().map_err(|e| syntax(&r, &e))?;
            match ev {
                Event::Start(ref e) | Event::Empty(ref e) => {
                    text.clear();
                    let attrs = || attributes(e).map_err(|err| syntax(&r, &err));
                    match (e.name().as_ref() as &str, post.as_mut()) {
                        ("thread", _) => {
                            seen_root = true;
                            for (k, v) in attrs()? {
                                match k.as_str() {
                                    "site" => site = v,
                                    "board" => board = v,
                                    "id" => thread = v,
                                    "version" => match v.trim().parse::<u32>() {
                                        Ok(n) if n <= XML_VERSION => {}
                                        Ok(n) => return Err(DocError::Shape(format!("version {n} is newer than this luntan reads (up to {XML_VERSION})"))),
                                        Err(_) => return Err(DocError::Shape(format!("version {v:?} is not a number"))),
                                    },
                                    _ => {}
                                }
                            }
                        }
                        ("post", _) => {
                            let mut p = Post::default();
                            for (k, v) in attrs()? {
                                match k.as_str() {
                                    "floor" => p.floor = v.parse().map_err(|_| DocError::Shape(format!("floor {v:?} is not a number")))?,
                                    "id" => p.id = Some(v),
                                    "reply-to" => p.reply_to = Some(v),
                                    "likes" => p.likes = Some(count("likes", &v)?),
                                    "replies" => p.replies = Some(count("replies", &v)?),
                                    "views" => p.views = Some(count("views", &v)?),
                                    _ => {}
                                }
                            }
                            post = Some(p);
                        }
                        ("author", Some(p)) => {
                            for (k, v) in attrs()? {
                                match k.as_str() {
                                    "id" => p.author_id = Some(v),
                                    "url" => p.author_url = Some(v),
                                    _ => {}
                                }
                            }
                        }
                        ("quote", Some(_)) => {
                            let mut q = Quote::default();
                            for (k, v) in attrs()? {
                                match k.as_str() {
                                    "of" => q.of = Some(v),
                                    "author" => q.author = Some(v),
                                    _ => {}
                                }
                            }
                            quote = Some(q);
                        }
                        ("link", Some(_)) => href = attrs()?.into_iter().find(|(k, _)| k == "href").map(|(_, v)| v).unwrap_or_default(),
                        ("img", Some(p)) => {
                            let mut i = Image::default();
                            for (k, v) in attrs()? {
                                match k.as_str() {
                                    "src" => i.src = v,
                                    "alt" => i.alt = v,
                                    _ => {}
                                }
                            }
                            p.images.push(i);
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
                        ("edited", Some(p)) => p.edited = Some(value),
                        ("location", Some(p)) => p.location = Some(value),
                        ("p", Some(p)) => match quote.as_mut() {
                            Some(q) => q.paragraphs.push(value),
                            None => p.paragraphs.push(value),
                        },
                        ("quote", Some(p)) => p.quotes.push(quote.take().ok_or_else(|| DocError::Shape("</quote> without <quote>".into()))?),
                        ("link", Some(p)) => p.links.push(Link { href: std::mem::take(&mut href), text: value }),
                        ("forum", None) => doc.forum = value,
                        ("board-name", None) => doc.board_name = Some(value),
                        ("url", None) => doc.url = value,
                        ("title", None) => doc.title = value,
                        ("posted", None) => doc.posted = Some(value),
                        ("saved", None) => saved = value,
                        ("encoding", None) => doc.encoding = value,
                        ("pages", None) => doc.pages = value.trim().parse().map_err(|_| DocError::Shape(format!("pages {value:?} is not a number")))?,
                        ("replies", None) => doc.replies = Some(count("replies", &value)?),
                        ("views", None) => doc.views = Some(count("views", &value)?),
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
            board_name: doc.board_name,
            replies: doc.replies,
            views: doc.views,
        })
    }
}

/// ` name="value"` when there is a value. Tab and newline are written as
/// character references: a parser turns them into spaces in an attribute
/// otherwise, and the file would not read back to what was written.
fn attr_into(o: &mut String, name: &str, value: Option<&str>) {
    let Some(v) = value else { return };
    o.push(' ');
    o.push_str(name);
    o.push_str("=\"");
    let from = o.len();
    esc_into(o, v);
    if o[from..].contains(['\n', '\t']) {
        let escaped = o[from..].replace('\n', "&#10;").replace('\t', "&#9;");
        o.truncate(from);
        o.push_str(&escaped);
    }
    o.push('"');
}

/// An element's attributes, names and normalized values.
fn attributes(e: &BytesStart<'_>) -> Result<Vec<(String, String)>, quick_xml::Error> {
    let mut out = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(quick_xml::Error::from)?;
        let v = a.normalized_value(quick_xml::XmlVersion::Implicit1_0)?.into_owned();
        out.push(((a.key.as_ref() as &str).to_owned(), v));
    }
    Ok(out)
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
    board_name: Option<String>,
    replies: Option<u64>,
    views: Option<u64>,
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
                    ..Post::default()
                },
                Post { floor: 2, author: "".into(), time: None, paragraphs: vec![], ..Post::default() },
            ],
            board_name: None,
            replies: None,
            views: None,
        }
    }

    /// [`sample`] with every version-2 field set, awkward text in each.
    fn sample_v2() -> ThreadDoc {
        let mut d = sample();
        d.board_name = Some("考研 & <交流>".into());
        d.replies = Some(41);
        d.views = Some(1200);
        d.posts[0].id = Some("4929".into());
        d.posts[0].author_id = Some("17".into());
        d.posts[0].author_url = Some("http://h/home.php?mod=space&uid=17".into());
        d.posts[0].links = vec![Link { href: "http://e.org/?a=1&b=\"2\"".into(), text: "链接 <x>".into() }];
        d.posts[0].images = vec![Image { src: "http://h/a b.jpg".into(), alt: "图\t一\n二 'q'".into() }];
        d.posts[0].likes = Some(3);
        d.posts[0].replies = Some(0);
        d.posts[0].views = Some(99);
        d.posts[1].id = Some("4930".into());
        d.posts[1].reply_to = Some("4929".into());
        d.posts[1].edited = Some("2024-03-05T13:05:00".into());
        d.posts[1].location = Some("广东".into());
        d.posts[1].quotes = vec![
            Quote { of: Some("4929".into()), author: Some("小明".into()), paragraphs: vec!["第一段 a<b>c".into(), "二".into()] },
            Quote { of: None, author: None, paragraphs: vec!["无出处".into()] },
        ];
        d.posts[1].paragraphs = vec!["同意".into()];
        d
    }

    #[test]
    fn round_trips_with_entities_quotes_and_emoji() {
        let d = sample();
        assert_eq!(ThreadDoc::from_xml(&d.to_xml()).unwrap(), d);
    }

    #[test]
    fn every_version_2_field_round_trips() {
        let d = sample_v2();
        let xml = d.to_xml();
        assert!(xml.contains("<thread version=\"2\" "), "{xml}");
        assert_eq!(ThreadDoc::from_xml(&xml).unwrap(), d);
    }

    #[test]
    fn quoted_words_are_the_quotes_not_the_posts_paragraphs() {
        let back = ThreadDoc::from_xml(&sample_v2().to_xml()).unwrap();
        assert_eq!(back.posts[1].paragraphs, vec!["同意".to_string()]);
        assert_eq!(back.posts[1].text(), "同意");
        assert_eq!(back.posts[1].quotes[0].paragraphs, vec!["第一段 a<b>c".to_string(), "二".to_string()]);
    }

    #[test]
    fn a_version_1_file_reads_with_every_new_field_absent() {
        // What this module wrote before version 2, byte for byte.
        let v1 = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<thread site=\"dz\" board=\"2\" id=\"77\">\n  <forum>f</forum>\n  <url>http://h/t</url>\n  <title>t</title>\n  <saved>20261130</saved>\n  <encoding>GBK</encoding>\n  <pages>1</pages>\n  <post floor=\"1\">\n    <author>a</author>\n    <p>x</p>\n  </post>\n</thread>\n";
        let d = ThreadDoc::from_xml(v1).unwrap();
        assert_eq!(d.posts[0], Post { floor: 1, author: "a".into(), paragraphs: vec!["x".into()], ..Post::default() });
        assert_eq!((d.board_name, d.replies, d.views), (None, None, None));
        let again = ThreadDoc::from_xml(v1).unwrap().to_xml();
        assert!(again.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<thread version=\"2\" site=\"dz\""), "{again}");
    }

    #[test]
    fn a_newer_version_is_refused_not_half_read() {
        let e = ThreadDoc::from_xml("<thread version=\"3\" site=\"dz\" board=\"2\" id=\"7\"><saved>20261130</saved></thread>").unwrap_err();
        assert!(e.to_string().contains("version 3 is newer"), "{e}");
        assert!(ThreadDoc::from_xml("<thread version=\"x\" site=\"dz\" board=\"2\" id=\"7\"><saved>20261130</saved></thread>").is_err());
    }

    #[test]
    fn absent_version_2_fields_are_not_written() {
        let xml = sample().to_xml();
        for absent in
            ["<board-name", "<replies", "<views", "floor=\"1\" id", "<author ", "reply-to", "<quote", "<link", "<img", "<edited", "<location", "likes"]
        {
            assert!(!xml.contains(absent), "{absent} in {xml}");
        }
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
        // Version 1's fields are the required ones; version 2's are left out when absent.
        assert_eq!(keys(&json), required.iter().cloned().collect());
        assert_eq!(keys(&json["posts"][0]), names(&schema["$defs"]["post"]["required"]).into_iter().collect());
        let full: serde_json::Value = serde_json::from_str(&ThreadJson::of(&sample_v2()).to_json()).unwrap();
        assert_eq!(keys(&full), keys(&schema["properties"]), "every field of a full thread is in the schema, and every field of the schema is written");
        let post_keys = keys(&full["posts"][0]).union(&keys(&full["posts"][1])).cloned().collect();
        assert_eq!(keys(&schema["$defs"]["post"]["properties"]), post_keys);
        assert_eq!(keys(&full["posts"][1]["quotes"][0]), keys(&schema["$defs"]["quote"]["properties"]));
        assert_eq!(full["posts"][1]["quotes"][0]["text"], "第一段 a<b>c\n二");
        assert_eq!(full["posts"][1]["text"], "同意");
        assert_eq!(json["authors"], serde_json::json!(["小明"]), "the empty author is no author");
        assert_eq!(json["posts"][0]["text"], "第一段 a<b>c\n第二段 &amp; ]]>");
        assert_eq!(json["posts"][1]["time"], serde_json::Value::Null);
    }

    /// A post is its own JSON: read back, a line gives the same posts and
    /// the same bytes.
    #[test]
    fn a_json_line_read_back_is_the_same_line_and_the_same_posts() {
        for d in [sample(), sample_v2()] {
            let line = ThreadJson::of(&d).to_json();
            let back: ThreadJson = serde_json::from_str(&line).unwrap();
            assert_eq!(back.to_json(), line);
            assert_eq!(back.posts, d.posts);
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(ThreadDoc::from_xml("<thread><post floor=\"x\"></post></thread>").is_err());
        assert!(ThreadDoc::from_xml("<thread><title>a</thread>").is_err());
        assert!(ThreadDoc::from_xml("hello").is_err());
    }
}
