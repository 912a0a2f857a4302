-- The operator's audit log: one row per change of operator state (a rail
-- enabled or disabled, a lane's executeReady switched), whoever made it —
-- the dashboard (`owner-token`) or the CLI (`cli:<user>`). `lane` is NULL
-- for a rail switch; `before_on`/`after_on` are 0/1 (`before_on` is the
-- effective value before the change, defaults included).
CREATE TABLE IF NOT EXISTS operator_audit (
    id TEXT PRIMARY KEY,
    at_ms BIGINT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    rail_id TEXT NOT NULL,
    lane TEXT,
    before_on BIGINT NOT NULL,
    after_on BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS operator_audit_at ON operator_audit (at_ms)
