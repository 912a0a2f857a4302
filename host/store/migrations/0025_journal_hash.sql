-- A journaled transaction by its hash, in lower case: the explorer's search
-- (a route by any transaction the relayer sent for it) and the checks that
-- a transaction a caller brings is not the relayer's own read it without
-- scanning the journal.
CREATE INDEX IF NOT EXISTS tx_journal_hash ON tx_journal (LOWER(tx_hash))
