//! The ledger's invariants under random operation sequences (proptest,
//! against a real SQLite store) and under 1,000 concurrent transfers
//! (SQLite and Postgres): postings sum to zero per entry and overall,
//! every cached balance is the sum of its postings, no user balance goes
//! negative, a nonce is spent once, a deposit is credited once per
//! transaction.

use super::entries::{self, Bounds};
use crate::ledger::{user_account, Ledger, Posted, MIGRATIONS};
use proptest::prelude::*;
use relay_store::Store;
use std::collections::{BTreeMap, BTreeSet};

const USERS: usize = 4;
const MAX_BALANCE: i64 = 200;
const CAP: i64 = 300;

fn user(i: usize) -> String {
    format!("0x{:040x}", i + 1)
}

fn bounds(cap: Option<i64>) -> Bounds {
    Bounds {
        max_balance: MAX_BALANCE,
        liabilities_cap: cap,
        now_ms: 1,
    }
}

/// The ledger over `s`, its migrations applied.
async fn ledger(s: Store) -> Ledger {
    s.migrate(MIGRATIONS).await.unwrap();
    s.into()
}

async fn sqlite() -> (tempfile::TempDir, Ledger) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("l.db").display());
    let s = Store::connect(&url).await.unwrap();
    (dir, ledger(s).await)
}

#[derive(Clone, Debug)]
enum Op {
    Deposit {
        who: usize,
        tx: u8,
        amount: i64,
    },
    Transfer {
        from: usize,
        to: usize,
        amount: i64,
        nonce: u64,
    },
    Withdraw {
        who: usize,
        amount: i64,
        cost: i64,
        nonce: u64,
    },
    Reverse {
        nth: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    // user index USERS is never enrolled
    prop_oneof![
        (0..=USERS, 0u8..6, 1i64..120).prop_map(|(who, tx, amount)| Op::Deposit {
            who,
            tx,
            amount
        }),
        (0..=USERS, 0..=USERS, 1i64..150, 0u64..8).prop_map(|(from, to, amount, nonce)| {
            Op::Transfer {
                from,
                to,
                amount,
                nonce,
            }
        }),
        (0..=USERS, 1i64..100, 0i64..5, 0u64..8).prop_map(|(who, amount, cost, nonce)| {
            Op::Withdraw {
                who,
                amount,
                cost,
                nonce,
            }
        }),
        (0usize..4).prop_map(|nth| Op::Reverse { nth }),
    ]
}

/// What the ledger should hold.
#[derive(Default)]
struct Model {
    balance: BTreeMap<usize, i64>,
    nonce: BTreeMap<usize, u64>,
    keys: BTreeSet<String>,
    withdrawals: Vec<(String, usize, i64)>,
}

impl Model {
    fn liabilities(&self) -> i64 {
        self.balance.values().sum()
    }
    fn enrolled(&self, u: usize) -> bool {
        u < USERS
    }
    fn bal(&self, u: usize) -> i64 {
        self.balance.get(&u).copied().unwrap_or(0)
    }
    fn nonce_ok(&self, u: usize, n: u64) -> bool {
        n > self.nonce.get(&u).copied().unwrap_or(0)
    }
}

/// Applies `op` to the store and the model; asserts they agree.
async fn step(s: &Ledger, m: &mut Model, op: &Op) {
    match *op {
        Op::Deposit { who, tx, amount } => {
            let e = entries::deposit(
                &user(who),
                (8453, &format!("0x{tx:064x}")),
                amount,
                bounds(Some(CAP)),
            );
            let got = s.post_entry(&e).await.unwrap();
            let dup = m.keys.contains(&e.request_key);
            let ok = !dup
                && m.liabilities() + amount <= CAP
                && m.enrolled(who)
                && m.bal(who) + amount <= MAX_BALANCE;
            check(&got, dup, ok, op);
            if ok {
                m.keys.insert(e.request_key);
                *m.balance.entry(who).or_default() += amount;
            }
        }
        Op::Transfer {
            from,
            to,
            amount,
            nonce,
        } => {
            if from == to {
                return;
            }
            let e = entries::transfer(&user(from), &user(to), amount, nonce, bounds(None));
            let got = s.post_entry(&e).await.unwrap();
            let dup = m.keys.contains(&e.request_key);
            let ok = !dup
                && m.enrolled(from)
                && m.enrolled(to)
                && m.nonce_ok(from, nonce)
                && m.bal(from) >= amount
                && m.bal(to) + amount <= MAX_BALANCE;
            check(&got, dup, ok, op);
            if ok {
                m.keys.insert(e.request_key);
                *m.balance.entry(from).or_default() -= amount;
                *m.balance.entry(to).or_default() += amount;
                m.nonce.insert(from, nonce);
            }
        }
        Op::Withdraw {
            who,
            amount,
            cost,
            nonce,
        } => {
            let e = entries::withdraw(&user(who), (42161, cost.min(amount)), amount, nonce, 1);
            let got = s.post_entry(&e).await.unwrap();
            let dup = m.keys.contains(&e.request_key);
            let ok = !dup && m.enrolled(who) && m.nonce_ok(who, nonce) && m.bal(who) >= amount;
            check(&got, dup, ok, op);
            if ok {
                m.keys.insert(e.request_key);
                *m.balance.entry(who).or_default() -= amount;
                m.nonce.insert(who, nonce);
                m.withdrawals.push((e.id, who, amount));
            }
        }
        Op::Reverse { nth } => {
            let Some((id, who, amount)) = m.withdrawals.get(nth).cloned() else {
                return;
            };
            let of = s.ledger_entry(&id).await.unwrap().unwrap();
            let e = entries::reversal(&of, "test", 1);
            let got = s.post_entry(&e).await.unwrap();
            let dup = m.keys.contains(&e.request_key);
            check(&got, dup, !dup, op);
            if !dup {
                m.keys.insert(e.request_key);
                *m.balance.entry(who).or_default() += amount;
            }
        }
    }
}

fn check(got: &Posted, dup: bool, ok: bool, op: &Op) {
    match got {
        Posted::Duplicate(_) => assert!(dup, "{op:?}: a duplicate the model did not expect"),
        Posted::New(_) => assert!(ok, "{op:?}: written, the model refuses it"),
        Posted::Refused(r) => assert!(!ok && !dup, "{op:?}: refused ({r:?}), the model accepts it"),
    }
}

async fn enrol_all(s: &Ledger) {
    for u in 0..USERS {
        assert!(s.enrol(&user(u), "v1", "0x", 1).await.unwrap());
    }
}

/// Found by the property test: a reversal lifts a balance above the cap
/// (it credits back without one), and that balance can still be spent.
#[tokio::test]
async fn a_balance_a_reversal_lifted_over_the_cap_can_be_spent() {
    let (_dir, s) = sqlite().await;
    enrol_all(&s).await;
    let mut m = Model::default();
    let ops = [
        Op::Deposit {
            who: 0,
            tx: 0,
            amount: 110,
        },
        Op::Withdraw {
            who: 0,
            amount: 20,
            cost: 1,
            nonce: 1,
        },
        Op::Deposit {
            who: 0,
            tx: 1,
            amount: 110,
        },
        Op::Reverse { nth: 0 },
        Op::Transfer {
            from: 0,
            to: 3,
            amount: 4,
            nonce: 2,
        },
        Op::Withdraw {
            who: 0,
            amount: 10,
            cost: 1,
            nonce: 3,
        },
    ];
    for op in &ops {
        step(&s, &mut m, op).await;
    }
    let a = s
        .ledger_account(&user_account(&user(0)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((a.balance, a.nonce), (206, 3));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_operation_sequences_keep_the_ledger_invariants(ops in prop::collection::vec(op(), 1..60)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (_dir, s) = sqlite().await;
            enrol_all(&s).await;
            let mut m = Model::default();
            for op in &ops {
                step(&s, &mut m, op).await;
            }
            let c = s.ledger_check().await.unwrap();
            assert!(c.ok(), "{c:?}");
            for u in 0..USERS {
                let a = s.ledger_account(&user_account(&user(u))).await.unwrap().unwrap();
                assert_eq!((a.balance, a.nonce), (m.bal(u), m.nonce.get(&u).copied().unwrap_or(0)));
            }
            assert!(s.ledger_account(&user_account(&user(USERS))).await.unwrap().is_none());
        });
    }
}

/// 1,000 transfers at once among ten accounts (each sent twice for a
/// tenth of them): every accepted key once, nothing negative, every
/// balance the sum of its postings, the total unchanged.
async fn a_thousand_concurrent_transfers(s: Ledger) {
    const N: usize = 10;
    const EACH: i64 = 100;
    for u in 0..N {
        s.enrol(&user(u), "v1", "0x", 1).await.unwrap();
        let e = entries::deposit(
            &user(u),
            (8453, &format!("0x{u:064x}")),
            EACH,
            Bounds {
                max_balance: i64::MAX,
                liabilities_cap: None,
                now_ms: 1,
            },
        );
        assert!(matches!(s.post_entry(&e).await.unwrap(), Posted::New(_)));
    }
    // 900 distinct (from, nonce) transfers and 100 repeats of some of them
    let mut tasks = Vec::new();
    for j in 0..1_000u64 {
        let i = if j < 900 { j } else { (j - 900) * 9 };
        let s = s.clone();
        let from = (i as usize * 7) % N;
        let to = (from + 1 + (i as usize % (N - 1))) % N;
        let nonce = 1 + i / N as u64;
        let amount = 1 + (i as i64 * 13) % 40;
        tasks.push(tokio::spawn(async move {
            let e = entries::transfer(
                &user(from),
                &user(to),
                amount,
                nonce,
                Bounds {
                    max_balance: i64::MAX,
                    liabilities_cap: None,
                    now_ms: 1,
                },
            );
            (e.request_key.clone(), s.post_entry(&e).await.unwrap())
        }));
    }
    let mut written: BTreeMap<String, usize> = BTreeMap::new();
    for t in tasks {
        let (key, got) = t.await.unwrap();
        if matches!(got, Posted::New(_)) {
            *written.entry(key).or_default() += 1;
        }
    }
    assert!(written.values().all(|n| *n == 1), "a key written twice");
    assert!(
        written.len() > 10,
        "some transfers went through: {}",
        written.len()
    );
    let c = s.ledger_check().await.unwrap();
    assert!(c.ok(), "{c:?}");
    let total: i64 = s
        .ledger_accounts("user:")
        .await
        .unwrap()
        .iter()
        .map(|a| a.balance)
        .sum();
    assert_eq!(total, N as i64 * EACH);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_thousand_concurrent_transfers_on_sqlite() {
    let (_dir, s) = sqlite().await;
    a_thousand_concurrent_transfers(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_thousand_concurrent_transfers_on_postgres() {
    let url = relay_fixtures::postgres_database();
    a_thousand_concurrent_transfers(ledger(Store::connect(&url).await.unwrap()).await).await;
}
