//! The three aggregator rails end to end on the devnet, each in the
//! packaging it ships in (lifi and squid as wasm, bungee native), loaded by
//! the host's real loader and pointed at their upstream simulator **by
//! configuration only** (`base_url`, an egress entry, a credential): quote
//! through the simulator's real wire format, prepare the declarative plan,
//! send its approve and call on the source anvil (the test stands in for the
//! host's executor, acting as the relayer), then track the route through the
//! upstream's status API until DONE and find the quoted amount delivered on
//! the destination anvil.

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use relay_capabilities::CapabilityBroker;
use relay_config::{CredentialConfig, HostConfig, RailConfig, Secret};
use relay_devnet::{contracts::TestToken, keys, Devnet, DevnetConfig};
use relay_plugin_api::{
    Amount, ChainRef, PlanAction, PrepareRequest, QuoteRequest, SourceMode, Token, TrackRequest,
    TrackState,
};
use relay_registry::PluginKind;
use relay_runtime::{rails::RailSet, LoadedRail};
use relay_simulators::{Simulators, Upstream};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u128 = 5_000_000;

/// One rail under test: its artifact, its simulator, the header its
/// upstream wants and the credential name the operator gives it.
struct Case {
    rail: &'static str,
    artifact: fn() -> (PluginKind, PathBuf),
    upstream: Upstream,
    credential: Option<(&'static str, &'static str)>,
}

const CREDENTIAL_ENV: &str = "RELAY_E2E_UPSTREAM_KEY";

fn config(case: &Case, sim_url: &str, relayer: Address, dir: &std::path::Path) -> HostConfig {
    let mut c = HostConfig {
        data_dir: relay_fixtures::data_dir(dir),
        relayer: Some(relayer.to_string()),
        ..HostConfig::default()
    };
    c.capabilities.allow_private_networks = true;
    let mut rail = RailConfig {
        egress: vec!["127.0.0.1".into()],
        ..RailConfig::default()
    };
    rail.config.insert("base_url".into(), sim_url.into());
    if let Some((name, header)) = case.credential {
        c.capabilities.credentials.insert(
            name.into(),
            CredentialConfig {
                header: header.into(),
                env: CREDENTIAL_ENV.into(),
                // DEVNET ONLY: the simulators check presence, not value.
                value: Some(Secret::new("devnet-e2e")),
            },
        );
        rail.credentials.push(name.into());
        rail.config.insert("credential".into(), name.into());
    }
    c.rails = BTreeMap::from([(case.rail.to_string(), rail)]);
    c
}

async fn load(case: &Case, config: &HostConfig) -> LoadedRail {
    let (kind, path) = (case.artifact)();
    let broker = std::sync::Arc::new(CapabilityBroker::new(&config.capabilities));
    let sha = relay_registry::sha256_file(&path).unwrap();
    RailSet::new(config, broker)
        .unwrap()
        .load_artifact(kind, &path, &sha)
        .await
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

fn usdc(devnet: &Devnet, chain: u64) -> Token {
    Token {
        symbol: "USDC".into(),
        address: Some(devnet.chain(chain).unwrap().deployment.usdc.to_string()),
        decimals: 6,
    }
}

async fn balance(p: &DynProvider, token: Address, who: Address) -> U256 {
    TestToken::new(token, p)
        .balanceOf(who)
        .call()
        .await
        .unwrap()
}

/// Sends the plan's on-chain steps from `relayer` (an unlocked anvil
/// account) and returns the source transaction: the call's hash.
async fn execute(devnet: &Devnet, steps: &[PlanAction], relayer: Address) -> String {
    let p = devnet.chain(SRC).unwrap().provider();
    let mut src_tx = None;
    for step in steps {
        assert_eq!(
            step.chain().unwrap_or(ChainRef::Evm(SRC)),
            ChainRef::Evm(SRC),
            "{step:?}"
        );
        let tx = match step {
            PlanAction::Approve {
                token,
                spender,
                amount,
                ..
            } => TestToken::new(token.parse().unwrap(), &p)
                .approve(spender.parse().unwrap(), amount.0)
                .from(relayer)
                .into_transaction_request(),
            PlanAction::ContractCall {
                to, data, value, ..
            } => TransactionRequest::default()
                .from(relayer)
                .to(to.parse().unwrap())
                .value(value.0)
                .input(data.parse::<Bytes>().unwrap().into()),
            PlanAction::AwaitUpstream { .. } => break,
            other => panic!("unexpected step for an operator-funded route: {other:?}"),
        };
        let receipt = p
            .send_transaction(tx)
            .await
            .unwrap()
            .get_receipt()
            .await
            .unwrap();
        assert!(receipt.status(), "{step:?} reverted");
        src_tx = Some(format!("{:#x}", receipt.transaction_hash));
    }
    src_tx.expect("the plan has a contract call")
}

async fn settles(case: Case) {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let sims = Simulators::start(&devnet).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let relayer = keys::anvil_address(1);
    let recipient = keys::anvil_address(2);
    let rail = load(
        &case,
        &config(&case, sims.url(case.upstream), relayer, dir.path()),
    )
    .await;
    assert_eq!(rail.id(), case.rail);

    let req = QuoteRequest {
        from_chain: ChainRef::Evm(SRC),
        to_chain: ChainRef::Evm(DST),
        from_token: usdc(&devnet, SRC),
        to_token: usdc(&devnet, DST),
        amount: Amount::from_u128(AMOUNT),
        from_address: Some(relayer.to_string()),
        to_address: Some(recipient.to_string()),
        slippage_bps: 50,
        member: false,
    };
    let quote = rail
        .quote(req.clone())
        .await
        .expect("quote from the simulator");
    assert_eq!(
        (quote.rail.as_str(), quote.lane.as_str()),
        (case.rail, "evm->evm")
    );
    assert!(quote.amount_out > Amount::ZERO && quote.min_out <= quote.amount_out);
    assert!(quote.upstream_ref.is_some(), "{quote:?}");

    let plan = rail
        .prepare(PrepareRequest {
            route_id: format!("rt_e2e_{}", case.rail),
            quote: quote.clone(),
            from_chain: req.from_chain,
            to_chain: req.to_chain,
            from_token_address: req.from_token.address.clone(),
            to_token_address: req.to_token.address.clone(),
            sender: relayer.to_string(),
            recipient: recipient.to_string(),
            relayer: relayer.to_string(),
            mode: SourceMode::Operator,
        })
        .await
        .expect("plan");
    let dst = devnet.chain(DST).unwrap();
    let dst_usdc = dst.deployment.usdc;
    let before = balance(&dst.provider(), dst_usdc, recipient).await;
    let src_tx = execute(&devnet, &plan.steps, relayer).await;

    let track = TrackRequest {
        route_id: format!("rt_e2e_{}", case.rail),
        reference: plan.track_ref.clone(),
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        src_tx: Some(src_tx),
    };
    let mut status = None;
    for _ in 0..300 {
        let s = rail.track(track.clone()).await.expect("track");
        assert!(
            !matches!(s.state, TrackState::Failed | TrackState::Refunded),
            "{s:?}"
        );
        if s.state == TrackState::Done {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let done = status.unwrap_or_else(|| panic!("{} never reported DONE", case.rail));
    assert_eq!(done.stage.as_deref(), Some("COMPLETED"));
    assert!(
        done.dest_tx.as_deref().is_some_and(|t| t.starts_with("0x")),
        "{done:?}"
    );
    let delivered = balance(&dst.provider(), dst_usdc, recipient).await - before;
    assert_eq!(delivered, quote.amount_out.0, "the quoted amount arrived");
    drop(sims);
    devnet.stop();
}

fn wasm(feature: &'static str) -> (PluginKind, PathBuf) {
    (
        PluginKind::Wasm,
        relay_fixtures::wasm_plugin("relay-wasm-shell", &[feature]),
    )
}

fn native(feature: &'static str) -> (PluginKind, PathBuf) {
    (
        PluginKind::Native,
        relay_fixtures::native_plugin("relay-native-shell", &[feature]),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn lifi_quotes_executes_and_tracks_to_done_on_the_devnet() {
    settles(Case {
        rail: "lifi",
        artifact: || wasm("lifi"),
        upstream: Upstream::Lifi,
        credential: None,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn squid_quotes_executes_and_tracks_to_done_on_the_devnet() {
    settles(Case {
        rail: "squid",
        artifact: || wasm("squid"),
        upstream: Upstream::Squid,
        credential: Some(("squid", "x-integrator-id")),
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bungee_quotes_executes_and_tracks_to_done_on_the_devnet() {
    settles(Case {
        rail: "bungee",
        artifact: || native("bungee"),
        upstream: Upstream::Bungee,
        credential: Some(("bungee", "x-api-key")),
    })
    .await;
}
