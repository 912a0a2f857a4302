//! The sui rail: quote-only USDC lanes between EVM chains and sui (spec §1.2:
//! "`sui` as quote-only"; §2.3 `comparatorQuoteOnly.sui`). Nothing is ever
//! executed — there is no sui signer — so every lane is `executable: false`
//! and `prepare`/`track` answer `UNSUPPORTED_LANE`.
//!
//! Pricing, stated honestly:
//! - when the operator runs an Allbridge Core REST API (3.x) and sets
//!   `allbridge.base_url`, quotes are Allbridge Core's real price for
//!   EVM↔Sui USDC (the stablebridge's client, `GET /bridge/quote`);
//! - otherwise there is no public hosted quote API for these lanes, and the
//!   quote is an operator-configured indicative rate: `indicative_fee_bps`
//!   and `indicative_fixed_fee` (destination smallest units), duration
//!   `indicative_duration_sec` (default 900). The quote's `detail.pricing`
//!   says `indicative`. Without either source the rail does not quote.

use relay_plugin_api::{
    Amount, ChainRef, ExecutionPlan, Fee, FeeKind, Host, NonEvmNode, PrepareRequest, QuoteRequest,
    Rail, RailError, RailErrorKind, RailHealth, RailManifest, RailQuote, RailRole, TrackRequest,
    TrackStatus, U256,
};
use relay_rail_sdk::{
    health::{probe, PROBE_TX},
    quote_only,
    scoped_host::ScopedHost,
    QUOTE_TTL_MS,
};
use relay_rail_stablebridge::{
    allbridge::{self, Side, ALLBRIDGE},
    lanes::{check_recipient, token_address, Lane, Transfer},
};
use serde_json::json;

/// Rail id.
pub const ID: &str = "sui";
/// EVM → sui.
pub const EVM_TO_SUI: &str = "evm->sui";
/// Sui → EVM.
pub const SUI_TO_EVM: &str = "sui->evm";
/// Why every lane is quote-only.
pub const REASON: &str = "no sui signer: sui is priced for comparison and never executed";

const SUI: ChainRef = ChainRef::NonEvm(NonEvmNode::Sui);

/// The sui rail.
#[derive(Debug, Default, Clone)]
pub struct Sui;

fn evm() -> Vec<ChainRef> {
    allbridge::EVM_CHAINS
        .iter()
        .map(|c| ChainRef::Evm(*c))
        .collect()
}

impl Rail for Sui {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: ID.into(),
            name: "Sui (quote-only)".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::QuoteOnly,
            coverage: vec![
                quote_only::lane(EVM_TO_SUI, evm(), vec![SUI], &["USDC"], REASON),
                quote_only::lane(SUI_TO_EVM, vec![SUI], evm(), &["USDC"], REASON),
            ],
            egress: vec![],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: Some(
                "Allbridge Core REST API 3.x GET /bridge/quote (when configured), else an \
                 operator-configured indicative rate"
                    .into(),
            ),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        let lane = lane_of(req)?;
        let ab = ScopedHost::new(host, "allbridge");
        let mut q = if allbridge::base_url(&ab).is_ok() {
            allbridge_quote(&ab, req, lane)?
        } else {
            indicative_quote(host, req, lane)?
        };
        q.rail = ID.into();
        q.quote_only_reason = Some(REASON.into());
        q.gas = None;
        if let Some(o) = std::sync::Arc::make_mut(&mut q.detail).as_object_mut() {
            o.insert("quoteOnly".into(), true.into());
        }
        Ok(q)
    }

    fn prepare(&self, _host: &dyn Host, _req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        Err(quote_only::refusal(ID, REASON))
    }

    fn track(&self, _host: &dyn Host, _req: &TrackRequest) -> Result<TrackStatus, RailError> {
        Err(quote_only::refusal(ID, REASON))
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let ab = ScopedHost::new(host, "allbridge");
        let problem = match allbridge::status_request(&ab, "SUI", PROBE_TX) {
            Ok(r) => quote_only::problem(&probe(&ab, &ALLBRIDGE, r, &[])),
            Err(_) if indicative_bps(host).is_some() => None,
            Err(e) => Some(format!("{} — and no indicative_fee_bps", e.message)),
        };
        quote_only::health(&[(EVM_TO_SUI, problem.clone()), (SUI_TO_EVM, problem)])
    }
}

/// The lane of `req` after its checks: USDC to USDC, an Allbridge EVM chain
/// on the other side, a positive amount, a well-formed recipient.
fn lane_of(req: &QuoteRequest) -> Result<Lane, RailError> {
    let (evm, outbound) = match (&req.from_chain, &req.to_chain) {
        (ChainRef::Evm(c), t) if *t == SUI => (*c, true),
        (f, ChainRef::Evm(c)) if *f == SUI => (*c, false),
        _ => {
            return Err(RailError::unsupported(
                "the sui rail prices USDC between EVM chains and sui",
            ))
        }
    };
    if !allbridge::EVM_CHAINS.contains(&evm) {
        return Err(RailError::unsupported(format!(
            "chain {evm} has no sui lane"
        )));
    }
    for t in [&req.from_token, &req.to_token] {
        if !t.symbol.eq_ignore_ascii_case("USDC") {
            return Err(RailError::unsupported("the sui lanes carry USDC to USDC"));
        }
    }
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    if let Some(to) = &req.to_address {
        check_recipient(&req.to_chain, to)?;
    }
    Ok(Lane {
        name: if outbound { EVM_TO_SUI } else { SUI_TO_EVM },
        node: NonEvmNode::Sui,
        outbound,
        assets: &["USDC"],
    })
}

fn allbridge_quote(ab: &dyn Host, req: &QuoteRequest, lane: Lane) -> Result<RailQuote, RailError> {
    let side = |chain: &ChainRef,
                token: &relay_plugin_api::Token,
                field: &str|
     -> Result<Side, RailError> {
        let address = match chain {
            ChainRef::Evm(_) => token.address.clone(),
            ChainRef::NonEvm(n) => token_address(ab, *n, "USDC"),
        };
        Ok(Side {
            chain: allbridge::chain_symbol(chain).unwrap_or_default().into(),
            token: address
                .ok_or_else(|| RailError::invalid(field, "needs the token's contract address"))?,
        })
    };
    let t = Transfer {
        lane,
        asset: "USDC".into(),
        from: side(&req.from_chain, &req.from_token, "fromToken")?,
        to: side(&req.to_chain, &req.to_token, "toToken")?,
    };
    let mut q = relay_rail_stablebridge::priced_quote(ab, req, &t)?;
    if let Some(o) = std::sync::Arc::make_mut(&mut q.detail).as_object_mut() {
        o.insert("pricing".into(), "allbridge-core".into());
    }
    Ok(q)
}

fn indicative_bps(host: &dyn Host) -> Option<u32> {
    host.config("indicative_fee_bps")
        .and_then(|v| v.trim().parse().ok())
        .filter(|b| *b <= 10_000)
}

fn indicative_quote(
    host: &dyn Host,
    req: &QuoteRequest,
    lane: Lane,
) -> Result<RailQuote, RailError> {
    let bps = indicative_bps(host).ok_or_else(|| RailError {
        retryable: false,
        ..RailError::new(
            RailErrorKind::Capability,
            "no sui pricing source: set allbridge.base_url (Allbridge Core REST API) or indicative_fee_bps",
        )
    })?;
    let fixed: Amount = host
        .config("indicative_fixed_fee")
        .and_then(|v| v.trim().parse().ok())
        .map(Amount)
        .unwrap_or_default();
    let duration = host
        .config("indicative_duration_sec")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(900);
    let gross = rescale(req.amount, req.from_token.decimals, req.to_token.decimals);
    let fee = gross.bps(bps).checked_add(fixed).unwrap_or(gross);
    let out = gross.saturating_sub(fee);
    if out.is_zero() {
        return Err(RailError::new(
            RailErrorKind::AmountOutOfRange,
            "the amount does not cover the indicative fee",
        ));
    }
    Ok(RailQuote {
        rail: ID.into(),
        lane: lane.name.into(),
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
        duration_sec: duration,
        quote_only_reason: Some(REASON.into()),
        upstream_ref: None,
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: json!({
            "node": "sui",
            "direction": lane.name,
            "pricing": "indicative",
            "egressAmount": out.to_string(),
            "fees": [{"type": "indicative", "amount": fee.to_string(), "asset": "USDC"}],
            "indicativeFeeBps": bps,
        })
        .into(),
    })
}

fn rescale(a: Amount, from: u8, to: u8) -> Amount {
    let ten = |d: u8| U256::from(10u8).pow(U256::from(d));
    a.mul_div(ten(to), ten(from)).unwrap_or(Amount(U256::MAX))
}
