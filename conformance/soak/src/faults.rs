//! The fault schedule: every `every`, the next fault in turn is injected,
//! held for `hold`, then cleared — an upstream simulator failing, slow or
//! answering garbage; a chain's first RPC endpoint cutting or holding its
//! connections; a replica `kill -9`ed and restarted; Postgres restarted; a
//! chain's blocks paused.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use alloy::providers::{DynProvider, Provider};
use serde::Serialize;
use serde_json::json;
use tokio::sync::Mutex;

use crate::{
    cluster::{Postgres, Replica},
    proxy::{Mode, Proxy},
};

/// The faults, in the order they come round.
pub const SCHEDULE: &[&str] = &[
    "lifi-error",
    "rpc-cut",
    "squid-slow",
    "replica-kill",
    "bungee-garbage",
    "blocks-paused",
    "postgres-restart",
    "rpc-hang",
    "lifi-hang",
];

/// One injected fault.
#[derive(Clone, Debug, Serialize)]
pub struct Injected {
    /// Seconds into the run.
    pub at_s: f64,
    /// Which.
    pub fault: String,
    /// How long it was held, s.
    pub held_s: f64,
    /// Whether injecting and clearing it worked (else why not).
    pub outcome: String,
}

/// What the faults act on.
pub struct Targets {
    /// The upstream simulators by rail (base URLs).
    pub sims: Vec<(String, String)>,
    /// The proxy in front of the destination chain's RPC.
    pub proxy: Proxy,
    /// The replicas (replica 0 is never killed: its memory curve is one
    /// lifetime).
    pub replicas: Arc<Mutex<Vec<Replica>>>,
    /// The database.
    pub postgres: Arc<Postgres>,
    /// The source chain (its blocks are paused).
    pub chain: DynProvider,
    /// The HTTP client.
    pub http: reqwest::Client,
    /// When a replica was killed.
    pub killed_at: std::sync::Mutex<Vec<Instant>>,
}

impl Targets {
    async fn sim(&self, rail: &str, faults: serde_json::Value) -> anyhow::Result<()> {
        let base = &self
            .sims
            .iter()
            .find(|(r, _)| r == rail)
            .ok_or_else(|| anyhow::anyhow!("no simulator for {rail}"))?
            .1;
        let url = format!("{}/simulator/faults", base.trim_end_matches('/'));
        let r = self.http.post(url).json(&faults).send().await?;
        anyhow::ensure!(r.status().is_success(), "simulator answered {}", r.status());
        Ok(())
    }

    async fn inject(&self, fault: &str, kills: &mut usize) -> anyhow::Result<()> {
        match fault {
            "lifi-error" => self.sim("lifi", json!({"mode": "error"})).await,
            "lifi-hang" => self.sim("lifi", json!({"mode": "hang"})).await,
            "squid-slow" => {
                self.sim("squid", json!({"mode": "none", "latencyMs": 4000}))
                    .await
            }
            "bungee-garbage" => self.sim("bungee", json!({"mode": "garbage"})).await,
            "rpc-cut" => {
                self.proxy.set(Mode::Cut);
                Ok(())
            }
            "rpc-hang" => {
                self.proxy.set(Mode::Hang);
                Ok(())
            }
            "blocks-paused" => {
                let _: () = self
                    .chain
                    .raw_request("evm_setAutomine".into(), (false,))
                    .await?;
                Ok(())
            }
            "replica-kill" => {
                let mut r = self.replicas.lock().await;
                let n = r.len();
                if n > 1 {
                    *kills += 1;
                    r[1 + (*kills - 1) % (n - 1)].kill();
                    self.killed_at.lock().expect("kills").push(Instant::now());
                }
                Ok(())
            }
            "postgres-restart" => {
                let pg = self.postgres.clone();
                tokio::task::spawn_blocking(move || pg.restart()).await?
            }
            other => anyhow::bail!("unknown fault {other}"),
        }
    }

    async fn clear(&self, fault: &str) -> anyhow::Result<()> {
        match fault {
            "lifi-error" | "lifi-hang" => self.sim("lifi", json!({"mode": "none"})).await,
            "squid-slow" => self.sim("squid", json!({"mode": "none"})).await,
            "bungee-garbage" => self.sim("bungee", json!({"mode": "none"})).await,
            "rpc-cut" | "rpc-hang" => {
                self.proxy.set(Mode::Pass);
                Ok(())
            }
            "blocks-paused" => {
                let _: () = self
                    .chain
                    .raw_request("evm_setAutomine".into(), (true,))
                    .await?;
                let _: String = self.chain.raw_request("evm_mine".into(), ()).await?;
                Ok(())
            }
            "replica-kill" => self.restart_dead().await,
            _ => Ok(()),
        }
    }

    /// Starts every replica that is down and waits until it answers.
    pub async fn restart_dead(&self) -> anyhow::Result<()> {
        let mut r = self.replicas.lock().await;
        for replica in r.iter_mut().filter(|x| !x.running()) {
            replica.spawn()?;
            replica.ready(&self.http, Duration::from_secs(120)).await?;
        }
        Ok(())
    }

    /// Clears every fault (the end of the run).
    pub async fn clear_all(&self) -> anyhow::Result<()> {
        for f in SCHEDULE {
            self.clear(f).await?;
        }
        Ok(())
    }
}

/// Runs the schedule until `until`; the log of what was injected.
pub async fn run(
    t: &Targets,
    started: Instant,
    until: Instant,
    (every, hold): (Duration, Duration),
) -> Vec<Injected> {
    let mut log = Vec::new();
    let mut kills = 0;
    let mut next = Instant::now() + every;
    for fault in SCHEDULE.iter().cycle() {
        tokio::time::sleep_until(next.into()).await;
        if Instant::now() + hold > until {
            break;
        }
        let at = started.elapsed().as_secs_f64();
        tracing::info!(fault, "fault injected");
        let injected = t.inject(fault, &mut kills).await;
        tokio::time::sleep(hold).await;
        let cleared = t.clear(fault).await;
        let outcome = match (injected, cleared) {
            (Ok(()), Ok(())) => "ok".to_string(),
            (Err(e), _) => format!("not injected: {e}"),
            (_, Err(e)) => format!("not cleared: {e}"),
        };
        tracing::info!(fault, %outcome, "fault cleared");
        log.push(Injected {
            at_s: at,
            fault: fault.to_string(),
            held_s: started.elapsed().as_secs_f64() - at,
            outcome,
        });
        next += every;
    }
    log
}
