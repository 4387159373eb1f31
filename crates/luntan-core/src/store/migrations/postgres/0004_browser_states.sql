-- Version 4 for PostgreSQL: as SQLite's 0004.
ALTER TABLE threads ADD COLUMN states_kept BIGINT;
ALTER TABLE threads ADD COLUMN states_dropped BIGINT;
