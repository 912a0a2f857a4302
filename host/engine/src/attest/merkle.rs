//! The Merkle tree a batch of attestations is signed under: keccak-256 of
//! each sorted pair, as OpenZeppelin's `MerkleProof.verify` and
//! `SimpleMerkleTree` hash it, so a proof checks on chain and in any
//! client without knowing the leaf's position. A level's odd last node
//! moves up unpaired.

use alloy::primitives::{keccak256, B256};

/// keccak-256 of the two nodes, the smaller first.
pub fn node(a: B256, b: B256) -> B256 {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    let mut both = [0u8; 64];
    both[..32].copy_from_slice(low.as_slice());
    both[32..].copy_from_slice(high.as_slice());
    keccak256(both)
}

/// The root `leaf` and its `proof` (siblings from the leaf up) hash to.
pub fn root(leaf: B256, proof: &[B256]) -> B256 {
    proof.iter().fold(leaf, |acc, sibling| node(acc, *sibling))
}

/// The root over `leaves` and each leaf's proof, in the leaves' order.
/// One leaf is its own root with an empty proof.
pub fn tree(leaves: &[B256]) -> (B256, Vec<Vec<B256>>) {
    let mut proofs = vec![Vec::new(); leaves.len()];
    let mut positions: Vec<usize> = (0..leaves.len()).collect();
    let mut level = leaves.to_vec();
    while level.len() > 1 {
        for (proof, at) in proofs.iter_mut().zip(positions.iter_mut()) {
            if let Some(sibling) = level.get(*at ^ 1) {
                proof.push(*sibling);
            }
            *at /= 2;
        }
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [a, b] => node(*a, *b),
                [a] => *a,
                _ => unreachable!("chunks(2) yields one or two"),
            })
            .collect();
    }
    (level.first().copied().unwrap_or_default(), proofs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaf(i: u64) -> B256 {
        keccak256(i.to_be_bytes())
    }

    #[test]
    fn one_leaf_is_its_own_root() {
        assert_eq!(tree(&[leaf(7)]), (leaf(7), vec![vec![]]));
    }

    #[test]
    fn three_leaves_hash_as_sorted_pairs_with_the_odd_one_raised() {
        let (l0, l1, l2) = (leaf(0), leaf(1), leaf(2));
        let (root_, proofs) = tree(&[l0, l1, l2]);
        assert_eq!(root_, node(node(l0, l1), l2));
        assert_eq!(proofs, vec![vec![l1, l2], vec![l0, l2], vec![node(l0, l1)]]);
        assert_eq!(
            node(l0, l1),
            node(l1, l0),
            "a pair hashes the same either way"
        );
    }

    proptest! {
        #[test]
        fn every_leaf_proves_to_the_root_and_no_other_leaf_does(n in 1usize..40, other in 1000u64..2000) {
            let leaves: Vec<B256> = (0..n as u64).map(leaf).collect();
            let (r, proofs) = tree(&leaves);
            for (l, p) in leaves.iter().zip(&proofs) {
                prop_assert_eq!(root(*l, p), r);
                prop_assert_ne!(root(leaf(other), p), r);
                prop_assert!(p.len() <= (usize::BITS - (n - 1).leading_zeros()) as usize);
            }
        }
    }
}
