-- Version 7: claims read their batch in claim order straight off an index.
-- A claim takes the first rows of a state in (site, length(thread), thread)
-- order; with an index on (state, site) alone, every claim sorted all of a
-- site's rows in that state to take 64 of them, so a download of n threads
-- cost n²/64 row reads (11 % of its CPU at 10,000 threads). This index
-- starts with the old one's columns and replaces it.
CREATE INDEX IF NOT EXISTS threads_claim ON threads (state, site, length(thread), thread);
DROP INDEX IF EXISTS threads_by_state;
