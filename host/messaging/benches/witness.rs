//! The witness log's server-side costs at a directory of [`mailboxes`]
//! (10,000 under `cargo bench`; 50 under `cargo test --benches`, which
//! runs each function once), on SQLite in a temporary directory:
//!
//! - `publish`: one more publication appended — the store's insert, the
//!   chained root, the RFC 6962 tree, the directory entry (no
//!   re-rendering: the directory is rendered when read);
//! - `head_after_publish`: a publication, then the signed head — the
//!   directory rendered at the new size and hashed, the checkpoint signed;
//! - `directory_unchanged`: the directory read again at the same size
//!   (served from the rendered bytes).
//!
//! `cargo bench -p relay-messaging --bench witness`

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use relay_messaging::{mailbox::Publication, store::Messages, witness::Witness};
use relay_sealed::witness::SigningKey;

fn mailboxes() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        10_000
    } else {
        50
    }
}

/// A publication of the `i`-th wallet at `ts` (the witness trusts its
/// caller's checks: the keys are the right size, not real).
fn publication(i: usize, ts: u64) -> Publication {
    Publication {
        address: format!("0x{i:040x}"),
        meta_address: format!("st:eth:0x{}", "02".repeat(66)),
        kem_pub: format!("0x{}", "ab".repeat(1216)),
        dsa_pub: None,
        ts,
        sig: format!("0x{}", "cd".repeat(65)),
    }
}

fn witness(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("w.db").display());
    let (witness, n) = rt.block_on(async {
        let store = relay_store::Store::connect(&url).await.unwrap();
        let store = Messages::from(store);
        store
            .migrate(relay_messaging::store::MIGRATIONS)
            .await
            .unwrap();
        let w = Witness::new(
            store,
            SigningKey::from_bytes(&[7; 32]),
            "bench/witness".into(),
        );
        let n = mailboxes();
        for i in 0..n {
            w.publish(&publication(i, 1), 1).await.unwrap();
        }
        (w, n)
    });
    let mut next = 0u64;
    let mut fresh = || {
        next += 1;
        publication(n + next as usize, 2)
    };
    c.bench_function("publish", |b| {
        b.iter(|| rt.block_on(witness.publish(&fresh(), 2)).unwrap())
    });
    c.bench_function("head_after_publish", |b| {
        b.iter(|| {
            rt.block_on(async {
                witness.publish(&fresh(), 2).await.unwrap();
                witness.head().await.unwrap()
            })
        })
    });
    c.bench_function("directory_unchanged", |b| {
        b.iter(|| rt.block_on(witness.directory()).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = witness
}
criterion_main!(benches);
