//! The streaming reader (`stream.rs`) against the DOM path, page by page:
//! every page of every thread of the six fixture forums, hostile pages
//! included (lying charsets, invalid bytes, pages padded with hidden
//! blocks, trap links), read both ways with each forum's hand-written site
//! file, thread XML version 2's fields and quotes included. Where the
//! stream answers, its answer must be the DOM's exactly; where it refuses,
//! the page goes to the DOM. Run with `--nocapture` to see how many pages
//! each way took, and why.

#[allow(dead_code)]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use luntan_core::Site;
use luntan_extract::parse::{parse_page_dom, PageExtract};
use luntan_extract::stream::{parse_page_stream, streamable, Unstreamed};
use luntan_fixture::{site_file, Fixture, FixtureConfig, ForumKind, Hostility, ThreadTruth};
use luntan_text::encoding::detect_and_decode;

/// Every page of `t` as served, with its content type; the two extra
/// kinds (`dzx`, `nx`) too, whose pages `common` does not name.
fn thread_pages(fixture: &Fixture, kind: ForumKind, t: &ThreadTruth) -> Vec<(String, Option<String>, Vec<u8>)> {
    (1..=t.pages)
        .map(|k| {
            let path = match kind {
                ForumKind::DiscuzX if k > 1 => format!("/dzx/thread-{}-{k}-1.html", t.thread),
                ForumKind::Nexus if k > 1 => format!("/nx/read.php?tid={}&page={k}", t.thread),
                ForumKind::DiscuzX | ForumKind::Nexus => t.url_path.clone(),
                _ => common::page_path(kind, t, k),
            };
            let resp = fixture.get(&path);
            assert_eq!(resp.status, 200, "{path}");
            (format!("{}/{}/p{k}.html", t.site, t.thread), Some(resp.content_type.to_owned()), resp.body)
        })
        .collect()
}

/// `kind`'s hand-written site file, as the fixture writes it.
fn stream_rules(cfg: &FixtureConfig, kind: ForumKind) -> Site {
    Site::parse(&site_file(cfg, kind, "http://127.0.0.1:1/").unwrap(), Path::new("fixture.xml")).unwrap()
}

/// How often each of version 2's fields was found on the pages (by the
/// DOM), so that a comparison that covers none of them fails.
#[derive(Default)]
struct Seen(BTreeMap<&'static str, usize>);

impl Seen {
    fn add(&mut self, page: &PageExtract) {
        let mut count = |name: &'static str, n: usize| *self.0.entry(name).or_default() += n;
        for p in &page.posts {
            count("post-id", usize::from(p.id.is_some()));
            count("author-id", usize::from(p.author_id.is_some()));
            count("author-url", usize::from(p.author_url.is_some()));
            count("reply-to", usize::from(p.reply_to.is_some()));
            count("edited", usize::from(p.edited.is_some()));
            count("likes", usize::from(p.likes.is_some()));
            count("location", usize::from(p.location.is_some()));
            count("links", p.links.len());
            count("images", p.images.len());
            count("quotes", p.quotes.len());
            count("quote-of", p.quotes.iter().filter(|q| q.of.is_some()).count());
            count("quote-author", p.quotes.iter().filter(|q| q.author.is_some()).count());
        }
        count("board-name", usize::from(page.facts.board_name.is_some()));
        count("thread-replies", usize::from(page.facts.replies.is_some()));
        count("thread-views", usize::from(page.facts.views.is_some()));
        count("base", usize::from(page.base.is_some()));
    }
}

#[derive(Default)]
struct Tally {
    pages: usize,
    /// Posts the DOM found on the pages (that the comparison is not empty).
    posts: usize,
    streamed: usize,
    fell_back: BTreeMap<String, usize>,
    differ: Vec<String>,
}

fn compare(cfg: FixtureConfig, label: &str, tally: &mut BTreeMap<String, Tally>, seen: &mut Seen) {
    let fixture = Fixture::new(cfg.clone());
    let truth = fixture.truth();
    // Noon on a fixed day, so that relative times resolve one way.
    let noon = time::macros::datetime!(2026-11-30 12:00);
    for forum in &truth.forums {
        let kind = ForumKind::from_site_id(&forum.site).unwrap();
        let site = stream_rules(&cfg, kind);
        assert_eq!(streamable(&site.thread), Ok(()), "{}: the hand-written rules stream", forum.site);
        let mut tally_damaged = Tally::default();
        let t_all = tally.entry(format!("{label} {}", forum.site)).or_default();
        for t in forum.threads.iter().filter(|t| !t.deleted && t.unservable.is_none()) {
            for (k, (path, content_type, bytes)) in thread_pages(&fixture, kind, t).iter().enumerate() {
                let (_, decoded) = detect_and_decode(bytes, content_type.as_deref(), site.encoding, None);
                let now = (k % 2 == 1).then_some(noon);
                let dom = parse_page_dom(&site, &decoded.text, now);
                seen.add(&dom);
                t_all.pages += 1;
                t_all.posts += dom.posts.len();
                // The page damaged, read both ways too (no share asked of these).
                let t_bad = &mut tally_damaged;
                for d in 0..2 {
                    let text = damaged(&decoded.text, t_bad.pages * 2 + d);
                    let dom = parse_page_dom(&site, &text, now);
                    t_bad.pages += 1;
                    t_bad.posts += dom.posts.len();
                    match parse_page_stream(&site, &text, now) {
                        Ok(got) => {
                            t_bad.streamed += 1;
                            if got != dom {
                                t_bad.differ.push(format!("{path} damaged ({d}): {got:?}\nvs DOM {dom:?}"));
                            }
                        }
                        Err(e) => *t_bad.fell_back.entry(e.to_string()).or_default() += 1,
                    }
                }
                match parse_page_stream(&site, &decoded.text, now) {
                    Ok(got) => {
                        t_all.streamed += 1;
                        if got != dom {
                            let first = got.posts.iter().zip(&dom.posts).find(|(g, d)| g != d);
                            t_all.differ.push(format!(
                                "{path}: title {:?} vs {:?}, {} vs {} posts, first difference (stream, dom): {first:#?}",
                                got.title,
                                dom.title,
                                got.posts.len(),
                                dom.posts.len()
                            ));
                        }
                    }
                    Err(Unstreamed::Rules(why)) => panic!("{path}: {why}"),
                    Err(Unstreamed::Page(why)) => *t_all.fell_back.entry(why.to_owned()).or_default() += 1,
                }
            }
        }
        tally.insert(format!("{label} {} damaged", forum.site), tally_damaged);
    }
}

/// Damaged copies of real pages: cut short, or with a stray tag put in
/// (the misnesting real forum posts are full of); the `n`th of them.
fn damaged(text: &str, n: usize) -> String {
    const STRAY: &[&str] = &[
        "</td>",
        "<p>",
        "<b>",
        "</div>",
        "<table>",
        "</tr>",
        "<font color=red>",
        "</b>",
        "<li>",
        "</table>",
        "<br/>",
        "</p>",
        "<td>",
        "</font>",
        "<div class=\"quote\">",
        "<pre>\n",
        "</span>",
        "<i>",
        "</a>",
        "<a href=x>",
        "<tr>",
        "</tbody>",
        "<tbody>",
        "<hr>",
        "<center>",
    ];
    let mut x = (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    let mut at = (x as usize) % text.len().max(1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match n % 3 {
        0 => text[..at].to_owned(),
        _ => format!("{}{}{}", &text[..at], STRAY[(x >> 40) as usize % STRAY.len()], &text[at..]),
    }
}

#[test]
fn the_stream_reads_every_fixture_page_as_the_dom_does() {
    let mut tally = BTreeMap::new();
    let mut seen = Seen::default();
    compare(FixtureConfig { threads: 120, boards: 3, ..FixtureConfig::default() }, "plain", &mut tally, &mut seen);
    let hostility = Hostility { mislabel_percent: 10, invalid_bytes_percent: 10, big_percent: 10, big_bytes: 300 << 10, ..Hostility::percent(5) };
    compare(FixtureConfig { threads: 120, boards: 3, seed: 7, hostility: hostility.clone(), ..FixtureConfig::default() }, "hostile", &mut tally, &mut seen);
    // The extra templates: Discuz! X (times in a span's title), a
    // PHPWind-style forum and a NodeBB-style one.
    let extra = ForumKind::EXTRA.to_vec();
    compare(FixtureConfig { threads: 80, boards: 2, forums: extra.clone(), ..FixtureConfig::default() }, "plain", &mut tally, &mut seen);
    compare(FixtureConfig { threads: 80, boards: 2, seed: 7, forums: extra, hostility, ..FixtureConfig::default() }, "hostile", &mut tally, &mut seen);
    eprintln!("version 2's fields found: {:?}", seen.0);
    let (mut pages, mut streamed) = (0, 0);
    let mut differ = Vec::new();
    for (forum, t) in &tally {
        eprintln!("{forum:<22} {:>5} pages ({:>5} posts): {:>5} streamed, fell back {:?}", t.pages, t.posts, t.streamed, t.fell_back);
        if !forum.ends_with("damaged") {
            pages += t.pages;
            streamed += t.streamed;
        }
        differ.extend(t.differ.iter().cloned());
    }
    eprintln!("all (undamaged)        {pages:>5} pages: {streamed:>5} streamed ({:.1} %), {} differ", 100.0 * streamed as f64 / pages as f64, differ.len());
    assert!(differ.is_empty(), "{} pages differ; the first:\n{}", differ.len(), differ.iter().take(3).cloned().collect::<Vec<_>>().join("\n"));
    // Every field a fixture site file reads was on the pages compared
    // (`Seen::add` names each, found or not).
    for (field, n) in &seen.0 {
        assert!(*n > 0, "no {field} on any fixture page: {:?}", seen.0);
    }
    for (forum, t) in tally.iter().filter(|(forum, _)| !forum.ends_with("damaged")) {
        assert!(t.pages > 50 && t.posts > 5 * t.pages, "{forum}: {} pages, {} posts", t.pages, t.posts);
        assert!(t.streamed * 100 >= t.pages * 95, "{forum}: only {} of {} pages streamed: {:?}", t.streamed, t.pages, t.fell_back);
    }
}

/// The page reader alone, DOM against stream, on the same decoded pages
/// (decoding, writing and the store left out), alternated round by round:
/// `cargo test --release -p luntan-extract --test stream_identity -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: run in release"]
fn stream_against_dom_speed() {
    let cfg = FixtureConfig { threads: 300, boards: 3, ..FixtureConfig::default() };
    let fixture = Fixture::new(cfg.clone());
    let truth = fixture.truth();
    let mut pages = Vec::new();
    for forum in &truth.forums {
        let kind = ForumKind::from_site_id(&forum.site).unwrap();
        let site = stream_rules(&cfg, kind);
        for t in forum.threads.iter().filter(|t| !t.deleted && t.unservable.is_none()) {
            for (_, content_type, bytes) in thread_pages(&fixture, kind, t) {
                let (_, decoded) = detect_and_decode(&bytes, content_type.as_deref(), site.encoding, None);
                pages.push((site.clone(), decoded.text));
            }
        }
    }
    let mb = pages.iter().map(|(_, t)| t.len()).sum::<usize>() as f64 / 1e6;
    let (mut dom, mut stream) = (Vec::new(), Vec::new());
    for round in 0..5 {
        for which in if round % 2 == 0 { [false, true] } else { [true, false] } {
            let start = std::time::Instant::now();
            let mut posts = 0;
            for (site, text) in &pages {
                posts += match which {
                    false => parse_page_dom(site, text, None).posts.len(),
                    true => parse_page_stream(site, text, None).unwrap().posts.len(),
                };
            }
            let secs = start.elapsed().as_secs_f64();
            if which {
                stream.push(secs)
            } else {
                dom.push(secs)
            }
            assert!(posts > 0);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (d, s) = (median(&mut dom), median(&mut stream));
    eprintln!("{} pages, {mb:.1} MB of text: DOM {d:.3} s ({:.1} MB/s), stream {s:.3} s ({:.1} MB/s): {:.2}x", pages.len(), mb / d, mb / s, d / s);
}

/// What extract's page reader does with each fixture forum's own site file
/// (the stream where it reads the rules and the page, else the DOM), per
/// forum, in MB of decoded text per second, five rounds, median; the same
/// measure on two builds says what a change to either reader did:
/// `cargo test --release -p luntan-extract --test stream_identity -- --ignored --nocapture extract_speed_by_forum`.
#[test]
#[ignore = "a measurement: run in release"]
fn extract_speed_by_forum() {
    let mut forums: Vec<(String, Site, Vec<String>)> = Vec::new();
    for (cfg, kinds) in [
        (FixtureConfig { threads: 300, boards: 3, ..FixtureConfig::default() }, ForumKind::ALL.to_vec()),
        (FixtureConfig { threads: 300, boards: 3, forums: ForumKind::EXTRA.to_vec(), ..FixtureConfig::default() }, ForumKind::EXTRA.to_vec()),
    ] {
        let fixture = Fixture::new(cfg.clone());
        let truth = fixture.truth();
        for kind in kinds {
            let forum = truth.forums.iter().find(|f| f.site == kind.site_id()).unwrap();
            let site = stream_rules(&cfg, kind);
            let mut texts = Vec::new();
            for t in forum.threads.iter().filter(|t| !t.deleted && t.unservable.is_none()) {
                for (_, content_type, bytes) in thread_pages(&fixture, kind, t) {
                    texts.push(detect_and_decode(&bytes, content_type.as_deref(), site.encoding, None).1.text);
                }
            }
            forums.push((forum.site.clone(), site, texts));
        }
    }
    let mut total = (0.0, 0.0);
    for (id, site, texts) in &forums {
        let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
        let mut secs = Vec::new();
        for _ in 0..5 {
            let start = std::time::Instant::now();
            let posts: usize = texts.iter().map(|t| luntan_extract::parse::parse_page_at(site, t, None).posts.len()).sum();
            secs.push(start.elapsed().as_secs_f64());
            assert!(posts > 0);
        }
        secs.sort_by(f64::total_cmp);
        let s = secs[secs.len() / 2];
        total = (total.0 + mb, total.1 + s);
        let way = match streamable(&site.thread) {
            Ok(()) => "stream".to_owned(),
            Err(e) => format!("DOM ({e})"),
        };
        eprintln!("{id:<6} {:>5} pages, {mb:>6.1} MB: {s:.3} s, {:>6.1} MB/s  {way}", texts.len(), mb / s);
    }
    eprintln!("all    {:>6.1} MB: {:.3} s, {:.1} MB/s", total.0, total.1, total.0 / total.1);
}
