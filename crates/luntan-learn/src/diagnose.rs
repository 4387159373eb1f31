//! Why a site file could not be learned: what the sample holds and what
//! each step of [`crate::learn`] weighed, for `luntan-learn --explain`
//! when learning fails.
//!
//! [`diagnose`] goes over the sample with the learner's own steps and
//! counts ([`Read`], [`shape_tally`], [`thread_families`],
//! [`list_candidates`], the steps' errors), so the two cannot disagree;
//! where a step fails it notes why and goes on where it can (with the
//! threads `--partial` would take), so the report shows every step it
//! could reach, not only the first that failed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::aside::aside;
use crate::learn::{
    board_family, board_id, context_params, linked_shapes, list_candidates, list_pages, nearest_thread_page, pager_steps, shape_tally, thread_families,
    thread_id, thread_shape, thread_shapes, Read, Scheme, LIST_LINKS, THREAD_SHARE,
};
use crate::sample::Sample;
use crate::urls::Split;

/// List pages and kinds shown at most.
const SHOWN: usize = 8;

/// One kind of URL the walk read ([`Split::sample_key`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindRead {
    pub key: String,
    /// The aside kind, for pages beside the forum's structure.
    pub aside: Option<&'static str>,
    pub read: usize,
    pub threads: usize,
    pub redirected: usize,
    pub failed: usize,
}

/// One URL shape weighed as the threads'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeWeighed {
    pub key: String,
    /// Pages read directly, and those that read as threads.
    pub pages: usize,
    pub threads: usize,
    pub taken: bool,
    /// Of its pages that do not read as threads, the nearest, and why not.
    pub nearest: Option<(String, String)>,
}

/// A pager family, the threads' candidates' or any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyWeighed {
    /// Its first pages' shape, `{page}` where the number goes.
    pub family: String,
    pub steps: usize,
    /// Distinct URLs of it that pages showing no posts link to.
    pub list_links: usize,
}

/// What the sample holds and what the learner made of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnosis {
    pub pages: usize,
    pub requests: u64,
    pub unread: usize,
    pub aside_left: usize,
    /// Most read first.
    pub kinds: Vec<KindRead>,
    /// Taken first, then by pages that read as threads.
    pub shapes: Vec<ShapeWeighed>,
    /// Where no shape reads as threads: the shapes list-like pages link
    /// to most, with their distinct URLs (`--partial` takes the first).
    pub linked: Vec<(String, usize)>,
    /// The threads' candidates, the chosen first.
    pub thread_families: Vec<FamilyWeighed>,
    /// Every pager family, most steps first.
    pub pagers: Vec<FamilyWeighed>,
    /// Pages that may be lists, most threads linked first, and how many
    /// link to [`LIST_LINKS`] threads or more.
    pub lists: Vec<(String, usize)>,
    pub list_pages: usize,
    pub board_family: Option<String>,
    /// The first step that failed, as learning reports it.
    pub failure: Option<String>,
}

/// Goes over `sample` as [`crate::learn::learn`] does, step by step,
/// keeping what each weighed; never fails.
pub fn diagnose(sample: &Sample) -> Diagnosis {
    let read = Read::of(sample);
    let mut d = Diagnosis {
        pages: sample.pages.len(),
        requests: sample.requests,
        unread: sample.failed.len(),
        aside_left: sample.aside_left,
        kinds: kinds(sample, &read),
        ..Diagnosis::default()
    };
    // 1. Threads by layout.
    let tally = shape_tally(&read.seen);
    d.shapes = tally
        .iter()
        .map(|(shape, &(pages, threads))| ShapeWeighed {
            key: shape.key(),
            pages,
            threads,
            taken: thread_shape(pages, threads),
            nearest: nearest_thread_page(read.seen.iter().filter(|s| s.direct() && s.shape == **shape)).map(|s| (s.page.url.to_string(), s.shortfall())),
        })
        .collect();
    d.shapes.sort_by(|a, b| (b.taken, b.threads, b.pages).cmp(&(a.taken, a.threads, a.pages)).then_with(|| a.key.cmp(&b.key)));
    let thread_shapes = match thread_shapes(&read.seen) {
        Ok(s) => s,
        Err(e) => {
            d.failure = Some(e.to_string());
            let linked = linked_shapes(&read);
            d.linked = linked.iter().take(5).map(|(s, n)| (s.key(), *n)).collect();
            match linked.first() {
                Some((shape, _)) => BTreeSet::from([*shape]),
                None => return d,
            }
        }
    };
    // 2. Pagers; the threads' family and id.
    let steps = pager_steps(&read);
    let mut pagers: Vec<FamilyWeighed> =
        steps.iter().map(|(f, v)| FamilyWeighed { family: f.describe(), steps: v.len(), list_links: crate::learn::lists_link(&read, f) }).collect();
    pagers.sort_by(|a, b| b.steps.cmp(&a.steps).then_with(|| a.family.cmp(&b.family)));
    d.pagers = pagers;
    let fams = thread_families(&read, &steps, &thread_shapes);
    d.thread_families = fams.iter().take(5).map(|(f, linked, n)| FamilyWeighed { family: f.describe(), steps: *n, list_links: *linked }).collect();
    let fam = fams.into_iter().next().expect("thread shapes are not empty").0;
    let id = match thread_id(&read, &fam) {
        Ok(id) => id,
        Err(e) => {
            d.failure.get_or_insert(e.to_string());
            return d;
        }
    };
    let context = context_params(&read, &fam, &id);
    let threads = Scheme { fam, id, context };
    // 3. Boards by links.
    let mut cands = list_candidates(&read, &threads);
    d.list_pages = cands.iter().filter(|(_, n)| *n >= LIST_LINKS).count();
    cands.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    d.lists = cands.iter().filter(|(_, n)| *n > 0).take(SHOWN).map(|(i, n)| (read.seen[*i].page.url.to_string(), *n)).collect();
    match list_pages(&read, &threads) {
        Ok(lists) => {
            let board_fam = board_family(&read, &steps, &lists, &thread_shapes, &threads);
            d.board_family = Some(board_fam.describe());
            if let Err(e) = board_id(&read, &board_fam, &lists) {
                d.failure.get_or_insert(e.to_string());
            }
        }
        Err(e) => {
            d.failure.get_or_insert(e.to_string());
        }
    }
    d
}

/// The kinds of URL read and not read, most read first.
fn kinds(sample: &Sample, read: &Read) -> Vec<KindRead> {
    let mut by_key: BTreeMap<String, KindRead> = BTreeMap::new();
    fn entry<'m>(by_key: &'m mut BTreeMap<String, KindRead>, url: &url::Url) -> &'m mut KindRead {
        let key = Split::of(url).sample_key();
        by_key.entry(key.clone()).or_insert_with(|| KindRead { key, aside: aside(url).map(|a| a.name()), ..KindRead::default() })
    }
    for s in &read.seen {
        let e = entry(&mut by_key, &s.page.url);
        e.read += 1;
        e.threads += s.thread_like as usize;
        e.redirected += !s.direct() as usize;
    }
    for (url, _) in &sample.failed {
        entry(&mut by_key, url).failed += 1;
    }
    let mut out: Vec<KindRead> = by_key.into_values().collect();
    out.sort_by(|a, b| (b.read + b.failed).cmp(&(a.read + a.failed)).then_with(|| a.key.cmp(&b.key)));
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Diagnosis {
    /// The first part of the report: what was read, by kind of URL. What
    /// `--explain` adds after the rules when learning succeeds.
    pub fn sampled(&self) -> String {
        let mut out = String::new();
        let _ = self.write_sampled(&mut out);
        out
    }

    fn write_sampled(&self, f: &mut dyn fmt::Write) -> fmt::Result {
        writeln!(
            f,
            "sampled: {} in {} requests; {} could not be read; {} left unread",
            plural(self.pages, "page", "pages"),
            self.requests,
            plural(self.unread, "URL", "URLs"),
            plural(self.aside_left, "aside link", "aside links")
        )?;
        writeln!(f, "kinds of URL read (pages read, as threads, redirected, failed):")?;
        for k in self.kinds.iter().take(3 * SHOWN) {
            let aside = k.aside.map(|a| format!(" [aside: {a}]")).unwrap_or_default();
            writeln!(f, "  {}{aside}: {} read, {} as threads, {} redirected, {} failed", k.key, k.read, k.threads, k.redirected, k.failed)?;
        }
        if self.kinds.len() > 3 * SHOWN {
            writeln!(f, "  … {} more kinds", self.kinds.len() - 3 * SHOWN)?;
        }
        Ok(())
    }
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.write_sampled(f)?;
        writeln!(f, "thread shapes (a kind of URL whose pages show repeated posts with dates, {:.0} % of them at least):", THREAD_SHARE * 100.0)?;
        for s in self.shapes.iter().take(2 * SHOWN) {
            let verdict = if s.taken { "taken" } else { "rejected" };
            let near = s.nearest.as_ref().filter(|_| !s.taken).map(|(u, why)| format!(" (nearest: {u}: {why})")).unwrap_or_default();
            writeln!(f, "  {}: {} of {} pages, {verdict}{near}", s.key, s.threads, s.pages)?;
        }
        if self.shapes.len() > 2 * SHOWN {
            writeln!(f, "  … {} more shapes", self.shapes.len() - 2 * SHOWN)?;
        }
        if !self.linked.is_empty() {
            writeln!(f, "shapes list-like pages link to most (distinct URLs; --partial takes the first as the threads'):")?;
            for (key, n) in &self.linked {
                writeln!(f, "  {key}: {n}")?;
            }
        }
        if !self.thread_families.is_empty() {
            writeln!(f, "thread families (distinct URLs linked from pages showing no posts, pager steps; the first is taken):")?;
            for t in &self.thread_families {
                writeln!(f, "  {}: {} links, {} steps", t.family, t.list_links, t.steps)?;
            }
        }
        if !self.pagers.is_empty() {
            writeln!(f, "pager families (pager steps, links from pages showing no posts):")?;
            for p in self.pagers.iter().take(SHOWN) {
                writeln!(f, "  {}: {} steps, {} links", p.family, p.steps, p.list_links)?;
            }
            if self.pagers.len() > SHOWN {
                writeln!(f, "  … {} more", self.pagers.len() - SHOWN)?;
            }
        }
        if let Some(t) = self.thread_families.first() {
            writeln!(f, "list pages (distinct threads of {} linked; {LIST_LINKS} make a list; {} found):", t.family, self.list_pages)?;
            if self.lists.is_empty() {
                writeln!(f, "  none links to one")?;
            }
            for (url, n) in &self.lists {
                writeln!(f, "  {url}: {}", plural(*n, "thread", "threads"))?;
            }
        }
        if let Some(b) = &self.board_family {
            writeln!(f, "board family: {b}")?;
        }
        if let Some(why) = &self.failure {
            writeln!(f, "failed: {why}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::tests::{forum, undated, url};

    #[test]
    fn a_forum_that_can_be_learned_shows_its_steps_and_no_failure() {
        let d = diagnose(&forum());
        assert_eq!(d.failure, None);
        assert!(d.shapes.iter().any(|s| s.key == "/read.php?tid=#" && s.taken && s.threads == 5), "{d}");
        assert_eq!(d.thread_families[0].family, "/read.php?tid=# (no pager)");
        assert_eq!(d.board_family.as_deref(), Some("/board.php?fid=#&page={page}"));
        assert_eq!(d.list_pages, 4);
        assert_eq!(d.lists[0], (url("board.php?fid=1").to_string(), 4));
        let kinds: Vec<(&str, usize)> = d.kinds.iter().map(|k| (k.key.as_str(), k.read)).collect();
        assert_eq!(kinds[0], ("/read.php?tid=#", 5), "{kinds:?}");
        assert!(d.to_string().contains("board family: /board.php?fid=#&page={page}"), "{d}");
    }

    #[test]
    fn a_forum_without_dated_posts_is_diagnosed_past_its_threads() {
        let d = diagnose(&undated());
        let why = d.failure.clone().unwrap();
        assert!(why.starts_with("could not learn the threads: none of the 10 pages read shows repeated posts with dates (nearest: "), "{why}");
        let read = d.shapes.iter().find(|s| s.key == "/read.php?tid=#").unwrap();
        assert!(!read.taken && read.pages == 5 && read.threads == 0 && read.nearest.is_some(), "{read:?}");
        // The threads --partial would take, and the lists that link them.
        assert_eq!(d.linked[0], ("/read.php?tid=#".to_owned(), 8));
        assert_eq!(d.list_pages, 4);
        let text = d.to_string();
        for line in [
            "thread shapes (",
            "  /read.php?tid=#: 0 of 5 pages, rejected (nearest: ",
            "shapes list-like pages link to most",
            "failed: could not learn the threads",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
    }
}
