//! `relay devnet`: the devnet standing alone — chains, contracts and
//! simulators, no host. It writes a ready `relay.toml` and an env file with
//! the devnet's (publicly known) keys into its directory, so hosts are
//! started, `kill -9`ed, restarted and run as replicas with
//! `relay serve --config <dir>/relay.toml` while the devnet stays up.

use crate::devnet::{start_mesh, UpError, UpOptions, DEVNET_OWNER_TOKEN, DEVNET_UPSTREAM_KEY_ENV};
use crate::server::OWNER_TOKEN_HASH_ENV;
use relay_config::HostConfig;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The configuration file `relay devnet` writes into its directory, last
/// and atomically: once it exists, the devnet answers.
pub const CONFIG_FILE: &str = "relay.toml";

/// The env file `relay devnet` writes into its directory (mode 0600):
/// the relayer key, the upstream key, the owner token's hash. DEVNET ONLY.
pub const ENV_FILE: &str = "devnet.env";

/// The line `relay devnet` prints on stdout once its files are written.
pub const READY_LINE: &str = "relay devnet is ready";

/// Options of `relay devnet`.
#[derive(Clone, Debug)]
pub struct DevnetOptions {
    /// Where `relay.toml`, `devnet.env` and the hosts' data go.
    pub dir: PathBuf,
    /// Chain ids.
    pub chains: Vec<u64>,
    /// Block time in seconds (default: instant mining).
    pub block_time: Option<u64>,
}

/// `relay devnet`: starts the mesh over `base`, writes `<dir>/devnet.env`
/// then `<dir>/relay.toml`, prints how to serve, and stays up until Ctrl-C
/// or SIGTERM; everything stops with it.
pub async fn devnet(base: HostConfig, opts: DevnetOptions) -> Result<(), UpError> {
    let dir = absolute(&opts.dir)?;
    let config_path = dir.join(CONFIG_FILE);
    std::fs::create_dir_all(&dir).map_err(|source| write_error(&dir, source))?;
    // A file from an earlier run would read as "ready" before this one is.
    let _ = std::fs::remove_file(&config_path);
    let base = HostConfig {
        data_dir: dir.join("data"),
        plugins_dir: absolute(&base.plugins_dir)?,
        ..base
    };
    let up = UpOptions {
        chains: opts.chains,
        block_time: opts.block_time,
        data_dir: base.data_dir.clone(),
    };
    let mesh = start_mesh(base, &up).await?;
    write_private(&dir.join(ENV_FILE), &env_file())?;
    let toml = toml::to_string(&mesh.config)
        .map_err(|e| write_error(&config_path, std::io::Error::other(e)))?;
    write_atomically(&config_path, &toml)?;
    println!("{}", instructions(&dir, &mesh));
    println!("{READY_LINE}");
    shutdown_signal().await;
    drop(mesh.sims);
    mesh.chains.stop();
    Ok(())
}

/// The env file's text. DEVNET ONLY: every value is publicly known.
fn env_file() -> String {
    let key = relay_devnet::keys::relayer().to_bytes();
    let owner = Sha256::digest(DEVNET_OWNER_TOKEN.as_bytes());
    let pool: Vec<String> = (0..3)
        .map(|i| {
            format!(
                "0x{}",
                hex::encode(relay_devnet::keys::relayer_pool(i).to_bytes())
            )
        })
        .collect();
    format!(
        "# relay devnet: DEVNET ONLY, every key here is publicly known (anvil's).\n\
         RELAY_RELAYER_KEY=0x{}\n\
         {DEVNET_UPSTREAM_KEY_ENV}=devnet-only\n\
         # sha256 of the owner token {DEVNET_OWNER_TOKEN}\n\
         {OWNER_TOKEN_HASH_ENV}={}\n\
         # a relayer key pool of four keys (the relayer's and these three, funded on\n\
         # every chain; up to eight are): uncomment to spread routes over them\n\
         # {}={}\n",
        hex::encode(key),
        hex::encode(owner),
        relay_chain::signer::POOL_KEYS_ENV,
        pool.join(","),
    )
}

/// What `relay devnet` prints: the mesh, the files and how to serve them.
fn instructions(dir: &Path, mesh: &crate::devnet::Mesh) -> String {
    let (config, env) = (dir.join(CONFIG_FILE), dir.join(ENV_FILE));
    let mut s = String::from(
        "relay devnet is up without a host (DEVNET ONLY: every key is publicly known)\n\n",
    );
    s.push_str(&crate::devnet::mesh_lines(&mesh.chains, &mesh.sims));
    s.push_str(&format!(
        "\n  config    {}\n  env       {}   (relayer key, upstream key, owner token hash; mode 0600)\n",
        config.display(),
        env.display()
    ));
    s.push_str(&format!(
        "\n  serve:\n    set -a; . {env}; set +a\n    relay serve --config {config}\n\
         \n  two replicas on one Postgres database:\n    \
         RELAY_DATABASE_URL=postgres://… RELAY_LISTEN=127.0.0.1:8787 relay serve --config {config}\n    \
         RELAY_DATABASE_URL=postgres://… RELAY_LISTEN=127.0.0.1:8788 relay serve --config {config}\n\
         \n  Ctrl-C (or SIGTERM) stops the chains and the simulators.",
        env = env.display(),
        config = config.display(),
    ));
    s
}

/// `path` from the current directory, so the files work from anywhere.
fn absolute(path: &Path) -> Result<PathBuf, UpError> {
    std::path::absolute(path).map_err(|source| write_error(path, source))
}

fn write_error(path: &Path, source: std::io::Error) -> UpError {
    UpError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `text` to a temporary file beside `path`, then renames it: a
/// reader sees no file or the whole file.
fn write_atomically(path: &Path, text: &str) -> Result<(), UpError> {
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(|source| write_error(&tmp, source))?;
    std::fs::rename(&tmp, path).map_err(|source| write_error(path, source))
}

/// Writes a file only its owner may read (mode 0600 on Unix).
fn write_private(path: &Path, text: &str) -> Result<(), UpError> {
    use std::io::Write;
    // The mode applies when the file is created: start from none.
    let _ = std::fs::remove_file(path);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts
        .open(path)
        .map_err(|source| write_error(path, source))?;
    f.write_all(text.as_bytes())
        .map_err(|source| write_error(path, source))
}

/// Ctrl-C, or SIGTERM on Unix (a supervisor's stop).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
