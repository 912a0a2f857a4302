// A gasless route with viem, start to finish: prepare, sign, execute,
// track over server-sent events. Run it where `npm install viem` ran:
//
//   RELAY_URL=http://127.0.0.1:8787 PRIVATE_KEY=0x… node route-viem.mjs
//
// The wallet needs the source token and no ETH. It signs one intent
// (the Permit2 witness); on a wallet's first route with an EIP-2612
// token it also signs a permit for Permit2 — two signatures, still no
// transaction of its own. Prints {id, status, signatures, destTx}.
import { privateKeyToAccount } from "viem/accounts";

const base = process.env.RELAY_URL ?? "http://127.0.0.1:8787";
const account = privateKeyToAccount(process.env.PRIVATE_KEY);
const amount = process.env.AMOUNT ?? "2000000"; // 2 USDC, in its smallest unit

async function post(path, body) {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await r.json();
  if (!r.ok) throw new Error(`${path}: ${answer.errorCode}: ${answer.error}`);
  return answer;
}

// 1. Prepare: every form the wallet may sign, each ready to fill.
const prepared = await post("/api/route/intent", {
  fromChain: 8453, toChain: 42161, fromToken: "USDC", toToken: "USDC", amount,
  fromAddress: account.address, toAddress: process.env.TO ?? account.address,
});
const form = prepared.forms.permit2Witness;

// 2. Sign each typed-data entry as served (uint256 values are decimal
//    strings; viem signs them as given) and put signature i at fill[i].
const body = structuredClone(form.submitBody);
for (const [i, typed] of form.sign.entries()) {
  const { EIP712Domain, ...types } = typed.types;
  const signature = await account.signTypedData({
    domain: typed.domain, types, primaryType: typed.primaryType, message: typed.message,
  });
  const path = form.fill[i].split(".");
  const parent = path.slice(0, -1).reduce((at, k) => at[k], body);
  parent[path.at(-1)] = signature;
}

// 3. Execute: the relayer pays the gas and is repaid from the amount.
const receipt = await post("/api/route/execute", body);

// 4. Track: the receipt at once, then `status` on every change and `done`
//    at the end.
const stream = await fetch(`${base}/api/route/stream?id=${receipt.id}`);
const decoder = new TextDecoder();
let buffered = "";
let last = receipt;
for await (const chunk of stream.body) {
  buffered += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = buffered.indexOf("\n\n")) >= 0) {
    const event = buffered.slice(0, end);
    buffered = buffered.slice(end + 2);
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("\n");
    if (data) last = JSON.parse(data);
  }
}
console.log(JSON.stringify({ id: receipt.id, status: last.status, signatures: form.sign.length, destTx: last.destTx }));
