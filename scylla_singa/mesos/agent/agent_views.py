"""The agent's read-only answers in Mesos 1.12's shapes: /state, /flags, /containers,
/monitor/statistics, /metrics/snapshot and the v1 operator API's GET_* (agent.proto Response.*).

Tasks are grouped by executor as a Mesos agent groups them: a command task
is its own executor (id = task id, named "Command Executor (Task: ...)"), a
framework's custom executor holds all the tasks it was given, a task group
runs under its default executor. A framework the master shut down, with
nothing left running, is listed among `completed_frameworks`.

Container statistics come from /proc for the task's main process (its pid
as the runner knows it): CPU times and resident memory of that process, not
of a whole cgroup (documented in README); limits are the task's resources.
Nothing here changes the agent.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import build_info, mesos_duration
from scylla_singa.mesos.api.metric_values import percentiles, system_metrics
from scylla_singa.mesos.api.protocol import AGENT_CAPABILITIES
from scylla_singa.mesos.api.resources import Resources, attributes_dict, with_checkpointed
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .task_runner import AgentTask

JsonDict = dict[str, Any]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
SUMMARY = ("version", "git_sha", "git_branch", "git_tag", "build_date", "build_time", "build_user")


# ---- executors -------------------------------------------------------------

def executor_name(task: AgentTask) -> str:
    """An executor's name: the custom executor's own, or the command executor's as Mesos writes it."""
    if task.executor_info is not None:
        return str(task.executor_info.get("name") or "")
    command = task.info.get("command") or {}
    value = str(command.get("value") or "")
    if command.get("shell", True):
        shown = value if len(value) <= 15 else value[:12] + "..."
        return f"Command Executor (Task: {task.task_id}) (Command: sh -c '{shown}')"
    return f"Command Executor (Task: {task.task_id}) (Command: [{', '.join(command.get('arguments') or [value])}])"


def _resources(task: AgentTask) -> Resources:
    try:
        return Resources.from_json(task.info.get("resources"))
    except ValueError:
        return Resources()


def _role(task: AgentTask) -> str:
    roles = task.framework.get("roles") or []
    return task.framework.get("role") or (roles[0] if roles else "*")


def task_json(task: AgentTask) -> JsonDict:
    """A task in the agent's /state (v0 shape, as the master's /state writes it)."""
    info = task.info
    out: JsonDict = {"id": task.task_id, "name": info.get("name", ""), "framework_id": task.framework_id,
                     "executor_id": task.executor_id if task.executor_info is not None or task.group else "",
                     "slave_id": task.agent_id, "state": task.state, "resources": _resources(task).to_dict(),
                     "role": _role(task), "statuses": [_status_json(s) for s in task.statuses]}
    if "labels" in info:
        out["labels"] = list((info["labels"] or {}).get("labels") or [])
    for key in ("discovery", "container"):
        if key in info:
            out[key] = info[key]
    return out


def _status_json(status: JsonDict) -> JsonDict:
    out = {"state": status["state"], "timestamp": status.get("timestamp", 0.0)}
    if "container_status" in status:
        out["container_status"] = status["container_status"]
    return out


def _executors(tasks: list[AgentTask]) -> dict[tuple[str, str], list[AgentTask]]:
    """Tasks by (framework, executor), in the order they came."""
    out: dict[tuple[str, str], list[AgentTask]] = {}
    for task in tasks:
        out.setdefault((task.framework_id, task.executor_id), []).append(task)
    return out


def executor_json(tasks: list[AgentTask]) -> JsonDict:
    """One executor with its tasks: live ones under `tasks`, ended ones under `completed_tasks`."""
    first = tasks[0]
    held = Resources()
    for t in tasks:
        if t.state not in TERMINAL_TASK_STATES:
            held = held + _resources(t)
    if all(t.state in TERMINAL_TASK_STATES for t in tasks):
        held = _resources(first)
    out: JsonDict = {"id": first.executor_id, "name": executor_name(first),
                     "source": first.executor_id if first.executor_info is None else
                     str(first.executor_info.get("source") or ""),
                     "container": first.executor_run if first.group is not None else first.container_id,
                     "directory": str(_executor_directory(first)),
                     "resources": held.to_dict(), "role": _role(first)}
    if "labels" in first.info:
        out["labels"] = list((first.info["labels"] or {}).get("labels") or [])
    out.update({"tasks": [task_json(t) for t in tasks if t.state not in TERMINAL_TASK_STATES],
                "queued_tasks": [],
                "completed_tasks": [task_json(t) for t in tasks if t.state in TERMINAL_TASK_STATES]})
    return out


def _executor_directory(task: AgentTask) -> object:
    """The executor's sandbox: a command task's own; a group's holds `tasks/<task id>` of each task."""
    if task.sandbox is None:
        return ""
    return task.sandbox.parent.parent if task.in_default_group else task.sandbox


def framework_json(framework_id: str, brief: JsonDict, live: list[AgentTask], ended: list[AgentTask]) -> JsonDict:
    out: JsonDict = {"id": framework_id, "name": brief.get("name", ""), "user": brief.get("user", ""),
                     "failover_timeout": float(brief.get("failover_timeout", 0.0) or 0.0),
                     "checkpoint": bool(brief.get("checkpoint", False)), "hostname": brief.get("hostname", "")}
    if brief.get("principal"):
        out["principal"] = brief["principal"]
    if any(c.get("type") == "MULTI_ROLE" for c in brief.get("capabilities") or []):
        out["roles"] = list(brief.get("roles") or [])
    else:
        out["role"] = brief.get("role") or "*"
    running = _executors(live)
    done = {key: tasks for key, tasks in _executors(ended).items() if key not in running}
    out["executors"] = [executor_json(tasks + [t for t in ended if (t.framework_id, t.executor_id) == key])
                        for key, tasks in running.items()]
    out["completed_executors"] = [executor_json(tasks) for tasks in done.values()]
    return out


def frameworks(core: AgentCore) -> tuple[list[JsonDict], list[JsonDict]]:
    """(frameworks, completed_frameworks) of the agent's /state."""
    live = list(core.tasks.values())
    ended = [t for t in core.completed if t.state in TERMINAL_TASK_STATES]
    ids = list(dict.fromkeys([t.framework_id for t in live] + [t.framework_id for t in ended]))
    active, completed = [], []
    for fw_id in ids:
        mine_live = [t for t in live if t.framework_id == fw_id]
        mine_ended = [t for t in ended if t.framework_id == fw_id]
        brief = (mine_live or mine_ended)[0].framework
        entry = framework_json(fw_id, brief, mine_live, mine_ended)
        (completed if fw_id in core.shut_down_frameworks and not mine_live else active).append(entry)
    return active, completed


# ---- whole answers ----------------------------------------------------------

def allocated(core: AgentCore) -> Resources:
    held = Resources()
    for task in core.tasks.values():
        if task.state not in TERMINAL_TASK_STATES:
            held = held + _resources(task)
    return held


def agent_total(core: AgentCore) -> Resources:
    """The agent's resources with the reservations the master made here (its checkpointed resources)."""
    return with_checkpointed(core.info.resources, Resources.from_json(core.checkpointed))


def state_json(core: AgentCore, flags: dict[str, str], start_time: float, master_hostname: str) -> JsonDict:
    """Mesos's agent /state."""
    info = core.info
    build = build_info()
    active, completed = frameworks(core)
    total, used = agent_total(core), allocated(core)
    out: JsonDict = {k: build[k] for k in SUMMARY}
    out.update({"start_time": start_time, "id": core.agent_id or "", "pid": core.pid, "hostname": info.hostname,
                "capabilities": list(AGENT_CAPABILITIES), "resources": total.to_dict(),
                "reserved_resources": {role: r.to_dict() for role, r in total.by_role().items()},
                "unreserved_resources": total.unreserved().to_dict(),
                "reserved_resources_full": {role: r.to_json() for role, r in total.by_role().items()},
                "unreserved_resources_full": total.unreserved().to_json(),
                "reserved_resources_allocated": {role: r.to_dict() for role, r in used.by_role().items()},
                "unreserved_resources_allocated": used.unreserved().to_dict(),
                "resource_providers": [], "attributes": attributes_dict(info.attributes),
                "master_hostname": master_hostname, "flags": flags, "frameworks": active,
                "completed_frameworks": completed})
    return out


def usage(task: AgentTask, now: float | None = None) -> JsonDict:
    """ResourceStatistics of a live task: its limits, and its main process's CPU times and memory."""
    res = _resources(task)
    stats: JsonDict = {"cpus_soft_limit": res.scalar("cpus"), "cpus_limit": res.scalar("cpus"),
                       "mem_limit_bytes": int(res.scalar("mem") * 1024 * 1024),
                       "timestamp": time.time() if now is None else now}
    proc = _proc_stat(task.pid)
    if proc is not None:
        stats.update(proc)
    return stats


def _proc_stat(pid: int | None) -> JsonDict | None:
    """CPU times and resident memory of one process from /proc (None when it is gone or unknown)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/statm", "rb") as f:
            rss_pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return {"cpus_user_time_secs": int(fields[11]) / CLOCK_TICKS, "cpus_system_time_secs": int(fields[12]) / CLOCK_TICKS,
            "mem_rss_bytes": rss_pages * PAGE, "processes": 1, "threads": int(fields[17])}


def containers_json(core: AgentCore) -> list[JsonDict]:
    """Mesos's agent /containers: one entry per live executor container."""
    out = []
    for (fw_id, executor_id), tasks in _executors(list(core.tasks.values())).items():
        first = tasks[0]
        out.append({"container_id": first.container_id, "executor_id": executor_id,
                    "executor_name": executor_name(first), "framework_id": fw_id,
                    "source": first.executor_id if first.executor_info is None else "",
                    "statistics": usage(first), "status": {"container_id": {"value": first.container_id}}})
    return out


def monitor_statistics_json(core: AgentCore) -> list[JsonDict]:
    """Mesos's (deprecated) /monitor/statistics: /containers without the container fields."""
    return [{k: v for k, v in c.items() if k not in ("container_id", "status")} for c in containers_json(core)]


def agent_flags(cfg: Any, work_dir: str, port: int, hostname: str) -> dict[str, str]:
    """The agent's flags under Mesos's names where one means the same, else ours; all strings."""
    flags = {"master": cfg.master, "work_dir": work_dir, "hostname": hostname,
             "ip": cfg.advertise_ip or cfg.host, "port": str(port), "resources": cfg.resources or "",
             "attributes": cfg.attributes or "", "default_role": "*",
             "containerizers": "docker,mesos" if cfg.use_docker and not cfg.simulate else "mesos",
             "docker_socket": cfg.docker_host or "/var/run/docker.sock", "docker_kill_orphans": "false",
             "gc_delay": mesos_duration(cfg.gc_delay), "launcher": "posix",
             "sandbox_directory": "/mnt/mesos/sandbox", "strict": "true", "switch_user": "true",
             "executor_shutdown_grace_period": mesos_duration(cfg.default_grace),
             "http_command_executor": "false",
             # ours (no Mesos flag has their meaning)
             "allowed_host_paths": ":".join(str(p) for p in cfg.allowed_host_paths), "hdfs": cfg.hdfs or "",
             "fetcher_allowed_roots": ":".join(str(p) for p in cfg.fetcher_allowed_roots),
             "allow_root_tasks": str(cfg.allow_root_tasks).lower(),
             "simulate": str(cfg.simulate).lower(), "status_update_retry_interval": mesos_duration(cfg.retry_interval)}
    return dict(sorted(flags.items()))


# Agent keys that stay 0 here: no resource providers, no provisioner, no preemption, no fetcher cache.
ZERO_METRICS = ("containerizer/fetcher/cache_size_total_bytes", "containerizer/fetcher/cache_size_used_bytes",
                "containerizer/mesos/container_destroy_errors",
                "containerizer/mesos/provisioner/bind/remove_rootfs_errors",
                "containerizer/mesos/provisioner/remove_container_errors", "resource_provider_manager/events/disconnect",
                "resource_provider_manager/events/subscribe", "resource_provider_manager/subscribed",
                "slave/executors_preempted", "slave/invalid_framework_messages", "slave/invalid_status_updates",
                "slave/recovery_errors")


def metrics_json(core: AgentCore, start_time: float, gc_delay_s: float) -> dict[str, float]:
    """The agent's /metrics/snapshot with Mesos 1.12's keys (the zeros above are documented in README)."""
    out: dict[str, float] = dict.fromkeys(ZERO_METRICS, 0.0)
    c = core.counters
    out.update(percentiles("containerizer/docker/image_pull_ms", list(core.image_pull_ms)))
    out.update({"containerizer/fetcher/task_fetches_failed": float(c.get("fetches_failed", 0)),
                "containerizer/fetcher/task_fetches_succeeded": float(c.get("fetches_succeeded", 0)),
                "gc/path_removals_failed": 0.0, "gc/path_removals_succeeded": float(c.get("gc_removals", 0)),
                "gc/path_removals_pending": float(sum(1 for t in core.completed if t.sandbox and t.sandbox.exists())),
                "slave/container_launch_errors": float(c.get("launch_errors", 0)),
                "slave/executor_directory_max_allowed_age_secs": gc_delay_s,
                "slave/frameworks_active": float(len({t.framework_id for t in core.tasks.values()})),
                "slave/registered": 1.0 if core.registered else 0.0,
                "slave/recovery_time_secs": core.recovery_s, "slave/uptime_secs": time.time() - start_time,
                "slave/valid_framework_messages": float(c.get("framework_messages", 0)),
                "slave/valid_status_updates": float(c.get("status_updates", 0))})
    live = list(core.tasks.values())
    executors = _executors(live)
    out.update({"slave/executors_registering": float(sum(1 for ts in executors.values()
                                                         if all(t.state == "TASK_STAGING" for t in ts))),
                "slave/executors_running": float(len(executors)),
                "slave/executors_terminating": float(sum(1 for ts in executors.values()
                                                         if any(t.state == "TASK_KILLING" for t in ts))),
                "slave/executors_terminated": float(c.get("executors_terminated", 0))})
    for state in ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING"):
        out[f"slave/tasks_{state[5:].lower()}"] = float(sum(1 for t in live if t.state == state))
    for state in ("failed", "finished", "gone", "killed", "lost"):
        out[f"slave/tasks_{state}"] = float(c.get(f"tasks_{state}", 0))
    total, used = agent_total(core), allocated(core)
    for name in ("cpus", "mem", "disk", "gpus"):
        t, u = total.scalar(name), used.scalar(name)
        out.update({f"slave/{name}_total": t, f"slave/{name}_used": u, f"slave/{name}_percent": u / t if t else 0.0,
                    f"slave/{name}_revocable_total": 0.0, f"slave/{name}_revocable_used": 0.0,
                    f"slave/{name}_revocable_percent": 0.0})
    out.update(system_metrics())
    return dict(sorted(out.items()))


# ---- the v1 operator API (agent.proto Response.*) ------------------------------

def v1_task(task: AgentTask) -> JsonDict:
    """A Task (mesos.proto) as the agent keeps it."""
    info = task.info
    role = _role(task)
    out: JsonDict = {"name": info.get("name", ""), "task_id": {"value": task.task_id},
                     "framework_id": {"value": task.framework_id}, "agent_id": {"value": task.agent_id},
                     "state": task.state,
                     "resources": [r if "allocation_info" in r else {**r, "allocation_info": {"role": role}}
                                   for r in info.get("resources") or () if isinstance(r, dict)],
                     "statuses": list(task.statuses)}
    if task.executor_info is not None:
        out["executor_id"] = {"value": task.executor_id}
    if task.last_status is not None:
        out["status_update_state"] = task.last_status["state"]
        out["status_update_uuid"] = task.last_status.get("uuid", "")
    for key in ("labels", "discovery", "container", "health_check", "kill_policy"):
        if key in info:
            out[key] = info[key]
    return out


def executor_info(task: AgentTask) -> JsonDict:
    """The ExecutorInfo a task runs under: its own (custom or default), or the command executor's."""
    if task.executor_info is not None:
        return {**task.executor_info, "framework_id": {"value": task.framework_id}}
    out: JsonDict = {"executor_id": {"value": task.task_id}, "framework_id": {"value": task.framework_id},
                     "name": executor_name(task), "source": task.task_id,
                     "resources": [r for r in task.info.get("resources") or () if isinstance(r, dict)]}
    if "labels" in task.info:
        out["labels"] = task.info["labels"]
    return out


def get_tasks(core: AgentCore) -> JsonDict:
    live = list(core.tasks.values())
    return {"pending_tasks": [], "queued_tasks": [],
            "launched_tasks": [v1_task(t) for t in live if t.state not in TERMINAL_TASK_STATES],
            "terminated_tasks": [v1_task(t) for t in live if t.state in TERMINAL_TASK_STATES],
            "completed_tasks": [v1_task(t) for t in core.completed]}


def get_executors(core: AgentCore) -> JsonDict:
    running = _executors(list(core.tasks.values()))
    ended = {key: tasks for key, tasks in _executors(list(core.completed)).items() if key not in running}
    return {"executors": [{"executor_info": executor_info(ts[0])} for ts in running.values()],
            "completed_executors": [{"executor_info": executor_info(ts[0])} for ts in ended.values()]}


def _framework_info(framework_id: str, brief: JsonDict) -> JsonDict:
    return {"user": brief.get("user", ""), "name": brief.get("name", ""), "id": {"value": framework_id},
            **{k: brief[k] for k in ("role", "roles", "capabilities", "principal", "failover_timeout",
                                     "checkpoint", "hostname") if k in brief}}


def get_frameworks(core: AgentCore) -> JsonDict:
    live = {t.framework_id: t.framework for t in core.tasks.values()}
    ended = {t.framework_id: t.framework for t in core.completed if t.framework_id not in live}
    return {"frameworks": [{"framework_info": _framework_info(i, b)} for i, b in live.items()
                           if i not in core.shut_down_frameworks],
            "completed_frameworks": [{"framework_info": _framework_info(i, b)} for i, b in
                                     {**ended, **{i: b for i, b in live.items() if i in core.shut_down_frameworks}}
                                     .items()]}


def get_containers(core: AgentCore) -> JsonDict:
    out = []
    for (fw_id, executor_id), tasks in _executors(list(core.tasks.values())).items():
        first = tasks[0]
        status: JsonDict = {"container_id": {"value": first.container_id}}
        if first.pid:
            status["executor_pid"] = first.pid
        out.append({"framework_id": {"value": fw_id}, "executor_id": {"value": executor_id},
                    "executor_name": executor_name(first), "container_id": {"value": first.container_id},
                    "container_status": status, "resource_statistics": usage(first)})
    return {"containers": out}


def get_agent(core: AgentCore) -> JsonDict:
    info = core.info
    agent: JsonDict = {"hostname": info.hostname, "port": info.port,
                       "resources": [{k: v for k, v in r.items() if k != "role"} for r in info.resources.to_json()]}
    if info.attributes:
        agent["attributes"] = info.attributes
    if core.agent_id:
        agent["id"] = {"value": core.agent_id}
    return {"agent_info": agent}


def get_state(core: AgentCore) -> JsonDict:
    return {"get_tasks": get_tasks(core), "get_executors": get_executors(core),
            "get_frameworks": get_frameworks(core)}
