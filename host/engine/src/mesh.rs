//! The mesh as clients see it (spec §2.2 status, §2.3 route/chains), derived
//! from the loaded rails' coverage, the operator's switches and live health.

use super::health::HealthReport;
use relay_config::HostConfig;
use relay_plugin_api::{ChainRef, NonEvmNode, RailRole};
use relay_registry::OperatorState;
use relay_runtime::rails::RailSnapshot;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Everything the mesh is computed from.
pub struct MeshInputs<'a> {
    /// Installed rails.
    pub snap: &'a RailSnapshot,
    /// Operator switches.
    pub state: &'a OperatorState,
    /// Live health.
    pub health: &'a HealthReport,
    /// Host configuration.
    pub config: &'a HostConfig,
}

/// One usable lane of one rail, resolved against the configured chains.
#[derive(Clone, Debug)]
pub struct MeshLane {
    /// Rail id.
    pub rail: String,
    /// Lane name.
    pub lane: String,
    /// Sources.
    pub from: Vec<ChainRef>,
    /// Destinations.
    pub to: Vec<ChainRef>,
    /// Assets.
    pub assets: Vec<String>,
    /// Whether it can execute now (manifest ∩ operator ∩ health).
    pub execute_ready: bool,
    /// Whether it is priced but never executed.
    pub quote_only: bool,
    /// Whether its quotes answer (the rail's health probe).
    pub quote_ok: bool,
    /// Why not, when not.
    pub quote_error: Option<String>,
}

impl<'a> MeshInputs<'a> {
    fn node_usable(&self, c: &ChainRef) -> bool {
        match c {
            ChainRef::Evm(id) => self.config.chains.contains_key(&id.to_string()),
            ChainRef::NonEvm(_) => true,
        }
    }

    /// Lanes of enabled, healthy rails, restricted to configured chains.
    pub fn lanes(&self) -> Vec<MeshLane> {
        let mut out = Vec::new();
        for rail in self.snap.active() {
            let id = rail.id();
            if !self.state.rail_enabled(id) {
                continue;
            }
            let up = self.health.rail_up(id);
            for l in &rail.manifest().coverage {
                let lane_health = self
                    .health
                    .rails
                    .get(id)
                    .and_then(|h| h.lanes.iter().find(|x| x.lane == l.lane));
                let health_ready = lane_health.map(|x| x.execute_ready).unwrap_or(up);
                out.push(MeshLane {
                    rail: id.to_string(),
                    lane: l.lane.clone(),
                    from: l
                        .from
                        .iter()
                        .filter(|c| self.node_usable(c))
                        .copied()
                        .collect(),
                    to: l
                        .to
                        .iter()
                        .filter(|c| self.node_usable(c))
                        .copied()
                        .collect(),
                    assets: l.assets.clone(),
                    execute_ready: up
                        && health_ready
                        && self.state.lane_execute_ready(id, &l.lane, l.executable),
                    quote_only: !l.executable,
                    quote_ok: up && lane_health.is_none_or(|x| x.quote_ok),
                    quote_error: lane_health.and_then(|x| x.quote_error.clone()),
                });
            }
        }
        out
    }
}

fn directed_pairs(lanes: &[MeshLane]) -> BTreeSet<(ChainRef, ChainRef)> {
    let mut pairs = BTreeSet::new();
    for l in lanes {
        for f in &l.from {
            for t in &l.to {
                if f != t {
                    pairs.insert((*f, *t));
                }
            }
        }
    }
    pairs
}

/// The EVM chains in the mesh: configured and covered by some rail.
pub fn mesh_chains(lanes: &[MeshLane]) -> BTreeSet<u64> {
    lanes
        .iter()
        .flat_map(|l| l.from.iter().chain(l.to.iter()))
        .filter_map(|c| c.evm_id())
        .collect()
}

/// The non-EVM nodes some lane touches.
pub fn mesh_non_evm(lanes: &[MeshLane]) -> BTreeSet<NonEvmNode> {
    lanes
        .iter()
        .flat_map(|l| l.from.iter().chain(l.to.iter()))
        .filter_map(|c| match c {
            ChainRef::NonEvm(n) => Some(*n),
            ChainRef::Evm(_) => None,
        })
        .collect()
}

/// The number of directed node pairs some lane serves.
pub fn directed_route_count(lanes: &[MeshLane]) -> usize {
    directed_pairs(lanes).len()
}

/// `GET /api/route/chains`.
pub fn route_chains(i: &MeshInputs<'_>) -> Value {
    let lanes = i.lanes();
    let chains: Vec<u64> = mesh_chains(&lanes).into_iter().collect();
    let non_evm = non_evm_nodes(&lanes);
    let routable: Vec<&str> = non_evm
        .iter()
        .filter(|(_, v)| v["routable"] == json!(true))
        .map(|(k, _)| k.as_str())
        .collect();
    let rails: Map<String, Value> = i
        .snap
        .active()
        .filter(|r| i.state.rail_enabled(r.id()))
        .map(|r| (r.id().to_string(), rail_block(r.manifest(), &lanes)))
        .collect();
    let swaps: Vec<&MeshLane> = i
        .snap
        .active()
        .flat_map(|r| {
            r.manifest()
                .coverage
                .iter()
                .filter(|l| l.same_chain)
                .map(move |l| (r.id(), l))
        })
        .filter_map(|(id, l)| lanes.iter().find(|m| m.rail == id && m.lane == l.lane))
        .collect();
    json!({
        "nodes": chains.len() + routable.len(),
        "chains": chains,
        "routableNonEvm": routable,
        "directedRoutes": directed_route_count(&lanes),
        "relayer": i.config.relayer,
        "permit2": i.config.permit2,
        "engine": format!("best-of-N over {} loaded rails, ranked by net destination output after every fee, failover while no funds have moved", rails.len()),
        "rails": rails,
        "sameChainSwaps": {
            "quotable": !swaps.is_empty(),
            "executeReady": swaps.iter().any(|l| l.execute_ready),
            "settlementProven": false,
            "how": "fromChain equals toChain with different tokens, through the aggregator rails that cover same-chain swaps",
            "via": swaps.iter().map(|l| l.rail.clone()).collect::<BTreeSet<_>>(),
            "note": "same chain with the same token is refused",
        },
        "nonEvmNodes": non_evm,
        "comparatorQuoteOnly": quote_only_block(i, &lanes),
    })
}

fn rail_block(m: &relay_plugin_api::RailManifest, lanes: &[MeshLane]) -> Value {
    let mine: Vec<&MeshLane> = lanes.iter().filter(|l| l.rail == m.id).collect();
    let assets: BTreeSet<&str> = m
        .coverage
        .iter()
        .flat_map(|l| l.assets.iter().map(String::as_str))
        .collect();
    let scope: Vec<&str> = m.coverage.iter().map(|l| l.lane.as_str()).collect();
    let mut b = json!({
        "rail": m.id,
        "name": m.name,
        "role": m.role,
        "assets": assets,
        "scope": scope.join(", "),
        "executeReady": mine.iter().any(|l| l.execute_ready),
        "lanes": mine.iter().map(|l| json!({"lane": l.lane, "executeReady": l.execute_ready, "quoteOnly": l.quote_only})).collect::<Vec<_>>(),
    });
    if let Some(up) = &m.upstream {
        b["sources"] = json!([up]);
    }
    if m.role == RailRole::FloatLane {
        b["instant"] = json!(true);
        b["winsOn"] = json!("cheapest on same-asset stablecoin moves between chains with float");
    }
    if m.role == RailRole::QuoteOnly {
        b["note"] = json!("quote-only: priced and compared, never executed");
    }
    b
}

/// The native asset of a non-EVM node, preferred as its `asset` when a lane
/// carries it (bitcoin's lanes carry BTC; the stablecoin nodes' carry
/// USDC/USDT).
fn native_asset(node: NonEvmNode) -> &'static str {
    match node {
        NonEvmNode::Bitcoin => "BTC",
        NonEvmNode::Solana => "SOL",
        NonEvmNode::Stellar => "XLM",
        NonEvmNode::Tron => "TRX",
        NonEvmNode::Sui => "SUI",
    }
}

/// The lanes that touch `c`.
fn touching<'l>(lanes: &'l [MeshLane], c: &ChainRef) -> Vec<&'l MeshLane> {
    lanes
        .iter()
        .filter(|l| l.from.contains(c) || l.to.contains(c))
        .collect()
}

/// `evm-><node>` and `<node>->evm`, each true when an executable lane
/// serves it now; a direction no lane serves is `false`, not absent.
fn directions(node: NonEvmNode, touching: &[&MeshLane]) -> Map<String, Value> {
    let c = ChainRef::NonEvm(node);
    let n = node.as_str();
    let ready = |inbound: bool| {
        touching
            .iter()
            .any(|l| l.execute_ready && (if inbound { &l.to } else { &l.from }).contains(&c))
    };
    let mut m = Map::new();
    m.insert(format!("evm->{n}"), json!(ready(true)));
    m.insert(format!("{n}->evm"), json!(ready(false)));
    m
}

fn non_evm_node(node: NonEvmNode, touching: &[&MeshLane]) -> Value {
    let via: BTreeSet<&str> = touching.iter().map(|l| l.rail.as_str()).collect();
    let evm: BTreeSet<u64> = touching
        .iter()
        .flat_map(|l| l.from.iter().chain(l.to.iter()))
        .filter_map(|c| c.evm_id())
        .collect();
    let assets: BTreeSet<&str> = touching
        .iter()
        .flat_map(|l| l.assets.iter().map(String::as_str))
        .collect();
    let asset = Some(native_asset(node))
        .filter(|a| assets.contains(a))
        .or_else(|| assets.iter().next().copied());
    let quote_ok = touching.iter().any(|l| l.quote_ok);
    let quote_error = touching.iter().filter(|l| !l.quote_ok).find_map(|l| {
        l.quote_error
            .as_ref()
            .map(|e| format!("{} {}: {e}", l.rail, l.lane))
    });
    let all_quote_only = touching.iter().all(|l| l.quote_only);
    json!({
        "network": node.as_str(),
        "routable": quote_ok,
        "routableVia": via,
        "executeReady": touching.iter().any(|l| l.execute_ready),
        "quoteOnly": all_quote_only,
        "settlementProven": false,
        "asset": asset,
        "assets": assets,
        "evmNodes": evm,
        "daemon": "host",
        "quoteOk": quote_ok,
        "quoteError": quote_error,
        "executeDirections": directions(node, touching),
        "signers": if all_quote_only { json!([]) } else { json!(["relayer"]) },
        "bridge": touching.iter().find(|l| !l.quote_only).map(|l| l.rail.as_str()),
        "note": if all_quote_only { "quote-only: no signer" } else { "" },
    })
}

fn non_evm_nodes(lanes: &[MeshLane]) -> BTreeMap<String, Value> {
    mesh_non_evm(lanes)
        .into_iter()
        .map(|node| {
            let t = touching(lanes, &ChainRef::NonEvm(node));
            (node.as_str().to_string(), non_evm_node(node, &t))
        })
        .collect()
}

fn lane_json(l: &MeshLane) -> Value {
    json!({
        "rail": l.rail,
        "lane": l.lane,
        "assets": l.assets,
        "executeReady": l.execute_ready,
        "quoteOnly": l.quote_only,
    })
}

/// Spec §2.3 `comparatorQuoteOnly`, derived from the lanes: EVM chains only
/// quote-only lanes reach; the native-bitcoin asset lanes (executable or
/// not); the sui lanes; the quote-only lanes of the rails that price tron.
fn quote_only_block(i: &MeshInputs<'_>, lanes: &[MeshLane]) -> Value {
    let executable_chains = mesh_chains(
        &lanes
            .iter()
            .filter(|l| !l.quote_only)
            .cloned()
            .collect::<Vec<_>>(),
    );
    let extra: Vec<Value> = lanes
        .iter()
        .filter(|l| l.quote_only)
        .flat_map(|l| {
            l.from
                .iter()
                .chain(l.to.iter())
                .filter_map(|c| c.evm_id())
                .map(move |id| (id, l.rail.as_str()))
        })
        .filter(|(id, _)| !executable_chains.contains(id))
        .collect::<BTreeMap<u64, &str>>()
        .into_iter()
        .map(|(id, rail)| json!({"chainId": id, "name": i.config.chain_name(id), "quoteVia": rail, "executeReady": false}))
        .collect();
    let on = |node| touching(lanes, &ChainRef::NonEvm(node));
    let tron_rails: BTreeSet<&str> = on(NonEvmNode::Tron)
        .iter()
        .filter(|l| l.quote_only)
        .map(|l| l.rail.as_str())
        .collect();
    let tron_reverse: Vec<Value> = lanes
        .iter()
        .filter(|l| l.quote_only && tron_rails.contains(l.rail.as_str()))
        .map(lane_json)
        .collect();
    let sui = on(NonEvmNode::Sui);
    json!({
        "extraEvmChains": extra,
        "chainflipAssetLanes": on(NonEvmNode::Bitcoin).into_iter().map(lane_json).collect::<Vec<_>>(),
        "sui": {
            "quoteOnly": sui.iter().all(|l| l.quote_only),
            "lanes": sui.into_iter().map(lane_json).collect::<Vec<_>>(),
        },
        "tronReverseAndChainflip": tron_reverse,
        "lanes": lanes.iter().filter(|l| l.quote_only).map(lane_json).collect::<Vec<_>>(),
    })
}

/// `GET /api/status`.
pub fn status(i: &MeshInputs<'_>) -> Value {
    let lanes = i.lanes();
    let evm: Vec<Value> = mesh_chains(&lanes)
        .into_iter()
        .map(|id| json!({"chainId": id, "name": i.config.chain_name(id), "up": i.health.chains.get(&id).copied().unwrap_or(false)}))
        .collect();
    let non_evm: Vec<Value> = non_evm_nodes(&lanes)
        .into_iter()
        .map(|(name, v)| json!({"name": name, "up": v["routable"]}))
        .collect();
    let rails: Vec<Value> = i
        .snap
        .active()
        .map(|r| json!({"name": r.id(), "up": i.state.rail_enabled(r.id()) && i.health.rail_up(r.id())}))
        .collect();
    let nodes: Vec<&Value> = evm.iter().chain(non_evm.iter()).collect();
    let up = nodes.iter().filter(|n| n["up"] == json!(true)).count();
    let rails_up = rails.iter().filter(|r| r["up"] == json!(true)).count();
    let status = if nodes.is_empty() && rails.is_empty() {
        "unknown"
    } else if up == nodes.len() && rails_up == rails.len() {
        "operational"
    } else if up == 0 && rails_up == 0 {
        "down"
    } else {
        "degraded"
    };
    json!({
        "status": status,
        "ts": i.health.ts_ms,
        "nodes": {"up": up, "total": nodes.len(), "evm": evm, "nonEvm": non_evm},
        "rails": rails,
        "routes": directed_route_count(&lanes),
        "endpoints": [
            {"name": "api", "up": true},
            {"name": "store", "up": true},
        ],
    })
}
