// The operator dashboard: renders GET /admin/api/snapshot, follows
// /admin/api/events (server-sent events) for live updates, and sends the
// rail and lane switches to the same operator path as `relay rails …`.
// Plain JavaScript, no dependencies.
"use strict";

const csrf = document.querySelector('meta[name="relay-csrf"]').content;
const $ = (id) => document.getElementById(id);
const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) =>
  ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const rendered = {};
let pending = 0;

function announce(text) {
  const a = $("announce");
  a.textContent = "";
  // A fresh text node so screen readers announce a repeat too.
  setTimeout(() => { a.textContent = text; }, 30);
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

function units(raw, decimals) {
  if (raw === null || raw === undefined) return "";
  const s = String(raw).replace(/^"|"$/g, "");
  if (!/^\d+$/.test(s) || !decimals) return s;
  const padded = s.padStart(decimals + 1, "0");
  const whole = padded.slice(0, padded.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = padded.slice(padded.length - decimals).replace(/0+$/, "");
  return frac ? whole + "." + frac : whole;
}

// Replaces a section only when its markup changed, keeping keyboard focus
// on the same control.
function put(id, html) {
  if (rendered[id] === html) return;
  rendered[id] = html;
  const el = $(id);
  const focused = document.activeElement && el.contains(document.activeElement)
    ? document.activeElement.id : null;
  el.innerHTML = html;
  labelCells(el);
  if (focused && $(focused)) $(focused).focus();
}

// Gives every cell its column's name (data-label), which a phone shows
// beside the value once a table is stacked into one card per row.
function labelCells(el) {
  for (const t of el.querySelectorAll("table")) {
    const names = t.tHead ? [...t.tHead.rows[0].cells].map((c) => c.textContent) : [];
    for (const row of t.tBodies[0].rows) {
      [...row.cells].forEach((c, i) => { c.dataset.label = names[i] || ""; });
    }
  }
}

function table(caption, head, rows, empty) {
  if (!rows.length) return `<p>${esc(empty)}</p>`;
  return `<table class="stack"><caption>${esc(caption)}</caption><thead><tr>${head
    .map((h) => `<th scope="col">${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .join("")}</tbody></table>`;
}

function healthClass(h) {
  return h === "operational" ? "ok" : h === "degraded" || h === "unknown" ? "warn" : "bad";
}

const slug = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, "_");

function switchHtml(id, label, checked, data, disabled, why) {
  return `<label class="switch" for="${id}"><input type="checkbox" role="switch" id="${id}" ${data}
    ${checked ? "checked" : ""} ${disabled ? "disabled" : ""} aria-checked="${checked}"
    aria-label="${esc(label)}"${why ? ` title="${esc(why)}"` : ""}><span aria-hidden="true">${checked ? "on" : "off"}</span></label>`;
}

function renderRails(d) {
  const rows = d.rails.map((r) => `<tr data-rail="${esc(r.id)}">
    <th scope="row">${esc(r.id)}<br><small>${esc(r.name)}</small></th>
    <td>${esc(r.packaging)} ${esc(r.version)}${r.packagings.length > 1
      ? `<br><small>installed: ${r.packagings.map((p) => esc(p.packaging) + (p.active ? " (serving)" : "")).join(", ")}</small>` : ""}</td>
    <td><span class="pill ${healthClass(r.health)}">${esc(r.health)}</span>${r.healthDetail ? `<br><small>${esc(r.healthDetail)}</small>` : ""}</td>
    <td>${r.quarantined ? `<span class="bad">quarantined: ${esc(r.quarantined)}</span>` : '<span class="ok">no</span>'}</td>
    <td>${switchHtml(`rail-${slug(r.id)}`, `Rail ${r.id} enabled`, r.enabled, `data-rail="${esc(r.id)}"`)}</td>
  </tr>`);
  put("rails-body", table(`${d.rails.length} rails installed`,
    ["Rail", "Packaging", "Health", "Quarantine", "Enabled"], rows, "No rails installed."));
  put("rejected-body", d.rejected.length ? table("Refused plugins", ["Plugin", "Why"],
    d.rejected.map((r) => `<tr><th scope="row">${esc(r.id || r.manifest)}</th><td>${esc(r.reason)}</td></tr>`), "") : "");
}

function renderLanes(d) {
  const rows = [];
  for (const r of d.rails) {
    for (const l of r.lanes) {
      const why = l.executable ? "" : (l.quoteOnlyReason || "quote-only lane");
      rows.push(`<tr><th scope="row">${esc(r.id)}</th><td><code>${esc(l.lane)}</code></td>
        <td>${esc(l.from.join(", "))} → ${esc(l.to.join(", "))}</td>
        <td>${esc(l.assets.join(", "))}</td>
        <td>${l.executable ? "executes" : `quote-only<br><small>${esc(why)}</small>`}</td>
        <td>${switchHtml(`lane-${slug(r.id)}-${slug(l.lane)}`, `executeReady of ${r.id} lane ${l.lane}`,
          l.executeReady, `data-rail="${esc(r.id)}" data-lane="${esc(l.lane)}"`, !l.executable, why)}</td></tr>`);
    }
  }
  put("lanes-body", table("Lanes of every rail", ["Rail", "Lane", "From → to", "Assets", "Kind", "executeReady"],
    rows, "No lanes."));
}

function renderChain(d) {
  const c = d.chain;
  put("float-body", table(`Float${c.floatRail ? " of rail " + c.floatRail : ""} per chain and token`,
    ["Chain", "Token", "Float", "capNow"], c.float.map((f) => `<tr><th scope="row">${esc(f.name)} (${esc(f.chain)})</th>
      <td>${esc(f.asset)}</td><td class="num">${f.float !== null ? esc(units(f.float, f.decimals)) : `<span class="bad">${esc(f.error || "unread")}</span>`}</td>
      <td class="num">${esc(units(f.capNow, f.decimals))}</td></tr>`), "No float lane loaded."));
  put("balances-body", table("The native balance per chain of the relayer and each relayer pool key", ["Chain", "Key", "Balance", "Low below", "State"],
    c.balances.map((b) => `<tr><th scope="row">${esc(b.name)} (${esc(b.chain)})</th>
      <td><code>${esc(b.key || "")}</code>${b.pool ? " (pool)" : ""}</td>
      <td class="num">${b.native !== null && b.native !== undefined ? esc(b.native) : `<span class="bad">${esc(b.error)}</span>`}</td>
      <td class="num">${esc(units(b.lowBelowWei, 18))}</td>
      <td>${b.low ? '<strong class="bad">⚠ low balance</strong>' : b.error ? '<span class="warn">unread</span>' : '<span class="ok">ok</span>'}</td></tr>`),
    "No chains configured."));
}

function renderRoutes(d) {
  const s = d.routes.byStatus;
  put("routes-status", `<div class="cards">${Object.keys(s).map((k) =>
    `<div class="card"><span>${esc(k)}</span><b>${esc(s[k])}</b></div>`).join("")}</div>`);
  put("routes-body", table("Newest routes in flight", ["Route", "Status", "Rail", "Lane", "From → to", "Amount", "Started"],
    d.routes.inFlight.map((r) => `<tr><th scope="row"><a href="/admin/explorer?q=${encodeURIComponent(r.id)}">${esc(r.id)}</a></th>
      <td>${esc(r.status)}${r.stage ? `<br><small>${esc(r.stage)}</small>` : ""}</td><td>${esc(r.rail)}</td>
      <td><code>${esc(r.lane)}</code></td><td>${esc(r.fromChain)} → ${esc(r.toChain)}</td>
      <td class="num">${esc(r.amount)} ${esc(r.fromToken)}</td><td>${esc(when(r.createdMs))}</td></tr>`),
    "No routes in flight."));
  put("doubt-body", table("Failed routes whose funds moved and were not refunded: settle each with its upstream",
    ["Route", "Failure", "Rail", "From → to", "Amount", "Started"],
    (d.routes.fundsInDoubt || []).map((r) => `<tr><th scope="row"><a href="/admin/explorer?q=${encodeURIComponent(r.id)}">${esc(r.id)}</a></th>
      <td><strong class="bad">${esc(r.code)}</strong><br><small>${esc(r.message)}</small></td><td>${esc(r.rail)}</td>
      <td>${esc(r.fromChain)} → ${esc(r.toChain)}</td>
      <td class="num">${esc(r.amount)} ${esc(r.fromToken)}</td><td>${esc(when(r.createdMs))}</td></tr>`),
    "No route's funds are in doubt."));
}

let latest = null;

function routeRow(r) {
  return `<tr><th scope="row"><a href="/admin/explorer?q=${encodeURIComponent(r.id)}">${esc(r.id)}</a></th>
    <td>${esc(r.status)}</td><td>${esc(r.rail)}</td>
    <td>${esc(r.fromChain)} → ${esc(r.toChain)}</td>
    <td class="num">${esc(r.amount)} ${esc(r.fromToken)}</td>
    <td><code>${esc(r.recipient)}</code></td><td>${esc(when(r.createdMs))}</td></tr>`;
}

// The recent routes the filters let through: a status, and a search over
// the id, the addresses, the transactions, the rail and the chains.
function renderRecent(d) {
  const status = $("recent-status").value;
  const needle = $("recent-search").value.trim().toLowerCase();
  const all = d.routes.recent || [];
  const shown = all.filter((r) => (!status || r.status === status) && (!needle ||
    [r.id, r.sender, r.recipient, r.srcTx, r.destTx, r.rail, r.fromChain, r.toChain]
      .some((v) => String(v ?? "").toLowerCase().includes(needle))));
  put("recent-body", table(`${shown.length} of ${all.length} recent routes`,
    ["Route", "Status", "Rail", "From → to", "Amount", "Recipient", "Started"], shown.map(routeRow),
    all.length ? "No recent route matches the filters." : "No finished routes yet."));
}

for (const id of ["recent-status", "recent-search"]) {
  $(id).addEventListener("input", () => {
    if (!latest) return;
    renderRecent(latest);
    announce($("recent-body").querySelector("caption")?.textContent || $("recent-body").textContent);
  });
}

function renderRest(d) {
  const w = d.webhooks;
  put("webhooks-body", `<div class="cards">
    <div class="card"><span>pending</span><b>${esc(w.pending)}</b></div>
    <div class="card"><span>retrying</span><b>${esc(w.retrying)}</b></div>
    <div class="card"><span>oldest pending</span><b>${w.oldestPendingAgeMs !== null && w.oldestPendingAgeMs !== undefined ? esc(Math.round(w.oldestPendingAgeMs / 1000)) + " s" : "—"}</b></div>
    <div class="card"><span>gave up</span><b>${esc(w.failed)}</b></div></div>`);
  const rl = d.signals.rateLimits;
  put("limits-body", `<p>${esc(rl.total)} requests refused since start${rl.lastMs ? ", last " + esc(when(rl.lastMs)) : ""}.</p>` +
    (rl.total ? table("Per route", ["Route", "Refused"], Object.entries(rl.byRoute).map(([k, v]) =>
      `<tr><th scope="row"><code>${esc(k)}</code></th><td class="num">${esc(v)}</td></tr>`), "") : ""));
  put("errors-body", table(`${d.signals.errorAnswers} error answers since start; the newest`,
    ["When", "Request", "Status", "errorCode"], d.signals.recentErrors.map((e) => `<tr><td>${esc(when(e.atMs))}</td>
      <td><code>${esc(e.method)} ${esc(e.route)}</code></td><td class="num">${esc(e.status)}</td><td>${esc(e.errorCode || "")}</td></tr>`),
    "No errors."));
  put("audit-body", table("Operator changes, newest first", ["When", "Who", "What", "Before", "After"],
    d.audit.map((a) => `<tr><td>${esc(when(a.atMs))}</td><td>${esc(a.actor)}</td>
      <td>${esc(a.action)} <code>${esc(a.rail)}${a.lane ? " " + esc(a.lane) : ""}</code></td>
      <td>${a.before ? "on" : "off"}</td><td>${a.after ? "on" : "off"}</td></tr>`), "No changes yet."));
}

function render(d) {
  $("relayer").textContent = d.relayer ? "relayer " + d.relayer : "no relayer key";
  renderRails(d);
  renderLanes(d);
  renderChain(d);
  renderRoutes(d);
  latest = d;
  renderRecent(d);
  renderRest(d);
  document.body.dataset.updated = String(d.atMs);
}

async function load() {
  const r = await fetch("/admin/api/snapshot", { credentials: "same-origin" });
  if (r.status === 401) { window.location.assign("/admin"); return; }
  render(await r.json());
}

async function send(path, body) {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-relay-csrf": csrf },
    body: JSON.stringify(body),
  });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.error || "HTTP " + r.status);
  return answer;
}

document.addEventListener("change", async (ev) => {
  const input = ev.target;
  if (!(input instanceof HTMLInputElement) || input.getAttribute("role") !== "switch") return;
  const on = input.checked;
  const { rail, lane } = input.dataset;
  input.disabled = true;
  pending++;
  try {
    if (lane) {
      await send("/admin/api/lane", { rail, lane, executeReady: on });
      announce(`executeReady of ${rail} lane ${lane} is now ${on ? "on" : "off"}`);
    } else {
      await send("/admin/api/rail", { rail, enabled: on });
      announce(`Rail ${rail} is now ${on ? "enabled" : "disabled"}`);
    }
    input.setAttribute("aria-checked", String(on));
    input.nextElementSibling.textContent = on ? "on" : "off";
  } catch (e) {
    input.checked = !on;
    announce(`Not changed: ${e.message}`);
  } finally {
    pending--;
    input.disabled = false;
    input.focus();
    await load().catch(() => {});
  }
});

$("logout").addEventListener("click", async () => {
  await fetch("/admin/logout", { method: "POST", credentials: "same-origin", headers: { "x-relay-csrf": csrf } });
  window.location.assign("/admin");
});

function follow() {
  const es = new EventSource("/admin/api/events");
  es.addEventListener("snapshot", (ev) => {
    if (pending) return;
    render(JSON.parse(ev.data));
    $("live").textContent = "live · updated " + new Date().toLocaleTimeString();
  });
  es.onopen = () => { $("live").textContent = "live"; };
  es.onerror = () => { $("live").textContent = "reconnecting…"; };
}

load().then(follow, (e) => announce("Could not load the dashboard: " + e.message));
