//! The shared rate limits' cost (`[limits] backend = "store"`): one GCRA
//! count — the upsert every limited request makes — on SQLite (a file)
//! and on Postgres (the engine replicas share; the local test server),
//! against a warm cell and against a fresh client's.
//!
//! `cargo bench -p relay-store --bench limits`

// criterion's macros generate undocumented public items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use relay_store::Store;

fn counts(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite://{}?mode=rwc", dir.path().join("b.db").display());
    let stores = [
        ("sqlite", rt.block_on(Store::connect(&sqlite)).unwrap()),
        (
            "postgres",
            rt.block_on(Store::connect(&relay_fixtures::postgres_database()))
                .unwrap(),
        ),
    ];
    let mut g = c.benchmark_group("limits");
    g.sample_size(20);
    for (name, store) in &stores {
        let mut now = 0u64;
        g.bench_function(format!("{name}/warm_cell"), |b| {
            b.iter(|| {
                now += 1;
                rt.block_on(store.gcra("quote|ip:10.0.0.1", now, (1, 60_000)))
                    .unwrap()
            })
        });
        let mut n = 0u64;
        g.bench_function(format!("{name}/fresh_client"), |b| {
            b.iter(|| {
                n += 1;
                rt.block_on(store.gcra(&format!("quote|ip:{n}"), 0, (1_500, 60_000)))
                    .unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, counts);
criterion_main!(benches);
