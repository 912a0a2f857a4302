//! What an agent's yield account holds and what the vaults earn, read from
//! the chains (`GET /api/ncaccount/{agent}`, `GET /api/account/venues`).
//!
//! The live APY of a vault is measured, never configured: the value of
//! a million whole shares (`convertToAssets(10^(decimals + 6))`, large for
//! integer precision) at the latest block against
//! the same at `[ncaccount] apy_window_blocks` blocks earlier (fewer when
//! the vault is younger), annualised simply over the blocks' timestamps,
//! in integer basis points ([`relay_chain::vault::apy_bps`]). `apy` (a
//! percentage) is for display only.

use alloy::primitives::{Address, U256};
use relay_chain::vault::{apy_bps, PricePoint};
use serde::Serialize;
use utoipa::ToSchema;

use super::{VaultRef, YieldError, YieldService};

/// A vault's live APY.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Apy {
    /// Simple annualised rate, basis points (integer; `null` when no time
    /// passed within the window).
    pub bps: Option<i64>,
    /// `bps` as a percentage, for display only.
    pub percent: Option<f64>,
    /// The window's first block.
    pub from_block: u64,
    /// The window's last block (latest).
    pub to_block: u64,
    /// Seconds between them.
    pub seconds: u64,
    /// The shares priced (base units): a million whole shares.
    pub probe_shares: String,
    /// Asset units per `probeShares` at `fromBlock` (decimal).
    pub price_then: String,
    /// The same at `toBlock` (decimal).
    pub price_now: String,
}

/// One vault and its live APY (`GET /api/account/venues`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Venue {
    /// The chain.
    pub chain_id: u64,
    /// The vault (share token).
    pub vault: String,
    /// Its asset.
    pub asset: String,
    /// The asset's symbol (`[ncaccount] asset`).
    pub asset_symbol: String,
    /// The live APY, or why it could not be read.
    pub apy: Option<Apy>,
    /// Why `apy` is `null`.
    pub error: Option<String>,
}

/// One chain of an agent's yield account.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NcChain {
    /// The chain.
    pub chain_id: u64,
    /// The vault (share token).
    pub vault: String,
    /// Its asset.
    pub asset: String,
    /// Shares held (base units, decimal).
    pub shares: String,
    /// Their value in the asset's base units (`convertToAssets`).
    pub assets: String,
    /// Shares the agent lets the relayer pull (`allowance(agent, relayer)`).
    pub allowance: String,
    /// The value of what the relayer may pull (the allowance, at most the
    /// shares held) in the asset's base units.
    pub allowance_assets: String,
    /// The vault's live APY.
    pub apy: Option<Apy>,
    /// What the held shares earned over the APY window: their value now
    /// less the value of as many shares at `apy.fromBlock`.
    pub accrued: Option<String>,
    /// Why a figure is missing (the chain could not be read).
    pub error: Option<String>,
}

/// An agent's yield account (`GET /api/ncaccount/{agent}`).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NcAccount {
    /// The agent.
    pub agent: String,
    /// The spender the agent approves (the relayer).
    pub relayer: Option<String>,
    /// Per chain with a vault.
    pub chains: Vec<NcChain>,
    /// The sum of `chains[].assets` (asset base units).
    pub total_assets: String,
    /// The EIP-712 domain and type a spend intent is signed with.
    pub signing: Signing,
}

/// How a spend intent is signed.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Signing {
    /// `RelayNCAccount`.
    pub name: &'static str,
    /// `1`.
    pub version: &'static str,
    /// `chainId` = srcChain, `verifyingContract` = the vault on srcChain.
    pub domain: &'static str,
    /// The primary type.
    pub primary_type: &'static str,
    /// Its EIP-712 encoding.
    pub encode_type: String,
}

impl Signing {
    fn new() -> Self {
        use alloy::sol_types::SolStruct;
        Signing {
            name: relay_chain::vault::DOMAIN_NAME,
            version: relay_chain::vault::DOMAIN_VERSION,
            domain: "{name, version, chainId: srcChain, verifyingContract: the vault on srcChain}",
            primary_type: "Spend",
            encode_type: relay_chain::vault::Spend::eip712_encode_type().into_owned(),
        }
    }
}

fn percent(bps: i64) -> f64 {
    bps as f64 / 100.0
}

impl YieldService {
    /// A million whole shares, in base units (`10^(decimals + 6)`).
    async fn probe(&self, v: &VaultRef) -> Result<U256, YieldError> {
        let d = self.deps.reader.vault_decimals(v.chain_id, v.vault).await?;
        Ok(U256::from(10u64).pow(U256::from(u64::from(d) + 6)))
    }

    /// The price at the window's first block: `apy_window_blocks` back,
    /// halved while the vault did not exist yet there.
    async fn price_then(
        &self,
        v: &VaultRef,
        probe: U256,
        now: &PricePoint,
    ) -> Result<PricePoint, YieldError> {
        let mut back = self.deps.settings.apy_window_blocks.max(1);
        loop {
            let block = now.block.saturating_sub(back);
            let read = self
                .deps
                .reader
                .vault_price_at(v.chain_id, v.vault, probe, Some(block))
                .await;
            match read {
                Ok(p) => return Ok(p),
                Err(_) if back > 1 => back /= 2,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The live APY of `v` (see the module docs).
    pub async fn apy(&self, v: &VaultRef) -> Result<Apy, YieldError> {
        let probe = self.probe(v).await?;
        let now = self
            .deps
            .reader
            .vault_price_at(v.chain_id, v.vault, probe, None)
            .await?;
        let then = self.price_then(v, probe, &now).await?;
        let bps = apy_bps(&then, &now);
        Ok(Apy {
            bps,
            percent: bps.map(percent),
            from_block: then.block,
            to_block: now.block,
            seconds: now.timestamp.saturating_sub(then.timestamp),
            probe_shares: probe.to_string(),
            price_then: then.assets.to_string(),
            price_now: now.assets.to_string(),
        })
    }

    /// Every vault the host knows with its live APY.
    pub async fn venues(&self) -> Vec<Venue> {
        let mut out = Vec::new();
        for v in self.vaults() {
            let apy = self.apy(&v).await;
            out.push(Venue {
                chain_id: v.chain_id,
                vault: v.vault.to_string(),
                asset: v.asset.to_string(),
                asset_symbol: self.deps.settings.asset.clone(),
                error: apy.as_ref().err().map(ToString::to_string),
                apy: apy.ok(),
            });
        }
        out
    }

    /// `agent`'s shares, their value, the allowance and the APY on every
    /// chain with a vault.
    pub async fn account(&self, agent: Address) -> NcAccount {
        let mut chains = Vec::new();
        let mut total = U256::ZERO;
        for v in self.vaults() {
            let c = self.chain_view(&v, agent).await;
            total += c.assets.parse::<U256>().unwrap_or_default();
            chains.push(c);
        }
        NcAccount {
            agent: agent.to_string(),
            relayer: self.deps.senders.as_ref().map(|s| s.relayer.to_string()),
            chains,
            total_assets: total.to_string(),
            signing: Signing::new(),
        }
    }

    pub(crate) async fn chain_view(&self, v: &VaultRef, agent: Address) -> NcChain {
        let mut c = NcChain {
            chain_id: v.chain_id,
            vault: v.vault.to_string(),
            asset: v.asset.to_string(),
            shares: "0".into(),
            assets: "0".into(),
            allowance: "0".into(),
            allowance_assets: "0".into(),
            apy: None,
            accrued: None,
            error: None,
        };
        let spender = self
            .deps
            .senders
            .as_ref()
            .map_or(Address::ZERO, |s| s.relayer);
        let r = &self.deps.reader;
        let read = async {
            let h = r.vault_holding(v.chain_id, v.vault, agent, spender).await?;
            let allowance_assets = r
                .vault_assets(v.chain_id, v.vault, h.allowance.min(h.shares), None)
                .await?;
            let apy = self.apy(v).await?;
            let then = r
                .vault_assets(v.chain_id, v.vault, h.shares, Some(apy.from_block))
                .await
                .unwrap_or(h.assets);
            Ok::<_, YieldError>((h, allowance_assets, apy, then))
        };
        match read.await {
            Ok((h, allowance_assets, apy, then)) => {
                c.shares = h.shares.to_string();
                c.assets = h.assets.to_string();
                c.allowance = h.allowance.to_string();
                c.allowance_assets = allowance_assets.to_string();
                c.accrued = Some(h.assets.saturating_sub(then).to_string());
                c.apy = Some(apy);
            }
            Err(e) => c.error = Some(e.to_string()),
        }
        c
    }
}
