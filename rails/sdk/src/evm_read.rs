//! Read-only EVM facts a rail asks the host's RPC capability for: a
//! transaction's receipt status and an ERC-20 balance. The host allows only
//! read methods on the chains the manifest declares; nothing here can write.

use relay_plugin_api::{Amount, ChainRef, Host, RailError};
use serde_json::{json, Value};

use crate::evm_abi::{erc20_balance_of, word_to_uint};
use crate::quantity::parse_quantity;

fn rpc_json(
    host: &dyn Host,
    chain: ChainRef,
    method: &str,
    params: Value,
) -> Result<Value, RailError> {
    let text = host.rpc(chain, method, &params.to_string())?;
    serde_json::from_str(&text)
        .map_err(|e| RailError::malformed(format!("{method} on {chain}: {e}")))
}

/// `Some(true)` once `tx` has a successful receipt on `chain`, `Some(false)`
/// when it reverted, `None` while it has no receipt.
pub fn receipt_status(
    host: &dyn Host,
    chain: ChainRef,
    tx: &str,
) -> Result<Option<bool>, RailError> {
    let v = rpc_json(host, chain, "eth_getTransactionReceipt", json!([tx]))?;
    if v.is_null() {
        return Ok(None);
    }
    let status = v
        .get("status")
        .and_then(Value::as_str)
        .and_then(parse_quantity)
        .ok_or_else(|| RailError::malformed(format!("receipt of {tx} on {chain} has no status")))?;
    Ok(Some(status == Amount::from_u128(1)))
}

/// `balanceOf(owner)` of the ERC-20 `token` on `chain`.
pub fn erc20_balance(
    host: &dyn Host,
    chain: ChainRef,
    token: &str,
    owner: &str,
) -> Result<Amount, RailError> {
    let data = erc20_balance_of(owner)
        .ok_or_else(|| RailError::invalid("owner", format!("{owner:?} is not an EVM address")))?;
    let v = rpc_json(
        host,
        chain,
        "eth_call",
        json!([{"to": token, "data": data}, "latest"]),
    )?;
    v.as_str()
        .and_then(word_to_uint)
        .map(Amount)
        .ok_or_else(|| RailError::malformed(format!("balanceOf on {chain} answered {v}")))
}
