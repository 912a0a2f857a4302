//! The float lane: same-asset USDC/USDT between EVM chains, paid out from the
//! relayer's own inventory on the destination — no bridge, seconds not
//! minutes.
//!
//! Pricing (spec §2.6, §8.2) lives in [`pricing`]; this module turns requests
//! into pricing inputs by reading live float and gas through the host's
//! read-only RPC, and describes execution as two declarative steps: pull the
//! source funds (Permit2) and pay out of inventory. The rail signs nothing.

mod chain;
mod pricing;

use relay_plugin_api::{
    Amount, ChainRef, ExecutionPlan, Fee, FeeKind, HealthStatus, Host, LaneCoverage, LaneHealth,
    PlanAction, PrepareRequest, QuoteRequest, Rail, RailError, RailErrorKind, RailHealth,
    RailManifest, RailQuote, RailRole, SourceMode, TrackRequest, TrackState, TrackStatus,
};
use serde_json::json;

pub use pricing::{price, FloatInputs, FloatPrice, PricingMode, PricingParams};

/// The gasless EVM set the float lane may serve.
pub const CHAINS: [u64; 22] = [
    1, 10, 56, 100, 130, 137, 146, 480, 999, 1135, 1868, 4663, 5000, 8453, 33139, 34443, 42161,
    43114, 57073, 59144, 81457, 7777777,
];

/// Assets the float lane carries.
pub const ASSETS: [&str; 2] = ["USDC", "USDT"];

/// The lane name.
pub const LANE: &str = "evm->evm";

/// The float lane rail.
#[derive(Debug, Default, Clone)]
pub struct FloatLane;

fn evm_chains() -> Vec<ChainRef> {
    CHAINS.iter().map(|c| ChainRef::Evm(*c)).collect()
}

impl Rail for FloatLane {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: "floatlane".into(),
            name: "Float lane".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::FloatLane,
            coverage: vec![LaneCoverage {
                lane: LANE.into(),
                from: evm_chains(),
                to: evm_chains(),
                assets: ASSETS.iter().map(|a| a.to_string()).collect(),
                same_chain: false,
                executable: true,
                quote_only_reason: None,
            }],
            egress: vec![],
            rpc_chains: evm_chains(),
            contracts: vec![],
            upstream: None,
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        validate(req)?;
        let params = PricingParams::from_config(host);
        let inputs = chain::read_inputs(host, req, &params)?;
        let p = price(&params, &inputs)
            .map_err(|e| RailError::new(RailErrorKind::AmountOutOfRange, e))?;
        Ok(quote_from_price(host, req, &p))
    }

    fn prepare(&self, _host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let from_token = req.from_token_address.clone().ok_or_else(|| {
            RailError::invalid("fromToken", "the float lane needs a token contract")
        })?;
        let to_token = req.to_token_address.clone().ok_or_else(|| {
            RailError::invalid("toToken", "the float lane needs a token contract")
        })?;
        let mut steps = Vec::new();
        if req.mode == SourceMode::Permit2 {
            steps.push(PlanAction::Permit2Pull {
                chain: req.from_chain,
                token: from_token,
                amount: req.quote.amount_in,
            });
        }
        steps.push(PlanAction::InventoryPayout {
            chain: req.to_chain,
            token: to_token,
            to: req.recipient.clone(),
            amount: req.quote.amount_out,
        });
        Ok(ExecutionPlan {
            steps,
            track_ref: None,
        })
    }

    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        // The payout is the host's own transaction: its hash is the reference.
        let Some(tx) = req.reference.as_deref() else {
            return Ok(status(TrackState::Pending, None, "payout not sent yet"));
        };
        match chain::receipt_status(host, req.to_chain, tx)? {
            None => Ok(status(TrackState::Bridging, None, "payout pending")),
            Some(true) => Ok(status(
                TrackState::Done,
                Some(tx.to_string()),
                "paid out from float",
            )),
            Some(false) => Ok(status(TrackState::Failed, None, "payout reverted")),
        }
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let configured = host.config("relayer").is_some();
        RailHealth {
            status: if configured {
                HealthStatus::Operational
            } else {
                HealthStatus::Down
            },
            detail: (!configured).then(|| "no relayer address configured".to_string()),
            lanes: vec![LaneHealth {
                lane: LANE.into(),
                quote_ok: configured,
                quote_error: (!configured).then(|| "no relayer".to_string()),
                execute_ready: configured,
            }],
        }
    }
}

fn status(state: TrackState, dest_tx: Option<String>, message: &str) -> TrackStatus {
    TrackStatus {
        state,
        stage: None,
        dest_tx,
        message: Some(message.into()),
        follow_up: vec![],
    }
}

fn validate(req: &QuoteRequest) -> Result<(), RailError> {
    let (Some(_), Some(_)) = (req.from_chain.evm_id(), req.to_chain.evm_id()) else {
        return Err(RailError::unsupported(
            "the float lane serves EVM chains only",
        ));
    };
    if req.from_chain == req.to_chain {
        return Err(RailError::unsupported(
            "the float lane moves between chains, not within one",
        ));
    }
    let sym = req.from_token.symbol.to_ascii_uppercase();
    if !ASSETS.contains(&sym.as_str()) || !req.to_token.symbol.eq_ignore_ascii_case(&sym) {
        return Err(RailError::unsupported(
            "the float lane carries USDC→USDC or USDT→USDT only",
        ));
    }
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    if req.to_token.address.is_none() {
        return Err(RailError::invalid(
            "toToken",
            "no contract for this asset on the destination",
        ));
    }
    Ok(())
}

fn quote_from_price(host: &dyn Host, req: &QuoteRequest, p: &FloatPrice) -> RailQuote {
    let detail = json!({
        "fee": p.fee.to_string(),
        "pricing": { "mode": p.mode.as_str() },
        "vip": { "member": req.member },
        "capNow": p.cap_now.to_string(),
        "freeTier": { "eligible": p.free_tier_failed.is_none(), "failed": p.free_tier_failed },
        "payoutCost": p.payout_cost.to_string(),
    });
    RailQuote {
        rail: "floatlane".into(),
        lane: LANE.into(),
        amount_in: req.amount,
        amount_out: p.amount_out,
        min_out: p.amount_out,
        fees: vec![Fee {
            kind: FeeKind::Float,
            amount: p.fee,
            token: req.to_token.symbol.to_ascii_uppercase(),
            included: true,
        }],
        gas: None,
        duration_sec: 15,
        quote_only_reason: None,
        upstream_ref: None,
        expires_at_ms: host.now_ms() + 60_000,
        detail: detail.into(),
    }
}

/// `amount` converted between decimals, rounded down.
pub fn rescale(amount: Amount, from_decimals: u8, to_decimals: u8) -> Amount {
    use relay_plugin_api::U256;
    let ten = U256::from(10u8);
    if to_decimals >= from_decimals {
        Amount(
            amount
                .0
                .saturating_mul(ten.pow(U256::from(to_decimals - from_decimals))),
        )
    } else {
        Amount(amount.0 / ten.pow(U256::from(from_decimals - to_decimals)))
    }
}
