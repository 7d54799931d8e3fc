// mnemon's dashboard: reads the project's JSON API with the login cookie and
// redraws within a second of a write, from the server's event stream.
// Everything from the store is put on the page as text (textContent), never
// as markup, so what agents wrote cannot run here.
"use strict";

const PROJECT = document.querySelector('meta[name="mnemon-project"]').content;
const BASE = `/v1/projects/${encodeURIComponent(PROJECT)}/`;
const NS = "http://www.w3.org/2000/svg";
const state = { agent: null, tab: "hot", timeline: null, report: null };

// ---------- helpers ----------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    // Through CSSOM: the page's policy refuses inline style attributes.
    else if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
// The nodes among `nodes`: DOM methods such as replaceChildren would print a
// null as the text "null".
const present = (...nodes) => nodes.flat().filter((n) => n !== undefined && n !== null && n !== false);
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
const fmt = (n) => (n === undefined || n === null ? "–" : Number(n).toLocaleString("en-US"));
const pct = (f) => `${(f * 100).toFixed(1)} %`;
const counted = (n, one, many) => `${fmt(n)} ${n === 1 ? one : many}`;
const words = (s) => String(s || "").replace(/_/g, " ");

async function api(path, opts = {}) {
  const init = { credentials: "same-origin", headers: { "x-mnemon-dashboard": "1" }, ...opts };
  if (opts.body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(opts.body);
  }
  const r = await fetch(BASE + path, init);
  if (r.status === 401) {
    window.location.assign("/login");
    throw new Error("logged out");
  }
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || `HTTP ${r.status}`);
  return body;
}
function fail(target, err) {
  target.replaceChildren(el("p", { class: "error", role: "alert" }, String(err.message || err)));
}

// ---------- now: the gauge ----------
function renderNow(report) {
  const w = report.window;
  const max = w.effective_max || 1;
  const t = w.thresholds;
  const span = Math.max(max, w.used);
  const at = (n) => `${Math.min(100, (n / span) * 100)}%`;
  const band = (cls, from, to, label) =>
    el("div", { class: `band ${cls}`, style: `left:${at(from)};width:calc(${at(to)} - ${at(from)})` }, el("span", {}, label));
  const gauge = el("div", { class: "gauge", id: "gauge-bar" },
    band("green", 0, t.yellow_from, "green"),
    band("yellow", t.yellow_from, t.orange_from, "yellow"),
    band("orange", t.orange_from, t.red_from, "orange"),
    band("red", t.red_from, max, "red"),
    el("div", { class: "fill", id: "gauge-fill", style: `width:${at(w.used)}` }),
    el("div", { class: "limit", style: `left:${at(t.emergency_from)}` }, el("span", {}, "95 %")));
  const box = document.getElementById("gauge");
  box.setAttribute("aria-label",
    `${fmt(w.used)} of ${fmt(w.effective_max)} tokens used, ${pct(w.fraction)}, zone ${w.zone}`);
  box.replaceChildren(gauge);
  box.removeAttribute("aria-busy");

  // The other sizes the window was chosen from; the one chosen is named once.
  const sizes = report.window_sizes || {};
  const chosen = { served: "served", model: "model_max", registry: "registry", config: "config" }[report.window_source];
  const source = [["served", "served"], ["model_max", "model max"], ["registry", "registry"], ["config", "config"]]
    .filter(([key]) => key !== chosen && sizes[key] !== undefined && sizes[key] !== null && sizes[key] !== 0)
    .map(([key, name]) => `${name} ${fmt(sizes[key])}`)
    .join(" · ");
  const engine = report.engine || {};
  const rows = [
    ["Zone", el("span", { class: `zone ${w.zone}`, id: "zone" }, w.zone)],
    ["Used", el("span", { id: "used" }, `${fmt(w.used)} tokens (${pct(w.fraction)}), from ${words(report.usage_source)}`)],
    ["Effective window", `${fmt(w.effective_max)} = ${fmt(w.configured_max)} × ${w.utilization_limit}`],
    ["Configured max", `${fmt(w.configured_max)}, from ${words(report.window_source)}${source ? ` (also known: ${source})` : ""}`],
    ["Available", fmt(w.available)],
    ["Epoch", `${fmt(engine.epoch)} · ${counted(engine.refreshes, "refresh", "refreshes")} · last checkpoint ${engine.last_checkpoint || "none"}`],
    ["Tokenizer", `${report.tokenizer.name}${report.tokenizer.exact ? " (exact)" : " (estimate)"}`],
    ["Profile", `${report.profile.name} (${words(report.profile.source)})`],
  ];
  document.getElementById("numbers").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  document.getElementById("action").textContent = `Recommended: ${words(report.recommended_action)}`;
  document.getElementById("warnings").replaceChildren(...(report.warnings || []).map((x) => el("li", {}, x)));
}

// ---------- over time: the chart ----------
const MARKED = new Set(["checkpoint", "refresh", "optimize"]);
// 1, 2 or 5 times a power of ten, at least `v`: axis ends a reader can read.
function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(Math.max(v, 1)));
  return [1, 2, 5, 10].map((m) => m * p).find((n) => n >= v);
}
const short = (v) => (v >= 1000 ? `${Number((v / 1000).toFixed(1))}k` : String(Math.round(v)));
function renderTimeline(tl, report) {
  const box = document.getElementById("chart");
  box.removeAttribute("aria-busy");
  const pts = tl.points;
  if (!pts.length) {
    box.replaceChildren(el("p", { class: "hint" }, "Nothing recorded by this agent yet."));
    return;
  }
  const W = 900, H = 260, L = 56, R = 12, T = 12, B = 28;
  const t = report.window.thresholds;
  // The y-axis fits the data: 0.3 % of a large window is not a flat line at
  // zero. Once usage nears the zones, the whole window is shown.
  const peak = Math.max(...pts.map((p) => Math.max(p.used, (p.marker && p.marker.before) || 0)), 1);
  const whole = peak >= 0.4 * report.window.effective_max;
  const top = whole ? Math.max(report.window.effective_max, peak) : niceCeil(peak * 1.2);
  const x = (i) => L + (pts.length === 1 ? (W - L - R) / 2 : (i / (pts.length - 1)) * (W - L - R));
  const y = (v) => T + (1 - v / top) * (H - T - B);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-title", id: "chart-svg" },
    svg("title", { id: "chart-title" }, `Tokens in ${tl.agent}'s window over its last ${pts.length} log entries`));
  chart.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  chart.append(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const [cls, v, name] of [["yellow", t.yellow_from, "50 %"], ["orange", t.orange_from, "70 %"], ["red", t.red_from, "85 %"], ["limit", t.emergency_from, "95 %"]]) {
    if (v > top) continue;
    chart.append(svg("line", { class: `threshold ${cls}`, x1: L, y1: y(v), x2: W - R, y2: y(v) }));
    chart.append(svg("text", { class: "label", x: 4, y: y(v) + 4 }, name));
  }
  chart.append(svg("text", { class: "label", x: 4, y: H - B + 4 }, "0"));
  if (!whole) {
    for (const v of [top / 2, top]) {
      chart.append(svg("line", { class: "grid", x1: L, y1: y(v), x2: W - R, y2: y(v) }));
      chart.append(svg("text", { class: "label tick", x: 4, y: y(v) + 4 }, short(v)));
    }
    chart.append(svg("text", { class: "label", id: "chart-scale", x: L + 6, y: T + 10 },
      `scaled to the data: up to ${fmt(top)} of ${fmt(report.window.effective_max)} tokens (${pct(top / report.window.effective_max)}); zone lines start at 50 %`));
  }
  chart.append(svg("text", { class: "label", x: L, y: H - 8 }, pts[0].at.slice(0, 19).replace("T", " ")));
  chart.append(svg("text", { class: "label", x: W - R - 120, y: H - 8 }, pts[pts.length - 1].at.slice(0, 19).replace("T", " ")));
  // The line drops at a refresh or optimization: draw `before` then `used`.
  let d = "";
  pts.forEach((p, i) => {
    if (p.marker && p.marker.before !== undefined && p.marker.before !== null) d += `${d ? "L" : "M"}${x(i)},${y(p.marker.before)}`;
    d += `${d ? "L" : "M"}${x(i)},${y(p.used)}`;
    if (i > 0 && p.epoch !== pts[i - 1].epoch) chart.append(svg("line", { class: "epoch", x1: x(i), y1: T, x2: x(i), y2: H - B }));
  });
  chart.append(svg("path", { class: "usage", d, id: "usage-line" }));
  pts.forEach((p, i) => {
    if (!p.marker) return;
    const kind = MARKED.has(p.marker.kind) ? p.marker.kind : "other";
    const label = `${words(p.marker.kind)} at ${p.at}, ${fmt(p.used)} tokens`;
    const dot = svg("circle", {
      class: `marker ${kind}`, cx: x(i), cy: y(p.used), r: 7, tabindex: 0, role: "button",
      "aria-label": label, "data-kind": p.marker.kind, "data-index": i,
      onclick: () => showMarker(p), onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); showMarker(p); } },
    }, svg("title", {}, label));
    chart.append(dot);
  });
  box.replaceChildren(chart);
}

async function showMarker(p) {
  const out = document.getElementById("marker-detail");
  const m = p.marker;
  const head = el("h3", {}, `${words(m.kind)} · ${p.at} · ${fmt(p.used)} tokens${m.before ? ` (from ${fmt(m.before)})` : ""}`);
  out.replaceChildren(head, el("p", { class: "hint" }, "loading…"));
  out.focus();
  try {
    if (m.kind === "checkpoint" && m.data.id) {
      const cp = await api(`checkpoints/${encodeURIComponent(m.data.id)}`);
      out.replaceChildren(head, el("p", {}, `Checkpoint ${m.data.id}, trigger ${words(m.data.trigger)}.`),
        el("pre", { id: "checkpoint-json" }, JSON.stringify(cp, null, 2)));
    } else if (m.compaction) {
      out.replaceChildren(head, ...audit(m.compaction));
    } else {
      out.replaceChildren(head, el("pre", {}, JSON.stringify(m.data, null, 2)));
    }
  } catch (e) {
    fail(out, e);
  }
}

// A compaction audit: what was kept, summarized and dropped, and where each
// original stays.
function audit(c) {
  const a = c.audit || {};
  const parts = [el("p", {}, `Compaction (${words(c.kind)}): ${fmt(c.input_tokens)} → ${fmt(c.output_tokens)} tokens, covering the log through operation ${c.through_op_seq} and message ${c.through_msg_seq}. Every original stays in the log (o<seq> for operations, m<seq> for messages).`)];
  for (const [key, title] of [["kept_verbatim", "Kept verbatim"], ["summarized", "Summarized"], ["dropped", "Dropped from the summary (still in the log)"], ["pinned_deferred", "Pinned, kept for later"]]) {
    const list = a[key];
    if (!Array.isArray(list) || !list.length) continue;
    parts.push(el("h4", {}, `${title} (${list.length})`));
    parts.push(el("ul", { class: `audit-${key}` }, list.slice(0, 200).map((i) => el("li", {}, typeof i === "string" ? i : describe(i)))));
  }
  if (a.duplicates_removed) parts.push(el("p", {}, `${a.duplicates_removed} near-duplicates removed.`));
  parts.push(el("details", {}, el("summary", {}, "Summary and full audit"), el("pre", {}, c.summary), el("pre", {}, JSON.stringify(a, null, 2))));
  return parts;
}
function describe(item) {
  const src = item.sources || item.source || item.id;
  const text = item.text || item.line || "";
  return `${Array.isArray(src) ? src.join(", ") : src || ""}${text ? ": " + text : ""}${item.tokens ? ` (${item.tokens} tokens)` : ""}`;
}

// ---------- what the model would see ----------
const TIER = {
  hot_context: "hot", session_summary: "session", working_memory: "session", recent_messages: "session",
  project_state: "project", work_plan: "project", decisions: "project", entity_facts: "project", fragments: "search",
};
async function assemble(ev) {
  if (ev) ev.preventDefault();
  const out = document.getElementById("context-out");
  const budget = Number(document.getElementById("budget").value);
  const query = document.getElementById("query").value.trim();
  const preset = document.getElementById("preset").value;
  try {
    const a = await api("context", { method: "POST", body: { budget, query: query || undefined, preset, agent: state.agent } });
    const stack = el("div", { class: "stack", role: "img", "aria-label": `${fmt(a.tokens)} of ${fmt(a.budget)} tokens` },
      a.sections.map((s) => el("div", { class: `s-${s.kind}`, style: `width:${(s.tokens / Math.max(a.budget, 1)) * 100}%`, title: `${words(s.kind)}: ${s.tokens}` })));
    out.replaceChildren(
      el("p", { id: "context-total" }, `${fmt(a.tokens)} of ${fmt(a.budget)} tokens (plan ${a.plan}), exact for the tokenizer in force.`),
      stack,
      ...(a.warnings || []).map((w) => el("p", { class: "warnings" }, w)),
      ...a.sections.map((s) => el("div", { class: `sec s-${s.kind}`, "data-section": s.kind },
        el("h3", {}, `${words(s.kind)} `, el("span", { class: "tier" }, `· tier ${TIER[s.kind] || "?"} · ${fmt(s.tokens)} tokens${s.left_out ? ` · ${s.left_out} left out for space` : ""}`)),
        el("ul", {}, s.items.map((i) => el("li", {}, i.text.trim().replace(/^- /, ""), " ", el("small", {}, `${i.tokens} tok${i.provenance.length ? " · " + i.provenance.join(", ") : ""}`)))))),
    );
  } catch (e) {
    fail(out, e);
  }
}

// ---------- memory ----------
const TABS = {
  async hot(panel) {
    const h = await api("hot");
    const groups = [
      ["active_goals", "Goals"], ["important_constraints", "Constraints"], ["remember", "Remembered facts"],
      ["key_decisions", "Key decisions"], ["pending_actions", "Pending actions"],
    ].filter(([key]) => Array.isArray(h[key]) && h[key].length);
    const entities = Object.entries(h.key_entities || {});
    const files = (h.current_file_context && h.current_file_context.files) || [];
    if (!groups.length && !entities.length && !files.length) {
      return panel.replaceChildren(el("p", { class: "hint" }, `No goals, constraints or facts yet (hot context version ${h.version}).`));
    }
    const line = (i) => (typeof i === "string" ? i : i.description || i.text || i.decision || i.action || JSON.stringify(i));
    panel.replaceChildren(...present(el("p", { class: "hint" }, `Hot context version ${h.version}.`),
      ...groups.map(([key, title]) => el("div", { "data-hot-group": key },
        el("h3", {}, title),
        el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "Text"), el("th", {}, "Priority"), el("th", {}, "Status"), el("th", {}, "Version"))),
          el("tbody", {}, h[key].map((i) => el("tr", { "data-hot": i.id || i.goal_id || "" },
            el("td", {}, line(i), i.rationale ? el("div", { class: "hint" }, i.rationale) : null),
            el("td", {}, i.priority || ""), el("td", {}, i.status || ""), el("td", {}, i.version ? `v${i.version}` : ""))))))),
      entities.length ? el("div", {}, el("h3", {}, "Key entities"), el("ul", {}, entities.map(([k, v]) => el("li", {}, `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)))) : null,
      files.length ? el("div", {}, el("h3", {}, "Files in play"), el("ul", {}, files.map((f) => el("li", {}, typeof f === "string" ? f : JSON.stringify(f))))) : null));
  },
  async decisions(panel) {
    const list = await api("decisions?limit=100");
    if (!list.length) return panel.replaceChildren(el("p", { class: "hint" }, "No decisions recorded."));
    panel.replaceChildren(...list.map((d) => el("article", { class: "adr" },
      el("h3", {}, `${d.id}: ${d.title} `, el("span", { class: "status" }, d.status)),
      el("dl", {},
        el("dt", {}, "Context"), el("dd", {}, d.context),
        el("dt", {}, "Decision"), el("dd", {}, d.decision),
        el("dt", {}, "Consequences"), el("dd", {}, consequences(d.consequences)),
        d.assumptions && d.assumptions.length ? [el("dt", {}, "Assumptions"), el("dd", {}, el("ul", {}, d.assumptions.map((x) => el("li", {}, x))))] : null,
        d.alternatives && d.alternatives.length ? [el("dt", {}, "Alternatives"), el("dd", {}, d.alternatives.map((a) => (typeof a === "string" ? a : `${a.option || a.name || ""}${a.reason || a.rejected_because ? ": " + (a.reason || a.rejected_because) : ""}`)).join("\n"))] : null,
        d.superseded_by ? [el("dt", {}, "Superseded by"), el("dd", {}, d.superseded_by)] : null),
      el("p", { class: "hint" }, `${d.timestamp} · ${d.agent}`))));
  },
  async entities(panel) {
    const list = await api("entities?limit=1000");
    if (!list.length) return panel.replaceChildren(el("p", { class: "hint" }, "No epics, stories or tasks yet."));
    const kids = new Map();
    for (const e of list) {
      const k = e.parent ?? 0;
      if (!kids.has(k)) kids.set(k, []);
      kids.get(k).push(e);
    }
    const known = new Set(list.map((e) => e.number));
    const node = (e) => el("li", { "data-entity": e.number },
      `${words(e.kind)} #${e.number} ${e.title} `, el("span", { class: "status" }, words(e.status)),
      kids.has(e.number) ? el("ul", {}, kids.get(e.number).map(node)) : null);
    const roots = list.filter((e) => e.parent === null || e.parent === undefined || !known.has(e.parent));
    panel.replaceChildren(el("ul", { class: "tree" }, roots.map(node)));
  },
  async sessions(panel) {
    const list = await api("sessions?limit=50");
    if (!list.length) return panel.replaceChildren(el("p", { class: "hint" }, "No sessions yet."));
    const detail = el("div", { class: "detail", id: "session-detail", tabindex: "-1" });
    panel.replaceChildren(el("table", {},
      el("thead", {}, el("tr", {}, el("th", {}, "Session"), el("th", {}, "Status"), el("th", {}, "Started"), el("th", {}, "Ops / msgs"), el("th", {}, "Tokens"), el("th", {}, ""))),
      el("tbody", {}, list.map((s) => el("tr", { "data-session": s.id },
        el("td", {}, el("button", { type: "button", class: "linkish", onclick: () => showSession(s.id, detail) }, s.title || s.id)),
        el("td", {}, s.status), el("td", {}, s.started_at), el("td", {}, `${s.operation_count} / ${s.message_count}`), el("td", {}, fmt(s.tokens)),
        el("td", {}, s.status !== "active" ? el("button", { type: "button", class: "restore", onclick: () => restore(s.id, detail) }, "Restore") : ""))))), detail);
  },
  async documents(panel) {
    const kinds = ["project_state", "work_plan", "decision_log"];
    const pick = el("select", { id: "doc-kind", "aria-label": "Document" }, kinds.map((k) => el("option", { value: k }, words(k))));
    const a = el("input", { id: "doc-a", type: "number", min: 1, "aria-label": "Older version" });
    const b = el("input", { id: "doc-b", type: "number", min: 1, "aria-label": "Newer version" });
    const out = el("div", { id: "doc-out" });
    const show = async () => {
      try {
        const cur = await api(`documents/${pick.value}`);
        b.max = a.max = cur.version;
        out.replaceChildren(el("p", { class: "hint" }, `${words(cur.kind)}, version ${cur.version} of ${cur.version}, ${cur.created_at}`), el("pre", {}, cur.content));
        if (!b.value) b.value = cur.version;
        if (!a.value) a.value = Math.max(1, cur.version - 1);
      } catch (e) { fail(out, e); }
    };
    const diff = async (ev) => {
      ev.preventDefault();
      try {
        const [x, y] = await Promise.all([api(`documents/${pick.value}?version=${a.value}`), api(`documents/${pick.value}?version=${b.value}`)]);
        out.replaceChildren(el("p", { class: "hint" }, `${words(pick.value)}: version ${x.version} → ${y.version}`), lineDiff(x.content, y.content));
      } catch (e) { fail(out, e); }
    };
    pick.addEventListener("change", () => { a.value = ""; b.value = ""; show(); });
    panel.replaceChildren(el("form", { class: "row", onsubmit: diff }, pick, el("label", { for: "doc-a" }, " compare version "), a, el("label", { for: "doc-b" }, " with "), b, el("button", { type: "submit" }, "Diff")), out);
    await show();
  },
  async search(panel) {
    const q = el("input", { id: "search-q", type: "search", "aria-label": "Search all memory", placeholder: "words to find across every tier" });
    const out = el("div", { id: "search-out" });
    const run = async (ev) => {
      ev.preventDefault();
      if (!q.value.trim()) return;
      try {
        const hits = await api(`search?q=${encodeURIComponent(q.value)}&limit=50`);
        out.replaceChildren(hits.length ? el("ol", {}, hits.map((h) => el("li", { "data-hit": h.id }, el("strong", {}, `${h.source} ${h.id} `), h.text, " ", el("small", { class: "hint" }, h.at)))) : el("p", { class: "hint" }, "Nothing matches."));
      } catch (e) { fail(out, e); }
    };
    panel.replaceChildren(el("form", { onsubmit: run }, q, " ", el("button", { type: "submit" }, "Search")), out);
    q.focus();
  },
};

// An ADR's consequences: what gets better, what gets worse, and how the
// worse is contained.
function consequences(c) {
  if (!c || typeof c !== "object") return String(c || "");
  const parts = [["positive", "+"], ["negative", "−"], ["mitigations", "mitigation:"]]
    .flatMap(([key, sign]) => (c[key] || []).map((x) => el("li", {}, `${sign} ${x}`)));
  return parts.length ? el("ul", {}, parts) : "none stated";
}

// The longest common subsequence of lines: small documents, exact result.
function lineDiff(before, after) {
  const a = before.split("\n"), b = after.split("\n");
  const n = a.length, m = b.length;
  const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const out = el("div", { class: "diff", id: "doc-diff" });
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.append(el("span", { class: "same" }, "  " + a[i])); i++; j++; }
    else if (j < m && (i >= n || dp[i][j + 1] >= dp[i + 1][j])) { out.append(el("span", { class: "add" }, "+ " + b[j])); j++; }
    else { out.append(el("span", { class: "del" }, "- " + a[i])); i++; }
  }
  return out;
}

async function showSession(id, detail) {
  try {
    const s = await api(`sessions/${encodeURIComponent(id)}`);
    detail.replaceChildren(el("h3", {}, s.title || s.id), el("p", { class: "hint" }, `${s.status} · ${s.started_at}${s.ended_at ? " → " + s.ended_at : ""}`), el("pre", {}, s.summary || "No summary yet."));
    detail.focus();
  } catch (e) { fail(detail, e); }
}
async function restore(id, detail) {
  try {
    const r = await api(`sessions/${encodeURIComponent(id)}/restore`, { method: "POST", body: { agent: state.agent } });
    const restored = r.value || r.result || r;
    // The notice sits outside the panel, which the refresh redraws.
    document.getElementById("notice").replaceChildren(el("span", { id: "restored" },
      `Restored session ${(restored.session && (restored.session.title || restored.session.id)) || id}: it is ${state.agent}'s active session again, with its hot context, summary and last ${(restored.recent_messages || []).length} messages.`));
    refresh();
  } catch (e) { fail(detail, e); }
}

function selectTab(name, focus) {
  state.tab = name;
  for (const t of document.querySelectorAll("[role=tab]")) {
    const on = t.dataset.tab === name;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    if (on) {
      document.getElementById("panel").setAttribute("aria-labelledby", t.id);
      if (focus) t.focus();
    }
  }
  loadTab();
}
async function loadTab() {
  const panel = document.getElementById("panel");
  if (state.tab === "search" && panel.querySelector("#search-q")) return; // keep what was typed
  try { await TABS[state.tab](panel); } catch (e) { fail(panel, e); }
}

// ---------- loading and live updates ----------
async function refresh() {
  try {
    const { agents } = await api("agents");
    const select = document.getElementById("agent");
    const names = agents.map((a) => a.agent);
    if (!state.agent || !names.includes(state.agent)) state.agent = names[0];
    if ([...select.options].map((o) => o.value).join() !== names.join()) {
      select.replaceChildren(...names.map((n) => el("option", { value: n }, n)));
    }
    select.value = state.agent;
    const report = agents.find((a) => a.agent === state.agent).status;
    state.report = report;
    renderNow(report);
    const tl = await api(`timeline?agent=${encodeURIComponent(state.agent)}&limit=500`);
    state.timeline = tl;
    renderTimeline(tl, report);
    if (state.tab !== "search" && state.tab !== "documents") await loadTab();
    document.body.dataset.updated = String(Date.now());
  } catch (e) {
    fail(document.getElementById("numbers"), e);
  }
}

let pending = null;
function soon() {
  if (pending) return;
  pending = setTimeout(() => { pending = null; refresh(); }, 150);
}
function listen() {
  const live = document.getElementById("live");
  const source = new EventSource(BASE + "events", { withCredentials: true });
  source.addEventListener("open", () => { live.textContent = "live"; live.className = "on"; });
  source.addEventListener("error", () => { live.textContent = "reconnecting…"; live.className = "off"; });
  for (const name of ["write", "changed", "lagged", "zone_changed", "checkpoint_created", "refreshed", "optimized"]) {
    source.addEventListener(name, soon);
  }
}

document.getElementById("agent").addEventListener("change", (e) => { state.agent = e.target.value; refresh(); });
document.getElementById("context-form").addEventListener("submit", assemble);
const tabs = [...document.querySelectorAll("[role=tab]")];
for (const t of tabs) {
  t.addEventListener("click", () => selectTab(t.dataset.tab));
  t.addEventListener("keydown", (e) => {
    const i = tabs.indexOf(t);
    const next = e.key === "ArrowRight" ? tabs[(i + 1) % tabs.length] : e.key === "ArrowLeft" ? tabs[(i - 1 + tabs.length) % tabs.length] : null;
    if (next) { e.preventDefault(); selectTab(next.dataset.tab, true); }
  });
}
refresh();
listen();
