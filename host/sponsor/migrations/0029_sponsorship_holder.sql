-- Who holds a sponsorship's lease (the replica driving it). Without it a
-- driver whose step outlasted the lease (a settlement waiting on a slow
-- block) renewed a lease another replica had taken meanwhile, and both
-- drove the record: one sponsored it, the other refunded the payment.
-- Renewals and moves now name their holder.
ALTER TABLE sponsorships ADD COLUMN lease_owner TEXT
