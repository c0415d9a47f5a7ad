// The runner's live page. Plain JS, no build step, nothing loaded from elsewhere.
// Data: /ui/events (snapshots pushed on change), /debug/* (explain, cache, actions),
// /debug/tail (the live trace stream). Views are picked by the path, so deep links work:
// /scripts/FILE, /explain/RESOURCE/NS/NAME, /queues, /informers, /tail, /indexes, /policies.
"use strict";

// TAIL_CAP bounds the tail's DOM rows (and its pause buffer): the page's memory stays flat
// whatever the event rate.
const TAIL_CAP = 500;

const state = { snap: null, canAct: false, view: "scripts", script: "", explain: null, tailPaused: false, tailHeld: [], tailMissed: 0, tailReceived: 0, firstRender: 0 };
window.jsinformerPage = state; // for the browser tests and the curious: what the page holds

// h builds an element: h("td", {class: "num"}, "text", child...). Text is never parsed as HTML.
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}
const $ = (id) => document.getElementById(id);
const fmtMs = (ms) => (ms === undefined || ms === null) ? "" : ms < 1 ? ms.toFixed(2) + " ms" : ms < 1000 ? ms.toFixed(1) + " ms" : (ms / 1000).toFixed(2) + " s";
const fmtBytes = (b) => !b ? "—" : b < 1 << 20 ? (b / 1024).toFixed(0) + " KiB" : (b / (1 << 20)).toFixed(1) + " MiB";
const fmtTime = (t) => t ? new Date(t).toLocaleTimeString() : "";
function ago(t) {
  if (!t) return "";
  const s = (new Date(t) - Date.now()) / 1000;
  return s >= 0 ? "in " + s.toFixed(1) + " s" : (-s).toFixed(1) + " s ago";
}
function toast(msg, bad) {
  const t = $("toast");
  t.textContent = msg;
  t.className = "toast" + (bad ? " err" : "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
async function act(name, body) {
  try {
    const r = await fetch("/debug/actions/" + name, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const res = await r.json().catch(() => ({ error: r.statusText }));
    if (!r.ok) throw new Error(res.error || r.statusText);
    toast(res.message || name + " done");
  } catch (e) {
    toast(name + ": " + e.message, true);
  }
}

// ---- routing -------------------------------------------------------------------------------

// decode decodes one path segment; a malformed escape (a stray %) is kept as typed rather
// than leaving the page blank.
function decode(seg) {
  try { return decodeURIComponent(seg); } catch { return seg; }
}
// explainPath is the deep link of an explain: the resource as one encoded segment (it may
// hold slashes: apps/v1/deployments), then the object's segments.
function explainPath(resource, object) {
  return "/explain/" + encodeURIComponent(resource) + "/" + object.split("/").map(encodeURIComponent).join("/");
}
function route() {
  const raw = location.pathname;
  const p = raw.split("/").map(decode).join("/");
  let view = "scripts";
  state.script = "";
  if (p.startsWith("/scripts/")) state.script = p.slice("/scripts/".length);
  else if (p.startsWith("/explain")) view = "explain";
  else if (["/queues", "/informers", "/tail", "/indexes", "/policies"].includes(p)) view = p.slice(1);
  show(view);
  if (view === "explain") {
    const parts = raw.slice("/explain/".length).split("/").filter(Boolean).map(decode);
    if (parts.length >= 2) {
      const q = parts[0] + " " + parts.slice(1).join("/");
      $("explain-q").value = q;
      explain(q, false);
    }
  }
}
function show(view) {
  state.view = view;
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.dataset.view !== view;
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.view === view);
  if (view === "tail") tailConnect(); else tailClose();
  if (view !== "explain") explainWatch(null);
  render();
}
function go(path) {
  history.pushState(null, "", path);
  route();
}
document.addEventListener("click", (e) => {
  const a = e.target.closest("a[href^='/']");
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  go(a.getAttribute("href"));
});
window.addEventListener("popstate", route);

// ---- snapshot stream -----------------------------------------------------------------------

// A browser allows 6 connections per host over HTTP/1.1, and a page kept in the back/forward
// cache keeps its streams: close them when the page is left, open them again if it comes back.
let snapES = null;
window.addEventListener("pagehide", () => {
  if (snapES) { snapES.close(); snapES = null; }
  tailClose();
  explainWatch(null);
});
window.addEventListener("pageshow", (e) => { if (e.persisted) { connect(); route(); } });

function connect() {
  const es = new EventSource("/ui/events");
  snapES = es;
  es.addEventListener("hello", (e) => { state.canAct = JSON.parse(e.data).canAct; });
  es.addEventListener("snapshot", (e) => {
    state.snap = JSON.parse(e.data);
    const c = $("conn");
    c.textContent = "live";
    c.className = "badge ok";
    render();
  });
  es.onerror = () => {
    const c = $("conn");
    c.textContent = "reconnecting";
    c.className = "badge warn";
  };
}

function render() {
  const s = state.snap;
  if (!s) return;
  const target = $("view-" + state.view);
  switch (state.view) {
    case "scripts": target.replaceChildren(...renderScripts(s)); break;
    case "informers": target.replaceChildren(...renderInformers(s)); break;
    case "queues": target.replaceChildren(...renderQueues(s)); break;
    case "indexes": renderIndexes(s, target); break;
    case "policies": target.replaceChildren(...renderPolicies(s)); break;
  }
  if (!state.firstRender) state.firstRender = performance.now();
}

// ---- scripts -------------------------------------------------------------------------------

function scriptState(sc) {
  const q = sc.queues[0];
  const cls = { serving: "ok", syncing: "warn", failed: "err", waiting: "err", stopped: "err", unloaded: "muted" }[sc.state] || "muted";
  let text = sc.state;
  if (sc.frame && sc.state === "serving") text += ", last save failed";
  if (q && q.paused) text += ", paused";
  return { text, cls: sc.frame ? "err" : q && q.paused ? "warn" : cls };
}

const handlerSum = (sc) => Object.values(sc.handlers || {}).reduce((a, c) => ({ calls: a.calls + c.calls, errors: a.errors + c.errors }), { calls: 0, errors: 0 });

function renderScripts(s) {
  const rows = s.scripts.map((sc) => {
    const st = scriptState(sc);
    const q = sc.queues[0];
    const r = sc.rates || {};
    const total = handlerSum(sc);
    return h("tr", { class: (st.cls === "err" ? "err" : "") + (sc.name === state.script ? " sel" : ""), "data-script": sc.name },
      h("td", {}, h("a", { href: "/scripts/" + sc.name }, sc.name)),
      h("td", {}, h("span", { class: "badge " + st.cls }, st.text)),
      h("td", { class: "mono" }, ((sc.versions || []).find((v) => v.state === "current") || sc).hash),
      h("td", { class: "num" }, fmtBytes(sc.memoryBytes)),
      h("td", { class: "num" }, s.rates ? r.callsPerSec.toFixed(1) : "—"),
      h("td", { class: "num" + (r.errorRate > 0 ? " err" : "") }, s.rates ? (100 * r.errorRate).toFixed(1) + " %" : "—"),
      h("td", { class: "num" }, s.rates && r.calls ? fmtMs(r.p95Ms) : "—"),
      h("td", { class: "num" }, `${total.calls} / ${total.errors}`),
      h("td", { class: "num" }, q ? q.backlog : ""),
      h("td", { class: "num" }, sc.keyCount));
  });
  const out = [];
  if (!s.ready) out.push(h("p", { class: "badge warn" }, "not ready: " + (s.notReady || "")));
  if (s.leader && s.leader.enabled) out.push(h("p", { class: "muted" }, s.leader.leading ? "leading" : "standing by; leader: " + (s.leader.holder || "none")));
  out.push(h("table", { id: "scripts" },
    h("thead", {}, h("tr", {}, ["script", "state", "version", "memory", "calls/s", "errors (1 min)", "p95 (1 min)", "calls / errors", "backlog", "keys"].map((t, i) => h("th", { class: i >= 3 ? "num" : "" }, t)))),
    h("tbody", {}, rows)));
  if (!s.rates) out.push(h("p", { class: "muted" }, "Call rates need trace recording (--trace-records)."));
  out.push(...renderPermissions((s.permissions || []).filter((p) => !state.script || p.script === state.script)));
  const shown = state.script ? s.scripts.filter((sc) => sc.name === state.script) : s.scripts;
  if (state.script && shown.length === 0) out.push(h("p", { class: "err" }, "No script " + state.script + " is loaded or has failed to load."));
  for (const sc of shown) out.push(...renderScript(sc, !state.script));
  return out;
}

// renderPermissions lists what the runner lacks of what its scripts need (the permission
// check) and the calls the API server refused, each with the command that grants it. The
// runner's own needs are named "(--leader-elect)" and the like: no script to link to.
function renderPermissions(perms) {
  if (!perms.length) return [];
  return [h("h2", {}, "Missing permissions"),
    h("table", { id: "permissions" },
      h("thead", {}, h("tr", {}, ["script", "verb", "resource", "namespace", "why", "grant with"].map((t) => h("th", {}, t)))),
      h("tbody", {}, perms.map((p) => h("tr", { class: p.refused ? "err" : "warn", "data-script": p.script },
        h("td", {}, p.script.startsWith("(") ? p.script : h("a", { href: "/scripts/" + p.script }, p.script)), h("td", { class: "mono" }, p.verb),
        h("td", { class: "mono" }, p.resource), h("td", {}, p.namespace || "all namespaces"),
        h("td", {}, p.why, p.refused ? h("span", { class: "badge err" }, ` refused ${p.refused}×`) : null),
        h("td", {}, h("code", { class: "grant" }, p.grant))))))];
}

// renderScript shows a script's failed load as a code frame and, in full, its last loads,
// versions and watches; with onlyFailing, only the frame.
function renderScript(sc, onlyFailing) {
  if (onlyFailing && !sc.frame) return [];
  const out = [h("h2", {}, h("a", { href: "/scripts/" + sc.name }, sc.name), " ", h("span", { class: "badge " + scriptState(sc).cls }, sc.state))];
  if (sc.frame) out.push(codeFrame(sc.frame));
  if (onlyFailing) return out;
  out.push(h("h3", {}, "Last loads"));
  out.push(h("table", { class: "loads" }, h("tbody", {}, (sc.loads || []).slice().reverse().map((l) => h("tr", { class: l.error ? "err" : "" },
    h("td", {}, fmtTime(l.at)), h("td", { class: "mono" }, l.hash), h("td", {}, l.result),
    h("td", { class: "num" }, l.tookSeconds ? fmtMs(1000 * l.tookSeconds) : ""), h("td", { class: "num" }, l.objects ? l.objects + " objects" : ""),
    h("td", {}, l.error ? h("pre", {}, errorText(l.error)) : ""))))));
  out.push(h("h3", {}, "Versions"));
  out.push(h("table", {}, h("tbody", {}, (sc.versions || []).map((v) => h("tr", {},
    h("td", { class: "mono" }, v.hash), h("td", {}, v.state), h("td", {}, fmtTime(v.started)),
    h("td", { class: "num" }, v.objects + " objects"), h("td", { class: "num" }, v.queued + " queued"))))));
  out.push(h("h3", {}, "Watches"));
  out.push(h("ul", {}, (sc.watches || []).map((w) => h("li", { class: "mono" }, [w.resource, w.namespace && "ns=" + w.namespace, w.labelSelector && "l=" + w.labelSelector, w.fieldSelector && "f=" + w.fieldSelector].filter(Boolean).join(" ")))));
  return out;
}

// errorText is an error with its place, unless its message already starts with it.
function errorText(e) {
  const where = e.file ? `${e.file}:${e.line}:${e.column}` : "";
  return where && !e.message.includes(where) ? where + " " + e.message : e.message;
}

// codeFrame renders a failed load's error with the source lines around its place.
function codeFrame(f) {
  const where = f.line ? `${f.file}:${f.line}:${f.column}` : f.file;
  const box = h("div", { class: "frame", "data-file": f.file, "data-line": f.line || "" },
    h("div", { class: "where" }, where && !f.message.includes(where) ? where + "  " : "", f.message),
    f.stale ? h("div", { class: "muted" }, "the file has changed since; these are its lines now") : null);
  if (f.lines && f.lines.length) {
    const pre = h("pre", {});
    for (const l of f.lines) {
      const hit = l.line === f.line;
      pre.append(h("span", { class: hit ? "hit" : "line" }, h("span", { class: "ln" }, (hit ? "> " : "  ") + l.line), l.text));
      if (hit && f.column > 0) pre.append(h("span", { class: "caret" }, h("span", { class: "ln" }, ""), " ".repeat(f.column - 1) + "^"));
    }
    box.append(pre);
  }
  return box;
}

// ---- informers -----------------------------------------------------------------------------

function renderInformers(s) {
  const rows = (s.informers || []).map((i) => {
    const warn = !i.healthy || !i.synced;
    const health = !i.healthy ? "WARN: cannot list/watch" : !i.synced ? "WARN: syncing" : "healthy";
    const scope = [i.namespace ? "ns=" + i.namespace : "all namespaces", i.labelSelector ? "l=" + i.labelSelector : "", i.fieldSelector ? "f=" + i.fieldSelector : ""].filter(Boolean).join(" ");
    return h("tr", { class: warn ? "warn" : "" },
      h("td", { class: "mono" }, i.resource), h("td", {}, scope),
      h("td", {}, i.synced ? "yes" : "no"),
      h("td", {}, h("span", { class: "badge " + (warn ? "warn" : "ok") }, health), i.lastError && !i.healthy ? h("div", { class: "err" }, i.lastError) : null),
      h("td", { class: "num" }, i.secondsSinceContact < 0 ? "never" : i.secondsSinceContact.toFixed(1)),
      h("td", { class: "num" }, i.objects),
      h("td", { class: "num" }, fmtBytes(i.bytesReceived)),
      h("td", {}, (i.scripts || []).join(", ")));
  });
  return [h("table", { id: "informers" },
    h("thead", {}, h("tr", {}, ["resource", "scope", "synced", "health", "s since contact", "objects", "received", "scripts"].map((t, i) => h("th", { class: i >= 4 && i <= 6 ? "num" : "" }, t)))),
    h("tbody", {}, rows)), ...renderSharding(s)];
}

// renderSharding is this replica's part of the shard ring (--sharded): the ring's members,
// and under --shard-cache the ranges it caches, each partitioned informer's filtering and
// each partitioned script's cached objects (docs/sharding.md).
function renderSharding(s) {
  const sh = s.shard;
  if (!sh) return [];
  const out = [h("h2", {}, "Sharding"),
    h("p", { id: "shard-ring" }, "This replica ", h("code", {}, sh.identity), sh.valid ? "" : h("span", { class: "badge warn" }, "not in the ring"),
      sh.pending ? h("span", { class: "badge warn" }, "moving") : "", ` of ${(sh.members || []).length} in the ring (generation ${sh.generation}, lease ${sh.lease}): `,
      h("span", { id: "shard-members" }, (sh.members || []).flatMap((m, i) => [i ? ", " : "", m === sh.identity ? h("strong", {}, m) : m])))];
  if ((sh.partitions || []).length) {
    out.push(h("p", { id: "shard-partitions" }, "Caches ", sh.partitions.flatMap((p, i) => [i ? "; " : "", h("code", {}, p)])));
  }
  const parts = (s.informers || []).filter((i) => i.shard);
  if (parts.length) {
    const badge = { server: "ok", client: "warn", pending: "warn" };
    out.push(h("h3", {}, "Partitioned informers"), h("table", { id: "shard-informers" },
      h("thead", {}, h("tr", {}, ["resource", "scope", "partition", "filtered by", "why", "received", "kept", "bytes"].map((t, i) => h("th", { class: i >= 5 ? "num" : "" }, t)))),
      h("tbody", {}, parts.map((i) => h("tr", { "data-mode": i.shard.mode },
        h("td", { class: "mono" }, i.resource), h("td", {}, i.namespace ? "ns=" + i.namespace : "all namespaces"),
        h("td", { class: "mono" }, i.shard.partition),
        h("td", {}, h("span", { class: "badge " + (badge[i.shard.mode] || "") }, i.shard.mode)),
        h("td", {}, i.shard.reason),
        h("td", { class: "num" }, i.shard.received), h("td", { class: "num" }, i.shard.kept),
        h("td", { class: "num" }, fmtBytes(i.bytesReceived)))))));
  }
  const cached = Object.entries(sh.cached || {}).sort(([a], [b]) => a.localeCompare(b));
  if (cached.length) {
    out.push(h("h3", {}, "Cached objects per partitioned script"), h("table", { id: "shard-cached" },
      h("thead", {}, h("tr", {}, h("th", {}, "script"), h("th", { class: "num" }, "objects on this replica"))),
      h("tbody", {}, cached.map(([script, n]) => h("tr", {}, h("td", {}, h("a", { href: "/scripts/" + script }, script)), h("td", { class: "num" }, n))))));
  }
  return out;
}

// ---- queues --------------------------------------------------------------------------------

function renderQueues(s) {
  const out = [];
  for (const sc of s.scripts) {
    for (const v of sc.queues) {
      const head = h("h2", {}, h("a", { href: "/scripts/" + sc.name }, sc.name), " ", h("span", { class: "mono muted" }, v.version), " ",
        h("span", { class: "badge " + (v.paused ? "warn" : "ok") }, v.paused ? "paused" : v.state));
      if (state.canAct) head.append(" ", v.paused
        ? h("button", { onclick: () => act("resume", { script: sc.name }) }, "Resume")
        : h("button", { onclick: () => act("pause", { script: sc.name }) }, "Pause"));
      out.push(head, h("p", {}, `backlog ${v.backlog}`));
      if (v.inFlight) {
        const f = v.inFlight;
        out.push(h("p", {}, "in flight: ", h("code", {}, f.handler), " on ", h("code", {}, f.object), " for ", fmtMs(f.elapsedMs)));
      }
      if (!v.reconcile) continue;
      const keys = v.keys || [];
      if (!keys.length) out.push(h("p", { class: "muted" }, "no reconcile keys queued"));
      else out.push(h("table", { class: "keys", "data-script": sc.name },
        h("thead", {}, h("tr", {}, ["key", "reason", "attempts", "next retry", "last error", ""].map((t) => h("th", {}, t)))),
        h("tbody", {}, keys.map((k) => h("tr", { class: k.lastError ? "err" : "", "data-key": k.key },
          h("td", { class: "mono" }, k.key, k.running ? h("span", { class: "badge ok" }, " running " + fmtMs(k.runningForMs)) : null),
          h("td", {}, k.reason), h("td", { class: "num" }, k.attempts), h("td", {}, ago(k.nextRetry)),
          h("td", {}, k.lastError ? h("pre", { class: "err" }, k.lastError) : ""),
          h("td", {}, state.canAct ? h("button", { class: "retry", onclick: () => act("retry", { script: sc.name, key: k.key }) }, "Retry") : null))))));
      if (sc.keyCount > keys.length) out.push(h("p", { class: "muted" }, `${sc.keyCount - keys.length} more keys (runner queue ${sc.name})`));
      out.push(...renderDropped(sc.name, v.dropped || []));
    }
  }
  if (!out.length) out.push(h("p", { class: "muted" }, "no scripts loaded"));
  return out;
}

// renderDropped lists the keys given up on after maxRetries, newest first.
function renderDropped(script, dropped) {
  if (!dropped.length) return [];
  return [h("h3", {}, `dropped after maxRetries (the last ${dropped.length})`),
    h("table", { class: "dropped", "data-script": script },
      h("thead", {}, h("tr", {}, ["key", "dropped", "attempts", "last error"].map((t) => h("th", {}, t)))),
      h("tbody", {}, dropped.map((d) => h("tr", { class: "err", "data-key": d.key },
        h("td", { class: "mono" }, d.key), h("td", {}, ago(d.dropped)), h("td", { class: "num" }, d.attempts),
        h("td", {}, h("pre", { class: "err" }, d.lastError))))))];
}

// ---- explain -------------------------------------------------------------------------------

function parseQuery(q) {
  const [resource, object] = q.trim().split(/\s+/);
  return { resource, object };
}
$("explain-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const q = $("explain-q").value;
  const { resource, object } = parseQuery(q);
  if (!resource || !object) { toast("explain: give RESOURCE NS/NAME, e.g. configmaps web/app-config", true); return; }
  history.pushState(null, "", explainPath(resource, object));
  explain(q, true);
});

async function explain(q, fresh) {
  const { resource, object } = parseQuery(q);
  const out = $("explain-out");
  if (fresh) out.replaceChildren(h("p", { class: "muted" }, "loading…"));
  try {
    const x = await getJSON(`/debug/explain?resource=${encodeURIComponent(resource)}&object=${encodeURIComponent(object)}`);
    out.replaceChildren(...renderExplain(x));
    explainWatch({ resource, object, q });
  } catch (e) {
    out.replaceChildren(h("p", { class: "err" }, e.message));
  }
}

// explainWatch follows the shown object on the tail and refreshes the trace when it moves.
let explainES = null;
function explainWatch(w) {
  if (explainES && (!w || explainES.key !== w.resource + " " + w.object)) { explainES.close(); explainES = null; }
  if (!w || explainES) return;
  explainES = new EventSource(`/debug/tail?resource=${encodeURIComponent(w.resource)}&object=${encodeURIComponent(w.object)}`);
  explainES.key = w.resource + " " + w.object;
  let timer = null;
  explainES.addEventListener("record", () => {
    clearTimeout(timer);
    timer = setTimeout(() => explain(w.q, false), 250);
  });
}

function renderExplain(x) {
  const out = [h("h2", {}, x.resource, " ", x.object, " ", h("span", { class: "badge " + (x.exists ? "ok" : "warn") }, x.exists ? "exists" : "not on the server"))];
  out.push(h("table", { id: "deliveries" }, h("thead", {}, h("tr", {}, ["script", "version", "state", "delivered", "cached", "why / watch"].map((t) => h("th", {}, t)))),
    h("tbody", {}, (x.deliveries || []).map((d) => h("tr", { class: d.delivered ? "" : "warn" },
      h("td", {}, d.script), h("td", { class: "mono" }, d.version || ""), h("td", {}, d.state),
      h("td", {}, d.delivered ? "yes" : "no: " + d.reason), h("td", {}, d.cached ? "yes" : "no"),
      h("td", { class: "mono" }, d.detail || (d.watch ? [d.watch.resource, d.watch.namespace, d.watch.labelSelector].filter(Boolean).join(" ") : "")))))));
  out.push(...renderObjectAudit(x.audit || []));
  if (!x.recording) out.push(h("p", { class: "warn" }, "trace recording is off (--trace-records 0)"));
  if (x.dropped) out.push(h("p", { class: "muted" }, "older records of this object were dropped (cap per object)"));
  const recs = x.records || [];
  if (!recs.length) out.push(h("p", { class: "muted" }, "no trace records for this object yet"));
  out.push(h("ol", { class: "timeline", id: "timeline" }, recs.map(renderRecord)));
  return out;
}

// admissionBad: an admission record the page marks as a failure (denied or errored).
const admissionBad = (r) => r.result === "denied" || r.result === "errored";
function admissionLines(a) {
  return [
    a.message ? h("div", { class: "sub mono" + (a.allowed ? "" : " err") }, (a.allowed ? "message: " : `denied ${a.code}: `) + a.message) : null,
    (a.warnings || []).map((w) => h("div", { class: "sub mono warn" }, "warning: " + w)),
    a.patch ? h("div", { class: "sub mono" }, "patch: " + a.patch) : null,
  ];
}
function renderAdmission(r) {
  const a = r.admission;
  const bad = admissionBad(r);
  return h("li", { class: "admission" + (bad ? " err" : ""), "data-seq": r.seq },
    h("div", {}, h("span", { class: "muted" }, fmtTime(r.time)), " ", h("strong", {}, "admission"), " ", a.operation, a.subresource ? " " + a.subresource : "",
      a.dryRun ? " (dry run)" : "", " by ", h("code", {}, a.user || "-"),
      " → ", h("a", { href: "/scripts/" + r.script }, r.script), h("span", { class: "mono muted" }, "@" + (r.version || "")),
      " → ", h("code", {}, a.webhook), " ", h("span", { class: "badge " + (bad ? "err" : r.result === "allowed" ? "ok" : "warn") }, r.result),
      " ", fmtMs(r.durationMs)),
    r.error ? h("pre", { class: "sub err" }, r.error) : null,
    admissionLines(a));
}
function renderRecord(r) {
  if (r.admission) return renderAdmission(r);
  const bad = r.result === "error" || r.result === "timeout";
  return h("li", { class: bad ? "err" : "", "data-seq": r.seq },
    h("div", {}, h("span", { class: "muted" }, fmtTime(r.time)), " ", h("strong", {}, r.event), r.initial ? " (initial)" : "",
      " → ", h("a", { href: "/scripts/" + r.script }, r.script), h("span", { class: "mono muted" }, "@" + r.version),
      r.handler ? [" → ", h("code", {}, r.handler)] : "", " ", h("span", { class: "badge " + (bad ? "err" : r.result === "ok" ? "ok" : "muted") }, r.result),
      " ", fmtMs(r.durationMs), r.attempt ? ` attempt ${r.attempt}` : ""),
    r.error ? h("pre", { class: "sub err" }, r.error) : null,
    (r.logs || []).map((l) => h("div", { class: "sub mono" }, `${l.level} ${l.message}`, l.attrs ? " " + JSON.stringify(l.attrs) : "")),
    (r.writes || []).map((w) => h("div", { class: "sub mono" + (w.error ? " err" : "") }, `write: ${w.verb} ${w.resource} ${w.namespace ? w.namespace + "/" : ""}${w.name || ""}${w.dryRun ? " (dry run)" : ""} → ${w.code}${w.error ? " " + w.error : ""}`)),
    (r.requests || []).map((q) => h("div", { class: "sub mono" + (q.error ? " err" : "") }, `fetch: ${q.method} ${q.host}${q.path} → ${q.status} ${q.durationMs.toFixed(1)} ms ${q.bytes} B${q.error ? " " + q.error : ""}`)),
    (r.store || []).map((o) => h("div", { class: "sub mono" + (o.error ? " err" : "") }, `store: ${o.op}${o.shared ? " [" + o.shared + "]" : ""} ${o.key}${o.op === "list" ? " → " + (o.count || 0) + " keys" : ""}${o.op === "get" && !o.found ? " → absent" : ""} ${o.bytes} B${o.version ? " v" + o.version : ""}${o.value ? " = " + o.value : ""}${o.error ? " " + o.error : ""}`)),
    (r.enqueued || []).length ? h("div", { class: "sub mono" }, "enqueued: " + r.enqueued.join(", ")) : null);
}

// renderObjectAudit lists each audit script's result for the explained object.
function renderObjectAudit(results) {
  if (!results.length) return [];
  return [h("h3", {}, "Audit"),
    h("table", { id: "object-audit" },
      h("thead", {}, h("tr", {}, ["script", "result", "message", "since"].map((t) => h("th", {}, t)))),
      h("tbody", {}, results.map((r) => h("tr", { class: auditRowClass(r.result), "data-script": r.script },
        h("td", {}, h("a", { href: "/scripts/" + r.script }, r.script)),
        h("td", {}, h("span", { class: "badge " + auditBadge(r.result) }, r.result)),
        h("td", { class: "mono" }, r.message || ""),
        h("td", {}, fmtDateTime(r.time))))))];
}

// ---- tail ----------------------------------------------------------------------------------

let tailES = null;
let tailFrame = 0;
function tailConnect() {
  if (tailES) return;
  const p = new URLSearchParams();
  if ($("tail-script").value.trim()) p.set("script", $("tail-script").value.trim());
  if ($("tail-object").value.trim()) p.set("object", $("tail-object").value.trim());
  $("tail-info").classList.remove("err");
  tailES = new EventSource("/debug/tail?" + p);
  tailES.addEventListener("record", (e) => {
    state.tailReceived++;
    state.tailHeld.push(JSON.parse(e.data));
    if (state.tailHeld.length > TAIL_CAP) state.tailHeld.splice(0, state.tailHeld.length - TAIL_CAP);
    if (!state.tailPaused && !tailFrame) tailFrame = requestAnimationFrame(tailFlush);
  });
  tailES.addEventListener("missed", (e) => { state.tailMissed = JSON.parse(e.data).missed; tailInfo(); });
  tailES.onerror = () => tailFailed(tailES, "/debug/tail?" + p);
}
// tailFailed: the browser retries a dropped stream by itself (CONNECTING), but gives up on an
// answer that is not a stream (404 unknown script, 409 recording off, 503 too many tails,
// 401/403) without showing it: ask again with fetch to show the server's message.
async function tailFailed(es, url) {
  if (es.readyState !== EventSource.CLOSED) { tailInfo("reconnecting…"); return; }
  if (tailES === es) tailES = null;
  const ctl = new AbortController();
  try {
    const r = await fetch(url, { headers: { Accept: "application/json" }, signal: ctl.signal });
    if (r.ok) { ctl.abort(); tailInfo("the stream ended; reload to reconnect"); return; }
    const body = await r.json().catch(() => ({ error: r.statusText }));
    tailInfo(`tail failed: ${body.error || r.statusText} (HTTP ${r.status})`);
    $("tail-info").classList.add("err");
  } catch (e) {
    tailInfo("tail failed: " + e.message);
  }
}
function tailClose() {
  if (tailES) { tailES.close(); tailES = null; }
}
// tailFlush adds the held records, newest on top, in one DOM change per frame, and trims the
// list to TAIL_CAP rows.
function tailFlush() {
  tailFrame = 0;
  const list = $("tail-list");
  const frag = document.createDocumentFragment();
  for (let i = state.tailHeld.length - 1; i >= 0; i--) frag.append(tailRow(state.tailHeld[i]));
  state.tailHeld = [];
  list.prepend(frag);
  while (list.childElementCount > TAIL_CAP) list.lastElementChild.remove();
  tailInfo();
}
function tailRow(r) {
  if (r.admission) {
    const a = r.admission;
    return h("li", { class: "admission" + (admissionBad(r) ? " err" : "") },
      `${fmtTime(r.time)} ${r.script} admission ${a.operation} ${r.object} by ${a.user || "-"} `, h("code", {}, a.webhook), ` ${r.result} ${fmtMs(r.durationMs)}`,
      r.error ? h("div", { class: "log err" }, r.error) : null, admissionLines(a));
  }
  const bad = r.result === "error" || r.result === "timeout";
  return h("li", { class: bad ? "err" : "" },
    `${fmtTime(r.time)} ${r.script} ${r.event} ${r.object} `, r.handler ? h("code", {}, r.handler) : "", ` ${r.result} ${fmtMs(r.durationMs)}`,
    r.error ? h("div", { class: "log err" }, r.error) : null,
    (r.logs || []).map((l) => h("div", { class: "log" }, `${l.level} ${l.message}`)));
}
function tailInfo(extra) {
  const n = $("tail-list").childElementCount;
  $("tail-info").textContent = `${n} shown (at most ${TAIL_CAP})` + (state.tailPaused ? `, paused: ${state.tailHeld.length} held` : "") +
    (state.tailMissed ? `, ${state.tailMissed} missed by a slow connection` : "") + (extra ? ", " + extra : "");
}
$("tail-form").addEventListener("submit", (e) => {
  e.preventDefault();
  tailClose();
  $("tail-list").replaceChildren();
  state.tailHeld = [];
  tailConnect();
});
$("tail-pause").addEventListener("click", () => {
  state.tailPaused = !state.tailPaused;
  $("tail-pause").textContent = state.tailPaused ? "Resume" : "Pause";
  if (!state.tailPaused) tailFlush();
  tailInfo();
});

// ---- indexes -------------------------------------------------------------------------------

// renderIndexes redraws the index digests, keeping the keys a click opened.
function renderIndexes(s, target) {
  const keep = target.querySelector("#index-keys");
  const out = [];
  for (const sc of s.indexes || []) {
    out.push(h("h2", {}, sc.script, " ", h("span", { class: "mono muted" }, sc.version)));
    for (const ix of sc.indexes) {
      out.push(h("h3", {}, ix.name, " ", h("span", { class: "muted" }, `${ix.distinct} values`)));
      out.push(h("div", { class: "values" }, ix.values.map((v) => h("button", { onclick: () => indexKeys(sc, ix.name, v.value) }, `${v.value} (${v.count})`)),
        ix.truncated ? h("span", { class: "muted" }, " … the most used shown") : null));
    }
  }
  if (!out.length) out.push(h("p", { class: "muted" }, "no loaded script defines index functions"));
  out.push(keep || h("div", { id: "index-keys" }));
  target.replaceChildren(...out);
}
async function indexKeys(sc, index, value) {
  const box = $("index-keys");
  const res = (sc.resources || [])[0];
  try {
    const lists = await Promise.all((sc.resources || []).map((r) =>
      getJSON(`/debug/cache?resource=${encodeURIComponent(r)}&script=${encodeURIComponent(sc.script)}&index=${encodeURIComponent(index)}&value=${encodeURIComponent(value)}`)));
    const items = lists.flatMap((l) => l.objects.map((o) => ({ resource: l.resource, key: o.key })));
    box.replaceChildren(h("h2", {}, `${sc.script}: ${index} = ${value}`),
      h("ul", {}, items.map((o) => h("li", {}, h("a", { href: `/explain/${o.resource.split("/").pop()}/${o.key}` }, o.key), h("span", { class: "muted" }, " " + o.resource)))));
  } catch (e) {
    box.replaceChildren(h("p", { class: "err" }, `keys of ${res}: ${e.message}`));
  }
}

// ---- policies ------------------------------------------------------------------------------

const AUDIT_RESULTS = ["pass", "fail", "warn", "error", "skip"];
const auditBadge = (r) => ({ pass: "ok", fail: "err", error: "err", warn: "warn" })[r] || "muted";
const auditRowClass = (r) => ({ fail: "err", error: "err", warn: "warn" })[r] || "";
const fmtDateTime = (t) => t ? new Date(t).toLocaleString() : "";

// renderPolicies shows each audit script's counts and initial pass, then its failing objects
// (the snapshot carries at most FailingPerScript of them, errors first), each a link to its
// explain, and how many more there are.
function renderPolicies(s) {
  const pols = s.policies || [];
  const out = [];
  if (s.reportsMissing) out.push(h("p", { class: "badge warn", id: "reports-missing" }, "the cluster does not serve the openreports.io CRDs: results are kept in memory only (kubectl apply -f deploy/crds/openreports.yaml)"));
  if (!pols.length) {
    out.push(h("p", { class: "muted" }, "no script audits (admission: { audit: true })"));
    return out;
  }
  out.push(h("table", { id: "policies" },
    h("thead", {}, h("tr", {}, ["script", "initial pass", ...AUDIT_RESULTS].map((t, i) => h("th", { class: i >= 2 ? "num" : "" }, t)))),
    h("tbody", {}, pols.map((p) => h("tr", { "data-script": p.script },
      h("td", {}, h("a", { href: "/scripts/" + p.script }, p.script)),
      h("td", {}, p.initialPass ? h("span", { class: "badge warn" }, `running: ${p.audited} of ${p.objects} audited`) : "done"),
      AUDIT_RESULTS.map((r) => h("td", { class: "num" + (p.results[r] && r !== "pass" && r !== "skip" ? " " + auditBadge(r) : ""), "data-result": r }, p.results[r] || 0)))))));
  for (const p of pols) {
    const failing = p.failing || [];
    if (!failing.length) continue;
    out.push(h("h2", {}, h("a", { href: "/scripts/" + p.script }, p.script), " ", h("span", { class: "muted" }, `${failing.length + (p.moreFailing || 0)} not passing`)));
    out.push(h("table", { class: "failing", "data-script": p.script },
      h("thead", {}, h("tr", {}, ["result", "object", "resource", "message", "since"].map((t) => h("th", {}, t)))),
      h("tbody", {}, failing.map((f) => h("tr", { class: auditRowClass(f.result), "data-object": f.object },
        h("td", {}, h("span", { class: "badge " + auditBadge(f.result) }, f.result)),
        h("td", { class: "mono" }, h("a", { href: explainPath(f.resource, f.object) }, f.object)),
        h("td", { class: "mono muted" }, f.resource),
        h("td", { class: "mono" }, f.message || ""),
        h("td", {}, fmtDateTime(f.time)))))));
    if (p.moreFailing) out.push(h("p", { class: "muted more" }, `${p.moreFailing} more not shown: `,
      h("code", {}, `kubectl get reports,clusterreports -A -l ${p.reportSelector}`)));
  }
  return out;
}

route();
connect();
