//! The wasm packaging end to end: the echo test rail is built into a
//! component by `plugins/build-wasm.sh` (once per test run, never taken from
//! an earlier run), loaded by [`WasmBackend`] and called with capabilities
//! lent by a real [`CapabilityBroker`].

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use relay_capabilities::{CallCapabilities, CapabilityBroker, CapabilityConfig, RailPolicy};
use relay_plugin_api::{
    Amount, ChainRef, NonEvmNode, PlanAction, PrepareRequest, QuoteRequest, RailErrorKind,
    RailQuote, SourceMode, Token, TrackRequest, TrackState, U256,
};
use relay_rail_echo::{ALLOCATE_AMOUNT, HANG_AMOUNT, HTTP_AMOUNT, PANIC_AMOUNT};
use relay_runtime::{
    wasm::{WasmBackend, WasmLoadError, WasmRuntime, WasmRuntimeConfig},
    BackendError, PluginBackend, RailCall, RailReply,
};
use sha2::{Digest, Sha256};

/// The echo component, built by the project's script on first use.
fn echo_component() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wasm-backend/echo.wasm");
        let _ = std::fs::remove_file(&out);
        let status = Command::new(root.join("plugins/build-wasm.sh"))
            .args(["relay-rail-echo-wasm", out.to_str().unwrap()])
            .current_dir(root)
            .status()
            .expect("plugins/build-wasm.sh runs");
        assert!(status.success(), "building the echo component failed");
        out
    })
}

fn sha256_of(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// One echo backend shared by every test, so faults of one test and normal
/// calls of another hit the same pre-instantiated component, concurrently.
fn echo() -> &'static WasmBackend {
    static BACKEND: OnceLock<WasmBackend> = OnceLock::new();
    BACKEND.get_or_init(|| {
        let runtime = WasmRuntime::new(WasmRuntimeConfig {
            memory_limit_bytes: MEMORY_LIMIT,
            ..WasmRuntimeConfig::default()
        })
        .unwrap();
        let path = echo_component();
        WasmBackend::load(&runtime, path, &sha256_of(path)).unwrap()
    })
}

/// The memory limit of [`echo`]'s runtime (not the default, to prove it is
/// configurable).
const MEMORY_LIMIT: usize = 32 << 20;

fn caps(timeout: Duration) -> Arc<CallCapabilities> {
    static BROKER: OnceLock<Arc<CapabilityBroker>> = OnceLock::new();
    let broker =
        BROKER.get_or_init(|| Arc::new(CapabilityBroker::new(&CapabilityConfig::default())));
    let policy = RailPolicy {
        rail_id: "echo".into(),
        config: BTreeMap::from([("greeting".into(), "hello from the host".into())]),
        ..RailPolicy::default()
    };
    Arc::new(broker.lend(Arc::new(policy), timeout))
}

fn quote_request(amount: Amount) -> QuoteRequest {
    let usdc = Token {
        symbol: "USDC".into(),
        address: Some("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into()),
        decimals: 6,
    };
    QuoteRequest {
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::NonEvm(NonEvmNode::Bitcoin),
        from_token: usdc.clone(),
        to_token: usdc,
        amount,
        from_address: Some("0x00000000000000000000000000000000000000aa".into()),
        to_address: None,
        slippage_bps: 50,
        member: true,
    }
}

async fn quote(
    backend: &WasmBackend,
    amount: Amount,
    timeout: Duration,
) -> Result<RailQuote, BackendError> {
    match backend
        .call(RailCall::Quote(quote_request(amount)), caps(timeout))
        .await?
    {
        RailReply::Quote(q) => Ok(q),
        other => panic!("quote answered {other:?}"),
    }
}

/// A normal quote still answers (a fault never poisons the backend).
async fn assert_still_serves(backend: &WasmBackend) {
    let q = quote(
        backend,
        Amount::from_u128(5_000_000),
        Duration::from_secs(5),
    )
    .await
    .expect("the next normal call succeeds");
    assert_eq!(q.amount_out, Amount::from_u128(5_000_000));
}

#[tokio::test]
async fn manifest_and_quote_round_trip_with_amounts_beyond_u128() {
    let backend = echo();
    let reply = backend
        .call(RailCall::Manifest, caps(Duration::from_secs(5)))
        .await
        .unwrap();
    let RailReply::Manifest(manifest) = reply else {
        panic!("manifest answered {reply:?}")
    };
    assert_eq!(manifest.id, "echo");
    assert_eq!(
        manifest.contract_version,
        relay_plugin_api::contract_version()
    );
    assert_eq!(
        manifest.coverage[0].from,
        vec![ChainRef::Evm(1), ChainRef::Evm(8453)]
    );

    let big = Amount(U256::from(1u8) << 200)
        .checked_add(Amount::from_u128(12_345))
        .unwrap();
    let lent = caps(Duration::from_secs(5));
    let deadline_ms = lent.deadline_ms();
    let reply = backend
        .call(RailCall::Quote(quote_request(big)), lent)
        .await
        .unwrap();
    let RailReply::Quote(q) = reply else {
        panic!("quote answered {reply:?}")
    };
    assert_eq!((q.amount_in, q.amount_out), (big, big));
    assert_eq!(q.min_out, big.checked_sub(big.bps(50)).unwrap());
    assert_eq!(q.expires_at_ms, deadline_ms, "deadline-ms import");
    assert_eq!(q.detail["greeting"], "hello from the host", "config import");
    assert_eq!(q.detail["to"], "bitcoin");
    assert_eq!(
        q.upstream_ref.as_deref(),
        Some("0x00000000000000000000000000000000000000aa")
    );
}

#[tokio::test]
async fn prepare_track_and_health_round_trip() {
    let backend = echo();
    let q = quote(
        backend,
        Amount::from_u128(7_000_000),
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let prepare = PrepareRequest {
        route_id: "route-1".into(),
        quote: q,
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(1),
        from_token_address: Some("0xtoken".into()),
        to_token_address: None,
        sender: "0xsender".into(),
        recipient: "0xrecipient".into(),
        relayer: "0xrelayer".into(),
        mode: SourceMode::Permit2,
    };
    let reply = backend
        .call(RailCall::Prepare(prepare), caps(Duration::from_secs(5)))
        .await
        .unwrap();
    let RailReply::Plan(plan) = reply else {
        panic!("prepare answered {reply:?}")
    };
    assert_eq!(
        plan.steps[0],
        PlanAction::Permit2Pull {
            chain: ChainRef::Evm(8453),
            token: "0xtoken".into(),
            amount: Amount::from_u128(7_000_000),
        }
    );
    assert_eq!(plan.track_ref.as_deref(), Some("route-1"));

    let track = TrackRequest {
        route_id: "route-1".into(),
        reference: Some("route-1".into()),
        from_chain: ChainRef::Evm(8453),
        to_chain: ChainRef::Evm(1),
        src_tx: Some("0xabc".into()),
    };
    let reply = backend
        .call(RailCall::Track(track), caps(Duration::from_secs(5)))
        .await
        .unwrap();
    let RailReply::Track(status) = reply else {
        panic!("track answered {reply:?}")
    };
    assert_eq!(
        (status.state, status.dest_tx.as_deref()),
        (TrackState::Done, Some("0xabc"))
    );

    let reply = backend
        .call(RailCall::Health, caps(Duration::from_secs(5)))
        .await
        .unwrap();
    assert!(matches!(reply, RailReply::Health(h) if h.lanes.len() == 1));
}

#[tokio::test]
async fn a_guest_that_loops_forever_is_stopped_at_its_deadline() {
    let backend = echo();
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let err = quote(backend, Amount::from_u128(HANG_AMOUNT), timeout)
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, BackendError::DeadlineExceeded), "{err:?}");
    assert!(took >= timeout, "stopped early: {took:?}");
    // One epoch tick (10 ms) past the deadline, with room for a loaded machine.
    assert!(
        took < timeout + Duration::from_millis(250),
        "stopped late: {took:?}"
    );
    assert_still_serves(backend).await;
}

#[tokio::test]
async fn a_guest_that_allocates_without_bound_hits_the_memory_limit() {
    let backend = echo();
    let err = quote(
        backend,
        Amount::from_u128(ALLOCATE_AMOUNT),
        Duration::from_secs(10),
    )
    .await
    .unwrap_err();
    let BackendError::ResourceLimit(why) = &err else {
        panic!("expected a resource limit, got {err:?}")
    };
    assert!(why.contains("memory growth"), "{why}");
    eprintln!("allocation stopped: {why}");
    assert_still_serves(backend).await;
}

#[tokio::test]
async fn a_panicking_guest_crashes_the_call_with_its_message_not_the_backend() {
    let backend = echo();
    let err = quote(
        backend,
        Amount::from_u128(PANIC_AMOUNT),
        Duration::from_secs(5),
    )
    .await
    .unwrap_err();
    let BackendError::Crashed(why) = &err else {
        panic!("expected a crash, got {err:?}")
    };
    assert!(why.contains("echo was asked to panic"), "{why}");
    eprintln!("panic reported: {why}");
    assert_still_serves(backend).await;
}

#[tokio::test]
async fn undeclared_egress_is_refused_by_the_host_and_reaches_the_rail_as_a_typed_error() {
    let backend = echo();
    let err = quote(
        backend,
        Amount::from_u128(HTTP_AMOUNT),
        Duration::from_secs(5),
    )
    .await
    .unwrap_err();
    let BackendError::Rail(rail_error) = &err else {
        panic!("expected the rail's error, got {err:?}")
    };
    assert_eq!(rail_error.kind, RailErrorKind::Capability);
    assert!(
        rail_error.message.contains("egress allowlist"),
        "{}",
        rail_error.message
    );
}

#[test]
fn the_component_imports_only_the_rail_host_interface() {
    let engine = wasmtime::Engine::default();
    let component = wasmtime::component::Component::from_file(&engine, echo_component()).unwrap();
    let ty = component.component_type();
    let imports: Vec<&str> = ty.imports(&engine).map(|(name, _)| name).collect();
    assert!(imports.contains(&"relay:rail/host@1.0.0"), "{imports:?}");
    assert!(
        imports.iter().all(|name| name.starts_with("relay:rail/")),
        "foreign imports (WASI?): {imports:?}"
    );
    assert!(ty
        .exports(&engine)
        .any(|(name, _)| name == "relay:rail/rail@1.0.0"));
}

#[test]
fn a_component_is_compiled_once_and_then_loaded_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let path = echo_component();
    let sha = sha256_of(path);
    let config = WasmRuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        ..WasmRuntimeConfig::default()
    };
    let started = Instant::now();
    WasmRuntime::new(config.clone())
        .unwrap()
        .load(path, &sha)
        .unwrap();
    let compiled = started.elapsed();
    let entries: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert_eq!(entries.len(), 1, "one cache entry");
    let name = entries[0].as_ref().unwrap().file_name();
    assert!(name.to_string_lossy().starts_with(&sha), "{name:?}");

    let started = Instant::now();
    WasmRuntime::new(config).unwrap().load(path, &sha).unwrap();
    let cached = started.elapsed();
    eprintln!("component load: compiled {compiled:?}, from cache {cached:?}");
}

#[test]
fn a_wrong_checksum_or_a_core_module_is_refused_with_a_clear_error() {
    let rt = WasmRuntime::new(WasmRuntimeConfig::default()).unwrap();
    let err = rt.load(echo_component(), &"0".repeat(64)).unwrap_err();
    assert!(matches!(err, WasmLoadError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("checksum mismatch"));

    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let err = rt.load(&core, &sha256_of(&core)).unwrap_err();
    assert!(matches!(err, WasmLoadError::CoreModule(_)), "{err}");
}

/// A component exporting the rail interface by name whose five functions
/// all take and return nothing (the WAT a confused integrator might ship).
const WRONG_SIGNATURES: &str = r#"(component
    (core module $m (func (export "f")))
    (core instance $i (instantiate $m))
    (func $f (canon lift (core func $i "f")))
    (instance $rail
        (export "manifest" (func $f)) (export "health" (func $f))
        (export "quote" (func $f)) (export "prepare" (func $f))
        (export "track" (func $f)))
    (export "relay:rail/rail@1.0.0" (instance $rail)))"#;

#[tokio::test(flavor = "multi_thread")]
async fn functions_of_another_signature_break_the_contract_at_the_manifest_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wrong.wasm");
    std::fs::write(&path, WRONG_SIGNATURES).unwrap();
    let rt = WasmRuntime::new(WasmRuntimeConfig::default()).unwrap();
    let backend = rt.load(&path, &sha256_of(&path)).unwrap();
    // The host reads the manifest at load (`RailSet`): every function is
    // checked there, and a mismatch is the rail's contract broken, not a
    // crash to quarantine.
    let err = backend
        .call(RailCall::Manifest, caps(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, BackendError::Contract(m) if m.contains("not the relay:rail interface")),
        "{err}"
    );
    let err = backend
        .call(RailCall::Health, caps(Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert!(matches!(err, BackendError::Contract(_)), "{err}");

    // Whatever a component's first call is, all five are checked before
    // any runs: a quote on a fresh load of it is refused the same way.
    let backend = rt.load(&path, &sha256_of(&path)).unwrap();
    let err = backend
        .call(
            RailCall::Quote(quote_request(Amount::from_u128(1))),
            caps(Duration::from_secs(5)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, BackendError::Contract(m) if m.contains("not the relay:rail interface")),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_beyond_the_pool_wait_for_a_slot_and_each_gets_a_fresh_instance() {
    // One slot: eight concurrent calls queue for it instead of failing, and
    // a guest that trapped leaves nothing behind for the next call.
    let runtime = WasmRuntime::new(WasmRuntimeConfig {
        pool_slots: 1,
        ..WasmRuntimeConfig::default()
    })
    .unwrap();
    let path = echo_component();
    let backend = WasmBackend::load(&runtime, path, &sha256_of(path)).unwrap();
    let panic = quote(
        &backend,
        Amount::from_u128(relay_rail_echo::PANIC_AMOUNT),
        Duration::from_secs(10),
    )
    .await;
    assert!(matches!(panic, Err(BackendError::Crashed(_))), "{panic:?}");
    let calls = (1..=8u128).map(|i| {
        quote(
            &backend,
            Amount::from_u128(i * 1_000),
            Duration::from_secs(10),
        )
    });
    for (i, answer) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        let q = answer.unwrap_or_else(|e| panic!("call {i}: {e}"));
        assert_eq!(q.amount_in, Amount::from_u128((i as u128 + 1) * 1_000));
    }
}
