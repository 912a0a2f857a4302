//! The yield account's `errorCode`s (spec §7): only the yield account
//! answers with them; the host's catalogue (`GET /api/errors`) lists them
//! through the feature's descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// No yield-account spend has that id.
    UnknownSpend => ("UNKNOWN_SPEND", NOT_FOUND, false, "no yield-account spend has that id (the nc_… id POST /api/ncaccount/spend answered)", Input),
    /// The yield account has no vault on that chain.
    NcChainUnsupported => ("NCACCOUNT_CHAIN_UNSUPPORTED", BAD_REQUEST, false, "srcChain or toChain has no yield vault on this host (GET /api/account/venues lists them)", Input),
    /// The spend intent's signature does not recover to its agent.
    NcSignatureInvalid => ("NCACCOUNT_SIGNATURE_INVALID", BAD_REQUEST, false, "the spend intent's signature does not recover to intent.agent under the domain {name RelayNCAccount, version 1, chainId srcChain, verifyingContract the vault on srcChain}, or is malformed or high-s; nothing was sent", Input),
    /// The spend intent was signed under another chain id.
    NcDomainChain => ("NCACCOUNT_DOMAIN_CHAIN", BAD_REQUEST, false, "the intent was signed with a domain chainId other than intent.srcChain; sign with chainId = srcChain; nothing was sent", Input),
    /// The spend intent's deadline passed.
    NcIntentExpired => ("NCACCOUNT_INTENT_EXPIRED", BAD_REQUEST, false, "intent.deadline (seconds) is not in the future; sign again; nothing was sent", Input),
    /// The spend intent's nonce was already spent.
    NcNonceUsed => ("NCACCOUNT_NONCE_USED", CONFLICT, false, "intent.nonce was already spent by this agent on srcChain; sign a new nonce; nothing was sent", Input),
    /// The redeem needs more shares than the allowance.
    NcAllowanceExceeded => ("NCACCOUNT_ALLOWANCE_EXCEEDED", UNPROCESSABLE_ENTITY, false, "the spend burns more vault shares than the agent lets the relayer pull (approve the relayer on the vault; POST /api/ncaccount/quote shows both); nothing was sent", Input),
    /// The agent holds too few shares.
    NcInsufficientShares => ("NCACCOUNT_INSUFFICIENT_SHARES", UNPROCESSABLE_ENTITY, false, "the agent holds fewer vault shares than redeeming the amount burns; nothing was sent", State),
    /// The amount does not cover the spend fee.
    NcBelowFee => ("NCACCOUNT_BELOW_FEE", UNPROCESSABLE_ENTITY, false, "the amount does not cover the spend fee (0.15 %, at least 0.01 USD); nothing was sent", Input),
    /// No rail routes a spend's delivery now.
    NcNoRoute => ("NCACCOUNT_NO_ROUTE", UNPROCESSABLE_ENTITY, true, "no rail routes the spend's delivery (srcChain asset to toChain) now; the message has the engine's reason; try less or later; nothing was sent", State),
    /// The redeem reverts in simulation.
    NcWouldRevert => ("NCACCOUNT_WOULD_REVERT", UNPROCESSABLE_ENTITY, false, "the vault's withdraw reverts when simulated (the message has the reason); nothing was sent", Input),
    /// A chain read of the yield account failed.
    NcChainUnavailable => ("NCACCOUNT_CHAIN_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "a chain the yield account needs could not be read; retry", Host),
}

#[cfg(test)]
mod tests {
    use relay_errors::Blame;

    #[test]
    fn every_code_answers_as_its_blame_says() {
        for c in super::ALL {
            assert!(c.consistent(), "{}", c.as_str());
        }
        assert_eq!(super::NcChainUnavailable.blame(), Blame::Host);
    }
}
