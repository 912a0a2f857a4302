// An independent verifier of the privacy lane's policy log
// (GET /api/privacy/policy), with nothing but Node's own crypto: every
// entry's hash is SHA-256 of the previous hash (32 zero bytes before the
// first) and the entry's body, its signature the policy key's Ed25519
// signature of that hash, its number the next one.
//
//   node verify-policy.mjs <base URL>     prints {ok, entries, kinds, why?}
import { createHash, createPublicKey, verify } from "node:crypto";

const base = process.argv[2];
const log = await (await fetch(`${base}/api/privacy/policy`)).json();
const key = createPublicKey({
  key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(log.publicKey, "hex").toString("base64url") },
  format: "jwk",
});
let prev = Buffer.alloc(32);
const kinds = [];
let why = null;
for (const [i, e] of log.entries.entries()) {
  const body = JSON.parse(e.body);
  const hash = createHash("sha256").update(prev).update(Buffer.from(e.body, "utf8")).digest();
  if (body.seq !== i + 1 || e.seq !== i + 1) why ??= `entry ${i + 1}: out of order`;
  if (hash.toString("hex") !== e.hash) why ??= `entry ${i + 1}: the hash does not chain`;
  if (!verify(null, hash, key, Buffer.from(e.sig, "hex"))) why ??= `entry ${i + 1}: the signature does not verify`;
  kinds.push(body.kind);
  prev = hash;
}
console.log(JSON.stringify({ ok: why === null && log.entries.length > 0, entries: log.entries.length, kinds, why }));
