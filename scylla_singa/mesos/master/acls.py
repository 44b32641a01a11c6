"""Authorization: which principal may do what, from a small YAML or JSON file (the master's `--acls`).

Modelled on Apache Mesos's ACLs (`--acls`), with these of its actions:

    permissive: false            # what an action no rule matches gets (default true, as in Mesos)
    register_frameworks:         # SUBSCRIBE in these roles
      - {principals: [alice], roles: [prod, "*"]}
    run_tasks:                   # launch tasks as these users (CommandInfo.user, else FrameworkInfo.user)
      - {principals: [alice], users: [alice, nobody]}
    teardown_frameworks:         # tear down frameworks registered by these principals (operator TEARDOWN)
      - {principals: [ops], framework_principals: ANY}
    register_agents:             # register (and re-register) agents
      - {principals: [scylla-agent]}
    reserve_resources:           # reserve resources for these roles (ACCEPT RESERVE, RESERVE_RESOURCES)
      - {principals: [ops], roles: [ml]}
    unreserve_resources:         # unreserve what these principals reserved
      - {principals: [ops], reserver_principals: [ops]}
    create_volumes:              # make persistent volumes of these roles' reserved disk
      - {principals: [ops], roles: [ml]}
    destroy_volumes:             # destroy volumes these principals created
      - {principals: [ops], creator_principals: [ops]}
    resize_volume:               # grow or shrink these roles' volumes
      - {principals: [ops], roles: [ml]}

Every list of names may be the word ANY. A request is allowed when a rule
of its action names its principal and its object; when no rule does, by
`permissive`. An anonymous caller (an insecure master) has the principal
None, which only ANY matches. A framework always may tear itself down.
Decisions are pure functions of the parsed file (`Acls`), so they are
tested as a table; the master only asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ANY = "ANY"
# action -> the key naming its object (None: the action has no object)
ACTIONS: dict[str, str | None] = {
    "register_frameworks": "roles", "run_tasks": "users", "teardown_frameworks": "framework_principals",
    "register_agents": None, "reserve_resources": "roles", "unreserve_resources": "reserver_principals",
    "create_volumes": "roles", "destroy_volumes": "creator_principals", "resize_volume": "roles",
}
# What each operation on reservations and volumes asks of the ACLs, and what its objects are written as.
OPERATION_ACTIONS = {"RESERVE": ("reserve_resources", "reserve resources for role"),
                     "UNRESERVE": ("unreserve_resources", "unreserve resources reserved by principal"),
                     "CREATE": ("create_volumes", "create volumes for role"),
                     "DESTROY": ("destroy_volumes", "destroy volumes created by principal"),
                     "GROW_VOLUME": ("resize_volume", "grow volumes of role"),
                     "SHRINK_VOLUME": ("resize_volume", "shrink volumes of role")}
MAX_FILE_BYTES = 1 << 20


class AclError(ValueError):
    """An ACL file that cannot be used; the message names the file, the place and what to write."""


@dataclass(frozen=True)
class Rule:
    principals: frozenset[str] | None    # None: ANY
    objects: frozenset[str] | None       # None: ANY (or an action without objects)

    def matches(self, principal: str | None, obj: str | None) -> bool:
        who = self.principals is None or (principal is not None and principal in self.principals)
        what = self.objects is None or (obj is not None and obj in self.objects)
        return who and what


@dataclass(frozen=True)
class Acls:
    permissive: bool = True
    rules: dict[str, tuple[Rule, ...]] = field(default_factory=dict)

    def allows(self, action: str, principal: str | None, obj: str | None = None) -> bool:
        for rule in self.rules.get(action, ()):
            if rule.matches(principal, obj):
                return True
        return self.permissive

    def may_register_framework(self, principal: str | None, role: str) -> bool:
        return self.allows("register_frameworks", principal, role)

    def may_run_as(self, principal: str | None, user: str) -> bool:
        return self.allows("run_tasks", principal, user)

    def may_teardown(self, principal: str | None, framework_principal: str | None) -> bool:
        if principal is not None and principal == framework_principal:
            return True
        return self.allows("teardown_frameworks", principal, framework_principal)

    def may_register_agent(self, principal: str | None) -> bool:
        return self.allows("register_agents", principal)

    def operation_refusal(self, kind: str, operation: dict[str, Any], principal: str | None) -> str | None:
        """Why `principal` may not apply this RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME or SHRINK_VOLUME
        (its payload `operation`), or None: each of its objects must be allowed, as Mesos authorizes it."""
        action, words = OPERATION_ACTIONS[kind]
        for obj in operation_objects(kind, operation):
            if not self.allows(action, principal, obj):
                who = "an anonymous caller" if principal is None else f"principal '{principal}'"
                return f"Not authorized: {who} may not {words} '{obj}' (ACL {action})"
        return None


def operation_objects(kind: str, operation: dict[str, Any]) -> list[str]:
    """The objects an operation is authorized on, each once: the role of what a RESERVE reserves or a
    CREATE, GROW_VOLUME or SHRINK_VOLUME makes of; the principal that made what an UNRESERVE unreserves or a
    DESTROY destroys (what names none is not checked, as in Mesos)."""
    if kind in ("GROW_VOLUME", "SHRINK_VOLUME"):
        items = [operation.get("volume")]
    else:
        items = operation.get("volumes" if kind in ("CREATE", "DESTROY") else "resources") or []
    found: list[str] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        reservation = _last_reservation(item)
        if kind == "DESTROY":
            obj = ((item.get("disk") or {}).get("persistence") or {}).get("principal")
        elif kind == "UNRESERVE":
            obj = reservation.get("principal")
        else:
            obj = reservation.get("role")
        if isinstance(obj, str) and obj not in found:
            found.append(obj)
    return found


def _last_reservation(item: dict[str, Any]) -> dict[str, Any]:
    """A resource's innermost reservation, in the form with `reservations` or the older one (`role`)."""
    stack = item.get("reservations")
    if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
        return stack[-1]
    older = item.get("reservation") if isinstance(item.get("reservation"), dict) else {}
    return {**older, **({"role": item["role"]} if isinstance(item.get("role"), str) else {})}


def _names(value: Any, where: str) -> frozenset[str] | None:
    if value == ANY:
        return None
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    raise AclError(f"{where}: expected a list of names or the word {ANY}")


def parse_acls(data: Any, origin: str) -> Acls:
    """The Acls in a parsed file; AclError says what is wrong and where."""
    if not isinstance(data, dict):
        raise AclError(f"{origin}: expected a mapping with permissive and the actions {', '.join(ACTIONS)}")
    unknown = set(data) - set(ACTIONS) - {"permissive"}
    if unknown:
        raise AclError(f"{origin}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                       f"known: permissive, {', '.join(ACTIONS)}")
    permissive = data.get("permissive", True)
    if not isinstance(permissive, bool):
        raise AclError(f"{origin}: permissive: expected true or false")
    rules: dict[str, tuple[Rule, ...]] = {}
    for action, object_key in ACTIONS.items():
        items = data.get(action, [])
        if not isinstance(items, list):
            raise AclError(f"{origin}: {action}: expected a list of rules")
        parsed = []
        for i, item in enumerate(items):
            where = f"{origin}: {action}[{i}]"
            allowed = {"principals"} | ({object_key} if object_key else set())
            if not isinstance(item, dict) or "principals" not in item or set(item) - allowed:
                raise AclError(f"{where}: expected {{{', '.join(sorted(allowed))}}}")
            objects = _names(item.get(object_key, ANY), f"{where}.{object_key}") if object_key else None
            parsed.append(Rule(_names(item["principals"], f"{where}.principals"), objects))
        rules[action] = tuple(parsed)
    return Acls(permissive, rules)


def load_acls(path: Path) -> Acls:
    """The ACLs in the YAML or JSON file `path` (aliases refused: no YAML bombs)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AclError(f"cannot read ACL file {path}: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise AclError(f"{path}: {len(raw)} bytes; an ACL file is at most {MAX_FILE_BYTES} bytes")
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        raise AclError(f"{path}: not UTF-8 (byte {exc.start})") from None
    try:
        if text.lstrip().startswith("{"):
            data = json.loads(text)
        else:
            _refuse_aliases(text, path)
            data = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise AclError(f"{path}: not valid YAML or JSON: {str(exc).splitlines()[0]}") from None
    return parse_acls(data, str(path))


def _refuse_aliases(text: str, path: Path) -> None:
    """Anchors and aliases let a short file expand without bound: an ACL file has no use for them."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            mark = event.start_mark
            raise AclError(f"{path}:{mark.line + 1}:{mark.column + 1}: YAML anchors and aliases are not allowed "
                           "in an ACL file; write the names out")
