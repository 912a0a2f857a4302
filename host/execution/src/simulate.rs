//! Nothing is broadcast that must revert: every transaction the relayer
//! is about to sign is first simulated (`eth_call` at the pending block
//! from the relayer's address, with the value and gas limit it would
//! carry), and a revert is named instead of paid for.
//!
//! - [`check_pull`]: the Permit2 pull of a route, before the route exists
//!   (execute and preflight share it). A revert is decoded into its cause —
//!   the owner never approved Permit2 for the amount
//!   ([`WouldRevert::AllowanceMissing`]), holds less than the amount
//!   ([`WouldRevert::InsufficientBalance`]), the permit's nonce is spent
//!   ([`WouldRevert::NonceUsed`]) — from the revert data where the token
//!   says, else from on-chain reads; anything else is
//!   [`WouldRevert::CallReverts`] with the revert reason.
//! - [`check_call`]: any other transaction (a self-mode route's first step
//!   before the route exists; each later step right before the executor
//!   signs it, once the steps before it have mined).

use alloy::primitives::{Address, U256};
use relay_chain::{
    permit2::{decode_pull_revert, IPullErrors::IPullErrorsErrors as PullError, SignedPermit},
    reader::{ChainReader, ReadError, Revert, SimCall},
    sender::Call,
};

/// Why a transaction would revert, decoded where it can be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WouldRevert {
    /// The owner's ERC-20 allowance to Permit2 is below the amount.
    #[error("the owner {owner} allows Permit2 {allowance} of the token, less than the amount {amount}: approve Permit2 for the token once (one approve transaction), then send the request again")]
    AllowanceMissing {
        /// The permit's owner.
        owner: Address,
        /// Its allowance to Permit2.
        allowance: U256,
        /// The amount the pull takes.
        amount: U256,
    },
    /// The owner holds less than the amount.
    #[error("the owner {owner} holds {balance} of the token, less than the amount {amount}: fund it or send at most {balance}")]
    InsufficientBalance {
        /// The permit's owner.
        owner: Address,
        /// Its balance.
        balance: U256,
        /// The amount the pull takes.
        amount: U256,
    },
    /// The permit's nonce was used (or invalidated) on chain.
    #[error("permit2.nonce: {0} is already used on chain; sign a new permit with an unused nonce")]
    NonceUsed(U256),
    /// Any other revert.
    #[error("{what} on chain {chain} would revert: {reason}")]
    CallReverts {
        /// The transaction (`the Permit2 pull`, `plan step 1`, …).
        what: String,
        /// The chain.
        chain: u64,
        /// The decoded reason, or the raw revert data.
        reason: String,
    },
}

/// Why a simulation did not clear a transaction.
#[derive(Debug, thiserror::Error)]
pub enum SimulateError {
    /// It would revert.
    #[error(transparent)]
    Reverts(#[from] WouldRevert),
    /// The chain could not be asked (no endpoint answered).
    #[error("cannot simulate the transaction: {0}")]
    Unavailable(#[from] ReadError),
}

/// A route's Permit2 pull.
#[derive(Clone, Copy, Debug)]
pub struct Pull<'a> {
    /// The source chain.
    pub chain: u64,
    /// The relayer (the pull's signer and recipient).
    pub relayer: Address,
    /// The user's signature.
    pub permit: &'a SignedPermit,
    /// The pull transaction, as the executor would sign it.
    pub call: &'a Call,
}

fn sim_call(from: Address, call: &Call) -> SimCall {
    SimCall {
        from,
        to: call.to,
        data: call.data.clone(),
        value: call.value,
        gas_limit: Some(call.gas_limit),
    }
}

/// A revert in words: the pull's known errors by name, else the reason.
fn describe(revert: &Revert) -> String {
    match decode_pull_revert(&revert.data) {
        Some(e) => format!("{e:?}"),
        None => revert.reason(),
    }
}

/// Simulates the Permit2 pull of a route; a revert is named by its cause.
#[tracing::instrument(skip_all, fields(chain = pull.chain, owner = %pull.permit.owner))]
pub async fn check_pull(reader: &ChainReader, pull: &Pull<'_>) -> Result<(), SimulateError> {
    let Err(revert) = reader
        .simulate(pull.chain, &sim_call(pull.relayer, pull.call))
        .await?
    else {
        return Ok(());
    };
    tracing::info!(reason = %describe(&revert), "the Permit2 pull would revert");
    Err(diagnose_pull(reader, pull, &revert).await.into())
}

/// Why a pull reverts: the revert data when the token names the cause,
/// else the owner's allowance, balance and nonce read on chain.
async fn diagnose_pull(reader: &ChainReader, pull: &Pull<'_>, revert: &Revert) -> WouldRevert {
    let p = pull.permit;
    let owner = p.owner;
    match decode_pull_revert(&revert.data) {
        Some(PullError::InvalidNonce(_)) => return WouldRevert::NonceUsed(p.nonce),
        Some(PullError::ERC20InsufficientAllowance(e)) => {
            return WouldRevert::AllowanceMissing {
                owner,
                allowance: e.allowance,
                amount: e.needed,
            }
        }
        Some(PullError::ERC20InsufficientBalance(e)) => {
            return WouldRevert::InsufficientBalance {
                owner,
                balance: e.balance,
                amount: e.needed,
            }
        }
        _ => {}
    }
    let permit2 = pull.call.to;
    let (allowance, balance, unused) = tokio::join!(
        reader.allowance(pull.chain, p.token, owner, permit2),
        reader.token_balance(pull.chain, p.token, owner),
        reader.permit2_nonce_unused(pull.chain, permit2, owner, p.nonce),
    );
    let amount = p.amount.min(requested(pull));
    if let Some(allowance) = allowance.ok().filter(|a| *a < amount) {
        return WouldRevert::AllowanceMissing {
            owner,
            allowance,
            amount,
        };
    }
    if let Some(balance) = balance.ok().filter(|b| *b < amount) {
        return WouldRevert::InsufficientBalance {
            owner,
            balance,
            amount,
        };
    }
    if matches!(unused, Ok(false)) {
        return WouldRevert::NonceUsed(p.nonce);
    }
    WouldRevert::CallReverts {
        what: "the Permit2 pull".into(),
        chain: pull.chain,
        reason: describe(revert),
    }
}

/// The amount the pull requests (its `requestedAmount`), read back from
/// the calldata the executor would sign.
fn requested(pull: &Pull<'_>) -> U256 {
    use alloy::sol_types::SolCall;
    relay_chain::permit2::permitTransferFromCall::abi_decode(&pull.call.data)
        .map_or(pull.permit.amount, |c| c.transferDetails.requestedAmount)
}

/// Simulates a route's router call (module docs): the owner's missing
/// allowance or balance and a spent nonce are named, anything else is
/// [`WouldRevert::CallReverts`] with the router's decoded error.
#[tracing::instrument(skip_all, fields(chain, %owner))]
pub async fn check_router(
    reader: &ChainReader,
    chain: u64,
    from: Address,
    call: &Call,
    owner: Address,
) -> Result<(), SimulateError> {
    use relay_chain::router::{abi::IRouterErrors::IRouterErrorsErrors as E, decode_revert};
    let Err(revert) = reader.simulate(chain, &sim_call(from, call)).await? else {
        return Ok(());
    };
    let decoded = decode_revert(&revert.data);
    tracing::info!(reason = ?decoded, "the router call would revert; not sent");
    Err(match decoded {
        Some(E::ERC20InsufficientAllowance(e)) => WouldRevert::AllowanceMissing {
            owner,
            allowance: e.allowance,
            amount: e.needed,
        },
        Some(E::ERC20InsufficientBalance(e)) => WouldRevert::InsufficientBalance {
            owner,
            balance: e.balance,
            amount: e.needed,
        },
        Some(E::InvalidNonce(_)) => WouldRevert::NonceUsed(U256::ZERO),
        other => WouldRevert::CallReverts {
            what: "the router call".into(),
            chain,
            reason: other.map_or_else(|| revert.reason(), |e| format!("{e:?}")),
        },
    }
    .into())
}

/// Simulates a transaction `from` would sign on `chain`; `what` names it
/// in the error.
#[tracing::instrument(skip_all, fields(chain, what))]
pub async fn check_call(
    reader: &ChainReader,
    chain: u64,
    from: Address,
    call: &Call,
    what: &str,
) -> Result<(), SimulateError> {
    let Err(revert) = reader.simulate(chain, &sim_call(from, call)).await? else {
        return Ok(());
    };
    let reason = describe(&revert);
    tracing::info!(%reason, "the transaction would revert; not sent");
    Err(WouldRevert::CallReverts {
        what: what.to_string(),
        chain,
        reason,
    }
    .into())
}
