-- Version 4: browser mode (S4). A thread read in a browser keeps the DOM
-- states its events reached; these count them, kept (saved as its pages)
-- and dropped as duplicates. NULL for threads not read in a browser.
ALTER TABLE threads ADD COLUMN states_kept INTEGER;
ALTER TABLE threads ADD COLUMN states_dropped INTEGER;
