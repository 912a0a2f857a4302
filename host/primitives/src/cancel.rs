//! Who may cancel a schedule or a conditional.
//!
//! A record is cancelled only by the operator's owner credential or by the
//! record's own cancel token: a secret (`pct_` and 48 hex digits) made at
//! creation, answered once as `cancelToken` in the create answer and
//! stored only as its SHA-256 ([`CancelToken::hash`]). A DELETE with
//! neither is refused ([`Refused::Unauthenticated`]); one with a token
//! that is not the record's is refused too ([`Refused::WrongToken`]), and
//! the record stays as it was. A record stored before cancel tokens
//! existed has no hash: only the owner cancels it.
//!
//! The token is never logged, never kept in clear and never shown again
//! (`GET` answers no `cancelToken`).

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// What every cancel token starts with.
pub const TOKEN_PREFIX: &str = "pct_";

/// The request header a record's cancel token is sent back in.
pub const TOKEN_HEADER: &str = "x-cancel-token";

/// A fresh cancel token and the hash the record keeps.
#[derive(Clone)]
pub struct CancelToken {
    /// The secret, answered once.
    pub token: String,
    /// Its SHA-256, hex: what the record stores.
    pub hash: String,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken").finish_non_exhaustive()
    }
}

impl CancelToken {
    /// 24 random bytes.
    pub fn new() -> Self {
        let token = format!("{TOKEN_PREFIX}{}", hex::encode(rand::random::<[u8; 24]>()));
        let hash = hash(&token);
        CancelToken { token, hash }
    }
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

/// SHA-256 of `token`, hex.
pub fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.trim().as_bytes()))
}

/// Who asks for a cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Canceller<'a> {
    /// The operator's owner credential was sent.
    Owner,
    /// A cancel token was sent (as it came, unchecked).
    Token(&'a str),
    /// Nothing that proves anything.
    Anonymous,
}

/// Why a cancel is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Neither the owner credential nor a cancel token came.
    Unauthenticated,
    /// The token sent is not the record's (or the record has none).
    WrongToken,
}

/// The part of a stored schedule or conditional a cancel reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Guard {
    /// The record's cancel token hash, when it has one.
    #[serde(default)]
    pub(crate) cancel_hash: Option<String>,
}

/// Whether `who` may cancel a record whose stored hash is `stored`.
pub fn authorize(stored: Option<&str>, who: Canceller<'_>) -> Result<(), Refused> {
    match who {
        Canceller::Owner => Ok(()),
        Canceller::Anonymous => Err(Refused::Unauthenticated),
        Canceller::Token(t) if stored.is_some_and(|h| equal(h, &hash(t))) => Ok(()),
        Canceller::Token(_) => Err(Refused::WrongToken),
    }
}

/// Compares two hex digests without an early exit.
fn equal(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_or_the_records_own_token_cancels() {
        let t = CancelToken::new();
        assert!(t.token.starts_with(TOKEN_PREFIX) && t.token.len() == 52);
        assert_ne!(t.hash, t.token, "the record keeps a hash");
        let stored = Some(t.hash.as_str());
        assert_eq!(authorize(stored, Canceller::Owner), Ok(()));
        assert_eq!(authorize(None, Canceller::Owner), Ok(()));
        assert_eq!(authorize(stored, Canceller::Token(&t.token)), Ok(()));
        let other = CancelToken::new();
        assert_eq!(
            authorize(stored, Canceller::Token(&other.token)),
            Err(Refused::WrongToken)
        );
        assert_eq!(
            authorize(stored, Canceller::Token(&t.hash)),
            Err(Refused::WrongToken),
            "the hash itself is not the token"
        );
        assert_eq!(
            authorize(None, Canceller::Token(&t.token)),
            Err(Refused::WrongToken),
            "a record without a hash is the owner's alone"
        );
        assert_eq!(
            authorize(stored, Canceller::Anonymous),
            Err(Refused::Unauthenticated)
        );
    }
}
