-- Version 8: the media archive (`luntan-media`). One row per picture or
-- attachment URL a thread's XML names, on a forum whose site file has
-- <media>: what its content hashed to (the file is
-- media/<first 2 hex>/<sha256>, one per content however many URLs show it),
-- or why it is not kept. A URL with a row is not fetched again
-- (--retry-failed forgets the failed ones first).
CREATE TABLE media (
    site          TEXT NOT NULL,
    url           TEXT NOT NULL,
    sha256        TEXT,
    content_type  TEXT,
    bytes         INTEGER,
    status        TEXT NOT NULL,    -- 'archived' or 'failed'
    reason        TEXT,             -- why it failed: HTTP 404, robots.txt, over the cap, its type
    fetched_at    TEXT NOT NULL,
    PRIMARY KEY (site, url)
);
CREATE INDEX media_by_hash ON media (sha256);
