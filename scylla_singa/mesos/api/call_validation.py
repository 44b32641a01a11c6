"""The stateless checks Mesos applies to a decoded v1 Call before any handler sees it. Pure.

Why one module: every HTTP API of the master and the agent (scheduler,
executor, master and agent operator) refuses a malformed call the same way,
with 400 and "Failed to validate <api>::Call: <why>" (measured on Mesos
1.12, tests/fixtures/apache_mesos/errors/). The codec has already checked
types, required fields and the nesting depth; what is left is what the
.proto files cannot say: a `type` that is set, the payload its type needs,
ids that must be present, and values with rules of their own (an
acknowledgement's 16-byte uuid, a failover timeout or a filter that is a
duration). The checks that need state (is the framework known, is this its
stream) stay with the handlers.

Every number in a call must be finite, anywhere in it: Python's json reads
1e400 as inf and the codec takes "Infinity" for a double as Mesos does, but
such a value stored in a FrameworkInfo or a TaskInfo would be written back
by /master/state as `Infinity`, which no JSON parser but Python's reads,
and it breaks the allocator's arithmetic. A non-finite number is refused
with 400 naming its field. What Mesos refuses per task (a negative scalar,
reversed or overlapping ranges) is not refused here: Mesos answers such an
ACCEPT 202 and fails the task (TASK_ERROR), and so does
master/launch_validation.py, giving the offer's resources back.

Each function takes the dict form (mesos/api/codec.py) and raises
`CallInvalid` with Mesos's text, or returns None.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any

from .fields import value

JsonDict = dict[str, Any]


class CallInvalid(ValueError):
    """A call Mesos refuses with 400; `message` is the whole answer text."""

    def __init__(self, api: str, why: str) -> None:
        self.message = f"Failed to validate {api}::Call: {why}"
        super().__init__(self.message)


# Calls whose payload field (the type in lower case) must be present.
SCHEDULER_PAYLOADS = frozenset({
    "SUBSCRIBE", "ACCEPT", "DECLINE", "ACCEPT_INVERSE_OFFERS", "DECLINE_INVERSE_OFFERS", "KILL", "SHUTDOWN",
    "ACKNOWLEDGE", "ACKNOWLEDGE_OPERATION_STATUS", "RECONCILE", "RECONCILE_OPERATIONS", "MESSAGE", "REQUEST",
    "UPDATE_FRAMEWORK"})
MASTER_OPERATOR_PAYLOADS = frozenset({
    "GET_METRICS", "SET_LOGGING_LEVEL", "LIST_FILES", "READ_FILE", "UPDATE_WEIGHTS", "RESERVE_RESOURCES",
    "UNRESERVE_RESOURCES", "CREATE_VOLUMES", "DESTROY_VOLUMES", "GROW_VOLUME", "SHRINK_VOLUME",
    "UPDATE_MAINTENANCE_SCHEDULE", "START_MAINTENANCE", "STOP_MAINTENANCE", "DRAIN_AGENT", "DEACTIVATE_AGENT",
    "REACTIVATE_AGENT", "UPDATE_QUOTA", "SET_QUOTA", "REMOVE_QUOTA", "TEARDOWN", "MARK_AGENT_GONE"})
AGENT_OPERATOR_PAYLOADS = frozenset({
    "GET_METRICS", "SET_LOGGING_LEVEL", "LIST_FILES", "READ_FILE", "LAUNCH_NESTED_CONTAINER",
    "WAIT_NESTED_CONTAINER", "KILL_NESTED_CONTAINER", "REMOVE_NESTED_CONTAINER",
    "LAUNCH_NESTED_CONTAINER_SESSION", "ATTACH_CONTAINER_INPUT", "ATTACH_CONTAINER_OUTPUT", "LAUNCH_CONTAINER",
    "WAIT_CONTAINER", "KILL_CONTAINER", "REMOVE_CONTAINER", "ADD_RESOURCE_PROVIDER_CONFIG",
    "UPDATE_RESOURCE_PROVIDER_CONFIG", "REMOVE_RESOURCE_PROVIDER_CONFIG", "MARK_RESOURCE_PROVIDER_GONE"})
EXECUTOR_PAYLOADS = frozenset({"SUBSCRIBE", "UPDATE", "MESSAGE"})


# The longest duration Mesos's Duration holds (int64 nanoseconds): a failover timeout or a filter's
# refuse_seconds beyond it is refused (Mesos falls back to the default filter; we name the field).
MAX_DURATION_S = (2 ** 63 - 1) / 1e9
# A FrameworkInfo is kept for the framework's life, persisted, and written into every /master/state:
# its JSON may not exceed this (a real one is a few hundred bytes; labels may add a few KB).
MAX_FRAMEWORK_INFO_BYTES = 64 * 1024


def _payload(api: str, call: JsonDict, needs: frozenset[str], numbers_finite: bool = False) -> str:
    """The call's type, after checking it is set, carries its payload and holds finite numbers only
    (`numbers_finite`: the decoder knows they are, codec.decode_call_noting_finite)."""
    kind = call.get("type")
    if not kind:
        raise CallInvalid(api, "Expecting 'type' to be present")
    if kind in needs and kind.lower() not in call:
        raise CallInvalid(api, f"Expecting '{kind.lower()}' to be present")
    bad = None if numbers_finite else non_finite_field(call)
    if bad is not None:
        raise CallInvalid(api, f"'{bad[0]}' is not a finite number ({bad[1]})")
    return kind


def non_finite_field(data: Any) -> tuple[str, float] | None:
    """(the dotted path, the value) of the first NaN or infinite number in a dict form, or None.

    Iterative, so that no shape of input can exhaust the stack (the codec caps the depth anyway). The
    paths are only spelled out when there is a bad number: every call passes here, nearly all finite.
    """
    if _all_finite(data):
        return None
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return path, item
        elif isinstance(item, dict):
            pending.extend((f"{path}.{key}" if path else str(key), child) for key, child in item.items())
        elif isinstance(item, list):
            pending.extend((f"{path}[{i}]", child) for i, child in enumerate(item))
    return None


def _all_finite(data: Any) -> bool:
    """Whether every float in a dict form is finite (non_finite_field's walk without the paths)."""
    pending: list[Any] = [data]
    while pending:
        item = pending.pop()
        if type(item) is float:
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):   # a float subclass
            return False
    return True


def _check_duration(api: str, field: str, seconds: Any, *, negative_ok: bool) -> None:
    """A double that Mesos turns into a Duration: finite (checked for every number), within Duration's
    range, and not negative unless Mesos takes a negative one as zero."""
    if not isinstance(seconds, int | float):
        return
    if abs(seconds) > MAX_DURATION_S:
        raise CallInvalid(api, f"'{field}' ({seconds:g} seconds) is out of range: at most "
                               f"{MAX_DURATION_S:.0f} seconds")
    if seconds < 0 and not negative_ok:
        raise CallInvalid(api, f"'{field}' ({seconds:g}) must not be negative")


def _check_filters(api: str, payload: str, body: JsonDict) -> None:
    """Filters of ACCEPT and DECLINE: refuse_seconds is a Duration (Mesos takes a negative one as 0)."""
    filters = body.get("filters") or {}
    _check_duration(api, f"{payload}.filters.refuse_seconds", filters.get("refuse_seconds"), negative_ok=True)


def is_uuid(text: Any) -> bool:
    """Whether `text` is base64 of 16 bytes (a UUID as the JSON form carries `bytes`)."""
    if not isinstance(text, str):
        return False
    try:
        return len(base64.b64decode(text, validate=True)) == 16
    except (binascii.Error, ValueError):
        return False


def validate_scheduler_call(call: JsonDict, principal: str | None = None, numbers_finite: bool = False) -> str:
    """Mesos's scheduler::Call validation; returns the call type. `numbers_finite`: the decoder found
    every number finite already (codec.decode_call_noting_finite), so the walk looking for one is left out."""
    api = "scheduler"
    kind = _payload(api, call, SCHEDULER_PAYLOADS, numbers_finite)
    if kind == "SUBSCRIBE":
        info = call["subscribe"].get("framework_info") or {}
        if (value(call.get("framework_id")) or "") != (value(info.get("id")) or ""):
            raise CallInvalid(api, "'framework_id' differs from 'subscribe.framework_info.id'")
        if principal is not None and info.get("principal") not in (None, principal):
            raise CallInvalid(api, f"Authenticated principal '{principal}' does not match principal "
                                   f"'{info['principal']}' set in `FrameworkInfo`")
        check_framework_info(api, info, "subscribe.framework_info")
        return kind
    if not value(call.get("framework_id")):
        raise CallInvalid(api, "Expecting 'framework_id' to be present")
    if kind == "ACKNOWLEDGE" and not is_uuid(call["acknowledge"].get("uuid")):
        raise CallInvalid(api, "Not a valid UUID")
    if kind in ("ACCEPT", "DECLINE"):
        _check_filters(api, kind.lower(), call[kind.lower()])
    if kind == "UPDATE_FRAMEWORK":
        info_id = value((call["update_framework"].get("framework_info") or {}).get("id"))
        if info_id != value(call.get("framework_id")):
            raise CallInvalid(api, "'framework_id' differs from 'update_framework.framework_info.id'")
        check_framework_info(api, call["update_framework"]["framework_info"], "update_framework.framework_info")
    return kind


def has_capability(info: JsonDict, name: str) -> bool:
    """Whether a FrameworkInfo (dict form) declares capability `name`."""
    return any(isinstance(c, dict) and c.get("type") == name for c in info.get("capabilities") or ())


def framework_roles(info: JsonDict) -> list[str]:
    """The roles a FrameworkInfo subscribes with: `roles` when MULTI_ROLE, else its one `role` ("*" by default)."""
    if has_capability(info, "MULTI_ROLE"):
        return list(info.get("roles") or ())
    return [info.get("role") or "*"]


def check_framework_info(api: str, info: JsonDict, where: str) -> None:
    """Mesos's FrameworkInfo rules: its failover timeout is a Duration, MULTI_ROLE takes `roles` and the
    others `role`, roles are well formed; and its size is bounded (ours: the master keeps it). Also run
    on every record the master reads back from its store (master_store.py). Raises CallInvalid."""
    _check_framework_info_fields(api, info, where)
    if has_capability(info, "MULTI_ROLE"):
        if "role" in info:
            raise CallInvalid(api, "'FrameworkInfo.role' must not be set when the framework is MULTI_ROLE capable")
        roles = info.get("roles") or []
        if len(set(roles)) != len(roles):
            raise CallInvalid(api, "'FrameworkInfo.roles' contains duplicate items")
    elif info.get("roles"):
        raise CallInvalid(api, "'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable")
    for role in framework_roles(info):
        problem = role_problem(role)
        if problem:
            raise CallInvalid(api, f"Role '{role}' is invalid: {problem}")


def _check_framework_info_fields(api: str, info: JsonDict, where: str) -> None:
    """Finite numbers, a failover timeout in Duration's range and not negative, a bounded size."""
    bad = non_finite_field(info)
    if bad is not None:
        raise CallInvalid(api, f"'{where}.{bad[0]}' is not a finite number ({bad[1]})")
    timeout = info.get("failover_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)):
        raise CallInvalid(api, f"'{where}.failover_timeout' must be a number of seconds, not {timeout!r}")
    _check_duration(api, f"{where}.failover_timeout", timeout, negative_ok=False)
    size = len(json.dumps(info, separators=(",", ":")))
    if size > MAX_FRAMEWORK_INFO_BYTES:
        raise CallInvalid(api, f"'{where}' is {size} bytes of JSON; this master keeps at most "
                               f"{MAX_FRAMEWORK_INFO_BYTES} (shorten its labels or names)")


def role_problem(role: str) -> str | None:
    """What is wrong with a role name by Mesos's rules, or None ("*" and hierarchical "a/b" are fine)."""
    if role == "*":
        return None
    if not role:
        return "Empty role name is invalid"
    for part in role.split("/"):
        if part in ("", ".", ".."):
            return f"Role name must not contain an empty, '.' or '..' component: '{part}'"
        if part.startswith("-"):
            return "Role name must not start with '-'"
        if part == "*":
            return "Role name must not contain '*' as a component"
    if any(c.isspace() or ord(c) < 32 or c in "\\" for c in role):
        return "Role name must not contain whitespace, control characters or backslashes"
    return None


def validate_executor_call(call: JsonDict) -> str:
    """Mesos's executor::Call validation; returns the call type."""
    api = "executor"
    kind = _payload(api, call, EXECUTOR_PAYLOADS)
    if not value(call.get("executor_id")):
        raise CallInvalid(api, "Expecting 'executor_id' to be present")
    if not value(call.get("framework_id")):
        raise CallInvalid(api, "Expecting 'framework_id' to be present")
    if kind == "UPDATE":
        status = call["update"].get("status") or {}
        if not is_uuid(status.get("uuid")):
            raise CallInvalid(api, "'uuid' present in status update is not a valid UUID")
        if status.get("state") == "TASK_STAGING":
            raise CallInvalid(api, "Received TASK_STAGING from executor")
        if status.get("source", "SOURCE_EXECUTOR") != "SOURCE_EXECUTOR":
            raise CallInvalid(api, f"Received Call from executor with source {status['source']}")
        executor_id = value(status.get("executor_id"))
        if executor_id is not None and executor_id != value(call["executor_id"]):
            raise CallInvalid(api, f"ExecutorID in Call: {value(call['executor_id'])} does not match ExecutorID "
                                   f"in TaskStatus: {executor_id}")
    return kind


def validate_master_operator_call(call: JsonDict) -> str:
    """Mesos's master::Call validation; returns the call type."""
    return _payload("master", call, MASTER_OPERATOR_PAYLOADS)


def validate_agent_operator_call(call: JsonDict) -> str:
    """Mesos's agent::Call validation; returns the call type."""
    kind = _payload("agent", call, AGENT_OPERATOR_PAYLOADS)
    if kind in CONTAINER_CALLS:
        problem = container_id_problem(call[kind.lower()].get("container_id"))
        if problem is not None:
            raise CallInvalid("agent", f"'{kind.lower()}.container_id' is invalid: {problem}")
    return kind


# Agent calls naming a container by its ContainerID, which Mesos checks first.
CONTAINER_CALLS = frozenset({"LAUNCH_CONTAINER", "WAIT_CONTAINER", "KILL_CONTAINER", "REMOVE_CONTAINER",
                             "LAUNCH_NESTED_CONTAINER", "WAIT_NESTED_CONTAINER", "KILL_NESTED_CONTAINER",
                             "REMOVE_NESTED_CONTAINER", "LAUNCH_NESTED_CONTAINER_SESSION"})
# Mesos's ContainerID rules: its common ID rules (NAME_MAX, no path separators or control characters), then
# the container's own (a length, no '.' or ' ': it writes nested ids as parent.child).
ID_NAME_MAX = 255
CONTAINER_ID_MAX = 242


def container_id_problem(container_id: Any) -> str | None:
    """What is wrong with a ContainerID (and its parents), in Mesos's words, or None."""
    if not isinstance(container_id, dict):
        return "Expecting a ContainerID object"
    cid = container_id.get("value")
    cid = cid if isinstance(cid, str) else ""
    if not cid:
        return "ID must not be empty"
    if len(cid) > ID_NAME_MAX:
        return f"ID must not be greater than {ID_NAME_MAX} characters"
    if cid in (".", ".."):
        return f"'{cid}' is disallowed"
    if any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in cid):
        return f"'{cid}' contains invalid characters"
    if len(cid) > CONTAINER_ID_MAX:
        return f"'ContainerID.value' '{cid}' exceeds the maximum length ({CONTAINER_ID_MAX})"
    if any(c in ". " for c in cid):
        return f"'ContainerID.value' '{cid}' contains invalid characters"
    parent = container_id.get("parent")
    if parent is not None:
        problem = container_id_problem(parent)
        if problem is not None:
            return f"'ContainerID.parent' is invalid: {problem}"
    return None
