// Shared helpers of the scylla-singa pages: DOM building (text only, never
// innerHTML, so names and messages cannot inject markup), number formats,
// polling with a live indicator, and small SVG charts drawn here (no CDN).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  return fill(el, attrs, children);
}

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  return fill(el, attrs, children);
}

function fill(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function replace(id, ...children) {
  const el = document.getElementById(id);
  if (el) el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
  return el;
}

function num(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  if (digits !== undefined) return Number(v).toFixed(digits);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

function pct(v) {
  return v === null || v === undefined ? "–" : (100 * v).toFixed(1) + "%";
}

function amount(name, v) {
  if (v === null || v === undefined) return "–";
  if (name === "mem" || name === "disk") {
    return v >= 1024 ? (v / 1024).toFixed(v >= 10240 ? 0 : 1) + " GB" : v.toFixed(0) + " MB";
  }
  return num(v);
}

function bytes(v) {
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(1) : v.toFixed(0)) + " " + units[i];
}

function ago(ts) {
  if (!ts) return "–";
  const d = Date.now() / 1000 - ts;
  if (d < 60) return Math.max(0, Math.round(d)) + " s ago";
  if (d < 3600) return Math.round(d / 60) + " min ago";
  return Math.round(d / 3600) + " h ago";
}

function duration(sec) {
  if (sec === null || sec === undefined) return "–";
  if (sec < 60) return Math.round(sec) + " s";
  if (sec < 3600) return Math.floor(sec / 60) + " min " + Math.round(sec % 60) + " s";
  return Math.floor(sec / 3600) + " h " + Math.round((sec % 3600) / 60) + " min";
}

function shortId(id) {
  return id && id.length > 14 ? id.slice(0, 8) + "…" + id.slice(-4) : id || "";
}

// A state as a coloured badge: TASK_RUNNING -> "running", JobState -> lower case.
function badge(state) {
  const text = (state || "none").replace(/^TASK_/, "").toLowerCase();
  let kind = "idle";
  if (/^(disconnected|unreachable)$/.test(text)) kind = "bad";
  else if (/^(reachable|connected)$/.test(text)) kind = "ok";
  else if (/running|finished/.test(text)) kind = text.includes("finished") ? "done" : "ok";
  else if (/fail|error|lost|gone|dropped|unreachable|unknown/.test(text)) kind = "bad";
  else if (/kill/.test(text)) kind = "warn";
  else if (/wait|backoff|restart|staging|starting|launching|preparing/.test(text)) kind = "pending";
  return h("span", { class: "badge " + kind, title: state || "" }, text.replace(/_/g, " "));
}

// Stacked bar: used, offered, free (of total).
function usageBar(u) {
  const total = u.total || 0;
  const w = (x) => (total > 0 ? Math.min(100, (100 * x) / total) : 0).toFixed(1) + "%";
  return h("div", { class: "usage", title: `${u.name}: ${amount(u.name, u.used)} used, ${amount(u.name, u.offered)} offered, ${amount(u.name, u.total)} total` },
    h("div", { class: "bar" },
      h("span", { class: "used", style: "width:" + w(u.used) }),
      h("span", { class: "offered", style: "width:" + w(u.offered) })),
    h("div", { class: "label" }, `${amount(u.name, u.used)} + ${amount(u.name, u.offered)} / ${amount(u.name, u.total)}`));
}

// GET a JSON document; a failure throws an Error with the server's `error` text when it gave one.
async function getJSON(url) {
  const resp = await fetch(url, { cache: "no-store" });
  if (!resp.ok) {
    const body = await resp.text();
    let msg = null;
    try { msg = JSON.parse(body).error; } catch (e) { msg = null; }
    throw new Error(msg || resp.status + " " + body.slice(0, 200));
  }
  return resp.json();
}

// Run async `fn` every `ms` (backing off while it fails; errors go to `onError`); #live shows freshness.
function every(ms, fn, onError) {
  let failures = 0;
  async function tick() {
    try {
      await fn();
      failures = 0;
      replace("live", h("span", { class: "dot ok" }), "live · updated " + new Date().toLocaleTimeString());
    } catch (err) {
      failures++;
      if (onError) onError(err);
      replace("live", h("span", { class: "dot bad" }), "not answering (" + err.message + ")");
    }
    setTimeout(tick, failures ? Math.min(10000, ms * (failures + 1)) : ms);
  }
  tick();
}

// Poll `url` (or a function giving it) every `ms` and hand the JSON to `render`.
function poll(url, ms, render, onError) {
  every(ms, async () => render(await getJSON(typeof url === "function" ? url() : url)), onError);
}

// ---- charts ------------------------------------------------------------

function niceTicks(lo, hi, count) {
  if (!(hi > lo)) { hi = lo + 1; }
  const raw = (hi - lo) / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) || raw;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toFixed(10));
  return ticks;
}

// lineChart(svg, {series: [{name, color, points: [[x, y]], dots}], xLabel, yMin, yMax})
// Draws axes, grid, one path per series (dots for `dots: true`) and a legend.
// Each series' path carries data-series and data-points (its number of points).
function lineChart(svg, opts) {
  const W = 520, H = 250, L = 48, R = 12, T = 28, B = 34;  // the legend sits above the plot (T)
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const all = opts.series.flatMap((se) => se.points.filter((p) => p[1] !== null && p[1] !== undefined));
  const children = [];
  if (!all.length) {
    children.push(s("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, opts.empty || "no progress reported yet"));
    svg.replaceChildren(...children);
    for (const se of opts.series) svg.appendChild(s("path", { d: "", "data-series": se.name, "data-points": 0, class: "hidden" }));
    return;
  }
  let x0 = Math.min(...all.map((p) => p[0])), x1 = Math.max(...all.map((p) => p[0]));
  let y0 = opts.yMin !== undefined ? opts.yMin : Math.min(...all.map((p) => p[1]));
  let y1 = opts.yMax !== undefined ? opts.yMax : Math.max(...all.map((p) => p[1]));
  if (x1 === x0) { x1 = x0 + 1; }
  if (y1 === y0) { y1 = y0 + 1; }
  if (opts.yMin === undefined) y0 = Math.min(y0, 0);
  const xs = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const ys = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
  for (const t of niceTicks(y0, y1, 4)) {
    if (t < y0 - 1e-9 || t > y1 + 1e-9) continue;
    children.push(s("line", { x1: L, x2: W - R, y1: ys(t), y2: ys(t), class: "grid" }));
    children.push(s("text", { x: L - 6, y: ys(t) + 4, "text-anchor": "end", class: "tick" }, num(t)));
  }
  for (const t of niceTicks(x0, x1, 5)) {
    if (t < x0 - 1e-9 || t > x1 + 1e-9) continue;
    children.push(s("line", { x1: xs(t), x2: xs(t), y1: H - B, y2: H - B + 4, class: "axis" }));
    children.push(s("text", { x: xs(t), y: H - B + 16, "text-anchor": "middle", class: "tick" }, num(t)));
  }
  children.push(s("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  children.push(s("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
  children.push(s("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", class: "axis-label" }, opts.xLabel || "step"));
  let lx = L + 8;
  for (const se of opts.series) {
    const pts = se.points.filter((p) => p[1] !== null && p[1] !== undefined);
    let d = "";
    if (se.dots) {
      d = pts.map((p) => `M${xs(p[0]).toFixed(1)},${ys(p[1]).toFixed(1)}m-3,0a3,3 0 1,0 6,0a3,3 0 1,0 -6,0`).join("");
    } else {
      d = pts.map((p, i) => `${i ? "L" : "M"}${xs(p[0]).toFixed(1)},${ys(p[1]).toFixed(1)}`).join("");
    }
    const attrs = { d, "data-series": se.name, "data-points": pts.length, class: se.dots ? "dots" : "line",
                    style: se.dots ? `fill:${se.color};stroke:${se.color}` : `stroke:${se.color}` };
    children.push(s("path", attrs, s("title", {}, se.name)));
    if (pts.length) {
      const last = pts[pts.length - 1];
      children.push(s("text", { x: lx, y: 14, class: "legend", style: `fill:${se.color}` }, `● ${se.name} ${num(last[1], 3)}`));
      lx += 12 + 7.2 * (se.name.length + 8);
    }
  }
  svg.replaceChildren(...children);
}
