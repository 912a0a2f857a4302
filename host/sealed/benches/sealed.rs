//! Sealed messaging's client-side costs:
//!
//! - `seal/100B`, `seal/1900B`: one inner sealed into a row (a fresh
//!   stealth handle, padding, an X-Wing HPKE envelope);
//! - `open/512`: a recipient's open of its own row (tag check, X-Wing
//!   decapsulation, AES-256-GCM, unpadding);
//! - `scan/tagged`: a feed scanned with the viewing key — the view tag
//!   passes over 255 rows in 256 after one secp256k1 multiplication;
//! - `scan/untagged`: the same feed with every row's envelope tried, as a
//!   scanner without view tags would.
//!
//! The feed is [`FEED_ROWS`] rows (100,000 under `cargo bench`; 200 under
//! `cargo test --benches`, which runs each function once): 2,000 distinct
//! rows sealed to strangers, repeated; a row's scanning cost does not
//! depend on whether it was seen before. Throughput is reported in rows.
//!
//! `cargo bench -p relay-sealed --bench sealed`

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use relay_sealed::{
    envelope,
    message::{self, Reader, Recipient, Row},
};

const DISTINCT: usize = 2_000;

fn feed_rows() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        100_000
    } else {
        200
    }
}

fn feed() -> Vec<Row> {
    let strangers: Vec<_> = (0..8).map(|_| Recipient::generate().mailbox()).collect();
    let distinct: Vec<Row> = (0..DISTINCT.min(feed_rows()))
        .map(|i| {
            message::seal(
                &strangers[i % strangers.len()],
                "a note for someone else",
                0,
            )
            .expect("seal")
            .remove(0)
        })
        .collect();
    distinct.iter().cycle().take(feed_rows()).cloned().collect()
}

fn seal_and_open(c: &mut Criterion) {
    let bob = Recipient::generate();
    let mailbox = bob.mailbox();
    let mut group = c.benchmark_group("seal");
    for (name, len) in [("100B", 100), ("1900B", 1900)] {
        let inner = "x".repeat(len);
        group.bench_function(name, |b| {
            b.iter(|| message::seal(&mailbox, black_box(&inner), 0).expect("seal"))
        });
    }
    group.finish();
    let row = message::seal(&mailbox, &"x".repeat(100), 0)
        .expect("seal")
        .remove(0);
    c.bench_function("open/512", |b| {
        b.iter(|| bob.open(black_box(&row)).expect("ours"))
    });
}

fn scan(c: &mut Criterion) {
    let rows = feed();
    let bob = Recipient::generate();
    let mut group = c.benchmark_group("scan");
    group.sample_size(10);
    group.throughput(Throughput::Elements(rows.len() as u64));
    group.bench_function("tagged", |b| {
        b.iter(|| {
            let found = Reader::new(bob.clone()).scan(rows.iter());
            assert!(found.is_empty());
        })
    });
    group.bench_function("untagged", |b| {
        b.iter(|| {
            let opened = rows
                .iter()
                .filter_map(|row| row.decode().ok())
                .filter(|r| {
                    let aad = message::row_aad(&r.ephemeral_public, r.view_tag);
                    envelope::open(&bob.kem, &aad, &r.ct).is_ok()
                })
                .count();
            assert_eq!(opened, 0);
        })
    });
    group.finish();
}

criterion_group!(benches, seal_and_open, scan);
criterion_main!(benches);
