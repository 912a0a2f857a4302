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
    let host = Host::build(config).await.expect("host builds");
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
