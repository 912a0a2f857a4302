//! Yield-account spends (spec §4.6): the record of one accepted EIP-712
//! spend intent. `(agent, src_chain, nonce)` is unique, so a nonce is spent
//! once; the client's idempotency key is unique too. The transactions live
//! in the route journal under the record's id. The table is the feature's
//! own ([`MIGRATIONS`]).

use relay_store::{Migration, StoreError};
use sqlx::{any::AnyRow, Row};

/// The yield account's schema: its spend records (applied by its start).
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 16,
        sql: include_str!("../migrations/0016_ncaccount_spends.sql"),
    },
    Migration {
        version: 18,
        sql: include_str!("../migrations/0018_ncaccount_spend_routes.sql"),
    },
];

relay_store::store_view! {
    /// The store as the yield account uses it: every method of [`Store`](relay_store::Store),
    /// plus its spend records'.
    pub Spends
}

/// One spend record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NcSpendRow {
    /// `nc_…`.
    pub id: String,
    /// The client's `x-idempotency-key`, if it sent one.
    pub idem_key: Option<String>,
    /// The agent (lower-case hex).
    pub agent: String,
    /// The source chain.
    pub src_chain: u64,
    /// The intent's nonce (decimal).
    pub nonce: String,
    /// `ACCEPTED`, `REDEEMED`, `ROUTING`, `DELIVERED`, `REFUNDED` or
    /// `FAILED`.
    pub state: String,
    /// The intent and its figures, as the accounts crate writes them (JSON).
    pub body: String,
    /// The redeem transaction (source chain).
    pub redeem_tx: Option<String>,
    /// The payout transaction (destination chain).
    pub deliver_tx: Option<String>,
    /// The refund of the redeemed assets to the agent (source chain).
    pub refund_tx: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Epoch ms.
    pub created_ms: u64,
    /// Until when the replica driving it holds it, epoch ms (0: nobody).
    pub lease_until_ms: u64,
}

/// A move of a record ([`Spends::update_nc_spend`]); `None` fields are kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NcSpendMove {
    /// The new state.
    pub state: String,
    /// Set when given.
    pub redeem_tx: Option<String>,
    /// Set when given.
    pub deliver_tx: Option<String>,
    /// Set when given.
    pub refund_tx: Option<String>,
    /// Set when given.
    pub error: Option<String>,
}

const COLUMNS: &str = "id, idem_key, agent, src_chain, nonce, state, body, redeem_tx, deliver_tx, refund_tx, error, created_ms, lease_until_ms";

/// The states a resume pass drives.
const OPEN: [&str; 3] = ["ACCEPTED", "REDEEMED", "ROUTING"];

fn row_of(r: &AnyRow) -> Result<NcSpendRow, StoreError> {
    Ok(NcSpendRow {
        id: r.try_get("id")?,
        idem_key: r.try_get("idem_key")?,
        agent: r.try_get("agent")?,
        src_chain: r.try_get::<i64, _>("src_chain")? as u64,
        nonce: r.try_get("nonce")?,
        state: r.try_get("state")?,
        body: r.try_get("body")?,
        redeem_tx: r.try_get("redeem_tx")?,
        deliver_tx: r.try_get("deliver_tx")?,
        refund_tx: r.try_get("refund_tx")?,
        error: r.try_get("error")?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
        lease_until_ms: r.try_get::<i64, _>("lease_until_ms")?.max(0) as u64,
    })
}

impl Spends {
    /// Inserts `row` unless a record with its idempotency key or its
    /// `(agent, src_chain, nonce)` exists. Returns the record in effect and
    /// whether it is new (only the inserter spends). The new record is
    /// held until `row.lease_until_ms`.
    pub async fn begin_nc_spend(&self, row: &NcSpendRow) -> Result<(NcSpendRow, bool), StoreError> {
        let done = sqlx::query(
            "INSERT INTO ncaccount_spends (id, idem_key, agent, src_chain, nonce, state, body, created_ms, updated_ms, lease_until_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(&row.id)
        .bind(&row.idem_key)
        .bind(&row.agent)
        .bind(row.src_chain as i64)
        .bind(&row.nonce)
        .bind(&row.state)
        .bind(&row.body)
        .bind(row.created_ms as i64)
        .bind(row.lease_until_ms.min(i64::MAX as u64) as i64)
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 1 {
            return Ok((row.clone(), true));
        }
        let found = match &row.idem_key {
            Some(key) => self.nc_spend_by_key(key).await?,
            None => None,
        };
        let found = match found {
            Some(f) => Some(f),
            None => {
                self.nc_spend_by_nonce(&row.agent, row.src_chain, &row.nonce)
                    .await?
            }
        };
        found
            .map(|f| (f, false))
            .ok_or_else(|| StoreError::Corrupt("spend conflict without a row".into()))
    }

    /// The record `id`.
    pub async fn nc_spend(&self, id: &str) -> Result<Option<NcSpendRow>, StoreError> {
        self.nc_spend_where("id = $1", &[id]).await
    }

    /// The record whose idempotency key is `key`.
    pub async fn nc_spend_by_key(&self, key: &str) -> Result<Option<NcSpendRow>, StoreError> {
        self.nc_spend_where("idem_key = $1", &[key]).await
    }

    /// The record that spent `nonce` of `agent` on `src_chain`.
    pub async fn nc_spend_by_nonce(
        &self,
        agent: &str,
        src_chain: u64,
        nonce: &str,
    ) -> Result<Option<NcSpendRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM ncaccount_spends WHERE agent = $1 AND src_chain = $2 AND nonce = $3"
        ))
        .bind(agent)
        .bind(src_chain as i64)
        .bind(nonce)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    async fn nc_spend_where(
        &self,
        cond: &str,
        args: &[&str],
    ) -> Result<Option<NcSpendRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM ncaccount_spends WHERE {cond}");
        let mut q = sqlx::query(&sql);
        for a in args {
            q = q.bind(*a);
        }
        let r = q.fetch_optional(self.pool()).await?;
        r.as_ref().map(row_of).transpose()
    }

    /// Moves record `id`: a new state, and the hashes and error given.
    pub async fn update_nc_spend(&self, id: &str, m: &NcSpendMove) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE ncaccount_spends SET state = $1, redeem_tx = COALESCE($2, redeem_tx), \
             deliver_tx = COALESCE($3, deliver_tx), refund_tx = COALESCE($4, refund_tx), \
             error = COALESCE($5, error), updated_ms = $6 WHERE id = $7",
        )
        .bind(&m.state)
        .bind(&m.redeem_tx)
        .bind(&m.deliver_tx)
        .bind(&m.refund_tx)
        .bind(&m.error)
        .bind(self.clock().now_ms() as i64)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Holds record `id` until `until_ms` (0 lets any replica take it).
    pub async fn lease_nc_spend(&self, id: &str, until_ms: u64) -> Result<(), StoreError> {
        self.set_lease("ncaccount_spends", id, until_ms).await
    }

    /// Claims an open record (`ACCEPTED`, `REDEEMED`, `ROUTING`) whose
    /// holder's lease lapsed before `now_ms`, holding it until `until_ms`.
    pub async fn claim_nc_spend(
        &self,
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Option<NcSpendRow>, StoreError> {
        match self
            .claim_lapsed("ncaccount_spends", &OPEN, now_ms, until_ms)
            .await?
        {
            Some(id) => self.nc_spend(&id).await,
            None => Ok(None),
        }
    }

    /// Records in `states`, oldest first (what a resume pass drives).
    pub async fn nc_spends_in(&self, states: &[&str]) -> Result<Vec<NcSpendRow>, StoreError> {
        let mut out = Vec::new();
        for state in states {
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM ncaccount_spends WHERE state = $1 ORDER BY created_ms"
            ))
            .bind(*state)
            .fetch_all(self.pool())
            .await?;
            for r in &rows {
                out.push(row_of(r)?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, key: Option<&str>, nonce: &str) -> NcSpendRow {
        NcSpendRow {
            id: id.into(),
            idem_key: key.map(String::from),
            agent: "0xabc".into(),
            src_chain: 8453,
            nonce: nonce.into(),
            state: "ACCEPTED".into(),
            body: "{}".into(),
            redeem_tx: None,
            deliver_tx: None,
            refund_tx: None,
            error: None,
            created_ms: 1,
            lease_until_ms: 0,
        }
    }

    #[tokio::test]
    async fn nc_spends_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        a_nonce_and_a_key_are_spent_once(&spends(&url).await).await;
    }

    #[tokio::test]
    async fn nc_spends_on_postgres() {
        let url = relay_fixtures::postgres_database();
        a_nonce_and_a_key_are_spent_once(&spends(&url).await).await;
    }

    async fn spends(url: &str) -> Spends {
        let store = Spends::from(relay_store::Store::connect(url).await.unwrap());
        store.migrate(MIGRATIONS).await.unwrap();
        store
    }

    async fn a_nonce_and_a_key_are_spent_once(store: &Spends) {
        let (_, new) = store
            .begin_nc_spend(&row("nc_1", Some("k"), "7"))
            .await
            .unwrap();
        assert!(new);
        // same nonce, another key: the first record answers
        let (found, new) = store
            .begin_nc_spend(&row("nc_2", Some("k2"), "7"))
            .await
            .unwrap();
        assert!(!new);
        assert_eq!(found.id, "nc_1");
        // same key, another nonce: the first record answers
        let (found, new) = store
            .begin_nc_spend(&row("nc_3", Some("k"), "8"))
            .await
            .unwrap();
        assert!(!new);
        assert_eq!(found.id, "nc_1");
        // one replica at a time: a held record is not claimed until its
        // lease lapses
        let claimed = store.claim_nc_spend(10, 100).await.unwrap();
        assert_eq!(claimed.map(|r| r.lease_until_ms), Some(100));
        assert!(store.claim_nc_spend(50, 150).await.unwrap().is_none());
        assert!(store.claim_nc_spend(101, 200).await.unwrap().is_some());
        store
            .update_nc_spend(
                "nc_1",
                &NcSpendMove {
                    state: "DELIVERED".into(),
                    deliver_tx: Some("0x1".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let got = store.nc_spend("nc_1").await.unwrap().unwrap();
        assert_eq!(
            (got.state.as_str(), got.deliver_tx.as_deref()),
            ("DELIVERED", Some("0x1"))
        );
        assert!(store.nc_spends_in(&["ACCEPTED"]).await.unwrap().is_empty());
        assert!(
            store
                .claim_nc_spend(u64::MAX / 2, u64::MAX / 2)
                .await
                .unwrap()
                .is_none(),
            "a delivered spend is not driven again"
        );
    }
}
