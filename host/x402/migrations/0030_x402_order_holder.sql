-- Who holds an order's lease (the replica driving it). Without it a
-- driver whose step outlasted the lease (a settlement waiting on a slow
-- block) renewed a lease another replica had taken meanwhile, and both
-- drove the order (the soak found it on sponsorships, which ran the same
-- way). Renewals and moves now name their holder.
ALTER TABLE x402_orders ADD COLUMN lease_owner TEXT
