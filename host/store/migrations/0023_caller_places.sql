-- Caps on live things per caller, shared by replicas ([limits] backend =
-- "store"): one row per place a caller holds in a kind (an open router
-- intent per client IP), until it lapses. A place is taken only while the
-- caller holds fewer than the cap (under a per-caller lock on Postgres).
CREATE TABLE IF NOT EXISTS caller_places (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    caller TEXT NOT NULL,
    until_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS caller_places_caller ON caller_places (kind, caller, until_ms)
