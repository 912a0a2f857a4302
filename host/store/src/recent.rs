//! The recent-routes query behind the public feed (spec §2.11): the newest
//! stored routes first. Only live routes are ever stored (sandbox routes
//! live in memory), so the feed can never show a sandbox route. The caller
//! anonymises what it shows; this module only reads.

use super::{Store, StoreError};
use relay_types::route::RouteRecord;
use sqlx::Row;

impl Store {
    /// The `limit` most recently created routes, newest first. A row that
    /// does not decode is skipped (and logged), never shown half-read.
    pub async fn recent_routes(&self, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        let rows =
            sqlx::query("SELECT id, body FROM routes ORDER BY created_ms DESC, id DESC LIMIT $1")
                .bind(i64::from(limit))
                .fetch_all(self.pool())
                .await?;
        decodable(rows, "the feed")
    }

    /// The routes the explorer finds for `needle`, newest first, at most
    /// `limit`: the route with that id, the routes with a journaled
    /// transaction of that hash (indexed, migration 0025), and among the
    /// newest [`SEARCH_SCAN`] routes those with a quoted value equal to it
    /// in their record (sender, recipient, source or destination
    /// transaction; compared in lower case). The scan is bounded so a
    /// public search costs the same however many routes are stored.
    pub async fn find_routes(
        &self,
        needle: &str,
        limit: u32,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        let lower = needle.to_ascii_lowercase();
        let exact = sqlx::query(
            "SELECT id, body FROM routes WHERE id = $1 \
             OR id IN (SELECT route_id FROM tx_journal WHERE LOWER(tx_hash) = $2)",
        )
        .bind(needle)
        .bind(&lower)
        .fetch_all(self.pool())
        .await?;
        let recorded = sqlx::query(
            "SELECT id, body FROM (SELECT id, body, created_ms FROM routes \
             ORDER BY created_ms DESC LIMIT $1) newest \
             WHERE LOWER(body) LIKE $2 ORDER BY created_ms DESC LIMIT $3",
        )
        .bind(SEARCH_SCAN)
        .bind(format!("%\"{}\"%", like_literal(&lower)))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        let mut found = decodable(exact, "the explorer's search")?;
        found.extend(decodable(recorded, "the explorer's search")?);
        found.sort_by(|a, b| (b.created_ms, &b.id).cmp(&(a.created_ms, &a.id)));
        found.dedup_by(|a, b| a.id == b.id);
        found.truncate(limit as usize);
        Ok(found)
    }
}

/// How many of the newest routes a search by a value in their record
/// reads.
pub const SEARCH_SCAN: i64 = 10_000;

/// `s` without LIKE's wildcards (`%`, `_`, `\\`): hashes and addresses
/// hold none, and an id is matched exactly by `id = …`.
fn like_literal(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '%' | '_' | '\\'))
        .collect()
}

/// The routes of `rows` (columns `id`, `body`); a row that does not
/// decode is left out of `what` (and logged), never shown half-read.
pub(crate) fn decodable(
    rows: Vec<sqlx::any::AnyRow>,
    what: &str,
) -> Result<Vec<RouteRecord>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let body: String = row.try_get("body")?;
        match serde_json::from_str(&body) {
            Ok(r) => out.push(r),
            Err(e) => {
                let id: String = row.try_get("id")?;
                tracing::warn!(route = %id, error = %e, "undecodable route row left out of {what}");
            }
        }
    }
    Ok(out)
}
