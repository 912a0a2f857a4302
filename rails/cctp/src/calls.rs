//! The two CCTP v2 calls the relayer makes, ABI-encoded (Circle, "Contract
//! interfaces", TokenMessengerV2 / MessageTransmitterV2):
//!
//! - `depositForBurn(uint256 amount, uint32 destinationDomain, bytes32
//!   mintRecipient, address burnToken, bytes32 destinationCaller, uint256
//!   maxFee, uint32 minFinalityThreshold)` on the source TokenMessengerV2;
//! - `receiveMessage(bytes message, bytes attestation)` on the destination
//!   MessageTransmitterV2.

use relay_plugin_api::{Amount, U256};
use relay_rail_sdk::evm_abi::{address_bytes, address_word, encode_call, AbiValue};

/// A standard transfer: attested at hard finality, no fee (1:1).
pub const FINALITY_STANDARD: u32 = 2000;

/// Gas hint for `depositForBurn`.
pub const BURN_GAS: u64 = 200_000;
/// Gas hint for `receiveMessage` (mint).
pub const MINT_GAS: u64 = 250_000;
/// Gas for the source leg (approve + burn), what a quote reports.
pub const SOURCE_GAS: u64 = 60_000 + BURN_GAS;

/// What a burn needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Burn<'a> {
    /// Amount of USDC to burn, smallest units.
    pub amount: Amount,
    /// Destination CCTP domain.
    pub destination_domain: u32,
    /// Who receives the mint (an EVM address).
    pub mint_recipient: &'a str,
    /// The USDC contract on the source chain.
    pub burn_token: &'a str,
    /// Most the relayer accepts to pay Circle (0: standard transfer).
    pub max_fee: Amount,
    /// 2000 standard, 1000 fast.
    pub min_finality_threshold: u32,
}

/// `depositForBurn` calldata, or `None` when an address is not EVM.
pub fn deposit_for_burn(b: &Burn<'_>) -> Option<String> {
    Some(encode_call(
        "depositForBurn(uint256,uint32,bytes32,address,bytes32,uint256,uint32)",
        &[
            AbiValue::Uint(b.amount.0),
            AbiValue::Uint(U256::from(b.destination_domain)),
            AbiValue::Word(address_word(b.mint_recipient)?),
            AbiValue::Address(address_bytes(b.burn_token)?),
            // destinationCaller zero: anyone may receive, the relayer does.
            AbiValue::Word([0u8; 32]),
            AbiValue::Uint(b.max_fee.0),
            AbiValue::Uint(U256::from(b.min_finality_threshold)),
        ],
    ))
}

/// `receiveMessage(message, attestation)` calldata.
pub fn receive_message(message: &[u8], attestation: &[u8]) -> String {
    encode_call(
        "receiveMessage(bytes,bytes)",
        &[
            AbiValue::Bytes(message.to_vec()),
            AbiValue::Bytes(attestation.to_vec()),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deposit_for_burn_is_the_v2_seven_argument_call() {
        let data = deposit_for_burn(&Burn {
            amount: Amount::from_u128(10_000_000),
            destination_domain: 3,
            mint_recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            burn_token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            max_fee: Amount::ZERO,
            min_finality_threshold: FINALITY_STANDARD,
        })
        .unwrap();
        // selector of the v2 signature (TokenMessengerV2.depositForBurn)
        assert!(data.starts_with("0x8e0250ee"), "{}", &data[..10]);
        let words: Vec<&str> = data.as_bytes()[10..]
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        assert_eq!(words.len(), 7);
        assert!(words[0].ends_with("989680")); // 10 USDC
        assert!(words[1].ends_with("03"));
        assert_eq!(&words[2][24..], "70997970c51812dc3a010c7d01b50e0d17dc79c8");
        assert_eq!(&words[3][24..], "833589fcd6edb6e08f4c7c32d4f71b54bda02913");
        assert_eq!(words[4], "0".repeat(64));
        assert_eq!(words[5], "0".repeat(64));
        assert!(words[6].ends_with("07d0")); // 2000
        let not_evm = Burn {
            amount: Amount::ZERO,
            destination_domain: 0,
            mint_recipient: "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
            burn_token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            max_fee: Amount::ZERO,
            min_finality_threshold: FINALITY_STANDARD,
        };
        assert!(deposit_for_burn(&not_evm).is_none());
    }

    #[test]
    fn receive_message_carries_both_byte_strings() {
        let data = receive_message(&[1u8; 148], &[2u8; 65]);
        assert!(data.starts_with("0x57ecfd28"));
        // head 2 words + (len + 5 words) + (len + 3 words)
        assert_eq!((data.len() - 10) / 64, 2 + 1 + 5 + 1 + 3);
    }
}
