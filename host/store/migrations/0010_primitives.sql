-- Route primitives (spec §2.12, §4.4): batches, schedules and
-- conditionals, one row each. `body` is the record's JSON as the
-- primitives crate writes it; `next_ms` is when the watcher next looks at
-- it (NULL: never again); `seq` is the number of runs finished.
-- `lease_until_ms`/`lease_owner`: the replica holding the record for one
-- run (a conditional UPDATE claims it; a lapsed lease may be re-claimed).
CREATE TABLE IF NOT EXISTS primitives (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    next_ms BIGINT,
    seq BIGINT NOT NULL,
    lease_until_ms BIGINT NOT NULL,
    lease_owner TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS primitives_due ON primitives (next_ms);
-- Every run of a schedule or conditional: `run_key` (`<id>:<seq>`) is its
-- idempotency key, so a run is recorded once whatever restarts.
CREATE TABLE IF NOT EXISTS primitive_runs (
    primitive_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    run_key TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (primitive_id, seq)
)
