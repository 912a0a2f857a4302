//! Plus passes' costs (RSA-2048, RSABSSA-SHA384-PSS-Deterministic):
//!
//! - `epoch_key`: an epoch's issuer key derived from its seed (once per
//!   epoch per replica);
//! - `blind_sign`: the issuer's signature of one blinded token request
//!   (a claim of 20 costs twenty of these);
//! - `client_request_and_finalize`: a client's blinding of one request and
//!   its finishing of the token from the signature;
//! - `redeem_verify`: the redeemer's check of one token under its key.
//!
//! `cargo bench -p relay-messaging --bench passes`

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use privacypass::{
    public_tokens::{server::IssuerServer, PublicToken, TokenRequest},
    Deserialize as _,
};
use relay_messaging::passes::{base64, challenge, client, unbase64, verify, EpochKey};

fn passes(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut g = c.benchmark_group("passes");
    g.sample_size(10);
    g.bench_function("epoch_key", |b| b.iter(|| EpochKey::derive(1, [3; 32])));
    let key = EpochKey::derive(1, [3; 32]);
    let (token_key, challenge) = (
        base64(&key.spki),
        base64(&challenge("bench.example").serialize().unwrap()),
    );
    let store = relay_messaging::passes::OneKey::of(key);
    g.bench_function("client_request_and_finalize", |b| {
        b.iter(|| {
            let (requests, pending) = client::requests(&token_key, &challenge, 1).unwrap();
            let request =
                TokenRequest::tls_deserialize_exact(unbase64(&requests[0]).unwrap()).unwrap();
            let signed = rt
                .block_on(IssuerServer::new().issue_token_response(&store, request))
                .unwrap();
            let signed = base64(&privacypass::Serialize::tls_serialize_detached(&signed).unwrap());
            client::finalize(pending, &[signed]).unwrap()
        })
    });
    let (requests, pending) = client::requests(&token_key, &challenge, 1).unwrap();
    let request = TokenRequest::tls_deserialize_exact(unbase64(&requests[0]).unwrap()).unwrap();
    g.bench_function("blind_sign", |b| {
        b.iter(|| {
            rt.block_on(IssuerServer::new().issue_token_response(&store, request.clone()))
                .unwrap()
        })
    });
    let signed = rt
        .block_on(IssuerServer::new().issue_token_response(&store, request))
        .unwrap();
    let signed = base64(&privacypass::Serialize::tls_serialize_detached(&signed).unwrap());
    let token = client::finalize(pending, &[signed]).unwrap().remove(0);
    let token = PublicToken::tls_deserialize_exact(unbase64(&token).unwrap()).unwrap();
    let public = store.public();
    g.bench_function("redeem_verify", |b| {
        b.iter(|| assert!(verify(public, &token)))
    });
    g.finish();
}

criterion_group!(benches, passes);
criterion_main!(benches);
