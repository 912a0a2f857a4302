-- The next nonce of each relayer account per chain, shared by every replica
-- serving that key: allocation is one atomic upsert (see store/nonces.rs).
CREATE TABLE IF NOT EXISTS relayer_nonces (
    chain TEXT NOT NULL,
    address TEXT NOT NULL,
    next_nonce BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (chain, address)
)
