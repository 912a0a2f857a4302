//! The discovery reads of spec §4.1 over real HTTP on a real devnet:
//! gasless info (the Permit2 domain the devnet's Permit2 verifies), price
//! feeds, the changelog, the signed capability snapshot, uptime from the
//! host's own probes, delivery stats from the store, the float lane and
//! membership read on chain. Each asserts what a client would rely on.

use crate::common;
use alloy::primitives::{Address, Signature, U256};
use common::{get, serve, wait_for};
use relay_devnet::{keys, Devnet, DevnetConfig};
use relay_types::route::RouteStatus;
use relay_types::{Clock as _, SystemClock};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;

/// `v`'s values at `paths` (`a.b.0` for nested fields), as one array.
fn at(v: &Value, paths: &[&str]) -> Value {
    (paths.iter())
        .map(|p| {
            let steps = p.split('.');
            steps.fold(v, |v, k| k.parse::<usize>().map_or(&v[k], |i| &v[i]))
        })
        .cloned()
        .collect()
}

/// The element of the array `v` that `pick` accepts.
fn find(v: &Value, pick: impl Fn(&Value) -> bool) -> &Value {
    let found = v.as_array().and_then(|a| a.iter().find(|x| pick(x)));
    found.unwrap_or_else(|| panic!("not found in {v}"))
}

/// GETs `url`, which must be a typed 400 naming `field`; its errorCode.
async fn rejected(url: &str, field: &str) -> Value {
    let (code, e) = get(url).await;
    assert_eq!((code, &e["field"]), (400, &json!(field)), "{url}: {e}");
    e["errorCode"].clone()
}

async fn start() -> Devnet {
    Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn gasless_info_feeds_and_changelog_describe_this_host() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.limits.enabled = true;
        c.pricefeeds.clear(); // the configured fallbacks (feeds: tests/it/pricefeeds.rs)
        c.quote.native_usd_e6.insert(SRC.to_string(), 2_000_000_000);
    })
    .await;

    let resp = crate::common::fetch(format!("{}/api/gasless/info", h.base)).await;
    let resp = resp.unwrap();
    assert_eq!(resp.headers()["x-ratelimit-limit"], "60", "like status");
    let info: Value = resp.json().await.unwrap();
    let relayer = json!(devnet.relayer.to_string());
    let router = |id: u64| json!(devnet.deployment(id).unwrap().router.to_string());
    let addresses = [
        "router",
        "anyGasRouter",
        "tokenPaymaster",
        "entryPoint",
        "relayer",
    ];
    assert_eq!(
        at(&info, &addresses),
        json!([router(SRC), router(SRC), null, null, relayer]),
        "the RelayRouter; the relayer stays the Permit2 spender of mode permit2"
    );
    assert_eq!(info["chainId"], SRC, "the lowest configured chain");
    assert_eq!(info["routes"], json!(["direct", "cheapest", "fastest"]));
    // The router's versioned domain, exactly what RelayRouter.DOMAIN_SEPARATOR uses.
    let want = relay_devnet::contracts::router_domain(SRC, devnet.deployment(SRC).unwrap().router);
    let d = &info["domain"];
    assert_eq!(d["name"], want.name.as_deref().unwrap());
    assert_eq!(d["version"], want.version.as_deref().unwrap());
    assert_eq!(d["chainId"], want.chain_id.unwrap().to::<u64>());
    let verifying: Address = d["verifyingContract"].as_str().unwrap().parse().unwrap();
    assert_eq!(Some(verifying), want.verifying_contract);
    for id in [SRC, DST] {
        let chain = &info["gaslessChains"][id.to_string()];
        let usdc = devnet.chain(id).unwrap().deployment.usdc.to_string();
        let want = json!([router(id), router(id), relayer, usdc, "3.1"]);
        assert_eq!(
            at(
                chain,
                &["address", "router", "relayer", "stable", "version"]
            ),
            want
        );
        // Permit2's domain has no version; the per-chain block says which applies.
        assert_eq!(chain["domain"]["version"], "3.1");
    }
    let usdc = find(&info["acceptedTokens"], |t| t["symbol"] == "USDC");
    assert_eq!(at(usdc, &["decimals", "stable"]), json!([6, true]));

    let (code, other) = get(&format!("{}/api/gasless/info?chainId={DST}", h.base)).await;
    assert_eq!((code, &other["domain"]["chainId"]), (200, &json!(DST)));
    let bad = format!("{}/api/gasless/info?chainId=999999", h.base);
    assert_eq!(rejected(&bad, "chainId").await, "UNKNOWN_CHAIN");

    let (code, feeds) = get(&format!("{}/api/pricefeeds", h.base)).await;
    assert_eq!((code, &feeds["onChainFeeds"]), (200, &json!(0)));
    let eth = find(&feeds["feeds"], |f| {
        f["pair"] == "ETH/USD" && f["chainId"] == SRC
    });
    assert_eq!(
        at(eth, &["value", "source"]),
        json!(["2000000000", "config"])
    );

    let (code, log) = get(&format!("{}/api/changelog", h.base)).await;
    let running = [
        env!("CARGO_PKG_VERSION"),
        "3.1.0",
        env!("CARGO_PKG_VERSION"),
    ];
    let paths = ["running.version", "running.interface", "entries.0.version"];
    assert_eq!((code, at(&log, &paths)), (200, json!(running)));
    let changes = &log["entries"][0]["changes"];
    find(changes, |c| c["path"] == "GET /api/capability/snapshot");
    devnet.stop();
}

/// The sorted-key, whitespace-free form, rebuilt independently of the host.
fn canonical(v: &Value) -> String {
    let join = |parts: Vec<String>| parts.join(",");
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts = keys
                .iter()
                .map(|k| format!("{}:{}", json!(k), canonical(&m[*k])));
            format!("{{{}}}", join(parts.collect()))
        }
        Value::Array(a) => format!("[{}]", join(a.iter().map(canonical).collect())),
        other => other.to_string(),
    }
}

fn signer_of(message: &str, signature: &str) -> Address {
    let sig: Signature = signature.parse().unwrap();
    sig.recover_address_from_msg(message.as_bytes()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_snapshot_recovers_to_the_relayer_and_uptime_counts_the_hosts_own_probes() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;

    let before = SystemClock.now_ms();
    let (code, snap) = get(&format!("{}/api/capability/snapshot", h.base)).await;
    assert_eq!(code, 200, "{snap}");
    let message = snap["message"].as_str().unwrap();
    assert_eq!(
        message,
        canonical(&snap["snapshot"]),
        "the canonical snapshot"
    );
    let signature = snap["signature"].as_str().unwrap();
    assert_eq!(signer_of(message, signature), devnet.relayer);
    let signer: Address = snap["signer"].as_str().unwrap().parse().unwrap();
    assert_eq!(signer, devnet.relayer);
    let tampered = message.replacen("\"up\":true", "\"up\":false", 1);
    assert_ne!(signer_of(&tampered, signature), devnet.relayer);
    let ts = snap["ts"].as_u64().unwrap();
    assert!(ts >= before && snap["snapshot"]["ts"] == ts, "{snap}");
    let s = &snap["snapshot"];
    assert_eq!(s["chains"].as_array().unwrap().len(), 2, "{s}");
    let float = find(&s["rails"], |r| r["role"] == "float-lane");
    assert_eq!(float["lanes"][0]["executeReady"], true, "{float}");

    let today = relay_engine::uptime::utc_date(SystemClock.now_ms());
    let uptime = format!("{}/api/uptime", h.base);
    wait_for("the first probe", async || {
        get(&uptime).await.1["days"][0]["samples"].as_u64() >= Some(1)
    })
    .await;
    let (code, u) = get(&uptime).await;
    assert_eq!((code, &u["prober"]), (200, &json!("host")));
    let day = at(&u["days"][0], &["date", "upPct", "operationalPct"]);
    assert_eq!(day, json!([today, 100.0, 100.0]), "{u}");
    assert!(
        u["note"].as_str().unwrap().contains("own probe loop"),
        "{u}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn membership_status_tells_a_member_from_a_non_member_and_the_float_lane_reads_its_float() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let (member, other) = (keys::anvil_address(3), keys::anvil_address(4));
    devnet.mint_membership(SRC, member).await.unwrap();
    let membership = devnet.chain(SRC).unwrap().deployment.membership;

    let status = |who: String| format!("{}/api/membership/status?address={who}", h.base);
    let fields = [
        "tier",
        "benefits.routeFeeBps",
        "benefits.gasMarkupBps",
        "benefits.floatlaneFee.mode",
    ];
    let (code, m) = get(&status(member.to_string())).await;
    let want = json!(["member", 15, 1000, "free-micro-vip"]);
    assert_eq!((code, at(&m, &fields)), (200, want), "{m}");
    let via = at(
        &m,
        &["via.chain", "via.address", "benefits.floatlaneFee.fee"],
    );
    assert_eq!(via, json!([SRC, membership.to_string(), "0"]));
    let (code, s) = get(&status(format!("{other:#x}"))).await;
    let want = json!(["standard", 25, 2500, "micro-standard"]);
    assert_eq!((code, at(&s, &fields)), (200, want), "{s}");
    assert_eq!(at(&s, &["member", "via"]), json!([false, null]));
    for (query, code) in [
        ("", "MISSING_FIELD"),
        ("?address=", "MISSING_FIELD"),
        ("?address=0x1234", "INVALID_FIELD"),
        ("?address=bc1qxyz", "INVALID_FIELD"),
    ] {
        let url = format!("{}/api/membership/status{query}", h.base);
        assert_eq!(rejected(&url, "address").await, code, "{query}");
    }

    let (code, f) = get(&format!("{}/api/floatlane/info", h.base)).await;
    let head = at(&f, &["available", "rail.id"]);
    assert_eq!((code, head), (200, json!([true, "floatlane"])), "{f}");
    let usdc = &f["chains"][DST.to_string()]["assets"]["USDC"];
    let held = common::usdc_balance(&devnet, DST, devnet.relayer).await;
    assert!(held > U256::ZERO, "the devnet funds the relayer's float");
    assert_eq!(usdc["float"], json!(held.to_string()), "{usdc}");
    let amount = |k: &str| -> U256 { usdc[k].as_str().unwrap().parse().unwrap() };
    assert_eq!(
        amount("capNow"),
        held * U256::from(25) / U256::from(100),
        "{usdc}"
    );
    assert!(
        amount("costFloor") > U256::ZERO,
        "a payout costs gas: {usdc}"
    );
    let modes: Vec<Value> = (f["tiers"].as_array().unwrap().iter())
        .map(|t| t["mode"].clone())
        .collect();
    assert_eq!(modes.len(), 4, "{f}");
    for tier in ["standard", "member"] {
        let mode = &usdc["tiersNow"][tier]["mode"];
        assert!(modes.contains(mode), "{tier}: {usdc}");
    }
    let registry = &f["vip"]["registry"];
    assert_eq!(registry.as_array().unwrap().len(), 2, "one per chain");
    find(registry, |c| c["address"] == json!(membership.to_string()));
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn delivery_stats_count_stored_routes_and_never_the_sandbox() {
    let devnet = start().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let store = &h.host_state.store;
    let mut done = common::sample_route("rt_done");
    common::store_idle_route(store, &done).await;
    done.status = RouteStatus::Done;
    let advanced = store.update_route(&done, 1, "done").await.unwrap();
    assert!(advanced.is_some());
    let mut failed = common::sample_route("rt_failed");
    failed.status = RouteStatus::Failed;
    common::store_idle_route(store, &failed).await;
    let open = common::sample_route("rt_open");
    common::store_idle_route(store, &open).await;

    let body = common::permit_body(&devnet, (SRC, DST), 5_000_000, 21);
    let sandbox = [("x-relay-sandbox", "1")];
    let (code, text) = common::post(&h.base, "/api/route/execute", &body, &sandbox).await;
    assert_eq!(code, 200, "{text}");
    assert!(text.contains("sbx_"), "{text}");

    let (code, s) = get(&format!("{}/api/delivery/stats", h.base)).await;
    assert_eq!(code, 200, "{s}");
    let counts = json!({"BRIDGING": 1, "DONE": 1, "FAILED": 1});
    assert_eq!(s["counts"], counts, "the sandbox route is not counted");
    let totals = at(&s, &["total", "settled", "successRate", "window.days"]);
    assert_eq!(totals, json!([3, 2, 0.5, 30]));
    let l = &s["latencySec"];
    assert_eq!(l["samples"], 1, "{s}");
    assert!(
        l["p50"].as_f64().unwrap() >= 0.0 && l["p99"] == l["p50"],
        "{s}"
    );

    let (code, s) = get(&format!("{}/api/delivery/stats?days=1", h.base)).await;
    assert_eq!((code, &s["total"]), (200, &json!(3)));
    for bad in ["0", "366", "week"] {
        let url = format!("{}/api/delivery/stats?days={bad}", h.base);
        assert_eq!(rejected(&url, "days").await, "INVALID_FIELD", "{bad}");
    }
    devnet.stop();
}
