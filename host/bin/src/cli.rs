//! The `relay` command line: `serve`, and the operator's `rails` commands.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// relay: a gasless cross-chain relay host.
#[derive(Debug, Parser)]
#[command(name = "relay", version, about)]
pub struct Cli {
    /// Configuration file (TOML). `RELAY_*` environment variables override it.
    #[arg(long, global = true, env = "RELAY_CONFIG")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API.
    Serve,
    /// Bring the devnet mesh up (anvil chains, contracts, simulators) with
    /// the host on top; Ctrl-C stops everything. DEVNET ONLY.
    Up {
        /// Chain ids (comma-separated) from the gasless set.
        #[arg(long, value_delimiter = ',', default_value = "1,8453,42161,10")]
        chains: Vec<u64>,
        /// Block time in seconds (default: a block per transaction).
        #[arg(long)]
        block_time: Option<u64>,
    },
    /// Inspect and switch installed rails.
    Rails {
        /// What to do with them.
        #[command(subcommand)]
        command: RailsCommand,
    },
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// `relay rails …`.
#[derive(Debug, Subcommand)]
pub enum RailsCommand {
    /// List installed plugins (loaded and refused) and operator state.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Enable a rail.
    Enable {
        /// Rail id.
        rail: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Disable a rail (no quotes, no execute).
    Disable {
        /// Rail id.
        rail: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn `executeReady` of one lane on or off.
    ExecuteReady {
        /// Rail id.
        rail: String,
        /// Lane name (e.g. `evm->evm`).
        lane: String,
        /// on or off.
        switch: Switch,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
