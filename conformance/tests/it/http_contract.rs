//! The HTTP API contract suite against a live host on the devnet: the
//! `relay up` configuration (nine rails, upstream simulators), the spec's
//! rate limits on, served over real HTTP.

use relay_config::HostConfig;
use relay_conformance::http::{run, Target};
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, serve_on_loopback};

#[tokio::test(flavor = "multi_thread")]
async fn a_devnet_host_honours_the_http_contract() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let sims = relay_simulators::Simulators::start(&devnet).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = HostConfig {
        data_dir: relay_fixtures::data_dir(&dir.path().join("data")),
        plugins_dir: relay_fixtures::plugins_copy(&dir.path().join("plugins")),
        ..HostConfig::default()
    };
    let mut config = point_rails_at(&devnet, &sims, host_config(&devnet, base));
    // The suite sends more executes than a client may per minute (8).
    config.limits.per_minute.insert("execute".into(), 100);
    let served = serve_on_loopback(config).await.unwrap();
    let url = served.base.clone();
    let report = run(&Target {
        base: url,
        from_chain: 8453,
        to_chain: 42161,
        token: "USDC".into(),
        amount: "5000000".into(),
        address: relay_devnet::keys::anvil_address(1).to_string(),
    })
    .await;
    for r in &report.results {
        eprintln!(
            "{} {} {}",
            if r.passed { "PASS" } else { "FAIL" },
            r.rule,
            r.detail
        );
    }
    assert!(report.passed(), "{report:#?}");
    drop(served);
    devnet.stop();
}
