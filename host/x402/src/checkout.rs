//! Where a paying feature takes its payments and how a payment is checked
//! before anything is sent: one chain's EIP-3009 asset, the payee, the
//! invoice ([`Requirement`]) and every check of a [`Payment`] — network,
//! signature, payee, amount, window, an unused nonce, the payer's balance
//! and the settlement simulated from the relayer. Nothing that can revert
//! is broadcast at the relayer's expense.

use std::collections::BTreeMap;

use alloy::primitives::{Address, U256};
use relay_chain::{
    eip3009::{self, Invoice, PaymentError, SignedTransfer},
    reader::{ChainReader, ReadError, SimCall},
};

use crate::{caip2, network_name, AssetDomain, Payment, Requirement};

/// Gas a settlement (`transferWithAuthorization`) is given.
pub const SETTLE_GAS: u64 = 100_000;

/// Seconds kept before a payment's `validBefore` so its settlement can mine.
const SETTLE_SECS: u64 = 5;

/// One chain's payment asset and payee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    /// The chain payments are made on.
    pub chain_id: u64,
    /// The asset (an EIP-3009 token such as USDC).
    pub token: Address,
    /// The asset's decimals.
    pub decimals: u8,
    /// The asset's EIP-712 domain.
    pub domain: AssetDomain,
    /// Who is paid (the relayer, so it can settle and refund).
    pub pay_to: Address,
    /// The chain's x402 v1 name (`base`, or `eip155:<id>`).
    pub network: String,
    /// How long a payment may take, seconds (`maxTimeoutSeconds`).
    pub max_timeout_secs: u64,
}

/// Why a payment is refused, or could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// Not for this invoice's network.
    #[error("payment: {0}")]
    Malformed(String),
    /// Refused: signature, payee, amount, window, nonce, funds.
    #[error(transparent)]
    Payment(#[from] PaymentError),
    /// The chain could not be read.
    #[error(transparent)]
    Chain(#[from] ReadError),
}

impl Checkout {
    /// The checkout on `chain` for `asset` of the chain's `tokens` (the
    /// host's `[chains]`), paying `pay_to`.
    pub fn on(
        config: &relay_config::HostConfig,
        chain: u64,
        (asset, domain): (&str, AssetDomain),
        pay_to: Address,
        (networks, max_timeout_secs): (&BTreeMap<String, String>, u64),
    ) -> Option<Checkout> {
        let t = config.chains.get(&chain.to_string())?.tokens.get(asset)?;
        Some(Checkout {
            chain_id: chain,
            token: t.address.parse().ok()?,
            decimals: t.decimals,
            domain,
            pay_to,
            network: network_name(networks, chain),
            max_timeout_secs,
        })
    }

    /// `cents` of USD in the asset's smallest units, at par (a USD
    /// stablecoin).
    pub fn of_cents(&self, cents: u64) -> U256 {
        let scale = U256::from(10u64).pow(U256::from(self.decimals.saturating_sub(2)));
        U256::from(cents) * scale
    }

    /// The invoice for `amount` of the asset paying for `resource`.
    pub fn requirement(&self, amount: U256, resource: &str, description: String) -> Requirement {
        Requirement {
            scheme: "exact".into(),
            network: self.network.clone(),
            max_amount_required: amount.to_string(),
            asset: self.token.to_string(),
            pay_to: self.pay_to.to_string(),
            resource: resource.into(),
            description,
            mime_type: "application/json".into(),
            max_timeout_seconds: self.max_timeout_secs,
            extra: self.domain.clone(),
        }
    }

    /// `<chain>:<token>:<payer>:<nonce>`: one payment pays for one thing.
    pub fn payment_key(&self, t: &SignedTransfer) -> String {
        format!(
            "{}:{:#x}:{:#x}:{}",
            self.chain_id, self.token, t.from, t.nonce
        )
    }

    /// Every check of `payment` against an invoice for `amount`, at
    /// `now_secs`, with `relayer` the account that would settle it.
    pub async fn verify(
        &self,
        reader: &ChainReader,
        relayer: Address,
        payment: &Payment,
        (amount, now_secs): (U256, u64),
    ) -> Result<(), CheckoutError> {
        let names = [self.network.clone(), caip2(self.chain_id)];
        if !names.contains(&payment.network) {
            return Err(CheckoutError::Malformed(format!(
                "network {:?} is not this invoice's ({})",
                payment.network,
                names.join(" or ")
            )));
        }
        let invoice = Invoice {
            chain_id: self.chain_id,
            token: self.token,
            name: self.domain.name.clone(),
            version: self.domain.version.clone(),
            pay_to: self.pay_to,
            amount,
            now_secs,
        };
        let t = &payment.transfer;
        eip3009::verify_offline(t, &invoice, SETTLE_SECS)?;
        if !reader
            .authorization_unused(self.chain_id, self.token, t.from, t.nonce)
            .await?
        {
            return Err(PaymentError::NonceUsed(t.nonce).into());
        }
        match self.refusal(reader, relayer, t).await? {
            Some(why) => Err(PaymentError::Unfunded(why).into()),
            None => Ok(()),
        }
    }

    /// Why settling `t` from `relayer` would fail now — the payer's
    /// balance is short, or the settlement simulated at the pending block
    /// reverts — or `None` when it would go through.
    pub async fn refusal(
        &self,
        reader: &ChainReader,
        relayer: Address,
        t: &SignedTransfer,
    ) -> Result<Option<String>, CheckoutError> {
        let held = reader
            .token_balance(self.chain_id, self.token, t.from)
            .await?;
        if held < t.value {
            return Ok(Some(format!(
                "{:#x} holds {held} of the payment asset, the payment moves {}",
                t.from, t.value
            )));
        }
        let sim = SimCall {
            from: relayer,
            to: self.token,
            data: eip3009::settle_calldata(t)?,
            value: U256::ZERO,
            gas_limit: Some(SETTLE_GAS),
        };
        Ok(match reader.simulate(self.chain_id, &sim).await? {
            Ok(_) => None,
            Err(revert) => Some(format!("its settlement would revert ({})", revert.message)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_are_the_assets_units_at_par() {
        let c = Checkout {
            chain_id: 8453,
            token: Address::ZERO,
            decimals: 6,
            domain: AssetDomain {
                name: "USD Coin".into(),
                version: "2".into(),
            },
            pay_to: Address::ZERO,
            network: "base".into(),
            max_timeout_secs: 300,
        };
        assert_eq!(c.of_cents(400), U256::from(4_000_000u64));
        assert_eq!(c.of_cents(1), U256::from(10_000u64));
        let r = c.requirement(c.of_cents(51_200), "http://h/x", "a name".into());
        assert_eq!(
            (r.max_amount_required.as_str(), r.network.as_str()),
            ("512000000", "base")
        );
    }
}
