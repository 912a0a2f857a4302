//! The echo rail itself.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use relay_plugin_api::{
    contract_version, Amount, ChainRef, ExecutionPlan, HealthStatus, Host, HttpRequest,
    LaneCoverage, PrepareRequest, QuoteRequest, Rail, RailError, RailHealth, RailManifest,
    RailQuote, RailRole, TrackRequest, TrackStatus,
};

/// Quoting this amount panics inside the rail.
pub const PANIC_AMOUNT: u128 = 666;
/// Quoting this amount blocks until [`HANG_OVERSHOOT_MS`] past the deadline.
pub const HANG_AMOUNT: u128 = 777;
/// How far past the call's deadline a hanging quote blocks (bounded, so an
/// abandoned thread finishes eventually).
pub const HANG_OVERSHOOT_MS: u64 = 5_000;
/// Quoting this amount sends HTTP to [`UNDECLARED_HOST`].
pub const UNDECLARED_EGRESS_AMOUNT: u128 = 403;
/// A host the manifest does not declare.
pub const UNDECLARED_HOST: &str = "undeclared.example";

/// Quotes answered by this loaded copy of the library.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// The echo rail.
#[derive(Debug, Default)]
pub struct EchoRail;

impl Rail for EchoRail {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: "native-echo".into(),
            name: "Native echo (test)".into(),
            version: semver_of(env!("CARGO_PKG_VERSION")),
            contract_version: contract_version(),
            role: RailRole::QuoteOnly,
            coverage: vec![LaneCoverage {
                lane: "evm->evm".into(),
                from: vec![ChainRef::Evm(1), ChainRef::Evm(8453)],
                to: vec![ChainRef::Evm(1), ChainRef::Evm(8453)],
                assets: vec!["USDC".into()],
                same_chain: false,
                executable: false,
                quote_only_reason: Some("test rail".into()),
            }],
            egress: vec!["echo.example".into()],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: None,
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        match req.amount.to_u128() {
            Some(PANIC_AMOUNT) => panic!("native-echo was asked to panic"),
            Some(HANG_AMOUNT) => {
                let left = host.deadline_ms().saturating_sub(host.now_ms());
                std::thread::sleep(Duration::from_millis(left + HANG_OVERSHOOT_MS));
            }
            Some(UNDECLARED_EGRESS_AMOUNT) => {
                host.http(HttpRequest::get(format!("https://{UNDECLARED_HOST}/quote")))?;
            }
            _ => {}
        }
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(echo(req, req.amount, host.now_ms(), calls))
    }

    fn prepare(&self, _host: &dyn Host, _req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        Err(RailError::unsupported("native-echo is quote-only"))
    }

    fn track(&self, _host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        Err(RailError::new(
            relay_plugin_api::RailErrorKind::NotFound,
            format!("native-echo never executes route {}", req.route_id),
        ))
    }

    fn health(&self, _host: &dyn Host) -> RailHealth {
        RailHealth {
            status: HealthStatus::Operational,
            detail: None,
            lanes: vec![],
        }
    }
}

fn echo(req: &QuoteRequest, amount: Amount, now_ms: u64, calls: u64) -> RailQuote {
    RailQuote {
        rail: "native-echo".into(),
        lane: "evm->evm".into(),
        amount_in: amount,
        amount_out: amount,
        min_out: amount,
        fees: vec![],
        gas: None,
        duration_sec: 1,
        quote_only_reason: Some("test rail".into()),
        upstream_ref: req.to_address.clone(),
        expires_at_ms: now_ms + 30_000,
        detail: serde_json::json!({ "calls": calls }).into(),
    }
}

fn semver_of(text: &str) -> relay_plugin_api::Version {
    relay_plugin_api::Version::parse(text).expect("the package version is semver")
}
