#!/usr/bin/env node
// Renders PoolVerifier.sol, the privacy pool's Groth16 verifier, from snarkjs' own Solidity
// template (<repo>/.tools/node_modules/snarkjs/templates/verifier_groth16.sol.ejs, snarkjs
// 0.7.6, installed by conformance/devnet/tools/install.sh) and host/pool/keys/verification_key.json —
// the verifying key of Semaphore's depth-20 circuit exactly as semaphore-rs 0.6 ships it
// (`relay pool vk` prints it; relay-pool's tests check the committed file against the crate).
// This is what `snarkjs zkey export solidityverifier` does, from the key instead of a .zkey
// (semaphore-rs ships the proving key in arkworks' format, not snarkjs'). Only the contract's
// name changes. Then run build.mjs.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = resolve(here, "../../../.tools/node_modules");
const require = createRequire(join(modules, "snarkjs", "package.json"));
const ejs = require("ejs");
const template = readFileSync(join(modules, "snarkjs/templates/verifier_groth16.sol.ejs"), "utf8");
const vk = JSON.parse(readFileSync(join(here, "../../../host/pool/keys/verification_key.json"), "utf8"));
if (vk.protocol !== "groth16" || vk.curve !== "bn128" || vk.nPublic !== 4 || vk.IC.length !== 5) {
  throw new Error("host/pool/keys/verification_key.json is not a 4-input BN254 Groth16 key");
}
const source = ejs
  .render(template, vk)
  .replace("contract Groth16Verifier {", "/// The privacy pool's verifier: Semaphore depth 20 (rendered by pool-verifier.mjs).\ncontract PoolVerifier {");
writeFileSync(join(here, "PoolVerifier.sol"), source);
console.log("PoolVerifier.sol rendered");
