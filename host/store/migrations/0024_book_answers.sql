-- The quote book shared by replicas ([limits] backend = "store"): the
-- newest answer of each rail on each lane, as the replica that quoted it
-- published it (JSON), so every replica serves the same fresh answers.
-- Rows older than the book's staleness bound are never served and are
-- pruned.
CREATE TABLE IF NOT EXISTS book_answers (
    lane TEXT NOT NULL,
    rail TEXT NOT NULL,
    quoted_at_ms BIGINT NOT NULL,
    answer TEXT NOT NULL,
    PRIMARY KEY (lane, rail)
);
CREATE INDEX IF NOT EXISTS book_answers_quoted ON book_answers (quoted_at_ms)
