-- Yield-account spends are delivered by an engine route (spec §4.6): the
-- row is driven by one replica at a time (lease), and a delivery that
-- fails before anything left the relayer refunds the redeemed assets to
-- the agent on the source chain (refund_tx).
ALTER TABLE ncaccount_spends ADD COLUMN lease_until_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ncaccount_spends ADD COLUMN refund_tx TEXT;
