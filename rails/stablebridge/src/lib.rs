//! The stable bridge rail: USDC/USDT between EVM chains and the non-EVM
//! nodes stellar, solana and tron through Allbridge Core, with the bridge's
//! relayer fee paid in the stablecoin itself (`WITH_STABLECOIN`) so the
//! relayer sends no native value.
//!
//! Wire format: Allbridge Core REST API 3.x ([`allbridge`]) — quote, raw
//! bridge transaction, transfer status. Coverage and per-direction switches
//! are in [`lanes`]; stellar → EVM is not covered ([`lanes::STELLAR_TO_EVM`]).
//!
//! - EVM → node: Permit2 pull → approve Allbridge's bridge → its transaction
//!   → await Allbridge; `track` reads `/transfer/status` until the
//!   destination receive is seen. How every answer maps to a `TrackState`
//!   or a `RailError` kind: [`allbridge::parse_status`], [`allbridge::error`]
//!   and [`allbridge::error_code_kind`].
//! - solana → EVM: the relayer would be the solana sender, so the lane is
//!   funds-gated on its solana float (`float.solana.<ASSET>`, smallest units,
//!   reported by the operator; `relayer.solana` its account). Unfunded, it
//!   answers `FUNDS_REQUIRED` naming what is missing; funded, it still needs
//!   a solana signer this host does not have, and says so. Never a fake
//!   transaction.
//!
//! Quotes carry the spec's non-EVM rail object (§2.6) in `detail`: the
//! egress amount and the fee list, plus what `prepare` needs.
//!
//! Operator configuration (`[rails.stablebridge]`): `base_url` (required;
//! the REST API is self-hosted), `credential`, `token.<node>.<SYMBOL>`,
//! `execute.<lane>`, `float.<node>.<ASSET>`, `relayer.<node>`.
//!
//! Never: sign, hold keys, or call anything but the configured API.

pub mod allbridge;
mod inbound;
pub mod lanes;

use relay_plugin_api::{
    Amount, ExecutionPlan, Fee, FeeKind, GasEstimate, HealthStatus, Host, PrepareRequest,
    QuoteRequest, Rail, RailError, RailErrorKind, RailHealth, RailManifest, RailQuote, RailRole,
    TrackRequest, TrackState, TrackStatus,
};
use relay_rail_sdk::{
    evm_plan,
    health::{probe_documented, PROBE_TX},
    track::track_status,
    QUOTE_TTL_MS,
};
use serde::{Deserialize, Serialize};

use allbridge::{Priced, Progress, Side, ALLBRIDGE, WITH_STABLECOIN};
use lanes::{Lane, Transfer, LANES};

/// Rail id.
pub const ID: &str = "stablebridge";
/// Gas of the source leg (approve + Allbridge send), for quotes.
const SOURCE_GAS: u64 = 60_000 + 250_000;
/// Duration when Allbridge gives none, seconds.
const DEFAULT_DURATION_SEC: u32 = 600;

/// The stable bridge rail.
#[derive(Debug, Default, Clone)]
pub struct StableBridge;

/// One line of the rail object's fee list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeLine {
    /// `relayer`, `lp` or `transfer`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Smallest units of `asset`.
    pub amount: Amount,
    /// Asset symbol.
    pub asset: String,
}

/// The non-EVM rail object a quote carries in `detail` (spec §2.6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailObject {
    /// The non-EVM node.
    pub node: String,
    /// Lane name.
    pub direction: String,
    /// Upstream (`allbridge-core`).
    pub upstream: String,
    /// Messenger chosen.
    pub messenger: String,
    /// Always `WITH_STABLECOIN`.
    pub fee_payment_method: String,
    /// The relayer fee quoted, source token units.
    pub fee: Amount,
    /// What arrives on the destination (Allbridge `estimatedAmount.max`).
    pub egress_amount: Amount,
    /// Its minimum (`estimatedAmount.min`).
    pub egress_amount_min: Amount,
    /// Itemised fees.
    pub fees: Vec<FeeLine>,
    /// Source side.
    pub source: Side,
    /// Destination side.
    pub destination: Side,
}

impl Rail for StableBridge {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: ID.into(),
            name: "Stable bridge (Allbridge Core)".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::StableBridge,
            coverage: LANES.iter().map(Lane::coverage).collect(),
            // The REST API is operator-hosted: its host is granted in the
            // rail's `egress` configuration next to `base_url`.
            egress: vec![],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: Some(
                "Allbridge Core REST API 3.x (allbridge-core-rest-api): GET /bridge/quote, \
                 /raw/bridge, /transfer/status"
                    .into(),
            ),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        priced_quote(host, req, &lanes::transfer_of(host, req)?)
    }

    fn prepare(&self, host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        if req.quote.rail != ID {
            return Err(RailError::invalid("quote", "not a stablebridge quote"));
        }
        let lane = lanes::lane_between(&req.from_chain, &req.to_chain)?;
        if lane.name != req.quote.lane {
            return Err(RailError::invalid(
                "quote.lane",
                "does not match the route's chains",
            ));
        }
        if !lane.execute_enabled(host) {
            return Err(RailError::unsupported(format!(
                "execution of {} is switched off by the operator (execute.{})",
                lane.name, lane.name
            )));
        }
        let object: RailObject = RailObject::deserialize(&*req.quote.detail)
            .map_err(|e| RailError::invalid("quote.detail", e))?;
        lanes::check_recipient(&req.to_chain, &req.recipient)?;
        if !lane.outbound {
            return Err(inbound::refusal(host, &lane, &object, req.quote.amount_in));
        }
        outbound_plan(host, req, &object)
    }

    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        let lane = lanes::lane_between(&req.from_chain, &req.to_chain)?;
        let Some(src_tx) = req.src_tx.as_deref() else {
            return Ok(track_status(
                TrackState::Pending,
                None,
                None,
                "source transaction not sent yet",
            ));
        };
        let chain = allbridge::chain_symbol(&req.from_chain).unwrap_or_default();
        let resp = ALLBRIDGE.send(host, allbridge::status_request(host, chain, src_tx)?)?;
        Ok(match allbridge::parse_status(&resp)? {
            Progress::NotIndexed => track_status(
                TrackState::Pending,
                None,
                None,
                "sent; Allbridge has not indexed the source transaction yet",
            ),
            Progress::Signing { signatures, needed } if needed > 0 && signatures >= needed => {
                track_status(
                    TrackState::Bridging,
                    Some("SENDING"),
                    None,
                    format!(
                        "signed ({signatures}/{needed}); delivery on {} pending",
                        lane.node.as_str()
                    ),
                )
            }
            Progress::Signing { signatures, needed } => track_status(
                TrackState::Bridging,
                Some("RECEIVING"),
                None,
                format!("source confirmed; {signatures}/{needed} bridge signatures"),
            ),
            Progress::Received(tx) => track_status(
                TrackState::Done,
                Some("COMPLETED"),
                Some(tx),
                format!("received on {}", req.to_chain),
            ),
        })
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let names: Vec<&str> = LANES.iter().map(|l| l.name).collect();
        let mut h = match allbridge::status_request(host, "ETH", PROBE_TX) {
            // A transfer's status, or NestJS's error body (not indexed).
            Ok(req) => probe_documented(
                host,
                &ALLBRIDGE,
                req,
                &names,
                &[&["txId"], &["statusCode", "message"]],
            ),
            Err(e) => not_configured(&names, e.message),
        };
        for (l, lane) in h.lanes.iter_mut().zip(LANES) {
            let ready =
                lane.execute_enabled(host) && (lane.outbound || inbound::funded(host, &lane));
            l.execute_ready &= ready;
        }
        h
    }
}

fn not_configured(lanes: &[&str], why: String) -> RailHealth {
    let mut h = RailHealth::operational(lanes.iter().copied());
    h.status = HealthStatus::Down;
    h.detail = Some(why.clone());
    for l in &mut h.lanes {
        (l.quote_ok, l.execute_ready, l.quote_error) = (false, false, Some(why.clone()));
    }
    h
}

/// Asks Allbridge to price `t` and writes the quote (with the rail object in
/// `detail`). The tron and sui comparators price their lanes with it too.
pub fn priced_quote(
    host: &dyn Host,
    req: &QuoteRequest,
    t: &Transfer,
) -> Result<RailQuote, RailError> {
    let body = allbridge::fetch(
        host,
        allbridge::quote_request(host, req.amount, &t.from, &t.to)?,
    )?;
    let p = allbridge::parse_quote(&body, req.amount)?;
    Ok(quote_from(host, req, t, &p))
}

fn quote_from(host: &dyn Host, req: &QuoteRequest, t: &Transfer, p: &Priced) -> RailQuote {
    let mut lines = vec![FeeLine {
        kind: "relayer".into(),
        amount: p.relayer_fee,
        asset: t.asset.clone(),
    }];
    for (kind, amount) in [("lp", p.lp_fee), ("transfer", p.transfer_fee)] {
        if !amount.is_zero() {
            lines.push(FeeLine {
                kind: kind.into(),
                amount,
                asset: t.asset.clone(),
            });
        }
    }
    let fees = lines
        .iter()
        .map(|l| Fee {
            kind: if l.kind == "lp" {
                FeeKind::Protocol
            } else {
                FeeKind::Bridge
            },
            amount: l.amount,
            token: l.asset.clone(),
            included: true,
        })
        .collect();
    let node = t.lane.node.as_str();
    let object = RailObject {
        node: node.into(),
        direction: t.lane.name.into(),
        upstream: "allbridge-core".into(),
        messenger: p.messenger.clone(),
        fee_payment_method: WITH_STABLECOIN.into(),
        fee: p.relayer_fee,
        egress_amount: p.egress,
        egress_amount_min: p.egress_min,
        fees: lines,
        source: t.from.clone(),
        destination: t.to.clone(),
    };
    RailQuote {
        rail: ID.into(),
        lane: t.lane.name.into(),
        amount_in: req.amount,
        amount_out: p.egress,
        min_out: p.egress_min,
        fees,
        gas: t.lane.outbound.then_some(GasEstimate {
            chain: req.from_chain,
            gas_units: SOURCE_GAS,
        }),
        duration_sec: p
            .estimated_time_ms
            .map(|ms| ms.div_ceil(1000).min(u32::MAX as u64) as u32)
            .unwrap_or(DEFAULT_DURATION_SEC),
        quote_only_reason: None,
        upstream_ref: None,
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: serde_json::to_value(&object).unwrap_or_default().into(),
    }
}

fn outbound_plan(
    host: &dyn Host,
    req: &PrepareRequest,
    o: &RailObject,
) -> Result<ExecutionPlan, RailError> {
    if let Some(t) = &req.from_token_address {
        if !t.eq_ignore_ascii_case(&o.source.token) {
            return Err(RailError::invalid(
                "fromToken",
                "differs from the token the quote priced",
            ));
        }
    }
    let ask = allbridge::BridgeAsk {
        amount: req.quote.amount_in,
        sender: &req.relayer,
        recipient: &req.recipient,
        from: &o.source,
        to: &o.destination,
        messenger: &o.messenger,
        fee: o.fee,
    };
    let body = allbridge::fetch(host, allbridge::raw_bridge_request(host, &ask)?)?;
    let call = allbridge::parse_raw_evm(&body, &req.relayer)?;
    let track_ref = format!("allbridge:{}", o.source.chain);
    evm_plan(req, call, None, track_ref).map_err(|e| match e.kind {
        RailErrorKind::InvalidInput => e,
        _ => RailError::internal(e.message),
    })
}
