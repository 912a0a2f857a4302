//! Names (spec §4.10 name registry, §8.2): a human-readable handle for a
//! mailbox. `GET /api/relaynames/quote?name=` prices one; `POST
//! /api/relaynames/list` registers it (signed by its owner); a name
//! resolves in `mailbox/{addressOrName}` and moves by
//! `handle/transfer`. Every registration and transfer is an entry of the
//! witness log (kinds `name` and `transfer`); the registry is what the log
//! implies.
//!
//! **Normalisation.** A name is folded to lowercase and must then be 3 to
//! 32 characters of `a–z`, `0–9` and `-`, not starting or ending with `-`.
//! Every other character — every non-ASCII letter among them — is refused,
//! so no Unicode look-alike of a name can be registered. Within ASCII,
//! `0`/`o` and `1`/`l`/`i` look alike: a name is refused when its
//! skeleton (those folded to `o` and `l`) equals another live name's.
//!
//! **Prices** (USD a year, §8.2): 3 characters 512, 4 characters 128, 5–6
//! characters 4, 7 or more free. A registration lasts whole years (1 to
//! 10). After it expires the owner alone may renew it for 90 days (grace);
//! then for 21 days anyone may register it at the yearly price plus a
//! premium that decays linearly from 10,000 USD to 0; then it is
//! available. Prices are integer cents.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One day, ms.
pub const DAY_MS: u64 = 86_400_000;
/// One registration year, ms (365 days).
pub const YEAR_MS: u64 = 365 * DAY_MS;
/// The owner's grace after expiry.
pub const GRACE_MS: u64 = 90 * DAY_MS;
/// The premium window after the grace.
pub const PREMIUM_MS: u64 = 21 * DAY_MS;
/// The premium at the window's start, cents.
pub const PREMIUM_START_CENTS: u64 = 1_000_000;
/// The most years one registration buys.
pub const MAX_YEARS: u32 = 10;

/// Why a name is not a name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("name: {0}")]
pub struct NameError(pub &'static str);

/// `input` normalised (module docs).
pub fn normalize(input: &str) -> Result<String, NameError> {
    let name = input.trim().to_ascii_lowercase();
    if !name.is_ascii() {
        return Err(NameError(
            "only a-z, 0-9 and '-' (no other letters: look-alikes are refused)",
        ));
    }
    if !(3..=32).contains(&name.len()) {
        return Err(NameError("3 to 32 characters"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(NameError("only a-z, 0-9 and '-'"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(NameError("no '-' at the start or the end"));
    }
    Ok(name)
}

/// The look-alike class of a normalised name.
pub fn skeleton(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '0' => 'o',
            '1' | 'i' => 'l',
            c => c,
        })
        .collect()
}

/// The yearly price of a normalised name, cents.
pub fn yearly_cents(name: &str) -> u64 {
    match name.len() {
        3 => 51_200,
        4 => 12_800,
        5 | 6 => 400,
        _ => 0,
    }
}

/// A registered name as the log implies it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NameRecord {
    /// The name.
    pub name: String,
    /// Its owner, lowercase.
    pub owner: String,
    /// When the registration ends, ms.
    pub expires: u64,
    /// The witness entry of its latest registration or transfer.
    pub s: u64,
    /// The signing time of that entry (a later one replaces it).
    pub ts: u64,
}

/// A registration as the log keeps it: the signed listing and the expiry
/// it bought.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// The normalised name.
    pub name: String,
    /// The owner, lowercase.
    pub owner: String,
    /// Years bought.
    pub years: u32,
    /// The listing's signing time.
    pub ts: u64,
    /// The owner's signature of the listing.
    pub sig: String,
    /// When the registration ends, ms.
    pub expires: u64,
    /// Its payment, when the name cost money.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid: Option<Paid>,
}

/// A settled x402 payment as the witness log records it: what a paid
/// registration or a sale cost, and where it was settled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Paid {
    /// The order (`or_…`, `GET /api/relaynames/orders/{id}`).
    pub order: String,
    /// USD cents paid (in USDC at par).
    pub cents: u64,
    /// The chain it was settled on.
    pub chain_id: u64,
    /// The settlement transaction.
    pub settle_tx: String,
}

/// A sale's terms as the log keeps them: the price the receiver paid, the
/// host's finalize fee, and the payment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sale {
    /// The price, USD cents.
    pub price_cents: u64,
    /// The host's finalize fee, USD cents ([`fee_cents`]); the seller is
    /// paid the rest.
    pub fee_cents: u64,
    /// The buyer's payment, once settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paid: Option<Paid>,
}

/// A secondary sale's finalize fee (§8.2): 2 % of the price, rounded up to
/// the cent, at least 1 USD.
pub fn fee_cents(price_cents: u64) -> u64 {
    price_cents.saturating_mul(2).div_ceil(100).max(100)
}

/// The least price of a sale, cents: the fee's minimum (a seller is never
/// asked to pay to sell).
pub const MIN_SALE_CENTS: u64 = 100;

/// What registering `name` for `years` costs at `now_ms` given its
/// `record`, cents: the yearly price times the years plus the premium.
pub fn price_cents(name: &str, record: Option<&NameRecord>, years: u32, now_ms: u64) -> u64 {
    yearly_cents(name) * u64::from(years) + premium_cents(record, now_ms)
}

/// The most live names one owner holds.
pub const MAX_PER_OWNER: usize = 20;

/// Why a registration or transfer is refused by the registry's state.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NameRefusal {
    /// Someone holds it (registered, or in its owner's grace).
    #[error("{name} is {state:?}, held by {owner}")]
    Taken {
        /// The name.
        name: String,
        /// Its state.
        state: NameState,
        /// Its owner.
        owner: String,
    },
    /// It looks like a live name.
    #[error("{name} looks like the registered name {like} (0/o and 1/l/i are the same here)")]
    Confusable {
        /// The name.
        name: String,
        /// The live look-alike.
        like: String,
    },
    /// It costs money and the registration did not pay it.
    #[error("{name} costs {usd} USD now and this registration did not pay that (7 or more characters are free)")]
    Unpaid {
        /// The name.
        name: String,
        /// The price.
        usd: String,
    },
    /// The owner holds the most names one owner may.
    #[error("the owner holds {MAX_PER_OWNER} live names, the most one owner may")]
    Cap,
    /// No live registration of that name.
    #[error("{0}: no such name is registered on this host")]
    Unknown(String),
    /// The releaser is not its owner.
    #[error("{name} is owned by {owner}, not by the releaser")]
    NotOwner {
        /// The name.
        name: String,
        /// Its owner.
        owner: String,
    },
}

/// Where a name stands at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NameState {
    /// Nobody holds it.
    Available,
    /// Held and not expired.
    Registered,
    /// Expired; its owner alone may renew it.
    Grace,
    /// Past the grace: anyone may register it with the premium.
    Premium,
}

/// `record`'s state at `now_ms` (`None`: never registered).
pub fn state(record: Option<&NameRecord>, now_ms: u64) -> NameState {
    match record {
        None => NameState::Available,
        Some(r) if now_ms < r.expires => NameState::Registered,
        Some(r) if now_ms < r.expires + GRACE_MS => NameState::Grace,
        Some(r) if now_ms < r.expires + GRACE_MS + PREMIUM_MS => NameState::Premium,
        Some(_) => NameState::Available,
    }
}

/// The premium of `record` at `now_ms`, cents (0 outside the window).
pub fn premium_cents(record: Option<&NameRecord>, now_ms: u64) -> u64 {
    let Some(r) = record.filter(|r| state(Some(r), now_ms) == NameState::Premium) else {
        return 0;
    };
    let into = now_ms - (r.expires + GRACE_MS);
    let left = PREMIUM_MS - into;
    (u128::from(PREMIUM_START_CENTS) * u128::from(left) / u128::from(PREMIUM_MS)) as u64
}

/// Cents as `D.CC`.
pub fn usd(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A registration as its owner signs it (and as the log keeps it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Listing {
    /// The name (normalised by the host before checking the signature).
    pub name: String,
    /// Its owner.
    pub owner: String,
    /// Years, 1 to 10.
    pub years: u32,
    /// When it was signed, ms.
    pub ts: u64,
    /// The owner's EIP-191 signature of [`Listing::text`], `0x` and 65 bytes.
    pub sig: String,
}

impl Listing {
    /// The text the owner signs (lowercase owner, normalised name, no
    /// final newline).
    pub fn text(&self) -> String {
        format!(
            "relay/relaynames/v1 list\nname: {}\nowner: {}\nyears: {}\nts: {}",
            self.name, self.owner, self.years, self.ts
        )
    }
}

/// A transfer as the log keeps it: both signed sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Moved {
    /// The name.
    pub name: String,
    /// The owner who released it.
    pub from: String,
    /// The receiver who accepted it.
    pub to: String,
    /// The release's time and signature.
    pub release: (u64, String),
    /// The accept's time and signature.
    pub accept: (u64, String),
    /// The sale's terms, when the name was sold (both sides signed the price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sale: Option<Sale>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fold_case_and_refuse_everything_outside_ascii() {
        assert_eq!(normalize(" Alice-01 ").unwrap(), "alice-01");
        for bad in [
            "al",
            "аlice",
            "alice!",
            "-alice",
            "alice-",
            "ａlice",
            &"a".repeat(33),
            "al ice",
        ] {
            assert!(normalize(bad).is_err(), "{bad}");
        }
        assert_eq!(skeleton("g00gle"), skeleton("google"));
        assert_eq!(skeleton("paypa1"), skeleton("paypal"));
        assert_eq!(skeleton("rail"), skeleton("ra1l"));
    }

    #[test]
    fn prices_follow_the_table() {
        let rows = [
            ("abc", 51_200),
            ("abcd", 12_800),
            ("abcde", 400),
            ("abcdef", 400),
            ("abcdefg", 0),
        ];
        for (name, cents) in rows {
            assert_eq!(yearly_cents(name), cents, "{name}");
        }
        assert_eq!(usd(51_200), "512.00");
        assert_eq!(usd(5), "0.05");
        // a sale's finalize fee: 2 %, at least 1 USD
        assert_eq!(fee_cents(100), 100);
        assert_eq!(fee_cents(5_000), 100);
        assert_eq!(fee_cents(5_001), 101, "rounded up to the cent");
        assert_eq!(fee_cents(250_000), 5_000);
        assert_eq!(price_cents("abcd", None, 2, 0), 25_600);
    }

    #[test]
    fn an_expired_name_goes_through_grace_and_a_decaying_premium() {
        let r = NameRecord {
            name: "abcd".into(),
            owner: "0xa".into(),
            expires: 1_000,
            s: 1,
            ts: 0,
        };
        assert_eq!(state(Some(&r), 999), NameState::Registered);
        assert_eq!(state(Some(&r), 1_000), NameState::Grace);
        let premium_start = 1_000 + GRACE_MS;
        assert_eq!(state(Some(&r), premium_start - 1), NameState::Grace);
        assert_eq!(state(Some(&r), premium_start), NameState::Premium);
        assert_eq!(premium_cents(Some(&r), premium_start), PREMIUM_START_CENTS);
        assert_eq!(
            premium_cents(Some(&r), premium_start + PREMIUM_MS / 2),
            PREMIUM_START_CENTS / 2
        );
        assert_eq!(
            premium_cents(Some(&r), premium_start - 1),
            0,
            "none in grace"
        );
        assert_eq!(
            state(Some(&r), premium_start + PREMIUM_MS),
            NameState::Available
        );
        assert_eq!(premium_cents(Some(&r), premium_start + PREMIUM_MS), 0);
        assert_eq!(state(None, 0), NameState::Available);
    }
}
