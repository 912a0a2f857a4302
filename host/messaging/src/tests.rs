//! The feature through its HTTP routes, on a fresh SQLite store and a
//! clock the test moves: what a wallet sees.

use std::sync::Arc;

use alloy::signers::local::PrivateKeySigner;
use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use relay_config::HostConfig;
use relay_feature::testing::{self, App, TestState};
use relay_feature::Handles;
use relay_sealed::{
    inner::Inner,
    message::{seal, Reader, Received, Recipient, Row},
    witness::{verify_consistency, verify_inclusion, Checkpoint, VerifyingKey},
};
use relay_types::clock::ManualClock;
use serde_json::{json, Value};

use crate::mailbox::{tests::signed, Publication};

/// 30 Nov 2025, 05:20:00.123.
const T0: u64 = 1_764_480_000_123;

struct Host {
    app: App,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

async fn host_with(config: HostConfig) -> Host {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(T0);
    let mut parts = testing::parts(dir.path(), config).await;
    parts.clock = clock.clone();
    let app = App::start(
        &crate::http::feature::<TestState>(),
        parts,
        Handles::default(),
    )
    .await
    .unwrap();
    Host {
        app,
        clock,
        _dir: dir,
    }
}

/// A host adding `decoys` cover rows a minute.
async fn host_decoying(decoys: f64) -> Host {
    let mut config = HostConfig::default();
    config
        .sections
        .edit(crate::SECTION, |m: &mut crate::MessagingConfig| {
            m.decoys_per_minute = decoys;
        })
        .unwrap();
    host_with(config).await
}

async fn host() -> Host {
    host_decoying(3.0).await
}

/// Asserts an answer is the typed error `code` with `status`.
fn refused(answer: &(u16, Value), status: u16, code: &str) {
    let (got, body) = answer;
    assert_eq!(
        (*got, body["errorCode"].as_str()),
        (status, Some(code)),
        "{body}"
    );
    assert_eq!(body["retryable"], false, "{body}");
}

fn body(p: &Publication) -> Value {
    serde_json::to_value(p).unwrap()
}

fn row_json(r: &Row) -> Value {
    serde_json::to_value(r).unwrap()
}

async fn feed_rows(h: &Host) -> Vec<Row> {
    let mut rows = vec![];
    let mut since = 0;
    loop {
        let (status, page) = h
            .app
            .get(&format!("/api/messages/v2/feed?since={since}&limit=500"))
            .await;
        assert_eq!(status, 200, "{page}");
        for r in page["rows"].as_array().unwrap() {
            rows.push(
                serde_json::from_value(json!({
                    "ephemeralPubKey": r["ephemeralPubKey"], "viewTag": r["viewTag"], "ct": r["ct"]
                }))
                .unwrap(),
            );
        }
        since = page["next"].as_u64().unwrap();
        if !page["more"].as_bool().unwrap() {
            return rows;
        }
    }
}

fn texts(reader: &mut Reader, rows: &[Row]) -> Vec<String> {
    reader
        .scan(rows)
        .into_iter()
        .map(|r| match r {
            Received::Inner(inner) => inner.encode(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn two_wallets_publish_one_sends_a_short_and_a_chunked_note_and_only_the_recipient_reads_them(
) {
    let h = host().await;
    let (alice_wallet, bob_wallet) = (PrivateKeySigner::random(), PrivateKeySigner::random());
    let (alice, bob) = (Recipient::generate(), Recipient::generate());
    for (w, who) in [(&alice_wallet, &alice), (&bob_wallet, &bob)] {
        let (status, listed) = h
            .app
            .post("/api/messages/v2/mailbox", &body(&signed(w, who, T0)), &[])
            .await;
        assert_eq!(status, 200, "{listed}");
    }
    // the sender looks Bob up in the directory, never by address
    let (status, dir) = h.app.get("/api/messages/v2/directory").await;
    assert_eq!(status, 200);
    assert_eq!(dir["size"], 2);
    let bob_address = crate::mailbox::lower(&bob_wallet.address());
    let listed = dir["mailboxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["address"] == bob_address.as_str())
        .unwrap();
    let mailbox = relay_sealed::message::Mailbox {
        meta: listed["metaAddress"].as_str().unwrap().parse().unwrap(),
        kem: relay_sealed::envelope::PublicKey::from_bytes(
            &hex::decode(&listed["kemPub"].as_str().unwrap()[2..]).unwrap(),
        )
        .unwrap(),
    };
    let short = Inner::text("x".repeat(100)).encode();
    let long = Inner::text("y".repeat(60_000)).encode();
    let mut rows = seal(&mailbox, &short, T0).unwrap();
    assert_eq!(rows.len(), 1);
    let framed = seal(&mailbox, &long, T0).unwrap();
    assert!(framed.len() > 40 && framed.len() <= 64, "{}", framed.len());
    rows.extend(framed);
    let mut release = 0;
    for r in &rows {
        let (status, sent) = h.app.post("/api/messages/v2/send", &row_json(r), &[]).await;
        assert_eq!(status, 200, "{sent}");
        release = sent["releaseAt"].as_u64().unwrap();
        assert_eq!(sent["state"], "pending");
    }
    assert_eq!(release % 60_000, 0);
    assert!(release >= T0 + 5_000);
    let early = feed_rows(&h).await;
    assert!(
        rows.iter().all(|r| !early.contains(r)),
        "nothing is visible before its slot"
    );

    h.clock.set(release);
    let visible = feed_rows(&h).await;
    assert!(
        visible.len() >= rows.len(),
        "the rows and the slot's decoys"
    );
    let mut bob_reader = Reader::new(bob);
    let mut got = texts(&mut bob_reader, &visible);
    got.sort();
    let mut want = vec![short, long];
    want.sort();
    assert_eq!(got, want);
    assert!(texts(&mut Reader::new(alice), &visible).is_empty());
    assert!(
        texts(&mut Reader::new(Recipient::generate()), &visible).is_empty(),
        "a third wallet finds nothing"
    );
}

#[tokio::test]
async fn the_same_row_sent_twenty_times_at_once_is_stored_once() {
    let h = Arc::new(host().await);
    let row = seal(&Recipient::generate().mailbox(), "hi", T0)
        .unwrap()
        .remove(0);
    let sends = (0..20).map(|_| {
        let (h, body) = (h.clone(), row_json(&row));
        tokio::spawn(async move { h.app.post("/api/messages/v2/send", &body, &[]).await })
    });
    let mut statuses = vec![];
    for s in sends {
        let (status, body) = s.await.unwrap();
        if status == 409 {
            assert_eq!(body["errorCode"], "MESSAGE_REPLAYED");
            assert_eq!(body["retryable"], false);
        }
        statuses.push(status);
    }
    statuses.sort();
    assert_eq!(statuses, [vec![200], vec![409; 19]].concat());
    h.clock.advance(120_000);
    let visible = feed_rows(&h).await;
    assert_eq!(visible.iter().filter(|r| **r == row).count(), 1);
    refused(
        &h.app
            .post("/api/messages/v2/send", &row_json(&row), &[])
            .await,
        409,
        "MESSAGE_REPLAYED",
    );
}

#[tokio::test]
async fn bad_rows_are_typed_4xx_naming_the_field() {
    let h = host_decoying(0.0).await;
    let good = row_json(
        &seal(&Recipient::generate().mailbox(), "hi", T0)
            .unwrap()
            .remove(0),
    );
    let mut cases = vec![];
    for (field, value) in [
        ("ephemeralPubKey", json!("0x02")),
        ("ephemeralPubKey", json!(format!("0x04{}", "00".repeat(32)))),
        ("viewTag", json!("0x0102")),
        ("ct", json!(B64.encode([0u8; 100]))),
        ("ct", json!("%%%")),
    ] {
        let mut b = good.clone();
        b[field] = value;
        cases.push((b, "MESSAGE_ROW_INVALID", field));
    }
    let mut extra = good.clone();
    extra["to"] = json!("0xabc");
    cases.push((extra, "INVALID_FIELD", "to"));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("ct");
    cases.push((missing, "MISSING_FIELD", "ct"));
    let mut pass = good.clone();
    pass["pass"] = json!("anything");
    cases.push((pass, "PASS_INVALID", "pass"));
    for (b, code, field) in cases {
        let answer = h.app.post("/api/messages/v2/send", &b, &[]).await;
        refused(&answer, 400, code);
        let message = answer.1["error"].as_str().unwrap();
        assert!(message.contains(field), "{field}: {message}");
    }
    assert!(feed_rows(&h).await.is_empty());
    for q in ["since=-1", "limit=501", "limit=0", "since=x", "what=1"] {
        refused(
            &h.app.get(&format!("/api/messages/v2/feed?{q}")).await,
            400,
            "INVALID_FIELD",
        );
    }
}

#[tokio::test]
async fn stale_replayed_and_forged_publications_are_refused_and_none_changes_the_directory() {
    let h = host().await;
    let wallet = PrivateKeySigner::random();
    let who = Recipient::generate();
    let first = signed(&wallet, &who, T0 - 1_000);
    let (status, _) = h
        .app
        .post("/api/messages/v2/mailbox", &body(&first), &[])
        .await;
    assert_eq!(status, 200);
    let (_, before) = h.app.get("/api/messages/v2/directory").await;

    let stale = signed(&wallet, &Recipient::generate(), T0 - 300_001);
    let replayed = first.clone();
    let older = signed(&wallet, &Recipient::generate(), T0 - 2_000);
    let mut forged = signed(&PrivateKeySigner::random(), &Recipient::generate(), T0);
    forged.address = first.address.clone();
    for (p, status, code) in [
        (&stale, 400, "MAILBOX_STALE"),
        (&replayed, 409, "MAILBOX_REPLAYED"),
        (&older, 409, "MAILBOX_REPLAYED"),
        (&forged, 400, "MAILBOX_SIGNATURE_INVALID"),
    ] {
        refused(
            &h.app.post("/api/messages/v2/mailbox", &body(p), &[]).await,
            status,
            code,
        );
    }
    let (_, after) = h.app.get("/api/messages/v2/directory").await;
    assert_eq!(before, after);

    // a newer publication replaces the keys; twenty copies of it land once
    let h = Arc::new(h);
    let newer = body(&signed(&wallet, &Recipient::generate(), T0));
    let tries = (0..20).map(|_| {
        let (h, b) = (h.clone(), newer.clone());
        tokio::spawn(async move { h.app.post("/api/messages/v2/mailbox", &b, &[]).await.0 })
    });
    let mut statuses = vec![];
    for t in tries {
        statuses.push(t.await.unwrap());
    }
    statuses.sort();
    assert_eq!(statuses, [vec![200], vec![409; 19]].concat());
    let (_, head) = h.app.get("/api/messages/v2/witness/head").await;
    assert_eq!(head["seq"], 2);
    let (status, one) = h
        .app
        .get(&format!("/api/messages/v2/mailbox/{}", wallet.address()))
        .await;
    assert_eq!(status, 200);
    assert_eq!(one["kemPub"], newer["kemPub"]);
    assert_eq!(one["s"], 2);
    refused(
        &h.app.get("/api/messages/v2/mailbox/nobody.relay").await,
        404,
        "MAILBOX_NOT_FOUND",
    );
}

/// `n` mailboxes of new wallets, published.
async fn publish_strangers(h: &Host, n: usize) {
    for _ in 0..n {
        let p = signed(&PrivateKeySigner::random(), &Recipient::generate(), T0);
        let (status, b) = h.app.post("/api/messages/v2/mailbox", &body(&p), &[]).await;
        assert_eq!(status, 200, "{b}");
    }
}

fn key_of(head: &Value) -> VerifyingKey {
    let raw: [u8; 32] = B64
        .decode(head["key"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    VerifyingKey::from_bytes(&raw).unwrap()
}

fn hashes(proof: &Value) -> Vec<u8> {
    proof["proof"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| hex::decode(h.as_str().unwrap()).unwrap())
        .collect()
}

fn root(head: &Value) -> [u8; 32] {
    hex::decode(head["merkleRoot"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap()
}

#[tokio::test]
async fn a_client_holding_an_old_head_verifies_the_new_one_and_detects_a_forged_one() {
    let h = host().await;
    publish_strangers(&h, 3).await;
    let (_, old) = h.app.get("/api/messages/v2/witness/head").await;
    let key = key_of(&old);
    let cp = Checkpoint::verify(old["checkpoint"].as_str().unwrap(), &key).unwrap();
    assert_eq!((cp.size, cp.root), (3, root(&old)));
    assert_eq!(
        cp.extensions,
        [
            format!("chain {}", old["root"].as_str().unwrap()),
            format!("directory {}", old["directory"].as_str().unwrap())
        ]
    );
    let (_, info) = h.app.get("/api/messages/v2/info").await;
    assert_eq!(info["witness"]["key"], old["key"], "the key is published");

    publish_strangers(&h, 5).await;
    let (_, new) = h.app.get("/api/messages/v2/witness/head").await;
    Checkpoint::verify(new["checkpoint"].as_str().unwrap(), &key).unwrap();
    let (status, proof) = h
        .app
        .get("/api/messages/v2/witness/consistency?from=3")
        .await;
    assert_eq!((status, proof["size"].as_u64()), (200, Some(8)));
    verify_consistency(&root(&old), 3, &root(&new), 8, &hashes(&proof))
        .expect("the new head extends the old");

    // a head for a log whose third entry was swapped: signed with another
    // key it fails the pinned key; with the right proof shape it fails
    // consistency
    let forged_note = new["checkpoint"]
        .as_str()
        .unwrap()
        .replacen("\n8\n", "\n9\n", 1);
    assert!(Checkpoint::verify(&forged_note, &key).is_err());
    let mut other = relay_sealed::witness::Log::default();
    for i in 0..8 {
        other.append(relay_sealed::witness::binding_hash(&format!("fork {i}")), 0);
    }
    assert!(verify_consistency(&root(&old), 3, &other.merkle_root(), 8, &hashes(&proof)).is_err());

    // the chained view: a range checks against the root before it
    let (_, range) = h
        .app
        .get("/api/messages/v2/witness/range?from=1&limit=20")
        .await;
    let entries: Vec<relay_sealed::witness::Entry> = range["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            serde_json::from_value(json!({"s": e["s"], "b": e["b"], "r": e["r"], "t": e["t"]}))
                .unwrap()
        })
        .collect();
    assert_eq!(entries.len(), 8);
    let end = relay_sealed::witness::verify_range(&[0; 32], 1, &entries).unwrap();
    assert_eq!(hex::encode(end), new["root"].as_str().unwrap());
    let fifth = &range["entries"][4];
    let (_, inc) = h.app.get("/api/messages/v2/witness/inclusion?s=5").await;
    let b: [u8; 32] = hex::decode(fifth["b"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    verify_inclusion(&root(&new), 8, 5, &b, &hashes(&inc)).unwrap();

    // the directory's bytes hash to the head's directory line
    let svc = h
        .app
        .handles
        .get::<Option<Arc<crate::MessagingService>>>()
        .flatten()
        .unwrap();
    let (bytes, _) = svc.witness().directory().await.unwrap();
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(bytes.as_bytes())),
        new["directory"].as_str().unwrap()
    );
    let (_, dir) = h.app.get("/api/messages/v2/directory").await;
    assert_eq!(
        dir,
        serde_json::from_str::<Value>(&bytes).unwrap(),
        "served as built"
    );
    for q in [
        "witness/consistency?from=9",
        "witness/consistency?from=0",
        "witness/inclusion?s=9",
        "witness/range?limit=21",
        "witness/range?from=0",
    ] {
        refused(
            &h.app.get(&format!("/api/messages/v2/{q}")).await,
            400,
            "INVALID_FIELD",
        );
    }
}

#[tokio::test]
async fn info_retired_v1_credentials_and_transfers_answer_as_documented() {
    let h = host().await;
    let (status, info) = h.app.get("/api/messages/v2/info").await;
    assert_eq!(status, 200);
    assert_eq!(
        (info["spec"].as_str(), info["version"].as_u64()),
        (Some("nf2"), Some(5))
    );
    assert_eq!(info["kContribution"], 3.0);
    assert_eq!(info["releaseGridMs"], 60_000);
    assert_eq!(info["buckets"], json!([512, 2048]));
    assert_eq!(info["frames"]["maxParts"], 64);
    assert_eq!(info["limits"]["sendsPerMinutePerIp"], 120);
    assert_eq!(info["limits"]["publicationsPerDayPerIp"], 20);
    let mut limits = relay_config::LimitsConfig::default();
    limits.per_minute.insert("messages-send".into(), 300);
    assert_eq!(
        crate::Ceilings::of(&limits).sends_per_minute,
        300,
        "an operator's override is what info publishes"
    );

    refused(
        &h.app
            .post("/api/messages/send", &json!({"to": "x", "text": "hi"}), &[])
            .await,
        410,
        "MESSAGING_V1_RETIRED",
    );
    refused(
        &h.app
            .post("/api/messages/v2/cred/mint", &json!({"pass": "p"}), &[])
            .await,
        409,
        "CREDENTIAL_UNLISTED",
    );

    use alloy::signers::SignerSync;
    let (owner, receiver) = (PrivateKeySigner::random(), PrivateKeySigner::random());
    let (from, to) = (
        crate::mailbox::lower(&owner.address()),
        crate::mailbox::lower(&receiver.address()),
    );
    let sign = |w: &PrivateKeySigner, side: &str| {
        let t = crate::http::transfer_text(side, "alice", &from, &to, T0);
        format!(
            "0x{}",
            hex::encode(w.sign_message_sync(t.as_bytes()).unwrap().as_bytes())
        )
    };
    let good = json!({"name": "alice", "from": from, "to": to,
        "release": {"ts": T0, "sig": sign(&owner, "release")},
        "accept": {"ts": T0, "sig": sign(&receiver, "accept")}});
    refused(
        &h.app
            .post("/api/messages/v2/handle/transfer", &good, &[])
            .await,
        404,
        "NAME_NOT_FOUND",
    );
    let mut swapped = good.clone();
    swapped["accept"]["sig"] = json!(sign(&owner, "accept"));
    refused(
        &h.app
            .post("/api/messages/v2/handle/transfer", &swapped, &[])
            .await,
        400,
        "TRANSFER_SIGNATURE_INVALID",
    );
}

#[tokio::test]
async fn a_host_with_messaging_off_says_so() {
    let mut config = HostConfig::default();
    config
        .sections
        .edit(crate::SECTION, |m: &mut crate::MessagingConfig| {
            m.enabled = false
        })
        .unwrap();
    let h = host_with(config).await;
    refused(
        &h.app.get("/api/messages/v2/info").await,
        404,
        "MESSAGING_DISABLED",
    );
}

#[tokio::test]
async fn relay_announcements_are_listed_logged_and_refused_when_stale_replayed_expired_or_forged() {
    use crate::relays::tests::{announced, announced_until};
    use ed25519_dalek::SigningKey;
    let h = host().await;
    let key = SigningKey::from_bytes(&[11; 32]);
    let url = "https://relay.example/ohttp";
    let a = announced(&key, url, T0);
    let (status, listed) = h
        .app
        .post(
            "/api/relay/announce",
            &serde_json::to_value(&a).unwrap(),
            &[],
        )
        .await;
    assert_eq!((status, listed["s"].as_u64()), (200, Some(1)), "{listed}");
    let (_, dir) = h.app.get("/api/relay/directory").await;
    assert_eq!(dir["relays"][0]["url"], url);
    assert_eq!(dir["relays"][0]["announcer"], a.announcer.as_str());
    let (_, again) = h.app.get("/api/relay/directory").await;
    assert_eq!(dir, again, "the same for every reader");
    let (_, range) = h.app.get("/api/messages/v2/witness/range").await;
    assert_eq!(range["entries"][0]["kind"], "relay");

    let other = SigningKey::from_bytes(&[12; 32]);
    let mut forged = announced(&other, "https://evil.example/ohttp", T0 + 1);
    forged.announcer = a.announcer.clone();
    for (bad, status, code) in [
        (a.clone(), 409, "RELAY_ANNOUNCE_REPLAYED"),
        (
            announced(&key, url, T0 - 300_001),
            400,
            "RELAY_ANNOUNCE_STALE",
        ),
        (
            announced_until(&key, url, T0 + 2, T0 - 1),
            400,
            "RELAY_ANNOUNCE_EXPIRED",
        ),
        (forged, 400, "RELAY_ANNOUNCE_SIGNATURE_INVALID"),
        (
            announced(&key, "http://relay.example", T0 + 3),
            400,
            "RELAY_ANNOUNCE_INVALID",
        ),
    ] {
        let body = serde_json::to_value(&bad).unwrap();
        refused(
            &h.app.post("/api/relay/announce", &body, &[]).await,
            status,
            code,
        );
    }
    let (_, still) = h.app.get("/api/relay/directory").await;
    assert_eq!(
        still["relays"], dir["relays"],
        "no refused announcement changed it"
    );

    h.clock.advance(86_400_000);
    let (_, expired) = h.app.get("/api/relay/directory").await;
    assert_eq!(
        expired["relays"],
        json!([]),
        "an expired relay is not offered"
    );
}

/// `wallet`'s signed listing of `name` for `years` at `ts` (signing the
/// normalised name, sending it as given).
fn listing(wallet: &PrivateKeySigner, name: &str, years: u32, ts: u64) -> Value {
    use alloy::signers::SignerSync;
    let mut l = crate::names::Listing {
        name: name.to_ascii_lowercase(),
        owner: crate::mailbox::lower(&wallet.address()),
        years,
        ts,
        sig: String::new(),
    };
    l.sig = format!(
        "0x{}",
        hex::encode(
            wallet
                .sign_message_sync(l.text().as_bytes())
                .unwrap()
                .as_bytes()
        )
    );
    l.name = name.into();
    serde_json::to_value(l).unwrap()
}

/// A transfer of `name` from `owner` to `receiver`, both signing at `ts`.
fn transfer(owner: &PrivateKeySigner, receiver: &PrivateKeySigner, name: &str, ts: u64) -> Value {
    use alloy::signers::SignerSync;
    let (from, to) = (
        crate::mailbox::lower(&owner.address()),
        crate::mailbox::lower(&receiver.address()),
    );
    let sign = |w: &PrivateKeySigner, side: &str| {
        let t = crate::http::transfer_text(side, name, &from, &to, ts);
        format!(
            "0x{}",
            hex::encode(w.sign_message_sync(t.as_bytes()).unwrap().as_bytes())
        )
    };
    json!({"name": name, "from": from, "to": to,
        "release": {"ts": ts, "sig": sign(owner, "release")},
        "accept": {"ts": ts, "sig": sign(receiver, "accept")}})
}

#[tokio::test]
async fn names_are_quoted_at_each_price_row_listed_resolved_transferred_and_logged() {
    let h = Arc::new(host().await);
    for (name, per_year) in [
        ("abc", "512.00"),
        ("abcd", "128.00"),
        ("abcde", "4.00"),
        ("abcdef", "4.00"),
        ("abcdefg", "0.00"),
    ] {
        let (status, q) = h
            .app
            .get(&format!("/api/relaynames/quote?name={name}&years=2"))
            .await;
        assert_eq!(
            (status, q["state"].as_str()),
            (200, Some("available")),
            "{q}"
        );
        assert_eq!(q["pricePerYearUsd"], per_year);
    }
    let (_, q) = h.app.get("/api/relaynames/quote?name=abcd&years=2").await;
    assert_eq!(q["totalUsd"], "256.00");
    refused(
        &h.app.get("/api/relaynames/quote?name=%D0%B0bc").await,
        400,
        "NAME_INVALID",
    );
    for q in ["name=abcd&years=0", "name=abcd&years=11", "years=1"] {
        let code = if q.starts_with("years") {
            "MISSING_FIELD"
        } else {
            "INVALID_FIELD"
        };
        refused(
            &h.app.get(&format!("/api/relaynames/quote?{q}")).await,
            400,
            code,
        );
    }

    let (owner, receiver, other) = (
        PrivateKeySigner::random(),
        PrivateKeySigner::random(),
        PrivateKeySigner::random(),
    );
    let name = "alice-relay";
    let first = listing(&owner, "Alice-Relay", 1, T0);
    let tries = (0..20).map(|_| {
        let (h, b) = (h.clone(), first.clone());
        tokio::spawn(async move { h.app.post("/api/relaynames/list", &b, &[]).await })
    });
    let mut statuses = vec![];
    for t in tries {
        statuses.push(t.await.unwrap().0);
    }
    statuses.sort();
    assert_eq!(
        statuses,
        [vec![200], vec![409; 19]].concat(),
        "one registration, nineteen replays"
    );
    let (_, q) = h
        .app
        .get(&format!("/api/relaynames/quote?name={name}"))
        .await;
    assert_eq!(
        (q["state"].as_str(), q["owner"].as_str()),
        (
            Some("registered"),
            Some(crate::mailbox::lower(&owner.address()).as_str())
        )
    );
    assert_eq!(q["expiresAt"], T0 + crate::names::YEAR_MS);

    refused(
        &h.app
            .post(
                "/api/relaynames/list",
                &listing(&other, name, 1, T0 + 1),
                &[],
            )
            .await,
        409,
        "NAME_TAKEN",
    );
    refused(
        &h.app
            .post(
                "/api/relaynames/list",
                &listing(&other, "a1ice-relay", 1, T0),
                &[],
            )
            .await,
        409,
        "NAME_CONFUSABLE",
    );
    refused(
        &h.app
            .post("/api/relaynames/list", &listing(&other, "abcd", 1, T0), &[])
            .await,
        409,
        "NAME_PAYMENT_UNAVAILABLE",
    );
    let mut forged = listing(&other, "bob-relay", 1, T0);
    forged["owner"] = json!(crate::mailbox::lower(&owner.address()));
    refused(
        &h.app.post("/api/relaynames/list", &forged, &[]).await,
        400,
        "NAME_SIGNATURE_INVALID",
    );

    // the name resolves to its owner's mailbox
    let p = signed(&owner, &Recipient::generate(), T0);
    assert_eq!(
        h.app
            .post("/api/messages/v2/mailbox", &body(&p), &[])
            .await
            .0,
        200
    );
    let (status, m) = h.app.get(&format!("/api/messages/v2/mailbox/{name}")).await;
    assert_eq!(
        (status, m["kemPub"].as_str()),
        (200, Some(p.kem_pub.as_str()))
    );

    // a transfer needs the owner's release and the receiver's accept
    refused(
        &h.app
            .post(
                "/api/messages/v2/handle/transfer",
                &transfer(&other, &receiver, name, T0 + 2),
                &[],
            )
            .await,
        403,
        "NAME_NOT_OWNER",
    );
    let moved = transfer(&owner, &receiver, name, T0 + 3);
    let (status, t) = h
        .app
        .post("/api/messages/v2/handle/transfer", &moved, &[])
        .await;
    assert_eq!(
        (status, t["owner"].as_str()),
        (
            200,
            Some(crate::mailbox::lower(&receiver.address()).as_str())
        ),
        "{t}"
    );
    refused(
        &h.app
            .post("/api/messages/v2/handle/transfer", &moved, &[])
            .await,
        409,
        "NAME_REPLAYED",
    );
    refused(
        &h.app.get(&format!("/api/messages/v2/mailbox/{name}")).await,
        404,
        "MAILBOX_NOT_FOUND",
    );

    // its history, from the witness log: registration, then transfer
    let (_, range) = h.app.get("/api/messages/v2/witness/range").await;
    let kinds: Vec<&str> = range["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["name", "mailbox", "transfer"]);
    let last: Value = serde_json::from_str(range["entries"][2]["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        (last["from"].as_str(), last["to"].as_str()),
        (
            Some(crate::mailbox::lower(&owner.address()).as_str()),
            Some(crate::mailbox::lower(&receiver.address()).as_str())
        )
    );

    // expiry: the new owner's grace, then a premium decaying from 10,000
    h.clock.set(T0 + crate::names::YEAR_MS + 1);
    let (_, q) = h
        .app
        .get(&format!("/api/relaynames/quote?name={name}"))
        .await;
    assert_eq!(q["state"], "grace");
    refused(
        &h.app
            .post(
                "/api/relaynames/list",
                &listing(&other, name, 1, T0 + crate::names::YEAR_MS + 1),
                &[],
            )
            .await,
        409,
        "NAME_TAKEN",
    );
    let premium_at = T0 + crate::names::YEAR_MS + crate::names::GRACE_MS;
    h.clock.set(premium_at);
    let (_, q) = h
        .app
        .get(&format!("/api/relaynames/quote?name={name}"))
        .await;
    assert_eq!(
        (q["state"].as_str(), q["premiumUsd"].as_str()),
        (Some("premium"), Some("10000.00")),
        "{q}"
    );
    h.clock.set(premium_at + crate::names::PREMIUM_MS / 2);
    let (_, q) = h
        .app
        .get(&format!("/api/relaynames/quote?name={name}"))
        .await;
    assert_eq!(q["premiumUsd"], "5000.00");
    refused(
        &h.app
            .post(
                "/api/relaynames/list",
                &listing(&other, name, 1, premium_at + crate::names::PREMIUM_MS / 2),
                &[],
            )
            .await,
        409,
        "NAME_PAYMENT_UNAVAILABLE",
    );
    let free_again = premium_at + crate::names::PREMIUM_MS;
    h.clock.set(free_again);
    let (status, r) = h
        .app
        .post(
            "/api/relaynames/list",
            &listing(&other, name, 1, free_again),
            &[],
        )
        .await;
    assert_eq!(
        (status, r["owner"].as_str()),
        (200, Some(crate::mailbox::lower(&other.address()).as_str())),
        "{r}"
    );
}

mod passes;
