//! `POST /api/route/batch`: 20 legs are each planned once; what is wrong
//! with a batch is refused by field before any leg is quoted.

use relay_config::{ChainConfig, HostConfig, TokenConfig};
use relay_errors::{ApiError, ErrorCode};
use relay_feature::{
    operator::OwnerTokenHash,
    testing::{parts, App, TestState},
    Handles,
};
use relay_primitives::{
    http::{Live, MockPlanner},
    watcher::MockRunner,
};
use serde_json::{json, Value};
use std::sync::Arc;

const PAYEE: &str = "0x00000000000000000000000000000000000Ca5e1";
const OWNER_TOKEN: &str = "the-owner-token";

fn route(amount: u64) -> Value {
    json!({"fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "toToken": "USDC",
           "amount": amount.to_string(), "toAddress": PAYEE})
}

/// A host serving USDC on Base and Arbitrum (no RPC: nothing here reads a
/// chain).
fn config() -> HostConfig {
    let mut c = HostConfig::default();
    for (id, usdc) in [
        ("8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        ("42161", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
    ] {
        let mut chain = ChainConfig::default();
        let token = TokenConfig {
            address: usdc.into(),
            decimals: 6,
        };
        chain.tokens.insert("USDC".into(), token);
        c.chains.insert(id.into(), chain);
    }
    c
}

/// The feature over a fresh store in `dir`, its legs planned by `planner`;
/// no run is expected.
async fn app(dir: &std::path::Path, planner: MockPlanner) -> App {
    let mut p = parts(dir, config()).await;
    p.owner = Some(OwnerTokenHash::of_token(OWNER_TOKEN));
    let mut handles = Handles::default();
    handles.insert(Live {
        runner: Arc::new(MockRunner::new()),
        planner: Arc::new(planner),
    });
    App::start(&relay_primitives::http::feature::<TestState>(), p, handles)
        .await
        .unwrap()
}

fn refused(answer: &(u16, Value), want: (u16, &str, &str)) {
    let (code, v) = answer;
    assert_eq!(
        (*code, v["errorCode"].as_str(), v["field"].as_str()),
        (want.0, Some(want.1), Some(want.2)),
        "{v}"
    );
    assert_eq!(v["retryable"], false, "a caller's mistake: {v}");
}

#[tokio::test]
async fn twenty_legs_are_each_planned_once_and_a_leg_no_rail_carries_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let mut planner = MockPlanner::new();
    planner
        .expect_winner()
        .withf(|ask, rail| {
            ask.recipient
                .as_deref()
                .is_some_and(|r| r.eq_ignore_ascii_case(PAYEE))
                && rail.is_none()
        })
        .times(20)
        .returning(|_, _| {
            Err(ApiError::new(
                ErrorCode::RailsUnavailable,
                "no rail answered in time",
            ))
        });
    let app = app(dir.path(), planner).await;
    let legs: Vec<Value> = (0..20).map(|i| route(1_000_000 + i * 1000)).collect();
    let (code, b) = app
        .post("/api/route/batch", &json!({"routes": legs}), &[])
        .await;
    assert_eq!(code, 200, "{b}");
    assert!(b["id"].as_str().unwrap().starts_with("batch_"), "{b}");
    assert_eq!(
        (b["status"].as_str(), b["live"].as_bool()),
        (Some("planned"), Some(false))
    );
    let planned = b["legs"].as_array().unwrap();
    assert_eq!(planned.len(), 20);
    for (i, leg) in planned.iter().enumerate() {
        assert_eq!((&leg["index"], &leg["route"]), (&json!(i), &legs[i]));
        assert_eq!(leg["plan"]["ok"], false, "{leg}");
        assert_eq!(leg["plan"]["errorCode"], "RAILS_UNAVAILABLE", "{leg}");
    }
    let warnings = b["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 20, "{b}");
    assert!(
        warnings[3]
            .as_str()
            .unwrap()
            .starts_with("routes[3]: RAILS_UNAVAILABLE"),
        "{b}"
    );
    let read = app
        .get(&format!("/api/route/batch/{}", b["id"].as_str().unwrap()))
        .await;
    assert_eq!(read, (200, b));
}

#[tokio::test]
async fn a_bad_batch_is_refused_by_field_before_any_leg_is_quoted() {
    let dir = tempfile::tempdir().unwrap();
    // Never asked: a batch is checked whole before its legs are quoted.
    let mut planner = MockPlanner::new();
    planner.expect_winner().never();
    let app = app(dir.path(), planner).await;
    let legs: Vec<Value> = (0..21).map(|i| route(1_000_000 + i)).collect();
    let post = |body: Value| {
        let app = &app;
        async move { app.post("/api/route/batch", &body, &[]).await }
    };
    refused(
        &post(json!({"routes": legs})).await,
        (400, "INVALID_FIELD", "routes"),
    );
    let mut no_to = legs[..5].to_vec();
    no_to[3].as_object_mut().unwrap().remove("toAddress");
    let missing = post(json!({"routes": no_to})).await;
    refused(&missing, (400, "MISSING_FIELD", "routes[3].toAddress"));
    let mut bad_chain = legs[..2].to_vec();
    bad_chain[1]["toChain"] = json!(999_999);
    let (code, e) = post(json!({"routes": bad_chain})).await;
    assert_eq!(
        (code, e["field"].as_str()),
        (400, Some("routes[1].toChain")),
        "{e}"
    );
    let live = post(json!({"routes": legs[..1], "live": true})).await;
    refused(&live, (401, "OPERATOR_AUTH_REQUIRED", "live"));
    let (code, e) = app.get("/api/route/batch/batch_nope").await;
    assert_eq!(
        (code, e["errorCode"].as_str()),
        (404, Some("PRIMITIVE_NOT_FOUND")),
        "{e}"
    );
    for not_json in [json!([1, 2]), json!("routes")] {
        let (code, e) = post(not_json).await;
        assert_eq!(code, 400, "{e}");
    }
}
