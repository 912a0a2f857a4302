//! The relayer's chain layer on alloy. This module holds the host's own
//! checks of what users sign; keys never leave the host and never appear in
//! logs or errors.

pub mod account;
pub mod delegate;
pub mod eip3009;
pub mod eip7702;
pub mod nonce;
pub mod permit2;
pub mod personal;
pub mod pricefeed;
pub mod reader;
pub mod receipts;
pub mod router;
pub mod rpc;
pub mod sender;
pub mod session_key;
pub mod session_sweep;
pub mod signer;
pub mod transfers;
pub mod typed;
pub mod vault;
