//! The routes of a period (spend statements, spec §4.3
//! `/api/statement/spend`): read in creation order; the caller filters by
//! address (addresses live in the route body, or their retention tags);
//! the routes that mention an address (receipts, erasure).

use super::{routes::corrupt, Store, StoreError};
use relay_types::route::RouteRecord;
use sqlx::Row;

impl Store {
    /// Up to `limit` routes created in `[from_ms, to_ms]`, oldest first. A
    /// row that does not decode is skipped (and logged).
    pub async fn routes_created_between(
        &self,
        (from_ms, to_ms): (u64, u64),
        limit: u32,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let rows = sqlx::query(
            "SELECT id, body FROM routes WHERE created_ms >= $1 AND created_ms <= $2 \
             ORDER BY created_ms, id LIMIT $3",
        )
        .bind(clamp(from_ms))
        .bind(clamp(to_ms))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        super::recent::decodable(rows, "a statement")
    }

    /// Up to `limit` routes per needle, newest first, whose stored body
    /// mentions any of `needles`
    /// (matched case-insensitively), with their versions and whether each
    /// is terminal. The caller decides which of them really name the
    /// address.
    pub async fn routes_mentioning(
        &self,
        needles: &[String],
        limit: u32,
    ) -> Result<Vec<(RouteRecord, i64, bool)>, StoreError> {
        let mut out = Vec::new();
        for needle in needles {
            let rows = sqlx::query(
                "SELECT body, version, terminal FROM routes WHERE LOWER(body) LIKE $1 \
                 ORDER BY updated_ms DESC LIMIT $2",
            )
            .bind(format!("%{}%", needle.to_lowercase()))
            .bind(i64::from(limit))
            .fetch_all(self.pool())
            .await?;
            for r in rows {
                let body: String = r.try_get("body")?;
                let route: RouteRecord = serde_json::from_str(&body).map_err(corrupt)?;
                if out
                    .iter()
                    .any(|(o, _, _): &(RouteRecord, i64, bool)| o.id == route.id)
                {
                    continue;
                }
                let terminal: i64 = r.try_get("terminal")?;
                out.push((route, r.try_get("version")?, terminal != 0));
            }
        }
        Ok(out)
    }
}
