//! `relay-conformance`: the rail conformance kit's command line.
//!
//! ```text
//! relay-conformance rail plugins/dist/floatlane-wasm/floatlane.wasm
//! relay-conformance rail a.so b.wasm        # also checks the two agree
//! relay-conformance http http://127.0.0.1:8787 --from-chain 8453 --to-chain 42161
//! ```
//! Exit status 0 when every clause holds, 1 when one fails (each failure
//! names its clause), 2 on usage errors.

use clap::{Parser, Subcommand};
use relay_conformance::rail::{self, KitOptions, KnownToken, Report};
use relay_plugin_api::ChainRef;
use std::{path::PathBuf, process::ExitCode, time::Duration};

#[derive(Debug, Parser)]
#[command(name = "relay-conformance", about = "The relay rail conformance kit")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check one or two artifacts of a rail (two: also that they agree).
    Rail(RailArgs),
    /// Check a live host against the HTTP API contract (moves no funds).
    Http(relay_conformance::http::Target),
}

/// Arguments of `relay-conformance rail`.
#[derive(Debug, clap::Args)]
struct RailArgs {
    /// Plugin artifacts (`.so`/`.dylib` native, `.wasm` component).
    #[arg(required = true, num_args = 1..=2)]
    artifacts: Vec<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Rail configuration `key=value` (repeatable).
    #[arg(long = "config", value_parser = pair)]
    config: Vec<(String, String)>,
    /// RPC endpoint `chainId=url` (repeatable).
    #[arg(long = "rpc", value_parser = pair)]
    rpc: Vec<(String, String)>,
    /// Token `chain:SYMBOL=address[:decimals]` (repeatable).
    #[arg(long = "token", value_parser = token)]
    tokens: Vec<KnownToken>,
    /// Extra egress host granted to the rail (repeatable).
    #[arg(long = "egress")]
    egress: Vec<String>,
    /// Allow loopback/private egress (local simulators).
    #[arg(long)]
    allow_private: bool,
    /// Deadline of each call, ms.
    #[arg(long, default_value_t = 3000)]
    timeout_ms: u64,
}

fn pair(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("expected key=value, got {s:?}"))
}

fn token(s: &str) -> Result<KnownToken, String> {
    let (lhs, rhs) = s
        .split_once('=')
        .ok_or("expected chain:SYMBOL=address[:decimals]")?;
    let (chain, symbol) = lhs.split_once(':').ok_or("expected chain:SYMBOL")?;
    let (address, decimals) = match rhs.split_once(':') {
        Some((a, d)) => (a, d.parse::<u8>().map_err(|e| e.to_string())?),
        None => (
            rhs,
            if symbol.eq_ignore_ascii_case("WBTC") {
                8
            } else {
                6
            },
        ),
    };
    Ok(KnownToken {
        chain: chain.parse::<ChainRef>().map_err(|e| e.to_string())?,
        symbol: symbol.to_ascii_uppercase(),
        address: address.to_string(),
        decimals,
    })
}

fn print(report: &Report) {
    println!(
        "{} ({}, rail {})",
        report.artifact,
        report.kind.as_str(),
        report.rail.as_deref().unwrap_or("?")
    );
    for c in &report.clauses {
        println!(
            "  {} {:<30} {}",
            if c.passed { "PASS" } else { "FAIL" },
            c.clause,
            c.detail
        );
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("relay-conformance: cannot start a runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = rt.block_on(run(cli));
    // A hung native plugin keeps a blocking thread; do not wait for it.
    rt.shutdown_background();
    code
}

async fn run(cli: Cli) -> ExitCode {
    let a = match cli.command {
        Command::Rail(a) => a,
        Command::Http(t) => return http(&t).await,
    };
    let RailArgs {
        artifacts,
        json,
        config,
        rpc,
        tokens,
        egress,
        allow_private,
        timeout_ms,
    } = a;
    let opts = KitOptions {
        call_timeout: Duration::from_millis(timeout_ms),
        rail_config: config,
        rpc,
        tokens,
        extra_egress: egress,
        allow_private,
        ..KitOptions::default()
    };
    let mut reports = Vec::new();
    for a in &artifacts {
        reports.push(rail::check(a, &opts).await);
    }
    let agree = match artifacts.as_slice() {
        [a, b] => Some(rail::packagings_agree(a, b, &opts).await),
        _ => None,
    };
    let passed = reports.iter().all(Report::passed) && agree.as_ref().is_none_or(|c| c.passed);
    if json {
        let v = serde_json::json!({ "passed": passed, "reports": reports, "agree": agree });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        reports.iter().for_each(print);
        if let Some(c) = &agree {
            println!(
                "  {} {:<30} {}",
                if c.passed { "PASS" } else { "FAIL" },
                c.clause,
                c.detail
            );
        }
        let failed: usize = reports.iter().map(|r| r.failures().len()).sum::<usize>()
            + agree.iter().filter(|c| !c.passed).count();
        println!(
            "{}",
            if passed {
                "conformance: PASS".to_string()
            } else {
                format!("conformance: FAIL ({failed} clauses)")
            }
        );
    }
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

async fn http(t: &relay_conformance::http::Target) -> ExitCode {
    let report = relay_conformance::http::run(t).await;
    for r in &report.results {
        println!(
            "  {} {:<40} {}",
            if r.passed { "PASS" } else { "FAIL" },
            r.rule,
            r.detail
        );
    }
    if report.passed() {
        println!("http contract: PASS");
        ExitCode::SUCCESS
    } else {
        println!("http contract: FAIL");
        ExitCode::from(1)
    }
}
