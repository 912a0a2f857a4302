//! `POST /api/refusal/verify` (spec §4.3): whether a refusal — the
//! `refusal` object every typed 4xx carries, signed by the relayer key at
//! the HTTP edge ([`crate::refusal`] has the scheme) — is genuine, and
//! optionally for which request.

use axum::{extract::State, Json};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::edge::{self, JsonObject};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::Analysis;
use crate::refusal::{self, Refusal, RefusalCheck};

pub(super) fn routes() -> OpenApiRouter<Analysis> {
    OpenApiRouter::new().routes(routes!(verify))
}

/// The request a refusal answered, to check `requestHash` against.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RefusedRequest {
    /// HTTP method, e.g. `POST`.
    method: String,
    /// Path and query as sent, e.g. `/api/route/execute`.
    path: String,
    /// The body exactly as sent (empty for none).
    #[serde(default)]
    body: String,
}

/// `POST /api/refusal/verify` body.
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
struct VerifyRequest {
    /// The `refusal` object of an error answer, as received.
    refusal: Refusal,
    /// The request that was refused (optional): when given, its hash must
    /// be the refusal's `requestHash`.
    request: Option<RefusedRequest>,
}

fn field<T: serde::de::DeserializeOwned>(
    body: &Map<String, Value>,
    name: &str,
) -> Result<Option<T>, ApiError> {
    body.get(name)
        .map(|v| {
            serde_json::from_value(v.clone()).map_err(|e| {
                ApiError::new(ErrorCode::InvalidField, format!("{name}: {e}")).field(name)
            })
        })
        .transpose()
}

#[utoipa::path(post, path = "/api/refusal/verify", tag = "analysis", summary = "Whether a refusal (the `refusal` object of a 4xx answer) was signed by this host, optionally for a given request", request_body = VerifyRequest, responses((status = 200, description = "The check: `genuine`, who signed, why not", body = RefusalCheck), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn verify(
    State(s): State<Analysis>,
    JsonObject(body): JsonObject,
) -> Result<Json<RefusalCheck>, ApiError> {
    edge::only_fields(&body, &["refusal", "request"])?;
    let r: Refusal = field(&body, "refusal")?.ok_or_else(|| {
        ApiError::new(
            ErrorCode::MissingField,
            "refusal: required (the `refusal` object of an error answer)",
        )
        .field("refusal")
    })?;
    let request = field::<RefusedRequest>(&body, "request")?
        .map(|q| refusal::request_hash(&q.method, &q.path, q.body.as_bytes()));
    let expected = s.signer.as_ref().map(|k| k.address());
    Ok(Json(refusal::verify(&r, expected, request)))
}
