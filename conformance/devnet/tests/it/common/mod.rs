//! Helpers shared by the devnet integration tests (real anvil nodes).
#![allow(dead_code)]

use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
};
use relay_devnet::{contracts::TestToken, Devnet, DevnetConfig};

/// Starts a devnet with `chain_ids`; fails with the installer's name when anvil is missing.
pub async fn devnet(chain_ids: &[u64]) -> anyhow::Result<Devnet> {
    Ok(Devnet::start(DevnetConfig::with_chains(chain_ids.iter().copied())).await?)
}

/// The ERC-20 balance of `who`.
pub async fn balance_of(
    provider: &DynProvider,
    token: Address,
    who: Address,
) -> anyhow::Result<U256> {
    Ok(TestToken::new(token, provider)
        .balanceOf(who)
        .call()
        .await?)
}

/// The timestamp of the latest block.
pub async fn latest_timestamp(provider: &DynProvider) -> anyhow::Result<u64> {
    let block = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no latest block"))?;
    Ok(block.header.timestamp)
}

/// `from` approves `spender` for the maximum amount of `token` (anvil signs for its accounts).
pub async fn approve_max(
    provider: &DynProvider,
    token: Address,
    from: Address,
    spender: Address,
) -> anyhow::Result<()> {
    let receipt = TestToken::new(token, provider)
        .approve(spender, U256::MAX)
        .from(from)
        .send()
        .await?
        .get_receipt()
        .await?;
    anyhow::ensure!(receipt.status(), "approve reverted");
    Ok(())
}
