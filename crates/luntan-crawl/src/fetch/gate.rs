//! The per-site gate: how many requests to one forum run at once and how
//! far apart they start, held off further by Retry-After and by a
//! slow-down after consecutive failures. In a shared crawl the turns and
//! slots come from the shared gate ([`super::shared`]) as well.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use luntan_core::site::Politeness;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::retry::MAX_BACKOFF;
use super::shared::SharedGate;

/// Consecutive transient failures before the whole site is slowed down.
const BREAKER_AFTER: u32 = 3;

/// Bounds concurrency and spacing of requests to one site.
#[derive(Debug)]
pub(super) struct Gate {
    slots: Semaphore,
    /// Earliest start of the next request: the last start plus the delay, or
    /// later while the site is held off (Retry-After, the breaker).
    next: Mutex<Instant>,
    delay: Mutex<Duration>,
    consecutive_failures: AtomicU32,
    /// The same limits held for every worker of a shared crawl together.
    pub(super) shared: Option<Arc<SharedGate>>,
}

/// What lets a request go: a slot of this process's gate and, in a shared
/// crawl, one of the site's shared slots, given back when dropped.
pub(super) struct Pass<'a> {
    _permit: SemaphorePermit<'a>,
    shared: Option<(Arc<SharedGate>, i64)>,
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        if let Some((gate, slot)) = self.shared.take() {
            gate.release(slot);
        }
    }
}

impl Gate {
    pub(super) fn new(p: &Politeness) -> Gate {
        Gate {
            slots: Semaphore::new(p.concurrency),
            next: Mutex::new(Instant::now()),
            delay: Mutex::new(p.delay),
            consecutive_failures: AtomicU32::new(0),
            shared: None,
        }
    }

    /// Waits for a free slot and for the request's turn.
    ///
    /// The turn is claimed only when it has come, from the clock at that
    /// moment: a hold that arrives while a request waits (a 429 on another
    /// request) still applies to it, and a late timer wake-up moves the next
    /// start later instead of eating into the delay.
    /// Returns the slot and the moment the turn was claimed.
    pub(super) async fn enter(&self) -> (Pass<'_>, Instant) {
        let permit = self.slots.acquire().await.expect("gate semaphore is never closed");
        let mut shared = None;
        if let Some(g) = &self.shared {
            // The shared turn spaces this worker's requests too; a local
            // turn on top would start some late and eat into the next
            // worker's delay. Holds reach the shared gate (`hold_off`).
            let delay = *self.delay.lock().expect("gate lock");
            let (slot, turn_taken) = g.enter(delay).await;
            if turn_taken {
                return (Pass { _permit: permit, shared: slot }, Instant::now());
            }
            shared = slot;
        }
        let permit = Pass { _permit: permit, shared };
        loop {
            let wait_until = {
                let delay = *self.delay.lock().expect("gate lock");
                let mut next = self.next.lock().expect("gate lock");
                let now = Instant::now();
                if *next <= now {
                    *next = now + delay;
                    Err(now)
                } else {
                    Ok(*next)
                }
            };
            match wait_until {
                Err(claimed) => return (permit, claimed),
                Ok(at) => tokio::time::sleep_until(at).await,
            }
        }
    }

    /// Holds every request to the site back until `wait` from now (every
    /// worker's, in a shared crawl).
    pub(super) fn hold_off(&self, wait: Duration) {
        let mut next = self.next.lock().expect("gate lock");
        *next = (*next).max(Instant::now() + wait);
        if let Some(g) = &self.shared {
            g.hold(wait);
        }
    }

    pub(super) fn raise_delay(&self, to: Duration) {
        let mut d = self.delay.lock().expect("gate lock");
        *d = (*d).max(to);
    }

    pub(super) fn success(&self) {
        self.consecutive_failures.store(0, Ordering::Relaxed);
    }

    /// Counts a transient failure; past [`BREAKER_AFTER`] in a row the whole
    /// site pauses, doubling each time, so a struggling forum gets air.
    pub(super) fn failure(&self, base: Duration) {
        let n = self.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= BREAKER_AFTER {
            let pause = base.saturating_mul(1 << (n - BREAKER_AFTER).min(6)).min(MAX_BACKOFF);
            tracing::debug!(failures = n, pause_ms = pause.as_millis() as u64, "slowing down");
            self.hold_off(pause);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_gate_spaces_request_starts_by_the_delay() {
        let p = Politeness { delay: Duration::from_millis(200), concurrency: 4, ..Politeness::default() };
        let gate = Arc::new(Gate::new(&p));
        let t0 = Instant::now();
        let mut starts = Vec::new();
        for _ in 0..4 {
            let (_permit, _) = gate.enter().await;
            starts.push(t0.elapsed());
        }
        for w in starts.windows(2) {
            assert!(w[1] - w[0] >= Duration::from_millis(200), "{starts:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_hold_reaches_a_request_already_waiting_for_its_turn() {
        let p = Politeness { delay: Duration::from_millis(100), concurrency: 2, ..Politeness::default() };
        let gate = Arc::new(Gate::new(&p));
        let t0 = Instant::now();
        let (first, _) = gate.enter().await;
        let g = gate.clone();
        // Its turn is at 100 ms; it is asleep until then when the hold comes.
        let second = tokio::spawn(async move {
            let (_permit, _) = g.enter().await;
            t0.elapsed()
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        gate.hold_off(Duration::from_secs(1));
        drop(first);
        let started = second.await.unwrap();
        assert!(started >= Duration::from_millis(1010), "started at {started:?}, inside the hold");
    }

    #[tokio::test(start_paused = true)]
    async fn consecutive_failures_pause_the_whole_site_longer_each_time_until_a_success() {
        let p = Politeness { delay: Duration::ZERO, concurrency: 4, ..Politeness::default() };
        let gate = Gate::new(&p);
        let base = Duration::from_millis(100);
        let wait_for_turn = || async {
            let t = Instant::now();
            let (_permit, _) = gate.enter().await;
            t.elapsed()
        };
        gate.failure(base);
        gate.failure(base);
        assert_eq!(wait_for_turn().await, Duration::ZERO, "two failures in a row are not yet a pattern");
        let mut pauses = Vec::new();
        for _ in 0..4 {
            gate.failure(base);
            pauses.push(wait_for_turn().await);
        }
        assert_eq!(pauses, [100, 200, 400, 800].map(Duration::from_millis), "each further failure doubles the pause");
        gate.success();
        gate.failure(base);
        assert_eq!(wait_for_turn().await, Duration::ZERO, "a success resets the count");
    }
}
