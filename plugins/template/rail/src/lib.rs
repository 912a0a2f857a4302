//! The template rail: USDC between EVM chains of the gasless set through a
//! made-up bridge, "Template bridge", with an HTTP fee API and a
//! `deposit(...)` contract on every source chain. It shows every part of
//! the contract an integrator fills in (the contract itself is documented on
//! `relay_plugin_api`'s items) and the SDK (`relay_rail_sdk`) helpers that
//! keep a rail short:
//!
//! - `manifest`: identity, lanes ([`LANES`]), the upstream hosts the rail
//!   may reach (`egress`) and the contracts its plans call; nothing else is
//!   reachable.
//! - `quote`: validate, ask the upstream ([`UPSTREAM`]`.json`), price,
//!   return typed errors (`UnsupportedLane` for a lane you do not serve,
//!   `InvalidInput` naming the field).
//! - `prepare`: describe execution with `PlanBuilder` (pull, approve,
//!   deposit call, await). Never sign.
//! - `track`: this upstream has no status API, so the rail says so and the
//!   host watches the destination chain for the payout.
//! - `health`: one cheap probe that cannot hang.
//!
//! The upstream's recorded answers live in `fixture/upstream.json`: the
//! unit tests below and `relay-conformance rail --fixture` both use them.

use relay_plugin_api::{
    Amount, ChainRef, DeclaredContract, ExecutionPlan, Fee, FeeKind, Host, LaneCoverage,
    PrepareRequest, QuoteRequest, Rail, RailError, RailHealth, RailManifest, RailQuote, RailRole,
    TrackRequest, TrackStatus, Version, U256,
};
use relay_rail_sdk::{
    evm_abi::{address_bytes, encode_call, AbiValue},
    health::probe,
    plan::PlanBuilder,
    EvmCall, Upstream,
};
use serde::Deserialize;

/// The rail's id: lower-case letters, digits and '-'.
pub const ID: &str = "template";
/// The lanes this rail serves: (lane name, source chain id, destination
/// chain id). `relay-plugins new --lanes` writes this list.
pub const LANES: &[(&str, u64, u64)] = &[("base->arbitrum", 8453, 42161)];
/// The upstream's fee API (`[rails.template.config] base_url` points it
/// elsewhere, e.g. at a recorded fixture).
pub const UPSTREAM: Upstream = Upstream {
    name: "Template bridge",
    default_base: "https://api.template.example",
};
/// The bridge's deposit contract, at the same address on every source chain.
pub const DEPOSIT_CONTRACT: &str = "0x7e3a1e0000000000000000000000000000000001";
/// `deposit(token, amount, destinationChainId, recipient)`.
pub const DEPOSIT: &str = "deposit(address,uint256,uint256,address)";

/// The rail.
#[derive(Debug, Default, Clone)]
pub struct TemplateRail;

/// What the fee API answers: `GET /v1/fees?fromChain=&toChain=&asset=`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeTerms {
    /// Proportional fee, basis points.
    pub fee_bps: u32,
    /// Minimum fee, smallest units.
    pub min_fee: Amount,
    /// Expected delivery time.
    pub eta_seconds: u32,
}

impl Rail for TemplateRail {
    fn manifest(&self) -> RailManifest {
        let sources = unique(LANES.iter().map(|l| l.1));
        RailManifest {
            id: ID.into(),
            name: "Template rail".into(),
            version: Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::Aggregator,
            coverage: LANES
                .iter()
                .map(|&(lane, from, to)| LaneCoverage {
                    lane: lane.into(),
                    from: vec![ChainRef::Evm(from)],
                    to: vec![ChainRef::Evm(to)],
                    assets: vec!["USDC".into()],
                    same_chain: false,
                    executable: true,
                    quote_only_reason: None,
                })
                .collect(),
            // The hosts `host.http` may reach. Operators can add more (e.g. a
            // simulator) in `[rails.template] egress = [...]`.
            egress: vec!["api.template.example".into()],
            rpc_chains: vec![],
            contracts: sources
                .into_iter()
                .map(|chain| DeclaredContract {
                    chain: ChainRef::Evm(chain),
                    address: DEPOSIT_CONTRACT.into(),
                    label: "template-deposit".into(),
                })
                .collect(),
            upstream: Some("Template bridge API v1".into()),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        let (lane, from, to) = lane_of(req.from_chain, req.to_chain)?;
        if !req.from_token.symbol.eq_ignore_ascii_case("USDC") {
            return Err(RailError::unsupported(format!("{ID} carries USDC only")));
        }
        if req.amount.is_zero() {
            return Err(RailError::invalid("amount", "must be greater than zero"));
        }
        let ask = UPSTREAM.get(
            host,
            "/v1/fees",
            &[
                ("fromChain", from.to_string()),
                ("toChain", to.to_string()),
                ("asset", "USDC".to_string()),
            ],
        );
        let terms: FeeTerms = UPSTREAM.json(host, ask, "fees")?;
        let fee = req.amount.bps(terms.fee_bps).max(terms.min_fee);
        let out = req
            .amount
            .checked_sub(fee)
            .filter(|o| !o.is_zero())
            .ok_or_else(|| {
                RailError::invalid("amount", format!("must exceed the bridge fee of {fee}"))
            })?;
        Ok(RailQuote {
            rail: ID.into(),
            lane: lane.into(),
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
            duration_sec: terms.eta_seconds,
            quote_only_reason: None,
            upstream_ref: None,
            expires_at_ms: host.now_ms() + 30_000,
            detail: serde_json::json!({}).into(),
        })
    }

    fn prepare(&self, _host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let (_, _, to) = lane_of(req.from_chain, req.to_chain)?;
        let token = req
            .from_token_address
            .as_deref()
            .and_then(address_bytes)
            .ok_or_else(|| RailError::invalid("fromToken", "needs a token contract"))?;
        let recipient = address_bytes(&req.recipient)
            .ok_or_else(|| RailError::invalid("recipient", "not an EVM address"))?;
        // `req.quote` is this rail's answer for the amount it carries: the
        // signed amount less the route fee and gas the relayer keeps.
        let data = encode_call(
            DEPOSIT,
            &[
                AbiValue::Address(token),
                AbiValue::Uint(req.quote.amount_in.0),
                AbiValue::Uint(U256::from(to)),
                AbiValue::Address(recipient),
            ],
        );
        Ok(PlanBuilder::new(req)
            .pull()?
            .approve(DEPOSIT_CONTRACT)?
            .call(EvmCall::new(DEPOSIT_CONTRACT, data))
            .await_upstream(req.route_id.clone())
            .build())
    }

    /// The bridge has no status API: answering `no_status_api` makes the
    /// host watch the destination chain for the USDC `Transfer` to the
    /// recipient (at least the route's `minOut`) and finish the route on
    /// it. A rail whose upstream has a status API asks it here instead.
    fn track(&self, _host: &dyn Host, _req: &TrackRequest) -> Result<TrackStatus, RailError> {
        Err(RailError::no_status_api())
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let lanes: Vec<&str> = LANES.iter().map(|l| l.0).collect();
        probe(
            host,
            &UPSTREAM,
            UPSTREAM.get(host, "/v1/health", &[]),
            &lanes,
        )
    }
}

/// The lane serving `from` → `to`, or `UnsupportedLane`.
fn lane_of(from: ChainRef, to: ChainRef) -> Result<(&'static str, u64, u64), RailError> {
    LANES
        .iter()
        .copied()
        .find(|&(_, f, t)| from == ChainRef::Evm(f) && to == ChainRef::Evm(t))
        .ok_or_else(|| RailError::unsupported(format!("{ID} does not serve {from} -> {to}")))
}

fn unique(chains: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = chains.collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::SourceMode;
    use relay_rail_sdk::{fixture::Fixture, testing::*};

    fn host() -> RecordingHost {
        let f = Fixture::parse(include_str!("../../fixture/upstream.json")).expect("fixture");
        RecordingHost::from_fixture(&f).config("relayer", RELAYER)
    }

    #[test]
    fn quotes_from_the_recorded_fee_api() {
        let host = host();
        let mut req = usdc_base_to_arbitrum(1_000_000);
        req.from_chain = ChainRef::Evm(LANES[0].1);
        req.to_chain = ChainRef::Evm(LANES[0].2);
        let q = TemplateRail.quote(&host, &req).expect("quote");
        // 10 bps of 1 USDC is below the recorded 0.001 USDC minimum.
        assert_eq!(q.amount_out, Amount::from_u128(999_000));
        assert!(host.only_request().url.contains("/v1/fees?fromChain="));
    }

    #[test]
    fn plans_pull_approve_deposit_await() {
        let host = host();
        let mut req = usdc_base_to_arbitrum(1_000_000);
        req.from_chain = ChainRef::Evm(LANES[0].1);
        req.to_chain = ChainRef::Evm(LANES[0].2);
        let q = TemplateRail.quote(&host, &req).expect("quote");
        let mut p = prepare_for(q, RELAYER, SourceMode::Permit2);
        p.from_chain = req.from_chain;
        p.to_chain = req.to_chain;
        let plan = TemplateRail.prepare(&host, &p).expect("plan");
        assert_eq!(plan.steps.len(), 4, "{plan:#?}");
    }
}
