// The master's cluster page: polls /ui/state (master_view.cluster_view) every 1.5 s.
"use strict";

function roundTime(ms) {
  return ms < 1 ? Math.round(ms * 1000) + " µs" : num(ms, ms < 10 ? 2 : 0) + " ms";
}

function tiles(v) {
  const res = Object.fromEntries(v.resources.map((u) => [u.name, u]));
  const t = v.tasks_by_state;
  const running = t.TASK_RUNNING || 0, pending = (t.TASK_STAGING || 0) + (t.TASK_STARTING || 0);
  const out = [];
  for (const name of ["cpus", "mem", "disk", "gpus"]) {
    const u = res[name];
    if (!u) continue;
    out.push(h("div", { class: "tile", id: "tile-" + name },
      h("div", { class: "k" }, name), h("div", { class: "v" }, pct(u.total ? u.used / u.total : 0), h("span", { class: "sub" }, " used")),
      usageBar(u)));
  }
  out.push(h("div", { class: "tile", id: "tile-agents" }, h("div", { class: "k" }, "agents"),
    h("div", { class: "v" }, `${v.agents_active} / ${v.agents_total}`), h("div", { class: "sub" }, "reachable / registered")));
  out.push(h("div", { class: "tile" }, h("div", { class: "k" }, "tasks"),
    h("div", { class: "v" }, String(running), h("span", { class: "sub" }, " running")),
    h("div", { class: "sub" }, `${pending} starting · ${t.TASK_FINISHED || 0} finished · ${(t.TASK_FAILED || 0) + (t.TASK_LOST || 0) + (t.TASK_ERROR || 0)} failed/lost · ${t.TASK_KILLED || 0} killed`)));
  out.push(h("div", { class: "tile", id: "tile-allocation" }, h("div", { class: "k" }, "allocation"),
    h("div", { class: "v" }, roundTime(v.allocation.last_round_ms), h("span", { class: "sub" }, " last round")),
    h("div", { class: "sub" }, `${v.allocation.runs} rounds · ${v.allocation.outstanding_offers} offers outstanding · ${v.master.allocator || ""} every ${v.master.allocation_interval || "?"}`)));
  return out;
}

function agentRow(a) {
  return h("tr", { "data-agent": a.hostname },
    h("td", {}, h("div", {}, h("b", {}, a.hostname)), h("div", { class: "muted small mono", title: a.id }, shortId(a.id) + (a.address ? " · " + a.address : ""))),
    h("td", {}, badge(a.active ? "reachable" : "unreachable")),
    h("td", {}, h("div", { style: "display:flex;gap:14px;flex-wrap:wrap" },
      a.resources.map((u) => h("div", {}, h("div", { class: "small" }, u.name), usageBar(u))))),
    h("td", {}, Object.entries(a.attributes).map(([k, val]) => h("span", { class: "attr" }, `${k}: ${val}`))),
    h("td", { class: "num" }, String(a.tasks)),
    h("td", { class: "muted" }, ago(a.registered_time)));
}

function frameworkRow(f) {
  const states = Object.entries(f.tasks_by_state).map(([st, n]) => h("span", { style: "margin-right:6px" }, badge(st), " ", String(n)));
  return h("tr", { "data-framework": f.id },
    h("td", {}, h("div", {}, h("b", {}, f.name || "(unnamed)"), f.webui_url ? [" ", h("a", { href: f.webui_url }, "web UI")] : null),
      h("div", { class: "muted small mono", title: f.id }, shortId(f.id) + (f.user ? " · " + f.user : ""))),
    h("td", {}, badge(f.active ? "connected" : "disconnected")),
    h("td", { class: "mono" }, f.role),
    h("td", {}, h("div", { class: "share" }, h("div", { class: "bar" }, h("span", { style: `width:${Math.min(100, 100 * f.dominant_share).toFixed(1)}%` })),
      h("b", { class: "dominant" }, pct(f.dominant_share)), h("span", { class: "muted" }, f.dominant_resource || ""))),
    h("td", { class: "small" }, Object.entries(f.shares).filter(([, x]) => x > 0).map(([r, x]) => h("span", { class: "attr" }, `${r} ${pct(x)}`))),
    h("td", { class: "num" }, String(f.offers)),
    h("td", {}, states.length ? states : h("span", { class: "muted" }, "none")));
}

function taskRow(t) {
  const logs = t.logs ? [h("a", { href: t.logs.stdout, class: "log-stdout" }, "stdout"), " · ", h("a", { href: t.logs.stderr, class: "log-stderr" }, "stderr")]
                      : h("span", { class: "muted", title: "this agent serves no sandbox files" }, "–");
  return h("tr", { "data-task": t.id },
    h("td", { class: "mono" }, t.id),
    h("td", {}, badge(t.state)),
    h("td", { class: "small" }, t.reason ? h("div", { class: "mono" }, t.reason) : null, t.message ? h("div", { class: "muted" }, t.message) : null),
    h("td", {}, t.hostname),
    h("td", { class: "small" }, t.framework || shortId(t.framework_id)),
    h("td", { class: "muted" }, ago(t.updated)),
    h("td", {}, logs));
}

function render(v) {
  replace("master-meta", `${v.master.hostname} · id ${shortId(v.master.id)} · ${v.master.elected ? "leader" : "not leading"} (${(v.master.leader || "").replace(/^master@/, "")}) · v${v.master.version} · up ${duration(v.master.uptime_s)}`);
  replace("leader-banner", v.master.elected ? null : h("span", {}, h("b", {}, "Not the leader."),
    " This master is a standby; the leading master is ", h("a", { href: "http://" + (v.master.leader || "").replace(/^master@/, "") + "/" }, (v.master.leader || "unknown").replace(/^master@/, ""))));
  replace("tiles", tiles(v));
  replace("agents-count", `${v.agents_active} reachable of ${v.agents_total}` + (v.agents_total > v.agents.length ? ` (first ${v.agents.length} shown)` : ""));
  document.querySelector("#agents tbody").replaceChildren(...v.agents.map(agentRow));
  replace("frameworks-count", String(v.frameworks.length));
  const fws = v.frameworks.length ? v.frameworks.map(frameworkRow) : [h("tr", {}, h("td", { colspan: 7, class: "muted" }, "no framework is registered"))];
  document.querySelector("#frameworks tbody").replaceChildren(...fws);
  replace("tasks-count", `${v.tasks.filter((t) => t.active).length} active · ${v.tasks.length} shown`);
  const tasks = v.tasks.length ? v.tasks.map(taskRow) : [h("tr", {}, h("td", { colspan: 7, class: "muted" }, "no tasks yet"))];
  document.querySelector("#tasks tbody").replaceChildren(...tasks);
}

poll("/ui/state", 1500, render);
