//! Spend statements (spec §4.3 `/api/statement/spend`, §2.14): an
//! address's routes over a period with their amounts and fees, signed by
//! the relayer.
//!
//! Scheme `relay-statement-v1`: the `statement` object is written as
//! canonical JSON (keys sorted at every level, no whitespace) — the
//! answer's `message` — and those UTF-8 bytes are signed as an EIP-191
//! personal message by the relayer key (viem:
//! `verifyMessage({address: signer, message, signature})`).
//! `totals` sum the amounts and fees of the routes that were delivered
//! (`DONE`), per source chain and token; other routes are listed with
//! their status and count nowhere.

use alloy::primitives::U256;
use relay_chain::signer::RelayerSigner;
use relay_engine::{attest::AttestError, snapshot};
use relay_types::route::{RouteRecord, RouteStatus};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The scheme name.
pub const SCHEME: &str = "relay-statement-v1";

/// One route on a statement.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatementRoute {
    /// Route id.
    pub id: String,
    /// Created, epoch ms.
    pub created_ms: u64,
    /// Status when the statement was made.
    pub status: String,
    /// Rail.
    pub rail: String,
    /// Source node.
    pub from_chain: String,
    /// Destination node.
    pub to_chain: String,
    /// Source token.
    pub from_token: String,
    /// Destination token.
    pub to_token: String,
    /// Amount in, source units.
    pub amount: String,
    /// Quoted output, destination units.
    pub estimated: String,
    /// Route fee, source units.
    pub relay_fee: String,
    /// Gas charged, source units.
    pub gas_fee: String,
    /// Source transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_tx: Option<String>,
    /// Destination transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_tx: Option<String>,
}

/// Delivered routes' sums for one source chain and token.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotal {
    /// Source node.
    pub chain: String,
    /// Source token.
    pub token: String,
    /// Delivered routes.
    pub routes: u64,
    /// Sum of their amounts in, source units.
    pub amount_in: String,
    /// Sum of their route fees and gas, source units.
    pub fees: String,
}

/// The statement that is signed.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpendStatement {
    /// [`SCHEME`].
    pub scheme: String,
    /// The address (as asked).
    pub address: String,
    /// Period start, epoch ms (inclusive).
    pub from: u64,
    /// Period end, epoch ms (inclusive).
    pub to: u64,
    /// The address's routes in the period, oldest first.
    pub routes: Vec<StatementRoute>,
    /// Per source chain and token, over delivered routes.
    pub totals: Vec<TokenTotal>,
    /// When made, epoch ms.
    pub issued_at: u64,
}

/// A statement with its signature.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedStatement {
    /// The statement.
    pub statement: SpendStatement,
    /// `statement` as canonical JSON: what was signed.
    pub message: String,
    /// Who signed (the relayer); absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// EIP-191 signature of `message`; absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

fn line(r: &RouteRecord) -> StatementRoute {
    let f = crate::bundle::facts(r);
    StatementRoute {
        id: f.id,
        created_ms: f.created_ms,
        status: f.status,
        rail: f.rail,
        from_chain: f.from_chain,
        to_chain: f.to_chain,
        from_token: f.from_token,
        to_token: f.to_token,
        amount: f.amount,
        estimated: f.estimated,
        relay_fee: f.relay_fee,
        gas_fee: f.gas_fee,
        src_tx: f.src_tx,
        dest_tx: f.dest_tx,
    }
}

fn totals(routes: &[&RouteRecord]) -> Vec<TokenTotal> {
    let mut by: BTreeMap<(String, String), (u64, U256, U256)> = BTreeMap::new();
    for r in routes.iter().filter(|r| r.status == RouteStatus::Done) {
        let e = by
            .entry((r.from_chain.to_string(), r.from_token.clone()))
            .or_default();
        e.0 += 1;
        e.1 = e.1.saturating_add(r.amount.0);
        e.2 =
            e.2.saturating_add(r.relay_fee.0)
                .saturating_add(r.gas_fee.0);
    }
    by.into_iter()
        .map(|((chain, token), (n, amount, fees))| TokenTotal {
            chain,
            token,
            routes: n,
            amount_in: amount.to_string(),
            fees: fees.to_string(),
        })
        .collect()
}

/// The statement of the routes in `routes` whose sender `is_address`
/// accepts, over `[from, to]`.
pub fn build(
    address: &str,
    (from, to): (u64, u64),
    routes: &[RouteRecord],
    is_address: impl Fn(&str) -> bool,
    now_ms: u64,
) -> SpendStatement {
    let mine: Vec<&RouteRecord> = routes.iter().filter(|r| is_address(&r.sender)).collect();
    SpendStatement {
        scheme: SCHEME.into(),
        address: address.into(),
        from,
        to,
        routes: mine.iter().map(|r| line(r)).collect(),
        totals: totals(&mine),
        issued_at: now_ms,
    }
}

/// What sealing a record gives: its canonical JSON (what is signed), the
/// signer and the EIP-191 signature (both absent without a key).
pub(crate) struct Parts {
    pub(crate) message: String,
    pub(crate) signer: Option<String>,
    pub(crate) signature: Option<String>,
}

/// Seals any serialisable record with the relayer key
/// ([`snapshot::seal`]: canonical JSON, EIP-191).
pub(crate) fn seal_parts(
    record: &impl Serialize,
    signer: Option<&RelayerSigner>,
) -> Result<Parts, AttestError> {
    let value = serde_json::to_value(record).unwrap_or_default();
    let sealed = snapshot::seal(&value, signer)?;
    Ok(Parts {
        message: sealed.canonical,
        signer: sealed.signed.signer.map(|a| a.to_string()),
        signature: sealed.signed.signature,
    })
}

/// Signs `statement` (unsigned when the host has no key).
pub fn seal(
    statement: SpendStatement,
    signer: Option<&RelayerSigner>,
) -> Result<SignedStatement, AttestError> {
    let p = seal_parts(&statement, signer)?;
    Ok(SignedStatement {
        statement,
        message: p.message,
        signer: p.signer,
        signature: p.signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_plugin_api::Amount;

    #[test]
    fn only_the_address_s_routes_are_listed_and_only_delivered_ones_counted() {
        let mut a = crate::outcome::tests_support::route();
        a.id = "rt_a".into();
        let mut b = a.clone();
        b.id = "rt_b".into();
        b.status = RouteStatus::Failed;
        let mut c = a.clone();
        c.id = "rt_c".into();
        c.sender = "0x0000000000000000000000000000000000000001".into();
        let mut d = a.clone();
        d.id = "rt_d".into();
        d.gas_fee = Amount::from_u128(100);
        let me = a.sender.to_lowercase();
        let s = build(
            &me,
            (0, 10),
            &[a, b, c, d],
            |x| x.eq_ignore_ascii_case(&me),
            5,
        );
        let ids: Vec<&str> = s.routes.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["rt_a", "rt_b", "rt_d"]);
        assert_eq!(s.totals.len(), 1);
        assert_eq!(s.totals[0].routes, 2);
        assert_eq!(s.totals[0].amount_in, "10000000");
        assert_eq!(s.totals[0].fees, (12_500 * 2 + 100).to_string());
    }

    #[test]
    fn the_message_is_the_canonical_statement_and_its_signature_recovers() {
        let key = RelayerSigner::from_hex(
            "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        )
        .unwrap();
        let s = build("0xabc", (0, 1), &[], |_| false, 1);
        let signed = seal(s, Some(&key)).unwrap();
        assert!(signed.message.starts_with("{\"address\":\"0xabc\""));
        let who = relay_engine::attest::recover(
            signed.message.as_bytes(),
            signed.signature.as_deref().unwrap(),
        )
        .unwrap();
        assert_eq!(who, key.address());
    }
}
