//! The native-bitcoin rail: swaps between EVM stablecoins and BTC on
//! Chainflip, through deposit channels ([`chainflip`] follows the Chainflip
//! SDK 1.x "Swap API v2" and the Broker API).
//!
//! - EVM → bitcoin (USDC from the operator's two EVM chains): a Chainflip
//!   vault swap — the broker encodes the Vault call
//!   (`broker_request_swap_parameter_encoding`), the plan is Permit2 pull →
//!   approve the Vault for the USDC → the Vault call → await Chainflip, and
//!   the swap is tracked by that transaction's hash. A vault swap rather than
//!   an EVM deposit channel: nothing to fund but the relayer's own call, and
//!   the swap id is the relayer's transaction. Funds-gated: when the
//!   operator moves its own funds (`mode: self`), the relayer's USDC balance
//!   is read on chain and a shortfall is `FUNDS_REQUIRED`.
//! - bitcoin → EVM: the plan is one `DepositInstruction` (node bitcoin, the
//!   channel's address, BTC, the amount in sats) — the host reports
//!   `AWAITING_DEPOSIT`, the user sends the BTC; the relayer signs no
//!   bitcoin spend.
//!
//! `track` reads the channel's swap status and maps Chainflip's states
//! (WAITING, RECEIVING, SWAPPING, SENDING, SENT, COMPLETED, FAILED) onto
//! route states and the spec's stages. Quotes carry the spec's non-EVM rail
//! object (§2.6): egress amount and fee list.
//!
//! Operator configuration (`[rails.btc]`): `base_url` (default
//! `https://chainflip-swap.chainflip.io`), `credential`, `broker_url`
//! (required to execute), `broker_credential`, `usdc_btc_chains` (default
//! `1,42161`), `bitcoin_network` (`mainnet`), `retry_duration_blocks`
//! (150), `refund_address.bitcoin` (when the sender gives none).
//!
//! Never: sign, hold keys, or touch a bitcoin key — there is none.

pub mod chainflip;
pub mod lanes;
mod track;

use relay_plugin_api::{
    Amount, ExecutionPlan, Fee, FeeKind, GasEstimate, Host, NonEvmNode, PrepareRequest,
    QuoteRequest, Rail, RailError, RailErrorKind, RailHealth, RailManifest, RailQuote, RailRole,
    SourceMode, TrackRequest, TrackStatus,
};
use relay_rail_sdk::{
    evm_plan,
    evm_read::erc20_balance,
    health::{probe_documented, ProbeShapes},
    lane::is_evm_address,
    non_evm::is_bitcoin,
    plan::PlanBuilder,
    QUOTE_TTL_MS,
};
use serde::{Deserialize, Serialize};

use chainflip::{Asset, IncludedFee, Priced, SwapAsk, BROKER, CHAINFLIP};
use lanes::Swap;

/// Rail id.
pub const ID: &str = "btc";
/// Gas of the source leg (approve + Vault swap), for quotes.
const SOURCE_GAS: u64 = 60_000 + 120_000;
/// A deposit channel lives 24 h.
const CHANNEL_TTL_MS: u64 = 24 * 3_600_000;

/// The native-bitcoin rail.
#[derive(Debug, Default, Clone)]
pub struct Btc;

/// The non-EVM rail object a quote carries in `detail` (spec §2.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailObject {
    /// `bitcoin`.
    pub node: String,
    /// Lane name.
    pub direction: String,
    /// `chainflip`.
    pub upstream: String,
    /// Source asset.
    pub src_asset: Asset,
    /// Destination asset.
    pub dest_asset: Asset,
    /// What arrives, destination smallest units.
    pub egress_amount: Amount,
    /// Chainflip's included fees.
    pub fees: Vec<IncludedFee>,
    /// Chainflip's recommended slippage, percent.
    pub recommended_slippage_percent: Option<serde_json::Value>,
}

impl Rail for Btc {
    fn manifest(&self) -> RailManifest {
        RailManifest {
            id: ID.into(),
            name: "Native bitcoin (Chainflip)".into(),
            version: relay_plugin_api::Version::new(0, 1, 0),
            contract_version: relay_plugin_api::contract_version(),
            role: RailRole::NativeBitcoin,
            coverage: lanes::coverage(),
            egress: vec![
                "chainflip-swap.chainflip.io".into(),
                "chainflip-swap-perseverance.chainflip.io".into(),
            ],
            rpc_chains: lanes::CHAINFLIP_EVM
                .iter()
                .map(|(c, _)| relay_plugin_api::ChainRef::Evm(*c))
                .collect(),
            contracts: vec![],
            upstream: Some(
                "Chainflip SDK 1.x Swap API v2 (GET /v2/quote, GET /v2/swaps/{id}) and Broker API \
                 broker_request_swap_deposit_address"
                    .into(),
            ),
        }
    }

    fn quote(&self, host: &dyn Host, req: &QuoteRequest) -> Result<RailQuote, RailError> {
        priced_quote(host, req, &lanes::swap_of(host, req)?)
    }

    fn prepare(&self, host: &dyn Host, req: &PrepareRequest) -> Result<ExecutionPlan, RailError> {
        if req.quote.rail != ID {
            return Err(RailError::invalid("quote", "not a btc quote"));
        }
        let o: RailObject = RailObject::deserialize(&*req.quote.detail)
            .map_err(|e| RailError::invalid("quote.detail", e))?;
        let swap = lanes::swap_between(
            host,
            &req.from_chain,
            &req.to_chain,
            &o.src_asset.asset,
            &o.dest_asset.asset,
        )?;
        lanes::check_recipient(host, &req.to_chain, &req.recipient)?;
        if swap.outbound() {
            outbound_plan(host, req, &swap)
        } else {
            inbound_plan(host, req, &swap)
        }
    }

    fn track(&self, host: &dyn Host, req: &TrackRequest) -> Result<TrackStatus, RailError> {
        track::track(host, req)
    }

    fn health(&self, host: &dyn Host) -> RailHealth {
        let names = [lanes::EVM_TO_BITCOIN, lanes::BITCOIN_TO_EVM];
        // A channel that cannot exist: Chainflip answers 404 quickly when up.
        let probe_req = CHAINFLIP.get(host, "/v2/swaps/0-Bitcoin-0", &[]);
        let shapes: ProbeShapes = &[&["state"], &["message"]];
        let mut h = probe_documented(host, &CHAINFLIP, probe_req, &names, shapes);
        let broker = chainflip::broker_url(host).is_ok();
        for l in &mut h.lanes {
            l.execute_ready &= broker;
        }
        if !broker {
            h.detail
                .get_or_insert_with(|| "no broker_url: quotes only".into());
        }
        h
    }
}

/// Asks Chainflip to price `swap` and writes the quote (with the rail object
/// in `detail`). The tron rail's Chainflip comparator lanes price with it too.
pub fn priced_quote(
    host: &dyn Host,
    req: &QuoteRequest,
    swap: &Swap,
) -> Result<RailQuote, RailError> {
    let vault = req.from_chain.is_evm();
    let http = chainflip::quote_request(host, &swap.src, &swap.dest, req.amount, vault);
    let body = chainflip::fetch(host, &CHAINFLIP, http)?;
    Ok(quote_from(
        host,
        req,
        swap,
        chainflip::parse_quote(&body, req.amount)?,
    ))
}

fn quote_from(host: &dyn Host, req: &QuoteRequest, swap: &Swap, p: Priced) -> RailQuote {
    let min_out = p
        .egress
        .bps(10_000u32.saturating_sub(req.slippage_bps.min(10_000)));
    let fees = p
        .fees
        .iter()
        .map(|f| Fee {
            kind: match f.kind.as_str() {
                "INGRESS" | "EGRESS" | "BOOST" => FeeKind::Bridge,
                _ => FeeKind::Protocol,
            },
            amount: f.amount,
            token: f.asset.clone(),
            included: true,
        })
        .collect();
    let object = RailObject {
        node: NonEvmNode::Bitcoin.as_str().into(),
        direction: swap.lane.into(),
        upstream: "chainflip".into(),
        src_asset: swap.src.clone(),
        dest_asset: swap.dest.clone(),
        egress_amount: p.egress,
        fees: p.fees,
        recommended_slippage_percent: p.recommended_slippage_percent,
    };
    RailQuote {
        rail: ID.into(),
        lane: swap.lane.into(),
        amount_in: req.amount,
        amount_out: p.egress,
        min_out,
        fees,
        gas: swap.outbound().then_some(GasEstimate {
            chain: req.from_chain,
            gas_units: SOURCE_GAS,
        }),
        duration_sec: p.duration_sec,
        quote_only_reason: None,
        upstream_ref: None,
        expires_at_ms: host.now_ms() + QUOTE_TTL_MS,
        detail: serde_json::to_value(&object).unwrap_or_default().into(),
    }
}

fn retry_duration(host: &dyn Host) -> u32 {
    host.config("retry_duration_blocks")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(150)
}

/// What the broker is asked for `req`: `refund` gets the source funds back
/// if the swap cannot fill at the quote's minimum.
fn ask<'a>(
    host: &dyn Host,
    req: &'a PrepareRequest,
    swap: &'a Swap,
    refund: &'a str,
) -> SwapAsk<'a> {
    SwapAsk {
        src: &swap.src,
        dest: &swap.dest,
        dest_address: &req.recipient,
        amount: req.quote.amount_in,
        min_out: req.quote.min_out,
        refund_address: refund,
        retry_duration: retry_duration(host),
    }
}

fn outbound_plan(
    host: &dyn Host,
    req: &PrepareRequest,
    swap: &Swap,
) -> Result<ExecutionPlan, RailError> {
    let token = req
        .from_token_address
        .clone()
        .filter(|t| is_evm_address(t))
        .ok_or_else(|| RailError::invalid("fromToken", "needs the USDC contract address"))?;
    let amount = req.quote.amount_in;
    if req.mode == SourceMode::Operator {
        let have = erc20_balance(host, req.from_chain, &token, &req.relayer)?;
        if have < amount {
            return Err(RailError::new(
                RailErrorKind::FundsRequired,
                format!(
                    "USDC→BTC is funds-gated: the relayer holds {have} USDC units on {}, {amount} needed",
                    req.from_chain
                ),
            ));
        }
    }
    let http = chainflip::vault_swap_request(host, &ask(host, req, swap, &req.relayer))?;
    let vault = chainflip::parse_vault_swap(&chainflip::fetch(host, &BROKER, http)?)?;
    if vault
        .source_token
        .as_deref()
        .is_some_and(|t| !t.eq_ignore_ascii_case(&token))
    {
        return Err(BROKER.malformed("the vault swap pulls another token than the quoted USDC"));
    }
    let track_ref = format!("chainflip-vault-swap:{}", swap.src.chain);
    evm_plan(req, vault.call, None, track_ref)
}

fn inbound_plan(
    host: &dyn Host,
    req: &PrepareRequest,
    swap: &Swap,
) -> Result<ExecutionPlan, RailError> {
    let net = lanes::network(host);
    let refund = if is_bitcoin(&req.sender, net) {
        req.sender.clone()
    } else {
        host.config("refund_address.bitcoin")
            .map(|a| a.trim().to_string())
            .filter(|a| is_bitcoin(a, net))
            .ok_or_else(|| {
                RailError::invalid(
                    "fromAddress",
                    "bitcoin→EVM needs the sender's bitcoin address for refunds (or refund_address.bitcoin)",
                )
            })?
    };
    let http = chainflip::channel_request(host, &ask(host, req, swap, &refund))?;
    let channel =
        chainflip::parse_channel(&chainflip::fetch(host, &BROKER, http)?, &swap.src.chain)?;
    Ok(PlanBuilder::new(req)
        .deposit_instruction(
            channel.deposit_address,
            "BTC",
            Some(host.now_ms() + CHANNEL_TTL_MS),
        )
        .await_upstream(channel.id.clone())
        .track_ref(channel.id)
        .build())
}
