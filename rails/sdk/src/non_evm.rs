//! Recipient and sender addresses on the non-EVM nodes, checked at the edge
//! (parse, don't validate) so no plan ever names an address its chain would
//! refuse:
//!
//! - tron: base58check, 34 characters starting with `T` (spec §2.1), version
//!   byte `0x41`, double-SHA-256 checksum;
//! - solana: base58 of a 32-byte public key;
//! - stellar: a `G…` account strkey, 56 base32 characters, version byte
//!   `6 << 3`, CRC16-XModem checksum (SEP-0023);
//! - bitcoin: segwit bech32 / taproot bech32m (BIP-173, BIP-350) or legacy
//!   base58check P2PKH/P2SH, on the configured network;
//! - sui: `0x` and 64 hex digits.

use relay_plugin_api::{NonEvmNode, RailError};
use sha2::{Digest, Sha256};

/// A bitcoin network: which human-readable part and version bytes are valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitcoinNetwork {
    /// `bc1…`, `1…`, `3…`.
    Mainnet,
    /// `tb1…`, `m…`/`n…`, `2…`.
    Testnet,
    /// `bcrt1…` and the testnet base58 versions.
    Regtest,
}

impl BitcoinNetwork {
    /// From configuration (`mainnet`, `testnet`, `regtest`); mainnet otherwise.
    pub fn parse(s: Option<&str>) -> Self {
        match s.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            Some("testnet" | "testnet3" | "testnet4" | "signet") => BitcoinNetwork::Testnet,
            Some("regtest") => BitcoinNetwork::Regtest,
            _ => BitcoinNetwork::Mainnet,
        }
    }

    fn hrp(self) -> &'static str {
        match self {
            BitcoinNetwork::Mainnet => "bc",
            BitcoinNetwork::Testnet => "tb",
            BitcoinNetwork::Regtest => "bcrt",
        }
    }

    fn base58_versions(self) -> [u8; 2] {
        match self {
            BitcoinNetwork::Mainnet => [0x00, 0x05],
            _ => [0x6f, 0xc4],
        }
    }
}

/// Checks `address` on `node`; the error names `field` and what is wrong.
pub fn check_address(
    field: &str,
    node: NonEvmNode,
    address: &str,
    btc: BitcoinNetwork,
) -> Result<(), RailError> {
    let a = address.trim();
    let ok = match node {
        NonEvmNode::Tron => is_tron(a),
        NonEvmNode::Solana => is_solana(a),
        NonEvmNode::Stellar => is_stellar_account(a),
        NonEvmNode::Bitcoin => is_bitcoin(a, btc),
        NonEvmNode::Sui => is_sui(a),
    };
    if ok {
        return Ok(());
    }
    let expected = match node {
        NonEvmNode::Tron => "a base58check tron address (34 characters starting with T)",
        NonEvmNode::Solana => "a base58 solana public key (32 bytes)",
        NonEvmNode::Stellar => "a stellar account (G…, 56 characters, valid checksum)",
        NonEvmNode::Bitcoin => "a bitcoin address on the configured network",
        NonEvmNode::Sui => "a sui address (0x and 64 hex digits)",
    };
    let shown: String = a.chars().take(64).collect();
    Err(RailError::invalid(
        field,
        format!("{shown:?} is not {expected}"),
    ))
}

fn double_sha256(b: &[u8]) -> [u8; 32] {
    Sha256::digest(Sha256::digest(b)).into()
}

/// base58check: decoded payload (version byte first) with a valid checksum.
fn base58check(s: &str) -> Option<Vec<u8>> {
    let raw = bs58::decode(s).into_vec().ok()?;
    if raw.len() < 5 {
        return None;
    }
    let (payload, sum) = raw.split_at(raw.len() - 4);
    (double_sha256(payload)[..4] == *sum).then(|| payload.to_vec())
}

/// Whether `s` is a tron address.
pub fn is_tron(s: &str) -> bool {
    s.len() == 34
        && s.starts_with('T')
        && base58check(s).is_some_and(|p| p.len() == 21 && p[0] == 0x41)
}

/// Whether `s` is a solana public key.
pub fn is_solana(s: &str) -> bool {
    (32..=44).contains(&s.len()) && bs58::decode(s).into_vec().is_ok_and(|b| b.len() == 32)
}

/// Whether `s` is a sui address.
pub fn is_sui(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::with_capacity(s.len() * 5 / 8);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        bits = (bits << 5) | u32::from(v);
        n += 5;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
}

fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for b in data {
        crc ^= u16::from(*b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Whether `s` is a stellar account strkey (`G…`).
pub fn is_stellar_account(s: &str) -> bool {
    if s.len() != 56 || !s.starts_with('G') {
        return false;
    }
    let Some(raw) = base32_decode(s) else {
        return false;
    };
    if raw.len() != 35 || raw[0] != 6 << 3 {
        return false;
    }
    let sum = u16::from_le_bytes([raw[33], raw[34]]);
    crc16_xmodem(&raw[..33]) == sum
}

const BECH32_CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32M_CONST: u32 = 0x2bc8_30a3;

fn bech32_polymod(values: &[u8]) -> u32 {
    const GEN: [u32; 5] = [
        0x3b6a_57b2,
        0x2650_8e6d,
        0x1ea1_19fa,
        0x3d42_33dd,
        0x2a14_62b3,
    ];
    let mut chk: u32 = 1;
    for v in values {
        let top = chk >> 25;
        chk = ((chk & 0x01ff_ffff) << 5) ^ u32::from(*v);
        for (i, g) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

/// A segwit address: `(witness version, program)` when the checksum is the
/// one its version requires (bech32 for v0, bech32m for v1+).
fn segwit(s: &str, hrp: &str) -> Option<(u8, Vec<u8>)> {
    let lower = s.to_ascii_lowercase();
    if lower != s && s.to_ascii_uppercase() != s {
        return None; // mixed case
    }
    let (h, data) = lower.rsplit_once('1')?;
    if h != hrp || data.len() < 7 || lower.len() > 90 {
        return None;
    }
    let values: Vec<u8> = data
        .bytes()
        .map(|c| BECH32_CHARSET.iter().position(|x| *x == c).map(|p| p as u8))
        .collect::<Option<_>>()?;
    let mut check: Vec<u8> = h.bytes().map(|b| b >> 5).collect();
    check.push(0);
    check.extend(h.bytes().map(|b| b & 31));
    check.extend(&values);
    let constant = bech32_polymod(&check);
    let (version, rest) = values[..values.len() - 6].split_first()?;
    let expected = if *version == 0 { 1 } else { BECH32M_CONST };
    if constant != expected || *version > 16 {
        return None;
    }
    let program = regroup_5_to_8(rest)?;
    let len_ok = if *version == 0 {
        program.len() == 20 || program.len() == 32
    } else {
        (2..=40).contains(&program.len())
    };
    len_ok.then_some((*version, program))
}

fn regroup_5_to_8(data: &[u8]) -> Option<Vec<u8>> {
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut out = Vec::with_capacity(data.len() * 5 / 8);
    for v in data {
        acc = (acc << 5) | u32::from(*v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    (bits < 5 && (acc << (8 - bits)) as u8 == 0).then_some(out)
}

/// Whether `s` is a bitcoin address on `net`.
pub fn is_bitcoin(s: &str, net: BitcoinNetwork) -> bool {
    if segwit(s, net.hrp()).is_some() {
        return true;
    }
    base58check(s).is_some_and(|p| p.len() == 21 && net.base58_versions().contains(&p[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tron_addresses_need_the_t_prefix_and_a_valid_checksum() {
        assert!(is_tron("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")); // USDT on tron
        assert!(!is_tron("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u")); // checksum
        assert!(!is_tron("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"));
        assert!(!is_tron("T1111111111111111111111111111111111"));
    }

    #[test]
    fn solana_keys_are_32_bytes_of_base58() {
        assert!(is_solana("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"));
        assert!(is_solana("11111111111111111111111111111111"));
        assert!(!is_solana(&"z".repeat(44))); // 33 bytes
        assert!(!is_solana(&"1".repeat(31))); // too short
        assert!(!is_solana("0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl")); // not base58
    }

    #[test]
    fn stellar_accounts_carry_a_crc16() {
        let good = "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ";
        assert!(is_stellar_account(good));
        let mut bad = good.to_string();
        bad.replace_range(55..56, "A");
        assert!(!is_stellar_account(&bad));
        assert!(!is_stellar_account(
            "CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75"
        ));
        assert!(!is_stellar_account("G123"));
    }

    #[test]
    fn bitcoin_addresses_follow_bip173_bip350_and_base58check() {
        let m = BitcoinNetwork::Mainnet;
        assert!(is_bitcoin("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", m));
        assert!(is_bitcoin("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", m));
        assert!(is_bitcoin(
            "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
            m
        ));
        assert!(is_bitcoin("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", m));
        assert!(is_bitcoin("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", m));
        // v0 program with a bech32m checksum, wrong network, bad checksum
        assert!(!is_bitcoin("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", m));
        assert!(!is_bitcoin("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", m));
        assert!(!is_bitcoin("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", m));
        assert!(is_bitcoin(
            "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",
            BitcoinNetwork::Testnet
        ));
    }

    #[test]
    fn errors_name_the_field_and_the_expected_form() {
        let e = check_address(
            "toAddress",
            NonEvmNode::Tron,
            "0xabc",
            BitcoinNetwork::Mainnet,
        )
        .unwrap_err();
        assert_eq!(e.kind, relay_plugin_api::RailErrorKind::InvalidInput);
        assert!(
            e.message.starts_with("toAddress:") && e.message.contains("tron"),
            "{e}"
        );
        assert!(check_address(
            "a",
            NonEvmNode::Sui,
            &format!("0x{}", "ab".repeat(32)),
            BitcoinNetwork::Mainnet
        )
        .is_ok());
    }
}
