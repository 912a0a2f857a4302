//! The simulators' library errors: starting them ([`SimError`]) and settling
//! a transfer on the devnet or a simulated ledger ([`SettleError`]). Upstream
//! error *answers* are not here — each upstream module renders its own
//! documented error body.

use std::fmt::Display;

/// Why the simulators could not start.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// No loopback port could be bound.
    #[error("simulator: cannot bind a loopback port: {0}")]
    Bind(#[from] std::io::Error),
    /// A devnet chain did not answer while the watchers were being set up.
    #[error("simulator: devnet chain {chain} did not answer: {message}")]
    Chain {
        /// The chain id.
        chain: u64,
        /// What the node said.
        message: String,
    },
}

/// Why a settlement step (payout, refund, ledger credit, mint) failed.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    /// The chain is not part of this devnet.
    #[error("simulator: chain {0} is not on this devnet")]
    UnknownChain(u64),
    /// The simulated ledger has no such asset.
    #[error("simulator: no asset {0} on that simulated ledger")]
    UnknownAsset(String),
    /// An amount does not fit the target representation.
    #[error("simulator: amount out of range: {0}")]
    Amount(String),
    /// A devnet transaction failed or was not mined.
    #[error("simulator: transaction on chain {chain} failed: {message}")]
    Chain {
        /// The chain id.
        chain: u64,
        /// What the node or contract said.
        message: String,
    },
}

impl SettleError {
    /// A failed transaction on `chain`.
    pub fn chain(chain: u64, e: impl Display) -> Self {
        SettleError::Chain {
            chain,
            message: e.to_string(),
        }
    }
}
