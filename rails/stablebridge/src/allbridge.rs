//! Allbridge Core REST API client (allbridge-core-rest-api 3.x, the REST
//! front of `@allbridge/bridge-core-sdk`; its Swagger is served at `/api`):
//!
//! - `GET /bridge/quote?amount&sourceToken&destinationToken` →
//!   `{amountInt, amountFloat, sourceTokenAddress, destinationTokenAddress,
//!   options: [{messenger, estimatedTimeMs, paymentMethods: [{feePaymentMethod,
//!   fee, estimatedAmount: {min, max}, relayerFeeInStable, lpFeeTotal,
//!   transferFee}]}]}`;
//! - `GET /raw/bridge?amount&sender&recipient&sourceToken&destinationToken&
//!   messenger&feePaymentMethod&fee` → for an EVM source, a raw transaction
//!   `{from, to, value, data}` (other sources get their chain's unsigned
//!   transaction, which this host cannot sign);
//! - `GET /transfer/status?chain&txId` → `{txId, sourceChainSymbol,
//!   destinationChainSymbol, sendAmount, signaturesCount, signaturesNeeded,
//!   send: {…}, receive?: {txId, …}}`.
//!
//! Errors are NestJS `{statusCode, message, errorCode?}` bodies, 400 for
//! anything the SDK refuses. Tokens are identified by address; the chain
//! symbols (`sourceChain`, `destinationChain`) are also sent — the REST API
//! ignores them, they keep requests readable and self-describing.
//!
//! Allbridge publishes this API as a service integrators run themselves
//! (docker image `allbridge/io.allbridge.rest-api`), so there is no public
//! default: operators set `base_url` and grant its host in `egress`.

use relay_plugin_api::{
    Amount, ChainRef, Host, HttpRequest, HttpResponse, NonEvmNode, RailError, RailErrorKind,
};
use relay_rail_sdk::{
    quantity::Quantity,
    upstream::{error_report, query_string},
    EvmCall, Upstream,
};
use serde::{Deserialize, Serialize};

/// The API, for errors and parsing; its base URL comes from configuration.
pub const ALLBRIDGE: Upstream = Upstream {
    name: "Allbridge Core REST API",
    default_base: "",
};

/// The fee payment method this service uses: the relayer fee is deducted
/// from the stablecoin amount, so no native value is sent.
pub const WITH_STABLECOIN: &str = "WITH_STABLECOIN";

/// Allbridge's chain symbol for a node.
pub fn chain_symbol(node: &ChainRef) -> Option<&'static str> {
    Some(match node {
        ChainRef::Evm(1) => "ETH",
        ChainRef::Evm(56) => "BSC",
        ChainRef::Evm(137) => "POL",
        ChainRef::Evm(42161) => "ARB",
        ChainRef::Evm(43114) => "AVA",
        ChainRef::Evm(8453) => "BAS",
        ChainRef::Evm(10) => "OPT",
        ChainRef::Evm(146) => "SNC",
        ChainRef::Evm(130) => "UNI",
        ChainRef::Evm(59144) => "LIN",
        ChainRef::NonEvm(NonEvmNode::Solana) => "SOL",
        ChainRef::NonEvm(NonEvmNode::Tron) => "TRX",
        ChainRef::NonEvm(NonEvmNode::Stellar) => "SRB",
        ChainRef::NonEvm(NonEvmNode::Sui) => "SUI",
        _ => return None,
    })
}

/// The EVM chains Allbridge Core serves that are in the gasless set.
pub const EVM_CHAINS: [u64; 10] = [1, 10, 56, 130, 137, 146, 8453, 42161, 43114, 59144];

/// The configured base URL, or a `CAPABILITY` error saying how to set it.
pub fn base_url(host: &dyn Host) -> Result<String, RailError> {
    host.config("base_url")
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| RailError {
            retryable: false,
            ..RailError::new(
                RailErrorKind::Capability,
                "no Allbridge Core REST API configured: set base_url to your deployment \
                 (allbridge/io.allbridge.rest-api) and grant its host in egress",
            )
        })
}

/// One side of a transfer: node, token address as Allbridge names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    /// Allbridge chain symbol.
    pub chain: String,
    /// Token address on that chain (or the symbol, on deployments that
    /// accept it).
    pub token: String,
}

fn get(host: &dyn Host, path: &str, query: &[(&str, String)]) -> Result<HttpRequest, RailError> {
    let url = format!("{}{path}{}", base_url(host)?, query_string(query));
    Ok(
        match host.config("credential").filter(|c| !c.trim().is_empty()) {
            Some(c) => HttpRequest::get(url).with_credential(c.trim()),
            None => HttpRequest::get(url),
        },
    )
}

/// `GET /bridge/quote`.
pub fn quote_request(
    host: &dyn Host,
    amount: Amount,
    from: &Side,
    to: &Side,
) -> Result<HttpRequest, RailError> {
    get(
        host,
        "/bridge/quote",
        &[
            ("amount", amount.to_string()),
            ("sourceToken", from.token.clone()),
            ("destinationToken", to.token.clone()),
            ("sourceChain", from.chain.clone()),
            ("destinationChain", to.chain.clone()),
        ],
    )
}

/// What `/raw/bridge` needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeAsk<'a> {
    /// Source amount, source token precision.
    pub amount: Amount,
    /// Who signs on the source chain.
    pub sender: &'a str,
    /// Who receives on the destination.
    pub recipient: &'a str,
    /// Source side.
    pub from: &'a Side,
    /// Destination side.
    pub to: &'a Side,
    /// The messenger the quote chose.
    pub messenger: &'a str,
    /// The relayer fee in the stablecoin, as quoted.
    pub fee: Amount,
}

/// `GET /raw/bridge` with the fee paid in the stablecoin.
pub fn raw_bridge_request(host: &dyn Host, a: &BridgeAsk<'_>) -> Result<HttpRequest, RailError> {
    get(
        host,
        "/raw/bridge",
        &[
            ("amount", a.amount.to_string()),
            ("sender", a.sender.to_string()),
            ("recipient", a.recipient.to_string()),
            ("sourceToken", a.from.token.clone()),
            ("destinationToken", a.to.token.clone()),
            ("messenger", a.messenger.to_string()),
            ("feePaymentMethod", WITH_STABLECOIN.to_string()),
            ("fee", a.fee.to_string()),
            ("sourceChain", a.from.chain.clone()),
            ("destinationChain", a.to.chain.clone()),
        ],
    )
}

/// `GET /transfer/status`.
pub fn status_request(
    host: &dyn Host,
    source_chain: &str,
    tx_id: &str,
) -> Result<HttpRequest, RailError> {
    get(
        host,
        "/transfer/status",
        &[
            ("chain", source_chain.to_string()),
            ("txId", tx_id.to_string()),
        ],
    )
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QuoteBody {
    amount_int: Quantity,
    options: Vec<OptionBody>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OptionBody {
    messenger: String,
    #[serde(default)]
    estimated_time_ms: Option<u64>,
    payment_methods: Vec<PaymentBody>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PaymentBody {
    fee_payment_method: String,
    fee: Quantity,
    estimated_amount: MinMax,
    #[serde(default)]
    lp_fee_total: Option<String>,
    #[serde(default)]
    transfer_fee: Option<Quantity>,
}

#[derive(Clone, Debug, Deserialize)]
struct MinMax {
    min: Quantity,
    max: Quantity,
}

/// The best stablecoin-fee option of a quote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Priced {
    /// The messenger carrying it (`ALLBRIDGE`, `CCTP_V2`, …).
    pub messenger: String,
    /// The relayer fee in the source stablecoin (deducted from the amount).
    pub relayer_fee: Amount,
    /// Liquidity-pool fee in the destination token (Allbridge reports it negative).
    pub lp_fee: Amount,
    /// Messenger transfer fee in the source token (CCTP/OFT messengers).
    pub transfer_fee: Amount,
    /// Destination amount, smallest units: the upstream's `max`.
    pub egress: Amount,
    /// Its `min`.
    pub egress_min: Amount,
    /// Expected time, ms, when the upstream knows it.
    pub estimated_time_ms: Option<u64>,
}

/// Reads a `/bridge/quote` body for `asked`: the option paying its fee in
/// the stablecoin with the largest minimum receive.
pub fn parse_quote(body: &[u8], asked: Amount) -> Result<Priced, RailError> {
    let q: QuoteBody = ALLBRIDGE.parse("bridge quote", body)?;
    if q.amount_int.0 != asked {
        return Err(ALLBRIDGE.malformed(format!("quoted amountInt {} for {asked}", q.amount_int.0)));
    }
    let mut best: Option<Priced> = None;
    for o in &q.options {
        for p in o
            .payment_methods
            .iter()
            .filter(|p| p.fee_payment_method == WITH_STABLECOIN)
        {
            if p.estimated_amount.min.0 > p.estimated_amount.max.0 {
                return Err(ALLBRIDGE.malformed("estimatedAmount.min exceeds max"));
            }
            let candidate = Priced {
                messenger: o.messenger.clone(),
                relayer_fee: p.fee.0,
                lp_fee: p
                    .lp_fee_total
                    .as_deref()
                    .map(magnitude)
                    .transpose()?
                    .unwrap_or_default(),
                transfer_fee: p.transfer_fee.map(|t| t.0).unwrap_or_default(),
                egress: p.estimated_amount.max.0,
                egress_min: p.estimated_amount.min.0,
                estimated_time_ms: o.estimated_time_ms,
            };
            if best
                .as_ref()
                .is_none_or(|b| candidate.egress_min > b.egress_min)
            {
                best = Some(candidate);
            }
        }
    }
    best.ok_or_else(|| {
        RailError::unsupported(format!(
            "{}: no messenger offers to take its fee in the stablecoin for this pair",
            ALLBRIDGE.name
        ))
    })
}

/// `"-500"` or `"500"` → 500.
fn magnitude(s: &str) -> Result<Amount, RailError> {
    relay_rail_sdk::quantity::parse_quantity(s.trim().trim_start_matches('-'))
        .ok_or_else(|| ALLBRIDGE.malformed(format!("lpFeeTotal {s:?} is not an integer")))
}

/// Reads an EVM `/raw/bridge` body: the transaction the relayer sends.
pub fn parse_raw_evm(body: &[u8], sender: &str) -> Result<EvmCall, RailError> {
    #[derive(Deserialize)]
    struct Raw {
        #[serde(default)]
        from: Option<String>,
        to: String,
        #[serde(default)]
        value: Option<Quantity>,
        data: String,
    }
    let raw: Raw = ALLBRIDGE.parse("raw bridge transaction", body)?;
    if let Some(from) = raw
        .from
        .as_deref()
        .filter(|f| !f.eq_ignore_ascii_case(sender))
    {
        return Err(ALLBRIDGE.malformed(format!("transaction built for {from}, not {sender}")));
    }
    let call = EvmCall {
        to: raw.to,
        data: raw.data,
        value: raw.value.map(|v| v.0).unwrap_or_default(),
        gas_limit: None,
    }
    .checked(&ALLBRIDGE)?;
    if !call.value.is_zero() {
        return Err(ALLBRIDGE.malformed("a stablecoin-fee transfer must carry no native value"));
    }
    Ok(call)
}

/// Where a transfer stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Allbridge has not indexed the source transaction yet.
    NotIndexed,
    /// Source seen; `signatures` of `needed` collected.
    Signing {
        /// Collected.
        signatures: u64,
        /// Needed.
        needed: u64,
    },
    /// Delivered by this destination transaction.
    Received(String),
}

/// Reads a `/transfer/status` answer.
pub fn parse_status(resp: &HttpResponse) -> Result<Progress, RailError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Leg {
        tx_id: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Status {
        #[serde(default)]
        signatures_count: Option<u64>,
        #[serde(default)]
        signatures_needed: Option<u64>,
        #[serde(default)]
        receive: Option<Leg>,
    }
    match resp.status {
        200 => {
            let s: Status = ALLBRIDGE.parse("transfer status", &resp.body)?;
            Ok(match s.receive {
                Some(r) if !r.tx_id.is_empty() => Progress::Received(r.tx_id),
                _ => Progress::Signing {
                    signatures: s.signatures_count.unwrap_or(0),
                    needed: s.signatures_needed.unwrap_or(0),
                },
            })
        }
        404 => Ok(Progress::NotIndexed),
        400 => {
            // The REST API wraps the core API's 404 for an unknown
            // transaction in a 400 carrying its message.
            let m = error_report(resp).message.to_ascii_lowercase();
            if m.contains("not found") || m.contains("404") {
                return Ok(Progress::NotIndexed);
            }
            Err(error(resp))
        }
        _ => Err(error(resp)),
    }
}

/// An error answer as a typed rail error: a token or chain Allbridge does
/// not carry is `UNSUPPORTED_LANE`; the SDK's liquidity and amount refusals
/// (`errorCode` such as `InsufficientPoolLiquidityError`,
/// `AmountNotEnoughError`) are `AMOUNT_OUT_OF_RANGE`; other 400s
/// `INVALID_INPUT`; the rest per status (429/5xx retryable).
pub fn error(resp: &HttpResponse) -> RailError {
    let mut report = error_report(resp);
    if report.code.is_none() {
        report.code = serde_json::from_slice::<serde_json::Value>(&resp.body)
            .ok()
            .and_then(|v| v.get("errorCode")?.as_str().map(str::to_string));
    }
    let text = format!(
        "{} {}",
        report.code.as_deref().unwrap_or(""),
        report.message
    )
    .to_ascii_lowercase();
    let unsupported = [
        "token not found",
        "unsupported",
        "invalid chain",
        "invalid token",
    ];
    if report.status == 400 && unsupported.iter().any(|w| text.contains(w)) {
        return RailError::unsupported(format!("{} 400: {}", ALLBRIDGE.name, report.message));
    }
    let out_of_range = ["liquidity", "amount", "too low", "insufficient"];
    if report.status == 400 && out_of_range.iter().any(|w| text.contains(w)) {
        return RailError::new(
            RailErrorKind::AmountOutOfRange,
            format!("{} 400: {}", ALLBRIDGE.name, report.message),
        );
    }
    ALLBRIDGE.status_error(&report)
}

/// Sends `req` and returns a 200 body, or the typed error of any other answer.
pub fn fetch(host: &dyn Host, req: HttpRequest) -> Result<Vec<u8>, RailError> {
    let resp = ALLBRIDGE.send(host, req)?;
    if resp.status == 200 {
        Ok(resp.body)
    } else {
        Err(error(&resp))
    }
}
