//! RPC failover for the relayer: a dead endpoint (closed port) and a hung
//! one (accepts, never answers) are passed over within the timeout, and a
//! JSON-RPC error answer is returned as is, not retried elsewhere.

use crate::common;
use alloy::providers::Provider;
use relay_chain::rpc::{FailoverError, FailoverProvider};
use relay_devnet::{Devnet, DevnetConfig};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn dead_and_hung_endpoints_fail_over_to_the_live_one() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453]))
        .await
        .unwrap();
    let (dead, hung, _hold) = common::dead_and_hung().await;
    let live = devnet.chain(8453).unwrap().rpc_url.clone();
    let p = FailoverProvider::new(
        &[dead.clone(), hung.clone(), live.clone()],
        None,
        Duration::from_millis(400),
    );

    let t = Instant::now();
    let id = p
        .run("eth_chainId", |p| async move { p.get_chain_id().await })
        .await
        .unwrap();
    assert_eq!(id, 8453);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "bounded by the per-endpoint timeout: {:?}",
        t.elapsed()
    );
    assert_eq!(
        p.ranked()[0],
        live,
        "the live endpoint is tried first from now on"
    );

    let t = Instant::now();
    p.run(
        "eth_blockNumber",
        |p| async move { p.get_block_number().await },
    )
    .await
    .unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "no time lost on the bad endpoints: {:?}",
        t.elapsed()
    );

    let err = p
        .run("bogus", |p| async move {
            p.raw_request::<_, serde_json::Value>("eth_noSuchMethod".into(), ())
                .await
        })
        .await
        .unwrap_err();
    assert!(matches!(err, FailoverError::Rpc(_)), "{err}");
    devnet.stop();
}
