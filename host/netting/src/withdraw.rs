//! Withdrawals: the account is debited (the destination's payout cost
//! withheld) and the withdrawal recorded in one transaction; then the
//! relayer pays `amount − payoutCost` on the destination chain through its
//! crash-safe sender (signed and journaled under the withdrawal's id
//! before broadcast, so a crash never pays twice). A payout that reverts
//! or cannot be sent is credited back by a reversing entry; one whose
//! outcome is unknown stays `PENDING` and the resume job finishes it.
//!
//! Nothing is recorded or sent for a request that fails a check: a bad
//! signature, a spent nonce, a balance or cap short, an amount at or below
//! the payout cost, or a payout that fails its simulation. A recipient the
//! token refuses (the zero address, or any payout that reverts while the
//! relayer's float covers it) is the caller's mistake: a typed 400 naming
//! `toAddress`, never the 503 of a float that is really short.

use crate::ledger::{Posted, WithdrawalMove, WithdrawalRow};
use alloy::primitives::{Address, U256};
use relay_chain::{
    eip3009::transfer_calldata,
    reader::SimCall,
    sender::{Call, SendError, Sender},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{entries, error::invalid, moves::refusal, texts, NettingError, NettingService};

/// Paid out.
pub const PAID: &str = "PAID";
/// Debited; the payout is not mined yet.
pub const PENDING: &str = "PENDING";
/// The payout failed; the amount was credited back.
pub const FAILED: &str = "FAILED";

/// `POST /api/netting/withdraw`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WithdrawAsk {
    /// The enrolled address.
    pub address: String,
    /// Debited, smallest units (decimal string); the payout cost is withheld from it.
    pub amount: String,
    /// The covered chain paid on.
    pub to_chain: u64,
    /// Who is paid.
    pub to_address: String,
    /// Above the account nonce.
    pub nonce: u64,
    /// EIP-191 signature by `address` of
    /// `relay-netting-withdraw:v1:from=<a>:amount=<n>:toChain=<id>:to=<addr>:nonce=<n>`.
    pub signature: String,
}

/// A withdrawal.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawal {
    /// `nw_…`.
    pub id: String,
    /// The ledger entry that debited it.
    pub entry_id: String,
    /// `PAID`, `PENDING` (the payout's outcome is not known yet) or `FAILED`
    /// (credited back).
    pub state: String,
    /// The account.
    pub address: String,
    /// Debited.
    pub amount: String,
    /// Withheld for the payout.
    pub payout_cost: String,
    /// Paid (`amount − payoutCost`).
    pub net: String,
    /// Destination chain.
    pub to_chain: u64,
    /// Recipient.
    pub to_address: String,
    /// The payout transaction.
    pub tx_hash: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The account's balance now.
    pub balance: String,
}

impl NettingService {
    /// Checks, debits and pays a withdrawal.
    pub async fn withdraw(&self, ask: &WithdrawAsk) -> Result<Withdrawal, NettingError> {
        let a = texts::address("address", &ask.address)?;
        let to = texts::address("toAddress", &ask.to_address)?;
        if to.is_zero() {
            return Err(invalid(
                "toAddress",
                "the zero address cannot receive USDC (the token refuses it): name the recipient's address",
            ));
        }
        let amount = texts::amount("amount", &ask.amount)?;
        if ask.nonce == 0 || ask.nonce > i64::MAX as u64 {
            return Err(invalid("nonce", "must be 1 or more (and fit 63 bits)"));
        }
        let text = texts::withdraw_text(&a, amount, (ask.to_chain, &to), ask.nonce);
        texts::verify(&text, &ask.signature, &a)?;
        let (token, _) = self.token_on(ask.to_chain)?;
        let (balance, current) = self.enrolled("address", &a).await?;
        if ask.nonce <= current {
            return Err(NettingError::NonceSpent {
                nonce: ask.nonce,
                current,
            });
        }
        let cap = self.cfg().max_withdraw;
        if amount > u128::from(cap) {
            return Err(NettingError::Cap {
                which: "withdraw",
                cap,
                why: format!("{amount} asked"),
            });
        }
        if (balance as u128) < amount {
            return Err(NettingError::Insufficient {
                balance,
                amount: amount as i64,
            });
        }
        let sender = self.sender(ask.to_chain)?.clone();
        let cost = self.payout_cost(ask.to_chain).await?;
        if cost >= amount {
            return Err(NettingError::BelowPayoutCost {
                chain: ask.to_chain,
                cost,
                amount,
            });
        }
        let call = self.payout_call(token, to, amount - cost);
        self.simulate(ask.to_chain, (token, amount - cost), &call)
            .await?;
        let row = self.record(ask, &a, (amount, cost)).await?;
        tracing::info!(id = %row.id, chain = row.to_chain, "netting withdrawal debited; paying");
        let done = self.drive(&row, &sender).await?;
        self.report(&done).await
    }

    fn sender(&self, chain: u64) -> Result<&std::sync::Arc<Sender>, NettingError> {
        self.payer()?
            .by_chain
            .get(&chain)
            .ok_or(NettingError::ChainUnsupported(chain))
    }

    fn payout_call(&self, token: Address, to: Address, net: u128) -> Call {
        Call {
            to: token,
            data: transfer_calldata(to, U256::from(net)),
            value: U256::ZERO,
            gas_limit: self.cfg().payout_gas,
        }
    }

    /// Refuses a payout of `net` `token` that would revert: the relayer's
    /// float is short ([`NettingError::FloatShort`]), or — the float
    /// covering it — the token refuses the recipient (the caller's
    /// `toAddress`).
    async fn simulate(
        &self,
        chain: u64,
        (token, net): (Address, u128),
        call: &Call,
    ) -> Result<(), NettingError> {
        let relayer = self.payer()?.relayer;
        let sim = SimCall {
            from: relayer,
            to: call.to,
            data: call.data.clone(),
            value: call.value,
            gas_limit: Some(call.gas_limit),
        };
        let Err(revert) = self.deps.parts.reader.simulate(chain, &sim).await? else {
            return Ok(());
        };
        let float = self
            .deps
            .parts
            .reader
            .token_balance(chain, token, relayer)
            .await?;
        if float >= U256::from(net) {
            tracing::info!(chain, reason = %revert.reason(), "netting payout refused by the token");
            return Err(invalid(
                "toAddress",
                "USDC refuses a payout to this recipient (the relayer's float covers it): name another address",
            ));
        }
        Err(NettingError::FloatShort {
            chain,
            why: revert.reason(),
        })
    }

    /// Debits the account and records the withdrawal, in one transaction.
    async fn record(
        &self,
        ask: &WithdrawAsk,
        a: &Address,
        (amount, cost): (u128, u128),
    ) -> Result<WithdrawalRow, NettingError> {
        let now = self.now_ms();
        let (amount, cost) = (amount as i64, cost as i64);
        let addr = texts::lower(a);
        let e = entries::withdraw(&addr, (ask.to_chain, cost), amount, ask.nonce, now);
        let row = WithdrawalRow {
            id: e.id.replacen("le_", "nw_", 1),
            entry_id: e.id.clone(),
            address: addr,
            amount,
            payout_cost: cost,
            to_chain: ask.to_chain,
            to_address: ask.to_address.to_ascii_lowercase(),
            state: PENDING.into(),
            tx_hash: None,
            error: None,
            lease_until_ms: now + self.cfg().lease_ms,
            created_ms: now,
        };
        match self.deps.store.post_withdrawal(&e, &row).await? {
            Posted::New(_) => Ok(row),
            Posted::Duplicate(_) => {
                let current = self.account(a).await?.map_or(0, |x| x.1);
                Err(NettingError::NonceSpent {
                    nonce: ask.nonce,
                    current,
                })
            }
            Posted::Refused(r) => Err(refusal(r, ask.nonce, amount, self.cfg().max_balance)),
        }
    }

    /// Pays `row` (finishing a journaled attempt if there is one); credits
    /// it back when the payout fails.
    async fn drive(
        &self,
        row: &WithdrawalRow,
        sender: &Sender,
    ) -> Result<WithdrawalRow, NettingError> {
        let journaled = self.deps.store.journal_of(&row.id).await?;
        let attempts = if journaled.is_empty() {
            let (token, _) = self.token_on(row.to_chain)?;
            let to = texts::address("toAddress", &row.to_address)?;
            let call = self.payout_call(token, to, (row.amount - row.payout_cost) as u128);
            match sender.plan(&row.id, 0, &call).await {
                Ok(e) => vec![e],
                Err(e) => return self.fail(row, &e.to_string()).await,
            }
        } else {
            journaled
        };
        match sender.complete(attempts).await {
            Ok(r) => {
                let m = WithdrawalMove {
                    state: PAID.into(),
                    tx_hash: Some(format!("{:#x}", r.transaction_hash)),
                    error: None,
                };
                self.deps.store.update_withdrawal(&row.id, &m).await?;
                tracing::info!(id = %row.id, "netting withdrawal paid");
            }
            Err(SendError::Reverted(h)) => {
                return self.fail(row, &format!("the payout {h:#x} reverted")).await
            }
            Err(SendError::NotSent(e)) => return self.fail(row, &e).await,
            Err(e) => {
                tracing::warn!(id = %row.id, error = %e, "netting payout outcome unknown; the resume job finishes it");
            }
        }
        Ok(self
            .deps
            .store
            .withdrawal(&row.id)
            .await?
            .unwrap_or_else(|| row.clone()))
    }

    /// Credits a failed payout back (a reversing entry) and marks it failed.
    async fn fail(&self, row: &WithdrawalRow, why: &str) -> Result<WithdrawalRow, NettingError> {
        let debit = self
            .deps
            .store
            .ledger_entry(&row.entry_id)
            .await?
            .ok_or_else(|| NettingError::Unavailable(format!("no entry {}", row.entry_id)))?;
        let e = entries::reversal(&debit, why, self.now_ms());
        let m = WithdrawalMove {
            state: FAILED.into(),
            tx_hash: None,
            error: Some(why.into()),
        };
        match self.deps.store.reverse_withdrawal(&e, &row.id, &m).await? {
            Posted::New(_) | Posted::Duplicate(_) => {}
            Posted::Refused(r) => {
                return Err(NettingError::Unavailable(format!(
                    "reversal refused: {r:?}"
                )))
            }
        }
        tracing::warn!(id = %row.id, why, "netting payout failed; credited back");
        Err(NettingError::PayoutFailed(why.into()))
    }

    async fn report(&self, row: &WithdrawalRow) -> Result<Withdrawal, NettingError> {
        let a = texts::address("address", &row.address)?;
        let balance = self.account(&a).await?.map_or(0, |x| x.0);
        Ok(Withdrawal {
            id: row.id.clone(),
            entry_id: row.entry_id.clone(),
            state: row.state.clone(),
            address: row.address.clone(),
            amount: row.amount.to_string(),
            payout_cost: row.payout_cost.to_string(),
            net: (row.amount - row.payout_cost).to_string(),
            to_chain: row.to_chain,
            to_address: row.to_address.clone(),
            tx_hash: row.tx_hash.clone(),
            error: row.error.clone(),
            balance: balance.to_string(),
        })
    }

    /// One pass of the resume job: finishes every `PENDING` withdrawal
    /// whose holder's lease lapsed. Returns how many it drove.
    pub async fn resume(&self) -> usize {
        let mut n = 0;
        loop {
            let now = self.now_ms();
            let claimed = self
                .deps
                .store
                .claim_withdrawal(now, now + self.cfg().lease_ms)
                .await;
            let row = match claimed {
                Ok(Some(row)) => row,
                Ok(None) => return n,
                Err(e) => {
                    tracing::warn!(error = %e, "netting resume: store");
                    return n;
                }
            };
            n += 1;
            let driven = match self.sender(row.to_chain) {
                Ok(s) => self.drive(&row, &s.clone()).await.map(|_| ()),
                Err(e) => Err(e),
            };
            if let Err(e) = driven {
                tracing::warn!(id = %row.id, error = %e, "resumed netting withdrawal stopped");
            }
        }
    }
}
