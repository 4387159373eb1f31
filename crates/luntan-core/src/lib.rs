//! luntan's shared vocabulary, used by every stage.
//!
//! - [`site::Site`]: a forum as its site file (`data/sites/<id>.xml`) describes it.
//! - [`state::ThreadState`]: the one thread state machine (S3's `visitedFlag`).
//! - [`store::Store`]: crawl state in SQLite (`data/luntan.db`) or PostgreSQL, shared by workers under leases.
//! - [`layout::DataDir`]: where pages, XML and indexes live; [`layout::write_atomic`].
//! - [`doc::ThreadDoc`]: the normalized thread XML; [`doc::ThreadJson`], its one JSON shape.
//! - [`capture::PageCapture`]: each saved page's URL, time, status and headers (`article<T>.http`).
//! - [`contract::StageRun`]: what every stage does the same way (lock, temp-file sweep, stop, progress).
//! - [`escape`]: the one HTML/XML escaper, for every writer of markup.
//! - [`ids`]: the checked ids and save date that name files ([`ids::ThreadLoc`]).
//!
//! ```
//! use luntan_core::state::{Stage, ThreadState};
//! assert_eq!(Stage::Download.output(), ThreadState::Saved);
//! assert_eq!(ThreadState::Saved.code(), 1);
//! assert!(ThreadState::Saved.can_become(ThreadState::Extracted));
//! ```

pub mod capture;
pub mod contract;
pub mod dates;
pub mod doc;
pub mod escape;
pub mod ids;
pub mod layout;
pub mod lock;
pub mod site;
pub mod state;
pub mod store;

pub use contract::{Progress, StageRun, Stop};
pub use doc::{Post, ThreadDoc};
pub use layout::{DataDir, IndexDir};
pub use site::Site;
pub use state::{Stage, ThreadState};
pub use store::Store;
