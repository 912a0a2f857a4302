//! The cover proof (`GET /api/stealth/coverproof`, spec §4.11): a Merkle
//! root over the real payouts of the window, the anonymity numbers they
//! give, and the host's signed commitment to both.
//!
//! What it means, and how a user checks it:
//! - each payout is a route that ended `DONE` in the window with a
//!   destination transaction; its leaf is SHA-256 of
//!   `relay-coverproof-v1|<route id>|<destination chain>|<destination tx,
//!   lower case>`, in the order the routes ended; the root is RFC 6962's
//!   (SHA-256, the witness log's tree). A user who knows their route asks
//!   `?route=<id>`, recomputes their leaf and checks the inclusion proof;
//! - `kObserver` is the number of payouts: someone who watches the
//!   relayer's payouts in the window and knows no more cannot tie one to
//!   its source among fewer than these;
//! - `kUsers` is the number of distinct recipients among them: the
//!   anonymity set of "who was paid";
//! - `commitment` is `relay-coverproof-v1|<windowStart>|<windowEnd>|
//!   <size>|<root>|<kUsers>|<kObserver>` and `signature` the policy key's
//!   Ed25519 signature of it (`publicKey`, the one `/api/privacy/policy`
//!   names), so a proof handed out once binds the host.
//!
//! It does not say who sent what (nothing here names a sender), and it
//! counts only this host's payouts: an observer who sees other evidence
//! (amounts, timing) can narrow the sets.

use std::collections::BTreeSet;

use relay_sealed::witness::{Log, SigningKey};
use relay_store::StoreError;
use relay_types::RouteRecord;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::store::Privacy;

/// The scheme's name.
pub const SCHEME: &str = "relay-coverproof-v1";
/// The most payouts one proof covers (the newest beyond it are left to
/// the next window).
pub const MAX_PAYOUTS: u32 = 10_000;

/// A user's inclusion proof.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Inclusion {
    /// The route.
    pub route: String,
    /// Its leaf's index, from 0.
    pub index: u64,
    /// Its leaf, hex.
    pub leaf: String,
    /// The RFC 6962 inclusion proof, hex (the sibling hashes, bottom up).
    pub proof: String,
}

/// The cover proof.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CoverProof {
    /// `relay-coverproof-v1`.
    pub scheme: &'static str,
    /// The window, epoch ms.
    pub window_start: u64,
    /// Its end (now), epoch ms.
    pub window_end: u64,
    /// Payouts in the tree.
    pub size: u64,
    /// The RFC 6962 root, hex (32 zero bytes for an empty window).
    pub root: String,
    /// Distinct recipients among the payouts.
    pub k_users: u64,
    /// Payouts an observer of the relayer saw in the window.
    pub k_observer: u64,
    /// What the signature covers.
    pub commitment: String,
    /// Ed25519 signature of `commitment`, hex.
    pub signature: String,
    /// The policy key, hex.
    pub public_key: String,
    /// How a leaf is made.
    pub leaf: &'static str,
    /// With `?route=`: that route's inclusion proof (none: not in the
    /// window's payouts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inclusion: Option<Inclusion>,
}

/// A payout's leaf.
pub fn leaf(route: &str, chain: &str, tx: &str) -> [u8; 32] {
    Sha256::digest(format!("{SCHEME}|{route}|{chain}|{}", tx.to_ascii_lowercase()).as_bytes())
        .into()
}

/// The proof over the payouts since `now_ms - window_ms`, with `route`'s
/// inclusion when asked.
pub async fn prove(
    store: &Privacy,
    key: &SigningKey,
    (now_ms, window_ms): (u64, u64),
    route: Option<&str>,
) -> Result<CoverProof, StoreError> {
    let start = now_ms.saturating_sub(window_ms);
    let mut log = Log::default();
    let mut ids = Vec::new();
    let mut recipients = BTreeSet::new();
    for (id, body) in store.done_since(start, MAX_PAYOUTS).await? {
        let Ok(r) = serde_json::from_str::<RouteRecord>(&body) else {
            continue;
        };
        let Some(tx) = r.dest_tx.as_deref() else {
            continue;
        };
        log.append(leaf(&id, &r.to_chain.to_string(), tx), now_ms);
        recipients.insert(r.recipient.to_ascii_lowercase());
        ids.push(id);
    }
    let size = log.len();
    let root = hex::encode(log.merkle_root());
    let commitment = format!(
        "{SCHEME}|{start}|{now_ms}|{size}|{root}|{}|{size}",
        recipients.len()
    );
    let signature = ed25519_dalek::Signer::sign(key, commitment.as_bytes());
    let inclusion = route.and_then(|want| {
        let i = ids.iter().position(|id| id == want)?;
        let proof = log.prove_inclusion(i as u64 + 1).ok()?;
        Some(Inclusion {
            route: want.to_string(),
            index: i as u64,
            leaf: log.entries()[i].b.clone(),
            proof: hex::encode(proof),
        })
    });
    Ok(CoverProof {
        scheme: SCHEME,
        window_start: start,
        window_end: now_ms,
        size,
        root,
        k_users: recipients.len() as u64,
        k_observer: size,
        commitment,
        signature: hex::encode(signature.to_bytes()),
        public_key: hex::encode(key.verifying_key().to_bytes()),
        leaf: "sha256(relay-coverproof-v1|<route id>|<destination chain>|<destination tx, lower case>)",
        inclusion,
    })
}
