//! `relay pool`: the privacy pool from the command line (spec §4.11) —
//! BETA AND UNAUDITED. The prover runs here, on the client: the note never
//! leaves this machine; the host sees a proof, the recipient and the root.
//!
//! - `note`: a fresh note of the host's pool (keep it like a private key);
//! - `deposit`: pays the pool one note from the wallet in
//!   `RELAY_POOL_WALLET_KEY` (the only step that needs gas);
//! - `prove`: the withdrawal's request body, proven against the host's
//!   tree (its root checked against the leaves first);
//! - `withdraw`: proves and posts it (`--hold`: the host sends it later,
//!   at a time drawn in its window) — the recipient needs no ETH;
//! - `hold`: a withdrawal's state by its ticket;
//! - `vk`: the circuit's verifying key (snarkjs' JSON), for checking a
//!   proof independently.

use alloy::{
    network::EthereumWallet,
    primitives::{Address, U256},
    providers::{Provider, ProviderBuilder},
    signers::local::PrivateKeySigner,
};
use relay_pool::{
    contract::PrivacyPool,
    note::Note,
    zk::{self, Payee},
};
use serde_json::{json, Value};

use crate::{
    cli::PoolCommand,
    hostapi::{CallError, HostApi},
};

/// The environment variable holding the depositing wallet's private key (hex).
pub const WALLET_KEY_ENV: &str = "RELAY_POOL_WALLET_KEY";

/// What went wrong (never with a note or key in it).
#[derive(Debug, thiserror::Error)]
pub enum PoolCliError {
    /// The host refused or could not be reached.
    #[error(transparent)]
    Host(#[from] CallError),
    /// The host's answer is not what the pool's API says.
    #[error("the host's answer is malformed: {0}")]
    Malformed(String),
    /// The host's tree does not hash to the root it serves.
    #[error("the host's tree does not hash to the root it serves: not proving against it")]
    TreeMismatch,
    /// The note is not this host's pool's, or does not read.
    #[error("{0}")]
    Note(String),
    /// The chain refused or could not be reached.
    #[error("the chain: {0}")]
    Chain(String),
    /// Proving failed.
    #[error(transparent)]
    Prove(#[from] zk::ProveError),
}

/// The tree as `GET /api/pool/tree` serves it, the figures parsed.
pub struct Tree {
    /// The pool's chain.
    pub chain_id: u64,
    /// The pool.
    pub pool: Address,
    /// The leaves.
    pub leaves: Vec<U256>,
    /// The relayer.
    pub relayer: Address,
    /// The fee.
    pub fee: U256,
    /// Wei per note.
    pub denomination: U256,
    /// Whether the pool is full.
    pub full: bool,
}

fn parsed<T: std::str::FromStr>(v: &Value, key: &str) -> Result<T, PoolCliError> {
    v[key]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| PoolCliError::Malformed(key.to_string()))
}

/// The host's tree, checked: its leaves hash to the root it serves.
pub async fn tree(api: &HostApi) -> Result<Tree, PoolCliError> {
    let v = api.get("/api/pool/tree").await?;
    let leaves = v["leaves"]
        .as_array()
        .ok_or_else(|| PoolCliError::Malformed("leaves".into()))?
        .iter()
        .map(|l| l.as_str().and_then(|s| s.parse::<U256>().ok()))
        .collect::<Option<Vec<U256>>>()
        .ok_or_else(|| PoolCliError::Malformed("leaves".into()))?;
    let root: U256 = parsed(&v, "root")?;
    if !leaves.is_empty() && zk::tree_of(&leaves).root() != root {
        return Err(PoolCliError::TreeMismatch);
    }
    Ok(Tree {
        chain_id: v["chainId"]
            .as_u64()
            .ok_or_else(|| PoolCliError::Malformed("chainId".into()))?,
        pool: parsed(&v, "pool")?,
        leaves,
        relayer: parsed(&v, "relayer")?,
        fee: parsed(&v, "fee")?,
        denomination: parsed(&v, "denomination")?,
        full: v["full"].as_bool().unwrap_or(false),
    })
}

fn note_of(s: &str, t: &Tree) -> Result<Note, PoolCliError> {
    let note = Note::parse(s).map_err(|e| PoolCliError::Note(e.to_string()))?;
    if note.chain_id != t.chain_id || note.pool != t.pool {
        return Err(PoolCliError::Note(format!(
            "the note is of pool {} on chain {}, the host relays for {} on chain {}",
            note.pool, note.chain_id, t.pool, t.chain_id
        )));
    }
    Ok(note)
}

/// The body of `POST /api/pool/withdraw` for `note` to `recipient`,
/// proven here against the host's tree.
pub async fn prove(api: &HostApi, note: &str, recipient: Address) -> Result<Value, PoolCliError> {
    let t = tree(api).await?;
    let note = note_of(note, &t)?;
    let payee = Payee {
        recipient,
        relayer: t.relayer,
        fee: t.fee,
    };
    let leaves = t.leaves.clone();
    let (proof, public) = tokio::task::spawn_blocking(move || zk::prove(&note, &leaves, payee))
        .await
        .map_err(|e| PoolCliError::Malformed(e.to_string()))??;
    let hex = |v: U256| format!("{v:#066x}");
    Ok(json!({
        "proof": proof.iter().copied().map(hex).collect::<Vec<_>>(),
        "root": hex(public.root),
        "nullifierHash": hex(public.nullifier_hash),
        "recipient": recipient.to_checksum(None),
        "relayer": t.relayer.to_checksum(None),
        "fee": t.fee.to_string(),
        "denomination": t.denomination.to_string(),
    }))
}

/// Deposits `note` from `wallet` over the chain's RPC at `rpc`: the
/// transaction's hash.
pub async fn deposit(
    api: &HostApi,
    note: &str,
    (rpc, wallet): (&str, PrivateKeySigner),
) -> Result<String, PoolCliError> {
    let t = tree(api).await?;
    let note = note_of(note, &t)?;
    if t.full {
        return Err(PoolCliError::Chain(
            "the pool holds its 250 notes: it takes no more".into(),
        ));
    }
    let url = rpc
        .parse()
        .map_err(|_| PoolCliError::Chain(format!("{rpc:?} is not a URL")))?;
    let provider = ProviderBuilder::new()
        .wallet(EthereumWallet::from(wallet))
        .connect_http(url);
    let pool = PrivacyPool::new(t.pool, &provider);
    let chain = |e: &dyn std::fmt::Display| PoolCliError::Chain(e.to_string());
    let got = provider.get_chain_id().await.map_err(|e| chain(&e))?;
    if got != t.chain_id {
        return Err(PoolCliError::Chain(format!(
            "{rpc} is chain {got}, the pool is on {}",
            t.chain_id
        )));
    }
    let call = pool.deposit(note.commitment()).value(t.denomination);
    let pending = call.send().await.map_err(|e| chain(&e))?;
    let receipt = pending.get_receipt().await.map_err(|e| chain(&e))?;
    if !receipt.status() {
        return Err(PoolCliError::Chain("the deposit reverted".into()));
    }
    Ok(format!("{:#x}", receipt.transaction_hash))
}

/// Runs one `relay pool` command against the host at `url`; what it
/// prints.
pub async fn run(url: &str, command: &PoolCommand) -> Result<Value, PoolCliError> {
    let api = HostApi::new(url);
    match command {
        PoolCommand::Note => {
            let t = tree(&api).await?;
            let note = Note::random(t.chain_id, t.pool);
            Ok(
                json!({ "note": note.expose(), "commitment": format!("{:#066x}", note.commitment()) }),
            )
        }
        PoolCommand::Deposit { note, rpc } => {
            let key = std::env::var(WALLET_KEY_ENV).unwrap_or_default();
            let wallet: PrivateKeySigner = key.trim().parse().map_err(|_| {
                PoolCliError::Chain(format!(
                    "set {WALLET_KEY_ENV} to the paying wallet's private key (hex)"
                ))
            })?;
            let tx = deposit(&api, note, (rpc, wallet)).await?;
            Ok(json!({ "txHash": tx }))
        }
        PoolCommand::Prove { note, to } => prove(&api, note, *to).await,
        PoolCommand::Withdraw {
            note,
            to,
            hold,
            max_delay_ms,
        } => {
            let mut body = prove(&api, note, *to).await?;
            if *hold || max_delay_ms.is_some() {
                body["hold"] = match max_delay_ms {
                    Some(ms) => json!({ "maxDelayMs": ms }),
                    None => json!({}),
                };
            }
            Ok(api.post("/api/pool/withdraw", &body).await?)
        }
        PoolCommand::Hold { ticket } => {
            let query = [("ticket", ticket.as_str())];
            Ok(api.get_with("/api/pool/hold", &query).await?)
        }
        PoolCommand::Vk => serde_json::from_str(zk::VERIFYING_KEY)
            .map_err(|e| PoolCliError::Malformed(e.to_string())),
    }
}
