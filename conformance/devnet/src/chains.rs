//! Which chains the devnet can run, and their CCTP domain ids.

/// The gasless set: every chain id the devnet accepts.
pub const GASLESS_CHAIN_IDS: [u64; 22] = [
    1, 10, 56, 100, 130, 137, 146, 480, 999, 1135, 1868, 4663, 5000, 8453, 33139, 34443, 42161,
    43114, 57073, 59144, 81457, 7_777_777,
];

/// The chains started when the configuration names none: Ethereum, Base, Arbitrum, OP.
pub const DEFAULT_CHAIN_IDS: [u64; 4] = [1, 8453, 42161, 10];

/// Circle's CCTP domain ids for the seven CCTP chains, as (chain id, domain).
pub const CCTP_DOMAINS: [(u64, u32); 7] = [
    (1, 0),     // Ethereum
    (43114, 1), // Avalanche
    (10, 2),    // OP
    (42161, 3), // Arbitrum
    (8453, 6),  // Base
    (137, 7),   // Polygon
    (130, 10),  // Unichain
];

/// The native asset of `chain_id` and its devnet price in USD with 8 decimals (the price
/// its native-asset feed starts at; the host's built-in defaults use the same figures).
pub fn native_asset(chain_id: u64) -> (&'static str, i64) {
    const USD: i64 = 100_000_000;
    match chain_id {
        56 => ("BNB", 600 * USD),
        100 => ("XDAI", USD),
        137 => ("POL", USD / 2),
        146 => ("S", USD / 2),
        999 => ("HYPE", 20 * USD),
        5000 => ("MNT", USD),
        33139 => ("APE", USD),
        43114 => ("AVAX", 30 * USD),
        _ => ("ETH", 3_000 * USD),
    }
}

/// Whether `chain_id` is in the gasless set.
pub fn is_gasless(chain_id: u64) -> bool {
    GASLESS_CHAIN_IDS.contains(&chain_id)
}

/// Circle's CCTP domain id for `chain_id`, if it is one of the CCTP chains.
pub fn cctp_domain(chain_id: u64) -> Option<u32> {
    CCTP_DOMAINS
        .iter()
        .find(|(id, _)| *id == chain_id)
        .map(|(_, domain)| *domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cctp_chains_are_all_gasless() {
        assert!(CCTP_DOMAINS.iter().all(|(id, _)| is_gasless(*id)));
        assert!(DEFAULT_CHAIN_IDS.iter().all(|id| is_gasless(*id)));
    }

    #[test]
    fn cctp_domains_follow_circle() {
        assert_eq!(cctp_domain(1), Some(0));
        assert_eq!(cctp_domain(8453), Some(6));
        assert_eq!(cctp_domain(130), Some(10));
        assert_eq!(cctp_domain(56), None);
    }
}
