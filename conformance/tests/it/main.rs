//! The conformance crate's integration tests, one binary: the kit against
//! every packaged rail and the broken fixtures, the aggregator and non-EVM rails
//! on the devnet, and the HTTP contract suite against a devnet host.

mod aggregator_rails_devnet;
mod http_contract;
mod nonevm_rails_devnet;
mod rail_kit;
