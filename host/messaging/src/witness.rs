//! The witness log as the host keeps it (spec §4.10 `witness/head`,
//! `witness/range`): every mailbox publication in order, stored
//! ([`crate::store`]) and mirrored in memory as a
//! [`relay_sealed::witness::Log`] — the spec's chained roots and an RFC
//! 6962 tree — with the directory it implies (the latest publication per
//! address).
//!
//! The head is a C2SP checkpoint signed with the host's Ed25519 witness
//! key; beyond origin, size and Merkle root it signs two extension lines,
//! `chain <r>` (the spec's root) and `directory <sha256>` (the hash of the
//! exact directory bytes at that size), so two readers holding heads of
//! one size can compare directories, and a reader holding an old head
//! checks the new one extends it with a consistency proof.
//!
//! Replicas share the log through the store: every read first catches up
//! with entries another replica appended, and an append that loses the
//! race for its number reads again and retries.

use std::{collections::BTreeMap, sync::Arc};

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use relay_sealed::witness::{binding_hash, Checkpoint, Log, SigningKey};
use relay_store::StoreError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;
use utoipa::ToSchema;

use crate::{
    mailbox::{Publication, PublishError},
    names::{self, Moved, NameRecord, NameRefusal, NameState, Registration},
    passes::IssuerKey,
    relays::{Announcement, RelayListed},
    store::{Messages, WitnessRow},
};

/// The kind of a mailbox publication's entry.
pub const MAILBOX: &str = "mailbox";
/// The kind of a relay announcement's entry.
pub const RELAY: &str = "relay";
/// The kind of a name registration's entry.
pub const NAME: &str = "name";
/// The kind of a name transfer's entry.
pub const TRANSFER: &str = "transfer";
/// The kind of a Plus pass issuer key's entry.
pub const ISSUER: &str = "issuer";
/// The kind of a key or commitment another feature publishes through the
/// log (the privacy lane's OHTTP key configurations): its id names it,
/// its body is the feature's, and the first entry for an id stands.
pub const KEY: &str = "key";

/// What the log reads of a `key` entry's body: its id (the rest is the
/// publishing feature's).
#[derive(Deserialize)]
struct KeyBody {
    id: String,
}

/// How many times an append retries after losing its number to another
/// replica.
const APPEND_TRIES: usize = 8;

/// A directory entry: the publication in effect (canonical form) and its
/// witness entry's number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The wallet, lowercase.
    pub address: String,
    /// `st:eth:0x<spendPub><viewPub>`.
    pub meta_address: String,
    /// The X-Wing public key, `0x` and 1216 bytes.
    pub kem_pub: String,
    /// The ML-DSA-65 key, when published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsa_pub: Option<String>,
    /// When it was signed, ms.
    pub ts: u64,
    /// The wallet's signature of the publication text.
    pub sig: String,
    /// Its witness entry.
    pub s: u64,
}

impl Listed {
    fn of(p: Publication, s: u64) -> Self {
        Listed {
            address: p.address,
            meta_address: p.meta_address,
            kem_pub: p.kem_pub,
            dsa_pub: p.dsa_pub,
            ts: p.ts,
            sig: p.sig,
            s,
        }
    }
}

/// The directory at one size of the log.
#[derive(Debug, Serialize, ToSchema)]
pub struct Directory {
    /// The log size it reflects.
    pub size: u64,
    /// Every mailbox, by address.
    pub mailboxes: Vec<Listed>,
}

/// The signed head.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Head {
    /// Entries in the log.
    pub seq: u64,
    /// The chained root after the last entry, hex (64 zeros when empty).
    pub root: String,
    /// The Ed25519 signature of the checkpoint's body, base64.
    pub sig: String,
    /// The RFC 6962 root, hex.
    pub merkle_root: String,
    /// SHA-256 of the directory's bytes at this size, hex.
    pub directory: String,
    /// The signed note (C2SP `tlog-checkpoint`) these fields are read from.
    pub checkpoint: String,
    /// The log's origin line.
    pub origin: String,
    /// The witness key (Ed25519), base64.
    pub key: String,
}

/// What the log implies, in memory.
#[derive(Default)]
struct Book {
    log: Log,
    directory: BTreeMap<String, Listed>,
    /// Each directory entry's JSON, kept from when it was applied: a
    /// rendering joins them instead of serialising every entry again.
    entry_json: BTreeMap<String, String>,
    /// The latest announcement of each announcer key.
    relays: BTreeMap<String, RelayListed>,
    /// Every name ever registered, as its latest entry left it.
    names: BTreeMap<String, NameRecord>,
    /// The Plus pass issuer key of each epoch, as first logged.
    issuers: BTreeMap<u64, IssuerKey>,
    /// Every `key` entry's number and body by id, as first logged.
    keys: BTreeMap<String, (u64, String)>,
    /// The directory's bytes at the log's size, and their hash.
    bytes: Arc<str>,
    hash: [u8; 32],
    /// The size `bytes` was rendered at (rendered again, lazily, when a
    /// reader asks after the log grew: an append costs no re-rendering).
    rendered: Option<u64>,
}

impl Book {
    fn apply(&mut self, e: &WitnessRow) -> Result<(), StoreError> {
        let corrupt = |why: &str| StoreError::Corrupt(format!("witness entry {}: {why}", e.s));
        if e.s != self.log.len() + 1 {
            return Err(corrupt("out of order"));
        }
        let b = binding_hash(&e.body);
        if hex::encode(b) != e.b {
            return Err(corrupt("b is not the body's hash"));
        }
        if self.log.append(b, e.t).r != e.r {
            return Err(corrupt("r does not chain"));
        }
        match e.kind.as_str() {
            MAILBOX => {
                let publication: Publication =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not a publication"))?;
                let address = publication.address.clone();
                let listed = Listed::of(publication, e.s);
                let json = serde_json::to_string(&listed).expect("an entry serializes");
                self.entry_json.insert(address.clone(), json);
                self.directory.insert(address, listed);
            }
            RELAY => {
                let a: Announcement =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not an announcement"))?;
                self.relays
                    .insert(a.announcer.clone(), RelayListed::of(a, e.s));
            }
            NAME => {
                let r: Registration =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not a registration"))?;
                let record = NameRecord {
                    name: r.name.clone(),
                    owner: r.owner,
                    expires: r.expires,
                    s: e.s,
                    ts: r.ts,
                };
                self.names.insert(r.name, record);
            }
            TRANSFER => {
                let m: Moved =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not a transfer"))?;
                let record = self
                    .names
                    .get_mut(&m.name)
                    .ok_or_else(|| corrupt("a transfer of an unregistered name"))?;
                (record.owner, record.s, record.ts) = (m.to, e.s, m.accept.0);
            }
            ISSUER => {
                let k: IssuerKey =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not an issuer key"))?;
                self.issuers.entry(k.epoch).or_insert(k);
            }
            KEY => {
                let k: KeyBody =
                    serde_json::from_str(&e.body).map_err(|_| corrupt("not a key entry"))?;
                self.keys.entry(k.id).or_insert((e.s, e.body.clone()));
            }
            // a kind a later version appends: in the tree, not in a view
            _ => {}
        }
        Ok(())
    }

    /// `name`'s record while it is registered at `now_ms`.
    fn live(&self, name: &str, now_ms: u64) -> Option<&NameRecord> {
        self.names
            .get(name)
            .filter(|r| names::state(Some(r), now_ms) == NameState::Registered)
    }

    /// Whether the registry admits `r` at `now_ms` ([`Witness::register`]).
    fn admits(&self, r: &Registration, now_ms: u64) -> Result<(), NameRefusal> {
        let held = self.names.get(&r.name);
        let state = names::state(held, now_ms);
        let renewal = held.is_some_and(|h| h.owner == r.owner)
            && matches!(state, NameState::Registered | NameState::Grace);
        if !renewal && matches!(state, NameState::Registered | NameState::Grace) {
            let h = held.expect("a held name has a record");
            return Err(NameRefusal::Taken {
                name: r.name.clone(),
                state,
                owner: h.owner.clone(),
            });
        }
        let price = names::price_cents(&r.name, held, r.years, now_ms);
        if price > r.paid.as_ref().map_or(0, |p| p.cents) {
            return Err(NameRefusal::Unpaid {
                name: r.name.clone(),
                usd: names::usd(price),
            });
        }
        let skeleton = names::skeleton(&r.name);
        if let Some(like) = self.names.values().find(|n| {
            n.name != r.name
                && names::state(Some(n), now_ms) != NameState::Available
                && names::skeleton(&n.name) == skeleton
        }) {
            return Err(NameRefusal::Confusable {
                name: r.name.clone(),
                like: like.name.clone(),
            });
        }
        let held_by_owner = self
            .names
            .values()
            .filter(|n| n.owner == r.owner && n.name != r.name)
            .filter(|n| names::state(Some(n), now_ms) == NameState::Registered)
            .count();
        match held_by_owner >= names::MAX_PER_OWNER {
            true => Err(NameRefusal::Cap),
            false => Ok(()),
        }
    }

    /// Whether `m.name` is live and owned by `m.from` at `now_ms`.
    fn admits_move(&self, m: &Moved, now_ms: u64) -> Result<(), NameRefusal> {
        match self.live(&m.name, now_ms) {
            None => Err(NameRefusal::Unknown(m.name.clone())),
            Some(r) if r.owner != m.from => Err(NameRefusal::NotOwner {
                name: m.name.clone(),
                owner: r.owner.clone(),
            }),
            Some(_) => Ok(()),
        }
    }

    /// The `ts` in effect for `id` of `kind`.
    fn current_ts(&self, kind: &str, id: &str) -> Option<u64> {
        match kind {
            MAILBOX => self.directory.get(id).map(|l| l.ts),
            RELAY => self.relays.get(id).map(|l| l.announcement.ts),
            NAME | TRANSFER => self.names.get(id).map(|n| n.ts),
            ISSUER => id
                .parse()
                .ok()
                .and_then(|e| self.issuers.get(&e))
                .map(|k| k.epoch),
            KEY => self.keys.get(id).map(|_| 1),
            _ => None,
        }
    }

    /// The directory's bytes and hash at the current size.
    fn rendered(&mut self) -> (Arc<str>, [u8; 32]) {
        if self.rendered != Some(self.log.len()) {
            self.render();
        }
        (self.bytes.clone(), self.hash)
    }

    fn render(&mut self) {
        self.rendered = Some(self.log.len());
        // the bytes `serde_json::to_string(&Directory { size, mailboxes })`
        // would give, from the entries' kept JSON
        let entries = self.entry_json.values();
        let len = entries.clone().map(|e| e.len() + 1).sum::<usize>() + 40;
        let mut bytes = String::with_capacity(len);
        bytes.push_str(&format!("{{\"size\":{},\"mailboxes\":[", self.log.len()));
        for (i, e) in entries.enumerate() {
            if i > 0 {
                bytes.push(',');
            }
            bytes.push_str(e);
        }
        bytes.push_str("]}");
        self.hash = Sha256::digest(bytes.as_bytes()).into();
        self.bytes = bytes.into();
    }
}

/// The witness log.
pub struct Witness {
    store: Messages,
    key: SigningKey,
    origin: String,
    book: Mutex<Book>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl Witness {
    /// The log in `store`, signed by `key` under `origin`.
    pub fn new(store: Messages, key: SigningKey, origin: String) -> Self {
        let book = Book::default();
        Witness {
            store,
            key,
            origin,
            book: Mutex::new(book),
        }
    }

    /// The witness key, base64.
    pub fn key(&self) -> String {
        B64.encode(self.key.verifying_key().as_bytes())
    }

    /// The origin line.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Reads the entries other replicas appended.
    async fn catch_up(&self, book: &mut Book) -> Result<(), StoreError> {
        loop {
            let next = self.store.witness(book.log.len() + 1, 500).await?;
            if next.is_empty() {
                return Ok(());
            }
            for e in &next {
                book.apply(e)?;
            }
        }
    }

    /// Appends the binding `body` of `kind` for `id` with time `ts`,
    /// unless `id` has one with the same or a later `ts` (a replay).
    /// Returns nothing more: the caller reads the view it changed.
    async fn append(
        &self,
        book: &mut Book,
        (kind, id, ts): (&str, &str, u64),
        body: String,
        now_ms: u64,
    ) -> Result<(), PublishOutcome> {
        self.append_if(book, (kind, id, ts), body, now_ms, |_| Ok(()))
            .await
    }

    /// [`Self::append`], when `admit` accepts the state of things the
    /// log implies at the moment of appending.
    async fn append_if(
        &self,
        book: &mut Book,
        (kind, id, ts): (&str, &str, u64),
        body: String,
        now_ms: u64,
        admit: impl Fn(&Book) -> Result<(), NameRefusal>,
    ) -> Result<(), PublishOutcome> {
        for _ in 0..APPEND_TRIES {
            self.catch_up(book).await?;
            if let Some(current) = book.current_ts(kind, id).filter(|c| *c >= ts) {
                return Err(PublishError::Replayed { current }.into());
            }
            admit(book)?;
            let b = binding_hash(&body);
            let row = WitnessRow {
                s: book.log.len() + 1,
                kind: kind.into(),
                b: hex::encode(b),
                r: hex::encode(relay_sealed::witness::chain(&book.log.root(), &b)),
                body: body.clone(),
                t: now_ms,
            };
            if self.store.append_witness(&row).await? {
                book.apply(&row)?;
                return Ok(());
            }
        }
        Err(PublishOutcome::Busy)
    }

    /// Publishes `p` (verified, canonical): appended unless the address
    /// has a publication with the same or a later `ts`. Its entry.
    pub async fn publish(&self, p: &Publication, now_ms: u64) -> Result<Listed, PublishOutcome> {
        let mut book = self.book.lock().await;
        let id = (MAILBOX, p.address.as_str(), p.ts);
        self.append(&mut book, id, p.body(), now_ms).await?;
        Ok(book.directory[&p.address].clone())
    }

    /// Logs the relay announcement `a` (verified): appended unless its
    /// announcer has one with the same or a later `ts`. Its entry.
    pub async fn announce(
        &self,
        a: &Announcement,
        now_ms: u64,
    ) -> Result<RelayListed, PublishOutcome> {
        let mut book = self.book.lock().await;
        let id = (RELAY, a.announcer.as_str(), a.ts);
        self.append(&mut book, id, a.body(), now_ms).await?;
        Ok(book.relays[&a.announcer].clone())
    }

    /// Registers `r` (its listing checked): the name must be available,
    /// in its owner's grace for that owner, or — when free — past its
    /// grace; not a look-alike of another live name; and the owner under
    /// its cap. A renewal by the owner extends the registration.
    pub async fn register(
        &self,
        mut r: Registration,
        now_ms: u64,
    ) -> Result<NameRecord, PublishOutcome> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        let bought = u64::from(r.years) * names::YEAR_MS;
        r.expires = match book.names.get(&r.name) {
            Some(h) if h.owner == r.owner && h.expires > now_ms => h.expires + bought,
            _ => now_ms + bought,
        };
        let id = (NAME, r.name.as_str(), r.ts);
        let admit = |b: &Book| b.admits(&r, now_ms);
        self.append_if(
            &mut book,
            id,
            serde_json::to_string(&r).expect("serializes"),
            now_ms,
            admit,
        )
        .await?;
        Ok(book.names[&r.name].clone())
    }

    /// Whether `r` would be registered now (nothing is appended): what a
    /// paid registration is checked against before its invoice.
    pub async fn admissible(&self, r: &Registration, now_ms: u64) -> Result<(), PublishOutcome> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        if let Some(current) = book.current_ts(NAME, &r.name).filter(|c| *c >= r.ts) {
            return Err(PublishError::Replayed { current }.into());
        }
        Ok(book.admits(r, now_ms)?)
    }

    /// Whether `m` would move now (nothing is appended): what a sale is
    /// checked against before its invoice.
    pub async fn movable(&self, m: &Moved, now_ms: u64) -> Result<(), PublishOutcome> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        if let Some(current) = book
            .current_ts(TRANSFER, &m.name)
            .filter(|c| *c >= m.accept.0)
        {
            return Err(PublishError::Replayed { current }.into());
        }
        Ok(book.admits_move(m, now_ms)?)
    }

    /// Moves `m.name` to `m.to` (both sides' signatures checked): the name
    /// must be registered, and owned by `m.from`.
    pub async fn transfer(&self, m: &Moved, now_ms: u64) -> Result<NameRecord, PublishOutcome> {
        let mut book = self.book.lock().await;
        let id = (TRANSFER, m.name.as_str(), m.accept.0);
        let admit = |b: &Book| b.admits_move(m, now_ms);
        self.append_if(
            &mut book,
            id,
            serde_json::to_string(m).expect("serializes"),
            now_ms,
            admit,
        )
        .await?;
        Ok(book.names[&m.name].clone())
    }

    /// Logs the Plus pass issuer key `k` unless its epoch has one; the
    /// key logged for the epoch (`k`, or the one logged before it).
    pub async fn issuer(&self, k: &IssuerKey, now_ms: u64) -> Result<IssuerKey, PublishOutcome> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        if let Some(logged) = book.issuers.get(&k.epoch) {
            return Ok(logged.clone());
        }
        let epoch = k.epoch.to_string();
        let body = serde_json::to_string(k).expect("serializes");
        match self
            .append(&mut book, (ISSUER, &epoch, k.epoch), body, now_ms)
            .await
        {
            Ok(()) | Err(PublishOutcome::Refused(PublishError::Replayed { .. })) => {}
            Err(e) => return Err(e),
        }
        Ok(book.issuers[&k.epoch].clone())
    }

    /// Logs the key entry `body` (a JSON object whose `id` is `id`) unless
    /// one is logged for `id`; the entry logged for it (number, body).
    pub async fn log_key(
        &self,
        id: &str,
        body: String,
        now_ms: u64,
    ) -> Result<(u64, String), PublishOutcome> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        if let Some(logged) = book.keys.get(id) {
            return Ok(logged.clone());
        }
        match self.append(&mut book, (KEY, id, 1), body, now_ms).await {
            Ok(()) | Err(PublishOutcome::Refused(PublishError::Replayed { .. })) => {}
            Err(e) => return Err(e),
        }
        book.keys.get(id).cloned().ok_or(PublishOutcome::Busy)
    }

    /// The key entry logged for `id` (number, body).
    pub async fn logged_key(&self, id: &str) -> Result<Option<(u64, String)>, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.keys.get(id).cloned())
    }

    /// The issuer key logged for `epoch`.
    pub async fn issuer_of_epoch(&self, epoch: u64) -> Result<Option<IssuerKey>, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.issuers.get(&epoch).cloned())
    }

    /// The logged issuer key whose id is `key_id` (hex).
    pub async fn issuer_of_key(&self, key_id: &str) -> Result<Option<IssuerKey>, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.issuers.values().find(|k| k.key_id == key_id).cloned())
    }

    /// The record of `name`, whatever its state.
    pub async fn name(&self, name: &str) -> Result<Option<NameRecord>, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.names.get(name).cloned())
    }

    /// The relays whose announcements have not expired at `now_ms`, by
    /// URL, and the log size they reflect.
    pub async fn relays(&self, now_ms: u64) -> Result<(Vec<RelayListed>, u64), StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        let mut live: Vec<RelayListed> = book
            .relays
            .values()
            .filter(|r| r.announcement.expires > now_ms)
            .cloned()
            .collect();
        live.sort_by(|a, b| a.announcement.url.cmp(&b.announcement.url));
        Ok((live, book.log.len()))
    }

    /// The directory's bytes and hash, now.
    pub async fn directory(&self) -> Result<(Arc<str>, [u8; 32]), StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.rendered())
    }

    /// One mailbox.
    pub async fn mailbox(&self, address: &str) -> Result<Option<Listed>, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        Ok(book.directory.get(address).cloned())
    }

    /// The signed head, now.
    pub async fn head(&self) -> Result<Head, StoreError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        let (_, directory) = book.rendered();
        let checkpoint = Checkpoint {
            origin: self.origin.clone(),
            size: book.log.len(),
            root: book.log.merkle_root(),
            extensions: vec![
                format!("chain {}", hex::encode(book.log.root())),
                format!("directory {}", hex::encode(directory)),
            ],
        };
        Ok(Head {
            seq: checkpoint.size,
            root: hex::encode(book.log.root()),
            sig: B64.encode(checkpoint.signature(&self.key)),
            merkle_root: hex::encode(checkpoint.root),
            directory: hex::encode(directory),
            checkpoint: checkpoint.sign(&self.key),
            origin: self.origin.clone(),
            key: self.key(),
        })
    }

    /// A consistency proof from size `old` to the current size (the
    /// proof's hashes, and the size it proves to).
    pub async fn consistency(&self, old: u64) -> Result<(Vec<String>, u64), ProofError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        let size = book.log.len();
        if old == 0 || old > size {
            return Err(ProofError::Range { size });
        }
        let proof = book
            .log
            .prove_consistency(old)
            .map_err(|_| ProofError::Range { size })?;
        Ok((hashes(&proof), size))
    }

    /// An inclusion proof of entry `s` in the current tree (its hashes,
    /// and the size it proves in).
    pub async fn inclusion(&self, s: u64) -> Result<(Vec<String>, u64), ProofError> {
        let mut book = self.book.lock().await;
        self.catch_up(&mut book).await?;
        let size = book.log.len();
        let proof = book
            .log
            .prove_inclusion(s)
            .map_err(|_| ProofError::Range { size })?;
        Ok((hashes(&proof), size))
    }
}

/// A proof's hashes, hex, in order.
fn hashes(proof: &[u8]) -> Vec<String> {
    proof.chunks(32).map(hex::encode).collect()
}

/// Why a publication did not land.
#[derive(Debug, thiserror::Error)]
pub enum PublishOutcome {
    /// Refused.
    #[error(transparent)]
    Refused(#[from] PublishError),
    /// Refused by the name registry's state.
    #[error(transparent)]
    Name(#[from] NameRefusal),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Other replicas kept taking the next number.
    #[error("the witness log is busy")]
    Busy,
}

/// Why a proof cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The size or entry is outside the log.
    #[error("outside the log (its size is {size})")]
    Range {
        /// The log's size.
        size: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(book: &Book, i: u64, address: &str) -> WitnessRow {
        let p = Publication {
            address: address.into(),
            meta_address: format!("st:eth:0x{}", "02".repeat(66)),
            kem_pub: format!("0x{i:02x}"),
            dsa_pub: i.is_multiple_of(2).then(|| "0x01".into()),
            ts: i,
            sig: "0x00".into(),
        };
        let body = p.body();
        let b = binding_hash(&body);
        WitnessRow {
            s: book.log.len() + 1,
            kind: MAILBOX.into(),
            r: hex::encode(relay_sealed::witness::chain(&book.log.root(), &b)),
            b: hex::encode(b),
            body,
            t: i,
        }
    }

    #[test]
    fn the_rendered_directory_is_the_bytes_serde_would_write() {
        let mut book = Book::default();
        for (i, a) in [(1, "0xbb"), (2, "0xaa"), (3, "0xbb"), (4, "0xcc")] {
            let e = entry(&book, i, a);
            book.apply(&e).unwrap();
        }
        let (bytes, hash) = book.rendered();
        let want = serde_json::to_string(&Directory {
            size: 4,
            mailboxes: book.directory.values().cloned().collect(),
        })
        .unwrap();
        assert_eq!(&*bytes, want.as_str());
        assert_eq!(hash, <[u8; 32]>::from(Sha256::digest(want.as_bytes())));
        let mut empty = Book::default();
        assert_eq!(&*empty.rendered().0, r#"{"size":0,"mailboxes":[]}"#);
    }
}

#[cfg(test)]
mod replicas {
    use super::*;
    use relay_store::Store;

    fn publication(i: usize, ts: u64) -> Publication {
        Publication {
            address: format!("0x{i:040x}"),
            meta_address: format!("st:eth:0x{}", "02".repeat(66)),
            kem_pub: format!("0x{i:04x}"),
            dsa_pub: None,
            ts,
            sig: "0x00".into(),
        }
    }

    /// Two replicas over one database, publishing at once: every entry is
    /// numbered once, each replica sees the other's, and both sign the
    /// same head; a name raced by two owners on two replicas goes to one.
    #[tokio::test]
    async fn two_replicas_on_postgres_keep_one_log() {
        let url = relay_fixtures::postgres_database();
        let store = Messages::from(Store::connect(&url).await.unwrap());
        store.migrate(crate::store::MIGRATIONS).await.unwrap();
        let key = SigningKey::from_bytes(&[4; 32]);
        let a = Arc::new(Witness::new(store.clone(), key.clone(), "o".into()));
        let b = Arc::new(Witness::new(store, key, "o".into()));
        let mut tasks = Vec::new();
        for i in 0..20 {
            let w = if i % 2 == 0 { a.clone() } else { b.clone() };
            tasks.push(tokio::spawn(async move {
                w.publish(&publication(i, 1), 1).await
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let (ha, hb) = (a.head().await.unwrap(), b.head().await.unwrap());
        assert_eq!(
            (ha.seq, &ha.root, &ha.directory),
            (20, &hb.root, &hb.directory)
        );
        assert_eq!(ha.sig, hb.sig);
        let entries = a.store.witness(1, 100).await.unwrap();
        let numbers: Vec<u64> = entries.iter().map(|e| e.s).collect();
        assert_eq!(numbers, (1..=20).collect::<Vec<_>>());

        let claim = |owner: &str, w: Arc<Witness>| {
            let r = Registration {
                name: "raced-name".into(),
                owner: owner.into(),
                years: 1,
                ts: 5,
                sig: "0x00".into(),
                expires: 0,
                paid: None,
            };
            tokio::spawn(async move { w.register(r, 10).await })
        };
        let (one, two) = (claim("0xa1", a.clone()), claim("0xb2", b.clone()));
        let outcomes = [one.await.unwrap(), two.await.unwrap()];
        assert_eq!(
            outcomes.iter().filter(|o| o.is_ok()).count(),
            1,
            "{outcomes:?}"
        );
        let winner = outcomes
            .iter()
            .find_map(|o| o.as_ref().ok())
            .unwrap()
            .owner
            .clone();
        assert_eq!(b.name("raced-name").await.unwrap().unwrap().owner, winner);
        assert_eq!(a.name("raced-name").await.unwrap().unwrap().owner, winner);
    }
}
