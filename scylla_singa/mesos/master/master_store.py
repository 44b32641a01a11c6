"""What the master keeps on disk: its registered frameworks (soft state is rebuilt from agents).

`<work_dir>/master.json` = {"frameworks": {id: {"info": FrameworkInfo,
"failover_timeout": s, "registered_time": t}}}. Writes are atomic and
debounced by the caller; a restarted master reads them back so old
framework ids re-subscribe with their failover timeouts intact.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

from scylla_singa.common.files import read_json, write_json_atomic


class MasterStore:
    """Framework registry persisted under a work dir; a None dir keeps nothing (in-memory only)."""

    def __init__(self, work_dir: Path | None) -> None:
        self.path = work_dir / "master.json" if work_dir else None
        self.frameworks: dict[str, dict[str, Any]] = {}
        # what the master's registrar/* metrics report: the time to read and to write the store
        self.fetch_ms = 0.0
        self.store_ms: deque[float] = deque(maxlen=1000)
        if self.path:
            started = time.perf_counter()
            data = read_json(self.path, {}) or {}
            self.frameworks = dict(data.get("frameworks", {}))
            self.fetch_ms = (time.perf_counter() - started) * 1000.0

    def put(self, framework_id: str, info: dict[str, Any], failover_timeout: float, registered: float) -> None:
        self.frameworks[framework_id] = {"info": info, "failover_timeout": failover_timeout,
                                         "registered_time": registered}

    def remove(self, framework_id: str) -> None:
        self.frameworks.pop(framework_id, None)

    def flush(self) -> None:
        """Write the registry now (atomic); a no-op without a work dir."""
        if self.path:
            started = time.perf_counter()
            write_json_atomic(self.path, {"frameworks": self.frameworks})
            self.store_ms.append((time.perf_counter() - started) * 1000.0)

    def size_bytes(self) -> int:
        """The store's size on disk (0 without a work dir or before the first write)."""
        try:
            return self.path.stat().st_size if self.path else 0
        except OSError:
            return 0
