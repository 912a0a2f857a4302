//! `echo`: a test-only rail that answers with what it was asked, and
//! misbehaves on purpose for a few magic amounts so the host's containment
//! can be tested end to end (a hang, unbounded allocation, a panic) and its
//! capabilities exercised (an HTTP call the host must police).
//!
//! Its `track` answers `DONE` with the source transaction, or — with the
//! operator config `track = "no-status-api"` ([`TRACK_KEY`],
//! [`NO_STATUS_API`]) — that its upstream has no status API, so the host
//! watches the destination chain for the payout (contract 1.1).
//!
//! Never ship it to an operator: a magic amount hangs or exhausts memory on
//! purpose, which only a contained packaging (wasm) survives.

use relay_plugin_api::{
    contract_version, Amount, ChainRef, ExecutionPlan, Fee, FeeKind, Host, HttpRequest,
    LaneCoverage, LogLevel, PlanAction, PrepareRequest, QuoteRequest, Rail, RailError, RailHealth,
    RailManifest, RailQuote, RailRole, TrackRequest, TrackState, TrackStatus,
};

/// Quoting this amount loops forever (the host must stop it at the deadline).
pub const HANG_AMOUNT: u128 = 666_001;
/// Quoting this amount allocates until memory runs out.
pub const ALLOCATE_AMOUNT: u128 = 666_002;
/// Quoting this amount panics.
pub const PANIC_AMOUNT: u128 = 666_003;
/// Quoting this amount makes an HTTP request to the `probe_url` config value
/// (default [`UNDECLARED_URL`]) and fails with the host's answer if refused.
pub const HTTP_AMOUNT: u128 = 666_004;
/// A host the manifest does not declare.
pub const UNDECLARED_URL: &str = "https://undeclared.example/ping";
/// The lane it serves.
pub const LANE: &str = "evm->evm";
/// The EVM chains it serves.
pub const CHAINS: [u64; 2] = [1, 8453];

/// The config key that selects what `track` answers.
pub const TRACK_KEY: &str = "track";
/// [`TRACK_KEY`]'s value for "the upstream has no status API".
pub const NO_STATUS_API: &str = "no-status-api";

/// The echo rail.
#[derive(Clone, Copy, Debug, Default)]
pub struct EchoRail;

impl EchoRail {
    /// Carries out the misbehaviour a magic amount asks for, if any.
    fn misbehave(host: &dyn Host, amount: Amount) -> Result<(), RailError> {
        match amount.to_u128() {
            Some(HANG_AMOUNT) => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            Some(ALLOCATE_AMOUNT) => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            Some(PANIC_AMOUNT) => panic!("echo was asked to panic"),
            Some(HTTP_AMOUNT) => {
                let url = host
                    .config("probe_url")
                    .unwrap_or_else(|| UNDECLARED_URL.into());
                host.http(HttpRequest::get(url))?;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl Rail for EchoRail {
    fn manifest(&self) -> RailManifest {
        let chains: Vec<ChainRef> = CHAINS.iter().copied().map(ChainRef::Evm).collect();
        RailManifest {
            id: "echo".into(),
            name: "Echo (test rail)".into(),
            version: semver_of(env!("CARGO_PKG_VERSION")),
            contract_version: contract_version(),
            role: RailRole::FloatLane,
            coverage: vec![LaneCoverage {
                lane: LANE.into(),
                from: chains.clone(),
                to: chains.clone(),
                assets: vec!["USDC".into()],
                same_chain: false,
                executable: true,
                quote_only_reason: None,
            }],
            egress: vec!["echo.invalid".into()],
            rpc_chains: chains,
            contracts: Vec::new(),
            upstream: None,
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        Self::misbehave(host, req.amount)?;
        host.log(LogLevel::Info, &format!("echo quote of {}", req.amount));
        let fee = req.amount.bps(req.slippage_bps);
        Ok(RailQuote {
            rail: "echo".into(),
            lane: LANE.into(),
            amount_in: req.amount,
            amount_out: req.amount,
            min_out: req.amount.saturating_sub(fee),
            fees: vec![Fee {
                kind: FeeKind::Bridge,
                amount: Amount::ZERO,
                token: req.from_token.symbol.clone(),
                included: true,
            }],
            gas: None,
            duration_sec: 1,
            quote_only_reason: None,
            upstream_ref: req.from_address.clone(),
            expires_at_ms: host.deadline_ms(),
            detail: serde_json::json!({
                "echo": true,
                "greeting": host.config("greeting"),
                "to": req.to_chain,
            })
            .into(),
        })
    }

    fn prepare(&self, _host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let token = req
            .from_token_address
            .clone()
            .ok_or_else(|| RailError::invalid("from_token_address", "required"))?;
        Ok(ExecutionPlan {
            steps: vec![
                PlanAction::Permit2Pull {
                    chain: req.from_chain,
                    token,
                    amount: req.quote.amount_in,
                },
                PlanAction::AwaitUpstream {
                    reference: req.route_id.clone(),
                },
            ],
            track_ref: Some(req.route_id.clone()),
        })
    }

    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        if host.config(TRACK_KEY).as_deref() == Some(NO_STATUS_API) {
            return Err(RailError::no_status_api());
        }
        Ok(TrackStatus {
            state: TrackState::Done,
            stage: Some("COMPLETED".into()),
            dest_tx: req.src_tx.clone(),
            message: req.reference.clone(),
            follow_up: Vec::new(),
        })
    }

    fn health(&self, _host: &dyn Host) -> RailHealth {
        RailHealth::operational([LANE])
    }
}

/// This crate's version as semver.
fn semver_of(v: &str) -> relay_plugin_api::Version {
    v.parse().expect("CARGO_PKG_VERSION is semver")
}
