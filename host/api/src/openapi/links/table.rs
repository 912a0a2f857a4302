//! The table of links ([`LINKS`]): each link from one operation's 200
//! answer to the operation it feeds, with the helpers that spell the
//! repeated shapes (a route read, a read-back by id).

use super::Link;
use serde_json::{json, Value};

/// A route's own body fields as a quote answers them.
fn quoted_route() -> Value {
    json!({
        "fromChain": "$response.body#/from/chain",
        "toChain": "$response.body#/to/chain",
        "fromToken": "$response.body#/from/token",
        "toToken": "$response.body#/to/token",
        "amount": "$response.body#/from/amount",
    })
}

/// A route's own body fields as a comparison answers them.
fn compared_route() -> Value {
    json!({
        "fromChain": "$response.body#/lane/fromChain",
        "toChain": "$response.body#/lane/toChain",
        "fromToken": "$response.body#/lane/fromToken",
        "toToken": "$response.body#/lane/toToken",
        "amount": "$response.body#/lane/amount",
    })
}

/// The sandbox header: an execute a link starts moves nothing.
const SANDBOX: (&str, &str) = ("header.x-relay-sandbox", "1");

/// The route id of a RouteReceipt, as the query of a route read.
const ROUTE_ID: (&str, &str) = ("query.id", "$response.body#/id");

/// The `id` of the answer, as the path of a read.
const PATH_ID: (&str, &str) = ("path.id", "$response.body#/id");

const EXECUTE: (&str, &str) = ("post", "/api/route/execute");
const QUOTE: (&str, &str) = ("post", "/api/route/quote");
const HOOKS: (&str, &str) = ("post", "/api/hooks");
const HOOK: (&str, &str) = ("get", "/api/hooks/{id}");
const KEY_CREATE: (&str, &str) = ("post", "/api/keys/create");
const KEY_REVOKE: (&str, &str) = ("post", "/api/keys/revoke");
const SESSION_ISSUE: (&str, &str) = ("post", "/api/session/issue");
const SESSION: (&str, &str) = ("get", "/api/session/{id}");
const NETTING_ENROLL: (&str, &str) = ("post", "/api/netting/enroll");
const NETTING_TERMS: (&str, &str) = ("get", "/api/netting/terms");
const NETTING_WITHDRAW: (&str, &str) = ("post", "/api/netting/withdraw");
const RECEIPTS: (&str, &str) = ("get", "/api/receipts/{addr}");

/// A route read fed by the `id` of a RouteReceipt from `from`.
const fn route_read(
    from: (&'static str, &'static str),
    name: &'static str,
    path: &'static str,
    description: &'static str,
) -> Link {
    Link {
        from,
        name,
        to: ("get", path),
        parameters: &[ROUTE_ID],
        body: None,
        description,
    }
}

/// A read of the record `from` answered, by its `id` in the path.
const fn read_back(
    from: (&'static str, &'static str),
    name: &'static str,
    to: (&'static str, &'static str),
    description: &'static str,
) -> Link {
    Link {
        from,
        name,
        to,
        parameters: &[PATH_ID],
        body: None,
        description,
    }
}

/// Every link of the document.
pub const LINKS: &[Link] = &[
    // routing: quote → intent → execute → status and the route's reads
    Link {
        from: QUOTE,
        name: "intent",
        to: ("post", "/api/route/intent"),
        parameters: &[],
        body: Some(quoted_route),
        description: "Prepare the one-signature router intent of the quoted route",
    },
    Link {
        from: QUOTE,
        name: "execute",
        to: EXECUTE,
        parameters: &[SANDBOX],
        body: Some(|| {
            let mut b = quoted_route();
            b["rail"] = "$response.body#/bridge".into();
            b["minOut"] = "$response.body#/to/min".into();
            b["attestation"] = "$response.body#/attestation".into();
            b
        }),
        description: "Execute the quoted route in the sandbox, price-locked by its attestation",
    },
    Link {
        from: QUOTE,
        name: "compare",
        to: ("post", "/api/route/compare"),
        parameters: &[],
        body: Some(quoted_route),
        description: "Every rail's answer for the quoted lane",
    },
    Link {
        from: ("post", "/api/route/intent"),
        name: "execute",
        to: EXECUTE,
        parameters: &[],
        body: Some(|| json!("$response.body#/forms/intent/submitBody")),
        description: "Execute the prepared intent in its `intent` form (its body as served; the signature goes into `order.signature`)",
    },
    route_read(EXECUTE, "status", "/api/route/status", "The route's receipt"),
    route_read(EXECUTE, "timeline", "/api/route/timeline", "The route's stages and transactions (a live route)"),
    route_read(EXECUTE, "why", "/api/route/why", "What the route's rail beat (a live route)"),
    route_read(EXECUTE, "outcome", "/api/outcome/verify", "The route's delivery as the chains show it (a live route)"),
    route_read(EXECUTE, "evidence", "/api/evidence/bundle", "The route's signed evidence bundle (a live route)"),
    route_read(EXECUTE, "fees", "/api/forensics/fee", "Every unit withheld from the route (a live route)"),
    Link {
        from: EXECUTE,
        name: "find",
        to: ("get", "/api/explorer/find"),
        parameters: &[("query.q", "$response.body#/id")],
        body: None,
        description: "Find the route by its id",
    },
    Link {
        from: EXECUTE,
        name: "hook",
        to: HOOKS,
        parameters: &[],
        body: Some(|| json!({"routeId": "$response.body#/id"})),
        description: "Register a completion webhook on the route",
    },
    route_read(("get", "/api/route/status"), "timeline", "/api/route/timeline", "The route's stages and transactions (a live route)"),
    Link {
        from: ("get", "/api/route/status"),
        name: "hook",
        to: HOOKS,
        parameters: &[],
        body: Some(|| json!({"routeId": "$response.body#/id"})),
        description: "Register a completion webhook on the route",
    },
    // best execution → the quote and the execute of the winner
    Link {
        from: ("post", "/api/route/compare"),
        name: "quote",
        to: QUOTE,
        parameters: &[],
        body: Some(compared_route),
        description: "Quote the compared lane",
    },
    Link {
        from: ("post", "/api/route/compare"),
        name: "execute",
        to: EXECUTE,
        parameters: &[SANDBOX],
        body: Some(|| {
            let mut b = compared_route();
            b["rail"] = "$response.body#/best".into();
            b
        }),
        description: "Execute the compared lane on the winning rail, in the sandbox",
    },
    Link {
        from: ("post", "/api/intent/solve"),
        name: "execute",
        to: EXECUTE,
        parameters: &[SANDBOX],
        body: Some(|| json!("$response.body#/plan/execute")),
        description: "Execute the best plan's ready-to-POST body, in the sandbox",
    },
    // developer keys: the key created, sent back
    Link {
        from: KEY_CREATE,
        name: "me",
        to: ("get", "/api/keys/me"),
        parameters: &[("header.x-relay-key", "$response.body#/key")],
        body: None,
        description: "The new key's metadata",
    },
    Link {
        from: KEY_CREATE,
        name: "usage",
        to: ("get", "/api/keys/usage"),
        parameters: &[("header.x-relay-key", "$response.body#/key")],
        body: None,
        description: "The new key's usage",
    },
    Link {
        from: KEY_CREATE,
        name: "revoke",
        to: KEY_REVOKE,
        parameters: &[("header.x-relay-key", "$response.body#/key")],
        body: None,
        description: "Revoke the new key",
    },
    Link {
        from: KEY_REVOKE,
        name: "me",
        to: ("get", "/api/keys/me"),
        parameters: &[("header.x-relay-key", "$request.header.x-relay-key")],
        body: None,
        description: "The revoked key is unknown from then on (404 KEY_UNKNOWN)",
    },
    // webhooks and subscriptions
    read_back(HOOKS, "hook", HOOK, "The webhook's state and deliveries"),
    read_back(("post", "/api/events/subscribe"), "hook", HOOK, "The subscription's state and deliveries"),
    read_back(
        ("post", "/api/events/subscribe"),
        "unsubscribe",
        ("delete", "/api/events/subscribe/{id}"),
        "Cancel the subscription",
    ),
    read_back(
        ("delete", "/api/events/subscribe/{id}"),
        "hook",
        HOOK,
        "The subscription, cancelled",
    ),
    // sessions: issued → read with its bearer, executed, revoked, listed
    Link {
        from: SESSION_ISSUE,
        name: "session",
        to: SESSION,
        parameters: &[
            PATH_ID,
            ("header.authorization", "Bearer {$response.body#/bearer}"),
        ],
        body: None,
        description: "The session, read with its own bearer",
    },
    Link {
        from: SESSION_ISSUE,
        name: "execute",
        to: ("post", "/api/session/execute"),
        parameters: &[("header.authorization", "Bearer {$response.body#/bearer}")],
        body: None,
        description: "Execute a route within the session's policy, with its bearer",
    },
    Link {
        from: SESSION_ISSUE,
        name: "revoke",
        to: ("post", "/api/session/revoke"),
        parameters: &[],
        body: Some(|| json!({"id": "$response.body#/id"})),
        description: "Revoke the session (owner)",
    },
    Link {
        from: SESSION_ISSUE,
        name: "list",
        to: ("get", "/api/session/list"),
        parameters: &[],
        body: None,
        description: "Every session, the new one first (owner)",
    },
    read_back(("post", "/api/session/revoke"), "session", SESSION, "The session, revoked (owner)"),
    // netting: terms → enrol → deposit, transfer, withdraw → receipts
    Link {
        from: NETTING_TERMS,
        name: "enroll",
        to: NETTING_ENROLL,
        parameters: &[],
        body: Some(|| json!({"address": "$response.body#/address"})),
        description: "Enrol the address with its signature of the terms text",
    },
    Link {
        from: NETTING_ENROLL,
        name: "terms",
        to: NETTING_TERMS,
        parameters: &[("query.address", "$response.body#/address")],
        body: None,
        description: "The account's balance and nonce",
    },
    Link {
        from: NETTING_ENROLL,
        name: "deposit",
        to: ("post", "/api/netting/deposit"),
        parameters: &[],
        body: Some(|| json!({"address": "$response.body#/address"})),
        description: "Credit USDC the account sent to the relayer",
    },
    Link {
        from: NETTING_ENROLL,
        name: "transfer",
        to: ("post", "/api/netting/transfer"),
        parameters: &[],
        body: Some(|| json!({"from": "$response.body#/address"})),
        description: "Move part of the balance to another enrolled account",
    },
    Link {
        from: NETTING_ENROLL,
        name: "withdraw",
        to: NETTING_WITHDRAW,
        parameters: &[],
        body: Some(|| json!({"address": "$response.body#/address"})),
        description: "Withdraw on chain",
    },
    Link {
        from: ("post", "/api/netting/deposit"),
        name: "terms",
        to: NETTING_TERMS,
        parameters: &[("query.address", "$request.body#/address")],
        body: None,
        description: "The account's balance after the credit",
    },
    Link {
        from: ("get", "/api/netting/preview"),
        name: "withdraw",
        to: NETTING_WITHDRAW,
        parameters: &[],
        body: Some(|| {
            json!({"amount": "$response.body#/amount", "toChain": "$response.body#/cheapestExit/0/chainId"})
        }),
        description: "Withdraw the previewed amount to the cheapest exit",
    },
    Link {
        from: NETTING_WITHDRAW,
        name: "receipts",
        to: RECEIPTS,
        parameters: &[("path.addr", "$response.body#/address")],
        body: None,
        description: "The account's signed settlement history, the withdrawal once paid",
    },
    Link {
        from: NETTING_WITHDRAW,
        name: "terms",
        to: NETTING_TERMS,
        parameters: &[("query.address", "$response.body#/address")],
        body: None,
        description: "The account's balance after the withdrawal",
    },
    // primitives: created → read back, run or cancelled (with the cancelToken)
    read_back(("post", "/api/route/batch"), "batch", ("get", "/api/route/batch/{id}"), "The batch"),
    read_back(
        ("post", "/api/route/batch"),
        "run",
        ("post", "/api/route/batch/{id}/run"),
        "Run the batch once (owner)",
    ),
    read_back(
        ("post", "/api/route/batch/{id}/run"),
        "batch",
        ("get", "/api/route/batch/{id}"),
        "The batch after its run",
    ),
    read_back(
        ("post", "/api/route/schedule"),
        "schedule",
        ("get", "/api/route/schedule/{id}"),
        "The schedule",
    ),
    Link {
        from: ("post", "/api/route/schedule"),
        name: "cancel",
        to: ("delete", "/api/route/schedule/{id}"),
        parameters: &[PATH_ID, ("header.x-cancel-token", "$response.body#/cancelToken")],
        body: None,
        description: "Cancel the schedule with its cancelToken",
    },
    read_back(
        ("delete", "/api/route/schedule/{id}"),
        "schedule",
        ("get", "/api/route/schedule/{id}"),
        "The schedule, cancelled",
    ),
    read_back(
        ("post", "/api/route/conditional"),
        "conditional",
        ("get", "/api/route/conditional/{id}"),
        "The conditional",
    ),
    Link {
        from: ("post", "/api/route/conditional"),
        name: "cancel",
        to: ("delete", "/api/route/conditional/{id}"),
        parameters: &[PATH_ID, ("header.x-cancel-token", "$response.body#/cancelToken")],
        body: None,
        description: "Disarm the conditional with its cancelToken",
    },
    read_back(
        ("delete", "/api/route/conditional/{id}"),
        "conditional",
        ("get", "/api/route/conditional/{id}"),
        "The conditional, cancelled",
    ),
    // sponsorship: the free check → the priced plan of the same tuple
    Link {
        from: ("post", "/api/7702/check"),
        name: "sponsor",
        to: ("post", "/api/7702/sponsor"),
        parameters: &[],
        body: Some(|| {
            json!({"chainId": "$request.body#/chainId", "authorization": "$request.body#/authorization", "dry": true})
        }),
        description: "The sponsorship's plan and price for the checked tuple (dry: nothing paid or sent)",
    },
    // accounts: the yield account → its quote; a spend read back
    Link {
        from: ("get", "/api/ncaccount/{agent}"),
        name: "quote",
        to: ("post", "/api/ncaccount/quote"),
        parameters: &[],
        body: Some(|| json!({"agent": "$response.body#/agent"})),
        description: "Quote a spend from the account",
    },
    read_back(
        ("post", "/api/ncaccount/spend"),
        "spend",
        ("get", "/api/ncaccount/spend/{id}"),
        "The spend as it stands",
    ),
    // erasure: the request → its progress
    Link {
        from: ("post", "/api/erasure/request"),
        name: "status",
        to: ("get", "/api/erasure/status"),
        parameters: &[
            ("query.id", "$response.body#/id"),
            ("query.address", "$request.body#/address"),
        ],
        body: None,
        description: "The erasure request's progress",
    },
];
