//! The host serving real HTTP over a real devnet: `/api/status` and
//! `/api/route/chains` come from the loaded plugins, the operator's switches
//! and live chain health; plugins hot-reload while it serves.

use crate::common;
use common::{get, serve};
use relay_devnet::{Devnet, DevnetConfig};
use relay_registry::OperatorStateStore;
use std::path::Path;

#[tokio::test(flavor = "multi_thread")]
async fn the_mesh_comes_from_the_plugins_and_live_chains() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161, 10]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;

    let (code, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
    assert_eq!(code, 200);
    assert_eq!(mesh["chains"], serde_json::json!([10, 8453, 42161]));
    // Every EVM pair plus the non-EVM legs the rails carry.
    assert!(mesh["directedRoutes"].as_u64().unwrap() > 6, "{mesh}");
    assert!(mesh["nodes"].as_u64().unwrap() > 3, "{mesh}");
    let rails = mesh["rails"].as_object().unwrap();
    let ids: Vec<&str> = rails.keys().map(String::as_str).collect();
    assert_eq!(
        ids,
        [
            "btc",
            "bungee",
            "cctp",
            "floatlane",
            "lifi",
            "squid",
            "stablebridge",
            "sui",
            "tron"
        ],
        "the nine rails, from the loaded plugins"
    );
    for quote_only in ["sui", "tron"] {
        assert_eq!(rails[quote_only]["executeReady"], false, "{quote_only}");
    }
    let bitcoin = &mesh["nonEvmNodes"]["bitcoin"];
    assert_eq!(bitcoin["routable"], true, "{mesh}");
    assert_eq!(bitcoin["asset"], "BTC", "{bitcoin}");
    assert_eq!(
        bitcoin["executeDirections"],
        serde_json::json!({"evm->bitcoin": true, "bitcoin->evm": true}),
        "{bitcoin}"
    );
    assert!(
        bitcoin["quoteError"].is_null(),
        "every rail touching bitcoin quotes: {bitcoin}"
    );
    assert_eq!(
        mesh["nonEvmNodes"]["stellar"]["executeDirections"],
        serde_json::json!({"evm->stellar": true, "stellar->evm": false}),
        "stellar to EVM is unavailable: {mesh}"
    );
    let sui = &mesh["nonEvmNodes"]["sui"];
    assert_eq!(
        (&sui["quoteOnly"], &sui["executeReady"]),
        (&serde_json::json!(true), &serde_json::json!(false)),
        "{sui}"
    );
    let q = &mesh["comparatorQuoteOnly"];
    let lanes_of = |v: &serde_json::Value| -> Vec<String> {
        let mut l: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                format!(
                    "{} {}",
                    l["rail"].as_str().unwrap(),
                    l["lane"].as_str().unwrap()
                )
            })
            .collect();
        l.sort();
        l
    };
    assert_eq!(q["sui"]["quoteOnly"], true, "{q}");
    assert!(!lanes_of(&q["sui"]["lanes"]).is_empty(), "{q}");
    assert!(
        lanes_of(&q["tronReverseAndChainflip"]).contains(&"tron tron->evm".to_string()),
        "{q}"
    );
    let chainflip = &q["chainflipAssetLanes"];
    assert!(
        chainflip
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["rail"] == "btc"
                && l["lane"] == "evm->bitcoin"
                && l["executeReady"] == true),
        "the funds-gated USDC to bitcoin lane executes: {q}"
    );
    assert!(q["extraEvmChains"].is_array(), "{q}");
    assert_eq!(mesh["relayer"], devnet.relayer.to_string());
    assert_eq!(
        mesh["permit2"],
        "0x000000000022D473030F116dDEE9F6B43aC78BA3"
    );
    assert_eq!(mesh["rails"]["floatlane"]["executeReady"], true);
    assert_eq!(
        mesh["rails"]["floatlane"]["assets"],
        serde_json::json!(["USDC", "USDT"])
    );

    let (code, status) = get(&format!("{}/api/status", h.base)).await;
    assert_eq!(code, 200);
    assert_eq!(status["status"], "operational", "{status}");
    assert_eq!(status["nodes"]["up"], 8, "3 EVM chains and 5 non-EVM nodes");
    assert!(status["nodes"]["evm"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["up"] == true));
    let rails = status["rails"].as_array().unwrap();
    assert_eq!(rails.len(), 9, "{status}");
    assert!(rails.iter().all(|r| r["up"] == true), "{status}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_chain_rpc_degrades_status() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        let dead = relay_config::ChainConfig {
            rpc: vec!["http://127.0.0.1:9/".into()],
            ..Default::default()
        };
        c.chains.insert("10".into(), dead);
    })
    .await;
    let (_, status) = get(&format!("{}/api/status", h.base)).await;
    assert_eq!(status["status"], "degraded", "{status}");
    let op = status["nodes"]["evm"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["chainId"] == 10)
        .unwrap()
        .clone();
    assert_eq!(
        op,
        serde_json::json!({"chainId": 10, "name": "optimism", "up": false})
    );
    let evm_up = status["nodes"]["evm"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["up"] == true)
        .count();
    assert_eq!(evm_up, 2, "{status}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_toggle_shows_on_the_next_request() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    h.host_state
        .store
        .set_lane_execute_ready("floatlane", "evm->evm", false)
        .await
        .unwrap();
    let (_, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
    assert_eq!(mesh["rails"]["floatlane"]["executeReady"], false);
    h.host_state
        .store
        .set_rail_enabled("floatlane", false)
        .await
        .unwrap();
    let (_, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
    assert!(mesh["rails"].get("floatlane").is_none(), "{mesh}");
    assert!(mesh["rails"].get("lifi").is_some(), "others stay: {mesh}");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_paths_get_a_typed_404() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let (code, body) = get(&format!("{}/api/nope", h.base)).await;
    assert_eq!(code, 404);
    assert_eq!(body["errorCode"], "NOT_FOUND");
    assert!(body["error"].is_string());
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn plugins_hot_reload_while_serving() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let before = h.host_state.rails.snapshot();
    let old_wasm = before
        .installed
        .iter()
        .find(|i| i.active && i.rail.id() == "floatlane")
        .unwrap()
        .rail
        .clone();

    // Install a new rail: the template, as a wasm component.
    let plugin = dir.path().join("plugins/template-wasm");
    std::fs::create_dir_all(&plugin).unwrap();
    let artifact = plugin.join("template.wasm");
    std::fs::copy(
        relay_fixtures::wasm_plugin("relay-rail-template-wasm", &[]),
        &artifact,
    )
    .unwrap();
    relay_runtime::package::write_manifest(&artifact, relay_registry::PluginKind::Wasm)
        .await
        .unwrap();
    let url = format!("{}/api/route/chains", h.base);
    wait_for_reload("the template rail to appear", async || {
        get(&url).await.1["rails"]["template"]["rail"] == "template"
    })
    .await;

    // Remove the float lane's wasm packaging: the native one takes over.
    std::fs::remove_dir_all(dir.path().join("plugins/floatlane-wasm")).unwrap();
    wait_for_reload("native floatlane to become active", async || {
        let snap = h.host_state.rails.snapshot();
        snap.get("floatlane")
            .is_some_and(|r| r.packaging() == relay_runtime::Packaging::Native)
    })
    .await;
    // A caller still holding the old instance is served by it (drain).
    assert_eq!(old_wasm.packaging(), relay_runtime::Packaging::Wasm);
    assert_eq!(
        old_wasm.health().await.status,
        relay_plugin_api::HealthStatus::Operational
    );
    devnet.stop();
}

/// Polls until a plugin reload shows: a reload compiles the new component
/// (many seconds in a debug host on a busy machine), so its bound is longer
/// than a state change's.
async fn wait_for_reload(what: &str, probe: impl AsyncFnMut() -> bool) {
    common::wait_up_to(what, std::time::Duration::from_secs(90), probe).await;
}

/// Appends a custom section (wasm) or trailing bytes (ELF) and writes the
/// new file beside the old one, then renames it in place, as a deploy does.
fn rebuild_in_place(artifact: &Path) {
    let mut bytes = std::fs::read(artifact).unwrap();
    if artifact.extension().is_some_and(|e| e == "wasm") {
        let name = b"relay-redeploy";
        bytes.extend_from_slice(&[0, (name.len() + 2) as u8, name.len() as u8]);
        bytes.extend_from_slice(name);
        bytes.push(1);
    } else {
        bytes.extend_from_slice(b"relay-redeploy");
    }
    let tmp = artifact.with_extension("new");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, artifact).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_artifact_is_swapped_in_for_both_packagings() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let floatlane = |s: &relay_runtime::rails::RailSnapshot| {
        s.installed
            .iter()
            .filter(|i| i.rail.id() == "floatlane")
            .cloned()
            .collect::<Vec<_>>()
    };
    let before = floatlane(&h.host_state.rails.snapshot());
    for i in &before {
        let artifact = i.plugin.artifact_path.clone();
        rebuild_in_place(&artifact);
        let kind = i.plugin.manifest.plugin.kind;
        relay_runtime::package::write_manifest(&artifact, kind)
            .await
            .unwrap();
    }
    wait_for_reload("both packagings to be reloaded", async || {
        let now = floatlane(&h.host_state.rails.snapshot());
        now.len() == 2
            && now.iter().all(|n| {
                before
                    .iter()
                    .all(|b| b.plugin.fingerprint.sha256 != n.plugin.fingerprint.sha256)
            })
    })
    .await;
    let now = floatlane(&h.host_state.rails.snapshot());
    for n in &now {
        // A new instance answers; the old one (held by in-flight callers) still does too.
        assert_eq!(
            n.rail.health().await.status,
            relay_plugin_api::HealthStatus::Operational
        );
        let old = before
            .iter()
            .find(|b| b.rail.packaging() == n.rail.packaging())
            .unwrap();
        assert!(!std::sync::Arc::ptr_eq(&old.rail, &n.rail));
        assert_eq!(
            old.rail.health().await.status,
            relay_plugin_api::HealthStatus::Operational
        );
    }
    let (_, mesh) = get(&format!("{}/api/route/chains", h.base)).await;
    assert_eq!(mesh["rails"]["floatlane"]["executeReady"], true);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_error_catalogue_lists_every_code_with_its_status() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let (code, v) = get(&format!("{}/api/errors", h.base)).await;
    assert_eq!(code, 200);
    let listed: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["errorCode"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = relay_api::error_codes()
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(listed, all);
    for want in [
        "UNKNOWN_ROUTE",
        "INVALID_FIELD",
        "PERMIT2_INVALID",
        "SAME_CHAIN_SAME_TOKEN",
        "IDEMPOTENCY_KEY_REUSED",
    ] {
        assert!(listed.contains(&want), "{want} missing from {listed:?}");
    }
    let unknown = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["errorCode"] == "UNKNOWN_ROUTE")
        .unwrap();
    assert_eq!(
        (unknown["status"].as_u64(), unknown["retryable"].as_bool()),
        (Some(404), Some(false))
    );
    // Preflight's blocker and warning codes and routes' failure codes too.
    let codes = |table: &str| -> Vec<String> {
        v[table]
            .as_array()
            .unwrap_or_else(|| panic!("{table} listed: {v}"))
            .iter()
            .map(|e| {
                assert!(!e["meaning"].as_str().unwrap().is_empty(), "{e}");
                e["code"].as_str().unwrap().to_string()
            })
            .collect()
    };
    use relay_engine::preflight;
    use relay_types::route::FailureCode;
    let names = |all: Vec<&str>| all.into_iter().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        codes("blockers"),
        names(
            preflight::BlockerCode::ALL
                .iter()
                .map(|c| c.as_str())
                .collect()
        )
    );
    assert_eq!(
        codes("warnings"),
        names(
            preflight::WarningCode::ALL
                .iter()
                .map(|c| c.as_str())
                .collect()
        )
    );
    assert_eq!(
        codes("failures"),
        names(FailureCode::ALL.iter().map(|c| c.as_str()).collect())
    );
    for want in ["PERMIT2_ALLOWANCE_MISSING", "PERMIT2_SIGNATURE_MISSING"] {
        assert!(codes("blockers").contains(&want.to_string()), "{want}");
    }
    assert!(codes("warnings").contains(&"HIGH_COST".to_string()));
    assert!(codes("failures").contains(&"UPSTREAM_TIMEOUT".to_string()));
    devnet.stop();
}
