//! Rules over the discovery endpoints, typed errors, CORS, rate-limit
//! headers, routes/recent and the OpenAPI document.

use super::{ensure, Client, Target};
use serde_json::{json, Value};

fn object(v: &Value, path: &str) -> Result<(), String> {
    ensure(v.is_object(), || format!("{path}: not a JSON object: {v}"))
}

/// Every discovery GET answers 200 with the spec's fields.
pub async fn shapes(c: &Client, t: &Target) -> Result<String, String> {
    let status = c.get("/api/status").await?;
    let s = &status.json;
    ensure(
        ["operational", "degraded", "down", "unknown"]
            .contains(&s["status"].as_str().unwrap_or("")),
        || format!("/api/status status: {s}"),
    )?;
    ensure(
        s["ts"].is_u64() && s["nodes"]["up"].is_u64() && s["nodes"]["total"].is_u64(),
        || format!("/api/status ts/nodes: {s}"),
    )?;
    ensure(s["rails"].is_array() && s["endpoints"].is_array(), || {
        format!("/api/status rails/endpoints: {s}")
    })?;
    let mesh = c.get("/api/route/chains").await?.json;
    for f in [
        "nodes",
        "chains",
        "relayer",
        "permit2",
        "rails",
        "nonEvmNodes",
        "directedRoutes",
    ] {
        ensure(!mesh[f].is_null(), || {
            format!("/api/route/chains lacks {f}")
        })?;
    }
    ensure(
        mesh["chains"]
            .as_array()
            .is_some_and(|c| c.iter().any(|x| x == t.from_chain)),
        || format!("the mesh does not list chain {}", t.from_chain),
    )?;
    let g = c.get("/api/gasless/info").await?.json;
    ensure(
        g["domain"]["chainId"].is_u64() && g["domain"]["verifyingContract"].is_string(),
        || format!("/api/gasless/info domain: {g}"),
    )?;
    ensure(
        g["routes"] == json!(["direct", "cheapest", "fastest"]),
        || format!("/api/gasless/info routes: {g}"),
    )?;
    let snap = c.get("/api/capability/snapshot").await?.json;
    ensure(snap["signature"].is_string() && snap["ts"].is_u64(), || {
        format!("/api/capability/snapshot is not signed and timestamped: {snap}")
    })?;
    let errors = c.get("/api/errors").await?.json;
    ensure(
        errors["errors"].as_array().is_some_and(|e| {
            e.iter()
                .all(|x| x["errorCode"].is_string() && x["retryable"].is_boolean())
        }),
        || format!("/api/errors: {errors}"),
    )?;
    for path in [
        "/api/uptime",
        "/api/delivery/stats",
        "/api/changelog",
        "/api/pricefeeds",
        "/api/floatlane/info",
    ] {
        let a = c.get(path).await?;
        ensure(a.status == 200, || format!("{path}: {}", a.status))?;
        object(&a.json, path)?;
    }
    let m = c
        .get(&format!("/api/membership/status?address={}", t.address))
        .await?;
    ensure(m.status == 200 && m.json["tier"].is_string(), || {
        format!("membership: {}", m.text)
    })?;
    let bad = c.get("/api/membership/status").await?;
    ensure(
        bad.status == 400 && bad.json["errorCode"].is_string(),
        || format!("membership without address: {}", bad.text),
    )?;
    Ok("status, mesh, gasless, snapshot, errors, uptime, delivery, changelog, pricefeeds, floatlane, membership".into())
}

/// Bad input gets a typed 4xx naming what is wrong; unknown paths a 404.
pub async fn typed_errors(c: &Client, t: &Target) -> Result<String, String> {
    let nope = c.get("/api/no/such/path").await?;
    ensure(nope.status == 404 && nope.is_error("NOT_FOUND"), || {
        format!("unknown path: {}", nope.text)
    })?;
    let raw = c.post_raw("/api/route/quote", "{not json").await?;
    ensure(
        (400..500).contains(&raw.status) && raw.json["errorCode"].is_string(),
        || format!("malformed JSON: {} {}", raw.status, raw.text),
    )?;
    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    let mut missing = t.route();
    missing.as_object_mut().unwrap().remove("fromChain");
    cases.push(("fromChain", missing, "MISSING_FIELD"));
    let mut amount = t.route();
    amount["amount"] = json!("1.5");
    cases.push(("amount", amount, "INVALID_AMOUNT"));
    let mut token = t.route();
    token["fromToken"] = json!("NOPE");
    cases.push(("fromToken", token, "UNKNOWN_TOKEN"));
    let mut same = t.route();
    same["toChain"] = json!(t.from_chain);
    cases.push(("", same, "SAME_CHAIN_SAME_TOKEN"));
    for path in ["/api/route/quote", "/api/route/execute"] {
        for (field, body, code) in &cases {
            let a = c.post(path, body, &[("x-relay-sandbox", "1")]).await?;
            ensure((400..500).contains(&a.status) && a.is_error(code), || {
                format!("{path} {code}: {} {}", a.status, a.text)
            })?;
            ensure(
                a.json["error"].as_str().unwrap_or("").contains(field),
                || format!("{path}: the message does not name {field}: {}", a.text),
            )?;
        }
    }
    Ok(format!("{} bad bodies on quote and execute", cases.len()))
}

/// CORS allows the relay headers; responses carry rate-limit headers.
pub async fn cors_and_limits(c: &Client) -> Result<String, String> {
    let pre = c
        .send(
            reqwest::Method::OPTIONS,
            "/api/route/execute",
            None,
            &[
                ("origin", "https://wallet.example"),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "x-relay-sandbox,x-idempotency-key,x-relay-key",
                ),
            ],
        )
        .await?;
    let allowed = pre
        .header("access-control-allow-headers")
        .unwrap_or("")
        .to_ascii_lowercase();
    for h in ["x-relay-sandbox", "x-idempotency-key", "x-relay-key"] {
        ensure(allowed.contains(h) || allowed == "*", || {
            format!("CORS does not allow {h}: {allowed:?}")
        })?;
    }
    ensure(pre.header("access-control-allow-origin").is_some(), || {
        "no access-control-allow-origin".into()
    })?;
    let s = c.get("/api/status").await?;
    if let Some(limit) = s.header("x-ratelimit-limit") {
        ensure(s.header("x-ratelimit-remaining").is_some(), || {
            "x-ratelimit-remaining missing".into()
        })?;
        return Ok(format!("CORS ok; /api/status limit {limit}/min"));
    }
    Ok("CORS ok; rate limits off on this host".into())
}

/// routes/recent: coarse strings only, limit bounds.
pub async fn recent(c: &Client) -> Result<String, String> {
    let a = c.get("/api/routes/recent?limit=1000").await?;
    ensure(a.status == 200 && a.json["routes"].is_array(), || {
        format!("recent: {}", a.text)
    })?;
    let n = a.json["routes"].as_array().map_or(0, Vec::len);
    ensure(n <= 100, || format!("limit is capped at 100, got {n}"))?;
    ensure(!a.text.contains("0x") && !a.text.contains("sbx_"), || {
        format!(
            "recent leaks addresses, hashes or sandbox routes: {}",
            a.text
        )
    })?;
    let bad = c.get("/api/routes/recent?limit=abc").await?;
    ensure(bad.status == 400, || {
        format!("limit=abc: {} {}", bad.status, bad.text)
    })?;
    Ok(format!("{n} recent routes, coarse"))
}

/// Every operation of /api/openapi.json is served.
pub async fn openapi(c: &Client) -> Result<String, String> {
    let doc = c.get("/api/openapi.json").await?.json;
    let paths = doc["paths"]
        .as_object()
        .ok_or("no paths in /api/openapi.json")?;
    let mut n = 0;
    for (path, ops) in paths {
        for method in ops.as_object().into_iter().flat_map(|o| o.keys()) {
            let m = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                .map_err(|_| format!("{path}: {method:?} is not an HTTP method"))?;
            if path == "/api/route/stream" {
                continue; // a stream; checked by status-and-stream
            }
            let body = (m == reqwest::Method::POST).then(|| json!({}));
            let a = c.send(m, path, body.as_ref(), &[]).await?;
            ensure(!(a.status == 404 && a.is_error("NOT_FOUND")), || {
                format!("{method} {path} is documented but not served")
            })?;
            ensure(a.status < 500, || {
                format!("{method} {path}: {} {}", a.status, a.text)
            })?;
            n += 1;
        }
    }
    Ok(format!("{n} documented operations served"))
}
