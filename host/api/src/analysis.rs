//! Proof endpoints (spec §4.3, read-only): `GET /api/outcome/verify`
//! (chain-checked delivery), `GET /api/evidence/bundle` (the sealed,
//! offline-verifiable evidence of one route) and `GET /api/forensics/fee`
//! (every unit withheld, by whom). Thin over
//! [`relay_analysis`]: read the route and its journal, read the receipts,
//! shape the answer.

use super::{ApiError, AppState, ErrorCode};
use alloy::primitives::Address;
use axum::{
    extract::{Query, State},
    http::header,
    response::{IntoResponse, Response},
    Json,
};
use relay_analysis::{
    bundle,
    evidence::{self, EvidenceBundle, OutcomeEvidence, TxEvidence, Verdict},
    forensics::{self, FeeForensics},
    outcome::{self, Sides},
    proofs,
    retention::{self, Tagger},
    statement::{self, SignedStatement},
};
use relay_engine::fees::{Conversion, FeeSchedule};
use relay_types::route::RouteRecord;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Analysis (spec §4.2, §8.2): verified outcomes, signed refusals, erasure
/// and receipts. An erasure request is cheap to check but scans routes;
/// receipts read every chain.
/// Analysis's routes: outcomes, refusals, erasure, receipts.
fn routes_of(_: &AppState) -> OpenApiRouter<AppState> {
    routes()
        .merge(super::refusal::routes())
        .merge(super::erasure::routes())
        .merge(super::receipts::routes())
}

pub(crate) const FEATURE: relay_feature::Feature<crate::AppState> = relay_feature::Feature {
    name: "analysis",
    home: "host/analysis",
    spec: "§4.2, §4.6 (receipts), §8.2",
    section: None,
    routes: routes_of,
    limits: &[
        relay_feature::Limit::post("erasure-request", "/api/erasure/request", 5),
        relay_feature::Limit::get("receipts", "/api/receipts/{addr}", 30),
    ],
    errors: &[
        crate::ErrorCode::ErasureUnavailable,
        crate::ErrorCode::ErasureSignature,
        crate::ErrorCode::ErasureStale,
        crate::ErrorCode::UnknownErasure,
    ],
    start: None,
};

pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(verify_outcome))
        .routes(routes!(evidence_bundle))
        .routes(routes!(fee_forensics))
        .routes(routes!(spend_statement))
}

/// `?id=<route id>`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct IdQuery {
    /// A live route's id (`rt_…`).
    id: Option<String>,
}

/// A route's delivery as the chains show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct OutcomeReport {
    /// The route.
    id: String,
    /// The route's own status.
    status: String,
    /// The verdict, source debit, destination credit and reasons.
    #[serde(flatten)]
    outcome: OutcomeEvidence,
    /// Every transaction the route names, with the receipt the chain
    /// returned (logs, block number and hash): the evidence.
    transactions: Vec<TxEvidence>,
    /// When checked, epoch ms.
    checked_at: u64,
}

async fn stored_route(
    s: &AppState,
    q: IdQuery,
) -> Result<(RouteRecord, Vec<TxEvidence>), ApiError> {
    let id = q.id.filter(|i| !i.is_empty()).ok_or_else(|| {
        ApiError::new(ErrorCode::MissingField, "id: query parameter is required").field("id")
    })?;
    let store_err =
        |e: relay_store::StoreError| ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
    let (mut route, _) = s
        .store
        .get_route(&id)
        .await
        .map_err(store_err)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))?;
    delivered_upstream(s, &mut route).await;
    let journal = s.store.journal_of(&id).await.map_err(store_err)?;
    let txs = outcome::collect(&route, &journal, &s.reader).await;
    Ok((route, txs))
}

/// A live route the upstream reports delivered is judged as a status read
/// shows it (`DONE` with the upstream's `destTx`, spec §3.1 "moved by
/// status read") before its runner has recorded that on its next poll, so
/// a verification right after `DONE` finds the payout.
async fn delivered_upstream(s: &AppState, route: &mut RouteRecord) {
    if route.status.is_terminal() {
        return;
    }
    let Some(up) = s.executor.as_ref().map(|ex| ex.recheck(route)) else {
        return;
    };
    if let Some(up) = up.await.filter(|u| u.delivered()) {
        route.status = relay_types::RouteStatus::Done;
        route.dest_tx = up.dest_tx.or(route.dest_tx.take());
    }
}

#[utoipa::path(get, path = "/api/outcome/verify", tag = "analysis", summary = "Chain-checked delivery of a route: verified, failed or undetermined, with the receipts as evidence", params(IdQuery), responses((status = 200, description = "OK", body = OutcomeReport), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn verify_outcome(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Json<OutcomeReport>, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let outcome = outcome::judge(&route, Sides::of(&s.config, &route), &transactions);
    if let Err(e) = proofs::record(&s.store, &route, &outcome, s.clock.now_ms()).await {
        tracing::warn!(error = %e, "settlement proof not recorded");
    }
    Ok(Json(OutcomeReport {
        id: route.id.clone(),
        status: bundle::facts(&route).status,
        outcome,
        transactions,
        checked_at: s.clock.now_ms(),
    }))
}

#[utoipa::path(get, path = "/api/evidence/bundle", tag = "analysis", summary = "A relayer-signed evidence bundle of a route (format relay-evidence-v1), verifiable offline with `relay verify`", params(IdQuery), responses((status = 200, description = "The bundle file: canonical JSON (keys sorted, no whitespace) and a newline; the relayer's EIP-191 signature covers `payload` in the same canonical form", body = EvidenceBundle), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn evidence_bundle(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Response, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let signer = s.relayer.as_ref().map(|r| r.signer());
    let permit2: Address = s.config.permit2.parse().unwrap_or_default();
    let relayer = signer.map(|k| k.address()).unwrap_or_default();
    let authorization = bundle::authorization(&route, permit2, relayer);
    let verdict = outcome::judge(&route, Sides::of(&s.config, &route), &transactions);
    let payload = bundle::payload(
        &route,
        authorization,
        transactions,
        verdict,
        s.clock.now_ms(),
    );
    let sealed = evidence::seal(payload, signer)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        evidence::to_file(&sealed),
    )
        .into_response())
}

/// How `r`'s destination units become source units (as the engine
/// converts: same asset by decimals, else at the route's quoted rate).
fn to_source(s: &AppState, r: &RouteRecord) -> Conversion {
    use relay_engine::tokens::resolve;
    let bridged = r
        .amount
        .saturating_sub(r.relay_fee)
        .saturating_sub(r.gas_fee);
    match (
        resolve(&s.config, r.from_chain, Some(&r.from_token)),
        resolve(&s.config, r.to_chain, Some(&r.to_token)),
    ) {
        (Ok(from), Ok(to)) => Conversion::between(&from, &to, bridged, r.estimated).inverse(),
        _ => Conversion::Rate {
            amount_in: r.estimated,
            amount_out: bridged,
        },
    }
}

#[utoipa::path(get, path = "/api/forensics/fee", tag = "analysis", summary = "Every unit withheld from a route, by whom (route fee, gas at cost and markup, rail fee, slippage), summing exactly to amount in minus amount out", params(IdQuery), responses((status = 200, description = "OK", body = FeeForensics), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn fee_forensics(
    State(s): State<AppState>,
    Query(q): Query<IdQuery>,
) -> Result<Json<FeeForensics>, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let o = outcome::judge(&route, Sides::of(&s.config, &route), &transactions);
    let delivered = match (o.verdict, &o.destination_credit) {
        (Verdict::Verified, Some(c)) => c.amount.parse().ok(),
        _ => None,
    };
    let fees = FeeSchedule::from_config(&s.config.quote);
    let tier = forensics::tier_of(&route, fees.standard, fees.member);
    Ok(Json(forensics::forensics(
        &route,
        tier,
        to_source(&s, &route),
        delivered,
    )))
}

/// `?address=&from=&to=`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct StatementQuery {
    /// The sender address (0x…).
    address: Option<String>,
    /// Period start: epoch seconds or ISO-8601 (default: `to` less 30 days).
    from: Option<String>,
    /// Period end: epoch seconds or ISO-8601 (default: now).
    to: Option<String>,
}

/// The longest period one statement covers.
const MAX_PERIOD_MS: u64 = 366 * 86_400_000;
/// The most routes one statement lists.
const MAX_STATEMENT_ROUTES: u32 = 5_000;

fn time_param(raw: Option<&str>, name: &str, default_ms: u64) -> Result<u64, ApiError> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(default_ms);
    };
    relay_primitives::time::parse_time_text(raw)
        .map(|secs| secs.saturating_mul(1000))
        .map_err(|why| ApiError::new(ErrorCode::InvalidField, format!("{name}: {why}")).field(name))
}

#[utoipa::path(get, path = "/api/statement/spend", tag = "analysis", summary = "A relayer-signed statement of an address's routes and fees over a period (scheme relay-statement-v1)", params(StatementQuery), responses((status = 200, description = "The statement, its canonical JSON (`message`) and the relayer's EIP-191 signature of it", body = SignedStatement), (status = "default", description = "A typed error (400 MISSING_FIELD / INVALID_FIELD naming address, from or to)", body = crate::openapi::ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn spend_statement(
    State(s): State<AppState>,
    Query(q): Query<StatementQuery>,
) -> Result<Json<SignedStatement>, ApiError> {
    let address = q
        .address
        .as_deref()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::MissingField,
                "address: query parameter is required",
            )
            .field("address")
        })?;
    let parsed: Address = address.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidField,
            "address: not a 0x-prefixed 20-byte address",
        )
        .field("address")
    })?;
    let now = s.clock.now_ms();
    let to = time_param(q.to.as_deref(), "to", now)?;
    let from = time_param(
        q.from.as_deref(),
        "from",
        to.saturating_sub(30 * 86_400_000),
    )?;
    if from > to || to - from > MAX_PERIOD_MS {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            "from: the period must start before it ends and span at most 366 days",
        )
        .field("from"));
    }
    let routes = s
        .store
        .routes_created_between((from, to.saturating_add(999)), MAX_STATEMENT_ROUTES + 1)
        .await
        .map_err(|e| ApiError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    if routes.len() > MAX_STATEMENT_ROUTES as usize {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            format!("from: the period holds more than {MAX_STATEMENT_ROUTES} routes; ask for a shorter one"),
        )
        .field("from"));
    }
    // Routes past retention name their sender by tag (spec §8.2).
    let tagger = s
        .config
        .retention
        .secret()
        .map(|k| Tagger::new(k.as_bytes()));
    let is_address = |sender: &str| match (&tagger, retention::is_tag(sender)) {
        (Some(t), true) => t.matches(sender, address),
        _ => sender.parse::<Address>().is_ok_and(|a| a == parsed),
    };
    let built = statement::build(address, (from, to), &routes, is_address, now);
    let signer = s.relayer.as_ref().map(|r| r.signer());
    statement::seal(built, signer)
        .map(Json)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}
