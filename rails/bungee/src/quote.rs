//! `GET /v2/quote` → a [`RailQuote`] keeping the chosen route, and
//! `POST /v2/build-tx` with that route → the plan.

use relay_plugin_api::{
    Amount, ExecutionPlan, Host, HttpRequest, HttpResponse, PrepareRequest, QuoteRequest,
    RailError, RailErrorKind, RailQuote,
};
use relay_rail_sdk::{
    estimate::{self, UpstreamFee},
    evm_plan,
    lane::{token_ref, NATIVE_EEEE},
    plan,
    quantity::bps_to_percent,
    upstream::{error_report, strings_under},
    EvmCall, EvmQuoteDetail, Quantity, Transfer, QUOTE_TTL_MS,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{json, Value};

use crate::{ID, UPSTREAM};

/// Socket's `{success, result}` envelope.
#[derive(Debug, Deserialize)]
pub struct Envelope<T> {
    /// Whether the call succeeded.
    pub success: bool,
    /// The answer.
    pub result: Option<T>,
}

/// The `result` of a Socket answer, or its error as a typed rail error.
pub fn result<T: DeserializeOwned>(what: &str, resp: &HttpResponse) -> Result<T, RailError> {
    if resp.status != 200 {
        return Err(UPSTREAM.status_error(&error_report(resp)));
    }
    let env: Envelope<T> = UPSTREAM.parse(what, &resp.body)?;
    match (env.success, env.result) {
        (true, Some(r)) => Ok(r),
        (true, None) => Err(UPSTREAM.malformed(format!("{what}: success without a result"))),
        (false, _) => Err(UPSTREAM.status_error(&error_report(resp))),
    }
}

/// The quote request: single-transaction routes only (the relayer sends one
/// transaction), best output first, the slippage as a percentage.
pub fn request(host: &dyn Host, req: &QuoteRequest, t: &Transfer) -> HttpRequest {
    let slippage = bps_to_percent(req.slippage_bps);
    let q = [
        ("fromChainId", t.from_chain.to_string()),
        ("fromTokenAddress", token_ref(&req.from_token, NATIVE_EEEE)),
        ("toChainId", t.to_chain.to_string()),
        ("toTokenAddress", token_ref(&req.to_token, NATIVE_EEEE)),
        ("fromAmount", req.amount.to_string()),
        ("userAddress", t.sender.clone()),
        ("recipient", t.recipient.clone()),
        ("uniqueRoutesPerBridge", "true".into()),
        ("sort", "output".into()),
        ("singleTxOnly", "true".into()),
        ("defaultBridgeSlippage", slippage.clone()),
        ("defaultSwapSlippage", slippage),
    ];
    UPSTREAM.get(host, "/v2/quote", &q)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteResult {
    #[serde(default)]
    routes: Vec<Value>,
    #[serde(default)]
    bridge_route_errors: Value,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Route {
    route_id: String,
    from_amount: Amount,
    to_amount: Amount,
    #[serde(default)]
    used_bridge_names: Vec<String>,
    total_user_tx: Option<u32>,
    #[serde(default)]
    service_time: f64,
    #[serde(default)]
    user_txs: Vec<UserTx>,
    integrator_fee: Option<Charge>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserTx {
    #[serde(default)]
    steps: Vec<Step>,
    gas_fees: Option<GasFee>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Step {
    protocol_fees: Option<Charge>,
    min_amount_out: Option<Amount>,
}

#[derive(Debug, Deserialize)]
struct Charge {
    amount: Option<Amount>,
    asset: Option<Asset>,
}

#[derive(Debug, Deserialize)]
struct Asset {
    symbol: String,
    address: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GasFee {
    gas_limit: Option<Quantity>,
}

/// What `track` needs besides the source transaction.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackRef {
    /// The bridge the route uses (`bridgeName` of bridge-status).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bridge_name: Option<String>,
}

/// Turns Socket's answer into a quote: the best single-transaction route.
pub fn parse(
    host: &dyn Host,
    req: &QuoteRequest,
    t: &Transfer,
    resp: &HttpResponse,
) -> Result<RailQuote, RailError> {
    let result: QuoteResult = result("quote", resp)?;
    let (raw, route) = pick(&result)?;
    let min_out = route
        .user_txs
        .iter()
        .flat_map(|u| &u.steps)
        .filter_map(|s| s.min_amount_out)
        .next_back()
        .unwrap_or_else(|| {
            route
                .to_amount
                .saturating_sub(route.to_amount.bps(req.slippage_bps))
        });
    estimate::check_amounts(
        &UPSTREAM,
        req.amount,
        route.from_amount,
        route.to_amount,
        min_out,
    )?;
    let track = TrackRef {
        bridge_name: route.used_bridge_names.first().cloned(),
    };
    let detail = EvmQuoteDetail {
        upstream: ID.into(),
        sender: t.sender.clone(),
        approval_address: None,
        transaction_request: None,
        track_ref: plan::track_ref(&track),
        upstream_data: json!({ "route": raw }),
    };
    Ok(RailQuote {
        rail: ID.into(),
        lane: t.lane.into(),
        amount_in: req.amount,
        amount_out: route.to_amount,
        min_out,
        fees: fees(&route),
        gas: estimate::gas(
            req.from_chain,
            route.user_txs.iter().map(|u| {
                u.gas_fees
                    .as_ref()
                    .and_then(|g| g.gas_limit)
                    .and_then(Quantity::to_u64)
            }),
            None,
        ),
        duration_sec: estimate::duration_secs(route.service_time),
        quote_only_reason: None,
        upstream_ref: Some(route.route_id),
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: detail.to_json().into(),
    })
}

/// The first route (Socket sorts by output) the relayer can send as one
/// transaction; no route at all is an unsupported lane, or an amount out of
/// range when a bridge says the amount is below its minimum or above its
/// maximum.
fn pick(result: &QuoteResult) -> Result<(&Value, Route), RailError> {
    for raw in &result.routes {
        let route: Route = serde_json::from_value(raw.clone())
            .map_err(|e| UPSTREAM.malformed(format!("quote route: {e}")))?;
        if route.total_user_tx.unwrap_or(1) == 1 {
            return Ok((raw, route));
        }
    }
    let mut reasons = Vec::new();
    strings_under(&result.bridge_route_errors, "status", &mut reasons);
    if reasons
        .iter()
        .any(|r| matches!(*r, "MIN_AMOUNT_NOT_MET" | "MAX_AMOUNT_EXCEEDED"))
    {
        return Err(RailError::new(
            RailErrorKind::AmountOutOfRange,
            format!("Bungee: no route for this amount ({})", reasons.join(", ")),
        ));
    }
    Err(RailError::unsupported(if result.routes.is_empty() {
        "Bungee: no route for this transfer".to_string()
    } else {
        "Bungee: only multi-transaction routes, which the relayer cannot send".to_string()
    }))
}

/// Protocol fees of the route's steps (bridge fees, deducted from the
/// output) and the integrator fee.
fn fees(route: &Route) -> Vec<relay_plugin_api::Fee> {
    let steps = route
        .user_txs
        .iter()
        .flat_map(|u| &u.steps)
        .filter_map(|s| s.protocol_fees.as_ref())
        .map(|c| ("bridge", c));
    let integrator = route.integrator_fee.iter().map(|c| ("integrator", c));
    steps
        .chain(integrator)
        .filter_map(|(name, c)| {
            let (amount, asset) = (c.amount?, c.asset.as_ref()?);
            (!amount.is_zero()).then(|| {
                UpstreamFee {
                    name,
                    amount,
                    symbol: &asset.symbol,
                    address: asset.address.as_deref(),
                    included: Some(true),
                }
                .to_fee(&["integrator"])
            })
        })
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BuiltTx {
    tx_target: String,
    tx_data: String,
    value: Option<Quantity>,
    chain_id: Option<u64>,
    approval_data: Option<ApprovalData>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApprovalData {
    minimum_approval_amount: Option<Amount>,
    approval_token_address: Option<String>,
    allowance_target: String,
}

/// `prepare`: builds the quoted route's transaction with Socket and plans it.
pub fn build(host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
    let d = EvmQuoteDetail::from_prepare(req)?;
    let route = d
        .upstream_data
        .get("route")
        .filter(|r| r.is_object())
        .ok_or_else(|| RailError::invalid("quote.detail.upstreamData.route", "missing"))?;
    let http = UPSTREAM.post(host, "/v2/build-tx", &json!({ "route": route }));
    let tx: BuiltTx = result("build-tx", &UPSTREAM.send(host, http)?)?;
    if tx
        .chain_id
        .is_some_and(|c| Some(c) != req.from_chain.evm_id())
    {
        return Err(UPSTREAM.malformed("build-tx answered a transaction for another chain"));
    }
    let call = EvmCall {
        to: tx.tx_target,
        data: tx.tx_data,
        value: tx.value.unwrap_or_default().0,
        gas_limit: req.quote.gas.as_ref().map(|g| g.gas_units),
    }
    .checked(&UPSTREAM)?;
    let spender = match &tx.approval_data {
        Some(a) => Some(check_approval(a, req)?),
        None => None,
    };
    evm_plan(req, call, spender, d.track_ref)
}

fn check_approval<'a>(a: &'a ApprovalData, req: &PrepareRequest) -> Result<&'a str, RailError> {
    let token_ok = match (&a.approval_token_address, &req.from_token_address) {
        (Some(t), Some(f)) => t.eq_ignore_ascii_case(f),
        _ => true,
    };
    if !token_ok {
        return Err(UPSTREAM.malformed("build-tx asks approval of another token"));
    }
    if a.minimum_approval_amount
        .is_some_and(|m| m > req.quote.amount_in)
    {
        return Err(UPSTREAM.malformed("build-tx asks approval above the quoted amount"));
    }
    Ok(&a.allowance_target)
}
