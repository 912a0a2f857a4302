-- Routes: one row per route, a persisted state machine.
CREATE TABLE IF NOT EXISTS routes (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    version BIGINT NOT NULL,
    body TEXT NOT NULL,
    terminal BIGINT NOT NULL,
    claim_owner TEXT,
    claim_until_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS routes_open ON routes (terminal, claim_until_ms);
-- Every side effect, journaled before and after it happens.
CREATE TABLE IF NOT EXISTS tx_journal (
    route_id TEXT NOT NULL,
    step BIGINT NOT NULL,
    attempt BIGINT NOT NULL,
    chain TEXT NOT NULL,
    nonce BIGINT,
    payload TEXT NOT NULL,
    tx_hash TEXT,
    state TEXT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (route_id, step, attempt)
);
-- Idempotency keys: the request fingerprint and the first response.
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status_code BIGINT,
    response TEXT,
    created_ms BIGINT NOT NULL
);
-- The outbox: webhook-ready events written in the same transaction as the
-- state change they describe.
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY,
    route_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    delivered_ms BIGINT
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (delivered_ms, created_ms)
