// An RFC 9458 client nobody in this project wrote the parts of: HPKE from
// @hpke/core (X25519) and @hpke/hybridkem-x-wing (X-Wing), Binary HTTP
// from bhttp-js, the response keys from WebCrypto's HKDF and AES-GCM. It
// sends each case of a JSON list through the oblivious relay and prints a
// JSON array, one entry per case: the outer status and sizes on the wire,
// and the inner answer.
//
//   node ohttp-client.mjs <dir holding node_modules> '<json>'
//   json = {"relay": "http://…", "cases": [{"method", "path", "body"?,
//           "kem"?: "xwing"|"x25519", "aead"?: "aes128gcm"|"chacha20poly1305",
//           "pad"?: bool (default true), "date"?: bool (default true),
//           "tamper"?: bool, "replay"?: bool}]}
import { createRequire } from "node:module";
import path from "node:path";

const [dir, json] = process.argv.slice(2);
const require = createRequire(path.join(dir, "node_modules", "x.js"));
const { CipherSuite, DhkemX25519HkdfSha256, HkdfSha256, Aes128Gcm } = require("@hpke/core");
const { XWing } = require("@hpke/hybridkem-x-wing");
const { Chacha20Poly1305 } = require("@hpke/chacha20poly1305");
const { BHttpEncoder, BHttpDecoder } = require("bhttp-js");

const REQUEST_FLOOR = 16384;
const { relay, cases } = JSON.parse(json);

/** RFC 9458 §3.1: the key configuration list (each entry length-prefixed). */
function configs(list) {
  const out = [];
  const v = new DataView(list.buffer, list.byteOffset, list.byteLength);
  for (let at = 0; at < list.length; ) {
    const len = v.getUint16(at);
    const c = list.subarray(at + 2, at + 2 + len);
    const cv = new DataView(c.buffer, c.byteOffset, c.byteLength);
    const kem = cv.getUint16(1);
    const npk = kem === 0x647a ? 1216 : 32;
    const suites = [];
    const symLen = cv.getUint16(3 + npk);
    for (let s = 0; s < symLen; s += 4) {
      suites.push([cv.getUint16(5 + npk + s), cv.getUint16(7 + npk + s)]);
    }
    out.push({ keyId: c[0], kem, pk: c.subarray(3, 3 + npk), suites });
    at += 2 + len;
  }
  return out;
}

async function bhttpRequest(c) {
  const headers = { accept: "application/json" };
  if (c.date !== false) headers.date = new Date().toUTCString();
  if (c.body !== undefined) headers["content-type"] = "application/json";
  const req = new Request(`https://relay.gateway${c.path}`, {
    method: c.method,
    headers,
    body: c.body === undefined ? undefined : JSON.stringify(c.body),
  });
  const bytes = await new BHttpEncoder().encodeRequest(req);
  if (c.pad === false) return bytes;
  const padded = new Uint8Array(Math.max(1, Math.ceil(bytes.length / REQUEST_FLOOR)) * REQUEST_FLOOR);
  padded.set(bytes);
  return padded;
}

async function hkdf(ikm, salt, info, len) {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt, info: new TextEncoder().encode(info) }, key, len * 8);
  return new Uint8Array(bits);
}

async function open(sender, enc, aead, sealed) {
  // RFC 9458 §4.4: secret = Export("message/bhttp response", max(Nn, Nk));
  // the response nonce is that long; key and nonce from HKDF over enc || nonce.
  const [nk, nn] = aead === 1 ? [16, 12] : [32, 12];
  const len = Math.max(nk, nn);
  const secret = new Uint8Array(await sender.export(new TextEncoder().encode("message/bhttp response"), len));
  const nonce = sealed.subarray(0, len);
  const salt = new Uint8Array(enc.length + len);
  salt.set(enc);
  salt.set(nonce, enc.length);
  const key = await hkdf(secret, salt, "key", nk);
  const iv = await hkdf(secret, salt, "nonce", nn);
  const ct = sealed.subarray(len);
  if (aead === 1) {
    const k = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["decrypt"]);
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, k, ct));
  }
  return new Uint8Array(await new Chacha20Poly1305().createEncryptionContext(key).open(iv, ct, new Uint8Array()));
}

async function post(body) {
  const r = await fetch(`${relay}/gateway`, {
    method: "POST",
    headers: { "content-type": "message/ohttp-req" },
    body,
  });
  return { status: r.status, type: r.headers.get("content-type"), bytes: new Uint8Array(await r.arrayBuffer()) };
}

const list = new Uint8Array(await (await fetch(`${relay}/keys`)).arrayBuffer());
const keys = configs(list);
const results = [];
for (const c of cases) {
  const wantKem = c.kem === "x25519" ? 0x0020 : 0x647a;
  const cfg = keys.find((k) => k.kem === wantKem);
  const aead = c.aead === "chacha20poly1305" ? 3 : 1;
  const suite = new CipherSuite({
    kem: wantKem === 0x647a ? new XWing() : new DhkemX25519HkdfSha256(),
    kdf: new HkdfSha256(),
    aead: aead === 1 ? new Aes128Gcm() : new Chacha20Poly1305(),
  });
  const hdr = new Uint8Array([cfg.keyId, wantKem >> 8, wantKem & 255, 0, 1, 0, aead]);
  const label = new TextEncoder().encode("message/bhttp request");
  const info = new Uint8Array(label.length + 1 + hdr.length);
  info.set(label);
  info.set(hdr, label.length + 1);
  const sender = await suite.createSenderContext({
    recipientPublicKey: await suite.kem.deserializePublicKey(cfg.pk),
    info,
  });
  const inner = await bhttpRequest(c);
  const ct = new Uint8Array(await sender.seal(inner));
  const enc = new Uint8Array(sender.enc);
  const wire = new Uint8Array(hdr.length + enc.length + ct.length);
  wire.set(hdr);
  wire.set(enc, hdr.length);
  wire.set(ct, hdr.length + enc.length);
  if (c.tamper) wire[wire.length - 20] ^= 1;
  const sends = c.replay ? [wire, wire] : [wire];
  const answers = [];
  for (const body of sends) {
    const outer = await post(body);
    const a = { outerStatus: outer.status, outerType: outer.type, requestBytes: body.length, responseBytes: outer.bytes.length };
    if (outer.status === 200) {
      const plain = await open(sender, enc, aead, outer.bytes);
      const res = new BHttpDecoder().decodeResponse(plain);
      a.innerBytes = plain.length;
      a.status = res.status;
      a.body = await res.text();
    } else {
      a.body = new TextDecoder().decode(outer.bytes);
    }
    answers.push(a);
  }
  results.push({ case: c, answers });
}
console.log(JSON.stringify(results));
