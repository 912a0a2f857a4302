-- The ranking a live execute chose from (every applicable rail's netted
-- answer, as compare shows it), kept so `/api/route/why` explains the
-- decision as it was made, not as the market stands later.
CREATE TABLE IF NOT EXISTS route_decisions (
    route_id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    created_ms BIGINT NOT NULL
)
