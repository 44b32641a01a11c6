#!/usr/bin/env python3
"""Run every third-party Mesos client against one master and say what each did.

    tools/ensure_mesos_clients.sh
    .venv/bin/python tools/mesos_clients/try_clients.py --master 127.0.0.1:5050 [--agent 127.0.0.1:5051]
        [--only NAME,...] [--json OUT.json]

Why: the compatibility table of issue 15 must come from the real clients as
shipped, against our master and against Apache Mesos, with the exact error
each gives. Each scenario runs one client (installed in .cache/clients/ by
tools/ensure_mesos_clients.sh) with a deadline, keeps its last output lines
and says `works` when the client's own sign of success appears, else
`fails`. Scenarios use small tasks (0.1 cpu, 32-128 MB) and plain commands;
the Docker-image one asks for a MESOS container with an image, as the
libraries' sample does. A row per scenario goes to stdout (and all output to
--json). Exits 0 when every scenario ran, whatever they did.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / ".cache" / "clients"
HERE = Path(__file__).resolve().parent


@dataclass
class Scenario:
    name: str
    client: str
    what: str
    argv: list[str]
    success: str  # regex on the output that means the client did its job
    timeout: float = 45.0
    env: dict[str, str] = field(default_factory=dict)
    background: list[str] | None = None  # a second client run alongside (mwatch watching a task)
    background_success: str | None = None


@dataclass
class Outcome:
    name: str
    client: str
    what: str
    result: str
    exit_code: int | None
    seconds: float
    evidence: list[str]
    background_evidence: list[str] = field(default_factory=list)


def scenarios(master: str, agent: str | None) -> list[Scenario]:
    go = CLIENTS / "bin"
    py = str(CLIENTS / "venv" / "bin" / "python")
    host, port = master.rsplit(":", 1)
    url = f"http://{master}"
    cli_config = Path(tempfile.mkdtemp(prefix="scylla-mesos-cli-")) / "config.toml"
    cli_config.write_text(f'[master]\naddress = "{master}"\n')
    cli_env = {"MESOS_CLI_CONFIG": str(cli_config), "PATH": f"{CLIENTS / 'venv' / 'bin'}:{os.environ['PATH']}"}
    example = [str(go / "example-scheduler"), "-verbose", "-url", f"{url}/api/v1/scheduler",
               "-executor", str(go / "example-executor"), "-tasks", "2", "-cpu", "0.1", "-memory", "32",
               "-exec.memory", "32", "-server.address", "127.0.0.1", "-metrics.port", "0"]
    sample = [py, str(HERE / "py_sample_framework.py"), "--master", url, "--cpus", "0.1", "--mem", "128",
              "--timeout", "40"]
    out = [
        Scenario("mesos-go example-scheduler (protobuf)", "mesos-go", "scheduler API in protobuf, custom executor "
                 "over the executor API", example + ["-codec", "protobuf", "-name", "mgo-protobuf"],
                 r"mission accomplished"),
        Scenario("mesos-go example-scheduler (json)", "mesos-go", "scheduler API in JSON, custom executor",
                 example + ["-codec", "json", "-name", "mgo-json"], r"mission accomplished"),
        Scenario("mesos-go msh", "mesos-go", "one command task (protobuf)",
                 [str(go / "msh"), "-master", master, "-cpus", "0.1", "-memory", "32", "/bin/true"],
                 r"TASK_FINISHED"),
        Scenario("mesos-go msh -pod", "mesos-go", "LAUNCH_GROUP with the default executor (protobuf)",
                 [str(go / "msh"), "-pod", "-master", master, "-cpus", "0.1", "-memory", "32", "/bin/true"],
                 r"TASK_FINISHED"),
        Scenario("mesos-go mwatch", "mesos-go", "operator SUBSCRIBE (protobuf) while msh runs a task",
                 [str(go / "msh"), "-master", master, "-cpus", "0.1", "-memory", "32", "/bin/sleep", "2"],
                 r"TASK_FINISHED", background=[str(go / "mwatch"), "-master", host, "-port", port],
                 background_success=r"TASK_ADDED"),
        Scenario("mesoshttp sample (command)", "mesoshttp", "sample framework, plain command task",
                 sample + ["--lib", "mesoshttp", "--container", "none"], r"EVENT END TASK_KILLED"),
        Scenario("mesoshttp sample (MESOS container, Docker image)", "mesoshttp",
                 "the sample as shipped: MESOS container with image debian",
                 sample + ["--lib", "mesoshttp", "--container", "mesos-docker"], r"EVENT END TASK_KILLED"),
        Scenario("avmesos sample (command)", "avmesos", "sample framework, plain command task",
                 sample + ["--lib", "avmesos", "--container", "none"], r"EVENT END TASK_KILLED"),
        Scenario("avmesos sample (MESOS container, Docker image)", "avmesos",
                 "the sample as shipped: MESOS container with image debian",
                 sample + ["--lib", "avmesos", "--container", "mesos-docker"], r"EVENT END TASK_KILLED"),
        Scenario("@dcos/mesos-client", "@dcos/mesos-client", "operator API in JSON: GET_* and SUBSCRIBE",
                 ["node", str(HERE / "dcos_mesos_client.js"), url, "2",
                  "GET_HEALTH,GET_VERSION,GET_FLAGS,GET_STATE,GET_AGENTS,GET_FRAMEWORKS,GET_TASKS,GET_ROLES,"
                  "GET_MASTER,GET_METRICS,GET_EXECUTORS,GET_LOGGING_LEVEL"],
                 r"EVENT HEARTBEAT", timeout=40,
                 env={"NODE_PATH": str(CLIENTS / "node" / "node_modules")}),
    ]
    for words in (["agent", "list"], ["framework", "list", "--all"], ["task", "list", "--all"]):
        out.append(Scenario(f"avmesos-cli mesos {' '.join(words)}", "avmesos-cli", "read-only master endpoints",
                            [str(CLIENTS / "venv" / "bin" / "mesos-cli"), *words], r"^(ID|Agent ID)\s",
                            timeout=30, env=cli_env))
    if (go / "mesos_exporter").exists():
        exporter_args = [f"-master={url}"] if agent is None else [f"-slave=http://{agent}"]
        out.append(Scenario("mesos_exporter", "mesos_exporter", "scrape /metrics/snapshot and /state",
                            [str(go / "mesos_exporter"), *exporter_args], r"mesos_", timeout=20))
    return out


def _operator_subscribers(master: str) -> float | None:
    """The master's `master/operator_event_stream_subscribers` (None when it cannot be read)."""
    try:
        with urllib.request.urlopen(f"http://{master}/metrics/snapshot", timeout=5) as answer:
            return float(json.load(answer).get("master/operator_event_stream_subscribers", 0))
    except (OSError, ValueError):
        return None


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def run(s: Scenario, master: str) -> Outcome:
    env = {**os.environ, **s.env}
    started = time.monotonic()
    watcher = None
    watched: list[str] = []
    if s.background:
        before = _operator_subscribers(master) or 0.0
        watcher = subprocess.Popen(s.background, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True, text=True)
        reader = threading.Thread(target=lambda: watched.extend(watcher.stdout), daemon=True)  # type: ignore[arg-type]
        reader.start()
        # The watcher's output is what is checked: it must be subscribed before the task starts.
        if not _wait_for(lambda: (_operator_subscribers(master) or 0.0) > before or watcher.poll() is not None, 20):
            watched.append("(the watcher did not subscribe within 20 s)")
    try:
        done = subprocess.run(s.argv, capture_output=True, text=True, env=env, timeout=s.timeout,
                              start_new_session=True)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:
        output = _text(exc.stdout) + _text(exc.stderr) + f"\n(killed after {s.timeout:.0f}s)"
        code = None
    seconds = time.monotonic() - started
    background: list[str] = []
    ok = re.search(s.success, output, re.M) is not None
    if watcher is not None:
        seen = lambda: re.search(s.background_success or "", "".join(watched), re.M) is not None  # noqa: E731
        _wait_for(seen, 20)   # the watcher reports the task's events shortly after the client's own end
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.wait(10)
        reader.join(10)
        background = _tail("".join(watched))
        ok = ok and seen()
    return Outcome(s.name, s.client, s.what, "works" if ok else "fails", code, round(seconds, 1), _tail(output),
                   background)


def _headline(outcome: Outcome, s: Scenario) -> str:
    """The output line that best says what happened: the success sign, else the last error-looking line."""
    lines = outcome.evidence
    pattern = s.success if outcome.result == "works" else r"(?i)error|fail|refus|exception|panic|EVENT END|killed after"
    matching = [line for line in lines if re.search(pattern, line)]
    return (matching or lines or [""])[-1]


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def _tail(output: str, lines: int = 12) -> list[str]:
    kept = [line[:400] for line in output.splitlines() if line.strip() and "HEARTBEAT" not in line]
    return kept[-lines:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", required=True, help="HOST:PORT of the master")
    parser.add_argument("--agent", help="HOST:PORT of one agent (for the exporter's agent mode)")
    parser.add_argument("--only", help="comma-separated scenario names (substrings)")
    parser.add_argument("--json", type=Path, help="write every outcome with its output here")
    args = parser.parse_args()
    if not (CLIENTS / "bin" / "example-scheduler").exists():
        print("error: the clients are not installed; run tools/ensure_mesos_clients.sh first", file=sys.stderr)
        return 2
    chosen = scenarios(args.master, args.agent)
    if args.only:
        wanted = args.only.split(",")
        chosen = [s for s in chosen if any(w in s.name for w in wanted)]
    outcomes = []
    for s in chosen:
        outcome = run(s, args.master)
        outcomes.append(outcome)
        last = _headline(outcome, s)
        print(f"{outcome.result:5s} {outcome.seconds:5.1f}s  {s.name}: {last}", flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
