-- Version 3 (7bb03b2): when each account last started a search, so a forum's
-- interval between searches spans runs. IF NOT EXISTS because a file from
-- before versions that has this table but lacks version 2's column is taken
-- as version 1, and this migration then finds the table there.
CREATE TABLE IF NOT EXISTS search_accounts ( -- keyword monitoring: when each account last started a search
    site          TEXT NOT NULL,
    account       TEXT NOT NULL,             -- the account's name; '' for searches without one
    last_search_ms INTEGER NOT NULL,         -- Unix milliseconds of the forum's answer
    PRIMARY KEY (site, account)
);
