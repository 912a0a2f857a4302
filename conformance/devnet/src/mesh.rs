//! The whole devnet: N anvil chains with every contract deployed, linked and funded.
//!
//! [`Devnet::start`] validates the chain ids, starts the nodes (automining), deploys on every
//! chain concurrently, links the CCTP chains to each other, funds the relayer, anvil's test
//! accounts and the bridge inventory, and only then switches to interval mining if a block
//! time was asked for. Dropping the [`Devnet`] kills every node.

use std::{path::PathBuf, time::Duration};

use alloy::{
    primitives::{Address, I256, U256},
    providers::{DynProvider, Provider, ProviderBuilder},
    transports::http::reqwest::Url,
};
use futures::future::try_join_all;
use serde::Serialize;
use tokio::sync::Mutex;

use crate::{
    anvil::{self, AnvilConfig, AnvilNode},
    chains,
    contracts::{Membership, PERMIT2_ADDRESS},
    deploy::{self, ChainDeployment, Token},
    keys, DevnetError, Result,
};

/// What [`Devnet::start`] brings up.
#[derive(Debug, Clone)]
pub struct DevnetConfig {
    /// The chains to run, each from the gasless set; default [`chains::DEFAULT_CHAIN_IDS`].
    pub chain_ids: Vec<u64>,
    /// Interval mining in whole seconds, applied after deployment; `None` (default) automines.
    pub block_time_secs: Option<u64>,
    /// The relayer to fund with ETH and inventory; default [`keys::relayer`]'s address.
    pub relayer: Address,
    /// The anvil binary; default [`anvil::locate_anvil`].
    pub anvil_binary: Option<PathBuf>,
    /// How long each node may take to answer; default 30 s.
    pub startup_timeout: Duration,
}

impl Default for DevnetConfig {
    fn default() -> Self {
        Self {
            chain_ids: chains::DEFAULT_CHAIN_IDS.to_vec(),
            block_time_secs: None,
            relayer: keys::relayer().address(),
            anvil_binary: None,
            startup_timeout: Duration::from_secs(30),
        }
    }
}

impl DevnetConfig {
    /// The default configuration with other chains.
    pub fn with_chains(chain_ids: impl IntoIterator<Item = u64>) -> Self {
        Self {
            chain_ids: chain_ids.into_iter().collect(),
            ..Self::default()
        }
    }

    fn validate(&self) -> Result<()> {
        if self.chain_ids.is_empty() {
            return Err(DevnetError::NoChains);
        }
        for (i, id) in self.chain_ids.iter().enumerate() {
            if !chains::is_gasless(*id) {
                return Err(DevnetError::UnsupportedChain(*id));
            }
            if self.chain_ids[..i].contains(id) {
                return Err(DevnetError::DuplicateChain(*id));
            }
        }
        Ok(())
    }
}

/// One running devnet chain.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DevnetChain {
    /// The chain id.
    pub chain_id: u64,
    /// The JSON-RPC URL, `http://127.0.0.1:<port>`.
    pub rpc_url: String,
    /// Every contract address on this chain.
    pub deployment: ChainDeployment,
    #[serde(skip)]
    deployer: DynProvider,
    /// Serialises the deployer's transactions so concurrent helpers never race on its nonce.
    #[serde(skip)]
    deployer_lock: Mutex<()>,
    #[serde(skip)]
    node: AnvilNode,
    /// The wallet-less provider, built on first use: building one loads
    /// the system's trust store (tens of milliseconds of CPU), and tests
    /// read balances in loops.
    #[serde(skip)]
    reader: std::sync::OnceLock<DynProvider>,
}

impl DevnetChain {
    /// The JSON-RPC URL as a parsed URL.
    pub fn url(&self) -> Url {
        self.node.rpc_url()
    }

    /// A provider for this chain without a wallet (reads, and `eth_sendTransaction` from
    /// anvil's unlocked test accounts).
    pub fn provider(&self) -> DynProvider {
        self.reader
            .get_or_init(|| {
                ProviderBuilder::new()
                    .connect_reqwest(crate::rpc_client(), self.url())
                    .erased()
            })
            .clone()
    }
}

/// A running devnet; every node is killed when it is dropped.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Devnet {
    /// The funded relayer.
    pub relayer: Address,
    /// The Permit2-compatible contract's address on every chain.
    pub permit2: Address,
    /// The `RelayRouter`'s address, the same on every chain (the relayer is its relayer).
    pub router: Address,
    /// The CCTP attester.
    pub attester: Address,
    /// The owner of every chain's `BridgeDeposit`.
    pub bridge_operator: Address,
    /// The chains, in the configured order.
    pub chains: Vec<DevnetChain>,
}

impl Devnet {
    /// Starts the chains, deploys, links and funds everything (see the module docs).
    pub async fn start(config: DevnetConfig) -> Result<Self> {
        config.validate()?;
        let binary = match &config.anvil_binary {
            Some(path) => path.clone(),
            None => anvil::locate_anvil()?,
        };
        let node_configs: Vec<AnvilConfig> = config
            .chain_ids
            .iter()
            .map(|id| AnvilConfig {
                startup_timeout: config.startup_timeout,
                ..AnvilConfig::new(*id)
            })
            .collect();
        let nodes = anvil::start_all(&binary, &node_configs).await?;
        let deployers: Vec<DynProvider> = nodes
            .iter()
            .map(|n| deploy::wallet_provider(n.rpc_url(), keys::deployer()))
            .collect();

        let deployments = try_join_all(
            deployers
                .iter()
                .zip(&nodes)
                .map(|(p, n)| deploy::deploy_chain(p, n.chain_id(), config.relayer)),
        )
        .await?;
        // the deployer deploys in the same order on every chain, so every chain agrees
        let router = deployments[0].router;
        debug_assert!(deployments.iter().all(|d| d.router == router));
        let (all, relayer) = (&deployments, config.relayer);
        try_join_all(
            deployers
                .iter()
                .zip(all)
                .map(|(provider, local)| async move {
                    deploy::link_cctp(provider, local, all).await?;
                    deploy::fund_chain(provider, local, relayer).await
                }),
        )
        .await?;
        let vaults = try_join_all(
            nodes
                .iter()
                .zip(all)
                .map(|(n, d)| deploy::deploy_vault(n.rpc_url(), d.usdc)),
        )
        .await?;
        debug_assert!(vaults.iter().zip(all).all(|(v, d)| *v == d.vault));
        let mut deployments = deployments;
        if let Some(id) = deploy::pool_chain(&config.chain_ids) {
            let at = config.chain_ids.iter().position(|c| *c == id);
            if let Some(i) = at {
                deployments[i].pool = Some(deploy::deploy_pool(nodes[i].rpc_url()).await?);
            }
        }
        if let Some(secs) = config.block_time_secs {
            try_join_all(deployers.iter().map(|p| set_interval_mining(p, secs))).await?;
        }

        let chains = nodes
            .into_iter()
            .zip(deployers)
            .zip(deployments)
            .map(|((node, deployer), deployment)| DevnetChain {
                chain_id: node.chain_id(),
                rpc_url: node.rpc_url().to_string(),
                deployment,
                deployer,
                deployer_lock: Mutex::new(()),
                node,
                reader: std::sync::OnceLock::new(),
            })
            .collect();
        tracing::info!(chains = ?config.chain_ids, relayer = %config.relayer, "devnet up");
        Ok(Self {
            relayer: config.relayer,
            permit2: PERMIT2_ADDRESS,
            router,
            attester: keys::attester().address(),
            bridge_operator: keys::bridge_operator().address(),
            chains,
        })
    }

    /// Every chain, in the configured order.
    pub fn chains(&self) -> &[DevnetChain] {
        &self.chains
    }

    /// The chain with id `chain_id`.
    pub fn chain(&self, chain_id: u64) -> Result<&DevnetChain> {
        self.chains
            .iter()
            .find(|c| c.chain_id == chain_id)
            .ok_or(DevnetError::UnknownChain(chain_id))
    }

    /// The JSON-RPC URL of `chain_id`.
    pub fn rpc_url(&self, chain_id: u64) -> Result<Url> {
        self.chain(chain_id).map(DevnetChain::url)
    }

    /// The deployment on `chain_id`.
    pub fn deployment(&self, chain_id: u64) -> Result<&ChainDeployment> {
        self.chain(chain_id).map(|c| &c.deployment)
    }

    /// Mints `amount` base units of `token` to `to` on `chain_id`.
    pub async fn mint(&self, chain_id: u64, token: Token, to: Address, amount: U256) -> Result<()> {
        let chain = self.chain(chain_id)?;
        let _guard = chain.deployer_lock.lock().await;
        deploy::mint(&chain.deployer, chain.deployment.token(token), to, amount).await
    }

    /// Mints a membership NFT to `to` on `chain_id`.
    pub async fn mint_membership(&self, chain_id: u64, to: Address) -> Result<()> {
        let chain = self.chain(chain_id)?;
        let _guard = chain.deployer_lock.lock().await;
        let membership = Membership::new(chain.deployment.membership, &chain.deployer);
        deploy::confirm("Membership.mint", membership.mint(to).send().await)
            .await
            .map(drop)
    }

    /// Moves the `pair` feed (`ETH/USD`) on `chain_id` to `answer`, in the feed's decimals
    /// ([`deploy::FEED_DECIMALS`]): a new round stamped with the block's time (DEVNET ONLY).
    pub async fn set_price(&self, chain_id: u64, pair: &str, answer: I256) -> Result<()> {
        let chain = self.chain(chain_id)?;
        let feed = chain
            .deployment
            .feed(pair)
            .ok_or_else(|| DevnetError::UnknownFeed {
                chain_id,
                pair: pair.to_string(),
            })?;
        let _guard = chain.deployer_lock.lock().await;
        deploy::update_answer(&chain.deployer, feed.address, answer)
            .await
            .map(drop)
    }

    /// Stops every node (the same as dropping the devnet).
    pub fn stop(self) {
        drop(self);
    }
}

async fn set_interval_mining(provider: &DynProvider, secs: u64) -> Result<()> {
    provider
        .raw_request::<_, ()>("evm_setIntervalMining".into(), (secs,))
        .await
        .map_err(DevnetError::rpc("evm_setIntervalMining"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_runs_the_four_default_chains() {
        let config = DevnetConfig::default();
        assert_eq!(config.chain_ids, vec![1, 8453, 42161, 10]);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn config_rejects_chains_outside_the_gasless_set() {
        assert!(matches!(
            DevnetConfig::with_chains([5]).validate(),
            Err(DevnetError::UnsupportedChain(5))
        ));
        assert!(matches!(
            DevnetConfig::with_chains([1, 1]).validate(),
            Err(DevnetError::DuplicateChain(1))
        ));
        assert!(matches!(
            DevnetConfig::with_chains([]).validate(),
            Err(DevnetError::NoChains)
        ));
    }
}
