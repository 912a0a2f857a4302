//! The LI.FI rail: EVM↔EVM transfers and same-chain swaps priced and built
//! by LI.FI, one of the mesh's three bridge aggregators (spec §1.3).
//!
//! # Wire format followed
//!
//! **LI.FI API v1** as documented at docs.li.fi (API reference, OpenAPI
//! 3.0.2 / API version 1.0.0, pages "Get a quote", "Check the status of a
//! cross-chain transfer", "Error codes"; read 2026-01):
//!
//! - `GET {base}/v1/quote?fromChain&toChain&fromToken&toToken&fromAmount&fromAddress&toAddress&slippage[&integrator]`
//!   → `{id, tool, estimate{fromAmount,toAmount,toAmountMin,approvalAddress,
//!   feeCosts[{name,amount,included,token{symbol,decimals}}],gasCosts[{estimate,limit,amount,token}],
//!   executionDuration}, transactionRequest{to,data,value,gasLimit,gasPrice,chainId}}`.
//!   `value`/`gasLimit` are `0x`-hex; amounts are decimal strings; chain ids integers.
//! - `GET {base}/v1/status?txHash&fromChain&toChain[&bridge]` →
//!   `{status: NOT_FOUND|INVALID|PENDING|DONE|FAILED, substatus, substatusMessage, receiving{txHash}}`.
//! - Errors: `{message, code}` with LI.FI's codes (1002 `NoQuoteError`, 1011
//!   `ValidationError`, 1005 rate limit, …) and tool errors in
//!   `errors[{errorType, code, tool, message}]` (`AMOUNT_TOO_LOW`, …).
//! - API key: header `x-lifi-api-key`, optional upstream, injected by the host
//!   from the credential named in the rail's `credential` config.
//!
//! Configuration (`[rails.lifi].config`): `base_url` (default
//! `https://li.quest`), `credential` (e.g. `lifi`), `integrator` (LI.FI's
//! `integrator` string, optional), `relayer` (set by the host).
//!
//! # What it must never do
//!
//! Own I/O or keys: every request goes through the host, which checks the
//! egress allowlist (`li.quest`, plus operator-added hosts such as a
//! simulator). Plans are declarative: Permit2 pull, approve LI.FI's
//! `approvalAddress`, call `transactionRequest.to`, await LI.FI. The manifest
//! declares no contracts, so the host's policy admits the upstream's
//! transaction target (LI.FI's diamond is `0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE`
//! on most chains; it is not pinned because operators point the rail at
//! simulators whose targets differ).

mod quote;
mod status;

use relay_rail_sdk::{lane::EvmCoverage, Upstream};

/// The upstream documentation version this rail's wire format follows.
pub const UPSTREAM_DOC: &str = "LI.FI API v1 (docs.li.fi API reference, OpenAPI 1.0.0, 2026-01)";

/// The rail id.
pub const ID: &str = "lifi";

/// The LI.FI API.
pub const UPSTREAM: Upstream = Upstream {
    name: "LI.FI",
    default_base: "https://li.quest",
};

/// Chains of the gasless set LI.FI serves (per its chain list; a chain it
/// stops serving answers "no route", i.e. `UNSUPPORTED_LANE`).
pub const CHAINS: [u64; 20] = [
    1, 10, 56, 100, 130, 137, 146, 480, 999, 1135, 1868, 5000, 8453, 33139, 34443, 42161, 43114,
    57073, 59144, 81457,
];

/// What the rail carries, same-chain swaps included.
pub const COVERAGE: EvmCoverage = EvmCoverage {
    chains: &CHAINS,
    assets: &["USDC", "USDT", "WBTC", "ETH"],
    same_chain: true,
};

/// The LI.FI rail.
#[derive(Debug, Default, Clone)]
pub struct Lifi;

relay_rail_sdk::aggregator_rail! {
    Lifi {
        id: ID,
        name: "LI.FI",
        egress: "li.quest",
        doc: UPSTREAM_DOC,
        coverage: COVERAGE,
        upstream: UPSTREAM,
        quote_request: quote::request,
        parse_quote: quote::parse,
        track: status::track,
        probe_request: status::probe_request,
        // The status answer, or the documented error body of an unknown
        // transaction.
        probe_shapes: &[&["status"], &["message", "code"]],
    }
}
