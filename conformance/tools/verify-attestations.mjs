#!/usr/bin/env node
// Verifies quote attestations (scheme relay-quote-v2) independently of the
// host: viem for keccak-256 and the EIP-191 signature, OpenZeppelin's
// merkle-tree for the proof:
//   node verify-attestations.mjs <tools dir> <attestations.json> <relayer address>
// For each attestation in the file's array: the documented text rebuilt
// from `terms` hashes to `hash`; `SimpleMerkleTree.verify(root, hash,
// proof)`; the relayer's personal signature of the 32-byte `root`.
// Prints "OK <attestations> <signatures>" and exits 0, or prints why and
// exits 1.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [toolsDir, path, relayer] = process.argv.slice(2);
const require = createRequire(join(toolsDir, "package.json"));
const { verifyMessage, keccak256, stringToBytes } = require("viem");
const { SimpleMerkleTree } = require("@openzeppelin/merkle-tree");

function fail(why) {
  console.log(`FAILED ${why}`);
  process.exit(1);
}

const KEYS = ["fromChain", "toChain", "fromToken", "toToken", "amount", "rail", "lane",
  "estimated", "minOut", "recipient", "member", "expiresAt"];

function text(terms) {
  const value = (k) => {
    const v = terms[k];
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v.toLowerCase() : String(v);
  };
  return ["relay-quote-v2", ...KEYS.map((k) => `${k}=${value(k)}`)].join("\n");
}

const attestations = JSON.parse(readFileSync(path, "utf8"));
const signatures = new Set();
for (const [i, a] of attestations.entries()) {
  if (a.scheme !== "relay-quote-v2") fail(`${i}: scheme ${a.scheme}`);
  if (keccak256(stringToBytes(text(a.terms))) !== a.hash) fail(`${i}: hash`);
  if (!SimpleMerkleTree.verify(a.root, a.hash, a.proof)) fail(`${i}: proof`);
  const signed = await verifyMessage({
    address: relayer,
    message: { raw: a.root },
    signature: a.signature,
  });
  if (!signed) fail(`${i}: signature`);
  signatures.add(a.signature);
}
console.log(`OK ${attestations.length} ${signatures.size}`);
