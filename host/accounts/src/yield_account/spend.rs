//! Spending from the yield account (`POST /api/ncaccount/quote`, `POST
//! /api/ncaccount/spend`).
//!
//! Fee: `[ncaccount] fee_bps` of the amount (0.15 %), at least
//! `min_fee_units` (0.01 USD); the destination receives `amount − fee`.
//! The relayer redeems exactly `amount` of assets from the agent's shares
//! (`vault.withdraw(amount, relayer, agent)`, burning `previewWithdraw
//! (amount)` shares under the agent's share allowance) on srcChain, then
//! pays `amount − fee` of the asset from its float on toChain. Both are
//! steps of the relayer's journal under the spend's id (0 redeem, 1
//! deliver): signed and journaled before broadcast, never sent twice. The
//! record moves `ACCEPTED → REDEEMED → DELIVERED`, or to `FAILED` when the
//! redeem fails (nothing moved) or the delivery cannot be sent (the error
//! says so; the redeemed assets stay with the relayer for the operator to
//! return).
//!
//! `live` false (or missing) answers what would happen — every check run,
//! nothing recorded or sent (`state: DRY`).

use alloy::primitives::{keccak256, Address, Bytes, U256};
use relay_chain::{
    reader::SimCall,
    sender::{Call, SendError},
    vault::{self, Spend},
};
use relay_store::{NcSpendMove, NcSpendRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{VaultRef, YieldError, YieldService};

/// Gas of the redeem (`withdraw`).
const REDEEM_GAS: u64 = 250_000;
/// Gas of the delivery (an ERC-20 transfer).
const DELIVER_GAS: u64 = 100_000;

/// Accepted.
pub const ACCEPTED: &str = "ACCEPTED";
/// Shares redeemed to the relayer; the delivery is not yet mined.
pub const REDEEMED: &str = "REDEEMED";
/// Delivered.
pub const DELIVERED: &str = "DELIVERED";
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
#[derive(Clone, Debug, Serialize, ToSchema)]
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
    /// What the recipient receives: `amount − fee`.
    pub delivered: String,
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

/// The delivery leg.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendRoute {
    /// `relayer-float`: the relayer pays from its float on toChain.
    pub via: &'static str,
    /// The asset token on toChain.
    pub token: String,
    /// The relayer's balance of it.
    pub float: String,
    /// `float ≥ delivered`.
    pub float_suffices: bool,
}

/// The answer of a spend.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendReceipt {
    /// `nc_…` (absent on a dry answer).
    pub id: Option<String>,
    /// `DRY`, `ACCEPTED`, `REDEEMED`, `DELIVERED` or `FAILED`.
    pub state: String,
    /// Whether anything was broadcast.
    pub broadcast: bool,
    /// The figures.
    pub quote: SpendQuote,
    /// The redeem (`withdraw`) on srcChain.
    pub redeem_tx: Option<String>,
    /// The payout on toChain.
    pub deliver_tx: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    agent: Address,
    src_chain: u64,
    amount: U256,
    fee: U256,
    shares: U256,
    to_chain: u64,
    to_address: Address,
    nonce: U256,
    deadline: U256,
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
    dst: VaultRef,
    amount: U256,
    to_address: Address,
}

impl YieldService {
    /// The spend fee of `amount`: `fee_bps`, at least `min_fee_units`.
    pub fn fee(&self, amount: U256) -> U256 {
        let c = &self.deps.config.ncaccount;
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
            dst: self.vault(to_chain)?,
            amount,
            to_address: address("toAddress", to)?,
        })
    }

    /// The read-only just-in-time quote of a spend (nothing is signed or
    /// recorded).
    pub async fn quote(&self, q: &QuoteAsk) -> Result<SpendQuote, YieldError> {
        let ask = self.ask(
            &q.agent,
            (q.src_chain, q.to_chain),
            &q.amount,
            &q.to_address,
        )?;
        self.figures(&ask).await
    }

    async fn figures(&self, a: &Ask) -> Result<SpendQuote, YieldError> {
        let fee = self.fee(a.amount);
        if a.amount <= fee {
            return Err(YieldError::BelowFee {
                amount: a.amount,
                fee,
            });
        }
        let delivered = a.amount - fee;
        let relayer = self.relayer()?;
        let r = &self.deps.reader;
        let (chain, vault) = (a.src.chain_id, a.src.vault);
        let needed = r.vault_shares_for(chain, vault, a.amount).await?;
        let h = r.vault_holding(chain, vault, a.agent, relayer).await?;
        let float = r
            .token_balance(a.dst.chain_id, a.dst.asset, relayer)
            .await?;
        let route = SpendRoute {
            via: "relayer-float",
            token: a.dst.asset.to_string(),
            float: float.to_string(),
            float_suffices: float >= delivered,
        };
        let (allowance_ok, balance_ok) = (h.allowance >= needed, h.shares >= needed);
        Ok(SpendQuote {
            agent: a.agent.to_string(),
            src_chain: chain,
            to_chain: a.dst.chain_id,
            to_address: a.to_address.to_string(),
            vault: vault.to_string(),
            amount: a.amount.to_string(),
            fee: fee.to_string(),
            delivered: delivered.to_string(),
            shares_to_redeem: needed.to_string(),
            shares_held: h.shares.to_string(),
            allowance: h.allowance.to_string(),
            allowance_suffices: allowance_ok,
            balance_suffices: balance_ok,
            would_succeed: allowance_ok && balance_ok && route.float_suffices,
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
        let q = self.figures(&a).await?;
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
        let delivered: U256 = q.delivered.parse().unwrap_or(U256::MAX);
        if !q.route.float_suffices {
            return Err(YieldError::FloatInsufficient {
                chain: a.dst.chain_id,
                float: q.route.float.parse().unwrap_or_default(),
                needed: delivered,
            });
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

    /// Checks and (when `live`) runs a signed spend; see the module docs.
    /// A refused intent has broadcast nothing. An intent whose nonce was
    /// already spent answers [`YieldError::NonceUsed`].
    pub async fn spend(
        &self,
        w: &IntentWire,
        signature: &str,
        live: bool,
        idem_key: Option<&str>,
    ) -> Result<SpendReceipt, YieldError> {
        let (quote, body) = self.check(w, signature).await?;
        if live {
            self.sender(w.src_chain)?;
            self.sender(w.to_chain)?;
        }
        if !live {
            return Ok(SpendReceipt {
                id: None,
                state: DRY.into(),
                broadcast: false,
                quote,
                redeem_tx: None,
                deliver_tx: None,
                error: None,
            });
        }
        let agent = body.agent.to_string().to_lowercase();
        let nonce = body.nonce.to_string();
        let key = format!("{agent}:{}:{nonce}", body.src_chain);
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
            error: None,
            created_ms: self.deps.clock.now_ms(),
        };
        let (row, new) = self.deps.store.begin_nc_spend(&row).await?;
        if !new {
            return Err(YieldError::NonceUsed(nonce));
        }
        tracing::info!(id = %row.id, src = body.src_chain, to = body.to_chain, "yield spend accepted");
        let done = self.drive(&row.id).await?;
        Ok(receipt(&done, quote))
    }

    /// Drives spend `id` until it is terminal.
    pub async fn drive(&self, id: &str) -> Result<NcSpendRow, YieldError> {
        loop {
            let row = self
                .deps
                .store
                .nc_spend(id)
                .await?
                .ok_or_else(|| YieldError::Store(format!("no spend {id}")))?;
            let b: Body =
                serde_json::from_str(&row.body).map_err(|e| YieldError::Store(e.to_string()))?;
            let next = match row.state.as_str() {
                ACCEPTED => self.redeem(&row, &b).await?,
                REDEEMED => self.deliver(&row, &b).await?,
                _ => return Ok(row),
            };
            self.deps.store.update_nc_spend(id, &next).await?;
            tracing::info!(%id, state = %next.state, "yield spend moved");
        }
    }

    /// Journal step `step` of `row` on `chain` ([`relay_chain::sender::Sender::run_step`]).
    async fn step(
        &self,
        row: &NcSpendRow,
        (chain, step): (u64, i64),
        call: Call,
    ) -> Result<Result<String, SendError>, YieldError> {
        let sent = self.sender(chain)?.run_step(&row.id, step, &call).await;
        Ok(sent.map(|r| format!("{:#x}", r.transaction_hash)))
    }

    async fn redeem(&self, row: &NcSpendRow, b: &Body) -> Result<NcSpendMove, YieldError> {
        let src = self.vault(b.src_chain)?;
        let relayer = self.relayer()?;
        let call = Call {
            to: src.vault,
            data: vault::withdraw_calldata(b.amount, relayer, b.agent),
            value: U256::ZERO,
            gas_limit: REDEEM_GAS,
        };
        Ok(match self.step(row, (b.src_chain, 0), call).await? {
            Ok(hash) => NcSpendMove {
                state: REDEEMED.into(),
                redeem_tx: Some(hash),
                ..Default::default()
            },
            Err(e) => failed(format!("the redeem failed, nothing moved: {e}"), &e, 0),
        })
    }

    async fn deliver(&self, row: &NcSpendRow, b: &Body) -> Result<NcSpendMove, YieldError> {
        let dst = self.vault(b.to_chain)?;
        let call = Call {
            to: dst.asset,
            data: relay_chain::eip3009::transfer_calldata(b.to_address, b.amount - b.fee),
            value: U256::ZERO,
            gas_limit: DELIVER_GAS,
        };
        Ok(match self.step(row, (b.to_chain, 1), call).await? {
            Ok(hash) => NcSpendMove {
                state: DELIVERED.into(),
                deliver_tx: Some(hash),
                ..Default::default()
            },
            Err(e) => failed(
                format!("redeemed, but the delivery failed (the relayer holds the assets): {e}"),
                &e,
                1,
            ),
        })
    }
}

/// The move to `FAILED` after step `step` (0 redeem, 1 deliver) failed
/// with `e`; a reverted transaction's hash is kept.
fn failed(why: String, e: &SendError, step: i64) -> NcSpendMove {
    let tx = match e {
        SendError::Reverted(h) => Some(format!("{h:#x}")),
        _ => None,
    };
    let (redeem_tx, deliver_tx) = if step == 0 { (tx, None) } else { (None, tx) };
    NcSpendMove {
        state: FAILED.into(),
        error: Some(why),
        redeem_tx,
        deliver_tx,
    }
}

fn receipt(row: &NcSpendRow, quote: SpendQuote) -> SpendReceipt {
    SpendReceipt {
        id: Some(row.id.clone()),
        state: row.state.clone(),
        broadcast: row.redeem_tx.is_some() || row.deliver_tx.is_some(),
        quote,
        redeem_tx: row.redeem_tx.clone(),
        deliver_tx: row.deliver_tx.clone(),
        error: row.error.clone(),
    }
}
