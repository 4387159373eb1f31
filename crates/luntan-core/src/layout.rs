//! Where things live under the data directory, and how files get there.
//!
//! ```text
//! data/
//!   luntan.db                                   crawl state (SQLite)
//!   sites/<site>.xml                            site files
//!   pages/<site>/board<B>/board<B>_<YYYYMMDD>/  one directory per board and save day (S3)
//!       article<T>.html  article<T>_p2.html …   raw bytes as served
//!       article<T>.xml                          normalized thread
//! index/<site>.index/                           one tantivy index per forum
//! ```
//!
//! Paths are derived from the database row (site, board, save date, thread),
//! never found by walking directories, as S3 prescribes. Every file is
//! published with [`write_atomic`]: a reader sees the old file or the whole
//! new one, never a part.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Suffix of files being written; a crash can leave one behind, never under a final name.
pub const TEMP_SUFFIX: &str = ".luntan-tmp";

/// The layout of one data directory.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn db_path(&self) -> PathBuf {
        self.root.join("luntan.db")
    }

    pub fn sites_dir(&self) -> PathBuf {
        self.root.join("sites")
    }

    pub fn pages_dir(&self, site: &str) -> PathBuf {
        self.root.join("pages").join(site)
    }

    /// `pages/<site>/board<B>/board<B>_<YYYYMMDD>`. Ids must have passed
    /// [`crate::ids::check_id`]; `save_date` is eight digits.
    pub fn thread_dir(&self, site: &str, board: &str, save_date: &str) -> PathBuf {
        debug_assert!(save_date.len() == 8 && save_date.bytes().all(|b| b.is_ascii_digit()));
        self.pages_dir(site).join(format!("board{board}")).join(format!("board{board}_{save_date}"))
    }

    /// Raw HTML of page `page` (1-based) of a thread.
    pub fn html_path(&self, site: &str, board: &str, save_date: &str, thread: &str, page: u32) -> PathBuf {
        let name = if page <= 1 { format!("article{thread}.html") } else { format!("article{thread}_p{page}.html") };
        self.thread_dir(site, board, save_date).join(name)
    }

    /// The normalized XML of a thread.
    pub fn xml_path(&self, site: &str, board: &str, save_date: &str, thread: &str) -> PathBuf {
        self.thread_dir(site, board, save_date).join(format!("article{thread}.xml"))
    }
}

/// `index/<site>.index`.
pub fn index_path(index_dir: &Path, site: &str) -> PathBuf {
    index_dir.join(format!("{site}.index"))
}

/// Whether an I/O error is this machine's fault rather than the thread's: a
/// full disk or quota, a read-only file system, a permission. A stage meeting
/// one stops with one line and marks no thread failed, since retrying the
/// thread would fail the same way until someone frees space or fixes the
/// permissions, and the forum is not to blame.
pub fn is_local_fault(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(e.kind(), StorageFull | QuotaExceeded | ReadOnlyFilesystem | PermissionDenied | FileTooLarge)
}

/// Writes `bytes` to `path` so that the file appears whole or not at all:
/// write a temporary sibling, fsync it, rename it over `path`, fsync the
/// directory. Creates missing parent directories.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    fs::create_dir_all(dir)?;
    let file_name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    // The pid keeps two processes that race on one file from sharing a temp file.
    let tmp = dir.join(format!("{}.{}{TEMP_SUFFIX}", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename or a new entry in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Removes temporary files a killed writer left under `dir` for final files
/// ending in `.{ext}` (`html` or `xml`); returns how many. Each stage sweeps
/// only its own kind, under its own lock, so it never deletes a temp file
/// another stage is writing at that moment.
pub fn sweep_temp_files(dir: &Path, ext: &str) -> io::Result<usize> {
    let infix = format!(".{ext}.");
    let mut n = 0;
    if !dir.exists() {
        return Ok(0);
    }
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let ty = entry.file_type()?;
            if ty.is_dir() {
                stack.push(entry.path());
            } else if entry.file_name().to_string_lossy().ends_with(TEMP_SUFFIX) && entry.file_name().to_string_lossy().contains(&infix) {
                fs::remove_file(entry.path())?;
                n += 1;
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_disks_and_permissions_are_local_faults_a_missing_file_is_not() {
        assert!(is_local_fault(&io::Error::from_raw_os_error(28)), "ENOSPC");
        assert!(is_local_fault(&io::Error::from(io::ErrorKind::PermissionDenied)));
        assert!(!is_local_fault(&io::Error::from(io::ErrorKind::NotFound)));
        assert!(!is_local_fault(&io::Error::from(io::ErrorKind::InvalidData)));
    }

    #[test]
    fn paths_follow_the_three_level_layout() {
        let d = DataDir::new("data");
        assert_eq!(d.html_path("dz", "2", "20261130", "77", 1), PathBuf::from("data/pages/dz/board2/board2_20261130/article77.html"));
        assert_eq!(d.html_path("dz", "2", "20261130", "77", 3), PathBuf::from("data/pages/dz/board2/board2_20261130/article77_p3.html"));
        assert_eq!(d.xml_path("dz", "2", "20261130", "77"), PathBuf::from("data/pages/dz/board2/board2_20261130/article77.xml"));
        assert_eq!(index_path(Path::new("index"), "dz"), PathBuf::from("index/dz.index"));
    }

    #[test]
    fn atomic_write_replaces_whole_and_leaves_no_temp() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a/b/c.html");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two two");
        assert_eq!(sweep_temp_files(t.path(), "html").unwrap(), 0);
        fs::write(t.path().join("a/x.html.1.luntan-tmp"), b"half").unwrap();
        fs::write(t.path().join("a/x.xml.1.luntan-tmp"), b"half").unwrap();
        assert_eq!(sweep_temp_files(t.path(), "html").unwrap(), 1);
        assert!(t.path().join("a/x.xml.1.luntan-tmp").exists(), "another stage's temp file is left alone");
        assert_eq!(sweep_temp_files(t.path(), "xml").unwrap(), 1);
    }
}
