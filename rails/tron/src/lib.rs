//! The tron comparator (spec §2.3 `comparatorQuoteOnly.tronReverseAndChainflip`):
//! quote-only lanes, priced from the real upstreams and never executed.
//!
//! - `tron->evm` (USDT): Allbridge Core's price for the reverse tron leg.
//!   It is quote-only because Allbridge's tron transaction must be signed on
//!   tron and the relayer holds no tron key; EVM→tron executes through the
//!   stablebridge rail.
//! - `evm->bitcoin` (ETH, USDT) and `bitcoin->evm` (BTC → ETH): Chainflip
//!   asset lanes, priced for comparison; the one executable Chainflip asset
//!   lane — USDC→BTC from two EVM chains — lives in the btc rail.
//!
//! The upstream clients are the stablebridge's ([`relay_rail_stablebridge::allbridge`],
//! Allbridge Core REST API 3.x) and the btc rail's ([`relay_rail_btc::chainflip`],
//! Chainflip SDK 1.x Swap API v2), lent a configuration scoped per upstream:
//! `[rails.tron]` `allbridge.base_url` (required for `tron->evm`; the REST API
//! is self-hosted), `allbridge.token.tron.USDT`, `chainflip.base_url` (default
//! `https://chainflip-swap.chainflip.io`).
//!
//! `prepare` and `track` answer `UNSUPPORTED_LANE` — never a plan.

use relay_plugin_api::{
    ChainRef, ExecutionPlan, Host, NonEvmNode, PrepareRequest, QuoteRequest, Rail, RailError,
    RailHealth, RailManifest, RailQuote, RailRole, TrackRequest, TrackStatus,
};
use relay_rail_btc::{chainflip::Asset, lanes::Swap};
use relay_rail_sdk::{
    health::{probe, PROBE_TX},
    quote_only,
    scoped_host::ScopedHost,
};
use relay_rail_stablebridge::{
    allbridge::{self, Side, ALLBRIDGE},
    lanes::{check_recipient, token_address, Lane, Transfer},
};

/// Rail id.
pub const ID: &str = "tron";
/// The reverse tron lane.
pub const TRON_TO_EVM: &str = "tron->evm";
/// Chainflip asset lane EVM → bitcoin.
pub const EVM_TO_BITCOIN: &str = "evm->bitcoin";
/// Chainflip asset lane bitcoin → EVM.
pub const BITCOIN_TO_EVM: &str = "bitcoin->evm";

/// Why the reverse lane is quote-only.
pub const TRON_REASON: &str =
    "comparator: Allbridge's tron→EVM transaction must be signed on tron \
     and the relayer holds no tron key or float; EVM→tron executes through stablebridge";
/// Why the Chainflip asset lanes are quote-only.
pub const CHAINFLIP_REASON: &str =
    "comparator: Chainflip asset lane priced for comparison; only the \
     funds-gated USDC→BTC lane executes (btc rail)";

const TRON: ChainRef = ChainRef::NonEvm(NonEvmNode::Tron);
const BITCOIN: ChainRef = ChainRef::NonEvm(NonEvmNode::Bitcoin);

/// The tron comparator rail.
#[derive(Debug, Default, Clone)]
pub struct TronComparator;

fn chainflip_evm() -> Vec<ChainRef> {
    relay_rail_btc::lanes::CHAINFLIP_EVM
        .iter()
        .map(|(c, _)| ChainRef::Evm(*c))
        .collect()
}

impl Rail for TronComparator {
    fn manifest(&self) -> RailManifest {
        let allbridge_evm = allbridge::EVM_CHAINS
            .iter()
            .map(|c| ChainRef::Evm(*c))
            .collect();
        RailManifest {
            id: ID.into(),
            name: "Tron reverse and Chainflip comparator (quote-only)".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::QuoteOnly,
            coverage: vec![
                quote_only::lane(TRON_TO_EVM, vec![TRON], allbridge_evm, &["USDT"], TRON_REASON),
                quote_only::lane(EVM_TO_BITCOIN, chainflip_evm(), vec![BITCOIN], &["ETH", "USDT"], CHAINFLIP_REASON),
                quote_only::lane(BITCOIN_TO_EVM, vec![BITCOIN], chainflip_evm(), &["BTC"], CHAINFLIP_REASON),
            ],
            egress: vec!["chainflip-swap.chainflip.io".into()],
            rpc_chains: vec![],
            contracts: vec![],
            upstream: Some(
                "Allbridge Core REST API 3.x GET /bridge/quote; Chainflip SDK 1.x Swap API v2 GET /v2/quote"
                    .into(),
            ),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        let (mut q, reason) = match (&req.from_chain, &req.to_chain) {
            (f, ChainRef::Evm(_)) if *f == TRON => (tron_quote(host, req)?, TRON_REASON),
            _ => (chainflip_quote(host, req)?, CHAINFLIP_REASON),
        };
        q.rail = ID.into();
        q.quote_only_reason = Some(reason.into());
        q.gas = None;
        if let Some(o) = std::sync::Arc::make_mut(&mut q.detail).as_object_mut() {
            o.insert("quoteOnly".into(), true.into());
        }
        Ok(q)
    }

    fn prepare(&self, _host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        Err(quote_only::refusal(ID, reason_for(&req.quote.lane)))
    }

    fn track(&self, _host: &dyn Host, _req: &TrackRequest) -> Result<TrackStatus, RailError> {
        Err(quote_only::refusal(
            ID,
            "no route of this rail is ever submitted",
        ))
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let ab = ScopedHost::new(host, "allbridge");
        let allbridge = match allbridge::status_request(&ab, "TRX", PROBE_TX) {
            Ok(r) => quote_only::problem(&probe(&ab, &ALLBRIDGE, r, &[])),
            Err(e) => Some(e.message),
        };
        let cf = ScopedHost::new(host, "chainflip");
        let probe_req = relay_rail_btc::chainflip::CHAINFLIP.get(&cf, "/v2/swaps/0-Bitcoin-0", &[]);
        let chainflip = quote_only::problem(&probe(
            &cf,
            &relay_rail_btc::chainflip::CHAINFLIP,
            probe_req,
            &[],
        ));
        quote_only::health(&[
            (TRON_TO_EVM, allbridge),
            (EVM_TO_BITCOIN, chainflip.clone()),
            (BITCOIN_TO_EVM, chainflip),
        ])
    }
}

fn reason_for(lane: &str) -> &'static str {
    if lane == TRON_TO_EVM {
        TRON_REASON
    } else {
        CHAINFLIP_REASON
    }
}

/// tron → EVM, priced by Allbridge Core.
fn tron_quote(host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
    let evm = req.to_chain.evm_id().unwrap_or_default();
    if !allbridge::EVM_CHAINS.contains(&evm) {
        return Err(RailError::unsupported(format!(
            "Allbridge Core does not serve chain {evm}"
        )));
    }
    same_asset(req, &["USDT"])?;
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    if let Some(to) = &req.to_address {
        check_recipient(&req.to_chain, to)?;
    }
    let ab = ScopedHost::new(host, "allbridge");
    let to_token = req
        .to_token
        .address
        .clone()
        .ok_or_else(|| RailError::invalid("toToken", "needs the token's contract address"))?;
    let t = Transfer {
        lane: Lane {
            name: TRON_TO_EVM,
            node: NonEvmNode::Tron,
            outbound: false,
            assets: &["USDT"],
        },
        asset: "USDT".into(),
        from: Side {
            chain: "TRX".into(),
            token: token_address(&ab, NonEvmNode::Tron, "USDT").unwrap_or_default(),
        },
        to: Side {
            chain: allbridge::chain_symbol(&req.to_chain)
                .unwrap_or_default()
                .into(),
            token: to_token,
        },
    };
    relay_rail_stablebridge::priced_quote(&ab, req, &t)
}

fn same_asset(req: &QuoteRequest, assets: &[&str]) -> Result<(), RailError> {
    let a = req.from_token.symbol.to_ascii_uppercase();
    if assets.contains(&a.as_str()) && req.to_token.symbol.eq_ignore_ascii_case(&a) {
        Ok(())
    } else {
        Err(RailError::unsupported(format!(
            "this lane carries {} to the same asset",
            assets.join(", ")
        )))
    }
}

/// The Chainflip asset lanes, priced by Chainflip.
fn chainflip_quote(host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
    let chain_name = |c: &ChainRef| {
        relay_rail_btc::lanes::CHAINFLIP_EVM
            .iter()
            .find(|(id, _)| Some(*id) == c.evm_id())
            .map(|(_, n)| *n)
    };
    let (from_sym, to_sym) = (
        req.from_token.symbol.to_ascii_uppercase(),
        req.to_token.symbol.to_ascii_uppercase(),
    );
    let swap = match (chain_name(&req.from_chain), chain_name(&req.to_chain)) {
        (Some(src), None)
            if req.to_chain == BITCOIN
                && ["ETH", "USDT"].contains(&from_sym.as_str())
                && to_sym == "BTC" =>
        {
            Swap {
                lane: relay_rail_btc::lanes::EVM_TO_BITCOIN,
                src: Asset::new(src, &from_sym),
                dest: Asset::new("Bitcoin", "BTC"),
            }
        }
        (None, Some(dest)) if req.from_chain == BITCOIN && from_sym == "BTC" && to_sym == "ETH" => {
            Swap {
                lane: relay_rail_btc::lanes::BITCOIN_TO_EVM,
                src: Asset::new("Bitcoin", "BTC"),
                dest: Asset::new(dest, "ETH"),
            }
        }
        _ => {
            return Err(RailError::unsupported(
                "the comparator prices tron→EVM USDT, ETH/USDT→BTC and BTC→ETH on Chainflip",
            ))
        }
    };
    if req.amount.is_zero() {
        return Err(RailError::invalid("amount", "must be greater than zero"));
    }
    let cf = ScopedHost::new(host, "chainflip");
    if let Some(to) = &req.to_address {
        relay_rail_btc::lanes::check_recipient(&cf, &req.to_chain, to)?;
    }
    relay_rail_btc::priced_quote(&cf, req, &swap)
}
