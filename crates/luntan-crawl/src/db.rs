//! How the network stages reach the shared [`Store`] from async code: SQLite
//! calls block (a commit waits for an fsync, a busy database up to 30 s), so
//! they run on tokio's blocking pool rather than stall the runtime threads
//! that drive every fetch.

use std::sync::{Arc, Mutex, MutexGuard};

use luntan_core::store::Store;

/// Runs `f` on the locked store on tokio's blocking pool and returns what it
/// returns. Work that belongs together goes in one call (and, when it writes
/// more than once, in one [`Store::batch`]), so the lock is taken once.
pub async fn with_store<T, F>(store: &Arc<Mutex<Store>>, f: F) -> T
where
    F: FnOnce(&mut Store) -> T + Send + 'static,
    T: Send + 'static,
{
    let store = store.clone();
    blocking(move || f(&mut lock(&store))).await
}

/// Runs `f` on tokio's blocking pool (a file or database call that may
/// wait on the disk) and returns what it returns; a panic in `f` goes on
/// in the caller.
pub(crate) async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(out) => out,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("blocking task did not run: {e}"),
    }
}

/// Locks the shared store (or any state the crawl shares between tasks), for
/// code already off the runtime's threads.
pub(crate) fn lock<T>(store: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave SQLite half-written: a
    // single statement is atomic, and a `Store::batch` a panic unwinds
    // through is rolled back. So a poisoned lock is still usable.
    store.lock().unwrap_or_else(|p| p.into_inner())
}
