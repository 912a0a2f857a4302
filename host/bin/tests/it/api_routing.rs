//! The read-only routing helpers end to end — a real host on a real anvil
//! devnet with the real float-lane plugin: `POST /api/route/preflight`,
//! `POST /api/route/plan`, `GET`/`POST /api/intent/solve`, `POST
//! /api/agent/do` and `GET /api/routes/recent`. Each is asserted the way a
//! client notices it: the decision and its named blockers, accumulated
//! totals and the binding constraint, a solver plan whose execute body
//! execute accepts, a sentence understood, a feed that never identifies
//! anyone — and nothing signed or moved by any of them.

use crate::common;
use alloy::primitives::{Address, U256};
use common::{approve_permit2, get, serve_with, usdc_balance, Running};
use relay_devnet::{
    contracts::{eip712, permit2_domain, sign_typed},
    keys, Devnet, DevnetConfig,
};
use relay_types::{Clock as _, SystemClock};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const OP: u64 = 10;

/// A host with only the float lane installed, so every winner is known.
async fn float_lane_host(devnet: &Devnet, dir: &std::path::Path) -> Running {
    let only_float = |plugins: &std::path::Path| {
        for e in std::fs::read_dir(plugins).unwrap().flatten() {
            if !e.file_name().to_string_lossy().starts_with("floatlane") {
                std::fs::remove_dir_all(e.path()).unwrap();
            }
        }
    };
    serve_with(devnet, dir, only_float, |_| {}).await
}

/// POSTs `body` to `path`; the status and the JSON answer.
async fn call(base: &str, path: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let (status, text) = common::post(base, path, body, headers).await;
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status}: not JSON: {text}"));
    (status, v)
}

fn codes(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|b| b["code"].as_str().unwrap())
        .collect()
}

fn units(v: &Value) -> u128 {
    v.as_str()
        .unwrap_or_else(|| panic!("not an amount: {v}"))
        .parse()
        .unwrap()
}

fn usdc(dollars: u64) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": (dollars * 1_000_000).to_string()})
}

#[tokio::test(flavor = "multi_thread")]
async fn preflight_says_go_for_a_funded_route_and_names_every_blocker() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_lane_host(&devnet, dir.path()).await;
    let user = keys::anvil_address(1);
    approve_permit2(&devnet, SRC, 1).await;
    let before = usdc_balance(&devnet, SRC, user).await;
    let deep = "/api/route/preflight?deep=1";

    let good = common::permit_body(&devnet, (SRC, DST), 5_000_000, 31);
    let (status, v) = call(&h.base, deep, &good, &[]).await;
    assert_eq!((status, v["decision"].as_str()), (200, Some("GO")), "{v}");
    assert_eq!(v["blockers"], json!([]));
    assert_eq!(v["expected"]["rail"], "floatlane");
    let (_, quote) = call(&h.base, "/api/route/quote", &good, &[]).await;
    assert_eq!(
        v["expected"]["deliveredUnits"], quote["to"]["estimated"],
        "what a quote of the same route delivers"
    );
    assert!(codes(&v["warnings"]).contains(&"NOT_A_MEMBER"), "{v}");

    // Permit2 never approved on DST: the deep read and the simulated pull
    // (execute's own check, run without `deep` too) name it once.
    let unapproved = common::permit_body(&devnet, (DST, SRC), 5_000_000, 32);
    let (_, v) = call(&h.base, deep, &unapproved, &[]).await;
    assert_eq!(v["decision"], "NO_GO");
    assert_eq!(codes(&v["blockers"]), ["PERMIT2_ALLOWANCE_MISSING"], "{v}");
    let (_, shallow) = call(&h.base, "/api/route/preflight", &unapproved, &[]).await;
    assert_eq!(
        codes(&shallow["blockers"]),
        ["PERMIT2_ALLOWANCE_MISSING"],
        "{shallow}"
    );

    // Before signing: the same route with no permit2 yet is checked all the
    // same; the missing signature is a blocker, the deep reads still run.
    let unsigned_body = |from: u64, to: u64| {
        let mut b = common::permit_body(&devnet, (from, to), 5_000_000, 35);
        b.as_object_mut().unwrap().remove("permit2");
        b["fromAddress"] = json!(user.to_string());
        b
    };
    let (status, v) = call(&h.base, deep, &unsigned_body(SRC, DST), &[]).await;
    assert_eq!(
        (status, v["decision"].as_str()),
        (200, Some("NO_GO")),
        "{v}"
    );
    assert_eq!(codes(&v["blockers"]), ["PERMIT2_SIGNATURE_MISSING"], "{v}");
    assert_eq!(v["expected"]["rail"], "floatlane", "{v}");
    let (_, v) = call(&h.base, deep, &unsigned_body(DST, SRC), &[]).await;
    assert_eq!(
        codes(&v["blockers"]),
        ["PERMIT2_SIGNATURE_MISSING", "PERMIT2_ALLOWANCE_MISSING"],
        "{v}"
    );
    let mut nobody = unsigned_body(SRC, DST);
    nobody.as_object_mut().unwrap().remove("fromAddress");
    let (status, v) = call(&h.base, deep, &nobody, &[]).await;
    assert_eq!(
        (status, v["field"].as_str()),
        (400, Some("fromAddress")),
        "{v}"
    );

    // More than the owner holds (1M USDC each); above capNow (25 % of 10M float).
    let rich = common::permit_body(&devnet, (SRC, DST), 2_000_000_000_000, 33);
    let (_, v) = call(&h.base, deep, &rich, &[]).await;
    assert_eq!(codes(&v["blockers"]), ["INSUFFICIENT_BALANCE"], "{v}");
    let huge = common::permit_body(&devnet, (SRC, DST), 3_000_000_000_000, 34);
    let (_, v) = call(&h.base, deep, &huge, &[]).await;
    let blockers = codes(&v["blockers"]);
    assert!(
        blockers.contains(&"AMOUNT_OUT_OF_RANGE") && blockers.contains(&"INSUFFICIENT_BALANCE"),
        "{v}"
    );
    assert!(
        codes(&v["warnings"]).contains(&"ABOVE_LANE_CAPACITY"),
        "{v}"
    );
    assert!(v["expected"].is_null());

    // A signature for another nonce does not verify.
    let mut tampered = good.clone();
    tampered["permit2"]["nonce"] = json!("99");
    let (_, v) = call(&h.base, "/api/route/preflight", &tampered, &[]).await;
    assert_eq!(codes(&v["blockers"]), ["PERMIT2_INVALID"], "{v}");

    // An unroutable lane is a 200 NO_GO naming it, with a fix.
    let wbtc = json!({"fromChain": SRC, "toChain": DST, "fromToken": "WBTC", "amount": "100000"});
    let (status, v) = call(&h.base, "/api/route/preflight", &wbtc, &[]).await;
    assert_eq!(
        (status, v["decision"].as_str()),
        (200, Some("NO_GO")),
        "{v}"
    );
    assert_eq!(codes(&v["blockers"]), ["UNROUTABLE_LANE"]);
    assert!(!v["blockers"][0]["fix"].as_str().unwrap().is_empty());
    assert!(v["expected"].is_null());

    // Bad input is the very typed 4xx execute gives.
    let mut bad = good.clone();
    bad["amount"] = json!("1.5");
    let (p_status, p) = call(&h.base, "/api/route/preflight", &bad, &[]).await;
    let (e_status, e) = call(&h.base, "/api/route/execute", &bad, &[]).await;
    assert_eq!(
        (p_status, &p["errorCode"], &p["field"]),
        (e_status, &e["errorCode"], &e["field"])
    );
    assert_eq!((p_status, p["field"].as_str()), (400, Some("amount")));
    let (status, v) = call(&h.base, "/api/route/preflight?deep=yes", &good, &[]).await;
    assert_eq!((status, v["field"].as_str()), (400, Some("deep")));

    assert_eq!(
        usdc_balance(&devnet, SRC, user).await,
        before,
        "preflight moves nothing"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_accumulates_steps_and_reports_the_binding_constraint() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_lane_host(&devnet, dir.path()).await;
    let mut back = usdc(3);
    back["fromChain"] = json!(DST);
    back["toChain"] = json!(SRC);
    let steps = json!([usdc(5), back]);

    let (status, v) = call(&h.base, "/api/route/plan", &json!({"steps": steps}), &[]).await;
    assert_eq!((status, v["feasible"].as_bool()), (200, Some(true)), "{v}");
    let priced = v["steps"].as_array().unwrap();
    assert_eq!(priced.len(), 2);
    let secs: u64 = priced
        .iter()
        .map(|s| s["durationSec"].as_u64().unwrap())
        .sum();
    let fees: u128 = priced.iter().map(|s| units(&s["feeUnits"])).sum();
    assert_eq!(v["totals"]["durationSec"].as_u64(), Some(secs));
    assert_eq!(units(&v["totals"]["fees"]), fees);
    for (s, amount) in priced.iter().zip([5_000_000u128, 3_000_000]) {
        assert_eq!(s["rail"], "floatlane");
        assert_eq!(
            units(&s["feeUnits"]) + units(&s["estOut"]),
            amount,
            "same asset: fees are what does not arrive"
        );
    }

    let tight = json!({"steps": steps, "constraints": {"maxTotalSeconds": secs - 1}});
    let (status, v) = call(&h.base, "/api/route/plan", &tight, &[]).await;
    assert_eq!((status, v["feasible"].as_bool()), (200, Some(false)), "{v}");
    let b = &v["bindingConstraint"];
    assert_eq!(b["constraint"], "maxTotalSeconds");
    assert_eq!(
        (b["limit"].as_u64(), b["actual"].as_u64()),
        (Some(secs - 1), Some(secs))
    );
    assert!(b["why"].is_string());
    let fixes = v["whatWouldMakeThisWork"].as_array().unwrap();
    assert!(
        fixes
            .iter()
            .any(|f| f.as_str().unwrap().contains(&format!("at least {secs}"))),
        "{v}"
    );

    // Evaluation stops at the first unroutable step.
    let wbtc = json!({"fromChain": SRC, "toChain": DST, "fromToken": "WBTC", "amount": "100000"});
    let stuck = json!({"steps": [usdc(5), wbtc, usdc(7)]});
    let (_, v) = call(&h.base, "/api/route/plan", &stuck, &[]).await;
    assert_eq!(v["feasible"], false);
    assert_eq!(
        (
            v["bindingConstraint"]["constraint"].as_str(),
            v["bindingConstraint"]["step"].as_u64()
        ),
        (Some("routable"), Some(1))
    );
    assert_eq!(v["steps"].as_array().unwrap().len(), 1, "{v}");

    let mut broken = usdc(5);
    broken["amount"] = json!("five");
    let (status, v) = call(
        &h.base,
        "/api/route/plan",
        &json!({"steps": [usdc(5), broken]}),
        &[],
    )
    .await;
    assert_eq!(
        (status, v["field"].as_str()),
        (400, Some("steps[1].amount")),
        "{v}"
    );
    let eleven: Vec<Value> = (0..11).map(|_| usdc(5)).collect();
    let (status, v) = call(&h.base, "/api/route/plan", &json!({"steps": eleven}), &[]).await;
    assert_eq!((status, v["field"].as_str()), (400, Some("steps")));
    devnet.stop();
}

/// Fills the Permit2 fields of a solver/agent execute body: anvil account 1
/// signs for `spender` on `chain`.
fn sign_body(body: &mut Value, chain: u64, spender: &str, nonce: u64) {
    let p = &body["permit2"];
    let token: Address = p["permitted"]["token"].as_str().unwrap().parse().unwrap();
    let amount: U256 = p["permitted"]["amount"].as_str().unwrap().parse().unwrap();
    let deadline = SystemClock.now_ms() / 1000 + 600;
    let msg = eip712::PermitTransferFrom {
        permitted: eip712::TokenPermissions { token, amount },
        spender: spender.parse().unwrap(),
        nonce: U256::from(nonce),
        deadline: U256::from(deadline),
    };
    let sig = sign_typed(&keys::anvil_signer(1), &msg, &permit2_domain(chain));
    body["permit2"]["nonce"] = json!(nonce.to_string());
    body["permit2"]["deadline"] = json!(deadline.to_string());
    body["permit2"]["signature"] = json!(format!("0x{}", hex::encode(sig)));
}

#[tokio::test(flavor = "multi_thread")]
async fn solve_picks_the_best_source_and_its_execute_body_is_accepted() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, OP, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_lane_host(&devnet, dir.path()).await;
    let user = keys::anvil_address(1);
    let from = json!([
        {"chain": SRC, "token": "USDC", "amount": "5000000"},
        {"chain": "optimism", "token": "USDC", "amount": "20000000"},
        {"chain": SRC, "token": "WBTC", "amount": "100000"},
    ]);
    let req = json!({"toChain": DST, "toToken": "USDC", "from": from, "fromAddress": user});
    let (status, v) = call(&h.base, "/api/intent/solve", &req, &[]).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (v["goal"].as_str(), v["sourcesConsidered"].as_u64()),
        (Some("max-output"), Some(3))
    );
    let plan = &v["plan"];
    assert_eq!(
        (plan["from"]["chain"].as_u64(), plan["rail"].as_str()),
        (Some(OP), Some("floatlane")),
        "{v}"
    );
    let alts = v["alternatives"].as_array().unwrap();
    assert_eq!(alts.len(), 1);
    assert!(units(&plan["estOut"]) > units(&alts[0]["estOut"]));
    assert!(plan["qualityScore"].as_u64().unwrap() >= alts[0]["qualityScore"].as_u64().unwrap());
    assert_eq!(v["skipped"].as_array().unwrap().len(), 1);
    assert_eq!(v["skipped"][0]["errorCode"], "UNROUTABLE_LANE");

    // The plan's execute body, signed as its sign request says, is accepted by execute.
    let sign = &plan["sign"];
    assert_eq!(sign["spender"], keys::relayer().address().to_string());
    let mut body = plan["execute"].clone();
    assert_eq!(body["mode"], "permit2");
    sign_body(
        &mut body,
        sign["chainId"].as_u64().unwrap(),
        sign["spender"].as_str().unwrap(),
        41,
    );
    body["dryRun"] = json!(true);
    let (status, r) = call(&h.base, "/api/route/execute", &body, &[]).await;
    assert_eq!(
        (status, r["status"].as_str(), r["bridge"].as_str()),
        (200, Some("DRY"), Some("floatlane")),
        "{r}"
    );

    // GET: `from` as url-encoded JSON, a shared amount; the other goals.
    let two = json!([{"chain": SRC, "token": "USDC"}, {"chain": OP, "token": "USDC"}]).to_string();
    let url = |goal: &str| {
        reqwest::Url::parse_with_params(
            &format!("{}/api/intent/solve", h.base),
            &[
                ("toChain", "42161"),
                ("toToken", "USDC"),
                ("amount", "5000000"),
                ("from", &two),
                ("goal", goal),
            ],
        )
        .unwrap()
    };
    for goal in ["max-output", "cheapest", "fastest"] {
        let (status, v) = get(url(goal).as_str()).await;
        assert_eq!((status, v["goal"].as_str()), (200, Some(goal)), "{v}");
        assert_eq!(v["alternatives"].as_array().unwrap().len(), 1, "{v}");
        assert_eq!(
            v["plan"]["execute"]["dryRun"], true,
            "no fromAddress: a rehearsal body"
        );
    }
    for bad in [
        json!([]),
        json!((0..11)
            .map(|_| json!({"chain": SRC, "token": "USDC"}))
            .collect::<Vec<_>>()),
    ] {
        let (status, v) = call(
            &h.base,
            "/api/intent/solve",
            &json!({"toChain": DST, "toToken": "USDC", "amount": "1", "from": bad}),
            &[],
        )
        .await;
        assert_eq!(
            (status, v["errorCode"].as_str(), v["field"].as_str()),
            (400, Some("INVALID_FIELD"), Some("from")),
            "{v}"
        );
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_do_understands_a_sentence_and_the_recent_feed_never_identifies_anyone() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_lane_host(&devnet, dir.path()).await;
    let user = keys::anvil_address(1);
    let sentence = format!("Send 5 USDC from base to arbitrum to {user}");

    let (status, v) = call(
        &h.base,
        "/api/agent/do",
        &json!({"intent": sentence, "fromAddress": user}),
        &[],
    )
    .await;
    assert_eq!(
        (status, v["status"].as_str(), v["rail"].as_str()),
        (200, Some("sign"), Some("floatlane")),
        "{v}"
    );
    let s = &v["signRequest"];
    assert_eq!(
        (s["chainId"].as_u64(), s["amount"].as_str()),
        (Some(SRC), Some("5000000"))
    );
    assert_eq!(s["spender"], keys::relayer().address().to_string());
    assert_eq!(
        s["tokenAddress"],
        devnet.chain(SRC).unwrap().deployment.usdc.to_string()
    );
    assert_eq!(
        (s["submitTo"].as_str(), s["submitBody"]["mode"].as_str()),
        (Some("/api/route/execute"), Some("permit2"))
    );
    assert_eq!(s["submitBody"]["toAddress"], user.to_string());
    assert!(units(&v["receives"]["units"]) < 5_000_000 && v["durationSec"].as_u64().is_some());

    let (_, v) = call(
        &h.base,
        "/api/agent/do",
        &json!({"intent": "please bridge 2.5 usdc from base to arb"}),
        &[],
    )
    .await;
    assert_eq!(
        (
            v["status"].as_str(),
            v["understood"]["amountHuman"].as_str()
        ),
        (Some("quoted"), Some("2.5")),
        "{v}"
    );
    assert!(v["signRequest"].is_null());
    let structured = json!({"fromChain": "base", "toChain": DST, "token": "USDC", "amountHuman": "1.5", "toAddress": user});
    let (_, v) = call(&h.base, "/api/agent/do", &structured, &[]).await;
    assert!(units(&v["receives"]["units"]) < 1_500_000, "{v}");
    for bad in ["make me rich", "send 5 DOGE from base to arbitrum"] {
        let (status, v) = call(&h.base, "/api/agent/do", &json!({"intent": bad}), &[]).await;
        assert_eq!(
            (status, v["field"].as_str()),
            (400, Some("intent")),
            "{bad}: {v}"
        );
    }
    let (status, v) = call(
        &h.base,
        "/api/agent/do",
        &json!({"intent": sentence}),
        &[("x-relay-sandbox", "1")],
    )
    .await;
    assert_eq!((status, v["status"].as_str()), (200, Some("done")), "{v}");
    assert!(v["receipt"]["id"].as_str().unwrap().starts_with("sbx_"));

    // A live route in the store; the sandbox route above is never listed.
    let live = common::sample_route("rt_feed0000000001");
    common::store_idle_route(&h.host_state.store, &live).await;
    let (status, text) = {
        let r = crate::common::fetch(format!("{}/api/routes/recent", h.base))
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    };
    assert_eq!(status, 200, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["count"], 1, "{v}");
    let r = &v["routes"][0];
    assert_eq!(
        (r["lane"].as_str(), r["asset"].as_str(), r["rail"].as_str()),
        (Some("8453→42161"), Some("USDC"), Some("floatlane"))
    );
    assert_eq!(
        (
            r["size"].as_str(),
            r["when"].as_str(),
            r["sandbox"].as_bool()
        ),
        (Some("<10"), Some("just now"), Some(false))
    );
    assert!(
        ["BRIDGING", "DONE", "FAILED"].contains(&r["status"].as_str().unwrap()),
        "{r}"
    );
    for secret in ["0x", "rt_", "sbx_", "5000000", "4987500", &live.sender] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    let (status, v) = get(&format!("{}/api/routes/recent?limit=abc", h.base)).await;
    assert_eq!((status, v["field"].as_str()), (400, Some("limit")));
    let (status, v) = get(&format!("{}/api/routes/recent?limit=1000", h.base)).await;
    assert_eq!((status, v["limit"].as_u64()), (200, Some(100)));
    devnet.stop();
}
