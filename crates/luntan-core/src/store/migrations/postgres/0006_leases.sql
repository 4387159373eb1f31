-- Version 6 for PostgreSQL: as SQLite's 0006.
ALTER TABLE threads ADD COLUMN lease_owner TEXT;
ALTER TABLE threads ADD COLUMN lease_until BIGINT;
CREATE TABLE site_locks (
    stage         TEXT NOT NULL,
    site          TEXT NOT NULL,
    owner         TEXT NOT NULL,
    until_ms      BIGINT NOT NULL,
    PRIMARY KEY (stage, site)
);
CREATE TABLE gates (
    site          TEXT PRIMARY KEY,
    next_ms       BIGINT NOT NULL
);
CREATE TABLE gate_slots (
    site          TEXT NOT NULL,
    slot          BIGINT NOT NULL,
    owner         TEXT,
    until_ms      BIGINT,
    PRIMARY KEY (site, slot)
);
