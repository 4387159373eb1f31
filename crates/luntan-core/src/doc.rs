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

use std::fmt::Write as _;

use quick_xml::events::Event;

use crate::escape::{escape_into, Escape};

/// One thread, normalized.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThreadDoc {
    pub site: String,
    pub board: String,
    pub thread: String,
    /// The forum's display name.
    pub forum: String,
    pub url: String,
    pub title: String,
    /// Time of the first post.
    pub posted: Option<String>,
    /// `YYYYMMDD` the HTML was saved.
    pub saved: String,
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
        element(&mut o, "  ", "saved", &self.saved);
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
        let mut doc = ThreadDoc::default();
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
                                    "site" => doc.site = v,
                                    "board" => doc.board = v,
                                    "id" => doc.thread = v,
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
                        ("saved", None) => doc.saved = value,
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
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ThreadDoc {
        ThreadDoc {
            site: "dz".into(),
            board: "2".into(),
            thread: "77".into(),
            forum: "清水河畔 & <朋友>".into(),
            url: "http://h/forum.php?mod=viewthread&tid=77".into(),
            title: "考研\"经验\" 'share' 😀".into(),
            posted: Some("2024-03-05T12:34:00".into()),
            saved: "20261130".into(),
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
    fn garbage_is_an_error_not_a_panic() {
        assert!(ThreadDoc::from_xml("<thread><post floor=\"x\"></post></thread>").is_err());
        assert!(ThreadDoc::from_xml("<thread><title>a</thread>").is_err());
        assert!(ThreadDoc::from_xml("hello").is_err());
    }
}
