//! Per-call overhead of a rail call with a 1 KiB request, measured side by
//! side in one run:
//!
//! - `direct`: the echo rail's `quote` called in-process (the floor);
//! - `native`: the same rail as an abi_stable plugin through `LoadedRail`
//!   (supervisor deadline, `spawn_blocking`, JSON across the ABI);
//! - `wasm`: the same rail as a component through `LoadedRail` (a fresh
//!   store per call from the pre-instantiated component, epoch deadline,
//!   WIT lowering);
//! - `extism`: the same work as an Extism plugin (JSON in, the same rail's
//!   `quote`, JSON out) through `extism::Plugin::call`.
//!
//! `cargo bench -p relay-host --bench plugin_call`; under `cargo test
//! --benches` each function runs once.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use std::{hint::black_box, sync::Arc};

use criterion::{criterion_group, criterion_main, Criterion};
use relay_host::{capabilities::CapabilityBroker, config::HostConfig, runtime::rails::RailSet};
use relay_plugin_api::{
    Amount, ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
    QuoteRequest, Rail, Token,
};
use relay_registry::PluginKind;

/// A quote request whose JSON is about 1 KiB.
fn request() -> QuoteRequest {
    let usdc = |address: &str| Token {
        symbol: "USDC".into(),
        address: Some(address.into()),
        decimals: 6,
    };
    let mut req = QuoteRequest {
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(42161),
        from_token: usdc("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        to_token: usdc("0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
        amount: Amount::from_u128(5_000_000),
        from_address: Some("0x70997970C51812dc3A010C7d01b50e0d17dc79C8".into()),
        to_address: None,
        slippage_bps: 30,
        member: false,
    };
    let base = serde_json::to_string(&req).expect("serialises").len();
    req.to_address = Some(format!("0x{}", "7".repeat(1024 - base - 4)));
    req
}

/// The in-process floor's host: nothing reachable, a fixed clock.
struct NoHost;

impl Host for NoHost {
    fn http(&self, _req: HttpRequest) -> Result<HttpResponse, HostError> {
        Err(HostError::new(HostErrorKind::Denied, "benchmark"))
    }
    fn rpc(&self, _c: ChainRef, _m: &str, _p: &str) -> Result<String, HostError> {
        Err(HostError::new(HostErrorKind::Denied, "benchmark"))
    }
    fn now_ms(&self) -> u64 {
        0
    }
    fn deadline_ms(&self) -> u64 {
        0
    }
    fn log(&self, _level: LogLevel, message: &str) {
        black_box(message);
    }
    fn config(&self, _key: &str) -> Option<String> {
        None
    }
}

fn plugin_call(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = HostConfig {
        data_dir: dir.path().to_path_buf(),
        ..HostConfig::default()
    };
    let set = RailSet::new(
        &config,
        Arc::new(CapabilityBroker::new(&config.capabilities)),
    )
    .expect("rail set");
    let load = |kind, path: std::path::PathBuf| {
        let sha = relay_registry::sha256_file(&path).expect("artifact");
        rt.block_on(set.load_artifact(kind, &path, &sha))
            .expect("loads")
    };
    let native = load(
        PluginKind::Native,
        relay_fixtures::native_plugin("relay-rail-echo-native", &[]),
    );
    let wasm = load(
        PluginKind::Wasm,
        relay_fixtures::wasm_plugin("relay-rail-echo-wasm", &[]),
    );
    let extism_wasm = relay_fixtures::wasm_core_module(
        "plugins/testing/bench-extism/Cargo.toml",
        "relay-bench-extism",
    );
    let bytes = std::fs::read(extism_wasm).expect("extism module");
    let manifest = extism::Manifest::new([extism::Wasm::data(bytes)]);
    let mut extism = extism::Plugin::new(&manifest, [], true).expect("extism plugin");

    let req = request();
    let json = serde_json::to_string(&req).expect("serialises");
    assert!(
        (1000..=1050).contains(&json.len()),
        "request is {} bytes",
        json.len()
    );
    // All four do the same work and give the same answer.
    let expected = relay_rail_echo::EchoRail
        .quote(&NoHost, &req)
        .expect("direct")
        .amount_out;
    assert_eq!(
        rt.block_on(native.quote(req.clone()))
            .expect("native")
            .amount_out,
        expected
    );
    assert_eq!(
        rt.block_on(wasm.quote(req.clone()))
            .expect("wasm")
            .amount_out,
        expected
    );
    let out: String = extism.call("quote", json.as_str()).expect("extism");
    assert!(
        out.contains(&format!("\"amountOut\":\"{expected}\"")),
        "{out}"
    );

    let mut g = c.benchmark_group("plugin_call/quote_1KiB");
    g.bench_function("direct", |b| {
        b.iter(|| relay_rail_echo::EchoRail.quote(&NoHost, black_box(&req)))
    });
    g.bench_function("native", |b| {
        b.iter(|| rt.block_on(native.quote(black_box(req.clone()))))
    });
    g.bench_function("wasm", |b| {
        b.iter(|| rt.block_on(wasm.quote(black_box(req.clone()))))
    });
    g.bench_function("extism", |b| {
        b.iter(|| {
            extism
                .call::<&str, String>("quote", black_box(json.as_str()))
                .expect("extism call")
        })
    });
    g.finish();
}

criterion_group!(benches, plugin_call);
criterion_main!(benches);
