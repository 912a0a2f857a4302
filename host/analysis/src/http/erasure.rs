//! Erasure (spec §8.2 "erasure statements after 7 days"):
//! `POST /api/erasure/request` and `GET /api/erasure/status`. Thin over
//! [`crate::erasure`]: the owner signs a request, the host erases
//! the address's settled routes at once (and those in flight once they
//! settle), and 7 days later answers the relayer-signed erasure statement.

use crate::{
    erasure::{self, ErasureError, SignedErasure},
    retention::Tagger,
};
use axum::{
    extract::{Query, State},
    Json,
};
use relay_store::ErasureRow;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::JsonObject;

use super::Analysis;

pub(super) fn routes() -> OpenApiRouter<Analysis> {
    OpenApiRouter::new()
        .routes(routes!(request))
        .routes(routes!(status))
}

/// `POST /api/erasure/request`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErasureRequest {
    /// The address to erase (0x…).
    pub address: String,
    /// When signed, epoch ms (within 10 minutes of the host's clock).
    pub issued_at: u64,
    /// EIP-191 signature by the address of
    /// `relay-erasure:v1:address=<lower-case address>:issuedAt=<issuedAt>`.
    pub signature: String,
}

/// `?id=&address=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct StatusQuery {
    /// The request id (`er_…`).
    id: Option<String>,
    /// The address it erases (the host keeps only its keyed tag).
    address: Option<String>,
}

/// Where an erasure request stands.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErasureAnswer {
    /// `er_…`.
    pub id: String,
    /// `pending` or `completed`.
    pub status: &'static str,
    /// When asked, epoch ms.
    pub requested_at: u64,
    /// When the statement is due (7 days after), epoch ms.
    pub statement_due_at: u64,
    /// Settled routes erased so far.
    pub routes_erased: u64,
    /// Routes naming the address still in flight (erased once settled).
    pub routes_in_flight: u64,
    /// When completed, epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<u64>,
    /// Where to fetch the statement.
    pub status_path: String,
    /// The signed statement, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement: Option<SignedErasure>,
}

fn tagger(s: &Analysis) -> Result<Tagger, ApiError> {
    s.tagger().ok_or_else(|| {
        ApiError::new(
            crate::errors::ErasureUnavailable,
            "this host has no retention key: it cannot take erasure requests",
        )
    })
}

fn store_err(e: relay_store::StoreError) -> ApiError {
    ApiError::new(ErrorCode::StoreUnavailable, e.to_string())
}

fn answer(s: &Analysis, row: &ErasureRow, address: &str) -> Result<ErasureAnswer, ApiError> {
    let signer = s.signer.as_ref();
    let statement = erasure::statement(row, address, signer, s.parts.clock.now_ms())
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(ErasureAnswer {
        id: row.id.clone(),
        status: if row.completed_ms.is_some() {
            "completed"
        } else {
            "pending"
        },
        requested_at: row.requested_ms,
        statement_due_at: row.due_ms,
        routes_erased: row.routes_erased,
        routes_in_flight: row.in_flight,
        completed_at: row.completed_ms,
        status_path: format!(
            "/api/erasure/status?id={}&address={}",
            row.id,
            address.to_lowercase()
        ),
        statement,
    })
}

#[utoipa::path(post, path = "/api/erasure/request", tag = "analysis", summary = "Ask for an address's routes to be erased (signed by the address); the signed erasure statement follows 7 days later", request_body = ErasureRequest, responses((status = 200, description = "Taken: settled routes are erased at once, routes in flight once they settle; the same pending request is answered again for the same address", body = ErasureAnswer), (status = "default", description = "A typed error (ERASURE_SIGNATURE, ERASURE_STALE, INVALID_FIELD address, ERASURE_UNAVAILABLE without a retention key)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn request(
    State(s): State<Analysis>,
    body: JsonObject,
) -> Result<Json<ErasureAnswer>, ApiError> {
    let ask: ErasureRequest = body.decode()?;
    let now = s.parts.clock.now_ms();
    let address = erasure::verify_request(&ask.address, ask.issued_at, &ask.signature, now)
        .map_err(|e| {
            let code = match &e {
                ErasureError::Address => {
                    return ApiError::new(ErrorCode::InvalidField, e.to_string()).field("address")
                }
                ErasureError::Stale { .. } => crate::errors::ErasureStale,
                ErasureError::Signature(_) => crate::errors::ErasureSignature,
            };
            ApiError::new(code, e.to_string())
        })?;
    let tagger = tagger(&s)?;
    let row = s
        .parts
        .store
        .request_erasure(&erasure::new_request(&address, &tagger, now))
        .await
        .map_err(store_err)?;
    let row = erasure::pass(&s.parts.store, &tagger, &row, now)
        .await
        .map_err(store_err)?;
    tracing::info!(id = %row.id, erased = row.routes_erased, "erasure requested");
    Ok(Json(answer(&s, &row, &ask.address)?))
}

#[utoipa::path(get, path = "/api/erasure/status", tag = "analysis", summary = "An erasure request's progress and, once completed (7 days after it was made), the relayer-signed erasure statement (scheme relay-erasure-v1)", params(StatusQuery), responses((status = 200, description = "OK", body = ErasureAnswer), (status = "default", description = "A typed error (404 UNKNOWN_ERASURE; 400 MISSING_FIELD id or address)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(id = ?q.id))]
async fn status(
    State(s): State<Analysis>,
    Query(q): Query<StatusQuery>,
) -> Result<Json<ErasureAnswer>, ApiError> {
    let need = |v: Option<String>, name: &'static str| {
        v.filter(|v| !v.is_empty()).ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingField,
                format!("{name}: query parameter is required"),
            )
            .field(name)
        })
    };
    let (id, address) = (need(q.id, "id")?, need(q.address, "address")?);
    let unknown = || ApiError::new(crate::errors::UnknownErasure, "unknown erasure request");
    // Without a key no request was ever taken.
    let tagger = tagger(&s).map_err(|_| unknown())?;
    let row = s
        .parts
        .store
        .erasure(&id)
        .await
        .map_err(store_err)?
        .filter(|r| tagger.matches(&r.tag, &address))
        .ok_or_else(unknown)?;
    Ok(Json(answer(&s, &row, &address)?))
}
