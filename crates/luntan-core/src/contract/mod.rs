//! The stage contract: what every stage does the same way, so that a
//! program calling a stage's library function gets what the binary gives.
//!
//! A stage begins with [`StageRun::begin`], which holds the stage's lock on
//! the data directory (one copy per directory) and sweeps the temp files a
//! killed run of the same stage left behind. The stage's library function
//! takes the `StageRun` as proof of both, asks [`StageRun::stopped`] between
//! records (finishing the one in flight, so a stop loses nothing) and reports
//! through [`Progress`]. The binaries add only a terminal: a progress bar
//! and [`Stop::on_ctrl_c`].
//!
//! ```
//! use luntan_core::contract::{StageRun, Stop};
//! use luntan_core::{DataDir, Stage};
//! let t = tempfile::tempdir().unwrap();
//! let run = StageRun::begin(&DataDir::new(t.path()), Stage::Extract, Stop::new()).unwrap();
//! assert!(!run.stopped());
//! run.stop().set();
//! assert!(run.stopped());
//! ```

mod session;

pub use session::{ClaimSession, Hand, Next, StageReport, ThreadFailure};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::layout::{DataDir, PathError};
use crate::lock::{LockError, StageLock};
use crate::state::Stage;
use crate::store::Claims;

/// How old a temp file must be for a worker sharing the data directory to
/// take it for a dead writer's (see [`StageRun::begin_shared`]).
pub const STALE_TEMP_FILE: std::time::Duration = std::time::Duration::from_secs(3600);

/// A request to stop, shared by a stage and whoever may stop it.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A stop nobody has asked for yet.
    pub fn new() -> Stop {
        Stop::default()
    }

    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A stop that the first Ctrl-C (SIGINT, SIGTERM on Unix; Ctrl-C and
    /// Ctrl-Break on Windows) sets, so the stage finishes the work in flight
    /// and stops; a second one ends the process at once (files are published
    /// atomically, so even that loses nothing already done). Installs the
    /// process's one handler: call it once, from a binary.
    pub fn on_ctrl_c(stage: &'static str) -> Stop {
        let stop = Stop::new();
        let flag = stop.clone();
        let result = ctrlc::set_handler(move || {
            if flag.0.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("{stage}: stopping after the work in flight (Ctrl-C again to abort)");
        });
        if let Err(e) = result {
            eprintln!("{stage}: cannot catch Ctrl-C ({e}); it will end the stage at once");
        }
        stop
    }
}

/// How far a stage has got. A stage calls `grow` as it learns of work (once
/// per site, say, as sites run side by side) and `advance` per record done,
/// whatever its outcome.
pub trait Progress: Send + Sync {
    fn grow(&self, n: u64);
    fn advance(&self, n: u64);
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn grow(&self, _: u64) {}
    fn advance(&self, _: u64) {}
}

/// Why a stage could not begin.
#[derive(Debug, thiserror::Error)]
pub enum BeginError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("cleaning temp files a killed run left: {0}")]
    Sweep(#[from] PathError),
}

/// One run of one stage over one data directory; see the module docs.
pub struct StageRun {
    stage: Stage,
    data: DataDir,
    stop: Stop,
    progress: Arc<dyn Progress>,
    swept: usize,
    claims: Claims,
    /// `None` for a worker sharing the directory ([`StageRun::begin_shared`]).
    lock: Option<StageLock>,
}

impl std::fmt::Debug for StageRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageRun").field("stage", &self.stage).field("data", &self.data).field("swept", &self.swept).finish_non_exhaustive()
    }
}

impl StageRun {
    /// Takes `stage`'s lock on `data` and sweeps what a killed run of the
    /// same stage left (download: page temp files; extract: XML temp files).
    /// Each stage sweeps only its own kind, under its own lock, so it never
    /// deletes a file another stage is writing at that moment.
    pub fn begin(data: &DataDir, stage: Stage, stop: Stop) -> Result<StageRun, BeginError> {
        let lock = StageLock::acquire(data, stage)?;
        let mut swept = 0;
        for ext in stage.temp_file_kinds() {
            swept += data.sweep_temp_files(ext)?;
        }
        Ok(StageRun { stage, data: data.clone(), stop, progress: Arc::new(Silent), swept, claims: Claims::default(), lock: Some(lock) })
    }

    /// Begins `stage` as one of several workers on `data` (other processes,
    /// or other hosts on a shared file system): no lock, since the workers
    /// claim their threads from the store under leases instead, and only
    /// temp files older than [`STALE_TEMP_FILE`] are swept, since a younger
    /// one may be another worker's file in flight.
    pub fn begin_shared(data: &DataDir, stage: Stage, stop: Stop) -> Result<StageRun, BeginError> {
        let mut swept = 0;
        for ext in stage.temp_file_kinds() {
            swept += data.sweep_stale_temp_files(ext, STALE_TEMP_FILE)?;
        }
        Ok(StageRun { stage, data: data.clone(), stop, progress: Arc::new(Silent), swept, claims: Claims::default(), lock: None })
    }

    /// Takes threads in batches of `claims.batch` under leases of `claims.lease` from now on.
    pub fn with_claims(mut self, claims: Claims) -> StageRun {
        self.claims = claims;
        self
    }

    /// How this run's workers claim their threads.
    pub fn claims(&self) -> Claims {
        self.claims
    }

    /// Whether other workers may run this stage on the same data at once.
    pub fn is_shared(&self) -> bool {
        self.lock.is_none()
    }

    /// Stops when `stop` is set, from now on.
    pub fn with_stop(mut self, stop: Stop) -> StageRun {
        self.stop = stop;
        self
    }

    /// Reports progress to `progress` from now on.
    pub fn with_progress(mut self, progress: Arc<dyn Progress>) -> StageRun {
        self.progress = progress;
        self
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    pub fn data(&self) -> &DataDir {
        &self.data
    }

    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// Whether to stop before the next record.
    pub fn stopped(&self) -> bool {
        self.stop.is_set()
    }

    pub fn progress(&self) -> &dyn Progress {
        &*self.progress
    }

    /// Temp files swept when the run began.
    pub fn swept(&self) -> usize {
        self.swept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_holds_the_lock_and_sweeps_only_its_own_kind() {
        let t = tempfile::tempdir().unwrap();
        let data = DataDir::new(t.path());
        let day = t.path().join("pages/dz/board2/board2_20261130");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("article7.html.9.luntan-tmp"), b"half").unwrap();
        std::fs::write(day.join("article7.fetched.9.luntan-tmp"), b"half").unwrap();
        std::fs::write(day.join("article7.xml.9.luntan-tmp"), b"half").unwrap();
        let begin = |stage| StageRun::begin(&data, stage, Stop::new());
        let download = begin(Stage::Download).unwrap();
        assert_eq!(download.swept(), 2, "a killed download's page and fetch-clock temp files");
        assert!(day.join("article7.xml.9.luntan-tmp").exists(), "extract's temp file is extract's to sweep");
        let busy = begin(Stage::Download).unwrap_err();
        assert!(matches!(busy, BeginError::Lock(LockError::Busy { .. })), "{busy:?}");
        assert!(busy.to_string().contains("another luntan-download"), "{busy}");
        assert_eq!(begin(Stage::Extract).unwrap().swept(), 1);
        drop(download);
        begin(Stage::Download).unwrap();
    }
}
