//! The devnet's error type.

use alloy::primitives::TxHash;
use std::{path::PathBuf, time::Duration};

/// Everything that can go wrong bringing up or driving the devnet.
#[derive(Debug, thiserror::Error)]
pub enum DevnetError {
    /// No anvil binary was found; the message names the installer.
    #[error(
        "anvil not found (looked at $RELAY_ANVIL, {tools_path} and $PATH); \
         install it with conformance/devnet/tools/install.sh"
    )]
    AnvilNotFound {
        /// The project-local path that was tried.
        tools_path: PathBuf,
    },
    /// `$RELAY_ANVIL` names a file that does not exist.
    #[error("RELAY_ANVIL={0} does not exist; unset it or run conformance/devnet/tools/install.sh")]
    AnvilEnvInvalid(PathBuf),
    /// The configuration asked for no chains.
    #[error("the devnet needs at least one chain")]
    NoChains,
    /// A chain id outside the gasless set.
    #[error("chain {0} is not in the gasless set")]
    UnsupportedChain(u64),
    /// The same chain id was requested twice.
    #[error("chain {0} was requested twice")]
    DuplicateChain(u64),
    /// A chain id that this devnet does not run.
    #[error("chain {0} is not part of this devnet")]
    UnknownChain(u64),
    /// A price-feed pair this chain has no feed for.
    #[error("chain {chain_id} has no {pair} price feed")]
    UnknownFeed {
        /// The chain.
        chain_id: u64,
        /// The pair asked for (`ETH/USD`).
        pair: String,
    },
    /// A CCTP operation on a chain outside the CCTP set.
    #[error("chain {0} has no CCTP contracts")]
    NoCctp(u64),
    /// anvil could not be started.
    #[error("starting anvil for chain {chain_id}: {source}")]
    Spawn {
        /// The chain being started.
        chain_id: u64,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// anvil exited before it was ready.
    #[error("anvil for chain {chain_id} exited before listening: {stderr}")]
    AnvilExited {
        /// The chain being started.
        chain_id: u64,
        /// The tail of anvil's stderr.
        stderr: String,
    },
    /// anvil did not become ready in time.
    #[error("anvil for chain {chain_id} was not ready within {timeout:?}")]
    StartupTimeout {
        /// The chain being started.
        chain_id: u64,
        /// How long we waited.
        timeout: Duration,
    },
    /// A node answered with another chain id than the one it was started with.
    #[error("node answered chain id {got}, expected {expected}")]
    ChainIdMismatch {
        /// The chain id it was started with.
        expected: u64,
        /// The chain id it answered.
        got: u64,
    },
    /// A JSON-RPC request failed.
    #[error("{context}: {source}")]
    Rpc {
        /// What was being done.
        context: String,
        /// The transport error.
        #[source]
        source: Box<alloy::transports::TransportError>,
    },
    /// A contract call or deployment failed (including reverts at estimation time).
    #[error("{context}: {source}")]
    Contract {
        /// What was being done.
        context: String,
        /// The contract error.
        #[source]
        source: Box<alloy::contract::Error>,
    },
    /// Waiting for a receipt failed.
    #[error("{context}: {source}")]
    Pending {
        /// What was being done.
        context: String,
        /// The pending-transaction error.
        #[source]
        source: Box<alloy::providers::PendingTransactionError>,
    },
    /// An x402 invoice a client cannot pay (a field missing or malformed).
    #[error("x402 invoice: {0}")]
    Invoice(String),
    /// A transaction was mined but reverted.
    #[error("{context}: transaction {tx_hash} reverted")]
    Reverted {
        /// What was being done.
        context: String,
        /// The reverted transaction.
        tx_hash: TxHash,
    },
}

/// The devnet's result type.
pub type Result<T, E = DevnetError> = std::result::Result<T, E>;

impl DevnetError {
    pub(crate) fn rpc(
        context: impl Into<String>,
    ) -> impl FnOnce(alloy::transports::TransportError) -> Self {
        let context = context.into();
        move |source| Self::Rpc {
            context,
            source: Box::new(source),
        }
    }

    pub(crate) fn contract(
        context: impl Into<String>,
    ) -> impl FnOnce(alloy::contract::Error) -> Self {
        let context = context.into();
        move |source| Self::Contract {
            context,
            source: Box::new(source),
        }
    }

    pub(crate) fn pending(
        context: impl Into<String>,
    ) -> impl FnOnce(alloy::providers::PendingTransactionError) -> Self {
        let context = context.into();
        move |source| Self::Pending {
            context,
            source: Box::new(source),
        }
    }
}
