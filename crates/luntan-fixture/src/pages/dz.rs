//! Discuz! X3 (site id `dz`): table layouts and ids, `forum.php?mod=…`
//! URLs, GBK bytes declared `gb2312` in a meta tag only. Its pager is the
//! one Discuz! X3.4 ([`super::dzx`]) draws too.

use std::fmt::Write as _;

use super::{esc, href, link, pager_parts, PagerPart, Query, Routed, Shown, AD_URL};
use crate::model::{BoardMeta, Fixture, ForumModel, Post, ThreadMeta};
use crate::text::civil;

/// Discuz! links are relative to `/dz/`.
fn rel(path: &str) -> &str {
    path.strip_prefix("/dz/").unwrap_or(path)
}

/// How every Discuz! X page's head opens, up to its generator: the XHTML
/// doctype, the charset label (`charset`: the only place either Discuz!
/// forum declares one) and the title. [`super::dzx`]'s pages open so too.
pub(super) fn head_start(out: &mut String, charset: &str, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n\
<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n\
<meta http-equiv=\"Content-Type\" content=\"text/html; charset={charset}\" />\n<title>"
    );
    esc(out, title);
    out.push_str("</title>\n<meta name=\"generator\" content=\"Discuz! X3.4\" />\n");
}

fn head(out: &mut String, f: &ForumModel, title: &str) {
    head_start(out, "gb2312", title);
    out.push_str(
        "<link rel=\"stylesheet\" type=\"text/css\" href=\"data/cache/style_1_common.css\" />\n\
<script src=\"static/js/common.js\" type=\"text/javascript\"></script>\n</head>\n<body id=\"nv_forum\">\n\
<div id=\"hd\"><div class=\"wp\"><div class=\"hdc cl\"><h2><a href=\"forum.php\" title=\"",
    );
    esc(out, f.kind.name());
    out.push_str("\">");
    esc(out, f.kind.name());
    out.push_str(
        "</a></h2>\n<div id=\"um\"><a href=\"member.php?mod=logging&amp;action=login\">登录</a> | \
<a href=\"member.php?mod=register\">立即注册</a> | <a href=\"javascript:void(0)\" onclick=\"setHomepage()\">设为首页</a></div>\n\
</div></div></div>\n<div id=\"wp\" class=\"wp\">\n",
    );
}

fn foot(out: &mut String) {
    out.push_str(
        "</div>\n<div id=\"ft\" class=\"wp cl\"><div id=\"flk\" class=\"y\"><p><a href=\"http://www.discuz.invalid/\" target=\"_blank\">Powered by Discuz! X3.4</a>\
<span class=\"pipe\">|</span><a href=\"javascript:void(0)\" onclick=\"showWindow('miscreport')\">举报</a></p></div></div>\n</body>\n</html>\n",
    );
}

fn crumbs(out: &mut String, f: &ForumModel, b: &BoardMeta, t: Option<&ThreadMeta>) {
    out.push_str("<div id=\"pt\" class=\"bm cl\"><div class=\"z\"><a href=\"forum.php\">");
    esc(out, f.kind.name());
    out.push_str("</a> <em>&rsaquo;</em> <a href=\"");
    href(out, rel(&f.board_path(b, 1)));
    out.push_str("\">");
    esc(out, &b.title);
    out.push_str("</a>");
    if let Some(t) = t {
        out.push_str(" <em>&rsaquo;</em> <a href=\"");
        href(out, rel(&f.thread_path(t, 1)));
        out.push_str("\">");
        esc(out, &t.title);
        out.push_str("</a>");
    }
    out.push_str("</div></div>\n");
}

/// Discuz!'s pager; `url(k)` gives page k's link (page 1 included as `&page=1`).
pub(super) fn pager(out: &mut String, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    if pages <= 1 {
        return;
    }
    out.push_str("<div class=\"pg\">");
    let jump = format!(
        "<label><input type=\"text\" name=\"custompage\" class=\"px\" size=\"2\" title=\"输入页码，按回车快速跳转\" value=\"{page}\" />\
<span title=\"共 {pages} 页\"> / {pages} 页</span></label>"
    );
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => link(out, "<a href=\"", &url(k), "\" class=\"prev\">&nbsp;&nbsp;</a>"),
            First => link(out, "<a href=\"", &url(1), "\" class=\"first\">1 ...</a>"),
            Current(k) => {
                let _ = write!(out, "<strong>{k}</strong>");
            }
            Number(k) => link(out, "<a href=\"", &url(k), &format!("\">{k}</a>")),
            Last(k) => link(out, "<a href=\"", &url(k), &format!("\" class=\"last\">... {k}</a>")),
            Next(k) => {
                out.push_str(&jump);
                link(out, "<a href=\"", &url(k), "\" class=\"nxt\">下一页</a>");
            }
        }
    }
    if page == pages {
        out.push_str(&jump);
    }
    out.push_str("</div>");
}

/// How a Discuz! list row's author and last-poster cells open: the name,
/// linked to the poster's space; the `<em>` with when follows. Discuz!
/// X3.4 ([`super::dzx`]) writes its rows' cells so too.
pub(super) fn by_cell(out: &mut String, uid: u64, name: &str) {
    let _ = write!(out, "<td class=\"by\"><cite><a href=\"home.php?mod=space&amp;uid={uid}\" c=\"1\">");
    esc(out, name);
    out.push_str("</a></cite>");
}

pub(super) fn gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(2048);
    head(&mut out, f, &format!("提示信息 - {}", f.kind.name()));
    out.push_str(
        "<div id=\"ct\" class=\"wp cl w\"><div class=\"nfl\"><div class=\"f_c altw\"><div id=\"messagetext\" class=\"alert_error\">\
<p>抱歉，指定的主题不存在或已被删除或正在被审核</p><p class=\"alert_btnleft\"><a href=\"javascript:history.back()\">[ 点击这里返回上一页 ]</a></p>\
</div></div></div></div>\n",
    );
    foot(&mut out);
    out
}

impl Fixture {
    pub(super) fn route_dz(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        if rest != "forum.php" {
            return Routed::NotFound;
        }
        match q.get("mod") {
            None if q.is_empty() => Routed::Page(self.dz_home(f), Shown::Home),
            Some("forumdisplay") if q.only(&["mod", "fid", "page"]) => {
                if self.crafted(q.get("fid")) {
                    return self.decoy_list(f);
                }
                self.list_route(f, q.get("fid").and_then(|id| f.board(id)), q.number("page", 1))
            }
            Some("viewthread") if q.only(&["mod", "tid", "page"]) => {
                if self.crafted(q.get("tid")) {
                    return self.decoy_thread(f);
                }
                self.thread_route(f, q.get("tid").and_then(|id| id.parse().ok()).and_then(|id| f.thread(id)), q.number("page", 1))
            }
            _ => Routed::NotFound,
        }
    }

    fn dz_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        head(&mut out, f, &format!("{} -  Powered by Discuz!", f.kind.name()));
        out.push_str(
            "<div class=\"a_t\"><a href=\"http://ads.example.invalid/click?id=1\" target=\"_blank\">\
<img src=\"http://ads.example.invalid/banner.gif\" alt=\"广告：暑期特惠\" /></a></div>\n\
<div id=\"ct\" class=\"wp cl\"><div class=\"mn\">\n<div class=\"fl bm\"><div class=\"bm bmw flg cl\"><div class=\"bm_h cl\"><h2>校园论坛</h2></div>\n\
<div class=\"bm_c\"><table cellspacing=\"0\" cellpadding=\"0\" class=\"fl_tb\">\n",
        );
        for b in &f.boards {
            let posts = f.board_posts(b);
            out.push_str("<tr><td class=\"fl_g\" width=\"100%\"><dl><dt><a href=\"");
            href(&mut out, rel(&f.board_path(b, 1)));
            out.push_str("\">");
            esc(&mut out, &b.title);
            let _ = writeln!(out, "</a></dt><dd><em>主题: {}</em>, <em>帖数: {posts}</em></dd></dl></td></tr>", b.order.len());
        }
        out.push_str(
            "</table></div></div></div>\n</div></div>\n<div class=\"bm lk\"><div class=\"bm_c\">\
<a href=\"javascript:void(0)\" onclick=\"showWindow('login')\">快速登录</a> <a href=\"",
        );
        out.push_str(AD_URL);
        out.push_str("\" target=\"_blank\">合作伙伴</a> <a href=\"mailto:admin@example.invalid\">联系我们</a></div></div>\n");
        foot(&mut out);
        out
    }

    pub(super) fn dz_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let mut out = String::with_capacity(24 * 1024);
        head(&mut out, f, &format!("{} - {} -  Powered by Discuz!", b.title, f.kind.name()));
        crumbs(&mut out, f, b, None);
        out.push_str("<div class=\"bm bml pbn\"><div class=\"bm_h cl\"><h1 class=\"xs2\"><a href=\"");
        href(&mut out, rel(&f.board_path(b, 1)));
        out.push_str("\">");
        esc(&mut out, &b.title);
        let _ = writeln!(out, "</a> <span class=\"xs1 xw0 i\">主题: <strong class=\"xi1\">{}</strong></span></h1></div></div>", b.order.len());
        let url = |k: usize| format!("forum.php?mod=forumdisplay&fid={}&page={k}", b.id);
        out.push_str("<div id=\"pgt\" class=\"bm bw0 pgs cl\"><span id=\"fd_page_top\">");
        pager(&mut out, page, pages, url);
        let _ = write!(
            out,
            "</span></div>\n<div id=\"threadlist\" class=\"tl bm bmw\"><div class=\"bm_c\">\
<form method=\"post\" autocomplete=\"off\" name=\"moderate\" id=\"moderate\" action=\"forum.php?mod=topicadmin&amp;action=moderate&amp;fid={}&amp;infloat=yes&amp;nopost=yes\">\n\
<table summary=\"forum_{}\" cellspacing=\"0\" cellpadding=\"0\" id=\"threadlisttableid\">\n\
<tbody><tr class=\"th\"><td class=\"icn\">&nbsp;</td><th>标题</th><td class=\"by\">作者</td><td class=\"num\">回复/查看</td><td class=\"by\">最后发表</td></tr></tbody>\n\
<tbody id=\"separatorline\" class=\"emptb\"><tr><td class=\"icn\"></td><th class=\"common\"></th><td class=\"by\"></td><td class=\"num\"></td><td class=\"by\"></td></tr></tbody>\n",
            b.id, b.id
        );
        let size = f.kind.list_page_size();
        for &i in b.order.iter().skip((page - 1) * size).take(size) {
            let t = &f.threads[i as usize];
            let (author, uid) = self.author(f, t, 1);
            let (last, last_uid) = self.author(f, t, t.posts);
            let first_time = self.post_times(f, t)[0];
            let link = rel(&f.thread_path(t, 1)).to_owned();
            let _ = write!(out, "<tbody id=\"normalthread_{}\">\n<tr>\n<td class=\"icn\"><a href=\"", t.tid);
            href(&mut out, &link);
            out.push_str(
                "\" title=\"新窗口打开\" target=\"_blank\"><img src=\"static/image/common/folder_common.gif\" /></a></td>\n<th class=\"common\">\n<a href=\"",
            );
            href(&mut out, &link);
            out.push_str("\" onclick=\"atarget(this)\" class=\"s xst\">");
            esc(&mut out, &t.title);
            out.push_str("</a>\n</th>\n");
            by_cell(&mut out, uid, &author);
            let _ = writeln!(out, "<em><span>{}</span></em></td>", civil(first_time).discuz_date());
            let _ = writeln!(out, "<td class=\"num\"><a class=\"xi2\">{}</a><em>{}</em></td>", t.posts - 1, t.views);
            by_cell(&mut out, last_uid, &last);
            let _ = write!(
                out,
                "<em><a href=\"forum.php?mod=redirect&amp;tid={}&amp;goto=lastpost#lastpost\"><span>{}</span></a></em></td>\n</tr>\n</tbody>\n",
                t.tid,
                civil(t.last_post).discuz()
            );
        }
        out.push_str("</table></form></div></div>\n<div class=\"bm bw0 pgs cl\"><span id=\"fd_page_bottom\">");
        pager(&mut out, page, pages, url);
        out.push_str("</span></div>\n");
        foot(&mut out);
        out
    }

    pub(super) fn dz_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(32 * 1024);
        head(&mut out, f, &format!("{} - {} - {} -  Powered by Discuz!", t.title, b.title, f.kind.name()));
        crumbs(&mut out, f, b, Some(t));
        let url = |k: usize| format!("forum.php?mod=viewthread&tid={}&page={k}", t.tid);
        out.push_str("<div id=\"pgt\" class=\"pgs mbm cl \"><div class=\"pgt\">");
        pager(&mut out, page, pages, url);
        out.push_str("</div><span class=\"y pgb\"><a href=\"");
        href(&mut out, rel(&f.board_path(b, 1)));
        out.push_str("\">返回列表</a></span></div>\n<div id=\"postlist\" class=\"pl bm\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"pls ptn pbn\"><div class=\"hm ptn\">");
        let _ = write!(
            out,
            "<span class=\"xg1\">查看:</span> <span class=\"xi1\">{}</span><span class=\"pipe\">|</span><span class=\"xg1\">回复:</span> <span class=\"xi1\">{}</span>",
            t.views,
            t.posts - 1
        );
        out.push_str("</div></td>\n<td class=\"plc ptm pbn vwthd\"><h1 class=\"ts\"><span id=\"thread_subject\">");
        esc(&mut out, &t.title);
        out.push_str("</span></h1></td></tr></table>\n");
        for p in &posts {
            self.dz_post(&mut out, t, p);
        }
        out.push_str("</div>\n<div class=\"pgs mtm mbm cl\">");
        pager(&mut out, page, pages, url);
        out.push_str("</div>\n");
        foot(&mut out);
        out
    }

    fn dz_post(&self, out: &mut String, t: &ThreadMeta, p: &Post) {
        let pid = p.pid;
        let _ = write!(
            out,
            "<div id=\"post_{pid}\" >\n<table id=\"pid{pid}\" class=\"plhin\" summary=\"pid{pid}\" cellspacing=\"0\" cellpadding=\"0\">\n<tr>\n\
<td class=\"pls\" rowspan=\"2\">\n<div class=\"pi\"><div class=\"authi\"><a href=\"home.php?mod=space&amp;uid={}\" target=\"_blank\" class=\"xw1\">",
            p.uid
        );
        esc(out, &p.author);
        let _ = write!(
            out,
            "</a></div></div>\n</td>\n<td class=\"plc\">\n<div class=\"pi\">\n\
<strong><a href=\"forum.php?mod=redirect&amp;goto=findpost&amp;ptid={}&amp;pid={pid}\" id=\"postnum{pid}\"><em>{}#</em></a></strong>\n\
<div class=\"pti\"><div class=\"authi\"><em id=\"authorposton_{pid}\">发表于 {}</em><span class=\"pipe\">|</span>\
<a href=\"forum.php?mod=viewthread&amp;tid={}&amp;page=1&amp;authorid={}\" rel=\"nofollow\">只看该作者</a></div></div>\n</div>\n\
<div class=\"pct\"><div class=\"pcb\"><div class=\"t_fsz\">\n<table cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"t_f\" id=\"postmessage_{pid}\">\n",
            t.tid,
            p.floor,
            civil(p.time).discuz(),
            t.tid,
            p.uid
        );
        let sep = if p.variant { "<br />\r\n" } else { "<br />" };
        for (i, para) in p.paragraphs.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            esc(out, para);
        }
        out.push_str("</td></tr></table>\n</div></div></div>\n</td></tr>\n</table>\n</div>\n");
    }
}
