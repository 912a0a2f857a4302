//! Withdrawals (`POST /api/pool/withdraw`, `GET /api/pool/hold`): checked
//! in full before anything is stored — fields, denomination, relayer and
//! fee, the proof (verified here, off chain), the root and the nullifier
//! (read from the contract), then the transaction simulated from the
//! relayer — then recorded under a fresh ticket (one record per
//! nullifier: of twenty identical requests one is recorded) and sent now,
//! or held until a time drawn uniformly from the configured window.
//!
//! Sending is the route journal's step 0 under the ticket
//! ([`relay_chain::sender`]): signed and journaled before it is broadcast,
//! so after a crash the same bytes are finished, never a second
//! transaction. Right before a withdrawal is first signed (when it is
//! due, for a held one) it is simulated again: a note withdrawn meanwhile
//! by other means fails without sending, so the relayer never pays for a
//! revert it could foresee.
//!
//! Fault injection for the crash tests: `RELAY_FAULT_POOL=planned` halts
//! the process right after the transaction is journaled, before it is
//! broadcast.

use alloy::{
    primitives::{Address, Bytes, U256},
    sol_types::{SolCall, SolInterface},
};
use relay_chain::{
    reader::{Revert, SimCall},
    sender::{Call, SendError},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    contract::PrivacyPool::{self, PrivacyPoolErrors},
    errors,
    store::{PoolStep, WithdrawalRow, FAILED, HELD, SENDING, SENT},
    zk::{self, Public},
    PoolError, PoolService,
};

/// The fault-injection variable ([`self`]).
pub const FAULT_ENV: &str = "RELAY_FAULT_POOL";

/// `POST /api/pool/withdraw`: a proof and what it proves.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolWithdrawRequest {
    /// The Groth16 proof, eight field elements (decimal or `0x` hex) in the
    /// contract's order: A.x, A.y, B.x (c1, c0), B.y (c1, c0), C.x, C.y.
    pub proof: Vec<String>,
    /// The root proven against (one the pool has had).
    pub root: String,
    /// The note's nullifier hash.
    pub nullifier_hash: String,
    /// Who receives the note less the fee.
    pub recipient: String,
    /// The relayer the proof pays the fee to: this host's.
    pub relayer: String,
    /// The fee the proof names, wei: this host's.
    pub fee: String,
    /// The note's amount, wei: the pool's (20000000000000).
    pub denomination: String,
    /// Present: hold the withdrawal and send it later, at a time drawn
    /// uniformly in the host's window (`{}`), or in the window's start up
    /// to `maxDelayMs`.
    pub hold: Option<PoolHoldAsk>,
}

/// `hold`: defer the withdrawal.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolHoldAsk {
    /// The longest wait the caller accepts, ms (at least the window's
    /// start; default the window's end).
    pub max_delay_ms: Option<u64>,
}

/// A withdrawal as checked: what the record keeps and the transaction is
/// built from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// The proof.
    pub proof: [U256; 8],
    /// The root.
    pub root: U256,
    /// The nullifier hash.
    pub nullifier_hash: U256,
    /// The recipient.
    pub recipient: Address,
    /// The fee.
    pub fee: U256,
}

/// A withdrawal as its ticket shows it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PoolWithdrawal {
    /// `pt_…`: `GET /api/pool/hold?ticket=` reads it; keep it private.
    pub ticket: String,
    /// `HELD`, `SENDING`, `SENT` or `FAILED`.
    pub state: String,
    /// Every state it was in, with when it entered it.
    pub states: Vec<PoolStep>,
    /// The pool's chain.
    pub chain_id: u64,
    /// The pool.
    pub pool: String,
    /// The note's nullifier hash.
    pub nullifier_hash: String,
    /// The recipient.
    pub recipient: String,
    /// What the recipient receives, wei.
    pub amount: String,
    /// The relayer's fee, wei.
    pub fee: String,
    /// When it is (or was) due to be sent, epoch ms.
    pub send_after_ms: u64,
    /// The withdrawal transaction, once sent.
    pub tx_hash: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
}

fn field<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, PoolError> {
    v.trim()
        .parse()
        .map_err(|_| PoolError::invalid(name, format!("{v:?} does not parse")))
}

fn fault(point: &str) {
    relay_x402::orders::halt_at(FAULT_ENV, point);
}

/// Maps a simulated revert onto the refusal it means.
fn revert_refusal(r: &Revert) -> PoolError {
    let code = match PrivacyPoolErrors::abi_decode(&r.data) {
        Ok(PrivacyPoolErrors::UnknownRoot(_)) => errors::PoolRootUnknown,
        Ok(PrivacyPoolErrors::NullifierSpent(_)) => errors::PoolNullifierSpent,
        Ok(PrivacyPoolErrors::InvalidProof(_)) => errors::PoolProofInvalid,
        _ => errors::PoolWouldRevert,
    };
    let name = PrivacyPoolErrors::abi_decode(&r.data)
        .map(|e| format!("{e:?}"))
        .unwrap_or_else(|_| r.reason());
    PoolError::refused(
        code,
        format!("the withdrawal reverts in simulation: {name}"),
    )
}

impl PoolService {
    /// Parses and checks `req` without reading the chain.
    fn parse(&self, req: &PoolWithdrawRequest) -> Result<Checked, PoolError> {
        let p = &self.pool;
        if req.proof.len() != 8 {
            return Err(PoolError::invalid("proof", "eight field elements"));
        }
        let mut proof = [U256::ZERO; 8];
        for (slot, v) in proof.iter_mut().zip(&req.proof) {
            *slot = field("proof", v)?;
        }
        let denomination: U256 = field("denomination", &req.denomination)?;
        if denomination != p.denomination {
            let m = format!(
                "denomination {denomination} is not the pool's {}",
                p.denomination
            );
            return Err(PoolError::refused(errors::PoolDenomination, m));
        }
        let relayer: Address = field("relayer", &req.relayer)?;
        let fee: U256 = field("fee", &req.fee)?;
        if relayer != p.relayer || fee != p.fee {
            let m = format!(
                "this host's relayer is {} and its fee {} wei",
                p.relayer, p.fee
            );
            return Err(PoolError::refused(errors::PoolFeeMismatch, m));
        }
        let recipient: Address = field("recipient", &req.recipient)?;
        if recipient == Address::ZERO || recipient == p.address {
            return Err(PoolError::invalid(
                "recipient",
                "not the zero address or the pool",
            ));
        }
        Ok(Checked {
            proof,
            root: field("root", &req.root)?,
            nullifier_hash: field("nullifierHash", &req.nullifier_hash)?,
            recipient,
            fee,
        })
    }

    fn public(&self, c: &Checked) -> Public {
        Public {
            root: c.root,
            nullifier_hash: c.nullifier_hash,
            signal_hash: zk::signal_hash(c.recipient, self.pool.relayer, c.fee),
            external_nullifier: self.pool.external_nullifier,
        }
    }

    fn call_of(&self, c: &Checked) -> Call {
        let data = PrivacyPool::withdrawCall {
            proof: c.proof,
            root_: c.root,
            nullifierHash: c.nullifier_hash,
            recipient: c.recipient,
            relayer: self.pool.relayer,
            fee: c.fee,
        }
        .abi_encode();
        Call {
            to: self.pool.address,
            data: Bytes::from(data),
            value: U256::ZERO,
            gas_limit: self.config.withdraw_gas,
        }
    }

    async fn read<C: SolCall>(&self, call: C) -> Result<C::Return, PoolError> {
        let (chain, to) = (self.pool.chain_id, self.pool.address);
        let out = self.parts.reader.read(chain, to, call.abi_encode()).await;
        let out = out.map_err(|e| PoolError::Chain(e.to_string()))?;
        C::abi_decode_returns(&out).map_err(|e| PoolError::Chain(e.to_string()))
    }

    /// The chain's checks: the root is known, the nullifier unspent, and
    /// the transaction does not revert.
    async fn check_on_chain(&self, c: &Checked) -> Result<(), PoolError> {
        let root = c.root;
        if !self.read(PrivacyPool::knownRootsCall { root }).await? {
            return Err(PoolError::refused(
                errors::PoolRootUnknown,
                "root is not a root the pool has had",
            ));
        }
        let spent = PrivacyPool::nullifierSpentCall {
            nullifierHash: c.nullifier_hash,
        };
        if self.read(spent).await? {
            return Err(PoolError::refused(
                errors::PoolNullifierSpent,
                "this note is withdrawn already",
            ));
        }
        let call = self.call_of(c);
        let sim = SimCall {
            from: self.pool.relayer,
            to: call.to,
            data: call.data,
            value: call.value,
            gas_limit: Some(call.gas_limit),
        };
        match self.parts.reader.simulate(self.pool.chain_id, &sim).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(revert)) => Err(revert_refusal(&revert)),
            Err(e) => Err(PoolError::Chain(e.to_string())),
        }
    }

    /// When a withdrawal asked to be held with `hold` may be sent.
    fn send_after(&self, hold: &Option<PoolHoldAsk>, now: u64) -> Result<u64, PoolError> {
        let Some(h) = hold else {
            return Ok(now);
        };
        let (min, max) = (self.config.hold_min_ms, self.config.hold_max_ms);
        let max = match h.max_delay_ms {
            Some(m) if m < min => {
                let m = format!(
                    "the host's hold window is {min}..={max} ms; maxDelayMs {m} is below it"
                );
                return Err(PoolError::invalid("hold.maxDelayMs", m));
            }
            Some(m) => m.min(max),
            None => max,
        };
        let delay = min + rand::random_range(0..=max - min);
        Ok(now + delay)
    }

    /// Checks `req` in full, records it and sends it now (the answer then
    /// shows it `SENT` or `FAILED`) or holds it (`HELD`).
    pub async fn withdraw(&self, req: &PoolWithdrawRequest) -> Result<PoolWithdrawal, PoolError> {
        let checked = self.parse(req)?;
        if !zk::verify(&checked.proof, &self.public(&checked)) {
            return Err(PoolError::refused(
                errors::PoolProofInvalid,
                "the proof does not verify for this root, nullifier, recipient, relayer, fee and pool",
            ));
        }
        let nullifier = format!("{:#066x}", checked.nullifier_hash);
        if self.store.has_nullifier(&nullifier).await? {
            return Err(spent_here());
        }
        self.check_on_chain(&checked).await?;
        if self.store.open_count().await? >= self.config.max_open {
            return Err(PoolError::refused(
                errors::PoolHoldFull,
                "too many withdrawals are held or being sent; retry later",
            ));
        }
        let now = self.now_ms();
        let send_after_ms = self.send_after(&req.hold, now)?;
        let state = if req.hold.is_some() { HELD } else { SENDING };
        let row = WithdrawalRow {
            id: format!("pt_{}", hex::encode(rand::random::<[u8; 16]>())),
            nullifier,
            state: state.into(),
            body: serde_json::to_string(&checked).expect("a withdrawal serializes"),
            send_after_ms,
            tx_hash: None,
            error: None,
            states: vec![PoolStep {
                state: state.into(),
                at_ms: now,
            }],
            created_ms: now,
        };
        let lease = now + self.config.lease_ms;
        if !self.store.begin(&row, lease).await? {
            return Err(spent_here());
        }
        tracing::info!(ticket = %row.id, state, "withdrawal accepted");
        let row = match state {
            HELD => {
                self.store.lease(&row.id, 0).await?;
                row
            }
            _ => self.drive(row).await?,
        };
        self.report(&row)
    }

    /// The withdrawal with ticket `ticket`.
    pub async fn hold(&self, ticket: &str) -> Result<PoolWithdrawal, PoolError> {
        let row = self.store.withdrawal(ticket).await?;
        let row = row.ok_or_else(|| {
            PoolError::refused(errors::PoolTicketUnknown, "no withdrawal has this ticket")
        })?;
        self.report(&row)
    }

    fn report(&self, row: &WithdrawalRow) -> Result<PoolWithdrawal, PoolError> {
        let c = checked_of(row)?;
        let p = &self.pool;
        Ok(PoolWithdrawal {
            ticket: row.id.clone(),
            state: row.state.clone(),
            states: row.states.clone(),
            chain_id: p.chain_id,
            pool: p.address.to_checksum(None),
            nullifier_hash: row.nullifier.clone(),
            recipient: c.recipient.to_checksum(None),
            amount: (p.denomination - c.fee).to_string(),
            fee: c.fee.to_string(),
            send_after_ms: row.send_after_ms,
            tx_hash: row.tx_hash.clone(),
            error: row.error.clone(),
        })
    }

    /// Sends `row` (held by this replica): a due held one is checked again
    /// first; returns it as it ends (`SENT`, `FAILED`, or still `SENDING`
    /// when the outcome is not known yet — the job finishes it).
    async fn drive(&self, mut row: WithdrawalRow) -> Result<WithdrawalRow, PoolError> {
        let c = checked_of(&row)?;
        if row.state == HELD {
            row = self
                .store
                .advance(&row, SENDING, (None, None), self.now_ms())
                .await?;
        }
        let sender = self.sender()?.clone();
        let journaled: Vec<_> = self.store.journal_of(&row.id).await?;
        let attempts = match journaled.is_empty() {
            true => {
                if let Err(e) = self.check_on_chain(&c).await {
                    let done = match e {
                        PoolError::Refused(..) => Some(e.to_string()),
                        _ => None,
                    };
                    return self.finish(row, (None, done)).await;
                }
                match sender.plan(&row.id, 0, &self.call_of(&c)).await {
                    Ok(e) => vec![e],
                    Err(e) => return self.sent(row, Err(e)).await,
                }
            }
            false => journaled,
        };
        fault("planned");
        let outcome = sender.complete(attempts).await;
        self.sent(row, outcome.map(|r| format!("{:#x}", r.transaction_hash)))
            .await
    }

    /// Records a send's outcome.
    async fn sent(
        &self,
        row: WithdrawalRow,
        outcome: Result<String, SendError>,
    ) -> Result<WithdrawalRow, PoolError> {
        match outcome {
            Ok(hash) => self.finish(row, (Some(hash), None)).await,
            Err(SendError::Reverted(h)) => {
                let hash = format!("{h:#x}");
                self.finish(row, (Some(hash), Some("reverted on chain".into())))
                    .await
            }
            Err(e) => {
                tracing::warn!(ticket = %row.id, error = %e, "withdrawal not finished; the job retries");
                Ok(row)
            }
        }
    }

    /// Ends `row` as `SENT` (a hash, no error) or `FAILED` (an error); with
    /// neither, leaves it for the job.
    async fn finish(
        &self,
        row: WithdrawalRow,
        (hash, error): (Option<String>, Option<String>),
    ) -> Result<WithdrawalRow, PoolError> {
        let state = match (&hash, &error) {
            (_, Some(_)) => FAILED,
            (Some(_), None) => SENT,
            (None, None) => return Ok(row),
        };
        let now = self.now_ms();
        let row = self
            .store
            .advance(&row, state, (hash.as_deref(), error.as_deref()), now)
            .await?;
        self.store.lease(&row.id, 0).await?;
        tracing::info!(ticket = %row.id, state, "withdrawal finished");
        Ok(row)
    }

    /// The job's tick: sends every withdrawal that is due or whose sender
    /// died; how many it finished.
    pub async fn resume(&self) -> usize {
        let mut finished = 0;
        loop {
            let now = self.now_ms();
            let row = match self.store.claim_due(now, now + self.config.lease_ms).await {
                Ok(Some(row)) => row,
                Ok(None) => return finished,
                Err(e) => {
                    tracing::warn!(error = %e, "due withdrawals not read");
                    return finished;
                }
            };
            match self.drive(row).await {
                Ok(r) if r.state == SENT || r.state == FAILED => finished += 1,
                Ok(_) => return finished,
                Err(e) => {
                    tracing::warn!(error = %e, "a due withdrawal not sent; retried later");
                    return finished;
                }
            }
        }
    }
}

fn spent_here() -> PoolError {
    PoolError::refused(
        errors::PoolNullifierSpent,
        "a withdrawal of this note is already held, being sent or sent",
    )
}

fn checked_of(row: &WithdrawalRow) -> Result<Checked, PoolError> {
    serde_json::from_str(&row.body)
        .map_err(|e| PoolError::Store(relay_store::StoreError::Corrupt(format!("withdrawal: {e}"))))
}
