//! The template rail: USDC from Base (8453) to Arbitrum (42161) for a fixed
//! 10 bps fee. It shows every part of the contract an integrator fills in
//! (the contract itself is documented on `relay_plugin_api`'s items):
//!
//! - `manifest`: identity, lanes, the upstream hosts the rail may reach
//!   (`egress`) and the chains it reads; nothing else is reachable.
//! - `quote`: validate, price, return typed errors (`UnsupportedLane` for a
//!   lane you do not serve, `InvalidInput` naming the field).
//! - `prepare`: describe execution as declarative actions. Never sign.
//! - `track` and `health`.
//!
//! A real rail calls its upstream with `host.http(HttpRequest::get(url))`
//! where the URL's host is in `egress`; see `upstream_amount_out` below.

use relay_plugin_api::{
    Amount, ChainRef, ExecutionPlan, Fee, FeeKind, Host, HttpRequest, LaneCoverage, PlanAction,
    PrepareRequest, QuoteRequest, Rail, RailError, RailHealth, RailManifest, RailQuote, RailRole,
    SourceMode, TrackRequest, TrackState, TrackStatus, Version,
};

/// The rail's id: lower-case letters, digits and '-'.
pub const ID: &str = "template";
/// The lane this rail serves.
pub const LANE: &str = "base->arbitrum";
/// The fee, basis points.
pub const FEE_BPS: u32 = 10;

/// The rail.
#[derive(Debug, Default, Clone)]
pub struct TemplateRail;

impl Rail for TemplateRail {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: ID.into(),
            name: "Template rail".into(),
            version: Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::Aggregator,
            coverage: vec![LaneCoverage {
                lane: LANE.into(),
                from: vec![ChainRef::Evm(8453)],
                to: vec![ChainRef::Evm(42161)],
                assets: vec!["USDC".into()],
                same_chain: false,
                executable: true,
                quote_only_reason: None,
            }],
            // The hosts `host.http` may reach. Operators can add more (e.g. a
            // simulator) in `[rails.template] egress = [...]`.
            egress: vec![],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: None,
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        if req.from_chain != ChainRef::Evm(8453) || req.to_chain != ChainRef::Evm(42161) {
            return Err(RailError::unsupported(format!("{ID} serves {LANE} only")));
        }
        if !req.from_token.symbol.eq_ignore_ascii_case("USDC") {
            return Err(RailError::unsupported(format!("{ID} carries USDC only")));
        }
        if req.amount.is_zero() {
            return Err(RailError::invalid("amount", "must be greater than zero"));
        }
        let (out, fee) = match host.config("upstream_url") {
            Some(base) => (upstream_amount_out(host, &base, req.amount)?, Amount::ZERO),
            None => {
                let fee = req.amount.bps(FEE_BPS);
                (req.amount.saturating_sub(fee), fee)
            }
        };
        Ok(RailQuote {
            rail: ID.into(),
            lane: LANE.into(),
            amount_in: req.amount,
            amount_out: out,
            min_out: out,
            fees: vec![Fee {
                kind: FeeKind::Bridge,
                amount: fee,
                token: "USDC".into(),
                included: true,
            }],
            gas: None,
            duration_sec: 60,
            quote_only_reason: None,
            upstream_ref: None,
            expires_at_ms: host.now_ms() + 30_000,
            detail: serde_json::json!({}),
        })
    }

    fn prepare(&self, _host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let token = req
            .from_token_address
            .clone()
            .ok_or_else(|| RailError::invalid("fromToken", "needs a token contract"))?;
        // `req.quote` is this rail's answer for the amount it carries: the
        // signed amount less the route fee and gas the relayer keeps. A real
        // rail's plan goes on with `Approve` + `ContractCall` (a deposit of
        // `req.quote.amount_in` into a contract declared in `contracts`)
        // before it waits on its upstream.
        let mut steps = Vec::new();
        if req.mode == SourceMode::Permit2 {
            // The host pulls the whole signed amount, whatever `amount` says.
            steps.push(PlanAction::Permit2Pull {
                chain: req.from_chain,
                token,
                amount: req.quote.amount_in,
            });
        }
        steps.push(PlanAction::AwaitUpstream {
            reference: req.route_id.clone(),
        });
        Ok(ExecutionPlan {
            steps,
            track_ref: Some(req.route_id.clone()),
        })
    }

    /// A real rail asks its upstream's status API here. This one never
    /// sees delivery, so an executed route waits `execution.track_timeout_ms`
    /// (6 h by default), then fails `UPSTREAM_TIMEOUT` and is refunded: see
    /// `Rail::track` for what to do when the upstream has no status API.
    fn track(&self, _host: &dyn Host, _req: &TrackRequest) -> Result<TrackStatus, RailError> {
        Ok(TrackStatus {
            state: TrackState::Pending,
            stage: None,
            dest_tx: None,
            message: None,
            follow_up: vec![],
        })
    }

    fn health(&self, _host: &dyn Host) -> RailHealth {
        RailHealth::operational([LANE])
    }
}

/// How a rail asks its upstream: the host checks the host name against
/// `egress`, clips the timeout to the call's deadline and caps the body.
fn upstream_amount_out(host: &dyn Host, base: &str, amount: Amount) -> Result<Amount, RailError> {
    let resp = host.http(HttpRequest::get(format!("{base}/quote?amount={amount}")))?;
    if resp.status != 200 {
        return Err(RailError::upstream(format!(
            "upstream answered {}",
            resp.status
        )));
    }
    let v = resp
        .json()
        .map_err(|e| RailError::malformed(e.to_string()))?;
    v["toAmount"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| RailError::malformed("toAmount missing"))
}
