//! Operator authority: the owner token. A request that would spend the
//! operator's own funds (`mode: self` on execute) carries
//! `Authorization: Bearer <owner token>`. The host knows only the token's
//! SHA-256 ([`OwnerTokenHash`], configured from the environment at start,
//! never from a file, never logged) and compares the hash of what was sent
//! with it in constant time. No hash configured: nobody has the authority.
//!
//! This is the one place the credential is checked; the execute service
//! decides which requests need it.

use axum::http::{header::AUTHORIZATION, HeaderMap};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 of the owner token. Its `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct OwnerTokenHash([u8; 32]);

impl std::fmt::Debug for OwnerTokenHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OwnerTokenHash(..)")
    }
}

/// Why a configured hash is refused (the value itself is never shown).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be the 64-hex-digit SHA-256 of the owner token")]
pub struct BadOwnerTokenHash;

impl OwnerTokenHash {
    /// Parses the hex SHA-256 (64 digits, an optional `0x`).
    pub fn from_hex(s: &str) -> Result<Self, BadOwnerTokenHash> {
        let s = s.trim();
        let s = s.strip_prefix("0x").unwrap_or(s);
        let bytes = hex::decode(s).map_err(|_| BadOwnerTokenHash)?;
        Ok(OwnerTokenHash(
            bytes.try_into().map_err(|_| BadOwnerTokenHash)?,
        ))
    }

    /// The hash of `token` (the devnet configures its own token this way).
    pub fn of_token(token: &str) -> Self {
        OwnerTokenHash(Sha256::digest(token.as_bytes()).into())
    }

    /// A 32-byte key for `purpose` derived from the hash (SHA-256 of the
    /// purpose and the hash). Anyone holding the hash can compute it, so
    /// it must not key a credential: the dashboard's login cookies are
    /// signed under a secret the host draws at start instead
    /// (`relay_admin::login`).
    pub fn derive_key(&self, purpose: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(purpose.as_bytes());
        h.update([0u8]);
        h.update(self.0);
        h.finalize().into()
    }

    /// Whether `token` is the owner token: its hash compared in constant
    /// time.
    pub fn admits(&self, token: &str) -> bool {
        let sent: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        sent.ct_eq(&self.0).into()
    }
}

/// Whether the request carries the owner token (`Authorization: Bearer
/// <token>`, the scheme case-insensitive) and `owner` admits it. No header,
/// another scheme, a wrong token, or no hash configured: `false`.
pub fn is_operator(owner: Option<&OwnerTokenHash>, headers: &HeaderMap) -> bool {
    let Some(owner) = owner else { return false };
    let Some(value) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((scheme, token)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && owner.admits(token.trim())
}

/// The `WWW-Authenticate` challenge a 401 carries (RFC 6750).
pub const CHALLENGE: &str = "Bearer realm=\"relay operator\"";

/// The challenge of a 401 on a session bearer's endpoint (RFC 6750).
pub const SESSION_CHALLENGE: &str = "Bearer realm=\"relay session\"";

/// An error answer; a 401 carries its `WWW-Authenticate` challenge (RFC
/// 6750): [`CHALLENGE`] for `OPERATOR_AUTH_REQUIRED`, and a feature's own
/// for its own codes (`challenges`: a session bearer's realm for
/// `SESSION_UNAUTHORIZED`).
pub fn refusal(
    e: relay_errors::ApiError,
    challenges: &[(relay_errors::ErrorCode, &'static str)],
) -> axum::response::Response {
    use axum::{http::header::WWW_AUTHENTICATE, response::IntoResponse};
    let challenge = match e.code {
        relay_errors::ErrorCode::OperatorAuthRequired => Some(CHALLENGE),
        code => challenges.iter().find(|(c, _)| *c == code).map(|(_, c)| *c),
    };
    let mut resp = e.into_response();
    if let Some(c) = challenge {
        resp.headers_mut()
            .insert(WWW_AUTHENTICATE, axum::http::HeaderValue::from_static(c));
    }
    resp
}

/// The token of `Authorization: Bearer <token>` (the scheme
/// case-insensitive), if the request carries one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, v.parse().unwrap());
        h
    }

    #[test]
    fn only_the_owner_token_under_bearer_is_admitted() {
        let owner = OwnerTokenHash::of_token("s3cret");
        let hex = hex::encode(Sha256::digest(b"s3cret"));
        assert_eq!(OwnerTokenHash::from_hex(&hex), Ok(owner.clone()));
        assert_eq!(
            OwnerTokenHash::from_hex(&format!("0x{hex}")),
            Ok(owner.clone())
        );
        let o = Some(&owner);
        assert!(is_operator(o, &headers("Bearer s3cret")));
        assert!(is_operator(o, &headers("bearer  s3cret ")));
        for wrong in [
            "Bearer s3cre",
            "Bearer S3CRET",
            "Basic s3cret",
            "s3cret",
            "Bearer ",
        ] {
            assert!(!is_operator(o, &headers(wrong)), "{wrong}");
        }
        assert!(!is_operator(o, &HeaderMap::new()), "no header");
        assert!(
            !is_operator(None, &headers("Bearer s3cret")),
            "no hash configured: nobody"
        );
    }

    #[test]
    fn a_malformed_hash_is_refused_and_never_shown() {
        for bad in ["", "abc", &"zz".repeat(32), &"ab".repeat(33)] {
            assert_eq!(OwnerTokenHash::from_hex(bad), Err(BadOwnerTokenHash));
        }
        let owner = OwnerTokenHash::of_token("s3cret");
        assert_eq!(format!("{owner:?}"), "OwnerTokenHash(..)");
    }
}
