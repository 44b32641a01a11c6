"""What the master keeps on disk: its registered frameworks (soft state is rebuilt from agents).

`<work_dir>/master.json` = {"frameworks": {id: {"info": FrameworkInfo,
"failover_timeout": s, "registered_time": t}}}. Writes are atomic and
debounced by the caller; a restarted master reads them back so old
framework ids re-subscribe with their failover timeouts intact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scylla_singa.common.files import read_json, write_json_atomic


class MasterStore:
    """Framework registry persisted under a work dir; a None dir keeps nothing (in-memory only)."""

    def __init__(self, work_dir: Path | None) -> None:
        self.path = work_dir / "master.json" if work_dir else None
        self.frameworks: dict[str, dict[str, Any]] = {}
        if self.path:
            data = read_json(self.path, {}) or {}
            self.frameworks = dict(data.get("frameworks", {}))

    def put(self, framework_id: str, info: dict[str, Any], failover_timeout: float, registered: float) -> None:
        self.frameworks[framework_id] = {"info": info, "failover_timeout": failover_timeout,
                                         "registered_time": registered}

    def remove(self, framework_id: str) -> None:
        self.frameworks.pop(framework_id, None)

    def flush(self) -> None:
        """Write the registry now (atomic); a no-op without a work dir."""
        if self.path:
            write_json_atomic(self.path, {"frameworks": self.frameworks})
