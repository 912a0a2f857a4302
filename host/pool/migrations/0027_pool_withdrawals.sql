-- The privacy pool's withdrawals (relay-pool): at most one live row (not
-- FAILED) per nullifier hash, found by its ticket (`id`): a note whose
-- withdrawal failed without spending it can be withdrawn again. `state` moves HELD -> SENDING -> SENT, or to
-- FAILED; `states` is the JSON history the ticket shows. The transaction
-- itself is in the route journal under the ticket (step 0).
CREATE TABLE IF NOT EXISTS pool_withdrawals (
    id TEXT PRIMARY KEY,
    nullifier TEXT NOT NULL,
    state TEXT NOT NULL,
    body TEXT NOT NULL,
    send_after_ms BIGINT NOT NULL,
    tx_hash TEXT,
    error TEXT,
    states TEXT NOT NULL,
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS pool_withdrawals_live ON pool_withdrawals (nullifier) WHERE state <> 'FAILED';
CREATE INDEX IF NOT EXISTS pool_withdrawals_due ON pool_withdrawals (state, send_after_ms);
