//! The ledger entries of each movement (pure: what [`Ledger::post_entry`](crate::ledger::Ledger::post_entry)
//! writes). Every entry's postings sum to zero:
//!
//! | movement | postings | request key |
//! |---|---|---|
//! | deposit of `a` on chain `c` | `user:<addr>` +a, `float:<c>` −a | `deposit:<c>:<tx>` |
//! | transfer of `a` | `user:<from>` −a, `user:<to>` +a | `transfer:<from>:<nonce>` |
//! | withdrawal of `a` to chain `c`, cost `k` | `user:<addr>` −a, `float:<c>` +(a−k), `payout-fees` +k | `withdraw:<addr>:<nonce>` |
//! | reversal of entry `e` | `e`'s postings negated | `reverse:<e>` |
//!
//! `float:<c>` is the relayer's float on chain `c` seen from the ledger
//! (negative: USDC that came in for accounts); `payout-fees` collects the
//! payout costs withheld.
//!
//! [`Ledger::post_entry`]: crate::ledger::Ledger::post_entry

use crate::ledger::{user_account, EntryRow, NewEntry, Posting};
use alloy::primitives::keccak256;
use serde_json::json;

/// The system account of fees withheld for payouts.
pub const PAYOUT_FEES: &str = "payout-fees";

/// The system account of the relayer's float on `chain`.
pub fn float_account(chain: u64) -> String {
    format!("float:{chain}")
}

/// The entry id of `request_key`.
pub fn entry_id(request_key: &str) -> String {
    format!(
        "le_{}",
        &hex::encode(keccak256(request_key.as_bytes()))[..24]
    )
}

fn posting(account: String, amount: i64) -> Posting {
    Posting { account, amount }
}

fn entry(
    kind: &str,
    request_key: String,
    memo: serde_json::Value,
    postings: Vec<Posting>,
) -> NewEntry {
    NewEntry {
        id: entry_id(&request_key),
        kind: kind.into(),
        request_key,
        memo: memo.to_string(),
        postings: postings.into_iter().filter(|p| p.amount != 0).collect(),
        nonce: None,
        max_balance: i64::MAX,
        liabilities_cap: None,
        created_ms: 0,
    }
}

/// Limits every entry that credits a user carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// No user balance may end above it.
    pub max_balance: i64,
    /// Total liabilities may not end above it (deposits).
    pub liabilities_cap: Option<i64>,
    /// Epoch ms.
    pub now_ms: u64,
}

/// A deposit of `amount` by `address` in transaction `tx` on `chain`.
pub fn deposit(address: &str, (chain, tx): (u64, &str), amount: i64, b: Bounds) -> NewEntry {
    let key = format!("deposit:{chain}:{}", tx.to_ascii_lowercase());
    let memo =
        json!({"address": address, "chainId": chain, "txHash": tx, "amount": amount.to_string()});
    let postings = vec![
        posting(user_account(address), amount),
        posting(float_account(chain), -amount),
    ];
    NewEntry {
        max_balance: b.max_balance,
        liabilities_cap: b.liabilities_cap,
        created_ms: b.now_ms,
        ..entry("deposit", key, memo, postings)
    }
}

/// A transfer of `amount` from `from` to `to` under `from`'s `nonce`.
pub fn transfer(from: &str, to: &str, amount: i64, nonce: u64, b: Bounds) -> NewEntry {
    let key = format!("transfer:{}:{nonce}", from.to_ascii_lowercase());
    let memo = json!({"from": from, "to": to, "amount": amount.to_string(), "nonce": nonce});
    let postings = vec![
        posting(user_account(from), -amount),
        posting(user_account(to), amount),
    ];
    NewEntry {
        nonce: Some((user_account(from), nonce)),
        max_balance: b.max_balance,
        created_ms: b.now_ms,
        ..entry("transfer", key, memo, postings)
    }
}

/// A withdrawal of `amount` by `address` to `chain` under its `nonce`,
/// `cost` of it withheld for the payout.
pub fn withdraw(
    address: &str,
    (chain, cost): (u64, i64),
    amount: i64,
    nonce: u64,
    now_ms: u64,
) -> NewEntry {
    let key = format!("withdraw:{}:{nonce}", address.to_ascii_lowercase());
    let memo = json!({"address": address, "toChain": chain, "amount": amount.to_string(),
        "payoutCost": cost.to_string(), "nonce": nonce});
    let postings = vec![
        posting(user_account(address), -amount),
        posting(float_account(chain), amount - cost),
        posting(PAYOUT_FEES.into(), cost),
    ];
    NewEntry {
        nonce: Some((user_account(address), nonce)),
        created_ms: now_ms,
        ..entry("withdraw", key, memo, postings)
    }
}

/// The entry undoing `of` (a failed payout's withdrawal): its postings
/// negated. It is never refused for a cap: the money was the account's.
pub fn reversal(of: &EntryRow, why: &str, now_ms: u64) -> NewEntry {
    let key = format!("reverse:{}", of.id);
    let memo = json!({"reverses": of.id, "why": why});
    let postings = of
        .postings
        .iter()
        .map(|p| posting(p.account.clone(), -p.amount))
        .collect();
    NewEntry {
        created_ms: now_ms,
        ..entry("reversal", key, memo, postings)
    }
}
