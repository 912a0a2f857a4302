//! relay-sealed: sealed messaging v2 (spec §4.10), the client side.
//!
//! Everything here runs where the keys are — a wallet, an agent, the
//! `relay msg` CLI — never on the server, which stores three fields per
//! message (`ephemeralPubKey`, `viewTag`, `ct`) and can read none of them:
//!
//! - [`envelope`]: HPKE (RFC 9180, base mode) with the X-Wing hybrid KEM
//!   (ML-KEM-768 + X25519, KEM id `0x647a`), HKDF-SHA256 and AES-256-GCM,
//!   all from the `hpke` crate;
//! - [`bucket`]: every plaintext padded to 512 or 2048 bytes, so a row's
//!   size says which of two buckets it is and nothing more;
//! - [`stealth`]: a one-time ERC-5564 (scheme 1, secp256k1) handle per
//!   message with its one-byte view tag, from the recipient's meta-address
//!   `st:eth:0x<spendPub><viewPub>`;
//! - [`inner`]: the inner format (`␞nf2␞{meta}␞text`) and its meta keys;
//! - [`frames`]: inners longer than [`bucket::MAX_INNER`] as
//!   `{v:4, cid, i, n, ts, p}` frames, at most [`frames::MAX_PARTS`];
//! - [`signature`]: optional authorship, `sig` (the sender's wallet) and
//!   `sig2` (ML-DSA-65, the key published in the mailbox);
//! - [`message`]: the whole path — seal to a mailbox (or one copy per
//!   group member) into rows, scan rows with a viewing key, open,
//!   reassemble;
//! - [`thread`]: a conversation as a reader assembles it — edits and
//!   deletes only by the original sender, reactions and their undo,
//!   disappearing messages, replies;
//! - [`keyring`] and [`inbox`]: what a client keeps — its keys, and its
//!   side of the feed between scans (the cursor, partial frames, the
//!   messages, the witness head it holds);
//! - [`witness`]: the binding log's chained entries, its RFC 6962 tree with
//!   consistency and inclusion proofs, and its signed C2SP checkpoint, so a
//!   client detects a forged or forked head.

pub mod bucket;
pub mod envelope;
pub mod frames;
pub mod inbox;
pub mod inner;
pub mod keyring;
pub mod message;
pub mod signature;
pub mod stealth;
pub mod thread;
pub mod witness;

mod error;

pub use error::SealError;
