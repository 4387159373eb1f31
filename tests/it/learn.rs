//! `luntan-learn` against the fixture forums, each served alone: the site
//! file it learns from the home URL crawls the same threads into byte for
//! byte the same XML as the hand-written one (version 1's fields), and,
//! field by field, version 2's conversation fields it learns read what the
//! hand-written file reads, those it does not learn left out rather than
//! read wrong; its link patterns classify
//! every URL the learner and the crawl met as the hand-written ones do
//! (coverage and precision, FoCUS's figures); and the learner keeps to
//! its request budget and its delay, as the forum's own log shows.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::common::{self, Work};
use crate::hostile::{assert_polite, run_logged};
use luntan_core::site::{LinkPattern, Site};
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

const THREADS: usize = 120;
const DELAY: Duration = Duration::from_millis(20);
const BUDGET: usize = 300;

/// A URL as the crawler would take it: kind, board, thread, page.
type Class = (&'static str, Option<String>, Option<String>, Option<u64>);

/// How the crawler would take a URL: a later page, else a first page,
/// with what it captured.
fn classify(site: &Site, url: &str) -> Option<Class> {
    let l = &site.links;
    let take = |p: &LinkPattern| p.captures(url).and_then(Result::ok);
    for (what, page, first) in [("thread", l.thread_page.as_ref(), &l.thread), ("board", l.board_page.as_ref(), &l.board)] {
        if let Some(m) = page.and_then(|p| take(p).filter(|m| !p.is_first(m.page))) {
            return Some((if what == "thread" { "thread-page" } else { "board-page" }, m.board.map(String::from), m.thread.map(String::from), m.page));
        }
        if let Some(m) = take(first) {
            return Some((what, m.board.map(String::from), m.thread.map(String::from), None));
        }
    }
    None
}

/// Per kind of link: (hand-written matches, learned matches, the same).
type Agreement = BTreeMap<&'static str, (usize, usize, usize)>;

fn agreement(hand: &Site, learned: &Site, urls: &[String]) -> Agreement {
    let mut out = Agreement::new();
    for u in urls {
        let (h, l) = (classify(hand, u), classify(learned, u));
        if let Some(h) = &h {
            out.entry(h.0).or_default().0 += 1;
        }
        if let Some(l) = &l {
            out.entry(l.0).or_default().1 += 1;
        }
        if let Some(h) = h.filter(|h| Some(h) == l.as_ref()) {
            out.entry(h.0).or_default().2 += 1;
        }
    }
    out
}

/// Every thread XML of a crawl, parsed.
fn docs(work: &Work) -> BTreeMap<std::path::PathBuf, luntan_core::ThreadDoc> {
    work.files(&work.data().join("pages"))
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "xml"))
        .map(|(p, bytes)| {
            let doc = luntan_core::ThreadDoc::from_xml(&String::from_utf8_lossy(&bytes)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, doc)
        })
        .collect()
}

/// Every thread XML of a crawl as version 1 has it: version 2's fields are
/// compared one by one ([`v2_agreement`]); the rest must be the same byte
/// for byte.
fn xml_files(docs: &BTreeMap<std::path::PathBuf, luntan_core::ThreadDoc>) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    docs.iter().map(|(p, doc)| (p.clone(), common::v1_view(doc).to_xml().into_bytes())).collect()
}

/// Version 2's fields, per post (per thread for the last three), each
/// value as a string (none where the XML leaves it out).
const V2_FIELDS: [&str; 15] = [
    "post-id",
    "author-id",
    "author-url",
    "reply-to",
    "quote",
    "quote-of",
    "quote-author",
    "edited",
    "likes",
    "location",
    "links",
    "images",
    "board-name",
    "thread-replies",
    "thread-views",
];

fn v2_values(doc: &luntan_core::ThreadDoc, field: &str) -> Vec<Option<String>> {
    let quotes = |p: &luntan_core::Post, f: &dyn Fn(&luntan_core::doc::Quote) -> Option<String>| -> Option<String> {
        let v: Vec<Option<String>> = p.quotes.iter().map(f).collect();
        v.iter().any(Option::is_some).then(|| format!("{v:?}"))
    };
    let per_post = |f: &dyn Fn(&luntan_core::Post) -> Option<String>| doc.posts.iter().map(f).collect();
    match field {
        "post-id" => per_post(&|p| p.id.clone()),
        "author-id" => per_post(&|p| p.author_id.clone()),
        "author-url" => per_post(&|p| p.author_url.clone()),
        "reply-to" => per_post(&|p| p.reply_to.clone()),
        "quote" => per_post(&|p| quotes(p, &|q| Some(q.paragraphs.join("\n")))),
        "quote-of" => per_post(&|p| quotes(p, &|q| q.of.clone())),
        "quote-author" => per_post(&|p| quotes(p, &|q| q.author.clone())),
        "edited" => per_post(&|p| p.edited.clone()),
        "likes" => per_post(&|p| p.likes.map(|n| n.to_string())),
        "location" => per_post(&|p| p.location.clone()),
        "links" => per_post(&|p| (!p.links.is_empty()).then(|| format!("{:?}", p.links))),
        "images" => per_post(&|p| (!p.images.is_empty()).then(|| format!("{:?}", p.images))),
        "board-name" => vec![doc.board_name.clone()],
        "thread-replies" => vec![doc.replies.map(|n| n.to_string())],
        "thread-views" => vec![doc.views.map(|n| n.to_string())],
        _ => unreachable!("{field}"),
    }
}

/// One version 2 field over a crawl: values the hand-written file read,
/// values the learned one read, those the same, and those the learned one
/// read otherwise than the hand-written one (wrong, or where it read none).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FieldAgreement {
    pub hand: usize,
    pub learned: usize,
    pub same: usize,
    pub wrong: usize,
}

fn v2_agreement(
    hand: &BTreeMap<std::path::PathBuf, luntan_core::ThreadDoc>,
    learned: &BTreeMap<std::path::PathBuf, luntan_core::ThreadDoc>,
) -> BTreeMap<&'static str, FieldAgreement> {
    let mut out = BTreeMap::new();
    for field in V2_FIELDS {
        let a: &mut FieldAgreement = out.entry(field).or_default();
        for (p, h) in hand {
            let Some(l) = learned.get(p) else { continue };
            for (hv, lv) in v2_values(h, field).into_iter().zip(v2_values(l, field)) {
                a.hand += hv.is_some() as usize;
                a.learned += lv.is_some() as usize;
                a.same += (hv.is_some() && hv == lv) as usize;
                a.wrong += (lv.is_some() && hv != lv) as usize;
            }
        }
    }
    out
}

/// Per field: learned and read as the hand-written file reads it on every
/// post, or not learned and read on none.
fn assert_v2(id: &str, got: &BTreeMap<&'static str, FieldAgreement>, learned: &[&str]) {
    for (field, a) in got {
        if learned.contains(field) {
            assert!(a.hand > 0, "{id}: {field}: the hand-written file reads none, so the test cannot tell");
            assert_eq!((a.same, a.wrong), (a.hand, 0), "{id}: {field}: learned, but read otherwise than the hand-written file: {a:?}");
        } else {
            assert_eq!(a.learned, 0, "{id}: {field}: not meant to be learned, yet read: {a:?}");
        }
    }
}

fn crawl(work: &Work) {
    for stage in ["discover", "download", "extract"] {
        work.ok(stage, &["--quiet"]);
    }
}

/// What comparing the two crawls found.
struct Compared {
    requests: usize,
    threads: usize,
    xml: usize,
    xml_same: usize,
    /// XML files that differ in more than their `<url>` line.
    xml_beyond_url: usize,
    /// Per kind of link: (hand-written, learned, the same).
    agree: Agreement,
    /// Per version 2 field: how the learned file's reading agrees.
    v2: BTreeMap<&'static str, FieldAgreement>,
    /// The learned file.
    text: String,
}

/// Learns `kind`'s site file, crawls with it and with the hand-written
/// one, and compares: the same threads always; every XML file byte for
/// byte and every link alike when `exact`.
fn learn_matches_hand_written(kind: ForumKind, exact: bool) -> Compared {
    let cfg = FixtureConfig { threads: THREADS, boards: 3, forums: vec![kind], ..FixtureConfig::default() };
    let server = FixtureServer::start_blocking(cfg).expect("fixture server");
    let id = kind.site_id();

    // Learn, politely.
    let learned = Work::new();
    let logs = tempfile::tempdir().unwrap();
    let home = server.url(kind.home_path());
    let (explained, claims) =
        run_logged(&learned, logs.path(), "learn", &[&home, "--id", id, "--delay-ms", &DELAY.as_millis().to_string(), "--quiet", "--explain"]);
    let learn_log = server.requests();
    server.clear_requests();
    assert!(learn_log.len() <= BUDGET, "{id}: the learner sent {} requests (budget {BUDGET})", learn_log.len());
    // NodeBB's `/post/{pid}` links (in quotes) each answer 302 to the topic
    // page holding the post: a kind whose pages all go elsewhere is asked a
    // few times (REDIRECTS_SEEN), not as often as any other kind.
    if kind == ForumKind::Modern {
        let asked = learn_log.iter().filter(|r| r.path_and_query.starts_with("/md/post/")).count();
        eprintln!("{id}: /md/post/ asked {asked} times");
        assert!((1..=luntan_learn::sample::REDIRECTS_SEEN).contains(&asked), "{id}: /md/post/ asked {asked} times");
    }
    assert_polite(&format!("{id}: luntan-learn"), &learn_log, &claims, 1, DELAY);
    let path = learned.sites().join(format!("{id}.xml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    eprintln!("--- learned {id}.xml ---\n{text}");
    let learned_site = Site::parse(&text, &path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    // --explain names each rule with what it came from.
    for rule in ["board:", "board-page:", "thread:", "thread-page:", "list row:", "thread post:", "thread author:", "thread time:"] {
        let at = explained.lines().position(|l| l.starts_with(rule)).unwrap_or_else(|| panic!("{id}: --explain has no {rule:?} line:\n{explained}"));
        let auto = explained.lines().nth(at).is_some_and(|l| l.ends_with(": auto"));
        assert!(
            auto || explained.lines().nth(at + 1).is_some_and(|l| l.trim_start().starts_with("from ") || l.contains("first page")),
            "{id}: {rule} has no example"
        );
    }

    // Crawl with each file; the learned one at the hand-written one's pace.
    let hand = Work::new();
    server.write_site_files(&hand.sites()).unwrap();
    common::set_politeness(&path, r#"delay-ms="0" concurrency="4""#);
    crawl(&hand);
    let crawl_log = server.requests();
    crawl(&learned);

    let (h_rows, l_rows) = (hand.rows(), learned.rows());
    assert!(h_rows.len() >= THREADS / 2, "{id}: the hand-written crawl found only {} threads", h_rows.len());
    let missing: Vec<_> = h_rows.keys().filter(|k| !l_rows.contains_key(*k)).collect();
    let extra: Vec<_> = l_rows.keys().filter(|k| !h_rows.contains_key(*k)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "{id}: threads the learned file missed {missing:?}, found beyond the hand-written {extra:?}");
    let (h_docs, l_docs) = (docs(&hand), docs(&learned));
    let (h_xml, l_xml) = (xml_files(&h_docs), xml_files(&l_docs));
    let v2 = v2_agreement(&h_docs, &l_docs);
    for (field, a) in &v2 {
        eprintln!("{id}: v2 {field}: hand-written {} values, learned {}, the same {}, otherwise {}", a.hand, a.learned, a.same, a.wrong);
    }
    assert!(!h_xml.is_empty());
    let differ: Vec<&Path> = h_xml.iter().filter(|(p, b)| l_xml.get(*p) != Some(b)).map(|(p, _)| p.as_path()).collect();
    if let Some(first) = differ.first().filter(|_| exact) {
        let show =
            |m: &BTreeMap<std::path::PathBuf, Vec<u8>>| m.get(*first).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_else(|| "(missing)".into());
        panic!(
            "{id}: {} of {} thread XML files differ; the first, {}:\nhand-written:\n{}\nlearned:\n{}",
            differ.len(),
            h_xml.len(),
            first.display(),
            show(&h_xml),
            show(&l_xml)
        );
    }
    assert_eq!(h_xml.len(), l_xml.len(), "{id}: XML files");
    let without_url = |b: &[u8]| String::from_utf8_lossy(b).lines().filter(|l| !l.trim_start().starts_with("<url>")).collect::<Vec<_>>().join("\n");
    let beyond_url = differ.iter().filter(|p| without_url(&h_xml[**p]) != without_url(&l_xml[**p])).count();
    if let Some(first) = differ.first() {
        eprintln!(
            "{id}: {} of {} thread XML files differ; the first, {}:\n{}",
            differ.len(),
            h_xml.len(),
            first.display(),
            line_diff(&h_xml[*first], &l_xml[*first])
        );
    }

    // Link patterns against the hand-written ones (which the pipeline test
    // holds to the fixture's truth), over every URL either crawl met.
    let hand_site = Site::load(&hand.sites().join(format!("{id}.xml"))).unwrap();
    let base = server.base_url();
    let mut urls: Vec<String> = learn_log.iter().chain(&crawl_log).map(|r| format!("{}{}", base.trim_end_matches('/'), r.path_and_query)).collect();
    // And every link on the thread pages saved, lookalikes included
    // (only-this-author, redirects, profiles), fetched or not.
    let home_url = url::Url::parse(&home).unwrap();
    let anchors = scraper::Selector::parse("a[href]").unwrap();
    for (p, bytes) in hand.files(&hand.data().join("pages")) {
        if p.extension().is_some_and(|e| e == "html") {
            let (_, text) = luntan_text::encoding::detect_and_decode(&bytes, None, None, None);
            let doc = scraper::Html::parse_document(&text.text);
            for a in doc.select(&anchors) {
                if let Some(u) = a.value().attr("href").and_then(|h| home_url.join(h.trim()).ok()).filter(|u| u.host() == home_url.host()) {
                    urls.push(u.to_string());
                }
            }
        }
    }
    urls.sort();
    urls.dedup();
    let agree = agreement(&hand_site, &learned_site, &urls);
    for (what, (h, l, same)) in &agree {
        eprintln!(
            "{id}: {what}: {same} of {h} hand-written matches learned (coverage {:.1} %), {same} of {l} learned matches right (precision {:.1} %)",
            100.0 * *same as f64 / (*h).max(1) as f64,
            100.0 * *same as f64 / (*l).max(1) as f64
        );
        assert_eq!(*h, *same, "{id}: {what}: the learned patterns miss URLs of the hand-written ones ({} URLs)", urls.len());
        if exact {
            assert_eq!(*l, *same, "{id}: {what}: the learned patterns take URLs the hand-written ones do not ({} URLs)", urls.len());
        }
    }
    assert!(agree.contains_key("thread") && agree.contains_key("board"), "{id}: {agree:?}");
    eprintln!(
        "{id}: {} requests to learn; {} threads the same, {} of {} XML files the same; {} URLs compared",
        learn_log.len(),
        l_rows.len(),
        h_xml.len() - differ.len(),
        h_xml.len(),
        urls.len()
    );
    Compared {
        requests: learn_log.len(),
        threads: l_rows.len(),
        xml: h_xml.len(),
        xml_same: h_xml.len() - differ.len(),
        xml_beyond_url: beyond_url,
        agree,
        v2,
        text,
    }
}

/// The lines of `a` and `b` that differ, marked.
fn line_diff(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    for i in 0..al.len().max(bl.len()) {
        let (x, y) = (al.get(i).copied().unwrap_or(""), bl.get(i).copied().unwrap_or(""));
        if x != y {
            out.push_str(&format!("- {x}\n+ {y}\n"));
        }
    }
    out
}

/// The conversation fields the learner finds per style, each read on every
/// post as the hand-written file reads it; the others it leaves out.
const PHPBB_V2: [&str; 9] = ["post-id", "author-id", "author-url", "reply-to", "quote", "quote-of", "quote-author", "edited", "board-name"];
/// Discuz! X shows every field but likes.
fn dzx_v2() -> Vec<&'static str> {
    V2_FIELDS.into_iter().filter(|f| *f != "likes").collect()
}
/// A quote's post and author are read in the line before it that
/// introduces it (`quote-intro`); the view count beside an icon labelled
/// only in its `title`, the exact number in the count's own `title`.
const MD_V2: [&str; 10] = ["post-id", "author-id", "author-url", "reply-to", "quote", "quote-of", "quote-author", "likes", "board-name", "thread-views"];

/// A forum whose hand-written file reads no conversation field: learning
/// conversation fields leaves version 1's reading as it was (the XML
/// compared byte for byte above), and nothing the learner adds is a quote
/// rule taking words out of a body.
fn assert_v1_kept(c: &Compared) {
    assert!(c.v2.values().all(|a| a.hand == 0), "the hand-written file reads no version 2 field");
    assert!(!c.text.contains(" quote="), "{}", c.text);
    assert_eq!(c.xml_same, c.xml);
}

#[test]
fn a_site_file_learned_from_the_home_url_crawls_the_discuz_forum_exactly() {
    let c = learn_matches_hand_written(ForumKind::Discuz, true);
    assert_v1_kept(&c);
}

#[test]
fn a_site_file_learned_from_the_home_url_crawls_the_phpbb_forum_with_offset_pagers_exactly() {
    let c = learn_matches_hand_written(ForumKind::Phpbb, true);
    assert_v2("phpbb", &c.v2, &PHPBB_V2);
}

#[test]
fn a_site_file_learned_from_the_home_url_crawls_the_forum_with_chinese_slugs_exactly() {
    let c = learn_matches_hand_written(ForumKind::Bbs, true);
    assert_v1_kept(&c);
}

/// The three styles added to the fixture after the learner was written
/// (Discuz! X with rewritten URLs, a PHPWind-style forum and a NodeBB-style
/// one whose `/md/category/…` and `/md/topic/…` differ in one word): the same
/// threads, every hand-written link matched, and the same XML but for one
/// difference the hand-written PHPWind file makes on purpose: it keeps
/// `&fpage=N` (the list page a thread was found on) in the thread's URL,
/// where the learned pattern leaves the parameter open and luntan drops it
/// (so the learned patterns also take that forum's author-filter and
/// last-page links for the thread itself: the precision printed).
#[test]
fn site_files_learned_for_the_three_new_styles_read_them_as_the_hand_written_ones_do() {
    for kind in [ForumKind::DiscuzX, ForumKind::Nexus, ForumKind::Modern] {
        let c = learn_matches_hand_written(kind, kind != ForumKind::Nexus);
        assert!(c.threads >= THREADS / 2 && c.xml > 0, "{kind:?}");
        match kind {
            ForumKind::DiscuzX => assert_v2("dzx", &c.v2, &dzx_v2()),
            ForumKind::Modern => assert_v2("md", &c.v2, &MD_V2),
            // PHPWind's quotes, edit notes, ids and counts are learned too
            // (its hand-written file strips the quotes and reads none of
            // them); version 1's reading stays the same, as compared above.
            _ => assert!(c.v2.values().all(|a| a.hand == 0) && c.v2["quote"].learned > 0, "{kind:?}: {:?}", c.v2),
        }
        assert_eq!(c.xml_beyond_url, 0, "{kind:?}: XML files differ beyond their <url>");
        let (h, l, same) = c.agree["thread"];
        eprintln!(
            "{}: {} requests; {} threads; {} of {} XML files the same, {} more the same but for <url>; thread links: coverage {same}/{h}, precision {same}/{l}",
            kind.site_id(),
            c.requests,
            c.threads,
            c.xml_same,
            c.xml,
            c.xml - c.xml_same
        );
    }
}

/// The learned file without its first comment and with the port blurred.
fn rules_of(text: &str, base: &str) -> String {
    let port = base.trim_end_matches('/').rsplit(':').next().unwrap();
    text.lines().filter(|l| !l.starts_with("<!-- Learned by")).collect::<Vec<_>>().join("\n").replace(port, "PORT")
}

#[test]
fn a_hostile_forum_teaches_the_same_rules_as_a_calm_one() {
    // Transient 5xx, 429s, resets and stalls, traversal and off-host links,
    // mislabelled charsets and invalid bytes: retried, refused or read
    // through, and the rules come out the same.
    let learn = |hostility: luntan_fixture::Hostility| {
        let cfg = FixtureConfig { threads: THREADS, boards: 3, forums: vec![ForumKind::Discuz], hostility, ..FixtureConfig::default() };
        let server = FixtureServer::start_blocking(cfg).expect("fixture server");
        let work = Work::new();
        work.ok("learn", &[&server.url(ForumKind::Discuz.home_path()), "--id", "dz", "--delay-ms", "0", "--quiet"]);
        let text = std::fs::read_to_string(work.sites().join("dz.xml")).unwrap();
        rules_of(&text, &server.base_url())
    };
    let calm = learn(luntan_fixture::Hostility::default());
    let mut hostile = luntan_fixture::Hostility::percent(10);
    hostile.stall = Duration::from_millis(300);
    hostile.retry_after = Duration::from_millis(200);
    assert_eq!(learn(hostile), calm);
}

#[test]
fn a_home_page_that_leads_to_no_forum_exits_2_with_one_line() {
    let page = b"<html><head><title>just a page</title></head><body><p>nothing here</p><a href=\"/about\">about</a></body></html>".to_vec();
    let base = common::serve_static(vec![("/", "text/html", page.clone()), ("/about", "text/html", page)]);
    let work = Work::new();
    let out = work.stage("learn", &[&base, "--id", "none", "--delay-ms", "0", "--quiet"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().any(|l| l.contains(base.trim_end_matches('/')) && l.contains("threads")), "{err}");
    assert!(!work.sites().join("none.xml").exists());
}

/// A small forum whose posts are not all dated (two of three), so no page
/// reads as a thread: a home page linking two boards, a search and six
/// variants of one filtered view; boards that link three threads each;
/// threads whose posts link their authors' pages, and each a link that
/// fails.
fn undated_forum() -> String {
    let page = |title: &str, body: &str| format!("<!DOCTYPE html><html><head><title>{title} - Tiny</title></head><body>{body}</body></html>").into_bytes();
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut home = String::from("<ul class=\"boards\"><li><a href=\"/category/1\">Trains</a></li><li><a href=\"/category/2\">Boats</a></li></ul>");
    home.push_str("<p><a href=\"/search?q=trains\">search</a></p><p>");
    let mut routes: Vec<(&'static str, &'static str, Vec<u8>)> = Vec::new();
    for (filter, term) in [("week", "a"), ("week", "b"), ("month", "a"), ("month", "b"), ("year", "a"), ("year", "b")] {
        let path = leak(format!("/popular?filter={filter}&term={term}"));
        home.push_str(&format!("<a href=\"{path}\">{filter} {term}</a> "));
        routes.push((path, "text/html", page("Popular", "<p>Popular topics this week</p>")));
    }
    home.push_str("</p>");
    routes.push(("/", "text/html", page("Tiny", &home)));
    routes.push(("/search?q=trains", "text/html", page("Search", "<p>No results</p>")));
    let names = ["alice", "bob", "carol"];
    for board in 1..=2u32 {
        let mut list = String::from("<ul class=\"topics\">");
        for t in 3 * board - 2..=3 * board {
            list.push_str(&format!("<li><a href=\"/t/{t}\">Topic number {t} about the rails</a></li>"));
            let mut posts = format!("<h1>Topic number {t} about the rails</h1><div class=\"posts\">");
            for (i, who) in names.iter().enumerate() {
                // The last post shows no date.
                let when = if i < 2 { format!("2024-03-0{} 12:3{i}", i + 1) } else { "-".to_owned() };
                posts.push_str(&format!(
                    "<div class=\"post\"><a href=\"/user/{}\">{who}</a> <span class=\"time\">{when}</span><div class=\"body\">I rode the night train along the coast and wrote this down, part {i}.</div></div>",
                    i + 1
                ));
            }
            // A moderator's link that fails for a guest (Askbot's "close"
            // goes to a login page that is not there): served by no route.
            posts.push_str(&format!("</div><p class=\"tools\"><a href=\"/close/{t}\">close</a></p>"));
            routes.push((leak(format!("/t/{t}")), "text/html", page(&format!("Topic number {t} about the rails"), &posts)));
        }
        list.push_str("</ul>");
        routes.push((leak(format!("/category/{board}")), "text/html", page(&format!("Board {board}"), &list)));
    }
    for (i, who) in names.iter().enumerate() {
        routes.push((leak(format!("/user/{}", i + 1)), "text/html", page(who, &format!("<p>{who} joined in 2020</p>"))));
    }
    common::serve_static(routes) + "/"
}

#[test]
fn explain_names_candidates_when_nothing_can_be_learned() {
    let home = undated_forum();
    let base = home.trim_end_matches('/');
    let work = Work::new();
    let out = work.stage("learn", &[&home, "--id", "tiny", "--delay-ms", "0", "--quiet", "--explain"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("--- stdout ---\n{stdout}--- stderr ---\n{stderr}");
    // The one line on stderr names the page that came nearest.
    let line = stderr.lines().find(|l| l.contains("could not learn the threads")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("none of the") && line.contains("pages read shows repeated posts with dates"), "{line}");
    assert!(line.contains(&format!("(nearest: {base}/t/1: 2 dated records of 3 (80 % needed)")), "{line}");
    // --explain: the kinds read, each shape weighed and why it was
    // rejected, the shapes lists link to, the list pages, the failure.
    for want in [
        "kinds of URL read".to_owned(),
        "  /t/#: 6 read, 0 as threads, 0 redirected, 0 failed".to_owned(),
        // A kind whose first three pages all failed is asked no more.
        "  /close/#: 0 read, 0 as threads, 0 redirected, 3 failed".to_owned(),
        // Six variants of one view are one kind, and an aside one: two read.
        "  /popular?filter={w}&term={w} [aside: filter/sort]: 2 read".to_owned(),
        "[aside: user]".to_owned(),
        format!("  /t/#: 0 of 6 pages, rejected (nearest: {base}/t/1: 2 dated records of 3 (80 % needed))"),
        "shapes list-like pages link to most (distinct URLs; --partial takes the first as the threads'):\n  /t/#: 6".to_owned(),
        "list pages (distinct threads of /t/# (no pager) linked; 3 make a list; 2 found):".to_owned(),
        format!("  {base}/category/1: 3 threads"),
        "failed: could not learn the threads: none of the".to_owned(),
    ] {
        assert!(stdout.contains(&want), "--explain lacks {want:?}:\n{stdout}");
    }
    assert!(!work.sites().join("tiny.xml").exists());
}

#[test]
fn partial_writes_a_loadable_file_with_template_posts_where_posts_are_not_recognised() {
    let home = undated_forum();
    let base = home.trim_end_matches('/');
    let work = Work::new();
    let out = work.stage("learn", &[&home, "--id", "tiny", "--delay-ms", "0", "--quiet", "--partial"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a partial file still exits 2:\n{stderr}");
    assert!(stderr.contains("wrote a partial site file"), "{stderr}");
    let path = work.sites().join("tiny.xml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", path.display()));
    eprintln!("{text}");
    // What is missing is named at the top; the boards, lists and thread
    // links were learned from the links the lists make.
    assert!(text.contains("<!-- Check: could not learn the threads: none of the"), "{text}");
    assert!(text.contains("post=\"auto\""), "{text}");
    let site = Site::parse(&text, &path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let class = |u: &str| classify(&site, &format!("{base}{u}"));
    assert_eq!(class("/category/2"), Some(("board", Some("2".to_owned()), None, None)));
    assert_eq!(class("/t/5"), Some(("thread", None, Some("5".to_owned()), None)));
    assert_eq!(class("/user/2"), None);
    // And it works: the template reads the posts of a thread.
    let posts = luntan_extract::parse_page(&site, &get(base, "/t/5")).posts;
    assert_eq!(posts.len(), 3, "{text}");
}

/// The body of `path` on the loopback server at `base`.
fn get(base: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    // In one write: the server reads the request once, and a request
    // it has not read all of when it closes resets the connection.
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    let mut got = String::new();
    s.read_to_string(&mut got).unwrap();
    got.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default()
}

/// The fixture's news site draws each article's comments with a script
/// from a JSON API (five a page, the key in an attribute of the page,
/// replies nested inside comments), so no page the sample reads holds a
/// comment. The learner draws a few articles in Chromium, names the API in
/// a top-level `<comments>`, and the learned file, crawled without a
/// browser, reads every article's comments as the hand-written file does:
/// the same authors, times, words, ids and answers, in the same order.
#[test]
fn comments_a_script_loads_as_json_are_learned_and_read_as_the_hand_written_file_reads_them() {
    let server = news_server();
    let text = learn_news_and_compare(&server, None);
    assert!(!text.contains("<allow-host>"), "{text}");
}

/// The same where the page's script asks by JSONP as jQuery does, as the
/// comment boxes of Chinese news portals do: a `<script>` tag a request,
/// a callback named anew and a cache-buster in each. The learned file asks
/// with the first callback sent, and every stage reads the answers wrapped.
#[test]
fn comments_a_script_loads_as_jsonp_are_learned_and_read_as_the_hand_written_file_reads_them() {
    let server = news_server();
    server.set_news_jsonp(true);
    let text = learn_news_and_compare(&server, None);
    let rules = Site::parse(&text, Path::new("news.xml")).unwrap().comments.unwrap();
    let query = rules.endpoint.url.split_once("&page={page}&").map(|(_, q)| q).unwrap_or_default();
    assert!(query.starts_with("callback=jQuery1124009_") && query.contains("&_="), "the callback and cache-buster sent first: {text}");
}

/// The same with the comment API on another server, as a blog's Waline
/// on a host of its own: the page's script names it, the learner draws
/// from it too, and the file allows its host and asks it for the comments.
#[test]
fn comments_from_a_server_of_their_own_are_learned_with_its_host_allowed() {
    let (pages, api) = (news_server(), news_server());
    pages.set_news_api_origin(&api.base_url());
    let text = learn_news_and_compare(&pages, Some(&api));
    assert!(text.contains("<allow-host>127.0.0.1</allow-host>"), "{text}");
}

/// The drawing spends the requests `--max-requests` leaves after the
/// sample, not more: with none left, no article is drawn and the file
/// says why (before, it drew four whatever the budget).
#[test]
fn the_drawing_keeps_within_max_requests() {
    let server = news_server();
    let work = Work::new();
    let out = work.stage("learn", &[&server.url("/news/"), "--id", "news", "--delay-ms", "0", "--quiet", "--max-requests", "10"]);
    let text = std::fs::read_to_string(work.sites().join("news.xml")).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(!text.contains("<comments"), "{text}");
    assert!(text.contains("the request budget") && text.contains("max-requests) was spent"), "the Check line says why: {text}");
    assert!(!server.requests().iter().any(|r| r.path_and_query.starts_with("/news/api/")), "no comment was asked");
    assert!(server.requests().len() <= 10, "{} requests", server.requests().len());
}

fn news_server() -> luntan_fixture::BlockingFixture {
    FixtureServer::start_blocking(FixtureConfig { threads: 5, boards: 1, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).expect("fixture server")
}

/// Learns the news site of `server` (its comments from `api`'s server
/// where given), crawls with the learned file and with the hand-written
/// one (`server`'s own API), and compares every post; the learned file.
fn learn_news_and_compare(server: &luntan_fixture::BlockingFixture, api: Option<&luntan_fixture::BlockingFixture>) -> String {
    let learned = Work::new();
    let out = learned.stage("learn", &[&server.url("/news/"), "--id", "news", "--delay-ms", "0", "--quiet", "--explain"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let path = learned.sites().join("news.xml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}\n{stdout}\n{stderr}", path.display()));
    eprintln!("--- learned news.xml ---\n{text}--- stderr ---\n{stderr}");
    assert!(out.status.success(), "{stderr}");
    let site = Site::parse(&text, &path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let comments = site.comments.as_ref().unwrap_or_else(|| panic!("no <comments> learned:\n{text}"));
    let api_base = api.unwrap_or(server).base_url();
    let plain = format!("{api_base}news/api/comments?key={{key}}&page={{page}}");
    assert!(comments.endpoint.url == plain || comments.endpoint.url.starts_with(&format!("{plain}&callback=")), "{}", comments.endpoint.url);
    assert!(stdout.contains("comments: ") && stdout.contains("  from "), "--explain names the comments and where they came from:\n{stdout}");

    let hand = Work::new();
    server.write_news_site_file(&hand.sites()).unwrap();
    crawl(&hand);
    common::set_politeness(&path, r#"delay-ms="0" concurrency="4""#);
    let asked_before = api.map(|a| a.requests().len());
    crawl(&learned);
    if let (Some(a), Some(before)) = (api, asked_before) {
        assert!(a.requests()[before..].iter().any(|r| r.path_and_query.starts_with("/news/api/comments?")), "the crawl asked the API's own server");
    }
    let (h_docs, l_docs) = (docs(&hand), docs(&learned));
    let truth = server.news_truth();
    assert_eq!(h_docs.len(), truth.threads.len());
    assert_eq!(l_docs.keys().collect::<Vec<_>>(), h_docs.keys().collect::<Vec<_>>(), "the same articles");
    let mut comments_read = 0;
    for (p, h) in &h_docs {
        let l = &l_docs[p];
        let view = |d: &luntan_core::ThreadDoc| -> Vec<_> {
            d.posts.iter().map(|p| (p.author.clone(), p.time.clone(), p.paragraphs.clone(), p.id.clone(), p.reply_to.clone())).collect()
        };
        assert!(!view(h).is_empty() || truth.threads.iter().any(|t| t.posts.len() == 1), "{}", p.display());
        assert_eq!(view(l), view(h), "{}: the comments", p.display());
        comments_read += view(l).len();
    }
    assert!(comments_read > 10, "only {comments_read} comments read");
    text
}
