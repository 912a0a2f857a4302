//! Plus passes end to end over loopback HTTP, against an implementation
//! nobody here wrote — `@cloudflare/privacypass-ts` 0.8.1 (npm, installed by
//! `conformance/tools/sealed-js.sh`; `$RELAY_SEALED_JS` names the
//! directory), driven through `conformance/tools/privacypass-interop.mjs`:
//!
//! - passes the JavaScript client claims from the host (its own blinding
//!   and finalization) are spent on sends, once;
//! - passes `relay msg claim` holds verify under the host's published key
//!   with the library's verifier, and `relay msg send` spends one when the
//!   free ceiling refuses a row;
//! - a send over the free ceiling is 429 with a `WWW-Authenticate:
//!   PrivateToken` challenge naming the issuer's key; the sixth claim of
//!   the day from one IP is 429 with `retryAfterMs` 86400000; the issuer
//!   directory is served at RFC 9578's well-known path too.

use std::process::Command;

use alloy::signers::local::PrivateKeySigner;
use relay_sealed::message::{seal, Recipient, Row};
use relay_types::clock::ManualClock;
use serde_json::{json, Value};

use crate::common;

/// One run of the JavaScript client.
fn oracle(args: &[&str]) -> Value {
    relay_fixtures::js_oracle(
        "privacypass-interop.mjs",
        "@cloudflare/privacypass-ts",
        args,
    )
}

fn row() -> Row {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    seal(&Recipient::generate().mailbox(), "hi", now)
        .unwrap()
        .remove(0)
}

async fn send(
    http: &reqwest::Client,
    base: &str,
    pass: Option<&str>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = http
        .post(format!("{base}/api/messages/v2/send"))
        .json(&row());
    if let Some(p) = pass {
        req = req.header("x-relay-pass", p);
    }
    let resp = req.send().await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    (status, resp.json().await.unwrap(), headers)
}

fn relay_msg(
    base: &str,
    keys: &std::path::Path,
    wallet: Option<&PrivateKeySigner>,
    args: &[&str],
) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay"));
    cmd.args(["msg", "--url", base, "--keys"])
        .arg(keys)
        .args(args)
        .env_remove("RELAY_MSG_WALLET_KEY")
        .env("RELAY_LOG", "warn");
    if let Some(w) = wallet {
        cmd.env("RELAY_MSG_WALLET_KEY", hex::encode(w.to_bytes()));
    }
    let out = cmd.output().expect("relay runs");
    assert!(
        out.status.success(),
        "relay msg {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn held(keys: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(keys.with_extension("passes.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn passes_claimed_by_privacypass_ts_and_by_the_cli_are_spent_once_and_verify_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let host = common::bare_host_at(dir.path(), ManualClock::at(now), |c| {
        c.sections
            .edit("messaging", |m: &mut relay_messaging::MessagingConfig| {
                m.free_sends_per_minute = 2;
            })
            .unwrap();
    })
    .await;
    let base = host.base.clone();
    let http = reqwest::Client::new();

    // the issuer directory, at the API path and RFC 9578's well-known one
    let well_known = http
        .get(format!("{base}/.well-known/private-token-issuer-directory"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        well_known.headers()["content-type"],
        "application/private-token-issuer-directory"
    );
    let directory: Value = well_known.json().await.unwrap();
    let token_key = directory["token-keys"][0]["token-key"]
        .as_str()
        .unwrap()
        .to_string();

    // privacypass-ts claims three passes from the host and the host spends them once
    let b = base.clone();
    let claimed = tokio::task::spawn_blocking(move || oracle(&["claim", &b, "3"]))
        .await
        .unwrap();
    let js_tokens: Vec<String> = serde_json::from_value(claimed["tokens"].clone()).unwrap();
    assert_eq!(js_tokens.len(), 3, "{claimed}");
    for _ in 0..2 {
        assert_eq!(send(&http, &base, None).await.0, 200);
    }
    let (status, body, headers) = send(&http, &base, None).await;
    assert_eq!(
        (status, &body["errorCode"], &body["retryable"]),
        (429, &json!("RATE_LIMITED"), &json!(true)),
        "{body}"
    );
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("PrivateToken challenge=")
            && challenge.contains(&format!("token-key=\"{token_key}\"")),
        "{challenge}"
    );
    assert_eq!(
        send(&http, &base, Some(&js_tokens[0])).await.0,
        200,
        "a pass lifts the ceiling"
    );
    let (status, body, _) = send(&http, &base, Some(&js_tokens[0])).await;
    assert_eq!(
        (status, &body["errorCode"]),
        (409, &json!("PASS_SPENT")),
        "{body}"
    );

    // passes the CLI claims verify under the published key with privacypass-ts
    let keys = dir.path().join("alice.json");
    let wallet = PrivateKeySigner::random();
    let (b, k, w) = (base.clone(), keys.clone(), wallet.clone());
    let claimed = tokio::task::spawn_blocking(move || {
        relay_msg(&b, &k, None, &["keygen"]);
        relay_msg(&b, &k, Some(&w), &["publish"]);
        relay_msg(&b, &k, None, &["claim", "--count", "2"])
    })
    .await
    .unwrap();
    let claimed: Value = serde_json::from_str(claimed.trim()).unwrap();
    assert_eq!(
        (claimed["held"].as_u64(), claimed["remainingToday"].as_u64()),
        (Some(2), Some(15))
    );
    let cli_tokens = held(&keys);
    let (tk, t) = (token_key.clone(), cli_tokens[0].clone());
    let verdict = tokio::task::spawn_blocking(move || oracle(&["verify", &tk, &t]))
        .await
        .unwrap();
    assert_eq!(verdict, json!({"ok": true}));
    let mut forged = cli_tokens[1].clone().into_bytes();
    let last = forged.len() - 2;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    let tk = token_key.clone();
    let verdict = tokio::task::spawn_blocking(move || oracle(&["verify", &tk, &forged]))
        .await
        .unwrap();
    assert_eq!(verdict, json!({"ok": false}));

    // `relay msg send` over the free ceiling spends one held pass
    let (b, k, address) = (
        base.clone(),
        keys.clone(),
        format!("{:#x}", wallet.address()),
    );
    let sent = tokio::task::spawn_blocking(move || {
        relay_msg(
            &b,
            &k,
            None,
            &["send", "--to", &address, "--text", "over the ceiling"],
        )
    })
    .await
    .unwrap();
    assert!(sent.contains("\"pending\""), "{sent}");
    assert_eq!(held(&keys).len(), 1, "one pass spent for the one row");

    // the day's claims from one IP: two made, three more, then 429 for a day
    for _ in 0..3 {
        let (requests, _) = relay_messaging::passes::client::requests(
            &token_key,
            directory["challenge"].as_str().unwrap(),
            1,
        )
        .unwrap();
        let resp = http
            .post(format!("{base}/api/messages/v2/passes/claim"))
            .json(&json!({ "tokenRequests": requests }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
    }
    let b = base.clone();
    let sixth = tokio::task::spawn_blocking(move || oracle(&["claim", &b, "1"]))
        .await
        .unwrap();
    assert_eq!(sixth["status"], 429, "{sixth}");
    assert_eq!(
        (
            &sixth["body"]["errorCode"],
            &sixth["body"]["retryable"],
            &sixth["body"]["retryAfterMs"]
        ),
        (&json!("RATE_LIMITED"), &json!(true), &json!(86_400_000))
    );
}
