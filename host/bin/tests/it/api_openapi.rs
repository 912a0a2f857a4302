//! `/api/openapi.json` describes exactly what the router serves: every
//! path the host serves is in the document (the list below is the spec's
//! §4.1–4.3 plus the host's own), every operation the document lists
//! answers on the live host (never the router's own 404), every link
//! between operations resolves, and `/api/docs` renders it.

use crate::common;
use common::serve;
use relay_devnet::{Devnet, DevnetConfig};

/// Every (method, path) the host serves.
const SERVED: &[(&str, &str)] = &[
    ("get", "/api/ncaccount/{agent}"),
    ("post", "/api/ncaccount/quote"),
    ("post", "/api/ncaccount/spend"),
    ("get", "/api/ncaccount/spend/{id}"),
    ("get", "/api/account/venues"),
    ("get", "/api/account/{addr}"),
    ("get", "/api/balance/{addr}"),
    ("get", "/api/netting/terms"),
    ("post", "/api/netting/enroll"),
    ("post", "/api/netting/deposit"),
    ("post", "/api/netting/transfer"),
    ("post", "/api/netting/withdraw"),
    ("get", "/api/netting/reserves"),
    ("get", "/api/netting/preview"),
    ("get", "/api/status"),
    ("get", "/api/route/chains"),
    ("get", "/api/gasless/info"),
    ("get", "/api/uptime"),
    ("get", "/api/delivery/stats"),
    ("get", "/api/capability/snapshot"),
    ("get", "/api/errors"),
    ("get", "/api/changelog"),
    ("get", "/api/pricefeeds"),
    ("get", "/api/floatlane/info"),
    ("get", "/api/membership/status"),
    ("get", "/api/7702/delegate"),
    ("post", "/api/7702/check"),
    ("post", "/api/7702/sponsor"),
    ("post", "/api/route/quote"),
    ("post", "/api/route/execute"),
    ("post", "/api/route/intent"),
    ("get", "/api/route/status"),
    ("get", "/api/route/stream"),
    ("post", "/api/route/preflight"),
    ("post", "/api/route/plan"),
    ("post", "/api/agent/do"),
    ("get", "/api/route/compare"),
    ("post", "/api/route/compare"),
    ("post", "/api/intent/solve"),
    ("get", "/api/intent/solve"),
    ("get", "/api/routes/recent"),
    ("get", "/api/explorer/find"),
    ("get", "/api/route/timeline"),
    ("post", "/api/keys/create"),
    ("get", "/api/keys/me"),
    ("get", "/api/keys/usage"),
    ("post", "/api/keys/revoke"),
    ("post", "/api/session/issue"),
    ("post", "/api/session/execute"),
    ("get", "/api/session/{id}"),
    ("post", "/api/session/revoke"),
    ("get", "/api/session/list"),
    ("post", "/api/route/batch"),
    ("get", "/api/route/batch/{id}"),
    ("post", "/api/route/batch/{id}/run"),
    ("post", "/api/route/schedule"),
    ("get", "/api/route/schedule/{id}"),
    ("delete", "/api/route/schedule/{id}"),
    ("post", "/api/route/conditional"),
    ("get", "/api/route/conditional/{id}"),
    ("delete", "/api/route/conditional/{id}"),
    ("post", "/api/hooks"),
    ("get", "/api/hooks/{id}"),
    ("post", "/api/events/subscribe"),
    ("delete", "/api/events/subscribe/{id}"),
    ("post", "/api/ask"),
    ("get", "/api/concierge"),
    ("get", "/api/terms"),
    ("get", "/api/openapi.json"),
    ("get", "/api/docs"),
    ("get", "/metrics"),
    ("get", "/api/outcome/verify"),
    ("get", "/api/evidence/bundle"),
    ("get", "/api/forensics/fee"),
    ("get", "/api/statement/spend"),
    ("get", "/api/route/why"),
    ("post", "/api/preflight/full"),
    ("post", "/api/route/improve"),
    ("post", "/api/refusal/verify"),
    ("post", "/api/erasure/request"),
    ("get", "/api/erasure/status"),
    ("get", "/api/receipts/{addr}"),
    ("post", "/admin/login"),
    ("post", "/admin/logout"),
    ("get", "/admin/api/snapshot"),
    ("get", "/admin/api/explorer/find"),
    ("get", "/admin/api/audit"),
    ("post", "/admin/api/lane"),
    ("post", "/admin/api/rail"),
    ("get", "/admin/api/events"),
    ("get", "/api/messages/v2/info"),
    ("get", "/api/messages/v2/directory"),
    ("get", "/api/messages/v2/mailbox/{addressOrName}"),
    ("post", "/api/messages/v2/mailbox"),
    ("post", "/api/messages/v2/send"),
    ("get", "/api/messages/v2/feed"),
    ("get", "/api/messages/v2/witness/head"),
    ("get", "/api/messages/v2/witness/range"),
    ("get", "/api/messages/v2/witness/consistency"),
    ("get", "/api/messages/v2/witness/inclusion"),
    ("post", "/api/messages/v2/handle/transfer"),
    ("get", "/api/relaynames/quote"),
    ("post", "/api/relaynames/list"),
    ("get", "/api/relaynames/orders/{id}"),
    ("get", "/api/relay/directory"),
    ("post", "/api/relay/announce"),
    ("get", "/api/messages/v2/passes/issuer"),
    ("get", "/.well-known/private-token-issuer-directory"),
    ("post", "/api/messages/v2/passes/claim"),
    ("get", "/api/ohttp/keys"),
    ("post", "/api/ohttp/gateway"),
    ("get", "/api/privacy/noop"),
    ("get", "/api/privacy/policy"),
    ("get", "/api/privacy/conformance"),
    ("get", "/api/stealth/coverproof"),
    ("get", "/api/pool/tree"),
    ("post", "/api/pool/withdraw"),
    ("get", "/api/pool/hold"),
];

/// Served operations that never answer 200, and the status whose body
/// they document instead: messaging v1's retired send, and the credential
/// mint no type is listed for yet.
const REFUSING: &[(&str, &str, &str)] = &[
    ("post", "/api/messages/send", "410"),
    ("post", "/api/messages/v2/cred/mint", "409"),
];

#[tokio::test(flavor = "multi_thread")]
async fn every_served_path_is_documented_and_every_documented_operation_is_served() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let client = crate::common::http();
    let (_, doc) = crate::common::get(&format!("{}/api/openapi.json", h.base)).await;
    assert_eq!(doc["openapi"], "3.1.0");
    // every link between operations names operations, parameters and
    // fields the document has (host/api/src/openapi/links.rs)
    assert_eq!(
        relay_api::openapi::links::dangling(&doc),
        Vec::<String>::new()
    );
    let paths = doc["paths"].as_object().expect("paths");
    for (method, path) in SERVED {
        let op = &doc["paths"][path][method];
        assert!(
            op.is_object(),
            "{method} {path} is served but not documented"
        );
        assert!(
            op["responses"]["200"]["content"].is_object(),
            "{method} {path} documents no response body"
        );
    }
    for (method, path, status) in REFUSING {
        assert!(
            doc["paths"][path][method]["responses"][status]["content"].is_object(),
            "{method} {path} documents no {status} body"
        );
    }
    // every paying operation documents the x402 headers it reads
    for (method, path) in [
        ("post", "/api/7702/sponsor"),
        ("post", "/api/relaynames/list"),
        ("post", "/api/messages/v2/handle/transfer"),
    ] {
        let headers: Vec<&str> = doc["paths"][path][method]["parameters"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path}: no parameters"))
            .iter()
            .filter(|p| p["in"] == "header")
            .filter_map(|p| p["name"].as_str())
            .collect();
        for h in ["x-payment", "payment-signature", "x-idempotency-key"] {
            assert!(headers.contains(&h), "{method} {path}: {h} in {headers:?}");
        }
    }
    let mut operations = 0;
    for (path, item) in paths {
        for (method, _) in item.as_object().unwrap() {
            operations += 1;
            let url = format!("{}{}", h.base, path);
            let req = match method.as_str() {
                "post" => client.post(&url).json(&serde_json::json!({})),
                "delete" => client.delete(&url),
                _ if path == "/api/route/stream" => client.get(format!("{url}?id=sbx_none")),
                _ => client.get(&url),
            };
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            let routed = !(status == 404 && text.contains("\"NOT_FOUND\""));
            assert!(
                routed,
                "{method} {path} is documented but not served: {text}"
            );
            assert!(status < 500, "{method} {path} answered {status}: {text}");
        }
    }
    assert_eq!(
        operations,
        SERVED.len() + REFUSING.len(),
        "documented operations: {:?}",
        paths.keys().collect::<Vec<_>>()
    );
    let codes = doc["components"]["schemas"]["ErrorBody"]["properties"]["errorCode"]["enum"]
        .as_array()
        .expect("the errorCode enum");
    assert!(codes.iter().any(|c| c == "RATE_LIMITED"));
    let page = client
        .get(format!("{}/api/docs", h.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("/api/openapi.json"));
    devnet.stop();
}
