-- Which relayer key signed a journaled transaction (lower-case address), so a
-- route resumes on the key it started with and each key's nonce-gap check
-- sees only its own open nonces. Rows from before the key pool have none:
-- they were the relayer key's.
ALTER TABLE tx_journal ADD COLUMN signer TEXT
