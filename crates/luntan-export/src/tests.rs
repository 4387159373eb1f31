//! [`export`] over a data directory laid out by hand as download and
//! extract lay it out, with a real crawl database: each kind of page
//! (captured, saved before captures, a browser's state, a JSON page) and
//! each kind of bad record.

use super::*;
use crate::warc::{read_records, sha1_digest, ReadRecord};
use luntan_core::layout::write_atomic;
use luntan_core::store::{NewThread, Update};
use luntan_core::Post;

const DAY: &str = "20261130";

struct Fixture {
    _dir: tempfile::TempDir,
    data: DataDir,
    store: Store,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::new(dir.path().join("data"));
        std::fs::create_dir_all(data.root()).unwrap();
        let store = Store::open(&data.db_path()).unwrap();
        Fixture { _dir: dir, data, store }
    }

    /// A thread row moved to `state` with `pages` pages saved on [`DAY`].
    fn row(&mut self, site: &str, thread: &str, pages: u32, content_type: &str, state: ThreadState) -> ThreadLoc {
        let url = format!("http://{site}.example/t/{thread}");
        let nt = NewThread::new(site.parse().unwrap(), "2".parse().unwrap(), thread.parse().unwrap(), url);
        self.store.insert_new_threads(&[nt]).unwrap();
        let up = Update { save_date: Some(DAY.parse().unwrap()), pages: Some(pages), content_type: Some(content_type), ..Default::default() };
        self.store.transition(site, thread, ThreadState::Discovered, ThreadState::Saved, &up).unwrap();
        if matches!(state, ThreadState::Extracted | ThreadState::Indexed) {
            self.store.transition(site, thread, ThreadState::Saved, ThreadState::Extracted, &Update::default()).unwrap();
        }
        if state == ThreadState::Indexed {
            self.store.transition(site, thread, ThreadState::Extracted, ThreadState::Indexed, &Update::default()).unwrap();
        }
        self.store.thread(site, thread).unwrap().unwrap().saved_location().unwrap()
    }

    fn export(&self, opts: &ExportOptions) -> ExportReport {
        export(&self.data, &self.store, opts, &Stop::new(), &luntan_core::contract::Silent).unwrap()
    }
}

fn response(page: u32, url: &str, headers: &[(&str, &str)]) -> PageCapture {
    PageCapture {
        page,
        url: url.into(),
        at: "2026-11-30T08:15:02.417Z".into(),
        exchange: Exchange::Response {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        },
    }
}

fn doc(loc: &ThreadLoc) -> ThreadDoc {
    ThreadDoc {
        site: loc.site.clone(),
        board: loc.board.clone(),
        thread: loc.thread.clone(),
        forum: "清水河畔".into(),
        url: format!("http://{}.example/t/{}", loc.site, loc.thread),
        title: "考研经验".into(),
        posted: Some("2024-03-05T12:34:00".into()),
        saved: DAY.parse().unwrap(),
        encoding: "GBK".into(),
        pages: 1,
        posts: vec![Post {
            floor: 1, author: "小明".into(), time: Some("2024-03-05T12:34:00".into()), paragraphs: vec!["第一段".into()], ..Post::default()
        }],
        board_name: None,
        replies: None,
        views: None,
    }
}

fn by_target(records: &[ReadRecord]) -> HashMap<&str, Vec<&ReadRecord>> {
    let mut out: HashMap<&str, Vec<&ReadRecord>> = HashMap::new();
    for r in records.iter().skip(1) {
        out.entry(r.header("WARC-Target-URI").unwrap()).or_default().push(r);
    }
    out
}

#[test]
fn every_kind_of_page_becomes_its_record_and_bad_ones_are_named_and_counted() {
    let mut f = Fixture::new();
    let t = tempfile::tempdir().unwrap();
    // dz/1: two captured pages, GBK bytes in a header, chunked on the wire.
    let a = f.row("dz", "1", 2, "text/html; charset=gbk", ThreadState::Indexed);
    let p1 = b"<html>\xc4\xe3\xba\xc3 page one</html>".to_vec();
    let p2 = b"<html>page two</html>".to_vec();
    write_atomic(&f.data.html_path(&a, 1), &p1).unwrap();
    write_atomic(&f.data.html_path(&a, 2), &p2).unwrap();
    let cookie = capture::latin1(b"n=\xd0\xa1\xc3\xf7");
    let lines = [
        response(1, "http://dz.example/t/1", &[("content-type", "text/html; charset=gbk"), ("set-cookie", &cookie), ("transfer-encoding", "chunked")]),
        response(2, "http://dz.example/t/1?page=2", &[("content-type", "text/html; charset=gbk")]),
    ];
    write_atomic(&f.data.http_path(&a), capture::to_lines(&lines).as_bytes()).unwrap();
    write_atomic(&f.data.xml_path(&a), doc(&a).to_xml().as_bytes()).unwrap();
    // dz/2: one page saved before captures were kept, served without a charset, GBK by its meta.
    let b = f.row("dz", "2", 1, "text/html", ThreadState::Saved);
    write_atomic(&f.data.html_path(&b, 1), b"<html><head><meta charset=\"gbk\"></head><body>\xc4\xe3\xba\xc3</body></html>").unwrap();
    // mb/3: two JSON pages saved before captures were kept, with their clock.
    let c = f.row("mb", "3", 2, "application/json", ThreadState::Extracted);
    write_atomic(&f.data.json_path(&c, 1), br#"{"p":1}"#).unwrap();
    write_atomic(&f.data.json_path(&c, 2), br#"{"p":2}"#).unwrap();
    write_atomic(&f.data.fetched_path(&c), b"1764490502\thttp://mb.example/api?p=1\n1764490503\thttp://mb.example/api?p=2\n").unwrap();
    write_atomic(&f.data.xml_path(&c), b"<thread site=\"mb\"><post").unwrap();
    // xb/4: a browser's two DOM states, one thread kept with lines, xb/5 before them.
    let d = f.row("xb", "4", 2, "text/html; charset=utf-8", ThreadState::Indexed);
    for p in 1..=2 {
        write_atomic(&f.data.html_path(&d, p), format!("<html>state {p}</html>").as_bytes()).unwrap();
    }
    let snap = |page| PageCapture { page, url: "http://xb.example/t/4".into(), at: "2026-11-30T08:15:04Z".into(), exchange: Exchange::Snapshot };
    write_atomic(&f.data.http_path(&d), capture::to_lines(&[snap(1), snap(2)]).as_bytes()).unwrap();
    write_atomic(&f.data.xml_path(&d), doc(&d).to_xml().as_bytes()).unwrap();
    let e = f.row("xb", "5", 1, "text/html; charset=utf-8", ThreadState::Saved);
    write_atomic(&f.data.html_path(&e, 1), b"<html>old state</html>").unwrap();
    write_atomic(&f.data.fetched_path(&e), b"1764490505\thttp://xb.example/t/5\n").unwrap();
    // dz/6: its page is gone. dz/7: its XML is gone (the WARC still gets its page).
    f.row("dz", "6", 1, "text/html", ThreadState::Saved);
    let g = f.row("dz", "7", 1, "text/html", ThreadState::Indexed);
    write_atomic(&f.data.html_path(&g, 1), b"<html>seven</html>").unwrap();
    write_atomic(&f.data.http_path(&g), capture::to_lines(&[response(1, "http://dz.example/t/7", &[])]).as_bytes()).unwrap();

    let (warc, ndjson) = (t.path().join("out.warc.gz"), t.path().join("out.ndjson"));
    let opts = ExportOptions { warc: Some(warc.clone()), ndjson: Some(ndjson.clone()), bulk_index: Some("luntan".into()), ..Default::default() };
    let r = f.export(&opts);
    assert_eq!((r.threads, r.responses, r.synthesized, r.snapshots, r.lines), (7, 3, 3, 3, 2), "{r:?}");
    let bad: Vec<String> = r.bad.iter().map(ToString::to_string).collect();
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].ends_with("board2_20261130/article6.html: cannot read the saved page: No such file or directory (os error 2)"), "{bad:#?}");
    assert!(bad[1].contains("article7.xml: cannot read the thread XML"), "{bad:#?}");
    assert!(bad[2].contains("mb/board2/board2_20261130/article3.xml: not a thread XML"), "{bad:#?}");
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 2, "no temp file is left");

    let bytes = std::fs::read(&warc).unwrap();
    assert_eq!(r.warc_bytes, bytes.len() as u64);
    let records = read_records(&bytes).unwrap();
    assert_eq!(records.len(), 1 + 9);
    assert_eq!(records[0].header("WARC-Type"), Some("warcinfo"));
    let info = records[0].header("WARC-Record-ID").unwrap();
    assert!(records[1..].iter().all(|r| r.header("WARC-Warcinfo-ID") == Some(info)));
    let targets = by_target(&records);

    // Captured: the head as kept, byte for byte, then the page.
    let r1 = targets["http://dz.example/t/1"][0];
    assert_eq!(r1.header("WARC-Type"), Some("response"));
    assert_eq!(r1.header("WARC-Date"), Some("2026-11-30T08:15:02Z"));
    assert_eq!(r1.header("Content-Type"), Some("application/http;msgtype=response"));
    let head =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=gbk\r\nset-cookie: n=\xd0\xa1\xc3\xf7\r\nX-Archive-Orig-transfer-encoding: chunked\r\n\r\n";
    assert_eq!(r1.http_head().unwrap(), head);
    assert_eq!(r1.http_body().unwrap(), p1);
    assert_eq!(r1.header("WARC-Payload-Digest").unwrap(), sha1_digest(&p1));
    assert_eq!(r1.header("WARC-Block-Digest").unwrap(), sha1_digest(&r1.block));
    assert_eq!(targets["http://dz.example/t/1?page=2"][0].http_body().unwrap(), p2);
    // Saved before captures: status 200, the charset luntan detects, the file's time.
    let r2 = targets["http://dz.example/t/2"][0];
    let head2 = String::from_utf8_lossy(r2.http_head().unwrap()).into_owned();
    assert!(head2.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=gb18030\r\n"), "{head2}");
    let mtime = std::fs::metadata(f.data.html_path(&b, 1)).unwrap().modified().unwrap();
    assert_eq!(r2.header("WARC-Date").unwrap(), warc_date(mtime.into()));
    // JSON pages before captures: their URL and the forum's clock from `.fetched`.
    let r3 = targets["http://mb.example/api?p=2"][0];
    assert_eq!(r3.header("WARC-Date"), Some("2025-11-30T08:15:03Z"));
    assert!(r3.http_head().unwrap().starts_with(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"));
    assert_eq!(r3.http_body().unwrap(), br#"{"p":2}"#);
    // A browser's states: resource records, in page order, both kinds.
    let states: Vec<&[u8]> = targets["http://xb.example/t/4"].iter().map(|r| r.block.as_slice()).collect();
    assert_eq!(states, [&b"<html>state 1</html>"[..], b"<html>state 2</html>"]);
    let old_state = targets["http://xb.example/t/5"][0];
    assert_eq!(old_state.header("WARC-Type"), Some("resource"));
    assert_eq!(old_state.header("Content-Type"), Some("text/html; charset=utf-8"));
    assert_eq!(old_state.header("WARC-Date"), Some("2025-11-30T08:15:05Z"));
    assert_eq!(targets["http://dz.example/t/7"][0].http_head().unwrap(), b"HTTP/1.1 200 OK\r\n\r\n");

    // NDJSON: a bulk action line, then the thread, for each extracted thread that parses.
    let text = std::fs::read_to_string(&ndjson).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], r#"{"index":{"_index":"luntan","_id":"dz/1"}}"#);
    assert_eq!(serde_json::from_str::<ThreadLine>(lines[1]).unwrap(), ThreadLine::of(&doc(&a)));
    assert_eq!(serde_json::from_str::<ThreadLine>(lines[3]).unwrap(), ThreadLine::of(&doc(&d)));

    // One forum only; an unknown one is refused before anything is written.
    let only = ExportOptions { sites: vec![SiteId::parse("xb").unwrap()], warc: Some(t.path().join("xb.warc")), ..Default::default() };
    let r = f.export(&only);
    assert_eq!((r.threads, r.snapshots, r.responses, r.bad.len()), (2, 3, 0, 0), "{r:?}");
    let plain = std::fs::read(t.path().join("xb.warc")).unwrap();
    assert!(plain.starts_with(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n"), "not gzipped without .gz");
    let unknown = ExportOptions { sites: vec![SiteId::parse("nope").unwrap()], warc: Some(t.path().join("n.warc")), ..Default::default() };
    let e = export(&f.data, &f.store, &unknown, &Stop::new(), &luntan_core::contract::Silent).unwrap_err();
    assert_eq!(e.to_string(), "--site nope: no thread of that forum in the crawl database");
    assert!(!t.path().join("n.warc").exists());
}

#[test]
fn a_stopped_export_publishes_nothing_and_leaves_no_temp_file() {
    let mut f = Fixture::new();
    let a = f.row("dz", "1", 1, "text/html", ThreadState::Saved);
    write_atomic(&f.data.html_path(&a, 1), b"<html/>").unwrap();
    let t = tempfile::tempdir().unwrap();
    let warc = t.path().join("out.warc.gz");
    std::fs::write(&warc, b"an earlier export").unwrap();
    let stop = Stop::new();
    stop.set();
    let opts = ExportOptions { warc: Some(warc.clone()), ndjson: Some(t.path().join("out.ndjson")), ..Default::default() };
    let r = export(&f.data, &f.store, &opts, &stop, &luntan_core::contract::Silent).unwrap();
    assert!(r.stopped);
    assert_eq!(std::fs::read(&warc).unwrap(), b"an earlier export");
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1, "{:?}", std::fs::read_dir(t.path()).unwrap().collect::<Vec<_>>());
}

#[test]
fn a_head_is_written_as_kept_with_its_chunking_renamed() {
    let head = http_head("HTTP/1.0", 203, &[("Transfer-Encoding".into(), "chunked".into()), ("x-a".into(), "b\r\nc".into())]);
    assert_eq!(head, b"HTTP/1.0 203 Non-Authoritative Information\r\nX-Archive-Orig-Transfer-Encoding: chunked\r\nx-a: bc\r\n\r\n");
    assert_eq!(http_head("", 299, &[]), b"HTTP/1.1 299\r\n\r\n");
}
