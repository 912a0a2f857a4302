//! `GET /api/gasless/info` (spec §2.4): the gasless configuration clients
//! sign against — derived by [`relay_engine::gasless`] from the host
//! configuration, where the address choices (`router` = the relayer,
//! `tokenPaymaster`/`entryPoint` = `null`) and Permit2's version-less
//! domain are explained.
//!
//! Optional query `chainId`: the chain the `domain` (and `chainId`) is for;
//! default the lowest configured chain. A chain this host does not serve
//! is 400 `UNKNOWN_CHAIN` naming `chainId`.

use axum::{extract::State, Json};
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    changelog::SERVICE_RELEASE,
    edge::{self, QueryFields},
    ApiError, AppState, ErrorCode,
};
use relay_engine::gasless;

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(info))
}

#[utoipa::path(get, path = "/api/gasless/info", tag = "discovery", summary = "Gasless signing info and the EIP-712 domain", params(("chainId" = Option<u64>, Query, description = "the chain the domain is for (default: the lowest configured)")), responses((status = 200, description = "OK", body = gasless::GaslessInfo), (status = "default", description = "A typed error: `{error, errorCode, retryable, …}`", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(crate) async fn info(
    State(s): State<AppState>,
    query: QueryFields,
) -> Result<Json<gasless::GaslessInfo>, ApiError> {
    let fields = edge::params(None, query)?;
    let chain = match fields.get("chainId").and_then(Value::as_str) {
        None => None,
        Some(raw) => Some(
            raw.trim()
                .parse::<u64>()
                .ok()
                .filter(|id| s.config.chains.contains_key(&id.to_string()))
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::UnknownChain,
                        format!("chainId: {raw:?} is not an EVM chain this host serves"),
                    )
                    .field("chainId")
                    .suggest("omit chainId, or use one of the keys of gaslessChains")
                })?,
        ),
    };
    Ok(Json(gasless::info(&s.config, chain, SERVICE_RELEASE)))
}
