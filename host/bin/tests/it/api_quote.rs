//! `POST /api/route/quote`, `GET`/`POST /api/route/compare`, the error
//! catalogue, rate limits and CORS — a real host on a real devnet with real
//! plugins. Amounts are asserted exactly against independent reads of the
//! chain (gas price) and the rail's own answer.

use crate::common;
use std::{path::Path, time::Instant};

use alloy::{
    primitives::{keccak256, Address, Signature, B256, U256},
    providers::Provider,
};
use common::{get, send, serve_with, Answer, Running};
use relay_config::HostConfig;
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_registry::{OperatorStateStore, PluginKind};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u128 = 5_000_000;
/// The native price and Permit2 gas these tests configure, so the expected
/// gas charge is computed from known inputs.
const ETH_USD_E6: u128 = 2_000_000_000;
const PULL_GAS: u128 = 100_000;

/// Keeps only the plugins of `ids` (the packaged set grows as rails land).
fn keep_only(ids: &'static [&'static str]) -> impl FnOnce(&Path) {
    move |dir| {
        let found = relay_registry::discover(dir);
        let paths = found
            .plugins
            .iter()
            .filter(|p| !ids.contains(&p.manifest.plugin.id.as_str()))
            .map(|p| p.manifest_path.clone())
            .chain(found.rejected.iter().map(|r| r.manifest_path.clone()));
        for manifest in paths {
            std::fs::remove_dir_all(manifest.parent().unwrap()).unwrap();
        }
    }
}

/// Installs a wasm fixture as a plugin under `dir/plugins/<name>`.
async fn install_wasm(dir: &Path, name: &str, artifact: std::path::PathBuf) {
    let plugin = dir.join("plugins").join(name);
    std::fs::create_dir_all(&plugin).unwrap();
    let dest = plugin.join(format!("{name}.wasm"));
    std::fs::copy(artifact, &dest).unwrap();
    relay_runtime::package::write_manifest(&dest, PluginKind::Wasm)
        .await
        .unwrap();
}

fn priced(c: &mut HostConfig) {
    // Configured prices, not the devnet's feeds (tests/it/pricefeeds.rs).
    c.pricefeeds.clear();
    c.quote
        .native_usd_e6
        .insert(SRC.to_string(), ETH_USD_E6 as u64);
    c.quote.permit2_pull_gas = PULL_GAS as u64;
}

async fn float_only(devnet: &Devnet, dir: &Path, tweak: impl FnOnce(&mut HostConfig)) -> Running {
    serve_with(devnet, dir, keep_only(&["floatlane"]), |c| {
        priced(c);
        tweak(c);
    })
    .await
}

fn usdc_body(from: Address) -> Value {
    json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": AMOUNT.to_string(), "fromAddress": from})
}

async fn quote(base: &str, body: &Value) -> Answer {
    send(
        crate::common::http()
            .post(format!("{base}/api/route/quote"))
            .json(body),
    )
    .await
}

fn amount(v: &Value) -> u128 {
    v.as_str()
        .unwrap_or_else(|| panic!("not an amount: {v}"))
        .parse()
        .unwrap()
}

/// The gas charge the spec's rule gives: Permit2 pull gas at the source
/// gas price, valued at the configured ETH price, plus `markup_bps`, in
/// USDC (6 decimals) rounded up.
async fn expected_gas(devnet: &Devnet, markup_bps: u128) -> u128 {
    let gp = devnet
        .chain(SRC)
        .unwrap()
        .provider()
        .get_gas_price()
        .await
        .unwrap();
    let usdc_unit = U256::from(1_000_000u64); // 10^6 smallest units, 1 USD each
    let num = U256::from(gp)
        * U256::from(PULL_GAS)
        * U256::from(ETH_USD_E6)
        * U256::from(10_000 + markup_bps)
        * usdc_unit;
    let den = U256::from(10u64).pow(U256::from(18)) * U256::from(10_000u64) * usdc_unit;
    u128::try_from(num.div_ceil(den)).unwrap()
}

/// Rebuilds the attestation text from its terms (the module docs' format),
/// folds its Merkle proof into the root and recovers the signer of the root
/// (`conformance/tools/verify-attestations.mjs` checks the same with viem
/// and OpenZeppelin's merkle-tree).
fn attestation_signer(a: &Value) -> Address {
    let t = &a["terms"];
    let s = |k: &str| match &t[k] {
        Value::String(s) => s.to_ascii_lowercase(),
        Value::Null => String::new(),
        v => v.to_string(),
    };
    let text = format!(
        "relay-quote-v2\nfromChain={}\ntoChain={}\nfromToken={}\ntoToken={}\namount={}\nrail={}\nlane={}\nestimated={}\nminOut={}\nrecipient={}\nmember={}\nexpiresAt={}",
        s("fromChain"), s("toChain"), s("fromToken"), s("toToken"), s("amount"), s("rail"),
        s("lane"), s("estimated"), s("minOut"), s("recipient"), s("member"), s("expiresAt")
    );
    let hash = keccak256(text.as_bytes());
    assert_eq!(
        a["hash"],
        json!(hash),
        "the hash covers the canonical terms"
    );
    let proof: Vec<B256> = serde_json::from_value(a["proof"].clone()).unwrap();
    let root = relay_engine::attest::merkle::root(hash, &proof);
    assert_eq!(a["root"], json!(root), "the proof leads to the signed root");
    let sig: Signature = a["signature"].as_str().unwrap().parse().unwrap();
    sig.recover_address_from_msg(root.as_slice()).unwrap()
}

/// Bursts of twelve concurrent quotes, each for its own amount, until one
/// signature has covered several: every attestation of the bursts.
async fn batched_attestations(base: &str, user: Address) -> Vec<Value> {
    let mut all = Vec::new();
    for burst in 0..10u128 {
        let answers = futures::future::join_all((0..12u128).map(|i| {
            let mut body = usdc_body(user);
            body["amount"] = json!((AMOUNT + burst * 100 + i).to_string());
            async move { quote(base, &body).await }
        }))
        .await;
        for q in answers {
            assert_eq!(q.status, 200, "{}", q.body);
            all.push(q.body["attestation"].clone());
        }
        if all.iter().any(|a| a["proof"] != json!([])) {
            return all;
        }
    }
    panic!("ten bursts of twelve concurrent quotes were each signed one by one");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_usdc_quote_is_won_by_the_float_lane_net_of_every_fee() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_only(&devnet, dir.path(), |_| {}).await;
    let user = keys::anvil_address(4);
    let q = quote(&h.base, &usdc_body(user)).await;
    assert_eq!(q.status, 200, "{}", q.body);
    let v = &q.body;
    assert_eq!(
        (v["bridge"].as_str(), v["gasless"].as_bool()),
        (Some("floatlane"), Some(true))
    );
    assert_eq!(v["via"][0], "floatlane");
    assert_eq!(v["bestOf"], 1);
    assert_eq!(v["compared"].as_array().unwrap().len(), 1);
    let c = &v["compared"][0];
    assert_eq!(
        (c["ok"].as_bool(), c["best"].as_bool()),
        (Some(true), Some(true))
    );

    // The rail's own answer: the amount less the float lane's fee.
    let rail_out = amount(&c["amountOut"]);
    assert_eq!(rail_out, AMOUNT - amount(&v["floatlane"]["fee"]));
    // Route fee 25 bps; gas at cost + 25 % in USDC.
    assert_eq!(
        (v["relayRouteFeeBps"].as_u64(), amount(&v["relayRouteFee"])),
        (Some(25), 12_500)
    );
    let gas = expected_gas(&devnet, 2_500).await;
    assert_eq!(amount(&v["fees"]["gas"]["amount"]), gas);
    assert_eq!(
        amount(&v["to"]["estimated"]),
        rail_out - 12_500 - gas,
        "{v}"
    );
    assert_eq!(amount(&v["to"]["min"]), rail_out - 12_500 - gas);
    assert_eq!(v["to"]["recipient"], user.to_checksum(None));
    assert_eq!(
        (v["from"]["amount"].as_str(), v["to"]["token"].as_str()),
        (Some("5000000"), Some("USDC"))
    );
    // USD beside the amounts (USDC at par by the price book), cents rounded down
    let cents = |units: u128| format!("{}.{:02}", units / 1_000_000, units % 1_000_000 / 10_000);
    assert_eq!(v["from"]["amountUsd"], "5.00");
    assert_eq!(
        v["to"]["estimatedUsd"],
        cents(amount(&v["to"]["estimated"])).as_str(),
        "{v}"
    );
    assert_eq!(v["to"]["minUsd"], cents(amount(&v["to"]["min"])).as_str());

    // The float lane's own block, and no quote-only flag on an executable lane.
    assert_eq!(v["floatlane"]["vip"]["member"], false);
    assert!(v["floatlane"]["pricing"]["mode"].is_string() && v["floatlane"]["capNow"].is_string());
    assert!(v.get("quoteOnly").is_none());

    // Signed by the relayer over the quoted terms.
    let a = &v["attestation"];
    assert_eq!(a["terms"]["estimated"], v["to"]["estimated"]);
    assert_eq!(attestation_signer(a), keys::relayer().address());

    // Quotes answered together share one signature over their Merkle root,
    // and each verifies on its own — here, and with viem and
    // OpenZeppelin's merkle-tree; an altered proof does not.
    let mut signed = batched_attestations(&h.base, user).await;
    for a in &signed {
        assert_eq!(attestation_signer(a), keys::relayer().address());
    }
    let relayer = keys::relayer().address().to_string();
    let file = dir.path().join("attestations.json");
    std::fs::write(&file, serde_json::to_vec(&signed).unwrap()).unwrap();
    let verify = |file: &Path| {
        crate::router::viem_script(
            "verify-attestations.mjs",
            &[file.as_os_str(), relayer.as_ref()],
        )
    };
    assert!(verify(&file));
    let batched = signed.iter_mut().find(|a| a["proof"] != json!([])).unwrap();
    batched["proof"][0] = json!(format!("0x{}", "11".repeat(32)));
    std::fs::write(&file, serde_json::to_vec(&signed).unwrap()).unwrap();
    assert!(!verify(&file));

    // With executeReady switched off the lane leaves quotes at once: here
    // it was the only rail left, so the lane is unroutable.
    h.host_state
        .store
        .set_lane_execute_ready("floatlane", "evm->evm", false)
        .await
        .unwrap();
    let q = quote(&h.base, &usdc_body(user)).await;
    assert_eq!(q.body["errorCode"], "UNROUTABLE_LANE", "{}", q.body);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_pays_15_bps_and_a_10_percent_gas_markup() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let member = keys::anvil_address(3);
    devnet.mint_membership(SRC, member).await.unwrap();
    let h = float_only(&devnet, dir.path(), |_| {}).await;

    let m = quote(&h.base, &usdc_body(member)).await.body;
    let other = quote(&h.base, &usdc_body(keys::anvil_address(5)))
        .await
        .body;
    assert_eq!(
        (m["member"].as_bool(), m["relayRouteFeeBps"].as_u64()),
        (Some(true), Some(15)),
        "{m}"
    );
    assert_eq!(amount(&m["relayRouteFee"]), 7_500);
    assert_eq!(m["fees"]["gas"]["markupBps"], 1_000);
    assert_eq!(m["floatlane"]["vip"]["member"], true);
    let gas = expected_gas(&devnet, 1_000).await;
    let rail_out = amount(&m["compared"][0]["amountOut"]);
    assert_eq!(amount(&m["to"]["estimated"]), rail_out - 7_500 - gas);
    assert_eq!(m["attestation"]["terms"]["member"], true);

    assert_eq!(
        (
            other["member"].as_bool(),
            other["relayRouteFeeBps"].as_u64()
        ),
        (Some(false), Some(25))
    );
    assert!(amount(&m["to"]["estimated"]) > amount(&other["to"]["estimated"]));
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_applicable_rail_is_compared_and_a_silent_one_is_not_ranked_as_beaten() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let template = relay_fixtures::wasm_plugin("relay-rail-template-wasm", &[]);
    install_wasm(dir.path(), "template", template).await;
    let hang = relay_fixtures::wasm_plugin("relay-broken-wasm", &["hang"]);
    install_wasm(dir.path(), "broken", hang).await;
    let upstream = common::template_upstream().await;
    let h = serve_with(
        &devnet,
        dir.path(),
        keep_only(&["floatlane", "template", "broken"]),
        |c| {
            priced(c);
            common::point_template_at(c, &upstream);
            c.quote.deadline_ms = 1_500;
            c.runtime.call_timeout_ms = 6_000;
        },
    )
    .await;

    let started = Instant::now();
    let q = quote(&h.base, &usdc_body(keys::anvil_address(4))).await;
    assert!(
        started.elapsed().as_millis() < 5_000,
        "one deadline for the whole fan-out"
    );
    assert_eq!(q.status, 200, "{}", q.body);
    let compared = q.body["compared"].as_array().unwrap();
    let mut rails: Vec<&str> = compared
        .iter()
        .map(|c| c["rail"].as_str().unwrap())
        .collect();
    rails.sort();
    assert_eq!(rails, ["broken", "floatlane", "template"]);

    // The silent rail is reported as not answering, after every rail that answered.
    let last = compared.last().unwrap();
    assert_eq!(
        (last["rail"].as_str(), last["ok"].as_bool()),
        (Some("broken"), Some(false))
    );
    assert_eq!(last["errorKind"], "DEADLINE");
    assert!(last["estOut"].is_null() && last.get("rank").is_none());

    // Ranked by net output; the winner is the first.
    let answered: Vec<u128> = compared[..2].iter().map(|c| amount(&c["estOut"])).collect();
    assert!(answered[0] >= answered[1], "{answered:?}");
    assert_eq!(q.body["bridge"], compared[0]["rail"]);
    assert_eq!(amount(&q.body["to"]["estimated"]), answered[0]);
    assert_eq!(q.body["bestOf"], 2);
    assert!(
        q.body["floatlane"].is_object(),
        "the float lane answered, so its block is shown"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_typed_4xx_naming_the_field_and_unroutable_lanes_404() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_only(&devnet, dir.path(), |_| {}).await;
    let ok = usdc_body(keys::anvil_address(4));
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    let cases: Vec<(Value, u16, &str, Option<&str>)> = vec![
        (
            with("fromChain", Value::Null),
            400,
            "MISSING_FIELD",
            Some("fromChain"),
        ),
        (
            with("toChain", json!("dogechain")),
            400,
            "UNKNOWN_CHAIN",
            Some("toChain"),
        ),
        (
            with("toChain", json!(10)),
            400,
            "UNKNOWN_CHAIN",
            Some("toChain"),
        ),
        (
            with("amount", json!("1.5")),
            400,
            "INVALID_AMOUNT",
            Some("amount"),
        ),
        (
            with("amount", json!("0")),
            400,
            "INVALID_AMOUNT",
            Some("amount"),
        ),
        (
            with("amount", json!(5_000_000)),
            400,
            "INVALID_AMOUNT",
            Some("amount"),
        ),
        (
            with("amount", json!("1".repeat(80))),
            400,
            "INVALID_AMOUNT",
            Some("amount"),
        ),
        (
            with("fromToken", json!("DOGE")),
            400,
            "UNKNOWN_TOKEN",
            Some("fromToken"),
        ),
        (
            with("toToken", json!("0x1234")),
            400,
            "INVALID_ADDRESS",
            Some("toToken"),
        ),
        (
            with("toAddress", json!("0x1234")),
            400,
            "INVALID_ADDRESS",
            Some("toAddress"),
        ),
        (
            with(
                "fromAddress",
                json!("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
            ),
            400,
            "INVALID_ADDRESS",
            Some("fromAddress"),
        ),
        (
            with("slippage", json!(2)),
            400,
            "INVALID_FIELD",
            Some("slippage"),
        ),
        (
            with("toChain", json!(SRC)),
            400,
            "SAME_CHAIN_SAME_TOKEN",
            None,
        ),
        (
            with("fromToken", json!("WBTC")),
            404,
            "UNROUTABLE_LANE",
            None,
        ),
        (json!([1, 2]), 400, "MALFORMED_BODY", None),
    ];
    for (body, status, code, field) in cases {
        let a = quote(&h.base, &body).await;
        assert_eq!(
            (a.status, a.body["errorCode"].as_str()),
            (status, Some(code)),
            "{body} -> {}",
            a.body
        );
        assert_eq!(a.body["field"].as_str(), field, "{body} -> {}", a.body);
        assert_eq!(a.body["retryable"], false);
        assert!(
            a.body["error"].is_string() && a.body["suggestedAction"].is_string(),
            "{}",
            a.body
        );
    }
    let raw = |body: Vec<u8>| {
        crate::common::http()
            .post(format!("{}/api/route/quote", h.base))
            .header("content-type", "application/json")
            .body(body)
    };
    for (body, status, code) in [
        (b"{not json".to_vec(), 400, "MALFORMED_BODY"),
        (Vec::new(), 400, "MALFORMED_BODY"),
        (vec![b' '; 70 * 1024], 413, "BODY_TOO_LARGE"),
    ] {
        let a = send(raw(body)).await;
        assert_eq!(
            (a.status, a.body["errorCode"].as_str()),
            (status, Some(code)),
            "{}",
            a.body
        );
    }
    // The source token by its query alias.
    let mut aliased = ok.clone();
    aliased.as_object_mut().unwrap().remove("fromToken");
    let a = send(
        crate::common::http()
            .post(format!("{}/api/route/quote?token=USDC", h.base))
            .json(&aliased),
    )
    .await;
    assert_eq!(
        (a.status, a.body["from"]["token"].as_str()),
        (200, Some("USDC")),
        "{}",
        a.body
    );
    // Wrong method.
    let (status, body) = get(&format!("{}/api/route/quote", h.base)).await;
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    assert!(body["error"].is_string());
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_41st_quote_in_a_minute_is_rate_limited_with_headers() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_only(&devnet, dir.path(), |c| c.limits.enabled = true).await;
    let url = format!("{}/api/route/quote", h.base);
    // Every request counts, a refused one too: forty bodies that fail
    // validation answer at once, so the whole burst lands well inside the
    // 1.5 s in which the limit (40 a minute) frees one request.
    let client = crate::common::http();
    let cheap = || client.post(&url).json(&json!({}));
    for i in 0..40u32 {
        let a = send(cheap()).await;
        assert_eq!(a.status, 400, "quote {i}: {}", a.body);
        assert_eq!(a.header("x-ratelimit-limit"), Some("40"));
        assert_eq!(
            a.header("x-ratelimit-remaining"),
            Some((39 - i).to_string().as_str())
        );
    }
    let refused = send(cheap()).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.body["error"], "rate limited");
    assert_eq!(refused.body["errorCode"], "RATE_LIMITED");
    assert_eq!(refused.body["retryable"], true);
    assert!(refused.body["retryAfterMs"]
        .as_u64()
        .is_some_and(|ms| ms > 0 && ms <= 1_500));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    let reset: u64 = refused
        .header("x-ratelimit-reset")
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&reset));
    assert!(refused.header("retry-after").is_some());

    // A spoofed X-Forwarded-For from an untrusted peer changes nothing,
    // nor does an x-relay-key the host never issued.
    let spoofed = send(cheap().header("x-forwarded-for", "203.0.113.9")).await;
    assert_eq!(spoofed.status, 429);
    let keyed = send(cheap().header("x-relay-key", "ak_quote_test_1")).await;
    assert_eq!(keyed.status, 429, "{}", keyed.body);
    assert_eq!(keyed.header("x-relay-key-status"), Some("unrecognised"));

    // Another IP has its own limit, and a real quote carries the headers;
    // other endpoints have their own limits.
    let elsewhere = reqwest::Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    let body = usdc_body(keys::anvil_address(4));
    let a = send(elsewhere.post(&url).json(&body)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        (
            a.header("x-ratelimit-limit"),
            a.header("x-ratelimit-remaining")
        ),
        (Some("40"), Some("39"))
    );
    let compare_url = format!(
        "{}/api/route/compare?fromChain={SRC}&toChain={DST}&amount={AMOUNT}&fromToken=USDC",
        h.base
    );
    let cmp = send(client.get(compare_url)).await;
    assert_eq!(
        (cmp.status, cmp.header("x-ratelimit-limit")),
        (200, Some("30"))
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_ranks_every_rail_and_caches_a_lane_for_12_seconds() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = float_only(&devnet, dir.path(), |_| {}).await;
    let url = |amount: u128| {
        format!(
            "{}/api/route/compare?fromChain={SRC}&toChain=arbitrum&amount={amount}&fromToken=USDC",
            h.base
        )
    };
    let (status, first) = get(&url(AMOUNT)).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["cached"], false);
    assert_eq!(first["lane"]["applicableRails"], json!(["floatlane"]));
    assert_eq!(
        (first["lane"]["estOutUnit"].as_str(), first["best"].as_str()),
        (Some("USDC"), Some("floatlane"))
    );
    assert_eq!(
        (
            first["comparedRails"].as_u64(),
            first["railsAttempted"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let q = &first["quotes"][0];
    assert_eq!(
        (q["ok"].as_bool(), q["best"].as_bool()),
        (Some(true), Some(true))
    );
    let score = q["qualityScore"].as_u64().unwrap();
    assert!((1..=100).contains(&score), "{score}");
    // Effective fee: the share of the 5 USDC that does not arrive.
    let lost = AMOUNT - amount(&q["estOut"]);
    let pct = q["effectiveFeePct"].as_f64().unwrap();
    assert!(
        (pct - (lost * 1_000_000 / AMOUNT) as f64 / 10_000.0).abs() < 1e-9,
        "{pct}"
    );
    let guard = &first["guard"];
    assert_eq!(guard["thresholdPct"], 3);
    assert_eq!(guard["ok"].as_bool(), Some(pct <= 3.0));
    assert!(guard["recommendedMinInput"].is_string());

    let (_, again) = get(&url(AMOUNT)).await;
    assert_eq!(again["cached"], true);
    assert_eq!(again["quotes"], first["quotes"]);
    let post = send(crate::common::http().post(format!("{}/api/route/compare", h.base)).json(
        &json!({"fromChain": SRC, "toChain": DST, "amount": AMOUNT.to_string(), "fromToken": "USDC"}),
    ))
    .await;
    assert_eq!(
        (post.status, post.body["cached"].as_bool()),
        (200, Some(true)),
        "POST shares the lane's cache"
    );
    let (_, other) = get(&url(AMOUNT + 1)).await;
    assert_eq!(other["cached"], false, "another amount is another entry");
    let (status, bad) = get(&format!(
        "{}/api/route/compare?fromChain={SRC}&toChain={DST}",
        h.base
    ))
    .await;
    assert_eq!(
        (status, bad["errorCode"].as_str(), bad["field"].as_str()),
        (400, Some("MISSING_FIELD"), Some("amount"))
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_catalogue_lists_every_code_and_cors_allows_the_relay_headers() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve_with(&devnet, dir.path(), keep_only(&["floatlane"]), |c| {
        c.limits.enabled = true
    })
    .await;
    let (status, v) = get(&format!("{}/api/errors", h.base)).await;
    assert_eq!(status, 200);
    let listed: Vec<&Value> = v["errors"].as_array().unwrap().iter().collect();
    assert_eq!(listed.len(), relay_api::error_codes().len());
    for code in relay_api::error_codes() {
        let e = listed
            .iter()
            .find(|e| e["errorCode"] == code.as_str())
            .unwrap_or_else(|| panic!("{code:?} not listed"));
        assert_eq!(e["status"], code.status().as_u16());
        assert_eq!(e["retryable"], code.retryable());
        assert!(!e["meaning"].as_str().unwrap().is_empty());
    }
    let rate = listed
        .iter()
        .find(|e| e["errorCode"] == "RATE_LIMITED")
        .unwrap();
    assert_eq!(
        (rate["status"].as_u64(), rate["retryable"].as_bool()),
        (Some(429), Some(true))
    );

    let pre = crate::common::http()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/api/route/quote", h.base),
        )
        .header("origin", "https://wallet.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,x-relay-sandbox,x-idempotency-key,x-relay-key,x-payment",
        )
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success(), "{}", pre.status());
    let allowed = pre.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_string();
    for hdr in [
        "content-type",
        "x-relay-sandbox",
        "x-idempotency-key",
        "x-relay-key",
        "x-payment",
    ] {
        assert!(allowed.contains(hdr), "{hdr} not in {allowed}");
    }
    let resp = crate::common::http()
        .get(format!("{}/api/status", h.base))
        .header("origin", "https://wallet.example")
        .send()
        .await
        .unwrap();
    let exposed = resp.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_string();
    for hdr in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    ] {
        assert!(exposed.contains(hdr), "{hdr} not in {exposed}");
    }
    assert_eq!(resp.headers()["x-ratelimit-limit"], "60");
    devnet.stop();
}
