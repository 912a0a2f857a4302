//! `/api/route/status` and `/api/route/stream` over real HTTP: receipts of
//! stored routes, 404 for unknown ids, and SSE that sends the current state
//! at once, each change, then `done` and closes.

use crate::common;
use common::{get, serve};
use relay_devnet::{Devnet, DevnetConfig};
use relay_types::route::{RouteRecord, RouteStatus};

fn route(id: &str) -> RouteRecord {
    common::sample_route(id)
}

#[tokio::test(flavor = "multi_thread")]
async fn status_returns_the_receipt_and_404_for_unknown_ids() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    common::store_idle_route(&h.host_state.store, &route("rt_status")).await;

    let (code, r) = get(&format!("{}/api/route/status?id=rt_status", h.base)).await;
    assert_eq!(code, 200);
    assert_eq!(r["id"], "rt_status");
    assert_eq!(r["status"], "BRIDGING");
    assert_eq!(r["stage"], "RECEIVING");
    assert_eq!(r["sandbox"], false);
    assert_eq!(r["relayFee"], "12500");
    assert_eq!(r["bridged"], "4987500");
    assert_eq!(r["to"]["min"], "4987500");
    assert_eq!(r["track"], "/api/route/status?id=rt_status");

    for id in ["rt_nope", "sbx_nope", "garbage"] {
        let (code, body) = get(&format!("{}/api/route/status?id={id}", h.base)).await;
        assert_eq!(code, 404, "{id}");
        assert_eq!(body["error"], "unknown route id");
        assert_eq!(body["errorCode"], "UNKNOWN_ROUTE");
    }
    let (code, body) = get(&format!("{}/api/route/status", h.base)).await;
    assert_eq!(code, 400);
    assert_eq!(body["errorCode"], "MISSING_FIELD");
    devnet.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stream_sends_now_each_change_then_done_and_closes() {
    let devnet = Devnet::start(DevnetConfig::with_chains([8453, 42161]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |_| {}).await;
    let mut r = route("rt_stream");
    common::store_idle_route(&h.host_state.store, &r).await;

    let resp = crate::common::fetch(format!("{}/api/route/stream?id=rt_stream", h.base))
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut resp = resp;
    let mut text = String::new();
    let mut next_event = async || loop {
        if let Some(end) = text.find("\n\n") {
            let ev: String = text.drain(..end + 2).collect();
            if ev.starts_with(':') {
                continue; // keep-alive comment
            }
            return Some(ev);
        }
        match resp.chunk().await.unwrap() {
            Some(chunk) => text.push_str(&String::from_utf8_lossy(&chunk)),
            None => return None,
        }
    };
    let first = next_event().await.unwrap();
    assert!(first.starts_with("event: status\n"), "{first}");
    assert!(first.contains("\"status\":\"BRIDGING\""), "{first}");

    r.status = RouteStatus::Bridging;
    r.stage = Some("SENDING".into());
    r.src_tx = Some("0x01".into());
    h.host_state
        .store
        .update_route(&r, 1, "status")
        .await
        .unwrap();
    let second = next_event().await.unwrap();
    assert!(
        second.starts_with("event: status\n") && second.contains("\"stage\":\"SENDING\""),
        "{second}"
    );

    r.status = RouteStatus::Done;
    r.dest_tx = Some("0x02".into());
    h.host_state
        .store
        .update_route(&r, 2, "done")
        .await
        .unwrap();
    let last = next_event().await.unwrap();
    assert!(
        last.starts_with("event: done\n") && last.contains("\"destTx\":\"0x02\""),
        "{last}"
    );
    assert!(next_event().await.is_none(), "the stream closes after done");
    devnet.stop();
}
