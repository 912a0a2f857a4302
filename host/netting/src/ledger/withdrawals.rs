//! Netting withdrawals: the payout a `withdraw` entry owes, recorded in
//! the entry's own transaction; its transaction is journaled under the
//! row's id (step 0) and one replica at a time drives it (a lease).

use super::{ms, Also, Ledger};
use relay_store::{durable::Lease, StoreError};
use sqlx::{any::AnyRow, Any, Row, Transaction};

/// A withdrawal's lease: one replica drives a `PENDING` payout at a time.
const LEASE: Lease<'static> =
    Lease::new("netting_withdrawals", "lease_until_ms").when("state IN ('PENDING')");

/// One withdrawal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WithdrawalRow {
    /// `nw_…`.
    pub id: String,
    /// The `withdraw` entry.
    pub entry_id: String,
    /// The account's address (lowercase).
    pub address: String,
    /// Debited, smallest units.
    pub amount: i64,
    /// Withheld for the payout, smallest units.
    pub payout_cost: i64,
    /// Paid on this chain.
    pub to_chain: u64,
    /// Paid to.
    pub to_address: String,
    /// `PENDING`, `PAID` or `FAILED` (credited back).
    pub state: String,
    /// The payout transaction.
    pub tx_hash: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Held by a replica until then, epoch ms.
    pub lease_until_ms: u64,
    /// Epoch ms.
    pub created_ms: u64,
}

/// A move of a withdrawal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WithdrawalMove {
    /// The new state.
    pub state: String,
    /// Set when given.
    pub tx_hash: Option<String>,
    /// Set when given.
    pub error: Option<String>,
}

const COLUMNS: &str =
    "id, entry_id, address, amount, payout_cost, to_chain, to_address, state, tx_hash, error, lease_until_ms, created_ms";

fn row_of(r: &AnyRow) -> Result<WithdrawalRow, StoreError> {
    Ok(WithdrawalRow {
        id: r.try_get("id")?,
        entry_id: r.try_get("entry_id")?,
        address: r.try_get("address")?,
        amount: r.try_get("amount")?,
        payout_cost: r.try_get("payout_cost")?,
        to_chain: ms(r, "to_chain")?,
        to_address: r.try_get("to_address")?,
        state: r.try_get("state")?,
        tx_hash: r.try_get("tx_hash")?,
        error: r.try_get("error")?,
        lease_until_ms: ms(r, "lease_until_ms")?,
        created_ms: ms(r, "created_ms")?,
    })
}

/// The extra statement of an entry's transaction.
pub(super) async fn also(
    tx: &mut Transaction<'_, Any>,
    also: Also<'_>,
    now_ms: u64,
) -> Result<(), StoreError> {
    match also {
        Also::Nothing => {}
        Also::Withdrawal(w) => {
            sqlx::query(
                "INSERT INTO netting_withdrawals (id, entry_id, address, amount, payout_cost, to_chain, to_address, state, lease_until_ms, created_ms, updated_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
            )
            .bind(&w.id)
            .bind(&w.entry_id)
            .bind(&w.address)
            .bind(w.amount)
            .bind(w.payout_cost)
            .bind(w.to_chain as i64)
            .bind(&w.to_address)
            .bind(&w.state)
            .bind(w.lease_until_ms.min(i64::MAX as u64) as i64)
            .bind(w.created_ms as i64)
            .execute(&mut **tx)
            .await?;
        }
        Also::Move(id, m) => move_withdrawal(&mut **tx, id, m, now_ms).await?,
    }
    Ok(())
}

async fn move_withdrawal<'e, E: sqlx::Executor<'e, Database = Any>>(
    ex: E,
    id: &str,
    m: &WithdrawalMove,
    now_ms: u64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE netting_withdrawals SET state = $1, tx_hash = COALESCE($2, tx_hash), error = COALESCE($3, error), \
         updated_ms = $4, lease_until_ms = 0 WHERE id = $5",
    )
    .bind(&m.state)
    .bind(&m.tx_hash)
    .bind(&m.error)
    .bind(now_ms as i64)
    .bind(id)
    .execute(ex)
    .await?;
    Ok(())
}

impl Ledger {
    /// Writes the `withdraw` entry `e` and records `w` (held by its writer)
    /// in one transaction ([`Ledger::post_entry`]).
    pub async fn post_withdrawal(
        &self,
        e: &super::NewEntry,
        w: &WithdrawalRow,
    ) -> Result<super::Posted, StoreError> {
        self.post_entry_with(e, Also::Withdrawal(w)).await
    }

    /// Writes the reversing entry `e` of withdrawal `id` and moves it
    /// (`FAILED`), in one transaction.
    pub async fn reverse_withdrawal(
        &self,
        e: &super::NewEntry,
        id: &str,
        m: &WithdrawalMove,
    ) -> Result<super::Posted, StoreError> {
        self.post_entry_with(e, Also::Move(id, m)).await
    }

    /// Records a move of withdrawal `id` (and drops its lease).
    pub async fn update_withdrawal(&self, id: &str, m: &WithdrawalMove) -> Result<(), StoreError> {
        move_withdrawal(self.pool(), id, m, self.clock().now_ms()).await
    }

    /// Withdrawal `id`.
    pub async fn withdrawal(&self, id: &str) -> Result<Option<WithdrawalRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM netting_withdrawals WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// Up to `limit` withdrawals of `address` (lowercase) in `state`,
    /// newest first (settlement receipts).
    pub async fn withdrawals_of(
        &self,
        address: &str,
        state: &str,
        limit: u32,
    ) -> Result<Vec<WithdrawalRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM netting_withdrawals WHERE address = $1 AND state = $2 \
             ORDER BY created_ms DESC LIMIT $3"
        ))
        .bind(address)
        .bind(state)
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(row_of).collect()
    }

    /// Holds withdrawal `id` until `until_ms` (0 drops the hold).
    pub async fn lease_withdrawal(&self, id: &str, until_ms: u64) -> Result<(), StoreError> {
        LEASE.renew(self, id, None, until_ms).await?;
        Ok(())
    }

    /// Claims a `PENDING` withdrawal whose holder's lease lapsed, holding
    /// it until `until_ms`; `None` when there is none.
    pub async fn claim_withdrawal(
        &self,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<WithdrawalRow>, StoreError> {
        match LEASE
            .claim_next(self, None, (now_ms, until_ms), "created_ms")
            .await?
        {
            Some(id) => self.withdrawal(&id).await,
            None => Ok(None),
        }
    }
}
