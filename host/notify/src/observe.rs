//! The watcher's view of the world ([`Observe`]) over the host's parts:
//! its price book (the quotes' on-chain feeds and configured fallbacks)
//! and its chain reads.

use std::sync::Arc;

use alloy::primitives::Address;
use async_trait::async_trait;
use relay_chain::reader::ChainReader;
use relay_engine::oracle::PriceBook;

use crate::subscribe::Observe;

/// Prices and balances as the host sees them.
#[derive(Debug)]
pub struct HostObserve {
    /// The host's prices.
    pub prices: Arc<PriceBook>,
    /// Chain reads.
    pub reader: Arc<ChainReader>,
}

#[async_trait]
impl Observe for HostObserve {
    fn price_usd_e6(&self, asset: &str) -> Option<u64> {
        crate::http::price_usd_e6(&self.prices, asset).ok()
    }

    async fn balance(&self, chain: u64, token: &str, owner: &str) -> Result<String, String> {
        let token: Address = token.parse().map_err(|_| format!("bad token {token}"))?;
        let owner: Address = owner.parse().map_err(|_| format!("bad address {owner}"))?;
        self.reader
            .token_balance(chain, token, owner)
            .await
            .map(|b| b.to_string())
            .map_err(|e| e.to_string())
    }
}
