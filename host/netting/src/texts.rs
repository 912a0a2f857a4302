//! The exact texts a wallet signs (EIP-191 `personal_sign`), and their
//! check. Addresses in every text are lowercase `0x` hex; amounts are
//! decimal USDC smallest units; nonces decimal.
//!
//! - Terms ([`terms`]): several lines naming the address, the terms
//!   version, the caps, the confirmations and the safe-share rule; served
//!   by `GET /api/netting/terms` and signed once to enrol.
//! - Transfer ([`transfer_text`]):
//!   `relay-netting-transfer:v1:from=<a>:to=<b>:amount=<n>:nonce=<n>`.
//! - Withdraw ([`withdraw_text`]):
//!   `relay-netting-withdraw:v1:from=<a>:amount=<n>:toChain=<id>:to=<addr>:nonce=<n>`.

use crate::NettingConfig;
use alloy::primitives::Address;

use super::{error::invalid, NettingError};

/// The version of the terms text.
pub const TERMS_VERSION: &str = "v1";

/// `address` as the texts write it.
pub fn lower(address: &Address) -> String {
    format!("{address:#x}")
}

/// The terms `address` signs to enrol, for covered chains `chains`.
pub fn terms(address: &Address, cfg: &NettingConfig, chains: &[u64]) -> String {
    let chains = chains
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let pct = f_ppm(cfg.safe_share_ppm);
    format!(
        "relay-netting-terms:{TERMS_VERSION}\n\
         address={a}\n\
         asset={asset} (smallest units, 6 decimals), custodial: the relay owes this balance\n\
         chains={chains}\n\
         caps: deposit<={d} withdraw<={w} balance<={b}\n\
         deposits: credited once per transaction after {c} confirmations\n\
         safe share: a deposit is refused when total liabilities would exceed {pct} of the relayer's {asset} across covered chains\n\
         transfers: free between enrolled addresses, signed as relay-netting-transfer:v1:from=<a>:to=<b>:amount=<n>:nonce=<n>\n\
         withdrawals: the destination chain's payout cost is withheld, signed as relay-netting-withdraw:v1:from=<a>:amount=<n>:toChain=<id>:to=<addr>:nonce=<n>\n\
         nonces: monotonic per account; any signature at or below the account nonce is spent",
        a = lower(address),
        asset = cfg.asset,
        d = cfg.max_deposit,
        w = cfg.max_withdraw,
        b = cfg.max_balance,
        c = cfg.confirmations,
    )
}

/// `ppm` as a percentage with up to four decimals (`50%`, `0.0001%`).
fn f_ppm(ppm: u32) -> String {
    let whole = ppm / 10_000;
    let frac = ppm % 10_000;
    if frac == 0 {
        return format!("{whole}%");
    }
    let f = format!("{frac:04}");
    format!("{whole}.{}%", f.trim_end_matches('0'))
}

/// The text of a transfer.
pub fn transfer_text(from: &Address, to: &Address, amount: u128, nonce: u64) -> String {
    format!(
        "relay-netting-transfer:v1:from={}:to={}:amount={amount}:nonce={nonce}",
        lower(from),
        lower(to)
    )
}

/// The text of a withdrawal.
pub fn withdraw_text(
    from: &Address,
    amount: u128,
    (to_chain, to): (u64, &Address),
    nonce: u64,
) -> String {
    format!(
        "relay-netting-withdraw:v1:from={}:amount={amount}:toChain={to_chain}:to={}:nonce={nonce}",
        lower(from),
        lower(to)
    )
}

/// Checks that `signature` (65-byte hex, low-s) signs `text` by `signer`.
pub fn verify(text: &str, signature: &str, signer: &Address) -> Result<(), NettingError> {
    let got = relay_chain::personal::signer(text, signature)
        .map_err(|e| NettingError::Signature(e.to_string()))?;
    if got != *signer {
        return Err(NettingError::Signature(format!(
            "recovers to {got}, not to {signer}: sign exactly the documented text"
        )));
    }
    Ok(())
}

/// Parses an address field.
pub fn address(field: &'static str, v: &str) -> Result<Address, NettingError> {
    v.trim()
        .parse()
        .map_err(|_| invalid(field, "not a 0x-prefixed 20-byte address"))
}

/// Parses a positive amount (decimal smallest units) that fits the ledger.
pub fn amount(field: &'static str, v: &str) -> Result<u128, NettingError> {
    let ok = !v.is_empty() && v.len() <= 30 && v.bytes().all(|b| b.is_ascii_digit());
    let n: u128 = ok
        .then(|| v.parse().ok())
        .flatten()
        .ok_or_else(|| invalid(field, "not a decimal integer of smallest units"))?;
    if n == 0 || n > i64::MAX as u128 {
        return Err(invalid(field, format!("must be 1 to {}", i64::MAX)));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::signers::{local::PrivateKeySigner, SignerSync};

    #[test]
    fn texts_are_exact_and_signatures_recover() {
        let w = PrivateKeySigner::random();
        let to = Address::repeat_byte(0xab);
        let t = transfer_text(&w.address(), &to, 5, 7);
        assert_eq!(
            t,
            format!(
                "relay-netting-transfer:v1:from={}:to=0xabababababababababababababababababababab:amount=5:nonce=7",
                lower(&w.address())
            )
        );
        let sig = w.sign_message_sync(t.as_bytes()).unwrap().to_string();
        verify(&t, &sig, &w.address()).unwrap();
        let other = transfer_text(&w.address(), &to, 6, 7);
        assert!(matches!(
            verify(&other, &sig, &w.address()),
            Err(NettingError::Signature(_))
        ));
        assert!(verify(&t, "0x12", &w.address()).is_err());
    }

    #[test]
    fn amounts_are_positive_integers_and_shares_read_as_percentages() {
        assert_eq!(amount("amount", "1500000").unwrap(), 1_500_000);
        for bad in ["", "0", "1.5", "-1", "1e6", "99999999999999999999"] {
            assert!(amount("amount", bad).is_err(), "{bad}");
        }
        assert_eq!(f_ppm(500_000), "50%");
        assert_eq!(f_ppm(1), "0.0001%");
        assert_eq!(f_ppm(12_500), "1.25%");
    }
}
