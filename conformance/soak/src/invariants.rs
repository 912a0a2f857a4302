//! The invariants, checked at the end against the chains, not only the
//! store: every route terminal; each route's user signature pulled at most
//! once (exactly once when it is DONE); each DONE route paid once, by the
//! transaction its receipt names, in the amount that transaction moved;
//! each webhook message answered 200 exactly once and never delivered
//! after; no relayer key with a transaction queued behind a missing nonce;
//! memory and open files flat after warm-up; no 5xx the API does not allow.
//! The paid flows' (sponsorships, yield spends) are in `invariants_paid`.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
    rpc::types::Filter,
    sol,
    sol_types::SolEvent,
};
use serde::Serialize;
use serde_json::Value;

use crate::{
    cluster::Sample,
    webhook::Deliveries,
    world::{Started, TokenTransfer, World, DST, SRC},
};

sol! {
    event Transfer(address indexed from, address indexed to, uint256 value);
}

/// One invariant's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Which.
    pub name: String,
    /// Whether it held.
    pub held: bool,
    /// What was counted, or what broke it.
    pub detail: String,
}

/// A verdict named `name`: held when nothing is `broken`, its detail what
/// was `counted` (or the first few broken).
pub(crate) fn verdict(name: &str, broken: &[String], counted: String) -> Verdict {
    Verdict {
        name: name.into(),
        held: broken.is_empty(),
        detail: match broken.len() {
            0 => counted,
            n => format!(
                "{n} broken: {}",
                broken
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        },
    }
}

/// Waits (at most `within`) until every started route is terminal; the
/// last status of each.
pub async fn drain(w: &World, within: Duration) -> BTreeMap<String, Value> {
    let until = Instant::now() + within;
    let mut last = BTreeMap::new();
    for r in w.routes() {
        loop {
            let answer = w
                .client
                .send("GET /api/route/status", |h, b| {
                    h.get(format!("{b}/api/route/status?id={}", r.id))
                })
                .await;
            let v = answer.map(|(_, v)| v).unwrap_or(Value::Null);
            let terminal = matches!(v["status"].as_str(), Some("DONE" | "FAILED"));
            last.insert(r.id.clone(), v);
            if terminal || Instant::now() > until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    last
}

/// Every route DONE or FAILED.
pub fn terminal(statuses: &BTreeMap<String, Value>) -> Verdict {
    let broken: Vec<String> = statuses
        .iter()
        .filter(|(_, v)| !matches!(v["status"].as_str(), Some("DONE" | "FAILED")))
        .map(|(id, v)| format!("{id} {}", v["status"]))
        .collect();
    let done = statuses.values().filter(|v| v["status"] == "DONE").count();
    let mut why: BTreeMap<&str, usize> = BTreeMap::new();
    for v in statuses.values().filter(|v| v["status"] == "FAILED") {
        *why.entry(v["failure"]["code"].as_str().unwrap_or("?"))
            .or_default() += 1;
    }
    let why: Vec<String> = why.iter().map(|(code, n)| format!("{code} {n}")).collect();
    verdict(
        "every route terminal",
        &broken,
        format!(
            "{} routes: {done} DONE, {} FAILED ({})",
            statuses.len(),
            statuses.len() - done,
            why.join(", ")
        ),
    )
}

async fn transfers(
    w: &World,
    chain: u64,
    (from, to): (Option<Address>, Option<Address>),
) -> anyhow::Result<Vec<TokenTransfer>> {
    token_transfers(w, (chain, w.usdc[&chain]), (from, to)).await
}

/// The ERC-20 `Transfer`s of `token` on `chain` from `from` to `to` (each
/// when given): transaction, from, to, value.
pub(crate) async fn token_transfers(
    w: &World,
    (chain, token): (u64, Address),
    (from, to): (Option<Address>, Option<Address>),
) -> anyhow::Result<Vec<TokenTransfer>> {
    let all = every_transfer(w, (chain, token)).await?;
    Ok(all
        .iter()
        .filter(|t| from.is_none_or(|a| t.1 == a) && to.is_none_or(|a| t.2 == a))
        .copied()
        .collect())
}

/// Every `Transfer` of `token` on `chain`, read once: the checks run after
/// the traffic, and one filtered `eth_getLogs` per route costs anvil a
/// scan of the whole chain each (a two-hour run: ~10⁵ blocks, ~2·10⁴ routes).
/// Read in ranges of [`LOG_RANGE`] blocks.
async fn every_transfer(
    w: &World,
    (chain, token): (u64, Address),
) -> anyhow::Result<std::sync::Arc<Vec<TokenTransfer>>> {
    let mut book = w.transfer_book.lock().await;
    if let Some(all) = book.get(&(chain, token)) {
        return Ok(all.clone());
    }
    let p = w.chain(chain);
    let head = p.get_block_number().await?;
    let mut all = Vec::new();
    let mut from = 0;
    while from <= head {
        let to = (from + LOG_RANGE - 1).min(head);
        let f = Filter::new()
            .address(token)
            .event_signature(Transfer::SIGNATURE_HASH)
            .from_block(from)
            .to_block(to);
        for l in p.get_logs(&f).await? {
            if let (Ok(t), Some(tx)) = (Transfer::decode_log(&l.inner), l.transaction_hash) {
                all.push((tx, t.from, t.to, t.value));
            }
        }
        from = to + 1;
    }
    let all = std::sync::Arc::new(all);
    book.insert((chain, token), all.clone());
    Ok(all)
}

/// Blocks per `eth_getLogs` of [`every_transfer`].
const LOG_RANGE: u64 = 5_000;

/// Each route's user signature pulled at most once, exactly once if DONE:
/// the source chain's USDC transfers from the user of exactly the route's
/// (unique) amount.
pub async fn pulled_once(w: &World, statuses: &BTreeMap<String, Value>) -> anyhow::Result<Verdict> {
    let mut by_payer: BTreeMap<Address, Vec<Started>> = BTreeMap::new();
    // a live primitive pays from the relayer's float: nothing is pulled
    for r in w.routes().into_iter().filter(|r| r.payer != w.relayer) {
        by_payer.entry(r.payer).or_default().push(r);
    }
    let mut broken = Vec::new();
    let mut pulls = 0;
    for (who, routes) in by_payer {
        let sent = transfers(w, SRC, (Some(who), None)).await?;
        for r in routes {
            let n = sent.iter().filter(|t| t.3 == U256::from(r.amount)).count();
            pulls += n;
            let done = statuses.get(&r.id).is_some_and(|v| v["status"] == "DONE");
            if n > 1 || (done && n != 1) {
                broken.push(format!("{} ({}) pulled {n} times", r.id, r.kind));
            }
        }
    }
    Ok(verdict(
        "each signature pulled at most once",
        &broken,
        format!("{pulls} pulls on chain"),
    ))
}

/// Each DONE route paid once: its recipient (fresh) received exactly one
/// transfer, in the transaction its receipt names (`destTx`), and holds
/// exactly what it moved, at least the route's `minOut`.
pub async fn paid_once(w: &World, statuses: &BTreeMap<String, Value>) -> anyhow::Result<Verdict> {
    let mut broken = Vec::new();
    let mut paid = 0;
    for r in w.routes() {
        let Some(v) = statuses.get(&r.id) else {
            continue;
        };
        let got = transfers(w, DST, (None, Some(r.recipient))).await?;
        if v["status"] != "DONE" {
            if !got.is_empty() {
                broken.push(format!(
                    "{} {} yet paid {} times",
                    r.id,
                    v["status"],
                    got.len()
                ));
            }
            continue;
        }
        let named = v["destTx"].as_str().and_then(|h| h.parse::<B256>().ok());
        let min: U256 = v["to"]["minOut"]
            .as_str()
            .and_then(|m| m.parse().ok())
            .unwrap_or_default();
        match got.as_slice() {
            [(tx, _, _, value)] if Some(*tx) == named && *value >= min => paid += 1,
            [(tx, _, _, value)] => broken.push(format!(
                "{}: paid {value} in {tx}, receipt names {named:?}, minOut {min}",
                r.id
            )),
            more => broken.push(format!("{} paid {} times", r.id, more.len())),
        }
    }
    Ok(verdict(
        "each DONE route paid once, as its receipt says",
        &broken,
        format!("{paid} payouts"),
    ))
}

/// Each webhook message answered 200 exactly once, and never delivered
/// again after it; every hooked route that ended had its end delivered.
/// A second 200 is excused only across a replica's `kill -9` (between the
/// first 200, less a second, and the redelivery): a process killed between
/// the receiver's answer and its record cannot know it was delivered —
/// at-least-once delivery, which `webhook-id` lets receivers deduplicate.
/// Excused repeats are counted.
pub fn webhooks_once(
    log: &BTreeMap<String, Deliveries>,
    w: &World,
    (statuses, kills): (&BTreeMap<String, Value>, &[Instant]),
) -> Verdict {
    let mut excused = 0;
    let mut broken: Vec<String> = Vec::new();
    for (id, d) in log {
        let oks: Vec<usize> = (0..d.answered.len())
            .filter(|i| d.answered[*i] == 200)
            .collect();
        let across_kill = oks.len() == 2 && {
            let (first, again) = (d.at[oks[0]], d.at[oks[1]]);
            let from = first.checked_sub(Duration::from_secs(1)).unwrap_or(first);
            kills.iter().any(|k| *k >= from && *k <= again)
        };
        match (oks.len(), d.answered.last() == Some(&200)) {
            (1, true) => {}
            (2, true) if across_kill => excused += 1,
            _ => broken.push(format!("{id} ({}) answered {:?}", d.event, d.answered)),
        }
    }
    for r in w.routes().iter().filter(|r| r.hooked) {
        let ended = statuses
            .get(&r.id)
            .is_some_and(|v| matches!(v["status"].as_str(), Some("DONE" | "FAILED")));
        let told = log
            .values()
            .any(|d| d.route == r.id && d.answered.last() == Some(&200));
        if ended && !told {
            broken.push(format!("{} ended but its hook was never delivered", r.id));
        }
    }
    let attempts: usize = log.values().map(|d| d.answered.len()).sum();
    verdict(
        "each webhook delivered with exactly one 200",
        &broken,
        format!(
            "{} messages, {attempts} deliveries, {excused} delivered again across a kill -9",
            log.len()
        ),
    )
}

/// No relayer key left with transactions queued behind a missing nonce.
pub async fn no_nonce_gap(w: &World) -> anyhow::Result<Verdict> {
    let mut broken = Vec::new();
    for chain in [SRC, DST] {
        let p = w.chain(chain);
        for key in &w.keys {
            let latest = p.get_transaction_count(*key).latest().await?;
            let pending = p.get_transaction_count(*key).pending().await?;
            if latest != pending {
                broken.push(format!(
                    "chain {chain} key {key}: mined {latest}, pending {pending}"
                ));
            }
        }
    }
    Ok(verdict(
        "no nonce gap on any relayer key",
        &broken,
        format!("{} keys on 2 chains", w.keys.len()),
    ))
}

/// Memory and open files flat after warm-up, over each process lifetime
/// of at least `min_life` with samples: the resident set of the last
/// quarter within 15 % (+ 24 MiB) of the second quarter's, open files
/// within 64.
pub fn flat(lifetimes: &[(usize, Vec<Sample>)], min_life: Duration) -> Verdict {
    let mut broken = Vec::new();
    let mut judged = 0;
    for (replica, samples) in lifetimes {
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
            continue;
        };
        if last.at_s - first.at_s < min_life.as_secs_f64() || samples.len() < 8 {
            continue;
        }
        judged += 1;
        let q = samples.len() / 4;
        let mean = |s: &[Sample]| s.iter().map(|x| x.rss_kib).sum::<u64>() / s.len().max(1) as u64;
        let (warm, end) = (mean(&samples[q..2 * q]), mean(&samples[3 * q..]));
        if end > warm + warm * 15 / 100 + 24 * 1024 {
            broken.push(format!(
                "replica {replica}: RSS {} MiB -> {} MiB",
                warm / 1024,
                end / 1024
            ));
        }
        let fds_warm = samples[q..2 * q].iter().map(|x| x.fds).max().unwrap_or(0);
        let fds_end = samples[3 * q..].iter().map(|x| x.fds).max().unwrap_or(0);
        if fds_end > fds_warm + 64 {
            broken.push(format!(
                "replica {replica}: open files {fds_warm} -> {fds_end}"
            ));
        }
    }
    verdict(
        "memory and open files flat after warm-up",
        &broken,
        format!("{judged} process lifetimes judged"),
    )
}

/// No 5xx the API does not allow, no stream without its first event.
pub fn no_violations(stats: &BTreeMap<&'static str, crate::client::EndpointStats>) -> Verdict {
    let broken: Vec<String> = stats
        .iter()
        .filter(|(_, s)| s.violation_count > 0)
        .map(|(e, s)| {
            format!(
                "{e}: {} (e.g. {})",
                s.violation_count,
                s.violations.first().cloned().unwrap_or_default()
            )
        })
        .collect();
    let answered: u64 = stats
        .values()
        .map(|s| s.statuses.values().sum::<u64>())
        .sum();
    verdict(
        "no answer the API does not allow",
        &broken,
        format!("{answered} answers"),
    )
}

/// Each payout that is not a route (a netting withdrawal) made at most
/// once, exactly what its answer said when it said `PAID`.
pub async fn payouts_once(w: &World) -> anyhow::Result<Verdict> {
    let mut broken = Vec::new();
    let payouts = w.payouts.lock().expect("ledger").clone();
    for p in &payouts {
        let got = transfers(w, DST, (None, Some(p.recipient))).await?;
        let paid: U256 = got.iter().map(|t| t.3).sum();
        let ok = match (p.state.as_str(), p.net) {
            ("PAID", Some(net)) => got.len() == 1 && paid == U256::from(net),
            ("FAILED", _) => got.is_empty(),
            _ => got.len() <= 1,
        };
        if !ok {
            broken.push(format!(
                "{} {} paid {paid} in {} transfers (net {:?})",
                p.kind,
                p.id,
                got.len(),
                p.net
            ));
        }
    }
    Ok(verdict(
        "each withdrawal paid at most once, as answered",
        &broken,
        format!("{} withdrawals", payouts.len()),
    ))
}

fn psql(url: &str, sql: &str) -> anyhow::Result<i64> {
    let out = std::process::Command::new("psql")
        .args([url, "-tAc", sql])
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0))
}

/// The netting ledger balanced (every entry's postings sum to zero, every
/// account's balance is its postings, no user below zero, the liabilities
/// total is the users' balances) and equal to what moved on chain: the
/// deposits the soak made and the host credited, less what withdrawals
/// debited.
pub fn ledger_balanced(w: &World, db: &str) -> anyhow::Result<Verdict> {
    let checks = [
        ("unbalanced entries", "SELECT count(*) FROM (SELECT entry_id FROM ledger_postings GROUP BY entry_id HAVING SUM(amount) <> 0) u"),
        ("accounts off their postings", "SELECT count(*) FROM ledger_accounts a WHERE a.balance <> (SELECT COALESCE(SUM(amount), 0) FROM ledger_postings p WHERE p.account_id = a.id)"),
        ("users below zero", "SELECT count(*) FROM ledger_accounts WHERE id LIKE 'user:%' AND balance < 0"),
        ("liabilities off the users' balances", "SELECT (SELECT amount FROM ledger_totals WHERE id = 'liabilities') - (SELECT COALESCE(SUM(balance), 0) FROM ledger_accounts WHERE id LIKE 'user:%')"),
    ];
    let mut broken = Vec::new();
    for (what, sql) in checks {
        let n = psql(db, sql)?;
        if n != 0 {
            broken.push(format!("{what}: {n}"));
        }
    }
    let liabilities = psql(
        db,
        "SELECT COALESCE(SUM(balance), 0) FROM ledger_accounts WHERE id LIKE 'user:%'",
    )?;
    let debited = psql(
        db,
        "SELECT COALESCE(SUM(amount), 0) FROM netting_withdrawals WHERE state <> 'FAILED'",
    )?;
    let credited = w
        .netting_credited
        .load(std::sync::atomic::Ordering::Relaxed) as i64;
    if liabilities != credited - debited {
        broken.push(format!(
            "liabilities {liabilities} != deposits {credited} - withdrawals {debited}"
        ));
    }
    Ok(verdict(
        "the netting ledger balanced and equal to the chain's deposits less withdrawals",
        &broken,
        format!("liabilities {liabilities} = {credited} deposited - {debited} withdrawn"),
    ))
}
