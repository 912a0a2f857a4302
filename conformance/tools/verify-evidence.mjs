#!/usr/bin/env node
// Verifies a relay evidence bundle (format relay-evidence-v1) with viem,
// independently of the host's own verifier (`relay verify`):
//   node verify-evidence.mjs <viem dir> <bundle.json> <relayer address>
// Checks: the file is the canonical JSON of what it holds (keys sorted,
// no whitespace, one trailing newline allowed); the relayer's EIP-191
// signature of the canonical `payload`; the user's EIP-712 signature over
// `authorization.typedData` recovers to the route's sender; for a
// `verified` outcome, the destination credit is a Transfer log to the
// recipient, of at least minOut, in a successful listed receipt.
// Prints "OK <route id>" and exits 0, or prints why and exits 1.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [viemDir, path, relayer] = process.argv.slice(2);
const require = createRequire(join(viemDir, "package.json"));
const { verifyMessage, verifyTypedData, getAddress } = require("viem");

function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

function coerce(types, type, value) {
  if (/^u?int\d*$/.test(type)) return BigInt(value);
  const fields = types[type];
  if (!fields) return value;
  return Object.fromEntries(fields.map((f) => [f.name, coerce(types, f.type, value[f.name])]));
}

function fail(why) {
  console.log(`FAILED ${why}`);
  process.exit(1);
}

let text = readFileSync(path, "utf8");
if (text.endsWith("\n")) text = text.slice(0, -1);
let bundle;
try {
  bundle = JSON.parse(text);
} catch (e) {
  fail(`not JSON: ${e.message}`);
}
if (canon(bundle) !== text) fail("not canonical JSON");
if (bundle.format !== "relay-evidence-v1") fail(`format ${bundle.format}`);
if (getAddress(bundle.signer) !== getAddress(relayer)) fail(`signer ${bundle.signer}`);
const sealed = await verifyMessage({
  address: relayer,
  message: canon(bundle.payload),
  signature: bundle.signature,
});
if (!sealed) fail("relayer signature");

const { route, authorization, outcome, transactions } = bundle.payload;
if (authorization) {
  const t = authorization.typedData;
  const { EIP712Domain, ...types } = t.types;
  const ok = await verifyTypedData({
    address: route.sender,
    domain: { ...t.domain, chainId: Number(t.domain.chainId) },
    types,
    primaryType: t.primaryType,
    message: coerce(types, t.primaryType, t.message),
    signature: authorization.signature,
  });
  if (!ok) fail("user signature");
}
if (outcome.verdict === "verified") {
  const c = outcome.destinationCredit;
  const tx = transactions.find((x) => x.chain === c.chain && x.hash === c.tx);
  const log = tx?.receipt?.success && tx.receipt.logs.find((l) => l.logIndex === c.logIndex);
  const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
  if (!log || log.topics[0] !== TRANSFER) fail("destination credit log");
  const to = getAddress(`0x${log.topics[2].slice(26)}`);
  if (to !== getAddress(route.recipient)) fail("credit recipient");
  if (BigInt(log.data) < BigInt(route.minOut)) fail("credit below minOut");
}
console.log(`OK ${route.id}`);
