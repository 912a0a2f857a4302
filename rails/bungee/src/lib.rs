//! The Bungee rail: EVM↔EVM transfers priced and built by Bungee (Socket),
//! one of the mesh's three bridge aggregators (spec §1.3).
//!
//! # Wire format followed
//!
//! **Socket Swap V3** (`/v3/swap`), the API Socket documents today for
//! Bungee/Socket routes (docs.socket.tech: "Guide to Integrate Socket API",
//! API reference `V3SwapController_quote` / `V3SwapController_status`,
//! "Last verified against the Socket Swap V3 swagger: 2026-06-10"; read
//! 2026-11). Socket's migration guides call both earlier APIs legacy:
//! "Socket v2 API → Socket v3 API" ("The Socket Swap V3 API (`/v3/swap`)
//! replaces the legacy Socket API (`/v2`)") and "Bungee v1 API → Socket v3
//! API" (the `/api/v1/bungee/*` quote/build-tx/submit/status flow). The
//! Socket v2 SDK repository is archived. Socket's integration overview
//! (docs.socket.tech/integrate/introduction) gives the whole flow the rail
//! follows: quote `/v3/swap/quote`, pick a route by `routeTags` or output,
//! send `txData.object` from `userAddress` (approving first when `approval`
//! is present), poll `/v3/swap/status` with the `quoteId`. This rail
//! therefore no longer speaks `api.socket.tech/v2` (no sunset date for v2
//! was found; it is documented only as legacy).
//!
//! - `GET {base}/v3/swap/quote?userOps=tx&originChainId&destinationChainId&inputToken&inputAmount&outputToken&receiverAddress&userAddress&slippage`
//!   → `{success, statusCode, result{originChainId, destinationChainId,
//!   userAddress, receiverAddress, input{token, amount}, routes[{userOp: tx,
//!   quoteId, expiresAt, output{token, amount, minAmountOut}, estimatedTime,
//!   routeDetails{name, bridgeDetails, dexDetails, feeDetails},
//!   approval{amount, tokenAddress, spenderAddress, userAddress},
//!   txData{kind: evm_tx, object{chainId, to, data, value}}, gasFee{gasLimit},
//!   statusCheck}]}, message}`. The route already carries the transaction:
//!   there is no build step, `prepare` plans `txData.object` (Permit2 pull,
//!   approve `approval.spenderAddress`, call, await Socket).
//! - `GET {base}/v3/swap/status?quoteId` → `{success, statusCode,
//!   result{quoteId, userOp, status, statusCode, origin{chainId, status,
//!   txHash}, destination{chainId, status, txHash}, refund}, message}`; the
//!   mapping of every value is in the `status` module.
//! - Errors are the same envelope with `success: false`, the HTTP status in
//!   `statusCode` and a `message` (see the `status` module's table).
//! - Auth: the `x-api-key` header, injected by the host from the credential
//!   named in `config.credential` (the rail never sees it), and the
//!   `affiliate` header Socket issues with the key (`config.affiliate`). Production base:
//!   `https://dedicated-backend.socket.tech`; keyless sandbox:
//!   `https://public-backend.socket.tech`.
//!
//! `min_out` is the route's `output.minAmountOut` (the estimate less the
//! requested slippage when Socket omits it); the slippage is sent as
//! `slippage` (a percentage). The quote's expiry is the earlier of the
//! host's quote TTL and the route's `expiresAt`.
//!
//! Configuration: `base_url` (default `https://dedicated-backend.socket.tech`),
//! `credential` (the host credential whose header is `x-api-key`),
//! `affiliate` (the affiliate id Socket issues with the key, sent as the
//! `affiliate` header), `relayer` (set by the host).
//!
//! # Status and error mapping
//!
//! Socket Swap V3's status reports a coarse `status` and a granular
//! `statusCode` (both strings; the docs' example has `PENDING` / `PENDING`;
//! the values are those of `SocketStatusCode` in the Socket provider Socket
//! wrote for the CoW SDK: `PENDING | IN_PROGRESS | COMPLETED | FAILED |
//! EXPIRED | REFUNDED`), per-leg `origin.status` / `destination.status` and
//! a `refund` object. `track` reads `status`, else `statusCode`:
//!
//! | Socket answer | `TrackState` | stage | notes |
//! |---|---|---|---|
//! | no source transaction yet | `PENDING` | — | nothing is asked |
//! | HTTP 404 (quote not indexed yet) | `PENDING` | — | |
//! | `PENDING` | `PENDING` | — | not picked up / not indexed yet |
//! | `IN_PROGRESS` | `BRIDGING` | `SENDING` (origin not `COMPLETED`), else `RECEIVING` | in flight |
//! | `COMPLETED` | `DONE` (`destTx` = `destination.txHash`) | `COMPLETED` | delivered |
//! | `FAILED` | `FAILED` | — | |
//! | `EXPIRED` | `FAILED` | — | message says the route expired |
//! | `REFUNDED` | `REFUNDED` | — | |
//! | any value with `refund.txHash` set | `REFUNDED` | — | a refunded route is never `DONE` |
//! | any other value | `PENDING` | — | message names the value |
//!
//! Socket documents no "refund pending" or "refund failed" value for V3: a
//! refund in progress or one Socket could not complete can only show as
//! one of the values above (an undocumented value stays pending, reported).
//!
//! Errors (the envelope with `success: false`, `statusCode`, `message`), on
//! quote and track alike:
//!
//! | Socket answer | `RailErrorKind` | retryable |
//! |---|---|---|
//! | HTTP 400 / 422 (a parameter Socket rejects) | `INVALID_INPUT` | no |
//! | HTTP 401 / 403 (missing or wrong `x-api-key`) | `CAPABILITY` | no |
//! | HTTP 404 on quote | `UNSUPPORTED_LANE` | no |
//! | HTTP 408 / 504 | `UPSTREAM_TIMEOUT` | yes |
//! | HTTP 429 (rate limit: 20 RPS per key by default) and 5xx | `UPSTREAM` | yes |
//! | `success: false` on HTTP 200 | `UPSTREAM` | yes |
//! | quote without a route, or only routes that are not `userOp: tx` with `txData.kind: evm_tx` (deposit, CEX routes) | `UNSUPPORTED_LANE` | no |
//! | track with a reference that has no `quoteId` (a route sent by the former v2 rail) | `UNSUPPORTED_LANE`, the "no status API" answer: the host watches the destination chain for the payout | no |
//! | a body outside the documented shape (missing `output.amount`, neither `status` nor `statusCode`, non-hex calldata, a transaction for another chain, an approval of another token or above the amount) | `UPSTREAM_MALFORMED` | no |
//!
//! # What it must never do
//!
//! Own I/O or keys. Plans are declarative: Permit2 pull, approve the
//! route's spender, call the route's target, await Socket. The manifest
//! declares no contracts so the host's policy admits the upstream's target
//! (not pinned so simulators can stand in).

mod quote;
mod status;

use relay_rail_sdk::{lane::EvmCoverage, Upstream};

/// The upstream documentation version this rail's wire format follows.
pub const UPSTREAM_DOC: &str =
    "Socket Swap V3, userOps=tx (docs.socket.tech api-reference/swap, swagger verified 2026-06-10; read 2026-11)";

/// The rail id.
pub const ID: &str = "bungee";

/// The Socket Swap V3 API (dedicated backend).
pub const UPSTREAM: Upstream = Upstream {
    name: "Socket",
    default_base: "https://dedicated-backend.socket.tech",
};

/// Chains of the gasless set the rail offers through Socket (kept from the
/// v2 chain id list; `GET /v3/swap/supported-chains` is the live list).
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
        egress: "dedicated-backend.socket.tech",
        doc: UPSTREAM_DOC,
        coverage: COVERAGE,
        upstream: UPSTREAM,
        quote_request: quote::request,
        parse_quote: quote::parse,
        track: status::track,
        probe_request: status::probe_request,
        // The status answer, or the documented error body of an unknown
        // transaction.
        probe_shapes: &[&["success", "statusCode"]],
    }
}
