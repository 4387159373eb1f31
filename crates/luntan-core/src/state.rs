//! The thread state machine: the one definition every stage uses.
//!
//! The numeric codes are the source paper's `visitedFlag` (S3), stored as-is in
//! the `threads.state` column so the database reads like the original design:
//!
//! | code | state        | meaning                                         |
//! |-----:|--------------|-------------------------------------------------|
//! |  `0` | `Discovered` | found on a board list, HTML not saved yet       |
//! |  `1` | `Saved`      | every page's raw HTML is on disk                |
//! |  `3` | `Extracted`  | normalized XML written, not indexed yet (ours)  |
//! |  `2` | `Indexed`    | in the forum's index: done                      |
//! | `-1` | `Failed`     | a stage gave up; `fail_stage`/`fail_reason` say |
//!
//! `Extracted` is luntan's addition: the paper folded "XML written" into the
//! index step, which made a crash between the two invisible. Its code is 3 so
//! the paper's codes keep their meaning.

use std::fmt;

/// Where a thread is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadState {
    Failed,
    Discovered,
    Saved,
    Extracted,
    Indexed,
}

/// The stage that moves a thread out of a state; also names where a failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    Discover,
    Download,
    Extract,
    Index,
}

impl Stage {
    /// The kinds of file (by extension) this stage writes under `pages/`,
    /// whose temp files a killed run of it may leave.
    pub fn temp_file_kinds(self) -> &'static [&'static str] {
        match self {
            // `fetched`: the forum's clock of each page (protocol and browser
            // mode); `http`: each page's URL, time, status and headers.
            Stage::Download => &["html", "json", "fetched", "http"],
            Stage::Extract => &["xml"],
            Stage::Discover | Stage::Index => &[],
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Download => "download",
            Stage::Extract => "extract",
            Stage::Index => "index",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        Some(match s {
            "discover" => Stage::Discover,
            "download" => Stage::Download,
            "extract" => Stage::Extract,
            "index" => Stage::Index,
            _ => return None,
        })
    }

    /// The state a thread must be in for this stage to take it.
    pub fn input(self) -> ThreadState {
        match self {
            Stage::Discover => ThreadState::Discovered,
            Stage::Download => ThreadState::Discovered,
            Stage::Extract => ThreadState::Saved,
            Stage::Index => ThreadState::Extracted,
        }
    }

    /// The state this stage leaves a thread in when it succeeds.
    pub fn output(self) -> ThreadState {
        match self {
            Stage::Discover => ThreadState::Discovered,
            Stage::Download => ThreadState::Saved,
            Stage::Extract => ThreadState::Extracted,
            Stage::Index => ThreadState::Indexed,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ThreadState {
    /// Every state, in lifecycle order (for reports).
    pub const ALL: [ThreadState; 5] = [ThreadState::Discovered, ThreadState::Saved, ThreadState::Extracted, ThreadState::Indexed, ThreadState::Failed];

    /// The stored `visitedFlag`.
    pub fn code(self) -> i64 {
        match self {
            ThreadState::Failed => -1,
            ThreadState::Discovered => 0,
            ThreadState::Saved => 1,
            ThreadState::Indexed => 2,
            ThreadState::Extracted => 3,
        }
    }

    pub fn from_code(code: i64) -> Option<ThreadState> {
        Some(match code {
            -1 => ThreadState::Failed,
            0 => ThreadState::Discovered,
            1 => ThreadState::Saved,
            2 => ThreadState::Indexed,
            3 => ThreadState::Extracted,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ThreadState::Failed => "failed",
            ThreadState::Discovered => "discovered",
            ThreadState::Saved => "saved",
            ThreadState::Extracted => "extracted",
            ThreadState::Indexed => "indexed",
        }
    }

    /// Whether `self → to` is an allowed transition.
    ///
    /// Forward moves are one stage at a time. Backward moves exist for
    /// re-work: a failed thread is retried from the start (`--retry-failed`),
    /// a thread whose list row shows new replies is re-queued, and a re-extract
    /// or re-index steps back one stage. Any live state may fail.
    pub fn can_become(self, to: ThreadState) -> bool {
        use ThreadState::*;
        matches!(
            (self, to),
            (Discovered, Saved)
                | (Saved, Extracted)
                | (Extracted, Indexed)
                | (Discovered | Saved | Extracted, Failed)
                | (Failed, Discovered)
                | (Saved | Extracted | Indexed, Discovered)
                | (Extracted | Indexed, Saved)
                | (Indexed, Extracted)
        )
    }
}

/// What a failure reason says apart from which thread it was: the reason
/// without a leading path, URL or `thread site/id` (`data/…/article7.html: no
/// posts found` → `no posts found`), so that one cause shows as one line
/// however many threads it hit.
pub fn failure_cause(reason: &str) -> &str {
    let rest = reason.strip_prefix("thread ").unwrap_or(reason);
    // A URL's own colon (`http://`) is not the separator.
    let skip = rest.find("://").map_or(0, |i| i + 3);
    match rest[skip..].find(": ").map(|i| i + skip) {
        Some(i) if rest[..i].contains('/') && !rest[..i].contains(' ') => &rest[i + 2..],
        _ => reason,
    }
}

/// Failures that share a stage and a [`failure_cause`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FailureGroup {
    pub stage: String,
    pub cause: String,
    pub threads: usize,
    /// What the first few failures named: the page's URL or file when the
    /// reason gave one, else the thread (`site/id`).
    pub examples: Vec<String>,
}

impl FailureGroup {
    /// `dz/1, dz/2, dz/3 and 120 more`.
    pub fn examples_line(&self) -> String {
        let mut out = self.examples.join(", ");
        if self.threads > self.examples.len() {
            out.push_str(&format!(" and {} more", self.threads - self.examples.len()));
        }
        out
    }
}

/// Groups `(stage, thread, reason)` failures by stage and cause, most
/// frequent first, keeping three examples each (see [`FailureGroup::examples`]).
pub fn group_failures<'a>(failures: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> Vec<FailureGroup> {
    let mut groups: Vec<FailureGroup> = Vec::new();
    for (stage, thread, reason) in failures {
        let cause = failure_cause(reason);
        let i = match groups.iter().position(|g| g.stage == stage && g.cause == cause) {
            Some(i) => i,
            None => {
                groups.push(FailureGroup { stage: stage.to_owned(), cause: cause.to_owned(), ..Default::default() });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.threads += 1;
        if g.examples.len() < 3 {
            let named = reason.strip_suffix(cause).map(|p| p.trim_end_matches(": ").trim_start_matches("thread ")).filter(|p| !p.is_empty());
            g.examples.push(named.unwrap_or(thread).to_owned());
        }
    }
    // Stable: equal counts keep the order they were met in.
    groups.sort_by_key(|g| std::cmp::Reverse(g.threads));
    groups
}

impl fmt::Display for ThreadState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_keep_the_papers_flags() {
        for s in ThreadState::ALL {
            assert_eq!(ThreadState::from_code(s.code()), Some(s));
        }
        assert_eq!(ThreadState::Discovered.code(), 0);
        assert_eq!(ThreadState::Saved.code(), 1);
        assert_eq!(ThreadState::Indexed.code(), 2);
        assert_eq!(ThreadState::Failed.code(), -1);
        assert_eq!(ThreadState::from_code(7), None);
    }

    #[test]
    fn stages_chain_forward_through_allowed_transitions() {
        let chain = [Stage::Download, Stage::Extract, Stage::Index];
        for w in chain.windows(2) {
            assert_eq!(w[0].output(), w[1].input());
        }
        for st in chain {
            assert!(st.input().can_become(st.output()), "{st}");
            assert!(st.input().can_become(ThreadState::Failed), "{st}");
        }
    }

    #[test]
    fn failure_causes_drop_the_thread_they_name() {
        assert_eq!(failure_cause("data/pages/dz/board2/board2_20261130/article7.html: no posts found (x?)"), "no posts found (x?)");
        assert_eq!(failure_cause("http://h:8/dz/forum.php?mod=viewthread&tid=7: HTTP 404"), "HTTP 404");
        assert_eq!(failure_cause("thread dz/7: board id is empty"), "board id is empty");
        assert_eq!(failure_cause("disallowed by robots.txt"), "disallowed by robots.txt");
        assert_eq!(failure_cause("no posts: see x/y"), "no posts: see x/y", "a sentence before the colon is kept");
    }

    #[test]
    fn failures_group_by_stage_and_cause_most_frequent_first() {
        let f = [
            ("extract", "dz/1", "a/1.html: no posts"),
            ("download", "dz/2", "http://h/2: HTTP 404"),
            ("extract", "dz/3", "a/3.html: no posts"),
            ("extract", "dz/4", "a/4.html: no posts"),
            ("extract", "dz/5", "a/5.html: no posts"),
        ];
        let g = group_failures(f);
        assert_eq!((g[0].stage.as_str(), g[0].cause.as_str(), g[0].threads), ("extract", "no posts", 4));
        assert_eq!(g[0].examples_line(), "a/1.html, a/3.html, a/4.html and 1 more");
        assert_eq!((g[1].cause.as_str(), g[1].threads), ("HTTP 404", 1));
        let g = group_failures([("index", "dz/9", "no such document")]);
        assert_eq!(g[0].examples, ["dz/9"], "a reason that names nothing: the thread");
    }

    #[test]
    fn no_skipping_stages_and_failed_only_restarts() {
        use ThreadState::*;
        assert!(!Discovered.can_become(Indexed));
        assert!(!Discovered.can_become(Extracted));
        assert!(!Saved.can_become(Indexed));
        assert!(!Failed.can_become(Saved));
        assert!(!Indexed.can_become(Failed));
        assert!(Failed.can_become(Discovered));
    }
}
