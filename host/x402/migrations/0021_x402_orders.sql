-- Paid orders (x402): one row per accepted payment for something a
-- feature sells (a name, a name's sale). The payment's settlement, the
-- seller's payout and a refund are side effects journaled like a route's
-- steps under the row's id (step 0 settle, 1 payout, 2 refund); the row
-- says how far the order got, `hold` reserves what an open order buys (one
-- open order per name), and a lease says which replica drives it.
CREATE TABLE IF NOT EXISTS x402_orders (
    id TEXT PRIMARY KEY,
    feature TEXT NOT NULL,
    idem_key TEXT UNIQUE,
    payment_key TEXT NOT NULL UNIQUE,
    hold TEXT UNIQUE,
    chain_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    body TEXT NOT NULL,
    settle_tx TEXT,
    delivered TEXT,
    payout_tx TEXT,
    refund_tx TEXT,
    error TEXT,
    lease_until_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS x402_orders_state ON x402_orders (state, lease_until_ms)
