//! The `relay` binary.

use anyhow::Context;
use clap::Parser;
use relay_config::HostConfig;
use relay_host::{
    cli::{Cli, Command, KeystoreCommand, RailsCommand, Switch},
    operator,
    server::Host,
};

/// Logs go to stderr; `RELAY_LOG` filters (default `info` for the server,
/// `warn` for one-shot commands), `RELAY_LOG_FORMAT=json` for JSON lines;
/// `relay serve` also exports traces over OTLP when `[telemetry]
/// otlp_endpoint` is set (read here, before the runtime starts; a bad
/// configuration is reported by `run`).
fn init_tracing(cli: &Cli) -> anyhow::Result<relay_host::telemetry::TelemetryGuard> {
    let serve = matches!(cli.command, Command::Serve);
    let telemetry = match serve {
        true => HostConfig::load(cli.config.as_deref())
            .ok()
            .map(|c| c.telemetry),
        false => None,
    };
    let default = if serve { "info" } else { "warn" };
    Ok(relay_host::telemetry::init(default, telemetry.as_ref())?)
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let telemetry = init_tracing(&cli)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let res = rt.block_on(run(cli));
    // A native plugin call that hung holds a blocking thread the host cannot
    // reclaim; do not wait for it on the way out.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    drop(telemetry); // flushes the last spans
    res
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Verify { file, signer } = &cli.command {
        return verify_bundle(file, signer.as_deref());
    }
    if let Command::Msg { url, keys, command } = &cli.command {
        return Ok(relay_host::msg::run(url, keys, command).await?);
    }
    if let Command::Pool { url, command } = &cli.command {
        return pool(url, command).await;
    }
    if let Command::Ohttp {
        relay,
        method,
        path,
        json,
        headers,
    } = &cli.command
    {
        return ohttp(relay, (method, path), json.as_deref(), headers).await;
    }
    if let Command::Mcp { url, ohttp_relay } = &cli.command {
        // Needs no host configuration; stdout is the MCP stream (logs go
        // to stderr).
        return Ok(relay_mcp::local::run_stdio(url, ohttp_relay.as_deref()).await?);
    }
    let config = HostConfig::load(cli.config.as_deref()).context("loading configuration")?;
    relay_host::server::check_config(&config).context("loading configuration")?;
    match cli.command {
        Command::Serve => {
            let host = Host::build(config).await?;
            host.serve(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        }
        Command::Rails { command } => rails(&config, command).await?,
        Command::Doctor { min_gas_wei, json } => doctor(&config, min_gas_wei, json).await?,
        Command::Keystore {
            command: KeystoreCommand::Import { out },
        } => keystore_import(&out)?,
        Command::Devnet {
            dir,
            chains,
            block_time,
        } => devnet(config, dir, chains.0, block_time).await?,
        Command::Up { chains, block_time } => up(config, chains.0, block_time).await?,
        Command::Mcp { url, ohttp_relay } => {
            relay_mcp::local::run_stdio(&url, ohttp_relay.as_deref()).await?
        }
        Command::Verify { file, signer } => verify_bundle(&file, signer.as_deref())?,
        Command::Msg { url, keys, command } => relay_host::msg::run(&url, &keys, &command).await?,
        Command::Pool { url, command } => pool(&url, &command).await?,
        Command::Ohttp {
            relay,
            method,
            path,
            json,
            headers,
        } => ohttp(&relay, (&method, &path), json.as_deref(), &headers).await?,
    }
    Ok(())
}

/// `relay pool`: prints the command's JSON.
async fn pool(url: &str, command: &relay_host::cli::PoolCommand) -> anyhow::Result<()> {
    let out = relay_host::pool::run(url, command).await?;
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

async fn rails(config: &HostConfig, cmd: RailsCommand) -> anyhow::Result<()> {
    let (state, json) = match cmd {
        RailsCommand::List { json } => {
            let report = operator::list(config).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_table(&report);
            }
            return Ok(());
        }
        RailsCommand::Enable { rail, json } => {
            (operator::set_enabled(config, &rail, true).await?, json)
        }
        RailsCommand::Disable { rail, json } => {
            (operator::set_enabled(config, &rail, false).await?, json)
        }
        RailsCommand::ExecuteReady {
            rail,
            lane,
            switch,
            json,
        } => (
            operator::set_execute_ready(config, &rail, &lane, switch == Switch::On).await?,
            json,
        ),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&state)?);
    } else {
        println!("ok");
    }
    Ok(())
}

fn print_table(r: &operator::RailsReport) {
    println!(
        "{:<14} {:<8} {:<9} {:<7} {:<8} LANES",
        "RAIL", "PACKAGE", "VERSION", "ACTIVE", "ENABLED"
    );
    for l in &r.rails {
        let lanes: Vec<String> = l
            .manifest
            .coverage
            .iter()
            .map(|c| {
                let ready = r.operator.lane_execute_ready(&l.id, &c.lane, c.executable);
                format!(
                    "{}{}",
                    c.lane,
                    if ready { "" } else { " (executeReady off)" }
                )
            })
            .collect();
        println!(
            "{:<14} {:<8} {:<9} {:<7} {:<8} {}",
            l.id,
            l.packaging.as_str(),
            l.version,
            l.active,
            r.operator.rail_enabled(&l.id),
            lanes.join(", ")
        );
    }
    for x in &r.rejected {
        println!(
            "REFUSED {} ({}): {}",
            x.id.as_deref().unwrap_or("?"),
            x.manifest_path.display(),
            x.reason
        );
    }
}

/// `relay doctor`: the table (or JSON); exits 1 when a check fails.
async fn doctor(config: &HostConfig, min_gas_wei: u128, json: bool) -> anyhow::Result<()> {
    let report = relay_host::doctor::run(config, alloy::primitives::U256::from(min_gas_wei)).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", relay_host::doctor::table(&report));
    }
    if !report.ok {
        std::process::exit(1);
    }
    Ok(())
}

/// `relay keystore import`: the key from the environment or stdin, the
/// passphrase from the environment; only the address is printed.
fn keystore_import(out: &std::path::Path) -> anyhow::Result<()> {
    use relay_chain::signer::{RelayerSigner, KEYSTORE_PASSPHRASE_ENV, RELAYER_KEY_ENV};
    let key = match std::env::var(RELAYER_KEY_ENV) {
        Ok(k) => k,
        Err(_) => {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            line
        }
    };
    let signer = RelayerSigner::from_hex(&key)?;
    let pass = std::env::var(KEYSTORE_PASSPHRASE_ENV)
        .with_context(|| format!("set {KEYSTORE_PASSPHRASE_ENV} to the keystore's passphrase"))?;
    signer.write_keystore(out, &pass)?;
    println!("wrote {} for relayer {}", out.display(), signer.address());
    Ok(())
}

#[cfg(feature = "devnet")]
async fn devnet(
    config: HostConfig,
    dir: std::path::PathBuf,
    chains: Vec<u64>,
    block_time: Option<u64>,
) -> anyhow::Result<()> {
    let opts = relay_host::standalone::DevnetOptions {
        dir,
        chains,
        block_time,
    };
    Ok(relay_host::standalone::devnet(config, opts).await?)
}

#[cfg(not(feature = "devnet"))]
async fn devnet(
    _: HostConfig,
    _: std::path::PathBuf,
    _: Vec<u64>,
    _: Option<u64>,
) -> anyhow::Result<()> {
    up(HostConfig::default(), Vec::new(), None).await
}

#[cfg(feature = "devnet")]
async fn up(config: HostConfig, chains: Vec<u64>, block_time: Option<u64>) -> anyhow::Result<()> {
    Ok(relay_host::devnet::up(config, chains, block_time).await?)
}

#[cfg(not(feature = "devnet"))]
async fn up(_: HostConfig, _: Vec<u64>, _: Option<u64>) -> anyhow::Result<()> {
    anyhow::bail!(
        "this relay was built without the devnet; build it with `cargo build -p relay-host --features devnet` (conformance/up.sh does)"
    )
}

/// `relay ohttp`: one request through the privacy lane.
async fn ohttp(
    relay: &str,
    (method, path): (&str, &str),
    json: Option<&str>,
    headers: &[String],
) -> anyhow::Result<()> {
    let mut pairs: Vec<(&str, &str)> = headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim(), v.trim()))
                .context("a header is `name: value`")
        })
        .collect::<anyhow::Result<_>>()?;
    if json.is_some() {
        pairs.push(("content-type", "application/json"));
    }
    let client = relay_privacy::client::ObliviousClient::new(relay);
    let body = json.unwrap_or("").as_bytes();
    let answer = client
        .send(&method.to_ascii_uppercase(), path, &pairs, body)
        .await?;
    eprintln!(
        "HTTP {} (inner response {} bytes)",
        answer.status, answer.inner_len
    );
    println!("{}", String::from_utf8_lossy(&answer.body));
    anyhow::ensure!(answer.status < 400, "the host answered {}", answer.status);
    Ok(())
}

/// `relay verify`: checks an evidence bundle offline and prints what held.
fn verify_bundle(file: &std::path::Path, signer: Option<&str>) -> anyhow::Result<()> {
    let expected = signer
        .map(|s| s.parse::<alloy::primitives::Address>())
        .transpose()
        .context("--signer is not an address")?;
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    match relay_analysis::evidence::verify_file(&bytes, expected) {
        Ok(v) => {
            println!(
                "OK {} route {} outcome {} sealed by {}",
                relay_analysis::evidence::FORMAT,
                v.route_id,
                v.verdict.as_str(),
                v.signer
            );
            for c in &v.checks {
                println!("  ok  {c}");
            }
            Ok(())
        }
        Err(e) => anyhow::bail!("FAILED: {e}"),
    }
}
