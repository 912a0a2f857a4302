//! The quote and compare answers as clients see them (spec §2.6 Quote,
//! §2.9 CompareResult): typed views over a ranked [`QuoteOutcome`]. The
//! HTTP API, the MCP endpoint and any other adapter serialise these; none
//! assembles the JSON itself.

use alloy::primitives::U256;
use relay_plugin_api::{Amount, ChainRef, Fee, RailRole, Token};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::{
    attest::Attestation,
    compare,
    oracle::PriceBook,
    quote::{Priced, QuoteOutcome, RailResult},
    route::RouteAsk,
};
use relay_config::QuoteConfig;

/// The source side of a quote.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FromSide {
    /// Source node.
    #[schema(value_type = relay_wire::Node)]
    pub chain: ChainRef,
    /// Token symbol.
    pub token: String,
    /// Token contract, when not native.
    pub token_address: Option<String>,
    /// Token decimals.
    pub decimals: u8,
    /// Amount, smallest units.
    #[schema(value_type = String)]
    pub amount: Amount,
    /// `amount` in USD by the host's price book (on-chain feeds, then the
    /// configured prices), two decimals, rounded down; absent when the
    /// token has no price. For reading only: every amount the host acts on
    /// is the token amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount_usd: Option<String>,
}

/// The destination side of a quote.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToSide {
    /// Destination node.
    #[schema(value_type = relay_wire::Node)]
    pub chain: ChainRef,
    /// Token symbol.
    pub token: String,
    /// Token contract, when not native.
    pub token_address: Option<String>,
    /// Token decimals.
    pub decimals: u8,
    /// Expected delivery after every fee, smallest units.
    #[schema(value_type = String)]
    pub estimated: Amount,
    /// Guaranteed minimum delivery.
    #[schema(value_type = String)]
    pub min: Amount,
    /// Recipient, when known.
    pub recipient: Option<String>,
    /// `estimated` in USD, as `from.amountUsd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_usd: Option<String>,
    /// `min` in USD, as `from.amountUsd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_usd: Option<String>,
}

/// The route fee.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct RouteFee {
    /// Basis points.
    pub bps: u32,
    /// Source units.
    #[schema(value_type = String)]
    pub amount: Amount,
    /// Source token.
    pub token: String,
    /// Converted to destination units and deducted.
    #[schema(value_type = String)]
    pub deducted: Amount,
}

/// Gas spent on one chain.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GasSpent {
    /// Chain id.
    pub chain: u64,
    /// Gas units.
    pub units: u64,
    /// Gas price, wei.
    pub gas_price_wei: String,
}

/// Relayer gas with markup, charged in the destination token.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GasFee {
    /// Destination units.
    #[schema(value_type = String)]
    pub amount: Amount,
    /// Destination token.
    pub token: String,
    /// Markup, bps.
    pub markup_bps: u32,
    /// What was spent per chain.
    pub spent: Vec<GasSpent>,
}

/// Every fee of one answer.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fees {
    /// The route fee.
    pub route: RouteFee,
    /// Relayer gas.
    pub gas: GasFee,
    /// The rail's own fees (`{kind, amount, token, included}`).
    #[schema(value_type = Vec<Object>)]
    pub rail: Vec<Fee>,
    /// Rail fees not already in the rail's output, destination units.
    #[schema(value_type = String)]
    pub rail_not_included: Amount,
    /// Everything deducted, destination units.
    #[schema(value_type = String)]
    pub total: Amount,
}

impl Fees {
    /// The itemised fees of `p`.
    pub fn of(o: &QuoteOutcome, p: &Priced) -> Self {
        Fees {
            route: RouteFee {
                bps: o.tier.route_fee_bps,
                amount: p.route_fee,
                token: o.ask.from_token.symbol.clone(),
                deducted: p.deductions.route_fee,
            },
            gas: GasFee {
                amount: p.gas.fee,
                token: o.ask.to_token.symbol.clone(),
                markup_bps: p.gas.markup_bps,
                spent: p
                    .gas
                    .chains
                    .iter()
                    .map(|(chain, (units, price))| GasSpent {
                        chain: *chain,
                        units: *units,
                        gas_price_wei: price.to_string(),
                    })
                    .collect(),
            },
            rail: p.quote.fees.clone(),
            rail_not_included: p.deductions.rail_fees,
            total: p.deductions.total(),
        }
    }
}

/// One rail's entry in a quote's `compared[]` and a comparison's
/// `quotes[]`. A rail that did not answer is `ok:false` with why — never
/// ranked as beaten.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RailEntry {
    /// Rail id.
    pub rail: String,
    /// Whether it answered with a viable price.
    pub ok: bool,
    /// Its lane.
    pub lane: String,
    /// 1-based rank among the answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// Whether it is the winner.
    pub best: bool,
    /// The rail's own output.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub amount_out: Option<Amount>,
    /// Net delivery after every fee (null when it did not answer).
    #[schema(value_type = Option<String>)]
    pub est_out: Option<Amount>,
    /// Guaranteed minimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub min_out: Option<Amount>,
    /// Expected duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_sec: Option<u32>,
    /// The same, as compare names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_seconds: Option<u32>,
    /// Itemised fees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fees: Option<Fees>,
    /// Why it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A stable reason code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// `false` when it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered: Option<bool>,
    /// Priced but never executed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_only: Option<bool>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_only_reason: Option<String>,
    /// Compare: effective fee, percent of the input's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_fee_pct: Option<Option<f64>>,
    /// Compare: 0–100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality_score: Option<u8>,
    /// When the rail's answer was quoted, epoch ms (absent when it did not
    /// answer): at most the quote book's staleness bound (12 s) ago.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoted_at: Option<u64>,
    /// Whether the answer (or the silence) came from the quote book rather
    /// than a live call made for this request.
    #[serde(default)]
    pub cached: bool,
}

impl RailEntry {
    /// The entry of `r` at `rank` (0-based) in `o`.
    pub fn of(o: &QuoteOutcome, r: &RailResult, rank: usize) -> Self {
        let (ok, p) = match &r.outcome {
            Ok(p) => (true, Some(p)),
            Err(_) => (false, None),
        };
        let silence = r.outcome.as_ref().err();
        RailEntry {
            rail: r.rail.clone(),
            ok,
            lane: r.lane.clone(),
            rank: ok.then_some(rank + 1),
            best: rank == 0 && ok,
            amount_out: p.map(|p| p.quote.amount_out),
            est_out: p.map(|p| p.net.estimated),
            min_out: p.map(|p| p.net.min),
            duration_sec: p.map(|p| p.quote.duration_sec),
            eta_seconds: p.map(|p| p.quote.duration_sec),
            fees: p.map(|p| Fees::of(o, p)),
            error: silence.map(ToString::to_string),
            error_kind: silence.map(|e| e.code()),
            answered: (!ok).then_some(false),
            quote_only: r.quote_only.as_ref().map(|_| true),
            quote_only_reason: r.quote_only.clone(),
            effective_fee_pct: None,
            quality_score: None,
            quoted_at: r.quoted_at_ms.filter(|_| ok),
            cached: r.cached,
        }
    }
}

/// `POST /api/route/quote` (spec §2.6).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quote {
    /// Whether the caller holds no gas (an EVM source).
    pub gasless: bool,
    /// Source side.
    pub from: FromSide,
    /// Destination side.
    pub to: ToSide,
    /// The winning rail.
    pub bridge: String,
    /// Its lane.
    pub lane: String,
    /// The winner and its upstream.
    pub via: Vec<String>,
    /// How many rails answered.
    pub best_of: usize,
    /// Every applicable rail, ranked.
    pub compared: Vec<RailEntry>,
    /// Expected duration of the winner.
    pub duration_sec: u32,
    /// Route fee, bps.
    pub relay_route_fee_bps: u32,
    /// Route fee, source units.
    #[schema(value_type = String)]
    pub relay_route_fee: Amount,
    /// The winner's itemised fees.
    pub fees: Fees,
    /// Whether the sender is a member.
    pub member: bool,
    /// How it was chosen.
    pub note: String,
    /// The signed price lock (`{scheme, hash, root, proof, signer, signature,
    /// expiresAt, terms}`; [`crate::attest`]).
    #[schema(value_type = Object)]
    pub attestation: Attestation,
    /// When the attestation expires, epoch ms.
    pub expires_at: u64,
    /// The winner only quotes this lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_only: Option<bool>,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote_only_reason: Option<String>,
    /// The float lane's own block, when it can serve the pair (the rail's
    /// detail, shared).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Value>)]
    pub floatlane: Option<std::sync::Arc<Value>>,
    /// A non-EVM leg's rail block (the rail's detail, its id and lane).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub rail: Option<Value>,
    /// With `fromAddress` on a chain with a `RelayRouter`: the prepared
    /// one-signature intent (`POST /api/route/intent`'s answer: the typed
    /// data of every form and the execute body to POST).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub intent: Option<Value>,
    /// Why the quote carries no `intent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent_note: Option<String>,
}

fn from_side(ask: &RouteAsk) -> FromSide {
    let t: &Token = &ask.from_token;
    FromSide {
        chain: ask.from_chain,
        token: t.symbol.clone(),
        token_address: t.address.clone(),
        decimals: t.decimals,
        amount: ask.amount,
        amount_usd: None,
    }
}

fn to_side(ask: &RouteAsk, p: &Priced) -> ToSide {
    let t: &Token = &ask.to_token;
    ToSide {
        chain: ask.to_chain,
        token: t.symbol.clone(),
        token_address: t.address.clone(),
        decimals: t.decimals,
        estimated: p.net.estimated,
        min: p.net.min,
        recipient: ask.recipient.clone(),
        estimated_usd: None,
        min_usd: None,
    }
}

/// `amount` of a token of `decimals` priced `usd_e6` micro-USD a whole
/// token, as USD with two decimals (rounded down).
pub fn usd(amount: Amount, decimals: u8, usd_e6: u64) -> Option<String> {
    let scale = U256::from(10u64).checked_pow(U256::from(decimals))?;
    let cents = amount.mul_div(U256::from(usd_e6), scale)?.0 / U256::from(10_000u64);
    let (whole, rest) = (cents / U256::from(100u64), cents % U256::from(100u64));
    Some(format!("{whole}.{:02}", rest.to::<u64>()))
}

impl Quote {
    /// Puts USD values beside the amounts, by `book` (`ask`'s tokens).
    pub fn with_usd(&mut self, book: &PriceBook, ask: &RouteAsk) {
        let price = |chain, token: &Token| book.token_usd_e6(chain, token).ok();
        if let Some(p) = price(ask.from_chain, &ask.from_token) {
            self.from.amount_usd = usd(self.from.amount, self.from.decimals, p);
        }
        if let Some(p) = price(ask.to_chain, &ask.to_token) {
            self.to.estimated_usd = usd(self.to.estimated, self.to.decimals, p);
            self.to.min_usd = usd(self.to.min, self.to.decimals, p);
        }
    }

    /// The answer for the winner `winner` of `o`, locked by `attestation`.
    pub fn of(o: &QuoteOutcome, winner: &RailResult, p: &Priced, attestation: Attestation) -> Self {
        let ask = &o.ask;
        let mut via = vec![winner.rail.clone()];
        via.extend(winner.upstream.iter().cloned());
        let float = o.results.iter().find(|r| r.role == RailRole::FloatLane);
        let rail = (!(ask.from_chain.is_evm() && ask.to_chain.is_evm())).then(|| {
            let mut rail = (*p.quote.detail).clone();
            if !rail.is_object() {
                rail = Value::Object(Default::default());
            }
            rail["id"] = winner.rail.clone().into();
            rail["lane"] = winner.lane.clone().into();
            rail
        });
        Quote {
            gasless: ask.from_chain.is_evm(),
            from: from_side(ask),
            to: to_side(ask, p),
            bridge: winner.rail.clone(),
            lane: winner.lane.clone(),
            via,
            best_of: o.answered(),
            compared: o
                .results
                .iter()
                .enumerate()
                .map(|(i, r)| RailEntry::of(o, r, i))
                .collect(),
            duration_sec: p.quote.duration_sec,
            relay_route_fee_bps: o.tier.route_fee_bps,
            relay_route_fee: p.route_fee,
            fees: Fees::of(o, p),
            member: o.membership.member,
            note: note(o),
            expires_at: attestation.expires_at,
            attestation,
            quote_only: winner.quote_only.as_ref().map(|_| true),
            quote_only_reason: winner.quote_only.clone(),
            floatlane: float
                .and_then(|r| r.outcome.as_ref().ok())
                .map(|fp| fp.quote.detail.clone()),
            rail,
            intent: None,
            intent_note: None,
        }
    }
}

fn note(o: &QuoteOutcome) -> String {
    let silent = o.results.len() - o.answered();
    let tier = if o.membership.member {
        "member tier"
    } else {
        "standard tier"
    };
    let mut n = format!(
        "best of {} answering rail(s) by net output after every fee ({tier}: route fee {} bps, gas at cost +{} %)",
        o.answered(),
        o.tier.route_fee_bps,
        o.tier.gas_markup_bps / 100
    );
    if silent > 0 {
        n.push_str(&format!(
            "; {silent} rail(s) did not answer and are listed with ok:false"
        ));
    }
    if !o.membership.unread.is_empty() {
        n.push_str("; some membership collections could not be read");
    }
    n
}

/// `lane` of a comparison.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompareLane {
    /// Source node.
    #[schema(value_type = relay_wire::Node)]
    pub from_chain: ChainRef,
    /// Destination node.
    #[schema(value_type = relay_wire::Node)]
    pub to_chain: ChainRef,
    /// Source token.
    pub from_token: String,
    /// Destination token.
    pub to_token: String,
    /// Amount.
    #[schema(value_type = String)]
    pub amount: Amount,
    /// Every rail asked.
    pub applicable_rails: Vec<String>,
    /// Unit of `estOut`.
    pub est_out_unit: String,
    /// Its decimals.
    pub est_out_decimals: u8,
}

/// The compare guard.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardView {
    /// Whether the best effective fee is within the threshold.
    pub ok: bool,
    /// The best effective fee, percent.
    pub effective_fee_pct: Option<f64>,
    /// The threshold, percent.
    pub threshold_pct: u32,
    /// The smallest input that meets it.
    #[schema(value_type = Option<String>)]
    pub recommended_min_input: Option<Amount>,
}

/// `GET`/`POST /api/route/compare` (spec §2.9).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompareResult {
    /// The lane.
    pub lane: CompareLane,
    /// Every applicable rail, ranked; non-answering rails `ok:false`.
    pub quotes: Vec<RailEntry>,
    /// The winner.
    pub best: Option<String>,
    /// Rails that answered.
    pub compared_rails: usize,
    /// Rails asked.
    pub rails_attempted: usize,
    /// The fee guard.
    pub guard: GuardView,
    /// Whether the sender is a member.
    pub member: bool,
    /// Whether this answer came from the 12 s cache.
    pub cached: bool,
}

impl CompareResult {
    /// The comparison of `o` (answered fresh: `cached` false).
    pub fn of(cfg: &QuoteConfig, ask: &RouteAsk, o: &QuoteOutcome) -> Self {
        let threshold_ppm = u64::from(cfg.guard_threshold_pct) * 10_000;
        let best = o.best();
        let best_net = best.map(|(_, p)| p.net.estimated).unwrap_or_default();
        let quotes = o
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut e = RailEntry::of(o, r, i);
                let (fee, score) = match &r.outcome {
                    Ok(p) => {
                        let fee = compare::effective_fee_ppm(cfg, ask, p.net.estimated);
                        let d = p.quote.duration_sec;
                        let score = compare::quality_score(
                            p.net.estimated,
                            best_net,
                            fee,
                            threshold_ppm,
                            d,
                        );
                        (fee, score)
                    }
                    Err(_) => (None, 0),
                };
                e.effective_fee_pct = Some(fee.map(compare::ppm_to_pct));
                e.quality_score = Some(score);
                e
            })
            .collect();
        let best_fee =
            best.and_then(|(_, p)| compare::effective_fee_ppm(cfg, ask, p.net.estimated));
        let guard = compare::guard(
            ask.amount,
            best_fee,
            o.tier.route_fee_bps,
            cfg.guard_threshold_pct,
        );
        CompareResult {
            lane: CompareLane {
                from_chain: ask.from_chain,
                to_chain: ask.to_chain,
                from_token: ask.from_token.symbol.clone(),
                to_token: ask.to_token.symbol.clone(),
                amount: ask.amount,
                applicable_rails: o.results.iter().map(|r| r.rail.clone()).collect(),
                est_out_unit: ask.to_token.symbol.clone(),
                est_out_decimals: ask.to_token.decimals,
            },
            quotes,
            best: best.map(|(r, _)| r.rail.clone()),
            compared_rails: o.answered(),
            rails_attempted: o.results.len(),
            guard: GuardView {
                ok: guard.ok,
                effective_fee_pct: guard.effective_fee_ppm.map(compare::ppm_to_pct),
                threshold_pct: guard.threshold_pct,
                recommended_min_input: guard.recommended_min_input,
            },
            member: o.membership.member,
            cached: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_values_have_two_decimals_rounded_down() {
        // 4.995 USDC at par, 0.5 ETH at 2,000.123456 USD, 1 sat at 100,000 USD
        assert_eq!(
            usd(Amount::from_u128(4_995_000), 6, 1_000_000).as_deref(),
            Some("4.99")
        );
        let half_eth = Amount::from_u128(500_000_000_000_000_000);
        assert_eq!(usd(half_eth, 18, 2_000_123_456).as_deref(), Some("1000.06"));
        assert_eq!(
            usd(Amount::from_u128(1), 8, 100_000_000_000).as_deref(),
            Some("0.00")
        );
        assert_eq!(
            usd(Amount::from_u128(5), 0, 1_000_000).as_deref(),
            Some("5.00")
        );
    }
}
