//! Paying an x402 invoice with the `exact` EVM scheme (x402 v1): the payer
//! signs an EIP-3009 `transferWithAuthorization` of the invoice's asset to
//! its `payTo`, sent base64-encoded in the `X-PAYMENT` header.

use alloy::{
    primitives::{keccak256, Address, Bytes, U256},
    signers::local::PrivateKeySigner,
};
use base64::{engine::general_purpose::STANDARD, Engine};
use relay_chain::eip3009::{self, Invoice, SignedTransfer};
use serde_json::{json, Value};

use crate::{DevnetError, Result, Token};

/// What a payment pays: the asset (its chain, address and EIP-712 domain
/// name and version), the network's x402 name, the payee, the value and
/// the end of its validity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exact {
    /// The chain the asset is on.
    pub chain_id: u64,
    /// The network as x402 v1 names it (`base`).
    pub network: String,
    /// The token paid with.
    pub asset: Address,
    /// Its EIP-712 domain name (`USD Coin`).
    pub name: String,
    /// Its EIP-712 domain version (`2`).
    pub version: String,
    /// The payee.
    pub pay_to: Address,
    /// Base units.
    pub value: U256,
    /// Valid strictly before this (unix seconds).
    pub valid_before: u64,
}

impl Exact {
    /// `value` of the devnet USDC at `asset` on `chain_id` (network
    /// `network`) to `pay_to`, valid until `valid_before`.
    pub fn usdc(
        (chain_id, network, asset): (u64, &str, Address),
        pay_to: Address,
        value: U256,
        valid_before: u64,
    ) -> Self {
        Exact {
            chain_id,
            network: network.into(),
            asset,
            name: Token::Usdc.name().into(),
            version: "2".into(),
            pay_to,
            value,
            valid_before,
        }
    }

    /// What a v1 invoice's entry (`accepts[i]` of a 402 answer) asks on
    /// `chain_id`: `maxAmountRequired` of `asset` to `payTo` on `network`,
    /// under the domain in `extra`; valid until `valid_before`.
    pub fn from_accept(accept: &Value, chain_id: u64, valid_before: u64) -> Result<Self> {
        let text = |k: &str| {
            accept[k]
                .as_str()
                .ok_or_else(|| DevnetError::Invoice(format!("accepts[].{k} missing: {accept}")))
        };
        let extra = |k: &str| {
            accept["extra"][k]
                .as_str()
                .map(String::from)
                .ok_or_else(|| DevnetError::Invoice(format!("accepts[].extra.{k} missing")))
        };
        let bad = |k: &str| DevnetError::Invoice(format!("accepts[].{k} malformed: {accept}"));
        Ok(Exact {
            chain_id,
            network: text("network")?.into(),
            asset: text("asset")?.parse().map_err(|_| bad("asset"))?,
            name: extra("name")?,
            version: extra("version")?,
            pay_to: text("payTo")?.parse().map_err(|_| bad("payTo"))?,
            value: text("maxAmountRequired")?
                .parse()
                .map_err(|_| bad("maxAmountRequired"))?,
            valid_before,
        })
    }
}

/// The `X-PAYMENT` header (base64 JSON, x402 v1) of `payer` paying `e`
/// under a fresh random authorization nonce.
pub fn x_payment(payer: &PrivateKeySigner, e: &Exact) -> String {
    let mut t = SignedTransfer {
        from: payer.address(),
        to: e.pay_to,
        value: e.value,
        valid_after: U256::ZERO,
        valid_before: U256::from(e.valid_before),
        nonce: keccak256(PrivateKeySigner::random().to_bytes()),
        signature: Bytes::new(),
    };
    let invoice = Invoice {
        chain_id: e.chain_id,
        token: e.asset,
        name: e.name.clone(),
        version: e.version.clone(),
        pay_to: e.pay_to,
        amount: e.value,
        now_secs: 0,
    };
    let sig = super::sign(payer, &eip3009::digest(&t, &invoice));
    t.signature = sig.as_bytes().to_vec().into();
    let v = json!({"x402Version": 1, "scheme": "exact", "network": e.network, "payload": {
        "signature": t.signature.to_string(),
        "authorization": {"from": t.from, "to": t.to, "value": t.value.to_string(),
            "validAfter": "0", "validBefore": e.valid_before.to_string(), "nonce": t.nonce.to_string()}}});
    STANDARD.encode(v.to_string())
}
