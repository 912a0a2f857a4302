//! This crate's integration tests, one binary.

mod cctp;
mod common;
mod permit2;
mod router;
mod tokens;
