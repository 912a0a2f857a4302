//! `GET /api/pricefeeds` (spec §4.1, §2.12): the USD price inputs the host
//! converts with, as `<ASSET>/USD` feeds. They are configuration, not
//! on-chain oracles, and say so ([`relay_engine::pricefeeds`]).

use super::AppState;
use axum::{extract::State, Json};
use relay_engine::pricefeeds;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(feeds))
}

#[utoipa::path(get, path = "/api/pricefeeds", tag = "discovery", summary = "The price inputs the host uses", responses((status = 200, description = "OK", body = pricefeeds::PriceFeeds), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn feeds(State(s): State<AppState>) -> Json<pricefeeds::PriceFeeds> {
    Json(pricefeeds::feeds(&s.config))
}
