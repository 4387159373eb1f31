-- Version 3 for PostgreSQL: as SQLite's 0003.
CREATE TABLE search_accounts (
    site          TEXT NOT NULL,
    account       TEXT NOT NULL,
    last_search_ms BIGINT NOT NULL,
    PRIMARY KEY (site, account)
);
