//! The supervisor around plugin calls: a faulting rail is quarantined with
//! exponential back-off, reports down meanwhile, and serves again after.

use relay_capabilities::CapabilityBroker;
use relay_config::HostConfig;
use relay_plugin_api::{Amount, ChainRef, HealthStatus, QuoteRequest, Token};
use relay_registry::PluginKind;
use relay_runtime::{rails::RailSet, CallError, LoadedRail};
use std::{sync::Arc, time::Duration};

fn request(amount: u128) -> QuoteRequest {
    let usdc = Token {
        symbol: "USDC".into(),
        address: None,
        decimals: 6,
    };
    QuoteRequest {
        from_chain: ChainRef::Evm(1),
        to_chain: ChainRef::Evm(8453),
        from_token: usdc.clone(),
        to_token: usdc,
        amount: Amount::from_u128(amount),
        from_address: None,
        to_address: None,
        slippage_bps: 30,
        member: false,
    }
}

async fn echo(dir: &std::path::Path, base_ms: u64) -> LoadedRail {
    let artifact = relay_fixtures::wasm_plugin("relay-rail-echo-wasm", &[]);
    let mut config = HostConfig {
        data_dir: relay_fixtures::data_dir(dir),
        ..HostConfig::default()
    };
    config.runtime.quarantine_base_ms = base_ms;
    config.runtime.call_timeout_ms = 500;
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = RailSet::new(&config, broker).unwrap();
    let sha = relay_registry::sha256_file(&artifact).unwrap();
    set.load_artifact(PluginKind::Wasm, &artifact, &sha)
        .await
        .unwrap()
}

async fn until_released(rail: &LoadedRail) {
    for _ in 0..400 {
        if rail.quarantined().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("quarantine never ended");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_quarantines_the_rail_then_it_serves_again() {
    let dir = tempfile::tempdir().unwrap();
    let rail = echo(dir.path(), 300).await;
    let err = rail
        .quote(request(relay_rail_echo::PANIC_AMOUNT))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Fault { .. }), "{err}");

    let err = rail.quote(request(5_000_000)).await.unwrap_err();
    let CallError::Quarantined {
        remaining_ms,
        last_fault,
        ..
    } = err
    else {
        panic!("not quarantined: {err}")
    };
    assert!(remaining_ms <= 300, "{remaining_ms}");
    assert!(last_fault.contains("crashed"), "{last_fault}");
    assert_eq!(rail.health().await.status, HealthStatus::Down);

    until_released(&rail).await;
    let q = rail.quote(request(5_000_000)).await.unwrap();
    assert_eq!(q.amount_out, Amount::from_u128(5_000_000));
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_faults_back_off_exponentially() {
    let dir = tempfile::tempdir().unwrap();
    let rail = echo(dir.path(), 200).await;
    let _ = rail
        .quote(request(relay_rail_echo::HANG_AMOUNT))
        .await
        .unwrap_err();
    until_released(&rail).await;
    let err = rail
        .quote(request(relay_rail_echo::HANG_AMOUNT))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("deadline"), "{err}");
    let Err(CallError::Quarantined { remaining_ms, .. }) = rail.quote(request(1)).await else {
        panic!("not quarantined")
    };
    assert!(
        remaining_ms > 200 && remaining_ms <= 400,
        "second quarantine is doubled: {remaining_ms} ms"
    );
    // A typed rail error is normal operation, not a fault.
    until_released(&rail).await;
    let err = rail.quote(request(0)).await;
    assert!(!matches!(err, Err(CallError::Fault { .. })));
    assert!(rail.quarantined().is_none());
}
