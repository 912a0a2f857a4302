//! relay-x402: x402 (HTTP 402 payments) as the host speaks it — the
//! invoice, the payment, the settlement receipt, v1 and v2 of the protocol.
//! What is sold, who is paid and how the authorization is settled on chain
//! are the paying feature's (`relay-sponsor`, the name registry).
//!
//! | | v1 | v2 |
//! |---|---|---|
//! | invoice | 402 body `{x402Version:1, error, accepts[]}` (`maxAmountRequired`, `network` a name such as `base`) | header `PAYMENT-REQUIRED`: base64 JSON `{x402Version:2, error, resource, accepts[]}` (`amount`, `network` CAIP-2 `eip155:<id>`) |
//! | payment | header `X-PAYMENT`: base64 `{x402Version:1, scheme, network, payload}` | header `PAYMENT-SIGNATURE`: base64 `{x402Version:2, accepted, payload}` |
//! | receipt | header `X-PAYMENT-RESPONSE` | header `PAYMENT-RESPONSE` |
//!
//! A 402 carries both invoices (the v1 body and the v2 header); the
//! receipt is sent under both names. The payload is the `exact` EVM
//! scheme's: `{signature, authorization:{from, to, value, validAfter,
//! validBefore, nonce}}`, an EIP-3009 authorization of the payment asset.

pub mod checkout;
pub mod errors;
pub mod http;
pub mod orders;

use std::collections::BTreeMap;

use alloy::primitives::{Address, Bytes, B256, U256};
use base64::{engine::general_purpose::STANDARD, Engine};
use relay_chain::eip3009::SignedTransfer;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

/// v1's payment header.
pub const X_PAYMENT: &str = "x-payment";
/// v1's receipt header.
pub const X_PAYMENT_RESPONSE: &str = "x-payment-response";
/// v2's payment header.
pub const PAYMENT_SIGNATURE: &str = "payment-signature";
/// v2's invoice header.
pub const PAYMENT_REQUIRED: &str = "payment-required";
/// v2's receipt header.
pub const PAYMENT_RESPONSE: &str = "payment-response";

/// The `extra` of an EVM `exact` requirement: the token's EIP-712 domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AssetDomain {
    /// EIP-712 domain name (`USD Coin`).
    pub name: String,
    /// EIP-712 domain version (`2`).
    pub version: String,
}

/// One accepted way to pay (x402 v1 `PaymentRequirements`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Requirement {
    /// `exact`.
    pub scheme: String,
    /// The network's x402 name (`base`) or `eip155:<id>`.
    pub network: String,
    /// Smallest units of the asset.
    pub max_amount_required: String,
    /// The asset's contract.
    pub asset: String,
    /// Who is paid.
    pub pay_to: String,
    /// The resource paid for (this endpoint's URL).
    pub resource: String,
    /// What is paid for.
    pub description: String,
    /// The resource's response type.
    pub mime_type: String,
    /// How long the payment may take, seconds.
    pub max_timeout_seconds: u64,
    /// The asset's EIP-712 domain.
    pub extra: AssetDomain,
}

/// The x402 v1 name of `chain` (the operator's `networks`, keyed by chain
/// id, else the well-known names), else its CAIP-2 id.
pub fn network_name(networks: &BTreeMap<String, String>, chain: u64) -> String {
    if let Some(n) = networks.get(&chain.to_string()) {
        return n.clone();
    }
    let known = match chain {
        8453 => "base",
        84532 => "base-sepolia",
        1 => "ethereum",
        10 => "optimism",
        137 => "polygon",
        42161 => "arbitrum",
        43114 => "avalanche",
        _ => return caip2(chain),
    };
    known.into()
}

/// `eip155:<chain>`.
pub fn caip2(chain: u64) -> String {
    format!("eip155:{chain}")
}

/// The v2 `PAYMENT-REQUIRED` header's value for `r`.
pub fn payment_required_header(r: &Requirement, chain: u64, error: &str) -> String {
    let v2 = json!({
        "x402Version": 2,
        "error": error,
        "resource": {"url": r.resource, "description": r.description, "mimeType": r.mime_type},
        "accepts": [{
            "scheme": r.scheme,
            "network": caip2(chain),
            "amount": r.max_amount_required,
            "asset": r.asset,
            "payTo": r.pay_to,
            "maxTimeoutSeconds": r.max_timeout_seconds,
            "extra": r.extra,
        }],
    });
    STANDARD.encode(v2.to_string())
}

/// A settlement receipt (`X-PAYMENT-RESPONSE` / `PAYMENT-RESPONSE`), base64.
pub fn payment_response_header(success: bool, tx: &str, network: &str, payer: &str) -> String {
    let v = json!({"success": success, "transaction": tx, "network": network, "payer": payer});
    STANDARD.encode(v.to_string())
}

/// A payment header that is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(pub String);

fn malformed(m: impl std::fmt::Display) -> Malformed {
    Malformed(m.to_string())
}

/// A payment header's JSON, v1 or v2 (the fields each version names).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PaymentHeader {
    /// 1 when absent.
    x402_version: Option<u64>,
    /// v1: the scheme.
    scheme: Option<String>,
    /// v1: the network's name.
    network: Option<String>,
    /// v2: the requirement the payer accepted.
    accepted: Option<Accepted>,
    /// The `exact` EVM scheme's payload.
    payload: ExactPayload,
}

/// v2's `accepted`.
#[derive(Deserialize)]
struct Accepted {
    scheme: String,
    network: String,
}

/// The `exact` EVM scheme's payload.
#[derive(Deserialize)]
struct ExactPayload {
    signature: Bytes,
    authorization: Authorization,
}

/// An EIP-3009 authorization, its amounts decimal strings.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Authorization {
    from: Address,
    to: Address,
    value: Decimal,
    valid_after: Decimal,
    valid_before: Decimal,
    nonce: B256,
}

/// A decimal integer string.
struct Decimal(U256);

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse::<U256>()
            .map(Decimal)
            .map_err(|_| serde::de::Error::custom("not an integer"))
    }
}

/// A decoded payment header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    /// 1 or 2.
    pub version: u8,
    /// The network it names.
    pub network: String,
    /// The authorization.
    pub transfer: SignedTransfer,
}

/// Decodes a payment header (`X-PAYMENT` v1 or `PAYMENT-SIGNATURE` v2):
/// base64 JSON of the `exact` EVM scheme; a bad field is named by its path.
pub fn decode_payment(header: &str) -> Result<Payment, Malformed> {
    let raw = STANDARD
        .decode(header.trim())
        .map_err(|_| malformed("the header is not base64"))?;
    let mut json = serde_json::Deserializer::from_slice(&raw);
    let h: PaymentHeader = serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            malformed("not JSON")
        } else if path == "." {
            malformed(format!("the payment: {inner}"))
        } else {
            malformed(format!("{path}: {inner}"))
        }
    })?;
    let version = h.x402_version.unwrap_or(1);
    let (scheme, network) = match (version, h.accepted) {
        (1, _) => (
            h.scheme.ok_or_else(|| malformed("scheme is missing"))?,
            h.network.ok_or_else(|| malformed("network is missing"))?,
        ),
        (2, Some(a)) => (a.scheme, a.network),
        (2, None) => return Err(malformed("accepted is missing")),
        (n, _) => return Err(malformed(format!("x402Version {n} is not served (1 or 2)"))),
    };
    if scheme != "exact" {
        return Err(malformed(format!(
            "scheme {scheme:?} is not served (exact)"
        )));
    }
    let (a, signature) = (h.payload.authorization, h.payload.signature);
    Ok(Payment {
        version: version as u8,
        network,
        transfer: SignedTransfer {
            from: a.from,
            to: a.to,
            value: a.value.0,
            valid_after: a.valid_after.0,
            valid_before: a.valid_before.0,
            nonce: a.nonce,
            signature,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn encoded(v: Value) -> String {
        STANDARD.encode(v.to_string())
    }

    fn payload() -> Value {
        json!({"signature": format!("0x{}", "11".repeat(65)), "authorization": {
            "from": "0x000000000000000000000000000000000000000a",
            "to": "0x000000000000000000000000000000000000000b",
            "value": "1500", "validAfter": "0", "validBefore": "99",
            "nonce": format!("0x{}", "22".repeat(32))}})
    }

    #[test]
    fn both_versions_decode() {
        let v1 = decode_payment(&encoded(
            json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": payload()}),
        ))
        .unwrap();
        assert_eq!((v1.version, v1.network.as_str()), (1, "base"));
        assert_eq!(v1.transfer.value, U256::from(1500u64));
        let v2 = decode_payment(&encoded(json!({"x402Version": 2,
            "accepted": {"scheme": "exact", "network": "eip155:8453"}, "payload": payload()})))
        .unwrap();
        assert_eq!((v2.version, v2.network.as_str()), (2, "eip155:8453"));
        assert_eq!(v1.transfer, v2.transfer);
    }

    #[test]
    fn malformed_payments_are_named() {
        let e = decode_payment("%%%").unwrap_err().to_string();
        assert!(e.contains("base64"), "{e}");
        let mut p = payload();
        p["authorization"]["value"] = json!("lots");
        let e = decode_payment(&encoded(
            json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": p}),
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("value"), "{e}");
        let e = decode_payment(&encoded(
            json!({"x402Version": 1, "scheme": "upto", "network": "base", "payload": payload()}),
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("upto"), "{e}");
        let mut p = payload();
        p["authorization"]["to"] = json!("0x12");
        let e = decode_payment(&encoded(
            json!({"x402Version": 2, "accepted": {"scheme": "exact", "network": "eip155:1"}, "payload": p}),
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("payload.authorization.to"), "{e}");
        let e = decode_payment(&encoded(json!({"x402Version": 2, "payload": payload()})))
            .unwrap_err()
            .to_string();
        assert!(e.contains("accepted"), "{e}");
        let e = decode_payment(&STANDARD.encode("{not json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not JSON"), "{e}");
    }
}
