//! The rail conformance kit and, beside it, the devnet and the HTTP API
//! contract suite.
//!
//! [`rail`] loads any plugin artifact through the host's real loader and
//! checks the contract's clauses against it; a rail integrator runs it as
//! `relay-conformance rail <artifact>` before handing the artifact to an
//! operator.

pub mod http;
pub mod rail;
