//! The orders' records (migration 0021, applied by the first feature that
//! sells): the state, the hashes, what an open order holds, and a lease
//! ([`relay_store::durable::Lease`]) so one replica at a time drives an
//! order and a restarted host picks it up once the lease lapses. The
//! transactions live in the route journal under the order's id.

use relay_store::{durable::Lease, StoreError};
use sqlx::{any::AnyRow, Row};

use super::{OPEN, TERMINAL};

/// The orders' migrations: the table (21) and its lease's holder (30).
pub const MIGRATIONS: &[relay_store::Migration] = &[
    relay_store::Migration {
        version: 21,
        sql: include_str!("../../migrations/0021_x402_orders.sql"),
    },
    relay_store::Migration {
        version: 30,
        sql: include_str!("../../migrations/0030_x402_order_holder.sql"),
    },
];

/// An order's lease, held by one replica (`lease_owner`) at a time.
const fn lease<'a>() -> Lease<'a> {
    Lease::new("x402_orders", "lease_until_ms").held_in("lease_owner")
}

relay_store::store_view! {
    /// The store as orders use it: the transaction journal and the orders.
    pub Orders
}

/// One order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderRow {
    /// `or_…`.
    pub id: String,
    /// The selling feature (`names`).
    pub feature: String,
    /// `<feature>:<x-idempotency-key>`, when the client sent one.
    pub idem_key: Option<String>,
    /// The payment's key ([`crate::checkout::Checkout::payment_key`]).
    pub payment_key: String,
    /// What the open order reserves (`name:alice`), `None` once terminal.
    pub hold: Option<String>,
    /// The payment's chain.
    pub chain_id: u64,
    /// One of [`super::OPEN`] or [`super::TERMINAL`].
    pub state: String,
    /// The order and its payment ([`super::Body`], JSON).
    pub body: String,
    /// The settlement.
    pub settle_tx: Option<String>,
    /// What the feature delivered (its reference, e.g. a witness entry).
    pub delivered: Option<String>,
    /// The seller's payout.
    pub payout_tx: Option<String>,
    /// The refund.
    pub refund_tx: Option<String>,
    /// Why it failed or was refunded.
    pub error: Option<String>,
    /// Epoch ms.
    pub created_ms: u64,
}

/// A move of an order (fields set only when given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrderMove {
    /// The new state.
    pub state: String,
    /// Set when given.
    pub settle_tx: Option<String>,
    /// Set when given.
    pub delivered: Option<String>,
    /// Set when given.
    pub payout_tx: Option<String>,
    /// Set when given.
    pub refund_tx: Option<String>,
    /// Set when given.
    pub error: Option<String>,
}

const COLUMNS: &str = "id, feature, idem_key, payment_key, hold, chain_id, state, body, settle_tx, delivered, payout_tx, refund_tx, error, created_ms";

fn row_of(r: &AnyRow) -> Result<OrderRow, StoreError> {
    Ok(OrderRow {
        id: r.try_get("id")?,
        feature: r.try_get("feature")?,
        idem_key: r.try_get("idem_key")?,
        payment_key: r.try_get("payment_key")?,
        hold: r.try_get("hold")?,
        chain_id: r.try_get::<i64, _>("chain_id")? as u64,
        state: r.try_get("state")?,
        body: r.try_get("body")?,
        settle_tx: r.try_get("settle_tx")?,
        delivered: r.try_get("delivered")?,
        payout_tx: r.try_get("payout_tx")?,
        refund_tx: r.try_get("refund_tx")?,
        error: r.try_get("error")?,
        created_ms: r.try_get::<i64, _>("created_ms")? as u64,
    })
}

/// What [`Orders::begin_order`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begun {
    /// Inserted, held by its inserter.
    New(OrderRow),
    /// An order with the same idempotency key or payment.
    Existing(OrderRow),
    /// Another open order holds the same thing.
    Held,
}

impl Orders {
    /// Inserts `row`, held by its inserter `owner` until `lease_until_ms`,
    /// unless an order shares its idempotency key or payment, or an open
    /// one holds what it buys.
    pub async fn begin_order(
        &self,
        row: &OrderRow,
        (owner, lease_until_ms): (&str, u64),
    ) -> Result<Begun, StoreError> {
        if let Some(found) = self
            .order_for(&row.payment_key, row.idem_key.as_deref())
            .await?
        {
            return Ok(Begun::Existing(found));
        }
        let done = sqlx::query(
            "INSERT INTO x402_orders (id, feature, idem_key, payment_key, hold, chain_id, state, body, lease_until_ms, created_ms, updated_ms, lease_owner) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) ON CONFLICT DO NOTHING",
        )
        .bind(&row.id)
        .bind(&row.feature)
        .bind(&row.idem_key)
        .bind(&row.payment_key)
        .bind(&row.hold)
        .bind(row.chain_id as i64)
        .bind(&row.state)
        .bind(&row.body)
        .bind(lease_until_ms as i64)
        .bind(row.created_ms as i64)
        .bind(owner)
        .execute(self.pool())
        .await?;
        if done.rows_affected() == 1 {
            return Ok(Begun::New(row.clone()));
        }
        Ok(
            match self
                .order_for(&row.payment_key, row.idem_key.as_deref())
                .await?
            {
                Some(found) => Begun::Existing(found),
                None => Begun::Held,
            },
        )
    }

    /// The order of payment `payment_key`, or of idempotency key `idem_key`.
    pub async fn order_for(
        &self,
        payment_key: &str,
        idem_key: Option<&str>,
    ) -> Result<Option<OrderRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM x402_orders WHERE payment_key = $1 OR (idem_key IS NOT NULL AND idem_key = $2)"
        ))
        .bind(payment_key)
        .bind(idem_key.unwrap_or(""))
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// The order `id`.
    pub async fn order(&self, id: &str) -> Result<Option<OrderRow>, StoreError> {
        let r = sqlx::query(&format!("SELECT {COLUMNS} FROM x402_orders WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// The order whose idempotency key is `key` (`<feature>:<key>`).
    pub async fn order_by_key(&self, key: &str) -> Result<Option<OrderRow>, StoreError> {
        let r = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM x402_orders WHERE idem_key = $1"
        ))
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        r.as_ref().map(row_of).transpose()
    }

    /// Records a move of `id`; a terminal state lets go of its hold.
    pub async fn update_order(
        &self,
        id: &str,
        m: &OrderMove,
        (from, owner): (&str, &str),
    ) -> Result<bool, StoreError> {
        let terminal = TERMINAL.contains(&m.state.as_str());
        let done = sqlx::query(
            "UPDATE x402_orders SET state = $1, settle_tx = COALESCE($2, settle_tx), \
             delivered = COALESCE($3, delivered), payout_tx = COALESCE($4, payout_tx), \
             refund_tx = COALESCE($5, refund_tx), error = COALESCE($6, error), \
             hold = CASE WHEN $7 = 1 THEN NULL ELSE hold END, updated_ms = $8 \
             WHERE id = $9 AND state = $10 AND lease_owner = $11",
        )
        .bind(&m.state)
        .bind(&m.settle_tx)
        .bind(&m.delivered)
        .bind(&m.payout_tx)
        .bind(&m.refund_tx)
        .bind(&m.error)
        .bind(i64::from(terminal))
        .bind(self.clock().now_ms() as i64)
        .bind(id)
        .bind(from)
        .bind(owner)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Claims an open order of `feature` whose lease lapsed, held by
    /// `owner` until `until_ms`; `None` when there is none.
    pub async fn claim_order(
        &self,
        (feature, owner): (&str, &str),
        (now_ms, until_ms): (u64, u64),
    ) -> Result<Option<OrderRow>, StoreError> {
        let open = open_clause(feature);
        match lease()
            .when(&open)
            .claim_next(self, Some(owner), (now_ms, until_ms), "created_ms")
            .await?
        {
            Some(id) => self.order(&id).await,
            None => Ok(None),
        }
    }

    /// Extends (or drops, with `until_ms` 0) `owner`'s lease of `id`:
    /// whether `owner` still held it.
    pub async fn lease_order(
        &self,
        id: &str,
        owner: &str,
        until_ms: u64,
    ) -> Result<bool, StoreError> {
        lease().renew(self, id, Some(owner), until_ms).await
    }
}

/// SQL: an open order of `feature` (a feature name is an identifier the
/// code chooses, never a caller's).
fn open_clause(feature: &str) -> String {
    let states: Vec<String> = OPEN.iter().map(|s| format!("'{s}'")).collect();
    format!(
        "state IN ({}) AND feature = '{}'",
        states.join(", "),
        feature.replace('\'', "")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::Store;

    fn row(id: &str, key: Option<&str>, payment: &str, hold: &str) -> OrderRow {
        OrderRow {
            id: id.into(),
            feature: "names".into(),
            idem_key: key.map(String::from),
            payment_key: payment.into(),
            hold: Some(hold.into()),
            chain_id: 8453,
            state: "ACCEPTED".into(),
            body: "{}".into(),
            settle_tx: None,
            delivered: None,
            payout_tx: None,
            refund_tx: None,
            error: None,
            created_ms: 1,
        }
    }

    #[tokio::test]
    async fn orders_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("r.db").display());
        one_payment_one_order_and_one_open_order_per_hold(Store::connect(&url).await.unwrap())
            .await;
    }

    #[tokio::test]
    async fn orders_on_postgres() {
        let url = relay_fixtures::postgres_database();
        one_payment_one_order_and_one_open_order_per_hold(Store::connect(&url).await.unwrap())
            .await;
    }

    /// One payment, one order; one open order per held thing; a terminal
    /// order lets go of it; a lease keeps other replicas off.
    async fn one_payment_one_order_and_one_open_order_per_hold(store: Store) {
        let o = Orders::from(store);
        o.migrate(MIGRATIONS).await.unwrap();
        let a = row("or_a", Some("names:k1"), "p1", "name:alice");
        assert_eq!(
            o.begin_order(&a, ("r1", 1_000)).await.unwrap(),
            Begun::New(a.clone())
        );
        let same_payment = row("or_b", None, "p1", "name:bob");
        assert_eq!(
            o.begin_order(&same_payment, ("r1", 1_000)).await.unwrap(),
            Begun::Existing(a.clone())
        );
        let same_key = row("or_c", Some("names:k1"), "p3", "name:carol");
        assert_eq!(
            o.begin_order(&same_key, ("r1", 1_000)).await.unwrap(),
            Begun::Existing(a.clone())
        );
        let same_name = row("or_d", None, "p4", "name:alice");
        assert_eq!(
            o.begin_order(&same_name, ("r1", 1_000)).await.unwrap(),
            Begun::Held
        );
        assert_eq!(
            o.claim_order(("names", "r2"), (999, 5_000)).await.unwrap(),
            None
        );
        let claimed = o
            .claim_order(("names", "r2"), (1_001, 5_000))
            .await
            .unwrap();
        assert_eq!(claimed.map(|r| r.id), Some("or_a".into()));
        assert_eq!(
            o.claim_order(("other", "r2"), (9_999, 20_000))
                .await
                .unwrap(),
            None
        );
        let done = OrderMove {
            state: "DONE".into(),
            delivered: Some("7".into()),
            ..Default::default()
        };
        assert!(
            !o.update_order("or_a", &done, ("ACCEPTED", "r1"))
                .await
                .unwrap(),
            "r1 lost its lease to r2: it records nothing"
        );
        assert!(!o.lease_order("or_a", "r1", 9_000).await.unwrap());
        assert!(o
            .update_order("or_a", &done, ("ACCEPTED", "r2"))
            .await
            .unwrap());
        let a = o.order("or_a").await.unwrap().unwrap();
        assert_eq!((a.hold, a.delivered.as_deref()), (None, Some("7")));
        let again = row("or_e", None, "p5", "name:alice");
        assert_eq!(
            o.begin_order(&again, ("r1", 1_000)).await.unwrap(),
            Begun::New(again.clone())
        );
        assert_eq!(
            o.claim_order(("names", "r2"), (99_999, 100_000))
                .await
                .unwrap()
                .map(|r| r.id),
            Some("or_e".into())
        );
    }
}
