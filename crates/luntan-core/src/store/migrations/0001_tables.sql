-- Version 1: the tables as luntan created them before the schema had a version
-- (up to 6c13d16). Released migrations are never edited; a change is the next file.
CREATE TABLE IF NOT EXISTS sites (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    home          TEXT NOT NULL,
    encoding      TEXT,            -- detected encoding, cached as S3 does
    encoding_why  TEXT,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE TABLE IF NOT EXISTS boards (
    site          TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    title         TEXT,
    pages_read    INTEGER NOT NULL DEFAULT 0,
    last_visit    TEXT,
    interval_secs INTEGER,          -- adaptive re-check interval (S1 / Nutch)
    next_visit    INTEGER,          -- unix seconds; a round skips the board before it
    walk_open     INTEGER NOT NULL DEFAULT 0,  -- 1 while a walk is under way or after one broke off
    PRIMARY KEY (site, board)
);
CREATE TABLE IF NOT EXISTS skipped_links (   -- focused crawling (S2): below the threshold
    site          TEXT NOT NULL,
    thread        TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    anchor        TEXT,
    score         REAL NOT NULL,
    seen_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, thread)
);
CREATE TABLE IF NOT EXISTS rounds (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    site          TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    finished_at   TEXT NOT NULL,
    requests      INTEGER NOT NULL,
    list_pages    INTEGER NOT NULL,
    boards_visited INTEGER NOT NULL,
    boards_skipped INTEGER NOT NULL,
    new_threads   INTEGER NOT NULL,
    updated_threads INTEGER NOT NULL,
    errors        INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS threads (
    site          TEXT NOT NULL,
    thread        TEXT NOT NULL,
    board         TEXT NOT NULL,
    url           TEXT NOT NULL,
    title         TEXT,
    replies       INTEGER,
    last_post     TEXT,
    post_time     TEXT,
    save_date     TEXT,             -- YYYYMMDD: names the HTML directory
    pages         INTEGER,
    content_type  TEXT,
    state         INTEGER NOT NULL DEFAULT 0,  -- visitedFlag, see state.rs
    fail_stage    TEXT,
    fail_reason   TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    discovered_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, thread)
);
CREATE INDEX IF NOT EXISTS threads_by_state ON threads (state, site);
CREATE TABLE IF NOT EXISTS keywords (        -- keyword monitoring (S0): {keyword, lastresult, pagenum, date}
    site          TEXT NOT NULL,
    keyword       TEXT NOT NULL,
    lastresult    INTEGER NOT NULL,          -- smallest result page found already seen last round (max pages: none)
    pagenum       INTEGER NOT NULL,          -- result pages to read next round
    watermark     TEXT,                      -- newest post time seen: older results are stored
    rounds        INTEGER NOT NULL DEFAULT 0,
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    PRIMARY KEY (site, keyword)
);
CREATE TABLE IF NOT EXISTS keyword_rounds (  -- one row per keyword per round, for luntan-status and tests
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    site          TEXT NOT NULL,
    keyword       TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    budget        INTEGER NOT NULL,          -- pagenum this round
    pages_read    INTEGER NOT NULL,
    lastresult    INTEGER NOT NULL,
    next_pagenum  INTEGER NOT NULL,
    watermark_before TEXT,
    watermark_after  TEXT,
    results       INTEGER NOT NULL,
    new_threads   INTEGER NOT NULL,
    updated_threads INTEGER NOT NULL,
    errors        INTEGER NOT NULL
);
