#!/usr/bin/env node
// Compiles the devnet's Solidity offline with solcjs from <repo>/.tools/node_modules/solc
// (installed by conformance/devnet/tools/install.sh) and writes
//   conformance/devnet/artifacts/<Contract>.json   {contractName, abi, bytecode, deployedBytecode}
//   conformance/devnet/artifacts/SOURCES.sha256    sha256 of every input, the solc version
//                                                  and every artifact
// Imports of `@openzeppelin/contracts/...` resolve offline from <repo>/.tools/node_modules
// (the exact version OZ_VERSION, installed by the same install.sh).
// `node build.mjs --check` recomputes the hashes without compiling (solc not needed) and exits
// non-zero when the sources, the build script or the artifacts changed since the last build.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const SOLC_VERSION = "0.8.28";
const OZ_VERSION = "5.1.0";
const POSEIDON_VERSION = "0.0.5";
// Where PoseidonT3 lives: poseidon-solidity's deterministic deployment address on every chain
// (its README); the devnet puts the library's code there, and PrivacyPool links against it.
const POSEIDON_T3 = "0x3333333C0A88F9BE4fd23ed0536F9B6c427e3B93";
// The contracts that get an artifact (abstract contracts and interfaces do not).
const CONTRACTS = [
  "Permit2",
  "TestToken",
  "MessageTransmitter",
  "TokenMessenger",
  "BridgeDeposit",
  "Membership",
  "RelayRouter",
  "TestWallet",
  "PriceFeed",
  "RelayDelegate",
  "YieldVault",
  "PoseidonT3",
  "PoolVerifier",
  "PrivacyPool",
  "RelayerAccount",
];
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "prague",
  metadata: { bytecodeHash: "none" },
  libraries: { "poseidon-solidity/PoseidonT3.sol": { PoseidonT3: POSEIDON_T3 } },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const artifactsDir = resolve(here, "../artifacts");
const manifestPath = join(artifactsDir, "SOURCES.sha256");

const sha256 = (data) => createHash("sha256").update(data).digest("hex");
const sourceFiles = () => readdirSync(here).filter((f) => f.endsWith(".sol")).sort();

function manifest() {
  const lines = [`# solc ${SOLC_VERSION}`, `# @openzeppelin/contracts ${OZ_VERSION}`, `# poseidon-solidity ${POSEIDON_VERSION}`, `# settings ${JSON.stringify(SETTINGS)}`];
  for (const f of [...sourceFiles(), "build.mjs", "pool-verifier.mjs", "../../../host/pool/keys/verification_key.json"]) {
    lines.push(`${sha256(readFileSync(join(here, f)))}  contracts/${f}`);
  }
  for (const c of CONTRACTS) {
    const p = join(artifactsDir, `${c}.json`);
    lines.push(`${existsSync(p) ? sha256(readFileSync(p)) : "missing"}  artifacts/${c}.json`);
  }
  return lines.join("\n") + "\n";
}

function check() {
  const want = manifest();
  const have = existsSync(manifestPath) ? readFileSync(manifestPath, "utf8") : "";
  if (want !== have) {
    console.error("devnet artifacts are stale: run `node conformance/devnet/contracts/build.mjs`");
    process.exit(1);
  }
  console.log("devnet artifacts match their sources");
}

function loadSolc() {
  const solcDir = join(repo, ".tools/node_modules/solc");
  if (!existsSync(solcDir)) {
    console.error("solc not found in .tools/: run conformance/devnet/tools/install.sh");
    process.exit(1);
  }
  const solc = createRequire(import.meta.url)(solcDir);
  if (!solc.version().startsWith(`${SOLC_VERSION}+`)) {
    console.error(`solc ${solc.version()} found, ${SOLC_VERSION} wanted: run conformance/devnet/tools/install.sh`);
    process.exit(1);
  }
  return solc;
}

// Resolves `@openzeppelin/contracts/...` and `poseidon-solidity/...` imports from
// .tools/node_modules (never the network).
function findImports(path) {
  const file = join(repo, ".tools/node_modules", path);
  const known = ["@openzeppelin/contracts/", "poseidon-solidity/"].some((p) => path.startsWith(p));
  if (!known || !existsSync(file)) {
    return { error: `import ${path} not found in .tools/node_modules` };
  }
  return { contents: readFileSync(file, "utf8") };
}

function checkPackage(name, version) {
  const manifestFile = join(repo, ".tools/node_modules", name, "package.json");
  const have = existsSync(manifestFile) ? JSON.parse(readFileSync(manifestFile, "utf8")).version : "none";
  if (have !== version) {
    console.error(`${name} ${have} found, ${version} wanted: run conformance/devnet/tools/install.sh`);
    process.exit(1);
  }
}

function build() {
  const solc = loadSolc();
  checkPackage("@openzeppelin/contracts", OZ_VERSION);
  checkPackage("poseidon-solidity", POSEIDON_VERSION);
  const sources = Object.fromEntries(sourceFiles().map((f) => [f, { content: readFileSync(join(here, f), "utf8") }]));
  const input = { language: "Solidity", sources, settings: SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const e of output.errors ?? []) console.error(e.formattedMessage);
  if (errors.length > 0) process.exit(1);

  mkdirSync(artifactsDir, { recursive: true });
  for (const name of CONTRACTS) {
    const file = Object.keys(output.contracts).find((f) => output.contracts[f][name]);
    if (!file) throw new Error(`contract ${name} not found in the compiler output`);
    const c = output.contracts[file][name];
    const artifact = {
      contractName: name,
      sourceName: file.includes("/") ? file : `contracts/${file}`,
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
    };
    writeFileSync(join(artifactsDir, `${name}.json`), JSON.stringify(artifact, null, 2) + "\n");
    console.log(`${name}: ${c.evm.deployedBytecode.object.length / 2} bytes`);
  }
  writeFileSync(manifestPath, manifest());
}

if (process.argv.includes("--check")) check();
else build();
