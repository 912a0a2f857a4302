//! The route explorer (issue 47) on the devnet mesh, after one real route
//! (2 USDC 8453 → 42161, Permit2, settled):
//!
//! - its answers: the timeline's stages in order with their times and the
//!   relayer's transactions with their chains; the public search by id
//!   names the route, by source transaction or sender address it shows
//!   only what the public feed shows (no id, address, hash or amount);
//!   the operator's search finds it by any of them in full, and only with
//!   the owner credential; bad queries are typed 400s;
//! - the page in a real browser (`conformance/tools/explorer_page.py`):
//!   a user finds the route by id and sees every section; found by its
//!   transaction, the page shows no id or address; the operator finds it
//!   by the sender's address and follows it; every table readable at
//!   1280 and 390 px.

use relay_devnet::{Devnet, DevnetConfig};
use relay_host::devnet::DEVNET_OWNER_TOKEN;
use serde_json::Value;

use crate::common::{self, get, send, serve, Running};

const BASE: u64 = 8453;
const ARB: u64 = 42161;

/// A settled route: its id, source transaction and sender.
async fn settled(devnet: &Devnet, h: &Running) -> (String, String, String) {
    common::approve_permit2(devnet, BASE, 1).await;
    let body = common::permit_body(devnet, (BASE, ARB), 2_000_000, 11);
    let (receipt, done) = common::execute_to_end(&h.base, &body).await;
    assert_eq!(done["status"], "DONE", "{done}");
    let field = |v: &Value, k: &str| v[k].as_str().unwrap().to_string();
    let sender = relay_devnet::keys::anvil_address(1).to_string();
    (field(&receipt, "id"), field(&done, "srcTx"), sender)
}

/// The devnet mesh with one settled route.
async fn mesh_with_a_route() -> (Devnet, tempfile::TempDir, Running, (String, String, String)) {
    let devnet = Devnet::start(DevnetConfig::with_chains([BASE, ARB]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let route = settled(&devnet, &h).await;
    (devnet, dir, h, route)
}

async fn find(h: &Running, q: &str) -> (u16, Value) {
    get(&format!("{}/api/explorer/find?q={q}", h.base)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_route_is_found_by_id_transaction_or_address_and_shown_as_its_finder_may_see_it() {
    let (devnet, _dir, h, (id, src_tx, sender)) = mesh_with_a_route().await;

    // the timeline: stages in order, ending done; the source transaction
    let (status, t) = get(&format!("{}/api/route/timeline?id={id}", h.base)).await;
    assert_eq!(status, 200, "{t}");
    let stages = t["stages"].as_array().unwrap();
    let times: Vec<u64> = stages.iter().map(|s| s["atMs"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{t}");
    assert!(times[0] >= t["createdMs"].as_u64().unwrap(), "{t}");
    assert_eq!(stages.last().unwrap()["status"], "DONE", "{t}");
    assert_eq!(
        t["decimals"],
        serde_json::json!({"from": 6, "to": 6}),
        "{t}"
    );
    let txs = t["transactions"].as_array().unwrap();
    let source = txs.iter().find(|x| x["hash"] == src_tx.as_str());
    let source = source.unwrap_or_else(|| panic!("{src_tx} not in {t}"));
    assert_eq!(
        (source["chain"].as_str(), source["state"].as_str()),
        (Some("8453"), Some("mined"))
    );

    // by id: the route, named
    let (status, by_id) = find(&h, &id).await;
    assert_eq!(
        (status, by_id["kind"].as_str()),
        (200, Some("id")),
        "{by_id}"
    );
    assert_eq!(by_id["routes"][0]["id"], id.as_str(), "{by_id}");
    // by its transaction or its sender: what the public feed shows
    for (q, kind) in [(&src_tx, "transaction"), (&sender, "address")] {
        let (status, mut a) = find(&h, q).await;
        assert_eq!((status, a["kind"].as_str()), (200, Some(kind)), "{a}");
        assert_eq!(a["routes"].as_array().unwrap().len(), 1, "{a}");
        assert_eq!(a["routes"][0]["status"], "DONE", "{a}");
        a["query"] = Value::Null;
        let text = a.to_string().to_ascii_lowercase();
        for secret in [&id, &src_tx, &sender, &"2000000".to_string()] {
            assert!(
                !text.contains(&secret.to_ascii_lowercase()),
                "{secret} shown: {a}"
            );
        }
    }
    // someone else's address finds nothing; nonsense is a typed 400
    let other = relay_devnet::keys::anvil_address(7).to_string();
    assert_eq!(find(&h, &other).await.1["routes"], serde_json::json!([]));
    for bad in ["", "hello", "0x1234", "%25"] {
        let (status, e) = find(&h, bad).await;
        assert_eq!(
            (status, e["errorCode"].as_str(), e["field"].as_str()),
            (400, Some("INVALID_FIELD"), Some("q")),
            "{bad}: {e}"
        );
        assert_eq!(e["retryable"], false);
    }
    let (status, e) = get(&format!("{}/api/route/timeline?id=rt_unknown", h.base)).await;
    assert_eq!(
        (status, e["errorCode"].as_str()),
        (404, Some("UNKNOWN_ROUTE")),
        "{e}"
    );

    // the operator: in full, by any of them; nobody else
    let url = format!("{}/admin/api/explorer/find?q={sender}", h.base);
    let refused = send(common::http().get(&url)).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    for q in [&id, &src_tx, &sender] {
        let url = format!("{}/admin/api/explorer/find?q={q}", h.base);
        let a = send(common::http().get(&url).bearer_auth(DEVNET_OWNER_TOKEN)).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let r = &a.body["routes"][0];
        assert_eq!(
            (r["id"].as_str(), r["srcTx"].as_str()),
            (Some(id.as_str()), Some(src_tx.as_str())),
            "{}",
            a.body
        );
        assert!(
            r["sender"].as_str().unwrap().eq_ignore_ascii_case(&sender),
            "{r}"
        );
    }
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_finds_and_shows_a_route_in_a_browser() {
    let (devnet, _dir, h, (id, src_tx, sender)) = mesh_with_a_route().await;
    let args = [
        "--url",
        &h.base,
        "--token",
        DEVNET_OWNER_TOKEN,
        "--route",
        &id,
    ];
    let args = [&args[..], &["--src-tx", &src_tx, "--sender", &sender]].concat();
    let events =
        common::browser_script("explorer_page.py", &args, "RELAY_EXPLORER_SCREENSHOT").await;
    let public = events.iter().find(|e| e["event"] == "public").unwrap();
    let stages = public["stages"].as_array().unwrap();
    assert!(stages.len() >= 2, "{public}");
    assert_eq!(stages.last().unwrap()[1], "DONE", "{public}");
    assert!(
        public["outcome"].as_str().unwrap().contains("verified"),
        "{public}"
    );
    assert!(public["why"][0][0].as_str().is_some(), "{public}");
    assert!(!public["fees"].as_array().unwrap().is_empty(), "{public}");
    assert!(
        public["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("?q={id}")),
        "{public}"
    );
    let coarse = events.iter().find(|e| e["event"] == "coarse").unwrap();
    let text = coarse["text"].as_str().unwrap().to_ascii_lowercase();
    for secret in [&id, &sender] {
        assert!(
            !text.contains(&secret.to_ascii_lowercase()),
            "{secret} shown: {text}"
        );
    }
    let operator = events.iter().find(|e| e["event"] == "operator").unwrap();
    assert!(operator["found"][0][0] == id.as_str(), "{operator}");
    devnet.stop();
}
