-- Version 2 (229a7cd): a keyword round keeps its first error, and a keyword's
-- record shows the latest round's. From that release until c3d4f4d, CREATE
-- TABLE also gave `rounds` an `error` column that nothing reads or writes:
-- files made then keep it, no other file gets it.
ALTER TABLE keyword_rounds ADD COLUMN error TEXT;  -- the round's first error; the record was left as it was
