//! Vendor cases: what a rail's upstream vendor published about its own API
//! — OpenAPI examples, its SDK's types and mocks, its backend's test
//! snapshots, its docs — each with what the rail must make of it.
//!
//! A rail's own recorded fixtures ([`crate::fixture`]) are written by the
//! same people as the rail, so a shared misreading of the API passes every
//! test; a vendor case is the vendor's word. A rail keeps them in
//! `tests/fixtures/vendor/`: one JSON file per example, and a plain-text
//! `SOURCES` list naming every file's origin, one per line
//! (`<file> <source>`, `#` starts a comment):
//!
//! ```json
//! { "source": "github:0xsquid/squid-types@main:src/status/index.ts",
//!   "note": "a route that failed on the destination chain",
//!   "call": "track",
//!   "answers": [ { "path": "/v2/status",
//!                  "body": { "squidTransactionStatus": "failed_on_destination" } } ],
//!   "expect": { "state": "FAILED" } }
//! ```
//!
//! - `call`: `quote` or `track`; `request` (optional): the `QuoteRequest` or
//!   `TrackRequest` (camelCase JSON) when [`default_quote`] /
//!   [`default_track`] does not fit the example;
//! - `answers`: the upstream's answers ([`RecordedAnswer`]: matched by path
//!   suffix, query ignored);
//! - `expect`: exactly one of `{"state": …, "destTx": …}` (track answered),
//!   `{"error": <RailErrorKind>, "retryable": …}` (the call failed),
//!   `{"amountOut": …}` or `{"ok": true}` (quote answered).
//!
//! Files named `schema*.json` are the vendor's published response schemas
//! (listed in `SOURCES` too), not cases. `testing::check_vendor_cases` runs
//! every case through the recording host; `relay-conformance rail --fixture
//! DIR` runs them against a packaged rail over real HTTP.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use relay_plugin_api::{
    Amount, ChainRef, QuoteRequest, RailError, RailErrorKind, RailQuote, Token, TrackRequest,
    TrackState, TrackStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fixture::{Fixture, RecordedAnswer};

/// A relayer address the samples use (the Permit2 spender and upstream sender).
pub const RELAYER: &str = "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0";
/// A user address the samples use.
pub const USER: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/// USDC on Base.
pub const BASE_USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
/// USDC on Arbitrum.
pub const ARB_USDC: &str = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
/// A source transaction hash the samples track.
pub const SRC_TX: &str = "0x5862726dbc6643c6a34b3496bb15e91f11771f6756ccf83826304846bbc93c0a";

/// Which rail call a case feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VendorCall {
    /// `Rail::quote`.
    Quote,
    /// `Rail::track`.
    Track,
}

/// What the rail must make of a case.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expectation {
    /// `track` answers this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<TrackState>,
    /// …with this destination transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dest_tx: Option<String>,
    /// The call fails with this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RailErrorKind>,
    /// …and this retryability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// `quote` answers this output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_out: Option<Amount>,
    /// `quote` answers (any output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
}

/// One vendor example and what the rail must make of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VendorCase {
    /// Where the example comes from (repository, commit and path, or page).
    pub source: String,
    /// What it shows, and anything adapted.
    #[serde(default)]
    pub note: String,
    /// The call it feeds.
    pub call: VendorCall,
    /// The request, when the default does not fit.
    #[serde(default)]
    pub request: Option<Value>,
    /// The upstream's answers.
    pub answers: Vec<RecordedAnswer>,
    /// What the rail must make of them.
    pub expect: Expectation,
}

/// Why a directory of vendor cases cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    /// A file could not be read.
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    /// A case file is not a case.
    #[error("{0} is not a vendor case: {1}")]
    Parse(String, serde_json::Error),
    /// A case, or the `SOURCES` list, is incomplete or inconsistent.
    #[error("{0}")]
    Invalid(String),
}

/// The cases of `dir` by file name, checked against its `SOURCES` list:
/// every file is listed with a source, every listed file exists, every case
/// names its source and expects one outcome of its call.
pub fn load(dir: &Path) -> Result<Vec<(String, VendorCase)>, VendorError> {
    let sources = read_sources(dir)?;
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| VendorError::Read(dir.into(), e))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    for listed in sources.keys() {
        if !files.contains(listed) {
            return Err(invalid(format!(
                "SOURCES lists {listed}, which is not in the directory"
            )));
        }
    }
    let mut cases = Vec::new();
    for name in files {
        if !sources.contains_key(&name) {
            return Err(invalid(format!("{name} is not listed in SOURCES")));
        }
        if name.starts_with("schema") {
            continue;
        }
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path).map_err(|e| VendorError::Read(path, e))?;
        let case: VendorCase =
            serde_json::from_str(&text).map_err(|e| VendorError::Parse(name.clone(), e))?;
        case.validate()
            .map_err(|e| invalid(format!("{name}: {e}")))?;
        cases.push((name, case));
    }
    Ok(cases)
}

fn invalid(message: String) -> VendorError {
    VendorError::Invalid(message)
}

/// `SOURCES`: file name → source.
fn read_sources(dir: &Path) -> Result<BTreeMap<String, String>, VendorError> {
    let path = dir.join("SOURCES");
    let text = std::fs::read_to_string(&path).map_err(|e| VendorError::Read(path, e))?;
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once(char::is_whitespace) {
            Some((file, source)) if !source.trim().is_empty() => {
                out.insert(file.to_string(), source.trim().to_string());
            }
            _ => return Err(invalid(format!("SOURCES: {line:?} names no source"))),
        }
    }
    Ok(out)
}

impl VendorCase {
    /// The case's answers as a recorded upstream.
    pub fn fixture(&self) -> Fixture {
        Fixture {
            upstream: self.source.clone(),
            answers: self.answers.clone(),
        }
    }

    /// The quote request: the case's, else [`default_quote`].
    pub fn quote_request(&self) -> Result<QuoteRequest, String> {
        match &self.request {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("request: {e}")),
            None => Ok(default_quote(25_000_000)),
        }
    }

    /// The track request: the case's, else [`default_track`].
    pub fn track_request(&self) -> Result<TrackRequest, String> {
        match &self.request {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("request: {e}")),
            None => Ok(default_track(None, Some(SRC_TX))),
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.source.trim().is_empty() {
            return Err("names no source".into());
        }
        if self.answers.is_empty() {
            return Err("has no answers".into());
        }
        let e = &self.expect;
        let answered = match self.call {
            VendorCall::Track => e.state.is_some(),
            VendorCall::Quote => e.amount_out.is_some() || e.ok == Some(true),
        };
        let wrong_kind = match self.call {
            VendorCall::Track => e.amount_out.is_some() || e.ok.is_some(),
            VendorCall::Quote => e.state.is_some() || e.dest_tx.is_some(),
        };
        if wrong_kind || answered == e.error.is_some() {
            return Err(format!(
                "expect must say one outcome of {:?}: an answer or an error",
                self.call
            ));
        }
        match self.call {
            VendorCall::Quote => self.quote_request().map(drop),
            VendorCall::Track => self.track_request().map(drop),
        }
    }
}

impl Expectation {
    /// Whether `got` (a `track` outcome) is what the case expects.
    pub fn check_track(&self, got: &Result<TrackStatus, RailError>) -> Result<(), String> {
        match got {
            Ok(s) if self.state == Some(s.state) => match &self.dest_tx {
                Some(tx) if s.dest_tx.as_deref() != Some(tx.as_str()) => {
                    Err(format!("destTx {:?}, expected {tx}", s.dest_tx))
                }
                _ => Ok(()),
            },
            Ok(s) => Err(format!(
                "{:?} ({:?}), expected {}",
                s.state,
                s.message,
                self.wanted()
            )),
            Err(e) => self.check_error(e),
        }
    }

    /// Whether `got` (a `quote` outcome) is what the case expects.
    pub fn check_quote(&self, got: &Result<RailQuote, RailError>) -> Result<(), String> {
        match got {
            Ok(q) if self.error.is_none() => match self.amount_out {
                Some(a) if q.amount_out != a => {
                    Err(format!("amountOut {}, expected {a}", q.amount_out))
                }
                _ => Ok(()),
            },
            Ok(q) => Err(format!(
                "a quote of {}, expected {}",
                q.amount_out,
                self.wanted()
            )),
            Err(e) => self.check_error(e),
        }
    }

    fn check_error(&self, e: &RailError) -> Result<(), String> {
        let kind_ok = self.error == Some(e.kind);
        let retry_ok = self.retryable.is_none_or(|r| r == e.retryable);
        if kind_ok && retry_ok {
            Ok(())
        } else {
            Err(format!(
                "{:?} (retryable {}: {}), expected {}",
                e.kind,
                e.retryable,
                e.message,
                self.wanted()
            ))
        }
    }

    fn wanted(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A 6-decimal token.
pub fn token(symbol: &str, address: &str) -> Token {
    Token {
        symbol: symbol.into(),
        address: Some(address.into()),
        decimals: 6,
    }
}

/// `amount` USDC units from Base to Arbitrum, from [`USER`] to [`RELAYER`],
/// 50 bps slippage: the quote a case asks unless it names its own.
pub fn default_quote(amount: u128) -> QuoteRequest {
    QuoteRequest {
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        from_token: token("USDC", BASE_USDC),
        to_token: token("USDC", ARB_USDC),
        amount: Amount::from_u128(amount),
        from_address: Some(USER.into()),
        to_address: Some(RELAYER.into()),
        slippage_bps: 50,
        member: false,
    }
}

/// What the engine asks `track` for a Base → Arbitrum route: the track a
/// case asks unless it names its own.
pub fn default_track(reference: Option<&str>, src_tx: Option<&str>) -> TrackRequest {
    TrackRequest {
        route_id: "rt_test".into(),
        reference: reference.map(str::to_string),
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        src_tx: src_tx.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(call: &str, expect: Value) -> Result<VendorCase, String> {
        let c: VendorCase = serde_json::from_value(serde_json::json!({
            "source": "https://example.invalid/docs", "call": call,
            "answers": [{"path": "/v1/status", "body": {}}], "expect": expect,
        }))
        .map_err(|e| e.to_string())?;
        c.validate().map(|_| c)
    }

    #[test]
    fn a_case_expects_exactly_one_outcome_of_its_call() {
        assert!(case("track", serde_json::json!({"state": "REFUNDED"})).is_ok());
        assert!(case("track", serde_json::json!({"error": "UPSTREAM"})).is_ok());
        assert!(case("quote", serde_json::json!({"amountOut": "10"})).is_ok());
        assert!(case("track", serde_json::json!({})).is_err());
        assert!(case(
            "track",
            serde_json::json!({"state": "DONE", "error": "UPSTREAM"})
        )
        .is_err());
        assert!(case("quote", serde_json::json!({"state": "DONE"})).is_err());
        assert!(case(
            "quote",
            serde_json::json!({"ok": true, "error": "UPSTREAM"})
        )
        .is_err());
    }

    #[test]
    fn a_refund_answered_as_delivered_fails_its_case() {
        let c = case("track", serde_json::json!({"state": "REFUNDED"})).unwrap();
        let delivered = TrackStatus {
            state: TrackState::Done,
            stage: None,
            dest_tx: None,
            message: Some("delivered".into()),
            follow_up: vec![],
        };
        assert!(c.expect.check_track(&Ok(delivered.clone())).is_err());
        let refunded = TrackStatus {
            state: TrackState::Refunded,
            ..delivered.clone()
        };
        assert!(c.expect.check_track(&Ok(refunded)).is_ok());
    }

    #[test]
    fn every_file_must_be_listed_in_sources() {
        let dir = std::env::temp_dir().join(format!("vendor-cases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = r#"{"source":"s","call":"track","answers":[{"path":"/s"}],"expect":{"state":"PENDING"}}"#;
        std::fs::write(dir.join("a.json"), body).unwrap();
        std::fs::write(dir.join("SOURCES"), "# none\n").unwrap();
        assert!(load(&dir)
            .unwrap_err()
            .to_string()
            .contains("a.json is not listed"));
        std::fs::write(dir.join("SOURCES"), "a.json https://vendor.invalid/docs\n").unwrap();
        assert_eq!(load(&dir).unwrap().len(), 1);
        std::fs::write(dir.join("SOURCES"), "a.json s\nb.json s\n").unwrap();
        assert!(load(&dir).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
