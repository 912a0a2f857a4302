//! `/api/openapi.json` describes exactly what the router serves: every
//! operation it lists answers on the live host (never the router's own 404),
//! and `/api/docs` renders it.

use crate::common;
use common::serve;
use relay_api::openapi::OPERATIONS;
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn every_documented_operation_is_served() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let client = reqwest::Client::new();
    let doc: Value = client
        .get(format!("{}/api/openapi.json", h.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    for o in OPERATIONS {
        assert!(doc["paths"][o.path][o.method].is_object(), "{o:?}");
        let url = format!("{}{}", h.base, o.path);
        let req = match o.method {
            "post" => client.post(&url).json(&serde_json::json!({})),
            _ if o.path == "/api/route/stream" => client.get(format!("{url}?id=sbx_none")),
            _ => client.get(&url),
        };
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        let routed = !(status == 404 && text.contains("\"NOT_FOUND\""));
        assert!(
            routed,
            "{} {} is documented but not served: {text}",
            o.method, o.path
        );
        assert!(
            status < 500,
            "{} {} answered {status}: {text}",
            o.method,
            o.path
        );
    }
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
