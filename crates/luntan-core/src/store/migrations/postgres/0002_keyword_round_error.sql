-- Version 2 for PostgreSQL: as SQLite's 0002.
ALTER TABLE keyword_rounds ADD COLUMN error TEXT;
