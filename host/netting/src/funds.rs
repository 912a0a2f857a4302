//! What the relayer holds against what it owes (`GET
//! /api/netting/reserves`), what a payout costs on each chain, and where a
//! withdrawal would arrive best (`GET /api/netting/preview`).
//!
//! A payout's cost is the gas of one ERC-20 `transfer` (`[netting]
//! payout_gas`) at the chain's live gas price, valued with the host's
//! price book in the asset, plus the engine's gas markup
//! (`quote.gas_markup_bps`), rounded up — as every relayer-paid gas the
//! host charges.

use alloy::primitives::U256;
use relay_engine::fees::{gas_fee, GasSpend, TokenPrice};
use serde::Serialize;
use utoipa::ToSchema;

use super::{entries, texts, NettingError, NettingService};

/// One covered chain's reserve.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainReserve {
    /// The chain.
    pub chain_id: u64,
    /// The asset's token.
    pub token: String,
    /// The relayer's balance of it, read on chain.
    pub float: String,
    /// What accounts brought in on this chain net of what was paid out
    /// on it (the ledger's `float:<chain>`, negated).
    pub liabilities: String,
    /// The safe share of this chain's float.
    pub safe_share: String,
    /// `safeShare − liabilities` (negative: this chain's float backs less
    /// than was brought in on it; withdrawals may still exit elsewhere).
    pub headroom: String,
}

/// `GET /api/netting/reserves`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reserves {
    /// The asset.
    pub asset: String,
    /// The safe share, parts per million of float.
    pub safe_share_ppm: u32,
    /// Per covered chain.
    pub chains: Vec<ChainReserve>,
    /// The relayer's float across covered chains.
    pub float: String,
    /// Total liabilities: every account's balance.
    pub liabilities: String,
    /// The safe share of the total float: liabilities may not exceed it.
    pub safe_share: String,
    /// `safeShare − liabilities`: the most a deposit can add now.
    pub headroom: String,
    /// Payout costs withheld so far.
    pub payout_fees: String,
    /// The caps, smallest units.
    pub caps: Caps,
    /// Blocks a deposit needs.
    pub confirmations: u64,
}

/// The configured caps.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Caps {
    /// Largest deposit.
    pub deposit: String,
    /// Largest withdrawal.
    pub withdraw: String,
    /// Largest balance.
    pub balance: String,
}

/// One exit of a withdrawal.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Exit {
    /// Destination chain.
    pub chain_id: u64,
    /// Withheld for the payout, smallest units (`null` when it cannot be
    /// priced now; `error` says why).
    pub payout_cost: Option<String>,
    /// What would arrive.
    pub net: Option<String>,
    /// Whether a withdrawal of the amount to this chain would be paid.
    pub would_succeed: bool,
    /// Why not, when it would not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `GET /api/netting/preview`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The amount, smallest units.
    pub amount: String,
    /// Every covered chain, cheapest payout first (unpriced ones last).
    pub cheapest_exit: Vec<Exit>,
    /// With `toChain`: that chain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_chain: Option<u64>,
    /// With `toChain`: whether it would be paid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_succeed: Option<bool>,
    /// With `toChain`: its payout cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payout_cost: Option<String>,
    /// With `toChain`: what would arrive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<String>,
    /// With `toChain`, when it would not succeed: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl NettingService {
    /// The payout cost on `chain`, smallest units of the asset.
    pub async fn payout_cost(&self, chain: u64) -> Result<u128, NettingError> {
        let (_, decimals) = self.token_on(chain)?;
        let price_wei = self.deps.parts.reader.gas_price(chain).await?;
        let unpriced = |e: relay_engine::oracle::Unpriced| NettingError::Unavailable(e.to_string());
        let native_usd_e6 = self
            .deps
            .parts
            .prices
            .native_usd_e6(chain)
            .map_err(unpriced)?;
        let asset_usd_e6 = self
            .deps
            .parts
            .prices
            .usd_e6(&format!("{}/USD", self.cfg().asset))
            .map_err(unpriced)?;
        let spend = GasSpend {
            units: self.cfg().payout_gas,
            price_wei,
            native_usd_e6,
        };
        let token = TokenPrice {
            usd_e6: asset_usd_e6,
            decimals,
        };
        let fee = gas_fee(&[spend], self.deps.parts.config.quote.gas_markup_bps, token)
            .ok_or_else(|| {
                NettingError::Unavailable(format!("{} has no price", self.cfg().asset))
            })?;
        Ok(fee.0.max(U256::from(1u8)).saturating_to::<u128>())
    }

    /// The reserves: float, liabilities and headroom, per chain and in total.
    pub async fn reserves(&self) -> Result<Reserves, NettingError> {
        let relayer = self.payer()?.relayer;
        let ppm = U256::from(self.cfg().safe_share_ppm);
        let share = |v: U256| v * ppm / U256::from(crate::PPM);
        let store = &self.deps.store;
        let mut chains = Vec::new();
        let mut total = U256::ZERO;
        for (chain, token, _) in self.covered() {
            let float = self
                .deps
                .parts
                .reader
                .token_balance(chain, token, relayer)
                .await?;
            total += float;
            let owed = store
                .ledger_account(&entries::float_account(chain))
                .await?
                .map_or(0, |a| -a.balance);
            chains.push(ChainReserve {
                chain_id: chain,
                token: texts::lower(&token),
                float: float.to_string(),
                liabilities: owed.to_string(),
                safe_share: share(float).to_string(),
                headroom: signed_diff(share(float), owed),
            });
        }
        let liabilities = store.ledger_liabilities().await?;
        let fees = store
            .ledger_account(entries::PAYOUT_FEES)
            .await?
            .map_or(0, |a| a.balance);
        let cfg = self.cfg();
        Ok(Reserves {
            asset: cfg.asset.clone(),
            safe_share_ppm: cfg.safe_share_ppm,
            chains,
            float: total.to_string(),
            liabilities: liabilities.to_string(),
            safe_share: share(total).to_string(),
            headroom: signed_diff(share(total), liabilities),
            payout_fees: fees.to_string(),
            caps: Caps {
                deposit: cfg.max_deposit.to_string(),
                withdraw: cfg.max_withdraw.to_string(),
                balance: cfg.max_balance.to_string(),
            },
            confirmations: cfg.confirmations,
        })
    }

    /// Where `amount` would arrive, cheapest first; with `to_chain`, whether
    /// it would be paid there.
    pub async fn preview(
        &self,
        amount: &str,
        to_chain: Option<u64>,
    ) -> Result<Preview, NettingError> {
        let n = texts::amount("amount", amount)?;
        if let Some(c) = to_chain {
            self.token_on(c)?;
        }
        let mut exits = Vec::new();
        for (chain, _, _) in self.covered() {
            exits.push(self.exit(chain, n).await);
        }
        exits.sort_by_key(|e| {
            let cost = e
                .payout_cost
                .as_deref()
                .and_then(|c| c.parse::<u128>().ok());
            (cost.is_none(), cost.unwrap_or(u128::MAX), e.chain_id)
        });
        let mut p = Preview {
            amount: n.to_string(),
            cheapest_exit: exits,
            to_chain,
            would_succeed: None,
            payout_cost: None,
            net: None,
            reason: None,
        };
        if let Some(e) = to_chain.and_then(|c| p.cheapest_exit.iter().find(|e| e.chain_id == c)) {
            let e = e.clone();
            p.would_succeed = Some(e.would_succeed);
            p.payout_cost = e.payout_cost;
            p.net = e.net;
            p.reason = e.reason;
        }
        Ok(p)
    }

    /// Withdrawing `amount` to `chain`: its cost, what arrives, and whether
    /// it would be paid (above the cost, within the cap, within the float).
    async fn exit(&self, chain: u64, amount: u128) -> Exit {
        let cost = match self.payout_cost(chain).await {
            Ok(c) => c,
            Err(e) => {
                return Exit {
                    chain_id: chain,
                    payout_cost: None,
                    net: None,
                    would_succeed: false,
                    reason: Some(e.to_string()),
                }
            }
        };
        let net = amount.saturating_sub(cost);
        let reason = if cost >= amount {
            Some(
                NettingError::BelowPayoutCost {
                    chain,
                    cost,
                    amount,
                }
                .to_string(),
            )
        } else if amount > u128::from(self.cfg().max_withdraw) {
            Some(format!(
                "above the withdraw cap {}",
                self.cfg().max_withdraw
            ))
        } else {
            self.float_short(chain, net).await
        };
        Exit {
            chain_id: chain,
            payout_cost: Some(cost.to_string()),
            net: Some(net.to_string()),
            would_succeed: reason.is_none(),
            reason,
        }
    }

    /// Why the relayer could not pay `net` on `chain` now, if it could not.
    async fn float_short(&self, chain: u64, net: u128) -> Option<String> {
        let relayer = self.payer().ok()?.relayer;
        let (token, _) = self.token_on(chain).ok()?;
        match self
            .deps
            .parts
            .reader
            .token_balance(chain, token, relayer)
            .await
        {
            Ok(f) if f < U256::from(net) => Some(format!("the relayer holds {f} on chain {chain}")),
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        }
    }
}

/// `a − b` as a signed decimal string.
fn signed_diff(a: U256, b: i64) -> String {
    let a = a.saturating_to::<u128>().min(i128::MAX as u128) as i128;
    a.saturating_sub(i128::from(b)).to_string()
}
