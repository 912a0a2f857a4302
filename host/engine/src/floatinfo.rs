//! The float lane as clients see it (spec §4.1 `GET /api/floatlane/info`,
//! §2.6 `floatlane`, §8.2): its pricing tiers, what each destination chain
//! costs and holds right now, and the recognised membership collections.
//!
//! The engine never names a rail: the float lane is whichever loaded rail
//! declares [`RailRole::FloatLane`]. Its pricing parameters are the rail's
//! own, so nothing here recomputes them; instead, per destination chain and
//! asset, the rail is asked for a live **probe** quote of one whole token
//! (1 USD for a stablecoin, inside the micro range) from another configured
//! chain, once at the standard tier and once at the member tier. Its answer
//! (the spec's `floatlane` block) gives the tier each gets now (`mode`),
//! the `fee`, `capNow` (25 % of destination float) and `payoutCost`, the
//! destination's payout cost that every fee is floored at: the chain's
//! **cost floor**. The relayer's float on each chain is read from the chain
//! itself ([`ChainReader::token_balance`]). A probe or read that fails is
//! reported as `null` with the reason, never guessed.

use alloy::primitives::Address;
use relay_chain::reader::ChainReader;
use relay_config::{HostConfig, TokenConfig, VipCollection};
use relay_plugin_api::{Amount, ChainRef, QuoteRequest, RailRole, Token};
use relay_registry::OperatorState;
use relay_runtime::{rails::RailSnapshot, LoadedRail};
use serde::Serialize;
use serde_json::Value;
use std::{collections::BTreeMap, sync::Arc, time::Duration};
use utoipa::ToSchema;

/// One pricing tier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Tier {
    /// `pricing.mode`.
    pub mode: &'static str,
    /// Who gets it.
    pub who: &'static str,
    /// When.
    pub when: &'static str,
    /// What it costs.
    pub fee: &'static str,
}

/// The pricing tiers (spec §2.6 `pricing.mode`, §8.2), in the order the
/// float lane tries them. Thresholds are the spec's; an operator may tune
/// them through the rail's own `pricing.*` config.
pub fn tiers() -> Vec<Tier> {
    const MICRO: &str = "micro transfer (0.10 to 25 USD) to a low-cost destination";
    let t = |mode, who, when, fee| Tier {
        mode,
        who,
        when,
        fee,
    };
    vec![
        t("free-micro-vip", "members", MICRO, "0"),
        t(
            "micro-standard",
            "everyone else",
            MICRO,
            "payout cost plus a margin, never above 8 bps of the amount",
        ),
        t(
            "rebalancing-discount",
            "anyone",
            "the transfer moves float to where it is short",
            "a discounted rate",
        ),
        t("base", "anyone", "everything else", "the base rate"),
    ]
}

/// A live probe quote of one whole token at one tier, or why there is none.
/// The figures are the float-lane rail's own `floatlane` block.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Probe {
    /// The rail answered.
    #[serde(rename_all = "camelCase")]
    Answer {
        /// `pricing.mode` it would get.
        mode: Value,
        /// Its fee.
        fee: Value,
        /// 25 % of destination float.
        cap_now: Value,
        /// The destination payout cost.
        payout_cost: Value,
        /// Probed from this chain.
        from: u64,
        /// The probe amount.
        amount: String,
    },
    /// It did not.
    Error {
        /// Why.
        error: String,
    },
}

/// The member and standard probes of one cell.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TiersNow {
    /// At the standard tier.
    pub standard: Probe,
    /// At the member tier.
    pub member: Probe,
}

/// One destination chain and asset.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FloatCell {
    /// Token contract.
    pub token: String,
    /// Decimals.
    pub decimals: u8,
    /// The relayer's float, read on chain.
    pub float: Option<String>,
    /// Why the read failed.
    pub float_error: Option<String>,
    /// 25 % of the float.
    pub cap_now: Option<Value>,
    /// The destination payout cost every fee is floored at.
    pub cost_floor: Option<Value>,
    /// Live probes.
    pub tiers_now: TiersNow,
}

/// One destination chain.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FloatChain {
    /// Chain name.
    pub name: String,
    /// Per asset.
    pub assets: BTreeMap<String, FloatCell>,
}

/// The float-lane rail.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FloatRail {
    /// Rail id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Whether the operator enabled it.
    pub enabled: bool,
}

/// Recognised membership collections.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Vip {
    /// The collections (`{chain, address, name}`).
    #[schema(value_type = Vec<Object>)]
    pub registry: Vec<VipCollection>,
    /// What members pay.
    pub member_fee: String,
}

/// `GET /api/floatlane/info`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct FloatLaneInfo {
    /// Whether a float-lane rail is loaded and enabled.
    pub available: bool,
    /// The rail.
    pub rail: Option<FloatRail>,
    /// The relayer.
    pub relayer: Option<String>,
    /// Pricing tiers.
    pub tiers: Vec<Tier>,
    /// Per destination chain id.
    pub chains: BTreeMap<String, FloatChain>,
    /// Membership.
    pub vip: Vip,
    /// How to read it.
    pub note: String,
}

/// One destination chain and asset the float lane pays out.
#[derive(Clone, Debug)]
struct Cell {
    chain: u64,
    asset: String,
    token: TokenConfig,
    /// Another configured chain carrying the asset, to probe from.
    source: Option<(u64, TokenConfig)>,
}

fn token_on(config: &HostConfig, chain: u64, asset: &str) -> Option<TokenConfig> {
    config
        .chains
        .get(&chain.to_string())?
        .tokens
        .get(asset)
        .cloned()
}

fn cells(rail: &LoadedRail, config: &HostConfig) -> Vec<Cell> {
    let mut out: BTreeMap<(u64, String), Cell> = BTreeMap::new();
    for lane in &rail.manifest().coverage {
        let from: Vec<u64> = lane.from.iter().filter_map(ChainRef::evm_id).collect();
        for chain in lane.to.iter().filter_map(ChainRef::evm_id) {
            for asset in &lane.assets {
                let Some(token) = token_on(config, chain, asset) else {
                    continue;
                };
                let source = from
                    .iter()
                    .filter(|s| **s != chain)
                    .find_map(|s| Some((*s, token_on(config, *s, asset)?)));
                out.entry((chain, asset.clone())).or_insert(Cell {
                    chain,
                    asset: asset.clone(),
                    token,
                    source,
                });
            }
        }
    }
    out.into_values().collect()
}

/// Asks the rail for a one-token quote into `cell` at one tier.
async fn probe(rail: &LoadedRail, cell: &Cell, member: bool, deadline: Duration) -> Probe {
    let Some((src, src_token)) = &cell.source else {
        return Probe::Error {
            error: "no other configured chain carries this asset to probe from".into(),
        };
    };
    let token = |t: &TokenConfig| Token {
        symbol: cell.asset.clone(),
        address: Some(t.address.clone()),
        decimals: t.decimals,
    };
    let amount = Amount::from_u128(10u128.pow(u32::from(src_token.decimals.min(30))));
    let req = QuoteRequest {
        from_chain: ChainRef::Evm(*src),
        to_chain: ChainRef::Evm(cell.chain),
        from_token: token(src_token),
        to_token: token(&cell.token),
        amount,
        from_address: None,
        to_address: None,
        slippage_bps: 0,
        member,
    };
    match tokio::time::timeout(deadline, rail.quote(req)).await {
        Ok(Ok(q)) => Probe::Answer {
            mode: q.detail["pricing"]["mode"].clone(),
            fee: q.detail["fee"].clone(),
            cap_now: q.detail["capNow"].clone(),
            payout_cost: q.detail["payoutCost"].clone(),
            from: *src,
            amount: amount.to_string(),
        },
        Ok(Err(e)) => Probe::Error {
            error: e.to_string(),
        },
        Err(_) => Probe::Error {
            error: format!("no answer within {} ms", deadline.as_millis()),
        },
    }
}

async fn chain_cell(
    rail: &LoadedRail,
    cell: &Cell,
    reader: &ChainReader,
    relayer: Option<Address>,
    deadline: Duration,
) -> FloatCell {
    let float = async {
        let relayer = relayer.ok_or_else(|| "no relayer configured".to_string())?;
        let token: Address = (cell.token.address.parse())
            .map_err(|_| format!("{}: not an address", cell.token.address))?;
        let read = tokio::time::timeout(deadline, reader.token_balance(cell.chain, token, relayer));
        match read.await {
            Ok(Ok(b)) => Ok(b.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("float read timed out".to_string()),
        }
    };
    let (float, standard, member) = tokio::join!(
        float,
        probe(rail, cell, false, deadline),
        probe(rail, cell, true, deadline)
    );
    let answered = [&standard, &member].into_iter().find_map(|p| match p {
        Probe::Answer {
            cap_now,
            payout_cost,
            ..
        } => Some((cap_now.clone(), payout_cost.clone())),
        Probe::Error { .. } => None,
    });
    FloatCell {
        token: cell.token.address.clone(),
        decimals: cell.token.decimals,
        float_error: float.as_ref().err().cloned(),
        float: float.ok(),
        cap_now: answered.as_ref().map(|a| a.0.clone()),
        cost_floor: answered.map(|a| a.1),
        tiers_now: TiersNow { standard, member },
    }
}

/// The float lane's live information.
pub async fn info(
    snap: &RailSnapshot,
    state: &OperatorState,
    config: &HostConfig,
    reader: &ChainReader,
) -> FloatLaneInfo {
    let rail: Option<Arc<LoadedRail>> = snap
        .active()
        .find(|r| r.manifest().role == RailRole::FloatLane)
        .cloned();
    let vip = Vip {
        registry: config.vip.registry.clone(),
        member_fee: "0 on free-micro-vip transfers".into(),
    };
    let Some(rail) = rail else {
        return FloatLaneInfo {
            available: false,
            rail: None,
            relayer: config.relayer.clone(),
            tiers: tiers(),
            chains: BTreeMap::new(),
            vip,
            note: "no float-lane rail is loaded on this host".into(),
        };
    };
    let enabled = state.rail_enabled(rail.id());
    let deadline = Duration::from_millis(config.quote.deadline_ms);
    let relayer = config.relayer.as_deref().and_then(|r| r.parse().ok());
    let cells = cells(&rail, config);
    let answers = futures::future::join_all(
        cells
            .iter()
            .map(|c| chain_cell(&rail, c, reader, relayer, deadline)),
    )
    .await;
    let mut chains: BTreeMap<u64, BTreeMap<String, FloatCell>> = BTreeMap::new();
    for (cell, answer) in cells.iter().zip(answers) {
        chains
            .entry(cell.chain)
            .or_default()
            .insert(cell.asset.clone(), answer);
    }
    let chains = chains
        .into_iter()
        .map(|(id, assets)| {
            let name = config.chain_name(id);
            (id.to_string(), FloatChain { name, assets })
        })
        .collect();
    let m = rail.manifest();
    FloatLaneInfo {
        available: enabled,
        rail: Some(FloatRail {
            id: m.id.clone(),
            name: m.name.clone(),
            version: m.version.to_string(),
            enabled,
        }),
        relayer: config.relayer.clone(),
        tiers: tiers(),
        chains,
        vip,
        note: "per chain and asset: the relayer's float (read on chain), capNow (25% of that float) and costFloor (the destination payout cost every fee is floored at), from live one-token probe quotes of the float-lane rail at the standard and member tiers (tiersNow); amounts in the token's smallest units".into(),
    }
}
