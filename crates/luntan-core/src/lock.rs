//! One copy of a stage per data directory at a time.
//!
//! Two `luntan-download` processes on one data directory would fetch the
//! same rows twice; instead the second one is refused at once with a clear
//! message. The lock is an OS file lock, so a SIGKILLed holder releases it.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;

use crate::layout::DataDir;
use crate::state::Stage;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}: another luntan-{stage} is already running on this data directory", path.display())]
    Busy { path: PathBuf, stage: Stage },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Held while a stage runs; released on drop or process death.
#[derive(Debug)]
pub struct StageLock {
    _file: File,
}

impl StageLock {
    pub fn acquire(data: &DataDir, stage: Stage) -> Result<StageLock, LockError> {
        let path = data.lock_path(stage);
        let io = |source| LockError::Io { path: path.clone(), source };
        std::fs::create_dir_all(data.root()).map_err(io)?;
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(StageLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Busy { path, stage }),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }
}
