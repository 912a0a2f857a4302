//! The witness log (spec §4.10 `witness/head`, `witness/range`): the
//! append-only record of every mailbox publication and handle transfer, in
//! order, so the server cannot show one reader a key and another reader a
//! different one without the difference being provable.
//!
//! Two views of one sequence of bindings `b` (each the SHA-256 of a
//! binding's canonical text, [`binding_hash`]):
//!
//! - the spec's hash chain: entry `s` carries `r = SHA-256(r_{s-1} ‖ b)`
//!   (`r_0` is 32 zero bytes), so a range of entries checks against the
//!   root before it ([`verify_range`]);
//! - an RFC 6962 Merkle tree over the same `b`s (the `ct-merkle` crate), so
//!   a client that holds an old head proves in O(log n) hashes that the
//!   new head extends it ([`verify_consistency`]) and that an entry is in
//!   it ([`verify_inclusion`]); its head is served as a C2SP
//!   `tlog-checkpoint` signed note with an Ed25519 key ([`Checkpoint`]).

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use ct_merkle::{mem_backed_tree::MemoryBackedTree, ConsistencyProof, InclusionProof, RootHash};
use ed25519_dalek::Signer as _;
pub use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2_11::{Digest, Sha256};

use crate::SealError;

/// One entry of the chained view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its sequence number, from 1.
    pub s: u64,
    /// The binding's hash, hex.
    pub b: String,
    /// The chain's root after it: SHA-256(previous root ‖ b), hex.
    pub r: String,
    /// When it was appended, ms since the epoch.
    pub t: u64,
}

/// The hash of a binding's canonical text.
pub fn binding_hash(canonical: &str) -> [u8; 32] {
    Sha256::digest(canonical.as_bytes()).into()
}

/// The chain's next root.
pub fn chain(previous: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(previous);
    h.update(b);
    h.finalize().into()
}

fn hex32(s: &str) -> Result<[u8; 32], SealError> {
    hex::decode(s)
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or(SealError::Witness("not 32 bytes of hex"))
}

/// Checks that `entries` follow `previous` (the root before the first of
/// them, entry number `from - 1`): consecutive numbers, each `r` chained.
/// The root after the last.
pub fn verify_range(
    previous: &[u8; 32],
    from: u64,
    entries: &[Entry],
) -> Result<[u8; 32], SealError> {
    let mut root = *previous;
    for (i, e) in entries.iter().enumerate() {
        if e.s != from + i as u64 {
            return Err(SealError::Witness("entries are not consecutive"));
        }
        root = chain(&root, &hex32(&e.b)?);
        if hex32(&e.r)? != root {
            return Err(SealError::Witness("an entry's root does not chain"));
        }
    }
    Ok(root)
}

/// The log as the server keeps it: the chain and the Merkle tree.
#[derive(Default)]
pub struct Log {
    entries: Vec<Entry>,
    tree: MemoryBackedTree<Sha256, [u8; 32]>,
}

impl Log {
    /// Appends a binding's hash at `t`.
    pub fn append(&mut self, b: [u8; 32], t: u64) -> Entry {
        let previous = self.root();
        let entry = Entry {
            s: self.entries.len() as u64 + 1,
            b: hex::encode(b),
            r: hex::encode(chain(&previous, &b)),
            t,
        };
        self.tree.push(b);
        self.entries.push(entry.clone());
        entry
    }

    /// Entries in number order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The number of entries.
    pub fn len(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The chain's root (32 zero bytes when empty).
    pub fn root(&self) -> [u8; 32] {
        self.entries
            .last()
            .and_then(|e| hex32(&e.r).ok())
            .unwrap_or([0; 32])
    }

    /// The Merkle tree's root.
    pub fn merkle_root(&self) -> [u8; 32] {
        self.tree
            .root()
            .as_bytes()
            .as_slice()
            .try_into()
            .unwrap_or([0; 32])
    }

    /// A proof that the tree of `old_size` entries is a prefix of this one.
    pub fn prove_consistency(&self, old_size: u64) -> Result<Vec<u8>, SealError> {
        if old_size == 0 || old_size > self.len() {
            return Err(SealError::Witness("old size out of range"));
        }
        let additions = (self.len() - old_size) as usize;
        Ok(self.tree.prove_consistency(additions).as_bytes().to_vec())
    }

    /// A proof that entry `s` (from 1) is in this tree.
    pub fn prove_inclusion(&self, s: u64) -> Result<Vec<u8>, SealError> {
        if s == 0 || s > self.len() {
            return Err(SealError::Witness("entry out of range"));
        }
        Ok(self
            .tree
            .prove_inclusion((s - 1) as usize)
            .as_bytes()
            .to_vec())
    }
}

fn root_hash(root: &[u8; 32], size: u64) -> RootHash<Sha256> {
    RootHash::new((*root).into(), size)
}

/// Checks that the tree (`old_root`, `old_size`) is a prefix of
/// (`new_root`, `new_size`) by `proof`.
pub fn verify_consistency(
    old_root: &[u8; 32],
    old_size: u64,
    new_root: &[u8; 32],
    new_size: u64,
    proof: &[u8],
) -> Result<(), SealError> {
    if old_size == new_size {
        return match old_root == new_root && proof.is_empty() {
            true => Ok(()),
            false => Err(SealError::Witness("same size, different root")),
        };
    }
    let proof = ConsistencyProof::<Sha256>::try_from_bytes(proof.to_vec())
        .map_err(|_| SealError::Witness("malformed consistency proof"))?;
    root_hash(new_root, new_size)
        .verify_consistency(&root_hash(old_root, old_size), &proof)
        .map_err(|_| SealError::Witness("the new head does not extend the old one"))
}

/// Checks that binding hash `b` is entry `s` (from 1) of the tree
/// (`root`, `size`) by `proof`.
pub fn verify_inclusion(
    root: &[u8; 32],
    size: u64,
    s: u64,
    b: &[u8; 32],
    proof: &[u8],
) -> Result<(), SealError> {
    let proof = InclusionProof::<Sha256>::try_from_bytes(proof.to_vec())
        .map_err(|_| SealError::Witness("malformed inclusion proof"))?;
    root_hash(root, size)
        .verify_inclusion(b, s.wrapping_sub(1), &proof)
        .map_err(|_| SealError::Witness("the entry is not in the tree"))
}

/// A C2SP `tlog-checkpoint`: the log's origin, size and Merkle root, and
/// the extension lines the format allows after them (the host signs its
/// chained root and its directory's hash there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's name (e.g. `relay.example/messages/v2/witness`).
    pub origin: String,
    /// Entries in the tree.
    pub size: u64,
    /// The Merkle root.
    pub root: [u8; 32],
    /// Extension lines (non-empty, without newlines), in order.
    pub extensions: Vec<String>,
}

/// The signature line's marker in a signed note (U+2014 and a space).
const SIG_PREFIX: &str = "\u{2014} ";
/// The signature type byte of Ed25519 in the C2SP signed-note format.
const ED25519: u8 = 0x01;

/// The signed-note key id of `name`'s Ed25519 key: the first four bytes of
/// SHA-256(name ‖ "\n" ‖ 0x01 ‖ key).
pub fn key_id(name: &str, key: &VerifyingKey) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([ED25519]);
    h.update(key.as_bytes());
    let d = h.finalize();
    [d[0], d[1], d[2], d[3]]
}

impl Checkpoint {
    /// The checkpoint's text (the note's body).
    pub fn body(&self) -> String {
        let mut body = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        );
        for line in &self.extensions {
            body.push_str(line);
            body.push('\n');
        }
        body
    }

    /// The signed note: the body, a blank line, one signature line by
    /// `key` under the name `origin`.
    pub fn sign(&self, key: &SigningKey) -> String {
        let body = self.body();
        let mut blob = key_id(&self.origin, &key.verifying_key()).to_vec();
        blob.extend_from_slice(&self.signature(key));
        format!("{body}\n{SIG_PREFIX}{} {}\n", self.origin, B64.encode(blob))
    }

    /// `key`'s Ed25519 signature of the body (what the note's signature
    /// line carries after the key id).
    pub fn signature(&self, key: &SigningKey) -> [u8; 64] {
        key.sign(self.body().as_bytes()).to_bytes()
    }

    /// Reads a signed note and checks its signature by `key` under the
    /// checkpoint's origin; the checkpoint it vouches for.
    pub fn verify(note: &str, key: &VerifyingKey) -> Result<Checkpoint, SealError> {
        let bad = SealError::Witness;
        let (body, sigs) = note
            .split_once("\n\n")
            .ok_or(bad("a signed note has a body, a blank line, signatures"))?;
        let body = format!("{body}\n");
        let mut lines = body.lines();
        let origin = lines
            .next()
            .filter(|o| !o.is_empty())
            .ok_or(bad("no origin"))?;
        let size = lines
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or(bad("no tree size"))?;
        let root = lines
            .next()
            .and_then(|r| B64.decode(r).ok())
            .and_then(|r| <[u8; 32]>::try_from(r).ok())
            .ok_or(bad("no root hash"))?;
        let extensions = lines.map(str::to_string).collect();
        let id = key_id(origin, key);
        let signed = sigs.lines().any(|line| {
            let Some(rest) = line.strip_prefix(SIG_PREFIX) else {
                return false;
            };
            let Some((name, blob)) = rest.split_once(' ') else {
                return false;
            };
            let Ok(blob) = B64.decode(blob) else {
                return false;
            };
            let Ok(sig) = <[u8; 64]>::try_from(blob.get(4..).unwrap_or_default()) else {
                return false;
            };
            name == origin
                && blob[..4] == id
                && key
                    .verify_strict(body.as_bytes(), &ed25519_dalek::Signature::from_bytes(&sig))
                    .is_ok()
        });
        if !signed {
            return Err(bad("no valid signature by the witness key"));
        }
        Ok(Checkpoint {
            origin: origin.to_string(),
            size,
            root,
            extensions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(n: u64) -> Log {
        let mut log = Log::default();
        for i in 0..n {
            log.append(binding_hash(&format!("mailbox {i}")), i);
        }
        log
    }

    #[test]
    fn a_range_chains_from_the_root_before_it() {
        let log = log_of(10);
        let entries = log.entries();
        let root = verify_range(&[0; 32], 1, entries).expect("the whole log");
        assert_eq!(root, log.root());
        let before = hex32(&entries[3].r).expect("root");
        assert_eq!(
            verify_range(&before, 5, &entries[4..]).expect("a tail"),
            log.root()
        );
        let mut forged = entries.to_vec();
        forged[6].b = hex::encode(binding_hash("another key"));
        assert!(verify_range(&[0; 32], 1, &forged).is_err());
        assert!(verify_range(&[0; 32], 2, entries).is_err());
    }

    #[test]
    fn a_new_head_proves_it_extends_an_old_one_and_a_forked_one_cannot() {
        let old = log_of(7);
        let new = log_of(20);
        let proof = new.prove_consistency(7).expect("proof");
        verify_consistency(&old.merkle_root(), 7, &new.merkle_root(), 20, &proof).expect("extends");
        let mut fork = Log::default();
        for i in 0..20 {
            let text = if i == 3 {
                "swapped".into()
            } else {
                format!("mailbox {i}")
            };
            fork.append(binding_hash(&text), i);
        }
        let forged = fork.prove_consistency(7).expect("proof");
        assert!(
            verify_consistency(&old.merkle_root(), 7, &fork.merkle_root(), 20, &forged).is_err()
        );
        assert!(
            verify_consistency(&old.merkle_root(), 7, &new.merkle_root(), 20, &forged).is_err()
        );
        verify_consistency(&new.merkle_root(), 20, &new.merkle_root(), 20, &[]).expect("same");
    }

    #[test]
    fn an_entry_proves_its_inclusion() {
        let log = log_of(13);
        let b = binding_hash("mailbox 4");
        let proof = log.prove_inclusion(5).expect("proof");
        verify_inclusion(&log.merkle_root(), 13, 5, &b, &proof).expect("included");
        assert!(verify_inclusion(&log.merkle_root(), 13, 6, &b, &proof).is_err());
        assert!(log.prove_inclusion(14).is_err());
    }

    #[test]
    fn a_checkpoint_verifies_only_under_its_key_and_body() {
        let key = SigningKey::from_bytes(&[9; 32]);
        let log = log_of(3);
        let cp = Checkpoint {
            origin: "relay.test/messages/v2/witness".into(),
            size: log.len(),
            root: log.merkle_root(),
            extensions: vec![format!("chain {}", hex::encode(log.root()))],
        };
        let note = cp.sign(&key);
        assert!(
            note.starts_with("relay.test/messages/v2/witness\n3\n"),
            "{note}"
        );
        assert!(note.contains("\n\n\u{2014} relay.test/messages/v2/witness "));
        assert_eq!(
            Checkpoint::verify(&note, &key.verifying_key()).expect("ok"),
            cp
        );
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert!(Checkpoint::verify(&note, &other).is_err());
        let forged = note.replacen("\n3\n", "\n4\n", 1);
        assert!(Checkpoint::verify(&forged, &key.verifying_key()).is_err());
        let forged = note.replacen("chain ", "chain 0", 1);
        assert!(
            Checkpoint::verify(&forged, &key.verifying_key()).is_err(),
            "the extension lines are signed"
        );
    }
}
