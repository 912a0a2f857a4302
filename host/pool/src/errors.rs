//! The privacy pool's `errorCode`s (spec §4.11, §7). Every refusal of a
//! withdrawal comes before anything is stored or sent.

relay_errors::error_codes! { pub ALL;
    /// This host relays for no pool.
    PoolNotServed => ("POOL_NOT_SERVED", NOT_FOUND, false, "this host relays for no privacy pool ([pool] chain_id and address are unset)", State),
    /// The proof does not verify.
    PoolProofInvalid => ("POOL_PROOF_INVALID", UNPROCESSABLE_ENTITY, false, "the proof does not verify against its public inputs (root, nullifierHash, the signal binding recipient, relayer and fee, and this pool's external nullifier): prove again for exactly this withdrawal", Input),
    /// The root is not one the pool has had.
    PoolRootUnknown => ("POOL_ROOT_UNKNOWN", UNPROCESSABLE_ENTITY, false, "root is not a root the pool's tree has had: prove against a root from GET /api/pool/tree", Input),
    /// The note is already withdrawn, or its withdrawal is held or in flight.
    PoolNullifierSpent => ("POOL_NULLIFIER_SPENT", CONFLICT, false, "this note's nullifier is spent on chain, or a withdrawal of it is already held or being sent here: a note is withdrawn once", Input),
    /// The withdrawal names another amount than the pool's note.
    PoolDenomination => ("POOL_DENOMINATION", UNPROCESSABLE_ENTITY, false, "denomination is not the pool's (20000000000000 wei, 0.00002 ETH, per note; GET /api/pool/tree)", Input),
    /// The proof pays another relayer or another fee than this host's.
    PoolFeeMismatch => ("POOL_FEE_MISMATCH", UNPROCESSABLE_ENTITY, false, "relayer and fee must be this host's (GET /api/pool/tree: relayer, fee): the proof binds them, so prove again with them", Input),
    /// The pool holds its cap of notes.
    PoolFull => ("POOL_FULL", CONFLICT, false, "the pool holds its hard cap of 250 notes and takes no more deposits", State),
    /// The withdrawal would revert.
    PoolWouldRevert => ("POOL_WOULD_REVERT", UNPROCESSABLE_ENTITY, false, "the withdrawal reverts in simulation (the message has the reason); nothing was sent", Input),
    /// Too many withdrawals are held or in flight.
    PoolHoldFull => ("POOL_HOLD_FULL", SERVICE_UNAVAILABLE, true, "this host holds its most withdrawals at once ([pool] max_open); retry once some are sent", Host),
    /// No withdrawal has that ticket.
    PoolTicketUnknown => ("POOL_TICKET_UNKNOWN", NOT_FOUND, false, "no withdrawal has this ticket (tickets are the pt_… a withdrawal answered)", Input),
    /// The chain could not be read, or the tree could not be checked.
    PoolChainUnavailable => ("POOL_CHAIN_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the pool's chain could not be read, or its tree did not match the contract's root at one block; retry", Host),
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_answers_as_its_blame_says() {
        for c in super::ALL {
            assert!(c.consistent(), "{}", c.as_str());
        }
        assert_eq!(super::ALL.len(), 11);
    }
}
