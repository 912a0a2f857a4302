//! Rules over quote, compare, execute (sandbox, dry, idempotency), status
//! and its stream, solve, preflight, plan and agent/do. Nothing here moves
//! funds: executes are sandboxed or dry.

use super::{ensure, Client, Target};
use serde_json::{json, Value};
use std::time::Duration;

fn digits(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// A quote compares every applicable rail, winner first, fees itemised,
/// amounts as integer strings, terms attested.
pub async fn quote(c: &Client, t: &Target) -> Result<String, String> {
    let a = c.post("/api/route/quote", &t.route(), &[]).await?;
    ensure(a.status == 200, || {
        format!("quote: {} {}", a.status, a.text)
    })?;
    let q = &a.json;
    let compared = q["compared"].as_array().ok_or("no compared[]")?;
    ensure(!compared.is_empty(), || "compared[] is empty".into())?;
    ensure(
        compared[0]["best"] == true && compared[0]["rail"] == q["bridge"],
        || format!("the winner is not first: {q}"),
    )?;
    let ok = compared.iter().filter(|c| c["ok"] == true).count();
    ensure(q["bestOf"] == ok, || {
        format!("bestOf {} but {ok} answered", q["bestOf"])
    })?;
    ensure(
        q["gasless"] == true && q["relayRouteFeeBps"].is_u64(),
        || format!("gasless/fee bps: {q}"),
    )?;
    for f in [
        &q["to"]["estimated"],
        &q["to"]["min"],
        &q["from"]["amount"],
        &q["relayRouteFee"],
    ] {
        ensure(digits(f), || {
            format!("an amount is not an integer string: {f}")
        })?;
    }
    ensure(q["attestation"]["terms"].is_object(), || {
        format!("no attestation: {q}")
    })?;
    Ok(format!(
        "{} rails compared, {} won",
        compared.len(),
        q["bridge"]
    ))
}

/// Wrong method on quote and an unroutable lane are 404 `{error}`.
pub async fn quote_404(c: &Client, t: &Target) -> Result<String, String> {
    let get = c.get("/api/route/quote").await?;
    ensure(get.status == 404 && get.json["error"].is_string(), || {
        format!("GET quote: {} {}", get.status, get.text)
    })?;
    let mut lane = t.route();
    lane["toChain"] = json!("sui");
    lane["toAddress"] = json!("0x0000000000000000000000000000000000000000000000000000000000000001");
    lane["toToken"] = json!("WBTC");
    let a = c.post("/api/route/quote", &lane, &[]).await?;
    ensure(a.status == 404 || (400..500).contains(&a.status), || {
        format!("unroutable lane: {} {}", a.status, a.text)
    })?;
    ensure(a.json["error"].is_string(), || {
        format!("unroutable lane body: {}", a.text)
    })?;
    Ok("GET quote 404; unroutable lane refused".into())
}

/// Compare ranks with qualityScore and a 3 % guard, and caches a lane.
pub async fn compare(c: &Client, t: &Target) -> Result<String, String> {
    let q = format!(
        "/api/route/compare?fromChain={}&toChain={}&amount={}&fromToken={}",
        t.from_chain, t.to_chain, t.amount, t.token
    );
    let first = c.get(&q).await?;
    ensure(first.status == 200, || {
        format!("GET compare: {} {}", first.status, first.text)
    })?;
    let v = &first.json;
    ensure(v["guard"]["thresholdPct"] == 3, || format!("guard: {v}"))?;
    let quotes = v["quotes"].as_array().ok_or("no quotes[]")?;
    ensure(
        quotes
            .iter()
            .all(|q| q["ok"] == false || q["qualityScore"].as_u64().is_some_and(|s| s <= 100)),
        || format!("qualityScore outside 0-100: {v}"),
    )?;
    let again = c.get(&q).await?;
    ensure(again.json["cached"] == true, || {
        format!("the same lane is not cached: {}", again.text)
    })?;
    let post = c.post("/api/route/compare", &t.route(), &[]).await?;
    ensure(post.status == 200 && post.json["quotes"].is_array(), || {
        format!("POST compare: {}", post.text)
    })?;
    Ok(format!("{} rails ranked, best {}", quotes.len(), v["best"]))
}

/// The sandbox: sbx_ id, BRIDGING at RECEIVING, readable by status.
pub async fn sandbox(c: &Client, t: &Target) -> Result<String, String> {
    let a = c
        .post(
            "/api/route/execute",
            &t.route(),
            &[("x-relay-sandbox", "1")],
        )
        .await?;
    ensure(a.status == 200, || {
        format!("sandbox execute: {} {}", a.status, a.text)
    })?;
    let id = a.json["id"].as_str().unwrap_or("");
    ensure(id.starts_with("sbx_") && a.json["sandbox"] == true, || {
        format!("sandbox receipt: {}", a.text)
    })?;
    ensure(
        a.json["status"] == "BRIDGING" && a.json["stage"] == "RECEIVING",
        || format!("sandbox state: {}", a.text),
    )?;
    ensure(
        a.json["track"] == format!("/api/route/status?id={id}"),
        || format!("track path: {}", a.text),
    )?;
    let s = c.get(&format!("/api/route/status?id={id}")).await?;
    ensure(s.status == 200 && s.json["id"] == id, || {
        format!("status of {id}: {}", s.text)
    })?;
    Ok(id.to_string())
}

/// A repeated idempotency key replays byte for byte; another body is refused.
pub async fn idempotency(c: &Client, t: &Target) -> Result<String, String> {
    let key = format!("contract-{}", std::process::id());
    let h = [
        ("x-relay-sandbox", "1"),
        ("x-idempotency-key", key.as_str()),
    ];
    let first = c.post("/api/route/execute", &t.route(), &h).await?;
    let again = c.post("/api/route/execute", &t.route(), &h).await?;
    ensure(first.status == 200 && again.text == first.text, || {
        format!("replay differs: {} vs {}", first.text, again.text)
    })?;
    let mut other = t.route();
    other["amount"] = json!("1234567");
    let refused = c.post("/api/route/execute", &other, &h).await?;
    ensure(
        (400..500).contains(&refused.status) && refused.is_error("IDEMPOTENCY_KEY_REUSED"),
        || format!("reused key: {}", refused.text),
    )?;
    Ok("replayed byte for byte; other body refused".into())
}

/// `dryRun: true` answers DRY with `broadcast:false` and `wouldSend`.
pub async fn dry_run(c: &Client, t: &Target) -> Result<String, String> {
    let mut body = t.route();
    body["dryRun"] = json!(true);
    let a = c.post("/api/route/execute", &body, &[]).await?;
    ensure(a.status == 200, || {
        format!("dry run: {} {}", a.status, a.text)
    })?;
    ensure(
        a.json["status"] == "DRY" && a.json["broadcast"] == false && a.json["wouldSend"].is_array(),
        || format!("dry run receipt: {}", a.text),
    )?;
    Ok(format!(
        "{} steps would be sent",
        a.json["wouldSend"].as_array().map_or(0, Vec::len)
    ))
}

/// Unknown ids are 404 `unknown route id`; the stream sends the state at once.
pub async fn status_and_stream(c: &Client, t: &Target) -> Result<String, String> {
    let unknown = c.get("/api/route/status?id=rt_doesnotexist").await?;
    ensure(
        unknown.status == 404 && unknown.json["error"] == "unknown route id",
        || format!("unknown id: {} {}", unknown.status, unknown.text),
    )?;
    let sbx = c
        .post(
            "/api/route/execute",
            &t.route(),
            &[("x-relay-sandbox", "1")],
        )
        .await?;
    let id = sbx.json["id"].as_str().ok_or("no sandbox id")?;
    let mut resp = c
        .http()
        .get(format!("{}/api/route/stream?id={id}", c.base()))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    ensure(ct.starts_with("text/event-stream"), || {
        format!("stream content-type {ct:?}")
    })?;
    let chunk = tokio::time::timeout(Duration::from_secs(5), resp.chunk())
        .await
        .map_err(|_| "no event within 5 s".to_string())?
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&chunk);
    ensure(text.contains("event: status") && text.contains(id), || {
        format!("first event: {text:?}")
    })?;
    Ok("404 for unknown ids; stream opens with the current status".into())
}

/// intent/solve takes 1 to 10 sources.
pub async fn solve(c: &Client, t: &Target) -> Result<String, String> {
    let source = json!({"chain": t.from_chain, "token": t.token, "amount": t.amount});
    for n in [0usize, 11] {
        let body =
            json!({"toChain": t.to_chain, "toToken": t.token, "from": vec![source.clone(); n]});
        let a = c.post("/api/intent/solve", &body, &[]).await?;
        ensure(
            a.status == 400 && a.json["error"].as_str().unwrap_or("").contains("from"),
            || format!("{n} sources: {} {}", a.status, a.text),
        )?;
    }
    let body = json!({"toChain": t.to_chain, "toToken": t.token, "from": [source], "toAddress": t.address});
    let a = c.post("/api/intent/solve", &body, &[]).await?;
    ensure(a.status == 200 && a.json["sourcesConsidered"] == 1, || {
        format!("one source: {}", a.text)
    })?;
    Ok(format!("plan via {}", a.json["plan"]["rail"]))
}

/// preflight decides GO/NO_GO; plan reports feasibility; agent/do parses.
pub async fn preflight_plan_agent(c: &Client, t: &Target) -> Result<String, String> {
    let p = c.post("/api/route/preflight", &t.route(), &[]).await?;
    ensure(
        p.status == 200 && ["GO", "NO_GO"].contains(&p.json["decision"].as_str().unwrap_or("")),
        || format!("preflight: {} {}", p.status, p.text),
    )?;
    ensure(
        p.json["blockers"].is_array() && p.json["warnings"].is_array(),
        || format!("preflight lists: {}", p.text),
    )?;
    let plan = c
        .post(
            "/api/route/plan",
            &json!({"steps": [t.route()], "constraints": {"maxTotalSeconds": 1}}),
            &[],
        )
        .await?;
    ensure(
        plan.status == 200 && plan.json["feasible"].is_boolean(),
        || format!("plan: {} {}", plan.status, plan.text),
    )?;
    if plan.json["feasible"] == false {
        ensure(plan.json["bindingConstraint"].is_object(), || {
            format!("infeasible without bindingConstraint: {}", plan.text)
        })?;
    }
    let intent = format!(
        "send 5 {} from {} to {} to {}",
        t.token, t.from_chain, t.to_chain, t.address
    );
    let agent = c
        .post("/api/agent/do", &json!({"intent": intent}), &[])
        .await?;
    ensure(
        agent.status == 200 && agent.json["status"].is_string(),
        || format!("agent/do: {} {}", agent.status, agent.text),
    )?;
    Ok(format!(
        "preflight {}, plan feasible {}, agent {}",
        p.json["decision"], plan.json["feasible"], agent.json["status"]
    ))
}
