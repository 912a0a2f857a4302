//! Enrolment, deposits and internal transfers.

use crate::ledger::{user_account, Posted, Refusal};
use alloy::primitives::{keccak256, Address, B256, U256};
use relay_chain::receipts::TxReceipt;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    entries::{self, Bounds},
    error::invalid,
    texts, NettingError, NettingService,
};

/// `POST /api/netting/enroll`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrolAsk {
    /// The address enrolling.
    pub address: String,
    /// EIP-191 signature of exactly the terms text (`GET /api/netting/terms`).
    pub signature: String,
}

/// An enrolment.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Enrolled {
    /// The address (lowercase).
    pub address: String,
    /// Always true.
    pub enrolled: bool,
    /// The terms version signed.
    pub terms_version: String,
    /// False when the address was enrolled already (nothing changed).
    pub new: bool,
    /// The balance, smallest units.
    pub balance: String,
    /// The account nonce (the next signature needs a larger one).
    pub nonce: u64,
}

/// `POST /api/netting/deposit`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DepositAsk {
    /// The enrolled address that sent the USDC.
    pub address: String,
    /// The covered chain it was sent on.
    pub chain_id: u64,
    /// The transaction sending USDC from `address` to the relayer.
    pub tx_hash: String,
}

/// A deposit's answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Deposited {
    /// The ledger entry.
    pub entry_id: String,
    /// True when this request credited it; false when the transaction was
    /// credited before (nothing credited again).
    pub credited: bool,
    /// Credited, smallest units.
    pub amount: String,
    /// The account's balance now.
    pub balance: String,
    /// The chain.
    pub chain_id: u64,
    /// The transaction.
    pub tx_hash: String,
}

/// `POST /api/netting/transfer`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferAsk {
    /// Payer (enrolled).
    pub from: String,
    /// Payee (enrolled).
    pub to: String,
    /// Smallest units, decimal string.
    pub amount: String,
    /// Above the payer's account nonce.
    pub nonce: u64,
    /// EIP-191 signature by `from` of
    /// `relay-netting-transfer:v1:from=<a>:to=<b>:amount=<n>:nonce=<n>`.
    pub signature: String,
}

/// A transfer's answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transferred {
    /// The ledger entry.
    pub entry_id: String,
    /// Payer.
    pub from: String,
    /// Payee.
    pub to: String,
    /// Moved, smallest units.
    pub amount: String,
    /// The nonce spent (now the payer's account nonce).
    pub nonce: u64,
    /// The payer's balance now.
    pub balance: String,
}

/// The error of a ledger refusal.
pub(super) fn refusal(r: Refusal, nonce: u64, amount: i64, max_balance: u64) -> NettingError {
    match r {
        Refusal::NonceSpent { current, .. } => NettingError::NonceSpent { nonce, current },
        Refusal::Insufficient { balance, .. } => NettingError::Insufficient { balance, amount },
        Refusal::UnknownAccount(a) => NettingError::NotEnrolled {
            field: "to",
            address: a.trim_start_matches("user:").into(),
        },
        Refusal::OverBalanceCap { account, balance } => NettingError::Cap {
            which: "balance",
            cap: max_balance,
            why: format!("{account} holds {balance}; {amount} more exceeds it"),
        },
        Refusal::OverSafeShare { liabilities } => NettingError::SafeShare {
            after: i128::from(liabilities) + i128::from(amount),
            cap: i128::from(liabilities),
        },
        Refusal::Unbalanced => invalid("amount", "out of range"),
    }
}

/// The USDC moved by `r` from `from` to `to` in `token`'s `Transfer` logs.
fn paid(r: &TxReceipt, token: Address, (from, to): (Address, Address)) -> U256 {
    let topic = keccak256("Transfer(address,address,uint256)");
    r.logs
        .iter()
        .filter(|l| l.address == token && l.topics.len() == 3 && l.topics[0] == topic)
        .filter(|l| l.topics[1] == from.into_word() && l.topics[2] == to.into_word())
        .filter(|l| l.data.len() == 32)
        .map(|l| U256::from_be_slice(&l.data))
        .fold(U256::ZERO, |s, v| s.saturating_add(v))
}

impl NettingService {
    /// The account of `address`: its balance and nonce (`None`: not enrolled).
    pub async fn account(&self, address: &Address) -> Result<Option<(i64, u64)>, NettingError> {
        let a = self
            .deps
            .store
            .ledger_account(&user_account(&texts::lower(address)))
            .await?;
        Ok(a.map(|a| (a.balance, a.nonce)))
    }

    pub(super) async fn enrolled(
        &self,
        field: &'static str,
        a: &Address,
    ) -> Result<(i64, u64), NettingError> {
        self.account(a)
            .await?
            .ok_or_else(|| NettingError::NotEnrolled {
                field,
                address: texts::lower(a),
            })
    }

    /// The terms `address` signs to enrol.
    pub fn terms(&self, address: &Address) -> String {
        let chains: Vec<u64> = self.covered().iter().map(|c| c.0).collect();
        texts::terms(address, self.cfg(), &chains)
    }

    /// Enrols the signer of the terms; again: the same answer, nothing changes.
    pub async fn enrol(&self, ask: &EnrolAsk) -> Result<Enrolled, NettingError> {
        let a = texts::address("address", &ask.address)?;
        texts::verify(&self.terms(&a), &ask.signature, &a)?;
        let new = self
            .deps
            .store
            .enrol(
                &texts::lower(&a),
                texts::TERMS_VERSION,
                &ask.signature,
                self.now_ms(),
            )
            .await?;
        let (balance, nonce) = self.enrolled("address", &a).await?;
        tracing::info!(address = %a, new, "netting enrolment");
        Ok(Enrolled {
            address: texts::lower(&a),
            enrolled: true,
            terms_version: texts::TERMS_VERSION.into(),
            new,
            balance: balance.to_string(),
            nonce,
        })
    }

    /// The safe share now: the configured fraction of the relayer's asset
    /// across covered chains, and that float.
    pub(super) async fn safe_share(&self) -> Result<(U256, U256), NettingError> {
        let relayer = self.payer()?.relayer;
        let mut float = U256::ZERO;
        for (chain, token, _) in self.covered() {
            float += self
                .deps
                .parts
                .reader
                .token_balance(chain, token, relayer)
                .await?;
        }
        let share = float * U256::from(self.cfg().safe_share_ppm) / U256::from(crate::PPM);
        Ok((share, float))
    }

    /// Credits the USDC `ask.tx_hash` sent from the address to the relayer,
    /// once per transaction.
    pub async fn deposit(&self, ask: &DepositAsk) -> Result<Deposited, NettingError> {
        let a = texts::address("address", &ask.address)?;
        let (token, _) = self.token_on(ask.chain_id)?;
        let tx: B256 = ask
            .tx_hash
            .parse()
            .map_err(|_| invalid("txHash", "not a 32-byte 0x hash"))?;
        let tx_hash = format!("{tx:#x}");
        self.enrolled("address", &a).await?;
        let relayer = self.payer()?.relayer;
        let amount = self
            .confirmed_payment(ask.chain_id, tx, token, (a, relayer))
            .await?;
        let cfg = self.cfg();
        if amount > U256::from(cfg.max_deposit) {
            return Err(NettingError::Cap {
                which: "deposit",
                cap: cfg.max_deposit,
                why: format!("the transaction sent {amount}; it is not credited"),
            });
        }
        let amount = amount.to::<i64>();
        let (share, _) = self.safe_share().await?;
        let bounds = Bounds {
            max_balance: cfg.max_balance as i64,
            liabilities_cap: Some(share.min(U256::from(i64::MAX)).to::<i64>()),
            now_ms: self.now_ms(),
        };
        let e = entries::deposit(&texts::lower(&a), (ask.chain_id, &tx_hash), amount, bounds);
        let (entry, credited) = match self.deps.store.post_entry(&e).await? {
            Posted::New(e) => (e, true),
            Posted::Duplicate(e) => (e, false),
            Posted::Refused(Refusal::OverSafeShare { liabilities }) => {
                return Err(NettingError::SafeShare {
                    after: i128::from(liabilities) + i128::from(amount),
                    cap: share.min(U256::from(i64::MAX)).to::<i128>(),
                })
            }
            Posted::Refused(r) => return Err(refusal(r, 0, amount, cfg.max_balance)),
        };
        let credit = entry.postings.first().map_or(0, |p| p.amount);
        let (balance, _) = self.enrolled("address", &a).await?;
        tracing::info!(address = %a, chain = ask.chain_id, %tx_hash, credited, "netting deposit");
        Ok(Deposited {
            entry_id: entry.id,
            credited,
            amount: credit.to_string(),
            balance: balance.to_string(),
            chain_id: ask.chain_id,
            tx_hash,
        })
    }

    /// The `token` that transaction `tx` on `chain` moved from `from` to
    /// `to`, once it succeeded and has the configured confirmations.
    async fn confirmed_payment(
        &self,
        chain: u64,
        tx: B256,
        token: Address,
        (from, to): (Address, Address),
    ) -> Result<U256, NettingError> {
        let r = self
            .deps
            .parts
            .reader
            .receipt(chain, tx)
            .await?
            .ok_or_else(|| {
                NettingError::DepositPending(format!("{tx:#x} is not mined on chain {chain}"))
            })?;
        if !r.success {
            return Err(NettingError::DepositInvalid(format!("{tx:#x} reverted")));
        }
        let head = self.deps.parts.reader.block_number(chain).await?;
        let confirmations = (head + 1).saturating_sub(r.block_number);
        let need = self.cfg().confirmations;
        if confirmations < need {
            return Err(NettingError::DepositPending(format!(
                "{confirmations} of {need} confirmations; post it again later"
            )));
        }
        self.depositors_own(&r, tx, token, from).await?;
        let amount = paid(&r, token, (from, to));
        if amount.is_zero() {
            return Err(NettingError::DepositInvalid(format!(
                "{tx:#x} has no {} Transfer from {} to the relayer {to}",
                self.cfg().asset,
                texts::lower(&from)
            )));
        }
        Ok(amount)
    }

    /// Refuses a transaction that is not the depositor's own plain call of
    /// the token: sent by someone else (the relayer's Permit2 pull of a
    /// route, an x402 settlement, a router call, a sponsored batch — each
    /// moves the user's tokens to the relayer, but for something already
    /// paid for), sent to another contract, or one the relayer journaled.
    async fn depositors_own(
        &self,
        r: &TxReceipt,
        tx: B256,
        token: Address,
        depositor: Address,
    ) -> Result<(), NettingError> {
        let refuse = |why: String| Err(NettingError::DepositInvalid(format!("{tx:#x} {why}")));
        if r.from != depositor {
            return refuse(format!(
                "was sent by {}, not by the depositor {}: only a transfer the depositor sent itself is credited",
                texts::lower(&r.from),
                texts::lower(&depositor)
            ));
        }
        if r.to != Some(token) {
            return refuse(format!(
                "is not a call of the {} contract {}: send it with the token's own transfer",
                self.cfg().asset,
                texts::lower(&token)
            ));
        }
        if self.deps.store.journaled_tx(&format!("{tx:#x}")).await? {
            return refuse("is one of the relayer's own transactions".into());
        }
        Ok(())
    }

    /// Moves `ask.amount` from `ask.from` to `ask.to` (both enrolled),
    /// spending the payer's nonce.
    pub async fn transfer(&self, ask: &TransferAsk) -> Result<Transferred, NettingError> {
        let from = texts::address("from", &ask.from)?;
        let to = texts::address("to", &ask.to)?;
        let amount = texts::amount("amount", &ask.amount)?;
        if from == to {
            return Err(invalid("to", "a transfer to oneself moves nothing"));
        }
        if ask.nonce == 0 || ask.nonce > i64::MAX as u64 {
            return Err(invalid("nonce", "must be 1 or more (and fit 63 bits)"));
        }
        let text = texts::transfer_text(&from, &to, amount, ask.nonce);
        texts::verify(&text, &ask.signature, &from)?;
        self.enrolled("from", &from).await?;
        self.enrolled("to", &to).await?;
        let amount = amount as i64;
        let bounds = Bounds {
            max_balance: self.cfg().max_balance as i64,
            liabilities_cap: None,
            now_ms: self.now_ms(),
        };
        let (f, t) = (texts::lower(&from), texts::lower(&to));
        let e = entries::transfer(&f, &t, amount, ask.nonce, bounds);
        let entry = match self.deps.store.post_entry(&e).await? {
            Posted::New(e) => e,
            Posted::Duplicate(_) => {
                let (_, current) = self.enrolled("from", &from).await?;
                return Err(NettingError::NonceSpent {
                    nonce: ask.nonce,
                    current,
                });
            }
            Posted::Refused(r) => {
                return Err(refusal(r, ask.nonce, amount, self.cfg().max_balance))
            }
        };
        let (balance, _) = self.enrolled("from", &from).await?;
        tracing::info!(%from, %to, nonce = ask.nonce, "netting transfer");
        Ok(Transferred {
            entry_id: entry.id,
            from: f,
            to: t,
            amount: amount.to_string(),
            nonce: ask.nonce,
            balance: balance.to_string(),
        })
    }
}
