//! The route explorer (issue 47): a page served by the host — its own
//! HTML, script and stylesheet, nothing from elsewhere — that finds a
//! route and shows it.
//!
//! - `GET /explorer` (public): find a route by its id and see everything
//!   its id already opens (`GET /api/route/status`, `/api/route/timeline`,
//!   `/api/forensics/fee`, `/api/route/why`, `/api/outcome/verify`): its
//!   stages with times, every transaction with its chain, the fees broken
//!   down, the rail and what it beat, and the chain-checked outcome. Found
//!   by a transaction hash or an address, a route shows only what the
//!   public feed shows (`GET /api/routes/recent`: lane, asset, rail,
//!   status, when, size — no id, address, hash or amount).
//! - `GET /admin/explorer` (the operator, signed in as for `/admin`):
//!   the same page, and a search by id, source, destination or any
//!   journaled transaction hash, or sender or recipient address answers
//!   every matching route in full (`GET /admin/api/explorer/find`).
//! - `GET /api/explorer/find?q=` (bucket `explorer`, 30 a minute) and
//!   `GET /api/route/timeline?id=` (bucket `timeline`, 60): the public
//!   answers behind the page. A query that is neither an id, a
//!   transaction hash nor an address is 400 `INVALID_FIELD` naming `q`.

use axum::{
    extract::{Path, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    Json,
};
use relay_admin::dashboard::RouteView;
use relay_engine::recent::RecentRoute;
use relay_types::route::RouteRecord;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    admin::Admin,
    edge::{self, QueryFields},
    recent::coarse,
    why::{store_err, stored_route},
    ApiError, AppState, ErrorCode,
};

const PAGE: &str = include_str!("explorer/page.html");
const JS: &str = include_str!("explorer/explorer.js");
const CSS: &str = include_str!("explorer/explorer.css");
/// Where the page says which explorer it is.
const MODE: &str = "{{MODE}}";
/// Routes one search answers at most.
const FOUND_AT_MOST: u32 = 20;

/// The public explorer (`/explorer`) and its answers.
pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "explorer",
    home: "host/api/src/explorer",
    spec: "host (the spec shows no explorer; §2.11 and §8.2 bound what the public one shows)",
    section: None,
    routes: |_| routes(),
    limits: &[
        relay_feature::Limit::get("explorer", "/api/explorer/find", 30),
        relay_feature::Limit::get("timeline", "/api/route/timeline", 60),
    ],
    errors: &[],
    start: None,
};

fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .route("/explorer", axum::routing::get(public_page))
        .route("/explorer/assets/{file}", axum::routing::get(asset))
        .routes(routes!(find))
        .routes(routes!(timeline))
}

/// The operator's explorer, mounted with the dashboard (same credential).
pub(crate) fn operator_routes() -> OpenApiRouter<Admin> {
    OpenApiRouter::new()
        .route("/admin/explorer", axum::routing::get(operator_page))
        .routes(routes!(operator_find))
}

/// What a search names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A route id (`rt_…`).
    Id,
    /// A transaction hash (0x and 64 hex digits).
    Transaction,
    /// An address (0x and 40 hex digits, or a non-EVM address).
    Address,
}

/// What `q` names, or why it names nothing.
fn kind_of(q: &str) -> Result<Kind, &'static str> {
    let hex = |s: &str, n: usize| {
        s.strip_prefix("0x")
            .is_some_and(|h| h.len() == n && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let word = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if q.starts_with("rt_") && q.len() <= 80 && word(q) {
        Ok(Kind::Id)
    } else if hex(q, 64) {
        Ok(Kind::Transaction)
    } else if hex(q, 40) || (q.len() >= 25 && q.len() <= 100 && word(q) && !q.contains('_')) {
        Ok(Kind::Address)
    } else {
        Err("q: a route id (rt_…), a transaction hash (0x and 64 hex digits) or an address")
    }
}

fn bad_query(why: &str) -> ApiError {
    ApiError::new(ErrorCode::InvalidField, why.to_string())
        .field("q")
        .suggest("GET /api/explorer/find?q=rt_… (or a transaction hash, or an address)")
}

/// The routes `q` (a query field) finds, and its kind.
async fn search(
    s: &AppState,
    query: QueryFields,
) -> Result<(String, Kind, Vec<RouteRecord>), ApiError> {
    let fields = edge::params(None, query)?;
    let q = fields
        .get("q")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    if q.is_empty() {
        return Err(bad_query("q: is required"));
    }
    let kind = kind_of(&q).map_err(bad_query)?;
    let found = s
        .store
        .find_routes(&q, FOUND_AT_MOST)
        .await
        .map_err(store_err)?;
    let found = match kind {
        Kind::Id => found.into_iter().filter(|r| r.id == q).collect(),
        _ => found,
    };
    Ok((q, kind, found))
}

/// One route the public search found: the feed's entry, and the id when
/// the search was by id (the caller holds it already).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The route's id: only for a search by id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What the public feed shows of it.
    #[serde(flatten)]
    pub route: RecentRoute,
}

/// The public search's answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindAnswer {
    /// The query.
    pub query: String,
    /// What it names.
    pub kind: Kind,
    /// Newest first, at most 20.
    pub routes: Vec<Found>,
    /// What the public answer leaves out.
    pub note: &'static str,
}

#[utoipa::path(
    get,
    path = "/api/explorer/find",
    tag = "routing",
    summary = "Find routes by id, transaction hash or address: by id, the route's id (everything else is read with it); otherwise only what the public feed shows (no id, address, hash or amount)",
    params(("q" = String, Query, description = "A route id (rt_…), a transaction hash (0x + 64 hex) or an address")),
    responses(
        (status = 200, description = "The routes found, newest first (at most 20)", body = FindAnswer),
        (status = "default", description = "A typed error (400 INVALID_FIELD naming q)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn find(State(s): State<AppState>, query: QueryFields) -> Result<Json<FindAnswer>, ApiError> {
    let (query, kind, found) = search(&s, query).await?;
    let now = s.clock.now_ms();
    let routes = found
        .iter()
        .map(|r| Found {
            id: (kind == Kind::Id).then(|| r.id.clone()),
            route: coarse(&s, r, now),
        })
        .collect();
    Ok(Json(FindAnswer {
        query,
        kind,
        routes,
        note: "found by a transaction or an address, a route shows only what GET /api/routes/recent shows; its id opens the rest",
    }))
}

/// The operator's search answer: every matching route in full.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatorFindAnswer {
    /// The query.
    pub query: String,
    /// What it names.
    pub kind: Kind,
    /// Newest first, at most 20.
    pub routes: Vec<RouteView>,
}

#[utoipa::path(
    get,
    path = "/admin/api/explorer/find",
    tag = "admin",
    summary = "The operator's route search: by id, source, destination or journaled transaction hash, or sender or recipient address; every matching route in full",
    params(("q" = String, Query, description = "A route id, a transaction hash or an address")),
    responses(
        (status = 200, description = "The routes found, newest first (at most 20)", body = OperatorFindAnswer),
        (status = "default", description = "A typed error (401 ADMIN_AUTH_REQUIRED, 400 INVALID_FIELD naming q)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn operator_find(State(a): State<Admin>, headers: HeaderMap, query: QueryFields) -> Response {
    if let Err(denied) = a.authorize(&headers) {
        return denied.into_response();
    }
    match search(a.app(), query).await {
        Ok((query, kind, found)) => Json(OperatorFindAnswer {
            query,
            kind,
            routes: found.into_iter().map(RouteView::of).collect(),
        })
        .into_response(),
        Err(e) => e.into_response(),
    }
}

/// One stage a route reached.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    /// The event (`created`, `status`, `done`, `failed`, …).
    pub event: String,
    /// The route's status then.
    pub status: String,
    /// When, epoch ms.
    pub at_ms: u64,
}

/// One transaction the relayer sent (or prepared) for the route.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    /// The plan's step.
    pub step: i64,
    /// Its attempt (a replacement bumps it).
    pub attempt: i64,
    /// The chain it is on.
    pub chain: String,
    /// Its hash, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// `planned`, `sent`, `mined` or `failed`.
    pub state: String,
}

/// A route's stages and transactions.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// The route.
    pub id: String,
    /// When it was accepted, epoch ms.
    pub created_ms: u64,
    /// Its stages, oldest first.
    pub stages: Vec<Stage>,
    /// Its transactions, in plan order.
    pub transactions: Vec<Transaction>,
    /// The decimals of the source and destination tokens (amounts are in
    /// their smallest units), when known.
    pub decimals: Decimals,
}

/// The decimals of a route's tokens.
#[derive(Debug, Serialize, ToSchema)]
pub struct Decimals {
    /// The source token's.
    pub from: Option<u8>,
    /// The destination token's.
    pub to: Option<u8>,
}

#[utoipa::path(
    get,
    path = "/api/route/timeline",
    tag = "routing",
    summary = "A route's stages with their times and every transaction sent for it, with its chain",
    params(("id" = String, Query, description = "The route id (rt_…)")),
    responses(
        (status = 200, description = "The timeline", body = Timeline),
        (status = "default", description = "A typed error (404 UNKNOWN_ROUTE, 400 INVALID_FIELD naming id)", body = crate::openapi::ErrorBody),
    )
)]
#[tracing::instrument(skip_all)]
async fn timeline(
    State(s): State<AppState>,
    query: QueryFields,
) -> Result<Json<Timeline>, ApiError> {
    let fields = edge::params(None, query)?;
    let Some(id) = fields
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| !i.is_empty())
    else {
        return Err(ApiError::new(ErrorCode::InvalidField, "id: is required").field("id"));
    };
    let route = stored_route(&s, id).await?;
    let stages = s.store.outbox_of(id).await.map_err(store_err)?;
    let journal = s.store.journal_of(id).await.map_err(store_err)?;
    let decimals = |chain, token: &str| {
        relay_engine::tokens::resolve(&s.config, chain, Some(token))
            .ok()
            .map(|t| t.decimals)
    };
    let decimals = Decimals {
        from: decimals(route.from_chain, &route.from_token),
        to: decimals(route.to_chain, &route.to_token),
    };
    Ok(Json(Timeline {
        decimals,
        id: route.id,
        created_ms: route.created_ms,
        stages: stages
            .into_iter()
            .map(|e| Stage {
                status: e.payload["status"].as_str().unwrap_or_default().to_string(),
                at_ms: e.payload["ts"].as_u64().unwrap_or_default(),
                event: e.event,
            })
            .collect(),
        transactions: journal
            .into_iter()
            .map(|j| Transaction {
                step: j.step,
                attempt: j.attempt,
                chain: j.chain,
                hash: j.tx_hash,
                state: j.state.as_str().to_string(),
            })
            .collect(),
    }))
}

/// The page, saying which explorer it is.
fn page(mode: &str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, relay_admin::assets::CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        PAGE.replace(MODE, mode),
    )
        .into_response()
}

/// `GET /explorer`.
async fn public_page() -> Response {
    page("public")
}

/// `GET /admin/explorer`: the operator's page; without the credential, to
/// the dashboard's sign-in.
async fn operator_page(State(a): State<Admin>, headers: HeaderMap) -> Response {
    match a.authorize(&headers) {
        Ok(_) => page("operator"),
        Err(_) => Redirect::to("/admin").into_response(),
    }
}

/// `GET /explorer/assets/{file}`.
async fn asset(Path(file): Path<String>) -> Response {
    let (kind, body) = match file.as_str() {
        "explorer.js" => ("text/javascript; charset=utf-8", JS),
        "explorer.css" => ("text/css; charset=utf-8", CSS),
        _ => return ApiError::new(ErrorCode::NotFound, "no such explorer asset").into_response(),
    };
    let headers = [
        (header::CONTENT_TYPE, kind),
        (header::CACHE_CONTROL, "no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (headers, body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_an_id_a_transaction_or_an_address() {
        assert_eq!(kind_of("rt_01HZX3"), Ok(Kind::Id));
        let tx = format!("0x{}", "ab".repeat(32));
        assert_eq!(kind_of(&tx), Ok(Kind::Transaction));
        let evm = format!("0x{}", "Cd".repeat(20));
        assert_eq!(kind_of(&evm), Ok(Kind::Address));
        assert_eq!(
            kind_of("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
            Ok(Kind::Address)
        );
        for bad in [
            "",
            "0x12",
            "rt_%",
            "hello world",
            "' OR 1=1 --",
            &"a".repeat(200),
        ] {
            assert!(kind_of(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for part in [PAGE, JS, CSS] {
            assert!(!part.contains("http://") && !part.contains("https://"));
        }
        assert!(PAGE.contains(MODE));
    }
}
