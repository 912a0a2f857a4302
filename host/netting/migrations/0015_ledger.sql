-- Custodial netting accounts (spec §2.15, §4.7) on a double-entry ledger.
-- Every movement is one entry of balanced postings (they sum to zero),
-- written in one transaction with the balances it moves; nothing is ever
-- edited (a failed payout is undone by a reversing entry).
--
-- One row per account: `user:<address>` (an enrolled address, lowercase;
-- its balance may never go negative) or a system account (`float:<chain>`,
-- `payout-fees`; signed). `balance` caches the sum of the account's
-- postings and is moved only in the entry's transaction, by a conditional
-- update (`balance + delta` within bounds, `nonce < $n`), which is what
-- serialises concurrent movements of one account on both databases.
CREATE TABLE IF NOT EXISTS ledger_accounts (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    balance BIGINT NOT NULL,
    nonce BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
-- One row per entry; `request_key` makes every request apply once:
-- `deposit:<chain>:<tx>`, `transfer:<address>:<nonce>`,
-- `withdraw:<address>:<nonce>`, `reverse:<entry id>`.
CREATE TABLE IF NOT EXISTS ledger_entries (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    request_key TEXT NOT NULL UNIQUE,
    memo TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_postings (
    entry_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    account_id TEXT NOT NULL,
    amount BIGINT NOT NULL,
    PRIMARY KEY (entry_id, seq)
);
CREATE INDEX IF NOT EXISTS ledger_postings_account ON ledger_postings (account_id);
-- Running totals checked inside the entry's transaction: `liabilities`
-- (the sum of every user balance) against the safe share of float.
CREATE TABLE IF NOT EXISTS ledger_totals (
    id TEXT PRIMARY KEY,
    amount BIGINT NOT NULL
);
INSERT INTO ledger_totals (id, amount) VALUES ('liabilities', 0) ON CONFLICT DO NOTHING;
-- Enrolments: the terms text an address signed.
CREATE TABLE IF NOT EXISTS netting_enrolments (
    address TEXT PRIMARY KEY,
    terms_version TEXT NOT NULL,
    signature TEXT NOT NULL,
    enrolled_ms BIGINT NOT NULL
);
-- Withdrawals: the payout the withdraw entry owes, journaled under `id`
-- (step 0) and driven by one replica at a time (lease).
CREATE TABLE IF NOT EXISTS netting_withdrawals (
    id TEXT PRIMARY KEY,
    entry_id TEXT NOT NULL UNIQUE,
    address TEXT NOT NULL,
    amount BIGINT NOT NULL,
    payout_cost BIGINT NOT NULL,
    to_chain BIGINT NOT NULL,
    to_address TEXT NOT NULL,
    state TEXT NOT NULL,
    tx_hash TEXT,
    error TEXT,
    lease_until_ms BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS netting_withdrawals_state ON netting_withdrawals (state, lease_until_ms)
