//! The sessions' `errorCode`s (spec §4.5, §5.6): only the
//! `/api/session/*` endpoints answer with them; the host's catalogue
//! (`GET /api/errors`) lists them through the feature's descriptor
//! ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// No session bearer, or one this host did not issue.
    SessionUnauthorized => ("SESSION_UNAUTHORIZED", UNAUTHORIZED, false, "send the session's bearer as Authorization: Bearer rsk_… (POST /api/session/issue answers it once); no bearer, one this host never issued, or another session's bearer for GET /api/session/{id}", Input),
    /// The session was revoked.
    SessionRevoked => ("SESSION_REVOKED", FORBIDDEN, false, "the owner revoked this session: it executes nothing more (routes it already started complete; its unspent balance returns to refundTo)", State),
    /// The session expired.
    SessionExpired => ("SESSION_EXPIRED", FORBIDDEN, false, "the session is past its policy.expiresAt: it executes nothing more (its unspent balance returns to refundTo); the owner issues a new one", State),
    /// The route is outside the session's policy.
    SessionPolicy => ("SESSION_POLICY", FORBIDDEN, false, "the route is outside the session's policy: `field` names what is not allowed (fromChain/toChain not in policy.chains, fromToken/toToken not in policy.tokens, toAddress not in policy.recipients); nothing was reserved or sent", Input),
    /// The route is above a session cap.
    SessionCapExceeded => ("SESSION_CAP_EXCEEDED", FORBIDDEN, false, "the route's amount is above the session's perTxCap, or with the last 24 hours' spends above its rolling24hCap; the message gives both caps and what remains; for the rolling cap retryAfterMs says when enough of the window ages out; nothing was reserved or sent", State),
    /// No session has that id.
    UnknownSession => ("UNKNOWN_SESSION", NOT_FOUND, false, "no session has that id (GET /api/session/list)", Input),
}
