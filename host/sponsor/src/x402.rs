//! x402 for sponsorships: the invoice of a plan and who is paid. The wire
//! protocol (headers, invoices, payments, receipts) is `relay-x402`'s.

use alloy::primitives::Address;
pub use relay_x402::*;

use crate::{plan::Plan, SponsorService};

impl SponsorService {
    /// Who is paid on `chain`.
    pub fn pay_to(&self) -> Option<Address> {
        self.sponsor_config()
            .pay_to
            .as_deref()
            .and_then(|a| a.parse().ok())
            .or(self.deps.parts.senders.as_ref().map(|s| s.relayer))
    }

    /// The invoice of `plan` (v1 form) for `resource`.
    pub fn requirement(&self, plan: &Plan, resource: &str) -> Requirement {
        let cfg = self.sponsor_config();
        Requirement {
            scheme: "exact".into(),
            network: network_name(&cfg.networks, plan.chain_id),
            max_amount_required: plan.price.amount.clone(),
            asset: plan.price.token.clone(),
            pay_to: self.pay_to().unwrap_or_default().to_string(),
            resource: resource.into(),
            description: format!(
                "sponsored EIP-7702 transaction for {} on chain {}",
                plan.authority, plan.chain_id
            ),
            mime_type: "application/json".into(),
            max_timeout_seconds: cfg.max_timeout_secs,
            extra: AssetDomain {
                name: cfg.asset_name.clone(),
                version: cfg.asset_version.clone(),
            },
        }
    }
}
