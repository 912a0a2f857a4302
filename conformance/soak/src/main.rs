//! `relay-soak`: holds the service under load, faults and time. It starts
//! its own Postgres cluster and `relay devnet` (chains 8453 and 42161,
//! the upstream simulators), then two or more `relay serve` replicas on
//! that one database, each with the relayer key and a relayer key pool,
//! each listing a proxy the soak controls before the destination chain's
//! RPC endpoint. Workers drive a realistic mix of API traffic through a
//! round-robin balancer while, on a schedule, faults are injected
//! ([`faults::SCHEDULE`]). At the end the faults are cleared, every replica
//! is up, the routes drain, and the invariants are checked against the
//! chains ([`invariants`]); the report (Markdown and JSON) says what was
//! injected, what was sent, what held, the latencies per endpoint and each
//! replica's memory curve. It exits 1 if an invariant broke.
//!
//! Everything is on loopback and bounded by `--minutes`.

mod client;
mod cluster;
mod diagnose;
mod faults;
mod flows;
mod flows_more;
mod flows_paid;
mod invariants;
mod invariants_paid;
mod proxy;
mod report;
mod webhook;
mod world;

use std::{
    path::PathBuf,
    process::Command,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use clap::Parser;
use tokio::sync::Mutex;

use cluster::{free_port, Devnet, Postgres, Replica};
use world::{Lcg, World, DST, SRC};

/// The soak's options.
#[derive(Parser, Debug, Clone)]
#[command(name = "relay-soak", about = "Hold relay under load, faults and time")]
struct Args {
    /// The `relay` binary.
    #[arg(long)]
    relay: PathBuf,
    /// The packaged rails (what `relay-plugins build --out` wrote).
    #[arg(long)]
    plugins: PathBuf,
    /// How long the traffic runs, minutes.
    #[arg(long, default_value_t = 5.0)]
    minutes: f64,
    /// Replicas on the one database.
    #[arg(long, default_value_t = 2)]
    replicas: usize,
    /// Relayer pool keys besides the relayer's own.
    #[arg(long, default_value_t = 3)]
    pool_keys: usize,
    /// Concurrent clients.
    #[arg(long, default_value_t = 6)]
    workers: usize,
    /// Seconds between faults.
    #[arg(long, default_value_t = 25)]
    fault_every: u64,
    /// Seconds each fault is held.
    #[arg(long, default_value_t = 8)]
    fault_hold: u64,
    /// Where the report goes (`<path>.md` and `<path>.json`).
    #[arg(long, default_value = "soak-report")]
    report: PathBuf,
    /// The traffic's seed (default: the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// Working directory (default: a fresh one under the system's temp).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "relay_soak=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let report = soak(&args).await?;
    let held = report.invariants.iter().all(|v| v.held);
    report.write(&args.report)?;
    println!("{}", report.summary());
    if !held {
        std::process::exit(1);
    }
    Ok(())
}

fn work_dir(args: &Args) -> Result<PathBuf> {
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("relay-soak-{}", std::process::id())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The replicas' `relay serve`: the devnet's configuration with a proxy
/// first in the destination chain's RPC list, the database and a port of
/// its own, the relayer key pool.
fn replica_command(
    args: &Args,
    devnet: &Devnet,
    (dir, port, db): (PathBuf, u16, String),
    proxy: &str,
) -> Result<Box<dyn Fn() -> Command + Send + Sync>> {
    let mut config = devnet.config.clone();
    let rpc = &mut config["chains"][DST.to_string()]["rpc"];
    let direct = rpc.as_array().context("rpc list")?.clone();
    let mut list = vec![toml::Value::String(proxy.to_string())];
    list.extend(direct);
    *rpc = toml::Value::Array(list);
    config["execution"]["rpc_timeout_ms"] = toml::Value::Integer(3_000);
    // Webhook retries 1 s, 2 s, 4 s … apart instead of 5 s, 10 s, 20 s …:
    // the same at-least-once delivery, drained in seconds, not minutes.
    notify_table(&mut config)?.insert("base_delay_ms".into(), toml::Value::Integer(1_000));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("relay.toml");
    std::fs::write(&path, toml::to_string(&config)?)?;
    let pool: Vec<String> = (0..args.pool_keys)
        .map(|i| {
            format!(
                "0x{}",
                hex::encode(relay_devnet::keys::relayer_pool(i).to_bytes())
            )
        })
        .collect();
    let mut env = devnet.env.clone();
    env.push(("RELAY_RELAYER_POOL_KEYS".into(), pool.join(",")));
    env.push(("RELAY_DATABASE_URL".into(), db));
    env.push(("RELAY_LISTEN".into(), format!("127.0.0.1:{port}")));
    env.push((
        "RELAY_DATA_DIR".into(),
        dir.join("data").display().to_string(),
    ));
    env.push(("RELAY_LIMITS__ENABLED".into(), "false".into()));
    env.push(("RELAY_RUNTIME__RELOAD_INTERVAL_MS".into(), "0".into()));
    env.push(("PRIMITIVES_LIVE".into(), "1".into()));
    env.push(("RUST_LOG".into(), "warn".into()));
    let log = dir.join("host.log");
    Ok(Box::new(move || {
        let mut c = Command::new(relay_path());
        c.args(["serve", "--config"]).arg(&path).envs(env.clone());
        if let Ok(f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
        {
            if let Ok(g) = f.try_clone() {
                c.stdout(g);
            }
            c.stderr(f);
        }
        c
    }))
}

static RELAY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

fn relay_path() -> PathBuf {
    RELAY.get().cloned().unwrap_or_else(|| "relay".into())
}

async fn soak(args: &Args) -> Result<report::Report> {
    let _ = RELAY.set(std::path::absolute(&args.relay)?);
    let dir = work_dir(args)?;
    let seed = args.seed.unwrap_or_else(world::now_secs);
    tracing::info!(seed, dir = %dir.display(), "soak starting");
    let pg = Arc::new(
        tokio::task::spawn_blocking({
            let dir = dir.clone();
            move || Postgres::start(&dir, free_port()?)
        })
        .await??,
    );
    pg.create_db("relay_soak")?;
    let devnet = Devnet::start(
        &relay_path(),
        &std::path::absolute(&args.plugins)?,
        &dir.join("devnet"),
        &[SRC, DST],
    )?;
    let dst_rpc: reqwest::Url = devnet.rpc(DST)?.parse()?;
    let target = format!(
        "{}:{}",
        dst_rpc.host_str().unwrap_or("127.0.0.1"),
        dst_rpc.port().unwrap_or(80)
    );
    let proxy = proxy::Proxy::start(target).await?;
    let mut replicas = Vec::new();
    for i in 0..args.replicas.max(1) {
        let port = free_port()?;
        let cmd = replica_command(
            args,
            &devnet,
            (dir.join(format!("replica-{i}")), port, pg.url("relay_soak")),
            &proxy.url,
        )?;
        replicas.push(Replica::new(i, port, cmd));
    }
    let bases = replicas.iter().map(|r| r.base.clone()).collect();
    let replicas = Arc::new(Mutex::new(replicas));
    let receiver = webhook::Receiver::start().await?;
    let mut keys = vec![devnet.config["relayer"]
        .as_str()
        .context("relayer")?
        .parse()?];
    keys.extend((0..args.pool_keys).map(|i| relay_devnet::keys::relayer_pool(i).address()));
    let world = Arc::new(World::new(
        client::Client::new(bases),
        &devnet,
        (keys, receiver.url.clone(), seed),
    )?);
    let targets = faults::Targets {
        sims: ["lifi", "squid", "bungee"]
            .iter()
            .filter_map(|r| Some((r.to_string(), devnet.rail_url(r)?)))
            .collect(),
        proxy,
        replicas: replicas.clone(),
        postgres: pg.clone(),
        chain: world.chain(SRC).clone(),
        http: world.client.http.clone(),
        killed_at: std::sync::Mutex::default(),
    };
    targets.restart_dead().await?;
    world::approve_users(&world).await?;

    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.minutes * 60.0);
    let sampler = tokio::spawn(sample(replicas.clone(), started, until));
    let workers: Vec<_> = (0..args.workers)
        .map(|i| {
            let w = world.clone();
            tokio::spawn(async move {
                let mut rng = Lcg(seed.wrapping_add(i as u64 * 7919));
                while Instant::now() < until {
                    let flow = flows::pick(&mut rng);
                    flows::run(&w, flow, &mut rng).await;
                }
            })
        })
        .collect();
    let injected = faults::run(
        &targets,
        started,
        until,
        (
            Duration::from_secs(args.fault_every),
            Duration::from_secs(args.fault_hold),
        ),
    )
    .await;
    for w in workers {
        w.await?;
    }
    let traffic_s = started.elapsed().as_secs_f64();
    targets.clear_all().await?;
    targets.restart_dead().await?;
    sampler.await?;
    tracing::info!("traffic over; draining sponsorships, yield spends and routes");
    invariants_paid::drain(&world, Duration::from_secs(150)).await;
    let statuses = invariants::drain(&world, Duration::from_secs(240)).await;
    // deliveries still due are retried on the hosts' schedule
    let ended: Vec<String> = world
        .routes()
        .into_iter()
        .filter(|r| r.hooked)
        .filter(|r| {
            statuses
                .get(&r.id)
                .is_some_and(|v| matches!(v["status"].as_str(), Some("DONE" | "FAILED")))
        })
        .map(|r| r.id)
        .collect();
    receiver.settled(Duration::from_secs(180), &ended).await;
    let stats = world.client.stats();
    let lifetimes: Vec<(usize, Vec<cluster::Sample>)> = {
        let r = replicas.lock().await;
        r.iter()
            .flat_map(|x| x.lifetimes.iter().map(move |l| (x.index, l.clone())))
            .collect()
    };
    let kills = targets.killed_at.lock().expect("kills").clone();
    let invariants = vec![
        invariants::terminal(&statuses),
        invariants::pulled_once(&world, &statuses).await?,
        invariants::paid_once(&world, &statuses).await?,
        invariants::webhooks_once(&receiver.log(), &world, (&statuses, &kills)),
        invariants::no_nonce_gap(&world).await?,
        invariants::payouts_once(&world).await?,
        invariants_paid::sponsored_once(&world).await?,
        invariants_paid::spent_once(&world).await?,
        invariants::ledger_balanced(&world, &pg.url("relay_soak"))?,
        invariants::flat(&lifetimes, Duration::from_secs(120)),
        invariants::no_violations(&stats),
    ];
    diagnose::print(&invariants, &statuses, &dir);
    Ok(report::Report::new(report::Run {
        seed,
        minutes: args.minutes,
        traffic_s,
        replicas: args.replicas,
        keys: args.pool_keys + 1,
        injected,
        statuses,
        routes: world.routes(),
        paid: world.paid.by_state(),
        stats,
        lifetimes,
        invariants,
    }))
}

/// Samples every replica's memory and open files every 5 s until `until`.
async fn sample(replicas: Arc<Mutex<Vec<Replica>>>, started: Instant, until: Instant) {
    while Instant::now() < until {
        {
            let mut r = replicas.lock().await;
            let at = started.elapsed().as_secs_f64();
            for x in r.iter_mut() {
                x.sample(at);
            }
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// The configuration's `[notify]` table, made when it has none.
fn notify_table(config: &mut toml::Value) -> Result<&mut toml::map::Map<String, toml::Value>> {
    let root = config
        .as_table_mut()
        .context("the configuration is a table")?;
    root.entry("notify")
        .or_insert_with(|| toml::Value::Table(Default::default()))
        .as_table_mut()
        .context("[notify] is a table")
}
