//! Hybrid sites: an HTML article and its comments saved as JSON
//! (`article<T>_c1.json` …, listed with the server's clock of each fetch in
//! `article<T>.comments`) become one thread: the article's posts as the
//! HTML rules read them, then each comment once, in the order the pages
//! give them, by the `<comments>` JSONPaths, each followed by its replies
//! where they were asked for on a page of their own (`replies-url`; the
//! list line names the comment after a third tab), answering it.

use std::collections::HashMap;

use luntan_core::ids::ThreadLoc;
use luntan_core::site::HtmlComments;
use luntan_core::{DataDir, Post, Site};

use crate::error::ExtractError;
use crate::page::ThreadExtract;

/// Appends a saved article's comments to its extracted thread; returns the
/// bytes read.
pub fn add_comments(data: &DataDir, site: &Site, rules: &HtmlComments, loc: &ThreadLoc, got: &mut ThreadExtract) -> Result<u64, ExtractError> {
    let list = data.comments_list_path(loc);
    let text = std::fs::read_to_string(&list).map_err(|source| ExtractError::Read { path: list.clone(), source })?;
    // Per page: the server's clock, and the comment whose replies it holds.
    let mut listed: Vec<(i64, Option<String>)> = Vec::new();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let mut cols = line.split('\t');
        let clock = cols.next().and_then(|c| c.trim().parse::<i64>().ok());
        let clock = clock.ok_or_else(|| ExtractError::Json { path: list.clone(), why: format!("line {} is not `<unix seconds>\\t<url>`", i + 1) })?;
        let of = cols.nth(1).map(|c| c.trim().to_owned()).filter(|c| !c.is_empty());
        if of.is_some() && rules.replies.is_none() {
            return Err(ExtractError::Json {
                path: list.clone(),
                why: format!("line {} names a comment's replies, and the site file has no replies-url", i + 1),
            });
        }
        listed.push((clock, of));
    }
    let e = &rules.endpoint;
    let mut bytes = 0;
    let mut comments: Vec<Post> = Vec::new();
    let mut replies: HashMap<String, Vec<Post>> = HashMap::new();
    // The comments whose replies were read, in the order their pages were.
    let mut replied: Vec<String> = Vec::new();
    let (mut once, mut once_reply) = (crate::json::Once::default(), crate::json::Once::default());
    for (k, (clock, of)) in listed.into_iter().enumerate() {
        let path = data.comments_path(loc, k as u32 + 1);
        let raw = std::fs::read(&path).map_err(|source| ExtractError::Read { path: path.clone(), source })?;
        bytes += raw.len() as u64;
        let value = luntan_core::site::read_json(&raw).map_err(|err| ExtractError::Json { path: path.clone(), why: format!("invalid JSON: {err}") })?;
        let cx = crate::json::PageCtx { site, clock, offset: site.thread.utc_offset_minutes, path: &path };
        match (of, &rules.replies) {
            (Some(of), Some(r)) => {
                if !replied.contains(&of) {
                    replied.push(of.clone());
                }
                for mut post in crate::json::page_posts(r, &value, &cx)? {
                    if once_reply.first_time(r, &post) {
                        post.reply_to.get_or_insert_with(|| of.clone());
                        replies.entry(of.clone()).or_default().push(post);
                    }
                }
            }
            _ => comments.extend(crate::json::page_posts(e, &value, &cx)?.into_iter().filter(|p| once.first_time(e, p))),
        }
    }
    // Each comment, then its replies; replies of a comment no page showed
    // any more come last, in the order their pages were read.
    let mut ordered = Vec::with_capacity(comments.len());
    for c in comments {
        let rs = c.id.as_ref().and_then(|id| replies.remove(id));
        ordered.push(c);
        ordered.extend(rs.into_iter().flatten());
    }
    for of in replied {
        ordered.extend(replies.remove(&of).into_iter().flatten());
    }
    let doc = &mut got.doc;
    let mut prev = doc.posts.last().map_or(0, |p| p.floor);
    for mut c in ordered {
        // Floors the JSON gives are kept when they go on from the article's;
        // the rest follow their position.
        if e.floor.is_none() || c.floor <= prev {
            c.floor = prev + 1;
        }
        prev = c.floor;
        doc.posts.push(c);
    }
    if doc.posted.is_none() {
        doc.posted = doc.posts.first().and_then(|p| p.time.clone());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::layout::write_atomic;
    use luntan_core::store::ThreadRow;
    use std::path::Path;

    const SITE: &str = r##"<site id="news"><name>新闻</name><home>http://127.0.0.1:8080/news/</home>
  <links><board>/news/section/{board}$</board><thread>/news/article/{thread}\.html$</thread></links>
  <thread title="h1" post="article" body="div.content" author="span.author" time="time@datetime"/>
  <comments paging="page" page-size="2" items="$.comments[*]" id="$.id" author="$.user.nick" time="$.created"
            body="$.content" body-format="text"><![CDATA[api/comments?article={thread}&page={page}]]></comments>
</site>"##;

    fn row() -> ThreadRow {
        ThreadRow {
            site: "news".parse().unwrap(),
            board: "1".parse().unwrap(),
            thread: "7".parse().unwrap(),
            url: "http://127.0.0.1:8080/news/article/7.html".into(),
            pages: Some(1),
            save_date: Some("20241201".parse().unwrap()),
            content_type: Some("text/html; charset=utf-8".into()),
            ..crate::parse::tests::row(1)
        }
    }

    #[test]
    fn the_article_comes_first_then_each_comment_once() {
        let t = tempfile::tempdir().unwrap();
        let data = DataDir::new(t.path());
        let site = Site::parse(SITE, Path::new("data/sites/news.xml")).unwrap();
        let loc = row().saved_location().unwrap();
        let html = "<html><head><title>站点</title></head><body><h1>标题</h1><article><span class=author>编辑部</span>\
            <time datetime=\"2024-11-30 08:00\">昨天</time><div class=content><p>正文一</p><p>正文二</p></div></article></body></html>";
        write_atomic(&data.html_path(&loc, 1), html.as_bytes()).unwrap();
        let c1 = r#"{"comments":[{"id":1,"user":{"nick":"甲"},"created":1733018400,"content":"一"},{"id":2,"user":{"nick":"乙"},"created":"3分钟前","content":"二\n\n二下"}]}"#;
        // Comment 2 slid onto page 2 between the fetches.
        let c2 = r#"{"comments":[{"id":2,"user":{"nick":"乙"},"created":"3分钟前","content":"二\n\n二下"},{"id":3,"user":{"nick":"丙"},"created":1733018460,"content":"三"}]}"#;
        write_atomic(&data.comments_path(&loc, 1), c1.as_bytes()).unwrap();
        write_atomic(&data.comments_path(&loc, 2), c2.as_bytes()).unwrap();
        // A stray third page from an earlier save is not listed, so not read.
        write_atomic(&data.comments_path(&loc, 3), b"{broken").unwrap();
        write_atomic(&data.comments_list_path(&loc), b"1733018400\thttp://x/c?page=1\n1733018400\thttp://x/c?page=2\n").unwrap();
        let pages = vec![crate::RawPage { path: data.html_path(&loc, 1), bytes: html.as_bytes().to_vec(), fetched: None }];
        let mut got = crate::extract_thread(&site, &row(), &pages, None).unwrap();
        add_comments(&data, &site, site.comments.as_ref().unwrap(), &loc, &mut got).unwrap();
        let d = &got.doc;
        assert_eq!(d.title, "标题");
        let seen: Vec<(u32, &str, Option<&str>, String)> = d.posts.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_deref(), p.text())).collect();
        assert_eq!(
            seen,
            [
                (1, "编辑部", Some("2024-11-30T08:00:00"), "正文一\n正文二".to_owned()),
                (2, "甲", Some("2024-12-01T10:00:00"), "一".to_owned()),
                (3, "乙", Some("2024-12-01T09:57:00"), "二\n二下".to_owned()),
                (4, "丙", Some("2024-12-01T10:01:00"), "三".to_owned()),
            ]
        );

        // A replies page (its comment after a third tab) goes after that
        // comment, its replies answering it; a site file without
        // replies-url cannot read such a list.
        let with_replies = SITE.replace("<comments ", r#"<comments replies-url="api/replies?cid={comment}" replies-items="$.replies[*]" "#);
        let site_r = Site::parse(&with_replies, Path::new("data/sites/news.xml")).unwrap();
        let r1 = r#"{"replies":[{"id":21,"user":{"nick":"丁"},"created":1733018520,"content":"回一"},{"id":22,"user":{"nick":"戊"},"created":1733018580,"content":"回二"}]}"#;
        write_atomic(&data.comments_path(&loc, 3), r1.as_bytes()).unwrap();
        let list = b"1733018400\thttp://x/c?page=1\n1733018400\thttp://x/c?page=2\n1733018400\thttp://x/r?cid=1\t1\n";
        write_atomic(&data.comments_list_path(&loc), list).unwrap();
        let mut r = crate::extract_thread(&site_r, &row(), &pages, None).unwrap();
        add_comments(&data, &site_r, site_r.comments.as_ref().unwrap(), &loc, &mut r).unwrap();
        let seen: Vec<(u32, &str, Option<&str>)> = r.doc.posts.iter().map(|p| (p.floor, p.author.as_str(), p.reply_to.as_deref())).collect();
        assert_eq!(seen, [(1, "编辑部", None), (2, "甲", None), (3, "丁", Some("1")), (4, "戊", Some("1")), (5, "乙", None), (6, "丙", None)]);
        let mut plain = crate::extract_thread(&site, &row(), &pages, None).unwrap();
        let e = add_comments(&data, &site, site.comments.as_ref().unwrap(), &loc, &mut plain).unwrap_err().to_string();
        assert!(e.contains("article7.comments") && e.contains("line 3") && e.contains("replies-url"), "{e}");

        // A list line that is not a clock names the file.
        write_atomic(&data.comments_list_path(&loc), b"soon\thttp://x/\n").unwrap();
        let mut again = crate::extract_thread(&site, &row(), &pages, None).unwrap();
        let e = add_comments(&data, &site, site.comments.as_ref().unwrap(), &loc, &mut again).unwrap_err().to_string();
        assert!(e.contains("article7.comments") && e.contains("line 1"), "{e}");
    }
}
