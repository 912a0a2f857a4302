//! The signed capability snapshot (spec §4.1 `GET /api/capability/snapshot`):
//! what this host can do right now — chains (with live RPC health), non-EVM
//! nodes, every loaded rail with its lanes and readiness — stamped with
//! `ts` and signed by the relayer, so a client can keep it as evidence of
//! what the service claimed at that moment.
//!
//! Scheme `relay-capability-v1`: the snapshot object is written as
//! canonical JSON — object keys sorted by code point at every level, no
//! whitespace; for the strings, integers and booleans it contains this is
//! the RFC 8785 form — and those UTF-8 bytes are signed as an EIP-191
//! personal message (`personal_sign`) by the relayer key
//! ([`super::attest::personal_sign`], the signer quote attestations use).
//! Verify: `recoverMessageAddress({message: canonical})` (viem) or
//! `ethers.verifyMessage(canonical, signature)` equals `signer`, where
//! `canonical` is the `message` field, or the `snapshot` object
//! re-serialised the same way.

use relay_plugin_api::ChainRef;
use serde_json::{json, Value};
use std::collections::BTreeSet;

use super::{
    attest::{self, AttestError, PersonalSignature},
    mesh::{directed_route_count, mesh_chains, mesh_non_evm, MeshInputs},
};
use relay_chain::signer::RelayerSigner;

/// The scheme name.
pub const SCHEME: &str = "relay-capability-v1";

/// The unsigned snapshot at `ts` (epoch ms).
pub fn summary(i: &MeshInputs<'_>, ts: u64) -> Value {
    let lanes = i.lanes();
    let chains: Vec<Value> = mesh_chains(&lanes)
        .into_iter()
        .map(|id| {
            let up = i.health.chains.get(&id).copied().unwrap_or(false);
            json!({"chainId": id, "name": i.config.chain_name(id), "up": up})
        })
        .collect();
    let non_evm: Vec<Value> = mesh_non_evm(&lanes)
        .into_iter()
        .map(|n| {
            let c = ChainRef::NonEvm(n);
            let touching = lanes
                .iter()
                .filter(|l| l.from.contains(&c) || l.to.contains(&c));
            let via: BTreeSet<&str> = touching.clone().map(|l| l.rail.as_str()).collect();
            let ready = touching.clone().any(|l| l.execute_ready);
            json!({"node": n.as_str(), "via": via, "executeReady": ready})
        })
        .collect();
    let rails: Vec<Value> = i
        .snap
        .active()
        .map(|r| {
            let m = r.manifest();
            let mine: Vec<Value> = lanes
                .iter()
                .filter(|l| l.rail == m.id)
                .map(|l| json!({"lane": l.lane, "from": l.from, "to": l.to, "assets": l.assets, "executeReady": l.execute_ready, "quoteOnly": l.quote_only}))
                .collect();
            json!({
                "id": m.id,
                "version": m.version.to_string(),
                "role": m.role,
                "packaging": r.packaging(),
                "enabled": i.state.rail_enabled(&m.id),
                "up": i.health.rail_up(&m.id),
                "lanes": mine,
            })
        })
        .collect();
    json!({
        "ts": ts,
        "service": "relay",
        "relayer": i.config.relayer,
        "permit2": i.config.permit2,
        "chains": chains,
        "nonEvm": non_evm,
        "rails": rails,
        "directedRoutes": directed_route_count(&lanes),
        "healthTs": i.health.ts_ms,
    })
}

/// `v` as canonical JSON: keys sorted at every level, no whitespace.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (n, k) in keys.into_iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (n, x) in a.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A snapshot with its signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealed {
    /// The canonical JSON that was signed.
    pub canonical: String,
    /// Signer and signature (both `None` without a relayer key).
    pub signed: PersonalSignature,
}

/// Signs `snapshot`'s canonical JSON with the relayer key (unsigned when
/// this host has none).
pub fn seal(snapshot: &Value, signer: Option<&RelayerSigner>) -> Result<Sealed, AttestError> {
    let canonical = canonical_json(snapshot);
    let signed = attest::personal_sign(signer, canonical.as_bytes())?;
    Ok(Sealed { canonical, signed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level_without_whitespace() {
        let v = json!({"b": [{"z": 1, "a": "x\"y"}], "a": true, "c": null});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":true,"b":[{"a":"x\"y","z":1}],"c":null}"#
        );
    }

    #[test]
    fn a_sealed_snapshot_recovers_to_the_relayer_and_a_changed_one_does_not() {
        let key = RelayerSigner::from_hex(
            "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        )
        .unwrap();
        let v = json!({"ts": 1, "rails": [{"id": "x", "up": true}]});
        let s = seal(&v, Some(&key)).unwrap();
        let sig = s.signed.signature.unwrap();
        assert_eq!(
            attest::recover(s.canonical.as_bytes(), &sig),
            Ok(key.address())
        );
        let changed = canonical_json(&json!({"ts": 2, "rails": [{"id": "x", "up": true}]}));
        assert_ne!(attest::recover(changed.as_bytes(), &sig), Ok(key.address()));
        assert_eq!(seal(&v, None).unwrap().signed.signature, None);
    }
}
