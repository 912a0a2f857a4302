//! The devnet contracts: their compiled artifacts, typed bindings, and EIP-712 helpers.
//!
//! The artifacts in `conformance/devnet/artifacts/` are compiled from
//! `conformance/devnet/contracts/*.sol` by `contracts/build.mjs`; the bindings below are
//! generated from the same JSON files, so the ABI has one source of truth.

// The bindings are generated code; their items are documented by their Solidity signatures.
#![allow(missing_docs, clippy::too_many_arguments)]

use alloy::{
    primitives::{address, Address, B256, U256},
    signers::{local::PrivateKeySigner, SignerSync},
    sol,
    sol_types::{eip712_domain, Eip712Domain, SolStruct},
};

/// The canonical Permit2 address; the devnet puts its Permit2-compatible code here.
pub const PERMIT2_ADDRESS: Address = address!("0x000000000022D473030F116dDEE9F6B43aC78BA3");

/// Where the devnet puts the relay's EIP-7702 batch executor (`contracts/RelayDelegate.sol`)
/// on every chain: the same address everywhere, like Permit2.
pub const DELEGATE_ADDRESS: Address = address!("0x0000000000000000000000000000000000007702");

/// The raw artifact JSON of every devnet contract, as (contract name, JSON).
pub const ARTIFACTS: [(&str, &str); 15] = [
    ("Permit2", include_str!("../artifacts/Permit2.json")),
    ("TestToken", include_str!("../artifacts/TestToken.json")),
    (
        "MessageTransmitter",
        include_str!("../artifacts/MessageTransmitter.json"),
    ),
    (
        "TokenMessenger",
        include_str!("../artifacts/TokenMessenger.json"),
    ),
    (
        "BridgeDeposit",
        include_str!("../artifacts/BridgeDeposit.json"),
    ),
    ("Membership", include_str!("../artifacts/Membership.json")),
    ("RelayRouter", include_str!("../artifacts/RelayRouter.json")),
    ("TestWallet", include_str!("../artifacts/TestWallet.json")),
    ("PriceFeed", include_str!("../artifacts/PriceFeed.json")),
    (
        "RelayDelegate",
        include_str!("../artifacts/RelayDelegate.json"),
    ),
    ("YieldVault", include_str!("../artifacts/YieldVault.json")),
    ("PoseidonT3", include_str!("../artifacts/PoseidonT3.json")),
    (
        "PoolVerifier",
        include_str!("../artifacts/PoolVerifier.json"),
    ),
    ("PrivacyPool", include_str!("../artifacts/PrivacyPool.json")),
    (
        "RelayerAccount",
        include_str!("../artifacts/RelayerAccount.json"),
    ),
];

/// Where the devnet puts the relayer's own account code for a key pool
/// (`contracts/RelayerAccount.sol`) on every chain: the same address everywhere.
pub const RELAYER_ACCOUNT_ADDRESS: Address = address!("0x0000000000000000000000000000000000007703");

/// Where PoseidonT3 (npm `poseidon-solidity`) lives: its deterministic deployment address on
/// every chain; the devnet puts the library's code there and `PrivacyPool` is linked to it.
pub const POSEIDON_T3_ADDRESS: Address = address!("0x3333333C0A88F9BE4fd23ed0536F9B6c427e3B93");

sol!(
    /// The Permit2-compatible SignatureTransfer (`contracts/Permit2.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    Permit2,
    "artifacts/Permit2.json"
);
sol!(
    /// The ERC-20 + EIP-2612 test token (`contracts/TestToken.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    TestToken,
    "artifacts/TestToken.json"
);
sol!(
    /// The CCTP-style message transmitter (`contracts/Cctp.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    MessageTransmitter,
    "artifacts/MessageTransmitter.json"
);
sol!(
    /// The CCTP-style token messenger (`contracts/Cctp.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    TokenMessenger,
    "artifacts/TokenMessenger.json"
);
sol!(
    /// The aggregator simulators' deposit and payout contract (`contracts/BridgeDeposit.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    BridgeDeposit,
    "artifacts/BridgeDeposit.json"
);
sol!(
    /// The ERC-721 membership collection (`contracts/Membership.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    Membership,
    "artifacts/Membership.json"
);
sol!(
    /// The relay router: one signed intent into one rail deposit (`contracts/RelayRouter.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    RelayRouter,
    "artifacts/RelayRouter.json"
);
sol!(
    /// The ERC-1271 smart-contract wallet for tests (`contracts/TestWallet.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    TestWallet,
    "artifacts/TestWallet.json"
);
sol!(
    /// DEVNET ONLY: a Chainlink-style `AggregatorV3Interface` price feed whose deployer
    /// moves the answer (`contracts/PriceFeed.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    PriceFeed,
    "artifacts/PriceFeed.json"
);

sol!(
    /// The relay's EIP-7702 batch executor: ERC-7821 `execute` and the EIP-712-signed
    /// `executeSigned` (`contracts/RelayDelegate.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    RelayDelegate,
    "artifacts/RelayDelegate.json"
);

sol!(
    /// The relayer's EIP-7702 account code for a key pool: executors `run` calls as the
    /// relayer's primary address (`contracts/RelayerAccount.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    RelayerAccount,
    "artifacts/RelayerAccount.json"
);

sol!(
    /// DEVNET ONLY: OpenZeppelin's ERC-4626 over the devnet USDC whose share price rises
    /// (`contracts/YieldVault.sol`): the yield account's token (spec §4.6).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    YieldVault,
    "artifacts/YieldVault.json"
);

sol!(
    /// poseidon-solidity's Poseidon over BN254, two inputs (circomlib's parameters).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    PoseidonT3,
    "artifacts/PoseidonT3.json"
);

sol!(
    /// The privacy pool's Groth16 verifier (Semaphore depth 20), rendered from snarkjs'
    /// template (`contracts/pool-verifier.mjs`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    PoolVerifier,
    "artifacts/PoolVerifier.json"
);

sol!(
    /// BETA AND UNAUDITED: the privacy pool (`contracts/PrivacyPool.sol`).
    #[sol(rpc)]
    #[derive(Debug, PartialEq, Eq)]
    PrivacyPool,
    "artifacts/PrivacyPool.json"
);

/// The structs that owners sign (EIP-712), with the canonical type names.
pub mod eip712 {
    #![allow(missing_docs)]
    use alloy::sol;

    sol! {
        /// Permit2: a token and an amount.
        #[derive(Debug, Default, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// Permit2: the signed form of a single-token SignatureTransfer.
        #[derive(Debug, Default, PartialEq, Eq)]
        struct PermitTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
        }

        /// Permit2: the signed form of a batch SignatureTransfer.
        #[derive(Debug, Default, PartialEq, Eq)]
        struct PermitBatchTransferFrom {
            TokenPermissions[] permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
        }

        /// EIP-3009 transfer authorization (x402's `exact` EVM scheme).
        #[derive(Debug, Default, PartialEq, Eq)]
        struct TransferWithAuthorization {
            address from;
            address to;
            uint256 value;
            uint256 validAfter;
            uint256 validBefore;
            bytes32 nonce;
        }

        /// EIP-2612 permit.
        #[derive(Debug, Default, PartialEq, Eq)]
        struct Permit {
            address owner;
            address spender;
            uint256 value;
            uint256 nonce;
            uint256 deadline;
        }
    }
}

/// The Permit2 EIP-712 domain on `chain_id` (name "Permit2", no version).
pub fn permit2_domain(chain_id: u64) -> Eip712Domain {
    eip712_domain! {
        name: "Permit2",
        chain_id: chain_id,
        verifying_contract: PERMIT2_ADDRESS,
    }
}

/// The `RelayRouter` EIP-712 domain on `chain_id` (name "RelayRouter", version "3.1").
pub fn router_domain(chain_id: u64, router: Address) -> Eip712Domain {
    eip712_domain! {
        name: "RelayRouter",
        version: "3.1",
        chain_id: chain_id,
        verifying_contract: router,
    }
}

/// The EIP-2612 domain of a devnet token (name = token name, version "2", like USDC).
pub fn token_domain(name: &'static str, chain_id: u64, token: Address) -> Eip712Domain {
    eip712_domain! {
        name: name,
        version: "2",
        chain_id: chain_id,
        verifying_contract: token,
    }
}

/// Signs any EIP-712 struct under `domain`; returns the 65-byte (r, s, v) signature.
pub fn sign_typed<T: SolStruct>(
    signer: &PrivateKeySigner,
    value: &T,
    domain: &Eip712Domain,
) -> [u8; 65] {
    let hash = value.eip712_signing_hash(domain);
    sign_hash(signer, hash)
}

/// What one Permit2 `PermitTransferFrom` signature grants: `amount` of
/// `token` on `chain` to `spender`, under `nonce`, until `deadline` (unix
/// seconds).
#[derive(Clone, Copy, Debug)]
pub struct PermitGrant {
    /// The chain whose Permit2 domain it is signed under.
    pub chain: u64,
    /// The token.
    pub token: Address,
    /// Smallest units.
    pub amount: U256,
    /// Who may pull it (the relayer).
    pub spender: Address,
    /// Permit2's unordered nonce.
    pub nonce: U256,
    /// Unix seconds.
    pub deadline: u64,
}

impl PermitGrant {
    /// `owner`'s signature over the grant, as the execute API's `permit2`
    /// object: `{owner, permitted: {token, amount}, nonce, deadline,
    /// signature}`.
    pub fn signed_by(&self, owner: &PrivateKeySigner) -> serde_json::Value {
        let msg = eip712::PermitTransferFrom {
            permitted: eip712::TokenPermissions {
                token: self.token,
                amount: self.amount,
            },
            spender: self.spender,
            nonce: self.nonce,
            deadline: U256::from(self.deadline),
        };
        let sig = sign_typed(owner, &msg, &permit2_domain(self.chain));
        serde_json::json!({
            "owner": owner.address(),
            "permitted": {"token": self.token, "amount": self.amount.to_string()},
            "nonce": self.nonce.to_string(),
            "deadline": self.deadline.to_string(),
            "signature": alloy::primitives::hex::encode_prefixed(sig),
        })
    }
}

/// Signs a 32-byte digest as is (no EIP-191 prefix); returns (r, s, v) with v in {27, 28}.
pub fn sign_hash(signer: &PrivateKeySigner, hash: B256) -> [u8; 65] {
    signer
        .sign_hash_sync(&hash)
        .expect("local signing does not fail")
        .as_bytes()
}

/// Converts a 65-byte (r, s, v) signature into the 64-byte EIP-2098 form (r, vs).
pub fn compact_signature(sig: &[u8; 65]) -> [u8; 64] {
    let mut out = [0u8; 64];
    out.copy_from_slice(&sig[..64]);
    if sig[64] == 28 || sig[64] == 1 {
        out[32] |= 0x80;
    }
    out
}

/// Left-pads an address into the `bytes32` form CCTP uses for addresses.
pub fn address_to_bytes32(addr: Address) -> B256 {
    addr.into_word()
}

/// The CCTP attestation for `message`: the attester's signature over keccak256(message).
pub fn attest_cctp_message(attester: &PrivateKeySigner, message: &[u8]) -> [u8; 65] {
    sign_hash(attester, alloy::primitives::keccak256(message))
}

/// A far-future deadline for tests and examples (`u64::MAX` seconds would overflow JS tools).
pub fn far_deadline() -> U256 {
    U256::from(4_102_444_800u64) // 2100-01-01
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn permit2_typehashes_are_canonical() {
        assert_eq!(
            eip712::PermitTransferFrom::eip712_encode_type(),
            "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)\
             TokenPermissions(address token,uint256 amount)"
        );
        assert_eq!(
            eip712::PermitTransferFrom::eip712_type_hash(&Default::default()),
            keccak256(eip712::PermitTransferFrom::eip712_encode_type().as_bytes())
        );
    }

    #[test]
    fn artifacts_match_the_bindings() {
        for (name, json) in ARTIFACTS {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(v["contractName"], name);
            assert!(v["deployedBytecode"].as_str().unwrap().len() > 2, "{name}");
        }
        let v: serde_json::Value = serde_json::from_str(ARTIFACTS[0].1).unwrap();
        let deployed =
            alloy::primitives::hex::decode(v["deployedBytecode"].as_str().unwrap()).unwrap();
        assert_eq!(Permit2::DEPLOYED_BYTECODE.as_ref(), deployed.as_slice());
    }

    #[test]
    fn compact_signature_round_trips_v() {
        let signer = crate::keys::anvil_signer(0);
        let sig = sign_hash(&signer, keccak256(b"x"));
        let compact = compact_signature(&sig);
        assert_eq!(compact[..32], sig[..32]);
        assert_eq!(compact[32] & 0x80 != 0, sig[64] == 28);
        assert_eq!(compact[32] & 0x7f, sig[32] & 0x7f);
    }
}
