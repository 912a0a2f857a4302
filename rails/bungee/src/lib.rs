//! The Bungee rail: EVM↔EVM transfers priced and built by Bungee (Socket),
//! one of the mesh's three bridge aggregators (spec §1.3).
//!
//! # Wire format followed
//!
//! **Socket API v2, single-transaction bridging flow**, as documented at
//! docs.socket.tech/socket-api/v2 and its OpenAPI reference mirrored at
//! docs.bungee.exchange ("socket-api-reference": `QuoteController_getQuote`,
//! `AppController_getSingleTx`, `AppController_getBridgingStatus`; read
//! 2026-01). Socket has since published a v3 swap API; v2 is the documented
//! version this rail (and the devnet simulator) speaks, at `api.socket.tech`:
//!
//! - `GET {base}/v2/quote?fromChainId&fromTokenAddress&toChainId&toTokenAddress&fromAmount&userAddress&recipient&uniqueRoutesPerBridge&sort&singleTxOnly&defaultBridgeSlippage&defaultSwapSlippage`
//!   → `{success, result{routes[{routeId, fromAmount, toAmount, usedBridgeNames,
//!   totalUserTx, serviceTime, userTxs[{steps[{protocolFees{amount, asset}}],
//!   gasFees{gasLimit}}], integratorFee{amount, asset}}], bridgeRouteErrors}}`.
//! - `POST {base}/v2/build-tx {route}` → `{success, result{txTarget, txData,
//!   value, chainId, approvalData{minimumApprovalAmount, approvalTokenAddress,
//!   allowanceTarget, owner}}}` — called by `prepare`, which has the route
//!   from the quote's detail.
//! - `GET {base}/v2/bridge-status?transactionHash&fromChainId&toChainId[&bridgeName]`
//!   → `{success, result{sourceTxStatus, destinationTxStatus: PENDING|COMPLETED|FAILED,
//!   destinationTransactionHash}}`.
//! - Every call carries the `API-KEY` header, injected by the host from the
//!   credential named in `config.credential` (the rail never sees it).
//!
//! Socket v2 quotes have no minimum-out field: `min_out` is the route's last
//! `minAmountOut` when a step carries one, else the estimate less the
//! requested slippage (the slippage is also sent as `defaultBridgeSlippage`
//! / `defaultSwapSlippage`, so the route is built to honour it).
//!
//! Configuration: `base_url` (default `https://api.socket.tech`),
//! `credential`, `relayer` (set by the host).
//!
//! # What it must never do
//!
//! Own I/O or keys. Plans are declarative: Permit2 pull, approve the
//! `allowanceTarget`, call `txTarget`, await Socket. The manifest declares
//! no contracts so the host's policy admits the upstream's target (the
//! Socket gateway is `0x3a23F943181408EAC424116Af7b7790c94Cb97a5`; not pinned
//! so simulators can stand in).

mod quote;
mod status;

use relay_rail_sdk::{lane::EvmCoverage, Upstream};

/// The upstream documentation version this rail's wire format follows.
pub const UPSTREAM_DOC: &str =
    "Socket API v2, single-tx flow (docs.socket.tech/socket-api/v2, docs.bungee.exchange reference, 2026-01)";

/// The rail id.
pub const ID: &str = "bungee";

/// The Socket v2 API.
pub const UPSTREAM: Upstream = Upstream {
    name: "Bungee",
    default_base: "https://api.socket.tech",
};

/// Chains of the gasless set in Socket v2's chain id list.
pub const CHAINS: [u64; 13] = [
    1, 10, 56, 100, 137, 5000, 8453, 34443, 42161, 43114, 59144, 81457, 7777777,
];

/// What the rail carries (cross-chain only).
pub const COVERAGE: EvmCoverage = EvmCoverage {
    chains: &CHAINS,
    assets: &["USDC", "USDT", "WBTC", "ETH"],
    same_chain: false,
};

/// The Bungee rail.
#[derive(Debug, Default, Clone)]
pub struct Bungee;

relay_rail_sdk::aggregator_rail! {
    Bungee {
        id: ID,
        name: "Bungee (Socket)",
        egress: "api.socket.tech",
        doc: UPSTREAM_DOC,
        coverage: COVERAGE,
        upstream: UPSTREAM,
        quote_request: quote::request,
        parse_quote: quote::parse,
        track: status::track,
        probe_request: status::probe_request,
        prepare: quote::build,
    }
}
