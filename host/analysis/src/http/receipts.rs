//! `GET /api/receipts/{addr}` (spec §4.6): the relayer-signed settlement
//! history of an address ([`crate::receipts`], scheme
//! `relay-receipt-v1`): its delivered routes, as sender or recipient, and
//! its paid-out netting withdrawals, newest first, each signed on its own.

use crate::receipts::{self, Receipt, SignedReceipt};
use alloy::primitives::Address;
use axum::{
    extract::{Path, Query, State},
    Json,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use relay_errors::{ApiError, ErrorBody, ErrorCode};

use super::Analysis;

pub(super) fn routes() -> OpenApiRouter<Analysis> {
    OpenApiRouter::new().routes(routes!(receipts_of))
}

/// `?limit=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct ReceiptsQuery {
    /// The most receipts answered (default 50, at most 200).
    limit: Option<u32>,
}

/// The answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptsAnswer {
    /// The address, lower case.
    pub address: String,
    /// Who signed every receipt (the relayer); absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// Newest first.
    pub receipts: Vec<SignedReceipt>,
}

/// Default and largest `limit`.
const LIMITS: (u32, u32) = (50, 200);
/// Routes scanned per address.
const SCAN: u32 = 2_000;

#[utoipa::path(get, path = "/api/receipts/{addr}", tag = "accounts", summary = "The relayer-signed settlement history of an address (scheme relay-receipt-v1): delivered routes and paid-out netting withdrawals, each signed on its own", params(("addr" = String, Path, description = "The address (0x…)"), ReceiptsQuery), responses((status = 200, description = "OK", body = ReceiptsAnswer), (status = "default", description = "A typed error (400 INVALID_FIELD addr or limit)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(addr = %addr))]
async fn receipts_of(
    State(s): State<Analysis>,
    Path(addr): Path<String>,
    Query(q): Query<ReceiptsQuery>,
) -> Result<Json<ReceiptsAnswer>, ApiError> {
    let parsed: Address = addr.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidField,
            "addr: not a 0x-prefixed 20-byte address",
        )
        .field("addr")
    })?;
    let limit = q.limit.unwrap_or(LIMITS.0);
    if limit == 0 || limit > LIMITS.1 {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("limit: between 1 and {}", LIMITS.1),
        )
        .field("limit"));
    }
    let store_err =
        |e: relay_store::StoreError| ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
    // Routes past retention name the address by its tag (spec §8.2).
    let tagger = s.tagger();
    let mut needles = vec![format!("{parsed:#x}")];
    needles.extend(tagger.as_ref().map(|t| t.tag(&needles[0])));
    let routes: Vec<_> = s
        .parts
        .store
        .routes_mentioning(&needles, SCAN)
        .await
        .map_err(store_err)?
        .into_iter()
        .map(|(r, _, _)| r)
        .collect();
    let is_address = |who: &str| match &tagger {
        Some(t) => t.matches(who, &addr),
        None => who.parse::<Address>().is_ok_and(|a| a == parsed),
    };
    let mut all: Vec<Receipt> = receipts::of_routes(&addr, &routes, is_address);
    all.extend(
        withdrawals(&s, &parsed, limit)
            .await?
            .iter()
            .map(|w| receipts::of_withdrawal(&addr, w)),
    );
    all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    all.truncate(limit as usize);
    let signer = s.signer.as_ref();
    let signed = all
        .into_iter()
        .map(|r| receipts::seal(r, signer))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(Json(ReceiptsAnswer {
        address: addr.to_lowercase(),
        signer: signer.map(|k| k.address().to_string()),
        receipts: signed,
    }))
}

/// The address's paid-out netting withdrawals (none when netting is off).
async fn withdrawals(
    s: &Analysis,
    address: &Address,
    limit: u32,
) -> Result<Vec<receipts::Withdrawal>, ApiError> {
    if !s.netting {
        return Ok(Vec::new());
    }
    let ledger = relay_netting::ledger::Ledger::from(s.parts.store.clone());
    let rows = ledger
        .withdrawals_of(&format!("{address:#x}"), relay_netting::PAID, limit)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    Ok(rows
        .into_iter()
        .map(|w| receipts::Withdrawal {
            id: w.id,
            to_chain: w.to_chain,
            to_address: w.to_address,
            amount: w.amount.to_string(),
            paid: (w.amount - w.payout_cost).max(0).to_string(),
            payout_cost: w.payout_cost.to_string(),
            tx: w.tx_hash,
            created_ms: w.created_ms,
        })
        .collect())
}
