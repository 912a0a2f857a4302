//! The rail conformance kit.
//!
//! Each clause of the contract is a check with a stable name; a failing
//! check names its clause, the cause, and the fix (the kit flag and the
//! operator config key when the cause is a setting). The kit loads the
//! artifact through the host's own loader ([`RailSet::load_artifact`]) with
//! a frozen clock, the manifest's egress plus the operator's grants as the
//! only allowlist, and a short deadline, then drives it with inputs derived
//! from its own coverage: every declared lane in every declared direction
//! ([`inputs`]). A rail passes only if each direction quoted successfully,
//! `prepare` turned those quotes into declarative plans, and `health` is
//! operational — an upstream that never answered is a failure, not a pass.

mod agree;
mod clauses;
mod diagnose;
mod drive;
mod fixture;
pub mod inputs;
mod plan;
mod vendor;

pub use agree::{packagings_agree, PACKAGINGS_AGREE};
pub use clauses::Clause;
pub use fixture::{FixtureServer, AT_FIXTURE};
pub use inputs::{directions, Direction, Inputs, KnownToken};
use relay_capabilities::{CapabilityBroker, ManualClock, RailPolicy};
use relay_config::HostConfig;
use relay_plugin_api::ChainRef;
use relay_registry::PluginKind;
use relay_runtime::{rails::RailSet, LoadedRail};
use serde::Serialize;
use std::{path::Path, sync::Arc, time::Duration};
pub use vendor::{check_vendor, AGREES_WITH_VENDOR};

/// How to run the kit.
#[derive(Clone, Debug)]
pub struct KitOptions {
    /// Deadline of each call.
    pub call_timeout: Duration,
    /// Operator config handed to the rail (`host.config`).
    pub rail_config: Vec<(String, String)>,
    /// RPC endpoints (`chain id` → url) the rail may read.
    pub rpc: Vec<(String, String)>,
    /// Allow loopback/private egress (for rails pointed at local simulators).
    pub allow_private: bool,
    /// Extra egress hosts granted by the operator.
    pub extra_egress: Vec<String>,
    /// Tokens the kit may use in requests.
    pub tokens: Vec<KnownToken>,
    /// Where the compiled-module cache goes.
    pub work_dir: std::path::PathBuf,
    /// Credentials the rail may use, by name (the secret stays in the
    /// environment variable the entry names).
    pub credentials: Vec<(String, relay_capabilities::CredentialConfig)>,
    /// Contracts the operator lets the rail's plans call besides those its
    /// manifest declares (`rails.<id>.contracts` syntax).
    pub contracts: Vec<String>,
    /// The sender/recipient address the kit uses on a chain, where the
    /// default sample address does not suit the rail (e.g. a regtest
    /// bitcoin address).
    pub addresses: Vec<(ChainRef, String)>,
}

impl KitOptions {
    /// The chains in scope: those the integrator gave a token, an RPC
    /// endpoint or an address for. Every declared direction between them
    /// is quoted.
    pub fn scope(&self) -> Vec<ChainRef> {
        let mut out: Vec<ChainRef> = self.tokens.iter().map(|t| t.chain).collect();
        out.extend(
            self.rpc
                .iter()
                .filter_map(|(c, _)| c.parse::<ChainRef>().ok()),
        );
        out.extend(self.addresses.iter().map(|(c, _)| *c));
        out.sort_by_key(|c| c.to_string());
        out.dedup();
        out
    }

    /// The kit's inputs under these options.
    pub fn inputs(&self) -> Inputs<'_> {
        Inputs {
            tokens: &self.tokens,
            scope: self.scope(),
            addresses: &self.addresses,
        }
    }
}

impl Default for KitOptions {
    fn default() -> Self {
        KitOptions {
            call_timeout: Duration::from_secs(3),
            rail_config: vec![],
            rpc: vec![],
            allow_private: false,
            extra_egress: vec![],
            tokens: vec![],
            work_dir: std::env::temp_dir().join("relay-conformance"),
            credentials: vec![],
            contracts: vec![],
            addresses: vec![],
        }
    }
}

/// The outcome of one clause.
#[derive(Clone, Debug, Serialize)]
pub struct ClauseResult {
    /// The clause's stable name.
    pub clause: &'static str,
    /// Whether it held.
    pub passed: bool,
    /// What was seen; on a failure, the cause.
    pub detail: String,
    /// On a failure, what to do: the change to the rail, or the kit flag
    /// and operator config key that supply a missing setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What the clause exercised (directions quoted, plans checked…).
    pub exercised: Vec<String>,
}

impl ClauseResult {
    /// A clause that held.
    pub fn pass(clause: &'static str, detail: impl Into<String>) -> Self {
        ClauseResult {
            clause,
            passed: true,
            detail: detail.into(),
            fix: None,
            exercised: vec![],
        }
    }

    /// A clause that failed with `cause`; `fix` says what to do.
    pub fn fail(clause: &'static str, cause: impl Into<String>, fix: impl Into<String>) -> Self {
        ClauseResult {
            clause,
            passed: false,
            detail: cause.into(),
            fix: Some(fix.into()),
            exercised: vec![],
        }
    }

    /// The same result recording what was exercised.
    pub fn exercising(mut self, exercised: Vec<String>) -> Self {
        self.exercised = exercised;
        self
    }

    /// One line per result: `FAIL clause cause`, then the fix.
    pub fn render(&self) -> String {
        let mut s = format!(
            "  {} {:<30} {}",
            if self.passed { "PASS" } else { "FAIL" },
            self.clause,
            self.detail
        );
        if let Some(fix) = self.fix.as_deref().filter(|_| !self.passed) {
            s.push_str(&format!("\n       fix: {fix}"));
        }
        s
    }
}

/// The kit's report on one artifact.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The artifact.
    pub artifact: String,
    /// Its packaging.
    pub kind: PluginKind,
    /// The rail id, once loaded.
    pub rail: Option<String>,
    /// Per clause.
    pub clauses: Vec<ClauseResult>,
}

impl Report {
    /// Whether every clause held.
    pub fn passed(&self) -> bool {
        self.clauses.iter().all(|c| c.passed)
    }

    /// The clauses that failed.
    pub fn failures(&self) -> Vec<&ClauseResult> {
        self.clauses.iter().filter(|c| !c.passed).collect()
    }
}

/// The packaging an artifact's file name implies.
pub fn kind_of(path: &Path) -> PluginKind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("wasm") => PluginKind::Wasm,
        _ => PluginKind::Native,
    }
}

/// A fixed instant the kit's clock reads (2026-01-01T00:00:00Z).
pub const FROZEN_NOW_MS: u64 = 1_767_225_600_000;

/// Loads `artifact` the way the host does, under the kit's policy.
pub async fn load(
    artifact: &Path,
    kind: PluginKind,
    opts: &KitOptions,
) -> Result<(LoadedRail, Arc<CapabilityBroker>), String> {
    let mut config = HostConfig {
        data_dir: opts.work_dir.clone(),
        ..HostConfig::default()
    };
    config.runtime.call_timeout_ms = opts.call_timeout.as_millis() as u64;
    config.runtime.quarantine_base_ms = 0;
    config.capabilities.allow_private_networks = opts.allow_private;
    config.capabilities.credentials = opts.credentials.iter().cloned().collect();
    for (chain, url) in &opts.rpc {
        config
            .capabilities
            .rpc
            .entry(chain.clone())
            .or_default()
            .push(url.clone());
    }
    let broker = Arc::new(
        CapabilityBroker::new(&config.capabilities).with_clock(ManualClock::at(FROZEN_NOW_MS)),
    );
    let sha = relay_registry::sha256_file(artifact)
        .map_err(|e| format!("cannot read {}: {e}", artifact.display()))?;
    let set = RailSet::new(&config, broker.clone()).map_err(|e| e.to_string())?;
    let loaded = set
        .load_artifact(kind, artifact, &sha)
        .await
        .map_err(|e| e.to_string())?;
    let m = loaded.manifest();
    let rail = loaded.rebind(RailPolicy {
        rail_id: m.id.clone(),
        egress: m.egress.iter().chain(&opts.extra_egress).cloned().collect(),
        rpc_chains: m.rpc_chains.clone(),
        config: opts.rail_config.iter().cloned().collect(),
        credentials: opts.credentials.iter().map(|(n, _)| n.clone()).collect(),
    });
    Ok((rail, broker))
}

/// Runs every clause against `artifact`.
pub async fn check(artifact: &Path, opts: &KitOptions) -> Report {
    let (mut report, loaded) = open(artifact, opts).await;
    if let Some((rail, broker)) = loaded {
        report
            .clauses
            .extend(clauses::run_all(&rail, &broker, opts).await);
    }
    report
}

/// Loads `artifact` under `opts`: a report holding the `loads` clause, and
/// the rail when it loaded.
async fn open(
    artifact: &Path,
    opts: &KitOptions,
) -> (Report, Option<(LoadedRail, Arc<CapabilityBroker>)>) {
    let kind = kind_of(artifact);
    let mut report = Report {
        artifact: artifact.display().to_string(),
        kind,
        rail: None,
        clauses: vec![],
    };
    match load(artifact, kind, opts).await {
        Ok((rail, broker)) => {
            report.rail = Some(rail.id().to_string());
            report.clauses.push(ClauseResult::pass(
                Clause::Loads.name(),
                format!("{} {}", rail.id(), kind.as_str()),
            ));
            (report, Some((rail, broker)))
        }
        Err(e) => {
            report.clauses.push(ClauseResult::fail(
                Clause::Loads.name(),
                e,
                "build the artifact with `export_native_rail!` (a `.so`/`.dylib`) or \
                 `export_wasm_rail!` (a `.wasm` component) against a contract version this host \
                 supports",
            ));
            (report, None)
        }
    }
}
