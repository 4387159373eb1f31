//! The shared gate: one forum's politeness held in the crawl state for
//! every worker sharing the crawl (request slots leased from the site's
//! `concurrency`, turns reserved `delay` apart, holds), on one store
//! connection per process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::store::{StateUrl, Store, StoreError};

use super::Fetcher;

/// A site's gate in the crawl state, for workers in other processes and on
/// other hosts (`luntan_core::store`'s gates): a request slot leased from
/// the site's `concurrency` and a turn reserved `delay` after the last one
/// any worker reserved. The store calls block, so they run on tokio's
/// blocking pool.
pub(super) struct SharedGate {
    /// One connection for every forum's gate in this process.
    store: Arc<Mutex<Store>>,
    site: luntan_core::ids::SiteId,
    concurrency: usize,
    /// How long a slot stays this worker's unrenewed (the stage's lease
    /// keeper renews it): a killed worker's slot comes back after this.
    lease: Duration,
}

impl std::fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedGate").field("site", &self.site).field("concurrency", &self.concurrency).finish_non_exhaustive()
    }
}

impl SharedGate {
    async fn call<T: Send + 'static>(self: &Arc<Self>, f: impl FnOnce(&Store, &SharedGate) -> Result<T, StoreError> + Send + 'static) -> Result<T, StoreError> {
        let gate = self.clone();
        crate::db::blocking(move || f(&crate::db::lock(&gate.store), &gate)).await
    }

    /// Waits for one of the site's shared slots and then
    /// for the site's turn, taken once it has come; returns the slot, and
    /// whether the turn was taken. When the store fails (said once per
    /// request), what it could not do falls to this process's own gate.
    pub(super) async fn enter(self: &Arc<Self>, delay: Duration) -> (Option<(Arc<SharedGate>, i64)>, bool) {
        let poll = (delay / 2).clamp(Duration::from_millis(5), Duration::from_millis(50));
        let unavailable =
            |e: StoreError| tracing::warn!("{}: shared politeness unavailable ({e}); this worker keeps the limits for its own requests only", self.site);
        let slot = loop {
            match self.call(|s, g| s.gate_slot(&g.site, g.concurrency, g.lease)).await {
                Ok(Some(slot)) => break slot,
                Ok(None) => tokio::time::sleep(poll).await,
                Err(e) => {
                    unavailable(e);
                    return (None, false);
                }
            }
        };
        loop {
            match self.call(move |s, g| s.gate_turn(&g.site, delay)).await {
                Ok(None) => return (Some((self.clone(), slot)), true),
                Ok(Some(wait)) => tokio::time::sleep(wait).await,
                Err(e) => {
                    unavailable(e);
                    return (Some((self.clone(), slot)), false);
                }
            }
        }
    }

    /// Holds every worker's requests to the site back until `wait` from now.
    pub(super) fn hold(self: &Arc<Self>, wait: Duration) {
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let g = self.clone();
            rt.spawn_blocking(move || {
                if let Err(e) = g.store.lock().unwrap_or_else(|p| p.into_inner()).gate_hold(&g.site, wait) {
                    tracing::warn!("{}: cannot hold the other workers off ({e})", g.site);
                }
            });
        }
    }

    /// Gives a slot back (a dropped [`super::gate::Pass`]).
    pub(super) fn release(self: Arc<Self>, slot: i64) {
        // Dropped in async code: the store's call goes to the blocking pool.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn_blocking(move || {
                if let Err(e) = self.store.lock().unwrap_or_else(|p| p.into_inner()).gate_release(&self.site, slot) {
                    tracing::warn!("{}: cannot give back a shared request slot ({e}); it comes back when its lease runs out", self.site);
                }
            });
        }
    }
}

/// The connection this process's shared gates use on `state`, opened by
/// the first fetcher that shares its politeness and kept while any does: a
/// query or two per request does not need a connection per forum.
fn gate_store(state: &StateUrl) -> Result<Arc<Mutex<Store>>, StoreError> {
    static STORES: Mutex<Vec<(StateUrl, std::sync::Weak<Mutex<Store>>)>> = Mutex::new(Vec::new());
    let mut stores = STORES.lock().unwrap_or_else(|p| p.into_inner());
    stores.retain(|(_, s)| s.strong_count() > 0);
    if let Some(s) = stores.iter().filter(|(at, _)| at == state).find_map(|(_, s)| s.upgrade()) {
        return Ok(s);
    }
    let store = Store::connect(state)?;
    // A turn is taken when its commit returns; an fsync in between would
    // start the request late by however long the disk took.
    store.relax_durability()?;
    let store = Arc::new(Mutex::new(store));
    stores.push((state.clone(), Arc::downgrade(&store)));
    Ok(store)
}

impl Fetcher {
    /// Holds the site's delay and concurrency for every worker sharing the
    /// crawl state at `state` together (per-site slots and turns kept in the
    /// store, on a connection of this fetcher's own), not just for this
    /// process. `lease` is how long a slot stays taken once its worker stops
    /// renewing it (killed): the stage's lease keeper renews it meanwhile.
    pub fn share_politeness(mut self, state: &StateUrl, lease: Duration) -> Result<Fetcher, StoreError> {
        let store = gate_store(state)?;
        let core = Arc::get_mut(&mut self.core).expect("a new fetcher is not shared yet");
        let concurrency = core.site.politeness.concurrency;
        store.lock().unwrap_or_else(|p| p.into_inner()).gate_open(&core.site.id, concurrency)?;
        core.gate.shared = Some(Arc::new(SharedGate { store, site: core.site.id.clone(), concurrency, lease }));
        Ok(self)
    }
}
