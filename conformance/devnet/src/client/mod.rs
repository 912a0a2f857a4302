//! What a client of the relay signs and sends in its paid flows, built
//! from a key and the devnet's addresses — one home for the integration
//! tests and the soak:
//!
//! - [`sponsor`]: a sponsored EIP-7702 transaction's ask (the authorization
//!   tuple delegating to the batch executor, the `executeSigned` batch);
//! - [`x402`]: the `X-PAYMENT` header that pays an x402 invoice (an
//!   EIP-3009 `transferWithAuthorization` of the invoice's asset);
//! - [`ncaccount`]: the yield account — an agent's vault shares and the
//!   relayer's share allowance opened on chain, the EIP-712 spend intent.
//!
//! The encodings are `relay_chain`'s (the host checks what the client
//! signs with the same code); only the JSON shapes are built here.

pub mod ncaccount;
pub mod sponsor;
pub mod x402;

use alloy::signers::{local::PrivateKeySigner, Signature, SignerSync};

/// `signer`'s signature of the digest `hash` as is (local signing does not
/// fail).
fn sign(signer: &PrivateKeySigner, hash: &alloy::primitives::B256) -> Signature {
    signer
        .sign_hash_sync(hash)
        .expect("local signing does not fail")
}

#[cfg(test)]
mod tests {
    use alloy::primitives::{Address, U256};
    use base64::{engine::general_purpose::STANDARD, Engine};
    use relay_chain::{eip3009, eip7702, vault};
    use serde_json::{json, Value};

    use super::*;

    fn hex_bytes(v: &Value) -> Vec<u8> {
        alloy::hex::decode(v.as_str().unwrap()).unwrap()
    }

    #[test]
    fn the_authorization_recovers_to_the_user() {
        let user = crate::keys::anvil_signer(3);
        let t = sponsor::authorization(&user, 8453, crate::DELEGATE_ADDRESS, 0);
        let auth = eip7702::Authorization {
            chain_id: U256::from(8453u64),
            address: crate::DELEGATE_ADDRESS,
            nonce: 0,
        };
        let r: U256 = t["r"].as_str().unwrap().parse().unwrap();
        let s: U256 = t["s"].as_str().unwrap().parse().unwrap();
        let sig = Signature::new(r, s, t["yParity"] == 1);
        let signed = auth.into_signed(sig);
        assert_eq!(eip7702::authority(&signed), Ok(user.address()));
    }

    #[test]
    fn a_payment_of_an_invoice_verifies_as_the_host_checks_it() {
        let payer = crate::keys::anvil_signer(4);
        let (usdc, relayer) = (Address::repeat_byte(0x11), Address::repeat_byte(0x22));
        let accept = json!({"scheme": "exact", "network": "base", "maxAmountRequired": "31337",
            "asset": usdc, "payTo": relayer, "extra": {"name": "USD Coin", "version": "2"}});
        let e = x402::Exact::from_accept(&accept, 8453, 1_000).unwrap();
        assert_eq!(
            e,
            x402::Exact::usdc((8453, "base", usdc), relayer, U256::from(31337u64), 1_000)
        );
        assert!(x402::Exact::from_accept(&json!({"network": "base"}), 8453, 1).is_err());
        let header: Value =
            serde_json::from_slice(&STANDARD.decode(x402::x_payment(&payer, &e)).unwrap()).unwrap();
        let a = &header["payload"]["authorization"];
        let t = eip3009::SignedTransfer {
            from: a["from"].as_str().unwrap().parse().unwrap(),
            to: a["to"].as_str().unwrap().parse().unwrap(),
            value: a["value"].as_str().unwrap().parse().unwrap(),
            valid_after: U256::ZERO,
            valid_before: a["validBefore"].as_str().unwrap().parse().unwrap(),
            nonce: a["nonce"].as_str().unwrap().parse().unwrap(),
            signature: hex_bytes(&header["payload"]["signature"]).into(),
        };
        let invoice = eip3009::Invoice {
            chain_id: 8453,
            token: usdc,
            name: e.name.clone(),
            version: e.version.clone(),
            pay_to: relayer,
            amount: e.value,
            now_secs: 500,
        };
        assert_eq!(t.from, payer.address());
        assert_eq!(eip3009::verify_offline(&t, &invoice, 5), Ok(()));
    }

    #[test]
    fn a_spend_intent_recovers_to_the_agent() {
        let agent = crate::keys::anvil_signer(5);
        let v = crate::deploy::vault_address();
        let intent = ncaccount::Intent {
            agent: agent.address(),
            src_chain: 8453,
            amount: U256::from(5_000_000u64),
            to_chain: 42161,
            to_address: Address::repeat_byte(0x33),
            nonce: U256::from(7u64),
            deadline: 2_000_000_000,
        };
        let body = ncaccount::spend_body(&agent, &intent, (8453, v));
        let spend = vault::Spend {
            agent: intent.agent,
            srcChain: U256::from(8453u64),
            amount: intent.amount,
            toChain: U256::from(42161u64),
            toAddress: intent.to_address,
            nonce: intent.nonce,
            deadline: U256::from(intent.deadline),
        };
        let sig = hex_bytes(&body["signature"]);
        assert_eq!(vault::signer(&spend, 8453, v, &sig), Ok(agent.address()));
        assert_eq!(body["intent"]["amount"], "5000000");
        assert_eq!(body["live"], true);
    }
}
