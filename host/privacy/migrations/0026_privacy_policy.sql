-- The privacy lane's policy log (spec §4.11): one row per entry of the
-- hash-chained, signed log of changes to the service's privacy promises.
-- `body` is the exact JSON the entry's hash covers; `hash` chains it to
-- the previous entry; `sig` is the policy key's Ed25519 signature of the
-- hash. Replicas race to append the same entry: the number is the key.
CREATE TABLE IF NOT EXISTS privacy_policy (
    seq BIGINT PRIMARY KEY,
    body TEXT NOT NULL,
    hash TEXT NOT NULL,
    sig TEXT NOT NULL
)
