//! A fixture thread's pages as download would have saved them, rendered
//! without a server, for the extraction tests.

use std::path::PathBuf;

use luntan_core::store::ThreadRow;
use luntan_core::ThreadState;
use luntan_extract::RawPage;
use luntan_fixture::{Fixture, ForumKind, ThreadTruth};

/// Page `k` of a thread, as the forum links it.
pub fn page_path(kind: ForumKind, t: &ThreadTruth, k: u32) -> String {
    if k <= 1 {
        return t.url_path.clone();
    }
    match kind {
        ForumKind::Discuz => format!("{}&page={k}", t.url_path),
        ForumKind::Phpbb => format!("{}&start={}", t.url_path, (k as usize - 1) * kind.thread_page_size()),
        ForumKind::Bbs | ForumKind::Modern => format!("{}?page={k}", t.url_path),
        other => unreachable!("{other:?} is not one of the default forums the extraction tests render"),
    }
}

/// Every page of `t` as served, and its row as download leaves it.
pub fn saved_thread(fixture: &Fixture, kind: ForumKind, t: &ThreadTruth) -> (Vec<RawPage>, ThreadRow) {
    let mut content_type = None;
    let pages: Vec<RawPage> = (1..=t.pages)
        .map(|k| {
            let resp = fixture.get(&page_path(kind, t, k));
            assert_eq!(resp.status, 200, "{} page {k}", t.url_path);
            content_type.get_or_insert(resp.content_type.to_owned());
            RawPage { path: PathBuf::from(format!("{}/{}/p{k}.html", t.site, t.thread)), bytes: resp.body, fetched: None }
        })
        .collect();
    let row = ThreadRow {
        site: t.site.parse().unwrap(),
        thread: t.thread.parse().unwrap(),
        board: t.board.parse().unwrap(),
        url: format!("http://127.0.0.1:1{}", t.url_path),
        title: None,
        replies: Some(t.replies.into()),
        last_post: None,
        post_time: None,
        save_date: Some("20261130".parse().unwrap()),
        pages: Some(t.pages),
        content_type,
        state: ThreadState::Saved,
        fail_stage: None,
        fail_reason: None,
        attempts: 0,
    };
    (pages, row)
}
