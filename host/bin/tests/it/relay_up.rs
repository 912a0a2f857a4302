//! `relay up`, the main job, as a user runs it: the real binary brings up
//! anvil chains with the project's contracts and the host, prints where
//! everything is (the devnet owner token among it, and the host takes it),
//! serves the mesh with every chain up (and sealed messaging: `relay msg`
//! publishes and sends against it), and on Ctrl-C stops everything it
//! started.

use crate::common;
use common::free_port;
use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

#[test]
fn relay_up_serves_the_devnet_mesh_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = relay_fixtures::plugins_copy(&dir.path().join("plugins"));
    let port = free_port();
    let started = Instant::now();
    let mut child = common::HostProcess::spawn(
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["up", "--chains", "8453,42161,10"])
            .env("RELAY_LISTEN", format!("127.0.0.1:{port}"))
            .env("RELAY_PLUGINS_DIR", &plugins)
            // the tests' shared compiled-module cache: what is timed is the
            // mesh coming up, not cranelift compiling unoptimised
            .env(
                "RELAY_DATA_DIR",
                relay_fixtures::data_dir(&dir.path().join("data")),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut banner = Vec::new();
    while !banner
        .iter()
        .any(|l: &String| l.contains("Ctrl-C stops everything"))
    {
        // A bound, not a wait: three anvil chains and the host start on two
        // cores shared with the rest of the suite (one run under a
        // concurrent build took over 60 s).
        let left = crate::common::SETTLES_WITHIN.saturating_sub(started.elapsed());
        banner.push(rx.recv_timeout(left).unwrap_or_else(|_| {
            panic!(
                "no banner within {:?}: {banner:?}",
                crate::common::SETTLES_WITHIN
            )
        }));
    }
    let ready = started.elapsed();
    eprintln!("relay up ready in {} ms", ready.as_millis());
    let text = banner.join("\n");
    assert!(text.contains("relayer   0x"), "{text}");
    assert!(
        text.contains("permit2   0x000000000022D473030F116dDEE9F6B43aC78BA3"),
        "{text}"
    );
    let rpcs: Vec<String> = banner
        .iter()
        .filter(|l| l.trim_start().starts_with("chain "))
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    assert_eq!(rpcs.len(), 3, "{text}");
    let owner = relay_host::devnet::DEVNET_OWNER_TOKEN;
    assert!(text.contains(&format!("owner     {owner}")), "{text}");
    // the oblivious relay (spec §4.11 {relay_url}) forwards the gateway's keys
    let relay = banner
        .iter()
        .find(|l| l.trim_start().starts_with("relay     "))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no relay line: {text}"))
        .to_string();
    let keys = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let r = crate::common::http()
            .get(format!("{relay}/keys"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{relay}");
        r.bytes().await.unwrap()
    });
    assert_eq!(ohttp::KeyConfig::decode_list(&keys).unwrap().len(), 2);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let get = |path: &str| -> serde_json::Value {
        rt.block_on(async {
            crate::common::fetch(format!("http://127.0.0.1:{port}{path}"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
    };
    let mesh = get("/api/route/chains");
    assert_eq!(
        mesh["chains"],
        serde_json::json!([10, 8453, 42161]),
        "{mesh}"
    );
    let status = get("/api/status");
    assert_eq!(
        status["nodes"]["up"], 8,
        "3 EVM chains, 5 non-EVM nodes: {status}"
    );
    let rails = status["rails"].as_array().unwrap();
    assert_eq!(rails.len(), 9, "the nine rails: {status}");
    assert!(rails.iter().all(|r| r["up"] == true), "{status}");
    assert_eq!(status["status"], "operational", "{status}");
    // The printed owner token is the one the host takes for mode self.
    let self_mode = serde_json::json!({
        "fromChain": 8453, "toChain": 42161, "fromToken": "USDC", "amount": "5000000",
        "toAddress": "0x000000000000000000000000000000000000bEEF", "live": true,
    });
    let execute = |auth: Option<String>| {
        let mut req = crate::common::http()
            .post(format!("http://127.0.0.1:{port}/api/route/execute"))
            .json(&self_mode);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        rt.block_on(async { req.send().await.unwrap().status().as_u16() })
    };
    assert_eq!(execute(None), 401, "mode self needs the owner token");
    assert_eq!(execute(Some(format!("Bearer {owner}"))), 200);
    // sealed messaging is served too: mailboxes published and a note sent
    // through `relay msg`
    crate::messaging::publish_and_send_on(&format!("http://127.0.0.1:{port}"), dir.path());
    let head = get("/api/messages/v2/witness/head");
    assert_eq!(
        head["seq"], 4,
        "both publications are in the witness log, after the privacy lane's two gateway keys: {head}"
    );

    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    assert!(exit.success(), "relay up exited with {exit}");
    for rpc in rpcs {
        let gone = rt.block_on(async {
            crate::common::http()
                .post(&rpc)
                .json(
                    &serde_json::json!({"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}),
                )
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_err()
        });
        assert!(gone, "anvil at {rpc} still answers after Ctrl-C");
    }
}
