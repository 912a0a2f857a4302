//! `POST /api/route/intent`: prepares a router intent — quotes, plans the
//! route on the rail that prepares, composes its source leg into one
//! `RelayRouter` call and answers the EIP-712 typed data of each signature
//! form with the execute body to POST
//! ([`relay_execution::intent`]). Nothing is signed or sent; the prepared
//! route is kept until its deadline. A caller holds at most
//! `limits.intents_per_ip` open intents (429 `RATE_LIMITED` naming the
//! cap; [`requester`]).

use std::sync::Arc;

use axum::{
    body::Bytes,
    extract::{ConnectInfo, State},
    http::HeaderMap,
    Extension, Json,
};
use relay_execution::{execute::ExecuteService, intent::IntentAnswer};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{quote::Quoting, ApiError, AppState, ErrorCode};

#[derive(Clone)]
struct Intent {
    q: Quoting,
    service: Arc<ExecuteService>,
}

pub(super) fn routes(q: Quoting) -> OpenApiRouter<AppState> {
    let service = q.service.clone();
    OpenApiRouter::new()
        .routes(routes!(prepare))
        .with_state(Intent { q, service })
}

#[utoipa::path(
    post,
    path = "/api/route/intent",
    tag = "routing",
    summary = "Prepare a one-signature router route: the EIP-712 typed data of each form (permit2-witness, erc2612, intent) and the execute body to POST",
    request_body(content = relay_wire::RouteRequest, example = json!({"fromChain": 8453, "toChain": 42161, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC", "fromAddress": "0x000000000000000000000000000000000000bEEF"})),
    responses(
        (status = 200, description = "The prepared intent", body = IntentAnswer),
        (status = "default", description = "A typed error (400 MISSING_FIELD fromAddress, 422 ROUTER_UNAVAILABLE, …)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn prepare(
    State(x): State<Intent>,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<IntentAnswer>, ApiError> {
    let v: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::new(ErrorCode::MalformedBody, format!("body is not JSON: {e}")))?;
    if v.get("mode").is_some() {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            "mode: an intent is prepared for every router form; pick one from the answer's forms",
        )
        .field("mode"));
    }
    let ask = x.q.parse_execute(&v)?;
    let who = requester(&x.q.app, &headers, peer);
    let place = x.service.admit_intent(&who).await.map_err(cap_reached)?;
    let answer = x.service.prepare_intent(&x.q, ask).await;
    x.service.intent_settled(&who, place, answer.is_ok()).await;
    Ok(Json(answer?))
}

/// Who opens an intent, for the per-IP cap: the client IP as the rate
/// limiter counts it.
pub(super) fn requester(
    app: &AppState,
    headers: &HeaderMap,
    peer: Option<Extension<ConnectInfo<std::net::SocketAddr>>>,
) -> String {
    let peer = peer.map(|Extension(ConnectInfo(p))| p.ip());
    super::limits::client_ip(&app.config.limits, headers, peer).to_string()
}

/// The 429 of a requester at its cap of open intents.
pub(super) fn cap_reached(e: relay_execution::intent::IntentCapReached) -> ApiError {
    ApiError::new(ErrorCode::RateLimited, e.to_string())
        .retry_after_ms(e.retry_after_ms)
        .suggest("execute an open intent, or wait retryAfterMs for the oldest to lapse")
}
