//! Why a thread (or the whole stage) could not be extracted.

use std::path::PathBuf;

use luntan_core::ids::{SiteId, ThreadId};
use luntan_core::lock::LockError;
use luntan_core::store::StoreError;

/// Why a thread (or the stage) could not be extracted. Displays as one line
/// that names the file; per-thread errors become the row's `fail_reason`.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: no posts found (does the site file's thread body rule match this page?)", path.display())]
    NoPosts { path: PathBuf },
    #[error("{}: not written: {message}", path.display())]
    Verify { path: PathBuf, message: String },
    #[error("{}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    /// A protocol-mode page that is not what the site file says (S4).
    #[error("{}: {why}", path.display())]
    Json { path: PathBuf, why: String },
    #[error("thread {site}/{thread}: {why}")]
    BadRow { site: SiteId, thread: ThreadId, why: &'static str },
    #[error("{}: no site file for --site {site:?}", sites_dir.display())]
    UnknownSite { site: SiteId, sites_dir: PathBuf },
    #[error("cannot start worker threads: {message}")]
    Threads { message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A local fault (a full disk, a permission) stopped the run.
    #[error("{0}; stopped: this machine's fault, not the forum's, so no thread was marked failed (run extract again once it is fixed)")]
    Local(Box<ExtractError>),
}

impl ExtractError {
    /// Whether the error is this machine's (see [`luntan_core::layout::is_local_fault`]).
    pub fn is_local(&self) -> bool {
        match self {
            ExtractError::Read { source, .. } | ExtractError::Write { source, .. } => luntan_core::layout::is_local_fault(source),
            _ => false,
        }
    }
}
