//! Erasure requests and settlement proofs (spec §8.2, §2.3): the rows
//! behind `/api/erasure/*` and `settlementProven`.

use super::{Store, StoreError};
use sqlx::{any::AnyRow, Row};

/// One erasure request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErasureRow {
    /// `er_…`.
    pub id: String,
    /// The keyed tag of the address.
    pub tag: String,
    /// The address while the request is pending; empty once completed.
    pub address: String,
    /// When asked, epoch ms.
    pub requested_ms: u64,
    /// When the statement is due, epoch ms.
    pub due_ms: u64,
    /// Routes erased so far.
    pub routes_erased: u64,
    /// Routes naming the address that were still in flight at the last pass.
    pub in_flight: u64,
    /// When completed, epoch ms.
    pub completed_ms: Option<u64>,
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn unsigned(r: &AnyRow, col: &str) -> Result<u64, sqlx::Error> {
    Ok(u64::try_from(r.try_get::<i64, _>(col)?).unwrap_or(0))
}

fn erasure_row(r: AnyRow) -> Result<ErasureRow, StoreError> {
    Ok(ErasureRow {
        id: r.try_get("id")?,
        tag: r.try_get("tag")?,
        address: r.try_get("address")?,
        requested_ms: unsigned(&r, "requested_ms")?,
        due_ms: unsigned(&r, "due_ms")?,
        routes_erased: unsigned(&r, "routes_erased")?,
        in_flight: unsigned(&r, "in_flight")?,
        completed_ms: r
            .try_get::<Option<i64>, _>("completed_ms")?
            .map(|v| u64::try_from(v).unwrap_or(0)),
    })
}

const COLUMNS: &str =
    "id, tag, address, requested_ms, due_ms, routes_erased, in_flight, completed_ms";

impl Store {
    /// Records `row` unless a request for its tag is pending; returns the
    /// pending request either way (the existing one when there was one).
    pub async fn request_erasure(&self, row: &ErasureRow) -> Result<ErasureRow, StoreError> {
        sqlx::query(
            "INSERT INTO erasure_requests (id, tag, address, requested_ms, due_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(&row.id)
        .bind(&row.tag)
        .bind(&row.address)
        .bind(ms(row.requested_ms))
        .bind(ms(row.due_ms))
        .execute(self.pool())
        .await?;
        let sql = format!(
            "SELECT {COLUMNS} FROM erasure_requests WHERE tag = $1 AND completed_ms IS NULL"
        );
        let r = sqlx::query(&sql)
            .bind(&row.tag)
            .fetch_one(self.pool())
            .await?;
        erasure_row(r)
    }

    /// The request `id`.
    pub async fn erasure(&self, id: &str) -> Result<Option<ErasureRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM erasure_requests WHERE id = $1");
        let r = sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        r.map(erasure_row).transpose()
    }

    /// Every pending request, oldest first.
    pub async fn pending_erasures(&self) -> Result<Vec<ErasureRow>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM erasure_requests WHERE completed_ms IS NULL ORDER BY requested_ms"
        );
        let rows = sqlx::query(&sql).fetch_all(self.pool()).await?;
        rows.into_iter().map(erasure_row).collect()
    }

    /// After one pass over a pending request: `erased` more routes, `in_flight`
    /// still naming it; `completed_ms` set (and the address forgotten) when
    /// the pass completed it.
    pub async fn advance_erasure(
        &self,
        id: &str,
        (erased, in_flight): (u64, u64),
        completed_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let q = match completed_ms {
            Some(done) => sqlx::query(
                "UPDATE erasure_requests SET routes_erased = routes_erased + $1, in_flight = $2, \
                 completed_ms = $3, address = '' WHERE id = $4 AND completed_ms IS NULL",
            )
            .bind(ms(erased))
            .bind(ms(in_flight))
            .bind(ms(done)),
            None => sqlx::query(
                "UPDATE erasure_requests SET routes_erased = routes_erased + $1, in_flight = $2 \
                 WHERE id = $3 AND completed_ms IS NULL",
            )
            .bind(ms(erased))
            .bind(ms(in_flight)),
        };
        q.bind(id).execute(self.pool()).await?;
        Ok(())
    }

    /// Records that a route to `node` was verified on chain (the first
    /// proof per node is kept).
    pub async fn record_settlement_proof(
        &self,
        node: &str,
        route_id: &str,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO settlement_proofs (node, route_id, verified_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (node) DO NOTHING",
        )
        .bind(node)
        .bind(route_id)
        .bind(ms(now_ms))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The nodes with a settlement proof.
    pub async fn proven_nodes(&self) -> Result<std::collections::BTreeSet<String>, StoreError> {
        let rows = sqlx::query("SELECT node FROM settlement_proofs")
            .fetch_all(self.pool())
            .await?;
        rows.into_iter()
            .map(|r| Ok(r.try_get::<String, _>("node")?))
            .collect()
    }
}
