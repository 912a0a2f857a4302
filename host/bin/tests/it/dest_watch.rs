//! A rail whose upstream has no status API (contract 1.1: `track` answers
//! `RailError::no_status_api`), end to end on the devnet: the host watches
//! the destination chain for the payout itself. The test plays the
//! upstream's solver, paying the recipient on the destination anvil; the
//! route ends `DONE` with that transfer as its `destTx`. A transfer below
//! `minOut`, or to another address, does not finish it, and a second route
//! to the same recipient does not take the first one's payout.
//!
//! The watch is durable: a host killed while it watches resumes after a
//! restart from where the watch began, and finds a payout made while it was
//! down even once the destination has moved far past it.
//!
//! The rail under test is the test-only `echo` rail (wasm) told by its
//! operator config to answer that it has no status API; it is the only rail
//! these hosts load, so no other suite sees it.

use crate::common::{
    approve_permit2, free_port, get, permit_body, post, spawn_host, until_terminal, wait_for,
    wait_ready,
};
use alloy::{
    primitives::{Address, B256, U256},
    providers::Provider,
};
use relay_config::{HostConfig, RailConfig};
use relay_devnet::{contracts::TestToken, keys, Devnet, DevnetConfig};
use relay_execution::dest_watch::MARGIN_BLOCKS;
use relay_host::devnet::{host_config, serve_on_loopback};
use relay_registry::PluginKind;
use serde_json::Value;
use std::path::Path;

const SRC: u64 = 8453;
/// Served by the echo rail, and an EVM chain with the devnet's USDC.
const DST: u64 = 1;
/// Anvil account that plays the upstream's solver on the destination.
const SOLVER: usize = 3;

/// The config of a host over `devnet` in `dir` whose only rail is echo,
/// answering "no status API".
async fn echo_config(devnet: &Devnet, dir: &Path) -> HostConfig {
    let plugin = dir.join("plugins").join("echo");
    std::fs::create_dir_all(&plugin).unwrap();
    let artifact = plugin.join("echo.wasm");
    std::fs::copy(
        relay_fixtures::wasm_plugin("relay-rail-echo-wasm", &[]),
        &artifact,
    )
    .unwrap();
    relay_runtime::package::write_manifest(&artifact, PluginKind::Wasm)
        .await
        .unwrap();
    let mut config = host_config(
        devnet,
        HostConfig {
            data_dir: relay_fixtures::data_dir(&dir.join("data")),
            plugins_dir: dir.join("plugins"),
            ..HostConfig::default()
        },
    );
    config.limits.enabled = false;
    let mut echo = RailConfig::default();
    echo.config.insert(
        relay_rail_echo::TRACK_KEY.into(),
        relay_rail_echo::NO_STATUS_API.into(),
    );
    config.rails.insert("echo".into(), echo);
    config
}

/// Executes 5 USDC SRC → DST on echo, paying `recipient`.
async fn execute(base: &str, devnet: &Devnet, nonce: u64, recipient: Address) -> Value {
    let mut body = permit_body(devnet, (SRC, DST), 5_000_000, nonce);
    body["toAddress"] = recipient.to_string().into();
    body["rail"] = "echo".into();
    let (code, text) = post(base, "/api/route/execute", &body, &[]).await;
    assert_eq!(code, 200, "{text}");
    let receipt: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(receipt["bridge"], "echo", "{receipt}");
    receipt
}

async fn status(base: &str, id: &str) -> Value {
    get(&format!("{base}/api/route/status?id={id}")).await.1
}

/// Waits until the host's watch of route `id` has scanned `block`; the
/// route must still be waiting then. Answers its status.
async fn scanned(base: &str, id: &str, block: u64) -> Value {
    let mut last = Value::Null;
    wait_for(
        &format!("the watch of {id} to scan block {block}"),
        async || {
            last = status(base, id).await;
            last["upstream"]["watch"]["scannedTo"]
                .as_u64()
                .is_some_and(|s| s >= block)
        },
    )
    .await;
    assert_eq!(last["status"], "BRIDGING", "{last}");
    assert_eq!(last["upstream"]["state"], "WATCHING_DESTINATION", "{last}");
    last
}

/// The solver pays `amount` of DST's USDC to `to`: its hash and block.
async fn pay(devnet: &Devnet, to: Address, amount: U256) -> (B256, u64) {
    let c = devnet.chain(DST).unwrap();
    let receipt = TestToken::new(c.deployment.usdc, c.provider())
        .transfer(to, amount)
        .from(keys::anvil_address(SOLVER))
        .send()
        .await
        .unwrap()
        .get_receipt()
        .await
        .unwrap();
    assert!(receipt.status(), "the solver's transfer mined");
    (receipt.transaction_hash, receipt.block_number.unwrap())
}

/// Mines `n` empty blocks on DST.
async fn mine(devnet: &Devnet, n: u64) {
    let p = devnet.chain(DST).unwrap().provider();
    let _: Value = p
        .raw_request("anvil_mine".into(), (format!("{n:#x}"),))
        .await
        .unwrap();
}

fn amount(v: &Value) -> U256 {
    v.as_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_host_finishes_a_route_on_its_payout_seen_on_the_destination_chain() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let served = serve_on_loopback(echo_config(&devnet, dir.path()).await)
        .await
        .expect("host serves");
    let base = served.base.as_str();
    approve_permit2(&devnet, SRC, 1).await;
    // A recipient with no history, so only this test's transfers reach it.
    let recipient = Address::repeat_byte(0x5a);
    let elsewhere = Address::repeat_byte(0x5b);

    let first = execute(base, &devnet, 9_101, recipient).await;
    let a = first["id"].as_str().unwrap().to_string();
    let min = amount(&first["to"]["min"]);
    assert!(min > U256::ZERO, "{first}");
    let waiting = scanned(base, &a, 0).await;
    let watch = &waiting["upstream"]["watch"];
    assert_eq!(
        (watch["chain"].as_u64(), watch["minOut"].as_str()),
        (Some(DST), first["to"]["min"].as_str()),
        "{waiting}"
    );
    assert!(
        watch["recipient"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case(&recipient.to_string()),
        "{waiting}"
    );

    // Too little to the recipient, enough to someone else: not the payout.
    pay(&devnet, recipient, min - U256::from(1u8)).await;
    let (_, block) = pay(&devnet, elsewhere, min).await;
    scanned(base, &a, block).await;

    // The payout: the route is DONE with it as its destTx.
    let (paid_a, block_a) = pay(&devnet, recipient, min).await;
    let done = until_terminal(base, &a).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["destTx"], format!("{paid_a:#x}"), "{done}");

    // A second route to the same recipient starts watching before that
    // payout, and does not take it.
    let second = execute(base, &devnet, 9_102, recipient).await;
    let b = second["id"].as_str().unwrap().to_string();
    let waiting = scanned(base, &b, block_a).await;
    let from = waiting["upstream"]["watch"]["fromBlock"].as_u64().unwrap();
    assert!(
        from <= block_a,
        "the second watch covers the first payout: {waiting}"
    );
    let (paid_b, _) = pay(&devnet, recipient, amount(&second["to"]["min"])).await;
    let done = until_terminal(base, &b).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["destTx"], format!("{paid_b:#x}"), "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_host_resumes_the_watch_where_it_began() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut config = echo_config(&devnet, dir.path()).await;
    config.listen = format!("127.0.0.1:{port}").parse().unwrap();
    config.runtime.reload_interval_ms = 0;
    let toml = toml::to_string(&config).unwrap();
    std::fs::write(dir.path().join("relay.toml"), toml).unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let mut host = spawn_host(dir.path());
    wait_ready(&base).await;
    approve_permit2(&devnet, SRC, 1).await;
    let recipient = Address::repeat_byte(0x6a);

    let receipt = execute(&base, &devnet, 9_201, recipient).await;
    let id = receipt["id"].as_str().unwrap().to_string();
    let watching = scanned(&base, &id, 0).await;
    host.kill().unwrap(); // SIGKILL, mid-watch
    host.wait().unwrap();

    // While the host is down the solver pays, and the destination moves on
    // far past the margin a fresh watch would begin with.
    let (paid, block) = pay(&devnet, recipient, amount(&receipt["to"]["min"])).await;
    mine(&devnet, 3 * MARGIN_BLOCKS).await;
    let from = watching["upstream"]["watch"]["fromBlock"].as_u64().unwrap();
    assert!(from <= block, "{watching}");

    let mut host = spawn_host(dir.path());
    wait_ready(&base).await;
    let done = until_terminal(&base, &id).await;
    host.kill().unwrap();
    host.wait().unwrap();
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(done["destTx"], format!("{paid:#x}"), "{done}");
}
