//! What extraction yields, whichever reader (the DOM, the stream,
//! `post="auto"`, protocol-mode JSON) made it: a page's posts, a thread's
//! document and how its pages were decoded.

use std::path::PathBuf;

use luntan_core::ids::SaveDate;
use luntan_core::store::ThreadRow;
use luntan_core::{Post, Site, ThreadDoc};
use luntan_text::encoding::Detection;

/// What one HTML page of a thread holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PageExtract {
    pub title: Option<String>,
    /// Posts in page order. `floor` is the number the page shows when the
    /// site has a `floor` selector (0 when that post shows none), or when
    /// `post="auto"` found floor labels on the page, else the 1-based
    /// position on the page.
    pub posts: Vec<Post>,
    /// What the page shows of the thread besides its title, by the site
    /// file's `board-name`, `thread-replies` and `thread-views`.
    pub facts: ThreadFacts,
    /// The page's `<base href>` as written, when the site file reads URLs
    /// (`author-url`, `links`, `images`): what they are relative to.
    pub base: Option<String>,
}

/// A thread's board name and counts, as a page shows them (version 2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThreadFacts {
    pub board_name: Option<String>,
    pub replies: Option<u64>,
    pub views: Option<u64>,
}

impl ThreadFacts {
    /// Each fact from `self`, else from `later` (a later page's).
    pub fn or(self, later: ThreadFacts) -> ThreadFacts {
        ThreadFacts { board_name: self.board_name.or(later.board_name), replies: self.replies.or(later.replies), views: self.views.or(later.views) }
    }
}

/// One saved page: its file (for messages) and its raw bytes.
#[derive(Debug, Clone)]
pub struct RawPage {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// When the page was fetched (Unix seconds, the forum's clock), if that
    /// was kept (`article<T>.fetched`): relative times such as "3分钟前" are
    /// read against it, in the site's `time-zone`.
    pub fetched: Option<i64>,
}

/// How one page was decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageReport {
    pub path: PathBuf,
    pub detection: Detection,
    pub malformed: usize,
}

/// A thread built from its pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadExtract {
    pub doc: ThreadDoc,
    /// One per page, in page order.
    pub pages: Vec<PageReport>,
}

/// Characters of the first post a thread without a title is named by.
pub const TITLE_CHARS: usize = 30;

/// A microblog post has no title: its first words stand for one.
pub fn title_of(post: &Post) -> String {
    post.paragraphs.first().map(|p| p.chars().take(TITLE_CHARS).collect::<String>().trim().to_owned()).unwrap_or_default()
}

/// A thread's document: what the row and site file say, with what the pages
/// gave. HTML and JSON threads end in the same shape, so index and search
/// cannot tell them apart.
pub(crate) fn thread_doc(site: &Site, row: &ThreadRow, title: String, saved: SaveDate, encoding: String, pages: u32, posts: Vec<Post>) -> ThreadDoc {
    thread_doc_with(site, row, title, saved, encoding, pages, posts, ThreadFacts::default())
}

/// [`thread_doc`] with what the pages showed of the thread.
#[allow(clippy::too_many_arguments)]
pub(crate) fn thread_doc_with(
    site: &Site,
    row: &ThreadRow,
    title: String,
    saved: SaveDate,
    encoding: String,
    pages: u32,
    posts: Vec<Post>,
    facts: ThreadFacts,
) -> ThreadDoc {
    ThreadDoc {
        site: row.site.clone(),
        board: row.board.clone(),
        thread: row.thread.clone(),
        forum: site.name.clone(),
        url: row.url.clone(),
        title,
        posted: posts.first().and_then(|p| p.time.clone()),
        saved,
        encoding,
        pages,
        posts,
        board_name: facts.board_name,
        replies: facts.replies,
        views: facts.views,
    }
}
