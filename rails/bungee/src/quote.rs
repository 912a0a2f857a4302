//! `GET /v3/swap/quote?userOps=tx` → a [`RailQuote`] carrying the route's
//! ready-to-send transaction (Socket Swap V3 has no build step: `prepare`
//! plans the transaction the quote already holds).

use relay_plugin_api::{
    Amount, Fee, Host, HttpRequest, HttpResponse, QuoteRequest, RailError, RailQuote,
};
use relay_rail_sdk::{
    estimate::{self, UpstreamFee},
    lane::{token_ref, NATIVE_EEEE},
    plan,
    quantity::bps_to_percent,
    upstream::error_report,
    EvmCall, EvmQuoteDetail, Quantity, Transfer, QUOTE_TTL_MS,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::json;

use crate::{ID, UPSTREAM};

/// Socket's `{success, statusCode, result, message}` envelope
/// (`SuccessResponseDto` of the V3 OpenAPI).
#[derive(Debug, Deserialize)]
pub struct Envelope<T> {
    /// Whether the call succeeded.
    pub success: bool,
    /// The answer (absent or null on failure).
    pub result: Option<T>,
}

/// The `result` of a Socket answer, or its error as a typed rail error: a
/// non-200 status is read by [`relay_rail_sdk::Upstream::status_error`];
/// `success: false` on a 200 is a retryable upstream failure carrying
/// Socket's message.
pub fn result<T: DeserializeOwned>(what: &str, resp: &HttpResponse) -> Result<T, RailError> {
    if resp.status != 200 {
        return Err(UPSTREAM.status_error(&error_report(resp)));
    }
    let env: Envelope<T> = UPSTREAM.parse(what, &resp.body)?;
    match (env.success, env.result) {
        (true, Some(r)) => Ok(r),
        (true, None) => Err(UPSTREAM.malformed(format!("{what}: success without a result"))),
        (false, _) => Err(RailError::upstream(format!(
            "{} {what} answered success: false: {}",
            UPSTREAM.name,
            error_report(resp).message
        ))),
    }
}

/// The quote request: transaction routes only (`userOps=tx`, the relayer
/// sends one transaction), the slippage as a percentage.
pub fn request(host: &dyn Host, req: &QuoteRequest, t: &Transfer) -> HttpRequest {
    let q = [
        ("userOps", "tx".to_string()),
        ("originChainId", t.from_chain.to_string()),
        ("destinationChainId", t.to_chain.to_string()),
        ("inputToken", token_ref(&req.from_token, NATIVE_EEEE)),
        ("inputAmount", req.amount.to_string()),
        ("outputToken", token_ref(&req.to_token, NATIVE_EEEE)),
        ("receiverAddress", t.recipient.clone()),
        ("userAddress", t.sender.clone()),
        ("slippage", bps_to_percent(req.slippage_bps)),
    ];
    with_affiliate(host, UPSTREAM.get(host, "/v3/swap/quote", &q))
}

/// Adds the `affiliate` header Socket issues with an API key (the rail's
/// `affiliate` configuration; an identifier, not a secret), when set.
pub fn with_affiliate(host: &dyn Host, mut req: HttpRequest) -> HttpRequest {
    if let Some(a) = host.config("affiliate").filter(|a| !a.trim().is_empty()) {
        req.headers.push(("affiliate".into(), a.trim().to_string()));
    }
    req
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteResult {
    input: Input,
    #[serde(default)]
    routes: Vec<Route>,
}

#[derive(Debug, Deserialize)]
struct Input {
    amount: Amount,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Route {
    user_op: String,
    quote_id: String,
    expires_at: Option<u64>,
    output: Output,
    estimated_time: Option<f64>,
    route_details: Option<RouteDetails>,
    approval: Option<Approval>,
    tx_data: Option<TxData>,
    gas_fee: Option<GasFee>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Output {
    amount: Amount,
    min_amount_out: Option<Amount>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RouteDetails {
    name: Option<String>,
    bridge_details: Option<ProtocolDetails>,
    fee_details: Option<FeeDetails>,
}

#[derive(Debug, Deserialize)]
struct ProtocolDetails {
    protocol: Option<Protocol>,
}

#[derive(Debug, Deserialize)]
struct Protocol {
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FeeDetails {
    amount: Option<Amount>,
    token: Option<TokenInfo>,
}

#[derive(Debug, Deserialize)]
struct TokenInfo {
    symbol: Option<String>,
    address: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Approval {
    amount: Option<Amount>,
    token_address: Option<String>,
    spender_address: String,
}

#[derive(Debug, Deserialize)]
struct TxData {
    kind: String,
    object: TxObject,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TxObject {
    chain_id: Option<u64>,
    to: String,
    data: String,
    value: Option<Quantity>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GasFee {
    gas_limit: Option<Quantity>,
}

/// What `track` needs: Socket Swap V3 tracks a route by its `quoteId`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackRef {
    /// The route's `quoteId` (the key of `GET /v3/swap/status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_id: Option<String>,
}

/// The kind of `txData` the relayer can send: an EVM transaction.
const EVM_TX: &str = "evm_tx";

/// Turns Socket's answer into a quote: the transaction route with the
/// largest output.
pub fn parse(
    host: &dyn Host,
    req: &QuoteRequest,
    t: &Transfer,
    resp: &HttpResponse,
) -> Result<RailQuote, RailError> {
    let result: QuoteResult = result("quote", resp)?;
    let route = pick(result.routes)?;
    let tx = route
        .tx_data
        .as_ref()
        .ok_or_else(|| UPSTREAM.malformed("a tx route without txData"))?;
    if tx.object.chain_id.is_some_and(|c| c != t.from_chain) {
        return Err(UPSTREAM.malformed("the route's transaction is for another chain"));
    }
    let min_out = route.output.min_amount_out.unwrap_or_else(|| {
        let out = route.output.amount;
        out.saturating_sub(out.bps(req.slippage_bps))
    });
    estimate::check_amounts(
        &UPSTREAM,
        req.amount,
        result.input.amount,
        route.output.amount,
        min_out,
    )?;
    let spender = route
        .approval
        .as_ref()
        .map(|a| check_approval(a, req))
        .transpose()?;
    let gas_limit = route
        .gas_fee
        .as_ref()
        .and_then(|g| g.gas_limit)
        .and_then(Quantity::to_u64);
    let call = EvmCall {
        to: tx.object.to.clone(),
        data: tx.object.data.clone(),
        value: tx.object.value.unwrap_or_default().0,
        gas_limit,
    }
    .checked(&UPSTREAM)?;
    let track = TrackRef {
        quote_id: Some(route.quote_id.clone()),
    };
    let detail = EvmQuoteDetail {
        upstream: ID.into(),
        sender: t.sender.clone(),
        approval_address: spender,
        transaction_request: Some(call),
        track_ref: plan::track_ref(&track),
        upstream_data: json!({ "quoteId": route.quote_id, "bridge": bridge_name(&route) }),
    };
    let now = host.now_ms();
    let ttl_end = now + QUOTE_TTL_MS;
    Ok(RailQuote {
        rail: ID.into(),
        lane: t.lane.into(),
        amount_in: req.amount,
        amount_out: route.output.amount,
        min_out,
        fees: fees(&route),
        gas: estimate::gas(req.from_chain, [gas_limit], None),
        duration_sec: estimate::duration_secs(route.estimated_time.unwrap_or_default()),
        quote_only_reason: None,
        upstream_ref: Some(route.quote_id.clone()),
        expires_at_ms: route
            .expires_at
            .map_or(ttl_end, |s| ttl_end.min(s.saturating_mul(1000))),
        detail: detail.to_json().into(),
    })
}

/// The transaction route (`userOp: tx`, `txData.kind: evm_tx`) with the
/// largest output; none is an unsupported lane.
fn pick(routes: Vec<Route>) -> Result<Route, RailError> {
    let any = !routes.is_empty();
    routes
        .into_iter()
        .filter(|r| r.user_op == "tx" && r.tx_data.as_ref().is_some_and(|t| t.kind == EVM_TX))
        .max_by_key(|r| r.output.amount)
        .ok_or_else(|| {
            RailError::unsupported(if any {
                "Socket: no route is an EVM transaction the relayer can send"
            } else {
                "Socket: no route for this transfer"
            })
        })
}

/// The route's approval must be of the source token and no more than the
/// quoted amount; its spender is what the plan approves.
fn check_approval(a: &Approval, req: &QuoteRequest) -> Result<String, RailError> {
    let token_ok = match (&a.token_address, &req.from_token.address) {
        (Some(t), Some(f)) => t.eq_ignore_ascii_case(f),
        _ => true,
    };
    if !token_ok {
        return Err(UPSTREAM.malformed("the route asks approval of another token"));
    }
    if a.amount.is_some_and(|m| m > req.amount) {
        return Err(UPSTREAM.malformed("the route asks approval above the quoted amount"));
    }
    Ok(a.spender_address.clone())
}

/// The bridge the route uses, for operators (`routeDetails.bridgeDetails.
/// protocol.name`, else `routeDetails.name`).
fn bridge_name(route: &Route) -> Option<String> {
    let d = route.route_details.as_ref()?;
    d.bridge_details
        .as_ref()
        .and_then(|b| b.protocol.as_ref())
        .and_then(|p| p.name.clone())
        .or_else(|| d.name.clone())
}

/// The route's fee (`routeDetails.feeDetails`), deducted from the output.
fn fees(route: &Route) -> Vec<Fee> {
    let Some(f) = route
        .route_details
        .as_ref()
        .and_then(|d| d.fee_details.as_ref())
    else {
        return vec![];
    };
    let (Some(amount), Some(token)) = (f.amount, f.token.as_ref()) else {
        return vec![];
    };
    if amount.is_zero() {
        return vec![];
    }
    vec![UpstreamFee {
        name: "route",
        amount,
        symbol: token.symbol.as_deref().unwrap_or("?"),
        address: token.address.as_deref(),
        included: Some(true),
    }
    .to_fee(&[])]
}
