//! DEVNET ONLY: moving the devnet's Chainlink-style price feeds
//! (`POST /simulator/price`). The feeds belong to the devnet deployer, so
//! this is the one place a simulator signs with the deployer's (publicly
//! known) key — and only `updateAnswer` on a feed.

use std::collections::HashMap;

use alloy::{
    primitives::{B256, I256},
    providers::DynProvider,
};
use relay_devnet::{
    deploy::{self, wallet_provider},
    keys, Devnet, FeedDeployment,
};

use crate::error::SettleError;

struct ChainFeeds {
    deployer: DynProvider,
    /// Serialises the deployer's transactions on this chain.
    lock: tokio::sync::Mutex<()>,
    feeds: Vec<FeedDeployment>,
}

/// The devnet's price feeds on every chain, and the deployer to move them.
pub struct FeedControl {
    chains: HashMap<u64, ChainFeeds>,
}

impl std::fmt::Debug for FeedControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedControl")
            .field("chains", &self.chains.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl FeedControl {
    /// The feeds of every chain of `devnet`.
    pub fn new(devnet: &Devnet) -> Self {
        let chains = devnet
            .chains()
            .iter()
            .map(|c| {
                let feeds = ChainFeeds {
                    deployer: wallet_provider(c.url(), keys::deployer()),
                    lock: tokio::sync::Mutex::new(()),
                    feeds: c.deployment.price_feeds.clone(),
                };
                (c.chain_id, feeds)
            })
            .collect();
        FeedControl { chains }
    }

    /// Moves `pair` (`ETH/USD`) on `chain` to `answer` (the feed's
    /// decimals); returns the feed and the transaction hash.
    pub async fn set(
        &self,
        chain: u64,
        pair: &str,
        answer: I256,
    ) -> Result<(FeedDeployment, B256), SettleError> {
        let c = self
            .chains
            .get(&chain)
            .ok_or(SettleError::UnknownChain(chain))?;
        let feed = c
            .feeds
            .iter()
            .find(|f| f.pair.eq_ignore_ascii_case(pair.trim()))
            .ok_or_else(|| SettleError::UnknownAsset(pair.to_string()))?;
        let _guard = c.lock.lock().await;
        let receipt = deploy::update_answer(&c.deployer, feed.address, answer)
            .await
            .map_err(|e| SettleError::chain(chain, e))?;
        Ok((feed.clone(), receipt.transaction_hash))
    }
}
