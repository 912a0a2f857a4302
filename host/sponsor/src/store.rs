//! Sponsorships (spec §4.8): the record of one x402-paid EIP-7702
//! sponsorship, and its schema (migration 0012, applied by the feature's
//! start, `relay_feature::Service`). Its transactions live in the route
//! journal under the record's id; the record holds the state, the hashes and a lease
//! ([`relay_store::durable::Lease`]), so one replica at a time drives it
//! and a restarted host picks it up once the lease lapses.

use relay_store::{durable::Lease, StoreError};
use sqlx::{any::AnyRow, Row};

/// This feature's migrations: the sponsorships table (version 12, as it
/// always was, so a database that has it is left as it is) and its
/// lease's holder (29).
pub const MIGRATIONS: &[relay_store::Migration] = &[
    relay_store::Migration {
        version: 12,
        sql: include_str!("../migrations/0012_sponsorships.sql"),
    },
    relay_store::Migration {
        version: 29,
        sql: include_str!("../migrations/0029_sponsorship_holder.sql"),
    },
];

/// A record's lease: one replica at a time drives an open record (one of
/// [`crate::run::OPEN`]), and only while it holds it (`lease_owner`).
const LEASE: Lease<'static> = Lease::new("sponsorships", "lease_until_ms")
    .held_in("lease_owner")
    .when("state IN ('ACCEPTED', 'SETTLED', 'REFUNDING')");

relay_store::store_view! {
    /// The store as sponsorships use it: every method of [`Store`](relay_store::Store) (the
    /// transaction journal), plus the records' own.
    pub Sponsorships
}

/// One sponsorship record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SponsorshipRow {
    /// `sp_…`.
    pub id: String,
    /// The client's `x-idempotency-key`, if it sent one.
    pub idem_key: Option<String>,
    /// `<chain>:<token>:<payer>:<nonce>` of the payment: one payment pays
    /// for one sponsorship.
    pub payment_key: String,
    /// The chain.
    pub chain_id: u64,
    /// `ACCEPTED`, `SETTLED`, `SPONSORED`, `REFUNDED` or `FAILED`.
    pub state: String,
    /// The plan and payment, as the sponsor crate writes them (JSON).
    pub body: String,
    /// The payment's settlement transaction.
    pub settle_tx: Option<String>,
    /// The type-4 transaction.
    pub sponsor_tx: Option<String>,
    /// The refund transaction.
    pub refund_tx: Option<String>,
    /// Why it failed or was refunded.
    pub error: Option<String>,
    /// Epoch ms.
    pub created_ms: u64,
}

/// A move of a record ([`Sponsorships::update_sponsorship`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SponsorshipMove {
    /// The new state.
    pub state: String,
    /// Set when given.
    pub settle_tx: Option<String>,
    /// Set when given.
    pub sponsor_tx: Option<String>,
    /// Set when given.
    pub refund_tx: Option<String>,
    /// Set when given.
    pub error: Option<String>,
}

const COLUMNS: &str = "id, idem_key, payment_key, chain_id, state, body, settle_tx, sponsor_tx, refund_tx, error, created_ms";

fn row_of(r: &AnyRow) -> Result<SponsorshipRow, StoreError> {
    Ok(SponsorshipRow {
        id: r.try_get("id")?,
        idem_key: r.try_get("idem_key")?,
        payment_key: r.try_get("payment_key")?,
        chain_id: r.try_get::<i64, _>("chain_id")? as u64,
        state: r.try_get("state")?,
        body: r.try_get("body")?,
        settle_tx: r.try_get("settle_tx")?,
        sponsor_tx: r.try_get("sponsor_tx")?,
        refund_tx: r.try_get("refund_tx")?,
        error: r.try_get("error")?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
    })
}

impl Sponsorships {
    /// Inserts `row`, held by its inserter `owner` until `lease_until_ms`;
    /// when a record with the same idempotency key or payment exists,
    /// nothing is inserted. Returns the record in effect and whether it is
    /// new.
    pub async fn begin_sponsorship(
        &self,
        row: &SponsorshipRow,
        (owner, lease_until_ms): (&str, u64),
    ) -> Result<(SponsorshipRow, bool), StoreError> {
        if let Some(found) = self.sponsorship_for(row).await? {
            return Ok((found, false));
        }
        let done = sqlx::query(
            "INSERT INTO sponsorships (id, idem_key, payment_key, chain_id, state, body, lease_until_ms, created_ms, updated_ms, lease_owner) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(&row.id)
        .bind(&row.idem_key)
        .bind(&row.payment_key)
        .bind(row.chain_id as i64)
        .bind(&row.state)
        .bind(&row.body)
        .bind(lease_until_ms as i64)
        .bind(row.created_ms as i64)
        .bind(owner)
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 1 {
            return Ok((row.clone(), true));
        }
        let found = self.sponsorship_for(row).await?;
        found
            .map(|f| (f, false))
            .ok_or_else(|| StoreError::Corrupt("sponsorship conflict without a row".into()))
    }

    /// The record sharing `row`'s idempotency key or payment.
    async fn sponsorship_for(
        &self,
        row: &SponsorshipRow,
    ) -> Result<Option<SponsorshipRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM sponsorships WHERE payment_key = $1 OR (idem_key IS NOT NULL AND idem_key = $2)"
        ))
        .bind(&row.payment_key)
        .bind(row.idem_key.as_deref().unwrap_or(""))
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// The record `id`.
    pub async fn sponsorship(&self, id: &str) -> Result<Option<SponsorshipRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM sponsorships WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// The record whose idempotency key is `key`.
    pub async fn sponsorship_by_key(
        &self,
        key: &str,
    ) -> Result<Option<SponsorshipRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM sponsorships WHERE idem_key = $1"
        ))
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// Records a move of `id` from state `from` (hashes and error set only
    /// when given), made by `owner`: only while the record is still in
    /// `from` and `owner` holds its lease. Whether it was recorded (a
    /// driver that lost the lease records nothing; the holder drives on).
    pub async fn update_sponsorship(
        &self,
        id: &str,
        m: &SponsorshipMove,
        (from, owner): (&str, &str),
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE sponsorships SET state = $1, settle_tx = COALESCE($2, settle_tx), \
             sponsor_tx = COALESCE($3, sponsor_tx), refund_tx = COALESCE($4, refund_tx), \
             error = COALESCE($5, error), updated_ms = $6 \
             WHERE id = $7 AND state = $8 AND lease_owner = $9",
        )
        .bind(&m.state)
        .bind(&m.settle_tx)
        .bind(&m.sponsor_tx)
        .bind(&m.refund_tx)
        .bind(&m.error)
        .bind(self.clock().now_ms() as i64)
        .bind(id)
        .bind(from)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Claims an unfinished record (one of [`crate::run::OPEN`]) whose
    /// lease lapsed, held by `owner` until `until_ms`; `None` when there is
    /// none.
    pub async fn claim_sponsorship(
        &self,
        owner: &str,
        (now_ms, until_ms): (u64, u64),
    ) -> Result<Option<SponsorshipRow>, StoreError> {
        match LEASE
            .claim_next(self, Some(owner), (now_ms, until_ms), "created_ms")
            .await?
        {
            Some(id) => self.sponsorship(&id).await,
            None => Ok(None),
        }
    }

    /// Extends (or drops, with `until_ms` 0) `owner`'s lease of `id`:
    /// whether `owner` still held it.
    pub async fn lease_sponsorship(
        &self,
        id: &str,
        owner: &str,
        until_ms: u64,
    ) -> Result<bool, StoreError> {
        LEASE.renew(self, id, Some(owner), until_ms).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::Store;

    fn row(id: &str, key: Option<&str>, payment: &str) -> SponsorshipRow {
        SponsorshipRow {
            id: id.into(),
            idem_key: key.map(String::from),
            payment_key: payment.into(),
            chain_id: 8453,
            state: "ACCEPTED".into(),
            body: "{}".into(),
            settle_tx: None,
            sponsor_tx: None,
            refund_tx: None,
            error: None,
            created_ms: 1,
        }
    }

    /// One payment, one record; a lease keeps other replicas off it.
    async fn one_record_per_payment_and_one_holder(s: Store) {
        let s = Sponsorships::from(s);
        s.migrate(MIGRATIONS).await.unwrap();
        let (first, new) = s
            .begin_sponsorship(&row("sp_a", Some("k1"), "p1"), ("r1", 1_000))
            .await
            .unwrap();
        assert!(new);
        let (again, new) = s
            .begin_sponsorship(&row("sp_b", None, "p1"), ("r1", 1_000))
            .await
            .unwrap();
        assert_eq!(
            (new, again.id.as_str()),
            (false, "sp_a"),
            "the same payment"
        );
        let (by_key, new) = s
            .begin_sponsorship(&row("sp_c", Some("k1"), "p2"), ("r1", 1_000))
            .await
            .unwrap();
        assert_eq!(
            (new, by_key.payment_key.as_str()),
            (false, "p1"),
            "the same key"
        );
        assert_eq!(s.sponsorship_by_key("k1").await.unwrap(), Some(first));
        assert_eq!(
            s.claim_sponsorship("r2", (999, 5_000)).await.unwrap(),
            None,
            "held"
        );
        let claimed = s
            .claim_sponsorship("r2", (1_001, 5_000))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(claimed.id, "sp_a");
        assert_eq!(
            s.claim_sponsorship("r3", (1_002, 5_000)).await.unwrap(),
            None,
            "claimed once"
        );
        let settled = SponsorshipMove {
            state: "SETTLED".into(),
            settle_tx: Some("0x01".into()),
            ..Default::default()
        };
        assert!(
            !s.update_sponsorship("sp_a", &settled, ("ACCEPTED", "r1"))
                .await
                .unwrap(),
            "r1 lost its lease to r2: it records nothing"
        );
        assert!(!s.lease_sponsorship("sp_a", "r1", 9_000).await.unwrap());
        assert!(s
            .update_sponsorship("sp_a", &settled, ("ACCEPTED", "r2"))
            .await
            .unwrap());
        assert!(
            !s.update_sponsorship("sp_a", &settled, ("ACCEPTED", "r2"))
                .await
                .unwrap(),
            "a move from a state the record left is not made"
        );
        let done = SponsorshipMove {
            state: "SPONSORED".into(),
            sponsor_tx: Some("0x02".into()),
            ..Default::default()
        };
        assert!(s
            .update_sponsorship("sp_a", &done, ("SETTLED", "r2"))
            .await
            .unwrap());
        let r = s.sponsorship("sp_a").await.unwrap().unwrap();
        assert_eq!(
            (
                r.state.as_str(),
                r.settle_tx.as_deref(),
                r.sponsor_tx.as_deref()
            ),
            ("SPONSORED", Some("0x01"), Some("0x02"))
        );
        assert_eq!(
            s.claim_sponsorship("r3", (10_000, 20_000)).await.unwrap(),
            None,
            "finished"
        );
    }

    #[test]
    fn the_lease_claims_every_open_state() {
        let lease = format!("{LEASE:?}");
        for state in crate::run::OPEN {
            assert!(lease.contains(&format!("'{state}'")), "{state}: {lease}");
        }
    }

    #[tokio::test]
    async fn sponsorships_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        one_record_per_payment_and_one_holder(Store::connect(&url).await.unwrap()).await;
    }

    #[tokio::test]
    async fn sponsorships_on_postgres() {
        let url = relay_fixtures::postgres_database();
        one_record_per_payment_and_one_holder(Store::connect(&url).await.unwrap()).await;
    }
}
