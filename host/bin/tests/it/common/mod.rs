//! Shared by the host's integration tests: a real host on a real devnet,
//! plain HTTP helpers, bounded polling.
#![allow(dead_code)]

use relay_config::HostConfig;
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, serve_on_loopback_at, ServedHost};
use relay_simulators::Simulators;
use relay_types::{Clock as _, SystemClock};
use serde_json::Value;
use std::{path::Path, time::Duration};

/// A host with no chains and no plugins, limits on as shipped: the edge,
/// keys and limits alone; `tweak` edits the config.
pub async fn bare_host(dir: &Path, tweak: impl FnOnce(&mut HostConfig)) -> ServedHost {
    bare_host_at(dir, relay_types::clock::system(), tweak).await
}

/// Like [`bare_host`], the host reading time from `clock` (a test moves a
/// `ManualClock` instead of sleeping).
pub async fn bare_host_at(
    dir: &Path,
    clock: relay_types::SharedClock,
    tweak: impl FnOnce(&mut HostConfig),
) -> ServedHost {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let mut config = HostConfig {
        data_dir: relay_fixtures::data_dir(&dir.join("data")),
        plugins_dir: plugins,
        ..HostConfig::default()
    };
    config.runtime.reload_interval_ms = 0;
    tweak(&mut config);
    serve_on_loopback_at(config, clock)
        .await
        .expect("host serves")
}

/// A host serving on an ephemeral port with the devnet's upstream
/// simulators, as `relay up` serves it; dropping it stops both.
pub struct Running {
    pub base: String,
    pub host_state: relay_api::AppState,
    pub sims: Simulators,
    _served: ServedHost,
}

/// A devnet of `chains` and a host over it with the defaults of [`serve`]
/// (the temporary directory holds the host's data: keep it).
pub async fn devnet_host<const N: usize>(chains: [u64; N]) -> (Devnet, tempfile::TempDir, Running) {
    let devnet = Devnet::start(relay_devnet::DevnetConfig::with_chains(chains))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    (devnet, dir, h)
}

/// Serves a host over `devnet` with the packaged plugins; `tweak` edits the config.
pub async fn serve(devnet: &Devnet, dir: &Path, tweak: impl FnOnce(&mut HostConfig)) -> Running {
    serve_with(devnet, dir, |_| {}, tweak).await
}

/// Like [`serve`]; `plugins` edits the plugins directory before the host
/// loads it. Rate limits are off (suites send more than a minute's worth;
/// `api_quote.rs` turns them on to test them).
pub async fn serve_with(
    devnet: &Devnet,
    dir: &Path,
    plugins: impl FnOnce(&Path),
    tweak: impl FnOnce(&mut HostConfig),
) -> Running {
    serve_full(devnet, dir, (plugins, relay_types::clock::system()), tweak).await
}

/// Like [`serve`], the host reading time from `clock` (a test moves a
/// `ManualClock` instead of waiting for time to pass).
pub async fn serve_at(
    devnet: &Devnet,
    dir: &Path,
    clock: relay_types::SharedClock,
    tweak: impl FnOnce(&mut HostConfig),
) -> Running {
    serve_full(devnet, dir, (|_: &Path| {}, clock), tweak).await
}

async fn serve_full(
    devnet: &Devnet,
    dir: &Path,
    (plugins, clock): (impl FnOnce(&Path), relay_types::SharedClock),
    tweak: impl FnOnce(&mut HostConfig),
) -> Running {
    let mut base = HostConfig {
        data_dir: relay_fixtures::data_dir(&dir.join("data")),
        plugins_dir: relay_fixtures::plugins_copy(&dir.join("plugins")),
        ..HostConfig::default()
    };
    plugins(&base.plugins_dir);
    base.runtime.reload_interval_ms = 100;
    base.limits.enabled = false;
    let sims = Simulators::start(devnet).await.expect("simulators");
    let mut config = point_rails_at(devnet, &sims, host_config(devnet, base));
    tweak(&mut config);
    let served = serve_on_loopback_at(config, clock)
        .await
        .expect("host serves");
    Running {
        base: served.base.clone(),
        host_state: served.state.clone(),
        sims,
        _served: served,
    }
}

/// The one HTTP client of every test request. Building a client loads the
/// system's trust store (tens of milliseconds of CPU, most of a test's
/// time where it polls), so it is built once. It keeps no idle
/// connection: a pooled one would belong to the runtime of the test that
/// opened it, and another test on a reused port would be handed it.
pub fn http() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("an HTTP client")
        })
        .clone()
}

/// `GET url` with the shared client ([`http`]).
pub async fn fetch(url: impl reqwest::IntoUrl) -> reqwest::Result<reqwest::Response> {
    http().get(url).send().await
}

/// GET a JSON body.
pub async fn get(url: &str) -> (u16, Value) {
    let r = fetch(url).await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.expect("JSON body"))
}

/// An answer whose body must be JSON: status, headers, body.
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Answer {
    /// A response header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Sends `req`; panics unless the answer is JSON (every error must be).
pub async fn send(req: reqwest::RequestBuilder) -> Answer {
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    let body =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status}: not JSON: {text:?}"));
    Answer {
        status,
        headers,
        body,
    }
}

/// Polls `probe` (bounded: 10 s) until it holds.
pub async fn wait_for(what: &str, probe: impl AsyncFnMut() -> bool) {
    wait_up_to(what, Duration::from_secs(10), probe).await;
}

/// Polls `probe` every 50 ms until it holds, for at most `bound`.
pub async fn wait_up_to(what: &str, bound: Duration, mut probe: impl AsyncFnMut() -> bool) {
    let until = std::time::Instant::now() + bound;
    while std::time::Instant::now() < until {
        if probe().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A stored route as the executor writes one: 5 USDC 8453 → 42161.
pub fn sample_route(id: &str) -> relay_types::route::RouteRecord {
    relay_types::route::RouteRecord::sample(id, SystemClock.now_ms())
}

/// Stores `r` as a route another replica is running (leased for an hour),
/// so this host's resume tick leaves it exactly as the test wrote it.
pub async fn store_idle_route(store: &relay_store::Store, r: &relay_types::route::RouteRecord) {
    store
        .insert_claimed_route(r, "another-replica", 3_600_000)
        .await
        .unwrap();
}

/// Balance of the devnet's `token` (USDC, USDT, WBTC) on `chain`.
pub async fn token_balance(
    devnet: &Devnet,
    chain: u64,
    token: relay_devnet::Token,
    who: alloy::primitives::Address,
) -> alloy::primitives::U256 {
    let c = devnet.chain(chain).unwrap();
    relay_devnet::contracts::TestToken::new(c.deployment.token(token), c.provider())
        .balanceOf(who)
        .call()
        .await
        .unwrap()
}

/// USDC balance on `chain`.
pub async fn usdc_balance(
    devnet: &Devnet,
    chain: u64,
    who: alloy::primitives::Address,
) -> alloy::primitives::U256 {
    token_balance(devnet, chain, relay_devnet::Token::Usdc, who).await
}

/// Waits for each of `ids` at `base` to end `DONE`; answers what they
/// delivered together (the sum of their `to.estimated`).
pub async fn all_done(base: &str, ids: &[String]) -> alloy::primitives::U256 {
    let mut delivered = alloy::primitives::U256::ZERO;
    for id in ids {
        let done = until_terminal(base, id).await;
        assert_eq!(done["status"], "DONE", "{done}");
        delivered += done["to"]["estimated"]
            .as_str()
            .unwrap()
            .parse::<alloy::primitives::U256>()
            .unwrap();
    }
    delivered
}

/// `who`'s USDC on a route's two chains, read before the routes run, to
/// prove afterwards that each signature was pulled once and each payout
/// made once ([`UsdcBooks::assert_moved`]).
pub struct UsdcBooks {
    who: alloy::primitives::Address,
    chains: (u64, u64),
    before: (alloy::primitives::U256, alloy::primitives::U256),
}

impl UsdcBooks {
    /// `who`'s balances on `src` and `dst` now.
    pub async fn open(
        devnet: &Devnet,
        (src, dst): (u64, u64),
        who: alloy::primitives::Address,
    ) -> Self {
        let before = (
            usdc_balance(devnet, src, who).await,
            usdc_balance(devnet, dst, who).await,
        );
        UsdcBooks {
            who,
            chains: (src, dst),
            before,
        }
    }

    /// Asserts `who`'s source balance fell by exactly `pulled` and the
    /// destination balance rose by exactly `paid` since [`UsdcBooks::open`].
    pub async fn assert_moved(
        &self,
        devnet: &Devnet,
        pulled: alloy::primitives::U256,
        paid: alloy::primitives::U256,
    ) {
        let (src, dst) = self.chains;
        assert_eq!(
            self.before.0 - usdc_balance(devnet, src, self.who).await,
            pulled,
            "each permit pulled exactly once"
        );
        assert_eq!(
            usdc_balance(devnet, dst, self.who).await - self.before.1,
            paid,
            "each payout made exactly once"
        );
    }
}

/// A devnet of `(src, dst)`, its upstream simulators, anvil account 1's
/// USDC approved to Permit2 on `src`, and a `relay serve` configuration
/// over them in a fresh directory: for a test that starts, kills and
/// restarts the host process itself ([`spawn_host`]).
pub struct HostSetup {
    /// The chains.
    pub devnet: Devnet,
    /// The upstream simulators.
    pub sims: Simulators,
    /// Holds `relay.toml` and the data directory.
    pub dir: tempfile::TempDir,
    /// Where the host listens once started.
    pub base: String,
}

impl HostSetup {
    /// Starts the chains and simulators and writes the configuration,
    /// `tweak`ed.
    pub async fn new((src, dst): (u64, u64), tweak: impl FnOnce(&mut HostConfig)) -> Self {
        let devnet = Devnet::start(DevnetConfig::with_chains([src, dst]))
            .await
            .unwrap();
        let sims = Simulators::start(&devnet).await.unwrap();
        approve_permit2(&devnet, src, 1).await;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        write_host_config(&devnet, &sims, dir.path(), port, tweak);
        HostSetup {
            devnet,
            sims,
            dir,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// A connection to the host's own SQLite database (once it started).
    pub async fn database(&self) -> sqlx::SqlitePool {
        let db = relay_fixtures::data_dir(&self.dir.path().join("data")).join("relay.db");
        sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display()))
            .await
            .unwrap()
    }
}

/// Lets Permit2 spend anvil account `index`'s USDC on `chain` (once per
/// account and chain, as a wallet does).
pub async fn approve_permit2(devnet: &Devnet, chain: u64, index: usize) {
    let c = devnet.chain(chain).unwrap();
    relay_devnet::contracts::TestToken::new(c.deployment.usdc, c.provider())
        .approve(relay_devnet::PERMIT2_ADDRESS, alloy::primitives::U256::MAX)
        .from(relay_devnet::keys::anvil_address(index))
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
}

/// A live permit2 execute of `amount` USDC `src → dst` signed by anvil
/// account 1 for the relayer, paying itself on `dst`.
pub fn permit_body(devnet: &Devnet, (src, dst): (u64, u64), amount: u64, nonce: u64) -> Value {
    permit_body_at(
        devnet.chain(src).unwrap().deployment.usdc,
        (src, dst),
        amount,
        nonce,
    )
}

/// Like [`permit_body`], for the devnet USDC at `usdc` on `src` (a devnet
/// in another process, known from its written configuration).
pub fn permit_body_at(
    usdc: alloy::primitives::Address,
    (src, dst): (u64, u64),
    amount: u64,
    nonce: u64,
) -> Value {
    let owner = relay_devnet::keys::anvil_signer(1);
    let grant = relay_devnet::contracts::PermitGrant {
        chain: src,
        token: usdc,
        amount: alloy::primitives::U256::from(amount),
        spender: relay_devnet::keys::relayer().address(),
        nonce: alloy::primitives::U256::from(nonce),
        deadline: SystemClock.now_ms() / 1000 + 600,
    };
    serde_json::json!({
        "fromChain": src, "toChain": dst, "fromToken": "USDC", "toToken": "USDC", "amount": amount.to_string(),
        "mode": "permit2", "toAddress": owner.address(), "live": true,
        "permit2": grant.signed_by(&owner),
    })
}

/// POST `body` to `base` + `path`; the status and the raw body.
pub async fn post(base: &str, path: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = http().post(format!("{base}{path}")).json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// Polls a route's status until it is terminal, for at most
/// [`SETTLES_WITHIN`] of wall time (not a number of polls: a loaded
/// machine answers each poll more slowly).
pub async fn until_terminal(base: &str, id: &str) -> Value {
    let mut last = Value::Null;
    wait_up_to(
        &format!("route {id} to finish"),
        SETTLES_WITHIN,
        async || {
            let (_, r) = get(&format!("{base}/api/route/status?id={id}")).await;
            last = r;
            !["BRIDGING", "AWAITING_DEPOSIT"].contains(&last["status"].as_str().unwrap_or(""))
        },
    )
    .await;
    last
}

/// How long a devnet route may take to settle on a loaded two-core machine.
pub const SETTLES_WITHIN: Duration = Duration::from_secs(180);

/// A free loopback port for a process the test starts later (a `relay
/// serve` child). It is taken below the kernel's ephemeral range (32768 and
/// up on Linux), never from it: a port handed out by `bind(":0")` and
/// released is the next one any other bind(":0") of the tests running at
/// once may get — an anvil, an oblivious relay, a webhook receiver — and the
/// child, starting later, would find it taken (one CI run's crash test
/// posted to another test's relay and read its 404). Each call in this
/// process gets another port; a port something holds is skipped.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // another test binary running at once starts elsewhere in the span
    let start = std::process::id().wrapping_mul(7_919) % SPAN;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (LOW + (start + n) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Two broken RPC endpoints: one refuses connections (nothing listens),
/// one accepts and never answers (held open while the guard lives).
pub async fn dead_and_hung() -> (String, String, tokio::task::JoinHandle<()>) {
    let dead = format!("http://127.0.0.1:{}/", free_port());
    let hung_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hung = format!("http://{}/", hung_listener.local_addr().unwrap());
    let guard = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = hung_listener.accept().await {
            held.push(sock);
        }
    });
    (dead, hung, guard)
}

/// POSTs an execute that must be accepted, then waits for the route to end;
/// returns the first receipt and the terminal one.
pub async fn execute_to_end(base: &str, body: &Value) -> (Value, Value) {
    let (code, text) = post(base, "/api/route/execute", body, &[]).await;
    assert_eq!(code, 200, "{body} -> {text}");
    let receipt: Value = serde_json::from_str(&text).unwrap();
    let done = until_terminal(base, receipt["id"].as_str().unwrap()).await;
    (receipt, done)
}

/// `relay <args>` as an operator runs it, against `dir/plugins` and
/// `dir/data` (a serving host's directories, when one runs there); the
/// exit code, stdout and stderr.
pub fn relay_cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .env("RELAY_PLUGINS_DIR", dir.join("plugins"))
        // the tests' shared compiled-module cache: each call is a fresh
        // process that would otherwise compile every wasm rail unoptimised
        .env(
            "RELAY_DATA_DIR",
            relay_fixtures::data_dir(&dir.join("data")),
        )
        .env("RELAY_RUNTIME__RELOAD_INTERVAL_MS", "0")
        .output()
        .expect("relay runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts `relay serve` as its own process (a `kill -9` kills only it)
/// with `dir/relay.toml`, the devnet's relayer key and upstream key; its
/// output goes to `dir/host.log`.
pub fn spawn_host(dir: &Path) -> HostProcess {
    spawn_host_with(dir, &[])
}

/// Like [`spawn_host`], with `env` added to the process's environment.
pub fn spawn_host_with(dir: &Path, env: &[(&str, &str)]) -> HostProcess {
    use std::process::{Command, Stdio};
    let key = relay_devnet::keys::relayer().to_bytes();
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("host.log"))
        .unwrap();
    HostProcess::spawn(
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .arg("serve")
            .env("RELAY_CONFIG", dir.join("relay.toml"))
            .env("RELAY_RELAYER_KEY", format!("0x{}", hex::encode(key)))
            .env(relay_host::devnet::DEVNET_UPSTREAM_KEY_ENV, "devnet-only")
            .envs(env.iter().copied())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log)),
    )
}

/// A spawned `relay serve` or `relay up`: killed when dropped, so a test
/// that fails (panics) before stopping its host leaves no process behind
/// to load the machine for the tests after it.
#[derive(Debug)]
pub struct HostProcess(pub std::process::Child);

impl HostProcess {
    /// Starts `cmd`, the `relay` binary.
    pub fn spawn(cmd: &mut std::process::Command) -> Self {
        HostProcess(cmd.spawn().expect("the relay binary starts"))
    }
}

impl std::ops::Deref for HostProcess {
    type Target = std::process::Child;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for HostProcess {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        // Already gone when the test stopped it itself.
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Waits (bounded: 60 s) until a host answers at `base`.
pub async fn wait_ready(base: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if fetch(format!("{base}/api/status")).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("relay serve never answered at {base}");
}

/// Writes `dir/relay.toml` for a `relay serve` process ([`spawn_host`])
/// on `port` over `devnet` and its simulators, rate limits and plugin
/// reload off; `tweak` edits the config.
pub fn write_host_config(
    devnet: &Devnet,
    sims: &Simulators,
    dir: &Path,
    port: u16,
    tweak: impl FnOnce(&mut HostConfig),
) {
    let base = HostConfig {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        data_dir: relay_fixtures::data_dir(&dir.join("data")),
        plugins_dir: relay_fixtures::plugins_copy(&dir.join("plugins")),
        ..HostConfig::default()
    };
    let mut config = point_rails_at(devnet, sims, host_config(devnet, base));
    config.limits.enabled = false;
    config.runtime.reload_interval_ms = 0;
    tweak(&mut config);
    std::fs::write(dir.join("relay.toml"), toml::to_string(&config).unwrap()).unwrap();
}

/// The template rail's recorded upstream (`plugins/template/fixture/
/// upstream.json`), served on loopback the way the rail kit's `--fixture`
/// serves it.
pub async fn template_upstream() -> relay_conformance::rail::FixtureServer {
    relay_conformance::rail::FixtureServer::from_file(
        &relay_fixtures::workspace_root().join("plugins/template/fixture/upstream.json"),
    )
    .await
    .expect("the template's fixture")
}

/// The operator settings that point the template rail at `upstream`.
pub fn point_template_at(c: &mut HostConfig, upstream: &relay_conformance::rail::FixtureServer) {
    let rail = c.rails.entry("template".into()).or_default();
    rail.config.insert("base_url".into(), upstream.url());
    rail.egress.push("127.0.0.1".into());
    c.capabilities.allow_private_networks = true;
}

/// Runs the browser script `conformance/tools/<script>` (Playwright for
/// Python, `$RELAY_PLAYWRIGHT_PY`) with `args` and the screenshot
/// arguments `$shots` asks for; the JSON events it printed, one a line,
/// once it ended with `done` (else the test fails with its output).
pub async fn browser_script(script: &str, args: &[&str], shots: &str) -> Vec<Value> {
    let py = std::env::var("RELAY_PLAYWRIGHT_PY")
        .expect("RELAY_PLAYWRIGHT_PY (conformance/tools/playwright.sh prints it)");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/tools")
        .join(script);
    let mut cmd = std::process::Command::new(py);
    cmd.arg(path).args(args).args(screenshot_args(shots));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("\"done\""),
        "{script}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("{script}: not an event: {l}")))
        .collect()
}

/// A browser script's screenshot arguments when `var` names a file: the
/// desktop page there, the phone's beside it (`…-phone.png`); none
/// otherwise.
pub fn screenshot_args(var: &str) -> Vec<std::ffi::OsString> {
    let Some(path) = std::env::var_os(var) else {
        return vec![];
    };
    let mut phone = Path::new(&path).with_extension("").into_os_string();
    phone.push("-phone.png");
    vec![
        "--screenshot".into(),
        path,
        "--screenshot-phone".into(),
        phone,
    ]
}

/// One execute attempt with idempotency `key` at `base`, as a client
/// retrying through a crash sends it: the route id, or `None` while the
/// host is not there or the key's first request is still in flight; any
/// other answer fails the test.
pub async fn submit_keyed(base: &str, body: &Value, key: &str) -> Option<String> {
    let resp = http()
        .post(format!("{base}/api/route/execute"))
        .header("x-idempotency-key", key)
        .json(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .ok()?;
    let status = resp.status().as_u16();
    let v: Value = resp.json().await.ok()?;
    match status {
        200 => Some(v["id"].as_str().unwrap().to_string()),
        409 => None,
        other => panic!("{key}: {other} {v}"),
    }
}

/// Stops a devnet chain's blocks (`false`: what is sent stays pending) or
/// starts them again (`true`: everything pending is mined at once).
pub async fn blocks(chain: &impl alloy::providers::Provider, on: bool) {
    let _: () = chain
        .raw_request("evm_setAutomine".into(), (on,))
        .await
        .unwrap();
    if on {
        let _: Value = chain.raw_request("evm_mine".into(), ()).await.unwrap();
    }
}
