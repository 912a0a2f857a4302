//! Netting's `errorCode`s (spec §7): only netting answers with them; the
//! host's catalogue (`GET /api/errors`) lists them through the feature's
//! descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// Netting accounts are off, or a chain read or price they need failed.
    NettingUnavailable => ("NETTING_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "netting accounts cannot answer right now (a chain read or price failed, or [netting] is off); retry", Host),
    /// The netting signature does not recover to the address over the exact text.
    NettingSignatureInvalid => ("NETTING_SIGNATURE_INVALID", UNAUTHORIZED, false, "sign exactly the documented text (terms from GET /api/netting/terms; relay-netting-transfer:v1:… or relay-netting-withdraw:v1:… with lowercase addresses) with the address's key (EIP-191 personal_sign, low-s)", Input),
    /// An address of a netting request is not enrolled.
    NettingNotEnrolled => ("NETTING_NOT_ENROLLED", CONFLICT, false, "the address (the `field` names which) is not enrolled: GET /api/netting/terms, sign it, POST /api/netting/enroll", State),
    /// The nonce is at or below the account's: spent.
    NettingNonceSpent => ("NETTING_NONCE_SPENT", CONFLICT, false, "nonces are monotonic per account: any signature at or below the account nonce is spent (GET /api/netting/terms shows the nonce); sign again with a larger one", Input),
    /// The account's balance does not cover the amount.
    NettingInsufficientBalance => ("NETTING_INSUFFICIENT_BALANCE", CONFLICT, false, "the account's balance does not cover the amount; deposit first or ask less", State),
    /// A netting cap (deposit, withdraw or balance) would be exceeded.
    NettingCapExceeded => ("NETTING_CAP_EXCEEDED", UNPROCESSABLE_ENTITY, false, "netting caps are deliberately small (GET /api/netting/reserves lists them); the message names the cap", Input),
    /// The deposit would push liabilities above the safe share of float.
    NettingSafeShareExceeded => ("NETTING_SAFE_SHARE_EXCEEDED", CONFLICT, true, "crediting the deposit would push total liabilities above the safe share of the relayer's float (GET /api/netting/reserves: headroom); it is not credited — post it again when headroom allows", State),
    /// The chain is not a covered netting chain.
    NettingChainUnsupported => ("NETTING_CHAIN_UNSUPPORTED", BAD_REQUEST, false, "the chain is not covered by netting accounts (GET /api/netting/reserves lists the covered chains)", Input),
    /// The deposit transaction is not mined or not confirmed enough yet.
    NettingDepositPending => ("NETTING_DEPOSIT_PENDING", CONFLICT, true, "the deposit transaction is not mined or lacks the configured confirmations; post it again shortly", State),
    /// The deposit transaction does not pay the relayer from the address.
    NettingDepositInvalid => ("NETTING_DEPOSIT_INVALID", UNPROCESSABLE_ENTITY, false, "the transaction reverted, has no USDC Transfer from `address` to the relayer on that chain, was not sent by `address` itself to the USDC contract, or is one of the relayer's own", Input),
    /// The withdrawal does not cover the destination payout cost.
    NettingBelowPayoutCost => ("NETTING_BELOW_PAYOUT_COST", UNPROCESSABLE_ENTITY, false, "the destination payout cost is at or above the amount: nothing would arrive; nothing was debited or sent (GET /api/netting/preview ranks cheaper exits)", Input),
    /// The relayer cannot pay on the destination chain now.
    NettingFloatShort => ("NETTING_FLOAT_SHORT", SERVICE_UNAVAILABLE, true, "the relayer cannot pay the payout on that chain now (its float is short or the payout fails simulation); nothing was debited — try another chain (GET /api/netting/preview)", Host),
    /// The payout failed on chain and was credited back.
    NettingPayoutFailed => ("NETTING_PAYOUT_FAILED", BAD_GATEWAY, false, "the payout transaction failed; the amount was credited back to the account by a reversing entry (the nonce stays spent)", Host),
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_answers_as_its_blame_says() {
        for c in super::ALL {
            assert!(c.consistent(), "{}", c.as_str());
            assert!(c.as_str().starts_with("NETTING_"), "{}", c.as_str());
        }
        assert_eq!(super::NettingFloatShort.blame(), relay_errors::Blame::Host);
    }
}
