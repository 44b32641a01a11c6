"""A small custom executor speaking the v1 executor HTTP API in JSON, run by the agent in tests.

Why ours and not only mesos-go's example-executor: that one never sees
KILL, SHUTDOWN or MESSAGE. This one writes what it receives into its sandbox
(`events.log`, one event type per line, and `message.txt`), and answers:
LAUNCH -> UPDATE TASK_RUNNING; LAUNCH_GROUP -> UPDATE TASK_RUNNING of each
task, in the group's order; KILL -> UPDATE TASK_KILLED; MESSAGE -> the
same data back as a MESSAGE; SHUTDOWN -> exits 0. Standard library only:
the agent runs it with the test's Python.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ENDPOINT = f"http://{os.environ.get('MESOS_AGENT_ENDPOINT')}/api/v1/executor"
IDS = {"framework_id": {"value": os.environ.get("MESOS_FRAMEWORK_ID")},
       "executor_id": {"value": os.environ.get("MESOS_EXECUTOR_ID")}}
SANDBOX = Path(os.environ.get("MESOS_SANDBOX", "."))
# Where it records events and messages: the sandbox, unless its user may not write there (a container's
# non-root user in Apache Mesos's root-owned 0750 sandbox), then the directory EXECUTOR_OUTPUT_DIR names.
OUTPUT = Path(os.environ.get("EXECUTOR_OUTPUT_DIR") or SANDBOX)
# A secure agent gives each executor a token its calls carry (Mesos's executor authentication)
TOKEN = os.environ.get("MESOS_EXECUTOR_AUTHENTICATION_TOKEN")
AUTH = {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}


def post(call: dict) -> None:
    request = urllib.request.Request(ENDPOINT, data=json.dumps({**IDS, **call}).encode(),
                                     headers={"Content-Type": "application/json", **AUTH})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 202, answer.status


def update(task_id: dict, state: str) -> None:
    status = {"task_id": task_id, "state": state, "source": "SOURCE_EXECUTOR",
              "uuid": base64.b64encode(uuid.uuid4().bytes).decode(), "timestamp": time.time(), **IDS}
    del status["framework_id"]
    post({"type": "UPDATE", "update": {"status": status}})


def records(stream):
    """RecordIO: `<length>\\n<record>`."""
    while True:
        size = stream.readline()
        if not size:
            return
        yield json.loads(stream.read(int(size)))


def main() -> int:
    request = urllib.request.Request(ENDPOINT, data=json.dumps({**IDS, "type": "SUBSCRIBE", "subscribe": {}})
                                     .encode(), headers={"Content-Type": "application/json",
                                                         "Accept": "application/json", **AUTH})
    log = open(OUTPUT / "events.log", "a", buffering=1)
    with urllib.request.urlopen(request, timeout=60) as stream:
        for event in records(stream):
            kind = event["type"]
            log.write(kind + "\n")
            if kind == "LAUNCH":
                update(event["launch"]["task"]["task_id"], "TASK_RUNNING")
            elif kind == "LAUNCH_GROUP":
                for task in event["launch_group"]["task_group"]["tasks"]:
                    update(task["task_id"], "TASK_RUNNING")
            elif kind == "KILL":
                update(event["kill"]["task_id"], "TASK_KILLED")
            elif kind == "MESSAGE":
                (OUTPUT / "message.txt").write_bytes(base64.b64decode(event["message"]["data"]))
                post({"type": "MESSAGE", "message": {"data": event["message"]["data"]}})
            elif kind == "SHUTDOWN":
                return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
