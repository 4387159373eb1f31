//! The modern forum (site id `bbs`): nested divs, undeclared UTF-8,
//! `/bbs/topic/{id}/{slug}/` URLs with Chinese slugs.

use std::fmt::Write as _;

use super::{esc, href, link, pager_parts, PagerPart, Query, Routed, Shown, AD_URL};
use crate::model::{BoardMeta, Fixture, ForumModel, ThreadMeta};
use crate::text::{civil, percent_decode};

fn head(out: &mut String, f: &ForumModel, title: &str) {
    // No charset in the header, no meta, no BOM: readers must detect UTF-8.
    out.push_str("<!doctype html>\n<html lang=\"zh-CN\">\n<head>\n<title>");
    esc(out, title);
    out.push_str(
        "</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<link rel=\"stylesheet\" href=\"/bbs/static/app.css\">\n</head>\n<body>\n<header class=\"site\"><a class=\"logo\" href=\"/bbs/\">",
    );
    esc(out, f.kind.name());
    out.push_str("</a><nav><a href=\"javascript:void(0)\" data-action=\"login\">登录</a> <a href=\"");
    out.push_str(AD_URL);
    out.push_str("?from=bbs\" rel=\"sponsored\">推广</a></nav></header>\n<main>\n");
}

fn foot(out: &mut String) {
    out.push_str("</main>\n<footer><p>新青年论坛 · 畅所欲言 · <a href=\"mailto:admin@example.invalid\">联系我们</a></p></footer>\n</body>\n</html>\n");
}

/// The modern forum's pager: numbers as absolute paths, "next" relative
/// (`?page=N`), thread pages with the slug as raw UTF-8.
fn pager(out: &mut String, page: usize, pages: usize, url: impl Fn(usize) -> String) {
    use PagerPart::*;
    if pages <= 1 {
        return;
    }
    out.push_str("<nav class=\"pager\">");
    for part in pager_parts(page, pages) {
        match part {
            Prev(k) => link(out, "<a rel=\"prev\" href=\"", &url(k), "\">上一页</a> "),
            First => link(out, "<a href=\"", &url(1), "\">1</a> <span class=\"gap\">…</span> "),
            Current(k) => {
                let _ = write!(out, "<span class=\"current\">{k}</span> ");
            }
            Number(k) => link(out, "<a href=\"", &url(k), &format!("\">{k}</a> ")),
            Last(k) => link(out, "<span class=\"gap\">…</span> <a href=\"", &url(k), &format!("\">{k}</a> ")),
            Next(k) => {
                let _ = write!(out, "<a rel=\"next\" href=\"?page={k}\">下一页</a>");
            }
        }
    }
    out.push_str("</nav>\n");
}

pub(super) fn gone(f: &ForumModel) -> String {
    let mut out = String::with_capacity(1024);
    head(&mut out, f, "话题不存在");
    out.push_str("<section class=\"error\"><h1>404</h1><p>这个话题已被删除，或者从来没有存在过。</p><p><a href=\"/bbs/\">返回首页</a></p></section>\n");
    foot(&mut out);
    out
}

impl Fixture {
    pub(super) fn route_bbs(&self, f: &ForumModel, rest: &str, q: &Query) -> Routed {
        if !q.only(&["page"]) {
            return Routed::NotFound;
        }
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            ["board", id, ""] if self.crafted(Some(id)) => self.decoy_list(f),
            ["topic", id, _, ""] if self.crafted(Some(id)) => self.decoy_thread(f),
            [""] if q.is_empty() => Routed::Page(self.bbs_home(f), Shown::Home),
            ["board", id, ""] => self.list_route(f, f.board(id), q.number("page", 1)),
            ["topic", id, slug, ""] => {
                // Clients send the slug percent-encoded or as raw UTF-8; both
                // decode to the same bytes.
                let t = id.parse().ok().and_then(|id| f.thread(id)).filter(|t| percent_decode(slug) == percent_decode(&ForumModel::slug(t)));
                self.thread_route(f, t, q.number("page", 1))
            }
            _ => Routed::NotFound,
        }
    }

    fn bbs_home(&self, f: &ForumModel) -> String {
        let mut out = String::with_capacity(4096);
        head(&mut out, f, f.kind.name());
        out.push_str("<section class=\"intro\"><p>欢迎来到新青年论坛，这里是年轻人交流学习、生活和兴趣爱好的地方。请文明发言，友善讨论。</p></section>\n<ul class=\"boards\">\n");
        for b in &f.boards {
            out.push_str("<li class=\"board\"><a href=\"");
            href(&mut out, &f.board_path(b, 1));
            out.push_str("\">");
            esc(&mut out, &b.title);
            let _ = writeln!(out, "</a> <span class=\"count\">{} 个话题</span></li>", b.order.len());
        }
        out.push_str("</ul>\n");
        foot(&mut out);
        out
    }

    pub(super) fn bbs_list(&self, f: &ForumModel, b: &BoardMeta, page: usize) -> String {
        let pages = f.list_pages(b);
        let size = f.kind.list_page_size();
        let mut out = String::with_capacity(16 * 1024);
        head(&mut out, f, &format!("{} - {}", b.title, f.kind.name()));
        out.push_str("<nav class=\"crumbs\"><a href=\"/bbs/\">首页</a> › <span>");
        esc(&mut out, &b.title);
        out.push_str("</span></nav>\n<h1 class=\"board-title\">");
        esc(&mut out, &b.title);
        out.push_str("</h1>\n<ol class=\"topics\">\n");
        for &i in b.order.iter().skip((page - 1) * size).take(size) {
            let t = &f.threads[i as usize];
            let (author, _) = self.author(f, t, 1);
            let _ = write!(out, "<li class=\"topic\" data-id=\"{}\"><a class=\"title\" href=\"", t.tid);
            href(&mut out, &f.thread_path(t, 1));
            out.push_str("\">");
            esc(&mut out, &t.title);
            out.push_str("</a> <span class=\"meta\"><span class=\"author\">");
            esc(&mut out, &author);
            let _ = writeln!(
                out,
                "</span> · <span class=\"replies\">{}</span> 回复 · <time class=\"last-post\">{}</time></span></li>",
                t.posts - 1,
                civil(t.last_post).padded()
            );
        }
        out.push_str("</ol>\n");
        pager(&mut out, page, pages, |k| f.board_path(b, k));
        foot(&mut out);
        out
    }

    pub(super) fn bbs_thread(&self, f: &ForumModel, t: &ThreadMeta, page: usize) -> String {
        let (b, pages, posts) = self.thread_page(f, t, page);
        let mut out = String::with_capacity(24 * 1024);
        head(&mut out, f, &format!("{} - {}", t.title, f.kind.name()));
        out.push_str("<nav class=\"crumbs\"><a href=\"/bbs/\">首页</a> › <a href=\"");
        href(&mut out, &f.board_path(b, 1));
        out.push_str("\">");
        esc(&mut out, &b.title);
        out.push_str("</a></nav>\n<h1 class=\"topic-title\">");
        esc(&mut out, &t.title);
        out.push_str("</h1>\n<section class=\"posts\">\n");
        for p in &posts {
            let _ = write!(out, "<article class=\"post\" id=\"p{}\" data-floor=\"{}\"><header><span class=\"name\">", p.floor, p.floor);
            esc(&mut out, &p.author);
            let _ = write!(
                out,
                "</span><time>{}</time><span class=\"floor\">#{}</span></header><div class=\"body\"><div class=\"inner\">",
                civil(p.time).padded(),
                p.floor
            );
            for para in &p.paragraphs {
                out.push_str("<p>");
                esc(&mut out, para);
                out.push_str("</p>");
            }
            out.push_str("</div></div></article>\n");
        }
        out.push_str("</section>\n");
        // Raw UTF-8 slugs here (lists use the percent-encoded form): a reader
        // that decoded the page wrongly gets these links wrong too.
        let raw_slug = String::from_utf8_lossy(&percent_decode(&ForumModel::slug(t))).into_owned();
        pager(&mut out, page, pages, |k| {
            let path = f.thread_path(t, k);
            path.replacen(&ForumModel::slug(t), &raw_slug, 1)
        });
        foot(&mut out);
        out
    }
}

/// For tests: a slug written raw, as the thread pagers link it.
#[cfg(test)]
pub(crate) fn raw_slug_path(path: &str) -> String {
    String::from_utf8_lossy(&percent_decode(path)).into_owned()
}
