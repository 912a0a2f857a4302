-- Developer keys (spec §2.13, §4.5, §5.2). A key is stored only as the
-- SHA-256 of its text, never the key itself. `changed_ms` moves on create
-- and on revoke, so replicas refresh their in-memory key sets from the
-- rows changed since their last look.
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash TEXT PRIMARY KEY,
    prefix TEXT NOT NULL,
    label TEXT,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT,
    changed_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS api_keys_changed ON api_keys (changed_ms);
-- Usage counted per key, minute and matched route template (bounded
-- cardinality), written in batches by every replica and summed on read.
CREATE TABLE IF NOT EXISTS key_usage_minutes (
    key_hash TEXT NOT NULL,
    minute_ms BIGINT NOT NULL,
    path TEXT NOT NULL,
    total BIGINT NOT NULL,
    errors BIGINT NOT NULL,
    PRIMARY KEY (key_hash, minute_ms, path)
);
CREATE INDEX IF NOT EXISTS key_usage_minutes_minute ON key_usage_minutes (minute_ms);
-- The latest requests of each key (trimmed to the newest few per key).
CREATE TABLE IF NOT EXISTS key_usage_recent (
    key_hash TEXT NOT NULL,
    ts_ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS key_usage_recent_key ON key_usage_recent (key_hash, ts_ms, seq);
CREATE INDEX IF NOT EXISTS key_usage_recent_ts ON key_usage_recent (ts_ms)
