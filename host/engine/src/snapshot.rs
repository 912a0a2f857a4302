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
use relay_plugin_api::RailRole;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;
use utoipa::ToSchema;

use super::{
    attest::{self, AttestError, PersonalSignature},
    mesh::{directed_route_count, mesh_chains, mesh_non_evm, MeshInputs},
};
use relay_chain::signer::RelayerSigner;

/// The scheme name.
pub const SCHEME: &str = "relay-capability-v1";

/// A node's health in the snapshot.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotChain {
    /// Chain id.
    pub chain_id: u64,
    /// Name.
    pub name: String,
    /// Up.
    pub up: bool,
}

/// A non-EVM node in the snapshot.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotNode {
    /// Node name.
    pub node: String,
    /// Rails reaching it.
    pub via: BTreeSet<String>,
    /// Whether some lane executes it now.
    pub execute_ready: bool,
}

/// A lane in the snapshot.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotLane {
    /// Lane name.
    pub lane: String,
    /// Sources.
    #[schema(value_type = Vec<relay_wire::Node>)]
    pub from: Vec<ChainRef>,
    /// Destinations.
    #[schema(value_type = Vec<relay_wire::Node>)]
    pub to: Vec<ChainRef>,
    /// Assets.
    pub assets: Vec<String>,
    /// Executes now.
    pub execute_ready: bool,
    /// Priced only.
    pub quote_only: bool,
}

/// A rail in the snapshot.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SnapshotRail {
    /// Rail id.
    pub id: String,
    /// Version.
    pub version: String,
    /// Role.
    #[schema(value_type = String)]
    pub role: RailRole,
    /// Packaging.
    #[schema(value_type = String)]
    pub packaging: relay_runtime::Packaging,
    /// Enabled by the operator.
    pub enabled: bool,
    /// Healthy.
    pub up: bool,
    /// Its lanes.
    pub lanes: Vec<SnapshotLane>,
}

/// What this host can do at `ts`: the signed part of
/// `GET /api/capability/snapshot`.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CapabilitySummary {
    /// Epoch ms.
    pub ts: u64,
    /// Service.
    pub service: String,
    /// The relayer.
    pub relayer: Option<String>,
    /// Permit2.
    pub permit2: String,
    /// EVM chains.
    pub chains: Vec<SnapshotChain>,
    /// Non-EVM nodes.
    pub non_evm: Vec<SnapshotNode>,
    /// Rails.
    pub rails: Vec<SnapshotRail>,
    /// Directed route count.
    pub directed_routes: usize,
    /// When health was read.
    pub health_ts: u64,
    /// Versions running.
    #[schema(value_type = Object)]
    pub versions: Value,
}

/// The unsigned snapshot at `ts` (epoch ms); `versions` says what runs.
pub fn summary(i: &MeshInputs<'_>, ts: u64, versions: Value) -> CapabilitySummary {
    let lanes = i.lanes();
    let chains = mesh_chains(&lanes)
        .into_iter()
        .map(|id| SnapshotChain {
            chain_id: id,
            name: i.config.chain_name(id),
            up: i.health.chains.get(&id).copied().unwrap_or(false),
        })
        .collect();
    let non_evm = mesh_non_evm(&lanes)
        .into_iter()
        .map(|n| {
            let c = ChainRef::NonEvm(n);
            let touching = lanes
                .iter()
                .filter(|l| l.from.contains(&c) || l.to.contains(&c));
            SnapshotNode {
                node: n.as_str().into(),
                via: touching.clone().map(|l| l.rail.clone()).collect(),
                execute_ready: touching.clone().any(|l| l.execute_ready),
            }
        })
        .collect();
    let rails = i
        .snap
        .active()
        .map(|r| {
            let m = r.manifest();
            let mine = lanes
                .iter()
                .filter(|l| l.rail == m.id)
                .map(|l| SnapshotLane {
                    lane: l.lane.clone(),
                    from: l.from.clone(),
                    to: l.to.clone(),
                    assets: l.assets.clone(),
                    execute_ready: l.execute_ready,
                    quote_only: l.quote_only,
                })
                .collect();
            SnapshotRail {
                id: m.id.clone(),
                version: m.version.to_string(),
                role: m.role,
                packaging: r.packaging(),
                enabled: i.state.rail_enabled(&m.id),
                up: i.health.rail_up(&m.id),
                lanes: mine,
            }
        })
        .collect();
    CapabilitySummary {
        ts,
        service: "relay".into(),
        relayer: i.config.relayer.clone(),
        permit2: i.config.permit2.clone(),
        chains,
        non_evm,
        rails,
        directed_routes: directed_route_count(&lanes),
        health_ts: i.health.ts_ms,
        versions,
    }
}

/// `GET /api/capability/snapshot`: the snapshot, the canonical JSON that
/// was signed and the signature.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct CapabilitySnapshot {
    /// The snapshot.
    pub snapshot: CapabilitySummary,
    /// `snapshot` as canonical JSON: what was signed.
    pub message: String,
    /// The scheme.
    pub scheme: String,
    /// Who signed (the relayer).
    pub signer: Option<String>,
    /// EIP-191 signature of `message`.
    pub signature: Option<String>,
    /// Epoch ms.
    pub ts: u64,
    /// How to verify.
    pub note: String,
}

/// Signs `summary` with the relayer key (unsigned when the host has none).
pub fn capability_snapshot(
    summary: CapabilitySummary,
    signer: Option<&RelayerSigner>,
) -> Result<CapabilitySnapshot, AttestError> {
    let value = serde_json::to_value(&summary).unwrap_or_default();
    let sealed = seal(&value, signer)?;
    let note = match &sealed.signed.signature {
        Some(_) => "verify: the EIP-191 personal_sign signer of `message` (its UTF-8 bytes) must equal `signer`, e.g. viem verifyMessage({address: signer, message, signature}); `message` is `snapshot` as canonical JSON (keys sorted at every level, no whitespace), so it can also be rebuilt from `snapshot`",
        None => "unsigned: this host has no relayer key; `message` is still the canonical JSON of `snapshot`",
    };
    Ok(CapabilitySnapshot {
        ts: summary.ts,
        snapshot: summary,
        message: sealed.canonical,
        scheme: SCHEME.into(),
        signer: sealed.signed.signer.map(|a| a.to_string()),
        signature: sealed.signed.signature,
        note: note.into(),
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
    use serde_json::json;

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
