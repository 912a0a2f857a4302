-- Sponsored EIP-7702 transactions paid with x402 (spec §4.8): one row per
-- accepted payment. The payment (an EIP-3009 authorization) and the
-- sponsorship are side effects journaled like a route's steps, under the
-- row's id (step 0 settle, 1 sponsor, 2 refund); the row says how far the
-- pair got, and a lease says which replica drives it.
CREATE TABLE IF NOT EXISTS sponsorships (
    id TEXT PRIMARY KEY,
    idem_key TEXT UNIQUE,
    payment_key TEXT NOT NULL UNIQUE,
    chain_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    body TEXT NOT NULL,
    settle_tx TEXT,
    sponsor_tx TEXT,
    refund_tx TEXT,
    error TEXT,
    lease_until_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS sponsorships_state ON sponsorships (state, lease_until_ms)
