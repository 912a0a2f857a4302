//! The paid flows' invariants, checked at the end against the source and
//! destination chains: each sponsorship ran its batch at most once and
//! charged its payer at most once — exactly once when it was SPONSORED —
//! and the payer's tokens are what was minted less what moved; each yield
//! spend redeemed the agent's shares at most once and delivered at most
//! once — exactly once when DELIVERED, never when REFUNDED or FAILED —
//! and the agent's shares are what it deposited less what was redeemed.
//! Before they are checked, [`drain`] asks again for every sponsorship
//! not yet answered (its key and payment) and follows every spend to its
//! end.

use std::time::{Duration, Instant};

mod spends;

use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
};
use relay_devnet::contracts::TestToken;

pub use spends::spent_once;

use crate::{
    flows_paid::Sponsored,
    invariants::{token_transfers, verdict, Verdict},
    world::{World, SRC},
};

const SPONSOR_ENDED: [&str; 4] = ["SPONSORED", "REFUNDED", "FAILED", "UNPAID"];

/// Asks again for each sponsorship not known to be over (its key and
/// payment: the host answers the record), follows each yield spend
/// (`GET /api/ncaccount/spend/{id}`, recording its route once named), for
/// at most `within`.
pub async fn drain(w: &World, within: Duration) {
    let until = Instant::now() + within;
    let mut sponsorships = w.paid.sponsorships.lock().expect("ledger").clone();
    for s in sponsorships.iter_mut() {
        while !s
            .state
            .as_deref()
            .is_some_and(|x| SPONSOR_ENDED.contains(&x))
        {
            let (body, header, key) = &s.ask;
            let answer = crate::flows_paid::sponsor::post(
                w,
                body,
                Some((header, key)),
                Duration::from_secs(5),
            )
            .await;
            if let Some(a) = answer {
                crate::flows_paid::sponsor::settle(s, &a);
            }
            if Instant::now() > until {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    *w.paid.sponsorships.lock().expect("ledger") = sponsorships;
    let mut spends = w.paid.spends.lock().expect("ledger").clone();
    for s in spends.iter_mut() {
        let Some(id) = s.id.clone() else { continue };
        while !s
            .state
            .as_deref()
            .is_some_and(|x| crate::flows_paid::spend::ENDED.contains(&x))
        {
            let answer = w
                .client
                .send("GET /api/ncaccount/spend/{id}", |h, b| {
                    h.get(format!("{b}/api/ncaccount/spend/{id}"))
                })
                .await;
            match answer {
                Some((200, r)) => crate::flows_paid::spend::follow(w, s, &r),
                Some((404, _)) => s.state = Some("NOT_RECORDED".into()),
                _ => {}
            }
            if Instant::now() > until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    *w.paid.spends.lock().expect("ledger") = spends;
}

/// The total of `transfers`.
fn sum(t: &[(B256, Address, Address, U256)]) -> U256 {
    t.iter().map(|x| x.3).sum()
}

/// What is wrong with sponsorship `s` on chain, if anything.
async fn sponsorship(w: &World, s: &Sponsored) -> anyhow::Result<Option<String>> {
    let (usdc, usdt) = ((SRC, w.usdc[&SRC]), (SRC, w.usdt[&SRC]));
    let [(r1, out1), (r2, out2)] = s.batch;
    let ran1 = token_transfers(w, usdc, (None, Some(r1))).await?;
    let ran2 = token_transfers(w, usdt, (None, Some(r2))).await?;
    let pays = token_transfers(w, usdc, (Some(s.payer), Some(s.pay_to))).await?;
    let refunds = token_transfers(w, usdc, (Some(s.pay_to), Some(s.payer))).await?;
    let held = |token| async move {
        TestToken::new(token, w.chain(SRC))
            .balanceOf(s.payer)
            .call()
            .await
    };
    let (usdc_held, usdt_held) = (held(usdc.1).await?, held(usdt.1).await?);
    let code = w.chain(SRC).get_code_at(s.payer).await?;
    let delegated = code == relay_chain::eip7702::designator(relay_devnet::DELEGATE_ADDRESS);
    let ran = !ran1.is_empty() || !ran2.is_empty();
    let said = |what: &str| {
        Some(format!(
            "{} ({:?}, payer {}): {what}; batch ran {}+{} times, paid {} times, refunded {} times",
            s.id.as_deref().unwrap_or("?"),
            s.state,
            s.payer,
            ran1.len(),
            ran2.len(),
            pays.len(),
            refunds.len()
        ))
    };
    if ran1.len() > 1 || ran2.len() > 1 || pays.len() > 1 || refunds.len() > 1 {
        return Ok(said("more than once"));
    }
    if ran && pays.len() != 1 {
        return Ok(said("a batch ran that was never paid for"));
    }
    if ran && !refunds.is_empty() {
        return Ok(said("a batch ran and its payment was refunded too"));
    }
    if !refunds.is_empty() && pays.is_empty() {
        return Ok(said("a refund of nothing paid"));
    }
    if let Some(p) = pays.first() {
        if !s.offered.iter().any(|v| U256::from(*v) == p.3) {
            return Ok(said(&format!(
                "charged {} but offered {:?}",
                p.3, s.offered
            )));
        }
        if refunds.first().is_some_and(|r| r.3 != p.3) {
            return Ok(said("refunded another amount than it paid"));
        }
    }
    // the payer's tokens: minted, less the payment, plus the refund, less the batch
    let usdc_left = U256::from(s.minted.0) + sum(&refunds) - sum(&pays) - sum(&ran1);
    let usdt_left = U256::from(s.minted.1) - sum(&ran2);
    if (usdc_held, usdt_held) != (usdc_left, usdt_left) {
        return Ok(said(&format!(
            "holds {usdc_held} USDC and {usdt_held} USDT, not {usdc_left} and {usdt_left}"
        )));
    }
    let exact = |t: &[(_, _, _, U256)], v: u64| t.len() == 1 && t[0].3 == U256::from(v);
    let ok = match s.state.as_deref() {
        Some("SPONSORED") => {
            exact(&ran1, out1) && exact(&ran2, out2) && pays.len() == 1 && delegated
        }
        Some("REFUNDED") => !ran && pays.len() == 1 && refunds.len() == 1,
        Some("FAILED" | "UNPAID") => !ran && pays.is_empty(),
        _ => true,
    };
    Ok((!ok).then(|| said("not what its state says")).flatten())
}

/// Each sponsorship ran its batch at most once and charged its payer at
/// most once, exactly once when SPONSORED (the recipients hold exactly the
/// batch's amounts, the payer's USDC fell by the price and the batch, its
/// code delegates to the executor); refunded in full when REFUNDED;
/// nothing moved when FAILED or never paid.
pub async fn sponsored_once(w: &World) -> anyhow::Result<Verdict> {
    let all = w.paid.sponsorships.lock().expect("ledger").clone();
    let mut broken = Vec::new();
    for s in &all {
        if let Some(b) = sponsorship(w, s).await? {
            broken.push(b);
        }
    }
    let n = |state: &str| {
        all.iter()
            .filter(|s| s.state.as_deref() == Some(state))
            .count()
    };
    let open = all.len() - SPONSOR_ENDED.iter().map(|x| n(x)).sum::<usize>();
    Ok(verdict(
        "each sponsorship ran and charged at most once, exactly once if SPONSORED",
        &broken,
        format!(
            "{} sponsorships: {} SPONSORED, {} REFUNDED, {} FAILED, {} never paid, {open} unanswered",
            all.len(),
            n("SPONSORED"),
            n("REFUNDED"),
            n("FAILED"),
            n("UNPAID")
        ),
    ))
}
