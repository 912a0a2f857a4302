//! The double-entry ledger behind custodial netting accounts (spec §2.15,
//! §4.7).
//!
//! Every movement is one **entry** of **postings** that sum to zero,
//! written in one database transaction together with the balances it
//! moves ([`Ledger::post_entry`]). Nothing is edited afterwards: a payout
//! that fails is undone by a reversing entry.
//!
//! - Accounts: `user:<address>` (lowercase; created at enrolment; its
//!   balance may never go negative and never exceed the entry's
//!   `max_balance`) and system accounts (`float:<chain>`, `payout-fees`;
//!   signed, created on first use).
//! - Balances: each account row caches the sum of its postings, moved only
//!   inside the entry's transaction by a conditional update (`balance +
//!   delta` within bounds, and for the spending account `nonce < $n`, the
//!   nonce then set to `$n`). The conditional update is what serialises
//!   concurrent movements of one account: a row lock on Postgres (the
//!   `WHERE` is re-checked after the lock), the write lock on SQLite (every
//!   transaction here starts with a write). [`Ledger::ledger_check`] sums
//!   the postings and compares.
//! - Idempotency: every entry carries a unique `request_key`; the second
//!   request with a key writes nothing and gets the first entry back.
//! - The safe share: `ledger_totals.liabilities` (the sum of every user
//!   balance) is moved in the same transaction, and an entry that raises it
//!   may carry a cap it must stay within.
//! - Lock order (no deadlock on Postgres): the entry's key, the totals row,
//!   then account rows sorted by id.

mod withdrawals;

pub use withdrawals::{WithdrawalMove, WithdrawalRow};

/// This feature's migrations: the ledger, enrolments and withdrawals.
pub const MIGRATIONS: &[relay_store::Migration] = &[relay_store::Migration {
    version: 15,
    sql: include_str!("../migrations/0015_ledger.sql"),
}];

relay_store::store_view! {
    /// The store as the ledger uses it: every method of [`Store`](relay_store::Store), plus the
    /// ledger's own.
    pub Ledger
}

use relay_store::StoreError;
use sqlx::{Any, Row, Transaction};
use std::collections::BTreeMap;

/// The account id of an enrolled address (lowercase hex).
pub fn user_account(address: &str) -> String {
    format!("user:{}", address.to_ascii_lowercase())
}

/// Whether `account` is a user account (never negative).
pub fn is_user_account(account: &str) -> bool {
    account.starts_with("user:")
}

/// One posting: `amount` (signed, smallest units) to `account`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posting {
    /// The account id.
    pub account: String,
    /// Signed amount: positive credits the account.
    pub amount: i64,
}

/// An entry to write ([`Ledger::post_entry`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    /// `le_…`.
    pub id: String,
    /// `deposit`, `transfer`, `withdraw` or `reversal`.
    pub kind: String,
    /// Unique per request: a second entry with it is not written.
    pub request_key: String,
    /// What the entry is for (JSON).
    pub memo: String,
    /// The postings; they must sum to zero.
    pub postings: Vec<Posting>,
    /// The account whose nonce this entry spends, and the nonce: refused
    /// unless it is above the account's, which then becomes it.
    pub nonce: Option<(String, u64)>,
    /// No user balance this entry credits may end above this; a debit is
    /// never refused by it (a balance a reversal lifted above the cap can
    /// still be spent).
    pub max_balance: i64,
    /// When set, total liabilities may not end above it.
    pub liabilities_cap: Option<i64>,
    /// Epoch ms.
    pub created_ms: u64,
}

/// A written entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRow {
    /// `le_…`.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// Its request key.
    pub request_key: String,
    /// Its memo (JSON).
    pub memo: String,
    /// Epoch ms.
    pub created_ms: u64,
    /// Its postings, in order.
    pub postings: Vec<Posting>,
}

/// Why an entry was not written (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The postings do not sum to zero, or an amount is out of range.
    Unbalanced,
    /// A user account does not exist (the address is not enrolled).
    UnknownAccount(String),
    /// The nonce is at or below the account's.
    NonceSpent {
        /// The account.
        account: String,
        /// Its nonce now.
        current: u64,
    },
    /// The account's balance would go negative.
    Insufficient {
        /// The account.
        account: String,
        /// Its balance now.
        balance: i64,
    },
    /// The account's balance would exceed `max_balance`.
    OverBalanceCap {
        /// The account.
        account: String,
        /// Its balance now.
        balance: i64,
    },
    /// Liabilities would exceed the cap.
    OverSafeShare {
        /// Liabilities now.
        liabilities: i64,
    },
}

/// What [`Ledger::post_entry`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Posted {
    /// Written.
    New(EntryRow),
    /// The request key was used: the first entry, nothing written.
    Duplicate(EntryRow),
    /// Refused; nothing written.
    Refused(Refusal),
}

/// One account's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    /// The id.
    pub id: String,
    /// `user` or `system`.
    pub kind: String,
    /// The cached balance (the sum of its postings).
    pub balance: i64,
    /// The last nonce spent (0: none).
    pub nonce: u64,
}

/// What [`Ledger::ledger_check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerCheck {
    /// The sum of every posting (0 when balanced).
    pub postings_sum: i128,
    /// Entries whose postings do not sum to zero.
    pub unbalanced_entries: Vec<String>,
    /// Accounts whose cached balance is not the sum of their postings:
    /// `(id, cached, summed)`.
    pub mismatched: Vec<(String, i64, i64)>,
    /// User accounts below zero.
    pub negative: Vec<String>,
    /// The liabilities total as cached and as summed over user accounts.
    pub liabilities: (i64, i64),
}

impl LedgerCheck {
    /// Whether every invariant holds.
    pub fn ok(&self) -> bool {
        self.postings_sum == 0
            && self.unbalanced_entries.is_empty()
            && self.mismatched.is_empty()
            && self.negative.is_empty()
            && self.liabilities.0 == self.liabilities.1
    }
}

/// Extra work done in the entry's transaction.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Also<'a> {
    /// Nothing.
    Nothing,
    /// Record a new withdrawal.
    Withdrawal(&'a WithdrawalRow),
    /// Move a withdrawal (the reversal of a failed payout).
    Move(&'a str, &'a WithdrawalMove),
}

fn ms(r: &sqlx::any::AnyRow, col: &str) -> Result<u64, StoreError> {
    Ok(r.try_get::<i64, _>(col)? as u64)
}

fn account_row(r: &sqlx::any::AnyRow) -> Result<AccountRow, StoreError> {
    Ok(AccountRow {
        id: r.try_get("id")?,
        kind: r.try_get("kind")?,
        balance: r.try_get("balance")?,
        nonce: ms(r, "nonce")?,
    })
}

/// Per account (sorted): the net delta and the nonce to spend.
fn moves(e: &NewEntry) -> Option<BTreeMap<String, (i64, Option<u64>)>> {
    let mut out: BTreeMap<String, (i64, Option<u64>)> = BTreeMap::new();
    for p in &e.postings {
        let m = out.entry(p.account.clone()).or_default();
        m.0 = m.0.checked_add(p.amount)?;
    }
    if let Some((account, n)) = &e.nonce {
        out.entry(account.clone()).or_default().1 = Some(*n);
    }
    Some(out)
}

fn balanced(e: &NewEntry) -> bool {
    let sum = e
        .postings
        .iter()
        .map(|p| i128::from(p.amount))
        .sum::<i128>();
    sum == 0 && !e.postings.is_empty() && e.nonce.iter().all(|(_, n)| *n <= i64::MAX as u64)
}

impl Ledger {
    /// Writes `e` with the balances it moves, in one transaction — or
    /// nothing, when its request key was used ([`Posted::Duplicate`]) or
    /// a bound does not hold ([`Posted::Refused`]).
    pub async fn post_entry(&self, e: &NewEntry) -> Result<Posted, StoreError> {
        self.post_entry_with(e, Also::Nothing).await
    }

    pub(crate) async fn post_entry_with(
        &self,
        e: &NewEntry,
        also: Also<'_>,
    ) -> Result<Posted, StoreError> {
        let Some(moves) = moves(e).filter(|_| balanced(e)) else {
            return Ok(Posted::Refused(Refusal::Unbalanced));
        };
        let mut tx = self.pool().begin().await?;
        // The write comes first: it takes the lock (module docs).
        let inserted = sqlx::query(
            "INSERT INTO ledger_entries (id, kind, request_key, memo, created_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(&e.id)
        .bind(&e.kind)
        .bind(&e.request_key)
        .bind(&e.memo)
        .bind(e.created_ms as i64)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() != 1 {
            tx.rollback().await?;
            let first = self.ledger_entry_by_key(&e.request_key).await?;
            return first
                .map(Posted::Duplicate)
                .ok_or_else(|| StoreError::Corrupt("entry conflict without a row".into()));
        }
        if let Some(refusal) = apply(&mut tx, e, &moves).await? {
            tx.rollback().await?;
            return Ok(Posted::Refused(refusal));
        }
        for (seq, p) in e.postings.iter().enumerate() {
            sqlx::query(
                "INSERT INTO ledger_postings (entry_id, seq, account_id, amount) VALUES ($1, $2, $3, $4)",
            )
            .bind(&e.id)
            .bind(seq as i64)
            .bind(&p.account)
            .bind(p.amount)
            .execute(&mut *tx)
            .await?;
        }
        withdrawals::also(&mut tx, also, e.created_ms).await?;
        tx.commit().await?;
        Ok(Posted::New(EntryRow {
            id: e.id.clone(),
            kind: e.kind.clone(),
            request_key: e.request_key.clone(),
            memo: e.memo.clone(),
            created_ms: e.created_ms,
            postings: e.postings.clone(),
        }))
    }

    /// The entry written for `request_key`.
    pub async fn ledger_entry_by_key(&self, key: &str) -> Result<Option<EntryRow>, StoreError> {
        self.entry_where("request_key", key).await
    }

    /// Entry `id`.
    pub async fn ledger_entry(&self, id: &str) -> Result<Option<EntryRow>, StoreError> {
        self.entry_where("id", id).await
    }

    async fn entry_where(&self, column: &str, value: &str) -> Result<Option<EntryRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT id, kind, request_key, memo, created_ms FROM ledger_entries WHERE {column} = $1"
        ))
        .bind(value)
        .fetch_optional(self.pool())
        .await?;
        let Some(r) = r else { return Ok(None) };
        let id: String = r.try_get("id")?;
        let postings = sqlx::query(
            "SELECT account_id, amount FROM ledger_postings WHERE entry_id = $1 ORDER BY seq",
        )
        .bind(&id)
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(|p| {
            Ok(Posting {
                account: p.try_get("account_id")?,
                amount: p.try_get("amount")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Some(EntryRow {
            id,
            kind: r.try_get("kind")?,
            request_key: r.try_get("request_key")?,
            memo: r.try_get("memo")?,
            created_ms: ms(&r, "created_ms")?,
            postings,
        }))
    }

    /// The account `id`.
    pub async fn ledger_account(&self, id: &str) -> Result<Option<AccountRow>, StoreError> {
        let r = sqlx::query("SELECT id, kind, balance, nonce FROM ledger_accounts WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(account_row).transpose()
    }

    /// Every account whose id starts with `prefix`.
    pub async fn ledger_accounts(&self, prefix: &str) -> Result<Vec<AccountRow>, StoreError> {
        sqlx::query(
            "SELECT id, kind, balance, nonce FROM ledger_accounts WHERE id LIKE $1 ORDER BY id",
        )
        .bind(format!("{prefix}%"))
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(account_row)
        .collect()
    }

    /// Total liabilities: the sum of every user balance (cached).
    pub async fn ledger_liabilities(&self) -> Result<i64, StoreError> {
        let r = sqlx::query("SELECT amount FROM ledger_totals WHERE id = 'liabilities'")
            .fetch_one(self.pool())
            .await?;
        Ok(r.try_get("amount")?)
    }

    /// Creates the user account of `address` (balance 0, nonce 0) with its
    /// enrolment; `false` when it was enrolled already (nothing changes).
    pub async fn enrol(
        &self,
        address: &str,
        terms_version: &str,
        signature: &str,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let done = sqlx::query(
            "INSERT INTO netting_enrolments (address, terms_version, signature, enrolled_ms) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(address.to_ascii_lowercase())
        .bind(terms_version)
        .bind(signature)
        .bind(now_ms as i64)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO ledger_accounts (id, kind, balance, nonce, created_ms, updated_ms) VALUES ($1, 'user', 0, 0, $2, $2) ON CONFLICT DO NOTHING",
        )
        .bind(user_account(address))
        .bind(now_ms as i64)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// When `address` enrolled, and under which terms version.
    pub async fn enrolment(&self, address: &str) -> Result<Option<(String, u64)>, StoreError> {
        let r = sqlx::query(
            "SELECT terms_version, enrolled_ms FROM netting_enrolments WHERE address = $1",
        )
        .bind(address.to_ascii_lowercase())
        .fetch_optional(self.pool())
        .await?;
        r.map(|r| Ok((r.try_get("terms_version")?, ms(&r, "enrolled_ms")?)))
            .transpose()
    }

    /// Checks the ledger's invariants from the postings themselves.
    pub async fn ledger_check(&self) -> Result<LedgerCheck, StoreError> {
        let mut c = LedgerCheck::default();
        for r in sqlx::query(
            "SELECT entry_id, SUM(amount) AS s FROM ledger_postings GROUP BY entry_id HAVING SUM(amount) <> 0",
        )
        .fetch_all(self.pool())
        .await?
        {
            c.unbalanced_entries.push(r.try_get("entry_id")?);
        }
        let summed: BTreeMap<String, i64> = sqlx::query(
            "SELECT account_id, CAST(SUM(amount) AS BIGINT) AS s FROM ledger_postings GROUP BY account_id",
        )
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(|r| Ok((r.try_get("account_id")?, r.try_get::<i64, _>("s")?)))
        .collect::<Result<_, StoreError>>()?;
        let mut users = 0i64;
        for a in self.ledger_accounts("").await? {
            let s = summed.get(&a.id).copied().unwrap_or(0);
            if s != a.balance {
                c.mismatched.push((a.id.clone(), a.balance, s));
            }
            if is_user_account(&a.id) {
                users += s;
                if s < 0 || a.balance < 0 {
                    c.negative.push(a.id.clone());
                }
            }
        }
        c.postings_sum = summed.values().map(|v| i128::from(*v)).sum();
        c.liabilities = (self.ledger_liabilities().await?, users);
        Ok(c)
    }
}

/// Moves the totals and every account of `e`; the first bound that does
/// not hold, if any (the caller rolls back).
async fn apply(
    tx: &mut Transaction<'_, Any>,
    e: &NewEntry,
    moves: &BTreeMap<String, (i64, Option<u64>)>,
) -> Result<Option<Refusal>, StoreError> {
    let liabilities: i64 = moves
        .iter()
        .filter(|(a, _)| is_user_account(a))
        .map(|(_, (d, _))| *d)
        .sum();
    if liabilities != 0 && !move_liabilities(tx, liabilities, e.liabilities_cap).await? {
        let r = sqlx::query("SELECT amount FROM ledger_totals WHERE id = 'liabilities'")
            .fetch_one(&mut **tx)
            .await?;
        return Ok(Some(Refusal::OverSafeShare {
            liabilities: r.try_get("amount")?,
        }));
    }
    for (account, (delta, nonce)) in moves {
        let refused = if is_user_account(account) {
            move_user(tx, account, (*delta, *nonce), e).await?
        } else {
            move_system(tx, account, *delta, e.created_ms).await?;
            None
        };
        if refused.is_some() {
            return Ok(refused);
        }
    }
    Ok(None)
}

async fn move_liabilities(
    tx: &mut Transaction<'_, Any>,
    delta: i64,
    cap: Option<i64>,
) -> Result<bool, StoreError> {
    let done = match cap.filter(|_| delta > 0) {
        Some(cap) => sqlx::query(
            "UPDATE ledger_totals SET amount = amount + $1 WHERE id = 'liabilities' AND amount + $1 <= $2",
        )
        .bind(delta)
        .bind(cap),
        None => {
            sqlx::query("UPDATE ledger_totals SET amount = amount + $1 WHERE id = 'liabilities'")
                .bind(delta)
        }
    }
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

async fn move_user(
    tx: &mut Transaction<'_, Any>,
    account: &str,
    (delta, nonce): (i64, Option<u64>),
    e: &NewEntry,
) -> Result<Option<Refusal>, StoreError> {
    let n = nonce.map(|n| n as i64);
    let done = sqlx::query(
        "UPDATE ledger_accounts SET balance = balance + $1, nonce = COALESCE($2, nonce), updated_ms = $3 \
         WHERE id = $4 AND kind = 'user' AND balance + $1 >= 0 AND ($1 <= 0 OR balance + $1 <= $5) \
         AND ($2 IS NULL OR nonce < $2)",
    )
    .bind(delta)
    .bind(n)
    .bind(e.created_ms as i64)
    .bind(account)
    .bind(e.max_balance)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 1 {
        return Ok(None);
    }
    let row = sqlx::query("SELECT id, kind, balance, nonce FROM ledger_accounts WHERE id = $1")
        .bind(account)
        .fetch_optional(&mut **tx)
        .await?;
    let Some(a) = row.as_ref().map(account_row).transpose()? else {
        return Ok(Some(Refusal::UnknownAccount(account.into())));
    };
    let account = account.to_string();
    Ok(Some(match nonce {
        Some(n) if a.nonce >= n => Refusal::NonceSpent {
            account,
            current: a.nonce,
        },
        _ if a.balance.saturating_add(delta) < 0 => Refusal::Insufficient {
            account,
            balance: a.balance,
        },
        _ => Refusal::OverBalanceCap {
            account,
            balance: a.balance,
        },
    }))
}

async fn move_system(
    tx: &mut Transaction<'_, Any>,
    account: &str,
    delta: i64,
    now_ms: u64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO ledger_accounts (id, kind, balance, nonce, created_ms, updated_ms) VALUES ($1, 'system', $2, 0, $3, $3) \
         ON CONFLICT (id) DO UPDATE SET balance = ledger_accounts.balance + excluded.balance, updated_ms = excluded.updated_ms",
    )
    .bind(account)
    .bind(delta)
    .bind(now_ms as i64)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
