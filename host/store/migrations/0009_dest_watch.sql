-- Routes whose rail's upstream has no status API: the host watches the
-- destination chain for the payout. `from_block` is where the watch began
-- (the destination's head then, less a margin); `next_block` is the first
-- block not yet scanned. A restarted host resumes from them.
CREATE TABLE IF NOT EXISTS dest_watches (
    route_id TEXT PRIMARY KEY,
    chain BIGINT NOT NULL,
    token TEXT NOT NULL,
    recipient TEXT NOT NULL,
    min_out TEXT NOT NULL,
    from_block BIGINT NOT NULL,
    next_block BIGINT NOT NULL,
    started_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
-- Payout logs claimed as a watched route's destTx: one route per log, one
-- log per route, so two routes to the same recipient never share a payout.
CREATE TABLE IF NOT EXISTS dest_claims (
    chain BIGINT NOT NULL,
    tx_hash TEXT NOT NULL,
    log_index BIGINT NOT NULL,
    route_id TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (chain, tx_hash, log_index)
);
CREATE UNIQUE INDEX IF NOT EXISTS dest_claims_route ON dest_claims (route_id)
