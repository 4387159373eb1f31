//! Site files describing the fake forums, in the format
//! `luntan_core::site::Site::parse` reads.

use std::io;
use std::path::{Path, PathBuf};

use crate::config::{FixtureConfig, SearchMode};
use crate::kind::ForumKind;
use crate::model::Fixture;
use crate::search;
use crate::text::esc_into;
use crate::topics::TOPIC_WORDS;

/// The link patterns and selectors of one forum, as written into its site file.
struct Rules {
    board: &'static str,
    board_page: &'static str,
    thread: &'static str,
    thread_page: &'static str,
    /// phpBB pages by offset: its page patterns capture `start`, first page 0.
    first_page: u32,
    list: &'static str,
    thread_rules: &'static str,
}

fn rules(kind: ForumKind) -> Rules {
    match kind {
        ForumKind::Discuz => Rules {
            board: r"/dz/forum\.php\?mod=forumdisplay&fid={board}$",
            board_page: r"/dz/forum\.php\?mod=forumdisplay&fid={board}&page={page}$",
            thread: r"/dz/forum\.php\?mod=viewthread&tid={thread}$",
            thread_page: r"/dz/forum\.php\?mod=viewthread&tid={thread}&page={page}$",
            first_page: 1,
            list: r#"<list row="tbody[id^=normalthread_]" title="a.xst" replies="td.num a" last-post="td.num + td.by em span"/>"#,
            thread_rules: r##"<thread title="#thread_subject" post="div[id^=post_]" body-id="postmessage_\d+"
          author="a.xw1" time="em[id^=authorposton]" floor="a[id^=postnum] em"/>"##,
        },
        ForumKind::Phpbb => Rules {
            board: r"/phpbb/viewforum\.php\?f={board}$",
            board_page: r"/phpbb/viewforum\.php\?f={board}&start={page}$",
            thread: r"/phpbb/viewtopic\.php\?t={thread}$",
            thread_page: r"/phpbb/viewtopic\.php\?t={thread}&start={page}$",
            first_page: 0,
            list: r#"<list row="li.row" title="a.topictitle" replies="dd.posts" last-post="dd.lastpost time"/>"#,
            thread_rules: r#"<thread title="h2.topic-title a" post="div.post" body="div.content"
          author="p.author a.username" time="p.author time"
          quote="blockquote" quote-head="cite" quote-of="cite a[data-post-id]@data-post-id" quote-author="cite a[href*='viewprofile']"
          post-id="div.post@id" post-id-pattern="^p(\d+)$" author-id="p.author a.username@href" author-id-pattern="[?&amp;]u=(\d+)"
          author-url="p.author a.username@href" edited="div.notice" edited-pattern="於 (.+?) 編輯"
          board-name="p.jumpbox-return a" board-name-pattern="回到「(.+)」"/>"#,
        },
        ForumKind::Bbs => Rules {
            board: r"/bbs/board/{board}/$",
            board_page: r"/bbs/board/{board}/\?page={page}$",
            thread: r"/bbs/topic/{thread}/[^/?#]+/$",
            thread_page: r"/bbs/topic/{thread}/[^/?#]+/\?page={page}$",
            first_page: 1,
            list: r#"<list row="li.topic" title="a.title" replies="span.replies" last-post="time.last-post"/>"#,
            thread_rules: r#"<thread title="h1.topic-title" post="article.post" body="div.body"
          author="header span.name" time="header time" floor="header span.floor"/>"#,
        },
        // Rewritten URLs: a thread's first page is `thread-T-1-N.html` for
        // any list page N it was found on, so the patterns let N vary and
        // name ids with digits only (`{thread}` would take the dashes too).
        // Recent times sit in a span's `title` ("3 天前" is the text), which
        // `time` reads as it reads Discuz!'s own; quotes are held apart
        // (the quoted pid from the quote's link), the edit note is stripped
        // from the text and read as the edit time, an attachment's picture
        // is in `file` (its `src` a placeholder until a script swaps it).
        ForumKind::DiscuzX => Rules {
            board: r"/dzx/forum-(?P<board>[0-9]+)-1\.html$",
            board_page: r"/dzx/forum-(?P<board>[0-9]+)-{page}\.html$",
            thread: r"/dzx/thread-(?P<thread>[0-9]+)-1-[0-9]+\.html$",
            thread_page: r"/dzx/thread-(?P<thread>[0-9]+)-{page}-[0-9]+\.html$",
            first_page: 1,
            list: r#"<list row="tbody[id^=normalthread_]" title="a.xst" replies="td.num a" last-post="td.num + td.by em"/>"#,
            thread_rules: r##"<thread title="#thread_subject" post="table[id^=pid]" body-id="postmessage_\d+"
          author="div.authi a.xw1" time="em[id^=authorposton]" floor="a[id^=postnum]" strip="i.pstatus"
          quote="div.quote" quote-head="blockquote > font[size]" quote-of="a@href" quote-of-pattern="[?&amp;]pid=(\d+)"
          quote-author="a font" quote-author-pattern="^(.+?) 发表于"
          post-id="table[id^=pid]@id" post-id-pattern="^pid(\d+)$" author-id="div.authi a.xw1@href" author-id-pattern="uid=(\d+)"
          author-url="div.authi a.xw1@href" edited="i.pstatus" edited-pattern="于 (.+?) 编辑"
          location="div.pti div.authi" location-pattern="IP属地[：:]\s*(\p{Han}+)" links="a[href]" images="img.zoom@file"
          board-name="#pt a[href^='forum-']" thread-replies="#postlist div.hm" thread-replies-pattern="回复:\s*(\d+)"
          thread-views="#postlist div.hm" thread-views-pattern="查看:\s*(\d+)"/>"##,
        },
        // A list page from the second on adds `&fpage=N` to its thread
        // links; the thread pattern takes both forms (the URL is kept as found).
        ForumKind::Nexus => Rules {
            board: r"/nx/thread\.php\?fid=(?P<board>[0-9]+)$",
            board_page: r"/nx/thread\.php\?fid=(?P<board>[0-9]+)&page={page}$",
            thread: r"/nx/read\.php\?tid=(?P<thread>[0-9]+)(?:&fpage=[0-9]+)?$",
            thread_page: r"/nx/read\.php\?tid=(?P<thread>[0-9]+)&page={page}$",
            first_page: 1,
            list: r#"<list row="li.thread-item" title="a.subject-link" replies="span.replies" last-post="div.lastpost time"/>"#,
            thread_rules: r##"<thread title="#subject_tpc" post="div.floor" body="div.tpc_content"
          author="div.floor-head a.user" time="div.floor-head time" floor="span.floor-no"
          strip="div.quote, span.edit-note"/>"##,
        },
        // NodeBB as a client without JavaScript gets it: ids then any slug,
        // the patterns ending at the slug so that a post's permalink
        // (`…/{slug}/{index}`) and the sorted views stay out; later pages
        // are linked only inside `<noscript>` and from `<link rel="next">`;
        // every time is an empty `span.timeago` whose `title` holds it in
        // UTC, read with `@title` and moved to the forum's +08:00. A list
        // row shows two times (the first post's, then the last one's in
        // the teaser) and three counts (votes, replies, views). The line
        // NodeBB's quote button writes before a quote ("@小明 在 标题 中说：")
        // is its intro: it links the quoted post and mentions its author.
        ForumKind::Modern => Rules {
            board: r"/md/category/(?P<board>[0-9]+)/[^/?#]+$",
            board_page: r"/md/category/(?P<board>[0-9]+)/[^/?#]+\?page={page}$",
            thread: r"/md/topic/(?P<thread>[0-9]+)/[^/?#]+$",
            thread_page: r"/md/topic/(?P<thread>[0-9]+)/[^/?#]+\?page={page}$",
            first_page: 1,
            list: r#"<list row="li[component='category/topic']" title="h2[component='topic/header'] > a" replies="div.stats-replies span.human-readable-number"
        last-post="div[component='topic/teaser'] span.timeago@title"/>"#,
            thread_rules: r#"<thread title="span[component='topic/title']" post="li[component=post]" body="div[component='post/content']"
          author="a[itemprop=author]" time="span.timeago@title" floor="a.post-index" time-zone="+08:00"
          quote="blockquote" quote-intro="p" quote-of="a[href*='/post/']@href" quote-of-pattern="/post/(\d+)$"
          quote-author="a.plugin-mentions-user" quote-author-pattern="^@(.+)$"
          post-id="li[component=post]@data-pid" author-id="a[itemprop=author]@data-uid" author-url="a[itemprop=author]@href"
          likes="span[component='post/vote-count']@data-votes" board-name="div.category-item a"
          thread-views="i.fa-eye + span.human-readable-number@title"/>"#,
        },
    }
}

fn normalized_base(base_url: &str) -> io::Result<String> {
    let base = base_url.trim();
    let rest = base.strip_prefix("http://").or_else(|| base.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') && !base.contains(['<', '>', '&', '"', ' ']) => {
            Ok(if base.ends_with('/') { base.to_owned() } else { format!("{base}/") })
        }
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("not an http(s) base URL: {base_url:?}"))),
    }
}

/// The site file for one forum served at `base_url` (`http://127.0.0.1:PORT/`).
///
/// There is no `<encoding>`, so luntan has to detect each forum's encoding
/// (and see through the Discuz! forum's `gb2312` label).
pub fn site_file(cfg: &FixtureConfig, kind: ForumKind, base_url: &str) -> io::Result<String> {
    let base = normalized_base(base_url)?;
    let r = rules(kind);
    // Enough for every thread landing in one board: no crawl of the fixture
    // stops short of the last list page.
    let max_pages = cfg.threads.div_ceil(kind.list_page_size()).clamp(1, u32::MAX as usize);
    let first = |p: u32| if p == 1 { String::new() } else { format!(r#" first="{p}""#) };
    Ok(format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by luntan-fixture (seed {seed}, {threads} threads, {boards} boards): {what}. -->
<site id="{id}">
  <name>{name}</name>
  <home>{base}{home}</home>
  <politeness delay-ms="0" concurrency="4"/>
  <max-board-pages>{max_pages}</max-board-pages>
{extras}  <links>
    <board><![CDATA[{board}]]></board>
    <board-page{fp}><![CDATA[{board_page}]]></board-page>
    <thread><![CDATA[{thread}]]></thread>
    <thread-page{fp}><![CDATA[{thread_page}]]></thread-page>
  </links>
  {list}
  {thread_rules}
</site>
"#,
        seed = cfg.seed,
        threads = cfg.threads,
        boards = cfg.boards,
        what = match kind {
            ForumKind::Discuz => "Discuz!-style, GBK pages labelled gb2312",
            ForumKind::Phpbb => "phpBB-style, Big5, Traditional Chinese",
            ForumKind::Bbs => "a modern forum, UTF-8 with no charset declared",
            ForumKind::DiscuzX => "Discuz! X3.4 with rewritten URLs, GB18030 pages labelled gbk",
            ForumKind::Nexus => "PHPWind-style, UTF-8 declared in the HTTP header only",
            ForumKind::Modern => "NodeBB-style as served without JavaScript, UTF-8, pagers in noscript, UTC times in title attributes",
        },
        id = kind.site_id(),
        name = kind.name(),
        home = kind.home_path().trim_start_matches('/'),
        board = r.board,
        board_page = r.board_page,
        // Discuz!'s search adds `&highlight=` to thread links: the pattern
        // stops at the id and luntan drops what follows.
        thread = if kind == ForumKind::Discuz && cfg.activity.search_mode == SearchMode::SearchId {
            r"/dz/forum\.php\?mod=viewthread&tid={thread}(?:&|$)"
        } else {
            r.thread
        },
        thread_page = r.thread_page,
        fp = first(r.first_page),
        list = r.list,
        thread_rules = r.thread_rules,
        extras = extras(cfg, kind, &base),
    ))
}

/// Site-file elements beyond links and rules: the forum's search, its
/// accounts (login forms and cookies alternating, so both kinds are
/// exercised) and, with topics, a `<focus>`.
fn extras(cfg: &FixtureConfig, kind: ForumKind, base: &str) -> String {
    use std::fmt::Write as _;
    let base = base.trim_end_matches('/');
    let mut out = String::new();
    if cfg.topics.is_some() {
        let _ = writeln!(out, "  <focus alpha=\"0.3\" threshold=\"0.08\">\n    <topic>{}</topic>\n  </focus>", TOPIC_WORDS.join(" "));
    }
    let (row, time, encoding) = match kind {
        ForumKind::Discuz => ("li.pbw", "span.time", "gbk"),
        ForumKind::Phpbb => ("div.search.post", "dd.search-result-date", "big5"),
        ForumKind::Bbs => ("li.result", "time.posted", "utf-8"),
        // No search or accounts the fixture serves (see `crate::search`).
        ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => return out,
    };
    match cfg.activity.search_mode {
        SearchMode::Ideal => {
            // The template with placeholders, built from a real search path.
            let template = Fixture::search_path(kind, "KW", 7).replace("=KW", "={keyword}").replace("page=7", "page={page}");
            let _ = writeln!(out, "  <search row=\"{row}\" time=\"{time}\" encoding=\"{encoding}\">\n    <url><![CDATA[{base}{template}]]></url>\n  </search>");
        }
        SearchMode::SearchId => {
            let start = search::search_start_path(kind, "KW").replace("=KW", "={keyword}");
            // Discuz!'s wording is given; the others rely on luntan's default.
            let empty = if kind == ForumKind::Discuz { "\n    <empty selector=\"p.emp\">没有找到匹配结果</empty>" } else { "" };
            let _ = writeln!(
                out,
                "  <search row=\"{row}\" time=\"{time}\" encoding=\"{encoding}\" next=\"div.pg a.nxt\" interval-ms=\"{interval}\">\n    <url><![CDATA[{base}{start}]]></url>\n    <busy>只能进行一次搜索|只能進行一次搜索</busy>{empty}\n  </search>",
                interval = cfg.activity.search_interval.as_millis()
            );
        }
    }
    for (i, (user, password)) in cfg.activity.accounts.iter().enumerate() {
        let esc = |s: &str| {
            let mut o = String::new();
            esc_into(&mut o, s);
            o
        };
        if i % 2 == 0 {
            let _ = writeln!(
                out,
                "  <account name=\"{u}\" login-url=\"{base}{login}\">\n    <field name=\"username\">{u}</field>\n    <field name=\"password\">{p}</field>\n  </account>",
                u = esc(user),
                login = esc(Fixture::login_path(kind)),
                p = esc(password)
            );
        } else {
            let token = search::cookie_for(cfg, user, password);
            let _ = writeln!(out, "  <account name=\"{}\" cookie=\"{}\"/>", esc(user), esc(&token));
        }
    }
    out
}

/// Writes `<site>.xml` for every forum in `cfg` into `dir` (created if
/// missing) and returns the paths written.
pub fn write_site_files(cfg: &FixtureConfig, base_url: &str, dir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut kinds = cfg.forums.clone();
    kinds.dedup();
    for kind in ForumKind::EVERY.into_iter().filter(|k| kinds.contains(k)) {
        let path = dir.join(format!("{}.xml", kind.site_id()));
        std::fs::write(&path, site_file(cfg, kind, base_url)?)?;
        written.push(path);
    }
    Ok(written)
}

/// The site files of the two sites drawn by JavaScript ([`crate::microblog`]):
/// protocol mode, every page read from its JSON endpoint.
pub fn microblog_site_files(base_url: &str) -> Vec<(&'static str, String)> {
    let base = base_url.trim_end_matches('/');
    let mb = format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- A microblog read through its JSON (S4): users are boards, a post with its comments a thread. -->
<site id="mb">
  <name>微博</name>
  <home>{base}/mb/</home>
  <politeness delay-ms="0" concurrency="4" timeout-ms="10000" retries="3"/>
  <json time-zone="+08:00">
    <seed>1001</seed>
    <seed>1002</seed>
    <!-- a user's timeline, newest first; the next page starts below since_id -->
    <list paging="cursor" next="$.data.cardlistInfo.since_id" items="$.data.cards[?@.card_type == 9].mblog"
          id="$.id" replies="$.comments_count" time="$.created_at"><![CDATA[api/container/getIndex?uid={{board}}&since_id={{cursor}}]]></list>
    <!-- the post, its long text whole -->
    <thread items="$.data" author="$.user.screen_name" time="$.created_at" body="$.text" body-format="html"><![CDATA[api/statuses/show?id={{thread}}]]></thread>
    <!-- comments, oldest first; max_id 0 ends them -->
    <comments paging="cursor" next="$.data.max_id" items="$.data.data[*]" author="$.user.screen_name" time="$.created_at"
              body="$.text" body-format="html"><![CDATA[api/comments/hotflow?id={{thread}}&mid={{thread}}&max_id={{cursor}}&max_id_type=0]]></comments>
    <!-- users met in reposts, mentions and comments join the crawl -->
    <users max="100" depth="3" followers="1" activity="0.5">
      <found id="$.id" name="$.screen_name" followers="$.followers_count" activity="$.statuses_count">$..user</found>
      <link><![CDATA[/mb/u/{{board}}]]></link>
    </users>
  </json>
</site>
"##
    );
    let xhr = format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- A forum whose replies load by XHR under one thread URL, read through its JSON. -->
<site id="xhr">
  <name>异步论坛</name>
  <home>{base}/xhr/</home>
  <politeness delay-ms="0" concurrency="4" timeout-ms="10000" retries="3"/>
  <json time-zone="+08:00">
    <seed>1</seed>
    <seed>2</seed>
    <list paging="offset" page-size="4" items="$.threads[*]" id="$.tid" title="$.subject" replies="$.replies"
          time="$.lastpost"><![CDATA[api/threads?fid={{board}}&offset={{offset}}&limit=4]]></list>
    <thread items="$.thread" title="$.subject" author="$.author.name" time="$.created" body="$.message"><![CDATA[api/thread?tid={{thread}}]]></thread>
    <comments paging="page" page-size="10" items="$.replies[*]" floor="$.floor" author="$.author.name" time="$.time_ms"
              body="$.message" body-format="text"><![CDATA[api/replies?tid={{thread}}&page={{page}}]]></comments>
  </json>
</site>
"##
    );
    vec![("mb", mb), ("xhr", xhr)]
}

/// The site file of the XHR forum read in a browser (S4's event-driven
/// mode): the same forum as [`microblog_site_files`]' `xhr`, its pages
/// drawn by Chromium, its replies paged by clicking "下一页" under one URL,
/// and a "刷新" link whose state repeats the first.
pub fn browser_site_file(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- The XHR forum read in a browser (S4): every page drawn by its script, every request it makes held to the politeness below. -->
<site id="xhr-browser">
  <name>异步论坛（浏览器）</name>
  <home>{base}/xhr/</home>
  <politeness delay-ms="20" concurrency="2" timeout-ms="10000" retries="2"/>
  <links>
    <board><![CDATA[/xhr/forum/{{board}}$]]></board>
    <thread><![CDATA[/xhr/thread/{{thread}}$]]></thread>
  </links>
  <thread title="h1" post="div.post" author="b.author" time="span.time" body="div.message"/>
  <browser timeout-ms="8000" settle-ms="150">
    <!-- a board's threads arrive by XHR -->
    <list><wait selector="a.thread"/></list>
    <thread>
      <wait selector="#replies"/>
      <!-- replies ten a page under the one URL; each page a state -->
      <click selector="#nav button.more" max="200"/>
      <!-- back to the first page: a state seen before, dropped -->
      <click selector="a.refresh"/>
    </thread>
  </browser>
</site>
"##
    )
}

/// The site file of the microblog read in a browser (S4's event-driven
/// mode): the same site as [`microblog_site_files`]' `mb`, every page drawn
/// by Chromium. Users are boards, followed from the seeds through the
/// timelines (reposts, @mentions) and, via download, the comments; a
/// timeline is scrolled until it ends; a post's comments are opened,
/// "查看更多评论" clicked until they end (each click appends: a state kept
/// because its comments grew), then the "按时间" tab, whose first page is
/// the one seen first: a duplicate state, dropped.
pub fn microblog_browser_site_file(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- The microblog read in a browser (S4): every page drawn by its script, every request it makes held to the politeness below. -->
<site id="mb-browser">
  <name>微博（浏览器）</name>
  <home>{base}/mb/</home>
  <politeness delay-ms="20" concurrency="2" timeout-ms="10000" retries="2"/>
  <links>
    <!-- users are boards; users a timeline or a post's comments link to are read too, 3 hops out at most -->
    <board depth="3" max="100"><![CDATA[/mb/u/{{board}}$]]></board>
    <thread><![CDATA[/mb/status/{{thread}}$]]></thread>
  </links>
  <!-- a timeline's own posts: a repost's original belongs to its author's timeline -->
  <list row="div.m-item > div.card > header"/>
  <!-- a post names no thread: its first words do, as in protocol mode -->
  <thread title="first-post" post="div.card:not(.retweet), div.comment" author="a.name" time=".time"
          body="div.weibo-text, span.ctt" time-zone="+08:00"/>
  <browser timeout-ms="8000" settle-ms="150">
    <list><scroll items="div.m-item" max="50"/></list>
    <thread>
      <wait selector="div.card"/>
      <click selector="a.comments"/>
      <click selector="a.more" items="div.comment" max="50"/>
      <click selector="a.tab.by-time"/>
    </thread>
  </browser>
</site>
"##
    )
}

/// Writes [`microblog_site_files`] into `dir` and returns the paths written.
pub fn write_microblog_site_files(base_url: &str, dir: &Path) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (id, text) in microblog_site_files(base_url) {
        let path = dir.join(format!("{id}.xml"));
        std::fs::write(&path, text)?;
        written.push(path);
    }
    Ok(written)
}

/// The news site's file ([`crate::news`]), a hybrid site: sections,
/// lists and articles read as HTML, each article's comments from the JSON
/// API its page script calls (with their authors' ids, likes, locations
/// and the comments they answer, replies nested inside them), the API's
/// key read off the article page, and the comment count asked for by
/// later rounds.
pub fn news_site_file(base_url: &str) -> String {
    news_site(
        base_url,
        "A news site: articles in HTML, their comments loaded by the page's script as JSON.",
        r##"  <list row="li.item" title="a.title"/>
  <thread title="h1.headline" post="article.story" body="div.content" author="span.author" time="time@datetime"/>
  <!-- five top-level comments a page, each with its replies nested inside it -->
  <comments key="#comments@data-thread-key" count="$.total" paging="page" page-size="5"
            items="$.comments[*]" id="$.id" author="$.user.nick" time="$.created"
            body="$.content" body-format="text" author-id="$.uid" parent="$.parent" children="$.replies[*]"
            likes="$.like_count" location="$.ip_location"><![CDATA[api/comments?key={key}&page={page}]]></comments>
"##,
    )
}

/// The news site read in Chromium (browser mode): the articles as
/// [`news_site_file`] reads them, the comments as the page's script draws
/// them, each reply inside the comment it answers (`nested-posts`).
pub fn news_browser_site_file(base_url: &str) -> String {
    news_site(
        base_url,
        "The news site read in Chromium: its comments drawn by the page's script, each reply inside the comment it answers.",
        r##"  <thread title="h1.headline" post="article.story, div.comment" nested-posts="true" author="span.author, div.comment > b"
          time="time, div.comment > span.time" body="div.content, div.comment" strip="div.comment > b, div.comment > span.time"/>
  <browser timeout-ms="10000" settle-ms="150">
    <thread><wait selector="#comments h2"/></thread>
  </browser>
"##,
    )
}

/// A site file of the news site: its links, then `rules`.
fn news_site(base_url: &str, comment: &str, rules: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        r##"<?xml version="1.0" encoding="UTF-8"?>
<!-- {comment} -->
<site id="news">
  <name>新闻网</name>
  <home>{base}/news/</home>
  <politeness delay-ms="0" concurrency="4" timeout-ms="10000" retries="3"/>
  <links>
    <board><![CDATA[/news/section/{{board}}$]]></board>
    <thread><![CDATA[/news/article/{{thread}}\.html$]]></thread>
  </links>
{rules}</site>
"##
    )
}

/// Writes [`news_site_file`] into `dir` as `news.xml`; returns its path.
pub fn write_news_site_file(base_url: &str, dir: &Path) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("news.xml");
    std::fs::write(&path, news_site_file(base_url))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::site::Site;

    #[test]
    fn site_files_parse_and_patterns_split_first_and_later_pages() {
        let cfg = FixtureConfig::default();
        let dir = tempfile::tempdir().unwrap();
        let paths = write_site_files(&cfg, "http://127.0.0.1:8080", dir.path()).unwrap();
        assert_eq!(paths.len(), 3);
        let base = "http://127.0.0.1:8080";
        for (kind, board1, board2, thread1, thread2) in [
            (
                ForumKind::Discuz,
                "/dz/forum.php?mod=forumdisplay&fid=5",
                "/dz/forum.php?mod=forumdisplay&fid=5&page=2",
                "/dz/forum.php?mod=viewthread&tid=1234",
                "/dz/forum.php?mod=viewthread&tid=1234&page=3",
            ),
            (
                ForumKind::Phpbb,
                "/phpbb/viewforum.php?f=5",
                "/phpbb/viewforum.php?f=5&start=25",
                "/phpbb/viewtopic.php?t=1234",
                "/phpbb/viewtopic.php?t=1234&start=30",
            ),
            (
                ForumKind::Bbs,
                "/bbs/board/tech/",
                "/bbs/board/tech/?page=2",
                "/bbs/topic/1234/%E8%80%83%E7%A0%94/",
                "/bbs/topic/1234/%E8%80%83%E7%A0%94/?page=3",
            ),
        ] {
            let path = dir.path().join(format!("{}.xml", kind.site_id()));
            let text = std::fs::read_to_string(&path).unwrap();
            let site = Site::parse(&text, &path).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(site.id, kind.site_id());
            assert_eq!(site.encoding, None);
            assert_eq!(site.home.as_str(), format!("{base}{}", kind.home_path()));
            assert_eq!(site.politeness.concurrency, 4);
            assert!(site.list.is_some());
            let l = &site.links;
            let url = |p: &str| format!("{base}{p}");
            assert!(l.board.captures(&url(board1)).is_some(), "{kind:?} board");
            assert!(l.board.captures(&url(board2)).is_none(), "{kind:?} board vs page");
            let bp = l.board_page.as_ref().unwrap();
            assert!(bp.captures(&url(board2)).is_some());
            assert!(l.thread.captures(&url(thread1)).unwrap().unwrap().thread.as_deref() == Some("1234"));
            assert!(l.thread.captures(&url(thread2)).is_none(), "{kind:?} thread vs page");
            let tp = l.thread_page.as_ref().unwrap();
            assert!(!tp.is_first(tp.captures(&url(thread2)).unwrap().unwrap().page));
            assert!(l.thread.captures(&url(board1)).is_none());
            assert!(l.board.captures(&url(thread1)).is_none());
        }
    }

    #[test]
    fn bad_base_urls_are_refused() {
        let cfg = FixtureConfig::default();
        assert!(site_file(&cfg, ForumKind::Discuz, "ftp://x/").is_err());
        assert!(site_file(&cfg, ForumKind::Discuz, "http://").is_err());
        assert!(site_file(&cfg, ForumKind::Discuz, "http://a/<b>").is_err());
        assert!(site_file(&cfg, ForumKind::Discuz, "http://127.0.0.1:1").unwrap().contains("<home>http://127.0.0.1:1/dz/forum.php</home>"));
    }
}
