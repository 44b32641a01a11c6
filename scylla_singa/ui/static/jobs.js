// The framework's job view: polls /ui/api/jobs and the selected job's /ui/api/jobs/{id} every 1.5 s.
"use strict";

const COLORS = { train: "#2f6fde", test: "#e8833a", validate: "#1f9d55" };
const STATE_FILL = { TASK_RUNNING: "#1f9d55", TASK_FINISHED: "#475467", TASK_STAGING: "#7c5cd6",
                     TASK_STARTING: "#7c5cd6", TASK_KILLING: "#d97706", TASK_KILLED: "#d97706" };

function selectedId(rows) {
  const want = decodeURIComponent(location.hash.slice(1));
  if (want && rows.some((r) => r.job === want)) return want;
  return rows.length ? rows[0].job : null;
}

function jobCard(r, selected) {
  const frac = r.train_steps ? Math.min(1, (r.step || 0) / r.train_steps) : 0;
  return h("a", { class: "job" + (selected ? " sel" : ""), href: "#" + encodeURIComponent(r.job), "data-job": r.job },
    h("div", { style: "display:flex;justify-content:space-between;gap:6px" }, h("span", { class: "id" }, r.job), badge(r.state)),
    h("div", { class: "progress" }, h("span", { style: `width:${(100 * frac).toFixed(1)}%` })),
    h("div", { class: "small muted" }, `step ${r.step || 0}/${r.train_steps} · loss ${num(r.loss, 3)} · ${r.nprocs} proc${r.nprocs > 1 ? "s" : ""}`),
    r.waiting_reason ? h("div", { class: "small", style: "color:var(--pending)" }, "waiting: " + r.waiting_reason) : null);
}

function fact(k, v, id) {
  return h("div", { id }, h("div", { class: "k" }, k), h("div", { class: "v" }, v));
}

function renderSummary(d) {
  replace("job-head", h("h2", { style: "font-size:16px" }, d.job, " ", badge(d.state), " ",
    h("span", { class: "muted small" }, `${d.name} · policy ${d.policy} · ${d.image} · attempt ${d.attempt}`)));
  const banners = [];
  if (d.state === "WAITING" || d.state === "BACKOFF") {
    banners.push(h("div", { class: "banner wait", id: "waiting" }, h("b", {}, d.state === "WAITING" ? "Waiting for resources:" : "Backing off before placing again:"),
      d.waiting_reason || "waiting for offers", h("span", { class: "muted" }, ` (policy ${d.policy})`)));
  }
  if (d.failure) banners.push(h("div", { class: "banner fail", id: "failure" }, h("b", {}, d.state === "FAILED" ? "Failed:" : "Last failure:"), d.failure));
  replace("job-banners", banners);
  replace("job-facts",
    fact("step", `${d.step || 0} / ${d.train_steps}`, "fact-step"),
    fact("steps/s", num(d.steps_per_s, 1), "fact-rate"),
    fact("train loss", num(d.loss, 4), "fact-loss"),
    fact("train accuracy", pct(d.accuracy), "fact-accuracy"),
    fact("test accuracy", pct(d.test_accuracy), "fact-test"),
    fact("restarts", `${d.restarts} / ${d.max_restarts}`, "fact-restarts"),
    fact("processes", `${d.nprocs} on ${d.nhosts} host${d.nhosts === 1 ? "" : "s"}`, "fact-procs"));
}

function renderCharts(c) {
  const pts = (phase, key) => c[phase].map((p) => [p.step, p[key]]);
  lineChart(document.getElementById("loss-chart"), { series: [
    { name: "train", color: COLORS.train, points: pts("train", "loss") },
    { name: "test", color: COLORS.test, points: pts("test", "loss"), dots: true },
    { name: "validate", color: COLORS.validate, points: pts("validate", "loss"), dots: true }] });
  lineChart(document.getElementById("accuracy-chart"), { yMin: 0, yMax: 1, series: [
    { name: "train", color: COLORS.train, points: pts("train", "accuracy") },
    { name: "test", color: COLORS.test, points: pts("test", "accuracy"), dots: true },
    { name: "validate", color: COLORS.validate, points: pts("validate", "accuracy"), dots: true }] });
}

// Hosts as boxes, processes as circles inside the box of the host their task runs on,
// edges of the job's communication graph between them (width ~ log bytes per step).
function renderPlacement(d) {
  const svg = document.getElementById("placement");
  const procs = Object.fromEntries(d.procs.map((p) => [p.id, p]));
  const CELL = 78, PAD = 16, HEAD = 40, GAP = 36, R = 19;
  const boxes = [];
  let x = 10, rowH = 0;
  const pos = {};
  for (const g of d.hosts) {
    const cols = Math.max(1, Math.ceil(Math.sqrt(g.procs.length)));
    const rows = Math.ceil(g.procs.length / cols);
    const w = Math.max(150, cols * CELL + 2 * PAD), hgt = HEAD + rows * CELL + PAD / 2;
    g.procs.forEach((id, i) => {
      pos[id] = [x + PAD + (i % cols) * CELL + CELL / 2 + (w - 2 * PAD - cols * CELL) / 2, 10 + HEAD + Math.floor(i / cols) * CELL + CELL / 2 - 8];
    });
    boxes.push({ g, x, w, hgt });
    x += w + GAP;
    rowH = Math.max(rowH, hgt);
  }
  const W = Math.max(x - GAP + 10, 400), H = rowH + 20;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.style.maxWidth = Math.max(W, 400) * 1.3 + "px";
  const sizes = d.edges.map((e) => Math.log(Math.max(1, e.bytes_per_step)));
  const lo = Math.min(...sizes), hi = Math.max(...sizes);
  const out = [];
  for (const b of boxes) {
    out.push(s("g", { class: "host" + (b.g.placed ? "" : " unplaced"), "data-host": b.g.host },
      s("rect", { x: b.x, y: 10, width: b.w, height: b.hgt, rx: 10 }),
      s("text", { x: b.x + 12, y: 30, class: "name" }, b.g.host),
      s("text", { x: b.x + 12, y: 44, class: "sub" }, b.g.placed ? `agent ${shortId(b.g.agent_id)} · ${b.g.procs.length} proc${b.g.procs.length > 1 ? "s" : ""}` : "waiting for a placement")));
  }
  d.edges.forEach((e, i) => {
    const a = pos[e.src], b = pos[e.dst];
    if (!a || !b) return;
    const width = 1.5 + (hi > lo ? (4.5 * (sizes[i] - lo)) / (hi - lo) : 2);
    const mx = (a[0] + b[0]) / 2, my = (a[1] + b[1]) / 2, dx = b[0] - a[0], dy = b[1] - a[1];
    const bend = e.cross ? 0.12 : 0.25;  // curve a little so parallel edges stay apart
    const cx = mx - dy * bend, cy = my + dx * bend;
    out.push(s("path", { class: "edge" + (e.cross ? " cross" : ""), d: `M${a[0]},${a[1]} Q${cx},${cy} ${b[0]},${b[1]}`,
      "stroke-width": width.toFixed(1), "data-edge": `${e.src}-${e.dst}` },
      s("title", {}, `proc ${e.src} — proc ${e.dst}: ${bytes(e.bytes_per_step)} per step${e.cross ? " (between hosts)" : " (within a host)"}`)));
  });
  for (const [id, [px, py]] of Object.entries(pos)) {
    const p = procs[id];
    const role = `${p.workers.length}w · ${p.servers.length}s`;
    out.push(s("g", { class: "proc", "data-proc": id },
      s("circle", { cx: px, cy: py, r: R, style: `fill:${STATE_FILL[p.state] || (p.state ? "#d64545" : "#98a2b3")}` },
        s("title", {}, `proc ${id}: ${p.state || "not placed"}${p.hostname ? " on " + p.hostname : ""}`)),
      s("text", { x: px, y: py + 4, "text-anchor": "middle" }, "P" + id),
      s("text", { x: px, y: py + R + 13, "text-anchor": "middle", class: "role" }, role)));
  }
  svg.replaceChildren(...out);
  const cross = d.edges.filter((e) => e.cross);
  replace("placement-note", `${d.hosts.filter((g) => g.placed).length} host(s) · ${d.edges.length} edge(s), ${cross.length} across hosts: ${bytes(cross.reduce((a, e) => a + e.bytes_per_step, 0))} per step over the network`);
}

function procRow(p) {
  const ids = (xs, k) => xs.map(([g, j]) => `${k}${g}.${j}`).join(" ");
  return h("tr", { "data-proc": p.id },
    h("td", { class: "num" }, String(p.id)),
    h("td", { class: "mono small" }, ids(p.workers, "w"), p.workers.length && p.servers.length ? " " : "", ids(p.servers, "s")),
    h("td", { class: "small" }, `${num(p.cpus)} cpu · ${p.mem_mb} MB · ${num(p.net_mbps)} Mbit/s`),
    h("td", { class: "agent" }, p.hostname || h("span", { class: "muted" }, "–")),
    h("td", { class: "mono small" }, p.task || "–"),
    h("td", {}, p.state ? badge(p.state) : h("span", { class: "muted" }, "not placed")),
    h("td", { class: "small" }, p.reason ? h("div", { class: "mono" }, p.reason) : null, p.message ? h("div", { class: "muted" }, p.message) : null),
    h("td", {}, p.logs ? [h("a", { href: p.logs.stdout, class: "log-stdout" }, "stdout"), " · ", h("a", { href: p.logs.stderr, class: "log-stderr" }, "stderr")] : "–"));
}

function renderHistory(d) {
  replace("restarts-count", `${d.restarts} restart${d.restarts === 1 ? "" : "s"} of ${d.max_restarts} allowed`);
  replace("restarts", d.restart_reasons.length
    ? h("ol", {}, d.restart_reasons.map((r) => h("li", { class: "restart" }, r)))
    : h("div", { class: "muted small", style: "margin-bottom:6px" }, "no restarts"));
  document.querySelector("#events tbody").replaceChildren(...d.events.slice().reverse().map((e) =>
    h("tr", {}, h("td", { class: "muted small" }, new Date(e.at * 1000).toLocaleTimeString()), h("td", {}, badge(e.state)), h("td", { class: "small" }, e.why))));
}

function renderDetail(d) {
  renderSummary(d);
  renderCharts(d.curves);
  renderPlacement(d);
  document.querySelector("#procs tbody").replaceChildren(...d.procs.map(procRow));
  renderHistory(d);
}

every(1500, async () => {
  const list = await getJSON("/ui/api/jobs");
  const fw = list.framework;
  replace("framework-meta", fw.id ? `framework ${shortId(fw.id)} · master ` : "not connected yet",
    fw.master_ui ? h("a", { href: fw.master_ui }, fw.master) : "");
  const sel = selectedId(list.jobs);
  replace("joblist", list.jobs.length ? list.jobs.map((r) => jobCard(r, r.job === sel)) : h("div", { class: "muted" }, "no jobs yet"));
  document.getElementById("detail").style.visibility = sel ? "visible" : "hidden";
  if (sel) renderDetail(await getJSON("/ui/api/jobs/" + encodeURIComponent(sel)));
});
window.addEventListener("hashchange", () => {
  const want = decodeURIComponent(location.hash.slice(1));
  document.querySelectorAll(".joblist .job").forEach((el) => el.classList.toggle("sel", el.getAttribute("data-job") === want));
  if (want) getJSON("/ui/api/jobs/" + encodeURIComponent(want)).then(renderDetail, () => {});
});
