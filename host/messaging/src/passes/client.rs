//! The client's half of a claim (the CLI's and the tests'): blind token
//! requests against the issuer's published key and challenge, then the
//! tokens from the issuer's blind signatures — the `privacypass` crate's
//! client, over this host's JSON wire form.

use blind_rsa_signatures::DefaultRng;
use privacypass::{
    auth::authenticate::TokenChallenge,
    public_tokens::{TokenRequest, TokenResponse, TokenState},
    Deserialize as _, Serialize as _,
};

use super::{base64, unbase64, PublicKey};

/// Why a claim could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The issuer's key or challenge is not readable.
    #[error("the issuer's {0} is not readable")]
    Issuer(&'static str),
    /// A blind signature is not one for its request.
    #[error("tokenResponses[{0}]: not a signature for its request")]
    Response(usize),
    /// The answer has another number of signatures than requests.
    #[error("{got} signatures for {asked} requests")]
    Count {
        /// Requests sent.
        asked: usize,
        /// Signatures received.
        got: usize,
    },
}

/// Requests in flight: what finishes them.
#[derive(Debug)]
pub struct Pending(Vec<TokenState>);

/// `n` blinded token requests (base64url) for the key `token_key` and the
/// challenge `challenge` (both base64url, as the issuer directory gives
/// them).
pub fn requests(
    token_key: &str,
    challenge: &str,
    n: usize,
) -> Result<(Vec<String>, Pending), ClientError> {
    let key = unbase64(token_key)
        .and_then(|k| PublicKey::from_spki(&k).ok())
        .ok_or(ClientError::Issuer("token-key"))?;
    let challenge = unbase64(challenge)
        .and_then(|c| TokenChallenge::deserialize(&c).ok())
        .ok_or(ClientError::Issuer("challenge"))?;
    let mut out = Vec::with_capacity(n);
    let mut states = Vec::with_capacity(n);
    for _ in 0..n {
        let (request, state) = TokenRequest::new(&mut DefaultRng, key.clone(), &challenge)
            .map_err(|_| ClientError::Issuer("token-key"))?;
        out.push(base64(
            &request.tls_serialize_detached().expect("serializes"),
        ));
        states.push(state);
    }
    Ok((out, Pending(states)))
}

/// The tokens (base64url) from the issuer's `responses`, in order.
pub fn finalize(pending: Pending, responses: &[String]) -> Result<Vec<String>, ClientError> {
    if responses.len() != pending.0.len() {
        return Err(ClientError::Count {
            asked: pending.0.len(),
            got: responses.len(),
        });
    }
    pending
        .0
        .iter()
        .zip(responses)
        .enumerate()
        .map(|(i, (state, r))| {
            let response = unbase64(r)
                .and_then(|b| TokenResponse::tls_deserialize_exact(b).ok())
                .ok_or(ClientError::Response(i))?;
            let token = response
                .issue_token(state)
                .map_err(|_| ClientError::Response(i))?;
            Ok(base64(&token.tls_serialize_detached().expect("serializes")))
        })
        .collect()
}
