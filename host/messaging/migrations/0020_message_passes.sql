-- Plus passes (spec §4.10, §8.2). The spent set: the nonce of every
-- redeemed token, shared by every replica and kept across restarts until
-- its issuer key can no longer redeem (the key's epoch is kept for that).
-- Nothing links a spent nonce to a claim: issuance is blind (RFC 9474).
CREATE TABLE IF NOT EXISTS message_passes_spent (
    nonce TEXT PRIMARY KEY,
    epoch BIGINT NOT NULL
);
-- Bounded counts per caller per window, shared by every replica: the
-- Plus pass claims of a UTC day (`claims`: n = claims, m = passes) and
-- the sends without a pass of a minute (`sends`: n = sends). The caller is
-- an HMAC of the client IP under a key derived from the relayer key (no
-- IP is stored); a count is dropped once its window has passed.
CREATE TABLE IF NOT EXISTS message_counts (
    counter TEXT NOT NULL,
    caller TEXT NOT NULL,
    win BIGINT NOT NULL,
    n BIGINT NOT NULL,
    m BIGINT NOT NULL,
    PRIMARY KEY (counter, caller, win)
);
