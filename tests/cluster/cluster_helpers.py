"""Helpers shared by the cluster tests: the cluster's health, checkpoints, recovery times, test clusters."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import numpy as np
import pytest
import requests

from scylla_singa.cluster import engines, faults, launcher, subnets
from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.discover import leftovers
from scylla_singa.cluster.resource_plan import PROCESS_KINDS, framework_credential_file
from scylla_singa.cluster.state import ClusterInfo, State
from scylla_singa.framework.store import JobStore
from scylla_singa.mesos.api.credentials import Credential, load_credential
from tests.support.scylla_cli import ScyllaCli


def node_client(info: ClusterInfo, index: int) -> docker.DockerClient:
    """A client of node `index`'s own Docker engine."""
    return docker.DockerClient(base_url=info.nodes[index].docker_host, timeout=120)


def assert_clean(config: ClusterConfig, host: docker.DockerClient) -> None:
    """Nothing of the cluster is left on the machine (namespaces, links, rules, processes, ...)."""
    left = leftovers(config, host)
    assert not left, f"cluster {config.prefix!r} left behind: {left}"


def unique_prefix(tag: str = "t") -> str:
    """A cluster prefix no other test session on this machine uses (they may run at the same time)."""
    return f"{tag}{uuid.uuid4().hex[:5]}"


def free_subnet_pair(host: docker.DockerClient) -> tuple[str, str]:
    """Two neighbouring /24s that no route and no Docker network of the host overlaps.

    Docker hands out whole /16s of 172.17-31 round-robin, so any of them may be
    taken (by other tests' compose projects) while this session runs: try
    172.31.200+ first, then the same /24s in the other /16s cluster configs allow.
    """
    seconds = [31] + random.sample([16, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], 12)
    pair = subnets.free_pair(host, seconds, range(200, 254))
    if pair:
        return pair
    raise RuntimeError("no free pair of /24s in 172.16.0.0/12 for a test cluster")


# -- running scylla-singa against the session's cluster ------------------------
REPO = Path(__file__).resolve().parent.parent.parent
HOGWILD = REPO / "examples" / "frameworks" / "hogwild.conf"


def job_conf(tmp: Path, train_steps: int, checkpoint_freq: int | None = None, base: Path = HOGWILD) -> Path:
    """A copy of `base` (600 steps, checkpoints every 200) training longer, for faults mid-training."""
    text = base.read_text().replace("train_steps: 600", f"train_steps: {train_steps}")
    if checkpoint_freq is not None:
        text = text.replace("checkpoint_freq: 200", f"checkpoint_freq: {checkpoint_freq}")
    path = tmp / f"{base.stem}-{train_steps}.conf"
    path.write_text(text)
    return path


def leader(state: State) -> str:
    """"ip:5050" of the master leading now (its znode is the lowest)."""
    name = faults.leading_master(state)
    assert name, "no master leads"
    return next(m.endpoint for m in state.config.master_specs() if f"{m.name}-master" == name)


def cluster_credential(config: ClusterConfig) -> Credential:
    """The framework credential `cluster up` made (its masters and agents accept it, both kinds)."""
    return load_credential(framework_credential_file(config))


def mesos_get(state: State, address: str, path: str) -> dict:
    """GET a master's or agent's JSON endpoint as the cluster's framework principal."""
    return requests.get(f"http://{address}{path}", timeout=10,
                        headers=cluster_credential(state.config).headers()).json()


def master_state(state: State) -> dict:
    return mesos_get(state, leader(state), "/master/state")


def cluster_is_healthy(state: State, host: docker.DockerClient) -> str:
    """"" when every master runs, one leads, every node's engine answers and its agent is registered,
    active and healthy with the leader, and the services are healthy; else what is not."""
    for e in state.entries:
        if e.resource.kind in PROCESS_KINDS and e.done and not launcher.running(e.facts.get("pid"), e.facts.get("start")):
            return f"{e.resource.name} is not running"
    for spec in state.config.node_specs():
        if not engines.answers(spec.socket):
            return f"the engine of {spec.name} does not answer"
    try:
        agents = {a["hostname"]: a for a in master_state(state)["slaves"]}
    except (AssertionError, requests.RequestException, ValueError) as exc:
        return f"no leading master answers ({exc})"
    for spec in state.config.node_specs():
        a = agents.get(spec.name)
        if a is None or not a["active"] or a.get("deactivated"):
            return f"agent {spec.name} is not registered, active and healthy: {a}"
    for e in state.entries:
        if e.resource.kind == "service":
            health = (host.containers.get(e.resource.name).attrs["State"].get("Health") or {}).get("Status")
            if health != "healthy":
                return f"{e.resource.name} is {health}"
    return ""


def volume_checkpoints(cli: ScyllaCli, job: str) -> list[int]:
    """The complete checkpoint steps of a volume-delivered job, after verifying every file (see below)."""
    where = cli.home / "jobs" / job / "workspace" / "checkpoint"
    names = [p.name for p in where.iterdir()] if where.is_dir() else []
    return verify_checkpoints(names, lambda n: (where / n).read_bytes())


def verify_checkpoints(names: list[str], read: Callable[[str], bytes]) -> list[int]:
    """Every checkpoint file under its final name decodes and holds finite numbers; every complete
    step (with its .done marker) has its files. Returns the complete steps, in order."""
    from scylla_singa.runtime.checkpoint import CKPT_RE, MARKER_RE, decode_checkpoint
    files: dict[int, list[str]] = {}
    for name in names:
        if m := CKPT_RE.match(name):
            files.setdefault(int(m.group(1)), []).append(name)
    complete = sorted(int(m.group(1)) for m in map(MARKER_RE.match, names) if m)
    for step in complete:
        assert files.get(step), f"step {step} has a marker but no checkpoint file"
    for step, found in files.items():
        for name in found:
            meta, slices = decode_checkpoint(read(name))
            assert meta["step"] == step and slices, f"{name}: {meta}"
            for s in slices:
                arrays = [s.values, *s.state.values()]
                assert all(np.isfinite(a).all() for a in arrays), f"{name}: non-finite values"
    return complete


# -- recovery times -------------------------------------------------------------
RECOVERIES: list[dict] = []


MESOS_COLUMNS = {"ours": "ours (s)", "apache": "Apache Mesos (s)"}


def record_recovery(request: pytest.FixtureRequest, mesos: str, fault: str, measure: str, seconds: float) -> None:
    """Keep a measured recovery time (on the cluster of kind `mesos`) for the summary and docs/faults.md."""
    RECOVERIES.append({"mesos": mesos, "fault": fault, "measure": measure, "seconds": round(seconds, 1)})
    request.node.user_properties.append((f"{mesos}: {fault}: {measure}", round(seconds, 1)))
    print(f"recovery on {mesos}: {fault}: {measure}: {seconds:.1f}s")


def write_fault_table(path: Path, rows: list[dict]) -> None:
    """Update the measured cells of the table between the markers of docs/faults.md: one row per
    (fault, measure), a column per kind of Mesos; cells not measured this time are kept."""
    start, end = "<!-- recovery-times:start -->", "<!-- recovery-times:end -->"
    text = path.read_text() if path.exists() else f"# Fault tests\n\n{start}\n{end}\n"
    if start not in text or end not in text:
        return
    head, rest = text.split(start, 1)
    table, tail = rest.split(end, 1)
    kinds = list(MESOS_COLUMNS)
    known: dict[tuple[str, str], dict[str, str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 + len(kinds) + 1 and cells[0] != "fault" and not cells[0].startswith("-"):
            known[(cells[0], cells[1])] = {**dict(zip(kinds, cells[2:-1])), "when": cells[-1]}
    when = time.strftime("%Y-%m-%d")
    for r in rows:
        row = known.setdefault((r["fault"], r["measure"]), {k: "-" for k in kinds})
        row.update({r["mesos"]: f"{r['seconds']:.1f}", "when": when})
    lines = [f"| fault | measure | {' | '.join(MESOS_COLUMNS.values())} | measured |",
             "|" + "---|" * (3 + len(kinds)),
             *(f"| {f} | {m} | {' | '.join(c[k] for k in kinds)} | {c['when']} |" for (f, m), c in known.items())]
    path.write_text(f"{head}{start}\n" + "\n".join(lines) + f"\n{end}{tail}")


def job_times(store: JobStore, job_id: str) -> list[tuple[float, str, str]]:
    """The job's (wall time, state, why) history."""
    return [tuple(h) for h in store.load(job_id).history]  # type: ignore[misc]


def first(history: list[tuple[float, str, str]], state: str, after: float = 0.0) -> float | None:
    return next((t for t, s, _ in history if s == state and t >= after), None)


def training_report(cli: ScyllaCli, job: str, since: float, skip: frozenset[str] = frozenset()) -> Callable[[], str]:
    """An `explain` for a wait on a gang's training: each task's host and state, each process's last progress
    since `since`, and the last log lines of the job's containers on every reachable node (`skip`: nodes cut
    off, whose engines cannot answer). A timeout then says which process did not train and what it printed."""
    def report() -> str:
        record = cli.store().load(job)
        lines = [f"job {job} {record.state.value} attempt {record.attempt}"]
        lines += [f"  task {t.proc} on {t.hostname} ({t.ip}): {t.state} {t.reason} {t.message}".rstrip()
                  for t in record.tasks.values()]
        last: dict[int, dict] = {}
        for p in cli.store().progress(job, limit=100000):
            if p["at"] >= since:
                last[p["proc"]] = p
        lines += [f"  proc {proc} last progress {p['phase']} step {p['step']} at +{p['at'] - since:.1f}s"
                  for proc, p in sorted(last.items())]
        for name in sorted(set(cli.engines or {}) - skip):
            try:
                for c in cli.engine(name).containers.list(all=True, filters={"label": f"scylla.job={job}"}):
                    tail = c.logs(tail=15).decode(errors="replace").rstrip().replace("\n", "\n      ")
                    lines.append(f"  {name} {c.name} {c.status}:\n      {tail}")
            except (docker.errors.DockerException, requests.RequestException) as exc:
                lines.append(f"  {name}: engine did not answer: {exc}")
        return "\n".join(lines)
    return report
