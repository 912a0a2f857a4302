-- Uptime samples (spec §4.1 `/api/uptime`): one per 30 s probe slot,
-- whichever replica takes it first, kept 90 days, so the report survives
-- restarts and is the same from every replica.
CREATE TABLE IF NOT EXISTS uptime_samples (
    slot BIGINT PRIMARY KEY,
    ts_ms BIGINT NOT NULL,
    day TEXT NOT NULL,
    verdict TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS uptime_samples_day ON uptime_samples (day)
