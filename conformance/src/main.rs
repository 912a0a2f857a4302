//! `relay-conformance`: the rail conformance kit's command line.
//!
//! ```text
//! relay-conformance rail plugins/dist/floatlane-wasm/floatlane.wasm
//! relay-conformance rail a.so b.wasm        # also checks the two agree
//! relay-conformance rail acme.wasm --config base_url=http://127.0.0.1:9000 \
//!     --egress 127.0.0.1 --allow-private --report json
//! relay-conformance rail acme.so acme.wasm --fixture fixture/upstream.json
//! relay-conformance rail squid.so --fixture rails/squid/tests/fixtures/vendor \
//!     --config relayer=0x… --config credential=squid \
//!     --credential squid=x-integrator-id:SQUID_ID
//! relay-conformance http http://127.0.0.1:8787 --from-chain 8453 --to-chain 42161
//! ```
//! Exit status 0 when every clause holds, 1 when one fails (each failure
//! names its clause, the cause and the fix), 2 on usage errors.
//!
//! Every flag of `rail` stands for an operator setting of the host, so a
//! rail that passes here runs under the same settings in `relay.toml`:
//! `--config k=v` is `[rails.<id>] config.k`, `--egress` is `[rails.<id>]
//! egress`, `--contract` is `[rails.<id>] contracts`, `--credential` is
//! `[capabilities.credentials.<name>]` plus `[rails.<id>] credentials`,
//! `--rpc` is `[capabilities.rpc]`, `--allow-private` is `[capabilities]
//! allow_private_networks`, `--timeout-ms` is `[runtime] call_timeout_ms`.

use clap::{Parser, Subcommand};
use relay_config::CredentialConfig;
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
    /// Report format: `text` (one line per clause, then its fix) or `json`
    /// (the clause list with each clause's cause, fix and what it
    /// exercised).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    report: Format,
    /// Same as `--report json`.
    #[arg(long, hide = true)]
    json: bool,
    /// Rail configuration `key=value` (repeatable; operator config
    /// `[rails.<id>.config]`).
    #[arg(long = "config", value_parser = pair)]
    config: Vec<(String, String)>,
    /// RPC endpoint `chainId=url` (repeatable; operator config
    /// `[capabilities.rpc]`). Its chain joins the kit's scope.
    #[arg(long = "rpc", value_parser = pair)]
    rpc: Vec<(String, String)>,
    /// Token `chain:SYMBOL=address[:decimals]` (repeatable). Its chain joins
    /// the kit's scope: every declared direction between chains in scope is
    /// quoted.
    #[arg(long = "token", value_parser = token)]
    tokens: Vec<KnownToken>,
    /// Sender/recipient address the kit uses on a chain, `chain=address`
    /// (repeatable; e.g. `bitcoin=bcrt1q…` for a regtest upstream). Its
    /// chain joins the kit's scope.
    #[arg(long = "address", value_parser = address)]
    addresses: Vec<(ChainRef, String)>,
    /// Extra egress host granted to the rail (repeatable; operator config
    /// `[rails.<id>] egress`).
    #[arg(long = "egress")]
    egress: Vec<String>,
    /// Contract the rail's plans may call besides those its manifest
    /// declares: `0x…`, `<chainId>:0x…` or `*` (repeatable; operator config
    /// `[rails.<id>] contracts`).
    #[arg(long = "contract")]
    contracts: Vec<String>,
    /// Credential `name=header:ENV_VAR` the host injects into the rail's
    /// requests (repeatable; operator config
    /// `[capabilities.credentials.<name>]` and `[rails.<id>] credentials`).
    #[arg(long = "credential", value_parser = credential)]
    credentials: Vec<(String, CredentialConfig)>,
    /// A recorded upstream (`fixture/upstream.json`, see
    /// `relay_rail_sdk::fixture`) to serve on loopback and point the rail
    /// at: sets `--config base_url=<its url> --egress 127.0.0.1
    /// --allow-private`, and replaces `@fixture` at the start of any
    /// `--config` value with its url (a rail's other upstreams:
    /// `--config attestation_base=@fixture`). A directory instead holds vendor cases
    /// (`tests/fixtures/vendor/`, see `relay_rail_sdk::vendor`): each is
    /// served in turn and the rail must make of it what the case expects
    /// (clause `agrees-with-vendor`).
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Allow loopback/private egress, for a local upstream or fixture
    /// (operator config `[capabilities] allow_private_networks`).
    #[arg(long)]
    allow_private: bool,
    /// Deadline of each call, ms (operator config `[runtime]
    /// call_timeout_ms`).
    #[arg(long, default_value_t = 3000)]
    timeout_ms: u64,
}

/// How the report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// One line per clause, the fix under each failure.
    Text,
    /// The JSON report.
    Json,
}

fn address(s: &str) -> Result<(ChainRef, String), String> {
    let (chain, address) = pair(s)?;
    Ok((
        chain.parse::<ChainRef>().map_err(|e| e.to_string())?,
        address,
    ))
}

fn credential(s: &str) -> Result<(String, CredentialConfig), String> {
    let (name, rhs) = pair(s)?;
    let (header, env) = rhs.split_once(':').ok_or("expected name=header:ENV_VAR")?;
    Ok((
        name,
        CredentialConfig {
            header: header.into(),
            env: env.into(),
            value: None,
        },
    ))
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
        println!("{}", c.render());
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
        report,
        json,
        config,
        rpc,
        tokens,
        addresses,
        egress,
        contracts,
        credentials,
        fixture,
        allow_private,
        timeout_ms,
    } = a;
    let json = json || report == Format::Json;
    let opts = KitOptions {
        call_timeout: Duration::from_millis(timeout_ms),
        rail_config: config,
        rpc,
        tokens,
        addresses,
        extra_egress: egress,
        contracts,
        credentials,
        allow_private,
        ..KitOptions::default()
    };
    // Kept alive until the reports are in.
    let served = match serve(fixture.as_deref()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("relay-conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = match &served {
        Some((s, _)) => s.apply(opts),
        None => opts,
    };
    let mut reports = Vec::new();
    let mut agree = None;
    if let Some((server, Some(cases))) = &served {
        for a in &artifacts {
            reports.push(rail::check_vendor(a, server, cases, &opts).await);
        }
    } else {
        for a in &artifacts {
            reports.push(rail::check(a, &opts).await);
        }
        if let [a, b] = artifacts.as_slice() {
            agree = Some(rail::packagings_agree(a, b, &opts).await);
        }
    }
    let passed = reports.iter().all(Report::passed) && agree.as_ref().is_none_or(|c| c.passed);
    if json {
        let v = serde_json::json!({ "passed": passed, "reports": reports, "agree": agree });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        reports.iter().for_each(print);
        if let Some(c) = &agree {
            println!("{}", c.render());
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

/// Vendor cases of a `--fixture` directory.
type Cases = Vec<(String, relay_rail_sdk::vendor::VendorCase)>;

/// The `--fixture` server: a recorded upstream file served as it is, or a
/// directory of vendor cases (served one at a time by the kit).
async fn serve(
    fixture: Option<&std::path::Path>,
) -> Result<Option<(rail::FixtureServer, Option<Cases>)>, String> {
    let Some(path) = fixture else {
        return Ok(None);
    };
    if !path.is_dir() {
        return Ok(Some((rail::FixtureServer::from_file(path).await?, None)));
    }
    let cases = relay_rail_sdk::vendor::load(path).map_err(|e| e.to_string())?;
    let server = rail::FixtureServer::start(Default::default())
        .await
        .map_err(|e| format!("cannot serve the fixture: {e}"))?;
    Ok(Some((server, Some(cases))))
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
