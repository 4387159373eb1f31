-- Version 5 for PostgreSQL: as SQLite's 0005.
CREATE TABLE validators (
    site          TEXT NOT NULL,
    url           TEXT NOT NULL,
    etag          TEXT,
    last_modified TEXT,
    PRIMARY KEY (site, url)
);
