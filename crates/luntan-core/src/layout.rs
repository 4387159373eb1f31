//! Where things live under the data directory, and how files get there.
//!
//! ```text
//! data/
//!   luntan.db                                   crawl state (SQLite)
//!   sites/<site>.xml                            site files
//!   pages/<site>/board<B>/board<B>_<YYYYMMDD>/  one directory per board and save day (S3)
//!       article<T>.html  article<T>_p2.html …   raw bytes as served
//!       article<T>.http                         each page's URL, time, status and headers
//!       article<T>.xml                          normalized thread
//!   media/<ab>/<sha256>                         a picture or attachment, once per content (`luntan-media`)
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
use std::time::Duration;

use crate::ids::{SaveDate, SiteId, ThreadId, ThreadLoc};

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

    /// The file whose OS lock says a stage is running here.
    pub fn lock_path(&self, stage: crate::state::Stage) -> PathBuf {
        self.root.join(format!(".{stage}.lock"))
    }

    pub fn sites_dir(&self) -> PathBuf {
        self.root.join("sites")
    }

    pub fn pages_dir(&self, site: &SiteId) -> PathBuf {
        self.root.join("pages").join(site.as_str())
    }

    /// `pages/<site>/board<B>/board<B>_<YYYYMMDD>`.
    pub fn thread_dir(&self, loc: &ThreadLoc) -> PathBuf {
        let board = &loc.board;
        self.pages_dir(&loc.site).join(format!("board{board}")).join(format!("board{board}_{}", loc.saved))
    }

    /// Raw bytes of page `page` (1-based) of a thread, as served.
    pub fn html_path(&self, loc: &ThreadLoc, page: u32) -> PathBuf {
        let thread = &loc.thread;
        let name = if page <= 1 { format!("article{thread}.html") } else { format!("article{thread}_p{page}.html") };
        self.thread_dir(loc).join(name)
    }

    /// Raw JSON of page `page` (1-based) of a thread read in protocol mode
    /// (S4): `article<T>.json`, `article<T>_p2.json` ….
    pub fn json_path(&self, loc: &ThreadLoc, page: u32) -> PathBuf {
        let thread = &loc.thread;
        let name = if page <= 1 { format!("article{thread}.json") } else { format!("article{thread}_p{page}.json") };
        self.thread_dir(loc).join(name)
    }

    /// Raw JSON of comments page `page` (1-based) of a hybrid site's thread,
    /// whose article is HTML (`article<T>.html`): `article<T>_c1.json`,
    /// `article<T>_c2.json` ….
    pub fn comments_path(&self, loc: &ThreadLoc, page: u32) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}_c{}.json", loc.thread, page.max(1)))
    }

    /// A hybrid thread's comments pages as its last download kept them, one
    /// `<unix seconds>\t<url>` line per page (the server's clock of the
    /// fetch, which relative times are read against): how many `_c<N>.json`
    /// files belong to the thread, so a stray one from an earlier save of the
    /// same day is never read.
    pub fn comments_list_path(&self, loc: &ThreadLoc) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}.comments", loc.thread))
    }

    /// The HTTP heads of a hybrid thread's comments pages, as
    /// `article<T>.http` keeps the article's ([`crate::capture`]; `page` is
    /// the comments page's number): what an archive of them needs.
    pub fn comments_http_path(&self, loc: &ThreadLoc) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}_c.http", loc.thread))
    }

    /// When and from where each JSON page was fetched, one `<unix seconds>\t<url>`
    /// line per page: relative times ("3分钟前") are read against it, so
    /// extracting again gives the same times.
    pub fn fetched_path(&self, loc: &ThreadLoc) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}.fetched", loc.thread))
    }

    /// What download kept of each page's HTTP exchange (request URL, time,
    /// status and headers; see [`crate::capture`]), one JSON line a page.
    pub fn http_path(&self, loc: &ThreadLoc) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}.http", loc.thread))
    }

    /// The normalized XML of a thread.
    pub fn xml_path(&self, loc: &ThreadLoc) -> PathBuf {
        self.thread_dir(loc).join(format!("article{}.xml", loc.thread))
    }

    /// Where `luntan-media` keeps pictures and attachments.
    pub fn media_dir(&self) -> PathBuf {
        self.root.join("media")
    }

    /// `media/<first 2 hex>/<sha256>`: one file per content, whatever
    /// URLs and forums showed it; 256 directories keep each one small.
    pub fn media_path(&self, hash: &crate::ids::MediaHash) -> PathBuf {
        let hex = hash.as_str();
        self.media_dir().join(&hex[..2]).join(hex)
    }

    /// The forums with a `pages/<site>/` directory, sorted; directories
    /// whose names are not ids are skipped (nothing luntan wrote).
    pub fn page_sites(&self) -> Result<Vec<SiteId>, PathError> {
        let pages = self.root.join("pages");
        let mut sites = Vec::new();
        if !pages.is_dir() {
            return Ok(sites);
        }
        for e in fs::read_dir(&pages).map_err(PathError::at(&pages))? {
            let e = e.map_err(PathError::at(&pages))?;
            if let (true, Ok(site)) = (e.path().is_dir(), SiteId::parse(&e.file_name().to_string_lossy())) {
                sites.push(site);
            }
        }
        sites.sort();
        Ok(sites)
    }

    /// Every `article<T>.xml` of a forum, one per thread, sorted by thread:
    /// when a thread was saved on several days, the latest save wins. Found
    /// by walking the tree (for rebuilding an index without the database),
    /// so files whose names do not follow the layout are ignored.
    pub fn thread_xml_files(&self, site: &SiteId) -> Result<Vec<(ThreadId, PathBuf)>, PathError> {
        let root = self.pages_dir(site);
        if !root.is_dir() {
            return Err(PathError { path: root, source: io::Error::new(io::ErrorKind::NotFound, "no pages for this site") });
        }
        let mut latest: std::collections::BTreeMap<ThreadId, (SaveDate, PathBuf)> = Default::default();
        for board in sorted_dirs(&root)? {
            let Some(b) = name_of(&board).strip_prefix("board").map(str::to_owned) else { continue };
            for day in sorted_dirs(&board)? {
                let Some(saved) = name_of(&day).strip_prefix(&format!("board{b}_")).and_then(|d| SaveDate::parse(d).ok()) else { continue };
                for e in fs::read_dir(&day).map_err(PathError::at(&day))? {
                    let path = e.map_err(PathError::at(&day))?.path();
                    let name = name_of(&path);
                    let Some(thread) = name.strip_prefix("article").and_then(|n| n.strip_suffix(".xml")).and_then(|t| ThreadId::parse(t).ok()) else {
                        continue;
                    };
                    if path.is_file() && latest.get(&thread).is_none_or(|(d, _)| saved >= *d) {
                        latest.insert(thread, (saved, path));
                    }
                }
            }
        }
        Ok(latest.into_iter().map(|(t, (_, p))| (t, p)).collect())
    }

    /// Removes the temp files a killed writer left for final files ending in
    /// `.{ext}` anywhere under `pages/`; returns how many. See [`sweep_temp_files`].
    pub fn sweep_temp_files(&self, ext: &str) -> Result<usize, PathError> {
        self.sweep_stale_temp_files(ext, Duration::ZERO)
    }

    /// [`DataDir::sweep_temp_files`], but only files last written at least
    /// `age` ago: workers sharing the directory cannot tell a dead writer's
    /// file from a live one's on another host, but no live writer leaves a
    /// temp file untouched that long.
    pub fn sweep_stale_temp_files(&self, ext: &str, age: Duration) -> Result<usize, PathError> {
        let pages = self.root.join("pages");
        sweep_stale(&pages, &format!(".{ext}."), age).map_err(PathError::at(&pages))
    }

    /// Removes the temp files a killed `luntan-media` left under `media/`
    /// (`<sha256>.<pid>.luntan-tmp`) last written at least `age` ago: it
    /// takes no lock, so a younger one may be another run's, still writing.
    pub fn sweep_media_temp_files(&self, age: Duration) -> Result<usize, PathError> {
        let media = self.media_dir();
        sweep_stale(&media, ".", age).map_err(PathError::at(&media))
    }
}

fn name_of(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, PathError> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).map_err(PathError::at(dir))? {
        let path = e.map_err(PathError::at(dir))?.path();
        if path.is_dir() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// An I/O error on a path under the data or index directory.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct PathError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl PathError {
    pub fn at(path: &Path) -> impl Fn(io::Error) -> PathError + '_ {
        move |source| PathError { path: path.to_owned(), source }
    }
}

/// The layout of the index directory: one tantivy index per forum.
#[derive(Debug, Clone)]
pub struct IndexDir {
    root: PathBuf,
}

impl IndexDir {
    pub fn new(root: impl Into<PathBuf>) -> IndexDir {
        IndexDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `index/<site>.index`, the one searches open.
    pub fn site_index(&self, site: &SiteId) -> PathBuf {
        self.root.join(format!("{site}.index"))
    }

    /// Where a rebuild writes, and where the replaced index waits to be
    /// removed; neither name ends in `.index`, so searches never open them.
    pub fn rebuild_paths(&self, site: &SiteId) -> (PathBuf, PathBuf) {
        (self.root.join(format!("{site}.index.rebuilding")), self.root.join(format!("{site}.index.old")))
    }
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
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file written as [`write_atomic`] writes one, for output too large to
/// hold in memory (an export): written through a temporary sibling, and
/// published under its name only by [`AtomicFile::commit`]. Dropped
/// uncommitted (an error, a stop), it removes the temporary file and
/// leaves whatever `path` held before.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
    published: bool,
}

impl AtomicFile {
    /// Creates the temporary sibling of `path` (and missing parent directories).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let dir = parent_dir(path)?;
        fs::create_dir_all(dir)?;
        let file_name = path.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        // The pid keeps two processes that race on one file from sharing a temp file.
        let tmp = dir.join(format!("{}.{}{TEMP_SUFFIX}", file_name.to_string_lossy(), std::process::id()));
        let file = File::create(&tmp)?;
        Ok(AtomicFile { path: path.to_owned(), tmp, file: Some(file), published: false })
    }

    /// Where the file is being written until [`AtomicFile::commit`].
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// fsyncs the file, renames it over its final name, fsyncs the directory.
    pub fn commit(self) -> io::Result<()> {
        sync_dir(&self.commit_leaving_dir()?)
    }

    /// [`AtomicFile::commit`] but for the directory's fsync, which it leaves
    /// to the caller and returns the directory for: files published
    /// together (a batch of downloaded threads, mostly in one directory)
    /// need one [`sync_dir`] after the last rename, not one each. Until the
    /// caller's `sync_dir`, the file may be visible but not yet durable.
    pub fn commit_leaving_dir(mut self) -> io::Result<PathBuf> {
        let file = self.file.take().expect("an AtomicFile is committed once");
        file.sync_all()?;
        drop(file);
        fs::rename(&self.tmp, &self.path)?;
        self.published = true;
        Ok(parent_dir(&self.path)?.to_owned())
    }
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> io::Result<&Path> {
    match path.parent() {
        Some(d) if d.as_os_str().is_empty() => Ok(Path::new(".")),
        Some(d) => Ok(d),
        None => Err(io::Error::new(io::ErrorKind::InvalidInput, "path has no parent")),
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed yet").write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed yet").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Unless it became the final file, the temp file goes.
        if !self.published {
            drop(self.file.take());
            let _ = fs::remove_file(&self.tmp);
        }
    }
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
    sweep_stale(dir, &format!(".{ext}."), Duration::ZERO)
}

/// Removes the temp files under `dir` whose names hold `infix` (the final
/// name's `.ext.`) and are at least `age` old (any age when zero).
fn sweep_stale(dir: &Path, infix: &str, age: Duration) -> io::Result<usize> {
    let mut n = 0;
    if !dir.exists() {
        return Ok(0);
    }
    // Workers sharing the directory write, publish (rename) and sweep
    // temp files at the same time: one that is gone by the time it is
    // looked at or removed was finished or swept by another, not an error.
    let gone = |r: io::Result<()>| match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
        Ok(()) => Ok(true),
    };
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let entries = match fs::read_dir(&d) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && d != dir => continue,
            r => r?,
        };
        for entry in entries {
            let entry = entry?;
            let Ok(ty) = entry.file_type() else { continue };
            if ty.is_dir() {
                stack.push(entry.path());
            } else if entry.file_name().to_string_lossy().ends_with(TEMP_SUFFIX) && entry.file_name().to_string_lossy().contains(infix) {
                if !age.is_zero() {
                    let modified = match entry.metadata().and_then(|m| m.modified()) {
                        Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                        r => r?,
                    };
                    if modified.elapsed().unwrap_or_default() < age {
                        continue;
                    }
                }
                if gone(fs::remove_file(entry.path()))? {
                    n += 1;
                }
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::BoardId;

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
        let loc = ThreadLoc {
            site: SiteId::parse("dz").unwrap(),
            board: BoardId::parse("2").unwrap(),
            thread: ThreadId::parse("77").unwrap(),
            saved: SaveDate::parse("20261130").unwrap(),
        };
        assert_eq!(d.html_path(&loc, 1), PathBuf::from("data/pages/dz/board2/board2_20261130/article77.html"));
        assert_eq!(d.html_path(&loc, 3), PathBuf::from("data/pages/dz/board2/board2_20261130/article77_p3.html"));
        assert_eq!(d.xml_path(&loc), PathBuf::from("data/pages/dz/board2/board2_20261130/article77.xml"));
        assert_eq!(IndexDir::new("index").site_index(&loc.site), PathBuf::from("index/dz.index"));
    }

    #[test]
    fn thread_files_are_found_by_the_layout_and_the_latest_save_wins() {
        let t = tempfile::tempdir().unwrap();
        let d = DataDir::new(t.path());
        let site = SiteId::parse("dz").unwrap();
        let loc = |thread: &str, day: &str| ThreadLoc {
            site: site.clone(),
            board: BoardId::parse("2").unwrap(),
            thread: ThreadId::parse(thread).unwrap(),
            saved: SaveDate::parse(day).unwrap(),
        };
        for l in [loc("7", "20261129"), loc("7", "20261130"), loc("8", "20261129")] {
            write_atomic(&d.xml_path(&l), b"<thread/>").unwrap();
        }
        fs::write(d.thread_dir(&loc("8", "20261129")).join("articlex y.xml"), b"not ours").unwrap();
        fs::create_dir_all(d.pages_dir(&site).join("notaboard")).unwrap();
        let found = d.thread_xml_files(&site).unwrap();
        assert_eq!(
            found,
            vec![(ThreadId::parse("7").unwrap(), d.xml_path(&loc("7", "20261130"))), (ThreadId::parse("8").unwrap(), d.xml_path(&loc("8", "20261129")))]
        );
        fs::create_dir_all(t.path().join("pages/..bad")).unwrap();
        assert_eq!(d.page_sites().unwrap(), vec![site]);
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

    #[test]
    fn an_atomic_file_dropped_uncommitted_leaves_the_old_file_and_no_temp() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("out.warc.gz");
        write_atomic(&p, b"old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"half of the new").unwrap();
        assert!(f.temp_path().exists());
        drop(f);
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1, "the temp file is gone");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1);
    }
}
