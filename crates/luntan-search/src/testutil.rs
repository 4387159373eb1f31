//! Fixtures for the unit tests: real Chinese text (copied into tests/data,
//! see its README) turned into threads, and real indexes on disk.

use std::path::Path;

use luntan_core::{Post, ThreadDoc};

use crate::analysis::normalize_chars;
use crate::indexer::{IndexOptions, SiteWriter};
use crate::schema::thread_body;

pub const REVIEWS: &str = include_str!("../tests/data/reviews.txt");
pub const POEMS: &str = include_str!("../tests/data/poems-traditional.tsv");

pub const AUTHORS: [&str; 5] = ["小明", "老王", "Alice_99", "張三", "路人甲"];

pub fn reviews() -> Vec<&'static str> {
    REVIEWS.lines().filter(|l| !l.trim().is_empty()).collect()
}

pub fn thread(site: &str, id: &str, title: &str, posts: &[(&str, &str)], posted: Option<&str>) -> ThreadDoc {
    ThreadDoc {
        site: site.parse().unwrap(),
        board: "1".parse().unwrap(),
        thread: id.parse().unwrap(),
        forum: format!("{site} 论坛"),
        url: format!("http://{site}.example/t/{id}"),
        title: title.into(),
        posted: posted.map(str::to_string),
        saved: "20261130".parse().unwrap(),
        encoding: "UTF-8".into(),
        pages: 1,
        posts: posts
            .iter()
            .enumerate()
            .map(|(i, (a, t))| Post { floor: i as u32 + 1, author: a.to_string(), time: None, paragraphs: vec![t.to_string()], ..Post::default() })
            .collect(),
        board_name: None,
        replies: None,
        views: None,
    }
}

/// `n` threads over three sites and two boards: the title is the start of
/// one review, the posts are that review and the next, one thread a day
/// from 2020-01-01, its reply 40 days after it; every seventh thread has
/// no date, nor do its posts.
pub fn synthetic(n: usize) -> Vec<ThreadDoc> {
    let r = reviews();
    (0..n)
        .map(|i| {
            let a = r[i % r.len()];
            let b = r[(i + 1) % r.len()];
            let title: String = a.chars().take(12).collect();
            let day = time::Date::from_calendar_date(2020, time::Month::January, 1).unwrap() + time::Duration::days(i as i64);
            let posted = (i % 7 != 3).then(|| format!("{day}T08:00:00"));
            let mut t = thread(
                &format!("s{}", i % 3),
                &i.to_string(),
                &title,
                &[(AUTHORS[i % AUTHORS.len()], a), (AUTHORS[(i + 2) % AUTHORS.len()], b)],
                posted.as_deref(),
            );
            t.board = (i % 2).to_string().parse().unwrap();
            if posted.is_some() {
                t.posts[0].time = posted.clone();
                t.posts[1].time = Some(format!("{}T21:30:00", day + time::Duration::days(40)));
            }
            t
        })
        .collect()
}

pub fn write_index(path: &Path, docs: &[&ThreadDoc]) {
    let mut w = SiteWriter::open(path, &IndexOptions { writer_mb: 40, commit_every: 1000 }).unwrap();
    for d in docs {
        w.add(d).unwrap();
    }
    w.finish().unwrap();
}

/// Whether `needle` occurs in the thread's title or body, compared the way
/// the index compares (folded, lowercased).
pub fn contains(doc: &ThreadDoc, needle: &str, title_only: bool) -> bool {
    let n: String = normalize_chars(needle).into_iter().collect();
    let title: String = normalize_chars(&doc.title).into_iter().collect();
    let body: String = normalize_chars(&thread_body(doc)).into_iter().collect();
    title.contains(&n) || (!title_only && body.contains(&n))
}

pub fn key(doc: &ThreadDoc) -> String {
    format!("{}/{}", doc.site, doc.thread)
}
