//! DEVNET ONLY — publicly known, never use with real funds.
//!
//! Every key here is public: anvil's ten accounts come from the well-known mnemonic
//! `test test test test test test test test test test test junk`, and the devnet's own
//! roles (deployer, bridge operator, CCTP attester, relayer) are keccak256 of a fixed,
//! published string. Anyone can take funds sent to these addresses on a real network.

use alloy::{
    primitives::{keccak256, Address},
    signers::local::PrivateKeySigner,
};

/// The mnemonic anvil derives its default accounts from (DEVNET ONLY).
pub const ANVIL_MNEMONIC: &str = "test test test test test test test test test test test junk";

/// The private keys of anvil's ten default accounts, index 0..9 (DEVNET ONLY).
pub const ANVIL_PRIVATE_KEYS: [&str; 10] = [
    "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
    "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
    "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
    "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
    "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
    "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
    "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
    "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
    "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
];

/// The seed string of the deployer key (DEVNET ONLY): deploys and administers every contract.
pub const DEPLOYER_SEED: &str = "relay devnet deployer";
/// The seed string of the bridge operator key (DEVNET ONLY): owns `BridgeDeposit`, so the
/// aggregator simulators use it to pay out and refund.
pub const BRIDGE_OPERATOR_SEED: &str = "relay devnet bridge operator";
/// The seed string of the CCTP attester key (DEVNET ONLY): signs burn messages.
pub const ATTESTER_SEED: &str = "relay devnet cctp attester";
/// The seed string of the default relayer key (DEVNET ONLY).
pub const RELAYER_SEED: &str = "relay devnet relayer";
/// The seed string of the yield vault's deployer (DEVNET ONLY): a key used for nothing else,
/// so the vault is its first contract and has the same address on every chain.
pub const VAULT_DEPLOYER_SEED: &str = "relay devnet yield vault deployer";
/// The seed string of the privacy pool's deployer (DEVNET ONLY): a key used for nothing else.
pub const POOL_DEPLOYER_SEED: &str = "relay devnet privacy pool deployer";

/// anvil's default account `index` (0..=9) as a signer (DEVNET ONLY).
///
/// # Panics
/// If `index` is 10 or more.
pub fn anvil_signer(index: usize) -> PrivateKeySigner {
    ANVIL_PRIVATE_KEYS[index]
        .parse()
        .expect("the anvil keys are valid")
}

/// The address of anvil's default account `index` (0..=9).
pub fn anvil_address(index: usize) -> Address {
    anvil_signer(index).address()
}

/// The signer whose private key is keccak256(`seed`) (DEVNET ONLY).
pub fn seeded_signer(seed: &str) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&keccak256(seed.as_bytes()))
        .expect("keccak256 of a seed is a valid secp256k1 key")
}

/// The deployer (DEVNET ONLY).
pub fn deployer() -> PrivateKeySigner {
    seeded_signer(DEPLOYER_SEED)
}

/// The bridge operator, owner of `BridgeDeposit` (DEVNET ONLY).
pub fn bridge_operator() -> PrivateKeySigner {
    seeded_signer(BRIDGE_OPERATOR_SEED)
}

/// The CCTP attester (DEVNET ONLY).
pub fn attester() -> PrivateKeySigner {
    seeded_signer(ATTESTER_SEED)
}

/// The default relayer (DEVNET ONLY).
pub fn relayer() -> PrivateKeySigner {
    seeded_signer(RELAYER_SEED)
}

/// How many relayer pool keys the devnet funds ([`relayer_pool`]).
pub const RELAYER_POOL_KEYS: usize = 8;

/// Relayer pool key `index` (0..[`RELAYER_POOL_KEYS`]; DEVNET ONLY): the executors a host
/// with a relayer key pool sends through (`RELAY_RELAYER_POOL_KEYS`), funded with gas on every
/// chain.
pub fn relayer_pool(index: usize) -> PrivateKeySigner {
    seeded_signer(&format!("relay devnet relayer pool {index}"))
}

/// The yield vault's deployer and owner (DEVNET ONLY).
pub fn vault_deployer() -> PrivateKeySigner {
    seeded_signer(VAULT_DEPLOYER_SEED)
}

/// The privacy pool's deployer (DEVNET ONLY; the pool has no owner).
pub fn pool_deployer() -> PrivateKeySigner {
    seeded_signer(POOL_DEPLOYER_SEED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anvil_account_zero_is_the_well_known_address() {
        let want: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
            .parse()
            .unwrap();
        assert_eq!(anvil_address(0), want);
    }

    #[test]
    fn role_keys_are_distinct() {
        let roles = [
            deployer(),
            bridge_operator(),
            attester(),
            relayer(),
            vault_deployer(),
        ]
        .map(|s| s.address());
        for (i, a) in roles.iter().enumerate() {
            assert!(roles[i + 1..].iter().all(|b| a != b));
            assert!((0..10).all(|k| anvil_address(k) != *a));
        }
    }
}
