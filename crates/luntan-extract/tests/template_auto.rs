//! `post="auto"` (S4's template-based extraction) measured against the
//! hand-written selectors on every fixture forum: each thread is extracted
//! twice, with the forum's site file and with the same file whose
//! `<thread>` keeps only its title and says `post="auto"`, and the posts
//! are counted: found (against the fixture's truth) and exactly equal
//! (floor, author, time, paragraphs: auto reads no version-2 field) to the
//! selector extraction. Run with
//! `--nocapture` to see the figures.

mod common;

use std::path::Path;

use luntan_core::Site;
use luntan_extract::extract_thread;
use luntan_fixture::{site_file, Fixture, FixtureConfig, ForumKind, Hostility};

/// The site file with its `<thread …/>` rules replaced by `post="auto"`,
/// the title selector kept, and what the rules hold apart (quotes, the edit
/// notice read as `edited`) or strip stripped: auto reads neither, so
/// without it a reply's body would hold the words it quotes.
fn auto_site_file(text: &str) -> String {
    let start = text.find("<thread title=\"").expect("thread rules with a title");
    let end = start + text[start..].find("/>").expect("an empty <thread/> element") + 2;
    let value = |name: &str| {
        let rules = &text[start..end];
        let at = rules.find(&format!(" {name}=\"")).or_else(|| rules.find(&format!("\n{name}=\"")))? + name.len() + 3;
        Some(rules[at..at + rules[at..].find('"').unwrap()].to_string())
    };
    let title = value("title").unwrap();
    let strip: Vec<String> = ["quote", "edited", "strip"].into_iter().filter_map(value).collect();
    let strip = if strip.is_empty() { String::new() } else { format!(" strip=\"{}\"", strip.join(", ")) };
    format!("{}<thread title=\"{title}\" post=\"auto\"{strip}/>{}", &text[..start], &text[end..])
}

/// What `post="auto"` reads of a post: thread XML version 1's fields.
fn v1(p: &luntan_core::doc::Post) -> (u32, &str, Option<&str>, &[String]) {
    (p.floor, p.author.as_str(), p.time.as_deref(), p.paragraphs.as_slice())
}

#[derive(Default)]
struct Figures {
    threads: usize,
    truth_posts: usize,
    /// Posts auto found, up to the truth's count per thread.
    found: usize,
    /// Posts auto found beyond the truth's count.
    extra: usize,
    /// Auto posts equal to the selector extraction's, position by position.
    exact: usize,
    /// Threads auto could not read at all.
    failed: usize,
    /// Threads of a single post (no other page to learn the shape from).
    lone_threads: usize,
    /// Later pages holding a single post (read with page 1's shape).
    lone_pages: usize,
    /// Pages over 300 KB.
    big_pages: usize,
}

fn measure(cfg: FixtureConfig, label: &str) -> Vec<(ForumKind, Figures)> {
    let fixture = Fixture::new(cfg.clone());
    let truth = fixture.truth();
    let mut out = Vec::new();
    for forum in &truth.forums {
        let kind = ForumKind::from_site_id(&forum.site).unwrap();
        let text = site_file(&cfg, kind, "http://127.0.0.1:1/").unwrap();
        let by_selectors = Site::parse(&text, Path::new("fixture.xml")).unwrap();
        let auto_text = auto_site_file(&text);
        let auto = Site::parse(&auto_text, Path::new("fixture-auto.xml")).unwrap_or_else(|e| panic!("{e}\n{auto_text}"));
        assert!(auto.thread.auto_posts && auto.thread.post.is_none() && auto.thread.body.is_none() && auto.thread.author.is_none());
        let mut f = Figures::default();
        for t in forum.threads.iter().filter(|t| !t.deleted && t.unservable.is_none()) {
            let (pages, row) = common::saved_thread(&fixture, kind, t);
            let want = extract_thread(&by_selectors, &row, &pages, None).unwrap_or_else(|e| panic!("{e}")).doc;
            f.threads += 1;
            f.truth_posts += t.posts.len();
            f.lone_threads += usize::from(t.posts.len() == 1);
            f.lone_pages += usize::from(t.pages > 1 && t.posts.len() % kind.thread_page_size() == 1);
            f.big_pages += pages.iter().filter(|p| p.bytes.len() > 300 << 10).count();
            let got = match extract_thread(&auto, &row, &pages, None) {
                Ok(got) => got.doc,
                Err(e) => {
                    eprintln!("{label} {}/{}: auto: {e}", t.site, t.thread);
                    f.failed += 1;
                    continue;
                }
            };
            assert_eq!(got.title, want.title, "{}/{}", t.site, t.thread);
            f.found += got.posts.len().min(t.posts.len());
            f.extra += got.posts.len().saturating_sub(t.posts.len());
            let exact = got.posts.iter().zip(&want.posts).filter(|(g, w)| v1(g) == v1(w)).count();
            if exact < want.posts.len().max(got.posts.len()) {
                let first = got.posts.iter().zip(&want.posts).map(|(g, w)| (v1(g), v1(w))).find(|(g, w)| g != w);
                eprintln!(
                    "{label} {}/{}: {} of {} posts exact ({} pages, {} found); first difference: {first:?}",
                    t.site,
                    t.thread,
                    exact,
                    want.posts.len(),
                    t.pages,
                    got.posts.len()
                );
            }
            f.exact += exact;
        }
        let pct = |a: usize| 100.0 * a as f64 / f.truth_posts.max(1) as f64;
        eprintln!(
            "{label} {:<6} {:>4} threads, {:>5} posts: found {:>5} ({:.1} %), exact {:>5} ({:.1} %), extra {}, threads failed {} \
             ({} threads of one post, {} later pages of one post, {} pages over 300 KB)",
            forum.site,
            f.threads,
            f.truth_posts,
            f.found,
            pct(f.found),
            f.exact,
            pct(f.exact),
            f.extra,
            f.failed,
            f.lone_threads,
            f.lone_pages,
            f.big_pages
        );
        out.push((kind, f));
    }
    out
}

#[test]
fn auto_finds_every_post_of_the_fixture_forums_as_the_selectors_do() {
    let cfg = FixtureConfig { threads: 200, boards: 3, ..FixtureConfig::default() };
    let figures = measure(cfg, "plain");
    assert_eq!(figures.len(), 3);
    for (kind, f) in &figures {
        assert!(f.threads > 60, "{kind:?}: {} threads", f.threads);
        assert_eq!((f.found, f.extra, f.failed), (f.truth_posts, 0, 0), "{kind:?}: every post found");
        assert_eq!(f.exact, f.truth_posts, "{kind:?}: every post as the selectors read it");
    }
}

/// Hostile pages: traversal and off-host link lists before `</body>`,
/// lying charsets, invalid bytes, and first pages padded to 300 KB with a
/// hidden block of paragraphs.
#[test]
fn auto_reads_the_hostile_pages_as_the_selectors_do() {
    let hostility = Hostility { links: true, mislabel_percent: 10, invalid_bytes_percent: 10, big_percent: 15, big_bytes: 300 << 10, ..Hostility::default() };
    let cfg = FixtureConfig { threads: 40, boards: 2, seed: 7, hostility, ..FixtureConfig::default() };
    let figures = measure(cfg, "hostile");
    for (kind, f) in &figures {
        assert!(f.threads > 30, "{kind:?}: {} threads", f.threads);
        assert_eq!((f.found, f.extra, f.failed), (f.truth_posts, 0, 0), "{kind:?}: every post found");
        assert_eq!(f.exact, f.truth_posts, "{kind:?}: every post as the selectors read it");
    }
}
