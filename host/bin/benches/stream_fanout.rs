//! Many `/api/route/stream` clients on one host: what they cost while
//! nothing changes, and how fast one change reaches them all.
//!
//! The host (real, nine packaged rails, devnet chains, simulators, on an
//! ephemeral loopback port, as `support` serves it) runs in this process;
//! the clients run in a child process (this binary again, told so by
//! [`CLIENTS_ENV`]), so the host's resident memory is this process's
//! `VmRSS` alone. The child opens [`STREAMS`] plain HTTP/1.1 connections to
//! `GET /api/route/stream?id=…` for one stored route and reads each one's
//! first event (the receipt now). Then:
//!
//! - idle: for [`IDLE`] nothing changes; the host's route reads by id
//!   (`relay_store::route_reads`) over that window must be zero (streams
//!   are pushed changes, they never poll the store), and its `VmRSS` with
//!   every stream open is reported next to the figure before the clients
//!   connected;
//! - `stream_fanout/one_change_to_all`: the route's stage changes once in
//!   the store; timed until every client has read the `status` event it
//!   causes (criterion, `iter_custom`).
//!
//! `cargo bench -p relay-host --bench stream_fanout`; under `cargo test
//! --benches` it opens [`TEST_STREAMS`] streams and measures one change.

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

mod support;

use relay_types::{Clock as _, SystemClock};
use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

use criterion::Criterion;
use relay_store::Store;
use relay_types::route::RouteRecord;

/// Streams opened by a measuring run.
const STREAMS: usize = 10_000;
/// Streams opened by a test-mode run (`cargo test --benches`).
const TEST_STREAMS: usize = 200;
/// How long the streams sit idle while store reads are counted.
const IDLE: Duration = Duration::from_secs(5);
/// The idle window of a test-mode run.
const TEST_IDLE: Duration = Duration::from_millis(300);
/// Set in the child process: `<host:port> <route id> <streams>`.
const CLIENTS_ENV: &str = "RELAY_BENCH_STREAM_CLIENTS";
/// The followed route.
const ROUTE: &str = "rt_fanout";

fn main() {
    if let Ok(spec) = std::env::var(CLIENTS_ENV) {
        clients::run(&spec);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    stream_fanout(&mut c);
    c.final_summary();
}

/// Whether criterion measures (`--bench`) rather than test-runs once.
fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn stream_fanout(c: &mut Criterion) {
    let (streams, idle) = if measuring() {
        (STREAMS, IDLE)
    } else {
        (TEST_STREAMS, TEST_IDLE)
    };
    check_fd_limit(streams);
    let (rt, _dir, devnet, served) = support::start([8453, 42161]);
    let store = served.store().clone();
    let mut route = sample_route(ROUTE);
    rt.block_on(store_idle_route(&store, &route));
    let mut version = 1;

    let rss_before = vm_rss_kib();
    let mut clients = Clients::start(served.base.trim_start_matches("http://"), streams);
    let reads_before = relay_store::route_reads();
    std::thread::sleep(idle);
    let idle_reads = relay_store::route_reads() - reads_before;
    let rss_open = vm_rss_kib();
    assert_eq!(
        idle_reads, 0,
        "{streams} idle streams read the store {idle_reads} times in {idle:?}"
    );

    let mut changes = 0u64;
    let reads_before = relay_store::route_reads();
    let mut g = c.benchmark_group("stream_fanout");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function(format!("one_change_to_all_{streams}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                clients.expect_one_more();
                let started = Instant::now();
                flip_stage(&mut route);
                version = rt
                    .block_on(store.update_route(&route, version, "status"))
                    .expect("store")
                    .expect("the bench holds the only version");
                clients.wait_all();
                total += started.elapsed();
                changes += 1;
            }
            total
        })
    });
    g.finish();
    let reads_per_change = (relay_store::route_reads() - reads_before) / changes.max(1);
    println!(
        "stream_fanout: {streams} streams; host VmRSS {:.1} MiB before the clients, {:.1} MiB \
         with every stream open ({:.1} KiB per stream); {idle_reads} route reads in {idle:?} \
         idle; {reads_per_change} route reads per change (one per stream that shows it)",
        rss_before as f64 / 1024.0,
        rss_open as f64 / 1024.0,
        rss_open.saturating_sub(rss_before) as f64 / streams as f64,
    );
    drop(clients);
    drop(served);
    devnet.stop();
}

/// A route in flight, as the streams show it.
fn sample_route(id: &str) -> RouteRecord {
    RouteRecord {
        status: relay_types::route::RouteStatus::Bridging,
        ..RouteRecord::sample(id, SystemClock.now_ms())
    }
}

/// Stores `r` as a route another replica runs (leased for an hour), so the
/// host's resume tick leaves it as the bench writes it.
async fn store_idle_route(store: &Store, r: &RouteRecord) {
    store
        .insert_claimed_route(r, "another-replica", 3_600_000)
        .await
        .expect("store");
}

/// A visible change: the stage moves back and forth.
fn flip_stage(r: &mut RouteRecord) {
    let next = match r.stage.as_deref() {
        Some("RECEIVING") => "SENDING",
        _ => "RECEIVING",
    };
    r.stage = Some(next.into());
}

/// This process's resident set (`VmRSS`), KiB.
fn vm_rss_kib() -> u64 {
    proc_status_field("/proc/self/status", "VmRSS:")
}

fn proc_status_field(path: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(path).expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("field in procfs")
}

/// Refuses to start with fewer open files allowed than the streams need
/// (raise with `ulimit -n`).
fn check_fd_limit(streams: usize) {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("procfs");
    let soft: Option<usize> = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok());
    if let Some(soft) = soft {
        assert!(
            soft >= streams + 1_000,
            "{streams} streams need ~{} open files; the limit is {soft} (ulimit -n)",
            streams + 1_000
        );
    }
}

/// The child process holding the streams, and the lines it talks in:
/// `READY` once every stream has shown its first event; `GO` from here
/// announces one more change; `GOT` once every stream has shown it.
struct Clients {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Clients {
    fn start(addr: &str, streams: usize) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("bench binary"))
            .env(CLIENTS_ENV, format!("{addr} {ROUTE} {streams}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("client process");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let line = read_line(&mut stdout);
        assert_eq!(line, "READY", "the clients did not connect: {line}");
        Clients {
            child,
            stdin,
            stdout,
        }
    }

    fn expect_one_more(&mut self) {
        writeln!(self.stdin, "GO").expect("to the clients");
        self.stdin.flush().expect("to the clients");
        assert_eq!(read_line(&mut self.stdout), "ARMED");
    }

    fn wait_all(&mut self) {
        let line = read_line(&mut self.stdout);
        assert_eq!(
            line, "GOT",
            "the clients did not all see the change: {line}"
        );
    }
}

impl Drop for Clients {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_line(from: &mut impl BufRead) -> String {
    let mut line = String::new();
    from.read_line(&mut line).expect("from the clients");
    line.trim().to_string()
}

/// The child process: plain HTTP/1.1 SSE readers on one thread.
mod clients {
    use std::{
        sync::{
            atomic::{AtomicUsize, Ordering},
            Arc,
        },
        time::Duration,
    };

    use tokio::{
        io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
        net::TcpStream,
        sync::{Notify, Semaphore},
    };

    /// Connections being opened at once (the listener's backlog is finite).
    const OPENING: usize = 256;
    /// How long every stream may take to show a change.
    const FANOUT_TIMEOUT: Duration = Duration::from_secs(60);

    /// Events seen across every stream.
    #[derive(Default)]
    struct Seen {
        events: AtomicUsize,
        changed: Notify,
    }

    pub fn run(spec: &str) {
        let mut parts = spec.split_whitespace();
        let (Some(addr), Some(route), Some(n)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("bad client spec {spec:?}");
        };
        let n: usize = n.parse().expect("stream count");
        let request = format!(
            "GET /api/route/stream?id={route} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
        );
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(drive(addr.to_string(), request, n));
    }

    async fn drive(addr: String, request: String, n: usize) {
        let seen = Arc::new(Seen::default());
        let opening = Arc::new(Semaphore::new(OPENING));
        let request: Arc<str> = request.into();
        for _ in 0..n {
            let (addr, request, seen) = (addr.clone(), request.clone(), seen.clone());
            let permit = opening.clone().acquire_owned().await.expect("semaphore");
            tokio::spawn(async move {
                if let Err(e) = follow(&addr, &request, &seen, permit).await {
                    eprintln!("stream client: {e}");
                }
            });
        }
        wait_for(&seen, n).await;
        println!("READY");
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut expected = n;
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim() != "GO" {
                continue;
            }
            expected += n;
            println!("ARMED");
            if tokio::time::timeout(FANOUT_TIMEOUT, wait_for(&seen, expected))
                .await
                .is_err()
            {
                let got = seen.events.load(Ordering::SeqCst) + n - expected;
                println!("TIMEOUT {got} of {n}");
                return;
            }
            println!("GOT");
        }
    }

    async fn wait_for(seen: &Seen, at_least: usize) {
        loop {
            let changed = seen.changed.notified();
            if seen.events.load(Ordering::SeqCst) >= at_least {
                return;
            }
            changed.await;
        }
    }

    /// One stream: counts its `event:` lines; the first one frees an
    /// opening slot.
    async fn follow(
        addr: &str,
        request: &str,
        seen: &Seen,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) -> std::io::Result<()> {
        let mut permit = Some(permit);
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        stream.write_all(request.as_bytes()).await?;
        let mut buf = [0u8; 1024];
        // The tail of the last read, for a marker split across reads.
        let mut carry: Vec<u8> = Vec::new();
        const MARK: &[u8] = b"\nevent: ";
        loop {
            let read = stream.read(&mut buf).await?;
            if read == 0 {
                return Ok(());
            }
            carry.extend_from_slice(&buf[..read]);
            let found = carry.windows(MARK.len()).filter(|w| *w == MARK).count();
            if found > 0 {
                permit.take();
                seen.events.fetch_add(found, Ordering::SeqCst);
                seen.changed.notify_waiters();
            }
            let keep = carry.len().min(MARK.len() - 1);
            carry.drain(..carry.len() - keep);
        }
    }
}
