//! The one schema every per-forum index shares, and how a [`ThreadDoc`]
//! becomes a document of it.
//!
//! | field        | type / analysis                         | stored | why                                   |
//! |--------------|-----------------------------------------|--------|---------------------------------------|
//! | `key`        | raw `site/thread`, fast                 | yes    | replace a re-indexed thread; ids-only listings |
//! | `site`       | raw                                     | yes    | `site:` filter, output                |
//! | `board`      | raw                                     | yes    | `board:` filter                       |
//! | `thread`     | raw                                     | yes    |                                       |
//! | `url`        | raw                                     | yes    |                                       |
//! | `forum`      | not indexed                             | yes    | the forum's display name              |
//! | `title`      | jieba ([`ZH_TOKENIZER`]), freqs         | yes    | word matches, snippets                |
//! | `title_gram` | CJK uni+bigrams ([`GRAM_TOKENIZER`]), positions | no | substring recall, phrases         |
//! | `body`       | jieba, freqs                            | yes    | all posts, one per line               |
//! | `body_gram`  | CJK uni+bigrams, positions              | no     |                                       |
//! | `authors`    | CJK uni+bigrams, positions; one value per distinct author | yes | `author:` filter |
//! | `posted`     | date (seconds), indexed + fast          | yes    | first post's time, read as UTC        |
//! | `saved`      | not indexed                             | yes    | `YYYYMMDD` the HTML was saved         |
//! | `tiebreak`   | u64 fast: a stable hash of `key`        | no     | equal scores order the same however threads are split into indexes |
//! | `post_times` | date (seconds), fast; one value per dated post | no | posts per interval ([`crate::trend`]) |
//! | `author_ids` | raw; one value per distinct author id   | no     | `author:` by the forum's own id       |
//! | `replied`    | CJK uni+bigrams, positions; one value per author answered or quoted | no | `reply-to:` by name |
//! | `replied_ids`| raw; the ids of those authors           | no     | `reply-to:` by id                     |
//! | `link_hosts` | raw; each linked host and its parent domains | no | `link:weibo.com`                     |
//! | `quoted`     | jieba, freqs; one value per quote        | yes    | a hit in a quote, said as such        |
//! | `quoted_gram`| CJK uni+bigrams, positions               | no     |                                       |
//! | `quoted_by`  | not indexed; the author of each `quoted` value, or empty | yes | whose words a quote hit shows |
//!
//! Fields are only ever added at the end: an index written before one was
//! added keeps every other field under the same id, so it can be searched
//! (its documents simply lack the new field, see [`LuntanSchema::is_previous`]
//! and [`crate::search::IfField`]) until `luntan-index` rebuilds it.

use luntan_core::ThreadDoc;
use tantivy::schema::{DateOptions, DateTimePrecision, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING};
use tantivy::{DateTime, TantivyDocument, Term};

use crate::analysis::{GRAM_TOKENIZER, PREVIOUS_TOKENIZERS, ZH_TOKENIZER};

/// The schema and its fields.
#[derive(Debug, Clone)]
pub struct LuntanSchema {
    pub schema: Schema,
    pub key: Field,
    pub site: Field,
    pub board: Field,
    pub thread: Field,
    pub url: Field,
    pub forum: Field,
    pub title: Field,
    pub title_gram: Field,
    pub body: Field,
    pub body_gram: Field,
    pub authors: Field,
    pub posted: Field,
    pub post_times: Field,
    pub saved: Field,
    pub tiebreak: Field,
    pub author_ids: Field,
    pub replied: Field,
    pub replied_ids: Field,
    pub link_hosts: Field,
    pub quoted: Field,
    pub quoted_gram: Field,
    pub quoted_by: Field,
}

impl Default for LuntanSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl LuntanSchema {
    pub fn new() -> LuntanSchema {
        LuntanSchema::with_tokenizers(ZH_TOKENIZER, GRAM_TOKENIZER)
    }

    /// Today's fields, their text analyzed by the analyzers named `zh` and `gram`.
    pub(crate) fn with_tokenizers(zh_name: &str, gram_name: &str) -> LuntanSchema {
        let mut b = Schema::builder();
        let text = |tokenizer: &str, record: IndexRecordOption| {
            TextOptions::default().set_indexing_options(TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record))
        };
        let zh = text(zh_name, IndexRecordOption::WithFreqs);
        let gram = text(gram_name, IndexRecordOption::WithFreqsAndPositions);
        let key = b.add_text_field(KEY, STRING | STORED | FAST);
        let site = b.add_text_field("site", STRING | STORED);
        let board = b.add_text_field("board", STRING | STORED);
        let thread = b.add_text_field("thread", STRING | STORED);
        let url = b.add_text_field("url", STRING | STORED);
        let forum = b.add_text_field("forum", STORED);
        let title = b.add_text_field("title", zh.clone().set_stored());
        let title_gram = b.add_text_field("title_gram", gram.clone());
        let zh_quoted = zh.clone().set_stored();
        let body = b.add_text_field("body", zh.set_stored());
        let body_gram = b.add_text_field("body_gram", gram.clone());
        let authors = b.add_text_field("authors", gram.clone().set_stored());
        let posted = b.add_date_field("posted", DateOptions::from(INDEXED | STORED | FAST).set_precision(DateTimePrecision::Seconds));
        let saved = b.add_text_field("saved", STORED);
        let tiebreak = b.add_u64_field(TIEBREAK, FAST);
        // Last, so that an index written before it has every other field
        // under the same id and can still be searched (see `is_previous`).
        let post_times = b.add_date_field(POST_TIMES, DateOptions::from(FAST).set_precision(DateTimePrecision::Seconds));
        // Thread XML version 2's conversation, after `post_times` for the same reason.
        let author_ids = b.add_text_field("author_ids", STRING);
        let replied = b.add_text_field("replied", gram.clone());
        let replied_ids = b.add_text_field("replied_ids", STRING);
        let link_hosts = b.add_text_field("link_hosts", STRING);
        // Quoted words apart from the thread's own (`body`), so that a
        // query finds the post that wrote them first and a hit found only
        // in a quote can say so.
        let quoted = b.add_text_field("quoted", zh_quoted);
        let quoted_gram = b.add_text_field("quoted_gram", gram);
        let quoted_by = b.add_text_field("quoted_by", STORED);
        LuntanSchema {
            schema: b.build(),
            key,
            site,
            board,
            thread,
            url,
            forum,
            title,
            title_gram,
            body,
            body_gram,
            authors,
            posted,
            post_times,
            saved,
            tiebreak,
            author_ids,
            replied,
            replied_ids,
            link_hosts,
            quoted,
            quoted_gram,
            quoted_by,
        }
    }

    /// Whether `other` is the schema of an index an older luntan wrote:
    /// today's fields up to `post_times` or any later one (fields are only
    /// added at the end), or with the previous analysis's analyzer names
    /// ([`PREVIOUS_TOKENIZERS`]), or both. Such an index answers every
    /// search under today's field ids (a filter on a field it lacks matches
    /// nothing there, trends count no posts in one without `post_times`; a
    /// variant form finds only what that analysis folded) until
    /// `luntan-index` rebuilds it from the XML, which it does on its next run.
    pub fn is_previous(&self, other: &Schema) -> bool {
        let theirs: Vec<_> = other.fields().map(|(_, e)| e).collect();
        let previous = LuntanSchema::with_tokenizers(PREVIOUS_TOKENIZERS.0, PREVIOUS_TOKENIZERS.1);
        let found = [&self.schema, &previous.schema].into_iter().any(|schema| {
            let ours: Vec<_> = schema.fields().map(|(_, e)| e).collect();
            // Every field before `post_times` has been there from the start.
            let first_added = ours.iter().position(|e| e.name() == POST_TIMES).unwrap_or(ours.len());
            let prefix = theirs.len() >= first_added && theirs.len() <= ours.len() && theirs[..] == ours[..theirs.len()];
            prefix && (schema != &self.schema || theirs.len() < ours.len())
        });
        found
    }

    /// The term that names one thread's document.
    pub fn key_term(&self, site: &str, thread: &str) -> Term {
        Term::from_field_text(self.key, &thread_key(site, thread))
    }

    /// The document for a thread: title and body go to both analyzers.
    pub fn document(&self, doc: &ThreadDoc) -> TantivyDocument {
        let mut d = TantivyDocument::default();
        d.add_text(self.key, thread_key(&doc.site, &doc.thread));
        d.add_text(self.site, &doc.site);
        d.add_text(self.board, &doc.board);
        d.add_text(self.thread, &doc.thread);
        d.add_text(self.url, &doc.url);
        d.add_text(self.forum, &doc.forum);
        d.add_text(self.title, &doc.title);
        d.add_text(self.title_gram, &doc.title);
        let body = thread_body(doc);
        d.add_text(self.body, &body);
        d.add_text(self.body_gram, &body);
        let mut seen: Vec<&str> = Vec::new();
        for p in &doc.posts {
            let a = p.author.trim();
            if !a.is_empty() && !seen.contains(&a) {
                seen.push(a);
                d.add_text(self.authors, a);
            }
        }
        let posted = doc.posted.as_deref().or_else(|| doc.posts.iter().find_map(|p| p.time.as_deref()));
        if let Some(t) = posted.and_then(parse_posted) {
            d.add_date(self.posted, t);
        }
        for t in doc.posts.iter().filter_map(|p| p.time.as_deref().and_then(parse_posted)) {
            d.add_date(self.post_times, t);
        }
        d.add_text(self.saved, doc.saved);
        d.add_u64(self.tiebreak, tiebreak(&doc.site, &doc.thread));
        let conversation = Conversation::of(doc);
        for id in &conversation.author_ids {
            d.add_text(self.author_ids, id);
        }
        for name in &conversation.replied {
            d.add_text(self.replied, name);
        }
        for id in &conversation.replied_ids {
            d.add_text(self.replied_ids, id);
        }
        for host in &conversation.link_hosts {
            d.add_text(self.link_hosts, host);
        }
        for (author, text) in &conversation.quotes {
            d.add_text(self.quoted, text);
            d.add_text(self.quoted_gram, text);
            d.add_text(self.quoted_by, author);
        }
        d
    }
}

/// Who a thread's posts answer and what they link to: the values of the
/// conversation fields, each distinct, in first-seen order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Conversation {
    /// The forum's ids of the thread's authors.
    pub author_ids: Vec<String>,
    /// Names of the authors whose posts are answered (`reply_to`) or quoted.
    pub replied: Vec<String>,
    /// Their ids, where known.
    pub replied_ids: Vec<String>,
    /// Every host a post's own text links to, and each of its parent
    /// domains of two labels or more (`m.weibo.cn` gives `m.weibo.cn`, `weibo.cn`).
    pub link_hosts: Vec<String>,
    /// Each quote with text, in page order: whose words (the quoted post's
    /// author where the quote links it, else the name it shows, else empty)
    /// and the words, paragraphs one per line.
    pub quotes: Vec<(String, String)>,
}

impl Conversation {
    pub fn of(doc: &ThreadDoc) -> Conversation {
        fn push(list: &mut Vec<String>, v: &str) {
            let v = v.trim();
            if !v.is_empty() && !list.iter().any(|x| x == v) {
                list.push(v.to_owned());
            }
        }
        let mut c = Conversation::default();
        // One map per thread: a linear find per reference costs n² on a long thread.
        let ids: std::collections::HashMap<&str, &luntan_core::Post> = doc.posts.iter().rev().filter_map(|p| Some((p.id.as_deref()?, p))).collect();
        let by_id = |id: &str| ids.get(id).copied();
        for p in &doc.posts {
            if let Some(id) = &p.author_id {
                push(&mut c.author_ids, id);
            }
            let answered = p.reply_to.as_deref().and_then(by_id);
            let quoted = p.quotes.iter().map(|q| (q.of.as_deref().and_then(by_id), q.author.as_deref()));
            for (post, named) in std::iter::once((answered, None)).chain(quoted) {
                match (post, named) {
                    (Some(post), _) => {
                        push(&mut c.replied, &post.author);
                        if let Some(id) = &post.author_id {
                            push(&mut c.replied_ids, id);
                        }
                    }
                    (None, Some(name)) => push(&mut c.replied, name),
                    (None, None) => {}
                }
            }
            for q in &p.quotes {
                let text = q.paragraphs.join("\n");
                if !text.trim().is_empty() {
                    let by = q.of.as_deref().and_then(by_id).map(|p| p.author.as_str()).or(q.author.as_deref()).unwrap_or_default();
                    c.quotes.push((by.trim().to_owned(), text));
                }
            }
            for l in &p.links {
                for host in link_hosts(&l.href) {
                    push(&mut c.link_hosts, &host);
                }
            }
        }
        c
    }
}

/// A link's host, lower-cased and without a trailing dot, then each parent
/// domain of two labels or more; none for a link without a host (`mailto:`,
/// a relative path) or to an IP address's parents.
pub fn link_hosts(href: &str) -> Vec<String> {
    let Some(host) = url::Url::parse(href.trim()).ok().and_then(|u| u.host_str().map(|h| h.trim_end_matches('.').to_ascii_lowercase())) else {
        return Vec::new();
    };
    if host.is_empty() {
        return Vec::new();
    }
    if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
        return vec![host];
    }
    let labels: Vec<&str> = host.split('.').collect();
    (0..labels.len().saturating_sub(1).max(1)).map(|i| labels[i..].join(".")).collect()
}

/// Name of the [`LuntanSchema::key`] field (also a fast field).
pub const KEY: &str = "key";

/// Name of the [`LuntanSchema::post_times`] fast field.
pub const POST_TIMES: &str = "post_times";

/// Name of the [`LuntanSchema::tiebreak`] fast field.
pub const TIEBREAK: &str = "tiebreak";

/// FNV-1a of `site/thread`: a value that depends on the thread alone (not
/// on its document id, which depends on the index), so threads of equal
/// score rank the same in any split. Written into indexes, so it must never
/// change: no std hasher, whose output Rust does not promise to keep.
pub fn tiebreak(site: &str, thread: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in thread_key(site, thread).bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `site/thread`: the `key` field's value.
pub fn thread_key(site: &str, thread: &str) -> String {
    format!("{site}/{thread}")
}

/// Separates posts in the stored body; paragraphs are separated by one
/// newline and are never empty, so snippets can find posts again.
pub const POST_BREAK: &str = "\n\n";

/// Every post's text, paragraphs one per line, posts separated by [`POST_BREAK`].
pub fn thread_body(doc: &ThreadDoc) -> String {
    let mut body = String::new();
    for p in &doc.posts {
        let t = p.text();
        if t.trim().is_empty() {
            continue;
        }
        if !body.is_empty() {
            body.push_str(POST_BREAK);
        }
        body.push_str(&t);
    }
    body
}

/// `YYYY-MM-DDTHH:MM:SS` (the forum's wall clock), read as UTC.
pub fn parse_posted(s: &str) -> Option<DateTime> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    let t = time::PrimitiveDateTime::parse(s.trim(), &fmt).ok()?;
    Some(DateTime::from_timestamp_secs(t.assume_utc().unix_timestamp()))
}

/// The inverse of [`parse_posted`].
pub fn format_posted(t: DateTime) -> String {
    match time::OffsetDateTime::from_unix_timestamp(t.into_timestamp_secs()) {
        Ok(t) => format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year(), t.month() as u8, t.day(), t.hour(), t.minute(), t.second()),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posted_round_trips_and_garbage_is_none() {
        let t = parse_posted("2024-03-05T12:34:56").unwrap();
        assert_eq!(format_posted(t), "2024-03-05T12:34:56");
        assert!(parse_posted("2024-02-30T00:00:00").is_none());
        assert!(parse_posted("昨天").is_none());
    }

    #[test]
    fn tiebreak_is_fixed_forever() {
        // Indexes on disk hold these values; a change would need a rebuild.
        assert_eq!(tiebreak("", ""), 0xaf63_a24c_8601_89fe);
        assert_ne!(tiebreak("dz", "1"), tiebreak("dz", "2"));
    }

    #[test]
    fn a_link_is_its_host_and_each_parent_domain() {
        assert_eq!(link_hosts("https://M.Weibo.cn./u/1?x"), ["m.weibo.cn", "weibo.cn"]);
        assert_eq!(link_hosts("http://localhost:8080/"), ["localhost"]);
        assert_eq!(link_hosts("http://10.0.0.1/a"), ["10.0.0.1"]);
        assert!(link_hosts("mailto:a@b.cn").is_empty() && link_hosts("/relative").is_empty() && link_hosts("").is_empty());
    }

    #[test]
    fn same_schema_compares_equal() {
        assert_eq!(LuntanSchema::new().schema, LuntanSchema::new().schema);
    }

    #[test]
    fn an_index_of_the_previous_analysis_is_previous_and_no_other_is() {
        let now = LuntanSchema::new();
        let before = LuntanSchema::with_tokenizers(PREVIOUS_TOKENIZERS.0, PREVIOUS_TOKENIZERS.1);
        assert_ne!(now.schema, before.schema);
        assert!(now.is_previous(&before.schema) && !now.is_previous(&now.schema));
        // Neither analyzer may be one nobody knows.
        let other = LuntanSchema::with_tokenizers(PREVIOUS_TOKENIZERS.0, "luntan_gram_v9");
        assert!(!now.is_previous(&other.schema));
    }
}
