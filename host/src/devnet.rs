//! `relay up`: the whole mesh on one machine — anvil chains with the
//! project's contracts (from `relay-devnet`), the host on top, loopback
//! only. Everything here is devnet-only: the keys are publicly known.

use std::{collections::BTreeMap, path::PathBuf};

use relay_devnet::{Devnet, DevnetConfig, Token};
use relay_simulators::{Simulators, Upstream};

use crate::config::{ChainConfig, HostConfig, TokenConfig};

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
/// relayer, rails allowed to reach loopback (the simulators live there).
pub fn host_config(devnet: &Devnet, mut base: HostConfig) -> HostConfig {
    for c in devnet.chains() {
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
        let id = c.chain_id.to_string();
        base.capabilities
            .rpc
            .insert(id.clone(), vec![c.rpc_url.clone()]);
        base.chains.insert(
            id,
            ChainConfig {
                name: None,
                rpc: vec![c.rpc_url.clone()],
                tokens,
            },
        );
    }
    base.relayer = Some(devnet.relayer.to_string());
    base.permit2 = relay_devnet::PERMIT2_ADDRESS.to_string();
    base.capabilities.allow_private_networks = true;
    base
}

/// Points the rails that speak a simulated upstream at its simulator:
/// `base_url` (or `attestation_base`) in the rail's config, loopback in its
/// egress. Configuration only — the rails' code is the code that talks to
/// the real upstreams.
pub fn point_rails_at(sims: &Simulators, mut config: HostConfig) -> HostConfig {
    for (rail, key, upstream) in [
        ("lifi", "base_url", Upstream::Lifi),
        ("cctp", "attestation_base", Upstream::Circle),
    ] {
        let rc = config.rails.entry(rail.to_string()).or_default();
        rc.config
            .insert(key.to_string(), sims.url(upstream).to_string());
        if !rc.egress.iter().any(|h| h == "127.0.0.1") {
            rc.egress.push("127.0.0.1".into());
        }
    }
    config
}

/// Starts the devnet chains.
pub async fn start_chains(opts: &UpOptions) -> Result<Devnet, relay_devnet::DevnetError> {
    let mut cfg = DevnetConfig::with_chains(opts.chains.iter().copied());
    cfg.block_time_secs = opts.block_time;
    Devnet::start(cfg).await
}

/// What `relay up` prints once everything answers.
pub fn banner(devnet: &Devnet, sims: &Simulators, config: &HostConfig) -> String {
    let base = format!("http://{}", config.listen);
    let mut s = String::new();
    s.push_str("relay devnet is up (DEVNET ONLY: every key below is publicly known)\n\n");
    s.push_str(&format!(
        "  API       {base}/api/status   {base}/api/route/chains\n"
    ));
    s.push_str(&format!("  relayer   {}\n", devnet.relayer));
    s.push_str(&format!("  permit2   {}\n", relay_devnet::PERMIT2_ADDRESS));
    for c in devnet.chains() {
        s.push_str(&format!(
            "  chain {:<8} {}  USDC {}  USDT {}  WBTC {}\n",
            c.chain_id, c.rpc_url, c.deployment.usdc, c.deployment.usdt, c.deployment.wbtc
        ));
    }
    s.push_str("  simulators (not the real upstreams):\n");
    for u in Upstream::ALL {
        s.push_str(&format!("    {:<10} {}\n", format!("{u:?}"), sims.url(u)));
    }
    s.push_str(&format!("\n  try:\n    curl -s {base}/api/route/chains\n"));
    let ctl = sims.url(Upstream::Chainflip);
    s.push_str(&format!(
        "    curl -s -X POST {ctl}/simulator/mint -H 'content-type: application/json' \\\n      -d '{{\"chain\":{},\"token\":\"USDC\",\"to\":\"0xYourAddress\",\"amount\":\"1000000000\"}}'   # mint devnet tokens\n",
        devnet.chains().first().map_or(1, |c| c.chain_id)
    ));
    s.push_str(&format!(
        "    curl -s -X POST {ctl}/simulator/bitcoin/send -H 'content-type: application/json' -d '{{\"to\":\"<deposit address>\",\"amountSats\":100000}}'   # send (simulated) BTC\n"
    ));
    s.push_str("\n  anvil test accounts 0-9 hold USDC, USDT and WBTC on every chain. Ctrl-C stops everything.\n");
    s
}
