//! What a discover round keeps as it goes, whichever way it reads the
//! forum (its HTML lists in `discover`, its JSON in `protocol`): the
//! report it ends with and the Bloom filter of threads already seen.

use luntan_core::store::{Listing, NewThread, Store, StoreError};

/// What discovering one site did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct DiscoverReport {
    pub site: String,
    pub boards: usize,
    pub list_pages: usize,
    pub new_threads: usize,
    /// Known threads whose list row showed news (or, on a hybrid site,
    /// whose comment count grew); re-queued.
    pub updated_threads: usize,
    /// Hybrid sites: saved articles whose comment count was asked for.
    pub comment_checks: usize,
    /// Hybrid sites: saved articles not asked this round, beyond
    /// `<comments recheck>` (the least recently active).
    pub comment_checks_left: usize,
    /// Thread rows seen on list pages that were already known and unchanged.
    pub known_threads: usize,
    /// Boards not due for a visit this round.
    pub boards_skipped: usize,
    /// Thread links a topic focus left out this round (first seen).
    pub off_topic: usize,
    /// Links queued from earlier rounds' skipped ones (threshold lowered).
    pub promoted: usize,
    /// Requests made (robots.txt included).
    pub requests: u64,
    /// Bytes of the bodies received (after decompression).
    pub bytes: u64,
    /// Home and list pages the forum answered 304 Not Modified: unchanged
    /// since the last round (see `discover::walk_board`).
    pub not_modified: usize,
    /// Links whose ids were refused (path tricks, odd bytes).
    pub refused_links: usize,
    /// The first of them and why (`URL: id "…": why`), said once a site.
    pub refused_example: Option<String>,
    /// Thread rows the Bloom filter showed to be new, inserted without a lookup.
    pub lookups_saved: usize,
    /// One line per page that could not be fetched.
    pub errors: Vec<String>,
    /// Boards left unwalked or mid-walk because the round was stopped.
    pub boards_interrupted: usize,
    /// Another worker sharing the crawl was discovering this forum, so this
    /// one left it alone (nothing else in the report is set).
    pub busy: bool,
}

/// "Seen this thread?" before the database is asked (S2 de-duplicates
/// links with a Bloom filter). A miss is certain, so a new thread is
/// inserted without a lookup; a hit may be false, so it still goes to the
/// database. Filled from the store once per round, then kept current.
pub struct Seen {
    filter: fastbloom::AtomicBloomFilter,
}

impl Seen {
    /// A filter holding every thread id the store knows for `site`, with room to grow.
    pub fn load(store: &Store, site: &str) -> Result<Seen, StoreError> {
        let mut ids = Vec::new();
        store.for_each_known_thread(site, |id| ids.push(id.to_owned()))?;
        // 1 in 1000 false positives, sized for twice what is known (a new
        // forum's first round fills it from nothing). A fixed seed makes
        // runs repeatable; a false hit only costs the lookup it did not save.
        let filter = fastbloom::AtomicBloomFilter::with_false_pos(0.001).seed(&0x6C75_6E74_616E).expected_items((ids.len() * 2).max(10_000));
        for id in &ids {
            filter.insert(id.as_str());
        }
        Ok(Seen { filter })
    }

    pub fn maybe_seen(&self, thread: &str) -> bool {
        self.filter.contains(thread)
    }

    pub fn insert(&self, thread: &str) {
        self.filter.insert(thread);
    }

    /// Records list rows, looking up only those the filter may have seen.
    pub(crate) fn record(&self, store: &mut Store, rows: &[NewThread]) -> Result<(Vec<Listing>, usize), StoreError> {
        let hints: Vec<bool> = rows.iter().map(|t| self.maybe_seen(&t.thread)).collect();
        let out = store.record_listings_hinted(rows, &hints)?;
        for t in rows {
            self.insert(&t.thread);
        }
        Ok(out)
    }
}
