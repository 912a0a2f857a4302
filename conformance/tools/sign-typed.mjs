#!/usr/bin/env node
// Signs a prepared router intent's form with viem, as a wallet would:
//   node sign-typed.mjs <viem dir> <0x private key> <form.json>
// <form.json> is one entry of `forms` from POST /api/route/intent
// ({sign[], fill[], submitBody}). Each `sign` entry is EIP-712 typed data
// (eth_signTypedData_v4 JSON, uint256 as decimal strings); it is signed with
// viem's signTypedData and the signature put at the matching `fill` path of
// submitBody. Prints the filled body as JSON.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [viemDir, key, formPath] = process.argv.slice(2);
const require = createRequire(join(viemDir, "package.json"));
const { privateKeyToAccount } = require("viem/accounts");

// uint/int fields as BigInt, recursing through struct types.
function coerce(types, type, value) {
  if (/^u?int\d*$/.test(type)) return BigInt(value);
  const fields = types[type];
  if (!fields) return value;
  return Object.fromEntries(fields.map((f) => [f.name, coerce(types, f.type, value[f.name])]));
}

const form = JSON.parse(readFileSync(formPath, "utf8"));
const account = privateKeyToAccount(key);
const body = structuredClone(form.submitBody);
for (const [i, entry] of form.sign.entries()) {
  const { EIP712Domain, ...types } = entry.types;
  const domain = { ...entry.domain, chainId: Number(entry.domain.chainId) };
  const signature = await account.signTypedData({
    domain,
    types,
    primaryType: entry.primaryType,
    message: coerce(types, entry.primaryType, entry.message),
  });
  const path = form.fill[i].split(".");
  let at = body;
  for (const k of path.slice(0, -1)) at = at[k];
  at[path.at(-1)] = signature;
}
process.stdout.write(JSON.stringify(body));
