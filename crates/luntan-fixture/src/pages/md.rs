//! A NodeBB-style forum (site id `md`, served only when a config names it)
//! as NodeBB's server renders it for a client without JavaScript: the
//! pages a script-drawn forum gives a crawler.
//!
//! | page | URL (under `/md/`) |
//! |------|--------------------|
//! | home | `` (the categories) |
//! | category | `category/{cid}/{slug}`, later pages `?page={n}`; sorted `?sort=recently_created|most_posts|most_views` (and `recently_replied`, the default order) |
//! | topic | `topic/{tid}/{slug}`, later pages `?page={n}`; sorted `?sort=newest_to_oldest` (and `oldest_to_newest`, the default) |
//! | lookalikes | a post's permalink `topic/{tid}/{slug}/{index}` (the page holding it), `post/{pid}` (a 302 to the permalink), users `user/{userslug}`, tags `tags/{tag}`, `recent`, `popular?term=daily|weekly|monthly|alltime` |
//!
//! Slugs are percent-encoded Chinese (categories: the title; topics: the
//! title's first letters, as the `bbs` forum's). UTF-8, said in `<meta
//! charset="utf-8">` and the header. Infinite scrolling is on, so the only
//! pagers a client without JavaScript gets are inside `<noscript>` (`<ul
//! class="pagination">` of `?page=N` links) and the head's `<link
//! rel="next">`/`<link rel="prev">`; the visible `<div
//! component="pagination" class="… hidden">` holds no link. Every time is
//! an empty `<span class="timeago" title="2024-03-05T04:34:00.000Z">`: UTC,
//! where the truth holds the forum's +08:00 wall clock. Topic rows are
//! `<li component="category/topic" data-tid="…">` (the first post's time
//! in the header, the last post's in the teaser; the reply count in
//! `div.stats-replies`, beside votes and views written the same way);
//! posts are `<li component="post" data-index="…" data-pid="…">` with the
//! author `<a itemprop="author">`, the index `<a class="post-index">#3</a>`
//! and the Markdown-rendered body in `<div component="post/content">`.
//! Some replies quote an earlier post on their page as NodeBB's quote
//! button writes it (a mention and a link to the post, then a Markdown
//! `<blockquote>`); every post shows its votes ([`Fixture::md_truth`]).

use std::borrow::Cow;
use std::fmt::Write as _;

use super::{esc, href, pager_parts, PagerPart, Query, Routed, Shown};
use crate::kind::ForumKind;
use crate::model::{BoardMeta, Fixture, ForumModel, Post, ThreadMeta};
use crate::text::{civil, percent_decode, percent_encode, rng};

/// What NodeBB's default robots.txt keeps crawlers out of, under `/md/`.
pub(super) const ROBOTS_TXT: &str = "Disallow: /md/admin/\nDisallow: /md/reset/\nDisallow: /md/compose\n";

/// The tags topics carry (`/md/tags/{tag}`).
const TAGS: &[&str] = &["rust", "linux", "docker", "求助", "分享", "教程", "讨论", "bug"];

/// The forum's offset from UTC: the truth's times are its wall clock,
/// the pages' are UTC.
const UTC_OFFSET_MINUTES: u32 = 8 * 60;

/// A time as NodeBB writes it for `timeago`: UTC with milliseconds and `Z`.
fn utc(local_minutes: u32) -> String {
    format!("{}.000Z", civil(local_minutes.saturating_sub(UTC_OFFSET_MINUTES)).iso())
}

/// The empty element that is all a page shows of a time.
fn timeago(out: &mut String, local_minutes: u32) {
    let _ = write!(out, "<span class=\"timeago\" title=\"{}\"></span>", utc(local_minutes));
}

/// A number as NodeBB's `humanReadableNumber` shows it (`1.2k`), the exact
/// count in the `title`.
fn number(out: &mut String, n: u32) {
    let shown = if n >= 1000 { format!("{:.1}k", f64::from(n) / 1000.0) } else { n.to_string() };
    let _ = write!(out, "<span class=\"human-readable-number\" title=\"{n}\">{shown}</span>");
}

/// The line NodeBB's quote button writes before a quote, rendered: the
/// quoted author mentioned, the topic linked to the quoted post.
fn said_line(q: &Post, title: &str) -> String {
    let mut out = String::new();
    out.push_str("<a class=\"plugin-mentions-user plugin-mentions-a\" href=\"");
    href(&mut out, &user_path(&q.author));
    out.push_str("\">@");
    esc(&mut out, &q.author);
    let _ = write!(out, "</a> 在 <a href=\"/md/post/{}\">", q.pid);
    esc(&mut out, title);
    out.push_str("</a> 中说：");
    out
}

/// A user's profile path: the name percent-encoded, as NodeBB slugs keep
/// Chinese letters.
fn user_path(name: &str) -> String {
    format!("/md/user/{}", percent_encode(&name.to_lowercase().replace(' ', "-")))
}

/// How a category lists its topics (`?sort=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListSort {
    /// Newest last post first: the category's own pages.
    RecentlyReplied,
    RecentlyCreated,
    MostPosts,
    MostViews,
}

impl ListSort {
    const ALL: [ListSort; 4] = [ListSort::RecentlyReplied, ListSort::RecentlyCreated, ListSort::MostPosts, ListSort::MostViews];

    fn name(self) -> &'static str {
        match self {
            ListSort::RecentlyReplied => "recently_replied",
            ListSort::RecentlyCreated => "recently_created",
            ListSort::MostPosts => "most_posts",
            ListSort::MostViews => "most_views",
        }
    }

    fn label(self) -> &'static str {
        match self {
            ListSort::RecentlyReplied => "最近回复",
            ListSort::RecentlyCreated => "最近发表",
            ListSort::MostPosts => "回复最多",
            ListSort::MostViews => "浏览最多",
        }
    }

    fn parse(s: Option<&str>) -> Option<ListSort> {
        match s {
            None => Some(ListSort::RecentlyReplied),
            Some(s) => ListSort::ALL.into_iter().find(|k| k.name() == s),
        }
    }
}

/// The order a topic shows its posts in (`?sort=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PostSort {
    OldestToNewest,
    /// The first post, then the replies newest first.
    NewestToOldest,
}

impl PostSort {
    fn parse(s: Option<&str>) -> Option<PostSort> {
        match s {
            None | Some("oldest_to_newest") => Some(PostSort::OldestToNewest),
            Some("newest_to_oldest") => Some(PostSort::NewestToOldest),
            Some(_) => None,
        }
    }
}

/// The head, with `rels` (`next`, `prev`, `up`) as `<link>`s, and the page's opening.
fn head(out: &mut String, f: &ForumModel, title: &str, rels: &[(&str, String)]) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"zh-CN\" data-dir=\"ltr\" style=\"direction: ltr;\">\n<head>\n<title>");
    esc(out, title);
    out.push_str(
        "</title>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width&#x3D;device-width, initial-scale&#x3D;1.0\" />\n\
<meta name=\"content-type\" content=\"text/html; charset=UTF-8\" />\n<meta name=\"apple-mobile-web-app-capable\" content=\"yes\" />\n\
<meta property=\"og:site_name\" content=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\" />\n<meta property=\"og:title\" content=\"");
    esc(out, title);
    out.push_str(
        "\" />\n<link rel=\"stylesheet\" type=\"text/css\" href=\"/md/assets/client.css?v=8f3c2a\" />\n\
<link rel=\"icon\" type=\"image/x-icon\" href=\"/md/assets/uploads/system/favicon.ico?v=8f3c2a\" />\n\
<link rel=\"manifest\" href=\"/md/manifest.webmanifest\" crossorigin=\"use-credentials\" />\n\
<link rel=\"search\" type=\"application/opensearchdescription+xml\" title=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\" href=\"/md/osd.xml\" />\n");
    for (rel, to) in rels {
        let _ = write!(out, "<link rel=\"{rel}\" href=\"");
        href(out, to);
        out.push_str("\" />\n");
    }
    out.push_str(
        "<script>\nvar config = JSON.parse('{\"relative_path\":\"/md\",\"upload_url\":\"/assets/uploads\",\"usePagination\":false,\"postsPerPage\":10,\"topicsPerPage\":20}');\n</script>\n\
<script defer src=\"/md/assets/nodebb.min.js?v=8f3c2a\"></script>\n</head>\n<body class=\"page-md skin-noskin\">\n\
<nav class=\"navbar navbar-default\" id=\"header-menu\" component=\"navbar\"><div class=\"container\">\n<a class=\"navbar-brand\" href=\"/md/\">",
    );
    esc(out, f.kind.name());
    out.push_str(
        "</a>\n<ul id=\"main-nav\" class=\"nav navbar-nav\">\
<li><a class=\"navigation-link\" href=\"/md/\" title=\"版块\"><i class=\"fa fa-fw fa-list\"></i><span class=\"visible-xs-inline\">版块</span></a></li>\
<li><a class=\"navigation-link\" href=\"/md/recent\" title=\"最新\"><i class=\"fa fa-fw fa-clock-o\"></i><span class=\"visible-xs-inline\">最新</span></a></li>\
<li><a class=\"navigation-link\" href=\"/md/popular\" title=\"热门\"><i class=\"fa fa-fw fa-fire\"></i><span class=\"visible-xs-inline\">热门</span></a></li>\
<li><a class=\"navigation-link\" href=\"/md/tags/rust\" title=\"标签\"><i class=\"fa fa-fw fa-tags\"></i><span class=\"visible-xs-inline\">标签</span></a></li></ul>\n\
<ul class=\"nav navbar-nav navbar-right\"><li><a href=\"/md/register\">注册</a></li><li><a href=\"/md/login\">登录</a></li></ul>\n\
</div></nav>\n<main id=\"panel\" class=\"slideout-panel\">\n<div class=\"container\" id=\"content\">\n<noscript>\n<div class=\"alert alert-danger\"><p>您的浏览器不支持 JavaScript，部分功能无法使用。</p></div>\n</noscript>\n",
    );
}

fn foot(out: &mut String, f: &ForumModel) {
    out.push_str("</div>\n</main>\n<footer class=\"footer\"><div class=\"container\"><p>");
    esc(out, f.kind.name());
    out.push_str(
        " · <a href=\"mailto:admin@example.invalid\">联系我们</a> · Powered by <a href=\"https://nodebb.invalid\" target=\"_blank\" rel=\"noopener\">NodeBB</a></p></div></footer>\n\
<script defer src=\"/md/assets/src/modules/timeago.js?v=8f3c2a\"></script>\n</body>\n</html>\n",
    );
}

/// The breadcrumb: the forum, then `trail` (a link, or the current page's name).
fn crumbs(out: &mut String, trail: &[(Option<String>, &str)]) {
    out.push_str("<ol class=\"breadcrumb\" itemscope=\"itemscope\" itemprop=\"breadcrumb\" itemtype=\"http://schema.org/BreadcrumbList\">\n");
    out.push_str("<li itemscope=\"itemscope\" itemprop=\"itemListElement\" itemtype=\"http://schema.org/ListItem\"><a href=\"/md/\" itemprop=\"item\"><span itemprop=\"name\">首页</span></a></li>\n");
    for (to, name) in trail {
        match to {
            Some(to) => {
                out.push_str("<li itemscope=\"itemscope\" itemprop=\"itemListElement\" itemtype=\"http://schema.org/ListItem\"><a href=\"");
                href(out, to);
                out.push_str("\" itemprop=\"item\"><span itemprop=\"name\">");
                esc(out, name);
                out.push_str("</span></a></li>\n");
            }
            None => {
                out.push_str("<li component=\"breadcrumb/current\" class=\"active\"><span itemprop=\"name\">");
                esc(out, name);
                out.push_str("</span></li>\n");
            }
        }
    }
    out.push_str("</ol>\n");
}

/// The pagers a client without JavaScript sees: none outside `<noscript>`.
/// `query(k)` is page `k`'s query string (`page=2`, `sort=…&page=2`).
fn pager(out: &mut String, page: usize, pages: usize, query: impl Fn(usize) -> String) {
    use PagerPart::*;
    // Infinite scrolling's own widget: hidden, and nothing in it to follow.
    let _ = writeln!(
        out,
        "<div component=\"pagination\" class=\"text-center pagination-container hidden\"><span class=\"pagination-text\">{page} / {}</span></div>",
        pages.max(1)
    );
    if pages <= 1 {
        return;
    }
    out.push_str("<noscript>\n<ul class=\"pagination\">\n");
    let item = |out: &mut String, class: &str, k: usize, text: &str| {
        let _ = write!(out, "<li class=\"{class}\"><a href=\"?");
        href(out, &query(k));
        let _ = writeln!(out, "\" data-page=\"{k}\">{text}</a></li>");
    };
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => item(out, "previous pull-left", k, "<i class=\"fa fa-chevron-left\"></i>"),
            First => {
                item(out, "page", 1, "1");
                out.push_str("<li class=\"page dots\"><span>…</span></li>\n");
            }
            Current(k) => item(out, "page active", k, &k.to_string()),
            Number(k) => item(out, "page", k, &k.to_string()),
            Last(k) => {
                out.push_str("<li class=\"page dots\"><span>…</span></li>\n");
                item(out, "page", k, &k.to_string());
            }
            Next(k) => item(out, "next pull-right", k, "<i class=\"fa fa-chevron-right\"></i>"),
        }
    }
    out.push_str("</ul>\n</noscript>\n");
}

/// `rel="prev"`/`rel="next"` for page `page` of `pages` at `first`, page 1
/// named too (`?page=1`), as NodeBB writes them.
fn page_rels(first: &str, page: usize, pages: usize, query: &impl Fn(usize) -> String) -> Vec<(&'static str, String)> {
    let mut rels = Vec::new();
    if page > 1 {
        rels.push(("prev", format!("{first}?{}", query(page - 1))));
    }
    if page < pages {
        rels.push(("next", format!("{first}?{}", query(page + 1))));
    }
    rels
}

/// A topic's tags: none to two, fixed by the seed.
fn tags_of(seed: u64, t: &ThreadMeta) -> Vec<&'static str> {
    let mut r = rng(&[seed, ForumKind::Modern.code(), t.tid, 0x7A95]);
    let n = r.usize(0..3);
    let mut tags: Vec<&'static str> = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = TAGS[r.usize(0..TAGS.len())];
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

fn tag_links(out: &mut String, tags: &[&str]) {
    out.push_str("<span class=\"tag-list\">");
    for tag in tags {
        out.push_str("<a href=\"/md/tags/");
        href(out, &percent_encode(tag));
        out.push_str("\"><span class=\"tag tag-item\" data-tag=\"");
        esc(out, tag);
        out.push_str("\">");
        esc(out, tag);
        out.push_str("</span></a> ");
    }
    out.push_str("</span>");
}

/// An avatar as NodeBB draws one for a user without a picture: the first letter on a colour.
fn avatar(out: &mut String, name: &str, uid: u64, size: &str) {
    const COLOURS: [&str; 6] = ["#f44336", "#3f51b5", "#009688", "#ff5722", "#795548", "#607d8b"];
    let _ = write!(
        out,
        "<span class=\"avatar avatar-{size} avatar-rounded\" component=\"user/picture\" data-uid=\"{uid}\" style=\"background-color: {};\">",
        COLOURS[(uid % 6) as usize]
    );
    esc(out, &name.chars().next().map(|c| c.to_uppercase().to_string()).unwrap_or_default());
    out.push_str("</span>");
}

pub(super) fn gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(4096);
    head(&mut out, f, &format!("页面未找到 | {}", f.kind.name()), &[]);
    out.push_str(
        "<div class=\"alert alert-danger notfound\"><h2>页面未找到</h2><p>您要找的页面不存在，或者已被删除。<a href=\"/md/\">返回首页</a></p></div>\n",
    );
    foot(&mut out, f);
    out
}

/// The number in `s`, when `s` is one.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() >= 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Whether `slug` (percent-encoded or raw) is `want`'s.
fn same_slug(slug: &str, want: &str) -> bool {
    percent_decode(slug) == percent_decode(want)
}

impl Fixture {
    pub(super) fn route_md(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            ["category", id, ..] if self.crafted(Some(id)) => self.decoy_list(f),
            ["topic", id, ..] if self.crafted(Some(id)) => self.decoy_thread(f),
            [""] if q.is_empty() => Routed::Page(self.md_home(f), Shown::Home),
            ["category", id, slug] if q.only(&["page", "sort"]) => {
                let b = f.board(id).filter(|b| same_slug(slug, &percent_encode(&b.title)));
                let (Some(b), Some(sort), Some(page)) = (b, ListSort::parse(q.get("sort")), q.number("page", 1)) else { return Routed::NotFound };
                if !(1..=f.list_pages(b)).contains(&page) {
                    return Routed::NotFound;
                }
                Routed::Page(self.md_list_sorted(f, b, page, sort, q.get("sort").is_some()), Shown::List)
            }
            ["topic", id, slug] if q.only(&["page", "sort"]) => {
                let t = digits(id).and_then(|id| f.thread(id)).filter(|t| same_slug(slug, &ForumModel::slug(t)));
                match (q.get("sort"), PostSort::parse(q.get("sort"))) {
                    (None, _) => self.thread_route(f, t, q.number("page", 1)),
                    (Some(_), Some(sort)) => {
                        let Some(t) = t else { return Routed::NotFound };
                        if t.deleted {
                            return Routed::Gone(gone(f));
                        }
                        match q.number("page", 1) {
                            Some(p) if (1..=f.thread_pages(t)).contains(&p) => Routed::Page(self.md_thread_sorted(f, t, p, sort, true), Shown::Other),
                            _ => Routed::NotFound,
                        }
                    }
                    (Some(_), None) => Routed::NotFound,
                }
            }
            // A post's permalink: the page that holds it.
            ["topic", id, slug, index] if q.is_empty() => {
                let t = digits(id).and_then(|id| f.thread(id)).filter(|t| same_slug(slug, &ForumModel::slug(t)));
                let Some(t) = t else { return Routed::NotFound };
                if t.deleted {
                    return Routed::Gone(gone(f));
                }
                match digits(index) {
                    Some(i) if (1..=u64::from(t.posts)).contains(&i) => {
                        let page = (i as usize - 1) / f.kind.thread_page_size() + 1;
                        Routed::Page(self.md_thread_sorted(f, t, page, PostSort::OldestToNewest, false), Shown::Other)
                    }
                    _ => Routed::NotFound,
                }
            }
            ["post", pid] if q.is_empty() => match self.md_post_target(f, pid) {
                Some(to) => {
                    let mut body = String::with_capacity(256);
                    body.push_str("Found. Redirecting to ");
                    esc(&mut body, &to);
                    Routed::Redirect(body)
                }
                None => Routed::NotFound,
            },
            ["user", slug] if q.is_empty() => match String::from_utf8(percent_decode(slug)) {
                Ok(name) if !name.is_empty() && name.chars().count() <= 40 && !name.contains(['/', '<', '>', '"']) => {
                    Routed::Page(self.md_user(f, &name), Shown::Other)
                }
                _ => Routed::NotFound,
            },
            ["tags", tag] if q.is_empty() => match String::from_utf8(percent_decode(tag)) {
                Ok(tag) if TAGS.contains(&tag.as_str()) => Routed::Page(self.md_tag(f, &tag), Shown::Other),
                _ => Routed::NotFound,
            },
            ["recent"] if q.is_empty() => Routed::Page(self.md_recent(f), Shown::Other),
            ["popular"] if q.only(&["term"]) => match q.get("term").unwrap_or("alltime") {
                term @ ("daily" | "weekly" | "monthly" | "alltime") => Routed::Page(self.md_popular(f, term), Shown::Other),
                _ => Routed::NotFound,
            },
            _ => Routed::NotFound,
        }
    }

    /// Where `/md/post/{pid}` sends the reader: the post's permalink.
    pub(super) fn md_post_target(&self, f: &ForumModel, pid: &str) -> Option<String> {
        let pid = digits(pid)?;
        // Post ids are `tid * 64 + floor`; a long thread's reach into the next id's range.
        (0..3).filter_map(|back| (pid / 64).checked_sub(back)).find_map(|tid| {
            let t = f.thread(tid).filter(|t| !t.deleted)?;
            let floor = pid - tid * 64;
            (1..=u64::from(t.posts)).contains(&floor).then(|| format!("{}/{floor}", f.thread_path(t, 1)))
        })
    }

    fn md_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(16 * 1024);
        head(&mut out, f, f.kind.name(), &[]);
        out.push_str("<div data-widget-area=\"header\"><div class=\"alert alert-info\">欢迎来到");
        esc(&mut out, f.kind.name());
        out.push_str("！提问前请先搜索，发帖请遵守社区规范。</div></div>\n<h1 class=\"categories-title\">版块</h1>\n<ul class=\"categories\" itemscope itemtype=\"http://www.schema.org/ItemList\">\n");
        for b in &f.boards {
            let path = f.board_path(b, 1);
            let posts = f.board_posts(b);
            let _ = write!(
                out,
                "<li component=\"categories/category\" data-cid=\"{id}\" class=\"row clearfix category-{id}\">\n<meta itemprop=\"name\" content=\"",
                id = b.id
            );
            esc(&mut out, &b.title);
            out.push_str("\">\n<div class=\"content col-xs-12 col-md-7 col-sm-12\">\n<div class=\"icon pull-left\"><i class=\"fa fa-fw fa-comments-o\"></i></div>\n<h2 class=\"title\"><a href=\"");
            href(&mut out, &path);
            out.push_str("\" itemprop=\"url\">");
            esc(&mut out, &b.title);
            out.push_str("</a></h2>\n<div class=\"description\">");
            esc(&mut out, &b.title);
            out.push_str("相关的讨论</div>\n</div>\n<div class=\"col-md-1 hidden-sm hidden-xs stats\">");
            number(&mut out, b.order.len() as u32);
            out.push_str("<br /><small>主题</small></div>\n<div class=\"col-md-1 hidden-sm hidden-xs stats\">");
            number(&mut out, posts);
            out.push_str("<br /><small>帖子</small></div>\n<div class=\"col-md-3 col-sm-3 teaser hidden-xs\" component=\"topic/teaser\">");
            if let Some(t) = f.board_newest(b) {
                let (last, uid) = self.author(f, t, t.posts);
                out.push_str("<div class=\"card\"><p><a href=\"");
                href(&mut out, &user_path(&last));
                out.push_str("\">");
                avatar(&mut out, &last, uid, "xs");
                out.push_str("</a> <a class=\"permalink\" href=\"");
                href(&mut out, &format!("{}/{}", f.thread_path(t, 1), t.posts));
                out.push_str("\">");
                timeago(&mut out, t.last_post);
                out.push_str("</a></p><div class=\"post-content\">");
                esc(&mut out, &t.title);
                out.push_str("</div></div>");
            }
            out.push_str("</div>\n</li>\n");
        }
        out.push_str("</ul>\n");
        foot(&mut out, f);
        out
    }

    pub(super) fn md_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        self.md_list_sorted(f, b, page, ListSort::RecentlyReplied, false)
    }

    /// Page `page` of category `b` in order `sort`; `named` when the URL
    /// names the sort (its pager keeps it).
    fn md_list_sorted(&self, f: &ForumModel, b: &BoardMeta, page: usize, sort: ListSort, named: bool) -> String {
        let size = f.kind.list_page_size();
        let pages = f.list_pages(b);
        let order: Cow<[u32]> = match sort {
            ListSort::RecentlyReplied => Cow::Borrowed(&b.order),
            _ => {
                let key = |i: &u32| {
                    let t = &f.threads[*i as usize];
                    match sort {
                        ListSort::RecentlyCreated => (t.tid, 0),
                        ListSort::MostPosts => (u64::from(t.posts), t.tid),
                        _ => (u64::from(t.views), t.tid),
                    }
                };
                let mut order = b.order.clone();
                order.sort_by_key(|i| std::cmp::Reverse(key(i)));
                Cow::Owned(order)
            }
        };
        let first = f.board_path(b, 1);
        let query = |k: usize| if named { format!("sort={}&page={k}", sort.name()) } else { format!("page={k}") };
        let rels = page_rels(&first, page, pages, &query);
        let mut out = String::with_capacity(48 * 1024);
        head(&mut out, f, &format!("{} | {}", b.title, f.kind.name()), &rels);
        crumbs(&mut out, &[(None, b.title.as_str())]);
        let _ = write!(out, "<div class=\"category\" data-cid=\"{}\">\n<h1 class=\"category-title\">", b.id);
        esc(&mut out, &b.title);
        out.push_str("</h1>\n<div class=\"category-tools clearfix\">\n<a href=\"/md/compose\" component=\"category/post\" class=\"btn btn-primary\" rel=\"nofollow\">发表主题</a>\n\
<div component=\"thread/sort\" class=\"btn-group\">\n<button class=\"btn btn-default dropdown-toggle\" data-toggle=\"dropdown\" type=\"button\">排序 <span class=\"caret\"></span></button>\n<ul class=\"dropdown-menu\">\n");
        for s in ListSort::ALL {
            let _ = writeln!(
                out,
                "<li><a href=\"?sort={n}\" data-sort=\"{n}\"><i class=\"fa fa-fw{}\"></i> {}</a></li>",
                if s == sort { " fa-check" } else { "" },
                s.label(),
                n = s.name()
            );
        }
        let _ = write!(
            out,
            "</ul>\n</div>\n</div>\n<ul component=\"category\" class=\"topic-list\" itemscope itemtype=\"http://www.schema.org/ItemList\" data-nextstart=\"{}\" data-set=\"cid:{}:tids\">\n",
            page * size,
            b.id
        );
        for (n, &i) in order.iter().enumerate().skip((page - 1) * size).take(size) {
            self.md_topic_row(&mut out, f, &f.threads[i as usize], n);
        }
        if order.is_empty() {
            out.push_str("<li class=\"alert alert-warning\">此版块还没有任何主题。</li>\n");
        }
        out.push_str("</ul>\n");
        pager(&mut out, page, pages, query);
        out.push_str("</div>\n");
        foot(&mut out, f);
        out
    }

    /// One topic in a list (categories, tags, recent, popular) at `index`.
    fn md_topic_row(&self, out: &mut String, f: &ForumModel, t: &ThreadMeta, index: usize) {
        let b = &f.boards[t.board as usize];
        let path = f.thread_path(t, 1);
        let (author, uid) = self.author(f, t, 1);
        let (last, last_uid) = self.author(f, t, t.posts);
        let created = self.post_times(f, t)[0];
        let votes = rng(&[self.config().seed, f.kind.code(), t.tid, 0x707E]).u32(0..4) * (t.posts / 8);
        let _ = write!(
            out,
            "<li component=\"category/topic\" class=\"category-item clearfix\" data-tid=\"{tid}\" data-index=\"{index}\" data-cid=\"{cid}\" itemprop=\"itemListElement\" itemscope itemtype=\"https://schema.org/ItemList\">\n<meta itemprop=\"name\" content=\"",
            tid = t.tid,
            cid = b.id
        );
        esc(out, &t.title);
        let _ = write!(
            out,
            "\">\n<meta itemprop=\"position\" content=\"{}\">\n<a id=\"{index}\" data-index=\"{index}\" component=\"topic/anchor\"></a>\n<div class=\"col-md-6 col-sm-9 col-10 content\">\n<div class=\"avatar pull-left\"><a href=\"",
            index + 1
        );
        href(out, &user_path(&author));
        out.push_str("\" class=\"pull-left\">");
        avatar(out, &author, uid, "sm");
        out.push_str("</a></div>\n<h2 component=\"topic/header\" class=\"title\">\n<a href=\"");
        href(out, &path);
        out.push_str("\" itemprop=\"url\">");
        esc(out, &t.title);
        out.push_str("</a><br />\n<small><a href=\"");
        href(out, &f.board_path(b, 1));
        out.push_str("\">");
        esc(out, &b.title);
        out.push_str("</a> &bull; ");
        timeago(out, created);
        out.push(' ');
        tag_links(out, &tags_of(self.config().seed, t));
        out.push_str("</small>\n</h2>\n</div>\n<div class=\"mobile-stat col-2 visible-xs text-right\"><span class=\"human-readable-number\">");
        let _ = write!(out, "{}</span> <a href=\"", t.posts);
        href(out, &format!("{path}/{}", t.posts));
        out.push_str("\"><i class=\"fa fa-arrow-circle-right\"></i></a></div>\n<div class=\"col-md-1 hidden-sm hidden-xs stats stats-votes\">");
        number(out, votes);
        out.push_str("<br /><small>赞</small></div>\n<div class=\"col-md-1 hidden-sm hidden-xs stats stats-replies\">");
        number(out, t.posts - 1);
        out.push_str("<br /><small>回复</small></div>\n<div class=\"col-md-1 hidden-sm hidden-xs stats stats-viewcount\">");
        number(out, t.views);
        out.push_str(
            "<br /><small>浏览</small></div>\n<div class=\"col-md-3 col-sm-3 teaser hidden-xs\" component=\"topic/teaser\">\n<div class=\"card\"><p><a href=\"",
        );
        href(out, &user_path(&last));
        out.push_str("\">");
        avatar(out, &last, last_uid, "xs");
        out.push_str("</a> <a class=\"permalink\" href=\"");
        href(out, &format!("{path}/{}", t.posts));
        out.push_str("\">");
        timeago(out, t.last_post);
        out.push_str("</a></p></div>\n</div>\n</li>\n");
    }

    pub(super) fn md_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        self.md_thread_sorted(f, t, page, PostSort::OldestToNewest, false)
    }

    /// Page `page` of topic `t` with its posts in order `sort`; `named` when
    /// the URL names the sort (its pager keeps it).
    fn md_thread_sorted(&self, f: &ForumModel, t: &ThreadMeta, page: usize, sort: PostSort, named: bool) -> String {
        let size = f.kind.thread_page_size();
        let b = &f.boards[t.board as usize];
        let pages = f.thread_pages(t);
        let posts: Vec<Post> = match sort {
            PostSort::OldestToNewest => self.thread_page(f, t, page).2,
            PostSort::NewestToOldest => {
                // The first post stays on top; the replies newest first.
                let floors: Vec<u32> = std::iter::once(1).chain((2..=t.posts).rev()).skip((page - 1) * size).take(size).collect();
                let all = self.posts(f, t, 1..=t.posts);
                floors.iter().map(|&fl| all[fl as usize - 1].clone()).collect()
            }
        };
        let first = f.thread_path(t, 1);
        let query = |k: usize| if named { format!("sort=newest_to_oldest&page={k}") } else { format!("page={k}") };
        let mut rels: Vec<(&str, String)> = vec![("up", f.board_path(b, 1))];
        rels.extend(page_rels(&first, page, pages, &query));
        let mut out = String::with_capacity(48 * 1024);
        head(&mut out, f, &format!("{} | {}", t.title, f.kind.name()), &rels);
        let board_path = f.board_path(b, 1);
        crumbs(&mut out, &[(Some(board_path.clone()), b.title.as_str()), (None, t.title.as_str())]);
        out.push_str("<div data-widget-area=\"header\"></div>\n<div class=\"row\">\n<div class=\"topic col-lg-12\">\n<div class=\"topic-header\">\n<h1 component=\"post/header\" class=\"\" itemprop=\"name\"><span class=\"topic-title\" component=\"topic/title\">");
        esc(&mut out, &t.title);
        out.push_str("</span></h1>\n<div class=\"topic-info clearfix\">\n<div class=\"category-item inline-block\"><a href=\"");
        href(&mut out, &board_path);
        out.push_str("\">");
        esc(&mut out, &b.title);
        out.push_str("</a></div>\n<div class=\"tags inline-block\">");
        tag_links(&mut out, &tags_of(self.config().seed, t));
        out.push_str("</div>\n<div class=\"stats text-muted\"><i class=\"fa fa-fw fa-pencil\" title=\"帖子\"></i>");
        number(&mut out, t.posts);
        out.push_str("</div>\n<div class=\"stats text-muted\"><i class=\"fa fa-fw fa-eye\" title=\"浏览\"></i>");
        number(&mut out, t.views);
        out.push_str("</div>\n<div component=\"topic/sort\" class=\"btn-group bottom-sheet hidden-xs\">\n<button class=\"btn btn-sm btn-default dropdown-toggle\" data-toggle=\"dropdown\" type=\"button\"><i class=\"fa fa-fw fa-sort\"></i> 排序</button>\n<ul class=\"dropdown-menu dropdown-menu-right\">\n");
        for (name, label, this) in [("oldest_to_newest", "从旧到新", PostSort::OldestToNewest), ("newest_to_oldest", "从新到旧", PostSort::NewestToOldest)]
        {
            let _ = writeln!(
                out,
                "<li><a class=\"dropdown-item\" href=\"?sort={name}\" data-sort=\"{name}\"><i class=\"fa fa-fw{}\"></i> {label}</a></li>",
                if this == sort { " fa-check" } else { "" }
            );
        }
        let _ = write!(out, "</ul>\n</div>\n</div>\n</div>\n<ul component=\"topic\" class=\"posts timeline\" data-tid=\"{}\" data-cid=\"{}\">\n", t.tid, b.id);
        for p in &posts {
            self.md_post(&mut out, f, t, p, &first);
        }
        out.push_str("</ul>\n");
        pager(&mut out, page, pages, query);
        out.push_str("<div component=\"topic/quickreply/container\" class=\"clearfix quick-reply\"><p>请<a href=\"/md/login\">登录</a>后回复。</p></div>\n</div>\n</div>\n");
        foot(&mut out, f);
        out
    }

    fn md_votes(&self, f: &ForumModel, t: &ThreadMeta, p: &Post) -> u32 {
        rng(&[self.config().seed, f.kind.code(), t.tid, u64::from(p.floor), 0x707E]).u32(0..3)
    }

    /// The earlier post on the same page that `p` quotes, if it quotes one
    /// (a sixth of replies that have one before them on their page).
    fn md_quoted(&self, f: &ForumModel, t: &ThreadMeta, p: &Post) -> Option<Post> {
        let size = f.kind.thread_page_size() as u32;
        let page_first = (p.floor - 1) / size * size + 1;
        let mut r = rng(&[self.config().seed, f.kind.code(), t.tid, u64::from(p.floor), 0x9D_B0D7]);
        if p.floor == page_first || r.u32(0..6) != 0 {
            return None;
        }
        let q = r.u32(page_first..p.floor);
        self.posts(f, t, q..=q).pop()
    }

    /// What the NodeBB topic pages show of thread `t` beyond v1's fields,
    /// into its truth: the category, the view count, and per post its pid,
    /// the author's uid and page, the votes, and the quote, which the line
    /// before it names (the quoted post and its author; that line is
    /// neither the reply's words nor the quote's).
    pub(crate) fn md_truth(&self, f: &ForumModel, t: &ThreadMeta, truth: &mut crate::model::ThreadTruth) {
        truth.board_name = Some(f.boards[t.board as usize].title.clone());
        truth.views = Some(u64::from(t.views));
        let posts = if t.deleted { Vec::new() } else { self.posts(f, t, 1..=t.posts) };
        for (want, p) in truth.posts.iter_mut().zip(&posts) {
            want.id = Some(p.pid.to_string());
            want.author_id = Some(p.uid.to_string());
            want.author_path = Some(user_path(&p.author));
            want.likes = Some(u64::from(self.md_votes(f, t, p)));
            if let Some(q) = self.md_quoted(f, t, p) {
                want.reply_to = Some(q.pid.to_string());
                let (of, author) = (Some(q.pid.to_string()), Some(q.author.clone()));
                want.quotes = vec![crate::model::QuoteTruth { floor: p.floor, of, author, text: q.paragraphs.join("\n") }];
            }
        }
    }

    fn md_post(&self, out: &mut String, f: &ForumModel, t: &ThreadMeta, p: &Post, topic: &str) {
        let index = p.floor - 1;
        let user = user_path(&p.author);
        let _ = write!(
            out,
            "<li component=\"post\" class=\"{}\" data-index=\"{index}\" data-pid=\"{}\" data-uid=\"{}\" data-username=\"",
            if index == 0 { "topic-owner-post" } else { "" },
            p.pid,
            p.uid
        );
        esc(out, &p.author);
        out.push_str("\" data-userslug=\"");
        esc(out, user.trim_start_matches("/md/user/"));
        let _ = write!(
            out,
            "\" itemscope itemtype=\"http://schema.org/Comment\">\n<a component=\"post/anchor\" data-index=\"{index}\" id=\"{}\"></a>\n<div class=\"clearfix post-header\">\n<div class=\"icon pull-left\"><a href=\"",
            p.floor
        );
        href(out, &user);
        out.push_str("\">");
        avatar(out, &p.author, p.uid, "sm");
        out.push_str("</a></div>\n<small class=\"pull-left\">\n<strong><a href=\"");
        href(out, &user);
        out.push_str("\" itemprop=\"author\" data-username=\"");
        esc(out, &p.author);
        let _ = write!(out, "\" data-uid=\"{}\">", p.uid);
        esc(out, &p.author);
        out.push_str("</a></strong>\n");
        if p.uid % 11 == 3 {
            out.push_str("<span class=\"label group-label inline-block\" style=\"background-color: #000000;\">版主</span>\n");
        }
        out.push_str(
            "<span class=\"visible-xs-inline-block visible-sm-inline-block visible-md-inline-block visible-lg-inline-block\">\n<a class=\"permalink\" href=\"",
        );
        href(out, &format!("{topic}/{}", p.floor));
        out.push_str("\">");
        timeago(out, p.time);
        let _ = write!(out, "</a>\n<a href=\"/md/post/{}\" class=\"post-index text-muted\">#{}</a>\n</span>\n</small>\n</div>\n<br />\n", p.pid, p.floor);
        out.push_str("<div class=\"content\" component=\"post/content\" itemprop=\"text\">\n");
        if let Some(q) = self.md_quoted(f, t, p) {
            // What NodeBB's quote button writes (`@name said in [topic](/post/pid):`
            // then `> ` lines), rendered: a mention and a link to the quoted
            // post, then a Markdown blockquote of its words.
            let _ = write!(out, "<p>{}</p>\n<blockquote>\n", said_line(&q, &t.title));
            for para in &q.paragraphs {
                out.push_str("<p>");
                esc(out, para);
                out.push_str("</p>\n");
            }
            out.push_str("</blockquote>\n");
        }
        for para in &p.paragraphs {
            out.push_str("<p>");
            esc(out, para);
            out.push_str("</p>\n");
        }
        out.push_str("</div>\n<div class=\"post-footer\">\n");
        let votes = self.md_votes(f, t, p);
        let _ = writeln!(
            out,
            "<small class=\"pull-right\"><span class=\"votes\"><a component=\"post/upvote\" href=\"#\"><i class=\"fa fa-chevron-up\"></i></a> <span component=\"post/vote-count\" data-votes=\"{votes}\">{votes}</span></span></small>"
        );
        if p.uid % 5 == 1 {
            const SIGNS: [&str; 3] = ["Talk is cheap. Show me the code.", "开源改变世界", "RTFM"];
            let _ =
                writeln!(out, "<div component=\"post/signature\" data-uid=\"{}\" class=\"post-signature\">{}</div>", p.uid, SIGNS[(p.uid / 5 % 3) as usize]);
        }
        out.push_str("</div>\n</li>\n");
    }

    /// A page of topics that is not a category's (tags, recent, popular).
    fn md_topic_page(&self, f: &ForumModel, title: &str, intro: &str, tabs: &str, topics: &[&ThreadMeta]) -> String {
        let mut out = String::with_capacity(48 * 1024);
        head(&mut out, f, &format!("{title} | {}", f.kind.name()), &[]);
        crumbs(&mut out, &[(None, title)]);
        out.push_str("<h1 class=\"page-title\">");
        esc(&mut out, title);
        out.push_str("</h1>\n<p class=\"page-intro\">");
        out.push_str(intro);
        out.push_str("</p>\n");
        out.push_str(tabs);
        out.push_str("<ul component=\"category\" class=\"topic-list\" itemscope itemtype=\"http://www.schema.org/ItemList\">\n");
        for (n, t) in topics.iter().enumerate() {
            self.md_topic_row(&mut out, f, t, n);
        }
        if topics.is_empty() {
            out.push_str("<li class=\"alert alert-warning\">没有主题。</li>\n");
        }
        out.push_str("</ul>\n");
        foot(&mut out, f);
        out
    }

    fn md_tag(&self, f: &ForumModel, tag: &str) -> String {
        let seed = self.config().seed;
        let size = f.kind.list_page_size();
        let topics: Vec<&ThreadMeta> = f.threads.iter().rev().filter(|t| tags_of(seed, t).contains(&tag)).take(size).collect();
        let mut intro = String::new();
        esc(&mut intro, &format!("标记为 “{tag}” 的主题"));
        self.md_topic_page(f, &format!("标签：{tag}"), &intro, "", &topics)
    }

    fn md_recent(&self, f: &ForumModel) -> String {
        let size = f.kind.list_page_size();
        // Each category is newest first already: its first page is all the merge needs.
        let mut topics: Vec<&ThreadMeta> = f.boards.iter().flat_map(|b| b.order.iter().take(size)).map(|&i| &f.threads[i as usize]).collect();
        topics.sort_by_key(|t| std::cmp::Reverse((t.last_post, t.tid)));
        topics.truncate(size);
        self.md_topic_page(f, "最新主题", "所有版块最近有回复的主题", "", &topics)
    }

    fn md_popular(&self, f: &ForumModel, term: &str) -> String {
        let days: Option<u32> = match term {
            "daily" => Some(1),
            "weekly" => Some(7),
            "monthly" => Some(30),
            _ => None,
        };
        let newest = f.threads.iter().map(|t| t.last_post).max().unwrap_or(0);
        let mut topics: Vec<&ThreadMeta> = f.threads.iter().filter(|t| days.is_none_or(|d| t.last_post + d * 1440 >= newest)).collect();
        topics.sort_by_key(|t| std::cmp::Reverse((t.posts, t.views, t.tid)));
        topics.truncate(f.kind.list_page_size());
        let mut tabs = String::from("<ul class=\"nav nav-pills\">");
        for (name, label) in [("daily", "今日"), ("weekly", "本周"), ("monthly", "本月"), ("alltime", "全部")] {
            let _ = write!(tabs, "<li{}><a href=\"/md/popular?term={name}\">{label}</a></li>", if name == term { " class=\"active\"" } else { "" });
        }
        tabs.push_str("</ul>\n");
        self.md_topic_page(f, "热门主题", "回复最多的主题", &tabs, &topics)
    }

    fn md_user(&self, f: &ForumModel, name: &str) -> String {
        let h = crate::text::hash_str(name);
        let uid = 1000 + h % 900_000;
        let joined = f.threads.iter().map(|t| t.last_post).min().unwrap_or(0).saturating_sub((h % 900) as u32 * 1440);
        let mut out = String::with_capacity(8 * 1024);
        head(&mut out, f, &format!("{name} | {}", f.kind.name()), &[]);
        crumbs(&mut out, &[(None, name)]);
        let _ =
            write!(out, "<div class=\"account\" data-uid=\"{uid}\">\n<div class=\"cover\" component=\"account/cover\"></div>\n<div class=\"profile row\">\n");
        avatar(&mut out, name, uid, "xl");
        out.push_str("\n<h1 class=\"fullname\">");
        esc(&mut out, name);
        out.push_str("</h1>\n<h2 class=\"username\">@");
        esc(&mut out, name);
        out.push_str("</h2>\n<div class=\"account-stats\">\n<div class=\"stat\"><div>");
        number(&mut out, (h % 3000) as u32);
        out.push_str("</div><span class=\"stat-label\">帖子</span></div>\n<div class=\"stat\"><div>");
        number(&mut out, (h / 7 % 500) as u32);
        out.push_str("</div><span class=\"stat-label\">声望</span></div>\n</div>\n<div class=\"profile-meta\"><span class=\"stat-label\">注册</span> ");
        timeago(&mut out, joined);
        out.push_str("</div>\n</div>\n</div>\n");
        foot(&mut out, f);
        out
    }
}
