//! The privacy lane's `errorCode`s (spec §4.11, §7). The first two are
//! answered in the clear, before anything could be decrypted (RFC 9458
//! §5.2); every other one comes back inside the encapsulated response, so
//! the relay that carries it learns nothing of why.

relay_errors::error_codes! { pub ALL;
    /// The operator turned the privacy lane off.
    PrivacyDisabled => ("PRIVACY_DISABLED", NOT_FOUND, false, "this host does not serve the privacy lane ([privacy] enabled = false)", State),
    /// The encapsulated request names no key this gateway holds, or does not open.
    OhttpKeyUnknown => ("OHTTP_KEY_UNKNOWN", UNPROCESSABLE_ENTITY, false, "the request's key id names no key configuration this gateway serves now (keys rotate; the previous epoch's still open): fetch GET /api/ohttp/keys and encapsulate again", Input),
    /// The body is not an encapsulated request that opens with its key.
    OhttpMalformed => ("OHTTP_MALFORMED", BAD_REQUEST, false, "the body must be an RFC 9458 encapsulated request (content-type message/ohttp-req) made with a key configuration from GET /api/ohttp/keys; this one is truncated, names an unsupported suite or does not decrypt (altered on the way)", Input),
    /// The encapsulated request was seen before.
    OhttpReplayed => ("OHTTP_REPLAYED", CONFLICT, false, "this encapsulation was opened before (its encapsulated key is remembered for the replay window); encapsulate every request afresh", Input),
    /// The inner request is not padded to the lane's fixed size.
    OhttpPaddingRequired => ("OHTTP_PADDING_REQUIRED", BAD_REQUEST, false, "the inner BHTTP request must be padded with zero bytes to a multiple of 16384 bytes (spec §8.2) so every request has the same size on the wire", Input),
    /// The inner request is not Binary HTTP.
    OhttpInnerMalformed => ("OHTTP_INNER_MALFORMED", BAD_REQUEST, false, "the decrypted request must be a known-length Binary HTTP request (RFC 9292) with a method and a path", Input),
    /// The inner request's Date is missing or too far from the gateway's clock.
    OhttpDateSkew => ("OHTTP_DATE_SKEW", BAD_REQUEST, false, "the inner request needs a Date header (RFC 9110 IMF-fixdate) within the replay window of the gateway's clock (RFC 9458 §6.5.1); the response's Date header is the gateway's time", Input),
    /// The inner request's target is off the allowlist.
    OhttpTargetRefused => ("OHTTP_TARGET_REFUSED", FORBIDDEN, false, "the gateway answers only its allowlist (quote, compare, intent, execute, session execute, agent do, status, chains, the no-op, sealed messaging's info, directory, mailbox, send, feed and witness reads, and the privacy pool's tree, withdraw and hold); every other method and path is refused, and the inner request is never forwarded to another host", Input),
}
