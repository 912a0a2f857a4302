//! `relay doctor --config …` against a live `relay devnet`: the written
//! configuration passes every check; a wrong chain id, an unreachable RPC,
//! a key that is not the configured relayer's, a relayer without gas and
//! an upstream base URL that serves another API each fail (exit 1), on the
//! row of the check, with its fix.

use crate::common::free_port;
use crate::devnet_serve::{relayer_key_hex, StandaloneDevnet, DST, SRC};
use relay_config::HostConfig;
use serde_json::json;

/// `relay doctor --config <config>` with the devnet's env file (and `env`
/// replacing any of its variables).
fn doctor(
    devnet: &StandaloneDevnet,
    config: &HostConfig,
    name: &str,
    env: &[(&str, &str)],
) -> (i32, String) {
    let path = devnet.dir.join(name);
    std::fs::write(&path, toml::to_string(config).unwrap()).unwrap();
    let mut vars = devnet.env.clone();
    for (k, v) in env {
        vars.retain(|(n, _)| n != k);
        vars.push((k.to_string(), v.to_string()));
    }
    let (code, out, err) = devnet.cli(&["doctor", "--config", path.to_str().unwrap()], &vars);
    assert!(!out.contains(&relayer_key_hex()) && !err.contains(&relayer_key_hex()));
    (code, format!("{out}{err}"))
}

/// The rows of `check` in the table (a failed row and its fix line).
fn rows<'a>(out: &'a str, check: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = out.lines().collect();
    let mut rows = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with(check) {
            rows.push(*l);
            if let Some(fix) = lines
                .get(i + 1)
                .filter(|n| n.trim_start().starts_with("fix:"))
            {
                rows.push(fix);
            }
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_passes_the_devnet_and_names_each_broken_check_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let devnet = StandaloneDevnet::start(tmp.path()).await;

    let (code, out) = doctor(&devnet, &devnet.config, "ok.toml", &[]);
    assert_eq!(code, 0, "{out}");
    for check in [
        "rpc.chain_id",
        "upstream.health",
        "relayer.key",
        "relayer.gas",
        "store.migrate",
    ] {
        let r = rows(&out, check);
        assert!(
            !r.is_empty() && r.iter().all(|l| l.contains("pass")),
            "{check}: {out}"
        );
    }
    assert_eq!(rows(&out, "rpc.chain_id").len(), 2, "{out}");
    assert_eq!(
        rows(&out, "upstream.health").len(),
        9,
        "the nine rails: {out}"
    );
    assert!(out.contains("0 failed: ready"), "{out}");

    // The --json form carries the same rows.
    let (_, json_out, _) = devnet.cli(
        &[
            "doctor",
            "--json",
            "--config",
            devnet.config_path().to_str().unwrap(),
        ],
        &devnet.env,
    );
    let report: serde_json::Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(report["ok"], true, "{report}");

    // An endpoint of another chain where 8453's should be.
    let mut wrong = devnet.config.clone();
    wrong.chains.get_mut(&SRC.to_string()).unwrap().rpc = vec![devnet.rpc(DST)];
    let (code, out) = doctor(&devnet, &wrong, "wrong-chain.toml", &[]);
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "rpc.chain_id").join("\n");
    assert!(
        r.contains(&format!("answers chain id {DST}, configured {SRC}")),
        "{out}"
    );
    assert!(r.contains(&format!("fix: point chains.{SRC}.rpc")), "{out}");
    assert!(out.contains("NOT ready"), "{out}");

    // Nothing listens at 8453's endpoint.
    let mut dead = devnet.config.clone();
    let url = format!("http://127.0.0.1:{}/", free_port());
    dead.chains.get_mut(&SRC.to_string()).unwrap().rpc = vec![url.clone()];
    let (code, out) = doctor(&devnet, &dead, "dead-rpc.toml", &[]);
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "rpc.chain_id").join("\n");
    assert!(
        r.contains(&url) && r.contains("FAIL") && r.contains("unreachable"),
        "{out}"
    );
    assert!(r.contains("fix: check the URL"), "{out}");

    // An upstream that answers errors.
    let lifi = devnet.config.rails["lifi"].config["base_url"].clone();
    let fault = |mode: &str| json!({"mode": mode});
    let (c, t) = crate::common::post(&lifi, "/simulator/faults", &fault("error"), &[]).await;
    assert_eq!(c, 200, "{t}");
    let (code, out) = doctor(&devnet, &devnet.config, "ok.toml", &[]);
    crate::common::post(&lifi, "/simulator/faults", &fault("none"), &[]).await;
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "upstream.health");
    let at = r
        .iter()
        .position(|l| l.contains(&format!("lifi {lifi}")))
        .unwrap();
    assert!(r[at].contains("FAIL") && r[at].contains("down"), "{out}");
    assert!(r[at + 1].contains("fix: check rails.lifi.config"), "{out}");

    // A base URL that serves JSON, but not the upstream's documented answer
    // (another service, an outdated API).
    let other = other_api().await;
    let mut moved = devnet.config.clone();
    let bungee = moved.rails.get_mut("bungee").unwrap();
    bungee.config.insert("base_url".into(), other.clone());
    let (code, out) = doctor(&devnet, &moved, "other-api.toml", &[]);
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "upstream.health");
    let at = r
        .iter()
        .position(|l| l.contains(&format!("bungee {other}")))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        r[at].contains("FAIL") && r[at].contains("documented shape"),
        "{out}"
    );
    assert!(
        r[at + 1].contains("fix: check rails.bungee.config"),
        "{out}"
    );

    // A key that is not the configured relayer's.
    let other = format!(
        "0x{}",
        hex::encode(relay_devnet::keys::anvil_signer(5).to_bytes())
    );
    let (code, out) = doctor(
        &devnet,
        &devnet.config,
        "ok.toml",
        &[("RELAY_RELAYER_KEY", &other)],
    );
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "relayer.key").join("\n");
    assert!(r.contains("FAIL") && r.contains("belongs to"), "{out}");
    assert!(r.contains("fix: set RELAY_RELAYER_KEY"), "{out}");

    // The relayer's gas on 8453 spent.
    let relayer = devnet.config.relayer.clone().unwrap();
    devnet
        .anvil(SRC, "anvil_setBalance", json!([relayer, "0x0"]))
        .await;
    let (code, out) = doctor(&devnet, &devnet.config, "ok.toml", &[]);
    assert_eq!(code, 1, "{out}");
    let r = rows(&out, "relayer.gas");
    let src_row = r
        .iter()
        .position(|l| l.contains(&format!("chain {SRC}")))
        .unwrap();
    assert!(
        r[src_row].contains("FAIL") && r[src_row].contains("0 wei"),
        "{out}"
    );
    assert!(
        r[src_row + 1].contains(&format!("fix: send native gas to {relayer} on chain {SRC}")),
        "{out}"
    );
    assert!(
        r.iter()
            .any(|l| l.contains(&format!("chain {DST}")) && l.contains("pass")),
        "{out}"
    );
}

/// A loopback service that answers every request with its own JSON 404
/// (`{"errorCode": "NOT_FOUND"}`): what a rail finds at a base URL that is
/// not its upstream's API. Serves for the rest of the test.
async fn other_api() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = || async {
        let body = json!({"errorCode": "NOT_FOUND", "error": "no such path"});
        (axum::http::StatusCode::NOT_FOUND, axum::Json(body))
    };
    let app = axum::Router::new().fallback(answer);
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}
