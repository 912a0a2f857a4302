//! A note: the secret that deposits and later withdraws one fixed amount.
//! It is a Semaphore identity (trapdoor and nullifier derived from 32
//! random bytes, as zk-kit derives them); its identity commitment is the
//! leaf the pool's tree holds. The written form names the pool it belongs
//! to, so a note is never proven against another pool:
//! `relay-note-v1:<chainId>:<pool>:<64 hex>`. Whoever holds the string can
//! withdraw the note: it is kept like a private key.

use alloy::primitives::{Address, U256};
use semaphore_rs::{identity::Identity, protocol::generate_nullifier_hash};

/// The written form's prefix.
const PREFIX: &str = "relay-note-v1";

/// A note of the pool `pool` on chain `chain_id`.
#[derive(Clone, PartialEq, Eq)]
pub struct Note {
    /// The chain.
    pub chain_id: u64,
    /// The pool contract.
    pub pool: Address,
    secret: [u8; 32],
}

impl std::fmt::Debug for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Note")
            .field("chain_id", &self.chain_id)
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// Why a written note does not read.
#[derive(Debug, thiserror::Error)]
#[error("not a relay note ({0}): expected relay-note-v1:<chainId>:<pool>:<64 hex>")]
pub struct NoteError(&'static str);

impl Note {
    /// A fresh note of `pool` (32 bytes from the operating system's CSPRNG).
    pub fn random(chain_id: u64, pool: Address) -> Self {
        Note {
            chain_id,
            pool,
            secret: rand::random(),
        }
    }

    /// The note whose secret is `secret` (tests and vectors).
    pub fn from_secret(chain_id: u64, pool: Address, secret: [u8; 32]) -> Self {
        Note {
            chain_id,
            pool,
            secret,
        }
    }

    /// Reads the written form.
    pub fn parse(s: &str) -> Result<Self, NoteError> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        let [prefix, chain, pool, secret] = parts[..] else {
            return Err(NoteError("four ':'-separated parts"));
        };
        if prefix != PREFIX {
            return Err(NoteError("prefix"));
        }
        let chain_id = chain.parse().map_err(|_| NoteError("chain id"))?;
        let pool = pool.parse().map_err(|_| NoteError("pool address"))?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(secret, &mut bytes).map_err(|_| NoteError("secret"))?;
        Ok(Note::from_secret(chain_id, pool, bytes))
    }

    /// The written form (the secret included).
    pub fn expose(&self) -> String {
        format!(
            "{PREFIX}:{}:{:#x}:{}",
            self.chain_id,
            self.pool,
            hex::encode(self.secret)
        )
    }

    /// The Semaphore identity.
    pub fn identity(&self) -> Identity {
        Identity::from_secret(&mut self.secret.clone(), None)
    }

    /// The leaf a deposit adds: the identity commitment.
    pub fn commitment(&self) -> U256 {
        self.identity().commitment()
    }

    /// The nullifier hash its withdrawal spends, under the pool's external
    /// nullifier.
    pub fn nullifier_hash(&self) -> U256 {
        let ext = crate::zk::external_nullifier(self.chain_id, self.pool);
        generate_nullifier_hash(&self.identity(), ext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_back_and_hides_its_secret_from_debug() {
        let pool = Address::repeat_byte(0x11);
        let note = Note::random(8453, pool);
        let back = Note::parse(&note.expose()).unwrap();
        assert_eq!(back, note);
        assert_eq!(back.commitment(), note.commitment());
        assert!(!format!("{note:?}").contains(&hex::encode(note.secret)));
        assert_ne!(Note::random(8453, pool).commitment(), note.commitment());
        for bad in [
            "",
            "relay-note-v2:1:0x11:00",
            "relay-note-v1:x:0x1111111111111111111111111111111111111111:00",
        ] {
            assert!(Note::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_identity_is_zk_kits() {
        // semaphore-rs derives the identity as zk-kit does; the commitment
        // is Poseidon(Poseidon(nullifier, trapdoor)), below the field
        let note = Note::from_secret(1, Address::ZERO, [7; 32]);
        let id = note.identity();
        assert_eq!(note.commitment(), id.commitment());
        assert!(note.commitment() < semaphore_rs::MODULUS);
    }
}
