-- Shared rate limits ([limits] backend = "store"): one GCRA cell per
-- (bucket, client) — its theoretical arrival time, epoch ms — so every
-- replica on this database counts a client once. A cell whose time has
-- passed is a full bucket and is pruned.
CREATE TABLE IF NOT EXISTS rate_limit_cells (
    k TEXT PRIMARY KEY,
    tat_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_limit_cells_tat ON rate_limit_cells (tat_ms)
