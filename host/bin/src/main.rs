//! The `relay` binary.

use anyhow::Context;
use clap::Parser;
use relay_config::HostConfig;
use relay_host::{
    cli::{Cli, Command, RailsCommand, Switch},
    operator,
    server::Host,
};

/// Logs go to stderr; `RELAY_LOG` filters (default `info` for the server,
/// `warn` for one-shot commands), `RELAY_LOG_FORMAT=json` for JSON lines.
fn init_tracing(default: &str) {
    use tracing_subscriber::{fmt, EnvFilter};
    let filter = EnvFilter::try_from_env("RELAY_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let json = std::env::var("RELAY_LOG_FORMAT").is_ok_and(|v| v == "json");
    let b = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        b.json().init();
    } else {
        b.init();
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing(if matches!(cli.command, Command::Serve) {
        "info"
    } else {
        "warn"
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let res = rt.block_on(run(cli));
    // A native plugin call that hung holds a blocking thread the host cannot
    // reclaim; do not wait for it on the way out.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    res
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Mcp { url } = &cli.command {
        // Needs no host configuration; stdout is the MCP stream (logs go
        // to stderr).
        return Ok(relay_mcp::local::run_stdio(url).await?);
    }
    let config = HostConfig::load(cli.config.as_deref()).context("loading configuration")?;
    match cli.command {
        Command::Serve => {
            let host = Host::build(config).await?;
            host.serve(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        }
        Command::Rails { command } => rails(&config, command).await?,
        Command::Up { chains, block_time } => up(config, chains.0, block_time).await?,
        Command::Mcp { url } => relay_mcp::local::run_stdio(&url).await?,
    }
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
