#!/usr/bin/env node
// Verifies relay settlement receipts (scheme relay-receipt-v1) with viem,
// independently of the host:
//   node verify-receipts.mjs <viem dir> <receipts.json> <relayer address> <address>
// <receipts.json> is the answer of GET /api/receipts/{address}. For every
// entry: `message` is the canonical JSON of `receipt` (keys sorted, no
// whitespace), the receipt is of scheme relay-receipt-v1 and issued to
// <address>, and `signature` is the relayer's EIP-191 signature of
// `message`. Prints "OK <n>" and exits 0, or prints why and exits 1.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [viemDir, path, relayer, address] = process.argv.slice(2);
const require = createRequire(join(viemDir, "package.json"));
const { verifyMessage } = require("viem");

function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

function fail(why) {
  console.log(`FAILED ${why}`);
  process.exit(1);
}

const answer = JSON.parse(readFileSync(path, "utf8"));
if (!Array.isArray(answer.receipts)) fail("no receipts[]");
for (const [i, entry] of answer.receipts.entries()) {
  const { receipt, message, signature } = entry;
  if (canon(receipt) !== message) fail(`receipt ${i}: message is not the receipt's canonical JSON`);
  if (receipt.scheme !== "relay-receipt-v1") fail(`receipt ${i}: scheme ${receipt.scheme}`);
  if (receipt.address !== address.toLowerCase()) fail(`receipt ${i}: issued to ${receipt.address}`);
  const ok = await verifyMessage({ address: relayer, message, signature });
  if (!ok) fail(`receipt ${i}: not signed by ${relayer}`);
}
console.log(`OK ${answer.receipts.length}`);
