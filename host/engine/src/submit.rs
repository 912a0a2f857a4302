//! What a read-only answer hands the client to act on (spec §2.7, §2.10,
//! §4.2 `agent/do`): a ready-to-POST `POST /api/route/execute` body and,
//! when the sender is known, the Permit2 signature request that completes
//! it. The intent solver (`plan.execute`, `plan.sign`) and the agent
//! (`signRequest`) build both here, so they never drift apart.
//!
//! The execute body:
//!
//! - always carries `fromChain`, `toChain`, `fromToken`, `toToken` (contract
//!   address when there is one, else the symbol), `amount`, `toAddress` and
//!   `fromAddress` when known, and `rail` (the rail that was planned; execute
//!   then uses that rail and no other);
//! - **with a known `fromAddress` and an ERC-20 source on an EVM chain**:
//!   `mode: "permit2"`, `live: true` and a `permit2` object whose `owner`,
//!   `permitted.token` and `permitted.amount` are filled in. The client fills
//!   the three fields listed in [`PERMIT2_FILL`] — `permit2.nonce` (any
//!   unused Permit2 nonce of the owner, decimal string), `permit2.deadline`
//!   (unix seconds, decimal string) and `permit2.signature` (0x-hex EIP-712
//!   `PermitTransferFrom` signature by the owner, spender = the relayer) —
//!   and POSTs it;
//! - **otherwise** (sender unknown, or a native/non-EVM source that Permit2
//!   cannot pull): `dryRun: true`, so POSTing it as is rehearses the route
//!   and moves nothing. Add `fromAddress` to the request to get a signable
//!   body.
//!
//! Nothing here signs or sends anything.

use super::route::RouteAsk;
use relay_plugin_api::Amount;
use relay_plugin_api::{ChainRef, Token};
use relay_wire::{ExecuteFields, ExecuteRequest, Permit2Body, PermittedBody, RouteRequest};
use serde::Serialize;
use utoipa::ToSchema;

/// Where the body is POSTed.
pub const SUBMIT_TO: &str = "/api/route/execute";

/// The fields of a Permit2 execute body the client fills before POSTing.
pub const PERMIT2_FILL: [&str; 3] = ["permit2.nonce", "permit2.deadline", "permit2.signature"];

/// A token as a body names it: its contract address, else its symbol.
pub fn token_ref(t: &Token) -> String {
    t.address.clone().unwrap_or_else(|| t.symbol.clone())
}

/// Whether the route can be authorised by one Permit2 signature: an ERC-20
/// on an EVM source, with the owner known.
pub fn signable(ask: &RouteAsk) -> bool {
    matches!(ask.from_chain, ChainRef::Evm(_))
        && ask.from_token.address.is_some()
        && ask.from_address.is_some()
}

/// The route part of an execute body, without mode or run flags: what a
/// sandbox execute needs (nothing is signed there).
pub fn route_body(ask: &RouteAsk, rail: Option<&str>) -> ExecuteRequest {
    ExecuteRequest {
        route: RouteRequest {
            from_chain: Some(relay_wire::Node::from(ask.from_chain).into()),
            to_chain: Some(relay_wire::Node::from(ask.to_chain).into()),
            amount: Some(ask.amount.to_string().into()),
            from_token: Some(token_ref(&ask.from_token)),
            to_token: Some(token_ref(&ask.to_token)),
            to_address: ask.recipient.clone(),
            from_address: ask.from_address.clone(),
            ..RouteRequest::default()
        },
        execute: ExecuteFields {
            rail: rail.map(str::to_string),
            ..ExecuteFields::default()
        },
    }
}

/// The ready-to-POST execute body (module docs: Permit2 when signable,
/// otherwise a dry run).
pub fn execute_body(ask: &RouteAsk, rail: Option<&str>) -> ExecuteRequest {
    let mut body = route_body(ask, rail);
    match (&ask.from_address, &ask.from_token.address) {
        (Some(owner), Some(token)) if signable(ask) => {
            body.execute.mode = Some("permit2".into());
            body.execute.live = Some(true);
            body.execute.permit2 = Some(Permit2Body {
                owner: owner.clone(),
                permitted: PermittedBody {
                    token: token.clone(),
                    amount: ask.amount,
                },
                nonce: None,
                deadline: None,
                signature: None,
            });
        }
        _ => body.execute.dry_run = Some(true),
    }
    body
}

/// The EIP-712 domain of a Permit2 signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Permit2Domain {
    /// `Permit2`.
    pub name: String,
    /// The source chain.
    pub chain_id: u64,
    /// The Permit2 contract.
    pub verifying_contract: String,
}

/// What a client signs to complete an execute body (spec §4.2 `signRequest`).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignRequest {
    /// The source chain.
    pub chain_id: u64,
    /// The spender the signature names (the relayer).
    pub spender: String,
    /// The Permit2 contract.
    pub permit2_contract: String,
    /// The token pulled.
    pub token_address: String,
    /// The amount pulled.
    #[schema(value_type = String)]
    pub amount: Amount,
    /// Who signs.
    pub owner: Option<String>,
    /// `PermitTransferFrom`.
    pub primary_type: String,
    /// The EIP-712 domain.
    pub domain: Permit2Domain,
    /// The body fields to fill with the signature.
    pub fill: Vec<String>,
    /// Where to POST the body.
    pub submit_to: String,
    /// The body to POST.
    pub submit_body: ExecuteRequest,
}

/// The Permit2 signature request that completes [`execute_body`]: the
/// chain, the spender (the relayer), the Permit2 contract, the token and
/// amount, the EIP-712 domain and type, where to submit and what; `None`
/// when the route is not [`signable`].
pub fn sign_request(
    ask: &RouteAsk,
    rail: Option<&str>,
    spender: &str,
    permit2: &str,
) -> Option<SignRequest> {
    let ChainRef::Evm(chain_id) = ask.from_chain else {
        return None;
    };
    let token = ask.from_token.address.as_ref().filter(|_| signable(ask))?;
    Some(SignRequest {
        chain_id,
        spender: spender.into(),
        permit2_contract: permit2.into(),
        token_address: token.clone(),
        amount: ask.amount,
        owner: ask.from_address.clone(),
        primary_type: "PermitTransferFrom".into(),
        domain: Permit2Domain {
            name: "Permit2".into(),
            chain_id,
            verifying_contract: permit2.into(),
        },
        fill: PERMIT2_FILL.map(String::from).to_vec(),
        submit_to: SUBMIT_TO.into(),
        submit_body: execute_body(ask, rail),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(from: Option<&str>, token: Option<&str>) -> RouteAsk {
        RouteAsk {
            from_chain: ChainRef::Evm(8453),
            to_chain: ChainRef::Evm(42161),
            from_token: Token {
                symbol: "USDC".into(),
                address: token.map(str::to_string),
                decimals: 6,
            },
            to_token: Token {
                symbol: "USDC".into(),
                address: Some("0x2".into()),
                decimals: 6,
            },
            amount: Amount::from_u128(5_000_000),
            from_address: from.map(str::to_string),
            recipient: from.map(str::to_string),
            slippage_bps: 50,
        }
    }

    #[test]
    fn a_known_sender_gets_a_permit2_body_with_three_fields_to_fill() {
        let a = ask(Some("0xabc"), Some("0x1"));
        let b = serde_json::to_value(execute_body(&a, Some("floatlane"))).unwrap();
        assert_eq!(b["mode"], "permit2");
        assert_eq!(b["live"], true);
        assert_eq!(b["rail"], "floatlane");
        assert_eq!(b["permit2"]["owner"], "0xabc");
        assert_eq!(b["permit2"]["permitted"]["amount"], "5000000");
        for f in PERMIT2_FILL {
            let key = f.trim_start_matches("permit2.");
            assert!(b["permit2"][key].is_null(), "{f} is left to fill");
        }
        let s = sign_request(&a, Some("floatlane"), "0xrelayer", "0xpermit2").unwrap();
        let s = serde_json::to_value(s).unwrap();
        assert_eq!(
            (s["chainId"].as_u64(), s["spender"].as_str()),
            (Some(8453), Some("0xrelayer"))
        );
        assert_eq!(s["submitBody"], b);
    }

    #[test]
    fn an_unknown_sender_or_native_source_gets_a_dry_run_and_no_sign_request() {
        for a in [ask(None, Some("0x1")), ask(Some("0xabc"), None)] {
            let b = serde_json::to_value(execute_body(&a, None)).unwrap();
            assert_eq!(b["dryRun"], true);
            assert!(b.get("mode").is_none() && b.get("permit2").is_none());
            assert!(sign_request(&a, None, "0xr", "0xp").is_none());
        }
    }
}
