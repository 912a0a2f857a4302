//! relay-sealed against implementations nobody here wrote, driven through
//! `conformance/tools/sealed-interop.mjs` over pinned npm packages
//! (`conformance/tools/sealed-js.sh` installs them; `$RELAY_SEALED_JS`
//! names the directory):
//!
//! - X-Wing: the draft's known answers through the KEM `hpke` seals with
//!   (and `hpke`'s key encoding), and through `@noble/post-quantum`;
//! - the envelope: sealed by `@hpke/core` with `@hpke/hybridkem-x-wing`
//!   it opens here, and the reverse — and a whole row made in JavaScript
//!   (ScopeLift handle, `@hpke/core` envelope) is found and read by a scan;
//! - ERC-5564: stealth address, ephemeral key, view tag and stealth key
//!   equal `@scopelift/stealth-address-sdk` 0.2.2's for the same keys;
//! - ML-DSA-65: a `sig2` made by `@noble/post-quantum` verifies here, and
//!   the reverse;
//! - the witness log's RFC 6962 roots equal `pymerkle`'s (PyPI, through
//!   `conformance/tools/merkle_roots.py`; `$RELAY_PYMERKLE_PY` names the
//!   python that has it).

use std::{path::PathBuf, process::Command};

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use relay_sealed::{
    bucket, envelope,
    inner::Inner,
    message::{self, Received, Recipient, Row},
    signature::{self, DsaKey},
    stealth::{self, Keys},
};
use serde::Deserialize;
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn oracle(args: &[&str]) -> Value {
    relay_fixtures::js_oracle("sealed-interop.mjs", "@hpke/core", args)
}

fn field(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .to_string()
}

#[derive(Deserialize)]
struct Vector {
    #[serde(with = "hex::serde")]
    sk: [u8; 32],
    #[serde(with = "hex::serde")]
    pk: Vec<u8>,
    #[serde(with = "hex::serde")]
    eseed: Vec<u8>,
    #[serde(with = "hex::serde")]
    ct: Vec<u8>,
    #[serde(with = "hex::serde")]
    ss: [u8; 32],
}

const VECTORS: &str = "tests/vectors/xwing-draft.json";

#[test]
fn x_wing_matches_the_drafts_known_answers() {
    use x_wing::{Decapsulate, Decapsulator, KeyExport};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(VECTORS);
    let vectors: Vec<Vector> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("JSON");
    assert_eq!(vectors.len(), 3);
    for v in vectors {
        // the envelope's key encoding is the draft's: the seed is the key
        let sk = envelope::SecretKey::from_bytes(&v.sk).expect("a secret key");
        assert_eq!(sk.public_key().to_bytes(), v.pk);
        let dk = x_wing::DecapsulationKey::from(v.sk);
        let ek = dk.encapsulation_key();
        assert_eq!(&*ek.to_bytes(), v.pk.as_slice());
        let eseed = v.eseed.as_slice().try_into().expect("64 bytes");
        let (ct, ss) = ek.encapsulate_deterministic(eseed);
        assert_eq!(&*ct, v.ct.as_slice());
        assert_eq!(ss, v.ss);
        assert_eq!(dk.decapsulate(&ct), v.ss);
    }
}

#[test]
fn noble_x_wing_matches_the_same_known_answers() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(VECTORS);
    let said = oracle(&["xwing-vectors", path.to_str().expect("utf-8")]);
    assert_eq!(said["vectors"], 3, "{said}");
    assert_eq!(said["failures"], serde_json::json!([]), "{said}");
}

#[test]
fn an_envelope_sealed_by_hpke_js_opens_here_and_the_reverse() {
    let aad = hex::encode(b"row handle");
    let pt = hex::encode(bucket::pad(b"across implementations").expect("pad"));

    let ours = envelope::SecretKey::generate();
    let pk = hex::encode(ours.public_key().to_bytes());
    let sealed = field(&oracle(&["hpke-seal", &pk, &aad, &pt]), "envelope");
    let sealed = hex::decode(sealed).expect("hex");
    let opened = envelope::open(&ours, b"row handle", &sealed).expect("opens here");
    assert_eq!(
        bucket::unpad(&opened).expect("bucket"),
        b"across implementations"
    );
    assert!(envelope::open(&ours, b"other", &sealed).is_err());

    let theirs = oracle(&["hpke-keygen"]);
    let their_pk = hex::decode(field(&theirs, "pk")).expect("hex");
    let their_pk = envelope::PublicKey::from_bytes(&their_pk).expect("a 1216-byte key");
    let envelope =
        envelope::seal(&their_pk, b"row handle", &hex::decode(&pt).expect("hex")).expect("seal");
    let back = oracle(&[
        "hpke-open",
        &field(&theirs, "sk"),
        &aad,
        &hex::encode(envelope),
    ]);
    assert_eq!(field(&back, "pt"), pt);
}

fn fixed_keys(spend: u8, view: u8) -> Keys {
    Keys::from_bytes(&[spend; 32], &[view; 32]).expect("keys")
}

#[test]
fn stealth_handles_and_keys_equal_scopelifts() {
    for (spend, view, eph) in [(0x11, 0x22, 0x33), (0x01, 0x02, 0x03), (0x7f, 0x5a, 0xc4)] {
        let keys = fixed_keys(spend, view);
        let meta = keys.meta_address();
        let ephemeral = k256::SecretKey::from_slice(&[eph; 32]).expect("ephemeral");
        let ours = stealth::handle_with(&meta, &ephemeral);
        let theirs = oracle(&[
            "stealth",
            &meta.to_string(),
            &format!("0x{}", hex::encode([eph; 32])),
        ]);
        assert_eq!(
            field(&theirs, "stealthAddress").to_lowercase(),
            ours.address.to_string().to_lowercase()
        );
        assert_eq!(
            field(&theirs, "ephemeralPublicKey"),
            format!("0x{}", hex::encode(ours.ephemeral_public))
        );
        assert_eq!(
            field(&theirs, "viewTag"),
            format!("0x{:02x}", ours.view_tag)
        );
        assert_eq!(
            keys.check(&ours.ephemeral_public, ours.view_tag),
            Some(ours.address)
        );

        let key = oracle(&[
            "stealth-key",
            &format!("0x{}", hex::encode(ours.ephemeral_public)),
            &format!("0x{}", hex::encode(keys.spend_bytes())),
            &format!("0x{}", hex::encode(keys.view_bytes())),
        ]);
        let ours_key = keys.stealth_secret(&ours.ephemeral_public).expect("key");
        assert_eq!(
            field(&key, "key"),
            format!("0x{}", hex::encode(ours_key.to_bytes()))
        );
    }
}

#[test]
fn a_row_made_in_javascript_is_found_and_read_by_a_scan() {
    let bob = Recipient::generate();
    let mailbox = bob.mailbox();
    let ephemeral = format!("0x{}", hex::encode([0x5c; 32]));
    let handle = oracle(&["stealth", &mailbox.meta.to_string(), &ephemeral]);
    let r = hex::decode(field(&handle, "ephemeralPublicKey").trim_start_matches("0x")).expect("R");
    let r: [u8; 33] = r.try_into().expect("33 bytes");
    let tag = hex::decode(field(&handle, "viewTag").trim_start_matches("0x")).expect("tag")[0];
    let inner = Inner::text("sealed in JavaScript");
    let padded = bucket::pad(inner.encode().as_bytes()).expect("pad");
    let aad = message::row_aad(&r, tag);
    let sealed = oracle(&[
        "hpke-seal",
        &hex::encode(mailbox.kem.to_bytes()),
        &hex::encode(&aad),
        &hex::encode(&padded),
    ]);
    let row = Row {
        ephemeral_pub_key: field(&handle, "ephemeralPublicKey"),
        view_tag: field(&handle, "viewTag"),
        ct: B64.encode(hex::decode(field(&sealed, "envelope")).expect("hex")),
    };
    row.decode().expect("a valid row");
    let found = message::Reader::new(bob).scan([&row]);
    assert_eq!(found, vec![Received::Inner(Box::new(inner))]);
    assert!(message::Reader::new(Recipient::generate())
        .scan([&row])
        .is_empty());
}

#[test]
fn ml_dsa_signatures_verify_across_implementations() {
    let seed = [0x44; 32];
    let ours = DsaKey::from_seed(&seed);
    let their_pk = field(&oracle(&["mldsa-keygen", &hex::encode(seed)]), "pk");
    assert_eq!(their_pk, hex::encode(ours.public_key()));
    assert_eq!(ours.public_key().len(), signature::DSA_PUBLIC_KEY_LEN);

    let inner = Inner::text("signed in JavaScript");
    let unsigned = inner.encode();
    let ctx = hex::encode(signature::CONTEXT);
    let sig2 = field(
        &oracle(&[
            "mldsa-sign",
            &hex::encode(seed),
            &hex::encode(&unsigned),
            &ctx,
        ]),
        "sig",
    );
    let sig2 = hex::decode(sig2).expect("hex");
    assert_eq!(sig2.len(), signature::DSA_SIGNATURE_LEN);
    let wire = unsigned.replacen("}", &format!(",\"sig2\":\"{}\"}}", B64.encode(&sig2)), 1);
    let who = signature::verify(&wire, Some(&ours.public_key())).expect("verify");
    assert_eq!(who.pq, Some(true));

    let signed = signature::sign(&inner, None, Some(&ours)).expect("sign");
    let parts = signature::split(&signed).expect("split");
    assert_eq!(parts.unsigned, unsigned);
    let sig = B64.decode(parts.sig2.expect("sig2")).expect("base64");
    let ok = oracle(&[
        "mldsa-verify",
        &hex::encode(ours.public_key()),
        &hex::encode(&unsigned),
        &hex::encode(sig),
        &ctx,
    ]);
    assert_eq!(ok["ok"], true, "{ok}");
}

#[test]
fn witness_roots_equal_pymerkles() {
    use relay_sealed::witness::{binding_hash, Log};
    let python = std::env::var_os("RELAY_PYMERKLE_PY")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".tools/venv/bin/python"));
    let mut log = Log::default();
    let mut ours = Vec::new();
    let leaves: Vec<String> = (0..11)
        .map(|i| {
            let b = binding_hash(&format!("mailbox {i}"));
            log.append(b, i);
            ours.push(hex::encode(log.merkle_root()));
            hex::encode(b)
        })
        .collect();
    let out = Command::new(&python)
        .arg(repo().join("conformance/tools/merkle_roots.py"))
        .args(&leaves)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{} runs (conformance/tools/pymerkle.sh installs it): {e}",
                python.display()
            )
        });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<String> = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(theirs, ours);
}
