//! A PHPWind/NexusPHP-style forum (site id `nx`, served only when a config
//! names it), in UTF-8 declared only in the HTTP header.
//!
//! | page | URL (under `/nx/`) |
//! |------|--------------------|
//! | home | `index.php`; one category of boards `index.php?cateid=N` |
//! | board list | `thread.php?fid={fid}`, later pages `thread.php?fid={fid}&page={n}` (the pager links page 1 as `&page=1` too); sorted or filtered: `&orderway=postdate&asc=DESC`, `&search=digest` |
//! | thread link on a list | `read.php?tid={tid}&fpage={listpage}` (`fpage` absent on a board's first list page) |
//! | thread page | `read.php?tid={tid}&page={page}` (and `read.php?tid={tid}` for page 1); `&page=e` is the last page |
//! | lookalikes | "只看该作者" `read.php?tid=T&uid=U` (that author's posts, paged), reply and quote forms `post.php?…` (a login notice), floor links `job.php?…` and users `u.php?uid=N` (robots.txt disallows those three) |
//!
//! Pagers have numbered links and a `rel="next"` one. Posts are nested
//! divs: `<div class="floor">` holding `<div class="floor-head">` (the
//! author `<a class="user">`, `<span class="floor-no">` with 楼主 or `#3`,
//! `<time datetime="…+08:00">2024年3月5日 12:34</time>`) and `<div
//! class="floor-body"><div class="tpc_content">` (the body: `<br />`
//! between paragraphs, entities, runs of spaces as `&nbsp; `, raw emoji;
//! some open with a quote of an earlier floor in `<div class="quote">` or
//! end with an edit note in `<span class="edit-note">`, neither the post's
//! text).

use std::borrow::Cow;
use std::fmt::Write as _;

use super::{esc, href, link, pager_parts, PagerPart, Query, Routed, Shown};
use crate::model::{BoardMeta, Fixture, ForumModel, Post, ThreadMeta};
use crate::text::{civil, esc_into, rng};

/// What a stock PHPWind robots.txt keeps crawlers out of, under `/nx/`.
pub(super) const ROBOTS_TXT: &str = "Disallow: /nx/admin.php\n\
Disallow: /nx/post.php\n\
Disallow: /nx/u.php\n\
Disallow: /nx/job.php\n\
Disallow: /nx/search.php\n\
Disallow: /nx/login.php\n\
Disallow: /nx/register.php\n";

/// How a board list is sorted or filtered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// Newest last post first: the board's own pages.
    LastPost,
    /// `orderway=postdate&asc=DESC`: newest thread first.
    PostDate,
    /// `search=digest`: no thread here is a digest.
    Digest,
}

impl Sort {
    fn query(self) -> &'static str {
        match self {
            Sort::LastPost => "",
            Sort::PostDate => "&orderway=postdate&asc=DESC",
            Sort::Digest => "&search=digest",
        }
    }
}

/// The categories the home page groups boards in: (cateid, name, boards).
fn categories(f: &ForumModel) -> Vec<(u32, &'static str, std::ops::Range<usize>)> {
    let n = f.boards.len();
    if n <= 2 {
        return vec![(1, "技术与资源", 0..n)];
    }
    let half = n.div_ceil(2);
    vec![(1, "技术与资源", 0..half), (2, "生活与休闲", half..n)]
}

fn category_of(f: &ForumModel, b: &BoardMeta) -> (u32, &'static str) {
    let j = f.boards.iter().position(|x| x.id == b.id).unwrap_or(0);
    categories(f).into_iter().find(|(_, _, r)| r.contains(&j)).map_or((1, "技术与资源"), |(c, name, _)| (c, name))
}

fn head(out: &mut String, f: &ForumModel, title: &str) {
    // UTF-8, said only in the Content-Type header: no meta, no BOM.
    out.push_str("<!doctype html>\n<html lang=\"zh-CN\">\n<head>\n<title>");
    esc(out, title);
    out.push_str(
        "</title>\n<meta name=\"generator\" content=\"phpwind 8.7\" />\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n\
<link rel=\"stylesheet\" href=\"images/wind/style.css?20240601\" />\n<script src=\"js/core.js?20240601\"></script>\n</head>\n<body>\n\
<div id=\"top\"><div class=\"wrap\"><a href=\"index.php\" class=\"logo\" title=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\">");
    esc(out, f.kind.name());
    out.push_str(
        "</a>\n<ul class=\"top-nav\"><li class=\"current\"><a href=\"index.php\">论坛</a></li><li><a href=\"search.php\" rel=\"nofollow\">搜索</a></li></ul>\n\
<div class=\"login-bar\"><a href=\"login.php\" rel=\"nofollow\">登录</a> | <a href=\"register.php\" rel=\"nofollow\">注册</a></div></div></div>\n<div id=\"main\" class=\"wrap\">\n",
    );
}

fn foot(out: &mut String, f: &ForumModel) {
    out.push_str("</div>\n<div id=\"footer\" class=\"wrap\"><p><a href=\"index.php\">");
    esc(out, f.kind.name());
    out.push_str("</a> · <a href=\"mailto:admin@example.invalid\">联系我们</a></p><p>Powered by <a href=\"http://www.phpwind.invalid/\" target=\"_blank\" rel=\"nofollow\">phpwind v8.7</a> &copy; 2003-2024</p></div>\n</body>\n</html>\n");
}

fn crumbs(out: &mut String, f: &ForumModel, b: Option<(&BoardMeta, usize)>, t: Option<&ThreadMeta>) {
    out.push_str("<div class=\"crumbs\"><a href=\"index.php\" class=\"home\">");
    esc(out, f.kind.name());
    out.push_str("</a>");
    if let Some((b, list_page)) = b {
        let (cid, cname) = category_of(f, b);
        let _ = write!(out, " &raquo; <a href=\"index.php?cateid={cid}\">{cname}</a> &raquo; <a href=\"");
        let mut to = format!("thread.php?fid={}", b.id);
        if list_page > 1 {
            let _ = write!(to, "&page={list_page}");
        }
        href(out, &to);
        out.push_str("\">");
        esc(out, &b.title);
        out.push_str("</a>");
    }
    if let Some(t) = t {
        out.push_str(" &raquo; <span class=\"crumbs-current\">");
        esc(out, &t.title);
        out.push_str("</span>");
    }
    out.push_str("</div>\n");
}

/// The pager: a count, numbers, the current page in bold, `rel="prev"` and
/// `rel="next"` links, a box to jump by number.
fn pager(out: &mut String, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    if pages <= 1 {
        return;
    }
    let _ = write!(out, "<div class=\"pages\"><span class=\"pages-total\">共 {pages} 页</span> ");
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => link(out, "<a href=\"", &url(k), "\" class=\"pages-prev\" rel=\"prev\">&lsaquo; 上一页</a> "),
            First => link(out, "<a href=\"", &url(1), "\">1</a> <span class=\"pages-gap\">…</span> "),
            Current(k) => {
                let _ = write!(out, "<b class=\"pages-current\">{k}</b> ");
            }
            Number(k) => link(out, "<a href=\"", &url(k), &format!("\">{k}</a> ")),
            Last(k) => link(out, "<span class=\"pages-gap\">…</span> <a href=\"", &url(k), &format!("\">{k}</a> ")),
            Next(k) => link(out, "<a href=\"", &url(k), "\" class=\"pages-next\" rel=\"next\">下一页 &rsaquo;</a> "),
        }
    }
    // The jump box builds its URL in script: the page number goes last.
    let base = url(1);
    let prefix = base.strip_suffix("=1").unwrap_or(&base);
    out.push_str("<input type=\"text\" class=\"pages-jump\" size=\"3\" onkeydown=\"if(event.keyCode==13){location='");
    esc_into(out, prefix);
    out.push_str("='+this.value;return false;}\" /></div>\n");
}

fn notice(f: &ForumModel, title: &str, text: &str) -> String {
    let mut out = String::with_capacity(2048);
    head(&mut out, f, &format!("{title} - {}", f.kind.name()));
    out.push_str("<div class=\"tips-error\"><h2>");
    esc(&mut out, title);
    out.push_str("</h2><p>");
    out.push_str(text);
    out.push_str("</p><p><a href=\"javascript:history.go(-1);\">返回继续操作</a></p></div>\n");
    foot(&mut out, f);
    out
}

pub(super) fn gone(f: &ForumModel) -> String {
    notice(f, "提示信息", "该帖子不存在，或已被删除！")
}

/// `page` as the forum reads it: a number, or `e` for the last page.
enum PageArg {
    Number(usize),
    Last,
}

fn page_arg(q: &Query) -> Option<PageArg> {
    match q.get("page") {
        Some("e") => Some(PageArg::Last),
        _ => q.number("page", 1).map(PageArg::Number),
    }
}

fn digits(s: Option<&str>) -> Option<u64> {
    s.filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).and_then(|v| v.parse().ok())
}

/// `text` escaped, runs of spaces written `&nbsp; ` as the forum's editor saves them.
fn esc_spaces(out: &mut String, text: &str) {
    let mut e = String::with_capacity(text.len() + 8);
    esc_into(&mut e, text);
    out.push_str(&e.replace("  ", "&nbsp; "));
}

impl Fixture {
    pub(super) fn route_nx(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        match rest {
            "index.php" if q.is_empty() => Routed::Page(self.nx_home(f, None), Shown::Home),
            "index.php" if q.only(&["cateid"]) => match digits(q.get("cateid")) {
                Some(c) if categories(f).iter().any(|(cid, _, _)| u64::from(*cid) == c) => Routed::Page(self.nx_home(f, Some(c as u32)), Shown::Home),
                _ => Routed::NotFound,
            },
            "thread.php" if q.only(&["fid", "page", "search", "orderway", "asc"]) => {
                if self.crafted(q.get("fid")) {
                    return self.decoy_list(f);
                }
                let sort = match (q.get("search"), q.get("orderway"), q.get("asc")) {
                    (None, None, None) => Sort::LastPost,
                    (None, Some("postdate"), Some("DESC")) => Sort::PostDate,
                    (Some("digest"), None, None) => Sort::Digest,
                    _ => return Routed::NotFound,
                };
                match (q.get("fid").and_then(|id| f.board(id)), q.number("page", 1)) {
                    (Some(b), Some(p)) if p == 1 || (sort != Sort::Digest && (1..=f.list_pages(b)).contains(&p)) => {
                        Routed::Page(self.nx_list_sorted(f, b, p, sort), Shown::List)
                    }
                    _ => Routed::NotFound,
                }
            }
            "read.php" if q.only(&["tid", "fpage", "page", "uid"]) => {
                if self.crafted(q.get("tid")) {
                    return self.decoy_thread(f);
                }
                let Some(t) = digits(q.get("tid")).and_then(|id| f.thread(id)) else { return Routed::NotFound };
                let (Some(fpage), Some(page)) = (q.number("fpage", 1), page_arg(q)) else { return Routed::NotFound };
                if t.deleted {
                    return Routed::Gone(gone(f));
                }
                match q.get("uid") {
                    None => {
                        let page = match page {
                            PageArg::Last => f.thread_pages(t),
                            PageArg::Number(p) => p,
                        };
                        if (1..=f.thread_pages(t)).contains(&page) {
                            Routed::Page(self.nx_thread(f, t, page, fpage.max(1)), Shown::Thread { tid: t.tid, page })
                        } else {
                            Routed::NotFound
                        }
                    }
                    Some(u) => {
                        let Some(uid) = digits(Some(u)) else { return Routed::NotFound };
                        let pages = self.author_pages(f, t, uid);
                        let page = match page {
                            PageArg::Last => pages.len(),
                            PageArg::Number(p) => p,
                        };
                        let Some(shown) = page.checked_sub(1).and_then(|i| pages.get(i)) else { return Routed::NotFound };
                        Routed::Page(self.nx_thread_with(f, t, page, pages.len(), shown, fpage.max(1), Some(uid)), Shown::Other)
                    }
                }
            }
            "post.php" => Routed::Page(notice(f, "提示信息", "您还没有登录或注册，暂时不能使用此功能！<a href=\"login.php\">登录</a>"), Shown::Other),
            _ => Routed::NotFound,
        }
    }

    fn nx_home(&self, f: &ForumModel, only: Option<u32>) -> String {
        let mut out = String::with_capacity(8192);
        head(&mut out, f, &format!("{} - Powered by phpwind", f.kind.name()));
        crumbs(&mut out, f, None, None);
        out.push_str("<div class=\"notice\"><b>公告:</b> 欢迎来到");
        esc(&mut out, f.kind.name());
        out.push_str("，发帖前请先阅读版规，友善交流。</div>\n");
        for (cid, cname, range) in categories(f) {
            if only.is_some_and(|c| c != cid) {
                continue;
            }
            let _ = writeln!(out, "<div class=\"cate\" id=\"cate_{cid}\"><div class=\"cate-head\"><h2><a href=\"index.php?cateid={cid}\">{cname}</a></h2></div>\n<div class=\"forums\">");
            for b in &f.boards[range] {
                let posts = f.board_posts(b);
                let _ = write!(
                    out,
                    "<div class=\"forum-row\" id=\"fid_{id}\"><div class=\"forum-name\"><h3><a href=\"thread.php?fid={id}\" class=\"forum-link\">",
                    id = b.id
                );
                esc(&mut out, &b.title);
                out.push_str("</a></h3><p class=\"forum-desc\">");
                esc(&mut out, &b.title);
                let _ = write!(
                    out,
                    "版块，欢迎交流</p></div><div class=\"forum-stat\"><em>{}</em> 主题 / <em>{posts}</em> 帖子</div><div class=\"forum-last\">",
                    b.order.len()
                );
                if let Some(t) = f.board_newest(b) {
                    let (last, last_uid) = self.author(f, t, t.posts);
                    let c = civil(t.last_post);
                    let _ = write!(out, "<a href=\"read.php?tid={}&amp;page=e#a\" title=\"", t.tid);
                    esc(&mut out, &t.title);
                    out.push_str("\">");
                    esc(&mut out, &t.title.chars().take(12).collect::<String>());
                    let _ = write!(out, "</a><br /><a href=\"u.php?uid={last_uid}\" class=\"user\">");
                    esc(&mut out, &last);
                    let _ = write!(out, "</a> <time datetime=\"{}+08:00\">{}</time>", c.iso(), c.padded());
                }
                out.push_str("</div></div>\n");
            }
            out.push_str("</div></div>\n");
        }
        let online = f.threads.len() / 7 + 3;
        let _ = writeln!(out, "<div class=\"online\"><h3>在线用户</h3><p>共 {online} 人在线，最高记录 {} 人</p></div>", online * 4 + 11);
        foot(&mut out, f);
        out
    }

    pub(super) fn nx_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        self.nx_list_sorted(f, b, page, Sort::LastPost)
    }

    fn nx_list_sorted(&self, f: &ForumModel, b: &BoardMeta, page: usize, sort: Sort) -> String {
        let size = f.kind.list_page_size();
        let order: Cow<[u32]> = match sort {
            Sort::LastPost => Cow::Borrowed(&b.order),
            Sort::PostDate => {
                let mut keyed: Vec<(u32, u32)> = b.order.iter().map(|&i| (self.post_times(f, &f.threads[i as usize])[0], i)).collect();
                keyed.sort_by_key(|&(first, i)| std::cmp::Reverse((first, f.threads[i as usize].tid)));
                Cow::Owned(keyed.into_iter().map(|(_, i)| i).collect())
            }
            Sort::Digest => Cow::Owned(Vec::new()),
        };
        let pages = order.len().div_ceil(size).max(1);
        let mut out = String::with_capacity(24 * 1024);
        head(&mut out, f, &format!("{}|{} - Powered by phpwind", b.title, f.kind.name()));
        crumbs(&mut out, f, Some((b, 1)), None);
        let posts = f.board_posts(b);
        out.push_str("<div class=\"board-head\"><h1 class=\"board-title\">");
        esc(&mut out, &b.title);
        let _ = write!(
            out,
            "</h1><p class=\"board-info\">主题: <em>{}</em> · 帖子: <em>{posts}</em></p><a class=\"btn-post\" href=\"post.php?fid={fid}\" rel=\"nofollow\">发新帖</a></div>\n\
<div class=\"list-tabs\"><a href=\"thread.php?fid={fid}\"{}>全部</a> <a href=\"thread.php?fid={fid}&amp;search=digest\"{}>精华</a> \
<a href=\"thread.php?fid={fid}&amp;orderway=postdate&amp;asc=DESC\"{}>最新发表</a></div>\n",
            b.order.len(),
            if sort == Sort::LastPost { " class=\"current\"" } else { "" },
            if sort == Sort::Digest { " class=\"current\"" } else { "" },
            if sort == Sort::PostDate { " class=\"current\"" } else { "" },
            fid = b.id
        );
        let url = |k: usize| format!("thread.php?fid={}{}&page={k}", b.id, sort.query());
        pager(&mut out, page, pages, url);
        out.push_str("<ul class=\"thread-list\">\n");
        if order.is_empty() {
            out.push_str("<li class=\"thread-empty\">本版块暂无帖子</li>\n");
        }
        for (n, &i) in order.iter().skip((page - 1) * size).take(size).enumerate() {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first = civil(self.post_times(f, t)[0]);
            let last_at = civil(t.last_post);
            let _ =
                write!(out, "<li class=\"thread-item{}\" id=\"thread_{}\">\n<div class=\"subject\"><a href=\"", if n % 2 == 1 { " alt" } else { "" }, t.tid);
            href(&mut out, f.listed_thread_path(t, page).trim_start_matches("/nx/"));
            let _ = write!(out, "\" class=\"subject-link\" id=\"a_ajax_{}\">", t.tid);
            esc(&mut out, &t.title);
            out.push_str("</a>");
            let tpages = f.thread_pages(t);
            if tpages > 1 {
                out.push_str(" <span class=\"minipages\">[ ");
                for k in 2..=tpages.min(4) {
                    let _ = write!(out, "<a href=\"read.php?tid={}&amp;page={k}\">{k}</a> ", t.tid);
                }
                if tpages > 4 {
                    let _ = write!(out, "… <a href=\"read.php?tid={}&amp;page={tpages}\">{tpages}</a> ", t.tid);
                }
                out.push(']');
                out.push_str("</span>");
            }
            let _ = write!(out, "</div>\n<div class=\"author\"><a href=\"u.php?uid={uid}\" class=\"user\">");
            esc(&mut out, &author);
            let _ = write!(
                out,
                "</a> <time datetime=\"{}+08:00\">{}</time></div>\n<div class=\"stats\"><span class=\"replies\">{}</span>/<span class=\"hits\">{}</span></div>\n\
<div class=\"lastpost\"><a href=\"read.php?tid={}&amp;page=e#a\" title=\"跳到最后\"><time datetime=\"{}+08:00\">{}</time></a> by <a href=\"u.php?uid={last_uid}\" class=\"user\">",
                first.iso(),
                &first.padded()[..10],
                t.posts - 1,
                t.views,
                t.tid,
                last_at.iso(),
                last_at.padded()
            );
            esc(&mut out, &last);
            out.push_str("</a></div>\n</li>\n");
        }
        out.push_str("</ul>\n");
        pager(&mut out, page, pages, url);
        foot(&mut out, f);
        out
    }

    /// Page `page` of thread `t`, reached from list page `fpage`.
    pub(super) fn nx_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize, fpage: usize) -> String {
        let (_, pages, posts) = self.thread_page(f, t, page);
        self.nx_thread_with(f, t, page, pages, &posts, fpage, None)
    }

    /// A thread page showing `posts` as page `page` of `pages`; with
    /// `author`, the "只看该作者" view of that author's posts.
    #[allow(clippy::too_many_arguments)]
    fn nx_thread_with(&self, f: &ForumModel, t: &ThreadMeta, page: usize, pages: usize, posts: &[Post], fpage: usize, author: Option<u64>) -> String {
        let b = &f.boards[t.board as usize];
        let mut out = String::with_capacity(32 * 1024);
        head(&mut out, f, &format!("{}|{} - {} - Powered by phpwind", t.title, b.title, f.kind.name()));
        crumbs(&mut out, f, Some((b, fpage)), Some(t));
        out.push_str("<div class=\"read-head\">\n<h1 class=\"read_h1\" id=\"subject_tpc\">");
        esc(&mut out, &t.title);
        let (_, op) = self.author(f, t, 1);
        let _ = write!(
            out,
            "</h1>\n<p class=\"read-info\">查看: <em>{}</em> · 回复: <em>{}</em></p>\n<div class=\"read-tools\"><a href=\"post.php?action=reply&amp;fid={fid}&amp;tid={tid}\" class=\"btn-reply\" rel=\"nofollow\">回复</a> \
<a href=\"read.php?tid={tid}&amp;page=e#a\">最新回复</a> ",
            t.views,
            t.posts - 1,
            fid = b.id,
            tid = t.tid
        );
        match author {
            Some(_) => {
                let _ = write!(out, "<a href=\"read.php?tid={}\">查看全部</a>", t.tid);
            }
            None => {
                let _ = write!(out, "<a href=\"read.php?tid={}&amp;uid={op}\" rel=\"nofollow\">只看楼主</a>", t.tid);
            }
        }
        out.push_str("</div>\n</div>\n");
        let url = |k: usize| match author {
            Some(uid) => format!("read.php?tid={}&uid={uid}&page={k}", t.tid),
            None => format!("read.php?tid={}&page={k}", t.tid),
        };
        pager(&mut out, page, pages, url);
        out.push_str("<div class=\"floors\">\n");
        for p in posts {
            self.nx_floor(&mut out, f, t, p);
        }
        out.push_str("</div>\n");
        pager(&mut out, page, pages, url);
        out.push_str("<div class=\"quick-reply\"><p>您需要<a href=\"login.php\" rel=\"nofollow\">登录</a>后才可以回帖，没有帐号？<a href=\"register.php\" rel=\"nofollow\">注册</a></p></div>\n");
        foot(&mut out, f);
        out
    }

    fn nx_floor(&self, out: &mut String, f: &ForumModel, t: &ThreadMeta, p: &Post) {
        let pid = p.pid;
        let uid = p.uid;
        let fid = &f.boards[t.board as usize].id;
        let (name, content) = if p.floor == 1 { ("tpc".to_owned(), "read_tpc".to_owned()) } else { (format!("pid{pid}"), format!("read_{pid}")) };
        let anchor = if p.floor == t.posts { "a".to_owned() } else { pid.to_string() };
        let label = if p.floor == 1 { "楼主".to_owned() } else { format!("#{}", p.floor) };
        let c = civil(p.time);
        let _ = write!(
            out,
            "<div class=\"floor\" id=\"{name}\">\n<a name=\"{anchor}\"></a>\n<div class=\"floor-head\">\n\
<a href=\"u.php?uid={uid}\" class=\"avatar\"><img src=\"images/face/{}.jpg\" width=\"48\" height=\"48\" alt=\"\" /></a>\n<a href=\"u.php?uid={uid}\" class=\"user\">",
            uid % 24
        );
        esc(out, &p.author);
        let _ = write!(
            out,
            "</a>\n<span class=\"user-level\">{}</span>\n\
<span class=\"floor-no\"><a href=\"job.php?action=topost&amp;tid={tid}&amp;pid={pid}\" title=\"复制此楼地址\">{label}</a></span>\n\
<span class=\"post-time\">发表于 <time datetime=\"{}+08:00\">{}</time></span>\n\
<span class=\"floor-ops\"><a href=\"read.php?tid={tid}&amp;uid={uid}\" rel=\"nofollow\">只看该作者</a> \
<a href=\"post.php?action=quote&amp;fid={fid}&amp;tid={tid}&amp;pid={pid}\" rel=\"nofollow\">引用</a></span>\n</div>\n\
<div class=\"floor-body\">\n<div class=\"tpc_content\" id=\"{content}\">",
            ["新手上路", "侠客", "骑士", "圣骑士", "精灵王"][(uid % 5) as usize],
            c.iso(),
            c.chinese(),
            tid = t.tid
        );
        let mut r = rng(&[self.config().seed, f.kind.code(), t.tid, u64::from(p.floor), 0x4E_B0D7]);
        if p.floor > 1 && r.u32(0..6) == 0 {
            let q = r.u32(1..p.floor);
            if let Some(quoted) = self.posts(f, t, q..=q).pop() {
                let qlabel = if q == 1 { "楼主".to_owned() } else { format!("第{q}楼") };
                let _ = write!(out, "<div class=\"quote\"><h6 class=\"quote-head\">引用{qlabel} ");
                esc(out, &quoted.author);
                let _ = write!(out, " 于 {} 发表的：</h6><blockquote>", civil(quoted.time).padded());
                let text: String = quoted.paragraphs.join(" ");
                let cut: String = text.chars().take(50).collect();
                esc(out, &cut);
                if cut.len() < text.len() {
                    out.push_str("……");
                }
                out.push_str("</blockquote></div>");
            }
        }
        let bold = r.u32(0..12) == 0;
        for (i, para) in p.paragraphs.iter().enumerate() {
            if i > 0 {
                out.push_str("<br />");
            }
            if i == 0 && bold {
                out.push_str("<b>");
                esc_spaces(out, para);
                out.push_str("</b>");
            } else {
                esc_spaces(out, para);
            }
        }
        if r.u32(0..9) == 0 {
            let _ = write!(out, "<br /><br /><span class=\"edit-note\">[ 此帖被");
            esc(out, &p.author);
            let _ = write!(out, "在{}重新编辑 ]</span>", civil(p.time + r.u32(1..300)).padded());
        }
        out.push_str("</div>\n");
        if uid % 5 == 2 {
            const SIGNS: [&str; 3] = ["代码写得好，bug 少不了", "分享是一种美德", "潜水多年，偶尔冒泡"];
            let _ = writeln!(out, "<div class=\"signature\"><p>{}</p></div>", SIGNS[(uid / 5 % 3) as usize]);
        }
        out.push_str("</div>\n</div>\n");
    }
}
