//! The mesh as clients see it (spec §2.2 status, §2.3 route/chains), derived
//! from the loaded rails' coverage, the operator's switches and live health.

use super::health::HealthReport;
use relay_config::HostConfig;
use relay_plugin_api::{ChainRef, NonEvmNode, RailRole};
use relay_registry::OperatorState;
use relay_runtime::rails::RailSnapshot;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;

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
    /// Whether `c` is a node this host reaches (an EVM chain it has
    /// configured, or a non-EVM node).
    pub(crate) fn node_usable(&self, c: &ChainRef) -> bool {
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

/// `GET /api/route/chains` (spec §2.3).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mesh {
    /// EVM chains plus routable non-EVM nodes.
    pub nodes: usize,
    /// EVM chain ids in the mesh.
    pub chains: Vec<u64>,
    /// Non-EVM nodes currently routable.
    pub routable_non_evm: Vec<String>,
    /// Directed node pairs some lane serves.
    pub directed_routes: usize,
    /// The Permit2 spender clients sign for.
    pub relayer: Option<String>,
    /// The Permit2 contract.
    pub permit2: String,
    /// The `RelayRouter` per chain id (chains without one are absent).
    pub routers: BTreeMap<String, String>,
    /// How routes are chosen.
    pub engine: String,
    /// Per enabled rail.
    pub rails: BTreeMap<String, MeshRail>,
    /// Same-chain swaps.
    pub same_chain_swaps: SameChainSwaps,
    /// Per non-EVM node.
    pub non_evm_nodes: BTreeMap<String, NonEvmNodeInfo>,
    /// Quote-only coverage.
    pub comparator_quote_only: ComparatorQuoteOnly,
}

/// One rail of the mesh.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MeshRail {
    /// Rail id.
    pub rail: String,
    /// Display name.
    pub name: String,
    /// What kind of rail.
    #[schema(value_type = String)]
    pub role: RailRole,
    /// Assets it carries.
    pub assets: BTreeSet<String>,
    /// Its lanes, comma-separated.
    pub scope: String,
    /// Whether any lane executes now.
    pub execute_ready: bool,
    /// Per lane.
    pub lanes: Vec<RailLane>,
    /// Its upstream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<String>>,
    /// The float lane settles instantly from inventory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instant: Option<bool>,
    /// Where it is usually cheapest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wins_on: Option<String>,
    /// A remark.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One lane of a rail in the mesh.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RailLane {
    /// Lane name.
    pub lane: String,
    /// Whether it executes now.
    pub execute_ready: bool,
    /// Whether it is priced but never executed.
    pub quote_only: bool,
}

impl Mesh {
    /// Sets `settlementProven` from the nodes whose delivery was verified
    /// on chain (`same-chain` for same-chain swaps, a non-EVM node's name).
    pub fn mark_proven(&mut self, proven: &BTreeSet<String>) {
        self.same_chain_swaps.settlement_proven = proven.contains("same-chain");
        for (name, node) in &mut self.non_evm_nodes {
            node.settlement_proven = proven.contains(name);
        }
    }
}

/// `sameChainSwaps`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SameChainSwaps {
    /// Whether some rail quotes them.
    pub quotable: bool,
    /// Whether some rail executes them now.
    pub execute_ready: bool,
    /// Whether settlement was verified on chain.
    pub settlement_proven: bool,
    /// How.
    pub how: String,
    /// Through which rails.
    pub via: BTreeSet<String>,
    /// A remark.
    pub note: String,
}

/// One non-EVM node of the mesh.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NonEvmNodeInfo {
    /// Node name.
    pub network: String,
    /// Whether some lane quotes it now.
    pub routable: bool,
    /// Rails that reach it.
    pub routable_via: BTreeSet<String>,
    /// Whether some lane executes it now.
    pub execute_ready: bool,
    /// Whether every lane only quotes it.
    pub quote_only: bool,
    /// Whether settlement was verified on chain.
    pub settlement_proven: bool,
    /// Its main asset.
    pub asset: Option<String>,
    /// Every asset its lanes carry.
    pub assets: BTreeSet<String>,
    /// Connected EVM chain ids.
    pub evm_nodes: BTreeSet<u64>,
    /// Who watches it.
    pub daemon: String,
    /// Whether its quotes answer.
    pub quote_ok: bool,
    /// Why not, when not.
    pub quote_error: Option<String>,
    /// `evm-><node>` and `<node>->evm`, each executable now or not.
    pub execute_directions: BTreeMap<String, bool>,
    /// Who signs its legs.
    pub signers: Vec<String>,
    /// The executing rail.
    pub bridge: Option<String>,
    /// A remark.
    pub note: String,
}

/// A lane in the quote-only block.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaneInfo {
    /// Rail id.
    pub rail: String,
    /// Lane name.
    pub lane: String,
    /// Assets.
    pub assets: Vec<String>,
    /// Whether it executes now.
    pub execute_ready: bool,
    /// Whether it is priced but never executed.
    pub quote_only: bool,
}

/// An EVM chain only quote-only lanes reach.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtraEvmChain {
    /// Chain id.
    pub chain_id: u64,
    /// Name.
    pub name: String,
    /// The rail that prices it.
    pub quote_via: String,
    /// Always false.
    pub execute_ready: bool,
}

/// sui's quote-only block.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuiBlock {
    /// Whether every sui lane only quotes.
    pub quote_only: bool,
    /// Its lanes.
    pub lanes: Vec<LaneInfo>,
}

/// Spec §2.3 `comparatorQuoteOnly`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparatorQuoteOnly {
    /// EVM chains only quote-only lanes reach.
    pub extra_evm_chains: Vec<ExtraEvmChain>,
    /// The native-bitcoin asset lanes.
    pub chainflip_asset_lanes: Vec<LaneInfo>,
    /// sui.
    pub sui: SuiBlock,
    /// Quote-only lanes of the rails that price tron.
    pub tron_reverse_and_chainflip: Vec<LaneInfo>,
    /// Every quote-only lane.
    pub lanes: Vec<LaneInfo>,
}

/// `GET /api/status` (spec §2.2).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `operational`, `degraded`, `down` or `unknown`.
    pub status: String,
    /// Reading time, epoch ms.
    pub ts: u64,
    /// Nodes.
    pub nodes: StatusNodes,
    /// Per rail.
    pub rails: Vec<NamedUp>,
    /// Directed route count.
    pub routes: usize,
    /// Per endpoint.
    pub endpoints: Vec<NamedUp>,
}

/// `status.nodes`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusNodes {
    /// Nodes up.
    pub up: usize,
    /// Nodes in all.
    pub total: usize,
    /// EVM chains.
    pub evm: Vec<EvmNodeUp>,
    /// Non-EVM nodes.
    pub non_evm: Vec<NamedUp>,
}

/// An EVM chain's health.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvmNodeUp {
    /// Chain id.
    pub chain_id: u64,
    /// Name.
    pub name: String,
    /// Whether its RPC answers with its id.
    pub up: bool,
}

/// `{name, up}`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct NamedUp {
    /// Name.
    pub name: String,
    /// Up.
    pub up: bool,
}

/// `GET /api/route/chains`.
pub fn route_chains(i: &MeshInputs<'_>) -> Mesh {
    let lanes = i.lanes();
    let chains: Vec<u64> = mesh_chains(&lanes).into_iter().collect();
    let non_evm = non_evm_nodes(&lanes);
    let routable: Vec<String> = non_evm
        .iter()
        .filter(|(_, v)| v.routable)
        .map(|(k, _)| k.clone())
        .collect();
    let rails: BTreeMap<String, MeshRail> = i
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
    Mesh {
        nodes: chains.len() + routable.len(),
        chains,
        routable_non_evm: routable,
        directed_routes: directed_route_count(&lanes),
        relayer: i.config.relayer.clone(),
        routers: i
            .config
            .chain_ids()
            .into_iter()
            .filter_map(|id| Some((id.to_string(), i.config.router(id)?.to_string())))
            .collect(),
        permit2: i.config.permit2.clone(),
        engine: format!("best-of-N over {} loaded rails, ranked by net destination output after every fee, failover while no funds have moved", rails.len()),
        rails,
        same_chain_swaps: SameChainSwaps {
            quotable: !swaps.is_empty(),
            execute_ready: swaps.iter().any(|l| l.execute_ready),
            settlement_proven: false,
            how: "fromChain equals toChain with different tokens, through the aggregator rails that cover same-chain swaps".into(),
            via: swaps.iter().map(|l| l.rail.clone()).collect(),
            note: "same chain with the same token is refused".into(),
        },
        non_evm_nodes: non_evm,
        comparator_quote_only: quote_only_block(i, &lanes),
    }
}

fn rail_block(m: &relay_plugin_api::RailManifest, lanes: &[MeshLane]) -> MeshRail {
    let mine: Vec<&MeshLane> = lanes.iter().filter(|l| l.rail == m.id).collect();
    let scope: Vec<&str> = m.coverage.iter().map(|l| l.lane.as_str()).collect();
    let float = m.role == RailRole::FloatLane;
    MeshRail {
        rail: m.id.clone(),
        name: m.name.clone(),
        role: m.role,
        assets: m
            .coverage
            .iter()
            .flat_map(|l| l.assets.iter().cloned())
            .collect(),
        scope: scope.join(", "),
        execute_ready: mine.iter().any(|l| l.execute_ready),
        lanes: mine
            .iter()
            .map(|l| RailLane {
                lane: l.lane.clone(),
                execute_ready: l.execute_ready,
                quote_only: l.quote_only,
            })
            .collect(),
        sources: m.upstream.clone().map(|u| vec![u]),
        instant: float.then_some(true),
        wins_on: float
            .then(|| "cheapest on same-asset stablecoin moves between chains with float".into()),
        note: (m.role == RailRole::QuoteOnly)
            .then(|| "quote-only: priced and compared, never executed".into()),
    }
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
fn directions(node: NonEvmNode, touching: &[&MeshLane]) -> BTreeMap<String, bool> {
    let c = ChainRef::NonEvm(node);
    let n = node.as_str();
    let ready = |inbound: bool| {
        touching
            .iter()
            .any(|l| l.execute_ready && (if inbound { &l.to } else { &l.from }).contains(&c))
    };
    BTreeMap::from([
        (format!("evm->{n}"), ready(true)),
        (format!("{n}->evm"), ready(false)),
    ])
}

fn non_evm_node(node: NonEvmNode, touching: &[&MeshLane]) -> NonEvmNodeInfo {
    let evm: BTreeSet<u64> = touching
        .iter()
        .flat_map(|l| l.from.iter().chain(l.to.iter()))
        .filter_map(|c| c.evm_id())
        .collect();
    let assets: BTreeSet<String> = touching
        .iter()
        .flat_map(|l| l.assets.iter().cloned())
        .collect();
    let asset = Some(native_asset(node).to_string())
        .filter(|a| assets.contains(a))
        .or_else(|| assets.iter().next().cloned());
    let quote_ok = touching.iter().any(|l| l.quote_ok);
    let quote_error = touching.iter().filter(|l| !l.quote_ok).find_map(|l| {
        l.quote_error
            .as_ref()
            .map(|e| format!("{} {}: {e}", l.rail, l.lane))
    });
    let all_quote_only = touching.iter().all(|l| l.quote_only);
    NonEvmNodeInfo {
        network: node.as_str().into(),
        routable: quote_ok,
        routable_via: touching.iter().map(|l| l.rail.clone()).collect(),
        execute_ready: touching.iter().any(|l| l.execute_ready),
        quote_only: all_quote_only,
        settlement_proven: false,
        asset,
        assets,
        evm_nodes: evm,
        daemon: "host".into(),
        quote_ok,
        quote_error,
        execute_directions: directions(node, touching),
        signers: if all_quote_only {
            Vec::new()
        } else {
            vec!["relayer".into()]
        },
        bridge: touching
            .iter()
            .find(|l| !l.quote_only)
            .map(|l| l.rail.clone()),
        note: if all_quote_only {
            "quote-only: no signer"
        } else {
            ""
        }
        .into(),
    }
}

fn non_evm_nodes(lanes: &[MeshLane]) -> BTreeMap<String, NonEvmNodeInfo> {
    mesh_non_evm(lanes)
        .into_iter()
        .map(|node| {
            let t = touching(lanes, &ChainRef::NonEvm(node));
            (node.as_str().to_string(), non_evm_node(node, &t))
        })
        .collect()
}

fn lane_json(l: &MeshLane) -> LaneInfo {
    LaneInfo {
        rail: l.rail.clone(),
        lane: l.lane.clone(),
        assets: l.assets.clone(),
        execute_ready: l.execute_ready,
        quote_only: l.quote_only,
    }
}

/// Spec §2.3 `comparatorQuoteOnly`, derived from the lanes: EVM chains only
/// quote-only lanes reach; the native-bitcoin asset lanes (executable or
/// not); the sui lanes; the quote-only lanes of the rails that price tron.
fn quote_only_block(i: &MeshInputs<'_>, lanes: &[MeshLane]) -> ComparatorQuoteOnly {
    let executable_chains = mesh_chains(
        &lanes
            .iter()
            .filter(|l| !l.quote_only)
            .cloned()
            .collect::<Vec<_>>(),
    );
    let extra: Vec<ExtraEvmChain> = lanes
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
        .map(|(id, rail)| ExtraEvmChain {
            chain_id: id,
            name: i.config.chain_name(id),
            quote_via: rail.into(),
            execute_ready: false,
        })
        .collect();
    let on = |node| touching(lanes, &ChainRef::NonEvm(node));
    let tron_rails: BTreeSet<&str> = on(NonEvmNode::Tron)
        .iter()
        .filter(|l| l.quote_only)
        .map(|l| l.rail.as_str())
        .collect();
    let tron_reverse: Vec<LaneInfo> = lanes
        .iter()
        .filter(|l| l.quote_only && tron_rails.contains(l.rail.as_str()))
        .map(lane_json)
        .collect();
    let sui = on(NonEvmNode::Sui);
    ComparatorQuoteOnly {
        extra_evm_chains: extra,
        chainflip_asset_lanes: on(NonEvmNode::Bitcoin).into_iter().map(lane_json).collect(),
        sui: SuiBlock {
            quote_only: sui.iter().all(|l| l.quote_only),
            lanes: sui.into_iter().map(lane_json).collect(),
        },
        tron_reverse_and_chainflip: tron_reverse,
        lanes: lanes
            .iter()
            .filter(|l| l.quote_only)
            .map(lane_json)
            .collect(),
    }
}

/// `GET /api/status`.
pub fn status(i: &MeshInputs<'_>) -> Status {
    let lanes = i.lanes();
    let evm: Vec<EvmNodeUp> = mesh_chains(&lanes)
        .into_iter()
        .map(|id| EvmNodeUp {
            chain_id: id,
            name: i.config.chain_name(id),
            up: i.health.chains.get(&id).copied().unwrap_or(false),
        })
        .collect();
    let non_evm: Vec<NamedUp> = non_evm_nodes(&lanes)
        .into_iter()
        .map(|(name, v)| NamedUp {
            name,
            up: v.routable,
        })
        .collect();
    let rails: Vec<NamedUp> = i
        .snap
        .active()
        .map(|r| NamedUp {
            name: r.id().to_string(),
            up: i.state.rail_enabled(r.id()) && i.health.rail_up(r.id()),
        })
        .collect();
    let total = evm.len() + non_evm.len();
    let up = evm.iter().filter(|n| n.up).count() + non_evm.iter().filter(|n| n.up).count();
    let rails_up = rails.iter().filter(|r| r.up).count();
    let status = if total == 0 && rails.is_empty() {
        "unknown"
    } else if up == total && rails_up == rails.len() {
        "operational"
    } else if up == 0 && rails_up == 0 {
        "down"
    } else {
        "degraded"
    };
    let named = |name: &str| NamedUp {
        name: name.into(),
        up: true,
    };
    Status {
        status: status.into(),
        ts: i.health.ts_ms,
        nodes: StatusNodes {
            up,
            total,
            evm,
            non_evm,
        },
        rails,
        routes: directed_route_count(&lanes),
        endpoints: vec![named("api"), named("store")],
    }
}
