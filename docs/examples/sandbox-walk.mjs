// The sandbox walk: a whole route's life without a wallet, a signature or
// a token. Node 20's fetch only, nothing to install:
//
//   RELAY_URL=http://127.0.0.1:8787 node sandbox-walk.mjs
//
// Quotes a lane, executes it with `x-relay-sandbox: 1` (an `sbx_` route:
// nothing is signed, sent or stored, and it never appears in the public
// feed), then follows it over server-sent events through its stages —
// RECEIVING, SWAPPING, SENDING, COMPLETED — to DONE, about 40 s. Use it to
// build a client's progress screen before it holds any funds.
// Prints {quoted, id, stages, status}.
const base = process.env.RELAY_URL ?? "http://127.0.0.1:8787";
const route = {
  fromChain: 8453, toChain: 42161, fromToken: "USDC", toToken: "USDC",
  amount: process.env.AMOUNT ?? "5000000", // 5 USDC, in its smallest unit
  fromAddress: "0x000000000000000000000000000000000000dEaD",
  toAddress: "0x000000000000000000000000000000000000dEaD",
};

async function post(path, body, headers = {}) {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const answer = await r.json();
  if (!r.ok) throw new Error(`${path}: ${answer.errorCode}: ${answer.error}`);
  return answer;
}

// 1. Quote: what the recipient would get, from the best rail.
const quote = await post("/api/route/quote", route);

// 2. Execute in the sandbox: no signature, no funds, an `sbx_` id.
const receipt = await post("/api/route/execute", route, { "x-relay-sandbox": "1" });

// 3. Follow it: one `status` event per change, then `done`.
const stream = await fetch(`${base}/api/route/stream?id=${receipt.id}`);
const decoder = new TextDecoder();
const stages = [receipt.stage];
let buffered = "";
let last = receipt;
for await (const chunk of stream.body) {
  buffered += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = buffered.indexOf("\n\n")) >= 0) {
    const event = buffered.slice(0, end);
    buffered = buffered.slice(end + 2);
    const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("\n");
    if (!data) continue;
    last = JSON.parse(data);
    if (last.stage && last.stage !== stages.at(-1)) stages.push(last.stage);
  }
}
console.log(JSON.stringify({
  quoted: { bridge: quote.bridge, estimated: quote.to?.estimated },
  id: receipt.id, sandbox: receipt.sandbox, stages, status: last.status,
}));
