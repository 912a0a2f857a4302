//! Spending from the yield account (`POST /api/ncaccount/quote`, `POST
//! /api/ncaccount/spend`, `GET /api/ncaccount/spend/{id}`).
//!
//! Fee: `[ncaccount] fee_bps` of the amount (0.15 %), at least
//! `min_fee_units` (0.01 USD). The relayer redeems exactly `amount` of
//! assets from the agent's shares (`vault.withdraw(amount, relayer,
//! agent)`, burning `previewWithdraw(amount)` shares under the agent's
//! share allowance) on srcChain, keeps the fee, and routes `amount − fee`
//! through the engine to `toAddress` on toChain ([`super::leg`]): every
//! rail serving the lane is quoted and ranked by net output, and the route
//! fails over like any other. The quote shows the rail ranked first and
//! what the recipient is expected to receive (`delivered`, after the
//! route's own costs) and at least (`minDelivered`).
//!
//! The record moves `ACCEPTED → REDEEMED → ROUTING → DELIVERED`
//! (`drive.rs`); a delivery the engine cannot start, or whose route
//! fails before anything left the relayer, refunds the redeemed `amount`
//! to the agent on srcChain (`REFUNDED`); one whose funds may have left
//! the relayer is `FAILED` for the operator to settle. A redeem that fails
//! moved nothing (`FAILED`).
//!
//! `live` false (or missing) answers what would happen — every check run,
//! nothing recorded or sent (`state: DRY`).

use crate::store::NcSpendRow;
use alloy::primitives::{keccak256, Address, Bytes, U256};
use relay_chain::{
    reader::SimCall,
    vault::{self, Spend},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    leg::{Leg, LegRouter},
    VaultRef, YieldError, YieldService,
};

/// Gas of the redeem (`withdraw`).
pub(super) const REDEEM_GAS: u64 = 250_000;

/// Accepted.
pub const ACCEPTED: &str = "ACCEPTED";
/// Shares redeemed to the relayer; the delivery route is not started yet.
pub const REDEEMED: &str = "REDEEMED";
/// The delivery route runs (`routeId`).
pub const ROUTING: &str = "ROUTING";
/// Delivered.
pub const DELIVERED: &str = "DELIVERED";
/// The delivery could not be made; the redeemed assets went back to the
/// agent on srcChain (`refundTx`).
pub const REFUNDED: &str = "REFUNDED";
/// Failed (see `error`).
pub const FAILED: &str = "FAILED";
/// A dry answer: nothing recorded or sent.
pub const DRY: &str = "DRY";

/// An unsigned integer sent as a decimal string or a JSON number.
#[derive(Clone, Debug, Deserialize, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Uint {
    /// `"5000000"`.
    Text(String),
    /// `5000000`.
    Number(u64),
}

impl Uint {
    fn parse(&self, field: &'static str) -> Result<U256, YieldError> {
        match self {
            Uint::Number(n) => Ok(U256::from(*n)),
            Uint::Text(t) => t.trim().parse::<U256>().map_err(|_| YieldError::Invalid {
                field,
                why: format!("{t:?} is not a decimal integer"),
            }),
        }
    }
}

/// What a spend quote asks (`POST /api/ncaccount/quote`).
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuoteAsk {
    /// The agent (share holder).
    pub agent: String,
    /// The chain whose vault is redeemed.
    pub src_chain: u64,
    /// Asset base units redeemed (the fee comes out of it).
    #[schema(value_type = String)]
    pub amount: Uint,
    /// The destination chain.
    pub to_chain: u64,
    /// The recipient there.
    pub to_address: String,
}

/// The signed intent (`{agent, srcChain, amount, toChain, toAddress,
/// nonce, deadline}`, spec §2.15).
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentWire {
    /// The agent (signer).
    pub agent: String,
    /// The source chain (the domain's chainId).
    pub src_chain: u64,
    /// Asset base units redeemed.
    #[schema(value_type = String)]
    pub amount: Uint,
    /// The destination chain.
    pub to_chain: u64,
    /// The recipient.
    pub to_address: String,
    /// Any unused uint256, per agent and srcChain.
    #[schema(value_type = String)]
    pub nonce: Uint,
    /// Seconds since the epoch.
    #[schema(value_type = String)]
    pub deadline: Uint,
}

/// A spend quote or the figures of a spend.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendQuote {
    /// The agent.
    pub agent: String,
    /// The source chain.
    pub src_chain: u64,
    /// The destination chain.
    pub to_chain: u64,
    /// The recipient.
    pub to_address: String,
    /// The vault redeemed.
    pub vault: String,
    /// Asset base units redeemed.
    pub amount: String,
    /// The spend fee (asset base units).
    pub fee: String,
    /// What the delivery route carries: `amount − fee`.
    pub routed: String,
    /// What the recipient is expected to receive: the engine's net output
    /// for `routed` (absent when no rail routes it now).
    pub delivered: Option<String>,
    /// What the recipient receives at least.
    pub min_delivered: Option<String>,
    /// Shares the redeem burns (`previewWithdraw(amount)`).
    pub shares_to_redeem: String,
    /// Shares the agent holds.
    pub shares_held: String,
    /// Shares the agent lets the relayer pull.
    pub allowance: String,
    /// `allowance ≥ sharesToRedeem`.
    pub allowance_suffices: bool,
    /// `sharesHeld ≥ sharesToRedeem`.
    pub balance_suffices: bool,
    /// How it reaches toChain.
    pub route: SpendRoute,
    /// Everything suffices.
    pub would_succeed: bool,
}

/// The delivery leg, as the engine ranks it now.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendRoute {
    /// The rail ranked first by net output (absent when none routes it).
    pub via: Option<String>,
    /// Its lane.
    pub lane: Option<String>,
    /// The asset token on toChain.
    pub token: String,
    /// Why no rail routes it now (the engine's errorCode and message).
    pub error: Option<String>,
}

/// The answer of a spend.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendReceipt {
    /// `nc_…` (absent on a dry answer).
    pub id: Option<String>,
    /// `DRY`, `ACCEPTED`, `REDEEMED`, `ROUTING`, `DELIVERED`, `REFUNDED`
    /// or `FAILED`.
    pub state: String,
    /// Whether anything was broadcast.
    pub broadcast: bool,
    /// The figures when it was accepted.
    pub quote: SpendQuote,
    /// The redeem (`withdraw`) on srcChain.
    pub redeem_tx: Option<String>,
    /// The delivery route (`GET /api/route/status?id=` tracks it), once
    /// started.
    pub route_id: Option<String>,
    /// The delivery's transaction (on toChain, or the route's source
    /// transaction when the rail delivers later).
    pub deliver_tx: Option<String>,
    /// The refund of the redeemed assets to the agent (srcChain).
    pub refund_tx: Option<String>,
    /// Why it was refunded or failed.
    pub error: Option<String>,
}

/// What a spend record keeps of its intent and figures.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Body {
    pub(super) agent: Address,
    pub(super) src_chain: u64,
    pub(super) amount: U256,
    pub(super) fee: U256,
    pub(super) shares: U256,
    pub(super) to_chain: u64,
    pub(super) to_address: Address,
    pub(super) nonce: U256,
    pub(super) deadline: U256,
    /// The figures when accepted.
    #[serde(default)]
    pub(super) quote: Option<serde_json::Value>,
}

fn address(field: &'static str, s: &str) -> Result<Address, YieldError> {
    s.trim().parse().map_err(|_| YieldError::Invalid {
        field,
        why: format!("{s:?} is not a 0x-prefixed 20-byte address"),
    })
}

/// A parsed ask.
struct Ask {
    agent: Address,
    src: VaultRef,
    to_chain: u64,
    to_token: Address,
    amount: U256,
    to_address: Address,
}

impl YieldService {
    /// The spend fee of `amount`: `fee_bps`, at least `min_fee_units`.
    pub fn fee(&self, amount: U256) -> U256 {
        let c = &self.deps.settings;
        let pct = amount * U256::from(c.fee_bps) / U256::from(10_000u64);
        pct.max(U256::from(c.min_fee_units))
    }

    fn ask(
        &self,
        agent: &str,
        (src, to_chain): (u64, u64),
        amount: &Uint,
        to: &str,
    ) -> Result<Ask, YieldError> {
        let amount = amount.parse("amount")?;
        let src = self.vault(src)?;
        let cap = U256::from(10u64).pow(U256::from(15 + u64::from(src.decimals)));
        if amount.is_zero() || amount >= cap {
            return Err(YieldError::Invalid {
                field: "amount",
                why: "must be positive and below 10^15 whole tokens".into(),
            });
        }
        Ok(Ask {
            agent: address("agent", agent)?,
            src,
            to_chain,
            to_token: self.asset_on(to_chain)?.0,
            amount,
            to_address: address("toAddress", to)?,
        })
    }

    /// The read-only just-in-time quote of a spend (nothing is signed or
    /// recorded): the vault's figures and the engine's ranking of the
    /// delivery.
    pub async fn quote(&self, q: &QuoteAsk) -> Result<SpendQuote, YieldError> {
        let ask = self.ask(
            &q.agent,
            (q.src_chain, q.to_chain),
            &q.amount,
            &q.to_address,
        )?;
        self.figures(&ask, self.deps.legs.as_ref()).await
    }

    async fn figures(&self, a: &Ask, legs: &dyn LegRouter) -> Result<SpendQuote, YieldError> {
        let fee = self.fee(a.amount);
        if a.amount <= fee {
            return Err(YieldError::BelowFee {
                amount: a.amount,
                fee,
            });
        }
        let routed = a.amount - fee;
        let relayer = self.relayer()?;
        let r = &self.deps.reader;
        let (chain, vault) = (a.src.chain_id, a.src.vault);
        let needed = r.vault_shares_for(chain, vault, a.amount).await?;
        let h = r.vault_holding(chain, vault, a.agent, relayer).await?;
        let chains = (a.src.chain_id, a.to_chain);
        let ask = self.leg(String::new(), chains, routed, (a.agent, a.to_address));
        let leg = legs.quote(&ask).await;
        let route = SpendRoute {
            via: leg.as_ref().ok().map(|q| q.rail.clone()),
            lane: leg.as_ref().ok().map(|q| q.lane.clone()),
            token: a.to_token.to_string(),
            error: leg.as_ref().err().map(|e| e.to_string()),
        };
        let (allowance_ok, balance_ok) = (h.allowance >= needed, h.shares >= needed);
        Ok(SpendQuote {
            agent: a.agent.to_string(),
            src_chain: chain,
            to_chain: a.to_chain,
            to_address: a.to_address.to_string(),
            vault: vault.to_string(),
            amount: a.amount.to_string(),
            fee: fee.to_string(),
            routed: routed.to_string(),
            delivered: leg.as_ref().ok().map(|q| q.estimated.to_string()),
            min_delivered: leg.as_ref().ok().map(|q| q.min_out.to_string()),
            shares_to_redeem: needed.to_string(),
            shares_held: h.shares.to_string(),
            allowance: h.allowance.to_string(),
            allowance_suffices: allowance_ok,
            balance_suffices: balance_ok,
            would_succeed: allowance_ok && balance_ok && leg.is_ok(),
            route,
        })
    }

    /// Who signed `spend` must be its agent under the srcChain domain; a
    /// signature valid under another configured chain's domain is named as
    /// such.
    fn check_signer(&self, s: &Spend, src: &VaultRef, sig: &[u8]) -> Result<(), YieldError> {
        let recovered = vault::signer(s, src.chain_id, src.vault, sig)
            .map_err(|e| YieldError::Signer(e.to_string()))?;
        if recovered == s.agent {
            return Ok(());
        }
        for other in self.deps.config.chain_ids() {
            let vaults = [Some(src.vault), self.vault(other).ok().map(|v| v.vault)];
            for v in vaults.into_iter().flatten() {
                if other != src.chain_id && vault::signer(s, other, v, sig).ok() == Some(s.agent) {
                    return Err(YieldError::DomainChain {
                        signed: other,
                        src: src.chain_id,
                    });
                }
            }
        }
        Err(YieldError::Signer(format!(
            "recovers to {recovered}, not the agent {}, under domain {{RelayNCAccount, 1, chainId {}, verifyingContract {}}}",
            s.agent, src.chain_id, src.vault
        )))
    }

    /// Checks a signed intent and every on-chain condition; `Ok` carries
    /// the figures and the record body. Nothing is sent.
    async fn check(
        &self,
        w: &IntentWire,
        signature: &str,
        legs: &dyn LegRouter,
    ) -> Result<(SpendQuote, Body), YieldError> {
        let a = self.ask(
            &w.agent,
            (w.src_chain, w.to_chain),
            &w.amount,
            &w.to_address,
        )?;
        let (nonce, deadline) = (w.nonce.parse("nonce")?, w.deadline.parse("deadline")?);
        let spend = Spend {
            agent: a.agent,
            srcChain: U256::from(w.src_chain),
            amount: a.amount,
            toChain: U256::from(w.to_chain),
            toAddress: a.to_address,
            nonce,
            deadline,
        };
        let sig: Bytes = signature.trim().parse().map_err(|_| YieldError::Invalid {
            field: "signature",
            why: "not 0x-prefixed hex".into(),
        })?;
        self.check_signer(&spend, &a.src, &sig)?;
        let now = self.now_secs();
        if deadline <= U256::from(now) {
            return Err(YieldError::Expired { deadline, now });
        }
        let agent_key = a.agent.to_string().to_lowercase();
        let used = self
            .deps
            .store
            .nc_spend_by_nonce(&agent_key, w.src_chain, &nonce.to_string())
            .await?;
        if used.is_some() {
            return Err(YieldError::NonceUsed(nonce.to_string()));
        }
        let q = self.figures(&a, legs).await?;
        let shares: U256 = q.shares_to_redeem.parse().unwrap_or(U256::MAX);
        let held: U256 = q.shares_held.parse().unwrap_or_default();
        let allowance: U256 = q.allowance.parse().unwrap_or_default();
        if !q.balance_suffices {
            return Err(YieldError::InsufficientShares {
                needed: shares,
                held,
            });
        }
        if !q.allowance_suffices {
            return Err(YieldError::AllowanceExceeded {
                needed: shares,
                allowance,
            });
        }
        if let Some(why) = &q.route.error {
            return Err(YieldError::NoRoute(why.clone()));
        }
        self.simulate_redeem(&a).await?;
        let body = Body {
            agent: a.agent,
            src_chain: w.src_chain,
            amount: a.amount,
            fee: q.fee.parse().unwrap_or_default(),
            shares,
            to_chain: w.to_chain,
            to_address: a.to_address,
            nonce,
            deadline,
            quote: serde_json::to_value(&q).ok(),
        };
        Ok((q, body))
    }

    async fn simulate_redeem(&self, a: &Ask) -> Result<(), YieldError> {
        let relayer = self.relayer()?;
        let call = SimCall {
            from: relayer,
            to: a.src.vault,
            data: vault::withdraw_calldata(a.amount, relayer, a.agent),
            value: U256::ZERO,
            gas_limit: Some(REDEEM_GAS),
        };
        match self.deps.reader.simulate(a.src.chain_id, &call).await? {
            Ok(_) => Ok(()),
            Err(revert) => Err(YieldError::WouldRevert(revert.reason())),
        }
    }

    /// Checks and (when `live`) starts a signed spend; see the module docs.
    /// A refused intent has broadcast nothing. A live spend is answered
    /// once its delivery route started (`ROUTING`), or earlier when it
    /// ended (a failed redeem, a refund); this replica follows it to its
    /// end in the background and a resume pass takes over if it dies. An
    /// intent whose nonce was already spent answers
    /// [`YieldError::NonceUsed`].
    pub async fn spend(
        &self,
        w: &IntentWire,
        signature: &str,
        (live, idem_key): (bool, Option<&str>),
    ) -> Result<SpendReceipt, YieldError> {
        let legs = self.deps.legs.clone();
        let (quote, body) = self.check(w, signature, legs.as_ref()).await?;
        if !live {
            return Ok(SpendReceipt {
                id: None,
                state: DRY.into(),
                broadcast: false,
                quote,
                redeem_tx: None,
                route_id: None,
                deliver_tx: None,
                refund_tx: None,
                error: None,
            });
        }
        self.sender(w.src_chain)?;
        let agent = body.agent.to_string().to_lowercase();
        let nonce = body.nonce.to_string();
        let key = format!("{agent}:{}:{nonce}", body.src_chain);
        let now = self.deps.clock.now_ms();
        let row = NcSpendRow {
            id: format!("nc_{}", &hex::encode(keccak256(key.as_bytes()))[..24]),
            idem_key: idem_key.map(String::from),
            agent,
            src_chain: body.src_chain,
            nonce: nonce.clone(),
            state: ACCEPTED.into(),
            body: serde_json::to_string(&body).map_err(|e| YieldError::Store(e.to_string()))?,
            redeem_tx: None,
            deliver_tx: None,
            refund_tx: None,
            error: None,
            created_ms: now,
            lease_until_ms: now + self.deps.settings.lease_ms,
        };
        let (row, new) = self.deps.store.begin_nc_spend(&row).await?;
        if !new {
            return Err(YieldError::NonceUsed(nonce));
        }
        tracing::info!(id = %row.id, src = body.src_chain, to = body.to_chain, "yield spend accepted");
        let moved = self.drive(&row.id, legs.as_ref()).await;
        if moved.is_err() {
            self.release(&row.id).await;
        }
        let moved = moved?;
        if moved.state == ROUTING {
            tokio::spawn(self.clone().follow(row.id.clone(), legs));
        } else {
            self.release(&row.id).await;
        }
        self.receipt(&moved, quote).await
    }

    /// The spend `id` as it stands (`GET /api/ncaccount/spend/{id}`).
    pub async fn spend_record(&self, id: &str) -> Result<Option<SpendReceipt>, YieldError> {
        let Some(row) = self.deps.store.nc_spend(id).await? else {
            return Ok(None);
        };
        let b: Body =
            serde_json::from_str(&row.body).map_err(|e| YieldError::Store(e.to_string()))?;
        let quote = b
            .quote
            .and_then(|q| serde_json::from_value::<SpendQuote>(q).ok())
            .ok_or_else(|| YieldError::Store(format!("spend {id} has no figures")))?;
        Ok(Some(self.receipt(&row, quote).await?))
    }
}

impl YieldService {
    /// The receipt of record `row` accepted with figures `quote`.
    async fn receipt(
        &self,
        row: &NcSpendRow,
        quote: SpendQuote,
    ) -> Result<SpendReceipt, YieldError> {
        let route_id = Leg::route_id(&row.id);
        let started = self.deps.store.get_route(&route_id).await?.is_some();
        Ok(SpendReceipt {
            id: Some(row.id.clone()),
            state: row.state.clone(),
            broadcast: row.redeem_tx.is_some(),
            quote,
            redeem_tx: row.redeem_tx.clone(),
            route_id: started.then_some(route_id),
            deliver_tx: row.deliver_tx.clone(),
            refund_tx: row.refund_tx.clone(),
            error: row.error.clone(),
        })
    }
}
