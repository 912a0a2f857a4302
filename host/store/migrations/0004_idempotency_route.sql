-- The route an idempotency key created, written in the route's own insert
-- transaction: a retry after a crash finds it instead of creating another.
ALTER TABLE idempotency ADD COLUMN route_id TEXT
