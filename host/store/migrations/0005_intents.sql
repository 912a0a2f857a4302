-- Prepared router intents: the route record a client is asked to sign
-- (its plan, fees and the intent its signature must cover), kept until
-- its deadline so execute runs exactly the plan that was signed.
CREATE TABLE IF NOT EXISTS intents (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    expires_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS intents_expiry ON intents (expires_ms)
