//! What the API and the pages read from the data directory: the crawl
//! database (thread rows, board titles) and the thread XML, ids checked
//! before any file is named.

use luntan_core::ids::{SiteId, ThreadId};
use luntan_core::store::ThreadRow;
use luntan_core::{Store, ThreadDoc, ThreadState};

use crate::error::ApiError;

/// Board titles by (site, board), from the crawl database (the index keeps
/// only board ids); empty when the database cannot be read.
pub fn board_titles(st: &crate::AppState, sites: &[&str]) -> std::collections::HashMap<(String, String), String> {
    let mut out = std::collections::HashMap::new();
    let Ok(store) = open_store(st) else { return out };
    let mut seen: Vec<&str> = Vec::new();
    for &site in sites {
        if seen.contains(&site) {
            continue;
        }
        seen.push(site);
        for b in store.boards(site).unwrap_or_default() {
            if let Some(t) = b.title.filter(|t| !t.trim().is_empty()) {
                out.insert((site.to_string(), b.board.to_string()), t);
            }
        }
    }
    out
}

/// The site and thread a request's path names, checked where the request
/// arrives: a path that holds no ids names no thread.
pub fn thread_ids(site: &str, id: &str) -> Result<(SiteId, ThreadId), ApiError> {
    match (SiteId::parse(site), ThreadId::parse(id)) {
        (Ok(site), Ok(id)) => Ok((site, id)),
        _ => Err(no_thread(site, id)),
    }
}

fn no_thread(site: &str, id: &str) -> ApiError {
    ApiError::NotFound(format!("no thread {site}/{id}"))
}

/// A thread's row and its parsed XML. Every path comes from
/// [`luntan_core::DataDir`] and checked ids, so no request names a file
/// outside the data directory.
pub fn load_thread(st: &crate::AppState, site: &SiteId, id: &ThreadId) -> Result<(ThreadRow, ThreadDoc), ApiError> {
    let unknown = || no_thread(site, id);
    let row = thread_row(st, site, id)?.ok_or_else(unknown)?;
    if !matches!(row.state, ThreadState::Extracted | ThreadState::Indexed) {
        return Err(unknown());
    }
    // The row's board and save date are checked ids too, so the path stays under the data directory.
    let loc = row.saved_location().ok_or_else(unknown)?;
    let path = st.data.xml_path(&loc);
    let xml = std::fs::read_to_string(&path).map_err(|_| unknown())?;
    let doc = ThreadDoc::from_xml(&xml).map_err(|e| ApiError::Internal(format!("{}: {e}", path.display())))?;
    Ok((row, doc))
}

/// The pictures of `doc` that `luntan-media` archived, by URL: the hash
/// `/media/<sha256>` serves each from. Empty without a crawl database.
pub fn archived_images(st: &crate::AppState, doc: &ThreadDoc) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let Ok(store) = open_store(st) else { return out };
    for src in doc.posts.iter().flat_map(|p| &p.images).map(|i| &i.src) {
        if let Ok(Some(hash)) = store.media_hash_of(&doc.site, src) {
            out.insert(src.clone(), hash);
        }
    }
    out
}

/// Opens the crawl database for one read; never creates it.
pub fn open_store(st: &crate::AppState) -> Result<Store, ApiError> {
    let db = st.data.db_path();
    if !db.is_file() {
        return Err(ApiError::Unavailable(format!("{}: no crawl database", db.display())));
    }
    Store::open(&db).map_err(|e| ApiError::Unavailable(e.to_string()))
}

fn thread_row(st: &crate::AppState, site: &SiteId, id: &ThreadId) -> Result<Option<ThreadRow>, ApiError> {
    open_store(st)?.thread(site, id).map_err(|e| ApiError::Unavailable(e.to_string()))
}
