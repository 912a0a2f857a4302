// The route explorer (host/api/src/explorer.rs): finds a route by id,
// transaction hash or address and shows what the host's answers hold.
// The public page shows a route in full only by its id; the operator's
// (/admin/explorer) searches every field and shows everything.
"use strict";

const operator = document.body.dataset.mode === "operator";
const $ = (id) => document.getElementById(id);

function say(text) {
  $("message").textContent = text;
}

async function getJson(path) {
  const r = await fetch(path, { credentials: "same-origin", headers: { accept: "application/json" } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || `${r.status}`);
  return body;
}

// `amount` (smallest units) in whole tokens of `decimals`, exact (string
// arithmetic: no float), e.g. 1462224 at 6 → "1.462224".
function units(amount, decimals) {
  const raw = String(amount ?? "");
  if (!/^-?\d+$/.test(raw) || decimals == null) return raw;
  const neg = raw.startsWith("-");
  const digits = (neg ? raw.slice(1) : raw).padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return (neg ? "-" : "") + whole + (frac ? "." + frac : "");
}

function when(ms) {
  return ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "";
}

// One table row; each cell labelled by its column, so it reads stacked on a phone.
function row(table, cells) {
  const labels = [...table.tHead.rows[0].cells].map((c) => c.textContent);
  const tr = document.createElement("tr");
  cells.forEach((cell, i) => {
    const td = document.createElement("td");
    td.dataset.label = labels[i] || "";
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell == null ? "" : String(cell);
    if (cell && cell.mono) td.className = "mono";
    // a message row (fewer cells than columns) spans the rest
    if (i === cells.length - 1) td.colSpan = labels.length - i;
    tr.append(td);
  });
  table.tBodies[0].append(tr);
}

function mono(text) {
  const s = new String(text == null ? "" : text);
  s.mono = true;
  return s;
}

function clear(table) {
  table.tBodies[0].replaceChildren();
}

function facts(dl, pairs) {
  dl.replaceChildren();
  for (const [k, v, cls] of pairs) {
    if (v == null || v === "") continue;
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = String(v);
    if (cls) dd.className = cls;
    dl.append(dt, dd);
  }
}

function routeLink(id) {
  const a = document.createElement("a");
  a.href = `?q=${encodeURIComponent(id)}`;
  a.textContent = id;
  a.addEventListener("click", (e) => {
    e.preventDefault();
    $("q").value = id;
    find(id);
  });
  return a;
}

function showFound(answer) {
  const table = $("found-table");
  const head = table.tHead.rows[0];
  const cols = operator
    ? ["Route", "Status", "Rail", "Lane", "Amount", "Sender", "Recipient", "Created"]
    : ["Lane", "Asset", "Rail", "Status", "When", "Size"];
  head.replaceChildren(...cols.map((c) => Object.assign(document.createElement("th"), { scope: "col", textContent: c })));
  clear(table);
  for (const r of answer.routes) {
    if (operator) {
      row(table, [routeLink(r.id), r.status, r.rail, `${r.fromChain} → ${r.toChain}`, `${r.amount} ${r.fromToken}`, mono(r.sender), mono(r.recipient), when(r.createdMs)]);
    } else {
      row(table, [r.lane, r.asset, r.rail, r.status, r.when, r.size]);
    }
  }
  $("found").hidden = answer.routes.length === 0;
}

async function section(name, load, render) {
  try {
    render(await load());
  } catch (e) {
    render(null, e.message);
  }
}

async function showRoute(id) {
  $("route").hidden = false;
  $("route-title").textContent = `Route ${id}`;
  const q = encodeURIComponent(id);
  let dec = { from: null, to: null };
  await section("timeline", () => getJson(`/api/route/timeline?id=${q}`), (t, err) => {
    clear($("stages"));
    clear($("txs"));
    if (!t) return row($("stages"), [`not available: ${err}`]);
    dec = t.decimals;
    for (const s of t.stages) {
      const after = Math.max(0, (s.atMs - t.createdMs) / 1000).toFixed(1) + " s";
      row($("stages"), [s.event, s.status, when(s.atMs), after]);
    }
    for (const x of t.transactions) row($("txs"), [x.step, x.chain, mono(x.hash || "(not sent)"), x.state]);
    if (!t.transactions.length) row($("txs"), ["none sent by the relayer"]);
  });
  const src = (a) => units(a, dec.from);
  const dst = (a) => units(a, dec.to);
  await Promise.all([
    section("receipt", () => getJson(`/api/route/status?id=${q}`), (r, err) => {
      facts($("summary"), r ? [
        ["Status", r.status, r.status], ["Stage", r.stage], ["Rail", r.bridge],
        ["From", `${src(r.from.amount)} ${r.from.token} on ${r.from.chain}`],
        ["To", r.to && `${dst(r.to.estimated)} ${r.to.token} on ${r.to.chain} (at least ${dst(r.to.min)})`],
        ["Recipient", r.to && r.to.recipient, "mono"],
        ["Bridged", `${src(r.bridged)} ${r.from.token}`], ["Route fee", `${src(r.relayFee)} ${r.from.token}`],
        ["Gas fee", `${src(r.gasFee)} ${r.from.token}`],
        ["Source transaction", r.srcTx, "mono"], ["Destination transaction", r.destTx, "mono"],
        ["Failure", r.failure && `${r.failure.code}: ${r.failure.message}`, "failed"],
      ] : [["Receipt", `not available: ${err}`]]);
    }),
    section("fees", () => getJson(`/api/forensics/fee?id=${q}`), (f, err) => {
      clear($("fees"));
      $("fees-note").textContent = f
        ? `${src(f.amountIn)} ${f.token} in, ${src(f.amountOutInSource)} ${f.token} out; ${src(f.withheld)} ${f.token} withheld${f.sumsExactly ? ", summing exactly" : ""}.`
        : `not available: ${err}`;
      for (const l of f ? f.lines : []) row($("fees"), [l.kind, l.by, `${src(l.amount)} ${f.token}`, l.note]);
    }),
    section("why", () => getJson(`/api/route/why?id=${q}`), (w, err) => {
      clear($("why"));
      $("why-note").textContent = w ? w.summary : `not available: ${err}`;
      const rails = w ? [w.winner, ...w.beaten].filter(Boolean) : [];
      for (const r of rails) row($("why"), [r.rail, r.rank ?? "", dst(r.estOut), dst(r.shortBy), r.passedOver ? "yes" : "no"]);
    }),
    section("outcome", () => getJson(`/api/outcome/verify?id=${q}`), (o, err) => {
      facts($("outcome"), o ? [
        ["Verdict", o.verdict, o.verdict], ["Reasons", (o.reasons || []).join("; ")],
        ["Checked", when(o.checkedAt)], ["Transactions read", (o.transactions || []).length],
      ] : [["Verdict", `not available: ${err}`]]);
    }),
  ]);
}

async function find(q) {
  q = q.trim();
  history.replaceState(null, "", `?q=${encodeURIComponent(q)}`);
  $("route").hidden = true;
  $("found").hidden = true;
  say("Searching…");
  try {
    const base = operator ? "/admin/api/explorer/find" : "/api/explorer/find";
    const answer = await getJson(`${base}?q=${encodeURIComponent(q)}`);
    const n = answer.routes.length;
    if (n === 0) return say(`No route found for that ${answer.kind}.`);
    const full = operator || answer.kind === "id";
    say(full ? `${n} route${n > 1 ? "s" : ""} found.` : `${n} route${n > 1 ? "s" : ""} found: ${answer.note}.`);
    showFound(answer);
    if (full && n === 1) await showRoute(answer.routes[0].id);
  } catch (e) {
    say(`Not found: ${e.message}`);
  }
}

async function recent() {
  try {
    const feed = await getJson("/api/routes/recent?limit=10");
    clear($("recent-table"));
    for (const r of feed.routes) row($("recent-table"), [r.lane, r.asset, r.rail, r.status, r.when, r.size]);
  } catch (e) {
    row($("recent-table"), [`not available: ${e.message}`]);
  }
}

$("mode-note").textContent = operator
  ? "Operator: search by route id, any transaction hash, or a sender or recipient address; every route found is shown in full."
  : "Find your route by its id to see every stage, transaction, fee and the on-chain check. Found by a transaction or an address, a route shows only what the public feed shows.";
$("search").addEventListener("submit", (e) => {
  e.preventDefault();
  find($("q").value);
});
recent();
const start = new URLSearchParams(location.search).get("q");
if (start) {
  $("q").value = start;
  find(start);
}
