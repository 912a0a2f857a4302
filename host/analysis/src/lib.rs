//! Explaining and proving what the host did (spec §4.3 analysis records,
//! §2.14): records a client can check without trusting the host.
//!
//! - [`refusal`]: the host signs every typed refusal (errorCode, a hash of
//!   the request, time) so a client can later show it was refused, and
//!   anyone can check the refusal is genuine.
//! - [`outcome`]: chain-checked delivery — the receipts of every
//!   transaction a route names and the verdict they support.
//! - [`proofs`]: which nodes' settlement was verified on chain
//!   (`settlementProven`).
//! - [`forensics`]: every unit withheld, by whom, summing exactly to
//!   amount in minus amount out.
//! - [`receipts`]: an address's settlements, each signed on its own.
//! - [`statement`]: an address's routes and fees over a period, signed.
//! - [`why`]: what the winner beat and by how much, per rail.
//! - [`improve`]: what would make a route cheaper, each with its figure.
//! - [`retention`]: counterparty addresses of old routes as keyed tags.
//! - [`erasure`]: an owner's request to erase an address, and the signed
//!   statement 7 days after.
//! - [`evidence`]: the evidence-bundle format, its sealing by the relayer
//!   key and its offline verification (what `relay verify` runs);
//!   [`bundle`] builds one from a route.
//!
//! The whole feature lives here: the records above (typed and pure over
//! the chain layer's signer; the caller hands in the records it read),
//! the HTTP adapter with its rate-limit buckets and errorCodes
//! ([`http::feature`]) and its jobs (retention and erasure, settlement
//! proofs), started by the feature's start. The refusal scheme itself is
//! the error answer's ([`relay_errors::refusal`]): the HTTP edge signs
//! every typed 4xx with it. Signatures are EIP-191 personal messages by
//! the relayer key, the scheme quote attestations and the capability
//! snapshot use ([`relay_engine::attest`]).

pub mod bundle;
pub mod erasure;
pub mod errors;
pub mod evidence;
pub mod forensics;
pub mod http;
pub mod improve;
pub mod jobs;
pub mod outcome;
pub mod proofs;
pub mod receipts;
pub mod retention;
pub use relay_errors::refusal;
pub mod statement;
pub mod why;
