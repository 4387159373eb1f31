//! A forum that changes while it is crawled: new threads, new replies, and
//! posts arriving at a steady rate, all deterministic from the seed and the
//! order of the calls.
//!
//! The model a page is rendered from is never changed in place. A change
//! clones the latest snapshot, edits the clone and publishes it; the
//! [`Fixture`] the server holds (the root) answers every public question
//! (`get`, `truth`, …) from the latest snapshot. A page is therefore always
//! rendered from one consistent state, even with posts arriving mid-request.
//!
//! Posts keep their floor, author, text and time once made: a reply appends
//! a floor with a time after every earlier post, so the old posts' times
//! (which the generator derives backwards from the last post) are kept from
//! before the change.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::corpus::{self, Script};
use crate::kind::ForumKind;
use crate::model::{Added, Fixture, ForumModel, ThreadMeta};
use crate::text::{civil, hash_str, rng};

// Their home before the config module; kept so these paths still resolve.
pub use crate::config::{Activity, SearchMode};

/// One change made to the forums.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub site: String,
    pub board: String,
    pub thread: String,
    pub kind: ChangeKind,
    /// The floor of the post added (1 for a new thread).
    pub floor: u32,
    /// The post's time, `YYYY-MM-DDTHH:MM:SS` as the truth writes it.
    pub time: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChangeKind {
    NewThread,
    NewReply,
}

impl Fixture {
    /// Applies `change` to the next snapshot (see [`Fixture::publish`]),
    /// its clock started at the newest post the first time.
    fn grow<R>(&self, change: impl FnOnce(&mut Fixture) -> R) -> R {
        self.publish(|next| {
            if next.growth.clock == 0 {
                next.growth.clock = next.forums.iter().flat_map(|f| f.threads.iter().map(|t| t.last_post)).max().unwrap_or(0);
            }
            change(next)
        })
    }

    /// Adds `n` new threads (one post each), spread over the forums and
    /// boards at random; each is the newest thread of its board, so it heads
    /// the board's first list page.
    pub fn add_threads(&self, n: usize) -> Vec<Change> {
        self.grow(|fx| (0..n).filter_map(|_| fx.new_thread()).collect())
    }

    /// Adds one reply to each of `n` distinct live threads chosen at random
    /// (fewer if the forums have fewer). Each moves to the top of its board's
    /// list; a thread whose last page was full gets a new page.
    pub fn add_replies(&self, n: usize) -> Vec<Change> {
        self.grow(|fx| {
            let mut chosen = HashSet::new();
            (0..n).filter_map(|_| fx.new_reply(&mut chosen)).collect()
        })
    }

    /// Adds `n` posts the way the background arrivals do: a new thread one
    /// time in four, else a reply to a random live thread.
    pub fn add_posts(&self, n: usize) -> Vec<Change> {
        self.grow(|fx| {
            (0..n)
                .filter_map(|_| {
                    let mut r = rng(&[fx.config().seed, 0xA221, fx.growth.ops]);
                    if r.u32(0..4) == 0 {
                        fx.new_thread()
                    } else {
                        fx.new_reply(&mut HashSet::new())
                    }
                })
                .collect()
        })
    }

    /// Posts added since the model was built (all forums).
    pub fn posts_added(&self) -> usize {
        self.latest().map_or(0, |cur| cur.growth.added.len())
    }

    fn next_time(&mut self, r: &mut fastrand::Rng) -> u32 {
        // Strictly increasing: two posts never share a minute, so "newer
        // than what was seen" is never ambiguous.
        self.growth.clock += r.u32(1..=3);
        self.growth.clock
    }

    fn new_thread(&mut self) -> Option<Change> {
        self.growth.ops += 1;
        let mut r = rng(&[self.config().seed, 0x6E57, self.growth.ops]);
        if self.forums.is_empty() {
            return None;
        }
        let fi = r.usize(0..self.forums.len());
        let time = self.next_time(&mut r);
        let kind = self.forums[fi].kind;
        let seed = self.config().seed;
        let f = &mut self.forums[fi];
        let board = r.usize(0..f.boards.len());
        let tid = f.threads.last().map_or(1000, |t| t.tid) + 1 + u64::from(r.u32(0..4) == 0) * r.u64(1..4);
        let title = title_for(kind, tid, seed);
        f.threads.push(ThreadMeta { tid, board: board as u32, posts: 1, last_post: time, title, deleted: false, views: r.u32(1..30) });
        let idx = (f.threads.len() - 1) as u32;
        f.boards[board].order.insert(0, idx);
        let board_id = f.boards[board].id.clone();
        self.label_thread(fi, idx as usize);
        self.growth.added.push(Added { kind, tid, floor: 1 });
        Some(Change { site: kind.site_id().into(), board: board_id, thread: tid.to_string(), kind: ChangeKind::NewThread, floor: 1, time: civil(time).iso() })
    }

    fn new_reply(&mut self, chosen: &mut HashSet<(ForumKind, u64)>) -> Option<Change> {
        self.growth.ops += 1;
        let mut r = rng(&[self.config().seed, 0x2E91, self.growth.ops]);
        let live: usize = self.forums.iter().map(|f| f.threads.iter().filter(|t| replyable(f, t)).count()).sum();
        if live <= chosen.len() {
            return None;
        }
        // Uniform over live threads, skipping ones already chosen.
        let (fi, ti) = loop {
            let mut k = r.usize(0..live);
            let mut pick = None;
            'forums: for (fi, f) in self.forums.iter().enumerate() {
                for (ti, _) in f.threads.iter().enumerate().filter(|(_, t)| replyable(f, t)) {
                    if k == 0 {
                        pick = Some((fi, ti));
                        break 'forums;
                    }
                    k -= 1;
                }
            }
            let (fi, ti) = pick.expect("k < live");
            if chosen.insert((self.forums[fi].kind, self.forums[fi].threads[ti].tid)) {
                break (fi, ti);
            }
        };
        let time = self.next_time(&mut r);
        let kind = self.forums[fi].kind;
        let f = &mut self.forums[fi];
        let t = &mut f.threads[ti];
        self.growth.base.entry((kind, t.tid)).or_insert((t.posts, t.last_post));
        self.growth.added_times.entry((kind, t.tid)).or_default().push(time);
        t.posts += 1;
        t.last_post = time;
        t.views += r.u32(1..20);
        let (tid, floor, board) = (t.tid, t.posts, t.board as usize);
        let order = &mut f.boards[board].order;
        if let Some(pos) = order.iter().position(|&i| i as usize == ti) {
            order.remove(pos);
        }
        order.insert(0, ti as u32);
        let board_id = f.boards[board].id.clone();
        self.growth.added.push(Added { kind, tid, floor });
        Some(Change { site: kind.site_id().into(), board: board_id, thread: tid.to_string(), kind: ChangeKind::NewReply, floor, time: civil(time).iso() })
    }
}

/// Replies go to threads that are listed and served.
fn replyable(f: &ForumModel, t: &ThreadMeta) -> bool {
    !t.deleted && !f.faults.contains_key(&t.tid)
}

/// A new thread's title, as the generator titles threads.
fn title_for(kind: ForumKind, tid: u64, seed: u64) -> String {
    let mut r = rng(&[seed, hash_str(kind.site_id()), tid, 0x717E]);
    match kind.script() {
        Script::Simplified => corpus::title_from_review(corpus::reviews()[r.usize(0..corpus::reviews().len())], &mut r),
        Script::Traditional => corpus::title_from_poem(&corpus::poems()[r.usize(0..corpus::poems().len())], &mut r),
    }
}

/// Posts arriving at a steady rate on a background thread.
pub struct Arrivals {
    stop: Arc<AtomicBool>,
    added: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Arrivals {
    pub(crate) fn start(fixture: Arc<Fixture>, per_sec: f64) -> Arrivals {
        let stop = Arc::new(AtomicBool::new(false));
        let added = Arc::new(AtomicU64::new(0));
        let (s, a) = (stop.clone(), added.clone());
        let thread = (per_sec > 0.0).then(|| {
            std::thread::Builder::new()
                .name("luntan-fixture-arrivals".into())
                .spawn(move || {
                    // Batches of at least 50 ms, so a high rate does not copy
                    // the model a thousand times a second.
                    let tick = Duration::from_secs_f64((1.0 / per_sec).max(0.05));
                    let started = std::time::Instant::now();
                    let mut done = 0u64;
                    while !s.load(Ordering::Relaxed) {
                        std::thread::sleep(tick);
                        let due = (started.elapsed().as_secs_f64() * per_sec) as u64;
                        if due > done {
                            let n = fixture.add_posts((due - done) as usize).len() as u64;
                            done = due;
                            a.fetch_add(n, Ordering::Relaxed);
                        }
                    }
                })
                .expect("spawning the arrivals thread")
        });
        Arrivals { stop, added, thread }
    }

    /// Posts added so far.
    pub fn added(&self) -> u64 {
        self.added.load(Ordering::Relaxed)
    }

    /// Stops adding posts and waits for the thread; returns how many were added.
    pub fn stop(mut self) -> u64 {
        self.halt();
        self.added()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Arrivals {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The server's own arrivals ([`Activity::posts_per_sec`]), until it stops.
pub(crate) fn spawn_arrivals(fixture: Arc<Fixture>, mut stopping: tokio::sync::watch::Receiver<bool>) {
    let rate = fixture.config().activity.posts_per_sec;
    if rate <= 0.0 {
        return;
    }
    tokio::spawn(async move {
        let arrivals = Arrivals::start(fixture, rate);
        let _ = stopping.wait_for(|s| *s).await;
        // Joining waits out at most one tick of the arrivals thread.
        let _ = tokio::task::spawn_blocking(move || arrivals.stop()).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FixtureConfig;
    use crate::model::Truth;

    fn cfg() -> FixtureConfig {
        FixtureConfig { threads: 150, boards: 3, ..FixtureConfig::default() }
    }

    /// A new fixture, its truth, and the `n` changes `grow` then made (it
    /// must make all `n`).
    fn grown(n: usize, grow: fn(&Fixture, usize) -> Vec<Change>) -> (Fixture, Truth, Vec<Change>) {
        let fx = Fixture::new(cfg());
        let before = fx.truth();
        let changes = grow(&fx, n);
        assert_eq!(changes.len(), n);
        (fx, before, changes)
    }

    fn decoded(fx: &Fixture, kind: ForumKind, path: &str) -> String {
        let r = fx.get(path);
        assert_eq!(r.status, 200, "{path}");
        kind.encoding().decode(&r.body).0.into_owned()
    }

    #[test]
    fn new_threads_head_their_boards_and_the_truth_follows() {
        let (fx, before, changes) = grown(12, Fixture::add_threads);
        let after = fx.truth();
        for c in &changes {
            let kind = ForumKind::from_site_id(&c.site).unwrap();
            let f = after.forums.iter().find(|f| f.site == c.site).unwrap();
            let b = f.boards.iter().find(|b| b.board == c.board).unwrap();
            let pos = b.threads.iter().position(|t| *t == c.thread).unwrap();
            let newer = changes.iter().filter(|o| o.site == c.site && o.board == c.board && o.time > c.time).count();
            assert_eq!(pos, newer, "a new thread is below only newer ones");
            let t = fx.thread_truth(kind, &c.thread).unwrap();
            assert_eq!((t.posts.len(), t.replies, t.last_post.as_str()), (1, 0, c.time.as_str()));
            assert!(!before.forums.iter().any(|f| f.threads.iter().any(|o| o.site == c.site && o.thread == c.thread)));
            // Served: listed on the board's first page, and its own page.
            let list = decoded(&fx, kind, &b.url_path);
            assert!(list.contains(&crate::text::esc(&t.title)), "{}: {} not on its board's first page", c.site, c.thread);
            assert!(decoded(&fx, kind, &t.url_path).contains(&crate::text::esc(&t.posts[0].author)));
        }
        let total = |t: &Truth| t.forums.iter().map(|f| f.threads.len()).sum::<usize>();
        assert_eq!(total(&after), total(&before) + 12);
        assert_eq!(fx.posts_added(), 12);
    }

    #[test]
    fn replies_keep_old_posts_move_threads_up_and_can_add_a_page() {
        let (fx, before, changes) = grown(40, Fixture::add_replies);
        let distinct: HashSet<_> = changes.iter().map(|c| (&c.site, &c.thread)).collect();
        assert_eq!(distinct.len(), 40, "distinct threads");
        let mut new_pages = 0;
        for c in &changes {
            let kind = ForumKind::from_site_id(&c.site).unwrap();
            let old = before.forums.iter().flat_map(|f| &f.threads).find(|t| t.site == c.site && t.thread == c.thread).unwrap();
            let new = fx.thread_truth(kind, &c.thread).unwrap();
            assert!(!old.deleted);
            assert_eq!(new.posts[..old.posts.len()], old.posts[..], "old posts unchanged");
            assert_eq!(new.posts.len(), old.posts.len() + 1);
            assert_eq!((new.replies, new.last_post.as_str()), (old.replies + 1, c.time.as_str()));
            assert!(new.posts.last().unwrap().time > old.posts.last().unwrap().time);
            if new.pages > old.pages {
                new_pages += 1;
                let page = match kind {
                    ForumKind::Discuz => format!("{}&page={}", new.url_path, new.pages),
                    ForumKind::Phpbb => format!("{}&start={}", new.url_path, (new.pages - 1) as usize * kind.thread_page_size()),
                    ForumKind::Bbs => format!("{}?page={}", new.url_path, new.pages),
                    ForumKind::DiscuzX => format!("/dzx/thread-{}-{}-1.html", new.thread, new.pages),
                    ForumKind::Nexus => format!("/nx/read.php?tid={}&page={}", new.thread, new.pages),
                    ForumKind::Modern => format!("{}?page={}", new.url_path, new.pages),
                };
                assert_eq!(fx.get(&page).status, 200, "{page}");
            }
        }
        let after = fx.truth();
        for f in &after.forums {
            for b in &f.boards {
                let moved: Vec<&String> = b.threads.iter().filter(|t| changes.iter().any(|c| c.site == f.site && &c.thread == *t)).collect();
                assert_eq!(b.threads[..moved.len()].iter().collect::<Vec<_>>(), moved, "replied threads head board {}", b.board);
            }
        }
        // 40 threads with 1–40 posts and pages of 10 or 15: some fill a page.
        let full = before
            .forums
            .iter()
            .flat_map(|f| &f.threads)
            .filter(|t| changes.iter().any(|c| c.site == t.site && c.thread == t.thread))
            .filter(|t| {
                let size = ForumKind::from_site_id(&t.site).unwrap().thread_page_size();
                t.posts.len() % size == 0
            })
            .count();
        assert_eq!(new_pages, full);
    }

    #[test]
    fn growth_is_deterministic_and_arrivals_add_posts() {
        let a = Fixture::new(cfg());
        let b = Fixture::new(cfg());
        assert_eq!(a.add_threads(5), b.add_threads(5));
        assert_eq!(a.add_replies(5), b.add_replies(5));
        assert_eq!(a.add_posts(30), b.add_posts(30));
        assert_eq!(a.truth(), b.truth());
        let fx = Arc::new(Fixture::new(cfg()));
        let arrivals = Arrivals::start(fx.clone(), 100.0);
        std::thread::sleep(Duration::from_millis(400));
        let n = arrivals.stop();
        assert!(n >= 10, "{n} posts in 0.4 s at 100/s");
        assert_eq!(fx.posts_added() as u64, n);
    }
}
