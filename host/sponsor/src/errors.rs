//! Sponsorship's `errorCode`s (spec §7, §4.8): only the sponsorship
//! endpoints answer with them — the EIP-7702 authorization's problems, the
//! sponsorship's refusals and the x402 payment's (402 with the invoice).
//! The host's catalogue (`GET /api/errors`) lists them through the
//! feature's descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// The EIP-7702 authorization's signature does not recover (high s, parity, malformed).
    AuthorizationSignature => ("AUTHORIZATION_SIGNATURE", BAD_REQUEST, false, "the authorization's signature does not recover its authority: s must be low (≤ n/2), yParity 0 or 1 (POST /api/7702/check lists every problem)", Input),
    /// The authorization's chain id is not the request's.
    AuthorizationChain => ("AUTHORIZATION_CHAIN", BAD_REQUEST, false, "authorization.chainId is not the request's chainId; sign the tuple for the chain it is sent on", Input),
    /// A chain id 0 (any-chain) authorization, which this host refuses.
    AuthorizationAnyChain => ("AUTHORIZATION_ANY_CHAIN", BAD_REQUEST, false, "authorization.chainId 0 is valid on every chain and refused unless the operator sets sponsor.allow_any_chain; sign for the chain", Input),
    /// The authorization's nonce is not the account's live nonce.
    AuthorizationNonce => ("AUTHORIZATION_NONCE", CONFLICT, false, "authorization.nonce is not the account's current nonce (already used, or in the future); sign again with the live nonce", Input),
    /// The authorization delegates to something other than this host's executor.
    AuthorizationDelegate => ("AUTHORIZATION_DELEGATE", BAD_REQUEST, false, "authorization.address is not this host's batch executor on the chain (GET /api/7702/delegate)", Input),
    /// The authority is a contract, which cannot delegate.
    AuthorityHasCode => ("AUTHORITY_HAS_CODE", BAD_REQUEST, false, "the authority is a contract; only an EOA (or an already delegated EOA) can sign an EIP-7702 authorization", Input),
    /// The chain has no delegate, RPC or payment asset here.
    SponsorChainUnsupported => ("SPONSOR_CHAIN_UNSUPPORTED", BAD_REQUEST, false, "this host does not sponsor on that chainId (GET /api/7702/delegate lists its deployments)", Input),
    /// A sponsored call must go to the authority itself.
    SponsorTargetInvalid => ("SPONSOR_TARGET_INVALID", BAD_REQUEST, false, "`to` must be the authority (the delegated account): the relayer only calls into it; omit `to`", Input),
    /// The type-4 transaction would revert.
    SponsorWouldRevert => ("SPONSOR_WOULD_REVERT", UNPROCESSABLE_ENTITY, false, "the sponsored transaction reverts in simulation (the message has the node's reason): check `data` (executeSigned's nonce, deadline, signature)", Input),
    /// The host cannot price gas or the payment asset.
    SponsorUnpriced => ("SPONSOR_UNPRICED", SERVICE_UNAVAILABLE, true, "the host has no usable price for the chain's gas or the payment asset right now; retry", Host),
    /// The chain could not be read, or a sent step's outcome is not known yet.
    SponsorChainUnavailable => ("SPONSOR_CHAIN_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the chain's RPC endpoints could not be read, or a sponsorship step's outcome is not known yet; retry (with the same x-idempotency-key a paid request answers its sponsorship once it finishes)", Host),
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_answers_as_its_blame_says() {
        for c in super::ALL {
            assert!(c.consistent(), "{}", c.as_str());
        }
        assert_eq!(super::ALL.len(), 11);
        assert_eq!(super::SponsorUnpriced.blame(), relay_errors::Blame::Host);
    }
}
