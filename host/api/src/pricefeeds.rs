//! `GET /api/pricefeeds` (spec §4.1, §2.12): the USD price inputs the host
//! converts with, as `<ASSET>/USD` feeds — the on-chain Chainlink-style
//! feeds it reads (`source: "chain"`, as last read by the price book) and
//! the configured fallbacks (`source: "config"`), each saying whether it is
//! in use ([`relay_engine::pricefeeds`]).

use super::AppState;
use axum::{extract::State, Json};
use relay_engine::pricefeeds;
use utoipa_axum::{router::OpenApiRouter, routes};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(feeds))
}

#[utoipa::path(
    get,
    path = "/api/pricefeeds",
    tag = "discovery",
    summary = "The price feeds the host reads: on-chain Chainlink-style feeds (chain, address, answer, updatedAt, heartbeat, stale) and the configured fallbacks",
    description = "`source: \"chain\"` entries are the `[[pricefeeds]]` feeds as last read (every `quote.feed_refresh_ms`): `answer` with `answerDecimals`, `roundId`, `updatedAt` (unix seconds), `heartbeatSecs`, `stale` (older than the heartbeat by the host's clock) and `inUse` (fresh and positive). A pair with a feed is priced by its feeds only: a stale or non-positive answer leaves it unpriced. `source: \"config\"` entries are the `[quote]` prices, used only for pairs with no feed. `value` is micro-USD; `onChainFeeds` counts the on-chain feeds.",
    responses(
        (status = 200, description = "OK", body = pricefeeds::PriceFeeds),
        (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn feeds(State(s): State<AppState>) -> Json<pricefeeds::PriceFeeds> {
    Json(pricefeeds::view(&s.prices))
}
