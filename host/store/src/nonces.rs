//! Relayer nonces shared through the database: several replicas serving
//! one relayer key never hand out the same nonce. Allocation is a single
//! upsert, atomic on both backends (Postgres locks the conflicting row;
//! SQLite serialises writers).

use super::{Store, StoreError};
use sqlx::Row;
use std::collections::BTreeSet;

impl Store {
    /// Allocates the next nonce of `address` on `chain`: never below
    /// `chain_pending` (the chain's pending count, so nonces used elsewhere
    /// are skipped) and never one handed out before.
    pub async fn allocate_nonce(
        &self,
        chain: u64,
        address: &str,
        chain_pending: u64,
    ) -> Result<u64, StoreError> {
        let row = sqlx::query(
            "INSERT INTO relayer_nonces (chain, address, next_nonce, updated_ms) VALUES ($1, $2, $3 + 1, $4) \
             ON CONFLICT (chain, address) DO UPDATE SET \
               next_nonce = (CASE WHEN relayer_nonces.next_nonce > $3 THEN relayer_nonces.next_nonce ELSE $3 END) + 1, \
               updated_ms = $4 \
             RETURNING next_nonce",
        )
        .bind(chain.to_string())
        .bind(address.to_ascii_lowercase())
        .bind(chain_pending as i64)
        .bind(self.now_ms() as i64)
        .fetch_one(self.pool())
        .await?;
        let next: i64 = row.try_get("next_nonce")?;
        Ok(next as u64 - 1)
    }

    /// Nonces of `signer` on `chain` journaled as planned or sent
    /// (reserved: their routes will broadcast or finish them). Entries
    /// without a signer (journaled before the key pool) count for every
    /// key: a nonce wrongly held back is only a gap filled later.
    pub async fn open_nonces(&self, chain: u64, signer: &str) -> Result<BTreeSet<u64>, StoreError> {
        let rows = sqlx::query(
            "SELECT nonce FROM tx_journal WHERE chain = $1 AND state IN ('planned', 'sent') AND nonce IS NOT NULL \
             AND (signer IS NULL OR signer = $2)",
        )
        .bind(chain.to_string())
        .bind(signer.to_ascii_lowercase())
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok(r.try_get::<i64, _>("nonce")? as u64))
            .collect()
    }
}
