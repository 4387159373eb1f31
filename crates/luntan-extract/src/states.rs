//! Browser mode's DOM states (S4) read as one thread: the states a page
//! passed through (a "更多评论" click, replies revealed inside an earlier
//! comment, a tab) are merged by post identity, not by position.
//!
//! - A post is known by the forum's own post id where the site file reads
//!   one (`post-id`), else by its element's `id` where the page gives one
//!   (a comment widget's `id="comment-123"`), else by its author, time and
//!   text; two posts alike in all three within one state are two posts.
//! - A post seen in any state is kept once, its latest version (a reply's
//!   text expanded in place is the one kept), in the order the latest
//!   state that shows it puts it: replies a click inserted in the middle
//!   stand where they were inserted, whatever came before them.
//! - A post an earlier state showed and a later one does not (a page that
//!   replaced its list, a thread collapsed again) keeps its place next to
//!   the posts it stood between; where that is ambiguous (the later state
//!   shows new posts there too), the earlier post comes first, as a "下一页"
//!   that replaces a list of replies shows later ones.
//! - So a state that is a strict subset of a later one adds nothing, and
//!   states that replace each other (reply pages under one URL) follow
//!   each other.

use std::collections::{HashMap, HashSet};

use luntan_core::{Post, Site};
use scraper::Html;

/// What a post is known by across states: its id, else author, time and
/// text; and which of the posts alike it is within its state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    /// The forum's own post id (thread XML version 2's `id`).
    Post(String),
    /// The post element's `id` attribute.
    Id(String),
    Content {
        author: String,
        time: Option<String>,
        paragraphs: Vec<String>,
        nth: usize,
    },
}

/// The elements' ids of a state's posts (see [`post_ids`]).
pub(crate) type PostIds = Option<Vec<Option<String>>>;

/// The `id` attribute of each post's element on a page, in page order
/// (`None` where one has none); `None` when the page's posts are not found
/// by a `post` selector, or these elements are not one to one with
/// `posts` (then posts are known by their content).
pub(crate) fn post_ids(site: &Site, html: &str, posts: usize) -> Option<Vec<Option<String>>> {
    let rules = &site.thread;
    let sel = rules.post.as_ref()?;
    let doc = Html::parse_document(html);
    let ids: Vec<Option<String>> = crate::parse::outermost(doc.select(sel))
        .into_iter()
        .filter(|p| crate::dom::body_in(rules, *p).is_some())
        .map(|p| p.value().id().map(str::trim).filter(|id| !id.is_empty()).map(str::to_owned))
        .collect();
    (ids.len() == posts).then_some(ids)
}

/// The posts of a page's states, first to last, each with its elements'
/// ids (see [`post_ids`]), merged into the thread's posts (see the module).
pub(crate) fn merge(states: Vec<(Vec<Post>, PostIds)>) -> Vec<Post> {
    let mut merged: Vec<(Identity, Post)> = Vec::new();
    for (posts, ids) in states {
        let state = identify(posts, ids);
        merged = merge_two(merged, state);
    }
    merged.into_iter().map(|(_, p)| p).collect()
}

fn identify(posts: Vec<Post>, ids: PostIds) -> Vec<(Identity, Post)> {
    let mut alike: HashMap<(String, Option<String>, Vec<String>), usize> = HashMap::new();
    let mut ids = ids.map(Vec::into_iter);
    posts
        .into_iter()
        .map(|p| {
            let id = ids.as_mut().and_then(Iterator::next).flatten();
            let identity = match (p.id.clone(), id) {
                (Some(post), _) => Identity::Post(post),
                (None, Some(id)) => Identity::Id(id),
                (None, None) => {
                    let key = (p.author.clone(), p.time.clone(), p.paragraphs.clone());
                    let n = alike.entry(key.clone()).or_default();
                    *n += 1;
                    Identity::Content { author: key.0, time: key.1, paragraphs: key.2, nth: *n }
                }
            };
            (identity, p)
        })
        .collect()
}

/// `later` laid over `earlier`: `later`'s posts in its order, `earlier`'s
/// others kept between the posts they stood between.
fn merge_two(earlier: Vec<(Identity, Post)>, later: Vec<(Identity, Post)>) -> Vec<(Identity, Post)> {
    let at: HashMap<&Identity, usize> = earlier.iter().enumerate().map(|(i, (k, _))| (k, i)).collect();
    let shown: HashSet<&Identity> = later.iter().map(|(k, _)| k).collect();
    let mut out: Vec<(Identity, Post)> = Vec::with_capacity(earlier.len() + later.len());
    // `earlier` up to `next` is placed; posts new in `later` wait in
    // `pending` until the next post both show, so that `earlier`'s posts
    // gone from `later` come before them.
    let mut next = 0;
    let mut pending: Vec<(Identity, Post)> = Vec::new();
    let gone = |range: &[(Identity, Post)], out: &mut Vec<(Identity, Post)>| out.extend(range.iter().filter(|(k, _)| !shown.contains(k)).cloned());
    for (k, p) in &later {
        match at.get(k) {
            Some(&j) if j >= next => {
                gone(&earlier[next..j], &mut out);
                next = j + 1;
                out.append(&mut pending);
                out.push((k.clone(), p.clone()));
            }
            // Moved before a post it followed: where `later` shows it.
            Some(_) => {
                out.append(&mut pending);
                out.push((k.clone(), p.clone()));
            }
            None => pending.push((k.clone(), p.clone())),
        }
    }
    gone(&earlier[next..], &mut out);
    out.append(&mut pending);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(author: &str, text: &str) -> Post {
        Post { floor: 0, author: author.into(), time: Some("2024-12-01T10:00:00".into()), paragraphs: vec![text.into()], ..Post::default() }
    }

    /// A state's posts by name (author 甲 … and text alike).
    fn state(names: &[&str]) -> (Vec<Post>, PostIds) {
        (names.iter().map(|n| post(n, &format!("{n}的评论"))).collect(), None)
    }

    fn names(posts: &[Post]) -> Vec<&str> {
        posts.iter().map(|p| p.author.as_str()).collect()
    }

    /// End to end through [`crate::parse::extract_thread`]: a browser site's
    /// saved states, replies inserted mid-list by two clicks, one comment
    /// with an id and one without.
    #[test]
    fn a_browser_threads_nested_states_are_stored_once_each_in_the_last_states_order() {
        use crate::parse::tests::{row, site};
        let rules = r#"<thread post="div.c" author="b" body="p"/><browser><thread><click selector="a.more" max="5"/></thread></browser>"#;
        let c = |id: &str, who: &str| {
            let id = if id.is_empty() { String::new() } else { format!(r#" id="{id}""#) };
            format!(r#"<div class="c"{id}><b>{who}</b><p>{who}说</p></div>"#)
        };
        let page = |cs: &[String]| format!("<html><body>{}</body></html>", cs.concat());
        let s1 = page(&[c("c1", "甲"), c("c2", "乙"), c("", "丙")]);
        let s2 = page(&[c("c1", "甲"), c("c11", "甲的回复"), c("c2", "乙"), c("", "丙")]);
        let s3 = page(&[c("c1", "甲"), c("c11", "甲的回复"), c("c2", "乙"), c("c21", "乙的回复"), c("", "丙")]);
        let raw = |n: &str, h: &str| crate::page::RawPage { path: n.into(), bytes: h.as_bytes().to_vec(), fetched: None };
        let got = crate::parse::extract_thread(&site(rules), &row(3), &[raw("a.html", &s1), raw("b.html", &s2), raw("c.html", &s3)], None).unwrap();
        let posts: Vec<(u32, &str)> = got.doc.posts.iter().map(|p| (p.floor, p.author.as_str())).collect();
        assert_eq!(posts, [(1, "甲"), (2, "甲的回复"), (3, "乙"), (4, "乙的回复"), (5, "丙")]);
    }

    #[test]
    fn replies_a_click_inserts_in_the_middle_are_kept_once_where_they_were_inserted() {
        let got = merge(vec![state(&["甲", "乙", "丙"]), state(&["甲", "甲1", "甲2", "乙", "丙"])]);
        assert_eq!(names(&got), ["甲", "甲1", "甲2", "乙", "丙"]);
    }

    /// Regression: with three states a middle one vanished while the first
    /// and last both stayed (28 stored posts for 17 comments).
    #[test]
    fn three_nested_states_are_the_last_one() {
        let got = merge(vec![state(&["甲", "乙", "丙"]), state(&["甲", "甲1", "乙", "丙"]), state(&["甲", "甲1", "乙", "乙1", "乙2", "丙"])]);
        assert_eq!(names(&got), ["甲", "甲1", "乙", "乙1", "乙2", "丙"]);
        // A state that is a strict subset of a later one adds nothing, in any order.
        let got = merge(vec![state(&["甲", "甲1", "乙", "乙1", "乙2", "丙"]), state(&["甲", "乙", "丙"])]);
        assert_eq!(names(&got), ["甲", "甲1", "乙", "乙1", "乙2", "丙"]);
    }

    #[test]
    fn a_state_removed_and_added_again_stands_where_it_stood() {
        // Replies shown, collapsed, other replies shown, the first shown again.
        let got =
            merge(vec![state(&["甲", "甲1", "乙", "丙"]), state(&["甲", "乙", "丙"]), state(&["甲", "乙", "乙1", "丙"]), state(&["甲", "甲1", "乙", "丙"])]);
        assert_eq!(names(&got), ["甲", "甲1", "乙", "乙1", "丙"]);
    }

    #[test]
    fn states_that_replace_each_other_follow_each_other() {
        // Reply pages under one URL, the first post shown on each.
        let got = merge(vec![state(&["楼主", "一", "二"]), state(&["楼主", "三", "四"]), state(&["楼主", "五"])]);
        assert_eq!(names(&got), ["楼主", "一", "二", "三", "四", "五"]);
    }

    #[test]
    fn ids_know_a_post_whose_text_changed_and_alike_posts_in_one_state_are_two() {
        let ids = |ids: &[&str]| Some(ids.iter().map(|i| Some((*i).to_owned())).collect());
        let mut short = vec![post("甲", "太长了…"), post("乙", "顶")];
        let first = (std::mem::take(&mut short), ids(&["c1", "c2"]));
        // 甲's text expanded in place ("展开全文"), a reply inserted after it.
        let second = (vec![post("甲", "太长了，全文在此"), post("丙", "回复甲"), post("乙", "顶")], ids(&["c1", "c3", "c2"]));
        let got = merge(vec![first, second]);
        assert_eq!(got.iter().map(|p| p.text()).collect::<Vec<_>>(), ["太长了，全文在此", "回复甲", "顶"]);
        // Without ids, two "顶" by one author at one time are two posts in a
        // state, and the same two in the next.
        let got = merge(vec![state(&["甲", "乙", "乙"]), state(&["甲", "乙", "乙", "丙"])]);
        assert_eq!(names(&got), ["甲", "乙", "乙", "丙"]);
    }

    #[test]
    fn the_forums_post_id_knows_a_post_whose_element_has_no_id_and_whose_text_changed() {
        let with_id = |id: &str, who: &str, text: &str| Post { id: Some(id.into()), ..post(who, text) };
        let first = vec![with_id("41", "甲", "太长了…"), with_id("42", "乙", "顶")];
        let second = vec![with_id("41", "甲", "太长了，全文在此"), with_id("43", "丙", "回复甲"), with_id("42", "乙", "顶")];
        let got = merge(vec![(first, None), (second, None)]);
        assert_eq!(got.iter().map(|p| p.text()).collect::<Vec<_>>(), ["太长了，全文在此", "回复甲", "顶"]);
        // Two posts alike in author, time and text are still two with two ids.
        let got = merge(vec![(vec![with_id("1", "乙", "顶"), with_id("2", "乙", "顶")], None), (vec![with_id("2", "乙", "顶")], None)]);
        assert_eq!(got.iter().filter_map(|p| p.id.as_deref()).collect::<Vec<_>>(), ["1", "2"]);
    }
}
