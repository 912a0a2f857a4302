//! `/api/status` endpoints from real probes and `/api/uptime` from stored
//! samples (spec §4.1, §2.2): a dead chain RPC shows down; a sample stored
//! by one replica is in every replica's report.

use relay_devnet::{Devnet, DevnetConfig};
use relay_engine::uptime::utc_date;
use relay_store::UptimeSample;
use relay_types::{Clock as _, SystemClock};
use serde_json::Value;

use crate::common::{dead_and_hung, get, serve, wait_for};

const SRC: u64 = 8453;
const DST: u64 = 42161;

fn endpoint(status: &Value, name: &str) -> Option<bool> {
    status["endpoints"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)?["up"]
        .as_bool()
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_are_probed_and_uptime_is_shared_by_replicas() {
    let devnet = Devnet::start(DevnetConfig::with_chains([SRC, DST]))
        .await
        .unwrap();
    let (dead, _, _hold) = dead_and_hung().await;
    let dir = tempfile::tempdir().unwrap();
    let h = serve(&devnet, dir.path(), |c| {
        c.quote.chain_read_timeout_ms = 500;
        c.chains.get_mut(&DST.to_string()).unwrap().rpc = vec![dead.clone()];
    })
    .await;
    let (code, s) = get(&format!("{}/api/status", h.base)).await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(endpoint(&s, "api"), Some(true), "{s}");
    assert_eq!(endpoint(&s, "store"), Some(true), "{s}");
    assert_eq!(endpoint(&s, &format!("rpc:{SRC}")), Some(true), "{s}");
    assert_eq!(endpoint(&s, &format!("rpc:{DST}")), Some(false), "{s}");
    assert!(
        s["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"].as_str().unwrap().starts_with("upstream:")),
        "{s}"
    );

    // A sample another replica stored two days ago, and this one's own.
    let uptime = format!("{}/api/uptime", h.base);
    wait_for("the first probe", async || {
        get(&uptime).await.1["days"][0]["samples"].as_u64() >= Some(1)
    })
    .await;
    let then = SystemClock.now_ms() - 2 * 86_400_000;
    let day = utc_date(then);
    let sample = UptimeSample {
        slot: (then / 30_000) as i64,
        ts_ms: then,
        day: &day,
        verdict: "down",
    };
    assert!(h.host_state.store.record_uptime(&sample, 0).await.unwrap());
    assert!(
        !h.host_state.store.record_uptime(&sample, 0).await.unwrap(),
        "one sample per slot"
    );

    // A second replica on the same store reports the same days.
    let dir2 = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let h2 = serve(&devnet, dir2.path(), |c| c.data_dir = data.clone()).await;
    for base in [&h.base, &h2.base] {
        let (_, u) = get(&format!("{base}/api/uptime")).await;
        let old = u["days"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["date"] == day.as_str())
            .cloned();
        let old = old.unwrap_or_else(|| panic!("{u}"));
        assert_eq!(
            (old["samples"].as_u64(), old["upPct"].as_f64()),
            (Some(1), Some(0.0)),
            "{u}"
        );
        assert!(u["since"].as_u64().unwrap() <= then, "{u}");
    }
    devnet.stop();
}
