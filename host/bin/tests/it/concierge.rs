//! The concierge and the terms (spec §4.9): `POST /api/ask` answers
//! questions about the service with the figures of the live host — its
//! configuration (set to unusual values here, so a default cannot pass)
//! and its live endpoints — each with a citation, and says plainly when
//! it does not know; bad questions are typed 400s; `GET /api/concierge` is
//! a self-contained page; `GET /api/terms` is versioned and hashed.

use crate::common::{get, serve};
use relay_devnet::{Devnet, DevnetConfig};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const SRC: u64 = 8453;
const DST: u64 = 42161;

async fn ask(base: &str, question: &str) -> Value {
    let (code, text) =
        crate::common::post(base, "/api/ask", &json!({ "question": question }), &[]).await;
    assert_eq!(code, 200, "{question} -> {text}");
    serde_json::from_str(&text).unwrap()
}

/// Meaning of `code` in table `table` of the live `/api/errors`.
fn meaning(errors: &Value, table: &str, key: &str, code: &str) -> String {
    errors[table]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[key] == code)
        .unwrap_or_else(|| panic!("{code} not in {table}"))["meaning"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_carry_live_figures_and_citations_and_admit_ignorance() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.quote.route_fee_bps = 27;
        c.quote.member_route_fee_bps = 13;
        c.quote.gas_markup_bps = 2400;
        c.quote.member_gas_markup_bps = 900;
        c.quote.validity_ms = 45_000;
        c.quote.default_slippage_bps = 35;
        c.http.body_limit_bytes = 70_000;
        c.limits.enabled = true;
        c.limits.per_minute.insert("execute".into(), 7);
        c.limits.per_minute.insert("quote".into(), 41);
        c.limits.per_minute.insert("ask".into(), 1000);
    })
    .await;
    let b = &h.base;
    let (_, errors) = get(&format!("{b}/api/errors")).await;
    let (_, gasless) = get(&format!("{b}/api/gasless/info")).await;
    let (_, chains) = get(&format!("{b}/api/route/chains")).await;
    let (_, status) = get(&format!("{b}/api/status")).await;
    let (_, terms) = get(&format!("{b}/api/terms")).await;
    let chain_ids: Vec<String> = gasless["gaslessChains"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(chain_ids.len(), 2, "{gasless}");
    let rails: Vec<String> = chains["rails"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["rail"].as_str().unwrap().to_string())
        .collect();
    assert!(!rails.is_empty(), "{chains}");
    let s = |x: &str| x.to_string();
    let funds = relay_types::route::RouteStatus::FundsRequired.meaning();
    // (question, figures the answer must carry, a citation it must make)
    let table: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "What fee does a member pay?",
            vec![s("13 bps"), s("900 bps")],
            "/api/membership/status",
        ),
        (
            "What is the route fee for standard users?",
            vec![s("27 bps")],
            "quote.route_fee_bps",
        ),
        (
            "How much is the gas markup?",
            vec![s("2400 bps"), s("900 bps")],
            "/api/route/quote",
        ),
        (
            "What is the rate limit for execute?",
            vec![s("7 requests per minute")],
            "limits.per_minute.execute",
        ),
        (
            "How many quote requests per minute can I send?",
            vec![s("41 requests per minute")],
            "limits.per_minute.quote",
        ),
        (
            "What is the rate limit on compare?",
            vec![s("30 requests per minute")],
            "RATE_LIMITED",
        ),
        (
            "What does FUNDS_REQUIRED mean?",
            vec![s(funds)],
            "/api/route/status",
        ),
        (
            "What does a DONE status mean?",
            vec![s(relay_types::route::RouteStatus::Done.meaning())],
            "/api/route/status",
        ),
        (
            "Which chains are gasless?",
            chain_ids.clone(),
            "/api/gasless/info",
        ),
        (
            "How do I lock a price?",
            vec![s("attestation"), s("45000 ms")],
            "/api/route/execute",
        ),
        (
            "How long is a quote attestation valid?",
            vec![s("45000 ms")],
            "quote.validity_ms",
        ),
        (
            "What does PERMIT2_INVALID mean?",
            vec![
                s("HTTP 400"),
                meaning(&errors, "errors", "errorCode", "PERMIT2_INVALID"),
            ],
            "/api/errors",
        ),
        (
            "what does rate limited mean",
            vec![
                s("HTTP 429"),
                meaning(&errors, "errors", "errorCode", "RATE_LIMITED"),
            ],
            "/api/errors",
        ),
        (
            "What does PRIVATE_LANE_REQUIRED mean?",
            vec![s("HTTP 421")],
            "/api/errors",
        ),
        (
            "What is the failure code TX_REVERTED?",
            vec![meaning(&errors, "failures", "code", "TX_REVERTED")],
            "/api/errors",
        ),
        (
            "How do I sign a gasless transfer?",
            vec![
                gasless["permit2"].as_str().unwrap().to_string(),
                gasless["relayer"].as_str().unwrap().to_string(),
            ],
            "/api/gasless/info",
        ),
        (
            "What is the default slippage?",
            vec![s("35 bps")],
            "quote.default_slippage_bps",
        ),
        (
            "Is the service up right now?",
            vec![format!("is {}", status["status"].as_str().unwrap())],
            "/api/status",
        ),
        ("Which rails are installed?", rails, "/api/route/chains"),
        (
            "What is the largest request body you accept?",
            vec![s("70000 bytes")],
            "http.body_limit_bytes",
        ),
        (
            "Where is the MCP endpoint for agents?",
            vec![s("/mcp"), s("relay mcp")],
            "mcpUrl",
        ),
        (
            "What version are the terms?",
            vec![terms["version"].as_str().unwrap().to_string()],
            "/api/terms",
        ),
        (
            "How can I test without spending funds?",
            vec![s("x-relay-sandbox: 1")],
            "/api/route/execute",
        ),
        (
            "How do I verify a webhook delivery?",
            vec![s("x-relay-signature")],
            "docs/api-webhooks.md § Webhooks",
        ),
    ];
    assert!(table.len() >= 20);
    for (q, figures, cite) in &table {
        let a = ask(b, q).await;
        let text = a["answer"].as_str().unwrap();
        assert_eq!(a["known"], true, "{q} -> {a}");
        for f in figures {
            assert!(text.contains(f.as_str()), "{q}: {f:?} not in {text:?}");
        }
        let cites: Vec<&str> = a["citations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            cites.iter().any(|c| c.contains(cite)),
            "{q}: no citation of {cite}: {cites:?}"
        );
    }
    let a = ask(b, "What is the airspeed velocity of an unladen swallow?").await;
    assert_eq!(a["known"], false, "{a}");
    assert!(
        a["answer"].as_str().unwrap().starts_with("I don't know"),
        "{a}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_questions_are_typed_and_the_page_and_terms_are_served() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let long = "x".repeat(501);
    for body in [
        json!({}),
        json!({"question": ""}),
        json!({"question": "   "}),
        json!({"question": 5}),
        json!({"question": long}),
        json!({"question": "fees?", "extra": 1}),
        json!(["fees?"]),
    ] {
        let (code, text) = crate::common::post(&h.base, "/api/ask", &body, &[]).await;
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (code, v["errorCode"].as_str(), v["field"].as_str()),
            (400, Some("INVALID_QUESTION"), Some("question")),
            "{body} -> {text}"
        );
    }

    let page = crate::common::fetch(format!("{}/api/concierge", h.base))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<label for=\"question\""),
        "an input with a label"
    );
    assert!(html.contains("fetch('/api/ask'"), "asks /api/ask");
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "no external assets"
    );

    let resp = crate::common::fetch(format!("{}/api/terms", h.base))
        .await
        .unwrap();
    let version = resp.headers()["x-relay-terms-version"]
        .to_str()
        .unwrap()
        .to_string();
    let terms: Value = resp.json().await.unwrap();
    assert_eq!(terms["version"], version.as_str());
    let text = terms["text"].as_str().unwrap();
    assert!(text.contains(&format!("version {version}")), "{text}");
    assert_eq!(
        terms["sha256"],
        hex::encode(Sha256::digest(text.as_bytes()))
    );
}

/// The question whose answer is a row of the sponsorship page's table
/// (`docs/api-sponsorship.md`).
const TABLE_QUESTION: &str = "How do I sponsor a type-4 transaction?";

#[tokio::test(flavor = "multi_thread")]
async fn the_page_renders_tables_and_code_and_links_its_citations_in_a_browser() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    // the API answers it with a table row: its header and the row
    let a = ask(&h.base, TABLE_QUESTION).await;
    let text = a["answer"].as_str().unwrap();
    assert!(text.contains(":\n| ") && text.lines().count() == 3, "{a}");
    let args = ["--url", &h.base, "--table-question", TABLE_QUESTION];
    crate::common::browser_script("concierge_page.py", &args, "RELAY_CONCIERGE_SCREENSHOT").await;
    devnet.stop();
}
