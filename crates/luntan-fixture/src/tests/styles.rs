//! The forums served only when asked for ([`ForumKind::EXTRA`]): Discuz!
//! X with rewritten URLs (`dzx`), a PHPWind-style forum (`nx`) and a
//! NodeBB-style one as served without JavaScript (`md`). Not there by
//! default; their URL shapes and lookalike links; and the checks the three
//! default forums get (a site-file-driven crawl, truth against pages, lists).

use std::collections::HashMap;

use super::{
    between, board_lists_match, decode, forum_truth, get, hrefs, md_local_time, parse_site, read_posts, site_file_driven_crawl, truth_matches_pages, unescape,
    SeenPost,
};
use crate::{Fixture, FixtureConfig, FixtureServer, ForumKind, ForumTruth, Hostility, PermanentFault, ThreadTruth};

fn extra(threads: usize, boards: usize) -> FixtureConfig {
    FixtureConfig { threads, boards, forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() }
}

fn one(kind: ForumKind, threads: usize, boards: usize) -> FixtureConfig {
    FixtureConfig { threads, boards, forums: vec![kind], ..FixtureConfig::default() }
}

/// A fixture serving `kind` alone, and that forum's truth.
fn alone(kind: ForumKind, threads: usize, boards: usize) -> (Fixture, ForumTruth) {
    let fx = Fixture::new(one(kind, threads, boards));
    let ft = forum_truth(&fx.truth(), kind).clone();
    (fx, ft)
}

/// The list page of its board that shows thread `t` (from the truth's order).
fn list_page_of(fx: &Fixture, kind: ForumKind, t: &ThreadTruth) -> usize {
    let truth = fx.truth();
    let b = forum_truth(&truth, kind).boards.iter().find(|b| b.board == t.board).unwrap();
    b.threads.iter().position(|id| *id == t.thread).unwrap() / kind.list_page_size() + 1
}

fn page_html(fx: &Fixture, kind: ForumKind, path: &str) -> String {
    let r = fx.get(path);
    assert_eq!(r.status, 200, "{path}");
    decode(kind, &r.body)
}

fn posts_at(fx: &Fixture, kind: ForumKind, path: &str) -> Vec<SeenPost> {
    read_posts(kind, &page_html(fx, kind, path))
}

#[test]
fn the_default_fixture_serves_only_the_three_forums() {
    assert_eq!(FixtureConfig::default().forums, ForumKind::ALL.to_vec());
    assert_eq!(ForumKind::EVERY[..3], ForumKind::ALL);
    assert_eq!(ForumKind::EVERY[3..], ForumKind::EXTRA);
    for kind in ForumKind::EVERY {
        assert_eq!(ForumKind::from_site_id(kind.site_id()), Some(kind));
    }
    let fx = Fixture::new(FixtureConfig { threads: 40, ..FixtureConfig::default() });
    assert_eq!(fx.forums().collect::<Vec<_>>(), ForumKind::ALL);
    assert_eq!(fx.truth().forums.len(), 3);
    for p in ["/dzx/forum.php", "/dzx/forum-1-1.html", "/nx/index.php", "/nx/thread.php?fid=1", "/md/", "/md/recent"] {
        assert_eq!(fx.get(p).status, 404, "{p}");
    }
    let robots = String::from_utf8(fx.get("/robots.txt").body).unwrap();
    assert_eq!(robots, crate::ROBOTS_TXT, "the default robots.txt is unchanged");
    let dir = tempfile::tempdir().unwrap();
    let written = crate::write_site_files(&FixtureConfig::default(), "http://127.0.0.1:1/", dir.path()).unwrap();
    assert_eq!(written.len(), 3);
    // Asked for, the extra forums come with their own site files and robots lines.
    let both = Fixture::new(FixtureConfig { forums: ForumKind::EVERY.to_vec(), ..extra(40, 2) });
    assert_eq!(both.truth().forums.iter().map(|f| f.site.as_str()).collect::<Vec<_>>(), ["dz", "phpbb", "bbs", "dzx", "nx", "md"]);
    let robots = String::from_utf8(both.get("/robots.txt").body).unwrap();
    assert!(robots.starts_with(crate::ROBOTS_TXT));
    assert!(robots.contains("Disallow: /dzx/forum.php?mod=redirect*\n") && robots.contains("Disallow: /nx/post.php\n"), "{robots}");
    assert!(robots.contains("Disallow: /md/admin/\n"), "{robots}");
    let dir = tempfile::tempdir().unwrap();
    let written = crate::write_site_files(both.config(), "http://127.0.0.1:1/", dir.path()).unwrap();
    let names: Vec<String> = written.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["dz.xml", "phpbb.xml", "bbs.xml", "dzx.xml", "nx.xml", "md.xml"]);
}

#[test]
fn a_site_file_driven_crawl_finds_everything_in_the_extra_forums() {
    site_file_driven_crawl(extra(100, 3));
}

#[test]
fn truth_matches_what_the_extra_forums_pages_show() {
    truth_matches_pages(extra(120, 4));
}

#[test]
fn the_extra_forums_board_lists_are_newest_first_and_match_the_truth() {
    board_lists_match(extra(100, 3));
}

/// Paths a site file's patterns are tried on.
type Urls = &'static [&'static str];

/// The site files parse, and their patterns tell first pages from later
/// ones and leave the lookalikes alone.
#[test]
fn the_extra_forums_site_files_split_first_and_later_pages() {
    let base = "http://127.0.0.1:8080";
    let cfg = FixtureConfig { forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() };
    for kind in ForumKind::EXTRA {
        let text = crate::site_file(&cfg, kind, base).unwrap();
        assert!(!text.contains("<search") && !text.contains("<account"), "{text}");
        let site = parse_site(&text, std::path::Path::new("x.xml"));
        assert_eq!(site.id, kind.site_id());
        assert_eq!(site.home.as_str(), format!("{base}{}", kind.home_path()));
        let l = &site.links;
        let url = |p: &str| format!("{base}{p}");
        let (boards, board_pages, threads, thread_pages, neither): (Urls, Urls, Urls, Urls, Urls) = match kind {
            ForumKind::DiscuzX => (
                &["/dzx/forum-5-1.html"],
                &["/dzx/forum-5-2.html", "/dzx/forum-5-12.html"],
                &["/dzx/thread-1234-1-1.html", "/dzx/thread-1234-1-3.html", "/dzx/thread-1234-1-11.html"],
                &["/dzx/thread-1234-2-1.html", "/dzx/thread-1234-11-3.html"],
                &[
                    "/dzx/forum.php?mod=viewthread&tid=1234",
                    "/dzx/forum.php?mod=viewthread&tid=1234&page=1&authorid=5",
                    "/dzx/forum.php?mod=viewthread&action=printable&tid=1234",
                    "/dzx/forum.php?mod=redirect&goto=lastpost&tid=1234",
                    "/dzx/forum.php?mod=forumdisplay&fid=5&filter=heat&orderby=heats",
                    "/dzx/forum.php?gid=1",
                    "/dzx/home.php?mod=space&uid=5",
                ],
            ),
            ForumKind::Modern => (
                &["/md/category/5/%E5%85%AC%E5%91%8A", "/md/category/5/%E7%BB%BC%E5%90%88%E8%AE%A8%E8%AE%BA"],
                &["/md/category/5/%E5%85%AC%E5%91%8A?page=2"],
                &["/md/topic/1234/%E8%80%83%E7%A0%94", "/md/topic/1234/topic"],
                &["/md/topic/1234/%E8%80%83%E7%A0%94?page=3"],
                &[
                    "/md/topic/1234/%E8%80%83%E7%A0%94/5",
                    "/md/topic/1234/%E8%80%83%E7%A0%94?sort=newest_to_oldest",
                    "/md/topic/1234/%E8%80%83%E7%A0%94?sort=newest_to_oldest&page=2",
                    "/md/category/5/%E5%85%AC%E5%91%8A?sort=most_posts",
                    "/md/category/5/%E5%85%AC%E5%91%8A?sort=most_posts&page=2",
                    "/md/post/78987",
                    "/md/user/%E5%B0%8F%E7%8C%AB",
                    "/md/tags/rust",
                    "/md/recent",
                    "/md/popular?term=daily",
                    "/md/compose",
                ],
            ),
            _ => (
                &["/nx/thread.php?fid=5"],
                &["/nx/thread.php?fid=5&page=2"],
                &["/nx/read.php?tid=1234", "/nx/read.php?tid=1234&fpage=2"],
                &["/nx/read.php?tid=1234&page=3"],
                &[
                    "/nx/read.php?tid=1234&uid=5",
                    "/nx/read.php?tid=1234&page=e",
                    "/nx/read.php?tid=1234&fpage=2&page=3",
                    "/nx/thread.php?fid=5&orderway=postdate&asc=DESC&page=2",
                    "/nx/thread.php?fid=5&search=digest",
                    "/nx/index.php?cateid=1",
                    "/nx/post.php?action=reply&fid=5&tid=1234",
                ],
            ),
        };
        let bp = l.board_page.as_ref().unwrap();
        let tp = l.thread_page.as_ref().unwrap();
        for b in boards {
            assert_eq!(l.board.captures(&url(b)).unwrap().unwrap().board.as_deref(), Some("5"), "{b}");
            // Discuz! X's page pattern takes page 1 too, as page 1.
            if let Some(m) = bp.captures(&url(b)) {
                assert!(bp.is_first(m.unwrap().page), "{b}");
            }
        }
        for b in board_pages {
            assert!(l.board.captures(&url(b)).is_none(), "{b}");
            assert!(!bp.is_first(bp.captures(&url(b)).unwrap().unwrap().page), "{b}");
        }
        for t in threads {
            assert_eq!(l.thread.captures(&url(t)).unwrap().unwrap().thread.as_deref(), Some("1234"), "{t}");
        }
        for t in thread_pages {
            assert!(l.thread.captures(&url(t)).is_none(), "{t}");
            let m = tp.captures(&url(t)).unwrap().unwrap();
            assert_eq!(m.thread.as_deref(), Some("1234"), "{t}");
            assert!(!tp.is_first(m.page), "{t}");
        }
        for n in neither {
            let u = url(n);
            let hit = [Some(&l.board), Some(&l.thread), l.board_page.as_ref(), l.thread_page.as_ref()].into_iter().flatten().any(|p| p.captures(&u).is_some());
            assert!(!hit, "{n} is a lookalike, not a page the site file reads");
        }
    }
}

#[test]
fn discuz_x_rewrites_its_urls_and_names_the_list_page_in_thread_links() {
    let kind = ForumKind::DiscuzX;
    let (fx, ft) = alone(kind, 150, 2);
    let f = fx.forum(kind).unwrap();
    // Boards: forum-{fid}-{page}.html, page 1 included.
    for (b, bt) in f.boards.iter().zip(&ft.boards) {
        assert_eq!(bt.url_path, format!("/dzx/forum-{}-1.html", b.id));
        let pages = f.list_pages(b);
        assert!(pages > 1);
        for p in 1..=pages {
            let html = page_html(&fx, kind, &format!("/dzx/forum-{}-{p}.html", b.id));
            for id in bt.threads.iter().skip((p - 1) * 20).take(20) {
                assert!(
                    html.contains(&format!("href=\"thread-{id}-1-{p}.html\" onclick=\"atarget(this)\" class=\"s xst\"")),
                    "list page {p} links {id} with its own number"
                );
            }
            if p < pages {
                assert!(html.contains(&format!("href=\"forum-{}-{}.html\" class=\"nxt\"", b.id, p + 1)));
            }
        }
        assert_eq!(fx.get(&format!("/dzx/forum-{}-0.html", b.id)).status, 404);
        assert_eq!(fx.get(&format!("/dzx/forum-{}-{}.html", b.id, pages + 1)).status, 404);
    }
    // Threads: the truth's url_path is the list's link, naming the list page.
    let mut later = 0;
    for t in &ft.threads {
        let lp = list_page_of(&fx, kind, t);
        assert_eq!(t.url_path, format!("/dzx/thread-{}-1-{lp}.html", t.thread));
        later += usize::from(lp > 1);
    }
    assert!(later > 10, "threads on later list pages: {later}");
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages > 2 && list_page_of(&fx, kind, t) > 1).unwrap();
    let lp = list_page_of(&fx, kind, t);
    let b = &t.board;
    // Every name of page 1 is the same page; only "返回列表" follows the name.
    let own = format!("/dzx/thread-{}-1-1.html", t.thread);
    let listed = page_html(&fx, kind, &t.url_path);
    let plain = page_html(&fx, kind, &own);
    assert_ne!(listed, plain);
    assert!(listed.contains(&format!("<a href=\"forum-{b}-{lp}.html\">返回列表</a>")));
    assert!(plain.contains(&format!("<a href=\"forum-{b}-1.html\">返回列表</a>")));
    let posts = read_posts(kind, &plain);
    assert_eq!(read_posts(kind, &listed), posts);
    assert_eq!(posts_at(&fx, kind, &format!("/dzx/thread-{}-1-9.html", t.thread)), posts);
    assert_eq!(posts_at(&fx, kind, &format!("/dzx/forum.php?mod=viewthread&tid={}", t.thread)), posts);
    assert_eq!(posts_at(&fx, kind, &format!("/dzx/forum.php?mod=viewthread&tid={}&extra=page%3D{lp}", t.thread)), posts);
    // The thread's own pager says 1 whatever name page 1 was read under.
    assert!(listed.contains(&format!("href=\"thread-{}-2-1.html\"", t.thread)));
    assert!(!listed.contains(&format!("thread-{}-2-{lp}.html", t.thread)));
    let page2 = posts_at(&fx, kind, &format!("/dzx/thread-{}-2-1.html", t.thread));
    assert_eq!(page2.first().map(|p| p.floor), Some(11));
    assert_eq!(posts_at(&fx, kind, &format!("/dzx/forum.php?mod=viewthread&tid={}&page=2", t.thread)), page2);
    for bad in ["-0-1.html", "-1.html", "-1-1.htm", "-1-x.html"] {
        assert_eq!(fx.get(&format!("/dzx/thread-{}{bad}", t.thread)).status, 404, "{bad}");
    }
    assert_eq!(fx.get(&format!("/dzx/thread-{}-{}-1.html", t.thread, t.pages + 1)).status, 404);
    assert_eq!(fx.get(&format!("{own}?from=1")).status, 404);
    // Deleted threads answer the forum's notice, 404, under every name.
    let d = ft.threads.iter().find(|t| t.deleted).unwrap();
    for p in [d.url_path.clone(), format!("/dzx/thread-{}-1-1.html", d.thread), format!("/dzx/forum.php?mod=viewthread&tid={}", d.thread)] {
        let r = fx.get(&p);
        assert_eq!(r.status, 404, "{p}");
        assert!(decode(kind, &r.body).contains("指定的主题不存在"), "{p}");
    }
}

#[test]
fn discuz_x_pages_are_gb18030_labelled_gbk_with_tables_and_times_in_titles() {
    let kind = ForumKind::DiscuzX;
    let (fx, ft) = alone(kind, 300, 3);
    let live: Vec<&ThreadTruth> = ft.threads.iter().filter(|t| !t.deleted).collect();
    let mut relative = 0;
    let mut absolute = 0;
    for t in &live {
        let html = page_html(&fx, kind, &t.url_path);
        assert!(html.contains("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\" />"));
        assert_eq!(fx.get(&t.url_path).content_type, "text/html", "the label is in the page only");
        for p in t.posts.iter().take(10) {
            let pid = t.thread.parse::<u64>().unwrap() * 64 + u64::from(p.floor);
            assert!(html.contains(&format!("<table id=\"pid{pid}\" class=\"plhin\"")));
            assert!(html.contains(&format!("<td class=\"t_f\" id=\"postmessage_{pid}\">")));
            let shown = between(&html, &format!("<em id=\"authorposton{pid}\">发表于 "), "</em>").unwrap();
            if let Some(title) = between(shown, "<span title=\"", "\"") {
                // The text is relative; the time is in the title alone.
                let text = between(shown, "\">", "</span>").unwrap();
                assert!(["前", "昨天", "前天", "刚刚"].iter().any(|w| text.contains(w)), "{text}");
                assert!(luntan_core::dates::normalize_time(&unescape(text)).is_none(), "{text}");
                assert_eq!(luntan_core::dates::normalize_time(title).as_deref(), Some(p.time.as_str()));
                relative += 1;
            } else {
                assert_eq!(luntan_core::dates::normalize_time(shown).as_deref(), Some(p.time.as_str()));
                absolute += 1;
            }
        }
    }
    assert!(relative >= 20 && absolute > relative, "{relative} relative, {absolute} absolute times");
    // An emoji is four GB18030 bytes, not a character reference.
    let t = live.iter().find(|t| t.posts.iter().take(10).any(|p| p.text.contains('😀'))).expect("an emoji on a first page");
    let body = fx.get(&t.url_path).body;
    let (emoji, _, _) = encoding_rs::GB18030.encode("😀");
    assert_eq!(emoji.len(), 4);
    assert!(body.windows(4).any(|w| w == &emoji[..]) && !body.windows(9).any(|w| w == b"&#128512;"));
    // Some bodies hold an edit note or a quote that is not the post's text.
    let pages: String = live.iter().take(120).map(|t| page_html(&fx, kind, &t.url_path)).collect();
    assert!(pages.contains("<i class=\"pstatus\"> 本帖最后由 "));
    assert!(pages.contains("<div class=\"quote\"><blockquote>"));
}

#[test]
fn discuz_x_lookalike_links_lead_to_other_views_and_redirects() {
    let kind = ForumKind::DiscuzX;
    let server = FixtureServer::start_blocking(one(kind, 120, 2)).unwrap();
    let fx = server.fixture();
    let truth = server.truth();
    let ft = forum_truth(&truth, kind);
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages > 1).unwrap();
    let html = page_html(fx, kind, &t.url_path);
    let links = hrefs(&html);
    let op_uid = between(&html, "<div class=\"authi\"><a href=\"home.php?mod=space&amp;uid=", "\"").unwrap().to_owned();
    let tid = &t.thread;
    for want in [
        format!("forum.php?mod=viewthread&tid={tid}&page=1&authorid={op_uid}"),
        format!("forum.php?mod=viewthread&action=printable&tid={tid}"),
        format!("forum.php?mod=redirect&goto=lastpost&tid={tid}#lastpost"),
        format!("forum.php?mod=redirect&goto=nextoldset&tid={tid}"),
        format!("forum.php?mod=post&action=reply&fid={}&tid={tid}", t.board),
        format!("home.php?mod=space&uid={op_uid}"),
    ] {
        assert!(links.contains(&want), "{want} not among the thread page's links");
    }
    assert!(links.iter().any(|l| l.starts_with("forum.php?mod=redirect&goto=findpost&ptid=")));
    // "只看该作者": that author's posts only.
    let mine = posts_at(fx, kind, &format!("/dzx/forum.php?mod=viewthread&tid={tid}&page=1&authorid={op_uid}"));
    let author = &t.posts[0].author;
    assert_eq!(mine.len(), t.posts.iter().filter(|p| &p.author == author).count().min(10));
    assert!(mine.iter().all(|p| &p.author == author));
    // The print view: every post on one page.
    let print = page_html(fx, kind, &format!("/dzx/forum.php?mod=viewthread&action=printable&tid={tid}"));
    assert_eq!(print.matches("<b>作者: </b>").count(), t.posts.len());
    // Redirects: a 302 to the dynamic form of the page they name.
    let r = get(server.addr(), &format!("/dzx/forum.php?mod=redirect&goto=lastpost&tid={tid}"));
    assert_eq!(r.status, 302);
    let last_pid = tid.parse::<u64>().unwrap() * 64 + t.posts.len() as u64;
    assert_eq!(r.header("location"), Some(format!("/dzx/forum.php?mod=viewthread&tid={tid}&page={}#pid{last_pid}", t.pages).as_str()));
    let r = get(server.addr(), &format!("/dzx/forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={}", tid.parse::<u64>().unwrap() * 64 + 11));
    assert_eq!(r.header("location"), Some(format!("/dzx/forum.php?mod=viewthread&tid={tid}&page=2#pid{}", tid.parse::<u64>().unwrap() * 64 + 11).as_str()));
    assert_eq!(fx.get(&format!("/dzx/forum.php?mod=redirect&goto=lastpost&tid={tid}")).status, 302);
    // Forms want a login; the home page's groups and the list's tabs are other lists.
    assert!(page_html(fx, kind, &format!("/dzx/forum.php?mod=post&action=reply&fid={}&tid={tid}", t.board)).contains("尚未登录"));
    let home = page_html(fx, kind, "/dzx/forum.php");
    assert!(home.contains("href=\"forum.php?gid=1\""));
    assert!(page_html(fx, kind, "/dzx/forum.php?gid=1").contains(&format!("href=\"forum-{}-1.html\"", ft.boards[0].board)));
    let b = &ft.boards[0].board;
    let digest = page_html(fx, kind, &format!("/dzx/forum.php?mod=forumdisplay&fid={b}&filter=digest&digest=1"));
    assert!(digest.contains("尚无主题") && !digest.contains("normalthread_"));
    let heat = page_html(fx, kind, &format!("/dzx/forum.php?mod=forumdisplay&fid={b}&filter=heat&orderby=heats"));
    assert!(heat.contains("normalthread_") && heat.contains("href=\"forum.php?mod=viewthread&amp;tid="));
    assert_eq!(
        page_html(fx, kind, &format!("/dzx/forum.php?mod=forumdisplay&fid={b}")),
        page_html(fx, kind, &format!("/dzx/forum-{b}-1.html")),
        "the dynamic board URL is the same list"
    );
    let robots = String::from_utf8(get(server.addr(), "/robots.txt").body).unwrap();
    assert!(robots.contains("Disallow: /dzx/forum.php?mod=redirect*\nDisallow: /dzx/forum.php?mod=post*\n"));
}

#[test]
fn nexus_names_the_list_page_in_fpage_and_pages_threads_by_page() {
    let kind = ForumKind::Nexus;
    let (fx, ft) = alone(kind, 160, 2);
    let f = fx.forum(kind).unwrap();
    let r = fx.get("/nx/index.php");
    assert_eq!(r.content_type, "text/html; charset=utf-8");
    let home = decode(kind, &r.body);
    assert!(!home.contains("charset") && !home.starts_with('\u{feff}'), "UTF-8 is said in the header only");
    for bt in &ft.boards {
        assert_eq!(bt.url_path, format!("/nx/thread.php?fid={}", bt.board));
        assert!(home.contains(&format!("<a href=\"thread.php?fid={}\" class=\"forum-link\">", bt.board)));
    }
    for t in &ft.threads {
        let lp = list_page_of(&fx, kind, t);
        let want = if lp == 1 { format!("/nx/read.php?tid={}", t.thread) } else { format!("/nx/read.php?tid={}&fpage={lp}", t.thread) };
        assert_eq!(t.url_path, want);
    }
    let (b, bt) = f.boards.iter().zip(&ft.boards).find(|(b, _)| f.list_pages(b) > 2).expect("a board with three list pages");
    let p1 = page_html(&fx, kind, &bt.url_path);
    assert!(p1.contains(&format!("<a href=\"thread.php?fid={}&amp;page=2\" class=\"pages-next\" rel=\"next\">", b.id)));
    assert!(p1.contains(&format!("<a href=\"thread.php?fid={}&amp;page=3\">3</a>", b.id)));
    assert_eq!(page_html(&fx, kind, &format!("{}&page=1", bt.url_path)), p1);
    let p2 = page_html(&fx, kind, &format!("{}&page=2", bt.url_path));
    let second = &bt.threads[30];
    assert!(p2.contains(&format!("<a href=\"read.php?tid={second}&amp;fpage=2\" class=\"subject-link\"")));
    assert!(p1.contains(&format!("<a href=\"read.php?tid={}\" class=\"subject-link\"", bt.threads[0])));
    assert_eq!(fx.get(&format!("{}&page={}", bt.url_path, f.list_pages(b) + 1)).status, 404);
    // A thread: page 1 by any name, later pages by &page=, &page=e the last.
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages > 2).unwrap();
    let tid = &t.thread;
    let first = posts_at(&fx, kind, &format!("/nx/read.php?tid={tid}"));
    assert_eq!(first.len(), 15);
    for p in [format!("/nx/read.php?tid={tid}&fpage=3"), format!("/nx/read.php?tid={tid}&page=1"), format!("/nx/read.php?tid={tid}&fpage=2&page=1")] {
        assert_eq!(posts_at(&fx, kind, &p), first, "{p}");
    }
    let html = page_html(&fx, kind, &format!("/nx/read.php?tid={tid}&fpage=3"));
    assert!(html.contains(&format!("href=\"thread.php?fid={}&amp;page=3\"", t.board)), "the crumb goes back to the list page it came from");
    assert!(html.contains(&format!("<a href=\"read.php?tid={tid}&amp;page=2\" class=\"pages-next\" rel=\"next\">")));
    let last = posts_at(&fx, kind, &format!("/nx/read.php?tid={tid}&page={}", t.pages));
    assert_eq!(posts_at(&fx, kind, &format!("/nx/read.php?tid={tid}&page=e")), last);
    assert_eq!(last.last().map(|p| p.floor), Some(t.posts.len() as u32));
    for bad in [format!("/nx/read.php?tid={tid}&page=0"), format!("/nx/read.php?tid={tid}&page={}", t.pages + 1), format!("/nx/read.php?tid={tid}&x=1")] {
        assert_eq!(fx.get(&bad).status, 404, "{bad}");
    }
    // Floors are nested divs with the time in <time>, the floor as 楼主 or #N.
    assert!(html.contains("<div class=\"floor\" id=\"tpc\">") && html.contains("<div class=\"tpc_content\" id=\"read_tpc\">"));
    assert!(html.contains(&format!("<time datetime=\"{}+08:00\">", t.posts[0].time)));
    assert!(html.contains("title=\"复制此楼地址\">楼主</a>") && html.contains("title=\"复制此楼地址\">#2</a>"));
    // "只看该作者" shows one author's posts; forms want a login.
    let uid = between(&html, "<a href=\"u.php?uid=", "\"").unwrap();
    let mine = posts_at(&fx, kind, &format!("/nx/read.php?tid={tid}&uid={uid}"));
    assert!(!mine.is_empty() && mine.iter().all(|p| p.author == t.posts[0].author));
    assert!(page_html(&fx, kind, &format!("/nx/post.php?action=reply&fid={}&tid={tid}", t.board)).contains("您还没有登录"));
    let d = ft.threads.iter().find(|t| t.deleted).unwrap();
    let r = fx.get(&d.url_path);
    assert_eq!(r.status, 404);
    assert!(decode(kind, &r.body).contains("该帖子不存在"));
    // Entities, raw emoji, runs of spaces as &nbsp;.
    let all: String = ft.threads.iter().filter(|t| !t.deleted).take(100).map(|t| page_html(&fx, kind, &t.url_path)).collect();
    assert!(all.contains('😀') && !all.contains("&#128512;"));
    assert!(all.contains("&amp;") || all.contains("&lt;") || all.contains("&quot;"));
    assert!(all.contains("&nbsp; "));
    assert!(all.contains("<div class=\"quote\"><h6 class=\"quote-head\">") && all.contains("<span class=\"edit-note\">"));
}

#[test]
fn the_extra_forums_grow_like_the_others() {
    let fx = Fixture::new(extra(60, 2));
    let changes = fx.add_posts(80);
    let sites: std::collections::BTreeSet<&str> = changes.iter().map(|c| c.site.as_str()).collect();
    assert_eq!(sites.into_iter().collect::<Vec<_>>(), ["dzx", "md", "nx"]);
    let truth = fx.truth();
    for c in &changes {
        let kind = ForumKind::from_site_id(&c.site).unwrap();
        let t = forum_truth(&truth, kind).threads.iter().find(|t| t.thread == c.thread).unwrap();
        let f = fx.latest().unwrap();
        let f = f.forum(kind).unwrap();
        let meta = f.thread(t.thread.parse().unwrap()).unwrap();
        let seen: Vec<SeenPost> = (1..=t.pages as usize).flat_map(|p| posts_at(&fx, kind, &f.thread_path(meta, p))).collect();
        let want: Vec<(u32, &str, &str)> = t.posts.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_str())).collect();
        let got: Vec<(u32, &str, &str)> = seen.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_str())).collect();
        assert_eq!(got, want, "{}/{}", c.site, c.thread);
        assert_eq!(fx.get(&t.url_path).status, 200, "{}", t.url_path);
    }
}

#[test]
fn permanent_faults_hit_every_name_of_a_page() {
    let h = Hostility { permanent: PermanentFault::ALL.to_vec(), ..Hostility::default() };
    let fx = Fixture::new(FixtureConfig { hostility: h, ..extra(80, 2) });
    let truth = fx.truth();
    let robots = String::from_utf8(fx.get("/robots.txt").body).unwrap();
    let mut checked = HashMap::new();
    for kind in ForumKind::EXTRA {
        for t in forum_truth(&truth, kind).threads.iter().filter(|t| t.unservable.is_some()) {
            let fault = PermanentFault::from_name(t.unservable.as_deref().unwrap()).unwrap();
            let (names, robots_line) = match kind {
                ForumKind::DiscuzX => (
                    vec![format!("/dzx/thread-{}-{}-1.html", t.thread, fault.page()), format!("/dzx/thread-{}-{}-7.html", t.thread, fault.page())],
                    format!("Disallow: /dzx/thread-{}-1-\n", t.thread),
                ),
                ForumKind::Modern => {
                    let page1 = t.url_path.clone();
                    let names = if fault.page() == 1 { vec![page1.clone()] } else { vec![format!("{page1}?page=2")] };
                    (names, format!("Disallow: {page1}$\n"))
                }
                _ => {
                    let tid = &t.thread;
                    let names = if fault.page() == 1 {
                        vec![format!("/nx/read.php?tid={tid}"), format!("/nx/read.php?tid={tid}&fpage=4")]
                    } else {
                        vec![format!("/nx/read.php?tid={tid}&page=2"), format!("/nx/read.php?tid={tid}&fpage=4&page=2")]
                    };
                    (names, format!("Disallow: /nx/read.php?tid={tid}$\nDisallow: /nx/read.php?tid={tid}&fpage=\n"))
                }
            };
            for n in &names {
                assert_eq!(fx.permanent_fault(n), Some(fault), "{n}");
            }
            if fault == PermanentFault::RobotsDisallowed {
                assert!(robots.contains(&robots_line), "{robots}");
            }
            *checked.entry(kind).or_insert(0) += 1;
        }
    }
    assert_eq!(checked.get(&ForumKind::DiscuzX), Some(&PermanentFault::ALL.len()));
    assert_eq!(checked.get(&ForumKind::Nexus), Some(&PermanentFault::ALL.len()));
    assert_eq!(checked.get(&ForumKind::Modern), Some(&PermanentFault::ALL.len()));
}

/// The page without what a client without JavaScript alone reads (the
/// `<noscript>` blocks) and without the head's `<link>`s.
fn md_scripted_view(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("<noscript>") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("</noscript>").expect("a closed noscript") + i;
        rest = &rest[end + "</noscript>".len()..];
    }
    out.push_str(rest);
    out.split("<link ").enumerate().map(|(i, part)| if i == 0 { part } else { part.split_once('>').map_or("", |(_, after)| after) }).collect()
}

/// Every `<noscript>` block's contents.
fn md_noscript(html: &str) -> String {
    html.split("<noscript>").skip(1).filter_map(|c| c.split_once("</noscript>")).map(|(inside, _)| inside).collect()
}

/// The page's `<link rel="{rel}" href="…" />` target, if any.
fn md_rel(html: &str, rel: &str) -> Option<String> {
    between(html, &format!("<link rel=\"{rel}\" href=\""), "\"").map(unescape)
}

#[test]
fn nodebb_style_pagers_are_only_in_noscript_and_link_rel() {
    let kind = ForumKind::Modern;
    let (fx, ft) = alone(kind, 150, 2);
    let f = fx.forum(kind).unwrap();
    let check = |first: &str, pages: usize, what: &str| {
        for p in 1..=pages {
            let path = if p == 1 { first.to_owned() } else { format!("{first}?page={p}") };
            let html = page_html(&fx, kind, &path);
            // Nothing a script-less reader can click leads to another page...
            let visible = md_scripted_view(&html);
            let paged: Vec<String> = hrefs(&visible).into_iter().filter(|h| h.contains("page=")).collect();
            assert!(paged.is_empty(), "{what} {path}: pager links outside <noscript>: {paged:?}");
            let widget = between(&html, "<div component=\"pagination\" class=\"text-center pagination-container hidden\">", "</div>").unwrap();
            assert!(!widget.contains("<a"), "{what} {path}: {widget}");
            // ...but the noscript pager and the head's rel links do.
            let noscript = md_noscript(&html);
            let numbered: Vec<String> = hrefs(&noscript);
            assert!(numbered.iter().all(|h| h.starts_with("?page=")), "{what} {path}: {numbered:?}");
            assert!(noscript.contains("<ul class=\"pagination\">"), "{what} {path}");
            assert_eq!(md_rel(&html, "next"), (p < pages).then(|| format!("{first}?page={}", p + 1)), "{what} {path}");
            assert_eq!(md_rel(&html, "prev"), (p > 1).then(|| format!("{first}?page={}", p - 1)), "{what} {path}");
            if p < pages {
                assert!(numbered.contains(&format!("?page={}", p + 1)), "{what} {path}: {numbered:?}");
            }
        }
    };
    let (b, bt) = f.boards.iter().zip(&ft.boards).find(|(b, _)| f.list_pages(b) >= 3).expect("a category of three list pages");
    assert_eq!(bt.url_path, f.board_path(b, 1));
    check(&bt.url_path, f.list_pages(b), "category");
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages >= 3).expect("a topic of three pages");
    check(&t.url_path, t.pages as usize, "topic");
    // One page: no pager anywhere, no rel links.
    let short = ft.threads.iter().find(|t| !t.deleted && t.pages == 1).unwrap();
    let html = page_html(&fx, kind, &short.url_path);
    assert!(md_noscript(&html).find("pagination").is_none() && md_rel(&html, "next").is_none());
    // Past the last page, or page 0: not found.
    for bad in [format!("{}?page={}", bt.url_path, f.list_pages(b) + 1), format!("{}?page=0", bt.url_path), format!("{}?page={}", t.url_path, t.pages + 1)] {
        assert_eq!(fx.get(&bad).status, 404, "{bad}");
    }
}

#[test]
fn nodebb_style_times_are_utc_and_only_in_empty_timeago_titles() {
    let kind = ForumKind::Modern;
    let (fx, ft) = alone(kind, 120, 2);
    let mut posts_seen = 0;
    for t in ft.threads.iter().filter(|t| !t.deleted).take(40) {
        let html = page_html(&fx, kind, &t.url_path);
        // Every timeago is empty: the time is in its title alone.
        assert_eq!(html.matches("<span class=\"timeago\"").count(), html.matches("<span class=\"timeago\" title=\"").count());
        for c in html.split("<span class=\"timeago\" title=\"").skip(1) {
            let (title, after) = c.split_once('"').unwrap();
            assert!(after.starts_with("></span>"), "a timeago with text: {}", &after[..after.len().min(40)]);
            assert!(title.ends_with(":00.000Z"), "{title}");
        }
        let untitled = without_timeago_titles(&html);
        for p in t.posts.iter().take(kind.thread_page_size()) {
            // The truth's wall clock is +08:00; the page says UTC, 8 hours earlier.
            let (date, hm) = (&p.time[..10], &p.time[11..16]);
            assert!(!untitled.contains(&format!("{date} {hm}")) && !untitled.contains(&p.time), "{}: the local time is shown", t.url_path);
            posts_seen += 1;
        }
        let seen = read_posts(kind, &html);
        let want: Vec<(&str, &str)> = t.posts.iter().take(10).map(|p| (p.author.as_str(), p.time.as_str())).collect();
        assert_eq!(seen.iter().map(|p| (p.author.as_str(), p.time.as_str())).collect::<Vec<_>>(), want, "{}", t.url_path);
    }
    assert!(posts_seen > 100);
    assert_eq!(md_local_time("2024-03-05T04:34:00.000Z"), "2024-03-05T12:34:00");
    assert_eq!(md_local_time("2024-02-29T20:05:00.000Z"), "2024-03-01T04:05:00", "the date rolls over");
    // Lists: the first post's time in the header, the last post's in the teaser, both UTC.
    let bt = &ft.boards[0];
    let list = page_html(&fx, kind, &bt.url_path);
    let row = list.split("<li component=\"category/topic\"").nth(1).unwrap();
    let t = ft.threads.iter().find(|t| t.thread == bt.threads[0]).unwrap();
    let teaser = between(row, "component=\"topic/teaser\">", "</li>").unwrap();
    assert_eq!(md_local_time(between(teaser, "title=\"", "\"").unwrap()), t.last_post);
    if let Some(first) = t.posts.first() {
        let header = between(row, "<h2 component=\"topic/header\"", "</h2>").unwrap();
        assert_eq!(md_local_time(between(header, "<span class=\"timeago\" title=\"", "\"").unwrap()), first.time);
    }
    let untitled = without_timeago_titles(&list);
    assert!(!untitled.contains(&t.last_post) && !untitled.contains(&t.last_post[..16].replace('T', " ")));
}

/// The page without its timeago spans (whose titles, UTC, may read like another post's local time).
fn without_timeago_titles(html: &str) -> String {
    html.split("<span class=\"timeago\" title=\"")
        .enumerate()
        .map(|(i, c)| if i == 0 { c } else { c.split_once("\"></span>").map_or(c, |(_, rest)| rest) })
        .collect()
}

#[test]
fn nodebb_style_pages_show_what_the_truth_says_under_chinese_slugs() {
    let kind = ForumKind::Modern;
    let server = FixtureServer::start_blocking(one(kind, 150, 3)).unwrap();
    let fx = server.fixture();
    let truth = server.truth();
    let ft = forum_truth(&truth, kind);
    assert_eq!((ft.site.as_str(), ft.encoding.as_str()), ("md", "UTF-8"));
    let r = fx.get("/md/");
    assert_eq!(r.content_type, "text/html; charset=utf-8");
    let home = decode(kind, &r.body);
    assert!(home.contains("<meta charset=\"utf-8\">"));
    for bt in &ft.boards {
        let (cid, slug) = bt.url_path.strip_prefix("/md/category/").unwrap().split_once('/').unwrap();
        assert!(cid.bytes().all(|b| b.is_ascii_digit()) && slug.starts_with('%'), "{}", bt.url_path);
        assert_eq!(String::from_utf8(crate::text::percent_decode(slug)).unwrap(), bt.title);
        assert!(home.contains(&format!("<a href=\"{}\" itemprop=\"url\">", bt.url_path)), "{}", bt.url_path);
        // Rows: the topic link, the reply count in the stats beside votes and views.
        let list = page_html(fx, kind, &bt.url_path);
        for (c, id) in list.split("<li component=\"category/topic\"").skip(1).zip(&bt.threads) {
            let t = ft.threads.iter().find(|t| &t.thread == id).unwrap();
            assert!(c.contains(&format!("data-tid=\"{id}\"")));
            assert!(c.contains(&format!("<a href=\"{}\" itemprop=\"url\">{}</a>", t.url_path, crate::text::esc(&t.title))), "{c}");
            let replies = between(c, "stats-replies\">", "</div>").unwrap();
            assert!(replies.starts_with(&format!("<span class=\"human-readable-number\" title=\"{0}\">{0}</span>", t.replies)), "{replies}");
        }
    }
    // Topics: the truth's url_path, raw UTF-8 slug the same page, a wrong slug none.
    for t in &ft.threads {
        let (tid, slug) = t.url_path.strip_prefix("/md/topic/").unwrap().split_once('/').unwrap();
        assert_eq!(tid, t.thread);
        assert!(!slug.contains('/'));
    }
    let t = ft.threads.iter().find(|t| !t.deleted && t.pages >= 3 && t.url_path.contains('%')).unwrap();
    let raw = String::from_utf8(crate::text::percent_decode(&t.url_path)).unwrap();
    let via_raw = super::get_raw(server.addr(), raw.as_bytes(), "");
    assert_eq!(via_raw.status, 200);
    assert_eq!(via_raw.body, fx.get(&t.url_path).body);
    assert_eq!(fx.get(&format!("/md/topic/{}/x", t.thread)).status, 404);
    assert_eq!(fx.get(&format!("/md/topic/{}", t.thread)).status, 404);
    let html = page_html(fx, kind, &t.url_path);
    assert_eq!(
        between(&html, "<h1 component=\"post/header\" class=\"\" itemprop=\"name\"><span class=\"topic-title\" component=\"topic/title\">", "</span></h1>")
            .map(unescape),
        Some(t.title.clone())
    );
    let p1 = &t.posts[0];
    assert!(html.contains(&format!("itemprop=\"author\" data-username=\"{0}\" data-uid=\"", crate::text::esc(&p1.author))));
    assert!(html.contains("<div class=\"content\" component=\"post/content\" itemprop=\"text\">\n<p>"));
    // Every page of it, read back, is the truth.
    let all: Vec<SeenPost> =
        (1..=t.pages).flat_map(|p| posts_at(fx, kind, &if p == 1 { t.url_path.clone() } else { format!("{}?page={p}", t.url_path) })).collect();
    let want: Vec<(u32, &str, &str, &str)> = t.posts.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_str(), p.text.as_str())).collect();
    assert_eq!(all.iter().map(|p| (p.floor, p.author.as_str(), p.time.as_str(), p.text.as_str())).collect::<Vec<_>>(), want);
    // Lookalikes: a post's permalink is the page holding it; /post/{pid} redirects there.
    assert_eq!(posts_at(fx, kind, &format!("{}/11", t.url_path)), posts_at(fx, kind, &format!("{}?page=2", t.url_path)));
    assert_eq!(fx.get(&format!("{}/{}", t.url_path, t.posts.len() + 1)).status, 404);
    let pid = t.thread.parse::<u64>().unwrap() * 64 + 11;
    assert!(html.contains(&format!("href=\"/md/post/{}\" class=\"post-index text-muted\">#1</a>", pid - 10)));
    let r = get(server.addr(), &format!("/md/post/{pid}"));
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some(format!("{}/11", t.url_path).as_str()));
    // Newest first: the first post on top, then the last reply.
    let newest = posts_at(fx, kind, &format!("{}?sort=newest_to_oldest", t.url_path));
    assert_eq!(newest.iter().map(|p| p.floor).take(3).collect::<Vec<_>>(), [1, t.posts.len() as u32, t.posts.len() as u32 - 1]);
    assert!(html.contains("href=\"?sort=newest_to_oldest\""));
    let sorted2 = page_html(fx, kind, &format!("{}?sort=newest_to_oldest&page=2", t.url_path));
    assert!(md_noscript(&sorted2).contains("href=\"?sort=newest_to_oldest&amp;page=3\""));
    assert_eq!(fx.get(&format!("{}?sort=most_votes", t.url_path)).status, 404);
    // Users, tags, recent and popular are pages too, listing topics the same way.
    let user = between(&html, "<a href=\"/md/user/", "\"").unwrap();
    assert!(page_html(fx, kind, &format!("/md/user/{user}")).contains("<h1 class=\"fullname\">"));
    let tag_page = page_html(fx, kind, "/md/tags/rust");
    assert!(tag_page.contains("<li component=\"category/topic\""));
    assert!(page_html(fx, kind, &format!("/md/tags/{}", crate::text::percent_encode("求助"))).contains("<li component=\"category/topic\""));
    assert_eq!(fx.get("/md/tags/nosuchtag").status, 404);
    let recent = page_html(fx, kind, "/md/recent");
    let ids: Vec<&str> = recent.split("<li component=\"category/topic\"").skip(1).map(|c| between(c, "data-tid=\"", "\"").unwrap()).collect();
    assert_eq!(ids.len(), 20);
    let last_post = |id: &str| ft.threads.iter().find(|t| t.thread == id).unwrap().last_post.clone();
    let newest_overall = ft.threads.iter().map(|t| t.last_post.clone()).max().unwrap();
    assert_eq!(last_post(ids[0]), newest_overall);
    assert!(ids.windows(2).all(|w| last_post(w[0]) >= last_post(w[1])));
    for term in ["daily", "weekly", "monthly", "alltime"] {
        assert_eq!(fx.get(&format!("/md/popular?term={term}")).status, 200, "{term}");
    }
    assert_eq!(fx.get("/md/popular?term=hourly").status, 404);
    let sorted = page_html(fx, kind, &format!("{}?sort=most_posts", ft.boards[0].url_path));
    let first_id = between(&sorted, "<li component=\"category/topic\" class=\"category-item clearfix\" data-tid=\"", "\"").unwrap();
    let most = ft.threads.iter().filter(|t| t.board == ft.boards[0].board).map(|t| t.replies).max().unwrap();
    assert_eq!(ft.threads.iter().find(|t| t.thread == first_id).unwrap().replies, most);
    // Deleted topics: NodeBB's 404 page.
    let d = ft.threads.iter().find(|t| t.deleted).unwrap();
    let r = fx.get(&d.url_path);
    assert_eq!(r.status, 404);
    assert!(decode(kind, &r.body).contains("页面未找到"));
    // Bodies: escaped entities, raw emoji.
    let pages: String = ft.threads.iter().filter(|t| !t.deleted).take(120).map(|t| page_html(fx, kind, &t.url_path)).collect();
    assert!(pages.contains('😀') && !pages.contains("&#128512;"));
    assert!(pages.contains("&amp;") || pages.contains("&lt;"));
    let robots = String::from_utf8(get(server.addr(), "/robots.txt").body).unwrap();
    assert!(robots.contains("Disallow: /md/admin/\n"));
}
