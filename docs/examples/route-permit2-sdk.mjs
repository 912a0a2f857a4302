// A gasless route in the `permit2` mode with the Uniswap permit2-sdk and
// ethers v5 (`npm install @uniswap/permit2-sdk ethers@5`):
//
//   RELAY_URL=http://127.0.0.1:8787 PRIVATE_KEY=0x… node route-permit2-sdk.mjs
//
// One signature: a Permit2 `PermitTransferFrom` whose spender is the
// relayer. The wallet must have approved Permit2 for the token once (as
// every Permit2 flow needs). Prints {id, status, signatures}.
import { createRequire } from "node:module";

// The permit2-sdk's ESM build imports files without extensions, which
// Node refuses; its CommonJS build loads as is.
const require = createRequire(import.meta.url);
const { SignatureTransfer } = require("@uniswap/permit2-sdk");
const { Wallet } = require("ethers");

const base = process.env.RELAY_URL ?? "http://127.0.0.1:8787";
const wallet = new Wallet(process.env.PRIVATE_KEY);
const chainId = 8453;
const amount = process.env.AMOUNT ?? "2000000";

async function call(path, body) {
  const r = await fetch(base + path, body && {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await r.json();
  if (!r.ok) throw new Error(`${path}: ${answer.errorCode}: ${answer.error}`);
  return answer;
}

// Who spends (the relayer), where Permit2 is, and the token.
const info = await call(`/api/gasless/info?chainId=${chainId}`);
const chain = info.gaslessChains[String(chainId)];
const usdc = info.acceptedTokens.find((t) => t.symbol === "USDC").chains[String(chainId)];

const permit = {
  permitted: { token: usdc, amount },
  spender: chain.relayer,
  nonce: String(Date.now()), // any unused Permit2 nonce of this wallet
  deadline: String(Math.floor(Date.now() / 1000) + 600),
};
const { domain, types, values } = SignatureTransfer.getPermitData(permit, chain.permit2, chainId);
const signature = await wallet._signTypedData(domain, types, values);

const receipt = await call("/api/route/execute", {
  fromChain: chainId, toChain: 42161, fromToken: "USDC", toToken: "USDC", amount,
  // live: true moves funds; without it a route the float lane (or a
  // non-EVM leg) would run is a dry run (spec §4.2): status DRY, with the
  // transactions it would send.
  toAddress: process.env.TO ?? wallet.address, mode: "permit2", live: true,
  permit2: { owner: wallet.address, permitted: permit.permitted, nonce: permit.nonce, deadline: permit.deadline, signature },
});

// Poll the receipt until it is terminal (for at most five minutes).
let last = receipt;
const until = Date.now() + Number(process.env.WAIT_MS ?? 300_000);
while (!["DONE", "FAILED", "DRY"].includes(last.status) && Date.now() < until) {
  await new Promise((r) => setTimeout(r, 500));
  last = await call(`/api/route/status?id=${receipt.id}`);
}
console.log(JSON.stringify({ id: receipt.id, status: last.status, signatures: 1, receipt: last }));
