//! The `relay` command line: `serve`, `mcp` (the local tool server), and
//! the operator's `rails` commands.

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
        /// Chain ids (comma-separated) from the gasless set, or `all` for
        /// the whole set (22 chains, one anvil each).
        #[arg(long, default_value = "1,8453,42161,10")]
        chains: ChainList,
        /// Block time in seconds (default: a block per transaction).
        #[arg(long)]
        block_time: Option<u64>,
    },
    /// Bring the devnet up without a host (anvil chains, contracts,
    /// simulators): writes `<dir>/relay.toml` and `<dir>/devnet.env` for
    /// `relay serve --config <dir>/relay.toml`, and stays up until Ctrl-C
    /// or SIGTERM. DEVNET ONLY.
    Devnet {
        /// Where the configuration, the env file and the hosts' data go.
        #[arg(long, default_value = ".relay-devnet")]
        dir: PathBuf,
        /// Chain ids (comma-separated) from the gasless set, or `all`.
        #[arg(long, default_value = "1,8453,42161,10")]
        chains: ChainList,
        /// Block time in seconds (default: a block per transaction).
        #[arg(long)]
        block_time: Option<u64>,
    },
    /// Check the configuration against the live endpoints it names: RPC
    /// chain ids, upstream health, the relayer key and its gas, the store.
    /// Prints a pass/fail table with fixes; exits 1 if any check fails.
    Doctor {
        /// Least native balance of the relayer on every chain, wei.
        #[arg(long, default_value_t = crate::doctor::DEFAULT_MIN_GAS_WEI)]
        min_gas_wei: u128,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the relayer key into an encrypted JSON keystore file.
    Keystore {
        /// What to do.
        #[command(subcommand)]
        command: KeystoreCommand,
    },
    /// Verify an evidence bundle (`GET /api/evidence/bundle`) offline:
    /// its canonical form, the relayer's seal, the user's signature and the
    /// outcome against the receipts it carries. Exit 0 when it holds, 1
    /// (naming what failed) when it does not. Needs no configuration.
    Verify {
        /// The bundle file.
        file: PathBuf,
        /// The relayer address to trust (default: any, named in the answer).
        #[arg(long)]
        signer: Option<String>,
    },
    /// The local MCP tool server: MCP over stdio for one agent, against
    /// the host at `--url` — the hosted read-only tools plus execute (with
    /// the agent's own Permit2 signature), session_execute (bearer from
    /// RELAY_SESSION_TOKEN) and agent_do. Holds no key it is not given.
    Mcp {
        /// The host's base URL.
        #[arg(long, env = "RELAY_URL", default_value = "http://127.0.0.1:8787")]
        url: String,
        /// An oblivious relay (`relay up` prints one): the private-lane
        /// tools go through it to the host's gateway (spec §4.11).
        #[arg(long, env = "RELAY_OHTTP_RELAY")]
        ohttp_relay: Option<String>,
    },
    /// Sealed messaging v2 from the command line, against the host at
    /// `--url`: keys stay in `--keys` (mode 0600) and the wallet key in
    /// `RELAY_MSG_WALLET_KEY`; the host sees only sealed rows. Needs no
    /// host configuration.
    Msg {
        /// The host's base URL.
        #[arg(long, env = "RELAY_URL", default_value = "http://127.0.0.1:8787")]
        url: String,
        /// The mailbox's key file (its reader state sits beside it, `.inbox.json`).
        #[arg(long, env = "RELAY_MSG_KEYS", default_value = ".relay/msg-keys.json")]
        keys: PathBuf,
        /// What to do.
        #[command(subcommand)]
        command: MsgCommand,
    },
    /// The privacy pool (spec §4.11) — BETA AND UNAUDITED: make a note,
    /// deposit it, and withdraw it to an address that holds no ETH with a
    /// proof made here (the relayer sends it). Prints JSON. Needs no host
    /// configuration.
    Pool {
        /// The host's base URL.
        #[arg(long, env = "RELAY_URL", default_value = "http://127.0.0.1:8787")]
        url: String,
        /// What to do.
        #[command(subcommand)]
        command: PoolCommand,
    },
    /// Send one request through the privacy lane (spec §4.11): encapsulated
    /// for the host's oblivious gateway (RFC 9458, padded to the fixed
    /// sizes) and posted to the oblivious relay at `--relay`, so the host
    /// never sees this machine's address and the relay never sees the
    /// request. Prints the answer's body; its status goes to stderr (exit
    /// 1 on a 4xx or 5xx). Needs no host configuration.
    Ohttp {
        /// The oblivious relay's base URL (`relay up` prints it).
        #[arg(
            long,
            env = "RELAY_OHTTP_RELAY",
            default_value = "http://127.0.0.1:8788"
        )]
        relay: String,
        /// The method: GET or POST.
        method: String,
        /// The path and query, e.g. `/api/route/status?id=rt_…`.
        path: String,
        /// A JSON body (POST).
        #[arg(long)]
        json: Option<String>,
        /// More headers, `name: value` (repeat).
        #[arg(long = "header", short = 'H')]
        headers: Vec<String>,
    },
    /// Inspect and switch installed rails.
    Rails {
        /// What to do with them.
        #[command(subcommand)]
        command: RailsCommand,
    },
}

/// `relay pool` commands. A note is read from `--note` or
/// `RELAY_POOL_NOTE` (prefer the variable: a command line is visible to
/// other users of the machine).
#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    /// A fresh note of the host's pool: `{note, commitment}`. Whoever
    /// holds the note can withdraw it; keep it like a private key.
    Note,
    /// Deposit a note (0.00002 ETH) from the wallet whose private key is in
    /// `RELAY_POOL_WALLET_KEY`, over the pool chain's RPC.
    Deposit {
        /// The note.
        #[arg(long, env = "RELAY_POOL_NOTE", hide_env_values = true)]
        note: String,
        /// The pool chain's JSON-RPC URL.
        #[arg(long)]
        rpc: String,
    },
    /// Prove a note's withdrawal to `--to`: prints the body of POST
    /// /api/pool/withdraw (send it with any client).
    Prove {
        /// The note.
        #[arg(long, env = "RELAY_POOL_NOTE", hide_env_values = true)]
        note: String,
        /// The recipient.
        #[arg(long)]
        to: alloy::primitives::Address,
    },
    /// Prove and withdraw a note to `--to`; the relayer sends it and pays
    /// its gas.
    Withdraw {
        /// The note.
        #[arg(long, env = "RELAY_POOL_NOTE", hide_env_values = true)]
        note: String,
        /// The recipient.
        #[arg(long)]
        to: alloy::primitives::Address,
        /// Hold it: the host sends it at a time drawn in its window.
        #[arg(long)]
        hold: bool,
        /// Hold it at most this long, ms (implies --hold).
        #[arg(long)]
        max_delay_ms: Option<u64>,
    },
    /// A withdrawal's state by its ticket.
    Hold {
        /// The ticket (`pt_…`).
        ticket: String,
    },
    /// The circuit's verifying key (snarkjs' JSON).
    Vk,
}

/// The chains `relay up` runs: ids of the gasless set, or `all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainList(pub Vec<u64>);

impl std::str::FromStr for ChainList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        use relay_types::chains::GASLESS_CHAINS;
        if s.trim().eq_ignore_ascii_case("all") {
            return Ok(ChainList(GASLESS_CHAINS.to_vec()));
        }
        let ids = s
            .split(',')
            .map(|id| {
                let id: u64 = id
                    .trim()
                    .parse()
                    .map_err(|_| format!("{id:?} is not a chain id"))?;
                match GASLESS_CHAINS.contains(&id) {
                    true => Ok(id),
                    false => Err(format!("{id} is not in the gasless set (or pass `all`)")),
                }
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(ChainList(ids))
    }
}

/// `relay keystore …`.
#[derive(Debug, Subcommand)]
pub enum KeystoreCommand {
    /// Encrypt the key in `RELAY_RELAYER_KEY` (or one hex line on stdin)
    /// with the passphrase in `RELAY_KEYSTORE_PASSPHRASE` into `--out`
    /// (mode 0600); prints only the address.
    Import {
        /// The keystore file to write.
        #[arg(long)]
        out: PathBuf,
    },
}

/// `relay msg …`.
#[derive(Debug, Subcommand)]
pub enum MsgCommand {
    /// New mailbox keys (stealth spend/view, X-Wing; ML-DSA-65 with
    /// `--dsa`) into `--keys`; prints the meta-address.
    Keygen {
        /// Also an ML-DSA-65 key, to sign messages post-quantum (`sig2`).
        #[arg(long)]
        dsa: bool,
        /// Replace an existing key file.
        #[arg(long)]
        force: bool,
    },
    /// Publish the mailbox, signed by the wallet in `RELAY_MSG_WALLET_KEY`.
    Publish,
    /// Seal a note to a mailbox from the directory and send it (frames
    /// when long); prints its delivery state.
    Send {
        /// The recipient's address.
        #[arg(long)]
        to: String,
        /// The text.
        #[arg(long, conflicts_with = "file")]
        text: Option<String>,
        /// A file whose contents are the text.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Sign it: `sig` with the wallet (`RELAY_MSG_WALLET_KEY`), `sig2`
        /// with the key file's ML-DSA key when it has one.
        #[arg(long)]
        sign: bool,
    },
    /// Check the witness head, then read the feed from where the last scan
    /// stopped; prints the messages that arrived.
    Scan {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Claim Plus passes (anonymous tokens, blind-signed by the host's
    /// issuer) into `<keys>.passes.json`; `send` spends one for each row
    /// the free send ceiling refuses.
    Claim {
        /// How many (the host gives 20 a day per IP, in at most 5 claims).
        #[arg(long, default_value_t = 5)]
        count: usize,
    },
    /// Every message sent, with its delivery state (JSON lines): `pending`
    /// until a scan sees all its rows in the feed, then `sent`; `failed`
    /// (with `retryable`) when the host did not store it.
    Outbox,
    /// Print every message received.
    Read {
        /// Print JSON.
        #[arg(long)]
        json: bool,
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

#[cfg(test)]
mod tests {
    use super::ChainList;

    #[test]
    fn chains_are_ids_of_the_gasless_set_or_all() {
        assert_eq!("all".parse::<ChainList>().unwrap().0.len(), 22);
        assert_eq!("1, 8453".parse::<ChainList>().unwrap().0, vec![1, 8453]);
        assert!("1,5"
            .parse::<ChainList>()
            .unwrap_err()
            .contains("5 is not in the gasless set"));
        assert!("base"
            .parse::<ChainList>()
            .unwrap_err()
            .contains("not a chain id"));
    }
}
