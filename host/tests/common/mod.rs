//! Shared by the host's integration tests: a real host on a real devnet,
//! plain HTTP helpers, bounded polling.
#![allow(dead_code)]

use std::{path::Path, time::Duration};

use relay_devnet::Devnet;
use relay_host::{config::HostConfig, devnet::host_config, server::Host};
use serde_json::Value;

/// A host serving on an ephemeral port; dropping it stops the server.
pub struct Running {
    pub base: String,
    pub host_state: relay_host::api::AppState,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Serves a host over `devnet` with the packaged plugins; `tweak` edits the config.
pub async fn serve(devnet: &Devnet, dir: &Path, tweak: impl FnOnce(&mut HostConfig)) -> Running {
    let mut base = HostConfig {
        data_dir: dir.join("data"),
        plugins_dir: relay_fixtures::plugins_copy(&dir.join("plugins")),
        ..HostConfig::default()
    };
    base.runtime.reload_interval_ms = 100;
    let mut config = host_config(devnet, base);
    tweak(&mut config);
    let signer =
        relay_host::chain::signer::RelayerSigner::from_signer(relay_devnet::keys::relayer());
    let host = Host::build_with_signer(config, Some(signer))
        .await
        .expect("host builds");
    let state = host.state.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(host.serve_on(listener, async {
        let _ = rx.await;
    }));
    Running {
        base,
        host_state: state,
        _stop: tx,
    }
}

/// GET a JSON body.
pub async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.expect("JSON body"))
}

/// Polls `probe` (bounded: 10 s) until it holds.
pub async fn wait_for(what: &str, mut probe: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if probe().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A stored route as the executor writes one: 5 USDC 8453 → 42161.
pub fn sample_route(id: &str) -> relay_host::execution::model::RouteRecord {
    use relay_host::execution::model::{RouteRecord, RouteStatus};
    use relay_plugin_api::{Amount, ChainRef, ExecutionPlan, SourceMode};
    RouteRecord {
        id: id.into(),
        status: RouteStatus::Pending,
        stage: Some("RECEIVING".into()),
        rail: "floatlane".into(),
        lane: "evm->evm".into(),
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        from_token: "USDC".into(),
        to_token: "USDC".into(),
        amount: Amount::from_u128(5_000_000),
        estimated: Amount::from_u128(4_987_500),
        min_out: Amount::from_u128(4_987_500),
        relay_fee: Amount::from_u128(12_500),
        sender: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(),
        recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into(),
        mode: SourceMode::Permit2,
        plan: ExecutionPlan::default(),
        next_step: 0,
        track_ref: None,
        src_tx: None,
        dest_tx: None,
        failure: None,
        created_ms: relay_host::capabilities::now_ms(),
        permit: None,
    }
}
