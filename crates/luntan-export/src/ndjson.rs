//! One JSON object per thread, one line each, for bulk loading into
//! Elasticsearch or OpenSearch: the thread XML's content, nothing else.
//! A line is [`luntan_core::doc::ThreadJson`], the shape serve's
//! `/api/thread` answers too; `docs/thread.schema.json` describes it;
//! `docs/export.md` gives an index mapping with a Chinese analyzer.
//!
//! ```
//! use luntan_core::{Post, ThreadDoc};
//! let mut doc = ThreadDoc::new("dz".parse()?, "2".parse()?, "7".parse()?, "20261205".parse()?);
//! doc.posts = vec![Post { floor: 1, author: "小明".into(), ..Post::default() }];
//! let line = luntan_export::ndjson::ThreadLine::of(&doc);
//! assert_eq!(line.id, "dz/7");
//! assert_eq!(line.authors, ["小明"]);
//! # Ok::<(), luntan_core::ids::IdError>(())
//! ```

/// One line: a thread as its XML holds it.
pub use luntan_core::doc::ThreadJson as ThreadLine;

/// The `_bulk` action line that goes before a line: index it into `index`
/// under the line's [`ThreadLine::id`], replacing an earlier version.
pub fn bulk_action(index: &str, id: &str) -> String {
    let quoted = |s: &str| serde_json::to_string(s).expect("a string serializes");
    format!(r#"{{"index":{{"_index":{},"_id":{}}}}}"#, quoted(index), quoted(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::{Post, ThreadDoc};

    #[test]
    fn a_line_holds_the_whole_thread_and_its_authors_once_each() {
        let post = |floor, author: &str, paras: &[&str]| Post {
            floor,
            author: author.into(),
            time: (floor == 1).then(|| "2024-03-05T12:34:00".into()),
            paragraphs: paras.iter().map(|s| s.to_string()).collect(),
            ..Post::default()
        };
        let doc = ThreadDoc {
            site: "dz".parse().unwrap(),
            board: "2".parse().unwrap(),
            thread: "77".parse().unwrap(),
            forum: "清水河畔".into(),
            url: "http://bbs.example/forum.php?tid=77".into(),
            title: "考研经验".into(),
            posted: Some("2024-03-05T12:34:00".into()),
            saved: "20261130".parse().unwrap(),
            encoding: "GBK".into(),
            pages: 2,
            posts: vec![post(1, "小明", &["第一段", "第二段"]), post(2, "小红", &["回复"]), post(3, "小明", &["再回"])],
            board_name: None,
            replies: None,
            views: None,
        };
        let line = ThreadLine::of(&doc);
        // The published bytes: field order and all.
        assert_eq!(
            line.to_json(),
            r#"{"id":"dz/77","site":"dz","board":"2","thread":"77","url":"http://bbs.example/forum.php?tid=77","forum":"清水河畔","title":"考研经验","posted":"2024-03-05T12:34:00","saved":"20261130","encoding":"GBK","pages":2,"authors":["小明","小红"],"posts":[{"floor":1,"author":"小明","time":"2024-03-05T12:34:00","text":"第一段\n第二段"},{"floor":2,"author":"小红","time":null,"text":"回复"},{"floor":3,"author":"小明","time":null,"text":"再回"}]}"#
        );
        assert_eq!(serde_json::from_str::<ThreadLine>(&line.to_json()).unwrap(), line);
        assert_eq!(bulk_action("luntan", &line.id), r#"{"index":{"_index":"luntan","_id":"dz/77"}}"#);
    }
}
