//! The book's client examples (`docs/examples/`, issue 47), run as a user
//! runs them against the devnet mesh, with libraries no one here wrote:
//!
//! - `route-viem.mjs` (viem): a fresh wallet holding USDC and no ETH
//!   prepares, signs as served (two signatures: the EIP-2612 permit for
//!   Permit2 and the witness), executes and tracks the route over SSE to
//!   `DONE` — the recipient is paid on the destination chain and the
//!   wallet still holds no ETH;
//! - `route-permit2-sdk.mjs` (the Uniswap permit2-sdk with ethers v5): one
//!   `PermitTransferFrom` signature in `mode: "permit2"`, to `DONE`;
//! - `sandbox-walk.mjs` (Node's fetch): a sandbox route followed over SSE
//!   through every stage to `DONE`, nothing signed or moved;
//! - `mcp-quote.py` (the MCP SDK from PyPI): lists the tools and quotes;
//! - `webhook-receiver.py` (`standardwebhooks` from PyPI): hooked to a
//!   settled route, it verifies the delivery and prints its completion.
//!
//! The JavaScript examples are copied into the directory where viem, the
//! permit2-sdk and ethers are installed (`conformance/tools/viem.sh`),
//! exactly as the example's header tells a user to run it.

use alloy::{primitives::U256, providers::Provider, signers::local::PrivateKeySigner};
use relay_devnet::{keys, Devnet, DevnetConfig, Token};
use serde_json::Value;
use std::path::Path;

use crate::common::{self, serve, usdc_balance, Running};

const SRC: u64 = 8453;
const DST: u64 = 42161;
const AMOUNT: u64 = 2_000_000;

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/examples")
        .join(name)
}

/// Runs the JavaScript example `name` where its libraries are installed,
/// as `key`; its one line of JSON.
async fn run_js(
    h: &Running,
    name: &str,
    key: &PrivateKeySigner,
    to: alloy::primitives::Address,
) -> Value {
    let dir = crate::router::viem_dir();
    let copy = dir.join(format!("docs-example-{}-{name}", std::process::id()));
    std::fs::copy(example(name), &copy).unwrap();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(&copy)
        .env("RELAY_URL", &h.base)
        .env("PRIVATE_KEY", format!("0x{}", hex::encode(key.to_bytes())))
        .env("TO", to.to_string())
        .env("AMOUNT", AMOUNT.to_string());
    cmd.kill_on_drop(true);
    let bound = std::time::Duration::from_secs(360);
    let out = tokio::time::timeout(bound, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{name} did not finish within {bound:?}"))
        .expect("node runs");
    let _ = std::fs::remove_file(&copy);
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{name}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_viem_example_takes_a_wallet_with_no_eth_through_its_first_route() {
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let user = keys::seeded_signer("docs-viem-first-route");
    let recipient = keys::seeded_signer("docs-viem-recipient").address();
    devnet
        .mint(SRC, Token::Usdc, user.address(), U256::from(AMOUNT))
        .await
        .unwrap();
    let address = user.address();
    let eth = |c: u64| {
        let provider = devnet.chain(c).unwrap().provider();
        async move { provider.get_balance(address).await.unwrap() }
    };
    assert_eq!(eth(SRC).await, U256::ZERO);

    let done = run_js(&h, "route-viem.mjs", &user, recipient).await;
    assert_eq!(done["status"], "DONE", "{done}");
    assert_eq!(
        done["signatures"], 2,
        "a first route: the permit and the witness: {done}"
    );
    assert_eq!(usdc_balance(&devnet, SRC, user.address()).await, U256::ZERO);
    let (status, receipt) = common::get(&format!(
        "{}/api/route/status?id={}",
        h.base,
        done["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(status, 200);
    let delivered: U256 = receipt["to"]["estimated"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(delivered > U256::ZERO);
    assert_eq!(usdc_balance(&devnet, DST, recipient).await, delivered);
    assert_eq!(eth(SRC).await, U256::ZERO, "the wallet paid no gas");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_permit2_sdk_example_routes_with_one_signature() {
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    common::approve_permit2(&devnet, SRC, 1).await;
    let user = keys::anvil_signer(1);
    let recipient = keys::seeded_signer("docs-permit2-sdk-recipient").address();
    let before = usdc_balance(&devnet, SRC, user.address()).await;
    let done = run_js(&h, "route-permit2-sdk.mjs", &user, recipient).await;
    assert_eq!(
        (done["status"].as_str(), done["signatures"].as_u64()),
        (Some("DONE"), Some(1)),
        "{done}"
    );
    assert_eq!(
        before - usdc_balance(&devnet, SRC, user.address()).await,
        U256::from(AMOUNT)
    );
    assert!(usdc_balance(&devnet, DST, recipient).await > U256::ZERO);
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_walk_follows_every_stage_and_moves_nothing() {
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let relayer = keys::relayer().address();
    let nonce = |c: u64| {
        let provider = devnet.chain(c).unwrap().provider();
        async move { provider.get_transaction_count(relayer).await.unwrap() }
    };
    let before = (nonce(SRC).await, nonce(DST).await);
    let walked = run_js(&h, "sandbox-walk.mjs", &keys::anvil_signer(1), relayer).await;
    assert!(
        walked["id"].as_str().unwrap().starts_with("sbx_") && walked["sandbox"] == true,
        "{walked}"
    );
    assert_eq!(
        walked["stages"],
        serde_json::json!(["RECEIVING", "SWAPPING", "SENDING", "COMPLETED"]),
        "{walked}"
    );
    assert_eq!(walked["status"], "DONE", "{walked}");
    assert!(walked["quoted"]["estimated"].as_str().is_some(), "{walked}");
    assert_eq!(
        (nonce(SRC).await, nonce(DST).await),
        before,
        "the relayer sent nothing"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_example_lists_the_tools_and_quotes() {
    let py =
        std::env::var("RELAY_MCP_PY").expect("RELAY_MCP_PY (conformance/tools/mcp.sh prints it)");
    let (devnet, _dir, h) = common::devnet_host([SRC, DST]).await;
    let out = tokio::process::Command::new(py)
        .arg(example("mcp-quote.py"))
        .env("RELAY_URL", &h.base)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "quote"),
        "{seen}"
    );
    assert!(
        seen["bridge"].as_str().is_some_and(|b| !b.is_empty()),
        "{seen}"
    );
    let estimated: U256 = seen["estimated"].as_str().unwrap().parse().unwrap();
    assert!(
        estimated > U256::ZERO && estimated < U256::from(5_000_000u64),
        "{seen}"
    );
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_webhook_example_verifies_a_routes_completion() {
    use tokio::io::AsyncBufReadExt;
    let py = std::env::var("RELAY_WEBHOOK_PY")
        .expect("RELAY_WEBHOOK_PY (conformance/tools/webhooks.sh prints it)");
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.notify.allow_http = vec!["127.0.0.1".into()];
        c.notify.poll_interval_ms = 50;
    })
    .await;
    let secret = "whsec_ZG9jcyBleGFtcGxlIHNoYXJlZCBzZWNyZXQ=";
    let mut receiver = tokio::process::Command::new(py)
        .arg(example("webhook-receiver.py"))
        .env("WEBHOOK_SECRET", secret)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(receiver.stdout.take().unwrap()).lines();
    let next = async |lines: &mut tokio::io::Lines<_>| {
        let line = tokio::time::timeout(std::time::Duration::from_secs(120), lines.next_line());
        line.await
            .expect("the receiver prints within 2 minutes")
            .unwrap()
            .expect("a line")
    };
    let listening: String = next(&mut lines).await;
    let url = format!(
        "http://127.0.0.1:{}/hook",
        listening.trim_start_matches("listening ")
    );

    common::approve_permit2(&devnet, SRC, 1).await;
    let body = common::permit_body(&devnet, (SRC, DST), AMOUNT, 21);
    let (receipt, done) = common::execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let route = receipt["id"].as_str().unwrap();
    let signature = crate::webhooks::hook_signature(&keys::anvil_signer(1), route, &url);
    let hook =
        serde_json::json!({"routeId": route, "url": url, "secret": secret, "signature": signature});
    let (code, text) = common::post(&h.base, "/api/hooks", &hook, &[]).await;
    assert_eq!(code, 200, "{text}");

    let delivered: Value = serde_json::from_str(&next(&mut lines).await).unwrap();
    assert_eq!(
        (delivered["routeId"].as_str(), delivered["status"].as_str()),
        (Some(route), Some("DONE")),
        "{delivered}"
    );
    assert_eq!(delivered["destTx"], done["destTx"], "{delivered}");
    devnet.stop();
}
