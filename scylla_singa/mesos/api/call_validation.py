"""The stateless checks Mesos applies to a decoded v1 Call before any handler sees it. Pure.

Why one module: every HTTP API of the master and the agent (scheduler,
executor, master and agent operator) refuses a malformed call the same way,
with 400 and "Failed to validate <api>::Call: <why>" (measured on Mesos
1.12, tests/fixtures/apache_mesos/errors/). The codec has already checked
types and required fields; what is left is what the .proto files cannot say:
a `type` that is set, the payload its type needs, ids that must be present,
and values with rules of their own (an acknowledgement's 16-byte uuid). The
checks that need state (is the framework known, is this its stream) stay
with the handlers.

Each function takes the dict form (mesos/api/codec.py) and raises
`CallInvalid` with Mesos's text, or returns None.
"""

from __future__ import annotations

import base64
import binascii
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


def _payload(api: str, call: JsonDict, needs: frozenset[str]) -> str:
    """The call's type, after checking it is set and carries its payload."""
    kind = call.get("type")
    if not kind:
        raise CallInvalid(api, "Expecting 'type' to be present")
    if kind in needs and kind.lower() not in call:
        raise CallInvalid(api, f"Expecting '{kind.lower()}' to be present")
    return kind


def is_uuid(text: Any) -> bool:
    """Whether `text` is base64 of 16 bytes (a UUID as the JSON form carries `bytes`)."""
    if not isinstance(text, str):
        return False
    try:
        return len(base64.b64decode(text, validate=True)) == 16
    except (binascii.Error, ValueError):
        return False


def validate_scheduler_call(call: JsonDict, principal: str | None = None) -> str:
    """Mesos's scheduler::Call validation; returns the call type."""
    api = "scheduler"
    kind = _payload(api, call, SCHEDULER_PAYLOADS)
    if kind == "SUBSCRIBE":
        info = call["subscribe"].get("framework_info") or {}
        if (value(call.get("framework_id")) or "") != (value(info.get("id")) or ""):
            raise CallInvalid(api, "'framework_id' differs from 'subscribe.framework_info.id'")
        if principal is not None and info.get("principal") not in (None, principal):
            raise CallInvalid(api, f"Authenticated principal '{principal}' does not match principal "
                                   f"'{info['principal']}' set in `FrameworkInfo`")
        _check_framework_info(api, info)
        return kind
    if not value(call.get("framework_id")):
        raise CallInvalid(api, "Expecting 'framework_id' to be present")
    if kind == "ACKNOWLEDGE" and not is_uuid(call["acknowledge"].get("uuid")):
        raise CallInvalid(api, "Not a valid UUID")
    if kind == "UPDATE_FRAMEWORK":
        info_id = value((call["update_framework"].get("framework_info") or {}).get("id"))
        if info_id != value(call.get("framework_id")):
            raise CallInvalid(api, "'framework_id' differs from 'update_framework.framework_info.id'")
        _check_framework_info(api, call["update_framework"]["framework_info"])
    return kind


def has_capability(info: JsonDict, name: str) -> bool:
    """Whether a FrameworkInfo (dict form) declares capability `name`."""
    return any(isinstance(c, dict) and c.get("type") == name for c in info.get("capabilities") or ())


def framework_roles(info: JsonDict) -> list[str]:
    """The roles a FrameworkInfo subscribes with: `roles` when MULTI_ROLE, else its one `role` ("*" by default)."""
    if has_capability(info, "MULTI_ROLE"):
        return list(info.get("roles") or ())
    return [info.get("role") or "*"]


def _check_framework_info(api: str, info: JsonDict) -> None:
    """Mesos's FrameworkInfo rules on roles (MULTI_ROLE takes `roles`, others take `role`)."""
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
    return _payload("agent", call, AGENT_OPERATOR_PAYLOADS)
