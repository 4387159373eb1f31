//! From decoded thread pages to posts, by the site file's [`ThreadRules`]:
//! each page read by the stream where it can be, else through its DOM, and
//! a thread's pages joined into one document. How text is taken from an
//! element is [`crate::text`]'s.
//!
//! [`ThreadRules`]: luntan_core::site::ThreadRules

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ego_tree::NodeId;
use encoding_rs::Encoding;
use luntan_core::dates::local_clock;
use luntan_core::doc::Quote;
use luntan_core::site::{Pick, QuoteRules, ThreadRules};
use luntan_core::store::ThreadRow;
use luntan_core::{Post, Site};
use luntan_text::encoding::detect_and_decode;
use scraper::{ElementRef, Html, Selector};

use crate::conversation::{self, Scope};
use crate::dom::{body_in, page_title};
use crate::error::ExtractError;
use crate::page::{thread_doc_with, title_of};
use crate::text::{fold_line, paragraphs_without, time_at};

// The page types and text helpers were first defined here; callers still
// name them by this module.
pub use crate::conversation::{first_in_post, quote_intro, read_in_post, shown_for_quote, shown_inside};
pub use crate::page::{PageExtract, PageReport, RawPage, ThreadExtract, ThreadFacts};
pub use crate::text::{floor_number, line_text, paragraphs, time_of, value_of};

/// Parses one decoded page with `site.thread`.
pub fn parse_page(site: &Site, html: &str) -> PageExtract {
    parse_page_at(site, html, None)
}

/// [`parse_page`] for a page fetched at `now` (the forum's wall clock):
/// relative times are resolved against it.
pub fn parse_page_at(site: &Site, html: &str, now: Option<time::PrimitiveDateTime>) -> PageExtract {
    let plan = stream_plan(site);
    parse_page_with(site, plan.as_ref(), html, now)
}

/// The site's rules compiled for [`crate::stream`], unless they need the
/// DOM (see [`crate::stream::streamable`]) or `LUNTAN_EXTRACT_DOM=1` asks
/// for the DOM: the A/B switch that reads every page the old way, to
/// measure the stream against it (or to rule it out).
pub(crate) fn stream_plan(site: &Site) -> Option<crate::stream::Plan> {
    static DOM: OnceLock<bool> = OnceLock::new();
    let dom = *DOM.get_or_init(|| std::env::var_os("LUNTAN_EXTRACT_DOM").is_some_and(|v| !v.is_empty() && v != "0"));
    if dom {
        return None;
    }
    crate::stream::Plan::new(&site.thread).ok()
}

/// One page: by the stream when the rules allow it and the page is one it
/// reads exactly, else through the DOM.
fn parse_page_with(site: &Site, plan: Option<&crate::stream::Plan>, html: &str, now: Option<time::PrimitiveDateTime>) -> PageExtract {
    if let Some(plan) = plan {
        if let Ok(page) = crate::stream::read(plan, &site.thread, html, now) {
            return page;
        }
    }
    parse_page_dom(site, html, now)
}

/// [`parse_page_at`] through the page's DOM (scraper's `Html`), whatever
/// the rules: what [`crate::stream::parse_page_stream`] must equal.
pub fn parse_page_dom(site: &Site, html: &str, now: Option<time::PrimitiveDateTime>) -> PageExtract {
    let mut doc = Html::parse_document(html);
    let rules = &site.thread;
    let flat = match (&rules.post, rules.nested_posts) {
        (Some(sel), true) => Some(flatten_posts(&mut doc, sel)),
        _ => None,
    };
    let doc = doc;
    let title = page_title(&doc, rules);
    if rules.auto_posts {
        return PageExtract { title, posts: crate::template::auto_posts(&doc, rules, now, None).posts, ..PageExtract::default() };
    }

    // The posts `nested-posts` moved are those matched before the move: a
    // selector that takes a reply by its place (`div.comments > div.comment`)
    // may take it no more once it stands beside its holder.
    let matched = |sel: &Selector| match &flat {
        Some(f) => f.posts.iter().filter_map(|&id| doc.tree.get(id).and_then(ElementRef::wrap)).collect(),
        None => outermost(doc.select(sel)),
    };
    let posts = match &rules.post {
        Some(post_sel) => matched(post_sel)
            .into_iter()
            .filter_map(|p| {
                let body = body_in(rules, p)?;
                let first = |sel: &Option<Pick>| sel.as_ref().and_then(|s| p.select(s).next());
                // A floor is looked for on the post's own element first, as
                // version 2's fields are (Spirit's `data-number`, `id="c12"`).
                let floor = rules.floor.as_ref().and_then(|s| crate::conversation::first_in_post(p, s));
                Some((body, first(&rules.author), first(&rules.time), floor, Some(p)))
            })
            .collect::<Vec<_>>(),
        None => {
            let root = doc.root_element();
            let bodies: Vec<ElementRef> = match (&rules.body, &rules.body_id) {
                (Some(sel), _) => outermost(doc.select(sel)),
                (None, Some(re)) => outermost(root.descendent_elements().filter(|e| e.value().id().is_some_and(|id| re.is_match(id)))),
                (None, None) => Vec::new(),
            };
            let all = |sel: &Option<Pick>| -> Vec<ElementRef> { sel.as_ref().map(|s| doc.select(s).collect()).unwrap_or_default() };
            let (authors, times, floors) = (all(&rules.author), all(&rules.time), all(&rules.floor));
            bodies.into_iter().enumerate().map(|(i, b)| (b, authors.get(i).copied(), times.get(i).copied(), floors.get(i).copied(), None)).collect()
        }
    };

    let clock = rules.clock(now);
    let c = &rules.conversation;
    let elements: Vec<Option<NodeId>> = posts.iter().map(|p| p.4.map(|e| e.id())).collect();
    let mut posts: Vec<Post> = posts
        .into_iter()
        .enumerate()
        .map(|(i, (body, author, time, floor, element))| {
            let text = body_text(body, rules);
            let mut post = Post {
                floor: match &rules.floor {
                    Some(pick) => floor.and_then(|f| floor_number(&value_of(f, pick))).unwrap_or(0),
                    None => i as u32 + 1,
                },
                author: author.zip(rules.author.as_ref()).map(|(a, pick)| value_of(a, pick)).unwrap_or_default(),
                time: time.zip(rules.time.as_ref()).and_then(|(t, pick)| time_at(t, pick, clock)),
                paragraphs: text.paragraphs,
                // A reply that quotes a post it links to answers that post.
                reply_to: text.quotes.iter().find_map(|q| q.of.clone()),
                quotes: text.quotes,
                links: text.links,
                images: text.images,
                ..Post::default()
            };
            if !c.is_empty() {
                let scope = element.map_or(Scope::Page(&doc, i), Scope::Post);
                conversation::read_post(&mut post, scope, c, clock);
            }
            post
        })
        .collect();
    let holders = flat.map(|f| f.holders).unwrap_or_default();
    if !holders.is_empty() {
        // A reply held in a post answers it, where nothing on the reply
        // says otherwise and the post has an id.
        let id_of: HashMap<NodeId, Option<String>> = elements.iter().zip(&posts).filter_map(|(e, p)| Some(((*e)?, p.id.clone()))).collect();
        for (e, post) in elements.iter().zip(posts.iter_mut()) {
            let held_in = e.and_then(|e| holders.get(&e)).and_then(|h| id_of.get(h).cloned().flatten());
            if post.reply_to.is_none() {
                post.reply_to = held_in;
            }
        }
    }
    let reads_urls = c.author_url.is_some() || c.links.is_some() || c.images.is_some();
    PageExtract { title, posts, facts: conversation::read_thread(&doc, c), base: reads_urls.then(|| conversation::base_href(&doc)).flatten() }
}

/// `nested-posts`: every post a post holds is moved out of it, right
/// after it and the replies moved before it, so the posts stand one after
/// another in page order (a reply after the post that holds it) and each
/// is read without its replies (the learner reads sampled pages so to
/// learn such a file). Returns the posts, as matched before the move, in
/// their new order, and each moved post's holder.
pub fn flatten_posts(doc: &mut Html, sel: &Selector) -> Flattened {
    let all: Vec<NodeId> = doc.select(sel).map(|e| e.id()).collect();
    let set: HashSet<NodeId> = all.iter().copied().collect();
    let holders: HashMap<NodeId, NodeId> = all
        .iter()
        .filter_map(|&id| {
            let node = doc.tree.get(id).expect("a node of this page");
            node.ancestors().find(|a| set.contains(&a.id())).map(|h| (id, h.id()))
        })
        .collect();
    // Per outermost post, the last post moved out after it.
    let mut last: HashMap<NodeId, NodeId> = HashMap::new();
    for &id in &all {
        if !holders.contains_key(&id) {
            continue;
        }
        let mut top = id;
        while let Some(&h) = holders.get(&top) {
            top = h;
        }
        let after = last.get(&top).copied().unwrap_or(top);
        doc.tree.get_mut(id).expect("a node of this page").detach();
        doc.tree.get_mut(after).expect("a node of this page").insert_id_after(id);
        last.insert(top, id);
    }
    // Each reply now stands after its holder and the replies before it:
    // the page order of the matches is their order still.
    Flattened { posts: all, holders }
}

/// What [`flatten_posts`] did: the posts, in page order, and the post
/// each moved one was held in.
pub struct Flattened {
    pub posts: Vec<NodeId>,
    pub holders: HashMap<NodeId, NodeId>,
}

/// What a post body says, by the site file's rules.
pub(crate) struct BodyText {
    /// The body's own paragraphs: without `strip` and without quotes.
    pub(crate) paragraphs: Vec<String>,
    /// Its quotes, without `strip` and without their head (`rules.quote`).
    pub(crate) quotes: Vec<Quote>,
    /// Links and pictures in its own text (`links`, `images`), URLs as written.
    pub(crate) links: Vec<luntan_core::doc::Link>,
    pub(crate) images: Vec<luntan_core::doc::Image>,
}

/// A body's text, quotes, links and pictures (see [`BodyText`]).
pub(crate) fn body_text<'a>(body: ElementRef<'a>, rules: &ThreadRules) -> BodyText {
    let c = &rules.conversation;
    let Some(q) = &rules.quote else {
        let (links, images) = conversation::media(body, c, rules.strip.as_ref(), &HashSet::new());
        return BodyText { paragraphs: paragraphs(body, rules.strip.as_ref()), quotes: Vec::new(), links, images };
    };
    let found = outermost(body.select(&q.select).filter(|e| e.id() != body.id()));
    let intros: Vec<Option<ElementRef>> = found.iter().map(|e| conversation::quote_intro(*e, q.intro.as_ref()?, rules.strip.as_ref())).collect();
    let quoted: HashSet<NodeId> = found.iter().map(|e| e.id()).chain(intros.iter().flatten().map(|e| e.id())).collect();
    let own = paragraphs_without(body, rules.strip.as_ref(), &quoted);
    let (links, images) = conversation::media(body, c, rules.strip.as_ref(), &quoted);
    let quotes = found
        .into_iter()
        .zip(intros)
        .map(|(e, intro)| {
            let head: HashSet<NodeId> = q.head.as_ref().map(|h| e.select(h).map(|x| x.id()).collect()).unwrap_or_default();
            let read = |pick: &Option<Pick>, pattern| QuoteRules::capture(pattern, &conversation::shown_for_quote(e, intro, pick.as_ref()?)?);
            let (of, author) = (read(&q.of, q.of_pattern.as_ref()), read(&q.author, q.author_pattern.as_ref()));
            Quote { of, author, paragraphs: paragraphs_without(e, rules.strip.as_ref(), &head) }
        })
        .filter(|q| !q.paragraphs.is_empty() || q.of.is_some())
        .collect();
    BodyText { paragraphs: own, quotes, links, images }
}

/// Drops matches nested in an earlier match: a quoted post that reuses the
/// post markup, or Discuz's `post_rate_div_N` inside `post_N`, is not a post.
pub(crate) fn outermost<'a>(matches: impl Iterator<Item = ElementRef<'a>>) -> Vec<ElementRef<'a>> {
    let mut kept_ids: HashSet<NodeId> = HashSet::new();
    let mut kept = Vec::new();
    for e in matches {
        if e.ancestors().any(|a| kept_ids.contains(&a.id())) {
            continue;
        }
        kept_ids.insert(e.id());
        kept.push(e);
    }
    kept
}

/// Builds a thread from its saved pages, in page order.
///
/// Each page is decoded on its own (`row.content_type` as the HTTP header,
/// the site file's forced encoding, the site's `cached` encoding), parsed
/// with [`parse_page`], and the posts are concatenated. Without a `floor`
/// selector (or, with `post="auto"`, floor labels on every page) floors
/// are renumbered 1..n across pages. A post that a later
/// page repeats (forums that show the first post on every page, or a post
/// that slid across a page boundary between downloads) is kept once: by
/// its `post-id` where the site file reads one, else by its floor, author
/// and words, or as the starter or an overlap at the page boundary.
/// A browser-mode thread's pages are the DOM states of one page, merged by
/// post identity instead ([`crate::states`]).
/// No posts at all is [`ExtractError::NoPosts`], naming the first page.
pub fn extract_thread(site: &Site, row: &ThreadRow, pages: &[RawPage], cached: Option<&'static Encoding>) -> Result<ThreadExtract, ExtractError> {
    let Some(first) = pages.first() else {
        return Err(ExtractError::BadRow { site: row.site.clone(), thread: row.thread.clone(), why: "no pages to extract" });
    };
    let Some(saved) = row.save_date else {
        return Err(ExtractError::BadRow { site: row.site.clone(), thread: row.thread.clone(), why: "no save date, so no saved pages" });
    };
    let mut reports = Vec::with_capacity(pages.len());
    let mut texts = Vec::with_capacity(pages.len());
    // A browser saves the DOM it drew as UTF-8 (and says so in the row's
    // content type) while the page's own `<meta charset=gbk>` stays in it:
    // the site's forced or cached encoding describes what the forum sends,
    // not these pages.
    let (forced, cached) = if site.browser.is_some() { (None, None) } else { (site.encoding, cached) };
    for page in pages {
        let (detection, decoded) = detect_and_decode(&page.bytes, row.content_type.as_deref(), forced, cached);
        reports.push(PageReport { path: page.path.clone(), detection, malformed: decoded.malformed });
        let now = page.fetched.and_then(|at| local_clock(at, site.thread.utc_offset_minutes));
        texts.push((decoded.text, now));
    }
    // `post="auto"` reads a thread's pages together (a page with one post
    // takes the shape of the others' records), and has floors when every
    // page shows them.
    let (extracts, by_floor) = match site.thread.auto_posts {
        true => crate::template::thread_pages(site, &texts),
        false => {
            let plan = stream_plan(site);
            (texts.iter().map(|(text, now)| parse_page_with(site, plan.as_ref(), text, *now)).collect::<Vec<_>>(), site.thread.floor.is_some())
        }
    };
    let mut title: Option<String> = None;
    let mut facts = ThreadFacts::default();
    let mut posts: Vec<Post> = Vec::new();
    // Browser mode's pages are the states of one page: merged by post
    // identity ([`crate::states`]), not concatenated.
    let mut states = Vec::new();
    for (k, mut got) in extracts.into_iter().enumerate() {
        if title.is_none() {
            title = got.title.take();
        }
        facts = facts.or(std::mem::take(&mut got.facts));
        conversation::resolve(&mut got.posts, &row.url, got.base.as_deref());
        if by_floor {
            // A post that shows no floor follows the one before it.
            let mut prev = posts.last().map_or(0, |p| p.floor);
            for p in &mut got.posts {
                if p.floor == 0 {
                    p.floor = prev + 1;
                }
                prev = p.floor;
            }
        }
        if site.browser.is_some() {
            let ids = crate::states::post_ids(site, &texts[k].0, got.posts.len());
            states.push((got.posts, ids));
        } else if k == 0 {
            posts = got.posts;
        } else if got.posts.iter().any(|p| p.id.is_some()) {
            // Posts that name themselves are kept once by their id: a
            // later page that repeats the first post repeats its replies
            // too (Askbot's answer pages open with the question and its
            // comments), which neither the starter nor an overlap test sees.
            let seen: HashSet<&str> = posts.iter().filter_map(|p| p.id.as_deref()).collect();
            let fresh: Vec<Post> = got.posts.into_iter().filter(|p| p.id.as_deref().is_none_or(|id| !seen.contains(id))).collect();
            posts.extend(fresh);
        } else if by_floor {
            let seen: HashSet<(u32, &str, &[String])> = posts.iter().map(|p| (p.floor, p.author.as_str(), p.paragraphs.as_slice())).collect();
            let fresh: Vec<Post> = got.posts.into_iter().filter(|p| !seen.contains(&(p.floor, p.author.as_str(), p.paragraphs.as_slice()))).collect();
            posts.extend(fresh);
        } else {
            let mut new = got.posts;
            let same = |a: &Post, b: &Post| a.author == b.author && a.paragraphs == b.paragraphs;
            if let (Some(starter), Some(lead)) = (posts.first(), new.first()) {
                if same(starter, lead) {
                    new.remove(0);
                }
            }
            // The longest run that ends the thread so far and starts this page.
            let overlap =
                (1..=new.len().min(posts.len())).rev().find(|&m| posts[posts.len() - m..].iter().zip(&new[..m]).all(|(a, b)| same(a, b))).unwrap_or(0);
            posts.extend(new.into_iter().skip(overlap));
        }
    }
    if site.browser.is_some() {
        posts = crate::states::merge(states);
    }
    if posts.is_empty() {
        return Err(ExtractError::NoPosts { path: first.path.clone() });
    }
    if !by_floor {
        for (i, p) in posts.iter_mut().enumerate() {
            p.floor = i as u32 + 1;
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for r in &reports {
        if !names.contains(&r.detection.encoding.name()) {
            names.push(r.detection.encoding.name());
        }
    }
    let title = match site.thread.title_from_first_post {
        true => title_of(&posts[0]),
        false => title.or_else(|| row.title.as_deref().map(fold_line)).unwrap_or_default(),
    };
    let doc = thread_doc_with(site, row, title, saved, names.join(","), pages.len() as u32, posts, facts);
    Ok(ThreadExtract { doc, pages: reports })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::{Path, PathBuf};

    use encoding_rs::{GB18030, GBK};
    use luntan_core::{ThreadDoc, ThreadState};
    use luntan_text::encoding::Source;

    use super::*;

    pub(crate) fn site(thread_rules: &str) -> Site {
        let xml = format!(
            r#"<site id="t"><name>测试论坛</name><home>http://bbs.example/</home>
               <links><board>fid={{board}}</board><thread>tid={{thread}}</thread></links>{thread_rules}</site>"#
        );
        Site::parse(&xml, Path::new("data/sites/t.xml")).unwrap()
    }

    pub(crate) const DISCUZ_RULES: &str = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
        author="a.xw1" time="em[id^=authorposton]" floor="a[id^=postnum]" strip="div.quote"/>"##;

    pub(crate) fn discuz_post(pid: u32, floor: &str, author: &str, time: &str, body: &str) -> String {
        format!(
            r#"<div id="post_{pid}"><table><tr><td class="pls"><a class="xw1" href="space-uid-{pid}">{author}</a></td>
<td class="plc"><div class="pi"><strong><a id="postnum{pid}">{floor}</a></strong><em id="authorposton{pid}">{time}</em></div>
<div class="pct"><div class="t_fsz"><table><tr><td class="t_f" id="postmessage_{pid}">
{body}</td></tr></table></div></div></td></tr></table>
<div id="post_rate_div_{pid}"></div></div>"#
        )
    }

    pub(crate) fn discuz_page(posts: &str) -> String {
        format!(
            r#"<!DOCTYPE html><html><head><meta http-equiv="Content-Type" content="text/html; charset=gbk" />
<title>考研经验分享 - 清水河畔 - Powered by Discuz!</title><script>var x = "<div>";</script></head>
<body><h1><span id="thread_subject">考研经验分享</span></h1><div id="postlist">{posts}</div></body></html>"#
        )
    }

    fn first_discuz_post() -> String {
        discuz_post(
            11,
            "楼主",
            "小明",
            "发表于 2024-3-5 12:34",
            "第一段&nbsp;&nbsp;文字 &amp; &lt;标签&gt; &quot;引号&quot; 'single'<br />\n第二段 &#128512;<br /><br />\n\
             <script>alert('x')</script><style>p {}</style>\
             <div class=\"quote\"><blockquote>引用内容</blockquote></div>\n  最后一段\t",
        )
    }

    /// Discuz! X's quote as the fixture's `dzx` forum and Discuz! itself
    /// write it: a head naming the quoted post by a `pid` link, then its words.
    const DISCUZ_QUOTE_RULES: &str = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
        author="a.xw1" time="em[id^=authorposton]" floor="a[id^=postnum]" strip="i.pstatus"
        quote="div.quote" quote-head="blockquote > font[size]" quote-of="a@href" quote-of-pattern="[?&amp;]pid=(\d+)"
        quote-author="a font" quote-author-pattern="^(.+?) 发表于"/>"##;

    fn discuz_reply_quoting() -> String {
        let quote = "<i class=\"pstatus\"> 本帖最后由 小红 于 2024-3-6 08:10 编辑 </i><br />\
            <div class=\"quote\"><blockquote><font size=\"2\"><a href=\"forum.php?mod=redirect&amp;goto=findpost&amp;pid=11&amp;ptid=7\" target=\"_blank\">\
            <font color=\"#999999\">小明 发表于 2024-3-5 12:34</font></a></font><br />\r\n被引用的话 ...</blockquote></div><br />\r\n我自己的回答<br />第二句";
        discuz_page(&format!(
            "{}{}",
            discuz_post(11, "楼主", "小明", "发表于 2024-3-5 12:34", "被引用的话很长"),
            discuz_post(12, "2#", "小红", "发表于 2024-3-6 08:00", quote)
        ))
    }

    #[test]
    fn a_quote_is_held_apart_from_the_replys_own_words_with_the_post_it_quotes() {
        let got = parse_page(&site(DISCUZ_QUOTE_RULES), &discuz_reply_quoting());
        let reply = &got.posts[1];
        assert_eq!(reply.paragraphs, vec!["我自己的回答".to_string(), "第二句".to_string()], "no quoted word, no edit note");
        assert_eq!(reply.quotes, vec![Quote { of: Some("11".into()), author: Some("小明".into()), paragraphs: vec!["被引用的话 ...".into()] }]);
        assert_eq!(reply.reply_to.as_deref(), Some("11"));
        assert!(got.posts[0].quotes.is_empty() && got.posts[0].reply_to.is_none());
        // Without quote=, the old site file's strip= still drops it, as before.
        let stripped = r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
            author="a.xw1" time="em[id^=authorposton]" floor="a[id^=postnum]" strip="i.pstatus, div.quote"/>"##;
        let old = parse_page(&site(stripped), &discuz_reply_quoting());
        assert_eq!(old.posts[1].paragraphs, reply.paragraphs);
        assert!(old.posts[1].quotes.is_empty());
    }

    /// A forum that writes a day before its month (`05/03/2025 09:07`) or
    /// the US order with AM/PM: no usual shape reads its times, and
    /// `time-format` says how it writes them, for both readers and the
    /// edit notes; a bad format is one line naming the file.
    #[test]
    fn a_time_format_reads_times_no_usual_shape_does() {
        let html = "<html><body><h1>标题</h1>\
            <div class=\"p\"><b>甲</b><span class=\"t\">发表于 05/03/2025 09:07</span><div class=\"c\">第一条</div></div>\
            <div class=\"p\"><b>乙</b><span class=\"t\">06/03/2025 21:15</span><div class=\"c\">第二条</div><i class=\"e\">编辑于 07/03/2025 08:00</i></div></body></html>";
        let rules = |more: &str| site(&format!(r#"<thread title="h1" post="div.p" body="div.c" author="b" time="span.t" edited="i.e" {more}/>"#));
        let times = |s: &Site| parse_page(s, html).posts.iter().map(|p| (p.time.clone(), p.edited.clone())).collect::<Vec<_>>();
        assert_eq!(times(&rules("")), [(None, None), (None, None)], "no usual shape reads them");
        let s = rules(r#"time-format="%d/%m/%Y %H:%M""#);
        assert_eq!(times(&s), [(Some("2025-03-05T09:07:00".into()), None), (Some("2025-03-06T21:15:00".into()), Some("2025-03-07T08:00:00".into()))]);
        assert_eq!(crate::stream::parse_page_stream(&s, html, None).expect("streams"), parse_page_dom(&s, html, None));
        let bad = r#"<site id="t"><name>测试论坛</name><home>http://bbs.example/</home>
               <links><board>fid={board}</board><thread>tid={thread}</thread></links>
               <thread title="h1" post="div.p" body="div.c" time="span.t" time-format="%d/%m %H:%M"/></site>"#;
        let e = Site::parse(bad, Path::new("data/sites/t.xml")).unwrap_err().to_string();
        assert!(e.starts_with("data/sites/t.xml: line 3: time-format:") && e.contains("a year"), "{e}");
    }

    /// Spirit writes a comment's day in its text, `17 七月 '25`, and the
    /// hour in a `title`: once a two-digit year read as a year, the text's
    /// day alone was taken (every post at midnight). A title with the hour
    /// of the day the text names says more, in both readers; a title of
    /// another day does not override the text.
    #[test]
    fn a_day_in_the_text_takes_its_hour_from_the_title() {
        let html = "<html><body><h1>标题</h1>\
            <div class=\"p\"><b>甲</b><ul class=\"t\"><li title=\"2025年7月17日 23:00\">17 七月 &#x27;25</li></ul><div class=\"c\">第一条</div></div>\
            <div class=\"p\"><b>乙</b><ul class=\"t\"><li title=\"2025年7月19日 08:00\">18 七月 &#x27;25</li></ul><div class=\"c\">第二条</div></div>\
            <div class=\"p\"><b>丙</b><ul class=\"t\"><li title=\"编辑过\">2025-07-20 09:30</li></ul><div class=\"c\">第三条</div></div></body></html>";
        let s = site(r#"<thread title="h1" post="div.p" body="div.c" author="b" time="ul.t"/>"#);
        let times: Vec<Option<String>> = parse_page(&s, html).posts.iter().map(|p| p.time.clone()).collect();
        assert_eq!(times, [Some("2025-07-17T23:00:00".into()), Some("2025-07-18T00:00:00".into()), Some("2025-07-20T09:30:00".into())]);
        assert_eq!(crate::stream::parse_page_stream(&s, html, None).expect("streams"), parse_page_dom(&s, html, None));
    }

    /// Spirit numbers a comment on its own element (`data-number`, and
    /// `id="c21"`): no floor rule could read it, a floor being looked for
    /// inside the post only. Now it is looked for on the post's element
    /// first, as version 2's fields are, by both readers.
    #[test]
    fn a_floor_on_the_posts_own_element_is_read_by_both_readers() {
        let c = |n: u32, who: &str| {
            format!(
                "<div class=\"comment\" id=\"c{n}\" data-number=\"{n}\"><a class=\"u\">{who}</a><ul><li title=\"2025年6月25日 11:{n}\">25 六月</li></ul>\
                 <div class=\"text\"><p>第{n}条评论的内容</p><p><a class=\"n\" data-number=\"99\">#99</a></p></div></div>"
            )
        };
        let html = format!("<html><body><h1>标题</h1>{}{}</body></html>", c(21, "甲"), c(22, "乙"));
        let on = |floor: &str| site(&format!(r#"<thread title="h1" post="div.comment" body="div.text" author="a.u" time="li[title]@title" floor="{floor}"/>"#));
        for (floor, want) in [("div.comment@data-number", [21, 22]), ("[data-number]@data-number", [21, 22]), ("a.n", [99, 99])] {
            let s = on(floor);
            let got = parse_page(&s, &html);
            assert_eq!(got.posts.iter().map(|p| p.floor).collect::<Vec<_>>(), want, "{floor}");
            assert_eq!(crate::stream::parse_page_stream(&s, &html, None).expect("streams"), parse_page_dom(&s, &html, None), "{floor}");
        }
    }

    /// A comment widget's tree: replies drawn inside the comment they
    /// answer, two levels deep. With `nested-posts` each is a post of its
    /// own, in page order, without the replies inside it, answering the
    /// post that holds it (by its id); without, the outermost comments
    /// hold their replies' words.
    #[test]
    fn posts_held_inside_posts_are_posts_of_their_own_answering_their_holder() {
        let c = |id: u32, who: &str, words: &str, inner: &str| {
            format!("<li class=\"c\" id=\"c{id}\"><b>{who}</b><span class=\"t\">2024-03-0{} 12:00</span><p>{words}</p><ul>{inner}</ul></li>", id % 9)
        };
        let tree = c(1, "甲", "第一条", &(c(2, "乙", "回甲", &c(3, "丙", "回乙", "")) + &c(4, "丁", "也回甲", "")));
        let html = format!("<html><body><h1>标题</h1><ul id=\"comments\">{}{}</ul></body></html>", tree, c(5, "戊", "第二条", ""));
        let rules = |more: &str| {
            site(&format!(
                r#"<thread title="h1" post="li.c" body="li.c" author="li.c > b" time="li.c > span.t" strip="li.c > b, li.c > span.t"
                   post-id="li.c@id" post-id-pattern="^c(\d+)$" {more}/>"#
            ))
        };
        let got = parse_page(&rules(r#"nested-posts="true""#), &html);
        let seen: Vec<(&str, String, Option<&str>, Option<&str>)> =
            got.posts.iter().map(|p| (p.author.as_str(), p.text(), p.id.as_deref(), p.reply_to.as_deref())).collect();
        assert_eq!(
            seen,
            [
                ("甲", "第一条".to_owned(), Some("1"), None),
                ("乙", "回甲".to_owned(), Some("2"), Some("1")),
                ("丙", "回乙".to_owned(), Some("3"), Some("2")),
                ("丁", "也回甲".to_owned(), Some("4"), Some("1")),
                ("戊", "第二条".to_owned(), Some("5"), None),
            ]
        );
        assert_eq!(got.posts.iter().map(|p| p.floor).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert!(got.posts.iter().all(|p| p.time.is_some()));
        // The stream leaves such a file to the DOM.
        assert_eq!(crate::stream::streamable(&rules(r#"nested-posts="true""#).thread), Err(crate::stream::SelectorError::NestedPosts));
        // Without it: the outermost comments, their replies' words their own.
        let flat = parse_page(&rules(""), &html);
        assert_eq!(flat.posts.len(), 2);
        assert_eq!(flat.posts[0].text(), "第一条\n回甲\n回乙\n也回甲");
    }

    /// Regression (Askbot): a reply taken by its place in its holder
    /// (`div.comments > div.c`) stands there no more once moved out, and
    /// every reply was dropped without a word.
    #[test]
    fn replies_taken_by_their_place_in_their_holder_stay_posts_once_moved_out() {
        let post = |id: u32, class: &str, who: &str, words: &str, inner: &str| {
            format!(
                "<div class=\"{class}\" id=\"p{id}\"><b>{who}</b><span class=\"t\">2024-03-0{id} 12:00</span><div class=\"text\">{words}</div>{inner}</div>"
            )
        };
        let comments =
            |cs: &[(u32, &str, &str)]| format!("<div class=\"comments\">{}</div>", cs.iter().map(|(i, w, t)| post(*i, "c", w, t, "")).collect::<String>());
        let html = format!(
            "<html><body><h1>标题</h1>{}{}</body></html>",
            post(1, "q", "甲", "问题", &comments(&[(2, "乙", "评论问题")])),
            post(3, "q", "丙", "回答", &comments(&[(4, "丁", "评论回答"), (5, "甲", "再评论")]))
        );
        let s = site(
            r#"<thread title="h1" post="div.q, div.comments > div.c" body="div.text" author="b" time="span.t" post-id="[id]@id" post-id-pattern="^p(\d+)$" nested-posts="true"/>"#,
        );
        let got = parse_page(&s, &html);
        let seen: Vec<(&str, String, Option<&str>)> = got.posts.iter().map(|p| (p.author.as_str(), p.text(), p.reply_to.as_deref())).collect();
        assert_eq!(
            seen,
            [
                ("甲", "问题".to_owned(), None),
                ("乙", "评论问题".to_owned(), Some("1")),
                ("丙", "回答".to_owned(), None),
                ("丁", "评论回答".to_owned(), Some("3")),
                ("甲", "再评论".to_owned(), Some("3")),
            ]
        );
    }

    /// NodeBB and FlaskBB write what introduces a quote as a paragraph of
    /// the reply, just before the blockquote: with `quote-intro` it is
    /// neither the reply's words nor the quote's, and names the quote.
    #[test]
    fn a_quotes_intro_before_it_names_its_post_and_author_and_is_no_ones_words() {
        let page = |intro: &str| {
            format!(
                "<html><body><h1>标题</h1><ul class=\"posts\"><li class=\"post\"><b class=\"author\">小红</b><span class=\"time\">2024-3-6 08:00</span><div class=\"content\">\
                 {intro}\n<blockquote><p>被引用的话很长</p></blockquote>\n<p>我自己的回答</p><p>@小明 他说得对</p></div></li></ul></body></html>"
            )
        };
        let rules = |more: &str| {
            site(&format!(
                r#"<thread title="h1" post="li.post" body="div.content" author="b.author" time="span.time" quote="blockquote" {more}
                   quote-of="a@href" quote-of-pattern="/post/(\d+)" quote-author="p" quote-author-pattern="^@(\S+) said in"/>"#
            ))
        };
        let intro = r#"<p>@小明 said in <a href="/post/53">标题</a>:</p>"#;
        let got = parse_page(&rules(r#"quote-intro="p""#), &page(intro));
        let p = &got.posts[0];
        assert_eq!(p.paragraphs, vec!["我自己的回答".to_string(), "@小明 他说得对".to_string()], "the intro is not the reply's words");
        assert_eq!(p.quotes, vec![Quote { of: Some("53".into()), author: Some("小明".into()), paragraphs: vec!["被引用的话很长".into()] }]);
        assert_eq!(p.reply_to.as_deref(), Some("53"));
        // Without it the line is the reply's, and the quote names nothing.
        let without = parse_page(&rules(""), &page(intro));
        assert_eq!(without.posts[0].paragraphs[0], "@小明 said in 标题:");
        assert_eq!(without.posts[0].quotes[0].of, None);
        // An element before the quote that does not match is the reply's.
        let other = parse_page(&rules(r#"quote-intro="p.intro""#), &page(intro));
        assert_eq!(other.posts[0].paragraphs, without.posts[0].paragraphs);
        // A quote of a quoting post holds that post's intro and quote: the
        // outer intro names the quote, the inner stays quoted words.
        let inner = r#"<p>@阿强 said in <a href="/post/51">标题</a>:</p><blockquote><p>更早的话</p></blockquote><p>被引用的话很长</p>"#;
        let nested = page(intro).replace("<blockquote><p>被引用的话很长</p></blockquote>", &format!("<blockquote>{inner}</blockquote>"));
        let got = parse_page(&rules(r#"quote-intro="p""#), &nested);
        assert_eq!(got.posts[0].quotes[0].of.as_deref(), Some("53"));
        assert_eq!(got.posts[0].quotes[0].author.as_deref(), Some("小明"));
        assert_eq!(got.posts[0].quotes[0].paragraphs, ["@阿强 said in 标题:", "更早的话", "被引用的话很长"]);
        // The streaming reader reads each as the DOM does.
        for (more, html) in [(r#"quote-intro="p""#, page(intro)), ("", page(intro)), (r#"quote-intro="p.intro""#, page(intro)), (r#"quote-intro="p""#, nested)]
        {
            let s = rules(more);
            assert_eq!(crate::stream::parse_page_stream(&s, &html, None).expect("streams"), parse_page_dom(&s, &html, None), "{more}");
        }
    }

    /// Regression (HyperKitty): a fold control stands between a mail's
    /// intro line and its quote; `quote-intro` looked at the control only,
    /// though `strip` takes it, so the intro stayed the reply's words.
    #[test]
    fn a_quotes_intro_is_found_past_what_strip_takes() {
        let html = "<html><body><h1>标题</h1><div class=\"email\"><h2>李娜</h2><span class=\"t\">2026-09-02 03:52</span><div class=\"body\">\
                    <p>我同意</p><p>在 2026/9/1 19:42, 张伟 写道:</p>\n<div class=\"quoted-switch\"><a href=\"#\">...</a></div>\n\
                    <blockquote><p>原来的话</p></blockquote></div></div></body></html>";
        let s = |more: &str| {
            site(&format!(
                r#"<thread title="h1" post="div.email" body="div.body" author="h2" time="span.t" strip="div.quoted-switch" quote="blockquote" {more}/>"#
            ))
        };
        let with = s(r#"quote-intro="p" quote-author="p" quote-author-pattern="(\S+) 写道""#);
        let got = parse_page(&with, html);
        assert_eq!(got.posts[0].paragraphs, ["我同意"], "the intro is not the reply's words");
        assert_eq!(got.posts[0].quotes, vec![Quote { of: None, author: Some("张伟".into()), paragraphs: vec!["原来的话".into()] }]);
        // The stream leaves such a page to the DOM, which reads it so.
        assert!(crate::stream::parse_page_stream(&with, html, None).is_err());
        assert_eq!(parse_page_with(&with, stream_plan(&with).as_ref(), html, None), got);
        // With nothing stripped between them, the stream reads it as before.
        let plain = s(r#"quote-intro="p.none""#);
        assert_eq!(crate::stream::parse_page_stream(&plain, html, None).expect("streams"), parse_page_dom(&plain, html, None));
    }

    #[test]
    fn the_stream_reads_quotes_as_the_dom_does() {
        let s = site(DISCUZ_QUOTE_RULES);
        let page = discuz_reply_quoting();
        let streamed = crate::stream::parse_page_stream(&s, &page, None).expect("quote rules stream");
        assert_eq!(streamed, parse_page_dom(&s, &page, None));
        assert_eq!(streamed.posts[1].quotes[0].of.as_deref(), Some("11"));
    }

    /// Version 2's fields on a Discuz! X page: ids from the post element
    /// itself and the author's link, the edit note a strip= keeps out of
    /// the text, a location line, links and pictures of the reply's own
    /// text (the quote's link and the smiley are neither), the breadcrumb.
    const CONVERSATION: &str = r##" post-id="div[id^=post_]@id" post-id-pattern="^post_(\d+)$" author-id="a.xw1@href" author-id-pattern="space-uid-(\d+)"
        author-url="a.xw1@href" edited="i.pstatus" edited-pattern="于 (.+?) 编辑" location="span.iploc" location-pattern="IP属地[：:]\s*(\S+)"
        links="a[href]" images="img:not([smilieid])" board-name="#pt a.board" thread-views="span.views""##;

    fn discuz_conversation_page() -> String {
        discuz_reply_quoting()
            .replace("</title>", "</title><base href=\"/dz/\">")
            .replace("<div id=\"postlist\">", "<div id=\"pt\"><a href=\"forum.php\">首页</a><a class=\"board\" href=\"forum-2-1.html\">考研交流</a></div><span class=\"views\">1,204</span><div id=\"postlist\">")
            .replace("<em id=\"authorposton12\">", "<span class=\"iploc\">IP属地：广东</span><em id=\"authorposton12\">")
            .replace(
                "第二句",
                "第二句 <a href=\"http://example.org/a\" target=\"_blank\">看这里</a><img src=\"data/attachment/a.jpg\" alt=\"图一\">\
                 <img src=\"static/image/smiley/default/smile.gif\" smilieid=\"1\" alt=\"\"><script>document.write('<a href=x>')</script>",
            )
    }

    #[test]
    fn conversation_fields_come_from_the_post_its_own_text_and_the_page() {
        let s = site(&DISCUZ_QUOTE_RULES.replace("/>", &format!("{CONVERSATION}/>")));
        let got = parse_page(&s, &discuz_conversation_page());
        let (first, reply) = (&got.posts[0], &got.posts[1]);
        assert_eq!((first.id.as_deref(), first.author_id.as_deref(), first.edited.as_deref(), first.location.as_deref()), (Some("11"), Some("11"), None, None));
        assert!(first.links.is_empty() && first.images.is_empty());
        assert_eq!((reply.id.as_deref(), reply.author_id.as_deref(), reply.author_url.as_deref()), (Some("12"), Some("12"), Some("space-uid-12")));
        assert_eq!((reply.edited.as_deref(), reply.location.as_deref(), reply.reply_to.as_deref()), (Some("2024-03-06T08:10:00"), Some("广东"), Some("11")));
        assert_eq!(reply.paragraphs, ["我自己的回答", "第二句 看这里"], "a link's words stay in its paragraph");
        assert_eq!(reply.links, [luntan_core::doc::Link { href: "http://example.org/a".into(), text: "看这里".into() }]);
        assert_eq!(reply.images, [luntan_core::doc::Image { src: "data/attachment/a.jpg".into(), alt: "图一".into() }]);
        assert_eq!(got.facts, ThreadFacts { board_name: Some("考研交流".into()), replies: None, views: Some(1204) });
        assert_eq!(got.base.as_deref(), Some("/dz/"));

        // A thread resolves the URLs against its URL and the page's base.
        let d = extract_thread(&s, &row(1), &[raw("p1.html", &discuz_conversation_page())], None).unwrap().doc;
        assert_eq!((d.board_name.as_deref(), d.views, d.replies), (Some("考研交流"), Some(1204), None));
        assert_eq!(d.posts[1].author_url.as_deref(), Some("http://bbs.example/dz/space-uid-12"));
        assert_eq!(d.posts[1].images[0].src, "http://bbs.example/dz/data/attachment/a.jpg");
        assert_eq!(ThreadDoc::from_xml(&d.to_xml()).unwrap(), d);

        // Without them, the same page gives version 1's post.
        let v1 = parse_page(&site(DISCUZ_QUOTE_RULES), &discuz_conversation_page());
        assert_eq!(
            v1.posts[1],
            Post { author_url: None, author_id: None, id: None, edited: None, location: None, links: vec![], images: vec![], ..reply.clone() }
        );
        assert_eq!((v1.facts, v1.base), (ThreadFacts::default(), None));
    }

    #[test]
    fn the_stream_reads_version_2s_fields_as_the_dom_does_and_declines_only_the_form_it_cannot() {
        // `img:not(…)` is a pseudo-class: that rule keeps the page in the DOM.
        let s = site(&DISCUZ_QUOTE_RULES.replace("/>", &format!("{CONVERSATION}/>")));
        let page = discuz_conversation_page();
        match crate::stream::parse_page_stream(&s, &page, None).unwrap_err() {
            crate::stream::Unstreamed::Rules(crate::stream::SelectorError::Rule { rule, .. }) => assert_eq!(rule, "images"),
            other => panic!("{other}"),
        }
        assert_eq!(parse_page(&s, &page), parse_page_dom(&s, &page, None));
        // The same fields with a picture rule the stream reads.
        let s = site(&DISCUZ_QUOTE_RULES.replace("/>", &format!("{}/>", CONVERSATION.replace("img:not([smilieid])", "img[alt]"))));
        let streamed = crate::stream::parse_page_stream(&s, &page, None).expect("streams");
        assert_eq!(streamed, parse_page_dom(&s, &page, None));
        let reply = &streamed.posts[1];
        assert_eq!((reply.id.as_deref(), reply.author_id.as_deref(), reply.edited.as_deref()), (Some("12"), Some("12"), Some("2024-03-06T08:10:00")));
        assert_eq!((reply.location.as_deref(), reply.reply_to.as_deref(), reply.links.len(), reply.images.len()), (Some("广东"), Some("11"), 1, 2));
        assert_eq!((streamed.facts.views, streamed.base.as_deref()), (Some(1204), Some("/dz/")));
    }

    #[test]
    fn discuz_posts_with_br_floors_times_and_stripped_quotes() {
        let html = discuz_page(&format!(
            "{}{}",
            first_discuz_post(),
            discuz_post(12, "<em>2</em><sup>#</sup>", "小红", "发表于 <span title=\"2024-3-6 08:00:05\">3 天前</span>", "回复<br>谢谢")
        ));
        let got = parse_page(&site(DISCUZ_RULES), &html);
        assert_eq!(got.title.as_deref(), Some("考研经验分享"));
        assert_eq!(got.posts.len(), 2, "post_rate_div_N is not a post: {:?}", got.posts);
        let p = &got.posts[0];
        assert_eq!((p.floor, p.author.as_str(), p.time.as_deref()), (1, "小明", Some("2024-03-05T12:34:00")));
        assert_eq!(p.paragraphs, ["第一段 文字 & <标签> \"引号\" 'single'", "第二段 😀", "最后一段"]);
        let p = &got.posts[1];
        assert_eq!((p.floor, p.author.as_str(), p.time.as_deref()), (2, "小红", Some("2024-03-06T08:00:05")));
        assert_eq!(p.paragraphs, ["回复", "谢谢"]);
    }

    #[test]
    fn phpbb_posts_with_paragraphs_and_datetime() {
        let rules = r#"<thread title="h2.topic-title" post="div.post" body="div.content" author="a.username" time="p.author time" strip="blockquote"/>"#;
        let post = |id: u32, who: &str, when: &str, content: &str| {
            format!(
                r##"<div id="p{id}" class="post bg2"><div class="inner"><div class="postbody"><div id="post_content{id}">
<h3><a href="#p{id}">Re: 主题</a></h3>
<p class="author"><span>by <strong><a class="username">{who}</a></strong> » </span><time datetime="{when}">Tue Mar 05, 2024 12:34 pm</time></p>
<div class="content">{content}</div></div></div></div></div>"##
            )
        };
        let html = format!(
            r#"<html><head><title>phpBB • 主题</title></head><body><h2 class="topic-title"><a href="viewtopic.php?t=1">主题 &amp; 讨论</a></h2>{}{}</body></html>"#,
            post(101, "张三", "2024-03-05T04:34:00+00:00", "<p>第一段</p><p>第二段 with <b>bold</b> text</p>Trailing text"),
            post(102, "李四", "2024-03-05T05:00:00+00:00", "<blockquote><cite>张三 wrote:</cite>第一段</blockquote>I agree &#128077;"),
        );
        let got = parse_page(&site(rules), &html);
        assert_eq!(got.title.as_deref(), Some("主题 & 讨论"));
        let summary: Vec<_> = got.posts.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_deref(), p.paragraphs.clone())).collect();
        assert_eq!(
            summary,
            [
                // phpBB writes `datetime` in UTC and shows the forum's clock:
                // +08:00, the site's default, as the text says.
                (1, "张三", Some("2024-03-05T12:34:00"), vec!["第一段".to_string(), "第二段 with bold text".into(), "Trailing text".into()]),
                (2, "李四", Some("2024-03-05T13:00:00"), vec!["I agree 👍".to_string()]),
            ]
        );
    }

    #[test]
    fn nested_divs_page_wide_pairing_and_default_title() {
        let rules = r#"<thread body="div.msg" author="span.name" time="span.date"/>"#;
        let html = r#"<html><head><title>  嵌套
            标题 </title></head><body>
<div class="floor"><span class="name">王五</span><span class="date">2024年3月5日 9:07</span>
  <div class="msg"><div><div>外层<div>内层一</div>内层二</div></div><ul><li>列表一</li><li>列表二</li></ul>
  <pre>code  line1
line2</pre><table><tr><td>格1</td><td>格2</td></tr></table>
  <div class="msg">引用里的 msg 不是新帖</div></div></div>
<div class="floor"><span class="name">赵六</span><span class="date">昨天 10:00</span><div class="msg"><p></p><p> &nbsp; </p>短</div></div>
</body></html>"#;
        let got = parse_page(&site(rules), html);
        assert_eq!(got.title.as_deref(), Some("嵌套 标题"));
        assert_eq!(got.posts.len(), 2);
        let p = &got.posts[0];
        assert_eq!((p.floor, p.author.as_str(), p.time.as_deref()), (1, "王五", Some("2024-03-05T09:07:00")));
        assert_eq!(p.paragraphs, ["外层", "内层一", "内层二", "列表一", "列表二", "code line1", "line2", "格1 格2", "引用里的 msg 不是新帖"]);
        let p = &got.posts[1];
        assert_eq!((p.floor, p.author.as_str(), p.time.as_deref()), (2, "赵六", None));
        assert_eq!(p.paragraphs, ["短"]);
    }

    #[test]
    fn a_page_without_bodies_has_no_posts() {
        let got = parse_page(&site(DISCUZ_RULES), "<html><body><p>404 帖子不存在</p></body></html>");
        assert!(got.posts.is_empty());
        assert_eq!(got.title, None);
    }

    #[test]
    fn floor_labels() {
        for (label, floor) in [("楼主", Some(1)), ("沙发", Some(2)), ("37#", Some(37)), ("第 5 楼", Some(5)), ("电梯直达", None)] {
            assert_eq!(floor_number(label), floor, "{label}");
        }
    }

    pub(crate) fn row(pages: u32) -> ThreadRow {
        ThreadRow {
            site: "t".parse().unwrap(),
            thread: "77".parse().unwrap(),
            board: "2".parse().unwrap(),
            url: "http://bbs.example/forum.php?mod=viewthread&tid=77".into(),
            title: Some("列表上的\n标题".into()),
            replies: Some(3),
            last_post: None,
            post_time: None,
            save_date: Some("20261130".parse().unwrap()),
            pages: Some(pages),
            content_type: Some("text/html".into()),
            state: ThreadState::Saved,
            fail_stage: None,
            fail_reason: None,
            attempts: 0,
        }
    }

    fn raw(name: &str, html: &str) -> RawPage {
        RawPage { path: PathBuf::from(name), bytes: GBK.encode(html).0.into_owned(), fetched: None }
    }

    #[test]
    fn pages_concatenate_and_a_repeated_first_post_is_kept_once() {
        let first = first_discuz_post();
        let p1 = discuz_page(&format!("{first}{}", discuz_post(12, "沙发", "小红", "2024-3-6 08:00", "二楼")));
        // Page 2 repeats the first post, as some Discuz templates do.
        let p2 = discuz_page(&format!("{first}{}", discuz_post(13, "<em>3</em>#", "小刚", "2024-3-7 09:00", "三楼")));
        let got = extract_thread(&site(DISCUZ_RULES), &row(2), &[raw("p1.html", &p1), raw("p2.html", &p2)], None).unwrap();
        let d = &got.doc;
        assert_eq!(d.posts.iter().map(|p| p.floor).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(d.posts[2].paragraphs, ["三楼"]);
        assert_eq!((d.title.as_str(), d.posted.as_deref(), d.pages), ("考研经验分享", Some("2024-03-05T12:34:00"), 2));
        assert_eq!((d.forum.as_str(), d.saved.as_str(), d.encoding.as_str()), ("测试论坛", "20261130", "gb18030"));
        assert_eq!(got.pages.len(), 2);
        assert_eq!(got.pages[0].detection.source, Source::Meta);
        assert_eq!(ThreadDoc::from_xml(&d.to_xml()).unwrap(), *d);
    }

    #[test]
    fn without_floors_posts_are_renumbered_and_overlaps_dropped() {
        let rules = r#"<thread post="div.p" body="div.b" author="i"/>"#;
        let post = |who: &str, text: &str| format!(r#"<div class="p"><i>{who}</i><div class="b">{text}</div></div>"#);
        let page = |posts: &[(&str, &str)]| format!("<html><body>{}</body></html>", posts.iter().map(|(w, t)| post(w, t)).collect::<String>());
        let p1 = page(&[("甲", "主楼"), ("乙", "二"), ("丙", "三")]);
        // The starter repeats, and the last post of page 1 slid onto page 2.
        let p2 = page(&[("甲", "主楼"), ("丙", "三"), ("丁", "四"), ("甲", "主楼")]);
        let got = extract_thread(&site(rules), &row(2), &[raw("a.html", &p1), raw("b.html", &p2)], None).unwrap();
        let posts: Vec<_> = got.doc.posts.iter().map(|p| (p.floor, p.author.as_str(), p.text())).collect();
        assert_eq!(posts, [(1, "甲", "主楼".into()), (2, "乙", "二".into()), (3, "丙", "三".into()), (4, "丁", "四".into()), (5, "甲", "主楼".into())]);
        // No title anywhere on the page: the list page's, folded to one line.
        assert_eq!(got.doc.title, "列表上的 标题");
        assert_eq!(got.doc.posted, None);
    }

    /// Regression (Askbot): every answer page repeats the question and its
    /// comments; only the question was dropped, its comments read twice.
    #[test]
    fn a_later_page_repeating_the_starter_and_its_replies_is_read_once_by_post_id() {
        let rules = r#"<thread post="div.p" body="div.b" author="i" post-id="div.p@data-id"/>"#;
        let post = |id: u32, who: &str, text: &str| format!(r#"<div class="p" data-id="{id}"><i>{who}</i><div class="b">{text}</div></div>"#);
        let page = |posts: &[(u32, &str, &str)]| format!("<html><body>{}</body></html>", posts.iter().map(|(i, w, t)| post(*i, w, t)).collect::<String>());
        let question = [(1, "甲", "问题"), (2, "乙", "评论一"), (3, "丙", "评论二")];
        let p1 = page(&[question[0], question[1], question[2], (4, "丁", "回答一"), (5, "甲", "回答二")]);
        let p2 = page(&[question[0], question[1], question[2], (6, "乙", "回答三"), (7, "丙", "评论二")]);
        let got = extract_thread(&site(rules), &row(2), &[raw("a.html", &p1), raw("b.html", &p2)], None).unwrap();
        let posts: Vec<_> = got.doc.posts.iter().map(|p| (p.floor, p.id.as_deref().unwrap(), p.text())).collect();
        assert_eq!(
            posts,
            [
                (1, "1", "问题".into()),
                (2, "2", "评论一".into()),
                (3, "3", "评论二".into()),
                (4, "4", "回答一".into()),
                (5, "5", "回答二".into()),
                (6, "6", "回答三".into()),
                (7, "7", "评论二".into())
            ],
            "a post of the same words but its own id is its own"
        );
    }

    #[test]
    fn no_posts_is_an_error_naming_the_file() {
        let e = extract_thread(&site(DISCUZ_RULES), &row(1), &[raw("data/x/article77.html", "<html><body>登录后可见</body></html>")], None).unwrap_err();
        assert!(matches!(&e, ExtractError::NoPosts { path } if path == Path::new("data/x/article77.html")), "{e:?}");
        assert!(e.to_string().starts_with("data/x/article77.html: no posts found"), "{e}");
    }

    /// Regression: a GBK forum read in browser mode has its DOM saved as
    /// UTF-8 with its `<meta charset=gbk>` still in it; the site file's
    /// forced GBK (and the cached encoding) was applied to those pages.
    #[test]
    fn pages_a_browser_saved_are_read_as_the_utf8_they_are() {
        let html = discuz_page(&first_discuz_post());
        assert!(html.contains("charset=gbk"));
        let mut s = site(&format!("{DISCUZ_RULES}<browser/>"));
        s.encoding = Some(GBK);
        let mut r = row(1);
        r.content_type = Some("text/html; charset=utf-8".into());
        let page = RawPage { path: "f.html".into(), bytes: html.into_bytes(), fetched: None };
        let got = extract_thread(&s, &r, &[page], Some(GBK)).unwrap();
        assert_eq!(got.pages[0].detection.encoding, encoding_rs::UTF_8, "{:?}", got.pages[0].detection);
        assert_eq!(got.doc.posts[0].author, "小明");
    }

    #[test]
    fn the_site_files_forced_encoding_reaches_the_decoder() {
        let html = discuz_page(&first_discuz_post()).replace("charset=gbk", "charset=utf-8");
        let bytes = GB18030.encode(&html).0.into_owned();
        let mut s = site(DISCUZ_RULES);
        s.encoding = Some(GBK);
        let got = extract_thread(&s, &row(1), &[RawPage { path: "f.html".into(), bytes, fetched: None }], None).unwrap();
        assert_eq!(got.pages[0].detection.source, Source::Forced);
        assert_eq!(got.doc.posts[0].author, "小明");
    }
}
