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
//! Errors are NestJS `HttpExceptionBody`s, `{statusCode, message,
//! errorCode?}`, 400 for anything refused: the SDK's refusals carry its
//! `errorCode`; since REST API 3.28 their message, and that of every other
//! failure the REST API did not word itself, is `"Bad request"` — including
//! the status of a transaction Allbridge has not indexed yet (a bare
//! `{"statusCode":400,"message":"Bad request"}`). The tables of [`parse_status`],
//! [`error`] and [`error_code_kind`] say how each answer maps to a
//! `TrackState` or a `RailError` kind.
//!
//! Tokens are identified by address; the chain symbols (`sourceChain`,
//! `destinationChain`) are also sent — the REST API ignores them, they keep
//! requests readable and self-describing.
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
    /// Allbridge has not indexed the source transaction yet (or its core
    /// API did not answer the REST API: the two read alike, see
    /// [`parse_status`]).
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

/// Reads a `/transfer/status` answer (`TransferStatusResponse` of the SDK,
/// `HttpExceptionBody` for a 400).
///
/// | Allbridge answers | [`Progress`] | `TrackState` (stage) |
/// |---|---|---|
/// | 200, `receive.txId` not empty | `Received` | `DONE` (`COMPLETED`), `destTx` = `receive.txId` |
/// | 200, no `receive` (or an empty `receive.txId`), `signaturesCount` < `signaturesNeeded` | `Signing` | `BRIDGING` (`RECEIVING`) |
/// | 200, no `receive`, `signaturesCount` ≥ `signaturesNeeded` > 0 | `Signing` | `BRIDGING` (`SENDING`) |
/// | 400 `{"statusCode":400,"message":"Bad request"}`, no `errorCode` (REST API ≥ 3.28) | `NotIndexed` | `PENDING` |
/// | 400 `"Request failed with status code …"` (REST API < 3.28, the core API's answer in words) | `NotIndexed` | `PENDING` |
/// | 400 `"Invalid chain"` | error | `UNSUPPORTED_LANE` |
/// | 400 `"chain is required"` / `"txId is required"` | error | `INVALID_INPUT` |
/// | 400 with an `errorCode` | error | per [`error_code_kind`] |
/// | 404 (no such route: the REST API never answers 404 for a transfer, so `base_url` is wrong) | error | `UNSUPPORTED_LANE` |
/// | 429, 5xx | error | `UPSTREAM` (retryable); 408/504 `UPSTREAM_TIMEOUT` |
/// | 200 that is not a `TransferStatusResponse` | error | `UPSTREAM_MALFORMED` |
///
/// Why a bare "Bad request" is pending here: the REST API answers the
/// status call by asking Allbridge's core API (`GET /chain/{chain}/{txId}`);
/// for a transaction the core API has not indexed yet it answers 404, and
/// the REST API turns every error that is not its own (`HttpException`) or
/// the SDK's (`SdkRootError`, which carries an `errorCode`) into
/// `{"statusCode":400,"message":"Bad request"}` (`rest-api/src/error/errors.ts`
/// since 3.28; before, the message was the core API's error text). The
/// status call's own refusals keep their words (`Invalid chain`, `txId is
/// required`) and this rail never sends them; so on this call a bare "Bad
/// request" is "not indexed yet" (or the core API unreachable — also worth
/// asking again), never the caller's mistake. The host's track deadline
/// bounds a transaction that never gets indexed.
///
/// Allbridge Core's status has no failed or refunded notion (no status
/// field; `receive` appears once delivered), so this rail never reports
/// `FAILED` or `REFUNDED`: a transfer that is never received stays
/// `BRIDGING` until the host's deadline. `receive.isClaimable` (optional,
/// undocumented) is not read.
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
        400 if not_indexed(resp) => Ok(Progress::NotIndexed),
        _ => Err(error(resp)),
    }
}

/// The message the REST API (≥ 3.28) gives every 400 it did not word itself.
pub const GENERIC_BAD_REQUEST: &str = "Bad request";

/// Whether a status call's 400 says the core API did not find (or did not
/// answer for) the transaction: no `errorCode`, and the generic message or
/// (REST API < 3.28) the core API's HTTP error in words.
fn not_indexed(resp: &HttpResponse) -> bool {
    let (code, message) = error_fields(resp);
    code.is_none()
        && (message.eq_ignore_ascii_case(GENERIC_BAD_REQUEST)
            || message.starts_with("Request failed with status code"))
}

/// `errorCode` and `message` of an error body.
fn error_fields(resp: &HttpResponse) -> (Option<String>, String) {
    let code = serde_json::from_slice::<serde_json::Value>(&resp.body)
        .ok()
        .and_then(|v| v.get("errorCode")?.as_str().map(str::to_string))
        .filter(|c| !c.is_empty());
    (code, error_report(resp).message.trim().to_string())
}

/// What an `errorCode` of the SDK (`ErrorCode` in
/// `@allbridge/bridge-core-sdk` `src/exceptions/exceptions.ts`; the REST API
/// sends it with a 400 whenever the SDK refused) means for the caller:
///
/// | `errorCode` | kind | retryable |
/// |---|---|---|
/// | `InvalidAmountError`, `AmountNotEnoughError` (amount does not cover the fee), `InsufficientPoolLiquidityError` | `AMOUNT_OUT_OF_RANGE` | no |
/// | `InvalidGasFeePaymentOptionError`, `InvalidMessengerOptionError`, `MethodNotSupportedError`, `CCTPDoesNotSupportedError`, `OFTDoesNotSupportedError`, `YieldDoesNotSupportedError` | `UNSUPPORTED_LANE` | no |
/// | `NodeRpcUrlNotInitializedError` (the deployment has no RPC for that chain) | `UNSUPPORTED_LANE` | no |
/// | `SdkError`, `InvalidTxError`, `ExtraGasMaxLimitExceededError`, `ArgumentInvalidDecimalsError` | `INVALID_INPUT` | no |
/// | `JupiterError`, `VerifyTxError`, `TxTooLargeError` ("try again later") | `UPSTREAM` | yes |
/// | `TimeoutError` | `UPSTREAM_TIMEOUT` | yes |
/// | any other value | `None`: read as a 400 without one (`INVALID_INPUT`) | no |
pub fn error_code_kind(code: &str) -> Option<RailErrorKind> {
    use RailErrorKind::*;
    Some(match code {
        "InvalidAmountError" | "AmountNotEnoughError" | "InsufficientPoolLiquidityError" => {
            AmountOutOfRange
        }
        "InvalidGasFeePaymentOptionError"
        | "InvalidMessengerOptionError"
        | "MethodNotSupportedError"
        | "CCTPDoesNotSupportedError"
        | "OFTDoesNotSupportedError"
        | "YieldDoesNotSupportedError"
        | "NodeRpcUrlNotInitializedError" => UnsupportedLane,
        "SdkError"
        | "InvalidTxError"
        | "ExtraGasMaxLimitExceededError"
        | "ArgumentInvalidDecimalsError" => InvalidInput,
        "JupiterError" | "VerifyTxError" | "TxTooLargeError" => Upstream,
        "TimeoutError" => UpstreamTimeout,
        _ => return None,
    })
}

/// The REST API's own 400 messages (`HttpException`s of its controllers and
/// `utils/validation.ts`) that name a token, chain or option Allbridge does
/// not carry.
const UNSUPPORTED_MESSAGES: [&str; 9] = [
    "Source token not found",
    "Destination token not found",
    "Bridge token not found",
    "Token not found",
    "Invalid chain",
    "Invalid messenger",
    "Invalid feePaymentMethod",
    "Unsupported type",
    "For cross-chain swaps",
];

/// An error answer as a typed rail error (any call):
///
/// | Allbridge answers | kind | retryable |
/// |---|---|---|
/// | 400 with an `errorCode` | per [`error_code_kind`] | per kind |
/// | 400 `Source token not found`, `Destination token not found`, `Invalid chain`, `Invalid messenger`, `Invalid feePaymentMethod`, … | `UNSUPPORTED_LANE` | no |
/// | 400 `Invalid amount`, `<param> is required`, any other words | `INVALID_INPUT` | no |
/// | 400 `Bad request` with no `errorCode` | `INVALID_INPUT` — see below | no |
/// | 401/403 | `CAPABILITY` | no |
/// | 404 (no such route: `base_url` is not the REST API) | `UNSUPPORTED_LANE` | no |
/// | 408/504 | `UPSTREAM_TIMEOUT` | yes |
/// | 429, other 5xx | `UPSTREAM` | yes |
///
/// A bare "Bad request" on a quote or a raw transaction stays the
/// caller's typed, non-retryable error: the Swagger documents every 400 of
/// these endpoints as "Bad request" (the request), and the SDK's refusals
/// of an amount or a route arrive with their `errorCode`. Only the status
/// call reads it as "not indexed yet" ([`parse_status`]).
pub fn error(resp: &HttpResponse) -> RailError {
    let (code, message) = error_fields(resp);
    let what = match &code {
        Some(c) => format!("{} {} ({c}): {message}", ALLBRIDGE.name, resp.status),
        None => format!("{} {}: {message}", ALLBRIDGE.name, resp.status),
    };
    if resp.status != 400 {
        let mut report = error_report(resp);
        report.code = report.code.or(code);
        return ALLBRIDGE.status_error(&report);
    }
    let kind = match code.as_deref().and_then(error_code_kind) {
        Some(kind) => kind,
        None if names_unsupported(&message) => RailErrorKind::UnsupportedLane,
        None => RailErrorKind::InvalidInput,
    };
    RailError::new(kind, what)
}

/// Whether a 400's message is one of [`UNSUPPORTED_MESSAGES`].
fn names_unsupported(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    UNSUPPORTED_MESSAGES
        .iter()
        .any(|m| message.starts_with(&m.to_ascii_lowercase()))
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
