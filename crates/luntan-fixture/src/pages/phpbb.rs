//! phpBB 3 (site id `phpbb`): prosilver's lists, `viewforum.php` and
//! `viewtopic.php` paged by offset, Big5 declared in the header and a meta.
//! Posts are `div.post` with id `p{pid}`, authors link
//! `memberlist.php?mode=viewprofile&u={uid}`; some replies quote an earlier
//! post as phpBB 3.3 does (`<blockquote cite=…><div><cite>` naming the
//! post and its author, then its words), some posts end with a
//! `<div class="notice">最後由 … 於 … 編輯…</div>` ([`Fixture::phpbb_truth`]).

use std::fmt::Write as _;

use super::{esc, href, link, pager_parts, PagerPart, Query, Routed, Shown, AD_URL};
use crate::model::{BoardMeta, Fixture, ForumModel, Post, QuoteTruth, ThreadMeta, ThreadTruth};
use crate::text::{civil, rng};

/// phpBB links are `./page.php` relative to `/phpbb/`.
fn rel(path: &str) -> String {
    format!("./{}", path.strip_prefix("/phpbb/").unwrap_or(path))
}

fn time(out: &mut String, minutes: u32) {
    let c = civil(minutes);
    let _ = write!(out, "<time datetime=\"{}+08:00\">{}</time>", c.iso(), c.chinese());
}

fn head(out: &mut String, f: &ForumModel, title: &str, section: &str) {
    out.push_str(
        "<!DOCTYPE html>\n<html dir=\"ltr\" lang=\"zh-tw\">\n<head>\n<meta charset=\"big5\" />\n\
<meta http-equiv=\"X-UA-Compatible\" content=\"IE=edge\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n<title>",
    );
    esc(out, title);
    let _ = write!(
        out,
        "</title>\n<link href=\"./styles/prosilver/theme/stylesheet.css?assets_version=3\" rel=\"stylesheet\">\n</head>\n\
<body id=\"phpbb\" class=\"nojs notouch section-{section} ltr \">\n<div id=\"wrap\" class=\"wrap\">\n<a id=\"top\" class=\"top-anchor\" accesskey=\"t\"></a>\n\
<div id=\"page-header\"><div class=\"headerbar\" role=\"banner\"><div class=\"inner\"><div id=\"site-description\" class=\"site-description\">\
<a id=\"logo\" class=\"logo\" href=\"./index.php\" title=\"首頁\"><span class=\"site_logo\"></span></a><h1>"
    );
    esc(out, f.kind.name());
    out.push_str("</h1><p>以詩會友，以文載道</p></div></div></div>\n<div class=\"navbar\" role=\"navigation\"><ul class=\"nav-main linklist\">\
<li><a href=\"./faq.php\" rel=\"help\">常見問題</a></li><li><a href=\"./ucp.php?mode=login\">登入</a></li>\
<li><a href=\"javascript:void(0)\" data-skip-responsive=\"true\">快速連結</a></li></ul></div></div>\n<div id=\"page-body\" class=\"page-body\" role=\"main\">\n");
}

fn foot(out: &mut String) {
    out.push_str(
        "</div>\n<div id=\"page-footer\" class=\"page-footer\" role=\"contentinfo\"><div class=\"copyright\">Powered by \
<a href=\"https://www.phpbb.invalid/\">phpBB</a>&reg; Forum Software &copy; phpBB Limited</div></div>\n</div>\n</body>\n</html>\n",
    );
}

/// phpBB's pagination; `url(k)` gives page k's link, page 1 without `start`.
fn pager(out: &mut String, label: &str, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    out.push_str("<div class=\"pagination\">\n");
    out.push_str(label);
    if pages > 1 {
        out.push_str("\n<ul>\n");
        const ELLIPSIS: &str = "<li class=\"ellipsis\" role=\"separator\"><span>…</span></li>\n";
        for part in pager_parts(page, pages) {
            match part {
                // The previous link names offset 0 where the numbers omit it,
                // as some phpBB versions do: both forms must mean page 1.
                Prev(1) => link(
                    out,
                    "<li class=\"arrow previous\"><a class=\"button button-icon-only\" href=\"",
                    &format!("{}&start=0", url(1)),
                    "\" rel=\"prev\" role=\"button\">上一頁</a></li>\n",
                ),
                Prev(k) => link(
                    out,
                    "<li class=\"arrow previous\"><a class=\"button button-icon-only\" href=\"",
                    &url(k),
                    "\" rel=\"prev\" role=\"button\">上一頁</a></li>\n",
                ),
                First => link(out, "<li><a class=\"button\" href=\"", &url(1), &format!("\" role=\"button\">1</a></li>\n{ELLIPSIS}")),
                Current(k) => {
                    let _ = writeln!(out, "<li class=\"active\"><span>{k}</span></li>");
                }
                Number(k) => link(out, "<li><a class=\"button\" href=\"", &url(k), &format!("\" role=\"button\">{k}</a></li>\n")),
                Last(k) => link(out, &format!("{ELLIPSIS}<li><a class=\"button\" href=\""), &url(k), &format!("\" role=\"button\">{k}</a></li>\n")),
                Next(k) => link(
                    out,
                    "<li class=\"arrow next\"><a class=\"button button-icon-only\" href=\"",
                    &url(k),
                    "\" rel=\"next\" role=\"button\">下一頁</a></li>\n",
                ),
            }
        }
        out.push_str("</ul>");
    } else {
        out.push_str(" &bull; 第 <strong>1</strong> 頁 (共 <strong>1</strong> 頁)");
    }
    out.push_str("\n</div>\n");
}

/// A list's or a topic's heading: its name, linked to its first page.
fn heading(out: &mut String, class: &str, path: &str, name: &str) {
    let _ = write!(out, "<h2 class=\"{class}\"><a href=\"");
    href(out, &rel(path));
    out.push_str("\">");
    esc(out, name);
    out.push_str("</a></h2>\n");
}

pub(super) fn gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(2048);
    head(&mut out, f, &format!("資訊 - {}", f.kind.name()), "viewtopic");
    out.push_str(
        "<div id=\"message\" class=\"panel\"><div class=\"inner\"><h2 class=\"message-title\">資訊</h2>\
<p>您要求的主題不存在。</p></div></div>\n",
    );
    foot(&mut out);
    out
}

impl Fixture {
    /// What else a phpBB post shows, decided per post: a quote of an
    /// earlier floor, and a "last edited" notice (minutes after the post,
    /// how many edits). One decision for the page and the truth.
    fn phpbb_extras(&self, f: &ForumModel, t: &ThreadMeta, p: &Post) -> (Option<Post>, Option<(u32, u32)>) {
        let mut r = rng(&[self.config().seed, f.kind.code(), t.tid, u64::from(p.floor), 0x9B_B0D7]);
        let quoted = match p.floor > 1 && r.u32(0..6) == 0 {
            true => {
                let q = r.u32(1..p.floor);
                self.posts(f, t, q..=q).pop()
            }
            false => None,
        };
        let edited = (r.u32(0..7) == 0).then(|| (r.u32(1..300), r.u32(1..4)));
        (quoted, edited)
    }

    /// What phpBB's topic pages show of thread `t` beyond v1's fields, into
    /// its truth: the board the "回到" link names, and per post its id, the
    /// author's profile, the quote and the post it answers, the edit notice.
    pub(crate) fn phpbb_truth(&self, f: &ForumModel, t: &ThreadMeta, truth: &mut ThreadTruth) {
        truth.board_name = Some(f.boards[t.board as usize].title.clone());
        let posts = if t.deleted { Vec::new() } else { self.posts(f, t, 1..=t.posts) };
        for (want, p) in truth.posts.iter_mut().zip(&posts) {
            let (quoted, edited) = self.phpbb_extras(f, t, p);
            want.id = Some(p.pid.to_string());
            want.author_id = Some(p.uid.to_string());
            want.author_path = Some(format!("/phpbb/memberlist.php?mode=viewprofile&u={}", p.uid));
            want.edited = edited.map(|(m, _)| civil(p.time + m).iso());
            if let Some(q) = quoted {
                want.reply_to = Some(q.pid.to_string());
                want.quotes = vec![QuoteTruth { floor: p.floor, of: Some(q.pid.to_string()), author: Some(q.author.clone()), text: q.paragraphs.join("\n") }];
            }
        }
    }

    pub(super) fn route_phpbb(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        // phpBB pages by offset; only offsets that start a page exist here.
        let page_of = |start: Option<usize>, size: usize| match start {
            Some(s) if s % size == 0 => Some(s / size + 1),
            _ => None,
        };
        match rest {
            "index.php" if q.is_empty() => Routed::Page(self.phpbb_home(f), Shown::Home),
            "viewforum.php" if q.only(&["f", "start"]) => {
                if self.crafted(q.get("f")) {
                    return self.decoy_list(f);
                }
                self.list_route(f, q.get("f").and_then(|id| f.board(id)), page_of(q.number("start", 0), f.kind.list_page_size()))
            }
            "viewtopic.php" if q.only(&["t", "start"]) => {
                if self.crafted(q.get("t")) {
                    return self.decoy_thread(f);
                }
                self.thread_route(
                    f,
                    q.get("t").and_then(|id| id.parse().ok()).and_then(|id| f.thread(id)),
                    page_of(q.number("start", 0), f.kind.thread_page_size()),
                )
            }
            _ => Routed::NotFound,
        }
    }

    fn phpbb_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        head(&mut out, f, &format!("{} - 首頁", f.kind.name()), "index");
        out.push_str(
            "<div class=\"forabg\"><div class=\"inner\"><ul class=\"topiclist\"><li class=\"header\"><dl class=\"row-item\">\
<dt><div class=\"list-inner\"><a href=\"./index.php\">詩詞</a></div></dt><dd class=\"topics\">主題</dd><dd class=\"posts\">文章</dd>\
<dd class=\"lastpost\"><span>最後發表</span></dd></dl></li></ul>\n<ul class=\"topiclist forums\">\n",
        );
        for b in &f.boards {
            let posts = f.board_posts(b);
            out.push_str("<li class=\"row\"><dl class=\"row-item forum_read\"><dt title=\"沒有未讀文章\"><div class=\"list-inner\"><a href=\"");
            href(&mut out, &rel(&f.board_path(b, 1)));
            out.push_str("\" class=\"forumtitle\">");
            esc(&mut out, &b.title);
            let _ = writeln!(
                out,
                "</a><br />討論區說明</div></dt><dd class=\"topics\">{} <dfn>主題</dfn></dd><dd class=\"posts\">{posts} <dfn>文章</dfn></dd></dl></li>",
                b.order.len()
            );
        }
        out.push_str("</ul></div></div>\n<div class=\"stat-block\"><p><a href=\"");
        out.push_str(AD_URL);
        out.push_str("\" rel=\"sponsored\">贊助商連結</a> &bull; <a href=\"javascript:void(0)\" onclick=\"return false\">標記所有版面已讀</a></p></div>\n");
        foot(&mut out);
        out
    }

    pub(super) fn phpbb_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let size = f.kind.list_page_size();
        let mut out = String::with_capacity(24 * 1024);
        head(&mut out, f, &format!("{} - {}", b.title, f.kind.name()), "viewforum");
        heading(&mut out, "forum-title", &f.board_path(b, 1), &b.title);
        let url = |k: usize| rel(&f.board_path(b, k));
        let label = format!("{} 個主題", b.order.len());
        out.push_str("<div class=\"action-bar bar-top\">");
        pager(&mut out, &label, page, pages, url);
        out.push_str(
            "</div>\n<div class=\"forumbg\"><div class=\"inner\">\n<ul class=\"topiclist\"><li class=\"header\"><dl class=\"row-item\">\
<dt><div class=\"list-inner\">主題</div></dt><dd class=\"posts\">回覆</dd><dd class=\"views\">點閱</dd><dd class=\"lastpost\"><span>最後發表</span></dd>\
</dl></li></ul>\n<ul class=\"topiclist topics\">\n",
        );
        for (n, &i) in b.order.iter().skip((page - 1) * size).take(size).enumerate() {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first_time = self.post_times(f, t)[0];
            let _ = write!(
                out,
                "<li class=\"row bg{}\">\n<dl class=\"row-item topic_read\">\n<dt title=\"沒有未讀文章\"><div class=\"list-inner\">\n<a href=\"",
                n % 2 + 1
            );
            href(&mut out, &rel(&f.thread_path(t, 1)));
            out.push_str("\" class=\"topictitle\">");
            esc(&mut out, &t.title);
            let _ = write!(
                out,
                "</a><br />\n<div class=\"responsive-hide left-box\">由 <a href=\"./memberlist.php?mode=viewprofile&amp;u={uid}\" class=\"username\">"
            );
            esc(&mut out, &author);
            out.push_str("</a> &raquo; ");
            time(&mut out, first_time);
            let _ = write!(
                out,
                "</div>\n</div></dt>\n<dd class=\"posts\">{}</dd>\n<dd class=\"views\">{}</dd>\n\
<dd class=\"lastpost\"><span><dfn>最後發表 </dfn>由 <a href=\"./memberlist.php?mode=viewprofile&amp;u={last_uid}\" class=\"username\">",
                t.posts - 1,
                t.views
            );
            esc(&mut out, &last);
            out.push_str("</a><br />");
            time(&mut out, t.last_post);
            out.push_str("</span></dd>\n</dl>\n</li>\n");
        }
        out.push_str("</ul>\n</div></div>\n<div class=\"action-bar bar-bottom\">");
        pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n");
        foot(&mut out);
        out
    }

    pub(super) fn phpbb_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(32 * 1024);
        head(&mut out, f, &format!("{} - {}", t.title, f.kind.name()), "viewtopic");
        heading(&mut out, "topic-title", &f.thread_path(t, 1), &t.title);
        let url = |k: usize| rel(&f.thread_path(t, k));
        let label = format!("{} 篇文章", t.posts);
        out.push_str("<div class=\"action-bar bar-top\">");
        pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n");
        for (n, p) in posts.iter().enumerate() {
            let pid = p.pid;
            let _ = write!(
                out,
                "<div id=\"p{pid}\" class=\"post has-profile bg{}\">\n<div class=\"inner\">\n<dl class=\"postprofile\" id=\"profile{pid}\">\n\
<dt class=\"has-profile-rank no-avatar\"><a href=\"./memberlist.php?mode=viewprofile&amp;u={}\" class=\"username\">",
                n % 2 + 1,
                p.uid
            );
            esc(&mut out, &p.author);
            let _ = write!(
                out,
                "</a></dt>\n<dd class=\"profile-posts\"><strong>文章:</strong> {}</dd>\n</dl>\n<div class=\"postbody\">\n<div id=\"post_content{pid}\">\n\
<h3{}><a href=\"#p{pid}\">{}",
                p.uid % 997 + 1,
                if p.floor == 1 { " class=\"first\"" } else { "" },
                if p.floor == 1 { "" } else { "Re: " }
            );
            esc(&mut out, &t.title);
            let _ = write!(
                out,
                "</a></h3>\n<p class=\"author\"><a class=\"unread\" href=\"./viewtopic.php?p={pid}#p{pid}\" title=\"文章\"><span class=\"sr-only\">文章</span></a>\
<span class=\"responsive-hide\">由 <strong><a href=\"./memberlist.php?mode=viewprofile&amp;u={}\" class=\"username\">",
                p.uid
            );
            esc(&mut out, &p.author);
            out.push_str("</a></strong> &raquo; </span>");
            time(&mut out, p.time);
            out.push_str("</p>\n<div class=\"content\">");
            let (quoted, edited) = self.phpbb_extras(f, t, p);
            if let Some(q) = &quoted {
                // phpBB 3.3's quote: the quoted post's link and author in a
                // `<cite>`, then its words.
                let _ = write!(
                    out,
                    "<blockquote cite=\"./viewtopic.php?p={qp}#p{qp}\"><div><cite><a href=\"./memberlist.php?mode=viewprofile&amp;u={}\">",
                    q.uid,
                    qp = q.pid
                );
                esc(&mut out, &q.author);
                let _ = write!(
                    out,
                    "</a> 寫道： <a href=\"./viewtopic.php?p={qp}#p{qp}\" data-post-id=\"{qp}\" onclick=\"if(document.getElementById(hash.substr(1)))href=hash\">↑</a><span class=\"responsive-hide\">{}</span></cite>",
                    civil(q.time).chinese(),
                    qp = q.pid
                );
                for (i, para) in q.paragraphs.iter().enumerate() {
                    if i > 0 {
                        out.push_str("<br>");
                    }
                    esc(&mut out, para);
                }
                out.push_str("</div></blockquote>\n");
            }
            for (i, para) in p.paragraphs.iter().enumerate() {
                if p.variant {
                    out.push_str("<p>");
                    esc(&mut out, para);
                    out.push_str("</p>");
                } else {
                    if i > 0 {
                        out.push_str("<br>");
                    }
                    esc(&mut out, para);
                }
            }
            out.push_str("</div>\n");
            if let Some((minutes, times)) = edited {
                let _ = write!(out, "<div class=\"notice\">最後由 <a href=\"./memberlist.php?mode=viewprofile&amp;u={}\" class=\"username\">", p.uid);
                esc(&mut out, &p.author);
                let _ = writeln!(out, "</a> 於 {} 編輯，總共編輯了 {times} 次。</div>", civil(p.time + minutes).chinese());
            }
            out.push_str("</div>\n</div>\n<div class=\"back2top\"><a href=\"#top\" class=\"top\" title=\"回到頂端\">頂端</a></div>\n</div>\n</div>\n<hr class=\"divider\" />\n");
        }
        out.push_str("<div class=\"action-bar bar-bottom\">");
        pager(&mut out, &label, page, pages, url);
        out.push_str("</div>\n<p class=\"jumpbox-return\"><a href=\"");
        href(&mut out, &rel(&f.board_path(b, 1)));
        out.push_str("\" class=\"left-box arrow-left\" accesskey=\"r\">回到「");
        esc(&mut out, &b.title);
        out.push_str("」</a></p>\n");
        foot(&mut out);
        out
    }
}
