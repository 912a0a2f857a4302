//! What the soak runs: its own Postgres cluster (restartable: a fault),
//! `relay devnet` as a process, and the `relay serve` replicas on both —
//! spawned, `kill -9`ed and restarted, their memory and open files sampled.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};

/// A throwaway PostgreSQL cluster on a loopback port, owned by the soak.
pub struct Postgres {
    bindir: PathBuf,
    data: PathBuf,
    port: u16,
    /// As whom its tools run (`postgres` when the soak runs as root).
    runas: Vec<String>,
}

impl Postgres {
    /// `initdb` into `dir` and start on `port` (PostgreSQL installed with
    /// apt when missing, as `conformance/tools/postgres.sh` does).
    pub fn start(dir: &Path, port: u16) -> Result<Self> {
        let bindir = pg_bindir()?;
        let root = run_out("id", &["-u"])?.trim() == "0";
        let runas: Vec<String> = match root {
            true => ["runuser", "-u", "postgres", "--"]
                .map(String::from)
                .to_vec(),
            false => Vec::new(),
        };
        if root {
            let _ = Command::new("useradd")
                .args(["--system", "postgres"])
                .status();
        }
        let data = dir.join("pg");
        std::fs::create_dir_all(&data)?;
        if root {
            run("chown", &["-R", "postgres", &data.display().to_string()])?;
        }
        let pg = Postgres {
            bindir,
            data,
            port,
            runas,
        };
        let initdb = pg.bindir.join("initdb").display().to_string();
        let d = pg.data.display().to_string();
        pg.as_owner(&initdb, &["-D", &d, "-U", "postgres", "--auth=trust"])?;
        pg.ctl(&["start"])?;
        Ok(pg)
    }

    /// `postgres://postgres@127.0.0.1:<port>/<db>`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates database `name`.
    pub fn create_db(&self, name: &str) -> Result<()> {
        run(
            "psql",
            &[
                &self.url("postgres"),
                "-q",
                "-c",
                &format!("CREATE DATABASE {name}"),
            ],
        )
    }

    /// A fast restart: every connection is cut, the server is back when
    /// this returns.
    pub fn restart(&self) -> Result<()> {
        self.ctl(&["-m", "fast", "restart"])
    }

    fn ctl(&self, what: &[&str]) -> Result<()> {
        let pg_ctl = self.bindir.join("pg_ctl").display().to_string();
        let d = self.data.display().to_string();
        let opts = format!("-p {} -k /tmp -c listen_addresses=127.0.0.1", self.port);
        let log = self.data.join("log").display().to_string();
        let mut args = vec!["-D", &d, "-o", &opts, "-l", &log, "-w"];
        args.extend_from_slice(what);
        self.as_owner(&pg_ctl, &args)
    }

    fn as_owner(&self, tool: &str, args: &[&str]) -> Result<()> {
        let mut all: Vec<&str> = self.runas.iter().map(String::as_str).collect();
        all.push(tool);
        all.extend_from_slice(args);
        run(all[0], &all[1..])
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.ctl(&["-m", "immediate", "stop"]);
    }
}

fn pg_bindir() -> Result<PathBuf> {
    let find = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin")))
            .filter(|p| p.join("pg_ctl").exists())
            .collect();
        dirs.sort();
        dirs.pop()
    };
    if let Some(d) = find() {
        return Ok(d);
    }
    tracing::info!("installing postgresql");
    run("apt-get", &["update", "-q"])?;
    run("apt-get", &["install", "-y", "-q", "postgresql"])?;
    find().context("postgresql installed but no pg_ctl found")
}

fn run(tool: &str, args: &[&str]) -> Result<()> {
    let out = Command::new(tool)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .with_context(|| format!("{tool} starts"))?;
    if !out.status.success() {
        bail!(
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn run_out(tool: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(tool).args(args).output()?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `relay devnet` running in its own process.
pub struct Devnet {
    child: Child,
    /// The configuration it wrote.
    pub config: toml::Value,
    /// Its env file's variables.
    pub env: Vec<(String, String)>,
}

impl Devnet {
    /// Starts `relay devnet` on `chains` with the rails in `plugins`;
    /// returns once it printed that it is ready.
    pub fn start(relay: &Path, plugins: &Path, dir: &Path, chains: &[u64]) -> Result<Self> {
        let list: Vec<String> = chains.iter().map(u64::to_string).collect();
        let mut child = Command::new(relay)
            .args(["devnet", "--chains", &list.join(","), "--dir"])
            .arg(dir)
            .env("RELAY_PLUGINS_DIR", plugins)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(
                dir.with_extension("log"),
            )?))
            .spawn()
            .context("relay devnet starts")?;
        let out = child.stdout.take().context("devnet stdout")?;
        let mut ready = false;
        for line in BufReader::new(out).lines() {
            if line? == "relay devnet is ready" {
                ready = true;
                break;
            }
        }
        if !ready {
            bail!(
                "relay devnet ended before it was ready (see {})",
                dir.with_extension("log").display()
            );
        }
        let config: toml::Value =
            toml::from_str(&std::fs::read_to_string(dir.join("relay.toml"))?)?;
        let env = std::fs::read_to_string(dir.join("devnet.env"))?
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ok(Devnet { child, config, env })
    }

    /// Chain `id`'s first RPC URL as the devnet wrote it.
    pub fn rpc(&self, id: u64) -> Result<String> {
        self.config["chains"][id.to_string()]["rpc"][0]
            .as_str()
            .map(String::from)
            .context("chain rpc in relay.toml")
    }

    /// The base URL the devnet points `rail` at (its simulator).
    pub fn rail_url(&self, rail: &str) -> Option<String> {
        self.config
            .get("rails")?
            .get(rail)?
            .get("config")?
            .get("base_url")?
            .as_str()
            .map(String::from)
    }
}

impl Drop for Devnet {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// One memory and open-files reading of a replica.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Sample {
    /// Seconds since the soak started.
    pub at_s: f64,
    /// Resident set, KiB.
    pub rss_kib: u64,
    /// Open file descriptors.
    pub fds: u64,
}

/// A `relay serve` replica.
pub struct Replica {
    /// Its index.
    pub index: usize,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    child: Option<Child>,
    cmd: Box<dyn Fn() -> Command + Send + Sync>,
    /// Readings of each process lifetime, by start.
    pub lifetimes: Vec<Vec<Sample>>,
    /// Times it was killed.
    pub kills: u32,
}

impl Replica {
    /// A replica started by `cmd` (a fresh `relay serve` each time).
    pub fn new(index: usize, port: u16, cmd: Box<dyn Fn() -> Command + Send + Sync>) -> Self {
        Replica {
            index,
            base: format!("http://127.0.0.1:{port}"),
            child: None,
            cmd,
            lifetimes: Vec::new(),
            kills: 0,
        }
    }

    /// Starts the process (a new lifetime of samples).
    pub fn spawn(&mut self) -> Result<()> {
        self.child = Some((self.cmd)().spawn().context("relay serve starts")?);
        self.lifetimes.push(Vec::new());
        Ok(())
    }

    /// Whether its process is up (not killed).
    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// `kill -9`.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            self.kills += 1;
        }
    }

    /// Reads the process's resident set and open files.
    pub fn sample(&mut self, at_s: f64) {
        let Some(pid) = self.child.as_ref().map(Child::id) else {
            return;
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let rss_kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64);
        if let Some(l) = self.lifetimes.last_mut() {
            l.push(Sample { at_s, rss_kib, fds });
        }
    }

    /// Waits until it answers `/api/status` (at most `within`).
    pub async fn ready(&self, http: &reqwest::Client, within: Duration) -> Result<()> {
        let until = Instant::now() + within;
        loop {
            let ok = http
                .get(format!("{}/api/status", self.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ok {
                return Ok(());
            }
            if Instant::now() > until {
                bail!("replica {} not ready within {within:?}", self.index);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A free loopback port (bound once, released).
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
