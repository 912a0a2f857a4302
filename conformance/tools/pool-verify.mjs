// The privacy pool's independent checks, with code nobody here wrote:
//
//   node pool-verify.mjs <node_modules dir> verify <dir with vk.json, proof.json, public.json>
//     snarkjs 0.7.6 (npm) checks a Groth16 proof the host made against the
//     verifying key the repository commits: {"ok": true|false}
//   node pool-verify.mjs <node_modules dir> ceremony <vk.json>
//     every coordinate of the committed key appears in PSE's published
//     SemaphoreVerifier.sol (@semaphore-protocol/contracts 3.15.2, npm), the
//     ceremony's depth-20 key among its others: {"ok": …, "missing": [...]}
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, command, arg] = process.argv.slice(2);
const require = createRequire(join(modules, "node_modules", "snarkjs", "package.json"));

if (command === "verify") {
  const snarkjs = require("snarkjs");
  const read = (f) => JSON.parse(readFileSync(join(arg, f), "utf8"));
  const ok = await snarkjs.groth16.verify(read("vk.json"), read("public.json"), read("proof.json"));
  console.log(JSON.stringify({ ok }));
} else if (command === "ceremony") {
  const vk = JSON.parse(readFileSync(arg, "utf8"));
  const sol = readFileSync(
    join(modules, "node_modules", "@semaphore-protocol/contracts/base/SemaphoreVerifier.sol"),
    "utf8",
  );
  const published = new Set(sol.match(/\d{20,}/g));
  const g1 = (p) => p.slice(0, 2);
  const g2 = (p) => [...p[0], ...p[1]];
  const points = [g1(vk.vk_alpha_1), g2(vk.vk_beta_2), g2(vk.vk_gamma_2), g2(vk.vk_delta_2), ...vk.IC.map(g1)];
  const missing = points.flat().filter((n) => !published.has(n));
  console.log(JSON.stringify({ ok: missing.length === 0 && points.flat().length === 24, missing }));
} else {
  console.error("usage: pool-verify.mjs <modules> verify <dir> | ceremony <vk.json>");
  process.exit(2);
}
// snarkjs keeps worker threads for the curve: leave without waiting for them
process.exit(0);
