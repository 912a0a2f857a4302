//! Parsing an execute request at the edge (spec §2.5, §2.7): every field is
//! turned into a typed value once, and every problem is a typed 4xx that
//! names the field.

use relay_plugin_api::{Amount, ChainRef, SourceMode, Token};
use serde_json::Value;

use crate::{
    api::{ApiError, AppState, ErrorCode},
    chain::permit2::{self, Expected, SignedPermit},
    config::HostConfig,
};

/// A checked execute request.
#[derive(Clone, Debug)]
pub struct ExecuteAsk {
    /// Source node.
    pub from_chain: ChainRef,
    /// Destination node.
    pub to_chain: ChainRef,
    /// Source token.
    pub from_token: Token,
    /// Destination token.
    pub to_token: Token,
    /// Amount, smallest units.
    pub amount: Amount,
    /// Who funds the route.
    pub sender: String,
    /// Who receives.
    pub recipient: String,
    /// How funds reach the relayer.
    pub mode: SourceMode,
    /// The Permit2 signature (mode permit2).
    pub permit: Option<SignedPermit>,
    /// A rail the caller asks for.
    pub rail: Option<String>,
    /// Price lock.
    pub min_out: Option<Amount>,
    /// Dry run (`dryRun: true` or `live: false`).
    pub dry: bool,
}

fn invalid(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::InvalidField, format!("{field}: {why}"))
}

fn missing(field: &str) -> ApiError {
    ApiError::new(ErrorCode::MissingField, format!("{field}: required"))
}

fn chain(v: &Value, field: &str) -> Result<ChainRef, ApiError> {
    let raw = v.get(field).ok_or_else(|| missing(field))?;
    serde_json::from_value(raw.clone()).map_err(|e| invalid(field, e))
}

fn amount(v: &Value, field: &str) -> Result<Option<Amount>, ApiError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => s.parse().map(Some).map_err(|e| invalid(field, e)),
        Some(_) => Err(invalid(field, "must be a decimal string of smallest units")),
    }
}

fn string<'a>(v: &'a Value, field: &str) -> Result<Option<&'a str>, ApiError> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(field, "must be a string")),
    }
}

fn evm_address(s: &str, field: &str) -> Result<alloy::primitives::Address, ApiError> {
    s.parse()
        .map_err(|_| invalid(field, format!("{s:?} is not a 0x address")))
}

/// A token by symbol or address on `chain`, from the host's configuration.
pub fn resolve_token(
    config: &HostConfig,
    chain: ChainRef,
    token: &str,
    field: &str,
) -> Result<Token, ApiError> {
    let id = chain
        .evm_id()
        .ok_or_else(|| invalid(field, format!("no {token} on {chain} in this host")))?;
    let tokens = config.chains.get(&id.to_string()).map(|c| &c.tokens);
    let found = tokens
        .into_iter()
        .flatten()
        .find(|(sym, t)| sym.eq_ignore_ascii_case(token) || t.address.eq_ignore_ascii_case(token));
    let (sym, t) =
        found.ok_or_else(|| invalid(field, format!("unknown token {token:?} on chain {chain}")))?;
    Ok(Token {
        symbol: sym.to_ascii_uppercase(),
        address: Some(t.address.clone()),
        decimals: t.decimals,
    })
}

fn permit(v: &Value) -> Result<SignedPermit, ApiError> {
    let p = v.get("permit2").ok_or_else(|| missing("permit2"))?;
    let s = |path: &[&str]| -> Result<&str, ApiError> {
        let mut cur = p;
        for k in path {
            cur = cur
                .get(k)
                .ok_or_else(|| missing(&format!("permit2.{}", path.join("."))))?;
        }
        cur.as_str()
            .ok_or_else(|| invalid(&format!("permit2.{}", path.join(".")), "must be a string"))
    };
    let num = |path: &[&str]| -> Result<alloy::primitives::U256, ApiError> {
        let name = format!("permit2.{}", path.join("."));
        s(path)?
            .parse()
            .map_err(|_| invalid(&name, "must be a decimal integer"))
    };
    Ok(SignedPermit {
        owner: evm_address(s(&["owner"])?, "permit2.owner")?,
        token: evm_address(s(&["permitted", "token"])?, "permit2.permitted.token")?,
        amount: num(&["permitted", "amount"])?,
        nonce: num(&["nonce"])?,
        deadline: num(&["deadline"])?,
        signature: s(&["signature"])?
            .parse()
            .map_err(|_| invalid("permit2.signature", "must be 0x-hex"))?,
    })
}

/// Parses an ExecuteRequest body.
pub fn parse_execute(v: &Value, config: &HostConfig) -> Result<ExecuteAsk, ApiError> {
    if !v.is_object() {
        return Err(ApiError::new(
            ErrorCode::MalformedBody,
            "body must be a JSON object",
        ));
    }
    let (from_chain, to_chain) = (chain(v, "fromChain")?, chain(v, "toChain")?);
    let amount = amount(v, "amount")?.ok_or_else(|| missing("amount"))?;
    if amount.is_zero() {
        return Err(invalid("amount", "must be greater than zero"));
    }
    let from_sym = string(v, "fromToken")?
        .or(string(v, "token")?)
        .ok_or_else(|| missing("fromToken"))?;
    let from_token = resolve_token(config, from_chain, from_sym, "fromToken")?;
    let to_token = resolve_token(
        config,
        to_chain,
        string(v, "toToken")?.unwrap_or(&from_token.symbol),
        "toToken",
    )?;
    if from_chain == to_chain && from_token.address == to_token.address {
        return Err(ApiError::new(
            ErrorCode::SameChainSameToken,
            "fromChain equals toChain and fromToken equals toToken: nothing to move",
        ));
    }
    let mode = match string(v, "mode")?.unwrap_or("self") {
        "self" => SourceMode::Operator,
        "permit2" => SourceMode::Permit2,
        other => return Err(invalid("mode", format!("{other:?} is not self or permit2"))),
    };
    let permit = (mode == SourceMode::Permit2)
        .then(|| permit(v))
        .transpose()?;
    let sender = match (&permit, string(v, "fromAddress")?) {
        (Some(p), _) => p.owner.to_string(),
        (None, Some(a)) => evm_address(a, "fromAddress")?.to_string(),
        (None, None) => config.relayer.clone().unwrap_or_default(),
    };
    let recipient = match string(v, "toAddress")? {
        Some(a) => evm_address(a, "toAddress")?.to_string(),
        None => sender.clone(),
    };
    let flag = |k: &str| v.get(k).and_then(Value::as_bool);
    Ok(ExecuteAsk {
        from_chain,
        to_chain,
        from_token,
        to_token,
        amount,
        sender,
        recipient,
        mode,
        permit,
        rail: string(v, "rail")?.map(str::to_string),
        min_out: amount_field(v)?,
        dry: flag("dryRun") == Some(true) || flag("live") == Some(false),
    })
}

fn amount_field(v: &Value) -> Result<Option<Amount>, ApiError> {
    amount(v, "minOut")
}

/// Verifies the request's Permit2 signature off-chain and its nonce on
/// chain, before anything is broadcast.
pub async fn verify_permit(s: &AppState, ask: &ExecuteAsk) -> Result<(), ApiError> {
    let Some(p) = &ask.permit else { return Ok(()) };
    let relayer = s.relayer.as_ref().ok_or_else(|| {
        ApiError::new(
            ErrorCode::RelayerUnavailable,
            "this host has no relayer key",
        )
    })?;
    let chain_id = ask
        .from_chain
        .evm_id()
        .ok_or_else(|| invalid("fromChain", "permit2 needs an EVM source chain"))?;
    let token = ask.from_token.address.as_deref().unwrap_or_default();
    let expected = Expected {
        chain_id,
        permit2: s.config.permit2.parse().map_err(|_| {
            ApiError::new(
                ErrorCode::RelayerUnavailable,
                "bad permit2 address in config",
            )
        })?,
        spender: relayer.address(),
        token: evm_address(token, "fromToken")?,
        amount: ask.amount.0,
        now_secs: now_secs(),
    };
    let url = s
        .config
        .chains
        .get(&chain_id.to_string())
        .and_then(|c| c.rpc.first())
        .and_then(|u| u.parse().ok());
    let url = url.ok_or_else(|| {
        ApiError::new(
            ErrorCode::RelayerUnavailable,
            format!("no RPC for chain {chain_id}"),
        )
    })?;
    let provider = alloy::providers::ProviderBuilder::new().connect_http(url);
    permit2::verify(&provider, p, &expected)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Permit2Invalid, e.to_string()))
}

fn now_secs() -> u64 {
    crate::capabilities::now_ms() / 1000
}
