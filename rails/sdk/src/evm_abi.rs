//! A small Solidity ABI encoder for the few calls rails describe themselves
//! (CCTP's `depositForBurn` and `receiveMessage`, ERC-20 `transfer` and
//! `balanceOf`), and the hex helpers around it.
//!
//! Rails compile to wasm too, so they carry no alloy: this is the static
//! head/tail encoding of the ABI specification (docs.soliditylang.org,
//! "Contract ABI Specification") for the value kinds those calls use —
//! `address`, `uint<N>`, `bytes32` and dynamic `bytes` — and nothing more.

use relay_plugin_api::{Amount, U256};
use sha3::{Digest, Keccak256};

/// One ABI argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbiValue {
    /// `address`: 20 bytes, left-padded to a word.
    Address([u8; 20]),
    /// Any `uint<N>`: big-endian, left-padded to a word.
    Uint(U256),
    /// `bytes32`: one word as is.
    Word([u8; 32]),
    /// Dynamic `bytes`: an offset in the head, length and padded data in the tail.
    Bytes(Vec<u8>),
}

/// The 4-byte selector of a canonical signature such as
/// `transfer(address,uint256)`: the first bytes of its keccak-256.
pub fn selector(signature: &str) -> [u8; 4] {
    let h = Keccak256::digest(signature.as_bytes());
    [h[0], h[1], h[2], h[3]]
}

/// `selector(signature) ++ encode(args)`, as `0x`-hex calldata.
pub fn encode_call(signature: &str, args: &[AbiValue]) -> String {
    let mut out = selector(signature).to_vec();
    out.extend(encode(args));
    hex0x(&out)
}

/// The ABI encoding of a tuple of `args` (head words, then dynamic tails).
pub fn encode(args: &[AbiValue]) -> Vec<u8> {
    let mut head = Vec::with_capacity(args.len() * 32);
    let mut tail = Vec::new();
    for a in args {
        match a {
            AbiValue::Address(b) => {
                let mut w = [0u8; 32];
                w[12..].copy_from_slice(b);
                head.extend(w);
            }
            AbiValue::Uint(v) => head.extend(v.to_be_bytes::<32>()),
            AbiValue::Word(w) => head.extend(w),
            AbiValue::Bytes(data) => {
                let offset = args.len() * 32 + tail.len();
                head.extend(U256::from(offset).to_be_bytes::<32>());
                tail.extend(U256::from(data.len()).to_be_bytes::<32>());
                tail.extend(data);
                tail.resize(tail.len().div_ceil(32) * 32, 0);
            }
        }
    }
    head.extend(tail);
    head
}

/// `0x`-prefixed lower-case hex of `bytes`.
pub fn hex0x(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("0x");
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

/// The bytes of a `0x`-hex string (`"0x"` is empty); `None` for anything else.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let h = s
        .trim()
        .strip_prefix("0x")
        .or_else(|| s.trim().strip_prefix("0X"))?;
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The 20 bytes of a `0x`-hex EVM address.
pub fn address_bytes(s: &str) -> Option<[u8; 20]> {
    decode_hex(s)?.try_into().ok()
}

/// An EVM address as a left-padded `bytes32` word (CCTP's `mintRecipient`).
pub fn address_word(s: &str) -> Option<[u8; 32]> {
    let b = address_bytes(s)?;
    let mut w = [0u8; 32];
    w[12..].copy_from_slice(&b);
    Some(w)
}

/// A 32-byte word read as an unsigned integer (an `eth_call` result).
pub fn word_to_uint(word_hex: &str) -> Option<U256> {
    let b = decode_hex(word_hex)?;
    (b.len() == 32).then(|| U256::from_be_slice(&b))
}

/// Calldata of ERC-20 `transfer(to, amount)`.
pub fn erc20_transfer(to: &str, amount: Amount) -> Option<String> {
    Some(encode_call(
        "transfer(address,uint256)",
        &[
            AbiValue::Address(address_bytes(to)?),
            AbiValue::Uint(amount.0),
        ],
    ))
}

/// Calldata of ERC-20 `balanceOf(owner)`.
pub fn erc20_balance_of(owner: &str) -> Option<String> {
    Some(encode_call(
        "balanceOf(address)",
        &[AbiValue::Address(address_bytes(owner)?)],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_the_well_known_ones() {
        assert_eq!(hex0x(&selector("transfer(address,uint256)")), "0xa9059cbb");
        assert_eq!(hex0x(&selector("balanceOf(address)")), "0x70a08231");
        assert_eq!(hex0x(&selector("approve(address,uint256)")), "0x095ea7b3");
        assert_eq!(
            hex0x(&selector("receiveMessage(bytes,bytes)")),
            "0x57ecfd28"
        );
    }

    #[test]
    fn static_arguments_fill_one_word_each() {
        let data = erc20_transfer(
            "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            Amount::from_u128(1_000_000),
        )
        .unwrap();
        assert_eq!(
            data,
            "0xa9059cbb\
             00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8\
             00000000000000000000000000000000000000000000000000000000000f4240"
        );
    }

    #[test]
    fn dynamic_bytes_are_offset_length_and_padded_data() {
        let enc = encode(&[AbiValue::Bytes(vec![0xab; 33]), AbiValue::Bytes(vec![])]);
        let words: Vec<String> = enc.chunks(32).map(hex0x).collect();
        assert_eq!(words.len(), 2 + 1 + 2 + 1);
        assert!(words[0].ends_with("40")); // first tail after two head words
        assert!(words[1].ends_with("a0")); // 0x40 + 32 (len) + 64 (data)
        assert!(words[2].ends_with("21")); // 33 bytes
        assert!(words[4].starts_with("0xab00")); // padded to a word
        assert_eq!(words[5], hex0x(&[0u8; 32])); // empty bytes: length 0
    }

    #[test]
    fn hex_round_trips_and_refuses_garbage() {
        assert_eq!(decode_hex("0x0aFF").unwrap(), vec![0x0a, 0xff]);
        assert_eq!(decode_hex("0x").unwrap(), Vec::<u8>::new());
        for bad in ["0x0", "abcd", "0xzz", ""] {
            assert!(decode_hex(bad).is_none(), "{bad}");
        }
        assert!(address_word("0x12").is_none());
        let w = address_word("0x70997970C51812dc3A010C7d01b50e0d17dc79C8").unwrap();
        assert_eq!(&w[..12], &[0u8; 12]);
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(word_to_uint(&hex0x(&one)), Some(U256::from(1u8)));
        assert_eq!(word_to_uint("0x01"), None);
    }
}
