//! Settlement receipts (spec §4.6 `GET /api/receipts/{addr}`): an
//! address's settlement history, each entry signed by the relayer on its
//! own so a client keeps and checks any one of them offline.
//!
//! Scheme `relay-receipt-v1`: a [`Receipt`] is written as canonical JSON
//! (keys sorted at every level, no whitespace; absent fields omitted) — the
//! entry's `message` — and those UTF-8 bytes are signed as an EIP-191
//! personal message by the relayer key (viem:
//! `verifyMessage({address: signer, message, signature})`). A receipt
//! names the address it was issued to, so it cannot be passed off as
//! another address's.
//!
//! Two kinds settle: a route that was delivered (`DONE`) with the address
//! as its sender or recipient, and a netting withdrawal paid out on chain
//! to or for the address.

use relay_chain::signer::RelayerSigner;
use relay_engine::attest::AttestError;
use relay_types::route::{RouteRecord, RouteStatus};
use serde::Serialize;
use utoipa::ToSchema;

/// The scheme name.
pub const SCHEME: &str = "relay-receipt-v1";

/// One settlement, as signed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// [`SCHEME`].
    pub scheme: String,
    /// `route` or `withdrawal`.
    pub kind: String,
    /// The route id, or the withdrawal's id.
    pub id: String,
    /// The address the receipt was issued to (lower case).
    pub address: String,
    /// The address's part: `sender`, `recipient`, `sender+recipient`, or
    /// `account` (a withdrawal from its netting account).
    pub role: String,
    /// Source node (a withdrawal: the netting book, `netting`).
    pub from_chain: String,
    /// Destination node.
    pub to_chain: String,
    /// Source token.
    pub from_token: String,
    /// Destination token.
    pub to_token: String,
    /// Amount in, source units.
    pub amount_in: String,
    /// Amount delivered (a route: its quoted output; a withdrawal: paid
    /// out), destination units.
    pub amount_out: String,
    /// Every fee withheld, source units (route fee and gas; a withdrawal's
    /// payout cost).
    pub fees: String,
    /// Who received.
    pub recipient: String,
    /// Source transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_tx: Option<String>,
    /// Destination (payout) transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_tx: Option<String>,
    /// When accepted, epoch ms.
    pub created_at: u64,
}

/// A receipt with its signature.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedReceipt {
    /// The receipt.
    pub receipt: Receipt,
    /// `receipt` as canonical JSON: what was signed.
    pub message: String,
    /// EIP-191 signature of `message` by the relayer; absent without a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A netting withdrawal that was paid out, as the receipts need it.
#[derive(Clone, Debug)]
pub struct Withdrawal {
    /// Its id.
    pub id: String,
    /// The chain paid on.
    pub to_chain: u64,
    /// Who was paid.
    pub to_address: String,
    /// Debited from the account, USDC units.
    pub amount: String,
    /// Paid out, USDC units.
    pub paid: String,
    /// The payout cost withheld, USDC units.
    pub payout_cost: String,
    /// The payout transaction.
    pub tx: Option<String>,
    /// When asked, epoch ms.
    pub created_ms: u64,
}

/// The role `address` plays in `r`, when `r` settled for it.
fn role(r: &RouteRecord, is_address: &impl Fn(&str) -> bool) -> Option<&'static str> {
    if r.status != RouteStatus::Done {
        return None;
    }
    match (is_address(&r.sender), is_address(&r.recipient)) {
        (true, true) => Some("sender+recipient"),
        (true, false) => Some("sender"),
        (false, true) => Some("recipient"),
        (false, false) => None,
    }
}

/// The receipts of the delivered routes in `routes` that `is_address`
/// names, newest first.
pub fn of_routes(
    address: &str,
    routes: &[RouteRecord],
    is_address: impl Fn(&str) -> bool,
) -> Vec<Receipt> {
    let mut out: Vec<Receipt> = routes
        .iter()
        .filter_map(|r| {
            let role = role(r, &is_address)?;
            let fees = r.relay_fee.0.saturating_add(r.gas_fee.0);
            Some(Receipt {
                scheme: SCHEME.into(),
                kind: "route".into(),
                id: r.id.clone(),
                address: address.to_lowercase(),
                role: role.into(),
                from_chain: r.from_chain.to_string(),
                to_chain: r.to_chain.to_string(),
                from_token: r.from_token.clone(),
                to_token: r.to_token.clone(),
                amount_in: r.amount.to_string(),
                amount_out: r.estimated.to_string(),
                fees: fees.to_string(),
                recipient: r.recipient.clone(),
                src_tx: r.src_tx.clone(),
                dest_tx: r.dest_tx.clone(),
                created_at: r.created_ms,
            })
        })
        .collect();
    out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    out
}

/// The receipt of a paid-out netting withdrawal of `address`.
pub fn of_withdrawal(address: &str, w: &Withdrawal) -> Receipt {
    Receipt {
        scheme: SCHEME.into(),
        kind: "withdrawal".into(),
        id: w.id.clone(),
        address: address.to_lowercase(),
        role: "account".into(),
        from_chain: "netting".into(),
        to_chain: w.to_chain.to_string(),
        from_token: "USDC".into(),
        to_token: "USDC".into(),
        amount_in: w.amount.clone(),
        amount_out: w.paid.clone(),
        fees: w.payout_cost.clone(),
        recipient: w.to_address.clone(),
        src_tx: None,
        dest_tx: w.tx.clone(),
        created_at: w.created_ms,
    }
}

/// Signs `receipt` (unsigned when the host has no key).
pub fn seal(
    receipt: Receipt,
    signer: Option<&RelayerSigner>,
) -> Result<SignedReceipt, AttestError> {
    let p = crate::statement::seal_parts(&receipt, signer)?;
    Ok(SignedReceipt {
        receipt,
        message: p.message,
        signature: p.signature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_delivered_routes_naming_the_address_get_a_receipt() {
        let mut done = crate::outcome::tests_support::route();
        done.id = "rt_done".into();
        let mut failed = done.clone();
        failed.id = "rt_failed".into();
        failed.status = RouteStatus::Failed;
        let mut other = done.clone();
        other.id = "rt_other".into();
        other.sender = "0x0000000000000000000000000000000000000001".into();
        other.recipient = other.sender.clone();
        let me = done.sender.clone();
        let receipts = of_routes(&me, &[done.clone(), failed, other], |a| {
            a.eq_ignore_ascii_case(&me)
        });
        assert_eq!(receipts.len(), 1);
        let r = &receipts[0];
        assert_eq!(
            (r.id.as_str(), r.role.as_str()),
            ("rt_done", "sender+recipient")
        );
        assert_eq!(
            r.fees,
            done.relay_fee.0.saturating_add(done.gas_fee.0).to_string()
        );
        assert_eq!(r.address, me.to_lowercase());
    }

    #[test]
    fn a_sealed_receipt_recovers_to_the_relayer() {
        let key = RelayerSigner::from_hex(
            "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        )
        .unwrap();
        let r = crate::outcome::tests_support::route();
        let receipt = of_routes(&r.sender, std::slice::from_ref(&r), |_| true).remove(0);
        let signed = seal(receipt, Some(&key)).unwrap();
        let sig: alloy::primitives::Signature = signed.signature.unwrap().parse().unwrap();
        let by = sig
            .recover_address_from_msg(signed.message.as_bytes())
            .unwrap();
        assert_eq!(by, key.address());
        assert!(!signed.message.contains(' '));
    }
}
