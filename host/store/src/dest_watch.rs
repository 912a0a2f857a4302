//! Destination watches: a route whose rail's upstream has no status API
//! waits while the host scans the destination chain for its payout. The
//! watch row keeps where the scan began and how far it got, so a restarted
//! host resumes from there; a claim row ties one payout log to one route,
//! so two routes to the same recipient never take the same payout (the
//! primary key and the unique route index decide a race between replicas).

use super::{Store, StoreError};
use sqlx::Row;

/// A route's watch of its destination chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DestWatch {
    /// Route.
    pub route_id: String,
    /// Destination EVM chain id.
    pub chain: u64,
    /// The destination token's address.
    pub token: String,
    /// The route's recipient.
    pub recipient: String,
    /// The least payout that counts (the route's `minOut`), smallest units.
    pub min_out: String,
    /// The first block watched (the destination's head when the watch
    /// began, less a margin).
    pub from_block: u64,
    /// The first block not yet scanned.
    pub next_block: u64,
}

/// A payout log claimed as a route's `destTx`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DestClaim {
    /// Destination EVM chain id.
    pub chain: u64,
    /// The payout's transaction hash.
    pub tx_hash: String,
    /// The log's index in its block.
    pub log_index: u64,
    /// The route that claimed it.
    pub route_id: String,
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store {
    /// Records `w` unless the route already has a watch; answers the stored
    /// one (a resumed route keeps where its watch began).
    pub async fn start_dest_watch(&self, w: &DestWatch) -> Result<DestWatch, StoreError> {
        let now = self.now_ms() as i64;
        sqlx::query(
            "INSERT INTO dest_watches (route_id, chain, token, recipient, min_out, from_block, next_block, started_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (route_id) DO NOTHING",
        )
        .bind(&w.route_id)
        .bind(int(w.chain))
        .bind(&w.token)
        .bind(&w.recipient)
        .bind(&w.min_out)
        .bind(int(w.from_block))
        .bind(int(w.next_block))
        .bind(now)
        .execute(self.pool())
        .await?;
        self.dest_watch(&w.route_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("watch of {} vanished", w.route_id)))
    }

    /// The route's watch, if it has one.
    pub async fn dest_watch(&self, route_id: &str) -> Result<Option<DestWatch>, StoreError> {
        let row = sqlx::query(
            "SELECT route_id, chain, token, recipient, min_out, from_block, next_block \
             FROM dest_watches WHERE route_id = $1",
        )
        .bind(route_id)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(DestWatch {
                route_id: r.try_get("route_id")?,
                chain: uint(r.try_get("chain")?),
                token: r.try_get("token")?,
                recipient: r.try_get("recipient")?,
                min_out: r.try_get("min_out")?,
                from_block: uint(r.try_get("from_block")?),
                next_block: uint(r.try_get("next_block")?),
            })
        })
        .transpose()
    }

    /// Records that blocks before `next_block` were scanned (never moves
    /// the cursor back).
    pub async fn advance_dest_watch(
        &self,
        route_id: &str,
        next_block: u64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE dest_watches SET next_block = $1, updated_ms = $2 \
             WHERE route_id = $3 AND next_block < $1",
        )
        .bind(int(next_block))
        .bind(self.now_ms() as i64)
        .bind(route_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Claims a payout log for `c.route_id`; `false` when another route
    /// claimed that log first, or this route already claimed another.
    pub async fn claim_dest_payout(&self, c: &DestClaim) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO dest_claims (chain, tx_hash, log_index, route_id, created_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(int(c.chain))
        .bind(c.tx_hash.to_ascii_lowercase())
        .bind(int(c.log_index))
        .bind(&c.route_id)
        .bind(self.now_ms() as i64)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The payout the route claimed, if any (a route resumed after it
    /// claimed one finishes with it).
    pub async fn dest_payout_of(&self, route_id: &str) -> Result<Option<DestClaim>, StoreError> {
        let row = sqlx::query(
            "SELECT chain, tx_hash, log_index, route_id FROM dest_claims WHERE route_id = $1",
        )
        .bind(route_id)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(DestClaim {
                chain: uint(r.try_get("chain")?),
                tx_hash: r.try_get("tx_hash")?,
                log_index: uint(r.try_get("log_index")?),
                route_id: r.try_get("route_id")?,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh SQLite store and a fresh Postgres database.
    async fn backends() -> (tempfile::TempDir, Vec<(&'static str, Store)>) {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = format!("sqlite://{}/t.db?mode=rwc", dir.path().display());
        let postgres = relay_fixtures::postgres_database();
        let stores = vec![
            ("sqlite", Store::connect(&sqlite).await.unwrap()),
            ("postgres", Store::connect(&postgres).await.unwrap()),
        ];
        (dir, stores)
    }

    fn watch(route: &str, from: u64) -> DestWatch {
        DestWatch {
            route_id: route.into(),
            chain: 1,
            token: "0x00000000000000000000000000000000000000c3".into(),
            recipient: "0x00000000000000000000000000000000000000bb".into(),
            min_out: "4900000".into(),
            from_block: from,
            next_block: from,
        }
    }

    fn claim(route: &str, tx: &str, index: u64) -> DestClaim {
        DestClaim {
            chain: 1,
            tx_hash: tx.into(),
            log_index: index,
            route_id: route.into(),
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_watch_keeps_where_it_began_and_its_cursor_only_moves_forward() {
        let (_dir, stores) = backends().await;
        for (name, s) in stores {
            let first = s.start_dest_watch(&watch("rt_a", 100)).await.unwrap();
            assert_eq!(first, watch("rt_a", 100), "{name}");
            let again = s.start_dest_watch(&watch("rt_a", 900)).await.unwrap();
            assert_eq!(again, first, "{name}: resumed, not restarted");
            s.advance_dest_watch("rt_a", 2_100).await.unwrap();
            s.advance_dest_watch("rt_a", 150).await.unwrap();
            let now = s.dest_watch("rt_a").await.unwrap().unwrap();
            assert_eq!((now.from_block, now.next_block), (100, 2_100), "{name}");
            assert_eq!(s.dest_watch("rt_b").await.unwrap(), None, "{name}");
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_payout_log_is_claimed_by_one_route_and_a_route_claims_one_log() {
        let (_dir, stores) = backends().await;
        for (name, s) in stores {
            assert!(s
                .claim_dest_payout(&claim("rt_a", "0xAB", 0))
                .await
                .unwrap());
            let taken = s
                .claim_dest_payout(&claim("rt_b", "0xab", 0))
                .await
                .unwrap();
            assert!(!taken, "{name}: another route's payout");
            let second = s
                .claim_dest_payout(&claim("rt_a", "0xcd", 1))
                .await
                .unwrap();
            assert!(!second, "{name}: one payout per route");
            assert!(s
                .claim_dest_payout(&claim("rt_b", "0xab", 1))
                .await
                .unwrap());
            let a = s.dest_payout_of("rt_a").await.unwrap().unwrap();
            assert_eq!((a.tx_hash.as_str(), a.log_index), ("0xab", 0), "{name}");
            assert_eq!(s.dest_payout_of("rt_c").await.unwrap(), None, "{name}");
        }
    }
}
