//! x402 for sponsorships: where a plan is paid and its invoice. The wire
//! protocol (headers, invoices, payments, receipts) and the payment's
//! checks are `relay-x402`'s.

use alloy::primitives::Address;
pub use relay_x402::*;

use crate::{plan::Plan, SponsorError, SponsorService};

impl SponsorService {
    /// Who is paid on `chain`.
    pub fn pay_to(&self) -> Option<Address> {
        self.sponsor_config()
            .pay_to
            .as_deref()
            .and_then(|a| a.parse().ok())
            .or(self.deps.parts.senders.as_ref().map(|s| s.relayer))
    }

    /// Where a sponsorship on `chain` is paid, to `pay_to`.
    fn checkout_to(&self, chain: u64, pay_to: Address) -> Result<checkout::Checkout, SponsorError> {
        let cfg = self.sponsor_config();
        let domain = AssetDomain {
            name: cfg.asset_name.clone(),
            version: cfg.asset_version.clone(),
        };
        checkout::Checkout::on(
            &self.deps.parts.config,
            chain,
            (&cfg.asset, domain),
            pay_to,
            (&cfg.networks, cfg.max_timeout_secs),
        )
        .ok_or(SponsorError::UnsupportedChain(chain))
    }

    /// Where a sponsorship on `chain` is paid.
    pub fn checkout(&self, chain: u64) -> Result<checkout::Checkout, SponsorError> {
        let pay_to = self
            .pay_to()
            .ok_or(SponsorError::RelayerUnavailable(chain))?;
        self.checkout_to(chain, pay_to)
    }

    /// The invoice of `plan` (v1 form) for `resource` (payable to nobody
    /// on a host that cannot send: no payment verifies then).
    pub fn requirement(&self, plan: &Plan, resource: &str) -> Result<Requirement, SponsorError> {
        let checkout = self.checkout_to(plan.chain_id, self.pay_to().unwrap_or_default())?;
        let description = format!(
            "sponsored EIP-7702 transaction for {} on chain {}",
            plan.authority, plan.chain_id
        );
        let amount = plan.price.amount.parse().unwrap_or_default();
        Ok(checkout.requirement(amount, resource, description))
    }
}
