//! Chainflip client, as the Chainflip SDK (`@chainflip/sdk` 1.x, "Swap
//! API v2") and Broker API speak it:
//!
//! - quote: `GET {base_url}/v2/quote?amount&srcChain&srcAsset&destChain&
//!   destAsset` on the swap backend (mainnet `chainflip-swap.chainflip.io`)
//!   → a JSON array of quotes `{type: REGULAR|DCA, srcAsset{chain,asset},
//!   destAsset, depositAmount, egressAmount, includedFees[{type, chain, asset,
//!   amount}], estimatedDurationSeconds, recommendedSlippageTolerancePercent}`;
//!   errors are `{message}` (see [`fetch`] for how each reads);
//! - deposit channel (bitcoin sources): JSON-RPC
//!   `broker_request_swap_deposit_address` on the operator's broker
//!   (`broker_url`) with `[srcAsset, destAsset, destAddress, commissionBps,
//!   ccmParams, maxBoostFeeBps, affiliates, refundParameters {retry_duration,
//!   refund_address, min_price}, dcaParams]` → `{address, issued_block,
//!   channel_id, source_chain_expiry_block, channel_opening_fee}`; the
//!   channel id is `{issued_block}-{srcChain}-{channel_id}`;
//! - vault swap (EVM sources): JSON-RPC `broker_request_swap_parameter_encoding`
//!   with `[srcAsset, destAsset, destAddress, commissionBps, extraParameters
//!   {chain, input_amount, refund_parameters}, ccmParams, maxBoostFeeBps,
//!   affiliates, dcaParams]` → `{chain, calldata, value, to,
//!   source_token_address}`: the Vault call the sender makes; the swap is
//!   then known by that transaction's hash;
//! - status: `GET {base_url}/v2/swaps/{id}` → `SwapStatusResponseV2`
//!   (`packages/sdk/src/swap/v2/types.ts` of chainflip-sdk-monorepo):
//!   `{state: WAITING | RECEIVING | SWAPPING | SENDING | SENT | COMPLETED |
//!   FAILED, depositChannel?{isExpired, …}, deposit?{…, failure?},
//!   swap?{…, onChain?}, swapEgress?, refundEgress?, fallbackEgress?}`, each
//!   egress `{amount, txRef?, witnessedAt?, failedAt?, failure?{mode,
//!   reason{name, message}}, destinationAddress?}`; `404 {message}` until
//!   the swap is indexed. How the states read: [`crate`]'s `track` module.

use relay_plugin_api::{Amount, Host, HttpRequest, HttpResponse, RailError, RailErrorKind, U256};
use relay_rail_sdk::{quantity::Quantity, upstream::error_report, Upstream};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The swap backend (quotes, status).
pub const CHAINFLIP: Upstream = Upstream {
    name: "Chainflip",
    default_base: "https://chainflip-swap.chainflip.io",
};

/// The broker (deposit channels), JSON-RPC.
pub const BROKER: Upstream = Upstream {
    name: "Chainflip broker",
    default_base: "",
};

/// A Chainflip asset on a chain (`{chain: "Ethereum", asset: "USDC"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Asset {
    /// Chainflip chain name.
    pub chain: String,
    /// Asset symbol.
    pub asset: String,
}

impl Asset {
    /// `asset` on `chain`.
    pub fn new(chain: &str, asset: &str) -> Self {
        Asset {
            chain: chain.into(),
            asset: asset.to_ascii_uppercase(),
        }
    }
}

/// `GET /v2/quote` for `amount` (source smallest units); `vault_swap` asks
/// for the price of a vault swap (EVM sources) rather than a channel.
pub fn quote_request(
    host: &dyn Host,
    src: &Asset,
    dest: &Asset,
    amount: Amount,
    vault_swap: bool,
) -> HttpRequest {
    let mut query = vec![
        ("amount", amount.to_string()),
        ("srcChain", src.chain.clone()),
        ("srcAsset", src.asset.clone()),
        ("destChain", dest.chain.clone()),
        ("destAsset", dest.asset.clone()),
    ];
    if vault_swap {
        query.push(("isVaultSwap", "true".into()));
    }
    CHAINFLIP.get(host, "/v2/quote", &query)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteBody {
    #[serde(rename = "type")]
    kind: String,
    deposit_amount: Quantity,
    egress_amount: Quantity,
    #[serde(default)]
    included_fees: Vec<FeeBody>,
    #[serde(default)]
    estimated_duration_seconds: Option<f64>,
    #[serde(default)]
    recommended_slippage_tolerance_percent: Option<Value>,
}

#[derive(Clone, Debug, Deserialize)]
struct FeeBody {
    #[serde(rename = "type")]
    kind: String,
    chain: String,
    asset: String,
    amount: Quantity,
}

/// One fee Chainflip includes in a quote (already deducted from egress).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IncludedFee {
    /// `NETWORK`, `INGRESS`, `EGRESS`, `BROKER`, `BOOST`, `LIQUIDITY`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Chain of the fee asset.
    pub chain: String,
    /// Fee asset.
    pub asset: String,
    /// Smallest units of `asset`.
    pub amount: Amount,
}

/// A regular quote, read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Priced {
    /// What arrives, destination smallest units.
    pub egress: Amount,
    /// Fees, all included.
    pub fees: Vec<IncludedFee>,
    /// Expected duration, seconds.
    pub duration_sec: u32,
    /// Chainflip's recommended slippage, percent, as it wrote it.
    pub recommended_slippage_percent: Option<Value>,
}

/// Reads a `/v2/quote` body for `asked`: its `REGULAR` quote.
pub fn parse_quote(body: &[u8], asked: Amount) -> Result<Priced, RailError> {
    let quotes: Vec<QuoteBody> = CHAINFLIP.parse("quote", body)?;
    let dca_only = quotes.iter().any(|q| q.kind == "DCA");
    let Some(q) = quotes.into_iter().find(|q| q.kind == "REGULAR") else {
        // Chainflip answers only a DCA quote when a regular swap of this
        // amount lacks liquidity; this rail swaps in one go.
        return Err(if dca_only {
            RailError::new(
                RailErrorKind::AmountOutOfRange,
                "Chainflip prices this amount only as a DCA swap (not enough liquidity for one swap)",
            )
        } else {
            CHAINFLIP.malformed("no REGULAR quote in the answer")
        });
    };
    if q.deposit_amount.0 != asked {
        return Err(CHAINFLIP.malformed(format!(
            "quoted depositAmount {} for {asked}",
            q.deposit_amount.0
        )));
    }
    Ok(Priced {
        egress: q.egress_amount.0,
        fees: q
            .included_fees
            .into_iter()
            .map(|f| IncludedFee {
                kind: f.kind,
                chain: f.chain,
                asset: f.asset,
                amount: f.amount.0,
            })
            .collect(),
        duration_sec: q
            .estimated_duration_seconds
            .map(relay_rail_sdk::estimate::duration_secs)
            .unwrap_or(DEFAULT_DURATION_SEC),
        recommended_slippage_percent: q.recommended_slippage_tolerance_percent,
    })
}

/// Duration when Chainflip gives none, seconds.
pub const DEFAULT_DURATION_SEC: u32 = 900;

/// Sends `req` to `upstream`; a 200 body, or the typed error of the answer.
///
/// Chainflip's swap backend answers errors as `{message}`
/// (`ServiceError.toJSON`, chainflip-sdk-monorepo `packages/swap`):
///
/// | status, message | kind |
/// |---|---|
/// | 400 `expected amount is below minimum swap amount (…)` / `… above maximum swap amount (…)` | `AMOUNT_OUT_OF_RANGE` |
/// | 400 `amount is lower than estimated ingress fee (…)` | `AMOUNT_OUT_OF_RANGE` |
/// | 400 `swap output amount is lower than the egress fee (…)` | `AMOUNT_OUT_OF_RANGE` |
/// | 400 `insufficient liquidity for [the] requested amount` | `AMOUNT_OUT_OF_RANGE` |
/// | 400 `invalid request` (the query schema refused the pair; the rail sends only its lanes, amount > 0) | `UNSUPPORTED_LANE` |
/// | 400 `Requested assets cannot be swapped` | `UNSUPPORTED_LANE` |
/// | 503 `Asset … is disabled` | `UNSUPPORTED_LANE` |
/// | 503 maintenance, 429, 500 (`unknown error`, quoting errors), other 5xx | `UPSTREAM` (retryable) |
/// | 401/403 | `CAPABILITY`; other 4xx: the SDK's status mapping |
pub fn fetch(host: &dyn Host, upstream: &Upstream, req: HttpRequest) -> Result<Vec<u8>, RailError> {
    let resp = upstream.send(host, req)?;
    if resp.status == 200 {
        return Ok(resp.body);
    }
    Err(error(upstream, &resp))
}

/// Messages of amounts Chainflip will not swap (too small, too large, too
/// little liquidity), lower-cased.
const OUT_OF_RANGE: [&str; 8] = [
    "below minimum swap amount",
    "above maximum swap amount",
    "lower than estimated ingress fee",
    "lower than the egress fee",
    "insufficient liquidity",
    "below the minimum",
    "too small",
    "too large",
];

/// Messages of pairs Chainflip does not serve, lower-cased.
const NOT_SERVED: [&str; 6] = [
    "invalid request",
    "cannot be swapped",
    "is disabled",
    "unsupported",
    "invalid asset",
    "unknown asset",
];

fn error(upstream: &Upstream, resp: &HttpResponse) -> RailError {
    let report = error_report(resp);
    let m = report.message.to_ascii_lowercase();
    let what = format!("{} {}: {}", upstream.name, report.status, report.message);
    let refusal = matches!(report.status, 400..=499 | 503) && report.status != 429;
    if refusal && OUT_OF_RANGE.iter().any(|w| m.contains(w)) {
        return RailError::new(RailErrorKind::AmountOutOfRange, what);
    }
    if refusal && NOT_SERVED.iter().any(|w| m.contains(w)) {
        return RailError::unsupported(what);
    }
    upstream.status_error(&report)
}

/// What a deposit channel or a vault swap is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwapAsk<'a> {
    /// Source asset.
    pub src: &'a Asset,
    /// Destination asset.
    pub dest: &'a Asset,
    /// Who receives the egress.
    pub dest_address: &'a str,
    /// Source amount (for the minimum price).
    pub amount: Amount,
    /// Least egress accepted: the fill-or-kill floor.
    pub min_out: Amount,
    /// Where a refund goes, on the source chain.
    pub refund_address: &'a str,
    /// Blocks Chainflip retries before refunding.
    pub retry_duration: u32,
}

/// `min_out / amount` as Chainflip's X128 fixed-point price, `0x`-hex.
pub fn min_price_x128(amount: Amount, min_out: Amount) -> Option<String> {
    let p = min_out.mul_div(U256::from(1u8) << 128, amount.0)?;
    Some(format!("{:#x}", p.0))
}

/// The broker's URL, or a `CAPABILITY` error saying how to set it.
pub fn broker_url(host: &dyn Host) -> Result<String, RailError> {
    host.config("broker_url")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| RailError {
            retryable: false,
            ..RailError::new(
                RailErrorKind::Capability,
                "no Chainflip broker configured: set broker_url (and grant its host in egress)",
            )
        })
}

fn refund_parameters(a: &SwapAsk<'_>) -> Result<Value, RailError> {
    let min_price = min_price_x128(a.amount, a.min_out)
        .ok_or_else(|| RailError::invalid("amount", "must be greater than zero"))?;
    Ok(
        json!({"retry_duration": a.retry_duration, "refund_address": a.refund_address, "min_price": min_price}),
    )
}

fn broker_call(host: &dyn Host, method: &str, params: Value) -> Result<HttpRequest, RailError> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let req = HttpRequest::post_json(broker_url(host)?, &body);
    Ok(
        match host
            .config("broker_credential")
            .filter(|c| !c.trim().is_empty())
        {
            Some(c) => req.with_credential(c.trim()),
            None => req,
        },
    )
}

/// The JSON-RPC request opening a deposit channel.
pub fn channel_request(host: &dyn Host, a: &SwapAsk<'_>) -> Result<HttpRequest, RailError> {
    let refund = refund_parameters(a)?;
    let params = json!([
        a.src,
        a.dest,
        a.dest_address,
        0,
        null,
        null,
        null,
        refund,
        null
    ]);
    broker_call(host, "broker_request_swap_deposit_address", params)
}

/// The JSON-RPC request encoding a vault swap from an EVM chain.
pub fn vault_swap_request(host: &dyn Host, a: &SwapAsk<'_>) -> Result<HttpRequest, RailError> {
    let extra = json!({
        "chain": a.src.chain,
        "input_amount": format!("{:#x}", a.amount.0),
        "refund_parameters": refund_parameters(a)?,
    });
    let params = json!([
        a.src,
        a.dest,
        a.dest_address,
        0,
        extra,
        null,
        null,
        null,
        null
    ]);
    broker_call(host, "broker_request_swap_parameter_encoding", params)
}

/// Reads a JSON-RPC answer's `result`, or types its `error`.
fn rpc_result<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, RailError> {
    #[derive(Deserialize)]
    struct RpcError {
        message: String,
    }
    #[derive(Deserialize)]
    struct Answer<T> {
        #[serde(default = "Option::default")]
        result: Option<T>,
        #[serde(default)]
        error: Option<RpcError>,
    }
    let a: Answer<T> = BROKER.parse(what, body)?;
    if let Some(e) = a.error {
        let m = e.message.to_ascii_lowercase();
        let kind = if m.contains("minimum") || m.contains("below") {
            RailErrorKind::AmountOutOfRange
        } else if m.contains("address") {
            RailErrorKind::InvalidInput
        } else if m.contains("unsupported") {
            RailErrorKind::UnsupportedLane
        } else {
            RailErrorKind::Upstream
        };
        return Err(RailError::new(
            kind,
            format!("{}: {}", BROKER.name, e.message),
        ));
    }
    a.result
        .ok_or_else(|| BROKER.malformed(format!("{what}: neither result nor error")))
}

/// The Vault call a vault swap makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VaultSwap {
    /// The call: the Vault, its calldata and native value.
    pub call: relay_rail_sdk::EvmCall,
    /// The token the Vault pulls (approve it for `call.to`).
    pub source_token: Option<String>,
}

/// Reads the broker's answer to `broker_request_swap_parameter_encoding`.
pub fn parse_vault_swap(body: &[u8]) -> Result<VaultSwap, RailError> {
    #[derive(Deserialize)]
    struct Encoded {
        to: String,
        calldata: String,
        #[serde(default)]
        value: Option<Quantity>,
        #[serde(default)]
        source_token_address: Option<String>,
    }
    let e: Encoded = rpc_result(body, "vault swap encoding")?;
    let call = relay_rail_sdk::EvmCall {
        to: e.to,
        data: e.calldata,
        value: e.value.map(|v| v.0).unwrap_or_default(),
        gas_limit: None,
    }
    .checked(&BROKER)?;
    Ok(VaultSwap {
        call,
        source_token: e.source_token_address,
    })
}

/// An opened deposit channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// `{issued_block}-{srcChain}-{channel_id}`: what status is asked with.
    pub id: String,
    /// Where the source asset goes.
    pub deposit_address: String,
    /// Source-chain block after which the channel closes.
    pub expiry_block: u64,
}

/// Reads the broker's JSON-RPC answer for a channel on `src_chain`.
pub fn parse_channel(body: &[u8], src_chain: &str) -> Result<Channel, RailError> {
    #[derive(Deserialize)]
    struct Opened {
        address: String,
        issued_block: u64,
        channel_id: u64,
        #[serde(default)]
        source_chain_expiry_block: Option<u64>,
    }
    let o: Opened = rpc_result(body, "deposit channel")?;
    if o.address.trim().is_empty() {
        return Err(BROKER.malformed("empty deposit address"));
    }
    Ok(Channel {
        id: format!("{}-{src_chain}-{}", o.issued_block, o.channel_id),
        deposit_address: o.address,
        expiry_block: o.source_chain_expiry_block.unwrap_or_default(),
    })
}

/// `GET /v2/swaps/{id}`; `None` unless `id` is a channel id
/// (`{block}-{chain}-{channel}`) or a vault swap's transaction hash:
/// letters, digits and `-` only.
pub fn status_request(host: &dyn Host, id: &str) -> Option<HttpRequest> {
    let ok = !id.is_empty()
        && id.len() <= 80
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then(|| CHAINFLIP.get(host, &format!("/v2/swaps/{id}"), &[]))
}

/// One egress of a swap as Chainflip reports it (`swapEgress`,
/// `refundEgress`, `fallbackEgress`: `EgressFields` of the SDK's
/// `SwapStatusResponseV2`, every field optional).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Egress {
    /// The egress transaction, once broadcast (`txRef`).
    pub tx_ref: Option<String>,
    /// Whether Chainflip saw the broadcast succeed (`witnessedAt`).
    pub witnessed: bool,
    /// Why it failed, when it did (`failure.reason`, or `failedAt` alone).
    pub failure: Option<String>,
    /// Where it went, when Chainflip says (`destinationAddress`: a
    /// fallback egress's fallback address).
    pub destination: Option<String>,
}

/// What an on-chain (State Chain account) swap did (`swap.onChain`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnChain {
    /// Output was credited (`outputAmount`).
    pub output: bool,
    /// Input was refunded (`refundAmount`).
    pub refund: bool,
}

/// A swap's state as Chainflip reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwapStatus {
    /// `WAITING` … `COMPLETED`, `FAILED`, as written.
    pub state: String,
    /// The swap's output egress.
    pub swap_egress: Option<Egress>,
    /// The refund to the fill-or-kill refund address (or of a rejected deposit).
    pub refund_egress: Option<Egress>,
    /// The output sent to a CCM fallback address after the destination call failed.
    pub fallback_egress: Option<Egress>,
    /// Whether the deposit channel expired (`depositChannel.isExpired`).
    pub expired: bool,
    /// Why the deposit failed (`deposit.failure.reason`), when it did.
    pub deposit_failure: Option<String>,
    /// The on-chain outcome, for swaps from and to State Chain accounts.
    pub on_chain: Option<OnChain>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusBody {
    state: String,
    #[serde(default)]
    deposit_channel: Option<ChannelBody>,
    #[serde(default)]
    deposit: Option<LegBody>,
    #[serde(default)]
    swap: Option<SwapBody>,
    #[serde(default)]
    swap_egress: Option<LegBody>,
    #[serde(default)]
    refund_egress: Option<LegBody>,
    #[serde(default)]
    fallback_egress: Option<LegBody>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChannelBody {
    #[serde(default)]
    is_expired: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SwapBody {
    #[serde(default)]
    on_chain: Option<OnChainBody>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OnChainBody {
    #[serde(default)]
    output_amount: Option<Value>,
    #[serde(default)]
    refund_amount: Option<Value>,
}

/// A deposit or an egress: the fields the rail reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LegBody {
    #[serde(default)]
    tx_ref: Option<String>,
    #[serde(default)]
    witnessed_at: Option<Value>,
    #[serde(default)]
    failed_at: Option<Value>,
    #[serde(default)]
    failure: Option<FailureBody>,
    #[serde(default)]
    destination_address: Option<String>,
}

/// `{failedAt, failedBlockIndex, mode, reason: {name | code, message}}`.
#[derive(Deserialize)]
struct FailureBody {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    reason: Option<ReasonBody>,
}

#[derive(Deserialize)]
struct ReasonBody {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl FailureBody {
    fn describe(&self) -> String {
        let r = self.reason.as_ref();
        let name = r.and_then(|r| r.name.clone().or_else(|| r.code.clone()));
        let message = r.and_then(|r| r.message.clone());
        match (name, message, &self.mode) {
            (Some(n), Some(m), _) => format!("{m} ({n})"),
            (None, Some(m), _) => m,
            (Some(n), None, _) => n,
            (None, None, Some(mode)) => mode.clone(),
            (None, None, None) => "failed".into(),
        }
    }
}

impl LegBody {
    fn failure(&self) -> Option<String> {
        match (&self.failure, &self.failed_at) {
            (Some(f), _) => Some(f.describe()),
            (None, Some(_)) => Some("failed".into()),
            (None, None) => None,
        }
    }

    fn egress(self) -> Egress {
        Egress {
            failure: self.failure(),
            tx_ref: self.tx_ref.filter(|t| !t.is_empty()),
            witnessed: self.witnessed_at.is_some(),
            destination: self.destination_address,
        }
    }
}

/// Reads a `/v2/swaps/{id}` body (`SwapStatusResponseV2`).
pub fn parse_status(body: &[u8]) -> Result<SwapStatus, RailError> {
    let b: StatusBody = CHAINFLIP.parse("swap status", body)?;
    Ok(SwapStatus {
        expired: b
            .deposit_channel
            .and_then(|c| c.is_expired)
            .unwrap_or(false),
        deposit_failure: b.deposit.as_ref().and_then(LegBody::failure),
        on_chain: b.swap.and_then(|s| s.on_chain).map(|o| OnChain {
            output: o.output_amount.is_some(),
            refund: o.refund_amount.is_some(),
        }),
        swap_egress: b.swap_egress.map(LegBody::egress),
        refund_egress: b.refund_egress.map(LegBody::egress),
        fallback_egress: b.fallback_egress.map(LegBody::egress),
        state: b.state,
    })
}
