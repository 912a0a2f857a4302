//! The sample Grafana dashboard (`docs/grafana/relay-dashboard.json`) asks
//! only for what a live host exports: every metric name its queries use
//! appears in a real host's `GET /metrics` after traffic, with the labels
//! the queries group by.

use crate::common::{self, free_port, post};
use relay_config::{ChainConfig, HostConfig};
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const SRC: u64 = 8453;
const DST: u64 = 42161;

fn dashboard() -> Value {
    let path = relay_fixtures::workspace_root().join("docs/grafana/relay-dashboard.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("dashboard JSON")
}

/// Every query of the dashboard.
fn exprs(d: &Value) -> Vec<String> {
    d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect()
}

/// `relay_*` names in a query.
fn names(expr: &str) -> BTreeSet<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("relay_"))
        .map(String::from)
        .collect()
}

/// Labels a query groups by (`by (a, b)`), `le` aside.
fn by_labels(expr: &str) -> Vec<String> {
    expr.split("by (")
        .skip(1)
        .flat_map(|rest| rest.split(')').next().unwrap_or("").split(','))
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && l != "le")
        .collect()
}

#[test]
fn the_dashboard_is_a_grafana_dashboard_on_a_prometheus_datasource() {
    let d = dashboard();
    assert_eq!(d["title"], "relay");
    assert!(d["schemaVersion"].as_u64().unwrap() >= 30);
    let panels = d["panels"].as_array().unwrap();
    let ids: BTreeSet<u64> = panels.iter().map(|p| p["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    for p in panels {
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{p}");
        assert!(p["gridPos"]["w"].as_u64().unwrap() > 0, "{p}");
        assert!(!p["targets"].as_array().unwrap().is_empty(), "{p}");
    }
    assert_eq!(d["templating"]["list"][0]["type"], "datasource");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_metric_the_dashboard_queries_is_exported_by_a_live_host() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A third chain whose RPC is down: its balance read fails on scrape.
    let dead = format!("http://127.0.0.1:{}/", free_port());
    let h = common::serve(&devnet, dir.path(), |c: &mut HostConfig| {
        c.chains.insert(
            "10".into(),
            ChainConfig {
                rpc: vec![dead],
                ..ChainConfig::default()
            },
        );
    })
    .await;
    let quote = json!({"fromChain": SRC, "toChain": DST, "fromToken": "USDC", "amount": "5000000"});
    let (code, text) = post(&h.base, "/api/route/quote", &quote, &[]).await;
    assert_eq!(code, 200, "{text}");
    let text = crate::common::fetch(format!("{}/metrics", h.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let d = dashboard();
    let queries = exprs(&d);
    assert!(queries.len() >= 8, "{queries:?}");
    let mut used = BTreeSet::new();
    for q in &queries {
        let ns = names(q);
        assert!(!ns.is_empty(), "{q} queries no relay metric");
        for n in &ns {
            let lines: Vec<&&str> = samples
                .iter()
                .filter(|l| l.starts_with(&format!("{n}{{")) || l.starts_with(&format!("{n} ")))
                .collect();
            assert!(!lines.is_empty(), "{n} (in {q}) is not exported:\n{text}");
            for label in by_labels(q) {
                assert!(
                    lines.iter().any(|l| l.contains(&format!("{label}=\""))),
                    "{n} has no label {label} (in {q})"
                );
            }
            used.insert(n.clone());
        }
    }
    // Every metric the host documents has a panel.
    for m in [
        "relay_http_requests_total",
        "relay_http_request_duration_seconds_bucket",
        "relay_rail_calls_total",
        "relay_rail_call_duration_seconds_bucket",
        "relay_routes",
        "relay_relayer_native_balance",
        "relay_relayer_balance_read_failures_total",
    ] {
        assert!(used.contains(m), "no panel shows {m}");
    }
    devnet.stop();
}
