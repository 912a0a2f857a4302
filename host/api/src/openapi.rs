//! `GET /api/openapi.json` (OpenAPI 3.1) and `GET /api/docs` (a browsable
//! page over it). The document is generated from one table of operations
//! ([`OPERATIONS`]) and the error-code table, so it cannot miss an
//! `errorCode`; a test requests every operation in the table against the
//! live router, so it cannot list a path the host does not serve.

use super::{AppState, ErrorCode};
use axum::{response::Html, routing::get, Json, Router};
use serde_json::{json, Map, Value};

/// One operation: method, path, summary, request schema (body) or query
/// parameters `(name, required, description)`, response schema.
#[derive(Clone, Copy, Debug)]
pub struct Operation {
    /// `get` or `post`.
    pub method: &'static str,
    /// Path.
    pub path: &'static str,
    /// What it does.
    pub summary: &'static str,
    /// Request body schema name, if it takes one.
    pub body: Option<&'static str>,
    /// Query parameters.
    pub query: &'static [(&'static str, bool, &'static str)],
    /// Response schema name.
    pub response: &'static str,
}

const fn op(
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    body: Option<&'static str>,
    query: &'static [(&'static str, bool, &'static str)],
    response: &'static str,
) -> Operation {
    Operation {
        method,
        path,
        summary,
        body,
        query,
        response,
    }
}

const ID: &[(&str, bool, &str)] = &[("id", true, "route id (rt_… or sbx_…)")];
const COMPARE_Q: &[(&str, bool, &str)] = &[
    ("fromChain", true, "source node"),
    ("toChain", true, "destination node"),
    ("amount", true, "source smallest units"),
    ("fromToken", false, "symbol or address"),
    ("toToken", false, "symbol or address"),
    ("toAddress", false, "recipient"),
];
const SOLVE_Q: &[(&str, bool, &str)] = &[
    ("toChain", true, "destination node"),
    ("toToken", true, "destination token"),
    (
        "from",
        true,
        "url-encoded JSON array of {chain, token, amount}",
    ),
    ("goal", false, "max-output (default), cheapest, fastest"),
    ("amount", false, "shared amount when sources omit theirs"),
    ("toAddress", false, "recipient"),
];

/// Every operation the API serves (spec §4.1–4.3).
pub const OPERATIONS: &[Operation] = &[
    op(
        "get",
        "/api/status",
        "Service health: nodes, rails, endpoints (30 s cache)",
        None,
        &[],
        "Status",
    ),
    op(
        "get",
        "/api/route/chains",
        "The mesh, derived from the loaded rails and live health",
        None,
        &[],
        "Mesh",
    ),
    op(
        "get",
        "/api/gasless/info",
        "Gasless signing info and the EIP-712 domain",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/uptime",
        "Per-day availability from the host's own prober",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/delivery/stats",
        "Delivery success and latency distribution",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/capability/snapshot",
        "Signed, timestamped capability snapshot",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/errors",
        "The catalogue of every errorCode",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/changelog",
        "Changes to the API",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/pricefeeds",
        "The price inputs the host uses",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/floatlane/info",
        "Float-lane tiers, cost floors, recognised collections",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/membership/status",
        "Membership tier and benefits of an address",
        None,
        &[("address", true, "0x address")],
        "Object",
    ),
    op(
        "post",
        "/api/route/quote",
        "Best-of-N quote, every applicable rail compared",
        Some("RouteRequest"),
        &[],
        "Quote",
    ),
    op(
        "post",
        "/api/route/execute",
        "Execute a route (headers x-relay-sandbox, x-idempotency-key, x-relay-key)",
        Some("ExecuteRequest"),
        &[],
        "RouteReceipt",
    ),
    op(
        "get",
        "/api/route/status",
        "A route's receipt (live ids re-checked through the rail)",
        None,
        ID,
        "RouteReceipt",
    ),
    op(
        "get",
        "/api/route/stream",
        "Server-sent events: status on change, done at the end",
        None,
        ID,
        "EventStream",
    ),
    op(
        "post",
        "/api/route/preflight",
        "GO/NO_GO with blockers and warnings (query deep=1 reads chain state)",
        Some("ExecuteRequest"),
        &[(
            "deep",
            false,
            "1: relayer balance and Permit2 allowance checks",
        )],
        "Object",
    ),
    op(
        "post",
        "/api/route/plan",
        "Feasibility of a multi-step plan under constraints",
        Some("Object"),
        &[],
        "Object",
    ),
    op(
        "post",
        "/api/agent/do",
        "Plain-language or structured intent to a sign request",
        Some("Object"),
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/route/compare",
        "Every applicable rail ranked (12 s cache)",
        None,
        COMPARE_Q,
        "CompareResult",
    ),
    op(
        "post",
        "/api/route/compare",
        "Every applicable rail ranked (12 s cache)",
        Some("RouteRequest"),
        &[],
        "CompareResult",
    ),
    op(
        "get",
        "/api/intent/solve",
        "Best source among 1-10 for a goal (never executes)",
        None,
        SOLVE_Q,
        "Object",
    ),
    op(
        "post",
        "/api/intent/solve",
        "Best source among 1-10 for a goal (never executes)",
        Some("Object"),
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/routes/recent",
        "Recent routes, coarse (no addresses, hashes or amounts)",
        None,
        &[("limit", false, "default 25, max 100")],
        "Object",
    ),
    op(
        "get",
        "/api/openapi.json",
        "This document",
        None,
        &[],
        "Object",
    ),
    op(
        "get",
        "/api/docs",
        "A browsable page over this document",
        None,
        &[],
        "Html",
    ),
];

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/openapi.json", get(|| async { Json(document()) }))
        .route("/api/docs", get(|| async { Html(DOCS_PAGE) }))
}

fn schema_ref(name: &str) -> Value {
    match name {
        "Object" => json!({"type": "object"}),
        "Html" => json!({"type": "string"}),
        "EventStream" => json!({"type": "string", "description": "text/event-stream"}),
        other => json!({"$ref": format!("#/components/schemas/{other}")}),
    }
}

fn operation(o: &Operation) -> Value {
    let params: Vec<Value> = o
        .query
        .iter()
        .map(|(name, required, desc)| {
            json!({"name": name, "in": "query", "required": required, "description": desc, "schema": {"type": "string"}})
        })
        .collect();
    let mut v = json!({
        "summary": o.summary,
        "parameters": params,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": schema_ref(o.response)}}},
            "default": {"description": "A typed error", "content": {"application/json": {"schema": schema_ref("Error")}}},
        },
    });
    if let Some(body) = o.body {
        v["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": schema_ref(body)}}});
    }
    v
}

fn schemas() -> Value {
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let s = |t: &str| json!({"type": t});
    let amount = json!({"type": "string", "pattern": "^[0-9]+$", "description": "smallest units"});
    let node = json!({"oneOf": [{"type": "integer"}, {"type": "string"}], "description": "EVM chain id, or solana, stellar, bitcoin, tron, sui"});
    let route_request = json!({
        "type": "object",
        "required": ["fromChain", "toChain", "amount"],
        "properties": {
            "fromChain": node, "toChain": node, "amount": amount,
            "fromToken": s("string"), "toToken": s("string"), "token": s("string"),
            "toAddress": s("string"), "fromAddress": s("string"),
            "slippage": {"type": "number", "description": "fraction, e.g. 0.005"},
        },
    });
    let mut execute = route_request.clone();
    let props = execute["properties"].as_object_mut().expect("object");
    for (k, v) in [
        ("mode", json!({"enum": ["self", "permit2"]})),
        (
            "permit2",
            json!({"type": "object", "description": "{owner, permitted:{token, amount}, nonce, deadline, signature}"}),
        ),
        ("rail", s("string")),
        ("minOut", amount.clone()),
        (
            "attestation",
            json!({"type": "object", "description": "a quote's attestation {terms, signature}"}),
        ),
        ("dryRun", s("boolean")),
        ("live", s("boolean")),
    ] {
        props.insert(k.into(), v);
    }
    json!({
        "Error": {
            "type": "object",
            "required": ["error", "errorCode", "retryable"],
            "properties": {
                "error": s("string"),
                "errorCode": {"enum": codes},
                "retryable": s("boolean"),
                "retryAfterMs": s("integer"),
                "suggestedAction": s("string"),
                "field": s("string"),
            },
        },
        "RouteRequest": route_request,
        "ExecuteRequest": execute,
        "Status": {"type": "object", "required": ["status", "ts", "nodes", "rails"]},
        "Mesh": {"type": "object", "required": ["nodes", "chains", "rails", "relayer", "permit2"]},
        "Quote": {"type": "object", "required": ["gasless", "from", "to", "bridge", "bestOf", "compared", "attestation"]},
        "RouteReceipt": {"type": "object", "required": ["id", "status", "from", "to", "track"]},
        "CompareResult": {"type": "object", "required": ["lane", "quotes", "best", "guard", "cached"]},
    })
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for o in OPERATIONS {
        let entry = paths.entry(o.path.to_string()).or_insert_with(|| json!({}));
        entry[o.method] = operation(o);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "relay",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Gasless cross-chain relay: quote, compare and execute over pluggable rails. Amounts are decimal strings of smallest units.",
        },
        "paths": paths,
        "components": {"schemas": schemas()},
    })
}

/// A self-contained page (no external assets) that renders the document.
const DOCS_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>relay API</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}code{background:#f3f3f3;padding:0 .3em}
h2{margin-top:1.5em}.m{font-weight:bold;text-transform:uppercase;display:inline-block;width:4em}</style></head>
<body><h1>relay API</h1><p>Generated from <a href="/api/openapi.json">/api/openapi.json</a>. Errors: <a href="/api/errors">/api/errors</a>.</p>
<div id="ops">loading…</div>
<script>
fetch('/api/openapi.json').then(r=>r.json()).then(doc=>{
  const out=[];
  for(const [path,ops] of Object.entries(doc.paths)){
    for(const [m,o] of Object.entries(ops)){
      const q=(o.parameters||[]).map(p=>`<code>${p.name}${p.required?'':'?'}</code>`).join(' ');
      const b=o.requestBody?` body <code>${(o.requestBody.content['application/json'].schema.$ref||'object').split('/').pop()}</code>`:'';
      out.push(`<div><span class="m">${m}</span><code>${path}</code> — ${o.summary} ${q}${b}</div>`);
    }
  }
  document.getElementById('ops').innerHTML=out.join('');
});
</script></body></html>"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_and_operation_is_in_the_document() {
        let d = document();
        let listed = d["components"]["schemas"]["Error"]["properties"]["errorCode"]["enum"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(listed, ErrorCode::ALL.len());
        for o in OPERATIONS {
            assert!(d["paths"][o.path][o.method].is_object(), "{o:?}");
        }
    }
}
