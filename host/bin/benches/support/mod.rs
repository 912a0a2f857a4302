//! What the HTTP benches share: a real host over the devnet's simulators,
//! served on an ephemeral port as `relay up` serves it, rate limits off (a
//! bench sends more than a minute's worth).

use relay_config::HostConfig;
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, serve_on_loopback_as, ServedHost};
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

/// Serves a host over `devnet` with the packaged plugins copied under `dir`
/// and a relayer key pool of `pool` devnet pool keys.
async fn serve(devnet: &Devnet, dir: &Path, pool: usize) -> Served {
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
    let creds = relay_host::devnet::devnet_credentials_with_pool(pool);
    let host = serve_on_loopback_as(config, relay_types::clock::system(), creds)
        .await
        .expect("host serves");
    Served {
        base: host.base.clone(),
        sims,
        _host: host,
    }
}

/// Everything a bench stack runs on: its runtime, a temporary directory,
/// a devnet of `chains` and a host served over it. Keep them all alive for
/// the bench (dropping stops them).
#[allow(dead_code)] // each bench is its own crate
pub fn start(chains: [u64; 2]) -> (Runtime, tempfile::TempDir, Devnet, Served) {
    start_with(DevnetConfig::with_chains(chains), 0)
}

/// [`start`] over a devnet configured as `devnet` (a block time), the host
/// with a relayer key pool of `pool` devnet pool keys.
pub fn start_with(
    devnet: DevnetConfig,
    pool: usize,
) -> (Runtime, tempfile::TempDir, Devnet, Served) {
    let rt = Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let devnet = rt.block_on(Devnet::start(devnet)).expect("devnet");
    let served = rt.block_on(serve(&devnet, dir.path(), pool));
    (rt, dir, devnet, served)
}

/// A live permit2 execute of `amount` USDC `src` → `dst` signed by anvil
/// account `user` for the relayer with Permit2 nonce `nonce`, paying itself
/// on `dst`; on `rail` when one is given (else the best quote: the float
/// lane).
#[allow(dead_code)] // each bench is its own crate; not every one executes
pub fn permit_body(
    devnet: &Devnet,
    (src, dst): (u64, u64),
    (user, amount): (usize, u64),
    nonce: u64,
    rail: Option<&str>,
) -> serde_json::Value {
    use alloy::primitives::U256;
    use relay_types::Clock as _;
    let owner = relay_devnet::keys::anvil_signer(user);
    let grant = relay_devnet::contracts::PermitGrant {
        chain: src,
        token: devnet.chain(src).expect("source chain").deployment.usdc,
        amount: U256::from(amount),
        spender: relay_devnet::keys::relayer().address(),
        nonce: U256::from(nonce),
        deadline: relay_types::SystemClock.now_ms() / 1000 + 600,
    };
    let mut body = serde_json::json!({
        "fromChain": src, "toChain": dst, "fromToken": "USDC", "toToken": "USDC",
        "amount": amount.to_string(), "mode": "permit2", "toAddress": owner.address(), "live": true,
        "permit2": grant.signed_by(&owner),
    });
    if let Some(rail) = rail {
        body["rail"] = serde_json::json!(rail);
    }
    body
}

/// Anvil account `user` approves Permit2 for all its `usdc`.
#[allow(dead_code)] // each bench is its own crate; not every one executes
pub async fn approve_permit2(
    src: &alloy::providers::DynProvider,
    usdc: alloy::primitives::Address,
    user: usize,
) {
    relay_devnet::contracts::TestToken::new(usdc, src)
        .approve(relay_devnet::PERMIT2_ADDRESS, alloy::primitives::U256::MAX)
        .from(relay_devnet::keys::anvil_address(user))
        .send()
        .await
        .expect("approve")
        .get_receipt()
        .await
        .expect("approved");
}

/// Executes every route of `bodies` at once and waits until each is
/// `DONE` (any other end, or `timeout`, fails the bench).
#[allow(dead_code)] // each bench is its own crate; not every one executes
pub async fn run_routes(
    client: &reqwest::Client,
    base: &str,
    bodies: &[serde_json::Value],
    timeout: std::time::Duration,
) {
    let ids = futures::future::join_all(bodies.iter().map(|b| execute(client, base, b))).await;
    futures::future::join_all(ids.iter().map(|id| until_done(client, base, id, timeout))).await;
}

/// POSTs one execute; the route id.
async fn execute(client: &reqwest::Client, base: &str, body: &serde_json::Value) -> String {
    let resp = client
        .post(format!("{base}/api/route/execute"))
        .json(body)
        .send()
        .await
        .expect("execute");
    let status = resp.status();
    let text = resp.text().await.expect("body");
    assert!(status.is_success(), "execute: {status}: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON receipt");
    v["id"].as_str().expect("route id").to_string()
}

/// Polls route `id` until it is `DONE`; any other end fails the bench.
async fn until_done(client: &reqwest::Client, base: &str, id: &str, timeout: std::time::Duration) {
    let url = format!("{base}/api/route/status?id={id}");
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let v: serde_json::Value = client
            .get(&url)
            .send()
            .await
            .expect("status")
            .json()
            .await
            .expect("JSON status");
        match v["status"].as_str().unwrap_or("") {
            "DONE" => return,
            "FAILED" | "FUNDS_REQUIRED" | "DRY" => panic!("route {id} did not finish: {v}"),
            _ => assert!(
                std::time::Instant::now() < deadline,
                "route {id} stuck: {v}"
            ),
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
