//! Non-EVM → EVM lanes: the relayer would be Allbridge's sender on the
//! non-EVM node, spending its own float there. The host reaches no non-EVM
//! ledger, so the float is what the operator reports in configuration
//! (`float.<node>.<ASSET>`, smallest units; `relayer.<node>` the account).
//! Unfunded is `FUNDS_REQUIRED` naming what is missing; funded still needs
//! a signer for that node, which this host does not have.

use relay_plugin_api::{Amount, Host, RailError, RailErrorKind};

use crate::{lanes::Lane, RailObject};

fn float(host: &dyn Host, lane: &Lane, asset: &str) -> Amount {
    host.config(&format!("float.{}.{asset}", lane.node.as_str()))
        .and_then(|v| v.trim().parse().ok())
        .map(Amount)
        .unwrap_or_default()
}

fn account(host: &dyn Host, lane: &Lane) -> Option<String> {
    host.config(&format!("relayer.{}", lane.node.as_str()))
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
}

/// Whether the operator reports any float and an account on the lane's node
/// (health's `executeReady` for inbound lanes).
pub fn funded(host: &dyn Host, lane: &Lane) -> bool {
    account(host, lane).is_some() && lane.assets.iter().any(|a| !float(host, lane, a).is_zero())
}

/// Why an inbound route cannot be prepared: `FUNDS_REQUIRED` when the
/// float is short, else the missing signer.
pub fn refusal(host: &dyn Host, lane: &Lane, quote: &RailObject, amount: Amount) -> RailError {
    let node = lane.node.as_str();
    let asset = quote
        .fees
        .first()
        .map(|f| f.asset.as_str())
        .unwrap_or("USDC");
    let have = float(host, lane, asset);
    let account = account(host, lane);
    if have < amount || account.is_none() {
        let at = account.unwrap_or_else(|| format!("no relayer.{node} account configured"));
        return RailError::new(
            RailErrorKind::FundsRequired,
            format!(
                "{}: the relayer's {node} float is {have} {asset} (float.{node}.{asset}, at {at}); \
                 {amount} {asset} needed, short by {}",
                lane.name,
                amount.saturating_sub(have)
            ),
        );
    }
    RailError {
        retryable: false,
        ..RailError::new(
            RailErrorKind::Capability,
            format!(
                "{}: the float is there, but Allbridge's {node} transaction must be signed on {node} \
                 and this host signs EVM transactions only",
                lane.name
            ),
        )
    }
}
