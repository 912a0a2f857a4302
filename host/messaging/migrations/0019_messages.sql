-- Sealed messaging v2 (spec §4.10). A row is exactly the three fields a
-- sender posts (the ephemeral key is also the replay guard) plus where it
-- sits: the release slot it waits for and, once released, its place in
-- the public feed. Nothing else about a message is kept — no sender, no
-- address, no IP, no arrival time finer than the 60 s slot — and the
-- host's own cover decoys are rows like any other, with no mark.
CREATE TABLE IF NOT EXISTS message_rows (
    ephemeral_pub_key TEXT PRIMARY KEY,
    view_tag TEXT NOT NULL,
    ct TEXT NOT NULL,
    release_ms BIGINT NOT NULL,
    seq BIGINT UNIQUE
);
CREATE INDEX IF NOT EXISTS message_rows_pending ON message_rows (release_ms) WHERE seq IS NULL;
-- One row per released slot: a slot is released (its rows numbered, its
-- decoys added) once, by whichever replica gets there first.
CREATE TABLE IF NOT EXISTS message_slots (
    slot_ms BIGINT PRIMARY KEY,
    released BIGINT NOT NULL
);
-- The witness log: every mailbox publication (and, with names, every
-- handle transfer) in order. `body` is the public binding itself (the
-- signed publication), `b` its SHA-256, `r` the chained root.
CREATE TABLE IF NOT EXISTS message_witness (
    s BIGINT PRIMARY KEY,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    b TEXT NOT NULL,
    r TEXT NOT NULL,
    t BIGINT NOT NULL
)
