//! The witness log's reads (spec §4.10 `witness/head`, `witness/range`;
//! beyond the spec, `witness/consistency` and `witness/inclusion`).

use axum::{extract::State, Json};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::QueryFields;
use serde::Serialize;
use utoipa::ToSchema;

use super::{number, query, service, store_error, Messaging, RANGE_MAX};
use crate::witness::{Head, ProofError};

#[utoipa::path(get, path = "/api/messages/v2/witness/head", tag = "messages",
    summary = "The signed head of the witness log: {seq, root, sig} and the C2SP checkpoint they are read from",
    responses((status = 200, description = "The head", body = Head), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn witness_head(State(m): State<Messaging>) -> Result<Json<Head>, ApiError> {
    service(&m)?
        .witness()
        .head()
        .await
        .map(Json)
        .map_err(store_error)
}

/// One entry of the witness log.
#[derive(Debug, Serialize, ToSchema)]
pub struct WitnessEntry {
    /// Its number, from 1.
    pub s: u64,
    /// SHA-256 of `body`, hex.
    pub b: String,
    /// SHA-256(previous r ‖ b), hex (r₀ is 32 zero bytes).
    pub r: String,
    /// When it was appended, ms.
    pub t: u64,
    /// What it binds: `mailbox`, `relay`, `name`, `transfer` or `issuer`
    /// (a Plus pass issuer key).
    pub kind: String,
    /// The binding (a publication's canonical JSON).
    pub body: String,
}

/// A range of the witness log.
#[derive(Debug, Serialize, ToSchema)]
pub struct WitnessRange {
    /// At most 20 entries from `from`.
    pub entries: Vec<WitnessEntry>,
}

#[utoipa::path(get, path = "/api/messages/v2/witness/range", tag = "messages",
    summary = "At most 20 entries {s, b, r, t} from `from`",
    params(
        ("from" = Option<u64>, Query, description = "The first entry (default 1)"),
        ("limit" = Option<u32>, Query, description = "At most this many (default and most 20)"),
    ),
    responses((status = 200, description = "The entries", body = WitnessRange), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn witness_range(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<WitnessRange>, ApiError> {
    let q = query(q, &["from", "limit"])?;
    let from = number(&q, "from", 1, 1..=i64::MAX as u64)?;
    let limit = number(&q, "limit", u64::from(RANGE_MAX), 1..=u64::from(RANGE_MAX))? as u32;
    let svc = service(&m)?;
    let rows = svc.store.witness(from, limit).await.map_err(store_error)?;
    Ok(Json(WitnessRange {
        entries: rows
            .into_iter()
            .map(|e| WitnessEntry {
                s: e.s,
                b: e.b,
                r: e.r,
                t: e.t,
                kind: e.kind,
                body: e.body,
            })
            .collect(),
    }))
}

/// A Merkle proof.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Proof {
    /// The tree size it proves against (the current head's `seq`).
    pub size: u64,
    /// The proof's hashes, hex, in RFC 6962 order.
    pub proof: Vec<String>,
}

fn proof_refused(e: ProofError, field: &str) -> ApiError {
    match e {
        ProofError::Range { size } => ApiError::new(
            ErrorCode::InvalidField,
            format!("{field}: must be from 1 to the log's size ({size})"),
        )
        .field(field.to_string()),
        ProofError::Store(e) => store_error(e),
    }
}

#[utoipa::path(get, path = "/api/messages/v2/witness/consistency", tag = "messages",
    summary = "RFC 6962 consistency proof from an older tree size to the current head (beyond the spec)",
    params(("from" = u64, Query, description = "The older size (a head you hold)")),
    responses((status = 200, description = "The proof", body = Proof), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn witness_consistency(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<Proof>, ApiError> {
    let q = query(q, &["from"])?;
    let from = number(&q, "from", 0, 0..=i64::MAX as u64)?;
    let (proof, size) = service(&m)?
        .witness()
        .consistency(from)
        .await
        .map_err(|e| proof_refused(e, "from"))?;
    Ok(Json(Proof { size, proof }))
}

#[utoipa::path(get, path = "/api/messages/v2/witness/inclusion", tag = "messages",
    summary = "RFC 6962 inclusion proof of entry `s` in the current head's tree (beyond the spec)",
    params(("s" = u64, Query, description = "The entry")),
    responses((status = 200, description = "The proof", body = Proof), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn witness_inclusion(
    State(m): State<Messaging>,
    q: QueryFields,
) -> Result<Json<Proof>, ApiError> {
    let q = query(q, &["s"])?;
    let s = number(&q, "s", 0, 0..=i64::MAX as u64)?;
    let (proof, size) = service(&m)?
        .witness()
        .inclusion(s)
        .await
        .map_err(|e| proof_refused(e, "s"))?;
    Ok(Json(Proof { size, proof }))
}
