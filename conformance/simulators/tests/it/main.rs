//! This crate's integration tests, one binary.

mod aggregators;
mod chainflip;
mod circle;
mod common;
mod faults;
mod non_evm;
mod price_control;
mod wire_shapes;
