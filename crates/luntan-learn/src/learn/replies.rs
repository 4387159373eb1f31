//! Step 5's second half: replies a page draws inside the post they answer, in markup of
//! their own: a question-and-answer site's comments under the question and
//! under each answer (Askbot's `div.js-comment` in the `div.js-post` it
//! comments on), a news section's replies under each comment. The template
//! reads the posts (the question, the answers) and takes their comments
//! into their bodies; a `nested-posts` file with a selector list, the
//! posts' and the replies' (`div.js-post, div.js-comments-list >
//! div.js-comment`), reads each comment as a post of its own after the one
//! it answers, which is what the thread is.

use std::collections::HashSet;
use std::path::Path;

use ego_tree::NodeId;
use luntan_core::Site;
use scraper::{ElementRef, Html, Selector};

use super::{body_at, dated, el, shown_letters, strip_rule, time_of, Seen, Shapes, ASIDE, UNREAD};
use crate::select::{self, first_fitting, line_text};
use crate::urls::Split;
use crate::{Field, Learned};

/// A reply's words: letters outside links its element holds at least.
const REPLY_LETTERS: usize = 2;

/// Elements inside a line of text, which no reply is: a post's "updated
/// <date>" link holds one date and a word too.
const INLINE: [&str; 13] = ["a", "abbr", "b", "cite", "code", "em", "font", "i", "label", "small", "span", "strong", "time"];

/// Learns the replies' selector and their own body, author and time
/// selectors, where the posts have a selector and the posts' elements hold
/// repeated dated records of other markup; writes the selector lists into
/// `what` and returns the thread pages read as extract will then read
/// them (each reply moved out after its post). Kept only where the file so
/// made reads every page as the posts it read before, each followed by
/// its replies as their own selectors read them; else a `missing` line.
pub(super) fn inner_replies<'a, 's>(thread_pages: &[&'a Seen<'s>], shapes: &Shapes, what: &mut Learned) -> Option<Vec<Seen<'s>>> {
    let css = |name: &str| what.thread.iter().find(|f| f.attr == name).map(|f| f.css.clone());
    let post = css("post").filter(|c| c != "auto")?;
    if css("nested-posts").is_some() {
        return None;
    }
    let post_sel = select::parse(&post)?;
    let own_time = css("time").and_then(|c| select::parse(&c));
    let pages: Vec<&'a Seen<'s>> = thread_pages.iter().copied().filter(|s| s.doc.select(&post_sel).next().is_some()).collect();
    // Each page's posts, found once.
    let posts: Vec<(&'a Seen<'s>, Vec<ElementRef<'a>>)> =
        pages.iter().map(|&s| (s, select::outermost(&s.doc, &post_sel).into_iter().map(|id| el(&s.doc, id)).collect())).collect();
    // A post's dates other than its own time, each a place to look for a
    // reply: the elements around it up to the post, the outermost first
    // (the whole reply before its byline).
    let mut cands = Vec::new();
    for (_, on_page) in &posts {
        for &p in on_page {
            let own = own_time.as_ref().and_then(|t| p.select(t).next()).map(|t| t.id());
            for d in dates(p) {
                if own.is_some_and(|o| d.id() == o || d.ancestors().any(|a| a.id() == o)) {
                    continue;
                }
                let chain: Vec<ElementRef> = d.ancestors().filter_map(ElementRef::wrap).take_while(|a| a.id() != p.id()).collect();
                cands.extend(chain.iter().rev().chain(std::iter::once(&d)).flat_map(|a| select::with_parent(*a)));
            }
        }
        // Enough places to try: the first pages with replies give them all.
        if cands.len() > 200 {
            break;
        }
    }
    let reply = first_fitting(cands, |sel| fits(&posts, sel))?;
    let reply_sel = select::parse(&reply)?;
    let replies: Vec<(&Seen, ElementRef)> =
        posts.iter().flat_map(|(s, on_page)| on_page.iter().flat_map(|p| p.select(&reply_sel)).map(move |r| (*s, r))).collect();
    // Its time: the posts' selector where it reads each reply's one date.
    let one_date = |r: ElementRef| dates(r).into_iter().next().and_then(time_of);
    let time = match &own_time {
        Some(t) if replies.iter().all(|(_, r)| r.select(t).next().and_then(time_of) == one_date(*r)) => None,
        _ => Some(fit(&replies, |r| dates(r).into_iter().next(), &|r, sel| r.select(sel).next().and_then(time_of) == one_date(r))?),
    };
    // Its author: a short link to a page of the shape the posts' authors
    // link to (a member's page).
    let member_shapes: HashSet<_> = match css("author").and_then(|c| select::parse(&c)) {
        Some(a) => posts.iter().flat_map(|(s, on_page)| on_page.iter().filter_map(|p| p.select(&a).next()).filter_map(|e| link_shape(s, e, shapes))).collect(),
        None => HashSet::new(),
    };
    let author_of = |s: &Seen, r: ElementRef<'a>| -> Option<ElementRef<'a>> {
        r.select(&anchors())
            .find(|a| (1..=20).contains(&line_text(*a).chars().count()) && link_shape(s, *a, shapes).is_some_and(|sh| member_shapes.contains(&sh)))
    };
    let author = if member_shapes.is_empty() {
        None
    } else {
        let first = replies.iter().find_map(|(s, r)| author_of(s, *r).map(|a| (*r, a)))?;
        let cands = select::inside(first.1, first.0.id());
        first_fitting(cands, |sel| replies.iter().all(|(s, r)| r.select(sel).next().map(|e| e.id()) == author_of(s, *r).map(|a| a.id())))
    };
    // Its body: the element holding the most letters a reader sees that
    // holds no date and not the author.
    let author_sel = author.as_deref().and_then(select::parse);
    let body_of = |r: ElementRef<'a>| -> Option<ElementRef<'a>> { reply_body(r, author_sel.as_ref()) };
    let body = fit(&replies, body_of, &|r, sel| body_at(r, sel).map(|b| b.id()) == body_of(r).map(|b| b.id()))?;
    // The lists: the posts' selector first, then the replies'. A list
    // takes the first match of any of its selectors, so a posts' selector
    // that matches inside the replies too (a bare `a`) is scoped to the
    // posts' own (`div.post a`), which a reply moved out of its post is no
    // longer under; not where the replies match that too.
    let scope = select::own_part(&post);
    let matches_in_replies = |css: &str| select::parse(css).is_some_and(|s| replies.iter().any(|(_, r)| r.select(&s).next().is_some()));
    let scope_is_theirs = select::parse(&scope).is_none_or(|s| replies.iter().any(|(_, r)| s.matches(r)));
    let scoped = |css: &str| match !css.contains(',') && !scope.contains(',') && !scope_is_theirs && matches_in_replies(css) {
        true => format!("{scope} {css}"),
        false => css.to_owned(),
    };
    let mut with = what.clone();
    for f in with.thread.iter_mut() {
        let add = match f.attr {
            "post" => Some(reply.clone()),
            "body" => Some(body.clone()),
            "author" => author.clone(),
            "time" => time.clone(),
            _ => None,
        };
        if let Some(add) = add {
            f.css = format!("{}, {add}", scoped(&f.css));
        }
    }
    with.thread.retain(|f| f.attr != "strip");
    with.thread.push(Field { attr: "nested-posts", css: "true".into(), examples: Vec::new() });
    let union = select::parse(&format!("{post}, {reply}"))?;
    let flat: Vec<Seen<'s>> = thread_pages.iter().map(|s| s.flattened(&union)).collect();
    // `strip` again, from the posts' bodies without their replies.
    if let Some(bodies_sel) = with.thread.iter().find(|f| f.attr == "body").and_then(|f| select::parse(&f.css)) {
        let bodies: Vec<(&Html, ElementRef)> = flat
            .iter()
            .flat_map(|s| select::outermost(&s.doc, &union).into_iter().filter_map(|id| body_at(el(&s.doc, id), &bodies_sel).map(|b| (&s.doc, b))))
            .collect();
        let strip = strip_rule(&bodies);
        if !strip.css.is_empty() {
            with.thread.push(strip);
        }
    }
    let own = Own { reply: reply_sel, author: author_sel, body: select::parse(&body)?, time: time.as_deref().and_then(select::parse) };
    if reads(&pages, what, &with, &post_sel, &own) {
        tracing::debug!("replies: {reply} inside {post}, body {body}");
        *what = with;
        Some(flat)
    } else {
        what.missing.push(format!("post: the posts hold dated replies ({reply}), but read with them as posts of their own the pages change; not learned"));
        None
    }
}

/// Whether `sel` takes replies: every match a block inside a post, none a
/// post or holding one, each with one date and words of its own, and some post
/// holding two (a list's wrapper holds all of a post's replies).
fn fits(posts: &[(&Seen, Vec<ElementRef>)], sel: &Selector) -> bool {
    let mut two = false;
    for (s, on_page) in posts {
        // The posts as extract takes them: a reply the posts' selector
        // matches too (`div[id^=p]`) is swallowed by its post until the
        // replies have a selector of their own.
        let ids: HashSet<NodeId> = on_page.iter().map(|p| p.id()).collect();
        for r in s.doc.select(sel) {
            let inside = r.ancestors().any(|a| ids.contains(&a.id()));
            let holds_post = r.descendent_elements().any(|d| ids.contains(&d.id()));
            if INLINE.contains(&r.value().name())
                || ids.contains(&r.id())
                || !inside
                || holds_post
                || dates(r).len() != 1
                || super::text_split(r, &HashSet::new()).0 < REPLY_LETTERS
            {
                return false;
            }
        }
        two |= on_page.iter().any(|p| p.select(sel).nth(1).is_some());
    }
    two
}

/// The innermost elements under `e` (itself included) that show a date.
fn dates(e: ElementRef<'_>) -> Vec<ElementRef<'_>> {
    // `descendent_elements` starts with the element itself.
    e.descendent_elements().filter(|d| dated(*d) && !d.descendent_elements().skip(1).any(dated)).collect()
}

fn anchors() -> Selector {
    Selector::parse("a[href]").expect("static selector")
}

/// The shape of the page `e` (a link, or holding one) links to.
fn link_shape(s: &Seen, e: ElementRef, shapes: &Shapes) -> Option<crate::urls::Shape> {
    let a = if e.value().name() == "a" { e } else { e.select(&anchors()).next()? };
    let url = s.page.url.join(a.value().attr("href")?.trim()).ok()?;
    Some(shapes.of(&Split::of(&url)))
}

/// A reply's body: of the elements inside it that hold no date, not the
/// author and no form, the one with the most letters; the outermost of
/// equals.
fn reply_body<'a>(r: ElementRef<'a>, author: Option<&Selector>) -> Option<ElementRef<'a>> {
    r.descendent_elements()
        .filter(|e| e.id() != r.id() && dates(*e).is_empty() && !UNREAD.contains(&e.value().name()))
        .filter(|e| !e.descendent_elements().any(|d| ASIDE.contains(&d.value().name()) || author.is_some_and(|a| a.matches(&d))))
        .fold(None::<(usize, ElementRef)>, |best, e| match best {
            Some((n, _)) if n >= shown_letters(e) => best,
            _ => Some((shown_letters(e), e)),
        })
        .map(|(_, e)| e)
}

/// The first selector, of those [`select::inside`] gives for the first
/// reply's pick, that agrees in every reply.
fn fit<'a>(
    replies: &[(&Seen, ElementRef<'a>)],
    pick: impl Fn(ElementRef<'a>) -> Option<ElementRef<'a>>,
    agrees: &dyn Fn(ElementRef<'a>, &Selector) -> bool,
) -> Option<String> {
    let (r, e) = replies.iter().find_map(|(_, r)| pick(*r).map(|e| (*r, e)))?;
    first_fitting(select::inside(e, r.id()), |sel| replies.iter().all(|(_, r)| agrees(*r, sel)))
}

/// The replies' own selectors: theirs, and their author's (where the
/// posts' authors link to members' pages), body's and time's (where the
/// posts' time selector does not read theirs).
struct Own {
    reply: Selector,
    author: Option<Selector>,
    body: Selector,
    time: Option<Selector>,
}

/// Whether the file `with` reads every page as `before` did, each post
/// followed by its replies, each reply as its own selectors read it.
fn reads(pages: &[&Seen], before: &Learned, with: &Learned, post_sel: &Selector, own: &Own) -> bool {
    let (Ok(old_site), Ok(new_site)) = (Site::parse(&before.site_file(), Path::new("learned.xml")), Site::parse(&with.site_file(), Path::new("learned.xml")))
    else {
        return false;
    };
    pages.iter().all(|s| {
        let old = luntan_extract::parse_page(&old_site, &s.page.html).posts;
        let new = luntan_extract::parse_page(&new_site, &s.page.html).posts;
        let posts = select::outermost(&s.doc, post_sel);
        let mut at = new.iter();
        old.len() == posts.len()
            && posts.into_iter().zip(&old).all(|(p, was)| {
                let Some(now) = at.next() else { return false };
                (&now.author, &now.time) == (&was.author, &was.time)
                    && el(&s.doc, p).select(&own.reply).all(|r| {
                        let author = own.author.as_ref().and_then(|a| r.select(a).next()).map(line_text).unwrap_or_default();
                        let time = match &own.time {
                            Some(t) => r.select(t).next().and_then(time_of),
                            None => dates(r).into_iter().next().and_then(time_of),
                        };
                        let paragraphs = body_at(r, &own.body).map(|b| luntan_extract::parse::paragraphs(b, None)).unwrap_or_default();
                        at.next().is_some_and(|n| (&n.author, &n.time, &n.paragraphs) == (&author, &time, &paragraphs))
                    })
            })
            && at.next().is_none()
    })
}
