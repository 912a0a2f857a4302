//! What a rail says about itself: identity, coverage, and what it needs.

use semver::Version;
use serde::{Deserialize, Serialize};

use crate::ChainRef;

/// The role a rail plays in the mesh (spec §1.3).
///
/// Only [`RailRole::FloatLane`] changes what the host does; every other
/// role is a label (the `role` shown in the mesh, the status snapshot and
/// preflight), and routing, ranking and execution treat them alike. Whether
/// a lane executes is decided by [`LaneCoverage::executable`] and
/// `RailQuote::quote_only_reason`, not by the role.
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
    /// The service's own float lane (own inventory, no bridge). The host
    /// treats the first loaded rail with this role as *the* float lane: it
    /// answers `GET /api/floatlane/info` (probe quotes whose `detail` gives
    /// `pricing.mode`, `fee`, `capNow` and `payoutCost`), its answer's
    /// `detail` is the quote's `floatlane` block, preflight warns
    /// `ABOVE_LANE_CAPACITY` from its `detail.capNow` and (`deep=1`) checks
    /// the relayer's balance for its payout, the mesh marks it `instant`,
    /// and an execute that omits `live` is a dry run on it.
    FloatLane,
    /// Prices a lane for comparison; never executes. The mesh notes the rail
    /// as quote-only; the lanes themselves must say so too
    /// (`executable: false` with a reason), since the role alone does not
    /// stop execution.
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
    /// Whether the rail can execute this lane at all (`false`: quote-only:
    /// priced, compared, and never chosen by execute).
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
    /// Upstream hosts it may reach over HTTP (exact host names); the
    /// operator may add more (`[rails.<id>] egress`).
    pub egress: Vec<String>,
    /// Chains it may read over RPC.
    pub rpc_chains: Vec<ChainRef>,
    /// Contracts its plans may call or approve, per chain; the operator may
    /// allow more (`[rails.<id>] contracts`). A plan step naming any other
    /// is refused (`STEP_REFUSED`) before anything is sent.
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
