//! RFC 9458 Appendix A, pinned: the key configuration, the encapsulated
//! request (opened with the appendix's key by the `hpke` crate, the
//! gateway's framing read by this crate) and the Binary HTTP messages,
//! read and written the way the lane reads and writes them.

use std::io::Cursor;

use hpke::{aead::AesGcm128, kdf::HkdfSha256, kem::X25519HkdfSha256, Deserializable, OpModeR};

use crate::{client, gateway::encapsulated_key, pad};

const KEY_CONFIG: &str =
    "01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e79815500080001000100010003";
const SECRET_KEY: &str = "3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a";
const BHTTP_REQUEST: &str = "00034745540568747470730b6578616d706c652e636f6d012f";
const ENCAPSULATED_REQUEST: &str = "010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e7965e7d86b83dd440b2c0185204b4d63525";
const BHTTP_RESPONSE: &str = "0140c8";

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

#[test]
fn the_appendix_key_configuration_reads_and_writes_back() {
    let config = ohttp::KeyConfig::decode(&unhex(KEY_CONFIG)).unwrap();
    assert_eq!(hex::encode(config.encode().unwrap()), KEY_CONFIG);
    ohttp::ClientRequest::from_encoded_config(&unhex(KEY_CONFIG)).unwrap();
}

#[test]
fn the_appendix_request_opens_to_its_bhttp_which_the_gateway_reads() {
    let wire = unhex(ENCAPSULATED_REQUEST);
    let enc = encapsulated_key(&wire).unwrap();
    assert_eq!(
        &wire[..7],
        &unhex("01002000010001")[..],
        "key id, KEM, KDF, AEAD"
    );
    let mut info = b"message/bhttp request\0".to_vec();
    info.extend_from_slice(&wire[..7]);
    let sk = <X25519HkdfSha256 as hpke::Kem>::PrivateKey::from_bytes(&unhex(SECRET_KEY)).unwrap();
    let encapped = <X25519HkdfSha256 as hpke::Kem>::EncappedKey::from_bytes(enc).unwrap();
    let mut ctx = hpke::setup_receiver::<AesGcm128, HkdfSha256, X25519HkdfSha256>(
        &OpModeR::Base,
        &sk,
        &encapped,
        &info,
    )
    .unwrap();
    let plain = ctx.open(&wire[7 + enc.len()..], b"").unwrap();
    assert_eq!(hex::encode(&plain), BHTTP_REQUEST);
    // The appendix's message (truncated sections), padded as the lane pads
    // it, reads as GET https://example.com/.
    let padded = pad::pad(plain, pad::REQUEST_FLOOR);
    let msg =
        bhttp::Message::read_bhttp::<_, Cursor<&[u8]>>(&mut Cursor::new(&padded[..])).unwrap();
    let c = msg.control();
    assert_eq!(
        (c.method(), c.scheme(), c.authority(), c.path()),
        (
            Some(&b"GET"[..]),
            Some(&b"https"[..]),
            Some(&b"example.com"[..]),
            Some(&b"/"[..])
        )
    );
}

#[test]
fn the_appendix_response_reads_bare_and_padded() {
    let bare = client::decode(&unhex(BHTTP_RESPONSE)).unwrap();
    assert_eq!((bare.status, bare.body.len()), (200, 0));
    let padded = client::decode(&pad::pad(unhex(BHTTP_RESPONSE), pad::RESPONSE_FLOOR)).unwrap();
    assert_eq!((padded.status, padded.inner_len), (200, 8_192));
}
