// An independent implementation of Privacy Pass type 2 (publicly verifiable,
// blind RSA-2048, RFC 9578 §6) for relay's Plus-pass interop tests:
// @cloudflare/privacypass-ts 0.8.1, nobody here wrote it.
//
//   node privacypass-interop.mjs <node_modules dir> <command> [args…]
//
// Commands (base64url without padding out, padded accepted in; one JSON object out):
//   claim <baseUrl> <count>   reads the issuer directory, asks its first token-key
//                             for <count> tokens, finalizes them: {tokens}, or
//                             {status, body} when the claim is refused
//   verify <tokenKey> <token> {ok}: token_key_id = SHA-256(tokenKey) and the
//                             library's Origin.verify
//   selftest                  key pair, challenge, request, issue, finalize and
//                             verify, all by the library: {ok, tokenKey, challenge, token}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modules, command, ...args] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(`${modules}/node_modules/${name}/${entry(name)}`).href);

function entry(name) {
  const pkg = JSON.parse(readFileSync(`${modules}/node_modules/${name}/package.json`, "utf8"));
  return pkg.module ?? pkg.main ?? "index.js";
}

const toB64 = (b) => Buffer.from(b).toString("base64url");
// A fresh copy: the library's deserializers read `bytes.buffer` from offset 0,
// which a pooled Buffer does not start at.
function b64(s) {
  const bytes = new Uint8Array(Buffer.from(s, "base64url"));
  if (toB64(bytes) !== s.replace(/=+$/, "")) throw new Error(`not base64url: ${s}`);
  return bytes;
}
const equal = (a, b) => Buffer.from(a).equals(Buffer.from(b));
const sha256 = async (b) => new Uint8Array(await crypto.subtle.digest("SHA-256", b));
const TOKEN_LENGTH = 2 + 32 + 32 + 32 + 256;
const pp = await load("@cloudflare/privacypass-ts");
const { Token, TokenChallenge, util } = pp;
const { BLIND_RSA, BlindRSAMode, Client, Issuer, Origin, TokenRequest, TokenResponse, getPublicKeyBytes } =
  pp.publicVerif;
// RFC 9578's type 2 is RSABSSA-SHA384-PSS-Deterministic: salt length 48.
const MODE = BlindRSAMode.PSS;

async function json(res) {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const commands = {
  async claim(baseUrl, count) {
    const base = baseUrl.replace(/\/+$/, "");
    const res = await fetch(`${base}/api/messages/v2/passes/issuer`);
    const directory = await json(res);
    if (res.status !== 200) throw new Error(`issuer directory: ${res.status} ${JSON.stringify(directory)}`);
    const key = directory["token-keys"][0];
    if (key["token-type"] !== BLIND_RSA.value) throw new Error(`token-type ${key["token-type"]}`);
    const tokenKey = b64(key["token-key"]);
    const challengeBytes = b64(directory.challenge);
    const challenge = TokenChallenge.deserialize(challengeBytes);
    if (challenge.tokenType !== BLIND_RSA.value) throw new Error(`challenge token_type ${challenge.tokenType}`);
    // The client digests its own re-serialization, not the bytes received.
    if (!equal(challenge.serialize(), challengeBytes)) throw new Error("challenge does not re-serialize");
    // A Client keeps the state of its latest request only: one per token.
    const clients = Array.from({ length: Number(count) }, () => new Client(MODE));
    const tokenRequests = [];
    for (const client of clients) {
      tokenRequests.push(toB64((await client.createTokenRequest(challenge, tokenKey)).serialize()));
    }
    const answer = await fetch(base + directory["issuer-request-uri"], {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tokenRequests }),
    });
    const body = await json(answer);
    if (answer.status !== 200) return { status: answer.status, body };
    const responses = body.tokenResponses;
    if (responses.length !== clients.length) throw new Error(`${responses.length} token responses`);
    const tokens = [];
    for (const [i, client] of clients.entries()) {
      // finalize checks the unblinded signature against the key; throws if bad.
      tokens.push(toB64((await client.finalize(new TokenResponse(b64(responses[i])))).serialize()));
    }
    return { tokens };
  },
  async verify(tokenKeyB64, tokenB64) {
    const tokenKey = b64(tokenKeyB64);
    // importKey refuses the id-RSASSA-PSS OID: the library rewrites it to rsaEncryption.
    const publicKey = await crypto.subtle.importKey(
      "spki", util.convertRSASSAPSSToEnc(tokenKey), BLIND_RSA.rsaParams, true, ["verify"]);
    const bytes = b64(tokenB64);
    if (bytes.length !== TOKEN_LENGTH) return { ok: false };
    let token;
    try {
      token = Token.deserialize(BLIND_RSA, bytes); // throws on another token_type
    } catch {
      return { ok: false };
    }
    // Origin.verify checks the authenticator only, not which key the token names.
    if (!equal(token.authInput.tokenKeyId, await sha256(tokenKey))) return { ok: false };
    return { ok: await new Origin(MODE).verify(token, publicKey) };
  },
  async selftest() {
    const { publicKey, privateKey } = await Issuer.generateKey(MODE, {
      modulusLength: 2048,
      publicExponent: Uint8Array.from([1, 0, 1]),
    });
    const issuer = new Issuer(MODE, "relay-selftest", privateKey, publicKey);
    const tokenKey = await getPublicKeyBytes(publicKey); // SPKI with id-RSASSA-PSS
    const origin = new Origin(MODE);
    const challenge = origin.createTokenChallenge("relay-selftest", new Uint8Array(0));
    const client = new Client(MODE);
    // Through the wire forms, as claim sends and receives them.
    const request = toB64((await client.createTokenRequest(challenge, tokenKey)).serialize());
    const response = toB64((await issuer.issue(TokenRequest.deserialize(BLIND_RSA, b64(request)))).serialize());
    const token = await client.finalize(new TokenResponse(b64(response)));
    const keyId = await sha256(tokenKey);
    const tokenB64 = toB64(token.serialize());
    const ok =
      b64(request).length === 3 + 256 &&
      b64(request)[2] === keyId[31] &&
      equal(await issuer.tokenKeyID(), keyId) &&
      equal(token.authInput.challengeDigest, await sha256(challenge.serialize())) &&
      (await issuer.verify(token)) &&
      (await commands.verify(toB64(tokenKey), tokenB64)).ok;
    return { ok, tokenKey: toB64(tokenKey), challenge: toB64(challenge.serialize()), token: tokenB64 };
  },
};

const run = commands[command];
if (!run) {
  console.error(`unknown command ${command}`);
  process.exit(1);
}
try {
  process.stdout.write(JSON.stringify(await run(...args)) + "\n");
} catch (err) {
  console.error(err);
  process.exit(1);
}
