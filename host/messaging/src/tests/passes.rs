//! Plus passes through the HTTP routes: claimed with the crate's client,
//! spent once, refused when forged, foreign, spent or old, and the claim
//! limits of §8.2.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::*;
use crate::passes::client;

const DAY_MS: u64 = 86_400_000;

/// A host whose free ceiling is `free` sends a minute.
async fn host_free(free: u32) -> Host {
    let mut config = HostConfig::default();
    config
        .sections
        .edit(crate::SECTION, |m: &mut crate::MessagingConfig| {
            m.free_sends_per_minute = free;
            m.decoys_per_minute = 0.0;
        })
        .unwrap();
    host_with(config).await
}

/// The directory's first key and the challenge.
async fn issuer(h: &Host) -> (String, String) {
    let (status, dir) = h.app.get("/api/messages/v2/passes/issuer").await;
    assert_eq!(status, 200, "{dir}");
    assert_eq!(dir["token-keys"][0]["token-type"], 2);
    (
        dir["token-keys"][0]["token-key"].as_str().unwrap().into(),
        dir["challenge"].as_str().unwrap().into(),
    )
}

/// `n` passes claimed for `challenge` (the issuer's unless given).
async fn claim_for(h: &Host, n: usize, challenge: Option<&str>) -> Vec<String> {
    let (key, own) = issuer(h).await;
    let (requests, pending) = client::requests(&key, challenge.unwrap_or(&own), n).unwrap();
    let (status, answer) = h
        .app
        .post(
            "/api/messages/v2/passes/claim",
            &json!({ "tokenRequests": requests }),
            &[],
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let responses: Vec<String> = serde_json::from_value(answer["tokenResponses"].clone()).unwrap();
    client::finalize(pending, &responses).unwrap()
}

async fn claim(h: &Host, n: usize) -> Vec<String> {
    claim_for(h, n, None).await
}

/// Posts a claim of `n` fresh requests for the directory's first key.
async fn post_claim(h: &Host, n: usize) -> (u16, Value) {
    let (key, challenge) = issuer(h).await;
    let (requests, _) = client::requests(&key, &challenge, n).unwrap();
    h.app
        .post(
            "/api/messages/v2/passes/claim",
            &json!({ "tokenRequests": requests }),
            &[],
        )
        .await
}

fn fresh_row() -> Row {
    seal(&Recipient::generate().mailbox(), "hi", T0)
        .unwrap()
        .remove(0)
}

async fn send_with(h: &Host, row: &Row, pass: Option<&str>) -> (u16, Value) {
    match pass {
        Some(p) => {
            h.app
                .post(
                    "/api/messages/v2/send",
                    &row_json(row),
                    &[("x-relay-pass", p)],
                )
                .await
        }
        None => {
            h.app
                .post("/api/messages/v2/send", &row_json(row), &[])
                .await
        }
    }
}

#[tokio::test]
async fn a_pass_lifts_a_send_over_the_free_ceiling_once_and_forged_foreign_or_old_ones_are_refused()
{
    let h = host_free(1).await;
    let (_, info) = h.app.get("/api/messages/v2/info").await;
    assert_eq!(info["passes"]["accepted"], true);
    assert_eq!(info["limits"]["sendsPerMinutePerIp"], 1);
    let passes = claim(&h, 4).await;

    assert_eq!(send_with(&h, &fresh_row(), None).await.0, 200);
    let over = send_with(&h, &fresh_row(), None).await;
    assert_eq!(
        (over.0, &over.1["errorCode"], &over.1["retryable"]),
        (429, &json!("RATE_LIMITED"), &json!(true)),
        "{}",
        over.1
    );
    // the header form and the body form both spend a pass
    assert_eq!(send_with(&h, &fresh_row(), Some(&passes[0])).await.0, 200);
    let row = fresh_row();
    let mut with_body = row_json(&row);
    with_body["pass"] = json!(passes[0]);
    refused(
        &h.app.post("/api/messages/v2/send", &with_body, &[]).await,
        409,
        "PASS_SPENT",
    );
    // the refused row was not stored: it goes through with a fresh pass
    with_body["pass"] = json!(format!("PrivateToken token=\"{}\"", passes[1]));
    let (status, body) = h.app.post("/api/messages/v2/send", &with_body, &[]).await;
    assert_eq!(status, 200, "{body}");

    let mut forged = crate::passes::unbase64(&passes[2]).unwrap();
    forged[200] ^= 1;
    let forged = URL_SAFE_NO_PAD.encode(forged);
    refused(
        &send_with(&h, &fresh_row(), Some(&forged)).await,
        400,
        "PASS_INVALID",
    );
    refused(
        &send_with(&h, &fresh_row(), Some("bm90IGEgdG9rZW4")).await,
        400,
        "PASS_INVALID",
    );
    // signed by this issuer, but for another challenge: not a pass here
    let other = crate::passes::challenge("elsewhere.example");
    let other = URL_SAFE_NO_PAD.encode(other.serialize().unwrap());
    let foreign = claim_for(&h, 1, Some(&other)).await;
    refused(
        &send_with(&h, &fresh_row(), Some(&foreign[0])).await,
        400,
        "PASS_INVALID",
    );

    // a pass outlives its key's epoch by one epoch, then is refused
    h.clock.advance(7 * DAY_MS);
    assert_eq!(send_with(&h, &fresh_row(), Some(&passes[2])).await.0, 200);
    h.clock.advance(7 * DAY_MS);
    refused(
        &send_with(&h, &fresh_row(), Some(&passes[3])).await,
        400,
        "PASS_EXPIRED",
    );

    // every key that signed is in the witness log
    let (_, range) = h
        .app
        .get("/api/messages/v2/witness/range?from=1&limit=20")
        .await;
    let issuers: Vec<Value> = range["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "issuer")
        .map(|e| serde_json::from_str(e["body"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(issuers.len(), 3, "{range}");
    let (key, _) = issuer(&h).await;
    let spki = crate::passes::unbase64(&key).unwrap();
    assert_eq!(
        crate::passes::unbase64(issuers[2]["tokenKey"].as_str().unwrap()).unwrap(),
        spki,
        "the directory's key is the last one logged"
    );
}

#[tokio::test]
async fn twenty_sends_spending_one_pass_at_once_store_one_row() {
    let h = Arc::new(host_free(0).await);
    let pass = claim(&h, 1).await.remove(0);
    let rows: Vec<Row> = (0..20).map(|_| fresh_row()).collect();
    let sends = rows.iter().map(|row| {
        let (h, row, pass) = (h.clone(), row.clone(), pass.clone());
        tokio::spawn(async move { send_with(&h, &row, Some(&pass)).await })
    });
    let mut statuses = vec![];
    for s in sends {
        let (status, body) = s.await.unwrap();
        if status != 200 {
            assert_eq!(body["errorCode"], "PASS_SPENT", "{body}");
        }
        statuses.push(status);
    }
    statuses.sort();
    assert_eq!(statuses, [vec![200], vec![409; 19]].concat());
    h.clock.advance(120_000);
    let visible = feed_rows(&h).await;
    assert_eq!(visible.iter().filter(|r| rows.contains(r)).count(), 1);
}

#[tokio::test]
async fn the_sixth_claim_of_a_day_is_429_for_a_day_and_bad_claims_are_typed_4xx() {
    let h = host().await;
    for i in 0..5 {
        let (status, answer) = post_claim(&h, 1).await;
        assert_eq!(
            (status, answer["remainingToday"].as_u64()),
            (200, Some(19 - i))
        );
    }
    let (key, challenge) = issuer(&h).await;
    let (requests, _) = client::requests(&key, &challenge, 1).unwrap();
    let claim = json!({ "tokenRequests": requests });
    let (status, sixth) = h
        .app
        .post("/api/messages/v2/passes/claim", &claim, &[])
        .await;
    assert_eq!(
        (
            status,
            &sixth["errorCode"],
            &sixth["retryable"],
            &sixth["retryAfterMs"]
        ),
        (
            429,
            &json!("RATE_LIMITED"),
            &json!(true),
            &json!(86_400_000)
        ),
        "{sixth}"
    );
    h.clock.advance(DAY_MS);
    let (status, _) = h
        .app
        .post("/api/messages/v2/passes/claim", &claim, &[])
        .await;
    assert_eq!(status, 200, "a new day, new claims");

    let post = |body: Value| {
        let h = &h;
        async move {
            h.app
                .post("/api/messages/v2/passes/claim", &body, &[])
                .await
        }
    };
    let (requests, _) = client::requests(&key, &challenge, 21).unwrap();
    refused(
        &post(json!({ "tokenRequests": requests })).await,
        400,
        "PASS_CLAIM_INVALID",
    );
    refused(
        &post(json!({ "tokenRequests": [] })).await,
        400,
        "PASS_CLAIM_INVALID",
    );
    refused(
        &post(json!({ "tokenRequests": ["AAAA"] })).await,
        400,
        "PASS_CLAIM_INVALID",
    );
    refused(&post(json!({ "tokens": [] })).await, 400, "INVALID_FIELD");
    let big = vec!["A".repeat(400); 120];
    refused(
        &post(json!({ "tokenRequests": big })).await,
        413,
        "BODY_TOO_LARGE",
    );
    // a request for a key that does not sign now
    h.clock.advance(7 * DAY_MS);
    let (_, stale) = h
        .app
        .post("/api/messages/v2/passes/claim", &claim, &[])
        .await;
    assert_eq!(stale["errorCode"], "PASS_KEY_STALE", "{stale}");
}

/// Two replicas (and a third started later) on one Postgres database, with
/// the same relayer-derived secrets: one issuer key logged once, the
/// day's claims counted across them, a pass spent on one refused on the
/// other — at once and after a restart.
#[tokio::test]
async fn replicas_on_postgres_share_the_key_the_claims_and_the_spent_set() {
    use crate::{store::Messages, MessagingService};
    use relay_sealed::witness::SigningKey;

    let url = relay_fixtures::postgres_database();
    let clock = ManualClock::at(T0);
    let replica = || {
        let (url, clock) = (url.clone(), clock.clone());
        async move {
            let store = Messages::from(relay_store::Store::connect(&url).await.unwrap());
            store.migrate(crate::store::MIGRATIONS).await.unwrap();
            let secrets = (SigningKey::from_bytes(&[6; 32]), [7; 32]);
            let config = crate::MessagingConfig::default();
            Arc::new(MessagingService::new(store, config, clock, secrets))
        }
    };
    let (a, b) = (replica().await, replica().await);
    let dir_a = a.passes().published(a.witness(), T0).await.unwrap();
    let dir_b = b.passes().published(b.witness(), T0).await.unwrap();
    assert_eq!(dir_a, dir_b, "one key, logged once");

    let challenge = a.passes().challenge();
    let mut passes = vec![];
    for (i, svc) in [&a, &b, &a, &b, &a].into_iter().enumerate() {
        let (requests, pending) = client::requests(&dir_a[0].token_key, &challenge, 2).unwrap();
        let claimed = svc
            .passes()
            .claim(svc.witness(), "caller", &requests, T0)
            .await
            .unwrap();
        assert_eq!(claimed.remaining_today, 18 - 2 * i as u32);
        passes.extend(client::finalize(pending, &claimed.responses).unwrap());
    }
    let (requests, _) = client::requests(&dir_a[0].token_key, &challenge, 1).unwrap();
    let sixth = b.passes().claim(b.witness(), "caller", &requests, T0).await;
    assert!(
        matches!(sixth, Err(crate::passes::ClaimError::Over { .. })),
        "{sixth:?}"
    );

    let spends = [a.clone(), b.clone()].map(|svc| {
        let pass = passes[0].clone();
        tokio::spawn(async move { svc.send(&fresh_row(), Some(&pass), "ip").await })
    });
    let mut outcomes = vec![];
    for s in spends {
        outcomes.push(s.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    assert!(outcomes
        .iter()
        .any(|o| matches!(o, Err(crate::SendError::PassSpent))));

    drop((a, b));
    let restarted = replica().await;
    let again = restarted.send(&fresh_row(), Some(&passes[0]), "ip").await;
    assert!(
        matches!(again, Err(crate::SendError::PassSpent)),
        "{again:?}"
    );
    assert!(restarted
        .send(&fresh_row(), Some(&passes[1]), "ip")
        .await
        .is_ok());
}
