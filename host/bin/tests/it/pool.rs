//! The privacy pool (spec §4.11, §8.2, issue 46) as its users meet it, on
//! the devnet `relay up` runs (the pool on base):
//!
//! - three wallets deposit notes with `relay pool deposit`; a fresh address
//!   holding no ETH receives a withdrawal `relay pool withdraw` proves on
//!   the client and the relayer sends: the chain shows the nullifier spent
//!   and the recipient paid the note less the fee;
//! - the same proof again, a proof for another recipient, a proof against
//!   a forged root, a wrong denomination and a wrong fee are refused by the
//!   host before anything is sent, and the first three by the contract too;
//! - snarkjs (npm) verifies the host's proof against the committed
//!   verifying key, and refuses it for other inputs, as the host does;
//! - twenty identical withdrawals at once pay once;
//! - a held withdrawal waits for its time (a manual clock moves it) and
//!   its ticket shows each state; one withdrawn meanwhile past the host
//!   fails without a transaction.
//!
//! The crash tests (`pool_crash.rs`) kill a real `relay serve` while a
//! withdrawal is held and while it is in flight.

use std::{path::Path, sync::Arc};

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
    signers::local::PrivateKeySigner,
    sol_types::SolCall,
};
use relay_devnet::Devnet;
use relay_pool::{contract::PrivacyPool, note::Note, zk};
use relay_types::clock::ManualClock;
use serde_json::{json, Value};

use crate::common::{self, Answer};

/// The pool's chain on the devnet.
pub(crate) const CHAIN: u64 = 8453;
/// Wei per note.
pub(crate) const NOTE: u64 = 20_000_000_000_000;

/// Runs `relay pool <args>` against `base` with `env`; its JSON output.
pub(crate) fn pool_cli(base: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["pool", "--url", base])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("relay runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "relay pool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("not JSON: {stdout}"))
}

/// A fresh note of the host's pool, from the CLI.
pub(crate) fn new_note(base: &str) -> String {
    pool_cli(base, &["note"], &[])["note"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Deposits `note` from anvil account `wallet` with the CLI.
pub(crate) fn deposit(devnet: &Devnet, base: &str, note: &str, wallet: usize) -> Value {
    let rpc = devnet.rpc_url(CHAIN).unwrap().to_string();
    let key = format!(
        "0x{}",
        hex::encode(relay_devnet::keys::anvil_signer(wallet).to_bytes())
    );
    let env = [
        (relay_host::pool::WALLET_KEY_ENV, key.as_str()),
        ("RELAY_POOL_NOTE", note),
    ];
    pool_cli(base, &["deposit", "--rpc", &rpc], &env)
}

/// The pool's address on the devnet.
pub(crate) fn pool_of(devnet: &Devnet) -> Address {
    devnet
        .deployment(CHAIN)
        .unwrap()
        .pool
        .expect("the devnet's pool")
}

/// POSTs a withdrawal.
pub(crate) async fn withdraw(base: &str, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let mut req = common::http()
        .post(format!("{base}/api/pool/withdraw"))
        .json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    common::send(req).await
}

/// An `eth_call` of `withdraw` with `body`'s inputs from the relayer: the
/// contract's own verdict (`Err` with the revert's selector name).
async fn on_chain(devnet: &Devnet, body: &Value) -> Result<(), String> {
    let u = |v: &Value| v.as_str().unwrap().parse::<U256>().unwrap();
    let a = |v: &Value| v.as_str().unwrap().parse::<Address>().unwrap();
    let proof: Vec<U256> = body["proof"].as_array().unwrap().iter().map(u).collect();
    let call = PrivacyPool::withdrawCall {
        proof: proof.try_into().unwrap(),
        root_: u(&body["root"]),
        nullifierHash: u(&body["nullifierHash"]),
        recipient: a(&body["recipient"]),
        relayer: a(&body["relayer"]),
        fee: u(&body["fee"]),
    };
    let tx = TransactionRequest::default()
        .from(devnet.relayer)
        .to(pool_of(devnet))
        .input(Bytes::from(call.abi_encode()).into());
    let provider = devnet.chain(CHAIN).unwrap().provider();
    match provider.call(tx).await {
        Ok(_) => Ok(()),
        Err(e) => {
            let data = e.as_error_resp().and_then(|r| r.as_revert_data());
            let decoded = data.and_then(|d| {
                <PrivacyPool::PrivacyPoolErrors as alloy::sol_types::SolInterface>::abi_decode(&d)
                    .ok()
            });
            Err(decoded.map_or_else(|| e.to_string(), |d| format!("{d:?}")))
        }
    }
}

/// The relayer's transaction count on the pool's chain.
pub(crate) async fn relayer_nonce(devnet: &Devnet) -> u64 {
    let provider = devnet.chain(CHAIN).unwrap().provider();
    provider
        .get_transaction_count(devnet.relayer)
        .await
        .unwrap()
}

/// ETH of `who` on the pool's chain.
pub(crate) async fn eth(devnet: &Devnet, who: Address) -> U256 {
    let provider = devnet.chain(CHAIN).unwrap().provider();
    provider.get_balance(who).await.unwrap()
}

/// Whether the contract has `nullifier` spent.
pub(crate) async fn spent(devnet: &Devnet, nullifier: &str) -> bool {
    let call = PrivacyPool::nullifierSpentCall {
        nullifierHash: nullifier.parse().unwrap(),
    };
    let tx = TransactionRequest::default()
        .to(pool_of(devnet))
        .input(Bytes::from(call.abi_encode()).into());
    let provider = devnet.chain(CHAIN).unwrap().provider();
    let out = provider.call(tx).await.unwrap();
    PrivacyPool::nullifierSpentCall::abi_decode_returns(&out).unwrap()
}

/// Waits until the withdrawal at `hold_url` (its ticket's URL) is SENT
/// and checks it went HELD, SENDING, SENT; what the ticket shows.
pub(crate) async fn held_until_sent(hold_url: &str) -> Value {
    common::wait_for("the held withdrawal to be sent", async || {
        common::get(hold_url).await.1["state"] == "SENT"
    })
    .await;
    let (_, shown) = common::get(hold_url).await;
    let states: Vec<&str> = shown["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["HELD", "SENDING", "SENT"], "{shown}");
    shown
}

fn fresh_address() -> Address {
    PrivateKeySigner::random().address()
}

/// Runs snarkjs' `groth16.verify` on `proof` and `public` with the
/// committed verifying key: its verdict.
fn snarkjs_verifies(dir: &Path, proof: &[U256; 8], public: &zk::Public) -> bool {
    let (p, inputs) = zk::snarkjs(proof, public);
    std::fs::write(dir.join("vk.json"), zk::VERIFYING_KEY).unwrap();
    std::fs::write(dir.join("proof.json"), serde_json::to_string(&p).unwrap()).unwrap();
    std::fs::write(
        dir.join("public.json"),
        serde_json::to_string(&inputs).unwrap(),
    )
    .unwrap();
    let dir = dir.to_str().unwrap();
    let answer = relay_fixtures::js_oracle("pool-verify.mjs", "snarkjs", &["verify", dir]);
    answer["ok"].as_bool().expect("snarkjs answers ok")
}

/// The parsed proof and public inputs of a withdrawal body.
fn parts_of(body: &Value, pool: &zk::Public) -> ([U256; 8], zk::Public) {
    let u = |v: &Value| v.as_str().unwrap().parse::<U256>().unwrap();
    let proof: Vec<U256> = body["proof"].as_array().unwrap().iter().map(u).collect();
    let recipient: Address = body["recipient"].as_str().unwrap().parse().unwrap();
    let relayer: Address = body["relayer"].as_str().unwrap().parse().unwrap();
    let public = zk::Public {
        root: u(&body["root"]),
        nullifier_hash: u(&body["nullifierHash"]),
        signal_hash: zk::signal_hash(recipient, relayer, u(&body["fee"])),
        external_nullifier: pool.external_nullifier,
    };
    (proof.try_into().unwrap(), public)
}

#[tokio::test(flavor = "multi_thread")]
async fn three_deposits_and_a_gasless_recipient_paid_by_a_cli_proof() {
    let (devnet, dir, h) = common::devnet_host([CHAIN]).await;
    let base = h.base.as_str();
    let (status, tree) = common::get(&format!("{base}/api/pool/tree")).await;
    assert_eq!(status, 200, "{tree}");
    assert_eq!(
        (
            &tree["size"],
            &tree["cap"],
            &tree["denomination"],
            &tree["beta"]
        ),
        (
            &json!(0),
            &json!(250),
            &json!(NOTE.to_string()),
            &json!(true)
        )
    );
    let notes: Vec<String> = (0..3).map(|_| new_note(base)).collect();
    for (i, note) in notes.iter().enumerate() {
        let d = deposit(&devnet, base, note, i + 1);
        assert!(d["txHash"].is_string(), "{d}");
    }
    let (_, tree) = common::get(&format!("{base}/api/pool/tree")).await;
    assert_eq!(tree["size"], 3, "{tree}");
    let commitment = Note::parse(&notes[1]).unwrap().commitment();
    assert_eq!(tree["leaves"][1], format!("{commitment:#066x}"));
    let logged = &tree["witnessed"];
    assert!(
        logged["body"]
            .as_str()
            .unwrap()
            .contains(tree["root"].as_str().unwrap()),
        "{tree}"
    );

    // a fresh address, no ETH: the relayer sends and pays the gas
    let recipient = fresh_address();
    assert_eq!(eth(&devnet, recipient).await, U256::ZERO);
    let to = recipient.to_string();
    let body = pool_cli(
        base,
        &["prove", "--to", &to],
        &[("RELAY_POOL_NOTE", &notes[1])],
    );
    let nullifier = body["nullifierHash"].as_str().unwrap().to_string();
    assert!(!spent(&devnet, &nullifier).await);
    let done = pool_cli(
        base,
        &["withdraw", "--to", &to],
        &[("RELAY_POOL_NOTE", &notes[1])],
    );
    assert_eq!(done["state"], "SENT", "{done}");
    assert!(
        spent(&devnet, &nullifier).await,
        "the chain shows the nullifier spent"
    );
    let fee: U256 = tree["fee"].as_str().unwrap().parse().unwrap();
    assert_eq!(eth(&devnet, recipient).await, U256::from(NOTE) - fee);
    let ticket = done["ticket"].as_str().unwrap();
    let shown = pool_cli(base, &["hold", ticket], &[]);
    assert_eq!(
        (&shown["state"], &shown["txHash"]),
        (&json!("SENT"), &done["txHash"])
    );

    // refusals: the host sends nothing, the contract agrees
    let sent_before = relayer_nonce(&devnet).await;
    let again = withdraw(base, &body, &[]).await;
    assert_eq!(
        (again.status, again.body["errorCode"].as_str()),
        (409, Some("POOL_NULLIFIER_SPENT")),
        "{}",
        again.body
    );
    assert_eq!(
        on_chain(&devnet, &body).await.unwrap_err(),
        "NullifierSpent(NullifierSpent)"
    );

    let other = pool_cli(
        base,
        &["prove", "--to", &to],
        &[("RELAY_POOL_NOTE", &notes[2])],
    );
    let mut redirected = other.clone();
    redirected["recipient"] = json!(fresh_address().to_string());
    let r = withdraw(base, &redirected, &[]).await;
    assert_eq!(
        (r.status, r.body["errorCode"].as_str()),
        (422, Some("POOL_PROOF_INVALID")),
        "{}",
        r.body
    );
    assert_eq!(
        on_chain(&devnet, &redirected).await.unwrap_err(),
        "InvalidProof(InvalidProof)"
    );

    // a valid proof against a tree the pool never had (a forged leaf added)
    let pool = pool_of(&devnet);
    let note2 = Note::parse(&notes[2]).unwrap();
    let mut leaves: Vec<U256> = (0..3)
        .map(|i| tree["leaves"][i].as_str().unwrap().parse().unwrap())
        .collect();
    leaves.push(U256::from(12345));
    let payee = zk::Payee {
        recipient,
        relayer: devnet.relayer,
        fee,
    };
    let (proof, public) = zk::prove(&note2, &leaves, payee).unwrap();
    assert!(
        zk::verify(&proof, &public),
        "a valid proof of a forged root"
    );
    let mut forged = other.clone();
    forged["proof"] = json!(proof.iter().map(|p| format!("{p:#x}")).collect::<Vec<_>>());
    forged["root"] = json!(format!("{:#x}", public.root));
    let r = withdraw(base, &forged, &[]).await;
    assert_eq!(
        (r.status, r.body["errorCode"].as_str()),
        (422, Some("POOL_ROOT_UNKNOWN")),
        "{}",
        r.body
    );
    assert_eq!(
        on_chain(&devnet, &forged).await.unwrap_err(),
        "UnknownRoot(UnknownRoot)"
    );

    for (field, value, code) in [
        ("denomination", json!("10000000000000"), "POOL_DENOMINATION"),
        ("fee", json!("0"), "POOL_FEE_MISMATCH"),
        ("recipient", json!("nobody"), "INVALID_FIELD"),
    ] {
        let mut bad = other.clone();
        bad[field] = value;
        let r = withdraw(base, &bad, &[]).await;
        assert_eq!(
            r.body["errorCode"].as_str(),
            Some(code),
            "{field}: {}",
            r.body
        );
        assert!(r.status >= 400 && r.status < 500 && r.body["retryable"] == false);
    }
    assert_eq!(
        relayer_nonce(&devnet).await,
        sent_before,
        "nothing was sent for a refusal"
    );

    // the host's verifier and snarkjs agree, both ways
    let ext = zk::Public {
        external_nullifier: zk::external_nullifier(CHAIN, pool),
        ..public
    };
    let (good_proof, good_public) = parts_of(&other, &ext);
    assert!(zk::verify(&good_proof, &good_public));
    assert!(snarkjs_verifies(dir.path(), &good_proof, &good_public));
    let (bad_proof, bad_public) = parts_of(&redirected, &ext);
    assert!(!zk::verify(&bad_proof, &bad_public));
    assert!(!snarkjs_verifies(dir.path(), &bad_proof, &bad_public));

    // and the untouched note still withdraws
    let r = withdraw(base, &other, &[]).await;
    assert_eq!(
        (r.status, r.body["state"].as_str()),
        (200, Some("SENT")),
        "{}",
        r.body
    );
}

#[test]
fn the_committed_key_is_pses_depth_20_key() {
    let dir = tempfile::tempdir().unwrap();
    let vk = dir.path().join("vk.json");
    std::fs::write(&vk, zk::VERIFYING_KEY).unwrap();
    let vk = vk.to_str().unwrap();
    let answer = relay_fixtures::js_oracle(
        "pool-verify.mjs",
        "@semaphore-protocol/contracts",
        &["ceremony", vk],
    );
    assert_eq!(answer["ok"], true, "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn twenty_identical_withdrawals_at_once_pay_once() {
    let (devnet, _dir, h) = common::devnet_host([CHAIN]).await;
    let base = h.base.clone();
    let notes: Vec<String> = (0..2).map(|_| new_note(&base)).collect();
    for (i, note) in notes.iter().enumerate() {
        deposit(&devnet, &base, note, i + 1);
    }
    for (note, key) in notes.iter().zip([None, Some("pool-twenty")]) {
        let recipient = fresh_address();
        let to = recipient.to_string();
        let body = Arc::new(pool_cli(
            &base,
            &["prove", "--to", &to],
            &[("RELAY_POOL_NOTE", note)],
        ));
        let nonce = relayer_nonce(&devnet).await;
        let answers = futures::future::join_all((0..20).map(|_| {
            let (base, body) = (base.clone(), body.clone());
            async move {
                let headers: Vec<(&str, &str)> =
                    key.iter().map(|k| ("x-idempotency-key", *k)).collect();
                withdraw(&base, &body, &headers).await
            }
        }))
        .await;
        let sent = answers
            .iter()
            .filter(|a| a.status == 200 && a.body["state"] == "SENT")
            .count();
        let tickets: std::collections::BTreeSet<_> = answers
            .iter()
            .filter_map(|a| a.body["ticket"].as_str())
            .collect();
        assert!(answers.iter().all(|a| a.status < 500), "no 5xx");
        assert_eq!(tickets.len(), 1, "one withdrawal: {key:?}");
        assert!(sent >= 1);
        if key.is_none() {
            assert_eq!(sent, 1);
            assert!(answers
                .iter()
                .filter(|a| a.status != 200)
                .all(|a| a.body["errorCode"] == "POOL_NULLIFIER_SPENT"));
        }
        assert_eq!(relayer_nonce(&devnet).await, nonce + 1, "one transaction");
        assert_eq!(
            eth(&devnet, recipient).await,
            U256::from(NOTE - 2_000_000_000_000)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_withdrawal_waits_for_its_time_and_its_ticket_shows_each_state() {
    let devnet = Devnet::start(relay_devnet::DevnetConfig::with_chains([CHAIN]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(relay_types::Clock::now_ms(&relay_types::SystemClock));
    let h = common::serve_at(&devnet, dir.path(), clock.clone(), |c| {
        let hold = |p: &mut relay_pool::PoolConfig| {
            p.hold_min_ms = 60_000;
            p.hold_max_ms = 120_000;
            p.resume_interval_ms = 100;
        };
        c.sections.edit(relay_pool::SECTION, hold).unwrap();
    })
    .await;
    let base = h.base.as_str();
    let note = new_note(base);
    deposit(&devnet, base, &note, 1);
    let recipient = fresh_address();
    let to = recipient.to_string();
    let mut body = pool_cli(base, &["prove", "--to", &to], &[("RELAY_POOL_NOTE", &note)]);
    body["hold"] = json!({ "maxDelayMs": 1_000 });
    let r = withdraw(base, &body, &[]).await;
    assert_eq!(
        (r.status, r.body["errorCode"].as_str()),
        (400, Some("INVALID_FIELD")),
        "below the window: {}",
        r.body
    );
    body["hold"] = json!({});
    let now = relay_types::Clock::now_ms(clock.as_ref());
    let held = withdraw(base, &body, &[]).await;
    assert_eq!(
        (held.status, held.body["state"].as_str()),
        (202, Some("HELD")),
        "{}",
        held.body
    );
    let after = held.body["sendAfterMs"].as_u64().unwrap();
    assert!(
        (now + 60_000..=now + 120_000).contains(&after),
        "{after} in the window"
    );
    let ticket = held.body["ticket"].as_str().unwrap().to_string();
    let hold_url = format!("{base}/api/pool/hold?ticket={ticket}");
    let (_, shown) = common::get(&hold_url).await;
    assert_eq!(shown["state"], "HELD");
    assert_eq!(
        eth(&devnet, recipient).await,
        U256::ZERO,
        "nothing sent yet"
    );
    let again = withdraw(base, &body, &[]).await;
    assert_eq!(
        again.body["errorCode"], "POOL_NULLIFIER_SPENT",
        "held counts as spent here"
    );

    clock.set(after);
    let shown = held_until_sent(&hold_url).await;
    assert!(shown["states"][1]["atMs"].as_u64().unwrap() >= after);
    assert_eq!(
        eth(&devnet, recipient).await,
        U256::from(NOTE - 2_000_000_000_000)
    );
    let (status, unknown) = common::get(&format!("{base}/api/pool/hold?ticket=pt_nope")).await;
    assert_eq!(
        (status, unknown["errorCode"].as_str()),
        (404, Some("POOL_TICKET_UNKNOWN"))
    );
    let (status, missing) = common::get(&format!("{base}/api/pool/hold")).await;
    assert_eq!(
        (status, missing["errorCode"].as_str()),
        (400, Some("INVALID_FIELD"))
    );

    // held, then withdrawn by other means (anyone may submit the proof):
    // when its time comes it fails without a transaction, and the relayer
    // pays nothing for a revert it could foresee
    let note = new_note(base);
    deposit(&devnet, base, &note, 2);
    let elsewhere = fresh_address();
    let to = elsewhere.to_string();
    let mut body = pool_cli(base, &["prove", "--to", &to], &[("RELAY_POOL_NOTE", &note)]);
    body["hold"] = json!({});
    let held = withdraw(base, &body, &[]).await;
    assert_eq!(held.status, 202, "{}", held.body);
    let hold_url = format!(
        "{base}/api/pool/hold?ticket={}",
        held.body["ticket"].as_str().unwrap()
    );
    submit_directly(&devnet, &body).await;
    assert_eq!(
        eth(&devnet, elsewhere).await,
        U256::from(NOTE - 2_000_000_000_000)
    );
    let nonce = relayer_nonce(&devnet).await;
    clock.set(held.body["sendAfterMs"].as_u64().unwrap());
    common::wait_for("the held withdrawal to fail", async || {
        common::get(&hold_url).await.1["state"] == "FAILED"
    })
    .await;
    let (_, shown) = common::get(&hold_url).await;
    assert!(shown["txHash"].is_null(), "{shown}");
    assert!(
        shown["error"]
            .as_str()
            .unwrap()
            .contains("withdrawn already"),
        "{shown}"
    );
    assert_eq!(relayer_nonce(&devnet).await, nonce, "nothing sent");
    assert_eq!(
        eth(&devnet, elsewhere).await,
        U256::from(NOTE - 2_000_000_000_000),
        "paid once"
    );
    let again = withdraw(base, &body, &[]).await;
    assert_eq!(
        again.body["errorCode"], "POOL_NULLIFIER_SPENT",
        "spent on chain"
    );
}

/// Sends `withdraw` with `body`'s proof from anvil account 3 straight to
/// the contract, past the host.
async fn submit_directly(devnet: &Devnet, body: &Value) {
    let u = |v: &Value| v.as_str().unwrap().parse::<U256>().unwrap();
    let a = |v: &Value| v.as_str().unwrap().parse::<Address>().unwrap();
    let proof: Vec<U256> = body["proof"].as_array().unwrap().iter().map(u).collect();
    let url = devnet.rpc_url(CHAIN).unwrap();
    let provider = relay_devnet::deploy::wallet_provider(url, relay_devnet::keys::anvil_signer(3));
    let pool = PrivacyPool::new(pool_of(devnet), &provider);
    let call = pool.withdraw(
        proof.try_into().unwrap(),
        u(&body["root"]),
        u(&body["nullifierHash"]),
        a(&body["recipient"]),
        a(&body["relayer"]),
        u(&body["fee"]),
    );
    let receipt = call.send().await.unwrap().get_receipt().await.unwrap();
    assert!(receipt.status(), "the direct withdrawal mined");
}
