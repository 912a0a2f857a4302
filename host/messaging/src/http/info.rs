//! `GET /api/messages/v2/info`: everything a client needs to seal, send,
//! publish and audit against this host (spec §4.10, §9.2).

use axum::{extract::State, Json};
use relay_errors::{ApiError, ErrorBody};
use relay_sealed::{bucket, envelope, frames, message::CT_LENS};
use serde::Serialize;
use utoipa::ToSchema;

use super::{service, Messaging, FEED_MAX, RANGE_MAX};
use crate::feed;

/// The configuration a client reads.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    /// The messaging spec's identifier: `nf2`.
    pub spec: &'static str,
    /// Its version: 5.
    pub version: u32,
    /// The paths' prefix.
    pub base: &'static str,
    /// The envelope.
    #[schema(inline)]
    pub kem: Kem,
    /// The one-time handle.
    #[schema(inline)]
    pub stealth: Stealth,
    /// Plaintext buckets, bytes.
    pub buckets: [usize; 2],
    /// A row's `ct` length per bucket, bytes.
    pub ct_bytes: [usize; 2],
    /// The longest inner one row carries; longer ones go as frames.
    pub max_inner: usize,
    /// The chunk envelope.
    #[schema(inline)]
    pub frames: Frames,
    /// The release grid, ms.
    pub release_grid_ms: u64,
    /// The host's cover traffic.
    #[schema(inline)]
    pub cover: Cover,
    /// The host's contribution to each release slot's anonymity set: the
    /// expected number of cover decoys it adds per slot.
    pub k_contribution: f64,
    /// Released rows are kept this many days.
    pub retention_days: u32,
    /// Bounds.
    #[schema(inline)]
    pub limits: Limits,
    /// Plus passes.
    #[schema(inline)]
    pub passes: Passes,
    /// Post-quantum credential types `cred/mint` issues (none yet).
    pub credentials: Vec<String>,
    /// How mailboxes are published.
    #[schema(inline)]
    pub mailbox: MailboxRules,
    /// The witness log.
    #[schema(inline)]
    pub witness: WitnessInfo,
    /// The inner's meta keys (unknown keys are ignored, never fatal).
    pub meta_keys: [&'static str; 10],
    /// A client's delivery states (no delivered or read state).
    pub delivery_states: [&'static str; 3],
}

/// HPKE with X-Wing.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Kem {
    /// `X-Wing` (ML-KEM-768 + X25519).
    pub name: &'static str,
    /// RFC 9180 mode: `base`.
    pub mode: &'static str,
    /// HPKE KEM id.
    pub kem_id: u16,
    /// HPKE KDF id (HKDF-SHA256).
    pub kdf_id: u16,
    /// HPKE AEAD id (AES-256-GCM).
    pub aead_id: u16,
    /// HPKE `info`.
    pub info: &'static str,
    /// The AEAD's associated data: this label, then the row's 33-byte `R`, then its view tag byte.
    pub aad_label: &'static str,
    /// Public key bytes.
    pub public_key_bytes: usize,
    /// Encapsulated key bytes (the start of `ct`).
    pub encapped_bytes: usize,
}

/// ERC-5564 scheme 1.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stealth {
    /// `ERC-5564`.
    pub standard: &'static str,
    /// Scheme 1: secp256k1 with view tags.
    pub scheme_id: u8,
    /// `st:eth:0x<spendPub><viewPub>`.
    pub meta_address: &'static str,
}

/// v4 frames.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Frames {
    /// `{v:4, cid, i, n, ts, p}`.
    pub v: u8,
    /// At most this many parts.
    pub max_parts: usize,
    /// Bytes of the inner per part.
    pub part_bytes: usize,
    /// The longest framed inner.
    pub max_bytes: usize,
}

/// Cover traffic.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cover {
    /// `poisson`.
    pub process: &'static str,
    /// Mean decoys per minute.
    pub decoys_per_minute: f64,
}

/// Bounds.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Sends per IP per minute without a Plus pass (the free ceiling).
    pub sends_per_minute_per_ip: u32,
    /// Sends per IP per minute in all, each one past the free ceiling
    /// spending a Plus pass.
    pub sends_per_minute_with_passes: u32,
    /// Mailbox publications per IP per day.
    pub publications_per_day_per_ip: u32,
    /// The most rows a feed page carries.
    pub feed_max: u32,
    /// The most entries a witness range carries.
    pub witness_range_max: u32,
}

/// Plus passes (Privacy Pass type 2, RFC 9578).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Passes {
    /// Whether this host issues and accepts passes.
    pub accepted: bool,
    /// The token type (2: publicly verifiable, blind RSA).
    pub token_type: u16,
    /// Passes one IP may claim per day.
    pub free_per_day: u32,
    /// Claim requests one IP may make per day.
    pub claims_per_day: u32,
    /// The most token requests one claim carries.
    pub max_per_claim: usize,
    /// The issuer directory (RFC 9578 §4): keys and challenge.
    pub issuer: &'static str,
    /// Where blinded token requests are signed.
    pub claim: &'static str,
    /// How long one issuer key signs, days (a pass is accepted for its
    /// key's epoch and the next).
    pub epoch_days: u32,
}

/// How a mailbox is published.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MailboxRules {
    /// How far `ts` may be from the host's clock, ms.
    pub max_skew_ms: u64,
    /// The text the wallet signs (EIP-191), with `{…}` for the fields
    /// (lowercase hex; `dsaPub` is `none` when absent).
    pub sign_text: &'static str,
    /// The text a relay's announcer signs (Ed25519) for
    /// `POST /api/relay/announce`.
    pub relay_announce_text: &'static str,
    /// The text a name's owner signs (EIP-191) for
    /// `POST /api/relaynames/list` (normalised name, lowercase owner).
    pub name_list_text: &'static str,
    /// The texts the owner (`release`) and the receiver (`accept`) sign
    /// for `POST /api/messages/v2/handle/transfer`.
    pub transfer_texts: [&'static str; 2],
    /// The line a sale's texts end with (both sides sign the price).
    pub transfer_price_line: &'static str,
}

/// The witness log.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WitnessInfo {
    /// The checkpoint's origin line.
    pub origin: String,
    /// The Ed25519 key heads are signed with, base64.
    pub key: String,
    /// How `r` chains.
    pub chain: &'static str,
    /// The tree.
    pub tree: &'static str,
}

const SIGN_TEXT: &str = "relay/messages/v2 mailbox\naddress: {address}\nmetaAddress: {metaAddress}\nkemPub: {kemPub}\ndsaPub: {dsaPub}\nts: {ts}";

#[utoipa::path(get, path = "/api/messages/v2/info", tag = "messages",
    summary = "Messaging v2's configuration (spec nf2, version 5), with kContribution",
    responses((status = 200, description = "OK", body = Info), (status = "default", description = "A typed error", body = ErrorBody)))]
#[tracing::instrument(skip_all)]
pub(super) async fn info(State(m): State<Messaging>) -> Result<Json<Info>, ApiError> {
    let svc = service(&m)?;
    let c = svc.config();
    Ok(Json(Info {
        spec: "nf2",
        version: 5,
        base: "/api/messages/v2",
        kem: Kem {
            name: "X-Wing",
            mode: "base",
            kem_id: envelope::KEM_ID,
            kdf_id: envelope::KDF_ID,
            aead_id: envelope::AEAD_ID,
            info: "relay/messages/v2",
            aad_label: "relay/messages/v2/row",
            public_key_bytes: envelope::PUBLIC_KEY_LEN,
            encapped_bytes: envelope::ENCAPPED_LEN,
        },
        stealth: Stealth {
            standard: "ERC-5564",
            scheme_id: 1,
            meta_address: "st:eth:0x<spendPub><viewPub>",
        },
        buckets: [bucket::SMALL, bucket::LARGE],
        ct_bytes: CT_LENS,
        max_inner: bucket::MAX_INNER,
        frames: Frames {
            v: frames::VERSION,
            max_parts: frames::MAX_PARTS,
            part_bytes: frames::PART_BYTES,
            max_bytes: frames::MAX_FRAMED,
        },
        release_grid_ms: feed::GRID_MS,
        cover: Cover {
            process: "poisson",
            decoys_per_minute: c.decoys_per_minute,
        },
        k_contribution: c.decoys_per_minute * (feed::GRID_MS as f64 / 60_000.0),
        retention_days: c.retention_days,
        limits: Limits {
            sends_per_minute_per_ip: c.free_sends_per_minute,
            sends_per_minute_with_passes: svc.ceilings.sends_per_minute,
            publications_per_day_per_ip: svc.ceilings.publications_per_day,
            feed_max: FEED_MAX,
            witness_range_max: RANGE_MAX,
        },
        passes: Passes {
            accepted: c.passes.enabled,
            token_type: 2,
            free_per_day: c.passes.free_per_day,
            claims_per_day: c.passes.claims_per_day,
            max_per_claim: crate::passes::MAX_PER_CLAIM,
            issuer: super::passes::ISSUER_PATH,
            claim: super::passes::CLAIM_PATH,
            epoch_days: c.passes.epoch_days,
        },
        credentials: vec![],
        mailbox: MailboxRules {
            max_skew_ms: c.max_skew_ms,
            sign_text: SIGN_TEXT,
            relay_announce_text: "relay/relay-directory/v1 announce\nurl: {url}\nkey: {key}\nexpires: {expires}\nts: {ts}",
            name_list_text: "relay/relaynames/v1 list\nname: {name}\nowner: {owner}\nyears: {years}\nts: {ts}",
            transfer_texts: [
                "relay/messages/v2 handle release\nname: {name}\nfrom: {from}\nto: {to}\nts: {ts}",
                "relay/messages/v2 handle accept\nname: {name}\nfrom: {from}\nto: {to}\nts: {ts}",
            ],
            transfer_price_line: "\nprice: {priceUsd} USD",
        },
        witness: WitnessInfo {
            origin: svc.witness().origin().to_string(),
            key: svc.witness().key(),
            chain: "r = SHA-256(previous r || b); r0 = 32 zero bytes; b = SHA-256(body)",
            tree: "RFC 6962 over the b values; the head is a C2SP tlog-checkpoint (Ed25519) with extension lines `chain <r>` and `directory <sha256>`",
        },
        meta_keys: ["f", "c", "r", "x", "d", "e", "z", "g", "vn", "rv"],
        delivery_states: ["pending", "sent", "failed"],
    }))
}
