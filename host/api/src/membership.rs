//! `GET /api/membership/status?address=0x…` (spec §2.14, §4.1): the tier
//! an address pays and what it gets.
//!
//! An address is a member when it holds a token of any recognised
//! collection (`vip.registry`, read on chain by
//! [`relay_engine::membership::check`]). Response: `address`, `tier`
//! (`member` or `standard`), `member`, `via` (the collection that made it
//! one), `benefits {routeFeeBps, gasMarkupBps, floatlaneFee}` —
//! `floatlaneFee` is the float-lane tier this address gets on micro
//! transfers (`mode`, `who`, `when`, `fee`) — `registry` (collections
//! checked), `unread` (collections whose chain did not answer: such a miss
//! can only understate the tier) and `note`. No `address` → 400
//! `MISSING_FIELD`; not a 0x-prefixed 20-byte hex address → 400
//! `INVALID_FIELD`; both name `address`.

use alloy::primitives::Address;
use axum::{extract::State, routing::get, Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

use super::{
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_chain::reader::ChainReader;
use relay_engine::{fees::FeeSchedule, floatinfo, membership};

pub(super) fn routes(reader: Arc<ChainReader>) -> Router<AppState> {
    Router::new().route(
        "/api/membership/status",
        get(move |State(s): State<AppState>, q: QueryFields| async move {
            status(s, &reader, q).await
        }),
    )
}

fn parse_address(fields: &Value) -> Result<Address, ApiError> {
    let raw = fields
        .get("address")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingField,
                "address: query parameter is required",
            )
            .field("address")
            .suggest("GET /api/membership/status?address=0x…")
        })?;
    let hex = raw.strip_prefix("0x").unwrap_or_default();
    let well_formed = hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    well_formed
        .then(|| raw.parse::<Address>().ok())
        .flatten()
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidField,
                format!("address: {raw:?} is not a 0x-prefixed 20-byte hex address"),
            )
            .field("address")
        })
}

#[tracing::instrument(skip_all)]
async fn status(
    s: AppState,
    reader: &ChainReader,
    q: QueryFields,
) -> Result<Json<Value>, ApiError> {
    let address = parse_address(&edge::params(None, q)?)?;
    let who = address.to_string();
    let m = membership::check(reader, &s.config.vip.registry, Some(&who)).await;
    let tier = FeeSchedule::from_config(&s.config.quote).tier(m.member);
    let float_tier = floatinfo::tiers()[if m.member { 0 } else { 1 }].clone();
    let note = match (m.member, m.unread.is_empty()) {
        (true, _) => "member: holds a recognised collection (see via)",
        (false, true) => "standard: holds none of the recognised collections",
        (false, false) => {
            "standard as far as could be read: some collections did not answer (see unread)"
        }
    };
    Ok(Json(json!({
        "address": who,
        "tier": if m.member { "member" } else { "standard" },
        "member": m.member,
        "via": m.via,
        "benefits": {
            "routeFeeBps": tier.route_fee_bps,
            "gasMarkupBps": tier.gas_markup_bps,
            "floatlaneFee": float_tier,
        },
        "registry": s.config.vip.registry.len(),
        "unread": m.unread,
        "note": note,
    })))
}
