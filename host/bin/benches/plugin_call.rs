//! Per-call overhead of a rail call with a 1 KiB request, measured side by
//! side in one run:
//!
//! - `direct`: the echo rail's `quote` called in-process (the floor);
//! - `native`: the same rail as an abi_stable plugin through `LoadedRail`
//!   (supervisor deadline, a hand-off to the rail's worker thread,
//!   MessagePack across the ABI);
//! - `wasm`: the same rail as a component through `LoadedRail` (a fresh
//!   store per call from the pre-instantiated component, epoch deadline,
//!   WIT lowering);
//! - `extism` (with `--features bench-extism`): the same work as an Extism
//!   plugin (JSON in, the same rail's `quote`, JSON out) through
//!   `extism::Plugin::call`, under the same deadline and memory limit,
//!   without WASI; its one instance is reused across calls.
//!
//! All four run the one rail (`relay-rail-echo`), so the differences are
//! the packagings' overhead, and on the host's allocator (jemalloc, linked
//! in with the host's library below) as in `relay serve`. The bench builds its artifacts itself (via
//! `relay_fixtures`, i.e. `plugins/build-wasm.sh`).
//!
//! `cargo bench -p relay-host --features bench-extism --bench plugin_call`
//! (without the feature, Extism is neither built nor measured — the
//! workspace's tests do not build it); under `cargo test --benches` each
//! function runs once.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

// The host's global allocator: the process runs on what `relay serve` runs on.
extern crate relay_host as _;

use std::{
    hint::black_box,
    path::{Path, PathBuf},
    sync::Arc,
};

use criterion::{criterion_group, criterion_main, Criterion};
use relay_capabilities::CapabilityBroker;
use relay_config::HostConfig;
use relay_plugin_api::{
    Amount, ChainRef, Host, HostError, HostErrorKind, HttpRequest, HttpResponse, LogLevel,
    QuoteRequest, Rail, RailQuote, Token,
};
use relay_registry::PluginKind;
use relay_runtime::{rails::RailSet, LoadedRail};
use tokio::runtime::Runtime;

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

/// The host configuration every packaging runs under (defaults: deadline,
/// memory limit), with its data directory (compiled-module cache) in `dir`.
fn host_config(dir: &Path) -> HostConfig {
    HostConfig {
        data_dir: dir.to_path_buf(),
        ..HostConfig::default()
    }
}

/// Builds (if stale) and loads the echo rail's native and wasm packagings
/// through the real loader.
fn load_rails(rt: &Runtime, config: &HostConfig) -> (LoadedRail, LoadedRail) {
    let broker = Arc::new(CapabilityBroker::new(&config.capabilities));
    let set = RailSet::new(config, broker).expect("rail set");
    let load = |kind, path: PathBuf| {
        let sha = relay_registry::sha256_file(&path).expect("artifact");
        rt.block_on(set.load_artifact(kind, &path, &sha))
            .expect("loads")
    };
    let native = relay_fixtures::native_plugin("relay-rail-echo-native", &[]);
    let wasm = relay_fixtures::wasm_plugin("relay-rail-echo-wasm", &[]);
    (
        load(PluginKind::Native, native),
        load(PluginKind::Wasm, wasm),
    )
}

/// Builds (if stale) the Extism guest and instantiates it with the same
/// deadline and memory limit as a relay wasm call, and no WASI (the relay
/// components get none either).
#[cfg(feature = "bench-extism")]
fn extism_plugin(config: &relay_config::RuntimeConfig) -> extism::Plugin {
    use std::time::Duration;
    let module = relay_fixtures::wasm_core_module(
        "plugins/testing/bench-extism/Cargo.toml",
        "relay-bench-extism",
    );
    let bytes = std::fs::read(module).expect("extism module");
    let pages = u32::try_from(config.wasm_memory_mib * 16).expect("memory limit in pages");
    let manifest = extism::Manifest::new([extism::Wasm::data(bytes)])
        .with_timeout(Duration::from_millis(config.call_timeout_ms))
        .with_memory_max(pages);
    extism::Plugin::new(&manifest, [], false).expect("extism plugin")
}

/// The request and its JSON, which must be about 1 KiB.
fn request_and_json() -> (QuoteRequest, String) {
    let req = request();
    let json = serde_json::to_string(&req).expect("serialises");
    assert!(
        (1000..=1050).contains(&json.len()),
        "request is {} bytes",
        json.len()
    );
    (req, json)
}

/// Everything measured, loaded and checked to give the same answer.
struct Subjects {
    req: QuoteRequest,
    /// The request as Extism's JSON (built without the feature too: the
    /// request's size is checked either way).
    #[cfg_attr(not(feature = "bench-extism"), allow(dead_code))]
    json: String,
    native: LoadedRail,
    wasm: LoadedRail,
    #[cfg(feature = "bench-extism")]
    extism: extism::Plugin,
    /// Declared last so it is dropped after the rails that run on it.
    rt: Runtime,
}

impl Subjects {
    fn new(dir: &Path) -> Self {
        let rt = Runtime::new().expect("runtime");
        let config = host_config(dir);
        let (native, wasm) = load_rails(&rt, &config);
        let (req, json) = request_and_json();
        let mut subjects = Self {
            req,
            json,
            native,
            wasm,
            #[cfg(feature = "bench-extism")]
            extism: extism_plugin(&config.runtime),
            rt,
        };
        subjects.assert_same_answers();
        subjects
    }

    fn direct(&self) -> RailQuote {
        relay_rail_echo::EchoRail
            .quote(&NoHost, black_box(&self.req))
            .expect("direct")
    }

    fn loaded(&self, rail: &LoadedRail) -> RailQuote {
        self.rt
            .block_on(rail.quote(black_box(self.req.clone())))
            .expect("plugin quote")
    }

    #[cfg(feature = "bench-extism")]
    fn extism(&mut self) -> String {
        self.extism
            .call::<&str, String>("quote", black_box(self.json.as_str()))
            .expect("extism call")
    }

    /// All four do the same work: the same rail's answer, whatever the
    /// packaging.
    fn assert_same_answers(&mut self) {
        let expected = self.direct().amount_out;
        assert_eq!(self.loaded(&self.native).amount_out, expected, "native");
        assert_eq!(self.loaded(&self.wasm).amount_out, expected, "wasm");
        #[cfg(feature = "bench-extism")]
        {
            let out = self.extism();
            let quote: RailQuote = serde_json::from_str(&out).expect("extism answers a RailQuote");
            assert_eq!(quote.amount_out, expected, "extism");
        }
    }
}

fn plugin_call(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    #[cfg_attr(not(feature = "bench-extism"), allow(unused_mut))]
    let mut s = Subjects::new(dir.path());
    let mut g = c.benchmark_group("plugin_call/quote_1KiB");
    g.bench_function("direct", |b| b.iter(|| s.direct()));
    g.bench_function("native", |b| b.iter(|| s.loaded(&s.native)));
    g.bench_function("wasm", |b| b.iter(|| s.loaded(&s.wasm)));
    #[cfg(feature = "bench-extism")]
    g.bench_function("extism", |b| b.iter(|| s.extism()));
    g.finish();
}

criterion_group!(benches, plugin_call);
criterion_main!(benches);
