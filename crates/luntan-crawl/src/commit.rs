//! Download's group commit: finished threads are made durable and their
//! rows moved to `Saved` several at a time. Threads that finish while one
//! batch is being written wait for the next, so under load one blocking
//! task, one fsync per directory and one transaction serve a whole batch,
//! where each thread used to cost its own task, a directory fsync per file
//! and a commit; with one thread in flight a batch is that thread alone and
//! waits for nothing.
//!
//! The order within a batch is the order a single thread's save always had:
//! every file is written to a temp file, fsynced and renamed into place;
//! then each directory is fsynced once; only then does the transaction move
//! the rows. A crash before the transaction commits leaves every row of the
//! batch unmoved, and at worst files that the next download of those
//! threads writes again.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use luntan_core::ids::{BoardId, ThreadLoc};
use luntan_core::layout::{sync_dir, AtomicFile};
use luntan_core::state::ThreadState;
use luntan_core::store::{Store, StoreError, Update};
use tokio::sync::{mpsc, oneshot};

use crate::db::lock;

/// One finished thread: its files and its row's move to `Saved`.
pub(crate) struct Commit {
    pub loc: ThreadLoc,
    /// Each file's path and bytes, written in this order.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub pages: u32,
    pub content_type: Option<String>,
    /// Browser mode: DOM states kept and dropped as duplicates.
    pub states: Option<(u32, u32)>,
    /// Boards met (a microblog's users): id, URL and title, recorded in the
    /// transaction that moves the row.
    pub boards: Vec<(BoardId, String, Option<String>)>,
    /// A hybrid site's comment count (see [`Update::replies`]).
    pub replies: Option<i64>,
    /// Its newest comment's time (see [`Update::last_post`]).
    pub last_post: Option<String>,
}

/// Why a thread was not committed; its row is as it was.
#[derive(Debug)]
pub(crate) enum CommitError {
    /// One of its files (or its directory) could not be made durable.
    Write(PathBuf, io::Error),
    /// The batch's transaction failed; one thread of the batch carries the
    /// error, the others get [`CommitError::Unsaved`].
    Store(StoreError),
    /// Its batch was not committed (see [`CommitError::Store`]), or the
    /// committer is gone.
    Unsaved,
}

type Reply = oneshot::Sender<Result<(), CommitError>>;

/// Hands finished threads to a task that commits them in batches of at
/// most `max`; cloned into every download task of a site.
#[derive(Clone)]
pub(crate) struct Committer {
    tx: mpsc::Sender<(Commit, Reply)>,
    batches: Arc<AtomicU64>,
}

impl Committer {
    /// Starts the committing task on the current runtime. It ends once
    /// every clone of the committer is dropped and the last batch is done.
    pub fn start(store: Arc<Mutex<Store>>, max: usize) -> Committer {
        let max = max.max(1);
        let (tx, mut rx) = mpsc::channel::<(Commit, Reply)>(max);
        let batches = Arc::new(AtomicU64::new(0));
        let counted = batches.clone();
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(max);
            while rx.recv_many(&mut batch, max).await > 0 {
                counted.fetch_add(1, Ordering::Relaxed);
                let (store, work) = (store.clone(), std::mem::take(&mut batch));
                // A panic in the batch drops its replies: those threads
                // come back as `Unsaved`, and the panic is printed.
                let _ = tokio::task::spawn_blocking(move || write_batch(&store, work)).await;
            }
        });
        Committer { tx, batches }
    }

    /// Batches begun so far.
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// Commits one thread, with whichever others are ready by then.
    pub async fn commit(&self, c: Commit) -> Result<(), CommitError> {
        let (reply, answer) = oneshot::channel();
        self.tx.send((c, reply)).await.map_err(|_| CommitError::Unsaved)?;
        answer.await.unwrap_or(Err(CommitError::Unsaved))
    }
}

fn write_batch(store: &Mutex<Store>, batch: Vec<(Commit, Reply)>) {
    // 1. Each thread's files, each fsynced and renamed into place.
    let mut dirs: BTreeMap<PathBuf, Option<io::Error>> = BTreeMap::new();
    let mut written = Vec::with_capacity(batch.len());
    for (c, reply) in batch {
        match publish(&c.files) {
            Ok(in_dirs) => {
                for d in &in_dirs {
                    dirs.entry(d.clone()).or_default();
                }
                written.push((c, reply, in_dirs));
            }
            Err((path, e)) => {
                let _ = reply.send(Err(CommitError::Write(path, e)));
            }
        }
    }
    // 2. Each directory once, after the last rename into it.
    for (dir, failed) in dirs.iter_mut() {
        *failed = sync_dir(dir).err();
    }
    let mut ready = Vec::with_capacity(written.len());
    for (c, reply, in_dirs) in written {
        match in_dirs.iter().find_map(|d| dirs[d].as_ref().map(|e| (d, e))) {
            Some((d, e)) => {
                let _ = reply.send(Err(CommitError::Write(d.clone(), io::Error::new(e.kind(), e.to_string()))));
            }
            None => ready.push((c, reply)),
        }
    }
    if ready.is_empty() {
        return;
    }
    // 3. One transaction moves every row whose files are durable. A row
    // another worker has claimed since is left to it (`transition` refuses).
    // Rows are locked in (site, key) order, boards first, so that two
    // workers' batches over the same boards (a microblog's users) wait for
    // each other instead of deadlocking on PostgreSQL.
    ready.sort_by(|(a, _), (b, _)| (a.loc.site.as_str(), a.loc.thread.as_str()).cmp(&(b.loc.site.as_str(), b.loc.thread.as_str())));
    let mut boards: BTreeMap<(&str, &str), (&str, Option<&str>)> = BTreeMap::new();
    for (c, _) in &ready {
        for (id, url, title) in &c.boards {
            // As upserts one by one in this order would: the first URL
            // stays, the last title given wins.
            let b = boards.entry((c.loc.site.as_str(), id.as_str())).or_insert((url.as_str(), None));
            b.1 = title.as_deref().or(b.1);
        }
    }
    let moved = lock(store).batch(|s| {
        for ((site, id), (url, title)) in &boards {
            s.upsert_board(site, id, url, *title)?;
        }
        for (c, _) in &ready {
            let (site, thread) = (c.loc.site.as_str(), c.loc.thread.as_str());
            let up = Update {
                save_date: Some(c.loc.saved),
                pages: Some(c.pages),
                content_type: c.content_type.as_deref(),
                states: c.states,
                replies: c.replies,
                last_post: c.last_post.as_deref(),
                ..Default::default()
            };
            s.transition(site, thread, ThreadState::Discovered, ThreadState::Saved, &up)?;
        }
        Ok::<_, StoreError>(())
    });
    match moved {
        Ok(()) => {
            for (_, reply) in ready {
                let _ = reply.send(Ok(()));
            }
        }
        Err(e) => {
            let mut e = Some(e);
            for (_, reply) in ready {
                let _ = reply.send(Err(e.take().map_or(CommitError::Unsaved, CommitError::Store)));
            }
        }
    }
}

/// Writes one thread's files, each through a fsynced temp file renamed into
/// place; the directories they are in, for [`sync_dir`].
fn publish(files: &[(PathBuf, Vec<u8>)]) -> Result<Vec<PathBuf>, (PathBuf, io::Error)> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (path, bytes) in files {
        let at = |e| (path.clone(), e);
        let mut f = AtomicFile::create(path).map_err(at)?;
        f.write_all(bytes).map_err(at)?;
        let dir = f.commit_leaving_dir().map_err(at)?;
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use luntan_core::ids::SaveDate;
    use luntan_core::store::NewThread;
    use luntan_core::DataDir;

    fn commit_of(data: &DataDir, store: &Mutex<Store>, thread: &str) -> Commit {
        let row = lock(store).thread("dz", thread).unwrap().unwrap();
        let loc = row.location(SaveDate::parse("20261202").unwrap());
        let files = vec![(data.html_path(&loc, 1), format!("page 1 of {thread}").into_bytes()), (data.http_path(&loc), Vec::new())];
        Commit { loc, files, pages: 1, content_type: Some("text/html; charset=gbk".into()), states: None, boards: Vec::new(), replies: None, last_post: None }
    }

    fn store_with(data: &DataDir, ids: &[&str]) -> Arc<Mutex<Store>> {
        let store = Arc::new(Mutex::new(Store::open(&data.db_path()).unwrap()));
        let rows: Vec<NewThread> = ids
            .iter()
            .map(|t| NewThread {
                site: "dz".parse().unwrap(),
                board: "2".parse().unwrap(),
                thread: (*t).parse().unwrap(),
                url: format!("http://127.0.0.1/t{t}"),
                title: None,
                replies: None,
                last_post: None,
            })
            .collect();
        lock(&store).insert_new_threads(&rows).unwrap();
        store
    }

    #[tokio::test(flavor = "current_thread")]
    async fn boards_met_by_one_batch_are_recorded_as_upserts_one_by_one_would_be() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::new(dir.path());
        let store = store_with(&data, &["1", "2"]);
        let mut a = commit_of(&data, &store, "2");
        a.boards =
            vec![("u9".parse().unwrap(), "http://127.0.0.1/u/9".into(), None), ("u1".parse().unwrap(), "http://127.0.0.1/u/1".into(), Some("一号".into()))];
        let mut b = commit_of(&data, &store, "1");
        b.boards = vec![
            ("u9".parse().unwrap(), "http://127.0.0.1/u/9?again".into(), Some("九号".into())),
            ("u1".parse().unwrap(), "http://127.0.0.1/u/1".into(), None),
        ];
        let committer = Committer::start(store.clone(), 8);
        let (ra, rb) = futures_util::future::join(committer.commit(a), committer.commit(b)).await;
        ra.unwrap();
        rb.unwrap();
        assert_eq!(committer.batches(), 1);
        let mut boards: Vec<(BoardId, String, Option<String>)> = lock(&store).boards("dz").unwrap().into_iter().map(|b| (b.board, b.url, b.title)).collect();
        boards.sort();
        assert_eq!(
            boards,
            [
                ("u1".parse().unwrap(), "http://127.0.0.1/u/1".into(), Some("一号".into())),
                ("u9".parse().unwrap(), "http://127.0.0.1/u/9?again".into(), Some("九号".into()))
            ],
            "in thread order (1 before 2) the first URL stays, and a title given once is not lost to a later none"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn threads_ready_together_commit_in_one_batch_and_a_file_that_cannot_be_written_fails_only_its_thread() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::new(dir.path());
        let ids = ["1", "2", "3", "4", "5"];
        let store = store_with(&data, &ids);
        let commits: Vec<Commit> = ids.iter().map(|t| commit_of(&data, &store, t)).collect();
        // A directory where thread 3's page should go: its rename fails.
        let blocked = commits[2].files[0].0.clone();
        std::fs::create_dir_all(blocked.join("in-the-way")).unwrap();
        let committer = Committer::start(store.clone(), 8);
        // On one runtime thread every commit is queued before the
        // committer first runs, so all five are one batch.
        let outcomes = futures_util::future::join_all(commits.into_iter().map(|c| committer.commit(c))).await;
        assert_eq!(committer.batches(), 1);
        for (t, outcome) in ids.iter().zip(&outcomes) {
            let row = lock(&store).thread("dz", t).unwrap().unwrap();
            if *t == "3" {
                assert!(matches!(outcome, Err(CommitError::Write(p, _)) if *p == blocked), "{outcome:?}");
                assert_eq!(row.state, ThreadState::Discovered, "its row is as it was");
            } else {
                assert!(outcome.is_ok(), "thread {t}: {outcome:?}");
                assert_eq!(row.state, ThreadState::Saved);
                assert_eq!((row.pages, row.save_date.as_deref()), (Some(1), Some("20261202")));
                let loc = row.saved_location().unwrap();
                assert_eq!(std::fs::read(data.html_path(&loc, 1)).unwrap(), format!("page 1 of {t}").into_bytes());
            }
        }
        assert_eq!(luntan_core::layout::sweep_temp_files(dir.path(), "html").unwrap(), 0, "no temp file is left behind");
        // One at a time, each is a batch of its own: nothing waits for company.
        let again = commit_of(&data, &store, "3");
        std::fs::remove_dir_all(&blocked).unwrap();
        committer.commit(again).await.unwrap();
        assert_eq!(committer.batches(), 2);
        assert_eq!(lock(&store).thread("dz", "3").unwrap().unwrap().state, ThreadState::Saved);
    }
}
