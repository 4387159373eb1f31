//! Schema migrations: databases written by earlier releases open under the
//! current `Store`, keep every row, and end at the current schema version.

use std::path::Path;

use luntan_core::state::{FailureGroup, Stage, ThreadState};
use luntan_core::store::{BoardSchedule, KeywordRound, KeywordState, RoundRecord, StateUrl, Store, StoreError, ThreadRow, SCHEMA_VERSION};
use rusqlite::Connection;

/// The tables before 229a7cd: migration 1 is that release's SCHEMA verbatim,
/// and released migrations are never edited, so it stands in for an old file.
const SCHEMA_V1: &str = include_str!("../src/store/migrations/0001_tables.sql");
/// How the last release before versions (c3d4f4d) ended `SCHEMA_V1`'s
/// `keyword_rounds`: keyword_rounds.error and search_accounts already in
/// CREATE TABLE, not added by migrations 2 and 3.
const C3D4F4D_TAIL: &str = "    errors        INTEGER NOT NULL,
    error         TEXT                       -- the round's first error; the record was left as it was
);
CREATE TABLE IF NOT EXISTS search_accounts ( -- keyword monitoring: when each account last started a search
    site          TEXT NOT NULL,
    account       TEXT NOT NULL,             -- the account's name; '' for searches without one
    last_search_ms INTEGER NOT NULL,         -- Unix milliseconds of the forum's answer
    PRIMARY KEY (site, account)
);
";
/// Rows in every table of `SCHEMA_V1`.
const ROWS: &str = include_str!("fixtures/rows.sql");

/// The tables of c3d4f4d, verbatim: `SCHEMA_V1` with its last column's
/// statement ended by `C3D4F4D_TAIL`.
fn schema_c3d4f4d() -> String {
    let head = SCHEMA_V1.strip_suffix("    errors        INTEGER NOT NULL\n);\n").expect("migration 1 ends with keyword_rounds.errors");
    format!("{head}{C3D4F4D_TAIL}")
}

fn v1_fixture() -> String {
    format!("{SCHEMA_V1}\n{ROWS}")
}

fn has_table(c: &Connection, table: &str) -> bool {
    c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |r| r.get::<_, i64>(0)).unwrap() == 1
}

/// Writes `sql` into a new database at `path` with plain rusqlite, as the old
/// release would have left it (WAL, `user_version` 0).
fn database_from(path: &Path, sql: &str) {
    let c = Connection::open(path).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.execute_batch(sql).unwrap();
    assert_eq!(user_version(&c), 0);
}

fn user_version(c: &Connection) -> i64 {
    c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

fn has_column(c: &Connection, table: &str, column: &str) -> bool {
    c.query_row("SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2", [table, column], |r| r.get::<_, i64>(0)).unwrap() == 1
}

/// The schema as SQLite holds it, to tell whether an open changed anything.
/// A schema without the threads table's statement (which migration 4's
/// ALTERs rewrite in place).
/// The schema but the `threads` table and its indexes, which migrations change.
fn unlike_threads(schema: &[String]) -> Vec<String> {
    schema.iter().filter(|sql| !sql.starts_with("CREATE TABLE threads") && !sql.contains(" ON threads ")).cloned().collect()
}

/// Migration 7: claims read off `threads_claim`, which replaced `threads_by_state`.
fn assert_claim_index(c: &Connection) {
    let indexes: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'threads' AND sql IS NOT NULL ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(indexes, ["threads_claim"], "migration 7 ran");
}

fn schema(c: &Connection) -> Vec<String> {
    let mut stmt = c.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

fn row(thread: &str, board: &str, state: ThreadState) -> ThreadRow {
    ThreadRow {
        site: "dz".parse().unwrap(),
        thread: thread.parse().unwrap(),
        board: board.parse().unwrap(),
        url: format!("http://dz.example.cn/thread-{thread}-1-1.html"),
        title: None,
        replies: None,
        last_post: None,
        post_time: None,
        save_date: None,
        pages: None,
        content_type: None,
        state,
        fail_stage: None,
        fail_reason: None,
        attempts: 0,
    }
}

/// Every row of the v1 fixture, read back through the Store API.
fn assert_fixture_rows(s: &Store) {
    let s1 = |x: &str| Some(x.to_string());
    // One thread in each state of the way: as its list showed it, then as
    // saved on 2026-11-19 (GBK pages), then with its first post's time.
    let listed = |thread, board, state, title, replies, last_post| ThreadRow {
        title: s1(title),
        replies: Some(replies),
        last_post: s1(last_post),
        ..row(thread, board, state)
    };
    let saved = |r: ThreadRow, pages, post_time: Option<&str>| ThreadRow {
        save_date: Some("20261119".parse().unwrap()),
        pages: Some(pages),
        content_type: s1("text/html; charset=gbk"),
        post_time: post_time.map(String::from),
        ..r
    };
    for want in [
        listed("101", "2", ThreadState::Discovered, "2027考研经验贴", 12, "2026-11-19T21:30:00"),
        saved(listed("102", "2", ThreadState::Saved, "英语一作文模板", 3, "2026-11-18T10:00:00"), 2, None),
        saved(listed("103", "2", ThreadState::Extracted, "政治复习时间表", 0, "2026-11-17T22:15:00"), 1, Some("2026-11-17T22:15:00")),
        saved(listed("104", "5", ThreadState::Indexed, "图书馆占座", 40, "2026-11-16T12:00:00"), 3, Some("2026-11-15T09:00:00")),
    ] {
        assert_eq!(s.threads(Some("dz"), want.state).unwrap(), [want]);
    }
    assert_eq!(
        s.threads(Some("dz"), ThreadState::Failed).unwrap(),
        [
            ThreadRow {
                title: s1("已删除的帖子"),
                replies: Some(1),
                last_post: s1("2026-11-15T08:00:00"),
                fail_stage: luntan_core::Stage::parse("download"),
                fail_reason: s1("http://dz.example.cn/thread-105-1-1.html: 404 Not Found"),
                attempts: 2,
                ..row("105", "5", ThreadState::Failed)
            },
            ThreadRow {
                save_date: Some("20261119".parse().unwrap()),
                pages: Some(1),
                content_type: s1("text/html"),
                fail_stage: luntan_core::Stage::parse("extract"),
                fail_reason: s1("no posts matched the thread@post selector"),
                attempts: 1,
                ..row("106", "2", ThreadState::Failed)
            },
        ]
    );
    let bbs = s.thread("bbs", "7").unwrap().unwrap();
    assert_eq!((bbs.title.as_deref(), bbs.state, bbs.url.as_str()), (Some("第一帖"), ThreadState::Discovered, "http://bbs.example.cn/dispbbs.asp?id=7"));

    // Sites, boards, rounds and skipped links.
    assert_eq!(s.site_encoding("dz").unwrap().as_deref(), Some("gb18030"));
    assert_eq!(s.site_encoding("bbs").unwrap(), None);
    assert_eq!(s.board_schedule("dz", "2").unwrap(), BoardSchedule { interval_secs: Some(7200), next_visit: Some(1795000000) });
    assert_eq!(s.board_schedule("bbs", "1").unwrap(), BoardSchedule { interval_secs: None, next_visit: None });
    assert_eq!(s.next_board_visit(&["dz".into()]).unwrap(), Some(1794990000));
    let last = RoundRecord {
        site: "dz".parse().unwrap(),
        started_at: "2026-11-20T08:00:00Z".into(),
        finished_at: "2026-11-20T08:06:00Z".into(),
        requests: 5,
        list_pages: 4,
        boards_visited: 2,
        boards_skipped: 0,
        new_threads: 1,
        updated_threads: 1,
        errors: 1,
    };
    assert_eq!(s.last_round("dz").unwrap(), Some(last.clone()));
    let mut known = Vec::new();
    assert_eq!(s.for_each_known_thread("dz", |id| known.push(id.to_owned())).unwrap(), 8, "six threads and two skipped links");
    known.sort();
    assert_eq!(known, ["101", "102", "103", "104", "105", "106", "900", "901"]);

    let counts = s.counts().unwrap();
    assert_eq!(counts.iter().map(|c| c.site.as_str()).collect::<Vec<_>>(), ["bbs", "dz"]);
    let (b, d) = (&counts[0], &counts[1]);
    assert_eq!((b.boards, b.discovered, b.failed, b.skipped_links, b.last_round.is_none()), (1, 1, 0, 0, true));
    assert_eq!((d.boards, d.discovered, d.saved, d.extracted, d.indexed, d.failed), (2, 1, 1, 1, 1, 2));
    let group = |stage: &str, cause: &str, example: &str| FailureGroup { stage: stage.into(), cause: cause.into(), threads: 1, examples: vec![example.into()] };
    // A reason that names a URL is shown by it, one that names nothing by the thread.
    assert_eq!(
        d.failures,
        [
            group("download", "404 Not Found", "http://dz.example.cn/thread-105-1-1.html"),
            group("extract", "no posts matched the thread@post selector", "dz/106")
        ]
    );
    assert_eq!(d.last_round, Some(last));
    assert_eq!(d.skipped_links, 2);
    assert_eq!(d.top_skipped, [("http://dz.example.cn/thread-901-1-1.html".to_string(), 0.08), ("http://dz.example.cn/thread-900-1-1.html".to_string(), 0.02)]);

    // Keywords and their rounds (written before rounds kept an error).
    let kaoyan = KeywordState {
        site: "dz".parse().unwrap(),
        keyword: "考研".into(),
        lastresult: 4,
        pagenum: 4,
        watermark: Some("2026-11-19T21:30:00".into()),
        rounds: 2,
        last_error: None,
    };
    let baoyan =
        KeywordState { site: "dz".parse().unwrap(), keyword: "保研".into(), lastresult: 30, pagenum: 30, watermark: None, rounds: 1, last_error: None };
    assert_eq!(s.keyword_states(None).unwrap(), [baoyan, kaoyan.clone()]);
    assert_eq!(s.keyword_state(&kaoyan.site, "考研", 30).unwrap(), kaoyan);
    let rounds = s.keyword_rounds(Some("dz")).unwrap();
    assert_eq!(
        rounds.iter().map(|r| (r.keyword.as_str(), r.budget, r.pages_read, r.next_pagenum)).collect::<Vec<_>>(),
        [("考研", 30, 30, 30), ("保研", 25, 25, 30), ("考研", 30, 4, 4)]
    );
    assert_eq!(
        rounds[2],
        KeywordRound {
            site: "dz".parse().unwrap(),
            keyword: "考研".into(),
            started_at: "2026-11-20T08:08:00Z".into(),
            budget: 30,
            pages_read: 4,
            lastresult: 4,
            next_pagenum: 4,
            watermark_before: Some("2026-11-18T10:00:00".into()),
            watermark_after: Some("2026-11-19T21:30:00".into()),
            results: 80,
            new_threads: 1,
            updated_threads: 1,
            errors: 0,
            error: None,
        }
    );
}

#[test]
fn a_database_from_before_schema_versions_migrates_and_keeps_every_row() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("luntan.db");
    database_from(&db, &v1_fixture());
    let watch = Connection::open(&db).unwrap();
    assert!(!has_column(&watch, "keyword_rounds", "error") && !has_table(&watch, "search_accounts"));

    let mut s = Store::open(&db).unwrap();
    assert_eq!(user_version(&watch), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 8);
    assert_claim_index(&watch);
    assert!(has_column(&watch, "keyword_rounds", "error"), "migration 2 ran");
    assert!(has_table(&watch, "search_accounts"), "migration 3 ran");
    assert!(has_column(&watch, "threads", "states_kept") && has_column(&watch, "threads", "states_dropped"), "migration 4 ran");
    assert!(has_table(&watch, "validators"), "migration 5 ran");
    assert!(has_table(&watch, "media"), "migration 8 ran");
    assert_fixture_rows(&s);

    // The new column works on the old rows' table.
    let dz: luntan_core::ids::SiteId = "dz".parse().unwrap();
    let failed = KeywordRound {
        budget: 4,
        errors: 1,
        error: Some("search: 503 Service Unavailable".into()),
        ..KeywordRound::new(dz.clone(), "考研", "2026-11-21T08:00:00Z".into())
    };
    s.record_keyword_round(&failed).unwrap();
    assert_eq!(s.keyword_state(&dz, "考研", 30).unwrap().last_error.as_deref(), Some("search: 503 Service Unavailable"));
    s.set_last_search("dz", "", 1_795_000_000_000).unwrap();
    assert_eq!(s.last_search("dz", "").unwrap(), Some(1_795_000_000_000));
    // And the old machinery still moves rows.
    assert!(s.fail("dz", "101", ThreadState::Discovered, Stage::Download, "timeout").unwrap());
    assert_eq!(s.retry_failed(Some("dz"), Some(Stage::Download)).unwrap(), 2);
    drop(s);

    // A second open changes nothing: no commit from it, same schema, same version.
    let before = (schema(&watch), user_version(&watch));
    let data_version = |c: &Connection| c.pragma_query_value(None, "data_version", |r| r.get::<_, i64>(0)).unwrap();
    let seen = data_version(&watch);
    let s = Store::open(&db).unwrap();
    assert_eq!(data_version(&watch), seen, "the second open wrote nothing");
    assert_eq!((schema(&watch), user_version(&watch)), before);
    assert_eq!(s.keyword_rounds(Some("dz")).unwrap().len(), 4);
}

#[test]
fn a_database_made_by_the_release_that_added_keyword_errors_is_taken_as_version_2() {
    // From 229a7cd, keyword_rounds.error came in CREATE TABLE (with an unused
    // rounds.error until c3d4f4d) or by ALTER TABLE on older files: either
    // way the columns sit last, as these ALTERs put them.
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("luntan.db");
    let sql = format!(
        "{}
         ALTER TABLE rounds ADD COLUMN error TEXT;
         ALTER TABLE keyword_rounds ADD COLUMN error TEXT;
         UPDATE keyword_rounds SET error = 'search: robots.txt disallows /search.php' WHERE id = 1;",
        v1_fixture()
    );
    database_from(&db, &sql);
    let watch = Connection::open(&db).unwrap();
    let before = schema(&watch);

    let s = Store::open(&db).unwrap();
    assert_eq!(user_version(&watch), SCHEMA_VERSION);
    let after = schema(&watch);
    // Migration 7 replaced one index of threads by another.
    // Migration 8 added the media table and its index.
    assert_eq!(
        after.len(),
        before.len() + 7,
        "only migrations 3 to 8 ran (search_accounts, validators, site_locks, gates, gate_slots, media and media_by_hash): {after:?}"
    );
    assert!(unlike_threads(&before).iter().all(|sql| after.contains(sql)), "nothing made anew");
    assert_claim_index(&watch);
    assert!(has_table(&watch, "search_accounts"));
    assert!(has_column(&watch, "threads", "states_kept"), "migration 4 ran");
    assert_fixture_rows(&s);
    assert_eq!(s.keyword_rounds(None).unwrap()[0].error.as_deref(), Some("search: robots.txt disallows /search.php"));
    // A round can be written on the old table: the last one again.
    let last = s.last_round("dz").unwrap().unwrap();
    s.record_round(&last).unwrap();
    assert_eq!(s.last_round("dz").unwrap(), Some(last));
}

#[test]
fn a_database_made_by_the_release_with_search_accounts_is_taken_as_version_3_and_gains_browser_states_and_validators() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("luntan.db");
    let sql = format!(
        "{}
         {ROWS}
         UPDATE keyword_rounds SET error = 'search: 503 Service Unavailable' WHERE id = 1;
         INSERT INTO search_accounts (site, account, last_search_ms) VALUES ('dz', '', 1794999000000), ('dz', 'alice', 1795000000000);",
        schema_c3d4f4d()
    );
    database_from(&db, &sql);
    let watch = Connection::open(&db).unwrap();
    let before = schema(&watch);

    let s = Store::open(&db).unwrap();
    assert_eq!(user_version(&watch), SCHEMA_VERSION);
    // Recognised as version 3: only migration 4's and 6's columns, 5's, 6's and 8's tables, 7's index and 8's index are new.
    let new_tables = ["validators", "site_locks", "gates", "gate_slots", "media"];
    let after: Vec<String> = unlike_threads(&schema(&watch))
        .into_iter()
        .filter(|sql| !new_tables.iter().any(|t| sql.starts_with(&format!("CREATE TABLE {t} "))) && !sql.contains(" ON media "))
        .collect();
    assert_eq!(after, unlike_threads(&before), "recognised, not migrated again or made anew");
    assert!(has_table(&watch, "validators"), "migration 5 ran");
    assert!(has_column(&watch, "threads", "states_kept"), "migration 4 ran");
    assert_claim_index(&watch);
    assert_fixture_rows(&s);
    assert_eq!(s.keyword_rounds(None).unwrap()[0].error.as_deref(), Some("search: 503 Service Unavailable"));
    assert_eq!((s.last_search("dz", "").unwrap(), s.last_search("dz", "alice").unwrap()), (Some(1794999000000), Some(1795000000000)));
    drop(s);
    let seen: i64 = watch.pragma_query_value(None, "data_version", |r| r.get(0)).unwrap();
    drop(Store::open(&db).unwrap());
    assert_eq!(watch.pragma_query_value(None, "data_version", |r| r.get::<_, i64>(0)).unwrap(), seen, "the second open wrote nothing");
}

#[test]
fn a_new_database_starts_at_the_latest_version() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("sub").join("luntan.db");
    Store::open(&db).unwrap();
    let c = Connection::open(&db).unwrap();
    assert_eq!(user_version(&c), SCHEMA_VERSION);
    assert!(has_column(&c, "keyword_rounds", "error") && has_table(&c, "search_accounts"));
    let journal: String = c.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
}

#[test]
fn stages_opening_a_new_database_at_once_all_succeed() {
    // Each migration re-reads the version under the write lock, so a stage
    // that read 0 before another one migrated does not run a migration twice
    // (a second ALTER TABLE would fail). Timing decides whether this run
    // exercises that, so it is a smoke test.
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("luntan.db");
    let start = std::sync::Barrier::new(6);
    let opened: Vec<Result<Store, StoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    Store::open(&db)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for s in opened {
        s.unwrap();
    }
    assert_eq!(user_version(&Connection::open(&db).unwrap()), SCHEMA_VERSION);
}

#[test]
fn a_database_from_a_newer_luntan_is_refused_untouched() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("luntan.db");
    drop(Store::open(&db).unwrap());
    let c = Connection::open(&db).unwrap();
    c.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    let before = schema(&c);

    let e = Store::open(&db).err().expect("a newer schema is refused");
    assert!(matches!(&e, StoreError::NewerSchema { db: StateUrl::Sqlite(p), version } if p == &db && *version == SCHEMA_VERSION + 1), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with(&db.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("schema version {}", SCHEMA_VERSION + 1)) && msg.contains("newer"), "{msg}");
    assert_eq!((schema(&c), user_version(&c)), (before, SCHEMA_VERSION + 1));
}

#[test]
fn a_database_older_than_version_1_or_not_luntans_is_refused() {
    let t = tempfile::tempdir().unwrap();
    // Before boards had walk_open (6c13d16): that release's own open could not use it either.
    let old = t.path().join("old.db");
    database_from(&old, &format!("{}\nALTER TABLE boards DROP COLUMN walk_open;", v1_fixture()));
    let e = Store::open(&old).err().expect("refused");
    assert!(matches!(e, StoreError::UnknownSchema { .. }) && e.to_string().contains("`boards` lacks column `walk_open`"), "{e}");
    assert_eq!(user_version(&Connection::open(&old).unwrap()), 0, "left as it was");

    let other = t.path().join("other.db");
    database_from(&other, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);");
    let e = Store::open(&other).err().expect("refused");
    assert!(e.to_string().contains("no `threads` table"), "{e}");
    assert_eq!(schema(&Connection::open(&other).unwrap()).len(), 1, "no tables added");
}
