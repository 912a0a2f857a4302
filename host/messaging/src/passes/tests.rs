//! The standard's known answers (RFC 9578 Appendix A.2, the publicly
//! verifiable token vectors, in `rfc9578_a2.json` as the `privacypass`
//! crate ships them in `tests/kat_vectors/public_go.json`), and the
//! client/issuer round trip with this host's keys.

use std::sync::Arc;

use blind_rsa_signatures::SecretKey;
use privacypass::{
    public_tokens::{server::IssuerServer, PublicToken, TokenRequest},
    Deserialize as _, Serialize as _,
};

use super::{keys::OneKey, *};

/// One vector, its fields hex-decoded.
struct Vector {
    sk_s: Vec<u8>,
    pk_s: Vec<u8>,
    challenge: Vec<u8>,
    request: Vec<u8>,
    response: Vec<u8>,
    token: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let raw: Vec<std::collections::BTreeMap<String, String>> =
        serde_json::from_str(include_str!("rfc9578_a2.json")).unwrap();
    raw.iter()
        .map(|v| {
            let field = |k: &str| hex::decode(&v[k]).unwrap();
            Vector {
                sk_s: field("skS"),
                pk_s: field("pkS"),
                challenge: field("token_challenge"),
                request: field("token_request"),
                response: field("token_response"),
                token: field("token"),
            }
        })
        .collect()
}

#[tokio::test]
async fn the_issuer_signs_and_the_redeemer_verifies_the_rfc_9578_vectors() {
    for (i, v) in vectors().into_iter().enumerate() {
        let sk = SecretKey::from_pem(std::str::from_utf8(&v.sk_s).unwrap()).unwrap();
        let pk = PublicKey::from_spki(&v.pk_s).unwrap();
        let key = keys::EpochKey::of_pair(0, keys::Pair { pk: pk.clone(), sk });
        assert_eq!(
            key.spki, v.pk_s,
            "vector {i}: the key serializes as the RFC's"
        );
        let request = TokenRequest::tls_deserialize_exact(&v.request).unwrap();
        let response = IssuerServer::new()
            .issue_token_response(&OneKey(Arc::new(key)), request)
            .await
            .unwrap();
        assert_eq!(
            response.tls_serialize_detached().unwrap(),
            v.response,
            "vector {i}: the blind signature"
        );
        let token = PublicToken::tls_deserialize_exact(&v.token).unwrap();
        assert_eq!(token.challenge_digest(), &challenge_digest(&v.challenge));
        assert!(verify(&pk, &token), "vector {i}: the token verifies");
        let mut forged = v.token.clone();
        forged[TOKEN_LEN - 1] ^= 1;
        let forged = PublicToken::tls_deserialize_exact(&forged).unwrap();
        assert!(!verify(&pk, &forged), "vector {i}: a changed authenticator");
    }
}

fn challenge_digest(c: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    Sha256::digest(c).into()
}

#[test]
fn an_epoch_key_is_the_same_from_the_same_seed_and_another_from_another() {
    let a = EpochKey::derive(7, [1; 32]);
    assert_eq!(a.key_id, EpochKey::derive(7, [1; 32]).key_id);
    assert_ne!(a.key_id, EpochKey::derive(7, [2; 32]).key_id);
    assert_eq!(a.truncated(), a.key_id[31]);
    assert!(PublicKey::from_spki(&a.spki).is_ok());
}

#[test]
fn a_pass_value_may_be_bare_or_a_private_token_authorization() {
    assert_eq!(token_of(" AAJx "), "AAJx");
    assert_eq!(token_of("PrivateToken token=\"AAJx\""), "AAJx");
    assert_eq!(token_of("PrivateToken token=AAJx"), "AAJx");
    assert_eq!(unbase64("AAE"), unbase64("AAE="));
}
