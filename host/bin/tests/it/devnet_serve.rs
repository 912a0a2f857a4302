//! `relay devnet` outlives its hosts: the real binary brings the chains,
//! contracts and simulators up and writes `relay.toml` and `devnet.env`;
//! `relay serve --config relay.toml`, with nothing but that env file, serves
//! a route; `kill -9` of the host mid-route and a restart finish it (the
//! user's balances move exactly once). The relayer key also works from an
//! encrypted keystore (`relay keystore import`), and is never printed.

use crate::common;
use alloy::{
    primitives::{Address, U256},
    providers::{Provider, ProviderBuilder},
};
use common::{free_port, get, permit_body_at, post, until_terminal, wait_for};
use relay_config::HostConfig;
use relay_devnet::keys;
use serde_json::{json, Value};
use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

pub const SRC: u64 = 8453;
pub const DST: u64 = 42161;

/// A `relay devnet` process and what it wrote; dropping it stops it.
pub struct StandaloneDevnet {
    pub dir: PathBuf,
    pub config: HostConfig,
    /// The variables of `devnet.env`.
    pub env: Vec<(String, String)>,
    /// The host's base URL (the `listen` it was configured with).
    pub base: String,
    child: Child,
}

impl Drop for StandaloneDevnet {
    fn drop(&mut self) {
        // SIGTERM: the devnet stops its anvils on the way out.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl StandaloneDevnet {
    /// `relay devnet --dir <dir> --chains 8453,42161`; waits for its
    /// `relay.toml` (written last) and reads both files.
    pub async fn start(dir: &Path) -> Self {
        let plugins = relay_fixtures::plugins_copy(&dir.join("plugins"));
        let port = free_port();
        let devnet_dir = dir.join("devnet");
        // `relay devnet --dir` gives its hosts `<dir>/data`: sharing the
        // tests' compiled-module cache there spares every `relay serve`
        // compiling each wasm rail unoptimised (over a minute on a busy
        // two-core machine with several starting at once).
        relay_fixtures::data_dir(&devnet_dir.join("data"));
        let child = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["devnet", "--chains", &format!("{SRC},{DST}"), "--dir"])
            .arg(&devnet_dir)
            .env("RELAY_LISTEN", format!("127.0.0.1:{port}"))
            .env("RELAY_PLUGINS_DIR", &plugins)
            .env("RELAY_RUNTIME__RELOAD_INTERVAL_MS", "0")
            .env("RELAY_LIMITS__ENABLED", "false")
            .stdout(Stdio::from(log_file(dir, "devnet.log")))
            .stderr(Stdio::from(log_file(dir, "devnet.log")))
            .spawn()
            .expect("relay devnet starts");
        let config_path = devnet_dir.join("relay.toml");
        for _ in 0..6 {
            if config_path.exists() {
                break;
            }
            wait_for_quietly(&config_path).await;
        }
        assert!(
            config_path.exists(),
            "relay devnet wrote no relay.toml within 60 s: {}",
            std::fs::read_to_string(dir.join("devnet.log")).unwrap_or_default()
        );
        let config: HostConfig =
            toml::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
        let env = read_env_file(&devnet_dir.join("devnet.env"));
        StandaloneDevnet {
            dir: devnet_dir,
            base: format!("http://{}", config.listen),
            config,
            env,
            child,
        }
    }

    /// The written configuration's path.
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("relay.toml")
    }

    /// The first RPC URL of `chain`.
    pub fn rpc(&self, chain: u64) -> String {
        self.config.chains[&chain.to_string()].rpc[0].clone()
    }

    /// A devnet token's address on `chain`.
    pub fn token(&self, chain: u64, symbol: &str) -> Address {
        self.config.chains[&chain.to_string()].tokens[symbol]
            .address
            .parse()
            .unwrap()
    }

    /// The USDC balance of `who` on `chain`.
    pub async fn usdc(&self, chain: u64, who: Address) -> U256 {
        let p = ProviderBuilder::new()
            .connect_reqwest(relay_devnet::rpc_client(), self.rpc(chain).parse().unwrap());
        relay_devnet::contracts::TestToken::new(self.token(chain, "USDC"), p)
            .balanceOf(who)
            .call()
            .await
            .unwrap()
    }

    /// Lets Permit2 spend anvil account 1's USDC on `chain` (anvil's
    /// accounts are unlocked).
    pub async fn approve_permit2(&self, chain: u64) {
        let p = ProviderBuilder::new()
            .connect_reqwest(relay_devnet::rpc_client(), self.rpc(chain).parse().unwrap());
        relay_devnet::contracts::TestToken::new(self.token(chain, "USDC"), p)
            .approve(relay_devnet::PERMIT2_ADDRESS, U256::MAX)
            .from(keys::anvil_address(1))
            .send()
            .await
            .unwrap()
            .get_receipt()
            .await
            .unwrap();
    }

    /// An anvil cheat call on `chain`.
    pub async fn anvil(&self, chain: u64, method: &'static str, params: Value) {
        let p = ProviderBuilder::new()
            .connect_reqwest(relay_devnet::rpc_client(), self.rpc(chain).parse().unwrap());
        let _: Value = p.raw_request(method.into(), params).await.unwrap();
    }

    /// `relay <args>` with `env` (the devnet's env file, or another) and
    /// the written configuration: exit code, stdout, stderr.
    pub fn cli(&self, args: &[&str], env: &[(String, String)]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(args)
            .env_remove("RELAY_RELAYER_KEY")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("relay runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `relay serve --config <config>` with `env` only from the devnet's
    /// world (the test's own `RELAY_*` variables removed); output appended
    /// to `<dir>/host.log`.
    pub fn serve(&self, config: &Path, env: &[(String, String)]) -> common::HostProcess {
        let log = self.dir.join("host.log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay"));
        cmd.args(["serve", "--config"]).arg(config);
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("RELAY_")) {
            cmd.env_remove(k);
        }
        cmd.envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::from(append(&log)))
            .stderr(Stdio::from(append(&log)));
        common::HostProcess::spawn(&mut cmd)
    }

    /// Everything the host processes printed.
    pub fn host_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("host.log")).unwrap_or_default()
    }
}

/// Polls for `path` for up to 10 s without failing.
async fn wait_for_quietly(path: &Path) {
    for _ in 0..100 {
        if path.exists() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn append(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

fn log_file(dir: &Path, name: &str) -> std::fs::File {
    append(&dir.join(name))
}

/// `KEY=value` lines, comments skipped.
fn read_env_file(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The devnet relayer key's hex, without `0x` (to assert it is never printed).
pub fn relayer_key_hex() -> String {
    hex::encode(keys::relayer().to_bytes())
}

/// Waits (bounded: 60 s) until a host answers at `base`.
async fn host_up(base: &str) {
    common::wait_ready(base).await;
}

/// Holds (`true`) or releases (`false`) the settlement of every deposit
/// lifi quoted: a held route stays `BRIDGING` however fast the chain is.
async fn lifi_holds(devnet: &StandaloneDevnet, hold: bool) {
    let lifi = &devnet.config.rails["lifi"].config["base_url"];
    let ms = if hold { 600_000 } else { 0 };
    let (code, text) = post(
        lifi,
        "/simulator/faults",
        &json!({"mode": "none", "settleDelayMs": ms}),
        &[],
    )
    .await;
    assert_eq!(code, 200, "{text}");
}

/// A live permit2 execute through lifi; the route's id.
async fn execute(base: &str, devnet: &StandaloneDevnet, amount: u64, nonce: u64) -> String {
    let mut body = permit_body_at(devnet.token(SRC, "USDC"), (SRC, DST), amount, nonce);
    body["rail"] = json!("lifi");
    let (code, text) = post(base, "/api/route/execute", &body, &[]).await;
    assert_eq!(code, 200, "{text}");
    serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_route_in_flight_survives_kill_9_of_a_host_served_from_relay_devnet() {
    let tmp = tempfile::tempdir().unwrap();
    let devnet = StandaloneDevnet::start(tmp.path()).await;
    let names: Vec<&str> = devnet.env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "RELAY_RELAYER_KEY",
            "RELAY_DEVNET_UPSTREAM_KEY",
            "RELAY_OWNER_TOKEN_SHA256"
        ]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(devnet.dir.join("devnet.env"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "devnet.env is the owner's only");
    }
    devnet.approve_permit2(SRC).await;
    let user = keys::anvil_address(1);
    let (src0, dst0) = (devnet.usdc(SRC, user).await, devnet.usdc(DST, user).await);

    let mut host = devnet.serve(&devnet.config_path(), &devnet.env);
    host_up(&devnet.base).await;
    // The owner token's hash came from devnet.env: mode self is open to it.
    let (_, st) = get(&format!("{}/api/status", devnet.base)).await;
    assert_eq!(st["status"], "operational", "{st}");

    // A held settlement keeps the route in flight; kill -9 the host there.
    lifi_holds(&devnet, true).await;
    let amount = 7_000_000;
    let id = execute(&devnet.base, &devnet, amount, 4_242).await;
    // The kill lands once the permit was pulled and the upstream holds
    // the deposit: the state on chain, not a guess at how long that takes.
    common::wait_up_to("the permit pulled", Duration::from_secs(120), async || {
        src0 - devnet.usdc(SRC, user).await == U256::from(amount)
    })
    .await;
    let (_, r) = get(&format!("{}/api/route/status?id={id}", devnet.base)).await;
    let status = r["status"].as_str().unwrap_or("").to_string();
    assert_eq!(status, "BRIDGING", "in flight at the kill: {r}");
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    eprintln!("kill -9 with route {id} {status}");
    lifi_holds(&devnet, false).await;

    let mut host = devnet.serve(&devnet.config_path(), &devnet.env);
    host_up(&devnet.base).await;
    let done = until_terminal(&devnet.base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert!(delivered > U256::ZERO, "{done}");
    assert_eq!(
        src0 - devnet.usdc(SRC, user).await,
        U256::from(amount),
        "the permit was pulled once"
    );
    wait_for("the payout on the destination chain", async || {
        devnet.usdc(DST, user).await - dst0 == delivered
    })
    .await;
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(!devnet.host_log().contains(&relayer_key_hex()));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_relayer_key_from_an_encrypted_keystore_serves_and_is_never_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let devnet = StandaloneDevnet::start(tmp.path()).await;
    let key_hex = relayer_key_hex();
    let keystore = devnet.dir.join("relayer.json");
    let pass = (
        "RELAY_KEYSTORE_PASSPHRASE".to_string(),
        "correct horse battery".to_string(),
    );
    let key_env = ("RELAY_RELAYER_KEY".to_string(), format!("0x{key_hex}"));

    // The operator's tool: key in, encrypted file out, only the address shown.
    let (code, out, err) = devnet.cli(
        &["keystore", "import", "--out", keystore.to_str().unwrap()],
        &[key_env.clone(), pass.clone()],
    );
    assert_eq!(code, 0, "{out}{err}");
    let relayer = keys::relayer().address().to_string();
    assert!(out.contains(&relayer), "{out}");
    assert!(
        !format!("{out}{err}").contains(&key_hex),
        "import printed the key"
    );
    let file = std::fs::read_to_string(&keystore).unwrap();
    let stored: Value = serde_json::from_str(&file).unwrap();
    assert_eq!(stored["crypto"]["kdf"], "scrypt", "{file}");
    assert!(!file.contains(&key_hex), "the key is stored encrypted");

    // The config names the keystore; the env has its passphrase, no key.
    let mut config = devnet.config.clone();
    config.relayer_keystore = Some(keystore.clone());
    let path = devnet.dir.join("keystore.toml");
    std::fs::write(&path, toml::to_string(&config).unwrap()).unwrap();
    let mut env: Vec<(String, String)> = devnet
        .env
        .iter()
        .filter(|(k, _)| k != "RELAY_RELAYER_KEY")
        .cloned()
        .collect();
    env.push(pass.clone());

    // A wrong passphrase refuses to start, saying so, showing no key.
    let mut wrong = env.clone();
    wrong.last_mut().unwrap().1 = "wrong".into();
    let mut refused = devnet.serve(&path, &wrong);
    let exit = refused.wait().unwrap();
    assert!(
        !exit.success(),
        "a wrong passphrase must not start the host"
    );
    assert!(
        devnet.host_log().contains("wrong passphrase"),
        "{}",
        devnet.host_log()
    );

    let mut host = devnet.serve(&path, &env);
    host_up(&devnet.base).await;
    devnet.approve_permit2(SRC).await;
    let user = keys::anvil_address(1);
    let dst0 = devnet.usdc(DST, user).await;
    let id = execute(&devnet.base, &devnet, 3_000_000, 77).await;
    let done = until_terminal(&devnet.base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    wait_for("the payout signed with the keystore's key", async || {
        devnet.usdc(DST, user).await - dst0 == delivered
    })
    .await;

    // `relay doctor` loads the same keystore and names the relayer.
    let cfg = path.to_str().unwrap();
    let (code, out, err) = devnet.cli(&["doctor", "--config", cfg], &env);
    assert!(
        out.lines()
            .any(|l| l.starts_with("relayer.key") && l.contains("pass") && l.contains(&relayer)),
        "{out}{err}"
    );
    assert_eq!(code, 0, "{out}{err}");
    host.kill().unwrap();
    host.wait().unwrap();
    for text in [devnet.host_log(), out, err] {
        assert!(!text.contains(&key_hex), "the key was printed: {text}");
        assert!(
            !text.contains(&pass.1),
            "the passphrase was printed: {text}"
        );
    }
}

/// `devnet.env` plus `extra` (replacing any variable of the same name).
fn with_env(devnet: &StandaloneDevnet, extra: &[(&str, String)]) -> Vec<(String, String)> {
    let mut env = devnet.env.clone();
    for (k, v) in extra {
        env.retain(|(n, _)| n != k);
        env.push((k.to_string(), v.clone()));
    }
    env
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_postgres_against_relay_devnet_finish_each_others_routes() {
    let tmp = tempfile::tempdir().unwrap();
    let devnet = StandaloneDevnet::start(tmp.path()).await;
    let db = relay_fixtures::postgres_database();
    let (pa, pb) = (free_port(), free_port());
    let replica = |port: u16| {
        with_env(
            &devnet,
            &[
                ("RELAY_DATABASE_URL", db.clone()),
                ("RELAY_LISTEN", format!("127.0.0.1:{port}")),
            ],
        )
    };
    let (a_base, b_base) = (
        format!("http://127.0.0.1:{pa}"),
        format!("http://127.0.0.1:{pb}"),
    );
    let mut a = devnet.serve(&devnet.config_path(), &replica(pa));
    host_up(&a_base).await;
    let mut b = devnet.serve(&devnet.config_path(), &replica(pb));
    host_up(&b_base).await;
    devnet.approve_permit2(SRC).await;
    let user = keys::anvil_address(1);
    let (src0, dst0) = (devnet.usdc(SRC, user).await, devnet.usdc(DST, user).await);

    // A route accepted by replica A is visible at B (one database) …
    lifi_holds(&devnet, true).await;
    let amount = 4_000_000;
    let id = execute(&a_base, &devnet, amount, 5_151).await;
    let (_, at_b) = get(&format!("{b_base}/api/route/status?id={id}")).await;
    assert_eq!(at_b["status"], "BRIDGING", "{at_b}");
    // … and once A dies mid-route, B finishes it.
    a.kill().unwrap();
    a.wait().unwrap();
    lifi_holds(&devnet, false).await;
    let done = until_terminal(&b_base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let delivered: U256 = done["to"]["estimated"].as_str().unwrap().parse().unwrap();
    assert_eq!(src0 - devnet.usdc(SRC, user).await, U256::from(amount));
    wait_for("the payout made by replica B", async || {
        devnet.usdc(DST, user).await - dst0 == delivered
    })
    .await;

    // B's own routes run too.
    let id = execute(&b_base, &devnet, 2_000_000, 5_152).await;
    let done = until_terminal(&b_base, &id).await;
    assert_eq!(done["status"], "DONE", "{done}");
    b.kill().unwrap();
    b.wait().unwrap();
}
