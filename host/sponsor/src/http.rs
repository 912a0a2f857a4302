//! Sponsorship's HTTP adapter (spec §2.15, §4.8):
//! `GET /api/7702/delegate`, `POST /api/7702/check` (free) and
//! `POST /api/7702/sponsor`. Thin over [`SponsorService`]: parse, call,
//! shape the answer — including the 402 invoice (x402 v1 body and v2
//! `PAYMENT-REQUIRED` header) and the settlement receipt headers
//! (`X-PAYMENT-RESPONSE`, `PAYMENT-RESPONSE`). The host mounts it through
//! [`feature`], its state being anything a [`Sponsor`] handle can be taken
//! from.

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{edge::JsonObject, Feature, HasHandles, Limit, Section};
use relay_x402::checkout::CheckoutError;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    check::CheckReport,
    delegate::DelegateInfo,
    errors,
    plan::{AuthorizationTuple, Plan, SponsorAsk},
    run::Sponsorship,
    x402::{self, Requirement},
    SponsorError, SponsorService,
};

/// The handle the handlers take from the host's state: the service, or
/// `None` when no chain is sponsored (every call answers
/// `SPONSOR_CHAIN_UNSUPPORTED`).
#[derive(Clone)]
pub struct Sponsor(pub Option<Arc<SponsorService>>);

/// The free check like a quote, a paid sponsorship like a fund-moving
/// execute (a 402 counts too); the spec shows no limits.
const LIMITS: &[Limit] = &[
    Limit::post("7702-check", "/api/7702/check", 40),
    Limit::post("7702-sponsor", "/api/7702/sponsor", 20),
];

/// Sponsored EIP-7702 transactions paid with x402 (spec §4.8), as the host
/// registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "sponsorship",
        home: "host/sponsor",
        spec: "§4.8",
        section: Some(Section {
            name: crate::SECTION,
            check: crate::config::check,
        }),
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(relay_feature::service::<SponsorService>),
    }
}

/// The routes over the host's state `s`, holding its [`Sponsor`] handle.
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let sponsor = Sponsor(s.handles().get::<Option<Arc<SponsorService>>>().flatten());
    routes().with_state(sponsor)
}

fn routes() -> OpenApiRouter<Sponsor> {
    OpenApiRouter::new()
        .routes(routes!(delegate))
        .routes(routes!(check))
        .routes(routes!(sponsor))
}

/// `POST /api/7702/check`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckRequest {
    /// The chain the tuple is to be used on.
    pub chain_id: u64,
    /// The signed tuple.
    pub authorization: AuthorizationTuple,
}

/// `POST /api/7702/sponsor`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SponsorRequest {
    /// The chain.
    pub chain_id: u64,
    /// The signed tuple (delegating to this host's executor).
    pub authorization: AuthorizationTuple,
    /// The call's target: the authority itself (the default).
    pub to: Option<String>,
    /// The call's data, e.g. `executeSigned(…)` (default empty: delegate only).
    pub data: Option<String>,
    /// `true`: the envelope, gas and price only; nothing is sent or charged.
    #[serde(default)]
    pub dry: bool,
}

/// The answer of a dry run.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DryRun {
    /// Always `false`.
    pub broadcast: bool,
    /// The type-4 transaction the relayer would send.
    pub envelope: crate::plan::Envelope,
    /// Its gas.
    pub est_gas: u64,
    /// The price in USD (gas at cost plus markup).
    pub price_usd: String,
    /// The whole plan.
    pub plan: Plan,
    /// The invoice a paid request must settle.
    pub accepts: Vec<Requirement>,
}

/// A 200 answer: a dry run's plan, or the paid sponsorship.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum SponsorAnswer {
    /// `dry:true`.
    Dry(DryRun),
    /// Paid.
    Paid(Sponsorship),
}

/// The 402 answer: an x402 v1 invoice with the plan (and the typed error).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentRequiredBody {
    /// 1 (v2's invoice is the `PAYMENT-REQUIRED` header).
    pub x402_version: u8,
    /// What is missing or wrong with the payment.
    pub error: String,
    /// `PAYMENT_REQUIRED`, `PAYMENT_INVALID`, `PAYMENT_INSUFFICIENT` or `PAYMENT_EXPIRED`.
    pub error_code: String,
    /// Always false: pay, then retry.
    pub retryable: bool,
    /// The accepted payments.
    pub accepts: Vec<Requirement>,
    /// The full plan.
    pub plan: Plan,
}

fn service(s: &Sponsor) -> Result<&Arc<SponsorService>, ApiError> {
    s.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::SponsorChainUnsupported,
            "this host sponsors no chain ([sponsor] delegates)",
        )
    })
}

/// The API error of a refusal.
fn refused(e: SponsorError) -> ApiError {
    let code = match &e {
        SponsorError::Invalid { field, .. } => {
            return ApiError::new(ErrorCode::InvalidField, e.to_string()).field(field.clone())
        }
        SponsorError::UnsupportedChain(_) => errors::SponsorChainUnsupported,
        SponsorError::Authorization { code, .. } => match *code {
            "AUTHORIZATION_SIGNATURE" => errors::AuthorizationSignature,
            "AUTHORIZATION_CHAIN" => errors::AuthorizationChain,
            "AUTHORIZATION_ANY_CHAIN" => errors::AuthorizationAnyChain,
            "AUTHORIZATION_NONCE" => errors::AuthorizationNonce,
            "AUTHORITY_HAS_CODE" => errors::AuthorityHasCode,
            _ => errors::AuthorizationDelegate,
        },
        SponsorError::Target(_) => {
            return ApiError::new(errors::SponsorTargetInvalid, e.to_string()).field("to")
        }
        SponsorError::WouldRevert(_) => errors::SponsorWouldRevert,
        SponsorError::Unpriced(_) => errors::SponsorUnpriced,
        SponsorError::PaymentMalformed(m) => {
            x402::http::payment_code(&CheckoutError::Malformed(m.clone()))
        }
        SponsorError::Payment(p) => x402::http::payment_code(&CheckoutError::Payment(p.clone())),
        SponsorError::RelayerUnavailable(_) => ErrorCode::RelayerUnavailable,
        SponsorError::InFlight => ErrorCode::IdempotencyInFlight,
        SponsorError::KeyReused => ErrorCode::IdempotencyMismatch,
        SponsorError::Chain(_) => errors::SponsorChainUnavailable,
        SponsorError::Store(_) => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, e.to_string())
}

#[utoipa::path(get, path = "/api/7702/delegate", tag = "sponsor", summary = "The EIP-7702 batch executor: deployments, ABI, EIP-712 scheme of executeSigned",
    responses((status = 200, description = "OK", body = DelegateInfo), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn delegate(State(s): State<Sponsor>) -> Result<Json<DelegateInfo>, ApiError> {
    Ok(Json(service(&s)?.delegate()))
}

#[utoipa::path(post, path = "/api/7702/check", tag = "sponsor", summary = "Check an EIP-7702 authorization tuple (free)",
    request_body = CheckRequest,
    responses((status = 200, description = "What the tuple proves; `problems` lists everything the sponsor would refuse", body = CheckReport), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn check(State(s): State<Sponsor>, body: JsonObject) -> Result<Json<CheckReport>, ApiError> {
    let req: CheckRequest = body.decode()?;
    let svc = service(&s)?;
    let auth = req.authorization.to_signed().map_err(refused)?;
    svc.check(req.chain_id, &auth)
        .await
        .map(Json)
        .map_err(refused)
}

/// The payment header and its name, if the request carries one.
#[utoipa::path(post, path = "/api/7702/sponsor", tag = "sponsor", summary = "Sponsor a type-4 transaction, paid with x402",
    request_body = SponsorRequest,
    params(
        relay_x402::http::PaymentHeaders,
    ),
    responses(
        (status = 200, description = "dry: the plan (DryRun); paid: the sponsorship, with X-PAYMENT-RESPONSE and PAYMENT-RESPONSE headers", body = SponsorAnswer),
        (status = 402, description = "No valid payment: the x402 invoice (the v2 one in the PAYMENT-REQUIRED header) and the plan", body = PaymentRequiredBody),
        (status = "default", description = "A typed error", body = ErrorBody),
    ))]
#[tracing::instrument(skip_all)]
async fn sponsor(
    State(s): State<Sponsor>,
    headers: HeaderMap,
    body: JsonObject,
) -> Result<Response, ApiError> {
    let req: SponsorRequest = body.decode()?;
    let svc = service(&s)?;
    let ask = SponsorAsk {
        chain_id: req.chain_id,
        authorization: req.authorization,
        to: req.to,
        data: req.data,
    };
    let resource = x402::http::resource_url(&headers, "/api/7702/sponsor");
    let key = relay_feature::edge::idempotency_key(&headers);
    if !req.dry {
        if let Some(done) = match &key {
            Some(k) => svc.by_key(k).await.map_err(refused)?,
            None => None,
        } {
            return Ok(paid(done));
        }
    }
    let plan = svc.plan(&ask).await.map_err(refused)?;
    let accepts = vec![svc.requirement(&plan, &resource).map_err(refused)?];
    if req.dry {
        return Ok(Json(SponsorAnswer::Dry(DryRun {
            broadcast: false,
            envelope: plan.envelope.clone(),
            est_gas: plan.est_gas,
            price_usd: plan.price_usd.clone(),
            plan,
            accepts,
        }))
        .into_response());
    }
    let Some(header) = x402::http::payment_header(&headers) else {
        let e = ApiError::new(
            x402::errors::PaymentRequired,
            "payment required: pay one of accepts[]",
        );
        return Ok(invoice(e, plan, accepts));
    };
    let payment = match x402::decode_payment(header) {
        Ok(p) => p,
        Err(e) => return Ok(invoice(refused(e.into()), plan, accepts)),
    };
    match svc.pay_and_sponsor(&ask, &payment, key.as_deref()).await {
        Ok(done) => Ok(paid(done)),
        Err(e) => {
            let e = refused(e);
            if e.code.status() == StatusCode::PAYMENT_REQUIRED {
                return Ok(invoice(e, plan, accepts));
            }
            Err(e)
        }
    }
}

/// The request's `x-idempotency-key` (spec §5.5), if it sent one.
/// 402: the v1 invoice body with the plan, the v2 invoice header.
fn invoice(e: ApiError, plan: Plan, accepts: Vec<Requirement>) -> Response {
    let v2 = x402::payment_required_header(&accepts[0], plan.chain_id, &e.message);
    let body = PaymentRequiredBody {
        x402_version: 1,
        error: e.message,
        error_code: e.code.as_str().into(),
        retryable: false,
        accepts,
        plan,
    };
    x402::http::invoice(body, &v2)
}

/// 200 with the sponsorship and the settlement receipt headers.
fn paid(done: Sponsorship) -> Response {
    let settled = done.settle_tx.clone().unwrap_or_default();
    let success = done.settle_tx.is_some() && done.state != crate::run::FAILED;
    let (network, payer) = (done.network.clone(), done.payer.clone());
    let resp = Json(SponsorAnswer::Paid(done)).into_response();
    x402::http::with_receipt(resp, success, (&settled, &network, &payer))
}
