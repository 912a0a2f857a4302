//! The agents' MCP doors (spec §4.11 `{mcp_url}`, §7
//! `PRIVATE_LANE_REQUIRED`), driven by a client nobody here wrote: the
//! MCP Python SDK (PyPI `mcp`, pinned by conformance/tools/mcp.sh) running
//! conformance/tools/mcp_client.py.
//!
//! - The hosted endpoint (`/mcp`, streamable HTTP) lists every tool, with
//!   input schemas that are the API's own request schemas; quote and
//!   compare through it answer exactly what the HTTP API answers for the
//!   same input; a private tool is HTTP 421 `PRIVATE_LANE_REQUIRED` with an
//!   `agentFix`; tool calls are rate-limited and tagged with the caller's
//!   `x-relay-key` exactly like API requests.
//! - `relay mcp` (stdio) runs a sandbox execute for the agent, and a
//!   session execute without a bearer in its environment is refused by the
//!   API (the server invents no credential).

use crate::common::{self, get, serve};
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};

const SRC: u64 = 8453;
const DST: u64 = 42161;

/// Runs the reference client in `mode` (`http` or `stdio`) on `plan`;
/// what it saw.
pub(crate) async fn reference_client(mode: &str, plan: Value) -> Value {
    let py =
        std::env::var("RELAY_MCP_PY").expect("RELAY_MCP_PY (conformance/tools/mcp.sh prints it)");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/tools/mcp_client.py"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.json");
    std::fs::write(&path, plan.to_string()).unwrap();
    let mode = mode.to_string();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(py)
            .arg(script)
            .arg(mode)
            .arg(&path)
            .output()
            .expect("the reference client runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mcp_client.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn route() -> Value {
    json!({"fromChain": SRC, "toChain": DST, "amount": "5000000", "fromToken": "USDC", "toToken": "USDC"})
}

/// What two answers to the same request may differ in: when and under
/// which signature they were made, when each rail answered (`quotedAt`),
/// and whether the second compare of a lane within 12 s was answered from
/// the compare cache (`cached`).
fn timeless(mut v: Value) -> Value {
    const VOLATILE: &[&str] = &[
        "ts",
        "attestation",
        "expiresAt",
        "quoteId",
        "cached",
        "quotedAt",
    ];
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !VOLATILE.contains(&k.as_str()));
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hosted_endpoint_answers_as_the_api_and_refuses_private_tools() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let (_, status) = get(&format!("{}/api/status", h.base)).await;
    assert_eq!(status["mcpUrl"], "/mcp", "{status}");
    let url = format!("{}{}", h.base, status["mcpUrl"].as_str().unwrap());

    let seen = reference_client(
        "http",
        json!({"url": url, "calls": [["quote", route()], ["compare", route()]], "private": "execute"}),
    )
    .await;
    // The HTTP API, same input, right after.
    let (qc, quote) = common::post(&h.base, "/api/route/quote", &route(), &[]).await;
    let (cc, compare) = common::post(&h.base, "/api/route/compare", &route(), &[]).await;
    assert_eq!((qc, cc), (200, 200), "{quote}\n{compare}");

    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in [
        "status",
        "chains",
        "gasless_info",
        "quote",
        "compare",
        "solve",
        "preflight",
        "plan",
        "route_status",
        "recent_routes",
        "errors",
        "execute",
        "session_execute",
        "agent_do",
    ] {
        assert!(tools.contains(&t), "{t} not listed: {tools:?}");
    }
    // Input schemas are the API's request schemas (OpenAPI components).
    let (_, doc) = get(&format!("{}/api/openapi.json", h.base)).await;
    let schema = &seen["schemas"]["quote"];
    assert_eq!(
        schema["allOf"][0]["$ref"], "#/$defs/RouteRequest",
        "{schema}"
    );
    assert_eq!(
        schema["$defs"]["RouteRequest"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        doc["components"]["schemas"]["RouteRequest"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
    // quote and compare: the API's answers, as structured content.
    let calls = seen["calls"].as_array().unwrap();
    for (call, http) in calls.iter().zip([&quote, &compare]) {
        assert_eq!(call["isError"], false, "{call}");
        let http: Value = serde_json::from_str(http).unwrap();
        assert_eq!(
            timeless(call["structured"].clone()),
            timeless(http),
            "{} differs from the HTTP API",
            call["tool"]
        );
    }
    assert!(quote.contains("\"attestation\""), "{quote}");

    // A private tool, called by the official client in its session: a tool
    // result with isError, the typed body and the agentFix reach the agent.
    let private = &seen["private"];
    assert_eq!(
        (&private["clientError"], &private["isError"]),
        (&Value::Null, &json!(true)),
        "{private}"
    );
    let shown = &private["structured"];
    assert_eq!(shown["errorCode"], "PRIVATE_LANE_REQUIRED", "{private}");
    assert!(shown["suggestedAction"].is_string(), "{private}");
    assert!(
        private["text"]
            .as_str()
            .unwrap()
            .contains("relay mcp --url"),
        "the agentFix is in the text the agent reads: {private}"
    );
    // Posted outside a session: HTTP 421 with the same typed body.
    assert_eq!(private["status"], 421, "{private}");
    let body = &private["body"];
    assert_eq!(
        (body["errorCode"].as_str(), body["retryable"].as_bool()),
        (Some("PRIVATE_LANE_REQUIRED"), Some(false)),
        "{body}"
    );
    assert!(
        body["error"].as_str().unwrap().contains("execute"),
        "{body}"
    );
    assert!(
        body["agentFix"].as_str().unwrap().contains("relay mcp"),
        "{body}"
    );
    let (_, errors) = get(&format!("{}/api/errors", h.base)).await;
    let entry = errors["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["errorCode"] == "PRIVATE_LANE_REQUIRED")
        .expect("PRIVATE_LANE_REQUIRED is in the catalogue");
    assert_eq!(entry["status"], 421);
}

/// Each public tool with its arguments, and the HTTP request it stands
/// for (method, path and query, JSON body).
fn public_calls() -> Vec<(&'static str, Value, &'static str, String, Option<Value>)> {
    let solve = json!({"toChain": DST, "toToken": "USDC", "from": [{"chain": SRC, "token": "USDC", "amount": "5000000"}]});
    vec![
        ("status", json!({}), "GET", "/api/status".into(), None),
        ("chains", json!({}), "GET", "/api/route/chains".into(), None),
        (
            "gasless_info",
            json!({"chainId": SRC}),
            "GET",
            format!("/api/gasless/info?chainId={SRC}"),
            None,
        ),
        (
            "gasless_info",
            json!({"chainId": "nine"}),
            "GET",
            "/api/gasless/info?chainId=nine".into(),
            None,
        ),
        (
            "solve",
            solve.clone(),
            "POST",
            "/api/intent/solve".into(),
            Some(solve),
        ),
        (
            "preflight",
            json!({}),
            "POST",
            "/api/route/preflight".into(),
            Some(json!({})),
        ),
        (
            "plan",
            json!({"steps": []}),
            "POST",
            "/api/route/plan".into(),
            Some(json!({"steps": []})),
        ),
        (
            "route_status",
            json!({"id": "rt_unknown"}),
            "GET",
            "/api/route/status?id=rt_unknown".into(),
            None,
        ),
        (
            "recent_routes",
            json!({"limit": 5}),
            "GET",
            "/api/routes/recent?limit=5".into(),
            None,
        ),
        (
            "recent_routes",
            json!({"limit": 0}),
            "GET",
            "/api/routes/recent?limit=0".into(),
            None,
        ),
        ("errors", json!({}), "GET", "/api/errors".into(), None),
        (
            "ask",
            json!({"question": "which chains?"}),
            "POST",
            "/api/ask".into(),
            Some(json!({"question": "which chains?"})),
        ),
        (
            "ask",
            json!({"question": 7}),
            "POST",
            "/api/ask".into(),
            Some(json!({"question": 7})),
        ),
        ("terms", json!({}), "GET", "/api/terms".into(), None),
    ]
}

/// Every public tool reaches its own operation: each answers, success or
/// typed refusal, as the HTTP API answers the same request — none is a
/// 404 of an operation the door does not know.
#[tokio::test(flavor = "multi_thread")]
async fn every_public_tool_answers_as_its_http_operation() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let calls = public_calls();
    let plan: Vec<Value> = calls.iter().map(|(t, a, ..)| json!([t, a])).collect();
    let seen = reference_client(
        "http",
        json!({"url": format!("{}/mcp", h.base), "calls": plan}),
    )
    .await;
    let seen = seen["calls"].as_array().unwrap();
    assert_eq!(seen.len(), calls.len());
    for ((tool, _, method, path, body), call) in calls.iter().zip(seen) {
        let (status, http) = match body {
            Some(b) => {
                let (c, text) = common::post(&h.base, path, b, &[]).await;
                (c, serde_json::from_str::<Value>(&text).unwrap())
            }
            None => {
                assert_eq!(*method, "GET");
                get(&format!("{}{path}", h.base)).await
            }
        };
        let tool_code = call["structured"]["errorCode"].clone();
        assert_ne!(tool_code, json!("NOT_FOUND"), "{tool}: {call}");
        assert_eq!(
            (call["isError"].as_bool(), tool_code),
            (Some(status >= 400), http["errorCode"].clone()),
            "{tool} {path}: {call}\nHTTP {status}: {http}"
        );
        if ["errors", "terms"].contains(tool) {
            assert_eq!(call["structured"], http, "{tool}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_are_limited_and_tagged_like_api_requests() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.limits.enabled = true;
        c.limits.per_minute.insert("quote".into(), 2);
    })
    .await;
    let (_, created) = common::post(&h.base, "/api/keys/create", &json!({}), &[]).await;
    let key = serde_json::from_str::<Value>(&created).unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();
    let seen = reference_client(
        "http",
        json!({
            "url": format!("{}/mcp", h.base),
            "headers": {"x-relay-key": key},
            "calls": [["quote", route()], ["quote", route()], ["quote", route()]],
        }),
    )
    .await;
    let answers: Vec<(bool, Value)> = seen["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["isError"].as_bool().unwrap(),
                c["structured"]["errorCode"].clone(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            (false, Value::Null),
            (false, Value::Null),
            (true, json!("RATE_LIMITED"))
        ]
    );
    // The key's bucket is spent for HTTP too, and so is its IP's: a key
    // raises no ceiling its IP did not have.
    let (code, _) = common::post(
        &h.base,
        "/api/route/quote",
        &route(),
        &[("x-relay-key", &key)],
    )
    .await;
    assert_eq!(code, 429);
    let (code, _) = common::post(&h.base, "/api/route/quote", &route(), &[]).await;
    assert_eq!(code, 429);
    // The tool calls are in the key's usage, as requests.
    h.host_state.keys.flush().await.unwrap();
    let (_, usage) = get(&format!("{}/api/keys/usage?key={key}", h.base)).await;
    let mut quotes: Vec<u64> = usage["recent"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "/api/route/quote")
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    quotes.sort();
    assert_eq!(quotes, [200, 200, 429, 429], "{usage}");
}

#[tokio::test(flavor = "multi_thread")]
async fn relay_mcp_over_stdio_runs_a_sandbox_execute() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let mut execute = common::permit_body(&devnet, (SRC, DST), 5_000_000, 21);
    execute["x-relay-sandbox"] = json!("1");
    let seen = reference_client(
        "stdio",
        json!({
            "command": env!("CARGO_BIN_EXE_relay"),
            "args": ["mcp", "--url", h.base],
            "env": {"RELAY_LOG": "warn", "RELAY_SESSION_TOKEN": ""},
            "calls": [["execute", execute], ["session_execute", route()]],
        }),
    )
    .await;
    let tools = seen["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("execute")) && tools.contains(&json!("quote")));
    let sbx = &seen["calls"][0];
    assert_eq!(sbx["isError"], false, "{sbx}");
    let id = sbx["structured"]["id"].as_str().unwrap();
    assert!(id.starts_with("sbx_"), "{sbx}");
    assert_eq!(sbx["structured"]["sandbox"], true, "{sbx}");
    // The route is the host's: it answers at /api/route/status.
    let (code, st) = get(&format!("{}/api/route/status?id={id}", h.base)).await;
    assert_eq!(
        (code, st["status"].as_str()),
        (200, Some("BRIDGING")),
        "{st}"
    );
    // No bearer in the environment: the API refuses, nothing is invented.
    let ses = &seen["calls"][1];
    assert_eq!(
        (
            ses["isError"].as_bool(),
            ses["structured"]["errorCode"].as_str()
        ),
        (Some(true), Some("SESSION_UNAUTHORIZED")),
        "{ses}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_hosts_and_browser_origins_are_refused() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.http.mcp_allowed_hosts = vec!["127.0.0.1".into()];
    })
    .await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let send = |headers: &'static [(&'static str, &'static str)]| {
        let mut req = crate::common::http()
            .post(format!("{}/mcp", h.base))
            .header("accept", "application/json, text/event-stream")
            .json(&init);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(send(&[]).await, 200, "an agent on an allowed host");
    assert_eq!(send(&[("host", "relay.attacker.example")]).await, 403);
    assert_eq!(send(&[("origin", "https://attacker.example")]).await, 403);
}
