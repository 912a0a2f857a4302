//! Routing (spec §4.2, §4.3, §2.5–§2.10, §2.14): quote, compare, execute,
//! status and its stream, preflight, plan, the intent solver, prepared
//! intents and the agent's one-call route — adapters over
//! [`relay_app::Routing`]. §8.1 sets quote 40, execute 8, compare 30,
//! solve 20 a minute (GET and POST share a bucket); the endpoints it does
//! not list but that fan out to every rail are limited like their nearest
//! listed one: preflight 40 (one quote), plan, agent, improve and
//! preflight-full 20 (several quotes, or every rail's answer and chain
//! reads), intent 20 (stores a prepared route and reserves its owner's
//! nonces — also capped per IP and per owner, `relay_execution::intent`).

use axum::http::Method;
use relay_feature::{Feature, Limit};
use utoipa_axum::router::OpenApiRouter;

use super::{quote::Quoting, AppState, ErrorCode};

/// Routing's routes, over the host's one routing service.
fn routes(s: &AppState) -> OpenApiRouter<AppState> {
    let q = Quoting::of(s);
    super::plan::routes(q.clone())
        .merge(super::solve::routes(q.clone()))
        .merge(super::agent::routes(q.clone()))
        .merge(super::quote::routes(q.clone()))
        .merge(super::compare::routes(q.clone()))
        .merge(super::why::routes(q.clone()))
        .merge(super::improve::routes(q.clone()))
        .merge(super::track::routes())
        .merge(super::preflight::routes(q.clone()))
        .merge(super::intent::routes(q.clone()))
        .merge(super::execute::routes(q))
}

const GET_POST: &[Method] = &[Method::GET, Method::POST];

/// Routing: quotes, routes, and the checks before them.
pub(crate) const FEATURE: Feature<AppState> = Feature {
    name: "routing",
    home: "host/app/src/routing.rs",
    spec: "§4.2, §4.3",
    section: None,
    routes,
    limits: &[
        Limit::post("quote", "/api/route/quote", 40),
        Limit::post("execute", "/api/route/execute", 8),
        Limit::new("compare", GET_POST, "/api/route/compare", 30),
        Limit::new("solve", GET_POST, "/api/intent/solve", 20),
        Limit::post("preflight", "/api/route/preflight", 40),
        Limit::post("plan", "/api/route/plan", 20),
        Limit::post("agent", "/api/agent/do", 20),
        Limit::post("intent", "/api/route/intent", 20),
        Limit::post("improve", "/api/route/improve", 20),
        Limit::post("preflight-full", "/api/preflight/full", 20),
    ],
    errors: &[
        ErrorCode::UnknownRoute,
        ErrorCode::SameChainSameToken,
        ErrorCode::UnroutableLane,
        ErrorCode::Permit2Invalid,
        ErrorCode::RailsUnavailable,
        ErrorCode::AmountOutOfRange,
        ErrorCode::AttestationInvalid,
        ErrorCode::PriceMoved,
        ErrorCode::QuoteOnly,
        ErrorCode::OperatorAuthRequired,
        ErrorCode::Permit2AllowanceMissing,
        ErrorCode::InsufficientBalance,
        ErrorCode::Permit2NonceUsed,
        ErrorCode::RailCallReverts,
        ErrorCode::IntentNotFound,
        ErrorCode::IntentExpired,
        ErrorCode::IntentMismatch,
        ErrorCode::SignatureInvalid,
        ErrorCode::SignatureExpired,
        ErrorCode::NonceUsed,
        ErrorCode::RouterUnavailable,
        ErrorCode::PrivateLaneRequired,
    ],
    start: None,
};
