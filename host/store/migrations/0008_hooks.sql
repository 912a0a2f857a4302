-- Webhooks (spec §4.5, §6): completion hooks on one route and event
-- subscriptions (price, balance), one row each.
CREATE TABLE IF NOT EXISTS hooks (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    route_id TEXT,
    url TEXT NOT NULL,
    secret TEXT,
    spec TEXT,
    watch_state TEXT,
    status TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS hooks_route ON hooks (route_id);
CREATE INDEX IF NOT EXISTS hooks_kind_status ON hooks (kind, status);
-- One row per logical delivery: its id is the `webhook-id` every attempt
-- carries; a replica sends an attempt only while it holds the lease.
CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY,
    hook_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_ms BIGINT NOT NULL,
    last_status BIGINT,
    last_error TEXT,
    last_ms BIGINT,
    claim_owner TEXT,
    claim_until_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    done_ms BIGINT
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_ms);
CREATE INDEX IF NOT EXISTS deliveries_hook ON deliveries (hook_id);
-- Every attempt, for `GET /api/hooks/{id}`.
CREATE TABLE IF NOT EXISTS delivery_attempts (
    delivery_id TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    status_code BIGINT,
    error TEXT,
    duration_ms BIGINT NOT NULL,
    replica TEXT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
)
