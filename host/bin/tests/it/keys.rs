//! Developer keys over real HTTP against the real server (spec §2.13,
//! §4.5, §5.2): a key is shown once, its usage counts exactly what its
//! requests did (totals, errors, top paths, recent), a made-up key buys no
//! bucket of its own while an issued key gets one, a revoked key is
//! treated like no key, creating keys is limited per IP whatever key is
//! sent, and two replicas on Postgres share keys and usage.

use crate::common::{self, send, wait_for, Answer};
use relay_types::{Clock as _, SystemClock};
use std::path::Path;

use relay_config::HostConfig;
use relay_host::devnet::ServedHost;
use relay_store::KeyStore;
use serde_json::{json, Value};

/// A host with no chains and no plugins (the keys need nothing else),
/// limits off unless `tweak` turns them on.
async fn bare_host(dir: &Path, tweak: impl FnOnce(&mut HostConfig)) -> ServedHost {
    common::bare_host(dir, |c| {
        c.limits.enabled = false;
        tweak(c)
    })
    .await
}

fn get(base: &str, path: &str, key: Option<&str>) -> reqwest::RequestBuilder {
    let req = crate::common::http().get(format!("{base}{path}"));
    match key {
        Some(k) => req.header("x-relay-key", k),
        None => req,
    }
}

fn post(base: &str, path: &str, body: Option<Value>, key: Option<&str>) -> reqwest::RequestBuilder {
    let mut req = crate::common::http().post(format!("{base}{path}"));
    if let Some(b) = body {
        req = req.json(&b);
    }
    match key {
        Some(k) => req.header("x-relay-key", k),
        None => req,
    }
}

/// Creates a key; its text.
async fn create(base: &str, label: &str) -> String {
    let a = send(post(
        base,
        "/api/keys/create",
        Some(json!({"label": label})),
        None,
    ))
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["key"].as_str().unwrap().to_string()
}

fn code(a: &Answer) -> (u16, Option<&str>) {
    (a.status, a.body["errorCode"].as_str())
}

/// `topPaths` as (path, count) pairs.
fn paths(window: &Value) -> Vec<(String, u64)> {
    window["topPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn owned(v: &[(&str, u64)]) -> Vec<(String, u64)> {
    v.iter().map(|(p, n)| (p.to_string(), *n)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_is_shown_once_and_its_usage_counts_what_its_requests_did() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |_| {}).await;
    let base = h.base.as_str();
    let before = SystemClock.now_ms();
    let made = send(post(
        base,
        "/api/keys/create",
        Some(json!({"label": "ci bot"})),
        None,
    ))
    .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let key = made.body["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("ak_") && key.len() == 43, "{key}");
    assert!(key[3..].bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    assert_eq!(made.body["label"], "ci bot");
    let created = made.body["created"].as_u64().unwrap();
    assert!((before..=SystemClock.now_ms()).contains(&created));
    let note = made.body["note"].as_str().unwrap();
    assert!(
        note.contains("Shown once") && note.contains("never required"),
        "{note}"
    );

    // Metadata, by header; the key itself is never shown again.
    let me = send(get(base, "/api/keys/me", Some(&key))).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(
        me.body,
        json!({"key": {"label": "ci bot", "created": created, "prefix": &key[..7]}, "status": "active"})
    );

    // Requests made with the key (and two that are not: no key, and a
    // made-up one), in order: method, URL path, matched route, status.
    let made_up = "ak_00000000000000000000000000000000000000ff";
    let plan: &[(&str, &str, u16)] = &[
        ("/api/status", "/api/status", 200),
        (
            "/api/route/status?id=rt_00000000000000000001",
            "/api/route/status",
            404,
        ),
        ("/api/status", "/api/status", 200),
        ("/api/no/such/path", "(unknown path)", 404),
        (
            "/api/route/status?id=rt_00000000000000000002",
            "/api/route/status",
            404,
        ),
        ("/api/status", "/api/status", 200),
        ("/api/status", "/api/status", 200),
        ("/nothing-here", "(unknown path)", 404),
        (
            "/api/route/status?id=rt_00000000000000000003",
            "/api/route/status",
            404,
        ),
        ("/api/status", "/api/status", 200),
    ];
    let start = SystemClock.now_ms();
    for (url, _, status) in plan {
        let a = send(get(base, url, Some(&key))).await;
        assert_eq!(a.status, *status, "{url}: {}", a.body);
        send(get(base, url, None)).await;
        send(get(base, url, Some(made_up))).await;
    }
    let end = SystemClock.now_ms();

    // Usage is written in the background; waiting for the write under
    // way makes what follows exact.
    h.state.keys.flush().await.unwrap();
    let u = send(get(base, &format!("/api/keys/usage?key={key}"), None)).await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert!(
        !u.body.to_string().contains(&key),
        "the key is never shown again"
    );
    assert_eq!(
        u.body["key"],
        json!({"label": "ci bot", "created": created})
    );
    let top = owned(&[
        ("/api/status", 5),
        ("/api/route/status", 3),
        ("(unknown path)", 2),
        ("/api/keys/me", 1),
    ]);
    for window in ["hour", "day"] {
        let w = &u.body[window];
        assert_eq!(
            (w["total"].as_u64(), w["errors"].as_u64()),
            (Some(11), Some(5)),
            "{window}: {w}"
        );
        assert_eq!(paths(w), top, "{window}");
    }
    let recent = u.body["recent"].as_array().unwrap();
    let seen: Vec<(&str, &str, u64)> = recent
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap(),
                r["path"].as_str().unwrap(),
                r["status"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut want: Vec<(&str, &str, u64)> = std::iter::once(("GET", "/api/keys/me", 200))
        .chain(plan.iter().map(|(_, p, s)| ("GET", *p, u64::from(*s))))
        .collect();
    want.reverse();
    assert_eq!(seen, want, "newest first");
    let ts: Vec<u64> = recent.iter().map(|r| r["ts"].as_u64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] >= w[1]), "{ts:?}");
    assert!(
        ts[..10].iter().all(|t| (start..=end).contains(t)),
        "{ts:?} not in {start}..={end}"
    );

    // Reading usage is a request too: the read above now shows.
    h.state.keys.flush().await.unwrap();
    let again = send(get(base, "/api/keys/usage", Some(&key))).await;
    assert_eq!(again.body["hour"]["total"], 12);
    assert_eq!(again.body["recent"][0]["path"], "/api/keys/usage");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_key_requests_are_typed_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |_| {}).await;
    let base = h.base.as_str();
    // A body is optional; an empty object is fine.
    for body in [None, Some(json!({})), Some(json!({"label": null}))] {
        let a = send(post(base, "/api/keys/create", body.clone(), None)).await;
        assert_eq!(
            (a.status, &a.body["label"]),
            (200, &Value::Null),
            "{body:?}: {}",
            a.body
        );
    }
    for (body, field) in [
        (json!({"lable": "typo"}), "lable"),
        (json!({"label": "x".repeat(65)}), "label"),
        (json!({"label": "bell\u{7}"}), "label"),
        (json!({"label": 7}), "label"),
    ] {
        let a = send(post(base, "/api/keys/create", Some(body.clone()), None)).await;
        assert_eq!(code(&a), (400, Some("INVALID_FIELD")), "{body}: {}", a.body);
        assert_eq!(a.body["field"], field, "{body}");
    }
    let a = send(post(base, "/api/keys/create", Some(json!([1])), None)).await;
    assert_eq!(code(&a), (400, Some("MALFORMED_BODY")), "{}", a.body);
    for path in ["/api/keys/me", "/api/keys/usage"] {
        let a = send(get(base, path, None)).await;
        assert_eq!(code(&a), (400, Some("KEY_REQUIRED")), "{path}: {}", a.body);
        for key in [
            "ak_00000000000000000000000000000000000000ff",
            "not-a-key",
            "",
        ] {
            let a = send(get(base, path, Some(key))).await;
            assert_eq!(
                code(&a),
                (404, Some("KEY_UNKNOWN")),
                "{path} {key:?}: {}",
                a.body
            );
        }
    }
    let a = send(post(base, "/api/keys/revoke", None, None)).await;
    assert_eq!(code(&a), (400, Some("KEY_REQUIRED")), "{}", a.body);
    let key = create(base, "x").await;
    let a = send(post(
        base,
        "/api/keys/revoke",
        Some(json!({"key": key})),
        None,
    ))
    .await;
    assert_eq!(
        code(&a),
        (400, Some("INVALID_FIELD")),
        "the key is not read from the body: {}",
        a.body
    );
    let catalogue = send(get(base, "/api/errors", None)).await;
    let listed: Vec<&str> = catalogue.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["errorCode"].as_str())
        .collect();
    assert!(listed.contains(&"KEY_REQUIRED") && listed.contains(&"KEY_UNKNOWN"));
}

#[tokio::test(flavor = "multi_thread")]
async fn made_up_keys_share_their_ips_bucket_and_issued_keys_raise_no_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |c| {
        c.limits.enabled = true;
        c.limits.per_minute.insert("status".into(), 3);
    })
    .await;
    let base = h.base.as_str();
    let (a, b) = (create(base, "a").await, create(base, "b").await);
    let status = |key: String| send(get(base, "/api/status", Some(&key)));
    // An issued key has a bucket of its own, and its IP's still applies.
    let r = status(a.clone()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-relay-key-status"), Some("issued"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("2"));
    // Made-up keys, one per request: all counted against the IP.
    for i in 0..2 {
        let r = status(format!("ak_made_up_{i:04}")).await;
        assert_eq!(r.status, 200, "{i}: {}", r.body);
        assert_eq!(r.header("x-relay-key-status"), Some("unrecognised"));
    }
    let refused = status("ak_made_up_0003".into()).await;
    assert_eq!(
        code(&refused),
        (429, Some("RATE_LIMITED")),
        "{}",
        refused.body
    );
    let no_key = send(get(base, "/api/status", None)).await;
    assert_eq!(no_key.status, 429, "the IP's bucket is spent");
    // Neither issued key buys a request more from this IP.
    for key in [&a, &b] {
        let over = status(key.clone()).await;
        assert_eq!(code(&over), (429, Some("RATE_LIMITED")), "{}", over.body);
        assert_eq!(over.header("x-relay-key-status"), Some("issued"));
    }
    // Revoked: like no key, so still in the IP's (spent) bucket.
    let r = send(post(base, "/api/keys/revoke", None, Some(&b))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let after = status(b.clone()).await;
    assert_eq!(after.header("x-relay-key-status"), Some("unrecognised"));
    assert_eq!(code(&after), (429, Some("RATE_LIMITED")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_key_is_treated_like_no_key() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |_| {}).await;
    let base = h.base.as_str();
    let key = create(base, "short-lived").await;
    for _ in 0..2 {
        send(get(base, "/api/status", Some(&key))).await;
    }
    let r = send(post(
        base,
        &format!("/api/keys/revoke?key={key}"),
        None,
        None,
    ))
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, json!({"revoked": true, "prefix": &key[..7]}));
    h.state.keys.flush().await.unwrap();
    let hash = relay_keys::KeyHash::of(&key).hex();
    let counted = h
        .state
        .store
        .usage_window(&hash, 0, 10)
        .await
        .unwrap()
        .total;
    assert_eq!(counted, 3, "two status reads and the revoke");

    for path in ["/api/keys/me", "/api/keys/usage"] {
        let a = send(get(base, path, Some(&key))).await;
        assert_eq!(code(&a), (404, Some("KEY_UNKNOWN")), "{path}: {}", a.body);
    }
    let again = send(post(base, "/api/keys/revoke", None, Some(&key))).await;
    assert_eq!(code(&again), (404, Some("KEY_UNKNOWN")));
    let s = send(get(base, "/api/status", Some(&key))).await;
    assert_eq!(s.header("x-relay-key-status"), Some("unrecognised"));
    h.state.keys.flush().await.unwrap();
    let later = h
        .state
        .store
        .usage_window(&hash, 0, 10)
        .await
        .unwrap()
        .total;
    assert_eq!(later, counted, "nothing after the revoke is counted");
}

#[tokio::test(flavor = "multi_thread")]
async fn creating_keys_is_limited_per_ip_whatever_key_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let h = bare_host(dir.path(), |c| c.limits.enabled = true).await;
    let base = h.base.as_str();
    let mut last: Option<String> = None;
    for i in 0..10 {
        let a = send(post(base, "/api/keys/create", None, last.as_deref())).await;
        assert_eq!(a.status, 200, "{i}: {}", a.body);
        assert_eq!(a.header("x-ratelimit-limit"), Some("10"));
        if last.is_some() {
            assert_eq!(a.header("x-relay-key-status"), Some("issued"));
        }
        last = Some(a.body["key"].as_str().unwrap().to_string());
    }
    let refused = send(post(base, "/api/keys/create", None, last.as_deref())).await;
    assert_eq!(
        code(&refused),
        (429, Some("RATE_LIMITED")),
        "{}",
        refused.body
    );
    assert_eq!(refused.header("x-relay-key-status"), Some("issued"));
    // The key's own buckets elsewhere are untouched.
    let s = send(get(base, "/api/keys/me", last.as_deref())).await;
    assert_eq!(s.status, 200, "{}", s.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_postgres_share_keys_and_usage() {
    let db = relay_fixtures::postgres_database();
    let (da, db_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let on_pg = |c: &mut HostConfig| c.database_url = Some(db.clone());
    let a = bare_host(da.path(), on_pg).await;
    let b = bare_host(db_dir.path(), on_pg).await;
    let key = create(&a.base, "shared").await;
    let status_on = |base: String, key: String| async move {
        send(get(&base, "/api/status", Some(&key))).await
    };
    // B learns of the key from the store within seconds.
    wait_for("replica b to recognise the key", async || {
        status_on(b.base.clone(), key.clone())
            .await
            .header("x-relay-key-status")
            == Some("issued")
    })
    .await;
    let me = send(get(&b.base, "/api/keys/me", Some(&key))).await;
    assert_eq!(me.body["key"]["label"], "shared");
    for _ in 0..3 {
        let r = send(get(
            &a.base,
            "/api/route/status?id=rt_00000000000000000009",
            Some(&key),
        ))
        .await;
        assert_eq!(r.status, 404);
    }
    for _ in 0..2 {
        send(get(&b.base, "/api/no/such/path", Some(&key))).await;
    }
    // Both replicas' batches, summed by the store, whichever answers.
    for base in [&a.base, &b.base] {
        wait_for("both replicas' usage", async || {
            let u = send(get(base, "/api/keys/usage", Some(&key))).await;
            let p = paths(&u.body["hour"]);
            p.contains(&("/api/route/status".into(), 3))
                && p.contains(&("(unknown path)".into(), 2))
        })
        .await;
    }
    // Revoked on B: A treats it like no key within seconds.
    let r = send(post(&b.base, "/api/keys/revoke", None, Some(&key))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    wait_for("replica a to forget the key", async || {
        status_on(a.base.clone(), key.clone())
            .await
            .header("x-relay-key-status")
            == Some("unrecognised")
    })
    .await;
}
