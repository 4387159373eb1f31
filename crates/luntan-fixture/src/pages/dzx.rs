//! Discuz! X3.4 with URL rewriting on (site id `dzx`, served only when a
//! config names it): what a crawler meets on most big Chinese community
//! forums.
//!
//! | page | URL (under `/dzx/`) |
//! |------|---------------------|
//! | home | `forum.php`; a group of boards `forum.php?gid=N` |
//! | board list | `forum-{fid}-{page}.html` (page 1 is `-1.html`); sorted or filtered: `forum.php?mod=forumdisplay&fid=F&filter=…` |
//! | thread page | `thread-{tid}-{page}-{listpage}.html`: the last number is the list page the link was found on (1 in the thread's own pager and links); also `forum.php?mod=viewthread&tid=T[&page=P][&extra=page%3DN]` |
//! | lookalikes | "只看该作者" `forum.php?mod=viewthread&tid=T&page=1&authorid=U` (that author's posts only), print view `forum.php?mod=viewthread&action=printable&tid=T` (every post), redirects `forum.php?mod=redirect&goto=lastpost|findpost|nextoldset|nextnewset…` (302), reply and new-thread forms `forum.php?mod=post&…` (a login notice; robots.txt disallows them and the redirects) |
//!
//! Pages are GB18030 bytes labelled `gbk` in a `<meta>` (no charset in the
//! header). Posts are tables (`<table id="pid{pid}">`, the body in
//! `<td class="t_f" id="postmessage_{pid}">`), floors 楼主/沙发/板凳/地板 then
//! `N#`, authors links to `home.php?mod=space&uid=N`. Times follow Discuz!'s
//! `dgmdate(…, 'u')` against the forum's clock ([`now`]): within a week of
//! it they read "3&nbsp;天前", "昨天&nbsp;12:34", "5&nbsp;小时前" with the real
//! time only in a `title` attribute (`<span title="2024-6-28 12:34">`),
//! older ones `2024-3-5 12:34`. Some bodies open with an edit note
//! (`<i class="pstatus">本帖最后由 … 编辑</i>`) or quote an earlier floor
//! (`<div class="quote"><blockquote>…`); neither is the post's text. Every
//! post's time line shows an `IP属地：…`; some bodies link a pasted URL
//! (the last paragraph's words linked) or show an attachment's picture
//! (`<img class="zoom" file="data/attachment/…">`, `src` a placeholder).
//! The pictures are served (`image/jpeg`): one of a few, since people post
//! the same picture again; some are gone (404, the file deleted); some are
//! album pictures (`data/attachment/album/`), which robots.txt keeps
//! crawlers out of, as it does all of `data/` but the forum's attachments.
//! The thread's views and replies sit above the first post, its board in
//! the breadcrumb. [`Fixture::dzx_truth`] puts all of it in the truth.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::dz;
use super::{esc, href, Query, Routed, Shown};
use crate::model::{BoardMeta, Fixture, ForumModel, Post, ThreadMeta};
use crate::text::{civil, minutes_of, rng};

/// What stock Discuz! X's robots.txt keeps crawlers out of (its
/// redirects, forms, search and member pages), under `/dzx/`.
pub(super) const ROBOTS_TXT: &str = "Disallow: /dzx/api/\n\
Allow: /dzx/data/attachment/forum/\n\
Disallow: /dzx/data/\n\
Disallow: /dzx/source/\n\
Disallow: /dzx/static/\n\
Disallow: /dzx/uc_server/\n\
Disallow: /dzx/admin.php\n\
Disallow: /dzx/search.php\n\
Disallow: /dzx/member.php\n\
Disallow: /dzx/misc.php\n\
Disallow: /dzx/home.php\n\
Disallow: /dzx/forum.php?mod=redirect*\n\
Disallow: /dzx/forum.php?mod=post*\n\
Disallow: /dzx/*?mod=misc*\n\
Disallow: /dzx/*mobile=yes*\n";

/// The forum's clock: every page is rendered as if read at 2024-06-30
/// 23:10, so relative times are the same on every run.
pub(crate) fn now() -> u32 {
    minutes_of(2024, 6, 30, 23, 10)
}

/// A time as Discuz! X's `dgmdate($t, 'u')` writes it: relative within a
/// week of [`now`], the absolute time then only in the `title`.
pub(crate) fn shown_time(t: u32) -> String {
    let c = civil(t);
    let abs = c.discuz();
    let now = now();
    let today = now - now % 1440;
    let relative = if t > now {
        None
    } else if t >= today {
        let m = now - t;
        Some(match m {
            0 => "刚刚".to_owned(),
            1 => "60&nbsp;秒前".to_owned(),
            2..=30 => format!("{m}&nbsp;分钟前"),
            31..=60 => "半小时前".to_owned(),
            _ => format!("{}&nbsp;小时前", m / 60),
        })
    } else {
        // Whole days before today's midnight, as PHP's intval() counts
        // them: yesterday 00:00 is already "前天".
        match (today - t) / 1440 {
            0 => Some(format!("昨天&nbsp;{:02}:{:02}", c.hh, c.mm)),
            1 => Some(format!("前天&nbsp;{:02}:{:02}", c.hh, c.mm)),
            d @ 2..=6 => Some(format!("{}&nbsp;天前", d + 1)),
            _ => None,
        }
    };
    match relative {
        Some(r) => format!("<span title=\"{abs}\">{r}</span>"),
        None => abs,
    }
}

/// The board groups the home page shows: (gid, name, boards).
fn groups(f: &ForumModel) -> Vec<(u32, &'static str, std::ops::Range<usize>)> {
    let n = f.boards.len();
    if n <= 2 {
        return vec![(1, "江城生活", 0..n)];
    }
    let half = n.div_ceil(2);
    vec![(1, "江城生活", 0..half), (2, "兴趣交流", half..n)]
}

fn group_of(f: &ForumModel, b: &BoardMeta) -> (u32, &'static str) {
    let j = f.boards.iter().position(|x| x.id == b.id).unwrap_or(0);
    groups(f).into_iter().find(|(_, _, r)| r.contains(&j)).map_or((1, "江城生活"), |(g, name, _)| (g, name))
}

/// How a board list is sorted or filtered (the tabs above it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filter {
    /// The rewritten board pages.
    All,
    /// `filter=lastpost&orderby=lastpost`: the same order, dynamic links.
    Latest,
    /// `filter=heat&orderby=heats`: most viewed first.
    Heat,
    /// `filter=digest&digest=1`: no thread here is a digest.
    Digest,
}

impl Filter {
    fn query(self) -> &'static str {
        match self {
            Filter::All => "",
            Filter::Latest => "&filter=lastpost&orderby=lastpost",
            Filter::Heat => "&filter=heat&orderby=heats",
            Filter::Digest => "&filter=digest&digest=1",
        }
    }
}

/// Which thread view a `viewthread` request asks for.
enum View {
    Normal {
        list_page: usize,
    },
    /// "只看该作者": one author's posts.
    Author(u64),
    Printable,
}

fn head(out: &mut String, f: &ForumModel, title: &str, body_class: &str) {
    dz::head_start(out, "gbk", title);
    out.push_str(
        "<meta name=\"author\" content=\"Discuz! Team and Comsenz UI Team\" />\n\
<meta http-equiv=\"MSThemeCompatible\" content=\"Yes\" />\n<base href=\"/dzx/\" />\n\
<link rel=\"stylesheet\" type=\"text/css\" href=\"data/cache/style_1_common.css?x3S\" />\n\
<script type=\"text/javascript\">var STYLEID = '1', STATICURL = 'static/', IMGDIR = 'static/image/common', VERHASH = 'x3S', charset = 'gbk', discuz_uid = '0', cookiepre = 'jc_2132_', cookiedomain = '', cookiepath = '/', SITEURL = '/dzx/';</script>\n\
<script src=\"data/cache/common.js?x3S\" type=\"text/javascript\"></script>\n</head>\n",
    );
    let _ = write!(out, "<body id=\"nv_forum\" class=\"{body_class}\" onkeydown=\"if(event.keyCode==27) return false;\">\n<div id=\"append_parent\"></div><div id=\"ajaxwaitid\"></div>\n");
    out.push_str(
        "<div id=\"toptb\" class=\"cl\"><div class=\"wp\"><div class=\"z\"><a href=\"javascript:;\" onclick=\"setHomepage(location.href);\">设为首页</a>\
<a href=\"javascript:;\" onclick=\"addFavorite(this.href, document.title);return false;\">收藏本站</a></div></div></div>\n\
<div id=\"hd\"><div class=\"wp\"><div class=\"hdc cl\"><h2><a href=\"forum.php\" title=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\"><img src=\"static/image/common/logo.png\" alt=\"");
    esc(out, f.kind.name());
    out.push_str(
        "\" border=\"0\" /></a></h2>\n<div id=\"um\"><a href=\"member.php?mod=logging&amp;action=login\">登录</a><span class=\"pipe\">|</span>\
<a href=\"member.php?mod=register\">立即注册</a></div></div>\n\
<div id=\"nv\"><ul><li class=\"a\" id=\"mn_forum\"><a href=\"forum.php\" hidefocus=\"true\" title=\"BBS\">论坛<span>BBS</span></a></li>\
<li id=\"mn_search\"><a href=\"search.php?mod=forum\" hidefocus=\"true\">搜索</a></li></ul></div>\n</div></div>\n<div id=\"wp\" class=\"wp\">\n",
    );
}

fn foot(out: &mut String, f: &ForumModel) {
    out.push_str("</div>\n<div id=\"ft\" class=\"wp cl\"><div id=\"flk\" class=\"y\"><p><a href=\"forum.php?mod=misc&amp;action=showdarkroom\">小黑屋</a><span class=\"pipe\">|</span><a href=\"forum.php?mobile=yes\">手机版</a><span class=\"pipe\">|</span><strong><a href=\"forum.php\" target=\"_blank\">");
    esc(out, f.kind.name());
    let _ = write!(
        out,
        "</a></strong></p><p class=\"xs0\">GMT+8, {}<span id=\"debuginfo\">, Processed in 0.041 second(s), 23 queries.</span></p></div>\
<div id=\"frt\"><p>Powered by <strong><a href=\"http://www.discuz.invalid/\" target=\"_blank\">Discuz!</a></strong> <em>X3.4</em></p>\
<p class=\"xs0\">&copy; 2001-2020 <a href=\"http://www.comsenz.invalid/\" target=\"_blank\">Comsenz Inc.</a></p></div></div>\n</body>\n</html>\n",
        civil(now()).discuz()
    );
}

/// The breadcrumb: home, forum, the board's group, the board (its list page `list_page`), the thread.
fn crumbs(out: &mut String, f: &ForumModel, b: Option<(&BoardMeta, usize)>, t: Option<&ThreadMeta>) {
    out.push_str("<div id=\"pt\" class=\"bm cl\"><div class=\"z\"><a href=\"forum.php\" class=\"nvhm\" title=\"首页\">");
    esc(out, f.kind.name());
    out.push_str("</a> <em>&rsaquo;</em> <a href=\"forum.php\">论坛</a>");
    if let Some((b, list_page)) = b {
        let (gid, group) = group_of(f, b);
        let _ = write!(out, " <em>&rsaquo;</em> <a href=\"forum.php?gid={gid}\">{group}</a> <em>&rsaquo;</em> <a href=\"forum-{}-{list_page}.html\">", b.id);
        esc(out, &b.title);
        out.push_str("</a>");
    }
    if let Some(t) = t {
        let _ = write!(out, " <em>&rsaquo;</em> <a href=\"thread-{}-1-1.html\">", t.tid);
        esc(out, &t.title);
        out.push_str("</a>");
    }
    out.push_str("</div></div>\n");
}

/// The forum's notice page (`showmessage`), for deleted threads, forms
/// that need a login and redirects read without following them.
fn message(f: &ForumModel, text: &str, link: Option<(&str, &str)>) -> String {
    let mut out = String::with_capacity(4096);
    head(&mut out, f, &format!("提示信息 - {} -  Powered by Discuz!", f.kind.name()), "pg_misc");
    out.push_str("<div id=\"ct\" class=\"wp cl w\"><div class=\"nfl\"><div class=\"f_c altw\"><div id=\"messagetext\" class=\"alert_info\">\n<p>");
    out.push_str(text);
    out.push_str("</p>\n");
    match link {
        Some((l, words)) => {
            out.push_str("<p class=\"alert_btnleft\"><a href=\"");
            href(&mut out, l);
            out.push_str("\">");
            out.push_str(words);
            out.push_str("</a></p>\n");
        }
        None => out.push_str("<p class=\"alert_btnleft\"><a href=\"javascript:history.back()\">[ 点击这里返回上一页 ]</a></p>\n"),
    }
    out.push_str("</div></div></div></div>\n");
    foot(&mut out, f);
    out
}

pub(super) fn gone(f: &ForumModel) -> String {
    message(f, "抱歉，指定的主题不存在或已被删除或正在被审核", None)
}

/// A number of the board, thread or post ids a request names (digits only).
fn id(s: Option<&str>) -> Option<u64> {
    s.filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).and_then(|v| v.parse().ok())
}

/// The list page an `extra=page%3DN` parameter names (1 without one).
fn extra_page(extra: Option<&str>) -> usize {
    extra
        .and_then(|e| {
            let d = crate::text::percent_decode(e);
            let d = String::from_utf8_lossy(&d).into_owned();
            d.split('&').find_map(|kv| kv.strip_prefix("page=").and_then(|n| n.parse().ok()))
        })
        .unwrap_or(1)
}

impl Fixture {
    pub(super) fn route_dzx(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        if let Some(file) = rest.strip_prefix("data/attachment/") {
            return match attachment_of(file) {
                Some(aid) if q.is_empty() && attachment_path(aid) == rest => attachment_bytes(aid).map_or(Routed::NotFound, |b| Routed::File("image/jpeg", b)),
                _ => Routed::NotFound,
            };
        }
        if let Some(name) = rest.strip_prefix("forum-").and_then(|r| r.strip_suffix(".html")) {
            let Some((fid, page)) = name.rsplit_once('-') else { return Routed::NotFound };
            if !q.is_empty() {
                return Routed::NotFound;
            }
            if self.crafted(Some(fid)) {
                return self.decoy_list(f);
            }
            let page = id(Some(page)).map(|p| p as usize);
            return match (f.board(fid), page) {
                (Some(b), Some(p)) if (1..=f.list_pages(b)).contains(&p) => Routed::Page(self.dzx_list(f, b, p, Filter::All), Shown::List),
                _ => Routed::NotFound,
            };
        }
        if let Some(name) = rest.strip_prefix("thread-").and_then(|r| r.strip_suffix(".html")) {
            let parts: Vec<&str> = name.split('-').collect();
            let [tid, page, list_page] = parts.as_slice() else { return Routed::NotFound };
            if !q.is_empty() {
                return Routed::NotFound;
            }
            if self.crafted(Some(tid)) {
                return self.decoy_thread(f);
            }
            let (Some(page), Some(list_page)) = (id(Some(page)), id(Some(list_page))) else { return Routed::NotFound };
            return self.dzx_thread_route(f, id(Some(tid)).and_then(|t| f.thread(t)), page as usize, View::Normal { list_page: list_page.max(1) as usize });
        }
        if rest != "forum.php" {
            return Routed::NotFound;
        }
        match q.get("mod") {
            None if q.is_empty() => Routed::Page(self.dzx_home(f, None), Shown::Home),
            None if q.only(&["gid"]) => match id(q.get("gid")) {
                Some(g) if groups(f).iter().any(|(gid, _, _)| u64::from(*gid) == g) => Routed::Page(self.dzx_home(f, Some(g as u32)), Shown::Home),
                _ => Routed::NotFound,
            },
            Some("forumdisplay") if q.only(&["mod", "fid", "page", "filter", "orderby", "digest"]) => {
                if self.crafted(q.get("fid")) {
                    return self.decoy_list(f);
                }
                let filter = match (q.get("filter"), q.get("orderby"), q.get("digest")) {
                    // The board's own list, with rewritten links as ever.
                    (None, None, None) => Filter::All,
                    (Some("lastpost"), Some("lastpost"), None) => Filter::Latest,
                    (Some("heat"), Some("heats"), None) => Filter::Heat,
                    (Some("digest"), None, Some("1")) => Filter::Digest,
                    _ => return Routed::NotFound,
                };
                let b = q.get("fid").and_then(|fid| f.board(fid));
                match (b, q.number("page", 1)) {
                    (Some(b), Some(p)) if p == 1 || (filter != Filter::Digest && (1..=f.list_pages(b)).contains(&p)) => {
                        Routed::Page(self.dzx_list(f, b, p, filter), Shown::List)
                    }
                    _ => Routed::NotFound,
                }
            }
            Some("viewthread") if q.only(&["mod", "tid", "page", "extra", "authorid", "action"]) => {
                if self.crafted(q.get("tid")) {
                    return self.decoy_thread(f);
                }
                let t = id(q.get("tid")).and_then(|t| f.thread(t));
                let view = match (q.get("action"), q.get("authorid")) {
                    (Some("printable"), None) => View::Printable,
                    (None, Some(a)) => match id(Some(a)) {
                        Some(uid) => View::Author(uid),
                        None => return Routed::NotFound,
                    },
                    (None, None) => View::Normal { list_page: extra_page(q.get("extra")) },
                    _ => return Routed::NotFound,
                };
                match q.number("page", 1) {
                    Some(p) => self.dzx_thread_route(f, t, p, view),
                    None => Routed::NotFound,
                }
            }
            // The server answers these with a 302 (see `Fixture::redirect_target`);
            // this is the body that goes with it.
            Some("redirect") => match self.dzx_redirect(f, q) {
                Some(to) => Routed::Redirect(message(f, "正在跳转，请稍候……", Some((&to, "如果您的浏览器没有自动跳转，请点击此链接")))),
                None => Routed::Page(message(f, "抱歉，没有找到符合条件的主题", None), Shown::Other),
            },
            Some("post") => {
                Routed::Page(message(f, "抱歉，您尚未登录，没有权限在该版块发帖", Some(("member.php?mod=logging&action=login", "登录"))), Shown::Other)
            }
            _ => Routed::NotFound,
        }
    }

    /// Where `forum.php?mod=redirect&…` sends the reader (path from the
    /// server root), if anywhere: the last page of a thread, the page of a
    /// post, the thread listed next to it.
    pub(super) fn dzx_redirect(&self, f: &ForumModel, q: &Query) -> Option<String> {
        let view = |t: &ThreadMeta, page: usize, pid: Option<u64>| {
            let mut to = format!("/dzx/forum.php?mod=viewthread&tid={}", t.tid);
            if page > 1 {
                let _ = write!(to, "&page={page}");
            }
            if let Some(pid) = pid {
                let _ = write!(to, "#pid{pid}");
            }
            to
        };
        match q.get("goto")? {
            "lastpost" => {
                let t = f.thread(id(q.get("tid"))?)?;
                (!t.deleted).then(|| view(t, f.thread_pages(t), Some(t.tid * 64 + u64::from(t.posts))))
            }
            "findpost" => {
                let t = f.thread(id(q.get("ptid"))?)?;
                let pid = id(q.get("pid"))?;
                let floor = pid.checked_sub(t.tid * 64).filter(|fl| (1..=u64::from(t.posts)).contains(fl))?;
                (!t.deleted).then(|| view(t, (floor as usize - 1) / f.kind.thread_page_size() + 1, Some(pid)))
            }
            dir @ ("nextoldset" | "nextnewset") => {
                let t = f.thread(id(q.get("tid"))?)?;
                let order = &f.boards[t.board as usize].order;
                let at = order.iter().position(|&i| f.threads[i as usize].tid == t.tid)?;
                let next = if dir == "nextoldset" { at.checked_add(1) } else { at.checked_sub(1) }?;
                order.get(next).map(|&i| view(&f.threads[i as usize], 1, None))
            }
            _ => None,
        }
    }

    fn dzx_thread_route(&self, f: &ForumModel, t: Option<&ThreadMeta>, page: usize, view: View) -> Routed {
        let Some(t) = t else { return Routed::NotFound };
        match view {
            _ if t.deleted => Routed::Gone(gone(f)),
            // The list page the link came from only changes the "返回列表" links.
            View::Normal { list_page } if (1..=f.thread_pages(t)).contains(&page) => {
                Routed::Page(self.dzx_thread(f, t, page, list_page), Shown::Thread { tid: t.tid, page })
            }
            View::Author(uid) => {
                let pages = self.author_pages(f, t, uid);
                let Some(shown) = page.checked_sub(1).and_then(|i| pages.get(i)) else { return Routed::NotFound };
                let html = self.dzx_thread_with(f, t, page, pages.len(), shown, 1, Some(uid));
                Routed::Page(html, Shown::Other)
            }
            View::Printable if page == 1 => Routed::Page(self.dzx_printable(f, t), Shown::Other),
            _ => Routed::NotFound,
        }
    }

    fn dzx_home(&self, f: &ForumModel, only: Option<u32>) -> String {
        let mut out = String::with_capacity(8192);
        head(&mut out, f, &format!("{} -  Powered by Discuz!", f.kind.name()), "pg_index");
        crumbs(&mut out, f, None, None);
        let posts: u32 = f.threads.iter().filter(|t| !t.deleted).map(|t| t.posts).sum();
        let _ = write!(
            out,
            "<div id=\"ct\" class=\"wp cl\"><div id=\"chart\" class=\"bm bw0 cl\"><p class=\"chart z\">今日: <em>{}</em><span class=\"pipe\">|</span>\
昨日: <em>{}</em><span class=\"pipe\">|</span>帖子: <em>{posts}</em><span class=\"pipe\">|</span>会员: <em>{}</em></p></div>\n<div class=\"mn\">\n",
            posts % 97,
            posts % 131,
            posts / 3 + 17
        );
        for (gid, name, range) in groups(f) {
            if only.is_some_and(|g| g != gid) {
                continue;
            }
            let _ = write!(
                out,
                "<div class=\"bm bmw flg cl\"><div class=\"bm_h cl\"><span class=\"o\"><img id=\"category_{gid}_img\" src=\"static/image/common/collapsed_no.gif\" title=\"收起/展开\" alt=\"收起/展开\" onclick=\"toggle_collapse('category_{gid}');\" /></span>\
<h2><a href=\"forum.php?gid={gid}\">{name}</a></h2></div>\n<div id=\"category_{gid}\" class=\"bm_c\"><table cellspacing=\"0\" cellpadding=\"0\" class=\"fl_tb\">\n"
            );
            for b in &f.boards[range] {
                let posts = f.board_posts(b);
                let _ = write!(
                    out,
                    "<tr><td class=\"fl_icn\"><a href=\"forum-{id}-1.html\"><img src=\"static/image/common/forum.gif\" alt=\"\" /></a></td>\n<td><h2><a href=\"forum-{id}-1.html\">",
                    id = b.id
                );
                esc(&mut out, &b.title);
                let _ = write!(
                    out,
                    "</a></h2></td>\n<td class=\"fl_i\"><span class=\"xi2\">{}</span><span class=\"xg1\"> / {posts}</span></td>\n<td class=\"fl_by\"><div>",
                    b.order.len()
                );
                match f.board_newest(b) {
                    Some(t) => {
                        let (last, last_uid) = self.author(f, t, t.posts);
                        let _ = write!(out, "<a href=\"forum.php?mod=redirect&amp;tid={}&amp;goto=lastpost#lastpost\" class=\"xi2\">", t.tid);
                        esc(&mut out, &t.title.chars().take(12).collect::<String>());
                        let _ = write!(out, "</a> <cite>{} <a href=\"home.php?mod=space&amp;uid={last_uid}\">", shown_time(t.last_post));
                        esc(&mut out, &last);
                        out.push_str("</a></cite>");
                    }
                    None => out.push_str("从未"),
                }
                out.push_str("</div></td>\n</tr>\n");
            }
            out.push_str("</table></div></div>\n");
        }
        out.push_str("</div></div>\n");
        foot(&mut out, f);
        out
    }

    pub(super) fn dzx_list(&self, f: &ForumModel, b: &BoardMeta, page: usize, filter: Filter) -> String {
        let size = f.kind.list_page_size();
        let order: Cow<[u32]> = match filter {
            Filter::All | Filter::Latest => Cow::Borrowed(&b.order),
            Filter::Heat => {
                let mut o = b.order.clone();
                o.sort_by_key(|&i| std::cmp::Reverse((f.threads[i as usize].views, f.threads[i as usize].tid)));
                Cow::Owned(o)
            }
            Filter::Digest => Cow::Owned(Vec::new()),
        };
        let pages = order.len().div_ceil(size).max(1);
        let mut out = String::with_capacity(32 * 1024);
        head(&mut out, f, &format!("{} - {} -  Powered by Discuz!", b.title, f.kind.name()), "pg_forumdisplay");
        crumbs(&mut out, f, Some((b, 1)), None);
        let today = order.iter().filter(|&&i| f.threads[i as usize].last_post >= now() - now() % 1440).count();
        let _ = write!(
            out,
            "<div id=\"ct\" class=\"wp cl\"><div class=\"mn\">\n<div class=\"bm bml pbn\"><div class=\"bm_h cl\"><span class=\"y\"><a href=\"home.php?mod=spacecp&amp;ac=favorite&amp;type=forum&amp;id={fid}\" id=\"a_favorite\" class=\"fa_fav\">收藏本版</a></span>\
<h1 class=\"xs2\"><a href=\"forum-{fid}-1.html\">",
            fid = b.id
        );
        esc(&mut out, &b.title);
        let _ = writeln!(
            out,
            "</a> <span class=\"xs1 xw0 i\">今日: <strong class=\"xi1\">{today}</strong><span class=\"pipe\">|</span>主题: <strong class=\"xi1\">{}</strong></span></h1></div></div>",
            b.order.len()
        );
        let fid = b.id.clone();
        let url = move |k: usize| match filter {
            Filter::All => format!("forum-{fid}-{k}.html"),
            _ => format!("forum.php?mod=forumdisplay&fid={fid}{}&page={k}", filter.query()),
        };
        out.push_str("<div id=\"pgt\" class=\"bm bw0 pgs cl\"><span id=\"fd_page_top\">");
        dz::pager(&mut out, page, pages, &url);
        let _ = write!(
            out,
            "</span><span class=\"pgb y\"><a href=\"forum.php\">返回首页</a></span>\
<a href=\"forum.php?mod=post&amp;action=newthread&amp;fid={fid}\" id=\"newspecial\" title=\"发新帖\"><img src=\"static/image/common/pn_post.png\" alt=\"发新帖\" /></a></div>\n\
<div id=\"threadlist\" class=\"tl bm bmw\"><div class=\"th\"><table cellspacing=\"0\" cellpadding=\"0\"><tr><th colspan=\"2\"><div class=\"tf\">\
<a id=\"filter_special\" href=\"javascript:;\" class=\"showmenu xi2\">全部主题</a>&nbsp;\
<a href=\"forum.php?mod=forumdisplay&amp;fid={fid}&amp;filter=lastpost&amp;orderby=lastpost\" class=\"xi2\">最新</a>&nbsp;\
<a href=\"forum.php?mod=forumdisplay&amp;fid={fid}&amp;filter=heat&amp;orderby=heats\" class=\"xi2\">热门</a>&nbsp;\
<a href=\"forum.php?mod=forumdisplay&amp;fid={fid}&amp;filter=digest&amp;digest=1\" class=\"xi2\">精华</a>&nbsp;</div></th>\
<td class=\"by\">作者</td><td class=\"num\">回复/查看</td><td class=\"by\">最后发表</td></tr></table></div>\n\
<div class=\"bm_c\"><form method=\"post\" autocomplete=\"off\" name=\"moderate\" id=\"moderate\" action=\"forum.php?mod=topicadmin&amp;action=moderate&amp;fid={fid}&amp;infloat=yes&amp;nopost=yes\">\n\
<table summary=\"forum_{fid}\" cellspacing=\"0\" cellpadding=\"0\" id=\"threadlisttableid\">\n\
<tbody id=\"separatorline\" class=\"emptb\"><tr><td class=\"icn\"></td><th class=\"common\"><b>版块主题</b></th><td class=\"by\"></td><td class=\"num\"></td><td class=\"by\"></td></tr></tbody>\n",
            fid = b.id
        );
        if order.is_empty() {
            out.push_str("<tbody><tr><th colspan=\"5\"><p class=\"emp\">本版块或指定的范围内尚无主题</p></th></tr></tbody>\n");
        }
        for &i in order.iter().skip((page - 1) * size).take(size) {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first_time = self.post_times(f, t)[0];
            // The plain list names its own page in every thread link;
            // sorted and filtered views link the dynamic form.
            let link = |k: usize| match filter {
                Filter::All => format!("thread-{}-{k}-{page}.html", t.tid),
                _ if k == 1 => format!("forum.php?mod=viewthread&tid={}&extra=page%3D{page}{}", t.tid, filter.query().replace('&', "%26").replace('=', "%3D")),
                _ => format!("forum.php?mod=viewthread&tid={}&extra=page%3D{page}&page={k}", t.tid),
            };
            let _ = write!(out, "<tbody id=\"normalthread_{}\">\n<tr>\n<td class=\"icn\"><a href=\"", t.tid);
            href(&mut out, &link(1));
            out.push_str(
                "\" title=\"有新回复 - 新窗口打开\" target=\"_blank\"><img src=\"static/image/common/folder_new.gif\" /></a></td>\n<th class=\"new\">\n",
            );
            let _ = write!(
                out,
                "<a class=\"tdpre y\" href=\"javascript:void(0);\" onclick=\"previewThread('{tid}', 'normalthread_{tid}');\">预览</a>\n<a href=\"",
                tid = t.tid
            );
            href(&mut out, &link(1));
            out.push_str("\" onclick=\"atarget(this)\" class=\"s xst\">");
            esc(&mut out, &t.title);
            out.push_str("</a>\n");
            let tpages = f.thread_pages(t);
            if tpages > 1 {
                // Discuz! lists a long thread's first few pages and its last.
                out.push_str("<span class=\"tps\">&nbsp;...");
                for k in (2..=tpages.min(6)).chain((tpages > 6).then_some(tpages)) {
                    out.push_str("<a href=\"");
                    href(&mut out, &link(k));
                    let _ = write!(out, "\">{k}</a>");
                }
                out.push_str("</span>\n");
            }
            out.push_str("</th>\n");
            dz::by_cell(&mut out, uid, &author);
            let _ = writeln!(out, "<em><span>{}</span></em></td>", civil(first_time).discuz_date());
            out.push_str("<td class=\"num\"><a href=\"");
            href(&mut out, &link(1));
            let _ = writeln!(out, "\" class=\"xi2\">{}</a><em>{}</em></td>", t.posts - 1, t.views);
            dz::by_cell(&mut out, last_uid, &last);
            let _ = write!(
                out,
                "<em><a href=\"forum.php?mod=redirect&amp;tid={}&amp;goto=lastpost#lastpost\">{}</a></em></td>\n</tr>\n</tbody>\n",
                t.tid,
                shown_time(t.last_post)
            );
        }
        out.push_str("</table></form></div></div>\n<div class=\"bm bw0 pgs cl\"><span id=\"fd_page_bottom\">");
        dz::pager(&mut out, page, pages, &url);
        out.push_str("</span></div>\n</div></div>\n");
        foot(&mut out, f);
        out
    }

    /// Page `page` of thread `t` as reached from list page `list_page`.
    pub(super) fn dzx_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize, list_page: usize) -> String {
        let (_, pages, posts) = self.thread_page(f, t, page);
        self.dzx_thread_with(f, t, page, pages, &posts, list_page, None)
    }

    /// A thread page showing `posts` as page `page` of `pages`; with
    /// `author`, the "只看该作者" view of that author's posts.
    #[allow(clippy::too_many_arguments)]
    fn dzx_thread_with(&self, f: &ForumModel, t: &ThreadMeta, page: usize, pages: usize, posts: &[Post], list_page: usize, author: Option<u64>) -> String {
        let b = &f.boards[t.board as usize];
        let mut out = String::with_capacity(40 * 1024);
        head(&mut out, f, &format!("{} - {} - {} -  Powered by Discuz!", t.title, b.title, f.kind.name()), "pg_viewthread");
        crumbs(&mut out, f, Some((b, list_page)), Some(t));
        let url = |k: usize| match author {
            Some(uid) => format!("forum.php?mod=viewthread&tid={}&page={k}&authorid={uid}", t.tid),
            None => format!("thread-{}-{k}-1.html", t.tid),
        };
        let _ = write!(out, "<div id=\"ct\" class=\"wp cl\">\n<div id=\"pgt\" class=\"pgs mbm cl \"><div class=\"pgt\">");
        dz::pager(&mut out, page, pages, url);
        let _ = write!(
            out,
            "</div><span class=\"y pgb\"><a href=\"forum-{fid}-{list_page}.html\">返回列表</a></span>\
<a id=\"newspecial\" href=\"forum.php?mod=post&amp;action=newthread&amp;fid={fid}\" title=\"发新帖\"><img src=\"static/image/common/pn_post.png\" alt=\"发新帖\" /></a>\
<a id=\"post_reply\" href=\"forum.php?mod=post&amp;action=reply&amp;fid={fid}&amp;tid={tid}\" title=\"回复\"><img src=\"static/image/common/pn_reply.png\" alt=\"回复\" /></a></div>\n\
<div id=\"postlist\" class=\"pl bm\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"pls ptn pbn\"><div class=\"hm ptn\">\
<span class=\"xg1\">查看:</span> <span class=\"xi1\">{views}</span><span class=\"pipe\">|</span><span class=\"xg1\">回复:</span> <span class=\"xi1\">{replies}</span></div></td>\n\
<td class=\"plc ptm pbn vwthd\"><div class=\"y\">\
<a href=\"forum.php?mod=viewthread&amp;action=printable&amp;tid={tid}\" title=\"打印\" target=\"_blank\"><img src=\"static/image/common/print.png\" alt=\"打印\" class=\"vm\" /></a>\
<a href=\"forum.php?mod=redirect&amp;goto=nextoldset&amp;tid={tid}\" title=\"上一主题\"><img src=\"static/image/common/thread-prev.png\" alt=\"上一主题\" class=\"vm\" /></a>\
<a href=\"forum.php?mod=redirect&amp;goto=nextnewset&amp;tid={tid}\" title=\"下一主题\"><img src=\"static/image/common/thread-next.png\" alt=\"下一主题\" class=\"vm\" /></a></div>\n\
<h1 class=\"ts\"><span id=\"thread_subject\">",
            fid = b.id,
            tid = t.tid,
            views = t.views,
            replies = t.posts - 1
        );
        esc(&mut out, &t.title);
        let _ = writeln!(
            out,
            "</span></h1>\n<span class=\"xg1\"><a href=\"thread-{}-1-1.html\" onclick=\"return copyThreadUrl(this)\">[复制链接]</a></span></td></tr></table>",
            t.tid
        );
        for p in posts {
            self.dzx_post(&mut out, f, t, p, page, list_page);
        }
        out.push_str("</div>\n<div class=\"pgs mtm mbm cl\">");
        dz::pager(&mut out, page, pages, url);
        let _ = write!(
            out,
            "<span class=\"pgb y\"><a href=\"forum-{fid}-{list_page}.html\">返回列表</a></span>\
<a href=\"forum.php?mod=redirect&amp;goto=lastpost&amp;tid={tid}#lastpost\" class=\"xi2\">跳转到最后一页</a></div>\n\
<div id=\"f_pst\" class=\"pl bm bmw\"><form method=\"post\" autocomplete=\"off\" id=\"fastpostform\" action=\"forum.php?mod=post&amp;action=reply&amp;fid={fid}&amp;tid={tid}&amp;extra=page%3D{list_page}&amp;replysubmit=yes&amp;infloat=yes&amp;handlekey=fastpost\">\
<div class=\"pt hm\">您需要登录后才可以回帖 <a href=\"member.php?mod=logging&amp;action=login\" class=\"xi2\">登录</a> | <a href=\"member.php?mod=register\" class=\"xi2\">立即注册</a></div></form></div>\n</div>\n",
            fid = b.id,
            tid = t.tid
        );
        foot(&mut out, f);
        out
    }

    /// What else a Discuz! X body holds, decided per post: an edit note
    /// (minutes after the post), a quote of an earlier floor; the generator
    /// goes on to decide a smiley. One decision for the page and the truth.
    fn dzx_extras(&self, f: &ForumModel, t: &ThreadMeta, p: &Post) -> (Option<u32>, Option<Post>, fastrand::Rng) {
        let mut r = rng(&[self.config().seed, f.kind.code(), t.tid, u64::from(p.floor), 0xD2_B0D7]);
        let edited = (r.u32(0..8) == 0).then(|| r.u32(1..120));
        let quoted = match p.floor > 1 && r.u32(0..6) == 0 {
            true => {
                let q = r.u32(1..p.floor);
                self.posts(f, t, q..=q).pop()
            }
            false => None,
        };
        (edited, quoted, r)
    }

    /// What Discuz! X's pages show of thread `t` beyond v1's fields, into
    /// its truth: the breadcrumb's board, the counts above the first post,
    /// and per post its pid, the author's uid and space, the edit note,
    /// the quote (and so the post answered), the IP属地 line, the link and
    /// the attachment picture.
    pub(crate) fn dzx_truth(&self, f: &ForumModel, t: &ThreadMeta, truth: &mut crate::model::ThreadTruth) {
        truth.board_name = Some(f.boards[t.board as usize].title.clone());
        truth.shown_replies = Some(u64::from(t.posts - 1));
        truth.views = Some(u64::from(t.views));
        let posts = if t.deleted { Vec::new() } else { self.posts(f, t, 1..=t.posts) };
        for (want, p) in truth.posts.iter_mut().zip(&posts) {
            let (edited, quoted, _) = self.dzx_extras(f, t, p);
            want.id = Some(p.pid.to_string());
            want.author_id = Some(p.uid.to_string());
            want.author_path = Some(format!("/dzx/home.php?mod=space&uid={}", p.uid));
            want.edited = edited.map(|m| civil(p.time + m).iso());
            if let Some(q) = quoted {
                want.reply_to = Some(q.pid.to_string());
                want.quotes =
                    vec![crate::model::QuoteTruth { floor: p.floor, of: Some(q.pid.to_string()), author: Some(q.author.clone()), text: dzx_quoted_text(&q) }];
            }
            want.location = Some(location_of(p.uid).to_owned());
            let media = dzx_media(self.config().seed, t, p);
            want.links = media
                .link
                .into_iter()
                .map(|href| crate::model::LinkTruth { href, text: p.paragraphs.last().map(|x| x.to_string()).unwrap_or_default() })
                .collect();
            want.images = media
                .image
                .into_iter()
                .map(|aid| crate::model::ImageTruth { src: format!("/dzx/{}", attachment_path(aid)), alt: attachment_name(aid) })
                .collect();
        }
    }

    fn dzx_post(&self, out: &mut String, f: &ForumModel, t: &ThreadMeta, p: &Post, page: usize, list_page: usize) {
        let pid = p.pid;
        let fid = &f.boards[t.board as usize].id;
        let uid = p.uid;
        let _ = write!(
            out,
            "<div id=\"post_{pid}\" >\n<table id=\"pid{pid}\" class=\"plhin\" summary=\"pid{pid}\" cellspacing=\"0\" cellpadding=\"0\">\n<tr>\n\
<td class=\"pls\" rowspan=\"2\">\n<div id=\"favatar{pid}\" class=\"pls favatar\">\n<div class=\"pi\"><div class=\"authi\"><a href=\"home.php?mod=space&amp;uid={uid}\" target=\"_blank\" class=\"xw1\">"
        );
        esc(out, &p.author);
        let _ = write!(
            out,
            "</a></div></div>\n<div><div class=\"avatar\"><a href=\"home.php?mod=space&amp;uid={uid}\" class=\"avtm\" target=\"_blank\"><img src=\"uc_server/avatar.php?uid={uid}&amp;size=middle\" /></a></div></div>\n\
<div class=\"tns xg2\"><table cellspacing=\"0\" cellpadding=\"0\"><th><p><a href=\"home.php?mod=space&amp;uid={uid}&amp;do=thread&amp;type=thread&amp;view=me&amp;from=space\" class=\"xi2\">{}</a></p>主题</th>\
<th><p><a href=\"home.php?mod=space&amp;uid={uid}&amp;do=thread&amp;type=reply&amp;view=me&amp;from=space\" class=\"xi2\">{}</a></p>帖子</th>\
<td><p><a href=\"home.php?mod=space&amp;uid={uid}&amp;do=profile\" class=\"xi2\">{}</a></p>积分</td></table></div>\n\
<p><em><a href=\"home.php?mod=spacecp&amp;ac=usergroup&amp;gid=10\" target=\"_blank\">{}</a></em></p>\n</div>\n</td>\n<td class=\"plc\">\n<div class=\"pi\">\n",
            uid % 40 + 1,
            uid % 900 + 12,
            uid % 3000 + 35,
            ["新手上路", "注册会员", "中级会员", "高级会员", "金牌会员"][(uid % 5) as usize]
        );
        if p.floor == 1 {
            out.push_str("<div id=\"fj\" class=\"y\"><label class=\"z\">电梯直达</label><input class=\"px p_fre z\" type=\"text\" size=\"2\" id=\"fj_pid\" title=\"输入楼层\" /></div>\n");
        }
        let label = match p.floor {
            1 => "楼主".to_owned(),
            2 => "沙发".to_owned(),
            3 => "板凳".to_owned(),
            4 => "地板".to_owned(),
            n => format!("<em>{n}</em><sup>#</sup>"),
        };
        let _ = write!(
            out,
            "<strong><a href=\"forum.php?mod=redirect&amp;goto=findpost&amp;ptid={tid}&amp;pid={pid}\" id=\"postnum{pid}\" onclick=\"setCopy(this.href, '帖子地址复制成功');return false;\">{label}</a></strong>\n\
<div class=\"pti\"><div class=\"pdbt\"></div><div class=\"authi\"><img class=\"authicn vm\" id=\"authicon{pid}\" src=\"static/image/common/online_member.gif\" />\
<em id=\"authorposton{pid}\">发表于 {when}</em><span class=\"pipe\">|</span><span class=\"xg1\">IP属地：{location}</span><span class=\"pipe\">|</span>\
<a href=\"forum.php?mod=viewthread&amp;tid={tid}&amp;page=1&amp;authorid={uid}\" rel=\"nofollow\">只看该作者</a></div></div>\n</div>\n\
<div class=\"pct\"><div class=\"pcb\"><div class=\"t_fsz\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"t_f\" id=\"postmessage_{pid}\">\n",
            tid = t.tid,
            when = shown_time(p.time),
            location = location_of(uid)
        );
        let (edited, quoted, mut r) = self.dzx_extras(f, t, p);
        if let Some(minutes) = edited {
            let _ = write!(out, "<i class=\"pstatus\"> 本帖最后由 ");
            esc(out, &p.author);
            let _ = write!(out, " 于 {} 编辑 </i><br />\r\n<br />\r\n", civil(p.time + minutes).discuz());
        }
        if let Some(quoted) = quoted {
            let _ = write!(
                out,
                "<div class=\"quote\"><blockquote><font size=\"2\"><a href=\"forum.php?mod=redirect&amp;goto=findpost&amp;pid={}&amp;ptid={}\" target=\"_blank\"><font color=\"#999999\">",
                quoted.pid, t.tid
            );
            esc(out, &quoted.author);
            let _ = write!(out, " 发表于 {}</font></a></font><br />\r\n", civil(quoted.time).discuz());
            esc(out, &dzx_quoted_text(&quoted));
            out.push_str("</blockquote></div><br />\r\n");
        }
        let sep = if p.variant { "<br />\r\n" } else { "<br />" };
        let media = dzx_media(self.config().seed, t, p);
        let last = p.paragraphs.len().saturating_sub(1);
        for (i, para) in p.paragraphs.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            // A link Discuz! made of a pasted URL: the reader's words linked.
            match &media.link {
                Some(href) if i == last => {
                    let _ = write!(out, "<a href=\"{href}\" target=\"_blank\">");
                    esc(out, para);
                    out.push_str("</a>");
                }
                _ => esc(out, para),
            }
        }
        if let Some(aid) = media.image {
            // An attachment as Discuz! X shows it: the real file in `file`
            // and `zoomfile`, `src` a placeholder its script swaps.
            let _ = write!(
                out,
                "<br />\r\n<ignore_js_op>\r\n<img id=\"aimg_{aid}\" aid=\"{aid}\" src=\"static/image/common/none.gif\" zoomfile=\"{file}\" file=\"{file}\" class=\"zoom\" onclick=\"zoom(this, this.src, 0, 0, 0)\" width=\"600\" alt=\"{name}\" title=\"{name}\" w=\"1080\" />\r\n</ignore_js_op>",
                file = attachment_path(aid),
                name = attachment_name(aid)
            );
        }
        if r.u32(0..10) == 0 {
            const SMILIES: [(&str, u32); 4] = [("smile", 1), ("lol", 12), ("titter", 9), ("victory", 13)];
            let (name, sid) = SMILIES[r.usize(0..SMILIES.len())];
            let _ = write!(out, "<img src=\"static/image/smiley/default/{name}.gif\" smilieid=\"{sid}\" border=\"0\" alt=\"\" />");
        }
        out.push_str("</td></tr></table>\n</div>\n<div id=\"comment_");
        let _ = write!(out, "{pid}\" class=\"cm\"></div>\n<div id=\"post_rate_div_{pid}\"></div>\n</div></div>\n</td></tr>\n<tr><td class=\"plc plm\">");
        if uid % 4 == 1 {
            const SIGNS: [&str; 3] = ["江城人，说江城话。", "认真生活，好好吃饭。", "签名被屏蔽是常态"];
            let _ = write!(out, "<div class=\"sign\" style=\"max-height:100px;maxHeightIE:100px;\">{}</div>", SIGNS[(uid / 4 % 3) as usize]);
        }
        let _ = write!(
            out,
            "</td></tr>\n<tr><td class=\"pls\"></td><td class=\"plc\" style=\"overflow:visible;\"><div class=\"po hin\"><div class=\"pob cl\"><em>\
<a class=\"fastre\" href=\"forum.php?mod=post&amp;action=reply&amp;fid={fid}&amp;tid={tid}&amp;repquote={pid}&amp;extra=page%3D{list_page}&amp;page={page}\" onclick=\"showWindow('reply', this.href)\">回复</a></em>\
<p><a href=\"javascript:;\" id=\"mgc_post_{pid}\" class=\"showmenu\">使用道具</a>\
<a href=\"javascript:;\" onclick=\"showWindow('miscreport{pid}', 'misc.php?mod=report&amp;rtype=post&amp;rid={pid}&amp;tid={tid}&amp;fid={fid}', 'get', -1);return false;\">举报</a></p></div></div></td></tr>\n\
</table>\n</div>\n",
            tid = t.tid
        );
    }

    /// The print view: every post, one after another, times absolute.
    fn dzx_printable(&self, f: &ForumModel, t: &ThreadMeta) -> String {
        let mut out = String::with_capacity(32 * 1024);
        out.push_str("<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\" />\n<title>");
        esc(&mut out, f.kind.name());
        out.push_str(" - Powered by Discuz!</title>\n<link rel=\"stylesheet\" type=\"text/css\" href=\"static/image/common/print.css\" />\n</head>\n<body>\n<div class=\"box\"><div class=\"title\">");
        esc(&mut out, f.kind.name());
        out.push_str("</div>\n<h1>标题: ");
        esc(&mut out, &t.title);
        out.push_str("</h1>\n");
        for p in self.posts(f, t, 1..=t.posts) {
            out.push_str("<b>作者: </b>");
            esc(&mut out, &p.author);
            let _ = writeln!(out, "&nbsp; &nbsp; <b>时间: </b>{}<br />", civil(p.time).discuz());
            if p.floor == 1 {
                out.push_str("<b>标题: </b>");
                esc(&mut out, &t.title);
                out.push_str("<br />\n");
            }
            for (i, para) in p.paragraphs.iter().enumerate() {
                if i > 0 {
                    out.push_str("<br />\n");
                }
                esc(&mut out, para);
            }
            out.push_str("<br />\n<hr noshade size=\"2\" width=\"100%\" color=\"#808080\">\n");
        }
        let _ = write!(out, "<div class=\"footer\"><a href=\"thread-{}-1-1.html\">查看完整版本: ", t.tid);
        esc(&mut out, &t.title);
        out.push_str("</a></div>\n</div>\n</body>\n</html>\n");
        out
    }
}

/// The IP属地 line's province, one per user.
fn location_of(uid: u64) -> &'static str {
    const PROVINCES: [&str; 10] = ["广东", "北京", "上海", "四川", "湖北", "浙江", "江苏", "山东", "河南", "海外"];
    PROVINCES[(uid % PROVINCES.len() as u64) as usize]
}

/// A post's link and attachment, decided apart from the rest of it (so
/// the pages' other choices stay as they were): a sixth of posts link a
/// pasted URL, an eighth show a picture.
struct Media {
    link: Option<String>,
    /// The attachment's id.
    image: Option<u64>,
}

fn dzx_media(seed: u64, t: &ThreadMeta, p: &Post) -> Media {
    let mut r = rng(&[seed, crate::kind::ForumKind::DiscuzX.code(), t.tid, u64::from(p.floor), 0x11_4C5]);
    let link = (r.u32(0..6) == 0).then(|| match r.u32(0..3) {
        0 => format!("https://www.bilibili.invalid/video/BV1x{}", p.pid),
        1 => format!("https://weibo.invalid/{}/{}", p.uid, p.pid),
        _ => format!("https://www.zhihu.invalid/question/{}", p.pid),
    });
    let image = (r.u32(0..8) == 0).then(|| 50_000 + p.pid);
    Media { link, image }
}

/// Where an attachment's picture is: the forum's attachments, or now and
/// then a picture from the poster's album.
fn attachment_path(aid: u64) -> String {
    let dir = if aid % 7 == 3 { "album" } else { "forum" };
    format!("data/attachment/{dir}/202406/30/{aid}.jpg")
}

/// The attachment id an attachment path names (under `data/attachment/`).
fn attachment_of(file: &str) -> Option<u64> {
    let name = file.rsplit('/').next()?.strip_suffix(".jpg")?;
    name.parse().ok().filter(|_| !name.starts_with('0') && !name.starts_with('+'))
}

/// How many different pictures the attachments show.
const PICTURES: u64 = 5;

/// The bytes of attachment `aid`'s picture, or `None` when its file was
/// deleted (404). Attachments whose ids agree modulo [`PICTURES`] show the
/// same picture, byte for byte: the same meme or screenshot posted again.
pub(crate) fn attachment_bytes(aid: u64) -> Option<Vec<u8>> {
    if aid % 11 == 5 {
        return None;
    }
    let picture = aid % PICTURES;
    let mut r = rng(&[0x1_14C5_1A6E, picture]);
    // A JPEG's start (SOI, a JFIF APP0 segment) and end (EOI) around
    // bytes that differ per picture; sizes between 1.5 and 6 KB.
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00];
    let len = 1536 + 1024 * picture as usize + r.usize(0..512);
    out.extend((0..len).map(|_| r.u8(..)));
    out.extend_from_slice(&[0xFF, 0xD9]);
    Some(out)
}

fn attachment_name(aid: u64) -> String {
    format!("IMG_{aid}.jpg")
}

/// A quote's words as Discuz! X shows them: the quoted post's first 40
/// characters, and ` ...` when it had more.
fn dzx_quoted_text(quoted: &Post) -> String {
    let text: String = quoted.paragraphs.join(" ");
    let mut cut: String = text.chars().take(40).collect();
    if cut.len() < text.len() {
        cut.push_str(" ...");
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times_follow_dgmdate() {
        let at = |y, m, d, hh, mm| shown_time(minutes_of(y, m, d, hh, mm));
        assert_eq!(at(2024, 6, 30, 23, 10), "<span title=\"2024-6-30 23:10\">刚刚</span>");
        assert_eq!(at(2024, 6, 30, 22, 55), "<span title=\"2024-6-30 22:55\">15&nbsp;分钟前</span>");
        assert_eq!(at(2024, 6, 30, 22, 30), "<span title=\"2024-6-30 22:30\">半小时前</span>");
        assert_eq!(at(2024, 6, 30, 20, 5), "<span title=\"2024-6-30 20:05\">3&nbsp;小时前</span>");
        assert_eq!(at(2024, 6, 29, 8, 1), "<span title=\"2024-6-29 08:01\">昨天&nbsp;08:01</span>");
        assert_eq!(at(2024, 6, 28, 23, 59), "<span title=\"2024-6-28 23:59\">前天&nbsp;23:59</span>");
        assert_eq!(at(2024, 6, 28, 0, 0), "<span title=\"2024-6-28 00:00\">3&nbsp;天前</span>");
        assert_eq!(at(2024, 6, 27, 0, 0), "<span title=\"2024-6-27 00:00\">4&nbsp;天前</span>");
        assert_eq!(at(2024, 6, 24, 0, 0), "<span title=\"2024-6-24 00:00\">7&nbsp;天前</span>");
        assert_eq!(at(2024, 6, 23, 0, 1), "<span title=\"2024-6-23 00:01\">7&nbsp;天前</span>");
        assert_eq!(at(2024, 6, 23, 0, 0), "2024-6-23 00:00");
        assert_eq!(at(2024, 6, 29, 0, 0), "<span title=\"2024-6-29 00:00\">前天&nbsp;00:00</span>");
        assert_eq!(at(2024, 3, 5, 9, 4), "2024-3-5 09:04");
        // Later than the clock (a post added while serving): absolute.
        assert_eq!(at(2024, 7, 1, 0, 1), "2024-7-1 00:01");
    }

    #[test]
    fn extra_names_the_list_page() {
        assert_eq!(extra_page(Some("page%3D3")), 3);
        assert_eq!(extra_page(Some("page%3D2%26filter%3Dlastpost")), 2);
        assert_eq!(extra_page(None), 1);
        assert_eq!(extra_page(Some("junk")), 1);
    }
}
