-- Yield-account spends (spec §4.6): one row per accepted EIP-712 spend
-- intent. (agent, src_chain, nonce) is unique, so an intent's nonce is spent
-- once whatever replica sees it; idem_key is the client's
-- x-idempotency-key. The two side effects (redeem on the source chain,
-- payout on the destination) are journaled like a route's steps under the
-- row's id (step 0 redeem, 1 deliver).
CREATE TABLE IF NOT EXISTS ncaccount_spends (
    id TEXT PRIMARY KEY,
    idem_key TEXT UNIQUE,
    agent TEXT NOT NULL,
    src_chain BIGINT NOT NULL,
    nonce TEXT NOT NULL,
    state TEXT NOT NULL,
    body TEXT NOT NULL,
    redeem_tx TEXT,
    deliver_tx TEXT,
    error TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    UNIQUE (agent, src_chain, nonce)
);
CREATE INDEX IF NOT EXISTS ncaccount_spends_state ON ncaccount_spends (state)
