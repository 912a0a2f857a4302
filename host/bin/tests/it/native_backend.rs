//! The native packaging end to end: the `native-echo` test rail built as a
//! real cdylib, loaded by [`NativeBackend`] and called with capabilities
//! lent by a real [`CapabilityBroker`].

use std::{
    env::consts::{DLL_PREFIX, DLL_SUFFIX},
    path::{Path, PathBuf},
    process::Command,
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use abi_stable::library::RootModule;
use relay_capabilities::{CallCapabilities, CapabilityBroker, CapabilityConfig, RailPolicy};
use relay_plugin_api::{
    Amount, ChainRef, HealthStatus, QuoteRequest, RailErrorKind, RailQuote, Token, TrackRequest,
    U256,
};
use relay_plugin_native::RailModuleRef;
use relay_runtime::{
    native::{NativeBackend, NativeLoadError},
    BackendError, PluginBackend, RailCall, RailReply,
};

// The magic amounts of `plugins/testing/native-echo` (its `rail.rs`).
const PANIC_AMOUNT: u128 = 666;
const HANG_AMOUNT: u128 = 777;
const UNDECLARED_EGRESS_AMOUNT: u128 = 403;

const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The built plugin artifacts.
struct Artifacts {
    /// `native-echo`.
    echo: PathBuf,
    /// `native-echo` declaring contract 9.0.0.
    contract_9: PathBuf,
}

/// Builds `native-echo` (library and examples) once per test process, into
/// the target directory this test binary was built in.
fn artifacts() -> &'static Artifacts {
    static ARTIFACTS: OnceLock<Artifacts> = OnceLock::new();
    ARTIFACTS.get_or_init(|| {
        // <target>/<profile>/deps/native_backend-<hash>
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target profile dir");
        let target_dir = profile_dir.parent().expect("target dir");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .expect("workspace root");
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "-p",
                "native-echo",
                "--lib",
                "--examples",
                "--profile",
                profile,
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(workspace)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building native-echo failed");
        let dylib = |name: &str| format!("{DLL_PREFIX}{name}{DLL_SUFFIX}");
        Artifacts {
            echo: profile_dir.join(dylib("native_echo")),
            contract_9: profile_dir
                .join("examples")
                .join(dylib("native_echo_contract_9")),
        }
    })
}

fn load_echo() -> NativeBackend {
    NativeBackend::load(&artifacts().echo).expect("native-echo loads")
}

/// Capabilities for one call to `backend`'s rail, policy from its manifest.
fn caps(backend: &NativeBackend, timeout: Duration) -> Arc<CallCapabilities> {
    static BROKER: OnceLock<Arc<CapabilityBroker>> = OnceLock::new();
    let broker =
        BROKER.get_or_init(|| Arc::new(CapabilityBroker::new(&CapabilityConfig::default())));
    let manifest = backend.manifest();
    let policy = RailPolicy {
        rail_id: manifest.id.clone(),
        egress: manifest.egress.clone(),
        rpc_chains: manifest.rpc_chains.clone(),
        ..Default::default()
    };
    Arc::new(broker.lend(Arc::new(policy), timeout))
}

fn usdc() -> Token {
    Token {
        symbol: "USDC".into(),
        address: Some("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48".into()),
        decimals: 6,
    }
}

fn quote_request(amount: Amount) -> QuoteRequest {
    QuoteRequest {
        from_chain: ChainRef::Evm(1),
        to_chain: ChainRef::Evm(8453),
        from_token: usdc(),
        to_token: usdc(),
        amount,
        from_address: None,
        to_address: Some("0x000000000000000000000000000000000000dEaD".into()),
        slippage_bps: 50,
        member: false,
    }
}

async fn quote(
    backend: &NativeBackend,
    amount: u128,
    timeout: Duration,
) -> Result<RailQuote, BackendError> {
    let call = RailCall::Quote(quote_request(Amount::from_u128(amount)));
    match backend.call(call, caps(backend, timeout)).await? {
        RailReply::Quote(quote) => Ok(quote),
        other => panic!("a quote call answered {other:?}"),
    }
}

/// Runs `test` on a multi-thread runtime that is shut down without waiting
/// for blocking workers, which a hung native call leaves behind.
fn on_runtime(test: impl std::future::Future<Output = ()>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime builds");
    runtime.block_on(test);
    runtime.shutdown_background();
}

#[test]
fn manifest_quote_and_health_round_trip_with_values() {
    on_runtime(async {
        let backend = load_echo();
        assert_eq!(backend.manifest().id, "native-echo");
        assert_eq!(
            backend.contract_version(),
            &relay_plugin_api::contract_version()
        );

        let reply = backend
            .call(RailCall::Manifest, caps(&backend, CALL_TIMEOUT))
            .await
            .unwrap();
        assert_eq!(reply, RailReply::Manifest(backend.manifest().clone()));

        // Above 2^128: only a U256 end to end survives this.
        let huge = Amount((U256::from(1u8) << 200) + U256::from(12_345u32));
        let call = RailCall::Quote(quote_request(huge));
        let RailReply::Quote(quote) = backend
            .call(call, caps(&backend, CALL_TIMEOUT))
            .await
            .unwrap()
        else {
            panic!("not a quote");
        };
        assert_eq!(
            (quote.amount_in, quote.amount_out, quote.min_out),
            (huge, huge, huge)
        );
        assert_eq!(
            quote.upstream_ref.as_deref(),
            Some("0x000000000000000000000000000000000000dEaD")
        );
        assert!(
            quote.detail["calls"].as_u64().is_some_and(|n| n >= 1),
            "{}",
            quote.detail
        );

        let reply = backend
            .call(RailCall::Health, caps(&backend, CALL_TIMEOUT))
            .await
            .unwrap();
        assert!(matches!(reply, RailReply::Health(h) if h.status == HealthStatus::Operational));
    });
}

#[test]
fn typed_rail_errors_cross_the_boundary() {
    on_runtime(async {
        let backend = load_echo();
        let call = RailCall::Track(TrackRequest {
            route_id: "r-1".into(),
            reference: None,
            from_chain: ChainRef::Evm(1),
            to_chain: ChainRef::Evm(8453),
            src_tx: None,
        });
        let err = backend
            .call(call, caps(&backend, CALL_TIMEOUT))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, BackendError::Rail(e) if e.kind == RailErrorKind::NotFound && e.message.contains("r-1")),
            "{err:?}"
        );
    });
}

#[test]
fn a_panic_returns_crashed_and_the_next_call_succeeds() {
    on_runtime(async {
        let backend = load_echo();
        let err = quote(&backend, PANIC_AMOUNT, CALL_TIMEOUT)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, BackendError::Crashed(m) if m.starts_with("panicked: native-echo was asked to panic (at ")),
            "{err:?}"
        );
        let quote = quote(&backend, 5_000_000, CALL_TIMEOUT)
            .await
            .expect("the rail still serves");
        assert_eq!(quote.amount_out, Amount::from_u128(5_000_000));
    });
}

#[test]
fn a_hang_misses_its_deadline_on_time_and_the_host_keeps_serving() {
    on_runtime(async {
        let backend = load_echo();
        let timeout = Duration::from_millis(300);
        let started = Instant::now();
        let err = quote(&backend, HANG_AMOUNT, timeout).await.unwrap_err();
        let elapsed = started.elapsed();
        assert!(matches!(err, BackendError::DeadlineExceeded), "{err:?}");
        assert!(
            elapsed >= timeout,
            "returned before the deadline: {elapsed:?}"
        );
        assert!(
            elapsed < timeout + Duration::from_millis(250),
            "returned late: {elapsed:?}"
        );

        let quote = quote(&backend, 7, CALL_TIMEOUT)
            .await
            .expect("the host still serves");
        assert_eq!(quote.amount_out, Amount::from_u128(7));
    });
}

#[test]
fn undeclared_egress_comes_back_as_a_denied_capability_error() {
    on_runtime(async {
        let backend = load_echo();
        let err = quote(&backend, UNDECLARED_EGRESS_AMOUNT, CALL_TIMEOUT)
            .await
            .unwrap_err();
        let BackendError::Rail(err) = err else {
            panic!("expected a typed rail error, got {err:?}");
        };
        assert_eq!(err.kind, RailErrorKind::Capability);
        assert!(err.message.contains("Denied"), "{}", err.message);
        assert!(
            err.message.contains("undeclared.example"),
            "{}",
            err.message
        );
    });
}

#[test]
fn an_unsupported_contract_version_is_refused_naming_it() {
    let err = NativeBackend::load(&artifacts().contract_9).unwrap_err();
    assert!(
        matches!(&err, NativeLoadError::UnsupportedContract { version, .. } if version == "9.0.0"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("relay contract 9.0.0"), "{message}");
    assert!(
        message.contains(relay_plugin_api::CONTRACT_VERSION),
        "{message}"
    );
}

#[test]
fn a_new_copy_loads_beside_the_old_one_as_an_independent_instance() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir
        .path()
        .join("v1")
        .join(artifacts().echo.file_name().unwrap());
    let new = dir
        .path()
        .join("v2")
        .join(artifacts().echo.file_name().unwrap());
    for path in [&old, &new] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(&artifacts().echo, path).unwrap();
    }
    on_runtime(async {
        let old = NativeBackend::load(&old).unwrap();
        let calls = |q: RailQuote| q.detail["calls"].as_u64().unwrap();
        assert_eq!(calls(quote(&old, 1, CALL_TIMEOUT).await.unwrap()), 1);
        assert_eq!(calls(quote(&old, 1, CALL_TIMEOUT).await.unwrap()), 2);

        let new = NativeBackend::load(&new).unwrap();
        assert_eq!(
            calls(quote(&new, 1, CALL_TIMEOUT).await.unwrap()),
            1,
            "the new copy has its own state"
        );
        assert_eq!(
            calls(quote(&old, 1, CALL_TIMEOUT).await.unwrap()),
            3,
            "the old copy keeps serving"
        );
    });
}

/// Why the loader bypasses `RootModule::load_from_file`: its per-type cache
/// answers every later path with the first module loaded.
#[test]
fn abi_stables_cached_loader_would_return_the_first_copy_for_a_second_path() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|name| {
            let path = dir
                .path()
                .join(format!("{DLL_PREFIX}native_echo_{name}{DLL_SUFFIX}"));
            std::fs::copy(&artifacts().echo, &path).unwrap();
            path
        })
        .collect();
    let first = RailModuleRef::load_from_file(&paths[0]).unwrap();
    let second = RailModuleRef::load_from_file(&paths[1]).unwrap();
    assert_eq!(first.manifest() as usize, second.manifest() as usize);
}

#[cfg(target_os = "linux")]
#[test]
fn a_library_without_a_relay_module_is_not_a_relay_plugin() {
    let err = NativeBackend::load(Path::new("libc.so.6")).unwrap_err();
    assert!(
        matches!(err, NativeLoadError::NotARelayPlugin { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("is not a relay plugin"), "{err}");
}

#[test]
fn a_file_that_is_not_a_library_cannot_be_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{DLL_PREFIX}bogus{DLL_SUFFIX}"));
    std::fs::write(&path, b"not an ELF file").unwrap();
    let err = NativeBackend::load(&path).unwrap_err();
    assert!(matches!(err, NativeLoadError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains("cannot open native plugin"),
        "{err}"
    );
}

/// A host that lends nothing, for calling a module's entries directly.
struct BareHost;

impl relay_plugin_api::Host for BareHost {
    fn http(
        &self,
        _req: relay_plugin_api::HttpRequest,
    ) -> Result<relay_plugin_api::HttpResponse, relay_plugin_api::HostError> {
        Err(relay_plugin_api::HostError::new(
            relay_plugin_api::HostErrorKind::Denied,
            "bare host",
        ))
    }
    fn rpc(
        &self,
        _chain: ChainRef,
        _method: &str,
        _params: &str,
    ) -> Result<String, relay_plugin_api::HostError> {
        self.http(relay_plugin_api::HttpRequest::get("x"))
            .map(|_| String::new())
    }
    fn now_ms(&self) -> u64 {
        1
    }
    fn deadline_ms(&self) -> u64 {
        u64::MAX
    }
    fn log(&self, _level: relay_plugin_api::LogLevel, _message: &str) {}
    fn config(&self, _key: &str) -> Option<String> {
        None
    }
}

/// A plugin answers on both wires alike: the packed one the host uses, and
/// the JSON one a host built before the packed entry calls. A request of
/// another type on the packed wire is a typed contract failure.
#[test]
fn the_packed_and_the_json_entry_answer_alike() {
    use relay_plugin_native::{
        call_method, call_method_packed, has_packed_entry, method, wire, FailureKind,
    };
    let module = RailModuleRef::load_from_file(&artifacts().echo).expect("loads");
    assert!(has_packed_entry(module));
    let req = quote_request(Amount::from_u128(5_000_000));

    let packed = wire::to_packed(&req).unwrap();
    let reply = call_method_packed(module, method::QUOTE, &packed, &BareHost).expect("packed");
    let from_packed: RailQuote = wire::from_packed(&reply).unwrap();

    let json = serde_json::to_string(&req).unwrap();
    let reply = call_method(module, method::QUOTE, &json, &BareHost).expect("json");
    let from_json: RailQuote = serde_json::from_str(&reply).unwrap();

    assert_eq!(from_packed.amount_out, from_json.amount_out);
    assert_eq!(from_packed.min_out, from_json.min_out);
    assert_eq!(from_packed.amount_in, req.amount);

    let other = wire::to_packed(&serde_json::json!({"routeId": 7})).unwrap();
    let failure = call_method_packed(module, method::QUOTE, &other, &BareHost).unwrap_err();
    assert_eq!(failure.kind, FailureKind::Contract);
    assert!(
        failure.message.starts_with("malformed request"),
        "{failure}"
    );
}
