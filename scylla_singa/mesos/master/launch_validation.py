"""Mesos's checks of a LAUNCH or LAUNCH_GROUP in an ACCEPT, before anything reaches an agent. Pure.

One function, `check_launch`, judges the tasks of one operation (one task
for LAUNCH, the whole group for LAUNCH_GROUP, which starts all or nothing)
against what is left of the accepted offers, and returns what they use
(their resources plus, for an executor not yet running there, the
executor's). It raises `LaunchInvalid` with the message the framework gets
in TASK_ERROR.

The rules are Mesos 1.12's (master/validation.cpp), with its texts where
the framework may rely on them:
- a task has CommandInfo or ExecutorInfo, not both (a group's tasks have
  CommandInfo only and the group a DEFAULT or CUSTOM executor, not in a
  DOCKER container); a CUSTOM executor has a command, a DEFAULT one none; an
  executor already known on the agent must be launched again with the same
  ExecutorInfo;
- a default executor runs one task group (a custom one any number);
- task ids are unique among the framework's live tasks and within the group;
- resources: a MULTI_ROLE framework says in every resource's
  `allocation_info` the role it was offered (one role per task); for other
  frameworks the master fills it in (Mesos injects it); task and executor
  together fit in what is left;
- the containers pass this cluster's ContainerInfo rules (api/container_info).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scylla_singa.mesos.api.container_info import SpecError, validate_container
from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.resources import ResourceError, Resources
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .master_records import FrameworkRec

JsonDict = dict[str, Any]


class LaunchInvalid(ValueError):
    """The operation's tasks are refused (TASK_ERROR with REASON_TASK_INVALID / REASON_TASK_GROUP_INVALID)."""


@dataclass(frozen=True)
class Launch:
    """What a valid operation uses: the tasks' resources each, and the new executor's (if one starts)."""

    tasks: list[tuple[JsonDict, Resources]]
    executor: JsonDict | None          # the ExecutorInfo that starts with these tasks (None: none new)
    executor_resources: Resources

    @property
    def total(self) -> Resources:
        out = self.executor_resources
        for _, need in self.tasks:
            out = out + need
        return out

    @property
    def taken(self) -> Resources:
        """What it takes from its offers: a shared volume once, however many of its tasks use it."""
        total = self.total
        if not total.has_reservations():   # no volume at all (the common case)
            return total
        shared: dict[str, float] = {}
        for _, need in self.tasks:
            for key, amount in need.shared().scalars.items():
                shared[key] = max(shared.get(key, 0.0), amount)
        return total.without_shared() + Resources(shared)


def check_launch(fw: FrameworkRec, tasks: list[JsonDict], group_executor: JsonDict | None, agent_id: str,
                 remaining: Resources, offer_role: str) -> Launch:
    """Judge one LAUNCH (one task, `group_executor` None) or LAUNCH_GROUP (see module docstring)."""
    if group_executor is not None:
        _check_group(fw, tasks, group_executor)
    seen: set[str] = set()
    checked = []
    for task in tasks:
        task_id = _check_task(fw, task, agent_id, grouped=group_executor is not None, seen=seen)
        need = _resources(task.get("resources"), fw, offer_role)
        if need.is_empty():
            raise LaunchInvalid(f"Task {task_id} uses no resources")
        _container(task.get("container"), need)
        checked.append((task, need))
    executor = group_executor if group_executor is not None else tasks[0].get("executor")
    new_executor, executor_need = None, Resources()
    if executor is not None:
        known = fw.executors.get((agent_id, value(executor.get("executor_id")) or ""))
        if known is None:
            new_executor, executor_need = executor, _resources(executor.get("resources"), fw, offer_role)
            _container(executor.get("container"), executor_need)
            if not executor_need.shared().is_empty():   # as Mesos refuses them
                raise LaunchInvalid(f"Executor resources {executor_need} should not contain any shared resources")
        elif group_executor is not None and group_executor.get("type", "DEFAULT") == "DEFAULT":
            raise LaunchInvalid(f"Executor '{value(executor.get('executor_id'))}' already runs a task group on "
                                "this agent; this cluster runs one task group per default executor: give the "
                                "new group its own executor_id")
        elif _comparable(known["info"]) != _comparable(executor):
            raise LaunchInvalid(f"ExecutorInfo is not compatible with existing ExecutorInfo of executor "
                                f"'{value(executor.get('executor_id'))}'")
    launch = Launch(checked, new_executor, executor_need)
    if not remaining.contains(launch.taken):
        raise LaunchInvalid(f"Total resources {launch.taken} required by task and its executor is more than "
                            f"available {remaining}")
    return launch


def _check_task(fw: FrameworkRec, task: JsonDict, agent_id: str, grouped: bool, seen: set[str]) -> str:
    task_id = value(task.get("task_id")) or ""
    if not task_id:
        raise LaunchInvalid("Task has no task_id")
    if task_id in seen:
        raise LaunchInvalid(f"Task has duplicate ID: {task_id}")
    seen.add(task_id)
    existing = fw.tasks.get(task_id)
    if existing is not None and existing.state not in TERMINAL_TASK_STATES:
        raise LaunchInvalid(f"Task has duplicate ID: {task_id}")
    if not task.get("name"):
        raise LaunchInvalid(f"Task {task_id} has no name")
    if value(task.get("agent_id")) not in (None, agent_id):
        raise LaunchInvalid(f"Task uses invalid agent: {value(task.get('agent_id'))} (the offers are for "
                            f"agent {agent_id})")
    has_command, has_executor = isinstance(task.get("command"), dict), isinstance(task.get("executor"), dict)
    if grouped:
        if has_executor:
            raise LaunchInvalid(f"'TaskInfo.executor' must not be set for task {task_id} of a task group")
        if not has_command:
            raise LaunchInvalid(f"Task {task_id} of a task group must have a CommandInfo")
        if (task.get("container") or {}).get("type") == "DOCKER":
            raise LaunchInvalid(f"Docker ContainerInfo is not supported on task {task_id} of a task group "
                                "(give it a MESOS container, with a Docker image if it needs one)")
    elif has_command == has_executor:
        raise LaunchInvalid("Task should have at least one (but not both) of CommandInfo or ExecutorInfo present")
    if has_executor:
        _check_executor(fw, task["executor"], "CUSTOM")
    return task_id


def _check_group(fw: FrameworkRec, tasks: list[JsonDict], executor: JsonDict) -> None:
    if not tasks:
        raise LaunchInvalid("Task group must not be empty")
    if executor.get("type", "DEFAULT") not in ("DEFAULT", "CUSTOM"):
        raise LaunchInvalid("Unknown executor type")
    if (executor.get("container") or {}).get("type") == "DOCKER":
        raise LaunchInvalid("Docker ContainerInfo is not supported on the executor")
    _check_executor(fw, executor, "DEFAULT")


def _check_executor(fw: FrameworkRec, executor: JsonDict, default_type: str) -> None:
    executor_id = value(executor.get("executor_id"))
    if not executor_id:
        raise LaunchInvalid("ExecutorInfo has no executor_id")
    framework_id = value(executor.get("framework_id"))
    if framework_id is not None and framework_id != fw.id:
        raise LaunchInvalid(f"ExecutorInfo has an invalid FrameworkID (Actual: {framework_id} vs "
                            f"Expected: {fw.id})")
    kind = executor.get("type", default_type)
    if kind == "CUSTOM" and not isinstance(executor.get("command"), dict):
        raise LaunchInvalid("'ExecutorInfo.command' must be set for 'CUSTOM' executor")
    if kind == "DEFAULT" and executor.get("command"):
        raise LaunchInvalid("'ExecutorInfo.command' must not be set for 'DEFAULT' executor")


def _resources(items: Any, fw: FrameworkRec, offer_role: str) -> Resources:
    """A Resource list, after Mesos's allocation checks: a MULTI_ROLE framework names the offer's role in
    every resource's allocation_info; for the others Mesos fills it in."""
    multi = fw.has_capability("MULTI_ROLE")
    roles = set()
    for r in items or ():
        role = ((r.get("allocation_info") or {}).get("role") if isinstance(r, dict) else None)
        if role is None and multi:
            raise LaunchInvalid(f"Invalid resources: resource '{r.get('name') if isinstance(r, dict) else r}' "
                                "has no allocation_info: a MULTI_ROLE framework gives back the allocation_info "
                                "of the offer")
        roles.add(role or offer_role)
    if len(roles) > 1:
        raise LaunchInvalid("Invalid resources: the resources are allocated to several roles "
                            f"({', '.join(sorted(roles))}); a task or executor uses one")
    if roles and roles != {offer_role}:
        raise LaunchInvalid(f"Invalid resources: allocated to role '{roles.pop()}', but the offers are allocated "
                            f"to role '{offer_role}'")
    try:
        return Resources.from_json(items)
    except ResourceError as exc:
        raise LaunchInvalid(f"Invalid resources: {exc}") from None


def _container(container: Any, need: Resources) -> None:
    try:
        validate_container(container, need)
    except SpecError as exc:
        raise LaunchInvalid(str(exc)) from None


def _comparable(executor: JsonDict) -> JsonDict:
    """An ExecutorInfo without what a framework may leave out when it launches on a known executor."""
    return {k: v for k, v in executor.items() if k not in ("framework_id",)}
