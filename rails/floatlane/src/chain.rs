//! Live inputs read through the host's read-only RPC: float balances, gas
//! price, payout receipts.

use relay_plugin_api::{Amount, ChainRef, Host, QuoteRequest, RailError, U256};
use serde_json::Value;

use crate::{pricing::PricingParams, FloatInputs};

/// Native-asset price defaults in micro-USD, by chain; operators override
/// with `native_usd_e6.<chainId>`.
fn default_native_usd_e6(chain: u64) -> u64 {
    match chain {
        56 => 600_000_000,
        100 | 5000 => 1_000_000,
        137 | 146 => 500_000,
        43114 => 30_000_000,
        999 => 20_000_000,
        _ => 3_000_000_000,
    }
}

fn rpc_json(
    host: &dyn Host,
    chain: ChainRef,
    method: &str,
    params: Value,
) -> Result<Value, RailError> {
    let text = host.rpc(chain, method, &params.to_string())?;
    serde_json::from_str(&text).map_err(|e| RailError::malformed(format!("{method}: {e}")))
}

fn hex_u256(v: &Value, what: &str) -> Result<U256, RailError> {
    let s = v
        .as_str()
        .ok_or_else(|| RailError::malformed(format!("{what}: not a hex string")))?;
    let digits = s.strip_prefix("0x").unwrap_or(s);
    if digits.is_empty() {
        return Ok(U256::ZERO);
    }
    U256::from_str_radix(digits, 16).map_err(|e| RailError::malformed(format!("{what}: {e}")))
}

/// `balanceOf(owner)` of an ERC-20 at `token` on `chain`.
pub fn erc20_balance(
    host: &dyn Host,
    chain: ChainRef,
    token: &str,
    owner: &str,
) -> Result<Amount, RailError> {
    let owner = owner.strip_prefix("0x").unwrap_or(owner);
    if owner.len() != 40 || !owner.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RailError::invalid("relayer", "not a 20-byte hex address"));
    }
    let data = format!("0x70a08231{:0>64}", owner.to_ascii_lowercase());
    let v = rpc_json(
        host,
        chain,
        "eth_call",
        serde_json::json!([{"to": token, "data": data}, "latest"]),
    )?;
    hex_u256(&v, "balanceOf").map(Amount)
}

/// Reads everything pricing needs for `req`.
pub fn read_inputs(
    host: &dyn Host,
    req: &QuoteRequest,
    _p: &PricingParams,
) -> Result<FloatInputs, RailError> {
    let relayer = host.config("relayer").ok_or_else(|| {
        RailError::new(
            relay_plugin_api::RailErrorKind::Capability,
            "no relayer configured",
        )
    })?;
    let to_token = req.to_token.address.as_deref().unwrap_or_default();
    let dest_float = erc20_balance(host, req.to_chain, to_token, &relayer)?;
    let source_float = match req.from_token.address.as_deref() {
        Some(t) => crate::rescale(
            erc20_balance(host, req.from_chain, t, &relayer)?,
            req.from_token.decimals,
            req.to_token.decimals,
        ),
        None => Amount::ZERO,
    };
    let gas_price = hex_u256(
        &rpc_json(host, req.to_chain, "eth_gasPrice", serde_json::json!([]))?,
        "eth_gasPrice",
    )?;
    let chain_id = req.to_chain.evm_id().unwrap_or_default();
    let native_usd_e6 = host
        .config(&format!("native_usd_e6.{chain_id}"))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| default_native_usd_e6(chain_id));
    Ok(FloatInputs {
        amount: crate::rescale(req.amount, req.from_token.decimals, req.to_token.decimals),
        decimals: req.to_token.decimals,
        member: req.member,
        dest_float,
        source_float,
        gas_price_wei: gas_price,
        native_usd_e6,
    })
}

/// `Some(success)` once the transaction has a receipt, `None` while pending.
pub fn receipt_status(
    host: &dyn Host,
    chain: ChainRef,
    tx: &str,
) -> Result<Option<bool>, RailError> {
    let v = rpc_json(
        host,
        chain,
        "eth_getTransactionReceipt",
        serde_json::json!([tx]),
    )?;
    if v.is_null() {
        return Ok(None);
    }
    Ok(Some(
        hex_u256(&v["status"], "receipt status")? == U256::from(1u8),
    ))
}
