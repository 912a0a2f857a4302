//! Chainflip client, as the Chainflip SDK (`@chainflip/sdk` 1.x, "Swap
//! API v2") and Broker API speak it:
//!
//! - quote: `GET {base_url}/v2/quote?amount&srcChain&srcAsset&destChain&
//!   destAsset` on the swap backend (mainnet `chainflip-swap.chainflip.io`)
//!   → a JSON array of quotes `{type: REGULAR|DCA, srcAsset{chain,asset},
//!   destAsset, depositAmount, egressAmount, includedFees[{type, chain, asset,
//!   amount}], estimatedDurationSeconds, recommendedSlippageTolerancePercent}`;
//!   errors are `{message}` (400 below the minimum, 500 no liquidity);
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
//! - status: `GET {base_url}/v2/swaps/{channelId}` → `{state: WAITING |
//!   RECEIVING | SWAPPING | SENDING | SENT | COMPLETED | FAILED,
//!   depositChannel{…}, swapEgress{amount, txRef}, refundEgress{…}}`.

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
    let q = quotes
        .into_iter()
        .find(|q| q.kind == "REGULAR")
        .ok_or_else(|| CHAINFLIP.malformed("no REGULAR quote in the answer"))?;
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

/// Sends `req` to `upstream`; a 200 body, or the typed error of the answer:
/// Chainflip's minimum/maximum and liquidity refusals are
/// `AMOUNT_OUT_OF_RANGE`, an unknown asset pair `UNSUPPORTED_LANE`.
pub fn fetch(host: &dyn Host, upstream: &Upstream, req: HttpRequest) -> Result<Vec<u8>, RailError> {
    let resp = upstream.send(host, req)?;
    if resp.status == 200 {
        return Ok(resp.body);
    }
    Err(error(upstream, &resp))
}

fn error(upstream: &Upstream, resp: &HttpResponse) -> RailError {
    let report = error_report(resp);
    let m = report.message.to_ascii_lowercase();
    let what = format!("{} {}: {}", upstream.name, report.status, report.message);
    if ["minimum", "maximum", "liquidity", "too small", "too large"]
        .iter()
        .any(|w| m.contains(w))
    {
        return RailError::new(RailErrorKind::AmountOutOfRange, what);
    }
    if report.status == 400
        && ["unsupported", "invalid asset", "unknown asset"]
            .iter()
            .any(|w| m.contains(w))
    {
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

/// A swap's state as Chainflip reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwapStatus {
    /// `WAITING` … `COMPLETED`, `FAILED`.
    pub state: String,
    /// The egress transaction, once sent.
    pub egress_tx: Option<String>,
    /// Whether a refund was sent.
    pub refunded: bool,
    /// Whether the deposit channel expired unused.
    pub expired: bool,
    /// Chainflip's failure reason, when it gives one.
    pub failure: Option<String>,
}

/// Reads a `/v2/swaps/{id}` body.
pub fn parse_status(body: &[u8]) -> Result<SwapStatus, RailError> {
    let v: Value = CHAINFLIP.parse("swap status", body)?;
    let state = v
        .get("state")
        .and_then(Value::as_str)
        .ok_or_else(|| CHAINFLIP.malformed("swap status without a state"))?
        .to_string();
    let tx = |leg: &str| v.get(leg)?.get("txRef")?.as_str().map(str::to_string);
    let failure = ["deposit", "swapEgress", "refundEgress"]
        .iter()
        .find_map(|leg| {
            v.get(*leg)?
                .get("failure")?
                .get("reason")?
                .get("message")?
                .as_str()
        })
        .map(str::to_string);
    Ok(SwapStatus {
        // `swapEgress` in the v2 schema; the devnet simulator writes `egress`.
        egress_tx: tx("swapEgress").or_else(|| tx("egress")),
        refunded: v.get("refundEgress").is_some_and(|r| !r.is_null()),
        expired: v
            .get("depositChannel")
            .and_then(|c| c.get("isExpired"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        failure,
        state,
    })
}
