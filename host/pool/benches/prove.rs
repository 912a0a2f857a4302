//! Prove and verify times of a pool withdrawal (Semaphore depth 20 with
//! semaphore-rs): `cargo bench -p relay-pool`. The figures are in
//! docs/api-pool.md.

#![allow(missing_docs)] // criterion_group! writes an undocumented fn

use alloy::primitives::{Address, U256};
use criterion::{criterion_group, criterion_main, Criterion};
use relay_pool::{
    note::Note,
    zk::{self, Payee},
};

fn bench(c: &mut Criterion) {
    let pool = Address::repeat_byte(0x42);
    let notes: Vec<Note> = (0..250u8)
        .map(|i| Note::from_secret(8453, pool, [i; 32]))
        .collect();
    let leaves: Vec<U256> = notes.iter().map(Note::commitment).collect();
    let payee = Payee {
        recipient: Address::repeat_byte(0x01),
        relayer: Address::repeat_byte(0x02),
        fee: U256::from(2_000_000_000_000u64),
    };
    let mut g = c.benchmark_group("pool");
    g.sample_size(10);
    g.bench_function("tree of 250 notes", |b| {
        b.iter(|| zk::tree_of(&leaves).root())
    });
    g.bench_function("prove (depth 20, full pool)", |b| {
        b.iter(|| zk::prove(&notes[7], &leaves, payee).unwrap())
    });
    let (proof, public) = zk::prove(&notes[7], &leaves, payee).unwrap();
    g.bench_function("verify", |b| {
        b.iter(|| assert!(zk::verify(&proof, &public)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
