//! Building an evidence bundle's payload from what the host holds: the
//! route record, its receipts ([`crate::outcome::collect`]) and the user's
//! signature with the EIP-712 data it covers.

use alloy::primitives::Address;
use relay_chain::{
    router::{DOMAIN_NAME, DOMAIN_VERSION},
    typed::{self, Domain},
};
use relay_types::{
    route::RouteRecord,
    router::{RouterAuth, RouterForm},
    SignedPermit,
};
use serde_json::Value;

use crate::evidence::{Authorization, OutcomeEvidence, Payload, RouteFacts, TxEvidence};

/// The route's terms as a bundle states them.
pub fn facts(r: &RouteRecord) -> RouteFacts {
    let text = |v: Value| v.as_str().map(str::to_string).unwrap_or_default();
    RouteFacts {
        id: r.id.clone(),
        status: text(serde_json::to_value(r.status).unwrap_or_default()),
        rail: r.rail.clone(),
        lane: r.lane.clone(),
        from_chain: r.from_chain.to_string(),
        to_chain: r.to_chain.to_string(),
        from_token: r.from_token.clone(),
        to_token: r.to_token.clone(),
        amount: r.amount.to_string(),
        estimated: r.estimated.to_string(),
        min_out: r.min_out.to_string(),
        relay_fee: r.relay_fee.to_string(),
        gas_fee: r.gas_fee.to_string(),
        sender: r.sender.clone(),
        recipient: r.recipient.clone(),
        src_tx: r.src_tx.clone(),
        dest_tx: r.dest_tx.clone(),
        created_ms: r.created_ms,
    }
}

/// The user's signature on `r` with its typed data, when the route carries
/// one an EOA made (a contract wallet's ERC-1271 bytes are not
/// recoverable offline and are left out; `mode: self` has none).
/// `permit2` is Permit2's address, `relayer` the spender of a plain
/// Permit2 transfer.
pub fn authorization(r: &RouteRecord, permit2: Address, relayer: Address) -> Option<Authorization> {
    let chain = r.from_chain.evm_id()?;
    let permit2_domain = Domain {
        name: "Permit2".into(),
        version: None,
        chain_id: chain,
        verifying_contract: permit2,
    };
    let (kind, typed_data, signature, signer) = match (&r.router, &r.permit) {
        (Some(auth), _) => router_form(auth, permit2_domain, chain)?,
        (None, Some(p)) => (
            "permit2",
            typed::permit_transfer(&permit2_domain, p, relayer),
            p.signature.to_vec(),
            p.owner,
        ),
        (None, None) => return None,
    };
    if signature.len() != 65 {
        return None;
    }
    Some(Authorization {
        kind: kind.into(),
        digest: typed::signing_hash(&typed_data).ok()?,
        typed_data,
        signature: format!("0x{}", hex::encode(signature)),
        signer,
    })
}

fn router_form(
    auth: &RouterAuth,
    permit2: Domain,
    chain: u64,
) -> Option<(&'static str, Value, Vec<u8>, Address)> {
    Some(match auth.form.as_ref()? {
        RouterForm::Permit2Witness { permit, .. } => witness(auth, permit2, permit),
        RouterForm::Order {
            owner,
            token,
            amount,
            nonce,
            signature,
            token_permit,
        } => {
            let domain = Domain {
                name: DOMAIN_NAME.into(),
                version: Some(DOMAIN_VERSION.into()),
                chain_id: chain,
                verifying_contract: auth.router,
            };
            let kind = if token_permit.is_some() {
                "erc2612"
            } else {
                "intent"
            };
            let data = typed::order(&domain, (*owner, *token, *amount, *nonce), &auth.intent);
            (kind, data, signature.to_vec(), *owner)
        }
    })
}

fn witness(
    auth: &RouterAuth,
    permit2: Domain,
    permit: &SignedPermit,
) -> (&'static str, Value, Vec<u8>, Address) {
    let data = typed::witness(&permit2, permit, auth.router, &auth.intent);
    (
        "permit2-witness",
        data,
        permit.signature.to_vec(),
        permit.owner,
    )
}

/// The payload of `r`'s bundle.
pub fn payload(
    r: &RouteRecord,
    authorization: Option<Authorization>,
    transactions: Vec<TxEvidence>,
    outcome: OutcomeEvidence,
    issued_at: u64,
) -> Payload {
    Payload {
        issued_at,
        route: facts(r),
        authorization,
        attestation: None,
        plan: serde_json::to_value(&r.plan).unwrap_or_default(),
        transactions,
        outcome,
    }
}
