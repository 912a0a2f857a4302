//! The Squid rail: EVM↔EVM transfers priced and built by Squid, one of the
//! mesh's three bridge aggregators (spec §1.3).
//!
//! # Wire format followed
//!
//! **Squid API v2** as documented at docs.squidrouter.com ("Route Request
//! Parameters", "Get a route", "Get Route Status" / "Track status", "Error
//! Codes", "Authentication"; read 2026-01):
//!
//! - `POST {base}/v2/route`, header `x-integrator-id`, JSON body
//!   `{fromChain, toChain, fromToken, toToken, fromAmount, fromAddress,
//!   toAddress, slippage, quoteOnly}` (chain ids as strings, amounts as
//!   decimal strings, `slippage` a percentage number, native asset
//!   `0xEeee…EEeE`) → `{route: {quoteId, estimate{fromAmount, toAmount,
//!   toAmountMin, feeCosts[{name, amount, token}], gasCosts[{gasLimit,
//!   amount, token}], estimatedRouteDuration}, transactionRequest?{type,
//!   routeType, target, data, value, gasLimit, gasPrice}}}` and an
//!   `x-request-id` response header, kept as the quote's `upstreamRef`.
//!   Only a `transactionRequest` of type `ON_CHAIN_EXECUTION` (or untyped)
//!   is carried; Squid's types (`0xsquid/squid-types` `RouteResponse`) make
//!   it optional.
//! - `GET {base}/v2/status?transactionId&requestId&fromChainId&toChainId&quoteId`
//!   → `{id, status, squidTransactionStatus?: success|needs_gas|ongoing|partial_success|not_found|failed_on_destination|refunded,
//!   toChain{transactionId}}` (the enum of `0xsquid/squid-types`; the docs
//!   also spell `refund`); 404 while the transaction is not indexed yet.
//!   The mapping of every value is tabled in `status.rs`.
//! - Errors: `{message, type}` (`BAD_REQUEST`, `UNAUTHORIZED`, `NOT_FOUND`,
//!   `RATE_LIMITED`, `INTERNAL_ERROR`; `errorType` in Squid's `SquidError`
//!   type) with messages such as "No route found", "Amount too low",
//!   "Unsupported token", "Too many quote requests for this address".
//!
//! Vendor material checked: `tests/fixtures/vendor/SOURCES`.
//!
//! Squid requires an integrator id on every request: configure a credential
//! (`[capabilities.credentials.squid] header = "x-integrator-id"`), grant it
//! (`[rails.squid] credentials = ["squid"]`) and name it
//! (`config.credential = "squid"`); the host injects it and the rail never
//! sees it. Other configuration: `base_url` (default
//! `https://v2.api.squidrouter.com`), `relayer` (set by the host).
//!
//! # What it must never do
//!
//! Own I/O or keys. Plans are declarative: Permit2 pull, approve the
//! transaction target (Squid's router is the spender), call it, await Squid.
//! The manifest declares no contracts so the host's policy admits the
//! upstream's target (Squid's router is `0xce16F69375520ab01377ce7B88f5BA8C48F8D666`
//! on most EVM chains; not pinned so simulators can stand in).

mod route;
mod status;

use relay_rail_sdk::{lane::EvmCoverage, Upstream};

/// The upstream documentation version this rail's wire format follows.
pub const UPSTREAM_DOC: &str = "Squid API v2 (docs.squidrouter.com, route + status, 2026-01)";

/// The rail id.
pub const ID: &str = "squid";

/// The Squid v2 API.
pub const UPSTREAM: Upstream = Upstream {
    name: "Squid",
    default_base: "https://v2.api.squidrouter.com",
};

/// Chains of the gasless set Squid routes between.
pub const CHAINS: [u64; 10] = [1, 10, 56, 137, 5000, 8453, 42161, 43114, 59144, 81457];

/// What the rail carries (cross-chain only).
pub const COVERAGE: EvmCoverage = EvmCoverage {
    chains: &CHAINS,
    assets: &["USDC", "USDT", "WBTC", "ETH"],
    same_chain: false,
};

/// The Squid rail.
#[derive(Debug, Default, Clone)]
pub struct Squid;

relay_rail_sdk::aggregator_rail! {
    Squid {
        id: ID,
        name: "Squid",
        egress: "v2.api.squidrouter.com",
        doc: UPSTREAM_DOC,
        coverage: COVERAGE,
        upstream: UPSTREAM,
        quote_request: route::request,
        parse_quote: route::parse,
        track: status::track,
        probe_request: status::probe_request,
        // The status answer, or the documented error body of an unknown
        // transaction.
        probe_shapes: &[&["squidTransactionStatus"], &["message"]],
    }
}
