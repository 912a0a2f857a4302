//! Every executing rail end to end through `POST /api/route/execute`, as a
//! wallet uses it, on the devnet mesh `relay up` serves: the packaged
//! plugins (lifi, squid, cctp as wasm; bungee, stablebridge, btc native),
//! pointed at their upstream simulators by configuration. The host's own
//! executor pulls with the user's Permit2 signature, approves, calls the
//! upstream's transaction, runs follow-ups (CCTP's mint) and tracks the
//! upstream to DONE; balances are asserted on chain (or on the simulated
//! ledger for non-EVM legs). Unfunded lanes answer FUNDS_REQUIRED with no
//! transaction; bitcoin → EVM answers AWAITING_DEPOSIT with the address; a
//! dead winning upstream makes execute fail over to the next rail. Upstream
//! failures end where the vendor says the money is: a LI.FI refund, a Squid
//! destination failure and a Chainflip fill-or-kill refund; an upstream
//! silent past the track timeout is left to the operator, not refunded.

use crate::common;
use alloy::primitives::U256;
use common::{
    approve_permit2, get, permit_body, post, serve, until_terminal, usdc_balance, Running,
};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_registry::OperatorStateStore;
use relay_simulators::{faults::FaultConfig, faults::FaultMode, ledger::Node, Upstream};
use relay_types::{Clock as _, ManualClock, SystemClock};
use serde_json::{json, Value};

const BASE: u64 = 8453;
const ARB: u64 = 42161;
const SOLANA_RECIPIENT: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const BTC_REFUND: &str = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080";

async fn mesh() -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    approve_permit2(&devnet, BASE, 1).await;
    (devnet, dir, h)
}

async fn execute(h: &Running, body: &Value) -> Value {
    let (code, text) = post(&h.base, "/api/route/execute", body, &[]).await;
    assert_eq!(code, 200, "{body} -> {text}");
    serde_json::from_str(&text).unwrap()
}

fn amount(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

/// A permit2 route forced onto `rail` settles: the user paid exactly the
/// amount once, the recipient got at least the receipt's minimum.
async fn settles_on(h: &Running, devnet: &Devnet, rail: &str, nonce: u64) -> Value {
    let user = keys::anvil_address(1);
    let (src0, dst0) = (
        usdc_balance(devnet, BASE, user).await,
        usdc_balance(devnet, ARB, user).await,
    );
    let mut body = permit_body(devnet, (BASE, ARB), 6_000_000, nonce);
    body["rail"] = json!(rail);
    let receipt = execute(h, &body).await;
    assert_eq!(receipt["bridge"], rail, "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{rail}: {done}");
    assert!(done["srcTx"].as_str().unwrap().starts_with("0x"), "{done}");
    assert_eq!(
        src0 - usdc_balance(devnet, BASE, user).await,
        U256::from(6_000_000u64),
        "{rail}: pulled exactly once"
    );
    let got = usdc_balance(devnet, ARB, user).await - dst0;
    assert!(
        got >= amount(&done["to"]["min"]) && !got.is_zero(),
        "{rail}: delivered {got}, receipt {done}"
    );
    done
}

#[tokio::test(flavor = "multi_thread")]
async fn each_aggregator_rail_executes_a_gasless_route_to_done() {
    let (devnet, _dir, h) = mesh().await;
    for (nonce, rail) in ["lifi", "squid", "bungee"].into_iter().enumerate() {
        settles_on(&h, &devnet, rail, 100 + nonce as u64).await;
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn cctp_burns_waits_for_the_attestation_mints_and_delivers_one_to_one() {
    let (devnet, _dir, h) = mesh().await;
    let done = settles_on(&h, &devnet, "cctp", 200).await;
    assert!(done["destTx"].as_str().unwrap().starts_with("0x"), "{done}");
    assert_eq!(
        amount(&done["to"]["estimated"]),
        amount(&done["bridged"]),
        "burn and mint is 1:1 on what the relayer bridged"
    );
    devnet.stop();
}

/// Every Allbridge transfer passes through the simulator's not-indexed
/// window first (`AllbridgeConfig::not_indexed_polls`: the current REST
/// API's bare `400 {"statusCode":400,"message":"Bad request"}` on
/// `/transfer/status`), so this route runs through it to DONE. How the rail
/// reads that answer (PENDING, not the caller's mistake) is proven by its
/// vendor case and the simulator's own test: the host asks again after any
/// `track` error, so this route alone would not notice a rail misreading it.
#[tokio::test(flavor = "multi_thread")]
async fn stablebridge_pays_solana_and_answers_funds_required_back() {
    let (devnet, _dir, h) = mesh().await;
    let mut out = permit_body(&devnet, (BASE, ARB), 9_000_000, 300);
    out["toChain"] = json!("solana");
    out["toAddress"] = json!(SOLANA_RECIPIENT);
    let receipt = execute(&h, &out).await;
    assert_eq!(receipt["bridge"], "stablebridge", "{receipt}");
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let credited = h
        .sims
        .ledger_balance(Node::Solana, SOLANA_RECIPIENT, "USDC");
    assert!(
        U256::from(credited) >= amount(&done["to"]["min"]) && credited > 0,
        "{credited} on the simulated solana ledger for {done}"
    );

    let back = json!({
        "fromChain": "solana", "toChain": BASE, "fromToken": "USDC", "toToken": "USDC",
        "amount": "9000000", "fromAddress": SOLANA_RECIPIENT,
        "toAddress": keys::anvil_address(2), "live": true,
    });
    let refused = execute(&h, &back).await;
    assert_eq!(refused["status"], "FUNDS_REQUIRED", "{refused}");
    assert!(refused["srcTx"].is_null() && refused["destTx"].is_null());
    let (_, again) = get(&format!(
        "{}/api/route/status?id={}",
        h.base,
        refused["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(again["status"], "FUNDS_REQUIRED");
    devnet.stop();
}

/// A bitcoin → Arbitrum USDC route of 150 000 sats to `recipient` (refund
/// address [`BTC_REFUND`]): its receipt, AWAITING_DEPOSIT with the deposit
/// address, once the user sent the BTC there.
async fn bitcoin_sent(h: &Running, recipient: alloy::primitives::Address) -> Value {
    let body = json!({
        "fromChain": "bitcoin", "toChain": ARB, "fromToken": "BTC", "toToken": "USDC",
        "amount": "150000", "fromAddress": BTC_REFUND, "toAddress": recipient, "live": true,
    });
    let receipt = execute(h, &body).await;
    assert_eq!(receipt["status"], "AWAITING_DEPOSIT", "{receipt}");
    let address = receipt["deposit"]["address"].as_str().unwrap();
    let sats: u64 = receipt["deposit"]["amount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(sats, 150_000);
    h.sims.send_btc(address, sats).expect("the user sends BTC");
    receipt
}

#[tokio::test(flavor = "multi_thread")]
async fn bitcoin_to_evm_awaits_the_users_deposit_then_pays_out() {
    let (devnet, _dir, h) = mesh().await;
    let recipient = keys::anvil_address(3);
    let before = usdc_balance(&devnet, ARB, recipient).await;
    let receipt = bitcoin_sent(&h, recipient).await;
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let got = usdc_balance(&devnet, ARB, recipient).await - before;
    assert!(
        got >= amount(&done["to"]["min"]) && !got.is_zero(),
        "{got} for {done}"
    );
    devnet.stop();
}

/// Chainflip's fill-or-kill refund, the vendor's way (`COMPLETED` with a
/// `refundEgress` and no `swapEgress`): the route ends FAILED, refunded by
/// the upstream — never DONE — the user's bitcoin is back at the refund
/// address and nothing was paid out.
#[tokio::test(flavor = "multi_thread")]
async fn a_chainflip_fill_or_kill_refund_returns_the_bitcoin_and_is_never_delivered() {
    let (devnet, _dir, h) = mesh().await;
    let refund = FaultConfig {
        mode: FaultMode::AcceptThenFail,
        ..FaultConfig::default()
    };
    h.sims.set_faults(Upstream::Chainflip, refund);
    let recipient = keys::anvil_address(4);
    let before = usdc_balance(&devnet, ARB, recipient).await;
    let refunded0 = h.sims.ledger_balance(Node::Bitcoin, BTC_REFUND, "BTC");
    let receipt = bitcoin_sent(&h, recipient).await;
    let failed = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    assert_eq!(
        failed["failure"]["code"], "REFUNDED_BY_UPSTREAM",
        "{failed}"
    );
    assert_eq!(
        h.sims.ledger_balance(Node::Bitcoin, BTC_REFUND, "BTC") - refunded0,
        150_000,
        "the deposit is back at the refund address: {failed}"
    );
    assert_eq!(
        usdc_balance(&devnet, ARB, recipient).await,
        before,
        "{failed}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn execute_fails_over_when_the_winning_upstream_is_down() {
    let (devnet, _dir, h) = mesh().await;
    // Leave the aggregators to compete: no float lane, no burn-and-mint.
    for rail in ["floatlane", "cctp"] {
        h.host_state
            .store
            .set_rail_enabled(rail, false)
            .await
            .unwrap();
    }
    let quote = json!({"fromChain": BASE, "toChain": ARB, "fromToken": "USDC", "amount": "6000000",
        "fromAddress": keys::anvil_address(1)});
    let (code, text) = post(&h.base, "/api/route/quote", &quote, &[]).await;
    assert_eq!(code, 200, "{text}");
    let q: Value = serde_json::from_str(&text).unwrap();
    let compared = q["compared"].as_array().unwrap();
    assert!(compared.len() >= 3, "every aggregator is compared: {q}");
    let winner = q["bridge"].as_str().unwrap().to_string();
    assert_eq!(compared[0]["rail"], winner.as_str(), "winner first: {q}");
    // The simulated aggregators charge 10, 12 and 15 bps: ranked by what
    // the recipient gets, the cheapest first.
    let outs: Vec<U256> = compared.iter().map(|c| amount(&c["estOut"])).collect();
    assert!(outs.windows(2).all(|w| w[0] > w[1]), "strictly ranked: {q}");
    assert_eq!(winner, "lifi", "{q}");
    let upstream = match winner.as_str() {
        "lifi" => Upstream::Lifi,
        "squid" => Upstream::Squid,
        "bungee" => Upstream::Bungee,
        other => panic!("unexpected winner {other}"),
    };
    h.sims.set_faults(
        upstream,
        FaultConfig {
            mode: FaultMode::Error,
            ..FaultConfig::default()
        },
    );
    let receipt = execute(&h, &permit_body(&devnet, (BASE, ARB), 6_000_000, 400)).await;
    assert_ne!(receipt["bridge"], winner.as_str(), "{receipt}");
    assert!(
        receipt["failover"].to_string().contains(&winner),
        "the passed-over winner is named: {receipt}"
    );
    let done = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "DONE", "{done}");
    devnet.stop();
}

/// `relay rails …` as the operator runs it, against the serving host's
/// data and plugins directories.
fn relay_cli(dir: &std::path::Path, args: &[&str]) {
    let (code, _, stderr) = common::relay_cli(dir, args);
    assert_eq!(code, 0, "relay {args:?}: {stderr}");
}

/// The rails that answered an anonymous quote (no fromAddress, no
/// toAddress: spec §2.5 makes both optional).
async fn rails_quoted(h: &Running) -> Vec<String> {
    let quote =
        json!({"fromChain": BASE, "toChain": ARB, "fromToken": "USDC", "amount": "6000000"});
    let (code, text) = post(&h.base, "/api/route/quote", &quote, &[]).await;
    assert_eq!(code, 200, "{text}");
    let q: Value = serde_json::from_str(&text).unwrap();
    q["compared"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == true)
        .map(|c| c["rail"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lane_switched_off_with_the_cli_leaves_quotes_and_execute_at_once_and_stays_off() {
    let (devnet, dir, h) = mesh().await;
    let lifi = "lifi".to_string();
    let mut answered = rails_quoted(&h).await;
    answered.sort();
    assert_eq!(
        answered,
        ["bungee", "cctp", "floatlane", "lifi", "squid"],
        "every USDC rail prices an anonymous quote"
    );
    relay_cli(
        dir.path(),
        &["rails", "execute-ready", "lifi", "evm->evm", "off"],
    );
    assert!(!rails_quoted(&h).await.contains(&lifi), "off at once");
    let mut forced = permit_body(&devnet, (BASE, ARB), 6_000_000, 500);
    forced["rail"] = json!("lifi");
    let (code, text) = post(&h.base, "/api/route/execute", &forced, &[]).await;
    assert_eq!(code, 404, "nothing executes on a switched-off lane: {text}");
    assert!(text.contains("UNROUTABLE_LANE"), "{text}");

    // A restarted host on the same data directory keeps the lane off.
    drop(h);
    let h = serve(&devnet, dir.path(), |_| {}).await;
    assert!(!rails_quoted(&h).await.contains(&lifi), "off after restart");
    relay_cli(
        dir.path(),
        &["rails", "execute-ready", "lifi", "evm->evm", "on"],
    );
    assert!(rails_quoted(&h).await.contains(&lifi), "back on at once");
    devnet.stop();
}

/// A route on `rail` whose upstream takes the deposit and then fails as
/// `mode` says ends FAILED with `code`, and the sender is refunded from
/// the relayer's inventory: everything but the relayer's gas comes back.
async fn an_upstream_failure_is_refunded(
    rail: &str,
    upstream: Upstream,
    mode: FaultMode,
    code: &str,
) {
    let (devnet, _dir, h) = mesh().await;
    h.sims.set_faults(
        upstream,
        FaultConfig {
            mode,
            ..FaultConfig::default()
        },
    );
    let user = keys::anvil_address(1);
    let before = usdc_balance(&devnet, BASE, user).await;
    let mut body = permit_body(&devnet, (BASE, ARB), 6_000_000, 600);
    body["rail"] = json!(rail);
    let receipt = execute(&h, &body).await;
    let failed = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let f = &failed["failure"];
    assert_eq!(f["code"], code, "{failed}");
    assert!(
        f["refundTx"].as_str().unwrap().starts_with("0x"),
        "{failed}"
    );
    assert_eq!(
        before - usdc_balance(&devnet, BASE, user).await,
        amount(&failed["gasFee"]),
        "everything but the relayer's gas came back: {failed}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_takes_the_deposit_then_refunds_it_ends_refunded_by_upstream() {
    // LI.FI reports the refund as DONE / REFUNDED: never delivered.
    let refund = FaultMode::AcceptThenFail;
    an_upstream_failure_is_refunded("lifi", Upstream::Lifi, refund, "REFUNDED_BY_UPSTREAM").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_squid_route_that_failed_on_the_destination_ends_failed_with_the_refund_paid() {
    // Squid's `failed_on_destination`: nothing delivered, nothing refunded
    // by the bridge; the sender is made whole from the relayer's inventory.
    let mode = FaultMode::FailOnDestination;
    an_upstream_failure_is_refunded("squid", Upstream::Squid, mode, "UPSTREAM_FAILED").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_track_timeout_leaves_the_funds_to_the_operator_and_a_late_delivery_is_paid_once() {
    // The upstream holds the deposit past the host's track timeout (1 ms:
    // the first PENDING answer is already late). An automatic refund would
    // pay the sender back while the bridge still delivers.
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.execution.track_timeout_ms = 1).await;
    approve_permit2(&devnet, BASE, 1).await;
    let held = |ms| FaultConfig {
        settle_delay_ms: ms,
        ..FaultConfig::default()
    };
    h.sims.set_faults(Upstream::Lifi, held(600_000));
    let user = keys::anvil_address(1);
    let (src0, dst0) = (
        usdc_balance(&devnet, BASE, user).await,
        usdc_balance(&devnet, ARB, user).await,
    );
    let mut body = permit_body(&devnet, (BASE, ARB), 6_000_000, 700);
    body["rail"] = json!("lifi");
    let receipt = execute(&h, &body).await;
    let failed = until_terminal(&h.base, receipt["id"].as_str().unwrap()).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let f = &failed["failure"];
    assert_eq!(f["code"], "UPSTREAM_TIMEOUT", "{failed}");
    assert_eq!(f["fundsMoved"], true, "{failed}");
    assert!(f["refundTx"].is_null(), "no automatic refund: {failed}");
    let said = f["message"].as_str().unwrap();
    assert!(
        said.contains("may still deliver"),
        "the user is told why: {said}"
    );
    let paid = U256::from(6_000_000u64);
    assert_eq!(src0 - usdc_balance(&devnet, BASE, user).await, paid);
    // The operator's dashboard lists it to settle with the upstream.
    let snap = common::send(
        common::http()
            .get(format!("{}/admin/api/snapshot", h.base))
            .bearer_auth(relay_host::devnet::DEVNET_OWNER_TOKEN),
    )
    .await;
    assert_eq!(snap.status, 200, "{}", snap.body);
    let doubt = &snap.body["routes"]["fundsInDoubt"];
    assert_eq!(doubt[0]["id"], receipt["id"], "{doubt}");
    assert_eq!(doubt[0]["code"], "UPSTREAM_TIMEOUT", "{doubt}");

    // The bridge delivers late: the recipient is paid, the sender paid once.
    h.sims.set_faults(Upstream::Lifi, held(0));
    common::wait_up_to(
        "the late delivery",
        std::time::Duration::from_secs(60),
        async || usdc_balance(&devnet, ARB, user).await > dst0,
    )
    .await;
    assert_eq!(src0 - usdc_balance(&devnet, BASE, user).await, paid);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_route_that_times_out_awaiting_the_users_deposit_moved_nothing() {
    // Bitcoin → Arbitrum: the user never sends the BTC. Nothing reached the
    // relayer, so the timeout owes no one anything and is not in doubt.
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| c.execution.track_timeout_ms = 1).await;
    let body = json!({
        "fromChain": "bitcoin", "toChain": ARB, "fromToken": "BTC", "toToken": "USDC",
        "amount": "150000", "fromAddress": BTC_REFUND,
        "toAddress": keys::anvil_address(3), "live": true,
    });
    let receipt = execute(&h, &body).await;
    assert_eq!(receipt["status"], "AWAITING_DEPOSIT", "{receipt}");
    let in_doubt = timed_out(&h, receipt["id"].as_str().unwrap(), false).await;
    assert_eq!(in_doubt, json!([]), "{in_doubt}");
    devnet.stop();
}

/// Route `id` ends FAILED on its track timeout with `fundsMoved` =
/// `moved` and no refund; the operator snapshot's `fundsInDoubt` list.
async fn timed_out(h: &Running, id: &str, moved: bool) -> Value {
    let failed = until_terminal(&h.base, id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    let f = &failed["failure"];
    assert_eq!(f["code"], "UPSTREAM_TIMEOUT", "{failed}");
    assert_eq!(f["fundsMoved"], moved, "{failed}");
    assert!(f["refundTx"].is_null(), "{failed}");
    let snap = common::send(
        common::http()
            .get(format!("{}/admin/api/snapshot", h.base))
            .bearer_auth(relay_host::devnet::DEVNET_OWNER_TOKEN),
    )
    .await;
    snap.body["routes"]["fundsInDoubt"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_after_the_users_deposit_reached_the_upstream_is_funds_in_doubt() {
    // Bitcoin → Arbitrum: the user's BTC reaches the upstream, which holds
    // it past the host's track timeout (the host's clock is moved past it,
    // not waited for). The upstream may still deliver: the user's funds
    // moved, and the operator settles it.
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(SystemClock.now_ms());
    let h = common::serve_at(&devnet, dir.path(), clock.clone(), |_| {}).await;
    let hold = FaultConfig {
        settle_delay_ms: 600_000,
        ..FaultConfig::default()
    };
    h.sims.set_faults(Upstream::Chainflip, hold);
    let receipt = bitcoin_sent(&h, keys::anvil_address(3)).await;
    let id = receipt["id"].as_str().unwrap();
    let url = format!("{}/api/route/status?id={id}", h.base);
    common::wait_up_to(
        "the upstream sees the deposit",
        common::SETTLES_WITHIN,
        async || get(&url).await.1["status"] != "AWAITING_DEPOSIT",
    )
    .await;
    let (_, seen) = get(&url).await;
    assert_eq!(seen["status"], "BRIDGING", "{seen}");
    clock.advance(h.host_state.config.execution.track_timeout_ms + 1);
    let doubt = timed_out(&h, id, true).await.to_string();
    assert!(doubt.contains(id), "{doubt}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_status_read_rechecks_the_upstream_and_shows_its_delivery_at_once() {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The route's runner polls its upstream only every 10 minutes here.
    let h = serve(&devnet, dir.path(), |c| {
        c.execution.track_interval_ms = 600_000
    })
    .await;
    approve_permit2(&devnet, BASE, 1).await;
    let user = keys::anvil_address(1);
    let dst0 = usdc_balance(&devnet, ARB, user).await;
    let mut body = permit_body(&devnet, (BASE, ARB), 6_000_000, 700);
    body["rail"] = json!("lifi");
    let receipt = execute(&h, &body).await;
    // LI.FI's status API fails while the runner takes its first look.
    let fail = FaultConfig {
        mode: FaultMode::Error,
        ..FaultConfig::default()
    };
    h.sims.set_faults(Upstream::Lifi, fail);
    let id = receipt["id"].as_str().unwrap().to_string();
    let store = h.host_state.store.clone();
    common::wait_for("the runner waits on LI.FI", async || {
        let (r, _) = store.get_route(&id).await.unwrap().unwrap();
        matches!(
            r.plan.steps.get(r.next_step),
            Some(relay_plugin_api::PlanAction::AwaitUpstream { .. })
        )
    })
    .await;
    common::wait_for("the simulator pays out", async || {
        usdc_balance(&devnet, ARB, user).await > dst0
    })
    .await;
    h.sims.set_faults(Upstream::Lifi, FaultConfig::default());

    // LI.FI reports the delivery once it has indexed the payout: status
    // reads show it as soon as it does.
    let url = format!("{}/api/route/status?id={id}", h.base);
    let mut status = Value::Null;
    common::wait_for("a status read shows the delivery", async || {
        let (code, v) = get(&url).await;
        assert_eq!(code, 200, "{v}");
        status = v;
        status["status"] == "DONE"
    })
    .await;
    assert_eq!(status["upstream"]["state"], "DONE", "{status}");
    let dest_tx = status["destTx"].as_str().expect("destTx from the upstream");
    assert_eq!(Some(dest_tx), status["upstream"]["destTx"].as_str());
    let (stored, _) = store.get_route(&id).await.unwrap().unwrap();
    assert_eq!(
        stored.status,
        relay_types::route::RouteStatus::Bridging,
        "the runner has not polled again: the read itself asked the upstream"
    );
    devnet.stop();
}
