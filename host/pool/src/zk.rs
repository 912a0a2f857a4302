//! The proof a withdrawal carries: Semaphore's depth-20 circuit, proven and
//! verified with semaphore-rs (Groth16 over BN254, the keys of PSE's
//! Semaphore ceremony, shipped in the crate). Its four public inputs, in
//! the circuit's order:
//! - the tree's root;
//! - the nullifier hash, Poseidon(externalNullifier, identityNullifier);
//! - the signal hash, keccak256(recipient ‖ relayer ‖ fee) >> 8: the proof
//!   pays whom it names, with the fee it names, and nobody else;
//! - the external nullifier, keccak256(chainId ‖ pool) >> 8: the pool on
//!   its chain.
//!
//! [`VERIFYING_KEY`] is the circuit's verifying key in snarkjs' JSON form,
//! exported once from the crate's proving key and committed with its
//! provenance (`keys/PROVENANCE.md`); the pool's on-chain verifier is
//! rendered from it and snarkjs checks the host's proofs against it.

use alloy::primitives::{Address, U256};
use semaphore_rs::{
    hash_to_field,
    poseidon_tree::LazyPoseidonTree,
    protocol::{self, Proof},
};
use serde::{Deserialize, Serialize};

use crate::{config::DEPTH, note::Note};

/// The verifying key of Semaphore's depth-20 circuit, snarkjs' JSON.
pub const VERIFYING_KEY: &str = include_str!("../keys/verification_key.json");

/// The pool's external nullifier: keccak256(chainId ‖ pool) >> 8 (the
/// contract's `EXTERNAL_NULLIFIER`).
pub fn external_nullifier(chain_id: u64, pool: Address) -> U256 {
    let mut packed = U256::from(chain_id).to_be_bytes::<32>().to_vec();
    packed.extend_from_slice(pool.as_slice());
    hash_to_field(&packed)
}

/// The signal a withdrawal proves: keccak256(recipient ‖ relayer ‖ fee) >> 8
/// (the contract's `signalHash`).
pub fn signal_hash(recipient: Address, relayer: Address, fee: U256) -> U256 {
    let mut packed = recipient.to_vec();
    packed.extend_from_slice(relayer.as_slice());
    packed.extend_from_slice(&fee.to_be_bytes::<32>());
    hash_to_field(&packed)
}

/// A withdrawal's public inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Public {
    /// The root proven against.
    pub root: U256,
    /// The note's nullifier hash.
    pub nullifier_hash: U256,
    /// [`signal_hash`].
    pub signal_hash: U256,
    /// [`external_nullifier`].
    pub external_nullifier: U256,
}

impl Public {
    /// In the circuit's order.
    pub fn inputs(&self) -> [U256; 4] {
        [
            self.root,
            self.nullifier_hash,
            self.signal_hash,
            self.external_nullifier,
        ]
    }
}

/// What a withdrawal pays: to whom, through which relayer, for what fee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payee {
    /// Receives the note less the fee.
    pub recipient: Address,
    /// Receives the fee (and sends the transaction).
    pub relayer: Address,
    /// Wei.
    pub fee: U256,
}

/// Why a proof could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    /// The note's commitment is not a leaf of the tree.
    #[error("the note's commitment is not in the pool's tree (deposited? the right pool?)")]
    NotInTree,
    /// The prover failed.
    #[error("proving failed: {0}")]
    Prover(String),
}

/// The Poseidon tree (depth 20, empty leaves 0) over `leaves`, in order.
pub fn tree_of(leaves: &[U256]) -> LazyPoseidonTree {
    let mut tree = LazyPoseidonTree::new(DEPTH, U256::ZERO);
    for (i, leaf) in leaves.iter().enumerate() {
        tree = tree.update_with_mutation(i, leaf);
    }
    tree.derived()
}

/// Proves `note`'s withdrawal to `payee` against the tree of `leaves`:
/// the proof (flattened in the order the contract takes) and its public
/// inputs.
pub fn prove(
    note: &Note,
    leaves: &[U256],
    payee: Payee,
) -> Result<([U256; 8], Public), ProveError> {
    let commitment = note.commitment();
    let index = leaves
        .iter()
        .position(|l| *l == commitment)
        .ok_or(ProveError::NotInTree)?;
    let tree = tree_of(leaves);
    let public = Public {
        root: tree.root(),
        nullifier_hash: note.nullifier_hash(),
        signal_hash: signal_hash(payee.recipient, payee.relayer, payee.fee),
        external_nullifier: external_nullifier(note.chain_id, note.pool),
    };
    let proof = protocol::generate_proof(
        &note.identity(),
        &tree.proof(index),
        public.external_nullifier,
        public.signal_hash,
    )
    .map_err(|e| ProveError::Prover(e.to_string()))?;
    Ok((proof.flatten(), public))
}

/// Whether `proof` proves `public` (false for a malformed proof: points off
/// the curve or outside the subgroup, inputs outside the field).
pub fn verify(proof: &[U256; 8], public: &Public) -> bool {
    let p = public;
    protocol::verify_proof(
        p.root,
        p.nullifier_hash,
        p.signal_hash,
        p.external_nullifier,
        &Proof::from_flat(*proof),
        DEPTH,
    )
    .unwrap_or(false)
}

/// A proof in snarkjs' JSON form (`pi_a`, `pi_b`, `pi_c`), for
/// `snarkjs groth16 verify`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnarkjsProof {
    /// A, G1.
    pub pi_a: [String; 3],
    /// B, G2 (each coordinate c0 first).
    pub pi_b: [[String; 2]; 3],
    /// C, G1.
    pub pi_c: [String; 3],
    /// `groth16`.
    pub protocol: String,
    /// `bn128`.
    pub curve: String,
}

/// `proof` (the contract's order: B's coordinates c1 first) as snarkjs
/// writes it, and the public inputs as its decimal strings.
pub fn snarkjs(proof: &[U256; 8], public: &Public) -> (SnarkjsProof, Vec<String>) {
    let d = |i: usize| proof[i].to_string();
    let one = || "1".to_string();
    let p = SnarkjsProof {
        pi_a: [d(0), d(1), one()],
        pi_b: [[d(3), d(2)], [d(5), d(4)], [one(), "0".into()]],
        pi_c: [d(6), d(7), one()],
        protocol: "groth16".into(),
        curve: "bn128".into(),
    };
    (p, public.inputs().iter().map(U256::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn the_hashes_are_the_contracts() {
        // keccak256(abi.encodePacked(uint256(8453), address(0x11…11))) >> 8
        let pool = Address::repeat_byte(0x11);
        let mut packed = [0u8; 52];
        packed[30] = 0x21;
        packed[31] = 0x05;
        packed[32..].copy_from_slice(pool.as_slice());
        let want = U256::from_be_bytes(keccak256(packed).0) >> 8;
        assert_eq!(external_nullifier(8453, pool), want);
        let s = signal_hash(pool, Address::ZERO, U256::from(1));
        assert!(s < U256::from(1) << 248);
        assert_ne!(s, signal_hash(pool, Address::ZERO, U256::from(2)));
    }

    #[test]
    fn a_proof_verifies_for_what_it_binds_and_nothing_else() {
        let pool = Address::repeat_byte(0x42);
        let notes: Vec<Note> = (1..=3u8)
            .map(|i| Note::from_secret(8453, pool, [i; 32]))
            .collect();
        let leaves: Vec<U256> = notes.iter().map(Note::commitment).collect();
        let payee = Payee {
            recipient: Address::repeat_byte(1),
            relayer: Address::repeat_byte(2),
            fee: U256::from(5),
        };
        let (proof, public) = prove(&notes[1], &leaves, payee).unwrap();
        assert!(verify(&proof, &public));
        assert_eq!(public.nullifier_hash, notes[1].nullifier_hash());
        let other = Public {
            signal_hash: signal_hash(Address::repeat_byte(3), payee.relayer, payee.fee),
            ..public
        };
        assert!(!verify(&proof, &other), "another recipient");
        let mut bent = proof;
        bent[0] += U256::from(1);
        assert!(!verify(&bent, &public), "a point off the curve");
        let stranger = Note::from_secret(8453, pool, [9; 32]);
        assert!(matches!(
            prove(&stranger, &leaves, payee),
            Err(ProveError::NotInTree)
        ));
    }

    #[test]
    fn the_committed_key_is_a_four_input_groth16_key() {
        let vk: serde_json::Value = serde_json::from_str(VERIFYING_KEY).unwrap();
        assert_eq!(vk["protocol"], "groth16");
        assert_eq!(vk["nPublic"], 4);
        assert_eq!(vk["IC"].as_array().map(Vec::len), Some(5));
    }
}
