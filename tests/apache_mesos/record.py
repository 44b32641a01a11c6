"""Record a real Mesos master's and agent's protobuf (and JSON) answers as test fixtures.

    MESOS_HOME=$(tools/ensure_mesos.sh) .venv/bin/python -m tests.apache_mesos.record \\
        [--out tests/fixtures/apache_mesos_protobuf]

Starts a master and a command-only agent (see real_mesos.py), runs one command
task with a MULTI_ROLE framework speaking protobuf, and writes:
- scheduler-<EVENT>.pb: the raw records of its event stream (SUBSCRIBED,
  HEARTBEAT, OFFERS, UPDATE TASK_STARTING/RUNNING/FINISHED, reconciliation);
- master-<CALL>.pb/.json and agent-<CALL>.pb/.json: each read-only operator
  call answered in protobuf and in JSON back to back, while the framework is
  still registered and its task completed (GET_METRICS left out: its values
  move between the two answers).
The unit tests (tests/unit/mesos/test_codec_real_mesos.py) check our .proto
files and codec against these bytes with no Mesos installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scylla_singa.mesos.api.codec import AGENT_OPERATOR, MASTER_OPERATOR, MediaType

from . import flows
from .real_mesos import MISSING_MESOS, mesos_home, start_agent, start_master

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "tests" / "fixtures" / "apache_mesos_protobuf"
MASTER_CALLS = tuple(c for c in flows.READ_ONLY_MASTER_CALLS if c != "GET_METRICS")
AGENT_CALLS = ("GET_HEALTH", "GET_FLAGS", "GET_VERSION", "GET_LOGGING_LEVEL", "GET_STATE", "GET_CONTAINERS",
               "GET_FRAMEWORKS", "GET_EXECUTORS", "GET_TASKS", "GET_AGENT", "GET_RESOURCE_PROVIDERS",
               "GET_OPERATIONS")


def record(out: Path) -> list[Path]:
    home = mesos_home()
    if home is None:
        raise SystemExit(f"error: {MISSING_MESOS}")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(name: str, data: bytes) -> None:
        path = out / name
        path.write_bytes(data)
        written.append(path)

    def operator_answers(run: flows.TaskRun) -> None:
        for kind in MASTER_CALLS:
            pb, js = flows.both_formats(master.address, MASTER_OPERATOR, kind)
            write(f"master-{kind}.pb", pb)
            write(f"master-{kind}.json", _pretty(js))
        for kind in AGENT_CALLS:
            pb, js = flows.both_formats(agent.address, AGENT_OPERATOR, kind)
            write(f"agent-{kind}.pb", pb)
            write(f"agent-{kind}.json", _pretty(js))

    with tempfile.TemporaryDirectory(prefix="scylla-record-mesos-") as tmp:
        master = start_master(home, Path(tmp))
        agent = None
        try:
            agent = start_agent(home, Path(tmp), master.address)
            run = flows.run_command_task(master.address, MediaType.PROTOBUF, before_teardown=operator_answers)
            for kind, records in run.records.items():
                write(f"scheduler-{kind.replace(' ', '-')}.pb", records[0])
        finally:
            if agent is not None:
                agent.stop()
            master.stop()
    return written


def _pretty(body: bytes) -> bytes:
    """JSON kept readable in the repository; the test compares parsed values, not bytes."""
    return (json.dumps(json.loads(body), indent=1, sort_keys=True) + "\n").encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    for path in record(args.out):
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
