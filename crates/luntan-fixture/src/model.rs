//! The model behind the pages: boards and per-thread metadata built up front,
//! posts rebuilt on demand from `(seed, forum, thread, floor)`.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};

use crate::config::FixtureConfig;
use crate::corpus::{self, Script};
use crate::hostile::{request_key, PermanentFault};
use crate::kind::ForumKind;
use crate::text::{civil, hash_str, minutes_of, percent_encode, rng};
use crate::topics;

/// Per-thread metadata, kept small because `--threads 100000` builds it three times.
#[derive(Debug, Clone)]
pub(crate) struct ThreadMeta {
    pub tid: u64,
    pub board: u32,
    pub posts: u32,
    /// Minutes since 1970, forum-local.
    pub last_post: u32,
    pub title: String,
    pub deleted: bool,
    pub views: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct BoardMeta {
    pub id: String,
    pub title: String,
    /// Indices into the forum's threads, newest last post first.
    pub order: Vec<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct ForumModel {
    pub kind: ForumKind,
    pub boards: Vec<BoardMeta>,
    /// Sorted by thread id.
    pub threads: Vec<ThreadMeta>,
    /// Threads that can never be served, and why (hostile mode only).
    pub faults: HashMap<u64, PermanentFault>,
}

/// One generated post.
#[derive(Debug, Clone)]
pub(crate) struct Post {
    pub floor: u32,
    /// Forum-wide post id (Discuz! `pid`, phpBB `p`).
    pub pid: u64,
    pub author: String,
    pub uid: u64,
    pub time: u32,
    pub paragraphs: Vec<Cow<'static, str>>,
    /// Picks between the forum's markup variants (`<br />` vs `<br />\r\n`, `<p>` vs `<br>`).
    pub variant: bool,
}

/// The fake forums' content, built from a [`FixtureConfig`].
#[derive(Debug, Clone)]
pub struct Fixture {
    cfg: FixtureConfig,
    pub(crate) forums: Vec<ForumModel>,
    /// The page (as [`request_key`] spells it) each permanent fault sits on.
    fault_pages: HashMap<String, PermanentFault>,
    /// Changes made while serving and topic labels (see [`crate::growth`]).
    pub(crate) growth: Growth,
    root: Root,
}

/// What a snapshot has been through since the model was built (cloned with it).
#[derive(Clone, Default)]
pub(crate) struct Growth {
    /// (posts, last post) of a thread before its first reply was added.
    pub base: HashMap<(ForumKind, u64), (u32, u32)>,
    /// Times of the posts added to a thread, in floor order.
    pub added_times: HashMap<(ForumKind, u64), Vec<u32>>,
    /// Every post added, in the order added.
    pub added: Vec<Added>,
    /// The newest post time so far (minutes); the next post comes after it.
    pub clock: u32,
    /// Changes made so far: each one's choices are seeded by its number.
    pub ops: u64,
    /// Threads on the configured topic (see [`crate::topics`]).
    pub on_topic: HashSet<(ForumKind, u64)>,
}

impl std::fmt::Debug for Growth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Growth").field("added", &self.added.len()).field("ops", &self.ops).finish_non_exhaustive()
    }
}

impl Growth {
    /// What the post-time generator should start from for `t`: its posts
    /// and last post before growth, and the times of the posts added since.
    fn original<'a>(&'a self, kind: ForumKind, t: &ThreadMeta) -> (u32, u32, &'a [u32]) {
        match self.base.get(&(kind, t.tid)) {
            Some(&(posts, last)) => (posts, last, self.added_times.get(&(kind, t.tid)).map_or(&[], Vec::as_slice)),
            None => (t.posts, t.last_post, &[]),
        }
    }
}

/// A post added after the model was built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Added {
    pub kind: ForumKind,
    pub tid: u64,
    pub floor: u32,
}

/// A post holding a searched keyword.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
    pub time: u32,
    pub tid: u64,
    pub floor: u32,
}

/// What only the root (the fixture a server holds) has: snapshots are
/// never changed in place, so the root points at the latest one and
/// answers from it.
#[derive(Default)]
struct Root {
    latest: RwLock<Option<Arc<Fixture>>>,
    writer: Mutex<()>,
    /// Matches among the posts the model was built with, per forum and keyword.
    hits: Mutex<BaseHits>,
}

/// Search matches computed once per (forum, keyword).
type BaseHits = HashMap<(ForumKind, String), Arc<Vec<Hit>>>;

/// A snapshot starts with no root state of its own.
impl Clone for Root {
    fn clone(&self) -> Self {
        Root::default()
    }
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The newest last-post time any thread has: 2024-06-30 22:00.
fn newest() -> u32 {
    minutes_of(2024, 6, 30, 22, 0)
}

impl Fixture {
    /// Builds boards and thread metadata; posts are made only when asked for.
    pub fn new(cfg: FixtureConfig) -> Fixture {
        let mut seen = Vec::new();
        let forums = cfg
            .forums
            .iter()
            .filter(|k| {
                let first = !seen.contains(*k);
                seen.push(**k);
                first
            })
            .map(|&kind| build_forum(kind, &cfg))
            .collect();
        let mut fixture = Fixture { cfg, forums, fault_pages: HashMap::new(), growth: Growth::default(), root: Root::default() };
        fixture.assign_faults();
        fixture.apply_topics();
        fixture
    }

    fn assign_faults(&mut self) {
        let hostility = &self.cfg.hostility;
        for f in &mut self.forums {
            let candidates: Vec<(u64, usize)> = f.threads.iter().filter(|t| !t.deleted).map(|t| (t.tid, f.thread_pages(t))).collect();
            f.faults = hostility.assign_permanent(f.kind, &candidates).into_iter().collect();
        }
        for f in &self.forums {
            for (&tid, &fault) in &f.faults {
                let t = f.thread(tid).expect("assigned from this forum's threads");
                self.fault_pages.insert(request_key(&f.thread_path(t, fault.page())), fault);
            }
        }
    }

    /// Labels every thread and rewrites on-topic titles (a no-op without
    /// [`FixtureConfig::topics`]).
    fn apply_topics(&mut self) {
        for fi in 0..self.forums.len() {
            for ti in 0..self.forums[fi].threads.len() {
                self.label_thread(fi, ti);
            }
        }
    }

    /// Labels (and perhaps retitles) thread `ti` of forum `fi`; also for
    /// threads added while serving.
    pub(crate) fn label_thread(&mut self, fi: usize, ti: usize) {
        let Some(topics) = &self.cfg.topics else { return };
        let f = &mut self.forums[fi];
        let kind = f.kind;
        let t = &mut f.threads[ti];
        let (title, on_topic) = topics::label_thread(topics, self.cfg.seed, kind, t.tid, t.board as usize, &t.title);
        if let Some(title) = title {
            t.title = title;
        }
        if on_topic {
            self.growth.on_topic.insert((kind, t.tid));
        }
    }

    /// The permanent fault at this path and query, if any (hostile mode).
    pub fn permanent_fault(&self, path_and_query: &str) -> Option<PermanentFault> {
        if self.fault_pages.is_empty() {
            return None;
        }
        self.fault_pages.get(&request_key(&canonical_page(path_and_query))).copied()
    }

    /// The latest snapshot, when anything was changed (root only).
    pub(crate) fn latest(&self) -> Option<Arc<Fixture>> {
        self.root.latest.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Applies `change` to a copy of the latest snapshot and publishes the
    /// copy, so a page is always rendered from one consistent state. Changes
    /// are serialized, so each sees the one before.
    pub(crate) fn publish<R>(&self, change: impl FnOnce(&mut Fixture) -> R) -> R {
        let _one_at_a_time = lock(&self.root.writer);
        let mut next = match self.latest() {
            Some(cur) => (*cur).clone(),
            None => self.clone(),
        };
        let out = change(&mut next);
        *self.root.latest.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(next));
        out
    }

    /// Posts of `kind` in the latest snapshot `snap` whose text contains
    /// `keyword`, newest first: those among the posts the model was built
    /// with (computed once, on the root) and those added since.
    pub(crate) fn hits(&self, snap: &Fixture, kind: ForumKind, keyword: &str) -> Vec<Hit> {
        if keyword.is_empty() {
            return Vec::new();
        }
        let base = {
            let cached = lock(&self.root.hits).get(&(kind, keyword.to_owned())).cloned();
            match cached {
                Some(b) => b,
                None => {
                    let b = Arc::new(self.base_hits(kind, keyword));
                    lock(&self.root.hits).insert((kind, keyword.to_owned()), b.clone());
                    b
                }
            }
        };
        let mut out: Vec<Hit> = base.to_vec();
        if let Some(f) = snap.forum(kind) {
            for a in snap.growth.added.iter().filter(|a| a.kind == kind) {
                let Some(t) = f.thread(a.tid) else { continue };
                for p in snap.posts(f, t, a.floor..=a.floor) {
                    if p.paragraphs.iter().any(|para| para.contains(keyword)) {
                        out.push(Hit { time: p.time, tid: t.tid, floor: p.floor });
                    }
                }
            }
        }
        out.sort_by_key(|h| std::cmp::Reverse((h.time, h.tid, h.floor)));
        out
    }

    fn base_hits(&self, kind: ForumKind, keyword: &str) -> Vec<Hit> {
        let Some(f) = self.forum(kind) else { return Vec::new() };
        let mut out = Vec::new();
        for t in f.threads.iter().filter(|t| !t.deleted) {
            for p in self.posts(f, t, 1..=t.posts) {
                if p.paragraphs.iter().any(|para| para.contains(keyword)) {
                    out.push(Hit { time: p.time, tid: t.tid, floor: p.floor });
                }
            }
        }
        out
    }

    pub fn config(&self) -> &FixtureConfig {
        &self.cfg
    }

    /// The forums served, in config order.
    pub fn forums(&self) -> impl Iterator<Item = ForumKind> + '_ {
        self.forums.iter().map(|f| f.kind)
    }

    pub(crate) fn forum(&self, kind: ForumKind) -> Option<&ForumModel> {
        self.forums.iter().find(|f| f.kind == kind)
    }

    /// Most list pages any board of `kind` has (0 when the forum is not served).
    pub fn max_board_pages(&self, kind: ForumKind) -> usize {
        if let Some(latest) = self.latest() {
            return latest.max_board_pages(kind);
        }
        self.forum(kind).map_or(0, |f| f.boards.iter().map(|b| f.list_pages(b)).max().unwrap_or(1))
    }

    /// Everything the pages show, for comparing a crawl against.
    pub fn truth(&self) -> Truth {
        if let Some(latest) = self.latest() {
            return latest.truth();
        }
        Truth {
            seed: self.cfg.seed,
            forums: self
                .forums
                .iter()
                .map(|f| ForumTruth {
                    site: f.kind.site_id().to_owned(),
                    name: f.kind.name().to_owned(),
                    encoding: f.kind.encoding_name().to_owned(),
                    boards: f
                        .boards
                        .iter()
                        .map(|b| BoardTruth {
                            board: b.id.clone(),
                            title: b.title.clone(),
                            url_path: f.board_path(b, 1),
                            threads: b.order.iter().map(|&i| f.threads[i as usize].tid.to_string()).collect(),
                        })
                        .collect(),
                    threads: {
                        let listed = if f.kind.links_name_list_page() { f.list_pages_by_tid() } else { HashMap::new() };
                        f.threads.iter().map(|t| self.thread_truth_of(f, t, listed.get(&t.tid).copied().unwrap_or(1))).collect()
                    },
                })
                .collect(),
        }
    }

    /// The truth about one thread (`None` if the forum is not served or has no such thread).
    pub fn thread_truth(&self, kind: ForumKind, thread: &str) -> Option<ThreadTruth> {
        if let Some(latest) = self.latest() {
            return latest.thread_truth(kind, thread);
        }
        let f = self.forum(kind)?;
        let t = f.thread(thread.parse().ok()?)?;
        // Finding the list page walks the board: only where links name it.
        let list_page = if f.kind.links_name_list_page() { f.list_page_of(t) } else { 1 };
        Some(self.thread_truth_of(f, t, list_page))
    }

    /// The quotes the posts of one thread show, in floor order (`None` if
    /// the forum is not served or has no such thread): what its truth's
    /// posts hold apart from their text (Discuz! X, phpBB and NodeBB quote).
    pub fn quotes(&self, kind: ForumKind, thread: &str) -> Option<Vec<QuoteTruth>> {
        Some(self.thread_truth(kind, thread)?.posts.into_iter().flat_map(|p| p.quotes).collect())
    }

    /// The truth about `t`, which its board lists on page `list_page`.
    fn thread_truth_of(&self, f: &ForumModel, t: &ThreadMeta, list_page: usize) -> ThreadTruth {
        let posts = if t.deleted {
            Vec::new()
        } else {
            self.posts(f, t, 1..=t.posts).into_iter().map(|p| PostTruth::plain(p.floor, &p.author, p.time, p.paragraphs.join("\n"))).collect()
        };
        let mut truth = ThreadTruth {
            site: f.kind.site_id().to_owned(),
            board: f.boards[t.board as usize].id.clone(),
            thread: t.tid.to_string(),
            url_path: f.listed_thread_path(t, list_page),
            title: t.title.clone(),
            deleted: t.deleted,
            unservable: f.faults.get(&t.tid).map(|p| p.name().to_owned()),
            on_topic: self.growth.on_topic.contains(&(f.kind, t.tid)),
            replies: t.posts - 1,
            last_post: civil(t.last_post).iso(),
            pages: f.thread_pages(t) as u32,
            posts,
            ..ThreadTruth::default()
        };
        // What the styles show of a conversation (thread XML version 2).
        match f.kind {
            ForumKind::DiscuzX => self.dzx_truth(f, t, &mut truth),
            ForumKind::Phpbb => self.phpbb_truth(f, t, &mut truth),
            ForumKind::Modern => self.md_truth(f, t, &mut truth),
            ForumKind::Discuz | ForumKind::Bbs | ForumKind::Nexus => {}
        }
        truth
    }

    /// Times of all posts of a thread: strictly increasing, the last one the
    /// thread's last-post time.
    pub(crate) fn post_times(&self, f: &ForumModel, t: &ThreadMeta) -> Vec<u32> {
        let mut r = rng(&[self.cfg.seed, f.kind.code(), t.tid, 0x7137]);
        // A thread that grew keeps its old posts' times; the added ones follow.
        let (posts, last_post, added) = self.growth.original(f.kind, t);
        let mut times = vec![last_post; posts as usize];
        for i in (0..times.len().saturating_sub(1)).rev() {
            let gap = match r.u32(0..10) {
                0 => r.u32(600..4000),
                1..=3 => r.u32(60..600),
                _ => r.u32(1..60),
            };
            times[i] = times[i + 1].saturating_sub(gap);
        }
        times.extend_from_slice(added);
        times
    }

    /// The author of one floor (cheap: list rows need the first and last).
    pub(crate) fn author(&self, f: &ForumModel, t: &ThreadMeta, floor: u32) -> (String, u64) {
        let mut r = rng(&[self.cfg.seed, f.kind.code(), t.tid, u64::from(floor), 1]);
        // Original posters come back to their threads.
        if floor > 1 && r.u32(0..5) == 0 {
            return self.author(f, t, 1);
        }
        let name = corpus::nickname(f.kind.script(), &mut r);
        let uid = 1000 + hash_str(&name) % 900_000;
        (name, uid)
    }

    /// Posts of the given floors (clamped to the thread).
    pub(crate) fn posts(&self, f: &ForumModel, t: &ThreadMeta, floors: std::ops::RangeInclusive<u32>) -> Vec<Post> {
        let times = self.post_times(f, t);
        let (lo, hi) = (*floors.start().max(&1), *floors.end().min(&t.posts));
        (lo..=hi).map(|floor| self.post(f, t, floor, times[floor as usize - 1])).collect()
    }

    /// What thread page `page` shows: the board, the thread's page count and the page's posts.
    pub(crate) fn thread_page<'f>(&self, f: &'f ForumModel, t: &ThreadMeta, page: usize) -> (&'f BoardMeta, usize, Vec<Post>) {
        let size = f.kind.thread_page_size();
        let first = ((page - 1) * size) as u32 + 1;
        (&f.boards[t.board as usize], f.thread_pages(t), self.posts(f, t, first..=first + size as u32 - 1))
    }

    /// What the "只看该作者" view of thread `t` shows for poster `uid`, page
    /// by page (as long as the thread's own pages): that poster's posts
    /// only; one empty page when there are none.
    pub(crate) fn author_pages(&self, f: &ForumModel, t: &ThreadMeta, uid: u64) -> Vec<Vec<Post>> {
        let mine: Vec<Post> = self.posts(f, t, 1..=t.posts).into_iter().filter(|p| p.uid == uid).collect();
        let mut pages: Vec<Vec<Post>> = mine.chunks(f.kind.thread_page_size()).map(<[Post]>::to_vec).collect();
        if pages.is_empty() {
            pages.push(Vec::new());
        }
        pages
    }

    fn post(&self, f: &ForumModel, t: &ThreadMeta, floor: u32, time: u32) -> Post {
        let (author, uid) = self.author(f, t, floor);
        let mut r = rng(&[self.cfg.seed, f.kind.code(), t.tid, u64::from(floor), 2]);
        let script = f.kind.script();
        let n = match r.u32(0..10) {
            0..=4 => 1,
            5..=7 => 2,
            8 => 3,
            _ => 4,
        };
        let mut paragraphs: Vec<Cow<'static, str>> = (0..n)
            .map(|_| match script {
                Script::Simplified => Cow::Borrowed(corpus::reviews()[r.usize(0..corpus::reviews().len())]),
                Script::Traditional => Cow::Borrowed(corpus::poems()[r.usize(0..corpus::poems().len())].text),
            })
            .collect();
        if r.u32(0..20) == 0 {
            let i = r.usize(0..paragraphs.len());
            let snippet = corpus::tricky_snippet(script, &mut r);
            paragraphs[i] = Cow::Owned(format!("{}{}", paragraphs[i], snippet));
        }
        Post { floor, pid: t.tid * 64 + u64::from(floor), author, uid, time, paragraphs, variant: r.bool() }
    }
}

fn build_forum(kind: ForumKind, cfg: &FixtureConfig) -> ForumModel {
    let nboards = cfg.boards.clamp(1, 64);
    let mut r = rng(&[cfg.seed, kind.code(), 0xB0A2D]);
    let mut next_id = 1 + r.u64(0..3);
    let boards: Vec<BoardMeta> = (0..nboards)
        .map(|j| {
            let (id, title) = match kind {
                ForumKind::Discuz | ForumKind::Phpbb => {
                    let pool = if kind == ForumKind::Discuz { corpus::DZ_BOARDS } else { corpus::PHPBB_BOARDS };
                    let id = next_id.to_string();
                    next_id += 1 + r.u64(0..6);
                    (id, suffixed(pool[j % pool.len()], j / pool.len()))
                }
                ForumKind::DiscuzX | ForumKind::Nexus | ForumKind::Modern => {
                    let pool = match kind {
                        ForumKind::DiscuzX => corpus::DZX_BOARDS,
                        ForumKind::Nexus => corpus::NX_BOARDS,
                        _ => corpus::MD_BOARDS,
                    };
                    let id = next_id.to_string();
                    next_id += 1 + r.u64(0..6);
                    (id, suffixed(pool[j % pool.len()], j / pool.len()))
                }
                ForumKind::Bbs => {
                    let (slug, title) = corpus::BBS_BOARDS[j % corpus::BBS_BOARDS.len()];
                    let round = j / corpus::BBS_BOARDS.len();
                    let id = if round == 0 { slug.to_owned() } else { format!("{slug}{}", round + 1) };
                    (id, suffixed(title, round))
                }
            };
            BoardMeta { id, title, order: Vec::new() }
        })
        .collect();

    let script = kind.script();
    let mut threads = Vec::with_capacity(cfg.threads);
    let mut tid = 1000;
    for i in 0..cfg.threads {
        // Ids with gaps (deleted or moved threads), boards interleaved: ids
        // say nothing about which board a thread is in.
        tid += if r.u32(0..4) == 0 { r.u64(2..6) } else { 1 };
        let board = if cfg.threads >= nboards && i < nboards { i } else { r.usize(0..nboards) } as u32;
        let posts = match r.u32(0..10) {
            0..=4 => r.u32(1..=10),
            5..=7 => r.u32(11..=25),
            // One draw either way: the long-thread knob changes nothing else.
            _ => r.u32(26..=if cfg.long_threads { 120 } else { 40 }),
        };
        let last_post = newest() - r.u32(0..kind.active_days() * 1440);
        let mut title = match script {
            Script::Simplified => {
                let line = corpus::reviews()[r.usize(0..corpus::reviews().len())];
                corpus::title_from_review(line, &mut r)
            }
            Script::Traditional => {
                let poem = corpus::poems()[r.usize(0..corpus::poems().len())];
                corpus::title_from_poem(&poem, &mut r)
            }
        };
        if r.u32(0..30) == 0 {
            title.push_str(corpus::tricky_title_suffix(script, &mut r));
        }
        let deleted = r.u32(0..100) == 0;
        let views = (posts - 1) * r.u32(3..30) + r.u32(1..60);
        threads.push(ThreadMeta { tid, board, posts, last_post, title, deleted, views });
    }
    // At least two deleted threads in any forum big enough to notice them.
    if cfg.threads >= 50 && threads.iter().filter(|t| t.deleted).count() < 2 {
        let n = threads.len();
        threads[n / 3].deleted = true;
        threads[2 * n / 3].deleted = true;
    }

    let mut model = ForumModel { kind, boards, threads, faults: HashMap::new() };
    for (i, t) in model.threads.iter().enumerate() {
        model.boards[t.board as usize].order.push(i as u32);
    }
    let threads = &model.threads;
    for b in &mut model.boards {
        b.order.sort_by_key(|&i| {
            let t = &threads[i as usize];
            (std::cmp::Reverse(t.last_post), std::cmp::Reverse(t.tid))
        });
    }
    model
}

fn suffixed(title: &str, round: usize) -> String {
    if round == 0 {
        title.to_owned()
    } else {
        format!("{title}{}", round + 1)
    }
}

impl ForumModel {
    pub fn thread(&self, tid: u64) -> Option<&ThreadMeta> {
        self.threads.binary_search_by_key(&tid, |t| t.tid).ok().map(|i| &self.threads[i])
    }

    pub fn board(&self, id: &str) -> Option<&BoardMeta> {
        self.boards.iter().find(|b| b.id == id)
    }

    /// Posts of all the board's threads, as board indexes show it.
    pub fn board_posts(&self, b: &BoardMeta) -> u32 {
        b.order.iter().map(|&i| self.threads[i as usize].posts).sum()
    }

    /// The board's thread with the newest post, as a board index names it.
    pub fn board_newest(&self, b: &BoardMeta) -> Option<&ThreadMeta> {
        b.order.first().map(|&i| &self.threads[i as usize])
    }

    pub fn list_pages(&self, b: &BoardMeta) -> usize {
        b.order.len().div_ceil(self.kind.list_page_size()).max(1)
    }

    pub fn thread_pages(&self, t: &ThreadMeta) -> usize {
        (t.posts as usize).div_ceil(self.kind.thread_page_size()).max(1)
    }

    /// The slug of a modern-forum thread (`bbs`, `md`): the title's first
    /// few letters, percent-encoded.
    pub fn slug(t: &ThreadMeta) -> String {
        let s: String = t.title.chars().filter(|c| c.is_alphanumeric()).take(4).collect();
        if s.is_empty() {
            "topic".to_owned()
        } else {
            percent_encode(&s)
        }
    }

    /// A board list page's path and query, as the forum links it (with `&`).
    pub fn board_path(&self, b: &BoardMeta, page: usize) -> String {
        let first = match self.kind {
            ForumKind::Discuz => format!("/dz/forum.php?mod=forumdisplay&fid={}", b.id),
            ForumKind::Phpbb => format!("/phpbb/viewforum.php?f={}", b.id),
            ForumKind::Bbs => format!("/bbs/board/{}/", b.id),
            // Rewritten: page 1 is `-1.html` too.
            ForumKind::DiscuzX => return format!("/dzx/forum-{}-{}.html", b.id, page.max(1)),
            ForumKind::Nexus => format!("/nx/thread.php?fid={}", b.id),
            ForumKind::Modern => format!("/md/category/{}/{}", b.id, percent_encode(&b.title)),
        };
        self.page_path(first, page, self.kind.list_page_size())
    }

    /// A thread page's path and query, as the thread's own pager links it;
    /// the modern forum's slug percent-encoded. Lists link page 1 of the
    /// Discuz! X and PHPWind-style threads by another name
    /// ([`ForumModel::listed_thread_path`]).
    pub fn thread_path(&self, t: &ThreadMeta, page: usize) -> String {
        let first = match self.kind {
            ForumKind::Discuz => format!("/dz/forum.php?mod=viewthread&tid={}", t.tid),
            ForumKind::Phpbb => format!("/phpbb/viewtopic.php?t={}", t.tid),
            ForumKind::Bbs => format!("/bbs/topic/{}/{}/", t.tid, Self::slug(t)),
            // The last number is the list page the link was found on; the
            // thread's own pages say 1.
            ForumKind::DiscuzX => return format!("/dzx/thread-{}-{}-1.html", t.tid, page.max(1)),
            ForumKind::Nexus => format!("/nx/read.php?tid={}", t.tid),
            ForumKind::Modern => format!("/md/topic/{}/{}", t.tid, Self::slug(t)),
        };
        self.page_path(first, page, self.kind.thread_page_size())
    }

    /// Page 1 of a thread as list page `list_page` of its board links it:
    /// Discuz! X names the list page in the thread's URL
    /// (`thread-{tid}-1-{list_page}.html`), the PHPWind-style forum adds
    /// `&fpage={list_page}` from page 2 of a list on; the others link
    /// [`ForumModel::thread_path`].
    pub fn listed_thread_path(&self, t: &ThreadMeta, list_page: usize) -> String {
        match self.kind {
            ForumKind::DiscuzX => format!("/dzx/thread-{}-1-{}.html", t.tid, list_page.max(1)),
            ForumKind::Nexus if list_page > 1 => format!("/nx/read.php?tid={}&fpage={list_page}", t.tid),
            _ => self.thread_path(t, 1),
        }
    }

    /// The list page of its board that shows `t` now (1 when not listed).
    pub fn list_page_of(&self, t: &ThreadMeta) -> usize {
        let b = &self.boards[t.board as usize];
        b.order.iter().position(|&i| self.threads[i as usize].tid == t.tid).map_or(1, |at| at / self.kind.list_page_size() + 1)
    }

    /// Every thread's list page ([`ForumModel::list_page_of`]) at once, by thread id.
    fn list_pages_by_tid(&self) -> HashMap<u64, usize> {
        let size = self.kind.list_page_size();
        self.boards
            .iter()
            .flat_map(|b| b.order.iter().enumerate().map(move |(at, &i)| (i, at / size + 1)))
            .map(|(i, p)| (self.threads[i as usize].tid, p))
            .collect()
    }

    /// Page `page` of the board list or thread whose first page is at
    /// `first`: lists and threads page the same way within a forum, and
    /// phpBB counts items (`per_page` to a page) rather than pages.
    fn page_path(&self, first: String, page: usize, per_page: usize) -> String {
        match self.kind {
            _ if page <= 1 => first,
            ForumKind::Discuz => format!("{first}&page={page}"),
            ForumKind::Phpbb => format!("{first}&start={}", (page - 1) * per_page),
            ForumKind::Bbs | ForumKind::Modern => format!("{first}?page={page}"),
            ForumKind::DiscuzX | ForumKind::Nexus => format!("{first}&page={page}"),
        }
    }
}

/// The name fault decisions know a thread page by: Discuz! X's list page
/// number set to 1, the PHPWind-style forum's `fpage` dropped, so a page
/// linked from any list page is one page. Other paths are returned as they are.
pub(crate) fn canonical_page(path_and_query: &str) -> Cow<'_, str> {
    if let Some(name) = path_and_query.strip_prefix("/dzx/thread-").and_then(|r| r.strip_suffix(".html")) {
        let parts: Vec<&str> = name.split('-').collect();
        if let [tid, page, _] = parts.as_slice() {
            return Cow::Owned(format!("/dzx/thread-{tid}-{page}-1.html"));
        }
    }
    if let Some(query) = path_and_query.strip_prefix("/nx/read.php?") {
        if query.split('&').any(|kv| kv.starts_with("fpage=")) {
            let kept: Vec<&str> = query.split('&').filter(|kv| !kv.starts_with("fpage=")).collect();
            return Cow::Owned(format!("/nx/read.php?{}", kept.join("&")));
        }
    }
    Cow::Borrowed(path_and_query)
}

/// Everything the fixture's pages show. Serializes to the JSON `luntan-fixture truth` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truth {
    pub seed: u64,
    pub forums: Vec<ForumTruth>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForumTruth {
    /// Site id: `dz`, `phpbb`, `bbs`, or one of the extra kinds, `dzx`, `nx` and `md`.
    pub site: String,
    pub name: String,
    /// `GBK`, `Big5`, `UTF-8` or `GB18030`.
    pub encoding: String,
    pub boards: Vec<BoardTruth>,
    /// Every thread, deleted ones included, by ascending thread id.
    pub threads: Vec<ThreadTruth>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardTruth {
    pub board: String,
    pub title: String,
    /// The board's first list page, relative to the server root.
    pub url_path: String,
    /// Thread ids in list order (newest last post first), across all list pages.
    pub threads: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ThreadTruth {
    pub site: String,
    pub board: String,
    pub thread: String,
    /// The thread's first page as lists link it (path and query, `&` unescaped,
    /// non-ASCII percent-encoded), relative to the server root. Where lists
    /// name their own page in the link (`dzx`, `nx`), the list page that shows
    /// the thread now.
    pub url_path: String,
    /// The title as a reader sees it (entities decoded).
    pub title: String,
    /// Listed, but its pages answer 404; `posts` is then empty.
    pub deleted: bool,
    /// Hostile mode: the permanent fault ([`PermanentFault::name`]) that keeps
    /// this thread from ever being saved. `posts` still say what the pages hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unservable: Option<String>,
    /// On the configured topic ([`FixtureConfig::topics`]); always false without one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_topic: bool,
    /// The reply count lists show: posts − 1.
    pub replies: u32,
    /// `YYYY-MM-DDTHH:MM:SS`, forum-local.
    pub last_post: String,
    pub pages: u32,
    pub posts: Vec<PostTruth>,
    /// The board's name as the thread's pages show it (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_name: Option<String>,
    /// The reply count the thread's pages show, where they show one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_replies: Option<u64>,
    /// The view count the thread's pages show, where they show one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub views: Option<u64>,
}

impl ThreadTruth {
    /// A thread of one page, listed and served, off any topic: what the
    /// sites drawn by scripts beside the forums hold (an article and its
    /// comments, a thread loaded over a socket). Its reply count and last
    /// post come from `posts`, which must not be empty.
    pub(crate) fn one_page(site: &str, board: &str, thread: String, url_path: String, title: String, posts: Vec<PostTruth>) -> ThreadTruth {
        ThreadTruth {
            site: site.into(),
            board: board.into(),
            thread,
            url_path,
            title,
            deleted: false,
            unservable: None,
            on_topic: false,
            replies: posts.len() as u32 - 1,
            last_post: posts.last().map(|p| p.time.clone()).unwrap_or_default(),
            pages: 1,
            posts,
            board_name: None,
            shown_replies: None,
            views: None,
        }
    }

    /// Whether a crawler that retries enough can save this thread.
    pub fn servable(&self) -> bool {
        !self.deleted && self.unservable.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PostTruth {
    /// 1-based position in the thread.
    pub floor: u32,
    pub author: String,
    /// `YYYY-MM-DDTHH:MM:SS`, forum-local (seconds always 00).
    pub time: String,
    /// Paragraphs joined by `\n`, entities decoded. Runs of spaces inside a
    /// paragraph are kept as the page has them. Never a quote's words.
    pub text: String,
    // What the styles that show them show of a post (thread XML version 2);
    // absent where the page does not show it.
    /// The forum's id of the post (`pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The forum's id of the author (`uid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_id: Option<String>,
    /// The author's profile page: path and query from the server root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_path: Option<String>,
    /// The `id` of the post this one answers (the one it quotes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotes: Vec<QuoteTruth>,
    /// When it was last edited, as `time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<String>,
    /// Links in its own text, in page order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkTruth>,
    /// Pictures in its own text, in page order (smileys are not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageTruth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub likes: Option<u64>,
    /// The location label, as a reader of `IP属地：广东` takes it (`广东`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl PostTruth {
    /// A post as the styles without version-2 fields show it: floor,
    /// author, time (minutes on the fixture's clock) and text.
    pub(crate) fn plain(floor: u32, author: &str, minutes: u32, text: String) -> PostTruth {
        PostTruth { floor, author: author.to_owned(), time: civil(minutes).iso(), text, ..PostTruth::default() }
    }
}

/// A link in a post. `href` is absolute, or a path from the server root
/// for the fixture's own pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkTruth {
    pub href: String,
    /// The link's words as shown (they are in the post's text too).
    pub text: String,
}

/// A picture in a post; `src` as [`LinkTruth::href`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageTruth {
    pub src: String,
    pub alt: String,
}

/// A quote inside a post: another post's words, not the post's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteTruth {
    /// The quoting post's floor.
    pub floor: u32,
    /// The quoted post's id (Discuz!'s `pid`), where the quote names it.
    pub of: Option<String>,
    /// The quoted post's author, where the quote names them.
    pub author: Option<String>,
    /// The quoted words as shown, entities decoded.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn model_shape() {
        let fx = Fixture::new(FixtureConfig { threads: 120, boards: 3, ..FixtureConfig::default() });
        for f in &fx.forums {
            assert_eq!(f.boards.len(), 3);
            assert_eq!(f.threads.len(), 120);
            assert!(f.threads.windows(2).all(|w| w[0].tid < w[1].tid));
            assert!(f.threads.iter().filter(|t| t.deleted).count() >= 2);
            assert!(f.threads.iter().all(|t| (1..=40).contains(&t.posts)));
            // Ids are not contiguous within a board.
            let b0: Vec<u64> = f.threads.iter().filter(|t| t.board == 0).map(|t| t.tid).collect();
            assert!(b0.windows(2).any(|w| w[1] - w[0] > 1));
            for b in &f.boards {
                let times: Vec<u32> = b.order.iter().map(|&i| f.threads[i as usize].last_post).collect();
                assert!(times.windows(2).all(|w| w[0] >= w[1]), "board {} not newest first", b.id);
            }
            for t in f.threads.iter().take(30) {
                let times = fx.post_times(f, t);
                assert!(times.windows(2).all(|w| w[0] < w[1]));
                assert_eq!(*times.last().unwrap(), t.last_post);
                let posts = fx.posts(f, t, 1..=t.posts);
                assert_eq!(posts.len(), t.posts as usize);
                assert!(posts.iter().all(|p| (1..=4).contains(&p.paragraphs.len())));
            }
        }
    }

    #[test]
    fn some_posts_are_tricky_and_some_names_need_gbk() {
        let fx = Fixture::new(FixtureConfig { threads: 200, forums: vec![ForumKind::Discuz], ..FixtureConfig::default() });
        let truth = fx.truth();
        let posts: Vec<&PostTruth> = truth.forums[0].threads.iter().flat_map(|t| &t.posts).collect();
        let tricky = posts.iter().filter(|p| p.text.contains(['&', '<', '😀', '"'])).count();
        let share = tricky as f64 / posts.len() as f64;
        assert!((0.02..0.10).contains(&share), "{tricky} of {}", posts.len());
        assert!(posts.iter().any(|p| p.text.contains('😀')));
        assert!(posts.iter().any(|p| p.text.contains("  ")));
        assert!(posts.iter().any(|p| p.author.contains(['喆', '镕'])));
    }

    #[test]
    fn forums_do_not_depend_on_each_other() {
        let all = Fixture::new(FixtureConfig { threads: 60, ..FixtureConfig::default() }).truth();
        let bbs = Fixture::new(FixtureConfig { threads: 60, forums: vec![ForumKind::Bbs], ..FixtureConfig::default() }).truth();
        assert_eq!(all.forums[2], bbs.forums[0]);
        let other = Fixture::new(FixtureConfig { seed: 2, threads: 60, ..FixtureConfig::default() }).truth();
        assert_ne!(all.forums[0].threads, other.forums[0].threads);
    }

    #[test]
    fn tiny_and_odd_configs_work() {
        for (threads, boards) in [(0, 0), (0, 3), (1, 1), (2, 5), (49, 100)] {
            let fx = Fixture::new(FixtureConfig { threads, boards, forums: vec![ForumKind::Bbs, ForumKind::Bbs], ..FixtureConfig::default() });
            assert_eq!(fx.forums.len(), 1, "a forum listed twice is served once");
            let f = &fx.forums[0];
            assert_eq!(f.boards.len(), boards.clamp(1, 64));
            assert_eq!(f.threads.len(), threads);
            for b in &f.boards {
                assert_eq!(fx.get(&f.board_path(b, 1)).status, 200);
                assert_eq!(fx.get(&f.board_path(b, 2)).status, if b.order.len() > 20 { 200 } else { 404 });
            }
            let truth = fx.truth();
            assert_eq!(truth.forums[0].threads.len(), threads);
        }
    }

    #[test]
    fn a_hundred_thousand_threads_build_quickly() {
        let start = std::time::Instant::now();
        let fx = Fixture::new(FixtureConfig { threads: 100_000, ..FixtureConfig::default() });
        let took = start.elapsed();
        // Generous for unoptimized test builds on a busy two-core machine.
        assert!(took < Duration::from_secs(10), "{took:?}");
        let f = &fx.forums[0];
        assert_eq!(f.threads.len(), 100_000);
        assert!(fx.max_board_pages(ForumKind::Discuz) > 1000);
        let t = fx.thread_truth(ForumKind::Phpbb, &fx.forums[1].threads[99_999].tid.to_string()).unwrap();
        assert_eq!(t.thread, fx.forums[1].threads[99_999].tid.to_string());
    }

    #[test]
    fn topic_boards_hold_most_on_topic_threads_and_titles_show_it() {
        use crate::topics::{Topics, TOPIC_WORDS, WORDS_T};
        let cfg = FixtureConfig { threads: 2000, boards: 4, topics: Some(Topics::default()), ..FixtureConfig::default() };
        let truth = Fixture::new(cfg).truth();
        for f in &truth.forums {
            let on: Vec<_> = f.threads.iter().filter(|t| t.on_topic).collect();
            let share = on.len() as f64 / f.threads.len() as f64;
            assert!((0.15..0.35).contains(&share), "{}: {share}", f.site);
            let words: &[&str] = if f.site == "phpbb" { WORDS_T } else { TOPIC_WORDS };
            let has_word = |s: &str| words.iter().any(|w| s.contains(w));
            assert!(on.iter().all(|t| has_word(&t.title)), "{}: an on-topic title without a topic word", f.site);
            let off_with_word = f.threads.iter().filter(|t| !t.on_topic && has_word(&t.title)).count();
            assert!(off_with_word > 0 && off_with_word < f.threads.len() / 10, "{}: {off_with_word} passing mentions", f.site);
            let home = &f.boards[0].threads;
            let home_on = home.iter().filter(|id| on.iter().any(|t| &t.thread == *id)).count();
            assert!(home_on as f64 > 0.7 * home.len() as f64, "{}: the topic board is mostly on topic", f.site);
        }
    }

    #[test]
    fn without_topics_nothing_changes() {
        let plain = Fixture::new(FixtureConfig { threads: 80, ..FixtureConfig::default() }).truth();
        assert!(plain.forums.iter().all(|f| f.threads.iter().all(|t| !t.on_topic)));
    }
}
