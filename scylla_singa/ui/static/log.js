// The log viewer: tails a task's stdout/stderr through /ui/api/log (same origin).
"use strict";

const params = new URLSearchParams(location.search);
const file = params.get("file") || "stdout";
let offset = -1;  // -1: start with the last 64 KiB
const MAX_CHARS = 2_000_000;

function other() {
  const p = new URLSearchParams(params);
  p.set("file", file === "stdout" ? "stderr" : "stdout");
  return h("a", { href: "?" + p.toString() }, "show " + p.get("file"));
}

replace("log-title", `${params.get("task") || "?"} · ${file}`);
replace("log-switch", other());

poll(() => "/ui/api/log?" + new URLSearchParams({ agent: params.get("agent") || "", task: params.get("task") || "", file, offset }), 1000, (chunk) => {
  if (chunk.error) throw new Error(chunk.error);
  const pre = document.getElementById("log");
  replace("log-path", `${chunk.hostname}:${chunk.path} · ${bytes(chunk.size)}`);
  if (chunk.data) {
    pre.appendChild(document.createTextNode(chunk.data));
    if (pre.textContent.length > MAX_CHARS) pre.textContent = pre.textContent.slice(-MAX_CHARS / 2);
    if (document.getElementById("follow").checked) pre.scrollTop = pre.scrollHeight;
  }
  if (!pre.textContent && chunk.size === 0) pre.setAttribute("data-empty", "1");
  offset = chunk.next;
  replace("log-error");
}, (err) => replace("log-error", err.message));
