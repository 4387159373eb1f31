//! One JSON object per thread, one line each, for bulk loading into
//! Elasticsearch or OpenSearch: the thread XML's content, nothing else.
//! `docs/thread.schema.json` describes a line; `docs/export.md` gives an
//! index mapping with a Chinese analyzer.
//!
//! ```
//! use luntan_core::{Post, ThreadDoc};
//! let doc = ThreadDoc { site: "dz".into(), thread: "7".into(), posts: vec![Post { floor: 1, author: "小明".into(), ..Post::default() }], ..ThreadDoc::default() };
//! let line = luntan_export::ndjson::ThreadLine::of(&doc);
//! assert_eq!(line.id, "dz/7");
//! assert_eq!(line.authors, ["小明"]);
//! ```

use luntan_core::ThreadDoc;

/// One line: a thread as its XML holds it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ThreadLine {
    /// `site/thread`: unique across forums (the bulk action's `_id`).
    pub id: String,
    pub site: String,
    pub board: String,
    pub thread: String,
    pub url: String,
    /// The forum's display name.
    pub forum: String,
    pub title: String,
    /// The first post's time, the forum's local wall clock
    /// (`YYYY-MM-DDTHH:MM:SS`), or null.
    pub posted: Option<String>,
    /// `YYYYMMDD` the pages were saved.
    pub saved: String,
    /// The encoding the pages were decoded from.
    pub encoding: String,
    pub pages: u32,
    /// Every post's author, each once, in the order they first post.
    pub authors: Vec<String>,
    pub posts: Vec<PostLine>,
}

/// One post of a [`ThreadLine`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PostLine {
    pub floor: u32,
    pub author: String,
    pub time: Option<String>,
    /// Paragraphs joined by `\n`.
    pub text: String,
}

impl ThreadLine {
    pub fn of(doc: &ThreadDoc) -> ThreadLine {
        let mut authors: Vec<String> = Vec::new();
        for p in doc.posts.iter().filter(|p| !p.author.is_empty()) {
            if !authors.contains(&p.author) {
                authors.push(p.author.clone());
            }
        }
        ThreadLine {
            id: format!("{}/{}", doc.site, doc.thread),
            site: doc.site.clone(),
            board: doc.board.clone(),
            thread: doc.thread.clone(),
            url: doc.url.clone(),
            forum: doc.forum.clone(),
            title: doc.title.clone(),
            posted: doc.posted.clone(),
            saved: doc.saved.clone(),
            encoding: doc.encoding.clone(),
            pages: doc.pages,
            authors,
            posts: doc.posts.iter().map(|p| PostLine { floor: p.floor, author: p.author.clone(), time: p.time.clone(), text: p.text() }).collect(),
        }
    }

    /// The line's text, without its newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a thread line serializes")
    }

    /// The `_bulk` action line that goes before this one: index it into
    /// `index` under its [`ThreadLine::id`], replacing an earlier version.
    pub fn bulk_action(&self, index: &str) -> String {
        let quoted = |s: &str| serde_json::to_string(s).expect("a string serializes");
        format!(r#"{{"index":{{"_index":{},"_id":{}}}}}"#, quoted(index), quoted(&self.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::Post;

    #[test]
    fn a_line_holds_the_whole_thread_and_its_authors_once_each() {
        let post = |floor, author: &str, paras: &[&str]| Post {
            floor,
            author: author.into(),
            time: (floor == 1).then(|| "2024-03-05T12:34:00".into()),
            paragraphs: paras.iter().map(|s| s.to_string()).collect(),
        };
        let doc = ThreadDoc {
            site: "dz".into(),
            board: "2".into(),
            thread: "77".into(),
            forum: "清水河畔".into(),
            url: "http://bbs.example/forum.php?tid=77".into(),
            title: "考研经验".into(),
            posted: Some("2024-03-05T12:34:00".into()),
            saved: "20261130".into(),
            encoding: "GBK".into(),
            pages: 2,
            posts: vec![post(1, "小明", &["第一段", "第二段"]), post(2, "小红", &["回复"]), post(3, "小明", &["再回"])],
        };
        let line = ThreadLine::of(&doc);
        let v: serde_json::Value = serde_json::from_str(&line.to_json()).unwrap();
        assert_eq!(v["id"], "dz/77");
        assert_eq!(v["authors"], serde_json::json!(["小明", "小红"]));
        assert_eq!(v["posts"][0]["text"], "第一段\n第二段");
        assert_eq!(v["posts"][1]["time"], serde_json::Value::Null);
        assert_eq!(v["posted"], "2024-03-05T12:34:00");
        assert!(!line.to_json().contains('\n'), "one line");
        assert_eq!(serde_json::from_value::<ThreadLine>(v).unwrap(), line);
        assert_eq!(line.bulk_action("luntan"), r#"{"index":{"_index":"luntan","_id":"dz/77"}}"#);
    }
}
