//! The analysis HTTP adapter (spec §4.3, read-only but for erasure
//! requests): `GET /api/outcome/verify` (chain-checked delivery),
//! `GET /api/evidence/bundle` (the sealed, offline-verifiable evidence of
//! one route), `GET /api/forensics/fee` (every unit withheld, by whom),
//! `GET /api/statement/spend`, and in its modules the refusal check
//! ([`refusal`]), erasure ([`erasure`]) and receipts ([`receipts`]). Thin
//! over the crate: read the route and its journal, read the receipts,
//! shape the answer.

pub mod erasure;
pub mod receipts;
pub mod refusal;

use std::sync::Arc;

use alloy::primitives::Address;
use axum::{
    extract::{Query, State},
    http::header,
    response::{IntoResponse, Response},
    Json,
};
use relay_chain::signer::RelayerSigner;
use relay_engine::fees::{Conversion, FeeSchedule};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_execution::executor::Executor;
use relay_feature::{Feature, HasHandles, Limit, Parts};
use relay_types::route::RouteRecord;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    bundle, errors,
    evidence::{self, EvidenceBundle, OutcomeEvidence, TxEvidence, Verdict},
    forensics::{self, FeeForensics},
    outcome::{self, Sides},
    proofs,
    retention::{self, Tagger},
    statement::{self, SignedStatement},
};

/// What the handlers read: the host's parts, the relayer's signer (none
/// without a key: nothing is signed) and its executor (upstream rechecks).
#[derive(Clone)]
pub struct Analysis {
    /// The host's parts.
    pub parts: Parts,
    /// The relayer's signer.
    pub signer: Option<RelayerSigner>,
    /// The executor of live routes.
    pub executor: Option<Arc<Executor>>,
    /// Whether netting accounts are on (their paid withdrawals are
    /// receipts too).
    pub netting: bool,
}

impl Analysis {
    /// The retention key's tagger (spec §8.2), when the key is in the
    /// environment: routes past retention name addresses by their tags.
    pub(crate) fn tagger(&self) -> Option<Tagger> {
        let secret = self.parts.config.retention.secret()?;
        Some(Tagger::new(secret.as_bytes()))
    }
}

/// An erasure request is cheap to check but scans routes; receipts read
/// every chain.
const LIMITS: &[Limit] = &[
    Limit::post("erasure-request", "/api/erasure/request", 5),
    Limit::get("receipts", "/api/receipts/{addr}", 30),
];

/// Analysis (spec §4.3, §4.6 receipts, §8.2): verified outcomes, evidence
/// bundles, fee forensics, spend statements, refusal checks, erasure and
/// receipts, as the host registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "analysis",
        home: "host/analysis",
        spec: "§4.3, §4.6 (receipts), §8.2",
        section: None,
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(crate::jobs::start),
    }
}

/// The routes over the host's state `s`, holding the [`Analysis`] handle
/// the start left.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let routes = routes()
        .merge(refusal::routes())
        .merge(erasure::routes())
        .merge(receipts::routes());
    relay_feature::mount(s, routes)
}

fn routes() -> OpenApiRouter<Analysis> {
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
    s: &Analysis,
    q: IdQuery,
) -> Result<(RouteRecord, Vec<TxEvidence>), ApiError> {
    let id = q.id.filter(|i| !i.is_empty()).ok_or_else(|| {
        ApiError::new(ErrorCode::MissingField, "id: query parameter is required").field("id")
    })?;
    let store_err =
        |e: relay_store::StoreError| ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
    let (mut route, _) = s
        .parts
        .store
        .get_route(&id)
        .await
        .map_err(store_err)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRoute, "unknown route id"))?;
    delivered_upstream(s, &mut route).await;
    let journal = s.parts.store.journal_of(&id).await.map_err(store_err)?;
    let txs = outcome::collect(&route, &journal, &s.parts.reader).await;
    Ok((route, txs))
}

/// A live route the upstream reports delivered is judged as a status read
/// shows it (`DONE` with the upstream's `destTx`, spec §3.1 "moved by
/// status read") before its runner has recorded that on its next poll, so
/// a verification right after `DONE` finds the payout.
async fn delivered_upstream(s: &Analysis, route: &mut RouteRecord) {
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

#[utoipa::path(get, path = "/api/outcome/verify", tag = "analysis", summary = "Chain-checked delivery of a route: verified, failed or undetermined, with the receipts as evidence", params(IdQuery), responses((status = 200, description = "OK", body = OutcomeReport), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn verify_outcome(
    State(s): State<Analysis>,
    Query(q): Query<IdQuery>,
) -> Result<Json<OutcomeReport>, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let outcome = outcome::judge(&route, Sides::of(&s.parts.config, &route), &transactions);
    if let Err(e) = proofs::record(&s.parts.store, &route, &outcome, s.parts.clock.now_ms()).await {
        tracing::warn!(error = %e, "settlement proof not recorded");
    }
    Ok(Json(OutcomeReport {
        id: route.id.clone(),
        status: bundle::facts(&route).status,
        outcome,
        transactions,
        checked_at: s.parts.clock.now_ms(),
    }))
}

#[utoipa::path(get, path = "/api/evidence/bundle", tag = "analysis", summary = "A relayer-signed evidence bundle of a route (format relay-evidence-v1), verifiable offline with `relay verify`", params(IdQuery), responses((status = 200, description = "The bundle file: canonical JSON (keys sorted, no whitespace) and a newline; the relayer's EIP-191 signature covers `payload` in the same canonical form", body = EvidenceBundle), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn evidence_bundle(
    State(s): State<Analysis>,
    Query(q): Query<IdQuery>,
) -> Result<Response, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let signer = s.signer.as_ref();
    let permit2: Address = s.parts.config.permit2.parse().unwrap_or_default();
    let relayer = signer.map(|k| k.address()).unwrap_or_default();
    let authorization = bundle::authorization(&route, permit2, relayer);
    let verdict = outcome::judge(&route, Sides::of(&s.parts.config, &route), &transactions);
    let payload = bundle::payload(
        &route,
        authorization,
        transactions,
        verdict,
        s.parts.clock.now_ms(),
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
fn to_source(s: &Analysis, r: &RouteRecord) -> Conversion {
    use relay_engine::tokens::resolve;
    let bridged = r
        .amount
        .saturating_sub(r.relay_fee)
        .saturating_sub(r.gas_fee);
    match (
        resolve(&s.parts.config, r.from_chain, Some(&r.from_token)),
        resolve(&s.parts.config, r.to_chain, Some(&r.to_token)),
    ) {
        (Ok(from), Ok(to)) => Conversion::between(&from, &to, bridged, r.estimated).inverse(),
        _ => Conversion::Rate {
            amount_in: r.estimated,
            amount_out: bridged,
        },
    }
}

#[utoipa::path(get, path = "/api/forensics/fee", tag = "analysis", summary = "Every unit withheld from a route, by whom (route fee, gas at cost and markup, rail fee, slippage), summing exactly to amount in minus amount out", params(IdQuery), responses((status = 200, description = "OK", body = FeeForensics), (status = "default", description = "A typed error (404 UNKNOWN_ROUTE for an unknown id)", body = ErrorBody)))]
#[tracing::instrument(skip_all, fields(route = ?q.id))]
async fn fee_forensics(
    State(s): State<Analysis>,
    Query(q): Query<IdQuery>,
) -> Result<Json<FeeForensics>, ApiError> {
    let (route, transactions) = stored_route(&s, q).await?;
    let o = outcome::judge(&route, Sides::of(&s.parts.config, &route), &transactions);
    let delivered = match (o.verdict, &o.destination_credit) {
        (Verdict::Verified, Some(c)) => c.amount.parse().ok(),
        _ => None,
    };
    let fees = FeeSchedule::from_config(&s.parts.config.quote);
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

#[utoipa::path(get, path = "/api/statement/spend", tag = "analysis", summary = "A relayer-signed statement of an address's routes and fees over a period (scheme relay-statement-v1)", params(StatementQuery), responses((status = 200, description = "The statement, its canonical JSON (`message`) and the relayer's EIP-191 signature of it", body = SignedStatement), (status = "default", description = "A typed error (400 MISSING_FIELD / INVALID_FIELD naming address, from or to)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn spend_statement(
    State(s): State<Analysis>,
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
    let now = s.parts.clock.now_ms();
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
        .parts
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
    let tagger = s.tagger();
    let is_address = |sender: &str| match (&tagger, retention::is_tag(sender)) {
        (Some(t), true) => t.matches(sender, address),
        _ => sender.parse::<Address>().is_ok_and(|a| a == parsed),
    };
    let built = statement::build(address, (from, to), &routes, is_address, now);
    let signer = s.signer.as_ref();
    statement::seal(built, signer)
        .map(Json)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}
