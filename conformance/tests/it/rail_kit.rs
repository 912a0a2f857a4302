//! The conformance kit against real artifacts: both packagings of the float
//! lane pass against real anvil chains and agree; every packaged rail and
//! the template pass; each deliberately broken plugin fails, naming the
//! clause it breaks, the cause and the fix — including a rail whose
//! upstream never answers, one that answers one direction of a two-way
//! lane, plans calling an undeclared contract, and a rail that reports its
//! vendor's documented refund as delivered.

use relay_conformance::rail::{
    check, check_vendor, packagings_agree, FixtureServer, KitOptions, KnownToken, Report,
    AGREES_WITH_VENDOR,
};
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
        for (symbol, address) in [("USDC", c.deployment.usdc), ("USDT", c.deployment.usdt)] {
            opts.tokens.push(KnownToken {
                chain: ChainRef::Evm(c.chain_id),
                symbol: symbol.into(),
                address: address.to_string(),
                decimals: 6,
            });
        }
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
        // The kit's inputs reached real chains: both directions of the
        // two-way lane were quoted and prepared.
        let quoted = &clause(&report, "quotes-every-direction").exercised;
        for dir in ["8453→42161", "42161→8453"] {
            assert!(quoted.iter().any(|e| e.contains(dir)), "{quoted:?}");
        }
        assert!(
            clause(&report, "plan-declarative")
                .detail
                .starts_with("2 declarative plans"),
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
        relay_fixtures::native_plugin("relay-broken-native", &["declared-contract"]),
    ] {
        let report = check(&artifact, &fast()).await;
        assert!(report.passed(), "{report:#?}");
        let quoted = &clause(&report, "quotes-every-direction").exercised;
        assert_eq!(quoted.len(), 2, "both directions: {quoted:?}");
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
async fn a_rail_reporting_a_documented_refund_delivered_fails_against_its_vendor_cases() {
    let dir = relay_fixtures::workspace_root().join("conformance/tests/fixtures/broken-vendor");
    let cases = relay_rail_sdk::vendor::load(&dir).expect("the vendor cases");
    let server = FixtureServer::start(Default::default()).await.unwrap();
    let mut opts = server.apply(fast());
    opts.rail_config.push(("upstream_url".into(), server.url()));
    for artifact in [
        relay_fixtures::native_plugin("relay-broken-native", &[]),
        relay_fixtures::wasm_plugin("relay-broken-wasm", &[]),
    ] {
        let report = check_vendor(&artifact, &server, &cases, &opts).await;
        assert!(report.passed(), "{report:#?}");
        assert_eq!(clause(&report, AGREES_WITH_VENDOR).detail, "2 vendor cases");
    }
    let wrong = relay_fixtures::native_plugin("relay-broken-native", &["refund-delivered"]);
    let report = check_vendor(&wrong, &server, &cases, &opts).await;
    let c = clause(&report, AGREES_WITH_VENDOR);
    assert!(!c.passed, "{report:#?}");
    assert!(
        c.detail.contains("refunded.json") && c.detail.contains("Done"),
        "{c:#?}"
    );
    assert!(!c.detail.contains("delivered.json"), "{c:#?}");
    assert!(c.fix.as_deref().is_some_and(|f| f.contains("never DONE")));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_template_an_integrator_copies_passes_in_both_packagings() {
    let native = relay_fixtures::native_plugin("relay-rail-template-native", &[]);
    let wasm = relay_fixtures::wasm_plugin("relay-rail-template-wasm", &[]);
    // Without its upstream the template cannot quote: the kit says so.
    let report = check(&native, &fast()).await;
    let c = clause(&report, "quotes-every-direction");
    assert!(
        !c.passed && c.fix.as_deref().is_some_and(|f| f.contains("--fixture")),
        "{report:#?}"
    );
    // Against the recorded upstream it ships with, both packagings pass.
    let served = FixtureServer::from_file(
        &relay_fixtures::workspace_root().join("plugins/template/fixture/upstream.json"),
    )
    .await
    .expect("the template's fixture");
    let opts = served.apply(fast());
    for a in [&native, &wasm] {
        let report = check(a, &opts).await;
        assert!(report.passed(), "{report:#?}");
        assert!(
            clause(&report, "plan-declarative")
                .detail
                .contains("declarative plans"),
            "{report:#?}"
        );
    }
    let agree = packagings_agree(&native, &wasm, &opts).await;
    assert!(agree.passed, "{agree:#?}");
}

/// Where a shipped rail fails the kit against the devnet's simulators
/// today: (artifact dir, clause, lane, why). Reported, not excused: only
/// these directions of these lanes may fail these clauses, every other
/// clause and direction must pass, and an entry that starts passing fails
/// the test until it is removed.
const KNOWN_GAPS: &[(&str, &str, &str, &str)] = &[(
    "stablebridge-native",
    "plan-declarative",
    "solana->evm",
    "the lane is declared executable, but the host cannot sign solana transactions: \
     prepare answers FUNDS_REQUIRED for the unfunded non-EVM source (as the spec requires) \
     and, funded, refuses because the relayer would sign on solana (rails/stablebridge/src/inbound.rs)",
)];

/// The failures of `report` outside [`KNOWN_GAPS`], and known gaps that
/// closed.
fn unexpected_failures(name: &str, report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let ok =
        |e: &str| e.contains(": quoted ") || e.contains(": plan of") || e.contains("quote-only");
    for (dir, clause_name, lane, why) in KNOWN_GAPS.iter().filter(|g| g.0 == name) {
        let c = clause(report, clause_name);
        let stray: Vec<&String> = c
            .exercised
            .iter()
            .filter(|e| !ok(e) && !e.starts_with(&format!("{lane} ")))
            .collect();
        eprintln!("known gap of {dir} ({why}):\n{}", c.render());
        if c.passed {
            out.push(format!(
                "{dir}: known gap closed, remove it from KNOWN_GAPS: {clause_name} {lane} ({why})"
            ));
        } else if !stray.is_empty() {
            out.push(format!(
                "{dir}: {clause_name} fails beyond {lane}: {stray:?}"
            ));
        }
    }
    let known = |c: &str| KNOWN_GAPS.iter().any(|g| g.0 == name && g.1 == c);
    out.extend(
        report
            .failures()
            .into_iter()
            .filter(|c| !known(c.clause))
            .map(|c| format!("{name}:\n{}", c.render())),
    );
    out
}

const BITCOIN: ChainRef = ChainRef::NonEvm(relay_plugin_api::NonEvmNode::Bitcoin);
/// A regtest address, for rails the devnet points at a regtest upstream.
const REGTEST_ADDRESS: &str = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080";

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
    let (mut checked, mut failed) = (Vec::new(), Vec::new());
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
        if opts
            .rail_config
            .iter()
            .any(|(k, v)| k == "bitcoin_network" && v == "regtest")
        {
            opts.addresses.push((BITCOIN, REGTEST_ADDRESS.into()));
        }
        let report = check(&artifact_in(&dir), &opts).await;
        assert_eq!(report.rail.as_deref(), Some(rail));
        failed.extend(unexpected_failures(&name, &report));
        checked.push(name);
    }
    devnet.stop();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(
        checked.len() >= 10,
        "nine rails, the float lane twice: {checked:?}"
    );
}

/// A vendor's packaged rail and the settings it runs its vendor cases
/// under (`rails/<rail>/tests/fixtures/vendor/`): (packaged dir, rail,
/// config, credential header).
type VendorRail = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    Option<&'static str>,
);

const VENDOR_RAILS: &[VendorRail] = &[
    (
        "lifi-wasm",
        "lifi",
        &[("credential", "lifi")],
        Some("x-lifi-api-key"),
    ),
    (
        "squid-wasm",
        "squid",
        &[("credential", "squid")],
        Some("x-integrator-id"),
    ),
    (
        "bungee-native",
        "bungee",
        &[("credential", "bungee")],
        Some("x-api-key"),
    ),
    (
        "cctp-wasm",
        "cctp",
        &[("attestation_base", "@fixture")],
        None,
    ),
    ("stablebridge-native", "stablebridge", &[], None),
    (
        "btc-native",
        "btc",
        &[
            ("broker_url", "@fixture/rpc"),
            ("bitcoin_network", "mainnet"),
        ],
        None,
    ),
];

#[tokio::test(flavor = "multi_thread")]
async fn every_packaged_rail_agrees_with_its_vendors_own_examples() {
    let mut failed = Vec::new();
    for (dir, rail, config, header) in VENDOR_RAILS {
        let root = relay_fixtures::workspace_root();
        let cases =
            relay_rail_sdk::vendor::load(&root.join(format!("rails/{rail}/tests/fixtures/vendor")))
                .unwrap_or_else(|e| panic!("{rail}: {e}"));
        let server = FixtureServer::start(Default::default()).await.unwrap();
        let mut opts = fast();
        opts.rail_config = config
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        opts.rail_config
            .push(("relayer".into(), relay_rail_sdk::vendor::RELAYER.into()));
        if let Some(header) = header {
            let credential = relay_config::CredentialConfig {
                header: header.to_string(),
                env: "RELAY_KIT_UNUSED".into(),
                value: Some(relay_config::Secret::new("kit")),
            };
            opts.credentials.push((rail.to_string(), credential));
        }
        let opts = server.apply(opts);
        let artifact = artifact_in(&relay_fixtures::packaged_plugins().join(dir));
        let report = check_vendor(&artifact, &server, &cases, &opts).await;
        if report.passed() {
            let c = clause(&report, AGREES_WITH_VENDOR);
            assert_eq!(c.detail, format!("{} vendor cases", cases.len()), "{dir}");
        } else {
            failed.push(format!("{dir}: {report:#?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// A recorded upstream the integrator supplies in place of the real one:
/// answers `/quote` with `toAmount` 99.9% of `amount`, `/health` with 200.
/// Serves on a thread for the rest of the test process.
fn recorded_upstream() -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = first.split_whitespace().nth(1).unwrap_or("/");
            let body = match path.split_once("amount=") {
                Some((_, a)) => {
                    let amount: u128 = a.parse().unwrap_or(0);
                    format!(r#"{{"toAmount":"{}"}}"#, amount - amount / 1000)
                }
                None => "{}".to_string(),
            };
            let _ = write!(
                &stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// A loopback URL nothing listens on: an upstream that is down.
fn down_upstream() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// The kit's options for the broken fixture pointed at `upstream` with the
/// operator settings a local upstream needs.
fn with_upstream(upstream: &str) -> KitOptions {
    let mut opts = fast();
    opts.rail_config
        .push(("upstream_url".into(), upstream.into()));
    opts.extra_egress.push("127.0.0.1".into());
    opts.allow_private = true;
    opts
}

fn fix_of<'a>(r: &'a Report, name: &str) -> &'a str {
    clause(r, name).fix.as_deref().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rail_passes_against_a_recorded_fixture_of_its_upstream() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &[]);
    let report = check(&artifact, &with_upstream(&recorded_upstream())).await;
    assert!(report.passed(), "{report:#?}");
    let quoted = &clause(&report, "quotes-every-direction").exercised;
    assert!(
        quoted.iter().all(|e| e.contains("quoted 9990000 out")),
        "{quoted:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rail_whose_upstream_never_answers_fails_naming_the_clause_and_the_cause() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &[]);
    let report = check(&artifact, &with_upstream(&down_upstream())).await;
    assert!(!report.passed(), "{report:#?}");
    let quotes = clause(&report, "quotes-every-direction");
    assert!(!quotes.passed, "{report:#?}");
    assert!(
        quotes
            .detail
            .contains("2 of 2 declared directions never quoted")
            && quotes.detail.contains("the upstream never answered"),
        "{quotes:#?}"
    );
    assert!(
        fix_of(&report, "quotes-every-direction").contains("--config <key>=<url>"),
        "{quotes:#?}"
    );
    // Two identical errors are not two identical answers.
    let det = clause(&report, "deterministic-quotes");
    assert!(
        !det.passed && det.detail.contains("nothing to compare"),
        "{det:#?}"
    );
    let plan = clause(&report, "plan-declarative");
    assert!(
        !plan.passed && plan.detail.contains("prepare was not exercised"),
        "{plan:#?}"
    );
    let health = clause(&report, "health-consistent");
    assert!(
        !health.passed && health.detail.contains("health is Down"),
        "{health:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_private_upstream_fails_naming_allow_private_and_its_config_key() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &[]);
    let mut opts = with_upstream(&recorded_upstream());
    opts.allow_private = false;
    let report = check(&artifact, &opts).await;
    for name in [
        "quotes-every-direction",
        "health-consistent",
        "no-undeclared-egress",
    ] {
        let fix = fix_of(&report, name);
        assert!(
            fix.contains("`127.0.0.1` resolves to a private address: pass `--allow-private`")
                && fix.contains("`[capabilities] allow_private_networks"),
            "{name}: {report:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_outside_the_allowlist_fails_naming_egress_and_its_config_key() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &[]);
    let mut opts = with_upstream(&recorded_upstream());
    opts.extra_egress.clear();
    let report = check(&artifact, &opts).await;
    for name in ["quotes-every-direction", "no-undeclared-egress"] {
        let fix = fix_of(&report, name);
        assert!(
            fix.contains("add `--egress 127.0.0.1` (operator config `[rails.broken] egress"),
            "{name}: {report:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rail_answering_one_direction_of_a_two_way_lane_fails() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &["one-way"]);
    let report = check(&artifact, &fast()).await;
    let quotes = clause(&report, "quotes-every-direction");
    assert!(!quotes.passed, "{report:#?}");
    assert!(
        quotes.detail.contains("1 of 2 declared directions")
            && quotes.detail.contains("evm->evm 42161→8453")
            && quotes.detail.contains("UnsupportedLane"),
        "{quotes:#?}"
    );
    assert!(
        fix_of(&report, "quotes-every-direction").contains("narrow the lane's `from`/`to`"),
        "{quotes:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_calling_an_undeclared_contract_fails_with_or_without_other_declared_contracts() {
    let undeclared = "0x0000000000000000000000000000000000000bad";
    for features in [
        &["undeclared-call"][..],
        &["undeclared-call", "declared-contract"][..],
    ] {
        let artifact = relay_fixtures::native_plugin("relay-broken-native", features);
        let report = check(&artifact, &fast()).await;
        let plan = clause(&report, "plan-declarative");
        assert!(!plan.passed, "{features:?}: {report:#?}");
        assert!(
            plan.detail
                .contains(&format!("calls {undeclared} on chain 8453")),
            "{features:?}: {plan:#?}"
        );
        assert!(
            fix_of(&report, "plan-declarative").contains(&format!(
                "`--contract 8453:{undeclared}` (operator config `[rails.broken] contracts"
            )),
            "{features:?}: {plan:#?}"
        );
        // The operator's grant is what lets an undeclared target through.
        let mut granted = fast();
        granted.contracts = vec![format!("8453:{undeclared}"), format!("42161:{undeclared}")];
        let report = check(&artifact, &granted).await;
        assert!(report.passed(), "{features:?} granted: {report:#?}");
    }
}

#[test]
fn the_cli_prints_each_fix_and_reports_what_each_clause_exercised() {
    let artifact = relay_fixtures::native_plugin("relay-broken-native", &[]);
    let upstream = recorded_upstream();
    let run = |format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay-conformance"))
            .args(["rail", "--timeout-ms", "700", "--report", format])
            .args(["--config", &format!("upstream_url={upstream}")])
            .args(["--egress", "127.0.0.1"])
            .arg(&artifact)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run("text");
    assert!(text.contains("FAIL quotes-every-direction"), "{text}");
    assert!(
        text.contains("fix: `127.0.0.1` resolves to a private address: pass `--allow-private`"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["passed"], false);
    let clauses = json["reports"][0]["clauses"].as_array().unwrap();
    let quotes = clauses
        .iter()
        .find(|c| c["clause"] == "quotes-every-direction")
        .unwrap();
    assert_eq!(quotes["passed"], false);
    assert!(quotes["fix"].as_str().unwrap().contains("--allow-private"));
    let exercised: Vec<&str> = quotes["exercised"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert_eq!(exercised.len(), 2, "{exercised:?}");
    assert!(
        exercised[0].starts_with("evm->evm 42161→8453")
            || exercised[0].starts_with("evm->evm 8453→42161")
    );
}
