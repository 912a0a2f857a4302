//! What the HTTP benches share: a real host over the devnet's simulators,
//! served on an ephemeral port as `relay up` serves it, rate limits off (a
//! bench sends more than a minute's worth).

use relay_config::HostConfig;
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, serve_on_loopback, ServedHost};
use relay_simulators::Simulators;
use std::path::{Path, PathBuf};
use tokio::runtime::Runtime;

/// A served host; dropping it stops the server and the simulators.
pub struct Served {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The upstream simulators the rails point at (faults, latency).
    #[allow(dead_code)] // each bench is its own crate; not every one injects faults
    pub sims: Simulators,
    _host: ServedHost,
}

impl Served {
    /// The host's store (a bench writes routes the host then serves).
    #[allow(dead_code)] // each bench is its own crate; not every one writes routes
    pub fn store(&self) -> &relay_store::Store {
        &self._host.state.store
    }
}

/// The host's data directory, kept in the target directory across runs so
/// its compiled-module cache is too (as an operator's `data_dir` is); the
/// database is the run's own, in its temporary directory.
fn bench_data_dir() -> PathBuf {
    relay_fixtures::target_dir().join("relay-bench-data")
}

/// Serves a host over `devnet` with the packaged plugins copied under `dir`.
async fn serve(devnet: &Devnet, dir: &Path) -> Served {
    let mut base = HostConfig {
        data_dir: bench_data_dir(),
        database_url: Some(format!(
            "sqlite://{}?mode=rwc",
            dir.join("relay.db").display()
        )),
        plugins_dir: relay_fixtures::plugins_copy(&dir.join("plugins")),
        ..HostConfig::default()
    };
    base.limits.enabled = false;
    // The upstream budget the quote book keeps within (`[quote_book]
    // default_rpm`, default 60): `RELAY_BENCH_RPM` sizes it as an operator
    // would to an upstream's real limit (quote_http's cold phases alone
    // spend ~45 quotes a minute per rail).
    if let Some(rpm) = std::env::var("RELAY_BENCH_RPM")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        base.quote_book.default_rpm = rpm;
    }
    let sims = Simulators::start(devnet).await.expect("simulators");
    let config = point_rails_at(devnet, &sims, host_config(devnet, base));
    let host = serve_on_loopback(config).await.expect("host serves");
    Served {
        base: host.base.clone(),
        sims,
        _host: host,
    }
}

/// Everything a bench stack runs on: its runtime, a temporary directory,
/// a devnet of `chains` and a host served over it. Keep them all alive for
/// the bench (dropping stops them).
pub fn start(chains: [u64; 2]) -> (Runtime, tempfile::TempDir, Devnet, Served) {
    let rt = Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let devnet = rt
        .block_on(Devnet::start(DevnetConfig::with_chains(chains)))
        .expect("devnet");
    let served = rt.block_on(serve(&devnet, dir.path()));
    (rt, dir, devnet, served)
}
