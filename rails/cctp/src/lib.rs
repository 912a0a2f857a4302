//! The CCTP rail: native USDC burned on one chain and minted on another by
//! Circle's Cross-Chain Transfer Protocol v2 — 1:1, no bridge fee (standard
//! transfers: `maxFee` 0, `minFinalityThreshold` 2000). The engine adds the
//! host's own fees; this rail reports only what CCTP itself takes: nothing.
//!
//! Wire formats followed (recorded in the manifest's `upstream`):
//! - contracts: Circle CCTP v2 "Contract interfaces" (TokenMessengerV2
//!   `depositForBurn`, MessageTransmitterV2 `receiveMessage`), domain ids and
//!   addresses from "Supported chains and domains" / "Contract addresses";
//! - attestation API: CCTP OpenAPI 1.0, `GET /v2/messages/{sourceDomainId}`
//!   ([`iris`]).
//!
//! A route is three things on chain and one poll in between:
//! 1. `prepare`: Permit2 pull → approve USDC to the TokenMessenger →
//!    `depositForBurn` → await Circle;
//! 2. `track` with the burn's hash asks Circle for the attestation; once it
//!    is `complete` the answer carries a follow-up `receiveMessage` on the
//!    destination MessageTransmitter (state BRIDGING, stage SENDING);
//! 3. the host sends it and tracks again with `reference` = the follow-up's
//!    hash; its receipt makes the route DONE.
//!
//! How every answer maps (Circle's values in [`iris`]):
//!
//! | what the rail sees | state | stage |
//! |---|---|---|
//! | no source transaction yet | `PENDING` | — |
//! | Circle: 404, or `messages: []` (not observed yet) | `PENDING` | — |
//! | Circle: `pending_confirmations` / `pending` (with or without `delayReason`) | `BRIDGING`, message names the delay | `RECEIVING` |
//! | Circle: another status word | `PENDING`, message names it | — |
//! | Circle: `complete` with message and attestation | `BRIDGING` + follow-up `receiveMessage` | `SENDING` |
//! | Circle: `complete` without attestation, unreadable or foreign-only messages, a body not in Circle's format | `UPSTREAM_MALFORMED` error | — |
//! | Circle: 400 | `INVALID_INPUT` error | — |
//! | Circle: 429, 5xx, unreachable | `UPSTREAM` error, retryable | — |
//! | the mint (`reference`) not mined yet | `BRIDGING` | `SENDING` |
//! | the mint's receipt succeeded | `DONE` (`destTx` = the mint) | `COMPLETED` |
//! | the mint reverted | `FAILED` | — |
//!
//! CCTP has no refund: a burn is either minted on the destination or
//! waits (Circle's API can re-attest an expired message); nothing maps to
//! `REFUNDED`.
//!
//! Operator configuration (`[rails.cctp]`): `attestation_base` (default
//! `https://iris-api.circle.com`; the sandbox is `iris-api-sandbox`),
//! `token_messenger.<chainId>`, `message_transmitter.<chainId>`,
//! `usdc.<chainId>` (defaults: Circle's mainnet deployment),
//! `duration_sec.<chainId>` (finality wait override).
//!
//! What it must never do: sign, hold keys, or reach anything but the
//! attestation API and read-only RPC — plans are descriptions the host
//! checks, signs and sends.

mod calls;
mod domains;
pub mod iris;

use relay_plugin_api::{
    Amount, ChainRef, ExecutionPlan, Fee, FeeKind, GasEstimate, Host, LaneCoverage, PlanAction,
    PrepareRequest, QuoteRequest, Rail, RailError, RailErrorKind, RailHealth, RailManifest,
    RailQuote, RailRole, TrackRequest, TrackState, TrackStatus,
};
use relay_rail_sdk::{
    health::{probe_documented, ProbeShapes, PROBE_TX},
    lane::is_evm_address,
    plan::PlanBuilder,
    track::track_status,
    EvmCall,
};
use serde_json::json;

pub use calls::{deposit_for_burn, receive_message, Burn, FINALITY_STANDARD};
pub use domains::{Domain, DOMAINS, MESSAGE_TRANSMITTER_V2, TOKEN_MESSENGER_V2};
use iris::Attestation;

/// Rail id.
pub const ID: &str = "cctp";
/// The one lane: USDC between any two CCTP chains.
pub const LANE: &str = "evm->evm";
/// Circle's per-burn limit: 10 million USDC (6 decimals).
pub const MAX_BURN: u128 = 10_000_000 * 1_000_000;
/// How long a quote stays valid: CCTP's price never moves (1:1).
pub const QUOTE_TTL_MS: u64 = 300_000;

/// The CCTP rail.
#[derive(Debug, Default, Clone)]
pub struct Cctp;

impl Rail for Cctp {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: ID.into(),
            name: "Circle CCTP".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::BurnMint,
            coverage: vec![LaneCoverage {
                lane: LANE.into(),
                from: domains::chains(),
                to: domains::chains(),
                assets: vec!["USDC".into()],
                same_chain: false,
                executable: true,
                quote_only_reason: None,
            }],
            egress: vec!["iris-api.circle.com".into(), iris::IRIS_SANDBOX_HOST.into()],
            rpc_chains: domains::chains(),
            contracts: domains::declared_contracts(),
            upstream: Some(
                "Circle CCTP v2: TokenMessengerV2/MessageTransmitterV2 contract interfaces; \
                 attestation API GET /v2/messages/{sourceDomainId} (CCTP OpenAPI 1.0)"
                    .into(),
            ),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        let (src, dst) = lane_of(&req.from_chain, &req.to_chain)?;
        for t in [&req.from_token, &req.to_token] {
            if !t.symbol.eq_ignore_ascii_case("USDC") {
                return Err(RailError::unsupported("CCTP carries USDC to USDC only"));
            }
        }
        if req.amount.is_zero() {
            return Err(RailError::invalid("amount", "must be greater than zero"));
        }
        if req.amount > Amount::from_u128(MAX_BURN) {
            return Err(RailError::new(
                RailErrorKind::AmountOutOfRange,
                "CCTP burns at most 10,000,000 USDC per transaction",
            ));
        }
        if let Some(to) = req.to_address.as_deref().filter(|a| !is_evm_address(a)) {
            return Err(RailError::invalid(
                "toAddress",
                format!("{to:?} is not an EVM address"),
            ));
        }
        Ok(RailQuote {
            rail: ID.into(),
            lane: LANE.into(),
            amount_in: req.amount,
            amount_out: req.amount,
            min_out: req.amount,
            fees: vec![Fee {
                kind: FeeKind::Bridge,
                amount: Amount::ZERO,
                token: "USDC".into(),
                included: true,
            }],
            gas: Some(GasEstimate {
                chain: req.from_chain,
                gas_units: calls::SOURCE_GAS,
            }),
            duration_sec: src.duration_sec(host),
            quote_only_reason: None,
            upstream_ref: None,
            expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
            detail: json!({
                "sourceDomain": src.domain,
                "destinationDomain": dst.domain,
                "transfer": "standard",
                "minFinalityThreshold": FINALITY_STANDARD,
                "maxFee": "0",
                "mintGasUnits": calls::MINT_GAS,
            })
            .into(),
        })
    }

    fn prepare(&self, host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        let (src, dst) = lane_of(&req.from_chain, &req.to_chain)?;
        if req.quote.rail != ID {
            return Err(RailError::invalid("quote", "not a cctp quote"));
        }
        let usdc = source_usdc(host, &src, req.from_token_address.as_deref())?;
        let messenger =
            domains::configured(host, "token_messenger", src.chain, TOKEN_MESSENGER_V2)?;
        // The destination must be able to receive before anything burns.
        domains::configured(
            host,
            "message_transmitter",
            dst.chain,
            MESSAGE_TRANSMITTER_V2,
        )?;
        let data = deposit_for_burn(&Burn {
            amount: req.quote.amount_in,
            destination_domain: dst.domain,
            mint_recipient: &req.recipient,
            burn_token: &usdc,
            max_fee: Amount::ZERO,
            min_finality_threshold: FINALITY_STANDARD,
        })
        .ok_or_else(|| RailError::invalid("recipient", "CCTP mints to an EVM address"))?;
        // No track_ref: track reads the burn from `src_tx`, and the host
        // passes the follow-up mint's hash as `reference` once sent.
        Ok(PlanBuilder::new(req)
            .with_source_token(usdc)
            .pull()?
            .approve(&messenger)?
            .call(EvmCall::new(messenger.clone(), data).with_gas_limit(calls::BURN_GAS))
            .await_upstream(format!("circle-attestation:{}->{}", src.domain, dst.domain))
            .build())
    }

    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        let (src, dst) = lane_of(&req.from_chain, &req.to_chain)?;
        if let Some(mint_tx) = req.reference.as_deref().filter(|r| is_tx_hash(r)) {
            return track_mint(host, req.to_chain, mint_tx);
        }
        let Some(burn_tx) = req.src_tx.as_deref() else {
            return Ok(track_status(
                TrackState::Pending,
                None,
                None,
                "burn not broadcast yet",
            ));
        };
        if !is_tx_hash(burn_tx) {
            return Err(RailError::invalid(
                "srcTx",
                "not a 32-byte 0x-hex transaction hash",
            ));
        }
        Ok(match iris::fetch(host, src.domain, dst.domain, burn_tx)? {
            Attestation::NotObserved => track_status(
                TrackState::Pending,
                None,
                None,
                "burn sent; Circle has not observed it yet",
            ),
            Attestation::Pending {
                status,
                delay_reason,
            } => track_status(
                TrackState::Bridging,
                Some("RECEIVING"),
                None,
                match delay_reason {
                    Some(why) => format!(
                        "burn observed by Circle ({status}); attestation delayed: {why}"
                    ),
                    None => {
                        format!("burn observed by Circle ({status}); waiting for source finality")
                    }
                },
            ),
            Attestation::Unknown(status) => track_status(
                TrackState::Pending,
                None,
                None,
                format!("Circle reports the burn as {status:?}, a status it does not document; asking again"),
            ),
            Attestation::Complete {
                message,
                attestation,
            } => {
                let transmitter = domains::configured(
                    host,
                    "message_transmitter",
                    dst.chain,
                    MESSAGE_TRANSMITTER_V2,
                )?;
                let mut s = track_status(
                    TrackState::Bridging,
                    Some("SENDING"),
                    None,
                    "attested by Circle; mint with receiveMessage on the destination",
                );
                s.follow_up = vec![PlanAction::ContractCall {
                    chain: req.to_chain,
                    to: transmitter,
                    data: receive_message(&message, &attestation),
                    value: Amount::ZERO,
                    gas_limit: Some(calls::MINT_GAS),
                }];
                s
            }
        })
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        // A lookup of a transaction that cannot exist: Circle answers 404
        // quickly when it is up; nothing moves.
        let req = iris::messages_request(host, 0, PROBE_TX);
        // Its answer: the messages, or the error body of an unknown one.
        let shapes: ProbeShapes = &[&["messages"], &["message"]];
        probe_documented(host, &iris::IRIS, req, &[LANE], shapes)
    }
}

/// The source and destination domains, or `UNSUPPORTED_LANE`.
fn lane_of(from: &ChainRef, to: &ChainRef) -> Result<(Domain, Domain), RailError> {
    let name = |c: &ChainRef| format!("{c}");
    let src = domains::of(from)
        .ok_or_else(|| RailError::unsupported(format!("{} is not a CCTP chain", name(from))))?;
    let dst = domains::of(to)
        .ok_or_else(|| RailError::unsupported(format!("{} is not a CCTP chain", name(to))))?;
    if src == dst {
        return Err(RailError::unsupported(
            "CCTP moves USDC between chains, not within one",
        ));
    }
    Ok((src, dst))
}

/// The USDC to burn: `usdc.<chainId>` when configured (and then the
/// request's token must be it), else the request's token, else Circle's.
fn source_usdc(
    host: &dyn Host,
    src: &Domain,
    requested: Option<&str>,
) -> Result<String, RailError> {
    let configured = host.config(&format!("usdc.{}", src.chain));
    let usdc = match (configured, requested) {
        (Some(c), Some(r)) if !c.trim().eq_ignore_ascii_case(r) => {
            return Err(RailError::invalid(
                "fromToken",
                format!(
                    "{r} is not the USDC ({}) CCTP burns on chain {}",
                    c.trim(),
                    src.chain
                ),
            ))
        }
        (Some(c), _) => c.trim().to_string(),
        (None, Some(r)) => r.to_string(),
        (None, None) => src.usdc.to_string(),
    };
    if !is_evm_address(&usdc) {
        return Err(RailError::invalid(
            "fromToken",
            format!("{usdc:?} is not an EVM address"),
        ));
    }
    Ok(usdc)
}

/// The destination mint: DONE once its receipt succeeds.
fn track_mint(host: &dyn Host, chain: ChainRef, tx: &str) -> Result<TrackStatus, RailError> {
    Ok(match relay_rail_sdk::evm_read::receipt_status(host, chain, tx)? {
        None => track_status(
            TrackState::Bridging,
            Some("SENDING"),
            None,
            "mint sent; waiting for its receipt",
        ),
        Some(true) => track_status(
            TrackState::Done,
            Some("COMPLETED"),
            Some(tx.to_string()),
            "minted on the destination",
        ),
        Some(false) => track_status(
            TrackState::Failed,
            None,
            None,
            format!("receiveMessage {tx} reverted on {chain} (already received, or a bad attestation)"),
        ),
    })
}

fn is_tx_hash(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}
