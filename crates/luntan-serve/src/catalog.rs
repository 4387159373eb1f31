//! The indexes as the last commit left them. `luntan-index` commits by
//! rewriting `meta.json` (a new file, renamed into place), and a new forum is
//! a new `<site>.index` directory; each request compares that signature with
//! the one the open catalog was made from and reopens on a difference. A
//! few `stat` calls per request are far below a search's cost, and no
//! watcher thread or polling delay stands between a commit and the next search.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use luntan_core::ids::SiteId;
use luntan_search::Catalog;

use crate::error::ApiError;

/// Each index directory with its `meta.json`'s (inode, size, mtime).
type Signature = Vec<(OsString, Option<(u64, u64, std::time::SystemTime)>)>;

fn signature(dir: &Path) -> std::io::Result<Signature> {
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        if !name.to_string_lossy().ends_with(".index") {
            continue;
        }
        let meta = std::fs::metadata(e.path().join("meta.json")).ok();
        #[cfg(unix)]
        let ino = |m: &std::fs::Metadata| m.ino();
        #[cfg(not(unix))]
        let ino = |_: &std::fs::Metadata| 0u64;
        out.push((name, meta.and_then(|m| Some((ino(&m), m.len(), m.modified().ok()?)))));
    }
    out.sort();
    Ok(out)
}

/// A [`Catalog`] that follows the index directory.
pub struct LiveCatalog {
    dir: PathBuf,
    current: Mutex<Option<(Signature, Arc<Catalog>)>>,
}

impl LiveCatalog {
    pub fn new(dir: &Path) -> LiveCatalog {
        LiveCatalog { dir: dir.to_owned(), current: Mutex::new(None) }
    }

    /// The catalog as of the latest commit. Blocking (file system, index
    /// opening): call from a blocking context.
    pub fn get(&self) -> Result<Arc<Catalog>, ApiError> {
        let sig = signature(&self.dir).map_err(|e| ApiError::Unavailable(format!("{}: {e}", self.dir.display())))?;
        // One reopen at a time; the others wait for it rather than opening
        // the same indexes again.
        let mut cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, c)) = cur.as_ref() {
            if *s == sig {
                return Ok(c.clone());
            }
        }
        let catalog = Arc::new(Catalog::open(&self.dir)?);
        *cur = Some((sig, catalog.clone()));
        Ok(catalog)
    }

    /// [`LiveCatalog::get`], refusing with 503 when no index can be searched.
    pub fn searchable(&self) -> Result<Arc<Catalog>, ApiError> {
        let c = self.get()?;
        if c.is_empty() {
            let why = c.skipped().iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
            return Err(ApiError::Unavailable(if why.is_empty() { format!("{}: no <site>.index yet (run luntan-index)", self.dir.display()) } else { why }));
        }
        Ok(c)
    }
}

/// Runs blocking work (index reads, SQLite, files) off the async workers.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, ApiError> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::Internal(format!("worker: {e}")))?
}

/// 503 when one of the asked-for forums has an index that would not open.
pub fn check_skipped(c: &Catalog, sites: &[SiteId]) -> Result<(), ApiError> {
    for e in c.skipped() {
        if let luntan_search::SearchError::Open { path, .. } | luntan_search::SearchError::Schema { path } = e {
            let name = path.file_name().map(|n| n.to_string_lossy().trim_end_matches(".index").to_string()).unwrap_or_default();
            if sites.iter().any(|s| *s == name) {
                return Err(ApiError::Unavailable(e.to_string()));
            }
        }
    }
    Ok(())
}
