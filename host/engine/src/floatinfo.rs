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
use relay_config::{HostConfig, TokenConfig};
use relay_plugin_api::{Amount, ChainRef, QuoteRequest, RailRole, Token};
use relay_registry::OperatorState;
use relay_runtime::{rails::RailSnapshot, LoadedRail};
use serde_json::{json, Map, Value};
use std::{collections::BTreeMap, sync::Arc, time::Duration};

/// The pricing tiers (spec §2.6 `pricing.mode`, §8.2), in the order the
/// float lane tries them. Thresholds are the spec's; an operator may tune
/// them through the rail's own `pricing.*` config.
pub fn tiers() -> Value {
    json!([
        {"mode": "free-micro-vip", "who": "members", "when": "micro transfer (0.10 to 25 USD) to a low-cost destination", "fee": "0"},
        {"mode": "micro-standard", "who": "everyone else", "when": "micro transfer (0.10 to 25 USD) to a low-cost destination", "fee": "payout cost plus a margin, never above 8 bps of the amount"},
        {"mode": "rebalancing-discount", "who": "anyone", "when": "the transfer moves float to where it is short", "fee": "a discounted rate"},
        {"mode": "base", "who": "anyone", "when": "everything else", "fee": "the base rate"},
    ])
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
async fn probe(rail: &LoadedRail, cell: &Cell, member: bool, deadline: Duration) -> Value {
    let Some((src, src_token)) = &cell.source else {
        return json!({"error": "no other configured chain carries this asset to probe from"});
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
        Ok(Ok(q)) => json!({
            "mode": q.detail["pricing"]["mode"],
            "fee": q.detail["fee"],
            "capNow": q.detail["capNow"],
            "payoutCost": q.detail["payoutCost"],
            "from": src,
            "amount": amount.to_string(),
        }),
        Ok(Err(e)) => json!({"error": e.to_string()}),
        Err(_) => json!({"error": format!("no answer within {} ms", deadline.as_millis())}),
    }
}

async fn chain_cell(
    rail: &LoadedRail,
    cell: &Cell,
    reader: &ChainReader,
    relayer: Option<Address>,
    deadline: Duration,
) -> Value {
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
    let answered = [&standard, &member]
        .into_iter()
        .find(|p| p.get("error").is_none());
    json!({
        "token": cell.token.address,
        "decimals": cell.token.decimals,
        "float": float.as_ref().ok(),
        "floatError": float.as_ref().err(),
        "capNow": answered.map(|p| p["capNow"].clone()),
        "costFloor": answered.map(|p| p["payoutCost"].clone()),
        "tiersNow": {"standard": standard, "member": member},
    })
}

/// The float lane's live information.
pub async fn info(
    snap: &RailSnapshot,
    state: &OperatorState,
    config: &HostConfig,
    reader: &ChainReader,
) -> Value {
    let rail: Option<Arc<LoadedRail>> = snap
        .active()
        .find(|r| r.manifest().role == RailRole::FloatLane)
        .cloned();
    let vip =
        json!({"registry": config.vip.registry, "memberFee": "0 on free-micro-vip transfers"});
    let Some(rail) = rail else {
        return json!({"available": false, "rail": null, "tiers": tiers(), "chains": {}, "vip": vip,
            "note": "no float-lane rail is loaded on this host"});
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
    let mut chains: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    for (cell, answer) in cells.iter().zip(answers) {
        chains
            .entry(cell.chain)
            .or_default()
            .insert(cell.asset.clone(), answer);
    }
    let chains: Map<String, Value> = chains
        .into_iter()
        .map(|(id, assets)| {
            (
                id.to_string(),
                json!({"name": config.chain_name(id), "assets": assets}),
            )
        })
        .collect();
    let m = rail.manifest();
    json!({
        "available": enabled,
        "rail": {"id": m.id, "name": m.name, "version": m.version.to_string(), "enabled": enabled},
        "relayer": config.relayer,
        "tiers": tiers(),
        "chains": chains,
        "vip": vip,
        "note": "per chain and asset: the relayer's float (read on chain), capNow (25% of that float) and costFloor (the destination payout cost every fee is floored at), from live one-token probe quotes of the float-lane rail at the standard and member tiers (tiersNow); amounts in the token's smallest units",
    })
}
