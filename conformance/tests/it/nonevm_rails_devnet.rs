//! The burn-and-mint and non-EVM rails end to end on the devnet, each in
//! the packaging it ships in (cctp as wasm; stablebridge, btc, tron native),
//! loaded by the host's real loader and pointed at their upstream simulator
//! **by configuration only** (`attestation_base`/`base_url`/`broker_url`,
//! the devnet's contract addresses, an egress entry): quote through the
//! simulator's real wire format, prepare the declarative plan, send its
//! on-chain steps as the relayer (the test stands in for the host's
//! executor), follow up where the rail says so, and track to DONE — real
//! tokens on the anvil chains, the simulated ledger for non-EVM legs.

use std::{collections::BTreeMap, path::PathBuf, sync::Arc, time::Duration};

use alloy::{
    primitives::{Address, Bytes, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
};
use relay_capabilities::CapabilityBroker;
use relay_config::{HostConfig, RailConfig};
use relay_devnet::{contracts::TestToken, keys, Devnet, DevnetConfig};
use relay_plugin_api::{
    Amount, ChainRef, NonEvmNode, PlanAction, PrepareRequest, QuoteRequest, RailErrorKind,
    RailQuote, SourceMode, Token, TrackRequest, TrackState, TrackStatus,
};
use relay_registry::PluginKind;
use relay_runtime::{rails::RailSet, CallError, LoadedRail};
use relay_simulators::{ledger::Node, Simulators};

const BASE: u64 = 8453;
const ARBITRUM: u64 = 42161;
const ETHEREUM: u64 = 1;
const SOLANA_RECIPIENT: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const BTC_RECIPIENT: &str = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080";
const BTC_REFUND: &str = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080";

/// A devnet with its simulators, and the anvil accounts acting as relayer
/// and recipient (both hold test tokens).
struct Mesh {
    devnet: Devnet,
    sims: Simulators,
    relayer: Address,
    recipient: Address,
    dir: tempfile::TempDir,
}

impl Mesh {
    async fn start(chains: &[u64]) -> Mesh {
        let devnet = Devnet::start(DevnetConfig::with_chains(chains.iter().copied()))
            .await
            .expect("devnet");
        let sims = Simulators::start(&devnet).await.expect("simulators");
        Mesh {
            devnet,
            sims,
            relayer: keys::anvil_address(1),
            recipient: keys::anvil_address(2),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn usdc(&self, chain: u64) -> Token {
        let address = self.devnet.chain(chain).unwrap().deployment.usdc;
        Token {
            symbol: "USDC".into(),
            address: Some(address.to_string()),
            decimals: 6,
        }
    }

    fn provider(&self, chain: u64) -> DynProvider {
        self.devnet.chain(chain).unwrap().provider()
    }

    async fn usdc_balance(&self, chain: u64, who: Address) -> U256 {
        let token = self.devnet.chain(chain).unwrap().deployment.usdc;
        TestToken::new(token, self.provider(chain))
            .balanceOf(who)
            .call()
            .await
            .unwrap()
    }

    /// The host configuration serving `rail` with `settings`: the devnet's
    /// RPCs, the relayer, loopback egress (the simulators live there).
    fn config(&self, rail: &str, settings: &[(&str, String)]) -> HostConfig {
        let mut c = HostConfig {
            data_dir: relay_fixtures::data_dir(self.dir.path()),
            relayer: Some(self.relayer.to_string()),
            ..HostConfig::default()
        };
        c.capabilities.allow_private_networks = true;
        for chain in self.devnet.chains() {
            c.capabilities
                .rpc
                .insert(chain.chain_id.to_string(), vec![chain.rpc_url.clone()]);
        }
        let mut rc = RailConfig {
            egress: vec!["127.0.0.1".into()],
            ..RailConfig::default()
        };
        for (k, v) in settings {
            rc.config.insert(k.to_string(), v.clone());
        }
        c.rails = BTreeMap::from([(rail.to_string(), rc)]);
        c
    }

    /// Quotes `req` on `rail`, plans it from the relayer to `recipient`,
    /// sends the plan on `chain` and tracks the route to DONE (stage
    /// COMPLETED); returns the quote.
    async fn settle(
        &self,
        rail: &LoadedRail,
        chain: u64,
        req: &QuoteRequest,
        recipient: &str,
    ) -> RailQuote {
        let quote = rail.quote(req.clone()).await.expect("quote");
        let sender = self.relayer.to_string();
        let plan = rail
            .prepare(prepare_request(
                req,
                &quote,
                &sender,
                recipient,
                self.relayer,
            ))
            .await
            .expect("plan");
        let src_tx = self.send(chain, &plan.steps).await;
        let done = track_until(
            rail,
            &track_request(req, plan.track_ref.clone(), Some(src_tx)),
            |s| s.state == TrackState::Done,
        )
        .await;
        assert_eq!(done.stage.as_deref(), Some("COMPLETED"));
        quote
    }

    /// Sends the plan's steps on `chain` from the relayer until it awaits
    /// the upstream; returns the last transaction's hash.
    async fn send(&self, chain: u64, steps: &[PlanAction]) -> String {
        let mut last = None;
        for step in steps {
            if matches!(step, PlanAction::AwaitUpstream { .. }) {
                break;
            }
            assert_eq!(step.chain(), Some(ChainRef::Evm(chain)), "{step:?}");
            last = Some(self.send_one(chain, step).await);
        }
        last.expect("the plan moves funds on chain")
    }

    async fn send_one(&self, chain: u64, step: &PlanAction) -> String {
        let p = self.provider(chain);
        let tx = match step {
            PlanAction::Approve {
                token,
                spender,
                amount,
                ..
            } => TestToken::new(token.parse().unwrap(), &p)
                .approve(spender.parse().unwrap(), amount.0)
                .from(self.relayer)
                .into_transaction_request(),
            PlanAction::ContractCall {
                to, data, value, ..
            } => TransactionRequest::default()
                .from(self.relayer)
                .to(to.parse().unwrap())
                .value(value.0)
                .input(data.parse::<Bytes>().unwrap().into()),
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
        format!("{:#x}", receipt.transaction_hash)
    }
}

async fn load(config: &HostConfig, kind: PluginKind, path: PathBuf) -> LoadedRail {
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let sha = relay_registry::sha256_file(&path).unwrap();
    RailSet::new(config, broker)
        .unwrap()
        .load_artifact(kind, &path, &sha)
        .await
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

fn native(feature: &str) -> (PluginKind, PathBuf) {
    let path = relay_fixtures::native_plugin("relay-native-shell", &[feature]);
    (PluginKind::Native, path)
}

fn quote_request(
    from: ChainRef,
    to: ChainRef,
    tokens: (Token, Token),
    amount: u128,
) -> QuoteRequest {
    QuoteRequest {
        from_chain: from,
        to_chain: to,
        from_token: tokens.0,
        to_token: tokens.1,
        amount: Amount::from_u128(amount),
        from_address: None,
        to_address: None,
        slippage_bps: 50,
        member: false,
    }
}

fn prepare_request(
    req: &QuoteRequest,
    quote: &RailQuote,
    sender: &str,
    recipient: &str,
    relayer: Address,
) -> PrepareRequest {
    PrepareRequest {
        route_id: format!("rt_e2e_{}", quote.rail),
        quote: quote.clone(),
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        from_token_address: req.from_token.address.clone(),
        to_token_address: req.to_token.address.clone(),
        sender: sender.into(),
        recipient: recipient.into(),
        relayer: relayer.to_string(),
        mode: SourceMode::Operator,
    }
}

/// Tracks until `until` holds (never FAILED/REFUNDED on the way).
async fn track_until(
    rail: &LoadedRail,
    req: &TrackRequest,
    until: impl Fn(&TrackStatus) -> bool,
) -> TrackStatus {
    for _ in 0..300 {
        let s = rail.track(req.clone()).await.expect("track");
        assert!(
            !matches!(s.state, TrackState::Failed | TrackState::Refunded),
            "{s:?}"
        );
        if until(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{} never reached the expected state for {req:?}", rail.id())
}

fn track_request(
    req: &QuoteRequest,
    reference: Option<String>,
    src_tx: Option<String>,
) -> TrackRequest {
    TrackRequest {
        route_id: "rt_e2e".into(),
        reference,
        from_chain: req.from_chain,
        to_chain: req.to_chain,
        src_tx,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cctp_burns_gets_circles_attestation_and_mints_one_to_one() {
    let mesh = Mesh::start(&[BASE, ARBITRUM]).await;
    let mut settings = vec![("attestation_base", mesh.sims.circle_url().to_string())];
    for c in [BASE, ARBITRUM] {
        let d = &mesh.devnet.chain(c).unwrap().deployment;
        let cctp = d.cctp.as_ref().expect("a CCTP chain");
        settings.push((
            leak(format!("token_messenger.{c}")),
            cctp.token_messenger.to_string(),
        ));
        settings.push((
            leak(format!("message_transmitter.{c}")),
            cctp.message_transmitter.to_string(),
        ));
        settings.push((leak(format!("usdc.{c}")), d.usdc.to_string()));
    }
    let config = mesh.config("cctp", &settings);
    let rail = load(
        &config,
        PluginKind::Wasm,
        relay_fixtures::wasm_plugin("relay-wasm-shell", &["cctp"]),
    )
    .await;
    let req = quote_request(
        ChainRef::Evm(BASE),
        ChainRef::Evm(ARBITRUM),
        (mesh.usdc(BASE), mesh.usdc(ARBITRUM)),
        7_000_000,
    );
    let quote = rail.quote(req.clone()).await.expect("quote");
    assert_eq!(quote.amount_out, req.amount, "1:1");
    let recipient = mesh.recipient.to_string();
    let plan = rail
        .prepare(prepare_request(
            &req,
            &quote,
            &mesh.relayer.to_string(),
            &recipient,
            mesh.relayer,
        ))
        .await
        .expect("plan");
    let before = mesh.usdc_balance(ARBITRUM, mesh.recipient).await;
    let burn = mesh.send(BASE, &plan.steps).await;

    let attested = track_until(&rail, &track_request(&req, None, Some(burn.clone())), |s| {
        !s.follow_up.is_empty()
    })
    .await;
    assert_eq!(attested.stage.as_deref(), Some("SENDING"));
    let mint = mesh.send_one(ARBITRUM, &attested.follow_up[0]).await;
    let done = track_until(
        &rail,
        &track_request(&req, Some(mint.clone()), Some(burn)),
        |s| s.state == TrackState::Done,
    )
    .await;
    assert_eq!(done.dest_tx.as_deref(), Some(mint.as_str()));
    let delivered = mesh.usdc_balance(ARBITRUM, mesh.recipient).await - before;
    assert_eq!(delivered, U256::from(7_000_000u64), "minted one to one");
}

/// Configuration keys are `&'static str` in the settings list.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn stablebridge_sends_evm_to_solana_and_refuses_unfunded_solana_to_evm() {
    let mesh = Mesh::start(&[BASE]).await;
    let settings = [
        ("base_url", mesh.sims.allbridge_url().to_string()),
        // The simulated ledger names its tokens; symbols are accepted too.
        ("token.solana.USDC", "USDC".to_string()),
    ];
    let config = mesh.config("stablebridge", &settings);
    let (kind, path) = native("stablebridge");
    let rail = load(&config, kind, path).await;
    let solana = ChainRef::NonEvm(NonEvmNode::Solana);
    let sol_usdc = Token {
        symbol: "USDC".into(),
        address: None,
        decimals: 6,
    };
    let req = quote_request(
        ChainRef::Evm(BASE),
        solana,
        (mesh.usdc(BASE), sol_usdc.clone()),
        9_000_000,
    );
    let quote = mesh.settle(&rail, BASE, &req, SOLANA_RECIPIENT).await;
    assert_eq!(quote.lane, "evm->solana");
    assert!(!quote.amount_out.is_zero() && quote.amount_out < req.amount);
    assert_eq!(quote.detail["feePaymentMethod"], "WITH_STABLECOIN");
    let credited = mesh
        .sims
        .ledger_balance(Node::Solana, SOLANA_RECIPIENT, "USDC");
    assert_eq!(
        credited,
        quote.amount_out.to_u128().unwrap(),
        "the quoted amount on the simulated ledger"
    );

    let back = quote_request(
        solana,
        ChainRef::Evm(BASE),
        (sol_usdc, mesh.usdc(BASE)),
        9_000_000,
    );
    let quote = rail.quote(back.clone()).await.expect("reverse quote");
    let refused = rail
        .prepare(prepare_request(
            &back,
            &quote,
            SOLANA_RECIPIENT,
            &mesh.recipient.to_string(),
            mesh.relayer,
        ))
        .await;
    match refused {
        Err(CallError::Rail(e)) => assert_eq!(e.kind, RailErrorKind::FundsRequired, "{e}"),
        other => panic!("expected FUNDS_REQUIRED, got {other:?}"),
    }
}

fn btc_settings(mesh: &Mesh) -> Vec<(&'static str, String)> {
    vec![
        ("base_url", mesh.sims.chainflip_url().to_string()),
        (
            "broker_url",
            format!("{}/broker", mesh.sims.chainflip_url()),
        ),
        ("bitcoin_network", "regtest".into()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn btc_bitcoin_to_evm_awaits_the_users_deposit_then_pays_out() {
    let mesh = Mesh::start(&[ARBITRUM]).await;
    let (kind, path) = native("btc");
    let rail = load(&mesh.config("btc", &btc_settings(&mesh)), kind, path).await;
    let btc = Token {
        symbol: "BTC".into(),
        address: None,
        decimals: 8,
    };
    let req = quote_request(
        ChainRef::NonEvm(NonEvmNode::Bitcoin),
        ChainRef::Evm(ARBITRUM),
        (btc, mesh.usdc(ARBITRUM)),
        150_000,
    );
    let quote = rail.quote(req.clone()).await.expect("quote");
    assert_eq!(quote.lane, "bitcoin->evm");
    let plan = rail
        .prepare(prepare_request(
            &req,
            &quote,
            BTC_REFUND,
            &mesh.recipient.to_string(),
            mesh.relayer,
        ))
        .await
        .expect("plan");
    let [PlanAction::DepositInstruction {
        address, amount, ..
    }, PlanAction::AwaitUpstream { .. }] = plan.steps.as_slice()
    else {
        panic!("expected a deposit instruction, got {plan:#?}");
    };
    assert!(
        plan.steps.iter().all(|s| !s.moves_funds()),
        "the relayer signs no bitcoin spend"
    );
    let track = track_request(&req, plan.track_ref.clone(), None);
    let waiting = rail.track(track.clone()).await.expect("track");
    assert_eq!(
        waiting.state,
        TrackState::Pending,
        "AWAITING_DEPOSIT until the user sends BTC"
    );

    let before = mesh.usdc_balance(ARBITRUM, mesh.recipient).await;
    mesh.sims
        .send_btc(address, amount.to_u128().unwrap() as u64)
        .expect("the user sends BTC");
    let done = track_until(&rail, &track, |s| s.state == TrackState::Done).await;
    assert_eq!(done.stage.as_deref(), Some("COMPLETED"));
    let delivered = mesh.usdc_balance(ARBITRUM, mesh.recipient).await - before;
    assert!(
        delivered >= quote.min_out.0 && !delivered.is_zero(),
        "{delivered} vs {quote:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn btc_usdc_to_bitcoin_is_a_vault_swap_that_lands_on_the_simulated_ledger() {
    let mesh = Mesh::start(&[ETHEREUM]).await;
    let (kind, path) = native("btc");
    let rail = load(&mesh.config("btc", &btc_settings(&mesh)), kind, path).await;
    let btc = Token {
        symbol: "BTC".into(),
        address: None,
        decimals: 8,
    };
    let req = quote_request(
        ChainRef::Evm(ETHEREUM),
        ChainRef::NonEvm(NonEvmNode::Bitcoin),
        (mesh.usdc(ETHEREUM), btc),
        250_000_000,
    );
    // The relayer holds the USDC: the funds gate passes and the plan is made.
    let quote = mesh.settle(&rail, ETHEREUM, &req, BTC_RECIPIENT).await;
    assert_eq!(quote.lane, "evm->bitcoin");
    let sats = mesh
        .sims
        .ledger_balance(Node::Bitcoin, BTC_RECIPIENT, "BTC");
    assert!(
        sats > 0 && sats >= quote.min_out.to_u128().unwrap(),
        "{sats} sats for {quote:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tron_comparator_prices_the_reverse_lane_from_allbridge_and_never_executes() {
    let mesh = Mesh::start(&[BASE]).await;
    let settings = [
        ("allbridge.base_url", mesh.sims.allbridge_url().to_string()),
        ("allbridge.token.tron.USDT", "USDT".to_string()),
    ];
    let (kind, path) = native("tron");
    let rail = load(&mesh.config("tron", &settings), kind, path).await;
    let usdt = |chain: Option<u64>| Token {
        symbol: "USDT".into(),
        address: chain.map(|c| mesh.devnet.chain(c).unwrap().deployment.usdt.to_string()),
        decimals: 6,
    };
    let req = quote_request(
        ChainRef::NonEvm(NonEvmNode::Tron),
        ChainRef::Evm(BASE),
        (usdt(None), usdt(Some(BASE))),
        4_000_000,
    );
    let quote = rail.quote(req.clone()).await.expect("quote");
    assert!(
        quote.quote_only_reason.is_some() && !quote.amount_out.is_zero(),
        "{quote:?}"
    );
    let refused = rail
        .prepare(prepare_request(
            &req,
            &quote,
            "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
            &mesh.recipient.to_string(),
            mesh.relayer,
        ))
        .await;
    assert!(
        matches!(refused, Err(CallError::Rail(ref e)) if e.kind == RailErrorKind::UnsupportedLane),
        "{refused:?}"
    );
}
