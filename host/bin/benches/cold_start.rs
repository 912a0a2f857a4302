//! Cold start of `relay serve`: from spawning the binary to its first
//! answer, with the nine packaged rails loaded from a warm compiled-module
//! cache (as after a restart or a `kill -9`).
//!
//! The devnet chains and simulators run in this process; the host is the
//! `relay` binary itself, spawned with a `relay.toml` over them (plugins
//! copied into a temporary directory, a data directory kept for the run:
//! its module cache and database are warm after the first, unmeasured
//! start). The host binds its listener only after it has connected the
//! store and loaded every rail, so the first `200` on `GET /api/errors`
//! (a path that reads nothing) is the moment it is ready; the warm-up
//! start also checks that `/api/status` lists the nine rails. Each measured
//! start is killed (`SIGKILL`) once it answers.
//!
//! `cargo bench -p relay-host --bench cold_start`; under `cargo test
//! --benches` it starts the host twice (warm-up and one measured start).

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use criterion::{criterion_group, criterion_main, Criterion};
use relay_config::HostConfig;
use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::{host_config, point_rails_at, DEVNET_UPSTREAM_KEY_ENV};
use relay_simulators::Simulators;

/// Rails the packaged plugins directory holds.
const RAILS: usize = 9;
/// How long one start may take before the bench gives up.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Writes `dir/relay.toml` for a host on `port` over `devnet` and `sims`.
fn write_config(devnet: &Devnet, sims: &Simulators, dir: &Path, port: u16) {
    let base = HostConfig {
        listen: format!("127.0.0.1:{port}").parse().expect("address"),
        data_dir: dir.join("data"),
        plugins_dir: relay_fixtures::plugins_copy(&dir.join("plugins")),
        ..HostConfig::default()
    };
    let mut config = point_rails_at(devnet, sims, host_config(devnet, base));
    config.limits.enabled = false;
    config.runtime.reload_interval_ms = 0;
    let toml = toml::to_string(&config).expect("config serialises");
    std::fs::write(dir.join("relay.toml"), toml).expect("config written");
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("address").port()
}

/// `relay serve` on `dir/relay.toml`, its output in `dir/host.log`.
fn spawn_host(dir: &Path) -> Child {
    let key = relay_devnet::keys::relayer().to_bytes();
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("host.log"))
        .expect("log");
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg("serve")
        .env("RELAY_CONFIG", dir.join("relay.toml"))
        .env("RELAY_RELAYER_KEY", format!("0x{}", hex::encode(key)))
        .env(DEVNET_UPSTREAM_KEY_ENV, "devnet-only")
        .stdout(Stdio::from(log.try_clone().expect("log")))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("relay serve starts")
}

/// One plain HTTP/1.1 GET; the status code and body, or `None` while
/// nothing listens.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let code = out.get(9..12)?.parse().ok()?;
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((code, body))
}

/// Starts the host and returns how long it took to answer; the host is
/// left running for the caller.
fn start_until_ready(dir: &Path, port: u16) -> (Child, Duration) {
    let started = Instant::now();
    let mut child = spawn_host(dir);
    loop {
        if let Some((200, _)) = get(port, "/api/errors") {
            return (child, started.elapsed());
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "relay serve exited with {status}; see {}",
                dir.join("host.log").display()
            );
        }
        assert!(
            started.elapsed() < START_TIMEOUT,
            "relay serve never answered"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// How many rails `/api/status` lists (body `rails: [{name, up}]`).
fn rails_listed(port: u16) -> usize {
    let (code, body) = get(port, "/api/status").expect("status answers");
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(body.trim()).unwrap_or_default();
    v["rails"].as_array().map_or(0, |rails| rails.len())
}

fn cold_start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let devnet = rt
        .block_on(Devnet::start(DevnetConfig::with_chains([8453, 42161])))
        .expect("devnet");
    let sims = rt.block_on(Simulators::start(&devnet)).expect("simulators");
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    write_config(&devnet, &sims, dir.path(), port);

    // The first start compiles the wasm rails into the module cache.
    let (host, first) = start_until_ready(dir.path(), port);
    let rails = rails_listed(port);
    stop(host);
    assert_eq!(rails, RAILS, "the host loaded {rails} rails");

    let mut g = c.benchmark_group("cold_start");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("relay_serve_nine_rails_warm_cache", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (host, took) = start_until_ready(dir.path(), port);
                stop(host);
                total += took;
            }
            total
        })
    });
    g.finish();
    println!(
        "cold_start: first start (empty module cache) {:.0} ms; {rails} rails",
        first.as_secs_f64() * 1e3
    );
    drop(sims);
    devnet.stop();
}

criterion_group!(benches, cold_start);
criterion_main!(benches);
