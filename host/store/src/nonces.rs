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
        self.allocate_nonces(chain, address, chain_pending, 1).await
    }

    /// Allocates `count` consecutive nonces of `address` on `chain` (a
    /// transaction that also spends the next nonce, as a self-sponsored
    /// EIP-7702 authorization does), as [`Store::allocate_nonce`]: the
    /// first of them.
    pub async fn allocate_nonces(
        &self,
        chain: u64,
        address: &str,
        chain_pending: u64,
        count: u64,
    ) -> Result<u64, StoreError> {
        let row = sqlx::query(
            "INSERT INTO relayer_nonces (chain, address, next_nonce, updated_ms) VALUES ($1, $2, $3 + $5, $4) \
             ON CONFLICT (chain, address) DO UPDATE SET \
               next_nonce = (CASE WHEN relayer_nonces.next_nonce > $3 THEN relayer_nonces.next_nonce ELSE $3 END) + $5, \
               updated_ms = $4 \
             RETURNING next_nonce",
        )
        .bind(chain.to_string())
        .bind(address.to_ascii_lowercase())
        .bind(chain_pending as i64)
        .bind(self.now_ms() as i64)
        .bind(count as i64)
        .fetch_one(self.pool())
        .await?;
        let next: i64 = row.try_get("next_nonce")?;
        Ok((next as u64).saturating_sub(count))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of nonces is never handed out in part again, and a later
    /// allocation starts past it (or past the chain, whichever is higher).
    async fn runs_are_consecutive(store: Store) {
        let key = "0x00000000000000000000000000000000000000aa";
        assert_eq!(store.allocate_nonce(1, key, 4).await.unwrap(), 4);
        assert_eq!(store.allocate_nonces(1, key, 4, 2).await.unwrap(), 5);
        assert_eq!(store.allocate_nonce(1, key, 5).await.unwrap(), 7);
        assert_eq!(store.allocate_nonces(1, key, 20, 3).await.unwrap(), 20);
        assert_eq!(store.allocate_nonce(1, key, 0).await.unwrap(), 23);
        assert_eq!(store.allocate_nonces(2, key, 9, 2).await.unwrap(), 9);
    }

    #[tokio::test]
    async fn runs_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("n.db").display());
        runs_are_consecutive(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn runs_on_postgres() {
        let url = relay_fixtures::postgres_database();
        runs_are_consecutive(Store::connect(&url).await.unwrap()).await;
    }
}
