//! This crate's integration tests, one binary.

mod cctp;
mod common;
mod permit2;
mod pricefeed;
mod router;
mod tokens;
