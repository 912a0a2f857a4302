//! Returning a session's unspent balance (spec §4.5 sessions): the
//! session's address holds no gas, so its key signs an EIP-2612 permit for
//! the relayer and the relayer sends `permit()` (skipped when the
//! allowance is already there) and then `transferFrom(session, refundTo,
//! balance)` — two relayer transactions, each journaled by the crash-safe
//! [`Sender`] under the sweep's journal key before it is broadcast.
//!
//! Idempotent: the balance is read first and a zero balance sends nothing;
//! transactions journaled by an earlier, interrupted sweep are finished
//! first (the same signed bytes, never a second nonce). Each transaction is
//! simulated from the relayer first: one that would revert is not sent
//! (the relayer spends no gas on a sweep that cannot succeed).

use alloy::{
    primitives::{Address, B256, U256},
    sol,
    sol_types::SolCall,
};

use crate::{
    reader::{ChainReader, ReadError, SimCall},
    router::{self, abi, CheckContext},
    sender::{Call, SendError, Sender},
    session_key::SessionSigner,
};

sol! {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// Gas limit of the permit and of the transfer.
const GAS: u64 = 150_000;
/// How long the sweep's permit stays valid, seconds.
const PERMIT_TTL_SECS: u64 = 3_600;

/// Why a sweep did not complete (it is retried; nothing is lost).
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The chain could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The token takes no EIP-2612 permit, or its domain is unreadable.
    #[error("{0}")]
    Permit(String),
    /// A transaction would revert (simulated; not sent).
    #[error("{what} would revert: {why}")]
    Reverts {
        /// `permit` or `transferFrom`.
        what: &'static str,
        /// The revert reason.
        why: String,
    },
    /// A transaction failed.
    #[error(transparent)]
    Send(#[from] SendError),
}

/// Simulates `call` from the relayer; `Err` when it would revert.
async fn simulate(
    reader: &ChainReader,
    chain: u64,
    relayer: Address,
    call: &Call,
    what: &'static str,
) -> Result<(), SweepError> {
    let sim = SimCall {
        from: relayer,
        to: call.to,
        data: call.data.clone(),
        value: call.value,
        gas_limit: Some(call.gas_limit),
    };
    match reader.simulate(chain, &sim).await? {
        Ok(_) => Ok(()),
        Err(revert) => Err(SweepError::Reverts {
            what,
            why: revert.reason(),
        }),
    }
}

/// One balance to return.
#[derive(Clone, Copy, Debug)]
pub struct SweepTarget<'a> {
    /// The chain.
    pub chain: u64,
    /// The ERC-20 token.
    pub token: Address,
    /// Where the balance goes (the session's `refundTo`).
    pub to: Address,
    /// The journal key of the sweep's transactions (one per session,
    /// chain and token).
    pub journal: &'a str,
    /// Now, unix ms (the permit's deadline and the journal steps).
    pub now_ms: u64,
}

/// What a sweep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Swept {
    /// The session's balance was zero: nothing sent.
    Nothing,
    /// `amount` went to the refund address in `tx`.
    Returned {
        /// Smallest units.
        amount: U256,
        /// The transfer's hash.
        tx: B256,
    },
}

/// Returns `key`'s whole balance of `t.token` on `t.chain` to `t.to`
/// (module docs); `relayer` is `sender`'s address.
pub async fn sweep(
    reader: &ChainReader,
    sender: &Sender,
    key: &SessionSigner,
    relayer: Address,
    t: SweepTarget<'_>,
) -> Result<Swept, SweepError> {
    if let Err(e) = sender.resume(t.journal).await {
        // A journaled transaction of an earlier sweep reverted or is
        // unknown: the balance read below decides what is left to do.
        tracing::warn!(journal = t.journal, error = %e, "an earlier sweep transaction did not succeed");
    }
    let owner = key.address();
    let balance = reader.token_balance(t.chain, t.token, owner).await?;
    if balance.is_zero() {
        return Ok(Swept::Nothing);
    }
    // Steps are unique per sweep: the permit at 2·now, the transfer after.
    let step = i64::try_from(t.now_ms.saturating_mul(2)).unwrap_or(i64::MAX - 1);
    let allowance = reader.allowance(t.chain, t.token, owner, relayer).await?;
    if allowance < balance {
        let call = permit_call(reader, key, relayer, balance, t).await?;
        simulate(reader, t.chain, relayer, &call, "permit").await?;
        sender.send(t.journal, step, &call).await?;
    }
    let data = transferFromCall {
        from: owner,
        to: t.to,
        value: balance,
    }
    .abi_encode();
    let call = Call {
        to: t.token,
        data: data.into(),
        value: U256::ZERO,
        gas_limit: GAS,
    };
    simulate(reader, t.chain, relayer, &call, "transferFrom").await?;
    let receipt = sender.send(t.journal, step + 1, &call).await?;
    Ok(Swept::Returned {
        amount: balance,
        tx: receipt.transaction_hash,
    })
}

/// The relayer's `permit(owner = session, spender = relayer, value)`,
/// signed by the session key under the token's own domain.
async fn permit_call(
    reader: &ChainReader,
    key: &SessionSigner,
    relayer: Address,
    value: U256,
    t: SweepTarget<'_>,
) -> Result<Call, SweepError> {
    let cx = CheckContext {
        reader,
        chain_id: t.chain,
        permit2: Address::ZERO,
        now_secs: t.now_ms / 1000,
    };
    let owner = key.address();
    let (separator, nonce) = router::token_domain(cx, t.token, owner)
        .await
        .map_err(|e| SweepError::Permit(e.to_string()))?;
    let deadline = U256::from(t.now_ms / 1000 + PERMIT_TTL_SECS);
    let digest = router::erc2612_digest(
        separator,
        &abi::Permit {
            owner,
            spender: relayer,
            value,
            nonce,
            deadline,
        },
    );
    let sig = key
        .sign_hash(&digest)
        .map_err(|e| SweepError::Permit(e.to_string()))?;
    let raw = sig.as_bytes();
    let data = permitCall {
        owner,
        spender: relayer,
        value,
        deadline,
        v: raw[64],
        r: B256::from_slice(&raw[..32]),
        s: B256::from_slice(&raw[32..64]),
    }
    .abi_encode();
    Ok(Call {
        to: t.token,
        data: data.into(),
        value: U256::ZERO,
        gas_limit: GAS,
    })
}
