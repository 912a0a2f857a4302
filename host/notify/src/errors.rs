//! Notify's `errorCode`s (spec §6): only webhooks and subscriptions
//! answer with them; the host's catalogue (`GET /api/errors`) lists them
//! through the feature's descriptor ([`crate::http::feature`]).

relay_errors::error_codes! { pub ALL;
    /// A webhook URL may not receive deliveries.
    WebhookUrlRefused => ("WEBHOOK_URL_REFUSED", BAD_REQUEST, false, "the webhook url is refused: it must be https to a public address (no loopback, private, link-local, CGNAT, ULA, multicast or unspecified address, no credentials); http only for hosts the operator allows (notify.allow_http); the message names what is wrong", Input),
    /// No webhook has that id.
    UnknownHook => ("UNKNOWN_HOOK", NOT_FOUND, false, "no webhook or subscription has that id", Input),
    /// A route has as many webhooks as allowed.
    HookLimit => ("HOOK_LIMIT", CONFLICT, false, "the route already has notify.max_hooks_per_route webhooks; reuse one", State),
    /// A caller holds as many active subscriptions as allowed.
    SubscriptionLimit => ("SUBSCRIPTION_LIMIT", CONFLICT, false, "this caller holds notify.max_subscriptions_per_caller active event subscriptions; cancel one (DELETE /api/events/subscribe/{id}) before making another; nothing was registered", State),
    /// A hook on a route came without the route's proof.
    HookProofRequired => ("HOOK_PROOF_REQUIRED", UNAUTHORIZED, false, "only the route's owner hooks it: send `signature`, the route's sender's EIP-191 signature (65 bytes hex, low-s) of relay-hook:v1:route=<routeId>:url=<url>, or the owner's Authorization: Bearer <owner token>; nothing was registered", Input),
    /// A hook's signature is not the route's sender's.
    HookProofInvalid => ("HOOK_PROOF_INVALID", FORBIDDEN, false, "`signature` does not recover to the route's sender over relay-hook:v1:route=<routeId>:url=<url> (EIP-191, low-s), or the route's sender is not an EVM address (then only the owner's credential hooks it); nothing was registered", Input),
}
