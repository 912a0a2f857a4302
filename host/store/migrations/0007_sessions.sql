-- Policy-gated agent sessions (spec §2.13, §4.5): one row per session.
-- `spend_seq` is bumped by every spend reservation, so the reservation's
-- transaction starts with a write on this row (a row lock on Postgres,
-- the write lock on SQLite) and concurrent reservations serialise.
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    bearer_hash TEXT NOT NULL UNIQUE,
    label TEXT,
    policy TEXT NOT NULL,
    fund_address TEXT NOT NULL,
    refund_to TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT,
    spend_seq BIGINT NOT NULL,
    swept_ms BIGINT,
    sweep_until_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_sweep ON sessions (swept_ms, status, expires_ms);
-- Every spend a session reserved: the amount (U256, decimal), and the
-- route it became once prepared (`reserved`) and started (`routed`).
CREATE TABLE IF NOT EXISTS session_spends (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    amount TEXT NOT NULL,
    route_id TEXT,
    state TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS session_spends_window ON session_spends (session_id, created_ms)
