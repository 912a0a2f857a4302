// Independent implementations of what relay-sealed does, for its interop
// tests (host/sealed/tests/interop.rs): nobody here wrote them.
//
//   node sealed-interop.mjs <node_modules dir> <command> [args…]
//
// Commands (hex in, one JSON object out):
//   xwing-vectors <file>          @noble/post-quantum's X-Wing against the draft's vectors
//   hpke-keygen                   @hpke/core + @hpke/hybridkem-x-wing: {sk, pk}
//   hpke-seal <pk> <aad> <pt>     {envelope}: enc || ciphertext, suite X-Wing/HKDF-SHA256/AES-256-GCM
//   hpke-open <sk> <aad> <env>    {pt}
//   stealth <metaURI> <ephemeralPriv>
//                                 @scopelift/stealth-address-sdk 0.2.2: {stealthAddress, ephemeralPublicKey, viewTag}
//   stealth-key <ephemeralPub> <spendPriv> <viewPriv>
//                                 the SDK's stealth private key: {key}
//   mldsa-keygen <seed>           @noble/post-quantum ML-DSA-65: {pk}
//   mldsa-sign <seed> <msg> <ctx> {sig}
//   mldsa-verify <pk> <msg> <sig> <ctx>
//                                 {ok}
import { register } from "node:module";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modules, command, ...args] = process.argv.slice(2);
// The stealth SDK's ESM build imports directories and extensionless files,
// which Node's resolver refuses; the hook resolves them as a bundler would.
register("./esm-extensionless.mjs", import.meta.url);
const load = (name) => import(pathToFileURL(`${modules}/node_modules/${name}/${entry(name)}`).href);

function entry(name) {
  const pkg = JSON.parse(readFileSync(`${modules}/node_modules/${name}/package.json`, "utf8"));
  return pkg.module ?? pkg.main ?? "index.js";
}

const hex = (s) => Uint8Array.from(Buffer.from(s.replace(/^0x/, ""), "hex"));
const toHex = (b) => Buffer.from(b).toString("hex");
const INFO = new TextEncoder().encode("relay/messages/v2");

async function suite() {
  const { CipherSuite, HkdfSha256, Aes256Gcm } = await load("@hpke/core");
  const { XWing } = await load("@hpke/hybridkem-x-wing");
  return new CipherSuite({ kem: new XWing(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
}

async function noble(path) {
  return import(pathToFileURL(`${modules}/node_modules/@noble/post-quantum/${path}`).href);
}

const commands = {
  async "xwing-vectors"(file) {
    const { ml_kem768_x25519: xwing } = await noble("hybrid.js");
    const vectors = JSON.parse(readFileSync(file, "utf8"));
    const failures = [];
    for (const [i, v] of vectors.entries()) {
      const { publicKey, secretKey } = xwing.keygen(hex(v.seed));
      const { cipherText, sharedSecret } = xwing.encapsulate(publicKey, hex(v.eseed));
      const back = xwing.decapsulate(cipherText, secretKey);
      if (toHex(publicKey) !== v.pk) failures.push(`${i}: pk`);
      if (toHex(cipherText) !== v.ct) failures.push(`${i}: ct`);
      if (toHex(sharedSecret) !== v.ss || toHex(back) !== v.ss) failures.push(`${i}: ss`);
    }
    return { vectors: vectors.length, failures };
  },
  async "hpke-keygen"() {
    const s = await suite();
    const kp = await s.kem.generateKeyPair();
    return {
      sk: toHex(new Uint8Array(await s.kem.serializePrivateKey(kp.privateKey))),
      pk: toHex(new Uint8Array(await s.kem.serializePublicKey(kp.publicKey))),
    };
  },
  async "hpke-seal"(pk, aad, pt) {
    const s = await suite();
    const recipientPublicKey = await s.kem.deserializePublicKey(hex(pk));
    const sender = await s.createSenderContext({ recipientPublicKey, info: INFO });
    const ct = new Uint8Array(await sender.seal(hex(pt), hex(aad)));
    return { envelope: toHex(new Uint8Array(sender.enc)) + toHex(ct) };
  },
  async "hpke-open"(sk, aad, envelope) {
    const s = await suite();
    const bytes = hex(envelope);
    const recipientKey = await s.kem.deserializePrivateKey(hex(sk));
    const recipient = await s.createRecipientContext({
      recipientKey,
      enc: bytes.slice(0, 1120),
      info: INFO,
    });
    return { pt: toHex(new Uint8Array(await recipient.open(bytes.slice(1120), hex(aad)))) };
  },
  async stealth(metaURI, ephemeralPrivateKey) {
    const sdk = await load("@scopelift/stealth-address-sdk");
    // As bytes: the SDK silently draws a random key when it does not
    // accept the one given (its check refuses a 0x-prefixed string).
    return sdk.generateStealthAddress({
      stealthMetaAddressURI: metaURI,
      schemeId: 1,
      ephemeralPrivateKey: hex(ephemeralPrivateKey),
    });
  },
  async "stealth-key"(ephemeralPublicKey, spendingPrivateKey, viewingPrivateKey) {
    const sdk = await load("@scopelift/stealth-address-sdk");
    return {
      key: sdk.computeStealthKey({ ephemeralPublicKey, spendingPrivateKey, viewingPrivateKey, schemeId: 1 }),
    };
  },
  async "mldsa-keygen"(seed) {
    const { ml_dsa65 } = await noble("ml-dsa.js");
    return { pk: toHex(ml_dsa65.keygen(hex(seed)).publicKey) };
  },
  async "mldsa-sign"(seed, msg, ctx) {
    const { ml_dsa65 } = await noble("ml-dsa.js");
    const { secretKey } = ml_dsa65.keygen(hex(seed));
    return { sig: toHex(ml_dsa65.sign(hex(msg), secretKey, { context: hex(ctx) })) };
  },
  async "mldsa-verify"(pk, msg, sig, ctx) {
    const { ml_dsa65 } = await noble("ml-dsa.js");
    return { ok: ml_dsa65.verify(hex(sig), hex(msg), hex(pk), { context: hex(ctx) }) };
  },
};

const run = commands[command];
if (!run) {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
process.stdout.write(JSON.stringify(await run(...args)) + "\n");
