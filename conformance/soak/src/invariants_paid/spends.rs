//! The yield spends' invariant: each spend redeemed the agent's shares at
//! most once and delivered at most once — exactly once when DELIVERED,
//! never when REFUNDED or FAILED — and the agent's shares are what it
//! deposited less what was redeemed.

use alloy::{
    primitives::{Address, U256},
    providers::Provider,
    rpc::types::Filter,
    sol,
    sol_types::SolEvent,
};
use relay_devnet::contracts::YieldVault;

use crate::{
    flows_paid::Spent,
    invariants::{token_transfers, verdict, Verdict},
    world::{World, DST, SRC},
};

sol! {
    /// ERC-4626: `owner`'s shares burnt for `assets` sent to `receiver`.
    event Withdraw(address indexed sender, address indexed receiver, address indexed owner, uint256 assets, uint256 shares);
}

/// What is wrong with yield spend `s` on chain, if anything.
async fn spend(w: &World, s: &Spent) -> anyhow::Result<Option<String>> {
    let vault = relay_devnet::deploy::vault_address();
    let f = Filter::new()
        .address(vault)
        .event_signature(Withdraw::SIGNATURE_HASH)
        .topic3(s.agent.into_word())
        .from_block(0u64);
    let redeems: Vec<Withdraw> = w
        .chain(SRC)
        .get_logs(&f)
        .await?
        .iter()
        .filter_map(|l| Withdraw::decode_log(&l.inner).ok().map(|x| x.data))
        .collect();
    let delivered = token_transfers(w, (DST, w.usdc[&DST]), (None, Some(s.recipient))).await?;
    // USDC the agent received other than its mint: a refund
    let refunds: Vec<_> = token_transfers(w, (SRC, w.usdc[&SRC]), (None, Some(s.agent)))
        .await?
        .into_iter()
        .filter(|t| t.1 != Address::ZERO)
        .collect();
    let shares = YieldVault::new(vault, w.chain(SRC))
        .balanceOf(s.agent)
        .call()
        .await?;
    let said = |what: &str| {
        Some(format!(
            "{} ({:?}, agent {}): {what}; redeemed {} times, delivered {} times, refunded {} times",
            s.id.as_deref().unwrap_or("?"),
            s.state,
            s.agent,
            redeems.len(),
            delivered.len(),
            refunds.len()
        ))
    };
    if redeems.len() > 1 || delivered.len() > 1 || refunds.len() > 1 {
        return Ok(said("more than once"));
    }
    if !delivered.is_empty() && !refunds.is_empty() {
        return Ok(said("delivered and refunded"));
    }
    if (!delivered.is_empty() || !refunds.is_empty()) && redeems.is_empty() {
        return Ok(said("paid out without a redeem"));
    }
    let burnt: U256 = redeems.iter().map(|r| r.shares).sum();
    if shares + burnt != s.shares {
        return Ok(said(&format!(
            "holds {shares} shares; opened with {}, {burnt} redeemed",
            s.shares
        )));
    }
    let amount = U256::from(s.amount);
    if redeems.iter().any(|r| r.assets != amount) {
        return Ok(said("redeemed another amount than it signed"));
    }
    if refunds.iter().any(|r| r.3 != amount) || delivered.iter().any(|d| d.3 > amount) {
        return Ok(said("paid out more than it redeemed"));
    }
    let ok = match s.state.as_deref() {
        Some("DELIVERED") => redeems.len() == 1 && delivered.len() == 1 && refunds.is_empty(),
        Some("REFUNDED") => redeems.len() == 1 && delivered.is_empty() && refunds.len() == 1,
        Some("FAILED") => delivered.is_empty() && refunds.is_empty(),
        Some("NOT_RECORDED") => redeems.is_empty() && delivered.is_empty(),
        _ => true,
    };
    Ok((!ok).then(|| said("not what its state says")).flatten())
}

/// Each yield spend redeemed at most once and delivered at most once:
/// DELIVERED ⇒ one redeem of the signed amount and exactly one payout to
/// the recipient; REFUNDED ⇒ the amount back to the agent and no payout;
/// FAILED or never recorded ⇒ no payout; the agent's shares are what it
/// deposited less what was redeemed.
pub async fn spent_once(w: &World) -> anyhow::Result<Verdict> {
    let all = w.paid.spends.lock().expect("ledger").clone();
    let mut broken = Vec::new();
    for s in &all {
        if let Some(b) = spend(w, s).await? {
            broken.push(b);
        }
    }
    let n = |state: &str| {
        all.iter()
            .filter(|s| s.state.as_deref() == Some(state))
            .count()
    };
    let ended: usize = crate::flows_paid::spend::ENDED.iter().map(|x| n(x)).sum();
    Ok(verdict(
        "each yield spend redeemed and delivered at most once, exactly once if DELIVERED",
        &broken,
        format!(
            "{} spends: {} DELIVERED, {} REFUNDED, {} FAILED, {} never recorded, {} not ended",
            all.len(),
            n("DELIVERED"),
            n("REFUNDED"),
            n("FAILED"),
            n("NOT_RECORDED"),
            all.len() - ended
        ),
    ))
}
