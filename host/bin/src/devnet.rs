//! `relay up`: the whole mesh on one machine — anvil chains with the
//! project's contracts (from `relay-devnet`), the host on top, loopback
//! only. Everything here is devnet-only: the keys are publicly known.

use crate::server::{Credentials, Host, StartError};
use relay_api::auth::OwnerTokenHash;
use relay_chain::signer::RelayerSigner;
use relay_devnet::{Devnet, DevnetConfig, Token};
use relay_simulators::{Simulators, Upstream};
use std::{collections::BTreeMap, path::PathBuf};

use relay_config::{
    ChainConfig, CredentialConfig, HostConfig, PriceFeedConfig, Secret, TokenConfig, VipCollection,
};

/// Options of `relay up`.
#[derive(Clone, Debug)]
pub struct UpOptions {
    /// Chain ids (default 1, 8453, 42161, 10).
    pub chains: Vec<u64>,
    /// Block time in seconds (default: instant mining).
    pub block_time: Option<u64>,
    /// The devnet's data directory.
    pub data_dir: PathBuf,
}

/// The host configuration that serves `devnet`: its chains and tokens, its
/// relayer, its membership collection on every chain (`vip.registry`), its
/// Chainlink-style price feeds on every chain (`pricefeeds`, heartbeat
/// [`DEVNET_FEED_HEARTBEAT_SECS`]), rails allowed to reach loopback (the
/// simulators live there).
///
/// The relayer's key is not part of it: `relay up` and the tests hand the
/// devnet relayer's signer to the host in-process
/// ([`Host::build_with`]); it is never written to the configuration file,
/// and a served host reads it from `RELAY_RELAYER_KEY` (`relay devnet`
/// writes that, devnet-only, to its `devnet.env`, mode 0600).
pub fn host_config(devnet: &Devnet, mut base: HostConfig) -> HostConfig {
    // the EIP-7702 batch executor `relay up` deploys on every chain
    let mut delegates = BTreeMap::new();
    let mut vaults = BTreeMap::new();
    for c in devnet.chains() {
        base.vip.registry.push(VipCollection {
            chain: c.chain_id,
            address: c.deployment.membership.to_string(),
            name: Some("Relay Devnet Membership".into()),
        });
        let tokens: BTreeMap<String, TokenConfig> = Token::ALL
            .iter()
            .map(|t| {
                let address = c.deployment.token(*t).to_string();
                (
                    t.symbol().to_string(),
                    TokenConfig {
                        address,
                        decimals: t.decimals(),
                    },
                )
            })
            .collect();
        base.pricefeeds
            .extend(c.deployment.price_feeds.iter().map(|f| PriceFeedConfig {
                pair: f.pair.clone(),
                chain: c.chain_id,
                address: f.address.to_string(),
                heartbeat_secs: DEVNET_FEED_HEARTBEAT_SECS,
            }));
        let id = c.chain_id.to_string();
        delegates.insert(id.clone(), c.deployment.delegate.to_string());
        // the ERC-4626 yield vault over USDC `relay up` deploys on every chain
        vaults.insert(id.clone(), c.deployment.vault.to_string());
        base.capabilities
            .rpc
            .insert(id.clone(), vec![c.rpc_url.clone()]);
        base.chains.insert(
            id,
            ChainConfig {
                name: None,
                rpc: vec![c.rpc_url.clone()],
                tokens,
                router: Some(c.deployment.router.to_string()),
                relayer_account: Some(relay_devnet::RELAYER_ACCOUNT_ADDRESS.to_string()),
            },
        );
    }
    base.relayer = Some(devnet.relayer.to_string());
    base.permit2 = relay_devnet::PERMIT2_ADDRESS.to_string();
    base.capabilities.allow_private_networks = true;
    // Devnet upstreams settle in about a second: poll them often.
    base.execution.track_interval_ms = 250;
    base.execution.resume_interval_ms = 1_000;
    base.execution.gap_check_interval_ms = 1_000;
    base.execution.route_lease_ms = 5_000;
    base.execution.idempotency_stale_ms = 20_000;
    base.sections
        .edit(
            relay_yield_account::SECTION,
            |y: &mut relay_yield_account::YieldConfig| y.vaults.extend(vaults),
        )
        .expect("the devnet's [ncaccount] is valid");
    let sponsor = |s: &mut relay_sponsor::SponsorConfig| {
        s.delegates.extend(delegates);
        s.lease_ms = 5_000;
    };
    base.sections
        .edit(relay_sponsor::SECTION, sponsor)
        .expect("the devnet's [sponsor] is valid");
    // paid names and name sales are paid in USDC on base (where x402
    // lives), else on the devnet's first chain
    let ids: Vec<u64> = devnet.chains().iter().map(|c| c.chain_id).collect();
    let first = match ids.contains(&8453) {
        true => 8453,
        false => ids.iter().copied().min().unwrap_or(0),
    };
    let names = |m: &mut relay_messaging::MessagingConfig| {
        m.names.payment_chain = first;
        m.names.lease_ms = 5_000;
    };
    base.sections
        .edit(relay_messaging::SECTION, names)
        .expect("the devnet's [messaging] is valid");
    // the privacy pool `relay up` deploys on one chain; held withdrawals
    // wait 2 to 20 s here (a real host: 10 min to 6 h)
    if let Some(c) = devnet.chains().iter().find(|c| c.deployment.pool.is_some()) {
        let pool = |p: &mut relay_pool::PoolConfig| {
            p.chain_id = c.chain_id;
            p.address = c.deployment.pool.map(|a| a.to_string()).unwrap_or_default();
            p.hold_min_ms = 2_000;
            p.hold_max_ms = 20_000;
            p.lease_ms = 5_000;
        };
        base.sections
            .edit(relay_pool::SECTION, pool)
            .expect("the devnet's [pool] is valid");
    }
    // anvil mines a block per transaction: one confirmation is final here
    base.sections
        .edit(
            relay_netting::SECTION,
            |n: &mut relay_netting::NettingConfig| {
                n.confirmations = 1;
                n.lease_ms = 5_000;
            },
        )
        .expect("the devnet's [netting] is valid");
    // Webhook receivers on the devnet listen on loopback, over plain http.
    base.notify.allow_http = ["127.0.0.1", "localhost", "[::1]"]
        .map(String::from)
        .to_vec();
    base
}

/// The heartbeat of the devnet's feeds: nothing updates them unless told
/// (`POST /simulator/price`), so a day (a devnet up longer needs a nudge).
pub const DEVNET_FEED_HEARTBEAT_SECS: u64 = 86_400;

/// The devnet's owner token (DEVNET ONLY: publicly known). `relay up` and
/// [`serve_on_loopback`] configure its hash, so `mode: self` can be tried
/// with `Authorization: Bearer relay-devnet-owner-token`; a served host
/// reads the hash of its own token from `RELAY_OWNER_TOKEN_SHA256`.
pub const DEVNET_OWNER_TOKEN: &str = "relay-devnet-owner-token";

/// The devnet's credentials: the devnet relayer's signer and the hash of
/// [`DEVNET_OWNER_TOKEN`], handed in memory.
fn devnet_credentials() -> Credentials {
    devnet_credentials_with_pool(0)
}

/// [`devnet_credentials`] with a relayer key pool of the devnet's first
/// `pool` pool keys ([`relay_devnet::keys::relayer_pool`]; at most
/// [`relay_devnet::keys::RELAYER_POOL_KEYS`], each funded on every chain).
pub fn devnet_credentials_with_pool(pool: usize) -> Credentials {
    let pool = (0..pool.min(relay_devnet::keys::RELAYER_POOL_KEYS))
        .map(|i| RelayerSigner::from_signer(relay_devnet::keys::relayer_pool(i)))
        .collect();
    Credentials {
        signer: Some(RelayerSigner::from_signer(relay_devnet::keys::relayer())),
        pool,
        owner_token: Some(OwnerTokenHash::of_token(DEVNET_OWNER_TOKEN)),
    }
}

/// The environment variable holding the devnet's upstream API keys
/// (DEVNET ONLY: the simulators check that a key is sent, not its value).
pub const DEVNET_UPSTREAM_KEY_ENV: &str = "RELAY_DEVNET_UPSTREAM_KEY";

/// Points every rail that speaks an upstream at its simulator, by
/// configuration only — the rails' code is the code that talks to the real
/// upstreams: base URLs, loopback egress, API keys by credential reference,
/// the devnet's CCTP contracts and token names, and the devnet's own
/// contracts as the only ones their plans may call.
pub fn point_rails_at(devnet: &Devnet, sims: &Simulators, mut config: HostConfig) -> HostConfig {
    for (name, header) in [("squid", "x-integrator-id"), ("bungee", "x-api-key")] {
        config.capabilities.credentials.insert(
            name.into(),
            CredentialConfig {
                header: header.into(),
                env: DEVNET_UPSTREAM_KEY_ENV.into(),
                // DEVNET ONLY: the simulators check that a key is sent, not
                // its value. Handed in memory: no environment is touched.
                value: Some(Secret::new(
                    std::env::var(DEVNET_UPSTREAM_KEY_ENV).unwrap_or_else(|_| "devnet-only".into()),
                )),
            },
        );
    }
    let contracts = devnet_contracts(devnet);
    for (rail, settings) in rail_settings(devnet, sims) {
        let rc = config.rails.entry(rail.to_string()).or_default();
        for (k, v) in settings {
            rc.config.insert(k, v);
        }
        if !rc.egress.iter().any(|h| h == "127.0.0.1") {
            rc.egress.push("127.0.0.1".into());
        }
        if ["squid", "bungee"].contains(&rail) {
            rc.credentials.push(rail.into());
            rc.config.insert("credential".into(), rail.into());
        }
        rc.contracts.extend(contracts.iter().cloned());
    }
    config
}

/// The devnet's bridge and CCTP contracts, as `<chain>:<address>`.
fn devnet_contracts(devnet: &Devnet) -> Vec<String> {
    let mut out = Vec::new();
    for c in devnet.chains() {
        let d = &c.deployment;
        out.push(format!("{}:{}", c.chain_id, d.bridge_deposit));
        if let Some(cctp) = &d.cctp {
            out.push(format!("{}:{}", c.chain_id, cctp.token_messenger));
            out.push(format!("{}:{}", c.chain_id, cctp.message_transmitter));
        }
    }
    out
}

/// Each rail's settings on the devnet.
fn rail_settings(devnet: &Devnet, sims: &Simulators) -> Vec<(&'static str, Vec<(String, String)>)> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    let base = |u: Upstream| vec![kv("base_url", sims.url(u))];
    let mut cctp = vec![kv("attestation_base", sims.url(Upstream::Circle))];
    for c in devnet.chains() {
        let id = c.chain_id;
        cctp.push((format!("usdc.{id}"), c.deployment.usdc.to_string()));
        if let Some(m) = &c.deployment.cctp {
            cctp.push((
                format!("token_messenger.{id}"),
                m.token_messenger.to_string(),
            ));
            cctp.push((
                format!("message_transmitter.{id}"),
                m.message_transmitter.to_string(),
            ));
        }
    }
    // The simulated ledgers name their tokens by symbol.
    let mut stable = base(Upstream::Allbridge);
    for (node, sym) in [
        ("solana", "USDC"),
        ("solana", "USDT"),
        ("stellar", "USDC"),
        ("tron", "USDT"),
    ] {
        stable.push((format!("token.{node}.{sym}"), sym.into()));
    }
    let chainflip = sims.url(Upstream::Chainflip);
    vec![
        ("lifi", base(Upstream::Lifi)),
        ("squid", base(Upstream::Squid)),
        ("bungee", base(Upstream::Bungee)),
        ("cctp", cctp),
        ("stablebridge", stable),
        (
            "btc",
            vec![
                kv("base_url", chainflip),
                kv("broker_url", &format!("{chainflip}/broker")),
                kv("bitcoin_network", "regtest"),
            ],
        ),
        (
            "tron",
            vec![
                kv("allbridge.base_url", sims.url(Upstream::Allbridge)),
                kv("allbridge.token.tron.USDT", "USDT"),
                kv("chainflip.base_url", chainflip),
            ],
        ),
        // No simulator speaks sui: the rail prices with an operator's
        // indicative rate, as it does wherever Allbridge has no sui pool.
        ("sui", vec![kv("indicative_fee_bps", "30")]),
    ]
}

/// Starts the devnet chains.
pub async fn start_chains(opts: &UpOptions) -> Result<Devnet, relay_devnet::DevnetError> {
    let mut cfg = DevnetConfig::with_chains(opts.chains.iter().copied());
    cfg.block_time_secs = opts.block_time;
    Devnet::start(cfg).await
}

/// What `relay up` prints once everything answers.
pub fn banner(devnet: &Devnet, sims: &Simulators, (config, relay): (&HostConfig, &str)) -> String {
    let base = format!("http://{}", config.listen);
    let mut s = String::new();
    s.push_str("relay devnet is up (DEVNET ONLY: every key below is publicly known)\n\n");
    s.push_str(&format!(
        "  API       {base}/api/status   {base}/api/route/chains\n"
    ));
    s.push_str(&format!(
        "  owner     {DEVNET_OWNER_TOKEN}   (Authorization: Bearer …; mode self spends the relayer's float)\n"
    ));
    s.push_str(&mesh_lines(devnet, sims));
    s.push_str(&format!(
        "  relay     {relay}   (the oblivious relay: relay ohttp --relay {relay} GET /api/route/chains)\n"
    ));
    if let Some(c) = devnet.chains().iter().find(|c| c.deployment.pool.is_some()) {
        let pool = c.deployment.pool.unwrap_or_default();
        s.push_str(&format!(
            "  pool      {pool} on chain {}   (the privacy pool, BETA AND UNAUDITED: see try)\n",
            c.chain_id
        ));
    }
    s.push_str(&format!("\n  try:\n    curl -s {base}/api/route/chains\n"));
    if let Some(c) = devnet.chains().iter().find(|c| c.deployment.pool.is_some()) {
        let key = hex::encode(relay_devnet::keys::anvil_signer(1).to_bytes());
        s.push_str(&format!(
            "    relay pool --url {base} note   # a privacy pool note; export RELAY_URL={base} RELAY_POOL_NOTE=<note> (keep it secret)\n    RELAY_POOL_WALLET_KEY=0x{key} relay pool deposit --rpc {}   # 0.00002 ETH from anvil account 1\n    relay pool withdraw --to 0xAnyAddress   # proven here, sent by the relayer: the recipient needs no ETH\n",
            c.rpc_url
        ));
    }
    let (src, dst) = match devnet.chains() {
        [a, b, ..] => (a.chain_id, b.chain_id),
        _ => (1, 8453),
    };
    s.push_str(&format!(
        "    curl -s -X POST {base}/api/route/execute -H 'content-type: application/json' -H 'authorization: Bearer {DEVNET_OWNER_TOKEN}' \\\n      -d '{{\"fromChain\":{src},\"toChain\":{dst},\"fromToken\":\"USDC\",\"amount\":\"5000000\",\"toAddress\":\"0xYourAddress\",\"live\":true}}'   # mode self: the operator pays from float\n"
    ));
    s.push_str(&format!(
        "    curl -s -X POST {base}/api/route/intent -H 'content-type: application/json' \\\n      -d '{{\"fromChain\":{src},\"toChain\":{dst},\"fromToken\":\"USDC\",\"toToken\":\"USDC\",\"amount\":\"5000000\",\"fromAddress\":\"0xYourAddress\"}}'   # one signature, no gas: sign a form's typed data, POST its submitBody\n"
    ));
    let ctl = sims.url(Upstream::Chainflip);
    s.push_str(&format!(
        "    curl -s -X POST {ctl}/simulator/mint -H 'content-type: application/json' \\\n      -d '{{\"chain\":{},\"token\":\"USDC\",\"to\":\"0xYourAddress\",\"amount\":\"1000000000\"}}'   # mint devnet tokens\n",
        devnet.chains().first().map_or(1, |c| c.chain_id)
    ));
    s.push_str(&format!(
        "    curl -s {base}/api/pricefeeds   # the on-chain price feeds the host reads\n    curl -s -X POST {ctl}/simulator/price -H 'content-type: application/json' \\\n      -d '{{\"chain\":{},\"pair\":\"ETH/USD\",\"answer\":\"350000000000\"}}'   # move a devnet feed (8 decimals: 3500 USD)\n",
        devnet.chains().first().map_or(1, |c| c.chain_id)
    ));
    s.push_str(&format!(
        "    curl -s -X POST {ctl}/simulator/bitcoin/send -H 'content-type: application/json' -d '{{\"to\":\"<deposit address>\",\"amountSats\":100000}}'   # send (simulated) BTC\n"
    ));
    s.push_str("\n  anvil test accounts 0-9 hold USDC, USDT and WBTC on every chain. Ctrl-C stops everything.\n");
    s
}

/// The relayer, Permit2, each chain (RPC, tokens, router) and each
/// simulator: what `relay up` and `relay devnet` both print.
pub fn mesh_lines(devnet: &Devnet, sims: &Simulators) -> String {
    let mut s = format!("  relayer   {}\n", devnet.relayer);
    s.push_str(&format!("  permit2   {}\n", relay_devnet::PERMIT2_ADDRESS));
    for c in devnet.chains() {
        s.push_str(&format!(
            "  chain {:<8} {}  USDC {}  USDT {}  WBTC {}  router {}\n",
            c.chain_id,
            c.rpc_url,
            c.deployment.usdc,
            c.deployment.usdt,
            c.deployment.wbtc,
            c.deployment.router
        ));
    }
    s.push_str("  simulators (not the real upstreams):\n");
    for u in Upstream::ALL {
        s.push_str(&format!("    {:<10} {}\n", format!("{u:?}"), sims.url(u)));
    }
    s
}

/// A host serving on an ephemeral loopback port with the devnet relayer's
/// key, as `relay up` serves it (tests, benches, the contract suite);
/// dropping it stops the server.
pub struct ServedHost {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The host's state (store, rails, config).
    pub state: relay_api::AppState,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Builds a host over `config` signing with the devnet relayer, with
/// [`DEVNET_OWNER_TOKEN`] as its owner token, and serves it on an
/// ephemeral loopback port.
pub async fn serve_on_loopback(config: HostConfig) -> Result<ServedHost, StartError> {
    serve_on_loopback_at(config, relay_types::clock::system()).await
}

/// Like [`serve_on_loopback`], the host reading time from `clock` (a test
/// advances a `ManualClock` instead of sleeping).
pub async fn serve_on_loopback_at(
    config: HostConfig,
    clock: relay_types::SharedClock,
) -> Result<ServedHost, StartError> {
    serve_on_loopback_as(config, clock, devnet_credentials()).await
}

/// Like [`serve_on_loopback_at`], with `creds` (a relayer key pool:
/// [`devnet_credentials_with_pool`]).
pub async fn serve_on_loopback_as(
    config: HostConfig,
    clock: relay_types::SharedClock,
    creds: Credentials,
) -> Result<ServedHost, StartError> {
    let host = Host::build_on(config, creds, clock).await?;
    let state = host.state.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|source| StartError::Listen {
            addr: ([127, 0, 0, 1], 0).into(),
            source,
        })?;
    let base = format!(
        "http://{}",
        listener.local_addr().map_err(|source| StartError::Listen {
            addr: ([127, 0, 0, 1], 0).into(),
            source,
        })?
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(host.serve_on(listener, async {
        let _ = stopped.await;
    }));
    Ok(ServedHost {
        base,
        state,
        _stop: stop,
    })
}

/// The devnet without its host: the chains with the project's contracts,
/// the upstream simulators, and the host configuration that serves them.
pub struct Mesh {
    /// The chains.
    pub chains: Devnet,
    /// The upstream simulators.
    pub sims: Simulators,
    /// `base` with the devnet's chains, tokens, feeds and rails
    /// ([`host_config`], [`point_rails_at`]).
    pub config: HostConfig,
}

/// Starts the chains and the simulators and configures a host over them
/// (what `relay up` and `relay devnet` share).
pub async fn start_mesh(base: HostConfig, opts: &UpOptions) -> Result<Mesh, UpError> {
    let chains = start_chains(opts).await?;
    let sims = Simulators::start(&chains)
        .await
        .map_err(|e| UpError::Simulators(e.to_string()))?;
    let config = point_rails_at(&chains, &sims, host_config(&chains, base));
    Ok(Mesh {
        chains,
        sims,
        config,
    })
}

/// `relay up`: chains, contracts, simulators and the host in one process,
/// until Ctrl-C; everything stops with it.
pub async fn up(
    config: HostConfig,
    chains: Vec<u64>,
    block_time: Option<u64>,
) -> Result<(), UpError> {
    let opts = UpOptions {
        chains,
        block_time,
        data_dir: config.data_dir.clone(),
    };
    let Mesh {
        chains,
        sims,
        config,
    } = start_mesh(config, &opts).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| StartError::Listen {
            addr: config.listen,
            source,
        })?;
    let relay = oblivious_relay(&config).await?;
    let banner = banner(&chains, &sims, (&config, &relay));
    let host = Host::build_with(config, devnet_credentials()).await?;
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let serve = tokio::spawn(host.serve_on(listener, async {
        let _ = tokio::signal::ctrl_c().await;
        let _ = ready_tx.send(());
    }));
    println!("{banner}");
    let _ = ready_rx.await;
    serve
        .await
        .map_err(|e| UpError::Simulators(format!("host task: {e}")))??;
    drop(sims);
    chains.stop();
    Ok(())
}

/// Starts the devnet's oblivious relay (`{relay_url}`, spec §4.11) on
/// the port after the host's (any free port when that one is taken),
/// forwarding to the host; its base URL. It stops with the process.
async fn oblivious_relay(config: &HostConfig) -> Result<String, StartError> {
    let mut next = config.listen;
    next.set_port(next.port().wrapping_add(1));
    let listener = match tokio::net::TcpListener::bind(next).await {
        Ok(l) => l,
        Err(_) => {
            let mut any = next;
            any.set_port(0);
            tokio::net::TcpListener::bind(any)
                .await
                .map_err(|source| StartError::Listen { addr: any, source })?
        }
    };
    let addr = listener
        .local_addr()
        .map_err(|source| StartError::Listen { addr: next, source })?;
    let gateway = format!("http://{}", config.listen);
    tokio::spawn(async move {
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        if let Err(e) = relay_privacy::relay::serve(listener, &gateway, stop).await {
            tracing::warn!(error = %e, "the oblivious relay stopped");
        }
    });
    Ok(format!("http://{addr}"))
}

/// Why `relay up` stopped.
#[derive(Debug, thiserror::Error)]
pub enum UpError {
    /// The chains.
    #[error("starting the devnet chains: {0}")]
    Chains(#[from] relay_devnet::DevnetError),
    /// The simulators.
    #[error("starting the upstream simulators: {0}")]
    Simulators(String),
    /// The host.
    #[error(transparent)]
    Host(#[from] StartError),
    /// Writing `relay devnet`'s files.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
