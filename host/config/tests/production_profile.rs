//! The documented production profile (`docs/relay.production.toml`) loads
//! and validates as the host loads it, and holds no secret: the keystore
//! and every credential are references to the environment.

use relay_config::HostConfig;
use std::path::PathBuf;

fn profile() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/relay.production.toml")
}

#[test]
fn the_production_profile_loads_validates_and_references_its_secrets() {
    let c = HostConfig::load(Some(&profile())).expect("the profile loads and validates");
    assert_eq!(c.chain_ids(), vec![1, 10, 8453, 42161]);
    for id in c.chain_ids() {
        let chain = &c.chains[&id.to_string()];
        assert!(!chain.rpc.is_empty(), "chain {id} has RPC endpoints");
        assert!(
            chain.rpc.iter().all(|u| u.starts_with("https://")),
            "{id}: {:?}",
            chain.rpc
        );
        assert!(chain.tokens.contains_key("USDC"), "chain {id} lists USDC");
    }
    assert_eq!(
        c.relayer_keystore.as_deref(),
        Some(std::path::Path::new("/etc/relay/relayer.json"))
    );
    assert_eq!(
        c.relayer_keystore_passphrase_env.as_deref(),
        Some("RELAY_KEYSTORE_PASSPHRASE")
    );
    for (name, cred) in &c.capabilities.credentials {
        assert!(!cred.env.is_empty(), "{name} names its variable");
        assert!(cred.value.is_none(), "{name} has no value in the file");
    }
    for rail in ["lifi", "squid", "bungee", "btc"] {
        let url = &c.rails[rail].config["base_url"];
        assert!(url.starts_with("https://"), "{rail}: {url}");
    }
    assert!(c.limits.enabled);
    assert!(!c.capabilities.allow_private_networks);
    assert_eq!(
        c.telemetry.otlp_endpoint, None,
        "trace export is off by default"
    );
    // No private key (32 bytes of hex) anywhere in the file.
    let text = std::fs::read_to_string(profile()).unwrap();
    let hex_run = text
        .split(|ch: char| !ch.is_ascii_hexdigit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(hex_run < 64, "a 64-hex-digit value is in the profile");
}

#[test]
fn a_bad_otlp_endpoint_is_refused_with_its_key() {
    let dir = std::env::temp_dir().join(format!("relay-otlp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("c.toml");
    std::fs::write(&f, "[telemetry]\notlp_endpoint = \"collector:4318\"\n").unwrap();
    let err = HostConfig::load(Some(&f)).unwrap_err().to_string();
    assert!(err.contains("telemetry.otlp_endpoint"), "{err}");
}
