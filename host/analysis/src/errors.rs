//! The analysis feature's `errorCode`s (spec §8.2 erasure): only its
//! endpoints answer with them; the host's catalogue (`GET /api/errors`)
//! lists them through the feature's descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// Erasure needs the retention tag key, which this host does not have.
    ErasureUnavailable => ("ERASURE_UNAVAILABLE", SERVICE_UNAVAILABLE, false, "this host has no retention key (retention.secret_env), so it cannot keep an erasure request without keeping the address; ask the operator", Host),
    /// The erasure request's signature is not the address's.
    ErasureSignature => ("ERASURE_SIGNATURE", UNAUTHORIZED, false, "sign exactly `relay-erasure:v1:address=<lower-case address>:issuedAt=<epoch ms>` (EIP-191 personal message, low-s) with the address's key", Input),
    /// The erasure request's `issuedAt` is too far from the host's clock.
    ErasureStale => ("ERASURE_STALE", BAD_REQUEST, false, "issuedAt must be within 10 minutes of the host's clock (epoch ms); sign a fresh request", Input),
    /// No erasure request has that id for that address.
    UnknownErasure => ("UNKNOWN_ERASURE", NOT_FOUND, false, "no erasure request has that id for that address (both are needed: the host keeps only the address's keyed tag)", Input),
}
