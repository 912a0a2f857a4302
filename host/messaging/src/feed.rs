//! Rows and their release (spec §4.10 `send`, `feed`; §8.2): a sent row
//! waits for the first slot of the 60,000 ms grid at least [`SETTLE_MS`]
//! after it arrived; a slot is released once, when its time has come (by
//! the release job, or by the first feed read after it), with the host's
//! cover decoys added and every waiting row numbered in a random order —
//! so the feed shows which minute a row was released in and nothing of
//! when within it, or in which order, rows arrived.
//!
//! Cover traffic: each slot gets a Poisson-distributed number of decoys
//! (mean `decoys_per_minute`), each sealed exactly as a real row is — a
//! fresh stealth handle and a real X-Wing HPKE envelope, to a throwaway
//! recipient whose keys are dropped — in the bucket a real row of the
//! same slot would be in, in the proportion the slot's real rows have.
//! Without a key nobody, the operator included, tells a decoy from a row.

use rand::Rng;
use relay_sealed::message::{self, Recipient, Row, CT_LENS};

/// The release grid, ms (spec §4.10, §8.2).
pub const GRID_MS: u64 = 60_000;

/// The least time between a row's arrival and its release: a write that
/// arrives just before a slot's time lands in the next slot rather than
/// racing the release.
pub const SETTLE_MS: u64 = 5_000;

/// A row's base64 `ct` length for the large bucket.
pub const LARGE_CT_B64: usize = CT_LENS[1].div_ceil(3) * 4;

/// The slot a row arriving at `now_ms` is released in.
pub fn release_at(now_ms: u64) -> u64 {
    (now_ms + SETTLE_MS).div_ceil(GRID_MS) * GRID_MS
}

/// The latest slot whose time has come at `now_ms`.
pub fn due_slot(now_ms: u64) -> u64 {
    now_ms / GRID_MS * GRID_MS
}

/// A Poisson draw with mean `lambda` (Knuth's method: fine for the small
/// means cover traffic uses; capped at 10 × the mean + 10).
pub fn poisson(lambda: f64, rng: &mut impl Rng) -> u64 {
    if lambda <= 0.0 {
        return 0;
    }
    let cap = (lambda * 10.0) as u64 + 10;
    let limit = (-lambda).exp();
    let mut product: f64 = rng.random();
    let mut k = 0;
    while product > limit && k < cap {
        product *= rng.random::<f64>();
        k += 1;
    }
    k
}

/// `n` decoy rows; each in the large bucket with probability
/// `large_share`.
pub fn decoys(n: u64, large_share: f64) -> Vec<Row> {
    let mut rng = rand::rng();
    (0..n)
        .filter_map(|_| {
            let len = match rng.random_bool(large_share.clamp(0.0, 1.0)) {
                true => 600 + rng.random_range(0..1_300),
                false => rng.random_range(1..500),
            };
            let filler: String = (0..len).map(|_| rng.random_range('a'..='z')).collect();
            let throwaway = Recipient::generate().mailbox();
            message::seal(&throwaway, &filler, 0).ok()?.pop()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_release_on_the_minute_grid_after_the_settle_time() {
        assert_eq!(release_at(0), GRID_MS);
        assert_eq!(release_at(GRID_MS - SETTLE_MS - 1), GRID_MS);
        assert_eq!(release_at(GRID_MS - SETTLE_MS), GRID_MS);
        assert_eq!(release_at(GRID_MS - SETTLE_MS + 1), 2 * GRID_MS);
        assert_eq!(release_at(GRID_MS), 2 * GRID_MS);
        for now in [0, 1, 59_999, 60_000, 1_764_480_012_345] {
            let r = release_at(now);
            assert_eq!(r % GRID_MS, 0);
            assert!(r >= now + SETTLE_MS && r < now + SETTLE_MS + GRID_MS);
            assert!(due_slot(now) <= now && due_slot(r) == r);
        }
    }

    #[test]
    fn poisson_draws_have_the_mean() {
        let mut rng = rand::rng();
        let n = 20_000;
        let sum: u64 = (0..n).map(|_| poisson(2.0, &mut rng)).sum();
        let mean = sum as f64 / n as f64;
        assert!((mean - 2.0).abs() < 0.1, "{mean}");
        assert_eq!(poisson(0.0, &mut rng), 0);
    }

    #[test]
    fn decoys_are_rows_of_the_two_sizes_that_open_for_nobody() {
        let rows = decoys(6, 0.5);
        assert_eq!(rows.len(), 6);
        let lens: Vec<usize> = rows.iter().map(|r| r.decode().unwrap().ct.len()).collect();
        assert!(lens.iter().all(|l| CT_LENS.contains(l)), "{lens:?}");
        assert!(decoys(4, 1.0).iter().all(|r| r.ct.len() == LARGE_CT_B64));
        assert!(decoys(4, 0.0).iter().all(|r| r.ct.len() < LARGE_CT_B64));
        let someone = Recipient::generate();
        assert!(rows.iter().all(|r| someone.open(r).is_none()));
    }
}
