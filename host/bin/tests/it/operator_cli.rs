//! `relay rails …` as an operator runs it: the real binary against the
//! packaged plugins directory (the nine rails; the float lane in both
//! packagings).

use crate::common;
use common::relay_cli as relay;
use serde_json::Value;
use std::path::Path;

fn list(dir: &Path) -> Value {
    let (code, stdout, stderr) = relay(dir, &["rails", "list", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).expect("list --json is JSON")
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    relay_fixtures::plugins_copy(&dir.path().join("plugins"));
    dir
}

fn packagings(v: &Value, id: &str) -> Vec<String> {
    let mut p: Vec<String> = v["rails"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == id)
        .map(|r| r["packaging"].as_str().unwrap().to_string())
        .collect();
    p.sort();
    p
}

#[test]
fn lists_the_reference_rail_in_both_packagings() {
    let dir = setup();
    let v = list(dir.path());
    assert_eq!(packagings(&v, "floatlane"), vec!["native", "wasm"]);
    let active: Vec<&Value> = v["rails"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == "floatlane" && r["active"] == true)
        .collect();
    assert_eq!(active.len(), 1, "exactly one packaging serves the rail");
    assert_eq!(v["rejected"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn a_corrupted_checksum_refuses_that_plugin_only() {
    let dir = setup();
    let manifest = dir.path().join("plugins/floatlane-wasm/plugin.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let sha = text
        .lines()
        .find(|l| l.starts_with("sha256"))
        .unwrap()
        .to_string();
    std::fs::write(
        &manifest,
        text.replace(&sha, &format!("sha256 = \"{}\"", "0".repeat(64))),
    )
    .unwrap();
    let v = list(dir.path());
    assert_eq!(
        packagings(&v, "floatlane"),
        vec!["native"],
        "the native one keeps working"
    );
    let reason = v["rejected"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("checksum mismatch"), "{reason}");
    let (_, table, _) = relay(dir.path(), &["rails", "list"]);
    assert!(table.contains("REFUSED floatlane"), "{table}");
}

#[test]
fn a_tampered_artifact_is_refused() {
    let dir = setup();
    let wasm = dir.path().join("plugins/floatlane-wasm/floatlane.wasm");
    let mut bytes = std::fs::read(&wasm).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&wasm, bytes).unwrap();
    let v = list(dir.path());
    assert_eq!(packagings(&v, "floatlane"), vec!["native"]);
    assert!(v["rejected"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("checksum mismatch"));
}

#[test]
fn an_unsupported_contract_version_is_refused_with_the_version() {
    let dir = setup();
    let manifest = dir.path().join("plugins/floatlane-native/plugin.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            &format!("contract = \"{}\"", relay_plugin_api::CONTRACT_VERSION),
            "contract = \"2.0.0\"",
        ),
    )
    .unwrap();
    let v = list(dir.path());
    assert_eq!(packagings(&v, "floatlane"), vec!["wasm"]);
    let reason = v["rejected"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("unsupported contract version 2.0.0"),
        "{reason}"
    );
}

#[test]
fn a_plugin_toml_that_lies_about_the_artifact_is_refused() {
    let dir = setup();
    let manifest = dir.path().join("plugins/floatlane-native/plugin.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("version = \"0.1.0\"", "version = \"0.2.0\""),
    )
    .unwrap();
    let v = list(dir.path());
    assert_eq!(packagings(&v, "floatlane"), vec!["wasm"]);
    let reason = v["rejected"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("plugin.toml says version 0.2.0, the rail reports 0.1.0"),
        "{reason}"
    );
}

#[test]
fn lists_all_nine_rails_with_their_packaging_lanes_and_flags() {
    let dir = setup();
    let v = list(dir.path());
    let expect = [
        ("btc", vec!["native"]),
        ("bungee", vec!["native"]),
        ("cctp", vec!["wasm"]),
        ("floatlane", vec!["native", "wasm"]),
        ("lifi", vec!["wasm"]),
        ("squid", vec!["wasm"]),
        ("stablebridge", vec!["native"]),
        ("sui", vec!["native"]),
        ("tron", vec!["native"]),
    ];
    for (id, packs) in &expect {
        assert_eq!(&packagings(&v, id), packs, "{id}");
    }
    let rails = v["rails"].as_array().unwrap();
    assert_eq!(rails.len(), 10, "nine rails, the float lane twice");
    for r in rails {
        let lanes = r["manifest"]["coverage"].as_array().unwrap();
        assert!(!lanes.is_empty(), "{r}");
        let quote_only = ["sui", "tron"].contains(&r["id"].as_str().unwrap());
        assert!(
            lanes.iter().all(|l| l["executable"] == !quote_only),
            "executable flags of {}",
            r["id"]
        );
    }
}

#[test]
fn operator_switches_persist_across_invocations() {
    let dir = setup();
    let (code, _, err) = relay(
        dir.path(),
        &["rails", "execute-ready", "floatlane", "evm->evm", "off"],
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = relay(dir.path(), &["rails", "disable", "floatlane"]);
    assert_eq!(code, 0, "{err}");
    let v = list(dir.path());
    assert_eq!(v["operator"]["rails"]["floatlane"]["enabled"], false);
    assert_eq!(
        v["operator"]["rails"]["floatlane"]["lanes"]["evm->evm"]["executeReady"],
        false
    );
    let (code, _, _) = relay(dir.path(), &["rails", "enable", "floatlane"]);
    assert_eq!(code, 0);
    assert_eq!(
        list(dir.path())["operator"]["rails"]["floatlane"]["enabled"],
        true
    );
}

#[test]
fn unknown_rails_and_lanes_are_refused_by_name() {
    let dir = setup();
    let (code, _, err) = relay(dir.path(), &["rails", "disable", "nosuchrail"]);
    assert_ne!(code, 0);
    assert!(err.contains("no installed rail \"nosuchrail\""), "{err}");
    let (code, _, err) = relay(
        dir.path(),
        &["rails", "execute-ready", "floatlane", "evm->mars", "on"],
    );
    assert_ne!(code, 0);
    assert!(err.contains("has no lane \"evm->mars\""), "{err}");
}
