//! Ranking (DESIGN "The engine", spec §4.3): rails that answered with a
//! viable price come first, by **net destination output after every fee**,
//! highest first; ties go to the faster rail, then to the rail id so the
//! order is deterministic. Rails that did not answer (error, deadline,
//! quarantine) or whose fees swallow the output come after, by rail id —
//! reported as not answering, never as beaten.

use relay_plugin_api::Amount;
use std::cmp::Ordering;

/// What ranking looks at for one rail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankKey<'a> {
    /// Net output after every fee; `None` when the rail did not answer
    /// with a viable price.
    pub net: Option<Amount>,
    /// Expected duration, seconds.
    pub duration_sec: u32,
    /// Rail id.
    pub rail: &'a str,
}

/// The ranking order: answered before not answering; net descending;
/// duration ascending; rail id ascending.
pub fn order(a: &RankKey<'_>, b: &RankKey<'_>) -> Ordering {
    match (a.net, b.net) {
        (Some(x), Some(y)) => y
            .cmp(&x)
            .then(a.duration_sec.cmp(&b.duration_sec))
            .then(a.rail.cmp(b.rail)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.rail.cmp(b.rail),
    }
}

/// Sorts `items` into ranking order.
pub fn rank<T>(items: &mut [T], key: impl Fn(&T) -> RankKey<'_>) {
    items.sort_by(|a, b| order(&key(a), &key(b)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    struct Item {
        rail: String,
        net: Option<u128>,
        duration: u32,
    }

    fn key(i: &Item) -> RankKey<'_> {
        RankKey {
            net: i.net.map(Amount::from_u128),
            duration_sec: i.duration,
            rail: &i.rail,
        }
    }

    #[test]
    fn a_silent_rail_is_never_ranked_above_one_that_answered() {
        let mut v = vec![
            Item {
                rail: "a".into(),
                net: None,
                duration: 1,
            },
            Item {
                rail: "b".into(),
                net: Some(1),
                duration: 900,
            },
            Item {
                rail: "c".into(),
                net: Some(5),
                duration: 60,
            },
            Item {
                rail: "d".into(),
                net: Some(5),
                duration: 15,
            },
        ];
        rank(&mut v, key);
        let order: Vec<&str> = v.iter().map(|i| i.rail.as_str()).collect();
        assert_eq!(order, ["d", "c", "b", "a"]);
    }

    proptest! {
        #[test]
        fn ranking_is_by_net_output_and_independent_of_input_order(
            items in proptest::collection::vec((any::<Option<u128>>(), 0u32..1000), 0..12),
            seed in any::<u64>(),
        ) {
            let items: Vec<Item> = items.into_iter().enumerate()
                .map(|(i, (net, duration))| Item { rail: format!("r{i}"), net, duration })
                .collect();
            let mut a = items.clone();
            rank(&mut a, key);
            let mut b = items.clone();
            let n = b.len().max(1);
            b.rotate_left((seed as usize) % n);
            rank(&mut b, key);
            let ids = |v: &[Item]| v.iter().map(|i| i.rail.clone()).collect::<Vec<_>>();
            prop_assert_eq!(ids(&a), ids(&b));
            for w in a.windows(2) {
                match (w[0].net, w[1].net) {
                    (Some(x), Some(y)) => prop_assert!(x >= y),
                    (None, Some(_)) => prop_assert!(false, "silent rail ranked first"),
                    _ => {}
                }
            }
            let best = items.iter().filter_map(|i| i.net).max();
            prop_assert_eq!(a.first().and_then(|i| i.net), best);
        }
    }
}
