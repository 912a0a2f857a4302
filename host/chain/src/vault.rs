//! The non-custodial yield account's chain side (spec §4.6): ERC-4626
//! vault reads (at the latest block or an earlier one, for the APY), the
//! relayer's one-transaction redeem, and the EIP-712 spend intent.
//!
//! The intent is signed under the domain `{name: "RelayNCAccount",
//! version: "1", chainId: srcChain, verifyingContract: the vault on
//! srcChain}` as
//! `Spend(address agent,uint256 srcChain,uint256 amount,uint256 toChain,address toAddress,uint256 nonce,uint256 deadline)`.
//! Naming the vault binds a signature to one yield token; the chain id
//! binds it to one chain.

use alloy::{
    eips::BlockId,
    primitives::{Address, Bytes, B256, U256},
    providers::Provider,
    rpc::types::TransactionRequest,
    sol,
    sol_types::{eip712_domain, Eip712Domain, SolCall, SolStruct},
};

use crate::{
    permit2::{self, Permit2Error},
    reader::{ChainReader, ReadError},
};

sol! {
    /// The ERC-4626 (and ERC-20) calls the yield account makes.
    interface IErc4626 {
        function asset() external view returns (address);
        function balanceOf(address owner) external view returns (uint256);
        function allowance(address owner, address spender) external view returns (uint256);
        function decimals() external view returns (uint8);
        function convertToAssets(uint256 shares) external view returns (uint256);
        function previewWithdraw(uint256 assets) external view returns (uint256);
        function withdraw(uint256 assets, address receiver, address owner) external returns (uint256);
    }

    /// The yield-account spend intent (EIP-712).
    #[derive(Debug, Default, PartialEq, Eq)]
    struct Spend {
        address agent;
        uint256 srcChain;
        uint256 amount;
        uint256 toChain;
        address toAddress;
        uint256 nonce;
        uint256 deadline;
    }
}

/// The EIP-712 domain name of a spend intent.
pub const DOMAIN_NAME: &str = "RelayNCAccount";
/// The EIP-712 domain version of a spend intent.
pub const DOMAIN_VERSION: &str = "1";

/// The spend intent's domain on `chain_id` with `vault` as verifying
/// contract.
pub fn domain(chain_id: u64, vault: Address) -> Eip712Domain {
    eip712_domain! {
        name: DOMAIN_NAME,
        version: DOMAIN_VERSION,
        chain_id: chain_id,
        verifying_contract: vault,
    }
}

/// The digest the agent signs for `spend` under `domain`.
pub fn digest(spend: &Spend, domain: &Eip712Domain) -> B256 {
    spend.eip712_signing_hash(domain)
}

/// Who signed `spend` under the domain of `chain_id` and `vault` (a 65- or
/// 64-byte signature with low s; a high-s one is refused).
pub fn signer(
    spend: &Spend,
    chain_id: u64,
    vault: Address,
    signature: &[u8],
) -> Result<Address, Permit2Error> {
    permit2::recover(signature, &digest(spend, &domain(chain_id, vault)))
}

/// `withdraw(assets, receiver, owner)`: the relayer burns `owner`'s shares
/// under its share allowance and receives `assets`, in one transaction.
pub fn withdraw_calldata(assets: U256, receiver: Address, owner: Address) -> Bytes {
    IErc4626::withdrawCall {
        assets,
        receiver,
        owner,
    }
    .abi_encode()
    .into()
}

/// A vault's figures for one holder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Holding {
    /// Shares held.
    pub shares: U256,
    /// Their value in the asset's base units (`convertToAssets`).
    pub assets: U256,
    /// Shares the holder lets `spender` pull.
    pub allowance: U256,
}

/// The share price at one block: assets per `probe` shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PricePoint {
    /// Block number.
    pub block: u64,
    /// Block timestamp, seconds.
    pub timestamp: u64,
    /// `convertToAssets(probe)`.
    pub assets: U256,
}

fn failed(chain: u64, e: impl std::fmt::Display) -> ReadError {
    ReadError::Failed {
        chain,
        reason: e.to_string(),
    }
}

impl ChainReader {
    async fn vault_call<C: SolCall>(
        &self,
        chain: u64,
        vault: Address,
        call: C,
        block: Option<u64>,
    ) -> Result<C::Return, ReadError> {
        let data: Bytes = call.abi_encode().into();
        let out = self
            .provider(chain)?
            .run("eth_call", |p| {
                let tx = TransactionRequest::default()
                    .to(vault)
                    .input(data.clone().into());
                async move {
                    match block {
                        Some(n) => p.call(tx).block(BlockId::number(n)).await,
                        None => p.call(tx).await,
                    }
                }
            })
            .await
            .map_err(|e| failed(chain, e))?;
        C::abi_decode_returns(&out).map_err(|e| failed(chain, e))
    }

    /// `holder`'s shares of `vault`, their asset value, and the shares it
    /// lets `spender` pull.
    pub async fn vault_holding(
        &self,
        chain: u64,
        vault: Address,
        holder: Address,
        spender: Address,
    ) -> Result<Holding, ReadError> {
        let shares = self
            .vault_call(
                chain,
                vault,
                IErc4626::balanceOfCall { owner: holder },
                None,
            )
            .await?;
        let allowance = self
            .vault_call(
                chain,
                vault,
                IErc4626::allowanceCall {
                    owner: holder,
                    spender,
                },
                None,
            )
            .await?;
        let assets = self.vault_assets(chain, vault, shares, None).await?;
        Ok(Holding {
            shares,
            assets,
            allowance,
        })
    }

    /// `convertToAssets(shares)` of `vault`, at `block` (default latest).
    pub async fn vault_assets(
        &self,
        chain: u64,
        vault: Address,
        shares: U256,
        block: Option<u64>,
    ) -> Result<U256, ReadError> {
        self.vault_call(
            chain,
            vault,
            IErc4626::convertToAssetsCall { shares },
            block,
        )
        .await
    }

    /// `previewWithdraw(assets)`: the shares burnt to withdraw `assets`.
    pub async fn vault_shares_for(
        &self,
        chain: u64,
        vault: Address,
        assets: U256,
    ) -> Result<U256, ReadError> {
        self.vault_call(chain, vault, IErc4626::previewWithdrawCall { assets }, None)
            .await
    }

    /// The vault's share decimals.
    pub async fn vault_decimals(&self, chain: u64, vault: Address) -> Result<u8, ReadError> {
        self.vault_call(chain, vault, IErc4626::decimalsCall {}, None)
            .await
    }

    /// The vault's underlying asset.
    pub async fn vault_asset(&self, chain: u64, vault: Address) -> Result<Address, ReadError> {
        self.vault_call(chain, vault, IErc4626::assetCall {}, None)
            .await
    }

    /// The latest block's number and timestamp.
    pub async fn latest_block(&self, chain: u64) -> Result<(u64, u64), ReadError> {
        self.block_at(chain, None).await
    }

    async fn block_at(&self, chain: u64, number: Option<u64>) -> Result<(u64, u64), ReadError> {
        let id = number.map_or(BlockId::latest(), BlockId::number);
        let block = self
            .provider(chain)?
            .run(
                "eth_getBlockByNumber",
                |p| async move { p.get_block(id).await },
            )
            .await
            .map_err(|e| failed(chain, e))?
            .ok_or_else(|| failed(chain, format!("no block {id}")))?;
        Ok((block.header.number, block.header.timestamp))
    }

    /// The share price (`convertToAssets(probe)`) at `block` (default
    /// latest), with the block's timestamp.
    pub async fn vault_price_at(
        &self,
        chain: u64,
        vault: Address,
        probe: U256,
        block: Option<u64>,
    ) -> Result<PricePoint, ReadError> {
        let (number, timestamp) = self.block_at(chain, block).await?;
        let assets = self.vault_assets(chain, vault, probe, Some(number)).await?;
        Ok(PricePoint {
            block: number,
            timestamp,
            assets,
        })
    }
}

/// Seconds in a 365-day year.
pub const YEAR_SECS: u64 = 31_536_000;

/// The simple annualised rate between two price points, in basis points
/// (integer; `None` when no time passed or the earlier price is zero).
pub fn apy_bps(then: &PricePoint, now: &PricePoint) -> Option<i64> {
    let dt = now
        .timestamp
        .checked_sub(then.timestamp)
        .filter(|d| *d > 0)?;
    if then.assets.is_zero() {
        return None;
    }
    let (up, diff) = if now.assets >= then.assets {
        (true, now.assets - then.assets)
    } else {
        (false, then.assets - now.assets)
    };
    let bps = diff * U256::from(10_000u64) * U256::from(YEAR_SECS) / (then.assets * U256::from(dt));
    let bps = i64::try_from(bps).unwrap_or(i64::MAX);
    Some(if up { bps } else { -bps })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    #[test]
    fn a_signed_intent_recovers_its_agent_only_under_its_domain() {
        let key = PrivateKeySigner::random();
        let vault = Address::repeat_byte(0x42);
        let spend = Spend {
            agent: key.address(),
            srcChain: U256::from(8453),
            amount: U256::from(5_000_000u64),
            toChain: U256::from(10),
            toAddress: Address::repeat_byte(7),
            nonce: U256::from(1),
            deadline: U256::from(4_102_444_800u64),
        };
        let sig = key
            .sign_hash_sync(&digest(&spend, &domain(8453, vault)))
            .unwrap()
            .as_bytes();
        assert_eq!(signer(&spend, 8453, vault, &sig).unwrap(), key.address());
        assert_ne!(signer(&spend, 1, vault, &sig).unwrap(), key.address());
        assert_ne!(
            signer(&spend, 8453, Address::ZERO, &sig).unwrap(),
            key.address()
        );
        assert_eq!(
            Spend::eip712_encode_type(),
            "Spend(address agent,uint256 srcChain,uint256 amount,uint256 toChain,address toAddress,uint256 nonce,uint256 deadline)"
        );
    }

    #[test]
    fn apy_is_annualised_in_integer_bps() {
        let p = |timestamp, assets: u64| PricePoint {
            block: 0,
            timestamp,
            assets: U256::from(assets),
        };
        // +1 % over a year is 100 bps; over half a year, 200 bps
        assert_eq!(
            apy_bps(&p(0, 1_000_000), &p(YEAR_SECS, 1_010_000)),
            Some(100)
        );
        assert_eq!(
            apy_bps(&p(0, 1_000_000), &p(YEAR_SECS / 2, 1_010_000)),
            Some(200)
        );
        assert_eq!(apy_bps(&p(5, 1), &p(5, 2)), None);
    }
}
