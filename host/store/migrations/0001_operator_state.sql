-- Operator state: rails on/off and executeReady per lane.
CREATE TABLE IF NOT EXISTS operator_rails (
    rail_id TEXT PRIMARY KEY,
    enabled BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS operator_lanes (
    rail_id TEXT NOT NULL,
    lane TEXT NOT NULL,
    execute_ready BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (rail_id, lane)
);
