-- Erasure requests (spec §8.2): an address's owner asks for its routes to
-- be erased. The address is kept only until the request completes (at
-- most `due_ms`, 7 days after it was made); the keyed tag stays so the
-- owner can fetch the signed erasure statement. At most one pending
-- request per tag.
CREATE TABLE IF NOT EXISTS erasure_requests (
    id TEXT PRIMARY KEY,
    tag TEXT NOT NULL,
    address TEXT NOT NULL,
    requested_ms BIGINT NOT NULL,
    due_ms BIGINT NOT NULL,
    routes_erased BIGINT NOT NULL DEFAULT 0,
    in_flight BIGINT NOT NULL DEFAULT 0,
    completed_ms BIGINT
);
CREATE UNIQUE INDEX IF NOT EXISTS erasure_pending_tag ON erasure_requests (tag) WHERE completed_ms IS NULL;
-- Settlement proofs (spec §2.3 `settlementProven`): per node (a non-EVM
-- node's name, or `same-chain`), the first route whose delivery the host
-- verified on chain.
CREATE TABLE IF NOT EXISTS settlement_proofs (
    node TEXT PRIMARY KEY,
    route_id TEXT NOT NULL,
    verified_ms BIGINT NOT NULL
)
