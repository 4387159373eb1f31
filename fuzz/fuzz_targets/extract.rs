//! Saved pages are whatever a forum (or an attacker) sent. Whatever the
//! bytes and the declared charset, encoding detection and extraction
//! return without a panic, and a thread they extract writes XML that parses
//! back to the same thread: the extract stage refuses to publish anything
//! else, so a failure here is a thread lost.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use luntan_core::ids::{BoardId, SaveDate, ThreadId};
use luntan_core::store::ThreadRow;
use luntan_core::{Site, ThreadDoc, ThreadState};
use luntan_extract::{extract_thread, parse_page, RawPage};
use luntan_text::encoding::detect_and_decode;

fn sites() -> &'static [Site; 3] {
    static SITES: OnceLock<[Site; 3]> = OnceLock::new();
    SITES.get_or_init(|| {
        let parse = |text: &str, name: &str| Site::parse(text, Path::new(name)).expect("bundled site file parses");
        [
            parse(include_str!("../sites/dz.xml"), "dz.xml"),
            parse(include_str!("../sites/phpbb.xml"), "phpbb.xml"),
            parse(include_str!("../sites/bbs.xml"), "bbs.xml"),
        ]
    })
}

const CONTENT_TYPES: [Option<&str>; 8] = [
    None,
    Some("text/html"),
    Some("text/html; charset=gbk"),
    Some("text/html; charset=big5"),
    Some("text/html; charset=utf-8"),
    Some("text/html; charset=\"utf-16le\""),
    Some("text/html; charset=x-user-defined"),
    Some("text/html; charset=no-such-thing"),
];

fuzz_target!(|data: &[u8]| {
    // First byte: which forum's rules and which Content-Type; the rest: the page.
    let Some((&pick, bytes)) = data.split_first() else { return };
    let site = &sites()[usize::from(pick % 3)];
    let content_type = CONTENT_TYPES[usize::from(pick / 3) % CONTENT_TYPES.len()];

    let (detection, decoded) = detect_and_decode(bytes, content_type, site.encoding, None);
    assert!(decoded.malformed <= bytes.len(), "{detection:?}");
    let _ = parse_page(site, &decoded.text);

    let row = ThreadRow {
        site: site.id.clone(),
        thread: ThreadId::parse("77").expect("a thread id"),
        board: BoardId::parse("2").expect("a board id"),
        url: format!("{}?tid=77", site.home),
        title: None,
        replies: None,
        last_post: None,
        post_time: None,
        save_date: Some(SaveDate::parse("20260101").expect("a save date")),
        pages: Some(1),
        content_type: content_type.map(str::to_owned),
        state: ThreadState::Saved,
        fail_stage: None,
        fail_reason: None,
        attempts: 0,
    };
    let page = RawPage { path: PathBuf::from("article77.html"), bytes: bytes.to_vec(), fetched: None };
    if let Ok(got) = extract_thread(site, &row, &[page], None) {
        let xml = got.doc.to_xml();
        let back = ThreadDoc::from_xml(&xml).unwrap_or_else(|e| panic!("extracted thread's XML does not parse back: {e}"));
        assert_eq!(back, got.doc, "extracted thread's XML parses back to a different thread");
    }
});
