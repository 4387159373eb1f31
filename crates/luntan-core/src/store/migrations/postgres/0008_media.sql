-- Version 8 for PostgreSQL: as SQLite's 0008.
CREATE TABLE media (
    site          TEXT NOT NULL,
    url           TEXT NOT NULL,
    sha256        TEXT,
    content_type  TEXT,
    bytes         BIGINT,
    status        TEXT NOT NULL,
    reason        TEXT,
    fetched_at    TEXT NOT NULL,
    PRIMARY KEY (site, url)
);
CREATE INDEX media_by_hash ON media (sha256);
