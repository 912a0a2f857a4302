//! Netting's HTTP adapter (spec §4.7): terms, enrolment, deposits,
//! internal transfers, withdrawals, reserves and the exit preview. Thin
//! over [`NettingService`]: parse, call, shape the answer. The host mounts
//! it through [`feature`]; its routes take the [`Netting`] handle the
//! feature's start left in the host's handles.

use axum::{
    extract::{Query, State},
    Json,
};
use relay_errors::{ApiError, ErrorBody, ErrorCode};
use relay_feature::{edge::JsonObject, Feature, HasHandles, Limit, Section};

use crate::{
    errors, texts, DepositAsk, Deposited, EnrolAsk, Enrolled, NettingError, NettingService,
    Preview, Reserves, TransferAsk, Transferred, WithdrawAsk, Withdrawal,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The handle the handlers take from the host's state: the service, or
/// `None` when `[netting]` is off (every call answers
/// `NETTING_UNAVAILABLE`).
#[derive(Clone)]
pub struct Netting(pub Option<Arc<NettingService>>);

/// Fund-moving calls like an execute, enrolment and deposit claims like
/// a quote (the spec shows no limits).
const LIMITS: &[Limit] = &[
    Limit::post("netting-enroll", "/api/netting/enroll", 20),
    Limit::post("netting-deposit", "/api/netting/deposit", 20),
    Limit::post("netting-transfer", "/api/netting/transfer", 30),
    Limit::post("netting-withdraw", "/api/netting/withdraw", 8),
];

/// Custodial netting accounts (spec §4.7), as the host registers them.
pub const fn feature<S>() -> Feature<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    Feature {
        name: "netting",
        home: "host/netting",
        spec: "§4.7",
        section: Some(Section {
            name: crate::SECTION,
            check: crate::config::check,
        }),
        routes: routes_of::<S>,
        limits: LIMITS,
        errors: errors::ALL,
        start: Some(relay_feature::service::<NettingService>),
    }
}

/// The routes over the host's state `s`, holding the [`Netting`] handle
/// the start left (none: netting is off).
fn routes_of<S>(s: &S) -> OpenApiRouter<S>
where
    S: HasHandles + Clone + Send + Sync + 'static,
{
    let netting = Netting(s.handles().get::<Option<Arc<NettingService>>>().flatten());
    routes().with_state(netting)
}

fn routes() -> OpenApiRouter<Netting> {
    OpenApiRouter::new()
        .routes(routes!(terms))
        .routes(routes!(enroll))
        .routes(routes!(deposit))
        .routes(routes!(transfer))
        .routes(routes!(withdraw))
        .routes(routes!(reserves))
        .routes(routes!(preview))
}

fn service(s: &Netting) -> Result<&Arc<NettingService>, ApiError> {
    s.0.as_ref().ok_or_else(|| {
        ApiError::new(
            errors::NettingUnavailable,
            "netting accounts are off on this host ([netting] enabled = false)",
        )
    })
}

/// The API error of a refusal.
fn refused(e: NettingError) -> ApiError {
    let code = match &e {
        NettingError::Invalid { field, .. } => {
            let field = *field;
            return ApiError::new(ErrorCode::InvalidField, e.to_string()).field(field);
        }
        NettingError::Signature(_) => errors::NettingSignatureInvalid,
        NettingError::NotEnrolled { field, .. } => {
            let field = *field;
            return ApiError::new(errors::NettingNotEnrolled, e.to_string()).field(field);
        }
        NettingError::NonceSpent { .. } => errors::NettingNonceSpent,
        NettingError::Insufficient { .. } => errors::NettingInsufficientBalance,
        NettingError::Cap { .. } => errors::NettingCapExceeded,
        NettingError::SafeShare { .. } => errors::NettingSafeShareExceeded,
        NettingError::ChainUnsupported(_) => errors::NettingChainUnsupported,
        NettingError::DepositPending(_) => errors::NettingDepositPending,
        NettingError::DepositInvalid(_) => errors::NettingDepositInvalid,
        NettingError::BelowPayoutCost { .. } => errors::NettingBelowPayoutCost,
        NettingError::FloatShort { .. } => errors::NettingFloatShort,
        NettingError::PayoutFailed(_) => errors::NettingPayoutFailed,
        NettingError::NoRelayer => ErrorCode::RelayerUnavailable,
        NettingError::Unavailable(_) => errors::NettingUnavailable,
        NettingError::Store(_) => ErrorCode::StoreUnavailable,
    };
    ApiError::new(code, e.to_string())
}

/// `GET /api/netting/terms`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct TermsQuery {
    /// The address that will sign.
    address: Option<String>,
}

/// The terms to sign.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct NettingTerms {
    /// The address (lowercase).
    address: String,
    /// The terms version.
    version: &'static str,
    /// Exactly the text to sign (EIP-191 `personal_sign`).
    text: String,
    /// Whether the address is enrolled already.
    enrolled: bool,
    /// Its balance (smallest units) when enrolled.
    balance: Option<String>,
    /// Its account nonce when enrolled.
    nonce: Option<u64>,
}

#[utoipa::path(get, path = "/api/netting/terms", tag = "netting", summary = "The exact, versioned terms text an address signs to enrol", params(TermsQuery),
    responses((status = 200, description = "OK", body = NettingTerms), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn terms(
    State(s): State<Netting>,
    Query(q): Query<TermsQuery>,
) -> Result<Json<NettingTerms>, ApiError> {
    let svc = service(&s)?;
    let raw = q.address.filter(|a| !a.is_empty()).ok_or_else(|| {
        ApiError::new(
            ErrorCode::MissingField,
            "address: query parameter is required",
        )
        .field("address")
    })?;
    let a = texts::address("address", &raw).map_err(refused)?;
    let account = svc.account(&a).await.map_err(refused)?;
    Ok(Json(NettingTerms {
        address: texts::lower(&a),
        version: texts::TERMS_VERSION,
        text: svc.terms(&a),
        enrolled: account.is_some(),
        balance: account.map(|x| x.0.to_string()),
        nonce: account.map(|x| x.1),
    }))
}

#[utoipa::path(post, path = "/api/netting/enroll", tag = "netting", summary = "Enrol: the signature of the terms text must recover to the address (again: the same answer)",
    request_body = EnrolAsk,
    responses((status = 200, description = "Enrolled", body = Enrolled), (status = "default", description = "A typed error (NETTING_SIGNATURE_INVALID)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn enroll(State(s): State<Netting>, body: JsonObject) -> Result<Json<Enrolled>, ApiError> {
    let ask: EnrolAsk = body.decode()?;
    service(&s)?.enrol(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/netting/deposit", tag = "netting", summary = "Credit USDC sent to the relayer on a covered chain, once per transaction",
    request_body = DepositAsk,
    responses((status = 200, description = "Credited (`credited:false`: credited before, nothing again)", body = Deposited), (status = "default", description = "A typed error (NETTING_SAFE_SHARE_EXCEEDED, NETTING_DEPOSIT_PENDING, …)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn deposit(State(s): State<Netting>, body: JsonObject) -> Result<Json<Deposited>, ApiError> {
    let ask: DepositAsk = body.decode()?;
    service(&s)?.deposit(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/netting/transfer", tag = "netting", summary = "A free internal transfer between enrolled addresses, signed as relay-netting-transfer:v1:from=<a>:to=<b>:amount=<n>:nonce=<n>",
    request_body = TransferAsk,
    responses((status = 200, description = "Moved", body = Transferred), (status = "default", description = "A typed error (NETTING_NONCE_SPENT, NETTING_NOT_ENROLLED, …)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn transfer(
    State(s): State<Netting>,
    body: JsonObject,
) -> Result<Json<Transferred>, ApiError> {
    let ask: TransferAsk = body.decode()?;
    service(&s)?.transfer(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(post, path = "/api/netting/withdraw", tag = "netting", summary = "An on-chain payout less the destination payout cost, signed as relay-netting-withdraw:v1:from=<a>:amount=<n>:toChain=<id>:to=<addr>:nonce=<n>",
    request_body = WithdrawAsk,
    responses((status = 200, description = "Paid (or PENDING while the payout's outcome is unknown)", body = Withdrawal), (status = "default", description = "A typed error (NETTING_BELOW_PAYOUT_COST: nothing sent, …)", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn withdraw(
    State(s): State<Netting>,
    body: JsonObject,
) -> Result<Json<Withdrawal>, ApiError> {
    let ask: WithdrawAsk = body.decode()?;
    service(&s)?.withdraw(&ask).await.map(Json).map_err(refused)
}

#[utoipa::path(get, path = "/api/netting/reserves", tag = "netting", summary = "Liabilities against the relayer's float, per covered chain and in total, with the safe share and headroom",
    responses((status = 200, description = "OK", body = Reserves), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn reserves(State(s): State<Netting>) -> Result<Json<Reserves>, ApiError> {
    service(&s)?.reserves().await.map(Json).map_err(refused)
}

/// `GET /api/netting/preview`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct PreviewQuery {
    /// Smallest units, decimal.
    amount: Option<String>,
    /// A covered chain: answer `wouldSucceed` for it.
    to_chain: Option<String>,
}

#[utoipa::path(get, path = "/api/netting/preview", tag = "netting", summary = "Exits of a withdrawal ranked by payout cost (cheapestExit); with toChain, wouldSucceed", params(PreviewQuery),
    responses((status = 200, description = "OK", body = Preview), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
async fn preview(
    State(s): State<Netting>,
    Query(q): Query<PreviewQuery>,
) -> Result<Json<Preview>, ApiError> {
    let svc = service(&s)?;
    let amount = q.amount.filter(|a| !a.is_empty()).ok_or_else(|| {
        ApiError::new(
            ErrorCode::MissingField,
            "amount: query parameter is required",
        )
        .field("amount")
    })?;
    let to_chain = q
        .to_chain
        .filter(|c| !c.is_empty())
        .map(|c| c.parse::<u64>())
        .transpose()
        .map_err(|_| {
            ApiError::new(ErrorCode::InvalidField, "toChain: not a chain id").field("toChain")
        })?;
    svc.preview(&amount, to_chain)
        .await
        .map(Json)
        .map_err(refused)
}
