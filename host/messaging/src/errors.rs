//! Sealed messaging's `errorCode`s (spec §4.10, §7, §9.2): only the
//! `/api/messages/…` endpoints answer with them. The host's catalogue
//! (`GET /api/errors`) lists them through the feature's descriptor
//! ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// A row's field is malformed (the message names which).
    MessageRowInvalid => ("MESSAGE_ROW_INVALID", BAD_REQUEST, false, "a row is {ephemeralPubKey: 0x + 33-byte compressed secp256k1 point, viewTag: 0x + 1 byte, ct: base64 of 1648 or 3184 bytes (a 512- or 2048-byte bucket sealed with X-Wing HPKE)}; the message names the field", Input),
    /// The row's ephemeral key was used before: every row has a fresh one-time handle.
    MessageReplayed => ("MESSAGE_REPLAYED", CONFLICT, false, "this ephemeralPubKey was already sent (the first copy is stored and released once); every row needs a fresh one-time handle", Input),
    /// No mailbox is published under that address or name.
    MailboxNotFound => ("MAILBOX_NOT_FOUND", NOT_FOUND, false, "no mailbox is published under that address or name (GET /api/messages/v2/directory lists every mailbox)", Input),
    /// A mailbox key is malformed.
    MailboxKeyInvalid => ("MAILBOX_KEY_INVALID", BAD_REQUEST, false, "metaAddress is st:eth:0x + two 33-byte compressed secp256k1 keys, kemPub 0x + a 1216-byte X-Wing public key, dsaPub (optional) 0x + a 1952-byte ML-DSA-65 key; the message names the field", Input),
    /// The publication's signature is not the address's.
    MailboxSignatureInvalid => ("MAILBOX_SIGNATURE_INVALID", BAD_REQUEST, false, "sig must be the address's EIP-191 signature (65 bytes, low s) of the publication text GET /api/messages/v2/info documents; sign exactly that text", Input),
    /// The publication's `ts` is too far from the host's clock.
    MailboxStale => ("MAILBOX_STALE", BAD_REQUEST, false, "ts must be within maxSkewMs of the host's clock (GET /api/messages/v2/info); sign a fresh publication", Input),
    /// The publication is not newer than the one in effect.
    MailboxReplayed => ("MAILBOX_REPLAYED", CONFLICT, false, "the address has a publication with this ts or a later one; a replayed or older publication never replaces it: sign a new one with a later ts", Input),
    /// The name is not registered.
    NameNotFound => ("NAME_NOT_FOUND", NOT_FOUND, false, "the name is not registered on this host (GET /api/relaynames/quote?name= shows its state)", Input),
    /// The name is not a name.
    NameInvalid => ("NAME_INVALID", BAD_REQUEST, false, "a name is 3 to 32 characters of a-z, 0-9 and '-' (case folded), not starting or ending with '-'; every other character is refused", Input),
    /// Someone holds the name.
    NameTaken => ("NAME_TAKEN", CONFLICT, false, "the name is registered or in its owner's grace (GET /api/relaynames/quote?name= says until when)", State),
    /// The name looks like a live one.
    NameConfusable => ("NAME_CONFUSABLE", CONFLICT, false, "the name looks like a registered one (0/o and 1/l/i are the same for this check); choose another", Input),
    /// A paid name (or a sale) on a host that takes no payment for names, or a registration that did not pay the price.
    NamePaymentUnavailable => ("NAME_PAYMENT_UNAVAILABLE", CONFLICT, false, "the name costs money (3-6 characters, or a premium) or the transfer is a sale, and this host takes no payment for names ([messaging.names] payment_chain is 0); names of 7 or more characters are free", State),
    /// A paid name order could not be delivered after its payment settled; the payment was refunded.
    NameOrderRefunded => ("NAME_ORDER_REFUNDED", CONFLICT, false, "the payment settled but the name could not be registered or moved (taken, sold or renewed elsewhere meanwhile); the whole payment was refunded to the payer (the message names the refund transaction)", State),
    /// No such paid name order.
    NameOrderNotFound => ("NAME_ORDER_NOT_FOUND", NOT_FOUND, false, "no paid name order has that id on this host (a paid answer's order.id, or_…)", Input),
    /// The owner holds the most names one owner may.
    NameCap => ("NAME_CAP", CONFLICT, false, "the owner holds 20 live names, the most one owner may", State),
    /// The releaser is not the name's owner.
    NameNotOwner => ("NAME_NOT_OWNER", FORBIDDEN, false, "only the name's owner can release it", Input),
    /// A listing or transfer not later than the name's latest entry.
    NameReplayed => ("NAME_REPLAYED", CONFLICT, false, "the listing's ts (or the transfer's accept ts) is not later than the name's latest entry: a replay; sign a new one", Input),
    /// A listing's signature or time does not verify.
    NameSignatureInvalid => ("NAME_SIGNATURE_INVALID", BAD_REQUEST, false, "sig must be the owner's EIP-191 signature of the listing text (GET /api/messages/v2/info nameListText), ts within maxSkewMs of the host's clock", Input),
    /// A transfer's release or accept signature does not verify.
    TransferSignatureInvalid => ("TRANSFER_SIGNATURE_INVALID", BAD_REQUEST, false, "release.sig must be the owner's and accept.sig the receiver's EIP-191 signature of the transfer texts GET /api/messages/v2/info documents", Input),
    /// A Plus pass that does not verify here.
    PassInvalid => ("PASS_INVALID", BAD_REQUEST, false, "the Plus pass is not a type 2 Privacy Pass token of this issuer's challenge and keys (GET /api/messages/v2/passes/issuer); nothing was stored or spent; send without one to use the free ceiling", Input),
    /// A Plus pass that was spent before.
    PassSpent => ("PASS_SPENT", CONFLICT, false, "this Plus pass was spent before (each is accepted once); nothing was stored: send with another pass, or without one", Input),
    /// A Plus pass whose key no longer redeems.
    PassExpired => ("PASS_EXPIRED", BAD_REQUEST, false, "the pass's issuer key is older than the previous epoch and no longer redeems; claim new passes (POST /api/messages/v2/passes/claim)", Input),
    /// A claim that is not one.
    PassClaimInvalid => ("PASS_CLAIM_INVALID", BAD_REQUEST, false, "a claim is {tokenRequests: [base64url of a type 2 TokenRequest (RFC 9578 §6.1) for the current key]} of 1 to the day's passes (at most 100); the message names the request", Input),
    /// A claim for a key that no longer signs.
    PassKeyStale => ("PASS_KEY_STALE", CONFLICT, false, "a token request names a key that does not sign now; fetch GET /api/messages/v2/passes/issuer again and make the requests for its first key", Input),
    /// The operator turned Plus passes off.
    PassesDisabled => ("PASSES_DISABLED", NOT_FOUND, false, "this host issues no Plus passes ([messaging.passes] enabled = false); send without one to use the free ceiling", State),
    /// The issuer's key disagrees with the witness log.
    PassIssuerUnavailable => ("PASS_ISSUER_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the issuer key cannot be used now (the witness log disagrees or is busy); retry later, or send without a pass", Host),
    /// No post-quantum credential type is listed.
    CredentialUnlisted => ("CREDENTIAL_UNLISTED", CONFLICT, false, "no post-quantum credential type is listed on this host yet (GET /api/messages/v2/info credentials is empty); nothing was spent", State),
    /// Messaging v1 is retired.
    MessagingV1Retired => ("MESSAGING_V1_RETIRED", GONE, false, "messaging v1 is retired: send through POST /api/messages/v2/send (sealed rows; GET /api/messages/v2/info)", Input),
    /// A relay announcement's field is malformed.
    RelayAnnounceInvalid => ("RELAY_ANNOUNCE_INVALID", BAD_REQUEST, false, "an announcement is {url: https:// (http:// only on loopback), key: base64 of 1-2048 bytes, expires, ts, announcer: base64 Ed25519 key, sig: base64 Ed25519 signature}; the message names the field", Input),
    /// A relay announcement's `ts` is too far from the host's clock.
    RelayAnnounceStale => ("RELAY_ANNOUNCE_STALE", BAD_REQUEST, false, "ts must be within maxSkewMs of the host's clock; sign a fresh announcement", Input),
    /// A relay announcement that has expired or runs too long.
    RelayAnnounceExpired => ("RELAY_ANNOUNCE_EXPIRED", BAD_REQUEST, false, "expires must be in the future and at most 30 days ahead", Input),
    /// A relay announcement not signed by its announcer.
    RelayAnnounceSignatureInvalid => ("RELAY_ANNOUNCE_SIGNATURE_INVALID", BAD_REQUEST, false, "sig must be the announcer key's Ed25519 signature of the announcement text (GET /api/messages/v2/info relayAnnounceText)", Input),
    /// A relay announcement not newer than the announcer's in effect.
    RelayAnnounceReplayed => ("RELAY_ANNOUNCE_REPLAYED", CONFLICT, false, "the announcer has an announcement with this ts or a later one; sign a new one with a later ts", Input),
    /// The operator turned messaging off.
    MessagingDisabled => ("MESSAGING_DISABLED", NOT_FOUND, false, "this host does not serve sealed messaging ([messaging] enabled = false)", State),
}
