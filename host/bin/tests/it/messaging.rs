//! Sealed messaging v2 end to end, as its users run it: the `relay msg`
//! command line (the built binary, one process per command) against a
//! host serving HTTP on loopback, its rate limits as shipped. Two wallets
//! publish mailboxes; one sends a 100-byte note and a 60 KB note
//! (chunked); the other scans the feed and reads both, with the sender's
//! signatures verified; a third scans and finds nothing. The store holds
//! the three fields and nothing of the plaintext, the addresses or the
//! names. A replayed row and a stale publication are refused; a reader
//! holding an old witness head accepts the host's extension of it and
//! refuses a log that forked from it.

use std::{path::Path, process::Command};

use alloy::signers::{local::PrivateKeySigner, SignerSync};
use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use relay_messaging::mailbox::Publication;
use relay_types::{clock::ManualClock, Clock as _};
use serde_json::Value;
use sqlx::Row as _;

use crate::common;

fn real_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// One `relay msg` command: its exit status and stdout.
fn msg(
    base: &str,
    keys: &Path,
    wallet: Option<&PrivateKeySigner>,
    args: &[&str],
) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay"));
    cmd.args(["msg", "--url", base, "--keys"])
        .arg(keys)
        .args(args)
        .env_remove("RELAY_MSG_WALLET_KEY")
        .env_remove("RELAY_URL")
        .env("RELAY_LOG", "warn");
    if let Some(w) = wallet {
        cmd.env("RELAY_MSG_WALLET_KEY", hex::encode(w.to_bytes()));
    }
    let out = cmd.output().expect("relay runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(run: (bool, String, String)) -> String {
    assert!(run.0, "relay msg failed:\n{}\n{}", run.1, run.2);
    run.1
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_wallets_exchange_sealed_notes_through_the_cli_and_the_host_keeps_nothing_readable() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::at(real_now());
    let host = common::bare_host_at(dir.path(), clock.clone(), |_| {}).await;
    let base = host.base.clone();
    let (alice_w, bob_w, carol_w) = (
        PrivateKeySigner::random(),
        PrivateKeySigner::random(),
        PrivateKeySigner::random(),
    );
    let keys = |who: &str| dir.path().join(format!("{who}.json"));
    let (alice, bob, carol) = (keys("alice"), keys("bob"), keys("carol"));
    let b = base.clone();
    tokio::task::spawn_blocking({
        let (alice, bob, carol) = (alice.clone(), bob.clone(), carol.clone());
        let (alice_w, bob_w, carol_w) = (alice_w.clone(), bob_w.clone(), carol_w.clone());
        move || {
            assert!(ok(msg(&b, &alice, None, &["keygen", "--dsa"])).starts_with("st:eth:0x"));
            ok(msg(&b, &bob, None, &["keygen"]));
            ok(msg(&b, &carol, None, &["keygen"]));
            let again = msg(&b, &bob, None, &["keygen"]);
            assert!(
                !again.0 && again.2.contains("exists"),
                "keys are never overwritten silently"
            );
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                assert_eq!(
                    std::fs::metadata(&bob).unwrap().permissions().mode() & 0o777,
                    0o600
                );
            }
            for (k, w) in [(&alice, &alice_w), (&bob, &bob_w), (&carol, &carol_w)] {
                ok(msg(&b, k, Some(w), &["publish"]));
            }
        }
    })
    .await
    .unwrap();

    let marker = "sealed-marker-7f3c";
    let short = format!("{marker} {}", "s".repeat(100 - marker.len() - 1));
    let long = format!("{marker} {}", "L".repeat(60_000));
    let long_file = dir.path().join("long.txt");
    std::fs::write(&long_file, &long).unwrap();
    let bob_address = format!("{:#x}", bob_w.address());
    let sent = tokio::task::spawn_blocking({
        let (b, alice, alice_w, short, long_file, to) = (
            base.clone(),
            alice.clone(),
            alice_w.clone(),
            short.clone(),
            long_file.clone(),
            bob_address.clone(),
        );
        move || {
            let one = ok(msg(
                &b,
                &alice,
                Some(&alice_w),
                &["send", "--to", &to, "--text", &short],
            ));
            let two = ok(msg(
                &b,
                &alice,
                Some(&alice_w),
                &[
                    "send",
                    "--to",
                    &to,
                    "--file",
                    long_file.to_str().unwrap(),
                    "--sign",
                ],
            ));
            [lines(&one).remove(0), lines(&two).remove(0)]
        }
    })
    .await
    .unwrap();
    assert!(sent.iter().all(|s| s["state"] == "pending"), "{sent:?}");
    assert_eq!(sent[0]["rowsWaiting"], 1);
    assert!(sent[1]["rowsWaiting"].as_u64().unwrap() > 40, "{}", sent[1]);
    let release = sent
        .iter()
        .map(|s| s["releaseAt"].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(release % 60_000, 0);

    // before the release slot the reader finds nothing; after it, both notes
    let b = base.clone();
    let early = tokio::task::spawn_blocking({
        let bob = bob.clone();
        move || ok(msg(&b, &bob, None, &["scan", "--json"]))
    })
    .await
    .unwrap();
    assert!(early.trim().is_empty(), "{early}");
    clock.set(release);
    let (bob_got, carol_got) = tokio::task::spawn_blocking({
        let (b, bob, carol) = (base.clone(), bob.clone(), carol.clone());
        move || {
            (
                lines(&ok(msg(&b, &bob, None, &["scan", "--json"]))),
                ok(msg(&b, &carol, None, &["scan", "--json"])),
            )
        }
    })
    .await
    .unwrap();
    let mut texts: Vec<&str> = bob_got
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    texts.sort();
    let mut want = vec![short.as_str(), long.as_str()];
    want.sort();
    assert_eq!(texts, want);
    for m in &bob_got {
        if m["text"] == short.as_str() {
            assert_eq!(m["authorship"], "anonymous", "sent without --sign");
            continue;
        }
        assert_eq!(m["from"], format!("{:#x}", alice_w.address()));
        assert_eq!(m["authorship"], "signed by the sender's wallet");
        assert_eq!(m["postQuantum"], true, "sig2 under Alice's published key");
    }
    assert!(
        carol_got.trim().is_empty(),
        "a third wallet finds nothing: {carol_got}"
    );
    // the sender's delivery states: pending until its scan sees every row
    let b = base.clone();
    let states = tokio::task::spawn_blocking({
        let alice = alice.clone();
        move || {
            ok(msg(&b, &alice, None, &["scan"]));
            lines(&ok(msg(&b, &alice, None, &["outbox"])))
        }
    })
    .await
    .unwrap();
    assert_eq!(states.len(), 2);
    assert!(
        states
            .iter()
            .all(|s| s["state"] == "sent" && s["rowsWaiting"] == 0),
        "{states:?}"
    );

    // the store: three fields and the slot, nothing readable
    let pool = host.state.store.pool();
    let rows = sqlx::query("SELECT * FROM message_rows")
        .fetch_all(pool)
        .await
        .unwrap();
    assert!(rows.len() > 42);
    let columns: Vec<String> = rows[0]
        .columns()
        .iter()
        .map(|c| sqlx::Column::name(c).to_string())
        .collect();
    assert_eq!(
        columns,
        ["ephemeral_pub_key", "view_tag", "ct", "release_ms", "seq"]
    );
    let needles: Vec<Vec<u8>> = [
        marker.to_string(),
        format!("{:x}", alice_w.address()),
        bob_address[2..].to_string(),
        "alice".into(),
        "bob".into(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    for r in &rows {
        let ct = B64.decode(r.try_get::<String, _>("ct").unwrap()).unwrap();
        let fields = [
            r.try_get::<String, _>("ephemeral_pub_key").unwrap(),
            r.try_get::<String, _>("view_tag").unwrap(),
        ];
        for n in &needles {
            assert!(!ct.windows(n.len()).any(|w| w == n.as_slice()));
            assert!(fields
                .iter()
                .all(|f| !f.as_bytes().windows(n.len()).any(|w| w == n.as_slice())));
        }
    }

    let client = common::http();
    // a replayed row
    let page: Value = client
        .get(format!("{base}/api/messages/v2/feed?limit=1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let row = &page["rows"][0];
    let replay = serde_json::json!({"ephemeralPubKey": row["ephemeralPubKey"], "viewTag": row["viewTag"], "ct": row["ct"]});
    let resp = client
        .post(format!("{base}/api/messages/v2/send"))
        .json(&replay)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 409);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        (body["errorCode"].as_str(), body["retryable"].as_bool()),
        (Some("MESSAGE_REPLAYED"), Some(false))
    );
    // a stale publication (signed ten minutes ago)
    let stale = publication(&carol_w, &carol, clock.now_ms() - 600_000);
    let resp = client
        .post(format!("{base}/api/messages/v2/mailbox"))
        .json(&stale)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(
        resp.json::<Value>().await.unwrap()["errorCode"],
        "MAILBOX_STALE"
    );

    // the witness: a new publication extends the head Bob holds (his scan
    // checks the consistency proof); a log that forked from his is refused
    let dave = PrivateKeySigner::random();
    let fresh = publication(&dave, &carol, clock.now_ms());
    assert_eq!(
        client
            .post(format!("{base}/api/messages/v2/mailbox"))
            .json(&fresh)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let inbox_file = bob.with_extension("inbox.json");
    let held: Value = serde_json::from_str(&std::fs::read_to_string(&inbox_file).unwrap()).unwrap();
    // the publications so far, and the privacy lane's two gateway key
    // configurations the host logged at start (docs/api-privacy.md)
    assert_eq!(held["head"]["size"], 5);
    let b = base.clone();
    let (extended, forked) = tokio::task::spawn_blocking({
        let (bob, inbox_file) = (bob.clone(), inbox_file.clone());
        move || {
            let extended = msg(&b, &bob, None, &["scan"]);
            let mut forked_view: Value =
                serde_json::from_str(&std::fs::read_to_string(&inbox_file).unwrap()).unwrap();
            assert_eq!(forked_view["head"]["size"], 6);
            forked_view["head"]["size"] = 2.into();
            forked_view["head"]["root"] = hex::encode([7u8; 32]).into();
            std::fs::write(&inbox_file, forked_view.to_string()).unwrap();
            (extended, msg(&b, &bob, None, &["scan"]))
        }
    })
    .await
    .unwrap();
    assert!(extended.0, "{}", extended.2);
    assert!(
        !forked.0 && forked.2.contains("forked or forged"),
        "{}",
        forked.2
    );
    let read = tokio::task::spawn_blocking(move || ok(msg(&base, &bob, None, &["read"])))
        .await
        .unwrap();
    assert_eq!(read.lines().count(), 2, "{read}");
}

/// On a running host at `base` (`relay up`): two wallets publish
/// mailboxes through the CLI and one sends the other a note, stored and
/// pending until its slot.
pub fn publish_and_send_on(base: &str, dir: &Path) {
    let (a, b) = (PrivateKeySigner::random(), PrivateKeySigner::random());
    let (ka, kb) = (dir.join("up-a.json"), dir.join("up-b.json"));
    for (k, w) in [(&ka, &a), (&kb, &b)] {
        ok(msg(base, k, None, &["keygen"]));
        ok(msg(base, k, Some(w), &["publish"]));
    }
    let to = format!("{:#x}", b.address());
    let sent = lines(&ok(msg(
        base,
        &ka,
        None,
        &["send", "--to", &to, "--text", "hello from relay up"],
    )));
    assert_eq!(sent[0]["state"], "pending", "{sent:?}");
}

/// A publication of `keys`' mailbox by `wallet`, signed at `ts`.
fn publication(wallet: &PrivateKeySigner, keys: &Path, ts: u64) -> Value {
    let ring: relay_sealed::keyring::Keyring =
        serde_json::from_str(&std::fs::read_to_string(keys).unwrap()).unwrap();
    let mailbox = ring.mailbox().unwrap();
    let mut p = Publication {
        address: format!("{:#x}", wallet.address()),
        meta_address: mailbox.meta.to_string(),
        kem_pub: format!("0x{}", hex::encode(mailbox.kem.to_bytes())),
        dsa_pub: None,
        ts,
        sig: String::new(),
    };
    p.sig = format!(
        "0x{}",
        hex::encode(
            wallet
                .sign_message_sync(p.text().as_bytes())
                .unwrap()
                .as_bytes()
        )
    );
    serde_json::to_value(p).unwrap()
}
