//! What a rail says about itself: identity, coverage, and what it needs.

use semver::Version;
use serde::{Deserialize, Serialize};

use crate::ChainRef;

/// The role a rail plays in the mesh (spec §1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RailRole {
    /// An EVM bridge aggregator (best-of-N over EVM↔EVM).
    Aggregator,
    /// A stablecoin bridge to non-EVM nodes.
    StableBridge,
    /// A native-bitcoin swap rail.
    NativeBitcoin,
    /// A burn-and-mint USDC rail.
    BurnMint,
    /// The service's own float lane (own inventory, no bridge).
    FloatLane,
    /// Prices a lane for comparison; never executes.
    QuoteOnly,
}

/// One lane the rail covers, by name (e.g. `evm->evm`, `evm->bitcoin`).
///
/// Operators toggle `executeReady` per lane name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneCoverage {
    /// Lane name, unique within the rail; `<from>-><to>` by convention.
    pub lane: String,
    /// Source nodes.
    pub from: Vec<ChainRef>,
    /// Destination nodes.
    pub to: Vec<ChainRef>,
    /// Asset symbols the lane carries (source side).
    pub assets: Vec<String>,
    /// Whether source and destination may be the same chain (a swap).
    pub same_chain: bool,
    /// Whether the rail can execute this lane at all (`false`: quote-only).
    pub executable: bool,
    /// Why the lane is quote-only, when it is.
    pub quote_only_reason: Option<String>,
}

impl LaneCoverage {
    /// Whether this lane carries `asset` from `from` to `to`.
    pub fn covers(&self, from: &ChainRef, to: &ChainRef, asset: &str) -> bool {
        (from != to || self.same_chain)
            && self.from.contains(from)
            && self.to.contains(to)
            && self.assets.iter().any(|a| a.eq_ignore_ascii_case(asset))
    }
}

/// A contract on a chain that the rail's plans may call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredContract {
    /// Chain.
    pub chain: ChainRef,
    /// Address (0x-hex on EVM).
    pub address: String,
    /// What it is (e.g. `lifi-diamond`, `token-messenger`).
    pub label: String,
}

/// Everything a rail says about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RailManifest {
    /// Stable id (`floatlane`, `lifi`…), lower-case.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The rail's own version.
    pub version: Version,
    /// The contract version it was built against.
    pub contract_version: Version,
    /// Its role in the mesh.
    pub role: RailRole,
    /// Lanes it covers.
    pub coverage: Vec<LaneCoverage>,
    /// Upstream hosts it may reach over HTTP (exact host names).
    pub egress: Vec<String>,
    /// Chains it may read over RPC.
    pub rpc_chains: Vec<ChainRef>,
    /// Contracts its plans may call.
    pub contracts: Vec<DeclaredContract>,
    /// The upstream whose wire format it speaks, with the doc version.
    pub upstream: Option<String>,
}

impl RailManifest {
    /// The lane that carries `asset` from `from` to `to`, if any.
    pub fn lane_for(&self, from: &ChainRef, to: &ChainRef, asset: &str) -> Option<&LaneCoverage> {
        self.coverage.iter().find(|l| l.covers(from, to, asset))
    }
}
