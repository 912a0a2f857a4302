//! `GET /api/capability/snapshot` (spec §4.1): what this host can do now,
//! timestamped and signed by the relayer ([`relay_engine::snapshot`]
//! defines the canonical form and the scheme).
//!
//! Response: `snapshot` (the signed object: `ts`, chains, nodes, rails with
//! lanes, versions), `message` (its canonical JSON, the exact bytes
//! signed), `scheme`, `signer`, `signature` (65-byte EIP-191 personal
//! signature, 0x-hex), `ts`, and `note` saying how to verify. A host
//! without a relayer key answers with `signature: null` and says so.

use super::{changelog, ApiError, AppState, ErrorCode};
use axum::{extract::State, routing::get, Json, Router};
use relay_engine::snapshot::{self, SCHEME};
use relay_types::now_ms;
use serde_json::{json, Value};

pub(super) fn routes() -> Router<AppState> {
    Router::new().route("/api/capability/snapshot", get(capability_snapshot))
}

#[tracing::instrument(skip_all)]
async fn capability_snapshot(State(s): State<AppState>) -> Result<Json<Value>, ApiError> {
    let ts = now_ms();
    let mut snap = super::with_mesh(&s, |i| snapshot::summary(i, ts)).await?;
    snap["versions"] = changelog::running();
    let signer = s.relayer.as_ref().map(|r| r.signer());
    let sealed = snapshot::seal(&snap, signer)
        .map_err(|e| ApiError::new(ErrorCode::RelayerUnavailable, e.to_string()))?;
    let note = match &sealed.signed.signature {
        Some(_) => "verify: the EIP-191 personal_sign signer of `message` (its UTF-8 bytes) must equal `signer`, e.g. viem verifyMessage({address: signer, message, signature}); `message` is `snapshot` as canonical JSON (keys sorted at every level, no whitespace), so it can also be rebuilt from `snapshot`",
        None => "unsigned: this host has no relayer key; `message` is still the canonical JSON of `snapshot`",
    };
    Ok(Json(json!({
        "snapshot": snap,
        "message": sealed.canonical,
        "scheme": SCHEME,
        "signer": sealed.signed.signer.map(|a| a.to_string()),
        "signature": sealed.signed.signature,
        "ts": ts,
        "note": note,
    })))
}
