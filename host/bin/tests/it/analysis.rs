//! Proof endpoints (spec §4.3): chain-checked outcomes, evidence bundles
//! verified offline by `relay verify` and by viem, signed refusals.

use alloy::primitives::U256;
use relay_devnet::{keys, Devnet, DevnetConfig};
use serde_json::{json, Value};
use std::{path::Path, time::Duration};

use crate::common::{approve_permit2, execute_to_end, get, permit_body, post, relay_cli, serve};

const SRC: u64 = 8453;
const DST: u64 = 42161;

/// How long the chain may take to show a settled route's payout.
const DECIDED_WITHIN: Duration = Duration::from_secs(60);

/// `node conformance/tools/verify-evidence.mjs` on `file`: passed or not.
fn viem_verifies(file: &Path, relayer: &str) -> bool {
    crate::router::viem_script("verify-evidence.mjs", &[file.as_os_str(), relayer.as_ref()])
}

/// `node conformance/tools/verify-receipts.mjs` on `file`: passed or not.
pub(crate) fn viem_checks_receipts(file: &Path, relayer: &str, address: &str) -> bool {
    crate::router::viem_script(
        "verify-receipts.mjs",
        &[file.as_os_str(), relayer.as_ref(), address.as_ref()],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delivered_route_is_verified_on_chain_and_its_evidence_verifies_offline() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_address(1);
    // The full preflight: deep checks and every rail's place.
    let body = permit_body(&devnet, (SRC, DST), 3_000_000, 501);
    let (code, text) = post(&h.base, "/api/preflight/full", &body, &[]).await;
    let full: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (code, &full["decision"], &full["deep"]),
        (200, &json!("GO"), &json!(true)),
        "{full}"
    );
    assert_eq!(
        full["rails"]["winner"]["rail"], full["expected"]["rail"],
        "{full}"
    );
    assert_eq!(
        full["rails"]["winner"]["estOut"], full["expected"]["deliveredUnits"],
        "{full}"
    );
    let (code, text) = post(
        &h.base,
        "/api/preflight/full",
        &json!({"fromChain": SRC}),
        &[],
    )
    .await;
    assert!((400..500).contains(&code), "{text}");

    let (_, done) = execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let id = done["id"].as_str().unwrap();

    let (code, v) = get(&format!("{}/api/outcome/verify?id={id}", h.base)).await;
    assert_eq!((code, &v["verdict"]), (200, &json!("verified")), "{v}");
    let debit = &v["sourceDebit"];
    assert_eq!(
        debit["from"].as_str().unwrap().to_lowercase(),
        user.to_string().to_lowercase()
    );
    assert_eq!(debit["amount"], "3000000");
    let credit = &v["destinationCredit"];
    assert_eq!(
        credit["to"].as_str().unwrap().to_lowercase(),
        user.to_string().to_lowercase()
    );
    assert_eq!(credit["amount"], done["to"]["estimated"], "{v}");
    assert_eq!(credit["chain"], DST);
    assert!(v["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["receipt"]["blockNumber"].as_u64().is_some()));

    // Every unit withheld, by whom, summing exactly to in − out (out as
    // credited on chain).
    let (code, f) = get(&format!("{}/api/forensics/fee?id={id}", h.base)).await;
    assert_eq!((code, &f["sumsExactly"]), (200, &json!(true)), "{f}");
    assert_eq!(
        (&f["deliveredFrom"], &f["amountOut"]),
        (&json!("chain"), &credit["amount"])
    );
    let sum: i128 = f["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["amount"].as_str().unwrap().parse::<i128>().unwrap())
        .sum();
    let out: i128 = credit["amount"].as_str().unwrap().parse().unwrap();
    assert_eq!(sum, 3_000_000 - out, "{f}");
    let line = |k: &str| {
        f["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["kind"] == k)
            .cloned()
            .unwrap()
    };
    assert_eq!(line("routeFee")["amount"], done["relayFee"], "{f}");
    assert_eq!(line("railFee")["by"], done["bridge"], "{f}");

    // Why: the ranking the route was chosen from, consistent with compare.
    let (code, why) = get(&format!("{}/api/route/why?id={id}", h.base)).await;
    assert_eq!((code, &why["basis"]), (200, &json!("execute")), "{why}");
    assert_eq!(why["winner"]["rail"], done["bridge"], "{why}");
    assert!(why["summary"]
        .as_str()
        .unwrap()
        .contains(done["bridge"].as_str().unwrap()));
    let lane = format!("fromChain={SRC}&toChain={DST}&amount=3000000&fromToken=USDC&toToken=USDC");
    let (_, cmp) = get(&format!("{}/api/route/compare?{lane}", h.base)).await;
    let (code, fresh) = get(&format!("{}/api/route/why?{lane}", h.base)).await;
    assert_eq!((code, &fresh["basis"]), (200, &json!("now")), "{fresh}");
    assert_eq!(fresh["winner"]["rail"], cmp["best"], "{fresh} vs {cmp}");
    let winner_out: i128 = fresh["winner"]["estOut"].as_str().unwrap().parse().unwrap();
    let quotes = cmp["quotes"].as_array().unwrap();
    for b in fresh["beaten"].as_array().unwrap() {
        let c = quotes.iter().find(|q| q["rail"] == b["rail"]).unwrap();
        assert_eq!(b["estOut"], c["estOut"], "{b} vs {c}");
        let theirs: i128 = b["estOut"].as_str().unwrap().parse().unwrap();
        assert_eq!(b["shortBy"], (winner_out - theirs).to_string());
        assert!(theirs <= winner_out);
    }
    let silent = fresh["notAnswering"].as_array().unwrap().len();
    let listed = 1 + fresh["beaten"].as_array().unwrap().len() + silent;
    assert_eq!(listed, quotes.len(), "every rail asked is accounted for");

    // Improve: every figure checks against compare for the same lane.
    let lane_body = json!({"fromChain": SRC, "toChain": DST, "amount": "3000000", "fromToken": "USDC", "toToken": "USDC"});
    let (code, text) = post(&h.base, "/api/route/improve", &lane_body, &[]).await;
    let imp: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(code, 200, "{imp}");
    assert_eq!(imp["baseline"]["rail"], cmp["best"], "{imp}");
    let suggestions = imp["suggestions"].as_array().unwrap();
    let member = suggestions
        .iter()
        .find(|s| s["kind"] == "membership")
        .expect("a membership saving");
    assert!(
        member["figure"].as_str().unwrap().parse::<u128>().unwrap() > 0,
        "{member}"
    );
    for s in suggestions
        .iter()
        .filter(|s| s["kind"] == "amount" && s["what"].as_str().unwrap().contains("best rail"))
    {
        let amount = s["figure"].as_str().unwrap();
        let (_, at) = get(&format!("{}/api/route/compare?fromChain={SRC}&toChain={DST}&amount={amount}&fromToken=USDC&toToken=USDC", h.base)).await;
        assert_eq!(s["rail"], at["best"], "{s} vs {at}");
    }
    let (code, text) = post(&h.base, "/api/route/improve", &json!({"id": id}), &[]).await;
    assert_eq!(code, 200, "{text}");

    // A signed statement of the sender's routes lists this one.
    let (code, st) = get(&format!("{}/api/statement/spend?address={user}", h.base)).await;
    assert_eq!(code, 200, "{st}");
    let listed = st["statement"]["routes"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{st}");
    assert_eq!(listed[0]["id"], id);
    assert_eq!(st["statement"]["totals"][0]["amountIn"], "3000000");
    let message = st["message"].as_str().unwrap();
    let sig: alloy::primitives::Signature = st["signature"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        sig.recover_address_from_msg(message).unwrap(),
        devnet.relayer
    );
    let forged = message.replace("3000000", "3000001");
    assert_ne!(
        sig.recover_address_from_msg(&forged).unwrap(),
        devnet.relayer
    );
    let stranger = "0x000000000000000000000000000000000000bEEF";
    let (_, none) = get(&format!(
        "{}/api/statement/spend?address={stranger}",
        h.base
    ))
    .await;
    assert_eq!(none["statement"]["routes"], json!([]));
    let (code, bad) = get(&format!(
        "{}/api/statement/spend?address=0x12&from=yesterday",
        h.base
    ))
    .await;
    assert_eq!((code, &bad["field"]), (400, &json!("address")), "{bad}");

    // The bundle verifies with `relay verify` and with viem, and not after
    // one byte of it changes.
    let bundle = crate::common::fetch(format!("{}/api/evidence/bundle?id={id}", h.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let file = dir.path().join("bundle.json");
    std::fs::write(&file, &bundle).unwrap();
    let relayer = devnet.relayer.to_string();
    let f = file.to_str().unwrap();
    let (code, out, err) = relay_cli(dir.path(), &["verify", f, "--signer", &relayer]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(
        out.contains("outcome verified") && out.contains("recovers to the sender"),
        "{out}"
    );
    assert!(viem_verifies(&file, &relayer));
    let stranger = "0x000000000000000000000000000000000000dEaD";
    assert_ne!(
        relay_cli(dir.path(), &["verify", f, "--signer", stranger]).0,
        0
    );
    let tampered = bundle.replacen("\"amount\":\"3000000\"", "\"amount\":\"3000001\"", 1);
    assert_ne!(tampered, bundle);
    std::fs::write(&file, &tampered).unwrap();
    let (code, _, err) = relay_cli(dir.path(), &["verify", f]);
    assert_ne!(code, 0);
    assert!(err.contains("FAILED"), "{err}");
    assert!(!viem_verifies(&file, &relayer));

    // The user's settlement receipts: this route, signed by the relayer,
    // verified by viem; not after one figure changes; none for a stranger.
    let (code, receipts) = get(&format!("{}/api/receipts/{user}", h.base)).await;
    assert_eq!(code, 200, "{receipts}");
    let list = receipts["receipts"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{receipts}");
    assert_eq!(list[0]["receipt"]["id"], json!(id));
    assert_eq!(list[0]["receipt"]["amountIn"], "3000000");
    assert_eq!(list[0]["receipt"]["role"], "sender+recipient");
    assert_eq!(receipts["signer"], json!(relayer));
    let rfile = dir.path().join("receipts.json");
    std::fs::write(&rfile, receipts.to_string()).unwrap();
    let me = user.to_string();
    assert!(viem_checks_receipts(&rfile, &relayer, &me));
    let forged =
        receipts
            .to_string()
            .replacen(r#""amountIn":"3000000""#, r#""amountIn":"3000001""#, 1);
    assert_ne!(forged, receipts.to_string());
    std::fs::write(&rfile, forged).unwrap();
    assert!(!viem_checks_receipts(&rfile, &relayer, &me));
    let (_, none) = get(&format!("{}/api/receipts/{stranger}", h.base)).await;
    assert_eq!(none["receipts"], json!([]), "{none}");
    let (code, bad) = get(&format!("{}/api/receipts/0x12", h.base)).await;
    assert_eq!((code, &bad["field"]), (400, &json!("addr")), "{bad}");

    // Tamper with the stored record's destination amount: the chain no
    // longer backs it.
    let store = &h.host_state.store;
    let (mut r, version) = store.get_route(id).await.unwrap().unwrap();
    let credited: U256 = credit["amount"].as_str().unwrap().parse().unwrap();
    r.estimated = relay_plugin_api::Amount(credited + U256::from(1));
    r.min_out = r.estimated;
    store
        .update_route(&r, version, "tampered")
        .await
        .unwrap()
        .unwrap();
    let (_, v) = get(&format!("{}/api/outcome/verify?id={id}", h.base)).await;
    assert_eq!(v["verdict"], "failed", "{v}");

    let (code, v) = get(&format!("{}/api/outcome/verify?id=rt_nope", h.base)).await;
    assert_eq!((code, &v["errorCode"]), (404, &json!("UNKNOWN_ROUTE")));
    let (code, v) = get(&format!("{}/api/evidence/bundle", h.base)).await;
    assert_eq!((code, &v["errorCode"]), (400, &json!("MISSING_FIELD")));
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_refusal_verifies_and_a_forged_one_does_not() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let mut body = permit_body(&devnet, (SRC, DST), 1_000_000, 9);
    body["permit2"]["signature"] = json!(format!("0x{}", "11".repeat(65)));
    let sent = body.to_string();
    let (code, text) = post(&h.base, "/api/route/execute", &body, &[]).await;
    assert!((400..500).contains(&code), "{text}");
    let err: Value = serde_json::from_str(&text).unwrap();
    let refusal = &err["refusal"];
    assert_eq!(refusal["errorCode"], err["errorCode"], "{err}");
    assert_eq!(refusal["status"], code);
    assert_eq!(
        refusal["signer"].as_str().unwrap().to_lowercase(),
        devnet.relayer.to_string().to_lowercase()
    );

    let check = |refusal: Value, request: Option<Value>| {
        let base = h.base.clone();
        async move {
            let mut q = json!({"refusal": refusal});
            if let Some(r) = request {
                q["request"] = r;
            }
            let (code, text) = post(&base, "/api/refusal/verify", &q, &[]).await;
            assert_eq!(code, 200, "{text}");
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let request = json!({"method": "POST", "path": "/api/route/execute", "body": sent});
    let v = check(refusal.clone(), Some(request)).await;
    assert_eq!(
        (&v["genuine"], &v["requestMatches"]),
        (&json!(true), &json!(true)),
        "{v}"
    );
    let other = json!({"method": "POST", "path": "/api/route/execute", "body": "{}"});
    assert_eq!(check(refusal.clone(), Some(other)).await["genuine"], false);

    let mut forged = refusal.clone();
    forged["errorCode"] = json!("RATE_LIMITED");
    let v = check(forged, None).await;
    assert_eq!(v["genuine"], false, "{v}");
    let stranger = relay_chain::signer::RelayerSigner::from_signer(keys::seeded_signer("forger"));
    let fake = relay_analysis::refusal::sign(
        Some(&stranger),
        "INVALID_SIGNATURE",
        400,
        refusal["requestHash"].as_str().unwrap().parse().unwrap(),
        refusal["at"].as_u64().unwrap(),
    )
    .unwrap();
    let v = check(serde_json::to_value(fake).unwrap(), None).await;
    assert_eq!(v["genuine"], false, "{v}");

    // A GET refusal names its path and query.
    let (code, err) = get(&format!("{}/api/route/status?id=rt_unknown", h.base)).await;
    assert_eq!(code, 404);
    let request = json!({"method": "GET", "path": "/api/route/status?id=rt_unknown"});
    let v = check(err["refusal"].clone(), Some(request)).await;
    assert_eq!(v["genuine"], true, "{v}");
    let (code, text) = post(&h.base, "/api/refusal/verify", &json!({}), &[]).await;
    assert_eq!(code, 400, "{text}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verified_same_chain_swap_proves_same_chain_settlement() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let proven = async || {
        let (_, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
        mesh["sameChainSwaps"]["settlementProven"].clone()
    };
    assert_eq!(proven().await, json!(false), "nothing verified yet");
    approve_permit2(&devnet, SRC, 1).await;
    let mut body = permit_body(&devnet, (SRC, SRC), 4_000_000, 511);
    body["toToken"] = json!("WBTC");
    body["rail"] = json!("lifi");
    let (_, done) = execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let id = done["id"].as_str().unwrap();
    // DONE can be answered before the payout's receipt is readable: ask
    // again, as a client would, until the chain decides (undetermined
    // means "not yet"), then it must be verified.
    let mut outcome = Value::Null;
    crate::common::wait_up_to("a decided verdict", DECIDED_WITHIN, async || {
        let (code, o) = get(&format!("{}/api/outcome/verify?id={id}", h.base)).await;
        assert_eq!(code, 200, "{o}");
        outcome = o;
        outcome["verdict"] != "undetermined"
    })
    .await;
    assert_eq!(outcome["verdict"], "verified", "{outcome}");
    assert_eq!(proven().await, json!(true));
    // Kept in the store (shared by replicas, kept across restarts).
    let nodes = h.host_state.store.proven_nodes().await.unwrap();
    assert!(nodes.contains("same-chain"), "{nodes:?}");
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    devnet.stop();
}
