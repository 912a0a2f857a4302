//! The conformance kit against real artifacts: both packagings of the float
//! lane pass against real anvil chains and agree; each deliberately broken
//! plugin fails, naming the clause it breaks.

use relay_conformance::rail::{check, packagings_agree, KitOptions, KnownToken, Report};
use relay_devnet::{Devnet, DevnetConfig};
use relay_plugin_api::ChainRef;
use std::{path::PathBuf, time::Duration};

fn floatlane(kind: &str) -> PathBuf {
    let dir = relay_fixtures::packaged_plugins().join(format!("floatlane-{kind}"));
    let name = if kind == "wasm" {
        "floatlane.wasm".to_string()
    } else {
        format!(
            "{}floatlane{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )
    };
    dir.join(name)
}

fn kit_options(devnet: &Devnet) -> KitOptions {
    let mut opts = KitOptions {
        work_dir: tempfile::tempdir().unwrap().keep(),
        ..KitOptions::default()
    };
    for c in devnet.chains() {
        opts.rpc.push((c.chain_id.to_string(), c.rpc_url.clone()));
        opts.tokens.push(KnownToken {
            chain: ChainRef::Evm(c.chain_id),
            symbol: "USDC".into(),
            address: c.deployment.usdc.to_string(),
            decimals: 6,
        });
    }
    opts.rail_config
        .push(("relayer".into(), devnet.relayer.to_string()));
    opts
}

fn clause<'a>(r: &'a Report, name: &str) -> &'a relay_conformance::rail::ClauseResult {
    r.clauses
        .iter()
        .find(|c| c.clause == name)
        .unwrap_or_else(|| panic!("no clause {name} in {r:#?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn floatlane_passes_in_both_packagings_and_they_agree() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .expect("devnet");
    let opts = kit_options(&devnet);
    let (native, wasm) = (floatlane("native"), floatlane("wasm"));
    for artifact in [&native, &wasm] {
        let report = check(artifact, &opts).await;
        assert!(report.passed(), "{report:#?}");
        assert_eq!(report.rail.as_deref(), Some("floatlane"));
        // The kit's inputs reached real chains: prepare was exercised.
        assert!(
            clause(&report, "plan-declarative")
                .detail
                .contains("declarative steps"),
            "{report:#?}"
        );
    }
    let agree = packagings_agree(&native, &wasm, &opts).await;
    assert!(agree.passed, "{agree:#?}");
    devnet.stop();
}

fn fast() -> KitOptions {
    KitOptions {
        call_timeout: Duration::from_millis(700),
        work_dir: tempfile::tempdir().unwrap().keep(),
        ..KitOptions::default()
    }
}

async fn failing(artifact: PathBuf, clause_name: &str, needle: &str) {
    let report = check(&artifact, &fast()).await;
    let c = clause(&report, clause_name);
    assert!(
        !c.passed,
        "{clause_name} passed for {}: {report:#?}",
        artifact.display()
    );
    assert!(
        c.detail.contains(needle),
        "{clause_name} detail {:?} lacks {needle:?}",
        c.detail
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_well_behaved_fixture_passes() {
    for artifact in [
        relay_fixtures::native_plugin("relay-broken-native", &[]),
        relay_fixtures::wasm_plugin("relay-broken-wasm", &[]),
    ] {
        let report = check(&artifact, &fast()).await;
        assert!(report.passed(), "{report:#?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_native_plugin_fails_no_faults() {
    failing(
        relay_fixtures::native_plugin("relay-broken-native", &["panic"]),
        "no-faults",
        "panic",
    )
    .await;
}

#[test]
fn a_hanging_native_plugin_fails_deadline_respected() {
    // The hung call holds a blocking thread nobody can reclaim (native
    // plugins are trusted code); the runtime must not wait for it on drop.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(failing(
        relay_fixtures::native_plugin("relay-broken-native", &["hang"]),
        "deadline-respected",
        "deadline",
    ));
    rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trapping_wasm_plugin_fails_no_faults() {
    failing(
        relay_fixtures::wasm_plugin("relay-broken-wasm", &["trap"]),
        "no-faults",
        "unreachable",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_looping_wasm_plugin_fails_deadline_respected() {
    failing(
        relay_fixtures::wasm_plugin("relay-broken-wasm", &["hang"]),
        "deadline-respected",
        "deadline",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unbounded_allocation_fails_no_faults() {
    failing(
        relay_fixtures::wasm_plugin("relay-broken-wasm", &["alloc"]),
        "no-faults",
        "limit",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn undeclared_egress_fails_in_both_packagings() {
    failing(
        relay_fixtures::native_plugin("relay-broken-native", &["egress"]),
        "no-undeclared-egress",
        "undeclared.example",
    )
    .await;
    failing(
        relay_fixtures::wasm_plugin("relay-broken-wasm", &["egress"]),
        "no-undeclared-egress",
        "undeclared.example",
    )
    .await;
}

#[test]
fn the_cli_exits_non_zero_and_names_the_clause() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &["panic"]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay-conformance"))
        .args(["rail", "--timeout-ms", "700"])
        .arg(&artifact)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL no-faults"), "{stdout}");
    assert!(stdout.contains("conformance: FAIL"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_template_an_integrator_copies_passes_in_both_packagings() {
    let native = relay_fixtures::native_plugin("relay-rail-template-native", &[]);
    let wasm = relay_fixtures::wasm_plugin("relay-rail-template-wasm", &[]);
    for a in [&native, &wasm] {
        let report = check(a, &fast()).await;
        assert!(report.passed(), "{report:#?}");
        assert!(
            clause(&report, "plan-declarative")
                .detail
                .contains("declarative steps"),
            "{report:#?}"
        );
    }
    let agree = packagings_agree(&native, &wasm, &fast()).await;
    assert!(agree.passed, "{agree:#?}");
}

/// The artifact of a packaged plugin directory (`<rail>-<packaging>/`).
fn artifact_in(dir: &std::path::Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "plugin.toml"))
        .unwrap_or_else(|| panic!("no artifact in {}", dir.display()))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_packaged_rail_passes_the_kit_against_its_upstream_simulator() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .expect("devnet");
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let config = relay_host::devnet::point_rails_at(
        &devnet,
        &sims,
        relay_host::devnet::host_config(&devnet, Default::default()),
    );
    let mut checked = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(relay_fixtures::packaged_plugins())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("plugin.toml").exists())
        .collect();
    dirs.sort();
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let rail = name.rsplit_once('-').map_or(name.as_str(), |(r, _)| r);
        let mut opts = kit_options(&devnet);
        opts.allow_private = true;
        opts.extra_egress.push("127.0.0.1".into());
        if let Some(rc) = config.rails.get(rail) {
            opts.rail_config.extend(rc.config.clone());
            opts.contracts = rc.contracts.clone();
            opts.credentials = rc
                .credentials
                .iter()
                .filter_map(|n| Some((n.clone(), config.capabilities.credentials.get(n)?.clone())))
                .collect();
        }
        let report = check(&artifact_in(&dir), &opts).await;
        assert!(report.passed(), "{name}: {report:#?}");
        assert_eq!(report.rail.as_deref(), Some(rail));
        checked.push(name);
    }
    assert!(
        checked.len() >= 10,
        "nine rails, the float lane twice: {checked:?}"
    );
    devnet.stop();
}
