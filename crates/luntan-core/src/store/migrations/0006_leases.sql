-- Version 6: work claimed, not assumed. A worker that takes a thread leases
-- it: its name and when the lease runs out (Unix milliseconds); a thread
-- whose lease has run out is free for another worker, so one killed mid-batch
-- holds its rows only that long. A stage that has one writer per site (index,
-- discover) holds the site by the same kind of lease on a row of site_locks.
ALTER TABLE threads ADD COLUMN lease_owner TEXT;
ALTER TABLE threads ADD COLUMN lease_until INTEGER;
CREATE TABLE site_locks (
    stage         TEXT NOT NULL,
    site          TEXT NOT NULL,
    owner         TEXT NOT NULL,
    until_ms      INTEGER NOT NULL,
    PRIMARY KEY (stage, site)
);
-- Politeness shared by every worker: per forum, the earliest start of its
-- next request (Unix milliseconds, the database's clock) and one row per
-- request slot, leased to the worker whose request holds it.
CREATE TABLE gates (
    site          TEXT PRIMARY KEY,
    next_ms       INTEGER NOT NULL
);
CREATE TABLE gate_slots (
    site          TEXT NOT NULL,
    slot          INTEGER NOT NULL,
    owner         TEXT,
    until_ms      INTEGER,
    PRIMARY KEY (site, slot)
);
