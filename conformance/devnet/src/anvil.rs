//! Starting and stopping anvil nodes on loopback.
//!
//! Each node listens on 127.0.0.1 with an ephemeral port chosen by the operating system
//! (`--port 0`); the port is read from anvil's `Listening on` line, then `eth_chainId` is
//! polled (bounded) until the node answers with the expected chain id. A node is killed when
//! its [`AnvilNode`] is dropped or [`AnvilNode::stop`]ped. Never binds a non-loopback address.

use std::{
    ffi::OsString,
    io::{BufRead, BufReader, Read},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use crate::{DevnetError, Result};
use alloy::{
    providers::{Provider, ProviderBuilder},
    transports::http::reqwest::Url,
};
use tokio::sync::oneshot;

/// The environment variable that overrides where the anvil binary is.
pub const ANVIL_ENV: &str = "RELAY_ANVIL";

/// How much of anvil's stderr is kept for error messages.
const STDERR_TAIL: usize = 8 * 1024;

/// How to start one anvil node.
#[derive(Debug, Clone)]
pub struct AnvilConfig {
    /// The chain id the node reports.
    pub chain_id: u64,
    /// Interval mining, in whole seconds; `None` (the default) mines a block per transaction.
    pub block_time_secs: Option<u64>,
    /// How long to wait for the node to answer; default 30 s.
    pub startup_timeout: Duration,
}

impl AnvilConfig {
    /// An automining node for `chain_id` with the default startup timeout.
    pub fn new(chain_id: u64) -> Self {
        Self {
            chain_id,
            block_time_secs: None,
            startup_timeout: Duration::from_secs(30),
        }
    }
}

/// The project-local tools directory, `<repo>/.tools`, filled by `tools/install.sh`.
pub fn tools_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .join(".tools")
}

/// Finds the anvil binary: `$RELAY_ANVIL`, then `<repo>/.tools/bin/anvil`, then `$PATH`.
pub fn locate_anvil() -> Result<PathBuf> {
    locate_anvil_in(
        std::env::var_os(ANVIL_ENV),
        &tools_dir().join("bin/anvil"),
        std::env::var_os("PATH"),
    )
}

fn locate_anvil_in(env: Option<OsString>, tools: &Path, path: Option<OsString>) -> Result<PathBuf> {
    if let Some(explicit) = env.filter(|v| !v.is_empty()) {
        let explicit = PathBuf::from(explicit);
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(DevnetError::AnvilEnvInvalid(explicit))
        };
    }
    if tools.is_file() {
        return Ok(tools.to_path_buf());
    }
    path.iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("anvil"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| DevnetError::AnvilNotFound {
            tools_path: tools.to_path_buf(),
        })
}

/// The hardfork every devnet chain runs: Prague, the first with EIP-7702.
pub const HARDFORK: &str = "prague";

/// A running anvil node; killed on drop.
#[derive(Debug)]
pub struct AnvilNode {
    chain_id: u64,
    addr: SocketAddr,
    child: Option<Child>,
}

impl AnvilNode {
    /// Starts `binary` as a node for `config` and waits until it answers `eth_chainId`.
    pub async fn start(binary: &Path, config: &AnvilConfig) -> Result<Self> {
        let chain_id = config.chain_id;
        let mut cmd = Command::new(binary);
        cmd.args(["--host", "127.0.0.1", "--port", "0", "--accounts", "10"])
            .args(["--chain-id", &chain_id.to_string()])
            // EIP-7702 (type-4 transactions) needs Prague; anvil 1.7.1's default is
            // later still (BPO1): pinned so a new anvil cannot change the rules
            .args(["--hardfork", HARDFORK])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(secs) = config.block_time_secs {
            cmd.args(["--block-time", &secs.to_string()]);
        }
        let mut child = cmd
            .spawn()
            .map_err(|source| DevnetError::Spawn { chain_id, source })?;
        let listening = watch_stdout(chain_id, child.stdout.take().expect("stdout is piped"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = collect_stderr(
            child.stderr.take().expect("stderr is piped"),
            stderr.clone(),
        );
        // From here on the node is owned by `node`, so every error path kills the process.
        let mut node = Self {
            chain_id,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            child: Some(child),
        };

        let timeout = config.startup_timeout;
        let started = Instant::now();
        node.addr = match tokio::time::timeout(timeout, listening).await {
            Ok(Ok(addr)) => addr,
            Ok(Err(_closed)) => {
                let stderr = tokio::task::spawn_blocking(move || {
                    node.stop();
                    let _ = stderr_reader.join();
                    let tail = stderr.lock().map(|s| s.clone()).unwrap_or_default();
                    tail
                })
                .await
                .unwrap_or_default();
                return Err(DevnetError::AnvilExited { chain_id, stderr });
            }
            Err(_elapsed) => return Err(DevnetError::StartupTimeout { chain_id, timeout }),
        };
        node.wait_for_chain_id(timeout.saturating_sub(started.elapsed()))
            .await?;
        tracing::debug!(chain_id, addr = %node.addr, "anvil ready");
        Ok(node)
    }

    /// Polls `eth_chainId` with a bounded, backing-off retry loop until the node answers.
    async fn wait_for_chain_id(&self, budget: Duration) -> Result<()> {
        let provider = ProviderBuilder::new().connect_reqwest(crate::rpc_client(), self.rpc_url());
        let deadline = Instant::now() + budget;
        let mut delay = Duration::from_millis(5);
        loop {
            match provider.get_chain_id().await {
                Ok(got) if got == self.chain_id => return Ok(()),
                Ok(got) => {
                    return Err(DevnetError::ChainIdMismatch {
                        expected: self.chain_id,
                        got,
                    })
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(DevnetError::rpc(format!(
                        "eth_chainId on chain {}",
                        self.chain_id
                    ))(e))
                }
                Err(_) => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(200));
                }
            }
        }
    }

    /// The chain id the node was started with.
    pub fn chain_id(&self) -> u64 {
        self.chain_id
    }

    /// The loopback address the node listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The node's JSON-RPC URL, `http://127.0.0.1:<port>`.
    pub fn rpc_url(&self) -> Url {
        Url::parse(&format!("http://{}", self.addr)).expect("a socket address makes a valid URL")
    }

    /// Kills the node and reaps the process; idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            tracing::debug!(chain_id = self.chain_id, "anvil stopped");
        }
    }
}

impl Drop for AnvilNode {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts one node per config, concurrently; on any failure the started ones are killed.
pub async fn start_all(binary: &Path, configs: &[AnvilConfig]) -> Result<Vec<AnvilNode>> {
    futures::future::try_join_all(configs.iter().map(|c| AnvilNode::start(binary, c))).await
}

/// Reads anvil's stdout on a thread: reports the `Listening on` address once, then keeps
/// draining (so anvil never blocks on a full pipe), logging each line at trace level.
fn watch_stdout(
    chain_id: u64,
    stdout: impl Read + Send + 'static,
) -> oneshot::Receiver<SocketAddr> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if let Some(addr) = line
                .strip_prefix("Listening on ")
                .and_then(|a| a.trim().parse().ok())
            {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(addr);
                }
            }
            tracing::trace!(target: "relay_devnet::anvil", chain_id, "{line}");
        }
    });
    rx
}

/// Reads anvil's stderr on a thread, keeping the last [`STDERR_TAIL`] bytes.
fn collect_stderr(stderr: impl Read + Send + 'static, tail: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            tracing::debug!(target: "relay_devnet::anvil", "{line}");
            if let Ok(mut tail) = tail.lock() {
                tail.push_str(&line);
                tail.push('\n');
                if tail.len() > STDERR_TAIL {
                    let cut = tail.len() - STDERR_TAIL;
                    let cut = (cut..tail.len())
                        .find(|i| tail.is_char_boundary(*i))
                        .unwrap_or(0);
                    tail.drain(..cut);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_anvil_error_names_the_installer() {
        let err = locate_anvil_in(
            None,
            Path::new("/nonexistent/.tools/bin/anvil"),
            Some("/nonexistent".into()),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("conformance/devnet/tools/install.sh"), "{msg}");
        assert!(msg.contains("/nonexistent/.tools/bin/anvil"), "{msg}");
    }

    #[test]
    fn invalid_env_override_is_an_error_not_a_fallback() {
        let err =
            locate_anvil_in(Some("/nonexistent/anvil".into()), Path::new("/"), None).unwrap_err();
        assert!(matches!(err, DevnetError::AnvilEnvInvalid(_)));
        assert!(err.to_string().contains("install.sh"));
    }

    #[test]
    fn tools_dir_is_at_the_repo_root() {
        assert!(tools_dir().ends_with(".tools"));
        assert!(tools_dir().parent().unwrap().join("Cargo.toml").is_file());
    }
}
