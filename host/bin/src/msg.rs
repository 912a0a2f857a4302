//! `relay msg`: sealed messaging v2 from the command line (spec §4.10). A
//! thin client over `relay-sealed` (sealing, scanning, the reader's state)
//! and the host's `/api/messages/v2` endpoints: the keys stay in the key
//! file (mode 0600), the wallet key in `RELAY_MSG_WALLET_KEY`, and the host
//! sees only publications and sealed rows.
//!
//! - `keygen`: new keys; `publish`: the wallet-signed mailbox;
//! - `send`: the recipient's mailbox from the directory (the same bytes
//!   for everyone: the lookup reveals nothing), sealed and sent row by
//!   row; prints the delivery state — `pending` (with `releaseAt`) once
//!   every row is stored, `failed` (with whether a retry can help)
//!   otherwise; there is no delivered or read state;
//! - `outbox`: each sent message's state (`sent` once a scan saw all its
//!   rows in the feed);
//! - `scan`: the witness head is checked against the one held (pinned on
//!   first use, then only a consistency-proven extension by the same key
//!   replaces it), then the feed is read from the cursor; `read` prints
//!   what arrived;
//! - `claim`: Plus passes, kept beside the key file; `send` spends one for
//!   each row the free ceiling refuses ([`passes`]).

use std::path::{Path, PathBuf};

use alloy::signers::local::PrivateKeySigner;
use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use relay_messaging::mailbox::Publication;
use relay_sealed::{
    inbox::{Delivered, DeliveryState, Inbox, Outgoing},
    inner::{new_client_id, Inner},
    keyring::Keyring,
    message::{seal, Mailbox, Row},
    signature,
    witness::VerifyingKey,
};
use serde_json::{json, Value};

use crate::{
    cli::MsgCommand,
    hostapi::{CallError, HostApi},
};

mod passes;

/// The environment variable holding the wallet's private key (hex).
pub const WALLET_KEY_ENV: &str = "RELAY_MSG_WALLET_KEY";

/// What went wrong (never with key material).
#[derive(Debug, thiserror::Error)]
pub enum MsgError {
    /// The key or state file.
    #[error("{path}: {why}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The wallet key is missing or malformed.
    #[error("set {WALLET_KEY_ENV} to the wallet's private key (hex)")]
    Wallet,
    /// The host could not be reached or answered nonsense.
    #[error("{0}")]
    Http(String),
    /// The host refused (its typed error).
    #[error("{status} {code}: {message}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// `errorCode`.
        code: String,
        /// `error`.
        message: String,
    },
    /// Sealing or checking failed.
    #[error(transparent)]
    Seal(#[from] relay_sealed::SealError),
    /// The witness head does not extend the one held.
    #[error("the host's witness head does not extend the one you hold ({0}): it is showing you a forked or forged log; nothing was read")]
    Forked(relay_sealed::SealError),
    /// Bad arguments.
    #[error("{0}")]
    Usage(String),
}

fn file_error(path: &Path, why: impl ToString) -> MsgError {
    MsgError::File {
        path: path.display().to_string(),
        why: why.to_string(),
    }
}

/// Runs one `relay msg` command against `url` with the key file `keys`.
pub async fn run(url: &str, keys: &Path, command: &MsgCommand) -> Result<(), MsgError> {
    let host = Host::new(url);
    match command {
        MsgCommand::Keygen { dsa, force } => keygen(keys, *dsa, *force),
        MsgCommand::Publish => publish(&host, keys).await,
        MsgCommand::Send {
            to,
            text,
            file,
            sign,
        } => {
            let text = match (text, file) {
                (Some(t), None) => t.clone(),
                (None, Some(f)) => std::fs::read_to_string(f).map_err(|e| file_error(f, e))?,
                _ => return Err(MsgError::Usage("give --text or --file".into())),
            };
            send(&host, keys, to, &text, *sign).await
        }
        MsgCommand::Scan { json } => scan(&host, keys, *json).await,
        MsgCommand::Claim { count } => passes::claim(&host, keys, *count).await,
        MsgCommand::Outbox => {
            for o in &load_inbox(&inbox_path(keys))?.outbox {
                println!("{}", outgoing_json(o));
            }
            Ok(())
        }
        MsgCommand::Read { json } => {
            let inbox = load_inbox(&inbox_path(keys))?;
            print_messages(&host, &inbox.messages, *json).await
        }
    }
}

/// The reader's state beside the key file.
fn inbox_path(keys: &Path) -> PathBuf {
    keys.with_extension("inbox.json")
}

fn write_private(path: &Path, text: &str) -> Result<(), MsgError> {
    use std::io::Write as _;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt as _;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    }
    let tmp = path.with_extension("tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts.open(&tmp).map_err(|e| file_error(&tmp, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| file_error(&tmp, e))?;
    f.sync_all().map_err(|e| file_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| file_error(path, e))
}

fn keygen(keys: &Path, dsa: bool, force: bool) -> Result<(), MsgError> {
    if keys.exists() && !force {
        return Err(file_error(keys, "exists (pass --force to replace it)"));
    }
    let ring = Keyring::generate(dsa);
    let text = serde_json::to_string_pretty(&ring).expect("a keyring serializes");
    write_private(keys, &text)?;
    println!("{}", ring.mailbox()?.meta);
    Ok(())
}

fn load_keys(keys: &Path) -> Result<Keyring, MsgError> {
    let text = std::fs::read_to_string(keys).map_err(|e| file_error(keys, e))?;
    serde_json::from_str(&text).map_err(|e| file_error(keys, format!("not a key file: {e}")))
}

fn load_inbox(path: &Path) -> Result<Inbox, MsgError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| file_error(path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Inbox::default()),
        Err(e) => Err(file_error(path, e)),
    }
}

fn wallet() -> Result<PrivateKeySigner, MsgError> {
    std::env::var(WALLET_KEY_ENV)
        .ok()
        .and_then(|k| k.trim().parse().ok())
        .ok_or(MsgError::Wallet)
}

fn now_ms() -> u64 {
    relay_types::Clock::now_ms(&relay_types::SystemClock)
}

fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

async fn publish(host: &Host, keys: &Path) -> Result<(), MsgError> {
    let ring = load_keys(keys)?;
    let wallet = wallet()?;
    let mailbox = ring.mailbox()?;
    let mut p = Publication {
        address: format!("{:#x}", wallet.address()),
        meta_address: mailbox.meta.to_string(),
        kem_pub: hex0x(&mailbox.kem.to_bytes()),
        dsa_pub: ring.dsa()?.map(|k| hex0x(&k.public_key())),
        ts: now_ms(),
        sig: String::new(),
    };
    let sig = alloy::signers::SignerSync::sign_message_sync(&wallet, p.text().as_bytes())
        .map_err(|e| MsgError::Usage(e.to_string()))?;
    p.sig = hex0x(&sig.as_bytes());
    let listed = host
        .post(
            "/api/messages/v2/mailbox",
            &serde_json::to_value(&p).expect("serializes"),
        )
        .await?;
    println!(
        "{}",
        json!({"published": p.address, "witnessEntry": listed["s"]})
    );
    Ok(())
}

/// The recipient's mailbox, from the directory.
async fn lookup(host: &Host, to: &str) -> Result<(Mailbox, Value), MsgError> {
    let address: alloy::primitives::Address = to
        .parse()
        .map_err(|_| MsgError::Usage(format!("--to {to}: not a 0x address")))?;
    let address = format!("{address:#x}");
    let dir = host.get("/api/messages/v2/directory").await?;
    let entry = dir["mailboxes"]
        .as_array()
        .and_then(|all| all.iter().find(|m| m["address"] == address.as_str()))
        .cloned()
        .ok_or_else(|| {
            MsgError::Usage(format!("{address} has published no mailbox on this host"))
        })?;
    let bad = |what| MsgError::Http(format!("the directory's {what} for {address} is malformed"));
    let meta = entry["metaAddress"]
        .as_str()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| bad("metaAddress"))?;
    let kem = entry["kemPub"]
        .as_str()
        .and_then(|k| hex::decode(k.trim_start_matches("0x")).ok())
        .and_then(|k| relay_sealed::envelope::PublicKey::from_bytes(&k).ok())
        .ok_or_else(|| bad("kemPub"))?;
    Ok((Mailbox { meta, kem }, entry))
}

async fn send(host: &Host, keys: &Path, to: &str, text: &str, sign: bool) -> Result<(), MsgError> {
    let (mailbox, _) = lookup(host, to).await?;
    let mut inner = Inner::text(text);
    inner.meta.c = Some(new_client_id());
    let wire = match sign {
        false => inner.encode(),
        true => {
            let wallet = wallet()?;
            inner.meta.f = Some(format!("{:#x}", wallet.address()));
            let dsa = match keys.exists() {
                true => load_keys(keys)?.dsa()?,
                false => None,
            };
            signature::sign(&inner, Some(wallet.credential()), dsa.as_ref())?
        }
    };
    let rows = seal(&mailbox, &wire, now_ms())?;
    let mut out = Outgoing {
        c: inner.meta.c.clone(),
        to: to.to_string(),
        waiting: rows.iter().map(|r| r.ephemeral_pub_key.clone()).collect(),
        release_at: 0,
        state: DeliveryState::Pending,
        retryable: false,
    };
    let mut failure = None;
    for row in &rows {
        match send_row(host, keys, row).await {
            Ok(at) => out.release_at = out.release_at.max(at),
            Err(e) => {
                out.retryable = matches!(&e, MsgError::Http(_))
                    || matches!(&e, MsgError::Refused { status, .. } if *status == 429 || *status >= 500);
                (out.state, out.release_at) = (DeliveryState::Failed, 0);
                failure = Some(e);
                break;
            }
        }
    }
    let path = inbox_path(keys);
    let mut inbox = load_inbox(&path)?;
    println!("{}", outgoing_json(&out));
    inbox.outbox.push(out);
    write_private(
        &path,
        &serde_json::to_string(&inbox).expect("an inbox serializes"),
    )?;
    failure.map_or(Ok(()), Err)
}

fn outgoing_json(o: &Outgoing) -> Value {
    json!({"c": o.c, "to": o.to, "state": o.state, "releaseAt": o.release_at, "rowsWaiting": o.waiting.len(), "retryable": o.retryable})
}

/// Sends one row, retrying what time can clear (a busy host) a few
/// times; a row over the free ceiling spends a held Plus pass when there
/// is one, else waits like the rest.
async fn send_row(host: &Host, keys: &Path, row: &Row) -> Result<u64, MsgError> {
    let body = serde_json::to_value(row).expect("a row serializes");
    let mut tries = 0;
    loop {
        let limited =
            |s: &Result<Value, MsgError>| matches!(s, Err(MsgError::Refused { status: 429, .. }));
        let mut sent = host.post("/api/messages/v2/send", &body).await;
        while limited(&sent) || sent.as_ref().is_err_and(passes::refused_pass) {
            let Some(pass) = passes::take(keys)? else {
                break;
            };
            sent = host
                .post("/api/messages/v2/send", &passes::with_pass(&body, &pass))
                .await;
            if !passes::used_up(&sent) {
                // neither spent nor refused (the door's limit, a replayed
                // row, a failure: the host's spend rolled back with its row)
                passes::put_back(keys, pass)?;
                break;
            }
        }
        match sent {
            Ok(sent) => {
                return sent["releaseAt"]
                    .as_u64()
                    .ok_or_else(|| MsgError::Http("send answered no releaseAt".into()))
            }
            Err(MsgError::Refused { status, .. })
                if (status == 429 || status >= 500) && tries < 4 =>
            {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(500 << tries)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Checks the witness head against the one held.
async fn check_witness(host: &Host, inbox: &mut Inbox) -> Result<(), MsgError> {
    let head = host.get("/api/messages/v2/witness/head").await?;
    let key: [u8; 32] = head["key"]
        .as_str()
        .and_then(|k| B64.decode(k).ok())
        .and_then(|k| k.try_into().ok())
        .ok_or_else(|| MsgError::Http("the head carries no Ed25519 key".into()))?;
    let key = VerifyingKey::from_bytes(&key)
        .map_err(|_| MsgError::Http("the head's key is invalid".into()))?;
    let note = head["checkpoint"].as_str().unwrap_or_default();
    let size = head["seq"].as_u64().unwrap_or(0);
    let proof = match &inbox.head {
        Some(held) if held.size > 0 && held.size < size => {
            let p = host
                .get(&format!(
                    "/api/messages/v2/witness/consistency?from={}",
                    held.size
                ))
                .await?;
            p["proof"]
                .as_array()
                .map(|hs| {
                    hs.iter()
                        .filter_map(|h| hex::decode(h.as_str()?).ok())
                        .flatten()
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => Vec::new(),
    };
    inbox
        .check_head(note, &key, &proof)
        .map_err(MsgError::Forked)?;
    Ok(())
}

async fn scan(host: &Host, keys: &Path, json: bool) -> Result<(), MsgError> {
    let recipient = load_keys(keys)?.recipient()?;
    let path = inbox_path(keys);
    let mut inbox = load_inbox(&path)?;
    check_witness(host, &mut inbox).await?;
    let mut arrived: Vec<Delivered> = Vec::new();
    loop {
        let page = host
            .get(&format!(
                "/api/messages/v2/feed?since={}&limit=500",
                inbox.cursor
            ))
            .await?;
        let rows: Vec<(u64, Row)> = page["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| {
                        Some((r["seq"].as_u64()?, serde_json::from_value(r.clone()).ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        arrived.extend(inbox.take(&recipient, &rows, now_ms()));
        let text = serde_json::to_string(&inbox).expect("an inbox serializes");
        write_private(&path, &text)?;
        if !page["more"].as_bool().unwrap_or(false) || rows.is_empty() {
            break;
        }
    }
    print_messages(host, &arrived, json).await
}

/// Prints messages with who provably wrote them: `sig` recovers the
/// wallet; `sig2` is checked under the ML-DSA key the claimed sender
/// published (from the directory).
async fn print_messages(host: &Host, messages: &[Delivered], json: bool) -> Result<(), MsgError> {
    let needs_directory = messages.iter().any(|m| m.text.contains("\"sig2\""));
    let directory = match needs_directory {
        true => host.get("/api/messages/v2/directory").await.ok(),
        false => None,
    };
    let shown: Vec<Value> = messages
        .iter()
        .map(|m| describe(m, directory.as_ref()))
        .collect();
    for m in &shown {
        match json {
            true => println!("{m}"),
            false => println!(
                "#{} from {} ({}): {}",
                m["seq"],
                m["from"].as_str().unwrap_or("unknown"),
                m["authorship"].as_str().unwrap_or(""),
                m["text"].as_str().unwrap_or("")
            ),
        }
    }
    Ok(())
}

fn describe(m: &Delivered, directory: Option<&Value>) -> Value {
    let Ok(inner) = Inner::decode(&m.text) else {
        return json!({"seq": m.seq, "text": m.text, "authorship": "not an nf2 inner"});
    };
    let claimed = inner.meta.f.clone();
    let dsa = claimed.as_deref().and_then(|f| {
        let entry = directory?["mailboxes"]
            .as_array()?
            .iter()
            .find(|e| e["address"].as_str() == Some(&f.to_lowercase()))?;
        hex::decode(entry["dsaPub"].as_str()?.trim_start_matches("0x")).ok()
    });
    let who = signature::verify(&m.text, dsa.as_deref()).unwrap_or_default();
    let signer = who.wallet.map(|a| format!("{a:#x}"));
    let authorship = match (&signer, &claimed) {
        (Some(s), Some(c)) if s.eq_ignore_ascii_case(c) => "signed by the sender's wallet",
        (Some(_), _) => "signed by another wallet than it claims",
        (None, Some(_)) => "unsigned: the sender is only claimed",
        (None, None) => "anonymous",
    };
    json!({
        "seq": m.seq,
        "from": signer.or(claimed),
        "authorship": authorship,
        "postQuantum": who.pq,
        "c": inner.meta.c,
        "text": inner.text,
        "receivedMs": m.received_ms,
    })
}

/// The host's API, its refusals as [`MsgError`]s.
struct Host(HostApi);

impl Host {
    fn new(url: &str) -> Self {
        Host(HostApi::new(url))
    }

    async fn get(&self, path: &str) -> Result<Value, MsgError> {
        Ok(self.0.get(path).await?)
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, MsgError> {
        Ok(self.0.post(path, body).await?)
    }
}

impl From<CallError> for MsgError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Unreachable(m) => {
                MsgError::Http(format!("the host could not be reached: {m}"))
            }
            CallError::Refused {
                status,
                code,
                message,
            } => MsgError::Refused {
                status,
                code,
                message,
            },
        }
    }
}
