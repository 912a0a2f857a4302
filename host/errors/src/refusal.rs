//! Signed refusals (spec §4.3 `/api/refusal/verify`, §2.14 refusal record).
//!
//! Every typed 4xx the host answers carries a `refusal` object: the
//! errorCode, the HTTP status, a hash of the request that was refused and
//! the time, signed by the relayer key. Scheme `relay-refusal-v1`: the
//! text below is hashed with keccak-256 and the 32-byte hash is signed as
//! an EIP-191 personal message (viem:
//! `verifyMessage({address, message: {raw: hash}, signature})`).
//!
//! ```text
//! relay-refusal-v1
//! errorCode=INVALID_SIGNATURE
//! status=400
//! request=0x…   keccak-256 of "<METHOD> <path?query>\n" followed by the body bytes
//! at=1700000000000
//! ```

use alloy::primitives::{keccak256, Address, B256};
use relay_chain::signer::RelayerSigner;
use relay_engine::attest::{self, AttestError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The scheme name, first line of the signed text.
pub const SCHEME: &str = "relay-refusal-v1";

/// The hash that names a request: keccak-256 of `"<METHOD> <path?query>\n"`
/// followed by the raw body bytes.
pub fn request_hash(method: &str, path_and_query: &str, body: &[u8]) -> B256 {
    let mut bytes = Vec::with_capacity(method.len() + path_and_query.len() + 2 + body.len());
    bytes.extend_from_slice(method.to_ascii_uppercase().as_bytes());
    bytes.push(b' ');
    bytes.extend_from_slice(path_and_query.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(body);
    keccak256(bytes)
}

/// A refusal as the host returns it inside an error body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    /// [`SCHEME`].
    pub scheme: String,
    /// The errorCode of the answer.
    pub error_code: String,
    /// Its HTTP status.
    pub status: u16,
    /// [`request_hash`] of the refused request, 0x-hex.
    #[schema(value_type = String)]
    pub request_hash: B256,
    /// When, epoch ms.
    pub at: u64,
    /// keccak-256 of the signed text.
    #[schema(value_type = String)]
    pub hash: B256,
    /// The relayer address; absent when this host has no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub signer: Option<Address>,
    /// EIP-191 signature of `hash`, 0x-hex; absent without a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The signed text of a refusal.
pub fn text(error_code: &str, status: u16, request: B256, at: u64) -> String {
    format!("{SCHEME}\nerrorCode={error_code}\nstatus={status}\nrequest={request}\nat={at}")
}

/// Signs a refusal (unsigned when the host has no relayer key).
pub fn sign(
    signer: Option<&RelayerSigner>,
    error_code: &str,
    status: u16,
    request_hash: B256,
    at: u64,
) -> Result<Refusal, AttestError> {
    let hash = keccak256(text(error_code, status, request_hash, at));
    let signed = attest::personal_sign(signer, hash.as_slice())?;
    Ok(Refusal {
        scheme: SCHEME.into(),
        error_code: error_code.into(),
        status,
        request_hash,
        at,
        hash,
        signer: signed.signer,
        signature: signed.signature,
    })
}

/// What checking a refusal found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefusalCheck {
    /// Signed by this host's relayer over exactly these fields (and, when
    /// the request was given, for that request).
    pub genuine: bool,
    /// Who signed it, when the signature is well-formed.
    #[schema(value_type = Option<String>)]
    pub recovered: Option<Address>,
    /// This host's relayer address.
    #[schema(value_type = Option<String>)]
    pub expected: Option<Address>,
    /// Whether the request given hashes to `requestHash` (absent when no
    /// request was given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_matches: Option<bool>,
    /// Why it is not genuine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Checks `r` against the relayer address `expected`, and against the
/// request's own hash when `request` is given.
pub fn verify(r: &Refusal, expected: Option<Address>, request: Option<B256>) -> RefusalCheck {
    let hash = keccak256(text(&r.error_code, r.status, r.request_hash, r.at));
    let recovered = r
        .signature
        .as_deref()
        .and_then(|s| attest::recover(hash.as_slice(), s).ok());
    let request_matches = request.map(|h| h == r.request_hash);
    let reason = if r.scheme != SCHEME {
        Some(format!("unknown scheme {:?} (want {SCHEME})", r.scheme))
    } else if expected.is_none() {
        Some("this host has no relayer key, so it signs nothing".into())
    } else if r.signature.is_none() {
        Some("the refusal carries no signature".into())
    } else if recovered.is_none() {
        Some("the signature is malformed".into())
    } else if recovered != expected {
        Some("the signature does not recover to this host's relayer over these fields".into())
    } else if hash != r.hash {
        Some("`hash` is not the hash of these fields".into())
    } else if request_matches == Some(false) {
        Some("the request given does not hash to `requestHash`".into())
    } else {
        None
    };
    RefusalCheck {
        genuine: reason.is_none(),
        recovered,
        expected,
        request_matches,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> RelayerSigner {
        RelayerSigner::from_hex(
            "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        )
        .unwrap()
    }

    #[test]
    fn a_signed_refusal_verifies_and_names_its_request() {
        let k = key();
        let req = request_hash("post", "/api/route/execute", br#"{"a":1}"#);
        let r = sign(Some(&k), "INVALID_SIGNATURE", 400, req, 1_700_000_000_000).unwrap();
        let ok = verify(&r, Some(k.address()), Some(req));
        assert!(ok.genuine, "{ok:?}");
        assert_eq!(ok.recovered, Some(k.address()));
        assert_eq!(ok.request_matches, Some(true));
        let other = request_hash("POST", "/api/route/execute", br#"{"a":2}"#);
        let wrong = verify(&r, Some(k.address()), Some(other));
        assert!(!wrong.genuine);
        assert_eq!(wrong.request_matches, Some(false));
    }

    #[test]
    fn a_forged_or_altered_refusal_does_not_verify() {
        let k = key();
        let req = request_hash("GET", "/api/route/status?id=x", b"");
        let r = sign(Some(&k), "NOT_FOUND", 404, req, 1).unwrap();
        let mut altered = r.clone();
        altered.error_code = "RATE_LIMITED".into();
        assert!(!verify(&altered, Some(k.address()), None).genuine);
        let mut late = r.clone();
        late.at += 1;
        assert!(!verify(&late, Some(k.address()), None).genuine);
        let stranger = RelayerSigner::from_hex(
            "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
        )
        .unwrap();
        let forged = sign(Some(&stranger), "NOT_FOUND", 404, req, 1).unwrap();
        let check = verify(&forged, Some(k.address()), None);
        assert!(!check.genuine);
        assert_eq!(check.recovered, Some(stranger.address()));
        let unsigned = sign(None, "NOT_FOUND", 404, req, 1).unwrap();
        assert!(!verify(&unsigned, Some(k.address()), None).genuine);
    }

    #[test]
    fn the_request_hash_is_keccak_of_method_path_newline_body() {
        let h = request_hash("post", "/x?y=1", b"{}");
        assert_eq!(h, keccak256(b"POST /x?y=1\n{}"));
    }
}
