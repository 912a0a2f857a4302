//! This crate's integration tests, one binary.

mod cctp;
mod common;
mod eip3009;
mod permit2;
mod pricefeed;
mod router;
mod tokens;
