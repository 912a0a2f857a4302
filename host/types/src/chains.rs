//! Facts about the gasless EVM set.

/// The 22 EVM chains of the gasless set (spec §2.3).
pub const GASLESS_CHAINS: [u64; 22] = [
    1, 10, 56, 100, 130, 137, 146, 480, 999, 1135, 1868, 4663, 5000, 8453, 33139, 34443, 42161,
    43114, 57073, 59144, 81457, 7777777,
];

/// The common name of a chain id.
pub fn well_known_name(id: u64) -> &'static str {
    match id {
        1 => "ethereum",
        10 => "optimism",
        56 => "bsc",
        100 => "gnosis",
        130 => "unichain",
        137 => "polygon",
        146 => "sonic",
        480 => "worldchain",
        999 => "hyperevm",
        1135 => "lisk",
        1868 => "soneium",
        4663 => "chain-4663",
        5000 => "mantle",
        8453 => "base",
        33139 => "apechain",
        34443 => "mode",
        42161 => "arbitrum",
        43114 => "avalanche",
        57073 => "ink",
        59144 => "linea",
        81457 => "blast",
        7777777 => "zora",
        _ => "evm",
    }
}
