-- Version 7 for PostgreSQL: as SQLite's 0007.
CREATE INDEX threads_claim ON threads (state, site, length(thread), thread);
DROP INDEX threads_by_state;
