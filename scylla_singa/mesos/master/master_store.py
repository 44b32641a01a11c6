"""What the master keeps on disk: its registered frameworks and what operators set (soft state is rebuilt
from agents).

`<work_dir>/master.json` = {"frameworks": {id: {"info": FrameworkInfo,
"failover_timeout": s, "registered_time": t}}, "weights": {role: w},
"quotas": [QuotaConfig], "maintenance": {"windows": [...], "down":
[MachineID]}}. Writes are atomic; a framework's are debounced by the
caller, an operator's change is written at once. A restarted master reads
them back so old framework ids re-subscribe with their failover timeouts
intact, and roles keep their weights and quotas and machines their
maintenance, as Mesos's registry keeps them.

Reading back trusts nothing: a store written by an older master (before
SUBSCRIBE was validated as it is now) or edited by hand may hold records
that would break /master/state or the allocator. Each record passes the
checks a SUBSCRIBE passes (record_problem), each weight, quota and
maintenance window the checks of its call; one that does not is skipped
with a log line, and the master starts without it.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from pathlib import Path
from typing import Any

from scylla_singa.common.files import read_json, write_json_atomic
from scylla_singa.mesos.api.call_validation import CallInvalid, check_framework_info
from scylla_singa.mesos.api.codec import message_from_dict, to_dict
from scylla_singa.mesos.api.proto import mesos_pb2
from .maintenance import Maintenance, MaintenanceInvalid
from .quota import Quota, QuotaInvalid, quota_from_config

log = logging.getLogger(__name__)


def record_problem(framework_id: Any, record: Any) -> str | None:
    """What is wrong with one stored framework record, or None: its FrameworkInfo must convert as a
    SUBSCRIBE's would, pass call_validation's FrameworkInfo rules, and carry the same id and timeout."""
    if not isinstance(framework_id, str) or not framework_id:
        return "its id is not a string"
    if not isinstance(record, dict) or not isinstance(record.get("info"), dict):
        return "it has no FrameworkInfo object"
    timeout, registered = record.get("failover_timeout", 0), record.get("registered_time", 0)
    for name, number in (("failover_timeout", timeout), ("registered_time", registered)):
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) \
                or number < 0:
            return f"its {name} {number!r} is not a finite, non-negative number"
    try:
        info = to_dict(message_from_dict(mesos_pb2.FrameworkInfo, record["info"]))
        check_framework_info("scheduler", info, "framework_info")
    except CallInvalid as exc:
        return exc.message.removeprefix("Failed to validate scheduler::Call: ")
    except (ValueError, TypeError) as exc:
        return f"its FrameworkInfo does not convert: {exc}"
    if (info.get("id") or {}).get("value", framework_id) != framework_id:
        return "its FrameworkInfo names another framework id"
    return None


class MasterStore:
    """Framework registry persisted under a work dir; a None dir keeps nothing (in-memory only)."""

    def __init__(self, work_dir: Path | None) -> None:
        self.path = work_dir / "master.json" if work_dir else None
        self.frameworks: dict[str, dict[str, Any]] = {}
        # what operators set (UPDATE_WEIGHTS, the quota calls, the maintenance calls), checked on reading
        self.weights: dict[str, float] = {}
        self.quotas: dict[str, Quota] = {}
        self.maintenance = Maintenance()
        # what the master's registrar/* metrics report: the time to read and to write the store
        self.fetch_ms = 0.0
        self.store_ms: deque[float] = deque(maxlen=1000)
        if self.path:
            started = time.perf_counter()
            data = read_json(self.path, {})
            if not isinstance(data, dict):
                log.error("master store %s is not a JSON object: starting with no frameworks", self.path)
                data = {}
            records = data.get("frameworks", {})
            if not isinstance(records, dict):
                log.error("master store %s: 'frameworks' is not an object: starting with no frameworks", self.path)
                records = {}
            for framework_id, record in records.items():
                problem = record_problem(framework_id, record)
                if problem is None:
                    self.frameworks[framework_id] = record
                else:
                    log.error("master store %s: skipping framework %r: %s", self.path, framework_id, problem)
            self._read_operator_settings(data)
            self.fetch_ms = (time.perf_counter() - started) * 1000.0

    def _read_operator_settings(self, data: dict[str, Any]) -> None:
        weights = data.get("weights", {})
        for role, weight in (weights.items() if isinstance(weights, dict) else ()):
            if isinstance(weight, int | float) and not isinstance(weight, bool) and math.isfinite(weight) \
                    and weight > 0 and isinstance(role, str) and role:
                self.weights[role] = float(weight)
            else:
                log.error("master store %s: skipping the weight %r of role %r", self.path, weight, role)
        quotas = data.get("quotas", [])
        for config in quotas if isinstance(quotas, list) else ():
            try:
                role, quota = quota_from_config(config if isinstance(config, dict) else {})
            except QuotaInvalid as exc:
                log.error("master store %s: skipping the quota %.200r: %s", self.path, config, exc)
                continue
            self.quotas[role] = quota
        maintenance = data.get("maintenance") or {}
        try:
            down = [dict(m) for m in maintenance.get("down") or []]
            self.maintenance.set_schedule(self.maintenance.check_schedule({"windows": maintenance.get("windows")}))
            if down:
                self.maintenance.start(down)
        except (MaintenanceInvalid, AttributeError, TypeError, ValueError) as exc:
            log.error("master store %s: skipping the maintenance schedule: %s", self.path, exc)
            self.maintenance = Maintenance()

    def put_operator_settings(self, weights: dict[str, float], quotas: dict[str, Quota],
                              maintenance: Maintenance) -> None:
        """What operators set now; written at once (an operator's change is not debounced)."""
        self.weights, self.quotas, self.maintenance = dict(weights), dict(quotas), maintenance
        self.flush()

    def put(self, framework_id: str, info: dict[str, Any], failover_timeout: float, registered: float) -> None:
        self.frameworks[framework_id] = {"info": info, "failover_timeout": failover_timeout,
                                         "registered_time": registered}

    def remove(self, framework_id: str) -> None:
        self.frameworks.pop(framework_id, None)

    def flush(self) -> None:
        """Write the registry now (atomic); a no-op without a work dir."""
        if self.path:
            started = time.perf_counter()
            write_json_atomic(self.path, {
                "frameworks": self.frameworks, "weights": self.weights,
                "quotas": [self.quotas[role].config(role) for role in sorted(self.quotas)],
                "maintenance": {"windows": self.maintenance.windows, "down": list(self.maintenance.down.values())}})
            self.store_ms.append((time.perf_counter() - started) * 1000.0)

    def size_bytes(self) -> int:
        """The store's size on disk (0 without a work dir or before the first write)."""
        try:
            return self.path.stat().st_size if self.path else 0
        except OSError:
            return 0
