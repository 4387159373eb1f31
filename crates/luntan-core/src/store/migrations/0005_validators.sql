-- Version 5: conditional requests. What the forum said identifies a page's
-- content (its ETag, its Last-Modified), kept per URL, sent back with the next
-- request for it (If-None-Match, If-Modified-Since): a page that has not
-- changed is answered 304 with no body.
CREATE TABLE validators (
    site          TEXT NOT NULL,
    url           TEXT NOT NULL,
    etag          TEXT,
    last_modified TEXT,
    PRIMARY KEY (site, url)
);
