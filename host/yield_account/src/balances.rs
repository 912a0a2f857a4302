//! Unified balances across the configured chains (`GET /api/balance/{addr}`,
//! `GET /api/account/{addr}`): every ERC-20 token a chain's config names
//! (the stablecoins, WBTC where known) and the yield vault's shares at
//! their asset value, per chain and in total, in smallest units and in
//! integer micro-USD priced by the host's [`PriceBook`]. Nothing is a
//! float.
//!
//! [`PriceBook`]: relay_engine::oracle::PriceBook

use std::collections::BTreeMap;

use alloy::primitives::{Address, U256};
use relay_plugin_api::{ChainRef, Token};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{view::NcChain, YieldService};

/// One token held on one chain.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Holding {
    /// The symbol (`[chains.<id>.tokens]` key).
    pub symbol: String,
    /// The token contract.
    pub token: String,
    /// Its decimals.
    pub decimals: u8,
    /// Smallest units held (decimal).
    pub units: String,
    /// Their value, micro-USD (integer; `null` when the token is unpriced).
    pub usd_e6: Option<String>,
    /// Why a figure is missing.
    pub error: Option<String>,
}

/// The vault shares held on one chain, at their asset value.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VaultHolding {
    /// The yield account's figures (shares, value, allowance, APY,
    /// accrued; APY and accrued on `/api/account` only).
    #[serde(flatten)]
    pub vault: NcChain,
    /// The value, micro-USD.
    pub usd_e6: Option<String>,
}

/// One chain of a unified balance.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainBalance {
    /// The chain.
    pub chain_id: u64,
    /// The tokens held.
    pub tokens: Vec<Holding>,
    /// The vault shares, where the chain has a vault.
    pub vault: Option<VaultHolding>,
    /// The chain's total, micro-USD (priced figures only).
    pub usd_e6: String,
}

/// A unified balance.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnifiedBalance {
    /// The address.
    pub address: String,
    /// Per chain.
    pub chains: Vec<ChainBalance>,
    /// Smallest units by symbol across chains (vault shares count as their
    /// asset's units); symbols of equal decimals everywhere only.
    pub totals: BTreeMap<String, String>,
    /// Everything priced, micro-USD.
    pub usd_e6: String,
}

fn usd_e6(units: U256, decimals: u8, price_e6: u64) -> U256 {
    units * U256::from(price_e6) / U256::from(10u64).pow(U256::from(decimals))
}

impl YieldService {
    fn price(&self, chain: u64, symbol: &str, token: Address) -> Option<u64> {
        let t = Token {
            symbol: symbol.to_string(),
            address: Some(token.to_string()),
            decimals: 0,
        };
        self.deps()
            .prices
            .token_usd_e6(ChainRef::Evm(chain), &t)
            .ok()
    }

    async fn token_holding(&self, chain: u64, symbol: &str, addr: Address) -> Option<Holding> {
        let cfg = self.deps().config.chains.get(&chain.to_string())?;
        let t = cfg.tokens.get(symbol)?;
        let token: Address = t.address.parse().ok()?;
        let read = self.deps().reader.token_balance(chain, token, addr).await;
        let price = self.price(chain, symbol, token);
        Some(match read {
            Ok(units) => Holding {
                symbol: symbol.into(),
                token: token.to_string(),
                decimals: t.decimals,
                units: units.to_string(),
                usd_e6: price.map(|p| usd_e6(units, t.decimals, p).to_string()),
                error: None,
            },
            Err(e) => Holding {
                symbol: symbol.into(),
                token: token.to_string(),
                decimals: t.decimals,
                units: "0".into(),
                usd_e6: None,
                error: Some(e.to_string()),
            },
        })
    }

    async fn vault_holding(
        &self,
        chain: u64,
        addr: Address,
        yield_aware: bool,
    ) -> Option<VaultHolding> {
        let v = self.vault(chain).ok()?;
        let mut view = self.chain_view(&v, addr).await;
        if !yield_aware {
            view.apy = None;
            view.accrued = None;
        }
        let symbol = self.deps().settings.asset.clone();
        let usd = self
            .price(chain, &symbol, v.asset)
            .map(|p| usd_e6(view.assets.parse().unwrap_or_default(), v.decimals, p).to_string());
        Some(VaultHolding {
            vault: view,
            usd_e6: usd,
        })
    }

    /// `addr`'s unified balance; `yield_aware` adds each vault's APY and
    /// what the shares accrued over its window.
    pub async fn balance(&self, addr: Address, yield_aware: bool) -> UnifiedBalance {
        let cfg = self.deps().config.clone();
        let asset = self.deps().settings.asset.clone();
        let mut chains = Vec::new();
        let mut totals: BTreeMap<String, U256> = BTreeMap::new();
        let mut usd = U256::ZERO;
        for chain in cfg.chain_ids() {
            let symbols: Vec<String> = cfg
                .chains
                .get(&chain.to_string())
                .map(|c| c.tokens.keys().cloned().collect())
                .unwrap_or_default();
            let mut tokens = Vec::new();
            for s in &symbols {
                tokens.extend(self.token_holding(chain, s, addr).await);
            }
            let vault = self.vault_holding(chain, addr, yield_aware).await;
            let units = tokens
                .iter()
                .map(|h| (h.symbol.clone(), h.units.clone()))
                .chain(
                    vault
                        .iter()
                        .map(|v| (asset.clone(), v.vault.assets.clone())),
                );
            for (symbol, u) in units {
                *totals.entry(symbol).or_default() += u.parse::<U256>().unwrap_or_default();
            }
            let chain_usd: U256 = tokens
                .iter()
                .filter_map(|h| h.usd_e6.as_deref())
                .chain(vault.iter().filter_map(|v| v.usd_e6.as_deref()))
                .map(|u| u.parse::<U256>().unwrap_or_default())
                .fold(U256::ZERO, |a, b| a + b);
            usd += chain_usd;
            chains.push(ChainBalance {
                chain_id: chain,
                tokens,
                vault,
                usd_e6: chain_usd.to_string(),
            });
        }
        UnifiedBalance {
            address: addr.to_string(),
            chains,
            totals: totals
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect(),
            usd_e6: usd.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_is_integer_micro_usd() {
        // 1.5 USDC at 1 USD
        assert_eq!(
            usd_e6(U256::from(1_500_000u64), 6, 1_000_000),
            U256::from(1_500_000u64)
        );
        // 0.5 WBTC at 60,000 USD
        assert_eq!(
            usd_e6(U256::from(50_000_000u64), 8, 60_000_000_000),
            U256::from(30_000_000_000u64)
        );
    }
}
